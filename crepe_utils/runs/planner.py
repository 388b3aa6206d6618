"""Which (model, benchmark) jobs ``evaluate-paper`` runs, and which folders each job reads.

A model enters a benchmark as its paper's table has it: CREPE's systematicity and productivity as
the CREPE registry says (:mod:`crepe_utils.benchmarks.crepe.roster`), SugarCrepe for the 17 models of its
results table (:mod:`crepe_utils.benchmarks.sugarcrepe.roster`; four are CREPE registry models too).
``--models paper`` (the default) is every evaluable model of the two tables, so ``make evaluate``
reproduces each published table and nothing besides; ``--models all`` adds SugarCrepe for CREPE's
other models, which have no published SugarCrepe number to compare with (and two of which, FLAVA and
ALBEF, were trained on COCO, whose captions are SugarCrepe's positives). Named keys get what their
paper's table gives them.

Folders: with no ``--data-dir`` / ``--image-dir`` each benchmark reads its own (``crepe_utils.paths``:
``$CREPE_DATA/crepe`` and ``$VG_IMAGES`` for CREPE, ``$SUGARCREPE_DATA`` and ``$COCO_IMAGES`` for
SugarCrepe). A folder given on the command line is one folder, so it is refused when the jobs read
different datasets.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import benchmarks
from ..errors import CrepeError, ModelError
from ..benchmarks.crepe import roster as registry
from ..benchmarks.sugarcrepe import roster as sugarcrepe_models

#: The CREPE protocols a paper model entered (registry.PaperModel.systematicity / .productivity).
PROTOCOLS = ("systematicity", "productivity")
#: Every benchmark evaluate-paper runs, in job order per model.
BENCHMARKS = (*PROTOCOLS, "sugarcrepe")
#: ``--models`` words for every model of the two tables.
PAPER, ALL = "paper", "all"


class FolderError(CrepeError, ValueError):
    """One --data-dir or --image-dir for jobs that read different datasets."""


@dataclass(frozen=True)
class Job:
    key: str              #: registry key (CREPE's or SugarCrepe's table)
    benchmark: str
    display: str = ""     #: the paper's name, for the progress line


def paper_keys() -> list[str]:
    """The models of ``--models paper``, in job order: CREPE's evaluable registry rows, then SugarCrepe's others."""
    crepe = [m.key for m in registry.paper_models(evaluable=True)]
    return crepe + [k for k in sugarcrepe_models.keys() if k not in crepe]


def _row(key: str):
    """(CREPE registry row or None, SugarCrepe row or None); a ModelError naming both tables' keys for neither."""
    crepe = registry.paper_model(key) if key in registry.model_order() else None
    sugar = sugarcrepe_models.sugarcrepe_model(key) if key in sugarcrepe_models.keys() else None
    if crepe is None and sugar is None:
        raise ModelError(f"unknown paper model {key!r}; CREPE's registry: {', '.join(registry.model_order())}; "
                         f"SugarCrepe's table: {', '.join(sugarcrepe_models.keys())} (`python -m crepe_utils models`)")
    return crepe, sugar


def entered(key: str, every: bool = False) -> list[str]:
    """The benchmarks ``key`` takes: those its paper's table has it on (``every``: SugarCrepe for any
    evaluable model)."""
    crepe, sugar = _row(key)
    if crepe is not None and not crepe.evaluable:
        return []
    return [b for b in BENCHMARKS
            if (b == "systematicity" and crepe is not None and crepe.systematicity)
            or (b == "productivity" and crepe is not None and crepe.productivity)
            or (b == "sugarcrepe" and (sugar is not None or every))]


def plan(models: list[str], chosen=BENCHMARKS) -> tuple[list[Job], list[str]]:
    """The jobs for ``--models`` and ``--benchmarks`` (a model's jobs together, in :data:`BENCHMARKS` order),
    and one ``skip <key>: why`` line for each model that gets none."""
    every = models == [ALL]
    keys = paper_keys() if models in ([PAPER], [ALL]) else list(dict.fromkeys(models))
    jobs, skipped = [], []
    for key in keys:
        crepe, sugar = _row(key)
        benches = [b for b in entered(key, every) if b in chosen]
        if not benches:
            why = crepe.note if crepe is not None and not crepe.evaluable else ""
            skipped.append(f"skip {key}: {why or 'not evaluated on these benchmarks in its paper'}")
            continue
        display = crepe.display if crepe is not None else sugar.display
        jobs += [Job(key, bench, display) for bench in benches]
    return jobs, skipped


def check_folders(jobs: list[Job], data_dir, image_dir) -> None:
    """Refuse one --data-dir / --image-dir for jobs whose benchmarks read different datasets."""
    given = [flag for flag, value in (("--data-dir", data_dir), ("--image-dir", image_dir)) if value]
    reads = {}
    for job in jobs:
        reads.setdefault(benchmarks.get(job.benchmark).datasets, []).append(job.benchmark)
    if given and len(reads) > 1:
        groups = "; ".join(f"{', '.join(dict.fromkeys(b))} read {' and '.join(d)}" for d, b in reads.items())
        verb = "names" if len(given) == 1 else "each name"
        raise FolderError(f"{' and '.join(given)} {verb} one folder, but these jobs read different data ({groups}): "
                          "leave them out (each benchmark then reads its own: $CREPE_DATA/crepe and $VG_IMAGES, "
                          "$SUGARCREPE_DATA and $COCO_IMAGES) or choose one kind with --benchmarks")
