"""Only tests marked ``@pytest.mark.shared`` see the reference data (../shared); a pytest plugin.

Every other test runs as on a user's machine: ``CREPE_DATA`` (with every declared dataset's own variable and
``CREPE_MODELS``, which default below it) names a fresh empty
folder, in this process and in the subprocesses and notebook kernels the test starts. An audit hook watches
each unmarked test's setup and body: opening or listing anything under the reference folder, or starting a
process with a path into it, fails the test, naming it and the path (and doing so while a test module is
collected is an error naming the module). A test marked ``shared`` sees ``<reference>/data`` and is skipped
where that folder is absent. ``CREPE_SHARED`` relocates the reference folder.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from crepe_utils import benchmarks

SHARED_ENV = "CREPE_SHARED"
SHARED = Path(os.environ.get(SHARED_ENV) or Path(__file__).resolve().parent.parent.parent / "shared")
#: the data root, each declared dataset's own variable (from the registry), and the placed weights' folder
DATA_VARIABLES = ("CREPE_DATA", *dict.fromkeys(d.variable for d in benchmarks.DATASETS.datasets.values() if d.variable),
                  "CREPE_MODELS")

_ROOTS = tuple({os.path.abspath(SHARED), os.path.realpath(SHARED)})
_PATH_EVENTS = frozenset({"open", "os.listdir", "os.scandir", "glob.glob"})


class _Watch:
    active = False                  #: an unmarked test's setup or body is running
    touched: list[str] = []         #: what it touched under the reference folder
    saved: dict = {}                #: DATA_VARIABLES as the session found them
    folders: Path | None = None     #: holds each unmarked test's empty data folder


def _under_shared(path) -> str | None:
    """``path`` as an absolute path when it lies in the reference folder, else None."""
    if path is None or isinstance(path, int):
        return None
    try:
        text = os.path.abspath(os.fsdecode(path))
    except (TypeError, ValueError):
        return None
    return text if any(text == root or text.startswith(root + os.sep) for root in _ROOTS) else None


def _audit(event: str, args: tuple) -> None:
    if not _Watch.active:
        return
    if event in _PATH_EVENTS:
        hits = [_under_shared(args[0])] if args else []
    elif event == "subprocess.Popen":                   # (executable, args, cwd, env)
        argv = [args[1]] if isinstance(args[1], (str, bytes, os.PathLike)) else list(args[1] or ())
        env = args[3] if args[3] is not None else os.environ
        words = [*argv, args[2], *(env.get(name) for name in DATA_VARIABLES)]
        hits = [_under_shared(w.split("=", 1)[-1] if isinstance(w, str) else w) for w in words]
    else:
        return
    _Watch.touched.extend(hit for hit in hits if hit)


def _point_data_at(folder: Path) -> None:
    os.environ["CREPE_DATA"] = str(folder)
    for dataset in benchmarks.DATASETS.datasets.values():
        if dataset.variable:
            os.environ[dataset.variable] = str(folder / dataset.folder)
    os.environ["CREPE_MODELS"] = str(folder / "models")


def pytest_configure(config):
    if not any(line.startswith("shared:") for line in config.getini("markers")):
        config.addinivalue_line("markers", "shared: needs the reference data in ../shared")
    _Watch.saved = {name: os.environ.get(name) for name in DATA_VARIABLES}
    _Watch.folders = Path(tempfile.mkdtemp(prefix="crepe-no-data-"))
    (_Watch.folders / "between-tests").mkdir()
    _point_data_at(_Watch.folders / "between-tests")     # collection and module code see no data either
    sys.addaudithook(_audit)                            # once per process; idle unless _Watch.active


def pytest_unconfigure(config):
    for name, value in _Watch.saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    if _Watch.folders is not None:
        shutil.rmtree(_Watch.folders, ignore_errors=True)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """A test module that reads the reference data while it is imported (a parametrize list) is an error."""
    if not isinstance(collector, pytest.Module):
        return (yield)
    _Watch.touched, _Watch.active = [], True
    try:
        report = yield
    finally:
        _Watch.active = False
    if _Watch.touched:
        report.outcome = "failed"
        report.longrepr = (f"{collector.nodeid} reads the reference data ({_Watch.touched[0]}) while it is collected: "
                           "read it inside a test marked @pytest.mark.shared")
    return report


def _watched(item):
    """Run one phase of ``item``; an unmarked test that touched the reference folder fails."""
    if item.get_closest_marker("shared") is not None:
        return (yield)
    _Watch.touched, _Watch.active = [], True
    try:
        return (yield)
    finally:
        _Watch.active = False
        if _Watch.touched:
            pytest.fail(f"{item.nodeid} reads the reference data ({_Watch.touched[0]}) but is not marked "
                        "@pytest.mark.shared: mark it, or make it self-contained (tests/helpers.py has "
                        "synthetic data)", pytrace=False)


def pytest_collection_modifyitems(config, items):
    if not (SHARED / "data").is_dir():
        skip = pytest.mark.skip(reason=f"the reference data ({SHARED / 'data'}) are not present")
        for item in items:
            if item.get_closest_marker("shared") is not None:
                item.add_marker(skip)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    if item.get_closest_marker("shared") is not None:
        _point_data_at(SHARED / "data")
    else:
        _point_data_at(Path(tempfile.mkdtemp(dir=_Watch.folders)))
    return (yield from _watched(item))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item):
    return (yield from _watched(item))


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item, nextitem):
    try:
        return (yield)
    finally:
        _point_data_at(_Watch.folders / "between-tests")
