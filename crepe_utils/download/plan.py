"""What is on disk for each entry, and what a run will do about it (the plan printed before any byte moves)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .datasets import RemoteFile
from .disk import human, read_json
from .extraction import EXTRACT_PREFIX, MARKER_NAME
from .transport import part_path
from .verification import RECORD_NAME, Record, record_matches_pin


@dataclass(frozen=True)
class State:
    kind: str            #: extracted, by-hand, verified, present, partial, missing
    partial_bytes: int = 0

    @property
    def needs_download(self) -> bool:
        return self.kind in ("partial", "missing")


def _marker_matches(entry: RemoteFile, marker: dict, record: dict | None) -> bool:
    if entry.checksum is not None:
        return record_matches_pin(entry, marker)
    return record is None or record.get("sha256") == marker.get("sha256")


def state(entry: RemoteFile, dest: Path, record: Record) -> State:
    seen = record.get(entry.filename)
    if entry.extract:
        folder = dest / entry.extract.folder
        if folder.is_dir():
            marker = read_json(folder / MARKER_NAME)
            if not marker:
                return State("by-hand")
            if _marker_matches(entry, marker, seen):
                return State("extracted")
    final = dest / entry.filename
    if final.is_file():
        st = final.stat()
        if (seen and seen.get("size") == st.st_size and seen.get("mtime_ns") == st.st_mtime_ns
                and record_matches_pin(entry, seen)):
            return State("verified")
        return State("present")
    part = part_path(dest, entry)
    if part.is_file():
        return State("partial", part.stat().st_size)
    return State("missing")


def foreign(entries: list[RemoteFile], dest: Path) -> list[str]:
    """Names in ``dest`` that no run of this tool for ``entries`` put there (a folder arranged by hand).

    Ours: the record, each file and its ``.part``/``.part.json``/``.bad``, an extracted folder holding
    its marker, and leftovers of an extraction.
    """
    if not dest.is_dir():
        return []
    ours = {RECORD_NAME}
    for entry in entries:
        ours |= {entry.filename + suffix for suffix in ("", ".part", ".part.json", ".bad")}
        if entry.extract and (dest / entry.extract.folder / MARKER_NAME).is_file():
            ours.add(entry.extract.folder)
    return sorted(p.name for p in dest.iterdir() if p.name not in ours and not p.name.startswith(EXTRACT_PREFIX))


def bytes_needed(todo: list[RemoteFile], states: dict[str, State], dest: Path) -> int:
    """Bytes still to download plus bytes to extract (estimates where the size is not pinned)."""
    need = 0
    for entry in todo:
        final = dest / entry.filename
        estimate = entry.size or entry.approx_size or 0
        if states[entry.name].needs_download:
            need += max(estimate - states[entry.name].partial_bytes, 0)
        if entry.extract:
            need += final.stat().st_size if final.is_file() else estimate
    return need


def describe(entry: RemoteFile, st: State) -> str:
    folder = entry.extract.folder if entry.extract else None
    if st.kind == "extracted":
        return f"already extracted and verified in {folder}/ (skipped)"
    if st.kind == "by-hand":
        return (f"{folder}/ is present but was not extracted by this tool "
                "(left as it is, not verified; remove it to download)")
    size = human(entry.size or entry.approx_size)
    if entry.size is None and entry.approx_size is not None:
        size = "about " + size
    action = {
        "verified": "present and verified",
        "present": "present, to be verified",
        "partial": f"resume at {human(st.partial_bytes)} of {size}, from {entry.urls()[0]}",
        "missing": f"download ({size}) from {entry.urls()[0]}",
    }[st.kind]
    return action + (f", then extract to {folder}/" if folder else "")


def lines(entries: list[RemoteFile], states: dict[str, State], dest: Path) -> list[str]:
    out = [f"Plan for {dest.resolve()}:"]
    for entry in entries:
        out.append(f"  {entry.filename:<26} {entry.description}\n"
                   f"  {'':<26} {describe(entry, states[entry.name])}")
    return out
