"""Hostile files and names (issue 32): what a careless or malicious source hands the companion must not run code, must
not write outside the folder it was given, and must end in one line naming the file and the line or item.

* names that would climb out of their folder: a model named ``local-dir:..``, an override whose file or extract
  folder is ``../escape``: refused when read, naming the field and value, or given a folder name that stays inside;
* JSON nested 100,000 deep in Winoground's, SugarCrepe's and VALSE's files: one line with the place;
* a CSV field over csv's limit: a long caption is read and its truncation counted; a bad row is named by its line;
* a pickle that would create a file, named as an open_clip release file: refused by its content, the file never made;
* a VALSE item of two million fields: read in seconds.

Every hostile input is built here, independently of the code under test; where files could be written, the folders'
contents are listed before and after, and every path that appeared or changed must lie under the folder the run was
given.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

import cli_runner
import helpers
from crepe_utils.download import datasets
from crepe_utils.paths import folder_name
from crepe_utils.results import store


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``root`` (relative path -> size, modification time in ns)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            out[str(path.relative_to(root))] = (info.st_size if name in filenames else 0, info.st_mtime_ns)
    return out


def _changed(before: dict, after: dict) -> set[str]:
    return {p for p in after if before.get(p) != after[p]} | (set(before) - set(after))


@pytest.mark.parametrize("name, folder", [("..", "_.."), (".", "_."), ("", "_"), (".hidden", "_.hidden"),
                                          ("a/../../b", "a_.._.._b"), ("ViT-B-32/openai", "ViT-B-32_openai"),
                                          ("x\x00y", "x_y"), ("café", "café")])
def test_a_name_becomes_one_folder_that_stays_put(name, folder):
    assert folder_name(name) == folder
    made = folder_name(name)
    assert "/" not in made and made not in ("", ".", "..") and not made.startswith(".")
    assert store.result_dir("/out", name, name).parent.parent == Path("/out")


def test_long_names_stay_apart_within_the_length_limit():
    a, b = "m" * 300 + "a", "m" * 300 + "b"
    assert folder_name(a) != folder_name(b) and len(folder_name(a)) <= 120 and folder_name(a).startswith("m" * 50)


@pytest.mark.slow
def test_a_local_dir_model_named_dot_dot_writes_its_result_inside_out(tmp_path):
    """``--model local-dir:..`` from a folder inside the model's: the model's key is ``..``; its result goes to
    ``OUT/_../``, and nothing outside OUT changes."""
    model = tmp_path / "tiny-model"
    work = model / "work"
    work.mkdir(parents=True)
    cfg = dict(helpers.TINY_CONFIG)
    (model / "open_clip_config.json").write_text(json.dumps({"model_cfg": cfg, "preprocess_cfg": {}}))
    import open_clip
    torch.manual_seed(0)
    torch.save(open_clip.CLIP(**cfg).state_dict(), model / "open_clip_pytorch_model.bin")
    data_dir, image_dir = helpers.synthetic_crepe_root(tmp_path / "data", rows_per_file=2)
    out = work / "out"
    before = _tree(tmp_path)
    done = cli_runner.run(["evaluate", "--benchmark", "crepe-productivity", "--model", "local-dir:..",
                           "--data-dir", data_dir, "--image-dir", image_dir, "--complexities", "4",
                           "--hn-types", "atom", "--out", "out", "--no-cache", "--device", "cpu", "--n-boot", "10"],
                          cwd=work)
    assert done.returncode == 0, done.stderr
    changed = _changed(before, _tree(tmp_path)) - {"tiny-model/work"}      # out's parent: a new entry, its mtime
    assert changed and all(p == "tiny-model/work/out" or p.startswith("tiny-model/work/out/") for p in changed), \
        sorted(changed)
    assert (out / "_.." / "productivity" / "summary.csv").is_file()


def _override(tmp_path: Path, entry: dict) -> dict:
    path = tmp_path / "override.json"
    path.write_text(json.dumps({"crepe-prod": entry}))
    return {**os.environ, datasets.OVERRIDE_ENV: str(path), "no_proxy": "*",
            datasets.MIRROR_ENV: "http://127.0.0.1:9"}           # nothing listens: no byte is fetched


@pytest.mark.parametrize("entry, named", [
    ({"filename": "../escape.zip"}, "filename '../escape.zip'"),
    ({"filename": "/tmp/escape.zip"}, "filename '/tmp/escape.zip'"),
    ({"filename": "sub/escape.zip"}, "filename 'sub/escape.zip' names a folder"),
    ({"extract": {"folder": "../escape"}}, "extract folder '../escape'"),
    ({"extract": {"folder": "/etc"}}, "extract folder '/etc'"),
    ({"extract": {"folder": "a/../../b"}}, "extract folder 'a/../../b'"),
])
def test_an_override_that_climbs_is_refused_when_read(tmp_path, entry, named):
    dest = tmp_path / "dest" / "crepe"
    dest.mkdir(parents=True)
    env = _override(tmp_path, entry)
    before = _tree(tmp_path)
    done = cli_runner.run(["download", "crepe", "--dest", dest, "--yes"], env=env, cwd=tmp_path)
    lines = done.stderr.splitlines()
    assert done.returncode != 0 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "override.json" in lines[0] and "crepe-prod" in lines[0] and named in lines[0], lines[0]
    assert _changed(before, _tree(tmp_path)) == set()


def test_every_declared_file_and_folder_is_a_name_inside_its_destination():
    """The declarations themselves pass the rule the overrides are held to (they are built through it)."""
    from crepe_utils import benchmarks
    files = [f for d in benchmarks.DATASETS.datasets.values() for f in d.files]
    assert files and all("/" not in f.filename and f.filename not in (".", "..") for f in files)
    with pytest.raises(datasets.DatasetTableError, match="extract folder '..'"):
        datasets.Extraction("..")


# ------------------------------------------------------------------------------ JSON nested 100,000 deep

DEEP = "[" * 100_000 + "]" * 100_000          # Python's reader gives up (RecursionError) long before the end


def _one_error_line(done) -> str:
    lines = done.stderr.splitlines()
    assert done.returncode != 0 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


def test_deep_json_in_winoground_examples_is_one_line_naming_the_line(tmp_path):
    root = tmp_path / "wg"
    (root / "images").mkdir(parents=True)
    good = {"id": 0, "image": "ex_0", "caption_0": "a", "caption_1": "b", "tag": "Object",
            "secondary_tag": "", "num_main_preds": 1, "collapsed_tag": "Object", "image_0": "ex_0_img_0",
            "image_1": "ex_0_img_1"}
    (root / "examples.jsonl").write_text(json.dumps(good) + "\n" + '{"id": ' + DEEP + "}\n")
    line = _one_error_line(cli_runner.run(["winoground", "--model", "blind:negation", "--data-dir", root, "--out",
                                           tmp_path / "out", "--kind", "fixture"], cwd=tmp_path))
    assert "examples.jsonl:2: not valid JSON (nested more than 500 levels deep at column 507)" in line, line
    assert not (tmp_path / "out").exists()


def test_deep_json_in_a_sugarcrepe_file_is_one_line_naming_the_file_and_line(tmp_path):
    from test_sugarcrepe_data import write_folder
    folder = write_folder(tmp_path / "sugarcrepe")
    (folder / "add_att.json").write_text('{\n  "0": ' + DEEP + "\n}\n")
    line = _one_error_line(cli_runner.run(["sugarcrepe", "--model", "blind:negation", "--data-dir", folder, "--out",
                                           tmp_path / "out", "--kind", "fixture", "--subsets", "add_att"],
                                          cwd=tmp_path))
    assert f"{folder / 'add_att.json'}: not valid JSON (nested more than 500 levels deep at line 2, column 507)" \
        in line, line
    assert not (tmp_path / "out").exists()


def test_deep_json_in_a_valse_file_is_one_line_naming_the_file_and_line(tmp_path):
    folder = tmp_path / "valse"
    folder.mkdir()
    (folder / "existence.json").write_text('{\n\n  "e": ' + DEEP + "\n}\n")
    line = _one_error_line(cli_runner.run(["valse", "--pieces", "existence", "--model", "blind:negation",
                                           "--data-dir", folder, "--out", tmp_path / "out", "--kind", "fixture"],
                                          cwd=tmp_path))
    assert f"{folder / 'existence.json'}:3: not JSON (nested more than 500 levels deep at column 507)" in line, line
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------ a CSV field over csv's limit

def _productivity_file(tmp_path: Path, caption: str) -> tuple[Path, Path]:
    """A CREPE data folder whose one productivity file has three rows, the third (line 4) with ``caption``."""
    ids = ["1", "2", "3"]
    images = helpers.make_vg_root(tmp_path / "images", ids, size=(64, 48))
    rows = [dict(image_id=i, caption=f"a red dog number {i}", x=0, y=0, width=40, height=30,
                 hard_negs=[f"a blue dog number {i}", f"a red cat number {i}"]) for i in ids]
    rows[2]["caption"] = caption
    data = tmp_path / "crepe"
    helpers.write_productivity_csv(data / "prod_hard_negatives" / "atom" / "prod_vg_hard_negs_atom_complexity_4.csv",
                                   rows, 4)
    return data, images


def test_a_caption_over_the_csv_field_limit_is_evaluated_and_its_truncation_counted(tmp_path, tiny_model):
    """A 300,000-character caption (csv's default limit is 131,072) is read whole; the tiny model's tokenizer cuts it
    at 77 tokens, and the run says one caption was over-long."""
    cfg, ckpt = tiny_model
    data, images = _productivity_file(tmp_path, "a dog " * 50_000)
    done = cli_runner.run(["evaluate", "--benchmark", "crepe-productivity", "--model", cfg.stem, "--pretrained", ckpt,
                           "--model-config", cfg, "--data-dir", data, "--image-dir", images, "--hn-types", "atom",
                           "--complexities", "4", "--out", tmp_path / "out", "--no-cache", "--device", "cpu",
                           "--n-boot", "10"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    import pandas as pd
    manifest = json.loads(next((tmp_path / "out").rglob("manifest.json")).read_text())
    summary = pd.read_csv(next((tmp_path / "out").rglob("summary.csv")))
    assert manifest["engine"]["n_overlength_texts"] == 1 and summary["n_queries"].tolist() == [3]


def test_a_malformed_row_is_named_by_its_own_line(tmp_path, monkeypatch):
    """A field over the limit on line 4 is reported on line 4 (the reader's count lagged a row behind)."""
    from crepe_utils.benchmarks.crepe import queries
    from crepe_utils.errors import DataError
    monkeypatch.setattr(queries, "FIELD_LIMIT", 0)                # only csv's own limit: 131,072 characters
    data, _ = _productivity_file(tmp_path, "a dog " * 50_000)
    with pytest.raises(DataError) as caught:
        queries.load_productivity(data, ["atom"], [4])
    assert f"prod_vg_hard_negs_atom_complexity_4.csv:4: not a well-formed CSV row (field larger than field limit" \
        in str(caught.value)


# ------------------------------------------------------------------------------ code in a checkpoint

class _Marker:
    """Unpickled, it creates the file ``path`` (what any code in a pickle could do instead)."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _tiny_state(cfg: Path) -> dict:
    import open_clip
    torch.manual_seed(0)
    return open_clip.CLIP(**json.loads(cfg.read_text())).state_dict()


def test_a_checkpoint_named_as_a_release_file_runs_no_code(tmp_path):
    """A pickle that would create a marker file, saved under the name of an open_clip release file: refused in one
    line naming what it would build; the marker never exists."""
    cfg = tmp_path / "crepe-tiny-quickgelu.json"              # the architecture the file's name implies: QuickGELU
    cfg.write_text(json.dumps({**helpers.TINY_CONFIG, "quick_gelu": True}))
    marker = tmp_path / "marker"
    path = tmp_path / "vit_b_32-quickgelu-laion400m_e32-46683a32.pt"
    torch.save({"state_dict": _tiny_state(cfg), "payload": _Marker(marker)}, path)
    data_dir, image_dir = helpers.synthetic_crepe_root(tmp_path / "data", rows_per_file=2, complexities=(4,))
    done = cli_runner.run(["evaluate", "--benchmark", "crepe-productivity", "--model", cfg.stem, "--model-config", cfg,
                           "--pretrained", path, "--data-dir", data_dir, "--image-dir", image_dir, "--complexities",
                           "4", "--out", tmp_path / "out", "--no-cache", "--device", "cpu"], cwd=tmp_path)
    lines = done.stderr.splitlines()
    assert done.returncode != 0 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert f"checkpoint {path} holds Python objects other than weights and numbers (io.open)" in lines[0]   # open
    assert not marker.exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("what", ["ALBEF", "FLAVA", "CyCLIP RN50"])
def test_the_loader_of_the_other_families_runs_no_code_from_a_checkpoint(tmp_path, what):
    """ALBEF's, FLAVA's and CyCLIP's checkpoints go through one loader: a file whose pickle would create a marker
    is refused in one line naming what it would build."""
    from crepe_utils.errors import ModelError
    from crepe_utils.models.spec import load_torch_file
    marker = tmp_path / "marker"
    path = tmp_path / "checkpoint.pth"
    torch.save({"model": {"w": torch.zeros(2)}, "payload": _Marker(marker)}, path)
    with pytest.raises(ModelError, match=r"holds Python objects other than weights and numbers \(io\.open\)"):
        load_torch_file(path, what)
    assert not marker.exists()


def test_no_module_loads_a_checkpoint_but_through_the_guarded_loaders():
    """Every torch.load in the package is the weights-only one of models/spec.py; open_clip's loader is called
    with weights_only=True (a new family that called torch.load itself would fail here)."""
    root = Path(__file__).resolve().parent.parent / "crepe_utils"
    calls = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8").count("torch.load(")
             for p in root.rglob("*.py")}
    assert {k: n for k, n in calls.items() if n} == {"models/spec.py": 1}
    assert "weights_only=True" in (root / "models" / "openclip.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("member", ["../escape.txt", "crepe/../../escape.txt", "/etc/escape.txt", "C:/escape.txt"])
def test_an_archive_member_that_would_leave_the_destination_is_refused_before_extraction(tmp_path, member):
    import zipfile
    from types import SimpleNamespace

    from crepe_utils.download import extraction
    from crepe_utils.errors import DownloadError
    archive = tmp_path / "dest" / "a.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("crepe/ok.txt", "fine")
        zf.writestr(member, "escaped")
    entry = SimpleNamespace(extract=datasets.Extraction("crepe"), filename="a.zip")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(DownloadError, match="unsafe member names such as"):
        extraction.extract(entry, archive, tmp_path / "dest", {}, print)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_numbers_a_training_script_stores_beside_the_weights_load(tmp_path, tiny_model):
    """numpy scalars (an epoch, a loss) beside the state dict, as open_clip's release files hold them: read from the
    file's content, they load weights-only."""
    import numpy as np
    from crepe_utils.models import load_model
    cfg, ckpt = tiny_model
    state = _tiny_state(cfg)
    path = tmp_path / "with-numbers.pt"
    torch.save({"epoch": np.int64(32), "loss": np.float32(0.5), "name": "run", "state_dict": state}, path)
    loaded = load_model(cfg.stem, pretrained=str(path), model_config=str(cfg), device="cpu")
    assert all(torch.equal(loaded.model.state_dict()[k], v) for k, v in state.items())


def test_a_release_tags_file_is_read_by_its_content_too(tmp_path, tiny_model, monkeypatch):
    """Weights asked for by a release tag: the file open_clip fetches into its cache is read like any other, so the
    numpy numbers a release file holds beside its weights load (weights-only), and a pickle in one is refused."""
    import numpy as np
    import open_clip.factory
    import open_clip.pretrained
    from crepe_utils.errors import ModelError
    from crepe_utils.models import load_model
    cfg, _ = tiny_model
    state = _tiny_state(cfg)
    cached = tmp_path / "cache" / "release.pt"
    cached.parent.mkdir()
    fetched = []

    def get_cfg(model, tag):
        return {"url": "https://example.invalid/release.pt"} if (model, tag) == (cfg.stem, "release") else {}

    def download(pretrained_cfg, cache_dir=None, **kwargs):
        fetched.append(pretrained_cfg.get("url"))
        return str(cached) if pretrained_cfg else ""
    for module in (open_clip.pretrained, open_clip.factory):
        monkeypatch.setattr(module, "get_pretrained_cfg", get_cfg, raising=False)
        monkeypatch.setattr(module, "download_pretrained", download, raising=False)
    torch.save({"epoch": np.int64(32), "state_dict": state}, cached)
    loaded = load_model(cfg.stem, pretrained="release", model_config=str(cfg), device="cpu")
    assert all(torch.equal(loaded.model.state_dict()[k], v) for k, v in state.items())
    assert fetched and loaded.spec.checkpoint_path == str(cached)
    marker = tmp_path / "marker"
    torch.save({"state_dict": state, "payload": _Marker(marker)}, cached)
    with pytest.raises(ModelError, match=r"holds Python objects other than weights and numbers \(io\.open\)"):
        load_model(cfg.stem, pretrained="release", model_config=str(cfg), device="cpu")
    assert not marker.exists()


# ------------------------------------------------------------------------------ a VALSE item of two million fields

_BIG_VALSE = """
import json, sys
from pathlib import Path
from crepe_utils.benchmarks.valse.data import read_piece
folder = Path(sys.argv[1])
item = {"dataset": "coco2017", "image_file": "000000000001.jpg", "caption": "There is a cat.", "foil": "There is a dog.",
        "mturk": {"caption": 3, "foil": 0, "other": 0}, **{f"x{i}": i for i in range(200_000)}}
(folder / "existence.json").write_text(json.dumps({"big": item, "twice": {**item, "caption": "A cat."}}))
items, problems = read_piece(folder / "existence.json", "existence")
print(len(items), problems)
"""


@pytest.mark.slow
def test_a_valse_item_of_200_000_fields_is_read(tmp_path):
    """A 4 MB file whose items carry 200,000 extra fields each is read (its fields counted once each, not each
    against every other: some 10^10 comparisons, far past the timeout, against about a second). In a child
    process with a timeout, so that a reading quadratic in the fields fails here instead of hanging the suite; no
    time is asserted."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", _BIG_VALSE, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "[]"]
