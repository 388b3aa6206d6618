"""Intervals for published numbers, against references computed here without scipy's beta quantiles."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from crepe_utils.analysis import uncertainty as U


def _binom_cdf(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, j) * p ** j * (1 - p) ** (n - j) for j in range(k + 1))


def _clopper_pearson_by_bisection(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The exact interval's definition: P(X ≥ k | low) = α/2 and P(X ≤ k | high) = α/2, solved by bisection."""
    def solve(f, lo=0.0, hi=1.0):
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        return (lo + hi) / 2
    low = 0.0 if k == 0 else solve(lambda p: alpha / 2 - (1 - _binom_cdf(k - 1, n, p)))
    high = 1.0 if k == n else solve(lambda p: _binom_cdf(k, n, p) - alpha / 2)
    return 100 * low, 100 * high


@pytest.mark.parametrize("k, n", [(7, 27), (0, 27), (27, 27), (248, 1258), (1, 400)])
def test_clopper_pearson_is_the_exact_interval(k, n):
    low, high = U.clopper_pearson(k, n)
    ref_low, ref_high = _clopper_pearson_by_bisection(k, n)
    assert low == pytest.approx(ref_low, abs=1e-6) and high == pytest.approx(ref_high, abs=1e-6)
    assert low <= 100 * k / n <= high


def test_wilson_and_newcombe_match_newcombe_1998():
    # Newcombe (1998), Statistics in Medicine 17:873, Table II, example (a): 56/70 against 48/80;
    # method 10 gives 0.0524 to 0.3339 for p1 − p2 = 0.2
    low, high = U.newcombe_difference(48, 80, 56, 70)           # p2 − p1 with p2 = 56/70
    assert low == pytest.approx(5.24, abs=0.01) and high == pytest.approx(33.39, abs=0.01)
    # Wilson: 81/263 (Newcombe's single-proportion example): 0.2553 to 0.3662
    wl, wh = U.wilson(81, 263)
    assert wl == pytest.approx(25.53, abs=0.01) and wh == pytest.approx(36.62, abs=0.01)


def _wilson_by_formula(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson (1927): the p with |p̂ − p| = z·sqrt(p(1 − p)/n), the two roots of a quadratic, in percent."""
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return 100 * (centre - half) / (1 + z * z / n), 100 * (centre + half) / (1 + z * z / n)


@pytest.mark.parametrize("k, n", [(0, 1), (1, 1), (0, 2), (1, 2), (2, 2), (0, 203), (203, 203), (3, 10), (399, 400)])
def test_the_edges_of_the_intervals(k, n):
    # Clopper-Pearson's closed forms at k = 0 and k = n: (α/2)^(1/n) and 1 − (α/2)^(1/n)
    low, high = U.clopper_pearson(k, n)
    if k == 0:
        assert low == 0.0 and high == pytest.approx(100 * (1 - 0.025 ** (1 / n)), abs=1e-9)
    if k == n:
        assert high == 100.0 and low == pytest.approx(100 * 0.025 ** (1 / n), abs=1e-9)
    assert (low, high) == pytest.approx(_clopper_pearson_by_bisection(k, n), abs=1e-6)
    wl, wh = U.wilson(k, n)
    ref_low, ref_high = _wilson_by_formula(k, n)
    assert wl == pytest.approx(max(ref_low, 0.0), abs=1e-9) and wh == pytest.approx(min(ref_high, 100.0), abs=1e-9)
    assert -1e-12 <= wl <= 100 * k / n + 1e-12 and 100 * k / n - 1e-12 <= wh <= 100.0 + 1e-12
    # Newcombe's method 10 from the two Wilson intervals (the difference of a proportion with itself straddles 0)
    d_low, d_high = U.newcombe_difference(k, n, k, n)
    assert d_low == pytest.approx(-math.hypot(100 * k / n - wl, wh - 100 * k / n), abs=1e-9)
    assert d_high == pytest.approx(math.hypot(wh - 100 * k / n, 100 * k / n - wl), abs=1e-9)
    with pytest.raises(ValueError):
        U.clopper_pearson(n + 1, n)
    with pytest.raises(ValueError):
        U.newcombe_difference(k, n, 1, 0)


def test_k_of_and_queries_needed():
    assert U.k_of(25.93, 27) == 7 and U.k_of(19.71, 1258) == 248
    # 56.00 → 59.00: N = 1.96² (0.56·0.44 + 0.59·0.41) / 0.03² = 2084.2…, so 2,085 queries per set
    assert U.queries_needed(56.0, 59.0) == 2085
    assert U.queries_needed(50.0, 50.0) == math.inf


def test_gap_table_with_and_without_counts():
    a = pd.DataFrame({"model": ["m", "u"], "r1": [25.93, 50.0], "N": [27, float("nan")]})
    b = pd.DataFrame({"model": ["m", "u"], "r1": [13.69, 53.0], "N": [1578, float("nan")]})
    gaps = U.gap_table(a, b, ["model"]).set_index("model")
    assert gaps.loc["m", "gap"] == pytest.approx(-12.24)
    assert gaps.loc["m", "gap_ci_low"] < 0 < gaps.loc["m", "gap_ci_high"] and gaps.loc["m", "exceeds"] is False
    assert pd.isna(gaps.loc["u", "exceeds"]) and gaps.loc["u", "n_needed"] == U.queries_needed(50.0, 53.0)
    shown = U.with_intervals(b)
    assert shown.loc[0, "k"] == 216 and pd.isna(shown.loc[1, "k"]) and pd.isna(shown.loc[1, "r1_ci_low"])
