"""Notebook 05's tables, figures and sentences: Winoground's Table 3 with exact intervals, its released metadata,
(the models it shares with CREPE are :mod:`crepe_utils.across.cross`'s).

Each model's published score is k of Winoground's 400 examples, so it carries an exact (Clopper–Pearson) 95%
interval; the human row (the share of raters' "match" answers) and the chance row do not.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from ... import escaping, paths
from . import reported
from .statistics import split_tags
from ...analysis import prose, uncertainty
from ...analysis.reporting import cite
from ...lazy import lazy

pd = lazy("pandas")

METRICS = ("text", "image", "group")
COLORS = {"text": "#4C72B0", "image": "#55A868", "group": "#C44E52"}
NOT_BINOMIAL = ("MTurk human", "Random chance")


def source_line(examples, source: str | None, directory) -> str:
    """Where the examples came from (no absolute path), or what is missing and how to get it."""
    if examples is None:
        return ("**No Winoground data found** in " + escaping.code(paths.shown(directory)) + ". Missing here: the "
                "metadata checks "
                "(tag counts, caption pairs) and evaluated scores. Winoground is gated: accept its terms on the "
                "Hugging Face hub, then `HF_TOKEN=... make data-winoground` (see README). Shown without it: "
                "Table 3 with exact intervals, and the pinned counts of its metadata.")
    where = escaping.visible(source).replace(escaping.visible(str(Path(directory))),
                                             escaping.code(paths.shown(directory)))
    return f"Winoground examples from {escaping.markdown_message(where)}."


def table3() -> pd.DataFrame:
    """Table 3 with k, N = 400 and the exact 95% interval of each model's text, image and group score."""
    t3 = reported.table3()
    n = int(reported.claim("wg_examples"))
    rows = []
    for r in t3.itertuples():
        row = {"model": r.model}
        for m in METRICS:
            v = getattr(r, m)
            row[m] = v
            if r.model in NOT_BINOMIAL:
                row[f"{m}_ci_low"] = row[f"{m}_ci_high"] = np.nan
            else:
                row[f"{m}_ci_low"], row[f"{m}_ci_high"] = uncertainty.clopper_pearson(uncertainty.k_of(v, n), n)
        rows.append(row)
    return pd.DataFrame(rows)


def table3_figure(t3: pd.DataFrame):
    """Each model's three scores with exact 95% intervals, models ordered by group score; chance dotted."""
    order = t3.sort_values("group")["model"].tolist()
    y = {m: i for i, m in enumerate(order)}
    fig, ax = plt.subplots(figsize=(7.0, 6.8))
    for (metric, marker), dy in zip((("text", "o"), ("image", "s"), ("group", "D")), (0.22, 0.0, -0.22)):
        ys = t3["model"].map(y) + dy
        ax.errorbar(t3[metric], ys, xerr=[t3[metric] - t3[f"{metric}_ci_low"], t3[f"{metric}_ci_high"] - t3[metric]],
                    fmt=marker, color=COLORS[metric], ms=4.5, elinewidth=0.8, capsize=0, label=f"{metric} score")
    chance = t3.set_index("model").loc["Random chance"]
    for metric in ("text", "group"):
        ax.axvline(chance[metric], color=COLORS[metric], ls=":", lw=1)
    ax.set_yticks(range(len(order)), order)
    ax.set(xlabel="score (%), with exact 95% intervals on 400 examples",
           title="Winoground Table 3: models against humans and chance\n(dotted: text and group chance)")
    ax.legend(loc="lower right")
    return cite(fig, f"Winoground Table 3 (Thrush et al., CVPR 2022), {reported.transcribed('table3.csv')}; intervals from its "
                     f"400 examples")


def table3_sentence(t3: pd.DataFrame) -> str:
    models = t3[~t3["model"].isin(NOT_BINOMIAL)]
    human = t3.set_index("model").loc["MTurk human"]
    chance = t3.set_index("model").loc["Random chance"]
    below = models["group"] < chance["group"]
    wholly = models["group_ci_high"] < chance["group"]
    clip = t3.set_index("model").loc["CLIP (ViT-B/32)"]
    best = models.sort_values("group").iloc[-1]
    return (f"{prose.how_many(models['group'] < human['group'], 'model')[0].upper()}"
            f"{prose.how_many(models['group'] < human['group'], 'model')[1:]} score below the MTurk humans' group "
            f"score of {prose.num(human['group'])}. {prose.how_many(below, 'group score')[0].upper()}"
            f"{prose.how_many(below, 'group score')[1:]} lie below the group chance of {prose.num(chance['group'])}; "
            f"with 400 examples, the exact 95% interval lies wholly below it for {prose.count(wholly.sum())} of them "
            f"(the best, {best['model']}'s {prose.num(best['group'])}, has "
            f"{prose.interval(best['group_ci_low'], best['group_ci_high'])}). CLIP ViT-B/32, the one model of "
            f"Winoground's table in CREPE's open_clip line-up, scores {prose.num(clip['text'])} / "
            f"{prose.num(clip['image'])} / {prose.num(clip['group'])}. Table 3's values are "
            + reported.transcribed("table3.csv") + ".")


def interval_sentence(t3: pd.DataFrame) -> str:
    """Winoground's appendix-A interval against the exact one, for the example its appendix gives."""
    row = t3.set_index("model").loc["FLAVA ITM"]
    low, high = reported.claim("wg_appA_flava_itm_text_low"), reported.claim("wg_appA_flava_itm_text_high")
    return (f"Winoground's appendix A gives intervals from four groups of examples (Student t with 3 degrees of "
            f"freedom): FLAVA ITM's text score of {prose.num(row['text'])} gets {prose.interval(low, high)} there, "
            f"against the exact binomial {prose.interval(row['text_ci_low'], row['text_ci_high'])} from 400 "
            "examples. Either way, differences of a few points between models are not evidence; evaluated results "
            "(below) get both, per tag subset too.")


def metadata_sentence(examples: pd.DataFrame | None, exceptions: pd.DataFrame | None) -> str:
    """The two counting pitfalls, from the data when present, else from the pinned counts."""
    pinned = reported.released_counts()
    tags = ("Symbolic", "Series", "Pragmatics")
    if examples is not None:
        field = examples["secondary_tag"].fillna("").astype(str).str.strip()
        split = [int(sum(t in split_tags(v) for v in field)) for t in tags]
        exact = [int((field == t).sum()) for t in tags]
        n_diff, n_letters = len(exceptions), int(exceptions["same_letters"].sum())
        where = "in the released metadata"
    else:
        split = [pinned[f"secondary:{t}"] for t in tags]
        exact = [pinned[f"secondary_exact:{t}"] for t in tags]
        n_diff, n_letters = pinned["pairs_differing_words"], pinned["pairs_same_letters"]
        where = "in the pinned counts of the released metadata (not read here)"
    human = [reported.claim(f"wg_human_{t.lower()}") for t in tags]
    fractions = prose.listing(f"{prose.num(h)} = {uncertainty.k_of(h, e)}/{e}" for h, e in zip(human, exact))
    n = int(reported.claim("wg_examples"))
    return (f"Two counting pitfalls, {where}. Secondary tags are comma-separated, so an example can be \"Symbolic, "
            f"Series\": counted by membership the tags give {' / '.join(map(str, split))}, Table 1's counts; counted "
            f"by exact value they give {' / '.join(map(str, exact))}, the denominators Table 5's human percentages "
            f"imply ({fractions}). Per-tag statistics therefore depend on the counting, and the paper uses both. And "
            f"the \"same words\" rule holds at the level of words for {n - n_diff} pairs and of letters (morphemes) "
            + (f"for the other {n_diff}." if n_letters == n_diff else f"for {n_letters} of the other {n_diff}."))


def summary(t3: pd.DataFrame, examples: pd.DataFrame | None) -> str:
    models = t3[~t3["model"].isin(NOT_BINOMIAL)]
    chance = t3.set_index("model").loc["Random chance"]
    near = (models["image_ci_low"] <= chance["image"]) | (models["image"] < chance["image"])
    text = "**What this shows.** "
    text += ("The released metadata match Table 1 once secondary tags are counted by membership, and Table 5's "
             "denominators are the exact-match counts (the checks above). " if examples is not None else
             "The metadata checks need the data (`make data-winoground`); the pinned counts above say what they "
             "find. ")
    lows, highs = models["group_ci_low"].to_numpy(), models["group_ci_high"].to_numpy()
    pairs = [(i, j) for i in range(len(models)) for j in range(i + 1, len(models))]
    overlap = [lows[i] <= highs[j] and lows[j] <= highs[i] for i, j in pairs]
    return text + (f"On the published scores, {prose.how_many(near, 'model')} are at or below chance on the image "
                   f"score once its exact interval is drawn, and {prose.how_many(overlap, 'pair')} of models have "
                   "overlapping group-score intervals. A "
                   "faithful scorer (strict inequalities, ties counted) applied to open_clip's CLIP ViT-B/32 should "
                   "reproduce its Table 3 row; the check above says whether it has been run and whether it does.")
