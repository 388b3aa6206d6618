"""Cross-fitting by image: each fold's queries are scored by a model trained on the other folds only.

Every query of one image id lies in one fold, chosen by a hash of the id (BLAKE2b of its UTF-8
bytes modulo the fold count): the same on every machine and under every ``PYTHONHASHSEED``, and
independent of the order and content of the query list. So nothing of a query's image, its
positive or its negatives, is in the data its scores were trained on (another image's queries may
hold the same words: they enter as that image's).

A trained scorer supplies ``fit(corpus, training_queries, settings) → model`` and
``score(model, corpus, sequences) → one score per sequence``; :func:`cross_fitted` turns the pair
into a scorer of candidates. Each distinct word sequence of a fold is scored once, so equal
candidates of one query get bit-identical scores.
"""
from __future__ import annotations

import hashlib
from typing import Callable

import numpy as np

from .settings import BlindSettings
from .text import Corpus


def fold_of(image_id: str, folds: int) -> int:
    digest = hashlib.blake2b(str(image_id).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % folds


def query_folds(corpus: Corpus, folds: int) -> np.ndarray:
    """Per query: its fold."""
    of_image = {image_id: fold_of(image_id, folds) for image_id in set(corpus.image_ids)}
    return np.array([of_image[i] for i in corpus.image_ids], dtype=np.int64)


def positives(corpus: Corpus, training: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The true captions of the ``training`` queries (bool per query): (distinct sequence ids, how
    many distinct images have each as a positive). A caption repeated over an image's queries (one
    per hard-negative file), or spelled there with other punctuation, counts once."""
    first = corpus.query_offsets[:-1][training]
    pairs = np.unique(np.stack([corpus.candidate_sequence[first], corpus.image_index[training]]), axis=1)
    return np.unique(pairs[0], return_counts=True)


def labelled(corpus: Corpus, training: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (sequence, label) pairs of the ``training`` queries' candidates: (sequence ids,
    labels), label 1 for a query's positive and 0 for its negatives."""
    keep = training[corpus.candidate_query]
    keys = np.unique(corpus.candidate_sequence[keep] * 2 + corpus.is_positive[keep])
    return keys // 2, keys % 2


Fit = Callable[[Corpus, np.ndarray, BlindSettings], object]
Score = Callable[[object, Corpus, np.ndarray], np.ndarray]


def cross_fitted(fit: Fit, score: Score) -> Callable[[Corpus, BlindSettings], np.ndarray]:
    """A scorer of candidates (flat, query order) that scores each fold with a model fit on the others."""
    def run(corpus: Corpus, settings: BlindSettings) -> np.ndarray:
        fold = query_folds(corpus, settings.folds)
        out = np.empty(len(corpus.candidate_sequence), dtype=np.float64)
        for k in range(settings.folds):
            held_out = fold == k
            if not held_out.any():
                continue
            model = fit(corpus, ~held_out, settings)
            at = np.flatnonzero(held_out[corpus.candidate_query])
            sequences, where = np.unique(corpus.candidate_sequence[at], return_inverse=True)
            out[at] = score(model, corpus, sequences)[where.reshape(-1)]
        return out
    return run
