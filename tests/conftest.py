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


@pytest.fixture(scope="session", autouse=True)
def _reference_data_location():
    """The package finds data only where a user's would be: ``$CREPE_DATA``. The tests point it at the
    reference data (``helpers.SHARED / "data"``, relocatable with ``CREPE_SHARED``), in this process and
    in the notebooks' kernels, which inherit the environment."""
    saved = os.environ.get("CREPE_DATA")
    os.environ["CREPE_DATA"] = str(helpers.SHARED / "data")
    yield
    if saved is None:
        os.environ.pop("CREPE_DATA", None)
    else:
        os.environ["CREPE_DATA"] = saved


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
