"""SugarCrepe (Hsieh et al., NeurIPS 2023 Datasets and Benchmarks) beside CREPE: its seven subsets of
image–caption–negative pairs and their COCO val2017 images.

Its published numbers are checked in :mod:`crepe_utils.benchmarks.sugarcrepe.claims`.

``data``    the seven released JSONs → :class:`Pair` s (the evaluation engine's queries: two
            candidates, the positive first, the whole image)
``images``  COCO val2017 images by file name, for the engine
"""
from .data import SUBSETS, ItemIssue, Pair, PairSet, load_pairs
from ...imagesets.coco import CocoImages

__all__ = ["SUBSETS", "CocoImages", "ItemIssue", "Pair", "PairSet", "load_pairs"]
