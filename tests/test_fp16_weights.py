"""Precision fp16-weights: weights converted as OpenAI's clip.load does (compared with clip-anytorch's own
convert_weights and forward pass), recorded in the manifest and the cache fingerprint, refused where undefined."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import family_fixtures  # noqa: E402

from crepe_utils.engine import embedding_cache
from crepe_utils.engine import precisions
from crepe_utils.evaluation import evaluate
from crepe_utils.errors import ModelError  # noqa: E402
from crepe_utils.models import load_model  # noqa: E402
from crepe_utils.models.openclip import convert_to_fp16_weights  # noqa: E402


def _openai(kind: str, fp16_exact: bool):
    """A tiny model of OpenAI's own CLIP code (clip-anytorch) and its state dict."""
    import torch
    M = family_fixtures.openai_clip_module("model")
    if M is None:
        pytest.skip("the reference is clip-anytorch (pip install '.[test-families]')")
    torch.manual_seed(0)
    ref = (M.CLIP(32, 32, 1, 64, 16, 77, 49408, 64, 1, 1) if kind == "vit"
           else M.CLIP(32, 64, (1, 1, 1, 1), 8, None, 77, 49408, 64, 1, 1))
    sd = {k: (v.half().float() if fp16_exact and v.is_floating_point() else v) for k, v in ref.state_dict().items()}
    ref.load_state_dict(sd)
    return M, ref.eval(), sd, (32 if kind == "vit" else 64)


def _ours(sd):
    """The same weights through open_clip's OpenAI-format builder in fp32 (as crepe_utils loads them)."""
    from open_clip.model import build_model_from_openai_state_dict
    model = build_model_from_openai_state_dict(dict(sd), quick_gelu=True, cast_dtype=None).float()
    model.load_state_dict({k: v for k, v in sd.items() if k not in ("input_resolution", "context_length",
                                                                     "vocab_size")})
    return model.eval()


@pytest.mark.parametrize("kind", ["vit", "rn"])
def test_same_parameters_converted_as_clip_convert_weights(kind):
    import torch
    M, ref, sd, _ = _openai(kind, fp16_exact=False)
    M.convert_weights(ref)                      # OpenAI's function, as clip.load's build_model calls it
    ours = _ours(sd)
    record = convert_to_fp16_weights(ours)
    want = {n: p.dtype for n, p in ref.named_parameters()}
    got = {n: p.dtype for n, p in ours.named_parameters()}
    assert got == want
    halves = {n for n, d in want.items() if d == torch.float16}
    assert halves and len(halves) < len(want)                     # some converted, some (LayerNorm ...) kept
    assert not any("ln_" in n for n in halves) and "text_projection" in halves
    assert record["converted_tensors"] == len(halves)
    assert record["converted_elements"] == sum(p.numel() for n, p in ours.named_parameters() if n in halves)
    assert record["lossless"] is False and record["rounded_tensors"] > 0     # random fp32 weights round
    from open_clip.transformer import LayerNormFp32
    norms = [m for m in ours.modules() if isinstance(m, torch.nn.LayerNorm)]
    assert norms and all(isinstance(m, LayerNormFp32) for m in norms)       # computes in fp32, as OpenAI's


@pytest.mark.parametrize("kind", ["vit", "rn"])
def test_forward_equals_openai_clip_in_fp16(kind):
    """OpenAI's own fp16 model and ours, on fp16-exact weights (as released): the same embeddings, bit for bit."""
    import torch
    M, ref, sd, size = _openai(kind, fp16_exact=True)
    M.convert_weights(ref)
    ours = _ours(sd)
    assert convert_to_fp16_weights(ours)["lossless"] is True
    pixels = torch.randn(3, 3, size, size, generator=torch.Generator().manual_seed(1))
    text = torch.zeros(3, 77, dtype=torch.long)
    text[:, 0], text[:, 6] = 49406, 49407
    text[:, 1:6] = torch.randint(1, 40000, (3, 5), generator=torch.Generator().manual_seed(2))
    with torch.inference_mode():
        ref_i, ref_t = ref.encode_image(pixels), ref.encode_text(text)      # casts pixels itself
        our_i = ours.encode_image(pixels.to(precisions.pixel_dtype("fp16-weights")))
        our_t = ours.encode_text(text)
    assert ref_i.dtype == our_i.dtype == torch.float16
    assert torch.equal(ref_i, our_i) and torch.equal(ref_t, our_t)
    # and it is not the fp32 model: the comparison would see a missing conversion
    fp32 = _ours(sd)
    with torch.inference_mode():
        assert not torch.equal(fp32.encode_image(pixels).half(), ref_i)
        assert not torch.equal(fp32.encode_text(text).half(), ref_t)


def test_other_models_are_refused():
    import torch
    with pytest.raises(ModelError, match="use --precision fp16"):
        convert_to_fp16_weights(torch.nn.Linear(2, 2))


def _run(tiny_model, synthetic_root, out, precision, **kw):
    cfg, ckpt = tiny_model
    data_dir, image_dir = synthetic_root
    return evaluate(kw.pop("loaded", cfg.stem), "productivity", model_config=str(cfg), pretrained=str(ckpt),
                    complexities=(4,), data_dir=data_dir, image_dir=image_dir, out=out, cache_dir=False, kind="fixture",
                    device="cpu", progress=False, n_boot=50, precision=precision, **kw)


def test_evaluate_records_fp16_weights(tiny_model, synthetic_root, tmp_path):
    from crepe_utils.results import store as results
    _run(tiny_model, synthetic_root, tmp_path / "half", "fp16-weights")
    _run(tiny_model, synthetic_root, tmp_path / "full", "fp32")
    cfg, _ = tiny_model
    half = results.result_dir(tmp_path / "half", f"{cfg.stem}/{Path(tiny_model[1]).stem}", "productivity")
    full = results.result_dir(tmp_path / "full", f"{cfg.stem}/{Path(tiny_model[1]).stem}", "productivity")
    m_half, m_full = results.load_manifest(half), results.load_manifest(full)
    assert m_half["engine"]["precision"] == "fp16-weights" and m_full["engine"]["precision"] == "fp32"
    rec = m_half["engine"]["fp16_weights"]
    assert rec["converted_tensors"] > 0 and rec["lossless"] is False
    assert "fp16_weights" not in m_full["engine"]
    assert m_half["engine"]["cache_fingerprint"] != m_full["engine"]["cache_fingerprint"]
    per_half, per_full = results.load_per_query(half), results.load_per_query(full)
    s_half = np.array([float(v) for v in per_half["score_positive"]])
    s_full = np.array([float(v) for v in per_full["score_positive"]])
    diff = np.abs(s_half - s_full).max()
    assert 0 < diff < 5e-2                     # fp16 rounding: close to fp32, not equal to it


def test_fingerprint_differs_from_every_other_precision(loaded_tiny):
    fps = {p: embedding_cache.model_fingerprint(loaded_tiny, p, True, "keep_eot") for p in precisions.PRECISIONS}
    assert len(set(fps.values())) == len(precisions.PRECISIONS)


def test_weights_and_precision_must_agree(tiny_model, synthetic_root, tmp_path, loaded_tiny, capsys):
    cfg, ckpt = tiny_model
    with pytest.raises(ModelError, match="needs a model loaded with fp16 weights"):
        _run(tiny_model, synthetic_root, tmp_path / "a", "fp16-weights", loaded=loaded_tiny)
    half = load_model(cfg.stem, str(ckpt), str(cfg), device="cpu", precision="fp16-weights")
    with pytest.raises(ModelError, match="holds fp16 weights"):
        _run(tiny_model, synthetic_root, tmp_path / "b", "fp32", loaded=half)
    from crepe_utils import cli
    data_dir, image_dir = synthetic_root
    assert cli.main(["evaluate", "--benchmark", "productivity", "--model", "crepe-utils-not-a-model",
                     "--precision", "fp16-weights", "--data-dir", str(data_dir), "--device", "cpu"]) == 1
    json.dumps(half.model.crepe_fp16_weights)            # the record is plain JSON for the manifest
