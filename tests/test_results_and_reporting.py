"""The results format, atomic writes and the table/figure writers."""
from __future__ import annotations

import os

import pandas as pd
import pytest

import helpers
from crepe_utils import atomic
from crepe_utils.analysis import reporting
from crepe_utils.results import store as results


def _summary():
    row = {c: 0 for c in results.SUMMARY_COLUMNS}
    row.update(model="m", benchmark="productivity", hn_type="atom", split="", complexity=4, tie_policy="pessimistic")
    return pd.DataFrame([row])


def _per_query():
    return pd.DataFrame([{c: 0 for c in results.PER_QUERY_COLUMNS}])


def test_write_result_validates_and_round_trips(tmp_path):
    with pytest.raises(ValueError, match="summary lacks"):
        helpers.write_retrieval(tmp_path / "x", _summary().drop(columns=["r1"]), _per_query(), {"kind": "fixture"})
    with pytest.raises(ValueError, match="kind"):
        helpers.write_retrieval(tmp_path / "x", _summary(), _per_query(), {"kind": "guess"})
    assert not (tmp_path / "x").exists() or not any((tmp_path / "x").iterdir())
    helpers.write_retrieval(tmp_path / "m" / "productivity", _summary(), _per_query(), {"kind": "fixture", "label": "t"})
    df = results.load_results(tmp_path)
    assert len(df) == 1 and df.loc[0, "kind"] == "fixture" and df.loc[0, "label"] == "t"


def test_summary_without_manifest_is_ignored(tmp_path):
    d = tmp_path / "m" / "productivity"
    d.mkdir(parents=True)
    _summary().to_csv(d / "summary.csv", index=False)
    assert results.load_results(tmp_path).empty
    assert results.load_results(tmp_path / "absent").empty
    assert "published numbers only" in results.describe_kind(results.load_results(None))


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "t.csv"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic.atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("crash")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


def _folder(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_failed_overwrite_leaves_the_old_result_whole(tmp_path):
    target = tmp_path / "m" / "productivity"
    helpers.write_retrieval(target, _summary(), _per_query(), {"kind": "fixture", "label": "old"})
    before = _folder(tmp_path)

    def frames():
        yield _per_query()
        raise RuntimeError("killed mid-table")
    with pytest.raises(RuntimeError):
        helpers.write_retrieval(target, _summary().assign(r1=50), frames(), {"kind": "fixture", "label": "new"})
    assert _folder(tmp_path) == before                        # nothing new, no temporary folder
    helpers.write_retrieval(target, _summary().assign(r1=50), _per_query(), {"kind": "fixture", "label": "new"})
    df = results.load_results(tmp_path)
    assert df["label"].tolist() == ["new"] and df["r1"].tolist() == [50]
    assert sorted(p.name for p in target.parent.iterdir()) == ["productivity"]


def test_hidden_and_abandoned_folders(tmp_path):
    import subprocess
    import sys
    target = tmp_path / "m" / "productivity"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    host = atomic._owner().split(".")[0]
    abandoned = target.parent / f".productivity.{host}.{dead}.abc123.partial"
    live = target.parent / f".productivity.{host}.{os.getpid()}.abc456.partial"
    for folder in (abandoned, live):     # complete-looking leftovers: never read as results
        helpers.write_retrieval(folder, _summary(), _per_query(), {"kind": "fixture", "label": "temporary"})
    assert results.load_results(tmp_path).empty
    helpers.write_retrieval(target, _summary(), _per_query(), {"kind": "fixture", "label": "real"})
    assert not abandoned.exists() and live.exists()           # only a dead process's leftovers go
    assert results.load_results(tmp_path)["label"].tolist() == ["real"]


def test_readers_never_pair_two_writes(tmp_path):
    """One thread replaces a result over and over, another reads it: every read is one write's."""
    import threading
    target = tmp_path / "m" / "productivity"
    helpers.write_retrieval(target, _summary().assign(r1=0), _per_query(), {"kind": "fixture", "label": "0"})
    stop, seen, errors = threading.Event(), [], []

    def write():
        for i in range(1, 80):
            helpers.write_retrieval(target, _summary().assign(r1=i), _per_query(), {"kind": "fixture", "label": str(i)})
        stop.set()

    def read():
        while not stop.is_set():
            try:
                df = results.load_results(tmp_path)
            except Exception as exc:  # noqa: BLE001 - collected and failed below
                errors.append(exc)
                return
            seen.extend(zip(df["label"], df["r1"]))
    threads = [threading.Thread(target=write), threading.Thread(target=read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and seen
    assert all(str(int(r1)) == label for label, r1 in seen)   # manifest and summary of the same write
    assert sorted(p.name for p in target.parent.iterdir()) == ["productivity"]


def test_markdown_and_latex_tables():
    df = pd.DataFrame({"name": ["a|b", "x_y & z%"], "value": [1.234, float("nan")]})
    md = reporting.markdown_table(df)
    assert "a\\|b" in md and "1.23" in md and "—" in md and "---:" in md
    tex = reporting.latex_table(df, caption="R@1 in %")
    assert r"x\_y \& z\%" in tex and r"\toprule" in tex and r"\caption{R@1 in \%}" in tex


def test_figures_are_byte_identical_across_runs(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    reporting.set_style()
    outs = []
    for run in ("a", "b"):
        fig, ax = plt.subplots()
        ax.plot([1, 2, 3], [3, 1, 2])
        paths = reporting.save_figure(fig, "f", tmp_path / run)
        plt.close(fig)
        outs.append([p.read_bytes() for p in paths])
    assert outs[0] == outs[1] and len(outs[0]) == 2
