"""Ranks, Recall@K and confidence intervals: the arithmetic of image-to-text retrieval.

Conventions (one place, used everywhere):

* A query has candidates ``[positive, negative_1, ..., negative_h]`` and one score each.
* Ranks are **1-based**: rank 1 means the positive is on top.
* Ties are explicit. The *pessimistic* rank counts every negative scoring **at least** as high
  as the positive (a tie counts against the positive); the *optimistic* rank counts only those
  scoring strictly higher. They differ exactly when a negative ties the positive. The official
  CREPE code instead takes the position in ``torch.argsort(descending=True)``, whose order among
  equal scores is unspecified; its rank lies between the two.
* ``Recall@K`` is the percentage of queries with rank ≤ K. Mean rank is the mean of the 1-based
  ranks; median rank is ``floor(median(rank - 1)) + 1`` as in the official
  ``get_one2many_metrics``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RECALL_KS = (1, 3, 5, 10)


@dataclass(frozen=True)
class Ranks:
    """Per-query ranks of the positive, both tie conventions, and the tie counts."""

    pessimistic: np.ndarray   #: 1 + #negatives with score >= positive
    optimistic: np.ndarray    #: 1 + #negatives with score > positive
    n_ties: np.ndarray        #: #negatives with score == positive

    def __len__(self) -> int:
        return len(self.pessimistic)

    def select(self, tie_policy: str = "pessimistic") -> np.ndarray:
        if tie_policy not in ("pessimistic", "optimistic"):
            raise ValueError(f"tie_policy must be 'pessimistic' or 'optimistic', not {tie_policy!r}")
        return self.pessimistic if tie_policy == "pessimistic" else self.optimistic


def ranks_from_scores(scores: np.ndarray, mask: np.ndarray | None = None) -> Ranks:
    """Ranks of column 0 in each row of ``scores`` (queries × candidates).

    ``mask`` (same shape, bool) marks real candidates when rows have different candidate
    counts; padded entries are ignored. Comparisons are exact (no tolerance): two candidates tie
    only when their scores are bit-identical, which the engine guarantees for token-identical
    captions by encoding each distinct caption once.
    """
    scores = np.asarray(scores)
    if scores.ndim != 2 or scores.shape[1] < 1:
        raise ValueError(f"scores must be a 2-D array (queries × candidates), got shape {scores.shape}")
    pos = scores[:, :1]
    neg = scores[:, 1:]
    valid = np.ones_like(neg, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)[:, 1:]
    higher = ((neg > pos) & valid).sum(axis=1)
    equal = ((neg == pos) & valid).sum(axis=1)
    return Ranks(pessimistic=1 + higher + equal, optimistic=1 + higher, n_ties=equal)


def ranks_from_flat(scores: np.ndarray, offsets: np.ndarray) -> Ranks:
    """Ranks for queries stored flat: query i's scores are ``scores[offsets[i]:offsets[i+1]]``,
    positive first (variable candidate counts allowed). Same rules as :func:`ranks_from_scores`.
    """
    scores = np.asarray(scores)
    starts = np.asarray(offsets[:-1])
    counts = np.diff(offsets)
    if len(starts) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Ranks(empty, empty, empty)
    if (counts < 1).any():
        raise ValueError("every query needs at least its positive candidate")
    pos = np.repeat(scores[starts], counts)
    higher = np.add.reduceat((scores > pos).astype(np.int64), starts)
    equal = np.add.reduceat((scores == pos).astype(np.int64), starts) - 1   # minus the positive itself
    return Ranks(pessimistic=1 + higher + equal, optimistic=1 + higher, n_ties=equal)


#: Score margin below which a rank may differ between devices, kernels or batch compositions.
#: fp32 cosine scores move by about 1e-7 with the batch a text is encoded in (CPU); 1e-4 leaves
#: room for other devices' kernels. TF32, bf16 and fp16 move scores by far more than this.
NEAR_TIE_TAU = 1e-4


def near_ties_from_flat(scores: np.ndarray, offsets: np.ndarray, tau: float = NEAR_TIE_TAU) -> np.ndarray:
    """Per query: whether a negative scores within ``tau`` of the positive without tying it exactly.

    Such a query's rank is decided by the last bits of its scores, so it may change on another
    device; exact ties (token-identical captions) cannot, and are counted separately.
    """
    scores = np.asarray(scores, dtype=np.float64)
    starts = np.asarray(offsets[:-1])
    if len(starts) == 0:
        return np.zeros(0, dtype=bool)
    counts = np.diff(offsets)
    gap = np.abs(scores - np.repeat(scores[starts], counts))
    near = ((gap > 0) & (gap < tau)).astype(np.int64)
    return np.add.reduceat(near, starts) > 0


def recall_at_k(ranks: np.ndarray, k: int) -> float:
    """Percentage of queries whose rank is at most ``k``."""
    ranks = np.asarray(ranks)
    if len(ranks) == 0:
        return float("nan")
    return float(100.0 * np.mean(ranks <= k))


def expected_recall_at_k(ranks: Ranks, k: int) -> float:
    """Recall@K (%) expected if ties were broken at random, computed exactly (no sampling).

    A query whose positive ties ``t`` negatives sits, under a uniformly random order of the ``t + 1`` tied
    candidates, at each rank from its optimistic rank to its pessimistic rank with probability ``1 / (t + 1)``;
    it counts ``min(max(k − optimistic + 1, 0), t + 1) / (t + 1)`` towards Recall@K. This is the convention the
    chance line (1 / candidates) assumes, so a scorer that ties everything scores chance here, 0 strictly and
    100 optimistically."""
    optimistic = np.asarray(ranks.optimistic, dtype=np.int64)
    if len(optimistic) == 0:
        return float("nan")
    tied = np.asarray(ranks.n_ties, dtype=np.int64) + 1
    return float(100.0 * np.mean(np.clip(k - optimistic + 1, 0, tied) / tied))


def median_rank(ranks: np.ndarray) -> float:
    """``floor(median(rank - 1)) + 1``, the official code's median rank."""
    ranks = np.asarray(ranks)
    if len(ranks) == 0:
        return float("nan")
    return float(np.floor(np.median(ranks - 1)) + 1)


def set_metrics(ranks: Ranks, n_candidates: np.ndarray, tie_policy: str = "pessimistic") -> dict:
    """Every metric of one retrieval set (one model × benchmark × HN type × split/complexity)."""
    chosen = ranks.select(tie_policy)
    n_candidates = np.asarray(n_candidates)
    out = {
        "n_queries": int(len(chosen)),
        "n_candidates": float(np.mean(n_candidates)) if len(n_candidates) else float("nan"),
        "chance_r1": float(100.0 * np.mean(1.0 / n_candidates)) if len(n_candidates) else float("nan"),
    }
    for k in RECALL_KS:
        out[f"r{k}"] = recall_at_k(chosen, k)
    out["r1_optimistic"] = recall_at_k(ranks.optimistic, 1)
    out["r1_pessimistic"] = recall_at_k(ranks.pessimistic, 1)
    out["mean_rank"] = float(np.mean(chosen)) if len(chosen) else float("nan")
    out["median_rank"] = median_rank(chosen)
    out["n_tied_queries"] = int(np.sum(ranks.n_ties > 0))
    out["tie_policy"] = tie_policy
    return out


# ------------------------------------------------------------------------ confidence intervals

#: the most row indices :func:`resample` draws at once (memory stays bounded for large sets)
RESAMPLE_CHUNK = 20_000_000


def resample(n: int, n_boot: int, rng: np.random.Generator, statistic) -> np.ndarray:
    """``statistic`` over ``n_boot`` resamples of ``n`` rows drawn with replacement: the package's one bootstrap.

    ``statistic(idx)`` gets an (m, n) array of row indices, m resamples, and returns m values (or a (k, m) array:
    k values per resample). The indices are drawn in chunks of at most ``RESAMPLE_CHUNK``, one after the other,
    so a generator gives the same resamples whatever the statistic."""
    chunk = max(1, min(n_boot, RESAMPLE_CHUNK // max(n, 1)))
    return np.concatenate([statistic(rng.integers(0, n, size=(min(n_boot, start + chunk) - start, n)))
                           for start in range(0, n_boot, chunk)], axis=-1)


def resample_proportion(k: int, n: int, n_boot: int, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    """:func:`resample` of the mean of n values of which k are 1 and the rest 0 (times ``scale``: 100 for percent),
    drawn directly: the count of ones in a resample is binomial (n, k/n), so one draw stands for n indices."""
    return scale * rng.binomial(n, k / n, size=n_boot) / n


def percentile_interval(draws: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The percentile bootstrap interval: the (1 − level)/2 and 1 − (1 − level)/2 quantiles of the resampled
    statistic (numpy's linear interpolation)."""
    alpha = (1 - level) / 2
    return float(np.quantile(draws, alpha)), float(np.quantile(draws, 1 - alpha))


def bootstrap_mean_ci(values: np.ndarray, n_boot: int = 10_000, level: float = 0.95,
                      seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of ``values`` (e.g. 100·[rank ≤ 1] per query)."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return (float("nan"), float("nan"))
    return percentile_interval(_resampled_means(values, n_boot, np.random.default_rng(seed)), level)


def bootstrap_delta_ci(a: np.ndarray, b: np.ndarray, n_boot: int = 10_000, level: float = 0.95,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval for ``mean(b) − mean(a)`` with independent resampling.

    SC and UC are different query sets (not paired), so each is resampled on its own (b's resamples first).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if len(a) == 0 or len(b) == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    return percentile_interval(_resampled_means(b, n_boot, rng) - _resampled_means(a, n_boot, rng), level)


def _resampled_means(values: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    return resample(len(values), n_boot, rng, lambda idx: values[idx].mean(axis=1))
