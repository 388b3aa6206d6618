"""The 17 CLIP checkpoints of SugarCrepe's results table (Hsieh et al., NeurIPS 2023 D&B, arXiv 2306.14610),
as keys of the checkpoint table (:mod:`crepe_utils.models.checkpoints`), in the table's order and under its names.

The key is the published table's ``imagenet_model``; four of them are another paper's checkpoints too (the
same OpenAI weights), so their results are one folder whichever paper asked for them. What each checkpoint is
(architecture, tag, the activation its weights were trained with) is the checkpoint table's. Where the names
differ: ``main_eval.py`` loads OpenAI's RN50, ViT-B-32, ... by their plain names, whose weights are QuickGELU
(the table's architecture is the ``-quickgelu`` one), and names DataComp small and medium
``ViT-B-32-quickgelu`` (commented out there), which DataComp trained with GELU ``ViT-B-32``.
"""
from __future__ import annotations

#: (checkpoint key, the table's "<group> <model>" name), in the table's order
ROSTER: tuple[tuple[str, str], ...] = (
    ("openai-rn50", "OpenAI RN50"),
    ("openai-rn101", "OpenAI RN101"),
    ("openai-vit-b-32", "OpenAI ViT-B-32"),
    ("openai-rn50x4", "OpenAI RN50x4"),
    ("openai-rn50x16", "OpenAI RN50x16"),
    ("openai-vit-l-14", "OpenAI ViT-L-14"),
    ("openai-rn50x64", "OpenAI RN50x64"),
    ("laion2b-roberta-vit-b-32", "LAION roberta-ViT-B-32"),
    ("laion2b-vit-h-14", "LAION ViT-H-14"),
    ("laion2b-vit-g-14", "LAION ViT-g-14"),
    ("laion2b-vit-bigg-14", "LAION ViT-bigG-14"),
    ("laion5b-xlm-roberta-base-vit-b-32", "LAION xlm-roberta-base-ViT-B-32"),
    ("laion5b-xlm-roberta-large-vit-h-14", "LAION xlm-roberta-large-ViT-H-14"),
    ("datacomp-s-vit-b-32", "DataComp small:ViT-B-32"),
    ("datacomp-m-vit-b-32", "DataComp medium:ViT-B-32"),
    ("datacomp-l-vit-b-16", "DataComp large:ViT-B-16"),
    ("datacomp-xl-vit-l-14", "DataComp xlarge:ViT-L-14"),
)


def keys() -> list[str]:
    """The table's checkpoints in its order."""
    return [key for key, _ in ROSTER]


def display_names() -> dict[str, str]:
    """Checkpoint key → the table's name for it."""
    return dict(ROSTER)
