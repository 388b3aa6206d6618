"""The field's claims (crepe_utils.across.field_claims): each computed from the numbers handed to it, and seen to fail
(or to change status) on wrong ones; the topic in make check.

Would notice: a granularity row that passes values which are not k/N, an _all-file row that accepts another
count, an agreement row that passes a difference beyond its tolerance or a value that is not k/N, a claim at
scale that passes a number outside the field's interval, a blind claim that passes a scorer below one checkpoint.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from crepe_utils import field
from crepe_utils.claims.base import FAIL, NEEDS, PAPER, PASS, SCALE, SOURCES
from crepe_utils.commands import checks
from crepe_utils.across import field as F
from crepe_utils.across import field_claims as C
from crepe_utils.benchmarks.crepe import field_table as crepe_field
from crepe_utils.benchmarks.sugarcrepe import field_table as sugarcrepe_field
from crepe_utils.benchmarks.valse import field_table as valse_field
from crepe_utils.benchmarks.winoground import field_table as winoground_field


@pytest.fixture(scope="module")
def table():
    return field.table()


@pytest.fixture(scope="module")
def gran(table):
    return F.granularity(table)


def _status(rows, needle: str) -> str:
    (row,) = [r for r in rows if needle in r.claim]
    return row.status


def test_granularity_passes_released_counts_reports_crepe_and_fails_values_off_every_lattice(table, gran):
    rows = C.check_granularity(gran)
    assert [r.status for r in rows] == [SOURCES, PASS, PASS, PASS, PASS]         # vl_compo against CREPE's release
    assert "17,698 (+971" in rows[0].detail and "7,405 (+753" in rows[0].detail
    wrong = table.copy()
    wrong.loc[5, "sugarcrepe::add_att"] += 1e-6                          # one value no longer k/N for any N
    assert _status(C.check_granularity(F.granularity(wrong)), "SugarCrepe") == FAIL
    released = table.copy()                                              # CREPE as if counted on the release
    released["crepe::swap"] = 100 * np.round(released["crepe::swap"] * 6652 / 100) / 6652
    released["crepe::atom"] = 100 * np.round(released["crepe::atom"] * 16727 / 100) / 16727
    released["crepe::negate"] = 100 * np.round(released["crepe::negate"] * 16336 / 100) / 16336
    assert _status(C.check_granularity(F.granularity(released)), "CREPE") == PASS


def test_the_all_files_row_holds_only_for_the_pinned_count(gran):
    check = crepe_field.check_granularity_of_parts
    rows = check(gran)
    assert [r.status for r in rows] == [NEEDS, PASS, NEEDS] and "established" in rows[1].detail
    assert [r.status for r in check(gran, all_rows={"swap": 7404})] == [NEEDS, FAIL, NEEDS]
    assert check(gran, all_rows={"swap": 7405, "atom": 17698})[0].status == PASS
    lost = gran.copy()
    lost.loc[lost["column"] == "crepe::negate", ["common_n", "fits_common"]] = [None, 0]
    assert check(lost)[2].status == FAIL


def test_sugarcrepe_agreement_within_two_items_explained_apart_and_fails_off_lattice(table):
    view = F.view(table, "sugarcrepe")
    agree = sugarcrepe_field.agreement(view)
    rows = sugarcrepe_field.check_agreement(agree, view)
    assert [r.status for r in rows] == [PASS, SOURCES, SOURCES]       # DataComp small and medium
    assert rows[0].ours.startswith("12 of 12 checkpoints") and "+24" in rows[1].ours
    wrong = agree.copy()
    wrong.loc[(wrong["checkpoint"] == "openai-rn50") & (wrong["subset"] == "add_att"), "diff_items"] = 3
    first = sugarcrepe_field.check_agreement(wrong, view)[0]
    assert first.status == SOURCES and "unexplained: OpenAI RN50 (up to 3 items)" in first.detail
    no_reason = sugarcrepe_field.check_agreement(agree, dataclasses.replace(view, explanations=pd.DataFrame(
        columns=["benchmark", "checkpoint", "evidence", "explanation"])))
    assert len(no_reason) == 1 and no_reason[0].status == SOURCES and "DataComp small" in no_reason[0].detail
    broken = agree.copy()
    broken.loc[broken.index[0], "field_k"] = None                      # a carried value that is not k/N
    assert sugarcrepe_field.check_agreement(broken, view)[0].status == FAIL


def test_winoground_agreement_reports_three_examples_and_fails_off_lattice(table):
    agree = winoground_field.agreement(F.view(table))
    (row,) = winoground_field.check_agreement(agree)
    assert row.status == SOURCES and "+2, +2, +3 examples" in row.ours
    same = agree.assign(field_k=agree["paper_k"], diff_examples=0)
    assert winoground_field.check_agreement(same)[0].status == PASS
    assert winoground_field.check_agreement(agree.assign(field_k=None))[0].status == FAIL


def test_crepe_agreement_needs_every_cell_within_its_bounds(table):
    agree = crepe_field.agreement(F.view(table))
    (row,) = crepe_field.check_agreement(agree)
    assert row.status == PASS and row.ours == "36 of 36 cells" and "swap: between n = 4 and 12 for 5 of 12" in row.detail
    wrong = agree.assign(feasible=agree["feasible"].astype(object))
    wrong.loc[wrong.index[3], "feasible"] = False
    assert crepe_field.check_agreement(wrong)[0].status == SOURCES
    wrong.loc[wrong.index[3], "feasible"] = None
    assert crepe_field.check_agreement(wrong)[0].status == FAIL


def test_valse_average_passes_within_the_printed_rounding_only(table):
    average = valse_field.agreement(F.view(table))
    (row,) = valse_field.check_agreement(average)
    assert row.status == SOURCES and row.ours == "65.82" and "+1.82 points" in row.detail
    assert valse_field.check_agreement({**average, "pieces_mean": 64.04})[0].status == PASS
    assert valse_field.check_agreement({**average, "pieces_mean": 64.06})[0].status == SOURCES
    assert valse_field.check_agreement({**average, "pieces_mean": float("nan")})[0].status == FAIL


def test_a_claim_at_scale_holds_only_inside_the_fields_interval(table):
    rows = F.paper_correlations(table, n_boot=500)
    statuses = {r.claim.split(" against")[0]: r.status for r in C.check_papers_at_scale(rows)}
    assert statuses["SugarCrepe: r of replace_att"] == PASS and statuses["SugarCrepe: r of replace_obj"] == SCALE
    assert statuses["CREPE §5.4: R² of HN-Swap at n = 12"] == SCALE
    assert statuses["CREPE §5.4: R² of HN-Swap at n = 4"] == statuses["CREPE §5.4: R² of HN-Swap at n = 8"] == SCALE
    assert PAPER not in statuses.values()           # the field against a paper is never the paper against itself
    moved = rows.copy()
    moved.loc[moved["column"] == "sugarcrepe::replace_obj", "holds"] = True
    assert C.check_papers_at_scale(moved)[3].status == PASS
    lost = rows.copy()
    lost.loc[0, "field"] = np.nan
    assert C.check_papers_at_scale(lost)[0].status == FAIL


def _placement(table) -> pd.DataFrame:
    """Blind numbers as the released data give them (bigram and negation on CREPE, wordfreq on SugarCrepe's add
    subsets, bigram on VALSE existence), k of N."""
    blind = pd.DataFrame([("crepe::atom", "bigram", 7800, 16727), ("crepe::swap", "bigram", 3421, 6652),
                          ("crepe::negate", "bigram", 16080, 16336), ("crepe::negate", "negation", 16070, 16336),
                          ("sugarcrepe::add_obj", "wordfreq", 2048, 2062), ("sugarcrepe::add_att", "wordfreq", 690, 692),
                          ("valse::existence", "bigram", 438, 505)], columns=["column", "scorer", "k", "n"])
    return F.blind_placement(blind, table)


def test_the_blind_claims_pass_on_the_released_numbers_and_fail_one_checkpoint_short(table):
    placement = _placement(table)
    rows = C.check_blind(placement, table)
    assert [r.status for r in rows] == [PASS] * 4
    assert "atom ≥ 44.07, beats 194" in rows[0].detail
    short = placement.copy()
    short.loc[short["column"] == "crepe::atom", "beats_pretrained"] = 193
    assert C.check_blind(short, table)[0].status == FAIL
    low = placement.copy()
    low.loc[low["column"] == "valse::existence", "beats"] = 201
    assert C.check_blind(low, table)[3].status == FAIL
    assert {r.status for r in C.check_blind(None, table)} == {NEEDS}
    only_crepe = placement[placement["column"].str.startswith("crepe::")]
    assert [r.status for r in C.check_blind(only_crepe, table)] == [PASS, PASS, NEEDS, NEEDS]
    assert "make data-valse" in C.check_blind(only_crepe, table)[3].detail


def test_the_field_is_a_topic_of_make_check_after_the_blind_scorers():
    order = checks.make_check_order()
    assert [pair for pair in order if pair[0] == "field"] == list(C.ORDER)
    assert order.index(("blind", "blind")) < order.index(C.ORDER[0])
    assert checks.topics()["field"].notebook == "10_field"


def test_without_data_the_blind_rows_wait_and_nothing_fails(tmp_path):
    runs = {"crepe": "no data", "sugarcrepe": "no data", "winoground": "no data", "valse": "no data"}
    rows = C.field_checks(runs=runs)
    assert FAIL not in {r.status for r in rows}
    assert [r.status for r in rows if r.claim in {c for c, *_ in C._blind_claims()}] == [NEEDS] * 4
