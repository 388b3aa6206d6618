"""Load CREPE's hard-negative CSVs into retrieval queries, exactly as the paper evaluated them.

File layout (official archives of ``RAIVNLab/CREPE@1fa81c4``; see ``datasets.py``):

* systematicity: ``syst_vg_hard_negs_{seen,unseen}_compounds_in_{cc12m,yfcc,laion}.csv`` with
  columns ``image_id, caption, x, y, width, height, valid_hard_negs_{atom,comp,combined}``;
* productivity: ``{atom,swap,negate}/prod_vg_hard_negs_{type}_complexity_{4..12}.csv`` with
  ``image_id, caption, n, ..., hard_negs, x, y, width, height``.

Files are found under the data folder whatever the archive's top folder (``prod_hard_negatives/``,
``syst_hard_negatives/``, ``__MACOSX/`` ignored).

A query is one image region, its positive caption and its negatives; candidates are
``[positive] + negatives`` (positive first, as in the official code).

How every kind of bad or odd input is treated (nothing is dropped silently):

=================================  =============================================================
case                               treatment
=================================  =============================================================
missing file or folder             :class:`DataError` naming the path and ``make data-crepe``
missing columns                    :class:`DataError` naming file, missing and found columns
bytes that are not UTF-8           :class:`DataError` naming file, line and bytes
byte-order mark, CRLF line ends    read as the plain file (a spreadsheet program saves them)
malformed literal, non-string      :class:`DataError` listing ``file:line: reason`` for every bad
negative, empty/NaN caption,       row; with ``on_bad_row="skip"`` the rows are skipped and
non-numeric, zero-area or          counted in :attr:`QuerySet.issues`
sub-pixel box (crops to nothing),
``n`` that contradicts the file
empty negative list                skipped and counted (a one-candidate set always ranks first;
                                   the official code keeps it): ``empty_negatives="keep"`` keeps
                                   it, ``"error"`` raises
set literal ``{...}``              sorted (a deterministic order) and counted; the official code
                                   takes ``list(set)``, whose order depends on PYTHONHASHSEED
positive among its own negatives   kept, flagged (an exact tie) and counted
duplicate query                    kept (the paper's sets contain them), counted by validation
=================================  =============================================================

Values are read as text with the ``csv`` module, never through pandas' type inference, so a
caption such as ``"NA"`` or ``"null"`` stays the string it is (pandas would turn it into NaN and
the official code would then evaluate the string ``"nan"``).
"""
from __future__ import annotations

import ast
import csv
import io
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import DataError
from .datasets import CREPE_CSVS
from ...textfile import read_text

PROD_HN_TYPES = ("atom", "swap", "negate")
SYST_HN_TYPES = ("atom", "comp", "combined")
COMPLEXITIES = tuple(range(4, 13))
SYST_SPLITS = {"SC": "seen_compounds", "UC": "unseen_compounds"}
SYST_TRAIN_DATA = ("cc12m", "yfcc", "laion")

PROD_COLUMNS = ("image_id", "caption", "n", "n_objects", "n_relations", "n_attributes",
                "n_connected_components", "hard_negs", "x", "y", "width", "height")
BOX_COLUMNS = ("x", "y", "width", "height")

MAX_LISTED_ERRORS = 10


@dataclass(frozen=True)
class Query:
    """One retrieval query: an image region, its positive caption and its hard negatives."""

    benchmark: str                 #: "systematicity" or "productivity"
    hn_type: str                   #: atom / comp / combined (syst.); atom / swap / negate / all (prod.)
    split: str                     #: "SC" / "UC" (systematicity); "" (productivity)
    complexity: int | None         #: 4..12 (productivity); None (systematicity)
    train_data: str                #: cc12m / yfcc / laion (systematicity); "" (productivity)
    image_id: str
    box: tuple[float, float, float, float]   #: x, y, width, height as written in the CSV
    positive: str
    negatives: tuple[str, ...]
    source: str                    #: "<file name>:<line>" (the query id)
    set_literal: bool = False
    positive_in_negatives: bool = False

    @property
    def candidates(self) -> tuple[str, ...]:
        return (self.positive,) + self.negatives

    @property
    def query_id(self) -> str:
        return self.source


@dataclass(frozen=True)
class RowIssue:
    file: str
    line: int
    kind: str       #: "bad row", "empty negatives", "set literal", "positive among negatives"
    message: str
    skipped: bool
    hn_type: str = ""                  #: the retrieval set the row belongs to
    split: str = ""
    complexity: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass
class QuerySet:
    """Queries plus an account of everything odd met while loading them."""

    queries: list[Query] = field(default_factory=list)
    issues: list[RowIssue] = field(default_factory=list)
    files: dict[str, int] = field(default_factory=dict)   #: file → data rows read

    def __len__(self) -> int:
        return len(self.queries)

    def __iter__(self):
        return iter(self.queries)

    def extend(self, other: "QuerySet") -> "QuerySet":
        self.queries.extend(other.queries)
        self.issues.extend(other.issues)
        self.files.update(other.files)
        return self

    @property
    def n_skipped(self) -> int:
        return sum(i.skipped for i in self.issues)

    def groups(self) -> dict[tuple, list[Query]]:
        """Queries grouped by retrieval set: (benchmark, train_data, hn_type, split, complexity)."""
        out: dict[tuple, list[Query]] = {}
        for q in self.queries:
            out.setdefault((q.benchmark, q.train_data, q.hn_type, q.split, q.complexity), []).append(q)
        return out


# ------------------------------------------------------------------------------- file lookup

def productivity_file_name(hn_type: str, complexity: int) -> str:
    return f"prod_vg_hard_negs_{hn_type}_complexity_{complexity}.csv"


def systematicity_file_name(split: str, train_data: str) -> str:
    return f"syst_vg_hard_negs_{SYST_SPLITS[split]}_in_{train_data}.csv"


def find_file(data_dir: str | os.PathLike, name: str, prefer_parent: str | None = None) -> Path:
    """Find ``name`` below ``data_dir`` (any depth; ``__MACOSX`` ignored).

    When several copies exist, the one inside a folder named ``prefer_parent`` wins; a remaining
    ambiguity is an error rather than a guess.
    """
    root = Path(data_dir)
    if not root.is_dir():
        raise DataError(CREPE_CSVS.missing(root))
    hits = [p for p in _index(root).get(name, []) if "__MACOSX" not in p.parts]
    if prefer_parent and len(hits) > 1:
        preferred = [p for p in hits if p.parent.name == prefer_parent]
        hits = preferred or hits
    if not hits:
        example = (f"syst_hard_negatives/{name}" if name.startswith("syst_")
                   else f"prod_hard_negatives/atom/{productivity_file_name('atom', 4)}")
        raise DataError(
            f"{name} not found under {root}. Expected CREPE's archive layout (e.g. {root}/{example}): "
            f"`make data-{CREPE_CSVS.name}` fetches both archives (or `python -m crepe_utils download "
            f"{CREPE_CSVS.name} --dest DIR`); then pass --data-dir DIR"
        )
    if len(hits) > 1:
        raise DataError(f"{name} found {len(hits)} times under {root}: {', '.join(map(str, hits))}. "
                        "Keep one copy or pass the folder that holds the one you mean.")
    return hits[0]


_INDEX_CACHE: dict[Path, tuple[float, dict[str, list[Path]]]] = {}


def _index(root: Path) -> dict[str, list[Path]]:
    root = root.resolve()
    mtime = root.stat().st_mtime
    cached = _INDEX_CACHE.get(root)
    if cached and cached[0] == mtime:
        return cached[1]
    index: dict[str, list[Path]] = {}
    for dirpath, dirnames, filenames in os.walk(root, onerror=_unlistable):
        dirnames[:] = sorted(d for d in dirnames if d != "__MACOSX" and not d.startswith("."))
        for f in filenames:
            if f.endswith(".csv"):
                index.setdefault(f, []).append(Path(dirpath) / f)
    _INDEX_CACHE[root] = (mtime, index)
    return index


def _unlistable(exc: OSError) -> None:
    """A folder below the data folder that cannot be listed: its CSVs would look missing."""
    raise DataError(f"cannot list the folder {exc.filename} ({exc.strerror}): the CREPE files in it cannot be "
                    "found. Make it readable, or pass another --data-dir.")


# ------------------------------------------------------------------------------- row parsing

class _BadRow(Exception):
    pass


# A list literal in the one plain form the released CSVs use: ``['a', "b's"]``, one space after each
# comma, each string quoted without backslashes or line breaks. Its value is the quoted texts as they
# stand, as ``ast.literal_eval`` gives it; anything else goes through ``ast.literal_eval`` itself.
_PLAIN_STRING = r"'[^'\\\n\r\x00]*'" + "|" + r'"[^"\\\n\r\x00]*"'
_PLAIN_LIST = re.compile(rf"\[(?:(?:{_PLAIN_STRING})(?:, (?:{_PLAIN_STRING}))*)?\]")
_PLAIN_ITEM = re.compile(_PLAIN_STRING)


def _literal(raw: str):
    """``ast.literal_eval(raw)``, parsed directly (without compiling) when ``raw`` is a plain list of strings."""
    if _PLAIN_LIST.fullmatch(raw):
        return [m[1:-1] for m in _PLAIN_ITEM.findall(raw)]
    return ast.literal_eval(raw)


def _parse_candidates(raw: str, column: str) -> tuple[tuple[str, ...], bool]:
    """Parse a Python literal list/tuple/set of strings; returns (items, was_set)."""
    if raw is None or raw.strip() == "":
        raise _BadRow(f"column {column!r} is empty; expected a Python list literal such as ['a', 'b']")
    try:
        value = _literal(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        preview = raw if len(raw) <= 60 else raw[:57] + "..."
        raise _BadRow(f"column {column!r} is not a Python literal ({type(exc).__name__}): {preview!r}") from None
    if isinstance(value, (set, frozenset)):
        items, was_set = sorted(value, key=lambda s: (str(type(s)), str(s))), True
    elif isinstance(value, (list, tuple)):
        items, was_set = list(value), False
    else:
        raise _BadRow(f"column {column!r} holds a {type(value).__name__}; expected a list of captions")
    for item in items:
        if not isinstance(item, str):
            raise _BadRow(f"column {column!r} holds a {type(item).__name__} ({item!r}); every negative "
                          "must be a caption string")
        if not item.strip():
            raise _BadRow(f"column {column!r} holds an empty caption")
    return tuple(items), was_set


def _parse_box(row: dict) -> tuple[float, float, float, float]:
    box = []
    for col in BOX_COLUMNS:
        raw = row.get(col)
        try:
            v = float(raw)
        except (TypeError, ValueError):
            raise _BadRow(f"column {col!r} is {raw!r}; expected a number") from None
        if not math.isfinite(v):
            raise _BadRow(f"column {col!r} is {raw!r}; expected a finite number")
        box.append(v)
    x, y, w, h = box
    if w <= 0 or h <= 0:
        raise _BadRow(f"box has zero or negative area (width={w:g}, height={h:g})")
    if not (math.isfinite(x + w) and math.isfinite(y + h)):
        raise _BadRow(f"box (x={x:g}, y={y:g}, width={w:g}, height={h:g}) ends beyond the largest number: its "
                      "corner overflows")
    # The official crop hands these floats to PIL, which rounds each corner to an integer: a box
    # narrower than a pixel can round to an empty crop, which no model can encode.
    if round(x + w) - round(x) <= 0 or round(y + h) - round(y) <= 0:
        raise _BadRow(f"box (x={x:g}, y={y:g}, width={w:g}, height={h:g}) crops to nothing: the official crop "
                      f"rounds its corners to {round(x)}..{round(x + w)} × {round(y)}..{round(y + h)} pixels")
    return (x, y, w, h)


def _check_complexity(row: dict, complexity: int) -> None:
    """A productivity row's ``n`` column must agree with its file's complexity."""
    raw = (row.get("n") or "").strip()
    try:
        ok = float(raw) == complexity
    except ValueError:
        ok = False
    if not ok:
        raise _BadRow(f"column 'n' is {raw!r} but the file name says complexity {complexity}")


def _parse_caption(row: dict) -> str:
    caption = row.get("caption")
    if caption is None or caption.strip() == "":
        raise _BadRow("column 'caption' is empty (NaN); expected the positive caption")
    return caption


def _parse_image_id(row: dict) -> str:
    raw = (row.get("image_id") or "").strip()
    if not raw:
        raise _BadRow("column 'image_id' is empty")
    try:  # "13", "13.0" → "13": images are named <image_id>.jpg
        value = float(raw)
    except ValueError:
        raise _BadRow(f"column 'image_id' is {raw!r}; expected an integer Visual Genome id") from None
    if not value.is_integer() or value < 0:
        raise _BadRow(f"column 'image_id' is {raw!r}; expected a non-negative integer")
    return str(int(value))


#: The longest CSV field read (characters); CREPE's longest is a few thousand. Longer is an error naming the line.
FIELD_LIMIT = 64 * 1024 * 1024


def _read_csv(path: Path, required: tuple[str, ...]):
    """Yield (line_number, row dict) after checking the header."""
    text = read_text(path, "CREPE's CSVs are UTF-8. Re-download the file with `make data`, or re-save it as UTF-8.")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    missing = [c for c in required if c not in header]
    if missing:
        raise DataError(
            f"{path}: missing column(s) {missing}; found {header}. Expected CREPE's CSV format "
            "(see crepe_utils/crepe/queries.py); re-download the archive with `make data`."
        )
    limit = csv.field_size_limit()
    try:
        # a caption or list longer than csv's default field limit (131,072 characters) is read whole: the engine
        # truncates an over-long caption and counts it, as it does every over-long caption
        csv.field_size_limit(max(limit, FIELD_LIMIT))
        for row in reader:
            yield reader.line_num, row
    except csv.Error as exc:
        # the DictReader's own count lags on a failed row: the underlying reader's is the row's last line
        raise DataError(f"{path}:{reader.reader.line_num}: not a well-formed CSV row ({exc}); re-download the file "
                        "with `make data`.") from None
    finally:
        csv.field_size_limit(limit)


@dataclass(frozen=True)
class _FileRef:
    """One CSV as its rows are labelled: its name (``file[hn]`` for a systematicity HN type) and set."""

    label: str
    hn_type: str
    split: str = ""
    complexity: int | None = None

    def issue(self, line: int, kind: str, message: str, skipped: bool) -> RowIssue:
        return RowIssue(self.label, line, kind, message, skipped, self.hn_type, self.split, self.complexity)


def _load_file(path: Path, make_query, required: tuple[str, ...], negatives_column: str,
               on_bad_row: str, empty_negatives: str, ref: _FileRef, check_row=None) -> QuerySet:
    label = ref.label
    if on_bad_row not in ("raise", "skip"):
        raise ValueError(f"on_bad_row must be 'raise' or 'skip', not {on_bad_row!r}")
    if empty_negatives not in ("skip", "keep", "error"):
        raise ValueError(f"empty_negatives must be 'skip', 'keep' or 'error', not {empty_negatives!r}")
    out = QuerySet()
    bad: list[RowIssue] = []
    n_rows = 0
    for line, row in _read_csv(path, required):
        n_rows += 1
        try:
            image_id = _parse_image_id(row)
            caption = _parse_caption(row)
            box = _parse_box(row)
            # no negatives column: the positives alone (the raw sets read no hard negatives)
            negatives, was_set = (_parse_candidates(row.get(negatives_column), negatives_column)
                                  if negatives_column else ((), False))
            if check_row is not None:
                check_row(row)
        except _BadRow as exc:
            bad.append(ref.issue(line, "bad row", str(exc), skipped=True))
            continue
        if not negatives and negatives_column:
            issue = ref.issue(line, "empty negatives", f"no hard negatives in {negatives_column!r}",
                              skipped=empty_negatives != "keep")
            if empty_negatives == "error":
                bad.append(issue)
                continue
            out.issues.append(issue)
            if issue.skipped:
                continue
        if was_set:
            out.issues.append(ref.issue(line, "set literal", f"{negatives_column!r} is a set literal; sorted",
                                        skipped=False))
        pos_in_neg = caption in negatives
        if pos_in_neg:
            out.issues.append(ref.issue(line, "positive among negatives",
                                        "the positive caption is also one of its negatives (exact tie)", skipped=False))
        out.queries.append(make_query(image_id=image_id, box=box, positive=caption, negatives=negatives,
                                      source=f"{label}:{line}", set_literal=was_set,
                                      positive_in_negatives=pos_in_neg))
    if bad and on_bad_row == "raise":
        listed = "\n  ".join(str(b) for b in bad[:MAX_LISTED_ERRORS])
        more = f"\n  ... and {len(bad) - MAX_LISTED_ERRORS} more" if len(bad) > MAX_LISTED_ERRORS else ""
        raise DataError(
            f"{path}: {len(bad)} malformed row(s):\n  {listed}{more}\n"
            "Fix the file (re-download with `make data`), or skip these rows explicitly with "
            "on_bad_row='skip' (CLI: --skip-bad-rows); skipped rows are counted in the results."
            + (" Rows without negatives: empty_negatives='skip' (default) or 'keep' (the official code's "
               "behaviour) instead of 'error'." if any(b.kind == "empty negatives" for b in bad) else "")
        )
    out.issues.extend(bad)
    out.files[label] = n_rows
    return out


# ------------------------------------------------------------------------------- public loaders

def load_productivity(data_dir: str | os.PathLike, hn_types=PROD_HN_TYPES, complexities=COMPLEXITIES,
                      on_bad_row: str = "raise") -> QuerySet:
    """Productivity queries for ``hn_types`` × ``complexities`` (default: all 27 files)."""
    out = QuerySet()
    for hn in hn_types:
        if hn not in PROD_HN_TYPES:
            raise ValueError(f"unknown productivity HN type {hn!r}; choose from {PROD_HN_TYPES}")
        for n in complexities:
            if n not in COMPLEXITIES:
                raise ValueError(f"complexity must be in 4..12, got {n!r}")
            name = productivity_file_name(hn, n)
            path = find_file(data_dir, name, prefer_parent=hn)

            def make(hn=hn, n=n, **kw):
                return Query(benchmark="productivity", hn_type=hn, split="", complexity=n, train_data="", **kw)

            out.extend(_load_file(path, make, PROD_COLUMNS, "hard_negs", on_bad_row, "error",
                                  _FileRef(name, hn, "", n), check_row=lambda row, n=n: _check_complexity(row, n)))
    return out


def _systematicity_file(data_dir, split: str, train_data: str):
    """(name, path) of one split's systematicity file for ``train_data`` (a missing one: find_file's one line)."""
    if split not in SYST_SPLITS:
        raise ValueError(f"split must be one of {tuple(SYST_SPLITS)}, got {split!r}")
    name = systematicity_file_name(split, train_data)
    return name, find_file(data_dir, name)


def load_systematicity(data_dir: str | os.PathLike, train_data: str, hn_types=("atom", "comp"),
                       splits=("SC", "UC"), on_bad_row: str = "raise",
                       empty_negatives: str = "skip") -> QuerySet:
    """Systematicity queries for one training set (cc12m, yfcc or laion; the toy world adds its own)."""
    out = QuerySet()
    for split in splits:
        name, path = _systematicity_file(data_dir, split, train_data)
        for hn in hn_types:
            if hn not in SYST_HN_TYPES:
                raise ValueError(f"unknown systematicity HN type {hn!r}; choose from {SYST_HN_TYPES}")
            column = f"valid_hard_negs_{hn}"

            def make(hn=hn, split=split, **kw):
                return Query(benchmark="systematicity", hn_type=hn, split=split, complexity=None,
                             train_data=train_data, **kw)

            required = ("image_id", "caption") + BOX_COLUMNS + (column,)
            out.extend(_load_file(path, make, required, column, on_bad_row, empty_negatives,
                                  _FileRef(f"{name}[{hn}]", hn, split)))
    return out


def load_systematicity_positives(data_dir: str | os.PathLike, train_data: str, splits=("SC", "UC"),
                                 on_bad_row: str = "raise") -> QuerySet:
    """The positives of one training set's systematicity files (every row: image region and caption, whatever its
    negatives), as queries without negatives: what the raw sets are built from. Only ``image_id``, ``caption`` and
    the box are read, with the same row checks as :func:`load_systematicity`; the negatives columns are not needed."""
    out = QuerySet()
    for split in splits:
        name, path = _systematicity_file(data_dir, split, train_data)

        def make(split=split, **kw):
            return Query(benchmark="systematicity", hn_type="", split=split, complexity=None, train_data=train_data,
                         **kw)

        out.extend(_load_file(path, make, ("image_id", "caption") + BOX_COLUMNS, None, on_bad_row, "keep",
                              _FileRef(name, "", split)))
    return out


def all_negatives_sets(prod: QuerySet, per_type: int = 5) -> QuerySet:
    """The all-negatives productivity sets of app. B.3: positive + ``per_type`` negatives of each type.

    A set is formed for each (complexity, image_id, box, caption) present in all three HN-type
    files; its negatives are the first ``per_type`` of atom, then swap, then negate (16 candidates
    with the released files). Queries found in fewer than three types are counted as issues.
    """
    by_key: dict[tuple, dict[str, Query]] = {}
    for q in prod:
        if q.benchmark != "productivity" or q.hn_type not in PROD_HN_TYPES:
            continue
        key = (q.complexity, q.image_id, q.box, q.positive)
        by_key.setdefault(key, {}).setdefault(q.hn_type, q)  # first occurrence of a duplicate wins
    out = QuerySet()
    for key, per in sorted(by_key.items(), key=lambda kv: (kv[0][0], int(kv[0][1]), kv[0][2], kv[0][3])):
        if len(per) < len(PROD_HN_TYPES):
            missing = [t for t in PROD_HN_TYPES if t not in per]
            first = next(iter(per.values()))
            file, line = first.source.rsplit(":", 1)          # the query id: "<file>:<line>"
            out.issues.append(RowIssue(file, int(line), "not in all HN types",
                                       f"no {'/'.join(missing)} row for this query", skipped=True, hn_type="all",
                                       complexity=first.complexity))
            continue
        negs = tuple(n for t in PROD_HN_TYPES for n in per[t].negatives[:per_type])
        first = per["atom"]
        out.queries.append(Query(benchmark="productivity", hn_type="all", split="", complexity=first.complexity,
                                 train_data="", image_id=first.image_id, box=first.box, positive=first.positive,
                                 negatives=negs, source="+".join(per[t].source for t in PROD_HN_TYPES),
                                 set_literal=any(per[t].set_literal for t in PROD_HN_TYPES),
                                 positive_in_negatives=first.positive in negs))
    return out
