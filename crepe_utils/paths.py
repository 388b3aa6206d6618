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
model weights      (open_clip's cache)   ``~/.cache/huggingface`` and ``~/.cache/clip``
placed weights     ``CREPE_MODELS``      ``<data root>/models`` (files a user downloads by hand:
                                         CyCLIP, ALBEF, the BERT vocabulary)
embedding cache    ``CREPE_CACHE``       ``./cache``
=================  ====================  =====================================================

During development the reference copy of CREPE's productivity CSVs in ``../shared/data/crepe``
is used when no other copy is found (:func:`crepe_dir` with ``allow_shared=True``).
"""
from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = PROJECT_ROOT.parent / "shared"


def data_root(explicit: str | os.PathLike | None = None) -> Path:
    """The data root: ``explicit``, else ``$CREPE_DATA``, else ``./data``."""
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("CREPE_DATA") or "data")


def crepe_dir(explicit: str | os.PathLike | None = None, allow_shared: bool = True) -> Path | None:
    """The folder holding CREPE's CSVs, or ``None`` when there is none.

    ``explicit`` is returned as given (the loaders report a missing folder precisely).
    Otherwise ``<data root>/crepe`` when it exists, then the development copy in
    ``../shared/data/crepe`` when ``allow_shared``.
    """
    if explicit:
        return Path(explicit)
    candidate = data_root() / "crepe"
    if candidate.is_dir():
        return candidate
    shared = SHARED_DIR / "data" / "crepe"
    if allow_shared and shared.is_dir():
        return shared
    return None


def vg_images_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Visual Genome images: ``explicit``, else ``$VG_IMAGES``, else ``<data root>/visual_genome``."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("VG_IMAGES")
    return Path(env) if env else data_root() / "visual_genome"


def winoground_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Winoground: ``explicit``, else ``$WINOGROUND_DATA``, else ``<data root>/winoground``."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("WINOGROUND_DATA")
    return Path(env) if env else data_root() / "winoground"


def shared_winoground_text() -> Path | None:
    """The development copy of Winoground's text metadata, when present."""
    path = SHARED_DIR / "data" / "winoground"
    return path if path.is_dir() else None


def models_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Hand-placed weights: ``explicit``, else ``$CREPE_MODELS``, else ``<data root>/models``."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("CREPE_MODELS")
    return Path(env) if env else data_root() / "models"


def cache_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Embedding cache: ``explicit``, else ``$CREPE_CACHE``, else ``./cache``."""
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("CREPE_CACHE") or "cache")
