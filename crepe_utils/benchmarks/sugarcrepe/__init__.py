"""SugarCrepe (Hsieh et al., NeurIPS 2023 D&B): a COCO val2017 image, its caption and one hard negative.

Scored as the official ``main_eval.py`` scores it: image-to-text, the positive against its one negative,
a tie counted as wrong (the retrieval rule's pessimistic rank; :mod:`crepe_utils.protocol.retrieval`), with
the companion's tie counts and intervals beside it. Each of the seven subsets is one results row.

``datasets``  the seven JSONs, pinned (``make data-sugarcrepe``); the images are COCO val2017's
              (:mod:`crepe_utils.imagesets.coco`)
``data``      the JSONs → :class:`~.data.Pair` s (the engine's queries: two candidates, the positive first)
``roster``    the 17 checkpoints of its results table, under its names
``reported``  the results table, its ImageNet correlations, the JSONs' pinned counts
``analysis``, ``figures``  notebook 08's tables and figures; ``claims``: its claims, checked
"""
from __future__ import annotations

import functools

from ...digests import sha256_file
from ...imagesets.coco import COCO, CocoImages
from ...protocol.benchmark import Benchmark, Loaded, Option, Selection, Sources, TableColumns, limited
from ...protocol.retrieval import RETRIEVAL
from . import reported, roster
from .data import SUBSETS, load_pairs
from .datasets import SUGARCREPE_JSONS

GROUPS = ("subset",)


def load(sources: Sources, selection: Selection, settings) -> Loaded:
    chosen = [s for s in SUBSETS if s in (selection.subsets or SUBSETS)]     # the paper's order
    pairs = load_pairs(sources.data_dir, chosen)
    root = SUGARCREPE_JSONS.dir(sources.data_dir)
    data = {"data_dir": str(root), "image_dir": str(COCO.dir(sources.image_dir)),
            "files_sha256": {name: sha256_file(root / name) for name in sorted(pairs.files)},
            "rows_read": dict(pairs.files), "issues": dict(pairs.issue_counts())}
    return Loaded(limited(pairs.pairs, settings.limit, GROUPS), [], dict(pairs.files),
                  functools.cache(lambda: CocoImages(sources.image_dir)), data, sets=tuple((s,) for s in chosen))


#: the subset whose published values count an earlier release (the quantity prefix of its pinned counts)
EARLIER = "pairs_before_546eb51"


def _pinned(quantity: str, subset: str) -> int | None:
    value = reported.released_counts().get(f"{quantity}:{subset}")
    return None if value is None else int(value)


TABLE_COLUMNS = TableColumns(
    prefix="sugarcrepe", parts=("replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att", "add_obj",
                                "add_att"),
    group="subset", label="SugarCrepe", released=lambda subset: _pinned("pairs", subset), chance=lambda part: 50.0,
    alternatives=lambda subset: [("before 546eb51", n)] if (n := _pinned(EARLIER, subset)) is not None else [],
    pooling=lambda manifest: "its subset's row: the same items")

SUGARCREPE = Benchmark(
    name="sugarcrepe", title="SugarCrepe (COCO images, one fluent hard negative per caption)",
    citation="Hsieh et al., SugarCrepe: Fixing Hackable Benchmarks for Vision-Language Compositionality, "
             "NeurIPS 2023 Datasets and Benchmarks, §3, Table 2",
    licence="SugarCrepe: MIT (RAIVNLab/sugar-crepe); COCO images: their Flickr licences (CC BY and others)",
    datasets=(SUGARCREPE_JSONS, COCO), rule=RETRIEVAL, chance="1/2: one positive, one negative", groups=GROUPS,
    options=(Option("subsets", "SugarCrepe's subsets", SUBSETS, many=True),),
    load=load, folder=lambda s: "sugarcrepe", roster=tuple(roster.keys()), honours=frozenset({"limit"}),
    table_columns=TABLE_COLUMNS,
    notebooks=("08_sugarcrepe",))

#: the paper's short name (captions, ``make check``)
PAPER = "SugarCrepe"
BENCHMARKS = (SUGARCREPE,)
