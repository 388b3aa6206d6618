"""Scoring rules: the engine's scores → a benchmark's numbers. One module per rule, each with one
``evaluate(result, loaded, settings) -> Tables``; pure functions over scores.

``retrieval``   image-to-text Recall@K of the positive among a query's candidates, with the tie rules
                (CREPE, SugarCrepe)
``winoground``  Winoground's text, image and group scores from each example's four similarities
``tables``      what a rule returns: the summary, the per-query log and how each is written
"""
from . import retrieval
from ..benchmarks.winoground import rule as winoground
from .tables import Tables

RULES = {"retrieval": retrieval, "winoground": winoground}

__all__ = ["RULES", "Tables", "retrieval", "winoground"]
