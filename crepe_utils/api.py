"""The package's Python entry points, as README documents them (``crepe_utils.evaluate(...)`` etc.).

Each is a thin front to the module that does the work, so that a notebook or script needs only
``import crepe_utils``. :mod:`crepe_utils` imports this module on first use of one of these
names, which keeps ``import crepe_utils`` free of torch and open_clip.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from .protocol import Selection
from .errors import CrepeError
from .evaluation import Run, evaluate
from . import benchmarks
from .results import store
from .settings import EvaluationSettings
from .toy import pipeline
from .versus.output import compare, standing
from .lazy import lazy

pd = lazy("pandas")

__all__ = ["evaluate", "Run", "Selection", "EvaluationSettings", "load_results", "toy_world", "compare", "standing"]


def load_results(root: str | os.PathLike | None, scoring: str = "retrieval") -> pd.DataFrame:
    """Every result of scoring rule ``scoring`` under ``root`` as one table: the retrieval benchmarks' summaries
    (one row per model × group), or another rule's by its name (a benchmark's own rows)."""
    rules = benchmarks.rules()
    if scoring not in rules:
        raise CrepeError(f"no scoring rule {scoring!r}; the benchmarks' rules are: {', '.join(rules)}")
    return rules[scoring].read(root)


class ToyWorldError(CrepeError, RuntimeError):
    """The toy-world pipeline stopped; the message says why (the pipeline's own error is its cause)."""


def toy_world(out: str | os.PathLike = "results/toy", *, world: pipeline.WorldConfig | None = None,
              training: pipeline.TrainConfig | None = None, force: bool = False, quiet: bool = False,
              **settings) -> pd.DataFrame:
    """Generate the toy world, train its tiny CLIP and evaluate it (``python -m crepe_utils toy``).

    ``settings`` set fields of the world and training configurations by name (``seed``, ``steps``,
    ``train_scenes``, ``held_out``, ``syst_rows_per_split``, ``prod_rows_per_complexity``, ...; ``seed`` sets
    both), on ``world`` and ``training`` when given, else on the defaults. Stages already computed with the
    same settings under ``out`` are reused. Returns the evaluated summaries (``kind="toy"``), as
    :func:`load_results`.
    """
    base = {**(dataclasses.asdict(world) if world else {}), **(dataclasses.asdict(training) if training else {})}
    try:
        world_cfg, train_cfg = pipeline.build_configs(**{**base, **settings})
        pipeline.pipeline(out, world_cfg, train_cfg, force=force, progress=not quiet)
    except CrepeError as exc:          # re-raised with where, not printed: the caller decides
        raise ToyWorldError(f"the toy-world pipeline failed under {out}: {exc}") from exc
    return store.load_results(Path(out) / "results")
