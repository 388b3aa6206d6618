"""Notebook 07's sentences: each number in them is the table's, and each direction follows the numbers handed in."""
from __future__ import annotations

import pandas as pd

from crepe_utils import blind
from crepe_utils.benchmarks.crepe import reported
from crepe_utils.benchmarks.sugarcrepe import reported as sugarcrepe_reported
from crepe_utils.benchmarks.crepe import blind_view as crepe_view
from crepe_utils.benchmarks.sugarcrepe import blind_view as sugarcrepe_view
from crepe_utils.benchmarks.sugarcrepe.blind import REPLACE_SWAP
from crepe_utils.benchmarks.winoground import blind as winoground_blind
from crepe_utils.chapters import blind_baselines as chapter


def recall(rows: list[tuple]) -> pd.DataFrame:
    """(scorer, group, hn_type, complexity, r1, ci_low, ci_high, chance, n)."""
    return pd.DataFrame(rows, columns=["scorer", "group", "hn_type", "complexity", "r1", "ci_low", "ci_high",
                                       "chance_r1", "n_queries"])


def sugar(low_swap_obj: float = 51.4) -> pd.DataFrame:
    values = {"replace_att": (66.9, 63.6, 70.1), "replace_obj": (63.3, 60.9, 65.6), "replace_rel": (73.8, 71.5, 76.1),
              "swap_att": (64.6, 61.0, 68.2), "swap_obj": (57.6, low_swap_obj, 63.7)}
    rows = [("bigram", g, g, None, *v, 50.0, 245) for g, v in values.items()]
    rows += [("length", "add_att", "add_att", None, 98.6, 97.7, 99.4, 50.0, 692),
             ("length", "add_obj", "add_obj", None, 97.5, 96.8, 98.2, 50.0, 2062)]
    return recall(rows)


def test_the_sugarcrepe_finding_states_each_subset_with_its_interval_and_follows_them():
    published = sugarcrepe_reported.results()
    text = sugarcrepe_view.text(sugar(), published)
    assert "beats chance (50%) on all 5 REPLACE and SWAP subsets" in text
    assert "replace_rel 73.8% [71.5, 76.1] of 245" in text and "swap_obj 57.6% [51.4, 63.7]" in text
    adversaries = published[published["model"].isin(("vera", "grammar"))
                            & published["subset"].isin(REPLACE_SWAP)]["r1"]
    assert f"score {adversaries.min():.1f}-{adversaries.max():.1f}%" in text
    assert "98.6% [97.7, 99.4] (add_att) and 97.5% [96.8, 98.2] (add_obj)" in text
    text = sugarcrepe_view.text(sugar(low_swap_obj=49.0), published)
    assert "beats chance" not in text and "above chance (50%) on 4 of the 5 REPLACE and SWAP subsets" in text


def toy(length_sc: float, length_uc: float, bigram_uc: float = 38.0) -> pd.DataFrame:
    rows = []
    for model, kind, values in (("blind:length", "blind", {"comp": (length_sc, length_uc)}),
                                ("blind:bigram", "blind", {"comp": (100.0, 100.0), "atom": (5.7, bigram_uc)}),
                                ("toy-clip", "toy", {"comp": (56.2, 47.0)})):
        for hn, (sc, uc) in values.items():
            for split, r1 in (("SC", sc), ("UC", uc)):
                rows.append({"train_data": "toy", "model": model, "kind": kind, "hn_type": hn, "split": split,
                             "r1": r1, "ci_low": r1 - 3, "ci_high": r1 + 3})
    return pd.DataFrame(rows)


def test_the_toy_artefact_says_which_side_of_the_model_the_length_rule_lies():
    text = crepe_view.toy_systematicity(toy(75.7, 71.2), (0, 1200, 1200))
    assert "75.7% [72.7, 78.7] (SC) and 71.2% [68.2, 74.2] (UC), above the tiny CLIP on both splits" in text
    assert "56.2% [53.2, 59.2] (SC) and 47.0% [44.0, 50.0] (UC)" in text
    assert "\"and\" is in 0 of 1,200 positives and in every negative of 1,200 of the 1,200 queries" in text
    assert "a rise of 32.3 points from SC to UC" in text
    assert "below the tiny CLIP on both splits" in crepe_view.toy_systematicity(toy(40.0, 30.0), None)
    assert "on different sides of the tiny CLIP" in crepe_view.toy_systematicity(toy(60.0, 30.0), None)
    assert "a fall of 2.7 points" in crepe_view.toy_systematicity(toy(75.7, 71.2, bigram_uc=3.0), None)


def productivity_recall(length_4: float = 10.1) -> pd.DataFrame:
    rows = []
    for n in (4, 8, 12):
        rows.append(("negation", f"negate-{n}", "negate", n, 98.0 + n / 10, 97, 99, 16.7, 1000))
        rows.append(("length", f"negate-{n}", "negate", n, length_4 if n == 4 else 90.0 - n, 5, 99, 16.7, 1000))
        rows.append(("length", f"atom-{n}", "atom", n, 0.0, 0, 0, 16.7, 1000))
        rows.append(("bigram", f"atom-{n}", "atom", n, 40.0 + n, 35 + n, 45 + n, 16.7, 1000))
    return recall(rows)


def test_the_productivity_paragraph_gives_each_scorers_hn_neg_range_and_the_rule_below_chance():
    published = reported.productivity()
    best = published[published["hn_type"] == "negate"].groupby("complexity")["r1"].max()
    text = crepe_view.productivity_text(productivity_recall(), published)
    assert "`blind:length` 10.1% (n = 4) to 82.0% (n = 8)" in text
    assert "`blind:negation` 98.4% (n = 4) to 99.2% (n = 12)" in text
    assert f"1 of 2 beat the best published model at both published endpoints ({best[4]:.2f}% at n = 4" in text
    assert "the fixed rules reach at most 0.0% (`blind:length`, atom-4), below chance (16.7%)" in text
    assert "gets 44.0-52.0% on these 3 files, the lower end of its 95% interval above chance on 3 of them" in text
    assert "2 of 2 beat" in crepe_view.productivity_text(productivity_recall(length_4=99.0), published)


def explains(rows: list[tuple]) -> pd.DataFrame:
    """(scorer, group, hn_type, r1, length_r1, length_share, n_length_balanced, n_queries)."""
    return pd.DataFrame(rows, columns=["scorer", "group", "hn_type", "r1", "length_r1", "length_share",
                                       "n_length_balanced", "n_queries"])


def test_the_length_paragraph_justifies_the_measure_by_the_balanced_counts_and_signs_the_changes():
    crepe = explains([("bigram", "negate-4", "negate", 98.8, 10.1, 10.3, 0, 1262),
                      ("bigram-mean", "negate-4", "negate", 87.9, 10.1, 7.0, 0, 1262),
                      ("bigram", "atom-4", "atom", 42.5, 0.0, 0.0, 1257, 1258),
                      ("bigram-mean", "atom-4", "atom", 44.5, 0.0, 0.0, 1257, 1258)])
    sugar_explains = explains([("bigram", "add_att", "add_att", 99.7, 98.6, 98.7, 9, 692),
                               ("bigram-mean", "add_att", "add_att", 95.8, 98.6, 98.6, 9, 692)])
    text = chapter.length([(crepe, crepe_view.LENGTH_CUE), (sugar_explains, sugarcrepe_view.LENGTH_CUE)])
    assert "0 of 1,262 queries of the HN-Neg files; 9 of 692 queries of the ADD subsets are length-balanced" in text
    assert "HN-Neg: 10.3% of `blind:bigram`'s wins are also the length rule's, which alone is right on 10.1%" in text
    assert "on the ADD subsets by -3.9 (add_att) to -3.9 (add_att) points" in text
    assert "on HN-Neg by -10.9 (negate-4)" in text and "on every other file by +2.0 (atom-4)" in text
    assert chapter.length([(None, crepe_view.LENGTH_CUE), (None, sugarcrepe_view.LENGTH_CUE)]) == ""


def test_winoground_and_the_data_line_and_the_closing_without_data():
    table = pd.DataFrame([{"scorer": s, "metric": m, "score": 0.0, "ties": t if m == "text" else 400,
                           "examples": 400} for s, t in (("negation", 400), ("bigram", 120))
                          for m in ("text", "image", "group")])
    text = winoground_blind.text(table)
    assert "of the 2 scorers is 0.0% on 400 examples" in text and "(tied captions: 120-400 per scorer)" in text
    assert chapter.data_line({}) == "Every dataset this notebook reads is present."
    assert chapter.data_line({"crepe": "No CREPE CSVs: `make data-text`."}).endswith("No CREPE CSVs: `make data-text`.")
    closing = chapter.closing([])
    assert "none of the benchmarks' texts" in closing
    settings = blind.BlindSettings(folds=7)
    assert "into 7 folds by image" in chapter.scorers(settings, ("length", "bigram"))
    assert "10<sup>-9</sup>" in chapter.scorers(settings, ("length",))


def test_the_closing_advice_on_hn_neg_follows_what_its_blind_hard_subset_holds():
    """Issue 34, finding 2: advice to compare models on HN-Neg's blind-hard subset only where it holds queries."""
    recall = pd.DataFrame([{"scorer": "negation", "hn_type": "negate", "r1": 98.0, "chance_r1": 16.7},
                           {"scorer": "bigram", "hn_type": "atom", "r1": 45.0, "chance_r1": 16.7}])
    published = reported.productivity()
    empty = pd.DataFrame([{"hn_type": "negate", "blind_hard": 0, "n_queries": 1262},
                          {"hn_type": "atom", "blind_hard": 700, "n_queries": 1258}])
    rule = crepe_view.closing_sentences(recall, published, empty)[0]
    assert "holds none of its 1,262 queries" in rule and "compare models on its blind-hard subset" not in rule
    some = empty.assign(blind_hard=[40, 700])
    assert "compare models on its blind-hard subset (40 of 1,262 queries)" in crepe_view.closing_sentences(
        recall, published, some)[0]
    assert "blind-hard" not in crepe_view.closing_sentences(recall, published)[0]


def test_a_strict_score_below_chance_is_shown_beside_its_random_tie_expectation():
    published = reported.productivity()
    table = productivity_recall()
    top = (table["hn_type"] == "atom") & (table["scorer"] == "length")
    table = table.assign(decided_by_tie=0, r1_random_ties=table["r1"], r1_optimistic=table["r1"])
    assert "A tie decided" not in crepe_view.productivity_text(table, published)     # no tie: nothing to add
    n = int(table.loc[top, "n_queries"].iloc[0])
    table.loc[top, ["decided_by_tie", "r1_random_ties", "r1_optimistic"]] = [n, 16.7, 100.0]   # every query tied
    text = crepe_view.productivity_text(table, published)
    assert (f"A tie decided {n:,} of its {n:,} queries: counted against the positive (as here) it scores 0.0%, "
            "broken at random (as the chance line assumes) 16.7% expected, counted for the positive 100.0%.") in text
