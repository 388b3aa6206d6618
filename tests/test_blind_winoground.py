"""Winoground's blind scores: what a scorer that never sees the image gets, ties counted."""
from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

from crepe_utils.errors import DataError
from crepe_utils.benchmarks.winoground import blind as wb

EXAMPLES = [SimpleNamespace(id=0, caption_0="an old person kisses a young person",
                            caption_1="a young person kisses an old person"),
            SimpleNamespace(id=1, caption_0="the dog bites the man", caption_1="the man bites"),
            SimpleNamespace(id=2, caption_0="there is no cat", caption_1="there is a cat"),
            SimpleNamespace(id=3, caption_0="a mug in some grass", caption_1="some grass in a mug")]


def reference(captions: np.ndarray) -> dict:
    """The published definitions on s[c, i] = score(c): text c0_i0 > c1_i0 and c1_i1 > c0_i1, image
    c0_i0 > c0_i1 and c1_i1 > c1_i0; a tie is an equality in a comparison the metric makes."""
    s0, s1 = captions[:, 0], captions[:, 1]
    text, image = (s0 > s1) & (s1 > s0), (s0 > s0) & (s1 > s1)
    text_tie, image_tie = s0 == s1, np.ones(len(captions), dtype=bool)
    return {"text": (text, text_tie), "image": (image, image_tie), "group": (text & image, text_tie | image_tie)}


@pytest.mark.parametrize("captions", [np.array([[1.0, 2.0], [3.0, 3.0], [-1.0, -5.0], [0.0, 0.0]]),
                                      np.random.default_rng(0).integers(0, 3, size=(50, 2)).astype(float)])
def test_the_summary_counts_every_tie_and_passes_nothing(captions):
    got, expected = wb.summary(captions), reference(captions)
    for metric, (passed, tied) in expected.items():
        assert got[metric]["score"] == 100.0 * passed.mean() == 0.0
        assert got[metric]["score_first_index"] == 0.0
        assert got[metric]["ties"] == int(tied.sum()) and got[metric]["examples"] == len(captions)


def test_length_on_winoground_ties_the_captions_of_equal_word_count():
    captions, summary = wb.evaluate("length", EXAMPLES)
    lengths = [[-len(re.findall("[a-z]+", c.lower())) for c in (ex.caption_0, ex.caption_1)] for ex in EXAMPLES]
    assert captions.tolist() == lengths
    assert summary["text"]["ties"] == 3 and summary["image"]["ties"] == summary["group"]["ties"] == 4
    assert summary["text"]["score"] == summary["image"]["score"] == summary["group"]["score"] == 0.0


def test_each_caption_is_scored_once_whatever_the_image_and_both_queries_share_a_fold():
    queries = wb.caption_queries(EXAMPLES)
    assert [q.candidates for q in queries[:2]] == [(EXAMPLES[0].caption_0, EXAMPLES[0].caption_1),
                                                   (EXAMPLES[0].caption_1, EXAMPLES[0].caption_0)]
    assert queries[0].image_id == queries[1].image_id != queries[2].image_id
    for name in ("bigram", "classifier", "wordfreq"):
        captions, _ = wb.evaluate(name, EXAMPLES * 5)
        assert captions.shape == (20, 2), name


def test_scores_that_depend_on_the_image_are_refused():
    with pytest.raises(DataError, match=r"positions \[1\] have a caption scored differently"):
        wb.caption_scores(np.array([1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 1.5]))
    with pytest.raises(DataError, match="expected 4 scores per Winoground example"):
        wb.caption_scores(np.zeros(6))
