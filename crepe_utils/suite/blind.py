"""What a model gets without looking: blind scorers' results on each benchmark, as the tables notebook 07 shows.

``load_runs``            every benchmark's blind results, or per benchmark why there are none
``recall_table``         Recall@1 per scorer and file (or subset), with chance and bootstrap intervals
``blind_hard``           per query: no scorer ranks its positive first
``blind_hard_sizes``     the blind-hard subset's size per file
``models_on_blind_hard`` evaluated models' Recall@1 on all queries and on the blind-hard subset
``winoground_table``     text, image and group scores of each scorer, ties counted
``negate_artefacts``     how HN-Neg's negatives differ from their positives in form

A blind run holds one row per query: its id, its file or subset (``group``), its candidate count, and
per scorer whether the positive ranks first with ties counted against it (the pessimistic rule).
"""
from __future__ import annotations

import os
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .. import blind, metrics, paths
from ..benchmarks.crepe import queries as crepe_queries
from ..errors import CrepeError, error_line
from ..results import store
from ..benchmarks.sugarcrepe import SUBSETS, load_pairs
from ..benchmarks.winoground import blind as winoground_blind
from ..benchmarks.winoground.metadata import load_examples
from ..benchmarks.crepe.datasets import CREPE_CSVS
from ..benchmarks.sugarcrepe.datasets import SUGARCREPE_JSONS
from ..benchmarks.winoground.datasets import WINOGROUND_FILES

#: The scorers notebook 07 runs (the classifiers, ten times slower, are ``blind:classifier`` models).
FAST_SCORERS = ("negation", "length", "wordfreq", "wordfreq-cased", "bigram", "bigram-cased")
#: The scorers ``make check``'s blind claims need.
CLAIM_SCORERS = ("negation", "bigram", "bigram-cased")
HOW_TO_GET = {"crepe": "`make data-text` fetches CREPE's productivity CSVs",
              "sugarcrepe": "`make data-text` fetches SugarCrepe's JSONs",
              "winoground": "Winoground is gated: `make data-winoground` with `HF_TOKEN` (see README)"}


@dataclass(frozen=True)
class BlindRun:
    """One benchmark's blind results: per query (rows) whether each scorer ranks the positive first."""

    benchmark: str
    per_query: pd.DataFrame      #: query_id, group, hn_type, complexity, n_candidates, one bool column per scorer
    scorers: tuple[str, ...]
    seconds: float
    queries: tuple = ()          #: the queries themselves (texts), in row order


def correct_first(queries, scorers=FAST_SCORERS, settings=blind.BlindSettings()) -> dict[str, np.ndarray]:
    """Per scorer: for each query, whether its positive ranks first (ties count against it)."""
    offsets = np.r_[0, np.cumsum([len(q.candidates) for q in queries])]
    corpora, out = {}, {}
    for name in scorers:
        row = blind.scorer(name)
        if row.view.name not in corpora:
            corpora[row.view.name] = blind.read_corpus(queries, row.view)
        scores = row.score_corpus(corpora[row.view.name], settings)
        out[name] = metrics.ranks_from_flat(scores, offsets).pessimistic == 1
    return out


def _run(benchmark: str, queries, frame: pd.DataFrame, scorers, settings) -> BlindRun:
    t0 = time.perf_counter()
    for name, ok in correct_first(queries, scorers, settings).items():
        frame[name] = ok
    return BlindRun(benchmark, frame, tuple(scorers), time.perf_counter() - t0, tuple(queries))


def _absent(folder: Path | None) -> bool:
    return folder is None or not folder.is_dir() or not any(folder.iterdir())


def crepe_run(data_dir=None, scorers=FAST_SCORERS, settings=blind.BlindSettings()) -> BlindRun | str:
    """Blind results on CREPE's 27 productivity files, or why there are none."""
    folder = CREPE_CSVS.existing(data_dir)
    if _absent(folder):
        return f"No CREPE productivity CSVs found: {HOW_TO_GET['crepe']}."
    try:
        queries = list(crepe_queries.load_productivity(folder).queries)
    except CrepeError as exc:
        return f"CREPE's productivity CSVs cannot be read ({error_line(exc)}); {HOW_TO_GET['crepe']}."
    frame = pd.DataFrame({"query_id": [q.query_id for q in queries], "group": [f"{q.hn_type}-{q.complexity}"
                                                                              for q in queries],
                          "hn_type": [q.hn_type for q in queries], "complexity": [q.complexity for q in queries],
                          "n_candidates": [len(q.candidates) for q in queries]})
    return _run("crepe-productivity", queries, frame, scorers, settings)


def sugarcrepe_run(data_dir=None, scorers=FAST_SCORERS, settings=blind.BlindSettings()) -> BlindRun | str:
    """Blind results on SugarCrepe's seven subsets, or why there are none."""
    folder = SUGARCREPE_JSONS.dir(data_dir)
    if _absent(folder):
        return f"No SugarCrepe JSONs found: {HOW_TO_GET['sugarcrepe']}."
    try:
        pairs = list(load_pairs(folder))
    except CrepeError as exc:
        return f"SugarCrepe's JSONs cannot be read ({error_line(exc)}); {HOW_TO_GET['sugarcrepe']}."
    frame = pd.DataFrame({"query_id": [p.query_id for p in pairs], "group": [p.subset for p in pairs],
                          "hn_type": [p.subset for p in pairs], "complexity": pd.NA, "n_candidates": 2})
    return _run("sugarcrepe", pairs, frame, scorers, settings)


def winoground_table(data_dir=None, scorers=FAST_SCORERS, settings=blind.BlindSettings()) -> pd.DataFrame | str:
    """Per scorer and metric (text, image, group): the score (%) with ties counted, and the tied examples."""
    folder = WINOGROUND_FILES.dir(data_dir)
    if _absent(folder):
        return f"No Winoground data found: {HOW_TO_GET['winoground']}."
    try:
        frame, _ = load_examples(folder)
    except CrepeError as exc:
        return f"Winoground's files cannot be read ({error_line(exc)}); {HOW_TO_GET['winoground']}."
    examples = list(frame.itertuples(index=False))
    rows = []
    for name in scorers:
        _, summary = winoground_blind.evaluate(name, examples, settings)
        rows += [{"scorer": name, "metric": m, "score": v["score"], "ties": v["ties"], "examples": v["examples"]}
                 for m, v in summary.items()]
    return pd.DataFrame(rows)


def load_runs(crepe_dir=None, sugarcrepe_dir=None, winoground_dir=None, scorers=FAST_SCORERS,
              settings=blind.BlindSettings()) -> dict[str, BlindRun | pd.DataFrame | str]:
    """``crepe``, ``sugarcrepe`` (:class:`BlindRun`) and ``winoground`` (:func:`winoground_table`); a
    one-line message in place of each whose data are absent."""
    return {"crepe": crepe_run(crepe_dir, scorers, settings),
            "sugarcrepe": sugarcrepe_run(sugarcrepe_dir, scorers, settings),
            "winoground": winoground_table(winoground_dir, scorers, settings)}


def _interval(k: int, n: int, n_boot: int, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap of a proportion k/n (resampling 0/1 values: a binomial draw), in %."""
    if n == 0:
        return float("nan"), float("nan")
    draws = 100.0 * rng.binomial(n, k / n, size=n_boot) / n
    return float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975))


def recall_table(run: BlindRun, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per scorer and group: queries, chance R@1 (mean of 1/candidates), R@1 and its 95% bootstrap interval (%).
    Each interval's draws depend on its scorer and group only, not on which other scorers were run."""
    rows = []
    for (group, hn_type, complexity), g in run.per_query.groupby(["group", "hn_type", "complexity"], sort=False,
                                                                 dropna=False):
        chance = 100.0 * float((1.0 / g["n_candidates"]).mean())
        for name in run.scorers:
            k = int(g[name].sum())
            rng = np.random.default_rng([seed, zlib.crc32(f"{name}|{group}".encode())])
            low, high = _interval(k, len(g), n_boot, rng)
            rows.append({"scorer": name, "group": group, "hn_type": hn_type, "complexity": complexity,
                         "n_queries": len(g), "chance_r1": chance, "r1": 100.0 * k / len(g), "ci_low": low,
                         "ci_high": high})
    return pd.DataFrame(rows)


def blind_hard(run: BlindRun) -> pd.Series:
    """Per query id: True when no scorer of the run ranks its positive first."""
    solved = run.per_query[list(run.scorers)].any(axis=1)
    return pd.Series((~solved).to_numpy(), index=run.per_query["query_id"], name="blind_hard")


def blind_hard_sizes(run: BlindRun) -> pd.DataFrame:
    """Per file: queries, how many some scorer solves, and the blind-hard rest (count and %)."""
    frame = run.per_query.assign(blind_hard=blind_hard(run).to_numpy())
    out = frame.groupby(["group", "hn_type", "complexity"], sort=False, dropna=False).agg(
        n_queries=("blind_hard", "size"), blind_hard=("blind_hard", "sum")).reset_index()
    out["solved_blind"] = out["n_queries"] - out["blind_hard"]
    out["blind_hard_pct"] = 100.0 * out["blind_hard"] / out["n_queries"]
    return out[["group", "hn_type", "complexity", "n_queries", "solved_blind", "blind_hard", "blind_hard_pct"]]


def models_on_blind_hard(results_dir: str | os.PathLike | None, hard: pd.Series) -> pd.DataFrame:
    """Each evaluated productivity result under ``results_dir`` whose queries ``hard`` covers: per HN type
    and overall, its R@1 on all queries and on the blind-hard ones (%). Empty without such results."""
    columns = ["model", "display", "kind", "hn_type", "n_queries", "r1_all", "n_blind_hard", "r1_blind_hard"]
    summaries = store.load_results(results_dir)
    summaries = summaries[summaries["benchmark"] == "productivity"]
    rows = []
    for (model, display, kind, directory), _ in summaries.groupby(["model", "display", "kind", "result_dir"]):
        try:
            per_query = store.load_per_query(directory)
        except store.ResultsError as exc:
            store.warn_unreadable(exc, "its blind-hard comparison is left out")
            continue
        per_query = per_query[per_query["query_id"].isin(hard.index)]
        if per_query.empty:
            continue
        per_query = per_query.assign(ok=per_query["rank"] == 1, hard=per_query["query_id"].map(hard).astype(bool))
        for hn_type, g in [*per_query.groupby("hn_type", sort=False), ("all", per_query)]:
            rows.append({"model": model, "display": display, "kind": kind, "hn_type": hn_type,
                         "n_queries": len(g), "r1_all": 100.0 * float(g["ok"].mean()),
                         "n_blind_hard": int(g["hard"].sum()),
                         "r1_blind_hard": 100.0 * float(g.loc[g["hard"], "ok"].mean()) if g["hard"].any() else np.nan})
    return pd.DataFrame(rows, columns=columns)


def negate_artefacts(run: BlindRun) -> dict[str, int]:
    """Counts over CREPE's HN-Neg queries: all of them, those whose positive is lower-case, those whose every
    negative starts with a capital letter, and those with a negative holding ". ." (an empty clause)."""
    negate = [q for q in run.queries if q.hn_type == "negate"]
    return {"queries": len(negate),
            "positive_lower_case": sum(q.positive == q.positive.lower() for q in negate),
            "negatives_all_capitalised": sum(all(n[:1].isupper() for n in q.negatives) for q in negate),
            "negative_with_empty_clause": sum(any(". ." in n for n in q.negatives) for q in negate)}
