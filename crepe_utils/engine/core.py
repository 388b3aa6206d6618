"""The evaluation engine: encode every distinct crop and caption once, then score every query.

Where the official scripts encode one image at a time and re-encode the same crop and caption for
every HN type, split and complexity, the engine

1. collects the distinct crops (image id + box) and the distinct captions — distinct by CLIP
   *token ids*, so captions that differ only in case or spacing are one text and tie exactly;
2. encodes each once, in large batches (images decoded by one pool of persistent DataLoader
   workers per run; open_clip's captions tokenized by ``fast_tokenizer`` in a thread while the
   crops encode, other tokenizers by workers), under an explicit precision, and stores the
   normalised embeddings in a content-addressed cache on disk;
3. scores each query's own candidates and ranks its positive (ties explicit, see ``metrics``).

Exactness choices, each switchable and recorded in the results manifest:

* **precision** ``fp32`` (default; TF32 disabled, as on the paper's TITAN X), ``tf32``, ``bf16``
  or ``fp16`` autocast, or ``fp16-weights``: fp16 weights converted at load as OpenAI's
  ``clip.load`` does on CUDA, the paper's OpenAI CLIP runs (``models.load_model``);
* **length cutting**: captions are sorted by length and each batch is cut to its longest
  caption. The text transformer is causal and pools at the end token, so the features are the
  same function of the same tokens; only floating-point summation order can differ
  (``benchmarks/bench_engine.py`` measures that ranks stay identical). ``length_cut=False``
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

Several models on the same queries (``evaluate-paper``) share one :class:`SharedInputs`: each crop
is decoded once and resized once per distinct preprocessing stage, each caption tokenized once per
tokenizer; the results are byte-identical to separate runs (tests/test_shared_inputs.py).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import types
import warnings
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Callable, Protocol, Sequence

import numpy as np

from ..atomic import atomic_path
from ..errors import DataError, ModelError

class Query(Protocol):
    """What the engine needs of a query: its id, its image region and its candidates (positive first)."""

    query_id: str
    image_id: str
    box: tuple | None
    candidates: tuple[str, ...]


PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp16-weights")
#: Prefixes of ``EngineResult.stats`` entries that describe one run (timings, cache use), not its result.
RUN_STATS = ("seconds_", "run_")
TRUNCATIONS = ("keep_eot", "official", "error")


# ------------------------------------------------------------------------------ precision

def _pixel_dtype(precision: str):
    """The dtype pixels enter the image tower in: fp16 for fp16 weights (OpenAI's
    ``encode_image(image.type(self.dtype))``), else as preprocessed (fp32)."""
    import torch
    return torch.float16 if precision == "fp16-weights" else None


def check_weights(loaded, precision: str) -> None:
    """A clear error when the model's weights do not fit the precision (fp16 weights iff fp16-weights)."""
    import torch
    half = any(p.dtype == torch.float16 for p in loaded.model.parameters())
    if precision == "fp16-weights" and not half:
        raise ModelError(f"{loaded.spec.key}: precision fp16-weights needs a model loaded with fp16 weights: "
                         "load_model(..., precision='fp16-weights')")
    if precision != "fp16-weights" and half:
        raise ModelError(f"{loaded.spec.key} holds fp16 weights (loaded for fp16-weights); precision {precision} "
                         "needs the fp32 model: load it again without precision='fp16-weights'")


def _fp32_knobs():
    """PyTorch's per-backend fp32 precision settings (its current API; the legacy allow_tf32 flags
    must not be mixed with it)."""
    import torch
    b = torch.backends
    return {"cuda.matmul": b.cuda.matmul, "cudnn.conv": b.cudnn.conv, "cudnn.rnn": b.cudnn.rnn,
            "mkldnn.matmul": b.mkldnn.matmul, "mkldnn.conv": b.mkldnn.conv}


def fp32_settings() -> dict[str, str]:
    """The fp32 precision in effect per backend ("ieee", "tf32", ...), as the manifest records it."""
    return {name: knob.fp32_precision for name, knob in _fp32_knobs().items()}


@contextlib.contextmanager
def precision_context(precision: str, device):
    """Autocast and fp32 settings for one precision; restores the global settings afterwards.

    ``fp32`` is strict IEEE fp32 on every backend: PyTorch's default lets cuDNN convolutions use
    TF32, which would change the ResNet numbers on Ampere and later GPUs. ``tf32`` allows TF32 for
    CUDA matmuls and cuDNN; CPU backends stay IEEE in every mode. ``fp16-weights`` runs no
    autocast: the weights are fp16 already (:func:`check_weights`), what stays fp32 is IEEE.
    """
    import torch
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    knobs = _fp32_knobs()
    saved = {name: knob.fp32_precision for name, knob in knobs.items()}
    gpu = "tf32" if precision == "tf32" else "ieee"
    for name, knob in knobs.items():
        knob.fp32_precision = gpu if name.startswith(("cuda", "cudnn")) else "ieee"
    try:
        if precision in ("bf16", "fp16"):
            dtype = torch.bfloat16 if precision == "bf16" else torch.float16
            with torch.autocast(device_type=device.type, dtype=dtype):
                yield
        else:
            yield
    finally:
        for name, knob in knobs.items():
            knob.fp32_precision = saved[name]


# ------------------------------------------------------------------------------ tokenization

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
    from ..models import fast_tokenizer
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
    from ..models import fast_tokenizer
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


# ------------------------------------------------------------------------------ text encoding

def _cut_text_forward(model) -> Callable | None:
    """A forward pass of the text tower that accepts fewer than ``context_length`` positions.

    Exact only for a causal transformer pooling at the end token (argmax/eos), which is every
    CLIP text tower; returns None for anything else (the engine then runs full length). A model
    that states ``length_cut_exact`` (crepe_utils.models.family) is taken at its word.
    """
    import torch
    from open_clip.transformer import text_global_pool

    stated = getattr(model, "length_cut_exact", None)
    if stated is not None:
        return model.encode_text if stated else None

    tower = getattr(model, "text", None)
    if tower is not None:  # CustomTextCLIP: the text tower is a TextTransformer module
        if getattr(tower, "cls_emb", None) is not None or getattr(tower, "use_pad_mask", False):
            return None
        parts = tower
        pool_type = getattr(tower, "pool_type", None)
        eos = getattr(tower, "eos_id", None)
    else:
        parts = model
        pool_type = getattr(model, "text_pool_type", None)
        eos = getattr(model, "text_eos_id", None)
    needed = ("token_embedding", "positional_embedding", "transformer", "ln_final", "attn_mask")
    if pool_type not in ("argmax", "eos") or any(getattr(parts, n, None) is None for n in needed):
        return None

    def forward(text):
        length = text.shape[1]
        cast = parts.transformer.get_cast_dtype()
        x = parts.token_embedding(text).to(cast)
        x = x + parts.positional_embedding[:length].to(cast)
        x = parts.transformer(x, attn_mask=parts.attn_mask[:length, :length])
        x = parts.ln_final(x)
        x = text_global_pool(x, text, pool_type, eos_token_id=eos)
        proj = parts.text_projection
        if proj is not None:
            x = proj(x) if isinstance(proj, torch.nn.Linear) else x @ proj
        return x

    return forward


def encode_token_ids(loaded, ids: Sequence[tuple[int, ...]], batch_size: int = 512, precision: str = "fp32",
                     length_cut: bool = True, progress: bool = False, desc: str = "texts") -> np.ndarray:
    """L2-normalised text embeddings (float32) for token-id sequences, in the given order.

    Batches are formed over the given order; callers that want length cutting to pay off pass
    the ids sorted by length (the engine does). Each batch is filled from one flat id array
    (pinned memory on CUDA) and its embeddings stay on the device: one copy to the host per
    call, no synchronisation per batch.
    """
    import torch
    import torch.nn.functional as F
    from ..progress import tqdm

    model, device, ctx = loaded.model, loaded.device, loaded.spec.context_length
    forward = _cut_text_forward(model) if length_cut else None
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
    starts = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    pin = device.type == "cuda"
    out = []
    bar = tqdm(total=len(ids), desc=f"encode {desc}", unit="text", disable=not progress, smoothing=0.05)
    with torch.inference_mode(), precision_context(precision, device):
        for start in range(0, len(ids), batch_size):
            stop = min(start + batch_size, len(ids))
            lens = lengths[start:stop]
            width = int(lens.max()) if forward is not None else ctx
            tok = torch.zeros(stop - start, width, dtype=torch.long, pin_memory=pin)
            # row-major boolean fill: row i gets its own ids in positions 0 … len_i − 1, zeros after
            tok.numpy()[np.arange(width) < lens[:, None]] = flat[starts[start]:starts[stop]]
            tok = tok.to(device, non_blocking=True)
            feats = forward(tok) if forward is not None else model.encode_text(tok)
            out.append(F.normalize(feats.float(), dim=-1))
            bar.update(stop - start)
    bar.close()
    if not out:
        return np.zeros((0, 0), dtype=np.float32)
    emb = torch.cat(out).cpu().numpy()
    broken = ~np.isfinite(emb).all(axis=1)
    if broken.any():
        first = ", ".join(f"token ids {list(ids[j][:8])}…" for j in np.flatnonzero(broken)[:2])
        raise ModelError(_non_finite_message(loaded, precision, "text", int(broken.sum()), len(ids), first))
    return emb


def encode_texts(loaded, texts: Sequence[str], batch_size: int = 512, precision: str = "fp32",
                 length_cut: bool = True, truncation: str = "keep_eot", progress: bool = False) -> np.ndarray:
    """L2-normalised embeddings of ``texts`` (float32, input order). For small lists (Winoground)."""
    tokens = tokenize(loaded.tokenizer, texts, truncation)
    order = sorted(range(len(texts)), key=lambda i: (len(tokens.ids[i]), tokens.ids[i]))
    emb = encode_token_ids(loaded, [tokens.ids[i] for i in order], batch_size, precision, length_cut, progress)
    out = np.empty_like(emb)
    out[order] = emb
    return out


# ------------------------------------------------------------------------------ image encoding

#: Why a crop has no embedding (CropDataset's failure kinds, and the engine's skip reasons).
UNREADABLE_IMAGE, BOX_OUTSIDE, UNUSABLE_CROP = "unreadable image", "box outside image", "crop not preprocessable"

#: Transforms that map a PIL image to a PIL image deterministically (resizing, cropping, mode conversion),
#: by exact class (or function) name: the part of a preprocessing whose output several models can share.
PIL_STAGE_TRANSFORMS = frozenset({
    "torchvision.transforms.transforms.Resize", "torchvision.transforms.transforms.CenterCrop",
    "open_clip.transform.ResizeKeepRatio", "open_clip.transform.CenterCropOrPad",
    "open_clip.transform.MaybeConvertMode", "open_clip.transform._convert_to_rgb",
})
_TO_TENSOR = frozenset({"torchvision.transforms.transforms.ToTensor", "open_clip.transform.MaybeToTensor"})


def _qualified(obj) -> str:
    """Module-qualified name of a function, or of an object's class."""
    kind = obj if isinstance(obj, types.FunctionType) else type(obj)
    return f"{kind.__module__}.{kind.__qualname__}"


def split_preprocess(preprocess):
    """``(stage, rest, fingerprint)`` of a torchvision ``Compose``, or None when it has no shareable part.

    ``stage`` is the leading run of :data:`PIL_STAGE_TRANSFORMS` (PIL image → PIL image), ``rest`` the
    remainder, which must start with ``ToTensor``: ``rest(stage(img))`` is ``preprocess(img)``, since
    ``Compose`` applies its transforms in turn. The fingerprint names the stage by each transform's class
    and public settings (size, interpolation, antialias, fill, mode …) and the torchvision and Pillow
    versions, so two models share stage outputs only when their resize and crop are the same; the
    model's own ``rest`` (ToTensor, its mean and std) always runs on its own.
    """
    from torchvision import transforms as T
    if type(preprocess) is not T.Compose:
        return None
    steps = list(preprocess.transforms)
    n = 0
    while n < len(steps) and _qualified(steps[n]) in PIL_STAGE_TRANSFORMS:
        n += 1
    if n == 0 or n == len(steps) or _qualified(steps[n]) not in _TO_TENSOR:
        return None
    import PIL
    import torchvision
    ident = {"torchvision": torchvision.__version__, "pillow": PIL.__version__, "stage": [
        [_qualified(t), sorted((k, repr(v)) for k, v in vars(t).items() if not k.startswith("_") and k != "training")]
        if not isinstance(t, types.FunctionType) else [_qualified(t)] for t in steps[:n]]}
    fingerprint = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:24]
    return T.Compose(steps[:n]), T.Compose(steps[n:]), fingerprint


class CropDataset:
    """Preprocessed crops for the engine's DataLoader; a failure is returned as (kind, reason), not raised.

    Items are requests (see :class:`CropPipeline`): ``("read", path, box, stages)`` decodes, crops and
    preprocesses, and also returns the output of each named stage (:func:`split_preprocess`; the
    model's own and any other the run expects) as a uint8 array, so that one decode serves every
    preprocessing of the run; ``("finish", array)`` runs the model's own tensor stage on a stored
    output of its stage; ``("fail", problem)`` returns a stored failure. Each item comes back as
    ``(tensor, ok, problem, to_store)``, ``to_store`` mapping stage fingerprints to outputs or to
    stage-level failures.

    Crops of one image are adjacent in the engine's work list, so the last decoded image is kept
    and reused: each image is decoded once however many of its regions are queried.
    """

    def __init__(self, preprocess, stage=None, rest=None, fingerprint: str | None = None,
                 other_stages: dict | None = None):
        self.preprocess, self.stage, self.rest, self.fingerprint = preprocess, stage, rest, fingerprint
        self.other_stages = dict(other_stages or {})
        self._last: tuple[str, object] | None = None

    def _image(self, path: str):
        from .images import open_rgb
        if self._last is None or self._last[0] != path:
            self._last = None          # a failed decode must not leave the previous image in place
            self._last = (path, open_rgb(path))
        return self._last[1]

    def __getitem__(self, request):
        import torch
        from .images import box_wholly_outside, crop
        failed = torch.zeros(1), False
        if request[0] == "fail":
            return (*failed, request[1], None)
        if request[0] == "finish":
            from PIL import Image
            try:
                return self.rest(Image.fromarray(request[1])), True, None, None
            except Exception as exc:  # noqa: BLE001 - reported per crop by the caller
                return (*failed, (UNUSABLE_CROP, f"{type(exc).__name__}: {exc}"), None)
        _, path, box, stages = request
        try:
            img = self._image(path)
        except Exception as exc:  # noqa: BLE001 - any decoder failure: reported per image by the caller
            why = (UNREADABLE_IMAGE, f"{type(exc).__name__}: {exc}")
            return (*failed, why, dict.fromkeys(stages, why))
        if box is not None:
            if box_wholly_outside(box, img.size):
                why = (BOX_OUTSIDE, f"box {box} lies wholly outside the {img.size[0]}×{img.size[1]} image")
                return (*failed, why, dict.fromkeys(stages, why))
            img = crop(img, box)
        to_store = {}
        for fp in stages:
            if fp == self.fingerprint:
                continue
            try:
                out = self.other_stages[fp](img)
                to_store[fp] = np.array(out, dtype=np.uint8) if getattr(out, "mode", None) == "RGB" else None
            except Exception as exc:  # noqa: BLE001 - that stage fails for this crop, for every model using it
                to_store[fp] = (UNUSABLE_CROP, f"{type(exc).__name__}: {exc}")
        if self.fingerprint not in stages:
            try:
                return self.preprocess(img), True, None, to_store
            except Exception as exc:  # noqa: BLE001 - reported per crop by the caller
                return (*failed, (UNUSABLE_CROP, f"{type(exc).__name__}: {exc}"), to_store)
        try:
            staged = self.stage(img)
        except Exception as exc:  # noqa: BLE001 - the shared stage failed: the same for every model sharing it
            why = (UNUSABLE_CROP, f"{type(exc).__name__}: {exc}")
            return (*failed, why, {**to_store, self.fingerprint: why})
        if getattr(staged, "mode", None) == "RGB":
            to_store[self.fingerprint] = np.array(staged, dtype=np.uint8)
        try:
            return self.rest(staged), True, None, to_store
        except Exception as exc:  # noqa: BLE001 - this model's own tensor stage failed
            return (*failed, (UNUSABLE_CROP, f"{type(exc).__name__}: {exc}"), to_store)


def _collate(batch):
    import torch
    ok = [b[1] for b in batch]
    shape = next((b[0].shape for b in batch if b[1]), None)
    tensors = [b[0] if b[1] else torch.zeros(shape) for b in batch] if shape is not None else None
    return (torch.stack(tensors) if tensors else None), ok, [b[2] for b in batch], [b[3] for b in batch]


class _Batches:
    """A batch sampler whose batches are set per request, so one DataLoader (and its persistent
    workers) serves every shard of a run."""

    def __init__(self):
        self.batches: list[list] = []

    def __iter__(self):
        return iter(self.batches)

    def __len__(self) -> int:
        return len(self.batches)


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class CropPipeline:
    """The image side of one engine run: one DataLoader with persistent workers for all its shards,
    and, with a :class:`SharedInputs`, that object's stores of stage outputs (see
    :func:`split_preprocess`): a crop that an earlier model with the same resize and crop has read is
    neither decoded nor resized again, only finished by this model's own tensor stage; and a crop
    read here is also put through every other stage the run expects (:meth:`SharedInputs.expect`),
    from the same decode.
    """

    def __init__(self, loaded, num_workers: int = 0, shared: "SharedInputs | None" = None):
        split = split_preprocess(loaded.preprocess)
        own = split[2] if split else None
        sharing = shared is not None and shared.max_crop_bytes > 0
        others = {fp: st for fp, st in shared.expected_stages().items() if fp != own} if sharing else {}
        self.dataset = CropDataset(loaded.preprocess, *(split if split else (None, None, None)), other_stages=others)
        self.stores = {fp: shared.crop_store(fp) for fp in [own, *others] if fp is not None} if sharing else {}
        self.own = self.stores.get(own)
        self.num_workers = int(num_workers)
        self.pin_memory = loaded.device.type == "cuda"
        self.counts = {"read": 0, "shared": 0}
        self._sampler = _Batches()
        self._loader = None
        self._stat: dict[str, tuple[int, int]] = {}

    def _key(self, path: str, box) -> tuple:
        if path not in self._stat:
            try:
                st = os.stat(path)
                self._stat[path] = (st.st_size, st.st_mtime_ns)
            except OSError:
                self._stat[path] = (-1, -1)
        return (path, box, *self._stat[path])

    def _request(self, path: str, box) -> tuple:
        key = self._key(path, box)
        if self.own is not None:
            held = self.own.get(key)
            if held is not None:
                self.counts["shared"] += 1
                return ("finish", held) if isinstance(held, np.ndarray) else ("fail", held)
        self.counts["read"] += 1
        return ("read", path, box, tuple(fp for fp, store in self.stores.items() if store.get(key) is None))

    def batches(self, items: Sequence[tuple[str, tuple | None]], batch_size: int):
        """Yield ``(pixels, ok, problems)`` per batch of ``batch_size`` items, in order."""
        from torch.utils.data import DataLoader
        requests = [self._request(str(p), b) for p, b in items]
        self._sampler.batches = [requests[s:s + batch_size] for s in range(0, len(requests), batch_size)]
        if self._loader is None:
            workers = self.num_workers
            self._loader = DataLoader(self.dataset, batch_sampler=self._sampler, num_workers=workers,
                                      collate_fn=_collate, persistent_workers=workers > 0,
                                      pin_memory=self.pin_memory)
        start = 0
        for pixels, ok, errs, stored in self._loader:
            for j, outputs in enumerate(stored):
                for fp, value in (outputs or {}).items():
                    if value is not None:
                        self.stores[fp].put(self._key(str(items[start + j][0]), items[start + j][1]), value)
            start += len(ok)
            yield pixels, ok, errs

    def close(self) -> None:
        """Stop the workers (they also stop when the pipeline is garbage-collected)."""
        loader, self._loader = self._loader, None
        it = getattr(loader, "_iterator", None)
        if it is not None and hasattr(it, "_shutdown_workers"):
            it._shutdown_workers()


def encode_crops(loaded, items: Sequence[tuple[str, tuple | None]], batch_size: int = 256,
                 precision: str = "fp32", num_workers: int = 0, progress: bool = False,
                 desc: str = "crops", pipeline: CropPipeline | None = None
                 ) -> tuple[np.ndarray, dict[int, tuple[str, str]]]:
    """Embeddings of (image path, box) items, and {item index: (kind, reason)} of each failure (NaN rows).

    A crop that was read and preprocessed but whose embedding is not finite is a :class:`ModelError`.
    ``pipeline`` (the engine's, one per run) supplies the workers and shared stage outputs; without
    one, a pipeline lives for this call only. Embeddings stay on the device until all batches are
    done, then come to the host in one copy.
    """
    import torch
    import torch.nn.functional as F
    from ..progress import tqdm

    own = pipeline is None
    pipeline = pipeline or CropPipeline(loaded, num_workers)
    parts, problems, good = [], {}, np.zeros(len(items), dtype=bool)
    bar = tqdm(total=len(items), desc=f"encode {desc}", unit="img", disable=not progress, smoothing=0.05)
    try:
        with torch.inference_mode(), precision_context(precision, loaded.device):
            start = 0
            for pixels, ok, errs in pipeline.batches(items, batch_size):
                emb = None
                if pixels is not None:
                    feats = loaded.model.encode_image(pixels.to(loaded.device, dtype=_pixel_dtype(precision),
                                                                non_blocking=True))
                    emb = F.normalize(feats.float(), dim=-1)
                parts.append((start, len(ok), emb))
                good[start:start + len(ok)] = ok
                problems.update({start + j: e for j, e in enumerate(errs) if e})
                start += len(ok)
                bar.update(len(ok))
            host = [(s, n, e.cpu().numpy() if e is not None else None) for s, n, e in parts]
    finally:
        bar.close()
        if own:
            pipeline.close()
    dim = max((e.shape[1] for _, _, e in host if e is not None), default=0)
    out = np.full((len(items), dim), np.nan, dtype=np.float32)
    for s, n, e in host:
        if e is not None and e.shape[1] == dim:
            out[s:s + n] = e
    broken = good & ~np.isfinite(out).all(axis=1)
    if broken.any():
        first = [items[j] for j in np.flatnonzero(broken)[:3]]
        raise ModelError(_non_finite_message(loaded, precision, "image", int(broken.sum()), len(items),
                                             ", ".join(f"{Path(p).name} box {b}" for p, b in first)))
    out[~good] = np.nan
    return out, problems


def _non_finite_message(loaded, precision: str, what: str, n_bad: int, n: int, first: str) -> str:
    return (f"{loaded.spec.key}: the model produced non-finite (NaN or inf) {what} embeddings for {n_bad} of {n} "
            f"inputs at precision {precision} (first: {first}). The checkpoint may hold NaN/inf "
            "weights, or the precision overflows (fp16): try --precision fp32, and check the weights file.")


def encode_images(loaded, images: Sequence, batch_size: int = 64, precision: str = "fp32") -> np.ndarray:
    """L2-normalised embeddings of in-memory PIL images (input order). For small sets (Winoground)."""
    import torch
    import torch.nn.functional as F
    out = []
    with torch.inference_mode(), precision_context(precision, loaded.device):
        for start in range(0, len(images), batch_size):
            pixels = torch.stack([loaded.preprocess(img.convert("RGB")) for img in images[start:start + batch_size]])
            feats = loaded.model.encode_image(pixels.to(loaded.device, dtype=_pixel_dtype(precision)))
            out.append(F.normalize(feats.float(), dim=-1).cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, 0), np.float32)


# ------------------------------------------------------------------------------ embedding cache

class CacheWarning(UserWarning):
    """A damaged cache shard was found; its embeddings are recomputed."""


SHARD_PREFIX = "shard-"


def shard_digest(keys: Sequence[str], emb: np.ndarray) -> str:
    """SHA-256 of a shard's content (keys, shape and float32 little-endian bytes): its file name."""
    h = hashlib.sha256()
    h.update("\n".join(keys).encode())
    h.update(b"\0" + np.asarray(emb.shape, dtype="<i8").tobytes())
    h.update(np.ascontiguousarray(emb, dtype="<f4").tobytes())
    return h.hexdigest()[:40]


class EmbeddingStore:
    """Content-addressed embeddings of one model configuration, in write-once shards.

    Each shard is named by the SHA-256 of its content and written atomically (a temporary file,
    then a rename), so a shard file is either absent or complete, and two processes that write
    the same shard write the same bytes under the same name: concurrent runs sharing a cache
    cannot corrupt it, and need no lock. Every shard is verified against its name when read; a
    damaged one (truncated, flipped bits, unreadable) is reported with a :class:`CacheWarning`
    naming it, removed, and its embeddings are recomputed by the caller.

    ``root=None`` keeps everything in memory (no cache).
    """

    def __init__(self, root: Path | None):
        self.root = Path(root) if root is not None else None
        self._index: dict[str, tuple[int, int]] = {}
        self._shards: list[np.ndarray] = []
        self.damaged: list[Path] = []
        if self.root is not None and self.root.is_dir():
            for shard in sorted(self.root.glob(f"{SHARD_PREFIX}*.npz")):
                loaded = self._read(shard)
                if loaded is not None:
                    self._add_arrays(*loaded)

    def _read(self, shard: Path) -> tuple[list[str], np.ndarray] | None:
        expected = shard.name[len(SHARD_PREFIX):-len(".npz")]
        try:
            with open(shard, "rb") as fh, np.load(fh, allow_pickle=False) as z:
                keys, emb = [str(k) for k in z["keys"]], np.asarray(z["emb"], dtype=np.float32)
            if emb.ndim != 2 or len(keys) != len(emb):
                raise ValueError(f"{len(keys)} keys for an array of shape {emb.shape}")
            actual = shard_digest(keys, emb)
            if actual != expected:
                raise ValueError(f"content hash {actual[:12]}… differs from its name")
        except FileNotFoundError:
            return None                    # removed by a concurrent run that found it damaged
        except Exception as exc:  # noqa: BLE001 - any unreadable shard is recomputed, not fatal
            warnings.warn(f"embedding cache shard {shard} is damaged ({type(exc).__name__}: {exc}); "
                          "it is removed and its embeddings are recomputed", CacheWarning, stacklevel=3)
            self.damaged.append(shard)
            with contextlib.suppress(OSError):
                shard.unlink()
            return None
        return keys, emb

    def __contains__(self, key: str) -> bool:
        return key in self._index

    def __len__(self) -> int:
        return len(self._index)

    def _add_arrays(self, keys: list[str], emb: np.ndarray) -> None:
        self._shards.append(emb)
        s = len(self._shards) - 1
        for i, k in enumerate(keys):
            self._index.setdefault(str(k), (s, i))

    def add(self, keys: list[str], emb: np.ndarray) -> None:
        emb = np.ascontiguousarray(emb, dtype=np.float32)
        if self.root is not None:
            name = f"{SHARD_PREFIX}{shard_digest(keys, emb)}.npz"
            with atomic_path(self.root / name) as tmp:
                with open(tmp, "wb") as fh:
                    np.savez(fh, keys=np.array(keys), emb=emb)
        self._add_arrays(keys, emb)

    def get(self, keys: Sequence[str]) -> np.ndarray:
        if not keys:
            return np.zeros((0, 0), np.float32)
        locs = [self._index[k] for k in keys]
        dim = self._shards[locs[0][0]].shape[1]
        out = np.empty((len(keys), dim), dtype=np.float32)
        for j, (s, i) in enumerate(locs):
            out[j] = self._shards[s][i]
        return out


def model_fingerprint(loaded, precision: str, length_cut: bool, truncation: str) -> str:
    """Everything that changes an embedding of the model, hashed: weights, architecture,
    preprocessing, numerics, and the kernels that compute it (device, CPU instruction set and
    thread count, torch version). The batch size, which also changes an embedding's last bits,
    names the store inside it (:func:`store_name`).
    """
    import torch
    spec = loaded.spec
    device = loaded.device
    if device.type == "cuda":
        kernels = {"gpu": torch.cuda.get_device_name(device), "cuda": torch.version.cuda,
                   "cudnn": torch.backends.cudnn.version()}
    else:
        kernels = {"cpu_capability": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads(),
                   "mkldnn": bool(torch.backends.mkldnn.enabled), "MKL_CBWR": os.environ.get("MKL_CBWR")}
    ident = {
        "architecture": spec.architecture, "model_config": spec.model_config,
        "weights": spec.checkpoint_sha256 or spec.pretrained or "random-init",
        "preprocess": spec.preprocess, "context_length": spec.context_length,
        "precision": precision, "length_cut": length_cut, "truncation": truncation,
        "device": device.type, "torch": torch.__version__, "kernels": kernels,
    }
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:24]


def store_name(kind: str, batch_size: int) -> str:
    """The cache folder of one kind of embedding ("images", "texts") computed in batches of ``batch_size``.

    The batch size changes stored bytes (which rows share a matrix product, and with length
    cutting the padded width), so each batch size has its own store; the shard size does not
    (shards are whole batches of the same work list) and is not part of it.
    """
    return f"{kind}-b{int(batch_size)}"


def _fill(store: EmbeddingStore, keys: list[str], compute: Callable[[list[int]], np.ndarray],
          chunk: int, batch_size: int) -> None:
    """Compute the embeddings of ``keys`` missing from ``store``, in shards of ``chunk`` items.

    ``keys`` is the full work list in its deterministic order; ``compute`` gets positions in it
    and batches them by ``batch_size`` from the first. Each shard is a run of positions that a
    fresh run would batch the same way: it starts at a multiple of ``batch_size`` in ``keys``
    and ends at the next shard boundary or at a stored key, so a resumed run computes every
    embedding in the same batch as an uninterrupted one.
    """
    if chunk % batch_size:
        raise ValueError(f"shard size {chunk} is not a multiple of the batch size {batch_size}")
    todo = [i for i, k in enumerate(keys) if k not in store]
    runs: list[list[int]] = []
    for i in todo:
        last = runs[-1][-1] if runs else None
        # a new run at a gap (stored keys between) or at a shard boundary of the full list
        if last is None or i != last + 1 or i % chunk == 0:
            runs.append([i])
        else:
            runs[-1].append(i)
    for positions in runs:
        emb = compute(positions)
        good = [j for j in range(len(positions)) if np.isfinite(emb[j]).all()]
        if good:
            store.add([keys[positions[j]] for j in good], emb[good])


# ------------------------------------------------------------------------------ inputs shared by runs

def tokenizer_fingerprint(tokenizer) -> str | None:
    """A hash of everything that decides a tokenizer's ids, or None for a tokenizer it cannot vouch for.

    open_clip's standard ``SimpleTokenizer`` (exactly that class, unmodified): its vocabulary, merges,
    split pattern, cleaning function, special ids, context length, and the open_clip and ftfy versions
    (ftfy fixes non-plain text). The package's BERT tokenizer: its vocabulary file's SHA-256, lower-casing,
    special ids, context length and the transformers/tokenizers versions. Anything else (another class, a
    patched instance) is not shared between models nor cached on disk: it is tokenized for each run.
    """
    from ..models.spec import library_versions
    base = {"context_length": int(getattr(tokenizer, "context_length", -1)),
            "sot": getattr(tokenizer, "sot_token_id", None), "eot": getattr(tokenizer, "eot_token_id", None),
            "class": _qualified(tokenizer)}
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
                 "clean_fn": _qualified(clean), "special": list(getattr(tokenizer, "all_special_ids", [])),
                 "versions": library_versions("open_clip_torch", "ftfy", "regex")}
    else:
        from ..models import bert
        if type(tokenizer) is not bert.BertTokenizer:
            return None
        from ..models.spec import sha256_file
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
                warnings.warn(f"token cache file {path} is damaged ({type(exc).__name__}: {exc}); it is removed "
                              "and the texts are tokenized again", CacheWarning, stacklevel=3)
                self.damaged.append(path)
                with contextlib.suppress(OSError):
                    path.unlink()
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
            with atomic_path(path) as tmp:
                with open(tmp, "wb") as fh:
                    np.save(fh, packed, allow_pickle=False)


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

    Nothing here changes what is computed, only how often: results are byte-identical to separate runs.
    """

    def __init__(self, max_crop_bytes: int = 6 << 30):
        self.max_crop_bytes = int(max_crop_bytes)
        self.crop_bytes = 0
        self.crops_not_kept = 0
        self._crops: dict[str, _CropStore] = {}
        self._tokens: dict[tuple, dict[str, tuple]] = {}
        self._fingerprints: dict[int, tuple[object, str | None]] = {}
        self.plans: dict[tuple, _TextPlan] = {}
        self._memo: dict = {}
        self._expected: dict = {}

    def memo(self, key, make: Callable[[], object]):
        """``make()``, computed once per ``key`` (e.g. the queries that every model of the run evaluates)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

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

    def plan_key(self, tokenizer, texts: Sequence[str], truncation: str) -> tuple | None:
        fp = self.tokenizer_fingerprint(tokenizer)
        return None if fp is None else (fp, truncation, texts_digest(texts))


@dataclass(frozen=True)
class _TextPlan:
    """The text side of a run: which texts merge (same token ids), and the encoding order."""

    text_key: dict          #: text → token key
    over: frozenset         #: texts over the context length
    distinct_ids: dict      #: token key → ids
    work: list              #: token keys, shortest first (ties by ids)


def _text_plan(texts: Sequence[str], tokens: Tokens) -> _TextPlan:
    text_key = {t: token_key(ids) for t, ids in zip(texts, tokens.ids)}
    over = frozenset(t for t, o in zip(texts, tokens.overlength) if o)
    distinct_ids = {}
    for t, ids in zip(texts, tokens.ids):
        distinct_ids.setdefault(text_key[t], ids)
    work = sorted(distinct_ids, key=lambda k: (len(distinct_ids[k]), distinct_ids[k]))
    return _TextPlan(text_key, over, distinct_ids, work)


# ------------------------------------------------------------------------------ the engine

@dataclass
class EngineResult:
    """Scores of every kept query (flat, with offsets) plus what the engine did, for the manifest.

    Query ``i`` has candidate scores ``scores[offsets[i]:offsets[i + 1]]``, positive first. Flat
    arrays keep memory proportional to the number of candidates (4 bytes each), not to Python
    objects per query.
    """

    queries: list[Query]                        #: the kept queries
    scores: np.ndarray                          #: float32, all candidates of all kept queries
    offsets: np.ndarray                         #: int64, len(queries) + 1
    truncated: np.ndarray                       #: per kept query: candidates truncated
    stats: dict = field(default_factory=dict)
    skipped: list[tuple[Query, str]] = field(default_factory=list)

    def query_scores(self, i: int) -> np.ndarray:
        return self.scores[self.offsets[i]:self.offsets[i + 1]]


def score_candidates(text_emb: np.ndarray, crop_emb: np.ndarray, cand_idx: np.ndarray, crop_of_cand: np.ndarray,
                     chunk: int = 1 << 16) -> np.ndarray:
    """Dot products ``text_emb[cand_idx[n]] · crop_emb[crop_of_cand[n]]`` for every candidate n.

    Each product is computed on its own row pair, so token-identical candidates (same row of
    ``text_emb``) of one query score bit-identically: their tie is exact.
    """
    out = np.empty(len(cand_idx), dtype=np.float32)
    for start in range(0, len(cand_idx), chunk):
        sl = slice(start, start + chunk)
        out[sl] = np.einsum("nd,nd->n", text_emb[cand_idx[sl]], crop_emb[crop_of_cand[sl]], optimize=False)
    return out


def _settings_in_effect(precision: str, device) -> dict[str, str]:
    with precision_context(precision, device):
        return fp32_settings()


def _overlength_message(queries: Sequence[Query], over: set[str], context_length: int) -> str:
    rows = [(q.query_id, c) for q in queries for c in q.candidates if c in over]
    listed = "\n  ".join(f"{qid}: {c[:70]!r}{'…' if len(c) > 70 else ''}" for qid, c in rows[:10])
    return (f"{len(over)} caption(s) exceed the context length of {context_length} tokens, in {len(rows)} "
            f"candidate(s):\n  {listed}\nChoose truncation='keep_eot' (open_clip's behaviour) or 'official' (CREPE's "
            "vendored tokenizer, end token dropped); CLI: --truncation.")


def _drop_unusable_crops(kept: list[Query], problems: dict[tuple, tuple[str, str]], image_index,
                         skip_images: bool, skip_boxes: bool) -> tuple[list[Query], list[tuple[Query, str]]]:
    """Remove the queries whose crop has no embedding, or raise, naming the culprit.

    An unreadable image is the image's fault (every query on it goes); a box outside its image or a
    crop that cannot be preprocessed is its CSV row's fault (only the queries with that box go).
    """
    by_image = {image_id: why for (image_id, _), (kind, why) in problems.items() if kind == UNREADABLE_IMAGE}
    by_box = {crop: (kind, why) for crop, (kind, why) in problems.items() if kind != UNREADABLE_IMAGE}
    if by_image and not skip_images:
        listed = [f"{image_index.path(i)} (image {i}): {why}" for i, why in sorted(by_image.items())[:10]]
        raise DataError(f"{len(by_image)} image(s) could not be read:\n  " + "\n  ".join(listed)
                        + "\nRe-download them (`make data-vg`), or pass --skip-missing-images (their queries are "
                        "skipped and counted).")
    if by_box and not skip_boxes:
        rows = [(q.query_id, by_box[(q.image_id, q.box)]) for q in kept if (q.image_id, q.box) in by_box]
        listed = [f"{qid}: {kind}: {why}" for qid, (kind, why) in rows[:10]]
        raise DataError(f"{len(rows)} query row(s) have a region that cannot be encoded:\n  " + "\n  ".join(listed)
                        + ("\n  ..." if len(rows) > 10 else "")
                        + "\nFix those rows, or pass --skip-bad-rows (they are skipped and counted).")
    still, dropped = [], []
    for q in kept:
        if q.image_id in by_image:
            dropped.append((q, UNREADABLE_IMAGE))
        elif (q.image_id, q.box) in by_box:
            dropped.append((q, by_box[(q.image_id, q.box)][0]))
        else:
            still.append(q)
    return still, dropped


def run(loaded, queries: Sequence[Query], image_index, *, cache_dir: str | os.PathLike | None = None,
        precision: str = "fp32", image_batch_size: int = 256, text_batch_size: int = 512,
        num_workers: int = 0, length_cut: bool = True, truncation: str = "keep_eot",
        skip_missing_images: bool = False, skip_bad_boxes: bool = False, progress: bool = False,
        shard_batches: int = 8, shared: SharedInputs | None = None) -> EngineResult:
    """Encode what ``queries`` need (once each, cached) and score every query's candidates.

    ``shared`` (one :class:`SharedInputs` for several runs on the same queries) lets later runs reuse
    the decoded, resized crops and the token ids of earlier ones; the results are the same either way.
    """
    from ..models import fast_tokenizer
    t0 = time.perf_counter()
    check_weights(loaded, precision)
    if truncation not in TRUNCATIONS:
        raise ValueError(f"truncation must be one of {TRUNCATIONS}, got {truncation!r}")
    fp = model_fingerprint(loaded, precision, length_cut, truncation)
    root = Path(cache_dir) / fp if cache_dir is not None else None
    # one run's own SharedInputs keeps no crops: each is encoded once anyway
    shared = shared if shared is not None else SharedInputs(max_crop_bytes=0)
    skipped: list[tuple[Query, str]] = []

    # -- images: distinct (image id, box); missing files are an error unless skipped explicitly
    missing = set(image_index.missing(q.image_id for q in queries))
    if missing and not skip_missing_images:
        first = sorted(missing, key=lambda s: (len(s), s))[:10]
        raise DataError(f"{len(missing):,} image(s) missing under {image_index.root} (first: {', '.join(first)}). "
                        "Run `make data-vg`, point --image-dir/VG_IMAGES at the images, or pass "
                        "--skip-missing-images to evaluate without those queries (they are counted).")
    kept = []
    for q in queries:
        if q.image_id in missing:
            skipped.append((q, "missing image"))
        else:
            kept.append(q)
    crop_keys: dict[tuple, str] = {}
    for q in kept:
        ck = (q.image_id, q.box)
        if ck not in crop_keys:
            st = os.stat(image_index.path(q.image_id))
            crop_keys[ck] = hashlib.sha1(f"{q.image_id}|{q.box!r}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()
    crops = sorted(crop_keys, key=lambda k: (len(k[0]), k[0], k[1]))
    crop_key_list = [crop_keys[c] for c in crops]
    image_store = EmbeddingStore(root / store_name("images", image_batch_size) if root else None)

    # -- texts: tokenized in a thread while the crops encode (the fast tokenizer is plain Python and the
    #    crops are read by worker processes); captions of queries dropped for their crop are tokenized
    #    too, which changes no other caption's ids
    tokenizer = loaded.tokenizer
    token_policy = "keep_eot" if truncation == "error" else truncation
    token_workers = max(num_workers, min(8, available_cores()))
    all_texts = sorted({c for q in kept for c in q.candidates})
    pool = future = None
    if fast_tokenizer.supports(tokenizer) and shared.plan_key(tokenizer, all_texts, token_policy) not in shared.plans:
        import concurrent.futures
        pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="crepe-tokenize")
        future = pool.submit(shared._tokens_and_source, tokenizer, all_texts, token_policy, 0, cache_dir)

    crop_problems: dict[tuple, tuple[str, str]] = {}     # (image id, box) → (kind, reason)
    counts = {"images_encoded": 0, "texts_encoded": 0}
    pipeline = CropPipeline(loaded, num_workers, shared)

    def compute_crops(pos):
        items = [(str(image_index.path(crops[p][0])), crops[p][1]) for p in pos]
        emb, problems = encode_crops(loaded, items, image_batch_size, precision, num_workers, progress,
                                     pipeline=pipeline)
        crop_problems.update({crops[pos[j]]: why for j, why in problems.items()})
        counts["images_encoded"] += len(pos)
        return emb
    t_img = time.perf_counter()
    try:
        _fill(image_store, crop_key_list, compute_crops, image_batch_size * shard_batches, image_batch_size)
    finally:
        pipeline.close()
        if pool is not None:
            pool.shutdown(wait=False)
    t_img = time.perf_counter() - t_img
    if crop_problems:
        kept, dropped = _drop_unusable_crops(kept, crop_problems, image_index, skip_missing_images, skip_bad_boxes)
        skipped.extend(dropped)

    # -- texts: distinct by token ids, sorted by length for cutting
    t_tok = time.perf_counter()
    texts = sorted({c for q in kept for c in q.candidates})
    key = shared.plan_key(tokenizer, texts, token_policy)
    plan, token_source = shared.plans.get(key) if key is not None else None, "memory"
    if plan is None:
        if future is not None:
            tokens, token_source = future.result()
            if len(texts) != len(all_texts):
                row = {t: i for i, t in enumerate(all_texts)}
                pick = [row[t] for t in texts]
                tokens = Tokens([tokens.ids[i] for i in pick], tokens.overlength[pick], tokens.context_length)
        else:
            tokens, token_source = shared._tokens_and_source(tokenizer, texts, token_policy, token_workers, cache_dir)
        plan = _text_plan(texts, tokens)
        if key is not None:
            shared.plans[key] = plan
    text_key, over, distinct_ids, work = plan.text_key, plan.over, plan.distinct_ids, plan.work
    if over and truncation == "error":
        raise DataError(_overlength_message(kept, over, int(tokenizer.context_length)))
    text_store = EmbeddingStore(root / store_name("texts", text_batch_size) if root else None)
    t_tok = time.perf_counter() - t_tok
    t_txt = time.perf_counter()

    def compute_texts(pos):
        counts["texts_encoded"] += len(pos)
        return encode_token_ids(loaded, [distinct_ids[work[p]] for p in pos], text_batch_size, precision,
                                length_cut, progress)
    _fill(text_store, work, compute_texts,
          text_batch_size * shard_batches, text_batch_size)
    t_txt = time.perf_counter() - t_txt

    # -- scores: each query's own candidates against its crop, vectorised over all candidates
    needed = {(q.image_id, q.box) for q in kept}          # unreadable images are gone by now
    live_crops = [crop_keys[c] for c in crops if c in needed]
    text_rows = {k: i for i, k in enumerate(work)}
    crop_rows = {k: i for i, k in enumerate(live_crops)}
    text_emb = text_store.get(work)
    crop_emb = image_store.get(live_crops)
    n_cand = np.fromiter((len(q.candidates) for q in kept), dtype=np.int64, count=len(kept))
    offsets = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum(n_cand, out=offsets[1:])
    cand_idx = np.fromiter((text_rows[text_key[c]] for q in kept for c in q.candidates), dtype=np.int64,
                           count=int(offsets[-1]))
    crop_idx = np.fromiter((crop_rows[crop_keys[(q.image_id, q.box)]] for q in kept), dtype=np.int64, count=len(kept))
    scores = score_candidates(text_emb, crop_emb, cand_idx, np.repeat(crop_idx, n_cand))
    truncated = np.fromiter((sum(c in over for c in q.candidates) for q in kept), dtype=np.int64, count=len(kept))
    stats = {
        "n_queries": len(queries), "n_scored": len(kept), "n_skipped": len(skipped),
        "n_distinct_crops": len(crops), "n_distinct_texts": len(distinct_ids), "n_texts": len(texts),
        "n_token_identical_merged": len(texts) - len(distinct_ids),
        "n_overlength_texts": len(over), "cache_fingerprint": fp,
        # what this run found in the cache: run-specific (RUN_STATS), unlike everything above
        "run_n_crops_encoded": counts["images_encoded"], "run_n_texts_encoded": counts["texts_encoded"],
        "run_n_damaged_cache_shards": len(image_store.damaged) + len(text_store.damaged),
        "run_n_crops_read": pipeline.counts["read"], "run_n_crops_shared": pipeline.counts["shared"],
        "run_tokens_from": token_source,
        "length_cut": bool(length_cut and _cut_text_forward(loaded.model) is not None),
        "fp32_precision": _settings_in_effect(precision, loaded.device),
        **({"fp16_weights": getattr(loaded.model, "crepe_fp16_weights", None)} if precision == "fp16-weights" else {}),
        "seconds_images": round(t_img, 3), "seconds_tokenize": round(t_tok, 3), "seconds_texts": round(t_txt, 3),
        "seconds_total": round(time.perf_counter() - t0, 3),
    }
    return EngineResult(kept, scores, offsets, truncated, stats, skipped)
