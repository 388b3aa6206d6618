"""Notebook 03's raw-set section: CREPE app. B.2's hypothesis tested on the released captions (no images).

App. B.2 reports that raw-set Recall@1 *rises* with caption complexity and explains it: a simple caption is true
of several images, so a raw fold is full of false negatives; a complex one is true of fewer. The released text
lets one count the textual part of that explanation. Within a complexity's raw set (:func:`.raw.raw_sets`: every
region with its captions), a caption c of region i

* is **identical** to a caption of another region j when the two are the same text (case and spacing folded);
* is **contained** in a caption d of region j when c's content words are a subset of d's (:func:`content_words`):
  d says everything c says, so where d is true of j, c very likely is too, and j is a false negative of the
  text-to-image query c (and c a false negative of image j's image-to-text query).

For a fold of N regions drawn at random (the seeded rule), a caption with m such other regions in a set of |D|
meets F of them in its fold, F hypergeometric (N - 1 draws from |D| - 1 with m successes): the share of captions
with F >= 1 is the share of text-to-image queries that meet a textual false negative, E[F] their mean count, and
E[1 / (1 + F)] the Recall@1 a model reaches on them that finds the right kind of image but cannot tell the
described ones apart (an upper bound set by the text alone: ``ceiling_r1``). Where |D| < N no fold exists (the
released n = 4) and the whole set is the fold (``fold_size`` = |D|, ``whole_set``).

This counts only what the text shows: captions true of another image without sharing its words are missed, and
a contained caption can still be false of the other region (a relation the words do not fix).
"""
from __future__ import annotations

import math
import re

import matplotlib.pyplot as plt
import numpy as np

from ...analysis import prose
from ...lazy import lazy
from . import raw

pd = lazy("pandas")

#: words that carry no content of their own: articles, determiners, pronouns, auxiliaries, conjunctions. The
#: prepositions and relation words stay (they are CREPE's relations: "dog on mat" is not "dog under mat").
STOPWORDS = frozenset("""a an the this that these those some any each every its it their there here is are was were
be been being has have had does do did and or but as also which who whom whose""".split())
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
KINDS = ("identical", "contained")
#: a change of the share smaller than this (points) is stated as no change
FLAT_POINTS = 1.0
KIND_LABELS = {"identical": "identical to another region's caption",
               "contained": "its content words within another region's caption"}


def normalised(caption: str) -> str:
    """A caption as compared for identity: case folded, runs of spaces one space, ends stripped."""
    return " ".join(caption.casefold().split())


def content_words(caption: str) -> frozenset[str]:
    """The caption's words (letters and digits, case folded) without :data:`STOPWORDS`."""
    return frozenset(w for w in _WORD.findall(caption.casefold()) if w not in STOPWORDS)


def matches(items: list) -> dict[str, list[int]]:
    """Per kind, per caption of ``items`` (region by region, caption by caption): how many *other* regions hold a
    caption it is identical to / contained in."""
    owners, texts, words = [], [], []
    for i, item in enumerate(items):
        for c in item.captions:
            owners.append(i)
            texts.append(normalised(c))
            words.append(content_words(c))
    by_text: dict[str, set[int]] = {}
    postings: dict[str, set[int]] = {}
    for k, (owner, text, ws) in enumerate(zip(owners, texts, words)):
        by_text.setdefault(text, set()).add(owner)
        for w in ws:
            postings.setdefault(w, set()).add(k)
    identical, contained = [], []
    everyone = set(range(len(texts)))
    for owner, text, ws in zip(owners, texts, words):
        identical.append(len(by_text[text] - {owner}))
        holders = set.intersection(*(postings[w] for w in ws)) if ws else everyone
        contained.append(len({owners[k] for k in holders} - {owner}))
    return {"identical": identical, "contained": contained}


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def fold_law(m: int, others: int, draws: int) -> tuple[float, float, float]:
    """For a caption with ``m`` matching regions among ``others``, its fold holding ``draws`` of them at random:
    (P(F >= 1), E[F], E[1 / (1 + F)]), F hypergeometric."""
    if m == 0 or draws == 0:
        return 0.0, 0.0, 1.0
    total = _log_comb(others, draws)
    pmf = [math.exp(_log_comb(m, f) + _log_comb(others - m, draws - f) - total)
           for f in range(max(0, draws - (others - m)), min(m, draws) + 1)]
    support = range(max(0, draws - (others - m)), min(m, draws) + 1)
    p_none = pmf[0] if support[0] == 0 else 0.0
    return 1.0 - p_none, m * draws / others, float(sum(p / (1 + f) for p, f in zip(pmf, support)))


def table(sets: dict[int, list], fold_size: int = raw.FOLD_SIZE["productivity"]) -> pd.DataFrame:
    """One row per complexity and kind: the raw set's regions and captions, the fold size used, the share of
    captions with a match in the whole set and, in a random fold, the share that meets one, the mean count met,
    and the text-set Recall@1 ceiling (all in %, counts as numbers)."""
    rows = []
    for n, items in sorted(sets.items()):
        size = min(fold_size, len(items))
        found = matches(items)
        for kind in KINDS:
            m = np.array(found[kind])
            laws = [fold_law(int(x), len(items) - 1, size - 1) for x in m]
            rows.append({"complexity": n, "kind": kind, "n_regions": len(items), "n_captions": len(m),
                         "fold_size": size, "whole_set": size < fold_size,
                         "share_in_set": 100.0 * float(np.mean(m > 0)),
                         "share_in_fold": 100.0 * float(np.mean([p for p, _, _ in laws])),
                         "mean_in_fold": float(np.mean([e for _, e, _ in laws])),
                         "ceiling_r1": 100.0 * float(np.mean([c for _, _, c in laws]))})
    return pd.DataFrame(rows)


def figure(tab: pd.DataFrame, evaluated: pd.DataFrame | None = None, title: str = "CREPE's released captions"):
    """Left: the share of captions that meet a textual false negative in a fold, by complexity and kind; right:
    the Recall@1 ceiling it implies, with evaluated raw-set Recall@1 (text to image, folds' mean ± sd) where given.
    The axes fit the values (the shares are small on CREPE's captions)."""
    fig, axes = plt.subplots(2, 1, figsize=(7.2, 8.4))
    styles = {"identical": dict(marker="o", color="#4C72B0"), "contained": dict(marker="s", color="#DD8452")}
    for kind in KINDS:
        d = tab[tab["kind"] == kind]
        axes[0].plot(d["complexity"], d["share_in_fold"], label=KIND_LABELS[kind], **styles[kind])
        axes[1].plot(d["complexity"], d["ceiling_r1"], label=f"ceiling: {kind}", ls="--", **styles[kind])
    whole = tab[tab["whole_set"]]["complexity"].unique()
    for n in whole:
        for ax in axes:
            ax.axvspan(n - 0.4, n + 0.4, color="grey", alpha=0.12, lw=0)
    if evaluated is not None and not evaluated.empty:
        for model, d in evaluated.groupby("display", sort=True):
            d = d.sort_values("complexity")
            axes[1].errorbar(d["complexity"], d["r1"], yerr=d["r1_std"].fillna(0), capsize=2, lw=1.2,
                             label=f"evaluated: {model}")
    n_fold = int(tab["fold_size"].max())
    top = max(1.0, 1.25 * float(tab["share_in_fold"].max()))
    shown = evaluated is not None and not evaluated.empty
    floor = 0.0 if shown else max(0.0, math.floor(float(tab["ceiling_r1"].min())) - 1.0)
    axes[0].set(xlabel="complexity n", ylabel="% of captions", ylim=(0, top),
                title=f"captions meeting a textual false negative\nin a random fold of {n_fold:,} regions")
    axes[1].set(xlabel="complexity n", ylabel="Recall@1 (%)", ylim=(floor, 100.5 if not shown else 102),
                title="text-to-image Recall@1 the text allows")
    for ax in axes:
        ax.set_xticks(sorted(tab["complexity"].unique()))
        ax.legend(fontsize=9, loc="lower right" if ax is axes[1] else "upper right")
    note = "\n(shaded: the set is smaller than a fold; the whole set is the fold)" if len(whole) else ""
    fig.suptitle(f"{title}: the false negatives CREPE app. B.2 blames{note}", fontweight="bold", fontsize=11)
    fig.tight_layout()
    return fig


def sentence(tab: pd.DataFrame, source: str = "the released captions") -> str:
    """What the table says about app. B.2's explanation, every number from ``tab`` (``source``: whose captions)."""
    d = tab[tab["kind"] == "contained"].sort_values("complexity")
    i = tab[tab["kind"] == "identical"].sort_values("complexity")
    lo, hi = d.iloc[0], d.iloc[-1]
    delta = hi["share_in_fold"] - lo["share_in_fold"]
    falls, rises = delta <= -FLAT_POINTS, delta >= FLAT_POINTS
    trend = np.corrcoef(d["complexity"], d["share_in_fold"])[0, 1] if len(d) > 2 else float("nan")
    direction = "falls" if falls else "rises" if rises else f"stays within {prose.num(FLAT_POINTS, 0)} point"
    whole = [int(n) for n in d[d["whole_set"]]["complexity"]]
    caveat = (f" At n = {prose.listing([str(n) for n in whole])} the set has fewer regions than a fold, so "
              "the whole set stands for one." if whole else "")
    verdict = ("as the explanation needs" if falls else "the opposite of what the explanation needs" if rises else
               "too little to explain a rise")
    return (f"CREPE app. B.2 reports that raw-set Recall@1 rises with complexity and attributes it to simple captions "
            f"being true of several images. In {source}, the share of captions whose content words lie "
            f"within another region's caption in a random fold {direction} from {prose.num(lo['share_in_fold'], 1)}% "
            f"at n = {int(lo['complexity'])} to {prose.num(hi['share_in_fold'], 1)}% at n = {int(hi['complexity'])} "
            f"(Pearson r over n = {prose.num(trend)}), {verdict}. The text-to-image Recall@1 this leaves a model that "
            f"tells every other image apart but not these goes from {prose.num(lo['ceiling_r1'], 1)}% to "
            f"{prose.num(hi['ceiling_r1'], 1)}%: on this account {prose.num(hi['ceiling_r1'] - lo['ceiling_r1'], 1)} "
            f"points of a rise from n = {int(lo['complexity'])} to n = {int(hi['complexity'])}. "
            f"Word-for-word duplicates are rarer: {prose.span(i['share_in_fold'], 1)}% of captions a complexity."
            f"{caveat}")


def evaluated_raw(results_dir) -> pd.DataFrame:
    """The folds' mean text-to-image Recall@1 of every productivity raw-set result under ``results_dir`` (empty when
    none; systematicity's raw sets have no complexity to draw against)."""
    rows = raw.read_raw(results_dir)
    return rows[(rows["fold"].astype(str) == raw.MEAN) & (rows["direction"] == "text_to_image")
                & (rows["benchmark"] == "raw-productivity")].reset_index(drop=True)


def evaluated_sentence(evaluated: pd.DataFrame) -> str:
    """Each evaluated model's raw-set text-to-image Recall@1 (folds' mean) at the lowest and highest complexity."""
    parts = []
    for model, d in evaluated.groupby("display", sort=True):
        d = d.sort_values("complexity")
        lo, hi = d.iloc[0], d.iloc[-1]
        parts.append(f"{model} ({lo['kind']}) {prose.change(hi['r1'] - lo['r1'], 'rises', 'falls', 'stays', nd=1)} from "
                     f"{prose.num(lo['r1'], 1)}% at n = {int(lo['complexity'])} to {prose.num(hi['r1'], 1)}% at n = "
                     f"{int(hi['complexity'])} (K = {int(lo['n_folds'])} folds of {int(lo['fold_size']):,})")
    return "Evaluated raw-set text-to-image Recall@1 (folds' mean): " + "; ".join(parts) + "."
