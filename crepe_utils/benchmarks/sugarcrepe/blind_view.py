"""SugarCrepe's blind scorers as notebook 07 shows them: the figure of its seven subsets and the sentences built
from the same table.

``figure``    each scorer's R@1 with its 95% interval per subset, the published text-only models, chance
``text``      the bigram on REPLACE and SWAP (with intervals) against the published adversaries; length on ADD
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ...analysis.prose import pct, pct_span
from ...analysis.reporting import RANDOM_TIES, SCORER_COLORS, random_tie_marks
from ...blind.runs import LengthCue
from .blind import REPLACE_SWAP
from ...lazy import lazy

pd = lazy("pandas")

#: its subsets whose negatives add words
ADD = ("add_att", "add_obj")

TEXT_ONLY_COLORS = {"vera": "#8172B2", "grammar": "#CCB974"}


def _sugarcrepe_panel(ax, recall: pd.DataFrame, published: pd.DataFrame) -> None:
    subsets = list(dict.fromkeys(recall["group"]))
    scorers = list(dict.fromkeys(recall["scorer"]))
    width = 0.8 / len(scorers)
    x = np.arange(len(subsets))
    hollow = False                      # the legend names the hollow markers once
    for i, scorer in enumerate(scorers):
        g = recall[recall["scorer"] == scorer].set_index("group").loc[subsets]
        ax.bar(x + (i - (len(scorers) - 1) / 2) * width, g["r1"], width, color=SCORER_COLORS.get(scorer, "black"),
               yerr=[g["r1"] - g["ci_low"], g["ci_high"] - g["r1"]], error_kw={"lw": 0.6}, label=f"blind:{scorer}")
        hollow |= random_tie_marks(ax, x + (i - (len(scorers) - 1) / 2) * width, g, "black",
                                   None if hollow else RANDOM_TIES, s=18, linewidths=0.9, zorder=5)
    for model, color in TEXT_ONLY_COLORS.items():
        rows = published[published["model"] == model].set_index("subset")
        if len(rows):
            ax.scatter(x, rows["r1"].reindex(subsets), marker="D", s=22, color=color, zorder=4,
                       label=f"{model} (published)")
    ax.axhline(50, color="grey", ls="--", lw=1, label="chance")
    ax.set_xticks(x, subsets, rotation=30, ha="right")
    ax.set(title="SugarCrepe: caption vs one negative", ylabel="Recall@1 (%)", ylim=(0, 105))


def figure(recall: pd.DataFrame, published: pd.DataFrame):
    """SugarCrepe's seven subsets: each scorer's R@1 with its 95% interval, the published text-only models, chance."""
    fig, ax = plt.subplots(figsize=(7.4, 5.0))
    _sugarcrepe_panel(ax, recall, published)
    ax.legend(fontsize=9, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    ax.set_title("")                    # one title: the panel's would sit under the figure's
    fig.suptitle("The same scorers on SugarCrepe (caption against one negative),\nbuilt to defeat text-only "
                 "scorers", fontweight="bold")
    return fig


def text(recall: pd.DataFrame, published: pd.DataFrame) -> str:
    """The bigram on REPLACE and SWAP (with intervals) against the published adversaries; length on ADD."""
    rows = recall[(recall["scorer"] == "bigram") & recall["group"].isin(REPLACE_SWAP)].set_index("group")
    rows = rows.reindex([g for g in REPLACE_SWAP if g in rows.index])
    sure = int((rows["ci_low"] > rows["chance_r1"]).sum())
    chance = float(rows["chance_r1"].iloc[0])
    verdict = (f"beats chance ({chance:.0f}%) on all {len(rows)}" if sure == len(rows) else
               f"has its 95% interval above chance ({chance:.0f}%) on {sure} of the {len(rows)}")
    adversaries = published[published["model"].isin(("vera", "grammar")) & published["subset"].isin(rows.index)]
    out = [f"**The strongest finding here.** `blind:bigram`, a bigram model of other images' true captions that never "
           f"sees the image, {verdict} REPLACE and SWAP subsets: "
           + "; ".join(f"{g} {pct(r)} of {int(r['n_queries']):,}" for g, r in rows.iterrows()) + "."]
    if len(adversaries):
        out.append(f"SugarCrepe filtered these negatives with text-only adversaries, and the two it reports, Vera and a "
                   f"grammar model, score {pct_span(adversaries['r1'])} on them (published, diamonds): what a model of "
                   "plausible captions learns from the benchmark's own captions survives that filter.")
    mean = recall[(recall["scorer"] == "bigram-mean") & recall["group"].isin(rows.index)]
    if len(mean):
        out.append(f"Without its length penalty (`blind:bigram-mean`) it gets {pct_span(mean['r1'])} there.")
    shorter = recall[(recall["scorer"] == "length") & recall["group"].isin(ADD)]
    if len(shorter):
        out.append("On the ADD subsets, where the negative adds an object or attribute, *pick the shorter caption* is "
                   "right on " + " and ".join(f"{pct(r)} ({r['group']})" for _, r in shorter.iterrows()) + ".")
    return " ".join(out)


#: its negatives that length gives away: the ADD subsets', which add an object or attribute
LENGTH_CUE = LengthCue(lambda rows: rows["group"].isin(ADD), "the ADD subsets", "SugarCrepe's ADD subsets",
                       "on the ADD subsets by")


def closing_sentences(recall: pd.DataFrame) -> list[str]:
    """Notebook 07's closing sentence on SugarCrepe: the text cue on REPLACE and SWAP, the length cue on ADD."""
    rows = recall[(recall["scorer"] == "bigram") & recall["group"].isin(REPLACE_SWAP)]
    shorter = recall[(recall["scorer"] == "length") & recall["group"].isin(ADD)]
    return [f"SugarCrepe's adversarial filtering leaves a text cue on REPLACE and SWAP (the bigram "
            f"{pct_span(rows['r1'])}, its interval above chance on {int((rows['ci_low'] > rows['chance_r1']).sum())} "
            f"of {len(rows)}) and a length cue on ADD (*pick the shorter caption* {pct_span(shorter['r1'])})."]
