"""The claims by topic: what each notebook's check cell lists, assembled once for it and for ``make check``.

``totals_checks``         notebook 01: chance levels, dataset totals, productivity totals, granularity
``systematicity_checks``  notebook 02: printed deltas, headline drop, HN-Comp direction, evaluated vs published
``productivity_checks``   notebook 03: trends, evaluated vs published
``r2_checks``             notebook 04: R² per ImageNet source (HN-Swap n = 8 from complete evaluated results)

Each topic is built by its ``*_sections`` function as named sections of rows; the topic function
returns them concatenated. ``make check`` (:func:`crepe_utils.commands.checks.run_all`) lists
every section of every topic, in an order of its own (:data:`crepe_utils.commands.checks.MAKE_CHECK_ORDER`),
so a claim added to a topic appears in both. The defaults are ``make check``'s: the data folder
``$CREPE_DATA/crepe``, no evaluated results.

``results`` arguments take a results folder or the table already loaded from one
(:func:`crepe_utils.results.store.load_results`).
"""
from __future__ import annotations

from ... import paths
from . import reported
from ...models import imagenet
from . import analysis as analysis
from . import systematicity as analysis_systematicity
from . import queries as D
from . import validation
from ...results import store
from . import checks as crepe_claims
from ...claims.base import FAIL, Check, Topic
from .datasets import CREPE_CSVS
from ...lazy import lazy

pd = lazy("pandas")

Sections = dict[str, list[Check]]


def _flat(sections: Sections) -> list[Check]:
    return [row for rows in sections.values() for row in rows]


def _crepe_results(results) -> pd.DataFrame:
    """A CREPE results table: ``results`` itself, or loaded from the folder it names (None: none)."""
    return results if isinstance(results, pd.DataFrame) else store.load_results(results)


def data_report(data_dir=None, token_lengths: bool = False):
    """The validation report of the CREPE data folder (``$CREPE_DATA/crepe`` by default); None without one."""
    crepe = CREPE_CSVS.existing(data_dir)
    return validation.validate(crepe, token_lengths=token_lengths) if crepe is not None else None


def _has_real(evaluated: pd.DataFrame) -> bool:
    """Whether any row is compared with the paper (kind "evaluated"; a table without kinds counts as such)."""
    return not evaluated.empty and ("kind" not in evaluated or bool((evaluated["kind"] == "evaluated").any()))


# ------------------------------------------------------------------ helpers on the data folder

def _present_productivity_queries(crepe, report) -> list:
    """The queries of the productivity CSVs that validation found (all 27 or fewer)."""
    if report is None or not report.ok or report.files.empty:
        return []
    files = report.files[report.files["benchmark"] == "productivity"]
    return [q for hn, n in zip(files["hn_type"], files["complexity"])
            for q in D.load_productivity(crepe, [hn], [int(n)]).queries]


def _all_negatives_sizes(prod_queries: list, report) -> set[int] | None:
    """Candidate counts of the all-negatives sets built from the present files; ``None`` when there is
    nothing to build from (a partial folder may hold no HN-type triple; the full release must)."""
    if not prod_queries:
        return None
    built = D.all_negatives_sets(D.QuerySet(prod_queries))
    full = (report.files["benchmark"] == "productivity").sum() == len(D.PROD_HN_TYPES) * len(D.COMPLEXITIES)
    return {len(q.candidates) for q in built} if len(built) or full else None


#: (train_data, HN type, split) → rows of that present systematicity CSV (every row a query when kept).
systematicity_query_counts = analysis_systematicity.query_counts


# ------------------------------------------------------------------ totals (notebook 01)

def totals_sections(data_dir=None, report=None) -> Sections:
    """``paper``: chance levels and the paper's totals; ``data``: the released productivity files
    (pinned counts, granularity, and a failed row when the folder does not validate).

    ``report``: the folder's validation report when already computed (None: validated here).
    """
    crepe = CREPE_CSVS.existing(data_dir)
    if report is None:
        report = data_report(data_dir)
    prod_queries = _present_productivity_queries(crepe, report)
    paper = (crepe_claims.check_chance_levels(all_negatives_sizes=_all_negatives_sizes(prod_queries, report))
             + crepe_claims.check_dataset_totals())
    data = crepe_claims.check_productivity_totals(report.stats if report is not None and report.stats else None)
    data += crepe_claims.check_granularity(reported.productivity(),
                                           validation.query_counts(prod_queries) if prod_queries else None)
    if report is not None and not report.ok:
        data.append(Check("The CREPE data folder validates", "no errors", f"{len(report.errors)} error(s)", FAIL,
                          "; ".join(report.errors[:3]), "data"))
    return {"paper": paper, "data": data}


def totals_checks(data_dir=None, report=None) -> list[Check]:
    """Notebook 01's checks: chance levels, dataset totals, productivity totals, granularity."""
    return _flat(totals_sections(data_dir, report))


# ------------------------------------------------------------------ systematicity (notebook 02)

def systematicity_sections(results=None, report=None, data_dir=None, published: bool = True) -> Sections:
    """``published``: the paper's systematicity numbers against themselves (empty when ``published``
    is False); ``evaluated``: evaluated R@1 against the published, complete results only (the
    expected query counts come from the data folder's ``report``, validated here when needed)."""
    evaluated = _crepe_results(results)
    syst_ev = evaluated[evaluated["benchmark"] == "systematicity"]
    if report is None and (published or _has_real(syst_ev)):   # the query counts give intervals and completeness
        report = data_report(data_dir)
    pub = ((crepe_claims.check_printed_deltas() + crepe_claims.check_headline_drop()
            + crepe_claims.check_comp_direction(query_counts=systematicity_query_counts(report)))
           if published else [])
    ev = crepe_claims.check_evaluated_against_published(
        syst_ev, reported.systematicity()[["model", "hn_type", "split", "r1"]], ["model", "hn_type", "split"],
        what="systematicity", count_keys=["train_data", "hn_type", "split"],
        expected_queries=systematicity_query_counts(report))
    return {"published": pub, "evaluated": ev}


def systematicity_checks(results=None, report=None, data_dir=None, published: bool = True) -> list[Check]:
    """Notebook 02's checks: printed deltas, headline drop, HN-Comp direction, evaluated against published."""
    return _flat(systematicity_sections(results, report, data_dir, published))


# ------------------------------------------------------------------ productivity (notebook 03)

def productivity_sections(results=None, published: bool = True) -> Sections:
    """``published``: the trends of the published numbers (empty when ``published`` is False);
    ``evaluated``: evaluated R@1 against the published, complete results only."""
    evaluated = _crepe_results(results)
    pub = crepe_claims.check_productivity_trends() if published else []
    ev = crepe_claims.check_evaluated_against_published(
        evaluated[evaluated["benchmark"] == "productivity"],
        reported.productivity()[["model", "hn_type", "complexity", "r1"]], ["model", "hn_type", "complexity"],
        what="productivity", count_keys=["hn_type", "complexity"],
        expected_queries=reported.released_productivity_queries())
    return {"published": pub, "evaluated": ev}


def productivity_checks(results=None, published: bool = True) -> list[Check]:
    """Notebook 03's checks: productivity trends, evaluated against published."""
    return _flat(productivity_sections(results, published))


# ------------------------------------------------------------------ R² (notebook 04)

def r2_sections(results=None, sources=imagenet.SOURCES) -> Sections:
    """``r2``: every R² of §5.4 per ImageNet source; HN-Swap n = 8 from complete evaluated results
    of at least three models (the paper prints no R@1 there)."""
    evaluated = _crepe_results(results)
    rows = []
    for source in sources:
        swap8 = analysis.evaluated_swap_r2_inputs(evaluated, 8, source)   # complete results only
        rows += crepe_claims.check_r2(source=source, evaluated_swap8=swap8 if len(swap8) >= 3 else None)
    return {"r2": rows}


def r2_checks(results=None, sources=imagenet.SOURCES) -> list[Check]:
    """Notebook 04's checks: R² against ImageNet for each of ``sources``."""
    return _flat(r2_sections(results, sources))


# ------------------------------------------------------------------ make check

TOPICS = {"totals": Topic(totals_checks, "01_benchmark_totals"),
          "systematicity": Topic(systematicity_checks, "02_systematicity"),
          "productivity": Topic(productivity_checks, "03_productivity"),
          "r2": Topic(r2_checks, "04_imagenet_correlation")}

#: The order of CREPE's rows in ``make check``: the paper's own numbers first, then the data, then evaluated results.
ORDER = (("totals", "paper"), ("systematicity", "published"), ("productivity", "published"), ("r2", "r2"),
         ("totals", "data"), ("productivity", "evaluated"), ("systematicity", "evaluated"))


def sections(results_dir=None, data_dirs=None, token_lengths: bool = False) -> dict[tuple[str, str], list[Check]]:
    """Every section of every CREPE topic: (topic, section) → rows (the data folder validated once for all)."""
    data_dir = (data_dirs or {}).get("crepe")
    report = data_report(data_dir, token_lengths=token_lengths)
    evaluated = store.load_results(results_dir)
    by_topic = {"totals": totals_sections(data_dir, report),
                "systematicity": systematicity_sections(evaluated, report, data_dir),
                "productivity": productivity_sections(evaluated), "r2": r2_sections(evaluated)}
    return {(topic, name): rows for topic, parts in by_topic.items() for name, rows in parts.items()}
