"""VALSE in vl_compo's table of the field (:class:`~crepe_utils.protocol.benchmark.FieldView`): its published CLIP
average against the field's OpenAI ViT-B/32, averaged three ways.

``agreement``         the published average beside the field's pieces' mean, phenomena's mean and pooled items
``check_agreement``  the unweighted pieces' mean against the published average, within its printed rounding
"""
from __future__ import annotations

import numpy as np

from ...analysis.proportions import counts
from ...claims.base import FAIL, PASS, SOURCES, Check
from ...protocol.benchmark import FieldView
from . import TABLE_COLUMNS, reported
from .data import PIECES
from ...lazy import lazy

pd = lazy("pandas")

#: VALSE names its model "CLIP"; the comparison takes OpenAI's ViT-B/32, the first CLIP released
CLIP = "openai-vit-b-32"


def agreement(view: FieldView, published: pd.DataFrame | None = None, key: str = CLIP) -> dict:
    """VALSE's published CLIP average pairwise accuracy beside the field's row ``key`` averaged three ways: the
    unweighted mean of the eleven pieces, the mean of the seven phenomena (each its pieces' mean: what vl_compo's
    own results.csv prints), and Σk/ΣN pooled over the valid items; and the range of the pieces' mean over the
    field's other OpenAI CLIP rows."""
    rows_by_key = view.rows
    published = reported.results() if published is None else published
    paper = published[(published["model"] == "CLIP") & (published["metric"] == "acc_r")]["value"]
    columns, released = list(TABLE_COLUMNS.columns), view.released
    values = rows_by_key.loc[key, columns].astype(float) if key in rows_by_key.index else pd.Series(dtype=float)
    phenomena = pd.Series([p.phenomenon for p in PIECES], index=[f"valse::{p.name}" for p in PIECES])
    openai = [k for k in rows_by_key.index if rows_by_key.loc[k, "pretrained"] == "openai"]
    means = rows_by_key.loc[openai, columns].astype(float).mean(axis=1)
    ks = sum(int(counts([values[c]], released[c])[0]) for c in columns) if len(values) else 0
    return {"checkpoint": key, "paper": float(paper.iloc[0]) if len(paper) else np.nan, "paper_decimals": 1,
            "pieces_mean": float(values.mean()) if len(values) else np.nan,
            "phenomena_mean": float(values.groupby(phenomena.reindex(values.index)).mean().mean())
            if len(values) else np.nan,
            "pooled": 100 * ks / sum(released[c] for c in columns) if len(values) else np.nan,
            "openai_checkpoints": len(openai), "openai_min": float(means.min()), "openai_max": float(means.max())}


def check_agreement(average: dict, view: FieldView | None = None) -> list[Check]:
    """VALSE's CLIP average pairwise accuracy against the unweighted mean of the field's OpenAI ViT-B/32 pieces."""
    group = view.group if view is not None else "field"
    claim = "vl_compo's OpenAI ViT-B/32 averages VALSE's CLIP pairwise accuracy over the pieces"
    paper = f"{average['paper']:.1f} (CLIP, acc_r)"
    if not np.isfinite(average["pieces_mean"]) or not np.isfinite(average["paper"]):
        return [Check(claim, paper, "—", FAIL, "no VALSE values for the checkpoint", group)]
    off = average["pieces_mean"] - average["paper"]
    ok = abs(off) <= 0.05 + 1e-9
    detail = (f"the unweighted mean of the eleven pieces, {off:+.2f} points; the mean of the seven phenomena (vl_compo's "
              f"own average) is {average['phenomena_mean']:.2f} and the valid items pooled {average['pooled']:.2f}; "
              f"the field's {average['openai_checkpoints']} OpenAI CLIP rows average {average['openai_min']:.2f} to "
              f"{average['openai_max']:.2f}. VALSE names its model CLIP (taken as ViT-B/32 here) and its per-piece "
              "values are not carried, so which pieces differ cannot be said")
    return [Check(claim, paper, f"{average['pieces_mean']:.2f}", PASS if ok else SOURCES, detail, group)]


def blind_claims() -> list[tuple[str, str, list[str], str]]:
    """What the blind scorers reach among the field on VALSE: (claim, scorer, columns, among which)."""
    return [("A text-only scorer beats all 202 checkpoints of the field on VALSE's existence piece", "best",
             ["valse::existence"], "all")]
