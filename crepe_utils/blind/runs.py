"""Blind scorers run over a benchmark's retrieval queries, and the tables every benchmark's blind results make.

``BlindRun``             one benchmark's blind results: per query whether each scorer ranks the positive first
``run``                  score queries with scorers, into a :class:`BlindRun`
``recall_table``         Recall@1 per scorer and group, with chance, bootstrap intervals and the three tie rules
``length_explains``      per group and scorer: how many of its wins ``blind:length`` also makes
``blind_hard``           per query: no scorer of the blind-hard set ranks its positive first
``blind_hard_sizes``     the blind-hard subset's size per group

A blind run holds one row per query: its id, its file or subset (``group``), its candidate count, and
per scorer whether the positive ranks first with ties counted against it (the pessimistic rule);
beside it each scorer's ranks under both tie rules, so a table can say how many queries a tie decided.
Each benchmark's folder builds its runs from its files (its ``blind`` module).
"""
from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from .. import metrics
from .scorers import scorer
from .settings import BlindSettings
from .text import read_corpus
from ..lazy import lazy

pd = lazy("pandas")

#: The scorers notebook 07 runs (the classifiers, ten times slower, are ``blind:classifier`` models).
FAST_SCORERS = ("negation", "length", "wordfreq", "wordfreq-cased", "bigram", "bigram-cased", "bigram-mean")
#: The scorers whose wins define the blind-hard subset: fixed, so that adding a scorer does not move it.
BLIND_HARD_SCORERS = ("negation", "length", "wordfreq", "wordfreq-cased", "bigram", "bigram-cased")
#: The rule every scorer's wins are set against by :func:`length_explains`.
LENGTH = "length"
#: Bootstrap resamples of every blind Recall@1 interval: one count wherever a table shows one, so a scorer's
#: interval on a set is the same number in every notebook (its draws are seeded by scorer and group).
N_BOOT = 10_000

@dataclass(frozen=True)
class LengthCue:
    """Where a benchmark builds negatives whose length gives them away (:func:`length_explains` rows it marks):
    how a paragraph names those rows."""

    applies: Callable[[pd.DataFrame], pd.Series]  #: rows of a :func:`length_explains` table → whether they are it
    files: str                                     #: "the HN-Neg files"
    label: str                                     #: "HN-Neg"
    by: str                                        #: "on HN-Neg by"


@dataclass(frozen=True)
class BlindRun:
    """One benchmark's blind results: per query (rows) whether each scorer ranks the positive first."""

    benchmark: str
    per_query: pd.DataFrame      #: query_id, group, hn_type, [split,] complexity, n_candidates, a bool per scorer
    scorers: tuple[str, ...]
    seconds: float
    queries: tuple = ()          #: the queries themselves (texts), in row order
    ranks: dict = field(default_factory=dict)    #: scorer → :class:`~crepe_utils.metrics.Ranks`, in row order
    skipped: dict = field(default_factory=dict)  #: group → rows the loader skipped (counted, e.g. no negatives)


def scorer_ranks(queries, scorers=FAST_SCORERS, settings=BlindSettings()) -> dict[str, metrics.Ranks]:
    """Per scorer: the positive's rank in each query under both tie rules, and its ties."""
    offsets = np.r_[0, np.cumsum([len(q.candidates) for q in queries])]
    corpora, out = {}, {}
    for name in scorers:
        row = scorer(name)
        if row.view.name not in corpora:
            corpora[row.view.name] = read_corpus(queries, row.view)
        out[name] = metrics.ranks_from_flat(row.score_corpus(corpora[row.view.name], settings), offsets)
    return out


def run(benchmark: str, queries, frame: pd.DataFrame, scorers, settings, skipped=None) -> BlindRun:
    t0 = time.perf_counter()
    ranks = scorer_ranks(queries, scorers, settings)
    for name, r in ranks.items():
        frame[name] = r.pessimistic == 1
    return BlindRun(benchmark, frame, tuple(scorers), time.perf_counter() - t0, tuple(queries), ranks,
                    dict(skipped or {}))


def absent(folder: Path | None) -> bool:
    """Whether ``folder`` is not given, not a folder, or empty."""
    return folder is None or not folder.is_dir() or not any(folder.iterdir())


def _interval(k: int, n: int, n_boot: int, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap of a proportion k/n (resampling 0/1 values: a binomial draw), in %."""
    if n == 0:
        return float("nan"), float("nan")
    return metrics.percentile_interval(metrics.resample_proportion(k, n, n_boot, rng, scale=100.0))


def _group_keys(run: BlindRun) -> list[str]:
    return ["group", "hn_type"] + (["split"] if "split" in run.per_query else []) + ["complexity"]


def _tie_counts(run: BlindRun, name: str, rows: np.ndarray) -> tuple[float, float, int]:
    """(R@1 % with ties broken at random (expected, exact), R@1 % with ties counted for the positive, queries the
    tie rule decides: first only if ties went its way)."""
    ranks = run.ranks.get(name)
    if ranks is None:
        return float("nan"), float("nan"), -1
    sub = metrics.Ranks(ranks.pessimistic[rows], ranks.optimistic[rows], ranks.n_ties[rows])
    optimistic = sub.optimistic == 1
    return (metrics.expected_recall_at_k(sub, 1), 100.0 * float(optimistic.mean()),
            int((optimistic & (sub.pessimistic > 1)).sum()))


def recall_table(run: BlindRun, seed: int = 0) -> pd.DataFrame:
    """Per scorer and group: queries, chance R@1 (mean of 1/candidates), R@1 with ties counted against the
    positive (strict) and its 95% bootstrap interval (%, :data:`N_BOOT` resamples), R@1 expected if ties were
    broken at random (the rule the chance line assumes), R@1 if every tie went the positive's way (optimistic),
    and the queries a tie decided. Each interval's draws depend on its scorer and group only, not on which other
    scorers were run."""
    rows = []
    frame = run.per_query.assign(_row=np.arange(len(run.per_query)))
    keys = _group_keys(run)
    for values, g in frame.groupby(keys, sort=False, dropna=False):
        chance = 100.0 * float((1.0 / g["n_candidates"]).mean())
        where = dict(zip(keys, values))
        for name in run.scorers:
            k = int(g[name].sum())
            rng = np.random.default_rng([seed, zlib.crc32(f"{name}|{where['group']}".encode())])
            low, high = _interval(k, len(g), N_BOOT, rng)
            random_ties, optimistic, decided = _tie_counts(run, name, g["_row"].to_numpy())
            rows.append({"scorer": name, **where, "n_queries": len(g), "chance_r1": chance, "r1": 100.0 * k / len(g),
                         "ci_low": low, "ci_high": high, "r1_random_ties": random_ties, "r1_optimistic": optimistic,
                         "decided_by_tie": decided})
    return pd.DataFrame(rows)


def length_explains(run: BlindRun, scorers=None) -> pd.DataFrame:
    """Per group and scorer, how much of its Recall@1 the length rule alone could have produced: of the queries
    it ranks first (``wins``), those ``blind:length`` (*pick the shortest caption*) ranks first too, and their
    share (%); beside them the rule's own R@1 (the share any scorer would show if its wins ignored length) and
    the length-balanced queries (every candidate as long as the positive, where length says nothing)."""
    if LENGTH not in run.scorers:
        raise ValueError(f"length_explains needs blind:{LENGTH} among the run's scorers, got {run.scorers}")
    frame = run.per_query.assign(_balanced=run.ranks[LENGTH].n_ties == run.per_query["n_candidates"] - 1)
    rows = []
    for (group, hn_type), g in frame.groupby(["group", "hn_type"], sort=False):
        for name in [s for s in (scorers or run.scorers) if s != LENGTH]:
            wins = int(g[name].sum())
            also = int((g[name] & g[LENGTH]).sum())
            rows.append({"scorer": name, "group": group, "hn_type": hn_type, "n_queries": len(g),
                         "chance_r1": 100.0 * float((1.0 / g["n_candidates"]).mean()),
                         "r1": 100.0 * wins / len(g), "length_r1": 100.0 * float(g[LENGTH].mean()),
                         "wins": wins, "wins_also_length": also,
                         "length_share": 100.0 * also / wins if wins else float("nan"),
                         "n_length_balanced": int(g["_balanced"].sum())})
    return pd.DataFrame(rows)


def hard_scorers(run: BlindRun) -> list[str]:
    """The run's scorers that define its blind-hard subset: those of :data:`BLIND_HARD_SCORERS` it ran."""
    return [s for s in run.scorers if s in BLIND_HARD_SCORERS]


def blind_hard(run: BlindRun) -> pd.Series:
    """Per query id: True when no scorer of :func:`hard_scorers` ranks its positive first."""
    solved = run.per_query[hard_scorers(run)].any(axis=1)
    return pd.Series((~solved).to_numpy(), index=run.per_query["query_id"], name="blind_hard")


def blind_hard_sizes(run: BlindRun) -> pd.DataFrame:
    """Per file: queries, how many some scorer of :func:`hard_scorers` solves, and the blind-hard rest (count, %)."""
    frame = run.per_query.assign(blind_hard=blind_hard(run).to_numpy())
    out = frame.groupby(["group", "hn_type", "complexity"], sort=False, dropna=False).agg(
        n_queries=("blind_hard", "size"), blind_hard=("blind_hard", "sum")).reset_index()
    out["solved_blind"] = out["n_queries"] - out["blind_hard"]
    out["blind_hard_pct"] = 100.0 * out["blind_hard"] / out["n_queries"]
    return out[["group", "hn_type", "complexity", "n_queries", "solved_blind", "blind_hard", "blind_hard_pct"]]
