"""SugarCrepe's claims: each computed from tables handed to it, each seen to fail on a wrong number, and the
published tables as the package carries them (marked shared: against the reference transcription)."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from crepe_utils.benchmarks.sugarcrepe import reported
from crepe_utils.models import imagenet as imagenet_table
from crepe_utils.benchmarks.sugarcrepe import claims as S
from crepe_utils.claims.base import FAIL, NEEDS, PAPER, PART, PASS
from crepe_utils import benchmarks

SUBSETS = ["add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj"]
RELEASED = {"add_att": 692, "add_obj": 2062, "replace_att": 788, "replace_obj": 1652, "replace_rel": 1406,
            "swap_att": 666, "swap_obj": 245}


def table(rows: list[tuple]) -> pd.DataFrame:
    """A results table: (model, subset, r1, decimals, imagenet_model)."""
    return pd.DataFrame(rows, columns=["model", "subset", "r1", "decimals", "imagenet_model"])


# ------------------------------------------------------------------ (a) granularity

def test_granularity_passes_k_over_n_and_fails_a_value_that_is_not():
    pinned = {"pairs": 208, "pairs:tiny": 8, "pairs:big": 200}
    ok = table([("m1", "tiny", 12.50, 2, ""), ("m2", "tiny", 37.50, 2, ""), ("human", "big", 33, 0, "")])
    checks = S.check_r1_granularity(ok, pinned)
    assert [c.status for c in checks] == [PASS, PASS]
    assert checks[0].ours == "2 of 2 are k/8" and checks[1].ours == "0 of 0 are k/200"   # whole percents not counted
    wrong = table([("m1", "tiny", 12.50, 2, ""), ("m2", "tiny", 40.00, 2, "")])
    (check,) = S.check_r1_granularity(wrong, pinned)
    assert check.status == FAIL and check.detail == "m2: 40.00 is not k/8"


def test_granularity_explained_by_the_earlier_file_is_a_paper_inconsistency_and_only_then():
    pinned = {"pairs": 8, "pairs:tiny": 8, "pairs_before_546eb51:tiny": 9}
    earlier = table([("m1", "tiny", 44.44, 2, ""), ("m2", "tiny", 11.11, 2, "")])    # 4/9, 1/9: not k/8
    (check,) = S.check_r1_granularity(earlier, pinned)
    assert check.status == PAPER and "are k/9" in check.detail and check.ours == "0 of 2 are k/8"
    mixed = table([("m1", "tiny", 44.44, 2, ""), ("m2", "tiny", 11.50, 2, "")])      # 11.50 is neither
    assert S.check_r1_granularity(mixed, pinned)[0].status == FAIL


def test_granularity_of_the_published_table():
    checks = S.check_r1_granularity()
    assert len(checks) == 7
    for c in checks:
        subset = c.claim.split(" on ")[1].split(" are ")[0]
        assert f"its {RELEASED[subset]:,} released pairs" in c.claim
        # 17 CLIP models, Vera and the grammar model; the human row is printed in whole percents
        assert c.status == (PAPER if subset == "swap_obj" else PASS) and c.paper == "19 values", c
    # one transcription slip: 91.78 is not k/1652 (1516/1652 = 91.77, 1517/1652 = 91.83)
    published = reported.results()
    slip = (published["model"] == "RN50") & (published["subset"] == "replace_obj")
    assert published.loc[slip, "r1"].tolist() == [91.77]
    published.loc[slip, "r1"] = 91.78
    failed = [c for c in S.check_r1_granularity(published) if c.status == FAIL]
    assert len(failed) == 1 and failed[0].detail == "RN50: 91.78 is not k/1652"


# ------------------------------------------------------------------ (b) correlation with ImageNet

def test_correlation_is_pass_within_rounding_paper_one_step_beyond_and_fail_further():
    # x = 10, 20, 30 and y = 1, 2, 4: Sxy = 30, Sxx = 200, Syy = 14/3, r = 30 / sqrt(2800/3) = 0.98198
    published = table([(m, "tiny", y, 2, m) for m, y in (("a", 1.0), ("b", 2.0), ("c", 4.0))])
    imagenet = pd.Series({"a": 10.0, "b": 20.0, "c": 30.0})
    expected = 30 / math.sqrt(2800 / 3)

    def status(r: float, decimals: int = 2):
        r_table = pd.DataFrame([("tiny", r, decimals)], columns=["subset", "pearson_r", "decimals"])
        (check,) = S.check_imagenet_correlation(published, r_table, imagenet)
        return check

    assert status(0.98).status == PASS and f"ours {expected:.4f}" in status(0.98).detail
    assert status(1.0, 1).status == PASS                       # 0.98 prints as 1.0 to one decimal
    assert status(0.97).status == PART and status(0.99).status == PART
    assert status(0.96).status == FAIL and status(0.5).status == FAIL
    lacking = imagenet.drop("b")
    r_table = pd.DataFrame([("tiny", 0.98, 2)], columns=["subset", "pearson_r", "decimals"])
    (check,) = S.check_imagenet_correlation(published, r_table, lacking)
    assert check.status == FAIL and "no ImageNet top-1 for b" in check.detail


def plain_pearson(xs: list[float], ys: list[float]) -> float:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return sxy / math.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))


def test_correlation_of_the_published_table():
    published, imagenet = reported.results(), imagenet_table.top1("open_clip_results_table")
    clip = published[published["imagenet_model"] != ""]
    assert clip["model"].nunique() == 17 and clip["imagenet_model"].nunique() == 17
    checks = {c.claim.split("SugarCrepe ")[1].split(" R@1")[0]: c for c in S.check_imagenet_correlation()}
    assert set(checks) == set(SUBSETS)
    for subset, check in checks.items():
        g = clip[clip["subset"] == subset]
        ours = plain_pearson([imagenet[m] for m in g["imagenet_model"]], list(g["r1"]))
        assert f"17 models; ours {ours:.4f}" in check.detail, subset
    # recomputed 0.8017, 0.8889, 0.7598 against the printed 0.81, 0.88, 0.75
    assert {s for s, c in checks.items() if c.status == PART} == {"swap_att", "add_obj", "add_att"}
    assert {s for s, c in checks.items() if c.status == PASS} == {"replace_obj", "replace_att", "replace_rel", "swap_obj"}
    # a wrong R@1 (DataComp small on replace_obj, 56.90 typed as 96.90) takes its subset to fail
    slip = (published["model"] == "small:ViT-B-32") & (published["subset"] == "replace_obj")
    published.loc[slip, "r1"] = 96.90
    failed = [c for c in S.check_imagenet_correlation(published) if c.status == FAIL]
    assert len(failed) == 1 and "replace_obj" in failed[0].claim


# ------------------------------------------------------------------ (c) the released files

def test_subset_sizes_against_the_pinned_counts():
    pinned = reported.released_counts()
    (ok,) = S.check_subset_sizes(dict(RELEASED), pinned)
    assert ok.status == PASS and ok.ours == "7,511 pairs; 7 of 7 subsets agree"
    (off,) = S.check_subset_sizes(dict(RELEASED, swap_obj=246), pinned)
    assert off.status == FAIL and off.detail.startswith("swap_obj: 246, pinned 245")
    (short,) = S.check_subset_sizes({s: n for s, n in RELEASED.items() if s != "add_obj"}, pinned)
    assert short.status == FAIL and "add_obj: 0, pinned 2,062" in short.detail
    (bad_pin,) = S.check_subset_sizes(dict(RELEASED), dict(pinned, pairs=7512))
    assert bad_pin.status == FAIL and "not the pinned total 7,512" in bad_pin.detail
    assert S.check_subset_sizes(None, pinned)[0].status == NEEDS


def write_jsons(folder: Path, counts: dict[str, int]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for subset, n in counts.items():
        items = {str(i): {"filename": f"{i + 1:012d}.jpg", "caption": f"a dog {i}", "negative_caption": f"a cat {i}"}
                 for i in range(n)}
        (folder / f"{subset}.json").write_text(json.dumps(items, indent=4), encoding="utf-8")
    return folder


def test_the_data_section_reads_the_folder(tmp_path):
    assert S.sugarcrepe_sections(tmp_path / "none")["data"][0].status == NEEDS
    small = {s: 3 for s in SUBSETS}
    folder = write_jsons(tmp_path / "sc", small)
    (row,) = S.sugarcrepe_sections(folder)["data"]
    assert row.status == FAIL and row.ours == "21 pairs; 0 of 7 subsets agree"      # not the release
    (folder / "add_att.json").unlink()
    (row,) = S.sugarcrepe_sections(folder)["data"]
    assert row.status == NEEDS and "6 of 7 JSONs present" in row.detail
    (folder / "add_att.json").write_text("[]", encoding="utf-8")
    (row,) = S.sugarcrepe_sections(folder)["data"]
    assert row.status == FAIL and row.claim == "SugarCrepe's seven released JSONs load" and "add_att.json" in row.detail


def test_without_data_make_check_fails_nothing():
    statuses = {c.status for c in S.sugarcrepe_checks()}         # SUGARCREPE_DATA: an empty folder here
    assert FAIL not in statuses and NEEDS in statuses


@pytest.mark.shared
def test_the_released_files_agree_with_the_pinned_counts(shared_sugarcrepe):
    (row,) = S.sugarcrepe_sections(shared_sugarcrepe)["data"]
    assert row.status == PASS and row.ours.startswith("7,511 pairs")


# ------------------------------------------------------------------ the tables the package carries

def test_pinned_counts_agree_with_the_download_table():
    pinned = reported.released_counts()
    assert {q.split(":")[1]: v for q, v in pinned.items() if q.startswith("pairs:")} == RELEASED
    assert pinned["pairs"] == 7511 and pinned["pairs_before_546eb51:swap_obj"] == 246
    for entry in benchmarks.DATASETS.files_for("sugarcrepe", environ={}):
        assert f"{RELEASED[entry.filename[:-5]]:,} image-caption-negative triples" in entry.description


def test_every_row_has_a_source_and_every_clip_model_an_imagenet_accuracy():
    published, r_table = reported.results(), reported.imagenet_r()
    assert len(published) == 20 * 7 and set(published["subset"]) == set(SUBSETS)
    assert (published["source"].str.contains("arXiv 2306.14610")).all()
    assert (r_table["source"].str.contains("2306.14610")).all() and set(r_table["subset"]) == set(SUBSETS)
    imagenet = imagenet_table.top1("open_clip_results_table")
    keys = set(published["imagenet_model"]) - {""}
    assert len(keys) == 17 and all(0 < imagenet[k] < 100 for k in keys)
    assert imagenet_table.top1("open_clip_docs")["laion2b-vit-bigg-14"] == 80.09      # falls back to the table


@pytest.mark.shared
def test_the_published_tables_are_the_reference_transcription(shared_sugarcrepe):
    reference = shared_sugarcrepe.parent.parent / "reference"
    with open(reference / "sugarcrepe_published.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    ours = reported.results()
    assert len(rows) == len(ours)
    for theirs, mine in zip(rows, ours.itertuples()):
        assert (theirs["model"], theirs["subset"], theirs["open_clip_arch"], theirs["open_clip_pretrained"]) == (
            mine.model, mine.subset, mine.open_clip_arch, mine.open_clip_pretrained)
        assert float(theirs["r1"]) == mine.r1 and theirs["source"] == mine.source
        assert len(theirs["r1"].partition(".")[2]) == mine.decimals
    with open(reference / "sugarcrepe_imagenet_r.csv", newline="", encoding="utf-8") as fh:
        r_rows = {r["subset"]: float(r["pearson_r"]) for r in csv.DictReader(fh)}
    assert r_rows == dict(zip(reported.imagenet_r()["subset"], reported.imagenet_r()["pearson_r"]))
