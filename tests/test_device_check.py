"""The prepared device check, run at tiny sizes on the CPU: it completes, and its own checks can say no."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "speed"))
import device_check  # noqa: E402


@pytest.mark.slow
def test_tiny_run_writes_a_complete_report(tmp_path, capsys):
    out = tmp_path / "check.json"
    assert device_check.main(["--device", "cpu", "--tiny", "--images", "3", "--captions", "120",
                              "--exact-queries", "12", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    tiny = report["archs"]["tiny"]
    assert set(tiny["precisions"]) == {"fp32", "bf16", "fp16-weights"} and report["skipped"] == []
    for m in tiny["precisions"].values():
        assert m["n_queries"] == 3 * 2 * 3 and m["n_crops"] == 6
        assert m["images_per_s"] > 0 and m["texts_per_s"] > 0 and m["end_to_end_over_floor_measured"] > 1
    assert set(tiny["exactness"]) == {"fp32", "fp16-weights"}
    ex = tiny["exactness"]["fp32"]              # the CPU against itself: exact
    assert ex["device_runs_bit_identical"] and ex["ranks_differing_beyond_tau"] == 0
    assert ex["queries_compared"] == 12 and ex["max_abs_score_difference"] == 0
    half = tiny["exactness"]["fp16-weights"]    # converted weights: other scores, compared with fp32's
    assert half["device_runs_bit_identical"] and 0 < half["max_abs_score_difference"] < 0.05
    assert half["reference"] == "cpu fp32" and half["queries_compared"] == 12
    printed = capsys.readouterr().out
    assert "tiny" in printed and "fp16-weights" in printed


def test_exactness_counts_rank_changes_outside_near_ties(tmp_path, loaded_tiny):
    """A CPU reference whose positive is pushed down in one query (by more than τ), and one pushed within τ of a
    negative: one rank differs beyond τ, and the near-tie is counted as such, not as a disagreement."""
    import dataclasses

    import numpy as np
    from crepe_utils.engine import core as engine
    from crepe_utils.imagesets.visual_genome import ImageIndex
    captions, _ = device_check.load_captions(None, 60)
    queries = device_check.synthetic_data(tmp_path / "images", 2, captions)[:6]
    ref = engine.run(loaded_tiny, queries, ImageIndex(tmp_path / "images"), cache_dir=None)
    scores = ref.scores.copy()
    a, b = ref.offsets[0], ref.offsets[1]
    from crepe_utils import metrics
    first = metrics.ranks_from_flat(ref.scores, ref.offsets).pessimistic[0] == 1
    # query 0: positive moved far (to last if it was first, else to first): its rank changes beyond τ
    scores[a] = scores[a + 1:b].min() - 0.5 if first else scores[a + 1:b].max() + 0.5
    c = ref.offsets[1]
    scores[c + 1] = scores[c] + 5e-5                          # query 1: a negative within τ above the positive
    fake = dataclasses.replace(ref, scores=scores)
    ex = device_check.exactness(loaded_tiny, fake, queries, tmp_path / "images", 1e-4, "fp32")
    assert ex["near_ties_below_tau"] >= 1
    assert ex["ranks_differing_beyond_tau"] == 1 and ex["ranks_differing_total"] >= 1
    assert ex["rank_agreement_beyond_tau"] < 1
    assert np.isclose(ex["max_abs_score_difference"], np.abs(scores - ref.scores).max())


@pytest.mark.slow
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
