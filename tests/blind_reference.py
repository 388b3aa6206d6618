"""Independent references for the blind scorers' tests, written from the documented definitions."""
from __future__ import annotations

import hashlib
import math
import re
from collections import Counter


def words(text: str) -> list[str]:
    """The uncased view: maximal runs of a-z after lower-casing."""
    return re.findall(r"[a-z]+", text.lower())


def reference_fold(image_id: str, k: int = 5) -> int:
    """The documented rule: BLAKE2b (8-byte digest) of the id's UTF-8 bytes, big-endian, modulo k."""
    return int.from_bytes(hashlib.blake2b(image_id.encode("utf-8"), digest_size=8).digest(), "big") % k


def _discount(counts) -> float:
    n1, n2 = sum(c == 1 for c in counts), sum(c == 2 for c in counts)
    return n1 / (n1 + 2 * n2) if n1 else 0.5


def reference_bigram(captions: list[str]):
    """P(w | v) of interpolated Kneser–Ney (Chen & Goodman's bigram case) over ``captions``, its
    lowest order interpolated with a uniform over the known words plus one unknown class."""
    pairs = Counter()
    for caption in captions:
        s = ["<s>"] + words(caption) + ["</s>"]
        pairs.update(zip(s, s[1:]))
    context, followers, left = Counter(), Counter(), Counter()
    for (v, w), n in pairs.items():
        context[v] += n
        followers[v] += 1
        left[w] += 1
    d, d1, n_types, n_known = _discount(pairs.values()), _discount(left.values()), len(pairs), len(left)

    def p_cont(w):
        return (max(left[w] - d1, 0) + d1 * n_known / (n_known + 1)) / n_types

    def p(v, w):
        if not context[v]:
            return p_cont(w)
        return (max(pairs[v, w] - d, 0) + d * followers[v] * p_cont(w)) / context[v]
    return p, list(left)


def reference_log_probability(p, text: str) -> float:
    s = ["<s>"] + words(text) + ["</s>"]
    return math.fsum(math.log(p(v, w)) for v, w in zip(s, s[1:]))
