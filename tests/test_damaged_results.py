"""A damaged file in a results folder: named in one line and left out, never a traceback, never dropped
silently; the good results beside it are still used.

Would notice: a reader that crashes on a file that is not CSV, JSON or gzip (a pandas or gzip
traceback), one that drops the damaged result without a word, one that drops the good ones with it,
and ``make check`` exiting 0 while it left a result out.
"""
from __future__ import annotations

import gzip
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

import cli_runner
import helpers
from crepe_utils.benchmarks.crepe import analysis as tables
from crepe_utils.results import store
from crepe_utils.benchmarks.winoground import results as wr
from evaluated_fixture import write_evaluated_results

BINARY = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def _text_for_a_number(path):
    """The first row's r1 replaced by text."""
    lines = path.read_text().splitlines()
    fields = lines[1].split(",")
    fields[store.SUMMARY_COLUMNS.index("r1")] = "abc"
    path.write_text("\n".join([lines[0], ",".join(fields), *lines[2:]]) + "\n")


def _truncated_gzip(path):
    data = gzip.compress(np.random.default_rng(0).integers(0, 256, 60_000, dtype=np.uint8).tobytes())
    path.write_bytes(data[:len(data) // 2])


#: damage kind → (the file it hits, how)
DAMAGE = {
    "truncated per-query gzip": (store.PER_QUERY, _truncated_gzip),
    "summary that is not CSV": (store.SUMMARY, lambda p: p.write_text('model,"benchmark\nr1,2\n')),
    "manifest that is not JSON": (store.MANIFEST, lambda p: p.write_text('{"kind": "evaluated", "engine": ')),
    "binary blob named summary.csv": (store.SUMMARY, lambda p: p.write_bytes(BINARY)),
    "summary with text for a number": (store.SUMMARY, _text_for_a_number),
}
DAMAGED = ("cc12m-rn50", "productivity")
PRODUCTIVITY_MODELS = {"cc12m-rn50", "yfcc15m-rn50", "laion400m-vit-b-32"}     # evaluated_fixture's


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    return write_evaluated_results(tmp_path_factory.mktemp("evaluated"))


def _damaged_copy(evaluated, tmp_path, kind):
    copy = tmp_path / "results"
    shutil.copytree(evaluated, copy)
    name, damage = DAMAGE[kind]
    bad = copy.joinpath(*DAMAGED, name)
    damage(bad)
    return copy, bad


# text for a number reaches check through the same summary reader: load_results' test below covers it
@pytest.mark.parametrize("kind", [k for k in DAMAGE if k != "summary with text for a number"])
def test_check_names_the_damaged_file_and_uses_the_good_results(evaluated, tmp_path, kind):
    results, bad = _damaged_copy(evaluated, tmp_path, kind)
    done = cli_runner.run(["check", "--results-dir", results, "--tables-dir", tmp_path / "tables"])
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    named = [line for line in done.stderr.splitlines() if str(bad) in line]
    assert len(named) == 1 and (" cannot be read " in named[0] or " is not valid JSON " in named[0]), done.stderr
    assert "1 result file(s) cannot be read and are left out" in done.stderr
    checks = pd.read_csv(tmp_path / "tables" / "checks.csv")
    prod = checks[checks["claim"].str.match(r"Evaluated R@1 matches the paper: \S+ (atom|swap|negate) \d+$")]
    compared = {claim.split(": ")[1].split()[0] for claim in prod.loc[prod["status"] == "pass", "claim"]}
    # the per-query table is not what the claims read: that result's summary is still compared
    assert compared == (PRODUCTIVITY_MODELS if bad.name == store.PER_QUERY else PRODUCTIVITY_MODELS - {DAMAGED[0]})
    assert len(prod) == 6 * len(compared)


@pytest.mark.parametrize("kind", [k for k in DAMAGE if DAMAGE[k][0] != store.PER_QUERY])
def test_load_results_warns_naming_the_file_and_returns_the_good_rows(evaluated, tmp_path, kind):
    results, bad = _damaged_copy(evaluated, tmp_path, kind)
    with pytest.warns(store.UnreadableResultWarning) as caught:
        loaded = store.load_results(results)
    [warning] = caught
    assert str(warning.message).startswith(str(bad)) and "\n" not in str(warning.message)
    # 3 productivity results of 9 rows, 2 systematicity results of 6 rows: one productivity result left out
    assert sorted(map(tuple, loaded[["model", "benchmark"]].drop_duplicates().to_numpy())) == [
        ("cc12m-rn50", "systematicity"), ("laion400m-vit-b-32", "productivity"),
        ("laion400m-vit-b-32", "systematicity"), ("yfcc15m-rn50", "productivity")]
    assert len(loaded) == 2 * 9 + 2 * 6 and not loaded["r1"].isna().any()


@pytest.mark.parametrize("damage", ["truncated", "binary", "missing"])
def test_a_single_result_table_asked_for_is_an_error_naming_it(evaluated, tmp_path, damage):
    results = tmp_path / "results"
    shutil.copytree(evaluated, results)
    folder = results.joinpath(*DAMAGED)
    path = folder / store.PER_QUERY
    {"truncated": _truncated_gzip, "binary": lambda p: p.write_bytes(BINARY), "missing": lambda p: p.unlink()}[damage](path)
    with pytest.raises(store.ResultsError) as err:
        store.load_per_query(folder)
    assert str(err.value).startswith(f"{path} ") and "\n" not in str(err.value)


def _systematicity_with_queries(root, model, n=40):
    """A systematicity result whose per-query table holds n queries per (HN type, split), every one a hit."""
    summary, per_query = [], []
    for hn in ("atom", "comp"):
        for split in ("SC", "UC"):
            summary.append({"model": model, "benchmark": "systematicity", "train_data": "laion", "hn_type": hn,
                            "split": split, "n_queries": n, "r1": 100.0, "n_skipped": 0})
            per_query += [{"query_id": f"{hn}{split}{i}", "benchmark": "systematicity", "hn_type": hn,
                           "split": split, "rank": 1, "rank_optimistic": 1} for i in range(n)]
    return helpers.write_retrieval(store.result_dir(root, model, "systematicity", "laion"),
                              pd.DataFrame(summary).reindex(columns=store.SUMMARY_COLUMNS),
                              pd.DataFrame(per_query).reindex(columns=store.PER_QUERY_COLUMNS),
                              {"kind": "fixture", "engine": {"limit": None}})


def test_the_systematicity_table_leaves_out_a_result_whose_per_query_table_is_damaged(tmp_path):
    _systematicity_with_queries(tmp_path, "good-model")
    _truncated_gzip(_systematicity_with_queries(tmp_path, "bad-model") / store.PER_QUERY)
    with pytest.warns(store.UnreadableResultWarning) as caught:
        table = tables.systematicity_evaluated(store.load_results(tmp_path), n_boot=50)
    [warning] = caught                                  # one per result, not one per HN type
    assert str(warning.message).startswith(str(tmp_path / "bad-model" / "systematicity-laion" / store.PER_QUERY))
    assert sorted(map(tuple, table[["model", "hn_type"]].to_numpy())) == [("good-model", "atom"), ("good-model", "comp")]
    assert (table["delta"] == 0).all() and (table["n_SC"] == 40).all()


def test_winoground_readers_name_a_damaged_file(tmp_path):
    from crepe_utils.benchmarks.winoground.statistics import SUMMARY_COLUMNS
    row = {c: 1.0 for c in SUMMARY_COLUMNS} | {"breakdown": "all", "subset": "all", "metric": "text"}
    for model in ("good", "bad"):
        folder = tmp_path / model / "winoground"
        store.write_folder(folder, {"kind": "fixture", "scoring": "winoground", "model": {"key": model}}, lambda tmp: (
            pd.DataFrame([row]).to_csv(tmp / store.SUMMARY, index=False),
            (tmp / store.PER_QUERY).write_bytes(BINARY)))
    (tmp_path / "bad" / "winoground" / store.SUMMARY).write_bytes(BINARY)
    with pytest.warns(store.UnreadableResultWarning, match=str(tmp_path / "bad" / "winoground" / store.SUMMARY)):
        assert wr.load_results(tmp_path)["model"].tolist() == ["good"]
    with pytest.raises(store.ResultsError, match=store.PER_QUERY):
        wr.load_per_example(tmp_path / "good" / "winoground")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wr.verify_tables(tmp_path)
    assert sorted(str(w.message).split(" ")[0] for w in caught) == [
        str(tmp_path / m / "winoground" / store.PER_QUERY) for m in ("bad", "good")]


def test_the_systematicity_table_gives_each_split_its_score_under_random_ties(tmp_path):
    summary, per_query = [], []
    for hn in ("atom", "comp"):
        for split in ("SC", "UC"):
            summary.append({"model": "m", "benchmark": "systematicity", "train_data": "laion", "hn_type": hn,
                            "split": split, "n_queries": 40, "r1": 25.0, "n_skipped": 0})
            # 10 clear hits; 30 queries whose positive ties two negatives at the top (strict rank 3, optimistic 1)
            per_query += [{"query_id": f"{hn}{split}{i}", "benchmark": "systematicity", "hn_type": hn, "split": split,
                           "rank": 1 if i < 10 else 3, "rank_optimistic": 1} for i in range(40)]
    helpers.write_retrieval(store.result_dir(tmp_path, "m", "systematicity", "laion"),
                            pd.DataFrame(summary).reindex(columns=store.SUMMARY_COLUMNS),
                            pd.DataFrame(per_query).reindex(columns=store.PER_QUERY_COLUMNS),
                            {"kind": "fixture", "engine": {"limit": None}})
    table = tables.systematicity_evaluated(store.load_results(tmp_path), n_boot=50)
    expected = 100 * (10 + 30 * (1 / 3)) / 40                  # each tied query is first one time in three
    assert table["SC_random_ties"].tolist() == pytest.approx([expected] * 2)
    assert table["UC_random_ties"].tolist() == pytest.approx([expected] * 2)
