"""The download run: state → plan → transfer → verification → extraction, for every entry of a dataset."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable, TextIO

from .datasets import RemoteFile
from ..errors import DownloadError
from . import extraction, messages, plan
from .disk import check_space, discard, free_bytes, human
from .transport import Transport, TransferPolicy, part_meta_path, part_path
from .verification import Record, mismatch


class Downloader:
    """Downloads, verifies and extracts the files ``entries`` into ``dest``."""

    def __init__(self, entries: list[RemoteFile], dest: str | os.PathLike, *, token: str | None = None,
                 remove_archives: bool = False, policy: TransferPolicy = TransferPolicy(),
                 out: TextIO | None = None) -> None:
        self.entries = entries
        self.dest = Path(dest)
        self.token = token
        self.remove_archives = remove_archives
        self.out = out or sys.stdout
        self.record = Record(self.dest)
        self.transport = Transport(self.dest, entries, token, policy, self._say)

    def _check_dest(self) -> None:
        """The download folder, or the nearest of its parents that exists, must be a folder (missing ones are made)."""
        for place in (self.dest, *self.dest.parents):
            if place.exists():
                if not place.is_dir():
                    raise DownloadError(f"cannot download into {self.dest}: {place} is a file, not a folder. Pass "
                                        "a folder as --dest (dest=); a missing one is created")
                return

    def run(self, confirm: Callable[[], bool] | None = None) -> None:
        """Plan, check, then bring every entry to its final state. Raises :class:`DownloadError`."""
        self._check_dest()
        extraction.remove_leftovers(self.dest)
        states = {e.name: plan.state(e, self.dest, self.record) for e in self.entries}
        todo = [e for e in self.entries if states[e.name].kind not in ("extracted", "by-hand")]
        for line in plan.lines(self.entries, states, self.dest):
            self._say(line)
        if not todo:
            self._say("Nothing to do.")
            return
        to_fetch = [e for e in todo if states[e.name].needs_download]
        if any(e.hub for e in to_fetch) and not self.token:
            raise DownloadError(messages.gated(self.dest, self.entries, "No Hugging Face token found."))
        need = plan.bytes_needed(todo, states, self.dest)
        unknown = [e.filename for e in to_fetch if not (e.size or e.approx_size)]
        self._say(f"Disk: about {human(need)} needed for downloads and extraction"
                  + (f" plus {', '.join(unknown)} (size unknown until the server answers)" if unknown else "")
                  + f"; {human(free_bytes(self.dest))} free.")
        check_space(self.dest, need, "the downloads and their extraction")
        if confirm is not None and to_fetch and not confirm():
            raise DownloadError("Cancelled; nothing was downloaded.")
        for entry in todo:
            self._ensure(entry, states[entry.name])
        self._say(f"Done: {', '.join(e.filename for e in self.entries)} in {self.dest}")

    def _ensure(self, entry: RemoteFile, state: plan.State) -> None:
        final = self.dest / entry.filename
        archive = final if state.kind == "verified" else None
        if state.kind == "present":
            archive = self._check_existing(entry, final)
        if archive is None:
            archive = self._verify_and_commit(entry, *self.transport.fetch(entry))
        else:  # a leftover partial download of a file that is now complete
            discard(part_path(self.dest, entry), part_meta_path(self.dest, entry))
        if entry.extract:
            extraction.extract(entry, archive, self.dest, self.record.get(entry.filename) or {}, self._say)
            if self.remove_archives:
                archive.unlink()
                self._say(f"removed {archive} (extracted; its sha256 stays in {self.record.path.name})")

    def _verify_and_commit(self, entry: RemoteFile, url: str, part: Path, meta_path: Path, meta: dict) -> Path:
        problem = mismatch(entry, part, meta, self.record)
        final = self.dest / entry.filename
        if problem:
            discard(part, meta_path)
            raise DownloadError(
                f"{entry.filename} downloaded from {url} failed verification: {problem}\n"
                "The download was deleted. Rerun to fetch it again; if it fails again, the source no longer "
                "serves the pinned file: " + messages.by_hand(self.dest, entry))
        os.replace(part, final)
        meta_path.unlink(missing_ok=True)
        self.record.write(entry, final, url, meta)
        checked = "; ".join(meta["checked"]) or f"no published checksum: sha256 recorded in {self.record.path.name}"
        self._say(f"{entry.filename}: verified ({checked})")
        return final

    def _check_existing(self, entry: RemoteFile, final: Path) -> Path | None:
        """Verify a file found on disk; a bad one is moved to ``<name>.bad`` (None: download it)."""
        meta: dict = {}
        problem = mismatch(entry, final, meta, self.record)
        if problem:
            bad = final.with_name(final.name + ".bad")
            os.replace(final, bad)
            self._say(f"{final} failed verification ({problem}); moved to {bad.name}, downloading again")
            return None
        self.record.write(entry, final, None, meta)
        return final

    def _say(self, message: str) -> None:
        print(message, file=self.out, flush=True)
