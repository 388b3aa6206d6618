"""Provenance every result records: what it is, the model, the software environment, the run.

:func:`manifest` builds the sections every benchmark's manifest shares; each benchmark adds its own
``data`` and ``engine`` sections (and whatever else it records).
"""
from __future__ import annotations

import platform
import subprocess
import sys
import time

from .. import paths
from .store import check_kind
from importlib.metadata import version

def _git_commit() -> dict:
    root = paths.PROJECT_ROOT
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                timeout=10).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                    capture_output=True, text=True, timeout=10).stdout.strip())
        return {"commit": commit or None, "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def environment() -> dict:
    import open_clip
    import torch
    cuda = torch.cuda.is_available()
    return {
        "python": sys.version.split()[0], "platform": platform.platform(),
        "packages": {p: version(p) for p in ("torch", "torchvision", "open_clip_torch", "numpy", "pandas",
                                              "pillow", "crepe_utils")},
        "open_clip": open_clip.__version__, "cuda": torch.version.cuda if cuda else None,
        "gpu": torch.cuda.get_device_name(0) if cuda else None,
        "git": _git_commit(),
    }


def manifest(kind: str, label: str, spec, *, seconds: float, run_stats: dict) -> dict:
    """The manifest sections every result has: kind, label, model, environment, run.

    ``spec`` is the model's :class:`crepe_utils.models.ModelSpec`. ``run`` holds everything that
    differs between two identical runs, and only that: when, how long, where, and ``run_stats``
    (timings, what came from the cache), so two identical runs differ in that section alone.
    """
    check_kind(kind)
    return {"kind": kind, "label": label, "model": spec.to_dict(), "environment": environment(),
            "run": {"created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "seconds": round(seconds, 1),
                    "host": platform.node(), **run_stats}}
