"""A published percentage as k of N: whether a value is 100·k/N for an integer k, the N that every value of a
column fits, the k a value prints as.

A value is k/N when some integer 0 ≤ k ≤ N has |100·k/N − value| ≤ :data:`TOLERANCE`: a table that prints full
float precision passes for one N by chance with probability about 2e-9·N/100, so "all values fit N" is decisive.
"""
from __future__ import annotations

import numpy as np

N_MAX = 60_000
TOLERANCE = 1e-9
#: two evaluations of one checkpoint on the same items agree when they differ by at most this many items
AGREE_ITEMS = 2


def fits(values, n: int) -> np.ndarray:
    """Per value: whether it is 100·k/n for an integer 0 ≤ k ≤ n (to :data:`TOLERANCE`)."""
    v = np.asarray(values, dtype=float)
    k = np.round(v * n / 100.0)
    return (np.abs(100.0 * k / n - v) <= TOLERANCE) & (k >= 0) & (k <= n)


def common_denominators(values, n_max: int = N_MAX) -> np.ndarray:
    """Every N ≤ ``n_max`` of which all ``values`` are k/N (multiples of the smallest fit too), ascending."""
    ns = np.arange(1, n_max + 1, dtype=float)
    ok = np.ones(n_max, dtype=bool)
    for v in np.asarray(values, dtype=float):
        k = np.round(v * ns / 100.0)
        ok &= np.abs(100.0 * k / ns - v) <= TOLERANCE
        if not ok.any():
            break
    return np.flatnonzero(ok) + 1


def smallest_denominator(values, n_max: int = N_MAX) -> int | None:
    """The smallest N of which all ``values`` are k/N, or None below ``n_max``."""
    found = common_denominators(values, n_max)
    return int(found[0]) if len(found) else None


def counts(values, n: int) -> np.ndarray:
    """The k of each value at N = ``n`` (the nearest integer; check :func:`fits` first)."""
    return np.round(np.asarray(values, dtype=float) * n / 100.0).astype(int)


def printed_k(value: float, decimals: int, n: int) -> int | None:
    """The one k whose 100·k/n prints as ``value`` with ``decimals`` decimals, or None (none, or several)."""
    ks = [k for k in range(max(0, round(value * n / 100) - 2), min(n, round(value * n / 100) + 2) + 1)
          if abs(100.0 * k / n - value) <= 0.5 * 10.0 ** -decimals + 1e-9]
    return ks[0] if len(ks) == 1 else None
