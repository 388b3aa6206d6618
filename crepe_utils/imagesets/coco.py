"""Find SugarCrepe's images, COCO val2017, by file name.

An image ``000000391895.jpg`` is looked for in ``<root>/val2017/`` (where ``val2017.zip`` unpacks) and
then in ``<root>/`` itself (a flat folder); the first found wins (:class:`crepe_utils.engine.images.ImageFolder`).
The engine reports missing images in one error, or skips and counts their pairs when told to.
"""
from __future__ import annotations

import os

from .. import paths
from ..engine.images import ImageFolder
from ..benchmarks.sugarcrepe.data import COCO_FILE_NAME

COCO_FOLDER = "val2017"


def _coco_id(name: str) -> str | None:
    return name if COCO_FILE_NAME.fullmatch(name) else None


class CocoImages(ImageFolder):
    """COCO file names mapped to files: ``val2017/`` first, then the folder itself; other files (the archive,
    the download record) are not images of the index."""

    def __init__(self, image_dir: str | os.PathLike | None = None):
        super().__init__(paths.coco_images_dir(image_dir), (COCO_FOLDER, ""), _coco_id,
                         remedy="Run `make data-coco` (re-download), or point --image-dir/COCO_IMAGES at the images",
                         absent="Download COCO val2017 with `make data-coco` (or `python -m crepe_utils download "
                                "coco --dest DIR`), or set COCO_IMAGES.")
