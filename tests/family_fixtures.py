"""Tiny random checkpoints in the real on-disk layouts of CyCLIP, ALBEF and FLAVA, written from
each project's published parameter names (not from crepe_utils), and a tiny BERT vocabulary."""
from __future__ import annotations

from pathlib import Path

import helpers

BERT_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def write_vocab(path: Path) -> Path:
    """A WordPiece vocabulary: BERT's special tokens first ([PAD] = 0), the fixture words, a suffix."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(BERT_SPECIAL + sorted(set(helpers.WORDS)) + ["##s", ".", ","]) + "\n")
    return path


def _rand(g, *shape, scale=0.05, around=0.0):
    import torch
    return around + scale * torch.randn(*shape, generator=g)


# ------------------------------------------------------------------------------ CyCLIP

def openai_clip_module(name: str):
    """A module of OpenAI's CLIP code as packaged by clip-anytorch (``model``, ``simple_tokenizer``), or
    None when it is not installed. Loaded by file: the package's __init__ needs pkg_resources, which
    current setuptools no longer ships, and these two modules need nothing of it."""
    import importlib.util
    import sys
    found = importlib.util.find_spec("clip")
    if found is None or not found.submodule_search_locations:
        return None
    qualified = f"_openai_clip_{name}"
    if qualified not in sys.modules:
        path = Path(list(found.submodule_search_locations)[0]) / f"{name}.py"
        spec = importlib.util.spec_from_file_location(qualified, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[qualified] = module
    return sys.modules[qualified]


def openai_rn_state_dict(seed=0, width=8, layers=(1, 1, 1, 1), image_size=64, embed_dim=32, text_width=64,
                         text_layers=1, context_length=77, vocab_size=49408) -> dict:
    """A random OpenAI-CLIP ResNet state dict (OpenAI's parameter names), via clip-anytorch's model."""
    import torch
    CLIP = openai_clip_module("model").CLIP
    torch.manual_seed(seed)
    model = CLIP(embed_dim, image_size, layers, width, None, context_length, vocab_size, text_width,
                 text_width // 64, text_layers)
    sd = model.state_dict()
    g = torch.Generator().manual_seed(seed + 1)
    # batch-norm statistics and a non-trivial logit scale: nothing left at its initial value
    for k in list(sd):
        if k.endswith("running_var"):
            sd[k] = 0.5 + torch.rand(sd[k].shape, generator=g)
        elif k.endswith("running_mean"):
            sd[k] = _rand(g, *sd[k].shape, scale=0.1)
        elif sd[k].is_floating_point() and sd[k].dim() > 0:
            # values that fp16 cannot hold exactly, so an fp16 round trip would show
            sd[k] = sd[k] + _rand(g, *sd[k].shape, scale=1e-3)
    return sd


def write_cyclip_checkpoint(path: Path, sd: dict) -> Path:
    """CyCLIP's layout: {'epoch', 'name', 'state_dict': {'module.' + key}, 'optimizer'}."""
    import torch
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"epoch": 64, "name": "cyclip", "state_dict": {"module." + k: v for k, v in sd.items()},
                "optimizer": {"state": {}, "param_groups": [{"lr": 5e-4}]}}, path)
    return path


# ------------------------------------------------------------------------------ ALBEF

ALBEF_TINY = dict(width=64, patch=16, vision_layers=2, pretrain_res=256, hidden=64, text_layers=2, fusion_layers=1,
                  vocab=40, embed=16, queue=8)


def _bert_layer(g, prefix, h, inter, cross=False) -> dict:
    out = {}

    def dense(name, n_out, n_in):          # weight, then bias: the generator's draw order
        out[f"{name}.weight"] = _rand(g, n_out, n_in, scale=0.2)
        out[f"{name}.bias"] = _rand(g, n_out)

    def norm(name):
        out[f"{name}.weight"] = _rand(g, h, scale=0.1, around=1.0)
        out[f"{name}.bias"] = _rand(g, h)

    for b in ["attention"] + (["crossattention"] if cross else []):
        for n in ("query", "key", "value"):
            dense(f"{prefix}.{b}.self.{n}", h, h)
        dense(f"{prefix}.{b}.output.dense", h, h)
        norm(f"{prefix}.{b}.output.LayerNorm")
    dense(f"{prefix}.intermediate.dense", inter, h)
    dense(f"{prefix}.output.dense", h, inter)
    norm(f"{prefix}.output.LayerNorm")
    return out


def _vit(g, prefix, c) -> dict:
    d, p = c["width"], c["patch"]
    n = (c["pretrain_res"] // p) ** 2
    out = {f"{prefix}.cls_token": _rand(g, 1, 1, d, scale=0.5), f"{prefix}.pos_embed": _rand(g, 1, n + 1, d, scale=0.5),
           f"{prefix}.patch_embed.proj.weight": _rand(g, d, 3, p, p), f"{prefix}.patch_embed.proj.bias": _rand(g, d),
           f"{prefix}.norm.weight": _rand(g, d, scale=0.1, around=1.0), f"{prefix}.norm.bias": _rand(g, d)}
    for i in range(c["vision_layers"]):
        b = f"{prefix}.blocks.{i}"
        out.update({f"{b}.norm1.weight": _rand(g, d, scale=0.1, around=1.0), f"{b}.norm1.bias": _rand(g, d),
                    f"{b}.attn.qkv.weight": _rand(g, 3 * d, d, scale=0.2), f"{b}.attn.qkv.bias": _rand(g, 3 * d),
                    f"{b}.attn.proj.weight": _rand(g, d, d, scale=0.2), f"{b}.attn.proj.bias": _rand(g, d),
                    f"{b}.norm2.weight": _rand(g, d, scale=0.1, around=1.0), f"{b}.norm2.bias": _rand(g, d),
                    f"{b}.mlp.fc1.weight": _rand(g, 4 * d, d, scale=0.2), f"{b}.mlp.fc1.bias": _rand(g, 4 * d),
                    f"{b}.mlp.fc2.weight": _rand(g, d, 4 * d, scale=0.2), f"{b}.mlp.fc2.bias": _rand(g, d)})
    return out


def _bert(g, prefix, c) -> dict:
    import torch
    h = c["hidden"]
    out = {f"{prefix}.embeddings.word_embeddings.weight": _rand(g, c["vocab"], h, scale=0.5),
           f"{prefix}.embeddings.position_embeddings.weight": _rand(g, 512, h, scale=0.5),
           f"{prefix}.embeddings.token_type_embeddings.weight": _rand(g, 2, h, scale=0.5),
           f"{prefix}.embeddings.LayerNorm.weight": _rand(g, h, scale=0.1, around=1.0),
           f"{prefix}.embeddings.LayerNorm.bias": _rand(g, h),
           f"{prefix}.embeddings.position_ids": torch.arange(512).unsqueeze(0)}
    for i in range(c["text_layers"] + c["fusion_layers"]):
        out.update(_bert_layer(g, f"{prefix}.encoder.layer.{i}", h, 4 * h, cross=i >= c["text_layers"]))
    return out


def albef_state_dict(seed=0, config=None) -> dict:
    """A random ALBEF pre-training state dict: ALBEF's model_pretrain.py parameter names."""
    import torch
    c = {**ALBEF_TINY, **(config or {})}
    g = torch.Generator().manual_seed(seed)
    sd = {}
    for suffix in ("", "_m"):
        sd.update(_vit(g, f"visual_encoder{suffix}", c))
        sd.update(_bert(g, f"text_encoder{suffix}.bert", c))
        sd[f"vision_proj{suffix}.weight"] = _rand(g, c["embed"], c["width"], scale=0.2)
        sd[f"vision_proj{suffix}.bias"] = _rand(g, c["embed"])
        sd[f"text_proj{suffix}.weight"] = _rand(g, c["embed"], c["hidden"], scale=0.2)
        sd[f"text_proj{suffix}.bias"] = _rand(g, c["embed"])
        sd[f"text_encoder{suffix}.cls.predictions.bias"] = _rand(g, c["vocab"])
        sd[f"text_encoder{suffix}.cls.predictions.transform.dense.weight"] = _rand(g, c["hidden"], c["hidden"])
        sd[f"text_encoder{suffix}.cls.predictions.transform.dense.bias"] = _rand(g, c["hidden"])
        sd[f"text_encoder{suffix}.cls.predictions.transform.LayerNorm.weight"] = _rand(g, c["hidden"], around=1.0)
        sd[f"text_encoder{suffix}.cls.predictions.transform.LayerNorm.bias"] = _rand(g, c["hidden"])
        sd[f"text_encoder{suffix}.cls.predictions.decoder.weight"] = _rand(g, c["vocab"], c["hidden"])
        sd[f"text_encoder{suffix}.cls.predictions.decoder.bias"] = _rand(g, c["vocab"])
    sd.update({"itm_head.weight": _rand(g, 2, c["hidden"]), "itm_head.bias": _rand(g, 2),
               "temp": torch.tensor(0.07), "image_queue": _rand(g, c["embed"], c["queue"]),
               "text_queue": _rand(g, c["embed"], c["queue"]), "queue_ptr": torch.zeros(1, dtype=torch.long)})
    return sd


def write_albef_checkpoint(path: Path, sd: dict) -> Path:
    """ALBEF's layout: {'model': state dict, 'optimizer', 'lr_scheduler', 'config', 'epoch'}."""
    import torch
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": sd, "optimizer": {"state": {}, "param_groups": []}, "lr_scheduler": {"last_epoch": 29},
                "config": {"image_res": 256, "embed_dim": 16}, "epoch": 29}, path)
    return path


# ------------------------------------------------------------------------------ FLAVA

FLAVA_TINY = dict(image_hidden_size=64, image_num_attention_heads=1, image_num_hidden_layers=2,
                  image_intermediate_size=128, image_size=224, text_hidden_size=64, text_num_attention_heads=1,
                  text_num_hidden_layers=2, text_intermediate_size=128, multimodal_hidden_size=64,
                  multimodal_num_attention_heads=1, multimodal_num_hidden_layers=1, multimodal_intermediate_size=128,
                  vocab_size=40, text_and_image_proj_size=16)


def torchmultimodal_flava(seed=0):
    """A tiny random torchmultimodal FLAVAModel (the official code), every parameter perturbed, or None."""
    import importlib.util
    if importlib.util.find_spec("torchmultimodal") is None:
        return None
    import torch
    from torchmultimodal.models.flava.model import flava_model
    torch.manual_seed(seed)
    model = flava_model(**FLAVA_TINY).eval()
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(_rand(g, *p.shape, scale=0.1))
    return model


def write_flava_checkpoint(path: Path, model) -> Path:
    """torchmultimodal's layout: FLAVAModel's state dict, as load_module_from_url reads it."""
    import torch
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), path)
    return path


# ------------------------------------------------------------------------------ Hugging Face CLIP

def write_hf_clip(folder: Path, seed=0) -> Path:
    """A tiny random transformers CLIPModel saved with save_pretrained, with a CLIP tokenizer (OpenAI's
    BPE vocabulary and merges, taken from open_clip's copy) and a CLIPImageProcessor."""
    import json

    import torch
    import transformers as tf
    from open_clip.tokenizer import SimpleTokenizer
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    bpe = SimpleTokenizer()
    # open_clip names the special tokens <start_of_text>/<end_of_text>; OpenAI's (and HF's) names carry bars
    names = {"<start_of_text>": "<|startoftext|>", "<end_of_text>": "<|endoftext|>"}
    (folder / "vocab.json").write_text(json.dumps({names.get(k, k): v for k, v in bpe.encoder.items()}))
    merges = sorted(bpe.bpe_ranks, key=bpe.bpe_ranks.get)
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(" ".join(m) for m in merges) + "\n")
    tok = tf.CLIPTokenizer(vocab=str(folder / "vocab.json"), merges=str(folder / "merges.txt"))
    tok.model_max_length = 77
    tok.save_pretrained(folder)
    tf.CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(folder)
    torch.manual_seed(seed)
    config = tf.CLIPConfig(
        text_config=dict(vocab_size=49408, hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                         num_attention_heads=1, max_position_embeddings=77, bos_token_id=49406, eos_token_id=49407,
                         hidden_act="quick_gelu"),
        vision_config=dict(hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=1,
                           image_size=32, patch_size=16, hidden_act="quick_gelu"), projection_dim=16)
    tf.CLIPModel(config).save_pretrained(folder)
    return folder
