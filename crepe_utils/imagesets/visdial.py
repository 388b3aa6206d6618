"""Visual Dialog v1.0's validation images (Das et al., CVPR 2017): where they come from, found by file name."""
from __future__ import annotations

import os
import re

from ..download.datasets import Dataset, Extraction, RemoteFile
from ..engine.images import ImageFolder

FILE_NAME = re.compile(r"VisualDialog_val2018_\d{12}\.jpg")

VISDIAL = Dataset(
    name="visdial", folder="visdial", variable="VISDIAL_IMAGES",
    description="Visual Dialog v1.0's validation images (one zip; size not published)",
    images=True,
    files=(
        RemoteFile(
            name="visdial-val2018", dataset="visdial",
            description="Visual Dialog v1.0 validation images (VisualDialog_val2018_<12-digit id>.jpg)",
            filename="VisualDialog_val2018.zip",
            url="https://www.dropbox.com/s/twmtutniktom7tu/VisualDialog_val2018.zip?dl=1",
            extract=Extraction("VisualDialog_val2018"),
            licence="Visual Dialog: CC BY 4.0 (visualdialog.org); its images: their Flickr licences",
            notes="Hosted on Dropbox, linked from visualdialog.org/data. No checksum or size is published: the "
                  "sha256 and size of the first download are recorded and later runs are checked against it.",
            sources=("URL: visualdialog.org/data (v1.0 validation images)",),
        ),
    ),
)


def _id(name: str) -> str | None:
    return name if FILE_NAME.fullmatch(name) else None


class VisdialImages(ImageFolder):
    """Visual Dialog's validation file names mapped to files: ``VisualDialog_val2018/``, then the folder itself."""

    def __init__(self, image_dir: str | os.PathLike | None = None):
        super().__init__(VISDIAL.dir(image_dir), ("VisualDialog_val2018", ""), _id,
                         remedy="Run `make data-visdial` (re-download), or set VISDIAL_IMAGES to the images",
                         absent="Download Visual Dialog's validation images with `make data-visdial`, or set "
                                "VISDIAL_IMAGES.")
