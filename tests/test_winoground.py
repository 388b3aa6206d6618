"""Winoground: layouts and bad input, scoring against a naive computation, ties, intervals,
results round trip, the command line, and the data checks on the shared text metadata.

Images are synthetic noise and the model is a tiny random open_clip: the numbers test the code,
not the benchmark (results written here are labelled ``kind="fixture"``).
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from crepe_utils.claims.base import FAIL, NEEDS, PAPER, PASS
from crepe_utils.benchmarks.crepe.queries import DataError
from crepe_utils.benchmarks.winoground import claims as wc
from crepe_utils.benchmarks.winoground import data as wd
from crepe_utils.benchmarks.winoground import metadata as wm
from crepe_utils.benchmarks.winoground import results as wr
from crepe_utils.benchmarks.winoground import scoring, statistics
from crepe_utils.evaluation import evaluate
from crepe_utils.results import store

T_975_3 = 3.182446305284263   # Student t quantile, 0.975, 3 degrees of freedom

from helpers import (JPEG_AS_PNG, RECORDS, RGBA_IMAGE, SAME_CAPTIONS, SAME_IMAGES,  # noqa: E402
                     winoground_image_blobs as _image_blobs, winoground_jsonl_lines as _jsonl_lines,
                     make_winoground)


@pytest.fixture(scope="module")
def blobs(tmp_path_factory):
    return _image_blobs(tmp_path_factory.mktemp("wg-src"))


@pytest.fixture(scope="module")
def folder_copy(tmp_path_factory, blobs):
    return make_winoground(tmp_path_factory.mktemp("wg") / "folder", "folder", blobs)


@pytest.fixture(scope="module")
def folder_evaluation(loaded_tiny, folder_copy, tmp_path_factory):
    """The tiny model on the folder copy, through the one evaluation path: summary, per-example log, manifest."""
    out = tmp_path_factory.mktemp("wg-results")
    summary = evaluate(loaded_tiny, "winoground", data_dir=folder_copy, out=out, kind="fixture", n_boot=200,
                       cache_dir=False, progress=False)
    folder = store.result_dir(out, loaded_tiny.spec.key, "winoground")
    return SimpleNamespace(summary=summary, per_example=wr.load_per_example(folder), manifest=wr.load_manifest(folder),
                           folder=folder, out=out)


# ------------------------------------------------------------------------------ layouts

@pytest.mark.parametrize("layout", ["folder", "zip", "parquet"])
def test_every_layout_loads_the_same_examples_and_images(tmp_path, blobs, layout):
    data = wd.load_dataset(make_winoground(tmp_path / layout, layout, blobs))
    assert data.layout == layout
    assert [ex.id for ex in data.examples] == list(range(len(RECORDS)))
    by_id = {r["id"]: r for r in RECORDS}
    for ex in data.examples:
        assert {f: getattr(ex, f) for f in wd.TEXT_FIELDS} == by_id[ex.id]
    for index, ex in enumerate(data.examples):
        for k in (0, 1):
            assert data.image_bytes(index, k) == blobs[ex.id, k], (layout, ex.id, k)
            img = data.image(index, k)
            assert img.mode == "RGB" and img.size == (48, 40)
    frame = data.frame()
    assert "ex_0_img_1.png" in frame["image_1"].iloc[0]


def test_rgba_png_and_jpeg_named_png_decode_by_content(tmp_path, blobs):
    assert blobs[JPEG_AS_PNG][:3] == b"\xff\xd8\xff"               # JPEG data under a .png name
    with Image.open(io.BytesIO(blobs[RGBA_IMAGE])) as original:
        assert original.mode == "RGBA"
        expected_rgb = np.asarray(original.convert("RGBA"))[..., :3]
    data = wd.load_dataset(make_winoground(tmp_path / "zip", "zip", blobs))
    index = {ex.id: i for i, ex in enumerate(data.examples)}
    rgba = data.image(index[RGBA_IMAGE[0]], RGBA_IMAGE[1])
    assert rgba.mode == "RGB" and np.array_equal(np.asarray(rgba), expected_rgb)   # alpha dropped, colour kept
    jpeg = data.image(index[JPEG_AS_PNG[0]], JPEG_AS_PNG[1])
    assert jpeg.mode == "RGB" and jpeg.size == (48, 40)


def test_layout_errors_say_what_was_found_and_what_is_expected(tmp_path, blobs):
    with pytest.raises(DataError, match="does not exist"):
        wd.load_dataset(tmp_path / "absent")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "examples_text.tsv").write_text("id\n")
    with pytest.raises(DataError, match=r"no Winoground data.*examples\.jsonl \+ images/.*text-only"):
        wd.load_dataset(empty)

    only_jsonl = make_winoground(tmp_path / "jsonl-only", "zip", blobs)
    (only_jsonl / "images.zip").unlink()
    with pytest.raises(DataError, match=r"incomplete.*holds examples\.jsonl.*images\.zip"):
        wd.load_dataset(only_jsonl)

    only_images = make_winoground(tmp_path / "images-only", "folder", blobs)
    (only_images / "examples.jsonl").unlink()
    with pytest.raises(DataError, match=r"incomplete.*images/.*missing examples\.jsonl"):
        wd.load_dataset(only_images)

    mixed = make_winoground(tmp_path / "mixed", "folder", blobs)
    shutil.copy(make_winoground(tmp_path / "z", "zip", blobs) / "images.zip", mixed / "images.zip")
    with pytest.raises(DataError, match=r"mixed Winoground layouts.*--layout.*folder, zip"):
        wd.load_dataset(mixed)
    assert wd.load_dataset(mixed, layout="zip").layout == "zip"
    # what `download winoground` leaves: images.zip plus its marked extraction in images/
    (mixed / "images" / ".crepe_extracted.json").write_text(json.dumps({"archive": "images.zip"}))
    assert wd.detect_layout(mixed) == ("zip", [mixed / "examples.jsonl", mixed / "images.zip"])
    with pytest.raises(DataError, match="not a complete 'parquet' layout"):
        wd.load_dataset(mixed, layout="parquet")

    parquet_and_jsonl = make_winoground(tmp_path / "pj", "parquet", blobs)
    (parquet_and_jsonl / "data" / "examples.jsonl").write_text(_jsonl_lines()[0] + "\n")
    with pytest.raises(DataError, match="mixed Winoground layouts"):
        wd.load_dataset(parquet_and_jsonl)

    two_copies = make_winoground(tmp_path / "two", "parquet", blobs)
    make_winoground(two_copies, "zip", blobs)         # jsonl + zip at the top, parquet in data/
    with pytest.raises(DataError, match="in both"):
        wd.load_dataset(two_copies)


def test_missing_image_names_the_image_and_the_row(tmp_path, blobs):
    nested = make_winoground(tmp_path / "nested", "folder", blobs)     # unzip -d images: images/images/*.png
    shutil.move(nested / "images", tmp_path / "inner")
    (nested / "images").mkdir()
    shutil.move(tmp_path / "inner", nested / "images" / "images")
    assert wd.load_dataset(nested).layout == "folder"
    root = make_winoground(tmp_path / "folder", "folder", blobs)
    (root / "images" / "ex_7_img_1.png").unlink()
    with pytest.raises(DataError, match=r"1 image\(s\) missing.*ex_7_img_1 \(example 7, examples\.jsonl:3\)"):
        wd.load_dataset(root)


def test_malformed_jsonl_rows_are_listed_by_line(tmp_path, blobs):
    root = make_winoground(tmp_path / "folder", "folder", blobs)
    lines = _jsonl_lines()
    lines[2] = lines[2][:-5]                                   # broken JSON
    rec = json.loads(lines[4])
    del rec["collapsed_tag"]
    rec["num_main_preds"] = "two"
    lines[4] = json.dumps(rec)
    (root / "examples.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError) as info:
        wd.load_dataset(root)
    message = str(info.value)
    assert "2 malformed row(s)" in message
    assert "examples.jsonl:3: not valid JSON" in message
    assert "examples.jsonl:5: missing field(s) ['collapsed_tag']" in message


def test_duplicate_ids_and_undecodable_images_are_errors(tmp_path, blobs, loaded_tiny):
    root = make_winoground(tmp_path / "dupe", "folder", blobs)
    lines = _jsonl_lines()
    (root / "examples.jsonl").write_text("\n".join(lines + [lines[0]]) + "\n")
    with pytest.raises(DataError, match=r"duplicate example ids: id 3 at examples\.jsonl:1 and examples\.jsonl:9"):
        wd.load_dataset(root)

    bad_zip = make_winoground(tmp_path / "bad-zip", "zip", blobs)
    (bad_zip / "images.zip").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(DataError, match=r"images\.zip: not a readable zip archive"):
        wd.load_dataset(bad_zip)

    broken = make_winoground(tmp_path / "broken", "zip", {**blobs, (1, 0): b"not an image at all"})
    common = dict(data_dir=broken, out=tmp_path / "out", kind="fixture", n_boot=10, cache_dir=False, progress=False)
    with pytest.raises(DataError, match=r"1 image\(s\) could not be read:\n  images\.zip:images/ex_1_img_0\.png: "
                                        r"UnidentifiedImageError"):
        evaluate(loaded_tiny, "winoground", **common)
    assert not (tmp_path / "out").exists()
    # skipped on request: that example has no four scores and is left out, counted
    summary = evaluate(loaded_tiny, "winoground", skip_missing_images=True, **common)
    manifest = wr.load_manifest(store.result_dir(tmp_path / "out", loaded_tiny.spec.key, "winoground"))
    assert summary.query("breakdown == 'all'")["n_examples"].tolist() == [len(RECORDS) - 1] * 3
    assert manifest["n_examples_skipped"] == 1 and manifest["data"]["skipped_by_engine"] == {"unreadable image": 1}


def test_parquet_without_image_bytes_is_an_error(tmp_path, blobs):
    import pyarrow.parquet as pq
    root = make_winoground(tmp_path / "pq", "parquet", blobs)
    path = root / "data" / "test-00000-of-00001.parquet"
    table = pq.read_table(path).drop_columns(["image_1"])
    pq.write_table(table, path)
    with pytest.raises(DataError, match=r"missing column\(s\) \['image_1'\]"):
        wd.load_dataset(root)


# ------------------------------------------------------------------------------ scoring

def test_flags_follow_the_strict_inequalities_and_the_first_index_rule():
    # rows: s[c, i]; each case chosen to separate the rules
    cases = np.array([
        [[0.9, 0.1], [0.2, 0.8]],    # all correct
        [[0.5, 0.1], [0.5, 0.8]],    # c0_i0 == c1_i0: text tie, index 0 wins under first-index
        [[0.5, 0.8], [0.2, 0.8]],    # c1_i1 == c0_i1: text tie that first-index also fails
        [[0.5, 0.5], [0.2, 0.8]],    # c0_i0 == c0_i1: image tie, index 0 wins under first-index
        [[0.1, 0.9], [0.8, 0.2]],    # all wrong
    ])
    strict, first, tied = scoring.flags(cases), scoring.flags(cases, "first_index"), scoring.ties(cases)
    assert strict["text"].tolist() == [True, False, False, True, False]
    assert strict["image"].tolist() == [True, True, False, False, False]
    assert strict["group"].tolist() == [True, False, False, False, False]
    assert first["text"].tolist() == [True, True, False, True, False]
    assert first["image"].tolist() == [True, True, False, True, False]
    assert first["group"].tolist() == [True, True, False, True, False]
    assert tied["text"].tolist() == [False, True, True, False, False]
    assert tied["image"].tolist() == [False, False, False, True, False]
    assert tied["group"].tolist() == [False, True, True, True, False]
    with pytest.raises(ValueError, match="NaN"):
        scoring.flags(np.full((1, 2, 2), np.nan))


def test_chance_levels_are_25_25_and_one_sixth():
    chance = scoring.chance_levels()
    assert chance["text"] == 25.0 and chance["image"] == 25.0
    assert math.isclose(chance["group"], 100 / 6, rel_tol=1e-12)


def test_batched_scores_match_a_naive_per_example_computation(loaded_tiny, folder_copy, folder_evaluation):
    import torch
    import torch.nn.functional as F

    model, tokenizer, preprocess = loaded_tiny.model, loaded_tiny.tokenizer, loaded_tiny.preprocess
    naive = []
    with torch.no_grad():
        for rec in RECORDS:
            text = F.normalize(model.encode_text(tokenizer([rec["caption_0"], rec["caption_1"]])), dim=-1)
            pixels = []
            for k in (0, 1):
                with Image.open(folder_copy / "images" / f"ex_{rec['id']}_img_{k}.png") as img:
                    pixels.append(preprocess(img.convert("RGB")))
            image = F.normalize(model.encode_image(torch.stack(pixels)), dim=-1)
            s = (text @ image.T).tolist()          # s[c][i]
            naive.append({
                "id": rec["id"], "c0_i0": s[0][0], "c0_i1": s[0][1], "c1_i0": s[1][0], "c1_i1": s[1][1],
                "text": s[0][0] > s[1][0] and s[1][1] > s[0][1],
                "image": s[0][0] > s[0][1] and s[1][1] > s[1][0],
            })
    naive = pd.DataFrame(naive).set_index("id")
    ours = folder_evaluation.per_example.set_index("id")
    for col in scoring.SCORE_COLUMNS:
        np.testing.assert_allclose(ours[col], naive[col], atol=1e-5)
    assert ours["text"].tolist() == naive["text"].tolist()
    assert ours["image"].tolist() == naive["image"].tolist()
    assert ours["group"].tolist() == (naive["text"] & naive["image"]).tolist()


def test_identical_captions_or_images_tie_exactly_and_fail(folder_evaluation):
    pe = folder_evaluation.per_example.set_index("id")
    same_caps, same_imgs = pe.loc[SAME_CAPTIONS], pe.loc[SAME_IMAGES]
    assert same_caps["c0_i0"] == same_caps["c1_i0"] and same_caps["c0_i1"] == same_caps["c1_i1"]
    assert same_caps["text_tie"] and not same_caps["text"] and not same_caps["group"]
    assert same_imgs["c0_i0"] == same_imgs["c0_i1"] and same_imgs["c1_i0"] == same_imgs["c1_i1"]
    assert same_imgs["image_tie"] and not same_imgs["image"] and not same_imgs["group"]
    others = pe.drop(index=[SAME_CAPTIONS, SAME_IMAGES])
    assert not others[["text_tie", "image_tie"]].to_numpy().any()
    overall = folder_evaluation.summary.query("breakdown == 'all'").set_index("metric")
    assert overall.loc["text", "n_ties"] == 1 and overall.loc["image", "n_ties"] == 1
    assert overall.loc["group", "n_ties"] == 2
    engine = folder_evaluation.manifest["engine"]
    assert (engine["n_queries"], engine["n_distinct_crops"]) == (16, 15)      # one query per image
    assert engine["n_distinct_texts"] == 15


# ------------------------------------------------------------------------------ statistics

def test_t_interval_matches_a_hand_computation():
    correct = np.array([1, 0, 1, 1, 0, 0, 1, 0], dtype=bool)
    groups = statistics.group_labels(np.arange(8))              # contiguous: 0 0 1 1 2 2 3 3
    assert groups.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    # group scores 50, 100, 0, 50: mean 50, sample sd sqrt((0 + 2500 + 2500 + 0) / 3)
    half = T_975_3 * math.sqrt(5000 / 3) / 2
    low, high = statistics.t_interval(correct, groups)
    assert math.isclose(low, 50 - half, rel_tol=1e-9) and math.isclose(high, 50 + half, rel_tol=1e-9)
    interleaved = statistics.group_labels(np.array([7, 6, 5, 4, 3, 2, 1, 0]), "interleaved")
    assert interleaved.tolist() == [3, 2, 1, 0, 3, 2, 1, 0]      # id mod 4, whatever the row order
    assert statistics.group_labels(np.arange(400)).tolist() == [i // 100 for i in range(400)]
    assert all(math.isnan(v) for v in statistics.t_interval(correct[:3], np.arange(3)))


def test_summary_breakdowns_count_comma_split_and_exact_tags(folder_evaluation):
    pe = folder_evaluation.per_example.assign(why_hard=["no-tag", "unusual-text"] * 4)
    summary = statistics.summary_table(pe, n_boot=200)
    text = summary[summary["metric"] == "text"].set_index(["breakdown", "subset"])["n_examples"]
    assert text["all", "all"] == 8
    assert text["secondary_tag", "Symbolic"] == 2 and text["secondary_tag", "Series"] == 2
    assert text["secondary_tag_exact", "Symbolic"] == 1 and text["secondary_tag_exact", "Symbolic, Series"] == 1
    assert text["secondary_tag", "(none)"] == 3 and text["secondary_tag_exact", "(none)"] == 3
    assert text["collapsed_tag", "Object"] == 4 and text["num_main_preds", "2"] == 2
    assert text["why_hard", "no-tag"] == 4
    row = summary.query("breakdown == 'all' and metric == 'image'").iloc[0]
    assert row["score"] == 100 * pe["image"].mean() and row["chance"] == 25.0
    assert row["boot_ci_low"] <= row["score"] <= row["boot_ci_high"]
    expected = statistics.t_interval(pe["image"].to_numpy(), statistics.group_labels(pe["id"]))
    assert (row["t_ci_low"], row["t_ci_high"]) == pytest.approx(expected)


# ------------------------------------------------------------------------------ results and CLI

def test_results_round_trip_and_kind_is_required(tmp_path, folder_evaluation, loaded_tiny, folder_copy):
    folder = folder_evaluation.folder
    assert sorted(p.name for p in folder.iterdir()) == [store.MANIFEST, store.PER_QUERY, store.SUMMARY]
    loaded = wr.load_results(folder_evaluation.out)
    assert set(loaded["kind"]) == {"fixture"} and set(loaded["model"]) == {loaded_tiny.spec.key}
    pd.testing.assert_frame_equal(loaded[statistics.SUMMARY_COLUMNS], folder_evaluation.summary, check_dtype=False)
    assert store.load_results(folder_evaluation.out).empty      # not a retrieval result
    with pytest.raises(ValueError, match="kind"):
        evaluate(loaded_tiny, "winoground", data_dir=folder_copy, out=tmp_path / "bad", kind="real")
    assert not (tmp_path / "bad").exists()
    assert wr.load_results(tmp_path / "nothing").empty


def test_command_line_writes_a_fixture_result(tmp_path, tiny_model, blobs, capsys):
    from crepe_utils.cli import main
    cfg, ckpt = tiny_model
    data_dir = make_winoground(tmp_path / "wg", "zip", blobs)
    rc = main(["winoground", "--model", cfg.stem, "--pretrained", str(ckpt), "--model-config", str(cfg),
               "--data-dir", str(data_dir), "--out", str(tmp_path / "out"), "--device", "cpu",
               "--kind", "fixture", "--n-boot", "100", "--why-hard", "none"])
    assert rc == 0, capsys.readouterr().err
    [folder] = [p.parent for p in (tmp_path / "out").rglob(store.MANIFEST)]
    manifest = wr.load_manifest(folder)
    assert manifest["kind"] == "fixture" and manifest["data"]["layout"] == "zip"
    sha = hashlib.sha256((data_dir / "examples.jsonl").read_bytes()).hexdigest()
    assert manifest["data"]["files_sha256"]["examples.jsonl"] == sha
    assert manifest["ties"] == {"text": 1, "image": 1, "group": 2}
    assert manifest["model"]["checkpoint_sha256"] == hashlib.sha256(ckpt.read_bytes()).hexdigest()
    assert "results:" in capsys.readouterr().out
    # a data error is a clean exit status 1 with the message, not a traceback
    rc = main(["winoground", "--model", cfg.stem, "--pretrained", str(ckpt), "--model-config", str(cfg),
               "--data-dir", str(tmp_path / "absent"), "--out", str(tmp_path / "out2"), "--device", "cpu"])
    assert rc == 1 and "does not exist" in capsys.readouterr().err


def test_importing_the_package_does_not_import_torch():
    code = "import sys, crepe_utils.benchmarks.winoground; print('torch' in sys.modules, 'open_clip' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent)
    assert out.stdout.strip() == "False False"


# ------------------------------------------------------------------------------ checks

def _summary_rows(scores: dict, n: int = 400, kind: str = "evaluated") -> pd.DataFrame:
    return pd.DataFrame([{"breakdown": "all", "subset": "all", "metric": m, "n_examples": n, "score": s,
                          "score_first_index": s, "n_ties": 0, "kind": kind, "model": "openai-vit-b-32",
                          "architecture": "ViT-B-32-quickgelu",
                          "pretrained": "openai", "precision": "fp32", "result_dir": "r"} for m, s in scores.items()])


def test_table3_check_needs_evaluated_full_results():
    assert [c.status for c in wc.check_table3(None)] == [NEEDS]
    exact = {"text": 30.75, "image": 10.50, "group": 8.00}
    assert [c.status for c in wc.check_table3(_summary_rows(exact, kind="fixture"))] == [NEEDS]
    assert [c.status for c in wc.check_table3(_summary_rows(exact))] == [PASS] * 3
    off = wc.check_table3(_summary_rows({"text": 30.75, "image": 12.00, "group": 8.25}))
    assert [c.status for c in off] == [PASS, FAIL, PASS]
    assert [c.status for c in wc.check_table3(_summary_rows(exact, n=8))] == [NEEDS]


def test_data_checks_flag_wrong_counts_and_broken_pairs():
    frame = pd.DataFrame(RECORDS)
    by_claim = {c.claim: c for c in wc.data_checks(frame)}
    # 8 examples are not the pinned release of 400: our count differs from the pin, which is a failure
    assert by_claim["Winoground has 400 examples"].status == FAIL
    assert "differ from the pinned copy" in by_claim["Winoground has 400 examples"].detail
    assert by_claim["Examples tagged Object (Table 1)"].ours == "4"
    assert by_claim["Examples tagged Object (Table 1)"].status == FAIL
    pairs = wc.caption_pair_exceptions(frame).set_index("id")
    assert pairs.loc[4, "same_letters"] and pairs.loc[4, "tagged_morpheme"]            # fish flying / fly fishing
    assert pairs.loc[SAME_CAPTIONS, "same_order"]
    # the pinned release has no such pair, so the finding is not the paper's
    assert by_claim[f"Example {SAME_CAPTIONS}: same words in a different order"].status == FAIL
    assert "Example 4: same words in a different order" not in by_claim          # a morpheme swap: summarised
    summary = by_claim["The two captions use the same words or morphemes in a different order (§3.1)"]
    assert "4: 'fish flying' / 'fishing fly'" in summary.detail or "4: " in summary.detail
    assert set(pairs.index) == {4, SAME_CAPTIONS}
    assert [c.status for c in wc.check_chance_levels()] == [PASS] * 3


def test_why_hard_labels_must_belong_to_the_same_examples(tmp_path):
    frame = pd.DataFrame(RECORDS)
    labels = frame[["id", "caption_0", "caption_1"]].assign(why_hard="no-tag")
    joined = wm.join_why_hard(frame, labels)
    assert (joined["why_hard"] == "no-tag").all()
    with pytest.raises(DataError, match=r"captions differ.*id\(s\) \[3\]"):
        wm.join_why_hard(frame, labels.assign(caption_0=labels["caption_0"].where(labels["id"] != 3, "other")))
    with pytest.raises(DataError, match=r"no row for example id\(s\) \[7\]"):
        wm.join_why_hard(frame, labels[labels["id"] != 7])


# ------------------------------------------------------------------------------ the shared metadata

@pytest.mark.shared
def test_data_checks_on_the_shared_metadata(shared_winoground):
    meta = wm.load_text_metadata(shared_winoground)
    assert len(meta) == 400 and meta["why_hard"].notna().all()
    assert (meta["why_hard"] == "no-tag").sum() == 200
    rows = wc.data_checks(meta)
    status = {c.claim: c.status for c in rows}
    assert status["Winoground has 400 examples"] == PASS
    for tag in ("Object", "Relation", "Both"):
        assert status[f"Examples tagged {tag} (Table 1)"] == PASS
    for tag in ("Symbolic", "Series", "Pragmatics"):
        assert status[f"Examples with secondary tag {tag} (Table 1)"] == PASS
    table5 = [c for c in rows if c.claim.startswith("Table 5")]
    assert [c.status for c in table5] == [PAPER] * 3
    assert [c.ours for c in table5] == ["denominator 28", "denominator 23", "denominator 17"]
    counts = wc.secondary_tag_counts(meta).set_index("tag")
    assert counts.loc["Symbolic"].tolist() == [41, 28] and counts.loc["Pragmatics"].tolist() == [24, 17]
    exceptions = wc.caption_pair_exceptions(meta)
    assert len(exceptions) == 22 and exceptions["same_letters"].all() and not exceptions["same_order"].any()
    assert {224, 237, 326, 399} <= set(exceptions["id"])
    assert sorted(exceptions.loc[~exceptions["tagged_morpheme"], "id"]) == [94, 95, 370]
    assert status["The two captions use the same words or morphemes in a different order (§3.1)"] == PASS
    assert not any(c.status == FAIL for c in rows)
