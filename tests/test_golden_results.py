"""The result files of a fixed fixture run are the committed ones, byte for byte: a refactor of the
evaluation path that changes a number, a column, a format or an order shows here.

The run uses precision "portable" (exact matrix products, portable vector-math functions, oneDNN off) in a
process with ATen pinned to its AVX2 kernels, so the files are the same bytes on every x86-64 machine with
AVX2, Intel or AMD, whatever MKL's code path (docs/determinism.md). The test's process is told another
machine's preferences for what portable numerics leave out: MKL's conditional-reproducibility path
(``MKL_CBWR=COMPATIBLE``), oneDNN's instruction set (``ONEDNN_MAX_CPU_ISA=SSE41``, which moves oneDNN's
GELU by a bit), one thread where they were written with two, and, where a C compiler can build the shim
(tests/vml_shim.py), MKL's vector math with every result off by one bit; the shim also counts that no element
of the evaluation reached it.

``tests/golden/`` holds the summaries and per-query logs (manifests hold run-specific fields). They were
written by this run without those perturbations on a 2-core AMD EPYC (Zen 4, AVX-512) on 2026-12-05, when
the portable numerics began to cover MKL's vector math and oneDNN; the summaries are the bytes the
evaluation code wrote before then, and before the benchmarks were unified (the per-query logs' ranks and
counts too: only raw scores moved, by up to 2e-7). ``CREPE_REWRITE_GOLDEN=1`` rewrites them from this
run (then the test fails, saying so).
"""
from __future__ import annotations

import gzip
import io
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

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
import ctypes
counted = getattr(ctypes.CDLL(None), "vmlshim_total", None)
print("vector math elements:", ctypes.c_long.in_dll(ctypes.CDLL(None), "vmlshim_total").value if counted else None)
"""


@pytest.mark.slow
@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="pinned to x86-64's AVX2 kernels")
def test_fixture_results_are_the_committed_files(tmp_path):
    import vml_shim

    out = tmp_path / "results"
    shim, why_not = vml_shim.build(tmp_path / "shim")
    another_machine = {"MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "SSE41", "OMP_NUM_THREADS": "1",
                       **({"LD_PRELOAD": str(shim), "VMLSHIM_FLIP": "1"} if shim else {})}
    if os.environ.get("CREPE_REWRITE_GOLDEN"):
        another_machine = {}
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "avx2", "PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT),
           "CREPE_CACHE": str(tmp_path / "cache"), **another_machine}
    code = _RUN.format(tests=str(ROOT / "tests"), tmp=str(tmp_path), out=str(out))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    written = {p.relative_to(out).parts[1:]: p for p in out.rglob("*") if p.is_file() and "manifest" not in p.name}
    if os.environ.get("CREPE_REWRITE_GOLDEN"):
        shutil.rmtree(GOLDEN)
        for name, path in written.items():
            (GOLDEN / Path(*name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, GOLDEN / Path(*name))
        pytest.fail(f"CREPE_REWRITE_GOLDEN is set: rewrote {len(written)} files under {GOLDEN}; unset it and commit them")
    golden = {p.relative_to(GOLDEN).parts: p for p in GOLDEN.rglob("*") if p.is_file()}
    assert sorted(written) == sorted(golden)
    for name, path in golden.items():
        if name[-1].endswith(".gz"):
            _same_log(written[name].read_bytes(), path.read_bytes(), "/".join(name))
        else:
            assert written[name].read_bytes() == path.read_bytes(), "/".join(name)
    counted = done.stdout.strip().splitlines()[-1]
    if shim is None:
        pytest.skip(f"compared without MKL's vector math perturbed: {why_not}")
    assert counted == "vector math elements: 0"


def _same_log(written: bytes, golden: bytes, name: str) -> None:
    """The decompressed per-query logs are the same bytes; where not, the first column and row that differ."""
    new, old = (gzip.decompress(b) for b in (written, golden))
    if new == old:
        return
    new, old = (pd.read_csv(io.BytesIO(b), dtype=str, keep_default_na=False) for b in (new, old))
    assert list(new.columns) == list(old.columns) and len(new) == len(old), name
    for column in old.columns:
        differ = (new[column] != old[column]).to_numpy().nonzero()[0]
        assert not len(differ), (f"{name}: column {column}, row {differ[0]}: {new[column].iloc[differ[0]]!r} where the "
                                 f"golden file has {old[column].iloc[differ[0]]!r}")
    raise AssertionError(f"{name}: the same cells, other bytes (formatting)")


def test_the_log_comparison_sees_a_rank_and_a_score_change():
    log = "query_id,rank,scores\nq1,1,0.5 0.25\n"
    packed = gzip.compress(log.encode())
    _same_log(gzip.compress(log.encode(), mtime=1), packed, "x")                          # the same text
    for changed in (log.replace(",1,", ",2,"), log.replace("0.5 ", "0.5000001 "), log.replace("0.25", "0.250"),
                    log.replace("0.5 0.25", "0.5 0.25 0.1")):
        with pytest.raises(AssertionError):
            _same_log(gzip.compress(changed.encode()), packed, "x")
