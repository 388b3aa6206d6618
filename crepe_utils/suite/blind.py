"""What a model gets without looking: blind scorers' results on each benchmark, as the tables notebook 07 shows.

``load_runs``            every benchmark's blind results, or per benchmark why there are none
``systematicity_run``    one training set's systematicity files (SC and UC), e.g. the toy world's
``recall_table``         Recall@1 per scorer and file (or subset), with chance, bootstrap intervals and ties
``systematicity_table``  scorer (and evaluated model) × HN type × SC/UC Recall@1, tidy, for 02, 06 and 07
``length_explains``      per file and scorer: how many of its wins ``blind:length`` also makes
``blind_hard``           per query: no scorer of the blind-hard set ranks its positive first
``blind_hard_sizes``     the blind-hard subset's size per file
``models_on_blind_hard`` evaluated models' Recall@1 on all queries and on the blind-hard subset
``winoground_table``     text, image and group scores of each scorer, ties counted
``negate_artefacts``     how HN-Neg's negatives differ from their positives in form

A blind run holds one row per query: its id, its file or subset (``group``), its candidate count, and
per scorer whether the positive ranks first with ties counted against it (the pessimistic rule);
beside it each scorer's ranks under both tie rules, so a table can say how many queries a tie decided.
"""
from __future__ import annotations

import os
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import blind, metrics
from ..benchmarks.crepe import queries as crepe_queries
from ..errors import CrepeError, error_line
from ..results import store
from ..benchmarks.sugarcrepe import load_pairs
from ..benchmarks.winoground import blind as winoground_blind
from ..benchmarks.winoground.metadata import load_examples
from ..benchmarks.crepe.datasets import CREPE_CSVS
from ..benchmarks.sugarcrepe.datasets import SUGARCREPE_JSONS
from ..benchmarks.winoground.datasets import WINOGROUND_FILES
from ..lazy import lazy

pd = lazy("pandas")

#: The scorers notebook 07 runs (the classifiers, ten times slower, are ``blind:classifier`` models).
FAST_SCORERS = ("negation", "length", "wordfreq", "wordfreq-cased", "bigram", "bigram-cased", "bigram-mean")
#: The scorers whose wins define the blind-hard subset: fixed, so that adding a scorer does not move it.
BLIND_HARD_SCORERS = ("negation", "length", "wordfreq", "wordfreq-cased", "bigram", "bigram-cased")
#: The scorers ``make check``'s blind claims need: on CREPE, and on SugarCrepe.
CLAIM_SCORERS = ("negation", "bigram", "bigram-cased")
SUGARCREPE_CLAIM_SCORERS = ("bigram",)
#: The rule every scorer's wins are set against by :func:`length_explains`.
LENGTH = "length"
HOW_TO_GET = {"crepe": "`make data-text` fetches CREPE's productivity CSVs",
              "crepe-systematicity": "`make data-text` fetches CREPE's systematicity CSVs",
              "sugarcrepe": "`make data-text` fetches SugarCrepe's JSONs",
              "winoground": "Winoground is gated: `make data-winoground` with `HF_TOKEN` (see README)"}


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


def scorer_ranks(queries, scorers=FAST_SCORERS, settings=blind.BlindSettings()) -> dict[str, metrics.Ranks]:
    """Per scorer: the positive's rank in each query under both tie rules, and its ties."""
    offsets = np.r_[0, np.cumsum([len(q.candidates) for q in queries])]
    corpora, out = {}, {}
    for name in scorers:
        row = blind.scorer(name)
        if row.view.name not in corpora:
            corpora[row.view.name] = blind.read_corpus(queries, row.view)
        out[name] = metrics.ranks_from_flat(row.score_corpus(corpora[row.view.name], settings), offsets)
    return out


def correct_first(queries, scorers=FAST_SCORERS, settings=blind.BlindSettings()) -> dict[str, np.ndarray]:
    """Per scorer: for each query, whether its positive ranks first (ties count against it)."""
    return {name: r.pessimistic == 1 for name, r in scorer_ranks(queries, scorers, settings).items()}


def _run(benchmark: str, queries, frame: pd.DataFrame, scorers, settings, skipped=None) -> BlindRun:
    t0 = time.perf_counter()
    ranks = scorer_ranks(queries, scorers, settings)
    for name, r in ranks.items():
        frame[name] = r.pessimistic == 1
    return BlindRun(benchmark, frame, tuple(scorers), time.perf_counter() - t0, tuple(queries), ranks,
                    dict(skipped or {}))


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


def _systematicity_present(folder: Path | None, train_data: str) -> bool:
    """Whether both of ``train_data``'s systematicity files (SC, UC) lie somewhere under ``folder``."""
    if _absent(folder):
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
        return f"No {what} found: {HOW_TO_GET['crepe-systematicity']}."
    try:
        qs = crepe_queries.load_systematicity(folder, train_data, crepe_queries.SYST_HN_TYPES)
    except CrepeError as exc:
        return f"{what} cannot be read ({error_line(exc)}); {HOW_TO_GET['crepe-systematicity']}."
    queries = qs.queries
    frame = pd.DataFrame({"query_id": [q.query_id for q in queries],
                          "group": [f"{q.hn_type}-{q.split}" for q in queries],
                          "hn_type": [q.hn_type for q in queries], "split": [q.split for q in queries],
                          "complexity": pd.NA, "n_candidates": [len(q.candidates) for q in queries]})
    skipped: dict[str, int] = {}
    for issue in qs.issues:
        if issue.skipped:
            skipped[f"{issue.hn_type}-{issue.split}"] = skipped.get(f"{issue.hn_type}-{issue.split}", 0) + 1
    return _run(f"crepe-systematicity-{train_data}", queries, frame, scorers, settings, skipped)


def systematicity_missing(data_dir=None, train_data=crepe_queries.SYST_TRAIN_DATA) -> str | None:
    """A one-line message when none of ``train_data``'s systematicity files are present, else None."""
    names = (train_data,) if isinstance(train_data, str) else tuple(train_data)
    if any(_systematicity_present(CREPE_CSVS.existing(data_dir), n) for n in names):
        return None
    return f"No CREPE systematicity CSVs found for {', '.join(names)}: {HOW_TO_GET['crepe-systematicity']}."


SYSTEMATICITY_COLUMNS = ["train_data", "model", "display", "kind", "hn_type", "split", "n_queries", "n_skipped",
                         "chance_r1", "r1", "ci_low", "ci_high", "r1_optimistic", "decided_by_tie"]


def _models_long(models: pd.DataFrame) -> pd.DataFrame:
    """Evaluated models' rows (:func:`crepe_utils.benchmarks.crepe.analysis.systematicity_evaluated`) in the tidy layout."""
    rows = [{"train_data": m["train_data"], "model": m["model"], "display": m["display"], "kind": m["kind"],
             "hn_type": m["hn_type"], "split": split, "n_queries": m[f"n_{split}"], "n_skipped": pd.NA,
             "chance_r1": m["chance"], "r1": m[split], "ci_low": m[f"{split}_ci_low"], "ci_high": m[f"{split}_ci_high"],
             "r1_optimistic": np.nan, "decided_by_tie": pd.NA}
            for m in models.to_dict("records") for split in crepe_queries.SYST_SPLITS]
    return pd.DataFrame(rows, columns=SYSTEMATICITY_COLUMNS)


def systematicity_table(data_dir=None, train_data=crepe_queries.SYST_TRAIN_DATA, models: pd.DataFrame | None = None,
                        scorers=FAST_SCORERS, n_boot: int = 2000,
                        settings=blind.BlindSettings()) -> pd.DataFrame | str:
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
        recall = recall_table(run, n_boot=n_boot)
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
    return metrics.percentile_interval(metrics.resample_proportion(k, n, n_boot, rng, scale=100.0))


def _group_keys(run: BlindRun) -> list[str]:
    return ["group", "hn_type"] + (["split"] if "split" in run.per_query else []) + ["complexity"]


def _tie_counts(run: BlindRun, name: str, rows: np.ndarray) -> tuple[float, int]:
    """(R@1 % with ties counted for the positive, queries the tie rule decides: first only if ties went its way)."""
    ranks = run.ranks.get(name)
    if ranks is None:
        return float("nan"), -1
    optimistic = ranks.optimistic[rows] == 1
    return 100.0 * float(optimistic.mean()), int((optimistic & (ranks.pessimistic[rows] > 1)).sum())


def recall_table(run: BlindRun, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per scorer and group: queries, chance R@1 (mean of 1/candidates), R@1 and its 95% bootstrap interval (%),
    R@1 if every tie went the positive's way, and the queries so decided (a tie is counted against the positive).
    Each interval's draws depend on its scorer and group only, not on which other scorers were run."""
    rows = []
    frame = run.per_query.assign(_row=np.arange(len(run.per_query)))
    keys = _group_keys(run)
    for values, g in frame.groupby(keys, sort=False, dropna=False):
        chance = 100.0 * float((1.0 / g["n_candidates"]).mean())
        where = dict(zip(keys, values))
        for name in run.scorers:
            k = int(g[name].sum())
            rng = np.random.default_rng([seed, zlib.crc32(f"{name}|{where['group']}".encode())])
            low, high = _interval(k, len(g), n_boot, rng)
            optimistic, decided = _tie_counts(run, name, g["_row"].to_numpy())
            rows.append({"scorer": name, **where, "n_queries": len(g), "chance_r1": chance, "r1": 100.0 * k / len(g),
                         "ci_low": low, "ci_high": high, "r1_optimistic": optimistic, "decided_by_tie": decided})
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
