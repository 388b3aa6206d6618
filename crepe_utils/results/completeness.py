"""Which evaluated results are complete, and so comparable with the paper's numbers.

A result is complete when its run had no ``limit`` (manifest ``engine.limit``), skipped no query
(``n_skipped``) and holds as many queries as the released file. A smoke run, a run that skipped
images or rows, or one on other files is shown, but never compared with the paper as if whole.
"""
from __future__ import annotations

from .store import load_manifest
from ..lazy import lazy

pd = lazy("pandas")


def _engine_settings(result_dir) -> dict | None:
    """The ``engine`` section of a result folder's manifest; ``None`` when it cannot be read."""
    try:
        return dict(load_manifest(result_dir).get("engine") or {})
    except (OSError, ValueError):      # missing, or damaged (ResultsError, a ValueError)
        return None


def incomplete_reasons(evaluated: pd.DataFrame, count_keys: list[str] | None = None,
                       expected_queries: dict[tuple, int] | None = None) -> list[str]:
    """Why each evaluated row cannot be compared with the paper ("" when it can).

    Rows need ``result_dir`` (to read the manifest), ``n_skipped`` and, when ``count_keys`` is
    given, ``n_queries`` equal to ``expected_queries`` at the row's ``count_keys`` values. A
    missing column, manifest or expected count is a reason too: completeness that cannot be
    shown is not assumed.
    """
    settings: dict = {}
    out = []
    for row in evaluated.to_dict("records"):
        why = []
        rdir = row.get("result_dir")
        if rdir is None or pd.isna(rdir):
            why.append("no result folder to read the run's settings from")
        else:
            if rdir not in settings:
                settings[rdir] = _engine_settings(rdir)
            engine = settings[rdir]
            if engine is None:
                why.append(f"{rdir}: no readable manifest.json")
            elif "limit" not in engine:
                why.append(f"{rdir}: the manifest does not record the run's limit")
            elif engine["limit"]:
                why.append(f"run with --limit {engine['limit']}")
        scored = row.get("n_queries")
        if scored is not None and not pd.isna(scored) and int(scored) == 0:
            why.append("no query scored")
        skipped = row.get("n_skipped")
        if skipped is None or pd.isna(skipped):
            why.append("skip count unknown")
        elif int(skipped) > 0:
            why.append(f"{int(skipped):,} queries skipped")
        if count_keys is not None:
            cell = tuple(row.get(k) for k in count_keys)
            expected = (expected_queries or {}).get(cell)
            if expected is None:
                why.append("the released file's query count is unknown (its CSV is not present)")
            elif int(row.get("n_queries", -1)) != expected:
                why.append(f"{int(row.get('n_queries', -1)):,} queries, the released file has {expected:,}")
        out.append("; ".join(why))
    return out


def complete_only(evaluated: pd.DataFrame, count_keys: list[str] | None = None,
                  expected_queries: dict[tuple, int] | None = None) -> pd.DataFrame:
    """The rows of ``evaluated`` that :func:`incomplete_reasons` finds complete."""
    if evaluated.empty:
        return evaluated
    keep = [not why for why in incomplete_reasons(evaluated, count_keys, expected_queries)]
    return evaluated[keep]
