"""The validation report on the real productivity files and on a synthetic root with broken images."""
from __future__ import annotations

import shutil

import pytest

from crepe_utils import cli
from crepe_utils.benchmarks.crepe import validation


@pytest.fixture(scope="module")
def shared_report():
    import helpers
    if not helpers.SHARED_CREPE.is_dir():
        pytest.skip("../shared/data/crepe is not present")
    return validation.validate(helpers.SHARED_CREPE, token_lengths=True)


@pytest.mark.slow
@pytest.mark.shared
def test_report_on_the_real_productivity_files(shared_report):
    r = shared_report
    assert r.ok, r.errors
    t = r.totals()
    assert t["rows"] == 39_715 and t["set_literal_rows"] == 3_768 and t["positive_among_negatives"] == 34
    assert len(r.files) == 27 and set(r.files["negatives_min"]) == {5} == set(r.files["negatives_max"])
    assert r.stats["n_hard_negatives"] == 198_575 and r.stats["n_ground_truths"] == 17_262
    assert r.stats["repeated_ground_truths"] == 18
    assert r.token_lengths["n_tokens"].max() == 62                     # none over 77
    # ties a string comparison misses: sentence-cased "negations" that tokenize like the positive
    assert r.stats["token_identical_ties"] == 256
    assert any("negate: 222" in n for n in r.notes)
    counts = validation.query_counts([q for q in __import__("crepe_utils.benchmarks.crepe.queries", fromlist=["x"]).load_productivity(
        r.data_dir, ["swap"], [4]).queries])
    assert counts == {("swap", 4): 27}


def test_report_finds_missing_unreadable_and_outside(synthetic_root, tmp_path):
    data_dir, image_dir = synthetic_root
    images = tmp_path / "images"
    shutil.copytree(image_dir, images)
    clean = validation.validate(data_dir, images, token_lengths=False)
    assert clean.ok and clean.missing_images == [] and clean.unreadable_images == []
    assert clean.boxes_outside == 0
    victims = sorted(p for p in images.rglob("*.jpg"))[:2]
    victims[0].unlink()
    victims[1].write_bytes(b"garbage")
    report = validation.validate(data_dir, images, token_lengths=False)
    assert not report.ok
    assert report.missing_images == [victims[0].stem]
    assert report.unreadable_images == [victims[1].stem]
    text = report.to_text()
    assert "1 missing" in text and "ERROR" in text


def test_validate_command_exit_status(synthetic_root, tmp_path, capsys):
    data_dir, image_dir = synthetic_root
    assert cli.main(["validate", "--data-dir", str(data_dir), "--image-dir", str(image_dir), "--no-tokens"]) == 0
    assert cli.main(["validate", "--data-dir", str(tmp_path / "empty"), "--no-tokens"]) == 1
    bad = tmp_path / "bad"
    shutil.copytree(data_dir, bad)
    target = next(bad.rglob("prod_vg_hard_negs_atom_complexity_4.csv"))
    target.write_text(target.read_text().replace("['", "['unclosed", 1).replace("']", "'", 1))
    assert cli.main(["validate", "--data-dir", str(bad), "--no-tokens"]) == 1
    assert "prod_vg_hard_negs_atom_complexity_4.csv:2" in capsys.readouterr().out


def test_distinct_token_ids_equal_open_clips_encode_text_by_text():
    """The batch path gives each distinct text the ids open_clip's own SimpleTokenizer.encode gives it, for plain
    captions and for those the fast path hands back to the tokenizer (non-ASCII, an HTML entity, odd spacing)."""
    from open_clip.tokenizer import SimpleTokenizer
    texts = ["A dog on a mat.", "a dog on a mat", "Café au lait", "salt &amp; pepper", "  two   spaces\there ",
             "A dog on a mat.", "ünïcödé ☃ snow", ""]
    got = validation.distinct_token_ids(texts)
    reference = SimpleTokenizer()
    assert list(got) == list(dict.fromkeys(texts))
    assert got == {t: tuple(reference.encode(t)) for t in got}
