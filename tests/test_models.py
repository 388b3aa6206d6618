"""Model registry and loading: the QuickGELU guard, provenance, the real checkpoint-file path."""
from __future__ import annotations

import hashlib
import json

import pytest
import torch

from crepe_utils import models
from crepe_utils.benchmarks.crepe import reported, roster
from crepe_utils.models import checkpoints, imagenet as imagenet_table
from crepe_utils.models import ModelError, QuickGELUMismatch


@pytest.mark.parametrize("arch, tag, fix", [
    ("ViT-B-32", "laion400m_e32", "ViT-B-32-quickgelu"),   # CREPE's LAION ViT-B-32 weights are QuickGELU
    ("RN50", "openai", "RN50-quickgelu"),
    ("RN50", "cc12m", "RN50-quickgelu"),
    ("ViT-B-16", "openai", "ViT-B-16-quickgelu"),
])
def test_quickgelu_mismatch_is_refused(arch, tag, fix):
    with pytest.raises(QuickGELUMismatch, match=fix):
        models.resolve(arch, tag)


def test_gelu_weights_in_a_quickgelu_architecture_are_refused():
    with pytest.raises(QuickGELUMismatch, match="'ViT-B-16'"):
        models.check_activation("ViT-B-16-quickgelu", False, "LAION ViT-B-16 weights")


def test_every_open_clip_paper_model_resolves_consistently():
    for row in checkpoints.of_family("open_clip"):
        spec = models.resolve(row.key)
        assert spec.quick_gelu == row.quick_gelu == spec.weights_quick_gelu, row.key
        assert spec.display == row.display


def test_plus_240_uses_the_e32_release_file_not_the_hub_e31():
    spec = models.resolve("laion400m-vit-b-16-plus-240")
    assert spec.pretrained.endswith("vit_b_16_plus_240-laion400m_e32-699c4b84.pt")
    from open_clip import pretrained as P
    assert "e31" in P.get_pretrained_cfg("ViT-B-16-plus-240", "laion400m_e32")["hf_hub"]  # the trap itself


def test_known_release_file_is_recognised_and_guarded(tmp_path):
    ckpt = tmp_path / "rn50-quickgelu-cc12m-f000538c.pt"
    ckpt.write_bytes(b"")
    with pytest.raises(QuickGELUMismatch):
        models.resolve("RN50", str(ckpt))
    spec = models.resolve("RN50-quickgelu", str(ckpt))
    assert spec.key == "cc12m-rn50" and spec.weights_quick_gelu is True


def test_unknown_tags_and_architectures_get_clear_errors():
    with pytest.raises(ModelError, match="known tags"):
        models.resolve("ViT-B-32-quickgelu", "no-such-tag")
    with pytest.raises(ModelError, match=r"unknown model 'ViT-Z-99': not a registry key \(`python -m crepe_utils "
                       r"models` lists them\) nor an open_clip architecture"):
        models.resolve("ViT-Z-99", "openai")
    with pytest.raises(ModelError, match="Did you mean .laion400m-vit-b-32."):
        models.resolve("laion400m-vit-b-3")


def test_bad_model_config(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"embed_dim": 8}))
    with pytest.raises(ModelError, match="vision_cfg"):
        models.resolve("x", str(tmp_path / "missing.pt"), str(bad))
    bad.write_text("{not json")
    with pytest.raises(ModelError, match="not valid JSON"):
        models.resolve("x", None, str(bad))


def test_local_checkpoint_loads_through_open_clip_with_provenance(tiny_model):
    import open_clip
    cfg, ckpt = tiny_model
    loaded = models.load_model(cfg.stem, pretrained=str(ckpt), model_config=str(cfg), device="cpu")
    saved = torch.load(ckpt, weights_only=True)["state_dict"]
    for name, value in loaded.model.state_dict().items():
        assert torch.equal(value, saved["module." + name]), name
    assert loaded.spec.checkpoint_sha256 == hashlib.sha256(ckpt.read_bytes()).hexdigest()
    assert loaded.spec.context_length == 77 and loaded.spec.quick_gelu is False
    fresh = open_clip.create_model(cfg.stem, pretrained=None)          # a different random init
    assert not all(torch.equal(a, b) for a, b in zip(fresh.state_dict().values(), loaded.model.state_dict().values()))


def test_save_checkpoint_round_trip(tiny_model, tmp_path):
    cfg, ckpt = tiny_model
    loaded = models.load_model(cfg.stem, pretrained=str(ckpt), model_config=str(cfg), device="cpu")
    out = models.save_checkpoint(loaded.model, tmp_path / "again.pt")
    again = models.load_model(cfg.stem, pretrained=str(out), model_config=str(cfg), device="cpu")
    for a, b in zip(loaded.model.state_dict().values(), again.model.state_dict().values()):
        assert torch.equal(a, b)


def test_the_roster_covers_the_published_tables():
    keys = set(roster.model_order())
    assert len(keys) == len(roster.PRODUCTIVITY_MODELS) == 15
    assert set(reported.productivity()["model"]) == keys
    assert set(reported.systematicity()["model"]) == set(roster.SYSTEMATICITY_MODELS)
    imagenet = imagenet_table.top1()
    assert all(k in imagenet.index for k in keys if checkpoints.checkpoint(k).family == "open_clip")
    with pytest.raises(ModelError, match="known keys"):
        checkpoints.checkpoint("no-such-model")
