"""Counts of the released data: ours against the pinned ones (a difference fails), the pinned against the paper.

The references here are written independently of the package: the CSVs are recounted with the csv
and ast modules, the Winoground digest with hashlib.
"""
from __future__ import annotations

import ast
import csv
import hashlib
import shutil
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from crepe_utils.benchmarks.crepe import checks
from crepe_utils.benchmarks.crepe import reported
from crepe_utils.benchmarks.crepe import validation
from crepe_utils.claims.base import FAIL, NEEDS, PAPER, PASS
from crepe_utils.benchmarks.winoground import claims as wc

FILE_COLUMNS = ["rows", "hard_negatives", "ground_truths", "set_literal_rows", "positive_among_negatives"]


def naive_file_counts(path: Path) -> dict:
    """One productivity CSV counted row by row with the standard library."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    negs = [ast.literal_eval(r["hard_negs"]) for r in rows]
    return {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "rows": len(rows),
            "hard_negatives": sum(len(n) for n in negs),
            "ground_truths": len({(r["image_id"], r["caption"]) for r in rows}),
            "set_literal_rows": sum(isinstance(n, set) for n in negs),
            "positive_among_negatives": sum(r["caption"] in n for r, n in zip(rows, negs))}


def naive_pins(data_dir: Path) -> tuple[pd.DataFrame, dict]:
    """(per-file table, totals) of every productivity CSV under ``data_dir``, as reported/ pins them."""
    files, every = [], []
    for path in sorted(data_dir.rglob("prod_vg_hard_negs_*_complexity_*.csv")):
        hn, n = path.stem.split("_")[4], int(path.stem.split("_")[-1])
        files.append({"file": path.name, "hn_type": hn, "complexity": n, **naive_file_counts(path)})
        with open(path, newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                negs = ast.literal_eval(r["hard_negs"])
                box = tuple(float(r[k]) for k in ("x", "y", "width", "height"))
                every.append((hn, r["image_id"], r["caption"], box, len(negs), isinstance(negs, set),
                              r["caption"] in negs))
    per_type = Counter(e[0] for e in every)
    totals = {"rows": len(every), "hard_negatives": sum(e[4] for e in every),
              "ground_truths": len({(e[1], e[2]) for e in every}), "images": len({e[1] for e in every}),
              "crops": len({(e[1], e[3]) for e in every}), "set_literal_rows": sum(e[5] for e in every),
              "positive_among_negatives": sum(e[6] for e in every),
              "repeated_ground_truths": len(every) - len({(e[0], e[1], e[2]) for e in every}),
              **{f"rows:{t}": per_type.get(t, 0) for t in ("atom", "swap", "negate")}}
    return pd.DataFrame(files), totals


def by_claim(rows):
    return {r.claim: r for r in rows}


SHA_ROW = "The productivity CSVs present are the released files (pinned sha256)"
FILE_ROW = "Our counts of each productivity CSV equal the pinned counts"


@pytest.fixture
def synthetic_release(synthetic_root):
    data_dir, _ = synthetic_root
    files, totals = naive_pins(data_dir)
    report = validation.validate(data_dir, token_lengths=False)
    return data_dir, files, totals, report


def test_our_counts_of_the_synthetic_release_agree_with_the_pins(synthetic_release):
    data_dir, files, totals, report = synthetic_release
    rows = by_claim(checks.check_productivity_totals(report.stats, pinned_files=files, pinned_totals=totals))
    total_row = f"Our totals over the {len(files)} productivity CSVs equal the pinned totals"
    assert [rows[n].status for n in (SHA_ROW, FILE_ROW, total_row)] == [PASS] * 3
    # the synthetic totals are not the paper's: pinned ≠ paper is the paper's inconsistency, not ours
    assert rows["Productivity HN texts = Table 1"].status == PAPER
    assert rows["Productivity HN texts = Table 1"].ours == f"{totals['hard_negatives']:,}"


@pytest.mark.parametrize("where, key", [("files", "ground_truths"), ("files", "rows"), ("files", "hard_negatives"),
                                        ("files", "queries"), ("files", "set_literal_rows"),
                                        ("files", "positive_among_negatives")])
def test_a_miscount_of_one_file_fails_and_blames_us(synthetic_release, where, key):
    _, files, totals, report = synthetic_release
    stats = {**report.stats, "files": {k: dict(v) for k, v in report.stats["files"].items()}}
    name = sorted(stats["files"])[0]
    stats["files"][name][key] += 1
    row = by_claim(checks.check_productivity_totals(stats, pinned_files=files, pinned_totals=totals))[FILE_ROW]
    assert row.status == FAIL and f"{name}: {key}" in row.detail and "our count is wrong" in row.detail


@pytest.mark.parametrize("stat, claim", [("n_ground_truths", "Productivity ground truths = Table 1"),
                                         ("n_hard_negatives", "Productivity HN texts = Table 1")])
def test_a_miscounted_total_fails_instead_of_blaming_the_paper(synthetic_release, stat, claim):
    _, files, totals, report = synthetic_release
    rows = by_claim(checks.check_productivity_totals({**report.stats, stat: report.stats[stat] - 1},
                                                     pinned_files=files, pinned_totals=totals))
    assert rows[claim].status == FAIL and "differs from the pinned count" in rows[claim].detail
    assert rows[f"Our totals over the {len(files)} productivity CSVs equal the pinned totals"].status == FAIL


def test_miscounted_rows_per_type_fail_the_17k_row(synthetic_release):
    _, files, totals, report = synthetic_release
    stats = {**report.stats, "rows_per_type": {**report.stats["rows_per_type"], "atom": 1}}
    rows = by_claim(checks.check_productivity_totals(stats, pinned_files=files, pinned_totals=totals))
    assert rows["Abstract: 17K productivity image-text pairs (HN-Atom rows)"].status == FAIL


def test_pinned_equal_to_the_paper_passes(synthetic_release):
    _, files, totals, report = synthetic_release
    claims = reported.claims()
    claims.loc[claims["claim_id"] == "prod_hn_table1", "value"] = totals["hard_negatives"]
    rows = by_claim(checks.check_productivity_totals(report.stats, claims, files, totals))
    assert rows["Productivity HN texts = Table 1"].status == PASS


def test_other_bytes_with_the_same_counts_pass_the_checksum_row_with_a_note(synthetic_root, tmp_path):
    """A copy that differs only in what is not counted (here a trailing blank line) is the release's data: a
    user whose official archive differs from the pinned copy that way must not see `make check` fail."""
    data_dir, _ = synthetic_root
    files, totals = naive_pins(data_dir)
    copy = tmp_path / "crepe"
    shutil.copytree(data_dir, copy)
    target = next(copy.rglob("prod_vg_hard_negs_atom_complexity_4.csv"))
    target.write_text(target.read_text().replace(",4,", ",4,", 1) + "\n")       # same rows, other bytes
    rows = by_claim(checks.check_productivity_totals(validation.validate(copy, token_lengths=False).stats,
                                                     pinned_files=files, pinned_totals=totals))
    assert rows[SHA_ROW].status == PASS and target.name in rows[SHA_ROW].detail
    assert "every count agrees" in rows[SHA_ROW].detail
    assert rows[FILE_ROW].status == PASS                                          # the counts still agree


def test_a_changed_file_with_other_counts_fails_the_checksum_row(synthetic_root, tmp_path):
    data_dir, _ = synthetic_root
    files, totals = naive_pins(data_dir)
    copy = tmp_path / "crepe"
    shutil.copytree(data_dir, copy)
    target = next(copy.rglob("prod_vg_hard_negs_atom_complexity_4.csv"))
    lines = target.read_text().splitlines()
    target.write_text("\n".join(lines[:-1]) + "\n")                             # one row fewer
    rows = by_claim(checks.check_productivity_totals(validation.validate(copy, token_lengths=False).stats,
                                                     pinned_files=files, pinned_totals=totals))
    assert rows[SHA_ROW].status == FAIL and "counts differ too" in rows[SHA_ROW].detail
    assert rows[FILE_ROW].status == FAIL


def test_partial_data_compares_files_but_not_totals(synthetic_root, tmp_path):
    data_dir, _ = synthetic_root
    files, totals = naive_pins(data_dir)
    copy = tmp_path / "crepe"
    shutil.copytree(data_dir, copy)
    next(copy.rglob("prod_vg_hard_negs_swap_complexity_5.csv")).unlink()
    rows = by_claim(checks.check_productivity_totals(validation.validate(copy, token_lengths=False).stats,
                                                     pinned_files=files, pinned_totals=totals))
    assert rows[SHA_ROW].status == PASS and rows[FILE_ROW].status == PASS
    assert rows["Productivity HN texts = Table 1"].status == NEEDS
    assert "5 of 6 released CSVs present" in rows["Productivity HN texts = Table 1"].detail


def test_no_data_needs_data():
    assert {r.status for r in checks.check_productivity_totals(None)} == {NEEDS}


# ------------------------------------------------------------------------------ Winoground

def naive_wg_pins(frame: pd.DataFrame) -> dict:
    """Winoground's pinned quantities recounted from plain records (same definitions as reported/)."""
    import string
    recs = frame.to_dict("records")
    split = Counter(t.strip() for r in recs for t in (r["secondary_tag"] or "").split(",") if t.strip())
    exact = Counter((r["secondary_tag"] or "").strip() for r in recs)

    def bag(c):
        return Counter(w.strip(string.punctuation) for w in c.lower().split() if w.strip(string.punctuation))

    differ = [r for r in recs if bag(r["caption_0"]) != bag(r["caption_1"])
              or r["caption_0"].lower().split() == r["caption_1"].lower().split()]
    same_letters = [r for r in differ if sorted(ch for ch in r["caption_0"].lower() if ch.isalnum())
                    == sorted(ch for ch in r["caption_1"].lower() if ch.isalnum())]
    text = "".join(f"{r['id']}\t{r['caption_0']}\t{r['caption_1']}\t{r['collapsed_tag']}\t{r['secondary_tag'] or ''}\n"
                   for r in sorted(recs, key=lambda r: int(r["id"])))
    tags = Counter(r["collapsed_tag"] for r in recs)
    return {"examples": len(recs), "distinct_ids": len({r["id"] for r in recs}),
            **{f"tag:{t}": tags.get(t, 0) for t in ("Object", "Relation", "Both")},
            **{f"secondary:{t}": split.get(t, 0) for t in ("Symbolic", "Series", "Pragmatics")},
            **{f"secondary_exact:{t}": exact.get(t, 0) for t in ("Symbolic", "Series", "Pragmatics")},
            "pairs_differing_words": len(differ), "pairs_same_letters": len(same_letters),
            "metadata_sha256": hashlib.sha256(text.encode()).hexdigest()}


def _wg_frame():
    from test_winoground import RECORDS
    return pd.DataFrame(RECORDS)


def test_winoground_digest_matches_an_independent_one():
    frame = _wg_frame()
    assert wc.metadata_digest(frame) == naive_wg_pins(frame)["metadata_sha256"]
    assert wc.metadata_digest(frame.iloc[::-1]) == naive_wg_pins(frame)["metadata_sha256"]   # order-free


def test_winoground_counts_that_agree_with_their_pins_are_judged_against_the_paper():
    frame = _wg_frame()
    pins = naive_wg_pins(frame)
    rows = wc.data_checks(frame, pins)
    counts = [r for r in rows if r.claim.startswith(("Winoground has", "Examples tagged", "Examples with", "Table 5"))]
    assert counts and FAIL not in {r.status for r in counts}      # 8 examples ≠ 400: the paper's side, here
    assert by_claim(rows)["Winoground has 400 examples"].status == PAPER


@pytest.mark.parametrize("quantity, claim", [
    ("examples", "Winoground has 400 examples"), ("distinct_ids", "Winoground has 400 examples"),
    ("tag:Object", "Examples tagged Object (Table 1)"), ("tag:Both", "Examples tagged Both (Table 1)"),
    ("secondary:Series", "Examples with secondary tag Series (Table 1)"),
    ("secondary_exact:Symbolic", "Table 5 human score on Symbolic uses Table 1's 41 examples"),
    ("pairs_differing_words", "The two captions use the same words or morphemes in a different order (§3.1)"),
    ("pairs_same_letters", "The two captions use the same words or morphemes in a different order (§3.1)"),
])
def test_a_winoground_count_that_differs_from_its_pin_fails_and_blames_us(quantity, claim):
    frame = _wg_frame()
    pins = naive_wg_pins(frame)
    pins[quantity] += 1
    row = by_claim(wc.data_checks(frame, pins))[claim]
    assert row.status == FAIL and "(same digest): our count is wrong" in row.detail


# ------------------------------------------------------------------------------ the real files

@pytest.mark.shared
def test_pinned_productivity_counts_equal_a_recount_of_the_real_files(shared_crepe):
    files, totals = naive_pins(shared_crepe)
    pinned = reported.released_productivity_files()
    merged = pinned.merge(files, on=["file", "hn_type", "complexity"], suffixes=("", "_recount"))
    assert len(merged) == len(pinned) == 27
    for col in ["sha256"] + FILE_COLUMNS:
        assert (merged[col] == merged[f"{col}_recount"]).all(), col
    assert totals == {k: v for k, v in reported.released_counts().items()}


@pytest.mark.shared
def test_pinned_winoground_counts_equal_a_recount_of_the_real_metadata(shared_winoground):
    from crepe_utils.benchmarks.winoground import metadata as wm, reported as wg_reported
    frame = wm.load_text_metadata(shared_winoground)
    assert naive_wg_pins(frame) == wg_reported.released_counts()
