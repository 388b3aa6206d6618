"""The prepared device check, run at tiny sizes on the CPU: it completes, and its own checks can say no."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import device_check  # noqa: E402


def test_tiny_run_writes_a_complete_report(tmp_path, capsys):
    out = tmp_path / "check.json"
    assert device_check.main(["--device", "cpu", "--tiny", "--images", "3", "--captions", "120",
                              "--exact-queries", "12", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    tiny = report["archs"]["tiny"]
    assert set(tiny["precisions"]) == {"fp32", "bf16"} and report["skipped"] == []
    for m in tiny["precisions"].values():
        assert m["n_queries"] == 3 * 2 * 3 and m["n_crops"] == 6
        assert m["images_per_s"] > 0 and m["texts_per_s"] > 0 and m["end_to_end_over_floor_measured"] > 1
    ex = tiny["exactness"]
    assert ex["device_runs_bit_identical"] and ex["ranks_differing_beyond_tau"] == 0
    assert ex["queries_compared"] == 12
    assert "tiny" in capsys.readouterr().out


def test_budget_skips_instead_of_overrunning(tmp_path):
    out = tmp_path / "check.json"
    device_check.main(["--device", "cpu", "--tiny", "--images", "1", "--captions", "40", "--budget-s", "0",
                       "--out", str(out)])
    assert json.loads(out.read_text())["skipped"] == ["tiny"]


def test_flop_count_sees_the_attention():
    """ViT-B/32 at 224 px is 4.41 GMACs per image and 2.96 per 77-token caption (open_clip's model
    profile); a counter blind to the fused attention kernel would report about two thirds of that."""
    import open_clip
    from crepe_utils.models import LoadedModel, ModelSpec
    model = open_clip.create_model("ViT-B-32-quickgelu", pretrained=None).eval()
    spec = ModelSpec(key="x", architecture="ViT-B-32-quickgelu", pretrained=None, quick_gelu=True,
                     weights_quick_gelu=None, preprocess={"size": 224})
    import torch
    image, text = device_check.flops_per_item(LoadedModel(model, None, None, spec, torch.device("cpu")), 77)
    assert image / 2 == pytest.approx(4.41e9, rel=0.03)
    assert text / 2 == pytest.approx(2.96e9, rel=0.03)
