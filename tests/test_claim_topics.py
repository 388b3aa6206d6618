"""``make check`` and the notebooks list the same claims: each topic is assembled once, in its benchmark folder's
``claims`` module (or the suite's, for what is about several benchmarks), and gathered through the registry.

Would notice: a claim added to a notebook's check cell but not to ``make check`` (or the reverse), a
check cell that calls check functions itself, and a check function that no topic calls.
"""
from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path

import pytest

from crepe_utils import benchmarks
from crepe_utils.models import imagenet
from crepe_utils.commands import checks as aggregate
from crepe_utils.benchmarks.crepe import checks as crepe_claims, claims as topics
from crepe_utils.benchmarks.sugarcrepe import claims as sugarcrepe_claims
from crepe_utils.across import blind_claims as blind_claims
from crepe_utils.across import field_claims
from crepe_utils.benchmarks.winoground import claims as winoground_claims
from crepe_utils.benchmarks.valse import claims as valse_claims
from crepe_utils.claims.base import FAIL, NEEDS, PASS
from evaluated_fixture import write_evaluated_results

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
def topic_rows(data_dir, results_dir) -> dict[str, list]:
    """Each topic's rows as its notebook's check cell gets them, given only what ``make check`` is given."""
    report = topics.data_report(data_dir)               # validated once, as notebook 01 does
    return {"totals": topics.totals_checks(data_dir, report),
            "systematicity": topics.systematicity_checks(results_dir, report, data_dir),
            "productivity": topics.productivity_checks(results_dir),
            "r2": topics.r2_checks(results_dir),
            "winoground": winoground_claims.winoground_checks(results_dir),
            "sugarcrepe": sugarcrepe_claims.sugarcrepe_checks(),
            "valse": valse_claims.valse_checks(),
            "blind": blind_claims.blind_checks({"crepe": data_dir}),
            "field": field_claims.field_checks({"crepe": data_dir})}


def assert_make_check_is_the_topics(data_dir, results_dir):
    everything = aggregate.run_all(data_dir=data_dir, results_dir=results_dir)
    by_topic = topic_rows(data_dir, results_dir)
    assert set(by_topic) == set(aggregate.topics())
    # the same rows (claim, paper, ours, status, detail), each as often ...
    assert Counter(everything) == Counter(row for rows in by_topic.values() for row in rows)
    # ... and within each topic in the notebook's order
    for name, rows in by_topic.items():
        assert [row for row in everything if row in set(rows)] == rows, name
    return everything, by_topic


def test_make_check_is_the_topics_without_data(tmp_path):
    everything, by_topic = assert_make_check_is_the_topics(None, tmp_path / "no-results")
    assert all(by_topic.values())
    # what needs CREPE's CSVs or Winoground's metadata waits for them (none is present), nothing fails
    assert {r.status for r in everything if r.group in ("totals", "granularity", "winoground")} >= {NEEDS}
    assert FAIL not in {r.status for r in everything}


@pytest.mark.slow
@pytest.mark.shared
def test_make_check_is_the_topics_on_the_reference_data(tmp_path):
    everything, by_topic = assert_make_check_is_the_topics(None, tmp_path / "no-results")
    assert all(by_topic.values()) and len(everything) > 40
    # CREPE's productivity CSVs are present: every totals and granularity row is computed
    assert NEEDS not in {r.status for r in everything if r.group in ("totals", "granularity")}


def test_make_check_is_the_topics_with_evaluated_results_and_files_that_are_not_the_release(synthetic_root, tmp_path):
    data_dir, _ = synthetic_root
    results_dir = write_evaluated_results(tmp_path / "results")
    everything, by_topic = assert_make_check_is_the_topics(data_dir, results_dir)
    evaluated = [r for r in everything if r.claim.startswith("Evaluated R@1 matches the paper")]
    syst = [r for r in evaluated if r.claim.endswith((" SC", " UC"))]
    # the evaluated sections did compare: 3 models × 6 published productivity cells pass; systematicity has
    # no query counts for these results (not the synthetic files' sizes), so its 2 models × 6 cells wait
    assert Counter(r.status for r in syst) == {NEEDS: 12}
    assert Counter(r.status for r in evaluated if r not in syst) == {PASS: 18}
    n8 = [r for r in by_topic["r2"] if "n=8" in r.claim]
    assert len(n8) == len(imagenet.SOURCES) and {r.status for r in n8} != {NEEDS}   # evaluated n = 8 used


def test_make_check_order_lists_every_section_once():
    order = aggregate.make_check_order()
    assert len(set(order)) == len(order)
    assert {topic for topic, _ in order} == set(aggregate.topics())


def test_make_check_refuses_a_section_missing_from_its_order(monkeypatch, tmp_path):
    original = topics.r2_sections
    monkeypatch.setattr(topics, "r2_sections", lambda results=None: {**original(results), "new": []})
    with pytest.raises(RuntimeError, match="does not list the topics' sections"):
        aggregate.run_all(results_dir=tmp_path / "none")


# ------------------------------------------------------------------ the notebooks' check cells

def _code_cells(notebook: str) -> list[ast.Module]:
    nb = json.loads((NOTEBOOKS / f"{notebook}.ipynb").read_text(encoding="utf-8"))
    return [ast.parse("".join(c["source"])) for c in nb["cells"] if c["cell_type"] == "code"]


def _called(tree: ast.AST) -> set[str]:
    """Names of what ``tree`` calls: ``f(...)`` gives f, ``m.f(...)`` gives f."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            out.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
    return out


@pytest.mark.parametrize("topic", sorted(t for t, topic in aggregate.topics().items() if topic.notebook))
def test_each_notebook_check_cell_calls_its_topic(topic):
    checks_function, notebook = aggregate.topics()[topic].checks, aggregate.topics()[topic].notebook
    cells = _code_cells(notebook)
    assert checks_function.__name__ in _called(cells[-1]), f"{notebook}: its last cell does not call topics.{checks_function.__name__}"
    claim_functions = {name for _, name in _check_functions().values()} | {"data_checks"}
    direct = sorted(name for cell in cells for name in _called(cell)
                    if name in claim_functions or name.endswith("_sections"))
    assert direct == [], f"{notebook} assembles claims itself: {direct}"


def test_the_call_finder_sees_a_direct_check_call():
    assert {"check_r2", "r2_checks"} <= _called(ast.parse("rows = topics.r2_checks(ev) + checks.check_r2()"))


# ------------------------------------------------------------------ every check function is in a topic

def _check_functions() -> dict[str, object]:
    folders = [benchmarks.part(f, m) for f in benchmarks.FOLDERS for m in ("blind", "field_table")]
    return {f"{module.__name__}.{name}": (module, name) for module in (crepe_claims, winoground_claims, sugarcrepe_claims,
                                                                        valse_claims, blind_claims, field_claims,
                                                                        *[m for m in folders if m is not None])
            for name in dir(module) if name.startswith("check_") and callable(getattr(module, name))}


@pytest.mark.slow
@pytest.mark.shared
def test_every_check_function_is_called_by_a_topic(synthetic_root, shared_winoground, monkeypatch, tmp_path):
    """A check_* function that no topic reaches would be missing from ``make check`` and the notebooks. CREPE's
    files are the small synthetic ones in the real layout: a check is called whatever its rows then say."""
    crepe_dir, _ = synthetic_root
    called = set()
    for key, (module, name) in _check_functions().items():
        def recorder(*args, _key=key, _f=getattr(module, name), **kwargs):
            called.add(_key)
            return _f(*args, **kwargs)
        monkeypatch.setattr(module, name, recorder)
    results_dir = write_evaluated_results(tmp_path / "results")
    topics.totals_checks(crepe_dir)
    topics.systematicity_checks(results_dir, data_dir=crepe_dir)
    topics.productivity_checks(results_dir)
    topics.r2_checks(results_dir)
    winoground_claims.winoground_checks(data_dir=shared_winoground)
    sugarcrepe_claims.sugarcrepe_checks()
    valse_claims.valse_checks()
    blind_claims.blind_checks({"crepe": crepe_dir, "winoground": shared_winoground})
    field_claims.field_checks({"crepe": crepe_dir, "winoground": shared_winoground})
    assert len(_check_functions()) >= 20              # 10 of CREPE, 7 of Winoground, 3 of SugarCrepe today
    assert sorted(set(_check_functions()) - called) == []
