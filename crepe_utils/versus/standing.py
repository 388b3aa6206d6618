"""Where a model stands among the field's 202 checkpoints (vl_compo, Oh et al. 2024): ``python -m crepe_utils
standing``.

Each result folder given is read through its benchmark's declaration (``table_columns``): its rows pooled to the field
table's columns, k of n, and how (each declaration says it in words). Where the field's own N, read off its 202
values (every value is k/N of one N), differs from the result's, the row says so: the model is then placed by
value, not item for item.
Per (model, column): its value in points, the checkpoints strictly below it, its percentile, the field's best,
and the best of the blind scorers (``blind:<scorer>`` results) among the folders given. Beside the field, where a
benchmark's paper published per-set numbers (its folder's ``standing`` module: CREPE's app. B.1, n = 4 and 12),
each result stands among the paper's own models on those sets, their values as k of the released file's N with
the best one's exact interval. A result of a benchmark
the table has no column of adds no row; asking for a column the table lacks is refused.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from .. import benchmarks, field
from ..errors import CrepeError
from ..results import store
from ..analysis.proportions import smallest_denominator
from ..lazy import lazy

pd = lazy("pandas")

BLIND_PREFIX = "blind:"
PAPER_COLUMNS = ["model", "benchmark", "set", "k", "n", "value", "paper_models", "paper_n", "paper_below",
                 "paper_unfitted", "paper_best", "paper_best_value", "paper_best_low", "paper_best_high", "note"]
COLUMNS = ["model", "kind", "column", "model_value", "model_k", "model_n", "field_n", "field_below",
           "field_percentile", "field_best", "field_best_value", "blind_best", "blind_best_value", "field_items",
           "pooling", "result_kind", "result_dir"]


class StandingError(CrepeError, ValueError):
    """A standing that cannot be made (not a result, no column, a column the field lacks); the message says which."""


@dataclass(frozen=True)
class Standing:
    """The standing table (:data:`COLUMNS`) and the field's values of its columns (for the strips)."""

    table: pd.DataFrame
    field_values: pd.DataFrame
    tie_policy: str
    #: each model beside its benchmark's paper's own models, per set both cover (:data:`PAPER_COLUMNS`)
    paper: pd.DataFrame | None = None

    @property
    def models(self) -> pd.DataFrame:
        return self.table[self.table["kind"] == "model"]


def result_counts(directory: str | os.PathLike, tie_policy: str = "pessimistic") -> list[dict]:
    """One result folder's k of n per field column it covers (:func:`crepe_utils.field.result_counts`)."""
    directory = Path(directory)
    if not (directory / store.MANIFEST).is_file():
        raise StandingError(f"{directory} is not a result folder (it holds no {store.MANIFEST}): pass folders "
                            "evaluate wrote for one model and benchmark (<results>/<model>/<benchmark>)")
    return [{**c, "kind": "blind" if c["model"].startswith(BLIND_PREFIX) else "model", "result_dir": str(directory)}
            for c in field.result_counts(directory, tie_policy)]


def paper_rows(directory: str | os.PathLike, tie_policy: str = "pessimistic") -> list[dict]:
    """One result folder beside its benchmark's paper's own models (its folder's ``standing.published``), per set."""
    directory = Path(directory)
    manifest = store.load_manifest(directory)
    bench = benchmarks.get(manifest["benchmark"]) if manifest.get("benchmark") else None
    module = benchmarks.part(benchmarks.FOLDER_OF[bench.name], "standing") if bench is not None else None
    if module is None:
        return []
    summary = store.read_table(lambda p: pd.read_csv(p, keep_default_na=True, dtype={"split": "string"}),
                               directory / store.SUMMARY)
    key = manifest["model"]["key"]
    return [{"model": key, "benchmark": bench.name, **row}
            for row in module.published(bench.name, summary, manifest, tie_policy)]


def _best(table: pd.DataFrame, column: str) -> tuple[str, float]:
    values = table[column]
    i = values.idxmax()
    return f"{table.at[i, 'arch']}/{table.at[i, 'pretrained']}", float(values[i])


def standing(results, tie_policy: str = "pessimistic", columns=None, table: pd.DataFrame | None = None) -> Standing:
    """Place every result folder of ``results`` on the field table's columns (``columns``: only these)."""
    table = field.table() if table is None else table
    known = [c for cols in field.COLUMNS.values() for c in cols]
    for column in columns or ():
        if column not in known or column not in table.columns:
            raise StandingError(f"the field table has no column {column!r}; its columns are "
                                f"{', '.join(known)}")
    folders = [results] if isinstance(results, (str, os.PathLike)) else list(results)
    counted = [c for directory in folders for c in result_counts(directory, tie_policy)]
    counted = [c for c in counted if c["column"] in table.columns and (not columns or c["column"] in columns)]
    if not counted:
        raise StandingError("none of the results given covers a column of the field table ("
                            + ", ".join(sorted(field.COLUMNS)) + "); pass result folders of those benchmarks")
    rows = []
    for c in counted:
        v = table[c["column"]].dropna().to_numpy(float)
        value = 100.0 * c["k"] / c["n"]
        best, best_value = _best(table, c["column"])
        blind = [d for d in counted if d["kind"] == "blind" and d["column"] == c["column"]]
        top = max(blind, key=lambda d: d["k"] / d["n"]) if blind else None
        items = smallest_denominator(v)
        rows.append({"model": c["model"], "kind": c["kind"], "column": c["column"], "model_value": value,
                     "model_k": c["k"], "model_n": c["n"], "field_n": len(v), "field_below": int((v < value).sum()),
                     "field_percentile": 100.0 * (v < value).sum() / len(v), "field_best": best,
                     "field_best_value": best_value, "blind_best": top["model"] if top else "",
                     "blind_best_value": 100.0 * top["k"] / top["n"] if top else math.nan,
                     "field_items": items if items is not None else math.nan,
                     "pooling": c["pooling"] + _n_note(items, c["n"]),
                     "result_kind": c["result_kind"], "result_dir": c["result_dir"]})
    out = pd.DataFrame(rows, columns=COLUMNS)
    used = list(dict.fromkeys(out["column"]))
    paper = pd.DataFrame([r for directory in folders for r in paper_rows(directory, tie_policy)], columns=PAPER_COLUMNS)
    return Standing(out, table[["arch", "pretrained", *used]].copy(), tie_policy, paper)


def _n_note(field_items: int | None, n: int) -> str:
    if field_items is None:
        return "; the field's values are not k/N of one N"
    if field_items != n:
        return (f"; the field's values are k/{field_items} (its own item set), this result counts {n} items: "
                "placed by value, not item for item")
    return ""
