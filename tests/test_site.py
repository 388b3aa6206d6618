"""The book (`make docs`: Sphinx, MyST-NB, sphinx-book-theme) and its browser check (`make docs-check`).

The book is built from synthetic executed notebooks (one figure each, made here, with a caption from data)
with the real README, docs/ pages, figures/ and tables/, so a link without a target fails here.
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from PIL import Image

import helpers
from crepe_utils.site import build as site_build
from crepe_utils.site import check as site_check

ROOT = Path(__file__).resolve().parent.parent
EVIL = "caption_with_<b>bold</b>"
#: A synthetic notebook that shows a figure of figures/ (the others show "f", which is not there).
FIGURE = {"02_systematicity": "systematicity_delta"}
#: A caption that starts with what MyST reads as a comment or a target: shown as text all the same.
LEAD = {"03_productivity": "% kept (t)= "}
#: The book's parts as issue 34 splits them: the teaching notebooks, the paper's, the reference pages.
LEARN = ["00_how_compositionality_is_evaluated", "06_toy_world", "07_blind_baselines"]


def _png(colour) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (40, 30), colour).save(buf, format="PNG")
    return buf.getvalue()


def _executed_notebook(path: Path, title: str, png: bytes, name: str = "f", lead: str = "") -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    figure = nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(png).decode(),
                                                          "text/plain": "<IPython.core.display.Image object>"},
                                    metadata={"image/png": {"figure": name, "alt": f"{title} figure",
                                                            "caption": f"{lead}{title}: <script>x</script> *{EVIL}*"}})
    note = nbformat.v4.new_output("display_data", data={"text/markdown": "Before the figure.", "text/plain": ""})
    after = nbformat.v4.new_output("stream", name="stdout", text="After the figure.\n")
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\nSome text.\n\n## Its figure\n\nMore text."),
                nbformat.v4.new_code_cell("reporting.save_figure(fig, 'f', figures_dir)",
                                          outputs=[note, figure, after], execution_count=1)]
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def built_once(tmp_path_factory):
    """(folder, {stem: png bytes}): ``folder/build`` holds synthetic executed notebooks, ``folder/site`` the book
    built from them, the real README, figures and tables, and a data root holding one CREPE file; built once."""
    if helpers.book_missing():
        pytest.skip(helpers.book_missing())
    folder = tmp_path_factory.mktemp("site")
    build_dir = folder / "build"
    build_dir.mkdir()
    (folder / "data" / "crepe").mkdir(parents=True)
    (folder / "data" / "crepe" / "queries.csv").write_text("a,b\n1,2\n")
    pngs = {}
    for i, (stem, label) in enumerate(site_build.NOTEBOOKS):
        pngs[stem] = _png((40 * i, 200 - 30 * i, 90))
        _executed_notebook(build_dir / f"{stem}.ipynb", f"{i + 1} · {label}", pngs[stem], FIGURE.get(stem, "f"),
                           LEAD.get(stem, ""))
    saved = os.environ.get("CREPE_DATA")
    os.environ["CREPE_DATA"] = str(folder / "data")
    try:
        site_build.build(build_dir, folder / "site", ROOT / "README.md", ROOT / "figures", ROOT / "tables")
    finally:
        os.environ.pop("CREPE_DATA") if saved is None else os.environ.__setitem__("CREPE_DATA", saved)
    return folder, pngs


@pytest.fixture
def built(built_once, tmp_path):
    """(site folder, {stem: png bytes}): a copy of the book built once, with its build folder, in this test's
    ``tmp_path`` (a test may break it)."""
    folder, pngs = built_once
    for part in ("build", "site"):
        shutil.copytree(folder / part, tmp_path / part)
    return tmp_path / "site", pngs


def _read(site: Path, page: str) -> str:
    return (site / page).read_text(encoding="utf-8")


def _sidebar(page: str) -> list[tuple[str, list[str]]]:
    """The sidebar's parts: (caption, [links]) in order."""
    nav = page[page.index('bd-docs-nav'):]
    nav = nav[:nav.index("</nav>")]
    out = []
    for caption, body in re.findall(r'<p aria-level="2" class="caption" role="heading">'
                                    r'<span class="caption-text">\s*(.*?)\s*</span></p>\s*<ul[^>]*>(.*?)</ul>', nav, re.S):
        out.append((caption, re.findall(r'href="([^"#]+)"', body)))
    return out


def test_the_book_has_every_page_in_three_parts(built):
    site, _ = built
    for page in ["index.html", "gallery.html", "tables.html", "search.html",
                 *(f"notebooks/{stem}.html" for stem, _ in site_build.NOTEBOOKS),
                 *(f"docs/{p.stem}.html" for p in (ROOT / "docs").glob("*.md") if p.stem in site_build.DOCS)]:
        assert (site / page).is_file(), page
    assert {p.stem for p in (ROOT / "docs").glob("*.md")} >= set(site_build.DOCS)
    parts = _sidebar(_read(site, "index.html"))
    stems = [stem for stem, _ in site_build.NOTEBOOKS]
    assert [caption for caption, _ in parts] == ["Learn", "Reproduce", "Reference"]
    assert parts[0][1] == [f"notebooks/{s}.html" for s in LEARN]
    assert parts[1][1] == [f"notebooks/{s}.html" for s in stems if s not in LEARN]
    assert parts[2][1] == [f"docs/{d}.html" for d in site_build.DOCS] + ["gallery.html", "tables.html"]
    page = _read(site, "notebooks/02_systematicity.html")                # previous / next, the page's contents
    assert 'class="left-prev"' in page and 'class="right-next"' in page and 'class="page-toc' in page


def test_a_notebook_page_shows_each_figure_numbered_with_its_caption_escaped(built):
    site, pngs = built
    for stem, _ in site_build.NOTEBOOKS:
        page = _read(site, f"notebooks/{stem}.html")
        figures = re.findall(r"<figure[^>]*>(.*?)</figure>", page, re.S)
        assert len(figures) == 1, stem
        assert re.search(r'<span class="caption-number">Figure \d+ </span>', figures[0])
        assert "&lt;script&gt;x&lt;/script&gt;" in figures[0] and "<script>x" not in page
        assert "*caption_with_&lt;b&gt;bold&lt;/b&gt;*" in figures[0] and "<b>bold" not in page
        assert f"(figures/{FIGURE.get(stem, 'f')}.png)" in figures[0]
        assert re.search(r'<span class="caption-text">' + re.escape(LEAD.get(stem, "")) + r"\d+ · ", figures[0])
        src = re.search(r'<img[^>]*src="([^"]+)"', figures[0]).group(1)
        assert (site / "notebooks" / src).resolve().read_bytes() == pngs[stem]
        # the outputs around the figure keep their order: the Markdown before it, the stream after it
        assert page.index("Before the figure.") < page.index("<figure") < page.index("After the figure.")
        assert (site / "notebooks" / f"{stem}.ipynb").read_bytes() == (site.parent / "build" / f"{stem}.ipynb").read_bytes()
        assert f'href="{stem}.ipynb"' in page                             # the download, beside the page
        assert "http://" not in re.sub(r'href="http[^"]*"', "", page.split("<article")[1].split("</article>")[0])


def test_code_inputs_are_folded_and_no_prompt_is_shown(built):
    site, _ = built
    for stem, _ in site_build.NOTEBOOKS:
        page = _read(site, f"notebooks/{stem}.html")
        assert page.count('<details class="admonition hide above-input">') == 1     # the one code cell
        assert "Out[" not in page and "In [" not in page


def test_each_page_says_its_provenance(built):
    site, _ = built
    digest = hashlib.sha256(b"a,b\n1,2\n").hexdigest()
    crepe = _read(site, "notebooks/02_systematicity.html")
    assert re.search(r"Built from commit <code>[^<]+</code> on \d{4}-\d\d-\d\d \d\d:\d\d UTC · 1 data files read", crepe)
    assert f"<code>crepe/queries.csv</code> <code>{digest}</code>" in crepe
    assert "no data files" in _read(site, "notebooks/05_winoground.html")     # Winoground's folder is absent
    for page in ("index.html", "docs/claims.html", "gallery.html", "tables.html"):
        assert re.search(r"Built from commit .* · no data files\.", _read(site, page)), page


def test_the_landing_page_the_claims_and_the_gallery(built):
    site, _ = built
    index = _read(site, "index.html")
    for figure in re.findall(r"<figure[^>]*>(.*?)</figure>", index, re.S):    # README figures, captioned
        assert '<span class="caption-number">' in figure
    assert len(re.findall(r"<figure", index)) >= 4
    assert 'href="docs/evaluating.html"' in index and 'href="notebooks/03_productivity.html"' in index
    claims = _read(site, "docs/claims.html")
    rows = [l for l in (ROOT / "tables" / "checks.md").read_text(encoding="utf-8").splitlines() if l.startswith("|")]
    assert claims.count("<tr") >= len(rows) - 1                              # the full checks table
    statuses = [l.split("|")[5].strip() for l in rows[2:]]
    badged = re.findall(r'<td><p><span class="mark mark-(\w+)" role="img" aria-label="\w+"></span>([^<]+)</p></td>',
                        claims)
    assert len(badged) == len(statuses)                                       # a badge per status
    assert all(site_build.STATUS_BADGES[word] == badge for badge, word in badged)
    assert [w for _, w in badged].count("pass") == statuses.count("pass")
    assert claims.count('<span class="mark mark-') == len(statuses) + len(site_build.STATUS_BADGES) - 1  # and the
    # definitions' marks: every status but "needs data", whose mark (…) is a plain character
    gallery = _read(site, "gallery.html")
    assert len(re.findall(r"<figure", gallery)) == len(list((ROOT / "figures").glob("*.png")))
    made = re.search(r'<figure[^>]*id="gallery-systematicity-delta".*?</figure>', gallery, re.S).group(0)
    assert 'Drawn by <a class="reference internal" href="notebooks/02_systematicity.html"' in made
    assert "&lt;script&gt;x&lt;/script&gt;" in made                     # the notebook's caption, escaped
    other = re.search(r'<figure[^>]*id="gallery-productivity-endpoints".*?</figure>', gallery, re.S).group(0)
    assert "No executed notebook of this build shows it" in other


def test_status_words_get_their_badge():
    assert site_build.status_badges("<td><p>pass</p></td><td><p>a pass</p></td><td><p>holds in part</p></td>") == (
        '<td><p><span class="mark mark-pass" role="img" aria-label="pass"></span>pass</p></td><td><p>a pass</p></td>'
        '<td><p><span class="mark mark-part" role="img" aria-label="part"></span>holds in part</p></td>')


def test_every_claim_status_has_a_badge_the_style_draws():
    from crepe_utils.claims.base import STATUSES
    css = (Path(site_build.__file__).parent / "static" / "crepe.css").read_text(encoding="utf-8")
    assert set(site_build.STATUS_BADGES) == set(STATUSES)
    assert all(f".mark-{badge} " in css for badge in site_build.STATUS_BADGES.values())
    assert len(set(site_build.STATUS_BADGES.values())) == len(STATUSES)      # no two statuses look alike


def test_status_marks_are_drawn_by_the_style_and_tags_are_left_alone():
    marked = site_build.plain_marks('<td title="\u2705 pass">\u2705 pass</td><td>\u26a0\ufe0f paper</td>'
                                    '<td>\u274c fail</td>')
    assert marked == ('<td title="\u2705 pass"><span class="mark mark-pass" role="img" aria-label="pass"></span> pass'
                      '</td><td><span class="mark mark-warn" role="img" aria-label="warn"></span> paper</td>'
                      '<td><span class="mark mark-fail" role="img" aria-label="fail"></span> fail</td>')
    css = (Path(site_build.__file__).parent / "static" / "crepe.css").read_text(encoding="utf-8")
    assert ".mark-pass" in css and ".mark-fail" in css and ".mark-warn" in css


def test_a_notebooks_figure_outputs_become_cells_of_their_own_in_order():
    img = {"output_type": "display_data", "data": {"image/png": "AAAA"}, "metadata": {"image/png": {"alt": "A"}}}
    text = lambda t: {"output_type": "stream", "name": "stdout", "text": t}
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# T"},
                    {"cell_type": "code", "id": "c", "metadata": {"tags": ["parameters"]}, "source": "x",
                     "outputs": [text("1"), img, text("2"), img]}], "metadata": {}}
    out, shown = site_build.book_notebook(nb, "s", "S", "PROVENANCE")
    cells = out["cells"]
    assert [c.get("source") for c in cells[:2]] == ["# T", "PROVENANCE"]
    assert cells[2]["metadata"]["tags"] == ["parameters", "hide-input"] and cells[2]["outputs"] == [text("1")]
    assert [c["outputs"] for c in cells[3:]] == [[img], [text("2")], [img]]
    assert all(c["metadata"]["tags"] == ["remove-input"] for c in cells[3:])
    assert cells[3]["metadata"]["mystnb"]["figure"]["name"] != cells[5]["metadata"]["mystnb"]["figure"]["name"]
    assert "mystnb" not in cells[4]["metadata"] and len(shown) == 2
    assert cells[3]["metadata"]["mystnb"]["figure"]["caption"].startswith("A. Drawn by this notebook")
    assert nb["cells"][1]["outputs"][1] is img                                  # the input is left as it was


def test_a_link_to_a_notebook_in_a_markdown_output_points_at_its_page():
    md = {"output_type": "display_data", "metadata": {},
          "data": {"text/markdown": ["See [03](03_productivity.ipynb#ties) and [x](other.ipynb).", ""]}}
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": "x", "outputs": [md]}], "metadata": {}}
    out, _ = site_build.book_notebook(nb, "s", "S", "")
    assert out["cells"][0]["outputs"][0]["data"]["text/markdown"] == (
        "See [03](03_productivity.html#ties) and [x](other.ipynb).")


def test_without_the_docs_extra_the_build_says_so_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(site_build, "BOOK_MODULES", ("sphinx", "no_such_module_here"))
    (tmp_path / "src").mkdir()
    with pytest.raises(site_build.SiteError, match=r"^the book needs the docs extra.*\(no_such_module_here\): make docs"):
        site_build.run_sphinx(tmp_path / "src", tmp_path / "out", tmp_path / "doctrees")


def test_a_missing_executed_notebook_is_a_clear_error(tmp_path):
    if helpers.book_missing():
        pytest.skip(helpers.book_missing())
    with pytest.raises(site_build.SiteError, match=r"00_how_compositionality_is_evaluated\.ipynb.*make all"):
        site_build.build(tmp_path, tmp_path / "site", ROOT / "README.md", ROOT / "figures", ROOT / "tables")


def test_a_link_without_a_target_stops_the_build(tmp_path, built):
    site, _ = built
    readme = tmp_path / "README.md"
    readme.write_text((ROOT / "README.md").read_text(encoding="utf-8") + "\nSee [the notes](docs/notes.md).\n")
    with pytest.raises(site_build.SiteError, match=r"Sphinx warned .*notes"):
        site_build.build(site.parent / "build", tmp_path / "site2", readme, ROOT / "figures", ROOT / "tables",
                         ROOT / "docs")


def _break(page: Path, html: str) -> None:
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("</article>", html + "</article>", 1), encoding="utf-8")


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
def test_docs_check_passes_a_good_book_and_names_each_kind_of_breakage(built, chromium, tmp_path):
    site, _ = built
    reports = site_check.check_site(site, chromium, tmp_path / "shots")
    assert _problems(reports) == {}
    by_page = {r.page: r for r in reports}
    assert by_page["notebooks/02_systematicity.html"].loaded == 1
    assert by_page["index.html"].loaded == by_page["index.html"].images >= 4     # README's figures
    for shot in ("index.png", "notebooks_02_systematicity.png", "docs_claims.png", "gallery.png"):
        with Image.open(tmp_path / "shots" / shot) as img:
            assert img.width == site_check.VIEWPORT[0] and img.height >= site_check.VIEWPORT[1]

    broken = tmp_path / "broken"
    shutil.copytree(site, broken)
    for png in (broken / "_images").glob("systematicity_delta*.png"):
        png.unlink()                                                            # a README figure goes missing
    _break(broken / "notebooks" / "03_productivity.html",
           '<a href="04_missing.html">next</a><a href="../docs/claims.html#nowhere">x</a><a href="02_systematicity.ipynb">y</a>'
           '<script src="https://cdn.example.org/lib.js"></script>')
    _break(broken / "notebooks" / "04_imagenet_correlation.html",
           "<table><tr><td>Largest drop is 12.57 points (the abstra...</td><td>NaN</td></tr></table>"
           "<p>read from /home/someone/data/crepe</p><p>\u2705 pass</p><p>Out[3]: 5</p><p>an Out[ prompt</p>"
           '<div class="cell_output"><pre>INFO:crepe_utils.cache: loaded 3 files</pre></div>'
           '<img src="../_images/x.png" alt="loose">')
    _break(broken / "notebooks" / "05_winoground.html", "<style>details.hide > .cell_input, "
           "details.hide[open] { display: block !important; } details.hide::details-content "
           "{ content-visibility: visible !important; display: block !important; }</style>")
    _break(broken / "notebooks" / "08_sugarcrepe.html", '<p>a caption <b onclick="x()">from data</b></p>'
           "<p>a caption &amp;lt;i&amp;gt; escaped twice</p>")
    (broken / "searchindex.js").write_text("Search.setIndex({})", encoding="utf-8")
    page = broken / "notebooks" / "06_toy_world.html"
    page.write_text(re.sub(r"<img [^>]*>", "", page.read_text(encoding="utf-8")), encoding="utf-8")
    executed = broken / "notebooks" / "07_blind_baselines.ipynb"
    nb = json.loads(executed.read_text(encoding="utf-8"))
    nb["metadata"]["papermill"] = {"output_path": "/tmp/build/.07_blind_baselines.ipynb.x1y2.part.ipynb"}
    executed.write_text(json.dumps(nb), encoding="utf-8")
    reports = site_check.check_site(broken, chromium)
    problems = _problems(reports)
    search = f"search.html (a search for {site_check.SEARCH_TERM!r})"
    assert set(problems) == {"index.html", "gallery.html", "notebooks/03_productivity.html", "notebooks/04_imagenet_correlation.html",
                             "notebooks/05_winoground.html", "notebooks/06_toy_world.html",
                             "notebooks/08_sugarcrepe.html", "notebooks/07_blind_baselines.ipynb", search}, problems
    corr = "\n".join(problems["notebooks/04_imagenet_correlation.html"])
    for found in ("a table cell cut with '...'", "names a path of the building machine: /home/someone",
                  "shows '\u2705' (U+2705)", "1 table cells say 'NaN'", "shows 1 prompts such as 'Out[3]:'",
                  "shows 1 log lines, e.g. 'INFO:crepe_utils.cache:'",
                  "an image outside a numbered figure with a caption: ../_images/x.png"):
        assert found in corr, found
    assert any("code inputs as it opens" in p for p in problems["notebooks/05_winoground.html"])
    assert "a notebook page without a figure" in problems["notebooks/06_toy_world.html"]
    assert problems["notebooks/08_sugarcrepe.html"] == [
        'markup from a page\'s text became an element: <b onclick="x()">from data</b>',
        "shows text escaped twice: '&gt;'", "shows text escaped twice: '&lt;'"]
    assert problems["notebooks/07_blind_baselines.ipynb"] == [
        "names a path of the building machine: /tmp/build/.07_blind_baselines.ipynb.x1y2.part.ipynb"]
    assert problems[search][0] == f"searching for {site_check.SEARCH_TERM!r} finds nothing"     # at once: the
    assert problems[search][1:] and problems[search][1].startswith("the search stopped: ")   # script error ends it
    assert any("image does not load" in p and "systematicity_delta" in p for p in problems["index.html"])
    prod = "\n".join(problems["notebooks/03_productivity.html"])
    assert "broken link: 04_missing.html" in prod and "broken anchor: ../docs/claims.html#nowhere" in prod
    assert "requests something outside the site: https://cdn.example.org/lib.js" in prod
    assert "links to a notebook's file, not its page: 02_systematicity.ipynb" in prod
