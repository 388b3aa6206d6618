"""Shared pytest fixtures. Synthetic data only; the real reference data come from ../shared
and every test that needs them skips cleanly when that folder is absent."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("MPLBACKEND", "Agg")

import helpers  # noqa: E402

#: Fixtures that read the reference data; a test using one must carry ``@pytest.mark.shared``.
SHARED_FIXTURES = {"shared_crepe", "shared_winoground", "shared_report"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        uses = SHARED_FIXTURES & set(getattr(item, "fixturenames", ()))
        if uses and item.get_closest_marker("shared") is None:
            raise pytest.UsageError(f"{item.nodeid} reads the reference data ({', '.join(sorted(uses))}) "
                                    "but lacks @pytest.mark.shared")


#: Run by every notebook kernel when ``CREPE_SHARED`` is set (an IPython profile startup file).
KERNEL_STARTUP = """import os
from pathlib import Path
import crepe_utils.paths
crepe_utils.paths.SHARED_DIR = Path(os.environ[{env!r}])
"""


@pytest.fixture(scope="session", autouse=True)
def _reference_data_location(tmp_path_factory):
    """With ``CREPE_SHARED`` set, the package's development fallback looks there too: in this process
    and, through an IPython startup file, in the notebooks' kernels."""
    if not os.environ.get(helpers.SHARED_ENV):
        yield
        return
    from crepe_utils import paths
    ipython_dir = tmp_path_factory.mktemp("ipython")
    startup = ipython_dir / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-reference-data.py").write_text(KERNEL_STARTUP.format(env=helpers.SHARED_ENV))
    saved = paths.SHARED_DIR, os.environ.get("IPYTHONDIR")
    paths.SHARED_DIR, os.environ["IPYTHONDIR"] = helpers.SHARED, str(ipython_dir)
    yield
    paths.SHARED_DIR = saved[0]
    if saved[1] is None:
        os.environ.pop("IPYTHONDIR", None)
    else:
        os.environ["IPYTHONDIR"] = saved[1]


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """(config JSON, checkpoint) of a tiny random open_clip model."""
    return helpers.make_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def synthetic_root(tmp_path_factory):
    """(CREPE data folder, image folder) of a small synthetic benchmark in the real layout."""
    return helpers.synthetic_crepe_root(tmp_path_factory.mktemp("synthetic"))


@pytest.fixture(scope="session")
def loaded_tiny(tiny_model):
    from crepe_utils.models import load_model
    cfg, ckpt = tiny_model
    return load_model(cfg.stem, pretrained=str(ckpt), model_config=str(cfg), device="cpu")


@pytest.fixture
def shared_crepe():
    if not helpers.SHARED_CREPE.is_dir():
        pytest.skip("../shared/data/crepe is not present")
    return helpers.SHARED_CREPE


@pytest.fixture
def shared_winoground():
    if not helpers.SHARED_WINOGROUND.is_dir():
        pytest.skip("../shared/data/winoground is not present")
    return helpers.SHARED_WINOGROUND
