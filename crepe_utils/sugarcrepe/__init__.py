"""SugarCrepe (Hsieh et al., NeurIPS 2023 Datasets and Benchmarks) beside CREPE: its seven subsets of
image–caption–negative pairs.

Its published numbers are checked in :mod:`crepe_utils.claims.sugarcrepe`.

``data``    the seven released JSONs → :class:`Pair` s (the evaluation engine's queries: two
            candidates, the positive first, the whole image)
"""
from .data import SUBSETS, ItemIssue, Pair, PairSet, load_pairs

__all__ = ["SUBSETS", "ItemIssue", "Pair", "PairSet", "load_pairs"]
