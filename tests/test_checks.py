"""Every check passes on the published numbers and fails (or flags) when handed wrong input."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from crepe_utils.commands import checks as aggregate
from crepe_utils.claims import base as claims_base
from crepe_utils.benchmarks.crepe import checks, claims as topics
from crepe_utils.benchmarks.crepe import reported, roster
from crepe_utils.claims.base import FAIL, NEEDS, PAPER, PART, PASS


def _claims(**changes) -> pd.DataFrame:
    c = reported.claims()
    for claim_id, value in changes.items():
        c.loc[c["claim_id"] == claim_id, "value"] = value
    return c


def statuses(rows):
    return [r.status for r in rows]


def test_chance_levels():
    assert set(statuses(checks.check_chance_levels())) == {PASS}
    assert FAIL in statuses(checks.check_chance_levels(_claims(chance_syst_atom=25.0)))
    assert FAIL in statuses(checks.check_chance_levels(_claims(set_size_prod=5)))
    # the combined line is flagged, not failed, when set sizes cannot explain it
    rows = checks.check_chance_levels(_claims(chance_syst_combined=8.0))
    assert rows[-1].status == PAPER and not rows[-1].can_fail


def test_all_negatives_chance_fails_on_our_set_sizes():
    row = checks.check_chance_levels(all_negatives_sizes={16})[3]
    assert row.claim.startswith("Random chance for the all-negatives") and row.status == PASS
    assert checks.check_chance_levels(all_negatives_sizes={15, 16})[3].status == FAIL   # a builder that drops one
    assert checks.check_chance_levels(all_negatives_sizes=set())[3].status == FAIL      # or builds none
    assert checks.check_chance_levels(_claims(set_size_prod_all=17))[3].status == FAIL  # 1 + 3 × 5 is 16


def test_dataset_totals():
    rows = checks.check_dataset_totals()
    assert rows[0].status == PAPER                               # 325,523 vs 295,930
    assert checks.check_dataset_totals(_claims(syst_hn_cc12m_a5=325523))[0].status == PASS
    assert checks.check_dataset_totals(_claims(prod_hn_abstract=150000))[2].status == PAPER


def test_productivity_totals_need_data():
    # the rest (pinned counts against ours, and the paper) is in test_released_counts.py
    assert set(statuses(checks.check_productivity_totals(None))) == {NEEDS}


def test_granularity():
    prod = reported.productivity()
    assert statuses(checks.check_granularity(prod, None)) == [NEEDS]
    counts = {("swap", 4): 27, ("swap", 12): 1578, ("atom", 4): 1258, ("atom", 12): 2001,
              ("negate", 4): 1262, ("negate", 12): 1990}
    assert statuses(checks.check_granularity(prod, counts)) == [PASS]
    bad = prod.copy()
    bad.loc[(bad["hn_type"] == "swap") & (bad["complexity"] == 4), "r1"] = 10.00   # 10.00 is not k/27
    rows = checks.check_granularity(bad, counts)
    assert statuses(rows) == [FAIL] and "is not k/27" in rows[0].detail
    wrong_n = {**counts, ("swap", 4): 28}
    assert statuses(checks.check_granularity(prod, wrong_n)) == [FAIL]


def test_printed_deltas():
    assert statuses(checks.check_printed_deltas()) == [PASS]
    printed = reported.systematicity_printed_deltas()
    printed.loc[0, "delta"] = -3.31
    assert statuses(checks.check_printed_deltas(printed=printed)) == [FAIL]


def test_headline_drop_and_comp_direction():
    assert statuses(checks.check_headline_drop()) == [PASS, PART, PASS]
    assert statuses(checks.check_headline_drop(claims=_claims(headline_drop=12.0)))[0] == FAIL
    syst = reported.systematicity()
    flat = syst.copy()
    uc = (flat["hn_type"] == "comp") & (flat["split"] == "UC")
    sc = flat[(flat["hn_type"] == "comp") & (flat["split"] == "SC")]["r1"].to_numpy()
    flat.loc[uc, "r1"] = sc - 1.0                                 # every model a small drop
    [comp] = checks.check_comp_direction()
    assert comp.status == PART and comp.ours == "5 of 7 within 3 points; 4 models go up (+2.51 to +3.68)"
    assert "no query counts" in comp.detail and "queries per split" in comp.detail
    assert statuses(checks.check_comp_direction(flat)) == [PASS]
    rising = syst.copy()
    rising.loc[(rising["hn_type"] == "combined") & (rising["split"] == "UC"), "r1"] += 10
    assert statuses(checks.check_headline_drop(rising))[2] == FAIL


def test_comp_direction_with_query_counts_says_which_rises_exceed_their_interval():
    laion = {k for k in roster.SYSTEMATICITY_MODELS if roster.train_data(k) == "laion"}
    big = {("laion", "comp", s): 100_000 for s in ("SC", "UC")}          # +2.51 on 100,000 queries: beyond noise
    small = {("laion", "comp", s): 100 for s in ("SC", "UC")}            # on 100: within it
    assert len(laion) == 4
    assert "4 of 4 rises exceed their 95% interval" in checks.check_comp_direction(query_counts=big)[0].detail
    assert "0 of 4 rises exceed their 95% interval" in checks.check_comp_direction(query_counts=small)[0].detail


def test_productivity_trends():
    rows = checks.check_productivity_trends()
    assert statuses(rows) == [PASS, PART, PART]
    assert rows[1].ours == "9 of 15"                          # HN-Swap: 9 models fall from n = 4 to n = 12
    # 27 queries at n = 4: only a fall of more than about 20 points exceeds its interval
    assert rows[1].detail.startswith("the fall exceeds its 95% interval for 1 of 9")
    assert "wholly below chance for 6, wholly above for 2 (N = 1,578 queries)" in rows[2].detail
    prod = reported.productivity()
    bad = prod.copy()
    bad.loc[(bad["hn_type"] == "atom") & (bad["complexity"] == 12), "r1"] = 99.0
    assert statuses(checks.check_productivity_trends(bad))[0] == FAIL


def test_r2():
    rows = checks.check_r2()
    assert [r.status for r in rows if "n=8" not in r.claim] == [PASS] * 6
    assert [r.status for r in rows if "n=8" in r.claim] == [NEEDS]
    other = checks.check_r2(source="open_clip_results_table")
    assert not {r.claim for r in rows} & {r.claim for r in other}     # the source is in every claim
    assert all("re-evaluated" in r.claim for r in other)
    assert FAIL in statuses(checks.check_r2(claims=_claims(r2_atom_UC=0.85)))
    syst = reported.systematicity()
    syst.loc[syst["model"] == "cc12m-rn50", "r1"] += 5
    assert FAIL in statuses(checks.check_r2(syst=syst))


def _result_folder(root, name, limit=None):
    """A result folder holding only the manifest settings the completeness rule reads."""
    import json
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"kind": "evaluated", "model": {"key": name}, "engine": {"limit": limit}}))
    return str(folder)


PROD_KEYS = ["model", "hn_type", "complexity"]
COUNTS = {("atom", 4): 1258, ("atom", 12): 2001, ("swap", 4): 27, ("swap", 12): 1578,
          ("negate", 4): 1262, ("negate", 12): 1990}


def _evaluated(tmp_path, limit=None, n_skipped=0, n_queries=None, name="run"):
    pub = reported.productivity()[PROD_KEYS + ["r1"]]
    ev = pub[pub["model"] == "cc12m-rn50"].copy()
    ev["kind"], ev["n_skipped"] = "evaluated", n_skipped
    ev["n_queries"] = [n_queries or COUNTS[(h, c)] for h, c in zip(ev["hn_type"], ev["complexity"])]
    ev["result_dir"] = _result_folder(tmp_path, name, limit)
    return pub, ev


def _compare(pub, ev):
    return checks.check_evaluated_against_published(ev, pub, PROD_KEYS, count_keys=["hn_type", "complexity"],
                                                    expected_queries=COUNTS)


def test_evaluated_against_published(tmp_path):
    pub, ev = _evaluated(tmp_path)
    assert statuses(checks.check_evaluated_against_published(pd.DataFrame(columns=PROD_KEYS + ["r1", "kind"]), pub,
                                                             PROD_KEYS)) == [NEEDS]
    assert statuses(_compare(pub, ev)) == [PASS] * 6
    ev.loc[ev.index[0], "r1"] += 1.0
    assert statuses(_compare(pub, ev))[0] == FAIL
    toy = ev.assign(kind="toy")                                # toy numbers are never compared
    assert statuses(_compare(pub, toy)) == [NEEDS]


@pytest.mark.parametrize("settings, reason", [
    ({"limit": 5}, "run with --limit 5"),
    ({"n_skipped": 3}, "3 queries skipped"),
    ({"n_queries": 20}, "20 queries, the released file has"),
])
def test_incomplete_results_are_not_compared(tmp_path, settings, reason):
    pub, ev = _evaluated(tmp_path, **settings)
    ev["r1"] += 10.0                                           # would fail if it were compared
    rows = _compare(pub, ev)
    assert statuses(rows) == [NEEDS] * 6 and all(reason in r.detail for r in rows)


def test_completeness_that_cannot_be_shown_is_not_assumed(tmp_path):
    pub, ev = _evaluated(tmp_path)
    rows = _compare(pub, ev.drop(columns=["result_dir", "n_skipped"]))
    assert statuses(rows) == [NEEDS] * 6 and "skip count unknown" in rows[0].detail
    rows = checks.check_evaluated_against_published(ev, pub, PROD_KEYS, count_keys=["hn_type", "complexity"],
                                                    expected_queries={})
    assert statuses(rows) == [NEEDS] * 6 and "query count is unknown" in rows[0].detail


def test_evaluated_cells_the_paper_does_not_publish_give_a_needs_row(tmp_path):
    pub, ev = _evaluated(tmp_path)
    ev["complexity"] = 8                                        # the paper prints only n = 4 and 12
    rows = _compare(pub, ev)
    assert statuses(rows) == [NEEDS] and "none of them a cell the paper publishes" in rows[0].detail


def test_two_runs_of_one_cell_get_distinct_claims(tmp_path):
    pub, first = _evaluated(tmp_path, name="a")
    _, second = _evaluated(tmp_path, name="b", limit=3)
    rows = _compare(pub, pd.concat([first, second]))
    assert len({r.claim for r in rows}) == len(rows) == 12
    assert sorted(statuses(rows)) == [NEEDS] * 6 + [PASS] * 6


def test_can_fail_rows_never_claim_fail_otherwise():
    with pytest.raises(ValueError, match="cannot fail"):
        claims_base.Check("x", "1", "2", FAIL, can_fail=False)


def test_unknown_status_is_rejected():
    with pytest.raises(ValueError):
        claims_base.Check("x", "1", "1", "maybe")


def test_run_all_lists_each_claim_once_and_counts_the_rows_that_can_fail():
    rows = aggregate.run_all(results_dir="/nonexistent-results")
    assert aggregate.duplicate_claims(rows) == []
    assert len({r.claim for r in rows}) == len(rows)
    note = aggregate.fail_reach_note(rows)
    assert note.startswith(f"{sum(r.can_fail for r in rows)} of {len(rows)} rows can fail")
    assert {r.claim for r in rows if not r.can_fail} <= {
        "Random chance for the combined systematicity set (9.09)",
        "Systematicity HN texts for CC-12M: Table 1 = app. A.5 (HN-Atom + HN-Comp, SC + UC)",
        "Abstract's rounded CC-12M HN texts match Table 1", "Abstract's rounded productivity HN texts match Table 1",
        "The abstract's 'dropping by up to 12%', read as the whole systematicity set (combined)",
        "HN-Comp: 'little (1–3%) to no difference' between SC and UC", "HN-Swap R@1 falls from n=4 to n=12",
        "HN-Swap R@1 at n=12 is below chance (16.67)"}


@pytest.mark.slow
def test_verify_claims_page_fails_on_a_stale_claims_table(tmp_path, capsys):
    from crepe_utils import cli
    page = tmp_path / "claims.md"
    page.write_text("# x\n\n<!-- claims:start -->\n| claim |\n|---|\n| stale |\n<!-- claims:end -->\nafter\n")
    args = ["check", "--tables-dir", str(tmp_path / "t"), "--results-dir", str(tmp_path / "none")]
    assert cli.main(args + ["--verify-claims-page", str(page)]) == 1
    err = capsys.readouterr().err
    assert "differs from these checks" in err and "make check-claims-page" in err
    assert "stale" in page.read_text()                                     # verifying writes nothing
    assert cli.main(args + ["--claims-page", str(page)]) == 0
    assert cli.main(args + ["--verify-claims-page", str(page)]) == 0
    assert cli.main(args + ["--verify-readme", str(page)]) == 0           # the older names still work
    assert page.read_text().endswith("<!-- claims:end -->\nafter\n")


def test_the_makefile_and_ci_keep_the_claims_page_current():
    root = Path(__file__).resolve().parent.parent
    makefile = (root / "Makefile").read_text()
    assert "--claims-page $(CLAIMS_PAGE)" in makefile and "--verify-claims-page $(CLAIMS_PAGE)" in makefile
    assert "CLAIMS_PAGE := docs/claims.md" in makefile
    assert "make check-claims-page-current" in (root / ".ci" / "run").read_text()
    page = (root / "docs" / "claims.md").read_text(encoding="utf-8")
    assert "<!-- claims:start -->" in page and "<!-- claims:end -->" in page


def test_every_status_has_a_mark_and_a_definition_on_the_claims_page():
    from crepe_utils.analysis import reporting
    root = Path(__file__).resolve().parent.parent
    page = (root / "docs" / "claims.md").read_text(encoding="utf-8")
    assert set(reporting.STATUS_MARKS) == set(claims_base.STATUSES)
    assert claims_base.SOURCES == "sources disagree" and claims_base.SCALE == "differs at scale"
    assert len(set(claims_base.STATUSES)) == 7
    for status, mark in reporting.STATUS_MARKS.items():
        symbol = mark.split(" ")[0]                      # the page's table: | mark | **status** | meaning | ...
        assert f"| {symbol} | **{status}** |" in page, status
        assert len({m.split(" ")[0] for m in reporting.STATUS_MARKS.values()}) == 7   # no two share a mark
    assert "| claim | paper | found | status |" in page


def test_the_checks_table_names_its_columns_for_what_they_hold():
    row = claims_base.Check("a claim", "1", "2", claims_base.SOURCES, "why", "g")
    frame = claims_base.to_frame([row])
    assert list(frame.columns) == ["group", "claim", "paper", "found", "status", "detail"]
    assert frame.loc[0, "found"] == "2" and frame.loc[0, "paper"] == "1" and frame.loc[0, "status"] == "sources disagree"


def test_make_check_command_fails_on_a_failed_check(tmp_path, monkeypatch, capsys):
    from crepe_utils import cli
    assert cli.main(["check", "--tables-dir", str(tmp_path), "--results-dir", str(tmp_path / "none")]) == 0
    assert (tmp_path / "checks.md").exists()
    monkeypatch.setattr(checks, "check_chance_levels",
                        lambda claims=None, all_negatives_sizes=None: [claims_base.Check("forced failure", "1", "2", FAIL)])
    assert cli.main(["check", "--tables-dir", str(tmp_path), "--results-dir", str(tmp_path / "none")]) == 1
    assert "forced failure" in capsys.readouterr().err


def test_systematicity_query_counts_are_the_present_files_rows(synthetic_root):
    import csv
    from crepe_utils.benchmarks.crepe import validation
    data_dir, _ = synthetic_root
    expected = {}
    for path in sorted(data_dir.rglob("syst_vg_hard_negs_*.csv")):
        with open(path, newline="") as fh:
            n = sum(1 for _ in csv.DictReader(fh))
        split = "SC" if "_seen_" in path.name else "UC"
        expected.update({("laion", hn, split): n for hn in ("atom", "comp", "combined")})
    report = validation.validate(data_dir, token_lengths=False)
    assert topics.systematicity_query_counts(report) == expected


def test_run_all_on_files_that_are_not_the_release_fails_their_checksums(synthetic_root, tmp_path):
    data_dir, _ = synthetic_root
    rows = {r.claim: r for r in aggregate.run_all(data_dir=data_dir, results_dir=tmp_path / "none")}
    assert len(rows) == len(aggregate.run_all(data_dir=data_dir, results_dir=tmp_path / "none"))   # claims unique
    sha = rows["The productivity CSVs present are the released files (pinned sha256)"]
    assert sha.status == FAIL and "6 present" in sha.ours
    assert rows["Productivity HN texts = Table 1"].status == NEEDS          # 6 of 27 files: totals not compared


def test_completeness_is_read_from_what_evaluate_writes(tiny_model, synthetic_root, tmp_path):
    """End to end: a --limit run and a full run of the engine, compared against a table of their own R@1."""
    from crepe_utils.evaluation import evaluate
    from crepe_utils.results import store as results
    cfg, ckpt = tiny_model
    data_dir, image_dir = synthetic_root
    for name, limit in (("full", None), ("smoke", 2)):
        evaluate(cfg.stem, "productivity", model_config=str(cfg), pretrained=str(ckpt), complexities=(4,), hn_types=("atom",), data_dir=data_dir, image_dir=image_dir, out=tmp_path / name, cache_dir=False, kind="evaluated", device="cpu", progress=False, n_boot=50, limit=limit, all_negatives=False)
    rows_per_file = 6                                          # helpers.synthetic_crepe_root's rows_per_file
    expected = {("atom", 4): rows_per_file}
    for name, status, detail in (("full", PASS, "difference +0.00"), ("smoke", NEEDS, "run with --limit 2")):
        ev = results.load_results(tmp_path / name)
        paper = ev[["model", "hn_type", "complexity", "r1"]].astype({"complexity": int})
        rows = checks.check_evaluated_against_published(ev, paper, PROD_KEYS, count_keys=["hn_type", "complexity"],
                                                        expected_queries=expected)
        assert [(r.status, detail in r.detail) for r in rows] == [(status, True)]
