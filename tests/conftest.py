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
SHARED_FIXTURES = {"shared_crepe", "shared_winoground", "shared_sugarcrepe", "shared_report"}


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


@pytest.fixture
def shared_sugarcrepe():
    if not helpers.SHARED_SUGARCREPE.is_dir():
        pytest.skip("../shared/data/sugarcrepe is not present")
    return helpers.SHARED_SUGARCREPE


@pytest.fixture(scope="session")
def family_models_dir(tmp_path_factory):
    """A models folder (CREPE_MODELS) with a tiny BERT vocabulary, as a user would place it."""
    import family_fixtures
    root = tmp_path_factory.mktemp("placed-models")
    family_fixtures.write_vocab(root / "bert-base-uncased" / "vocab.txt")
    return root


@pytest.fixture(scope="session")
def cyclip_checkpoint(family_models_dir):
    """(state dict, file) of a tiny random OpenAI-format ResNet CLIP in CyCLIP's checkpoint layout."""
    import family_fixtures
    if family_fixtures.openai_clip_module("model") is None:
        pytest.skip("the CyCLIP tests compare with clip-anytorch (pip install '.[test-families]')")
    sd = family_fixtures.openai_rn_state_dict()
    return sd, family_fixtures.write_cyclip_checkpoint(family_models_dir / "cyclip-rn50" / "best.pt", sd)


@pytest.fixture(scope="session")
def albef_checkpoint(family_models_dir):
    """(state dict, file) of a tiny random ALBEF in ALBEF's pre-training checkpoint layout."""
    pytest.importorskip("transformers", reason="ALBEF needs the optional extra: pip install '.[albef]'")
    import family_fixtures
    sd = family_fixtures.albef_state_dict()
    return sd, family_fixtures.write_albef_checkpoint(family_models_dir / "albef-14m" / "ALBEF.pth", sd)


@pytest.fixture(scope="session")
def loaded_cyclip(cyclip_checkpoint):
    from crepe_utils.models import load_model
    return load_model("cyclip-rn50", pretrained=str(cyclip_checkpoint[1]), device="cpu")


def _load_placed(key: str, checkpoint, models_dir):
    """A registry model whose checkpoint is placed by hand under $CREPE_MODELS (ALBEF, FLAVA)."""
    from crepe_utils.models import load_model
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CREPE_MODELS", str(models_dir))
        return load_model(key, pretrained=str(checkpoint), device="cpu")


@pytest.fixture(scope="session")
def loaded_albef(albef_checkpoint, family_models_dir):
    return _load_placed("albef-14m", albef_checkpoint[1], family_models_dir)


@pytest.fixture(scope="session")
def flava_checkpoint(family_models_dir):
    """(torchmultimodal FLAVAModel, file) of a tiny random FLAVA in torchmultimodal's checkpoint layout."""
    pytest.importorskip("transformers", reason="FLAVA needs the optional extra: pip install '.[flava]'")
    import family_fixtures
    official = family_fixtures.torchmultimodal_flava()
    if official is None:
        pytest.skip("the FLAVA tests compare with torchmultimodal (pip install '.[test-families]')")
    return official, family_fixtures.write_flava_checkpoint(family_models_dir / "flava" / "flava.pt", official)


@pytest.fixture(scope="session")
def loaded_flava(flava_checkpoint, family_models_dir):
    return _load_placed("flava", flava_checkpoint[1], family_models_dir)


@pytest.fixture(scope="session")
def hf_clip_folder(tmp_path_factory):
    pytest.importorskip("transformers", reason="Hugging Face CLIP needs the optional extra: pip install '.[hf]'")
    import family_fixtures
    return family_fixtures.write_hf_clip(tmp_path_factory.mktemp("hf-clip") / "tiny-clip")


@pytest.fixture(scope="session")
def loaded_hf_clip(hf_clip_folder):
    from crepe_utils.models import load_model
    return load_model(f"transformers:{hf_clip_folder}", device="cpu")
