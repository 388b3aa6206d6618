"""CREPE and Winoground results share one provenance writer and one results store."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from crepe_utils import winoground
from crepe_utils.crepe import evaluation
from crepe_utils.errors import CrepeError
from crepe_utils.results import store
from crepe_utils.winoground import results as wr

#: Written out by hand: the top-level sections of each benchmark's manifest.
CREPE_SECTIONS = {"schema_version", "kind", "label", "benchmark", "caveat", "model", "data", "engine",
                  "environment", "run"}
WINOGROUND_SECTIONS = {"schema_version", "kind", "label", "benchmark", "model", "data", "engine", "scores",
                       "ties", "tie_rule", "environment", "run"}


@pytest.fixture(scope="module")
def both_manifests(tiny_model, synthetic_root, tmp_path_factory):
    from test_winoground import _image_blobs, make_winoground

    cfg, ckpt = tiny_model
    data_dir, image_dir = synthetic_root
    out = tmp_path_factory.mktemp("both")
    evaluation.evaluate(cfg.stem, str(ckpt), str(cfg), benchmark="productivity", complexities=(4,),
                        data_dir=data_dir, image_dir=image_dir, out=out, cache_dir=False, kind="fixture",
                        label="same label", device="cpu", progress=False, n_boot=20)
    wg = make_winoground(tmp_path_factory.mktemp("wg"), "folder", _image_blobs(tmp_path_factory.mktemp("blobs")))
    folder, _ = winoground.evaluate_to_folder(cfg.stem, str(ckpt), str(cfg), out=out, data_dir=wg, why_hard="none",
                                              device="cpu", n_boot=20, kind="fixture", label="same label")
    [crepe] = out.rglob("manifest.json")
    return out, json.loads(crepe.read_text()), wr.load_manifest(folder)


def test_crepe_and_winoground_manifests_share_the_common_sections(both_manifests):
    _, crepe, wino = both_manifests
    assert set(crepe) == CREPE_SECTIONS and set(wino) == WINOGROUND_SECTIONS
    assert (crepe["kind"], crepe["label"], crepe["schema_version"]) == (wino["kind"], wino["label"],
                                                                       wino["schema_version"]) == ("fixture",
                                                                                                   "same label", 1)
    assert (crepe["benchmark"], wino["benchmark"]) == ("productivity", "winoground")
    assert crepe["model"] == wino["model"]                           # the same model, recorded the same way
    assert crepe["environment"].keys() == wino["environment"].keys()
    assert crepe["environment"]["packages"] == wino["environment"]["packages"]
    # the run section: when, how long, where, then each benchmark's own timings and cache use
    for manifest, own in ((crepe, "run_n_texts_encoded"), (wino, "seconds_images")):
        assert {"created", "seconds", "host", own} <= set(manifest["run"])
    assert not any(k.startswith(("seconds", "run_")) for k in {**crepe["engine"], **wino["engine"]})


def test_one_results_folder_holds_both_and_each_reader_reads_its_own(both_manifests):
    out, _, _ = both_manifests
    crepe = store.load_results(out)
    wino = wr.load_results(out)
    assert set(crepe["benchmark"]) == {"productivity"} and set(crepe["label"]) == {"same label"}
    assert set(wino["kind"]) == {"fixture"} and len(wino) > 3 and wino["result_dir"].str.endswith("winoground").all()


def _manifest_paths(root):
    return [*root.rglob(store.MANIFEST), *root.rglob(wr.MANIFEST_FILE)]


@pytest.mark.parametrize("content, message", [
    (b'{"kind": "fixture", ', "is not valid JSON"),
    (b'\x89PNG\r\n\x1a\n\x00\xff', "is not valid JSON"),
    (b'["kind", "fixture"]', "holds a JSON list, not a manifest"),
    (b'{"kind": "fixture", "schema_version": 2}', "has results schema 2; this crepe_utils reads schema 1 and older"),
])
def test_both_readers_leave_out_a_damaged_or_newer_manifest_naming_it(both_manifests, tmp_path, content, message):
    import shutil
    out, _, _ = both_manifests
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    for path in _manifest_paths(copy):
        path.write_bytes(content)
    for read, load_one, name in ((store.load_results, store.load_manifest, store.MANIFEST),
                                 (wr.load_results, wr.load_manifest, wr.MANIFEST_FILE)):
        [path] = copy.rglob(name)
        with pytest.warns(store.UnreadableResultWarning) as caught:
            assert read(copy).empty                     # the only result of each kind is left out ...
        [warning] = caught                                # ... with one warning naming it
        assert str(warning.message).startswith(f"{path} {message}")
        assert str(warning.message).endswith("its result is left out") and "\n" not in str(warning.message)
        with pytest.raises(store.ResultsError, match=message) as err:   # asked for by itself, it is an error
            load_one(path.parent)
        assert str(path) in str(err.value) and isinstance(err.value, CrepeError)


def test_an_older_manifest_without_schema_version_still_reads(both_manifests, tmp_path):
    import shutil
    out, _, _ = both_manifests
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    for path in _manifest_paths(copy):
        manifest = json.loads(path.read_text())
        del manifest["schema_version"]
        path.write_text(json.dumps(manifest))
    pd.testing.assert_frame_equal(store.load_results(copy).drop(columns="result_dir"),
                                  store.load_results(out).drop(columns="result_dir"))
    assert len(wr.load_results(copy)) == len(wr.load_results(out))


def test_winoground_results_being_written_are_not_read(both_manifests, tmp_path):
    import shutil
    out, _, _ = both_manifests
    copy = tmp_path / "copy"
    [folder] = [p.parent for p in out.rglob(wr.MANIFEST_FILE)]
    shutil.copytree(folder, copy / "m" / ".winoground.tmp-123")          # a write in progress
    shutil.copytree(folder, copy / "n" / "winoground")
    (copy / "n" / "winoground" / wr.SUMMARY_FILE).unlink()             # a manifest without its summary
    assert wr.load_results(copy).empty
