"""``make check``: every claim of the papers that the available data and results allow.

The rows are the topics' of every benchmark folder's ``claims`` module (``TOPICS``, ``ORDER``, ``sections``;
:class:`crepe_utils.claims.base.Topic`), in registry order, then those about several benchmarks (the blind
scorers, :mod:`.blind_claims`; vl_compo's 202-checkpoint table, :mod:`.field_claims`). Each topic is what a
notebook's check cell lists, assembled once for it and here.
"""
from __future__ import annotations

import sys
import warnings

from .. import benchmarks
from ..analysis.reporting import claims_page_current, update_claims_page, write_table
from ..results import store
from ..across import blind_claims, field_claims
from ..claims.base import Check, failures, to_frame


def _providers() -> list:
    """The modules with claims: each benchmark folder's ``claims``, in registry order, then the suite's."""
    folders = [m for m in (benchmarks.part(f, "claims") for f in benchmarks.FOLDERS) if m is not None]
    return folders + [blind_claims, field_claims]


def topics() -> dict:
    """Topic name → its :class:`~crepe_utils.claims.base.Topic` (the function a notebook calls, and that notebook)."""
    return {name: topic for m in _providers() for name, topic in m.TOPICS.items()}


def make_check_order() -> tuple[tuple[str, str], ...]:
    """The order of ``make check``'s rows: (topic, section), each provider's own order, in provider order."""
    return tuple(pair for m in _providers() for pair in m.ORDER)


def run_all(data_dir=None, results_dir=None, data_dirs: dict | None = None) -> list[Check]:
    """Every check that the available data and results allow (the `make check` list).

    ``data_dirs``: a benchmark folder's name → its data folder (others read their default); ``data_dir`` is
    CREPE's CSV folder (``check --data-dir``)."""
    dirs = {"crepe": data_dir, **(data_dirs or {})}
    built = {}
    for m in _providers():
        built.update(m.sections(results_dir=results_dir, data_dirs=dirs))
    order = make_check_order()
    if sorted(built) != sorted(order) or len(set(order)) != len(order):
        raise RuntimeError(f"make check's order {sorted(order)} does not list the topics' sections {sorted(built)}")
    return [row for key in order for row in built[key]]


def add_arguments(parser) -> None:
    parser.add_argument("--data-dir", default=None, help="CREPE's CSVs (default: $CREPE_DATA/crepe); every other "
                        "benchmark reads its default folder")
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
        for results in (benchmarks.part(f, "results") for f in benchmarks.FOLDERS):
            if results is not None:             # a benchmark's own result tables beside its summaries
                results.verify_tables(results_dir)
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
                caption=f"Every checked claim of the {benchmarks.paper_names()} papers")
    if args.claims_page:
        update_claims_page(args.claims_page, df)
    counts = df["status"].value_counts()
    width = max(len(c.claim) for c in checks)
    for c in checks:
        print(f"{c.status:>20}  {c.claim:<{width}}  paper: {c.paper}  found: {c.ours}")
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
            print(f"  - {c.claim}: paper {c.paper}, found {c.ours}. {c.detail}", file=sys.stderr)
        status = 1
    if args.verify_claims_page and not claims_page_current(args.verify_claims_page, df):
        print(f"\n{args.verify_claims_page}: its claims table (between the claims markers) differs from these "
              "checks; run `make check-claims-page` and commit the result", file=sys.stderr)
        status = 1
    return status
