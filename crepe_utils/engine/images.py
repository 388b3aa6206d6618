"""Decoding and cropping, exactly as the official CREPE code does.

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

from PIL import Image

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
