"""The neutral protocol below every benchmark: what a benchmark declares, and the shared scoring rule.

``benchmark``  the declaration (:class:`Benchmark`): datasets, grouping fields, selection options, scoring rule
``retrieval``  image-to-text retrieval: the positive ranked among a query's own candidates, with the tie rules
``tables``     what a scoring rule returns: the summary, the per-query log and how each is written
"""
from .benchmark import Benchmark, Loaded, Option, ScoringRule, Selection, SelectionError, Sources
from .retrieval import RETRIEVAL
from .tables import Tables

__all__ = ["Benchmark", "Loaded", "Option", "RETRIEVAL", "ScoringRule", "Selection", "SelectionError", "Sources",
           "Tables"]
