"""Every benchmark the companion evaluates, declared once (:mod:`.spec`): CREPE's two protocols,
Winoground and SugarCrepe. ``get(name)`` takes a name or an alias (``productivity``, ``systematicity``).

``spec``        what a benchmark declares, and the Selection and Sources of a run
``crepe``       CREPE systematicity and productivity
``winoground``  Winoground: each image against its example's two captions
``sugarcrepe``  SugarCrepe: one positive against one negative caption per COCO image
"""
from __future__ import annotations

from ..settings import EvaluationSettings
from .crepe.benchmark import PRODUCTIVITY, SYSTEMATICITY
from ..protocol.benchmark import Benchmark, Loaded, Selection, SelectionError, Sources
from .sugarcrepe.benchmark import SUGARCREPE
from .winoground.benchmark import WINOGROUND

BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in (SYSTEMATICITY, PRODUCTIVITY, WINOGROUND, SUGARCREPE)}
ALIASES: dict[str, str] = {alias: b.name for b in BENCHMARKS.values() for alias in b.aliases}


def get(name: str) -> Benchmark:
    """The benchmark called ``name`` (or an alias of it); a one-line error listing the names otherwise."""
    found = BENCHMARKS.get(ALIASES.get(name, name))
    if found is None:
        raise SelectionError(f"unknown benchmark {name!r}; choose one of {', '.join(BENCHMARKS)} "
                             f"(also: {', '.join(ALIASES)})")
    return found


def load(name: str, sources: Sources = Sources(), selection: Selection = Selection(), settings=None) -> Loaded:
    """The queries of benchmark ``name`` as an evaluation reads them (default settings unless given)."""
    bench = get(name)
    bench.check(selection)
    return bench.load(sources, selection, settings or EvaluationSettings())


__all__ = ["ALIASES", "BENCHMARKS", "Benchmark", "Loaded", "Selection", "SelectionError", "Sources", "get", "load"]
