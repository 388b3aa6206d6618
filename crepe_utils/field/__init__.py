"""The field: vl_compo's table of 202 CLIP checkpoints on twelve compositionality benchmarks, as a reported source.

Oh, Ahn, Kim, Song, Lee, Kweon and Kim, "Exploring the Spectrum of Visio-Linguistic Compositionality and
Recognition", CVPR 2024 Workshop on What is Next in Multimodal Foundation Models? (MMFM), arXiv 2406.09388. The
table is ``individual_results.csv`` of the repository ytaek-oh/vl_compo at commit 43e2eae (its sha256 is
:data:`SOURCE_SHA256`); the repository holds no evaluation code, so how each column was aggregated is established
from the numbers (:mod:`crepe_utils.across.field`), not assumed.

The package carries the columns the companion uses (``reported/vl_compo.csv``: the source's values as printed, with
its row number, architecture, tag and family) and ImageNet zero-shot top-1 (ELEVATER's). Which benchmark a column
is about, what it is scored on and its chance are the benchmark's own declaration
(:class:`crepe_utils.protocol.benchmark.TableColumns`, a benchmark's ``table_columns``), found through the
registry. ``reported/checkpoints.csv`` maps each row that open_clip 3.3.0 builds to its key in the checkpoint table
(:mod:`crepe_utils.models.checkpoints`), with a flag where the row is not a plain evaluation of that checkpoint.
:data:`ROSTER` is those keys: ``evaluate-paper --models field`` evaluates them on :data:`BENCHMARKS`.

A row is a hard-negative fine-tune when its tag ends in ``-ft`` (8 rows: NegCLIP, DAC, CE-CLIP, CLoVe, ...); the
family column would also count ALIP, which is pretrained from scratch.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

from . import reported
from .. import benchmarks
from ..lazy import lazy
from ..results import store

pd = lazy("pandas")

CITATION = ("Oh et al., Exploring the Spectrum of Visio-Linguistic Compositionality and Recognition, CVPR 2024 "
            "Workshop MMFM, arXiv 2406.09388")
REPOSITORY = "ytaek-oh/vl_compo"
COMMIT = "43e2eae"
SOURCE_FILE = "individual_results.csv"
SOURCE_SHA256 = "732af73af35f7e0b10c7cd58709b54504f95d2778b74193f8be58d13bafc5da5"
#: what a caption or table names it by
SHORT = "vl_compo (Oh et al. 2024)"

#: ImageNet zero-shot top-1 (%), on ILSVRC-2012's validation images
IMAGENET = "elevator::imagenet-1k"
IMAGENET_IMAGES = 50_000
#: a tag with this ending is a hard-negative fine-tune of a pretrained CLIP
FINE_TUNED_SUFFIX = "-ft"


@functools.cache
def declarations() -> dict:
    """The benchmarks the table covers → their declared columns (:class:`~crepe_utils.protocol.benchmark.TableColumns`),
    in the order of the table's own columns."""
    header = reported.header()
    declared = {b.name: b.table_columns for b in benchmarks.BENCHMARKS.values() if b.table_columns}
    return dict(sorted(declared.items(), key=lambda kv: header.index(kv[1].columns[0])))


def declaration(column: str):
    """The declared columns (:class:`~crepe_utils.protocol.benchmark.TableColumns`) that ``column`` is one of."""
    return declarations()[benchmark_of(column)]


def part(column: str) -> str:
    """The benchmark's own name for a column's part: ``crepe::swap`` → ``swap``."""
    return column.split("::", 1)[1]


def benchmark_of(column: str) -> str:
    """The benchmark a column is about (a key of :data:`COLUMNS`)."""
    return next(b for b, declared in declarations().items() if column in declared.columns)


def table() -> pd.DataFrame:
    """The carried table (202 rows, values as floats) with ``fine_tuned`` and each row's ``checkpoint`` key and
    ``flag`` (empty where open_clip cannot build the row)."""
    df = reported.values()
    keys = reported.checkpoints().set_index("row")
    df["fine_tuned"] = df["pretrained"].str.endswith(FINE_TUNED_SUFFIX)
    df["checkpoint"] = df["row"].map(keys["checkpoint"]).fillna("")
    df["flag"] = df["row"].map(keys["flag"]).fillna("")
    return df


def result_counts(directory: str | os.PathLike, tie_policy: str | None = None) -> list[dict]:
    """One result folder's k of n per column of the table it covers (its benchmark's declared columns, pooled by
    its scoring rule: :meth:`~crepe_utils.protocol.benchmark.Benchmark.field_counts`), each with its ``model``
    key and the result's ``kind``; ``tie_policy`` None: as the run scored. None of a benchmark the table lacks;
    a summary that cannot be read so is a :class:`~crepe_utils.results.store.ResultsError` naming it."""
    directory = Path(directory)
    manifest = store.load_manifest(directory)
    bench = benchmarks.get(manifest["benchmark"]) if manifest.get("benchmark") else None
    if bench is None or bench.table_columns is None:
        return []
    summary = store.read_table(lambda p: pd.read_csv(p, keep_default_na=True, dtype={"split": "string"}),
                               directory / store.SUMMARY)
    try:
        counted = bench.field_counts(summary, manifest, tie_policy) or []
    except (KeyError, AttributeError, TypeError, ValueError) as exc:
        raise store.ResultsError(f"{directory / store.SUMMARY} cannot be read as {bench.name}'s summary "
                                 f"({type(exc).__name__}: {exc}): evaluate again or delete its folder") from None
    return [{**c, "model": manifest["model"]["key"], "result_kind": manifest.get("kind", "evaluated")}
            for c in counted]


def __getattr__(name: str):
    """Read when first asked for (the command line's help, which imports this, never asks):

    ``COLUMNS``: each benchmark the table covers → its columns, in the table's order; ``BENCHMARKS``: those
    benchmarks; ``ROSTER``: the checkpoint-table keys of the rows open_clip builds, in row order, each once."""
    if name == "COLUMNS":
        value = {b: d.columns for b, d in declarations().items()}
    elif name == "BENCHMARKS":
        value = tuple(declarations())
    elif name == "ROSTER":
        value = tuple(dict.fromkeys(k for k in reported.checkpoints()["checkpoint"] if k))
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
