"""``make check``: every claim of both papers that the available data and results allow.

The only module that imports both the CREPE and the Winoground claims.
"""
from __future__ import annotations

import sys

from .. import reported
from . import crepe as crepe_claims, winoground as winoground_claims
from .base import FAIL, NEEDS, Check, failures, to_frame

def _present_productivity_queries(crepe, report) -> list:
    """The queries of the productivity CSVs that validation found (all 27 or fewer)."""
    from ..crepe import queries as D
    if report is None or not report.ok or report.files.empty:
        return []
    files = report.files[report.files["benchmark"] == "productivity"]
    return [q for hn, n in zip(files["hn_type"], files["complexity"])
            for q in D.load_productivity(crepe, [hn], [int(n)]).queries]


def _all_negatives_sizes(prod_queries: list, report) -> set[int] | None:
    """Candidate counts of the all-negatives sets built from the present files; ``None`` when there is
    nothing to build from (a partial folder may hold no HN-type triple; the full release must)."""
    from ..crepe import queries as D
    if not prod_queries:
        return None
    built = D.all_negatives_sets(D.QuerySet(prod_queries))
    full = (report.files["benchmark"] == "productivity").sum() == len(D.PROD_HN_TYPES) * len(D.COMPLEXITIES)
    return {len(q.candidates) for q in built} if len(built) or full else None


def systematicity_query_counts(report) -> dict[tuple[str, str, str], int]:
    """(train_data, HN type, split) → rows of that present systematicity CSV (every row a query when kept)."""
    import re
    if report is None or report.files.empty:
        return {}
    out = {}
    for row in report.files[report.files["benchmark"] == "systematicity"].itertuples():
        match = re.fullmatch(r"syst_vg_hard_negs_(?:seen|unseen)_compounds_in_(.+)\.csv\[\w+\]", row.file)
        if match:
            out[(match.group(1), row.hn_type, row.split)] = int(row.rows)
    return out


def run_all(data_dir=None, results_dir=None, token_lengths: bool = False) -> list[Check]:
    """Every check that the available data and results allow (the `make check` list)."""
    from .. import paths
    from ..analysis import tables as analysis
    from ..crepe import validation
    from ..results import store as results
    crepe = paths.crepe_dir(data_dir)
    report = validation.validate(crepe, token_lengths=token_lengths) if crepe is not None else None
    prod_queries = _present_productivity_queries(crepe, report)
    out = (crepe_claims.check_chance_levels(all_negatives_sizes=_all_negatives_sizes(prod_queries, report))
           + crepe_claims.check_dataset_totals() + crepe_claims.check_printed_deltas()
           + crepe_claims.check_headline_drop() + crepe_claims.check_comp_direction()
           + crepe_claims.check_productivity_trends())

    evaluated = results.load_results(results_dir)
    for source in reported.IMAGENET_SOURCES:
        swap8 = analysis.evaluated_swap_r2_inputs(evaluated, 8, source)   # complete results only
        out += crepe_claims.check_r2(source=source, evaluated_swap8=swap8 if len(swap8) >= 3 else None)

    out += crepe_claims.check_productivity_totals(report.stats if report is not None and report.stats else None)
    out += crepe_claims.check_granularity(reported.productivity(),
                             validation.query_counts(prod_queries) if prod_queries else None)
    if report is not None and not report.ok:
        out.append(Check("The CREPE data folder validates", "no errors", f"{len(report.errors)} error(s)", FAIL,
                         "; ".join(report.errors[:3]), "data"))
    prod_ev = evaluated[evaluated["benchmark"] == "productivity"]
    out += crepe_claims.check_evaluated_against_published(prod_ev, reported.productivity()[["model", "hn_type", "complexity", "r1"]],
                                             ["model", "hn_type", "complexity"], what="productivity",
                                             count_keys=["hn_type", "complexity"],
                                             expected_queries=reported.released_productivity_queries())
    syst_ev = evaluated[evaluated["benchmark"] == "systematicity"].rename(columns={"hn_type": "hn_set"})
    out += crepe_claims.check_evaluated_against_published(syst_ev, reported.systematicity()[["model", "hn_set", "split", "r1"]],
                                             ["model", "hn_set", "split"], what="systematicity",
                                             count_keys=["train_data", "hn_set", "split"],
                                             expected_queries=systematicity_query_counts(report))
    return out + winoground_checks(results_dir)


def winoground_checks(results_dir=None, data_dir=None) -> list[Check]:
    """Winoground's text-metadata checks (the local dataset or its text metadata) and Table 3."""
    from .. import paths, winoground
    examples, _ = winoground.load_examples(paths.winoground_dir(data_dir))
    if examples is None:
        rows = [Check("Winoground metadata checks", "—", "—", NEEDS, "no Winoground data (make data-winoground)",
                      "winoground")]
    else:
        rows = winoground_claims.data_checks(examples)
    return rows + winoground_claims.check_table3(winoground.load_results(results_dir))


def add_arguments(parser) -> None:
    parser.add_argument("--data-dir", default=None, help="CREPE CSVs (default: $CREPE_DATA/crepe, i.e. ./data/crepe)")
    parser.add_argument("--results-dir", default="results/evaluated", help="evaluated results (if any)")
    parser.add_argument("--tables-dir", default="tables", help="where checks.{csv,md,tex} are written")
    parser.add_argument("--readme", default=None, help="also refresh the claims table in this README")
    parser.add_argument("--verify-readme", default=None, metavar="README",
                        help="exit non-zero when this README's claims table differs from the checks just run")


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


def run(args) -> int:
    from ..analysis.reporting import readme_claims_current, update_readme_claims, write_table
    checks = run_all(args.data_dir, args.results_dir)
    df = to_frame(checks)
    write_table(df, "checks", args.tables_dir, caption="Every checked claim of the CREPE and Winoground papers")
    if args.readme:
        update_readme_claims(args.readme, df)
    counts = df["status"].value_counts()
    width = max(len(c.claim) for c in checks)
    for c in checks:
        print(f"{c.status:>20}  {c.claim:<{width}}  paper: {c.paper}  ours: {c.ours}")
    print("\n" + ", ".join(f"{n} {s}" for s, n in counts.items()))
    print(fail_reach_note(checks))
    status = 0
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
    if args.verify_readme and not readme_claims_current(args.verify_readme, df):
        print(f"\n{args.verify_readme}: its claims table (between the claims markers) differs from these checks; "
              "run `make check-readme` and commit the result", file=sys.stderr)
        status = 1
    return status
