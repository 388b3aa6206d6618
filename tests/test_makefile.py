"""The Makefile: every target a user may call is in `make help`, `make clean` keeps what is expensive,
and each executed notebook depends on what its imports reach, not on every package file."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from crepe_utils import notebooks

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")


def _make(*args: str) -> str:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True, timeout=120).stdout


@needs_make
def test_help_lists_every_phony_target():
    text = (ROOT / "Makefile").read_text()
    phony = " ".join(re.findall(r"^\.PHONY:((?:.*\\\n)*.*)", text, re.M)).replace("\\", " ").split()
    listed = {line.split()[0] for line in _make("help").splitlines() if line.strip()}
    names = [t for t in phony if not t.startswith("$(")]
    assert names and not set(names) - listed, f"no `## help` line for {sorted(set(names) - listed)}"
    assert "<notebook>" in listed                     # 01_benchmark_totals ... 05_winoground, one line


@needs_make
def test_clean_removes_only_what_the_notebooks_and_the_site_build():
    lines = [line for line in _make("-n", "clean", "BUILD=b").splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("rm -rf ")
    targets = lines[0].split()[2:]
    assert targets and all(t.startswith("b/") for t in targets), targets      # never `rm -rf b` itself
    assert not any("device_check" in t or t in ("b/*", "b/") for t in targets)


def _deps(stem: str) -> set[str]:
    files = notebooks.reached_files(notebooks.notebook_roots(NOTEBOOKS / f"{stem}.ipynb"))
    return {p.relative_to(ROOT).as_posix() for p in files}


def test_a_notebook_depends_on_what_its_imports_reach():
    deps = _deps("02_systematicity")
    # imported by the notebook, reached through them (a lazy import counts), the data beside them
    assert {"crepe_utils/benchmarks/crepe/analysis.py", "crepe_utils/results/store.py", "crepe_utils/metrics.py",
            "crepe_utils/models/openclip.py", "crepe_utils/benchmarks/crepe/reported/productivity_r1.csv"} <= deps
    # never reached from it
    for other in ("crepe_utils/site/", "crepe_utils/toy/", "crepe_utils/download/downloader.py",
                  "crepe_utils/download/transport.py", "crepe_utils/cli.py",
                  "crepe_utils/api.py", "crepe_utils/benchmarks/valse/"):
        assert not any(d.startswith(other) for d in deps), other
    assert "crepe_utils/benchmarks/winoground/data.py" in _deps("05_winoground")
    assert not any(d.startswith("crepe_utils/benchmarks/valse/") for d in _deps("05_winoground"))


def test_the_toy_stamp_depends_on_the_toy_pipeline_only():
    variables = notebooks.make_variables([str(NOTEBOOKS / "06_toy_world.ipynb")])
    toy = dict(line.split(" := ") for line in variables.splitlines()[1:])["TOY_SOURCES"].split()
    assert {"crepe_utils/toy/train.py", "crepe_utils/toy/pipeline.py", "crepe_utils/engine/core.py", "crepe_utils/engine/encoders.py"} <= set(toy)
    assert not any(p.startswith(("crepe_utils/analysis/", "crepe_utils/site/", "crepe_utils/claims/")) for p in toy)


def test_an_api_name_reaches_the_api(tmp_path):
    """``crepe_utils.toy_world(...)`` loads crepe_utils.api (lazily, by the package's __getattr__)."""
    import nbformat
    path = tmp_path / "uses_api.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "%matplotlib inline\nimport crepe_utils\nframe = crepe_utils.toy_world('results/toy')")]), path)
    assert notebooks.notebook_roots(path) == {"crepe_utils", "crepe_utils.api"}
    assert notebooks.notebook_roots(NOTEBOOKS / "04_imagenet_correlation.ipynb") >= {"crepe_utils.benchmarks.crepe.reported"}
    assert "crepe_utils.api" not in notebooks.notebook_roots(NOTEBOOKS / "04_imagenet_correlation.ipynb")
