"""Score a model on Winoground: encode each image and caption once, then score every example.

Encoding uses the engine's batched encoders (:func:`crepe_utils.engine.encoders.encode_texts`,
:func:`crepe_utils.engine.encoders.encode_images`) under an explicit precision. Captions are encoded once
per distinct *token sequence* and images once per distinct *byte content* (the real data have
800 of each), so identical inputs get bit-identical embeddings and tie exactly instead of
differing in the last bits with their batch position. Images are decoded one batch at a time.

:func:`evaluate` returns an :class:`Evaluation`: the per-example table (the four similarities,
strict and first-index flags, tie flags, tags) and the summary of
:func:`crepe_utils.winoground.statistics.summarize`.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..engine import encoders
from ..engine import precisions
from ..engine import tokenizing
from .data import TEXT_FIELDS, WinogroundData, decode_image
from .scoring import METRICS, SCORE_COLUMNS, flags, score_matrices, ties
from .statistics import summarize


@dataclass
class Evaluation:
    """What :func:`evaluate` found."""

    per_example: pd.DataFrame          #: one row per example (PER_EXAMPLE_COLUMNS)
    summary: pd.DataFrame              #: one row per subset × metric (statistics.SUMMARY_COLUMNS)
    encoding: dict = field(default_factory=dict)   #: counts, content digest and timings of the encoding


PER_EXAMPLE_COLUMNS = [*TEXT_FIELDS, "why_hard", *SCORE_COLUMNS, *METRICS,
                       *(f"{m}_first_index" for m in METRICS), *(f"{m}_tie" for m in METRICS),
                       "image_0", "image_1", "source"]


def embed_texts(loaded, data: WinogroundData, batch_size: int = 256,
                precision: str = "fp32") -> tuple[np.ndarray, dict]:
    """Embeddings of every caption (``[ex0 c0, ex0 c1, ex1 c0, ...]``), one encoding per token sequence."""
    texts = [c for ex in data.examples for c in (ex.caption_0, ex.caption_1)]
    tokens = tokenizing.tokenize(loaded.tokenizer, texts, loaded.spec.truncation)
    keys = [tokenizing.token_key(ids) for ids in tokens.ids]
    first: dict[str, int] = {}
    for i, key in enumerate(keys):
        first.setdefault(key, i)
    distinct = list(first)
    emb = encoders.encode_texts(loaded, [texts[first[k]] for k in distinct], batch_size, precision)
    row = {k: j for j, k in enumerate(distinct)}
    stats = {"n_texts": len(texts), "n_distinct_texts": len(distinct),
             "n_overlength_texts": int(tokens.overlength.sum())}
    return emb[[row[k] for k in keys]], stats


def embed_images(loaded, data: WinogroundData, batch_size: int = 64,
                 precision: str = "fp32") -> tuple[np.ndarray, dict]:
    """Embeddings of every image (``[ex0 i0, ex0 i1, ex1 i0, ...]``), one encoding per distinct content.

    Also returns a digest of all image bytes in example order: it identifies the images whatever
    the layout they came in.
    """
    digests, row_of = [], {}
    pending: list = []                     # decoded images waiting for a full batch
    chunks: list[np.ndarray] = []
    overall = hashlib.sha256()

    def flush() -> None:
        if pending:
            chunks.append(encoders.encode_images(loaded, pending, batch_size, precision))
            pending.clear()

    for index in range(len(data)):
        for k in (0, 1):
            raw = data.image_bytes(index, k)
            digest = hashlib.sha256(raw).hexdigest()
            overall.update(digest.encode())
            digests.append(digest)
            if digest not in row_of:
                row_of[digest] = len(row_of)
                pending.append(decode_image(raw, data.images.where(index, k)))
                if len(pending) == batch_size:
                    flush()
    flush()
    emb = np.concatenate(chunks)
    stats = {"n_images": len(digests), "n_distinct_images": len(row_of), "images_sha256": overall.hexdigest()}
    return emb[[row_of[d] for d in digests]], stats


def per_example_table(data: WinogroundData, scores: np.ndarray, why_hard: pd.Series | None = None) -> pd.DataFrame:
    """The per-example table from the score matrices (see PER_EXAMPLE_COLUMNS)."""
    out = data.frame()
    out["why_hard"] = out["id"].map(why_hard) if why_hard is not None else pd.NA
    for j, col in enumerate(SCORE_COLUMNS):
        out[col] = scores[:, j // 2, j % 2]
    strict, first_index, tied = flags(scores), flags(scores, "first_index"), ties(scores)
    for m in METRICS:
        out[m] = strict[m]
        out[f"{m}_first_index"] = first_index[m]
        out[f"{m}_tie"] = tied[m]
    return out[PER_EXAMPLE_COLUMNS]


def evaluate(loaded, data: WinogroundData, *, why_hard: pd.Series | None = None, batch_size: int = 64,
             text_batch_size: int = 256, precision: str = "fp32", grouping: str = "contiguous",
             level: float = 0.95, n_boot: int = 10_000, seed: int = 0) -> Evaluation:
    """Score ``loaded`` (a :class:`crepe_utils.models.LoadedModel`) on ``data``.

    ``why_hard`` maps example id → "Why is Winoground hard?" class (adds that breakdown).
    """
    if precision not in precisions.PRECISIONS:
        raise ValueError(f"precision must be one of {precisions.PRECISIONS}, got {precision!r}")
    t0 = time.perf_counter()
    text_emb, text_stats = embed_texts(loaded, data, text_batch_size, precision)
    t_text = time.perf_counter()
    image_emb, image_stats = embed_images(loaded, data, batch_size, precision)
    t_image = time.perf_counter()
    per_example = per_example_table(data, score_matrices(text_emb, image_emb), why_hard)
    summary = summarize(per_example, grouping=grouping, level=level, n_boot=n_boot, seed=seed)
    encoding = {**text_stats, **image_stats, "seconds_texts": round(t_text - t0, 3),
                "seconds_images": round(t_image - t_text, 3)}
    return Evaluation(per_example, summary, encoding)
