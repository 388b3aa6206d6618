"""SugarCrepe (Hsieh et al., NeurIPS 2023 D&B, arXiv 2306.14610) beside CREPE: notebook 08's tables.

``published_matrix``    the results table as models × subsets, in the paper's order
``correlation_inputs``  the table's CLIP rows with their ImageNet zero-shot top-1
``correlation_table``   per subset: the Pearson r recomputed beside the printed one
``released_subsets``    the released JSONs: pairs per subset and one example each (None without them)
``evaluated_table``     evaluated SugarCrepe results beside the published R@1, with ties and intervals

The figures are in :mod:`crepe_utils.benchmarks.sugarcrepe.figures`; the claims that check these numbers
in :mod:`crepe_utils.benchmarks.sugarcrepe.claims`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ... import paths
from . import reported
from ...models.imagenet import top1 as imagenet_top1
from ...errors import DataError, error_line
from ...results import store
from . import SUBSETS, load_pairs
from .datasets import SUGARCREPE_JSONS

#: The results table's column order: REPLACE, SWAP, ADD.
SUBSET_ORDER = ("replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att", "add_obj", "add_att")
#: How the paper heads each column.
SUBSET_LABELS = {s: f"{s.split('_')[0].upper()} {s.split('_')[1]}" for s in SUBSET_ORDER}
#: the ImageNet accuracies the correlation is recomputed with: the only source that has all 17 models
IMAGENET_SOURCE = "open_clip_results_table"
#: How to produce evaluated results (COCO val2017 images and the JSONs first).
HOW_TO_EVALUATE = ("fetch SugarCrepe's JSONs (`make data-sugarcrepe`) and its images, COCO val2017 (`make data-coco`, "
                   "816 MB), then run `python -m crepe_utils evaluate --benchmark sugarcrepe --model openai-vit-b-32 "
                   "--out {results_dir}` (`--model`: any of the table's 17 keys that `python -m crepe_utils models` "
                   "lists, or an open_clip architecture with `--pretrained`)")
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
        return None, f"**{what} in** `{root}`: {how}. The sections below use published numbers only."
    try:
        pairs = load_pairs(root).by_subset()
    except DataError as exc:
        return None, f"**SugarCrepe's JSONs in** `{root}` **cannot be read** ({error_line(exc)}); {how}."
    rows = [{"subset": s, "pairs": len(pairs[s]), "image": pairs[s][0].image_id,
             "positive": pairs[s][0].positive, "negative": pairs[s][0].negative} for s in SUBSET_ORDER]
    total = sum(r["pairs"] for r in rows)
    return pd.DataFrame(rows), f"SugarCrepe's JSONs from `{root}`: {total:,} pairs in {len(rows)} subsets."


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
    return (f"_No evaluated SugarCrepe results in_ `{results_dir}`. To get them: "
            + HOW_TO_EVALUATE.format(results_dir=results_dir)
            + "; this notebook then shows them beside the published numbers.")
