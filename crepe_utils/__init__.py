"""crepe_utils: a reproducible companion to CREPE (Ma et al., CVPR 2023) and Winoground.

Modules, one concern each:

``paths``        where data live (environment variables, defaults)
``datasets``     every downloadable dataset, pinned and described in one table
``download``     resumable, verified downloads (``make data``)
``data``         CREPE CSVs → retrieval queries
``images``       Visual Genome lookup and the official crop
``validation``   the data validation report
``registry``     the paper's models, as one declarative table
``models``       model families (open_clip, CyCLIP, ALBEF, FLAVA, transformers CLIP): loading, guards, provenance
``engine``       deduplicated, batched, cached, resumable encoding and scoring
``metrics``      ranks (explicit ties), Recall@K, bootstrap intervals
``results``      the results format (summary, per-query, manifest)
``published``    the papers' published numbers
``correlation``  R² against ImageNet accuracy with intervals
``checks``       checks of every claim (pass / fail / paper inconsistency)
``reporting``    tables (CSV, Markdown, LaTeX) and figures (PNG, SVG) in one style
``winoground``   Winoground data and scores
``toy``          the compositional toy world

Entry points for notebooks and scripts (see README): ``crepe_utils.evaluate``, ``load_results``,
``evaluate_winoground``, ``load_winoground_results``, ``toy_world`` (in :mod:`crepe_utils.api`).

Importing the package is cheap: torch and open_clip are imported only by the functions that
need them.
"""
__version__ = "0.1.0"

#: The Python entry points (``crepe_utils.evaluate(...)``), loaded from :mod:`crepe_utils.api` on first use.
API = ("evaluate", "load_results", "evaluate_winoground", "load_winoground_results", "toy_world")


def __getattr__(name: str):
    if name in API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'crepe_utils' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(API))
