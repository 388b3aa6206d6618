"""The teaching notebook (00) and its material, crepe_utils.chapters.how_compositionality_is_evaluated.

References are written here from the definitions (ranks counted by hand, tie policies by their
formulas), never taken from the module's own output.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from crepe_utils.chapters import how_compositionality_is_evaluated as T
from crepe_utils.blind.folds import fold_of
from crepe_utils.benchmarks.crepe.queries import Query
from crepe_utils.errors import CrepeError
from crepe_utils.site import build as site_build

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "00_how_compositionality_is_evaluated.ipynb"
SHARED_CREPE = ROOT.parent / "shared" / "data" / "crepe"


def _query(image, hn, n, positive, negatives, line):
    return Query("productivity", hn, "", n, "", str(image), (0.0, 0.0, 1.0, 1.0), positive, tuple(negatives),
                 f"prod_vg_hard_negs_{hn}_complexity_{n}.csv:{line}")


#: Three HN-Atom queries at n = 4 whose word counts give blind:length (score −words) a known outcome:
#: q1 a negative shorter than the positive (a miss under every policy), q2 all of one length (a
#: three-way tie), q3 the positive shortest (a hit under every policy).
FILE = (_query(1, "atom", 4, "a b c", ["d e f", "g h"], 2),
        _query(2, "atom", 4, "a b", ["c d", "e f"], 3),
        _query(3, "atom", 4, "a", ["b c", "d e f"], 4))


def _source(queries=FILE) -> T.Source:
    return T.Source("example", "a test file", tuple(queries), "test queries")


def test_ranks_of_gives_each_tie_policy_its_rank():
    r = T.ranks_of(np.array([2.0, 3.0, 2.0, 2.0, 1.0]))      # one negative above, two level
    assert (r["higher"], r["tied"], r["rank (strict)"], r["rank (optimistic)"]) == (1, 2, 4, 2)
    assert r["R@1 (random)"] == 0.0                           # a negative above: no draw can put it first
    r = T.ranks_of(np.array([5.0, 5.0, 5.0, 1.0]))            # two negatives level, none above
    assert (r["rank (strict)"], r["rank (optimistic)"]) == (3, 1)
    assert r["R@1 (random)"] == pytest.approx(100 / 3)
    assert r["rank (torch.argsort)"] in (1, 2, 3)             # among the tied, in an order PyTorch does not fix
    assert T.ranks_of(np.array([1.0, 0.0]))["rank (torch.argsort)"] == 1


def test_tie_table_scores_a_rule_that_ties_as_a_miss_strictly_and_as_a_draw_at_random():
    scored = T.score_source(_source(), scorers=("length",))
    row = T.tie_table(scored, "atom", 4).set_index("scorer").loc["blind:length"]
    assert row["queries"] == 3 and row["tied with the positive"] == 2     # q1 (one level) and q2 (two level)
    assert row["R@1 strict"] == pytest.approx(100 / 3)                    # q3 only
    assert row["R@1 optimistic"] == pytest.approx(200 / 3)                # q2 and q3
    assert row["R@1 random"] == pytest.approx(100 * (0 + 1 / 3 + 1) / 3)
    assert row["chance"] == pytest.approx(100 / 3)


def test_recall_at_k_counts_the_positive_within_the_top_k_strictly():
    scored = T.score_source(_source(), scorers=("length",))
    table = T.recall_table(scored, "atom", 4)
    # strict ranks: q1 1 + 1 above + 1 level = 3, q2 1 + 2 level = 3, q3 1
    assert table["R@K"].tolist() == pytest.approx([100 / 3, 100 / 3, 100.0])
    assert table["chance"].tolist() == pytest.approx([100 / 3, 200 / 3, 100.0])
    assert "all within the top 3" in T.recall_text(table)


def test_the_worked_query_is_the_first_of_the_hn_atom_file_of_lowest_complexity_with_its_siblings():
    queries = (_query(9, "atom", 5, "x y z w v", ["a y z w v"], 2), _query(7, "atom", 4, "p q", ["r q"], 2),
               _query(7, "swap", 4, "p q", ["q p"], 2), _query(8, "negate", 4, "p q", ["no p q"], 2),
               _query(7, "negate", 4, "p q", ["not p q"], 3))
    index, others = T.worked_query(_source(queries))
    assert index == 1 and others == [2, 4]
    table = T.candidate_table(T.score_source(_source(queries), scorers=("length",)), index)
    assert table["text"].tolist() == ["p q", "r q"] and table["blind:length"].tolist() == [-2.0, -2.0]


def test_a_readers_query_is_scored_like_any_other_and_its_fold_is_held_out():
    base = [_query(i, "atom", 4, f"a red cube on the table {i}", [f"a blue cube on the table {i}"], i + 2)
            for i in range(30)]
    caption, negatives = "a red cube on the table", ["a cube on the red table", "a cube"]
    same = next(str(i) for i in range(1000, 2000) if fold_of(str(i), 5) == T.reader_fold())
    other = next(str(i) for i in range(1000, 2000) if fold_of(str(i), 5) != T.reader_fold())

    def bigram(extra_image):
        extra = [_query(extra_image, "atom", 4, "a cube on the red table", ["a red cube"], 99)] if extra_image else []
        scored = T.score_source(_source(base + extra), scorers=("length", "bigram"))
        return T.reader_table(caption, negatives, scored)

    plain = bigram(None)
    assert plain["blind:length"].tolist() == [-6.0, -6.0, -2.0]            # −(words), by hand
    # a query of the reader's fold is held out of the model that scores the reader's query; another fold's is not
    assert bigram(same)["blind:bigram"].tolist() == plain["blind:bigram"].tolist()
    assert bigram(other)["blind:bigram"].tolist() != plain["blind:bigram"].tolist()
    assert T.reader_verdicts(plain[["candidate", "text", "blind:length"]]) == (
        "- `blind:length` ranks your caption **3 of 3**, level with 1 negative; its first choice is negative 2\n")


def test_a_readers_query_needs_a_caption_and_a_negative():
    scored = T.score_source(_source(), scorers=("length",))
    with pytest.raises(CrepeError, match="at least one hard negative"):
        T.reader_table("a caption", [], scored)
    with pytest.raises(CrepeError, match="non-empty"):
        T.reader_table("a caption", ["  "], scored)


def test_exercises_state_the_numbers_of_the_tables_and_hide_each_answer():
    scored = T.score_source(_source(), scorers=("length",))
    ties = T.tie_table(scored, "atom", 4)
    text = T.exercises(scored, 0, ties, None)
    assert "1/3 = 33.3%" in text                                 # chance with three candidates
    assert "scores 1 negative above the positive and 1 negative level with it" in text     # q1, by hand
    assert "Strict: rank 3, a miss. Optimistic: rank 2." in text
    assert "Random: 44.4% (chance is 33.3%); optimistic: 66.7%" in text
    questions = len(re.findall(r"\*\*\d\.\*\*", text))
    assert text.count("<details class=\"answer\">") == text.count("</details>") == questions


def test_the_map_names_every_notebook_once_in_the_sites_order():
    stems = [stem for stem, _, _ in T.NOTEBOOK_MAP]
    assert stems == sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert stems == [stem for stem, _ in site_build.NOTEBOOKS]
    text = T.notebook_map()
    for stem in stems[1:]:
        assert f"]({stem}.ipynb)" in text                           # the site points these at its pages
    assert "(this one)" in text and f"]({stems[0]}.ipynb)" not in text


def _prod_csv(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["image_id,caption,n,n_objects,n_relations,n_attributes,n_connected_components,hard_negs,x,y,width,height"]
    lines += [f'{i},{c},4,2,1,1,1,"{list(n)}",0.0,0.0,64.0,64.0' for i, c, n in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_source_is_crepe_then_the_toy_world_then_the_hand_written_example(tmp_path, monkeypatch):
    monkeypatch.delenv("CREPE_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    example = T.load_source(tmp_path / "no-crepe", tmp_path / "no-toy")
    assert example.kind == "example" and "make data-text" in example.note and "make toy" in example.note
    assert {q.hn_type for q in example.queries} == {"atom", "swap", "negate"}
    assert all(len(q.candidates) == 6 for q in example.queries)
    toy = tmp_path / "toy"
    for hn in ("atom", "swap", "negate"):
        _prod_csv(toy / "world" / "prod_hard_negatives" / hn / f"prod_vg_hard_negs_{hn}_complexity_4.csv",
                  [(5, "a red cube", ["a blue cube"])])
    for hn in ("atom", "swap", "negate"):
        for n in range(5, 13):
            _prod_csv(toy / "world" / "prod_hard_negatives" / hn / f"prod_vg_hard_negs_{hn}_complexity_{n}.csv", [])
    found = T.load_source(tmp_path / "no-crepe", toy)
    assert found.kind == "toy" and "not CREPE's" in found.note and found.queries[0].positive == "a red cube"
    assert isinstance(T.load_toy_model(toy), str) and "make toy" in T.load_toy_model(tmp_path / "none")


@pytest.mark.shared
def test_on_crepes_files_the_worked_query_is_the_first_hn_atom_row():
    if not SHARED_CREPE.is_dir():
        pytest.skip("no development data beside the checkout")
    source = T.load_source(SHARED_CREPE, None)
    index, others = T.worked_query(source)
    q = source.queries[index]
    with open(next(SHARED_CREPE.rglob("prod_vg_hard_negs_atom_complexity_4.csv")), encoding="utf-8") as f:
        first = f.readlines()[1]
    assert source.kind == "crepe" and q.complexity == 4 and first.startswith(f"{q.image_id},{q.positive},")
    assert [source.queries[i].hn_type for i in others] == ["swap", "negate"]


def test_the_notebooks_static_prose_holds_no_number():
    """Numbers on the page are computed: static Markdown may hold a title's number, citations (§, a venue's
    year) and link targets, nothing else."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        text = re.sub(r"^# \d+ ·", "", text)                        # the title's number
        text = re.sub(r"\]\([^)]*\)", "]", text)                    # link targets
        text = re.sub(r"§\d+(\.\d+)*|CVPR \d{4}|Recall@1|@K", "", text)
        assert not re.findall(r"\d", text), text[:200]


@pytest.mark.slow
def test_the_notebook_runs_offline_on_the_hand_written_example(tmp_path):
    import base64

    import nbformat

    from crepe_utils.notebooks import execute

    figures = tmp_path / "figures"
    out = execute(NOTEBOOK, tmp_path / "build" / f"{NOTEBOOK.stem}.ipynb",
                  {"crepe_dir": str(tmp_path / "no-crepe"), "toy_dir": str(tmp_path / "no-toy"),
                   "figures_dir": str(figures), "tables_dir": str(tmp_path / "tables")})
    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert {p.name for p in figures.glob("*.png")} == {"teaching_worked_query.png", "teaching_ties_recall.png"}
    shown = [base64.b64decode(o["data"]["image/png"]) for o in outputs if "image/png" in o.get("data", {})]
    assert all(png.read_bytes() in shown for png in figures.glob("*.png"))   # each saved figure is inline
    assert len(shown) == 3                                         # and the reader's own, shown only
    markdown = "\n".join(o.get("data", {}).get("text/markdown", "") for o in outputs)
    assert "hand-written example" in markdown and "No toy world is built here" in markdown
    assert markdown.count("<summary>Answer</summary>") >= 5


def test_hn_swap_negatives_are_counted_as_reorderings_or_new_words():
    queries = (_query(1, "swap", 4, "dog on sofa", ["sofa on dog", "Dog On Sofa", "dog on cushion"], 2),
               _query(1, "swap", 5, "a red cup", ["a cup red", "a red mug"], 3),
               _query(1, "atom", 4, "dog on sofa", ["cat on sofa"], 4))
    source = _source(queries)
    # by hand: n = 4 holds two reorderings (case aside) and one new word; n = 5 one of each; atom is not counted
    assert T.swap_words(source, 4) == {"negatives": 3, "permutations": 2, "new words": 1}
    assert T.swap_words(source) == {"negatives": 5, "permutations": 3, "new words": 2}
    assert "3 (60.0%)" in T.swap_text(T.swap_words(source), "a test file")
    assert T.swap_text({"negatives": 0, "permutations": 0, "new words": 0}, "x") == ""


def test_coinciding_recall_curves_are_named_once_each():
    import pandas as pd
    recall = pd.DataFrame({"scorer": ["a"] * 3 + ["b"] * 3 + ["c"] * 3 + ["d"] * 3,
                           "K": [1, 2, 3] * 4,
                           "R@K": [0, 0, 100, 0, 0, 100, 10, 50, 100, 0, 0, 100]})
    assert T.coinciding(recall) == {"b": "a", "d": "a"}
    assert "`b` has the same Recall@K as `a`" in T.recall_text(recall)


def test_a_model_scores_a_caption_by_the_cosine_of_two_unit_vectors():
    q = _query(7, "atom", 4, "a b", ["c d", "e f"], 2)
    image = np.array([0.6, 0.8, 0.0], dtype=np.float32)
    texts = np.array([[0.6, 0.8, 0.0], [0.0, 1.0, 0.0], [0.8, 0.6, 0.0]], dtype=np.float32)
    scoring = T.ModelScoring(q, Path("unused.jpg"), image, texts)
    # cosines by hand: 0.36 + 0.64 = 1.0, 0.8, 0.48 + 0.48 = 0.96
    assert scoring.cosine == pytest.approx([1.0, 0.8, 0.96])
    table = T.scoring_table(scoring)
    assert list(table["rank"].iloc[1:]) == [1, 3, 2] and table["rank"].isna().iloc[0]
    assert list(table["length"]) == pytest.approx([1.0] * 4)
    text = T.scoring_text(scoring)
    assert "scores 1.000" in text and "“c d”, scores 0.960" not in text and "“e f”, scores 0.960" in text
    assert "a hit at Recall@1" in text
