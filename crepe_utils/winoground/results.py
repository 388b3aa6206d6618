"""Winoground results on disk: write one evaluation atomically, read any number back.

One evaluation lives in ``<results>/<model>/winoground/`` (:func:`crepe_utils.results.store.result_dir`):

    winoground_summary.csv        one row per subset × metric (statistics.SUMMARY_COLUMNS)
    winoground_per_example.csv    one row per example: the four similarities, flags, ties, tags
    winoground_manifest.json      provenance: model spec, data location and checksums, precision,
                                  tie counts, CI settings, ``kind``, environment

The file names carry a ``winoground_`` prefix so that CREPE's :func:`crepe_utils.results.store.load_results`
(which reads every ``manifest.json`` + ``summary.csv``) never mistakes them for CREPE results, even
in a shared results folder. The folder is written and read by CREPE's store
(:func:`crepe_utils.results.store.write_folder`, :func:`~crepe_utils.results.store.read_results`):
atomically as a whole, so a reader finds the previous result or the new one, never a mixture or a
half-written folder, and read with the same retries and manifest checks; a damaged file is named in a
:class:`~crepe_utils.results.store.ResultsError` (one result) or an
:class:`~crepe_utils.results.store.UnreadableResultWarning` (many). ``kind`` is ``"evaluated"`` (the real data), ``"toy"`` or
``"fixture"`` (synthetic data), as in :mod:`crepe_utils.results.store`.
"""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ..results import store
from ..results.store import check_columns, check_kind, result_dir
from .evaluation import PER_EXAMPLE_COLUMNS, Evaluation
from .scoring import SCORE_COLUMNS
from .statistics import SUMMARY_COLUMNS

BENCHMARK = "winoground"
SUMMARY_FILE = "winoground_summary.csv"
PER_EXAMPLE_FILE = "winoground_per_example.csv"
MANIFEST_FILE = "winoground_manifest.json"

#: Columns :func:`load_results` adds to the summary rows, from each manifest.
PROVENANCE_COLUMNS = ["model", "architecture", "pretrained", "precision", "kind", "label", "result_dir"]


def results_dir(root: str | os.PathLike, model_key: str) -> Path:
    """Where the Winoground result of the model ``model_key`` lives under ``root``."""
    return result_dir(root, model_key, BENCHMARK)


def write_results(directory: str | os.PathLike, evaluation: Evaluation, manifest: dict) -> Path:
    """Write the summary, the per-example table and ``manifest`` (which must say its ``kind``)."""
    check_kind(manifest.get("kind"))
    check_columns("summary", evaluation.summary, SUMMARY_COLUMNS)
    check_columns("per-example table", evaluation.per_example, PER_EXAMPLE_COLUMNS)

    def write_files(tmp: Path) -> None:
        evaluation.summary[SUMMARY_COLUMNS].to_csv(tmp / SUMMARY_FILE, index=False)
        # Full float precision: a reader can see which similarities are exactly equal.
        evaluation.per_example[PER_EXAMPLE_COLUMNS].to_csv(tmp / PER_EXAMPLE_FILE, index=False, float_format="%.17g")
    return store.write_folder(directory, {"benchmark": BENCHMARK, **manifest}, write_files, MANIFEST_FILE)


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
    for directory, manifest, frame in store.read_results(root, MANIFEST_FILE, SUMMARY_FILE, _read_summary):
        model = manifest.get("model", {})
        frames.append(frame.assign(model=model.get("key"), architecture=model.get("architecture"),
                                   pretrained=model.get("pretrained"),
                                   precision=manifest.get("engine", {}).get("precision"),
                                   kind=manifest.get("kind"), label=manifest.get("label", ""),
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
    return store.read_table(_read_per_example, Path(directory) / PER_EXAMPLE_FILE)


def verify_per_example(root: str | os.PathLike | None) -> None:
    """Warn (UnreadableResultWarning) for each per-example table under ``root`` that cannot be read."""
    store.verify_tables(root, MANIFEST_FILE, PER_EXAMPLE_FILE, _read_per_example)


def load_manifest(directory: str | os.PathLike) -> dict:
    """The manifest of one Winoground result folder."""
    return store.load_manifest(directory, MANIFEST_FILE)
