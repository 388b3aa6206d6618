"""Captions to token ids: truncation policies, the fast path, tokenizer fingerprints and the on-disk
token-id cache, and the plan that merges token-identical captions."""
from __future__ import annotations

import hashlib
import json
import types
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Sequence

import numpy as np

from ..atomic import atomic_path
from ..errors import DataError
from .embedding_cache import discard_damaged
from ..models import fast_tokenizer
from ..models.spec import library_versions
from ..models import bert
from ..digests import sha256_file
from .truncation import TRUNCATIONS


@dataclass(frozen=True)
class Tokens:
    ids: list[tuple[int, ...]]     #: per text: token ids incl. start/end, after truncation, unpadded
    overlength: np.ndarray         #: per text: True when it exceeded the context length
    context_length: int


def tokenize(tokenizer, texts: Sequence[str], truncation: str = "keep_eot") -> Tokens:
    """Token ids of ``texts`` with an explicit truncation policy.

    For texts within the context length the ids equal ``tokenizer(texts)`` (open_clip's own call);
    tests check that. open_clip's standard tokenizer takes ``fast_tokenizer``'s path (same ids).
    """
    if truncation not in TRUNCATIONS:
        raise ValueError(f"truncation must be one of {TRUNCATIONS}, got {truncation!r}")
    ctx = int(tokenizer.context_length)
    sot, eot = tokenizer.sot_token_id, tokenizer.eot_token_id
    ids, over = [], []
    for text, body in zip(texts, fast_tokenizer.encode_batch(tokenizer, texts)):
        full = (sot, *body, eot)
        too_long = len(full) > ctx
        if too_long and truncation == "error":
            raise DataError(f"caption has {len(full)} tokens, over the context length {ctx}: {text[:80]!r}. "
                            "Choose truncation='keep_eot' (open_clip) or 'official' (CREPE's vendored tokenizer).")
        if too_long:
            full = full[:ctx - 1] + (eot,) if truncation == "keep_eot" else full[:ctx]
        ids.append(full)
        over.append(too_long)
    return Tokens(ids, np.array(over, dtype=bool), ctx)


class _TextChunks:
    """Fixed chunks of a text list, tokenized by DataLoader workers: for tokenizers the fast path
    does not cover (``fast_tokenizer.supports``), which are slow in pure Python."""

    def __init__(self, tokenizer, texts: Sequence[str], truncation: str, chunk: int):
        self.tokenizer, self.texts, self.truncation, self.chunk = tokenizer, list(texts), truncation, chunk

    def __len__(self) -> int:
        return -(-len(self.texts) // self.chunk)

    def __getitem__(self, i: int) -> Tokens:
        return tokenize(self.tokenizer, self.texts[i * self.chunk:(i + 1) * self.chunk], self.truncation)


def tokenize_parallel(tokenizer, texts: Sequence[str], truncation: str = "keep_eot", num_workers: int = 0,
                      chunk: int = 4096) -> Tokens:
    """``tokenize`` over ``num_workers`` processes, in input order; identical output (tested).
    open_clip's standard tokenizer is tokenized in this process: the fast path beats the workers."""
    if num_workers <= 0 or len(texts) <= chunk or fast_tokenizer.supports(tokenizer):
        return tokenize(tokenizer, texts, truncation)
    from torch.utils.data import DataLoader
    chunks = _TextChunks(tokenizer, texts, truncation, chunk)
    loader = DataLoader(chunks, batch_size=None, shuffle=False, num_workers=min(num_workers, len(chunks)))
    parts = list(loader)
    return Tokens([ids for p in parts for ids in p.ids], np.concatenate([p.overlength for p in parts]),
                  int(tokenizer.context_length))


def token_key(ids: tuple[int, ...]) -> str:
    return hashlib.sha1(np.asarray(ids, dtype=np.int32).tobytes()).hexdigest()


def qualified_name(obj) -> str:
    """Module-qualified name of a function, or of an object's class."""
    kind = obj if isinstance(obj, types.FunctionType) else type(obj)
    return f"{kind.__module__}.{kind.__qualname__}"


def tokenizer_fingerprint(tokenizer) -> str | None:
    """A hash of everything that decides a tokenizer's ids, or None for a tokenizer it cannot vouch for.

    open_clip's standard ``SimpleTokenizer`` (exactly that class, unmodified): its vocabulary, merges,
    split pattern, cleaning function, special ids, context length, and the open_clip and ftfy versions
    (ftfy fixes non-plain text). The package's BERT tokenizer: its vocabulary file's SHA-256, lower-casing,
    special ids, context length and the transformers/tokenizers versions. Anything else (another class, a
    patched instance) is not shared between models nor cached on disk: it is tokenized for each run.
    """
    base = {"context_length": int(getattr(tokenizer, "context_length", -1)),
            "sot": getattr(tokenizer, "sot_token_id", None), "eot": getattr(tokenizer, "eot_token_id", None),
            "class": qualified_name(tokenizer)}
    try:
        from open_clip import tokenizer as oc
    except ImportError:
        oc = None
    if oc is not None and type(tokenizer) is oc.SimpleTokenizer:
        clean, reduce = getattr(tokenizer, "clean_fn", None), getattr(tokenizer, "reduction_fn", None)
        if ({"encode", "bpe"} & vars(tokenizer).keys() or reduce is not None
                or not isinstance(clean, types.FunctionType) or "<" in clean.__qualname__):
            return None
        vocab = hashlib.sha256(json.dumps(sorted(tokenizer.encoder.items())).encode()).hexdigest()
        merges = hashlib.sha256(json.dumps(sorted((r, *p) for p, r in tokenizer.bpe_ranks.items())).encode()).hexdigest()
        ident = {**base, "vocab": vocab, "merges": merges, "pattern": tokenizer.pat.pattern,
                 "clean_fn": qualified_name(clean), "special": list(getattr(tokenizer, "all_special_ids", [])),
                 "versions": library_versions("open_clip_torch", "ftfy", "regex")}
    else:
        if type(tokenizer) is not bert.BertTokenizer:
            return None
        ident = {**base, "vocab_sha256": sha256_file(tokenizer.vocab),
                 "lower": bool(getattr(tokenizer._tok, "do_lower_case", True)),
                 "versions": library_versions("transformers", "tokenizers")}
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:24]


def texts_digest(texts: Sequence[str]) -> str:
    """SHA-256 of a text list (lengths, then the concatenation: unambiguous for any characters)."""
    h = hashlib.sha256(np.fromiter(map(len, texts), dtype="<i8", count=len(texts)).tobytes())
    h.update("".join(texts).encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:40]


TOKENS_FOLDER = "tokens"


def _token_file_digest(list_digest: str, packed: np.ndarray) -> str:
    h = hashlib.sha256(list_digest.encode())
    h.update(np.ascontiguousarray(packed, dtype="<i4").tobytes())
    return h.hexdigest()[:40]


class TokenCache:
    """Token ids of whole text lists on disk, for one tokenizer fingerprint and truncation policy.

    A file holds the ids of one text list as one int32 array (context length, count, each text's
    length, each text's over-length flag, then all ids), named ``<list digest>-<content digest>.npy``
    and written atomically, so it is absent or complete; it is verified against its name when read,
    and a damaged one is reported (:class:`CacheWarning`), removed and recomputed, as embedding
    shards are.
    """

    def __init__(self, root: Path):
        self.root = Path(root)
        self.damaged: list[Path] = []

    def read(self, texts: Sequence[str]) -> Tokens | None:
        digest = texts_digest(texts)
        for path in sorted(self.root.glob(f"{digest}-*.npy")) if self.root.is_dir() else []:
            try:
                with open(path, "rb") as fh:
                    packed = np.load(fh, allow_pickle=False)
                if _token_file_digest(digest, packed) != path.stem.split("-", 1)[1]:
                    raise ValueError("content hash differs from its name")
                ctx, n = int(packed[0]), int(packed[1])
                lengths, over, ids = packed[2:2 + n], packed[2 + n:2 + 2 * n], packed[2 + 2 * n:]
                if n != len(texts) or int(lengths.sum()) != len(ids):
                    raise ValueError(f"{n} texts stored for a list of {len(texts)}")
            except FileNotFoundError:
                continue
            except Exception as exc:  # noqa: BLE001 - any unreadable file is recomputed, not fatal
                discard_damaged(path, "token cache file", exc, "the texts are tokenized again", self.damaged)
                continue
            flat, ends = ids.tolist(), np.cumsum(lengths).tolist()
            return Tokens([tuple(flat[e - k:e]) for e, k in zip(ends, lengths.tolist())], over.astype(bool), ctx)
        return None

    def write(self, texts: Sequence[str], tokens: Tokens) -> None:
        n = len(tokens.ids)
        lengths = np.fromiter(map(len, tokens.ids), dtype=np.int64, count=n)
        packed = np.empty(2 + 2 * n + int(lengths.sum()), dtype="<i4")
        packed[0], packed[1] = tokens.context_length, n
        packed[2:2 + n] = lengths
        packed[2 + n:2 + 2 * n] = np.asarray(tokens.overlength, dtype=bool)
        packed[2 + 2 * n:] = np.fromiter(chain.from_iterable(tokens.ids), dtype=np.int64, count=int(lengths.sum()))
        digest = texts_digest(texts)
        path = self.root / f"{digest}-{_token_file_digest(digest, packed)}.npy"
        if not path.exists():
            with atomic_path(path, what="the token-id cache", needed=packed.nbytes,
                             fix=", or pass --no-cache (cache_dir=False) or another --cache-dir (CREPE_CACHE)") as tmp:
                with open(tmp, "wb") as fh:
                    np.save(fh, packed, allow_pickle=False)


@dataclass(frozen=True)
class TextPlan:
    """The text side of a run: which texts merge (same token ids), and the encoding order."""

    row_of_text: np.ndarray   #: per text (in the order planned): its row in ``work``
    over_mask: np.ndarray     #: per text: over the context length
    over: frozenset           #: the texts over the context length
    distinct_ids: dict        #: token key → ids
    work: list                #: token keys, shortest first (ties by ids)


def text_plan(texts: Sequence[str], tokens: Tokens) -> TextPlan:
    keys = [token_key(ids) for ids in tokens.ids]
    distinct_ids = {}
    for k, ids in zip(keys, tokens.ids):
        distinct_ids.setdefault(k, ids)
    work = sorted(distinct_ids, key=lambda k: (len(distinct_ids[k]), distinct_ids[k]))
    row = {k: i for i, k in enumerate(work)}
    over_mask = np.asarray(tokens.overlength, dtype=bool)
    return TextPlan(np.fromiter(map(row.__getitem__, keys), dtype=np.int64, count=len(keys)), over_mask,
                    frozenset(t for t, o in zip(texts, over_mask.tolist()) if o), distinct_ids, work)
