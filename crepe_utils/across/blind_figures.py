"""Notebook 07's figures: blind scorers' Recall@1 beside published and evaluated models and chance.

``productivity``    CREPE productivity per HN type over n = 4…12, the published models' endpoints beside
``sugarcrepe``      SugarCrepe's seven subsets, the published text-only models beside
``systematicity``   SC and UC per training set and HN type, evaluated models beside (02, 06 and 07)
``published``       the published text-only numbers on CREPE productivity (needs no data)
``length_contrast`` total against length-normalised bigram, and the length rule, per file
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..analysis.reporting import HN_LABELS
from ..lazy import lazy

pd = lazy("pandas")

HN_TYPES = ("atom", "swap", "negate")
SCORER_COLORS = {"negation": "#C44E52", "length": "#DD8452", "wordfreq": "#937860", "wordfreq-cased": "#DA8BC3",
                 "bigram": "#4C72B0", "bigram-cased": "#64B5CD", "bigram-mean": "#1B2A49", "classifier": "#55A868",
                 "classifier-cased": "#8C8C8C"}
#: The scorers :func:`systematicity` draws by default (the table holds them all): the rest tie or repeat these.
SYSTEMATICITY_SCORERS = ("length", "wordfreq", "bigram", "bigram-mean")
SPLIT_COLORS = {"SC": "#4C72B0", "UC": "#DD8452"}
TEXT_ONLY_COLORS = {"vera": "#8172B2", "grammar": "#CCB974"}


def productivity(recall: pd.DataFrame, published: pd.DataFrame):
    """Per HN type: each scorer's R@1 over n = 4…12 with its 95% interval; the published models' endpoints
    (n = 4 and 12) as grey points; chance dashed."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=True)
    for ax, hn in zip(axes, HN_TYPES):
        for scorer, g in recall[recall["hn_type"] == hn].groupby("scorer", sort=False):
            g = g.sort_values("complexity")
            color = SCORER_COLORS.get(scorer, "black")
            style = "--" if scorer.endswith("-cased") else ":" if scorer.endswith("-mean") else "-"
            ax.plot(g["complexity"], g["r1"], style, marker="o", ms=3,
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
    fig.suptitle(f"What a model gets without looking: text-only scorers against the paper's "
                 f"{published['model'].nunique()} models", fontweight="bold")
    return fig


def _sugarcrepe_panel(ax, recall: pd.DataFrame, published: pd.DataFrame) -> None:
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


def sugarcrepe(recall: pd.DataFrame, published: pd.DataFrame):
    """SugarCrepe's seven subsets: each scorer's R@1 with its 95% interval, the published text-only models, chance."""
    fig, ax = plt.subplots(figsize=(13, 4.6))
    _sugarcrepe_panel(ax, recall, published)
    ax.legend(fontsize=7, ncol=3, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle("The same scorers on SugarCrepe, built to defeat text-only scorers", fontweight="bold")
    return fig


def _entries(rows: pd.DataFrame, scorers) -> list[str]:
    blind_rows = [f"blind:{s}" for s in scorers if f"blind:{s}" in set(rows["model"])]
    return blind_rows + list(dict.fromkeys(rows.loc[rows["kind"] != "blind", "model"]))


def _systematicity_panel(ax, rows: pd.DataFrame, scorers) -> None:
    entries = _entries(rows, scorers)
    x = np.arange(len(entries))
    for offset, split in ((-0.2, "SC"), (0.2, "UC")):
        g = rows[rows["split"] == split].drop_duplicates("model").set_index("model").reindex(entries)
        ax.bar(x + offset, g["r1"], 0.4, color=SPLIT_COLORS[split], label=f"{split} ({'seen' if split == 'SC' else 'unseen'})",
               yerr=[g["r1"] - g["ci_low"], g["ci_high"] - g["r1"]], error_kw={"lw": 0.7}, capsize=2)
        for xi, value in zip(x + offset, g["r1"]):
            if value == 0:                  # a bar of height 0 is invisible: say it is there
                ax.text(xi, 1, "0", ha="center", va="bottom", fontsize=7, color=SPLIT_COLORS[split])
    ax.axhline(float(rows["chance_r1"].mean()), color="grey", ls="--", lw=1, label="chance")
    labels = rows.drop_duplicates("model").set_index("model")["display"].reindex(entries)
    ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
    for tick, model in zip(ax.get_xticklabels(), entries):
        tick.set_fontweight("normal" if model.startswith("blind:") else "bold")
    ax.set(ylim=(0, 105))


def systematicity(table: pd.DataFrame, scorers=SYSTEMATICITY_SCORERS, title: str | None = None):
    """SC and UC Recall@1 with 95% intervals per training set (rows) and HN type (columns): the blind ``scorers``
    and every evaluated model of ``table`` (:func:`crepe_utils.across.blind.systematicity_table`; models in bold)."""
    sets = list(dict.fromkeys(table["train_data"]))
    types = [h for h in ("atom", "comp", "combined") if h in set(table["hn_type"])]
    fig, axes = plt.subplots(len(sets), len(types), figsize=(4.4 * len(types), 3.9 * len(sets)), sharey=True,
                             squeeze=False)
    for row, train_data in zip(axes, sets):
        for ax, hn in zip(row, types):
            rows = table[(table["train_data"] == train_data) & (table["hn_type"] == hn)]
            _systematicity_panel(ax, rows, scorers)
            ax.set_title(f"{train_data}: {HN_LABELS[hn]}")
        row[0].set_ylabel("Recall@1 (%), 95% CI")
    axes[0, -1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    synthetic = " (synthetic toy world)" if set(sets) == {"toy"} else ""
    fig.suptitle(title or f"Systematicity without looking{synthetic}: blind scorers beside the models (bold)",
                 fontweight="bold")
    fig.tight_layout()
    return fig


def published(pub: pd.DataFrame, chance: float = 100 / 6):
    """The published text-only Recall@1 on CREPE productivity beside the same sources' CLIP row; no intervals:
    the sources give no query counts."""
    fig, ax = plt.subplots(figsize=(8, 3.6))
    models = list(dict.fromkeys(pub["model"]))
    width = 0.8 / len(models)
    x = np.arange(len(HN_TYPES))
    colors = dict(zip(models, ("#8172B2", "#CCB974", "#555555", "#55A868", "#C44E52")))
    for i, model in enumerate(models):
        g = pub[pub["model"] == model].set_index("hn_type").reindex(HN_TYPES)
        ax.bar(x + (i - (len(models) - 1) / 2) * width, g["r1"], width, color=colors[model],
               label=g["display"].dropna().iloc[0], hatch="//" if (g["kind"] == "image-text").any() else None)
    ax.axhline(chance, color="grey", ls="--", lw=1, label="chance")
    ax.set_xticks(x, [HN_LABELS[h] for h in HN_TYPES])
    ax.set(ylabel="Recall@1 (%)", ylim=(0, 100),
           title="Published text-only scores on CREPE productivity (no N given: no intervals)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig


def _length_panel(ax, explains: pd.DataFrame, title: str) -> None:
    groups = list(dict.fromkeys(explains["group"]))
    x = np.arange(len(groups))
    length = explains.drop_duplicates("group").set_index("group")["length_r1"].reindex(groups)
    ax.bar(x, length, 0.8, color=SCORER_COLORS["length"], alpha=0.35, label="blind:length")
    for scorer, marker in (("bigram", "o"), ("bigram-mean", "D")):
        g = explains[explains["scorer"] == scorer].set_index("group")["r1"].reindex(groups)
        ax.plot(x, g, marker, color=SCORER_COLORS[scorer], ms=5, label=f"blind:{scorer}")
    chance = explains.drop_duplicates("group").set_index("group")["chance_r1"].reindex(groups)
    ax.hlines(chance, x - 0.4, x + 0.4, color="grey", ls="--", lw=1, label="chance")
    ax.set_xticks(x, groups, rotation=45, ha="right", fontsize=8)
    ax.set(ylabel="Recall@1 (%)", ylim=(0, 105), title=title)


def length_contrast(panels: dict[str, pd.DataFrame]):
    """Per file (one panel per title): the total and the length-normalised bigram's R@1 beside the length
    rule's and chance (each table: :func:`crepe_utils.across.blind.length_explains` rows)."""
    widths = [max(3.0, 0.42 * explains["group"].nunique()) for explains in panels.values()]
    fig, axes = plt.subplots(1, len(panels), figsize=(sum(widths) + 2.5, 4.0), sharey=True, squeeze=False,
                             gridspec_kw={"width_ratios": widths})
    for ax, (title, explains) in zip(axes[0], panels.items()):
        _length_panel(ax, explains, title)
    axes[0, -1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.suptitle("How much is length? The bigram's total against its mean per word, beside the length rule",
                 fontweight="bold")
    return fig
