"""What a benchmark is: a declaration (name, data, licence, citation, chance, scoring rule) and the
few functions that turn its files into engine queries.

A benchmark's queries are image–text retrieval queries in the engine's shape (an image region and
its candidate captions, positive first; :class:`crepe_utils.engine.core.Query`), whatever the
benchmark: CREPE's regions and hard negatives, SugarCrepe's positive–negative pairs, and each
Winoground image with its example's two captions. The scoring rule (:mod:`crepe_utils.scoring`)
turns the engine's scores into the benchmark's numbers.
"""
from __future__ import annotations

import dataclasses
import numbers
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from ..errors import CrepeError
from ..settings import option_name


class SelectionError(CrepeError, ValueError):
    """A benchmark name or selection that does not exist; the message lists what does."""


def _selects(default, option: str | None, kind, many: bool = False, optional: bool = False):
    """A field of :class:`Selection`: its default, its command-line option, the type of its value (of each
    item, for ``many``: a tuple of them), and whether None is allowed (always, when it is the default)."""
    return field(default=default, metadata={"option": option, "type": kind, "many": many,
                                            "optional": optional or default is None})


@dataclass(frozen=True)
class Selection:
    """Which part of a benchmark to evaluate; ``None`` means all of it. Each benchmark reads the fields
    that concern it, refuses the others and checks each value against its declared allowed values
    (:meth:`Benchmark.check`)."""

    hn_types: tuple[str, ...] | None = _selects(None, "--hn-types", str, many=True)       #: CREPE's HN types
    complexities: tuple[int, ...] | None = _selects(None, "--complexities", int, many=True)  #: productivity's n
    train_data: str | None = _selects(None, "--train-data", str)    #: CREPE systematicity's split (the model's training set)
    all_negatives: bool = _selects(True, None, bool)                #: CREPE productivity's 16-candidate sets (app. B.3)
    subsets: tuple[str, ...] | None = _selects(None, "--subsets", str, many=True)          #: SugarCrepe's subsets
    layout: str | None = _selects(None, "--layout", str)            #: Winoground's copy: folder / zip / parquet (default: detect)
    why_hard: str | None = _selects("auto", "--why-hard", (str, os.PathLike), optional=True)  #: Winoground's why-hard labels: a file, "none" or "auto" (None)
    grouping: str = _selects("contiguous", "--grouping", str)       #: Winoground's appendix-A interval groups

    def __post_init__(self):
        """A list, set or range of a field of several values becomes a tuple (a set sorted: its order is not the
        user's), one value a tuple of one (``hn_types="atom"``); what is left is checked by :meth:`Benchmark.check`."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not f.metadata["many"] or value is None or isinstance(value, tuple):
                continue
            if isinstance(value, (set, frozenset)):
                value = tuple(sorted(value, key=lambda v: (type(v).__name__, v if isinstance(v, (int, str)) else str(v))))
            elif isinstance(value, (list, range)):
                value = tuple(value)
            elif isinstance(value, (str, int)) and not isinstance(value, bool):
                value = (value,)
            object.__setattr__(self, f.name, value)

    def given(self) -> set[str]:
        """The fields set away from their defaults."""
        return {f for f in self.__dataclass_fields__ if getattr(self, f) != getattr(_DEFAULT, f)}

    def describe(self) -> str:
        """The fields set away from their defaults, as ``name=value`` (``"the whole benchmark"`` when none)."""
        given = [f"{f}={_shown(getattr(self, f))}" for f in self.__dataclass_fields__ if f in self.given()]
        return ", ".join(given) or "the whole benchmark"


def _shown(value) -> str:
    return " ".join(map(str, value)) if isinstance(value, tuple) else str(value)


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
    #: every retrieval set the selection asks for, scored or not: (benchmark, train_data, hn_type, split,
    #: complexity), as its queries' fields say; a set whose queries were all skipped still has its summary row
    sets: tuple = ()


@dataclass(frozen=True)
class Benchmark:
    """One benchmark, declared."""

    name: str                                      #: the --benchmark spelling
    title: str
    citation: str
    licence: str
    datasets: tuple[str, ...]                      #: its groups in the download table (``download <group>``)
    scoring: str                                   #: the rule in crepe_utils.scoring: "retrieval" or "winoground"
    chance: str                                    #: how chance is computed
    selects: Mapping[str, tuple | None]            #: the Selection fields it reads → their allowed values
    #: (of each item of a tuple field; None: any value of the field's type)
    load: Callable[[Sources, Selection, object], Loaded]   #: (sources, selection, settings) → queries
    folder: Callable[[Selection], str]             #: the result folder's name under <results>/<model>/
    aliases: tuple[str, ...] = ()
    for_model: Callable[[Selection, object], Selection] = lambda selection, spec: selection
    """The selection completed for one model (CREPE systematicity: the model's training set)."""
    agree: Callable[[Selection], str | None] = lambda selection: None
    """Why the selection's values contradict each other (checked after each value), or None."""
    ignores: frozenset = frozenset()
    """Evaluation settings it has no use for: one set away from its default is refused, not silently ignored."""

    def check_settings(self, settings) -> None:
        """Refuse a setting this benchmark would ignore (Winoground's ``limit``: it has no retrieval sets)."""
        unused = [f"{f.name} ({option_name(f)})" for f in dataclasses.fields(settings)
                  if f.name in self.ignores and getattr(settings, f.name) != f.default]
        if unused:
            raise SelectionError(f"benchmark {self.name} does not use the setting {', '.join(unused)}: leave "
                                 f"{'it' if len(unused) == 1 else 'them'} at the default")

    def check(self, selection: Selection) -> None:
        """Refuse a selection that names what this benchmark does not have, or a value it does not allow
        (one line listing the allowed values): the command line and the Python API alike."""
        foreign = sorted(selection.given() - set(self.selects))
        if foreign:
            raise SelectionError(f"benchmark {self.name} has no {', '.join(foreign)} to select "
                                 f"(it selects by: {', '.join(sorted(self.selects)) or 'nothing'})")
        for f in dataclasses.fields(Selection):
            if f.name in self.selects:
                _check_value(self.name, f, getattr(selection, f.name), self.selects[f.name])
        contradiction = self.agree(selection)
        if contradiction:
            raise SelectionError(f"{self.name}: {contradiction}")


def _check_value(benchmark: str, f: dataclasses.Field, value, allowed: tuple | None) -> None:
    """Raise a :class:`SelectionError` naming the benchmark, the field and its option unless ``value`` is one
    that ``f`` holds and ``allowed`` lists."""
    meta = f.metadata
    label = f"{f.name} ({meta['option']})" if meta["option"] else f.name
    choose = f"; choose from {', '.join(map(str, allowed))}" if allowed else ""
    if value is None and meta["optional"]:
        return                                             # None: all of it, or detected
    if meta["many"]:
        if not isinstance(value, tuple):
            raise SelectionError(f"{benchmark}: {label} must be a list of values, got {value!r}{choose}")
        if not value:
            raise SelectionError(f"{benchmark}: {label} is empty and so selects nothing: give one or more values"
                                 f"{choose}, or None for all")
        twice = sorted({v for v in value if value.count(v) > 1}, key=str)
        if twice:
            raise SelectionError(f"{benchmark}: {label} names {', '.join(map(str, twice))} more than once; "
                                 "give each value once")
    for item in value if meta["many"] else (value,):
        kind = meta["type"]
        ok = (isinstance(item, numbers.Integral) and not isinstance(item, bool)) if kind is int else isinstance(item, kind)
        if not ok or (allowed is not None and item not in allowed):
            what = f"is not allowed{choose}" if ok else f"is a {type(item).__name__}, not {_type_name(kind)}{choose}"
            raise SelectionError(f"{benchmark}: {label} {item!r} {what}")
        if kind is str and allowed is None and not _NAME.fullmatch(item):   # a name that becomes part of a file name
            raise SelectionError(f"{benchmark}: {label} {item!r} is not a name: use letters, digits, '-', '_' and '.'")


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _type_name(kind) -> str:
    names = {int: "an integer", str: "a string", bool: "True or False", os.PathLike: "a path"}
    return " or ".join(names.get(k, k.__name__) for k in (kind if isinstance(kind, tuple) else (kind,)))


def resolved(explicit, default: Callable[[], Path | None]) -> Path | None:
    """An explicit folder as given, else the benchmark's default."""
    return Path(explicit) if explicit else default()
