"""The image sets benchmarks share, each a dataset (:class:`crepe_utils.download.datasets.Dataset`) with the index
that finds its files; and :class:`Composite`, for a benchmark whose items come from several sets.

``visual_genome``  Visual Genome 1.2, by image id (``VG_100K/``, ``VG_100K_2/``)
``coco``           COCO 2017 validation images, and COCO 2014's train and validation images, by file name
``visual7w``       Visual7W's images, by file name
``swig``           SWiG's 512-pixel images, by file name
``visdial``        Visual Dialog v1.0's validation images, by file name
"""
from __future__ import annotations

import os
import re
from typing import Callable

from ..download.datasets import Dataset
from ..engine.images import ImageFolder


class FileNameIndex(ImageFolder):
    """An image set whose files are found by name: the names matching ``pattern``, in ``subfolders`` in order (where
    its archives unpack), then the folder itself; its folder is its dataset's (``image_dir`` overrides it)."""

    def __init__(self, dataset: Dataset, pattern: re.Pattern, subfolders: tuple[str, ...],
                 image_dir: str | os.PathLike | None = None):
        where = f"--image-dir/{dataset.variable}" if dataset.variable else "--image-dir"
        super().__init__(dataset.dir(image_dir), (*subfolders, ""),
                         lambda name: name if pattern.fullmatch(name) else None,
                         remedy=f"Run `make data-{dataset.name}` (re-download), or point {where} at the images",
                         absent=f"Download {dataset.description} with `make data-{dataset.name}` (or `python -m "
                                f"crepe_utils download {dataset.name} --dest DIR`), or set {dataset.moved_by}.")


class Composite:
    """The engine's image index over several sets: an image id is ``<set>/<id in that set>``. Each set's index is
    built the first time one of its images is asked for, so a run reads only the folders its items need."""

    remedy = "Run the `make data-<set>` target each missing image's set names"

    def __init__(self, indexes: dict[str, Callable[[], object]]):
        self._make, self._built = dict(indexes), {}

    @property
    def root(self) -> str:
        """The folders of the sets read so far (what a message about missing images names)."""
        return " and ".join(f"{index.root} ({name})" for name, index in self._built.items()) or "no image set yet"

    def _index(self, name: str):
        if name not in self._built:
            self._built[name] = self._make[name]()
        return self._built[name]

    @staticmethod
    def split(image_id: str) -> tuple[str, str]:
        name, _, inner = str(image_id).partition("/")
        return name, inner

    def missing(self, image_ids) -> list[str]:
        by_set: dict[str, list[str]] = {}
        for image_id in dict.fromkeys(image_ids):
            name, inner = self.split(image_id)
            by_set.setdefault(name, []).append(inner)
        return [f"{name}/{inner}" for name, inners in by_set.items() for inner in self._index(name).missing(inners)]

    def locator(self, image_id: str):
        name, inner = self.split(image_id)
        return self._index(name).locator(inner)

    def stamp(self, image_id: str) -> str:
        name, inner = self.split(image_id)
        return self._index(name).stamp(inner)

    def describe(self, image_id: str) -> str:
        name, inner = self.split(image_id)
        return self._index(name).describe(inner)
