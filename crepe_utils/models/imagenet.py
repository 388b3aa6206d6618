"""ImageNet zero-shot top-1 of the checkpoints (:mod:`.checkpoints`), with where each number comes from.

``imagenet.csv`` beside this file has one row per checkpoint × measurement: ``open_clip_docs`` is the
value the checkpoint's authors report (open_clip's PRETRAINED.md / README; for OpenAI models the figure
quoted in open_clip's README, where there is one), ``open_clip_results_table`` is open_clip's own
re-evaluation (docs/openclip_results.csv). Its ``model`` column holds checkpoint keys.
"""
from __future__ import annotations

from .. import packaged
from ..packaged import table
from ..lazy import lazy

pd = lazy("pandas")

SOURCES = ("open_clip_docs", "open_clip_results_table")
_PACKAGE = "crepe_utils.models"


def top1(source: str = "open_clip_docs") -> pd.Series:
    """ImageNet zero-shot top-1 (%) per checkpoint key, from ``source`` (one of :data:`SOURCES`).

    For an OpenAI checkpoint without an "open_clip_docs" value the re-evaluated one is used, so that
    every open_clip checkpoint has a value whichever source is asked for.
    """
    if source not in SOURCES:
        raise ValueError(f"unknown ImageNet source {source!r}; choose one of {SOURCES}")
    df = table(_PACKAGE, "imagenet.csv")
    chosen = df[df["measurement"] == source].set_index("model")["top1"]
    fallback = df[df["measurement"] == "open_clip_results_table"].set_index("model")["top1"]
    return chosen.combine_first(fallback).astype(float).rename("imagenet_top1")


def transcribed() -> str:
    """``transcribed in `crepe_utils/models/imagenet.csv` ``: the file every ImageNet value is read from."""
    return packaged.transcribed(_PACKAGE, "imagenet.csv")


def measurements() -> pd.DataFrame:
    """Every ImageNet value with its measurement and source."""
    return table(_PACKAGE, "imagenet.csv")
