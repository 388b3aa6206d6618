"""SugarCrepe's claims (Hsieh et al., NeurIPS 2023 Datasets and Benchmarks, arXiv 2306.14610): its
results table against the released data and against itself.

``check_r1_granularity``      every R@1 of the results table is 100·k/N for its subset's N pairs
``check_imagenet_correlation`` the figure's Pearson r of each subset against ImageNet, recomputed from the
                               table's R@1 and open_clip's ImageNet accuracies
``check_subset_sizes``         our pair counts of the released JSONs against the pinned counts

Every function takes the tables it checks as arguments (defaults: the published numbers and the
pinned counts), so a test can hand it wrong input and watch it fail.
"""
from __future__ import annotations

import numpy as np

from ... import paths
from . import reported
from .analysis import correlation_inputs
from ...errors import DataError, error_line
from . import EARLIER, SUBSETS, load_pairs
from ...claims.base import FAIL, NEEDS, PAPER, PART, PASS, Check, Topic
from .datasets import SUGARCREPE_JSONS
from ...lazy import lazy

pd = lazy("pandas")

GROUP = "sugarcrepe"


def _listed(items: list[str], limit: int = 5) -> str:
    return "; ".join(items[:limit]) + (f"; … {len(items) - limit} more" if len(items) > limit else "")


def _k_over_n(value: float, decimals: int, n: int) -> bool:
    """Whether some 100·k/N (0 ≤ k ≤ N) prints as ``value`` with ``decimals`` decimals."""
    k = round(value * n / 100.0)
    half = 0.5 * 10.0 ** -decimals + 1e-9
    return any(abs(100.0 * j / n - value) <= half for j in (k - 1, k, k + 1) if 0 <= j <= n)


def _informative(decimals: int, n: int) -> bool:
    """A printed value says something about N only when its precision is finer than the step 100/N
    (a whole percent, as the human rows print, is k/N for every N ≥ 100)."""
    return 10.0 ** -decimals < 100.0 / n


# ------------------------------------------------------------------ (a) granularity

def check_r1_granularity(published: pd.DataFrame | None = None, pinned: dict | None = None) -> list[Check]:
    """Per subset: every published R@1 is 100·k/N, N its released pair count, to the printed precision.

    Values that are not, but are k/N for the subset's pinned earlier size (one pair later removed from
    the release), are a paper inconsistency: the table was computed on the earlier file. Anything else
    fails (a transcription error, or a table computed on another set).
    """
    published = published if published is not None else reported.results()
    pinned = pinned if pinned is not None else reported.released_counts()
    out = []
    for subset, rows in published.groupby("subset", sort=False):
        n = int(pinned[f"pairs:{subset}"])
        earlier = pinned.get(f"{EARLIER}:{subset}")
        coarse = len(rows)
        rows = rows[[_informative(int(d), n) for d in rows["decimals"]]]
        coarse -= len(rows)
        bad = [r for r in rows.itertuples() if not _k_over_n(r.r1, int(r.decimals), n)]
        explained = earlier is not None and all(_k_over_n(r.r1, int(r.decimals), int(earlier)) for r in bad)
        claim = f"Published SugarCrepe R@1 on {subset} are k/N for its {n:,} released pairs"
        ours = f"{len(rows) - len(bad)} of {len(rows)} are k/{n}"
        if not bad:
            out.append(Check(claim, f"{len(rows)} values", ours, PASS, f"{coarse} printed too coarsely to say anything "
                             "about N (whole percents) not counted" if coarse else "", GROUP))
        elif explained:
            out.append(Check(claim, f"{len(rows)} values", ours, PAPER,
                             f"all {len(bad)} that are not are k/{int(earlier)}: {subset} had {int(earlier)} pairs "
                             f"until RAIVNLab/sugar-crepe 546eb51 (2023-11-18) removed one, so the table was computed "
                             "on the earlier file", GROUP))
        else:
            out.append(Check(claim, f"{len(rows)} values", ours, FAIL,
                             _listed([f"{r.model}: {r.r1:.{int(r.decimals)}f} is not k/{n}" for r in bad]), GROUP))
    return out


# ------------------------------------------------------------------ (b) correlation with ImageNet

def _correlation_row(subset: str, paper: float, decimals: int, g: pd.DataFrame) -> Check:
    claim = f"Pearson r of SugarCrepe {subset} R@1 vs ImageNet (open_clip's re-evaluation)"
    shown = f"{paper:.{decimals}f}"
    if g.empty or g["imagenet_top1"].isna().any():
        lacking = sorted(g.loc[g["imagenet_top1"].isna(), "imagenet_model"]) if not g.empty else ["every model"]
        return Check(claim, shown, "—", FAIL, f"no ImageNet top-1 for {_listed(lacking)} in imagenet_zeroshot.csv",
                     GROUP)
    ours = float(np.corrcoef(g["imagenet_top1"], g["r1"])[0, 1])
    step = 10.0 ** -decimals
    off = abs(ours - paper)
    detail = f"{len(g)} models; ours {ours:.4f}"
    if off <= step / 2 + 1e-9:
        return Check(claim, shown, f"{ours:.{decimals}f}", PASS, detail, GROUP)
    if off <= step * 1.5 + 1e-9:        # one printed step beyond rounding: the paper's inputs are not all known
        return Check(claim, shown, f"{ours:.{decimals}f}", PART,
                     detail + f", {off:.4f} from the printed {shown}: beyond its rounding, by less than one more "
                     "printed step; the paper does not say which ImageNet accuracies it used, and other ones than "
                     "open_clip's could give its value", GROUP)
    return Check(claim, shown, f"{ours:.{decimals}f}", FAIL,
                 detail + f", {off:.4f} from the printed {shown}: more than one printed step beyond rounding, "
                 "so a transcribed R@1 or ImageNet value is the likelier cause", GROUP)


def check_imagenet_correlation(published: pd.DataFrame | None = None, published_r: pd.DataFrame | None = None,
                               imagenet: pd.Series | None = None) -> list[Check]:
    """Per subset: the figure's Pearson r over the table's CLIP models, recomputed from the published R@1 and
    open_clip's ImageNet top-1. Equal to the printed precision: pass; off by at most one more printed step: holds
    in part (the paper's ImageNet inputs are not known); more: fail."""
    published_r = published_r if published_r is not None else reported.imagenet_r()
    inputs = correlation_inputs(published, imagenet)
    return [_correlation_row(r.subset, float(r.pearson_r), int(r.decimals), inputs[inputs["subset"] == r.subset])
            for r in published_r.itertuples()]


# ------------------------------------------------------------------ (c) the released files

SIZES_CLAIM = "Our pair counts of SugarCrepe's seven JSONs equal the pinned counts"


def _subset_counts(data_dir) -> tuple[dict[str, int] | None, Check | None]:
    """Pairs per subset read from the folder, or (None, the row saying why there are none)."""
    root = SUGARCREPE_JSONS.dir(data_dir)
    present = [s for s in SUBSETS if (root / f"{s}.json").is_file()]
    if len(present) < len(SUBSETS):
        why = "no SugarCrepe data" if not present else f"{len(present)} of {len(SUBSETS)} JSONs present"
        return None, Check(SIZES_CLAIM, "pinned", "—", NEEDS, f"{why} (make data-sugarcrepe)", GROUP)
    try:
        pairs = load_pairs(root)
    except DataError as exc:
        return None, Check("SugarCrepe's seven released JSONs load", "7 files", "an error", FAIL, error_line(exc),
                           GROUP)
    return {s: len(p) for s, p in pairs.by_subset().items()}, None


def check_subset_sizes(counts: dict[str, int] | None, pinned: dict | None = None) -> list[Check]:
    """Our pair count of each released JSON (``counts``: subset → pairs; None without data) against the pinned."""
    pinned = pinned if pinned is not None else reported.released_counts()
    subsets = [q.split(":", 1)[1] for q in pinned if q.startswith("pairs:")]
    claim = SIZES_CLAIM
    total = f"{int(pinned['pairs']):,} pairs in {len(subsets)} subsets"
    if counts is None:
        return [Check(claim, total, "—", NEEDS, "no SugarCrepe data (make data-sugarcrepe)", GROUP)]
    off = [f"{s}: {counts.get(s, 0):,}, pinned {int(pinned[f'pairs:{s}']):,}" for s in subsets
           if counts.get(s, 0) != int(pinned[f"pairs:{s}"])]
    if sum(int(pinned[f"pairs:{s}"]) for s in subsets) != int(pinned["pairs"]):
        off.append(f"the pinned subsets sum to {sum(int(pinned[f'pairs:{s}']) for s in subsets):,}, "
                   f"not the pinned total {int(pinned['pairs']):,}")
    ours = f"{sum(counts.values()):,} pairs; {len(subsets) - len(off)} of {len(subsets)} subsets agree"
    return [Check(claim, total, ours, FAIL if off else PASS,
                  (_listed(off) + ": a counting error of ours, or files that are not the release; re-download with "
                   "`make data-sugarcrepe`") if off else ", ".join(f"{s} {counts[s]:,}" for s in subsets), GROUP)]


# ------------------------------------------------------------------ the topic

def sugarcrepe_sections(data_dir=None) -> dict[str, list[Check]]:
    """``published``: the results table against the release and against its own figure; ``data``: the
    released JSONs (the local copy, ``$SUGARCREPE_DATA`` by default) against the pinned counts."""
    counts, problem = _subset_counts(data_dir)
    data = [problem] if problem is not None else check_subset_sizes(counts)
    return {"published": check_r1_granularity() + check_imagenet_correlation(), "data": data}


def sugarcrepe_checks(data_dir=None) -> list[Check]:
    """SugarCrepe's checks: granularity and ImageNet correlation of the results table, the released subset sizes."""
    return [row for rows in sugarcrepe_sections(data_dir).values() for row in rows]


TOPICS = {"sugarcrepe": Topic(sugarcrepe_checks, "08_sugarcrepe")}
ORDER = (("sugarcrepe", "published"), ("sugarcrepe", "data"))


def sections(results_dir=None, data_dirs=None) -> dict[tuple[str, str], list[Check]]:
    """SugarCrepe's sections for ``make check``: (topic, section) → rows."""
    parts = sugarcrepe_sections((data_dirs or {}).get("sugarcrepe"))
    return {("sugarcrepe", name): rows for name, rows in parts.items()}
