"""VALSE (Parcalabescu et al., ACL 2022, arXiv 2112.07566): eleven pieces of caption–foil pairs, each foil the
caption with one linguistic phenomenon changed (existence, plurality, counting, spatial relations, actions,
coreference) and FOIL-it's noun-phrase foils.

Scored as the paper scores contrastive models: pairwise accuracy, the caption scored strictly above its foil
(image-to-text retrieval among the two; a tie counts against, and is counted), on the *valid* set the authors
define (at least two of three annotators chose the caption and not the foil) unless ``subset="full"``. Each piece
is one results row. The images are each piece's source dataset's: Visual7W (existence, counting), COCO 2017
(plurals, relations), COCO 2014 (FOIL-it, coreference-standard), SWiG (actions), Visual Dialog (coreference-hard).

``datasets``  the eleven JSONs, pinned (``make data-valse``); the image sets in :mod:`crepe_utils.imagesets`
``data``      the JSONs → :class:`~.data.Item` s (two candidates, the caption first, the whole image)
``reported``  the paper's published averages, and the released files' pinned counts
``analysis``, ``figures``  counts, the blind scorers per piece, what VALSE balanced; ``claims``: checked claims
"""
from __future__ import annotations

import functools

from ...digests import sha256_file
from ...imagesets import Composite
from ...imagesets.coco import COCO, COCO2014, Coco2014Images, CocoImages
from ...imagesets.swig import SWIG, SwigImages
from ...imagesets.visdial import VISDIAL, VisdialImages
from ...imagesets.visual7w import VISUAL7W, Visual7wImages
from ...protocol.benchmark import Benchmark, Loaded, Option, Selection, Sources, TableColumns, limited
from ...protocol.retrieval import RETRIEVAL
from . import reported
from .data import PIECE_NAMES, SUBSETS, load_items
from .datasets import VALSE_JSONS

GROUPS = ("piece",)
#: each image set the items name → its index (built only when a run needs its images)
IMAGE_SETS = {"visual7w": Visual7wImages, "swig": SwigImages, "coco": CocoImages, "coco2014": Coco2014Images,
              "visdial": VisdialImages}


def load(sources: Sources, selection: Selection, settings) -> Loaded:
    root = VALSE_JSONS.dir(sources.data_dir)
    items = load_items(root, selection.pieces or PIECE_NAMES, selection.subset)
    data = {"data_dir": str(root), "subset": selection.subset,
            "files_sha256": {name: sha256_file(root / name) for name in sorted(items.files)},
            "rows_read": dict(items.files), "valid": dict(items.valid), "identical_texts": dict(items.identical)}
    if sources.image_dir:      # one folder for every set: the pieces chosen read one set
        images = functools.cache(lambda: Composite({k: functools.partial(v, sources.image_dir)
                                                    for k, v in IMAGE_SETS.items()}))
    else:
        images = functools.cache(lambda: Composite(IMAGE_SETS))
    return Loaded(limited(items.items, settings.limit, GROUPS), [], dict(items.files), images, data,
                  sets=tuple((p,) for p in PIECE_NAMES if p in (selection.pieces or PIECE_NAMES)))


def _pinned(quantity: str, piece: str) -> int:
    return int(reported.released_counts()[f"{quantity}:{piece}"])


#: vl_compo's table scores the valid set of each piece; the full set is the other count it could be
TABLE_COLUMNS = TableColumns(prefix="valse", parts=PIECE_NAMES, group="piece", label="VALSE (valid set)",
                             released=lambda piece: _pinned("valid", piece), chance=lambda part: 50.0,
                             alternatives=lambda piece: [("full set", _pinned("items", piece))],
                             pooling=lambda manifest: "its piece's row, " + (
                                 "the valid set, as the field counts it"
                                 if (manifest.get("selection") or {}).get("subset", "valid") == "valid"
                                 else "every item (the field counts the valid set only)"))

VALSE = Benchmark(
    name="valse", title="VALSE (caption against foil, eleven linguistic pieces)",
    citation="Parcalabescu et al., VALSE: A Task-Independent Benchmark for Vision and Language Models Centered on "
             "Linguistic Phenomena, ACL 2022, §3-5",
    licence="VALSE: MIT (Heidelberg-NLP/VALSE); images: their source datasets' terms (COCO's Flickr licences, "
            "Visual7W, SWiG/imSitu, Visual Dialog CC BY 4.0)",
    datasets=(VALSE_JSONS, VISUAL7W, COCO, COCO2014, SWIG, VISDIAL), rule=RETRIEVAL,
    chance="1/2: the caption against its one foil", groups=GROUPS,
    options=(Option("pieces", "VALSE's pieces", PIECE_NAMES, many=True),
             Option("subset", "valid (the authors' validated set, default) or full (every item)", SUBSETS,
                    default="valid")),
    load=load, folder=lambda s: "valse" if s.subset == "valid" else f"valse-{s.subset}",
    honours=frozenset({"limit"}), notebooks=("09_valse",), table_columns=TABLE_COLUMNS)

#: the paper's short name (captions, ``make check``)
PAPER = "VALSE"
BENCHMARKS = (VALSE,)
