"""Token ids identical to open_clip's ``SimpleTokenizer.encode``, with each distinct word encoded once.

``SimpleTokenizer.encode`` fixes the text (``ftfy.fix_text``, ``html.unescape`` twice), collapses
whitespace, lower-cases, splits with its regex and BPE-encodes each piece. On a *plain* caption —
printable ASCII, tab and newline only, no ``&`` — the fixing changes nothing: ftfy's fixes act on
non-ASCII text, on control characters other than tab and newline, on carriage returns and on
HTML entities, and entities need ``&``. No piece of the split regex can match whitespace, so the
ids of a plain caption are the ids of its whitespace-separated, lower-cased words, concatenated.
Benchmark captions share a small vocabulary, so each distinct word is encoded once, with the
tokenizer's own regex, BPE and vocabulary, and a caption becomes a few dictionary look-ups. Every
caption that is not plain goes through the tokenizer's own ``encode`` whole.

Only open_clip's standard ``SimpleTokenizer`` takes the fast path (``supports``); any other
tokenizer, or one configured differently (other cleaning, extra special tokens, a subclass), is
encoded by its own ``encode``. The vocabulary needs no check: every word is encoded with the
tokenizer's own BPE merges and vocabulary.
"""
from __future__ import annotations

import contextlib
import gc
import re
from functools import lru_cache
from itertools import chain
from typing import Sequence

import numpy as np

#: any character outside tab, newline and printable ASCII, and '&' (HTML entities)
_NOT_PLAIN = re.compile(r"[^\t\n -%'-~]")


def is_plain(text: str) -> bool:
    """True when open_clip's text fixing provably leaves ``text`` unchanged (see the module docstring)."""
    return _NOT_PLAIN.search(text) is None


@lru_cache(maxsize=1)
def _standard_split_pattern() -> str | None:
    try:
        from open_clip.tokenizer import SimpleTokenizer
    except ImportError:
        return None
    return SimpleTokenizer().pat.pattern


def supports(tokenizer) -> bool:
    """Whether ``tokenizer`` is open_clip's standard ``SimpleTokenizer``, the one the fast path reproduces."""
    try:
        from open_clip import tokenizer as oc
    except ImportError:
        return False
    if type(tokenizer) is not oc.SimpleTokenizer or {"encode", "bpe"} & vars(tokenizer).keys():
        return False
    return (getattr(tokenizer, "clean_fn", None) is getattr(oc, "_clean_lower", object())
            and getattr(tokenizer, "reduction_fn", None) is None
            and tokenizer.pat.pattern == _standard_split_pattern())


def encode_batch(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """``[tokenizer.encode(t) for t in texts]`` (ids without start and end tokens), fast where ``supports``."""
    if not supports(tokenizer):
        return [tokenizer.encode(t) for t in texts]
    not_plain = _not_plain_indices(texts)
    lookup = _WordIds(tokenizer).__getitem__
    with _cycle_collector_paused():
        return [tokenizer.encode(text) if i in not_plain
                else list(chain.from_iterable(map(lookup, text.lower().split())))
                for i, text in enumerate(texts)]


@contextlib.contextmanager
def _cycle_collector_paused():
    """Pause Python's cycle collector while building many small lists of ints: they hold no
    cycles, and each collection would rescan every object alive."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _not_plain_indices(texts: Sequence[str]) -> set[int]:
    """Positions of the texts that are not plain, from one scan of all texts joined by newlines
    (a newline is plain, so every match lies inside one text)."""
    hits = [m.start() for m in _NOT_PLAIN.finditer("\n".join(texts))]
    if not hits:
        return set()
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1)   # one past each newline
    return set(np.searchsorted(ends, hits, side="right").tolist())


class _WordIds(dict):
    """Lower-cased plain word → its ids, each word encoded once, on first look-up.

    A plain, lower-cased word without whitespace is its own cleaned text, so its ids are what
    ``SimpleTokenizer.encode`` computes after cleaning: split with the tokenizer's regex,
    byte-encode each piece, BPE it, look the BPE tokens up.
    """

    def __init__(self, tokenizer):
        super().__init__()
        self._tokenizer = tokenizer

    def __missing__(self, word: str) -> list[int]:
        tok = self._tokenizer
        ids = []
        for piece in tok.pat.findall(word):
            byte_chars = "".join(tok.byte_encoder[b] for b in piece.encode("utf-8"))
            ids.extend(tok.encoder[bpe_token] for bpe_token in tok.bpe(byte_chars).split(" "))
        self[word] = ids
        return ids
