"""The notebooks' sentences follow the values they are given: change a value, and the sentence's number or direction
changes with it (each test plants a value a fixed sentence would have got wrong)."""
from __future__ import annotations

import pandas as pd

from crepe_utils.benchmarks.crepe import productivity as P, systematicity as S
from crepe_utils.analysis import prose
from crepe_utils.toy import view as T
from crepe_utils.benchmarks.winoground import view as W


def test_prose_helpers():
    assert prose.num(-9.17, 1) == "−9.2" and prose.num(2.514, signed=True) == "+2.51" and prose.num(-0.001) == "0.00"
    assert prose.num(1234.4, 0) == "1,234"
    assert prose.how_many([True] * 7, "model") == "all 7 models"
    assert prose.how_many([True, False, True], "model") == "2 of the 3 models"
    assert prose.how_many([False, False], "model") == "none of the 2 models"
    assert prose.span([3.68, 2.51, 3.0], signed=True) == "+2.51 to +3.68" and prose.span([5.0, 5.0]) == "5.00"
    assert prose.listing(["a", "b", "c"]) == "a, b and c"
    assert prose.change(-6.28) == "loses 6.28 points" and prose.change(2.5) == "gains 2.50 points"


def test_hn_comp_sentence_follows_the_sign_and_the_counts():
    pub = S.published()
    text = S.comp_sentence(pub)
    assert "4 of the 7 models (LAION-400M) score higher" in text and "+2.51 to +3.68" in text
    assert "1,372 to 3,032 queries per split" in text              # no counts: what a rise would need
    laion = {("laion", "comp", s): 100_000 for s in ("SC", "UC")}
    assert "all 4 rises exceed their 95% interval" in S.comp_sentence(S.published(laion))
    few = {("laion", "comp", s): 100 for s in ("SC", "UC")}
    assert "none of the 4 rises exceed" in S.comp_sentence(S.published(few))
    flat = pub.copy()
    flat.loc[flat["hn_type"] == "comp", "delta"] = -1.0
    assert "score lower on UC than on SC" in S.comp_sentence(flat) and "higher" not in S.comp_sentence(flat)


def test_systematicity_summary_counts_the_models_that_lose():
    pub = S.published()
    assert S.summary(pub).startswith("**What this shows.** All 7 checkpoints lose Recall@1 from SC to UC")
    up = pub.copy()
    up.loc[(up["hn_type"] == "combined") & (up["model"] == "cc12m-rn50"), "delta"] = 0.5
    assert "6 of the 7 checkpoints lose" in S.summary(up)


def test_productivity_sentences_use_the_intervals():
    pub = P.published()
    changes = P.changes(pub)
    text = P.endpoints_sentence(pub, changes)
    assert "HN-Atom: all 15 models score lower at n = 12 than at n = 4 (15 by more than" in text
    assert "holds 27 queries" in text and "grid of 3.70 points" in text
    # with 27 queries at n = 4 the HN-Swap falls mostly stay within their intervals
    swap = changes[changes["hn_type"] == "swap"]
    assert (swap["gap"] < 0).sum() == 9 and (swap["exceeds"] & (swap["gap"] < 0)).sum() == 1
    planted = pub.copy()
    planted.loc[(planted["hn_type"] == "atom") & (planted["complexity"] == 12) & (planted["model"] == "flava"),
                "r1"] = 40.0
    assert "14 of the 15 models score lower" in P.endpoints_sentence(planted, P.changes(planted))


def test_winoground_sentences_use_the_table():
    t3 = W.table3()
    text = W.table3_sentence(t3)
    assert "All 19 group scores lie below the group chance of 16.67" in text
    vinvl = t3.set_index("model").loc["VinVL"]
    assert vinvl["group_ci_low"] < 16.67 < vinvl["group_ci_high"]           # 14.50 on 400: not wholly below
    planted = t3.copy()
    planted.loc[planted["model"] == "VinVL", "group"] = 20.0
    assert "18 of the 19 group scores lie below" in W.table3_sentence(planted)


def test_toy_summary_compares_signs_with_the_paper():
    ev = pd.DataFrame({"hn_type": ["atom", "comp", "combined"], "delta": [-15.0, -9.0, -13.0],
                       "delta_ci_low": [-20.0, -14.0, -18.0], "delta_ci_high": [-10.0, -4.0, -8.0]})
    prod = pd.DataFrame({"hn_type": ["atom"] * 2, "complexity": [4, 12], "r1": [30.0, 10.0],
                         "r1_ci_low": [25.0, 5.0], "r1_ci_high": [35.0, 15.0], "chance_r1": [16.67, 16.67]})
    text = T.summary(ev, prod)
    assert "On HN-Comp its change has the sign of the published change for 3 of the 7 paper models" in text
    assert "lies below it at 1" in text and "(all 3 intervals exclude 0)" in text
    ev.loc[ev["hn_type"] == "comp", ["delta", "delta_ci_low", "delta_ci_high"]] = [2.0, -1.0, 5.0]
    assert "the published change for 4 of the 7 paper models" in T.summary(ev, prod)


def test_paths_are_shown_without_the_machines_absolute_paths(tmp_path, monkeypatch):
    from crepe_utils import paths
    data = tmp_path / "somewhere" / "data"
    (data / "crepe").mkdir(parents=True)
    monkeypatch.setenv("CREPE_DATA", str(data))
    monkeypatch.delenv("SUGARCREPE_DATA", raising=False)
    assert paths.shown(data / "crepe") == "$CREPE_DATA/crepe" and paths.shown(data) == "$CREPE_DATA"
    assert paths.shown(paths.PROJECT_ROOT / "results" / "toy") == "results/toy"
    assert paths.shown("data/crepe") == "data/crepe"                     # relative: as given
    monkeypatch.setenv("SUGARCREPE_DATA", str(data / "sc"))
    assert paths.shown(data / "sc") == "$SUGARCREPE_DATA"                  # the most specific variable
    elsewhere = paths.shown(tmp_path / "other" / "x")
    assert not elsewhere.startswith("/") and elsewhere.endswith("other/x")


def test_a_cited_published_table_names_the_file_it_was_transcribed_into():
    import re
    from pathlib import Path

    import pytest

    from crepe_utils import packaged
    from crepe_utils.benchmarks.crepe import imagenet as I, analysis as A
    from crepe_utils.benchmarks.sugarcrepe import analysis as SA

    root = Path(__file__).resolve().parent.parent
    pub = P.published()
    texts = {"productivity": (P.endpoints_sentence(pub, P.changes(pub)), ["crepe/reported/productivity_r1.csv"]),
             "systematicity": (S.table_sentence(S.published()), ["crepe/reported/systematicity_r1.csv"]),
             "winoground": (W.table3_sentence(W.table3()), ["winoground/reported/table3.csv"]),
             "sugarcrepe": (SA.table_sentence(SA.published_long()), ["sugarcrepe/reported/results.csv"]),
             "r2": (I.summary(A.r2_table(n_boot=50)), ["crepe/reported/systematicity_r1.csv",
                                                        "crepe/reported/productivity_r1.csv"])}
    for name, (text, files) in texts.items():
        named = re.findall(r"transcribed in `([^`]+)`(?: and `([^`]+)`)?", text)
        assert named, name
        paths = [p for pair in named for p in pair if p]
        for f in files:
            assert f"crepe_utils/benchmarks/{f}" in paths, (name, paths)
        for p in paths:
            assert (root / p).is_file(), p                      # the repository path a reader can open
    assert "not from a run" in I.summary(A.r2_table(n_boot=50)) and "crepe_utils/models/imagenet.csv" in I.summary(
        A.r2_table(n_boot=50))
    with pytest.raises(FileNotFoundError):
        packaged.path("crepe_utils.benchmarks.crepe.reported", "no_such.csv")
