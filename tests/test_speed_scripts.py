"""The speed scripts (speed/), run at tiny sizes: they complete, and their exactness checks hold.

Nothing here times anything: the point is that ``speed/`` keeps working as the package moves
(an import renamed under a benchmark breaks only the benchmark, and nobody runs it every day).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "speed"


def _run(script: str, *args: str) -> None:
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.shared
def test_engine_benchmark_runs_and_keeps_ranks(shared_crepe, tmp_path):
    out = tmp_path / "engine.json"
    _run("bench_engine.py", "--data-dir", str(shared_crepe), "--models", "tiny", "--images-tiny", "3",
         "--naive-queries-tiny", "6", "--repeat", "1", "--no-memory", "--json", str(out))
    (row,) = json.loads(out.read_text())
    assert row["queries"] > row["naive_queries"] == 6 and row["distinct_crops"] >= 3
    assert row["ranks_identical_with_cut"] and row["max_abs_score_change"] < 1e-5
    assert row["engine_vs_naive"] > 0 and row["attainable_vs_naive"] > 0 and row["engine_over_attainable"] > 0


@pytest.mark.slow
@pytest.mark.shared
def test_multi_model_benchmark_runs_and_is_bit_identical(shared_crepe, tmp_path):
    out = tmp_path / "multi.json"
    _run("bench_multi_model.py", "--data-dir", str(shared_crepe), "--images", "3", "--repeat", "1", "--json", str(out))
    row = json.loads(out.read_text())
    assert row["scores_bit_identical"] and row["separate_s"] > 0 and row["one_run_s"] > 0


@pytest.mark.slow
@pytest.mark.shared
def test_blind_benchmark_runs_every_scorer_on_every_benchmark(shared_crepe, shared_sugarcrepe, shared_winoground,
                                                                tmp_path):
    from crepe_utils.blind import SCORERS
    out = tmp_path / "blind.json"
    _run("bench_blind.py", "--crepe-dir", str(shared_crepe), "--sugarcrepe-dir", str(shared_sugarcrepe),
         "--winoground-dir", str(shared_winoground), "--limit", "120", "--json", str(out))
    result = json.loads(out.read_text())
    assert [b["benchmark"] for b in result["benchmarks"]] == ["CREPE productivity", "SugarCrepe", "Winoground"]
    assert 0 < result["total_s"] and result["budget_s"] == 60
    for bench in result["benchmarks"]:
        assert bench["queries"] == 120 and set(bench["scorers"]) == set(SCORERS)
        assert all(r["seconds"] >= 0 and r["scores"] for r in bench["scorers"].values())
    winoground = result["benchmarks"][2]["scorers"]
    assert all(r["scores"]["text"] == r["scores"]["image"] == 0 and r["scores"]["image ties"] == 60
               for r in winoground.values())


def test_help_benchmark_runs_and_sees_no_heavy_import(tmp_path):
    out = tmp_path / "help.json"
    _run("bench_cli_help.py", "--repeat", "1", "--json", str(out))
    result = json.loads(out.read_text())
    assert result["budget_s"] == 0.3 and result["floor_s"] > 0
    assert {r["command"] for r in result["commands"]} >= {"--help", "evaluate --help"}
    assert all(r["median_s"] > 0 and r["heavy_imports"] == [] for r in result["commands"])


@pytest.mark.slow
def test_tier_benchmark_times_a_tier_and_lists_its_slowest_tests(tmp_path):
    out = tmp_path / "tiers.json"
    _run("bench_tests.py", "--tiers", "quick", "--workers", "0", "--tests", "tests/test_metrics.py", "--json", str(out))
    (tier,) = json.loads(out.read_text())["tiers"]
    assert tier["tier"] == "quick" and tier["failed"] == 0 and tier["passed"] > 5 and tier["budget_s"] > 0
    assert tier["wall_s"] >= tier["floor_s"] > 0 and len(tier["slowest"]) == min(20, tier["passed"])
    assert [s["seconds"] for s in tier["slowest"]] == sorted((s["seconds"] for s in tier["slowest"]), reverse=True)
