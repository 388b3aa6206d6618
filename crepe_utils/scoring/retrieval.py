"""Image-to-text retrieval: rank each query's positive among its own candidates (CREPE, SugarCrepe).

One row per retrieval set (a model × benchmark × HN type × split or complexity; SugarCrepe's subsets
are its HN types) with every metric of :func:`crepe_utils.metrics.set_metrics`, the Recall@1
bootstrap interval and the counts of skipped, truncated and near-tie queries; one per-query row with
both ranks, the tie count and every candidate's score. Scores are float32 dot products of float32
embeddings, as the official CREPE code computes them; a tie is bit-equality, counted against the
model under the default (pessimistic) policy, as SugarCrepe's own evaluation counts it.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from .. import metrics
from ..results.store import PER_QUERY_COLUMNS, SUMMARY_COLUMNS, format_scores
from .tables import Tables

SCORE_DTYPE = np.float32
PER_QUERY_CHUNK = 50_000


def evaluate(result, loaded, settings, model: str) -> Tables:
    """The retrieval tables of an engine (or blind scorer) result on ``loaded``'s queries."""
    ranks = metrics.ranks_from_flat(result.scores, result.offsets)
    summary = summary_table(result, loaded, ranks, settings.tie_policy, settings.n_boot)
    summary.insert(0, "model", model)
    return Tables(summary, SUMMARY_COLUMNS, per_query_frames(result, ranks), PER_QUERY_COLUMNS, "%.6g", "%.9g",
                  n_scored=len(result.queries), unscored=unscored_sets(summary))


def unscored_sets(summary: pd.DataFrame) -> list[str]:
    """One description per summary row with no scored query (its set's queries were all skipped, or none read)."""
    out = []
    for row in summary[summary["n_queries"] == 0].to_dict("records"):
        parts = [str(row["train_data"] or ""), str(row["hn_type"]), str(row["split"] or ""),
                 "" if pd.isna(row["complexity"]) else f"n={row['complexity']}"]
        skipped = int(row["n_skipped"])
        why = f"all {skipped} of its queries were skipped" if skipped else "none of its queries was read"
        out.append(f"set {' '.join(p for p in parts if p)} has no scored query ({why}): its summary row has "
                   "n_queries 0 and no metric")
    return out


def summary_table(result, loaded, ranks: metrics.Ranks, tie_policy: str, n_boot: int) -> pd.DataFrame:
    """One row per retrieval set with every metric, the R@1 bootstrap interval and skip counts: every set
    ``loaded`` declares (:attr:`~crepe_utils.benchmarks.Loaded.sets`) and every set a query is scored in; a set
    with no scored query has ``n_queries`` 0, its skip count and no metric (NaN)."""
    near = metrics.near_ties_from_flat(result.scores, result.offsets)
    skipped = Counter((q.hn_type, q.split, q.complexity) for q, _ in result.skipped)
    bad = Counter(_set_of_issue(i) for i in loaded.issues if i.skipped)
    groups: dict[tuple, list[int]] = {key: [] for key in getattr(loaded, "sets", ())}   # a bare query set: none
    for i, q in enumerate(result.queries):
        groups.setdefault((q.benchmark, q.train_data, q.hn_type, q.split, q.complexity), []).append(i)
    n_cand = np.diff(result.offsets)
    rows = []
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2], k[3], -1 if k[4] is None else k[4])):
        idx = np.array(groups[key], dtype=np.int64)
        benchmark, train_data, hn_type, split, complexity = key
        sub = metrics.Ranks(ranks.pessimistic[idx], ranks.optimistic[idx], ranks.n_ties[idx])
        row = {"benchmark": benchmark, "train_data": train_data, "hn_type": hn_type, "split": split,
               "complexity": complexity}
        row.update(metrics.set_metrics(sub, n_cand[idx], tie_policy))
        hits = 100.0 * (sub.select(tie_policy) <= 1)
        row["r1_ci_low"], row["r1_ci_high"] = metrics.bootstrap_mean_ci(hits, n_boot=n_boot, seed=0)
        row["n_skipped"] = skipped[(hn_type, split, complexity)] + bad.get((hn_type, split, complexity), 0)
        row["n_truncated_queries"] = int((result.truncated[idx] > 0).sum())
        row["n_near_tie_queries"] = int(near[idx].sum())
        rows.append(row)
    out = pd.DataFrame(rows)
    if not out.empty:
        out["complexity"] = out["complexity"].astype("Int64")
    return out


def _set_of_issue(issue) -> tuple:
    """(hn_type, split, complexity) of a loader issue: the set its file feeds."""
    return issue.hn_type, issue.split, issue.complexity


def per_query_frames(result, ranks: metrics.Ranks, chunk: int = PER_QUERY_CHUNK):
    """The per-query table in chunks of ``chunk`` rows (memory stays flat however many queries)."""
    for start in range(0, len(result.queries), chunk):
        qs = result.queries[start:start + chunk]
        idx = range(start, start + len(qs))
        per = [result.query_scores(i) for i in idx]
        yield pd.DataFrame({
            "query_id": [q.query_id for q in qs], "benchmark": [q.benchmark for q in qs],
            "train_data": [q.train_data for q in qs], "hn_type": [q.hn_type for q in qs],
            "split": [q.split for q in qs], "complexity": pd.array([q.complexity for q in qs], dtype="Int64"),
            "image_id": [q.image_id for q in qs], "n_candidates": [len(s) for s in per],
            "rank": ranks.pessimistic[start:start + len(qs)], "rank_optimistic": ranks.optimistic[start:start + len(qs)],
            "n_ties": ranks.n_ties[start:start + len(qs)],
            "score_positive": [float(s[0]) for s in per],
            "score_best_negative": [float(s[1:].max()) if len(s) > 1 else np.nan for s in per],
            "scores": [format_scores(s) for s in per], "n_truncated": result.truncated[start:start + len(qs)],
        })
