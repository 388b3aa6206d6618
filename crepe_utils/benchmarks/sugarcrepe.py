"""SugarCrepe (Hsieh et al., NeurIPS 2023): a COCO val2017 image, its caption and one hard negative.

Scored as the official ``main_eval.py`` scores it: image-to-text, the positive against its one negative,
a tie counted as wrong (the retrieval rule's pessimistic rank; :mod:`crepe_utils.scoring.retrieval`), with
the companion's tie counts and intervals beside it. Each of the seven subsets is one retrieval set (the
``hn_type`` column of the retrieval tables).
"""
from __future__ import annotations

import functools
from collections import Counter

from .. import paths
from ..crepe.queries import Query
from ..models import sha256_file
from ..sugarcrepe.data import SUBSETS, load_pairs
from ..sugarcrepe.images import CocoImages
from .spec import Benchmark, Loaded, Selection, Sources


def load(sources: Sources, selection: Selection, settings) -> Loaded:
    chosen = [s for s in SUBSETS if s in (selection.subsets or SUBSETS)]
    pairs = load_pairs(sources.data_dir, chosen)
    root = paths.sugarcrepe_dir(sources.data_dir)
    queries = [Query(benchmark="sugarcrepe", hn_type=p.subset, split="", complexity=None, train_data="",
                     image_id=p.image_id, box=None, positive=p.positive, negatives=(p.negative,), source=p.source,
                     positive_in_negatives=p.positive == p.negative) for p in pairs]
    if settings.limit:                                  # at most `limit` pairs per subset, in file order
        rank = Counter()
        kept = []
        for q in queries:
            rank[q.hn_type] += 1
            if rank[q.hn_type] <= settings.limit:
                kept.append(q)
        queries = kept
    data = {"data_dir": str(root), "image_dir": str(paths.coco_images_dir(sources.image_dir)),
            "files_sha256": {name: sha256_file(root / name) for name in sorted(pairs.files)},
            "rows_read": dict(pairs.files), "issues": dict(pairs.issue_counts())}
    return Loaded(queries, [], dict(pairs.files), functools.cache(lambda: CocoImages(sources.image_dir)), data,
                  sets=tuple(("sugarcrepe", "", subset, "", None) for subset in chosen))


SUGARCREPE = Benchmark(
    name="sugarcrepe", title="SugarCrepe (COCO images, one fluent hard negative per caption)",
    citation="Hsieh et al., SugarCrepe: Fixing Hackable Benchmarks for Vision-Language Compositionality, "
             "NeurIPS 2023 Datasets and Benchmarks, §3, Table 2",
    licence="SugarCrepe: MIT (RAIVNLab/sugar-crepe); COCO images: their Flickr licences (CC BY and others)",
    datasets=("sugarcrepe", "coco"), scoring="retrieval", chance="1/2: one positive, one negative",
    selects={"subsets": SUBSETS}, load=load, folder=lambda s: "sugarcrepe")
