"""What a benchmark is: a declaration (name, data, licence, citation, chance, the fields its queries are grouped
by, its selection options, its scoring rule) and the few functions that turn its files into engine queries.

A benchmark's queries are image–text retrieval queries in the engine's shape: any object with ``query_id``,
``image_id``, ``box`` (a region, or None for the whole image) and ``candidates`` (the positive first), plus the
benchmark's declared ``groups`` as attributes (a hard-negative type and a complexity, a subset, ...): a
results row is one group. Its scoring rule (:class:`ScoringRule`) turns the engine's scores into its numbers.

Each benchmark declares its own selection :class:`Option`\\ s; a :class:`Selection` holds the values given for
them, checked by :meth:`Benchmark.selection`, and the command line's options are made from the declarations
(:func:`crepe_utils.evaluate_command.add_selection_arguments`).
"""
from __future__ import annotations

import dataclasses
import numbers
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Callable

from ..errors import CrepeError


class SelectionError(CrepeError, ValueError):
    """A benchmark name or selection that does not exist; the message lists what does."""


@dataclass(frozen=True)
class Option:
    """One way to select part of a benchmark: ``name`` is the keyword (``--name-with-dashes`` on the command line)."""

    name: str
    help: str
    choices: tuple | None = None     #: the allowed values (of each element, when ``many``); None: any of ``type``
    type: type = str
    many: bool = False               #: a list of values (``--hn-types atom swap``), kept as a tuple
    default: object = None           #: None: all of the benchmark

    def check(self, value, benchmark: str):
        """``value`` as the selection keeps it (lists as tuples); a SelectionError naming what is allowed otherwise."""
        if value is None or value == self.default:
            return value
        values = tuple(value) if self.many and isinstance(value, (list, tuple, set, frozenset)) else (value,)
        if self.many and isinstance(value, (set, frozenset)):
            values = tuple(sorted(values))
        values = tuple(dict.fromkeys(values))          # a value named twice selects its part once
        bad = [v for v in values if not self._fits(v)]
        if bad or (self.many and not values):
            allowed = (", ".join(map(str, self.choices)) if self.choices is not None
                       else {int: "integers", str: "text", bool: "True or False"}[self.type])
            what = f"{', '.join(map(repr, bad))}" if bad else "an empty list"
            raise SelectionError(f"{benchmark}: {self.name} {what} is not allowed; choose from: {allowed}")
        return values if self.many else values[0]

    def _fits(self, v) -> bool:
        if self.type is int:
            ok = isinstance(v, numbers.Integral) and not isinstance(v, bool)
        else:
            ok = isinstance(v, self.type)
        return ok and (self.choices is None or v in self.choices)


class Selection(Mapping):
    """Which part of a benchmark to evaluate: option name → value (None: all of it). Immutable and hashable;
    values read as attributes (``selection.hn_types``). A benchmark's :meth:`Benchmark.selection` checks one and
    fills in every option it does not give."""

    def __init__(self, **values):
        self._values = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}

    def __getitem__(self, name):
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __getattr__(self, name):
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(f"the selection has no {name!r}") from None

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._values.items(), key=lambda kv: kv[0])))

    def __eq__(self, other) -> bool:
        return isinstance(other, Selection) and self._values == other._values

    def __repr__(self) -> str:
        return f"Selection({', '.join(f'{k}={v!r}' for k, v in self._values.items())})"

    def replace(self, **changes) -> Selection:
        return Selection(**{**self._values, **changes})


@dataclass(frozen=True)
class Sources:
    """Where a run reads its data; ``None`` is each benchmark's default location (its datasets' folders)."""

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
    groups: tuple[str, ...] = ()                   #: the benchmark's grouping fields (set by the evaluation)


def limited(queries: list, limit: int | None, groups: tuple[str, ...]) -> list:
    """At most ``limit`` queries of each group (the values of ``groups``), in order; all of them without a limit."""
    if not limit:
        return list(queries)
    counts: dict[tuple, int] = {}
    kept = []
    for q in queries:
        key = tuple(getattr(q, g) for g in groups)
        counts[key] = counts.get(key, 0) + 1
        if counts[key] <= limit:
            kept.append(q)
    return kept


@dataclass(frozen=True)
class ScoringRule:
    """How the engine's scores become a benchmark's numbers, and which settings that takes.

    ``evaluate(result, loaded, settings, model) -> Tables``; ``honours``: the scoring settings it applies
    (of :data:`SCORING_SETTINGS`); a run that sets another away from its default is refused, never ignored.
    """

    name: str                          #: recorded in the manifest's ``scoring``
    evaluate: Callable
    score_dtype: object                #: the dtype the engine keeps scores in
    honours: frozenset[str] = frozenset()
    description: str = ""
    brief: Callable = lambda summary, groups: summary    #: (summary, groups) → what a run prints of it
    read: Callable | None = None       #: results root → every result of this rule under it, as one table


#: settings that only a scoring rule or a benchmark's reader can honour (the rest are the engine's, for every one)
SCORING_SETTINGS = ("tie_policy", "n_boot")
READER_SETTINGS = ("limit", "on_bad_row", "empty_negatives")


@dataclass(frozen=True)
class Benchmark:
    """One benchmark, declared."""

    name: str                                      #: the --benchmark spelling
    title: str
    citation: str
    licence: str
    datasets: tuple                                #: its Datasets (crepe_utils.download.datasets): text and images
    rule: ScoringRule
    chance: str                                    #: how chance is computed
    groups: tuple[str, ...]                        #: the fields a results row is one value of (its queries carry them)
    options: tuple[Option, ...]                    #: how part of it is selected
    load: Callable[[Sources, Selection, object], Loaded]   #: (sources, selection, settings) → queries
    folder: Callable[[Selection], str]             #: the result folder's name under <results>/<model>/
    aliases: tuple[str, ...] = ()
    roster: tuple[str, ...] = ()                   #: the checkpoints its paper evaluated (checkpoint-table keys)
    honours: frozenset[str] = frozenset()          #: the reader settings (READER_SETTINGS) its loader applies
    notebooks: tuple[str, ...] = ()                #: the notebooks that are about it (stems under notebooks/)
    for_model: Callable[[Selection, object], Selection] = lambda selection, spec: selection
    """The selection completed for one model (e.g. a split chosen by the model's training set)."""

    def read(self, sources: Sources, selection: Selection, settings) -> Loaded:
        """Its queries for ``selection`` (checked by :meth:`selection`), with its grouping fields."""
        return dataclasses.replace(self.load(sources, selection, settings), groups=self.groups)

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)

    def selection(self, values: Mapping | None = None, **more) -> Selection:
        """A checked, complete selection of ``values`` (a Selection, a mapping or keywords): names this benchmark
        has, values its options allow, every other option at its default; a SelectionError naming what there is
        otherwise."""
        given = {**(dict(values) if values else {}), **more}
        foreign = sorted(k for k in given if self.option(k) is None)
        if foreign:
            raise SelectionError(f"benchmark {self.name} has no {', '.join(foreign)} to select (it selects by: "
                                 f"{', '.join(o.name for o in self.options) or 'nothing'})")
        checked = {k: self.option(k).check(v, self.name) for k, v in given.items()}
        return Selection(**{o.name: checked.get(o.name, o.default) for o in self.options})

    def refused_settings(self, settings) -> list[str]:
        """The settings ``settings`` sets away from their defaults that neither this benchmark's reader nor its
        scoring rule applies."""
        honoured = self.honours | self.rule.honours
        return [name for name in (*READER_SETTINGS, *SCORING_SETTINGS)
                if name not in honoured and getattr(settings, name) != settings.default(name)]
