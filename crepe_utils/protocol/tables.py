"""What a scoring rule returns, and how its two tables are written (crepe_utils.results.store)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from ..lazy import lazy

pd = lazy("pandas")


@dataclass
class Tables:
    """A result's summary (one row per set or subset) and per-query log (chunks, so memory stays flat)."""

    summary: pd.DataFrame
    summary_columns: list[str]
    per_query: Iterable[pd.DataFrame]
    per_query_columns: list[str]
    summary_format: str | None              #: pandas float_format of summary.csv (None: repr)
    per_query_format: str                   #: pandas float_format of per_query.csv.gz
    headline: dict = field(default_factory=dict)   #: the manifest's short account (scores, ties)
    n_scored: int = 0                              #: queries (or examples) scored: 0 is a run with nothing to score
    unscored: list = field(default_factory=list)   #: one description per summary row with nothing scored
    row_key: tuple = ()                            #: the summary columns that name a row's set (its identity)


@dataclass
class Outcomes:
    """What a result's per-query log says of each query, as a paired comparison reads it (a scoring rule's
    ``outcomes``): one row per (set, query) with the set's ``row_key`` values (as its summary spells them),
    ``query_id``, ``correct`` (under the tie policy asked for) and ``pooled`` (whether the row enters the one
    pooled comparison); ``pooled_means`` says in words what the pooled row is."""

    row_key: tuple
    frame: pd.DataFrame
    pooled_means: str


def key_text(value) -> str:
    """A set's key value as its summary's CSV cell reads back as text (missing: empty; a whole float: its integer),
    so that a per-query log's values and a summary's name the same set alike."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
