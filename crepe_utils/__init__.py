"""crepe_utils: a reproducible companion to CREPE (Ma et al., CVPR 2023) and Winoground.

Packages and modules, one concern each, in layers (docs/package.md, one line each; tests/test_architecture.py):

``errors``, ``paths``, ``atomic``, ``kernel``, ``metrics``, ``progress``
                 the error base class, where data live, atomic writers, ranks and intervals, progress bars
``models``       the paper's models as one table (``registry``) and one interface per model family
``download``     the dataset table and resumable, verified downloads (``make data``)
``reported``     the papers' published numbers
``engine``       decoding and the official crop; deduplicated, batched, cached encoding and scoring
``results``      the results format, provenance, completeness
``crepe``        CREPE's CSVs → queries, its images, the validation report, one model evaluated
``winoground``   Winoground data, scores, statistics, evaluation
``analysis``     the notebooks' tables, R² against ImageNet accuracy, one style for figures and tables
``claims``       checks of every claim (pass / fail / paper inconsistency)
``toy``, ``site``, ``notebooks``
                 the compositional toy world; the website and its browser check; papermill runs
``cli``, ``api`` ``python -m crepe_utils ...``; the Python entry points below

Entry points for notebooks and scripts (see README): ``crepe_utils.evaluate`` (any benchmark),
``load_results``, ``load_winoground_results``, ``toy_world`` (in :mod:`crepe_utils.api`).

Importing the package is cheap: torch and open_clip are imported only by the functions that
need them.
"""
__version__ = "0.1.0"

#: The Python entry points (``crepe_utils.evaluate(...)``), loaded from :mod:`crepe_utils.api` on first use.
API = ("evaluate", "Run", "Selection", "EvaluationSettings", "load_results", "load_winoground_results", "toy_world")


def __getattr__(name: str):
    if name in API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'crepe_utils' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(API))
