"""CREPE's raw-set retrieval (app. B.2): each image against every caption of a fold, each caption against every
image, with no hard negatives; Recall@1, 5 and 10 per fold, their mean and standard deviation over K folds.

**The raw test set** of a complexity n is built from the released positives: every distinct image region
(``image_id`` and box, the crop the hard-negative sets evaluate) of the three HN types' files of complexity n, with
its distinct positive captions, in order of first appearance (atom's file, then swap's, then negate's; row
order within a file). The paper's D_RAW_test is a superset (app. A.5: some captions had too few hard negatives
to be released), so K on the released files is smaller than the paper's.

**Folds.** N items (regions) a fold; K = min(max_folds, floor(|D| / N)) (app. B.2: max_folds 20, N = 1,508 for
productivity). Two rules:

* ``seeded`` (default): ``numpy.random.default_rng([seed, n]).permutation(|D|)``; fold k is the items at
  positions ``perm[k*N:(k+1)*N]`` (in that order). Disjoint folds; the same seed gives the same folds anywhere.
* ``contiguous``: fold k is items ``k*N`` to ``(k+1)*N - 1`` in file order, as the released code's first
  commit sliced its rows with ``--start-id``/``--end-id`` (no shuffling), so the two can be compared.

**Ranks** (ties as everywhere, :mod:`crepe_utils.metrics`): image to text, the best-scoring of the image's own
captions is the positive and every caption of another image a negative; pessimistic rank = 1 + negatives scoring
at least as high, optimistic = 1 + negatives scoring higher. Text to image: the caption's own image is the
positive and every other image of the fold a negative. A caption shared word for word by two images of a fold is
a negative of the other (the raw set's false negatives, which app. B.2's hypothesis is about).

The engine scores one query per image of a fold with every caption of the fold as its candidates (in the fold's
caption order), so a fold's scores are its image × caption matrix; text to image reads its columns.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ... import metrics
from ...errors import DataError
from ...imagesets.visual_genome import VISUAL_GENOME, ImageIndex
from ...lazy import lazy
from ...protocol.benchmark import Loaded, ScoringRule, Selection, Sources
from ...protocol.tables import Tables
from ...results.store import read_results
from ...digests import sha256_file
from . import queries as Q
from .datasets import CREPE_CSVS

pd = lazy("pandas")

#: N of app. B.2: items a fold, per protocol
FOLD_SIZE = {"productivity": 1508, "systematicity": 1855}
#: K's cap in app. B.2
MAX_FOLDS = 20
FOLD_RULES = ("seeded", "contiguous")
RAW_KS = (1, 5, 10)
DIRECTIONS = ("image_to_text", "text_to_image")
GROUPS = ("benchmark", "complexity", "direction", "fold")
#: the summary's row of the folds' mean and standard deviation has this in ``fold``
MEAN = "mean"


class RawSetError(DataError):
    """A raw-set selection that cannot form a fold, or a fold the engine could not score whole."""


@dataclass(frozen=True)
class RawItem:
    """One image region of the raw test set with its distinct positive captions."""

    image_id: str
    box: tuple
    captions: tuple[str, ...]


@dataclass(frozen=True)
class RawQuery:
    """One image of one fold against every caption of the fold (the engine's query)."""

    query_id: str
    image_id: str
    box: tuple
    candidates: tuple[str, ...]      #: the fold's captions, item by item (the same tuple for every query of a fold)
    positives: tuple[int, ...]       #: indices in ``candidates`` of this image's own captions
    complexity: int
    fold: int
    benchmark: str = "raw-productivity"


def raw_sets(qs: Q.QuerySet) -> dict[int, list[RawItem]]:
    """Complexity → its raw test set: every distinct region of the positives in ``qs`` with its distinct
    captions, in order of first appearance."""
    found: dict[int, dict[tuple, list[str]]] = {}
    for q in qs.queries:
        captions = found.setdefault(q.complexity, {}).setdefault((q.image_id, q.box), [])
        if q.positive not in captions:
            captions.append(q.positive)
    return {n: [RawItem(i, b, tuple(c)) for (i, b), c in items.items()] for n, items in sorted(found.items())}


def fold_count(n_items: int, fold_size: int, max_folds: int = MAX_FOLDS) -> int:
    """K = min(max_folds, floor(|D| / N)) (app. B.2)."""
    return min(max_folds, n_items // fold_size)


def fold_members(n_items: int, fold_size: int, k: int, rule: str = "seeded", seed: int = 0,
                 complexity: int = 0) -> list[np.ndarray]:
    """The item positions of each of ``k`` folds of ``fold_size`` by ``rule`` (the module's documented rules)."""
    if rule == "contiguous":
        order = np.arange(n_items)
    elif rule == "seeded":
        order = np.random.default_rng([seed, complexity]).permutation(n_items)
    else:
        raise RawSetError(f"fold rule {rule!r} is not one of {', '.join(FOLD_RULES)}")
    return [order[f * fold_size:(f + 1) * fold_size] for f in range(k)]


def check_folds(n_items: int, fold_size: int, max_folds: int, complexity) -> int:
    """K for a set of ``n_items``; a :class:`RawSetError` (one line, with the fix) when no fold can be formed."""
    where = f"crepe-raw: complexity {complexity}"
    if fold_size < 1:
        raise RawSetError(f"{where}: fold size {fold_size} is not a positive number of images; give --fold-size 1 or more")
    if max_folds < 1:
        raise RawSetError(f"{where}: K = 0 folds asked for (--max-folds {max_folds}); give --max-folds 1 or more "
                          f"(app. B.2 uses {MAX_FOLDS})")
    if fold_size > n_items:
        raise RawSetError(f"{where}: a fold of {fold_size:,} images is larger than the raw set's {n_items:,} images, "
                          f"so K = floor({n_items:,} / {fold_size:,}) = 0; give --fold-size {n_items} or less, or "
                          "leave this complexity out (--complexities)")
    return fold_count(n_items, fold_size, max_folds)


def fold_queries(items: list[RawItem], members: np.ndarray, complexity: int, fold: int) -> list[RawQuery]:
    """The engine queries of one fold: one per image, every caption of the fold its candidates."""
    chosen = [items[int(i)] for i in members]
    candidates = tuple(c for item in chosen for c in item.captions)
    out, start = [], 0
    for pos, (index, item) in enumerate(zip(members, chosen)):
        positives = tuple(range(start, start + len(item.captions)))
        start += len(item.captions)
        out.append(RawQuery(f"raw:n{complexity}:fold{fold}:{pos}:item{int(index)}", item.image_id, item.box,
                            candidates, positives, complexity, fold))
    return out


def load_raw(sources: Sources, selection: Selection, settings) -> Loaded:
    """The raw productivity sets of the selected complexities, in folds, as engine queries."""
    data_dir = CREPE_CSVS.require(sources.data_dir)
    complexities = selection.complexities or Q.COMPLEXITIES
    qs = Q.load_productivity(data_dir, Q.PROD_HN_TYPES, complexities, on_bad_row=settings.on_bad_row)
    sets = raw_sets(qs)
    fold_size = selection.fold_size or FOLD_SIZE["productivity"]
    queries, folds = [], {}
    for n in complexities:
        items = sets.get(n, [])
        k = check_folds(len(items), fold_size, selection.max_folds, n)
        members = fold_members(len(items), fold_size, k, selection.fold_rule, selection.fold_seed, n)
        for f, m in enumerate(members):
            queries.extend(fold_queries(items, m, n, f))
        folds[n] = {"n_items": len(items), "k": k, "members": [[int(i) for i in m] for m in members]}
    files = {}
    for name in sorted(qs.files):
        files[name] = sha256_file(Q.find_file(data_dir, name))
    image_dir = VISUAL_GENOME.dir(sources.image_dir)
    data = {"data_dir": str(data_dir), "image_dir": str(image_dir), "files_sha256": files, "rows_read": qs.files,
            "raw_sets": {str(n): {"n_items": v["n_items"], "n_folds": v["k"]} for n, v in folds.items()},
            "fold_size": fold_size, "fold_rule": selection.fold_rule, "fold_seed": selection.fold_seed,
            "max_folds": selection.max_folds}
    return Loaded(queries, qs.issues, qs.files, functools.cache(lambda: ImageIndex(image_dir)), data,
                  context={"fold_size": fold_size, "folds": folds, "rule": selection.fold_rule,
                           "seed": selection.fold_seed})


# ---------------------------------------------------------------------------------------------- scoring

def multi_positive_ranks(scores: np.ndarray, positive: np.ndarray) -> metrics.Ranks:
    """Ranks of each row's best-scoring positive among its negatives (rows × candidates; ``positive`` a bool mask
    of the same shape, at least one per row): ties as :func:`crepe_utils.metrics.ranks_from_scores`."""
    best = np.where(positive, scores, -np.inf).max(axis=1, keepdims=True)
    negative = ~positive
    higher = ((scores > best) & negative).sum(axis=1)
    equal = ((scores == best) & negative).sum(axis=1)
    return metrics.Ranks(pessimistic=1 + higher + equal, optimistic=1 + higher, n_ties=equal)


def fold_matrix(result, rows: list[int]) -> np.ndarray:
    """The fold's image × caption score matrix from the engine's flat scores of its queries ``rows``."""
    return np.stack([result.query_scores(i) for i in rows])


SUMMARY_COLUMNS = ["model", *GROUPS, "n_folds", "fold_size", "n_set", "fold_rule", "fold_seed", "n_queries",
                   "n_candidates", "chance_r1", "r1", "r5", "r10", "r1_std", "r5_std", "r10_std", "r1_optimistic",
                   "r1_pessimistic", "n_tied_queries", "tie_policy"]
PER_QUERY_COLUMNS = ["query_id", *GROUPS, "image_id", "caption", "n_candidates", "n_positives", "rank",
                     "rank_optimistic", "n_ties", "score_positive", "score_best_negative"]


def evaluate(result, loaded, settings, model: str) -> Tables:
    """The raw-set tables: one summary row per complexity, direction and fold, and one per complexity and
    direction with the folds' mean and sample standard deviation (ddof 1; empty when K = 1); every query's ranks."""
    if result.skipped:
        first = result.skipped[0][0]
        raise RawSetError(f"crepe-raw: {len(result.skipped)} image(s) of the folds could not be scored (first: image "
                          f"{first.image_id}, query {first.query_id}: {result.skipped[0][1]}); a raw fold needs every "
                          "image: place the images, or leave out --skip-missing-images")
    ctx = loaded.context
    by_fold: dict[tuple, list[int]] = {}
    for i, q in enumerate(result.queries):
        by_fold.setdefault((q.complexity, q.fold), []).append(i)
    rows, per_query = [], []
    policy = settings.tie_policy
    for n, info in ctx["folds"].items():
        per_direction = {d: [] for d in DIRECTIONS}
        for f in range(info["k"]):
            idx = by_fold[(n, f)]
            qs = [result.queries[i] for i in idx]
            matrix = fold_matrix(result, idx)
            owner = np.empty(matrix.shape[1], dtype=np.int64)
            for j, q in enumerate(qs):
                owner[list(q.positives)] = j
            positive = owner[None, :] == np.arange(len(qs))[:, None]          # image × caption
            for direction, scores, mask in (("image_to_text", matrix, positive),
                                            ("text_to_image", matrix.T, positive.T)):
                ranks = multi_positive_ranks(scores, mask)
                row = _row(model, n, direction, f, info, ctx, ranks, mask, policy)
                per_direction[direction].append(row)
                per_query.append(_per_query(qs, n, direction, f, scores, mask, ranks))
        for direction in DIRECTIONS:
            folds = per_direction[direction]
            rows.extend(folds)
            mean = {**folds[0], "fold": MEAN, "n_queries": int(sum(r["n_queries"] for r in folds)),
                    "n_tied_queries": int(sum(r["n_tied_queries"] for r in folds))}
            for key in ("chance_r1", "n_candidates", *(f"r{k}" for k in RAW_KS), "r1_optimistic", "r1_pessimistic"):
                mean[key] = float(np.mean([r[key] for r in folds]))
            for k in RAW_KS:
                mean[f"r{k}_std"] = float(np.std([r[f"r{k}"] for r in folds], ddof=1)) if len(folds) > 1 else np.nan
            rows.append(mean)
    summary = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    summary["complexity"] = summary["complexity"].astype("Int64")
    headline = {"raw_sets": {str(n): {"n_items": v["n_items"], "n_folds": v["k"]} for n, v in ctx["folds"].items()}}
    return Tables(summary, SUMMARY_COLUMNS, per_query, PER_QUERY_COLUMNS, "%.6g", "%.9g", headline=headline,
                  n_scored=len(result.queries), row_key=GROUPS)


def _row(model, n, direction, fold, info, ctx, ranks: metrics.Ranks, mask: np.ndarray, policy: str) -> dict:
    """One fold's row; chance R@1 is the mean over queries of positives / candidates (a random order's top)."""
    chosen = ranks.select(policy)
    row = {"model": model, "benchmark": "raw-productivity", "complexity": n, "direction": direction, "fold": str(fold),
           "n_folds": info["k"], "fold_size": ctx["fold_size"], "n_set": info["n_items"], "fold_rule": ctx["rule"],
           "fold_seed": ctx["seed"] if ctx["rule"] == "seeded" else np.nan, "n_queries": len(chosen),
           "n_candidates": float(mask.shape[1]), "chance_r1": float(100.0 * np.mean(mask.sum(axis=1) / mask.shape[1]))}
    for k in RAW_KS:
        row[f"r{k}"] = metrics.recall_at_k(chosen, k)
        row[f"r{k}_std"] = np.nan
    row["r1_optimistic"] = metrics.recall_at_k(ranks.optimistic, 1)
    row["r1_pessimistic"] = metrics.recall_at_k(ranks.pessimistic, 1)
    row["n_tied_queries"] = int(np.sum(ranks.n_ties > 0))
    row["tie_policy"] = policy
    return row


def _per_query(qs, n, direction, fold, scores, mask, ranks: metrics.Ranks) -> pd.DataFrame:
    best_pos = np.where(mask, scores, -np.inf).max(axis=1)
    best_neg = np.where(mask, -np.inf, scores).max(axis=1) if scores.shape[1] > 1 else np.full(len(scores), np.nan)
    captions = qs[0].candidates
    if direction == "image_to_text":
        ids = [q.query_id for q in qs]
        image_ids = [q.image_id for q in qs]
        caption = [""] * len(qs)
    else:
        owner = {c: j for j, q in enumerate(qs) for c in q.positives}
        ids = [f"{qs[owner[c]].query_id}:caption{c}" for c in range(len(captions))]
        image_ids = [qs[owner[c]].image_id for c in range(len(captions))]
        caption = list(captions)
    frame = pd.DataFrame({"query_id": ids, "benchmark": "raw-productivity", "complexity": n, "direction": direction,
                          "fold": str(fold), "image_id": image_ids, "caption": caption,
                          "n_candidates": scores.shape[1], "n_positives": mask.sum(axis=1),
                          "rank": ranks.pessimistic, "rank_optimistic": ranks.optimistic, "n_ties": ranks.n_ties,
                          "score_positive": best_pos, "score_best_negative": best_neg})
    return frame


def brief(summary, groups):
    """What a run prints: the folds' mean and standard deviation per complexity and direction."""
    shown = summary[summary["fold"] == MEAN]
    return shown[["model", "complexity", "direction", "n_folds", "fold_size", "n_set", "r1", "r1_std", "r5", "r10"]]


def read_raw(root) -> pd.DataFrame:
    """Every raw-set result under ``root`` as one table (its summaries' rows with the manifest's ``kind``, ``label``,
    the model's ``display`` name and ``result_dir``); empty when none."""
    frames = []
    for directory, manifest, df in read_results(root, lambda handle: pd.read_csv(handle, dtype={"fold": str}),
                                                scoring="raw-retrieval"):
        df["kind"] = manifest.get("kind", "evaluated")
        df["label"] = manifest.get("label", "")
        df["display"] = manifest["model"].get("display") or df["model"]
        df["result_dir"] = str(directory)
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*SUMMARY_COLUMNS, "kind"])


RAW_RETRIEVAL = ScoringRule(
    "raw-retrieval", evaluate, np.float32, honours=frozenset({"tie_policy"}), brief=brief, read=read_raw,
    description="raw-set retrieval (CREPE app. B.2): image-to-text and text-to-image Recall@1, 5, 10 in each of K "
                "folds of N images, their mean and standard deviation, ties by tie_policy")
