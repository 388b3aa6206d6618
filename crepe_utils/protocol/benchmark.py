"""What a benchmark is: a declaration (name, data, licence, citation, chance, scoring rule) and the
few functions that turn its files into engine queries.

A benchmark's queries are image–text retrieval queries in the engine's shape (an image region and
its candidate captions, positive first; :class:`crepe_utils.engine.core.Query`), whatever the
benchmark: CREPE's regions and hard negatives, SugarCrepe's positive–negative pairs, and each
Winoground image with its example's two captions. The scoring rule (:mod:`crepe_utils.protocol`)
turns the engine's scores into the benchmark's numbers.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import CrepeError


class SelectionError(CrepeError, ValueError):
    """A benchmark name or selection that does not exist; the message lists what does."""


@dataclass(frozen=True)
class Selection:
    """Which part of a benchmark to evaluate; ``None`` means all of it. Each benchmark reads the fields
    that concern it and refuses the others (:meth:`Benchmark.check`)."""

    hn_types: tuple[str, ...] | None = None       #: CREPE's HN types
    complexities: tuple[int, ...] | None = None   #: CREPE productivity's n
    train_data: str | None = None                 #: CREPE systematicity's split (the model's training set)
    all_negatives: bool = True                    #: CREPE productivity's 16-candidate sets (app. B.3)
    subsets: tuple[str, ...] | None = None        #: SugarCrepe's subsets
    layout: str | None = None                     #: Winoground's copy: folder / zip / parquet (default: detect)
    why_hard: str | None = "auto"                 #: Winoground's why-hard labels: a file, "none" or "auto"
    grouping: str = "contiguous"                  #: Winoground's appendix-A interval groups

    def given(self) -> set[str]:
        """The fields set away from their defaults."""
        return {f for f in self.__dataclass_fields__ if getattr(self, f) != getattr(_DEFAULT, f)}


_DEFAULT = Selection()


@dataclass(frozen=True)
class Sources:
    """Where a run reads its data; ``None`` is each benchmark's default location (``crepe_utils.paths``)."""

    data_dir: str | os.PathLike | None = None
    image_dir: str | os.PathLike | None = None


@dataclass(frozen=True)
class Loaded:
    """A benchmark's queries as its query builder made them, with what it needs to score and describe them."""

    queries: list                                  #: engine queries
    issues: list = field(default_factory=list)     #: rows skipped or flagged while reading (RowIssue)
    files: dict = field(default_factory=dict)      #: file → rows read
    images: Callable[[], object] | None = None     #: the image index the engine reads (``missing``, ``locator``, ...),
    #: built on first call: a text-only scorer reads no image folder
    data: dict = field(default_factory=dict)       #: the manifest's description of the data read
    context: object = None                         #: what the scoring rule needs besides the queries


@dataclass(frozen=True)
class Benchmark:
    """One benchmark, declared."""

    name: str                                      #: the --benchmark spelling
    title: str
    citation: str
    licence: str
    datasets: tuple[str, ...]                      #: its groups in the download table (``download <group>``)
    scoring: str                                   #: the rule in crepe_utils.protocol: "retrieval" or "winoground"
    chance: str                                    #: how chance is computed
    selects: frozenset[str]                        #: the Selection fields it reads
    load: Callable[[Sources, Selection, object], Loaded]   #: (sources, selection, settings) → queries
    folder: Callable[[Selection], str]             #: the result folder's name under <results>/<model>/
    aliases: tuple[str, ...] = ()
    for_model: Callable[[Selection, object], Selection] = lambda selection, spec: selection
    """The selection completed for one model (CREPE systematicity: the model's training set)."""

    def check(self, selection: Selection) -> None:
        """Refuse a selection that names what this benchmark does not have."""
        foreign = sorted(selection.given() - self.selects)
        if foreign:
            raise SelectionError(f"benchmark {self.name} has no {', '.join(foreign)} to select "
                                 f"(it selects by: {', '.join(sorted(self.selects)) or 'nothing'})")


def resolved(explicit, default: Callable[[], Path | None]) -> Path | None:
    """An explicit folder as given, else the benchmark's default."""
    return Path(explicit) if explicit else default()
