"""Winoground (Thrush et al., CVPR 2022) beside CREPE: data, scores, statistics, results.

It is evaluated through the one evaluation path (:mod:`crepe_utils.evaluation`, benchmark
:mod:`crepe_utils.benchmarks.winoground.benchmark`, scoring rule :mod:`crepe_utils.benchmarks.winoground.rule`); its
claims are checked in :mod:`crepe_utils.benchmarks.winoground.claims`.

Modules, one concern each:

``data``        the dataset in any published layout (folder, zip, parquet), images decoded by
                content
``metadata``    the text-only metadata (examples_text.tsv) joined with the why-hard labels
``scoring``     text / image / group flags with strict inequalities, tie flags, the first-index
                rule of argmax peers, chance levels
``statistics``  scores per subset (tags, secondary tags comma-split and exact, why-hard classes),
                the paper's 4-group Student-t intervals and bootstrap intervals
``results``     results read back
``blind``       what a text-only scorer gets (always zero, ties counted)

Importing this package does not import torch or open_clip.
"""
from .data import WinogroundData, load_dataset
from .metadata import load_examples, load_text_metadata
from .results import load_manifest, load_per_example, load_results
from .statistics import summary_table

__all__ = ["WinogroundData", "load_dataset", "load_examples", "load_text_metadata", "summary_table",
           "load_results", "load_per_example", "load_manifest"]
