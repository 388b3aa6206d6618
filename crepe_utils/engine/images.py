"""Image folders, decoding and cropping (exactly as the official CREPE code crops).

Cropping: ``torchvision.transforms.functional.crop(img, top=y, left=x, height=h, width=w)`` on the
RGB PIL image, with the CSV's float coordinates passed unchanged, before the model's
preprocessing. For PIL images that is ``img.crop((x, y, x + w, y + h))``: PIL rounds the float
corners to integers, and a box reaching outside the image is padded with black. The same call
is made here, so both behaviours carry over exactly.
"""
from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path
from typing import Callable

from PIL import Image

from ..paths import not_a_folder

#: Where an image's bytes are: a file path, ``("zip", archive, member)`` or ``("bytes", raw)``.
Locator = str | os.PathLike | tuple


def open_rgb(source: Locator) -> Image.Image:
    """Open an image by content (not by extension) and convert it to RGB."""
    if isinstance(source, tuple):
        if source[0] == "zip":
            with zipfile.ZipFile(source[1]) as zf:
                source = io.BytesIO(zf.read(source[2]))
        else:
            source = io.BytesIO(source[1])
    with Image.open(source) as img:
        img.load()
        return img.convert("RGB")


class ImageFolder:
    """The engine's view of images stored as files: ids mapped to files below one folder (listed once, then
    O(1) lookups). ``subfolders`` are searched in order (``""`` is the folder itself) and the first file of an
    id wins; ``id_of(file name)`` gives a file's id, or None for a file that is not an image of the set.

    What the engine asks of an index: ``missing(ids)``, ``locator(id)`` (what :func:`open_rgb` opens),
    ``stamp(id)`` (the file's size and modification time, for the embedding cache), ``describe(id)``
    (for messages), ``remedy`` (what to do about a missing or unreadable image) and ``root``.
    """

    def __init__(self, root: str | os.PathLike, subfolders: tuple[str, ...], id_of: Callable[[str], str | None],
                 remedy: str, absent: str):
        self.root, self.remedy = Path(root), remedy
        if not self.root.is_dir():
            raise FileNotFoundError(f"image folder {self.root} {not_a_folder(self.root)}. {absent}")
        self._paths: dict[str, Path] = {}
        for folder in (self.root / f for f in subfolders):
            if folder.is_dir():
                with os.scandir(folder) as entries:
                    for entry in entries:
                        key = id_of(entry.name)
                        if key is not None and entry.is_file():
                            self._paths.setdefault(key, Path(entry.path))
        self._where = ", ".join(f"{f}/" if f else "the folder itself" for f in subfolders)

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, image_id: str) -> bool:
        return str(image_id) in self._paths

    def path(self, image_id: str) -> Path:
        found = self._paths.get(str(image_id))
        if found is None:
            raise FileNotFoundError(f"image {image_id} not found in {self.root} (looked in {self._where})")
        return found

    def missing(self, image_ids) -> list[str]:
        """The ids among ``image_ids`` without a file, each once, in first-seen order."""
        return list(dict.fromkeys(i for i in map(str, image_ids) if i not in self._paths))

    def locator(self, image_id: str) -> str:
        return str(self.path(image_id))

    def stamp(self, image_id: str) -> str:
        st = os.stat(self.path(image_id))
        return f"{st.st_size}|{st.st_mtime_ns}"

    def describe(self, image_id: str) -> str:
        return f"{self.path(image_id)} (image {image_id})"


def crop(img: Image.Image, box: tuple[float, float, float, float]) -> Image.Image:
    """Crop ``box`` = (x, y, width, height) as the official code does (see module docstring)."""
    import torchvision.transforms.functional as TF

    x, y, w, h = box
    return TF.crop(img, y, x, h, w)


def _rounded(box: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
    """The box's corners as PIL rounds them: (left, top, right, bottom)."""
    x, y, w, h = box
    return round(x), round(y), round(x + w), round(y + h)


def box_outside(box: tuple[float, float, float, float], size: tuple[int, int]) -> bool:
    """Whether the box (after PIL's rounding of its corners) reaches outside an image of ``size``."""
    left, top, right, bottom = _rounded(box)
    return left < 0 or top < 0 or right > size[0] or bottom > size[1]


def box_wholly_outside(box: tuple[float, float, float, float], size: tuple[int, int]) -> bool:
    """Whether the rounded box shares no pixel with an image of ``size`` (its crop would be all padding)."""
    left, top, right, bottom = _rounded(box)
    return right <= 0 or bottom <= 0 or left >= size[0] or top >= size[1]
