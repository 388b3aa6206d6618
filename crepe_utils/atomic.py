"""Atomic file writes: a reader sees the old file or the complete new one, never a partial one.

Every output of the package (tables, figures, results, caches, downloads) goes through
:func:`atomic_path`: the content is written to a temporary file in the destination folder
and moved over the destination with :func:`os.replace` only once it is complete.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; move it over ``path`` if the block succeeds.

    The temporary file keeps the destination's suffix (``suffix`` overrides it) so that
    writers that choose a format by extension (matplotlib, pandas) do the right thing.
    On an exception the temporary file is removed and ``path`` is left untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.",
        suffix=".part" + (suffix if suffix is not None else path.suffix),
        dir=path.parent,
    )
    os.close(fd)
    real_tmp = Path(tmp)
    try:
        yield real_tmp
        os.chmod(real_tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; use the usual mode
        os.replace(real_tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            real_tmp.unlink()
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_json(path: str | os.PathLike, obj) -> Path:
    """Write ``obj`` as indented, key-sorted JSON to ``path`` atomically."""
    return write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")
