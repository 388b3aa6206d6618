"""Intervals for published numbers: a Recall@1 printed without uncertainty is still k correct out of N.

Where N is known (the released file a published value was computed on: the k/N checks establish it),
``k = round(R@1 · N / 100)`` and the value gets an exact binomial (Clopper–Pearson) interval. Two
published values of independent query sets (SC against UC, n = 4 against n = 12, two models on one
subset are *not* independent and are not compared here) get Newcombe's interval for their difference,
built from the two Wilson intervals (Newcombe 1998, method 10): a gap "exceeds its interval" when that
interval excludes 0. Where N is not known, :func:`queries_needed` says how many queries per set the
gap would need before it could exceed its interval (normal approximation).

Every interval is in percentage points, like the values. The intervals themselves are statsmodels'
(``proportion_confint`` with ``method="beta"`` and ``"wilson"``, ``confint_proportions_2indep`` with
``method="newcomb"``, which is Newcombe's method 10); this module checks its arguments and scales to percent.
"""
from __future__ import annotations

import math

import numpy as np

from ..lazy import lazy

pd = lazy("pandas")
stats = lazy("scipy.stats")
proportion = lazy("statsmodels.stats.proportion")

LEVEL = 0.95


def k_of(r1: float, n: int) -> int:
    """The number of correct queries behind a Recall@1 (%) over ``n`` queries."""
    return int(round(float(r1) * n / 100.0))


def clopper_pearson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Exact binomial interval for k successes in n trials, in percent (the interval never leaves [0, 100])."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    low, high = proportion.proportion_confint(k, n, alpha=1 - level, method="beta")
    return 100.0 * float(low), 100.0 * float(high)


def clopper_pearson_or_nan(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """:func:`clopper_pearson`, or (nan, nan) for an empty set (n = 0): a table row with nothing to estimate."""
    return (float("nan"), float("nan")) if n == 0 else clopper_pearson(k, n, level)


def wilson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials, in percent."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    low, high = proportion.proportion_confint(k, n, alpha=1 - level, method="wilson")
    return 100.0 * float(low), 100.0 * float(high)


def newcombe_difference(k1: int, n1: int, k2: int, n2: int, level: float = LEVEL) -> tuple[float, float]:
    """Interval for p2 − p1 (percentage points) of two independent proportions (Newcombe's method 10)."""
    for k, n in ((k1, n1), (k2, n2)):
        if n <= 0 or not 0 <= k <= n:
            raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    low, high = proportion.confint_proportions_2indep(k2, n2, k1, n1, method="newcomb", compare="diff",
                                                     alpha=1 - level)
    return 100.0 * float(low), 100.0 * float(high)


def queries_needed(r1_a: float, r1_b: float, level: float = LEVEL) -> int:
    """Queries per set (the same N for both) at which the gap between two Recall@1 (%) would just exceed its
    interval, by the normal approximation: N = z² (p_a q_a + p_b q_b) / (p_b − p_a)²."""
    pa, pb = float(r1_a) / 100.0, float(r1_b) / 100.0
    if pa == pb:
        return math.inf
    z = stats.norm.ppf(1 - (1 - level) / 2)
    return int(math.ceil(z * z * (pa * (1 - pa) + pb * (1 - pb)) / (pb - pa) ** 2))


def with_intervals(df: pd.DataFrame, value: str = "r1", n: str = "N", level: float = LEVEL) -> pd.DataFrame:
    """``df`` with ``k``, ``ci_low`` and ``ci_high`` (Clopper–Pearson) for each row whose ``n`` is known
    (NaN where it is not)."""
    out = df.copy()
    rows = []
    for v, size in zip(out[value], out[n]):
        if pd.isna(size) or pd.isna(v):
            rows.append((pd.NA, np.nan, np.nan))
        else:
            k = k_of(v, int(size))
            rows.append((k, *clopper_pearson(k, int(size), level)))
    out["k"] = pd.array([r[0] for r in rows], dtype="Int64")
    out[f"{value}_ci_low"], out[f"{value}_ci_high"] = [r[1] for r in rows], [r[2] for r in rows]
    return out


def gap_table(a: pd.DataFrame, b: pd.DataFrame, keys: list[str], value: str = "r1", n: str = "N",
              level: float = LEVEL) -> pd.DataFrame:
    """Per row of ``keys``: the gap b − a of two published values of independent query sets, its Newcombe
    interval where both N are known (else the queries per set it would need, ``n_needed``), and whether it
    ``exceeds`` its interval (the interval excludes 0; NA where N is unknown)."""
    merged = a[keys + [value, n]].merge(b[keys + [value, n]], on=keys, suffixes=("_a", "_b"))
    rows = []
    for r in merged.to_dict("records"):
        va, vb, na, nb = r[f"{value}_a"], r[f"{value}_b"], r[f"{n}_a"], r[f"{n}_b"]
        row = {**{k: r[k] for k in keys}, "a": va, "b": vb, "gap": vb - va, "N_a": na, "N_b": nb}
        if pd.notna(na) and pd.notna(nb):
            low, high = newcombe_difference(k_of(va, int(na)), int(na), k_of(vb, int(nb)), int(nb), level)
            row.update(gap_ci_low=low, gap_ci_high=high, exceeds=bool(low > 0 or high < 0), n_needed=np.nan)
        else:
            row.update(gap_ci_low=np.nan, gap_ci_high=np.nan, exceeds=pd.NA, n_needed=queries_needed(va, vb, level))
        rows.append(row)
    return pd.DataFrame(rows)
