"""The evaluation engine: encode every distinct crop and caption once, then score every query.

Where the official scripts encode one image at a time and re-encode the same crop and caption for
every HN type, split and complexity, the engine

1. collects the distinct crops (image id + box) and the distinct captions — distinct by CLIP
   *token ids*, so captions that differ only in case or spacing are one text and tie exactly;
2. encodes each once, in large batches (images decoded by one pool of persistent DataLoader
   workers per run, fed every shard in one stream so that they never wait at a shard's end; on
   the CPU the main process keeps only the cores the workers leave; open_clip's captions
   tokenized and planned by ``fast_tokenizer`` in a thread while the crops encode, other
   tokenizers by workers), under an explicit precision, and stores the normalised embeddings
   in a content-addressed cache on disk;
3. scores each query's own candidates and ranks its positive (ties explicit, see ``metrics``).

Exactness choices, each switchable and recorded in the results manifest:

* **precision** ``fp32`` (default; TF32 disabled, as on the paper's TITAN X), ``tf32``, ``bf16``
  or ``fp16`` autocast, or ``fp16-weights``: fp16 weights converted at load as OpenAI's
  ``clip.load`` does on CUDA, the paper's OpenAI CLIP runs (``models.load_model``);
* **length cutting**: captions are sorted by length and each batch is cut to its longest
  caption. The text transformer is causal and pools at the end token, so the features are the
  same function of the same tokens; only floating-point summation order can differ
  (``speed/bench_engine.py`` measures that ranks stay identical). ``length_cut=False``
  runs the full 77 tokens;
* **truncation** of captions over the context length: ``keep_eot`` (open_clip's tokenizer: cut
  and end with the end token; default), ``official`` (the CREPE repository's vendored tokenizer:
  cut at 77 tokens, end token dropped), ``error``. Over-long captions are counted either way.

Resumability: embeddings are written in shards, each a run of whole batches over a
deterministically sorted work list, named by their content and verified when read (see
:class:`EmbeddingStore`); a killed run recomputes only the missing (or damaged) shards, with the
same batch composition, and so ends with bit-identical embeddings and result files. The cache
folder is keyed by everything that can change a stored byte (:func:`model_fingerprint`,
:func:`store_name`): a run with other settings computes into another folder instead of mixing.

One limit of bit-identity, stated rather than hidden: an embedding's last bits can depend on the
batch it was computed in (floating-point summation order; ~1e-7 for fp32, see the benchmark). Two
identical runs are bit-identical; a run that reuses cache entries written by a *different* query
set can differ from a fresh run in those last bits, which changes a rank only for a near-tie at
that level. ``cache_dir=None`` (``--no-cache``) rules this out.

Several models on the same queries (``evaluate-paper``) share one :class:`SharedInputs`: the query
layout (:mod:`.layout`) is built once, each crop is decoded once and resized once per distinct
preprocessing stage, each caption tokenized once per tokenizer; the results are byte-identical to separate runs (tests/test_shared_inputs.py).
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from ..errors import DataError
from .embedding_cache import EmbeddingStore, fill_store, model_fingerprint, store_name
from .encoders import CropPipeline, UNREADABLE_IMAGE, cut_text_forward, encode_crop_groups, encode_token_ids
from .precisions import check_weights, precision_context, settings_in_effect
from .shared_inputs import SharedInputs
from .threads import Background, available_cores, threads_beside_workers, torch_threads
from .tokenizing import TRUNCATIONS, TextPlan, text_plan
from ..models import fast_tokenizer


class Query(Protocol):
    """What the engine needs of a query: its id, its image region and its candidates (positive first)."""

    query_id: str
    image_id: str
    box: tuple | None
    candidates: tuple[str, ...]


#: Prefixes of ``EngineResult.stats`` entries that describe one run (timings, cache use), not its result.
RUN_STATS = ("seconds_", "run_")


@dataclass
class EngineResult:
    """Scores of every kept query (flat, with offsets) plus what the engine did, for the manifest.

    Query ``i`` has candidate scores ``scores[offsets[i]:offsets[i + 1]]``, positive first. Flat
    arrays keep memory proportional to the number of candidates (4 bytes each), not to Python
    objects per query.
    """

    queries: list[Query]                        #: the kept queries
    scores: np.ndarray                          #: all candidates of all kept queries (RunOptions.score_dtype)
    offsets: np.ndarray                         #: int64, len(queries) + 1
    truncated: np.ndarray                       #: per kept query: candidates truncated
    stats: dict = field(default_factory=dict)
    skipped: list[tuple[Query, str]] = field(default_factory=list)

    def query_scores(self, i: int) -> np.ndarray:
        return self.scores[self.offsets[i]:self.offsets[i + 1]]

    @classmethod
    def of_scores(cls, queries: Sequence[Query], scores: np.ndarray, stats: dict) -> "EngineResult":
        """The result of scores computed without the engine (a text-only scorer): every query kept."""
        counts = np.fromiter((len(q.candidates) for q in queries), dtype=np.int64, count=len(queries))
        offsets = np.zeros(len(queries) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        if len(scores) != offsets[-1]:
            raise ValueError(f"{len(scores)} scores for {offsets[-1]} candidates")
        return cls(list(queries), np.asarray(scores), offsets, np.zeros(len(queries), dtype=np.int64),
                   {"n_queries": len(queries), "n_scored": len(queries), "n_skipped": 0, **stats}, [])


def score_candidates(text_emb: np.ndarray, crop_emb: np.ndarray, cand_idx: np.ndarray, crop_of_cand: np.ndarray,
                     dtype=np.float32, chunk: int = 1 << 16) -> np.ndarray:
    """Dot products ``text_emb[cand_idx[n]] · crop_emb[crop_of_cand[n]]`` for every candidate n, summed in
    ``dtype`` (float32 as the official CREPE code; float64 where scores of different images are compared).

    Each product is computed on its own row pair, so token-identical candidates (same row of
    ``text_emb``) of one query score bit-identically: their tie is exact.
    """
    out = np.empty(len(cand_idx), dtype=dtype)
    for start in range(0, len(cand_idx), chunk):
        sl = slice(start, start + chunk)
        out[sl] = np.einsum("nd,nd->n", text_emb[cand_idx[sl]].astype(dtype, copy=False),
                            crop_emb[crop_of_cand[sl]].astype(dtype, copy=False), optimize=False)
    return out


def _overlength_message(queries: Sequence[Query], over: set[str], context_length: int) -> str:
    rows = [(q.query_id, c) for q in queries for c in q.candidates if c in over]
    listed = "\n  ".join(f"{qid}: {c[:70]!r}{'…' if len(c) > 70 else ''}" for qid, c in rows[:10])
    return (f"{len(over)} caption(s) exceed the context length of {context_length} tokens, in {len(rows)} "
            f"candidate(s):\n  {listed}\nChoose truncation='keep_eot' (open_clip's behaviour) or 'official' (CREPE's "
            "vendored tokenizer, end token dropped); CLI: --truncation.")


def _unusable_crops(kept: list[Query], problems: dict[tuple, tuple[str, str]], image_index,
                    skip_images: bool, skip_boxes: bool) -> tuple[np.ndarray, list[tuple[Query, str]]]:
    """Which of ``kept`` still have an embedding for their crop (a mask), and why each other one was
    dropped; or raise, naming the culprit.

    An unreadable image is the image's fault (every query on it goes); a box outside its image or a
    crop that cannot be preprocessed is its CSV row's fault (only the queries with that box go).
    """
    by_image = {image_id: why for (image_id, _), (kind, why) in problems.items() if kind == UNREADABLE_IMAGE}
    by_box = {crop: (kind, why) for crop, (kind, why) in problems.items() if kind != UNREADABLE_IMAGE}
    if by_image and not skip_images:
        listed = [f"{image_index.describe(i)}: {why}" for i, why in sorted(by_image.items())[:10]]
        raise DataError(f"{len(by_image)} image(s) could not be read:\n  " + "\n  ".join(listed)
                        + f"\n{image_index.remedy}, or pass --skip-missing-images (their queries are skipped and "
                        "counted).")
    if by_box and not skip_boxes:
        rows = [(q.query_id, by_box[(q.image_id, q.box)]) for q in kept if (q.image_id, q.box) in by_box]
        listed = [f"{qid}: {kind}: {why}" for qid, (kind, why) in rows[:10]]
        raise DataError(f"{len(rows)} query row(s) have a region that cannot be encoded:\n  " + "\n  ".join(listed)
                        + ("\n  ..." if len(rows) > 10 else "")
                        + "\nFix those rows, or pass --skip-bad-rows (they are skipped and counted).")
    keep, dropped = np.ones(len(kept), dtype=bool), []
    for i, q in enumerate(kept):
        if q.image_id in by_image:
            dropped.append((q, UNREADABLE_IMAGE))
        elif (q.image_id, q.box) in by_box:
            dropped.append((q, by_box[(q.image_id, q.box)][0]))
        else:
            continue
        keep[i] = False
    return keep, dropped


def _scores(layout, keep: np.ndarray | None, plan: TextPlan, text_emb_of, crop_emb_of, dtype=np.float32):
    """Scores, offsets and per-query truncated-candidate counts of the kept queries (``keep``: a mask over
    ``layout.kept``, None for all), from the flat index arrays of the layout and the plan: no Python
    loop over candidates. ``text_emb_of(keys)``/``crop_emb_of(keys)`` give the embeddings of store keys."""
    n_cand = np.diff(layout.offsets)
    text_of_cand, crop_of_query = layout.text_of_candidate, layout.crop_of_query
    if keep is not None:
        text_of_cand, crop_of_query, n_cand = text_of_cand[np.repeat(keep, n_cand)], crop_of_query[keep], n_cand[keep]
    offsets = np.zeros(len(n_cand) + 1, dtype=np.int64)
    np.cumsum(n_cand, out=offsets[1:])
    live = np.zeros(len(layout.crops), dtype=bool)       # crops with a kept query: unreadable ones are gone
    live[crop_of_query] = True
    crop_row = np.cumsum(live) - 1
    scores = score_candidates(text_emb_of(plan.work), crop_emb_of([layout.crop_keys[i] for i in np.flatnonzero(live)]),
                              plan.row_of_text[text_of_cand], np.repeat(crop_row[crop_of_query], n_cand), dtype)
    over = plan.over_mask[text_of_cand].astype(np.int64)
    truncated = np.add.reduceat(over, offsets[:-1]) if len(n_cand) else np.zeros(0, dtype=np.int64)
    return scores, offsets, truncated


@dataclass(frozen=True)
class RunOptions:
    """How an engine run works, from the evaluation settings (:class:`crepe_utils.settings.EvaluationSettings`,
    resolved for the model) and the benchmark's scoring rule; none of it but the cache changes a result
    beyond what the fingerprint records."""

    precision: str = "fp32"
    image_batch_size: int = 256
    text_batch_size: int = 512
    num_workers: int = 0
    length_cut: bool = True
    truncation: str = "keep_eot"
    skip_missing_images: bool = False
    skip_bad_boxes: bool = False
    score_dtype: type = np.float32        #: the dtype candidate scores are summed in (the scoring rule's)
    shard_batches: int = 8

    @classmethod
    def of(cls, settings, **more) -> "RunOptions":
        """The options of resolved evaluation settings (plus ``score_dtype``, ``shard_batches``)."""
        return cls(precision=settings.precision, image_batch_size=settings.batch_size,
                   text_batch_size=settings.text_batch_size, num_workers=settings.num_workers,
                   length_cut=settings.length_cut, truncation=settings.truncation,
                   skip_missing_images=settings.skip_missing_images, skip_bad_boxes=settings.on_bad_row == "skip",
                   **more)


class _Texts:
    """The text side of a run: tokenize and plan the distinct captions (token-identical ones merged, sorted
    by length), then encode them into the store. Runs in a thread beside the crops where that pays;
    ``stop`` ends it after its current shard."""

    def __init__(self, loaded, layout, options: RunOptions, shared: SharedInputs, cache_dir, root, progress):
        self.loaded, self.layout, self.options, self.shared, self.cache_dir = loaded, layout, options, shared, cache_dir
        self.progress, self.encoded, self.stop = progress, 0, threading.Event()
        self.policy = "keep_eot" if options.truncation == "error" else options.truncation
        self.key = shared.plan_key(loaded.tokenizer, layout.texts_digest, self.policy)
        self.store = EmbeddingStore(root / store_name("texts", options.text_batch_size) if root else None)
        self.held = (shared.plans[self.key], "memory") if self.key in shared.plans else None
        if self.held is None and not fast_tokenizer.supports(loaded.tokenizer):  # tokenized by worker processes
            self.held = self._tokens_and_plan(max(options.num_workers, min(8, available_cores())))

    def _tokens_and_plan(self, workers: int) -> tuple[TextPlan, str]:
        tokens, source = self.shared._tokens_and_source(self.loaded.tokenizer, self.layout.texts, self.policy,
                                                        workers, self.cache_dir)
        return text_plan(self.layout.texts, tokens), source

    def plan(self) -> tuple[TextPlan, str, float]:
        """The text plan, where its token ids came from, and the seconds it took."""
        t = time.perf_counter()
        plan, source = self.held or self._tokens_and_plan(0)
        if self.key is not None:
            self.shared.plans[self.key] = plan
        if plan.over and self.options.truncation == "error":
            raise DataError(_overlength_message(self.layout.kept, plan.over, int(self.loaded.tokenizer.context_length)))
        return plan, source, time.perf_counter() - t

    def encode(self, planned: Background) -> tuple[TextPlan, str, float, float]:
        """Wait for the plan, encode every distinct caption missing from the store; the plan and timings."""
        plan, source, t_tok = planned.result()
        t = time.perf_counter()
        o = self.options

        def compute(runs):
            for pos in runs:
                if self.stop.is_set():
                    return
                self.encoded += len(pos)
                yield encode_token_ids(self.loaded, [plan.distinct_ids[plan.work[p]] for p in pos],
                                       o.text_batch_size, o.precision, o.length_cut, self.progress)
        fill_store(self.store, plan.work, compute, o.text_batch_size * o.shard_batches, o.text_batch_size)
        return plan, source, t_tok, time.perf_counter() - t


class _Crops:
    """The image side of a run: decode, crop and encode every distinct crop missing from the store, noting
    each crop that cannot be encoded (an unreadable image, a box outside it) instead of raising."""

    def __init__(self, loaded, layout, images, options: RunOptions, shared: SharedInputs, root, progress):
        self.loaded, self.layout, self.images, self.options, self.progress = loaded, layout, images, options, progress
        self.store = EmbeddingStore(root / store_name("images", options.image_batch_size) if root else None)
        self.pipeline = CropPipeline(loaded, options.num_workers, shared)
        self.problems: dict[tuple, tuple[str, str]] = {}     # (image id, box) → (kind, reason)
        self.encoded = 0

    def fill(self, watched: tuple[Background, ...]) -> float:
        """Encode into the store (the ``watched`` jobs' failures stop it between shards); the seconds taken."""
        t = time.perf_counter()
        crops, o = self.layout.crops, self.options

        def compute(runs):
            groups = [[(self.images.locator(crops[p][0]), crops[p][1]) for p in pos] for pos in runs]
            results = encode_crop_groups(self.loaded, groups, o.image_batch_size, o.precision, self.progress,
                                         pipeline=self.pipeline)
            with contextlib.closing(results):
                for pos, (emb, problems) in zip(runs, results):
                    self.problems.update({crops[pos[j]]: why for j, why in problems.items()})
                    self.encoded += len(pos)
                    for job in watched:
                        job.raise_if_failed()        # e.g. over-long captions with truncation="error"
                    yield emb
        try:
            fill_store(self.store, self.layout.crop_keys, compute, o.image_batch_size * o.shard_batches,
                       o.image_batch_size)
        finally:
            self.pipeline.close()
        return time.perf_counter() - t


def run(loaded, queries: Sequence[Query], image_index, options: RunOptions = RunOptions(), *,
        cache_dir: str | os.PathLike | None = None, progress: bool = False,
        shared: SharedInputs | None = None) -> EngineResult:
    """Encode what ``queries`` need (once each, cached) and score every query's candidates.

    ``image_index`` finds each query's image (``missing``, ``locator``, ``stamp``, ``describe``;
    :class:`crepe_utils.imagesets.visual_genome.ImageIndex`). ``shared`` (one :class:`SharedInputs` for several runs
    on the same queries) lets later runs reuse the decoded, resized crops and the token ids of earlier
    ones; the results are the same either way.
    """
    t0 = time.perf_counter()
    check_weights(loaded, options.precision)
    if options.truncation not in TRUNCATIONS:
        raise ValueError(f"truncation must be one of {TRUNCATIONS}, got {options.truncation!r}")
    image_threads = threads_beside_workers(loaded.device, options.num_workers)
    fp = model_fingerprint(loaded, options.precision, options.length_cut, options.truncation, image_threads)
    root = Path(cache_dir) / fp if cache_dir is not None else None
    shared = shared if shared is not None else SharedInputs(max_crop_bytes=0)   # one run keeps no crops
    # what the queries alone decide (built once per query list): images that exist, distinct crops and
    # their cache keys, distinct captions, the scoring index
    layout = shared.layout(queries, image_index, options.skip_missing_images)
    texts = _Texts(loaded, layout, options, shared, cache_dir, root, progress)
    crops = _Crops(loaded, layout, image_index, options, shared, root, progress)
    keep, dropped, plan, token_source, (t_img, t_tok, t_txt) = _encode(
        loaded, layout, texts, crops, image_index, options, image_threads)
    kept = list(layout.kept) if keep is None else [q for q, k in zip(layout.kept, keep.tolist()) if k]
    scores, offsets, truncated = _scores(layout, keep, plan, texts.store.get, crops.store.get, options.score_dtype)
    stats = {
        "n_queries": len(queries), "n_scored": len(kept), "n_skipped": len(layout.missing) + len(dropped),
        "n_distinct_crops": len(layout.crops), "n_distinct_texts": len(plan.work), "n_texts": len(layout.texts),
        "n_token_identical_merged": len(layout.texts) - len(plan.work),
        "n_overlength_texts": len(plan.over), "cache_fingerprint": fp,
        # what this run found in the cache: run-specific (RUN_STATS), unlike everything above
        "run_n_crops_encoded": crops.encoded, "run_n_texts_encoded": texts.encoded,
        "run_n_damaged_cache_shards": len(crops.store.damaged) + len(texts.store.damaged),
        "run_n_crops_read": crops.pipeline.counts["read"], "run_n_crops_shared": crops.pipeline.counts["shared"],
        "run_tokens_from": token_source,
        "length_cut": bool(options.length_cut and cut_text_forward(loaded.model) is not None),
        "fp32_precision": settings_in_effect(options.precision, loaded.device),
        **({"image_encoding_threads": image_threads} if image_threads is not None else {}),
        **({"fp16_weights": getattr(loaded.model, "crepe_fp16_weights", None)}
           if options.precision == "fp16-weights" else {}),
        "seconds_images": round(t_img, 3), "seconds_tokenize": round(t_tok, 3), "seconds_texts": round(t_txt, 3),
        "seconds_total": round(time.perf_counter() - t0, 3),
    }
    return EngineResult(kept, scores, offsets, truncated, stats, list(layout.missing) + dropped)


def _encode(loaded, layout, texts: _Texts, crops: _Crops, image_index, options: RunOptions, image_threads):
    """Encode the crops and the texts: (keep mask, dropped queries, text plan, token source, seconds).

    Texts beside the crops where that keeps the hardware busy without crowding it: on a GPU, or on the
    CPU when workers decode (the crop encoder then keeps to the cores the workers leave). On the CPU
    without workers both encoders would compete for the same cores, so the texts follow the crops
    (only the fast tokenizer's plain-Python work runs beside them). One precision scope around both
    threads, so that neither restores the global settings under the other.
    """
    import torch
    beside = loaded.device.type != "cpu" or options.num_workers > 0
    with precision_context(options.precision, loaded.device):
        planned = Background(texts.plan, "crepe-tokenize", concurrent=not beside and texts.held is None)
        encoded = Background(lambda: texts.encode(planned), "crepe-texts", concurrent=beside, device=loaded.device,
                             threads=torch.get_num_threads() if loaded.device.type == "cpu" else None)
        try:
            with torch_threads(image_threads):
                t_img = crops.fill((planned, encoded))
            keep, dropped = _kept_crops(layout, crops.problems, image_index, options)
            plan, token_source, t_tok, t_txt = encoded.result()
        except BaseException:
            texts.stop.set()                          # the text thread ends after its current shard
            encoded.wait()
            planned.wait()
            raise
    return keep, dropped, plan, token_source, (t_img, t_tok, t_txt)


def _kept_crops(layout, problems: dict, image_index, options: RunOptions):
    """(mask over ``layout.kept`` or None for all, the dropped queries with why) after the crops were encoded."""
    if not problems:
        return None, []
    return _unusable_crops(layout.kept, problems, image_index, options.skip_missing_images, options.skip_bad_boxes)
