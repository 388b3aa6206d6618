"""The field: vl_compo's 202 checkpoints (:mod:`crepe_utils.field`) against the released data, the benchmarks' own
published tables, their papers' ImageNet claims, and the blind scorers.

``granularity``           per column: the N of which all 202 values are k/N, against the released count
``view``                   what a benchmark's own comparison with the table is given
``agreements``             each benchmark's own published numbers against the table (its ``field_table`` module)
``correlations``           r and R² of every column against ImageNet, per set of checkpoints, bootstrap intervals
``paper_correlations``     the papers' own r and R² against ImageNet beside the field's, at their scale and at 194
``blind_placement``        each blind scorer's number on a column, placed among the 202 values

A value is k/N as :mod:`crepe_utils.analysis.proportions` decides it. What is one benchmark's own (its columns,
counts and chance; its publications against the table) it declares in its folder and is asked here through the
registry. Intervals of a blind scorer's k of N are exact binomial (Clopper–Pearson) 95%.
"""
from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

from .. import benchmarks, field
from ..analysis import uncertainty
from ..analysis.proportions import (N_MAX, TOLERANCE, common_denominators, counts, fits,  # noqa: F401
                                   printed_k, smallest_denominator)
from ..analysis.correlation import pearson_with_uncertainty
from ..field import reported as field_reported
from ..protocol.benchmark import FieldView
from ..results import store
from . import blind as blind_analysis
from ..lazy import lazy

pd = lazy("pandas")
stats = lazy("scipy.stats")

#: the sets of checkpoints correlations are computed over: name → which rows
SETS = ("all", "pretrained", "fine-tuned")


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


# ------------------------------------------------------------------ agreement with the benchmarks' own tables

def checkpoint_rows(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """The field's rows that are a checkpoint's own evaluation, one per checkpoint key (a duplicated row and a
    GELU twin are left out), indexed by key."""
    table = field.table() if table is None else table
    own = table[(table["checkpoint"] != "") & (table["flag"] != "duplicate-row")]
    return own.drop_duplicates("checkpoint").set_index("checkpoint")


def view(table: pd.DataFrame | None = None, benchmark: str | None = None) -> FieldView:
    """What a benchmark's own comparison with the table is given (:class:`~crepe_utils.protocol.benchmark.FieldView`):
    the table, its checkpoints' own rows, the released and alternative counts, and ``benchmark``'s recorded
    explanations of differences (every benchmark's when None)."""
    table = field.table() if table is None else table
    explanations = field_reported.explanations()
    if benchmark is not None:
        explanations = explanations[explanations["benchmark"] == benchmark]
    return FieldView(table=table, rows=checkpoint_rows(table), released=released_counts(),
                     alternatives=alternatives(), explanations=explanations, imagenet=field.IMAGENET)


def own_comparisons() -> dict:
    """Each benchmark the table covers that compares its own publications with it → its ``field_table`` module
    (``agreement``, ``check_agreement``; optionally ``check_granularity_of_parts`` and ``paper_claims``), in the table's
    order."""
    found = {name: benchmarks.part(benchmarks.FOLDER_OF[name], "field_table") for name in field.declarations()}
    return {name: module for name, module in found.items() if module is not None}


def agreements(table: pd.DataFrame | None = None) -> dict:
    """Each benchmark's own published numbers against the table's rows of the same checkpoints, as its
    ``field_table.agreement`` computes them (a table, or a row as a dict): benchmark → agreement."""
    table = field.table() if table is None else table
    return {name: module.agreement(view(table, name)) for name, module in own_comparisons().items()}


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
    """The papers' own r or R² against ImageNet (each benchmark's ``field_table.paper_claims``: e.g. an R² over seven
    models, an r per subset over seventeen) beside the field's: over the paper's own checkpoints that it has
    (``same_*``) and over the 194 pretrained (``field_*``)."""
    table = field.table() if table is None else table
    rows_by_key = checkpoint_rows(table)
    pre = table[~table["fine_tuned"]]
    rows = []
    for module in own_comparisons().values():
        for c in getattr(module, "paper_claims", lambda: [])():
            same = rows_by_key.loc[[k for k in c["checkpoints"] if k in rows_by_key.index]]
            rows.append(_paper_row(c["paper"], c["column"], c["statistic"], c["kind"], c["value"], c["decimals"],
                                   c["models"], same, pre, n_boot, seed))
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
    """Each blind scorer's k of N per column, aggregated as the field aggregates it, by each benchmark's folder
    (:func:`crepe_utils.across.blind.field_counts`: e.g. a type pooled over its released complexity files, ties
    counted); ``runs``: folder → its blind results (:func:`crepe_utils.across.blind.load_runs`), a message where
    there are none (left out). Rows in the table's order of benchmarks."""
    rows = pd.DataFrame(blind_analysis.field_counts(runs), columns=["column", "scorer", "k", "n"])
    order = {name: i for i, name in enumerate(field.declarations())}
    position = rows["column"].map(lambda c: order[field.benchmark_of(c)])
    return rows.iloc[np.argsort(position.to_numpy(), kind="stable")].reset_index(drop=True)


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
    """Each evaluated result under ``results_dir`` as k of N per column of the table, as it scored its ties
    (:func:`crepe_utils.field.result_counts`); a result that cannot be read is left out with a warning."""
    if results_dir is None or not Path(results_dir).is_dir():
        return []
    rows = []
    for manifest_path in store.published_files(results_dir, store.MANIFEST):
        try:
            counted = field.result_counts(manifest_path.parent)
        except store.ResultsError as exc:
            store.warn_unreadable(exc, "its result is left out")
            continue
        rows += [{"checkpoint": c["model"], "column": c["column"], "evaluated_k": c["k"], "evaluated_n": c["n"],
                  "files": c["sets"]}
                 for c in counted if c["result_kind"] == "evaluated"]
    return rows


def evaluated_beside(results_dir, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each evaluated result under ``results_dir`` of a checkpoint the field has, beside the field's number for
    it: per column, the evaluated k of N (pooled over the files evaluated where the column pools several), the
    field's, and the difference in items where both count the same N (``same_items``: never for a column its
    benchmark declares ``pooled``, whose field number pools files the release does not hold)."""
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
