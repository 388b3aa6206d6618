"""The checkpoints of Winoground's Table 3 (Thrush et al., CVPR 2022) that the checkpoint table holds
(:mod:`crepe_utils.models.checkpoints`): Table 3's row name → checkpoint key. The paper scores FLAVA
contrastively, as CREPE does."""
from __future__ import annotations

TABLE3_CHECKPOINTS = {"CLIP (ViT-B/32)": "openai-vit-b-32", "FLAVA contrastive": "flava"}
