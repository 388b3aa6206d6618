"""Atomic writes: a reader sees the old file (or folder) or the complete new one, never a partial one.

Every output of the package (tables, figures, results, caches, downloads) goes through
:func:`atomic_path`: the content is written to a temporary file in the destination folder
and moved over the destination with :func:`os.replace` only once it is complete.

A folder of files that belong together (one result) goes through :func:`atomic_directory`: it
is built in a hidden temporary sibling and moved into place as a whole. Hidden siblings left by
a killed process are removed by the next write of the same folder.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Callable, Iterator

from .errors import DiskFullError, UnwritableError


#: what a write that runs out of room raises: a full disk, a full quota
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
#: what a write that cannot create its file or folder raises: a file in the way, no permission, a read-only disk
UNWRITABLE = (errno.ENOTDIR, errno.EEXIST, errno.EACCES, errno.EPERM, errno.EROFS)


def human(n: int | None) -> str:
    """A byte count for people: ``12.3 MB``."""
    if n is None:
        return "size unknown"
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def _free_bytes(path: Path) -> int | None:
    path = Path(path).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    with contextlib.suppress(OSError):
        return shutil.disk_usage(path).free
    return None


def _size(path: Path) -> int:
    """Bytes held by the file or folder ``path`` (0 when gone)."""
    with contextlib.suppress(OSError):
        if path.is_file():
            return path.stat().st_size
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return 0


@contextlib.contextmanager
def disk_full_named(what: str, path: str | os.PathLike, needed: int | None = None, fix: str = "",
                    partial: Callable[[], Path | None] | None = None,
                    left: str = "nothing half-written is left") -> Iterator[None]:
    """Run a block that writes ``what`` at ``path``; a full disk or quota in it becomes one
    :class:`~crepe_utils.errors.DiskFullError` naming ``what``, ``path``, what it ``needed`` (when known) or what
    the file or folder ``partial()`` had reached, the space free there, ``fix`` (how else to proceed) and what
    is ``left`` on disk. A file or folder it cannot create (a file where a folder must be, no permission, a
    read-only file system) becomes one :class:`~crepe_utils.errors.UnwritableError` naming the same and why.
    Anything else passes through unchanged."""
    try:
        yield
    except OSError as exc:
        if isinstance(exc, (DiskFullError, UnwritableError)):
            raise
        why = _why_unwritable(exc, Path(path)) if exc.errno in UNWRITABLE else None
        if why is not None:
            raise UnwritableError(f"cannot write {what} ({path}): {why}. {_why_fix(exc)}{fix}; {left}",
                                  exc.errno) from None
        if exc.errno not in DISK_FULL:
            raise
        reached = partial() if partial is not None else None
        need = (f"; it needs about {human(needed)}" if needed is not None else
                f"; {human(_size(reached))} were written when the disk filled" if reached is not None else "")
        free = _free_bytes(Path(path))
        raise DiskFullError(f"no space left on the device writing {what} ({path}{need}; "
                            f"{human(free) if free is not None else 'unknown'} free there). "
                            f"Free some space{fix}; {left}") from None


def _why_unwritable(exc: OSError, path: Path) -> str | None:
    """Why ``exc`` kept a file or folder at ``path`` from being written, in words; None when it is not that."""
    if exc.errno == errno.EROFS:
        return "the file system holding it is read-only"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied on {exc.filename or path}"
    for place in (*([Path(exc.filename)] if exc.filename else []), path, *path.parents):   # a file where a folder must be
        candidates = (place, *place.parents) if exc.errno == errno.ENOTDIR else (place,)
        for candidate in candidates:
            if candidate.exists() and not candidate.is_dir():
                return f"{candidate} is a file, not a folder"
    return None


def _why_fix(exc: OSError) -> str:
    """The first words of the remedy for an unwritable place (the caller's ``fix`` follows)."""
    return "Move that file away" if exc.errno in (errno.ENOTDIR, errno.EEXIST) else "Make it writable"


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None, what: str | None = None,
                fix: str = "", needed: int | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; move it over ``path`` if the block succeeds.

    The temporary file keeps the destination's suffix (``suffix`` overrides it) so that
    writers that choose a format by extension (matplotlib, pandas) do the right thing.
    On an exception the temporary file is removed and ``path`` is left untouched; a full disk is a
    :class:`~crepe_utils.errors.DiskFullError` naming ``what`` (default: the file), what it ``needed`` (if known)
    and ``fix``.
    """
    path = Path(path)
    held: list[Path] = []
    try:
        with disk_full_named(what or f"the file {path.name}", path, needed, fix, lambda: next(iter(held), None)):
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.",
                                       suffix=".part" + (suffix if suffix is not None else path.suffix), dir=path.parent)
            os.close(fd)
            held.append(Path(tmp))
            yield held[0]
            os.chmod(held[0], 0o666 & ~_umask())  # mkstemp makes 0600 files; use the usual mode
            os.replace(held[0], path)
    except BaseException:
        for tmp in held:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
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


# ------------------------------------------------------------------------------ whole folders

def _owner() -> str:
    """This process as it appears in temporary names: host (dots replaced) and pid."""
    host = "".join(c if c.isalnum() or c in "-_" else "_" for c in socket.gethostname()) or "host"
    return f"{host}.{os.getpid()}"


def _abandoned(sibling: Path, name: str) -> bool:
    """Whether ``sibling`` is a temporary folder of ``name`` whose owner, on this host, has died."""
    parts = sibling.name.rsplit(".", 4)   # "." + name, host, pid, random, kind
    if len(parts) != 5 or parts[0] != f".{name}" or parts[4] not in ("partial", "replaced"):
        return False
    host, pid = parts[1], parts[2]
    if host != _owner().split(".")[0] or not pid.isdigit():
        return False                       # another host's: it cannot be told dead from here
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False                       # alive, another user's
    return False


def _fsync_tree(folder: Path) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    _fsync_dir(folder)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):     # not every platform can open a folder
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _publish(new: Path, path: Path) -> None:
    """Move the complete folder ``new`` to ``path``, moving any folder already there away first.

    Safe against concurrent writers of the same ``path``: each rename either succeeds or finds
    the place taken and retries; the last writer's folder stays.
    """
    while True:
        try:
            os.rename(new, path)           # succeeds when path is absent (or an empty folder)
            return
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
        old = Path(tempfile.mkdtemp(prefix=f".{path.name}.{_owner()}.", suffix=".replaced", dir=path.parent))
        try:
            os.rename(path, old)           # replaces the empty placeholder ``old``
        except FileNotFoundError:
            old.rmdir()                    # another writer moved it first; try again
            continue
        try:
            os.rename(new, path)
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
            continue                       # another writer published in between; replace theirs
        finally:
            shutil.rmtree(old, ignore_errors=True)
        return


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike, what: str | None = None, fix: str = "") -> Iterator[Path]:
    """Yield an empty temporary folder beside ``path``; if the block succeeds, it becomes ``path``.

    A reader of ``path`` sees the previous folder, then (for the instant between two renames)
    none, then the complete new one; never a mixture and never a half-written folder. On an
    exception, or if the process dies, ``path`` is left as it was; a full disk is a
    :class:`~crepe_utils.errors.DiskFullError` naming ``what`` (default: the folder) and ``fix``.
    """
    path = Path(path)
    held: list[Path] = []
    try:
        with disk_full_named(what or f"the folder {path.name}", path, fix=fix, partial=lambda: next(iter(held), None)):
            path.parent.mkdir(parents=True, exist_ok=True)
            for sibling in path.parent.glob(f".{path.name}.*"):
                if sibling.is_dir() and _abandoned(sibling, path.name):
                    shutil.rmtree(sibling, ignore_errors=True)
            held.append(Path(tempfile.mkdtemp(prefix=f".{path.name}.{_owner()}.", suffix=".partial", dir=path.parent)))
            yield held[0]
            os.chmod(held[0], 0o777 & ~_umask())  # mkdtemp makes 0700 folders; use the usual mode
            _fsync_tree(held[0])
            _publish(held[0], path)
            _fsync_dir(path.parent)
    except BaseException:
        for tmp in held:
            shutil.rmtree(tmp, ignore_errors=True)
        raise


def published_files(root: str | os.PathLike, name: str) -> list[Path]:
    """Every file called ``name`` below ``root`` outside hidden (temporary) folders, sorted.

    Folders that vanish while they are listed (replaced by a concurrent writer) are skipped.
    """
    found = []
    for folder, subfolders, files in os.walk(root):        # os.walk ignores folders that vanish
        subfolders[:] = [d for d in subfolders if not d.startswith(".")]
        if name in files:
            found.append(Path(folder) / name)
    return sorted(found)
