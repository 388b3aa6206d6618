"""Models of every family behind one interface: resolve the user's words, load, list the checkpoints.

``FAMILIES`` is the one dispatch table: a checkpoint of the table (:mod:`.checkpoints`) names its family;
a model outside the table is open_clip's unless its name carries a family's prefix
(``transformers:openai/clip-vit-base-patch32``). What a family supplies is in :mod:`.family`.
"""
from __future__ import annotations

import os

from . import checkpoints
from ..errors import ModelError
from . import albef, blind, cyclip, flava, hf_clip, openclip
from .family import Family
from .openclip import check_activation, save_checkpoint
from .spec import LoadedModel, ModelSpec, QuickGELUMismatch, check_device, pick_device

__all__ = ["FAMILIES", "FP16_WEIGHTS", "Family", "LoadedModel", "ModelError", "ModelSpec", "QuickGELUMismatch",
           "check_activation", "family_of", "load_model", "pick_device", "resolve", "save_checkpoint"]

FAMILIES: dict[str, Family] = {f.name: f for f in (openclip.FAMILY, cyclip.FAMILY, albef.FAMILY, flava.FAMILY,
                                                     hf_clip.FAMILY, blind.FAMILY)}


def family_of(model: str) -> Family:
    """The family that builds ``model`` (a checkpoint key or a model name)."""
    if model in checkpoints.keys():
        return FAMILIES[checkpoints.checkpoint(model).family]
    for fam in FAMILIES.values():
        if fam.prefix and model.startswith(fam.prefix):
            return fam
    return FAMILIES["open_clip"]


def resolve(model: str, pretrained: str | None = None, model_config: str | os.PathLike | None = None) -> ModelSpec:
    """Turn the user's words into a :class:`ModelSpec` (no weights are loaded; nothing downloaded).

    Raises :class:`QuickGELUMismatch` or :class:`ModelError` for impossible combinations.
    """
    return family_of(model).resolve(model, pretrained, model_config)


def load_model(model: str, pretrained: str | None = None, model_config: str | os.PathLike | None = None,
               device: str = "auto", cache_dir: str | None = None, precision: str | None = None) -> LoadedModel:
    """Load a model for evaluation (eval mode) and record what was loaded.

    Weights are fp32, except for ``precision="fp16-weights"``: then they are converted as OpenAI's
    ``clip.load`` does on CUDA (:func:`.openclip.convert_to_fp16_weights`; the record of the
    conversion is ``loaded.model.crepe_fp16_weights``). Every other precision is the engine's affair.
    """
    fam = family_of(model)
    device = check_device(device)             # the one place "auto" becomes a device, for a direct call
    loaded = fam.load(fam.resolve(model, pretrained, model_config), device=device, cache_dir=cache_dir)
    if precision == FP16_WEIGHTS and fam.name != "blind":
        loaded.model.crepe_fp16_weights = openclip.convert_to_fp16_weights(loaded.model)
    return loaded


#: The precision whose weights are converted at load (engine.PRECISIONS has it too).
FP16_WEIGHTS = "fp16-weights"
