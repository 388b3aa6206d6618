"""The content-addressed embedding cache: verified shards, named by what can change a stored byte."""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from ..atomic import atomic_path
from ..errors import CrepeWarning


class CacheWarning(CrepeWarning):
    """A damaged cache shard was found; its embeddings are recomputed."""


def discard_damaged(path: Path, what: str, exc: BaseException, consequence: str, damaged: list) -> None:
    """Warn that a cache file is damaged, note it in ``damaged`` and remove it (a concurrent run may
    have removed it already); the caller then recomputes what it held."""
    warnings.warn(f"{what} {path} is damaged ({type(exc).__name__}: {exc}); it is removed and {consequence}",
                  CacheWarning, stacklevel=4)
    damaged.append(path)
    with contextlib.suppress(OSError):
        path.unlink()


SHARD_PREFIX = "shard-"
#: what a run whose cache has no room can do instead
CACHE_FIX = ", or pass --no-cache (cache_dir=False) or another --cache-dir (CREPE_CACHE)"


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
            discard_damaged(shard, "embedding cache shard", exc, "its embeddings are recomputed", self.damaged)
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
            with atomic_path(self.root / name, what="the embedding cache", fix=CACHE_FIX, needed=emb.nbytes) as tmp:
                with open(tmp, "wb") as fh:
                    np.savez(fh, keys=np.array(keys), emb=emb)
        self._add_arrays(keys, emb)

    def get(self, keys: Sequence[str]) -> np.ndarray:
        if not keys:
            return np.zeros((0, 0), np.float32)
        locs = np.array([self._index[k] for k in keys], dtype=np.int64).reshape(-1, 2)
        out = np.empty((len(keys), self._shards[locs[0, 0]].shape[1]), dtype=np.float32)
        for s in np.unique(locs[:, 0]).tolist():     # rows copied shard by shard
            rows = np.flatnonzero(locs[:, 0] == s)
            out[rows] = self._shards[s][locs[rows, 1]]
        return out


def model_fingerprint(loaded, precision: str, length_cut: bool, truncation: str,
                      image_threads: int | None = None) -> str:
    """Everything that changes an embedding of the model, hashed: weights, architecture,
    preprocessing, numerics, and the kernels that compute it (device, CPU instruction set and
    thread count, torch version). ``image_threads``: the CPU thread count crops are encoded with,
    where it is not torch's current one (:func:`threads.threads_beside_workers`). The batch size,
    which also changes an embedding's last bits, names the store inside it (:func:`store_name`).
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
        if image_threads is not None:
            kernels["image_threads"] = int(image_threads)
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


def fill_store(store: EmbeddingStore, keys: list[str], compute: Callable[[list[list[int]]], Iterator[np.ndarray]],
               chunk: int, batch_size: int) -> None:
    """Compute the embeddings of ``keys`` missing from ``store``, in shards of ``chunk`` items.

    ``keys`` is the full work list in its deterministic order. Each shard is a run of positions
    that a fresh run would batch the same way: it starts at a multiple of ``batch_size`` in
    ``keys`` and ends at the next shard boundary or at a stored key, so a resumed run computes
    every embedding in the same batch as an uninterrupted one. ``compute`` gets all the runs at
    once (so that it can keep its workers busy across their ends) and yields each run's
    embeddings in turn, batched by ``batch_size`` from the run's first position; each is stored
    as soon as it arrives, so a killed run keeps every finished shard.
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
    if not runs:
        return
    with contextlib.closing(compute(runs)) as results:
        for positions, emb in zip(runs, results):
            good = np.flatnonzero(np.isfinite(emb).all(axis=1))
            if len(good):
                store.add([keys[positions[j]] for j in good], emb[good])
