"""The blind baselines' claims and tables: each claim computed from numbers handed to it and seen to fail on wrong
ones; the tables on tiny query lists; and (marked shared) the claims and the blind-hard subset on the released data."""
from __future__ import annotations

import pandas as pd
import pytest

from crepe_utils import blind
from crepe_utils.benchmarks.crepe import reported
from crepe_utils.benchmarks.sugarcrepe import reported as sugarcrepe_reported
from crepe_utils.across import blind_claims as C
from crepe_utils.benchmarks.crepe import blind as crepe_blind
from crepe_utils.benchmarks.sugarcrepe import blind as sugarcrepe_blind
from crepe_utils.benchmarks.winoground import blind as winoground_blind
from crepe_utils.blind import runs as blind_runs
from crepe_utils.claims.base import FAIL, NEEDS, PASS


def recall(rows: list[tuple]) -> pd.DataFrame:
    """A recall table: (scorer, hn_type, complexity, r1, chance, ci_low)."""
    df = pd.DataFrame(rows, columns=["scorer", "hn_type", "complexity", "r1", "chance_r1", "ci_low"])
    df["group"] = df["hn_type"] + "-" + df["complexity"].astype(str)
    df["n_queries"] = 100
    return df


def test_rule_beats_published_passes_above_the_best_and_fails_below_it():
    best = reported.productivity().query("hn_type == 'negate'").groupby("complexity")["r1"].max()
    ok = recall([("negation", "negate", n, best[n] + 1, 16.7, 0) for n in (4, 12)])
    assert [c.status for c in crepe_blind.check_rule_beats_published(ok)] == [PASS, PASS]
    wrong = recall([("negation", "negate", 4, best[4] + 1, 16.7, 0), ("negation", "negate", 12, best[12], 16.7, 0)])
    checks = crepe_blind.check_rule_beats_published(wrong)
    assert [c.status for c in checks] == [PASS, FAIL] and "does not beat" in checks[1].detail
    assert [c.status for c in crepe_blind.check_rule_beats_published(recall([]))] == [FAIL, FAIL]      # no rule rows
    assert {c.status for c in crepe_blind.check_rule_beats_published(None)} == {NEEDS}


def test_above_chance_fails_on_one_file_at_chance():
    ok = recall([("bigram", "atom", 4, 40.0, 16.7, 30.0), ("bigram-cased", "atom", 4, 10.0, 16.7, 5.0),
                 ("bigram", "swap", 4, 20.0, 16.7, 10.0), ("negation", "swap", 5, 99.0, 16.7, 90.0),
                 ("bigram", "swap", 5, 17.0, 16.7, 9.0)])
    (check,) = crepe_blind.check_above_chance(ok)
    assert check.status == PASS and check.ours == "3 of 3 files" and "above chance on 1 of 3" in check.detail
    wrong = ok.copy()
    wrong.loc[wrong["group"] == "swap-5", "r1"] = 16.7          # only the rule beats chance there: not counted
    (check,) = crepe_blind.check_above_chance(wrong)
    assert check.status == FAIL and check.ours == "2 of 3 files" and check.detail.startswith("at or below chance: swap-5")
    assert crepe_blind.check_above_chance(recall([("negation", "atom", 4, 99.0, 16.7, 90.0)]))[0].status == FAIL
    assert crepe_blind.check_above_chance(None)[0].status == NEEDS


def sugarcrepe_recall(r1: float = 60.0, low: float = 55.0) -> pd.DataFrame:
    rows = [{"scorer": "bigram", "group": g, "hn_type": g, "complexity": pd.NA, "n_queries": 300, "chance_r1": 50.0,
             "r1": r1 + i, "ci_low": low + i, "ci_high": r1 + i + 5} for i, g in enumerate(sugarcrepe_blind.REPLACE_SWAP)]
    rows.append({"scorer": "bigram", "group": "add_att", "hn_type": "add_att", "complexity": pd.NA,
                 "n_queries": 300, "chance_r1": 50.0, "r1": 20.0, "ci_low": 15.0, "ci_high": 25.0})
    return pd.DataFrame(rows)


def test_sugarcrepe_above_chance_needs_every_interval_above_chance():
    (check,) = sugarcrepe_blind.check_sugarcrepe_above_chance(sugarcrepe_recall())
    assert check.status == PASS and check.ours == "60.0-64.0" and "5 of 5 subsets" in check.detail
    assert "replace_att 60.0 [55.0, 65.0] of 300" in check.detail and "add_att" not in check.detail   # ADD aside
    pub = sugarcrepe_reported.results()
    adversaries = pub[pub["model"].isin(("vera", "grammar")) & pub["subset"].isin(sugarcrepe_blind.REPLACE_SWAP)]["r1"]
    assert check.paper == f"chance 50; the adversaries (Vera, grammar) {adversaries.min():.0f}-{adversaries.max():.0f}"
    wrong = sugarcrepe_recall()
    wrong.loc[wrong["group"] == "swap_obj", ["r1", "ci_low"]] = (57.6, 49.9)      # above chance, interval not
    (check,) = sugarcrepe_blind.check_sugarcrepe_above_chance(wrong)
    assert check.status == FAIL and "4 of 5 subsets" in check.detail
    (check,) = sugarcrepe_blind.check_sugarcrepe_above_chance(sugarcrepe_recall(r1=50.0, low=45.0))
    assert check.status == FAIL and "0 of 5" in check.detail                   # every lower bound at most 49
    (check,) = sugarcrepe_blind.check_sugarcrepe_above_chance(sugarcrepe_recall().query("group != 'replace_rel'"))
    assert check.status == FAIL and "replace_rel" in check.detail
    assert sugarcrepe_blind.check_sugarcrepe_above_chance(None)[0].status == NEEDS


def test_winoground_zero_fails_on_any_nonzero_score():
    table = pd.DataFrame([{"scorer": s, "metric": m, "score": 0.0, "ties": 400, "examples": 400}
                          for s in ("negation", "bigram") for m in ("text", "image", "group")])
    assert winoground_blind.check_winoground_zero(table)[0].status == PASS
    table.loc[4, "score"] = 0.25
    (check,) = winoground_blind.check_winoground_zero(table)
    assert check.status == FAIL and check.detail == "bigram image 0.25"
    assert winoground_blind.check_winoground_zero(table.iloc[:0])[0].status == FAIL
    assert winoground_blind.check_winoground_zero(None)[0].status == NEEDS


def test_without_data_every_claim_needs_it(tmp_path):
    checks = C.blind_checks({f: tmp_path / "none" for f in ("crepe", "sugarcrepe", "winoground")})
    assert len(checks) == 5 and {c.status for c in checks} == {NEEDS}
    assert all("make data-" in c.detail for c in checks)


def _run(queries) -> blind_runs.BlindRun:
    frame = pd.DataFrame({"query_id": [f"q{i}" for i in range(len(queries))], "group": "g", "hn_type": "negate",
                          "complexity": 4, "n_candidates": [len(q.candidates) for q in queries]})
    return blind_runs.run("test", queries, frame, ("negation", "length"), blind.BlindSettings())


def test_recall_table_and_blind_hard_on_a_tiny_list():
    queries = [blind.TextQuery("a", ("a dog", "no dog")), blind.TextQuery("b", ("a red dog", "a dog")),
               blind.TextQuery("c", ("a dog", "a dog"))]        # a tie: nobody solves it
    run = _run(queries)
    table = blind_runs.recall_table(run).set_index("scorer")
    assert table.loc["negation", "r1"] == pytest.approx(100 / 3) and table.loc["length", "r1"] == 0.0
    assert table.loc["negation", "chance_r1"] == pytest.approx(50.0)
    assert blind_runs.blind_hard(run).to_dict() == {"q0": False, "q1": True, "q2": True}
    sizes = blind_runs.blind_hard_sizes(run).iloc[0]
    assert (sizes["n_queries"], sizes["solved_blind"], sizes["blind_hard"]) == (3, 1, 2)


def test_intervals_do_not_depend_on_the_other_scorers():
    queries = [blind.TextQuery(str(i), ("a dog" if i % 3 else "a red dog", "not a dog")) for i in range(60)]
    frame = pd.DataFrame({"query_id": range(60), "group": "g", "hn_type": "atom", "complexity": 4,
                          "n_candidates": 2})
    one = blind_runs.run("t", queries, frame.copy(), ("negation",), blind.BlindSettings())
    two = blind_runs.run("t", queries, frame.copy(), ("length", "negation"), blind.BlindSettings())
    a, b = blind_runs.recall_table(one).set_index("scorer"), blind_runs.recall_table(two).set_index("scorer")
    assert a.loc["negation"].equals(b.loc["negation"])


def test_models_on_blind_hard_without_results_is_empty(tmp_path):
    out = crepe_blind.models_on_blind_hard(tmp_path / "none", pd.Series([True], index=["q0"]))
    assert out.empty and "r1_blind_hard" in out.columns


def test_published_blind_rows_have_sources():
    pub = reported.blind_published()
    assert set(pub["hn_type"]) == {"atom", "swap", "negate"} and len(pub) == 12
    assert (pub["source"].str.len() > 10).all()
    assert pub.set_index(["model", "hn_type"]).loc[("opt_caption_likelihood", "negate"), "r1"] == 5.0


# ------------------------------------------------------------------ on the released data

@pytest.mark.slow
@pytest.mark.shared
def test_blind_claims_pass_on_the_released_data(shared_crepe, shared_winoground, shared_sugarcrepe):
    checks = C.blind_checks({"crepe": shared_crepe, "winoground": shared_winoground, "sugarcrepe": shared_sugarcrepe})
    assert [c.status for c in checks] == [PASS] * 5, [(c.claim, c.ours, c.detail) for c in checks]
    assert checks[2].ours == "27 of 27 files"
    (sugar,) = [c for c in checks if "SugarCrepe" in c.claim]
    assert sugar.ours == "57.6-73.8" and "5 of 5 subsets" in sugar.detail


@pytest.mark.slow
@pytest.mark.shared
def test_blind_hard_subset_and_the_negation_artefacts(shared_crepe):
    run = crepe_blind.run(shared_crepe, ("negation", "length", "wordfreq-cased"))
    sizes = blind_runs.blind_hard_sizes(run).set_index("group")
    assert len(sizes) == 27 and sizes["n_queries"].sum() == 39_715
    by_type = sizes.groupby("hn_type")[["blind_hard", "n_queries"]].sum()
    assert by_type.loc["negate", "blind_hard"] <= 2                 # the rules and the casing leave HN-Neg empty
    assert (by_type.loc[["atom", "swap"], "blind_hard"] > 0.5 * by_type.loc[["atom", "swap"], "n_queries"]).all()
    facts = crepe_blind.negate_artefacts(run)
    assert facts == {"queries": 16_336, "positive_lower_case": 16_336, "negatives_all_capitalised": 15_378,
                     "negative_with_empty_clause": 1_209}
