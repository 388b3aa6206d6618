"""Model families beyond open_clip, each against an independent reference on tiny random weights
saved in the family's real checkpoint layout and loaded through the real loading path.

CyCLIP: OpenAI's own CLIP code (clip-anytorch) built the way CyCLIP's script builds it. ALBEF: a
plain-torch forward written here from ALBEF's published architecture (ViT blocks, post-norm BERT
with an additive −10000 padding mask, CLS → projection).
"""
from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

import family_fixtures
import helpers
from crepe_utils.engine import encoders
from crepe_utils.engine import tokenizing
from crepe_utils import models
from crepe_utils.benchmarks.crepe import roster
from crepe_utils.models import checkpoints
from crepe_utils.errors import ModelError

TEXTS = ["a red dog on the table", "The Cat under a wooden chair", "old man next to a car", "tree",
         helpers.OVERLONG_CAPTION]


def _images(seed=0):
    rng = np.random.default_rng(seed)
    return [Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)) for w, h in ((80, 60), (37, 91), (64, 64))]


# ------------------------------------------------------------------------------ the interface

def test_every_checkpoint_names_a_family_with_a_loader():
    for row in checkpoints.CHECKPOINTS:
        assert row.family in models.FAMILIES, row.key
        assert models.family_of(row.key).name == row.family
    crepe = {checkpoints.checkpoint(k).family for k in roster.model_order()}
    assert crepe == {"open_clip", "cyclip", "albef", "flava"}
    assert models.family_of("ViT-B-32").name == "open_clip"


def test_models_listing_shows_each_family_loader_and_the_vg_caveat(capsys):
    from crepe_utils import cli
    assert cli.main(["models"]) == 0
    out = capsys.readouterr().out
    for key in ("cyclip-rn50", "albef-14m", "flava"):
        line = next(ln for ln in out.splitlines() if key in ln)
        assert "published numbers only" not in line
    assert all(models.FAMILIES[f].loader in out for f in ("cyclip", "albef", "flava"))
    from crepe_utils.commands.models import checkpoint_table
    table = checkpoint_table().set_index("key")
    assert "Visual Genome" in table.loc["albef-14m", "caveat"] and "Visual Genome" in table.loc["flava", "caveat"]
    assert table.loc["cyclip-rn50", "caveat"] == "—"


# ------------------------------------------------------------------------------ CyCLIP

def _openai_reference(sd):
    """CyCLIP's procedure with OpenAI's code: build from the state dict, cast to fp32, load the fp32 weights."""
    build_model = family_fixtures.openai_clip_module("model").build_model
    ref = build_model({k: v.clone() for k, v in sd.items()}).float()
    ref.load_state_dict(sd)
    return ref.eval()


def _cyclip_token_rows(texts, ctx=77):
    """CyCLIP's Processor.process_text: OpenAI BPE, start + text + end, cut at ctx (end token lost), 0-padded."""
    tok = family_fixtures.openai_clip_module("simple_tokenizer").SimpleTokenizer()
    sot, eot = tok.encoder["<|startoftext|>"], tok.encoder["<|endoftext|>"]
    out = torch.zeros(len(texts), ctx, dtype=torch.long)
    for i, t in enumerate(texts):
        ids = ([sot] + tok.encode(t) + [eot])[:ctx]
        out[i, :len(ids)] = torch.tensor(ids)
    return out


def test_cyclip_embeddings_equal_openai_clip_built_as_cyclip_does(cyclip_checkpoint, loaded_cyclip):
    sd, path = cyclip_checkpoint
    ref = _openai_reference(sd)
    rows = _cyclip_token_rows(TEXTS)
    pixels = torch.stack([loaded_cyclip.preprocess(im) for im in _images()])
    with torch.no_grad():
        ours_t, ref_t = loaded_cyclip.model.encode_text(rows), ref.encode_text(rows)
        ours_i, ref_i = loaded_cyclip.model.encode_image(pixels), ref.encode_image(pixels)
        build_model = family_fixtures.openai_clip_module("model").build_model
        fp16 = build_model({k: v.clone() for k, v in sd.items()}).float().eval()   # weights rounded to fp16
        fp16_t = fp16.encode_text(rows)
    assert torch.allclose(ours_t, ref_t, atol=1e-5, rtol=0) and torch.allclose(ours_i, ref_i, atol=1e-5, rtol=0)
    assert (fp16_t - ref_t).abs().max() > 1e-4          # the comparison would see fp16-rounded weights
    assert loaded_cyclip.spec.checkpoint_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert loaded_cyclip.spec.family == "cyclip" and loaded_cyclip.spec.quick_gelu is True


def test_cyclip_tokenization_is_the_official_cut_without_end_token(loaded_cyclip):
    assert loaded_cyclip.spec.truncation == "official"
    tokens = tokenizing.tokenize(loaded_cyclip.tokenizer, TEXTS, loaded_cyclip.spec.truncation)
    rows = _cyclip_token_rows(TEXTS)
    for ids, row in zip(tokens.ids, rows):
        assert list(ids) == row[:len(ids)].tolist() and not row[len(ids):].any()
    assert tokens.overlength.tolist() == [False] * 4 + [True] and tokens.ids[-1][-1] != 49407


def test_cyclip_preprocessing_equals_openai_transform(loaded_cyclip):
    """OpenAI's (and CyCLIP's) transform, in PIL and numpy: bicubic resize of the shorter side, centre
    crop (torchvision's rounding), [0, 1], OpenAI mean/std."""
    size = loaded_cyclip.spec.preprocess["size"]
    mean = torch.tensor([0.48145466, 0.4578275, 0.40821073])[:, None, None]
    std = torch.tensor([0.26862954, 0.26130258, 0.27577711])[:, None, None]
    for im in _images(3):
        w, h = im.size
        resized = im.resize((size, int(size * h / w)) if w <= h else (int(size * w / h), size), Image.BICUBIC)
        left, top = int(round((resized.width - size) / 2.0)), int(round((resized.height - size) / 2.0))
        crop = resized.crop((left, top, left + size, top + size))
        ref = (torch.from_numpy(np.asarray(crop, dtype=np.float32) / 255.0).permute(2, 0, 1) - mean) / std
        assert torch.allclose(loaded_cyclip.preprocess(im), ref, atol=1e-6)


def test_cyclip_missing_or_wrong_checkpoint_is_a_clear_error(tmp_path, monkeypatch, tiny_model):
    monkeypatch.setenv("CREPE_MODELS", str(tmp_path))
    where = tmp_path / "cyclip-rn50" / "best.pt"
    with pytest.raises(ModelError, match=r"(?s)weights not found at .*best\.pt.*drive\.google\.com.*--pretrained"):
        models.load_model("cyclip-rn50", device="cpu")
    assert str(where) in models.resolve("cyclip-rn50").pretrained
    _, open_clip_vit = tiny_model                               # a ViT in open_clip's layout, not a ResNet
    with pytest.raises(ModelError, match="not an OpenAI-format CLIP ResNet"):
        models.load_model("cyclip-rn50", pretrained=str(open_clip_vit), device="cpu")
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint")
    with pytest.raises(ModelError, match="not a readable PyTorch file"):
        models.load_model("cyclip-rn50", pretrained=str(garbage), device="cpu")


# ------------------------------------------------------------------------------ ALBEF

def _ln(x, sd, name, eps):
    return F.layer_norm(x, (x.shape[-1],), sd[name + ".weight"], sd[name + ".bias"], eps)


def _lin(x, sd, name):
    return x @ sd[name + ".weight"].T + sd[name + ".bias"]


def _attend(q, k, v, heads, bias=None):
    b, n, d = q.shape
    split = lambda t: t.reshape(b, -1, heads, d // heads).transpose(1, 2)   # noqa: E731
    scores = split(q) @ split(k).transpose(-1, -2) / math.sqrt(d // heads)
    if bias is not None:
        scores = scores + bias
    return (scores.softmax(-1) @ split(v)).transpose(1, 2).reshape(b, n, d)


def albef_reference_image(sd, pixels, res=384):
    """ALBEF's VisionTransformer (models/vit.py) at ``res`` px, CLS → vision_proj, in plain torch."""
    p = "visual_encoder."
    w = sd[p + "patch_embed.proj.weight"]
    d, patch = w.shape[0], w.shape[-1]
    x = F.conv2d(pixels, w, sd[p + "patch_embed.proj.bias"], stride=patch).flatten(2).transpose(1, 2)
    x = torch.cat([sd[p + "cls_token"].expand(len(x), -1, -1), x], dim=1)
    pos = sd[p + "pos_embed"]
    old, new = int(math.isqrt(pos.shape[1] - 1)), res // patch      # ALBEF's interpolate_pos_embed
    grid = F.interpolate(pos[:, 1:].reshape(1, old, old, d).permute(0, 3, 1, 2), size=(new, new), mode="bicubic",
                         align_corners=False).permute(0, 2, 3, 1).reshape(1, new * new, d)
    x = x + torch.cat([pos[:, :1], grid], dim=1)
    i = 0
    while f"{p}blocks.{i}.norm1.weight" in sd:
        b = f"{p}blocks.{i}."
        h = _ln(x, sd, b + "norm1", 1e-6)
        q, k, v = _lin(h, sd, b + "attn.qkv").chunk(3, dim=-1)
        x = x + _lin(_attend(q, k, v, d // 64), sd, b + "attn.proj")
        x = x + _lin(F.gelu(_lin(_ln(x, sd, b + "norm2", 1e-6), sd, b + "mlp.fc1")), sd, b + "mlp.fc2")
        i += 1
    return _lin(_ln(x, sd, p + "norm", 1e-6)[:, 0], sd, "vision_proj")


def albef_reference_text(sd, ids, text_layers):
    """ALBEF's xbert BertModel in mode='text' (the first ``text_layers`` layers), CLS → text_proj."""
    p = "text_encoder.bert."
    n = ids.shape[1]
    x = (sd[p + "embeddings.word_embeddings.weight"][ids] + sd[p + "embeddings.token_type_embeddings.weight"][0]
         + sd[p + "embeddings.position_embeddings.weight"][:n])
    x = _ln(x, sd, p + "embeddings.LayerNorm", 1e-12)
    bias = (1.0 - (ids != 0).float())[:, None, None, :] * -10000.0
    heads = x.shape[-1] // 64
    for i in range(text_layers):
        b = f"{p}encoder.layer.{i}."
        a = _attend(_lin(x, sd, b + "attention.self.query"), _lin(x, sd, b + "attention.self.key"),
                    _lin(x, sd, b + "attention.self.value"), heads, bias)
        x = _ln(_lin(a, sd, b + "attention.output.dense") + x, sd, b + "attention.output.LayerNorm", 1e-12)
        h = F.gelu(_lin(x, sd, b + "intermediate.dense"))
        x = _ln(_lin(h, sd, b + "output.dense") + x, sd, b + "output.LayerNorm", 1e-12)
    return _lin(x[:, 0], sd, "text_proj")


def _bert_rows(vocab, texts, ctx):
    """The script's BertTokenizer(padding='max_length', truncation=True), via the tokenizers library."""
    from tokenizers import BertWordPieceTokenizer
    tok = BertWordPieceTokenizer(str(vocab), lowercase=True)
    tok.enable_truncation(ctx)
    tok.enable_padding(length=ctx, pad_id=0)
    return torch.tensor([e.ids for e in tok.encode_batch(list(texts))], dtype=torch.long)


def test_albef_embeddings_equal_a_plain_torch_forward(albef_checkpoint, loaded_albef, family_models_dir):
    sd, _ = albef_checkpoint
    rows = _bert_rows(family_models_dir / "bert-base-uncased" / "vocab.txt", TEXTS, 512)
    pixels = torch.stack([loaded_albef.preprocess(im) for im in _images()])
    assert pixels.shape[-2:] == (384, 384)
    with torch.no_grad():
        ref_t = albef_reference_text(sd, rows, family_fixtures.ALBEF_TINY["text_layers"])
        ref_i = albef_reference_image(sd, pixels)
        ours_t, ours_i = loaded_albef.model.encode_text(rows), loaded_albef.model.encode_image(pixels)
        with_fusion = albef_reference_text(sd, rows, family_fixtures.ALBEF_TINY["text_layers"] + 1)
    assert torch.allclose(ours_t, ref_t, atol=1e-5, rtol=0) and torch.allclose(ours_i, ref_i, atol=1e-5, rtol=0)
    assert (with_fusion - ref_t).abs().max() > 1e-3            # running a fusion layer would be seen
    ids = tokenizing.tokenize(loaded_albef.tokenizer, TEXTS, loaded_albef.spec.truncation).ids
    assert [list(i) for i in ids] == [r[r != 0].tolist() for r in rows]   # [CLS] … [SEP], as the script


def test_albef_every_checkpoint_tensor_is_consumed_or_ignored_by_name(albef_checkpoint):
    from crepe_utils.models import albef
    sd, _ = albef_checkpoint
    parts, ignored = albef.split_state_dict(sd)
    used = sum(len(p) for p in parts.values())
    assert used + len(ignored) == len(sd)
    reasons = set(ignored.values())
    assert len(reasons) == 6 and not any(k.startswith(("visual_encoder.", "vision_proj.", "text_proj."))
                                         for k in ignored)
    assert {k for k in ignored if k.startswith("text_encoder.encoder.layer.")} == {k.replace("bert.", "") for k in sd
                                                       if "text_encoder.bert.encoder.layer.2." in k}
    model, dims = albef.build(parts)                            # strict loads: no tensor missing or left over
    assert dims["text_layers"] == 2 and dims["vision_layers"] == 2 and dims["image_res"] == 384
    n_params = sum(t.numel() for t in model.state_dict().values())
    assert n_params == sum(t.numel() for p in parts.values() for t in p.values()) + (577 - 257) * 64
    with pytest.raises(ModelError, match="outside its known layout"):
        albef.split_state_dict({**sd, "visual_encoder_x.extra": torch.zeros(1)})
    bad = {**parts, "text_proj": {"weight": torch.zeros(16, 32), "bias": torch.zeros(16)}}
    with pytest.raises(RuntimeError, match="size mismatch"):
        albef.build(bad)


def test_albef_preprocessing_is_the_scripts_square_bicubic_resize(loaded_albef):
    mean, std = torch.tensor(albef.OPENAI_MEAN)[:, None, None], torch.tensor(albef.OPENAI_STD)[:, None, None]
    for im in _images(5):
        ref = torch.from_numpy(np.asarray(im.resize((384, 384), Image.BICUBIC), dtype=np.float32) / 255.0)
        ref = (ref.permute(2, 0, 1) - mean) / std
        assert torch.allclose(loaded_albef.preprocess(im), ref, atol=1e-6)


def test_albef_length_cutting_is_exact(loaded_albef):
    assert encoders.cut_text_forward(loaded_albef.model) is not None
    cut = encoders.encode_texts(loaded_albef, TEXTS, length_cut=True)
    full = encoders.encode_texts(loaded_albef, TEXTS, length_cut=False)
    assert np.abs(cut - full).max() < 1e-6


def test_albef_missing_checkpoint_or_vocabulary_is_a_clear_error(tmp_path, monkeypatch, albef_checkpoint):
    monkeypatch.setenv("CREPE_MODELS", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match=r"(?s)weights not found at .*ALBEF\.pth.*storage\.googleapis\.com"):
        models.load_model("albef-14m", device="cpu")
    with pytest.raises(ModelError, match=r"(?s)bert-base-uncased vocabulary.*bert-base-uncased/vocab\.txt"):
        models.load_model("albef-14m", pretrained=str(albef_checkpoint[1]), device="cpu")


from crepe_utils.models import albef  # noqa: E402  (used by the preprocessing test)


# ------------------------------------------------------------------------------ FLAVA

def test_flava_embeddings_equal_torchmultimodal(flava_checkpoint, loaded_flava, family_models_dir):
    official, _ = flava_checkpoint
    rows = _bert_rows(family_models_dir / "bert-base-uncased" / "vocab.txt", TEXTS, 512)
    pixels = torch.stack([loaded_flava.preprocess(im) for im in _images()])
    with torch.no_grad():
        ref_t = official.encode_text(rows, projection=True)[1]        # as the script: no mask passed
        ref_i = official.encode_image(pixels, projection=True)[1]
        ours_t, ours_i = loaded_flava.model.encode_text(rows), loaded_flava.model.encode_image(pixels)
        attended = official.encode_text(rows, text_mask=torch.ones_like(rows), projection=True)[1]
    assert torch.allclose(ours_t, ref_t, atol=1e-5, rtol=0) and torch.allclose(ours_i, ref_i, atol=1e-5, rtol=0)
    assert (attended - ref_t).abs().max() > 1e-3        # padding is masked: attending to it would be seen
    cut = encoders.encode_texts(loaded_flava, TEXTS, length_cut=True)
    full = encoders.encode_texts(loaded_flava, TEXTS, length_cut=False)
    assert np.abs(cut - full).max() < 1e-6


def test_flava_preprocessing_equals_flava_image_transform(loaded_flava, flava_checkpoint):
    from torchmultimodal.transforms.flava_transform import FLAVAImageTransform
    official = FLAVAImageTransform(is_train=False)
    for im in _images(7):
        assert torch.allclose(loaded_flava.preprocess(im), official(im)["image"], atol=1e-6)


def test_flava_every_checkpoint_tensor_is_consumed_or_ignored_by_name(flava_checkpoint):
    from crepe_utils.models import flava
    official, _ = flava_checkpoint
    sd = official.state_dict()
    parts, ignored = flava.split_state_dict(sd)
    assert sum(len(p) for p in parts.values()) + len(ignored) == len(sd)
    assert all(k.startswith(("mm_encoder.", "image_to_mm", "text_to_mm")) or ".pooler." in k for k in ignored)
    assert any(k.startswith("mm_encoder.") for k in ignored)
    flava.build(parts)                                      # strict loads
    with pytest.raises(ModelError, match="outside torchmultimodal's FLAVAModel layout"):
        flava.split_state_dict({**sd, "itm_head.weight": torch.zeros(2)})


def test_flava_missing_checkpoint_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CREPE_MODELS", str(tmp_path))
    with pytest.raises(ModelError, match=r"(?s)FLAVA weights not found at .*download\.pytorch\.org"):
        models.load_model("flava", device="cpu")


# ------------------------------------------------------------------------------ Hugging Face CLIP, open_clip hub names

def test_hf_clip_equals_the_transformers_pipeline(hf_clip_folder, loaded_hf_clip):
    """Our path (engine tokenization, 0-padding, batches cut to length, PIL crops) against transformers'
    own usage: its processor pads with its pad token to 77 and passes the attention mask."""
    import transformers as tf
    from open_clip.tokenizer import SimpleTokenizer
    model = tf.CLIPModel.from_pretrained(hf_clip_folder).eval()
    tok = tf.AutoTokenizer.from_pretrained(hf_clip_folder)
    proc = tf.CLIPImageProcessor.from_pretrained(hf_clip_folder)
    texts = TEXTS[:4]
    batch = tok(texts, padding="max_length", max_length=77, truncation=True, return_tensors="pt")
    with torch.no_grad():
        ref_t = F.normalize(model.get_text_features(**batch).pooler_output, dim=-1).numpy()
        ref_i = F.normalize(model.get_image_features(**proc(images=_images(), return_tensors="pt")).pooler_output,
                            dim=-1).numpy()
    ours_t = encoders.encode_texts(loaded_hf_clip, texts)
    ours_i = encoders.encode_images(loaded_hf_clip, _images())
    assert np.abs(ours_t - ref_t).max() < 1e-5 and np.abs(ours_i - ref_i).max() < 1e-5
    openai = SimpleTokenizer()                                   # HF's CLIP tokenizer is OpenAI's BPE
    assert [list(i) for i in tokenizing.tokenize(loaded_hf_clip.tokenizer, texts).ids] == \
        [[49406] + openai.encode(t) + [49407] for t in texts]
    assert loaded_hf_clip.spec.quick_gelu is True and loaded_hf_clip.spec.family == "hf_clip"
    assert loaded_hf_clip.spec.checkpoint_sha256 == hashlib.sha256(
        (hf_clip_folder / "model.safetensors").read_bytes()).hexdigest()


def test_hf_clip_guards(hf_clip_folder, tmp_path):
    import shutil
    bad = tmp_path / "bad-crop"
    shutil.copytree(hf_clip_folder, bad)
    import json
    cfg = json.loads((bad / "preprocessor_config.json").read_text())
    cfg["crop_size"] = {"height": 48, "width": 48}
    (bad / "preprocessor_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelError, match="crops to 48 px but the vision tower takes 32 px"):
        models.load_model(f"transformers:{bad}", device="cpu")
    with pytest.raises(ModelError, match="could not read the Hugging Face config"):
        models.load_model(f"transformers:{tmp_path / 'nothing'}", device="cpu")
    with pytest.raises(ModelError, match="drop --pretrained"):
        models.resolve(f"transformers:{hf_clip_folder}", "x.pt")


def test_open_clip_local_dir_names_load_with_their_activation(tmp_path):
    """open_clip's hub layout (open_clip_config.json + weights) through a local-dir: name, as hf-hub: names load."""
    import json

    import open_clip
    folder = tmp_path / "oc"
    folder.mkdir()
    cfg = {**helpers.TINY_CONFIG, "quick_gelu": True}
    (folder / "open_clip_config.json").write_text(json.dumps({"model_cfg": cfg, "preprocess_cfg": {}}))
    torch.manual_seed(0)
    ref = open_clip.CLIP(**{k: v for k, v in cfg.items()}).eval()
    torch.save(ref.state_dict(), folder / "open_clip_pytorch_model.bin")
    loaded = models.load_model(f"local-dir:{folder}", device="cpu")
    assert loaded.spec.family == "open_clip" and loaded.spec.quick_gelu is True
    ids = loaded.tokenizer(TEXTS[:2])
    with torch.no_grad():
        assert torch.allclose(loaded.model.encode_text(ids), ref.encode_text(ids), atol=1e-6)


# ------------------------------------------------------------------------------ outputs carry the caveat

def test_albef_results_carry_the_visual_genome_caveat_to_manifest_and_tables(loaded_albef, synthetic_root, tmp_path):
    import json

    from crepe_utils.benchmarks.crepe import analysis as analysis
    from crepe_utils.evaluation import evaluate
    from crepe_utils.results import store as results
    data_dir, image_dir = synthetic_root
    evaluate(loaded_albef, "productivity", data_dir=data_dir, image_dir=image_dir, out=tmp_path, complexities=(4,), hn_types=["atom"], cache_dir=False, progress=False, n_boot=10, limit=3)
    manifest = json.loads(next(tmp_path.rglob("manifest.json")).read_text())
    assert "Visual Genome" in manifest["caveat"] and manifest["model"]["family"] == "albef"
    assert manifest["engine"]["truncation"] == "keep_eot" and manifest["model"]["libraries"]["transformers"]
    table = analysis.productivity_evaluated(results.load_results(tmp_path))
    assert set(table["model"]) == {"albef-14m"} and table["note"].str.contains("Visual Genome").all()
    assert analysis.model_note("laion400m-vit-b-32") == "" and analysis.model_note("hf-x") == analysis.OUTSIDE_PAPER
