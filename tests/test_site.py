"""The website (`make docs`) and its browser check (`make docs-check`).

The site is built from synthetic executed notebooks (one figure each, made here) with the real
README, docs/ pages, figures/ and tables/, so a link without a target on the site fails here.
"""
from __future__ import annotations

import base64
import io
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from PIL import Image

from crepe_utils.site import build as site_build
from crepe_utils.site import check as site_check

ROOT = Path(__file__).resolve().parent.parent


def _png(colour) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (40, 30), colour).save(buf, format="PNG")
    return buf.getvalue()


def _executed_notebook(path: Path, title: str, png: bytes) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    figure = nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(png).decode(),
                                                          "text/plain": "<IPython.core.display.Image object>"},
                                    metadata={"image/png": {"figure": "f", "alt": f"{title} figure"}})
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\nSome text."),
                nbformat.v4.new_code_cell("reporting.save_figure(fig, 'f', figures_dir)", outputs=[figure],
                                          execution_count=1)]
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def built_once(tmp_path_factory):
    """(folder, {stem: png bytes}): ``folder/build`` holds synthetic executed notebooks, ``folder/site`` the site built
    from them and the real README, figures and tables; built once for this file's tests."""
    folder = tmp_path_factory.mktemp("site")
    build_dir = folder / "build"
    build_dir.mkdir()
    pngs = {}
    for i, (stem, label) in enumerate(site_build.NOTEBOOKS):
        pngs[stem] = _png((40 * i, 200 - 30 * i, 90))
        _executed_notebook(build_dir / f"{stem}.ipynb", f"{i + 1} · {label}", pngs[stem])
    site_build.build(build_dir, folder / "site", ROOT / "README.md", ROOT / "figures", ROOT / "tables")
    return folder, pngs


@pytest.fixture
def built(built_once, tmp_path):
    """(site folder, {stem: png bytes}): a copy of the site built once, with its build folder, in this test's
    ``tmp_path`` (a test may break or rebuild it)."""
    folder, pngs = built_once
    for part in ("build", "site"):
        shutil.copytree(folder / part, tmp_path / part)
    return tmp_path / "site", pngs


def _pages(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): p.read_text(encoding="utf-8") for p in site.rglob("*.html")}


def test_the_site_has_every_page_in_paper_order(built):
    site, _ = built
    pages = _pages(site)
    expected = {"index.html", "figures/index.html", "tables/index.html"}
    expected |= {f"{stem}.html" for stem, _ in site_build.NOTEBOOKS}
    expected |= {f"{stem}.html" for stem, _ in site_build.DOCS}
    assert set(pages) == expected
    nav = re.findall(r'<nav class="site-nav">(.*?)</nav>', pages["index.html"], flags=re.S)[0]
    order = re.findall(r'href="(\d\d_[a-z_]+)\.html"', nav)
    assert order == sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))     # every notebook, by number
    assert order[:3] == ["00_how_compositionality_is_evaluated", "01_benchmark_totals", "02_systematicity"]


def test_notebook_pages_embed_their_figures_and_load_nothing_from_outside(built):
    site, pngs = built
    pages = _pages(site)
    for stem, png in pngs.items():
        page = pages[f"{stem}.html"]
        assert f'src="data:image/png;base64,{base64.b64encode(png).decode()}"' in page, stem
        assert (site / "notebooks" / f"{stem}.ipynb").is_file()           # the download link's target
    for name, text in pages.items():
        assert "<script" not in text, f"{name} has a script"
        assert not re.search(r'(src|href)="(https?:)?//[^"]*\.(js|css|woff2?|ttf)"', text), name
        assert not re.search(r"@import|url\((?!data:)", text), f"{name} fetches a style sheet or font"


def test_the_landing_page_is_the_readme_with_links_into_the_site(built):
    site, _ = built
    index = (site / "index.html").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_heading = readme.splitlines()[0].lstrip("# ").strip()
    assert f"<h1>{first_heading}</h1>" in index
    assert 'href="02_systematicity.html"' in index and "notebooks/02_systematicity.ipynb" not in index
    for src in re.findall(r'<img src="([^"]+)"', index):
        assert (site / src).is_file(), src                                 # README figures are files of the site
    claims = (site / "claims.html").read_text(encoding="utf-8")
    detail_column = (ROOT / "tables" / "checks.md").read_text(encoding="utf-8").splitlines()[2].split("|")[6].strip()
    assert "<th>detail</th>" in claims and detail_column in claims          # the full table, not README's copy
    assert "make evaluate" in (site / "evaluating.html").read_text(encoding="utf-8")


def test_every_page_of_docs_is_a_page_of_the_site_in_the_navigation(built):
    site, _ = built
    pages = _pages(site)
    stems = {p.stem for p in (ROOT / "docs").glob("*.md")}
    assert stems == {stem for stem, _ in site_build.DOCS}, "docs/*.md and site_build.DOCS must name the same pages"
    nav = re.findall(r'<nav class="site-nav">(.*?)</nav>', pages["index.html"], flags=re.S)[0]
    for stem in stems:
        assert f'href="{stem}.html"' in nav, stem                         # docs-check visits what the nav links
        assert f'href="docs/{stem}.md"' not in pages["index.html"]          # README's links point into the site
    determinism = pages["determinism.html"]
    assert "Same machine, same settings" in determinism and "ATEN_CPU_CAPABILITY" in determinism
    assert "naive loop" in pages["performance.html"] and "QuickGELU" in pages["traps.html"]
    assert "manifest.json" in pages["results.html"] and "crepe_utils.engine.core" in pages["package.html"]
    claims = pages["claims.html"]
    assert 'href="tables/checks.md"' not in claims and 'href="claims.html"' in claims   # ../tables/checks.md


def test_a_docs_link_resolves_from_the_docs_folder():
    targets = site_build.link_targets({"figures/a.png"})
    body = '<a href="results.md#x">r</a><img src="../figures/a.png"><a href="../README.md">home</a>'
    assert site_build.rewrite_links(body, targets, "docs/x.md", base="docs") == (
        '<a href="results.html#x">r</a><img src="figures/a.png"><a href="index.html">home</a>')
    with pytest.raises(site_build.SiteError, match=r"'figures/a\.png'"):
        site_build.rewrite_links('<img src="figures/a.png">', targets, "docs/x.md", base="docs")


def test_notebook_pages_fold_their_code_behind_switches_that_need_no_script(built):
    site, _ = built
    pages = _pages(site)
    for stem, _ in site_build.NOTEBOOKS:
        page = pages[f"{stem}.html"]
        body = page[page.index("<body"):]
        # the page's switch precedes <main> (so that `#show-all-code:checked ~ main ...` reaches every cell)
        assert body.index('id="show-all-code"') < body.index("<main>") and 'class="code-all"' in body
        cells = re.findall(r'<div[^>]*class="jp-Cell jp-CodeCell.*?(?=<div class="jp-Cell-outputWrapper")', body, re.S)
        assert cells, stem
        for cell in cells:                 # each code cell: its checkbox, its label, then its input
            m = re.search(r'<input (?=[^>]*type="checkbox")(?=[^>]*class="code-switch")[^>]*id="(code-\d+)"[^>]*>\s*'
                          r'<label class="code-one" for="\1"></label>\s*<div class="jp-Cell-inputWrapper"', cell)
            assert m, cell[:300]
    css = site_build.css()
    assert ".site-notebook .jp-CodeCell > .jp-Cell-inputWrapper { display: none; }" in css
    assert "#show-all-code:checked ~ main .jp-CodeCell > .jp-Cell-inputWrapper" in css


def test_status_marks_are_drawn_by_the_style_and_tags_are_left_alone():
    marked = site_build.plain_marks('<td title="\u2705 pass">\u2705 pass</td><td>\u26a0\ufe0f paper</td>'
                                    '<td>\u274c x</td>')
    badge = '<span class="mark mark-{}" role="img" aria-label="{}"></span>'.format
    assert marked == (f'<td title="\u2705 pass">{badge("pass", "pass")} pass</td>'
                      f'<td>{badge("warn", "warn")} paper</td><td>{badge("fail", "fail")} x</td>')
    css = site_build.css()
    assert all(f".mark-{kind} " in css or f".mark-{kind}::" in css for kind in ("pass", "fail", "warn"))


def _rebuilt(tmp_path, stem: str, cells) -> Path:
    """The `built` fixture's site rebuilt with notebook ``stem`` holding ``cells``."""
    build_dir = tmp_path / "build"
    nb = nbformat.read(build_dir / f"{stem}.ipynb", as_version=4)
    nb.cells += cells
    nbformat.write(nb, build_dir / f"{stem}.ipynb")
    site = tmp_path / "site-rebuilt"
    site_build.build(build_dir, site, ROOT / "README.md", ROOT / "figures", ROOT / "tables")
    return site


def test_a_notebooks_links_and_marks_point_into_the_site(built, tmp_path):
    checks = nbformat.v4.new_output("execute_result", data={
        "text/html": "<table><tr><td>a claim</td><td>\u2705 pass</td></tr></table>", "text/plain": "t"},
        execution_count=2)
    site = _rebuilt(tmp_path, "00_how_compositionality_is_evaluated", [
        nbformat.v4.new_markdown_cell("Next: [productivity](03_productivity.ipynb), [traps](../docs/traps.md#x)."),
        nbformat.v4.new_code_cell("checks", outputs=[checks], execution_count=2)])
    page = (site / "00_how_compositionality_is_evaluated.html").read_text(encoding="utf-8")
    assert 'href="03_productivity.html"' in page and 'href="traps.html#x"' in page
    assert "\u2705" not in page and '<span class="mark mark-pass"' in page
    assert 'href="index.html"' in page and 'href="notebooks/00_how_compositionality_is_evaluated.ipynb"' in page
    with pytest.raises(site_build.SiteError, match=r"'nowhere\.ipynb'"):
        _rebuilt(tmp_path, "01_benchmark_totals", [nbformat.v4.new_markdown_cell("[x](nowhere.ipynb)")])


def test_a_missing_executed_notebook_is_a_clear_error(tmp_path):
    with pytest.raises(site_build.SiteError, match=r"00_how_compositionality_is_evaluated\.ipynb.*make all"):
        site_build.build(tmp_path, tmp_path / "site", ROOT / "README.md", ROOT / "figures", ROOT / "tables")


def test_a_link_without_a_target_stops_the_build(tmp_path, built):
    site, _ = built
    readme = tmp_path / "README.md"
    readme.write_text((ROOT / "README.md").read_text(encoding="utf-8") + "\nSee [the notes](docs/notes.md).\n")
    build_dir = tmp_path / "build"
    with pytest.raises(site_build.SiteError, match=r"README\.md.*'docs/notes\.md'"):
        site_build.build(build_dir, tmp_path / "site2", readme, ROOT / "figures", ROOT / "tables", ROOT / "docs")
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    (docs / "traps.md").write_text("# Traps\n\nSee [the notes](notes.md).\n")      # a page's link, from docs/
    with pytest.raises(site_build.SiteError, match=r"traps\.md.*'notes\.md'"):
        site_build.build(build_dir, tmp_path / "site3", ROOT / "README.md", ROOT / "figures", ROOT / "tables", docs)


def _break(page: Path, html: str) -> None:
    page.write_text(page.read_text(encoding="utf-8").replace("</main>", html + "</main>"), encoding="utf-8")


@pytest.fixture
def chromium():
    pytest.importorskip("playwright", reason="the docs extra (pip install '.[docs]') drives Chromium")
    try:
        return site_check.find_chromium()
    except site_check.BrowserError:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")


def _problems(reports) -> dict[str, list[str]]:
    return {r.page: r.problems for r in reports if r.problems}


@pytest.mark.slow
def test_docs_check_passes_a_good_site_and_names_each_kind_of_breakage(built, chromium, tmp_path):
    site, _ = built
    reports = site_check.check_site(site, chromium, tmp_path / "shots")
    assert _problems(reports) == {}
    by_page = {r.page: r for r in reports}
    assert by_page["02_systematicity.html"].loaded == 1
    assert by_page["index.html"].loaded == by_page["index.html"].images >= 4     # README's figures
    for shot in ("index.png", "00_how_compositionality_is_evaluated.png", "02_systematicity.png", "claims.png"):
        with Image.open(tmp_path / "shots" / shot) as img:
            assert img.width == site_check.VIEWPORT[0] and img.height >= site_check.VIEWPORT[1]

    broken = tmp_path / "broken"
    shutil.copytree(site, broken)
    (broken / "figures" / "systematicity_delta.png").unlink()                  # a README figure goes missing
    page = broken / "03_productivity.html"
    text = page.read_text(encoding="utf-8")
    text = re.sub(r'src="data:image/png;base64,[^"]+"', 'src="data:image/png;base64,AAAA"', text)   # a figure breaks
    text = text.replace("</main>", '<a href="04_missing.html">next</a><a href="claims.html#nowhere">x</a>'
                                   '<script src="https://cdn.example.org/lib.js"></script></main>')
    page.write_text(text, encoding="utf-8")
    _break(broken / "04_imagenet_correlation.html",
           "<table><tr><td>Largest drop is 12.57 points (the abstra...</td></tr></table>"
           "<p>read from /home/someone/data/crepe</p><p>\u2705 pass</p>")
    _break(broken / "05_winoground.html",
           "<style>.site-notebook .jp-CodeCell > .jp-Cell-inputWrapper { display: flex; }</style>")
    page = broken / "06_toy_world.html"
    page.write_text(re.sub(r"<img [^>]*>", "", page.read_text(encoding="utf-8")),
                    encoding="utf-8")
    executed = broken / "notebooks" / "07_blind_baselines.ipynb"
    nb = json.loads(executed.read_text(encoding="utf-8"))
    nb["metadata"]["papermill"] = {"output_path": "/tmp/build/.07_blind_baselines.ipynb.x1y2.part.ipynb"}
    executed.write_text(json.dumps(nb), encoding="utf-8")
    reports = site_check.check_site(broken, chromium)
    problems = _problems(reports)
    assert set(problems) == {"index.html", "figures/index.html", "03_productivity.html", "04_imagenet_correlation.html",
                             "05_winoground.html", "06_toy_world.html", "notebooks/07_blind_baselines.ipynb"}
    corr = "\n".join(problems["04_imagenet_correlation.html"])
    assert "a table cell cut with '...'" in corr and "names a path of the building machine: /home/someone" in corr
    assert "shows '\u2705' (U+2705)" in corr
    assert problems["05_winoground.html"] == ["shows 1 of 1 code inputs as it opens (code is folded away by default)"]
    assert "a notebook page without a figure" in problems["06_toy_world.html"]
    assert problems["notebooks/07_blind_baselines.ipynb"] == [
        "names a path of the building machine: /tmp/build/.07_blind_baselines.ipynb.x1y2.part.ipynb"]
    assert site_check.totals(reports) == {"cut cells": 1, "absolute paths": 2, "pages showing code": 1,
                                          "notebook pages without a figure": 2}       # 03's broke, 06's went
    assert any("image does not load" in p and "systematicity_delta.png" in p for p in problems["index.html"])
    prod = "\n".join(problems["03_productivity.html"])
    assert "image does not load" in prod and "shows 0 figures; its executed notebook holds 1" in prod
    assert "broken link: 04_missing.html" in prod and "broken anchor: claims.html#nowhere" in prod
    assert "requests something outside the site: https://cdn.example.org/lib.js" in prod
