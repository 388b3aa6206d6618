"""The open_clip family: checkpoints of the table, a (name, tag) pair, a local checkpoint, or the hub.

Four ways in, one way out (:class:`LoadedModel`):

* a checkpoint key (``laion400m-vit-b-32``): a paper's exact checkpoint (see ``checkpoints.py``);
* an open_clip architecture and pretrained tag (``ViT-B-32-quickgelu``, ``laion400m_e32``);
* an architecture (or a model-config JSON for a custom one) and a local checkpoint file;
* an ``hf-hub:org/repo`` or ``local-dir:/path`` name, whose config and weights travel together.

Weights come through open_clip's own download and cache (Hugging Face hub, or the release URL
with its SHA-256 prefix check). Every load records what it loaded: architecture, tag or file,
SHA-256 of the checkpoint, activation, preprocessing.

The QuickGELU trap: open_clip builds whatever activation the *architecture name* says and only
warns when the weights were trained with the other one; the numbers then change silently
(2.7 ImageNet points for ViT-B-32/LAION, open_clip's results table). Here a mismatch is an
error, :class:`QuickGELUMismatch`, that says which name to use instead.
"""
from __future__ import annotations

import codecs
import difflib
import json
import os
import re
import tempfile
from pathlib import Path

from . import checkpoints
from ..errors import ModelError
from ..textfile import parse_json, read_text
from ..digests import sha256_file
from .spec import (LoadedModel, ModelSpec, QuickGELUMismatch, check_checkpoint_file, data_globals, library_versions,
                   require)
from .family import Family
from .spec import pick_device
from ..atomic import atomic_path


# ------------------------------------------------------------------------------ activation facts

def _arch_quick_gelu(architecture: str) -> bool:
    import open_clip
    cfg = open_clip.get_model_config(architecture)
    if cfg is None:
        names = [*checkpoints.keys(), *open_clip.list_models()]
        close = difflib.get_close_matches(architecture, names, n=3)
        hint = f"Did you mean {' or '.join(map(repr, close))}? " if close else ""
        raise ModelError(f"unknown model {architecture!r}: not a registry key (`python -m crepe_utils models` lists "
                         f"them) nor an open_clip architecture (open_clip.list_models()). {hint}For a custom "
                         "architecture pass --model-config JSON")
    return bool(cfg.get("quick_gelu", False))


def _tag_quick_gelu(architecture: str, tag: str) -> bool | None:
    from open_clip import pretrained as P
    cfg = P.get_pretrained_cfg(architecture, tag)
    if not cfg:
        return None
    return bool(cfg.get("quick_gelu", False))


def _known_release_files() -> dict[str, checkpoints.Checkpoint]:
    """SHA-256 prefix (from open_clip's release file names) → checkpoint row."""
    out = {}
    for m in checkpoints.of_family("open_clip"):
        if m.release_file:
            match = re.search(r"-([0-9a-f]{8})\.pt$", m.release_file)
            if match:
                out[match.group(1)] = m
    return out


def check_activation(architecture: str, weights_quick_gelu: bool | None, what: str) -> None:
    """Raise :class:`QuickGELUMismatch` when ``architecture``'s activation differs from the weights'."""
    if weights_quick_gelu is None:
        return
    arch_qg = _arch_quick_gelu(architecture)
    if arch_qg == weights_quick_gelu:
        return
    base = architecture.removesuffix("-quickgelu")
    fix = f"{base}-quickgelu" if weights_quick_gelu else base
    raise QuickGELUMismatch(
        f"{what} was trained with {'QuickGELU' if weights_quick_gelu else 'GELU'}, but architecture "
        f"{architecture!r} uses {'QuickGELU' if arch_qg else 'GELU'}. open_clip would only warn and the "
        f"results would silently change. Use architecture {fix!r} instead."
    )


# ------------------------------------------------------------------------------ resolution

def resolve(model: str, pretrained: str | None = None, model_config: str | os.PathLike | None = None) -> ModelSpec:
    """Turn the user's words into a :class:`ModelSpec` (no weights are loaded; nothing downloaded).

    Raises :class:`QuickGELUMismatch` or :class:`ModelError` for impossible combinations.
    """
    config = None
    if model_config is not None:
        config = _register_config(model_config, model)
        model = config["_name"]
    row = _table_row(model) if pretrained is None else None
    if row is not None:
        check_activation(row.architecture, row.quick_gelu, f"{row.display} ({row.pretrained})")
        return ModelSpec(key=row.key, architecture=row.architecture,
                         pretrained=row.weights_url or row.pretrained, quick_gelu=_arch_quick_gelu(row.architecture),
                         weights_quick_gelu=row.quick_gelu, display=row.display, train_data=row.train_data,
                         caveat=row.caveat)
    if model.startswith(HUB_PREFIXES):
        return _resolve_hub(model, pretrained)
    arch_qg = _arch_quick_gelu(model)
    if pretrained is None:
        return ModelSpec(key=f"{model}/random-init", architecture=model, pretrained=None, quick_gelu=arch_qg,
                         weights_quick_gelu=None, display=f"{model} (random init)", model_config=config)
    if os.path.exists(pretrained):
        known = _known_release_files()
        weights_qg, display, train, key = None, f"{model} ({Path(pretrained).name})", "other", None
        match = re.search(r"-([0-9a-f]{8})\.(pt|bin|safetensors)$", Path(pretrained).name)
        if match and match.group(1) in known:
            row = known[match.group(1)]
            weights_qg, display, train, key = row.quick_gelu, row.display, row.train_data, row.key
        check_activation(model, weights_qg, f"checkpoint {Path(pretrained).name}")
        return ModelSpec(key=key or f"{model}/{Path(pretrained).stem}", architecture=model,
                         pretrained=str(pretrained), quick_gelu=arch_qg, weights_quick_gelu=weights_qg,
                         display=display, train_data=train, model_config=config)
    if re.match(r"^https?://", pretrained):
        return ModelSpec(key=f"{model}/{Path(pretrained).stem}", architecture=model, pretrained=pretrained,
                         quick_gelu=arch_qg, weights_quick_gelu=None, display=f"{model} ({Path(pretrained).name})",
                         model_config=config)
    weights_qg = _tag_quick_gelu(model, pretrained)
    if weights_qg is None:
        import open_clip
        tags = open_clip.list_pretrained_tags_by_model(model)
        raise ModelError(f"open_clip has no pretrained tag {pretrained!r} for {model!r} and no such file exists; "
                         f"known tags: {', '.join(tags) or 'none'}")
    row = _checkpoint_row(model, pretrained)
    weights_qg = row.quick_gelu if row else weights_qg      # a table's fact outranks what the tag entry omits
    check_activation(model, weights_qg, f"open_clip weights {model}/{pretrained}")
    return ModelSpec(key=row.key if row else f"{model}/{pretrained}", architecture=model, pretrained=pretrained,
                     quick_gelu=arch_qg, weights_quick_gelu=weights_qg,
                     display=row.display if row else f"{model} ({pretrained})",
                     train_data=row.train_data if row else "other", caveat=row.caveat if row else "")


def _table_row(key: str):
    """The open_clip checkpoint a key names; None for none."""
    row = checkpoints.checkpoint(key) if key in checkpoints.keys() else None
    return row if row is not None and row.family == "open_clip" else None


def _checkpoint_row(architecture: str, tag: str):
    """The table row of open_clip's (architecture, tag), if the table has one."""
    return checkpoints.for_open_clip(architecture, tag)


#: model-name schemas open_clip resolves itself (config and weights from the hub or a folder)
HUB_PREFIXES = ("hf-hub:", "local-dir:")


def _resolve_hub(model: str, pretrained: str | None) -> ModelSpec:
    """An open_clip ``hf-hub:`` / ``local-dir:`` model: the config and weights come with the name.

    The activation guard needs the config, which sits on the hub: it runs at load time instead
    (:func:`_check_hub_activation`).
    """
    if pretrained is not None:
        raise ModelError(f"{model!r} names its weights itself; drop --pretrained {pretrained!r}")
    return ModelSpec(key=model.split(":", 1)[1].strip("/").replace("/", "--"), architecture=model, pretrained=model,
                     quick_gelu=False, weights_quick_gelu=None, display=model)


def _register_config(path: str | os.PathLike, name_hint: str | None) -> dict:
    """Register a custom model-config JSON with open_clip (under its file stem)."""
    import open_clip
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"model config {path} does not exist")
    text = read_text(path, "re-save the model config as UTF-8", ModelError)
    try:
        cfg = parse_json(text)
    except json.JSONDecodeError as exc:
        raise ModelError(f"model config {path} is not valid JSON: {exc}") from None
    missing = [k for k in ("embed_dim", "vision_cfg", "text_cfg") if k not in cfg]
    if missing:
        raise ModelError(f"model config {path} lacks {missing}; open_clip configs need embed_dim, vision_cfg, text_cfg")
    if path.read_bytes().startswith(codecs.BOM_UTF8):
        # open_clip's own JSON reader fails on a byte-order mark, then on every later registration: it gets
        # a copy without the mark, under the same stem (the entry outlives the copy).
        with tempfile.TemporaryDirectory() as tmp:
            plain = Path(tmp) / path.name
            plain.write_text(text, encoding="utf-8")
            open_clip.add_model_config(plain)
    else:
        open_clip.add_model_config(path)
    return {**cfg, "_name": path.stem}


# ------------------------------------------------------------------------------ loading

def load(spec: ModelSpec, device: str = "auto", cache_dir: str | None = None) -> LoadedModel:
    """Load a resolved open_clip model for evaluation (fp32 weights, eval mode) and record what was loaded."""
    import open_clip
    import torch
    from open_clip import pretrained as P

    dev = pick_device(device)
    _require_text_tower(spec.architecture)
    source = spec.pretrained
    checkpoint = None
    overrides: dict = {}
    if source is not None and re.match(r"^https?://", source):
        checkpoint = P.download_pretrained_from_url(source, cache_dir=cache_dir)
        source = checkpoint
        tag_cfg = _paper_tag_cfg(spec)
        overrides = {k: tag_cfg[k] for k in ("mean", "std", "interpolation", "resize_mode") if k in tag_cfg}
    elif source is not None and os.path.exists(source):
        checkpoint = source
    elif source is not None and not spec.architecture.startswith(HUB_PREFIXES):
        # a release tag: its file is fetched (or found in the cache) first, so that what it may hold beside the
        # weights is read from its content like any other file's; open_clip then loads the cached file
        try:
            checkpoint = P.download_pretrained(P.get_pretrained_cfg(spec.architecture, source),
                                               cache_dir=cache_dir) or None
        except Exception as exc:  # noqa: BLE001 - the hub and urllib raise many types without a network
            raise _checkpoint_error(spec, None, exc) from None
    allowed = []                       # weights only, always: what else a file may hold is read from its content
    if checkpoint is not None:
        check_checkpoint_file(checkpoint)
        allowed = data_globals(checkpoint)
    if spec.architecture.startswith(HUB_PREFIXES):
        source = None                  # the name carries its weights
    try:
        with torch.serialization.safe_globals(allowed):
            model_obj, _, preprocess = open_clip.create_model_and_transforms(
                spec.architecture, pretrained=source, device=dev, cache_dir=cache_dir,
                image_mean=overrides.get("mean"), image_std=overrides.get("std"),
                image_interpolation=overrides.get("interpolation"), image_resize_mode=overrides.get("resize_mode"),
                weights_only=True,
            )
    except Exception as exc:  # noqa: BLE001 - torch.load and load_state_dict raise many types for a bad file
        raise _checkpoint_error(spec, checkpoint, exc) from None
    model_obj.eval()
    tokenizer = open_clip.get_tokenizer(spec.architecture)
    pp_cfg = getattr(getattr(model_obj, "visual", None), "preprocess_cfg", {}) or {}
    if spec.architecture.startswith(HUB_PREFIXES):   # the activation is whatever the hub config says
        quick = any(isinstance(m, open_clip.transformer.QuickGELU) for m in model_obj.modules())
        spec = spec.replace(quick_gelu=quick, weights_quick_gelu=quick)
    spec = ModelSpec(**{**spec.to_dict(),
                        "checkpoint_path": str(checkpoint) if checkpoint else None,
                        "checkpoint_sha256": sha256_file(checkpoint) if checkpoint else None,
                        "preprocess": {k: (list(v) if isinstance(v, tuple) else v) for k, v in pp_cfg.items()},
                        "context_length": int(getattr(tokenizer, "context_length", 77)),
                        "libraries": library_versions("open_clip_torch", "torch")})
    return LoadedModel(model=model_obj, preprocess=preprocess, tokenizer=tokenizer, spec=spec, device=dev)


def _require_text_tower(architecture: str) -> None:
    """A ModelError naming the optional extra when the architecture's text tower is a Hugging Face model
    (``roberta-ViT-B-32``, ``xlm-roberta-*``) and transformers is missing (open_clip's own error would be
    reported as a failed download)."""
    import open_clip
    hf_name = ((open_clip.get_model_config(architecture) or {}).get("text_cfg") or {}).get("hf_model_name")
    if hf_name:
        require("transformers", "hf", f"open_clip architecture {architecture} (text tower {hf_name})")


def _checkpoint_error(spec: ModelSpec, checkpoint, exc: BaseException) -> ModelError:
    """A ModelError that says whether the file is unreadable or holds another architecture's weights."""
    what = f"checkpoint {checkpoint}" if checkpoint else f"weights {spec.pretrained!r}"
    text = str(exc)
    if any(k in text for k in ("size mismatch", "Missing key(s)", "Unexpected key(s)")):
        lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith(("size mismatch", "Missing", "Unexpected"))]
        return ModelError(f"{what} does not fit architecture {spec.architecture!r}: {'; '.join(lines[:3])[:400]}. "
                          "Pass the architecture these weights were trained with (--model), or its model-config "
                          "JSON (--model-config).")
    first = (text.splitlines()[0].split(". ")[0][:160] if text else "").rstrip(".")
    if checkpoint is None:      # weights by tag: open_clip downloads them into its cache
        return ModelError(f"could not download or load open_clip weights {spec.pretrained!r} for "
                          f"{spec.architecture!r} ({type(exc).__name__}: {first}). Without network access, fetch "
                          "them once on a connected machine, or pass a local checkpoint file with --pretrained.")
    return ModelError(f"{what} is not a readable PyTorch checkpoint for {spec.architecture!r} "
                      f"({type(exc).__name__}: {first}). Expected a file written by torch.save holding a state "
                      "dict (or {'state_dict': ...}); a truncated download, or a file of another kind, gives this "
                      "error: download or copy it again.")


def _paper_tag_cfg(spec: ModelSpec) -> dict:
    from open_clip import pretrained as P
    row = _table_row(spec.key)
    if row is None or not row.pretrained:
        return {}
    return P.get_pretrained_cfg(row.architecture, row.pretrained) or {}


def save_checkpoint(model, path: str | os.PathLike) -> Path:
    """Save ``model``'s weights in the layout open_clip loads (``{'state_dict': ...}``), atomically."""
    import torch
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        # through a file object: torch names the archive's records after a path's file name,
        # which for the temporary file is random and would make identical weights differ
        torch.save({"state_dict": model.state_dict()}, fh)
    return Path(path)


FAMILY = Family("open_clip", "open_clip (create_model_and_transforms)", resolve, load)


# ------------------------------------------------------------------------------ fp16 weights (clip.load)

def convert_to_fp16_weights(model) -> dict:
    """Convert ``model`` in place to the fp16 weights OpenAI's ``clip.load`` runs on CUDA; return a record.

    ``clip.load`` builds the model with ``clip.model.convert_weights``: the weights and biases of
    Conv1d/Conv2d/Linear, the projection weights and biases of MultiheadAttention, and the
    ``text_projection`` / ``proj`` matrices become fp16; everything else (LayerNorm, BatchNorm,
    embeddings, positional and class embeddings, logit scale) stays fp32, and OpenAI's LayerNorm
    computes in fp32 and casts back. open_clip's ``convert_weights_to_lp`` converts the same set
    (tests compare with ``clip.model.convert_weights``); its LayerNormFp32 is OpenAI's LayerNorm.
    Inputs: the engine casts pixels to fp16 (``encode_image(image.type(self.dtype))`` in OpenAI's
    code); the text tower casts its embeddings itself. Defined for OpenAI-architecture CLIP models
    only (open_clip's ``CLIP`` with a ViT or modified-ResNet tower); anything else is a ModelError.
    """
    import torch
    from open_clip.model import CLIP, convert_weights_to_lp
    from open_clip.modified_resnet import ModifiedResNet
    from open_clip.transformer import LayerNormFp32, VisionTransformer
    if not isinstance(model, CLIP) or not isinstance(getattr(model, "visual", None), (VisionTransformer,
                                                                                      ModifiedResNet)):
        raise ModelError(f"precision fp16-weights converts weights as OpenAI's clip.load does, which is defined for "
                         f"OpenAI-architecture CLIP models (open_clip's CLIP with a ViT or ResNet tower, CyCLIP); "
                         f"this model is a {type(model).__name__}: use --precision fp16 (autocast) instead")
    with torch.no_grad():   # per fp32 tensor: does fp16 hold it exactly? (no copy of the model kept)
        exact = {name: bool(torch.equal(p.half().float(), p)) for name, p in model.named_parameters()
                 if p.dtype == torch.float32}
    convert_weights_to_lp(model, dtype=torch.float16)
    for module in model.modules():
        if isinstance(module, torch.nn.LayerNorm) and not isinstance(module, LayerNormFp32):
            module.__class__ = LayerNormFp32     # same parameters; computes in fp32 and casts back, as OpenAI's
    params = dict(model.named_parameters())
    converted = [n for n, p in params.items() if p.dtype == torch.float16 and n in exact]
    rounded = [n for n in converted if not exact[n]]
    return {"converted_tensors": len(converted), "rounded_tensors": len(rounded),
            "converted_elements": int(sum(params[n].numel() for n in converted)),
            # True for weights released in fp16 (OpenAI's): then they equal clip.load's exactly
            "lossless": not rounded}
