"""Crash safety: killed runs resume to identical files, result folders appear whole, the cache
survives damage and concurrent writers, and a run with other settings never mixes with it.

Kills are real: a subprocess (tests/kill_during_run.py) evaluates the synthetic fixture with the
tiny model and SIGKILLs itself at a point that the script installs from outside the library.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import helpers
from crepe_utils.engine import embedding_cache
from crepe_utils.engine import core as engine
from crepe_utils.engine.core import RunOptions
from crepe_utils.evaluation import evaluate
from crepe_utils.results import store as results

HERE = Path(__file__).resolve().parent
#: 13 distinct crops (2 shards of 8 at batch size 1) and 430 captions (4 shards of 128 at 16).
SETTINGS = {"batch_size": 1, "text_batch_size": 16, "complexities": [4, 5], "n_boot": 200}


@pytest.fixture(scope="module")
def crash_root(tmp_path_factory):
    return helpers.synthetic_crepe_root(tmp_path_factory.mktemp("crash"), n_images=24, rows_per_file=12)


_files = helpers.result_files


def _evaluate(tiny_model, root, out, cache, **overrides):
    cfg, ckpt = tiny_model
    data_dir, image_dir = root
    kwargs = {**SETTINGS, **overrides}
    return evaluate(cfg.stem, "productivity", model_config=str(cfg), pretrained=str(ckpt), data_dir=data_dir, image_dir=image_dir, out=out, cache_dir=cache, kind="fixture", device="cpu", progress=False, **kwargs)


def _spawn(tmp_path, tiny_model, root, out, cache, kill=None, at=1, barrier=None, name="spec", **overrides):
    cfg, ckpt = tiny_model
    spec = {"model": [str(cfg), str(ckpt)], "data": [str(p) for p in root], "out": str(out), "cache": str(cache),
            "kwargs": {**SETTINGS, **overrides}, "kill": kill, "at": at, "barrier": barrier}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(spec))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, str(HERE / "kill_during_run.py"), str(path)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _killed(proc) -> None:
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == -signal.SIGKILL, f"expected a SIGKILL, got {proc.returncode}:\n{output}"


@pytest.fixture(scope="module")
def clean(tiny_model, crash_root, tmp_path_factory):
    """An uninterrupted run: (results folder, cache folder)."""
    base = tmp_path_factory.mktemp("clean")
    _evaluate(tiny_model, crash_root, base / "out", base / "cache")
    return base / "out", base / "cache"


def _shards(cache: Path, kind: str) -> set[str]:
    return {p.name for p in cache.rglob(f"{kind}-b*/shard-*.npz")}


@pytest.mark.slow
@pytest.mark.parametrize("kill, at, images_left, texts_left, total_left", [
    # Texts encode in a thread beside the crops, so how far the other kind got when one is killed
    # depends on timing (None: any number, checked as a subset of the clean run's shards).
    ("images", 11, 1, None, None),   # 11th crop of 13: the first image shard (8) is stored
    ("texts", 19, None, 2, None),    # 19th text batch of 27: two text shards (2 × 8 batches) are stored
    ("shard", 4, None, None, 3),     # the 4th shard written is cut in half before its rename: 3 survive
    ("write", 3, 2, 4, 6),           # the per-query table half written: every embedding is stored
])
def test_killed_run_resumes_to_identical_files(kill, at, images_left, texts_left, total_left, tiny_model, crash_root,
                                               clean, tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    _killed(_spawn(tmp_path, tiny_model, crash_root, out, cache, kill=kill, at=at))
    assert results.load_results(out).empty                    # no result is visible
    assert not (out.exists() and any(p.is_file() for p in out.rglob("*") if p.name == "manifest.json"
                                     and not helpers.is_temporary(p, out)))
    clean_out, clean_cache = clean
    # exactly the shards written before the kill survive, each identical to the clean run's
    left = {"images": len(_shards(cache, "images")), "texts": len(_shards(cache, "texts"))}
    assert images_left is None or left["images"] == images_left
    assert texts_left is None or left["texts"] == texts_left
    assert total_left is None or sum(left.values()) == total_left
    assert _shards(cache, "images") <= _shards(clean_cache, "images")
    assert _shards(cache, "texts") <= _shards(clean_cache, "texts")

    _evaluate(tiny_model, crash_root, out, cache)
    assert _files(out) == _files(clean_out)                   # no temporary folder left either
    assert _shards(cache, "images") == _shards(clean_cache, "images")
    assert _shards(cache, "texts") == _shards(clean_cache, "texts")


@pytest.mark.slow
def test_kill_while_replacing_a_result_never_shows_a_mixture(tiny_model, crash_root, clean, tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    _evaluate(tiny_model, crash_root, out, cache, label="old", n_boot=100)
    folder = next(p.parent for p in out.rglob("manifest.json"))
    old = _files(out)
    # killed while writing the new per-query table: the old result is untouched
    _killed(_spawn(tmp_path, tiny_model, crash_root, out, cache, kill="write", at=2, name="w"))
    assert {k: v for k, v in _files(out).items() if not helpers.is_temporary(out / k, out)} == old
    assert set(results.load_results(out)["label"]) == {"old"}
    # killed between moving the old folder away and moving the new one in: no result at all
    _killed(_spawn(tmp_path, tiny_model, crash_root, out, cache, kill="publish", name="p"))
    assert not folder.exists() and results.load_results(out).empty
    _evaluate(tiny_model, crash_root, out, cache)
    assert _files(out) == _files(clean[0])                    # the leftovers of both kills are gone


@pytest.mark.slow
def test_two_processes_share_one_cache(tiny_model, crash_root, clean, tmp_path):
    cache, barrier = tmp_path / "cache", tmp_path / "go"
    procs = [_spawn(tmp_path, tiny_model, crash_root, tmp_path / f"out{i}", cache, barrier=str(barrier),
                    name=f"p{i}") for i in (0, 1)]
    time.sleep(0.5)
    barrier.touch()
    for proc in procs:
        output, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, output
    clean_out, clean_cache = clean
    assert _files(tmp_path / "out0") == _files(tmp_path / "out1") == _files(clean_out)
    # the same write-once shards as one run alone, every one verified on reading, no temporary files
    assert _shards(cache, "texts") == _shards(clean_cache, "texts")
    assert _shards(cache, "images") == _shards(clean_cache, "images")
    assert not [p for p in cache.rglob("*") if p.name.startswith(".")]
    fp_dir = next(cache.rglob("texts-b16"))
    store = embedding_cache.EmbeddingStore(fp_dir)
    assert not store.damaged and len(store) == len(helpers.reference_text_work(crash_root[0], (4, 5)))


def test_damaged_shards_are_reported_and_recomputed(tiny_model, crash_root, clean, tmp_path):
    import shutil
    cache = tmp_path / "cache"
    shutil.copytree(clean[1], cache)
    # the largest files are full shards (128 texts, 8 crops): keys have one length
    texts = sorted(cache.rglob("texts-b16/shard-*.npz"), key=lambda p: -p.stat().st_size)
    images = sorted(cache.rglob("images-b1/shard-*.npz"), key=lambda p: -p.stat().st_size)
    truncated, flipped, garbage = texts[0], texts[1], images[0]
    truncated.write_bytes(truncated.read_bytes()[:1000])
    data = bytearray(flipped.read_bytes())
    data[-4000] ^= 0x01                                       # one bit of one embedding (16 kB before the end)
    flipped.write_bytes(bytes(data))
    garbage.write_bytes(b"not a shard")
    with pytest.warns(embedding_cache.CacheWarning) as caught:
        _evaluate(tiny_model, crash_root, tmp_path / "out", cache)
    named = {Path(str(w.message).split(" is damaged")[0].split("shard ", 1)[1]) for w in caught
             if w.category is embedding_cache.CacheWarning}
    assert named == {truncated, flipped, garbage}
    assert _files(tmp_path / "out") == _files(clean[0])
    manifest = results.load_manifest(next((tmp_path / "out").rglob("manifest.json")).parent)
    assert manifest["run"]["run_n_damaged_cache_shards"] == 3
    assert manifest["run"]["run_n_crops_encoded"] == 8       # the one damaged image shard
    assert manifest["run"]["run_n_texts_encoded"] == 256     # the two damaged text shards
    assert _shards(cache, "texts") == _shards(clean[1], "texts")   # rewritten, identical


@pytest.mark.slow
def test_other_batch_sizes_never_mix_with_a_resumed_cache(tiny_model, crash_root, tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    _killed(_spawn(tmp_path, tiny_model, crash_root, out, cache, kill="texts", at=19))
    stored = _shards(cache, "texts")
    assert len(stored) == 2
    crops_stored = 0                                         # crops encode beside the texts: as far as they got
    for shard in cache.rglob("images-b*/shard-*.npz"):
        with np.load(shard) as z:
            crops_stored += len(z["keys"])
    # resumed with another text batch size: nothing of the killed run's text shards is used
    _evaluate(tiny_model, crash_root, out, cache, text_batch_size=32)
    manifest = results.load_manifest(next(out.rglob("manifest.json")).parent)
    assert manifest["run"]["run_n_texts_encoded"] == len(helpers.reference_text_work(crash_root[0], (4, 5)))
    # the images' batch size did not change: every crop the killed run stored is reused
    assert manifest["run"]["run_n_crops_encoded"] == manifest["engine"]["n_distinct_crops"] - crops_stored
    fresh = tmp_path / "fresh"
    _evaluate(tiny_model, crash_root, fresh, False, text_batch_size=32)
    assert _files(out) == _files(fresh)
    # the killed run's shards stay where they were, in their own store
    assert {p.name for p in next(cache.rglob("texts-b16")).iterdir()} == stored


def test_fingerprint_covers_what_changes_bytes(loaded_tiny, monkeypatch):
    base = embedding_cache.model_fingerprint(loaded_tiny, "fp32", True, "keep_eot")
    assert embedding_cache.model_fingerprint(loaded_tiny, "fp32", True, "keep_eot") == base
    for changed in [("bf16", True, "keep_eot"), ("fp32", False, "keep_eot"), ("fp32", True, "official")]:
        assert embedding_cache.model_fingerprint(loaded_tiny, *changed) != base, changed
    import torch
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(threads + 1)
        assert embedding_cache.model_fingerprint(loaded_tiny, "fp32", True, "keep_eot") != base
    finally:
        torch.set_num_threads(threads)
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX2-elsewhere")
    assert embedding_cache.model_fingerprint(loaded_tiny, "fp32", True, "keep_eot") != base
    assert embedding_cache.store_name("texts", 16) != embedding_cache.store_name("texts", 32)


def test_shard_size_and_workers_do_not_change_bytes(loaded_tiny, crash_root, tmp_path, monkeypatch):
    """Left out of the cache key on purpose: a run with another shard size or worker count
    reuses the cache and gives the same embeddings as a run without a cache. (With cores to
    spare, as here, workers leave torch's thread count alone; where they do not, the crops'
    thread count is part of the key: the next test.)"""
    from crepe_utils.benchmarks.crepe import queries as D
    from crepe_utils.imagesets.visual_genome import ImageIndex
    from crepe_utils.engine import threads as engine_threads
    monkeypatch.setattr(engine_threads, "available_cores", lambda: 64)
    qs = D.load_productivity(crash_root[0], complexities=(4, 5)).queries
    index = ImageIndex(crash_root[1])
    kw = dict(image_batch_size=2, text_batch_size=16)
    first = engine.run(loaded_tiny, qs, index, RunOptions(shard_batches=2, **kw), cache_dir=tmp_path / "c")
    again = engine.run(loaded_tiny, qs, index, RunOptions(shard_batches=5, num_workers=2, **kw), cache_dir=tmp_path / "c")
    assert again.stats["run_n_crops_encoded"] == again.stats["run_n_texts_encoded"] == 0
    plain = engine.run(loaded_tiny, qs, index, RunOptions(shard_batches=7, num_workers=2, **kw), cache_dir=None)
    assert plain.stats["run_n_crops_encoded"] == first.stats["n_distinct_crops"]
    assert np.array_equal(first.scores, plain.scores) and np.array_equal(again.scores, plain.scores)


def test_crops_beside_workers_are_encoded_with_the_cores_they_leave(loaded_tiny, crash_root, monkeypatch):
    """On the CPU with as many workers as cores, crops are encoded with one torch thread (an idle
    OpenMP thread spins and takes a worker's core) and texts, in their own thread, with torch's
    count; the main thread's count is restored after the run, and the crops' count is recorded and
    part of the cache key, so such a run never mixes with one at the full thread count."""
    import torch
    from crepe_utils import metrics
    from crepe_utils.benchmarks.crepe import queries as D
    from crepe_utils.imagesets.visual_genome import ImageIndex
    from crepe_utils.engine import threads as engine_threads
    qs = D.load_productivity(crash_root[0], complexities=(4, 5)).queries
    index = ImageIndex(crash_root[1])
    saved = torch.get_num_threads()
    torch.set_num_threads(2)
    monkeypatch.setattr(engine_threads, "available_cores", lambda: 2)
    seen, seen_texts = [], []
    real, real_texts = loaded_tiny.model.encode_image, engine.encode_token_ids

    def spying(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    def spying_texts(*args, **kwargs):            # runs in the engine's text thread
        seen_texts.append(torch.get_num_threads())
        return real_texts(*args, **kwargs)
    monkeypatch.setattr(loaded_tiny.model, "encode_image", spying)
    monkeypatch.setattr(engine, "encode_token_ids", spying_texts)
    try:
        alone = engine.run(loaded_tiny, qs, index, RunOptions(image_batch_size=2))
        assert seen and set(seen) == {2} and set(seen_texts) == {2} and "image_encoding_threads" not in alone.stats
        seen.clear()
        seen_texts.clear()
        pooled = engine.run(loaded_tiny, qs, index, RunOptions(image_batch_size=2, num_workers=2))
        assert seen and set(seen) == {1} and torch.get_num_threads() == 2
        assert seen_texts and set(seen_texts) == {2}           # in the text thread, set for itself
        assert pooled.stats["image_encoding_threads"] == 1
        assert pooled.stats["cache_fingerprint"] != alone.stats["cache_fingerprint"]
    finally:
        torch.set_num_threads(saved)
    # the same ranks; equal bits are this machine's kernels' doing, not promised
    a, b = (metrics.ranks_from_flat(r.scores, r.offsets) for r in (alone, pooled))
    assert np.array_equal(a.pessimistic, b.pessimistic) and np.allclose(alone.scores, pooled.scores, atol=1e-6)
