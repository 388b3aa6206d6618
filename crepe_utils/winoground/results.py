"""Winoground results on disk: write one evaluation atomically, read any number back.

One evaluation lives in ``<results>/<model>/winoground/`` (:func:`crepe_utils.results.store.result_dir`):

    winoground_summary.csv        one row per subset × metric (statistics.SUMMARY_COLUMNS)
    winoground_per_example.csv    one row per example: the four similarities, flags, ties, tags
    winoground_manifest.json      provenance: model spec, data location and checksums, precision,
                                  tie counts, CI settings, ``kind``, environment

The file names carry a ``winoground_`` prefix so that CREPE's :func:`crepe_utils.results.store.load_results`
(which reads every ``manifest.json`` + ``summary.csv``) never mistakes them for CREPE results, even
in a shared results folder. The folder is written atomically as a whole
(:func:`crepe_utils.atomic.atomic_directory`): a reader finds the previous result or the new one,
never a mixture or a half-written folder. ``kind`` is ``"evaluated"`` (the real data), ``"toy"`` or
``"fixture"`` (synthetic data), as in :mod:`crepe_utils.results.store`.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from ..atomic import atomic_directory, published_files, write_json
from ..results.store import KINDS, SCHEMA_VERSION, result_dir
from .evaluation import PER_EXAMPLE_COLUMNS, Evaluation
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
    directory = Path(directory)
    if manifest.get("kind") not in KINDS:
        raise ValueError(f"manifest 'kind' must be one of {KINDS}, got {manifest.get('kind')!r}")
    for name, frame, columns in (("summary", evaluation.summary, SUMMARY_COLUMNS),
                                 ("per-example table", evaluation.per_example, PER_EXAMPLE_COLUMNS)):
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise ValueError(f"{name} lacks columns {missing}")
    with atomic_directory(directory) as tmp:
        evaluation.summary[SUMMARY_COLUMNS].to_csv(tmp / SUMMARY_FILE, index=False)
        # Full float precision: a reader can see which similarities are exactly equal.
        evaluation.per_example[PER_EXAMPLE_COLUMNS].to_csv(tmp / PER_EXAMPLE_FILE, index=False, float_format="%.17g")
        write_json(tmp / MANIFEST_FILE, {"schema_version": SCHEMA_VERSION, "benchmark": BENCHMARK, **manifest})
    return directory


def _read_summary(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype={"subset": "string", "breakdown": "string"}, keep_default_na=False,
                       na_values={c: [""] for c in SUMMARY_COLUMNS if c.startswith(("t_ci", "boot_ci", "score"))})


def load_results(root: str | os.PathLike | None) -> pd.DataFrame:
    """Every Winoground summary under ``root`` (any depth) as one table, with PROVENANCE_COLUMNS.

    Empty (with the columns) when there is none. A summary without its manifest is not a
    result and is ignored, as are hidden (temporary) folders.
    """
    columns = SUMMARY_COLUMNS + PROVENANCE_COLUMNS
    if root is None or not Path(root).exists():
        return pd.DataFrame(columns=columns)
    frames = []
    for manifest_path in published_files(root, MANIFEST_FILE):
        summary_path = manifest_path.parent / SUMMARY_FILE
        if not summary_path.exists():
            continue
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        model = manifest.get("model", {})
        frame = _read_summary(summary_path)
        frame = frame.assign(model=model.get("key"), architecture=model.get("architecture"),
                             pretrained=model.get("pretrained"), precision=manifest.get("engine", {}).get("precision"),
                             kind=manifest.get("kind"), label=manifest.get("label", ""),
                             result_dir=str(manifest_path.parent))
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]


def load_per_example(directory: str | os.PathLike) -> pd.DataFrame:
    """The per-example table of one result folder."""
    return pd.read_csv(Path(directory) / PER_EXAMPLE_FILE, keep_default_na=False,
                       na_values={"why_hard": [""]},
                       dtype={"secondary_tag": "string", "tag": "string", "caption_0": "string",
                              "caption_1": "string", "why_hard": "string"})


def load_manifest(directory: str | os.PathLike) -> dict:
    return json.loads((Path(directory) / MANIFEST_FILE).read_text(encoding="utf-8"))
