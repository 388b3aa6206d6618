"""ALBEF (Li et al., NeurIPS 2021), 14M checkpoint, scored as CREPE's ``crepe_prod_eval_albef.py`` does.

The official script scores with ALBEF's contrastive (ITC) heads: the image goes through the ViT-B/16
visual encoder at 384 px (``configs/Retrieval_coco.yaml``; the checkpoint's position embeddings are
interpolated bicubically from its pre-training grid), and the ``vision_proj`` of the CLS token is
the image feature; the text goes through the BERT text encoder in text-only mode (the layers before
the fusion layers; ``mode='text'``) with the attention mask of its padding, and the ``text_proj``
of CLS is the text feature. Texts are BERT-tokenized, padded to 512 with ``truncation=True``.

We build the same computation from maintained parts: timm's ``VisionTransformer`` and transformers'
``BertModel``, sized from the checkpoint, with an explicit key mapping from ALBEF's layout
(``visual_encoder.*``, ``text_encoder.bert.*``, ``vision_proj.*``, ``text_proj.*``). Every other
tensor of the checkpoint is ignored by name (:data:`IGNORED`, with the reason); anything else is an
error. The attention mask makes padding inert and positions are absolute, so cutting a batch to its
longest caption is exact.
"""
from __future__ import annotations

import re
from pathlib import Path

from . import checkpoints
from ..errors import ModelError
from . import bert
from .family import Family
from ..digests import sha256_file
from .spec import (LoadedModel, ModelSpec, library_versions, load_torch_file, pick_device, placed_checkpoint_spec, require, squash_transform)
from .spec import OPENAI_MEAN, OPENAI_STD  # noqa: F401 - the statistics of the script's transform
from functools import partial

KEY = "albef-14m"
IMAGE_RES = 384                  #: configs/Retrieval_coco.yaml image_res
CONTEXT_LENGTH = 512             #: the script's max_text_length

#: checkpoint entries that ITC scoring does not use: (pattern, why)
IGNORED = (
    (r"^(visual_encoder_m|text_encoder_m|vision_proj_m|text_proj_m)\.", "momentum encoders (training only)"),
    (r"^itm_head\.", "image-text matching head (not the contrastive score)"),
    (r"^(temp|image_queue|text_queue|idx_queue|queue_ptr)$", "contrastive temperature and queues (training only)"),
    (r"^text_encoder\.cls\.", "masked-language-modelling head"),
    (r"^text_encoder\.pooler\.", "BERT pooler (mode='text' features are the CLS hidden state)"),
    (r"^text_encoder\.embeddings\.position_ids$", "a constant buffer (0, 1, 2, …)"),
    (r"^text_encoder\.encoder\.layer\.\d+\.", "fusion layers (cross-attention to the image; ITM/MLM only)"),
)


def resolve(model: str, pretrained: str | None = None, model_config=None) -> ModelSpec:
    return placed_checkpoint_spec(model, pretrained, model_config, "albef", CONTEXT_LENGTH)


# ------------------------------------------------------------------------------ the checkpoint

def _missing_message(path: Path) -> str:
    row = checkpoints.checkpoint(KEY)
    return (f"{row.display} weights not found at {path}. Download the 14M checkpoint named in ALBEF's README "
            f"({row.weights_url}), e.g. `curl -L -o {path} {row.weights_url}`, or pass its path with --pretrained "
            "(CREPE_MODELS sets the folder).")


def split_state_dict(sd: dict) -> tuple[dict[str, dict], dict[str, str]]:
    """ALBEF's state dict → ({part: state dict}, {ignored key: why}); unknown keys are a ModelError.

    Parts: ``vision`` (timm names), ``text`` (transformers BertModel names, text-only layers
    renumbered from 0), ``vision_proj``, ``text_proj``. Text-only layers are those without
    cross-attention, which ALBEF adds to its fusion layers only.
    """
    sd = {re.sub(r"^text_encoder\.bert\.", "text_encoder.", k): v for k, v in sd.items()}
    layers = {int(m.group(1)) for k in sd if (m := re.match(r"^text_encoder\.encoder\.layer\.(\d+)\.", k))}
    fusion = {int(m.group(1)) for k in sd
              if (m := re.match(r"^text_encoder\.encoder\.layer\.(\d+)\.crossattention\.", k))}
    text_layers = sorted(layers - fusion)
    if not text_layers or text_layers != list(range(len(text_layers))) or (fusion and min(fusion) < len(text_layers)):
        raise ModelError(f"ALBEF text encoder layers {sorted(layers)} with cross-attention in {sorted(fusion)}: "
                         "expected text-only layers 0…k−1 followed by fusion layers")
    parts: dict[str, dict] = {"vision": {}, "text": {}, "vision_proj": {}, "text_proj": {}}
    ignored, unknown = {}, []
    for k, v in sd.items():
        m = re.match(r"^text_encoder\.encoder\.layer\.(\d+)\.", k)
        if k.startswith("visual_encoder."):
            parts["vision"][k.removeprefix("visual_encoder.")] = v
        elif m and int(m.group(1)) in text_layers:
            parts["text"][k.removeprefix("text_encoder.")] = v
        elif k.startswith("text_encoder.embeddings.") and not k.endswith("position_ids"):
            parts["text"][k.removeprefix("text_encoder.")] = v
        elif k.startswith(("vision_proj.", "text_proj.")):
            head, name = k.split(".", 1)
            parts[head][name] = v
        else:
            why = next((w for pattern, w in IGNORED if re.match(pattern, k)), None)
            if why is None:
                unknown.append(k)
            else:
                ignored[k] = why
    if unknown:
        raise ModelError(f"ALBEF checkpoint has {len(unknown)} entries outside its known layout (first: "
                         f"{', '.join(unknown[:5])}); expected visual_encoder.*, text_encoder.bert.*, vision_proj.*, "
                         "text_proj.* and the training-only entries")
    return parts, ignored


def interpolate_pos_embed(pos_embed, grid: int):
    """Resize a ``[1, 1 + g·g, D]`` position embedding to ``grid × grid`` patches (bicubic), CLS unchanged."""
    import torch
    import torch.nn.functional as F
    n = pos_embed.shape[1] - 1
    old = int(round(n ** 0.5))
    if old * old != n:
        raise ModelError(f"ALBEF position embedding has {n} patch positions, not a square grid")
    if old == grid:
        return pos_embed
    patches = pos_embed[:, 1:].reshape(1, old, old, -1).permute(0, 3, 1, 2)
    patches = F.interpolate(patches.float(), size=(grid, grid), mode="bicubic", align_corners=False)
    return torch.cat([pos_embed[:, :1], patches.permute(0, 2, 3, 1).flatten(1, 2).to(pos_embed.dtype)], dim=1)


def _dims(parts: dict) -> dict:
    v, t = parts["vision"], parts["text"]
    width = int(v["cls_token"].shape[-1])
    hidden = int(t["embeddings.word_embeddings.weight"].shape[1])
    return {
        "image_res": IMAGE_RES, "patch_size": int(v["patch_embed.proj.weight"].shape[-1]), "vision_width": width,
        "vision_layers": len({k.split(".")[1] for k in v if k.startswith("blocks.")}),
        "vision_heads": width // 64, "vision_mlp": int(v["blocks.0.mlp.fc1.weight"].shape[0]),
        "vocab_size": int(t["embeddings.word_embeddings.weight"].shape[0]), "text_width": hidden,
        "text_layers": len({k.split(".")[2] for k in t if k.startswith("encoder.layer.")}),
        "text_heads": hidden // 64, "text_mlp": int(t["encoder.layer.0.intermediate.dense.weight"].shape[0]),
        "max_positions": int(t["embeddings.position_embeddings.weight"].shape[0]),
        "type_vocab_size": int(t["embeddings.token_type_embeddings.weight"].shape[0]),
        "embed_dim": int(parts["vision_proj"]["weight"].shape[0]),
    }


# ------------------------------------------------------------------------------ the model

def _encoder_class():
    import torch

    class AlbefContrastive(torch.nn.Module):
        """ALBEF's ITC features: ``vision_proj``(CLS of the ViT), ``text_proj``(CLS of the text-only BERT)."""

        length_cut_exact = True

        def __init__(self, vision, text, vision_proj, text_proj):
            super().__init__()
            self.visual, self.text = vision, text
            self.vision_proj, self.text_proj = vision_proj, text_proj

        def encode_image(self, pixels):
            return self.vision_proj(self.visual.forward_features(pixels)[:, 0])

        def encode_text(self, ids):
            return self.text_proj(bert.cls_features(self.text, ids))

    return AlbefContrastive


def build(parts: dict):
    """The contrastive ALBEF model holding ``parts``' weights (every tensor consumed, strict)."""

    import torch
    timm_vit = require("timm.models.vision_transformer", "albef", "ALBEF")
    transformers = require("transformers", "albef", "ALBEF")
    d = _dims(parts)
    vision = timm_vit.VisionTransformer(
        img_size=d["image_res"], patch_size=d["patch_size"], embed_dim=d["vision_width"], depth=d["vision_layers"],
        num_heads=d["vision_heads"], mlp_ratio=d["vision_mlp"] / d["vision_width"], qkv_bias=True, num_classes=0,
        global_pool="token", class_token=True, norm_layer=partial(torch.nn.LayerNorm, eps=1e-6))
    config = transformers.BertConfig(
        vocab_size=d["vocab_size"], hidden_size=d["text_width"], num_hidden_layers=d["text_layers"],
        num_attention_heads=d["text_heads"], intermediate_size=d["text_mlp"], hidden_act="gelu",
        max_position_embeddings=d["max_positions"], type_vocab_size=d["type_vocab_size"], layer_norm_eps=1e-12,
        pad_token_id=0, attn_implementation="eager")
    text = transformers.BertModel(config, add_pooling_layer=False)
    vision_sd = dict(parts["vision"])
    vision_sd["pos_embed"] = interpolate_pos_embed(vision_sd["pos_embed"], d["image_res"] // d["patch_size"])
    heads = [torch.nn.Linear(d["vision_width"], d["embed_dim"]), torch.nn.Linear(d["text_width"], d["embed_dim"])]
    for module, sd in ((vision, vision_sd), (text, parts["text"]), (heads[0], parts["vision_proj"]),
                       (heads[1], parts["text_proj"])):
        module.load_state_dict(sd, strict=True)
    return _encoder_class()(vision, text, *heads).eval(), d


def load(spec: ModelSpec, device: str = "auto", cache_dir=None) -> LoadedModel:
    path = Path(spec.pretrained)
    if not path.is_file():
        raise ModelError(_missing_message(path))
    ckpt = load_torch_file(path, "ALBEF")
    sd = ckpt.get("model", ckpt) if isinstance(ckpt, dict) else None
    if not isinstance(sd, dict) or "visual_encoder.cls_token" not in sd:
        raise ModelError(f"checkpoint {path} is not an ALBEF checkpoint: expected {{'model': {{'visual_encoder.*', "
                         "'text_encoder.bert.*', …}}}} as ALBEF saves it")
    parts, ignored = split_state_dict(sd)
    try:
        model, dims = build(parts)
    except (RuntimeError, KeyError, ValueError) as exc:
        raise ModelError(f"checkpoint {path} does not fit ALBEF's architecture: {str(exc)[:400]}") from None
    dev = pick_device(device)
    tokenizer = bert.BertTokenizer(bert.vocab_file(), CONTEXT_LENGTH, extra="albef")
    transform, record = squash_transform(IMAGE_RES)
    spec = spec.replace(checkpoint_path=str(path), checkpoint_sha256=sha256_file(path), model_config=dims,
                        preprocess={**record, "vocab_sha256": sha256_file(tokenizer.vocab)},
                        libraries=library_versions("timm", "transformers", "tokenizers", "torch"))
    return LoadedModel(model=model.to(dev), preprocess=transform, tokenizer=tokenizer,
                       spec=spec, device=dev)


FAMILY = Family("albef", "ALBEF ITC heads: timm ViT + transformers BERT (placed checkpoint)", resolve, load,
                extra="albef")
