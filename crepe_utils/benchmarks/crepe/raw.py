"""CREPE's raw-set retrieval (app. B.2): each image against every caption of a fold, each caption against every
image, with no hard negatives; Recall@1, 5 and 10 per fold, their mean and standard deviation over K folds.

**The raw test sets** are built from the released positives: every distinct image region (``image_id`` and box,
the crop the hard-negative sets evaluate) with its distinct positive captions, in order of first appearance.

* productivity, one set per complexity n: the three HN types' files of complexity n (atom's file, then swap's,
  then negate's; row order within a file);
* systematicity, one set per split of one training set's files (``syst_vg_hard_negs_{seen,unseen}_compounds_in_
  {train_data}.csv``: SC and UC): every row of the split's file, whatever its negatives (only ``image_id``,
  ``caption`` and the box are read).

The paper's D_RAW_test is a superset (app. A.5: some captions had too few hard negatives to be released), so K on
the released files can be smaller than the paper's. Its systematicity raw sets also have an Unseen Atoms split,
which the released files do not.

**Folds.** N items (regions) a fold; K = min(max_folds, floor(|D| / N)) (app. B.2: max_folds 20, N = 1,508 for
productivity and 1,855 for systematicity). Two rules:

* ``seeded`` (default): ``numpy.random.default_rng([seed, stream]).permutation(|D|)``, where the stream is the set's
  complexity n (productivity) or 0 for SC and 1 for UC (systematicity); fold k is the items at positions
  ``perm[k*N:(k+1)*N]`` (in that order). Disjoint folds; the same seed gives the same folds anywhere.
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
PROTOCOLS = tuple(FOLD_SIZE)
#: K's cap in app. B.2
MAX_FOLDS = 20
FOLD_RULES = ("seeded", "contiguous")
RAW_KS = (1, 5, 10)
DIRECTIONS = ("image_to_text", "text_to_image")
GROUPS = ("benchmark", "train_data", "split", "complexity", "direction", "fold")
#: the seeded rule's stream of each systematicity split (a productivity set's is its complexity)
SPLIT_STREAMS = {"SC": 0, "UC": 1}
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
class RawSet:
    """Which raw test set: a productivity complexity, or a systematicity training set's split."""

    benchmark: str                   #: "raw-productivity" or "raw-systematicity" (the results' ``benchmark``)
    train_data: str = ""             #: systematicity: cc12m / yfcc / laion (or any split in the data folder)
    split: str = ""                  #: systematicity: SC / UC
    complexity: int | None = None    #: productivity: 4..12

    @classmethod
    def productivity(cls, n: int) -> "RawSet":
        return cls("raw-productivity", complexity=n)

    @classmethod
    def systematicity(cls, train_data: str, split: str) -> "RawSet":
        return cls("raw-systematicity", train_data=train_data, split=split)

    @property
    def stream(self) -> int:
        """The seeded rule's second seed: the complexity, or :data:`SPLIT_STREAMS` of the split."""
        return self.complexity if self.complexity is not None else SPLIT_STREAMS[self.split]

    @property
    def label(self) -> str:
        """How messages name it: ``complexity 4``, ``laion UC``."""
        return f"complexity {self.complexity}" if self.complexity is not None else f"{self.train_data} {self.split}"

    @property
    def name(self) -> str:
        """Its key in the manifest's ``raw_sets``: the complexity, or the split."""
        return str(self.complexity) if self.complexity is not None else self.split

    @property
    def id_prefix(self) -> str:
        return f"raw:n{self.complexity}" if self.complexity is not None else f"raw:{self.train_data}:{self.split}"

    @property
    def key(self) -> tuple:
        return (self.benchmark, self.train_data, self.split, self.complexity)


@dataclass(frozen=True)
class RawQuery:
    """One image of one fold against every caption of the fold (the engine's query)."""

    query_id: str
    image_id: str
    box: tuple
    candidates: tuple[str, ...]      #: the fold's captions, item by item (the same tuple for every query of a fold)
    positives: tuple[int, ...]       #: indices in ``candidates`` of this image's own captions
    complexity: int | None
    fold: int
    benchmark: str = "raw-productivity"
    train_data: str = ""
    split: str = ""

    @property
    def set_key(self) -> tuple:
        return (self.benchmark, self.train_data, self.split, self.complexity)


def _regions(queries, set_of) -> dict:
    """set_of(query) → its raw test set: every distinct region of the queries' positives with its distinct
    captions, in order of first appearance."""
    found: dict = {}
    for q in queries:
        captions = found.setdefault(set_of(q), {}).setdefault((q.image_id, q.box), [])
        if q.positive not in captions:
            captions.append(q.positive)
    return {k: [RawItem(i, b, tuple(c)) for (i, b), c in items.items()] for k, items in found.items()}


def raw_sets(qs: Q.QuerySet) -> dict[int, list[RawItem]]:
    """Complexity → its raw productivity test set (of the positives in ``qs``)."""
    return dict(sorted(_regions(qs.queries, lambda q: q.complexity).items()))


def systematicity_raw_sets(qs: Q.QuerySet) -> dict[str, list[RawItem]]:
    """Split (SC, UC) → its raw systematicity test set (of the positives in ``qs``: one training set's files)."""
    return _regions(qs.queries, lambda q: q.split)


def fold_count(n_items: int, fold_size: int, max_folds: int = MAX_FOLDS) -> int:
    """K = min(max_folds, floor(|D| / N)) (app. B.2)."""
    return min(max_folds, n_items // fold_size)


def fold_members(n_items: int, fold_size: int, k: int, rule: str = "seeded", seed: int = 0,
                 stream: int = 0) -> list[np.ndarray]:
    """The item positions of each of ``k`` folds of ``fold_size`` by ``rule`` (the module's documented rules;
    ``stream``: the set's, :attr:`RawSet.stream`)."""
    if rule == "contiguous":
        order = np.arange(n_items)
    elif rule == "seeded":
        order = np.random.default_rng([seed, stream]).permutation(n_items)
    else:
        raise RawSetError(f"fold rule {rule!r} is not one of {', '.join(FOLD_RULES)}")
    return [order[f * fold_size:(f + 1) * fold_size] for f in range(k)]


def check_folds(n_items: int, fold_size: int, max_folds: int, label: str) -> int:
    """K for a set of ``n_items`` (``label``: how messages name the set, :attr:`RawSet.label`); a
    :class:`RawSetError` (one line, with the fix) when no fold can be formed."""
    where = f"crepe-raw: {label}"
    if fold_size < 1:
        raise RawSetError(f"{where}: fold size {fold_size} is not a positive number of images; give --fold-size 1 or more")
    if max_folds < 1:
        raise RawSetError(f"{where}: K = 0 folds asked for (--max-folds {max_folds}); give --max-folds 1 or more "
                          f"(app. B.2 uses {MAX_FOLDS})")
    if fold_size > n_items:
        raise RawSetError(f"{where}: a fold of {fold_size:,} images is larger than the raw set's {n_items:,} images, "
                          f"so K = floor({n_items:,} / {fold_size:,}) = 0; give --fold-size {n_items} or less, or "
                          + ("leave this complexity out (--complexities)" if label.startswith("complexity")
                             else "leave this split out (--splits)"))
    return fold_count(n_items, fold_size, max_folds)


def fold_queries(items: list[RawItem], members: np.ndarray, raw_set, fold: int) -> list[RawQuery]:
    """The engine queries of one fold of ``raw_set`` (a :class:`RawSet`, or a productivity complexity): one per
    image, every caption of the fold its candidates."""
    if not isinstance(raw_set, RawSet):
        raw_set = RawSet.productivity(raw_set)
    chosen = [items[int(i)] for i in members]
    candidates = tuple(c for item in chosen for c in item.captions)
    out, start = [], 0
    for pos, (index, item) in enumerate(zip(members, chosen)):
        positives = tuple(range(start, start + len(item.captions)))
        start += len(item.captions)
        out.append(RawQuery(f"{raw_set.id_prefix}:fold{fold}:{pos}:item{int(index)}", item.image_id, item.box,
                            candidates, positives, raw_set.complexity, fold, raw_set.benchmark, raw_set.train_data,
                            raw_set.split))
    return out


def read_sets(data_dir, selection: Selection, settings) -> tuple[Q.QuerySet, dict[RawSet, list[RawItem]]]:
    """The files read and the raw test sets the selection asks for, in its order (of complexities or splits)."""
    if selection.protocol == "systematicity":
        splits = selection.splits or tuple(Q.SYST_SPLITS)
        qs = Q.load_systematicity_positives(data_dir, selection.train_data, splits, on_bad_row=settings.on_bad_row)
        found = systematicity_raw_sets(qs)
        return qs, {RawSet.systematicity(selection.train_data, s): found.get(s, []) for s in splits}
    complexities = selection.complexities or Q.COMPLEXITIES
    qs = Q.load_productivity(data_dir, Q.PROD_HN_TYPES, complexities, on_bad_row=settings.on_bad_row)
    found = raw_sets(qs)
    return qs, {RawSet.productivity(n): found.get(n, []) for n in complexities}


def load_raw(sources: Sources, selection: Selection, settings) -> Loaded:
    """The raw sets of the selection (productivity's complexities, or one training set's systematicity splits),
    in folds, as engine queries."""
    data_dir = CREPE_CSVS.require(sources.data_dir)
    qs, sets = read_sets(data_dir, selection, settings)
    fold_size = selection.fold_size or FOLD_SIZE[selection.protocol]
    queries, folds = [], {}
    for raw_set, items in sets.items():
        k = check_folds(len(items), fold_size, selection.max_folds, raw_set.label)
        members = fold_members(len(items), fold_size, k, selection.fold_rule, selection.fold_seed, raw_set.stream)
        for f, m in enumerate(members):
            queries.extend(fold_queries(items, m, raw_set, f))
        folds[raw_set] = {"n_items": len(items), "k": k, "members": [[int(i) for i in m] for m in members]}
    files = {}
    for name in sorted(qs.files):
        files[name] = sha256_file(Q.find_file(data_dir, name))
    image_dir = VISUAL_GENOME.dir(sources.image_dir)
    data = {"data_dir": str(data_dir), "image_dir": str(image_dir), "files_sha256": files, "rows_read": qs.files,
            "protocol": selection.protocol,
            "raw_sets": {s.name: {"n_items": v["n_items"], "n_folds": v["k"]} for s, v in folds.items()},
            "fold_size": fold_size, "fold_rule": selection.fold_rule, "fold_seed": selection.fold_seed,
            "max_folds": selection.max_folds}
    if selection.protocol == "systematicity":
        data["train_data"] = selection.train_data
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
        by_fold.setdefault((q.set_key, q.fold), []).append(i)
    rows, per_query = [], []
    policy = settings.tie_policy
    for n, info in ctx["folds"].items():
        per_direction = {d: [] for d in DIRECTIONS}
        for f in range(info["k"]):
            idx = by_fold[(n.key, f)]
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
    headline = {"raw_sets": {n.name: {"n_items": v["n_items"], "n_folds": v["k"]} for n, v in ctx["folds"].items()}}
    return Tables(summary, SUMMARY_COLUMNS, per_query, PER_QUERY_COLUMNS, "%.6g", "%.9g", headline=headline,
                  n_scored=len(result.queries), row_key=GROUPS)


def _row(model, n, direction, fold, info, ctx, ranks: metrics.Ranks, mask: np.ndarray, policy: str) -> dict:
    """One fold's row; chance R@1 is the mean over queries of positives / candidates (a random order's top)."""
    chosen = ranks.select(policy)
    row = {"model": model, "benchmark": n.benchmark, "train_data": n.train_data, "split": n.split,
           "complexity": n.complexity, "direction": direction, "fold": str(fold),
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
    frame = pd.DataFrame({"query_id": ids, "benchmark": n.benchmark, "train_data": n.train_data, "split": n.split,
                          "complexity": pd.array([n.complexity] * len(ids), dtype="Int64"), "direction": direction,
                          "fold": str(fold), "image_id": image_ids, "caption": caption,
                          "n_candidates": scores.shape[1], "n_positives": mask.sum(axis=1),
                          "rank": ranks.pessimistic, "rank_optimistic": ranks.optimistic, "n_ties": ranks.n_ties,
                          "score_positive": best_pos, "score_best_negative": best_neg})
    return frame


def brief(summary, groups):
    """What a run prints: the folds' mean and standard deviation per complexity and direction."""
    shown = summary[summary["fold"] == MEAN]
    where = ["train_data", "split"] if (shown["split"] != "").any() else ["complexity"]
    return shown[["model", *where, "direction", "n_folds", "fold_size", "n_set", "r1", "r1_std", "r5", "r10"]]


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
