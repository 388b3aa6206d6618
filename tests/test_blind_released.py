"""The blind baselines on the released data: the measurements of issue 22, recomputed beside a
reference written here (regex word counts; a dict-based Kneser–Ney bigram), Recall@1 with ties
counted against the model."""
from __future__ import annotations

import json

import numpy as np
import pytest

import helpers
from crepe_utils import blind, metrics
from crepe_utils.blind.text import TextQuery
from crepe_utils.benchmarks.crepe.queries import load_productivity
from crepe_utils.benchmarks.winoground import blind as winoground_blind
from crepe_utils.benchmarks.winoground.metadata import load_examples_text
from blind_reference import reference_bigram, reference_fold, reference_log_probability, words

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def productivity():
    if not helpers.SHARED_CREPE.is_dir():
        pytest.skip("../shared/data/crepe is not present")
    return load_productivity(helpers.SHARED_CREPE).queries


def per_file(queries, won: np.ndarray) -> dict[tuple[str, int], float]:
    """Recall@1 (%) of each productivity file from a per-query bool."""
    out: dict[tuple[str, int], list] = {}
    for q, ok in zip(queries, won):
        out.setdefault((q.hn_type, q.complexity), []).append(ok)
    return {key: 100.0 * float(np.mean(v)) for key, v in out.items()}


def library_wins(name: str, queries) -> tuple[np.ndarray, np.ndarray]:
    """(rank 1 under the pessimistic rule, any tie with the positive) per query."""
    offsets = np.r_[0, np.cumsum([len(q.candidates) for q in queries])]
    ranks = metrics.ranks_from_flat(blind.score(name, queries), offsets)
    return ranks.pessimistic == 1, ranks.n_ties > 0


def reference_wins(rule, queries) -> tuple[np.ndarray, np.ndarray]:
    won, tied = [], []
    for q in queries:
        pos, negs = rule(q.candidates[0]), [rule(c) for c in q.candidates[1:]]
        won.append(all(pos > n for n in negs))
        tied.append(any(pos == n for n in negs))
    return np.array(won), np.array(tied)


NEGATION = ("negation", lambda t: -sum(w in ("no", "not") for w in words(t)))
LENGTH = ("length", lambda t: -len(words(t)))


@pytest.mark.parametrize("name, rule", [NEGATION, LENGTH])
def test_rules_on_crepe_equal_the_reference_query_by_query(productivity, name, rule):
    won, tied = library_wins(name, productivity)
    ref_won, ref_tied = reference_wins(rule, productivity)
    assert (won == ref_won).all() and (tied == ref_tied).all()


def test_negation_on_crepe_is_all_ties_on_atom_and_swap_and_97_to_99_on_negate(productivity):
    won, tied = library_wins("negation", productivity)
    r1 = per_file(productivity, won)
    for q, t in zip(productivity, tied):
        assert t or q.hn_type == "negate"
    assert all(r1[hn, n] == 0.0 for hn in ("atom", "swap") for n in range(4, 13))
    assert all(97.7 <= round(r1["negate", n], 1) <= 99.1 for n in range(4, 13))


def test_length_on_crepe(productivity):
    r1 = per_file(productivity, library_wins("length", productivity)[0])
    assert all(r1["atom", n] == 0.0 for n in range(4, 13))
    assert all(0.0 <= round(r1["swap", n], 1) <= 3.7 for n in range(4, 13))
    assert round(r1["negate", 4], 1) == 10.1
    assert all(77 <= round(r1["negate", n]) <= 96 for n in range(5, 13))


@pytest.mark.slow
def test_the_bigram_on_crepe_equals_the_reference_and_its_recall(productivity):
    queries = productivity
    won = library_wins("bigram", queries)[0]
    scores = blind.score("bigram", queries)
    swap = [i for i, q in enumerate(queries) if q.hn_type == "swap"]
    models = {}
    for k in range(5):
        # an image's caption once, however often and however punctuated (four images have two spellings)
        training = {(q.image_id, " ".join(words(q.candidates[0]))) for q in queries if reference_fold(q.image_id) != k}
        models[k] = reference_bigram([caption for _, caption in sorted(training)])[0]
    offsets = np.r_[0, np.cumsum([len(q.candidates) for q in queries])]
    for i in swap:                          # every HN-Swap query against the reference
        q = queries[i]
        expected = [reference_log_probability(models[reference_fold(q.image_id)], c) for c in q.candidates]
        assert np.allclose(scores[offsets[i]:offsets[i + 1]], expected, rtol=1e-12), q.source
    r1 = per_file(queries, won)
    # The issue reports 40-48 (atom), 44-51 (swap, n >= 5) and 49-83 (negate) for its bigram; this
    # one, as specified there, ranks an added negation below the positive almost always.
    assert all(40 <= r1["atom", n] <= 52 for n in range(4, 13))
    assert all(43 <= r1["swap", n] <= 56 for n in range(5, 13)) and 20 <= r1["swap", 4] <= 40
    assert all(97 <= r1["negate", n] <= 100 for n in range(4, 13))


def sugarcrepe_pairs(folder) -> dict[str, list[tuple[str, str, str]]]:
    out = {}
    for path in sorted(folder.glob("*.json")):
        out[path.stem] = [(r["filename"], r["caption"], r["negative_caption"])
                          for r in json.loads(path.read_text()).values()]
    return out


def test_the_shorter_caption_solves_sugarcrepe_add(shared_sugarcrepe):
    subsets = sugarcrepe_pairs(shared_sugarcrepe)
    assert len(subsets) == 7 and sum(map(len, subsets.values())) == 7511
    for subset, rows in subsets.items():
        queries = [TextQuery(f, (pos, neg)) for f, pos, neg in rows]
        won = library_wins("length", queries)[0]
        assert (won == [len(words(pos)) < len(words(neg)) for _, pos, neg in rows]).all(), subset
        subsets[subset] = 100.0 * won.mean()
    assert round(subsets["add_att"], 1) == 98.6 and round(subsets["add_obj"], 1) == 97.5


def test_no_blind_scorer_passes_a_winoground_example_and_the_ties_are_counted(shared_winoground):
    examples = load_examples_text(shared_winoground / "examples_text.tsv")
    for name, rule in (NEGATION, LENGTH):
        captions, summary = winoground_blind.evaluate(name, examples)
        equal = sum(rule(ex.caption_0) == rule(ex.caption_1) for ex in examples)
        assert summary["text"]["ties"] == equal and summary["image"]["ties"] == summary["group"]["ties"] == 400
    for name in blind.SCORERS:
        captions, summary = winoground_blind.evaluate(name, examples)
        assert all(summary[m]["score"] == 0.0 for m in ("text", "image", "group")), name
        assert summary["text"]["ties"] == int(np.sum(captions[:, 0] == captions[:, 1])), name
        assert summary["image"]["ties"] == 400, name


@pytest.mark.slow
def test_the_length_normalised_bigram_on_crepe_and_sugarcrepe(productivity, shared_sugarcrepe):
    """blind:bigram-mean is the total divided by (words + 1) query by query; what normalising costs where length
    decides (HN-Neg, SugarCrepe's ADD) and where it does not (HN-Atom)."""
    from crepe_utils.benchmarks.sugarcrepe import blind as sugarcrepe_blind
    from crepe_utils.blind import runs as blind_runs
    mean, total = blind.score("bigram-mean", productivity), blind.score("bigram", productivity)
    lengths = np.array([len(words(c)) for q in productivity for c in q.candidates])
    assert (mean == total / (lengths + 1)).all()
    r1 = per_file(productivity, library_wins("bigram-mean", productivity)[0])
    total_r1 = per_file(productivity, library_wins("bigram", productivity)[0])
    assert all(abs(r1["atom", n] - total_r1["atom", n]) < 1.0 for n in range(4, 13))      # no length to remove
    assert all(85 <= r1["negate", n] < total_r1["negate", n] for n in range(4, 13))
    sugar = sugarcrepe_blind.run(shared_sugarcrepe, ("length", "bigram", "bigram-mean"))
    table = blind_runs.recall_table(sugar).pivot_table(index="group", columns="scorer", values="r1")
    assert round(table.loc["add_obj", "bigram"], 1) == 99.0 and round(table.loc["add_obj", "bigram-mean"], 1) == 70.1
    explains = blind_runs.length_explains(sugar).set_index(["scorer", "group"])
    for group in ("add_att", "add_obj"):                     # length-balanced pairs: equal word counts, counted here
        rows = [q for q in sugar.queries if q.subset == group]
        balanced = sum(len(words(q.candidates[0])) == len(words(q.candidates[1])) for q in rows)
        assert explains.loc[("bigram", group), "n_length_balanced"] == balanced
