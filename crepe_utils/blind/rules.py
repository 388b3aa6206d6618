"""Blind scorers that learn nothing from the benchmark: fixed rules and an external word prior.

Each takes a :class:`~.text.Corpus` and returns one score per distinct word sequence (higher =
more likely the true caption):

* ``negation``: −(number of words "no" or "not");
* ``length``: −(number of words);
* ``word_frequency``: the sum over words of log₁₀ of the word's frequency in English according to
  the ``wordfreq`` package's bundled lists (an external corpus of web text, subtitles, books,
  news and more; nothing of the benchmark). Those lists are case-folded; a word they lack,
  including every word with a capital letter in the cased view, counts as
  ``settings.unknown_frequency``.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..lazy import lazy
from .settings import BlindSettings
from .text import Corpus, sum_per_sequence

wordfreq = lazy("wordfreq")

NEGATION_WORDS = ("no", "not")


def _per_sequence(corpus: Corpus, token_values: np.ndarray) -> np.ndarray:
    """Sum of ``token_values`` (one per token) over each word sequence, whatever the word order."""
    return sum_per_sequence(corpus.token_sequence, token_values, corpus.n_sequences)


def negation(corpus: Corpus, settings: BlindSettings) -> np.ndarray:
    is_negation = np.array([w in NEGATION_WORDS for w in corpus.vocabulary], dtype=float)
    return 0.0 - _per_sequence(corpus, is_negation[corpus.tokens])      # 0.0 - x: no negative zeros


def length(corpus: Corpus, settings: BlindSettings) -> np.ndarray:
    return 0.0 - np.diff(corpus.token_offsets).astype(float)


@lru_cache(maxsize=2)
def english_frequencies(wordlist: str) -> dict[str, float]:
    """wordfreq's English word → frequency table (loaded once per process)."""
    return wordfreq.get_frequency_dict("en", wordlist=wordlist)


def word_frequency(corpus: Corpus, settings: BlindSettings) -> np.ndarray:
    table = english_frequencies(settings.wordlist)
    floor = settings.unknown_frequency
    log_freq = np.log10(np.array([table.get(w, floor) for w in corpus.vocabulary], dtype=float))
    return _per_sequence(corpus, log_freq[corpus.tokens])
