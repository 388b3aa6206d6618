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
from .results import load_per_example, load_results
from .statistics import SUMMARY_COLUMNS, subsets, summary_table
from ...protocol.benchmark import ScoringRule
from ...protocol.tables import Outcomes, Tables
from ...results import store
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


def correct(per_example: pd.DataFrame, tie_policy: str = "pessimistic") -> dict[str, np.ndarray]:
    """Per metric, whether each example is correct: the paper's strict inequalities (``pessimistic``: a tie
    fails) or with every compared pair allowed to tie (``optimistic``: a tie passes), from its four similarities."""
    s = per_example[list(SCORE_COLUMNS)].to_numpy(dtype=float)
    c0_i0, c0_i1, c1_i0, c1_i1 = s[:, 0], s[:, 1], s[:, 2], s[:, 3]
    beats = np.greater if tie_policy == "pessimistic" else np.greater_equal
    text = beats(c0_i0, c1_i0) & beats(c1_i1, c0_i1)
    image = beats(c0_i0, c0_i1) & beats(c1_i1, c1_i0)
    return {"text": text, "image": image, "group": text & image}


def outcomes(directory, manifest: dict, tie_policy: str) -> Outcomes:
    """Per example and subset × metric row of the summary: whether the example gets the metric (text: both
    images pick their caption; image: both captions pick their image; group: both). The pooled row is the
    group score over all examples (text and image are parts of it, so pooling the three would count an example
    thrice)."""
    per_example = load_per_example(directory)
    if per_example[list(SCORE_COLUMNS)].isna().any().any():
        raise store.ResultsError(f"{store.PER_QUERY} in {directory} has an example without its four similarities: "
                                 "the result is damaged; evaluate again or delete its folder")
    flags_of = correct(per_example, tie_policy)
    ids = per_example["id"].astype(str).to_numpy()
    frames = []
    for breakdown, subset, mask in subsets(per_example):
        for metric in METRICS:
            frames.append(pd.DataFrame({"breakdown": breakdown, "subset": subset, "metric": metric,
                                        "query_id": ids[mask], "correct": flags_of[metric][mask],
                                        "pooled": breakdown == "all" and metric == "group"}))
    return Outcomes(("breakdown", "subset", "metric"), pd.concat(frames, ignore_index=True),
                    "the group score over all examples")


def field_counts(summary: pd.DataFrame, manifest: dict, tie_policy: str | None, columns) -> list[dict]:
    """Its text, image and group scores over all examples as the columns ``<prefix>::<metric>``: k correct of
    the examples scored, ties failing whatever ``tie_policy`` says (the summary holds the paper's strict scores)."""
    rows = summary[(summary["breakdown"] == "all") & (summary["n_examples"] > 0)]
    return [{"column": f"{columns.prefix}::{r.metric}", "k": int(r.n_correct), "n": int(r.n_examples), "sets": 1,
             "pooling": "all examples, the paper's strict inequalities (a tie fails)"} for r in rows.itertuples()]


WINOGROUND_RULE = ScoringRule(
    "winoground", evaluate, SCORE_DTYPE, honours=frozenset({"n_boot"}), brief=brief, read=load_results,
    outcomes=outcomes, field=field_counts,
    description="text, image and group scores with strict inequalities (eq. 1-3); ties fail, and are counted")
