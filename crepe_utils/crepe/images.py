"""Find Visual Genome images by id; the crop itself is :mod:`crepe_utils.engine.images`.

Images are ``<image_id>.jpg`` in ``VG_100K/`` or ``VG_100K_2/`` (the two halves of Visual Genome
1.2) below the image folder, or directly in it (a flat folder). The official code tries
``VG_100K`` first, then ``VG_100K_2``; so do we, and a flat folder comes last.
"""
from __future__ import annotations

import os
from pathlib import Path

from PIL import Image

from ..engine.images import crop, open_rgb

VG_FOLDERS = ("VG_100K", "VG_100K_2")
EXTENSIONS = (".jpg", ".jpeg", ".png")


class ImageIndex:
    """Maps image ids to files below one image folder (listed once, then O(1) lookups)."""

    #: What to do about a missing or unreadable image (the engine's messages end with it).
    remedy = "Run `make data-vg` (re-download), or point --image-dir/VG_IMAGES at the images"

    def __init__(self, image_dir: str | os.PathLike):
        self.root = Path(image_dir)
        if not self.root.is_dir():
            raise FileNotFoundError(
                f"image folder {self.root} does not exist. Download Visual Genome with `make data-vg` "
                "(or `python -m crepe_utils download vg --dest DIR`), or pass --image-dir / set VG_IMAGES."
            )
        self._paths: dict[str, Path] = {}
        # Later entries must not override earlier ones: flat folder last, VG_100K first.
        for folder in [self.root / f for f in VG_FOLDERS] + [self.root]:
            if not folder.is_dir():
                continue
            with os.scandir(folder) as it:
                for entry in it:
                    stem, ext = os.path.splitext(entry.name)
                    if ext.lower() in EXTENSIONS and entry.is_file():
                        self._paths.setdefault(stem, Path(entry.path))

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, image_id: str) -> bool:
        return str(image_id) in self._paths

    def path(self, image_id: str) -> Path:
        try:
            return self._paths[str(image_id)]
        except KeyError:
            raise FileNotFoundError(
                f"image {image_id}.jpg not found in {self.root} (looked in "
                f"{', '.join(VG_FOLDERS)} and the folder itself)"
            ) from None

    def locator(self, image_id: str) -> str:
        """What the engine opens (:func:`crepe_utils.engine.images.open_rgb`)."""
        return str(self.path(image_id))

    def stamp(self, image_id: str) -> str:
        """What identifies the file's content for the embedding cache: its size and modification time."""
        st = os.stat(self.path(image_id))
        return f"{st.st_size}|{st.st_mtime_ns}"

    def describe(self, image_id: str) -> str:
        return f"{self.path(image_id)} (image {image_id})"

    def missing(self, image_ids) -> list[str]:
        """The ids among ``image_ids`` without a file, in first-seen order."""
        seen, out = set(), []
        for i in image_ids:
            i = str(i)
            if i not in seen and i not in self._paths:
                out.append(i)
            seen.add(i)
        return out


def load_crop(path: str | os.PathLike, box: tuple[float, float, float, float]) -> Image.Image:
    """The RGB crop of one query region."""
    return crop(open_rgb(path), box)


def image_size(path: str | os.PathLike) -> tuple[int, int]:
    """(width, height) from the file header, without decoding the pixels."""
    with Image.open(path) as img:
        return img.size
