"""The papers' published numbers, as tidy tables with their sources.

Every CSV in ``crepe_utils/reported/`` has one value per row and a ``source`` column naming the
paper section or table it comes from. The functions here
only read them; nothing is computed. Model keys are those of :mod:`crepe_utils.benchmarks.crepe.roster`.

Two files hold counts of the released *data* rather than the papers' numbers, pinned so that a
recount can be checked against them: ``released_productivity_files.csv`` (per productivity CSV:
sha256 and counts) and ``released_counts.csv`` (totals of CREPE's productivity files, of
Winoground's text metadata and of SugarCrepe's JSONs).

SugarCrepe's results table (``sugarcrepe_published.csv``) names its models as the paper does, with
their open_clip architecture and tag; its ``imagenet_model`` column is the model's key in
``imagenet_zeroshot.csv``, which therefore also holds CLIP models outside the registry.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources

import pandas as pd

from .. import roster as registry

#: ImageNet accuracy sources: "open_clip_docs" is the value the checkpoint's authors report
#: (open_clip's PRETRAINED.md / README; for OpenAI models the figure quoted in open_clip's README,
#: where there is one), "open_clip_results_table" is open_clip's re-evaluation
#: (docs/openclip_results.csv).
IMAGENET_SOURCES = ("open_clip_docs", "open_clip_results_table")


@lru_cache(maxsize=None)
def _read(name: str) -> pd.DataFrame:
    with resources.files("crepe_utils.benchmarks.crepe.reported").joinpath(name).open("r", encoding="utf-8") as fh:
        return pd.read_csv(fh, keep_default_na=False)


def _with_model_columns(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    names = registry.display_names()
    trains = {m.key: m.train_data for m in registry.PAPER_MODELS}
    out.insert(1, "display", out["model"].map(names))
    out.insert(2, "train_data", out["model"].map(trains))
    return out


def systematicity() -> pd.DataFrame:
    """Systematicity Recall@1 (%), one row per model × HN set (combined/atom/comp) × split (SC/UC)."""
    return _with_model_columns(_read("systematicity_r1.csv"))


def systematicity_printed_deltas() -> pd.DataFrame:
    """The UC − SC changes as printed in the paper (checked against the R@1 values)."""
    return _with_model_columns(_read("systematicity_delta_printed.csv"))


def systematicity_wide() -> pd.DataFrame:
    """SC, UC and UC − SC per model × HN set, in paper order."""
    df = systematicity()
    wide = df.pivot_table(index=["model", "display", "train_data", "hn_type"], columns="split",
                          values="r1").reset_index()
    wide.columns.name = None
    wide["delta"] = (wide["UC"] - wide["SC"]).round(2)
    return sort_by_model(wide, extra=["hn_type"], extra_order={"hn_type": ["combined", "atom", "comp"]})


def productivity() -> pd.DataFrame:
    """Productivity Recall@1 (%) at complexity 4 and 12 for 15 models × HN-Atom/Swap/Neg."""
    return _with_model_columns(_read("productivity_r1.csv"))


def winoground_table3() -> pd.DataFrame:
    """Winoground Table 3: text, image and group scores (%)."""
    return _read("winoground_table3.csv").copy()


def imagenet(source: str = "open_clip_docs") -> pd.Series:
    """ImageNet zero-shot top-1 (%) per model key, from ``source`` (see IMAGENET_SOURCES).

    For an OpenAI model without an "open_clip_docs" value the re-evaluated one is used, so that
    every open_clip paper model has a value whichever source is asked for.
    """
    if source not in IMAGENET_SOURCES:
        raise ValueError(f"unknown ImageNet source {source!r}; choose one of {IMAGENET_SOURCES}")
    df = _read("imagenet_zeroshot.csv")
    chosen = df[df["measurement"] == source].set_index("model")["top1"]
    fallback = df[df["measurement"] == "open_clip_results_table"].set_index("model")["top1"]
    return chosen.combine_first(fallback).astype(float).rename("imagenet_top1")


def imagenet_table() -> pd.DataFrame:
    """All ImageNet zero-shot values with their sources."""
    return _with_model_columns(_read("imagenet_zeroshot.csv"))


def sugarcrepe_published() -> pd.DataFrame:
    """SugarCrepe's results table: Recall@1 (%) per model × subset, ``decimals`` as printed."""
    return _read("sugarcrepe_published.csv").copy()


def sugarcrepe_imagenet_r() -> pd.DataFrame:
    """SugarCrepe's Pearson r of each subset's R@1 against ImageNet zero-shot top-1, ``decimals`` as printed."""
    return _read("sugarcrepe_imagenet_r.csv").copy()


def blind_published() -> pd.DataFrame:
    """Published text-only ("blind") Recall@1 (%) on CREPE productivity per HN type, beside the CLIP row they
    were compared with."""
    return _read("blind_published.csv").copy()


def claims() -> pd.DataFrame:
    """The papers' stated numbers that the checks test (R², chance levels, totals, tag counts)."""
    return _read("claims.csv").copy()


def claim(claim_id: str) -> float:
    """The value of one claim."""
    df = claims().set_index("claim_id")
    if claim_id not in df.index:
        raise KeyError(f"no claim {claim_id!r} in reported/claims.csv")
    return float(df.loc[claim_id, "value"])


def released_productivity_files() -> pd.DataFrame:
    """Per released productivity CSV: hn_type, complexity, sha256 and its pinned counts."""
    return _read("released_productivity_files.csv").copy()


def released_productivity_queries() -> dict[tuple[str, int], int]:
    """(hn_type, complexity) → the pinned row count of that released productivity CSV (one query per row)."""
    df = released_productivity_files()
    return {(hn, int(n)): int(rows) for hn, n, rows in zip(df["hn_type"], df["complexity"], df["rows"])}


def released_counts(dataset: str) -> dict[str, int | str]:
    """Pinned counts of one released dataset ("crepe-prod", "winoground", "sugarcrepe"): quantity → value."""
    df = _read("released_counts.csv")
    rows = df[df["dataset"] == dataset]
    if rows.empty:
        raise KeyError(f"no pinned counts for {dataset!r} in reported/released_counts.csv")
    return {q: int(v) if str(v).isdigit() else str(v) for q, v in zip(rows["quantity"], rows["value"])}


def claim_source(claim_id: str) -> str:
    return str(claims().set_index("claim_id").loc[claim_id, "source"])


def sort_by_model(df: pd.DataFrame, extra: list[str] | None = None,
                  extra_order: dict[str, list] | None = None) -> pd.DataFrame:
    """Sort rows in paper model order (unknown models last, alphabetically), then by ``extra``."""
    order = {k: i for i, k in enumerate(registry.model_order())}
    keys = ["_model_rank", "model"] + (extra or [])
    out = df.assign(_model_rank=df["model"].map(order).fillna(len(order)))
    for col, values in (extra_order or {}).items():
        rank = {v: i for i, v in enumerate(values)}
        out[f"_{col}_rank"] = out[col].map(rank).fillna(len(rank))
        keys[keys.index(col)] = f"_{col}_rank"
    out = out.sort_values(keys, kind="stable")
    return out.drop(columns=[c for c in out.columns if c.startswith("_")]).reset_index(drop=True)
