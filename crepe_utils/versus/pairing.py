"""Two results of the same benchmark on the same data, paired query by query (``python -m crepe_utils compare``).

Each result's scoring rule says, per summary row (set) and query, whether the query is correct
(:class:`crepe_utils.protocol.tables.Outcomes`). Queries are paired by ``query_id`` within each set; a query
only one run holds is counted (``n_only_in_a``, ``n_only_in_b``, ``n_unpaired``), never silently dropped. Two
runs that did not read the same data (their manifests' benchmark, scoring rule, file digests or selection
differ) are refused in one line naming what differs. Per set of A's summary, and once pooled, the paired
statistics of :mod:`crepe_utils.analysis.paired`; Holm's adjustment runs over the non-pooled rows of the file
(the pooled row's ``p_holm`` is empty: it is one test of its own).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from .. import benchmarks
from ..analysis import paired, uncertainty
from ..errors import CrepeError
from ..protocol.tables import key_text
from ..results import store
from ..lazy import lazy

pd = lazy("pandas")

TIE_POLICIES = ("pessimistic", "optimistic")
STAT_COLUMNS = ["n_paired", "n_only_in_a", "n_only_in_b", "n_unpaired", "a_correct", "b_correct", "only_a",
                "only_b", "diff_pp", "diff_ci_low", "diff_ci_high", "p_value", "p_holm"]
#: what a comparison row says beside its numbers
LABEL_COLUMNS = ["scope", "model_a", "model_b", "tie_policy", "interval", "test"]
POOLED = "pooled"


class CompareError(CrepeError, ValueError):
    """Two results that cannot be compared (not results, other benchmarks, other data); the message says which."""


@dataclass(frozen=True)
class Side:
    """One result folder read for a comparison: its manifest, its summary (key columns as text), its outcomes."""

    directory: Path
    manifest: dict
    summary: pd.DataFrame
    outcomes: object          # crepe_utils.protocol.tables.Outcomes

    @property
    def model(self) -> str:
        return self.manifest["model"]["key"]


@dataclass(frozen=True)
class Comparison:
    """A comparison's table (one row per set of A's summary, then the pooled row) and what it compared."""

    table: pd.DataFrame
    row_key: tuple
    benchmark: str
    a: str
    b: str
    tie_policy: str
    pooled_means: str

    @property
    def sets(self) -> pd.DataFrame:
        return self.table[self.table["scope"] != POOLED]

    @property
    def pooled(self) -> dict:
        return self.table[self.table["scope"] == POOLED].iloc[0].to_dict()


def read_side(directory: str | os.PathLike, tie_policy: str, which: str) -> Side:
    """One result folder, checked: a folder holding a result's manifest, a rule that can be compared, its logs."""
    directory = Path(directory)
    if not (directory / store.MANIFEST).is_file():
        raise CompareError(f"{which} {directory} is not a result folder (it holds no {store.MANIFEST}): pass the "
                           "folder evaluate wrote for one model and benchmark (<results>/<model>/<benchmark>)")
    manifest = store.load_manifest(directory)
    rule = benchmarks.rules().get(manifest.get("scoring", "retrieval"))
    if rule is None or rule.outcomes is None:
        raise CompareError(f"{which} {directory}: its scoring rule {manifest.get('scoring')!r} has no per-query "
                           "outcomes to pair; compare results of a benchmark the companion evaluates")
    summary = store.read_table(lambda p: pd.read_csv(p, dtype=str, keep_default_na=False), directory / store.SUMMARY)
    outcomes = rule.outcomes(directory, manifest, tie_policy)
    missing = [k for k in outcomes.row_key if k not in summary.columns]
    if missing:
        raise store.ResultsError(f"{directory / store.SUMMARY} lacks the columns {missing} that name its sets: the "
                                 "result is damaged; evaluate again or delete its folder")
    return Side(directory, manifest, summary, outcomes)


def _described(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def same_data(a: Side, b: Side) -> None:
    """Refuse, in one line naming what differs, two results that did not read the same data."""
    ma, mb = a.manifest, b.manifest
    bench_a, bench_b = (benchmarks.get(m.get("benchmark", "")).name if m.get("benchmark") else "" for m in (ma, mb))
    if bench_a != bench_b:
        raise CompareError(f"A ({a.directory}) is a result of {bench_a or 'an unnamed benchmark'} and B "
                           f"({b.directory}) of {bench_b or 'an unnamed benchmark'}: compare two results of one "
                           "benchmark")
    if ma.get("scoring", "retrieval") != mb.get("scoring", "retrieval"):
        raise CompareError(f"A and B were scored by different rules ({ma.get('scoring')} and {mb.get('scoring')}): "
                           "evaluate both with this version of the companion")
    files_a = (ma.get("data") or {}).get("files_sha256") or {}
    files_b = (mb.get("data") or {}).get("files_sha256") or {}
    for name in sorted(set(files_a) | set(files_b)):
        if files_a.get(name) != files_b.get(name):
            shown = [str(f.get(name))[:12] if f.get(name) else "absent" for f in (files_a, files_b)]
            raise CompareError(f"A ({a.directory}) and B ({b.directory}) did not read the same data: file {name} "
                               f"is {shown[0]} in A and {shown[1]} in B (sha256); evaluate both on the same data")
    sel_a, sel_b = ma.get("selection") or {}, mb.get("selection") or {}
    for key in sorted(set(sel_a) | set(sel_b)):
        if sel_a.get(key) != sel_b.get(key):
            raise CompareError(f"A ({a.directory}) and B ({b.directory}) selected different data: {key} is "
                               f"{_described(sel_a.get(key))} in A and {_described(sel_b.get(key))} in B; evaluate "
                               "both with the same selection")


def _frame_by_set(side: Side) -> dict[tuple, pd.Series]:
    """Set key → its queries' outcomes (a boolean Series indexed by query id); a query twice in a set is damage."""
    frame = side.outcomes.frame
    key = list(side.outcomes.row_key)
    out = {}
    for values, group in frame.groupby(key, sort=False) if key else [((), frame)]:
        values = values if isinstance(values, tuple) else (values,)
        twice = group["query_id"].duplicated()
        if twice.any():
            raise store.ResultsError(f"{store.PER_QUERY} in {side.directory} holds query "
                                     f"{group['query_id'][twice].iloc[0]!r} twice in one set: the result is damaged; "
                                     "evaluate again or delete its folder")
        out[tuple(values)] = group.set_index("query_id")["correct"].astype(bool)
    return out


def pair(a: pd.Series, b: pd.Series) -> tuple[paired.Table, int, int]:
    """The paired table of two sets' outcomes (query id → correct), and how many queries only A or only B has."""
    shared = a.index.intersection(b.index, sort=False)
    table = paired.Table.of(a.loc[shared].to_numpy(), b.loc[shared].to_numpy())
    return table, int(len(a.index.difference(b.index))), int(len(b.index.difference(a.index)))


def _row(table: paired.Table, only_in_a: int, only_in_b: int) -> dict:
    return {**paired.row(table), "n_only_in_a": only_in_a, "n_only_in_b": only_in_b,
            "n_unpaired": only_in_a + only_in_b}


def _pooled(side: Side) -> pd.Series:
    frame = side.outcomes.frame[side.outcomes.frame["pooled"]]
    ids = frame[list(side.outcomes.row_key)].astype(str).agg("\x1f".join, axis=1) + "\x1e" + frame["query_id"]
    return pd.Series(frame["correct"].astype(bool).to_numpy(), index=ids.to_numpy())


def compare(a: str | os.PathLike, b: str | os.PathLike, tie_policy: str = "pessimistic") -> Comparison:
    """B against A, paired by query: one row per set of A's summary, then one pooled row (see the module)."""
    if tie_policy not in TIE_POLICIES:
        raise CompareError(f"tie_policy must be one of {', '.join(TIE_POLICIES)}, got {tie_policy!r}")
    side_a, side_b = read_side(a, tie_policy, "A"), read_side(b, tie_policy, "B")
    same_data(side_a, side_b)
    key = list(side_a.outcomes.row_key)
    sets_a, sets_b = _frame_by_set(side_a), _frame_by_set(side_b)
    empty = pd.Series([], dtype=bool)
    rows = []
    for values in side_a.summary[key].itertuples(index=False, name=None) if key else [()]:
        values = tuple(key_text(v) for v in values)
        table, only_a, only_b = pair(sets_a.get(values, empty), sets_b.get(values, empty))
        rows.append({"scope": "set", **dict(zip(key, values)), **_row(table, only_a, only_b)})
    for k, adjusted in zip(range(len(rows)), paired.holm([r["p_value"] for r in rows])):
        rows[k]["p_holm"] = adjusted
    table, only_a, only_b = pair(_pooled(side_a), _pooled(side_b))
    rows.append({"scope": POOLED, **{k: "" for k in key}, **_row(table, only_a, only_b), "p_holm": math.nan})
    out = pd.DataFrame(rows)
    out["model_a"], out["model_b"], out["tie_policy"] = side_a.model, side_b.model, tie_policy
    out["interval"], out["test"] = paired.INTERVAL_METHOD, paired.TEST_METHOD
    out = out[[*LABEL_COLUMNS[:1], *key, *STAT_COLUMNS, *LABEL_COLUMNS[1:]]]
    bench = benchmarks.get(side_a.manifest["benchmark"]).name if side_a.manifest.get("benchmark") else ""
    return Comparison(out, tuple(key), bench, side_a.model, side_b.model, tie_policy, side_a.outcomes.pooled_means)


def set_label(row: dict, key) -> str:
    """A set's name from its key values (the ones that say something): ``hn_type=atom complexity=4``."""
    if row.get("scope") == POOLED:
        return POOLED
    shown = [f"{k}={row[k]}" for k in key if key_text(row.get(k)) not in ("",)]
    return " ".join(shown) or "all"


def telling_key(result: Comparison) -> tuple:
    """The key columns whose value differs between the sets (one that every set shares names none of them)."""
    sets = result.sets
    return tuple(k for k in result.row_key if sets[k].astype(str).nunique() > 1) or result.row_key


def p_text(p: float) -> str:
    """``= 0.54``, ``= 3.0e-32``, or ``< 1e-300`` where the binomial tail underflows a double (``= –``: no test)."""
    if math.isnan(p):
        return "= –"
    if p == 0.0:
        return "< 1e-300"
    return f"= {p:.2g}" if p >= 1e-4 else f"= {p:.1e}"


def summary_lines(result: Comparison) -> list[str]:
    """One terminal line per set (and the pooled one): B − A with its interval, the counts and the p-values."""
    lines = [f"B = {result.b} against A = {result.a} ({result.benchmark}; ties {result.tie_policy}; "
             f"95% interval: {paired.INTERVAL_METHOD}; p: {paired.TEST_METHOD}, Holm-adjusted over the sets)"]
    for row in result.table.to_dict("records"):
        name = set_label(row, telling_key(result))
        if not row["n_paired"]:
            lines.append(f"{name}: no paired query ({row['n_unpaired']} unpaired)")
            continue
        holm = "" if math.isnan(row["p_holm"]) else f", Holm p {p_text(row['p_holm'])}"
        lines.append(f"{name}: B − A = {row['diff_pp']:+.2f} points [{row['diff_ci_low']:+.2f}, "
                     f"{row['diff_ci_high']:+.2f}] over {row['n_paired']} paired queries (only A {row['only_a']}, "
                     f"only B {row['only_b']}; unpaired {row['n_unpaired']}); p {p_text(row['p_value'])}{holm}")
    return lines


def _queries(n: int, ratio: float) -> float:
    """⌈n × ratio²⌉, the product first rounded to 9 decimals: where the two widths are equal in exact arithmetic
    (no discordant query one way), a last-bit difference in an interval would otherwise move the count by one."""
    return math.ceil(round(n * ratio ** 2, 9)) if ratio == ratio else math.nan


def both_ways(result: Comparison) -> pd.DataFrame:
    """Per compared row (sets, then pooled): the same difference with its paired interval, with the interval two
    independent samples of the same size would give (Newcombe, unpaired), and with each model's own Wilson
    interval (whether they overlap); the widths, and how many queries the independent designs would need to be as
    decisive as the paired one (widths scale as 1/√n): ``queries_to_match`` n × (independent / paired width)², and
    ``queries_to_separate`` n × ((A's width + B's width) / paired width)², for the two own intervals to part as
    the paired interval leaves zero."""
    rows = []
    for row in result.table.to_dict("records"):
        if not row["n_paired"]:
            continue
        t = paired.Table(row["a_correct"] - row["only_a"], row["only_a"], row["only_b"],
                         row["n_paired"] - row["a_correct"] - row["only_b"])
        low, high = paired.independent_interval(t)
        width_p, width_i = row["diff_ci_high"] - row["diff_ci_low"], high - low
        a_low, a_high = uncertainty.wilson(row["a_correct"], row["n_paired"])
        b_low, b_high = uncertainty.wilson(row["b_correct"], row["n_paired"])
        ratio = width_i / width_p if width_p > 0 else math.nan
        own = ((a_high - a_low) + (b_high - b_low)) / width_p if width_p > 0 else math.nan
        rows.append({"label": set_label(row, telling_key(result)), "n_paired": row["n_paired"],
                     "diff_pp": row["diff_pp"],
                     "diff_ci_low": row["diff_ci_low"], "diff_ci_high": row["diff_ci_high"],
                     "independent_low": low, "independent_high": high, "a_low": a_low, "a_high": a_high,
                     "b_low": b_low, "b_high": b_high,
                     "own_intervals_overlap": bool(a_high >= b_low and b_high >= a_low),
                     "paired_excludes_zero": bool(row["diff_ci_low"] > 0 or row["diff_ci_high"] < 0),
                     "paired_width": width_p, "independent_width": width_i, "width_ratio": ratio,
                     "queries_to_match": _queries(row["n_paired"], ratio),
                     "queries_to_separate": _queries(row["n_paired"], own)})
    return pd.DataFrame(rows)
