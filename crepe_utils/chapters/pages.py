"""The notebooks as pages: each one's navigation label and the question it answers, read from the notebook itself.

Every notebook of ``notebooks/`` carries ``metadata.companion = {"nav": label, "question": question}`` (and a
``title`` where the map names it at more length), so a
notebook added to the folder is a page of the site and a row of the teaching notebook's map with nothing else
to register. A notebook without them is listed under its file name, with no question.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..paths import PROJECT_ROOT

FOLDER = PROJECT_ROOT / "notebooks"


@dataclass(frozen=True)
class NotebookPage:
    stem: str
    label: str       # in the site's navigation
    title: str       # in the teaching notebook's map (the label unless the notebook names a longer one)
    question: str


def notebook_pages(folder: str | Path = FOLDER) -> tuple[NotebookPage, ...]:
    """Every notebook in ``folder``, in file-name order."""
    pages = []
    for path in sorted(Path(folder).glob("*.ipynb")):
        meta = (json.loads(path.read_text(encoding="utf-8")).get("metadata") or {}).get("companion") or {}
        label = _text(meta.get("nav")) or path.stem.replace("_", " ")
        pages.append(NotebookPage(path.stem, label, _text(meta.get("title")) or label, _text(meta.get("question"))))
    return tuple(pages)


def _text(value) -> str:
    return value if isinstance(value, str) else ""
