"""What the downloader tells a user who has to act: place a file by hand, pin a revision, get a token."""
from __future__ import annotations

from pathlib import Path

from .datasets import OVERRIDE_ENV, RemoteFile


def by_hand(dest: Path, entry: RemoteFile) -> str:
    where = dest.resolve() / entry.filename
    also = (f" (or its content, extracted, as {dest.resolve() / entry.extract.folder}/)"
            if entry.extract else "")
    return f"place the file by hand at {where}{also} and rerun to verify it."


def revision_hint(entry: RemoteFile) -> str:
    if not (entry.hub and entry.revision):
        return ""
    return (f"\nIf the file is absent at the pinned revision {entry.revision}, point {OVERRIDE_ENV} at a "
            f'JSON file such as {{"{entry.name}": {{"revision": "main"}}}} (the commit used is recorded).')


def gated(dest: Path, entries: list[RemoteFile], reason: str) -> str:
    hub_entries = [e for e in entries if e.hub]
    page = hub_entries[0].url.split("/resolve/")[0] if hub_entries else "the dataset page"
    files = "\n".join(f"    {dest.resolve() / e.filename}"
                      + (f"  (or extracted: {dest.resolve() / e.extract.folder}/)" if e.extract else "")
                      for e in entries)
    return (f"{reason}\nThis dataset is gated on the Hugging Face hub. To download it:\n"
            f"  1. log in at https://huggingface.co, open {page} and accept the terms "
            "(\"Access repository\");\n"
            "  2. create a read token at https://huggingface.co/settings/tokens and export HF_TOKEN=hf_... "
            "(HUGGING_FACE_HUB_TOKEN or `huggingface-cli login` work too);\n"
            "  3. rerun this command.\n"
            f"Or place the files by hand and rerun:\n{files}")
