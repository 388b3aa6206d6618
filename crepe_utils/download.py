"""Resumable, verified downloads of the files in :mod:`crepe_utils.datasets` (``make data``).

``python -m crepe_utils download {crepe,vg,winoground} [--dest DIR] [--yes] [--remove-archives]``

For each file of the dataset a run goes through these steps; an interrupted run resumes at the
step it stopped in, and nothing unverified is ever given a final name:

1. **State on disk.** ``<dest>/<folder>/`` with a matching extraction marker: done. The folder
   without a marker: placed by hand, left alone. The file with a matching entry (size and mtime) in
   ``<dest>/download_record.json``: verified, not hashed again. Any other copy of the file: hashed
   and checked (a mismatch is moved aside as ``<name>.bad``). ``<name>.part``: resumed.
2. **Plan.** What, how big, where; free disk space checked (downloads plus extraction, with a
   margin); confirmation asked on a terminal unless ``--yes``.
3. **Download** into ``<name>.part`` (next to it ``<name>.part.json``: URL, validator, size).
   Interruptions are retried, then resumed with HTTP ``Range`` + ``If-Range``; a server that
   ignores the range (200) or a remote file that changed restarts from zero.
4. **Verification** against the pinned checksum, else the sha256 recorded at the first download,
   plus the hub's ``X-Linked-Etag``; archives must also open as zips. Only then the file is renamed
   to its final name and recorded; on a mismatch the download is deleted.
5. **Extraction** into ``<dest>/.crepe-extract-*``; a marker (``.crepe_extracted.json``) is
   written inside, and one rename moves the folder into place. Leftovers of an interrupted
   extraction are deleted by the next run.

Winoground is gated: the token comes from ``HF_TOKEN``, ``HUGGING_FACE_HUB_TOKEN`` or the file
written by ``huggingface-cli login``; it is sent only to the URL's own host (never along a redirect
to another host, nor to a ``CREPE_MIRROR``). Standard library only (urllib), plus tqdm bars.
"""
from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import shutil
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Mapping, TextIO
from urllib.parse import urlsplit

from .progress import tqdm

from . import paths
from .atomic import write_json
from .datasets import (DATASETS, MIRROR_ENV, OVERRIDE_ENV, DatasetTableError, RemoteFile,
                       files_for)

RECORD_NAME = "download_record.json"
MARKER_NAME = ".crepe_extracted.json"
EXTRACT_PREFIX = ".crepe-extract-"
CHUNK = 1 << 20
TIMEOUT_S = 60
USER_AGENT = "crepe_utils-download (python-urllib)"
TOKEN_ENVS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


class DownloadError(RuntimeError):
    """A download that cannot complete; the message names the URL or file and how to fix it."""


class _Transient(Exception):
    """A failure worth retrying from where the transfer stopped (cut connection, 5xx)."""


class _RangeRejected(_Transient):
    """HTTP 416: the partial download does not fit the remote file; it is discarded."""


class _SourceFailed(Exception):
    """This URL cannot deliver the file (unreachable, 404, retries spent); try the next one."""


def default_destination(dataset: str) -> Path:
    """Where ``dataset`` goes without ``--dest`` (see :mod:`crepe_utils.paths`)."""
    return {"crepe": paths.data_root() / "crepe", "vg": paths.vg_images_dir(),
            "winoground": paths.winoground_dir()}[dataset]


def hub_token(environ: Mapping[str, str] | None = None) -> str | None:
    """The Hugging Face token: ``HF_TOKEN``, ``HUGGING_FACE_HUB_TOKEN``, else ``huggingface-cli login``'s file."""
    environ = os.environ if environ is None else environ
    for name in TOKEN_ENVS:
        if environ.get(name, "").strip():
            return environ[name].strip()
    hf_home = environ.get("HF_HOME") or os.path.join("~", ".cache", "huggingface")
    token_file = Path(environ.get("HF_TOKEN_PATH") or os.path.join(hf_home, "token")).expanduser()
    if token_file.is_file():
        return token_file.read_text(encoding="utf-8").strip() or None
    return None


# ------------------------------------------------------------------------------- small helpers

def _utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _human(n: int | None) -> str:
    if n is None:
        return "size unknown"
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except json.JSONDecodeError as exc:
        raise DownloadError(f"{path} is not valid JSON ({exc}). It is bookkeeping written by this "
                            "tool: delete it and rerun (files present are then checked again).") from None


def _discard(*files: Path) -> None:
    for f in files:
        f.unlink(missing_ok=True)


def _digests(path: Path, git_blob: bool, label: str) -> dict[str, str]:
    """sha256 of the file, plus its git blob id when ``git_blob``."""
    size = path.stat().st_size
    sha256 = hashlib.sha256()
    sha1 = hashlib.sha1(b"blob %d\0" % size) if git_blob else None
    with open(path, "rb") as fh, tqdm(total=size, unit="B", unit_scale=True, desc=f"verify {label}",
                                      disable=None, leave=False) as bar:
        while block := fh.read(CHUNK):
            sha256.update(block)
            if sha1 is not None:
                sha1.update(block)
            bar.update(len(block))
    out = {"sha256": sha256.hexdigest()}
    if sha1 is not None:
        out["git-blob-sha1"] = sha1.hexdigest()
    return out


def _is_junk(name: str) -> bool:
    parts = name.split("/")
    return parts[0] == "__MACOSX" or parts[-1] == ".DS_Store"


def _content_range(value: str | None) -> tuple[int | None, int | None]:
    """``bytes 100-999/1000`` → (100, 1000); total None when ``*``."""
    try:
        unit, spec = value.split(" ", 1)
        span, total = spec.split("/")
        return int(span.split("-")[0]), (None if total == "*" else int(total))
    except (AttributeError, ValueError):
        return None, None


def _validator(headers) -> str | None:
    """A validator usable in If-Range: a strong ETag, else Last-Modified."""
    etag = headers.get("ETag")
    if etag and not etag.startswith("W/"):
        return etag
    return headers.get("Last-Modified")


def _hub_sha256(headers) -> str | None:
    """The sha256 the Hugging Face hub sends for LFS files (``X-Linked-Etag``), when it does."""
    value = (headers.get("X-Linked-Etag") or "").removeprefix("W/").strip('"')
    return value if len(value) == 64 and all(c in "0123456789abcdef" for c in value) else None


class _SameHostRedirect(urllib.request.HTTPRedirectHandler):
    """Follows redirects; keeps the headers of the first response; drops the token on a host change."""

    def __init__(self) -> None:
        self.first_headers = None

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if self.first_headers is None:
            self.first_headers = headers
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urlsplit(newurl).netloc != urlsplit(req.full_url).netloc:
            new.remove_header("Authorization")
        return new


def _free_bytes(path: Path) -> int:
    path = path.resolve()
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free


# ------------------------------------------------------------------------------- state on disk

@dataclass(frozen=True)
class _State:
    kind: str            #: extracted, by-hand, verified, present, partial, missing
    partial_bytes: int = 0

    @property
    def needs_download(self) -> bool:
        return self.kind in ("partial", "missing")


class Downloader:
    """Downloads, verifies and extracts the files ``entries`` into ``dest``."""

    def __init__(self, entries: list[RemoteFile], dest: str | os.PathLike, *, token: str | None = None,
                 remove_archives: bool = False, attempts: int = 4, retry_wait: float = 2.0,
                 out: TextIO | None = None) -> None:
        self.entries = entries
        self.dest = Path(dest)
        self.token = token
        self.remove_archives = remove_archives
        self.attempts = attempts
        self.retry_wait = retry_wait
        self.out = out or sys.stdout
        self.record_path = self.dest / RECORD_NAME

    # .................................................................... orchestration
    def run(self, confirm: Callable[[], bool] | None = None) -> None:
        """Plan, check, then bring every entry to its final state. Raises :class:`DownloadError`."""
        self._remove_extraction_leftovers()
        states = {e.name: self._state(e) for e in self.entries}
        todo = [e for e in self.entries if states[e.name].kind not in ("extracted", "by-hand")]
        self._print_plan(states)
        if not todo:
            self._say("Nothing to do.")
            return
        to_fetch = [e for e in todo if states[e.name].needs_download]
        if any(e.hub for e in to_fetch) and not self.token:
            raise DownloadError(self._gated_message("No Hugging Face token found."))
        need = self._plan_bytes(todo, states)
        unknown = [e.filename for e in to_fetch if not (e.size or e.approx_size)]
        self._say(f"Disk: about {_human(need)} needed for downloads and extraction"
                  + (f" plus {', '.join(unknown)} (size unknown until the server answers)" if unknown else "")
                  + f"; {_human(_free_bytes(self.dest))} free.")
        self._check_space(need, "the downloads and their extraction")
        if confirm is not None and to_fetch and not confirm():
            raise DownloadError("Cancelled; nothing was downloaded.")
        for entry in todo:
            self._ensure(entry, states[entry.name])
        self._say(f"Done: {', '.join(e.filename for e in self.entries)} in {self.dest}")

    def _ensure(self, entry: RemoteFile, state: _State) -> None:
        final = self.dest / entry.filename
        archive = final if state.kind == "verified" else None
        if state.kind == "present":
            archive = self._check_existing(entry, final)
        if archive is None:
            archive = self._fetch(entry)
        else:  # a leftover partial download of a file that is now complete
            _discard(self._part(entry), self._part_meta(entry))
        if entry.extract:
            self._extract(entry, archive)
            if self.remove_archives:
                archive.unlink()
                self._say(f"removed {archive} (extracted; its sha256 stays in {self.record_path.name})")

    def _state(self, entry: RemoteFile) -> _State:
        record = self._record().get(entry.filename)
        if entry.extract:
            folder = self.dest / entry.extract.folder
            if folder.is_dir():
                marker = _read_json(folder / MARKER_NAME)
                if not marker:
                    return _State("by-hand")
                if self._marker_matches(entry, marker, record):
                    return _State("extracted")
        final = self.dest / entry.filename
        if final.is_file():
            st = final.stat()
            if (record and record.get("size") == st.st_size and record.get("mtime_ns") == st.st_mtime_ns
                    and self._record_matches_pin(entry, record)):
                return _State("verified")
            return _State("present")
        part = self._part(entry)
        if part.is_file():
            return _State("partial", part.stat().st_size)
        return _State("missing")

    @staticmethod
    def _record_matches_pin(entry: RemoteFile, record: dict) -> bool:
        pinned = entry.checksum
        got = record.get("checksum") or {}
        return pinned is None or (got.get("kind"), got.get("value")) == (pinned.kind, pinned.value)

    def _marker_matches(self, entry: RemoteFile, marker: dict, record: dict | None) -> bool:
        if entry.checksum is not None:
            return self._record_matches_pin(entry, marker)
        return record is None or record.get("sha256") == marker.get("sha256")

    # .................................................................... plan and disk space
    def _plan_bytes(self, todo: list[RemoteFile], states: dict[str, _State]) -> int:
        need = 0
        for entry in todo:
            final = self.dest / entry.filename
            estimate = entry.size or entry.approx_size or 0
            if states[entry.name].needs_download:
                need += max(estimate - states[entry.name].partial_bytes, 0)
            if entry.extract:
                need += final.stat().st_size if final.is_file() else estimate
        return need

    def _print_plan(self, states: dict[str, _State]) -> None:
        self._say(f"Plan for {self.dest.resolve()}:")
        for entry in self.entries:
            self._say(f"  {entry.filename:<26} {entry.description}\n"
                      f"  {'':<26} {self._describe(entry, states[entry.name])}")

    @staticmethod
    def _describe(entry: RemoteFile, state: _State) -> str:
        folder = entry.extract.folder if entry.extract else None
        if state.kind == "extracted":
            return f"already extracted and verified in {folder}/ (skipped)"
        if state.kind == "by-hand":
            return (f"{folder}/ is present but was not extracted by this tool "
                    "(left as it is, not verified; remove it to download)")
        size = _human(entry.size or entry.approx_size)
        if entry.size is None and entry.approx_size is not None:
            size = "about " + size
        action = {
            "verified": "present and verified",
            "present": "present, to be verified",
            "partial": f"resume at {_human(state.partial_bytes)} of {size}, from {entry.urls()[0]}",
            "missing": f"download ({size}) from {entry.urls()[0]}",
        }[state.kind]
        return action + (f", then extract to {folder}/" if folder else "")

    def _check_space(self, need: int, what: str) -> None:
        margin = max(256 * 10**6, need // 20)
        free = _free_bytes(self.dest)
        if free < need + margin:
            raise DownloadError(
                f"Not enough disk space in {self.dest.resolve()}: {what} need about {_human(need)} "
                f"(+ {_human(margin)} margin), {_human(free)} free. Free some space or pass --dest "
                "on a larger disk.")

    # .................................................................... downloading
    def _part(self, entry: RemoteFile) -> Path:
        return self.dest / f"{entry.filename}.part"

    def _part_meta(self, entry: RemoteFile) -> Path:
        return self.dest / f"{entry.filename}.part.json"

    def _fetch(self, entry: RemoteFile) -> Path:
        self.dest.mkdir(parents=True, exist_ok=True)
        part = self._part(entry)
        meta_path = self._part_meta(entry)
        failures = []
        for url in entry.urls():
            try:
                meta = self._transfer_with_retries(entry, url, part, meta_path)
            except _SourceFailed as exc:
                failures.append(str(exc))
                continue
            return self._verify_and_commit(entry, url, part, meta_path, meta)
        kept = (f"\n{part} keeps the {_human(part.stat().st_size)} received so far; the next run resumes it."
                if part.is_file() else "")
        raise DownloadError(
            f"Could not download {entry.filename} ({entry.description}):\n  " + "\n  ".join(failures)
            + kept + "\nCheck the connection and rerun, set " + MIRROR_ENV + " to a mirror, or "
            + self._by_hand(entry) + self._revision_hint(entry))

    def _transfer_with_retries(self, entry: RemoteFile, url: str, part: Path, meta_path: Path) -> dict:
        for attempt in range(1, self.attempts + 1):
            try:
                return self._transfer(entry, url, part, meta_path)
            except _Transient as exc:
                if attempt == self.attempts:
                    raise _SourceFailed(f"{url}: {exc} (gave up after {attempt} attempts)") from None
                wait = self.retry_wait * attempt
                self._say(f"{entry.filename}: {exc}; retrying in {wait:g} s "
                          f"(attempt {attempt + 1} of {self.attempts})")
                time.sleep(wait)
        raise AssertionError("unreachable")

    def _open(self, entry: RemoteFile, url: str, headers: dict[str, str]):
        """GET ``url``; returns (response, headers of the first response before any redirect)."""
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **headers})
        if entry.hub and self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        redirects = _SameHostRedirect()
        try:
            response = urllib.request.build_opener(redirects).open(request, timeout=TIMEOUT_S)
        except urllib.error.HTTPError as exc:
            raise self._http_failure(entry, url, exc) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, socket.gaierror):
                raise _SourceFailed(f"{url}: cannot resolve host {urlsplit(url).hostname!r} "
                                    "(offline, or a DNS failure?)") from None
            raise _SourceFailed(f"{url}: cannot connect ({reason}); offline, or the host is down?") from None
        except (TimeoutError, ConnectionError, http.client.HTTPException) as exc:
            raise _Transient(f"connection failed ({exc!r})") from None
        return response, redirects.first_headers or response.headers

    def _http_failure(self, entry: RemoteFile, url: str, exc: urllib.error.HTTPError) -> Exception:
        status = f"HTTP {exc.code} {exc.reason}"
        detail = exc.headers.get("X-Error-Message") if exc.headers else None
        status += f" ({detail})" if detail else ""
        if entry.hub and exc.code in (401, 403):
            problem = ("the token was refused (mistyped or revoked?)" if exc.code == 401 else
                       "the token is valid but this account has not accepted the dataset's terms")
            return DownloadError(self._gated_message(f"{url} answered {status}: {problem}."))
        if exc.code == 416:
            return _RangeRejected(f"{url} answered {status} to the range request: the partial download "
                                  "does not fit the remote file; restarting from zero")
        if exc.code >= 500 or exc.code == 429:
            return _Transient(f"{url} answered {status}")
        return _SourceFailed(f"{url}: {status}")

    def _transfer(self, entry: RemoteFile, url: str, part: Path, meta_path: Path) -> dict:
        """One GET, resuming ``part`` when possible; returns the transfer's metadata."""
        meta = _read_json(meta_path) if part.is_file() else {}
        offset = part.stat().st_size if part.is_file() else 0
        if offset and meta.get("url") != url:
            offset = 0  # bytes from another source: their validator means nothing here
        if offset and meta.get("total") == offset:
            return meta
        headers = {}
        if offset:
            headers["Range"] = f"bytes={offset}-"
            if meta.get("validator"):
                headers["If-Range"] = meta["validator"]
        try:
            response, first = self._open(entry, url, headers)
        except _RangeRejected:
            _discard(part, meta_path)
            raise
        with response:
            if response.status == 206:
                start, total = _content_range(response.headers.get("Content-Range"))
                if start != offset or (meta.get("total") and total != meta["total"]):
                    _discard(part, meta_path)
                    raise _Transient(f"{url} answered the range request with bytes from {start} of "
                                     f"{total} (expected {offset} of {meta.get('total')}): the remote "
                                     "file changed; restarting from zero")
                mode = "ab"
            else:
                if offset:
                    self._say(f"{entry.filename}: {url} ignored the range request or the file changed "
                              "(HTTP 200): restarting from zero")
                offset, mode = 0, "wb"
                length = response.headers.get("Content-Length")
                total = int(length) if length and length.isdigit() else None
            if entry.size is not None and total is not None and total != entry.size:
                raise DownloadError(f"{url} offers {total} bytes for {entry.filename}; crepe_utils/datasets.py "
                                    f"expects {entry.size}. The remote file is not the pinned one: "
                                    + self._by_hand(entry))
            if total is not None:
                extra = total if entry.extract else 0
                self._check_space(total - offset + extra, f"{entry.filename} and its extraction")
            meta = {"url": url, "validator": _validator(response.headers), "total": total,
                    "repo_commit": first.get("X-Repo-Commit"),
                    "hub_sha256": _hub_sha256(first) if entry.hub else None}
            write_json(meta_path, meta)
            self._copy(response, part, mode, offset, total, entry.filename)
        size = part.stat().st_size
        if total is not None and size < total:
            raise _Transient(f"connection closed after {_human(size)} of {_human(total)}")
        return meta

    def _copy(self, response, part: Path, mode: str, offset: int, total: int | None, label: str) -> None:
        try:
            with open(part, mode) as fh, tqdm(total=total, initial=offset, unit="B", unit_scale=True,
                                              desc=label, disable=None) as bar:
                while block := response.read(CHUNK):
                    fh.write(block)
                    bar.update(len(block))
        except (TimeoutError, ConnectionError, http.client.HTTPException, urllib.error.URLError) as exc:
            raise _Transient(f"transfer interrupted ({exc!r})") from None

    # .................................................................... verification
    def _expected(self, entry: RemoteFile, meta: dict) -> list[tuple[str, str, str]]:
        """(kind, value, where it comes from) for every digest the file must match."""
        expected = []
        if entry.checksum is not None:
            expected.append((entry.checksum.kind, entry.checksum.value, "pinned in crepe_utils/datasets.py"))
        else:
            record = self._record().get(entry.filename)
            if record and record.get("sha256") and record.get("revision") == entry.revision:
                expected.append(("sha256", record["sha256"],
                                 f"recorded at the first download, {record.get('verified_utc')}, in "
                                 f"{self.record_path}"))
        if meta.get("hub_sha256"):
            expected.append(("sha256", meta["hub_sha256"], "sent by the Hugging Face hub (X-Linked-Etag)"))
        return expected

    def _mismatch(self, entry: RemoteFile, path: Path, meta: dict) -> str | None:
        """None when ``path`` matches every expected digest (and opens as a zip, for archives).

        Stores the digests in ``meta["digests"]`` and what they were checked against in
        ``meta["checked"]``.
        """
        digests = _digests(path, entry.checksum is not None and entry.checksum.kind == "git-blob-sha1",
                           entry.filename)
        meta["digests"] = digests
        expected = self._expected(entry, meta)
        meta["checked"] = [f"{kind} {source}" for kind, _, source in expected]
        for kind, value, source in expected:
            if digests[kind] != value:
                with open(path, "rb") as fh:
                    head = fh.read(512).lstrip().lower()
                html = (" It starts like an HTML page (a login or error page?)."
                        if head.startswith((b"<!doctype", b"<html")) else "")
                return f"{kind} expected {value} ({source}), got {digests[kind]}.{html}"
        if entry.extract:
            try:
                self._archive_members(entry, path)
            except DownloadError as exc:
                return str(exc)
        return None

    def _verify_and_commit(self, entry: RemoteFile, url: str, part: Path, meta_path: Path, meta: dict) -> Path:
        problem = self._mismatch(entry, part, meta)
        final = self.dest / entry.filename
        if problem:
            _discard(part, meta_path)
            raise DownloadError(
                f"{entry.filename} downloaded from {url} failed verification: {problem}\n"
                "The download was deleted. Rerun to fetch it again; if it fails again, the source no longer "
                "serves the pinned file: " + self._by_hand(entry))
        os.replace(part, final)
        meta_path.unlink(missing_ok=True)
        self._write_record(entry, final, url, meta)
        checked = "; ".join(meta["checked"]) or f"no published checksum: sha256 recorded in {RECORD_NAME}"
        self._say(f"{entry.filename}: verified ({checked})")
        return final

    def _check_existing(self, entry: RemoteFile, final: Path) -> Path | None:
        """Verify a file found on disk; a bad one is moved to ``<name>.bad`` (None: download it)."""
        meta: dict = {}
        problem = self._mismatch(entry, final, meta)
        if problem:
            bad = final.with_name(final.name + ".bad")
            os.replace(final, bad)
            self._say(f"{final} failed verification ({problem}); moved to {bad.name}, downloading again")
            return None
        self._write_record(entry, final, None, meta)
        return final

    def _record(self) -> dict:
        return _read_json(self.record_path).get("files", {})

    def _write_record(self, entry: RemoteFile, final: Path, url: str | None, meta: dict) -> None:
        st = final.stat()
        files = self._record()
        files[entry.filename] = {
            "entry": entry.name, "url": url, "revision": entry.revision,
            "resolved_revision": meta.get("repo_commit"), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "sha256": meta["digests"]["sha256"], "digests": meta["digests"],
            "checksum": ({"kind": entry.checksum.kind, "value": entry.checksum.value}
                         if entry.checksum else None),
            "origin": "downloaded" if url else "found on disk", "verified_utc": _utc_now(),
        }
        write_json(self.record_path, {"files": files})

    # .................................................................... extraction
    def _archive_members(self, entry: RemoteFile, archive: Path) -> list[zipfile.ZipInfo]:
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

    def _extract(self, entry: RemoteFile, archive: Path) -> None:
        folder = entry.extract.folder
        target = self.dest / folder
        if target.is_dir() and not (target / MARKER_NAME).is_file():
            raise DownloadError(f"{target} exists but was not extracted by this tool; move it away and rerun.")
        members = self._archive_members(entry, archive)
        need = sum(m.file_size for m in members)
        self._check_space(need, f"extracting {archive.name}")
        has_root = all(m.filename.startswith(folder + "/") for m in members)
        tmp = Path(tempfile.mkdtemp(prefix=f"{EXTRACT_PREFIX}{folder}-", dir=self.dest))
        try:
            base = tmp if has_root else tmp / folder
            with zipfile.ZipFile(archive) as zf, tqdm(total=need, unit="B", unit_scale=True,
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
            record = self._record().get(entry.filename, {})
            write_json(tmp / folder / MARKER_NAME, {
                "archive": entry.filename, "sha256": record.get("sha256"), "checksum": record.get("checksum"),
                "files": sum(not m.is_dir() for m in members), "bytes": need, "extracted_utc": _utc_now()})
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
        self._say(f"{archive.name}: extracted to {target}")

    def _remove_extraction_leftovers(self) -> None:
        if self.dest.is_dir():
            for leftover in self.dest.glob(EXTRACT_PREFIX + "*"):
                shutil.rmtree(leftover, ignore_errors=True)

    # .................................................................... messages
    def _say(self, message: str) -> None:
        print(message, file=self.out, flush=True)

    def _by_hand(self, entry: RemoteFile) -> str:
        where = self.dest.resolve() / entry.filename
        also = (f" (or its content, extracted, as {self.dest.resolve() / entry.extract.folder}/)"
                if entry.extract else "")
        return f"place the file by hand at {where}{also} and rerun to verify it."

    @staticmethod
    def _revision_hint(entry: RemoteFile) -> str:
        if not (entry.hub and entry.revision):
            return ""
        return (f"\nIf the file is absent at the pinned revision {entry.revision}, point {OVERRIDE_ENV} at a "
                f'JSON file such as {{"{entry.name}": {{"revision": "main"}}}} (the commit used is recorded).')

    def _gated_message(self, reason: str) -> str:
        hub_entries = [e for e in self.entries if e.hub]
        page = hub_entries[0].url.split("/resolve/")[0] if hub_entries else "the dataset page"
        files = "\n".join(f"    {self.dest.resolve() / e.filename}"
                          + (f"  (or extracted: {self.dest.resolve() / e.extract.folder}/)" if e.extract else "")
                          for e in self.entries)
        return (f"{reason}\nThis dataset is gated on the Hugging Face hub. To download it:\n"
                f"  1. log in at https://huggingface.co, open {page} and accept the terms "
                "(\"Access repository\");\n"
                "  2. create a read token at https://huggingface.co/settings/tokens and export HF_TOKEN=hf_... "
                "(HUGGING_FACE_HUB_TOKEN or `huggingface-cli login` work too);\n"
                "  3. rerun this command.\n"
                f"Or place the files by hand and rerun:\n{files}")


# ------------------------------------------------------------------------------- command line

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("dataset", choices=DATASETS,
                        help="crepe: hard-negative CSVs; vg: Visual Genome images (about 15 GB); "
                             "winoground: gated, needs HF_TOKEN")
    parser.add_argument("--dest", metavar="DIR",
                        help="destination folder (default: $CREPE_DATA/crepe, $VG_IMAGES or "
                             "$CREPE_DATA/visual_genome, $WINOGROUND_DATA or $CREPE_DATA/winoground)")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask before downloading")
    parser.add_argument("--remove-archives", action="store_true",
                        help="delete each zip once extracted (its sha256 stays recorded)")
    parser.epilog = (
        "environment:\n"
        f"  {MIRROR_ENV + '=URL':<30} fetch every file from URL/<file name>\n"
        f"  {OVERRIDE_ENV + '=FILE':<30} JSON: entry name -> fields to replace (mirrors, tests),\n"
        f"  {'':<30} see crepe_utils/datasets.py\n"
        f"  {'HF_TOKEN':<30} Hugging Face token for Winoground (or `huggingface-cli login`)\n"
        f"Bookkeeping: DEST/{RECORD_NAME} (verified sizes and digests), DEST/<folder>/{MARKER_NAME}.")


def _ask() -> bool:
    return input("Proceed? [y/N] ").strip().lower() in ("y", "yes")


def run(args: argparse.Namespace) -> int:
    try:
        entries = files_for(args.dataset)
        dest = Path(args.dest) if args.dest else default_destination(args.dataset)
        confirm = None if args.yes or not sys.stdin.isatty() else _ask
        Downloader(entries, dest, token=hub_token(), remove_archives=args.remove_archives).run(confirm)
    except (DownloadError, DatasetTableError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: partial downloads are kept (*.part) and resumed by the next run", file=sys.stderr)
        return 130
    return 0
