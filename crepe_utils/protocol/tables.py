"""What a scoring rule returns, and how its two tables are written (crepe_utils.results.store)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable



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
