"""Notebook 08's figures: SugarCrepe's results table as a heatmap, R@1 against ImageNet per subset, evaluated
R@1 beside the published."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from . import reported
from .analysis import SUBSET_LABELS, SUBSET_ORDER
from ...analysis.reporting import cite
from ...models import imagenet
from ...lazy import lazy

pd = lazy("pandas")

#: One colour per group of the results table.
#: (DataComp amber, not a second blue beside OpenAI's purple: the two read as one colour at a glance)
GROUP_COLORS = {"OpenAI": "#8172B2", "LAION": "#C44E52", "DataComp": "#E69F00", "Text-only": "#937860",
                "Human": "#55A868"}


def published_heatmap(matrix: pd.DataFrame):
    """Models × subsets (``matrix`` of :func:`~crepe_utils.benchmarks.sugarcrepe.analysis.published_matrix`), R@1 printed
    in each cell, on a scale from chance (50) to 100; lines between the table's groups."""
    values = matrix[[s for s in SUBSET_ORDER if s in matrix.columns]]
    fig, ax = plt.subplots(figsize=(5.9, 9.0))
    sns.heatmap(values, ax=ax, annot=True, fmt=".1f", cmap="viridis", vmin=50, vmax=100, linewidths=0.4,
                annot_kws={"fontsize": 9}, cbar_kws={"label": "Recall@1 (%); chance 50"})
    ax.set_xticklabels([SUBSET_LABELS[s] for s in values.columns], rotation=30, ha="right")
    ax.set(xlabel="", ylabel="")
    groups = matrix["group"].tolist()
    for i in range(1, len(groups)):
        if groups[i] != groups[i - 1]:
            ax.axhline(i, color="white", lw=2.5)
    for label, group in zip(ax.get_yticklabels(), groups):
        label.set_color(GROUP_COLORS.get(group, "black"))
    n_clip = int((~matrix["group"].isin(["Human", "Text-only"])).sum())
    ax.set_title(f"SugarCrepe's results table, as published:\nRecall@1 of {n_clip} CLIP models, two text-only models "
                 "and humans", fontsize=10)
    return cite(fig, f"SugarCrepe's published results table, {reported.transcribed('results.csv')}")


def correlation_figure(inputs: pd.DataFrame, table: pd.DataFrame, min_imagenet: float = 50.0):
    """One panel per subset: the CLIP models' R@1 against ImageNet top-1 with a least-squares line; the title
    gives the Pearson r recomputed here, the paper's, and the r right of ``min_imagenet`` (dotted), all from
    ``table`` (:func:`~crepe_utils.benchmarks.sugarcrepe.analysis.correlation_table` with the same ``min_imagenet``)."""
    fig, axes = plt.subplots(4, 2, figsize=(7.4, 13.0), sharex=True)
    stats = table.set_index("subset")
    for ax, subset in zip(axes.flat, SUBSET_ORDER):
        d = inputs[(inputs["subset"] == subset) & inputs["imagenet_top1"].notna()]
        for group, g in d.groupby("group", sort=False):
            color = GROUP_COLORS.get(group, "black")
            if "r1_ci_low" in g:
                ax.errorbar(g["imagenet_top1"], g["r1"], yerr=[g["r1"] - g["r1_ci_low"], g["r1_ci_high"] - g["r1"]],
                            fmt="none", ecolor=color, elinewidth=0.8, alpha=0.7, zorder=2)
            ax.scatter(g["imagenet_top1"], g["r1"], s=30, color=color, label=group, edgecolor="white", zorder=3)
        if len(d) > 2:
            slope, intercept = np.polyfit(d["imagenet_top1"], d["r1"], 1)
            xs = np.linspace(d["imagenet_top1"].min(), d["imagenet_top1"].max(), 20)
            ax.plot(xs, intercept + slope * xs, color="black", lw=1)
        s = stats.loc[subset]
        ax.axvline(min_imagenet, color="grey", ls=":", lw=1)
        ax.set_title(f"{SUBSET_LABELS[subset]}: r = {s.pearson_r:.3f} (paper {s.paper_r})\n"
                     f"the {int(s[f'n_imagenet_{min_imagenet:g}plus'])} right of the dotted line: "
                     f"r = {s[f'pearson_r_imagenet_{min_imagenet:g}plus']:.2f}", fontsize=9.5)
    for ax in axes[-1]:
        ax.set_xlabel("ImageNet zero-shot top-1 (%)")
    for ax in axes[:, 0]:
        ax.set_ylabel("Recall@1 (%)")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    axes.flat[-1].axis("off")
    axes.flat[-1].legend(handles, labels, loc="center", title="training data")
    fig.suptitle(f"SugarCrepe Recall@1 against ImageNet zero-shot accuracy\n({inputs['model'].nunique()} CLIP models; "
                 "Pearson r recomputed beside the printed one;\nbars: exact 95% intervals)", fontweight="bold")
    fig.tight_layout()
    return cite(fig, f"SugarCrepe's published results table, {reported.transcribed('results.csv')}, against "
                     f"ImageNet accuracy, {imagenet.transcribed()}")


def evaluated_figure(evaluated: pd.DataFrame):
    """Per evaluated model: its R@1 per subset with the 95% interval (filled) beside the published R@1 of the same
    checkpoint (open), where the table has one."""
    models = list(dict.fromkeys(zip(evaluated["model"], evaluated["display"], evaluated["kind"])))
    fig, ax = plt.subplots(figsize=(7.2, 3.8 + 0.25 * len(models)))
    x = {s: i for i, s in enumerate(SUBSET_ORDER)}
    offsets = np.linspace(-0.25, 0.25, len(models)) if len(models) > 1 else [0.0]
    for (model, display, kind), dx, color in zip(models, offsets, sns.color_palette("deep", len(models))):
        g = evaluated[(evaluated["model"] == model) & (evaluated["kind"] == kind)]
        xs = g["subset"].map(x) + dx
        err = [g["r1"] - g["r1_ci_low"], g["r1_ci_high"] - g["r1"]]
        label = display if kind == "evaluated" else f"{display} ({kind}: not a result)"
        ax.errorbar(xs, g["r1"], yerr=np.abs(np.array(err, dtype=float)), fmt="o", color=color, ms=5, capsize=2,
                    label=label)
        ax.scatter(xs, g["published_r1"], marker="D", facecolor="none", edgecolor=color, s=40, zorder=3)
    ax.axhline(50, color="grey", ls="--", lw=1)
    ax.set_xticks(range(len(SUBSET_ORDER)), [SUBSET_LABELS[s] for s in SUBSET_ORDER], rotation=30, ha="right")
    ax.set(ylabel="Recall@1 (%), ties count against", ylim=(40, 102),
           title="Evaluated SugarCrepe R@1 (filled, 95% interval)\nbeside the published (open diamonds); chance dashed")
    ax.legend(loc="lower left", fontsize=9)
    return fig
