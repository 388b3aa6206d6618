"""What a model gets without looking: claims about text-only ("blind") scorers, computed from the data.

Each benchmark folder states its own (its ``blind`` module's ``claims``: e.g. a one-line rule beating every
published model, a bigram beating chance where adversaries filtered the negatives, scores that are 0 by
construction), each taking the numbers it checks as arguments (None: no data), so a test can hand it wrong ones
and watch it fail; :func:`blind_sections` gathers them through the registry, computed from the data folders.
"""
from __future__ import annotations

from . import blind as blind_analysis
from ..claims.base import Check, Topic

GROUP = "blind"


def blind_sections(data_dirs: dict | None = None, runs: dict | None = None) -> dict[str, list[Check]]:
    """``blind``: each benchmark folder's blind claims (its ``blind.claims``, in registry order), from ``runs``
    (:func:`~crepe_utils.across.blind.load_runs`' output) or computed here, each folder with the scorers its
    claims need (its ``blind.CLAIM_SCORERS``) on its data folder (``data_dirs``: folder → data folder; others
    their default)."""
    dirs = data_dirs or {}
    rows = []
    for name, module in blind_analysis.folders().items():
        if not hasattr(module, "claims"):
            continue
        result = runs.get(name) if runs is not None else module.run(dirs.get(name), module.CLAIM_SCORERS)
        rows += module.claims(result)
    return {"blind": rows}


def blind_checks(data_dirs: dict | None = None, runs: dict | None = None) -> list[Check]:
    """The blind claims (notebook 07's check cell, and ``make check``)."""
    return blind_sections(data_dirs, runs)["blind"]


TOPICS = {"blind": Topic(blind_checks, "07_blind_baselines")}
ORDER = (("blind", "blind"),)


def sections(results_dir=None, data_dirs=None) -> dict[tuple[str, str], list[Check]]:
    """The blind scorers' sections for ``make check``: (topic, section) → rows."""
    return {("blind", name): rows for name, rows in blind_sections(data_dirs).items()}
