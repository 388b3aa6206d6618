"""Find SugarCrepe's images, COCO val2017, by file name.

An image ``000000391895.jpg`` is looked for in ``<root>/val2017/`` (where ``val2017.zip`` unpacks) and
then in ``<root>/`` itself (a flat folder); the first found wins. The engine asks an index for
``missing(ids)``, ``path(id)`` and ``root`` (see :class:`crepe_utils.engine.core.Query`), and reports
missing images in one error, or skips and counts their pairs when told to.
"""
from __future__ import annotations

import os
from pathlib import Path

from .. import paths
from .data import COCO_FILE_NAME

COCO_FOLDER = "val2017"


class CocoImages:
    """Maps COCO file names to files below one folder (listed once, then O(1) lookups); other files
    (the archive, the download record) are not images of the index."""

    def __init__(self, image_dir: str | os.PathLike | None = None):
        self.root = paths.coco_images_dir(image_dir)
        if not self.root.is_dir():
            raise FileNotFoundError(
                f"COCO image folder {self.root} does not exist. Download COCO val2017 with `make data-coco` "
                "(or `python -m crepe_utils download coco --dest DIR`), or set COCO_IMAGES.")
        self._paths: dict[str, Path] = {}
        for folder in (self.root / COCO_FOLDER, self.root):      # val2017/ first, the flat folder last
            if folder.is_dir():
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if COCO_FILE_NAME.fullmatch(entry.name) and entry.is_file():
                            self._paths.setdefault(entry.name, Path(entry.path))

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, image_id: str) -> bool:
        return str(image_id) in self._paths

    def path(self, image_id: str) -> Path:
        found = self._paths.get(str(image_id))
        if found is None:
            raise FileNotFoundError(f"image {image_id} not found in {self.root} (looked in {COCO_FOLDER}/ and "
                                    "the folder itself)")
        return found

    def missing(self, image_ids) -> list[str]:
        """The ids among ``image_ids`` without a file, each once, in first-seen order."""
        return list(dict.fromkeys(i for i in map(str, image_ids) if i not in self._paths))
