"""The checkpoints of the CREPE paper (Ma et al., CVPR 2023), as keys of the checkpoint table
(:mod:`crepe_utils.models.checkpoints`), in the paper's order and under the paper's names.

Which checkpoint entered which protocol follows the official code (``RAIVNLab/CREPE@1fa81c4``): the seven
open_clip checkpoints trained on CC-12M, YFCC-15M and LAION-400M took systematicity (its splits exist for
those three training sets only) and productivity; OpenAI's five, CyCLIP, FLAVA and ALBEF took productivity.
"""
from __future__ import annotations

from ...models import checkpoints

SYSTEMATICITY_MODELS = ("cc12m-rn50", "yfcc15m-rn50", "yfcc15m-rn101", "laion400m-vit-b-32", "laion400m-vit-b-16",
                        "laion400m-vit-b-16-plus-240", "laion400m-vit-l-14")
PRODUCTIVITY_MODELS = SYSTEMATICITY_MODELS + ("openai-rn50", "openai-rn101", "openai-vit-b-32", "openai-vit-b-16",
                                              "openai-vit-l-14", "cyclip-rn50", "flava", "albef-14m")


def model_order() -> list[str]:
    """The paper's checkpoints in its order (for sorting tables and plot legends)."""
    return list(PRODUCTIVITY_MODELS)


def display_names() -> dict[str, str]:
    """Checkpoint key → the paper's name for it."""
    return {key: checkpoints.checkpoint(key).display for key in PRODUCTIVITY_MODELS}


def train_data(key: str) -> str:
    """The training-set key (``checkpoints.TRAIN_DATA_LABELS``) of one of the paper's checkpoints."""
    return checkpoints.checkpoint(key).train_data
