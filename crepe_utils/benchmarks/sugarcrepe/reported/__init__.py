"""SugarCrepe's published numbers (Hsieh et al., NeurIPS 2023 D&B) and the released JSONs' pinned counts.

``results.csv``: the results table, Recall@1 (%) per model × subset with ``decimals`` as printed; it names its
models as the paper does, with their open_clip architecture and tag, and its ``imagenet_model`` column is the
checkpoint key (:mod:`crepe_utils.models.checkpoints`). ``imagenet_r.csv``: the paper's Pearson r of each
subset's R@1 against ImageNet zero-shot top-1. ``released_counts.csv``: counts of the seven JSONs, pinned.
"""
from __future__ import annotations

from .... import packaged
from ....packaged import table
from ....lazy import lazy

pd = lazy("pandas")

_PACKAGE = __name__


def transcribed(*names: str) -> str:
    """``transcribed in `<this folder>/<name>` ``: the file a cited published number is in."""
    return packaged.transcribed(_PACKAGE, *names)


def results() -> pd.DataFrame:
    """SugarCrepe's results table: Recall@1 (%) per model × subset, ``decimals`` as printed."""
    return table(_PACKAGE, "results.csv")


def imagenet_r() -> pd.DataFrame:
    """SugarCrepe's Pearson r of each subset's R@1 against ImageNet zero-shot top-1, ``decimals`` as printed."""
    return table(_PACKAGE, "imagenet_r.csv")


def released_counts() -> dict[str, int | str]:
    """Pinned counts of the seven released JSONs: quantity → value."""
    df = table(_PACKAGE, "released_counts.csv")
    return {q: int(v) if str(v).isdigit() else str(v) for q, v in zip(df["quantity"], df["value"])}
