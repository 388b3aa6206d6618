"""Which (model, benchmark) jobs ``evaluate-paper`` runs, and which folders each job reads.

A checkpoint enters a benchmark when that benchmark's paper evaluated it: the benchmark's ``roster``
(:attr:`crepe_utils.protocol.Benchmark.roster`, keys of :mod:`crepe_utils.models.checkpoints`), so ``make
evaluate`` reproduces each published table and nothing besides. ``--models paper`` (the default) is every
checkpoint of every roster, in registry order; ``--models all`` also runs each of them on every other benchmark
that takes it (a benchmark can refuse a checkpoint it cannot describe, e.g. one whose splits exist only for
models trained on particular data); named keys get what the rosters give them.

``--models field`` is the checkpoints of vl_compo's 202-checkpoint table that open_clip builds
(:data:`crepe_utils.field.ROSTER`), each on the benchmarks of that table the companion scores
(:data:`crepe_utils.field.BENCHMARKS`), so its published numbers can be set beside evaluated ones. The table's
CREPE columns pool each hard-negative type over the archive's ``prod_vg_hard_negs_{type}_all.csv`` files, which
are not the nine complexity files the companion evaluates: an evaluated result pooled over n = 4–12 is close to
the table's number, not on the same items.

Folders: with no ``--data-dir`` / ``--image-dir`` each benchmark reads its own (its datasets' folders). A
folder given on the command line is one folder, so it is refused when the jobs read different datasets.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import benchmarks, field
from ..errors import CrepeError, ModelError
from ..models import checkpoints, resolve
from ..protocol.benchmark import SelectionError

#: ``--models`` words: every checkpoint of the rosters; and also on every other benchmark; vl_compo's table
PAPER, ALL, FIELD = "paper", "all", "field"


class FolderError(CrepeError, ValueError):
    """One --data-dir or --image-dir for jobs that read different datasets."""


@dataclass(frozen=True)
class Job:
    key: str              #: checkpoint key
    benchmark: str
    display: str = ""     #: the checkpoint's name, for the progress line


def benchmark_names() -> list[str]:
    """The benchmarks that have a roster, in registry order (``--benchmarks`` choices)."""
    return [b.name for b in benchmarks.BENCHMARKS.values() if b.roster]


def choosable() -> list[str]:
    """Every benchmark a plan can run (``--benchmarks`` choices), in registry order: those with a roster, and the
    field's."""
    names = set(benchmark_names()) | set(field_benchmarks())
    return [b.name for b in benchmarks.BENCHMARKS.values() if b.name in names]


def paper_keys() -> list[str]:
    """The checkpoints of ``--models paper``, in job order: each roster's, registry order, each once."""
    return list(dict.fromkeys(k for b in benchmarks.BENCHMARKS.values() for k in b.roster))


def _takes(bench, key: str) -> bool:
    """Whether ``bench`` can evaluate checkpoint ``key`` without a selection given for it."""
    try:
        bench.for_model(bench.selection(), resolve(key))
    except (SelectionError, ModelError):
        return False
    return True


def entered(key: str, every: bool = False) -> list[str]:
    """The benchmarks ``key`` takes: those whose roster has it (``every``: also each other one that takes it)."""
    if key not in checkpoints.keys():
        raise ModelError(f"unknown paper model {key!r}; the rosters' checkpoints: {', '.join(paper_keys())} "
                         "(`python -m crepe_utils models`)")
    return [name for name in benchmark_names()
            if key in benchmarks.get(name).roster or (every and _takes(benchmarks.get(name), key))]


def field_benchmarks() -> list[str]:
    """The benchmarks of ``--models field``: those of vl_compo's table that the companion scores, in registry order."""
    names = {benchmarks.get(b).name for b in field.BENCHMARKS}
    return [b.name for b in benchmarks.BENCHMARKS.values() if b.name in names]


def field_plan(chosen=None) -> list[Job]:
    """``--models field``: every checkpoint of :data:`crepe_utils.field.ROSTER` on each of the field's benchmarks
    that is ``chosen`` (default: all of them)."""
    names = [b for b in field_benchmarks() if chosen is None or b in chosen]
    return [Job(key, bench, checkpoints.checkpoint(key).display) for key in field.ROSTER for bench in names]


def plan(models: list[str], chosen=None) -> tuple[list[Job], list[str]]:
    """The jobs for ``--models`` and ``--benchmarks`` (a model's jobs together, in registry order), and one
    ``skip <key>: why`` line for each model that gets none. ``chosen`` None: every benchmark with a roster (for
    ``field``: the field's benchmarks)."""
    if models == [FIELD]:
        return field_plan(chosen), []
    chosen = benchmark_names() if chosen is None else chosen
    every = models == [ALL]
    keys = paper_keys() if models in ([PAPER], [ALL]) else list(dict.fromkeys(models))
    jobs, skipped = [], []
    for key in keys:
        benches = [b for b in entered(key, every) if b in chosen]
        if not benches:
            skipped.append(f"skip {key}: not evaluated on these benchmarks in its paper")
            continue
        jobs += [Job(key, bench, checkpoints.checkpoint(key).display) for bench in benches]
    return jobs, skipped


def own_folders(names) -> str:
    """Where each of the benchmarks ``names`` reads its data by default, for messages: "b: $X and $Y/z; ..."."""
    return "; ".join(f"{name}: " + " and ".join(f"${d.moved_by}" + ("" if d.variable else f"/{d.folder}")
                                                for d in benchmarks.get(name).datasets) for name in names)


def check_folders(jobs: list[Job], data_dir, image_dir) -> None:
    """Refuse one --data-dir / --image-dir for jobs whose benchmarks read different datasets."""
    given = [flag for flag, value in (("--data-dir", data_dir), ("--image-dir", image_dir)) if value]
    reads: dict[tuple, list[str]] = {}
    for job in jobs:
        reads.setdefault(tuple(d.name for d in benchmarks.get(job.benchmark).datasets), []).append(job.benchmark)
    if given and len(reads) > 1:
        groups = "; ".join(f"{', '.join(dict.fromkeys(b))} read {' and '.join(d)}" for d, b in reads.items())
        verb = "names" if len(given) == 1 else "each name"
        own = own_folders(dict.fromkeys(b for names in reads.values() for b in names))
        raise FolderError(f"{' and '.join(given)} {verb} one folder, but these jobs read different data ({groups}): "
                          f"leave them out (each benchmark then reads its own: {own}) or choose one kind with "
                          "--benchmarks")
