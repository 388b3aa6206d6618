"""SugarCrepe's images: COCO val2017 downloaded from the loopback server (tests/loopback.py) in the real
archive layout, found by file name, and SugarCrepe pairs scored by the engine against a plain reference."""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

import helpers
from crepe_utils.download import RECORD_NAME, DownloadError, Downloader, datasets
from crepe_utils.download.transport import TransferPolicy
from crepe_utils.engine import core as engine
from crepe_utils.errors import DataError
from crepe_utils.benchmarks.sugarcrepe.data import Pair, load_pairs
from crepe_utils.imagesets.coco import CocoImages
from crepe_utils import benchmarks
from crepe_utils.imagesets.coco import COCO
from loopback import LoopbackServer, make_zip, sha256

PROJECT_ROOT = Path(__file__).resolve().parent.parent
NAMES = ["000000000139.jpg", "000000000285.jpg", "000000000632.jpg"]


def jpeg(seed: int, tmp: Path) -> bytes:
    return helpers.make_image(tmp / f"{seed}.jpg", size=(48, 40), seed=seed).read_bytes()


@pytest.fixture(scope="module")
def val2017_zip(tmp_path_factory) -> bytes:
    """val2017.zip as COCO serves it: a val2017/ folder entry, then val2017/<12-digit id>.jpg."""
    tmp = tmp_path_factory.mktemp("coco")
    return make_zip({"val2017/": b"", **{f"val2017/{n}": jpeg(i, tmp) for i, n in enumerate(NAMES)}})


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch):
    """No proxies, mirrors or overrides leak in from the developer's environment."""
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", datasets.MIRROR_ENV, datasets.OVERRIDE_ENV):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server():
    srv = LoopbackServer()
    yield srv
    srv.stop()


def override(server: LoopbackServer, data: bytes, tmp_path: Path) -> dict[str, str]:
    server.files["/val2017.zip"] = data
    path = tmp_path / "override.json"
    path.write_text(json.dumps({"coco-val2017": {"url": server.url("val2017.zip"), "approx_size": len(data)}}))
    return {datasets.OVERRIDE_ENV: str(path)}


def test_the_table_entry_is_coco_val2017_unpinned():
    (entry,) = benchmarks.DATASETS.files_for("coco", environ={})
    assert (entry.name, entry.filename, entry.urls()) == (
        "coco-val2017", "val2017.zip", ("http://images.cocodataset.org/zips/val2017.zip",))
    assert entry.checksum is None and entry.size is None and entry.approx_size == 815_585_330
    assert (entry.extract.folder, entry.extract.root_required) == ("val2017", True)
    assert not entry.released_text and entry.licence and entry.sources


def test_download_records_the_first_sha256_extracts_val2017_and_refuses_a_changed_archive(
        server, val2017_zip, tmp_path):
    (entry,) = benchmarks.DATASETS.files_for("coco", environ=override(server, val2017_zip, tmp_path))
    dest = tmp_path / "coco"
    policy = TransferPolicy(attempts=1, retry_wait=0)
    Downloader([entry], dest, policy=policy, out=io.StringIO()).run()
    record = json.loads((dest / RECORD_NAME).read_text())["files"]["val2017.zip"]
    assert record["sha256"] == sha256(val2017_zip) and record["checksum"] is None
    assert sorted(p.name for p in (dest / "val2017").glob("*.jpg")) == NAMES
    index = CocoImages(dest)
    assert index.path(NAMES[1]) == dest / "val2017" / NAMES[1]
    # upstream changes: the recorded sha256 refuses the new archive
    (dest / "val2017.zip").unlink()
    shutil.rmtree(dest / "val2017")
    server.files["/val2017.zip"] = make_zip({"val2017/000000000001.jpg": b"other bytes"})
    with pytest.raises(DownloadError, match="recorded at the first download"):
        Downloader([entry], dest, policy=policy, out=io.StringIO()).run()


def test_an_archive_without_its_val2017_folder_is_refused(server, tmp_path):
    (entry,) = benchmarks.DATASETS.files_for("coco", environ=override(server, make_zip({NAMES[0]: b"x"}), tmp_path))
    with pytest.raises(DownloadError, match=r"should hold everything under val2017/"):
        Downloader([entry], tmp_path / "coco", policy=TransferPolicy(attempts=1, retry_wait=0),
                   out=io.StringIO()).run()


def test_make_data_coco_fills_coco_images(server, val2017_zip, tmp_path, monkeypatch):
    """`make data-coco` itself, into the folder COCO_IMAGES names, where CocoImages looks by default."""
    if shutil.which("make") is None or not (PROJECT_ROOT / ".venv" / ".crepe-installed").exists():
        pytest.skip("needs make and the project's .venv (run through `make test`)")
    env = {**os.environ, **override(server, val2017_zip, tmp_path), "no_proxy": "*"}
    target = tmp_path / "images" / "coco"
    done = subprocess.run(["make", "-C", str(PROJECT_ROOT), "data-coco", f"COCO_IMAGES={target}"], env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert server.requests and {p for p, _ in server.requests} == {"/val2017.zip"}
    monkeypatch.setenv("COCO_IMAGES", str(target))
    assert COCO.dir() == target and len(CocoImages()) == len(NAMES)
    assert CocoImages().missing(NAMES) == []


def test_the_index_finds_val2017_first_then_the_flat_folder(tmp_path, monkeypatch):
    root = tmp_path / "coco"
    helpers.make_image(root / "val2017" / NAMES[0], seed=1)
    helpers.make_image(root / NAMES[0], seed=2)          # a stray copy beside val2017/
    helpers.make_image(root / NAMES[1], seed=3)          # a flat folder
    (root / "val2017.zip").write_bytes(b"PK")             # not an image of the index
    index = CocoImages(root)
    assert index.root == root
    assert index.path(NAMES[0]) == root / "val2017" / NAMES[0] and index.path(NAMES[1]) == root / NAMES[1]
    assert NAMES[1] in index and NAMES[2] not in index and len(index) == 2 and "val2017.zip" not in index
    assert index.missing([NAMES[2], NAMES[0], NAMES[2], "000000000999.jpg"]) == [NAMES[2], "000000000999.jpg"]
    with pytest.raises(FileNotFoundError, match=rf"{NAMES[2]} not found in {root}"):
        index.path(NAMES[2])
    with pytest.raises(FileNotFoundError, match=r"does not exist.*make data-coco"):
        CocoImages(tmp_path / "nowhere")
    monkeypatch.delenv("COCO_IMAGES", raising=False)
    monkeypatch.setenv("CREPE_DATA", str(tmp_path))
    assert CocoImages().root == root                     # <data root>/coco without COCO_IMAGES


# ------------------------------------------------------------------------------- through the engine

def pairs_on(names: list[str]) -> list[Pair]:
    return [Pair("replace_obj", str(i), name, f"a photo number {i}", f"a drawing number {i}",
                 f"replace_obj.json:{i}") for i, name in enumerate(names)]


def naive_scores(loaded, index: CocoImages, pairs: list[Pair]) -> list[tuple[float, float]]:
    """One pair at a time, the whole image: open, RGB, preprocess, encode; both captions; cosine scores."""
    out = []
    with torch.no_grad():
        for p in pairs:
            pixels = loaded.preprocess(Image.open(index.path(p.image_id)).convert("RGB")).unsqueeze(0)
            img = F.normalize(loaded.model.encode_image(pixels), dim=-1)[0]
            txt = F.normalize(loaded.model.encode_text(loaded.tokenizer([p.positive, p.negative])), dim=-1)
            out.append(tuple((txt @ img).tolist()))
    return out


def test_pairs_score_as_a_plain_reference_and_missing_images_are_reported(loaded_tiny, tmp_path):
    root = tmp_path / "coco"
    for i, name in enumerate(NAMES[:2]):
        helpers.make_image(root / "val2017" / name, size=(64, 48), seed=10 + i)
    index = CocoImages(root)
    pairs = pairs_on(NAMES[:2] + NAMES[:1])
    res = engine.run(loaded_tiny, pairs, index, cache_dir=None)
    got = [tuple(res.query_scores(i).tolist()) for i in range(len(res.queries))]
    assert [q.query_id for q in res.queries] == ["replace_obj.json:0", "replace_obj.json:1", "replace_obj.json:2"]
    assert np.allclose(got, naive_scores(loaded_tiny, index, pairs), atol=1e-5)
    with_missing = pairs + pairs_on([NAMES[2]])
    with pytest.raises(DataError, match=rf"1 image\(s\) missing under {root} \(first: {NAMES[2]} \(used by "
                                        rf"{with_missing[-1].query_id}\)\)"):
        engine.run(loaded_tiny, with_missing, index, cache_dir=None)
    skipped = engine.run(loaded_tiny, with_missing, index, engine.RunOptions(skip_missing_images=True),
                         cache_dir=None)
    assert len(skipped.queries) == 3 and [(q.image_id, why) for q, why in skipped.skipped] == [(NAMES[2], "missing image")]


def test_loaded_pairs_are_engine_queries(loaded_tiny, tmp_path):
    folder = tmp_path / "sc"
    folder.mkdir()
    for subset in ("add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj"):
        (folder / f"{subset}.json").write_text(json.dumps({"0": {
            "filename": NAMES[0], "caption": f"a dog ({subset})", "negative_caption": f"a cat ({subset})"}}, indent=4))
    helpers.make_image(tmp_path / "coco" / "val2017" / NAMES[0], seed=5)
    res = engine.run(loaded_tiny, load_pairs(folder).pairs, CocoImages(tmp_path / "coco"), cache_dir=None)
    assert len(res.queries) == 7 and res.scores.shape == (14,) and res.skipped == []
