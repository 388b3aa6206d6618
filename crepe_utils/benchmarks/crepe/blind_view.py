"""CREPE's blind scorers as notebooks 02, 06 and 07 show them: figures and the sentences built from their tables.

``productivity``          figure: each scorer's R@1 per HN type over n = 4…12, the published models' endpoints beside
``systematicity``         figure: SC and UC per training set and HN type, evaluated models beside (02, 06 and 07)
``published``             figure: the published text-only numbers on CREPE productivity (needs no data)
``productivity_text``     HN-Neg per scorer against the best published model; HN-Atom and HN-Swap
``toy_systematicity``     the toy world's HN-Comp length artefact against its tiny CLIP

Every number and direction in a sentence is computed from the table it is given.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ... import blind
from ...analysis.prose import beats, pct, pct_span
from ...analysis.reporting import HN_LABELS, RANDOM_TIES, SCORER_COLORS, panel_grid, random_tie_marks
from ...blind.runs import LengthCue
from ...lazy import lazy

pd = lazy("pandas")

HN_TYPES = ("atom", "swap", "negate")


#: The scorers :func:`systematicity` draws by default (the table holds them all): the rest tie or repeat these.
SYSTEMATICITY_SCORERS = ("length", "wordfreq", "bigram", "bigram-mean")
SPLIT_COLORS = {"SC": "#4C72B0", "UC": "#DD8452"}


def productivity(recall: pd.DataFrame, published: pd.DataFrame):
    """Per HN type: each scorer's R@1 over n = 4…12 with its 95% interval; the published models' endpoints
    (n = 4 and 12) as grey points; chance dashed."""
    fig, axes = plt.subplots(3, 1, figsize=(7.2, 11.5), sharex=True)
    for ax, hn in zip(axes, HN_TYPES):
        for scorer, g in recall[recall["hn_type"] == hn].groupby("scorer", sort=False):
            g = g.sort_values("complexity")
            color = SCORER_COLORS.get(scorer, "black")
            style = "--" if scorer.endswith("-cased") else ":" if scorer.endswith("-mean") else "-"
            ax.plot(g["complexity"], g["r1"], style, marker="o", ms=3,
                    lw=2.4 if scorer in ("negation", "bigram") else 1.4, color=color, label=f"blind:{scorer}",
                    zorder=2 + (scorer == "negation"))
            ax.fill_between(g["complexity"].astype(float), g["ci_low"], g["ci_high"], color=color, alpha=0.15, lw=0)
            random_tie_marks(ax, g["complexity"], g, color)
        pub = published[published["hn_type"] == hn]
        jitter = np.linspace(-0.25, 0.25, max(1, pub["model"].nunique()))
        offsets = dict(zip(sorted(pub["model"].unique()), jitter))
        ax.scatter(pub["complexity"] + pub["model"].map(offsets), pub["r1"], s=14, color="#555555", alpha=0.7,
                   zorder=3, label="published models (n = 4, 12)")
        chance = recall.loc[recall["hn_type"] == hn, "chance_r1"]
        ax.axhline(float(chance.mean()) if len(chance) else 100 / 6, color="grey", ls="--", lw=1, label="chance")
        ax.set(xticks=range(4, 13), ylim=(-2, 102), ylabel="Recall@1 (%)")
        ax.set_title(f"CREPE productivity, {HN_LABELS[hn]}", loc="left")
    axes[-1].set_xlabel("complexity n (ties count against a scorer)")
    axes[-1].scatter([], [], s=22, facecolors="none", edgecolors="black", label=RANDOM_TIES)   # the legend's key
    axes[-1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=9, ncols=2)
    fig.suptitle(f"What a model gets without looking:\ntext-only scorers against the paper's "
                 f"{published['model'].nunique()} models", fontweight="bold")
    fig.tight_layout()
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
        random_tie_marks(ax, x + offset, g, "black", RANDOM_TIES if split == "SC" else None)
        for xi, value in zip(x + offset, g["r1"]):
            if value == 0:                  # a bar of height 0 is invisible: say it is there
                ax.text(xi, 1, "0", ha="center", va="bottom", fontsize=9, color=SPLIT_COLORS[split])
    ax.axhline(float(rows["chance_r1"].mean()), color="grey", ls="--", lw=1, label="chance")
    labels = rows.drop_duplicates("model").set_index("model")["display"].reindex(entries)
    ax.set_xticks(x, labels, rotation=35, ha="right", fontsize=9)
    for tick, model in zip(ax.get_xticklabels(), entries):
        tick.set_fontweight("normal" if model.startswith("blind:") else "bold")
    ax.set(ylim=(0, 105))


def systematicity(table: pd.DataFrame, scorers=SYSTEMATICITY_SCORERS, title: str | None = None):
    """SC and UC Recall@1 with 95% intervals per training set (rows) and HN type (columns): the blind ``scorers``
    and every evaluated model of ``table`` (:func:`crepe_utils.benchmarks.crepe.blind.systematicity_table`; models in bold)."""
    sets = list(dict.fromkeys(table["train_data"]))
    types = [h for h in ("atom", "comp", "combined") if h in set(table["hn_type"])]
    panels = [(train_data, hn) for train_data in sets for hn in types]
    fig, axes = panel_grid(len(panels), 7.4, 4.3, 1.0, sharey=True)
    for ax, (train_data, hn) in zip(axes.flat, panels):
        rows = table[(table["train_data"] == train_data) & (table["hn_type"] == hn)]
        _systematicity_panel(ax, rows, scorers)
        ax.set_title(f"{train_data}: {HN_LABELS[hn]}")
    for ax in axes[:, 0]:
        ax.set_ylabel("Recall@1 (%), 95% CI")
    axes[0, 0].legend(loc="upper left", fontsize=9)
    synthetic = " (synthetic toy world)" if set(sets) == {"toy"} else ""
    fig.suptitle(title or f"Systematicity without looking{synthetic}:\nblind scorers beside the models (bold)",
                 fontweight="bold")
    fig.tight_layout()
    return fig


def published(pub: pd.DataFrame, chance: float = 100 / 6):
    """The published text-only Recall@1 on CREPE productivity beside the same sources' CLIP row; no intervals:
    the sources give no query counts."""
    fig, ax = plt.subplots(figsize=(7.2, 4.6))
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
           title="Published text-only scores on CREPE productivity\n(no N given: no intervals)")
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2)
    return fig


def productivity_text(recall: pd.DataFrame, published: pd.DataFrame) -> str:
    """HN-Neg per scorer against the best published model; HN-Atom and HN-Swap: the fixed rules and the bigram."""
    neg = recall[recall["hn_type"] == "negate"]
    best = published[published["hn_type"] == "negate"].groupby("complexity")["r1"].max()
    ranges = []
    for scorer, g in neg.groupby("scorer", sort=False):
        lo, hi = g.loc[g["r1"].idxmin()], g.loc[g["r1"].idxmax()]
        ranges.append(f"`blind:{scorer}` {lo['r1']:.1f}% (n = {lo['complexity']}) to {hi['r1']:.1f}% "
                      f"(n = {hi['complexity']})")
    by_n = neg.set_index(["scorer", "complexity"])["r1"]
    above = [s for s in dict.fromkeys(neg["scorer"]) if all(by_n.get((s, n), -1) > best[n] for n in best.index)]
    out = [f"On HN-Neg, each scorer's lowest and highest Recall@1 over the complexities: {'; '.join(ranges)}.",
           f"{len(above)} of {neg['scorer'].nunique()} beat the best published model at both published endpoints "
           f"({', '.join(f'{best[n]:.2f}% at n = {n}' for n in best.index)})"
           + (f": {', '.join(f'`blind:{s}`' for s in above)}." if above else ".")]
    other = recall[recall["hn_type"].isin(("atom", "swap"))]
    fixed = other[~other["scorer"].map(lambda s: blind.scorer(s).trained)]
    if len(fixed):
        top = fixed.loc[fixed["r1"].idxmax()]
        out.append(f"On HN-Atom and HN-Swap the fixed rules reach at most {top['r1']:.1f}% (`blind:{top['scorer']}`, "
                   f"{top['group']}), {beats(top['r1'], top['chance_r1'])} chance ({top['chance_r1']:.1f}%)."
                   + _tie_rules(top))
    bigram = other[other["scorer"] == "bigram"]
    if len(bigram):
        sure = int((bigram["ci_low"] > bigram["chance_r1"]).sum())
        out.append(f"The cross-fitted bigram, which has learnt what true captions look like, gets "
                   f"{pct_span(bigram['r1'])} on these {len(bigram)} files, the lower end of its 95% interval above "
                   f"chance on {sure} of them.")
    return " ".join(out)


def _tie_rules(row) -> str:
    """A row's score under the three tie rules, where a tie decided any of its queries: chance (1 / candidates)
    is what random tie-breaking gives a scorer that ties everything, so a strict score below it can be the rule."""
    if "r1_random_ties" not in row or not row.get("decided_by_tie", 0) > 0:
        return ""
    return (f" A tie decided {int(row['decided_by_tie']):,} of its {int(row['n_queries']):,} queries: counted against "
            f"the positive (as here) it scores {row['r1']:.1f}%, broken at random (as the chance line assumes) "
            f"{row['r1_random_ties']:.1f}% expected, counted for the positive {row['r1_optimistic']:.1f}%.")


def toy_systematicity(table: pd.DataFrame, comp_and: tuple[int, int, int] | None = None) -> str:
    """The toy world's HN-Comp length artefact against its tiny CLIP, as a finding about CREPE's construction.
    ``comp_and``: (positives holding the word "and", HN-Comp queries, queries whose every negative holds it)."""
    at = table.set_index(["model", "hn_type", "split"])
    models = [m for m in dict.fromkeys(table.loc[table["kind"] != "blind", "model"])]
    if ("blind:length", "comp", "SC") not in at.index:
        return ""
    def both(model: str, hn: str) -> str:
        return " and ".join(f"{pct(at.loc[(model, hn, s)])} ({s})" for s in ("SC", "UC"))
    out = [f"**The toy world (synthetic).** On HN-Comp, *pick the shorter caption* (`blind:length`) is right on "
           f"{both('blind:length', 'comp')}"]
    for model in models:
        sides = {beats(at.loc[("blind:length", "comp", s), "r1"], at.loc[(model, "comp", s), "r1"]) for s in ("SC", "UC")}
        relation = (f"{sides.pop()} the tiny CLIP on both splits" if len(sides) == 1 else
                    "on different sides of the tiny CLIP on the two splits")
        out[-1] += f", {relation} ({both(model, 'comp')})"
    out[-1] += "."
    if ("blind:bigram", "comp", "SC") in at.index:
        out.append(f"The cross-fitted bigram gets {both('blind:bigram', 'comp')}"
                   + (f": the word \"and\" is in {comp_and[0]:,} of {comp_and[1]:,} positives and in every negative of "
                      f"{comp_and[2]:,} of the {comp_and[1]:,} queries." if comp_and else "."))
    out.append("CREPE builds an HN-Comp negative by joining two single-compound foils, \"a X and a Y\" (§4.1), so a "
               "negative names two compounds where its positive may name one: its length and its conjunction are cues "
               "that need no image. The toy world builds HN-Comp the same way, so this is a finding about the "
               "construction, not about the toy; the same call measures it on the released systematicity files.")
    if ("blind:bigram", "atom", "SC") in at.index:
        sc, uc = (at.loc[("blind:bigram", "atom", s), "r1"] for s in ("SC", "UC"))
        out.append(f"On HN-Atom the text alone tells the splits apart: `blind:bigram` gets "
                   f"{both('blind:bigram', 'atom')}, {'a rise' if uc > sc else 'a fall'} of {abs(uc - sc):.1f} points "
                   "from SC to UC with no image and no training set behind it.")
    return " ".join(out)


#: its negatives that length gives away: HN-Neg's, the positive with a negation added
LENGTH_CUE = LengthCue(lambda rows: rows["hn_type"] == "negate", "the HN-Neg files", "HN-Neg", "on HN-Neg by")


def closing_sentences(recall: pd.DataFrame, published: pd.DataFrame, hard_sizes: pd.DataFrame | None = None) -> list[str]:
    """Notebook 07's closing sentences on CREPE's productivity files: the negation rule against the best published
    model on HN-Neg (with what the blind-hard subset leaves of HN-Neg, from ``hard_sizes``:
    :func:`~crepe_utils.blind.runs.blind_hard_sizes`), and the bigram on HN-Atom and HN-Swap."""
    rule = recall[(recall["scorer"] == "negation") & (recall["hn_type"] == "negate")]
    best = published[published["hn_type"] == "negate"]["r1"].max()
    bigram = recall[(recall["scorer"] == "bigram") & recall["hn_type"].isin(("atom", "swap"))]
    return [f"On CREPE's HN-Neg a one-line rule, *prefer the caption with fewer \"no\"s and \"not\"s*, gets "
            f"{pct_span(rule['r1'])} at every complexity, {beats(rule['r1'].min(), best)} the best published "
            f"model at any complexity ({best:.2f}%): read HN-Neg results as a test of the text encoder's "
            "treatment of \"no\"" + _negate_hard(hard_sizes) + ".",
            f"On HN-Atom and HN-Swap a bigram model of other images' captions gets {pct_span(bigram['r1'])} "
            f"against chance {bigram['chance_r1'].mean():.1f}%: part of what a model scores there is the "
            "plausibility of the text, not grounding."]


def _negate_hard(hard_sizes: pd.DataFrame | None) -> str:
    """What the blind-hard subset offers on HN-Neg: a subset to compare models on, or none."""
    if hard_sizes is None:
        return ""
    neg = hard_sizes[hard_sizes["hn_type"] == "negate"]
    left, total = int(neg["blind_hard"].sum()), int(neg["n_queries"].sum())
    if left == 0:
        return (f"; its blind-hard subset holds none of its {total:,} queries, so HN-Neg cannot tell a model that "
                "looks from one that reads the text well: compare models on HN-Atom's and HN-Swap's blind-hard "
                "queries instead")
    return f", and compare models on its blind-hard subset ({left:,} of {total:,} queries)"


def toy_closing_sentences(toy: pd.DataFrame) -> list[str]:
    """Notebook 07's closing sentence on the toy world's HN-Comp (``toy``: its systematicity table)."""
    comp = toy[(toy["model"] == "blind:length") & (toy["hn_type"] == "comp")]
    return [f"In a synthetic world whose HN-Comp is built as CREPE builds it, *pick the shorter caption* gets "
            f"{pct_span(comp['r1'])} on HN-Comp."]
