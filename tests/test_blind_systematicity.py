"""Blind scorers on CREPE's systematicity files (fixtures in the released layout: the files themselves are not
available here) and the length measure: expected values from references written here (regex word counts)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import helpers
from crepe_utils import blind
from crepe_utils.benchmarks.crepe import blind as crepe_blind
from crepe_utils.blind import runs as blind_runs
from blind_reference import words

SC, UC = "syst_vg_hard_negs_seen_compounds_in_laion.csv", "syst_vg_hard_negs_unseen_compounds_in_laion.csv"


def syst_rows(seed: int) -> list[dict]:
    """Positives of one or two compounds; HN-Atom negatives swap a word (same length); HN-Comp negatives join two
    foils with "and" (longer), their lists of varying length; one row has no HN-Comp negatives."""
    rng = np.random.default_rng(seed)
    colours, things = ["red", "blue", "green", "brown"], ["dog", "cat", "table", "sidewalk"]
    rows = []
    for i in range(14):
        c, t = rng.choice(colours), rng.choice(things)
        caption = f"a {c} {t}" if i % 3 else f"a {c} {t} on a wooden table"
        atom = [f"a {o} {t}" + caption[len(f"a {c} {t}"):] for o in colours if o != c][: 2 + i % 3]
        comp = [f"a {c} {rng.choice(things)} and a {rng.choice(colours)} {t}" for _ in range(i % 4)]
        rows.append({"image_id": 1000 * seed + i, "caption": caption, "x": 1, "y": 2, "width": 30, "height": 40,
                     "atom": atom, "comp": comp if i != 5 else []})
    return rows


@pytest.fixture()
def syst_root(tmp_path):
    root = tmp_path / "crepe"
    rows = {SC: syst_rows(1), UC: syst_rows(2)}
    for name, r in rows.items():
        helpers.write_systematicity_csv(root / "syst_hard_negatives" / name, r)
    return root, rows


def expected_length(rows: list[dict], column: str) -> tuple[int, float, float, int]:
    """(queries, R@1 % of the length rule with ties against it, chance %, rows skipped for no negatives)."""
    kept, won, chance, skipped = 0, 0, 0.0, 0
    for r in rows:
        negatives = r["atom"] + r["comp"] if column == "combined" else r[column]
        if not negatives:
            skipped += 1
            continue
        kept += 1
        won += all(len(words(r["caption"])) < len(words(n)) for n in negatives)
        chance += 1 / (1 + len(negatives))
    return kept, 100.0 * won / kept, 100.0 * chance / kept, skipped


def test_systematicity_table_is_the_length_rule_per_split_and_hn_type(syst_root):
    root, rows = syst_root
    table = crepe_blind.systematicity_table(root, "laion", scorers=("length", "bigram"))
    assert list(table.columns) == crepe_blind.SYSTEMATICITY_COLUMNS
    assert set(table["model"]) == {"blind:length", "blind:bigram"} and set(table["kind"]) == {"blind"}
    length = table[table["model"] == "blind:length"].set_index(["hn_type", "split"])
    assert len(length) == 6
    for split, name in (("SC", SC), ("UC", UC)):
        for hn in ("atom", "comp", "combined"):
            n, r1, chance, skipped = expected_length(rows[name], hn)
            row = length.loc[(hn, split)]
            assert (row["n_queries"], row["n_skipped"]) == (n, skipped), (hn, split)
            assert row["r1"] == pytest.approx(r1) and row["chance_r1"] == pytest.approx(chance), (hn, split)
            assert row["ci_low"] <= row["r1"] <= row["ci_high"]
    # HN-Atom's negatives are as long as the positive: every query is a tie, decided against it
    atom = length.loc[("atom", "SC")]
    assert atom["r1"] == 0.0 and atom["r1_optimistic"] == 100.0 and atom["decided_by_tie"] == atom["n_queries"]
    assert (length.xs("comp", level="hn_type")["n_skipped"] > 0).all()


def test_models_rows_sit_beside_the_scorers_in_the_same_layout(syst_root):
    root, _ = syst_root
    models = pd.DataFrame([{"model": "m", "display": "M", "train_data": "laion", "hn_type": "atom", "kind": "fixture",
                            "SC": 40.0, "UC": 30.0, "SC_ci_low": 35.0, "SC_ci_high": 45.0, "UC_ci_low": 25.0,
                            "UC_ci_high": 35.0, "n_SC": 14, "n_UC": 14, "chance": 25.0},
                           {"model": "other", "display": "O", "train_data": "cc12m", "hn_type": "atom",
                            "kind": "fixture", "SC": 1.0, "UC": 2.0, "SC_ci_low": 0.0, "SC_ci_high": 3.0,
                            "UC_ci_low": 0.0, "UC_ci_high": 4.0, "n_SC": 3, "n_UC": 3, "chance": 25.0}])
    table = crepe_blind.systematicity_table(root, "laion", models=models, scorers=("length",))
    rows = table[table["model"] == "m"].set_index("split")
    assert rows.loc["SC", ["r1", "ci_low", "ci_high", "n_queries"]].tolist() == [40.0, 35.0, 45.0, 14]
    assert rows.loc["UC", "r1"] == 30.0 and (rows["kind"] == "fixture").all()
    assert "other" not in set(table["model"])              # another training set's model is not beside laion's


def test_absent_and_unreadable_systematicity_files_are_one_line_messages(syst_root, tmp_path):
    root, _ = syst_root
    message = crepe_blind.systematicity_table(root, ("cc12m", "yfcc"))
    assert isinstance(message, str) and "cc12m, yfcc" in message and "make data-crepe" in message
    assert crepe_blind.systematicity_missing(root) is None and "make data-crepe" in crepe_blind.systematicity_missing(tmp_path / "none")
    assert isinstance(crepe_blind.systematicity_run(tmp_path / "none", "laion"), str)
    path = root / "syst_hard_negatives" / UC
    path.write_text(path.read_text().replace("]", "", 1))               # a negatives list left unclosed
    broken = crepe_blind.systematicity_table(root, "laion", scorers=("length",))
    assert isinstance(broken, str) and "cannot be read" in broken and "\n" not in broken   # no partial table


def test_conjunctions_count_and_in_positives_and_negatives(syst_root):
    root, rows = syst_root
    queries = [r for name in (SC, UC) for r in rows[name] if r["comp"]]
    expected = (sum("and" in words(r["caption"]) for r in queries), len(queries),
                sum(all("and" in words(n) for n in r["comp"]) for r in queries))
    assert crepe_blind.conjunctions(root, "laion") == expected == (0, len(queries), len(queries))
    assert crepe_blind.conjunctions(root, "cc12m") is None


# ---------------------------------------------------------------------------- the length measure and the ties

def tiny_run() -> blind_runs.BlindRun:
    queries = [blind.TextQuery("a", ("a dog", "a big dog")),            # length wins, negation ties
               blind.TextQuery("b", ("a dog", "not a dog")),            # both win
               blind.TextQuery("c", ("a big dog", "a dog")),            # length loses, negation ties
               blind.TextQuery("d", ("a dog", "a cat")),                # both tie
               blind.TextQuery("e", ("a big red dog", "no dog"))]       # length loses, negation wins
    frame = pd.DataFrame({"query_id": list("abcde"), "group": "g", "hn_type": "negate", "complexity": 4,
                          "n_candidates": 2})
    return blind_runs.run("test", queries, frame, ("negation", "length"), blind.BlindSettings())


def test_length_explains_counts_the_wins_the_length_rule_also_makes():
    (row,) = blind_runs.length_explains(tiny_run()).to_dict("records")
    assert row["scorer"] == "negation" and row["n_queries"] == 5
    assert (row["wins"], row["wins_also_length"]) == (2, 1)             # b and e; length also wins b
    assert row["length_share"] == pytest.approx(50.0) and row["length_r1"] == pytest.approx(40.0)   # a and b
    assert row["r1"] == pytest.approx(40.0) and row["n_length_balanced"] == 1          # query d only
    with pytest.raises(ValueError, match="needs blind:length"):
        blind_runs.length_explains(blind_runs.run("t", [blind.TextQuery("a", ("a", "b"))], pd.DataFrame(
            {"query_id": ["a"], "group": "g", "hn_type": "x", "complexity": 4, "n_candidates": 2}),
            ("negation",), blind.BlindSettings()))


def test_recall_table_counts_the_queries_a_tie_decided():
    table = blind_runs.recall_table(tiny_run()).set_index("scorer")
    # negation ties on a, c and d (no "no"/"not" either side): each lost to the tie; length ties on d only
    assert table.loc["negation", "decided_by_tie"] == 3 and table.loc["negation", "r1_optimistic"] == 100.0
    assert table.loc["length", "decided_by_tie"] == 1 and table.loc["length", "r1_optimistic"] == pytest.approx(60.0)
    # strict, random ties (expected: a tie of two counts one half), optimistic, side by side
    assert table.loc["negation", ["r1", "r1_random_ties", "r1_optimistic"]].tolist() == pytest.approx([40.0, 70.0, 100.0])
    assert table.loc["length", ["r1", "r1_random_ties", "r1_optimistic"]].tolist() == pytest.approx([40.0, 50.0, 60.0])


def test_one_interval_for_one_scorer_on_one_set_whoever_asks():
    import inspect
    # no caller picks a resample count: notebooks 06 and 07 show the same interval for the same scorer and set
    assert "n_boot" not in inspect.signature(blind_runs.recall_table).parameters
    assert "n_boot" not in inspect.signature(crepe_blind.systematicity_table).parameters
    first, again = blind_runs.recall_table(tiny_run()), blind_runs.recall_table(tiny_run())
    assert first[["ci_low", "ci_high"]].equals(again[["ci_low", "ci_high"]])


def test_the_systematicity_figure_draws_the_scorers_and_the_models_in_bold(syst_root):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from crepe_utils.benchmarks.crepe import blind_view as crepe_view

    root, _ = syst_root
    models = pd.DataFrame([{"model": "m", "display": "M", "train_data": "laion", "hn_type": hn, "kind": "fixture",
                            "SC": 40.0, "UC": 0.0, "SC_ci_low": 35.0, "SC_ci_high": 45.0, "UC_ci_low": 0.0,
                            "UC_ci_high": 5.0, "n_SC": 14, "n_UC": 14, "chance": 25.0}
                           for hn in ("atom", "comp", "combined")])
    table = crepe_blind.systematicity_table(root, "laion", models=models, scorers=("length", "negation"))
    fig = crepe_view.systematicity(table, scorers=("length",))
    assert len(fig.axes) == 3 and [ax.get_title() for ax in fig.axes] == [
        "laion: HN-Atom", "laion: HN-Comp", "laion: Combined"]
    for ax in fig.axes:
        labels = ax.get_xticklabels()
        assert [t.get_text() for t in labels] == ["blind: length", "M"]          # negation left out of the figure
        assert [t.get_fontweight() for t in labels] == ["normal", "bold"]
        assert len(ax.patches) == 4                                              # SC and UC bars of two entries
        assert "0" in [t.get_text() for t in ax.texts]                           # a bar of height 0 is labelled
    plt.close(fig)


def test_a_score_a_tie_decided_is_drawn_beside_its_random_tie_expectation():
    """Where ties decided some queries, the productivity figure marks (hollow) the score expected under random
    tie-breaking, which the chance line assumes; a row no tie decided gets no mark."""
    import matplotlib.pyplot as plt
    from crepe_utils.benchmarks.crepe import blind_view as crepe_view
    rows = [{"scorer": "length", "hn_type": hn, "complexity": n, "r1": 10.0, "ci_low": 5.0, "ci_high": 15.0,
             "chance_r1": 100 / 6, "r1_random_ties": 10.0 + (20.0 if n == 5 else 0.0),
             "decided_by_tie": 3 if n == 5 else 0} for hn in ("atom", "swap", "negate") for n in (4, 5, 6)]
    published = pd.DataFrame(columns=["model", "hn_type", "complexity", "r1"])
    fig = crepe_view.productivity(pd.DataFrame(rows), published)
    for ax in fig.axes:
        hollow = [c for c in ax.collections if len(c.get_offsets()) and len(c.get_facecolors()) == 0]
        assert [tuple(map(float, xy)) for c in hollow for xy in c.get_offsets()] == [(5.0, 30.0)]
    assert "expected if ties were broken at random" in [t.get_text() for t in fig.axes[-1].get_legend().get_texts()]
    plt.close(fig)
