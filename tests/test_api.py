"""The package's Python entry points: importable from ``crepe_utils``, lazily, and each the function that does the work."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import crepe_utils

ROOT = Path(__file__).resolve().parent.parent


def test_entry_points_are_the_functions_that_do_the_work():
    from crepe_utils import api, benchmarks, evaluation, settings
    from crepe_utils.results import store as results
    from crepe_utils.benchmarks.winoground import results as wresults
    assert crepe_utils.evaluate is evaluation.evaluate
    assert crepe_utils.load_results is api.load_results
    assert benchmarks.rules()["retrieval"].read is results.load_results       # what load_results reads through
    assert benchmarks.rules()["winoground"].read is wresults.load_results
    assert (crepe_utils.Run, crepe_utils.Selection, crepe_utils.EvaluationSettings) == (
        evaluation.Run, benchmarks.Selection, settings.EvaluationSettings)
    assert callable(crepe_utils.toy_world)
    from crepe_utils import evaluate, toy_world  # noqa: F401 - `from crepe_utils import …` works too
    assert set(crepe_utils.API) <= set(dir(crepe_utils))


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'evaluat'"):
        crepe_utils.evaluat  # noqa: B018


def test_importing_the_package_and_naming_an_entry_point_import_neither_torch_nor_open_clip():
    code = ("import sys, crepe_utils; crepe_utils.evaluate; crepe_utils.toy_world; "
            "print(sorted(m for m in ('torch', 'open_clip', 'torchvision') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"


def test_toy_world_raises_when_the_pipeline_stops(tmp_path, capsys):
    from crepe_utils.api import ToyWorldError
    with pytest.raises(ToyWorldError, match="toy-world pipeline failed") as caught:
        crepe_utils.toy_world(tmp_path / "toy", held_out="purple unicorn", quiet=True)
    assert str(caught.value.__cause__) in str(caught.value)   # the pipeline's own message says what is wrong
    assert capsys.readouterr().err == ""                      # raised, not printed: the caller decides
    assert not (tmp_path / "toy" / "world").exists()
