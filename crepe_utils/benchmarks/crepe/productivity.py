"""Notebook 03's tables, figures and sentences: CREPE's productivity endpoints (published) and curves (evaluated).

The companion transcribes the published Recall@1 at n = 4 and n = 12 of CREPE app. B.1's nine-level tables
(the levels between are printed there and not transcribed here). Each published value is k of N queries of its
released file (the pinned count), so it carries an exact 95% interval, and each change from n = 4 to n = 12
Newcombe's interval.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from . import reported, roster
from ... import escaping
from ...analysis import prose, uncertainty
from ...analysis.reporting import HN_LABELS, TRAIN_PALETTE, cite, panel_grid
from ...lazy import lazy

pd = lazy("pandas")

HN_TYPES = ["atom", "swap", "negate"]
ENDS = (4, 12)
LEGEND = {"cc12m": "CC-12M", "yfcc": "YFCC-15M", "laion": "LAION-400M", "openai": "OpenAI",
          "other": "CyCLIP / FLAVA / ALBEF"}


def chance() -> float:
    return float(reported.claim("chance_prod"))


def published() -> pd.DataFrame:
    """Published R@1 per model × HN type × complexity with N (the released file's queries), k and the exact
    95% interval."""
    pub = reported.productivity()
    counts = reported.released_productivity_queries()
    pub["N"] = [counts[(h, int(n))] for h, n in zip(pub["hn_type"], pub["complexity"])]
    return uncertainty.with_intervals(pub)


def changes(pub: pd.DataFrame) -> pd.DataFrame:
    """Per model × HN type: n = 4 → n = 12, the change, its Newcombe interval and whether it exceeds it."""
    out = []
    for hn in HN_TYPES:
        d = pub[pub["hn_type"] == hn]
        g = uncertainty.gap_table(d[d["complexity"] == ENDS[0]], d[d["complexity"] == ENDS[1]], ["model"])
        out.append(g.assign(hn_type=hn))
    res = pd.concat(out, ignore_index=True)
    res.insert(1, "display", res["model"].map(roster.display_names()))
    return res


def wide_table(pub: pd.DataFrame, ch: pd.DataFrame) -> pd.DataFrame:
    """One row per model: R@1 at n = 4 and 12 per HN type, the change and its 95% interval."""
    rows = []
    for model, g in pub.groupby("model", sort=False):
        row = {"model": model, "display": g["display"].iloc[0]}
        for hn in HN_TYPES:
            for n in ENDS:
                row[f"{hn} n={n}"] = g[(g["hn_type"] == hn) & (g["complexity"] == n)]["r1"].iloc[0]
            c = ch[(ch["model"] == model) & (ch["hn_type"] == hn)].iloc[0]
            row[f"{hn} change"] = c["gap"]
            row[f"{hn} change CI"] = prose.interval(c["gap_ci_low"], c["gap_ci_high"], 1, signed=True)
        rows.append(row)
    return reported.sort_by_model(pd.DataFrame(rows))


#: one colour per published endpoint: n = 4 and n = 12, each R@1 and its interval
END_COLOURS = {4: "#4C72B0", 12: "#C44E52"}


def endpoints_figure(pub: pd.DataFrame):
    """Per HN type (one panel a row), each model's arrow from n = 4 (●) to n = 12 (▸), with each end's exact 95%
    interval in that end's colour (the model's name says its training set)."""
    order = [k for k in roster.model_order() if k in set(pub["model"])]
    names = roster.display_names()
    fig, axes = plt.subplots(len(HN_TYPES), 1, figsize=(7.4, 0.27 * len(order) * len(HN_TYPES) + 2.6), sharey=True)
    y = {m: len(order) - 1 - i for i, m in enumerate(order)}
    for ax, hn in zip(axes, HN_TYPES):
        d = pub[pub["hn_type"] == hn].set_index(["model", "complexity"])
        for m in order:
            a, b = d.loc[(m, ENDS[0])], d.loc[(m, ENDS[1])]
            for r, dy, n in ((a, 0.2, ENDS[0]), (b, -0.2, ENDS[1])):
                ax.plot([r["r1_ci_low"], r["r1_ci_high"]], [y[m] + dy] * 2, color=END_COLOURS[n], lw=1.6,
                        alpha=0.75, solid_capstyle="butt")
            ax.annotate("", xy=(b["r1"], y[m]), xytext=(a["r1"], y[m]),
                        arrowprops=dict(arrowstyle="-|>", color="0.3", lw=1.2, shrinkA=0, shrinkB=0))
            ax.plot(a["r1"], y[m], "o", color=END_COLOURS[ENDS[0]], ms=5, zorder=3)
        ax.axvline(chance(), color="grey", ls="--", lw=1)
        ax.text(chance() + 0.5, -0.95, f"chance {prose.num(chance())}", color="0.35", fontsize=9)
        lo, hi = d["r1_ci_low"].min(), d["r1_ci_high"].max()
        ax.set(xlim=(min(lo, chance()) - 2, hi + 2), ylim=(-1.3, len(order) - 0.5))
        ax.set_title(HN_LABELS[hn], loc="left")
        ax.set_yticks([y[m] for m in order], [names[m] for m in order])
    axes[-1].set_xlabel("Recall@1 (%)")
    handles = [plt.Line2D([], [], color=END_COLOURS[ENDS[0]], marker="o", lw=1.6),
               plt.Line2D([], [], color=END_COLOURS[ENDS[1]], lw=1.6),
               plt.Line2D([], [], color="0.3", marker=">", lw=1.2)]
    fig.legend(handles, [f"n = {ENDS[0]}: R@1 (●) and its exact 95% interval",
                         f"n = {ENDS[1]}: its exact 95% interval", f"R@1 from n = {ENDS[0]} to n = {ENDS[1]} (▸)"],
               ncols=1, loc="upper center", bbox_to_anchor=(0.5, 0.0))      # below the last axis label
    fig.suptitle("Recall@1 from n = 4 to n = 12, published (CREPE app. B.1);\nintervals from each released "
                 "file's query count", fontweight="bold")
    fig.tight_layout()
    return cite(fig, f"CREPE's published Recall@1 (app. B.1), {reported.transcribed('productivity_r1.csv')}; "
                     f"each interval from its released file's query count, "
                     f"{reported.transcribed('released_productivity_files.csv')}")


def curves_figure(prod_eval: pd.DataFrame, pub: pd.DataFrame):
    """Evaluated R@1 against complexity per HN type with 95% bootstrap bands; published endpoints (×) for real
    evaluations; chance dashed."""
    kinds = set(prod_eval["kind"])
    types = [t for t in HN_TYPES + ["all"] if t in set(prod_eval["hn_type"])]
    fig, axes = panel_grid(len(types), 7.4, 3.3, 1.2, sharey=True)
    for ax, t in zip(axes.flat, types):
        d = prod_eval[prod_eval["hn_type"] == t]
        for model, g in d.groupby("model", sort=False):
            g = g.sort_values("complexity")
            color = TRAIN_PALETTE.get(g["train_data"].iloc[0], "#777777")
            ax.plot(g["complexity"], g["r1"], "-o", color=color, ms=3, lw=1.3, label=g["display"].iloc[0])
            ax.fill_between(g["complexity"].astype(float), g["r1_ci_low"], g["r1_ci_high"], color=color, alpha=0.15)
            ends = pub[(pub["model"] == model) & (pub["hn_type"] == t)]
            if len(ends) and kinds == {"evaluated"}:
                ax.plot(ends["complexity"], ends["r1"], "x", color="black", ms=6)
        ax.plot(d["complexity"], d["chance_r1"], color="grey", ls="--", lw=1)
        ax.set(title=HN_LABELS[t], xlabel="complexity n", xticks=sorted(set(d["complexity"].astype(int))))
    for ax in axes[:, 0]:
        ax.set_ylabel("Recall@1 (%), 95% CI")
    axes[0][0].legend(fontsize=9, loc="upper right")
    tag = ("\nTOY WORLD (synthetic; not comparable to the paper)" if kinds == {"toy"} else
           "\nFIXTURE (synthetic test data)" if "fixture" in kinds else "")
    fig.suptitle("Recall@1 against complexity, evaluated" + tag + "  (dashed: chance"
                 + ("; ×: published)" if kinds == {"evaluated"} else ")"), fontweight="bold")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ sentences

def _type_sentence(ch: pd.DataFrame, hn: str) -> str:
    d = ch[ch["hn_type"] == hn]
    falls, rises = d["gap"] < 0, d["gap"] > 0
    beyond_f = falls & d["exceeds"].astype(bool)
    beyond_r = rises & d["exceeds"].astype(bool)
    text = (f"{HN_LABELS[hn]}: {prose.how_many(falls, 'model')} score lower at n = 12 than at n = 4 "
            f"({prose.count(beyond_f.sum())} by more than the change's 95% interval)")
    if rises.any():
        named = prose.listing(map(escaping.markdown, d.loc[beyond_r, "display"]))
        text += (f"; {prose.count(rises.sum())} score higher ("
                 + (f"{prose.count(beyond_r.sum())} beyond the interval: {named})" if beyond_r.any() else
                    "none beyond the interval)"))
    return text


def endpoints_sentence(pub: pd.DataFrame, ch: pd.DataFrame) -> str:
    """What the endpoint figure shows per HN type, against the intervals; why HN-Swap's n = 4 is so coarse."""
    swap4 = pub[(pub["hn_type"] == "swap") & (pub["complexity"] == 4)]
    neg4 = pub[(pub["hn_type"] == "negate") & (pub["complexity"] == 4)].sort_values("r1")
    n4 = int(swap4["N"].iloc[0])
    return ("; ".join(_type_sentence(ch, hn) for hn in HN_TYPES) + ". "
            f"The HN-Swap file at n = 4 holds {n4} queries (notebook 01), so its values sit on a grid of "
            f"{prose.num(100 / n4)} points and each carries a 95% interval about "
            f"{prose.num((swap4['r1_ci_high'] - swap4['r1_ci_low']).mean(), 0)} points wide. HN-Neg at n = 4 spans "
            f"{prose.num(neg4['r1'].iloc[0])} ({neg4['display'].iloc[0]}) to {prose.num(neg4['r1'].iloc[-1])} "
            f"({neg4['display'].iloc[-1]}). The published values are CREPE app. B.1's, "
            + reported.transcribed("productivity_r1.csv") + ".")


def summary(pub: pd.DataFrame, ch: pd.DataFrame) -> str:
    """The closing paragraph: the declines against the intervals, "below chance" at n = 12, the caveats."""
    c = reported.claims().set_index("claim_id")["value"].astype(float)
    atom = ch[ch["hn_type"] == "atom"]
    swap12 = pub[(pub["hn_type"] == "swap") & (pub["complexity"] == 12)]
    below = swap12["r1"] < chance()
    wholly = swap12["r1_ci_high"] < chance()
    above = swap12.loc[~below].sort_values("r1")
    below_rows = swap12[below]
    by_train = prose.listing(sorted({LEGEND[t] for t in below_rows["train_data"] if t != "other"})
                             + list(below_rows.loc[below_rows["train_data"] == "other", "display"]))
    falls = atom["gap"] < 0
    beyond = int((atom["exceeds"].astype(bool) & falls).sum())
    return (f"**What this shows.** HN-Atom: {prose.how_many(falls, 'model')} score lower at n = 12 than at n = 4, "
            + ("each by more than the change's 95% interval" if beyond == falls.sum() == len(falls) else
               f"{prose.count(beyond)} by more than the change's 95% interval")
            + f". §5.2's reading that HN-Swap ends below chance at high complexity holds at n = 12 for "
            f"{prose.how_many(below, 'model')} ({by_train}), and for {prose.count(wholly.sum())} of them the exact "
            f"interval lies below chance too; {prose.count(len(above))} sit above it "
            f"({prose.listing(f'{escaping.markdown(r.display)} {prose.num(r.r1)}' for r in above.itertuples())}). The n = 4 column is "
            "also a different distribution from the rest (template captions, and any same-type permutation allowed "
            "for HN-Swap, app. A.4), so a change from n = 4 mixes a change of caption source with a change of "
            f"complexity. And §6 rates about {prose.num(c['hn_correct_swap_neg'], 0)}% of HN-Swap and HN-Neg "
            "negatives correct, so part of those files' queries have a second true caption among the negatives.")


def _versus_chance(low: float, high: float, level: float) -> str:
    return ("its interval below chance" if high < level else "its interval above chance" if low > level
            else "its interval includes chance")


def evaluated_sentence(prod_eval: pd.DataFrame) -> str:
    """Per evaluated model and HN type: R@1 at the first and last complexity with their 95% intervals, and where
    the last interval lies against chance."""
    parts = []
    for (model, hn), g in prod_eval.groupby(["display", "hn_type"], sort=False):
        g = g.sort_values("complexity")
        a, b = g.iloc[0], g.iloc[-1]
        parts.append(f"{HN_LABELS.get(hn, hn)} from {prose.num(a['r1'], 1)} "
                     f"{prose.interval(a['r1_ci_low'], a['r1_ci_high'], 1)} at n = {int(a['complexity'])} to "
                     f"{prose.num(b['r1'], 1)} {prose.interval(b['r1_ci_low'], b['r1_ci_high'], 1)} at n = "
                     f"{int(b['complexity'])}, {_versus_chance(b['r1_ci_low'], b['r1_ci_high'], b['chance_r1'])} "
                     f"({prose.num(b['chance_r1'], 2)})")
    models = prose.listing(map(escaping.markdown, dict.fromkeys(prod_eval["display"])))
    return f"Evaluated ({models}), Recall@1 with 95% bootstrap intervals: " + "; ".join(parts) + "."
