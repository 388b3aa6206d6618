"""Winoground (Thrush et al., CVPR 2022) beside CREPE: data, scores, statistics, results.

Its claims are checked in :mod:`crepe_utils.claims.winoground`.

Modules, one concern each:

``data``        the dataset in any published layout (folder, zip, parquet), images decoded by
                content
``metadata``    the text-only metadata (examples_text.tsv) joined with the why-hard labels
``scoring``     text / image / group flags with strict inequalities, tie flags, the first-index
                rule of argmax peers, chance levels
``statistics``  scores per subset (tags, secondary tags comma-split and exact, why-hard classes),
                the paper's 4-group Student-t intervals and bootstrap intervals
``evaluation``  encode each image and caption once with a loaded model and score every example
``results``     write one evaluation atomically, read results back
``cli``         ``python -m crepe_utils winoground`` and :func:`evaluate_to_folder`

Importing this package does not import torch or open_clip.
"""
from .cli import add_arguments, evaluate_to_folder, run
from .data import WinogroundData, load_dataset
from .evaluation import Evaluation, evaluate
from .metadata import load_examples, load_text_metadata
from .results import load_manifest, load_per_example, load_results, write_results
from .statistics import summarize

__all__ = ["WinogroundData", "Evaluation", "load_dataset", "load_examples", "load_text_metadata", "evaluate", "summarize",
           "write_results", "load_results", "load_per_example", "load_manifest",
           "evaluate_to_folder", "add_arguments", "run"]
