"""Is a file the one pinned? Digests, the expectations they must meet, and the record of verified files."""
from __future__ import annotations

import hashlib
from pathlib import Path

from ..progress import tqdm

from ..atomic import write_json
from ..digests import update_from_file
from .datasets import RemoteFile
from ..errors import DownloadError
from .disk import CHUNK, read_json, utc_now
from .extraction import archive_members

RECORD_NAME = "download_record.json"


def digests(path: Path, git_blob: bool, label: str) -> dict[str, str]:
    """sha256 of the file, plus its git blob id when ``git_blob``."""
    size = path.stat().st_size
    sha256 = hashlib.sha256()
    sha1 = hashlib.sha1(b"blob %d\0" % size) if git_blob else None
    with tqdm(total=size, unit="B", unit_scale=True, desc=f"verify {label}", disable=None, leave=False) as bar:
        update_from_file(path, *(h for h in (sha256, sha1) if h is not None), chunk=CHUNK, on_block=bar.update)
    out = {"sha256": sha256.hexdigest()}
    if sha1 is not None:
        out["git-blob-sha1"] = sha1.hexdigest()
    return out


def record_matches_pin(entry: RemoteFile, record: dict) -> bool:
    pinned = entry.checksum
    got = record.get("checksum") or {}
    return pinned is None or (got.get("kind"), got.get("value")) == (pinned.kind, pinned.value)


class Record:
    """``<dest>/download_record.json``: size, mtime and digests of every file verified there."""

    def __init__(self, dest: Path) -> None:
        self.path = dest / RECORD_NAME

    def files(self) -> dict:
        return read_json(self.path).get("files", {})

    def get(self, filename: str) -> dict | None:
        return self.files().get(filename)

    def write(self, entry: RemoteFile, final: Path, url: str | None, meta: dict) -> None:
        st = final.stat()
        files = self.files()
        files[entry.filename] = {
            "entry": entry.name, "url": url, "revision": entry.revision,
            "resolved_revision": meta.get("repo_commit"), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "sha256": meta["digests"]["sha256"], "digests": meta["digests"],
            "checksum": ({"kind": entry.checksum.kind, "value": entry.checksum.value}
                         if entry.checksum else None),
            "origin": "downloaded" if url else "found on disk", "verified_utc": utc_now(),
        }
        write_json(self.path, {"files": files})


def expected(entry: RemoteFile, meta: dict, record: Record) -> list[tuple[str, str, str]]:
    """(kind, value, where it comes from) for every digest the file must match."""
    out = []
    if entry.checksum is not None:
        out.append((entry.checksum.kind, entry.checksum.value, "pinned in crepe_utils/download/datasets.py"))
    else:
        seen = record.get(entry.filename)
        if seen and seen.get("sha256") and seen.get("revision") == entry.revision:
            out.append(("sha256", seen["sha256"],
                        f"recorded at the first download, {seen.get('verified_utc')}, in {record.path}"))
    if meta.get("hub_sha256"):
        out.append(("sha256", meta["hub_sha256"], "sent by the Hugging Face hub (X-Linked-Etag)"))
    return out


def mismatch(entry: RemoteFile, path: Path, meta: dict, record: Record) -> str | None:
    """None when ``path`` matches every expected digest (and opens as a zip, for archives).

    Stores the digests in ``meta["digests"]`` and what they were checked against in ``meta["checked"]``.
    """
    found = digests(path, entry.checksum is not None and entry.checksum.kind == "git-blob-sha1", entry.filename)
    meta["digests"] = found
    wanted = expected(entry, meta, record)
    meta["checked"] = [f"{kind} {source}" for kind, _, source in wanted]
    for kind, value, source in wanted:
        if found[kind] != value:
            with open(path, "rb") as fh:
                head = fh.read(512).lstrip().lower()
            html = (" It starts like an HTML page (a login or error page?)."
                    if head.startswith((b"<!doctype", b"<html")) else "")
            return f"{kind} expected {value} ({source}), got {found[kind]}.{html}"
    if entry.extract:
        try:
            archive_members(entry, path)
        except DownloadError as exc:
            return str(exc)
    return None
