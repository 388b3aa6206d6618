"""Find Visual Genome images by id; the crop itself is :mod:`crepe_utils.engine.images`.

Images are ``<image_id>.jpg`` in ``VG_100K/`` or ``VG_100K_2/`` (the two halves of Visual Genome
1.2) below the image folder, or directly in it (a flat folder). The official code tries
``VG_100K`` first, then ``VG_100K_2``; so do we, and a flat folder comes last.
"""
from __future__ import annotations

import os
from pathlib import Path

from PIL import Image

from ..engine.images import ImageFolder, crop, open_rgb

VG_FOLDERS = ("VG_100K", "VG_100K_2")
EXTENSIONS = (".jpg", ".jpeg", ".png")


def _vg_id(name: str) -> str | None:
    stem, ext = os.path.splitext(name)
    return stem if ext.lower() in EXTENSIONS else None


class ImageIndex(ImageFolder):
    """Visual Genome's images by id: ``VG_100K/`` first, then ``VG_100K_2/``, then the folder itself."""

    def __init__(self, image_dir: str | os.PathLike):
        super().__init__(image_dir, (*VG_FOLDERS, ""), _vg_id,
                         remedy="Run `make data-vg` (re-download), or point --image-dir/VG_IMAGES at the images",
                         absent="Download Visual Genome with `make data-vg` (or `python -m crepe_utils download vg "
                                "--dest DIR`), or pass --image-dir / set VG_IMAGES.")


def load_crop(path: str | os.PathLike, box: tuple[float, float, float, float]) -> Image.Image:
    """The RGB crop of one query region."""
    return crop(open_rgb(path), box)


def image_size(path: str | os.PathLike) -> tuple[int, int]:
    """(width, height) from the file header, without decoding the pixels."""
    with Image.open(path) as img:
        return img.size
