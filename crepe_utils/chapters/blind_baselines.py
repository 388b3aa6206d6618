"""Notebook 07's material ("What a model gets without looking"): the sentences and the figure that set several
benchmarks' blind results side by side; each benchmark's own figure and paragraph come from its folder
(``blind_view`` or ``blind``).

``data_line``        what this run lacks and which command brings it
``scorers``          the settings the scorers' definitions leave open
``length``           how much of a score is length, where each benchmark's negatives give length away and elsewhere
``length_contrast``  figure: the total against the length-normalised bigram, and the length rule, per file
``closing``          the closing paragraph, one sentence per table present

Every number and direction in a sentence is computed from the tables it is given.
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from .. import blind
from ..analysis.prose import pct_span
from ..analysis.reporting import SCORER_COLORS
from ..blind.runs import LengthCue
from ..lazy import lazy

pd = lazy("pandas")

def _power_of_ten(x: float) -> str:
    exponent = round(math.log10(x))
    return f"10<sup>{exponent}</sup>" if 10.0 ** exponent == x else f"{x:g}"


def data_line(messages: dict[str, str]) -> str:
    """One line: what this run lacks and which command brings it (``messages``: dataset → why it is absent)."""
    if not messages:
        return "Every dataset this notebook reads is present."
    return "Missing here, so not shown: " + " ".join(messages.values())


def scorers(settings: blind.BlindSettings, shown: tuple[str, ...]) -> str:
    """The settings the definitions above leave open, from the settings object itself."""
    trained = [s for s in shown if blind.scorer(s).trained]
    return (f"The cross-fitted scorers ({', '.join(f'`blind:{s}`' for s in trained)}) split the queries into "
            f"{settings.folds} folds by image and score each fold with a model fitted on the other "
            f"{settings.folds - 1}. `blind:wordfreq` counts a word its list lacks as frequency "
            f"{_power_of_ten(settings.unknown_frequency)}. This notebook runs {len(shown)} scorers; the classifiers, much slower, "
            "are `blind:classifier` models for `python -m crepe_utils evaluate`.")


def _share_sentence(explains: pd.DataFrame, where: pd.Series, label: str, scorer: str = "bigram") -> str:
    g = explains[where & (explains["scorer"] == scorer)]
    return (f"{label}: {pct_span(g['length_share'])} of `blind:{scorer}`'s wins are also the length rule's, which "
            f"alone is right on {pct_span(g['length_r1'])}")


def _delta_sentence(explains: pd.DataFrame, where: pd.Series, label: str) -> str:
    wide = explains[where].pivot_table(index="group", columns="scorer", values="r1", sort=False)
    delta = wide["bigram-mean"] - wide["bigram"]
    lo, hi = delta.idxmin(), delta.idxmax()
    return f"{label} {delta[lo]:+.1f} ({lo}) to {delta[hi]:+.1f} ({hi}) points"


def length(parts: list[tuple[pd.DataFrame | None, LengthCue]]) -> str:
    """The length measure (:func:`~crepe_utils.blind.runs.length_explains`), why it, and what it shows: ``parts``
    are each benchmark's table (None: no data) with its length cue (its folder's ``LENGTH_CUE``)."""
    present = [(t.reset_index(drop=True), cue) for t, cue in parts if t is not None]
    if not present:
        return ""
    both = pd.concat([t.assign(_part=i) for i, (t, _) in enumerate(present)], ignore_index=True)
    masks = []
    for i, (_, cue) in enumerate(present):
        own = both["_part"] == i
        mask = pd.Series(False, index=both.index)
        mask[own] = cue.applies(both[own]).to_numpy()
        masks.append((mask, cue))
    rest = ~np.logical_or.reduce([m.to_numpy() for m, _ in masks])
    rest = pd.Series(rest, index=both.index)
    per_file = both.drop_duplicates(["_part", "group"])
    why = []
    for mask, cue in masks:
        files = per_file[mask.loc[per_file.index]]
        if len(files):
            why.append(f"{int(files['n_length_balanced'].sum()):,} of {int(files['n_queries'].sum()):,} queries of "
                       f"{cue.files}")
    out = ["**How much of a score is length?** For each scorer and file: of the queries it ranks first, the share "
           "that `blind:length` (*pick the shortest caption*) ranks first too, the part of its Recall@1 that length "
           "alone could have produced."]
    if why:
        out.append("The alternative, Recall@1 on the length-balanced queries (every candidate as long as the "
                   "positive), is undefined or rests on a handful exactly where length matters: "
                   + "; ".join(why) + " are length-balanced.")
    for mask, cue in masks:
        if mask.any():
            out.append(_share_sentence(both, mask, cue.label) + ".")
    if {"bigram", "bigram-mean"} <= set(both["scorer"]):
        parts_ = [_delta_sentence(both, mask, cue.by) for mask, cue in masks if mask.any()]
        if rest.any():
            parts_.append(_delta_sentence(both, rest, "on every other file by"))
        out.append("A share near the rule's own Recall@1 says only that the file cannot tell a scorer's wins from "
                   "length's. The length-normalised bigram, `blind:bigram-mean`, answers directly: against the total "
                   "it changes Recall@1 " + "; ".join(parts_) + ".")
    return " ".join(s for s in out if s)


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
    ax.set_xticks(x, groups, rotation=45, ha="right", fontsize=9)
    ax.set(ylabel="Recall@1 (%)", ylim=(0, 105), title=title)


def length_contrast(panels: dict[str, pd.DataFrame]):
    """Per file (one panel per title): the total and the length-normalised bigram's R@1 beside the length
    rule's and chance (each table: :func:`crepe_utils.blind.runs.length_explains` rows)."""
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.4, 3.9 * len(panels) + 1.2), sharey=True, squeeze=False)
    for ax, (title, explains) in zip(axes[:, 0], panels.items()):
        _length_panel(ax, explains, title)
    axes[-1, 0].legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.45), ncols=2)
    fig.suptitle("How much is length? The bigram's total against its mean\nper word, beside the length rule",
                 fontweight="bold")
    fig.tight_layout()
    return fig


def closing(sentences: list[str]) -> str:
    """The notebook's closing paragraph: each benchmark's sentences on what its tables show (its folder's
    ``closing_sentences``), or what this run lacks."""
    out = ["**What this shows.** A score is evidence that a model looked only where a scorer that cannot look does "
           "worse.", *sentences]
    if not sentences:
        out.append("This run has none of the benchmarks' texts, so it shows the published text-only numbers only.")
    return " ".join(out)
