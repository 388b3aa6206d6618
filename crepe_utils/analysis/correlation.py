"""R² of retrieval scores against ImageNet zero-shot accuracy, with the uncertainty the paper omits.

The paper (§5.4) reports R² of a least-squares line through one point per model. With seven
points an R² is fragile, so besides the point value we give a percentile bootstrap interval
(resampling models with replacement), the leave-one-model-out range, and the interval that Fisher's z
interval of r implies. The bootstrap is a rough guide with so few points: a resample of seven models
often holds only two or three distinct ones, whose R² is 1 or near it, so its upper end can reach 1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats


def r_squared(x, y) -> float:
    """Coefficient of determination of the least-squares line of ``y`` on ``x`` (= Pearson r²)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(x) != len(y):
        raise ValueError(f"x and y differ in length ({len(x)} vs {len(y)})")
    if len(x) < 3:
        raise ValueError(f"R² needs at least 3 points, got {len(x)}")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(stats.linregress(x, y).rvalue ** 2)


@dataclass(frozen=True)
class R2Result:
    r2: float
    slope: float
    intercept: float
    n: int
    ci_low: float
    ci_high: float
    loo_min: float
    loo_max: float
    n_boot: int
    n_degenerate: int   #: bootstrap samples with a constant x or y (R² undefined), dropped
    fisher_low: float = float("nan")    #: R² interval from Fisher's z interval of r (bivariate normal)
    fisher_high: float = float("nan")


def fisher_r2_interval(r: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """The interval of R² = r² implied by Fisher's z interval of Pearson's r (atanh(r) ± z/√(n − 3)); 0 is the
    lower end when the interval of r includes 0. Needs n > 3."""
    if n <= 3 or not np.isfinite(r):
        return float("nan"), float("nan")
    z = stats.norm.ppf(1 - (1 - level) / 2)
    centre = np.arctanh(np.clip(r, -0.999999, 0.999999))
    lo, hi = np.tanh(centre - z / np.sqrt(n - 3)), np.tanh(centre + z / np.sqrt(n - 3))
    if lo <= 0 <= hi:
        return 0.0, float(max(lo * lo, hi * hi))
    return float(min(lo * lo, hi * hi)), float(max(lo * lo, hi * hi))


def r_squared_with_uncertainty(x, y, n_boot: int = 10_000, level: float = 0.95,
                               seed: int = 0) -> R2Result:
    """R², its percentile bootstrap interval over points, and the leave-one-out range."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    r2 = r_squared(x, y)
    fit = stats.linregress(x, y)
    n = len(x)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    xb, yb = x[idx], y[idx]
    xc = xb - xb.mean(axis=1, keepdims=True)
    yc = yb - yb.mean(axis=1, keepdims=True)
    sxx = (xc ** 2).sum(axis=1)
    syy = (yc ** 2).sum(axis=1)
    sxy = (xc * yc).sum(axis=1)
    ok = (sxx > 0) & (syy > 0)
    boot = sxy[ok] ** 2 / (sxx[ok] * syy[ok])
    alpha = (1 - level) / 2
    loo = [r_squared(np.delete(x, i), np.delete(y, i)) for i in range(n)] if n > 3 else [r2]
    fisher = fisher_r2_interval(float(np.sign(fit.slope) * np.sqrt(r2)), n, level)
    return R2Result(
        r2=r2, slope=float(fit.slope), intercept=float(fit.intercept), n=n,
        ci_low=float(np.quantile(boot, alpha)), ci_high=float(np.quantile(boot, 1 - alpha)),
        loo_min=float(np.nanmin(loo)), loo_max=float(np.nanmax(loo)),
        n_boot=int(n_boot), n_degenerate=int((~ok).sum()), fisher_low=fisher[0], fisher_high=fisher[1],
    )


def r_squared_table(df: pd.DataFrame, x: str, y: str, by: list[str], **kwargs) -> pd.DataFrame:
    """One R² row (with interval and leave-one-out range) per group of ``df`` grouped by ``by``."""
    rows = []
    for keys, group in df.groupby(by, sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        group = group.dropna(subset=[x, y])
        res = r_squared_with_uncertainty(group[x], group[y], **kwargs)
        rows.append({**dict(zip(by, keys)), "n_models": res.n, "r2": res.r2,
                     "r2_ci_low": res.ci_low, "r2_ci_high": res.ci_high,
                     "r2_loo_min": res.loo_min, "r2_loo_max": res.loo_max,
                     "r2_fisher_low": res.fisher_low, "r2_fisher_high": res.fisher_high,
                     "slope": res.slope, "intercept": res.intercept})
    return pd.DataFrame(rows)
