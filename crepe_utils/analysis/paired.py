"""Two models on the same queries: the paired difference of their accuracies, its interval and its test.

Each query is a pair of outcomes (A correct or not, B correct or not). Only the discordant queries tell the two
apart: ``only_a`` (A right, B wrong) and ``only_b`` (B right, A wrong). The difference B − A is
``(only_b − only_a) / n`` and

- its 95% interval is **Newcombe's hybrid score interval for paired proportions** (Newcombe 1998, "Improved
  confidence intervals for the difference between binomial proportions based on paired data", Statistics in
  Medicine 17:2635-2650, method 10): the two Wilson intervals combined with the correlation φ of the 2×2 table;
- its p-value is the **exact McNemar test**: ``only_b`` among the ``only_a + only_b`` discordant queries is
  binomial with probability 1/2 when the two models are equally accurate (two-sided, scipy's ``binomtest``;
  1 when no query is discordant);
- across the sets of one comparison, p-values are adjusted by **Holm's step-down procedure** (Holm 1979).

Two independent intervals (one per model, each from its own k of n) ignore that the queries are shared: the
paired interval is narrower whenever the models agree on most queries, as models on one benchmark do
(:func:`independent_interval` gives the unpaired one, for the comparison). All numbers are in percentage points.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..lazy import lazy
from . import uncertainty

stats = lazy("scipy.stats")

LEVEL = uncertainty.LEVEL
#: what the CSV and the figure call the interval
INTERVAL_METHOD = "Newcombe's hybrid score interval for paired proportions (1998, method 10)"
TEST_METHOD = "exact McNemar test (binomial, two-sided)"
ADJUSTMENT_METHOD = "Holm's step-down adjustment"
#: where each method comes from
CITATIONS = {
    "interval": "Newcombe, Improved confidence intervals for the difference between binomial proportions based on "
                "paired data, Statistics in Medicine 17(22):2635-2650, 1998",
    "test": "McNemar, Note on the sampling error of the difference between correlated proportions or percentages, "
            "Psychometrika 12(2):153-157, 1947 (its exact, binomial form)",
    "adjustment": "Holm, A simple sequentially rejective multiple test procedure, Scandinavian Journal of "
                  "Statistics 6(2):65-70, 1979",
}


def methods_note() -> str:
    """One Markdown paragraph naming the interval, the test and the adjustment, with their sources."""
    return (f"**Method.** Per set, B − A in R@1 points with a 95% interval by {INTERVAL_METHOD} "
            f"({CITATIONS['interval']}); the {TEST_METHOD}: the queries only B gets right among the queries only one "
            f"of the two gets right, against a binomial at 1/2 ({CITATIONS['test']}); {ADJUSTMENT_METHOD} over the "
            f"sets of a comparison ({CITATIONS['adjustment']}). Ties count against a model (pessimistic).")


@dataclass(frozen=True)
class Table:
    """A paired 2×2 table: queries both got right, only A, only B, neither."""

    both: int
    only_a: int
    only_b: int
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.only_a + self.only_b + self.neither

    @property
    def a_correct(self) -> int:
        return self.both + self.only_a

    @property
    def b_correct(self) -> int:
        return self.both + self.only_b

    @classmethod
    def of(cls, a, b) -> "Table":
        """The table of two equally long sequences of booleans (query i: A's outcome a[i], B's b[i])."""
        a, b = [bool(x) for x in a], [bool(x) for x in b]
        if len(a) != len(b):
            raise ValueError(f"paired outcomes need equal lengths, got {len(a)} and {len(b)}")
        pairs = list(zip(a, b))
        return cls(pairs.count((True, True)), pairs.count((True, False)), pairs.count((False, True)),
                   pairs.count((False, False)))


def difference(t: Table) -> float:
    """B's accuracy minus A's, in points (NaN for an empty table)."""
    return 100.0 * (t.only_b - t.only_a) / t.n if t.n else math.nan


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: ``only_b`` of the discordant queries against Binomial(m, 1/2)."""
    m = only_a + only_b
    if m == 0:
        return 1.0
    return float(min(1.0, stats.binomtest(only_b, m, 0.5).pvalue))


def holm(p_values) -> list[float]:
    """Holm's adjusted p-values, in the order given; a NaN stays NaN and is not counted among the tests."""
    p = [float(x) for x in p_values]
    tested = sorted((i for i in range(len(p)) if not math.isnan(p[i])), key=lambda i: p[i])
    m = len(tested)
    out = [math.nan] * len(p)
    running = 0.0
    for rank, i in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def newcombe_paired(t: Table, level: float = LEVEL) -> tuple[float, float]:
    """Newcombe's method-10 interval for B − A on paired data, in points ((NaN, NaN) for an empty table)."""
    if t.n == 0:
        return math.nan, math.nan
    pa, pb = 100.0 * t.a_correct / t.n, 100.0 * t.b_correct / t.n
    la, ua = uncertainty.wilson(t.a_correct, t.n, level)
    lb, ub = uncertainty.wilson(t.b_correct, t.n, level)
    phi = _phi(t)
    d = pb - pa
    low = math.sqrt(max(0.0, (pb - lb) ** 2 - 2 * phi * (pb - lb) * (ua - pa) + (ua - pa) ** 2))
    high = math.sqrt(max(0.0, (ub - pb) ** 2 - 2 * phi * (ub - pb) * (pa - la) + (pa - la) ** 2))
    return max(-100.0, d - low), min(100.0, d + high)


def _phi(t: Table) -> float:
    """The correlation of the two outcomes (0 when a margin is empty: the formula's denominator vanishes)."""
    margins = (t.b_correct * (t.n - t.b_correct) * t.a_correct * (t.n - t.a_correct))
    if margins == 0:
        return 0.0
    # rows: B right / wrong; columns: A right / wrong
    return (t.both * t.neither - t.only_b * t.only_a) / math.sqrt(margins)


def independent_interval(t: Table, level: float = LEVEL) -> tuple[float, float]:
    """The interval for B − A had the two been measured on separate queries (Newcombe's unpaired method 10)."""
    if t.n == 0:
        return math.nan, math.nan
    return uncertainty.newcombe_difference(t.a_correct, t.n, t.b_correct, t.n, level)


def row(t: Table, level: float = LEVEL) -> dict:
    """The numbers of one compared set: counts, difference, paired interval, exact McNemar p."""
    low, high = newcombe_paired(t, level)
    return {"n_paired": t.n, "a_correct": t.a_correct, "b_correct": t.b_correct, "only_a": t.only_a,
            "only_b": t.only_b, "diff_pp": difference(t), "diff_ci_low": low, "diff_ci_high": high,
            "p_value": mcnemar_exact(t.only_a, t.only_b) if t.n else math.nan}
