"""COCO's 2017 validation images: where they come from, and found by file name.

An image ``000000391895.jpg`` is looked for in ``<root>/val2017/`` (where ``val2017.zip`` unpacks) and
then in ``<root>/`` itself (a flat folder); the first found wins (:class:`crepe_utils.engine.images.ImageFolder`).
The engine reports missing images in one error, or skips and counts their pairs when told to.
"""
from __future__ import annotations

import os
import re

from ..download.datasets import Dataset, Extraction, RemoteFile
from . import FileNameIndex

COCO_FOLDER = "val2017"
#: a COCO 2017 file name: the image id, zero-padded to 12 digits
COCO_FILE_NAME = re.compile(r"\d{12}\.jpg")

_COCO_SOURCES = (
    "URL: cocodataset.org/#download (2017 Val images [5K/1GB])",
    "approximate size: 815,585,330 bytes, the Content-Length public download logs of this URL show (COCO publishes "
    "none)",
)
_COCO_NOTES = ("No checksum is published: the sha256 and size of the first download are recorded and later runs "
               "are checked against that record. The archive holds val2017/<12-digit id>.jpg.")
_COCO_LICENCE = ("COCO images: Flickr terms of use, each image under its own Creative Commons licence "
                 "(cocodataset.org/#termsofuse)")

COCO = Dataset(
    name="coco", folder="coco", variable="COCO_IMAGES",
    description="COCO 2017 validation images (5,000 JPEGs, 816 MB)",
    images=True,
    files=(
        RemoteFile(
            name="coco-val2017", dataset="coco",
            description="COCO 2017 validation images (5,000 JPEGs val2017/<12-digit id>.jpg)",
            filename="val2017.zip", url="http://images.cocodataset.org/zips/val2017.zip",
            approx_size=815_585_330, extract=Extraction("val2017", root_required=True),
            licence=_COCO_LICENCE, notes=_COCO_NOTES, sources=_COCO_SOURCES,
        ),
    ),
)


def CocoImages(image_dir: str | os.PathLike | None = None) -> FileNameIndex:
    """COCO file names mapped to files: ``val2017/`` first, then the folder itself; other files (the archive,
    the download record) are not images of the index."""
    return FileNameIndex(COCO, COCO_FILE_NAME, (COCO_FOLDER,), image_dir)

#: a COCO 2014 file name: its split, then the image id zero-padded to 12 digits
COCO2014_FILE_NAME = re.compile(r"COCO_(val|train)2014_\d{12}\.jpg")
_COCO2014_NOTES = ("No checksum is published: the sha256 and size of the first download are recorded and later runs "
                   "are checked against that record. The 2014 and 2017 releases hold the same images split "
                   "differently, under other names: no lookup falls back from one to the other.")

COCO2014 = Dataset(
    name="coco2014", folder="coco", variable="COCO_IMAGES",
    description="COCO 2014 train and validation images (two zips, about 19 GB), beside val2017 in COCO's folder",
    images=True,
    files=tuple(
        RemoteFile(
            name=f"coco-{split}2014", dataset="coco2014",
            description=f"COCO 2014 {split} images ({split}2014/COCO_{split}2014_<12-digit id>.jpg)",
            filename=f"{split}2014.zip", url=f"http://images.cocodataset.org/zips/{split}2014.zip",
            approx_size=size, extract=Extraction(f"{split}2014", root_required=True),
            licence=_COCO_LICENCE, notes=_COCO2014_NOTES,
            sources=("URL: cocodataset.org/#download (2014 Train images [83K/13GB], 2014 Val images [41K/6GB])",))
        for split, size in (("val", 6_000_000_000), ("train", 13_000_000_000))),
)


def Coco2014Images(image_dir: str | os.PathLike | None = None) -> FileNameIndex:
    """COCO 2014 file names mapped to files: ``val2014/``, ``train2014/``, then the folder itself."""
    return FileNameIndex(COCO2014, COCO2014_FILE_NAME, ("val2014", "train2014"), image_dir)
