"""What a model gets without looking, on every benchmark at once: each benchmark's blind results, asked of its
folder (its ``blind`` module: ``run`` reads its data and scores them, ``field_counts`` turns them into k of N per
column of vl_compo's table), or per benchmark one line saying why there are none.

The runs themselves and the tables every benchmark's runs make (Recall@1 with intervals, what the length rule
explains, the blind-hard subset) are :mod:`crepe_utils.blind.runs`'; what is one benchmark's own (its files, its
artefacts) is in its folder.
"""
from __future__ import annotations

from types import ModuleType

from .. import benchmarks, blind
from ..blind.runs import FAST_SCORERS


def folders() -> dict[str, ModuleType]:
    """Each benchmark folder that runs blind scorers on its data → its ``blind`` module, in registry order."""
    found = {name: benchmarks.part(name, "blind") for name in benchmarks.FOLDERS}
    return {name: module for name, module in found.items() if module is not None and hasattr(module, "run")}


def load_runs(data_dirs: dict | None = None, scorers=FAST_SCORERS, settings=blind.BlindSettings(),
              only: tuple[str, ...] | None = None) -> dict:
    """Folder → its blind results (a :class:`~crepe_utils.blind.runs.BlindRun` or a table), or a one-line
    message in place of each whose data are absent. ``data_dirs``: folder → data folder (others: their default);
    ``only``: these folders (default every one)."""
    dirs = data_dirs or {}
    return {name: module.run(dirs.get(name), scorers, settings) for name, module in folders().items()
            if only is None or name in only}


def field_counts(runs: dict) -> list[dict]:
    """Each run of ``runs`` (:func:`load_runs`' output) as k of N per column of vl_compo's table, by its folder's
    ``field_counts``; a message (no data) is left out."""
    modules = folders()
    return [row for name, result in runs.items() if not isinstance(result, str) and name in modules
            for row in modules[name].field_counts(result)]
