"""Winoground (Thrush et al., CVPR 2022): 400 examples of two images and two captions with the same words.

It is evaluated through the one evaluation path (:mod:`crepe_utils.evaluation`): each image is one engine
query against its example's two captions (:mod:`.queries`), and its own scoring rule (:mod:`.rule`) turns the
four similarities of an example into the text, image and group scores (eq. 1–3).

``datasets``    its files on the Hugging Face hub, gated (``HF_TOKEN=... make data-winoground``)
``data``        the dataset in any published layout (folder, zip, parquet), images decoded by content
``metadata``    the text-only metadata (examples_text.tsv) joined with the why-hard labels
``queries``     the examples as engine queries, images identified by their bytes' digest
``scoring``     the paper's definitions: text / image / group flags with strict inequalities, tie flags, the
                first-index rule of argmax peers, chance levels
``statistics``  scores per subset (tags, secondary tags comma-split and exact, why-hard classes), the paper's
                4-group Student-t intervals and bootstrap intervals
``rule``        the scoring rule: the engine's scores → the per-example table and the summary
``results``     results read back; ``blind``: what a text-only scorer gets (always zero, ties counted)
``roster``, ``reported``, ``claims``  Table 3's checkpoints, its published numbers, its claims checked

Importing this package does not import torch or open_clip.
"""
from __future__ import annotations

import os

from ...protocol.benchmark import Benchmark, Option, TableColumns
from . import reported, results
from .data import LAYOUTS
from .datasets import WINOGROUND_FILES
from .queries import load
from .rule import WINOGROUND_RULE
from .statistics import GROUPINGS

def _examples(metric: str) -> int:
    return int(reported.released_counts()["examples"])


#: chance, %: enumerated over the 24 orders of four distinct scores
CHANCE = {"text": 25.0, "image": 25.0, "group": 100 / 6}
TABLE_COLUMNS = TableColumns(prefix="winoground", parts=("text", "image", "group"), group="metric",
                             label="Winoground", released=_examples, chance=CHANCE.__getitem__)

WINOGROUND = Benchmark(
    name="winoground", title="Winoground (two images, two captions, the same words)",
    citation="Thrush et al., Winoground: Probing Vision and Language Models for Visio-Linguistic "
             "Compositionality, CVPR 2022, §3, eq. 1-3, Table 3",
    licence="Winoground: its own terms (gated on the Hugging Face hub; accept them there)",
    datasets=(WINOGROUND_FILES,), rule=WINOGROUND_RULE,
    chance="enumerated over the 24 orders of four distinct scores: text 25, image 25, group 16.67",
    groups=(),                                   # its rule writes its own rows: subset × metric
    options=(Option("layout", "which copy when the folder holds several (default: detect)", LAYOUTS),
             Option("why_hard", "why_hard_tags.tsv for the why-hard breakdown: a path, 'none', or 'auto' (next "
                                "to the data when present)", type=(str, os.PathLike), default="auto"),
             Option("grouping", "how the 4 groups of the appendix-A interval are formed (id order)", GROUPINGS,
                    default="contiguous")),
    load=load, folder=lambda s: "winoground", notebooks=("05_winoground",), table_columns=TABLE_COLUMNS)

#: the paper's short name (captions, ``make check``)
PAPER = "Winoground"
BENCHMARKS = (WINOGROUND,)
