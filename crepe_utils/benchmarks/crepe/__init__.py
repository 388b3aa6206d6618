"""CREPE (Ma et al., CVPR 2023): its two protocols, systematicity (§3.2, §4.1) and productivity (§3.3, §4.2).

Queries come from the released hard-negative CSVs (:mod:`.queries`) and their regions from Visual Genome's
images (:mod:`crepe_utils.imagesets.visual_genome`); both are scored as image-to-text retrieval among the
query's own candidates (:mod:`crepe_utils.protocol.retrieval`).

``datasets``    the released CSVs, pinned (``make data-crepe``)
``queries``     CREPE CSVs → retrieval queries (every odd row counted, none silently lost)
``raw``         raw-set retrieval (app. B.2): folds of N images, both directions, no hard negatives
``validation``  the data validation report (``python -m crepe_utils validate``)
``roster``      the paper's checkpoints, under its names
``reported``    the paper's published numbers and the released files' pinned counts
``analysis``    published beside evaluated, granularity, R² inputs (notebooks 02–04)
``claims``      the paper's claims, checked; ``topics`` groups them as the notebooks and ``make check`` list them
"""
from __future__ import annotations

import functools
from collections import Counter

from ...digests import sha256_file
from ...errors import DataError
from ...imagesets.visual_genome import VISUAL_GENOME, ImageIndex
from ...protocol.benchmark import Benchmark, Loaded, Option, Selection, SelectionError, Sources, TableColumns, limited
from ...protocol.retrieval import RETRIEVAL
from . import queries as Q, raw, reported, roster
from .datasets import CREPE_CSVS

CITATION = "Ma et al., CREPE: Can Vision-Language Foundation Models Reason Compositionally? CVPR 2023"
LICENCE = "CREPE: MIT (RAIVNLab/CREPE); Visual Genome images: CC BY 4.0"


def _loaded(qs: Q.QuerySet, sources: Sources, data_dir, settings, sets: tuple) -> Loaded:
    """The queries with their image index and the manifest's account of the files read."""
    image_dir = VISUAL_GENOME.dir(sources.image_dir)
    files = {}
    for name in sorted(qs.files):
        base = name.split("[", 1)[0]
        try:
            files[base] = sha256_file(Q.find_file(data_dir, base))
        except DataError:
            continue  # the all-negatives sets are built, not read
    data = {"data_dir": str(data_dir), "image_dir": str(image_dir), "files_sha256": files,
            "rows_read": qs.files, "issues": dict(Counter(i.kind for i in qs.issues))}
    kept = limited(qs.queries, settings.limit, GROUPS)
    return Loaded(kept, qs.issues, qs.files, functools.cache(lambda: ImageIndex(image_dir)), data, sets=sets)


#: the HN type of productivity's all-negatives sets (app. B.3), built from the three types' files
ALL_NEGATIVES = "all"


def load_productivity(sources: Sources, selection: Selection, settings) -> Loaded:
    """Productivity queries; with every HN type (or ``all`` among them), also the all-negatives sets of app. B.3.

    The all-negatives sets are built from all three types' files, so ``hn_types=("all",)`` reads the three and
    scores only those sets. A set of one HN type and complexity is declared (:attr:`Loaded.sets`) whether or not
    any of its queries is scored; an all-negatives set where the three files share a query, or when asked for by
    name.
    """
    data_dir = CREPE_CSVS.require(sources.data_dir)
    chosen = selection.hn_types or (*Q.PROD_HN_TYPES, ALL_NEGATIVES)
    want_all = selection.all_negatives and ALL_NEGATIVES in chosen
    types = [t for t in chosen if t != ALL_NEGATIVES]
    complexities = selection.complexities or Q.COMPLEXITIES
    qs = Q.load_productivity(data_dir, Q.PROD_HN_TYPES if want_all else types, complexities,
                             on_bad_row=settings.on_bad_row)
    sets = [("productivity", "", t, "", n) for t in types for n in complexities]
    if want_all:
        combined = Q.all_negatives_sets(qs)
        qs = Q.QuerySet([q for q in qs.queries if q.hn_type in types] + combined.queries,
                        [i for i in qs.issues if i.hn_type in types]
                        + [i for i in combined.issues if i.kind != "not in all HN types"], qs.files)
        qs.files["all-negatives sets"] = len(combined)
        formed = {q.complexity for q in combined.queries}
        if not formed and not types:
            raise DataError(f"crepe-productivity: no all-negatives set (hn_types 'all') can be formed from {data_dir}: "
                            "no query (image, box and caption) of the selected complexities is in all three HN "
                            "types' files (app. B.3); select atom, swap or negate instead")
        sets += [("productivity", "", ALL_NEGATIVES, "", n) for n in complexities
                 if n in formed or selection.hn_types]
    return _loaded(qs, sources, data_dir, settings, tuple(sets))


def load_systematicity(sources: Sources, selection: Selection, settings) -> Loaded:
    """Systematicity queries of one training set's split (SC and UC)."""
    data_dir = CREPE_CSVS.require(sources.data_dir)
    types = selection.hn_types or Q.SYST_HN_TYPES
    qs = Q.load_systematicity(data_dir, selection.train_data, types,
                              on_bad_row=settings.on_bad_row, empty_negatives=settings.empty_negatives)
    sets = tuple(("systematicity", selection.train_data, t, split, None) for split in Q.SYST_SPLITS for t in types)
    return _loaded(qs, sources, data_dir, settings, sets)


def systematicity_for_model(selection: Selection, spec) -> Selection:
    """The split is the model's training set: a registry model's own, unless one is given."""
    if selection.get("train_data"):
        return selection
    if spec.key not in roster.SYSTEMATICITY_MODELS:
        raise SelectionError(f"{spec.key}: say which systematicity split to use (train_data=cc12m, yfcc or laion; "
                             "--train-data); it must be the model's training set for SC/UC to mean anything")
    return selection.replace(train_data=roster.train_data(spec.key))


def _productivity_agrees(selection: Selection) -> str | None:
    if ALL_NEGATIVES in (selection.hn_types or ()) and not selection.all_negatives:
        return "hn_types 'all' asks for the all-negatives sets, which all_negatives=False turns off; drop one of the two"
    return None


#: what a CREPE results row is one of: the protocol, the systematicity split's training set, the HN type,
#: SC/UC and the complexity n (the columns of every CREPE result since the first release)
GROUPS = ("benchmark", "train_data", "hn_type", "split", "complexity")
HN_TYPES_HELP = "hard-negative types"

SYSTEMATICITY = Benchmark(
    name="crepe-systematicity", aliases=("systematicity",), title="CREPE systematicity (seen vs unseen compounds)",
    citation=f"{CITATION}, §3.2, §4.1, Table 2", licence=LICENCE, datasets=(CREPE_CSVS, VISUAL_GENOME), rule=RETRIEVAL,
    chance="1 / candidates per query: HN-Atom 1/5, HN-Comp 1/7, combined 1/11 (app. A.5)", groups=GROUPS,
    options=(Option("hn_types", HN_TYPES_HELP, Q.SYST_HN_TYPES, many=True),
             Option("train_data", f"the split of the model's training set ({', '.join(Q.SYST_TRAIN_DATA)} are "
                                  "released; any split whose files are in the data folder)")),
    load=load_systematicity, folder=lambda s: f"systematicity-{s.train_data}", for_model=systematicity_for_model,
    roster=roster.SYSTEMATICITY_MODELS, honours=frozenset({"limit", "on_bad_row", "empty_negatives"}),
    notebooks=("02_systematicity",))

def _alternatives(hn_type: str) -> list[tuple[str, int]]:
    """The item sets a pooled productivity column could count: each complexity file, and the archive's ``_all``
    file where its row count is pinned."""
    files, all_rows = reported.released_productivity_queries(), reported.released_all_rows()
    out = [(f"n = {n} file", rows) for (t, n), rows in sorted(files.items()) if t == hn_type]
    return out + ([(f"prod_vg_hard_negs_{hn_type}_all.csv", all_rows[hn_type])] if hn_type in all_rows else [])


def _released_rows(hn_type: str) -> int:
    return int(reported.released_counts()[f"rows:{hn_type}"])


#: vl_compo's table pools a type's complexities (one item set per type: the archive's ``_all`` files)
PRODUCTIVITY_COLUMNS = TableColumns(prefix="crepe", parts=("atom", "swap", "negate"), group="hn_type",
                                    label="CREPE productivity (pooled over n)", released=_released_rows,
                                    chance=lambda part: 100 / 6, alternatives=_alternatives, pooled=True,
                                    keep=lambda summary: summary["hn_type"] != ALL_NEGATIVES,
                                    pooling=lambda manifest: "its HN type's complexity files pooled (k and N summed "
                                                             "over n), as the field pools a type")

PRODUCTIVITY = Benchmark(
    name="crepe-productivity", aliases=("productivity",), title="CREPE productivity (complexity n = 4 to 12)",
    citation=f"{CITATION}, §3.3, §4.2, Fig. 5, app. B", licence=LICENCE, datasets=(CREPE_CSVS, VISUAL_GENOME),
    rule=RETRIEVAL, chance="1 / candidates per query: 1/6 per HN type, 1/16 for the all-negatives sets", groups=GROUPS,
    options=(Option("hn_types", f"{HN_TYPES_HELP} (all: the all-negatives sets of app. B.3)",
                    (*Q.PROD_HN_TYPES, ALL_NEGATIVES), many=True),
             Option("complexities", "complexity n", Q.COMPLEXITIES, type=int, many=True),
             Option("all_negatives", "the 16-candidate all-negatives sets of app. B.3", type=bool, default=True)),
    load=load_productivity, agree=_productivity_agrees, folder=lambda s: "productivity",
    roster=roster.PRODUCTIVITY_MODELS, table_columns=PRODUCTIVITY_COLUMNS,
    honours=frozenset({"limit", "on_bad_row"}), notebooks=("01_benchmark_totals", "03_productivity",
                                                           "04_imagenet_correlation", "11_is_it_better"))


def _raw_folder(s: Selection) -> str:
    """raw-productivity-<rule>[-n<fold size>][-seed<seed>], raw-systematicity-<train data>-<rule>[...] (with -SC or
    -UC when one split is chosen): another set, fold rule, size or seed is another result."""
    parts = ["raw-productivity"] if s.protocol == "productivity" else ["raw-systematicity", s.train_data]
    if s.protocol == "systematicity" and s.splits and len(s.splits) == 1:
        parts.append(s.splits[0])
    parts.append(s.fold_rule)
    if s.fold_size:
        parts.append(f"n{s.fold_size}")
    if s.fold_rule == "seeded" and s.fold_seed:
        parts.append(f"seed{s.fold_seed}")
    return "-".join(parts)


def _raw_agrees(selection: Selection) -> str | None:
    """Complexities select productivity's raw sets, a training set and splits systematicity's."""
    if selection.protocol == "systematicity" and selection.complexities:
        return ("complexities select productivity's raw sets; the systematicity raw sets are selected by "
                "--train-data and --splits (drop --complexities, or --protocol systematicity)")
    if selection.protocol == "productivity" and (selection.train_data or selection.splits):
        return ("train_data and splits select systematicity's raw sets: add --protocol systematicity "
                "(or drop --train-data and --splits)")
    return None


def _raw_for_model(selection: Selection, spec) -> Selection:
    """Systematicity's raw sets are the model's training set's split, as for crepe-systematicity."""
    return systematicity_for_model(selection, spec) if selection.protocol == "systematicity" else selection


RAW = Benchmark(
    name="crepe-raw", title="CREPE raw-set retrieval (app. B.2: folds, no hard negatives)",
    citation=f"{CITATION}, app. B.2", licence=LICENCE, datasets=(CREPE_CSVS, VISUAL_GENOME), rule=raw.RAW_RETRIEVAL,
    chance="per query: its positives / the fold's candidates (1/N text to image)", groups=raw.GROUPS,
    options=(Option("protocol", "which raw sets: productivity's (one a complexity) or systematicity's (one a split "
                                "of a training set's files)", raw.PROTOCOLS, default="productivity"),
             Option("complexities", "complexity n (productivity)", Q.COMPLEXITIES, type=int, many=True),
             Option("train_data", f"systematicity: the split of the model's training set ({', '.join(Q.SYST_TRAIN_DATA)} "
                                  "are released; any split whose files are in the data folder)"),
             Option("splits", "systematicity: seen (SC) or unseen (UC) compounds", tuple(Q.SYST_SPLITS), many=True),
             Option("fold_size", f"images a raw fold (N; default {raw.FOLD_SIZE['productivity']:,} for productivity, "
                                 f"{raw.FOLD_SIZE['systematicity']:,} for systematicity, app. B.2)", type=int),
             Option("max_folds", f"at most this many raw folds (K = min(this, floor(|D| / N)); app. B.2: "
                                 f"{raw.MAX_FOLDS})", type=int, default=raw.MAX_FOLDS),
             Option("fold_rule", "how raw folds are drawn: seeded (a seeded permutation) or contiguous (file order, "
                                 "as the released code's first commit sliced)", raw.FOLD_RULES, default="seeded"),
             Option("fold_seed", "the seed of the seeded fold rule", type=int, default=0)),
    load=raw.load_raw, folder=_raw_folder, agree=_raw_agrees, for_model=_raw_for_model,
    honours=frozenset({"on_bad_row"}), notebooks=("03_productivity",))

#: the paper's short name (captions, ``make check``)
PAPER = "CREPE"
BENCHMARKS = (SYSTEMATICITY, PRODUCTIVITY, RAW)
#: commands of its own (crepe_utils.cli)
COMMANDS = {"validate": (f"{__name__}.validation", "validate a CREPE data folder (and its images)")}
