"""What a blind scorer reads: each candidate's words, as the evaluated family's tokenizer sees them.

A *view* turns a text into words: maximal runs of ASCII letters, after lower-casing for the
uncased view (CLIP's tokenizers lower-case), as written for the cased one. Everything else
(digits, punctuation, apostrophes, accented letters) separates words and is dropped, so
``"don't"`` reads as ``don``, ``t``.

A :class:`Corpus` holds a query list in the form every scorer works on: the distinct word
sequences of its candidates, each once, as integer word ids, and for every candidate (flat, in
query order, positive first) the id of its word sequence. Two candidates that read the same in a
view share one sequence, so every scorer gives them bit-identical scores: a tie between them is a
real tie.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np

from ..errors import DataError
from ..lazy import lazy

scipy = lazy("scipy")          # scipy.sparse loads on first use


@dataclass(frozen=True)
class View:
    """How a scorer reads a text: which letters make a word, and whether case is folded first."""

    name: str
    pattern: re.Pattern
    lower: bool

    def words(self, text: str) -> list[str]:
        return self.pattern.findall(text.lower() if self.lower else text)


UNCASED = View("uncased", re.compile(r"[a-z]+"), lower=True)
CASED = View("cased", re.compile(r"[A-Za-z]+"), lower=False)


@dataclass(frozen=True)
class TextQuery:
    """A query as blind scorers need it, for lists that have no query type of their own."""

    image_id: str
    candidates: tuple[str, ...]     #: positive first


@dataclass(frozen=True, eq=False)
class Corpus:
    """A query list read through one view (see the module docstring)."""

    view: View
    vocabulary: tuple[str, ...]      #: word id → word
    tokens: np.ndarray               #: word ids of every distinct sequence, concatenated
    token_offsets: np.ndarray        #: sequence t is tokens[token_offsets[t]:token_offsets[t + 1]]
    candidate_sequence: np.ndarray       #: per candidate: the id of its word sequence
    query_offsets: np.ndarray        #: query q's candidates are query_offsets[q]:query_offsets[q + 1]
    image_ids: tuple[str, ...]       #: per query

    @property
    def n_sequences(self) -> int:
        return len(self.token_offsets) - 1

    @property
    def n_queries(self) -> int:
        return len(self.image_ids)

    @cached_property
    def token_sequence(self) -> np.ndarray:
        """Per token: the sequence it belongs to."""
        return np.repeat(np.arange(self.n_sequences), np.diff(self.token_offsets))

    @cached_property
    def image_index(self) -> np.ndarray:
        """Per query: the index of its image id among the distinct ids (sorted)."""
        return np.unique(np.array(self.image_ids, dtype=str), return_inverse=True)[1].reshape(-1)

    @cached_property
    def candidate_query(self) -> np.ndarray:
        """Per candidate: its query."""
        return np.repeat(np.arange(self.n_queries), np.diff(self.query_offsets))

    @cached_property
    def is_positive(self) -> np.ndarray:
        """Per candidate: whether it is its query's positive (the first candidate)."""
        out = np.zeros(len(self.candidate_sequence), dtype=bool)
        out[self.query_offsets[:-1]] = True
        return out

    @cached_property
    def bigrams(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(previous, next, sequence) of every word pair of every sequence, with the sentence start
        (id ``len(vocabulary)``) before the first word and the sentence end (id + 1) after the last."""
        start, end = len(self.vocabulary), len(self.vocabulary) + 1
        lengths = np.diff(self.token_offsets)
        # Sequence t of n words is laid out as start, w1 .. wn, end from start_at[t] on; every
        # position but an end is the first of a pair.
        start_at = self.token_offsets[:-1] + 2 * np.arange(self.n_sequences)
        end_at = start_at + lengths + 1
        padded = np.empty(len(self.tokens) + 2 * self.n_sequences, dtype=np.int64)
        is_word = np.ones(len(padded), dtype=bool)
        is_word[start_at] = is_word[end_at] = False
        padded[is_word] = self.tokens
        padded[start_at], padded[end_at] = start, end
        is_end = np.zeros(len(padded), dtype=bool)
        is_end[end_at] = True
        first = np.flatnonzero(~is_end)
        return padded[first], padded[first + 1], np.repeat(np.arange(self.n_sequences), lengths + 1)

    @property
    def n_symbols(self) -> int:
        """Words, the sentence start and the sentence end."""
        return len(self.vocabulary) + 2

    @cached_property
    def pair_types(self) -> tuple[np.ndarray, np.ndarray]:
        """(sorted keys ``previous · n_symbols + next`` of the distinct word pairs, per pair of
        :attr:`bigrams`: the index of its key)."""
        prev, nxt, _ = self.bigrams
        keys, where = np.unique(prev * self.n_symbols + nxt, return_inverse=True)
        return keys, where.reshape(-1)

    @cached_property
    def ngram_presence(self) -> scipy.sparse.csr_matrix:
        """Sequences × features, 1 where the sequence has the feature: each word (columns 0 .. V−1),
        then each distinct word pair of :attr:`pair_types` (sentence start and end included)."""
        keys, pair_type = self.pair_types
        rows = np.concatenate([self.token_sequence, self.bigrams[2]])
        cols = np.concatenate([self.tokens, len(self.vocabulary) + pair_type])
        shape = (self.n_sequences, len(self.vocabulary) + len(keys))
        matrix = scipy.sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)
        matrix.sum_duplicates()
        matrix.data[:] = 1.0
        return matrix


def sum_per_sequence(sequence: np.ndarray, values: np.ndarray, n_sequences: int) -> np.ndarray:
    """Per sequence, the sum of the ``values`` whose ``sequence`` entry is its id, added in ascending
    order of value: sequences holding the same values in any order (a sentence and its word swap,
    under an order-free score) get bit-identical sums, so their tie stays a tie."""
    order = np.lexsort((values, sequence))
    return np.bincount(sequence[order], weights=values[order], minlength=n_sequences).astype(np.float64)


def read_corpus(queries: Sequence, view: View) -> Corpus:
    """The corpus of ``queries`` (objects with ``.image_id`` and ``.candidates``, positive first)."""
    image_ids, texts, query_offsets = [], [], [0]
    for q, query in enumerate(queries):
        image_ids.append(_image_id(query, q))
        texts.extend(_candidates(query, q))
        query_offsets.append(len(texts))
    strings = list(dict.fromkeys(texts))
    vocabulary, words, word_offsets = _words(strings, view)
    # Strings that read the same (they differ in case or punctuation only) share one sequence.
    sequence_of: dict[tuple[int, ...], int] = {}
    tokens: list[int] = []
    token_offsets = [0]
    string_sequence = []
    for a, b in zip(word_offsets, word_offsets[1:]):
        key = tuple(words[a:b])
        t = sequence_of.get(key)
        if t is None:
            t = sequence_of[key] = len(sequence_of)
            tokens.extend(key)
            token_offsets.append(len(tokens))
        string_sequence.append(t)
    index = {s: i for i, s in enumerate(strings)}
    candidate_string = np.fromiter(map(index.__getitem__, texts), dtype=np.int64, count=len(texts))
    return Corpus(view, vocabulary, np.array(tokens, dtype=np.int64), np.array(token_offsets, dtype=np.int64),
                  np.array(string_sequence, dtype=np.int64)[candidate_string],
                  np.array(query_offsets, dtype=np.int64), tuple(image_ids))


def _words(strings: list[str], view: View) -> tuple[tuple[str, ...], list[int], list[int]]:
    """(vocabulary, word ids of every string concatenated, where each string's words start).

    One regex pass over all strings joined by line breaks (a line break is no letter, so turning
    one inside a string into a space changes none of its words)."""
    joined = "\n".join(strings)
    if joined.count("\n") != len(strings) - 1:
        joined = "\n".join(s.replace("\n", " ") for s in strings)
    if view.lower:
        joined = joined.lower()
    found = re.findall(view.pattern.pattern + "|\n", joined)
    ids = {w: i for i, w in enumerate(dict.fromkeys(found))}
    separator = ids.setdefault("\n", len(ids))
    found_ids = np.fromiter(map(ids.__getitem__, found), dtype=np.int64, count=len(found))
    is_separator = found_ids == separator
    words = found_ids[~is_separator]
    words -= words > separator                     # close the gap the separator leaves
    vocabulary = tuple(w for w in ids if w != "\n")
    # string i's words end where its separator stands, less the separators before it
    ends = np.r_[np.flatnonzero(is_separator), len(found)] - np.arange(len(strings))
    return vocabulary, words.tolist(), [0] + ends.tolist() if strings else [0]


def _image_id(query, position: int) -> str:
    image_id = getattr(query, "image_id", None)
    if image_id is None or str(image_id) == "":
        raise DataError(f"query {position} has no image_id; a blind scorer needs one to keep an image's queries "
                        "in one fold")
    return str(image_id)


def _candidates(query, position: int) -> Sequence[str]:
    candidates = getattr(query, "candidates", None)
    if candidates is None or isinstance(candidates, str) or len(candidates) == 0:
        raise DataError(f"query {position} (image {getattr(query, 'image_id', None)!r}): candidates must be a "
                        f"non-empty sequence of texts, positive first; got {candidates!r}")
    for j, text in enumerate(candidates):
        if not isinstance(text, str):
            raise DataError(f"query {position} (image {query.image_id!r}): candidate {j} is "
                            f"{type(text).__name__} {text!r}, not a text")
    return candidates
