"""Visual Dialog v1.0's validation images (Das et al., CVPR 2017): where they come from, found by file name."""
from __future__ import annotations

import os
import re

from ..download.datasets import UNPUBLISHED_DIGEST, Dataset, Extraction, RemoteFile
from . import FileNameIndex

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
            notes="Hosted on Dropbox, linked from visualdialog.org/data. " + UNPUBLISHED_DIGEST,
            sources=("URL: visualdialog.org/data (v1.0 validation images)",),
        ),
    ),
)


def VisdialImages(image_dir: str | os.PathLike | None = None) -> FileNameIndex:
    """The set's file names mapped to files: ``VisualDialog_val2018/`` first, then the folder itself."""
    return FileNameIndex(VISDIAL, FILE_NAME, ("VisualDialog_val2018",), image_dir)
