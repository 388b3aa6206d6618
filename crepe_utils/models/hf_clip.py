"""Any Hugging Face ``transformers`` CLIPModel: ``transformers:<hub repo or local folder>``.

The model, its image processor and its tokenizer come from the same repository, so the activation
(``hidden_act`` in its config) always matches its weights and is recorded. The guard this family
has is the preprocessing one: the processor's crop must be the vision tower's input size.

The engine pads with id 0 (a real token, "!", in CLIP's vocabulary); that is harmless because the
text tower is causal and pools at the first end token, before any padding: cutting batches to
their longest caption is exact and no attention mask is needed. SigLIP (non-causal, pooled over
every position, padding attended, no start token) does not fit that protocol and is refused.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import ModelError
from .family import Family
from ..digests import sha256_file
from .spec import LoadedModel, ModelSpec, library_versions, pick_device, require

PREFIX = "transformers:"


def resolve(model: str, pretrained: str | None = None, model_config=None) -> ModelSpec:
    name = model.removeprefix(PREFIX)
    if not name:
        raise ModelError(f"name a Hugging Face repository or folder after {PREFIX!r}, e.g. "
                         f"{PREFIX}openai/clip-vit-base-patch32")
    if pretrained is not None or model_config is not None:
        raise ModelError(f"{model!r} names its config and weights itself; drop --pretrained / --model-config")
    key = Path(name).name if Path(name).is_dir() else name.replace("/", "--")
    return ModelSpec(key=f"hf-{key}", architecture=model, pretrained=name, quick_gelu=False, weights_quick_gelu=None,
                     display=f"{name} (transformers)", family="hf_clip", truncation="keep_eot")


class _Preprocess:
    """PIL image → pixel tensor through the repository's own image processor (picklable for workers)."""

    def __init__(self, processor):
        self.processor = processor

    def __call__(self, image):
        return self.processor(images=image.convert("RGB"), return_tensors="pt")["pixel_values"][0]


class _Tokenizer:
    """The repository's tokenizer with the engine's protocol (ids without special tokens; start/end ids)."""

    def __init__(self, tok, context_length: int):
        self._tok = tok
        self.context_length = int(context_length)
        self.sot_token_id, self.eot_token_id = tok.bos_token_id, tok.eos_token_id

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False))

    def __call__(self, texts):
        import torch
        texts = [texts] if isinstance(texts, str) else texts
        out = torch.zeros(len(texts), self.context_length, dtype=torch.long)
        for i, t in enumerate(texts):
            ids = [self.sot_token_id] + self.encode(t)[:self.context_length - 2] + [self.eot_token_id]
            out[i, :len(ids)] = torch.tensor(ids)
        return out


def _encoder_class():
    import torch

    class HFClip(torch.nn.Module):
        length_cut_exact = True

        def __init__(self, model):
            super().__init__()
            self.inner = model

        @staticmethod
        def _features(out):
            return out if isinstance(out, torch.Tensor) else out.pooler_output

        def encode_image(self, pixels):
            return self._features(self.inner.get_image_features(pixel_values=pixels))

        def encode_text(self, ids):
            return self._features(self.inner.get_text_features(input_ids=ids))

    return HFClip


def load(spec: ModelSpec, device: str = "auto", cache_dir=None) -> LoadedModel:
    tf = require("transformers", "hf", "a Hugging Face CLIP model")
    name = spec.pretrained
    try:
        config = tf.AutoConfig.from_pretrained(name, cache_dir=cache_dir)
    except Exception as exc:  # noqa: BLE001 - offline, unknown repo, broken folder: one message
        raise ModelError(f"could not read the Hugging Face config of {name!r} ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:160] if str(exc) else ''}). Pass a hub repository (once online "
                         "it is cached) or a local folder written by save_pretrained.") from None
    if config.model_type != "clip":
        raise ModelError(f"{name!r} is a {config.model_type!r} model; the transformers family takes CLIPModel "
                         "checkpoints only (SigLIP's padded, non-causal text tower does not fit the engine's protocol)")
    try:
        model = tf.CLIPModel.from_pretrained(name, cache_dir=cache_dir, attn_implementation="eager").float().eval()
        processor = tf.CLIPImageProcessor.from_pretrained(name, cache_dir=cache_dir)
        tok = tf.AutoTokenizer.from_pretrained(name, cache_dir=cache_dir)
    except Exception as exc:  # noqa: BLE001
        raise ModelError(f"could not load {name!r} as a CLIPModel with its image processor and tokenizer "
                         f"({type(exc).__name__}: {str(exc)[:200]})") from None
    crop = processor.crop_size
    crop = crop.get("height") if isinstance(crop, dict) else getattr(crop, "height", crop)
    if crop != config.vision_config.image_size:
        raise ModelError(f"{name!r}: the image processor crops to {crop} px but the vision tower takes "
                         f"{config.vision_config.image_size} px; fix preprocessor_config.json")
    quick = config.text_config.hidden_act == "quick_gelu"
    files = sorted(Path(name).glob("*.safetensors")) + sorted(Path(name).glob("*.bin")) if Path(name).is_dir() else []
    dev = pick_device(device)
    spec = spec.replace(quick_gelu=quick, weights_quick_gelu=quick, context_length=config.text_config.max_position_embeddings,
                        checkpoint_path=str(files[0]) if files else None,
                        checkpoint_sha256=sha256_file(files[0]) if files else None,
                        model_config={"vision": config.vision_config.to_dict(), "text": config.text_config.to_dict(),
                                      "projection_dim": config.projection_dim},
                        preprocess=processor.to_dict(), libraries=library_versions("transformers", "tokenizers", "torch"))
    return LoadedModel(model=_encoder_class()(model).to(dev), preprocess=_Preprocess(processor),
                       tokenizer=_Tokenizer(tok, spec.context_length), spec=spec, device=dev)


FAMILY = Family("hf_clip", "transformers CLIPModel (transformers:<repo or folder>)", resolve, load, prefix=PREFIX,
                extra="hf")
