"""Notebook 07's sentences, built from the tables it shows: every number and every direction in them is computed.

Each function takes the tables of :mod:`crepe_utils.across.blind` (and the published ones) and returns
Markdown; a sentence whose direction depends on the numbers ("beats", "falls") is chosen by them, so a
test can hand a function other numbers and read another sentence.
"""
from __future__ import annotations

import math

from .. import blind
from ..analysis.reporting import HN_LABELS
from ..lazy import lazy

pd = lazy("pandas")

#: SugarCrepe's subsets whose negatives add words, and those whose negatives replace or swap them.
ADD = ("add_att", "add_obj")
REPLACE_SWAP = ("replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj")


def pct(row, digits: int = 1) -> str:
    """``r1`` with its 95% interval, from a row with ``r1``, ``ci_low``, ``ci_high``."""
    return f"{row['r1']:.{digits}f}% [{row['ci_low']:.{digits}f}, {row['ci_high']:.{digits}f}]"


def _span(values: pd.Series) -> str:
    lo, hi = float(values.min()), float(values.max())
    return f"{lo:.1f}%" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}-{hi:.1f}%"


def _beats(value: float, other: float) -> str:
    return "above" if value > other else "equal to" if value == other else "below"


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


def productivity(recall: pd.DataFrame, published: pd.DataFrame) -> str:
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
                   f"{top['group']}), {_beats(top['r1'], top['chance_r1'])} chance ({top['chance_r1']:.1f}%).")
    bigram = other[other["scorer"] == "bigram"]
    if len(bigram):
        sure = int((bigram["ci_low"] > bigram["chance_r1"]).sum())
        out.append(f"The cross-fitted bigram, which has learnt what true captions look like, gets "
                   f"{_span(bigram['r1'])} on these {len(bigram)} files, the lower end of its 95% interval above "
                   f"chance on {sure} of them.")
    return " ".join(out)


def _share_sentence(explains: pd.DataFrame, where: pd.Series, label: str, scorer: str = "bigram") -> str:
    g = explains[where & (explains["scorer"] == scorer)]
    return (f"{label}: {_span(g['length_share'])} of `blind:{scorer}`'s wins are also the length rule's, which "
            f"alone is right on {_span(g['length_r1'])}")


def _delta_sentence(explains: pd.DataFrame, where: pd.Series, label: str) -> str:
    wide = explains[where].pivot_table(index="group", columns="scorer", values="r1", sort=False)
    delta = wide["bigram-mean"] - wide["bigram"]
    lo, hi = delta.idxmin(), delta.idxmax()
    return f"{label} {delta[lo]:+.1f} ({lo}) to {delta[hi]:+.1f} ({hi}) points"


def length(crepe: pd.DataFrame | None, sugarcrepe: pd.DataFrame | None) -> str:
    """The length measure (:func:`~crepe_utils.across.blind.length_explains`), why it, and what it shows."""
    present = [t.assign(benchmark=name) for name, t in (("crepe", crepe), ("sugarcrepe", sugarcrepe)) if t is not None]
    if not present:
        return ""
    both = pd.concat(present, ignore_index=True)
    per_file = both.drop_duplicates(["benchmark", "group"])
    neg = (both["benchmark"] == "crepe") & (both["hn_type"] == "negate")
    add = (both["benchmark"] == "sugarcrepe") & both["group"].isin(ADD)
    rest = ~neg & ~add
    why = []
    for mask, label in ((neg, "the HN-Neg files"), (add, "the ADD subsets")):
        files = per_file[mask.loc[per_file.index]]
        if len(files):
            why.append(f"{int(files['n_length_balanced'].sum()):,} of {int(files['n_queries'].sum()):,} queries of "
                       f"{label}")
    out = ["**How much of a score is length?** For each scorer and file: of the queries it ranks first, the share "
           "that `blind:length` (*pick the shortest caption*) ranks first too, the part of its Recall@1 that length "
           "alone could have produced."]
    if why:
        out.append("The alternative, Recall@1 on the length-balanced queries (every candidate as long as the "
                   "positive), is undefined or rests on a handful exactly where length matters: "
                   + "; ".join(why) + " are length-balanced.")
    for mask, label in ((neg, "HN-Neg"), (add, "SugarCrepe's ADD subsets")):
        if mask.any():
            out.append(_share_sentence(both, mask, label) + ".")
    if {"bigram", "bigram-mean"} <= set(both["scorer"]):
        parts = [_delta_sentence(both, mask, label) for mask, label in
                 ((add, "on the ADD subsets by"), (neg, "on HN-Neg by"), (rest, "on every other file by")) if mask.any()]
        out.append("A share near the rule's own Recall@1 says only that the file cannot tell a scorer's wins from "
                   "length's. The length-normalised bigram, `blind:bigram-mean`, answers directly: against the total "
                   "it changes Recall@1 " + "; ".join(parts) + ".")
    return " ".join(s for s in out if s)


def sugarcrepe(recall: pd.DataFrame, published: pd.DataFrame) -> str:
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
                   f"grammar model, score {_span(adversaries['r1'])} on them (published, diamonds): what a model of "
                   "plausible captions learns from the benchmark's own captions survives that filter.")
    mean = recall[(recall["scorer"] == "bigram-mean") & recall["group"].isin(rows.index)]
    if len(mean):
        out.append(f"Without its length penalty (`blind:bigram-mean`) it gets {_span(mean['r1'])} there.")
    shorter = recall[(recall["scorer"] == "length") & recall["group"].isin(ADD)]
    if len(shorter):
        out.append("On the ADD subsets, where the negative adds an object or attribute, *pick the shorter caption* is "
                   "right on " + " and ".join(f"{pct(r)} ({r['group']})" for _, r in shorter.iterrows()) + ".")
    return " ".join(out)


def winoground(table: pd.DataFrame) -> str:
    """Why Winoground gets no panel: every score is 0, with the ties that decide it."""
    n = int(table["examples"].iloc[0])
    top = float(table["score"].max())
    text = table[table["metric"] == "text"]
    image = table[table["metric"] == "image"]
    return (f"**Winoground**: the highest text, image or group score of the {table['scorer'].nunique()} scorers is "
            f"{top:.1f}% on {n} examples, so there is nothing to draw. A text-only score gives both images the same "
            f"numbers: the image score's comparisons tie on {_count_span(image['ties'])} of {n} examples per scorer, "
            "and the text score would need each caption to score above the other (tied captions: "
            f"{_count_span(text['ties'])} per scorer).")


def _count_span(values: pd.Series) -> str:
    lo, hi = int(values.min()), int(values.max())
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


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
        sides = {_beats(at.loc[("blind:length", "comp", s), "r1"], at.loc[(model, "comp", s), "r1"]) for s in ("SC", "UC")}
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


def closing(crepe: pd.DataFrame | None, sugarcrepe: pd.DataFrame | None, winoground: pd.DataFrame | None,
            toy: pd.DataFrame | None, published: pd.DataFrame) -> str:
    """The notebook's closing paragraph, one sentence per table present."""
    out = ["**What this shows.** A score is evidence that a model looked only where a scorer that cannot look does "
           "worse."]
    if crepe is not None:
        rule = crepe[(crepe["scorer"] == "negation") & (crepe["hn_type"] == "negate")]
        best = published[published["hn_type"] == "negate"]["r1"].max()
        out.append(f"On CREPE's HN-Neg a one-line rule, *prefer the caption with fewer \"no\"s and \"not\"s*, gets "
                   f"{_span(rule['r1'])} at every complexity, {_beats(rule['r1'].min(), best)} the best published "
                   f"model at any complexity ({best:.2f}%): read HN-Neg results as a test of the text encoder's "
                   "treatment of \"no\", and compare models on the blind-hard subset.")
        bigram = crepe[(crepe["scorer"] == "bigram") & crepe["hn_type"].isin(("atom", "swap"))]
        out.append(f"On HN-Atom and HN-Swap a bigram model of other images' captions gets {_span(bigram['r1'])} "
                   f"against chance {bigram['chance_r1'].mean():.1f}%: part of what a model scores there is the "
                   "plausibility of the text, not grounding.")
    if sugarcrepe is not None:
        rows = sugarcrepe[(sugarcrepe["scorer"] == "bigram") & sugarcrepe["group"].isin(REPLACE_SWAP)]
        shorter = sugarcrepe[(sugarcrepe["scorer"] == "length") & sugarcrepe["group"].isin(ADD)]
        out.append(f"SugarCrepe's adversarial filtering leaves a text cue on REPLACE and SWAP (the bigram "
                   f"{_span(rows['r1'])}, its interval above chance on {int((rows['ci_low'] > rows['chance_r1']).sum())} "
                   f"of {len(rows)}) and a length cue on ADD (*pick the shorter caption* {_span(shorter['r1'])}).")
    if winoground is not None:
        out.append(f"Winoground cannot be solved this way: no blind score exceeds {winoground['score'].max():.1f}%.")
    if toy is not None and len(toy):
        comp = toy[(toy["model"] == "blind:length") & (toy["hn_type"] == "comp")]
        out.append(f"In a synthetic world whose HN-Comp is built as CREPE builds it, *pick the shorter caption* gets "
                   f"{_span(comp['r1'])} on HN-Comp.")
    if len(out) == 1:
        out.append("This run has none of the benchmarks' texts, so it shows the published text-only numbers only.")
    return " ".join(out)
