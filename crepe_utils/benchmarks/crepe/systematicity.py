"""Notebook 02's tables, figures and sentences: CREPE's systematicity (SC → UC), published and evaluated.

The published values carry an exact 95% interval, and each SC → UC change Newcombe's interval, only where the
released systematicity CSVs give each split's query count (:func:`query_counts`); without them a sentence
says how many queries a change would need before it could exceed its interval.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from . import reported
from ...models import checkpoints
from ... import escaping
from ...analysis import prose, uncertainty
from ...analysis.reporting import HN_LABELS, TRAIN_PALETTE, cite
from ...lazy import lazy

pd = lazy("pandas")

HN_TYPES = ["combined", "atom", "comp"]
TRAIN_ORDER = ("cc12m", "yfcc", "laion")


def chance() -> dict[str, float]:
    c = reported.claims().set_index("claim_id")["value"].astype(float)
    return {"combined": c["chance_syst_combined"], "atom": c["chance_syst_atom"], "comp": c["chance_syst_comp"]}


def query_counts(report) -> dict[tuple[str, str, str], int]:
    """(train_data, HN type, split) → rows of that released systematicity CSV (each row one query); empty
    without the CSVs (``report``: :func:`crepe_utils.benchmarks.crepe.validation.validate`'s, or None)."""
    if report is None or report.files.empty:
        return {}
    files = report.files[report.files["benchmark"] == "systematicity"]
    return {(r.train_data, r.hn_type, r.split): int(r.rows) for r in files.itertuples()}


def published(counts: dict | None = None) -> pd.DataFrame:
    """SC, UC and UC − SC per model × HN set (paper order), with N, k and exact intervals where ``counts`` has N,
    and the change's Newcombe interval (``gap_*``, ``exceeds``) or the queries it would need (``n_needed``)."""
    pub = reported.systematicity()
    pub["N"] = [(counts or {}).get((t, h, s), np.nan) for t, h, s in zip(pub["train_data"], pub["hn_type"],
                                                                          pub["split"])]
    pub = uncertainty.with_intervals(pub)
    keys = ["model", "hn_type"]
    gaps = uncertainty.gap_table(pub[pub["split"] == "SC"], pub[pub["split"] == "UC"], keys)
    wide = reported.systematicity_wide()
    for split in ("SC", "UC"):
        part = pub[pub["split"] == split].set_index(keys)[["N", "r1_ci_low", "r1_ci_high"]]
        part.columns = [f"{split}_{c}" for c in part.columns]
        wide = wide.join(part, on=keys)
    return wide.merge(gaps[keys + ["gap_ci_low", "gap_ci_high", "exceeds", "n_needed"]], on=keys, how="left")


def display_table(pub: pd.DataFrame) -> pd.DataFrame:
    """The published table as the paper lays it out: training data and model × (SC, UC, UC − SC) per HN set."""
    shown = pub.assign(**{"training data": pub["train_data"].map(checkpoints.TRAIN_DATA_LABELS),
                          "HN set": pub["hn_type"].map(HN_LABELS)})
    wide = shown.pivot_table(index=["training data", "display"], columns="HN set", values=["SC", "UC", "delta"],
                             sort=False)
    return wide.reindex(columns=[(m, HN_LABELS[h]) for h in HN_TYPES for m in ["SC", "UC", "delta"]]).round(2)


def flat_table(pub: pd.DataFrame) -> pd.DataFrame:
    """One row per model × HN set, for tables/: the values, N where known and the intervals."""
    cols = {"display": "model", "delta": "UC − SC"}
    keep = ["train_data", "display", "hn_type", "SC", "UC", "delta", "SC_N", "UC_N", "SC_r1_ci_low", "SC_r1_ci_high",
            "UC_r1_ci_low", "UC_r1_ci_high", "gap_ci_low", "gap_ci_high", "n_needed"]
    out = pub[keep].rename(columns=cols)
    out.insert(0, "training data", out.pop("train_data").map(checkpoints.TRAIN_DATA_LABELS))
    out.insert(2, "HN set", out.pop("hn_type").map(HN_LABELS))
    return out


def _bars(ax, d: pd.DataFrame, xlim: tuple[float, float]) -> None:
    y = np.arange(len(d))[::-1]
    ax.barh(y, d["delta"], color=[TRAIN_PALETTE[t] for t in d["train_data"]], height=0.65)
    pad = 0.02 * (xlim[1] - xlim[0])
    for yi, v in zip(y, d["delta"]):
        ax.text(v + (pad if v >= 0 else -pad), yi, prose.num(v, signed=True), va="center",
                ha="left" if v >= 0 else "right", fontsize=9)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(y, d["display"])


def delta_figure(pub: pd.DataFrame):
    """UC − SC per model, one panel per HN set, bars coloured by training data."""
    lo, hi = pub["delta"].min(), pub["delta"].max()
    xlim = (min(lo, 0) - 0.25 * (hi - lo), max(hi, 0) + 0.25 * (hi - lo))
    fig, axes = plt.subplots(3, 1, figsize=(7.2, 8.6), sharex=True)
    for ax, hn in zip(axes, HN_TYPES):
        _bars(ax, pub[pub["hn_type"] == hn], xlim)
        ax.set(xlim=xlim)
        ax.set_title(HN_LABELS[hn], loc="left")
    axes[-1].set_xlabel("UC − SC Recall@1 (points)")
    _train_legend(fig, -0.045, ncols=3)
    fig.suptitle("SC → UC change in Recall@1, published (CREPE app. B.1)", fontweight="bold")
    fig.tight_layout()
    return cite(fig, f"CREPE's published Recall@1 (app. B.1), {reported.transcribed('systematicity_r1.csv')}")


def _train_legend(fig, y: float, keys=TRAIN_ORDER, ncols: int | None = None) -> None:
    handles = [plt.Rectangle((0, 0), 1, 1, color=TRAIN_PALETTE[t]) for t in keys]
    fig.legend(handles, [checkpoints.TRAIN_DATA_LABELS[t] for t in keys], ncols=ncols or len(keys),
               loc="lower center", bbox_to_anchor=(0.5, y))


def sc_uc_figure(pub: pd.DataFrame):
    """Each model's arrow from SC (●) to UC (▸), chance dashed; with N known, each end's exact 95% interval."""
    lines = chance()
    fig, axes = plt.subplots(3, 1, figsize=(7.2, 9.0))
    for ax, hn in zip(axes, HN_TYPES):
        d = pub[pub["hn_type"] == hn]
        y = np.arange(len(d))[::-1]
        for yi, r in zip(y, d.itertuples()):
            c = TRAIN_PALETTE[r.train_data]
            ax.annotate("", xy=(r.UC, yi), xytext=(r.SC, yi),
                        arrowprops=dict(arrowstyle="-|>", color=c, lw=1.6, shrinkA=0, shrinkB=0))
            ax.plot(r.SC, yi, "o", color=c, ms=5)
            for split in ("SC", "UC"):
                low, high = getattr(r, f"{split}_r1_ci_low"), getattr(r, f"{split}_r1_ci_high")
                if pd.notna(low):
                    ax.plot([low, high], [yi + 0.18] * 2, color=c, lw=0.8, alpha=0.7)
        ax.axvline(lines[hn], color="grey", ls="--", lw=1)
        ax.text(lines[hn] + 0.5, y[-1] - 0.6, f"chance {prose.num(lines[hn])}", color="0.35", fontsize=9)
        lo, hi = min(lines[hn], d["SC"].min(), d["UC"].min()), max(d["SC"].max(), d["UC"].max())
        ax.set(xlabel="Recall@1 (%)  ● SC → UC", xlim=(lo - 2, hi + 2))
        ax.set_title(HN_LABELS[hn], loc="left")
        ax.set_yticks(y, d["display"])
    known = pub["SC_r1_ci_low"].notna().any()
    fig.suptitle("Recall@1 from seen (●) to unseen (▸) compounds, published\n"
                 + ("thin lines: exact 95% intervals" if known else "(no query counts: no intervals)"),
                 fontweight="bold")
    fig.tight_layout()
    return cite(fig, f"CREPE's published Recall@1 (app. B.1), {reported.transcribed('systematicity_r1.csv')}")


def evaluated_figure(ev: pd.DataFrame, pub: pd.DataFrame):
    """Evaluated UC − SC with 95% bootstrap intervals, the published change (×) where the model has one."""
    sets = [h for h in HN_TYPES if h in set(ev["hn_type"])]
    fig, axes = plt.subplots(len(sets), 1, figsize=(7.2, len(sets) * max(2.2, 1.1 + 0.4 * ev["display"].nunique())
                                                     + 0.8), squeeze=False)
    for ax, hn in zip(axes[:, 0], sets):
        d = ev[ev["hn_type"] == hn].reset_index(drop=True)
        y = np.arange(len(d))[::-1]
        ax.errorbar(d["delta"], y, xerr=[d["delta"] - d["delta_ci_low"], d["delta_ci_high"] - d["delta"]],
                    fmt="none", ecolor="black", elinewidth=1, capsize=3)
        ax.scatter(d["delta"], y, c=[TRAIN_PALETTE.get(t, "#777777") for t in d["train_data"]], s=40, zorder=3,
                   label="evaluated")
        paper = d.merge(pub[["model", "hn_type", "delta"]].rename(columns={"delta": "paper"}),
                        on=["model", "hn_type"], how="left")["paper"]
        if paper.notna().any():
            ax.scatter(paper, y, marker="x", color="black", s=30, zorder=4, label="published")
        ax.axvline(0, color="black", lw=0.8)
        ax.set(title=HN_LABELS[hn], xlabel="UC − SC Recall@1 (points), 95% CI")
        ax.set_yticks(y, d["display"])
    axes[0][0].legend(loc="lower left", fontsize=9)
    kinds = set(ev["kind"])
    note = (" (TOY WORLD: synthetic, not comparable to the paper)" if kinds == {"toy"} else
            " (FIXTURE: synthetic test data)" if "fixture" in kinds else "")
    fig.suptitle("SC → UC change, evaluated" + note.replace(" (", "\n("), fontweight="bold")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ sentences

def table_sentence(pub: pd.DataFrame) -> str:
    n = pub["model"].nunique()
    known = pub["SC_N"].notna().any()
    return (f"Recall@1 (%) on SC and UC and the change UC − SC in points, for the {n} open_clip checkpoints the "
            "paper evaluates on systematicity (app. B.1, " + reported.transcribed("systematicity_r1.csv") + "); RN50, RN101 and ViT-B-32 are the QuickGELU checkpoints "
            "the official code loads. "
            + ("Each value's exact 95% interval comes from its split's query count in the released CSVs."
               if known else "The paper prints no query counts for these sets, so no interval can be given here: "
               "the systematicity CSVs (`make data-crepe`) hold them, and with them this notebook adds each "
               "value's exact interval."))


def headline_sentence(pub: pd.DataFrame) -> str:
    drops = pub.assign(drop=-pub["delta"])
    top = drops.sort_values("drop").iloc[-1]
    comb = drops[drops["hn_type"] == "combined"].sort_values("drop").iloc[-1]
    return (f"**The abstract's headline is one subset.** Its \"Recall@1 dropping by up to 12%\" is {top['display']} "
            f"on {HN_LABELS[top['hn_type']]}: {prose.num(top['SC'])} → {prose.num(top['UC'])}, "
            f"{prose.num(top['drop'])} points, in absolute points. On the combined set the largest drop is "
            f"{prose.num(comb['drop'])} ({comb['display']}).")


def comp_sentence(pub: pd.DataFrame) -> str:
    """HN-Comp: which models go up, by how much, against §5.1's words and against the intervals."""
    comp = pub[pub["hn_type"] == "comp"]
    up = comp[comp["delta"] > 0]
    if up.empty:
        return f"On HN-Comp, {prose.how_many(comp['delta'] < 0, 'model')} score lower on UC than on SC."
    groups = prose.listing(sorted({checkpoints.TRAIN_DATA_LABELS[t] for t in up["train_data"]}))
    text = (f"**HN-Comp.** §5.1 calls HN-Comp \"little (1–3%) to no difference\". "
            f"{prose.how_many(comp['delta'] > 0, 'model')} ({groups}) score higher on unseen compounds than on "
            f"seen ones, by {prose.span(up['delta'], signed=True)} points; "
            f"{prose.how_many(comp['delta'].abs() > 3, 'change')} exceed 3 points. ")
    if up["exceeds"].notna().all():
        beyond = up["exceeds"].astype(bool)
        return text + (f"With the released split sizes, {prose.how_many(beyond, 'rise')} exceed their 95% interval "
                       "(Newcombe's interval of a difference), so the direction "
                       + ("is established." if beyond.all() else "is not established for all of them."))
    return text + ("Whether these rises are more than sampling noise the published numbers cannot say: with the "
                   "paper giving no query counts, each would exceed its 95% interval only with at least "
                   f"{prose.count(up['n_needed'].min())} to {prose.count(up['n_needed'].max())} queries per split "
                   "(normal approximation). The systematicity CSVs (`make data-crepe`) give the counts.")


def evaluated_sentence(ev: pd.DataFrame) -> str:
    """Each evaluated model's changes with their bootstrap intervals, and whether each interval excludes 0."""
    parts = []
    for model, g in ev.groupby("display", sort=False):
        bits = [f"{HN_LABELS[r.hn_type]} {prose.num(r.delta, 1, signed=True)} "
                f"{prose.interval(r.delta_ci_low, r.delta_ci_high, 1, signed=True)}" for r in g.itertuples()]
        excl = (g["delta_ci_high"] < 0) | (g["delta_ci_low"] > 0)
        parts.append(f"{escaping.markdown(model)}: {'; '.join(bits)} ({prose.how_many(excl, 'interval')} exclude 0)")
    return "UC − SC, evaluated, with 95% bootstrap intervals: " + "; ".join(parts) + "."


def _rises_words(up: pd.DataFrame) -> str:
    if up.empty or not up["exceeds"].notna().all():
        return "by amounts the published numbers cannot tell from sampling noise (above)"
    return f"{int(up['exceeds'].astype(bool).sum())} of them by more than their 95% interval"


def summary(pub: pd.DataFrame) -> str:
    """The closing paragraph on the published numbers."""
    c = reported.claims().set_index("claim_id")["value"].astype(float)
    comb, atom, comp = (pub[pub["hn_type"] == h] for h in ("combined", "atom", "comp"))
    by_train = atom.assign(drop=-atom["delta"]).groupby("train_data")["drop"].mean()
    most = by_train.idxmax()
    most_rows = atom[atom["train_data"] == most]
    recall = [c[f"parser_recall_{t}"] for t in TRAIN_ORDER]
    return (f"**What this shows.** {prose.how_many(comb['delta'] < 0, 'checkpoint')[0].upper()}"
            f"{prose.how_many(comb['delta'] < 0, 'checkpoint')[1:]} lose Recall@1 from SC to UC on the combined set "
            f"and {prose.how_many(atom['delta'] < 0, 'checkpoint')} on HN-Atom; the "
            f"{checkpoints.TRAIN_DATA_LABELS[most]} models lose the most on HN-Atom "
            f"({prose.span(-most_rows['delta'])} points). Two qualifications belong next to this: the headline "
            f"number is one subset in absolute points, and on HN-Comp {prose.how_many(comp['delta'] > 0, 'model')} "
            f"score higher on UC, {_rises_words(comp[comp['delta'] > 0])}. SC/UC membership comes from a caption parser whose triplet recall is "
            f"{prose.span(recall, sep='–')}% by training set (app. A.2), so \"unseen\" means \"not found by the "
            "parser\", a caveat no reanalysis of these tables can remove.")
