"""The field: vl_compo's 202 checkpoints (:mod:`crepe_utils.field`) against the released data, the benchmarks' own
published tables, their papers' ImageNet claims, and the blind scorers.

``granularity``           per column: the N of which all 202 values are k/N, against the released count
``lattice_power``          what the same test gives on simulated tables, averaged over files or pooled
``sugarcrepe_agreement``   SugarCrepe's own results table against the field's rows of the same checkpoints, in items
``winoground_agreement``   Winoground's Table 3 CLIP row against the field's, in examples
``crepe_agreement``        CREPE's n = 4 and n = 12 values against the field's pooled ones (weak: other items)
``valse_average``          VALSE's CLIP average against the field's pieces averaged three ways
``correlations``           r and R² of every column against ImageNet, per set of checkpoints, bootstrap intervals
``paper_correlations``     the papers' own r and R² against ImageNet beside the field's, at their scale and at 194
``blind_placement``        each blind scorer's number on a column, placed among the 202 values

A value is k/N when some integer 0 ≤ k ≤ N has |100·k/N − value| ≤ 1e-9: the table prints full float precision,
so a value that is not such a proportion passes for one N by chance with probability about 2e-9·N/100, and "all
202 values fit N" is decisive. Intervals of a blind scorer's k of N are exact binomial (Clopper–Pearson) 95%.
"""
from __future__ import annotations

import zlib

import numpy as np

from .. import benchmarks, field
from ..analysis import uncertainty
from ..analysis.correlation import pearson_with_uncertainty
from ..benchmarks.crepe import reported as crepe_reported, roster as crepe_roster
from ..benchmarks.sugarcrepe import reported as sugarcrepe_reported
from ..benchmarks.valse import reported as valse_reported
from ..benchmarks.valse.data import PIECES
from ..benchmarks.winoground import reported as winoground_reported
from ..benchmarks.winoground import roster as winoground_roster
from ..results import store
from . import blind as blind_analysis
from ..lazy import lazy

pd = lazy("pandas")
stats = lazy("scipy.stats")

N_MAX = 60_000
TOLERANCE = 1e-9
#: the sets of checkpoints correlations are computed over: name → which rows
SETS = ("all", "pretrained", "fine-tuned")
#: VALSE names its model "CLIP"; the comparison takes OpenAI's ViT-B/32, the CLIP of Winoground's Table 3
VALSE_CLIP = "openai-vit-b-32"


# ------------------------------------------------------------------ k / N

def fits(values, n: int) -> np.ndarray:
    """Per value: whether it is 100·k/n for an integer 0 ≤ k ≤ n (to :data:`TOLERANCE`)."""
    v = np.asarray(values, dtype=float)
    k = np.round(v * n / 100.0)
    return (np.abs(100.0 * k / n - v) <= TOLERANCE) & (k >= 0) & (k <= n)


def common_denominators(values, n_max: int = N_MAX) -> np.ndarray:
    """Every N ≤ ``n_max`` of which all ``values`` are k/N (multiples of the smallest fit too), ascending."""
    ns = np.arange(1, n_max + 1, dtype=float)
    ok = np.ones(n_max, dtype=bool)
    for v in np.asarray(values, dtype=float):
        k = np.round(v * ns / 100.0)
        ok &= np.abs(100.0 * k / ns - v) <= TOLERANCE
        if not ok.any():
            break
    return np.flatnonzero(ok) + 1


def smallest_denominator(values, n_max: int = N_MAX) -> int | None:
    """The smallest N of which all ``values`` are k/N, or None below ``n_max``."""
    found = common_denominators(values, n_max)
    return int(found[0]) if len(found) else None


def counts(values, n: int) -> np.ndarray:
    """The k of each value at N = ``n`` (the nearest integer; check :func:`fits` first)."""
    return np.round(np.asarray(values, dtype=float) * n / 100.0).astype(int)


def printed_k(value: float, decimals: int, n: int) -> int | None:
    """The one k whose 100·k/n prints as ``value`` with ``decimals`` decimals, or None (none, or several)."""
    ks = [k for k in range(max(0, round(value * n / 100) - 2), min(n, round(value * n / 100) + 2) + 1)
          if abs(100.0 * k / n - value) <= 0.5 * 10.0 ** -decimals + 1e-9]
    return ks[0] if len(ks) == 1 else None


# ------------------------------------------------------------------ granularity

def released_counts() -> dict[str, int]:
    """Each column → the items of the release it is scored on, as its benchmark pins them (its declared
    ``table_columns.released``; e.g. a type's nine complexity files pooled, a valid set) and ImageNet's
    ILSVRC-2012 validation images."""
    out = {c: int(d.released(field.part(c))) for d in field.declarations().values() for c in d.columns}
    return {**out, field.IMAGENET: field.IMAGENET_IMAGES}


def alternatives() -> dict[str, list[tuple[str, int]]]:
    """Each column → the other item sets its benchmark declares it could have been scored on: (what, N) (e.g.
    each complexity file, an archive's pooled file, an earlier release, the full set beside a valid one)."""
    found = {c: list(d.alternatives(field.part(c))) for d in field.declarations().values() for c in d.columns}
    return {c: alt for c, alt in found.items() if alt}


def granularity(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per column: the smallest N all its values are k/N of, how many fit the released count, and each
    alternative item set's fits (``alternative`` lists them as "what N: fits")."""
    table = field.table() if table is None else table
    released, others = released_counts(), alternatives()
    rows = []
    for column, n in released.items():
        v = table[column].to_numpy(float)
        common = smallest_denominator(v)
        alt = [(what, m, int(fits(v, m).sum())) for what, m in others.get(column, [])]
        best = max((a for a in alt if a[2] or len(alt) == 1), key=lambda a: a[2], default=None)
        rows.append({"column": column, "benchmark": "imagenet" if column == field.IMAGENET else
                     field.benchmark_of(column), "values": len(v), "common_n": common,
                     "fits_common": int(fits(v, common).sum()) if common else 0, "released_n": n,
                     "fits_released": int(fits(v, n).sum()),
                     "best_alternative": f"{best[0]} (N = {best[1]:,}): {best[2]}" if best
                     else f"none of {len(alt)} fits a single value" if alt else "",
                     "alternatives": "; ".join(f"{w} (N = {m:,}): {f}" for w, m, f in alt),
                     "k_min": int(counts(v, common).min()) if common else None,
                     "k_max": int(counts(v, common).max()) if common else None})
    return pd.DataFrame(rows)


def lattice_power(table: pd.DataFrame | None = None, seed: int = 0) -> pd.DataFrame:
    """Per CREPE type: the granularity test on two simulated tables of 202 rows at the field's own rates, drawn on
    the released complexity files: the mean over the nine files of k_i/N_i (what "averaged over complexities"
    would print), and Σk_i/ΣN_i (pooled). The pooled table recovers ΣN; the averaged one fits no N ≤ N_MAX."""
    table = field.table() if table is None else table
    files = crepe_reported.released_productivity_queries()
    rng = np.random.default_rng(seed)
    rows = []
    for c in field.COLUMNS["crepe-productivity"]:
        ns = np.array([rows_ for (t, _), rows_ in sorted(files.items()) if t == field.part(c)])
        p = np.clip(table[c].to_numpy(float) / 100, 0.01, 0.99)
        k = rng.binomial(ns[None, :], p[:, None])
        rows.append({"column": c, "released_sum": int(ns.sum()),
                     "averaged_common_n": smallest_denominator(100 * (k / ns).mean(axis=1)),
                     "pooled_common_n": smallest_denominator(100 * k.sum(axis=1) / ns.sum())})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ agreement with the benchmarks' own tables

def checkpoint_rows(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """The field's rows that are a checkpoint's own evaluation, one per checkpoint key (a duplicated row and a
    GELU twin are left out), indexed by key."""
    table = field.table() if table is None else table
    own = table[(table["checkpoint"] != "") & (table["flag"] != "duplicate-row")]
    return own.drop_duplicates("checkpoint").set_index("checkpoint")


def sugarcrepe_agreement(table: pd.DataFrame | None = None, published: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per checkpoint of SugarCrepe's results table × subset: its published R@1 as k of the N it was computed on
    (the released count, or the earlier one it fits), the field's k of the released N, and the difference in items
    (field − published; NaN where the field lacks the checkpoint)."""
    rows_by_key = checkpoint_rows(table)
    published = sugarcrepe_reported.results() if published is None else published
    published = published[published["imagenet_model"].astype(str) != ""]
    released, others = released_counts(), alternatives()
    out = []
    for r in published.itertuples():
        column = f"sugarcrepe::{r.subset}"
        ns = [released[column]] + [n for _, n in others.get(column, [])]
        paper_n = next((n for n in ns if printed_k(float(r.r1), int(r.decimals), n) is not None), None)
        paper_k = printed_k(float(r.r1), int(r.decimals), paper_n) if paper_n else None
        present = r.imagenet_model in rows_by_key.index
        value = float(rows_by_key.loc[r.imagenet_model, column]) if present else np.nan
        n = released[column]
        k = int(counts([value], n)[0]) if present and fits([value], n)[0] else None
        out.append({"checkpoint": r.imagenet_model, "name": f"{r.group} {r.model}", "subset": r.subset,
                    "paper_r1": float(r.r1), "paper_n": paper_n, "paper_k": paper_k, "in_field": present,
                    "field_r1": value, "field_n": n, "field_k": k,
                    "diff_items": k - paper_k if k is not None and paper_k is not None else np.nan})
    return pd.DataFrame(out)


def winoground_agreement(table: pd.DataFrame | None = None, table3: pd.DataFrame | None = None,
                         name: str = "CLIP (ViT-B/32)") -> pd.DataFrame:
    """Table 3's ``name`` row against the field's row of the same checkpoint: per score, both as k of the 400
    examples and the difference in examples."""
    rows_by_key = checkpoint_rows(table)
    table3 = winoground_reported.table3() if table3 is None else table3
    key = winoground_roster.TABLE3_CHECKPOINTS[name]
    paper = table3.set_index("model").loc[name]
    n = int(winoground_reported.released_counts()["examples"])
    out = []
    for column in field.COLUMNS["winoground"]:
        metric = field.part(column)
        value = float(rows_by_key.loc[key, column]) if key in rows_by_key.index else np.nan
        k_paper = printed_k(float(paper[metric]), 2, n)
        k = int(counts([value], n)[0]) if fits([value], n)[0] else None
        out.append({"checkpoint": key, "metric": metric, "paper": float(paper[metric]), "paper_k": k_paper,
                    "field": value, "field_k": k, "n": n,
                    "diff_examples": k - k_paper if k is not None and k_paper is not None else np.nan})
    return pd.DataFrame(out)


def crepe_agreement(table: pd.DataFrame | None = None, published: pd.DataFrame | None = None,
                    table_n: dict[str, int] | None = None) -> pd.DataFrame:
    """Per checkpoint in both CREPE's productivity table and the field × HN type: the paper's R@1 at n = 4 and 12
    (with k of those files), the field's pooled value (k of its N: ``table_n``, default its smallest common N),
    whether it lies between the two, and whether k_4 + k_12 ≤ k ≤ k_4 + k_12 + (N − N_4 − N_12): what holds if the
    field's items contain the released n = 4 and n = 12 files."""
    table = field.table() if table is None else table
    rows_by_key = checkpoint_rows(table)
    published = crepe_reported.productivity() if published is None else published
    files = crepe_reported.released_productivity_queries()
    columns = field.COLUMNS["crepe-productivity"]
    table_n = table_n or {c: smallest_denominator(table[c]) for c in columns}
    out = []
    for key in [k for k in crepe_roster.model_order() if k in rows_by_key.index]:
        for c in columns:
            hn = field.part(c)
            pub = published[(published["model"] == key) & (published["hn_type"] == hn)].set_index("complexity")["r1"]
            n4, n12, n = files[(hn, 4)], files[(hn, 12)], table_n[c]
            k4, k12 = printed_k(float(pub[4]), 2, n4), printed_k(float(pub[12]), 2, n12)
            value = float(rows_by_key.loc[key, c])
            k = int(counts([value], n)[0]) if n and fits([value], n)[0] else None
            out.append({"checkpoint": key, "hn_type": hn, "paper_n4": float(pub[4]), "paper_n12": float(pub[12]),
                        "k4": k4, "k12": k12, "field": value, "field_k": k, "field_n": n,
                        "between": min(pub[4], pub[12]) <= value <= max(pub[4], pub[12]),
                        "feasible": None if None in (k, k4, k12) else k4 + k12 <= k <= k4 + k12 + n - n4 - n12})
    return pd.DataFrame(out)


def crepe_rank_agreement(agreement: pd.DataFrame) -> pd.DataFrame:
    """Per HN type: Spearman's ρ over the shared checkpoints, field's pooled value against the paper's n = 4 and
    against its n = 12 (descriptive: other items, other aggregation)."""
    rows = []
    for hn, g in agreement.groupby("hn_type", sort=False):
        rows.append({"hn_type": hn, "checkpoints": len(g), "between": int(g["between"].sum()),
                     "feasible": int(g["feasible"].fillna(False).sum()),
                     "spearman_n4": float(stats.spearmanr(g["field"], g["paper_n4"]).statistic),
                     "spearman_n12": float(stats.spearmanr(g["field"], g["paper_n12"]).statistic)})
    return pd.DataFrame(rows)


def valse_average(table: pd.DataFrame | None = None, published: pd.DataFrame | None = None,
                  key: str = VALSE_CLIP) -> dict:
    """VALSE's published CLIP average pairwise accuracy beside the field's row ``key`` averaged three ways: the
    unweighted mean of the eleven pieces, the mean of the seven phenomena (each its pieces' mean: what vl_compo's
    own results.csv prints), and Σk/ΣN pooled over the valid items; and the range of the pieces' mean over the
    field's other OpenAI CLIP rows."""
    rows_by_key = checkpoint_rows(table)
    published = valse_reported.results() if published is None else published
    paper = published[(published["model"] == "CLIP") & (published["metric"] == "acc_r")]["value"]
    columns, released = list(field.COLUMNS["valse"]), released_counts()
    values = rows_by_key.loc[key, columns].astype(float) if key in rows_by_key.index else pd.Series(dtype=float)
    phenomena = pd.Series([p.phenomenon for p in PIECES], index=[f"valse::{p.name}" for p in PIECES])
    openai = [k for k in rows_by_key.index if rows_by_key.loc[k, "pretrained"] == "openai"]
    means = rows_by_key.loc[openai, columns].astype(float).mean(axis=1)
    ks = sum(int(counts([values[c]], released[c])[0]) for c in columns) if len(values) else 0
    return {"checkpoint": key, "paper": float(paper.iloc[0]) if len(paper) else np.nan, "paper_decimals": 1,
            "pieces_mean": float(values.mean()) if len(values) else np.nan,
            "phenomena_mean": float(values.groupby(phenomena.reindex(values.index)).mean().mean())
            if len(values) else np.nan,
            "pooled": 100 * ks / sum(released[c] for c in columns) if len(values) else np.nan,
            "openai_checkpoints": len(openai), "openai_min": float(means.min()), "openai_max": float(means.max())}


# ------------------------------------------------------------------ the papers' claims at scale

def _members(table: pd.DataFrame, which: str) -> pd.Series:
    return {"all": pd.Series(True, index=table.index), "pretrained": ~table["fine_tuned"],
            "fine-tuned": table["fine_tuned"]}[which]


def correlate(x, y, n_boot: int = 2000, seed=0) -> dict:
    """r, R² and their bootstrap intervals of ``y`` on ``x``, as a row."""
    res = pearson_with_uncertainty(x, y, n_boot=n_boot, seed=seed)
    return {"n": res.n, "r": res.r, "r_low": res.r_low, "r_high": res.r_high, "r2": res.r2,
            "r2_low": res.r2_low, "r2_high": res.r2_high}


def correlations(table: pd.DataFrame | None = None, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per column × set of checkpoints (:data:`SETS`: all 202, the 194 pretrained, the 8 hard-negative fine-tunes):
    Pearson r and R² against ImageNet, 95% percentile bootstrap intervals resampling checkpoints. Each interval's
    draws depend on its column and set only (seed, crc32 of "column|set")."""
    table = field.table() if table is None else table
    rows = []
    for column in [c for cols in field.COLUMNS.values() for c in cols]:
        for which in SETS:
            part = table[_members(table, which)]
            rows.append({"column": column, "benchmark": field.benchmark_of(column), "set": which,
                         **correlate(part[field.IMAGENET], part[column], n_boot, _seed(seed, column, which))})
    return pd.DataFrame(rows)


def paper_correlations(table: pd.DataFrame | None = None, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """The papers' own numbers against ImageNet beside the field's: CREPE §5.4's R² of HN-Swap at n = 4, 8, 12 (7
    models) against the field's pooled HN-Swap; SugarCrepe's r per subset (17 models). For each: the field over the
    paper's own checkpoints that it has (``same_*``) and over the 194 pretrained (``field_*``), R² for CREPE, r for
    SugarCrepe."""
    table = field.table() if table is None else table
    rows_by_key = checkpoint_rows(table)
    claims = crepe_reported.claims().set_index("claim_id")
    pre = table[~table["fine_tuned"]]
    rows = []
    same7 = rows_by_key.loc[[k for k in crepe_roster.SYSTEMATICITY_MODELS if k in rows_by_key.index]]
    for n in (4, 8, 12):
        claim_id = f"r2_swap_{n}"
        rows.append(_paper_row("CREPE §5.4", "crepe::swap", f"R² of HN-Swap at n = {n}", "r2",
                               float(claims.loc[claim_id, "value"]), 2, 7, same7, pre, n_boot, seed))
    published_r = sugarcrepe_reported.imagenet_r()
    keys = [k for k in dict.fromkeys(sugarcrepe_reported.results()["imagenet_model"]) if k in rows_by_key.index]
    same = rows_by_key.loc[keys]
    for r in published_r.itertuples():
        rows.append(_paper_row("SugarCrepe", f"sugarcrepe::{r.subset}", f"r of {r.subset}", "r",
                               float(r.pearson_r), int(r.decimals), 17, same, pre, n_boot, seed))
    return pd.DataFrame(rows)


def _seed(seed: int, column: str, which: str) -> list[int]:
    """The bootstrap seed of one column over one set of checkpoints: the same data get the same interval."""
    return [seed, zlib.crc32(f"{column}|{which}".encode())]


def _paper_row(paper, column, statistic, kind, value, decimals, paper_n, same, pre, n_boot, seed) -> dict:
    at_scale = correlate(pre[field.IMAGENET], pre[column], n_boot, _seed(seed, column, "pretrained"))
    own = correlate(same[field.IMAGENET], same[column], n_boot, _seed(seed, column, paper))
    half = 0.5 * 10.0 ** -decimals
    low, high = at_scale[f"{kind}_low"], at_scale[f"{kind}_high"]
    return {"paper": paper, "column": column, "statistic": statistic, "kind": kind, "paper_value": value,
            "paper_decimals": decimals, "paper_models": paper_n, "same_n": own["n"], "same": own[kind],
            "same_low": own[f"{kind}_low"], "same_high": own[f"{kind}_high"], "field_n": at_scale["n"],
            "field": at_scale[kind], "field_low": low, "field_high": high,
            "holds": bool(value + half >= low and value - half <= high)}


# ------------------------------------------------------------------ the blind scorers among the field

def blind_counts(runs: dict) -> pd.DataFrame:
    """Each blind scorer's k of N per column, aggregated as the field aggregates it: CREPE pooled over a type's
    released complexity files (the closest to the archive's ``_all`` files the release has), SugarCrepe per subset,
    Winoground per score (ties counted), VALSE per piece of its valid set. ``runs``: ``crepe`` and ``sugarcrepe``
    (:class:`crepe_utils.across.blind.BlindRun`), ``winoground`` (:func:`~crepe_utils.across.blind.winoground_table`)
    and ``valse`` (:func:`crepe_utils.benchmarks.valse.analysis.blind_table`); a missing or message entry is left
    out."""
    rows = []
    for name, prefix in (("crepe", "crepe::"), ("sugarcrepe", "sugarcrepe::")):
        run = runs.get(name)
        if isinstance(run, blind_analysis.BlindRun):
            by = run.per_query.groupby("hn_type", sort=False)
            rows += [{"column": prefix + group, "scorer": s, "k": int(g[s].sum()), "n": len(g)}
                     for group, g in by for s in run.scorers]
    wino = runs.get("winoground")
    if isinstance(wino, pd.DataFrame):
        rows += [{"column": f"winoground::{r.metric}", "scorer": r.scorer,
                  "k": int(round(r.score * r.examples / 100)), "n": int(r.examples)} for r in wino.itertuples()]
    valse = runs.get("valse")
    if isinstance(valse, pd.DataFrame):
        rows += [{"column": f"valse::{r.piece}", "scorer": r.scorer.removeprefix("blind:"), "k": int(r.wins),
                  "n": int(r.n)} for r in valse.itertuples()]
    return pd.DataFrame(rows, columns=["column", "scorer", "k", "n"])


def blind_placement(blind: pd.DataFrame, table: pd.DataFrame | None = None,
                    field_n: dict[str, int] | None = None) -> pd.DataFrame:
    """Each (column, scorer) of ``blind`` (:func:`blind_counts`) placed among the field's values: the scorer's
    value with its exact interval, how many checkpoints it beats (strictly below its value), how many it beats by
    more than its interval (below its lower bound), how many pretrained ones, and the checkpoints at or above it.

    Where the field counted more items than the scorer was run on (CREPE: ``field_n``, default the smallest
    common N of the column, against the released files' N), ``bound_low`` and ``bound_high`` are what the scorer's
    value on the field's items can be if they contain the released ones, [k/N_field, (k + N_field − N)/N_field],
    and ``beats_at_bound`` how many checkpoints the lower bound still beats."""
    table = field.table() if table is None else table
    field_n = field_n if field_n is not None else {c: smallest_denominator(table[c]) for c in set(blind["column"])}
    rows = []
    for r in blind.itertuples():
        v = table[r.column].to_numpy(float)
        value = 100.0 * r.k / r.n
        low, high = uncertainty.clopper_pearson_or_nan(int(r.k), int(r.n))
        above = table[v >= value].sort_values(r.column, ascending=False)
        n_field = field_n.get(r.column) or r.n
        bound = (100.0 * r.k / n_field, 100.0 * (r.k + n_field - r.n) / n_field) if n_field > r.n else (value, value)
        rows.append({"column": r.column, "benchmark": field.benchmark_of(r.column), "scorer": r.scorer,
                     "k": int(r.k), "n": int(r.n), "value": value, "ci_low": low, "ci_high": high,
                     "beats": int((v < value).sum()), "beats_surely": int((v < low).sum()),
                     "beats_pretrained": int(((v < value) & ~table["fine_tuned"].to_numpy()).sum()),
                     "field_n": n_field, "bound_low": bound[0], "bound_high": bound[1],
                     "beats_at_bound": int((v < bound[0]).sum()),
                     "beats_pretrained_at_bound": int(((v < bound[0]) & ~table["fine_tuned"].to_numpy()).sum()),
                     "checkpoints": len(v), "field_min": float(v.min()), "field_median": float(np.median(v)),
                     "field_max": float(v.max()),
                     "not_beaten": "; ".join(f"{a}/{p} {x:.2f}" for a, p, x in
                                             zip(above["arch"], above["pretrained"], above[r.column]))})
    return pd.DataFrame(rows)


def best_blind(placement: pd.DataFrame) -> pd.DataFrame:
    """Per column, the blind scorer with the highest value (first in scorer order on a tie)."""
    return placement.loc[placement.groupby("column", sort=False)["value"].idxmax()].reset_index(drop=True)


# ------------------------------------------------------------------ evaluated beside the table

def _evaluated(results_dir) -> list[dict]:
    """Each evaluated result under ``results_dir`` as k of N per column of the table: a benchmark's own reader
    where it declares one, else its retrieval summaries pooled over its declared group."""
    summaries, rows = store.load_results(results_dir), []
    for name, declared in field.declarations().items():
        if declared.evaluated is not None:
            rows += declared.evaluated(results_dir)
            continue
        bench = benchmarks.get(name)
        part = summaries[summaries["benchmark"].isin({bench.name, *bench.aliases}) & (summaries["kind"] == "evaluated")]
        prefix = f"{declared.prefix}::"
        # results written before a benchmark declared its groups name the part in hn_type
        group = next((g for g in (declared.group, "hn_type") if g in part and part[g].notna().any()), None)
        if part.empty or group is None:
            continue
        part = part.assign(k=(part["r1"] * part["n_queries"] / 100).round().astype(int))
        for (model, value), g in part.groupby(["model", group], sort=False):
            rows.append({"checkpoint": model, "column": prefix + str(value), "evaluated_k": int(g["k"].sum()),
                         "evaluated_n": int(g["n_queries"].sum()), "files": len(g)})
    return rows


def evaluated_beside(results_dir, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each evaluated result under ``results_dir`` of a checkpoint the field has, beside the field's number for
    it: per column, the evaluated k of N (CREPE productivity pooled over the complexity files evaluated), the
    field's, and the difference in items where both count the same N (``same_items``: SugarCrepe, Winoground,
    VALSE's valid set; never CREPE, whose field number pools the archive's ``_all`` files)."""
    columns = ["checkpoint", "column", "evaluated", "evaluated_k", "evaluated_n", "field", "field_n", "same_items",
               "diff_items"]
    rows = _evaluated(results_dir)
    rows_by_key, released = checkpoint_rows(table), released_counts()
    pooled = {c: smallest_denominator(rows_by_key[c].astype(float))
              for d in field.declarations().values() if d.pooled for c in d.columns}
    out = []
    for r in rows:
        if r["checkpoint"] not in rows_by_key.index or r["column"] not in rows_by_key.columns:
            continue
        value = float(rows_by_key.loc[r["checkpoint"], r["column"]])
        n = pooled.get(r["column"]) or released[r["column"]]
        same = r["column"] not in pooled and r["evaluated_n"] == n and bool(fits([value], n)[0])
        out.append({**r, "evaluated": 100.0 * r["evaluated_k"] / r["evaluated_n"], "field": value, "field_n": n,
                    "same_items": same,
                    "diff_items": r["evaluated_k"] - int(counts([value], n)[0]) if same else np.nan})
    return pd.DataFrame(out).reindex(columns=columns) if out else pd.DataFrame(columns=columns)
