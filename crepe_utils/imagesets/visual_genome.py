"""Visual Genome's images: where they come from, and found by id.

The crop itself is :mod:`crepe_utils.engine.images`.

Images are ``<image_id>.jpg`` in ``VG_100K/`` or ``VG_100K_2/`` (the two halves of Visual Genome
1.2) below the image folder, or directly in it (a flat folder). The official code tries
``VG_100K`` first, then ``VG_100K_2``; so do we, and a flat folder comes last.
"""
from __future__ import annotations

import os

from PIL import Image

from ..download.datasets import Dataset, Extraction, RemoteFile
from ..engine.images import ImageFolder, crop, open_rgb

VG_FOLDERS = ("VG_100K", "VG_100K_2")
EXTENSIONS = (".jpg", ".jpeg", ".png")

_VG_BASE = "https://cs.stanford.edu/people/rak248/VG_100K_2/"
_VG_SOURCES = (
    "URLs: Hugging Face loading script ranjaykrishna/visual_genome visual_genome.py (_BASE_IMAGE_URLS)",
    "sizes: huggingface.co/datasets/BoyangZ/VisualGenome_VG_100K_1_and_2 (a mirror; official sizes unknown)",
)
_VG_NOTES = ("No checksum is published anywhere known: the sha256 and size of the first download are "
             "recorded and later runs are checked against that record. Both zips sit under "
             ".../VG_100K_2/, even part 1. A benchmark's README may also link a Google Drive folder "
             "(not fetchable without a browser).")
_VG_LICENCE = "CC BY 4.0 (dataset card of ranjaykrishna/visual_genome on the Hugging Face hub)"

VISUAL_GENOME = Dataset(
    name="vg", folder="visual_genome", variable="VG_IMAGES",
    description="Visual Genome 1.2's images (two zips, about 15 GB)",
    images=True,
    files=(
        RemoteFile(
            name="vg-images-1", dataset="vg",
            description="Visual Genome 1.2 images, part 1",
            filename="images.zip", url=_VG_BASE + "images.zip",
            approx_size=9_730_000_000, extract=Extraction("VG_100K", root_required=True),
            licence=_VG_LICENCE, notes=_VG_NOTES, sources=_VG_SOURCES,
        ),
        RemoteFile(
            name="vg-images-2", dataset="vg",
            description="Visual Genome 1.2 images, part 2",
            filename="images2.zip", url=_VG_BASE + "images2.zip",
            approx_size=5_470_000_000, extract=Extraction("VG_100K_2", root_required=True),
            licence=_VG_LICENCE, notes=_VG_NOTES, sources=_VG_SOURCES,
        ),
    ),
)


def _vg_id(name: str) -> str | None:
    stem, ext = os.path.splitext(name)
    return stem if ext.lower() in EXTENSIONS else None


class ImageIndex(ImageFolder):
    """Visual Genome's images by id: ``VG_100K/`` first, then ``VG_100K_2/``, then the folder itself."""

    def __init__(self, image_dir: str | os.PathLike | None = None):
        super().__init__(VISUAL_GENOME.dir(image_dir), (*VG_FOLDERS, ""), _vg_id,
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
