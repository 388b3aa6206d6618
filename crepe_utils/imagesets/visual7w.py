"""Visual7W's images (Zhu et al., CVPR 2016): where they come from, and found by file name (``v7w_<id>.jpg``).

Visual7W's ids look like Visual Genome's (both come from the same COCO/YFCC images), but that the pixels are the
same files is not established, so these images are their own set: no lookup falls back on another set.
"""
from __future__ import annotations

import os
import re

from ..download.datasets import UNPUBLISHED_DIGEST, Dataset, Extraction, RemoteFile
from . import FileNameIndex

FILE_NAME = re.compile(r"v7w_\d+\.jpg")

VISUAL7W = Dataset(
    name="visual7w", folder="visual7w", variable="VISUAL7W_IMAGES",
    description="Visual7W's images (one zip, v7w_<id>.jpg; size not published)",
    images=True,
    files=(
        RemoteFile(
            name="visual7w-images", dataset="visual7w",
            description="Visual7W images (v7w_<id>.jpg, unpacked into images/)",
            filename="visual7w_images.zip", url="http://vision.stanford.edu/yukezhu/visual7w_images.zip",
            extract=Extraction("images"),
            licence="Visual7W: research use; its images come from COCO (Flickr licences)",
            notes=UNPUBLISHED_DIGEST,
            sources=("URL: the Visual7W project page and yukezhu/visual7w-toolkit README (dataset download)",),
        ),
    ),
)


def Visual7wImages(image_dir: str | os.PathLike | None = None) -> FileNameIndex:
    """The set's file names mapped to files: ``images/`` first, then the folder itself."""
    return FileNameIndex(VISUAL7W, FILE_NAME, ("images",), image_dir)
