"""What a multi-model run prepares once: queries, crop stages per preprocessing, token ids per tokenizer."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .encoders import split_preprocess
from .layout import QueryLayout, query_layout
from .tokenizing import (TOKENS_FOLDER, TextPlan, TokenCache, Tokens, tokenize_parallel,
                         tokenizer_fingerprint)


class _CropStore:
    """Stage outputs (uint8 arrays) and stage-level failures of one preprocessing stage, by crop."""

    def __init__(self, owner: "SharedInputs"):
        self._owner, self._items = owner, {}

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key):
        return self._items.get(key)

    def put(self, key, value) -> None:
        if key in self._items:
            return
        size = value.nbytes if isinstance(value, np.ndarray) else 0
        if self._owner.crop_bytes + size > self._owner.max_crop_bytes:
            self._owner.crops_not_kept += 1        # over the memory budget: the next model reads it again
            return
        self._items[key] = value
        self._owner.crop_bytes += size


class SharedInputs:
    """CPU work that engine runs on the same queries share: one object for a multi-model run
    (``evaluate-paper``), passed to each :func:`run`.

    * crops: each distinct crop is decoded, cropped, resized and centre-cropped once per distinct
      preprocessing stage (:func:`split_preprocess`), kept in memory as uint8 (within
      ``max_crop_bytes``; beyond it crops are simply read again), and finished (ToTensor, the model's
      own mean/std) for each model: the same function of the same pixels, so the same bits;
    * tokens: each distinct caption is tokenized once per tokenizer fingerprint
      (:func:`tokenizer_fingerprint`) and truncation policy, and the text work plan (token keys,
      merged duplicates, length order) is built once; token ids are also kept on disk under the
      cache folder (:class:`TokenCache`), so separate runs reuse them.

    * the query layout (:func:`query_layout`: which images exist, the crops' cache keys from each
      file's size and modification time, the sorted captions, the scoring index): built by the first
      run on a query list and reused by later runs on the same (immutable) query objects.

    Nothing here changes what is computed, only how often: results are byte-identical to separate runs.
    """

    def __init__(self, max_crop_bytes: int = 6 << 30):
        self.max_crop_bytes = int(max_crop_bytes)
        self.crop_bytes = 0
        self.crops_not_kept = 0
        self._crops: dict[str, _CropStore] = {}
        self._tokens: dict[tuple, dict[str, tuple]] = {}
        self._fingerprints: dict[int, tuple[object, str | None]] = {}
        self.plans: dict[tuple, TextPlan] = {}
        self._memo: dict = {}
        self._expected: dict = {}

    def memo(self, key, make: Callable[[], object]):
        """``make()``, computed once per ``key`` (e.g. the queries that every model of the run evaluates)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def layout(self, queries, image_index, skip_missing_images: bool) -> QueryLayout:
        """:func:`query_layout`, built once per list of query objects and image index. Both are held
        with it, so that the ids in its key stay theirs."""
        key = ("layout", id(image_index), bool(skip_missing_images), tuple(map(id, queries)))
        return self.memo(key, lambda: (image_index, list(queries),
                                       query_layout(queries, image_index, skip_missing_images)))[2]

    def expect(self, *preprocesses) -> None:
        """Announce the preprocessings of models still to come: from now on, every crop a run decodes is
        also put through these stages (those :func:`split_preprocess` can split), so a later model with
        another resize or crop does not decode it again either. An unused announcement costs time and
        memory, never correctness: stored outputs are only ever used by a model with the same stage."""
        for preprocess in preprocesses:
            split = split_preprocess(preprocess)
            if split is not None:
                self._expected.setdefault(split[2], split[0])

    def expected_stages(self) -> dict:
        return dict(self._expected)

    def crop_store(self, stage_fingerprint: str) -> _CropStore:
        return self._crops.setdefault(stage_fingerprint, _CropStore(self))

    def tokenizer_fingerprint(self, tokenizer) -> str | None:
        held = self._fingerprints.get(id(tokenizer))
        if held is None or held[0] is not tokenizer:
            held = self._fingerprints[id(tokenizer)] = (tokenizer, tokenizer_fingerprint(tokenizer))
        return held[1]

    def tokens(self, tokenizer, texts: Sequence[str], truncation: str = "keep_eot", num_workers: int = 0,
               cache_dir: str | os.PathLike | None = None) -> Tokens:
        """``tokenize_parallel(tokenizer, texts, truncation, num_workers)``, each text tokenized once."""
        return self._tokens_and_source(tokenizer, texts, truncation, num_workers, cache_dir)[0]

    def _tokens_and_source(self, tokenizer, texts, truncation, num_workers, cache_dir) -> tuple[Tokens, str]:
        texts = list(texts)
        fp = self.tokenizer_fingerprint(tokenizer)
        if fp is None:
            return tokenize_parallel(tokenizer, texts, truncation, num_workers), "tokenized"
        memo = self._tokens.setdefault((fp, truncation), {})
        missing = [t for t in texts if t not in memo]
        source = "memory"
        disk = TokenCache(Path(cache_dir) / TOKENS_FOLDER / f"{fp}-{truncation}") if cache_dir is not None else None
        if missing and disk is not None:
            stored = disk.read(texts)
            if stored is not None:
                memo.update(zip(texts, zip(stored.ids, stored.overlength.tolist())))
                missing, source = [], "disk"
        if missing:
            new = tokenize_parallel(tokenizer, missing, truncation, num_workers)
            memo.update(zip(missing, zip(new.ids, new.overlength.tolist())))
            source = "tokenized"
        held = [memo[t] for t in texts]
        tokens = Tokens([h[0] for h in held], np.fromiter((h[1] for h in held), dtype=bool, count=len(held)),
                        int(tokenizer.context_length))
        if missing and disk is not None:
            disk.write(texts, tokens)
        return tokens, source

    def plan_key(self, tokenizer, digest: str, truncation: str) -> tuple | None:
        """The key of a text plan in :attr:`plans`: tokenizer, truncation and the text list's ``digest``
        (:func:`texts_digest`); None for a tokenizer without a fingerprint."""
        fp = self.tokenizer_fingerprint(tokenizer)
        return None if fp is None else (fp, truncation, digest)
