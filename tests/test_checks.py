"""Every check passes on the published numbers and fails (or flags) when handed wrong input."""
from __future__ import annotations

import pandas as pd
import pytest

from crepe_utils import checks, published
from crepe_utils.checks import FAIL, NEEDS, PAPER, PASS


def _claims(**changes) -> pd.DataFrame:
    c = published.claims()
    for claim_id, value in changes.items():
        c.loc[c["claim_id"] == claim_id, "value"] = value
    return c


def statuses(rows):
    return [r.status for r in rows]


def test_chance_levels():
    assert set(statuses(checks.check_chance_levels())) == {PASS}
    assert FAIL in statuses(checks.check_chance_levels(_claims(chance_syst_atom=25.0)))
    assert FAIL in statuses(checks.check_chance_levels(_claims(set_size_prod=5)))
    # the combined line is flagged, not failed, when set sizes cannot explain it
    rows = checks.check_chance_levels(_claims(chance_syst_combined=8.0))
    assert rows[-1].status == PAPER


def test_dataset_totals():
    rows = checks.check_dataset_totals()
    assert rows[0].status == PAPER                               # 325,523 vs 295,930
    assert checks.check_dataset_totals(_claims(syst_hn_cc12m_a5=325523))[0].status == PASS
    assert checks.check_dataset_totals(_claims(prod_hn_abstract=150000))[2].status == PAPER


def test_productivity_totals():
    assert set(statuses(checks.check_productivity_totals(None))) == {NEEDS}
    same = {"n_hard_negatives": 183855, "n_ground_truths": 17553, "rows_per_type": {"atom": 16727}}
    assert set(statuses(checks.check_productivity_totals(same))) == {PASS}
    other = {"n_hard_negatives": 198575, "n_ground_truths": 17262, "rows_per_type": {"atom": 16727}}
    assert statuses(checks.check_productivity_totals(other))[:2] == [PAPER, PAPER]


def test_granularity():
    prod = published.productivity()
    assert statuses(checks.check_granularity(prod, None)) == [NEEDS]
    counts = {("swap", 4): 27, ("swap", 12): 1578, ("atom", 4): 1258, ("atom", 12): 2001,
              ("negate", 4): 1262, ("negate", 12): 1990}
    assert statuses(checks.check_granularity(prod, counts)) == [PASS]
    bad = prod.copy()
    bad.loc[(bad["hn_type"] == "swap") & (bad["complexity"] == 4), "r1"] = 10.00   # 10.00 is not k/27
    rows = checks.check_granularity(bad, counts)
    assert statuses(rows) == [FAIL] and "is not k/27" in rows[0].detail
    wrong_n = {**counts, ("swap", 4): 28}
    assert statuses(checks.check_granularity(prod, wrong_n)) == [FAIL]


def test_printed_deltas():
    assert statuses(checks.check_printed_deltas()) == [PASS]
    printed = published.systematicity_printed_deltas()
    printed.loc[0, "delta"] = -3.31
    assert statuses(checks.check_printed_deltas(printed=printed)) == [FAIL]


def test_headline_drop_and_comp_direction():
    assert statuses(checks.check_headline_drop()) == [PASS, PAPER, PASS]
    assert statuses(checks.check_headline_drop(claims=_claims(headline_drop=12.0)))[0] == FAIL
    syst = published.systematicity()
    flat = syst.copy()
    uc = (flat["hn_set"] == "comp") & (flat["split"] == "UC")
    sc = flat[(flat["hn_set"] == "comp") & (flat["split"] == "SC")]["r1"].to_numpy()
    flat.loc[uc, "r1"] = sc - 1.0                                 # every model a small drop
    assert statuses(checks.check_comp_direction()) == [PAPER]
    assert statuses(checks.check_comp_direction(flat)) == [PASS]
    rising = syst.copy()
    rising.loc[(rising["hn_set"] == "combined") & (rising["split"] == "UC"), "r1"] += 10
    assert statuses(checks.check_headline_drop(rising))[2] == FAIL


def test_productivity_trends():
    assert statuses(checks.check_productivity_trends()) == [PASS, PAPER]
    prod = published.productivity()
    bad = prod.copy()
    bad.loc[(bad["hn_type"] == "atom") & (bad["complexity"] == 12), "r1"] = 99.0
    assert statuses(checks.check_productivity_trends(bad))[0] == FAIL


def test_r2():
    rows = checks.check_r2()
    assert [r.status for r in rows if "n=8" not in r.claim] == [PASS] * 6
    assert [r.status for r in rows if "n=8" in r.claim] == [NEEDS]
    assert FAIL in statuses(checks.check_r2(claims=_claims(r2_atom_UC=0.85)))
    syst = published.systematicity()
    syst.loc[syst["model"] == "cc12m-rn50", "r1"] += 5
    assert FAIL in statuses(checks.check_r2(syst=syst))


def test_evaluated_against_published():
    pub = published.productivity()[["model", "hn_type", "complexity", "r1"]]
    keys = ["model", "hn_type", "complexity"]
    assert statuses(checks.check_evaluated_against_published(pd.DataFrame(columns=keys + ["r1", "kind"]), pub, keys)) == [NEEDS]
    ev = pub.head(2).assign(kind="evaluated")
    assert set(statuses(checks.check_evaluated_against_published(ev, pub, keys))) == {PASS}
    ev.loc[ev.index[0], "r1"] += 1.0
    assert FAIL in statuses(checks.check_evaluated_against_published(ev, pub, keys))
    toy = ev.assign(kind="toy")                                # toy numbers are never compared
    assert statuses(checks.check_evaluated_against_published(toy, pub, keys)) == [NEEDS]


def test_unknown_status_is_rejected():
    with pytest.raises(ValueError):
        checks.Check("x", "1", "1", "maybe")


def test_make_check_command_fails_on_a_failed_check(tmp_path, monkeypatch, capsys):
    from crepe_utils import cli
    assert cli.main(["check", "--tables-dir", str(tmp_path), "--results-dir", str(tmp_path / "none")]) == 0
    assert (tmp_path / "checks.md").exists()
    monkeypatch.setattr(checks, "check_chance_levels",
                        lambda claims=None: [checks.Check("forced failure", "1", "2", FAIL)])
    assert cli.main(["check", "--tables-dir", str(tmp_path), "--results-dir", str(tmp_path / "none")]) == 1
    assert "forced failure" in capsys.readouterr().err
