"""Winoground without looking: the text, image and group scores of a blind scorer, ties counted.

A blind scorer gives a caption one score whatever the image, so example j's matrix is
``s[j, c, i] = score(caption c)``, equal in both image columns. The image score's comparisons
``c0_i0 > c0_i1`` and ``c1_i1 > c1_i0`` then set a number against itself (a tie on every
example), and the text score needs ``score(c0) > score(c1)`` and ``score(c1) > score(c0)`` at once.
Both are therefore 0; here they are computed through the project's scoring (:func:`.scoring.flags`,
:func:`.scoring.ties`) on those matrices, with the ties that decide them counted, not assumed.

The scorers read two queries per example (:func:`caption_queries`), one per image, each with its
own caption first; both carry the example's id as their image id, so a cross-fitted scorer keeps
them in one fold. :func:`run` reads the data folder and gives every scorer's scores (notebooks 07 and 10);
:func:`field_counts` them as k of N, as vl_compo's table counts them.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ... import blind
from ...blind.runs import FAST_SCORERS, absent
from ...analysis.prose import count_span
from ...claims.base import FAIL, NEEDS, PASS, Check
from ...errors import CrepeError, DataError, error_line
from .datasets import WINOGROUND_FILES
from .metadata import load_examples
from .scoring import METRICS, flags, ties
from ...lazy import lazy

pd = lazy("pandas")


def caption_queries(examples: Sequence) -> list[blind.TextQuery]:
    """Per example (objects with ``id``, ``caption_0``, ``caption_1``): (caption 0, caption 1) for
    image 0, then (caption 1, caption 0) for image 1."""
    out = []
    for ex in examples:
        image_id = f"winoground-{ex.id}"
        out.append(blind.TextQuery(image_id, (ex.caption_0, ex.caption_1)))
        out.append(blind.TextQuery(image_id, (ex.caption_1, ex.caption_0)))
    return out


def caption_scores(flat: np.ndarray) -> np.ndarray:
    """(examples, 2) scores of caption 0 and caption 1 from a scorer's flat output on
    :func:`caption_queries`; a caption scored differently in its two queries is an error (the
    scorer was not blind, or its input not laid out by :func:`caption_queries`)."""
    flat = np.asarray(flat, dtype=np.float64)
    if flat.ndim != 1 or len(flat) % 4:
        raise DataError(f"expected 4 scores per Winoground example (two queries of two captions), got shape "
                        f"{flat.shape}")
    per_example = flat.reshape(-1, 4)            # c0 | i0, c1 | i0, c1 | i1, c0 | i1
    differs = np.flatnonzero((per_example[:, 0] != per_example[:, 3]) | (per_example[:, 1] != per_example[:, 2]))
    if len(differs):
        raise DataError(f"examples at positions {differs[:10].tolist()} have a caption scored differently for its "
                        "two images: these are not a blind scorer's scores")
    return per_example[:, :2].copy()


def score_matrices(captions: np.ndarray) -> np.ndarray:
    """``s[j, c, i]`` = score of caption c of example j, for both images i."""
    captions = np.asarray(captions, dtype=np.float64)
    return np.repeat(captions[:, :, None], 2, axis=2)


def summary(captions: np.ndarray) -> dict[str, dict[str, float]]:
    """Per metric: the percentage of examples that pass (strict rule and first-index rule) and the
    number of examples with a tie in that metric's comparisons."""
    matrices = score_matrices(captions)
    strict, first_index, tied = flags(matrices), flags(matrices, rule="first_index"), ties(matrices)
    return {m: {"score": 100.0 * float(strict[m].mean()), "score_first_index": 100.0 * float(first_index[m].mean()),
                "ties": int(tied[m].sum()), "examples": len(matrices)} for m in METRICS}


def evaluate(name: str, examples: Sequence,
             settings: blind.BlindSettings = blind.BlindSettings()) -> tuple[np.ndarray, dict[str, dict[str, float]]]:
    """Blind scorer ``name`` on Winoground's ``examples``: ((examples, 2) caption scores, :func:`summary`)."""
    captions = caption_scores(blind.score(name, caption_queries(examples), settings))
    return captions, summary(captions)


HOW_TO_GET = "Winoground is gated: `make data-winoground` with `HF_TOKEN` (see README)"
#: the teaching notebook's exercise on it: (question, answer)
EXERCISE = ("Each Winoground example holds two images and two captions made of the same words in another order, "
            "each caption true of one image. Its *text score* counts the example right when, for each image, the "
            "model scores that image's own caption strictly above the other caption (image 0 prefers caption 0, "
            "and image 1 prefers caption 1). Why does no blind scorer ever get an example's text score right?",
            "The text score needs the first image to prefer the first caption and the second image the second. A "
            "blind scorer gives a caption the same score whatever the image, so one of the two strict comparisons "
            "fails whatever the scores: both cannot hold at once, and a tie fails both.")
#: what its blind claim reads, and its group in ``make check``; the scorers it runs
WHAT, GROUP = "winoground", "blind"
CLAIM_SCORERS = FAST_SCORERS


def run(data_dir=None, scorers=FAST_SCORERS, settings=blind.BlindSettings()) -> pd.DataFrame | str:
    """Per scorer and metric (text, image, group): the score (%) with ties counted, and the tied examples."""
    folder = WINOGROUND_FILES.dir(data_dir)
    if absent(folder):
        return f"No Winoground data found: {HOW_TO_GET}."
    try:
        frame, _ = load_examples(folder)
    except CrepeError as exc:
        return f"Winoground's files cannot be read ({error_line(exc)}); {HOW_TO_GET}."
    examples = list(frame.itertuples(index=False))
    rows = []
    for name in scorers:
        _, summary = evaluate(name, examples, settings)
        rows += [{"scorer": name, "metric": m, "score": v["score"], "ties": v["ties"], "examples": v["examples"]}
                 for m, v in summary.items()]
    return pd.DataFrame(rows)


def field_counts(scores: pd.DataFrame) -> list[dict]:
    """Each scorer's k of N per score (text, image, group), ties counted: rows of column, scorer, k, n."""
    return [{"column": f"winoground::{r.metric}", "scorer": r.scorer, "k": int(round(r.score * r.examples / 100)),
             "n": int(r.examples)} for r in scores.itertuples()]


def _needs(claim: str, paper: str) -> Check:
    return Check(claim, paper, "—", NEEDS, f"no {WHAT} data ({HOW_TO_GET})", GROUP)


def check_winoground_zero(table: pd.DataFrame | None) -> list[Check]:
    """Every scorer of ``table`` (:func:`run`) scores 0 on text,
    image and group: a text-only score is the same for both images, and the strict rule counts that tie."""
    claim = "Every blind scorer scores 0 on Winoground's text, image and group scores (ties counted)"
    paper = "0 by construction"
    if table is None:
        return [_needs(claim, paper)]
    nonzero = table[table["score"] != 0]
    ours = f"max {table['score'].max():.2f}" if len(table) else "—"
    if table.empty or len(nonzero):
        what = ", ".join(f"{r.scorer} {r.metric} {r.score:.2f}" for r in nonzero.itertuples()) or "no scores"
        return [Check(claim, paper, ours, FAIL, what, GROUP)]
    scorers = table["scorer"].nunique()
    return [Check(claim, paper, ours, PASS, f"{scorers} scorers × {len(table) // scorers} metrics on "
                  f"{int(table['examples'].iloc[0])} examples", GROUP)]


def claims(result: pd.DataFrame | str | None) -> list[Check]:
    """Its blind claim from :func:`run`'s table (a message or None: no data)."""
    return check_winoground_zero(result if isinstance(result, pd.DataFrame) else None)


def text(table: pd.DataFrame) -> str:
    """Notebook 07's paragraph on Winoground, which gets no panel: every score is 0, with the ties that decide it."""
    n = int(table["examples"].iloc[0])
    top = float(table["score"].max())
    text = table[table["metric"] == "text"]
    image = table[table["metric"] == "image"]
    return (f"**Winoground**: the highest text, image or group score of the {table['scorer'].nunique()} scorers is "
            f"{top:.1f}% on {n} examples, so there is nothing to draw. A text-only score gives both images the same "
            f"numbers: the image score's comparisons tie on {count_span(image['ties'])} of {n} examples per scorer, "
            "and the text score would need each caption to score above the other (tied captions: "
            f"{count_span(text['ties'])} per scorer).")


def closing_sentences(table: pd.DataFrame) -> list[str]:
    """Notebook 07's closing sentence on Winoground: no blind score gets anywhere."""
    return [f"Winoground cannot be solved this way: no blind score exceeds {table['score'].max():.1f}%."]
