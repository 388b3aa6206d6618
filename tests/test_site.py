"""The website (`make docs`) and its browser check (`make docs-check`).

The site is built from synthetic executed notebooks (one figure each, made here) with the real
README, docs/ pages, figures/ and tables/, so a link without a target on the site fails here.
"""
from __future__ import annotations

import base64
import io
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


@pytest.fixture
def built(tmp_path):
    """(site folder, {stem: png bytes}) from synthetic executed notebooks and the real README, figures, tables."""
    build_dir = tmp_path / "build"
    build_dir.mkdir()
    pngs = {}
    for i, (stem, label) in enumerate(site_build.NOTEBOOKS):
        pngs[stem] = _png((40 * i, 200 - 30 * i, 90))
        _executed_notebook(build_dir / f"{stem}.ipynb", f"{i + 1} · {label}", pngs[stem])
    site = tmp_path / "site"
    site_build.build(build_dir, site, ROOT / "README.md", ROOT / "figures", ROOT / "tables")
    return site, pngs


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
    assert order == ["01_benchmark_totals", "02_systematicity", "03_productivity", "04_imagenet_correlation",
                     "05_winoground", "06_toy_world", "07_blind_baselines", "08_sugarcrepe", "10_field"]


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


def test_a_missing_executed_notebook_is_a_clear_error(tmp_path):
    with pytest.raises(site_build.SiteError, match=r"05_winoground\.ipynb.*make all"):
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


@pytest.fixture
def chromium():
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
    for shot in ("index.png", "02_systematicity.png"):
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
    problems = _problems(site_check.check_site(broken, chromium))
    assert set(problems) == {"index.html", "figures/index.html", "03_productivity.html"}
    assert any("image does not load" in p and "systematicity_delta.png" in p for p in problems["index.html"])
    prod = "\n".join(problems["03_productivity.html"])
    assert "image does not load" in prod and "shows 0 figures; its executed notebook holds 1" in prod
    assert "broken link: 04_missing.html" in prod and "broken anchor: claims.html#nowhere" in prod
    assert "requests something outside the site: https://cdn.example.org/lib.js" in prod
