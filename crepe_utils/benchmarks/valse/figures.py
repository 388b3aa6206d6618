"""Notebook 09's figures: the published averages, the text-only scorers on each VALSE piece, and what each
piece's texts give away."""
from __future__ import annotations

from . import reported
from .data import PIECES
from ...analysis.reporting import cite
from ...lazy import lazy

pd = lazy("pandas")

_MARKERS = "osD^v"


def _labels() -> list[str]:
    return [p.name for p in PIECES]


def published(results: pd.DataFrame):
    """Each model's published average over the pieces: pairwise accuracy (chance 50%) and, where the paper gives it,
    accuracy (chance depends on the piece, so none is drawn). No interval: the paper's averages carry no count."""
    import matplotlib.pyplot as plt
    wide = results.pivot_table(index="model", columns="metric", values="value", sort=False)
    wide = wide.sort_values("acc_r")
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(wide) + 1.4))
    y = range(len(wide))
    ax.barh([k + 0.18 for k in y], wide["acc_r"], height=0.36, label="pairwise accuracy (acc_r)")
    if "acc" in wide:
        ax.barh([k - 0.18 for k in y], wide["acc"], height=0.36, label="accuracy (acc)")
    ax.axvline(50, color="0.4", ls="--", lw=1)
    ax.text(50, len(wide) - 0.4, " acc_r chance", color="0.35", fontsize=9, va="bottom")
    ax.set(yticks=list(y), yticklabels=list(wide.index), xlim=(0, 100), ylim=(-0.6, len(wide) + 0.2),
           xlabel="average over VALSE's pieces (%), as published",
           title="VALSE's results table (Parcalabescu et al., ACL 2022)")
    ax.legend(loc="upper right", fontsize=9, framealpha=0.95)
    fig.tight_layout()
    return cite(fig, f"VALSE's published averages (Parcalabescu et al., ACL 2022), {reported.transcribed('results.csv')}")


def blind_pieces(table: pd.DataFrame):
    """Two panels per piece: each scorer's pairwise accuracy with its exact 95% interval (chance 50%), and the
    share of items it ties (a tie counts against it)."""
    import matplotlib.pyplot as plt
    pieces = _labels()
    fig, (acc_ax, tie_ax) = plt.subplots(1, 2, figsize=(7.3, 6.4), sharey=True, gridspec_kw={"width_ratios": [3, 1.3]})
    scorers = list(dict.fromkeys(table["scorer"]))
    offsets = {s: (i - (len(scorers) - 1) / 2) * 0.16 for i, s in enumerate(scorers)}
    for i, scorer in enumerate(scorers):
        rows = table[table["scorer"] == scorer].set_index("piece").reindex(pieces)
        y = [k + offsets[scorer] for k in range(len(pieces))]
        acc_ax.errorbar(rows["acc"], y, xerr=[rows["acc"] - rows["ci_low"], rows["ci_high"] - rows["acc"]],
                        fmt=_MARKERS[i % len(_MARKERS)], ms=5, capsize=2, lw=1, label=scorer)
        tie_ax.barh(y, 100 * rows["ties"] / rows["n"], height=0.15, label=scorer)
    acc_ax.axvline(50, color="0.4", ls="--", lw=1)
    acc_ax.text(50, -0.9, " chance", color="0.35", fontsize=9, va="bottom")
    acc_ax.set(yticks=range(len(pieces)), yticklabels=pieces, xlim=(-2, 102), ylim=(len(pieces) - 0.5, -1.0),
               xlabel="pairwise accuracy (%),\nexact 95% interval", title="Text-only scorers, VALSE's valid set")
    tie_ax.set(xlim=(0, 100), xlabel="items tied (%)", title="Ties (count against)")
    acc_ax.legend(loc="upper center", fontsize=9, ncols=2, bbox_to_anchor=(0.65, -0.13))
    fig.tight_layout()
    return fig


def negation_shares(shares: pd.DataFrame):
    """Of the items where exactly one of the two texts holds "no"/"not", the share where that text is the caption:
    one bar per benchmark piece, 50% for a set built with the negation on either side equally often."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.6, 0.55 * len(shares) + 1.4))
    y = range(len(shares))
    ax.barh(y, shares["caption_share"], color="#4C72B0")
    ax.errorbar(shares["caption_share"], y, xerr=[shares["caption_share"] - shares["ci_low"],
                                                  shares["ci_high"] - shares["caption_share"]],
                fmt="none", ecolor="0.2", capsize=3, lw=1)
    for k, row in enumerate(shares.itertuples()):
        ax.text(min(row.ci_high + 2, 88), k, f"{row.k:,} of {row.n:,}", va="center", fontsize=9)
    ax.axvline(50, color="0.4", ls="--", lw=1)
    ax.set(yticks=list(y), yticklabels=shares["set"], xlim=(0, 100), ylim=(len(shares) - 0.5, -0.5),
           xlabel="caption holds the negation (%), of items where one text does;\nexact 95% interval",
           title="Where the negation is: caption or foil")
    fig.tight_layout()
    return fig
