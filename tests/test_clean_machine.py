"""What the tests on the reference data check, checked again on synthetic data (no ../shared needed).

Each test names the reference-data test it stands in for. Expected values are counted by hand
or by a naive loop written here, never by the code under test.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import helpers
from crepe_utils.benchmarks.crepe import queries as D
from crepe_utils.benchmarks.crepe import validation
from crepe_utils.claims.base import PAPER, PASS
from crepe_utils.analysis.correlation import r_squared, r_squared_with_uncertainty
from crepe_utils.benchmarks.winoground import claims as wc

POS = "a red dog on a table"
NEGS = {"atom": ["a blue dog on a table", "a red cat on a table", "a red dog on a chair", "a red dog under a table",
                 "a green dog on a table", "a red dog on a bed"],
        "swap": ["a table on a red dog", "a dog on a red table", "a red table on a dog", "red a dog on a table",
                 "a red on dog a table", "table a red dog on a"],
        "negate": ["a red dog not on a table", "no red dog on a table", "a red dog on no table",
                   "A red dog on a table", "a red dog is not on a table", "not a red dog on a table"]}


def _row(image_id="7", caption=POS, negs=None, box=(1.0, 2.0, 30.0, 20.0)):
    x, y, w, h = box
    return dict(image_id=image_id, caption=caption, x=x, y=y, width=w, height=h, hard_negs=negs)


@pytest.fixture
def twin_root(tmp_path):
    """Three HN-type files at n = 4: two crops present in all three types, one only in atom.

    HN-Neg's fourth negative is the positive sentence-cased (a token-identical tie); HN-Swap's
    second row holds its positive among its negatives; HN-Atom's third row is a set literal.
    """
    for hn, negs in NEGS.items():
        rows = [_row(negs=negs[:5]), _row(image_id="8", caption="a cat under a chair", negs=[n + "!" for n in negs[:5]])]
        if hn == "atom":
            rows.append(_row(image_id="9", caption="a man near a tree", negs=set(negs[1:6])))
        if hn == "swap":
            rows[1]["hard_negs"] = ["a chair under a cat", "a cat under a chair", "under a cat a chair",
                                    "a under cat chair a", "chair a under a cat"]
        helpers.write_productivity_csv(tmp_path / "prod_hard_negatives" / hn /
                                       f"prod_vg_hard_negs_{hn}_complexity_4.csv", rows, 4)
    return tmp_path


def test_all_negatives_sets_on_synthetic_twins(twin_root):
    """Stands in for test_data.test_all_negatives_sets_on_real_files."""
    qs = D.load_productivity(twin_root, complexities=[4])
    combined = D.all_negatives_sets(qs)
    assert len(combined) == 2                                   # image 9 has no swap or negate twin
    assert {len(q.candidates) for q in combined} == {16}
    first = next(q for q in combined if q.image_id == "7")
    assert first.positive == POS
    assert first.negatives == tuple(NEGS["atom"][:5] + NEGS["swap"][:5] + NEGS["negate"][:5])


def test_statistics_and_ties_of_a_synthetic_folder(twin_root):
    """Stands in for test_validation.test_report_on_the_real_productivity_files and test_data's counts."""
    report = validation.validate(twin_root, token_lengths=True)
    assert report.ok, report.errors
    s = report.stats
    assert s["n_rows"] == 7 and s["rows_per_type"] == {"atom": 3, "swap": 2, "negate": 2}
    assert s["n_hard_negatives"] == 7 * 5
    assert s["n_ground_truths"] == 3 and s["n_images"] == 3 and s["n_crops"] == 3
    assert s["set_literal_rows"] == 1 and s["positive_among_negatives"] == 1
    assert s["repeated_ground_truths"] == 0
    # a string comparison sees one tie (swap's row 2); the tokenizer also sees "A red dog on a table"
    assert s["token_identical_ties"] == 2
    assert any("negate: 1" in n and "swap: 1" in n for n in report.notes)
    assert validation.query_counts(D.load_productivity(twin_root, complexities=[4]).queries) == {
        ("atom", 4): 3, ("swap", 4): 2, ("negate", 4): 2}
    files = s["files"]
    assert files["prod_vg_hard_negs_atom_complexity_4.csv"]["ground_truths"] == 3
    assert files["prod_vg_hard_negs_swap_complexity_4.csv"]["positive_among_negatives"] == 1


def _table5_frame() -> pd.DataFrame:
    """83 examples whose secondary tags give Table 1's counts (41/31/24) and Table 5's subsets (28/23/17)."""
    tags = (["Symbolic"] * 28 + ["Symbolic, Pragmatics"] * 5 + ["Symbolic, Series"] * 8 + ["Series"] * 23
            + ["Pragmatics"] * 17 + ["Pragmatics, Morpheme-Level"] * 2)
    return pd.DataFrame([dict(id=i, caption_0=f"the dog {i} bites a cat", caption_1=f"a cat bites the dog {i}",
                              tag="Noun", secondary_tag=t, num_main_preds=1, collapsed_tag="Relation")
                         for i, t in enumerate(tags)])


def test_table5_denominators_on_synthetic_tags():
    """Stands in for test_winoground.test_data_checks_on_the_shared_metadata (secondary tags, Table 5)."""
    frame = _table5_frame()
    counts = wc.secondary_tag_counts(frame).set_index("tag")
    assert counts.loc["Symbolic"].tolist() == [41, 28] and counts.loc["Series"].tolist() == [31, 23]
    assert counts.loc["Pragmatics"].tolist() == [24, 17]
    pins = {"examples": 83, "distinct_ids": 83, "tag:Object": 0, "tag:Relation": 83, "tag:Both": 0,
            "secondary:Symbolic": 41, "secondary:Series": 31, "secondary:Pragmatics": 24,
            "secondary_exact:Symbolic": 28, "secondary_exact:Series": 23, "secondary_exact:Pragmatics": 17,
            "pairs_differing_words": 0, "pairs_same_letters": 0, "metadata_sha256": "not this copy"}
    rows = {c.claim: c for c in wc.data_checks(frame, pins)}
    for tag in ("Symbolic", "Series", "Pragmatics"):
        assert rows[f"Examples with secondary tag {tag} (Table 1)"].status == PASS
    table5 = [c for c in rows.values() if c.claim.startswith("Table 5")]
    # 96.43 = 27/28, 95.65 = 22/23, 58.82 = 10/17: no k/41, k/31, k/24 gives them
    assert [c.ours for c in table5] == ["denominator 28", "denominator 23", "denominator 17"]
    assert [c.status for c in table5] == [PAPER] * 3


def _naive_bootstrap_r2(x, y, n_boot, seed, level=0.95):
    """Resample points with replacement one sample at a time; R² as the squared Pearson correlation."""
    rng = np.random.default_rng(seed)
    values, degenerate = [], 0
    for _ in range(n_boot):
        idx = rng.integers(0, len(x), size=len(x))
        xs, ys = x[idx], y[idx]
        if xs.min() == xs.max() or ys.min() == ys.max():
            degenerate += 1
            continue
        values.append(np.corrcoef(xs, ys)[0, 1] ** 2)
    alpha = (1 - level) / 2
    return np.quantile(values, alpha), np.quantile(values, 1 - alpha), degenerate


@pytest.mark.parametrize("seed", [0, 7])
def test_r2_bootstrap_equals_a_naive_resampling_loop(seed):
    """Tightens test_metrics.test_r_squared_interval_and_leave_one_out: the interval itself, not its order."""
    x = np.array([32.7, 34.8, 36.45, 62.96, 67.07, 69.21, 72.77])
    y = np.array([43.35, 43.26, 39.26, 55.32, 57.18, 57.95, 59.11])
    res = r_squared_with_uncertainty(x, y, n_boot=2000, seed=seed)
    lo, hi, degenerate = _naive_bootstrap_r2(x, y, 2000, seed)
    assert res.ci_low == pytest.approx(lo, rel=1e-9) and res.ci_high == pytest.approx(hi, rel=1e-9)
    assert res.n_degenerate == degenerate and res.n_boot == 2000
    assert res.r2 == pytest.approx(np.corrcoef(x, y)[0, 1] ** 2, rel=1e-12)


def test_r2_bootstrap_counts_degenerate_samples_like_the_naive_loop():
    x = np.array([1.0, 1.0, 1.0, 2.0])                   # three equal points: many resamples are constant
    y = np.array([3.0, 3.5, 2.5, 8.0])
    res = r_squared_with_uncertainty(x, y, n_boot=500, seed=3)
    lo, hi, degenerate = _naive_bootstrap_r2(x, y, 500, seed=3)
    assert degenerate > 0 and res.n_degenerate == degenerate
    assert res.ci_low == pytest.approx(lo, rel=1e-9) and res.ci_high == pytest.approx(hi, rel=1e-9)
    assert res.loo_min == pytest.approx(min(r_squared(np.delete(x, i), np.delete(y, i)) for i in range(4)
                                            if np.ptp(np.delete(x, i)) > 0), nan_ok=True)
