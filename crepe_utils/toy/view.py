"""Notebook 06's figures and sentences: the toy world (synthetic; never comparable to the paper's numbers)."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from PIL import Image

from ..benchmarks.crepe import reported
from ..analysis import prose
from ..analysis.reporting import HN_LABELS, panel_grid
from ..lazy import lazy

pd = lazy("pandas")

SC_COLOR, UC_COLOR = "#4C72B0", "#DD8452"


def world_summary(world: dict) -> str:
    vocab, compounds, counts = world["vocabulary"], world["compounds"], world["counts"]
    return (f"- objects: {', '.join(vocab['objects'])}\n"
            f"- attributes: {', '.join(vocab['attributes']['colour'])} (colour); "
            f"{', '.join(vocab['attributes']['size'])} (size)\n"
            f"- relations: {', '.join(vocab['relations'])}\n"
            f"- compounds: {compounds['n_possible']} possible, {compounds['n_seen_in_training']} seen in training; "
            f"held out: **{', '.join(compounds['held_out'])}** (with converses: "
            f"{len(compounds['held_out_with_converses'])})\n"
            f"- training: {counts['train']['scenes']:,} scenes, {counts['train']['captions']:,} captions; "
            f"test: systematicity {counts['systematicity']['SC']} SC + {counts['systematicity']['UC']} UC queries, "
            f"productivity n = {min(int(n) for n in counts['productivity']['atom'])}…"
            f"{max(int(n) for n in counts['productivity']['atom'])}")


def examples_figure(queries: list, image_dir: Path):
    """One query per split × HN type: the image, its caption (✔) and three hard negatives (✘)."""
    fig, axes = panel_grid(len(queries), 7.2, 4.6, 0.6)
    for ax, q in zip(axes.flat, queries):
        ax.imshow(Image.open(next(image_dir.rglob(f"{q.image_id}.jpg"))))
        ax.set_axis_off()
        text = f"✔ {q.positive}\n" + "\n".join(f"✘ {n}" for n in q.negatives[:3])
        ax.set_title(f"{q.split}, HN-{q.hn_type.capitalize()}", fontsize=10)
        ax.text(0.5, -0.04, text, transform=ax.transAxes, ha="center", va="top", fontsize=9)
    # the title is also the book's caption: words, not the ✔/✘ glyphs that fonts without symbols draw as boxes
    fig.suptitle("Toy-world queries: under each image its caption (first line)\nand three hard negatives, each checked "
                 "against the scene", fontweight="bold")
    fig.tight_layout()
    return fig


def loss_figure(log: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.plot(log["step"], log["loss"], lw=0.6, alpha=0.5, color=SC_COLOR)
    ax.plot(log["step"], log["loss"].rolling(50, min_periods=1).mean(), color=SC_COLOR)
    ax.set(xlabel="step", ylabel="contrastive loss", title="Training loss (open_clip's ClipLoss)")
    return fig


def training_sentence(model_stage: dict, log: pd.DataFrame) -> str:
    return (f"{model_stage['train_pairs']:,} image-caption pairs, {len(log):,} steps in {model_stage['seconds']:.0f} s "
            "(on this machine); on held-out validation scenes (seen compounds) the model picks the right caption "
            f"among {model_stage['val_k']} candidates in {100 * model_stage['val_accuracy']:.1f}% of them (chance "
            f"{100 * model_stage['val_chance']:.0f}%).")


def systematicity_figure(ev: pd.DataFrame):
    """SC and UC Recall@1 per HN set with 95% bootstrap intervals; chance dashed."""
    order = [h for h in ["atom", "comp", "combined"] if h in set(ev["hn_type"])]
    d = ev.set_index("hn_type").loc[order]
    x = np.arange(len(d))
    fig, ax = plt.subplots(figsize=(7, 3))
    for dx, split, color, label in ((-0.18, "SC", SC_COLOR, "SC (seen)"), (0.18, "UC", UC_COLOR, "UC (unseen)")):
        ax.bar(x + dx, d[split], 0.36, yerr=[d[split] - d[f"{split}_ci_low"], d[f"{split}_ci_high"] - d[split]],
               label=label, color=color, capsize=3)
    for xi, c in zip(x, d["chance"]):
        ax.hlines(c, xi - 0.4, xi + 0.4, color="black", ls="--", lw=1)
    ax.set_xticks(x, [HN_LABELS[h] for h in order])
    ax.set(ylabel="Recall@1 (%), 95% CI", title="Toy world: seen vs unseen compounds (dashed: chance)")
    ax.legend()
    return fig


def productivity_figure(prod: pd.DataFrame):
    types = [t for t in ["atom", "swap", "negate", "all"] if t in set(prod["hn_type"])]
    fig, axes = panel_grid(len(types), 7.2, 3.2, 0.8, sharey=True)
    for ax, t in zip(axes.flat, types):
        g = prod[prod["hn_type"] == t].sort_values("complexity")
        ax.plot(g["complexity"], g["r1"], "-o", color=UC_COLOR, ms=3)
        ax.fill_between(g["complexity"].astype(float), g["r1_ci_low"], g["r1_ci_high"], color=UC_COLOR, alpha=0.2)
        ax.plot(g["complexity"], g["chance_r1"], color="grey", ls="--", lw=1)
        ax.set(title=HN_LABELS[t], xlabel="complexity n", xticks=sorted(set(prod["complexity"].astype(int))))
    for ax in axes[:, 0]:
        ax.set_ylabel("Recall@1 (%), 95% CI")
    fig.suptitle("Toy world: Recall@1 against caption complexity\n(dashed: chance)", fontweight="bold")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ sentences

def negatives_sentence() -> str:
    c = reported.claims().set_index("claim_id")["value"].astype(float)
    return ("Every caption is generated from the scene graph and every hard negative is **verified false** for its "
            "image by a semantic checker, so there are no accidental positives among the negatives here. On the "
            f"real benchmark annotators judged {prose.num(c['hn_genuine_syst'], 1)}% of systematicity and "
            f"{prose.num(c['hn_genuine_prod'], 1)}% of productivity hard negatives genuine (§4.3), and about "
            f"{prose.num(c['hn_correct_swap_neg'], 0)}% of HN-Swap and HN-Neg ones correct (§6).")


def swap_start_sentence(prod: pd.DataFrame) -> str:
    first = int(prod.loc[prod["hn_type"] == "swap", "complexity"].min()) if (prod["hn_type"] == "swap").any() else None
    real = reported.released_productivity_queries()[("swap", 4)]
    return ("The productivity sets pair each image with captions of n atoms and five hard negatives of one type "
            "(HN-Atom, HN-Swap, HN-Neg), plus the 16-candidate set with all three (app. B.3). "
            + (f"HN-Swap starts at n = {first} here: a 4-atom caption of this world cannot be permuted into five "
               f"different false captions (the real benchmark's HN-Swap file at n = 4 holds only {real} queries)."
               if first and first > 4 else ""))


def gap_sentence(ev: pd.DataFrame) -> str:
    """Each HN set's UC − SC with its interval, and whether the interval excludes 0."""
    parts = []
    for r in ev.set_index("hn_type").reindex(["atom", "comp", "combined"]).dropna(subset=["delta"]).itertuples():
        verdict = ("excludes 0: a measured gap" if r.delta_ci_high < 0 or r.delta_ci_low > 0 else
                   "includes 0: no gap can be claimed at this sample size")
        parts.append(f"**{HN_LABELS[r.Index]}: UC − SC = {prose.num(r.delta, 1, signed=True)} points**, 95% CI "
                     f"{prose.interval(r.delta_ci_low, r.delta_ci_high, 1, signed=True)}, which {verdict}")
    return "; ".join(parts) + "."


def _curve_words(g: pd.DataFrame) -> str:
    g = g.sort_values("complexity")
    a, b = g.iloc[0], g.iloc[-1]
    includes = ((g["r1_ci_low"] <= g["chance_r1"]) & (g["chance_r1"] <= g["r1_ci_high"]))
    below = g["r1_ci_high"] < g["chance_r1"]
    return (f"{prose.num(a['r1'], 1)} at n = {int(a['complexity'])} and {prose.num(b['r1'], 1)} at n = "
            f"{int(b['complexity'])}; the interval includes chance at {prose.count(includes.sum())} of "
            f"{prose.count(len(g))} lengths and lies below it at {prose.count(below.sum())}")


def summary(ev: pd.DataFrame, prod: pd.DataFrame) -> str:
    """The closing paragraph, from the tables above, with the paper's direction beside the toy model's."""
    pub = reported.systematicity_wide()
    d = ev.set_index("hn_type")
    changes = [f"{prose.num(r.delta, 1, signed=True)} points on {HN_LABELS[r.Index]}" for r in
               d.reindex(["atom", "comp", "combined"]).dropna(subset=["delta"]).itertuples()]
    excl = (d["delta_ci_high"] < 0) | (d["delta_ci_low"] > 0)
    text = (f"**What this shows.** On held-out compounds the toy model's Recall@1 changes by {prose.listing(changes)} "
            f"({prose.how_many(excl, 'interval')} exclude 0). ")
    for hn in ("atom", "comp"):
        if hn not in d.index:
            continue
        toy_down = d.loc[hn, "delta"] < 0
        paper = pub[pub["hn_type"] == hn]
        same = (paper["delta"] < 0) == toy_down
        text += (f"On {HN_LABELS[hn]} its change has the sign of the published change for "
                 f"{prose.how_many(same, 'paper model')}. ")
    for t in ("atom", "swap", "negate", "all"):
        g = prod[prod["hn_type"] == t]
        if len(g):
            text += f"{HN_LABELS[t]} productivity: {_curve_words(g)}. "
    return text + ("None of these numbers is comparable to the paper's: they describe a tiny model trained for "
                   "minutes on synthetic shapes, with every compound's presence in training known.")


def try_next(world: dict) -> str:
    """What to vary next, each a parameter; the held-out example is built from this world's vocabulary."""
    v = world["vocabulary"]
    objs, rels = v["objects"], v["relations"]
    relations_only = f"{objs[0]} {rels[2]} {objs[1]},{objs[2]} {rels[0]} {objs[3]}"
    held = world["compounds"]["held_out"]
    triples = [c for c in held if any(f" {r} " in f" {c} " for r in rels)]
    default = (f"{prose.count(len(held) - len(triples))} attribute–object pairs and {prose.count(len(triples))} "
               "relation triples")
    return ("Things to try, each a parameter of this notebook (or of `python -m crepe_utils toy`), recomputing only "
            "what it affects:\n\n"
            "* **more training** (`steps`) or **more data** (`train_scenes`): does the SC→UC gap shrink as the model "
            "gets better, or only the overall level rise?\n"
            f"* **other held-out compounds** (`held_out`): this world holds out {default}; `held_out=\"{relations_only}\"` holds out relation triples only, which asks whether "
            "the model composes relations;\n"
            "* **another seed** (`seed`): how much of the gap is the draw of one world and one training run?")
