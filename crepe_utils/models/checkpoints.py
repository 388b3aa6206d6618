"""Every checkpoint the companion knows by name, as one declarative table (open_clip's ``pretrained.py`` style).

Each row says what a checkpoint *is*: the family that builds it, its open_clip architecture and tag (or
its weight file), the activation its weights were trained with, its training data, and what a reader of
its results must know. Which paper evaluated which checkpoint, and under which name, is each benchmark's
roster (a list of these keys); ImageNet zero-shot accuracies, with their sources, are in ``imagenet.csv``
beside this file (:mod:`.imagenet`). This module imports no torch and reads no file.

Sources: open_clip's pretrained table (names, tags, release files), the official evaluation code of the
papers whose rosters name these keys (which file each checkpoint is; each roster cites its own), the model
families' own READMEs (CyCLIP, FLAVA, ALBEF).

Facts worth knowing before touching this table:

* OpenAI's weights are QuickGELU, and so are open_clip's own v0.2 RN50, RN101 and ViT-B-32 releases:
  official evaluation scripts name them plainly (``RN50``, ``ViT-B-32``). Loading
  QuickGELU weights into a GELU model changes every number (open_clip only warns);
  :func:`crepe_utils.models.load_model` refuses such a mismatch, so the architecture here is the
  ``-quickgelu`` variant.
* ``ViT-B-16-plus-240`` / ``laion400m_e32`` points open_clip's hub download at the *e31* weights. CREPE
  used e32, so that row pins the release file URL (with its SHA-256 prefix, ``699c4b84``).
* DataComp trained its small and medium scales with ``ViT-B-32`` (GELU; datacomp's ``scale_configs.py``), the
  architecture open_clip registers the tags under, whatever an evaluation script calls them.
* ``roberta-ViT-B-32`` is QuickGELU in its own open_clip config, which its tag entry does not restate.
* CyCLIP, FLAVA and ALBEF are not open_clip models: ``family`` names what builds each
  (``crepe_utils.models.FAMILIES``). CyCLIP's weights sit on Google Drive (not scriptable reliably): the
  user places the file. FLAVA and ALBEF saw Visual Genome and COCO images in training, so their numbers
  on benchmarks built from those images are not on held-out images: ``caveat``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ModelError

OPEN_CLIP_RELEASE = "https://github.com/mlfoundations/open_clip/releases/download/v0.2-weights/"

#: What a checkpoint was trained on, as tables print it.
TRAIN_DATA_LABELS = {
    "cc12m": "CC-12M",
    "yfcc": "YFCC-15M",
    "laion": "LAION-400M",
    "openai": "OpenAI WIT-400M",
    "other": "other",
}


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint: what it is and how it is built."""

    key: str                          #: our stable identifier, used in every table and results folder
    display: str                      #: how tables name it
    family: str                       #: the model family that builds it (crepe_utils.models.FAMILIES)
    architecture: str | None = None   #: exact open_clip model name (with -quickgelu when needed)
    pretrained: str | None = None     #: open_clip pretrained tag
    quick_gelu: bool | None = None    #: activation the weights were trained with
    train_data: str = "other"         #: key of TRAIN_DATA_LABELS
    weights_url: str | None = None    #: download this file instead of open_clip's default source
    release_file: str | None = None   #: the weight file's name (open_clip's release, or what a user places)
    weights_source: str | None = None  #: where a user fetches weights that cannot be downloaded for them
    note: str = ""
    caveat: str = ""                  #: carried into every output of this checkpoint (manifest, tables)

    @property
    def train_label(self) -> str:
        return TRAIN_DATA_LABELS[self.train_data]


_OPENAI = "OpenAI's weights are QuickGELU: a plain name loads them only through open_clip's openai path"
_DATACOMP_BASE = ("DataComp trained this scale with ViT-B-32 (GELU), the architecture open_clip registers the tag "
                  "under; a -quickgelu name builds it with the other activation")
_ROBERTA = "QuickGELU in open_clip's roberta-ViT-B-32 config, which its tag entry does not restate"
SEEN_IMAGES = ("pre-trained on Visual Genome and COCO images: its results on benchmarks built from those images "
               "are not on held-out images")


def _open_clip(key, display, architecture, pretrained, quick_gelu, train_data="other", **more) -> Checkpoint:
    return Checkpoint(key, display, "open_clip", architecture, pretrained, quick_gelu, train_data, **more)


CHECKPOINTS: tuple[Checkpoint, ...] = (
    # --- open_clip's own releases (CC-12M, YFCC-15M, LAION-400M) --------------------------------------
    _open_clip("cc12m-rn50", "CC-12M RN50", "RN50-quickgelu", "cc12m", True, "cc12m",
               release_file="rn50-quickgelu-cc12m-f000538c.pt"),
    _open_clip("yfcc15m-rn50", "YFCC-15M RN50", "RN50-quickgelu", "yfcc15m", True, "yfcc",
               release_file="rn50-quickgelu-yfcc15m-455df137.pt"),
    _open_clip("yfcc15m-rn101", "YFCC-15M RN101", "RN101-quickgelu", "yfcc15m", True, "yfcc",
               release_file="rn101-quickgelu-yfcc15m-3e04b30e.pt"),
    _open_clip("laion400m-vit-b-32", "LAION ViT-B-32", "ViT-B-32-quickgelu", "laion400m_e32", True, "laion",
               release_file="vit_b_32-quickgelu-laion400m_e32-46683a32.pt"),
    _open_clip("laion400m-vit-b-16", "LAION ViT-B-16", "ViT-B-16", "laion400m_e32", False, "laion",
               release_file="vit_b_16-laion400m_e32-55e67d44.pt"),
    _open_clip("laion400m-vit-b-16-plus-240", "LAION ViT-B-16+240", "ViT-B-16-plus-240", "laion400m_e32", False,
               "laion", weights_url=OPEN_CLIP_RELEASE + "vit_b_16_plus_240-laion400m_e32-699c4b84.pt",
               release_file="vit_b_16_plus_240-laion400m_e32-699c4b84.pt",
               note="open_clip's hub entry for this tag serves e31 weights; the release file is e32"),
    _open_clip("laion400m-vit-l-14", "LAION ViT-L-14", "ViT-L-14", "laion400m_e32", False, "laion",
               release_file="vit_l_14-laion400m_e32-3d133497.pt"),
    # --- OpenAI CLIP (WIT-400M), through open_clip's openai path -------------------------------------
    # CREPE's script loads these with clip.load(), which keeps fp16 weights on CUDA; the same weights
    # load here through open_clip (QuickGELU architecture), fp32 by default.
    _open_clip("openai-rn50", "OpenAI CLIP RN50", "RN50-quickgelu", "openai", True, "openai", note=_OPENAI),
    _open_clip("openai-rn101", "OpenAI CLIP RN101", "RN101-quickgelu", "openai", True, "openai", note=_OPENAI),
    _open_clip("openai-vit-b-32", "OpenAI CLIP ViT-B/32", "ViT-B-32-quickgelu", "openai", True, "openai",
               note=_OPENAI),
    _open_clip("openai-vit-b-16", "OpenAI CLIP ViT-B/16", "ViT-B-16-quickgelu", "openai", True, "openai"),
    _open_clip("openai-vit-l-14", "OpenAI CLIP ViT-L/14", "ViT-L-14-quickgelu", "openai", True, "openai",
               note=_OPENAI),
    _open_clip("openai-rn50x4", "OpenAI RN50x4", "RN50x4-quickgelu", "openai", True, "openai", note=_OPENAI),
    _open_clip("openai-rn50x16", "OpenAI RN50x16", "RN50x16-quickgelu", "openai", True, "openai", note=_OPENAI),
    _open_clip("openai-rn50x64", "OpenAI RN50x64", "RN50x64-quickgelu", "openai", True, "openai", note=_OPENAI),
    # --- LAION-2B / LAION-5B ------------------------------------------------------------------------------
    _open_clip("laion2b-roberta-vit-b-32", "LAION roberta-ViT-B-32", "roberta-ViT-B-32", "laion2b_s12b_b32k", True,
               note=_ROBERTA),
    _open_clip("laion2b-vit-h-14", "LAION ViT-H-14", "ViT-H-14", "laion2b_s32b_b79k", False),
    _open_clip("laion2b-vit-g-14", "LAION ViT-g-14", "ViT-g-14", "laion2b_s12b_b42k", False),
    _open_clip("laion2b-vit-bigg-14", "LAION ViT-bigG-14", "ViT-bigG-14", "laion2b_s39b_b160k", False),
    _open_clip("laion5b-xlm-roberta-base-vit-b-32", "LAION xlm-roberta-base-ViT-B-32", "xlm-roberta-base-ViT-B-32",
               "laion5b_s13b_b90k", False),
    _open_clip("laion5b-xlm-roberta-large-vit-h-14", "LAION xlm-roberta-large-ViT-H-14",
               "xlm-roberta-large-ViT-H-14", "frozen_laion5b_s13b_b90k", False),
    # --- DataComp --------------------------------------------------------------------------------------------
    _open_clip("datacomp-s-vit-b-32", "DataComp small:ViT-B-32", "ViT-B-32", "datacomp_s_s13m_b4k", False,
               note=_DATACOMP_BASE),
    _open_clip("datacomp-m-vit-b-32", "DataComp medium:ViT-B-32", "ViT-B-32", "datacomp_m_s128m_b4k", False,
               note=_DATACOMP_BASE),
    _open_clip("datacomp-l-vit-b-16", "DataComp large:ViT-B-16", "ViT-B-16", "datacomp_l_s1b_b8k", False),
    _open_clip("datacomp-xl-vit-l-14", "DataComp xlarge:ViT-L-14", "ViT-L-14", "datacomp_xl_s13b_b90k", False),
    # --- other families: architectures and weight files as CREPE's scripts load them ----------------------
    Checkpoint("cyclip-rn50", "CyCLIP RN50", "cyclip", "RN50", quick_gelu=True, release_file="best.pt",
               weights_source="https://drive.google.com/drive/u/0/folders/1K0kPJZ3MA4KAdx3Fpq25dgW59wIf7M-x",
               note="CyCLIP README 'Pretrained Checkpoints' (CC BY-NC); an OpenAI-format RN50 state dict"),
    Checkpoint("flava", "FLAVA", "flava", "FLAVA-full (ViT-B/16, 224 px)",
               weights_url="https://download.pytorch.org/models/multimodal/flava/flava_model_unified_text_encoder.pt",
               release_file="flava_model_unified_text_encoder.pt", caveat=SEEN_IMAGES,
               note="torchmultimodal's flava_full checkpoint, as CREPE's script; contrastive heads only"),
    Checkpoint("albef-14m", "ALBEF", "albef", "ALBEF-ViT-B-16-384",
               weights_url="https://storage.googleapis.com/sfr-pcl-data-research/ALBEF/ALBEF.pth",
               release_file="ALBEF.pth", caveat=SEEN_IMAGES,
               note="the 14M pre-training checkpoint; contrastive heads only, at 384 px"),
)

# --- the field: open_clip checkpoints of vl_compo's 202-row table (Oh et al. 2024, crepe_utils.field) that no
# paper's roster names. One row each: (key, open_clip architecture, tag, QuickGELU), the activation being the
# architecture's own in open_clip's config (the tests compare it with the tag's entry). Key: "<tag>-<architecture
# without -quickgelu>", lower case, "_" as "-". The table's checkpoints that another paper evaluated keep their
# rows above (openai-*, laion400m-*, laion2b-*, datacomp-*). Nineteen build their image tower with timm.
_FIELD = (
    ("webli-vit-l-16-siglip-256", "ViT-L-16-SigLIP-256", "webli", False),
    ("dfn5b-vit-h-14", "ViT-H-14-quickgelu", "dfn5b", True),
    ("datacompdr-lt-mobileclip-b", "MobileCLIP-B", "datacompdr_lt", False),
    ("datacompdr-mobileclip-b", "MobileCLIP-B", "datacompdr", False),
    ("webli-vit-so400m-14-siglip", "ViT-SO400M-14-SigLIP", "webli", False),
    ("laion2b-s4b-b115k-eva02-e-14", "EVA02-E-14", "laion2b_s4b_b115k", False),
    ("laion2b-s34b-b88k-vit-g-14", "ViT-g-14", "laion2b_s34b_b88k", False),
    ("laion2b-s34b-b82k-augreg-convnext-xxlarge", "convnext_xxlarge", "laion2b_s34b_b82k_augreg", False),
    ("webli-vit-b-16-siglip", "ViT-B-16-SigLIP", "webli", False),
    ("webli-vit-b-16-siglip-384", "ViT-B-16-SigLIP-384", "webli", False),
    ("laion2b-s32b-b82k-vit-l-14", "ViT-L-14", "laion2b_s32b_b82k", False),
    ("datacompdr-mobileclip-s2", "MobileCLIP-S2", "datacompdr", False),
    ("metaclip-fullcc-vit-h-14", "ViT-H-14-quickgelu", "metaclip_fullcc", True),
    ("laion400m-s11b-b41k-eva01-g-14", "EVA01-g-14", "laion400m_s11b_b41k", False),
    ("datacomp1b-vit-bigg-14-clipa", "ViT-bigG-14-CLIPA", "datacomp1b", False),
    ("merged2b-s4b-b131k-eva02-l-14", "EVA02-L-14", "merged2b_s4b_b131k", False),
    ("laion2b-s26b-b102k-augreg-convnext-large-d", "convnext_large_d", "laion2b_s26b_b102k_augreg", False),
    ("commonpool-xl-laion-s13b-b90k-vit-l-14", "ViT-L-14", "commonpool_xl_laion_s13b_b90k", False),
    ("dfn2b-vit-l-14", "ViT-L-14-quickgelu", "dfn2b", True),
    ("datacompdr-mobileclip-s1", "MobileCLIP-S1", "datacompdr", False),
    ("laion-aesthetic-s13b-b82k-convnext-base-w", "convnext_base_w", "laion_aesthetic_s13b_b82k", False),
    ("laion-aesthetic-s13b-b82k-convnext-base-w-320", "convnext_base_w_320", "laion_aesthetic_s13b_b82k", False),
    ("laion2b-s13b-b82k-augreg-convnext-base-w", "convnext_base_w", "laion2b_s13b_b82k_augreg", False),
    ("datacomp1b-vit-h-14-clipa", "ViT-H-14-CLIPA", "datacomp1b", False),
    ("laion2b-s13b-b90k-coca-vit-l-14", "coca_ViT-L-14", "laion2b_s13b_b90k", False),
    ("metaclip-fullcc-vit-l-14", "ViT-L-14-quickgelu", "metaclip_fullcc", True),
    ("merged2b-s8b-b131k-eva02-b-16", "EVA02-B-16", "merged2b_s8b_b131k", False),
    ("laion2b-s34b-b79k-vit-b-32", "ViT-B-32", "laion2b_s34b_b79k", False),
    ("laion2b-s13b-b82k-convnext-base-w", "convnext_base_w", "laion2b_s13b_b82k", False),
    ("laion400m-s13b-b51k-convnext-base", "convnext_base", "laion400m_s13b_b51k", False),
    ("datacomp1b-vit-l-14-clipa", "ViT-L-14-CLIPA", "datacomp1b", False),
    ("metaclip-400m-vit-l-14", "ViT-L-14-quickgelu", "metaclip_400m", True),
    ("laion2b-s34b-b88k-vit-b-16", "ViT-B-16", "laion2b_s34b_b88k", False),
    ("dfn2b-vit-b-16", "ViT-B-16-quickgelu", "dfn2b", True),
    ("metaclip-fullcc-vit-b-32", "ViT-B-32-quickgelu", "metaclip_fullcc", True),
    ("metaclip-fullcc-vit-b-16", "ViT-B-16-quickgelu", "metaclip_fullcc", True),
    ("commonpool-xl-clip-s13b-b90k-vit-l-14", "ViT-L-14", "commonpool_xl_clip_s13b_b90k", False),
    ("laion2b-s13b-b90k-coca-vit-b-32", "coca_ViT-B-32", "laion2b_s13b_b90k", False),
    ("datacomp-s34b-b86k-vit-b-32-256", "ViT-B-32-256", "datacomp_s34b_b86k", False),
    ("datacomp-xl-s13b-b90k-vit-b-32", "ViT-B-32", "datacomp_xl_s13b_b90k", False),
    ("datacomp-xl-s13b-b90k-vit-b-16", "ViT-B-16", "datacomp_xl_s13b_b90k", False),
    ("metaclip-400m-vit-b-32", "ViT-B-32-quickgelu", "metaclip_400m", True),
    ("metaclip-400m-vit-b-16", "ViT-B-16-quickgelu", "metaclip_400m", True),
    ("commonpool-xl-s13b-b90k-vit-l-14", "ViT-L-14", "commonpool_xl_s13b_b90k", False),
    ("commonpool-l-laion-s1b-b8k-vit-b-16", "ViT-B-16", "commonpool_l_laion_s1b_b8k", False),
    ("commonpool-l-clip-s1b-b8k-vit-b-16", "ViT-B-16", "commonpool_l_clip_s1b_b8k", False),
    ("commonpool-l-text-s1b-b8k-vit-b-16", "ViT-B-16", "commonpool_l_text_s1b_b8k", False),
    ("commonpool-l-image-s1b-b8k-vit-b-16", "ViT-B-16", "commonpool_l_image_s1b_b8k", False),
    ("commonpool-l-basic-s1b-b8k-vit-b-16", "ViT-B-16", "commonpool_l_basic_s1b_b8k", False),
    ("commonpool-l-s1b-b8k-vit-b-16", "ViT-B-16", "commonpool_l_s1b_b8k", False),
    ("commonpool-m-laion-s128m-b4k-vit-b-32", "ViT-B-32", "commonpool_m_laion_s128m_b4k", False),
    ("commonpool-m-text-s128m-b4k-vit-b-32", "ViT-B-32", "commonpool_m_text_s128m_b4k", False),
    ("commonpool-m-basic-s128m-b4k-vit-b-32", "ViT-B-32", "commonpool_m_basic_s128m_b4k", False),
    ("commonpool-m-clip-s128m-b4k-vit-b-32", "ViT-B-32", "commonpool_m_clip_s128m_b4k", False),
    ("commonpool-m-image-s128m-b4k-vit-b-32", "ViT-B-32", "commonpool_m_image_s128m_b4k", False),
    ("commonpool-m-s128m-b4k-vit-b-32", "ViT-B-32", "commonpool_m_s128m_b4k", False),
    ("commonpool-s-image-s13m-b4k-vit-b-32", "ViT-B-32", "commonpool_s_image_s13m_b4k", False),
    ("commonpool-s-laion-s13m-b4k-vit-b-32", "ViT-B-32", "commonpool_s_laion_s13m_b4k", False),
    ("commonpool-s-clip-s13m-b4k-vit-b-32", "ViT-B-32", "commonpool_s_clip_s13m_b4k", False),
    ("commonpool-s-text-s13m-b4k-vit-b-32", "ViT-B-32", "commonpool_s_text_s13m_b4k", False),
    ("commonpool-s-basic-s13m-b4k-vit-b-32", "ViT-B-32", "commonpool_s_basic_s13m_b4k", False),
    ("commonpool-s-s13m-b4k-vit-b-32", "ViT-B-32", "commonpool_s_s13m_b4k", False),
)
CHECKPOINTS += tuple(_open_clip(key, f"{architecture} {tag}", architecture, tag, quick_gelu)
                     for key, architecture, tag, quick_gelu in _FIELD)

_BY_KEY = {c.key: c for c in CHECKPOINTS}


def keys() -> list[str]:
    """Every checkpoint's key, in table order."""
    return list(_BY_KEY)


def checkpoint(key: str) -> Checkpoint:
    """The row for ``key``; a ModelError listing the keys otherwise."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise ModelError(f"unknown checkpoint {key!r}; known keys: {', '.join(_BY_KEY)} (python -m crepe_utils "
                         "models lists them). Any other open_clip model is given by architecture and tag "
                         "instead.") from None


def of_family(family: str) -> list[Checkpoint]:
    """The rows a model family builds, in table order."""
    return [c for c in CHECKPOINTS if c.family == family]


def for_open_clip(architecture: str, tag: str) -> Checkpoint | None:
    """The row naming open_clip's ``architecture`` and tag ``tag`` (its default source), if one does."""
    return next((c for c in CHECKPOINTS if c.family == "open_clip" and (c.architecture, c.pretrained)
                 == (architecture, tag) and not c.weights_url), None)
