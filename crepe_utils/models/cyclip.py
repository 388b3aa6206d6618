"""CyCLIP RN50 (Goel et al., NeurIPS 2022) as CREPE's ``crepe_prod_eval_cyclip.py`` loads it.

The released checkpoint is ``{"state_dict": {"module.<OpenAI CLIP key>": tensor}, ...}``: an
OpenAI-CLIP state dict saved from a DistributedDataParallel wrapper. The official script builds
OpenAI's architecture (QuickGELU) from it in fp32, preprocesses like OpenAI (bicubic resize of the
shorter side, centre crop, OpenAI mean/std) and tokenizes with OpenAI's BPE, cutting at 77 tokens
*without* keeping the end token (our truncation ``official``). We build the same architecture with
open_clip's OpenAI-format builder, then load the weights again in fp32 (the builder casts to fp16
on the way; the official script keeps fp32).

The weights are on Google Drive only, so the user places the file (``paths.models_dir()``, or
``--pretrained``); its SHA-256 is recorded.
"""
from __future__ import annotations

from pathlib import Path

from .. import paths
from . import checkpoints
from ..errors import ModelError
from .family import Family
from ..digests import sha256_file
from .spec import LoadedModel, ModelSpec, library_versions, load_torch_file, pick_device

KEY = "cyclip-rn50"
_REQUIRED = ("visual.layer1.0.conv1.weight", "visual.attnpool.positional_embedding", "text_projection",
             "positional_embedding", "token_embedding.weight", "ln_final.weight")


def default_checkpoint() -> Path:
    """Where a placed CyCLIP checkpoint is looked for: ``<models dir>/cyclip-rn50/best.pt``."""
    return paths.models_dir() / KEY / checkpoints.checkpoint(KEY).release_file


def resolve(model: str, pretrained: str | None = None, model_config=None) -> ModelSpec:
    row = checkpoints.checkpoint(model)
    if model_config is not None:
        raise ModelError(f"{row.display} builds its architecture from the checkpoint; drop --model-config")
    path = Path(pretrained) if pretrained else default_checkpoint()
    return ModelSpec(key=row.key, architecture=row.architecture, pretrained=str(path), quick_gelu=True,
                     weights_quick_gelu=row.quick_gelu, display=row.display, train_data=row.train_data,
                     family="cyclip", truncation="official", caveat=row.caveat)


def _state_dict(path: Path) -> dict:
    row = checkpoints.checkpoint(KEY)
    if not path.is_file():
        raise ModelError(
            f"{row.display} weights not found at {path}. They are published on Google Drive only "
            f"({row.weights_source}; CyCLIP README, 'Pretrained Checkpoints'; licence CC BY-NC): download the "
            f"RN50 checkpoint and place it at {path} (set CREPE_MODELS to use another folder), or pass its path "
            "with --pretrained.")
    ckpt = load_torch_file(path, row.display)
    sd = ckpt.get("state_dict", ckpt) if isinstance(ckpt, dict) else None
    if not isinstance(sd, dict) or not sd:
        raise ModelError(f"checkpoint {path} holds no state dict: expected {{'state_dict': {{...}}}} as CyCLIP "
                         "saves it")
    sd = {k.removeprefix("module."): v for k, v in sd.items()}
    missing = [k for k in _REQUIRED if k not in sd]
    if missing:
        raise ModelError(f"checkpoint {path} is not an OpenAI-format CLIP ResNet state dict (no {', '.join(missing)})"
                         f"; {row.display} needs CyCLIP's RN50 checkpoint")
    return sd


def build(sd: dict):
    """OpenAI's CLIP (QuickGELU) sized by ``sd``, holding ``sd``'s weights exactly, in fp32."""
    from open_clip.model import build_model_from_openai_state_dict
    model = build_model_from_openai_state_dict(dict(sd), quick_gelu=True, cast_dtype=None).float()
    model.load_state_dict({k: v for k, v in sd.items() if k not in ("input_resolution", "context_length",
                                                                     "vocab_size")})
    return model.eval()


def load(spec: ModelSpec, device: str = "auto", cache_dir=None) -> LoadedModel:
    import open_clip
    from open_clip.constants import OPENAI_DATASET_MEAN, OPENAI_DATASET_STD
    from open_clip.transform import image_transform

    path = Path(spec.pretrained)
    sd = _state_dict(path)
    try:
        model = build(sd)
    except (RuntimeError, KeyError, AssertionError, ValueError) as exc:
        raise ModelError(f"checkpoint {path} does not build an OpenAI-format CLIP: {str(exc)[:300]}") from None
    dev = pick_device(device)
    model = model.to(dev)
    size = int(model.visual.image_size if isinstance(model.visual.image_size, int) else model.visual.image_size[0])
    preprocess = image_transform(size, is_train=False, mean=OPENAI_DATASET_MEAN, std=OPENAI_DATASET_STD,
                                 interpolation="bicubic", resize_mode="shortest")
    tokenizer = open_clip.get_tokenizer("RN50")
    layers = [len(getattr(model.visual, f"layer{i}")) for i in (1, 2, 3, 4)]
    dims = {"vision_layers": layers, "vision_width": int(sd["visual.layer1.0.conv1.weight"].shape[0]),
            "image_size": size, "embed_dim": int(sd["text_projection"].shape[1]),
            "text_width": int(sd["ln_final.weight"].shape[0]), "context_length": int(model.context_length)}
    spec = spec.replace(checkpoint_path=str(path), checkpoint_sha256=sha256_file(path), model_config=dims,
                        context_length=int(model.context_length),
                        preprocess={"size": size, "mode": "RGB", "mean": list(OPENAI_DATASET_MEAN),
                                    "std": list(OPENAI_DATASET_STD), "interpolation": "bicubic",
                                    "resize_mode": "shortest"},
                        libraries=library_versions("open_clip_torch", "torch"))
    return LoadedModel(model=model, preprocess=preprocess, tokenizer=tokenizer, spec=spec, device=dev)


FAMILY = Family("cyclip", "OpenAI-format RN50 via open_clip (placed checkpoint)", resolve, load)
