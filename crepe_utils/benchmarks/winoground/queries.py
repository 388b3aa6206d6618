"""Winoground's examples as engine queries: each image against its example's two captions.

Each image becomes one engine query whose candidates are its example's two captions, its own first, so
the engine computes the four similarities of an example; the scoring rule (:mod:`crepe_utils.benchmarks.winoground.rule`)
turns them into the text, image and group scores (eq. 1–3). Images are identified by the SHA-256 of
their bytes: an image stored twice is encoded once and its two copies tie exactly.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ...digests import sha256_file
from ...errors import DataError
from .data import WinogroundData, load_dataset
from .metadata import WHY_HARD, examples_frame, join_why_hard, load_why_hard
from ...protocol.benchmark import Loaded, Selection, Sources
from .datasets import WINOGROUND_FILES


@dataclass(frozen=True)
class ImageQuery:
    """Image ``k`` of example ``index`` (in id order) against the example's two captions, its own first."""

    query_id: str
    index: int
    k: int
    image_id: str                      #: SHA-256 of the image's bytes
    candidates: tuple[str, str]        #: caption k, then the other caption
    fold_unit: str                     #: what cross-fitted text-only scorers keep in one fold: the example
    box: None = None


class WinogroundImages:
    """The engine's view of the examples' images: ids are content digests, each opened from where the
    copy keeps it (a file, a zip member, parquet bytes)."""

    remedy = "Re-download Winoground (`make data-winoground`)"

    def __init__(self, data: WinogroundData, skip_missing: bool = False):
        self.root = data.root
        self._where: dict[str, tuple[int, int]] = {}
        overall = hashlib.sha256()
        self.ids: list[tuple[str, str]] = []
        for index in range(len(data)):
            pair = tuple(_image_id(data, index, k, skip_missing) for k in (0, 1))
            for k, digest in enumerate(pair):
                overall.update(digest.encode())
                if not digest.startswith(ABSENT):      # an absent image is missing to the engine: skipped, counted
                    self._where.setdefault(digest, (index, k))
            self.ids.append(pair)
        self.digest = overall.hexdigest()
        self._images = data.images

    def missing(self, image_ids) -> list[str]:
        return [i for i in dict.fromkeys(image_ids) if i not in self._where]

    def locator(self, image_id: str):
        return self._images.locator(*self._where[image_id])

    def stamp(self, image_id: str) -> str:
        return ""                      # the id is the content

    def describe(self, image_id: str) -> str:
        return self._images.where(*self._where[image_id])


#: the id of an image whose bytes cannot be read (missing, or unreadable) under ``skip_missing_images``
ABSENT = "absent:"


def _image_id(data: WinogroundData, index: int, k: int, skip_missing: bool) -> str:
    """The SHA-256 of an image's bytes; :data:`ABSENT` and where it should be when they cannot be read and
    ``skip_missing`` (the engine then skips its query as one whose image is missing), else the DataError."""
    try:
        return hashlib.sha256(data.image_bytes(index, k)).hexdigest()
    except DataError:
        if not skip_missing:
            raise
        return ABSENT + data.images.where(index, k)


@dataclass(frozen=True)
class Context:
    """What the scoring rule needs besides the scores: the examples and their why-hard labels."""

    data: WinogroundData
    why_hard: object                   #: id → label (a pandas Series), or None
    grouping: str


def _why_hard_file(choice: str | None, data: WinogroundData, data_dir: Path) -> Path | None:
    """The why-hard label file: a path, ``"none"``, or ``"auto"``/None (next to the data, if there)."""
    if choice not in (None, "auto", "none"):
        return Path(choice)
    if choice == "none":
        return None
    return next((c for c in (data.root / WHY_HARD, data_dir / WHY_HARD) if c.is_file()), None)


def load(sources: Sources, selection: Selection, settings) -> Loaded:
    data_dir = WINOGROUND_FILES.dir(sources.data_dir)
    data = load_dataset(data_dir, selection.layout, missing_ok=settings.skip_missing_images)
    images = WinogroundImages(data, settings.skip_missing_images)
    why_path = _why_hard_file(selection.why_hard, data, data_dir)
    labels = None
    if why_path is not None:
        joined = join_why_hard(examples_frame(data.examples), load_why_hard(why_path), str(why_path))
        labels = joined.set_index("id")["why_hard"]
    queries = [ImageQuery(f"{ex.id}:image_{k}", index, k, images.ids[index][k],
                          (ex.caption_0, ex.caption_1)[::1 - 2 * k], f"winoground-{ex.id}")
               for index, ex in enumerate(data.examples) for k in (0, 1)]
    described = {
        "data_dir": str(data_dir), "layout": data.layout, "root": str(data.root),
        "files_sha256": {str(p.relative_to(data.root)): sha256_file(p) for p in data.files if p.is_file()},
        "images_sha256": images.digest, "n_examples": len(data),
        "why_hard": None if why_path is None else {"path": str(why_path), "sha256": sha256_file(why_path)}}
    return Loaded(queries, files={"examples": len(data)}, images=lambda: images, data=described,
                  context=Context(data, labels, selection.grouping))
