"""One folder per benchmark: nothing of the package outside a benchmark's folder names it, except the registry
(``crepe_utils/benchmarks/__init__.py``) and the modules named one by one in :data:`ALLOWED`, each with why; every
benchmark is named in at most :data:`LIMIT` modules outside its folder (the registry and one genuinely
cross-benchmark place), CREPE's experiment rebuilt on generated data and its worked lesson aside
(:data:`CREPE_OWN`); and everything a folder declares is found through the registry.

A benchmark's names are its ``--benchmark`` names and aliases, its folder's module path, the names of the
datasets it declares itself (not the image sets it shares) and its paper's short name; "crepe" alone is also the
project's name (``crepe_utils``, ``CREPE_DATA``), so CREPE is recognised by its protocols' names and its module
path instead. Would notice: a benchmark's name in a generic module (a branch on it, a hard-coded default, a help
text listing it, a cross-benchmark analysis that retypes a benchmark's facts instead of asking its folder), a
folder's notebook, dataset or claims topic that the registry does not reach.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from crepe_utils import benchmarks
from crepe_utils.commands import checks

PACKAGE = Path(__file__).resolve().parent.parent / "crepe_utils"
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
#: where a benchmark may be named outside its folder: path (a module, or a package ending in /) → the folders it may
#: name. No other place may, and none of these may name another folder.
ALLOWED = {
    "benchmarks/__init__.py": set(benchmarks.FOLDERS),    # the registry
    "across/cross.py": {"crepe", "winoground"},           # one model's numbers on both (notebook 05): cross-benchmark
    # CREPE's own, outside its folder only because they run the evaluation, which sits above the folders:
    # CREPE's two protocols rebuilt on a generated world: its files, training on them, running and drawing them
    **{f"toy/{m}.py": {"crepe"} for m in ("build", "pipeline", "train", "view")},
    "chapters/how_compositionality_is_evaluated.py": {"crepe"},   # notebook 00: CREPE's files worked through
}
#: the most modules outside its folder that may name a benchmark
LIMIT = 2
#: CREPE's experiment rebuilt and its lesson, not counted against :data:`LIMIT` (see :data:`ALLOWED`)
CREPE_OWN = tuple(p for p in ALLOWED if p.startswith(("toy/", "chapters/")))


def names_of(folder: str) -> set[str]:
    """The words that name the benchmark(s) of one folder."""
    package = benchmarks.folder(folder)
    words = {f"benchmarks.{folder}", f"benchmarks/{folder}"}
    for bench in package.BENCHMARKS:
        words |= {bench.name, *bench.aliases}
        words |= {d.name for d in bench.datasets if not d.images}
    if package.PAPER.lower() != "crepe":
        words.add(package.PAPER)
    words = {w for w in words if w.lower() != "crepe"}         # the project's name too: see the docstring
    if folder == "crepe":
        words |= {"systematicity", "productivity"}
    return words


def pattern(words: set[str]) -> re.Pattern:
    return re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
                      + r")(?![A-Za-z0-9_])", re.IGNORECASE)


def hits(folder: str, files: dict[str, str]) -> list[str]:
    """``path:line: word`` for each place outside ``folder`` (and the allowed places) that names it."""
    found = pattern(names_of(folder))
    out = []
    for rel, text in files.items():
        if rel.startswith(f"benchmarks/{folder}/") or any(rel.startswith(p) and folder in allowed
                                                              for p, allowed in ALLOWED.items()):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            match = found.search(line)
            if match:
                out.append(f"{rel}:{number}: {match.group(0)}")
    return out


def package_files() -> dict[str, str]:
    return {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}


def test_the_grep_sees_a_name_in_a_generic_module():
    files = {"engine/core.py": "x = 'sugarcrepe'\n", "benchmarks/sugarcrepe/data.py": "SugarCrepe\n",
             "across/cross.py": "SugarCrepe\n", "evaluation.py": "if bench == 'productivity':\n"}
    assert hits("sugarcrepe", files) == ["engine/core.py:1: sugarcrepe", "across/cross.py:1: SugarCrepe"]
    assert hits("crepe", files) == ["evaluation.py:1: productivity"]
    assert hits("crepe", {"toy/build.py": "productivity\n", "paths.py": "CREPE_DATA crepe_utils\n"}) == []
    assert hits("crepe", {"toy/new.py": "crepe-raw\n"}) == ["toy/new.py:1: crepe-raw"]    # allowed one by one


@pytest.mark.parametrize("folder", benchmarks.FOLDERS)
def test_no_module_outside_a_folder_names_its_benchmark(folder):
    assert hits(folder, package_files()) == []


def naming_modules(folder: str, files: dict[str, str]) -> list[str]:
    """The modules outside ``folder`` that name it (allowed or not)."""
    found = pattern(names_of(folder))
    return sorted(rel for rel, text in files.items()
                  if not rel.startswith(f"benchmarks/{folder}/") and found.search(text))


@pytest.mark.parametrize("folder", benchmarks.FOLDERS)
def test_a_benchmark_is_named_in_at_most_two_modules_outside_its_folder(folder):
    """The registry and one cross-benchmark place; the count is of modules, so a new analysis that names a
    benchmark instead of asking its folder fails here even where it would be allowed."""
    named = [m for m in naming_modules(folder, package_files())
             if not (folder == "crepe" and m.startswith(CREPE_OWN))]
    assert "benchmarks/__init__.py" in named
    assert len(named) <= LIMIT, named


def test_the_limit_counts_modules():
    files = {"benchmarks/__init__.py": "valse\n", "across/a.py": "VALSE\n", "across/b.py": "valse\n",
             "benchmarks/valse/x.py": "valse\n"}
    assert naming_modules("valse", files) == ["across/a.py", "across/b.py", "benchmarks/__init__.py"]


def test_every_notebook_a_benchmark_declares_exists():
    declared = {nb for b in benchmarks.BENCHMARKS.values() for nb in b.notebooks}
    assert declared <= {p.stem for p in NOTEBOOKS.glob("*.ipynb")}


def test_every_folder_is_reached_by_the_registry():
    on_disk = {p.parent.name for p in (PACKAGE / "benchmarks").glob("*/__init__.py")}
    assert on_disk == set(benchmarks.FOLDERS)
    declared = {d.name for b in benchmarks.BENCHMARKS.values() for d in b.datasets}
    assert declared == set(benchmarks.DATASETS.names)              # every dataset has its `make data-<name>`
    assert {name for name, _ in checks.make_check_order()} == set(checks.topics())


def test_every_notebook_is_a_site_page_with_its_own_label():
    from crepe_utils.site import build
    stems = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
    assert [stem for stem, _ in build.NOTEBOOKS] == stems
    for stem, label in build.NOTEBOOKS:
        meta = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))["metadata"]
        assert label == meta["companion"]["nav"], stem


def test_a_notebook_without_a_label_is_named_by_its_stem(tmp_path):
    from crepe_utils.chapters.pages import NotebookPage, notebook_pages
    (tmp_path / "11_new_benchmark.ipynb").write_text('{"cells": [], "metadata": {}}', encoding="utf-8")
    (tmp_path / "10_other.ipynb").write_text(
        '{"cells": [], "metadata": {"companion": {"nav": "Other", "question": "Why?"}}}', encoding="utf-8")
    assert notebook_pages(tmp_path) == (NotebookPage("10_other", "Other", "Other", "Why?"),
                                        NotebookPage("11_new_benchmark", "11 new benchmark", "11 new benchmark", ""))
