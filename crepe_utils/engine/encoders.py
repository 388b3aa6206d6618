"""Token ids and crops to L2-normalised embeddings: length-cut text batches, the crop pipeline (one
persistent worker pool per run; preprocessing split into a shareable uint8 stage and the rest)."""
from __future__ import annotations

import hashlib
import json
import os
import types
from itertools import chain
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from ..errors import ModelError
from .precisions import pixel_dtype, precision_context
from .tokenizing import qualified_name, tokenize
from ..progress import tqdm
from .images import open_rgb
from .images import box_wholly_outside, crop
import PIL
from PIL import Image


def cut_text_forward(model) -> Callable | None:
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

    model, device, ctx = loaded.model, loaded.device, loaded.spec.context_length
    forward = cut_text_forward(model) if length_cut else None
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
    """L2-normalised embeddings of ``texts`` (float32, input order). For small lists."""
    tokens = tokenize(loaded.tokenizer, texts, truncation)
    order = sorted(range(len(texts)), key=lambda i: (len(tokens.ids[i]), tokens.ids[i]))
    emb = encode_token_ids(loaded, [tokens.ids[i] for i in order], batch_size, precision, length_cut, progress)
    out = np.empty_like(emb)
    out[order] = emb
    return out


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
    while n < len(steps) and qualified_name(steps[n]) in PIL_STAGE_TRANSFORMS:
        n += 1
    if n == 0 or n == len(steps) or qualified_name(steps[n]) not in _TO_TENSOR:
        return None
    import torchvision
    ident = {"torchvision": torchvision.__version__, "pillow": PIL.__version__, "stage": [
        [qualified_name(t), sorted((k, repr(v)) for k, v in vars(t).items() if not k.startswith("_") and k != "training")]
        if not isinstance(t, types.FunctionType) else [qualified_name(t)] for t in steps[:n]]}
    fingerprint = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:24]
    return T.Compose(steps[:n]), T.Compose(steps[n:]), fingerprint


def batch_finisher(rest):
    """A function finishing a batch of stage outputs (uint8 arrays, height × width × 3, one shape) at
    once, as ``torch.stack([rest(Image.fromarray(a)) for a in arrays])`` would, bit for bit; or None
    unless ``rest`` is exactly ToTensor then Normalize (not in place), whose per-image operations
    (to float, ÷ 255, − mean, ÷ std, elementwise in IEEE fp32) it repeats on the whole batch."""
    from torchvision import transforms as T
    steps = list(getattr(rest, "transforms", ()))
    if (type(rest) is not T.Compose or len(steps) != 2 or qualified_name(steps[0]) not in _TO_TENSOR
            or type(steps[1]) is not T.Normalize or steps[1].inplace):
        return None
    import torch
    mean = torch.as_tensor(steps[1].mean, dtype=torch.float32).view(1, -1, 1, 1)
    std = torch.as_tensor(steps[1].std, dtype=torch.float32).view(1, -1, 1, 1)
    if mean.shape[1] != 3 or std.shape[1] != 3 or bool((std == 0).any()):
        return None

    def finish(arrays):
        x = torch.from_numpy(np.stack(arrays)).permute(0, 3, 1, 2).contiguous()
        return x.to(dtype=torch.float32).div(255).sub_(mean).div_(std)
    return finish


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
        if self._last is None or self._last[0] != path:
            self._last = None          # a failed decode must not leave the previous image in place
            self._last = (path, open_rgb(path))
        return self._last[1]

    def __getitem__(self, request):
        import torch
        failed = torch.zeros(1), False
        if request[0] == "fail":
            return (*failed, request[1], None)
        if request[0] == "finish":
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
            try:
                img = crop(img, box)
            except Exception as exc:  # noqa: BLE001 - a box PIL cannot crop (too large to pad): the row's fault
                why = (UNUSABLE_CROP, f"box {box} cannot be cropped ({type(exc).__name__}: {exc})")
                return (*failed, why, dict.fromkeys(stages, why))
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


class CropPipeline:
    """The image side of one engine run: one DataLoader with persistent workers for all its shards,
    and, with a :class:`SharedInputs`, that object's stores of stage outputs (see
    :func:`split_preprocess`): a crop that an earlier model with the same resize and crop has read is
    neither decoded nor resized again, only finished by this model's own tensor stage; and a crop
    read here is also put through every other stage the run expects (:meth:`SharedInputs.expect`),
    from the same decode.
    """

    def __init__(self, loaded, num_workers: int = 0, shared=None):
        split = split_preprocess(loaded.preprocess)
        own = split[2] if split else None
        sharing = shared is not None and shared.max_crop_bytes > 0
        others = {fp: st for fp, st in shared.expected_stages().items() if fp != own} if sharing else {}
        self.dataset = CropDataset(loaded.preprocess, *(split if split else (None, None, None)), other_stages=others)
        self.stores = {fp: shared.crop_store(fp) for fp in [own, *others] if fp is not None} if sharing else {}
        self.own = self.stores.get(own)
        self.finish = batch_finisher(split[1]) if split else None
        self.num_workers = int(num_workers)
        self.pin_memory = loaded.device.type == "cuda"
        self.counts = {"read": 0, "shared": 0}
        self._sampler = _Batches()
        self._loader = None
        self._stat: dict[str, tuple[int, int]] = {}

    def _key(self, path, box) -> tuple:
        """A held crop's key: its locator and box, and for a file its size and modification time (an
        archive member or bytes in memory cannot change under the run)."""
        if path not in self._stat:
            try:
                st = os.stat(path) if not isinstance(path, tuple) else None
                self._stat[path] = (st.st_size, st.st_mtime_ns) if st else (-1, -1)
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

    def batches(self, groups: Sequence[Sequence[tuple[str, tuple | None]]], batch_size: int):
        """Yield ``(group index, pixels, ok, problems)`` per batch: each group's items in batches of
        ``batch_size`` from its first, groups in order, all in one pass of the workers, so that they
        keep decoding across a group's end instead of waiting for its last batch."""
        from torch.utils.data import DataLoader
        batches, owners = [], []
        for g, items in enumerate(groups):
            requests = [self._request(p if isinstance(p, tuple) else str(p), b) for p, b in items]
            for s in range(0, len(requests), batch_size):
                batches.append(requests[s:s + batch_size])
                owners.append((g, s))
        if self.finish is not None and all(r[0] != "read" for b in batches for r in b):
            # every crop is held already: finished here, a batch at a time, without the workers
            for (g, _), batch in zip(owners, batches):
                yield (g, *self._finish_held(batch))
            return
        self._sampler.batches = batches
        if self._loader is None:
            workers = self.num_workers
            self._loader = DataLoader(self.dataset, batch_sampler=self._sampler, num_workers=workers,
                                      collate_fn=_collate, persistent_workers=workers > 0,
                                      pin_memory=self.pin_memory)
        for (g, start), (pixels, ok, errs, stored) in zip(owners, self._loader):
            items = groups[g]
            for j, outputs in enumerate(stored):
                for fp, value in (outputs or {}).items():
                    if value is not None:
                        self.stores[fp].put(self._key(str(items[start + j][0]), items[start + j][1]), value)
            yield g, pixels, ok, errs

    def _finish_held(self, batch: list) -> tuple:
        """(pixels, ok, problems) of a batch of held crops ("finish" and "fail" requests), as a worker gives them."""
        import torch
        arrays = [r[1] for r in batch if r[0] == "finish"]
        if len({a.shape for a in arrays}) != 1:      # nothing to finish, or several sizes: as a worker would
            pixels, ok, errs, _ = _collate([self.dataset[r] for r in batch])
        else:
            ok = [r[0] == "finish" for r in batch]
            errs = [None if good else r[1] for good, r in zip(ok, batch)]
            pixels = self.finish(arrays)
            if len(arrays) < len(batch):                # failed crops: zeros, as the workers' collate has them
                full = pixels.new_zeros((len(batch), *pixels.shape[1:]))
                full[torch.tensor(ok)] = pixels
                pixels = full
        return (pixels.pin_memory() if self.pin_memory and pixels is not None else pixels), ok, errs

    def close(self) -> None:
        """Stop the workers (they also stop when the pipeline is garbage-collected)."""
        loader, self._loader = self._loader, None
        it = getattr(loader, "_iterator", None)
        if it is not None and hasattr(it, "_shutdown_workers"):
            it._shutdown_workers()


def encode_crop_groups(loaded, groups: Sequence[Sequence[tuple[str, tuple | None]]], batch_size: int = 256,
                       precision: str = "fp32", progress: bool = False, desc: str = "crops",
                       pipeline: CropPipeline | None = None) -> Iterator[tuple[np.ndarray, dict[int, tuple[str, str]]]]:
    """For each group of (image path, box) items, in order: its embeddings and {item index: (kind,
    reason)} of each failure (NaN rows), as :func:`encode_crops` gives them for that group alone.

    All groups go through the pipeline's workers in one pass (batches never span two groups, so the
    result is the same as one call per group); each group's embeddings come to the host in one copy
    when its last batch is encoded. ``pipeline`` defaults to one with no workers.
    """
    import torch

    pipeline = pipeline or CropPipeline(loaded, 0)
    parts: list = []
    done = 0
    bar = tqdm(total=sum(map(len, groups)), desc=f"encode {desc}", unit="img", disable=not progress, smoothing=0.05)
    try:
        with torch.inference_mode(), precision_context(precision, loaded.device):
            for g, pixels, ok, errs in chain(pipeline.batches(groups, batch_size), [(len(groups), None, [], [])]):
                while done < g:                      # every batch of group `done` is encoded
                    yield _group_result(loaded, precision, groups[done], parts)
                    parts, done = [], done + 1
                if g == len(groups):
                    break
                parts.append((ok, errs, _encode_pixels(loaded, pixels, precision)))
                bar.update(len(ok))
    finally:
        bar.close()


def _encode_pixels(loaded, pixels, precision: str):
    """Normalised image embeddings of one batch, left on the device (None for a batch with no pixels)."""
    import torch.nn.functional as F
    if pixels is None:
        return None
    feats = loaded.model.encode_image(pixels.to(loaded.device, dtype=pixel_dtype(precision), non_blocking=True))
    return F.normalize(feats.float(), dim=-1)


def _group_result(loaded, precision: str, items, parts) -> tuple[np.ndarray, dict[int, tuple[str, str]]]:
    """One group's batches (``(ok, problems, embeddings on the device)`` each) as host arrays, checked."""
    host, problems, good, start = [], {}, np.zeros(len(items), dtype=bool), 0
    for ok, errs, emb in parts:
        host.append((start, len(ok), emb.cpu().numpy() if emb is not None else None))
        good[start:start + len(ok)] = ok
        problems.update({start + j: e for j, e in enumerate(errs) if e})
        start += len(ok)
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


def encode_crops(loaded, items: Sequence[tuple[str, tuple | None]], batch_size: int = 256,
                 precision: str = "fp32", num_workers: int = 0, progress: bool = False,
                 desc: str = "crops") -> tuple[np.ndarray, dict[int, tuple[str, str]]]:
    """Embeddings of (image path, box) items, and {item index: (kind, reason)} of each failure (NaN rows).

    A crop that was read and preprocessed but whose embedding is not finite is a :class:`ModelError`.
    Embeddings stay on the device until all batches are done, then come to the host in one copy.
    """
    pipeline = CropPipeline(loaded, num_workers)
    results = encode_crop_groups(loaded, [items], batch_size, precision, progress, desc, pipeline)
    try:
        return next(results)
    finally:
        results.close()
        pipeline.close()


def _non_finite_message(loaded, precision: str, what: str, n_bad: int, n: int, first: str) -> str:
    return (f"{loaded.spec.key}: the model produced non-finite (NaN or inf) {what} embeddings for {n_bad} of {n} "
            f"inputs at precision {precision} (first: {first}). The checkpoint may hold NaN/inf "
            "weights, or the precision overflows (fp16): try --precision fp32, and check the weights file.")


def encode_images(loaded, images: Sequence, batch_size: int = 64, precision: str = "fp32") -> np.ndarray:
    """L2-normalised embeddings of in-memory PIL images (input order). For small sets."""
    import torch
    import torch.nn.functional as F
    out = []
    with torch.inference_mode(), precision_context(precision, loaded.device):
        for start in range(0, len(images), batch_size):
            pixels = torch.stack([loaded.preprocess(img.convert("RGB")) for img in images[start:start + batch_size]])
            feats = loaded.model.encode_image(pixels.to(loaded.device, dtype=pixel_dtype(precision)))
            out.append(F.normalize(feats.float(), dim=-1).cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, 0), np.float32)
