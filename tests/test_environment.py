"""The project's set-up promises: two commands in the README, pip and conda lists that agree, clean notebooks."""
from __future__ import annotations

import json
import shutil
import subprocess
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _pip_requirements() -> dict[str, str]:
    out = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            out[name.lower().replace("_", "-")] = version
    return out


def _conda_pip_requirements() -> dict[str, str]:
    text = (ROOT / "environment.yml").read_text()
    pip_block = text.split("- pip:", 1)[1]
    out = {}
    for m in re.finditer(r"^\s+-\s+([A-Za-z0-9_.\-]+)==([^\s#]+)", pip_block, flags=re.M):
        out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def test_environment_yml_equals_requirements_txt():
    pip, conda = _pip_requirements(), _conda_pip_requirements()
    assert pip, "requirements.txt lists nothing"
    assert pip == conda, f"only in requirements.txt: {set(pip.items()) - set(conda.items())}; " \
                         f"only in environment.yml: {set(conda.items()) - set(pip.items())}"


def test_required_packages_are_pinned():
    pip = _pip_requirements()
    for name in ("torch", "torchvision", "open-clip-torch", "papermill", "jupyterlab", "pandas", "matplotlib",
                 "seaborn", "scipy", "pytest"):
        assert name in pip, name
    assert pip["torch"] == "2.14.1" and pip["torchvision"] == "0.29.1"


def test_lock_agrees_with_requirements():
    lock = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.strip().split("==")
            lock[name.lower().replace("_", "-")] = version
    for name, version in _pip_requirements().items():
        assert lock.get(name) == version, f"{name}: requirements {version}, lock {lock.get(name)}"


def test_readme_starts_with_the_two_commands_and_ci_runs_the_test_one():
    head = "\n".join((ROOT / "README.md").read_text().splitlines()[:25])
    assert "make all" in head and "make test" in head
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_notebooks_have_parameters_and_no_outputs():
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert len(notebooks) >= 4
    for path in notebooks:
        nb = json.loads(path.read_text())
        tags = [c.get("metadata", {}).get("tags", []) for c in nb["cells"]]
        assert sum("parameters" in t for t in tags) == 1, f"{path.name}: one cell tagged 'parameters'"
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert not cell.get("outputs") and cell.get("execution_count") is None, f"{path.name} has outputs"


def test_every_notebook_has_a_make_target():
    if shutil.which("make") is None:
        pytest.skip("needs make")
    done = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "--eval", "shown: ; @echo $(NOTEBOOKS)",
                           "shown"], capture_output=True, text=True, timeout=60)
    listed = set(done.stdout.split()) | {"06_toy_world"}          # the toy world's own target is `toy`
    for path in (ROOT / "notebooks").glob("*.ipynb"):
        assert path.stem in listed, f"no Makefile target runs {path.name}"
