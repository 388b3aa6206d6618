"""Bad input and faults a careful user meets, end to end through the command line (``cli.main``, as the
commands run it) or the Python API: each ends in the one line asserted here (or in the documented result),
with the exit status, and nothing half-written is left.

The classes (issue 25): a run left with nothing to score; a selected set with no scored query (kept as a
row with ``n_queries`` 0 and one warning line); a full disk (what was being written, how much, where);
damaged manifests (one schema); selection values (one declaration per benchmark); and the smaller ones
(``--limit 0``, an unknown model, JSON messages, missing images named by the items that use them,
Winoground's missing files, Ctrl-C, a stdout reader that leaves, odd paths and types).

Would notice: any of these ending in a traceback, in a second line, in exit status 0 when the run did not
do what was asked, in a result folder (or a temporary one) left behind, or in a set silently missing from
summary.csv.
"""
from __future__ import annotations

import errno
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cli_runner
import helpers
from crepe_utils import benchmarks, cli
from crepe_utils.benchmarks import SelectionError
from crepe_utils.benchmarks.crepe import queries as Q
from crepe_utils.errors import CrepeError, DataError, DiskFullError, UnwritableError
from crepe_utils.evaluation import evaluate
from crepe_utils.results import store
from crepe_utils.benchmarks.sugarcrepe import SUBSETS

ROOT = Path(__file__).resolve().parent.parent
PROD_FILE = "prod_vg_hard_negs_atom_complexity_4.csv"


# ------------------------------------------------------------------------------ how a user runs it

def _cli(capsys, *argv) -> tuple[int, list[str], str]:
    """(exit status, stderr lines, stdout) of one command, run as ``python -m crepe_utils`` runs it."""
    rc = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    return rc, [line for line in err.splitlines() if line.strip() and "%|" not in line], out    # not progress bars


def _model_args(tiny_model) -> list[str]:
    cfg, ckpt = tiny_model
    return ["--model", cfg.stem, "--pretrained", str(ckpt), "--model-config", str(cfg), "--device", "cpu",
            "--n-boot", "10", "--no-cache"]


def _evaluate_cli(capsys, tiny_model, benchmark, data_dir, out, *more, image_dir=None):
    argv = ["evaluate", "--benchmark", benchmark, *_model_args(tiny_model), "--data-dir", data_dir, "--out", out]
    argv += ["--image-dir", image_dir] if image_dir is not None else []
    return _cli(capsys, *argv, *more)


def _one_error(rc, lines, out_dir: Path | None = None) -> str:
    assert rc == 1 and len(lines) == 1 and lines[0].startswith("error: "), lines
    if out_dir is not None:
        assert not out_dir.exists() or not [p for p in out_dir.rglob("*") if p.is_file()], "partial output left"
    return lines[0]


def _no_temporaries(root: Path) -> None:
    assert [p for p in root.rglob(".*") if p.name.endswith((".partial", ".part"))] == []


def _api(tiny_model, benchmark, **kw):
    cfg, ckpt = tiny_model
    return evaluate(cfg.stem, benchmark, pretrained=str(ckpt), model_config=str(cfg), device="cpu", n_boot=10,
                    cache_dir=False, progress=False, kind="fixture", **kw)


def _summary(out: Path) -> pd.DataFrame:
    return pd.read_csv(next(out.rglob("summary.csv")), keep_default_na=False, na_values=[""])


# ------------------------------------------------------------------------------ fixtures in the released formats

@pytest.fixture
def crepe_root(tmp_path):
    return helpers.synthetic_crepe_root(tmp_path / "synthetic")


@pytest.fixture
def sugarcrepe(tmp_path):
    return helpers.sugarcrepe_root(tmp_path / "sc")


@pytest.fixture
def winoground(tmp_path):
    return helpers.synthetic_winoground(tmp_path / "wg")


def _header_only(path: Path) -> None:
    path.write_text(path.read_text().splitlines()[0] + "\n")


def _images_of(json_path: Path) -> set[str]:
    return {item["filename"] for item in json.loads(json_path.read_text()).values()}


# ------------------------------------------------------------------------------ 1. nothing to score

def test_every_image_missing_under_skip_is_one_line_naming_the_selection(crepe_root, tmp_path, capsys, tiny_model):
    data_dir, _ = crepe_root
    (tmp_path / "no-images").mkdir()
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "productivity", data_dir, tmp_path / "out", "--hn-types", "atom",
                                 "--complexities", "4", "--skip-missing-images", image_dir=tmp_path / "no-images")
    assert _one_error(rc, lines, tmp_path / "out") == (
        f"error: nothing to score: crepe-productivity (hn_types=atom, complexities=4) in {data_dir}: every one of its "
        f"6 queries was skipped (missing image: 6; images under {tmp_path / 'no-images'}). Run `make data-vg` "
        "(re-download), or point --image-dir/VG_IMAGES at the images, or run without --skip-missing-images / "
        "--skip-bad-rows to see which images or rows they are.")


def test_a_selected_file_with_a_header_and_no_rows_is_one_line_naming_it(crepe_root, tmp_path, capsys, tiny_model):
    data_dir, image_dir = crepe_root
    _header_only(next(data_dir.rglob(PROD_FILE)))
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "productivity", data_dir, tmp_path / "out", "--hn-types", "atom",
                                 "--complexities", "4", image_dir=image_dir)
    assert _one_error(rc, lines, tmp_path / "out") == (
        f"error: nothing to score: crepe-productivity (hn_types=atom, complexities=4) in {data_dir}: the selected "
        f"files hold no rows or items: {PROD_FILE} (0 read). Re-download them, or select other sets.")


def test_every_row_skipped_as_bad_is_one_line_counting_them(crepe_root, tmp_path, capsys, tiny_model):
    data_dir, image_dir = crepe_root
    path = next(data_dir.rglob(PROD_FILE))
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0]] + [line.replace(",4,", ",5,", 1) for line in lines[1:]]) + "\n")   # n ≠ 4
    rc, err, _ = _evaluate_cli(capsys, tiny_model, "productivity", data_dir, tmp_path / "out", "--hn-types", "atom",
                               "--complexities", "4", "--skip-bad-rows", image_dir=image_dir)
    assert _one_error(rc, err, tmp_path / "out") == (
        f"error: nothing to score: crepe-productivity (hn_types=atom, complexities=4) in {data_dir}: every one of "
        f"the 6 rows read was skipped (bad row: 6): {PROD_FILE} (6 read). Fix those rows, or select other sets.")


def test_sugarcrepe_with_no_image_under_skip_is_one_line(sugarcrepe, tmp_path, capsys, tiny_model):
    data_dir, _ = sugarcrepe
    (tmp_path / "coco").mkdir()
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "sugarcrepe", data_dir, tmp_path / "out", "--subsets", "add_att",
                                 "--skip-missing-images", image_dir=tmp_path / "coco")
    assert _one_error(rc, lines, tmp_path / "out").startswith(
        f"error: nothing to score: sugarcrepe (subsets=add_att) in {data_dir}: every one of its 2 queries was "
        f"skipped (missing image: 2; images under {tmp_path / 'coco'}). Run `make data-coco`")


def test_winoground_with_no_image_under_skip_is_one_line(winoground, tmp_path, capsys, tiny_model):
    for image in (winoground / "images").iterdir():
        image.unlink()
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "winoground", winoground, tmp_path / "out", "--skip-missing-images")
    assert _one_error(rc, lines, tmp_path / "out").startswith(
        f"error: nothing to score: winoground (the whole benchmark) in {winoground}: every one of its 16 queries "
        "was skipped (missing image: 16; images under ")


def test_only_all_negatives_with_no_shared_query_is_one_line(crepe_root, tmp_path, capsys, tiny_model):
    data_dir, image_dir = crepe_root        # the synthetic files share no query across HN types
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "productivity", data_dir, tmp_path / "out", "--hn-types", "all",
                                 "--complexities", "4", "5", image_dir=image_dir)
    assert _one_error(rc, lines, tmp_path / "out") == (
        f"error: crepe-productivity: no all-negatives set (hn_types 'all') can be formed from {data_dir}: no query "
        "(image, box and caption) of the selected complexities is in all three HN types' files (app. B.3); select "
        "atom, swap or negate instead")


# ------------------------------------------------------------------------------ 2. every selected set accounted for

UNSCORED_READ = ("warning: crepe-productivity: set hn_type=atom complexity=4 has no scored query (none of its queries was read): "
                 "its summary row has n_queries 0 and no metric")


def test_a_header_only_file_in_a_full_run_keeps_its_row_and_warns(crepe_root, tmp_path, capsys, tiny_model):
    data_dir, image_dir = crepe_root
    _header_only(next(data_dir.rglob(PROD_FILE)))
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "productivity", data_dir, tmp_path / "out", "--complexities", "4",
                                 "5", image_dir=image_dir)
    assert rc == 0 and lines == [UNSCORED_READ]
    summary = _summary(tmp_path / "out").set_index(["hn_type", "complexity"])
    assert len(summary) == 6                      # 3 HN types × 2 complexities: none vanished
    empty = summary.loc[("atom", 4)]
    assert (empty["n_queries"], empty["n_skipped"]) == (0, 0) and np.isnan(empty["r1"]) and np.isnan(empty["chance_r1"])
    assert (summary.drop(index=("atom", 4))["n_queries"] == 6).all()


def test_a_sugarcrepe_subset_without_images_keeps_its_row_and_skip_count(sugarcrepe, tmp_path, capsys, tiny_model):
    data_dir, image_dir = sugarcrepe
    for name in _images_of(data_dir / "add_att.json"):     # add_att's images; other subsets lose some pairs
        (image_dir / "val2017" / name).unlink()
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "sugarcrepe", data_dir, tmp_path / "out", "--skip-missing-images",
                                 image_dir=image_dir)
    assert rc == 0
    summary = _summary(tmp_path / "out").set_index("subset")
    assert list(summary.index) == list(SUBSETS)
    gone = summary.index[summary["n_queries"] == 0]
    assert "add_att" in gone and (summary.loc[gone, "n_skipped"] == 2).all()
    assert lines == [f"warning: sugarcrepe: set subset={s} has no scored query (all 2 of its queries were skipped): its "
                     "summary row has n_queries 0 and no metric" for s in gone]
    assert (summary["n_queries"] + summary["n_skipped"] == 2).all()      # every pair is scored or counted


def test_a_systematicity_split_without_rows_keeps_its_rows(crepe_root, tmp_path, tiny_model):
    data_dir, image_dir = crepe_root
    _header_only(next(data_dir.rglob("syst_vg_hard_negs_unseen_compounds_in_laion.csv")))
    with pytest.warns(UserWarning, match="set train_data=laion hn_type=atom split=UC has no scored query"):
        summary = _api(tiny_model, "systematicity", data_dir=data_dir, image_dir=image_dir, train_data="laion",
                       out=tmp_path / "out")
    counts = summary.set_index(["hn_type", "split"])["n_queries"]
    assert len(counts) == 6 and (counts.xs("UC", level="split") == 0).all() and (counts.xs("SC", level="split") > 0).all()


def test_winoground_subsets_all_skipped_keep_their_rows(winoground, tmp_path, tiny_model):
    (winoground / "images" / "ex_4_img_1.png").unlink()     # the only Morpheme-Level example
    with pytest.warns(UserWarning, match="subset secondary_tag = Morpheme-Level has no scored example"):
        summary = _api(tiny_model, "winoground", data_dir=winoground, out=tmp_path / "out", skip_missing_images=True)
    row = summary[(summary["breakdown"] == "secondary_tag") & (summary["subset"] == "Morpheme-Level")]
    assert len(row) == 3 and (row["n_examples"] == 0).all() and row["score"].isna().all()
    assert summary.loc[summary["breakdown"] == "all", "n_examples"].tolist() == [7, 7, 7]
    manifest = store.load_manifest(next((tmp_path / "out").rglob("manifest.json")).parent)
    assert manifest["n_examples_skipped"] == 1 and manifest["data"]["skipped_by_engine"] == {"missing image": 1}


def test_a_narrower_rerun_into_the_same_folder_names_the_sets_it_replaces(sugarcrepe, tmp_path, capsys, tiny_model):
    data_dir, image_dir = sugarcrepe
    out = tmp_path / "out"
    for subsets in (["add_att", "swap_obj", "replace_rel"], ["add_att", "swap_obj", "replace_rel"]):
        rc, lines, _ = _evaluate_cli(capsys, tiny_model, "sugarcrepe", data_dir, out, "--subsets", *subsets,
                                     image_dir=image_dir)
        assert rc == 0 and lines == []                 # the same sets again: a rerun, nothing to say
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "sugarcrepe", data_dir, out, "--subsets", "swap_obj",
                                 image_dir=image_dir)
    folder = store.result_dir(out, f"{tiny_model[0].stem}/{tiny_model[1].stem}", "sugarcrepe")
    assert rc == 0 and lines == [
        f"warning: sugarcrepe: {folder} held an earlier result with 2 set(s) this run did not select (subset=add_att, "
        "subset=replace_rel); it is replaced by this run's. Evaluate every set in one run, or pass another --out "
        "(out=) to keep both"]
    assert _summary(out)["subset"].tolist() == ["swap_obj"]


def test_a_rerun_that_drops_crepe_sets_names_them_by_their_fields(crepe_root, tmp_path, capsys, tiny_model):
    data_dir, image_dir = crepe_root
    out = tmp_path / "out"
    _evaluate_cli(capsys, tiny_model, "productivity", data_dir, out, "--hn-types", "atom", "swap", "--complexities",
                  "4", "5", "--no-all-negatives", image_dir=image_dir)
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "productivity", data_dir, out, "--hn-types", "atom", "negate",
                                 "--complexities", "4", "5", "--no-all-negatives", image_dir=image_dir)
    assert rc == 0 and len(lines) == 1 and lines[0].startswith("warning: crepe-productivity: "), lines
    assert " held an earlier result with 2 set(s) this run did not select (hn_type=swap complexity=4, hn_type=swap " \
           "complexity=5); it is replaced" in lines[0]


def test_a_winoground_rerun_on_fewer_rows_names_the_rows_it_drops(winoground, tmp_path, tiny_model):
    """Winoground's rows are (breakdown, subset, metric): those of the earlier result that the new one lacks."""
    out = tmp_path / "out"
    _api(tiny_model, "winoground", data_dir=winoground, out=out)
    folder = next(out.rglob("summary.csv")).parent
    cells = pd.read_csv(folder / store.SUMMARY, dtype=str, keep_default_na=False)
    kept = _summary(out).iloc[:3]
    expected = [" ".join(f"{k}={v}" for k, v in zip(("breakdown", "subset", "metric"), row) if v)
                for row in cells.iloc[3:][["breakdown", "subset", "metric"]].itertuples(index=False)]
    assert len(expected) > 0 and store.sets_replaced(folder, _tables_of(kept)) == expected
    assert store.sets_replaced(folder, _tables_of(_summary(out))) == []


def test_a_damaged_or_missing_earlier_result_replaces_silently(tmp_path):
    summary = pd.DataFrame({"subset": ["a", "b"], "n_queries": [1, 2]})
    assert store.sets_replaced(tmp_path / "none", _tables_of(summary, ("subset",))) == []
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / store.SUMMARY).write_bytes(b"\xff\xfe\x00garbage")
    assert store.sets_replaced(tmp_path / "d", _tables_of(summary.iloc[:1], ("subset",))) == []
    (tmp_path / "d" / store.SUMMARY).write_text("subset,n_queries\na,1\nb,2\n")
    assert store.sets_replaced(tmp_path / "d", _tables_of(summary.iloc[:1], ("subset",))) == ["subset=b"]
    assert store.sets_replaced(tmp_path / "d", _tables_of(summary.iloc[:1], ())) == []       # a rule without keys


def test_a_whole_float_and_a_missing_value_read_as_their_csv_cells(tmp_path):
    (tmp_path / store.SUMMARY).write_text("hn_type,complexity,n_queries\natom,4,1\natom,,1\nswap,5,1\n")
    new = pd.DataFrame({"hn_type": ["atom", "atom"], "complexity": [4.0, np.nan], "n_queries": [1, 1]})
    assert store.sets_replaced(tmp_path, _tables_of(new, ("hn_type", "complexity"))) == ["hn_type=swap complexity=5"]


def _tables_of(summary: pd.DataFrame, key=("breakdown", "subset", "metric")):
    from crepe_utils.protocol.tables import Tables
    return Tables(summary, list(summary.columns), [], [], None, "%.9g", row_key=tuple(key))


# ------------------------------------------------------------------------------ 3. a full disk

def _full(*_, **__):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_writing_the_result_names_the_result_folder(sugarcrepe, tmp_path, capsys, tiny_model, monkeypatch):
    data_dir, image_dir = sugarcrepe

    class FullGzip(store.gzip.GzipFile):
        def write(self, data):
            _full()
    monkeypatch.setattr(store.gzip, "GzipFile", FullGzip)
    out = tmp_path / "out"
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "sugarcrepe", data_dir, out, "--subsets", "add_att",
                                 image_dir=image_dir)
    line = _one_error(rc, lines, out)
    folder = store.result_dir(out, f"{tiny_model[0].stem}/{tiny_model[1].stem}", "sugarcrepe")
    assert line.startswith(f"error: no space left on the device writing the result folder ({folder}; ")
    assert " were written when the disk filled; " in line and " free there). Free some space, or pass another " \
        "--out (out=); nothing half-written is left" in line
    _no_temporaries(out)


def test_a_full_disk_writing_the_embedding_cache_names_it_and_its_size(sugarcrepe, tmp_path, capsys, tiny_model,
                                                                      monkeypatch):
    data_dir, image_dir = sugarcrepe
    from crepe_utils.engine import embedding_cache
    monkeypatch.setattr(embedding_cache.np, "savez", _full)
    cfg, ckpt = tiny_model
    argv = ["evaluate", "--benchmark", "sugarcrepe", "--model", cfg.stem, "--pretrained", ckpt, "--model-config", cfg,
            "--device", "cpu", "--n-boot", "10", "--data-dir", data_dir, "--image-dir", image_dir, "--subsets",
            "add_att", "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache"]
    line = _one_error(*_cli(capsys, *argv)[:2], tmp_path / "out")
    assert line.startswith("error: no space left on the device writing the embedding cache (")
    assert "; it needs about 256 B; " in line          # 2 crops × 32 float32 dimensions
    assert line.endswith("free there). Free some space, or pass --no-cache (cache_dir=False) or another --cache-dir "
                         "(CREPE_CACHE); nothing half-written is left")
    assert [p for p in (tmp_path / "cache").rglob("shard-*")] == []
    _no_temporaries(tmp_path / "cache")


def test_a_results_folder_under_a_file_is_one_line_naming_the_file(sugarcrepe, tmp_path, capsys, tiny_model):
    data_dir, image_dir = sugarcrepe
    (tmp_path / "taken").write_text("a file")
    out = tmp_path / "taken" / "out"
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "sugarcrepe", data_dir, out, "--subsets", "add_att",
                                 image_dir=image_dir)
    folder = store.result_dir(out, f"{tiny_model[0].stem}/{tiny_model[1].stem}", "sugarcrepe")
    assert _one_error(rc, lines) == (
        f"error: cannot write the result folder ({folder}): {tmp_path / 'taken'} is a file, not a folder. Move that "
        "file away, or pass another --out (out=); nothing half-written is left")
    assert (tmp_path / "taken").read_text() == "a file"


def test_a_file_where_the_result_folder_goes_is_named_and_kept(sugarcrepe, tmp_path, capsys, tiny_model):
    data_dir, image_dir = sugarcrepe
    out = tmp_path / "out"
    folder = store.result_dir(out, f"{tiny_model[0].stem}/{tiny_model[1].stem}", "sugarcrepe")
    folder.parent.mkdir(parents=True)
    folder.write_text("mine")
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "sugarcrepe", data_dir, out, "--subsets", "add_att",
                                 image_dir=image_dir)
    assert _one_error(rc, lines) == (
        f"error: cannot write the result folder ({folder}): {folder} is a file, not a folder. Move that file away, "
        "or pass another --out (out=); nothing half-written is left")
    assert folder.read_text() == "mine" and sorted(p.name for p in folder.parent.iterdir()) == [folder.name]


def test_a_folder_without_write_permission_is_one_line(sugarcrepe, tmp_path, capsys, tiny_model, monkeypatch):
    data_dir, image_dir = sugarcrepe
    from crepe_utils import atomic

    def refused(*args, dir=None, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(dir))
    monkeypatch.setattr(atomic.tempfile, "mkdtemp", refused)         # as a folder we may not write into does
    out = tmp_path / "out"
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "sugarcrepe", data_dir, out, "--subsets", "add_att",
                                 image_dir=image_dir)
    folder = store.result_dir(out, f"{tiny_model[0].stem}/{tiny_model[1].stem}", "sugarcrepe")
    assert _one_error(rc, lines) == (
        f"error: cannot write the result folder ({folder}): permission denied on {folder.parent}. Make it writable, "
        "or pass another --out (out=); nothing half-written is left")


def test_a_download_folder_under_a_file_is_one_line(tmp_path, capsys):
    (tmp_path / "taken").write_text("a file")
    rc, lines, _ = _cli(capsys, "download", "valse", "--dest", tmp_path / "taken" / "valse")
    assert _one_error(rc, lines) == (
        f"error: cannot download into {tmp_path / 'taken' / 'valse'}: {tmp_path / 'taken'} is a file, not a folder. "
        "Pass a folder as --dest (dest=); a missing one is created")


def test_an_error_that_is_not_a_place_to_write_passes_through(tmp_path):
    """Only a named cause becomes an UnwritableError: an EEXIST on a folder, or another errno, is left as raised."""
    from crepe_utils.atomic import atomic_path
    for raised in (FileExistsError(errno.EEXIST, "File exists", str(tmp_path)), OSError(errno.EBADF, "Bad fd")):
        with pytest.raises(OSError) as caught:
            with atomic_path(tmp_path / "x.txt"):
                raise raised
        assert caught.value is raised and not isinstance(caught.value, CrepeError)
    assert [p.name for p in tmp_path.iterdir()] == []


def test_unwritable_is_an_oserror_with_its_errno():
    err = UnwritableError("cannot write x", errno.ENOTDIR)
    assert isinstance(err, OSError) and isinstance(err, CrepeError) and err.errno == errno.ENOTDIR
    import pickle
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == "cannot write x" and again.errno == errno.ENOTDIR


def test_disk_full_is_an_oserror_with_its_errno():
    err = DiskFullError("no space left on the device writing x")
    assert isinstance(err, OSError) and isinstance(err, CrepeError) and err.errno == errno.ENOSPC
    assert str(err) == "no space left on the device writing x"
    import pickle
    assert str(pickle.loads(pickle.dumps(err))) == str(err)


# ------------------------------------------------------------------------------ 4. manifests: one schema

GOOD_MANIFEST = {"kind": "fixture", "model": {"key": "m", "display": "M"}, "scoring": "retrieval",
                 "benchmark": "crepe-productivity", "engine": {"limit": None}}
DAMAGED_MANIFESTS = {
    "empty object": ({}, "lacks the key 'kind' (a string)"),
    "model null": ({**GOOD_MANIFEST, "model": None}, "has 'model' = null, expected an object"),
    "model without key": ({**GOOD_MANIFEST, "model": {"display": "M"}}, "lacks the key 'model.key' (a string)"),
    "unknown kind": ({**GOOD_MANIFEST, "kind": "guess"}, "has 'kind' = \"guess\", expected one of evaluated, toy, "
                                                         "fixture"),
    "unknown scoring rule": ({**GOOD_MANIFEST, "scoring": "rank"}, "has 'scoring' = \"rank\", expected one of "
                                                                   "retrieval, raw-retrieval, winoground"),
    "unknown benchmark": ({**GOOD_MANIFEST, "benchmark": "vqa"}, "has 'benchmark' = \"vqa\", expected one of"),
    "limit as text": ({**GOOD_MANIFEST, "engine": {"limit": "5"}}, "has 'engine.limit' = \"5\", expected an "
                                                                  "integer or null"),
    "kind as a number": ({**GOOD_MANIFEST, "kind": 3}, "has 'kind' = 3, expected a string"),
    "schema version true": ({**GOOD_MANIFEST, "schema_version": True}, "has 'schema_version' = true, expected an "
                                                                      "integer"),
    "a list": ([GOOD_MANIFEST], "holds a JSON list, not a manifest (an object)"),
}


def _results_with(tmp_path, manifest) -> Path:
    """A results folder with one good result (model m) and one whose manifest is ``manifest`` (model bad)."""
    root = tmp_path / "results"
    summary = pd.DataFrame([{"model": "m", "benchmark": "productivity", "hn_type": "atom", "complexity": 4,
                             "n_queries": 10, "r1": 50.0, "n_skipped": 0}]).reindex(columns=store.SUMMARY_COLUMNS)
    per_query = pd.DataFrame(columns=store.PER_QUERY_COLUMNS)
    for model in ("m", "bad"):
        helpers.write_retrieval(store.result_dir(root, model, "productivity"), summary.assign(model=model), per_query,
                                GOOD_MANIFEST)
    (store.result_dir(root, "bad", "productivity") / store.MANIFEST).write_text(json.dumps(manifest))
    return root


@pytest.mark.parametrize("case", list(DAMAGED_MANIFESTS))
def test_a_damaged_manifest_is_named_with_its_key_and_left_out(tmp_path, case):
    manifest, expected = DAMAGED_MANIFESTS[case]
    root = _results_with(tmp_path, manifest)
    path = store.result_dir(root, "bad", "productivity") / store.MANIFEST
    with pytest.warns(store.UnreadableResultWarning) as caught:
        loaded = store.load_results(root)
    assert [str(w.message) for w in caught] == [
        f"{path} {expected}{str(caught[0].message).split(expected, 1)[1]}"]
    assert str(caught[0].message).endswith("; the result is damaged: evaluate again or delete its folder; its result "
                                           "is left out")
    assert loaded["model"].tolist() == ["m"]                            # the good result stays
    with pytest.raises(store.ResultsError, match=f"^{path} "):
        store.load_manifest(path.parent)


def test_check_counts_a_damaged_manifest_and_exits_non_zero(tmp_path):
    root = _results_with(tmp_path, {**GOOD_MANIFEST, "model": None})
    done = cli_runner.run(["check", "--results-dir", root, "--tables-dir", tmp_path / "tables"])
    assert done.returncode == 1 and "Traceback" not in done.stderr
    path = store.result_dir(root, "bad", "productivity") / store.MANIFEST
    assert "1 result file(s) cannot be read and are left out:" in done.stderr
    assert (f"  - {path} has 'model' = null, expected an object; the result is damaged: evaluate again or delete "
            "its folder; its result is left out") in done.stderr.splitlines()


def test_the_schema_knows_the_rules_and_benchmarks_the_registry_declares():
    assert set(store.DECLARED_VALUES["scoring"]) == {"retrieval", "raw-retrieval", "winoground"}
    assert set(store.DECLARED_VALUES["benchmark"]) == {"crepe-systematicity", "crepe-productivity", "crepe-raw",
                                                       "winoground", "sugarcrepe", "valse", "systematicity",
                                                       "productivity"}
    with pytest.raises(KeyError):
        store.declare_values("colour", ("red",))


def test_a_manifest_that_does_not_fit_the_schema_is_not_written(tmp_path):
    summary = pd.DataFrame(columns=store.SUMMARY_COLUMNS)
    with pytest.raises(store.ResultsError, match="has 'label' = 5, expected a string"):
        helpers.write_retrieval(tmp_path / "x", summary, pd.DataFrame(columns=store.PER_QUERY_COLUMNS),
                                {"kind": "fixture", "label": 5})
    assert not (tmp_path / "x").exists()


# ------------------------------------------------------------------------------ 5. selection values: one declaration

SELECTION_CASES = [
    ("productivity", ["--complexities", "99"], "crepe-productivity: complexities (--complexities) 99 is not allowed; "
                                               "choose from 4, 5, 6, 7, 8, 9, 10, 11, 12"),
    ("productivity", ["--hn-types", "bogus"], "crepe-productivity: hn_types (--hn-types) 'bogus' is not allowed; "
                                              "choose from atom, swap, negate, all"),
    ("systematicity", ["--hn-types", "swap", "--train-data", "laion"],
     "crepe-systematicity: hn_types (--hn-types) 'swap' is not allowed; choose from atom, comp, combined"),
    ("systematicity", ["--train-data", "../etc"], "crepe-systematicity: train_data (--train-data) '../etc' is not a "
                                                  "name: use letters, digits, '-', '_' and '.'"),
    ("sugarcrepe", ["--subsets", "add_attribute"], "sugarcrepe: subsets (--subsets) 'add_attribute' is not allowed; "
                                                   "choose from add_att, add_obj, replace_att, replace_obj, "
                                                   "replace_rel, swap_att, swap_obj"),
    ("winoground", ["--layout", "tar"], "winoground: layout (--layout) 'tar' is not allowed; choose from folder, zip, "
                                        "parquet"),
    ("winoground", ["--grouping", "random"], "winoground: grouping (--grouping) 'random' is not allowed; choose from "
                                             "contiguous, interleaved"),
    ("productivity", ["--complexities", "4", "4"], "crepe-productivity: complexities (--complexities) names 4 more "
                                                   "than once; give each value once"),
    ("productivity", ["--subsets", "add_att"], "benchmark crepe-productivity has no subsets to select (it selects by: "
                                               "hn_types, complexities, all_negatives)"),
]


@pytest.mark.parametrize("benchmark, options, expected", SELECTION_CASES)
def test_a_selection_value_is_checked_at_the_command_line(benchmark, options, expected, tmp_path, capsys, tiny_model):
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, benchmark, tmp_path / "nowhere", tmp_path / "out", *options)
    assert _one_error(rc, lines, tmp_path / "out") == f"error: {expected}"


@pytest.mark.parametrize("benchmark, selection, expected", [
    ("productivity", {"complexities": (99,)}, "complexities (--complexities) 99 is not allowed; choose from 4, 5"),
    ("productivity", {"complexities": ("4",)}, "complexities (--complexities) '4' is a str, not an integer"),
    ("productivity", {"complexities": (4.0,)}, "complexities (--complexities) 4.0 is a float, not an integer"),
    ("productivity", {"hn_types": ()}, "hn_types (--hn-types) is empty and so selects nothing"),
    ("productivity", {"all_negatives": "yes"}, "all_negatives (--no-all-negatives) 'yes' is a str, not True or False"),
    ("productivity", {"hn_types": ("all",), "all_negatives": False}, "hn_types 'all' asks for the all-negatives sets"),
    ("sugarcrepe", {"subsets": ("swap_att", "bogus")}, "subsets (--subsets) 'bogus' is not allowed"),
    ("winoground", {"layout": "tar"}, "layout (--layout) 'tar' is not allowed"),
])
def test_a_selection_value_is_checked_through_the_python_api(benchmark, selection, expected, tmp_path, crepe_root):
    with pytest.raises(SelectionError) as info:       # before the (unknown) model is looked up
        evaluate("no-such-model", benchmark, data_dir=crepe_root[0], image_dir=crepe_root[1], out=tmp_path / "out",
                 **selection)
    name = benchmarks.get(benchmark).name
    assert isinstance(info.value, CrepeError) and str(info.value).startswith(f"{name}: {expected}")
    assert not (tmp_path / "out").exists()


def test_one_value_for_a_field_of_several_is_a_selection_of_one(crepe_root, tmp_path, tiny_model):
    data_dir, image_dir = crepe_root
    summary = _api(tiny_model, "productivity", data_dir=data_dir, image_dir=image_dir, out=tmp_path / "out",
                   hn_types="atom", complexities=4)
    assert summary[["hn_type", "complexity"]].values.tolist() == [["atom", 4]]


def test_the_options_list_the_values_of_the_benchmarks_declarations(capsys):
    with pytest.raises(SystemExit):
        cli.main(["evaluate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(" + " ".join(map(str, Q.COMPLEXITIES)) + ")" in text           # CREPE's nine complexities, as declared
    assert "(" + " ".join(SUBSETS) + ")" in text
    for bench in benchmarks.BENCHMARKS.values():
        for option in bench.options:
            assert f"{bench.name}: {option.help}" in text, (bench.name, option.name)
            assert not option.choices or " ".join(map(str, option.choices)) in text, (bench.name, option.name)


# ------------------------------------------------------------------------------ the smaller ones

def test_limit_0_is_refused(tmp_path, capsys, tiny_model):
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "sugarcrepe", tmp_path / "nowhere", tmp_path / "out", "--limit", "0")
    assert _one_error(rc, lines, tmp_path / "out") == (
        "error: evaluation setting limit=0 (--limit) is not allowed: it must be an integer >= 1 or None")


def test_an_unknown_model_points_to_the_models_command(tmp_path, capsys):
    rc, lines, _ = _cli(capsys, "evaluate", "--benchmark", "sugarcrepe", "--model", "laion400m-vit-b-3", "--device",
                        "cpu", "--out", tmp_path / "out")
    assert _one_error(rc, lines, tmp_path / "out") == (
        "error: unknown model 'laion400m-vit-b-3': not a registry key (`python -m crepe_utils models` lists them) nor "
        "an open_clip architecture (open_clip.list_models()). Did you mean 'laion400m-vit-b-32' or "
        "'laion400m-vit-b-16' or 'laion400m-vit-l-14'? For a custom architecture pass --model-config JSON")


def test_an_unterminated_sugarcrepe_string_reads_once(sugarcrepe, tmp_path, capsys, tiny_model):
    data_dir, image_dir = sugarcrepe
    (data_dir / "add_att.json").write_text('{"0": {"filename": "000000000100.jpg", "caption": "a red')
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "sugarcrepe", data_dir, tmp_path / "out", image_dir=image_dir)
    assert _one_error(rc, lines, tmp_path / "out") == (
        f"error: {data_dir / 'add_att.json'}: not valid JSON (Unterminated string starting at line 1, column 51). "
        "Run `make data-sugarcrepe` (or `python -m crepe_utils download sugarcrepe --dest DIR`) to fetch the released "
        "file.")


def test_a_missing_coco_image_names_the_items_using_it(sugarcrepe, tmp_path, capsys, tiny_model):
    data_dir, image_dir = sugarcrepe
    (image_dir / "val2017" / "000000000100.jpg").unlink()
    users = [f"{s}.json:{k}" for s in SUBSETS for k, item in json.loads((data_dir / f"{s}.json").read_text()).items()
             if item["filename"] == "000000000100.jpg"]
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "sugarcrepe", data_dir, tmp_path / "out", image_dir=image_dir)
    shown = ", ".join(users[:3]) + (f" and {len(users) - 3} more" if len(users) > 3 else "")
    assert _one_error(rc, lines, tmp_path / "out").startswith(
        f"error: 1 image(s) missing under {image_dir} (first: 000000000100.jpg (used by {shown})). Run `make data-coco`")


def test_a_missing_winoground_file_is_skipped_like_an_unreadable_one(winoground, tmp_path, capsys, tiny_model):
    (winoground / "images" / "ex_1_img_0.png").unlink()
    (winoground / "images" / "ex_2_img_1.png").write_bytes(b"not an image")
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "winoground", winoground, tmp_path / "refused")
    assert _one_error(rc, lines, tmp_path / "refused") == (
        f"error: 1 image(s) missing from {winoground / 'images'}: ex_1_img_0 (example 1, examples.jsonl:4). Expected "
        "files named <image_0/image_1 field>.png, e.g. ex_0_img_0.png. Re-download the images, or pass "
        "--skip-missing-images to evaluate without their examples (they are counted).")
    rc, lines, out = _evaluate_cli(capsys, tiny_model, "winoground", winoground, tmp_path / "out", "--skip-missing-images")
    assert rc == 0 and all(line.startswith("warning: winoground: subset ") for line in lines)
    manifest = store.load_manifest(next((tmp_path / "out").rglob("manifest.json")).parent)
    assert manifest["data"]["skipped_by_engine"] == {"missing image": 1, "unreadable image": 1}
    assert manifest["n_examples_skipped"] == 2


def test_ctrl_c_is_one_line_exit_130_and_leaves_nothing(sugarcrepe, tmp_path, capsys, tiny_model, monkeypatch):
    data_dir, image_dir = sugarcrepe
    from crepe_utils.engine import core

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(core, "encode_crop_groups", interrupted)
    rc = cli.main(["evaluate", "--benchmark", "sugarcrepe", *_model_args(tiny_model), "--data-dir", str(data_dir),
                   "--image-dir", str(image_dir), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 130 and err.splitlines() == [
        "interrupted: nothing half-written is left (each output is written whole or not at all); run the command "
        "again to resume"]
    assert not (tmp_path / "out").exists()


def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path):
    done = subprocess.run(f"'{sys.executable}' -m crepe_utils models | head -1", shell=True, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.count("\n") == 1 and done.stderr == ""


def test_a_huge_box_is_a_bad_row_not_a_crash(tmp_path, capsys, tiny_model):
    good = dict(image_id="7", caption="a red dog on a table", x=1.0, y=2.0, width=30.0, height=20.0,
                hard_negs=["a blue dog", "a red cat", "a red dog under", "a red dog on a chair", "a dog"])
    rows = [good, {**good, "image_id": "8", "x": 1e308, "width": 1e308},
            {**good, "image_id": "8", "x": -1e9, "y": -1e9, "width": 2e9, "height": 2e9}]
    data_dir = tmp_path / "crepe"
    helpers.write_productivity_csv(data_dir / "prod_hard_negatives" / "atom" / PROD_FILE, rows, 4)
    helpers.make_vg_root(tmp_path / "images", ["7", "8"])
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "productivity", data_dir, tmp_path / "out", "--hn-types", "atom",
                                 "--complexities", "4", image_dir=tmp_path / "images")
    assert f"{PROD_FILE}:3: box (x=1e+308, y=2, width=1e+308, height=20) ends beyond the largest number" in \
        _one_error(rc, lines, tmp_path / "out")
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "productivity", data_dir, tmp_path / "out", "--hn-types", "atom",
                                 "--complexities", "4", "--skip-bad-rows", image_dir=tmp_path / "images")
    assert rc == 0 and lines == []
    row = _summary(tmp_path / "out").iloc[0]
    assert (row["n_queries"], row["n_skipped"]) == (1, 2)       # the overflowing row and the uncroppable box
    manifest = store.load_manifest(next((tmp_path / "out").rglob("manifest.json")).parent)
    assert manifest["data"]["skipped_by_engine"] == {"crop not preprocessable": 1}


@pytest.mark.parametrize("field", ["caption", "negative_caption"])
def test_a_lone_surrogate_in_a_sugarcrepe_caption_is_a_bad_item(sugarcrepe, tmp_path, capsys, tiny_model, field):
    data_dir, image_dir = sugarcrepe
    items = json.loads((data_dir / "swap_obj.json").read_text())
    items["1"][field] = "a dog \ud800 on a mat"
    (data_dir / "swap_obj.json").write_text(json.dumps(items))       # ensure_ascii: the escape \ud800, as a file holds it
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "sugarcrepe", data_dir, tmp_path / "out", image_dir=image_dir)
    assert (f"swap_obj.json[1]: '{field}' holds '\\ud800' at character 6, a lone surrogate that UTF-8 cannot encode"
            in _one_error(rc, lines, tmp_path / "out"))


def test_odd_unicode_and_a_lone_surrogate_in_winoground_captions(winoground, tmp_path, capsys, tiny_model):
    path = winoground / "examples.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["caption_0"] = "a dog \u202e\u200b\U0001F436 caf\u0065\u0301 \u4e2d\u6587"   # RTL mark, zero width, emoji
    lines[0] = json.dumps(first)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rc, err, _ = _evaluate_cli(capsys, tiny_model, "winoground", winoground, tmp_path / "out")
    assert rc == 0 and err == []
    per_example = pd.read_csv(next((tmp_path / "out").rglob("per_query.csv.gz")))
    assert first["caption_0"] in per_example["caption_0"].tolist()          # written and read back as it was
    first["caption_0"] = "a \ud800 dog"
    lines[0] = json.dumps(first)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rc, err, _ = _evaluate_cli(capsys, tiny_model, "winoground", winoground, tmp_path / "out2")
    assert "examples.jsonl:1: field 'caption_0' holds '\\ud800' at character 2" in _one_error(rc, err, tmp_path / "out2")


def test_paths_that_are_files_or_not_folders(tmp_path, capsys, sugarcrepe, tiny_model):
    data_dir, image_dir = sugarcrepe
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    rc, lines, _ = _cli(capsys, "check", "--results-dir", a_file, "--tables-dir", tmp_path / "tables")
    assert _one_error(rc, lines) == f"error: results folder {a_file} is a file, not a folder: pass the folder that " \
                                    "holds the results"
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "sugarcrepe", data_dir, a_file, "--subsets", "add_att",
                                 image_dir=image_dir)
    assert _one_error(rc, lines).endswith(f": {a_file} is a file, not a folder. Move that file away, or pass another "
                                          "--out (out=); nothing half-written is left")
    with pytest.raises(store.ResultsError, match="a results folder is a path"):
        store.load_results(5)


@pytest.mark.parametrize("keywords, expected", [
    ({"model": 123}, "evaluate(): model must be a name (python -m crepe_utils models) or a loaded model, got int"),
    ({"out": None}, "evaluate(): out=None is not allowed: it must be a string or a path"),
    ({"data_dir": 5}, "evaluate(): data_dir=5 is not allowed: it must be a string or a path or None"),
    ({"label": 5}, "evaluate(): label=5 is not allowed: it must be a string"),
    ({"run": "results"}, "evaluate(): run= must be a Run (or None), got str; its fields can also be passed as keywords"),
    ({"selection": ["add_att"]}, "evaluate(): selection= must be a Selection or a mapping of option → value (or None), "
                                 "got list"),
    ({"kind": "guess"}, "kind must be one of evaluated, toy, fixture (--kind), got 'guess'"),
])
def test_wrong_types_through_the_python_api_are_user_errors(keywords, expected, tmp_path):
    model = keywords.pop("model", "no-such-model")
    with pytest.raises(CrepeError) as info:
        evaluate(model, "sugarcrepe", **{"out": tmp_path / "out", **keywords})
    assert str(info.value).startswith(expected)


def test_an_unlistable_crepe_folder_is_named(crepe_root, tmp_path, monkeypatch):
    data_dir, _ = crepe_root
    hidden = data_dir / "prod_hard_negatives" / "swap"
    real = os.scandir

    def scandir(path="."):
        if Path(path) == hidden:
            raise PermissionError(errno.EACCES, "Permission denied", str(hidden))
        return real(path)
    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(DataError, match=f"^cannot list the folder {hidden} \\(Permission denied\\): the CREPE files"):
        Q.find_file(data_dir, "prod_vg_hard_negs_swap_complexity_4.csv")


@pytest.mark.parametrize("content, expected", [
    ("{not json", "is not a readable notebook (JSONDecodeError: Expecting property name"),
    ("[1, 2]", "is not a readable notebook (ValueError: a JSON list without a list of 'cells')"),
    ("", "is not a readable notebook (JSONDecodeError: Expecting value"),
])
def test_the_notebook_runner_refuses_a_file_that_is_not_a_notebook(tmp_path, content, expected):
    source = tmp_path / "nb.ipynb"
    source.write_text(content)
    done = cli_runner.run([source, tmp_path / "out.ipynb", "--no-html"], module="crepe_utils.notebooks")
    assert done.returncode == 1 and done.stderr.splitlines() == [f"error: {source} {expected}"] or \
        (done.returncode == 1 and done.stderr.startswith(f"error: {source} {expected}")
         and len(done.stderr.splitlines()) == 1), done.stderr
    assert not (tmp_path / "out.ipynb").exists()


def test_the_notebook_runner_refuses_an_undeclared_parameter(tmp_path):
    import nbformat
    cell = nbformat.v4.new_code_cell("results_dir = 'results'", metadata={"tags": ["parameters"]})
    source = tmp_path / "nb.ipynb"
    kernel = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    nbformat.write(nbformat.v4.new_notebook(cells=[cell], metadata=kernel), source)
    done = cli_runner.run([source, tmp_path / "out.ipynb", "--no-html", "-p", "result_dir", "x"],
                          module="crepe_utils.notebooks")
    assert done.returncode == 1 and done.stderr.splitlines() == [
        f"error: {source} has no parameter 'result_dir'; its parameters are: results_dir"]
    assert not (tmp_path / "out.ipynb").exists()


# ------------------------------------------------------------------------------ more faults, found by trying

def test_the_toy_command_refuses_a_count_below_1(tmp_path, capsys):
    rc, lines, _ = _cli(capsys, "toy", "--out", tmp_path / "toy", "--steps", "-5", "--quiet")
    assert _one_error(rc, lines, tmp_path / "toy") == "error: --steps -5 is not allowed: it must be at least 1"


def test_winoground_refuses_a_setting_it_would_ignore(winoground, tmp_path, capsys, tiny_model):
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "winoground", winoground, tmp_path / "out", "--limit", "2")
    assert _one_error(rc, lines, tmp_path / "out") == (
        "error: winoground does not apply limit (--limit) (its scoring rule 'winoground' and reader take: n_boot); "
        "leave it at its default")


#: (benchmark, extra flags, its dataset, the variable that moves its folder): every benchmark, one behaviour
MISSING_FOLDER = [("productivity", (), "crepe", "CREPE_DATA to the folder holding crepe/"),
                  ("systematicity", ("--train-data", "laion"), "crepe", "CREPE_DATA to the folder holding crepe/"),
                  ("sugarcrepe", (), "sugarcrepe", "SUGARCREPE_DATA"), ("valse", (), "valse", "VALSE_DATA"),
                  ("winoground", (), "winoground", "WINOGROUND_DATA")]


@pytest.mark.parametrize("benchmark, more, dataset, variable", MISSING_FOLDER)
@pytest.mark.parametrize("state", ["missing", "a file"])
def test_a_missing_data_folder_is_one_line_naming_it_and_what_brings_it(benchmark, more, dataset, variable, state,
                                                                       tmp_path, capsys, tiny_model):
    path = tmp_path / "data"
    if state == "a file":
        path.write_text("x")
    why = "is a file, not a folder" if state == "a file" else "does not exist"
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, benchmark, path, tmp_path / "out", *more)
    line = _one_error(rc, lines, tmp_path / "out")
    assert line.startswith(f"error: {dataset} data folder {path} {why}: `make data-{dataset}` fetches it (or "
                           f"`python -m crepe_utils download {dataset} --dest DIR`"), line
    assert line.endswith(f"then pass --data-dir DIR or set {variable}"), line


def test_the_default_data_folder_missing_is_the_same_line(tmp_path, capsys, tiny_model, monkeypatch):
    monkeypatch.setenv("CREPE_DATA", str(tmp_path / "root"))
    monkeypatch.delenv("SUGARCREPE_DATA", raising=False)
    cfg, ckpt = tiny_model
    rc, lines, _ = _cli(capsys, "evaluate", "--benchmark", "sugarcrepe", *_model_args(tiny_model),
                        "--out", tmp_path / "out")
    assert _one_error(rc, lines).startswith(f"error: sugarcrepe data folder {tmp_path / 'root' / 'sugarcrepe'} "
                                            "does not exist: `make data-sugarcrepe` fetches it")


def test_a_manifest_without_its_summary_is_named_not_dropped(tmp_path):
    root = _results_with(tmp_path, GOOD_MANIFEST)
    summary = store.result_dir(root, "bad", "productivity") / store.SUMMARY
    summary.unlink()                                     # a partial copy of a results folder
    with pytest.warns(store.UnreadableResultWarning) as caught:
        loaded = store.load_results(root)
    assert [str(w.message) for w in caught] == [
        f"{summary} does not exist beside its manifest: the result is incomplete; evaluate again or delete its folder; "
        "its result is left out"]
    assert loaded["model"].tolist() == ["m"]


@pytest.mark.slow
def test_a_path_of_bytes_that_are_not_utf8_is_printed_escaped(sugarcrepe, tmp_path, tiny_model):
    data_dir, image_dir = sugarcrepe
    out = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9"))
    cfg, ckpt = tiny_model
    done = subprocess.run([sys.executable, "-m", "crepe_utils", "evaluate", "--benchmark", "sugarcrepe", "--model",
                           cfg.stem, "--pretrained", str(ckpt), "--model-config", str(cfg), "--device", "cpu",
                           "--n-boot", "10", "--no-cache", "--data-dir", str(data_dir), "--image-dir", str(image_dir),
                           "--subsets", "add_att", "--out", out], capture_output=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8:strict"})
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert done.stdout.splitlines()[-1].startswith(b"results: " + bytes(tmp_path) + b"/caf\\udce9/")
    assert next(out.rglob("summary.csv")).is_file()


def test_symlink_loops_in_the_data_and_image_folders_are_harmless(crepe_root, winoground, tmp_path, tiny_model):
    data_dir, image_dir = crepe_root
    (data_dir / "prod_hard_negatives" / "up").symlink_to("..")
    (image_dir / "VG_100K" / "loop").symlink_to("loop")
    (winoground / "images" / "up").symlink_to("..")
    (winoground / "images" / "ex_9_img_0.png").symlink_to("nowhere.png")    # dangling, of no example
    prod = _api(tiny_model, "productivity", data_dir=data_dir, image_dir=image_dir, complexities=(4,),
                out=tmp_path / "out")
    assert (prod["n_queries"] == 6).all() and (prod["n_skipped"] == 0).all()
    wino = _api(tiny_model, "winoground", data_dir=winoground, out=tmp_path / "out")
    assert wino.loc[wino["breakdown"] == "all", "n_examples"].tolist() == [8, 8, 8]


def test_results_inside_the_data_folder_change_nothing_read(crepe_root, tmp_path, tiny_model):
    data_dir, image_dir = crepe_root
    first = _api(tiny_model, "productivity", data_dir=data_dir, image_dir=image_dir, complexities=(4,), out=data_dir)
    again = _api(tiny_model, "productivity", data_dir=data_dir, image_dir=image_dir, complexities=(4,), out=data_dir)
    pd.testing.assert_frame_equal(first, again)
    assert next(data_dir.rglob("summary.csv")).is_file() and sum(first["n_queries"]) == 18


def test_a_checkpoint_that_is_a_folder_is_named(sugarcrepe, tmp_path, capsys, tiny_model):
    cfg, _ = tiny_model
    (tmp_path / "weights").mkdir()
    rc, lines, _ = _cli(capsys, "evaluate", "--benchmark", "sugarcrepe", "--model", cfg.stem, "--model-config", cfg,
                        "--pretrained", tmp_path / "weights", "--device", "cpu", "--out", tmp_path / "out",
                        "--data-dir", sugarcrepe[0], "--image-dir", sugarcrepe[1])
    assert _one_error(rc, lines, tmp_path / "out") == f"error: checkpoint {tmp_path / 'weights'} is not a file"


@pytest.mark.parametrize("benchmark, victim, expected", [
    ("productivity", "crepe/prod_hard_negatives/atom/" + PROD_FILE, f"{PROD_FILE}: missing column(s) ['image_id'"),
    ("sugarcrepe", "sc/sugarcrepe/add_att.json", "add_att.json: not valid JSON (Expecting value at line 1, column 1)"),
    ("winoground", "wg/examples.jsonl", "examples.jsonl holds no examples. Re-download it."),
    ("winoground", "wg/images/ex_3_img_0.png", "1 image(s) could not be read: images/ex_3_img_0.png: "
                                               "UnidentifiedImageError"),
])
def test_a_zero_byte_file_is_one_line_naming_it(benchmark, victim, expected, tmp_path, capsys, tiny_model):
    crepe_dir, vg = helpers.synthetic_crepe_root(tmp_path / "synthetic")
    shutil.move(crepe_dir, tmp_path / "crepe")
    sc_dir, coco = helpers.sugarcrepe_root(tmp_path / "sc")
    helpers.synthetic_winoground(tmp_path / "wg")
    (tmp_path / victim).write_bytes(b"")
    data, images = {"productivity": (tmp_path / "crepe", vg), "sugarcrepe": (sc_dir, coco),
                    "winoground": (tmp_path / "wg", None)}[benchmark]
    more = ["--complexities", "4"] if benchmark == "productivity" else []
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, benchmark, data, tmp_path / "out", *more, image_dir=images)
    assert expected in _one_error(rc, lines, tmp_path / "out")


def test_an_abandoned_temporary_result_is_ignored_and_cleared(sugarcrepe, tmp_path, tiny_model):
    """A run killed while writing leaves a hidden sibling: readers skip it, the next write removes it."""
    import socket
    data_dir, image_dir = sugarcrepe
    out = tmp_path / "out"
    folder = store.result_dir(out, f"{tiny_model[0].stem}/{tiny_model[1].stem}", "sugarcrepe")
    host = "".join(c if c.isalnum() or c in "-_" else "_" for c in socket.gethostname())
    stale = folder.parent / f".sugarcrepe.{host}.999999999.abc.partial"
    stale.mkdir(parents=True)
    (stale / "summary.csv").write_text("model,benchmark\nhalf,written\n")
    assert store.load_results(out).empty
    _api(tiny_model, "sugarcrepe", data_dir=data_dir, image_dir=image_dir, subsets=("add_att",), out=out)
    assert not stale.exists() and store.load_results(out)["subset"].tolist() == ["add_att"]


def test_a_full_disk_during_a_download_names_it_and_keeps_the_part_file(tmp_path, monkeypatch):
    from crepe_utils.download import transport
    from loopback import LoopbackServer, prod_archive
    real_open = open

    class FullFile:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, block):
            self.fh.write(block[:10])
            _full()

    monkeypatch.setattr(transport, "open", lambda path, mode: FullFile(real_open(path, mode)), raising=False)
    data = prod_archive(tmp_path / "csv")
    server = LoopbackServer()
    try:
        from test_download import make_downloader, prod_entry
        entry = prod_entry(server, data)
        with pytest.raises(DiskFullError) as err:
            make_downloader([entry], tmp_path / "dest").run()
    finally:
        server.stop()
    part = tmp_path / "dest" / "prod_hard_negatives.zip.part"
    assert str(err.value).startswith(f"no space left on the device writing the download of prod_hard_negatives.zip "
                                     f"({part}; it needs about ")
    assert str(err.value).endswith("free there). Free some space, or pass --dest on a larger disk; the partial download "
                                   "(*.part) is kept and resumed by the next run")
    assert part.stat().st_size == 10 and not (tmp_path / "dest" / "prod_hard_negatives.zip").exists()


def test_a_failed_job_of_evaluate_paper_is_one_line(monkeypatch, capsys):
    from crepe_utils.runs import scheduling

    def fails(*args, **kwargs):
        raise DataError("a.csv: 2 malformed row(s):\n  a.csv:3: bad\n  a.csv:4: bad")
    monkeypatch.setattr(scheduling, "evaluate", fails)
    monkeypatch.setattr(scheduling._Runner, "_load", lambda self, key: object())
    job = scheduling.Job("cc12m-rn50", "productivity")
    outcome = scheduling._Runner("cpu", {})(job, io.StringIO())
    assert outcome.errors == ["error: cc12m-rn50: a.csv: 2 malformed row(s): a.csv:3: bad; a.csv:4: bad"]


def test_winoground_with_one_image_of_every_example_missing_is_one_line(winoground, tmp_path, capsys, tiny_model):
    for image in (winoground / "images").glob("ex_*_img_1.png"):
        image.unlink()
    rc, lines, _ = _evaluate_cli(capsys, tiny_model, "winoground", winoground, tmp_path / "out", "--skip-missing-images")
    assert _one_error(rc, lines, tmp_path / "out").startswith(
        f"error: nothing to score: winoground (the whole benchmark) in {winoground}: 8 of its 16 queries were skipped, "
        "leaving no example with both images (missing image: 8; images under ")


def test_a_worker_of_evaluate_paper_stops_quietly_on_ctrl_c(capsys):
    """Ctrl-C reaches every process of the group: a worker ends without a traceback; the parent prints the line."""
    from crepe_utils.runs import scheduling

    class Interrupted:
        def send(self, message):
            pass

        def recv(self):
            raise KeyboardInterrupt
    scheduling._worker(0, "cpu", {}, Interrupted())
    out, err = capsys.readouterr()
    assert out == err == ""


def test_validate_on_a_data_folder_that_is_a_file_says_so(tmp_path, capsys):
    path = tmp_path / "a-file"
    path.write_text("x")
    rc, lines, _ = _cli(capsys, "validate", "--data-dir", path, "--no-tokens")
    assert _one_error(rc, lines) == f"error: data folder {path} is a file, not a folder (run `make data` or pass --data-dir)"
