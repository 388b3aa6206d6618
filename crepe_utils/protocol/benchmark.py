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
import re
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
    type: type | tuple = str         #: the type of a value (of each element); a tuple of types allows any of them
    many: bool = False               #: a list of values (``--hn-types atom swap``), kept as a tuple
    default: object = None           #: None: all of the benchmark

    @property
    def flag(self) -> str:
        """Its command-line option (a switch away from the default for a True/False option)."""
        dashed = self.name.replace("_", "-")
        if self.type is bool:
            return f"--no-{dashed}" if self.default else f"--{dashed}"
        return f"--{dashed}"

    def check(self, value, benchmark: str):
        """``value`` as the selection keeps it (a list, set or range as a tuple, a set sorted; one value of a list
        option as a tuple of one); a SelectionError naming the benchmark, the option and what is allowed otherwise."""
        if value is None or (not self.many and value == self.default and type(value) is type(self.default)):
            return value
        label = f"{self.name} ({self.flag})"
        choose = f"; choose from {', '.join(map(str, self.choices))}" if self.choices else ""
        if self.many:
            if isinstance(value, (set, frozenset)):
                value = tuple(sorted(value, key=lambda v: (type(v).__name__, str(v))))
            elif isinstance(value, (list, tuple, range)):
                value = tuple(value)
            elif isinstance(value, (str, int)) and not isinstance(value, bool):
                value = (value,)
            else:
                raise SelectionError(f"{benchmark}: {label} must be a list of values, got {value!r}{choose}")
            if not value:
                raise SelectionError(f"{benchmark}: {label} is empty and so selects nothing: give one or more "
                                     f"values{choose}, or None for all")
            twice = sorted({v for v in value if value.count(v) > 1}, key=str)
            if twice:
                raise SelectionError(f"{benchmark}: {label} names {', '.join(map(str, twice))} more than once; "
                                     "give each value once")
        for item in value if self.many else (value,):
            if not self._typed(item):
                raise SelectionError(f"{benchmark}: {label} {item!r} is a {type(item).__name__}, not "
                                     f"{_type_name(self.type)}{choose}")
            if self.choices is not None and item not in self.choices:
                raise SelectionError(f"{benchmark}: {label} {item!r} is not allowed{choose}")
            if self.choices is None and isinstance(item, str) and not _NAME.fullmatch(item) and not self._path:
                raise SelectionError(f"{benchmark}: {label} {item!r} is not a name: use letters, digits, '-', '_' "
                                     "and '.'")            # it becomes part of a result folder's name
        return value

    @property
    def _path(self) -> bool:
        return isinstance(self.type, tuple) and os.PathLike in self.type

    def _typed(self, v) -> bool:
        if self.type is int:
            return isinstance(v, numbers.Integral) and not isinstance(v, bool)
        return isinstance(v, self.type)


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _type_name(kind) -> str:
    names = {int: "an integer", str: "a string", bool: "True or False", os.PathLike: "a path"}
    return " or ".join(names.get(k, k.__name__) for k in (kind if isinstance(kind, tuple) else (kind,)))


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
    #: every group the selection asks for, scored or not: a tuple of its values of ``groups``, as its queries'
    #: attributes say; a group whose queries were all skipped (or none read) still has its results row
    sets: tuple[tuple, ...] = ()


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
    #: (result folder, manifest, tie policy) → :class:`~crepe_utils.protocol.tables.Outcomes`: what "correct" is
    #: for each of its rows, per query, for a paired comparison (``compare``); None: it cannot be compared
    outcomes: Callable | None = None
    #: (summary, manifest, tie policy, :class:`TableColumns`) → its k of n per declared column: one dict per column
    #: with ``column``, ``k``, ``n``, ``sets`` (result rows pooled) and ``pooling`` (in words); tie policy None:
    #: as the run scored
    field: Callable | None = None


#: settings that only a scoring rule or a benchmark's reader can honour (the rest are the engine's, for every one)
SCORING_SETTINGS = ("tie_policy", "n_boot")
READER_SETTINGS = ("limit", "on_bad_row", "empty_negatives")


@dataclass(frozen=True)
class TableColumns:
    """How a benchmark appears in a published table about several benchmarks (vl_compo's field of 202
    checkpoints): one column ``<prefix>::<part>`` per part, each a value of the results' field ``group``; what
    each part is scored on in the release; chance; and the other item sets a column's N could be.

    The cross-benchmark analyses (:mod:`crepe_utils.across`) read these instead of knowing any benchmark."""

    prefix: str                                    #: the table's name for the benchmark (``crepe`` in ``crepe::swap``)
    parts: tuple[str, ...]                         #: in the table's order
    group: str                                     #: the results' field whose values are the parts
    label: str                                     #: a figure panel's title
    released: Callable[[str], int]                 #: part → items of the release it is scored on (pinned counts)
    chance: Callable[[str], float]                 #: part → chance, %
    #: part → the other item sets it could have been scored on, as (what, N)
    alternatives: Callable[[str], list] = lambda part: []
    pooled: bool = False                           #: the table pools several released files into one column
    #: summary → the rows its columns pool (every row by default)
    keep: Callable = lambda summary: summary.index == summary.index
    #: manifest → how its rows were pooled into a column, in words (a result's standing says it)
    pooling: Callable[[Mapping], str] = lambda manifest: ""

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(f"{self.prefix}::{p}" for p in self.parts)


@dataclass(frozen=True)
class FieldView:
    """What a benchmark's own comparison with the published table of the field is given (built by
    :func:`crepe_utils.across.field.view`); a folder's ``field_table`` module reads nothing else of the table."""

    table: object                  #: every row of the table (a DataFrame), with ``fine_tuned``, ``checkpoint``, ``flag``
    rows: object                   #: the rows that are a checkpoint's own evaluation, one per key, indexed by key
    released: Mapping              #: column → the released items it is scored on
    alternatives: Mapping          #: column → the other item sets it could be scored on: (what, N)
    explanations: object           #: the table's recorded explanations of differences, this benchmark's rows
    imagenet: str                  #: the ImageNet column
    group: str = "field"           #: the claims' group


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
    agree: Callable[[Selection], str | None] = lambda selection: None
    """Why a selection's values contradict each other (checked after each value), or None."""
    table_columns: TableColumns | None = None
    """Its columns in the published table of the field (vl_compo), or None when the table has none."""

    def field_counts(self, summary, manifest: Mapping, tie_policy: str | None = None) -> list[dict] | None:
        """A result's k of n per column of the published table of the field (its ``table_columns``, pooled by its
        rule): one dict per column with ``column``, ``k``, ``n`` and ``pooling``; None when the table has no column
        of it. ``tie_policy`` None: as the run scored."""
        if self.table_columns is None or self.rule.field is None:
            return None
        return self.rule.field(summary, manifest, tie_policy, self.table_columns)

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
        chosen = Selection(**{o.name: checked.get(o.name, o.default) for o in self.options})
        contradiction = self.agree(chosen)
        if contradiction:
            raise SelectionError(f"{self.name}: {contradiction}")
        return chosen

    def describe(self, selection: Selection) -> str:
        """The options ``selection`` sets away from their defaults, as ``name=value`` (``the whole benchmark``
        when none)."""
        shown = [f"{o.name}={' '.join(map(str, v)) if isinstance(v, tuple) else v}" for o in self.options
                 if (v := selection.get(o.name, o.default)) != o.default]
        return ", ".join(shown) or "the whole benchmark"

    def refused_settings(self, settings) -> list[str]:
        """The settings ``settings`` sets away from their defaults that neither this benchmark's reader nor its
        scoring rule applies."""
        honoured = self.honours | self.rule.honours
        return [name for name in (*READER_SETTINGS, *SCORING_SETTINGS)
                if name not in honoured and getattr(settings, name) != settings.default(name)]
