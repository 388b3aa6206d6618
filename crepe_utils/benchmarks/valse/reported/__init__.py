"""VALSE's published numbers (Parcalabescu et al., ACL 2022) and the released JSONs' pinned counts.

``results.csv``: each model's average over the pieces, pairwise accuracy ``acc_r`` (the caption scored above its
foil) and, for the models with an image–text matching head, accuracy ``acc``, as the paper's results table gives
them (read from Papers with Code's listing of the paper's results: the per-piece values of that table are not
carried here). ``released_counts.csv``: items and valid items per piece, pinned so that a recount can be checked.
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
    """The paper's averages over pieces: model, metric (acc_r or acc), value (%), source."""
    return table(_PACKAGE, "results.csv")


def released_counts() -> dict[str, int]:
    """Pinned counts of the eleven released JSONs: ``items:<piece>``, ``valid:<piece>``, ``items``, ``valid``."""
    df = table(_PACKAGE, "released_counts.csv")
    return {q: int(v) for q, v in zip(df["quantity"], df["value"])}
