"""Analyses across benchmarks: a model's numbers on one benchmark beside its numbers on another."""
from __future__ import annotations

import pandas as pd

from ..benchmarks.crepe import analysis as crepe_analysis, reported as crepe_reported, roster as crepe_roster
from ..benchmarks.winoground import reported as winoground_reported, roster as winoground_roster


def winoground_vs_crepe(crepe_evaluated: pd.DataFrame, winoground_evaluated: pd.DataFrame) -> pd.DataFrame:
    """Winoground group score beside CREPE productivity R@1 (n = 4 and 12, per HN type) per model.

    Published pairs come from the two papers (the models both evaluate); evaluated pairs from
    models with results on both benchmarks (any kind; the ``kind`` column says which).
    """
    rows = []
    table3 = winoground_reported.table3().set_index("model")
    prod = crepe_reported.productivity()
    crepe_models = set(crepe_roster.model_order())
    for wino_name, key in winoground_roster.TABLE3_CHECKPOINTS.items():
        if key not in crepe_models:
            continue
        for r in prod[prod["model"] == key].itertuples():
            rows.append({"model": key, "display": crepe_roster.display_names()[key], "source": "published", "kind": "published",
                         "winoground_group": float(table3.loc[wino_name, "group"]),
                         "winoground_text": float(table3.loc[wino_name, "text"]),
                         "hn_type": r.hn_type, "complexity": int(r.complexity), "crepe_r1": r.r1})
    if not winoground_evaluated.empty and not crepe_evaluated.empty:
        wg = winoground_evaluated[(winoground_evaluated["breakdown"] == "all")]
        wg = wg.pivot_table(index=["model", "kind"], columns="metric", values="score").reset_index()
        ev = crepe_analysis.productivity_evaluated(crepe_evaluated)
        ev = ev[ev["complexity"].isin([4, 12])]
        for r in ev.merge(wg, on=["model", "kind"]).itertuples():
            rows.append({"model": r.model, "display": r.display, "source": "evaluated", "kind": r.kind,
                         "winoground_group": r.group, "winoground_text": r.text, "hn_type": r.hn_type,
                         "complexity": int(r.complexity), "crepe_r1": r.r1})
    return pd.DataFrame(rows, columns=["model", "display", "source", "kind", "winoground_group", "winoground_text",
                                       "hn_type", "complexity", "crepe_r1"])
