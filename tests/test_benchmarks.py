"""The CPU benchmarks, run at tiny sizes: they complete, and their exactness checks hold.

Nothing here times anything: the point is that ``benchmarks/`` keeps working as the package moves
(an import renamed under a benchmark breaks only the benchmark, and nobody runs it every day).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _run(script: str, *args: str) -> None:
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.shared
def test_engine_benchmark_runs_and_keeps_ranks(shared_crepe, tmp_path):
    out = tmp_path / "engine.json"
    _run("bench_engine.py", "--data-dir", str(shared_crepe), "--models", "tiny", "--images-tiny", "3",
         "--naive-queries-tiny", "6", "--repeat", "1", "--no-memory", "--json", str(out))
    (row,) = json.loads(out.read_text())
    assert row["queries"] > row["naive_queries"] == 6 and row["distinct_crops"] >= 3
    assert row["ranks_identical_with_cut"] and row["max_abs_score_change"] < 1e-5
    assert row["engine_vs_naive"] > 0 and row["attainable_vs_naive"] > 0 and row["engine_over_attainable"] > 0


@pytest.mark.shared
def test_multi_model_benchmark_runs_and_is_bit_identical(shared_crepe, tmp_path):
    out = tmp_path / "multi.json"
    _run("bench_multi_model.py", "--data-dir", str(shared_crepe), "--images", "3", "--repeat", "1", "--json", str(out))
    row = json.loads(out.read_text())
    assert row["scores_bit_identical"] and row["separate_s"] > 0 and row["one_run_s"] > 0
