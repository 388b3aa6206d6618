"""Analyses across benchmarks, one concern each: what blind scorers reach on every benchmark (``blind`` with its
claims, figures and sentences), vl_compo's 202 checkpoints against the benchmarks' releases and papers (``field``
with its claims and figures), and one model's numbers on one benchmark beside another's (``cross``). What is one
benchmark's own lives in its folder under :mod:`crepe_utils.benchmarks`."""
