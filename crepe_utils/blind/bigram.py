"""A bigram language model of true captions with interpolated Kneser–Ney smoothing.

Trained on the positives of the training queries (each image's caption once, however many of its
queries repeat it and however they punctuate it: one per distinct (image, word sequence)) and
scoring a text by its log-probability with sentence start and end:
``log P(w1 | <s>) + log P(w2 | w1) + ... + log P(</s> | wn)``.

Interpolated Kneser–Ney (Chen & Goodman 1998, eq. for the bigram case), with ``c`` the training
counts and ``N1+`` numbers of distinct neighbours:

    P(w | v)   = max(c(v, w) − D, 0) / c(v)  +  D · N1+(v •) / c(v) · P_cont(w)     (c(v) > 0)
    P(w | v)   = P_cont(w)                                                         (v never a context)
    P_cont(w)  = max(N1+(• w) − D₁, 0) / N1+(• •)  +  D₁ · |{w: N1+(• w) > 0}| / N1+(• •) / (V + 1)

where the continuation distribution is itself interpolated with the uniform one over the V
training words (with ``</s>``) plus one class for every unseen word, so an unseen word has a
finite probability. Discounts are Ney's estimate ``n1 / (n1 + 2 n2)`` from the count-of-counts of
each level (0.5 when it is undefined or zero). A model trained on no captions scores every text 0.

The total prefers short texts: every word adds a negative term. :func:`mean_log_probability` divides
it by the number of predictions, the n words and the sentence end (n + 1, so an empty text is
defined): the mean log-probability per predicted word, the logarithm of the inverse perplexity.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .folds import positives
from .settings import BlindSettings
from .text import Corpus, sum_per_sequence


@dataclass(frozen=True)
class Bigram:
    pair_keys: np.ndarray        #: sorted prev · n_symbols + next of every training pair type
    pair_counts: np.ndarray      #: their counts
    context_count: np.ndarray    #: per symbol v: c(v)
    followers: np.ndarray        #: per symbol v: N1+(v •)
    continuation: np.ndarray     #: per symbol w: P_cont(w)
    discount: float


def _discount(counts: np.ndarray) -> float:
    n1, n2 = np.sum(counts == 1), np.sum(counts == 2)
    return float(n1 / (n1 + 2 * n2)) if n1 > 0 else 0.5


def fit(corpus: Corpus, training: np.ndarray, settings: BlindSettings) -> Bigram | None:
    sequences, weight = positives(corpus, training)
    if len(sequences) == 0:
        return None
    n_symbols = corpus.n_symbols
    weight_of = np.zeros(corpus.n_sequences)
    weight_of[sequences] = weight
    type_keys, pair_type = corpus.pair_types
    all_counts = np.bincount(pair_type, weights=weight_of[corpus.bigrams[2]], minlength=len(type_keys))
    present = all_counts > 0
    keys, counts = type_keys[present], all_counts[present]
    key_prev, key_next = keys // n_symbols, keys % n_symbols
    context_count = np.bincount(key_prev, weights=counts, minlength=n_symbols)
    followers = np.bincount(key_prev, minlength=n_symbols).astype(np.float64)
    left_neighbours = np.bincount(key_next, minlength=n_symbols).astype(np.float64)
    d1 = _discount(left_neighbours[left_neighbours > 0])
    n_types = float(len(keys))
    n_known = float(np.sum(left_neighbours > 0))
    continuation = (np.maximum(left_neighbours - d1, 0) + d1 * n_known / (n_known + 1)) / n_types
    return Bigram(keys, counts, context_count, followers, continuation, _discount(counts))


def log_probability(model: Bigram | None, corpus: Corpus, sequences: np.ndarray) -> np.ndarray:
    """Natural-log probability of each of ``sequences`` (ids) under ``model``."""
    if model is None:
        return np.zeros(len(sequences))
    wanted = np.zeros(corpus.n_sequences, dtype=bool)
    wanted[sequences] = True
    prev, nxt, seq = corpus.bigrams
    take = wanted[seq]
    prev, nxt, seq = prev[take], nxt[take], seq[take]
    keys = prev * corpus.n_symbols + nxt
    at = np.minimum(np.searchsorted(model.pair_keys, keys), len(model.pair_keys) - 1)
    pair_count = np.where(model.pair_keys[at] == keys, model.pair_counts[at], 0.0)
    context = model.context_count[prev]
    seen = context > 0
    safe = np.where(seen, context, 1.0)
    d = model.discount
    interpolated = (np.maximum(pair_count - d, 0) + d * model.followers[prev] * model.continuation[nxt]) / safe
    logp = np.log(np.where(seen, interpolated, model.continuation[nxt]))
    return sum_per_sequence(seq, logp, corpus.n_sequences)[sequences]


def mean_log_probability(model: Bigram | None, corpus: Corpus, sequences: np.ndarray) -> np.ndarray:
    """:func:`log_probability` per prediction: divided by (words + 1) of each of ``sequences``."""
    predictions = np.diff(corpus.token_offsets)[sequences] + 1.0
    return log_probability(model, corpus, sequences) / predictions
