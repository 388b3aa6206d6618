"""Every benchmark's results share one provenance writer and one results store."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from crepe_utils.evaluation import evaluate
from crepe_utils.errors import CrepeError
from crepe_utils.results import store
from crepe_utils.benchmarks.winoground import results as wr

#: Written out by hand: the top-level sections of each benchmark's manifest.
COMMON = {"schema_version", "kind", "label", "benchmark", "scoring", "groups", "caveat", "selection", "model", "data",
          "engine", "environment", "run"}
CREPE_SECTIONS = COMMON
WINOGROUND_SECTIONS = COMMON | {"scores", "ties", "tie_rule", "n_examples_skipped"}


@pytest.fixture(scope="module")
def both_manifests(tiny_model, synthetic_root, tmp_path_factory):
    from helpers import synthetic_winoground

    cfg, ckpt = tiny_model
    data_dir, image_dir = synthetic_root
    out = tmp_path_factory.mktemp("both")
    crepe = evaluate(cfg.stem, "productivity", model_config=str(cfg), pretrained=str(ckpt), complexities=(4,), data_dir=data_dir, image_dir=image_dir, out=out, cache_dir=False, kind="fixture", label="same label", device="cpu", progress=False, n_boot=20)
    wg = synthetic_winoground(tmp_path_factory.mktemp("wg") / "copy")
    summary = evaluate(cfg.stem, "winoground", model_config=str(cfg), pretrained=str(ckpt), data_dir=wg, out=out,
                       why_hard="none", device="cpu", n_boot=20, kind="fixture", label="same label", cache_dir=False,
                       progress=False)
    return out, store.load_manifest(crepe.attrs["result_dir"]), wr.load_manifest(summary.attrs["result_dir"])


def test_crepe_and_winoground_manifests_share_the_common_sections(both_manifests):
    _, crepe, wino = both_manifests
    assert set(crepe) == CREPE_SECTIONS and set(wino) == WINOGROUND_SECTIONS
    assert (crepe["kind"], crepe["label"], crepe["schema_version"]) == (wino["kind"], wino["label"],
                                                                       wino["schema_version"]) == ("fixture",
                                                                                                   "same label", 1)
    assert (crepe["benchmark"], wino["benchmark"]) == ("crepe-productivity", "winoground")
    assert (crepe["scoring"], wino["scoring"]) == ("retrieval", "winoground")
    assert crepe["model"] == wino["model"]                           # the same model, recorded the same way
    assert crepe["environment"].keys() == wino["environment"].keys()
    assert crepe["environment"]["packages"] == wino["environment"]["packages"]
    # the run section: when, how long, where, then each benchmark's own timings and cache use
    for manifest, own in ((crepe, "run_n_texts_encoded"), (wino, "seconds_images")):     # one engine
        assert {"created", "seconds", "host", own} <= set(manifest["run"])
    assert not any(k.startswith(("seconds", "run_")) for k in {**crepe["engine"], **wino["engine"]})


def test_one_results_folder_holds_both_and_each_reader_reads_its_own(both_manifests):
    out, _, _ = both_manifests
    crepe = store.load_results(out)
    wino = wr.load_results(out)
    assert set(crepe["benchmark"]) == {"productivity"} and set(crepe["label"]) == {"same label"}
    assert set(wino["kind"]) == {"fixture"} and len(wino) > 3 and wino["result_dir"].str.endswith("winoground").all()


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
    paths = sorted(copy.rglob(store.MANIFEST))
    assert len(paths) == 2
    for path in paths:
        path.write_bytes(content)
    # a damaged manifest cannot say which benchmark it holds: each reader leaves both out, naming each once
    for read, load_one in ((store.load_results, store.load_manifest), (wr.load_results, wr.load_manifest)):
        with pytest.warns(store.UnreadableResultWarning) as caught:
            assert read(copy).empty
        assert sorted(str(w.message).split(" ", 1)[0] for w in caught) == [str(p) for p in paths]
        for warning in caught:
            assert message in str(warning.message)
            assert str(warning.message).endswith("its result is left out") and "\n" not in str(warning.message)
        with pytest.raises(store.ResultsError, match=message) as err:   # asked for by itself, it is an error
            load_one(paths[0].parent)
        assert str(paths[0]) in str(err.value) and isinstance(err.value, CrepeError)


def test_an_older_manifest_without_schema_version_still_reads(both_manifests, tmp_path):
    import shutil
    out, _, _ = both_manifests
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    for path in copy.rglob(store.MANIFEST):
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
    [folder] = [p.parent for p in out.rglob(store.MANIFEST) if p.parent.name == "winoground"]
    shutil.copytree(folder, copy / "m" / ".winoground.tmp-123")          # a write in progress
    shutil.copytree(folder, copy / "n" / "winoground")
    (copy / "n" / "winoground" / store.SUMMARY).unlink()             # a manifest without its summary
    assert wr.load_results(copy).empty
