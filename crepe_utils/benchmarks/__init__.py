"""The registry: every benchmark the companion evaluates, one folder each, found here and nowhere else.

Each folder (``crepe/``, ``winoground/``, ``sugarcrepe/``, ...) holds everything that is its benchmark's: the
declaration in its ``__init__`` (:class:`crepe_utils.protocol.Benchmark`: citation, licence, datasets, grouping
fields, selection options, scoring rule, roster, notebooks), its loader, its published numbers (``reported/``),
its roster, its claims and its analysis. Adding a benchmark is adding a folder and its name to :data:`FOLDERS`.

What is built from the declarations: the command line's ``--benchmark`` choices and selection options, the
datasets of ``python -m crepe_utils download`` and ``make data-<name>``, the paper jobs of ``evaluate-paper``,
the topics of ``make check`` and the site's pages. ``get(name)`` takes a name or an alias (``productivity``).
"""
from __future__ import annotations

import importlib
from types import ModuleType

from ..download.datasets import Catalogue
from ..results import store
from ..settings import EvaluationSettings
from ..protocol.benchmark import Benchmark, Loaded, Option, Selection, SelectionError, Sources

#: The benchmark folders, in the order they are listed everywhere.
FOLDERS = ("crepe", "winoground", "sugarcrepe", "valse")


def folder(name: str) -> ModuleType:
    """The package of one benchmark folder (its declarations)."""
    return importlib.import_module(f"{__name__}.{name}")


def part(name: str, module: str) -> ModuleType | None:
    """One module of a benchmark folder (``claims``, ``analysis``, ...), or None when the folder has none."""
    try:
        return importlib.import_module(f"{__name__}.{name}.{module}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}.{module}":
            raise
        return None


BENCHMARKS: dict[str, Benchmark] = {b.name: b for name in FOLDERS for b in folder(name).BENCHMARKS}
ALIASES: dict[str, str] = {alias: b.name for b in BENCHMARKS.values() for alias in b.aliases}
#: each benchmark's name → the folder that declares it
FOLDER_OF: dict[str, str] = {b.name: name for name in FOLDERS for b in folder(name).BENCHMARKS}
#: every dataset a benchmark reads (its own text, the image sets it uses), in order: ``download <name>``
DATASETS = Catalogue(dict.fromkeys(d for b in BENCHMARKS.values() for d in b.datasets))


# a result's manifest names one of these benchmarks and one of their rules, or it is named and left out
store.declare_values("benchmark", (*BENCHMARKS, *ALIASES))
store.declare_values("scoring", dict.fromkeys(b.rule.name for b in BENCHMARKS.values()))


def get(name: str) -> Benchmark:
    """The benchmark called ``name`` (or an alias of it); a one-line error listing the names otherwise."""
    found = BENCHMARKS.get(ALIASES.get(name, name))
    if found is None:
        raise SelectionError(f"unknown benchmark {name!r}; choose one of {', '.join(BENCHMARKS)} "
                             f"(also: {', '.join(ALIASES)})")
    return found


def options() -> dict[str, list[tuple[Benchmark, Option]]]:
    """Every selection option name → the benchmarks that have it, with their declaration (command-line order)."""
    out: dict[str, list[tuple[Benchmark, Option]]] = {}
    for b in BENCHMARKS.values():
        for o in b.options:
            out.setdefault(o.name, []).append((b, o))
    return out


def rules() -> dict:
    """Every scoring rule a benchmark uses, by name (what a result's manifest records as ``scoring``)."""
    return {b.rule.name: b.rule for b in BENCHMARKS.values()}


def unlocks(dataset: str) -> str:
    """What having ``dataset`` makes possible: its own declaration's words, or, for an image set, the benchmarks
    that read it ("images for evaluating on SugarCrepe and VALSE")."""
    own = DATASETS.get(dataset).unlocks
    users = list(dict.fromkeys(b.title.split(" (")[0] for b in BENCHMARKS.values()
                               if dataset in {d.name for d in b.datasets}))
    if own or not users:
        return own
    return "images for evaluating on " + (users[0] if len(users) == 1 else f"{', '.join(users[:-1])} and {users[-1]}")


def paper_names() -> str:
    """The benchmarks' papers by name, in registry order, for a caption: "CREPE, Winoground and SugarCrepe"."""
    names = [folder(f).PAPER for f in FOLDERS]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def commands() -> dict[str, tuple[str, str]]:
    """The command-line commands the benchmark folders add (``COMMANDS`` of a folder's package)."""
    return {name: spec for f in FOLDERS for name, spec in getattr(folder(f), "COMMANDS", {}).items()}


def load(name: str, sources: Sources = Sources(), selection: Selection | None = None, settings=None) -> Loaded:
    """The queries of benchmark ``name`` as an evaluation reads them (default settings unless given)."""
    bench = get(name)
    return bench.read(sources, bench.selection(selection), settings or EvaluationSettings())


__all__ = ["ALIASES", "BENCHMARKS", "DATASETS", "FOLDERS", "FOLDER_OF", "Benchmark", "Loaded", "Option", "Selection",
           "SelectionError", "Sources", "commands", "folder", "get", "load", "options", "paper_names", "part", "rules", "unlocks"]
