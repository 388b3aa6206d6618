"""Near-ties: queries whose rank is decided below the margin by which devices may differ."""
from __future__ import annotations

import numpy as np

import helpers
from crepe_utils import metrics


def _brute_force(queries, tau):
    out = []
    for s in queries:
        out.append(any(0 < abs(n - s[0]) < tau for n in s[1:]))
    return out


def test_near_ties_against_a_plain_loop():
    rng = np.random.default_rng(3)
    queries = []
    for _ in range(300):
        s = rng.normal(size=int(rng.integers(1, 8))).astype(np.float32)
        if len(s) > 1 and rng.random() < 0.3:
            s[1] = s[0] + rng.choice([-1, 1]) * rng.choice([3e-5, 2e-4, 0.0])   # near, far, exact
        queries.append(s)
    flat = np.concatenate(queries)
    offsets = np.concatenate([[0], np.cumsum([len(q) for q in queries])])
    got = metrics.near_ties_from_flat(flat, offsets, tau=1e-4)
    assert got.tolist() == _brute_force([q.astype(np.float64) for q in queries], 1e-4)
    assert 10 < got.sum() < 300                              # the fixture holds near-ties and others
    exact_only = [i for i, q in enumerate(queries) if len(q) > 1 and q[1] == q[0]
                  and not any(0 < abs(n - q[0]) < 1e-4 for n in q[2:])]
    assert exact_only and not got[exact_only].any()         # an exact tie is not a near-tie


def test_summary_counts_near_ties(loaded_tiny, synthetic_root):
    from crepe_utils.benchmarks.crepe import queries as D
    from crepe_utils.engine import core as engine
    from crepe_utils.imagesets.visual_genome import ImageIndex
    data_dir, image_dir = synthetic_root
    qs = D.load_productivity(data_dir, ["atom"], [4])
    res = engine.run(loaded_tiny, qs.queries, ImageIndex(image_dir), cache_dir=None)
    res.scores[res.offsets[0] + 1] = res.scores[res.offsets[0]] + np.float32(1e-5)   # make query 0 a near-tie
    summary = helpers.retrieval_summary(res, qs, n_boot=10)
    assert summary["n_near_tie_queries"].tolist() == [1]
