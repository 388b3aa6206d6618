"""The evaluation engine against a naive per-query reference, and every trap it handles."""
from __future__ import annotations

import gzip
import shutil

import numpy as np
import pytest

import helpers
from crepe_utils.benchmarks.crepe import queries as D
from crepe_utils.engine import encoders
from crepe_utils.engine import tokenizing
from crepe_utils.engine import core as engine
from crepe_utils.engine.core import RunOptions
from crepe_utils.results import store as results
from crepe_utils.imagesets.visual_genome import ImageIndex
from crepe_utils.evaluation import evaluate


def naive_ranks(loaded, queries, image_dir):
    """The official protocol written out plainly: one query at a time, its own candidates only.

    Image: open, RGB, torchvision crop(top=y, left=x, height, width), preprocess, encode alone.
    Texts: open_clip's tokenizer, encode, normalise. Rank: candidates scoring at least as high as
    the positive (pessimistic) and strictly higher (optimistic), from a plain argsort.
    """
    import torch
    import torch.nn.functional as F
    import torchvision.transforms.functional as TF
    from PIL import Image

    index = ImageIndex(image_dir)
    out = []
    with torch.no_grad():
        for q in queries:
            img = Image.open(index.path(q.image_id)).convert("RGB")
            x, y, w, h = q.box
            pixels = loaded.preprocess(TF.crop(img, y, x, h, w)).unsqueeze(0)
            img_emb = F.normalize(loaded.model.encode_image(pixels), dim=-1)[0]
            txt_emb = F.normalize(loaded.model.encode_text(loaded.tokenizer(list(q.candidates))), dim=-1)
            scores = (txt_emb @ img_emb).numpy()
            order = np.argsort(-scores, kind="stable")
            position = int(np.where(order == 0)[0][0])          # where the positive landed
            higher = int((scores[1:] > scores[0]).sum())
            equal = int((scores[1:] == scores[0]).sum())
            out.append((position, 1 + higher + equal, 1 + higher, equal))
    return out


def test_engine_ranks_equal_naive_reference(loaded_tiny, synthetic_root):
    data_dir, image_dir = synthetic_root
    qs = D.load_productivity(data_dir, complexities=(4, 5)).queries + \
        D.load_systematicity(data_dir, "laion").queries
    res = engine.run(loaded_tiny, qs, ImageIndex(image_dir), cache_dir=None)
    ref = naive_ranks(loaded_tiny, res.queries, image_dir)
    table = helpers.per_query_table(res)
    assert len(table) == len(qs) == len(ref)
    assert table["rank"].tolist() == [r[1] for r in ref]
    assert table["rank_optimistic"].tolist() == [r[2] for r in ref]
    assert table["n_ties"].tolist() == [r[3] for r in ref]
    # where nothing ties, the plain argsort position agrees with both ranks
    untied = table["n_ties"] == 0
    assert (table.loc[untied, "rank"] - 1).tolist() == [r[0] for r, u in zip(ref, untied) if u]
    # and the scores themselves agree to float precision
    naive_first = [float(s.split()[0]) for s in table["scores"]]
    assert np.allclose(naive_first, table["score_positive"])


def test_deduplication_counts(loaded_tiny, synthetic_root):
    data_dir, image_dir = synthetic_root
    qs = D.load_productivity(data_dir, complexities=(4, 5)).queries
    res = engine.run(loaded_tiny, qs, ImageIndex(image_dir), cache_dir=None)
    assert res.stats["n_distinct_crops"] == len({(q.image_id, q.box) for q in qs})
    assert res.stats["n_texts"] == len({c for q in qs for c in q.candidates})
    assert res.stats["n_distinct_crops"] < len(qs)          # crops are shared across types


def _tie_queries(image_id, box):
    base = dict(benchmark="productivity", split="", complexity=4, train_data="", image_id=image_id, box=box)
    return [
        # the positive itself among the negatives: an exact tie
        D.Query(hn_type="swap", positive="a red dog on a table", source="t:2",
                negatives=("a table on a red dog", "a red dog on a table", "a blue dog"), **base),
        # a negative that differs only in case and spacing: token-identical, so an exact tie
        D.Query(hn_type="negate", positive="a red dog on a table", source="t:3",
                negatives=("A red dog  on a TABLE", "a red dog not on a table"), **base),
        D.Query(hn_type="atom", positive="a red dog on a table", source="t:4",
                negatives=("a green dog on a table", "a red cat on a table"), **base),
    ]


def test_exact_ties_are_explicit(loaded_tiny, synthetic_root):
    data_dir, image_dir = synthetic_root
    q0 = D.load_productivity(data_dir, ["atom"], [4]).queries[0]
    qs = _tie_queries(q0.image_id, q0.box)
    res = engine.run(loaded_tiny, qs, ImageIndex(image_dir), cache_dir=None)
    table = helpers.per_query_table(res).set_index("query_id")
    for qid in ("t:2", "t:3"):
        row = table.loc[qid]
        assert row["n_ties"] == 1
        assert row["rank"] == row["rank_optimistic"] + 1      # pessimistic counts the tie against
    assert table.loc["t:4", "n_ties"] == 0
    assert res.stats["n_token_identical_merged"] == 1           # "A red dog  on a TABLE" merged
    s = [float(v) for v in table.loc["t:3", "scores"].split()]
    assert s[0] == s[1]                                          # bit-identical, not merely close


def test_length_cut_keeps_every_rank(loaded_tiny, synthetic_root):
    data_dir, image_dir = synthetic_root
    qs = D.load_productivity(data_dir, complexities=(4, 5)).queries
    cut = engine.run(loaded_tiny, qs, ImageIndex(image_dir), RunOptions(length_cut=True))
    full = engine.run(loaded_tiny, qs, ImageIndex(image_dir), RunOptions(length_cut=False))
    assert cut.stats["length_cut"] and not full.stats["length_cut"]
    a, b = helpers.per_query_table(cut), helpers.per_query_table(full)
    assert a["rank"].tolist() == b["rank"].tolist()
    texts = sorted({c for q in qs for c in q.candidates})
    ea = encoders.encode_texts(loaded_tiny, texts, length_cut=True)
    eb = encoders.encode_texts(loaded_tiny, texts, length_cut=False)
    assert np.abs(ea - eb).max() < 1e-5


def test_tokenize_matches_open_clip_and_truncation_policies(loaded_tiny):
    tok = loaded_tiny.tokenizer
    texts = ["a red dog on a table", "Two  CATS under the chair."]
    ours = tokenizing.tokenize(tok, texts)
    theirs = tok(texts).numpy()
    for ids, row in zip(ours.ids, theirs):
        assert list(ids) == row[:len(ids)].tolist() and not row[len(ids):].any()
    long = " ".join(["word"] * 100)
    keep = tokenizing.tokenize(tok, [long], "keep_eot")
    official = tokenizing.tokenize(tok, [long], "official")
    assert keep.overlength[0] and len(keep.ids[0]) == 77 and keep.ids[0][-1] == tok.eot_token_id
    assert official.ids[0][-1] != tok.eot_token_id and len(official.ids[0]) == 77
    assert list(keep.ids[0]) == tok([long])[0].tolist()       # keep_eot is open_clip's behaviour
    with pytest.raises(D.DataError, match="over the context length"):
        tokenizing.tokenize(tok, [long], "error")


def test_parallel_tokenization_equals_serial_in_order(loaded_tiny):
    tok = loaded_tiny.tokenizer
    texts = [f"{n} {colour} dogs on a table" for n in range(40) for colour in ("red", "blue", "Green")]
    texts.insert(57, " ".join(["word"] * 100))                 # an over-long one inside a middle chunk
    serial = tokenizing.tokenize(tok, texts)
    parallel = tokenizing.tokenize_parallel(tok, texts, num_workers=2, chunk=16)
    assert parallel.ids == serial.ids
    assert parallel.overlength.tolist() == serial.overlength.tolist() and parallel.overlength[57]
    with pytest.raises(D.DataError, match="over the context length"):   # a worker's error reaches the caller
        tokenizing.tokenize_parallel(tok, texts, "error", num_workers=2, chunk=16)


def test_overlength_captions_are_counted(loaded_tiny, synthetic_root):
    data_dir, image_dir = synthetic_root
    q0 = D.load_productivity(data_dir, ["atom"], [4]).queries[0]
    q = D.Query(benchmark="productivity", hn_type="atom", split="", complexity=4, train_data="",
                image_id=q0.image_id, box=q0.box, positive="a dog", source="x:2",
                negatives=(" ".join(["cat"] * 90), "a cat"))
    res = engine.run(loaded_tiny, [q], ImageIndex(image_dir))
    assert res.stats["n_overlength_texts"] == 1
    assert res.truncated.tolist() == [1]


def test_missing_and_unreadable_images(loaded_tiny, synthetic_root, tmp_path):
    data_dir, image_dir = synthetic_root
    images = tmp_path / "images"
    shutil.copytree(image_dir, images)
    qs = D.load_productivity(data_dir, ["atom"], [4]).queries
    victim = qs[0].image_id
    next(images.rglob(f"{victim}.jpg")).unlink()
    with pytest.raises(D.DataError, match=f"missing.*{victim}"):
        engine.run(loaded_tiny, qs, ImageIndex(images))
    res = engine.run(loaded_tiny, qs, ImageIndex(images), RunOptions(skip_missing_images=True))
    n_victim = sum(q.image_id == victim for q in qs)
    assert len(res.queries) == len(qs) - n_victim and len(res.skipped) == n_victim
    # an unreadable file
    other = qs[-1].image_id if qs[-1].image_id != victim else qs[1].image_id
    next(images.rglob(f"{other}.jpg")).write_bytes(b"not a jpeg")
    with pytest.raises(D.DataError, match="could not be read"):
        engine.run(loaded_tiny, [q for q in qs if q.image_id != victim], ImageIndex(images))
    res = engine.run(loaded_tiny, qs, ImageIndex(images), RunOptions(skip_missing_images=True))
    assert {why for _, why in res.skipped} == {"missing image", "unreadable image"}


_files = helpers.result_files


def _evaluate(tiny_model, synthetic_root, out, cache, **kw):
    cfg, ckpt = tiny_model
    data_dir, image_dir = synthetic_root
    return evaluate(cfg.stem, "productivity", model_config=str(cfg), pretrained=str(ckpt), complexities=(4, 5), data_dir=data_dir, image_dir=image_dir, out=out, cache_dir=cache, kind="fixture", device="cpu", progress=False, n_boot=200, **kw)


def test_cpu_fp32_runs_are_identical(tiny_model, synthetic_root, tmp_path):
    _evaluate(tiny_model, synthetic_root, tmp_path / "a", False)
    _evaluate(tiny_model, synthetic_root, tmp_path / "b", False)
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a.keys() == b.keys() and len(a) == 3
    assert a == b


def test_resume_after_crash_gives_identical_files(tiny_model, synthetic_root, tmp_path, monkeypatch):
    _evaluate(tiny_model, synthetic_root, tmp_path / "clean", tmp_path / "cache-clean", text_batch_size=16)
    work = helpers.reference_text_work(synthetic_root[0])
    assert len(work) == 214                                            # 16-text batches, 8 per shard: 128 + 86
    real_texts, real_crops = encoders.encode_token_ids, encoders.encode_crop_groups
    calls = {"n": 0}

    def crash_on_second_shard(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt("simulated crash")
        return real_texts(*args, **kwargs)

    monkeypatch.setattr(engine, "encode_token_ids", crash_on_second_shard)
    with pytest.raises(KeyboardInterrupt):
        _evaluate(tiny_model, synthetic_root, tmp_path / "resumed", tmp_path / "cache", text_batch_size=16)
    assert not (tmp_path / "resumed").exists()                        # nothing half-written
    shards = list((tmp_path / "cache").rglob("texts-b16/shard-*.npz"))
    assert len(shards) == 1                                            # the first shard survived
    with np.load(shards[0]) as z:
        assert len(z["keys"]) == 128
    texts_seen, crops_seen = [], []

    def counting_texts(loaded, ids, *args, **kwargs):
        texts_seen.append(list(ids))
        return real_texts(loaded, ids, *args, **kwargs)

    def counting_crops(loaded, groups, *args, **kwargs):
        crops_seen.extend(item for group in groups for item in group)
        return real_crops(loaded, groups, *args, **kwargs)

    monkeypatch.setattr(engine, "encode_token_ids", counting_texts)
    monkeypatch.setattr(engine, "encode_crop_groups", counting_crops)
    _evaluate(tiny_model, synthetic_root, tmp_path / "resumed", tmp_path / "cache", text_batch_size=16)
    assert texts_seen == [work[128:]]                                  # exactly the second text shard, once
    assert crops_seen == []                                            # every crop came from the cache
    assert _files(tmp_path / "clean") == _files(tmp_path / "resumed")


def test_results_folder_round_trip(tiny_model, synthetic_root, tmp_path):
    summary = _evaluate(tiny_model, synthetic_root, tmp_path / "r", False)
    loaded = results.load_results(tmp_path / "r")
    assert len(loaded) == len(summary) and set(loaded["kind"]) == {"fixture"}
    per_query = results.load_per_query(loaded["result_dir"][0])
    assert len(per_query) == int(summary["n_queries"].sum())
    with gzip.open(next((tmp_path / "r").rglob("per_query.csv.gz")), "rt") as fh:
        assert fh.readline().startswith("query_id,")
    # R@1 recomputed from the per-query ranks
    recomputed = per_query.groupby(["hn_type", "complexity"])["rank"].apply(lambda r: 100 * (r <= 1).mean())
    for row in summary.itertuples():
        assert recomputed[(row.hn_type, row.complexity)] == pytest.approx(row.r1)


def test_precision_options_run_on_cpu(loaded_tiny, synthetic_root):
    data_dir, image_dir = synthetic_root
    qs = D.load_productivity(data_dir, ["atom"], [4]).queries
    fp32 = helpers.per_query_table(engine.run(loaded_tiny, qs, ImageIndex(image_dir), RunOptions(precision="fp32")))
    bf16 = helpers.per_query_table(engine.run(loaded_tiny, qs, ImageIndex(image_dir), RunOptions(precision="bf16")))
    assert len(fp32) == len(bf16)
    assert not np.allclose(fp32["score_positive"], bf16["score_positive"], atol=0, rtol=0)  # bf16 really ran
    with pytest.raises(ValueError, match="precision"):
        engine.run(loaded_tiny, qs, ImageIndex(image_dir), RunOptions(precision="fp8"))


def test_evaluate_command_line(tiny_model, synthetic_root, tmp_path, capsys):
    from crepe_utils import cli
    cfg, ckpt = tiny_model
    data_dir, image_dir = synthetic_root
    args = ["evaluate", "--benchmark", "productivity", "--model", cfg.stem, "--pretrained", str(ckpt),
            "--model-config", str(cfg), "--data-dir", str(data_dir), "--image-dir", str(image_dir),
            "--out", str(tmp_path / "out"), "--complexities", "4", "5", "--hn-types", "atom", "swap",
            "--kind", "fixture", "--no-cache", "--device", "cpu"]
    assert cli.main(args) == 0
    summary = results.load_results(tmp_path / "out")
    assert set(summary["hn_type"]) == {"atom", "swap"} and set(summary["kind"]) == {"fixture"}
    assert "r1_ci_low" in capsys.readouterr().out
    bad = args.copy()
    bad[bad.index("--data-dir") + 1] = str(tmp_path / "nowhere")
    assert cli.main(bad) == 1
    assert "does not exist" in capsys.readouterr().err


def test_evaluate_paper_reports_models_whose_weights_are_missing(capsys, tmp_path, monkeypatch):
    from crepe_utils import cli
    monkeypatch.setenv("CREPE_MODELS", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert cli.main(["evaluate-paper", "--models", "cyclip-rn50", "albef-14m", "--benchmarks", "productivity"]) == 1
    err = capsys.readouterr().err
    assert f"cyclip-rn50: CyCLIP RN50 weights not found at {tmp_path}" in err and "drive.google.com" in err
    assert f"albef-14m: ALBEF weights not found at {tmp_path}" in err
    assert "failed: cyclip-rn50, albef-14m" in err and "Traceback" not in err


def test_flat_scoring_equals_a_loop_over_queries(tmp_path):
    """The vectorised scoring (layout index arrays, the plan's rows, a keep mask) against a plain loop
    over queries and candidates with dicts; token-identical texts, over-long texts, several regions per
    image, a missing image and dropped queries included. Catches an off-by-one in the crop rows, a
    mask applied to queries but not their candidates, or truncation counted per text not per candidate."""
    from types import SimpleNamespace
    from crepe_utils.engine.layout import query_layout
    from crepe_utils.engine.tokenizing import Tokens, text_plan, token_key

    rng = np.random.default_rng(7)
    for i in range(6):
        (tmp_path / f"{i}.jpg").write_bytes(b"x" * (i + 1))
    index = ImageIndex(tmp_path)
    words = [f"w{j}" for j in range(12)]
    queries = [SimpleNamespace(query_id=f"q{n}", image_id=str(rng.integers(0, 7)),   # image 6 has no file
                               box=(float(rng.integers(0, 3)), 0.0, 5.0, 5.0),
                               candidates=tuple(rng.choice(words, size=int(rng.integers(1, 5)), replace=False)))
               for n in range(60)]
    layout = query_layout(queries, index, skip_missing_images=True)
    assert [q for q, _ in layout.missing] == [q for q in queries if q.image_id == "6"] and layout.missing
    # token ids: w0/w1 and w2/w3 are token-identical; w4 and w5 are over-long
    ids = {w: (1, 100 + int(w[1:]) // 2 if int(w[1:]) < 4 else 100 + int(w[1:]), 2) for w in words}
    over = {"w4", "w5"}
    plan = text_plan(layout.texts, Tokens([ids[t] for t in layout.texts], np.array([t in over for t in layout.texts]), 77))
    text_emb = {k: rng.standard_normal(4).astype(np.float32) for k in plan.work}
    crop_emb = {k: rng.standard_normal(4).astype(np.float32) for k in layout.crop_keys}
    key_of_crop = dict(zip(layout.crops, layout.crop_keys))
    keep = rng.random(len(layout.kept)) < 0.7

    def stacked(table):
        return lambda keys: np.stack([table[k] for k in keys])
    scores, offsets, truncated = engine._scores(layout, keep, plan, stacked(text_emb), stacked(crop_emb), np.float32)
    kept = [q for q, k in zip(layout.kept, keep) if k]
    assert len(offsets) == len(kept) + 1
    for i, q in enumerate(kept):
        expected = [float(np.dot(text_emb[token_key(ids[c])], crop_emb[key_of_crop[(q.image_id, q.box)]]))
                    for c in q.candidates]
        np.testing.assert_allclose(scores[offsets[i]:offsets[i + 1]], expected, rtol=1e-6)
        assert truncated[i] == sum(c in over for c in q.candidates)
    all_scores, all_offsets, _ = engine._scores(layout, None, plan, stacked(text_emb), stacked(crop_emb))
    assert len(all_offsets) == len(layout.kept) + 1 and len(all_scores) == int(all_offsets[-1])
