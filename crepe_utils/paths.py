"""Where the data live. No path in this package is hard-coded beyond these defaults.

Resolution order, for each location: an explicit argument (function parameter, CLI flag,
notebook parameter, Make variable) wins; then an environment variable; then the default.

=================  ====================  =====================================================
location           environment variable  default
=================  ====================  =====================================================
data root          ``CREPE_DATA``        ``./data``
each dataset       its own, if it has    ``<data root>/<its folder>``: every dataset declares its
                   one (``VG_IMAGES``,   folder and variable once, in its benchmark's folder or
                   ``COCO_IMAGES``, ...) in :mod:`crepe_utils.imagesets` (``python -m crepe_utils
                                         download --help`` lists them)
model weights      (open_clip's cache)   ``~/.cache/huggingface`` and ``~/.cache/clip``
placed weights     ``CREPE_MODELS``      ``<data root>/models`` (files a user downloads by hand:
                                         CyCLIP, ALBEF, the BERT vocabulary)
embedding cache    ``CREPE_CACHE``       ``./cache``
checksum cache     ``CREPE_CACHE``       ``./cache/sha256.json`` (SHA-256 of large checkpoints, by
                                         path, size, mtime; ``digests.sha256_file``)
=================  ====================  =====================================================
"""
from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


#: the variable that moves the data root, and with it every dataset without a variable of its own
DATA_ROOT_ENV = "CREPE_DATA"


def data_root(explicit: str | os.PathLike | None = None) -> Path:
    """The data root: ``explicit``, else ``$CREPE_DATA``, else ``./data``."""
    if explicit:
        return Path(explicit)
    return Path(os.environ.get(DATA_ROOT_ENV) or "data")


def dataset_dir(explicit: str | os.PathLike | None, variable: str | None, folder: str) -> Path:
    """Where a dataset is looked for: ``explicit``, else ``$variable``, else ``<data root>/folder``.

    Every dataset declares its ``variable`` and ``folder`` once (:class:`crepe_utils.download.datasets.Dataset`).
    """
    if explicit:
        return Path(explicit)
    env = os.environ.get(variable) if variable else None
    return Path(env) if env else data_root() / folder


def models_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Hand-placed weights: ``explicit``, else ``$CREPE_MODELS``, else ``<data root>/models``."""
    return dataset_dir(explicit, "CREPE_MODELS", "models")


def cache_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Embedding cache: ``explicit``, else ``$CREPE_CACHE``, else ``./cache``."""
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("CREPE_CACHE") or "cache")
