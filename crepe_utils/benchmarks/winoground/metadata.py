"""Winoground's text-only metadata: the examples' fields without images, and the why-hard labels.

* ``examples_text.tsv``: ``id, caption_0, caption_1, tag, secondary_tag, num_main_preds,
  collapsed_tag`` (the dataset's fields, tab-separated, quotes literal);
* ``why_hard_tags.tsv``: ``id, caption_0, caption_1, class``, the per-example labels of "Why is
  Winoground hard?" (no-tag, ambiguously-correct, visuallydifficult (so spelled in the file), unusual-text,
  unusual-image, non-compositional, complex-reasoning; labels are kept as the file spells them).

Both load into one table joined by id (:func:`load_text_metadata`); the captions must agree
between the files, so a label never attaches to another example. The same join adds the labels
to an evaluation of the real dataset (:func:`join_why_hard`).
"""
from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from ...errors import DataError
from ...textfile import read_text
from .data import (EXAMPLES_TEXT, MAX_LISTED, TEXT_FIELDS, BadRow, Example, parse_example, raise_bad_rows, sorted_unique_ids)
from .data import load_dataset
from ...lazy import lazy

pd = lazy("pandas")

WHY_HARD = "why_hard_tags.tsv"


def _read_tsv(path: Path, columns: tuple[str, ...]) -> list[tuple[int, dict]]:
    """Rows of a tab-separated file (quotes are literal text) as (line number, record)."""
    if not path.is_file():
        raise DataError(f"{path} does not exist: pass the folder that holds Winoground's text metadata "
                        "(examples_text.tsv, why_hard_tags.tsv).")
    text = read_text(path, "Winoground's metadata is UTF-8: re-save it as UTF-8, or download it again.")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(reader, None)
    if header is None or [h.strip() for h in header] != list(columns):
        raise DataError(f"{path}: header is {header}; expected the columns {list(columns)} (tab-separated).")
    rows, bad = [], []
    for line_no, values in enumerate(reader, start=2):
        if not values:
            continue
        if len(values) != len(columns):
            bad.append(f"{path.name}:{line_no}: {len(values)} fields; expected {len(columns)}")
            continue
        rows.append((line_no, dict(zip(columns, values))))
    raise_bad_rows(path, bad, f"tab-separated rows with {list(columns)}")
    return rows


def load_examples_text(path: str | os.PathLike) -> list[Example]:
    """The examples of ``examples_text.tsv`` (Winoground's fields without images), sorted by id."""
    path = Path(path)
    examples, bad = [], []
    for line_no, rec in _read_tsv(path, TEXT_FIELDS):
        try:
            examples.append(parse_example(rec, f"{path.name}:{line_no}"))
        except BadRow as exc:
            bad.append(f"{path.name}:{line_no}: {exc}")
    raise_bad_rows(path, bad, f"tab-separated rows with {list(TEXT_FIELDS)}")
    return sorted_unique_ids(examples, path)


def load_why_hard(path: str | os.PathLike) -> pd.DataFrame:
    """``why_hard_tags.tsv``: id, caption_0, caption_1 and ``why_hard`` (the file's ``class`` label)."""
    path = Path(path)
    rows, bad = [], []
    for line_no, rec in _read_tsv(path, ("id", "caption_0", "caption_1", "class")):
        if not rec["id"].strip().isdigit() or not rec["class"].strip():
            bad.append(f"{path.name}:{line_no}: id {rec['id']!r}, class {rec['class']!r}; expected an integer "
                       "id and a non-empty class")
            continue
        rows.append({"id": int(rec["id"]), "caption_0": rec["caption_0"], "caption_1": rec["caption_1"],
                     "why_hard": rec["class"].strip()})
    raise_bad_rows(path, bad, "tab-separated rows with id, caption_0, caption_1, class")
    out = pd.DataFrame(rows, columns=["id", "caption_0", "caption_1", "why_hard"])
    dupes = out["id"][out["id"].duplicated()].tolist()
    if dupes:
        raise DataError(f"{path}: duplicate ids {dupes[:MAX_LISTED]}; every id must appear once.")
    return out.sort_values("id", ignore_index=True)


def _words(text: str) -> str:
    return " ".join(text.split())


def join_why_hard(examples: pd.DataFrame, why_hard: pd.DataFrame, why_hard_path: str = WHY_HARD) -> pd.DataFrame:
    """``examples`` (id, caption_0, caption_1, ...) with a ``why_hard`` column, joined by id.

    Every example needs a label, and both captions must agree (up to whitespace) with the label
    file's, so that labels never attach to a different example.
    """
    labels = why_hard.set_index("id")
    missing = sorted(set(examples["id"]) - set(labels.index))
    if missing:
        raise DataError(f"{why_hard_path} has no row for example id(s) {missing[:MAX_LISTED]}"
                        f"{' ...' if len(missing) > MAX_LISTED else ''} ({len(missing)} in all). Use the label "
                        "file made for this version of Winoground, or evaluate without it (--why-hard none).")
    differ = [int(i) for i, c0, c1 in examples[["id", "caption_0", "caption_1"]].itertuples(index=False)
              if (_words(c0), _words(c1)) != (_words(labels.at[i, "caption_0"]), _words(labels.at[i, "caption_1"]))]
    if differ:
        raise DataError(f"{why_hard_path}: captions differ from the dataset's for id(s) {differ[:MAX_LISTED]}"
                        f"{' ...' if len(differ) > MAX_LISTED else ''} ({len(differ)} in all): the labels belong to "
                        "other examples. Use the matching label file, or evaluate without it (--why-hard none).")
    return examples.assign(why_hard=examples["id"].map(labels["why_hard"]))


def examples_frame(examples: list[Example]) -> pd.DataFrame:
    """The text fields of ``examples`` as a DataFrame (one row per example, in the given order)."""
    return pd.DataFrame([ex.as_row() for ex in examples], columns=list(TEXT_FIELDS))


def load_text_metadata(directory: str | os.PathLike) -> pd.DataFrame:
    """``examples_text.tsv`` joined by id with ``why_hard_tags.tsv`` (column ``why_hard``)."""
    directory = Path(directory)
    frame = examples_frame(load_examples_text(directory / EXAMPLES_TEXT))
    return join_why_hard(frame, load_why_hard(directory / WHY_HARD), str(directory / WHY_HARD))


def load_examples(directory: str | os.PathLike) -> tuple[pd.DataFrame | None, str | None]:
    """Winoground's examples for the text checks: (frame, where they came from); (None, None) when
    ``directory`` does not exist.

    The full dataset when ``directory`` holds one in any published layout, else its text-only
    metadata (``examples_text.tsv``). A folder holding neither is a :class:`DataError` (a partial
    or damaged copy must not pass for an absent one).
    """
    directory = Path(directory)
    if not directory.is_dir():
        return None, None
    try:
        data = load_dataset(directory)
        return data.frame(), f"the local dataset ({data.layout} layout, {data.root})"
    except DataError:
        if (directory / EXAMPLES_TEXT).is_file():
            return load_text_metadata(directory), f"the text metadata in {directory}"
        raise
