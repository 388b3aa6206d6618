"""Every kind of bad input, run end to end: a specific message naming the culprit, or a counted skip.

Each case goes through ``evaluation.evaluate`` (what the CLI and notebooks call) into a results
folder, and asserts that the message names the file and line (or image, or checkpoint) and says
what was expected, and that no result file was written.
"""
from __future__ import annotations

import copy
import json

import pytest

import helpers
from crepe_utils import cli
from crepe_utils.evaluation import evaluate
from crepe_utils.benchmarks.crepe import validation
from crepe_utils.errors import CrepeError, DataError, ModelError

FILE = "prod_vg_hard_negs_atom_complexity_4.csv"
GOOD = dict(image_id="7", caption="a red dog on a table", x=1.0, y=2.0, width=30.0, height=20.0,
            hard_negs=["a blue dog on a table", "a red cat on a table", "a red dog under a table",
                       "a red dog on a chair", "a red dog on a bed"])


def _root(tmp_path, bad: dict | None = None, raw: dict | None = None):
    """A one-file CREPE root (HN-Atom, n = 4) with a good row, then a row changed by ``bad`` (parsed
    values) or ``raw`` (cell text written as is), and the 80 × 60 images 7 and 8."""
    data_dir, image_dir = tmp_path / "crepe", tmp_path / "images"
    rows = [GOOD, {**GOOD, "image_id": "8", **(bad or {})}]
    path = helpers.write_productivity_csv(data_dir / "prod_hard_negatives" / "atom" / FILE, rows, 4)
    if raw:
        lines = path.read_text().splitlines()
        import csv
        import io
        cells = next(csv.reader([lines[2]]))
        for column, value in raw.items():
            cells[helpers.PROD_HEADER.index(column)] = value
        buf = io.StringIO()
        csv.writer(buf).writerow(cells)
        lines[2] = buf.getvalue().rstrip("\r\n")
        path.write_text("\n".join(lines) + "\n")
    helpers.make_vg_root(image_dir, ["7", "8"], size=(80, 60))
    return data_dir, image_dir


def _evaluate(tiny_model, root, out, **kw):
    cfg, ckpt = tiny_model
    data_dir, image_dir = root
    kw = {"pretrained": str(ckpt), "model_config": str(cfg), **kw}
    model = kw.pop("loaded", cfg.stem)
    return evaluate(model, "productivity", hn_types=["atom"], complexities=(4,), data_dir=data_dir, image_dir=image_dir,
                    out=out, cache_dir=False, kind="fixture", device="cpu", progress=False, n_boot=20, **kw)


def _refused(tiny_model, root, tmp_path, error=DataError, **kw) -> str:
    out = tmp_path / "results"
    with pytest.raises(error) as info:
        _evaluate(tiny_model, root, out, **kw)
    assert not out.exists(), "a refused run must not write results"
    return str(info.value)


# ------------------------------------------------------------------ CSV rows

@pytest.mark.parametrize("raw, expected", [
    ({"x": "nan"}, "column 'x' is 'nan'; expected a finite number"),
    ({"y": "inf"}, "column 'y' is 'inf'; expected a finite number"),
    ({"width": "-3.0"}, "box has zero or negative area (width=-3, height=20)"),
    ({"width": "0.4", "x": "10.0"}, "crops to nothing: the official crop rounds its corners to 10..10"),
    ({"height": "0.3", "y": "2.6"}, "crops to nothing"),
    ({"image_id": "8.5"}, "column 'image_id' is '8.5'; expected a non-negative integer"),
    ({"image_id": "img8"}, "column 'image_id' is 'img8'; expected an integer Visual Genome id"),
    ({"hard_negs": "['a blue dog', '', 'a cat', 'x', 'y']"}, "column 'hard_negs' holds an empty caption"),
    ({"n": "5"}, "column 'n' is '5' but the file name says complexity 4"),
])
def test_bad_rows_name_file_line_and_expectation(tiny_model, tmp_path, raw, expected):
    root = _root(tmp_path, raw=raw)
    message = _refused(tiny_model, root, tmp_path)
    assert f"{FILE}:3: " in message and expected in message
    assert "--skip-bad-rows" in message
    # skipped explicitly, the row is counted in the summary and the manifest
    summary = _evaluate(tiny_model, root, tmp_path / "skipped", on_bad_row="skip")
    assert summary["n_queries"].tolist() == [1] and summary["n_skipped"].tolist() == [1]
    manifest = json.loads(next((tmp_path / "skipped").rglob("manifest.json")).read_text())
    assert manifest["data"]["issues"] == {"bad row": 1}


def test_non_utf8_bytes_name_the_line(tiny_model, tmp_path):
    root = _root(tmp_path)
    path = next(root[0].rglob(FILE))
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"a red dog on a table", b"a r\xe9d dog on a table", 1)
    path.write_bytes(b"\n".join(lines))
    message = _refused(tiny_model, root, tmp_path)
    assert f"{FILE}:3: bytes b'\\xe9d d" in message and "not UTF-8" in message


def test_negative_origin_is_kept_as_the_official_padding_and_counted_by_validate(tiny_model, tmp_path):
    root = _root(tmp_path, bad=dict(x=-5.0, y=-4.0))
    summary = _evaluate(tiny_model, root, tmp_path / "out")
    assert summary["n_queries"].tolist() == [2] and summary["n_skipped"].tolist() == [0]
    report = validation.validate(root[0], root[1], token_lengths=False)
    assert report.ok and report.boxes_outside == 1


# ------------------------------------------------------------------ images and regions

def test_box_wholly_outside_its_image_is_its_rows_fault(tiny_model, tmp_path):
    root = _root(tmp_path, bad=dict(image_id="7", x=90.0, y=10.0))      # image 7 is 80 px wide
    message = _refused(tiny_model, root, tmp_path)
    assert f"{FILE}:3: box outside image: box (90.0, 10.0, 30.0, 20.0) lies wholly outside the 80×60 image" in message
    assert "could not be read" not in message and "--skip-bad-rows" in message
    summary = _evaluate(tiny_model, root, tmp_path / "out", on_bad_row="skip")
    assert summary["n_queries"].tolist() == [1] and summary["n_skipped"].tolist() == [1]   # the row 2 query stays
    manifest = json.loads(next((tmp_path / "out").rglob("manifest.json")).read_text())
    assert manifest["data"]["skipped_by_engine"] == {"box outside image": 1}
    report = validation.validate(root[0], root[1], token_lengths=False)
    assert any(f"{FILE}:3: box (90.0, 10.0, 30.0, 20.0) lies wholly outside image 7 (80×60)" in e for e in report.errors)


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_damaged_image_is_found_by_validate_and_by_the_run(tiny_model, tmp_path, damage):
    root = _root(tmp_path)
    path = root[1] / "VG_100K" / "8.jpg"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"\xff\xd8\xff\xe0 not really a jpeg")
    report = validation.validate(root[0], root[1], token_lengths=False)
    assert not report.ok and report.unreadable_images == ["8"]
    assert any(f"{path} (image 8) cannot be decoded" in e for e in report.errors)
    message = _refused(tiny_model, root, tmp_path)
    assert f"{path} (image 8):" in message and "--skip-missing-images" in message
    summary = _evaluate(tiny_model, root, tmp_path / "out", skip_missing_images=True)
    assert summary["n_skipped"].tolist() == [1]


# ------------------------------------------------------------------ model files and model output

def _other_architecture(tmp_path):
    cfg = copy.deepcopy(helpers.TINY_CONFIG)
    cfg["embed_dim"] = 48
    return helpers.make_tiny_model(tmp_path, name="crepe-tiny-wide", config=cfg)[0]


@pytest.mark.parametrize("case, expected", [
    ("empty", "is empty (0 bytes)"),
    ("truncated", "is not a readable PyTorch checkpoint"),
    ("text file", "is not a readable PyTorch checkpoint"),
    ("a list", "is not a readable PyTorch checkpoint"),
    ("wrong architecture", "does not fit architecture 'crepe-tiny-wide': size mismatch for text_projection"),
])
def test_unusable_checkpoint_files_are_model_errors(tiny_model, tmp_path, case, expected):
    import torch
    cfg, ckpt = tiny_model
    bad = tmp_path / f"{case.replace(' ', '_')}.pt"
    kw = {}
    if case == "empty":
        bad.write_bytes(b"")
    elif case == "truncated":
        bad.write_bytes(ckpt.read_bytes()[:4096])
    elif case == "text file":
        bad.write_text("this is not a checkpoint\n")
    elif case == "a list":
        torch.save([1, 2, 3], bad)
    else:
        bad = ckpt
        kw["model_config"] = str(_other_architecture(tmp_path))
    message = _refused(tiny_model, _root(tmp_path), tmp_path, error=ModelError, pretrained=str(bad), **kw)
    assert str(bad) in message and expected in message


@pytest.mark.parametrize("tower", ["text", "image"])
def test_non_finite_embeddings_are_model_errors(loaded_tiny, tiny_model, tmp_path, tower):
    import torch
    broken = copy.deepcopy(loaded_tiny)
    layer = broken.model.ln_final if tower == "text" else broken.model.visual.ln_post
    with torch.no_grad():
        layer.weight[0] = float("nan")
    message = _refused(tiny_model, _root(tmp_path), tmp_path, error=ModelError, loaded=broken)
    assert f"non-finite (NaN or inf) {tower} embeddings" in message and "--precision fp32" in message
    assert ("token ids [49406" if tower == "text" else "7.jpg box (1.0, 2.0, 30.0, 20.0)") in message


# ------------------------------------------------------------------ the command line: one error, no traceback

@pytest.mark.parametrize("case", ["bad row", "empty checkpoint", "missing data folder"])
def test_commands_report_user_errors_without_traceback(tiny_model, tmp_path, capsys, case):
    cfg, ckpt = tiny_model
    data_dir, image_dir = _root(tmp_path, raw={"x": "nan"} if case == "bad row" else None)
    if case == "empty checkpoint":
        ckpt = tmp_path / "empty.pt"
        ckpt.write_bytes(b"")
    if case == "missing data folder":
        data_dir = tmp_path / "nowhere"
    args = ["evaluate", "--benchmark", "productivity", "--model", cfg.stem, "--pretrained", str(ckpt),
            "--model-config", str(cfg), "--data-dir", str(data_dir), "--image-dir", str(image_dir),
            "--out", str(tmp_path / "out"), "--complexities", "4", "--hn-types", "atom", "--no-cache",
            "--device", "cpu"]
    assert cli.main(args) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith("error: ") and "Traceback" not in captured.err + captured.out
    assert not (tmp_path / "out").exists()


def test_every_package_error_is_a_crepe_error():
    from crepe_utils.benchmarks.crepe import queries as data
    from crepe_utils import models
    assert issubclass(data.DataError, CrepeError) and issubclass(models.ModelError, CrepeError)
    assert issubclass(models.QuickGELUMismatch, ModelError)
