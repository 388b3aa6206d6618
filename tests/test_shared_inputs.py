"""CPU work once per multi-model run (shared_inputs.SharedInputs), and the engine's input pipeline.

A multi-model run shares decoded, resized crops between models with the same resize and crop, and
token ids between models with the same tokenizer; none of it may change a byte. The references
here are separate single-model runs, the models' own transforms and tokenizers, and a plain
per-caption loop for the text batches.
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import helpers
from crepe_utils.engine import embedding_cache
from crepe_utils.engine import encoders
from crepe_utils.engine import shared_inputs
from crepe_utils.engine import threads as engine_threads
from crepe_utils.engine import tokenizing
from crepe_utils.engine import core as engine
from crepe_utils.engine.core import RunOptions
from crepe_utils.evaluation import evaluate
from crepe_utils.imagesets.visual_genome import ImageIndex
from crepe_utils.engine.images import crop, open_rgb

OPENAI_MEAN, OPENAI_STD = (0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)


def _transform(size, **kw):
    from open_clip.transform import image_transform
    return image_transform(size, is_train=False, **kw)


def _model(tmp_path, name, seed, image_size, preprocess):
    """A tiny random open_clip model loaded through the real checkpoint path, with ``preprocess``."""
    from crepe_utils.models import load_model
    config = json.loads(json.dumps(helpers.TINY_CONFIG))
    config["vision_cfg"]["image_size"] = image_size
    cfg, ckpt = helpers.make_tiny_model(tmp_path, name, seed, config)
    loaded = load_model(cfg.stem, pretrained=str(ckpt), model_config=str(cfg), device="cpu")
    return dataclasses.replace(loaded, preprocess=preprocess,
                               spec=loaded.spec.replace(preprocess={"repr": repr(preprocess)}))


@pytest.fixture(scope="module")
def four_models(tmp_path_factory):
    """A and B: the same resize and crop (32 px, bicubic, centre crop), OpenAI mean/std; C: another
    stage altogether (48 px, bilinear, squash); D: A's stage with another mean/std, so it may share
    A's uint8 crops but never its tensors."""
    tmp = tmp_path_factory.mktemp("four-models")
    return {
        "a": _model(tmp, "shared-a", 0, 32, _transform(32)),
        "b": _model(tmp, "shared-b", 1, 32, _transform(32)),
        "c": _model(tmp, "shared-c", 2, 48, _transform(48, interpolation="bilinear", resize_mode="squash")),
        "d": _model(tmp, "shared-d", 3, 32, _transform(32, mean=(0.5, 0.4, 0.3), std=(0.2, 0.3, 0.25))),
    }


def _evaluate(loaded, root, out, **kw):
    data_dir, image_dir = root
    kw = {"cache_dir": False, **kw}
    return evaluate(loaded, "productivity", complexities=(4, 5), data_dir=data_dir, image_dir=image_dir, out=out, kind="fixture", device="cpu", progress=False, n_boot=200, **kw)


def _run_stats(out):
    return json.loads(next(out.rglob("manifest.json")).read_text())["run"]


@pytest.mark.parametrize("announced", [False, True])
def test_multi_model_run_equals_separate_runs(four_models, synthetic_root, tmp_path, announced):
    for name, loaded in four_models.items():        # workers on: the shared crops travel to them and back
        _evaluate(loaded, synthetic_root, tmp_path / "separate" / name, num_workers=2)
    shared = shared_inputs.SharedInputs()
    if announced:                                    # every stage computed from the first model's decodes
        shared.expect(*(m.preprocess for m in four_models.values()))
    for name, loaded in four_models.items():
        _evaluate(loaded, synthetic_root, tmp_path / "shared" / name, shared=shared, num_workers=2)
    for name in four_models:
        separate, together = helpers.result_files(tmp_path / "separate" / name), \
            helpers.result_files(tmp_path / "shared" / name)
        assert len(separate) == 3 and separate == together, name
    stats = {name: _run_stats(tmp_path / "shared" / name) for name in four_models}
    n_crops = stats["a"]["run_n_crops_read"]
    assert n_crops > 0 and stats["a"]["run_n_crops_shared"] == 0 and stats["a"]["run_tokens_from"] == "tokenized"
    for name in ("b", "d"):                          # A's stage: nothing decoded or resized again
        assert stats[name]["run_n_crops_read"] == 0 and stats[name]["run_n_crops_shared"] == n_crops, name
    if announced:
        assert stats["c"]["run_n_crops_read"] == 0 and stats["c"]["run_n_crops_shared"] == n_crops
    else:
        assert stats["c"]["run_n_crops_read"] == n_crops and stats["c"]["run_n_crops_shared"] == 0
    assert all(stats[name]["run_tokens_from"] == "memory" for name in ("b", "c", "d"))
    # one queries object for the whole run
    assert len([k for k in shared._memo if k[0] == "queries"]) == 1


def test_memory_budget_only_changes_how_often_crops_are_read(four_models, synthetic_root, tmp_path):
    shared = shared_inputs.SharedInputs(max_crop_bytes=3 * 32 * 32 * 5)     # room for five 32-px crops
    for name in ("a", "b"):
        _evaluate(four_models[name], synthetic_root, tmp_path / name, shared=shared)
        _evaluate(four_models[name], synthetic_root, tmp_path / f"alone-{name}")
        assert helpers.result_files(tmp_path / name) == helpers.result_files(tmp_path / f"alone-{name}")
    b = _run_stats(tmp_path / "b")
    assert b["run_n_crops_shared"] == 5 and b["run_n_crops_read"] > 0 and shared.crops_not_kept > 0


# ------------------------------------------------------------------ the stage split

TRANSFORMS = {
    "224 bicubic centre-crop": lambda: _transform(224),
    "336 bicubic centre-crop": lambda: _transform(336),
    "224 bilinear centre-crop": lambda: _transform(224, interpolation="bilinear"),
    "224 squash": lambda: _transform(224, resize_mode="squash"),
    "224 longest (pad)": lambda: _transform(224, resize_mode="longest"),
    "ALBEF/FLAVA squash": lambda: __import__("crepe_utils.models.spec", fromlist=["x"]).squash_transform(224)[0],
}


@pytest.fixture(scope="module")
def photo_crops(tmp_path_factory):
    """Crops of an 800 × 600 noise image: whole-pixel, fractional, partly outside (black padding)."""
    path = helpers.make_image(tmp_path_factory.mktemp("photo") / "7.jpg", size=(800, 600), seed=3)
    img = open_rgb(path)
    return [crop(img, b) for b in [(0.0, 0.0, 800.0, 600.0), (10.4, 3.6, 300.5, 120.5), (700.0, 500.0, 200.0, 90.0),
                                   (5.0, 5.0, 17.0, 230.0)]]


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_stage_then_rest_is_the_transform_bit_for_bit(name, photo_crops):
    from PIL import Image
    transform = TRANSFORMS[name]()
    split = encoders.split_preprocess(transform)
    assert split is not None
    stage, rest, _ = split
    for img in photo_crops:
        stored = np.array(stage(img), dtype=np.uint8)          # what the shared store keeps
        again = rest(Image.fromarray(stored))                  # what a later model computes from it
        reference = transform(img)
        assert again.dtype == reference.dtype and again.shape == reference.shape
        assert np.array_equal(again.numpy().view(np.uint32), reference.numpy().view(np.uint32))


def test_stage_fingerprint_tells_preprocessings_apart():
    prints = {name: encoders.split_preprocess(make())[2] for name, make in TRANSFORMS.items()}
    assert len(set(prints.values())) == len(prints)           # size, interpolation, squash, padding, squash-without-crop
    assert encoders.split_preprocess(_transform(224))[2] == prints["224 bicubic centre-crop"]   # rebuilt: the same
    # mean and std belong to each model's own tensor stage, not to the shared part
    other_stats = _transform(224, mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))
    assert encoders.split_preprocess(other_stats)[2] == prints["224 bicubic centre-crop"]
    assert repr(encoders.split_preprocess(other_stats)[1]) != repr(encoders.split_preprocess(_transform(224))[1])


def test_unknown_transforms_are_not_shared():
    from torchvision import transforms as T
    base = _transform(224)
    assert encoders.split_preprocess(lambda img: base(img)) is None                     # not a Compose
    assert encoders.split_preprocess(T.Compose([T.RandomResizedCrop(224), T.ToTensor()])) is None   # random
    assert encoders.split_preprocess(T.Compose([T.Lambda(lambda im: im), *base.transforms])) is None
    assert encoders.split_preprocess(T.Compose([T.Resize(224), T.CenterCrop(224)])) is None      # no ToTensor


# ------------------------------------------------------------------ tokens

def _reference_ids(tokenizer, texts):
    rows = tokenizer(texts).tolist()
    return [tuple(t for t in row if t) for row in rows]     # 0 pads; the fixture's words never encode to it


TEXTS = ["a red dog on a table", "Two  CATS under the chair.", "a café & bar", "the dog"]


def test_tokenizer_fingerprint(loaded_tiny):
    import open_clip
    from open_clip.tokenizer import SimpleTokenizer
    a, b = open_clip.get_tokenizer("ViT-B-32"), open_clip.get_tokenizer("RN50")
    fp = tokenizing.tokenizer_fingerprint(a)
    assert fp is not None and tokenizing.tokenizer_fingerprint(b) == fp
    assert tokenizing.tokenizer_fingerprint(SimpleTokenizer(context_length=64)) != fp
    assert tokenizing.tokenizer_fingerprint(SimpleTokenizer(clean="whitespace")) not in (fp, None)
    patched = SimpleTokenizer()
    patched.encode = lambda text: [1, 2, 3]
    assert tokenizing.tokenizer_fingerprint(patched) is None
    assert tokenizing.tokenizer_fingerprint(object()) is None


def test_token_ids_once_in_memory_and_on_disk(loaded_tiny, tmp_path):
    import open_clip
    tok = open_clip.get_tokenizer("ViT-B-32")
    texts = sorted(TEXTS + [" ".join(["word"] * 100)])
    shared = shared_inputs.SharedInputs()
    first, source = shared._tokens_and_source(tok, texts, "keep_eot", 0, tmp_path)
    assert source == "tokenized"
    assert first.ids == _reference_ids(tok, texts) and first.overlength.tolist() == [False] * 4 + [True]
    again, source = shared._tokens_and_source(open_clip.get_tokenizer("RN50"), texts, "keep_eot", 0, tmp_path)
    assert source == "memory" and again.ids == first.ids
    # a fresh object (another process) finds them on disk
    files = list((tmp_path / tokenizing.TOKENS_FOLDER).rglob("*.npy"))
    assert len(files) == 1
    disk, source = shared_inputs.SharedInputs()._tokens_and_source(tok, texts, "keep_eot", 0, tmp_path)
    assert source == "disk" and disk.ids == first.ids and disk.overlength.tolist() == first.overlength.tolist()
    # the official policy is another entry (its over-long ids differ)
    official, source = shared_inputs.SharedInputs()._tokens_and_source(tok, texts, "official", 0, tmp_path)
    assert source == "tokenized" and official.ids[-1] != first.ids[-1] and official.ids[:4] == first.ids[:4]
    # a damaged file is reported, removed and recomputed
    data = bytearray(files[0].read_bytes())
    data[-3] ^= 0x01
    files[0].write_bytes(bytes(data))
    with pytest.warns(embedding_cache.CacheWarning, match="damaged"):
        fixed, source = shared_inputs.SharedInputs()._tokens_and_source(tok, texts, "keep_eot", 0, tmp_path)
    assert source == "tokenized" and fixed.ids == first.ids
    assert list(files[0].parent.glob("*.npy")) == files         # rewritten under the same name


def test_separate_runs_reuse_token_ids_from_the_cache(loaded_tiny, synthetic_root, tmp_path):
    data_dir, image_dir = synthetic_root
    from crepe_utils.benchmarks.crepe import queries as D
    qs = D.load_productivity(data_dir, complexities=(4, 5)).queries
    first = engine.run(loaded_tiny, qs, ImageIndex(image_dir), cache_dir=tmp_path / "cache")
    other_batch = engine.run(loaded_tiny, qs, ImageIndex(image_dir), RunOptions(text_batch_size=7), cache_dir=tmp_path / "cache")
    assert first.stats["run_tokens_from"] == "tokenized" and other_batch.stats["run_tokens_from"] == "disk"
    plain = engine.run(loaded_tiny, qs, ImageIndex(image_dir), RunOptions(text_batch_size=7), cache_dir=None)
    assert np.array_equal(other_batch.scores, plain.scores)


# ------------------------------------------------------------------ the pipeline

def _reference_text_embeddings(loaded, ids, batch_size):
    """The per-caption loop the vectorised fill replaced: one row at a time, length-cut per batch."""
    import torch
    import torch.nn.functional as F
    forward = encoders.cut_text_forward(loaded.model)
    out = []
    with torch.inference_mode():
        for s in range(0, len(ids), batch_size):
            chunk = ids[s:s + batch_size]
            tok = torch.zeros(len(chunk), max(len(t) for t in chunk), dtype=torch.long)
            for i, t in enumerate(chunk):
                tok[i, :len(t)] = torch.tensor(t, dtype=torch.long)
            out.append(F.normalize(forward(tok).float(), dim=-1).numpy())
    return np.concatenate(out)


def test_text_batches_are_bit_identical_to_the_per_caption_loop(loaded_tiny, synthetic_root):
    work = helpers.reference_text_work(synthetic_root[0])
    ours = encoders.encode_token_ids(loaded_tiny, work, batch_size=16)
    assert np.array_equal(ours.view(np.uint32), _reference_text_embeddings(loaded_tiny, work, 16).view(np.uint32))


def test_one_worker_pool_serves_every_shard(loaded_tiny, synthetic_root, monkeypatch):
    import torch.utils.data
    from crepe_utils.benchmarks.crepe import queries as D
    data_dir, image_dir = synthetic_root
    qs = D.load_productivity(data_dir, complexities=(4, 5)).queries
    monkeypatch.setattr(engine_threads, "available_cores", lambda: 64)      # torch's thread count left alone
    plain = engine.run(loaded_tiny, qs, ImageIndex(image_dir), RunOptions(image_batch_size=1, shard_batches=2))
    made = []
    real = torch.utils.data.DataLoader

    class Counting(real):
        def __init__(self, *args, **kwargs):
            made.append(kwargs.get("persistent_workers"))
            super().__init__(*args, **kwargs)
    monkeypatch.setattr(torch.utils.data, "DataLoader", Counting)
    pooled = engine.run(loaded_tiny, qs, ImageIndex(image_dir), RunOptions(image_batch_size=1, shard_batches=2, num_workers=2))
    n_shards = -(-pooled.stats["n_distinct_crops"] // 2)
    assert n_shards > 3 and made == [True]                     # one loader, persistent workers, for all shards
    assert np.array_equal(plain.scores.view(np.uint32), pooled.scores.view(np.uint32))


def test_shared_failures_are_the_same_failures(four_models, synthetic_root, tmp_path):
    """An unreadable image and a box wholly outside its image, read by the first model, are the
    same skips for the later ones (stored as failures, not read again), and nothing else changes."""
    import shutil
    from crepe_utils.benchmarks.crepe import queries as D
    data_dir, image_dir = synthetic_root
    images = tmp_path / "images"
    shutil.copytree(image_dir, images)
    qs = D.load_productivity(data_dir, complexities=(4, 5)).queries
    next(images.rglob(f"{qs[0].image_id}.jpg")).write_bytes(b"not a jpeg")
    outside = [dataclasses.replace(q, box=helpers.WHOLLY_OUTSIDE_BOX, source=q.source + "-outside")
               for q in qs if q.image_id != qs[0].image_id][:2]
    qs = qs + outside
    kw = dict(skip_missing_images=True, skip_bad_boxes=True, image_batch_size=4)
    shared = shared_inputs.SharedInputs()
    shared.expect(four_models["c"].preprocess)
    for name in ("a", "b", "c"):
        alone = engine.run(four_models[name], qs, ImageIndex(images), RunOptions(**kw))
        together = engine.run(four_models[name], qs, ImageIndex(images), RunOptions(**kw), shared=shared)
        assert [(q.query_id, why) for q, why in together.skipped] == [(q.query_id, why) for q, why in alone.skipped]
        assert {why for _, why in alone.skipped} == {encoders.UNREADABLE_IMAGE, encoders.BOX_OUTSIDE}
        assert np.array_equal(together.scores.view(np.uint32), alone.scores.view(np.uint32)), name
        if name != "a":
            assert together.stats["run_n_crops_read"] == 0, name


def test_held_crops_are_finished_in_batches_exactly_as_one_by_one():
    """The main process finishes held crops a batch at a time: bit for bit what the model's own
    ToTensor and Normalize give per image (an independent loop over torchvision's transforms)."""
    import torch
    from PIL import Image
    from open_clip.transform import image_transform
    from torchvision import transforms as T
    rest = encoders.split_preprocess(image_transform(24, is_train=False))[1]
    finish = encoders.batch_finisher(rest)
    rng = np.random.default_rng(3)
    arrays = [rng.integers(0, 256, size=(24, 24, 3), dtype=np.uint8) for _ in range(5)]
    expected = torch.stack([rest(Image.fromarray(a)) for a in arrays])
    assert torch.equal(finish(arrays).view(torch.int32), expected.view(torch.int32))
    # anything but exactly ToTensor then Normalize (not in place) is left to the per-image path
    norm = T.Normalize((0.5, 0.5, 0.5), (0.2, 0.2, 0.2))
    assert encoders.batch_finisher(T.Compose([T.ToTensor(), T.Normalize(norm.mean, norm.std, inplace=True)])) is None
    assert encoders.batch_finisher(T.Compose([T.ToTensor(), norm, T.Lambda(lambda x: x)])) is None
    assert encoders.batch_finisher(T.Compose([T.ToTensor()])) is None


def test_a_model_whose_crops_are_all_held_starts_no_workers(four_models, synthetic_root, monkeypatch):
    import torch.utils.data
    from crepe_utils.benchmarks.crepe import queries as D
    data_dir, image_dir = synthetic_root
    qs = D.load_productivity(data_dir, complexities=(4, 5)).queries
    first, second = four_models["a"], four_models["b"]
    alone = engine.run(second, qs, ImageIndex(image_dir), RunOptions(image_batch_size=3, num_workers=2))
    shared = shared_inputs.SharedInputs()
    engine.run(first, qs, ImageIndex(image_dir), RunOptions(image_batch_size=3, num_workers=2), shared=shared)
    made = []
    real = torch.utils.data.DataLoader

    class Counting(real):
        def __init__(self, *args, **kwargs):
            made.append(1)
            super().__init__(*args, **kwargs)
    monkeypatch.setattr(torch.utils.data, "DataLoader", Counting)
    again = engine.run(second, qs, ImageIndex(image_dir), RunOptions(image_batch_size=3, num_workers=2), shared=shared)
    assert made == [] and again.stats["run_n_crops_shared"] == again.stats["n_distinct_crops"]
    assert np.array_equal(again.scores.view(np.uint32), alone.scores.view(np.uint32))


def test_the_query_layout_is_built_once_per_query_list(four_models, synthetic_root, tmp_path, monkeypatch):
    """Later models of a run reuse the first one's layout (image files listed and stat'ed, captions
    sorted, scoring index built once); another query list gets its own."""
    from crepe_utils.engine import layout
    built = []
    real = layout.query_layout
    monkeypatch.setattr(shared_inputs, "query_layout", lambda qs, *a: built.append(len(qs)) or real(qs, *a))
    shared = shared_inputs.SharedInputs()
    for name, loaded in four_models.items():
        _evaluate(loaded, synthetic_root, tmp_path / name, shared=shared)
    assert len(built) == 1
    _evaluate(four_models["a"], synthetic_root, tmp_path / "fewer", shared=shared, limit=5)
    assert len(built) == 2 and built[1] < built[0]
