"""The models of the CREPE paper, as one declarative table.

Each row says what a checkpoint *is* (architecture, activation, weights, training data) and how
the paper names it. Loading lives in :mod:`crepe_utils.models`; this module imports no torch.

Sources: open_clip's pretrained table (names, tags, release files), the official code
``RAIVNLab/CREPE@1fa81c4`` (which model enters which protocol), the CREPE paper (display names).

Facts worth knowing before touching this table:

* The official code loads the ``-quickgelu`` variants of RN50, RN101 and ViT-B-32 although the
  paper names them plainly. Loading QuickGELU weights into a GELU model changes every number
  (open_clip only warns); :func:`crepe_utils.models.load_model` refuses such a mismatch.
* ``ViT-B-16-plus-240`` / ``laion400m_e32`` points open_clip's hub download at the *e31*
  weights. The paper used e32, so that row pins the release file URL (with its SHA-256 prefix,
  ``699c4b84``) and bypasses the hub.
* CyCLIP, FLAVA and ALBEF are not open_clip models; ``loader`` names the model family that
  builds each (``crepe_utils.models.FAMILIES``). CyCLIP's weights sit on Google Drive (not
  scriptable reliably): the user places the file. FLAVA and ALBEF saw Visual Genome images in
  training (CREPE §5.2), so their productivity numbers are not held out: ``caveat``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import ModelError

OPEN_CLIP_RELEASE = "https://github.com/mlfoundations/open_clip/releases/download/v0.2-weights/"

#: Systematicity splits exist for these three training sets only (the CREPE README says the
#: systematicity sets "should only be used to evaluate models pretrained on CC12M, YFCC15M or
#: LAION400M"). Keys are the file-name tokens of ``syst_vg_hard_negs_*_in_{train}.csv``.
SYSTEMATICITY_TRAIN_DATA = ("cc12m", "yfcc", "laion")

TRAIN_DATA_LABELS = {
    "cc12m": "CC-12M",
    "yfcc": "YFCC-15M",
    "laion": "LAION-400M",
    "openai": "OpenAI WIT-400M",
    "other": "other",
}


@dataclass(frozen=True)
class PaperModel:
    """One checkpoint the CREPE paper reports on."""

    key: str                      #: our stable identifier, used in every table and results folder
    display: str                  #: the paper's name for it
    train_data: str               #: key of TRAIN_DATA_LABELS
    loader: str                   #: model family (crepe_utils.models.FAMILIES), or "published numbers only"
    architecture: str | None = None   #: exact open_clip model name (with -quickgelu when needed)
    pretrained: str | None = None     #: open_clip pretrained tag
    quick_gelu: bool | None = None    #: activation the weights were trained with
    weights_url: str | None = None    #: download this file instead of open_clip's default source
    release_file: str | None = None   #: CREPE's local file name (DATA2MODEL) for the checkpoint
    weights_source: str | None = None  #: where a user fetches weights that cannot be downloaded for them
    systematicity: bool = False       #: evaluated on systematicity in the paper
    productivity: bool = True         #: evaluated on productivity in the paper
    note: str = ""
    caveat: str = ""                  #: carried into every output of this model (manifest, tables)

    @property
    def train_label(self) -> str:
        return TRAIN_DATA_LABELS[self.train_data]

    @property
    def evaluable(self) -> bool:
        return self.loader != PUBLISHED_ONLY


PUBLISHED_ONLY = "published numbers only"

VG_CAVEAT = ("trained on Visual Genome images (CREPE §5.2): its productivity results are not on held-out "
             "images")

PAPER_MODELS: tuple[PaperModel, ...] = (
    # --- open_clip checkpoints: systematicity and productivity ---------------------------------
    PaperModel("cc12m-rn50", "CC-12M RN50", "cc12m", "open_clip", "RN50-quickgelu", "cc12m", True,
               release_file="rn50-quickgelu-cc12m-f000538c.pt", systematicity=True),
    PaperModel("yfcc15m-rn50", "YFCC-15M RN50", "yfcc", "open_clip", "RN50-quickgelu", "yfcc15m", True,
               release_file="rn50-quickgelu-yfcc15m-455df137.pt", systematicity=True),
    PaperModel("yfcc15m-rn101", "YFCC-15M RN101", "yfcc", "open_clip", "RN101-quickgelu", "yfcc15m", True,
               release_file="rn101-quickgelu-yfcc15m-3e04b30e.pt", systematicity=True),
    PaperModel("laion400m-vit-b-32", "LAION ViT-B-32", "laion", "open_clip", "ViT-B-32-quickgelu",
               "laion400m_e32", True, release_file="vit_b_32-quickgelu-laion400m_e32-46683a32.pt",
               systematicity=True),
    PaperModel("laion400m-vit-b-16", "LAION ViT-B-16", "laion", "open_clip", "ViT-B-16", "laion400m_e32",
               False, release_file="vit_b_16-laion400m_e32-55e67d44.pt", systematicity=True),
    PaperModel("laion400m-vit-b-16-plus-240", "LAION ViT-B-16+240", "laion", "open_clip",
               "ViT-B-16-plus-240", "laion400m_e32", False,
               weights_url=OPEN_CLIP_RELEASE + "vit_b_16_plus_240-laion400m_e32-699c4b84.pt",
               release_file="vit_b_16_plus_240-laion400m_e32-699c4b84.pt", systematicity=True,
               note="open_clip's hub entry for this tag serves e31 weights; the release file is e32"),
    PaperModel("laion400m-vit-l-14", "LAION ViT-L-14", "laion", "open_clip", "ViT-L-14", "laion400m_e32",
               False, release_file="vit_l_14-laion400m_e32-3d133497.pt", systematicity=True),
    # --- OpenAI CLIP through open_clip: productivity only --------------------------------------
    # The official script loads these with clip.load(), which keeps fp16 weights on CUDA; we load
    # the same weights through open_clip (QuickGELU architecture) and default to fp32.
    PaperModel("openai-rn50", "OpenAI CLIP RN50", "openai", "open_clip", "RN50-quickgelu", "openai", True),
    PaperModel("openai-rn101", "OpenAI CLIP RN101", "openai", "open_clip", "RN101-quickgelu", "openai", True),
    PaperModel("openai-vit-b-32", "OpenAI CLIP ViT-B/32", "openai", "open_clip", "ViT-B-32-quickgelu",
               "openai", True),
    PaperModel("openai-vit-b-16", "OpenAI CLIP ViT-B/16", "openai", "open_clip", "ViT-B-16-quickgelu",
               "openai", True),
    PaperModel("openai-vit-l-14", "OpenAI CLIP ViT-L/14", "openai", "open_clip", "ViT-L-14-quickgelu",
               "openai", True),
    # --- other families ------------------------------------------------------------------------
    # Architectures and weight files as the official scripts load them (crepe_prod_eval_*.py).
    PaperModel("cyclip-rn50", "CyCLIP RN50", "other", "cyclip", "RN50", quick_gelu=True,
               release_file="best.pt",
               weights_source="https://drive.google.com/drive/u/0/folders/1K0kPJZ3MA4KAdx3Fpq25dgW59wIf7M-x",
               note="CyCLIP README 'Pretrained Checkpoints' (CC BY-NC); an OpenAI-format RN50 state dict"),
    PaperModel("flava", "FLAVA", "other", "flava", "FLAVA-full (ViT-B/16, 224 px)",
               weights_url="https://download.pytorch.org/models/multimodal/flava/flava_model_unified_text_encoder.pt",
               release_file="flava_model_unified_text_encoder.pt", caveat=VG_CAVEAT,
               note="torchmultimodal's flava_full checkpoint, as the official script; contrastive heads only"),
    PaperModel("albef-14m", "ALBEF", "other", "albef", "ALBEF-ViT-B-16-384",
               weights_url="https://storage.googleapis.com/sfr-pcl-data-research/ALBEF/ALBEF.pth",
               release_file="ALBEF.pth", caveat=VG_CAVEAT,
               note="the 14M pre-training checkpoint; contrastive heads only, at 384 px"),
)

_BY_KEY = {m.key: m for m in PAPER_MODELS}


def paper_model(key: str) -> PaperModel:
    """The registry row for ``key``; a clear error listing the known keys otherwise."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise ModelError(
            f"unknown paper model {key!r}; known keys: {', '.join(_BY_KEY)}. "
            "Any other open_clip model is given by architecture and tag instead."
        ) from None


def paper_models(systematicity: bool | None = None, evaluable: bool | None = None,
                 loader: str | None = None) -> list[PaperModel]:
    """Registry rows in paper order, optionally filtered (``loader``: one model family)."""
    rows = list(PAPER_MODELS)
    if loader is not None:
        rows = [m for m in rows if m.loader == loader]
    if systematicity is not None:
        rows = [m for m in rows if m.systematicity == systematicity]
    if evaluable is not None:
        rows = [m for m in rows if m.evaluable == evaluable]
    return rows


def display_names() -> dict[str, str]:
    """Map from registry key to the paper's display name."""
    return {m.key: m.display for m in PAPER_MODELS}


def model_order() -> list[str]:
    """Registry keys in the paper's order (for sorting tables and plot legends)."""
    return [m.key for m in PAPER_MODELS]
