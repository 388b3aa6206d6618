"""CREPE without looking: blind scorers on its productivity files and its systematicity splits (notebooks 02, 06,
07), and what its negatives give away in form.

``run``                  blind results on the 27 productivity files, or why there are none
``systematicity_run``    one training set's systematicity files (SC and UC), e.g. the toy world's
``systematicity_table``  scorer (and evaluated model) × HN type × SC/UC Recall@1, tidy, for 02, 06 and 07
``conjunctions``         HN-Comp positives and negatives holding "and"
``models_on_blind_hard`` evaluated models' Recall@1 on all queries and on the blind-hard subset
``negate_artefacts``     how HN-Neg's negatives differ from their positives in form
``field_counts``         a productivity run's k of N per HN type, as vl_compo's table pools them
``claims``               a one-line rule beats every published model on HN-Neg; the best cross-fitted scorer
                         beats chance on every productivity file
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ... import blind
from ...blind.runs import FAST_SCORERS, BlindRun, absent, recall_table, run as run_blind
from ...claims.base import FAIL, NEEDS, PASS, Check
from ...errors import CrepeError, error_line
from ...results import store
from . import queries as crepe_queries, reported
from .datasets import CREPE_CSVS
from ...lazy import lazy

pd = lazy("pandas")

#: The scorers ``make check``'s blind claims need on CREPE.
CLAIM_SCORERS = ("negation", "bigram", "bigram-cased")
HOW_TO_GET = "`make data-crepe` fetches CREPE's productivity CSVs"
HOW_TO_GET_SYSTEMATICITY = "`make data-crepe` fetches CREPE's systematicity CSVs"
#: what its blind claims read, and their group in ``make check``
WHAT, GROUP = "crepe", "blind"
RULE = "negation"
ENDPOINTS = (4, 12)


def run(data_dir=None, scorers=FAST_SCORERS, settings=blind.BlindSettings()) -> BlindRun | str:
    """Blind results on CREPE's 27 productivity files, or why there are none."""
    folder = CREPE_CSVS.existing(data_dir)
    if absent(folder):
        return f"No CREPE productivity CSVs found: {HOW_TO_GET}."
    try:
        queries = list(crepe_queries.load_productivity(folder).queries)
    except CrepeError as exc:
        return f"CREPE's productivity CSVs cannot be read ({error_line(exc)}); {HOW_TO_GET}."
    frame = pd.DataFrame({"query_id": [q.query_id for q in queries], "group": [f"{q.hn_type}-{q.complexity}"
                                                                              for q in queries],
                          "hn_type": [q.hn_type for q in queries], "complexity": [q.complexity for q in queries],
                          "n_candidates": [len(q.candidates) for q in queries]})
    return run_blind("crepe-productivity", queries, frame, scorers, settings)


def _systematicity_present(folder: Path | None, train_data: str) -> bool:
    """Whether both of ``train_data``'s systematicity files (SC, UC) lie somewhere under ``folder``."""
    if absent(folder):
        return False
    names = [crepe_queries.systematicity_file_name(split, train_data) for split in crepe_queries.SYST_SPLITS]
    return all(any("__MACOSX" not in p.parts for p in folder.rglob(n)) for n in names)


def systematicity_run(data_dir=None, train_data: str = "laion", scorers=FAST_SCORERS,
                      settings=blind.BlindSettings()) -> BlindRun | str:
    """Blind results on one training set's systematicity files (SC and UC, each HN-Atom, HN-Comp and combined:
    one query list, cross-fitted by image), or why there are none. ``train_data``: cc12m, yfcc, laion, or the
    toy world's ``toy``. Rows without negatives are skipped and counted, as the evaluation does."""
    folder = CREPE_CSVS.existing(data_dir)
    what = f"CREPE's systematicity CSVs for {train_data}"
    if not _systematicity_present(folder, train_data):
        return f"No {what} found: {HOW_TO_GET_SYSTEMATICITY}."
    try:
        qs = crepe_queries.load_systematicity(folder, train_data, crepe_queries.SYST_HN_TYPES)
    except CrepeError as exc:
        return f"{what} cannot be read ({error_line(exc)}); {HOW_TO_GET_SYSTEMATICITY}."
    queries = qs.queries
    frame = pd.DataFrame({"query_id": [q.query_id for q in queries],
                          "group": [f"{q.hn_type}-{q.split}" for q in queries],
                          "hn_type": [q.hn_type for q in queries], "split": [q.split for q in queries],
                          "complexity": pd.NA, "n_candidates": [len(q.candidates) for q in queries]})
    skipped: dict[str, int] = {}
    for issue in qs.issues:
        if issue.skipped:
            skipped[f"{issue.hn_type}-{issue.split}"] = skipped.get(f"{issue.hn_type}-{issue.split}", 0) + 1
    return run_blind(f"crepe-systematicity-{train_data}", queries, frame, scorers, settings, skipped)


def systematicity_missing(data_dir=None, train_data=crepe_queries.SYST_TRAIN_DATA) -> str | None:
    """A one-line message when none of ``train_data``'s systematicity files are present, else None."""
    names = (train_data,) if isinstance(train_data, str) else tuple(train_data)
    if any(_systematicity_present(CREPE_CSVS.existing(data_dir), n) for n in names):
        return None
    return f"No CREPE systematicity CSVs found for {', '.join(names)}: {HOW_TO_GET_SYSTEMATICITY}."


SYSTEMATICITY_COLUMNS = ["train_data", "model", "display", "kind", "hn_type", "split", "n_queries", "n_skipped",
                         "chance_r1", "r1", "ci_low", "ci_high", "r1_random_ties", "r1_optimistic", "decided_by_tie"]


def _models_long(models: pd.DataFrame) -> pd.DataFrame:
    """Evaluated models' rows (:func:`crepe_utils.benchmarks.crepe.analysis.systematicity_evaluated`) in the tidy layout."""
    rows = [{"train_data": m["train_data"], "model": m["model"], "display": m["display"], "kind": m["kind"],
             "hn_type": m["hn_type"], "split": split, "n_queries": m[f"n_{split}"], "n_skipped": pd.NA,
             "chance_r1": m["chance"], "r1": m[split], "ci_low": m[f"{split}_ci_low"], "ci_high": m[f"{split}_ci_high"],
             "r1_random_ties": m.get(f"{split}_random_ties", np.nan), "r1_optimistic": np.nan, "decided_by_tie": pd.NA}
            for m in models.to_dict("records") for split in crepe_queries.SYST_SPLITS]
    return pd.DataFrame(rows, columns=SYSTEMATICITY_COLUMNS)


def systematicity_table(data_dir=None, train_data=crepe_queries.SYST_TRAIN_DATA, models: pd.DataFrame | None = None,
                        scorers=FAST_SCORERS, settings=blind.BlindSettings()) -> pd.DataFrame | str:
    """Tidy systematicity Recall@1 (%): one row per training set × scorer (``model`` ``blind:<name>``, kind
    ``blind``) × HN type × split, with chance, the 95% bootstrap interval, the ties and the skipped rows; then
    ``models``' rows (``systematicity_evaluated``'s table: the models to show beside the scorers). A one-line
    message instead when no training set's files are present. ``train_data``: names, or one name."""
    names = (train_data,) if isinstance(train_data, str) else tuple(train_data)
    present = [n for n in names if _systematicity_present(CREPE_CSVS.existing(data_dir), n)]
    if not present:
        return systematicity_missing(data_dir, names)
    tables = []
    for name in present:
        run = systematicity_run(data_dir, name, scorers, settings)
        if isinstance(run, str):
            return run                      # present but unreadable: no partial table
        recall = recall_table(run)
        recall = recall.assign(train_data=name, model="blind:" + recall["scorer"], display="blind: " + recall["scorer"],
                               kind="blind", n_skipped=recall["group"].map(lambda g: run.skipped.get(g, 0)))
        tables.append(recall[SYSTEMATICITY_COLUMNS])
    if models is not None and len(models):
        tables.append(_models_long(models[models["train_data"].isin(names)]))
    return pd.concat(tables, ignore_index=True)


def conjunctions(data_dir=None, train_data: str = "laion", word: str = "and") -> tuple[int, int, int] | None:
    """Over one training set's HN-Comp queries (SC and UC): (positives holding ``word``, queries, queries whose
    every negative holds it), words as the uncased scorers read them; None without the files."""
    folder = CREPE_CSVS.existing(data_dir)
    if not _systematicity_present(folder, train_data):
        return None
    queries = crepe_queries.load_systematicity(folder, train_data, ("comp",)).queries
    def holds(text: str) -> bool:
        return word in blind.UNCASED.words(text)
    return (sum(holds(q.positive) for q in queries), len(queries),
            sum(all(holds(n) for n in q.negatives) for q in queries))


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


def field_counts(run: BlindRun) -> list[dict]:
    """Each scorer's k of N per HN type, pooled over the released complexity files (the closest to the archive's
    ``_all`` files vl_compo's table pools that the release has): rows of column, scorer, k, n."""
    prefix = "crepe::"
    return [{"column": prefix + group, "scorer": s, "k": int(g[s].sum()), "n": len(g)}
            for group, g in run.per_query.groupby("hn_type", sort=False) for s in run.scorers]


def _needs(claim: str, paper: str) -> Check:
    return Check(claim, paper, "—", NEEDS, f"no {WHAT} data ({HOW_TO_GET})", GROUP)


def check_rule_beats_published(recall: pd.DataFrame | None, published: pd.DataFrame | None = None,
                               rule: str = RULE) -> list[Check]:
    """Per endpoint n: the rule's HN-Neg R@1 (``recall``: :func:`~crepe_utils.blind.runs.recall_table`)
    above the best published model's (default: CREPE's productivity table)."""
    published = published if published is not None else reported.productivity()
    out = []
    for n in ENDPOINTS:
        pub = published[(published["hn_type"] == "negate") & (published["complexity"] == n)]
        best = pub.loc[pub["r1"].idxmax()]
        claim = f"A one-line text rule (blind:{rule}) beats every published model on HN-Neg at n = {n}"
        paper = f"best published {best['r1']:.2f} ({best['model']})"
        if recall is None:
            out.append(_needs(claim, paper))
            continue
        row = recall[(recall["scorer"] == rule) & (recall["hn_type"] == "negate") & (recall["complexity"] == n)]
        if row.empty:
            out.append(Check(claim, paper, "—", FAIL, f"no blind:{rule} result on HN-Neg n = {n}", GROUP))
            continue
        ours = float(row["r1"].iloc[0])
        ok = ours > float(best["r1"])
        out.append(Check(claim, paper, f"{ours:.2f}", PASS if ok else FAIL,
                         f"{len(pub)} published models; the rule {'beats' if ok else 'does not beat'} the best by "
                         f"{ours - float(best['r1']):+.2f} points on {int(row['n_queries'].iloc[0]):,} queries, "
                         "never looking at the image", GROUP))
    return out


def check_above_chance(recall: pd.DataFrame | None) -> list[Check]:
    """Per productivity file, the best cross-fitted scorer of ``recall`` has R@1 above the file's chance."""
    claim = "The best cross-fitted blind scorer beats chance on every productivity file"
    paper = "chance = mean 1/candidates"
    if recall is None:
        return [_needs(claim, paper)]
    trained = recall[recall["scorer"].map(lambda s: blind.scorer(s).trained)]
    if trained.empty:
        return [Check(claim, paper, "—", FAIL, "no cross-fitted scorer among the results", GROUP)]
    best = trained.loc[trained.groupby("group", sort=False)["r1"].idxmax()]
    below = best[best["r1"] <= best["chance_r1"]]
    sure = int((best["ci_low"] > best["chance_r1"]).sum())
    margin = best.assign(m=best["r1"] - best["chance_r1"]).sort_values("m").iloc[0]
    detail = (f"scorers {', '.join(sorted(trained['scorer'].unique()))}; smallest margin {margin['m']:+.1f} points "
              f"({margin['group']}, {margin['scorer']}); lower 95% bound above chance on {sure} of {len(best)} files")
    if len(below):
        detail = "at or below chance: " + ", ".join(below["group"]) + "; " + detail
    return [Check(claim, paper, f"{len(best) - len(below)} of {len(best)} files", FAIL if len(below) else PASS,
                  detail, GROUP)]


def claims(result: BlindRun | str | None) -> list[Check]:
    """Its blind claims from a productivity run with :data:`CLAIM_SCORERS` (a message or None: no data)."""
    recall = recall_table(result) if isinstance(result, BlindRun) else None
    return check_rule_beats_published(recall) + check_above_chance(recall)
