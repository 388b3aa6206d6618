"""The results format of every benchmark, written by one function and read by the functions here.

A *results folder* holds one sub-folder per evaluated (model, benchmark[, training set]):

    <results>/<model>/<benchmark folder>/
        summary.csv        one tidy row per retrieval set or subset
        per_query.csv.gz   one row per query (or example, for another rule): ranks or flags, ties, scores
        manifest.json      provenance: kind, label, scoring rule, model, data, engine settings, environment, run

The scoring rule (``manifest["scoring"]``, :mod:`crepe_utils.protocol`) decides the two tables'
columns: ``retrieval`` (one row per group the benchmark declares, its manifest's ``groups``;
:func:`summary_columns`; read here) or a benchmark's own rule (whose folder reads those). Recall values are percentages. A result folder
is written atomically as a whole; the readers find results under a root at any depth.

A file that cannot be read (truncated, not CSV or JSON, a newer schema) is named in a
:class:`ResultsError` by the readers of one file (:func:`load_per_query`, :func:`load_manifest`); the
readers of many results (:func:`load_results`, :func:`verify_tables`) warn instead
(:class:`UnreadableResultWarning`, one line naming the file) and leave out what it holds.

``kind`` in the manifest (and the ``kind`` column of :func:`load_results`) says what the numbers
are: ``"evaluated"`` (the real CREPE data), ``"toy"`` (the procedurally generated toy world) or
``"fixture"`` (synthetic test data). Figures and tables label anything not ``"evaluated"``.
"""
from __future__ import annotations

import dataclasses
import gzip
import json
import os
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .. import escaping
from ..atomic import atomic_directory, published_files, write_json
from ..paths import folder_name
from ..errors import CrepeError, CrepeWarning
from ..textfile import ENCODING, parse_json
from ..lazy import lazy

pd = lazy("pandas")

SCHEMA_VERSION = 1
KINDS = ("evaluated", "toy", "fixture")


@dataclass(frozen=True)
class Key:
    """One key of a manifest: the types its value may have, whether it must be present, the values it may
    take (None: any of its types) and, for an object, its own keys. Keys not declared are not checked."""

    types: tuple
    required: bool = False
    values: tuple | None = None
    keys: Mapping[str, "Key"] = field(default_factory=dict)


_NONE = type(None)
#: What a manifest must hold to be read: the keys the readers use, with their types and known values.
MANIFEST_SCHEMA: Mapping[str, Key] = {
    "schema_version": Key((int,)),
    "kind": Key((str,), required=True, values=KINDS),
    "label": Key((str,)),
    "scoring": Key((str,)),            # its rule's name; absent: retrieval (written before the rule was recorded)
    "benchmark": Key((str,)),          # its name (or the alias older results were written under)
    "groups": Key((list,)),            # what its rows are one of; absent: CREPE's fields (LEGACY_GROUPS)
    "model": Key((dict,), required=True, keys={"key": Key((str,), required=True), "display": Key((str,)),
                                              "architecture": Key((str,)), "pretrained": Key((str, _NONE))}),
    "engine": Key((dict,), keys={"limit": Key((int, _NONE)), "precision": Key((str,))}),
    "caveat": Key((str,)), "selection": Key((dict,)), "data": Key((dict,)), "environment": Key((dict,)),
    "run": Key((dict,)),
}

#: What a retrieval results row is one of when its manifest does not say (``groups``): CREPE's fields, which every
#: retrieval result had before each benchmark declared its own.
LEGACY_GROUPS = ("benchmark", "train_data", "hn_type", "split", "complexity")

#: A retrieval summary's columns after the model and the benchmark's groups.
METRIC_COLUMNS = [
    "n_queries", "n_candidates", "chance_r1",
    "r1", "r3", "r5", "r10", "r1_optimistic", "r1_pessimistic", "r1_ci_low", "r1_ci_high",
    "mean_rank", "median_rank", "n_tied_queries", "tie_policy", "n_skipped", "n_truncated_queries",
    "n_near_tie_queries",
]

#: A retrieval per-query table's columns after the query id and the benchmark's groups.
PER_QUERY_REST = [
    "image_id", "n_candidates", "rank", "rank_optimistic", "n_ties", "score_positive", "score_best_negative",
    "scores", "n_truncated",
]


def summary_columns(groups=LEGACY_GROUPS) -> list[str]:
    """A retrieval summary's columns for a benchmark grouped by ``groups``."""
    return ["model", *groups, *METRIC_COLUMNS]


def per_query_columns(groups=LEGACY_GROUPS) -> list[str]:
    """A retrieval per-query table's columns for a benchmark grouped by ``groups``."""
    return ["query_id", *groups, *PER_QUERY_REST]


SUMMARY_COLUMNS = summary_columns()
PER_QUERY_COLUMNS = per_query_columns()

MANIFEST = "manifest.json"
SUMMARY = "summary.csv"
PER_QUERY = "per_query.csv.gz"

#: Columns a summary must have to be read (results written before a later column existed lack it), and those
#: that hold numbers.
SUMMARY_REQUIRED = ["model", "n_queries", "r1"]
SUMMARY_NUMERIC = [c for c in METRIC_COLUMNS if c != "tie_policy"]
PER_QUERY_REQUIRED = ["query_id", "rank", "rank_optimistic"]


class ResultsError(CrepeError, ValueError):
    """A result file that cannot be read (damaged, not a table, newer format); the message names it."""


class UnreadableResultWarning(CrepeWarning):
    """A reader of many results left out a file it cannot read; the message names the file and why."""


def warn_unreadable(exc: ResultsError, left_out: str) -> None:
    """One warning line: ``exc`` (which names the file) and what is left out because of it."""
    warnings.warn(f"{exc}; {left_out}", UnreadableResultWarning, stacklevel=3)


def read_table(read, path: Path):
    """``read(path)``, a table of a result folder; a damaged file raises :class:`ResultsError` naming it.

    Damage is what pandas, the UTF-8 decoder and gzip raise on a file that is not their format
    (ValueError), a truncated gzip (EOFError) and a missing or unreadable one (OSError, zlib.error).
    """
    try:
        return read(path)
    except FileNotFoundError:
        raise ResultsError(f"{path} does not exist: evaluate again or delete its folder") from None
    except (ValueError, EOFError, OSError, zlib.error) as exc:
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())
        raise ResultsError(f"{path} cannot be read ({reason}): evaluate again or delete its folder") from None


def check_table(what: str, frame: pd.DataFrame, required: list[str], numeric: list[str]) -> pd.DataFrame:
    """``frame``, once it has every ``required`` column and numbers in each ``numeric`` one it has."""
    check_columns(what, frame, required)
    for column in (c for c in numeric if c in frame.columns):
        values = frame[column]
        text = values.notna() & pd.to_numeric(values, errors="coerce").isna()
        if text.any():
            raise ValueError(f"{what} column {column!r} holds {values[text].iloc[0]!r} in data row {text.idxmax() + 1}; "
                             "expected numbers")
    return frame


def result_dir(root: str | os.PathLike, model: str, benchmark: str, train_data: str | None = None) -> Path:
    """Where one (model, benchmark[, training set]) result lives under ``root``: two folders, each one name made
    from the model's and the benchmark's (:func:`crepe_utils.paths.folder_name`), so that no name, whoever chose
    it, leads out of ``root`` (``local-dir:..`` is the model ``..``: its folder is ``_..``)."""
    name = benchmark if not train_data else f"{benchmark}-{train_data}"
    return Path(root) / folder_name(model) / folder_name(name)


class KindError(CrepeError, ValueError):
    """A result kind that is not one of :data:`KINDS`."""


def check_kind(kind) -> None:
    """Raise unless ``kind`` is one of :data:`KINDS` (what a manifest's ``kind`` may say)."""
    if kind not in KINDS:
        raise KindError(f"kind must be one of {', '.join(KINDS)} (--kind), got {kind!r}")


#: Values of top-level manifest keys that a layer above declares (:func:`declare_values`): the benchmark registry
#: declares its benchmarks' names and scoring rules when it is imported, so a result of an unknown rule or
#: benchmark is named and left out rather than read by no reader. A key nobody declared takes any value of its type.
DECLARED_VALUES: dict[str, tuple[str, ...]] = {}


def declare_values(key: str, values) -> None:
    """Declare the values manifest key ``key`` may take (the registry's: ``scoring``, ``benchmark``)."""
    if key not in MANIFEST_SCHEMA:
        raise KeyError(f"{key!r} is not a key of MANIFEST_SCHEMA")
    DECLARED_VALUES[key] = tuple(values)


def schema_problem(obj: dict, schema: Mapping[str, Key] = MANIFEST_SCHEMA, prefix: str = "") -> str | None:
    """What is wrong with ``obj`` against ``schema`` (the first problem: a key and why), or None."""
    for name, key in schema.items():
        if not prefix and key.values is None and name in DECLARED_VALUES:
            key = dataclasses.replace(key, values=DECLARED_VALUES[name])
        where = f"{prefix}{name}"
        if name not in obj:
            if key.required:
                return f"lacks the key {where!r} ({_expected(key)})"
            continue
        value = obj[name]
        if not isinstance(value, key.types) or (isinstance(value, bool) and bool not in key.types):
            return f"has {where!r} = {_shown(value)}, expected {_expected(key)}"
        if key.values is not None and value not in key.values:
            return f"has {where!r} = {_shown(value)}, expected one of {', '.join(map(str, key.values))}"
        if key.keys:
            problem = schema_problem(value, key.keys, f"{where}.")
            if problem:
                return problem
    return None


def _expected(key: Key) -> str:
    names = {str: "a string", int: "an integer", dict: "an object", bool: "true or false", _NONE: "null"}
    return " or ".join(names.get(t, t.__name__) for t in key.types)


def _shown(value) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def check_manifest(manifest, where: str, fix: str = "the result is damaged: evaluate again or delete its folder") -> dict:
    """``manifest``, once it is a JSON object that fits :data:`MANIFEST_SCHEMA`; else a :class:`ResultsError`
    naming ``where`` (its file) and the key, then ``fix``."""
    problem = (f"holds a JSON {type(manifest).__name__}, not a manifest (an object)" if not isinstance(manifest, dict)
               else schema_problem(manifest))
    if problem:
        raise ResultsError(f"{where} {problem}; {fix}")
    return manifest


def check_columns(what: str, frame: pd.DataFrame, columns: list[str]) -> None:
    """Raise unless ``frame`` (described as ``what``) has every one of ``columns``."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks columns {missing}")


def write_folder(directory: str | os.PathLike, manifest: dict, write_files) -> Path:
    """Write one result folder as a whole: ``write_files(tmp)`` writes its tables into the
    temporary folder, then the manifest (which must say its ``kind``) is added with the schema version.

    The files go into a hidden temporary sibling of ``directory`` that then replaces it as a whole
    (:func:`crepe_utils.atomic.atomic_directory`): a reader finds either the previous complete
    result or the new one, never a mixture; a failed or killed write leaves the previous result as it was.
    """
    check_manifest({"schema_version": SCHEMA_VERSION, **manifest}, f"the manifest for {directory}",
                   "it does not fit the results schema (crepe_utils.results.store.MANIFEST_SCHEMA), so it is not written")
    with atomic_directory(Path(directory), "the result folder", ", or pass another --out (out=)") as tmp:
        write_files(tmp)
        write_json(tmp / MANIFEST, {"schema_version": SCHEMA_VERSION, **manifest})
    return Path(directory)


def write_result(directory: str | os.PathLike, tables, manifest: dict) -> Path:
    """Write one result (a scoring rule's :class:`~crepe_utils.protocol.tables.Tables` and its manifest) as
    one folder, atomically (:func:`write_folder`). The per-query log is written chunk by chunk, so
    memory stays flat; its gzip header holds no name and time, so identical runs write identical bytes."""
    check_columns("summary", tables.summary, tables.summary_columns)

    def write_files(tmp: Path) -> None:
        tables.summary[tables.summary_columns].to_csv(tmp / SUMMARY, index=False, float_format=tables.summary_format)
        with open(tmp / PER_QUERY, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz:
            header = True
            for frame in tables.per_query:
                check_columns("per-query table", frame, tables.per_query_columns)
                gz.write(frame[tables.per_query_columns].to_csv(index=False, header=header,
                                                                float_format=tables.per_query_format).encode())
                header = False
            if header:  # no rows at all: still write the header
                gz.write((",".join(tables.per_query_columns) + "\n").encode())
    return write_folder(directory, manifest, write_files)


def sets_replaced(directory: str | os.PathLike, tables) -> list[str]:
    """The sets (rows, named by ``tables.row_key``) that the result now in ``directory`` holds and ``tables`` does
    not: what writing ``tables`` there would drop. Empty when there is no readable previous result to compare."""
    key = list(tables.row_key)
    try:
        old = pd.read_csv(Path(directory) / SUMMARY, dtype=str, keep_default_na=False)
    except (OSError, ValueError):                    # none, or damaged: nothing a reader could have used
        return []
    if not key or not set(key) <= set(old.columns) or not set(key) <= set(tables.summary.columns):
        return []
    new = {tuple(_cell(v) for v in row) for row in tables.summary[key].itertuples(index=False)}
    lost = dict.fromkeys(tuple(row) for row in old[key].itertuples(index=False) if tuple(row) not in new)
    return [" ".join(f"{k}={v}" for k, v in zip(key, row) if v != "" and k != "benchmark") or "(all)" for row in lost]


def _cell(value) -> str:
    """A summary value as its CSV cell reads back as text (missing: empty; a whole float: its integer)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def format_scores(scores: np.ndarray) -> str:
    """Candidate scores of one query as a space-separated string (positive first)."""
    return " ".join(f"{s:.9g}" for s in scores)   # 9 digits round-trip a float32 exactly


def _read_summary(handle) -> pd.DataFrame:
    frame = pd.read_csv(handle, keep_default_na=True, dtype={"split": "string", "train_data": "string"})
    return check_table("summary", frame, SUMMARY_REQUIRED, SUMMARY_NUMERIC)


def groups_of(manifest: dict) -> tuple[str, ...]:
    """What one retrieval result's rows are one of: its manifest's ``groups`` (older results: CREPE's fields)."""
    return tuple(manifest.get("groups") or LEGACY_GROUPS)


def load_results(root: str | os.PathLike | None) -> pd.DataFrame:
    """All retrieval summaries under ``root`` as one DataFrame (empty, with the legacy columns, when none).

    Each benchmark's rows carry its own group columns (its manifest's ``groups``); a column another
    benchmark lacks reads as missing there, and a benchmark not grouped by ``benchmark`` gets its name there. Adds ``kind``, ``label`` and the
    model's ``display`` name from each manifest, and ``result_dir``. A summary without a manifest beside it is
    not a result and is ignored, as are hidden (temporary) folders. A result whose manifest or summary cannot
    be read, or lacks a column, is left out with an :class:`UnreadableResultWarning`.
    """
    extra = ["kind", "label", "display", "result_dir"]
    frames, groups = [], list(LEGACY_GROUPS)
    for directory, manifest, df in read_results(root, _read_summary):
        own = groups_of(manifest)
        missing = [g for g in own if g not in df.columns]
        if missing:
            warn_unreadable(ResultsError(f"{Path(directory) / SUMMARY} lacks the columns {missing} its manifest "
                                         "groups it by: evaluate again or delete its folder"), "its result is left out")
            continue
        groups += [g for g in own if g not in groups]
        if "benchmark" not in df.columns:         # a benchmark not grouped by it: its registry name
            df["benchmark"] = manifest.get("benchmark", "")
        df["kind"] = manifest.get("kind", "evaluated")
        df["label"] = manifest.get("label", "")
        df["display"] = manifest["model"].get("display") or df["model"]
        df["result_dir"] = str(directory)
        frames.append(df)
    columns = ["model", *groups, *METRIC_COLUMNS, *extra]
    if not frames:
        return pd.DataFrame(columns=summary_columns() + extra)
    out = pd.concat(frames, ignore_index=True)
    if "complexity" in out:
        out["complexity"] = out["complexity"].astype("Int64")
    return out.reindex(columns=columns)   # results written before a column existed read as NaN there


def read_results(root: str | os.PathLike | None, read_summary, scoring: str = "retrieval"):
    """(folder, manifest, summary) of every published result of scoring rule ``scoring`` under ``root``
    (any depth), in path order.

    ``read_summary(handle)`` reads the summary file. Hidden (temporary) folders are skipped; none at all when
    ``root`` is None or absent. A folder whose manifest or summary cannot be read, or lacks its summary, is
    skipped with an :class:`UnreadableResultWarning`.
    """
    if root is not None and not isinstance(root, (str, os.PathLike)):
        raise ResultsError(f"a results folder is a path (str or os.PathLike), not {type(root).__name__} {root!r}")
    if root is None or not Path(root).exists():
        return
    if not Path(root).is_dir():
        raise ResultsError(f"results folder {root} is a file, not a folder: pass the folder that holds the results")
    for manifest_path in published_files(root, MANIFEST):
        try:
            read = read_folder(manifest_path.parent, read_summary, scoring)
        except ResultsError as exc:
            warn_unreadable(exc, "its result is left out")
            continue
        if read is not None:
            yield (manifest_path.parent, *read)


def verify_tables(root: str | os.PathLike | None, read, scoring: str = "retrieval") -> None:
    """Read the per-query table of every published result of ``scoring`` under ``root`` through ``read(path)``;
    each one missing or damaged is reported with an :class:`UnreadableResultWarning` (``make check``:
    the claims use the summaries only, the notebooks' per-query statistics need these tables)."""
    if root is None or not Path(root).exists():
        return
    for manifest_path in published_files(root, MANIFEST):
        try:
            if load_manifest(manifest_path.parent).get("scoring", "retrieval") != scoring:
                continue
        except ResultsError:
            continue                    # reported by the reader of the summaries
        path = manifest_path.parent / PER_QUERY
        try:
            read_table(read, path)
        except ResultsError as exc:
            warn_unreadable(exc, "the statistics that need it are left out")


def read_folder(directory: Path, read_summary, scoring: str, attempts: int = 3) -> tuple[dict, pd.DataFrame] | None:
    """(manifest, summary) of one result folder of scoring rule ``scoring``, both read from the same folder.

    The folder is opened once and both files are read through that handle, so a folder being
    replaced at the same moment cannot pair one run's manifest with another's summary (a
    published folder is never modified, only replaced whole). If the folder disappears while it
    is read, it is opened again. None when the folder is gone or the result is of another rule
    (results written before the rule was recorded are retrieval results); :class:`ResultsError`
    naming the file when either cannot be read, or when the summary is missing beside its manifest.
    """
    if os.open not in os.supports_dir_fd or not hasattr(os, "O_DIRECTORY"):
        opener_for = lambda fd: None  # noqa: E731 - no folder handles here: plain paths
    else:
        def opener_for(fd):
            return lambda name, flags: os.open(name, flags, dir_fd=fd)
    for attempt in range(attempts):
        try:
            fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except FileNotFoundError:
            return None
        try:
            opener = opener_for(fd)
            base = Path("") if opener else directory
            with open(base / MANIFEST, "rb", opener=opener) as fh:
                manifest = _parse_manifest(fh.read(), directory / MANIFEST)
            if manifest.get("scoring", "retrieval") != scoring:
                return None
            with open(base / SUMMARY, "rb", opener=opener) as fh:
                df = read_table(lambda _: read_summary(fh), directory / SUMMARY)
            return manifest, df
        except FileNotFoundError:
            if not (directory / MANIFEST).exists():
                return None                 # the folder was removed meanwhile
            if attempt == attempts - 1:     # a manifest whose summary stays absent: a partial copy, not a result
                raise ResultsError(f"{directory / SUMMARY} does not exist beside its manifest: the result is "
                                   "incomplete; evaluate again or delete its folder") from None
        finally:
            os.close(fd)
    return None


def _parse_manifest(raw: bytes, path: Path) -> dict:
    """A manifest's content, checked: a JSON object of a schema this version reads."""
    try:
        manifest = parse_json(raw.decode(ENCODING))
    except ValueError as exc:           # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ResultsError(f"{path} is not valid JSON ({exc}): the result is damaged; evaluate again or "
                           "delete its folder") from None
    version = manifest.get("schema_version", SCHEMA_VERSION) if isinstance(manifest, dict) else SCHEMA_VERSION
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise ResultsError(f"{path} has results schema {version!r}; this crepe_utils reads schema "
                           f"{SCHEMA_VERSION} and older: update crepe_utils to read it")
    return check_manifest(manifest, str(path))


def _read_per_query(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype={"split": "string", "train_data": "string", "image_id": "string"})
    return check_table("per-query table", frame, PER_QUERY_REQUIRED, ["rank", "rank_optimistic"])


def load_per_query(directory: str | os.PathLike) -> pd.DataFrame:
    """The per-query table of one result folder; :class:`ResultsError` naming it when it is damaged."""
    return read_table(_read_per_query, Path(directory) / PER_QUERY)


def gzip_through(path: Path) -> None:
    """Decompress the gzip file ``path`` to its end (a truncated or corrupt one raises), keeping nothing."""
    with gzip.open(path, "rb") as fh:
        while fh.read(1 << 20):
            pass


def load_manifest(directory: str | os.PathLike) -> dict:
    """The manifest of one result folder, checked as :func:`read_results` does."""
    path = Path(directory) / MANIFEST
    return _parse_manifest(path.read_bytes(), path)


def describe_kind(df: pd.DataFrame) -> str:
    """One sentence saying what evaluated numbers a table holds (for notebook prose)."""
    if df.empty:
        return "No evaluated results were found: the tables and figures show published numbers only."
    kinds = sorted(set(df["kind"]))
    labels = sorted({lbl for lbl in df["label"] if lbl})
    parts = {"evaluated": "evaluated on the real CREPE data",
             "toy": "computed on the toy world (synthetic images; not comparable to the paper)",
             "fixture": "computed on synthetic test fixtures (not a result)"}
    text = "; ".join(parts[k] for k in kinds)
    models = df["model"].nunique()
    shown = ", ".join(escaping.markdown(lbl) for lbl in labels)          # a manifest's label is data
    return f"Evaluated results for {models} model(s), {text}" + (f" [{shown}]." if labels else ".")
