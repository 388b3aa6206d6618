"""The 17 CLIP models of SugarCrepe's results table, as one declarative table of open_clip checkpoints.

SugarCrepe (Hsieh et al., NeurIPS 2023 D&B, arXiv 2306.14610) evaluates 17 open_clip checkpoints
(results table; ``crepe_utils/reported/sugarcrepe_published.csv`` holds its numbers). Each row here names
the checkpoint by open_clip architecture and tag, and says the activation its weights were trained with.
The key is the published table's ``imagenet_model``; four of them are also CREPE registry keys (the same
OpenAI checkpoints), so their results are one folder whichever table asked for them.

The QuickGELU trap (see :mod:`.openclip`) bites three ways here:

* the OpenAI rows are printed and loaded by ``main_eval.py`` as ``RN50``, ``ViT-B-32``, ...: OpenAI's
  weights are QuickGELU, so the architecture is the ``-quickgelu`` variant (open_clip's tag says so);
* DataComp small and medium are named ``ViT-B-32-quickgelu`` in ``main_eval.py`` (commented out there),
  but DataComp trained both scales with ``ViT-B-32`` (GELU; datacomp's ``scale_configs.py``) and open_clip
  registers the tags under ``ViT-B-32`` only: GELU here;
* ``roberta-ViT-B-32`` is QuickGELU in its own open_clip config (since open_clip 8cfe4c3, with the weights),
  while its tag entry states no activation; open_clip would warn, the guard would refuse: the row says it.

This module imports no torch and reads no file (it sits below :mod:`crepe_utils.benchmarks.crepe.reported`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import ModelError

#: Why a row's activation differs from what the published table or open_clip's tag entry suggests.
_OPENAI = "OpenAI's weights are QuickGELU: the table's plain name loads them only through open_clip's openai path"
_DATACOMP_BASE = ("main_eval.py names it ViT-B-32-quickgelu; DataComp trained this scale with ViT-B-32 (GELU), "
                  "the architecture open_clip registers the tag under")
_ROBERTA = "QuickGELU in open_clip's roberta-ViT-B-32 config, which its tag entry does not restate"


@dataclass(frozen=True)
class SugarCrepeModel:
    """One checkpoint of SugarCrepe's results table."""

    key: str             #: the published table's imagenet_model; a CREPE registry key where the checkpoint is one
    display: str         #: "<group> <model>" as the table prints it
    architecture: str    #: exact open_clip name (with -quickgelu when the weights are QuickGELU)
    pretrained: str      #: open_clip tag
    quick_gelu: bool     #: activation the weights were trained with
    train_data: str = "other"   #: key of registry.TRAIN_DATA_LABELS ("laion" there means LAION-400M only)
    note: str = ""
    caveat: str = ""     #: carried into every output of this model (the registry's field of that name)
    weights_url: str | None = None   #: a release file instead of open_clip's source (none of these rows needs one)


SUGARCREPE_MODELS: tuple[SugarCrepeModel, ...] = (
    # --- OpenAI (WIT-400M), in the table's order ---------------------------------------------------
    SugarCrepeModel("openai-rn50", "OpenAI RN50", "RN50-quickgelu", "openai", True, "openai", _OPENAI),
    SugarCrepeModel("openai-rn101", "OpenAI RN101", "RN101-quickgelu", "openai", True, "openai", _OPENAI),
    SugarCrepeModel("openai-vit-b-32", "OpenAI ViT-B-32", "ViT-B-32-quickgelu", "openai", True, "openai", _OPENAI),
    SugarCrepeModel("openai-rn50x4", "OpenAI RN50x4", "RN50x4-quickgelu", "openai", True, "openai", _OPENAI),
    SugarCrepeModel("openai-rn50x16", "OpenAI RN50x16", "RN50x16-quickgelu", "openai", True, "openai", _OPENAI),
    SugarCrepeModel("openai-vit-l-14", "OpenAI ViT-L-14", "ViT-L-14-quickgelu", "openai", True, "openai", _OPENAI),
    SugarCrepeModel("openai-rn50x64", "OpenAI RN50x64", "RN50x64-quickgelu", "openai", True, "openai", _OPENAI),
    # --- LAION-2B / LAION-5B -------------------------------------------------------------------------
    SugarCrepeModel("laion2b-roberta-vit-b-32", "LAION roberta-ViT-B-32", "roberta-ViT-B-32", "laion2b_s12b_b32k",
                    True, note=_ROBERTA),
    SugarCrepeModel("laion2b-vit-h-14", "LAION ViT-H-14", "ViT-H-14", "laion2b_s32b_b79k", False),
    SugarCrepeModel("laion2b-vit-g-14", "LAION ViT-g-14", "ViT-g-14", "laion2b_s12b_b42k", False),
    SugarCrepeModel("laion2b-vit-bigg-14", "LAION ViT-bigG-14", "ViT-bigG-14", "laion2b_s39b_b160k", False),
    SugarCrepeModel("laion5b-xlm-roberta-base-vit-b-32", "LAION xlm-roberta-base-ViT-B-32",
                    "xlm-roberta-base-ViT-B-32", "laion5b_s13b_b90k", False),
    SugarCrepeModel("laion5b-xlm-roberta-large-vit-h-14", "LAION xlm-roberta-large-ViT-H-14",
                    "xlm-roberta-large-ViT-H-14", "frozen_laion5b_s13b_b90k", False),
    # --- DataComp ------------------------------------------------------------------------------------
    SugarCrepeModel("datacomp-s-vit-b-32", "DataComp small:ViT-B-32", "ViT-B-32", "datacomp_s_s13m_b4k", False,
                    note=_DATACOMP_BASE),
    SugarCrepeModel("datacomp-m-vit-b-32", "DataComp medium:ViT-B-32", "ViT-B-32", "datacomp_m_s128m_b4k", False,
                    note=_DATACOMP_BASE),
    SugarCrepeModel("datacomp-l-vit-b-16", "DataComp large:ViT-B-16", "ViT-B-16", "datacomp_l_s1b_b8k", False),
    SugarCrepeModel("datacomp-xl-vit-l-14", "DataComp xlarge:ViT-L-14", "ViT-L-14", "datacomp_xl_s13b_b90k", False),
)


def keys() -> list[str]:
    """The table's keys in its order."""
    return [m.key for m in SUGARCREPE_MODELS]


def sugarcrepe_model(key: str) -> SugarCrepeModel:
    """The row for ``key``; a ModelError listing the keys otherwise."""
    for row in SUGARCREPE_MODELS:
        if row.key == key:
            return row
    raise ModelError(f"unknown SugarCrepe model {key!r}; its table's keys: {', '.join(keys())}")


def for_checkpoint(architecture: str, pretrained: str) -> SugarCrepeModel | None:
    """The row naming open_clip's ``architecture`` and tag ``pretrained``, if one does."""
    return next((m for m in SUGARCREPE_MODELS if (m.architecture, m.pretrained) == (architecture, pretrained)), None)
