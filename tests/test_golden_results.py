"""The result files of a fixed fixture run are the committed ones, byte for byte: a refactor of the
evaluation path that changes a number, a column, a format or an order shows here.

The run uses precision "portable" (exact matrix products) in a process with ATen pinned to its AVX2
kernels, so the files are the same on every x86-64 machine (Intel or AMD), thread count and MKL code
path; ``tests/golden/`` holds them (summaries and per-query logs; manifests hold run-specific fields).
The golden files were written by the evaluation code before the benchmarks were unified (CREPE's
engine path, and Winoground's own path with 256 captions per batch, whose two tables went into
``winoground_summary.csv`` and an uncompressed ``winoground_per_example.csv``: the same bytes are
now ``summary.csv`` and the decompressed ``per_query.csv.gz``).

Summaries are compared byte for byte, and so is every cell of the per-query logs except the raw scores, which are
compared to 1e-6: on an AMD EPYC without AVX-512 the raw scores differ from the committed files (written on
AVX-512 machines) by up to 1.7e-7 while every rank, count and summary is the same bytes (docs/determinism.md).
"""
from __future__ import annotations

import os
import platform
import gzip
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"

_RUN = r"""
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
import helpers
import crepe_utils
from crepe_utils.evaluation import Run
tmp, out = Path({tmp!r}), Path({out!r})
cfg, ckpt = helpers.make_tiny_model(tmp)
data_dir, image_dir = helpers.synthetic_crepe_root(tmp / "synthetic")
run = Run(out=out, kind="fixture", label="golden", cache_dir=False, progress=False,
          pretrained=str(ckpt), model_config=str(cfg))
common = dict(run=run, precision="portable", n_boot=200)
crepe_utils.evaluate(cfg.stem, "crepe-productivity", data_dir=data_dir, image_dir=image_dir, complexities=(4, 5),
                     **common)
crepe_utils.evaluate(cfg.stem, "crepe-systematicity", data_dir=data_dir, image_dir=image_dir, train_data="laion",
                     **common)
crepe_utils.evaluate(cfg.stem, "winoground", data_dir=helpers.synthetic_winoground(tmp / "wg"),
                     text_batch_size=256, **common)
"""


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="pinned to x86-64's AVX2 kernels")
def test_fixture_results_are_the_committed_files(tmp_path):
    out = tmp_path / "results"
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "avx2", "PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT),
           "CREPE_CACHE": str(tmp_path / "cache")}
    code = _RUN.format(tests=str(ROOT / "tests"), tmp=str(tmp_path), out=str(out))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    written = {p.relative_to(out).parts[1:]: p for p in out.rglob("*") if p.is_file() and "manifest" not in p.name}
    golden = {p.relative_to(GOLDEN).parts: p for p in GOLDEN.rglob("*") if p.is_file()}
    assert sorted(written) == sorted(golden)
    for name, path in golden.items():
        if name[-1].endswith(".gz"):
            _same_log(written[name].read_bytes(), path.read_bytes(), "/".join(name))
        else:
            assert written[name].read_bytes() == path.read_bytes(), "/".join(name)


#: the per-query columns that hold raw scores (retrieval's and Winoground's); every other column is compared exactly
SCORE_COLUMNS = {"score_positive", "score_best_negative", "scores", "c0_i0", "c0_i1", "c1_i0", "c1_i1"}
SCORE_TOLERANCE = 1e-6


def _same_log(written: bytes, golden: bytes, name: str) -> None:
    new, old = (pd.read_csv(io.BytesIO(gzip.decompress(b)), dtype=str, keep_default_na=False) for b in (written, golden))
    assert list(new.columns) == list(old.columns) and len(new) == len(old), name
    for column in old.columns:
        if column not in SCORE_COLUMNS:
            assert new[column].tolist() == old[column].tolist(), (name, column)
            continue
        a, b = ([np.array(cell.split(), dtype=float) for cell in frame[column]] for frame in (new, old))
        assert [len(x) for x in a] == [len(x) for x in b], (name, column)
        assert max(float(np.abs(x - y).max()) for x, y in zip(a, b)) <= SCORE_TOLERANCE, (name, column)


def test_the_log_comparison_sees_a_rank_and_a_score_change():
    log = "query_id,rank,scores\nq1,1,0.5 0.25\n"
    packed = gzip.compress(log.encode())
    _same_log(gzip.compress(log.replace("0.5 ", "0.5000001 ").encode()), packed, "x")      # within 1e-6
    with pytest.raises(AssertionError):
        _same_log(gzip.compress(log.replace(",1,", ",2,").encode()), packed, "x")
    with pytest.raises(AssertionError):
        _same_log(gzip.compress(log.replace("0.5 ", "0.50001 ").encode()), packed, "x")
    with pytest.raises(AssertionError):
        _same_log(gzip.compress(log.replace("0.5 0.25", "0.5 0.25 0.1").encode()), packed, "x")
