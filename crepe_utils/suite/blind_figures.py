"""Notebook 07's figures: blind scorers' Recall@1 beside published models and chance."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..analysis.reporting import HN_LABELS

HN_TYPES = ("atom", "swap", "negate")
SCORER_COLORS = {"negation": "#C44E52", "length": "#DD8452", "wordfreq": "#937860", "wordfreq-cased": "#DA8BC3",
                 "bigram": "#4C72B0", "bigram-cased": "#64B5CD", "classifier": "#55A868", "classifier-cased": "#8C8C8C"}
TEXT_ONLY_COLORS = {"vera": "#8172B2", "grammar": "#CCB974"}


def productivity(recall: pd.DataFrame, published: pd.DataFrame):
    """Per HN type: each scorer's R@1 over n = 4…12 with its 95% interval; the published models' endpoints
    (n = 4 and 12) as grey points; chance dashed."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=True)
    for ax, hn in zip(axes, HN_TYPES):
        for scorer, g in recall[recall["hn_type"] == hn].groupby("scorer", sort=False):
            g = g.sort_values("complexity")
            color = SCORER_COLORS.get(scorer, "black")
            ax.plot(g["complexity"], g["r1"], "--" if scorer.endswith("-cased") else "-", marker="o", ms=3,
                    lw=2.4 if scorer in ("negation", "bigram") else 1.4, color=color, label=f"blind:{scorer}",
                    zorder=2 + (scorer == "negation"))
            ax.fill_between(g["complexity"].astype(float), g["ci_low"], g["ci_high"], color=color, alpha=0.15, lw=0)
        pub = published[published["hn_type"] == hn]
        jitter = np.linspace(-0.25, 0.25, max(1, pub["model"].nunique()))
        offsets = dict(zip(sorted(pub["model"].unique()), jitter))
        ax.scatter(pub["complexity"] + pub["model"].map(offsets), pub["r1"], s=14, color="#555555", alpha=0.7,
                   zorder=3, label="published models (n = 4, 12)")
        chance = recall.loc[recall["hn_type"] == hn, "chance_r1"]
        ax.axhline(float(chance.mean()) if len(chance) else 100 / 6, color="grey", ls="--", lw=1, label="chance")
        ax.set(title=f"CREPE productivity, {HN_LABELS[hn]}", xlabel="complexity n", xticks=range(4, 13),
               ylim=(-2, 102))
    axes[0].set_ylabel("Recall@1 (%), ties count against")
    axes[-1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    fig.suptitle("What a model gets without looking: text-only scorers against the paper's 15 models",
                 fontweight="bold")
    return fig


def _sugarcrepe_panel(ax, recall: pd.DataFrame | None, published: pd.DataFrame, message: str) -> None:
    if recall is None:
        ax.text(0.5, 0.5, message, ha="center", va="center", wrap=True, fontsize=9, transform=ax.transAxes)
        ax.set(title="SugarCrepe", xticks=[], yticks=[])
        return
    subsets = list(dict.fromkeys(recall["group"]))
    scorers = list(dict.fromkeys(recall["scorer"]))
    width = 0.8 / len(scorers)
    x = np.arange(len(subsets))
    for i, scorer in enumerate(scorers):
        g = recall[recall["scorer"] == scorer].set_index("group").loc[subsets]
        ax.bar(x + (i - (len(scorers) - 1) / 2) * width, g["r1"], width, color=SCORER_COLORS.get(scorer, "black"),
               yerr=[g["r1"] - g["ci_low"], g["ci_high"] - g["r1"]], error_kw={"lw": 0.6}, label=f"blind:{scorer}")
    for model, color in TEXT_ONLY_COLORS.items():
        rows = published[published["model"] == model].set_index("subset")
        if len(rows):
            ax.scatter(x, rows["r1"].reindex(subsets), marker="D", s=22, color=color, zorder=4,
                       label=f"{model} (published)")
    ax.axhline(50, color="grey", ls="--", lw=1, label="chance")
    ax.set_xticks(x, subsets, rotation=30, ha="right")
    ax.set(title="SugarCrepe: caption vs one negative", ylabel="Recall@1 (%)", ylim=(0, 105))
    ax.legend(fontsize=7, ncol=2, loc="upper right")


def _winoground_panel(ax, table: pd.DataFrame | None, message: str) -> None:
    ax.set(title="Winoground (ties counted)")
    if table is None:
        ax.text(0.5, 0.5, message, ha="center", va="center", wrap=True, fontsize=9, transform=ax.transAxes)
        ax.set(xticks=[], yticks=[])
        return
    metrics = ["text", "image", "group"]
    scorers = list(dict.fromkeys(table["scorer"]))
    width = 0.8 / len(scorers)
    for i, scorer in enumerate(scorers):
        g = table[table["scorer"] == scorer].set_index("metric").loc[metrics]
        xs = np.arange(3) + (i - (len(scorers) - 1) / 2) * width
        ax.bar(xs, g["score"], width, color=SCORER_COLORS.get(scorer, "black"))
        for xi, ties in zip(xs, g["ties"]):
            ax.text(xi, 1, f"{ties} ties", rotation=90, fontsize=6, ha="center", va="bottom")
    for level, metric in ((25, "text / image"), (100 / 6, "group")):
        ax.axhline(level, color="grey", ls="--", lw=1)
        ax.text(2.45, level + 0.5, f"chance, {metric}", fontsize=7, ha="right", color="grey")
    ax.set_xticks(range(3), [f"{m} score" for m in metrics])
    ax.set(ylabel="score (%)", ylim=(0, 30))


def other_benchmarks(sugarcrepe: pd.DataFrame | None, winoground: pd.DataFrame | None, published: pd.DataFrame,
                     messages: dict[str, str]):
    """SugarCrepe's seven subsets (with the published text-only models) beside Winoground's three scores."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.4), gridspec_kw={"width_ratios": [2.2, 1]})
    _sugarcrepe_panel(left, sugarcrepe, published, messages.get("sugarcrepe", ""))
    _winoground_panel(right, winoground, messages.get("winoground", ""))
    fig.suptitle("The same scorers on SugarCrepe and Winoground", fontweight="bold")
    return fig
