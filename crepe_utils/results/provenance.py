"""Provenance every result records: the software environment and the project's git state."""
from __future__ import annotations

import platform
import subprocess
import sys

from .. import paths

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
    from importlib.metadata import version
    cuda = torch.cuda.is_available()
    return {
        "python": sys.version.split()[0], "platform": platform.platform(),
        "packages": {p: version(p) for p in ("torch", "torchvision", "open_clip_torch", "numpy", "pandas",
                                              "pillow", "crepe_utils")},
        "open_clip": open_clip.__version__, "cuda": torch.version.cuda if cuda else None,
        "gpu": torch.cuda.get_device_name(0) if cuda else None,
        "git": _git_commit(),
    }
