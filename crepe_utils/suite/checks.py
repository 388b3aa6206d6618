"""``make check``: every claim of the papers that the available data and results allow.

The rows are the topics' of :mod:`crepe_utils.benchmarks.crepe.topics` (what notebooks 01–05 check), of
Winoground (notebook 05), of the blind baselines (notebook 07) and of SugarCrepe (notebook 08), every section
of each, listed in :data:`MAKE_CHECK_ORDER`.
"""
from __future__ import annotations

import sys
import warnings

from ..analysis.reporting import claims_page_current, update_claims_page, write_table
from ..results import store
from ..benchmarks.winoground import results as winoground_results
from . import blind_claims as blind_claims
from ..benchmarks.sugarcrepe import claims as sugarcrepe_claims
from ..benchmarks.crepe import topics
from ..benchmarks.winoground import claims as winoground_claims
from ..claims.base import Check, failures, to_frame

#: Topic name → (its sections function, its checks function, the notebook whose check cell calls it, or None).
TOPICS = {
    "totals": (topics.totals_sections, topics.totals_checks, "01_benchmark_totals"),
    "systematicity": (topics.systematicity_sections, topics.systematicity_checks, "02_systematicity"),
    "productivity": (topics.productivity_sections, topics.productivity_checks, "03_productivity"),
    "r2": (topics.r2_sections, topics.r2_checks, "04_imagenet_correlation"),
    "winoground": (winoground_claims.winoground_sections, winoground_claims.winoground_checks, "05_winoground"),
    "sugarcrepe": (sugarcrepe_claims.sugarcrepe_sections, sugarcrepe_claims.sugarcrepe_checks,
                   "08_sugarcrepe"),
    "blind": (blind_claims.blind_sections, blind_claims.blind_checks, "07_blind_baselines"),
}

#: The order of ``make check``'s rows: (topic, section) of :mod:`crepe_utils.benchmarks.crepe.topics`. The
#: paper's own numbers come first, then the data, then evaluated results; every section of every
#: topic appears exactly once (:func:`run_all` refuses otherwise).
MAKE_CHECK_ORDER = (("totals", "paper"), ("systematicity", "published"), ("productivity", "published"), ("r2", "r2"),
                    ("totals", "data"), ("productivity", "evaluated"), ("systematicity", "evaluated"),
                    ("winoground", "data"), ("winoground", "table3"),
                    ("sugarcrepe", "published"), ("sugarcrepe", "data"), ("blind", "blind"))


def run_all(data_dir=None, results_dir=None, token_lengths: bool = False) -> list[Check]:
    """Every check that the available data and results allow (the `make check` list)."""
    report = topics.data_report(data_dir, token_lengths=token_lengths)
    evaluated = store.load_results(results_dir)
    sections = {"totals": topics.totals_sections(data_dir, report),
                "systematicity": topics.systematicity_sections(evaluated, report, data_dir),
                "productivity": topics.productivity_sections(evaluated),
                "r2": topics.r2_sections(evaluated),
                "winoground": winoground_claims.winoground_sections(results_dir),
                "sugarcrepe": sugarcrepe_claims.sugarcrepe_sections(),
                "blind": blind_claims.blind_sections(data_dir)}
    built = sorted((topic, name) for topic, parts in sections.items() for name in parts)
    if built != sorted(MAKE_CHECK_ORDER) or set(sections) != set(TOPICS):
        raise RuntimeError(f"MAKE_CHECK_ORDER {sorted(MAKE_CHECK_ORDER)} does not list the topics' sections {built}")
    return [row for topic, name in MAKE_CHECK_ORDER for row in sections[topic][name]]


def add_arguments(parser) -> None:
    parser.add_argument("--data-dir", default=None, help="CREPE CSVs (default: $CREPE_DATA/crepe, i.e. ./data/crepe)")
    parser.add_argument("--results-dir", default="results/evaluated", help="evaluated results (if any)")
    parser.add_argument("--tables-dir", default="tables", help="where checks.{csv,md,tex} are written")
    # --readme and --verify-readme: the names from when the table lived in README.md
    parser.add_argument("--claims-page", "--readme", dest="claims_page", default=None, metavar="PAGE",
                        help="also refresh the claims table in this page (docs/claims.md)")
    parser.add_argument("--verify-claims-page", "--verify-readme", dest="verify_claims_page", default=None,
                        metavar="PAGE", help="exit non-zero when this page's claims table differs from the checks "
                        "just run")


def fail_reach_note(checks: list[Check]) -> str:
    """The closing note: how many rows can reach ``fail`` (the others compare the paper with itself)."""
    can = sum(c.can_fail for c in checks)
    return (f"{can} of {len(checks)} rows can fail; the other {len(checks) - can} compare the paper with itself "
            "(no fault of ours can show there)")


def duplicate_claims(checks: list[Check]) -> list[str]:
    """Claim texts that appear more than once (each claim must be listed once)."""
    seen: dict[str, int] = {}
    for c in checks:
        seen[c.claim] = seen.get(c.claim, 0) + 1
    return sorted(claim for claim, n in seen.items() if n > 1)


def checks_and_unreadable(data_dir, results_dir) -> tuple[list[Check], list[str]]:
    """:func:`run_all`'s rows, and one line (the file, why, what is left out) for each result file that cannot
    be read: manifests and summaries, whose results run_all leaves out, and the per-query and per-example
    tables, read through here because the notebooks' statistics need them."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", store.UnreadableResultWarning)
        checks = run_all(data_dir, results_dir)
        store.verify_tables(results_dir, store.gzip_through)
        winoground_results.verify_per_example(results_dir)
    unreadable = []
    for w in caught:
        if issubclass(w.category, store.UnreadableResultWarning):
            if str(w.message) not in unreadable:    # a damaged manifest is met by every reader of results
                unreadable.append(str(w.message))
        else:                                   # any other warning is shown as it would have been
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return checks, unreadable


def run(args) -> int:
    checks, unreadable = checks_and_unreadable(args.data_dir, args.results_dir)
    df = to_frame(checks)
    write_table(df, "checks", args.tables_dir,
                caption="Every checked claim of the CREPE, Winoground and SugarCrepe papers")
    if args.claims_page:
        update_claims_page(args.claims_page, df)
    counts = df["status"].value_counts()
    width = max(len(c.claim) for c in checks)
    for c in checks:
        print(f"{c.status:>20}  {c.claim:<{width}}  paper: {c.paper}  ours: {c.ours}")
    print("\n" + ", ".join(f"{n} {s}" for s, n in counts.items()))
    print(fail_reach_note(checks))
    status = 0
    if unreadable:
        print(f"\n{len(unreadable)} result file(s) cannot be read and are left out:", file=sys.stderr)
        for line in unreadable:
            print(f"  - {line}", file=sys.stderr)
        status = 1
    repeated = duplicate_claims(checks)
    if repeated:
        print(f"\n{len(repeated)} claim(s) listed more than once: {'; '.join(repeated)}", file=sys.stderr)
        status = 1
    bad = failures(checks)
    if bad:
        print(f"\n{len(bad)} check(s) failed:", file=sys.stderr)
        for c in bad:
            print(f"  - {c.claim}: paper {c.paper}, ours {c.ours}. {c.detail}", file=sys.stderr)
        status = 1
    if args.verify_claims_page and not claims_page_current(args.verify_claims_page, df):
        print(f"\n{args.verify_claims_page}: its claims table (between the claims markers) differs from these "
              "checks; run `make check-claims-page` and commit the result", file=sys.stderr)
        status = 1
    return status
