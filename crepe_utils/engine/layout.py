"""What a run derives from its query list alone, before any model: the queries whose image file
exists, the distinct crops and their cache keys, the distinct captions, and flat index arrays that
place every query and candidate for scoring. Several models on the same queries build it once
(:meth:`SharedInputs.layout`)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import DataError
from .tokenizing import texts_digest


@dataclass(frozen=True)
class QueryLayout:
    kept: list                      #: the queries whose image file exists, in input order
    missing: list                   #: (query, "missing image") for the others
    crops: list                     #: distinct (image id, box) of the kept queries, sorted
    crop_keys: list                 #: per crop: its cache key (image id, box, the image's stamp: file size and mtime)
    crop_of_query: np.ndarray       #: per kept query: its crop's index in ``crops``
    texts: list                     #: distinct candidate captions of the kept queries, sorted
    texts_digest: str               #: :func:`texts_digest` of ``texts``
    text_of_candidate: np.ndarray   #: per candidate of the kept queries (query by query, positive first): its index in ``texts``
    offsets: np.ndarray             #: query i's candidates are ``text_of_candidate[offsets[i]:offsets[i + 1]]``


def crop_sort_key(crop: tuple) -> tuple:
    """The work order of crops: by image id (numerically for digit ids), then box; an image's crops are adjacent."""
    return len(crop[0]), crop[0], crop[1]


def _few(names: list[str], shown: int = 3) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def query_layout(queries: Sequence, image_index, skip_missing_images: bool) -> QueryLayout:
    """The :class:`QueryLayout` of ``queries``; missing image files are a :class:`DataError` unless skipped."""
    missing_ids = set(image_index.missing(q.image_id for q in queries))
    if missing_ids and not skip_missing_images:
        first = sorted(missing_ids, key=lambda s: (len(s), s))[:10]
        users: dict[str, list[str]] = {i: [] for i in first}
        for q in queries:
            if q.image_id in users:
                users[q.image_id].append(q.query_id)
        listed = ", ".join(f"{i} (used by {_few(users[i])})" for i in first)
        raise DataError(f"{len(missing_ids):,} image(s) missing under {image_index.root} (first: {listed}). "
                        f"{image_index.remedy}, or pass --skip-missing-images to evaluate without those queries "
                        "(they are counted).")
    kept = [q for q in queries if q.image_id not in missing_ids]
    missing = [(q, "missing image") for q in queries if q.image_id in missing_ids]
    crop_key: dict[tuple, str] = {}
    for q in kept:
        ck = (q.image_id, q.box)
        if ck not in crop_key:
            stamp = image_index.stamp(q.image_id)
            crop_key[ck] = hashlib.sha1(f"{q.image_id}|{q.box!r}|{stamp}".encode()).hexdigest()
    crops = sorted(crop_key, key=crop_sort_key)
    crop_index = {c: i for i, c in enumerate(crops)}
    texts = sorted({c for q in kept for c in q.candidates})
    text_index = {t: i for i, t in enumerate(texts)}
    n_cand = np.fromiter((len(q.candidates) for q in kept), dtype=np.int64, count=len(kept))
    offsets = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum(n_cand, out=offsets[1:])
    return QueryLayout(
        kept=kept, missing=missing, crops=crops, crop_keys=[crop_key[c] for c in crops],
        crop_of_query=np.fromiter((crop_index[(q.image_id, q.box)] for q in kept), dtype=np.int64, count=len(kept)),
        texts=texts, texts_digest=texts_digest(texts),
        text_of_candidate=np.fromiter((text_index[c] for q in kept for c in q.candidates), dtype=np.int64,
                                      count=int(offsets[-1])),
        offsets=offsets)
