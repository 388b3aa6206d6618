"""The results format shared by the engine, the toy world and the notebooks.

A *results folder* holds one sub-folder per evaluated (model, benchmark[, training set]):

    <results>/<model>/<benchmark>[-<train_data>]/
        summary.csv        one tidy row per retrieval set (SUMMARY_COLUMNS)
        per_query.csv.gz   one row per query (PER_QUERY_COLUMNS): ranks, ties, scores
        manifest.json      provenance (MANIFEST_KEYS): code, data, model, device, precision, label

A retrieval set is one model × benchmark × HN type × split (systematicity: SC/UC) or complexity
(productivity: 4..12). Recall values are percentages. Every file is written atomically;
``load_results`` reads any folder of such sub-folders, however deep.

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

from .atomic import atomic_path, write_json

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


def write_result(directory: str | os.PathLike, summary: pd.DataFrame, per_query, manifest: dict) -> Path:
    """Write the three files of one result, each atomically; the manifest last.

    ``per_query`` is a DataFrame or an iterable of DataFrames (written chunk by chunk, so memory
    stays flat). A reader that finds a ``manifest.json`` therefore finds the complete summary and
    per-query files of the same run beside it.
    """
    directory = Path(directory)
    missing = [c for c in SUMMARY_COLUMNS if c not in summary.columns]
    if missing:
        raise ValueError(f"summary lacks columns {missing}")
    if manifest.get("kind") not in KINDS:
        raise ValueError(f"manifest 'kind' must be one of {KINDS}, got {manifest.get('kind')!r}")
    manifest = {"schema_version": SCHEMA_VERSION, **manifest}
    with atomic_path(directory / "summary.csv") as tmp:
        summary[SUMMARY_COLUMNS].to_csv(tmp, index=False, float_format="%.6g")
    with atomic_path(directory / "per_query.csv.gz") as tmp:
        # No name and mtime=0 in the gzip header keep the file identical across identical runs.
        with open(tmp, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz:
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
    write_json(directory / "manifest.json", manifest)
    return directory


def format_scores(scores: np.ndarray) -> str:
    """Candidate scores of one query as a space-separated string (positive first)."""
    return " ".join(f"{s:.9g}" for s in scores)   # 9 digits round-trip a float32 exactly


def parse_scores(text: str) -> np.ndarray:
    return np.array([float(s) for s in str(text).split()], dtype=float)


def load_results(root: str | os.PathLike | None) -> pd.DataFrame:
    """All summaries under ``root`` as one DataFrame (empty, with the columns, when none).

    Adds ``kind``, ``label`` and the model's ``display`` name from each manifest, and ``result_dir``. A summary without a
    manifest beside it is an interrupted write and is ignored.
    """
    columns = SUMMARY_COLUMNS + ["kind", "label", "display", "result_dir"]
    if root is None or not Path(root).exists():
        return pd.DataFrame(columns=columns)
    frames = []
    for manifest_path in sorted(Path(root).rglob("manifest.json")):
        summary_path = manifest_path.parent / "summary.csv"
        if not summary_path.exists():
            continue
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        df = pd.read_csv(summary_path, keep_default_na=True, dtype={"split": "string",
                                                                    "train_data": "string"})
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
