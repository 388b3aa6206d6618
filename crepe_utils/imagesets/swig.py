"""SWiG's images (Pratt et al., ECCV 2020; imSitu's images at 512 px): where they come from, found by file name."""
from __future__ import annotations

import os
import re

from ..download.datasets import UNPUBLISHED_DIGEST, Dataset, Extraction, RemoteFile
from . import FileNameIndex

FILE_NAME = re.compile(r"[a-z]+_\d+\.jpg")

SWIG = Dataset(
    name="swig", folder="swig", variable="SWIG_IMAGES",
    description="SWiG's images at 512 px (one zip, <verb>_<n>.jpg; size not published)",
    images=True,
    files=(
        RemoteFile(
            name="swig-images", dataset="swig",
            description="SWiG images (imSitu's, resized to 512 px; unpacked into images_512/)",
            filename="images_512.zip", url="https://swig-data-weights.s3.us-east-2.amazonaws.com/images_512.zip",
            extract=Extraction("images_512"),
            licence="imSitu / SWiG images: research use (their Flickr and web sources' terms)",
            notes=UNPUBLISHED_DIGEST,
            sources=("URL: allenai/swig README, section 1 (images)",),
        ),
    ),
)


def SwigImages(image_dir: str | os.PathLike | None = None) -> FileNameIndex:
    """The set's file names mapped to files: ``images_512/`` first, then the folder itself."""
    return FileNameIndex(SWIG, FILE_NAME, ("images_512",), image_dir)
