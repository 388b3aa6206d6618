"""The package's Python entry points, as README documents them (``crepe_utils.evaluate(...)`` etc.).

Each is a thin front to the module that does the work, so that a notebook or script needs only
``import crepe_utils``. :mod:`crepe_utils` imports this module on first use of one of these
names, which keeps ``import crepe_utils`` free of torch and open_clip.
"""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from .benchmarks import Selection
from .cli import build_parser
from .errors import CrepeError
from .evaluation import Run, evaluate
from .results.store import load_results
from .settings import EvaluationSettings
from .toy import pipeline
from .benchmarks.winoground.results import load_results as load_winoground_results

__all__ = ["evaluate", "Run", "Selection", "EvaluationSettings", "load_results", "load_winoground_results",
           "toy_world"]


class ToyWorldError(CrepeError, RuntimeError):
    """The toy-world pipeline stopped; the message says why (the pipeline's own error is its cause)."""


def toy_world(out: str | os.PathLike = "results/toy", *, seed: int | None = None, steps: int | None = None,
              train_scenes: int | None = None, held_out: str | None = None, syst_rows: int | None = None,
              prod_rows: int | None = None, force: bool = False, quiet: bool = False) -> pd.DataFrame:
    """Generate the toy world, train its tiny CLIP and evaluate it (``python -m crepe_utils toy``).

    Stages already computed with the same settings under ``out`` are reused. ``None`` keeps the
    command's default. Returns the evaluated summaries (``kind="toy"``), as :func:`load_results`.
    """
    options = {"--seed": seed, "--steps": steps, "--train-scenes": train_scenes, "--held-out": held_out,
               "--syst-rows": syst_rows, "--prod-rows": prod_rows}
    argv = ["--out", str(out)] + [str(x) for k, v in options.items() if v is not None for x in (k, v)]
    argv += ["--force"] * force + ["--quiet"] * quiet
    try:
        pipeline.run(build_parser("toy").parse_args(argv))
    except CrepeError as exc:          # re-raised with where, not printed: the caller decides
        raise ToyWorldError(f"the toy-world pipeline failed under {out}: {exc}") from exc
    return load_results(Path(out) / "results")
