"""The notebook runner's promises to every page: whole tables, and no folder of the building machine.

Would notice: a kernel that keeps pandas' display limits (a long cell cut with "...", rows elided), an
executed notebook whose papermill record names the temporary file it was written to or an absolute
path, an output that prints this machine's project, data or temporary folder, and a rewrite that
touches a longer name sharing a prefix (``/work/p`` in ``/work/px``) or a folder further down.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import nbformat
import pytest

from crepe_utils.notebooks import execute
from crepe_utils.paths import PROJECT_ROOT, machine_roots, portable_text


def test_portable_text_replaces_whole_roots_only():
    roots = [("/work/p/data", "$CREPE_DATA"), ("/work/p", "."), ("/tmp", "$TMPDIR")]
    text = ("PosixPath('/work/p/data/crepe') /work/p/results /work/px /srv/tmp/x /tmp/y, "
            "&#x27;/work/p&#x27; /work/p. \"/tmp\"")
    assert portable_text(text, roots) == ("PosixPath('$CREPE_DATA/crepe') ./results /work/px /srv/tmp/x $TMPDIR/y, "
                                          "&#x27;.&#x27; .. \"$TMPDIR\"")


def test_machine_roots_name_the_data_folders_by_their_variables_most_specific_first(tmp_path, monkeypatch):
    data, coco = tmp_path / "data", tmp_path / "elsewhere" / "coco"
    monkeypatch.setenv("CREPE_DATA", str(data))
    monkeypatch.setenv("COCO_IMAGES", str(coco))
    roots = machine_roots()
    named = dict(roots)
    assert named[str(data.resolve())] == "$CREPE_DATA" and named[str(coco.resolve())] == "$COCO_IMAGES"
    assert named[str(PROJECT_ROOT)] == "."
    lengths = [len(path) for path, _ in roots]
    assert lengths == sorted(lengths, reverse=True)
    assert "/" not in named


@pytest.mark.slow
def test_an_executed_notebook_holds_whole_tables_and_no_path_of_this_machine(tmp_path, monkeypatch):
    data = tmp_path / "my-data"
    monkeypatch.setenv("CREPE_DATA", str(data))
    long = "a caption " * 20
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell("where = None")
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell, nbformat.v4.new_code_cell(
        "import os, pandas as pd\n"
        f"print(os.getcwd(), os.environ['CREPE_DATA'] + '/crepe', where)\n"
        f"pd.DataFrame({{'caption': [{long!r}] * 100, 'n': range(100)}})")]
    source = tmp_path / "in.ipynb"
    nbformat.write(nb, source)
    out = execute(source, tmp_path / "build" / "out.ipynb", {"where": str(tmp_path / "results")})
    executed = nbformat.read(out, as_version=4)
    printed = executed.cells[-1].outputs[0]["text"]
    under_tmp = (tmp_path / "results").resolve().relative_to(Path(tempfile.gettempdir()).resolve())
    assert printed.split() == [".", "$CREPE_DATA/crepe", f"$TMPDIR/{under_tmp.as_posix()}"]
    table = executed.cells[-1].outputs[1]["data"]["text/html"]
    assert table.count(long.strip()) == 100 and "..." not in table        # every row, every character
    record = executed.metadata["papermill"]
    assert record["output_path"].endswith("/build/out.ipynb") and ".part" not in record["output_path"]
    text = json.dumps(executed) + out.with_suffix(".html").read_text(encoding="utf-8")
    assert str(tmp_path) not in text and str(PROJECT_ROOT) not in text
