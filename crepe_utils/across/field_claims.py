"""What vl_compo's 202-checkpoint table (:mod:`crepe_utils.field`) says, checked: its granularity against the
released data, its agreement with the benchmarks' own tables, the papers' ImageNet claims at its scale, and the
blind scorers among its checkpoints.

``check_granularity``        per benchmark: every value is k/N for the released count (or the sources disagree),
                             then what a benchmark adds (its ``field_table.check_granularity_of_parts``)
``check_agreements``         each benchmark's own publications against the table (its ``field_table`` module)
``check_papers_at_scale``    the papers' ImageNet numbers against the field's 194 pretrained checkpoints
``check_blind``              text-only scorers beat whole parts of the field

Each takes the tables it checks as arguments (defaults: computed from the carried table and the pinned counts; the
blind rows from the released data, ``needs data`` without them), so a test can hand it wrong numbers and watch it
fail. A row fails where the fault would be ours (a carried value that is not k/N, a claim of ours the numbers
contradict); a difference between vl_compo's table and a paper, or the data it released, is ``sources disagree``,
and a paper's number that does not hold over the field's checkpoints ``differs at scale``, each with its evidence.
"""
from __future__ import annotations

import numpy as np

from .. import benchmarks, field
from ..claims.base import FAIL, NEEDS, PASS, SCALE, SOURCES, Check, Topic
from . import blind as blind_analysis
from . import field as F
from ..lazy import lazy

pd = lazy("pandas")

GROUP = "field"
#: the blind scorers the field's blind rows run: the fixed rules, the word prior, the bigram (total and per word)
SCORERS = ("negation", "length", "wordfreq", "bigram", "bigram-mean")


def _label(benchmark: str) -> str:
    """A benchmark's name in a claim: its title's name (ImageNet for the ImageNet column)."""
    return "ImageNet" if benchmark == "imagenet" else benchmarks.get(benchmark).title.split(" (")[0]


def _n(values) -> str:
    return " / ".join(f"{int(v):,}" for v in values)


# ------------------------------------------------------------------ granularity

def check_granularity(gran: pd.DataFrame | None = None) -> list[Check]:
    """Per benchmark: all values of each column are k/N for its released count (pass); for another single N
    each (the sources disagree: the table counts other items than the paper released); for no N (fail: the carried values are not the
    table's)."""
    gran = F.granularity() if gran is None else gran
    out = []
    for bench, g in gran.groupby("benchmark", sort=False):
        claim = f"vl_compo's {_label(bench)} values are k/N for the released item counts"
        paper = f"{len(g)} column{'s' * (len(g) > 1)} × {int(g['values'].iloc[0])} values"
        lost = g[g["common_n"].isna()]
        if len(lost):
            out.append(Check(claim, paper, "—", FAIL, "no N ≤ 60,000 of which all values are k/N: "
                             + ", ".join(lost["column"]) + " (the carried values are not the table's)", GROUP))
            continue
        off = g[g["fits_released"] < g["values"]]
        rejected = "; ".join(f"{field.part(r.column)}: {r.best_alternative}" for r in g.itertuples()
                             if r.best_alternative)
        if off.empty:
            out.append(Check(claim, paper, f"all fit N = {_n(g['released_n'])}", PASS,
                             f"each column's smallest common N is its released count; other item sets: "
                             f"{rejected}" if rejected else "each column's smallest common N is its released count",
                             GROUP))
            continue
        diff = ", ".join(f"{r.column} {int(r.common_n):,} ({int(r.common_n) - int(r.released_n):+,}; "
                         f"{int(r.fits_released)} of {int(r.values)} fit {int(r.released_n):,})" for r in off.itertuples())
        out.append(Check(claim, paper, f"N = {_n(off['common_n'])}; released {_n(off['released_n'])}", SOURCES,
                         f"every value is k/N for one N per column, not the released count: {diff}. Counted on other "
                         f"items than the release's; best other item sets: {rejected}", GROUP))
    return out


# ------------------------------------------------------------------ agreement with the benchmarks' own tables

def check_agreements(table: pd.DataFrame | None = None) -> list[Check]:
    """Each benchmark's own publications against the table (its ``field_table.check_agreement``), in the table's
    order."""
    table = field.table() if table is None else table
    out = []
    for name, module in F.own_comparisons().items():
        view = F.view(table, name)
        out += module.check_agreement(module.agreement(view), view)
    return out


# ------------------------------------------------------------------ the papers' claims at scale

def check_papers_at_scale(rows: pd.DataFrame | None = None) -> list[Check]:
    """Each published r or R² against ImageNet holds at scale when it (± its printed rounding) lies in the field's
    95% bootstrap interval over the 194 pretrained checkpoints (pass); otherwise it differs at scale: the number
    holds on the paper's models (the paper's own claim) but not over the field's checkpoints."""
    rows = F.paper_correlations() if rows is None else rows
    out = []
    for r in rows.itertuples():
        claim = f"{r.paper}: {r.statistic} against ImageNet ({r.paper_models} models) holds over the field"
        paper = f"{r.paper_value:.{r.paper_decimals}f}"
        if not np.isfinite([r.field, r.field_low, r.field_high]).all():
            out.append(Check(claim, paper, "—", FAIL, f"{r.column}: no correlation over the field", GROUP))
            continue
        pooled = " (the field pools HN-Swap over every complexity; CREPE's R² is at one n)" if r.kind == "r2" else ""
        detail = (f"{'holds' if r.holds else 'does not hold'} at scale: {r.field_n} pretrained checkpoints"
                  f"{pooled}; over the paper's {r.same_n} checkpoints in the field, {r.same:.2f} "
                  f"[{r.same_low:.2f}, {r.same_high:.2f}]")
        out.append(Check(claim, paper, f"{r.field:.2f} [{r.field_low:.2f}, {r.field_high:.2f}]",
                         PASS if r.holds else SCALE, detail, GROUP))
    return out


# ------------------------------------------------------------------ the blind scorers among the field

def _blind_claims() -> list[tuple[str, str, list[str], str]]:
    """(claim, scorer or "best", columns, "pretrained" or "all") of the blind rows: each benchmark's
    (its ``field_table.blind_claims``), in the table's order."""
    return [c for module in F.own_comparisons().values() for c in getattr(module, "blind_claims", lambda: [])()]


def _how_to_get(column: str) -> str:
    """How to get the released text a column's blind scorers read (its benchmark folder's ``blind.HOW_TO_GET``)."""
    module = blind_analysis.folders().get(benchmarks.FOLDER_OF[field.benchmark_of(column)])
    return getattr(module, "HOW_TO_GET", "its released text is not here")


def check_blind(placement: pd.DataFrame | None, table: pd.DataFrame | None = None) -> list[Check]:
    """The blind rows (:func:`_blind_claims`) from ``placement`` (:func:`crepe_utils.across.field.blind_placement`;
    None: no data). CREPE's numbers are on the released complexity files pooled, not the field's ``_all`` items:
    each row also says whether its claim survives the bound on the field's items."""
    table = field.table() if table is None else table
    pretrained = int((~table["fine_tuned"]).sum())
    out = []
    for claim, scorer, columns, among in _blind_claims():
        target = pretrained if among == "pretrained" else len(table)
        paper = f"{target} {'pretrained ' if among == 'pretrained' else ''}checkpoints"
        got = None if placement is None else placement[placement["column"].isin(columns)]
        if got is None or got.empty:
            how = _how_to_get(columns[0])
            out.append(Check(claim, paper, "—", NEEDS, f"no released text for these columns ({how})", GROUP))
            continue
        got = got[got["scorer"] == scorer] if scorer != "best" else F.best_blind(got)
        beats = "beats_pretrained" if among == "pretrained" else "beats"
        ok = len(got) == len(columns) and bool((got[beats] == target).all())
        ours = "; ".join(f"{field.part(r.column)} {r.value:.2f} (blind:{r.scorer}, beats {getattr(r, beats)})"
                         for r in got.itertuples())
        bound = [f"{field.part(r.column)} ≥ {r.bound_low:.2f}, beats {getattr(r, beats + '_at_bound', r.beats_at_bound)}"
                 for r in got.itertuples() if r.field_n > r.n]
        detail = (f"exact 95% intervals: " + "; ".join(f"{field.part(r.column)} [{r.ci_low:.2f}, {r.ci_high:.2f}] "
                                                      f"of {r.n:,}" for r in got.itertuples()))
        if bound:
            detail += ("; on the released complexity files pooled, not the field's _all items; on those, were they "
                       "a superset: " + "; ".join(bound))
        out.append(Check(claim, paper, ours or "—", PASS if ok else FAIL, detail, GROUP))
    return out


def blind_runs(data_dirs: dict | None = None) -> dict:
    """The blind scorers' runs :func:`crepe_utils.across.field.blind_counts` takes, from each benchmark's folder
    (``data_dirs``: folder name → data folder; others their default); a message in place of each without data."""
    return blind_analysis.load_runs(data_dirs, SCORERS)


# ------------------------------------------------------------------ the topic

def field_sections(data_dirs: dict | None = None, runs: dict | None = None) -> dict[str, list[Check]]:
    """``granularity``, ``agreement``, ``scale`` (from the carried table and the pinned counts) and ``blind``
    (from ``runs``, :func:`blind_runs`' output, or computed from the data folders)."""
    table = field.table()
    gran = F.granularity(table)
    runs = blind_runs(data_dirs) if runs is None else runs
    counted = F.blind_counts(runs)
    placement = F.blind_placement(counted, table) if len(counted) else None
    own = F.own_comparisons()
    more = [row for name, m in own.items() if hasattr(m, "check_granularity_of_parts")
            for row in m.check_granularity_of_parts(gran, F.view(table, name))]
    return {"granularity": check_granularity(gran) + more,
            "agreement": check_agreements(table),
            "scale": check_papers_at_scale(F.paper_correlations(table)),
            "blind": check_blind(placement, table)}


def field_checks(data_dirs: dict | None = None, runs: dict | None = None) -> list[Check]:
    """Notebook 10's checks, and ``make check``'s field topic."""
    return [row for rows in field_sections(data_dirs, runs).values() for row in rows]


TOPICS = {"field": Topic(field_checks, "10_field")}
ORDER = (("field", "granularity"), ("field", "agreement"), ("field", "scale"), ("field", "blind"))


def sections(results_dir=None, data_dirs=None) -> dict[tuple[str, str], list[Check]]:
    """The field's sections for ``make check``: (topic, section) → rows."""
    return {("field", name): rows for name, rows in field_sections(data_dirs).items()}
