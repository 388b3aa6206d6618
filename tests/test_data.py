"""CREPE loaders: the real productivity files, and every kind of bad input with its documented treatment."""
from __future__ import annotations

import csv

import pytest
from PIL import Image

import helpers
from crepe_utils.benchmarks.crepe import queries as D
from crepe_utils.imagesets import visual_genome as images
from crepe_utils.engine import images as pixels


# ------------------------------------------------------------------ the real files (../shared)

@pytest.mark.shared
def test_real_productivity_files(shared_crepe):
    qs = D.load_productivity(shared_crepe)
    assert len(qs) == 39_715
    assert {len(q.negatives) for q in qs} == {5}
    counts = helpers.issue_counts(qs)
    assert counts["set literal"] == 3_768
    assert counts["positive among negatives"] == 34
    assert sum(q.set_literal for q in qs) == 3_768
    assert all(q.hn_type == "swap" for q in qs if q.positive_in_negatives)
    assert qs.n_skipped == 0 and counts.get("bad row", 0) == 0
    assert len({q.image_id for q in qs}) == 7_379
    assert len({(q.image_id, q.box) for q in qs}) == 13_798
    first = D.load_productivity(shared_crepe, ["atom"], [4]).queries[0]
    assert (first.image_id, first.box) == ("13", (237.0, 391.0, 402.0, 208.0))
    assert first.source == "prod_vg_hard_negs_atom_complexity_4.csv:2"


@pytest.mark.shared
def test_all_negatives_sets_on_real_files(shared_crepe):
    qs = D.load_productivity(shared_crepe)
    combined = D.all_negatives_sets(qs)
    assert len(combined) > 6_000                       # nearly every HN-Swap query has atom and negate twins
    assert {len(q.candidates) for q in combined} == {16}
    q = combined.queries[0]
    twins = [x for x in qs if (x.complexity, x.image_id, x.box, x.positive) == (q.complexity, q.image_id, q.box, q.positive)]
    assert {t.hn_type for t in twins} == {"atom", "swap", "negate"}
    expected = tuple(n for t in ("atom", "swap", "negate") for x in twins if x.hn_type == t for n in x.negatives)
    assert q.negatives == expected


# ------------------------------------------------------------------ synthetic bad input

def _prod_row(**kw):
    row = dict(image_id="7", caption="a red dog on a table", x=1.0, y=2.0, width=30.0, height=20.0,
               hard_negs=["a blue dog on a table", "a red cat on a table", "a red dog under a table",
                          "a red dog on a chair", "a red dog on a bed"])
    row.update(kw)
    return row


def _write(tmp_path, rows, hn="atom", n=4):
    return helpers.write_productivity_csv(tmp_path / "prod_hard_negatives" / hn /
                                          f"prod_vg_hard_negs_{hn}_complexity_{n}.csv", rows, n)


def _write_raw(path, header, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def _evaluated(parse, raw):
    """What ``parse(raw)`` gives: its value with its type, or the type of the error it raises."""
    try:
        value = parse(raw)
    except Exception as exc:  # noqa: BLE001 - the kind of error is what is compared
        return "error", type(exc).__name__
    return type(value).__name__, value


@pytest.mark.parametrize("raw", [
    "[]", "['a', 'b']", "['it''s']", """["it's", 'a "b"']""", "['a','b']", "[ 'a', 'b' ]", "['a', 'b',]",
    "['a' 'b']", "['a\\'b']", "['a\\nb']", "['a\nb']", "['a\rb']", "['a\x00b']", "['café ☕', 'ß']",
    "('a', 'b')", "{'b', 'a'}", "['a', 1]", "[['a']]", "['a', \"b]", "['a']  ", " ['a']", "['a'] + ['b']",
    "[\"\"]", "['']", "['\t tab']", "['a', '']", "['a', 'b'], ['c']", "[', ']", "['], [']",
])
def test_plain_lists_parse_as_literal_eval_does(raw):
    """The direct parse of plain list literals against ``ast.literal_eval`` itself, on the forms it takes
    and on near misses it must leave to literal_eval (escapes, implicit concatenation, line breaks,
    other spacing, tuples and sets): same value and type, or the same error."""
    import ast
    assert _evaluated(D._literal, raw) == _evaluated(ast.literal_eval, raw)


@pytest.mark.shared
def test_plain_lists_parse_as_literal_eval_does_on_every_released_row(shared_crepe):
    import ast
    rows = direct = 0
    for path in sorted(shared_crepe.rglob("*.csv")):
        with open(path, newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                raw = row["hard_negs"]
                assert _evaluated(D._literal, raw) == _evaluated(ast.literal_eval, raw), (path.name, raw)
                rows += 1
                direct += bool(D._PLAIN_LIST.fullmatch(raw))
    assert rows == 39_715 and direct > 0.85 * rows          # the set literals (3,768) go through literal_eval


def test_set_literal_order_is_deterministic(tmp_path):
    negs = {"zebra on grass", "apple on table", "man on horse", "cat on mat", "dog on sofa"}
    _write(tmp_path, [_prod_row(hard_negs=negs)])
    q = D.load_productivity(tmp_path, ["atom"], [4]).queries[0]
    assert q.negatives == tuple(sorted(negs)) and q.set_literal
    assert q.candidates[0] == "a red dog on a table"


@pytest.mark.parametrize("field, value, message", [
    ("hard_negs", "['unclosed", "not a Python literal"),
    ("hard_negs", "[1, 2, 3]", "holds a int"),
    ("hard_negs", "__import__('os')", "not a Python literal"),
    ("hard_negs", "'just a string'", "holds a str"),
    ("caption", "", "caption' is empty"),
    ("x", "abc", "'x' is 'abc'"),
    ("width", "0.0", "zero or negative area"),
    ("image_id", "", "image_id' is empty"),
])
def test_malformed_rows_are_errors_naming_file_and_line(tmp_path, field, value, message):
    good = _prod_row()
    bad = _prod_row()
    rows = [[r["image_id"], r["caption"], 4, 2, 1, 1, 1, repr(r["hard_negs"]), r["x"], r["y"], r["width"], r["height"]]
            for r in (good, bad)]
    rows[1][helpers.PROD_HEADER.index(field)] = value
    path = _write_raw(tmp_path / "atom" / "prod_vg_hard_negs_atom_complexity_4.csv", helpers.PROD_HEADER, rows)
    with pytest.raises(D.DataError) as err:
        D.load_productivity(tmp_path, ["atom"], [4])
    assert f"{path.name}:3" in str(err.value) and message in str(err.value)
    assert "skip" in str(err.value)                                  # says how to proceed
    qs = D.load_productivity(tmp_path, ["atom"], [4], on_bad_row="skip")
    assert len(qs) == 1 and qs.n_skipped == 1 and qs.issues[0].line == 3


def test_empty_negatives_in_productivity_are_errors(tmp_path):
    _write(tmp_path, [_prod_row(), _prod_row(hard_negs=[])])
    with pytest.raises(D.DataError, match="no hard negatives"):
        D.load_productivity(tmp_path, ["atom"], [4])


def test_missing_columns_and_files(tmp_path):
    _write_raw(tmp_path / "prod_vg_hard_negs_atom_complexity_4.csv", ["image_id", "caption"], [["1", "a"]])
    with pytest.raises(D.DataError, match=r"missing column\(s\) \['n', "):
        D.load_productivity(tmp_path, ["atom"], [4])
    with pytest.raises(D.DataError, match="prod_vg_hard_negs_atom_complexity_5.csv not found.*make data"):
        D.load_productivity(tmp_path, ["atom"], [5])
    with pytest.raises(D.DataError, match="does not exist"):
        D.load_productivity(tmp_path / "nowhere", ["atom"], [4])


def test_text_values_are_not_type_inferred(tmp_path):
    """pandas would read the caption NA as NaN (and the official code would then score "nan")."""
    _write(tmp_path, [_prod_row(caption="NA"), _prod_row(caption="null")])
    qs = D.load_productivity(tmp_path, ["atom"], [4])
    assert [q.positive for q in qs] == ["NA", "null"]


def test_macosx_copies_ignored_and_duplicates_refused(tmp_path):
    _write(tmp_path, [_prod_row()])
    junk = tmp_path / "__MACOSX" / "prod_hard_negatives" / "atom" / "prod_vg_hard_negs_atom_complexity_4.csv"
    junk.parent.mkdir(parents=True)
    junk.write_bytes(b"\x00\x05\x16\x07 resource fork")
    assert len(D.load_productivity(tmp_path, ["atom"], [4])) == 1
    _write(tmp_path / "copy", [_prod_row()])
    with pytest.raises(D.DataError, match="found 2 times"):
        D.load_productivity(tmp_path, ["atom"], [4])


def test_positive_among_negatives_is_kept_and_flagged(tmp_path):
    _write(tmp_path, [_prod_row(hard_negs=["a red dog on a table", "x", "y", "z", "w"])], hn="swap")
    qs = D.load_productivity(tmp_path, ["swap"], [4])
    assert len(qs) == 1 and qs.queries[0].positive_in_negatives
    assert helpers.issue_counts(qs)["positive among negatives"] == 1


def _syst_rows():
    base = dict(image_id="7", caption="a red brick sidewalk", x="346", y="329", width="452", height="269")
    return [dict(base, atom=["a brown brick sidewalk"], comp=["a red mall and blue sidewalk"]),
            dict(base, atom=[], comp=["a red alley and black sidewalk", "a red alley and yellow sidewalk"])]


def test_systematicity_variable_lists_and_empty_negatives(tmp_path):
    path = helpers.write_systematicity_csv(tmp_path / "syst_vg_hard_negs_seen_compounds_in_laion.csv", _syst_rows())
    helpers.write_systematicity_csv(tmp_path / "syst_vg_hard_negs_unseen_compounds_in_laion.csv", _syst_rows()[:1])
    qs = D.load_systematicity(tmp_path, "laion", ["atom", "comp", "combined"])
    atom_sc = [q for q in qs if q.hn_type == "atom" and q.split == "SC"]
    assert len(atom_sc) == 1                                          # the empty list is skipped ...
    assert helpers.issue_counts(qs)["empty negatives"] == 1                  # ... and counted
    comp = [q for q in qs if q.hn_type == "comp" and q.split == "SC"]
    assert [len(q.negatives) for q in comp] == [1, 2]                 # lengths vary, as released
    kept = D.load_systematicity(tmp_path, "laion", ["atom"], ["SC"], empty_negatives="keep")
    assert len(kept) == 2 and kept.queries[1].negatives == ()         # the official behaviour: always rank 1
    with pytest.raises(D.DataError, match=f"{path.name}\\[atom\\]:3"):
        D.load_systematicity(tmp_path, "laion", ["atom"], ["SC"], empty_negatives="error")
    q = comp[0]
    assert q.box == (346.0, 329.0, 452.0, 269.0) and q.train_data == "laion" and q.complexity is None


def test_systematicity_missing_column(tmp_path):
    rows = _syst_rows()
    path = tmp_path / "syst_vg_hard_negs_seen_compounds_in_cc12m.csv"
    _write_raw(path, ["image_id", "caption", "x", "y", "width", "height", "valid_hard_negs_atom"],
               [[r["image_id"], r["caption"], r["x"], r["y"], r["width"], r["height"], repr(r["atom"])] for r in rows])
    with pytest.raises(D.DataError, match="valid_hard_negs_comp"):
        D.load_systematicity(tmp_path, "cc12m", ["comp"], ["SC"])
    with pytest.raises(ValueError, match="split"):
        D.load_systematicity(tmp_path, "cc12m", ["atom"], ["UA"])


# ------------------------------------------------------------------ images and crops

def test_image_index_prefers_vg_100k_then_vg_100k_2_then_flat(tmp_path):
    helpers.make_image(tmp_path / "VG_100K" / "1.jpg", seed=1)
    helpers.make_image(tmp_path / "VG_100K_2" / "1.jpg", seed=2)
    helpers.make_image(tmp_path / "VG_100K_2" / "2.jpg", seed=3)
    helpers.make_image(tmp_path / "3.jpg", seed=4)
    index = images.ImageIndex(tmp_path)
    assert index.path("1").parent.name == "VG_100K"
    assert index.path("2").parent.name == "VG_100K_2"
    assert index.path("3").parent == tmp_path
    assert index.missing(["1", "4", "4", "5"]) == ["4", "5"]
    with pytest.raises(FileNotFoundError, match=r"image 4 not found in .*looked in VG_100K/, VG_100K_2/"):
        index.path("4")
    with pytest.raises(FileNotFoundError, match="make data-vg"):
        images.ImageIndex(tmp_path / "absent")


def test_crop_matches_the_official_torchvision_call(tmp_path):
    import numpy as np
    import torchvision.transforms.functional as TF
    path = helpers.make_image(tmp_path / "a.png", size=(50, 40), seed=5, fmt="PNG")
    img = Image.open(path).convert("RGB")
    for box in [(3.0, 4.0, 20.0, 10.0), (2.6, 3.4, 20.2, 10.5), (40.0, 30.0, 30.0, 30.0), (-5.0, -2.0, 20.0, 10.0)]:
        ours = images.load_crop(path, box)
        x, y, w, h = box
        official = TF.crop(img, y, x, h, w)
        assert ours.size == official.size
        assert np.array_equal(np.asarray(ours), np.asarray(official))
    # float corners are rounded by PIL, and outside the image is black padding
    out = np.asarray(images.load_crop(path, (40.0, 30.0, 30.0, 30.0)))
    assert out.shape == (30, 30, 3) and not out[-1, -1].any()
    assert pixels.box_outside((40.0, 30.0, 30.0, 30.0), (50, 40)) and not pixels.box_outside((0, 0, 50, 40), (50, 40))


def test_rgba_and_misnamed_images_open_as_rgb(tmp_path):
    rgba = helpers.make_image(tmp_path / "r.png", mode="RGBA", fmt="PNG")
    jpeg_named_png = helpers.make_image(tmp_path / "j.png", fmt="JPEG")
    for p in (rgba, jpeg_named_png):
        assert pixels.open_rgb(p).mode == "RGB"
