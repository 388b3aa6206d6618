"""SugarCrepe (Hsieh et al., NeurIPS 2023 D&B, arXiv 2306.14610) beside CREPE: notebook 08's tables.

``published_matrix``    the results table as models × subsets, in the paper's order
``correlation_inputs``  the table's CLIP rows with their ImageNet zero-shot top-1
``correlation_table``   per subset: the Pearson r recomputed beside the printed one
``released_subsets``    the released JSONs: pairs per subset and one example each (None without them)
``evaluated_table``     evaluated SugarCrepe results beside the published R@1, with ties and intervals
``published_long``      the results table one value a row, with N, k and the exact 95% interval
``*_sentence``, ``summary``  notebook 08's prose, rendered from these tables

The figures are in :mod:`crepe_utils.benchmarks.sugarcrepe.figures`; the claims that check these numbers
in :mod:`crepe_utils.benchmarks.sugarcrepe.claims`.
"""
from __future__ import annotations

import numpy as np

from ... import escaping, paths
from . import reported
from ...models.imagenet import top1 as imagenet_top1
from ...errors import DataError, error_line
from ...results import store
from ...analysis import prose, uncertainty
from . import SUBSETS, load_pairs
from .datasets import SUGARCREPE_JSONS
from ...lazy import lazy

pd = lazy("pandas")

#: The results table's column order: REPLACE, SWAP, ADD.
SUBSET_ORDER = ("replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att", "add_obj", "add_att")
#: How the paper heads each column.
SUBSET_LABELS = {s: f"{s.split('_')[0].upper()} {s.split('_')[1]}" for s in SUBSET_ORDER}
#: the ImageNet accuracies the correlation is recomputed with: the only source that has all 17 models
IMAGENET_SOURCE = "open_clip_results_table"
#: How to produce evaluated results (COCO val2017 images and the JSONs first).
HOW_TO_EVALUATE = ("fetch SugarCrepe's JSONs (`make data-sugarcrepe`) and its images, COCO val2017 (`make data-coco`, "
                   "816 MB), then run {command} (`--model`: any of the table's 17 keys that `python -m crepe_utils "
                   "models` lists, or an open_clip architecture with `--pretrained`)")
EVALUATE_COMMAND = "python -m crepe_utils evaluate --benchmark sugarcrepe --model openai-vit-b-32 --out {results_dir}"
_TEXT_ONLY = {"vera": "Vera (text only)", "grammar": "Grammar (text only)", "human": "Human"}


def row_label(group: str, model: str) -> str:
    """A row's name as the paper's table prints it ("OpenAI RN50", "LAION ViT-H-14", "Human")."""
    return _TEXT_ONLY.get(model, f"{group} {model}")


def published_matrix(published: pd.DataFrame | None = None) -> pd.DataFrame:
    """Recall@1 (%) per row of the results table (``group`` first) × subset, rows in the table's order."""
    published = published if published is not None else reported.results()
    df = published.assign(row=[row_label(g, m) for g, m in zip(published["group"], published["model"])])
    order = list(dict.fromkeys(df["row"]))
    matrix = df.pivot_table(index="row", columns="subset", values="r1", sort=False).reindex(order)
    matrix = matrix[[s for s in SUBSET_ORDER if s in matrix.columns]]
    matrix.insert(0, "group", df.drop_duplicates("row").set_index("row")["group"].reindex(order))
    matrix.index.name = "model"
    return matrix


def correlation_inputs(published: pd.DataFrame | None = None,
                       imagenet: pd.Series | None = None) -> pd.DataFrame:
    """The CLIP rows of the results table (those with an ``imagenet_model``) with their ImageNet top-1."""
    published = published if published is not None else reported.results()
    imagenet = imagenet if imagenet is not None else imagenet_top1(IMAGENET_SOURCE)
    clip = published[published["imagenet_model"].astype(str).str.len() > 0].copy()
    clip["imagenet_top1"] = clip["imagenet_model"].map(imagenet)
    return clip


def _pearson(g: pd.DataFrame) -> float:
    return float(np.corrcoef(g["imagenet_top1"], g["r1"])[0, 1]) if len(g) > 2 else float("nan")


def correlation_table(inputs: pd.DataFrame | None = None, published_r: pd.DataFrame | None = None,
                      min_imagenet: float = 50.0) -> pd.DataFrame:
    """Per subset: models with an ImageNet top-1, the Pearson r recomputed, the paper's as printed, the gap, and
    the r over the models with an ImageNet top-1 of at least ``min_imagenet`` (the fit without its low outliers)."""
    inputs = inputs if inputs is not None else correlation_inputs()
    published_r = published_r if published_r is not None else reported.imagenet_r()
    rows = []
    for r in published_r.itertuples():
        g = inputs[(inputs["subset"] == r.subset) & inputs["imagenet_top1"].notna()]
        high = g[g["imagenet_top1"] >= min_imagenet]
        rows.append({"subset": r.subset, "n_models": len(g), "pearson_r": _pearson(g),
                     "paper_r": f"{float(r.pearson_r):.{int(r.decimals)}f}",
                     "difference": _pearson(g) - float(r.pearson_r),
                     f"n_imagenet_{min_imagenet:g}plus": len(high), f"pearson_r_imagenet_{min_imagenet:g}plus":
                     _pearson(high)})
    rank = {s: i for i, s in enumerate(SUBSET_ORDER)}
    return pd.DataFrame(rows).sort_values("subset", key=lambda c: c.map(rank), kind="stable").reset_index(drop=True)


def released_subsets(data_dir=None) -> tuple[pd.DataFrame | None, str]:
    """(pairs per subset with its first pair as an example, a sentence saying where they come from);
    (None, a sentence saying what is missing and how to get it) without the seven JSONs."""
    root = SUGARCREPE_JSONS.dir(data_dir)
    present = [s for s in SUBSETS if (root / f"{s}.json").is_file()]
    how = "`make data-sugarcrepe` (or `make data-text`) fetches them, 1.7 MB"
    if len(present) < len(SUBSETS):
        what = "No SugarCrepe JSONs" if not present else f"Only {len(present)} of {len(SUBSETS)} SugarCrepe JSONs"
        return None, (f"**{what} in** {escaping.code(paths.shown(root))}: {how}. Missing here: the released pairs and the count "
                  "check. The sections below use published numbers only.")
    try:
        pairs = load_pairs(root).by_subset()
    except DataError as exc:
        return None, f"**SugarCrepe's JSONs in** {escaping.code(paths.shown(root))} **cannot be read** ({escaping.markdown_message(error_line(exc))}); {how}."
    rows = [{"subset": s, "pairs": len(pairs[s]), "image": pairs[s][0].image_id,
             "positive": pairs[s][0].positive, "negative": pairs[s][0].negative} for s in SUBSET_ORDER]
    total = sum(r["pairs"] for r in rows)
    return pd.DataFrame(rows), f"SugarCrepe's JSONs from {escaping.code(paths.shown(root))}: {total:,} pairs in {len(rows)} subsets."


def evaluated_table(results, published: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each evaluated SugarCrepe subset (``results``: a results folder or the table loaded from one) beside the
    published R@1 of the same checkpoint (NaN for a model outside the table), with ties and the 95% interval."""
    df = results if isinstance(results, pd.DataFrame) else store.load_results(results)
    df = df[df["benchmark"] == "sugarcrepe"]
    published = published if published is not None else reported.results()
    pub = published[published["imagenet_model"].astype(str).str.len() > 0]
    pub = pub.set_index(["imagenet_model", "subset"])["r1"]
    columns = ["model", "display", "kind", "subset", "n_queries", "n_skipped", "r1", "r1_ci_low", "r1_ci_high",
               "n_tied_queries", "r1_optimistic", "published_r1", "difference"]
    if df.empty:
        return pd.DataFrame(columns=columns)
    out = df.rename(columns={"hn_type": "subset"}).copy()
    out["published_r1"] = [pub.get((m, s), np.nan) for m, s in zip(out["model"], out["subset"])]
    out["difference"] = out["r1"] - out["published_r1"]
    rank = {s: i for i, s in enumerate(SUBSET_ORDER)}
    out = out.assign(_rank=out["subset"].map(rank)).sort_values(["model", "kind", "_rank"], kind="stable")
    return out[columns].reset_index(drop=True)


def no_results_sentence(results_dir) -> str:
    """What to say when ``results_dir`` holds no SugarCrepe results, and how to get them."""
    return (f"_No evaluated SugarCrepe results in_ {escaping.code(results_dir)}. To get them: "
            + HOW_TO_EVALUATE.format(command=escaping.code(EVALUATE_COMMAND.format(results_dir=results_dir)))
            + "; this notebook then shows them beside the published numbers.")


# ------------------------------------------------------------------ intervals and sentences (notebook 08)

def published_counts() -> dict[str, int]:
    """Pairs per subset that the published table was computed on: the pinned release, or the earlier file where
    the release later lost a pair (the granularity check establishes which)."""
    pinned = reported.released_counts()
    return {s: int(pinned.get(f"pairs_before_546eb51:{s}", pinned[f"pairs:{s}"])) for s in SUBSET_ORDER}


def published_long(published: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (row of the table, subset): R@1, N, k and its exact 95% interval (none for the human row, printed
    in whole percents from another count)."""
    published = published if published is not None else reported.results()
    counts = published_counts()
    out = published[["group", "model", "subset", "r1", "decimals", "imagenet_model"]].copy()
    out["row"] = [row_label(g, m) for g, m in zip(out["group"], out["model"])]
    out["N"] = [np.nan if m == "human" else counts[s] for m, s in zip(out["model"], out["subset"])]
    return uncertainty.with_intervals(out)


def correlation_inputs_with_intervals(long: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`correlation_inputs` with each R@1's N and exact 95% interval (from :func:`published_long`)."""
    long = long if long is not None else published_long()
    keep = long[["model", "subset", "N", "r1_ci_low", "r1_ci_high"]]
    return correlation_inputs().merge(keep, on=["model", "subset"], how="left")


def table_sentence(long: pd.DataFrame) -> str:
    """What the results table shows, with the spans it rests on and their intervals."""
    def rows(group):
        return long[long["group"] == group]
    vera, grammar = long[long["model"] == "vera"], long[long["model"] == "grammar"]
    human = rows("Human")
    clip = long[long["imagenet_model"].astype(str).str.len() > 0]
    obj = clip[clip["subset"] == "replace_obj"]
    hard = clip[clip["subset"].isin(["replace_rel", "swap_obj", "swap_att"])]
    small = clip[clip["model"] == clip.loc[clip["r1"].idxmin(), "model"]]
    at_chance = (small["r1_ci_low"] <= 50) & (50 <= small["r1_ci_high"])
    return (f"The two text-only rows sit at chance: Vera {prose.span(vera['r1'], sep='–')}, the grammar model "
            f"{prose.span(grammar['r1'], sep='–')}; that is what the adversarial refinement was built to achieve, and "
            "it is guaranteed for these two scorers only. Humans score "
            f"{prose.span(human['r1'], 0, sep='–')}. Among the {clip['model'].nunique()} CLIP models, REPLACE-obj "
            f"reaches {prose.num(obj['r1'].max())} ({obj.loc[obj['r1'].idxmax(), 'row']}), while REPLACE-rel and "
            f"both SWAP subsets stay between {prose.num(hard['r1'].min())} and {prose.num(hard['r1'].max())} for each "
            f"model. {small['row'].iloc[0]}'s exact interval includes chance on {prose.count(at_chance.sum())} of "
            f"{prose.count(len(small))} subsets (R@1 {prose.span(small['r1'], sep='–')}). With {min(published_counts().values())} to "
            f"{prose.count(max(published_counts().values()))} pairs per subset, a published R@1 near 75 carries an "
            f"exact 95% interval of about ±{_half_width(75, max(published_counts().values()))} to "
            f"±{_half_width(75, min(published_counts().values()))} points. The published values are "
            + reported.transcribed("results.csv") + ".")


def _half_width(r1: float, n: int) -> str:
    low, high = uncertainty.clopper_pearson(uncertainty.k_of(r1, n), n)
    return prose.num((high - low) / 2, 1)


def correlation_sentence(table: pd.DataFrame, inputs: pd.DataFrame, min_imagenet: float = 50.0) -> str:
    """Which printed r are reproduced, which two models carry them, and what r is without them."""
    step = [10.0 ** -(len(p.split(".")[1]) if "." in p else 0) for p in table["paper_r"]]
    exact = (table["difference"].abs() <= [s / 2 + 1e-9 for s in step])
    off = table[~exact]
    low = inputs[inputs["imagenet_top1"] < min_imagenet].drop_duplicates("model")
    col = f"pearson_r_imagenet_{min_imagenet:g}plus"
    n_high = int(table[f"n_imagenet_{min_imagenet:g}plus"].iloc[0])
    by = table.set_index("subset")[col]
    return (f"{prose.how_many(exact, 'printed value')[0].upper()}{prose.how_many(exact, 'printed value')[1:]} are "
            "reproduced to their printed precision"
            + (f"; {prose.listing(SUBSET_LABELS[s] for s in off['subset'])} come out "
               + prose.listing(f"{prose.num(r.pearson_r)}" for r in off.itertuples())
               + " for the printed " + prose.listing(off["paper_r"]) + ", one printed step away, which other "
               "ImageNet accuracies than open_clip's could explain" if len(off) else "")
            + f". The figure adds what a single r hides: {prose.count(len(low))} of the "
            f"{inputs['model'].nunique()} points, {prose.listing(f'{r.group} {r.model}' for r in low.itertuples())} "
            f"(ImageNet top-1 {prose.listing(f'{prose.num(v, 1)}%' for v in low['imagenet_top1'])}), sit far left of "
            f"the other {n_high}, and they carry much of each correlation: over the {n_high} alone r is "
            + prose.listing(f"{prose.num(v)} on {SUBSET_LABELS[s]}" for s, v in by.items())
            + f", against the paper's {prose.span(table['paper_r'].astype(float), sep='–')} over all of them.")


def matched_pairs(inputs: pd.DataFrame, subsets=("add_obj", "add_att"), within: float = 3.0) -> pd.DataFrame:
    """Each OpenAI checkpoint beside the LAION checkpoint nearest in ImageNet top-1 (if within ``within`` points),
    on ``subsets``: the gap in R@1 and the interval a gap of two independent proportions would have."""
    counts = published_counts()
    rows = []
    for subset in subsets:
        d = inputs[inputs["subset"] == subset]
        laion = d[d["group"] == "LAION"]
        for r in d[d["group"] == "OpenAI"].itertuples():
            near = laion.iloc[(laion["imagenet_top1"] - r.imagenet_top1).abs().argsort()[:1]]
            if near.empty or abs(near["imagenet_top1"].iloc[0] - r.imagenet_top1) > within:
                continue
            n = counts[subset]
            low, high = uncertainty.newcombe_difference(uncertainty.k_of(r.r1, n), n,
                                                        uncertainty.k_of(near["r1"].iloc[0], n), n)
            rows.append({"subset": subset, "openai": r.model, "laion": near["model"].iloc[0],
                         "gap": near["r1"].iloc[0] - r.r1, "gap_ci_low": low, "gap_ci_high": high})
    return pd.DataFrame(rows)


def training_data_sentence(pairs: pd.DataFrame) -> str:
    if pairs.empty:
        return ""
    beyond = pairs["gap_ci_low"] > 0
    return (f"Training data matter at the top: on the ADD subsets, each OpenAI checkpoint beside the LAION checkpoint "
            f"nearest in ImageNet accuracy (within 3 points; {prose.count(len(pairs))} pairs) scores "
            f"{prose.span(pairs['gap'].abs())} points {'lower' if (pairs['gap'] > 0).all() else 'apart'}, "
            f"and {prose.how_many(beyond, 'gap')} exceed the 95% interval of a difference of two independent "
            "proportions (for two models scored on the same pairs, whose errors correlate positively, that interval "
            "is usually the wider one).")


def evaluated_sentence(evaluated: pd.DataFrame) -> str:
    if evaluated.empty:
        return ""
    width = (evaluated["r1_ci_high"] - evaluated["r1_ci_low"]) / 2
    within = (evaluated["difference"].abs() <= width) | evaluated["difference"].isna()
    return (f"The evaluated intervals are ±{prose.span(width, 1)} points; {prose.how_many(within, 'subset')} lie "
            "within their interval of the published R@1 (or have none to compare with).")


def _within_words(table: pd.DataFrame) -> str:
    steps = np.array([10.0 ** -(len(p.split(".")[1]) if "." in p else 0) for p in table["paper_r"]])
    off = table["difference"].abs().to_numpy()
    return ("to their printed precision" if (off <= steps / 2 + 1e-9).all() else
            "within one printed step" if (off <= 1.5 * steps + 1e-9).all() else "only in part (see the checks)")


def summary(check_rows: list, table: pd.DataFrame) -> str:
    """The closing paragraph: the granularity checks' verdicts (the rows of ``check_rows`` that test k/N), the
    correlations, what is not established here."""
    granularity_rows = [c for c in check_rows if " are k/N for " in c.claim]
    ok = [c for c in granularity_rows if c.status == "pass"]
    other = [c for c in granularity_rows if c.status != "pass"]
    subsets = prose.listing(c.claim.split(" on ")[1].split(" are ")[0] for c in other)
    col = [c for c in table.columns if c.startswith("pearson_r_imagenet_")][0]
    return ("**What this shows.** The results table agrees with the released data: on "
            f"{prose.count(len(ok))} of {prose.count(len(granularity_rows))} subsets each R@1 printed to two decimals "
            "is a whole number of correct pairs out of that subset's released size"
            + (f"; {subsets} matches a file one pair larger than the one released today, so its column was "
               "computed before a pair was removed from the release" if other else "")
            + f". The ImageNet correlations are reproduced {_within_words(table)}, but they rest on "
            f"{prose.count(int(table['n_models'].iloc[0] - table[col.replace('pearson_r', 'n')].iloc[0]))} "
            f"low-ImageNet DataComp models; without them r is {prose.span(table[col], sep='–')}. Two things this notebook does "
            "not establish. Whether the shortcuts are gone: the refinement guarantees chance only for the two "
            "scorers it was run against, so notebook 07 (*Without looking*) scores the same JSONs with other "
            "text-only scorers. And whether the published CLIP numbers reproduce: that needs a model evaluated on "
            "COCO val2017's images, shown above when one has been.")
