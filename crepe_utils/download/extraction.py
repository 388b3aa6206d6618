"""Unpacking a verified zip: checked member names, a temporary folder, a marker, one rename into place."""
from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Callable

from ..progress import tqdm

from ..atomic import disk_full_named, write_json
from .datasets import RemoteFile
from ..errors import DownloadError
from .disk import CHUNK, check_space, utc_now

MARKER_NAME = ".crepe_extracted.json"
EXTRACT_PREFIX = ".crepe-extract-"


def _is_junk(name: str) -> bool:
    parts = name.split("/")
    return parts[0] == "__MACOSX" or parts[-1] == ".DS_Store"


def archive_members(entry: RemoteFile, archive: Path) -> list[zipfile.ZipInfo]:
    """The members to extract, after checking the central directory, names and layout."""
    folder = entry.extract.folder
    try:
        with zipfile.ZipFile(archive) as zf:
            members = [m for m in zf.infolist() if not _is_junk(m.filename)]
    except (zipfile.BadZipFile, OSError) as exc:
        raise DownloadError(f"{archive} is not a readable zip archive ({exc})") from None
    unsafe = [m.filename for m in members
              if m.filename.startswith("/") or ".." in m.filename.split("/") or ":" in m.filename]
    if unsafe:
        raise DownloadError(f"{archive} holds unsafe member names such as {unsafe[0]!r}; refusing to extract")
    if not any(not m.is_dir() for m in members):
        raise DownloadError(f"{archive} holds no files (besides __MACOSX/.DS_Store)")
    if entry.extract.root_required:
        outside = sorted({m.filename.split("/")[0] for m in members
                          if not m.filename.startswith(folder + "/")})
        if outside:
            raise DownloadError(f"{archive} should hold everything under {folder}/, but has "
                                f"top-level entries {outside[:5]}")
    return members


def extract(entry: RemoteFile, archive: Path, dest: Path, record: dict, say: Callable[[str], None]) -> None:
    """Extract ``archive`` to ``dest/<folder>``; ``record`` (its download record) goes into the marker."""
    folder = entry.extract.folder
    target = dest / folder
    if target.is_dir() and not (target / MARKER_NAME).is_file():
        raise DownloadError(f"{target} exists but was not extracted by this tool; move it away and rerun.")
    members = archive_members(entry, archive)
    need = sum(m.file_size for m in members)
    check_space(dest, need, f"extracting {archive.name}")
    has_root = all(m.filename.startswith(folder + "/") for m in members)
    tmp = Path(tempfile.mkdtemp(prefix=f"{EXTRACT_PREFIX}{folder}-", dir=dest))
    try:
        base = tmp if has_root else tmp / folder
        with disk_full_named(f"the extraction of {archive.name}", target, need, ", or pass --dest on a larger disk"), \
                zipfile.ZipFile(archive) as zf, tqdm(total=need, unit="B", unit_scale=True,
                                                  desc=f"extract {archive.name}", disable=None) as bar:
            for member in members:
                path = base.joinpath(*[p for p in member.filename.split("/") if p])
                if member.is_dir():
                    path.mkdir(parents=True, exist_ok=True)
                    continue
                path.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(member) as src, open(path, "wb") as dst:
                    shutil.copyfileobj(src, dst, CHUNK)
                bar.update(member.file_size)
        write_json(tmp / folder / MARKER_NAME, {
            "archive": entry.filename, "sha256": record.get("sha256"), "checksum": record.get("checksum"),
            "files": sum(not m.is_dir() for m in members), "bytes": need, "extracted_utc": utc_now()})
        if target.is_dir():  # an older extraction of another archive (its marker is stale)
            os.replace(target, tmp / ".stale")
        os.replace(tmp / folder, target)
    except (zipfile.BadZipFile, EOFError) as exc:
        bad = archive.with_name(archive.name + ".bad")
        os.replace(archive, bad)
        raise DownloadError(f"{archive} is corrupt ({exc}); moved to {bad.name}. Rerun to download "
                            "it again.") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    say(f"{archive.name}: extracted to {target}")


def remove_leftovers(dest: Path) -> None:
    """Delete the temporary folders of an interrupted extraction."""
    if dest.is_dir():
        for leftover in dest.glob(EXTRACT_PREFIX + "*"):
            shutil.rmtree(leftover, ignore_errors=True)
