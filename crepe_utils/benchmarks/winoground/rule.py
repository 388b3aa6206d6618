"""Winoground's text, image and group scores (Thrush et al., CVPR 2022, eq. 1-3) from the engine's scores.

The engine scored each image against its example's two captions (:mod:`crepe_utils.benchmarks.winoground.benchmark`);
here the four similarities ``s[c, i]`` of each example are gathered, flagged with the strict and
first-index tie rules (:mod:`crepe_utils.benchmarks.winoground.scoring`) and summarised per subset with the paper's
t-intervals and bootstrap ones (:mod:`crepe_utils.benchmarks.winoground.statistics`). Similarities are float64
sums over float32 embeddings, so that unequal ones are never rounded into a tie. An example whose
image was skipped (unreadable, with ``skip_missing_images``) has no four scores and is left out, counted.
"""
from __future__ import annotations

import numpy as np

from .scoring import METRICS, SCORE_COLUMNS, flags, ties
from .results import load_results
from .statistics import SUMMARY_COLUMNS, summary_table
from ...protocol.benchmark import ScoringRule
from ...protocol.tables import Tables
from ...lazy import lazy

pd = lazy("pandas")

SCORE_DTYPE = np.float64

PER_EXAMPLE_COLUMNS = ["id", "caption_0", "caption_1", "tag", "secondary_tag", "num_main_preds", "collapsed_tag",
                       "why_hard", *SCORE_COLUMNS, *METRICS, *(f"{m}_first_index" for m in METRICS),
                       *(f"{m}_tie" for m in METRICS), "image_0", "image_1", "source"]


def score_matrices(result, n_examples: int) -> tuple[np.ndarray, np.ndarray]:
    """``s[j, c, i]`` for the examples with both images scored, and those examples' indices."""
    s = np.full((n_examples, 2, 2), np.nan)
    for i, q in enumerate(result.queries):        # candidates: image k's own caption, then the other
        s[q.index, q.k, q.k], s[q.index, 1 - q.k, q.k] = result.query_scores(i)
    complete = np.flatnonzero(~np.isnan(s).any(axis=(1, 2)))
    return s[complete], complete


def examples_table(context) -> pd.DataFrame:
    """Every example's text fields, image locations and why-hard label, in id order."""
    out = context.data.frame()
    out["why_hard"] = out["id"].map(context.why_hard) if context.why_hard is not None else pd.NA
    return out


def per_example_table(context, scores: np.ndarray, examples: np.ndarray, every: pd.DataFrame | None = None):
    """One row per scored example: text fields, the four similarities, flags and ties per metric."""
    out = (examples_table(context) if every is None else every).iloc[examples].reset_index(drop=True)
    for j, col in enumerate(SCORE_COLUMNS):
        out[col] = scores[:, j // 2, j % 2]
    strict, first_index, tied = flags(scores), flags(scores, "first_index"), ties(scores)
    for m in METRICS:
        out[m] = strict[m]
        out[f"{m}_first_index"] = first_index[m]
        out[f"{m}_tie"] = tied[m]
    return out[PER_EXAMPLE_COLUMNS]


def evaluate(result, loaded, settings, model: str) -> Tables:
    scores, examples = score_matrices(result, len(loaded.context.data))
    every = examples_table(loaded.context)
    per_example = per_example_table(loaded.context, scores, examples, every)
    summary = summary_table(per_example, grouping=loaded.context.grouping, n_boot=settings.n_boot, every=every)
    overall = summary[summary["breakdown"] == "all"].set_index("metric")
    headline = {"scores": {m: float(overall.at[m, "score"]) for m in METRICS},
                "ties": {m: int(overall.at[m, "n_ties"]) for m in METRICS},
                "n_examples_skipped": int(len(loaded.context.data) - len(examples)),
                "tie_rule": "strict inequalities (paper eq. 1-3; a tie fails); first-index rule in *_first_index"}
    return Tables(summary, SUMMARY_COLUMNS, [per_example], PER_EXAMPLE_COLUMNS, None, "%.17g", headline,
                  n_scored=len(examples), unscored=unscored_subsets(summary, headline["n_examples_skipped"]),
                  row_key=("breakdown", "subset", "metric"))


def unscored_subsets(summary: pd.DataFrame, n_skipped: int) -> list[str]:
    """One description per subset with no scored example (every one of its examples was skipped)."""
    empty = summary[summary["n_examples"] == 0][["breakdown", "subset"]].drop_duplicates()
    return [f"subset {b} = {s} has no scored example (of the {n_skipped} examples skipped): its summary rows "
            "have n_examples 0 and no score" for b, s in empty.itertuples(index=False)]


BRIEF = ["metric", "n_examples", "score", "t_ci_low", "t_ci_high", "score_first_index", "n_ties", "chance"]


def brief(summary: pd.DataFrame, groups=()) -> pd.DataFrame:
    """The scores over all examples, one row per metric."""
    return summary.loc[summary["breakdown"] == "all", [c for c in BRIEF if c in summary]]


WINOGROUND_RULE = ScoringRule(
    "winoground", evaluate, SCORE_DTYPE, honours=frozenset({"n_boot"}), brief=brief, read=load_results,
    description="text, image and group scores with strict inequalities (eq. 1-3); ties fail, and are counted")
