"""The blind (text-only) scorers on synthetic queries: definitions, ties, cross-fitting, bad input.

Every expected value comes from a reference written here from the documented definitions (regex
word counts, wordfreq's own lookup, a dict-based Kneser–Ney bigram, a dense Newton solve of the
logistic regression), never from the package's output. The released data are in
test_blind_released.py.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.special
import wordfreq

from crepe_utils import blind, metrics
from crepe_utils.blind import bigram, classifier, folds
from crepe_utils.blind.text import TextQuery
from crepe_utils.errors import DataError
from blind_reference import reference_bigram, reference_fold, reference_log_probability, words

WORDS = ("dog", "cat", "man", "woman", "red", "blue", "small", "large", "on", "near", "under", "with", "table",
         "chair", "tree", "car", "holding", "wearing", "a", "the")


def random_text(rng, n_words: int = 6) -> str:
    return " ".join(rng.choice(WORDS, size=n_words))


def letters(i: int) -> str:
    """A word of letters only, distinct for each i (digits would split it into two words)."""
    out = ""
    while True:
        out += "bcdfghjklmnpqrstvwxz"[i % 20]
        i //= 20
        if i == 0:
            return "q" + out


def recall_at_1(scores, queries) -> float:
    offsets = np.r_[0, np.cumsum([len(q.candidates) for q in queries])]
    return metrics.recall_at_k(metrics.ranks_from_flat(scores, offsets).pessimistic, 1)


# ---------------------------------------------------------------------------- rules and the table

RULE_TEXTS = ["No, it's NOT a dog's bone; 3 dogs", "nothing to know: a note", "Not not no NO", "", "  ...  ",
              "café au lait", "A man\nwith a hat"]


@pytest.mark.parametrize("name, reference", [
    ("negation", lambda t: -sum(w in ("no", "not") for w in words(t))),
    ("length", lambda t: -len(words(t))),
])
def test_negation_and_length_are_the_published_definitions(name, reference):
    queries = [TextQuery("img", tuple(RULE_TEXTS))]
    assert blind.score(name, queries).tolist() == [float(reference(t)) for t in RULE_TEXTS]


def test_wordfreq_is_the_sum_of_log10_frequencies_with_the_floor():
    texts = ["a dog on a skateboard", "zzqxv dog", "Lamp next to bed", "the THE the"]
    floor = blind.BlindSettings().unknown_frequency
    # wordfreq stores frequencies in whole centibels, so its Zipf value (log10 of the frequency per
    # billion words, to two decimals; 0 for a word it lacks) is exact
    log10 = {w: wordfreq.zipf_frequency(w, "en") - 9 if wordfreq.zipf_frequency(w, "en") else math.log10(floor)
             for t in texts for w in words(t)}
    expected = [sum(log10[w] for w in words(t)) for t in texts]
    got = blind.score("wordfreq", [TextQuery("i", tuple(texts))])
    assert np.allclose(got, expected, rtol=0, atol=1e-9)
    # cased: a capitalised word is not in wordfreq's case-folded list, so it costs the floor
    cased = blind.score("wordfreq-cased", [TextQuery("i", ("Lamp next to bed", "lamp next to bed"))])
    assert cased[0] - cased[1] == pytest.approx(math.log10(floor) - (wordfreq.zipf_frequency("lamp", "en") - 9))


def test_every_scorer_returns_one_float_per_candidate_flat_in_query_order():
    rng = np.random.default_rng(0)
    queries = [TextQuery(f"im{i % 9}", tuple(random_text(rng) for _ in range(1 + i % 4))) for i in range(40)]
    queries.append(TextQuery("lonely", ("",)))
    n = sum(len(q.candidates) for q in queries)
    for name in blind.SCORERS:
        scores = blind.score(name, queries)
        assert scores.shape == (n,) and scores.dtype == np.float64 and np.isfinite(scores).all(), name
    # the flat order is the query order: scoring one query alone gives its slice for a rule
    alone = blind.score("length", [queries[7]])
    start = sum(len(q.candidates) for q in queries[:7])
    assert blind.score("length", queries)[start:start + len(alone)].tolist() == alone.tolist()


def test_equal_texts_get_bit_identical_scores_in_every_scorer():
    rng = np.random.default_rng(1)
    queries = []
    for i in range(60):
        pos = random_text(rng)
        # the positive again, the positive in other case and punctuation, and two others
        queries.append(TextQuery(f"im{i}", (pos, pos, pos.upper() + " !", random_text(rng), random_text(rng))))
    for name, row in blind.SCORERS.items():
        s = blind.score(name, queries).reshape(-1, 5)
        assert (s[:, 0] == s[:, 1]).all(), name
        if row.view is blind.UNCASED:          # the uncased view reads "A DOG !" as "a dog"
            assert (s[:, 0] == s[:, 2]).all(), name


@pytest.mark.parametrize("name", ["wordfreq", "wordfreq-cased"])
def test_an_order_free_score_ties_a_word_swap_exactly(name):
    # Summed in word order, log-frequencies of the same words in another order differ in their last
    # bits for some sentences, which would break a true tie in favour of either side.
    rng = np.random.default_rng(2)
    vocab = list(wordfreq.get_frequency_dict("en"))[:3000]
    queries = []
    for i in range(300):
        ws = list(rng.choice(vocab, size=9))
        queries.append(TextQuery(f"im{i}", (" ".join(ws), " ".join(ws[::-1]), " ".join(sorted(ws)))))
    s = blind.score(name, queries).reshape(-1, 3)
    assert (s[:, 0] == s[:, 1]).all() and (s[:, 0] == s[:, 2]).all()
    assert recall_at_1(s.ravel(), queries) == 0.0


def test_the_table_is_one_row_per_name_and_unknown_names_are_listed():
    assert set(blind.SCORERS) == {"negation", "length", "wordfreq", "wordfreq-cased", "bigram", "bigram-cased",
                                  "bigram-mean", "classifier", "classifier-cased"}
    assert all(row.view is (blind.CASED if name.endswith("-cased") else blind.UNCASED)
               for name, row in blind.SCORERS.items())
    with pytest.raises(KeyError, match="no blind scorer 'bigrams'.*negation, length"):
        blind.score("bigrams", [TextQuery("i", ("a",))])


@pytest.mark.parametrize("query, match", [
    (TextQuery("i", ()), r"query 1 \(image 'i'\): candidates must be a non-empty sequence"),
    (TextQuery("i", "a dog"), r"query 1 \(image 'i'\): candidates must be a non-empty sequence"),
    (TextQuery("i", ("a dog", None)), r"query 1 \(image 'i'\): candidate 1 is NoneType None, not a text"),
    (TextQuery("", ("a dog",)), "query 1 has no image_id"),
    (object(), "query 1 has no image_id"),
])
def test_bad_queries_are_one_line_errors_naming_the_query(query, match):
    with pytest.raises(DataError, match=match) as info:
        blind.score("length", [TextQuery("ok", ("a",)), query])
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("field, value", [("folds", 1), ("l2", 0.0), ("tolerance", 1.0), ("max_iter", 0),
                                          ("min_texts", 0), ("unknown_frequency", 0.0), ("wordlist", "huge")])
def test_bad_settings_are_refused_by_name(field, value):
    with pytest.raises(ValueError, match=f"BlindSettings.{field}"):
        blind.BlindSettings(**{field: value})


def test_a_corpus_read_through_the_other_view_is_refused():
    corpus = blind.read_corpus([TextQuery("i", ("A dog",))], blind.UNCASED)
    with pytest.raises(ValueError, match="reads texts cased; this corpus was read uncased"):
        blind.scorer("bigram-cased").score_corpus(corpus)


# ---------------------------------------------------------------------------- folds

def test_each_fold_is_scored_by_a_model_fit_on_the_other_folds_only():
    rng = np.random.default_rng(3)
    queries = [TextQuery(f"img{i % 50}", (random_text(rng), random_text(rng))) for i in range(200)]
    corpus = blind.read_corpus(queries, blind.UNCASED)
    fits, scored = [], []

    def fit(corpus, training, settings):
        fits.append(training.copy())
        return len(fits) - 1

    def score(model, corpus, sequences):
        scored.append((model, set(sequences.tolist())))
        return np.full(len(sequences), float(model))

    out = folds.cross_fitted(fit, score)(corpus, blind.BlindSettings())
    fold = np.array([reference_fold(q.image_id) for q in queries])
    assert len(fits) == len(set(fold)) == 5
    for model, training in enumerate(fits):
        held_out = ~training
        k = fold[held_out][0]
        assert (held_out == (fold == k)).all()          # trained on every other fold, none of fold k
        per_query = out.reshape(-1, 2)[held_out]
        assert (per_query == model).all()                # fold k's candidates scored by that model
        assert scored[model][1] == set(corpus.candidate_sequence.reshape(-1, 2)[held_out].ravel().tolist())


def test_folds_follow_the_image_hash_whatever_the_order_and_the_python_hash_seed():
    ids = [str(i) for i in range(0, 3000, 7)] + ["000000085329.jpg", "winoground-3", "ünïcode"]
    queries = [TextQuery(i, ("a",)) for i in ids]
    expected = [reference_fold(i) for i in ids]
    assert folds.query_folds(blind.read_corpus(queries, blind.UNCASED), 5).tolist() == expected
    shuffled = [queries[i] for i in np.random.default_rng(0).permutation(len(queries))]
    got = folds.query_folds(blind.read_corpus(shuffled, blind.UNCASED), 5).tolist()
    assert got == [reference_fold(q.image_id) for q in shuffled]
    assert 0.1 < np.mean(np.array(expected) == 0) < 0.3          # folds are of similar size
    code = ("from crepe_utils.blind import folds; import sys; "
            "print([folds.fold_of(str(i), 5) for i in range(50)])")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(outs) == 1


def leaky_queries(n_images: int = 150, queries_per_image: int = 2, seed: int = 4) -> list[TextQuery]:
    """Each image's texts carry a word no other image has: its positive one word, each negative
    another. The rest is random words, alike for positives and negatives."""
    rng = np.random.default_rng(seed)
    out, next_word = [], iter(range(10**6))
    for i in range(n_images):
        positive = f"{random_text(rng)} {letters(next(next_word))}"
        for _ in range(queries_per_image):
            negatives = tuple(f"{random_text(rng)} {letters(next(next_word))}" for _ in range(5))
            out.append(TextQuery(f"image{i}", (positive,) + negatives))
    return out


def leaky_fit(fit, score, corpus, settings):
    """What a wrong implementation does: one model trained on every query, scoring them all."""
    model = fit(corpus, np.ones(corpus.n_queries, dtype=bool), settings)
    return score(model, corpus, np.arange(corpus.n_sequences))[corpus.candidate_sequence]


def folds_by_query(fit, score, corpus, settings):
    """Another wrong one: folds drawn per query, so an image's other queries sit in the training folds."""
    fold = np.arange(corpus.n_queries) % settings.folds
    out = np.empty(len(corpus.candidate_sequence))
    for k in range(settings.folds):
        model = fit(corpus, fold != k, settings)
        at = np.flatnonzero((fold == k)[corpus.candidate_query])
        out[at] = score(model, corpus, np.arange(corpus.n_sequences))[corpus.candidate_sequence[at]]
    return out


@pytest.mark.parametrize("name, fit, score", [("bigram", bigram.fit, bigram.log_probability),
                                              ("bigram-mean", bigram.fit, bigram.mean_log_probability),
                                              ("classifier", classifier.fit, classifier.logit)])
def test_cross_fitting_keeps_an_images_texts_out_of_its_training_folds(name, fit, score):
    queries = leaky_queries()
    settings = blind.BlindSettings(min_texts=1)       # let a leaked word count even when one text has it
    corpus = blind.read_corpus(queries, blind.UNCASED)
    honest = recall_at_1(blind.score(name, queries, settings), queries)
    assert 5 < honest < 30, honest                                        # chance is 1/6
    assert recall_at_1(leaky_fit(fit, score, corpus, settings), queries) > 95
    assert recall_at_1(folds_by_query(fit, score, corpus, settings), queries) > 60


def test_the_cased_views_see_the_casing_artefact_and_the_uncased_do_not():
    # positives lower-case, negatives sentence-cased, words otherwise drawn alike (HN-Neg's artefact)
    rng = np.random.default_rng(5)
    queries = [TextQuery(f"im{i}", tuple(random_text(rng).capitalize() if j else random_text(rng)
                                         for j in range(4))) for i in range(300)]
    for name in ("wordfreq", "bigram", "classifier"):
        assert recall_at_1(blind.score(name + "-cased", queries), queries) > 90, name
        assert recall_at_1(blind.score(name, queries), queries) < 45, name          # chance is 25


# ---------------------------------------------------------------------------- the trained scorers against references

def test_the_reference_bigram_is_a_distribution():
    p, known = reference_bigram(["a dog on a table", "a cat under a table", "the man with a dog"])
    for v in ("<s>", "a", "dog", "table", "never-seen"):
        assert math.fsum(p(v, w) for w in known) + p(v, "unseen-word") == pytest.approx(1.0, abs=1e-12)


def test_bigram_scores_equal_a_kneser_ney_reference_fit_on_the_other_folds_true_captions():
    rng = np.random.default_rng(6)
    queries = []
    for i in range(120):
        positive = random_text(rng, 5 + i % 4)
        for _ in range(1 + i % 2):             # some images have two queries (one caption, counted once)
            queries.append(TextQuery(f"im{i}", (positive,) + tuple(random_text(rng) + " zebra" * (i % 3)
                                                                   for _ in range(3))))
    got = blind.score("bigram", queries)
    models = {}
    for k in range(5):
        training = {(r.image_id, " ".join(words(r.candidates[0]))) for r in queries if reference_fold(r.image_id) != k}
        models[k] = reference_bigram([caption for _, caption in sorted(training)])[0]
    expected = [reference_log_probability(models[reference_fold(q.image_id)], c) for q in queries for c in q.candidates]
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_bigram_mean_is_the_reference_log_probability_per_prediction():
    # captions of every length, the empty one included: the mean divides by the words plus the sentence end
    rng = np.random.default_rng(8)
    queries = [TextQuery(f"im{i}", tuple(random_text(rng, int(k)) for k in rng.integers(0, 9, size=4)))
               for i in range(100)]
    got = blind.score("bigram-mean", queries)
    total = blind.score("bigram", queries)
    models = {}
    for k in range(5):
        training = {(r.image_id, " ".join(words(r.candidates[0]))) for r in queries if reference_fold(r.image_id) != k}
        models[k] = reference_bigram([caption for _, caption in sorted(training)])[0]
    expected = [reference_log_probability(models[reference_fold(q.image_id)], c) / (len(words(c)) + 1)
                for q in queries for c in q.candidates]
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-12)
    lengths = np.array([len(words(c)) for q in queries for c in q.candidates])
    assert (got == total / (lengths + 1)).all()            # the same model, so the same ties as the total's


def presence(text: str) -> set:
    s = ["<s>"] + words(text) + ["</s>"]
    return set(words(text)) | {(v, w) for v, w in zip(s, s[1:])}


def reference_logistic(rows: list[set], labels: list[int], l2: float) -> tuple[dict, float]:
    """Exact minimiser of Σ log(1 + exp(−y z)) + l2/2 ‖w‖² (bias unpenalised) by Newton's method."""
    features = sorted({f for r in rows for f in r}, key=repr)
    x = np.array([[f in r for f in features] + [1.0] for r in rows], dtype=float)
    t = np.array(labels, dtype=float)
    penalty = np.r_[np.full(len(features), l2), 0.0]
    w = np.zeros(x.shape[1])
    for _ in range(100):
        p = scipy.special.expit(x @ w)
        gradient = x.T @ (p - t) + penalty * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        w -= np.linalg.solve(hessian, gradient)
    return dict(zip(features, w[:-1])), float(w[-1])


def test_classifier_logits_equal_an_exact_logistic_regression_on_the_other_folds():
    rng = np.random.default_rng(7)
    queries = [TextQuery(f"im{i}", (random_text(rng, 4) + " with a hat",) + tuple(random_text(rng, 4)
                                                                                for _ in range(3)))
               for i in range(60)]
    settings = blind.BlindSettings(min_texts=1, tolerance=1e-14)
    got = blind.score("classifier", queries, settings)
    models = {}
    for k in range(5):
        pairs = sorted({(tuple(words(c)), int(j == 0)) for r in queries if reference_fold(r.image_id) != k
                        for j, c in enumerate(r.candidates)})
        models[k] = reference_logistic([presence(" ".join(ws)) for ws, _ in pairs], [y for _, y in pairs],
                                       settings.l2)
    expected = [models[k][1] + sum(models[k][0].get(f, 0.0) for f in presence(c))
                for q in queries for k in [reference_fold(q.image_id)] for c in q.candidates]
    assert np.allclose(got, expected, rtol=0, atol=1e-4)
