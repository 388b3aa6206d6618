"""Analyses across benchmarks: a model's numbers on one benchmark beside its numbers on another."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..analysis import prose, uncertainty
from ..analysis.reporting import HN_LABELS
from ..benchmarks.crepe import analysis as crepe_analysis, reported as crepe_reported, roster as crepe_roster
from ..benchmarks.winoground import reported as winoground_reported, roster as winoground_roster
from ..lazy import lazy

pd = lazy("pandas")


def shared_checkpoints() -> dict[str, str]:
    """Winoground Table 3's rows that are CREPE checkpoints too: Winoground's name → CREPE's model key."""
    crepe_models = set(crepe_roster.model_order())
    return {w: k for w, k in winoground_roster.TABLE3_CHECKPOINTS.items() if k in crepe_models}


def winoground_vs_crepe(crepe_evaluated: pd.DataFrame, winoground_evaluated: pd.DataFrame) -> pd.DataFrame:
    """Winoground group score beside CREPE productivity R@1 (n = 4 and 12, per HN type) per model.

    Published pairs come from the two papers (the models both evaluate); evaluated pairs from
    models with results on both benchmarks (any kind; the ``kind`` column says which).
    """
    rows = []
    table3 = winoground_reported.table3().set_index("model")
    prod = crepe_reported.productivity()
    for wino_name, key in shared_checkpoints().items():
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


def cross_table(crepe_results: pd.DataFrame, wg_results: pd.DataFrame) -> pd.DataFrame:
    """:func:`winoground_vs_crepe` with each score's exact interval where N is known."""
    cross = winoground_vs_crepe(crepe_results, wg_results)
    counts = crepe_reported.released_productivity_queries()
    cross["N"] = [counts.get((h, int(n))) if s == "published" else np.nan
                  for h, n, s in zip(cross["hn_type"], cross["complexity"], cross["source"])]
    cross = uncertainty.with_intervals(cross.rename(columns={"crepe_r1": "r1"})).rename(columns={"r1": "crepe_r1"})
    n = int(winoground_reported.claim("wg_examples"))
    for col in ("winoground_group", "winoground_text"):
        cis = [uncertainty.clopper_pearson(uncertainty.k_of(v, n), n) if s == "published" else (np.nan, np.nan)
               for v, s in zip(cross[col], cross["source"])]
        cross[f"{col}_ci_low"], cross[f"{col}_ci_high"] = [c[0] for c in cis], [c[1] for c in cis]
    return cross.drop(columns=["k"])


def cross_figure(cross: pd.DataFrame):
    """Per model on both benchmarks: Winoground's group and text scores and CREPE's productivity R@1 at n = 4 and
    12 per HN type, each against its chance line (grey), with exact 95% intervals for published values."""
    cols = [("winoground", "text"), ("winoground", "group")] + [(h, n) for h in ("atom", "swap", "negate")
                                                                for n in (4, 12)]
    labels = ["Wino-\nground\ntext", "Wino-\nground\ngroup"] + [f"{HN_LABELS[h]}\nn = {n}" for h, n in cols[2:]]
    chances = [25.0, 100 / 6] + [100 / 6] * 6
    groups = list(dict.fromkeys(zip(cross["display"], cross["source"], cross["kind"])))
    fig, ax = plt.subplots(figsize=(7.4, 5.2))
    offsets = np.linspace(-0.25, 0.25, len(groups)) if len(groups) > 1 else [0.0]
    for (name, src, kind), dx, color in zip(groups, offsets, plt.get_cmap("tab10").colors):
        g = cross[(cross["display"] == name) & (cross["source"] == src)]
        ys, lows, highs = _cross_values(g, cols)
        xs = np.arange(len(cols)) + dx
        ax.errorbar(xs, ys, yerr=[np.subtract(ys, lows), np.subtract(highs, ys)], fmt="o" if src == "published"
                    else "s", color=color, mfc=color if src == "published" else "white", ms=6, capsize=2, lw=0.9,
                    label=f"{name} ({src if kind in ('published', 'evaluated') else kind + ': not a result'})")
    for i, c in enumerate(chances):
        ax.hlines(c, i - 0.4, i + 0.4, color="grey", ls="--", lw=1)
    ax.set_xticks(range(len(cols)), labels, fontsize=9)
    ax.set(ylabel="score or Recall@1 (%)", ylim=(0, None),
           title="Models on both benchmarks: Winoground and CREPE productivity\n(grey: chance; bars: exact 95% "
                 "intervals)")
    ax.legend(loc="upper center", fontsize=9, ncols=2, bbox_to_anchor=(0.5, -0.2))
    fig.tight_layout()
    return fig


def _cross_values(g: pd.DataFrame, cols) -> tuple[list, list, list]:
    ys, lows, highs = [], [], []
    for a, b in cols:
        if a == "winoground":
            r = g.iloc[0]
            ys.append(r[f"winoground_{b}"]), lows.append(r[f"winoground_{b}_ci_low"])
            highs.append(r[f"winoground_{b}_ci_high"])
        else:
            r = g[(g["hn_type"] == a) & (g["complexity"] == b)]
            ys.append(r["crepe_r1"].iloc[0] if len(r) else np.nan)
            lows.append(r["r1_ci_low"].iloc[0] if len(r) else np.nan)
            highs.append(r["r1_ci_high"].iloc[0] if len(r) else np.nan)
    return ys, [y if np.isnan(lo) else lo for y, lo in zip(ys, lows)], [y if np.isnan(h) else h
                                                                       for y, h in zip(ys, highs)]


def cross_sentence(cross: pd.DataFrame) -> str:
    pub = cross[cross["source"] == "published"]
    names = prose.listing(dict.fromkeys(pub["display"]))
    ev = cross[cross["source"] == "evaluated"]["display"].nunique()
    return (f"From published numbers, {prose.count(pub['display'].nunique())} models appear in both papers ({names}; "
            f"Winoground's rows {prose.listing(shared_checkpoints())}, both scored contrastively), so the figure "
            "shows where each sits against chance on each benchmark, with its interval, and no ranking: two "
            "models cannot show whether the benchmarks order models alike. "
            + (f"{prose.count(ev)} evaluated model(s) add their own points." if ev else
               "Each model evaluated on both benchmarks with this package adds a series."))
