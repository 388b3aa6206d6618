"""``make all``'s first step: fetch the released text data that are missing; never fail for want of them.

``python -m crepe_utils download --released-text`` goes through the table, dataset by dataset:

* entries marked ``released_text`` (text data with a public release) that are not in the
  dataset's default folder (:meth:`~crepe_utils.download.datasets.Dataset.dir`) are fetched through the
  :class:`.Downloader` (pinned, checksummed, resumable, atomic), quickly: one attempt per URL;
* gated entries (a licence to accept first) are never fetched here, whatever the token: a line says how;
* the rest (Visual Genome: 15 GB) is left to its own target.

Each dataset concerned gets exactly one line: present, fetched, or missing with the command that gets
it. Nothing is written into a folder that holds things this tool did not put there (a data folder
arranged by hand, a shared read-only copy) or that is not writable. Before any request, every host
(or its proxy) is probed once, all in parallel, by a TCP connection of at most ``PROBE_TIMEOUT_S``
seconds, name resolution included: an offline machine gets its lines within seconds.
"""
from __future__ import annotations

import io
import os
import socket
import threading
import time
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import DownloadError, error_line
from ..download import plan
from .. import benchmarks
from ..download.datasets import MIRROR_ENV, RemoteFile
from ..download.downloader import Downloader
from ..download.transport import TransferPolicy
from ..download.verification import Record

PROBE_TIMEOUT_S = 3.0
#: one attempt per URL (a cut transfer is resumed by the next run, not retried now)
QUICK = TransferPolicy(attempts=1, retry_wait=0.0, timeout_s=10.0)


@dataclass(frozen=True)
class Outcome:
    """What became of one dataset."""

    dataset: str
    status: str      #: present, fetched or missing
    line: str        #: what to print: one line


@dataclass
class _Pending:
    """A dataset whose missing files this run will try to fetch."""

    dataset: str
    dest: Path
    missing: list[RemoteFile]
    what: str                        #: the missing files, for a person

    def to_download(self) -> list[RemoteFile]:
        """The missing files that need the network (others only need extracting)."""
        record = Record(self.dest)
        return [e for e in self.missing if plan.state(e, self.dest, record).needs_download]


def present(entry: RemoteFile, dest: Path) -> bool:
    """Whether ``dest`` holds the entry's content where the loaders look: its extracted folder, the file
    itself, or a ``found_as`` match at any depth. Reads only: nothing is verified here."""
    if (dest / entry.extract.folder).is_dir() if entry.extract else (dest / entry.filename).is_file():
        return True
    return dest.is_dir() and any("__MACOSX" not in hit.parts for pattern in entry.found_as
                                 for hit in dest.rglob(pattern))


def _names(missing: list[RemoteFile], of: int) -> str:
    if len(missing) <= 2:
        return " and ".join(e.filename for e in missing)
    count = f"all {of}" if len(missing) == of else f"{len(missing)} of its {of}"
    return f"{count} files ({missing[0].filename}, ...)"


def _writable(dest: Path) -> bool:
    existing = dest.resolve()
    while not existing.exists():
        existing = existing.parent
    return os.access(existing, os.W_OK)


def _endpoint(url: str) -> tuple[str, int]:
    """Where a request for ``url`` first connects: its proxy when one applies, else its host."""
    parts = urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(parts.hostname or ""):
        parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


def reachable(endpoints: set[tuple[str, int]], timeout_s: float = PROBE_TIMEOUT_S) -> set[tuple[str, int]]:
    """The endpoints that accept a TCP connection, probed in parallel; done within ``timeout_s`` + 1 s
    (name resolution ignores the socket timeout, so a probe still resolving by then counts as failed)."""
    ok: set[tuple[str, int]] = set()

    def probe(endpoint: tuple[str, int]) -> None:
        try:
            socket.create_connection(endpoint, timeout=timeout_s).close()
            ok.add(endpoint)
        except OSError:
            pass

    threads = [threading.Thread(target=probe, args=(e,), daemon=True) for e in endpoints]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout_s + 1.0
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return set(ok)


@dataclass
class _Hosts:
    """The endpoints that answered the probe, less those a fetch has failed on since."""

    answered: set[tuple[str, int]]
    failed: set[tuple[str, int]]

    def fail(self, endpoints) -> None:
        for endpoint in endpoints:
            self.answered.discard(endpoint)
            self.failed.add(endpoint)


def _reachable_urls(entry: RemoteFile, up: set[tuple[str, int]]) -> tuple[str, ...]:
    return tuple(u for u in entry.urls() if _endpoint(u) in up)


def _fetch(job: _Pending, up: _Hosts, policy: TransferPolicy) -> Outcome:
    """Run the downloader on ``job``'s missing files, one at a time, from the URLs that answered the probe.

    A file that fails takes its hosts out of ``up``, so the files after it (here and in later datasets)
    skip them: a host that accepts connections but never answers costs one timeout, not one per file.
    """
    how = f"`make data-{job.dataset}`"
    to_download = {e.name for e in job.to_download()}
    problem = None       #: (what went wrong, what to do), the first one only
    for entry in job.missing:
        urls = _reachable_urls(entry, up.answered)
        if not urls and entry.name in to_download:
            hosts = ", ".join(sorted({urlsplit(u).hostname or u for u in entry.urls()}))
            if all(_endpoint(u) in up.failed for u in entry.urls()):
                problem = problem or (f"not tried after a failure on {hosts} in this run", f"Run {how}.")
            problem = problem or (f"cannot reach {hosts} (offline?)",
                                  f"Run {how} when online, or set {MIRROR_ENV} to a mirror.")
            continue
        try:
            Downloader([replace(entry, url=urls[0], mirrors=urls[1:]) if urls else entry], job.dest,
                       policy=policy, out=io.StringIO()).run()
        except (DownloadError, OSError) as exc:
            problem = problem or (f"fetching failed ({error_line(exc).removeprefix('error: ')})", f"Run {how}.")
            up.fail(_endpoint(u) for u in urls)
    if problem:
        of = len(benchmarks.DATASETS.get(job.dataset).files)
        still = _names([e for e in job.missing if not present(e, job.dest)], of)
        return Outcome(job.dataset, "missing",
                       f"{job.dataset}: {still} missing in {job.dest}; {problem[0]}. {problem[1]}")
    return Outcome(job.dataset, "fetched", f"{job.dataset}: fetched and verified {job.what} into {job.dest}")


def fetch_released_text(policy: TransferPolicy = QUICK) -> list[Outcome]:
    """One :class:`Outcome` per dataset with released text or gated files, in table order.

    Raises only on a broken table setting (``CREPE_DATASETS_OVERRIDE``); never for the network.
    """
    catalogue = benchmarks.DATASETS
    table = {e.name: e for e in catalogue.files()}
    done: dict[str, Outcome] = {}
    pending: list[_Pending] = []
    for dataset in catalogue.names:
        entries = catalogue.files_for(dataset)     # overrides and mirror applied; the roles are the table's own
        wanted = [e for e in entries if table[e.name].released_text or table[e.name].hub]
        if not wanted:
            continue
        dest = catalogue.get(dataset).dir()
        missing = [e for e in wanted if not present(e, dest)]
        what, how = _names(missing, len(entries)), f"`make data-{dataset}`"
        by_hand = plan.foreign(entries, dest)
        if not missing:
            done[dataset] = Outcome(dataset, "present", f"{dataset}: present in {dest}")
        elif any(table[e.name].hub for e in missing):
            done[dataset] = Outcome(dataset, "missing", (
                f"{dataset}: not in {dest}; it is gated on the Hugging Face hub, so `make all` does not fetch it: "
                f"accept its terms, then run `HF_TOKEN=hf_... make data-{dataset}` (see README)"))
        elif by_hand:
            done[dataset] = Outcome(dataset, "missing", (
                f"{dataset}: {what} missing in {dest}, a folder arranged by hand (it holds {', '.join(by_hand[:3])}"
                f"{', ...' if len(by_hand) > 3 else ''}), to which `make all` adds nothing. Run {how} "
                f"or set {catalogue.get(dataset).moved_by} to a new folder."))
        elif not _writable(dest):
            done[dataset] = Outcome(dataset, "missing", (
                f"{dataset}: {what} missing in {dest}, which is not writable. Run {how} after setting "
                f"{catalogue.get(dataset).moved_by} to a writable folder."))
        else:
            pending.append(_Pending(dataset, dest, missing, what))
    endpoints = {_endpoint(u) for job in pending for e in job.to_download() for u in e.urls()}
    up = _Hosts(reachable(endpoints) if endpoints else set(), set())
    for job in pending:
        done[job.dataset] = _fetch(job, up, policy)
    return [done[d] for d in catalogue.names if d in done]
