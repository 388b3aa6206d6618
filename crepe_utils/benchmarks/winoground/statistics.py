"""Winoground scores per subset of examples, with the paper's confidence intervals and bootstrap ones.

**Subsets** (``breakdown`` → ``subset``):

* ``all``;
* ``collapsed_tag``: Object / Relation / Both (Table 1: 141 / 233 / 26);
* ``num_main_preds``: 1 / 2;
* ``secondary_tag``: *comma-split membership*: an example tagged ``"Symbolic, Series"`` counts in
  both Symbolic and Series. These are Table 1's counts (Symbolic 41, Series 31, Pragmatics 24);
* ``secondary_tag_exact``: the whole field compared exactly, so ``"Symbolic, Series"`` is its own
  subset. The dataset's ``statistics/compute_statistics.py`` filters this way
  (``example[key] != value``), and Table 5's human percentages imply these counts
  (96.43 = 27/28 Symbolic, 95.65 = 22/23 Series, 58.82 = 10/17 Pragmatics), not Table 1's;
* ``why_hard``: the classes of "Why is Winoground hard?" (``no-tag`` is the subset without a
  difficulty), when the labels were joined.

Examples without a secondary tag form the subset ``(none)``.

**Confidence intervals** (95 % by default):

* ``t_ci_*``, the paper's appendix A: the examples are split into 4 equal groups, a score is
  computed per group, and the interval is ``score ± t(0.975, df=3) · sd(group scores) / √4``.
  The paper does not say how it formed the groups. Here they are consecutive blocks in id order
  (ids 0-99, 100-199, 200-299, 300-399 for the full set), ``grouping="contiguous"``;
  ``grouping="interleaved"`` takes id mod 4 instead. A subset is split the same way in its own
  id order; when its size is not a multiple of 4 the groups differ by one example, and the
  interval is centred on the subset's score (for equal groups that equals the mean of the
  group scores, the paper's centre). Subsets of fewer than 4 examples get no interval. The
  interval is not clipped to [0, 100].
* ``boot_ci_*``: percentile bootstrap over examples (:func:`crepe_utils.metrics.bootstrap_mean_ci`).
"""
from __future__ import annotations

import math

import numpy as np

from ...metrics import bootstrap_mean_ci
from .scoring import METRICS, chance_levels
from ...lazy import lazy

pd = lazy("pandas")

N_GROUPS = 4
GROUPINGS = ("contiguous", "interleaved")
NO_TAG = "(none)"
COLLAPSED_TAG_ORDER = ("Object", "Relation", "Both")
SECONDARY_TAG_ORDER = ("Symbolic", "Series", "Pragmatics", "Morpheme-Level")

SUMMARY_COLUMNS = ["breakdown", "subset", "metric", "n_examples", "n_correct", "score", "score_first_index",
                   "n_ties", "chance", "t_ci_low", "t_ci_high", "boot_ci_low", "boot_ci_high"]


def group_labels(ids, grouping: str = "contiguous", n_groups: int = N_GROUPS) -> np.ndarray:
    """The CI group (0..n_groups-1) of each example, from the examples' ids (see module docstring)."""
    if grouping not in GROUPINGS:
        raise ValueError(f"grouping must be one of {GROUPINGS}, got {grouping!r}")
    ids = np.asarray(ids)
    position = np.empty(len(ids), dtype=int)
    position[np.argsort(ids, kind="stable")] = np.arange(len(ids))
    if grouping == "interleaved":
        return position % n_groups
    return position * n_groups // max(len(ids), 1)


def t_interval(correct, groups, n_groups: int = N_GROUPS, level: float = 0.95) -> tuple[float, float]:
    """The appendix-A interval (percent) for per-example 0/1 ``correct`` and their ``groups``."""
    from scipy import stats

    correct = np.asarray(correct, dtype=float)
    groups = np.asarray(groups)
    sizes = np.bincount(groups, minlength=n_groups) if len(groups) else np.zeros(n_groups, int)
    if len(sizes) != n_groups or (sizes == 0).any():
        return (math.nan, math.nan)
    group_scores = 100.0 * np.bincount(groups, weights=correct, minlength=n_groups) / sizes
    half = stats.t.ppf((1 + level) / 2, n_groups - 1) * group_scores.std(ddof=1) / math.sqrt(n_groups)
    centre = 100.0 * correct.mean()
    return (float(centre - half), float(centre + half))


def split_tags(value: str) -> list[str]:
    """The tags of a comma-separated ``secondary_tag`` field ("" → no tags)."""
    return [t.strip() for t in str(value).split(",") if t.strip()]


def _ordered(values, first: tuple[str, ...]) -> list[str]:
    values = set(values)
    return [v for v in first if v in values] + sorted(values - set(first))


def subsets(per_example: pd.DataFrame) -> list[tuple[str, str, np.ndarray]]:
    """(breakdown, subset, boolean mask) for every subset reported (see module docstring)."""
    out = [("all", "all", np.ones(len(per_example), dtype=bool))]
    collapsed = per_example["collapsed_tag"].astype(str)
    for tag in _ordered(collapsed.unique(), COLLAPSED_TAG_ORDER):
        out.append(("collapsed_tag", tag, (collapsed == tag).to_numpy()))
    preds = per_example["num_main_preds"].astype(int)
    for n in sorted(preds.unique()):
        out.append(("num_main_preds", str(n), (preds == n).to_numpy()))
    secondary = per_example["secondary_tag"].fillna("").astype(str)
    split = secondary.map(split_tags)
    for tag in _ordered({t for tags in split for t in tags}, SECONDARY_TAG_ORDER):
        out.append(("secondary_tag", tag, split.map(lambda tags, tag=tag: tag in tags).to_numpy(dtype=bool)))
    out.append(("secondary_tag", NO_TAG, (split.map(len) == 0).to_numpy()))
    exact = secondary.str.strip()
    for value in _ordered(set(exact) - {""}, SECONDARY_TAG_ORDER):
        out.append(("secondary_tag_exact", value, (exact == value).to_numpy()))
    out.append(("secondary_tag_exact", NO_TAG, (exact == "").to_numpy()))
    if "why_hard" in per_example and per_example["why_hard"].notna().all():
        labels = per_example["why_hard"].astype(str)
        for label in _ordered(labels.unique(), ("no-tag",)):
            out.append(("why_hard", label, (labels == label).to_numpy()))
    return out


def summary_table(per_example: pd.DataFrame, *, grouping: str = "contiguous", level: float = 0.95,
              n_boot: int = 10_000, seed: int = 0, every: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per subset × metric (SUMMARY_COLUMNS); scores and intervals in percent.

    ``per_example`` needs ``id``, the tag columns, and per metric ``m``: ``m`` (strict flag),
    ``m_first_index`` and ``m_tie``, as made by :func:`crepe_utils.benchmarks.winoground.rule.per_example_table`.
    ``every``: ``id`` and the tag columns of every example, scored or not, in id order (``per_example``'s
    rows among them, in the same order): the subsets are then those of every example, so one whose
    examples were all skipped keeps its rows, with ``n_examples`` 0.
    """
    chance = chance_levels()
    ids = per_example["id"].to_numpy()
    rows = []
    found = subsets(per_example)
    if every is not None:
        scored = every["id"].isin(per_example["id"]).to_numpy()
        found = [(breakdown, subset, mask[scored]) for breakdown, subset, mask in subsets(every)]
    for breakdown, subset, mask in found:
        groups = group_labels(ids[mask], grouping)
        for metric in METRICS:
            correct = per_example[metric].to_numpy(dtype=bool)[mask]
            n = int(mask.sum())
            t_low, t_high = t_interval(correct, groups, level=level) if n >= N_GROUPS else (math.nan, math.nan)
            b_low, b_high = bootstrap_mean_ci(100.0 * correct, n_boot=n_boot, level=level, seed=seed)
            rows.append({
                "breakdown": breakdown, "subset": subset, "metric": metric, "n_examples": n,
                "n_correct": int(correct.sum()),
                "score": 100.0 * correct.mean() if n else math.nan,
                "score_first_index": 100.0 * per_example[f"{metric}_first_index"].to_numpy(dtype=bool)[mask].mean()
                if n else math.nan,
                "n_ties": int(per_example[f"{metric}_tie"].to_numpy(dtype=bool)[mask].sum()),
                "chance": chance[metric], "t_ci_low": t_low, "t_ci_high": t_high,
                "boot_ci_low": b_low, "boot_ci_high": b_high,
            })
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
