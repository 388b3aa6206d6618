"""Winoground's text, image and group scores from the four image-caption similarities of an example.

For example ``j`` the score matrix is ``s[j, c, i]`` = similarity of caption ``c`` and image ``i``
(columns ``c0_i0, c0_i1, c1_i0, c1_i1``, the labels of the official score files). The paper's
flags [eq. 1-3], with **strict** inequalities as printed and as in the dataset's
``statistics/compute_statistics.py``:

* text  ``f``: ``c0_i0 > c1_i0`` and ``c1_i1 > c0_i1`` (each image prefers its own caption);
* image ``g``: ``c0_i0 > c0_i1`` and ``c1_i1 > c1_i0`` (each caption prefers its own image);
* group ``h``: ``f`` and ``g``.

An exact tie in any comparison therefore fails the metric. Ties are counted per metric: an
example has a *text tie* when either text comparison is an equality, an *image tie* likewise,
and a *group tie* when it has either.

Peers that take an ``argmax`` (LAION-AI/CLIP_benchmark's ``image_caption_selection``, and mteb's
``ImageTextPairClassificationEvaluator``, which follows it) resolve a tie in favour of index 0: image 0 picks caption 0 and caption 0 picks
image 0 on a tie, while image 1 and caption 1 lose theirs. That *first-index* rule is reported
beside the strict one (``*_first_index``), so a tie's effect on a published number is visible.

Chance levels follow from the rules themselves: with four distinct scores in random order, text
and image each hold in 6 of the 24 orders (25 %) and group in 4 (16.67 %, the two correct pairs
are the two highest); :func:`chance_levels` enumerates them.
"""
from __future__ import annotations

from fractions import Fraction
from itertools import permutations

import numpy as np

METRICS = ("text", "image", "group")
SCORE_COLUMNS = ("c0_i0", "c0_i1", "c1_i0", "c1_i1")
TIE_RULES = ("strict", "first_index")


def _check(scores: np.ndarray) -> np.ndarray:
    scores = np.asarray(scores)
    if scores.ndim != 3 or scores.shape[1:] != (2, 2):
        raise ValueError(f"scores must have shape (examples, 2 captions, 2 images), got {scores.shape}")
    if not np.isfinite(scores).all():
        raise ValueError("scores hold NaN or infinite values; every similarity must be a finite number")
    return scores


def flags(scores: np.ndarray, rule: str = "strict") -> dict[str, np.ndarray]:
    """Per-example text, image and group flags (bool arrays) under ``rule``."""
    if rule not in TIE_RULES:
        raise ValueError(f"rule must be one of {TIE_RULES}, got {rule!r}")
    s = _check(scores)
    c0_i0, c0_i1, c1_i0, c1_i1 = s[:, 0, 0], s[:, 0, 1], s[:, 1, 0], s[:, 1, 1]
    if rule == "strict":
        text = (c0_i0 > c1_i0) & (c1_i1 > c0_i1)
        image = (c0_i0 > c0_i1) & (c1_i1 > c1_i0)
    else:  # index 0 wins its tie (image 0 keeps caption 0, caption 0 keeps image 0); index 1 loses
        text = (c0_i0 >= c1_i0) & (c1_i1 > c0_i1)
        image = (c0_i0 >= c0_i1) & (c1_i1 > c1_i0)
    return {"text": text, "image": image, "group": text & image}


def ties(scores: np.ndarray) -> dict[str, np.ndarray]:
    """Per-example tie flags: an exact equality in a comparison that the metric makes."""
    s = _check(scores)
    c0_i0, c0_i1, c1_i0, c1_i1 = s[:, 0, 0], s[:, 0, 1], s[:, 1, 0], s[:, 1, 1]
    text = (c0_i0 == c1_i0) | (c1_i1 == c0_i1)
    image = (c0_i0 == c0_i1) | (c1_i1 == c1_i0)
    return {"text": text, "image": image, "group": text | image}


def score_matrices(text_embeddings: np.ndarray, image_embeddings: np.ndarray) -> np.ndarray:
    """``s[j, c, i]`` = cosine of caption ``c`` and image ``i`` of example ``j``.

    Inputs are L2-normalised embeddings in example order, two rows per example
    (``[ex0 caption/image 0, ex0 ... 1, ex1 ... 0, ...]``). Products are summed in float64, so
    equal embeddings give bit-equal scores and unequal ones are not rounded together.
    """
    t = np.asarray(text_embeddings, dtype=np.float64)
    v = np.asarray(image_embeddings, dtype=np.float64)
    if t.shape != v.shape or t.ndim != 2 or t.shape[0] % 2:
        raise ValueError(f"need two text and two image embeddings per example of equal width, got {t.shape} "
                         f"and {v.shape}")
    n, d = t.shape[0] // 2, t.shape[1]
    return np.einsum("ncd,nid->nci", t.reshape(n, 2, d), v.reshape(n, 2, d), optimize=False)


def chance_levels() -> dict[str, float]:
    """Percentage of the 24 orders of four distinct scores that pass each metric (strict rule)."""
    orders = np.array(list(permutations(range(4))), dtype=float).reshape(-1, 2, 2)
    passed = flags(orders)
    return {m: float(100 * Fraction(int(passed[m].sum()), len(orders))) for m in METRICS}
