"""crepe_utils: a reproducible companion to CREPE (Ma et al., CVPR 2023) and the benchmarks beside it.

Packages and modules, one concern each, in layers (docs/package.md, one line each; tests/test_architecture.py),
lowest first:

``errors``, ``paths``, ``atomic``, ``kernel``, ``metrics``, ``packaged``, ``progress``, ``textfile``, ``digests``
                 the error base class, where data live, atomic writers, ranks and intervals, tables carried in
                 the package, progress bars, users' text files, file digests
``blind``        text-only scorers
``models``       one table of checkpoints (``checkpoints``, ImageNet beside it) and one interface per family
``download``     what a dataset is, and resumable, verified downloads
``engine``       decoding and the official crop; deduplicated, batched, cached encoding and scoring
``settings``     every setting that can change a number
``results``      the results format, provenance, completeness
``protocol``, ``imagesets``
                 what a benchmark declares and the shared retrieval rule; the image sets benchmarks share
``analysis``, ``claims``
                 one style for figures and tables, R²; the check row of every claim
``benchmarks``   the registry, and one folder per benchmark holding everything that is its own
``evaluation``, ``evaluate_command``, ``runs``
                 ``evaluate()``, its command, and many jobs on one device or several
``across``       analyses across benchmarks: blind scorers, the field's 202 checkpoints, one benchmark beside another
``commands``     the commands that span the benchmarks: ``check``, ``models``, ``download`` and the released text
``chapters``     the notebooks as pages, and a notebook's own material beside its name (the teaching notebook, 00)
``versus``       is B better than A (paired by query), and where results stand among the field's checkpoints
``toy``, ``site``, ``notebooks``
                 the compositional toy world; the website and its browser check; papermill runs
``cli``, ``api`` ``python -m crepe_utils ...``; the Python entry points below

Entry points for notebooks and scripts (see README): ``crepe_utils.evaluate`` (any benchmark),
``load_results`` (any scoring rule), ``toy_world``, ``compare`` (two results paired by query) and ``standing``
(results among the field's 202 checkpoints) (in :mod:`crepe_utils.api`).

Importing the package is cheap: torch and open_clip are imported only by the functions that
need them.
"""
__version__ = "0.1.0"

#: The Python entry points (``crepe_utils.evaluate(...)``), loaded from :mod:`crepe_utils.api` on first use.
API = ("evaluate", "Run", "Selection", "EvaluationSettings", "load_results", "toy_world", "compare", "standing")


def __getattr__(name: str):
    if name in API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'crepe_utils' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(API))
