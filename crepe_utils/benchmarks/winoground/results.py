"""Winoground's results, read back: the summaries (one row per subset × metric) and per-example logs.

They are written by the one results path (:func:`crepe_utils.results.store.write_result`, scoring
rule ``winoground``) into ``<results>/<model>/winoground/``: ``summary.csv``
(:data:`crepe_utils.benchmarks.winoground.statistics.SUMMARY_COLUMNS`), ``per_query.csv.gz`` (one row per
example: the four similarities, flags, ties and tags) and ``manifest.json``. A damaged file is named in
a :class:`~crepe_utils.results.store.ResultsError` (one result) or an
:class:`~crepe_utils.results.store.UnreadableResultWarning` (many).
"""
from __future__ import annotations

import os
from pathlib import Path

from ...results import store
from .scoring import SCORE_COLUMNS
from .statistics import SUMMARY_COLUMNS
from ...lazy import lazy

pd = lazy("pandas")

SCORING = "winoground"

#: Columns :func:`load_results` adds to the summary rows, from each manifest.
PROVENANCE_COLUMNS = ["model", "architecture", "pretrained", "precision", "kind", "label", "result_dir"]


def _read_summary(handle) -> pd.DataFrame:
    frame = pd.read_csv(handle, dtype={"subset": "string", "breakdown": "string"}, keep_default_na=False,
                        na_values={c: [""] for c in SUMMARY_COLUMNS if c.startswith(("t_ci", "boot_ci", "score"))})
    return store.check_table("Winoground summary", frame, SUMMARY_COLUMNS, SUMMARY_COLUMNS[3:])


def load_results(root: str | os.PathLike | None) -> pd.DataFrame:
    """Every Winoground summary under ``root`` (any depth) as one table, with PROVENANCE_COLUMNS.

    Empty (with the columns) when there is none. A summary without its manifest is not a
    result and is ignored, as are hidden (temporary) folders; a result whose manifest or summary
    cannot be read is left out with an :class:`~crepe_utils.results.store.UnreadableResultWarning`.
    """
    columns = SUMMARY_COLUMNS + PROVENANCE_COLUMNS
    frames = []
    for directory, manifest, frame in store.read_results(root, _read_summary, SCORING):
        model = manifest["model"]
        frames.append(frame.assign(model=model.get("key"), architecture=model.get("architecture"),
                                   pretrained=model.get("pretrained"),
                                   precision=manifest.get("engine", {}).get("precision"),
                                   kind=manifest["kind"], label=manifest.get("label", ""),
                                   result_dir=str(directory)))
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]


def _read_per_example(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, keep_default_na=False, na_values={"why_hard": [""]},
                        dtype={"secondary_tag": "string", "tag": "string", "caption_0": "string",
                               "caption_1": "string", "why_hard": "string"})
    return store.check_table("per-example table", frame, ["id", *SCORE_COLUMNS], ["id", *SCORE_COLUMNS])


def load_per_example(directory: str | os.PathLike) -> pd.DataFrame:
    """The per-example table of one result folder; a ResultsError naming it when it is damaged."""
    return store.read_table(_read_per_example, Path(directory) / store.PER_QUERY)


def verify_tables(root: str | os.PathLike | None) -> None:
    """Warn (UnreadableResultWarning) for each per-example table under ``root`` that cannot be read (``make
    check`` calls each benchmark folder's ``results.verify_tables``)."""
    store.verify_tables(root, _read_per_example, SCORING)


def load_manifest(directory: str | os.PathLike) -> dict:
    """The manifest of one Winoground result folder."""
    return store.load_manifest(directory)
