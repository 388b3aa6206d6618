"""Ranks, recall and intervals against plain reference computations."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from crepe_utils import metrics
from crepe_utils.analysis.correlation import r_squared, r_squared_with_uncertainty


def test_ranks_match_a_naive_loop_with_ties():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 4, size=(500, 6)).astype(float)   # many exact ties
    r = metrics.ranks_from_scores(scores)
    for i, row in enumerate(scores):
        assert r.pessimistic[i] == 1 + sum(s >= row[0] for s in row[1:])
        assert r.optimistic[i] == 1 + sum(s > row[0] for s in row[1:])
        assert r.n_ties[i] == sum(s == row[0] for s in row[1:])


def test_ranks_with_padding_mask():
    scores = np.array([[0.5, 0.9, 0.1, -np.inf], [0.5, 0.2, 0.5, 0.7]])
    mask = np.array([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=bool)
    r = metrics.ranks_from_scores(scores, mask)
    assert r.pessimistic.tolist() == [2, 3] and r.optimistic.tolist() == [2, 2]


def test_recall_and_ranks_summary():
    ranks = np.array([1, 1, 2, 3, 5, 11])
    assert metrics.recall_at_k(ranks, 1) == pytest.approx(100 * 2 / 6)
    assert metrics.recall_at_k(ranks, 5) == pytest.approx(100 * 5 / 6)
    # the official median: floor(median(0-based)) + 1
    assert metrics.median_rank(ranks) == np.floor(np.median(ranks - 1)) + 1 == 2
    s = metrics.set_metrics(metrics.Ranks(ranks, ranks - (ranks > 1), (ranks > 1).astype(int)), np.full(6, 6))
    assert s["r1"] == pytest.approx(100 * 2 / 6) and s["r1_optimistic"] == pytest.approx(100 * 3 / 6)
    assert s["chance_r1"] == pytest.approx(100 / 6) and s["n_tied_queries"] == 4
    assert np.isnan(metrics.recall_at_k(np.array([]), 1))


def test_bootstrap_intervals():
    rng = np.random.default_rng(1)
    hits = 100.0 * (rng.random(2000) < 0.3)
    lo, hi = metrics.bootstrap_mean_ci(hits, n_boot=4000)
    se = hits.std(ddof=1) / np.sqrt(len(hits))
    assert lo < hits.mean() < hi
    assert hi - lo == pytest.approx(2 * 1.96 * se, rel=0.1)    # matches the normal approximation
    lo2, hi2 = metrics.bootstrap_mean_ci(hits[:200], n_boot=4000)
    assert hi2 - lo2 > 2 * (hi - lo)                            # fewer queries, wider interval
    a, b = 100.0 * (rng.random(1500) < 0.5), 100.0 * (rng.random(1500) < 0.4)
    dlo, dhi = metrics.bootstrap_delta_ci(a, b, n_boot=4000)
    assert dlo < b.mean() - a.mean() < dhi < 0


def test_the_one_bootstrap_resamples_rows_and_takes_percentiles(monkeypatch):
    values = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0])
    # resample: the statistic sees rows drawn with replacement, in the generator's order, chunk after chunk
    seen = metrics.resample(len(values), 50, np.random.default_rng(4), lambda idx: values[idx].mean(axis=1))
    reference = np.random.default_rng(4).integers(0, len(values), size=(50, len(values)))
    assert np.array_equal(seen, np.array([sum(values[i] for i in row) / len(row) for row in reference]))
    monkeypatch.setattr(metrics, "RESAMPLE_CHUNK", 3 * len(values))    # 3 resamples per chunk: 17 chunks
    chunked = metrics.resample(len(values), 50, np.random.default_rng(4), lambda idx: np.stack([idx.min(1), idx.max(1)]))
    g = np.random.default_rng(4)
    rows = np.concatenate([g.integers(0, len(values), size=(min(3, 50 - s), len(values))) for s in range(0, 50, 3)])
    assert chunked.shape == (2, 50) and np.array_equal(chunked, np.stack([rows.min(1), rows.max(1)]))
    # percentile_interval: linear interpolation between order statistics (draws 0..99: 2.5% at 2.475, 97.5% at 96.525)
    low, high = metrics.percentile_interval(np.arange(100.0)[::-1])
    assert low == pytest.approx(2.475) and high == pytest.approx(96.525)
    assert metrics.percentile_interval(np.arange(100.0), level=0.5) == pytest.approx((24.75, 74.25))
    # resample_proportion: a resample of k ones among n values has k* ~ Binomial(n, k/n) ones
    draws = metrics.resample_proportion(30, 100, 20_000, np.random.default_rng(5), scale=100.0)
    assert draws.mean() == pytest.approx(30.0, abs=0.2) and draws.std() == pytest.approx(np.sqrt(0.3 * 0.7 / 100) * 100, rel=0.05)
    assert set(metrics.resample_proportion(0, 10, 100, np.random.default_rng(5))) == {0.0}
    assert set(metrics.resample_proportion(10, 10, 100, np.random.default_rng(5))) == {1.0}


def test_r_squared_equals_pearson_squared():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=7), rng.normal(size=7)
    assert r_squared(x, y) == pytest.approx(stats.pearsonr(x, y)[0] ** 2)
    assert np.isnan(r_squared([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ValueError):
        r_squared([1, 2], [1, 2])


def test_r_squared_interval_and_leave_one_out():
    x = np.array([32.7, 34.8, 36.45, 62.96, 67.07, 69.21, 72.77])
    y = np.array([43.35, 43.26, 39.26, 55.32, 57.18, 57.95, 59.11])
    res = r_squared_with_uncertainty(x, y, n_boot=3000)
    assert res.ci_low <= res.r2 <= res.ci_high and res.loo_min <= res.r2 <= res.loo_max
    loo = [r_squared(np.delete(x, i), np.delete(y, i)) for i in range(7)]
    assert res.loo_min == pytest.approx(min(loo)) and res.loo_max == pytest.approx(max(loo))


def _brute_force_expected_recall(scores: list[list[float]], k: int) -> float:
    """Recall@K (%) averaged over every order of each query's candidates that sorts the scores (descending) and
    puts tied candidates in any order: each such order equally likely, as random tie-breaking makes them."""
    from fractions import Fraction
    from itertools import permutations
    total = Fraction(0)
    for row in scores:
        orders = [p for p in permutations(range(len(row)))
                  if all(row[p[i]] >= row[p[i + 1]] for i in range(len(p) - 1))]
        total += Fraction(sum(p.index(0) < k for p in orders), len(orders))
    return float(100 * total / len(scores))


def test_expected_recall_under_random_ties_is_exact_against_every_order():
    cases = [
        [[1.0, 1.0, 1.0, 1.0, 1.0]],                     # all tied: chance, 1/5
        [[0.5, 0.9, 0.5, 0.5], [0.2, 0.1, 0.1, 0.3]],    # one above then three tied; two tied below one above
        [[0.7, 0.7, 0.1], [0.9, 0.1, 0.2], [0.1, 0.4, 0.1, 0.1, 0.1, 0.1]],
        [[2.0, 3.0, 3.0, 2.0, 2.0, 1.0]],
    ]
    for scores in cases:
        for k in (1, 2, 3, 5):
            ranks = [metrics.ranks_from_scores(np.array([row])) for row in scores]
            joined = metrics.Ranks(*(np.concatenate([getattr(r, f) for r in ranks])
                                     for f in ("pessimistic", "optimistic", "n_ties")))
            assert metrics.expected_recall_at_k(joined, k) == pytest.approx(_brute_force_expected_recall(scores, k)), (scores, k)
    everything_tied = metrics.ranks_from_scores(np.zeros((4, 6)))
    assert metrics.recall_at_k(everything_tied.pessimistic, 1) == 0.0            # strict: never first
    assert metrics.recall_at_k(everything_tied.optimistic, 1) == 100.0           # optimistic: always first
    assert metrics.expected_recall_at_k(everything_tied, 1) == pytest.approx(100 / 6)   # random ties: chance
    assert np.isnan(metrics.expected_recall_at_k(metrics.ranks_from_scores(np.zeros((0, 3))), 1))
