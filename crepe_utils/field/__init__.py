"""The field: vl_compo's table of 202 CLIP checkpoints on twelve compositionality benchmarks, as a reported source.

Oh, Ahn, Kim, Song, Lee, Kweon and Kim, "Exploring the Spectrum of Visio-Linguistic Compositionality and
Recognition", CVPR 2024 Workshop on What is Next in Multimodal Foundation Models? (MMFM), arXiv 2406.09388. The
table is ``individual_results.csv`` of the repository ytaek-oh/vl_compo at commit 43e2eae (its sha256 is
:data:`SOURCE_SHA256`); the repository holds no evaluation code, so how each column was aggregated is established
from the numbers (:mod:`crepe_utils.across.field`), not assumed.

The package carries the columns the companion uses (``reported/vl_compo.csv``: the source's values as printed, with
its row number, architecture, tag and family): CREPE's three productivity types, SugarCrepe's seven subsets,
Winoground's three scores, VALSE's eleven pieces and ImageNet zero-shot top-1 (ELEVATER's). ``reported/
checkpoints.csv`` maps each row that open_clip 3.3.0 builds to its key in the checkpoint table
(:mod:`crepe_utils.models.checkpoints`), with a flag where the row is not a plain evaluation of that checkpoint.
:data:`ROSTER` is those keys: ``evaluate-paper --models field`` evaluates them on :data:`BENCHMARKS`.

A row is a hard-negative fine-tune when its tag ends in ``-ft`` (8 rows: NegCLIP, DAC, CE-CLIP, CLoVe, ...); the
family column would also count ALIP, which is pretrained from scratch.
"""
from __future__ import annotations

from . import reported
from ..lazy import lazy

pd = lazy("pandas")

CITATION = ("Oh et al., Exploring the Spectrum of Visio-Linguistic Compositionality and Recognition, CVPR 2024 "
            "Workshop MMFM, arXiv 2406.09388")
REPOSITORY = "ytaek-oh/vl_compo"
COMMIT = "43e2eae"
SOURCE_FILE = "individual_results.csv"
SOURCE_SHA256 = "732af73af35f7e0b10c7cd58709b54504f95d2778b74193f8be58d13bafc5da5"
#: what a caption or table names it by
SHORT = "vl_compo (Oh et al. 2024)"

#: the benchmarks the table covers that the companion scores → the table's columns of each, in the table's order.
#: The CREPE columns pool its productivity complexities (one item set per type: the archive's ``_all`` files)
COLUMNS: dict[str, tuple[str, ...]] = {
    "crepe-productivity": ("crepe::atom", "crepe::swap", "crepe::negate"),
    "sugarcrepe": tuple(f"sugarcrepe::{s}" for s in ("replace_obj", "replace_att", "replace_rel", "swap_obj",
                                                      "swap_att", "add_obj", "add_att")),
    "winoground": ("winoground::text", "winoground::image", "winoground::group"),
    "valse": tuple(f"valse::{p}" for p in ("existence", "plurals", "counting-hard", "counting-small-quant",
                                            "counting-adversarial", "relations", "action-replacement", "actant-swap",
                                            "coreference-standard", "coreference-hard", "foil-it")),
}
BENCHMARKS = tuple(COLUMNS)
#: ImageNet zero-shot top-1 (%), on ILSVRC-2012's validation images
IMAGENET = "elevator::imagenet-1k"
IMAGENET_IMAGES = 50_000
#: a tag with this ending is a hard-negative fine-tune of a pretrained CLIP
FINE_TUNED_SUFFIX = "-ft"


def part(column: str) -> str:
    """The benchmark's own name for a column's part: ``crepe::swap`` → ``swap``."""
    return column.split("::", 1)[1]


def benchmark_of(column: str) -> str:
    """The benchmark a column is about (a key of :data:`COLUMNS`)."""
    return next(b for b, cols in COLUMNS.items() if column in cols)


def table() -> pd.DataFrame:
    """The carried table (202 rows, values as floats) with ``fine_tuned`` and each row's ``checkpoint`` key and
    ``flag`` (empty where open_clip cannot build the row)."""
    df = reported.values()
    keys = reported.checkpoints().set_index("row")
    df["fine_tuned"] = df["pretrained"].str.endswith(FINE_TUNED_SUFFIX)
    df["checkpoint"] = df["row"].map(keys["checkpoint"]).fillna("")
    df["flag"] = df["row"].map(keys["flag"]).fillna("")
    return df


def __getattr__(name: str):
    """``ROSTER``: the checkpoint-table keys of the rows open_clip builds, in row order, each once; read from the
    carried table when first asked for (the command line's help, which imports this, never asks)."""
    if name != "ROSTER":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    roster = tuple(dict.fromkeys(k for k in reported.checkpoints()["checkpoint"] if k))
    globals()["ROSTER"] = roster
    return roster
