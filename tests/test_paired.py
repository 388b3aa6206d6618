"""The paired statistics (crepe_utils.analysis.paired) against references written here: the exact McNemar
p-value as sums of math.comb, Holm's adjustment by hand on fixed p-values, Newcombe's paired interval from its
published formula with Wilson intervals computed here and from his paper's worked example.

Would catch: a one-sided or mid-p McNemar, a test on only_a instead of only_b that is not symmetric, m = 0 raising
or giving 0, Holm without the running maximum or without the cap at 1 (or Bonferroni), NaNs counted among the
tests, the unpaired interval used for paired data (wider), φ's sign flipped (the interval moves the wrong way).
"""
from __future__ import annotations

import math

import pytest

from crepe_utils.analysis import paired
from crepe_utils.analysis.paired import Table


def mcnemar_reference(only_a: int, only_b: int) -> float:
    m = only_a + only_b
    if m == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(m, i) for i in range(k + 1)) / 2 ** m
    return min(1.0, 2 * tail)


@pytest.mark.parametrize("only_a,only_b", [(0, 0), (0, 1), (1, 0), (3, 9), (9, 3), (0, 12), (12, 0), (5, 5),
                                            (40, 61), (7, 0), (250, 300)])
def test_exact_mcnemar_is_twice_the_smaller_binomial_tail(only_a, only_b):
    assert paired.mcnemar_exact(only_a, only_b) == pytest.approx(mcnemar_reference(only_a, only_b), rel=1e-9)


def test_mcnemar_known_values():
    assert paired.mcnemar_exact(0, 0) == 1.0                      # nothing discordant: no evidence
    assert paired.mcnemar_exact(0, 6) == pytest.approx(2 / 64)    # all six one way: 2 · (1/2)^6
    assert paired.mcnemar_exact(1, 5) == pytest.approx(2 * 7 / 64)
    assert paired.mcnemar_exact(3, 3) == 1.0


def test_holm_by_hand():
    # sorted: 0.01 (×4 = 0.04), 0.02 (×3 = 0.06), 0.03 (×2 = 0.06), 0.04 (×1 = 0.04 → running max 0.06)
    assert paired.holm([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert paired.holm([0.5, 0.4]) == pytest.approx([0.8, 0.8])    # 0.4·2 = 0.8; 0.5 → max(0.8, 0.5)
    assert paired.holm([0.9, 0.6, 0.7]) == pytest.approx([1.0, 1.0, 1.0])   # capped at 1
    out = paired.holm([0.01, float("nan"), 0.04])                 # a NaN is not a test: m = 2
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)
    assert paired.holm([]) == []


def test_table_from_outcomes():
    t = Table.of([1, 1, 0, 0, 1], [1, 0, 1, 0, 0])
    assert (t.both, t.only_a, t.only_b, t.neither, t.n) == (1, 2, 1, 1, 5)
    assert (t.a_correct, t.b_correct) == (3, 2)
    assert paired.difference(t) == pytest.approx(-20.0)


def _wilson(k, n, z=1.959963984540054):
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe10_reference(e, f, g, h):
    """Newcombe (1998), paired data, method 10, in his notation: e both, f first only, g second only, h
    neither; the interval for the first's proportion minus the second's, as proportions."""
    n = e + f + g + h
    p1, p2 = (e + f) / n, (e + g) / n
    l1, u1 = _wilson(e + f, n)
    l2, u2 = _wilson(e + g, n)
    denom = (e + f) * (g + h) * (e + g) * (f + h)
    phi = 0.0 if denom == 0 else (e * h - f * g) / math.sqrt(denom)
    d1 = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    e1 = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return p1 - p2 - d1, p1 - p2 + e1


@pytest.mark.parametrize("both,only_a,only_b,neither", [(36, 2, 12, 0), (5, 0, 0, 5), (10, 0, 7, 3),
                                                        (100, 30, 45, 25), (0, 0, 4, 0), (3, 3, 3, 3)])
def test_newcombe_paired_matches_the_formula(both, only_a, only_b, neither):
    t = Table(both, only_a, only_b, neither)
    # B − A: Newcombe's "first" is B (e both, f B only, g A only)
    low, high = newcombe10_reference(both, only_b, only_a, neither)
    got = paired.newcombe_paired(t)
    assert got == pytest.approx((100 * low, 100 * high), abs=1e-9)
    assert got[0] <= paired.difference(t) <= got[1]


def test_newcombe_paired_reproduces_the_paper_example():
    # Newcombe 1998's worked example of paired data: e = 36 both, f = 12 first only, g = 2 second only, h = 0,
    # n = 50; method 10 gives 0.0569 to 0.3404 for the first's proportion minus the second's
    low, high = paired.newcombe_paired(Table(36, 2, 12, 0))
    assert (low, high) == pytest.approx((5.69, 34.04), abs=0.01)


def test_paired_interval_is_narrower_than_independent_when_models_agree():
    t = Table(400, 20, 45, 535)
    p_low, p_high = paired.newcombe_paired(t)
    i_low, i_high = paired.independent_interval(t)
    assert p_high - p_low < 0.6 * (i_high - i_low)
    assert p_low > 0 > i_low          # the same difference: paired excludes 0, independent does not


def test_empty_and_one_way_rows():
    empty = paired.row(Table(0, 0, 0, 0))
    assert empty["n_paired"] == 0 and math.isnan(empty["diff_pp"]) and math.isnan(empty["p_value"])
    agree = paired.row(Table(7, 0, 0, 3))             # only_a + only_b = 0
    assert agree["p_value"] == 1.0 and agree["diff_pp"] == 0.0
    assert agree["diff_ci_low"] < 0 < agree["diff_ci_high"]
    one_way = paired.row(Table(0, 0, 10, 0))            # all discordant one way, B always right
    assert one_way["diff_pp"] == 100.0 and one_way["p_value"] == pytest.approx(2 / 1024)
    assert one_way["diff_ci_high"] == 100.0 and one_way["diff_ci_low"] > 0
