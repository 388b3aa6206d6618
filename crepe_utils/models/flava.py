"""FLAVA (Singh et al., CVPR 2022) as CREPE's ``crepe_prod_eval_flava.py`` scores it.

The official script loads torchmultimodal's ``flava_model(pretrained=True)`` (the ``flava_full``
checkpoint, ``flava_model_unified_text_encoder.pt``) and uses its contrastive features:
``encode_image(images, projection=True)`` and ``encode_text(texts, projection=True)``, the
projections of the CLS hidden state of each unimodal encoder. Images go through
``FLAVAImageTransform(is_train=False)``: a bicubic resize to 224 × 224 (both sides: no crop), then
OpenAI mean/std. Texts are BERT-tokenized (``bert-base-uncased``), padded to 512 with
``truncation=True``; no mask is passed, and torchmultimodal's text encoder then masks the ``[PAD]``
(0) positions itself, so padding is inert and cutting a batch to its longest caption is exact.

torchmultimodal has no release for current PyTorch, so we load that same checkpoint into Hugging
Face ``transformers``' FLAVA image and text encoders (same architecture: pre-norm ViT / BERT
layers, final LayerNorm) through an explicit key mapping. The multimodal encoder and the poolers are
unused by contrastive scoring and are ignored by name.
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

KEY = "flava"
IMAGE_SIZE = 224                 #: FLAVAImageTransform encoder_input_size
CONTEXT_LENGTH = 512             #: the script's max_text_length

#: torchmultimodal layer names → transformers' FLAVA layer names (within encoder.layer.N.)
_LAYER = (
    ("attention.query.", "attention.attention.query."), ("attention.key.", "attention.attention.key."),
    ("attention.value.", "attention.attention.value."), ("attention.output.", "attention.output.dense."),
    ("feedforward.model.0.", "intermediate.dense."), ("feedforward.model.2.", "output.dense."),
    ("attention_layernorm.", "layernorm_before."), ("feedforward_layernorm.", "layernorm_after."),
)
IGNORED = (
    (r"^mm_encoder\.", "multimodal encoder (not used by contrastive scores)"),
    (r"^(image_to_mm_projection|text_to_mm_projection)\.", "projections into the multimodal encoder"),
    (r"^(image_encoder|text_encoder)\.pooler\.", "poolers (features are the CLS hidden state)"),
    (r"^text_encoder\.embeddings\.position_ids$", "a constant buffer (0, 1, 2, …)"),
)


def resolve(model: str, pretrained: str | None = None, model_config=None) -> ModelSpec:
    return placed_checkpoint_spec(model, pretrained, model_config, "flava", CONTEXT_LENGTH)


def _rename(name: str) -> str:
    for old, new in _LAYER:
        name = re.sub(r"(encoder\.layer\.\d+\.)" + re.escape(old), r"\g<1>" + new, name)
    return name.replace("embeddings.layer_norm.", "embeddings.LayerNorm.")


def split_state_dict(sd: dict) -> tuple[dict[str, dict], dict[str, str]]:
    """torchmultimodal FLAVAModel state dict → ({part: transformers state dict}, {ignored key: why})."""
    parts: dict[str, dict] = {"image": {}, "text": {}, "image_projection": {}, "text_projection": {}}
    ignored, unknown = {}, []
    for k, v in sd.items():
        why = next((w for pattern, w in IGNORED if re.match(pattern, k)), None)
        if why is not None:
            ignored[k] = why
        elif k.startswith(("image_encoder.", "text_encoder.")):
            part, name = k.split(".", 1)
            parts[part.removesuffix("_encoder")][_rename(name)] = v
        elif k.startswith(("image_projection.", "text_projection.")):
            part, name = k.split(".", 1)
            parts[part][name] = v
        else:
            unknown.append(k)
    if unknown:
        raise ModelError(f"FLAVA checkpoint has {len(unknown)} entries outside torchmultimodal's FLAVAModel layout "
                         f"(first: {', '.join(unknown[:5])}); expected image_encoder.*, text_encoder.*, "
                         "image_projection.*, text_projection.*, mm_encoder.*")
    return parts, ignored


def _dims(parts: dict) -> dict:
    im, tx = parts["image"], parts["text"]
    width = int(im["embeddings.cls_token"].shape[-1])
    hidden = int(tx["embeddings.word_embeddings.weight"].shape[1])
    patch = int(im["embeddings.patch_embeddings.projection.weight"].shape[-1])
    grid = int(round((im["embeddings.position_embeddings"].shape[1] - 1) ** 0.5))
    count = lambda p: len({k.split(".")[2] for k in p if k.startswith("encoder.layer.")})  # noqa: E731
    return {"image_size": grid * patch, "patch_size": patch, "image_width": width, "image_layers": count(im),
            "image_heads": width // 64, "image_mlp": int(im["encoder.layer.0.intermediate.dense.weight"].shape[0]),
            "vocab_size": int(tx["embeddings.word_embeddings.weight"].shape[0]), "text_width": hidden,
            "text_layers": count(tx), "text_heads": hidden // 64,
            "text_mlp": int(tx["encoder.layer.0.intermediate.dense.weight"].shape[0]),
            "max_positions": int(tx["embeddings.position_embeddings.weight"].shape[0]),
            "type_vocab_size": int(tx["embeddings.token_type_embeddings.weight"].shape[0]),
            "embed_dim": int(parts["text_projection"]["weight"].shape[0])}


def _encoder_class():
    import torch

    class FlavaContrastive(torch.nn.Module):
        """FLAVA's contrastive features: projections of the CLS hidden state of each unimodal encoder."""

        length_cut_exact = True

        def __init__(self, image, text, image_projection, text_projection):
            super().__init__()
            self.visual, self.text = image, text
            self.image_projection, self.text_projection = image_projection, text_projection

        def encode_image(self, pixels):
            return self.image_projection(self.visual(pixel_values=pixels).last_hidden_state[:, 0])

        def encode_text(self, ids):
            return self.text_projection(bert.cls_features(self.text, ids))

    return FlavaContrastive


def build(parts: dict):
    """The contrastive FLAVA model holding ``parts``' weights (strict loads)."""
    import torch
    tf = require("transformers", "flava", "FLAVA")
    d = _dims(parts)
    image = tf.FlavaImageModel(tf.FlavaImageConfig(
        hidden_size=d["image_width"], num_hidden_layers=d["image_layers"], num_attention_heads=d["image_heads"],
        intermediate_size=d["image_mlp"], image_size=d["image_size"], patch_size=d["patch_size"],
        layer_norm_eps=1e-12, hidden_act="gelu", qkv_bias=True, mask_token="embeddings.mask_token" in parts["image"],
        attn_implementation="eager"), add_pooling_layer=False)
    text = tf.FlavaTextModel(tf.FlavaTextConfig(
        vocab_size=d["vocab_size"], hidden_size=d["text_width"], num_hidden_layers=d["text_layers"],
        num_attention_heads=d["text_heads"], intermediate_size=d["text_mlp"], max_position_embeddings=d["max_positions"],
        type_vocab_size=d["type_vocab_size"], layer_norm_eps=1e-12, hidden_act="gelu", pad_token_id=0,
        attn_implementation="eager"), add_pooling_layer=False)
    heads = [torch.nn.Linear(d["image_width"], d["embed_dim"]), torch.nn.Linear(d["text_width"], d["embed_dim"])]
    for module, sd in ((image, parts["image"]), (text, parts["text"]), (heads[0], parts["image_projection"]),
                       (heads[1], parts["text_projection"])):
        module.load_state_dict(sd, strict=True)
    return _encoder_class()(image, text, *heads).eval(), d


def load(spec: ModelSpec, device: str = "auto", cache_dir=None) -> LoadedModel:
    path = Path(spec.pretrained)
    if not path.is_file():
        url = checkpoints.checkpoint(KEY).weights_url
        raise ModelError(f"FLAVA weights not found at {path}. The official script uses torchmultimodal's flava_full "
                         f"checkpoint: `curl -L -o {path} {url}`, or pass its path with --pretrained "
                         "(CREPE_MODELS sets the folder).")
    sd = load_torch_file(path, "FLAVA")
    if isinstance(sd, dict) and "state_dict" in sd:
        sd = sd["state_dict"]
    if not isinstance(sd, dict) or "image_encoder.embeddings.cls_token" not in sd:
        raise ModelError(f"checkpoint {path} is not torchmultimodal's FLAVAModel state dict (no "
                         "image_encoder.embeddings.cls_token)")
    parts, ignored = split_state_dict(sd)
    try:
        model, dims = build(parts)
    except (RuntimeError, KeyError, ValueError) as exc:
        raise ModelError(f"checkpoint {path} does not fit FLAVA's architecture: {str(exc)[:400]}") from None
    dev = pick_device(device)
    tokenizer = bert.BertTokenizer(bert.vocab_file(), CONTEXT_LENGTH, extra="flava")
    size = dims["image_size"]
    transform, record = squash_transform(size)
    spec = spec.replace(checkpoint_path=str(path), checkpoint_sha256=sha256_file(path), model_config=dims,
                        preprocess={**record, "vocab_sha256": sha256_file(tokenizer.vocab)},
                        libraries=library_versions("transformers", "tokenizers", "torch"))
    return LoadedModel(model=model.to(dev), preprocess=transform, tokenizer=tokenizer, spec=spec,
                       device=dev)


FAMILY = Family("flava", "torchmultimodal flava_full weights in transformers' FLAVA encoders (placed checkpoint)",
                resolve, load, extra="flava")
