"""The table of blind scorers: one row each, looked up by name (``blind:<name>`` as a model key).

A scorer takes a list of queries (anything with ``.image_id`` and ``.candidates``, positive
first) and returns one float per candidate, flat in query order; higher means more likely the
true caption. Scores are exact: candidates that read the same in the scorer's view get
bit-identical scores, so the pessimistic rank rule counts their tie against the positive.

Trained scorers (``trained``) are cross-fitted by image over the list they are given
(:mod:`.folds`): pass a benchmark's whole query list, and its score for a query depends on the
other images' queries of that list.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from . import bigram, classifier, rules
from .folds import cross_fitted
from .settings import BlindSettings
from .text import CASED, UNCASED, Corpus, View, read_corpus

CandidateScorer = Callable[[Corpus, BlindSettings], np.ndarray]


def per_sequence(rule: Callable[[Corpus, BlindSettings], np.ndarray]) -> CandidateScorer:
    """A scorer of candidates from a rule that scores each distinct word sequence."""
    def run(corpus: Corpus, settings: BlindSettings) -> np.ndarray:
        return rule(corpus, settings)[corpus.candidate_sequence]
    return run


@dataclass(frozen=True)
class BlindScorer:
    name: str
    view: View
    run: CandidateScorer
    trained: bool
    description: str

    def score_corpus(self, corpus: Corpus, settings: BlindSettings = BlindSettings()) -> np.ndarray:
        """Scores of every candidate of a corpus already read (through this scorer's view: scorers
        of one view can share one reading of a query list)."""
        if corpus.view != self.view:
            raise ValueError(f"blind scorer {self.name!r} reads texts {self.view.name}; this corpus was read "
                             f"{corpus.view.name}")
        return self.run(corpus, settings)


_BIGRAM = cross_fitted(bigram.fit, bigram.log_probability)
_BIGRAM_MEAN = cross_fitted(bigram.fit, bigram.mean_log_probability)
_CLASSIFIER = cross_fitted(classifier.fit, classifier.logit)
_BIGRAM_TEXT = "log-probability under a Kneser–Ney bigram model of the other folds' true captions"
_BIGRAM_MEAN_TEXT = ("mean log-probability per predicted word (words and the sentence end) under the same "
                     "bigram model: its total without the length penalty")
_CLASSIFIER_TEXT = "logit of a logistic regression on word uni- and bigrams, positives vs negatives of the other folds"
_WORDFREQ_TEXT = "sum of log10 English word frequencies (wordfreq's list; a floor for unknown words)"

SCORERS: dict[str, BlindScorer] = {s.name: s for s in (
    BlindScorer("negation", UNCASED, per_sequence(rules.negation), False, "−(number of words 'no' or 'not')"),
    BlindScorer("length", UNCASED, per_sequence(rules.length), False, "−(number of words)"),
    BlindScorer("wordfreq", UNCASED, per_sequence(rules.word_frequency), False, _WORDFREQ_TEXT),
    BlindScorer("wordfreq-cased", CASED, per_sequence(rules.word_frequency), False, _WORDFREQ_TEXT + ", cased"),
    BlindScorer("bigram", UNCASED, _BIGRAM, True, _BIGRAM_TEXT),
    BlindScorer("bigram-cased", CASED, _BIGRAM, True, _BIGRAM_TEXT + ", cased"),
    BlindScorer("bigram-mean", UNCASED, _BIGRAM_MEAN, True, _BIGRAM_MEAN_TEXT),
    BlindScorer("classifier", UNCASED, _CLASSIFIER, True, _CLASSIFIER_TEXT),
    BlindScorer("classifier-cased", CASED, _CLASSIFIER, True, _CLASSIFIER_TEXT + ", cased"),
)}


def scorer(name: str) -> BlindScorer:
    if name not in SCORERS:
        raise KeyError(f"no blind scorer {name!r}; the scorers are {', '.join(SCORERS)}")
    return SCORERS[name]


def score(name: str, queries: Sequence, settings: BlindSettings = BlindSettings()) -> np.ndarray:
    """Scorer ``name``'s score of every candidate of ``queries`` (flat, in query order)."""
    row = scorer(name)
    return row.score_corpus(read_corpus(queries, row.view), settings)
