"""Winoground's published numbers (Thrush et al., CVPR 2022) and the released text's pinned counts.

``table3.csv``: Table 3's text, image and group scores (%); ``claims.csv``: the paper's stated numbers that
the checks test (examples, chance levels, tag counts), each with its section or table; ``released_counts.csv``:
counts of the released text metadata, pinned so that a recount can be checked against them.
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


def table3() -> pd.DataFrame:
    """Winoground Table 3: text, image and group scores (%)."""
    return table(_PACKAGE, "table3.csv")


def claims() -> pd.DataFrame:
    """The paper's stated numbers that the checks test."""
    return table(_PACKAGE, "claims.csv")


def claim(claim_id: str) -> float:
    """The value of one claim."""
    df = claims().set_index("claim_id")
    if claim_id not in df.index:
        raise KeyError(f"no claim {claim_id!r} in Winoground's reported/claims.csv")
    return float(df.loc[claim_id, "value"])


def claim_source(claim_id: str) -> str:
    return str(claims().set_index("claim_id").loc[claim_id, "source"])


def released_counts() -> dict[str, int | str]:
    """Pinned counts of the released text metadata: quantity → value."""
    df = table(_PACKAGE, "released_counts.csv")
    return {q: int(v) if str(v).isdigit() else str(v) for q, v in zip(df["quantity"], df["value"])}
