"""HTTP transfer into ``<name>.part``: retries, ``Range`` resume, redirects that keep the token home."""
from __future__ import annotations

import http.client
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

from ..progress import tqdm

from ..atomic import disk_full_named, write_json
from .datasets import MIRROR_ENV, RemoteFile
from ..errors import DownloadError
from . import messages
from .disk import CHUNK, check_space, discard, human, read_json

USER_AGENT = "crepe_utils-download (python-urllib)"


@dataclass(frozen=True)
class TransferPolicy:
    """How hard one URL is tried: ``attempts`` per URL (a cut transfer resumes), ``retry_wait`` × attempt
    seconds between them, ``timeout_s`` for the connection and for each read."""

    attempts: int = 4
    retry_wait: float = 2.0
    timeout_s: float = 60.0


class _Transient(Exception):
    """A failure worth retrying from where the transfer stopped (cut connection, 5xx)."""


class _RangeRejected(_Transient):
    """HTTP 416: the partial download does not fit the remote file; it is discarded."""


class _SourceFailed(Exception):
    """This URL cannot deliver the file (unreachable, 404, retries spent); try the next one."""


def part_path(dest: Path, entry: RemoteFile) -> Path:
    return dest / f"{entry.filename}.part"


def part_meta_path(dest: Path, entry: RemoteFile) -> Path:
    return dest / f"{entry.filename}.part.json"


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


class Transport:
    """Brings one entry's bytes into ``<dest>/<name>.part`` from the first of its URLs that delivers."""

    def __init__(self, dest: Path, entries: list[RemoteFile], token: str | None, policy: TransferPolicy,
                 say: Callable[[str], None]) -> None:
        self.dest, self.entries, self.token = dest, entries, token
        self.policy, self.say = policy, say

    def fetch(self, entry: RemoteFile) -> tuple[str, Path, Path, dict]:
        """(url, part file, part metadata file, transfer metadata) of a complete transfer."""
        self.dest.mkdir(parents=True, exist_ok=True)
        part, meta_path = part_path(self.dest, entry), part_meta_path(self.dest, entry)
        failures = []
        for url in entry.urls():
            try:
                return url, part, meta_path, self._with_retries(entry, url, part, meta_path)
            except _SourceFailed as exc:
                failures.append(str(exc))
        kept = (f"\n{part} keeps the {human(part.stat().st_size)} received so far; the next run resumes it."
                if part.is_file() else "")
        raise DownloadError(
            f"Could not download {entry.filename} ({entry.description}):\n  " + "\n  ".join(failures)
            + kept + "\nCheck the connection and rerun, set " + MIRROR_ENV + " to a mirror, or "
            + messages.by_hand(self.dest, entry) + messages.revision_hint(entry))

    def _with_retries(self, entry: RemoteFile, url: str, part: Path, meta_path: Path) -> dict:
        attempts = self.policy.attempts
        for attempt in range(1, attempts + 1):
            try:
                return self._transfer(entry, url, part, meta_path)
            except _Transient as exc:
                if attempt == attempts:
                    raise _SourceFailed(f"{url}: {exc} (gave up after {attempt} attempts)") from None
                wait = self.policy.retry_wait * attempt
                self.say(f"{entry.filename}: {exc}; retrying in {wait:g} s (attempt {attempt + 1} of {attempts})")
                time.sleep(wait)
        raise AssertionError("unreachable")

    def _open(self, entry: RemoteFile, url: str, headers: dict[str, str]):
        """GET ``url``; returns (response, headers of the first response before any redirect)."""
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **headers})
        if entry.hub and self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        redirects = _SameHostRedirect()
        try:
            response = urllib.request.build_opener(redirects).open(request, timeout=self.policy.timeout_s)
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
            return DownloadError(messages.gated(self.dest, self.entries, f"{url} answered {status}: {problem}."))
        if exc.code == 416:
            return _RangeRejected(f"{url} answered {status} to the range request: the partial download "
                                  "does not fit the remote file; restarting from zero")
        if exc.code >= 500 or exc.code == 429:
            return _Transient(f"{url} answered {status}")
        return _SourceFailed(f"{url}: {status}")

    def _transfer(self, entry: RemoteFile, url: str, part: Path, meta_path: Path) -> dict:
        """One GET, resuming ``part`` when possible; returns the transfer's metadata."""
        meta = read_json(meta_path) if part.is_file() else {}
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
            discard(part, meta_path)
            raise
        with response:
            if response.status == 206:
                start, total = _content_range(response.headers.get("Content-Range"))
                if start != offset or (meta.get("total") and total != meta["total"]):
                    discard(part, meta_path)
                    raise _Transient(f"{url} answered the range request with bytes from {start} of "
                                     f"{total} (expected {offset} of {meta.get('total')}): the remote "
                                     "file changed; restarting from zero")
                mode = "ab"
            else:
                if offset:
                    self.say(f"{entry.filename}: {url} ignored the range request or the file changed "
                             "(HTTP 200): restarting from zero")
                offset, mode = 0, "wb"
                length = response.headers.get("Content-Length")
                total = int(length) if length and length.isdigit() else None
            if entry.size is not None and total is not None and total != entry.size:
                raise DownloadError(f"{url} offers {total} bytes for {entry.filename}; crepe_utils/download/datasets.py "
                                    f"expects {entry.size}. The remote file is not the pinned one: "
                                    + messages.by_hand(self.dest, entry))
            if total is not None:
                extra = total if entry.extract else 0
                check_space(self.dest, total - offset + extra, f"{entry.filename} and its extraction")
            meta = {"url": url, "validator": _validator(response.headers), "total": total,
                    "repo_commit": first.get("X-Repo-Commit"),
                    "hub_sha256": _hub_sha256(first) if entry.hub else None}
            write_json(meta_path, meta)
            self._copy(response, part, mode, offset, total, entry.filename)
        size = part.stat().st_size
        if total is not None and size < total:
            raise _Transient(f"connection closed after {human(size)} of {human(total)}")
        return meta

    @staticmethod
    def _copy(response, part: Path, mode: str, offset: int, total: int | None, label: str) -> None:
        needed = total - offset if total is not None else None
        try:
            with disk_full_named(f"the download of {label}", part, needed, ", or pass --dest on a larger disk",
                                 left="the partial download (*.part) is kept and resumed by the next run"), \
                    open(part, mode) as fh, tqdm(total=total, initial=offset, unit="B", unit_scale=True,
                                                 desc=label, disable=None) as bar:
                while block := response.read(CHUNK):
                    fh.write(block)
                    bar.update(len(block))
        except (TimeoutError, ConnectionError, http.client.HTTPException, urllib.error.URLError) as exc:
            raise _Transient(f"transfer interrupted ({exc!r})") from None
