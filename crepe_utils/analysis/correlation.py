"""R² (and Pearson r) of retrieval scores against ImageNet zero-shot accuracy, with the uncertainty the paper omits.

The paper (§5.4) reports R² of a least-squares line through one point per model. With seven
points an R² is fragile, so besides the point value we give a percentile bootstrap interval
(resampling models with replacement), the leave-one-model-out range, and the interval that Fisher's z
interval of r implies. The bootstrap is a rough guide with so few points: a resample of seven models
often holds only two or three distinct ones, whose R² is 1 or near it, so its upper end can reach 1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import metrics
from ..lazy import lazy

pd = lazy("pandas")
stats = lazy("scipy.stats")


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


def _bootstrap_moments(x: np.ndarray, y: np.ndarray, n_boot: int, seed) -> tuple[np.ndarray, ...]:
    """Per bootstrap sample (points drawn with replacement): the centred cross and square sums (xy, xx, yy)."""
    def moments(idx: np.ndarray) -> np.ndarray:
        xc = x[idx] - x[idx].mean(axis=1, keepdims=True)
        yc = y[idx] - y[idx].mean(axis=1, keepdims=True)
        return np.stack([(xc * yc).sum(axis=1), (xc ** 2).sum(axis=1), (yc ** 2).sum(axis=1)])

    return tuple(metrics.resample(len(x), n_boot, np.random.default_rng(seed), moments))


@dataclass(frozen=True)
class PearsonResult:
    r: float
    r_low: float
    r_high: float
    r2_low: float        #: the bootstrap interval of r² (not the square of r's interval: r's may straddle 0)
    r2_high: float
    n: int
    n_boot: int
    n_degenerate: int    #: bootstrap samples with a constant x or y, dropped

    @property
    def r2(self) -> float:
        return self.r ** 2


def pearson_with_uncertainty(x, y, n_boot: int = 2000, level: float = 0.95, seed=0) -> PearsonResult:
    """Pearson r of ``y`` on ``x``, with percentile bootstrap intervals of r and of r² (= R² of the least-squares
    line), resampling points; ``seed`` is anything :func:`numpy.random.default_rng` takes."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(x) != len(y) or len(x) < 3:
        raise ValueError(f"r needs two equal-length series of at least 3 points, got {len(x)} and {len(y)}")
    xc, yc = x - x.mean(), y - y.mean()
    denominator = np.sqrt((xc ** 2).sum() * (yc ** 2).sum())
    r = float((xc * yc).sum() / denominator) if denominator > 0 else float("nan")
    sxy, sxx, syy = _bootstrap_moments(x, y, n_boot, seed)
    ok = (sxx > 0) & (syy > 0)
    boot = sxy[ok] / np.sqrt(sxx[ok] * syy[ok])
    if not len(boot):
        return PearsonResult(r, *([float("nan")] * 4), len(x), n_boot, int((~ok).sum()))
    return PearsonResult(r, *metrics.percentile_interval(boot, level), *metrics.percentile_interval(boot ** 2, level),
                         len(x), n_boot, int((~ok).sum()))


def r_squared_with_uncertainty(x, y, n_boot: int = 10_000, level: float = 0.95,
                               seed: int = 0) -> R2Result:
    """R², its percentile bootstrap interval over points, and the leave-one-out range."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    r2 = r_squared(x, y)
    fit = stats.linregress(x, y)
    n = len(x)
    sxy, sxx, syy = _bootstrap_moments(x, y, n_boot, seed)
    ok = (sxx > 0) & (syy > 0)
    boot = sxy[ok] ** 2 / (sxx[ok] * syy[ok])
    low, high = metrics.percentile_interval(boot, level)
    loo = [r_squared(np.delete(x, i), np.delete(y, i)) for i in range(n)] if n > 3 else [r2]
    fisher = fisher_r2_interval(float(np.sign(fit.slope) * np.sqrt(r2)), n, level)
    return R2Result(
        r2=r2, slope=float(fit.slope), intercept=float(fit.intercept), n=n,
        ci_low=low, ci_high=high,
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
