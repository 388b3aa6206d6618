"""SugarCrepe through the one evaluation path, against the official scoring written out here in its shape.

The official ``main_eval.py`` (RAIVNLab/sugar-crepe) opens each pair's COCO image, encodes it and the two
captions one pair at a time, and counts the pair correct when the positive's cosine is strictly greater
than the negative's: a tie is wrong. The reference below does exactly that with the tiny model; the
companion's result (``evaluate --benchmark sugarcrepe``) must give the same correct count per subset.

Would notice: the negative scored first, a tie counted as right, pairs of one subset filed under another,
a subset left out, the image or captions of one pair swapped with another's, a bad item half-read.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from PIL import Image

import helpers
from crepe_utils.cli import main
from crepe_utils.errors import DataError
from crepe_utils.protocol import SelectionError
from crepe_utils.evaluation import evaluate
from crepe_utils.results import store

WORDS = ["red", "blue", "dog", "cat", "table", "chair", "on", "under", "a", "the", "small", "large"]
SUBSETS = {"add_att": 5, "replace_rel": 4, "swap_obj": 3}


def _caption(rng, k=5):
    return " ".join(rng.choice(WORDS, size=k))


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """Three subsets in the released layout (keys "0", "1", ...) and their COCO images under val2017/."""
    import numpy as np
    rng = np.random.default_rng(3)
    root = tmp_path_factory.mktemp("sugarcrepe")
    data, images = root / "data", root / "coco"
    data.mkdir()
    names = [f"{100 + i:012d}.jpg" for i in range(6)]
    for i, name in enumerate(names):
        helpers.make_image(images / "val2017" / name, size=(64, 48), seed=40 + i)
    for subset, n in SUBSETS.items():
        items = {}
        for k in range(n):
            pos = _caption(rng)
            neg = pos if (subset, k) == ("replace_rel", 0) else _caption(rng)      # one exact tie
            items[str(k)] = {"filename": names[(k * 5 + len(subset)) % len(names)], "caption": pos,
                             "negative_caption": neg}
        (data / f"{subset}.json").write_text(json.dumps(items, indent=4), encoding="utf-8")
    return data, images


def _official(loaded, data: Path, images: Path) -> dict[str, int]:
    """Correct pairs per subset, computed as main_eval.py computes them (one pair at a time, strict >)."""
    model, tokenizer, transform = loaded.model, loaded.tokenizer, loaded.preprocess
    correct = {}
    with torch.no_grad():
        for subset in SUBSETS:
            items = json.loads((data / f"{subset}.json").read_text(encoding="utf-8"))
            count = 0
            for item in items.values():
                image = transform(Image.open(images / "val2017" / item["filename"])).unsqueeze(0)
                img = F.normalize(model.encode_image(image), dim=-1)
                pos = F.normalize(model.encode_text(tokenizer([item["caption"]])), dim=-1)
                neg = F.normalize(model.encode_text(tokenizer([item["negative_caption"]])), dim=-1)
                count += int((pos @ img.T).item() > (neg @ img.T).item())
            correct[subset] = count
    return correct


def test_the_command_scores_as_the_official_code(released, loaded_tiny, tiny_model, tmp_path, capsys):
    data, images = released
    cfg, ckpt = tiny_model
    rc = main(["evaluate", "--benchmark", "sugarcrepe", "--model", cfg.stem, "--pretrained", str(ckpt),
               "--model-config", str(cfg), "--data-dir", str(data), "--image-dir", str(images),
               "--out", str(tmp_path / "out"), "--device", "cpu", "--kind", "fixture", "--subsets", *SUBSETS,
               "--n-boot", "100"])
    assert rc == 0, capsys.readouterr().err
    summary = store.load_results(tmp_path / "out").set_index("subset")
    assert sorted(summary.index) == sorted(SUBSETS) and set(summary["benchmark"]) == {"sugarcrepe"}
    official = _official(loaded_tiny, data, images)
    for subset, n in SUBSETS.items():
        row = summary.loc[subset]
        assert row["n_queries"] == n and row["chance_r1"] == 50.0
        assert row["r1"] == pytest.approx(100 * official[subset] / n, abs=1e-4), subset   # summary.csv: 6 digits
    tie = summary.loc["replace_rel"]
    assert tie["n_tied_queries"] == 1 and tie["r1_optimistic"] > tie["r1"]      # the tie, counted and shown
    per_query = store.load_per_query(summary.loc["add_att", "result_dir"]).set_index("query_id")
    assert list(per_query.index[:2]) == ["add_att.json:0", "add_att.json:1"]
    assert (per_query["n_candidates"] == 2).all()


def test_missing_image_and_unknown_subset_are_one_line_errors(released, loaded_tiny, tmp_path):
    data, images = released
    common = dict(data_dir=data, out=tmp_path / "out", kind="fixture", n_boot=10, progress=False, cache_dir=False)
    everything = tuple(SUBSETS)
    empty = tmp_path / "coco"
    (empty / "val2017").mkdir(parents=True)
    with pytest.raises(DataError, match=r"image\(s\) missing under .*coco.*make data-coco"):
        evaluate(loaded_tiny, "sugarcrepe", image_dir=empty, subsets=everything, **common)
    assert not (tmp_path / "out").exists()
    with pytest.raises(SelectionError, match=r"sugarcrepe: subsets \(--subsets\) 'add_attribute' is not allowed; choose from add_att"):
        evaluate(loaded_tiny, "sugarcrepe", image_dir=images, subsets=("add_attribute",), **common)
    # skipped on request: one image present, the pairs on the others skipped and counted
    some = tmp_path / "some"
    name = json.loads((data / "swap_obj.json").read_text())["0"]["filename"]
    helpers.make_image(some / "val2017" / name, size=(64, 48), seed=1)
    summary = evaluate(loaded_tiny, "sugarcrepe", image_dir=some, skip_missing_images=True, subsets=("swap_obj",),
                       **common).iloc[0]
    items = json.loads((data / "swap_obj.json").read_text()).values()
    on_it = sum(item["filename"] == name for item in items)
    assert (summary["n_queries"], summary["n_skipped"]) == (on_it, SUBSETS["swap_obj"] - on_it)
