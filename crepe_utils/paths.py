"""Where the data live. No path in this package is hard-coded beyond these defaults.

Resolution order, for each location: an explicit argument (function parameter, CLI flag,
notebook parameter, Make variable) wins; then an environment variable; then the default.

=================  ====================  =====================================================
location           environment variable  default
=================  ====================  =====================================================
data root          ``CREPE_DATA``        ``./data``
CREPE CSVs         (data root)           ``<data root>/crepe`` (holds ``prod_hard_negatives/``
                                         and ``syst_hard_negatives/``)
Visual Genome      ``VG_IMAGES``         ``<data root>/visual_genome`` (``VG_100K/``,
                                         ``VG_100K_2/``, or a flat folder of ``<id>.jpg``)
Winoground         ``WINOGROUND_DATA``   ``<data root>/winoground``
SugarCrepe         ``SUGARCREPE_DATA``   ``<data root>/sugarcrepe`` (the seven ``*.json``)
COCO images        ``COCO_IMAGES``       ``<data root>/coco`` (``val2017/``, SugarCrepe's images, or
                                         a flat folder of ``<12-digit id>.jpg``)
model weights      (open_clip's cache)   ``~/.cache/huggingface`` and ``~/.cache/clip``
placed weights     ``CREPE_MODELS``      ``<data root>/models`` (files a user downloads by hand:
                                         CyCLIP, ALBEF, the BERT vocabulary)
embedding cache    ``CREPE_CACHE``       ``./cache``
checksum cache     ``CREPE_CACHE``       ``./cache/sha256.json`` (SHA-256 of large checkpoints, by
                                         path, size, mtime; ``models.spec.sha256_file``)
=================  ====================  =====================================================
"""
from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def data_root(explicit: str | os.PathLike | None = None) -> Path:
    """The data root: ``explicit``, else ``$CREPE_DATA``, else ``./data``."""
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("CREPE_DATA") or "data")


def crepe_dir(explicit: str | os.PathLike | None = None) -> Path | None:
    """The folder holding CREPE's CSVs, or ``None`` when there is none.

    ``explicit`` is returned as given (the loaders report a missing folder precisely); otherwise
    ``<data root>/crepe`` when it exists.
    """
    if explicit:
        return Path(explicit)
    candidate = data_root() / "crepe"
    return candidate if candidate.is_dir() else None


def _dataset_dir(explicit, variable: str, folder: str) -> Path:
    """``explicit``, else ``$variable``, else ``<data root>/folder``: where each dataset is looked for."""
    if explicit:
        return Path(explicit)
    env = os.environ.get(variable)
    return Path(env) if env else data_root() / folder


def vg_images_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Visual Genome images: ``explicit``, else ``$VG_IMAGES``, else ``<data root>/visual_genome``."""
    return _dataset_dir(explicit, "VG_IMAGES", "visual_genome")


def winoground_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Winoground: ``explicit``, else ``$WINOGROUND_DATA``, else ``<data root>/winoground``."""
    return _dataset_dir(explicit, "WINOGROUND_DATA", "winoground")


def sugarcrepe_dir(explicit: str | os.PathLike | None = None) -> Path:
    """SugarCrepe's JSONs: ``explicit``, else ``$SUGARCREPE_DATA``, else ``<data root>/sugarcrepe``."""
    return _dataset_dir(explicit, "SUGARCREPE_DATA", "sugarcrepe")


def coco_images_dir(explicit: str | os.PathLike | None = None) -> Path:
    """COCO val2017 images: ``explicit``, else ``$COCO_IMAGES``, else ``<data root>/coco``."""
    return _dataset_dir(explicit, "COCO_IMAGES", "coco")


def models_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Hand-placed weights: ``explicit``, else ``$CREPE_MODELS``, else ``<data root>/models``."""
    return _dataset_dir(explicit, "CREPE_MODELS", "models")


def cache_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Embedding cache: ``explicit``, else ``$CREPE_CACHE``, else ``./cache``."""
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("CREPE_CACHE") or "cache")


def not_a_folder(path: str | os.PathLike) -> str:
    """Why ``path`` is not a folder a dataset can be read from, as a message says it: it does not exist, or is a file."""
    return "is a file, not a folder" if Path(path).exists() else "does not exist"
