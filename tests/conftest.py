"""Shared pytest fixtures. Synthetic data only; the real reference data come from ../shared, are seen
only by tests marked ``@pytest.mark.shared`` (the shared_guard plugin), and every test that needs them
skips cleanly when that folder is absent."""
from __future__ import annotations

import os
import platform
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("MPLBACKEND", "Agg")
# ATen's AVX2 kernels in this process, as in the toy world's own processes and the notebook kernels (which inherit
# it): a toy pipeline run here and one run in a kernel then compute the same stage keys and share their cached
# stages (read before torch is imported, which nothing above does).
if platform.machine().lower() in ("x86_64", "amd64"):
    os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # One of several workers (pytest -n): one OpenMP thread each, here and in the processes its tests start (which
    # compare their embeddings with this one's: the cache keys them by thread count), and threads that sleep when
    # idle: a spinning thread takes the core another worker needs, and two workers whose threads spin while the
    # other's run slow each other tenfold. A test that wants more threads sets them itself.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import helpers  # noqa: E402
import shared_guard  # noqa: E402

pytest_plugins = ["pytester"]

#: Fixtures that read the reference data; a test using one must carry ``@pytest.mark.shared``.
SHARED_FIXTURES = {"shared_crepe", "shared_winoground", "shared_sugarcrepe", "shared_report"}


def pytest_configure(config):
    config.pluginmanager.register(shared_guard, "shared_guard")


def pytest_collection_modifyitems(config, items):
    for item in items:
        uses = SHARED_FIXTURES & set(getattr(item, "fixturenames", ()))
        if uses and item.get_closest_marker("shared") is None:
            raise pytest.UsageError(f"{item.nodeid} reads the reference data ({', '.join(sorted(uses))}) "
                                    "but lacks @pytest.mark.shared")


def built_once(tmp_path_factory, name: str, build) -> Path:
    """A folder ``build(folder)`` fills once per test session, whichever worker (pytest -n) asks first: the others
    wait on a lock in the session's common temporary folder and reuse it. A build that failed is redone."""
    from filelock import FileLock
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent                      # the workers' base folders sit side by side in it
    folder, done = root / f"shared-{name}", root / f"shared-{name}.done"
    with FileLock(str(root / f"shared-{name}.lock")):
        if not done.exists():
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


#: The toy world of the docs' small example (docs/evaluating.md) and notebook 06's test: trained once per session.
SMALL_TOY = {"steps": 30, "train_scenes": 300, "syst_rows": 40, "prod_rows": 10}


@pytest.fixture(scope="session")
def small_toy(tmp_path_factory) -> Path:
    """The toy pipeline's folder for :data:`SMALL_TOY` (world, model, results), computed once per session; copy it
    where a test runs the pipeline with those settings, which then finds every stage computed (this process and
    the notebook kernels it starts compute the same stage keys: ATen is pinned above)."""
    def run(folder: Path) -> None:
        from crepe_utils.toy.pipeline import build_configs, pipeline
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("CREPE_CACHE", str(folder.parent / f"{folder.name}-cache"))
            pipeline(folder, *build_configs(**SMALL_TOY), progress=False)
    return built_once(tmp_path_factory, "small-toy", run)


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
