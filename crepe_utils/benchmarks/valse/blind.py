"""VALSE without looking: the blind scorers' pairwise accuracy per piece of the valid set, as vl_compo's table of
the field counts it (:func:`run`, :func:`field_counts`); notebook 09 shows the same table with more scorers."""
from __future__ import annotations

from ... import blind
from . import analysis
from ...lazy import lazy

pd = lazy("pandas")

HOW_TO_GET = "`make data-valse` fetches its JSONs (6 MB)"


def run(data_dir=None, scorers=analysis.SCORERS, settings=blind.BlindSettings()) -> pd.DataFrame | str:
    """Each scorer on each piece of the valid set (:func:`.analysis.blind_table`), or why there are none."""
    selected = analysis.items(data_dir, "valid")
    return selected if isinstance(selected, str) else analysis.blind_table(selected, scorers, settings)


def field_counts(table: pd.DataFrame) -> list[dict]:
    """Each scorer's wins of N per piece: rows of column, scorer, k, n."""
    return [{"column": f"valse::{r.piece}", "scorer": r.scorer.removeprefix("blind:"), "k": int(r.wins),
             "n": int(r.n)} for r in table.itertuples()]
