"""The shared_guard plugin, run on a tiny test file against a stand-in reference folder.

Would notice: an unmarked test that reads the reference data and passes (by opening, listing or
globbing it, by catching the error, by skipping afterwards, or through a subprocess), a marked test
that does not see the data through CREPE_DATA, or one that fails instead of skipping where the
reference folder is absent.
"""
from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent

TINY_TESTS = '''
import glob, os, subprocess, sys
from pathlib import Path
import pytest

REF = Path(os.environ["CREPE_SHARED"])
CSV = REF / "data" / "crepe" / "x.csv"

def test_unmarked_opens():
    assert CSV.read_text() == "image_id\\n"

def test_unmarked_lists_and_swallows_the_error():
    try:
        os.listdir(REF / "data")
    except OSError:
        pass

def test_unmarked_globs_then_skips():
    list((REF / "data").rglob("*.csv"))
    glob.glob(str(REF / "data" / "*"))
    pytest.skip("nothing to see")

def test_unmarked_relative_path(monkeypatch):
    monkeypatch.chdir(REF.parent)
    open(Path(REF.name) / "data" / "crepe" / "x.csv").close()

def test_unmarked_subprocess():
    subprocess.run([sys.executable, "-c", "pass", f"--data-dir={REF / 'data'}"], check=True)

@pytest.fixture
def reads_in_setup():
    return sorted(os.scandir(REF / "data"))

def test_unmarked_fixture_reads(reads_in_setup):
    pass

def test_unmarked_sees_an_empty_data_folder():
    data = Path(os.environ["CREPE_DATA"])
    assert data.is_dir() and not any(data.iterdir())
    assert os.environ["WINOGROUND_DATA"] == str(data / "winoground")
    assert not (REF / "data").is_dir() or (REF / "data").exists()   # existence checks are not reads

def test_unmarked_subprocess_inherits_the_empty_folder(tmp_path):
    out = subprocess.run([sys.executable, "-c", "import os; print(os.environ['CREPE_DATA'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == os.environ["CREPE_DATA"] and not Path(out).is_relative_to(REF)

@pytest.mark.shared
def test_marked_reads_through_crepe_data():
    assert Path(os.environ["CREPE_DATA"]) == REF / "data"
    assert (Path(os.environ["CREPE_DATA"]) / "crepe" / "x.csv").read_text() == "image_id\\n"
'''

FLAGGED = ["test_unmarked_opens", "test_unmarked_lists_and_swallows_the_error", "test_unmarked_globs_then_skips",
           "test_unmarked_relative_path", "test_unmarked_subprocess", "test_unmarked_fixture_reads"]


def _run(pytester, monkeypatch, reference: Path):
    monkeypatch.setenv("CREPE_SHARED", str(reference))
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    pytester.makepyfile(test_tiny=TINY_TESTS)
    return pytester.runpytest_subprocess("-p", "shared_guard", "-rA", "-p", "no:cacheprovider")


def test_the_guard_fails_each_unmarked_test_that_reads_the_reference_folder(pytester, monkeypatch, tmp_path):
    reference = tmp_path / "reference"
    (reference / "data" / "crepe").mkdir(parents=True)
    (reference / "data" / "crepe" / "x.csv").write_text("image_id\n")
    result = _run(pytester, monkeypatch, reference)
    result.assert_outcomes(failed=len(FLAGGED) - 1, errors=1, passed=3)      # the fixture's read: an error at setup
    text = result.stdout.str()
    for name in FLAGGED:
        assert f"test_tiny.py::{name} reads the reference data ({reference / 'data'}" in text, name
    assert "not marked @pytest.mark.shared" in text


def test_marked_tests_skip_where_the_reference_folder_is_absent(pytester, monkeypatch, tmp_path):
    absent = tmp_path / "absent"
    result = _run(pytester, monkeypatch, absent)
    # the unmarked tests are caught by the path they name, whether or not it exists
    result.assert_outcomes(failed=len(FLAGGED) - 1, errors=1, passed=2, skipped=1)
    assert f"the reference data ({absent / 'data'}) are not present" in result.stdout.str()


def test_a_module_that_reads_the_reference_folder_when_collected_is_an_error(pytester, monkeypatch, tmp_path):
    reference = tmp_path / "reference"
    (reference / "data" / "crepe").mkdir(parents=True)
    monkeypatch.setenv("CREPE_SHARED", str(reference))
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    pytester.makepyfile(test_listing="""
import os, pytest
FILES = sorted(os.listdir(os.path.join(os.environ["CREPE_SHARED"], "data")))
@pytest.mark.shared
@pytest.mark.parametrize("name", FILES)
def test_each(name):
    pass
""")
    result = pytester.runpytest_subprocess("-p", "shared_guard", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert f"test_listing.py reads the reference data ({reference / 'data'}) while it is collected" in result.stdout.str()
