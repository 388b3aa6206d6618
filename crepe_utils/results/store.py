"""The results format shared by the engine, the toy world and the notebooks.

A *results folder* holds one sub-folder per evaluated (model, benchmark[, training set]):

    <results>/<model>/<benchmark>[-<train_data>]/
        summary.csv        one tidy row per retrieval set (SUMMARY_COLUMNS)
        per_query.csv.gz   one row per query (PER_QUERY_COLUMNS): ranks, ties, scores
        manifest.json      provenance (MANIFEST_KEYS): code, data, model, device, precision, label

A retrieval set is one model × benchmark × HN type × split (systematicity: SC/UC) or complexity
(productivity: 4..12). Recall values are percentages. A result folder is written atomically as
a whole; ``load_results`` reads any folder of such sub-folders, however deep.

``kind`` in the manifest (and the ``kind`` column of :func:`load_results`) says what the numbers
are: ``"evaluated"`` (the real CREPE data), ``"toy"`` (the procedurally generated toy world) or
``"fixture"`` (synthetic test data). Figures and tables label anything not ``"evaluated"``.
"""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..atomic import atomic_directory, published_files, write_json

SCHEMA_VERSION = 1
KINDS = ("evaluated", "toy", "fixture")

SUMMARY_COLUMNS = [
    "model", "benchmark", "train_data", "hn_type", "split", "complexity",
    "n_queries", "n_candidates", "chance_r1",
    "r1", "r3", "r5", "r10", "r1_optimistic", "r1_pessimistic", "r1_ci_low", "r1_ci_high",
    "mean_rank", "median_rank", "n_tied_queries", "tie_policy", "n_skipped", "n_truncated_queries",
    "n_near_tie_queries",
]

PER_QUERY_COLUMNS = [
    "query_id", "benchmark", "train_data", "hn_type", "split", "complexity", "image_id",
    "n_candidates", "rank", "rank_optimistic", "n_ties", "score_positive", "score_best_negative",
    "scores", "n_truncated",
]

MANIFEST_KEYS = ("schema_version", "kind", "label", "model", "benchmark", "data", "engine",
                 "environment", "created")


def result_dir(root: str | os.PathLike, model: str, benchmark: str, train_data: str | None = None) -> Path:
    """Where one (model, benchmark[, training set]) result lives under ``root``."""
    name = benchmark if not train_data else f"{benchmark}-{train_data}"
    return Path(root) / _safe(model) / name


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.+" else "_" for c in name)


def check_kind(kind) -> None:
    """Raise unless ``kind`` is one of :data:`KINDS` (what a manifest's ``kind`` may say)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")


def write_result(directory: str | os.PathLike, summary: pd.DataFrame, per_query, manifest: dict) -> Path:
    """Write the three files of one result as one folder, atomically.

    ``per_query`` is a DataFrame or an iterable of DataFrames (written chunk by chunk, so memory
    stays flat). The files are written into a hidden temporary sibling of ``directory`` that then
    replaces it as a whole (:func:`crepe_utils.atomic.atomic_directory`): a reader finds either
    the previous complete result or the new one, never a mixture; a failed or killed write
    leaves the previous result as it was.
    """
    directory = Path(directory)
    missing = [c for c in SUMMARY_COLUMNS if c not in summary.columns]
    if missing:
        raise ValueError(f"summary lacks columns {missing}")
    check_kind(manifest.get("kind"))
    manifest = {"schema_version": SCHEMA_VERSION, **manifest}
    with atomic_directory(directory) as tmp:
        summary[SUMMARY_COLUMNS].to_csv(tmp / "summary.csv", index=False, float_format="%.6g")
        # No name and mtime=0 in the gzip header keep the file identical across identical runs.
        with open(tmp / "per_query.csv.gz", "wb") as raw, \
                gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz:
            frames = [per_query] if isinstance(per_query, pd.DataFrame) else per_query
            header = True
            for frame in frames:
                missing = [c for c in PER_QUERY_COLUMNS if c not in frame.columns]
                if missing:
                    raise ValueError(f"per-query table lacks columns {missing}")
                gz.write(frame[PER_QUERY_COLUMNS].to_csv(index=False, header=header, float_format="%.9g").encode())
                header = False
            if header:  # no rows at all: still write the header
                gz.write((",".join(PER_QUERY_COLUMNS) + "\n").encode())
        write_json(tmp / "manifest.json", manifest)
    return directory


def format_scores(scores: np.ndarray) -> str:
    """Candidate scores of one query as a space-separated string (positive first)."""
    return " ".join(f"{s:.9g}" for s in scores)   # 9 digits round-trip a float32 exactly


def parse_scores(text: str) -> np.ndarray:
    return np.array([float(s) for s in str(text).split()], dtype=float)


def load_results(root: str | os.PathLike | None) -> pd.DataFrame:
    """All summaries under ``root`` as one DataFrame (empty, with the columns, when none).

    Adds ``kind``, ``label`` and the model's ``display`` name from each manifest, and ``result_dir``. A summary without a
    manifest beside it is not a result and is ignored, as are hidden (temporary) folders.
    """
    columns = SUMMARY_COLUMNS + ["kind", "label", "display", "result_dir"]
    if root is None or not Path(root).exists():
        return pd.DataFrame(columns=columns)
    frames = []
    for manifest_path in published_files(root, "manifest.json"):
        read = _read_result(manifest_path.parent)
        if read is None:
            continue
        manifest, df = read
        df["kind"] = manifest.get("kind", "evaluated")
        df["label"] = manifest.get("label", "")
        df["display"] = manifest.get("model", {}).get("display") or df["model"]
        df["result_dir"] = str(manifest_path.parent)
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=columns)
    out = pd.concat(frames, ignore_index=True)
    out["complexity"] = out["complexity"].astype("Int64")
    return out.reindex(columns=columns)   # results written before a column existed read as NaN there


def _read_result(directory: Path, attempts: int = 3) -> tuple[dict, pd.DataFrame] | None:
    """(manifest, summary) of one result folder, both read from the same folder.

    The folder is opened once and both files are read through that handle, so a folder being
    replaced at the same moment cannot pair one run's manifest with another's summary (a
    published folder is never modified, only replaced whole). If the folder disappears while it
    is read, it is opened again. None when there is no summary.
    """
    if os.open not in os.supports_dir_fd or not hasattr(os, "O_DIRECTORY"):
        opener_for = lambda fd: None  # noqa: E731 - no folder handles here: plain paths
    else:
        def opener_for(fd):
            return lambda name, flags: os.open(name, flags, dir_fd=fd)
    for attempt in range(attempts):
        try:
            fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except FileNotFoundError:
            return None
        try:
            opener = opener_for(fd)
            base = Path("") if opener else directory
            with open(base / "manifest.json", encoding="utf-8", opener=opener) as fh:
                manifest = json.load(fh)
            with open(base / "summary.csv", "rb", opener=opener) as fh:
                df = pd.read_csv(fh, keep_default_na=True, dtype={"split": "string", "train_data": "string"})
            return manifest, df
        except FileNotFoundError:
            if attempt == attempts - 1 or not (directory / "manifest.json").exists():
                return None
        finally:
            os.close(fd)
    return None


def load_per_query(directory: str | os.PathLike) -> pd.DataFrame:
    """The per-query table of one result folder."""
    return pd.read_csv(Path(directory) / "per_query.csv.gz",
                       dtype={"split": "string", "train_data": "string", "image_id": "string"})


def load_manifest(directory: str | os.PathLike) -> dict:
    return json.loads((Path(directory) / "manifest.json").read_text(encoding="utf-8"))


def describe_kind(df: pd.DataFrame) -> str:
    """One sentence saying what evaluated numbers a table holds (for notebook prose)."""
    if df.empty:
        return "No evaluated results were found: the tables and figures show published numbers only."
    kinds = sorted(set(df["kind"]))
    labels = sorted({lbl for lbl in df["label"] if lbl})
    parts = {"evaluated": "evaluated on the real CREPE data",
             "toy": "computed on the toy world (synthetic images; not comparable to the paper)",
             "fixture": "computed on synthetic test fixtures (not a result)"}
    text = "; ".join(parts[k] for k in kinds)
    models = df["model"].nunique()
    return f"Evaluated results for {models} model(s), {text}" + (f" [{', '.join(labels)}]." if labels else ".")
