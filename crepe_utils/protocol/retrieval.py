"""Image-to-text retrieval: rank each query's positive among its own candidates, the rule most benchmarks share.

One row per group the benchmark declares (a retrieval set; a pair of captions is a set of two) with every metric of :func:`crepe_utils.metrics.set_metrics`, the Recall@1
bootstrap interval and the counts of skipped, truncated and near-tie queries; one per-query row with
both ranks, the tie count and every candidate's score. Scores are float32 dot products of float32
embeddings, as the benchmarks' official code computes them; a tie is bit-equality, counted against the
model under the default (pessimistic) policy, as the strictest official evaluations count it.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from .. import metrics
from ..lazy import lazy
from ..results import store
from ..results.store import format_scores, load_results, per_query_columns, summary_columns
from .benchmark import ScoringRule
from .tables import Outcomes, Tables, key_text

pd = lazy("pandas")

SCORE_DTYPE = np.float32
PER_QUERY_CHUNK = 50_000


def evaluate(result, loaded, settings, model: str) -> Tables:
    """The retrieval tables of an engine (or blind scorer) result on ``loaded``'s queries."""
    ranks = metrics.ranks_from_flat(result.scores, result.offsets)
    summary = summary_table(result, loaded, ranks, settings.tie_policy, settings.n_boot)
    summary.insert(0, "model", model)
    return Tables(summary, summary_columns(loaded.groups), per_query_frames(result, ranks, loaded.groups),
                  per_query_columns(loaded.groups), "%.6g", "%.9g", n_scored=len(result.queries),
                  unscored=unscored_sets(summary, loaded.groups), row_key=tuple(loaded.groups))


def unscored_sets(summary: pd.DataFrame, groups: tuple[str, ...]) -> list[str]:
    """One description per summary row with no scored query (its set's queries were all skipped, or none read)."""
    out = []
    for row in summary[summary["n_queries"] == 0].to_dict("records") if len(summary) else ():
        named = " ".join(f"{g}={row[g]}" for g in groups if g != "benchmark" and not _empty(row[g]))
        skipped = int(row["n_skipped"])
        why = f"all {skipped} of its queries were skipped" if skipped else "none of its queries was read"
        out.append(f"set {named or 'of all queries'} has no scored query ({why}): its summary row has n_queries 0 "
                   "and no metric")
    return out


def _empty(value) -> bool:
    return value is None or value is pd.NA or value == "" or (isinstance(value, float) and np.isnan(value))


def _order(key: tuple) -> tuple:
    """Sort key of a group: None first, then numbers, then text (CREPE's sets: n = 4 … 12 in order)."""
    return tuple((0, 0) if v is None else (1, v) if isinstance(v, (int, np.integer)) else (2, str(v)) for v in key)


def _frame(columns: dict[str, list], groups: tuple[str, ...]) -> pd.DataFrame:
    """A table whose group columns of whole numbers (or none: None) are nullable integers, so that an absent
    value prints empty (CREPE's complexity); the others as they are."""
    out = {}
    for name, values in columns.items():
        whole = name in groups and all(v is None or (isinstance(v, (int, np.integer)) and not isinstance(v, bool))
                                       for v in values)
        out[name] = pd.array(values, dtype="Int64") if whole else values
    return pd.DataFrame(out)


def summary_table(result, loaded, ranks: metrics.Ranks, tie_policy: str, n_boot: int) -> pd.DataFrame:
    """One row per group (retrieval set) with every metric, the R@1 bootstrap interval and skip counts: every
    group ``loaded`` declares (:attr:`~crepe_utils.protocol.benchmark.Loaded.sets`) and every group a query is
    scored in; one with no scored query has ``n_queries`` 0, its skip count and no metric (NaN)."""
    groups = loaded.groups
    near = metrics.near_ties_from_flat(result.scores, result.offsets)
    skipped = Counter(tuple(getattr(q, g) for g in groups) for q, _ in result.skipped)
    issues = [i for i in loaded.issues if i.skipped]
    known = tuple(g for g in groups if all(hasattr(i, g) for i in issues))   # what an issue says of its set
    bad = Counter(tuple(getattr(i, g) for g in known) for i in issues)
    by_group: dict[tuple, list[int]] = {tuple(key): [] for key in loaded.sets}
    for i, q in enumerate(result.queries):
        by_group.setdefault(tuple(getattr(q, g) for g in groups), []).append(i)
    n_cand = np.diff(result.offsets)
    rows = []
    for key in sorted(by_group, key=_order):
        idx = np.array(by_group[key], dtype=np.int64)
        sub = metrics.Ranks(ranks.pessimistic[idx], ranks.optimistic[idx], ranks.n_ties[idx])
        row = dict(zip(groups, key))
        row.update(metrics.set_metrics(sub, n_cand[idx], tie_policy))
        hits = 100.0 * (sub.select(tie_policy) <= 1)
        row["r1_ci_low"], row["r1_ci_high"] = metrics.bootstrap_mean_ci(hits, n_boot=n_boot, seed=0)
        row["n_skipped"] = skipped[key] + bad.get(tuple(row[g] for g in known), 0)
        row["n_truncated_queries"] = int((result.truncated[idx] > 0).sum())
        row["n_near_tie_queries"] = int(near[idx].sum())
        rows.append(row)
    return _frame({c: [r[c] for r in rows] for c in rows[0]}, groups) if rows else pd.DataFrame(rows)


def per_query_frames(result, ranks: metrics.Ranks, groups: tuple[str, ...], chunk: int = PER_QUERY_CHUNK):
    """The per-query table in chunks of ``chunk`` rows (memory stays flat however many queries)."""
    for start in range(0, len(result.queries), chunk):
        qs = result.queries[start:start + chunk]
        idx = range(start, start + len(qs))
        per = [result.query_scores(i) for i in idx]
        frame = _frame({"query_id": [q.query_id for q in qs], **{g: [getattr(q, g) for q in qs] for g in groups}},
                       groups)
        frame["image_id"] = [q.image_id for q in qs]
        frame["n_candidates"] = [len(s) for s in per]
        frame["rank"] = ranks.pessimistic[start:start + len(qs)]
        frame["rank_optimistic"] = ranks.optimistic[start:start + len(qs)]
        frame["n_ties"] = ranks.n_ties[start:start + len(qs)]
        frame["score_positive"] = [float(s[0]) for s in per]
        frame["score_best_negative"] = [float(s[1:].max()) if len(s) > 1 else np.nan for s in per]
        frame["scores"] = [format_scores(s) for s in per]
        frame["n_truncated"] = result.truncated[start:start + len(qs)]
        yield frame

#: what a run prints of each row besides its groups
BRIEF = ["n_queries", "r1", "r1_ci_low", "r1_ci_high", "r1_optimistic", "n_tied_queries", "chance_r1"]


def brief(summary: pd.DataFrame, groups: tuple[str, ...]) -> pd.DataFrame:
    """The model, the groups that say something (not empty everywhere), and the headline metrics."""
    shown = [g for g in groups if g in summary and summary[g].astype("string").fillna("").ne("").any()]
    return summary[["model", *shown, *(c for c in BRIEF if c in summary)]]


def outcomes(directory, manifest: dict, tie_policy: str) -> Outcomes:
    """Per query of one retrieval result: its set (the manifest's groups) and whether its positive ranks first,
    a tie counted against the model (``pessimistic``: the log's ``rank``) or for it (``optimistic``)."""
    groups = store.groups_of(manifest)
    log = store.load_per_query(directory)
    path = f"{store.PER_QUERY} in {directory}"
    missing = [g for g in groups if g not in log.columns]
    if missing:
        raise store.ResultsError(f"{path} lacks the columns {missing} its manifest groups it by: the result is "
                                 "damaged; evaluate again or delete its folder")
    rank = log["rank" if tie_policy == "pessimistic" else "rank_optimistic"]
    if rank.isna().any() or log["query_id"].isna().any():
        raise store.ResultsError(f"{path} has a query without a rank or an id (data row "
                                 f"{int((rank.isna() | log['query_id'].isna()).to_numpy().argmax()) + 1}): the "
                                 "result is damaged; evaluate again or delete its folder")
    frame = pd.DataFrame({g: [key_text(v) for v in log[g]] for g in groups})
    frame["query_id"] = log["query_id"].astype(str).to_numpy()
    frame["correct"] = (rank <= 1).to_numpy()
    frame["pooled"] = True
    return Outcomes(tuple(groups), frame, "every query of every set")


def field_counts(summary: pd.DataFrame, manifest: dict, tie_policy: str | None, columns) -> list[dict]:
    """A retrieval result's k of n per value of ``columns.group`` (the rows ``columns.keep`` selects; several rows
    of one value summed), as the column ``<prefix>::<value>``. k is R@1 (``tie_policy``; None: as the run scored)
    times the queries, rounded."""
    group = columns.group
    if group not in summary.columns and not manifest.get("groups"):
        group = "hn_type"                 # written before its benchmark declared its groups: CREPE's field names it
    if group not in summary.columns or summary[group].isna().all():
        return []
    part = summary[columns.keep(summary) & (summary["n_queries"] > 0)]
    value = part[f"r1_{tie_policy}"] if f"r1_{tie_policy}" in part else part["r1"]
    part = part.assign(k=(value * part["n_queries"] / 100.0).round().astype(int))
    how, out = columns.pooling(manifest), []
    for name, rows in part.groupby(group, sort=False):
        pooled = f"{how} ({len(rows)} sets summed)" if len(rows) > 1 else how
        out.append({"column": f"{columns.prefix}::{name}", "k": int(rows["k"].sum()),
                    "n": int(rows["n_queries"].sum()), "sets": len(rows), "pooling": pooled or f"its {group} row"})
    return out


RETRIEVAL = ScoringRule(
    "retrieval", evaluate, SCORE_DTYPE, honours=frozenset({"tie_policy", "n_boot"}), brief=brief, read=load_results,
    outcomes=outcomes, field=field_counts,
    description="image-to-text Recall@K of the positive among the query's own candidates, ties by tie_policy")
