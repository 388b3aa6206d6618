"""Local-disk helpers of the downloader: sizes for people, free space, bookkeeping JSON."""
from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

from ..atomic import human  # noqa: F401 - the downloader's name for it
from ..errors import DownloadError

CHUNK = 1 << 20


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_json(path: Path) -> dict:
    """A bookkeeping file's content ({} when absent); a damaged one says how to recover."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except json.JSONDecodeError as exc:
        raise DownloadError(f"{path} is not valid JSON ({exc}). It is bookkeeping written by this "
                            "tool: delete it and rerun (files present are then checked again).") from None


def discard(*files: Path) -> None:
    for f in files:
        f.unlink(missing_ok=True)


def free_bytes(path: Path) -> int:
    path = path.resolve()
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free


def check_space(dest: Path, need: int, what: str) -> None:
    """Raise unless ``dest`` has room for ``need`` bytes plus a margin."""
    margin = max(256 * 10**6, need // 20)
    free = free_bytes(dest)
    if free < need + margin:
        raise DownloadError(
            f"Not enough disk space in {dest.resolve()}: {what} need about {human(need)} "
            f"(+ {human(margin)} margin), {human(free)} free. Free some space or pass --dest "
            "on a larger disk.")
