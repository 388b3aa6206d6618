"""SHA-256 of files: the one reader of a file's bytes for a digest, and the remembered checksums of large files.

Every file hash of the package comes through here: result provenance (data files, checkpoints), the data
validation report, and downloads' verification (sha256 and git blob ids in one pass, with a progress bar).
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Callable

from . import paths
from .atomic import write_json
from .errors import CrepeWarning


class HashCacheWarning(CrepeWarning):
    """The checksum cache could not be read (it is then ignored and rewritten) or written."""


#: Files at least this large have their SHA-256 remembered: hashing a multi-GB checkpoint takes
#: longer than loading it, and smaller files (CSVs, vocabularies) hash faster than a lookup pays.
HASH_CACHE_MIN_BYTES = 16 << 20
HASH_CACHE_NAME = "sha256.json"


def hash_cache_file() -> Path:
    """The checksum cache: ``<cache folder>/sha256.json`` (``$CREPE_CACHE``, default ``./cache``)."""
    return paths.cache_dir() / HASH_CACHE_NAME


def update_from_file(path: str | os.PathLike, *hashes, chunk: int = 1 << 20,
                     on_block: Callable[[int], object] | None = None) -> None:
    """Feed the bytes of ``path`` to each of ``hashes`` (hashlib objects), reading the file once;
    ``on_block(n)`` after each block (a progress bar's ``update``)."""
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            for h in hashes:
                h.update(block)
            if on_block is not None:
                on_block(len(block))


def _sha256_uncached(path, chunk: int) -> str:
    h = hashlib.sha256()
    update_from_file(path, h, chunk=chunk)
    return h.hexdigest()


def _stamp(st: os.stat_result) -> dict:
    """What must be unchanged for a remembered checksum to hold. Size and mtime are what a rewrite
    changes; ctime and the inode also change when a copy restores an old mtime (cp -p, rsync -t)."""
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns, "inode": st.st_ino}


def _is_hex64(value) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _read_hash_cache(file: Path) -> dict:
    """The cache's entries; a corrupt file is reported, ignored (never trusted) and later rewritten."""
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        warnings.warn(f"checksum cache {file} is unreadable ({type(exc).__name__}: {exc}); it is ignored and "
                      "rewritten", HashCacheWarning, stacklevel=4)
        return {}
    entries = raw.get("files") if isinstance(raw, dict) and raw.get("version") == 1 else None
    if not isinstance(entries, dict):
        warnings.warn(f"checksum cache {file} is not a version-1 checksum cache; it is ignored and rewritten",
                      HashCacheWarning, stacklevel=4)
        return {}
    good = {k: v for k, v in entries.items() if isinstance(v, dict) and _is_hex64(v.get("sha256"))
            and all(isinstance(v.get(f), int) and not isinstance(v.get(f), bool) for f in _STAMP_FIELDS)}
    if len(good) != len(entries):
        warnings.warn(f"checksum cache {file}: {len(entries) - len(good)} malformed entr(ies) ignored",
                      HashCacheWarning, stacklevel=4)
    return good


_STAMP_FIELDS = ("size", "mtime_ns", "ctime_ns", "inode")


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20, cache: bool = True) -> str:
    """SHA-256 (hex) of a file's bytes.

    For files of at least :data:`HASH_CACHE_MIN_BYTES` the result is remembered in
    :func:`hash_cache_file`, keyed by the resolved path and the file's size, mtime, ctime and
    inode: a rewritten file is hashed again. The cache is written atomically (concurrent writers
    merge; at worst one's entry is lost and recomputed later); a cache that cannot be read or
    written costs a warning and a full hash, never a wrong checksum.
    """
    st = os.stat(path)
    if not cache or st.st_size < HASH_CACHE_MIN_BYTES:
        return _sha256_uncached(path, chunk)
    key = str(Path(path).resolve())
    file = hash_cache_file()
    hit = _read_hash_cache(file).get(key)
    if hit is not None and all(hit[f] == v for f, v in _stamp(st).items()):
        return hit["sha256"]
    digest = _sha256_uncached(path, chunk)
    if _stamp(os.stat(path)) == _stamp(st):            # not remembered if the file changed while hashed
        _remember(file, key, {**_stamp(st), "sha256": digest})
    return digest


def _remember(file: Path, key: str, entry: dict) -> None:
    entries = _read_hash_cache(file)                    # re-read: keep what concurrent runs added
    entries = {k: v for k, v in entries.items() if os.path.exists(k)}   # forget deleted files
    entries[key] = entry
    try:
        write_json(file, {"version": 1, "files": entries})
    except OSError as exc:
        warnings.warn(f"checksum cache {file} could not be written ({exc}); checksums are recomputed next time",
                      HashCacheWarning, stacklevel=3)
