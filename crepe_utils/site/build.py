"""``make docs``: the companion as a book, built by Sphinx with MyST-NB and sphinx-book-theme.

``python -m crepe_utils.site.build --build-dir build --out build/site``. This module only lays out the
book's source folder (``<out>.src``) and runs Sphinx on it; Sphinx does the pages, navigation, search,
previous/next links and the in-page contents. The source folder holds

* ``index.md``: the README (the landing page) with the book's three parts as hidden tables of contents:
  Learn (the teaching notebooks), Reproduce (the paper's notebooks), Reference (docs/ pages, figures, tables);
* ``notebooks/<stem>.ipynb``: each executed notebook of the build folder, never run again
  (``nb_execution_mode = "off"``), with every code input folded (``hide-input``), every figure output a
  numbered figure whose caption the package wrote (:func:`book_notebook`), and a provenance line;
* ``docs/<stem>.md``: the pages of docs/ (the claims page with the full checks table of ``tables/checks.md``);
* ``gallery.md`` and ``tables.md``: every figure, linked to the notebook that drew it, and every table.

Each page ends or starts with its provenance: the commit, the build date and the SHA-256 of the data files
its notebook read. The executed notebook of each page is offered for download beside it. The book opens
from disk: the theme's assets are files of the site and no page loads anything from elsewhere (MathJax is
not used). Warnings stop the build (a link or reference without a target among them).
"""
from __future__ import annotations

import argparse
import copy
import html
import importlib.util
import io
import json
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from .. import benchmarks, escaping
from ..analysis import reporting
from ..atomic import write_text
from ..chapters.pages import notebook_pages
from ..digests import sha256_file
from ..errors import CrepeError, error_line
from ..paths import PROJECT_ROOT, dataset_dir

HERE = Path(__file__).resolve().parent

#: The Markdown pages of docs/, in the Reference part's order.
DOCS = ("evaluating", "comparing", "results", "claims", "traps", "determinism", "performance", "package",
        "security", "development")
#: The notebooks that teach (the Learn part); every other notebook reproduces the paper (the Reproduce part).
LEARN = ("00_how_compositionality_is_evaluated", "06_toy_world", "07_blind_baselines")
CLAIMS_START, CLAIMS_END = "<!-- claims:start -->", "<!-- claims:end -->"
#: The notebooks in file-name order: (stem, navigation label).
NOTEBOOKS = tuple((p.stem, p.label) for p in notebook_pages())
IMAGE_TYPES = ("image/png", "image/svg+xml", "image/jpeg")


class SiteError(CrepeError):
    """The site cannot be built as asked (a missing executed notebook or page, a warning of Sphinx)."""


def parts(notebooks=NOTEBOOKS) -> list[tuple[str, list[str]]]:
    """The book's parts: (caption, [document names]) in navigation order."""
    stems = [stem for stem, _ in notebooks]
    return [("Learn", [f"notebooks/{s}" for s in LEARN if s in stems]),
            ("Reproduce", [f"notebooks/{s}" for s in stems if s not in LEARN]),
            ("Reference", [f"docs/{d}" for d in DOCS] + ["gallery", "tables"])]


# ---------------------------------------------------------------- status marks
#: The status marks written as emoji (claims tables, README) and the badge the style draws for each.
#: Written with and without the emoji variation selector (⚠️, ⚠); not "…", which is also prose's ellipsis (a
#: needs-data cell gets its badge from :data:`STATUS_BADGES`).
MARKS = {written: badge for mark, badge in reporting.STATUS_STYLES.values() if mark != "…"
         for written in dict.fromkeys((mark, mark.removesuffix("\ufe0f")))}
_MARK = re.compile("|".join(map(re.escape, sorted(MARKS, key=len, reverse=True))))
_TAG_OR_TEXT = re.compile(r"(<[^>]*>)")


def plain_marks(page_html: str) -> str:
    """Each emoji status mark in the text of a page (not inside a tag) as a badge drawn by CSS: a coloured
    disc (green, red, amber) that renders without an emoji font; the word beside it says what it means."""
    def badge(m: re.Match) -> str:
        kind = MARKS[m.group(0)]
        return f'<span class="mark mark-{kind}" role="img" aria-label="{kind}"></span>'
    parts_ = _TAG_OR_TEXT.split(page_html)
    return "".join(part if i % 2 else _MARK.sub(badge, part) for i, part in enumerate(parts_))


#: The claims' statuses (crepe_utils.claims.base) and the badge each table cell of them gets.
STATUS_BADGES = {status: badge for status, (_, badge) in reporting.STATUS_STYLES.items()}
_STATUS_CELL = re.compile(r"<td><p>(" + "|".join(map(re.escape, STATUS_BADGES)) + r")</p></td>")


def status_badges(page_html: str) -> str:
    """Each table cell that holds only a claim's status (the checks table) with its badge before the word."""
    return _STATUS_CELL.sub(lambda m: f'<td><p><span class="mark mark-{STATUS_BADGES[m.group(1)]}" role="img" '
                                      f'aria-label="{STATUS_BADGES[m.group(1)]}"></span>{m.group(1)}</p></td>',
                            page_html)


# ---------------------------------------------------------------- provenance
def commit() -> str:
    """The project's commit (``+ local changes`` when the work tree differs from it), or ``unknown``."""
    try:
        run = lambda *a: subprocess.run(["git", "-C", str(PROJECT_ROOT), *a], capture_output=True, text=True,
                                        timeout=30, check=True).stdout.strip()
        head = run("rev-parse", "--short=12", "HEAD")
        return head + (" + local changes" if run("status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def data_files(stem: str) -> list[tuple[str, Path]]:
    """The data files notebook ``stem`` reads (the text datasets of the benchmarks that list it, or of every
    benchmark for a notebook none lists, as ``make`` tracks them): (name shown, file), the name relative to
    the dataset's folder's parent so that no machine path is shown."""
    owners = [b for b in benchmarks.BENCHMARKS.values() if stem in b.notebooks] or benchmarks.BENCHMARKS.values()
    out = []
    for d in dict.fromkeys(d for b in owners for d in b.datasets if not d.images):
        folder = dataset_dir(None, d.variable, d.folder)
        if folder.is_dir():
            out += [(f"{d.folder}/{p.relative_to(folder).as_posix()}", p) for p in sorted(folder.rglob("*"))
                    if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)]
    return out


def provenance(revision: str, date: str, files: list[tuple[str, str]] | None) -> str:
    """A page's provenance as Markdown with raw HTML: commit, build date, and the SHA-256 of each data file
    its notebook read (``files``: (name, sha256); None for a page made from no notebook)."""
    head = f"Built from commit <code>{html.escape(revision)}</code> on {date}"
    if not files:
        return f'<p class="provenance">{head} · no data files.</p>\n'
    rows = "".join(f"<li><code>{escaping.html(name)}</code> <code>{digest}</code></li>" for name, digest in files)
    return (f'<details class="provenance"><summary>{head} · {len(files)} data files read '
            f"(SHA-256)</summary><ul>{rows}</ul></details>\n")


# ---------------------------------------------------------------- notebooks
#: Where a figure's numbers come from, after what it shows (the package's caption).
SOURCE = ("Drawn by this notebook from the data files and results it read (the provenance line at the top of "
          "the page)")


#: What MyST reads at a paragraph's start beyond CommonMark: a comment (``%``), a target (``(name)=``), a block
#: break (``+++``); a backslash before it keeps it text.
_MYST_START = re.compile(r"^(?=[%(+])")


def figure_shows(meta: dict, notebook_label: str) -> str:
    """What an image output shows, as Markdown (escaped: data): the ``caption`` the package's display helpers
    write, else the ``alt`` text (the figure's title)."""
    text = " ".join(str(meta.get("caption") or meta.get("alt") or "").split()) or f"A figure of {notebook_label}"
    return _MYST_START.sub("\\\\", escaping.markdown(text.rstrip(".")))


def figure_caption(meta: dict, notebook_label: str) -> tuple[str, str]:
    """(caption as Markdown, figure name) of an image output from the metadata the package's display helpers
    write: what it shows (:func:`figure_shows`), where its numbers come from (``source``, else :data:`SOURCE`)
    and its file (``figure``: the file's name). The caption's text is data: escaped."""
    source = " ".join(str(meta.get("source") or SOURCE).split())
    name = str(meta.get("figure") or "")
    where = f"figures/{name}.png" if name else "not saved: drawn for this page only"
    return f"{figure_shows(meta, notebook_label)}. {escaping.markdown(source)} ({escaping.markdown(where)}).", name


def _image_meta(output: dict) -> dict | None:
    data = output.get("data", {})
    kind = next((k for k in IMAGE_TYPES if k in data), None)
    return None if kind is None else dict(output.get("metadata", {}).get(kind) or {})


#: A Markdown link to a notebook of the folder (``](03_productivity.ipynb#anchor)``).
_NOTEBOOK_LINK = re.compile(r"\]\(([\w-]+)\.ipynb(#[^)\s]*)?\)")


def book_notebook(nb: dict, stem: str, label: str, head: str) -> tuple[dict, list[tuple[str, str]]]:
    """An executed notebook as a page of the book, and the figures it shows ((name, what it shows) each).

    Every code input is folded (``hide-input``); a link to a notebook in a Markdown output points at its page
    (MyST-NB resolves those of Markdown cells, not of outputs). Each figure output moves to a cell of its own (its input
    removed) whose ``mystnb.figure`` metadata makes MyST-NB draw it as a numbered figure with the package's
    caption; the outputs around it keep their order. ``head`` (the provenance) follows the first cell.
    """
    nb = copy.deepcopy(nb)
    cells, shown, names, stems = [], [], set(), dict(NOTEBOOKS)
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            cells.append(cell)
            continue
        tags = [t for t in cell.get("metadata", {}).get("tags", []) if t != "hide-input"]
        cell.setdefault("metadata", {})["tags"] = tags + ["hide-input"]
        groups: list[tuple[list, dict | None]] = [([], None)]
        for output in cell.get("outputs", []):
            output.pop("execution_count", None)
            if "text/markdown" in output.get("data", {}):      # a notebook's link in an output: its page
                text = output["data"]["text/markdown"]
                text = "".join(text) if isinstance(text, list) else text
                output["data"]["text/markdown"] = _NOTEBOOK_LINK.sub(
                    lambda m: f"]({m.group(1)}.html{m.group(2) or ''})" if m.group(1) in stems else m.group(0), text)
            meta = _image_meta(output)
            if meta is None:
                if groups[-1][1] is not None:
                    groups.append(([], None))
                groups[-1][0].append(output)
            else:
                groups.append(([output], meta))
        cell["outputs"] = groups[0][0]
        cells.append(cell)
        for k, (outputs, meta) in enumerate(groups[1:], 1):
            new = {"cell_type": "code", "execution_count": None, "id": f"{cell.get('id', 'cell')}-{k}",
                   "metadata": {"tags": ["remove-input"]}, "outputs": outputs,
                   "source": "# more output of the cell above"}     # MyST-NB skips a cell without source
            if meta is not None:
                caption, name = figure_caption(meta, label)
                target = re.sub(r"[^a-z0-9-]+", "-", f"fig-{stem}-{name or 'inline'}".lower())
                while target in names:
                    target += "-x"
                names.add(target)
                alt = " ".join(str(meta.get("alt") or name or "figure").split())
                new["metadata"]["mystnb"] = {"figure": {"caption": caption, "name": target},
                                             "image": {"alt": escaping.visible(alt)}}
                shown.append((name, figure_shows(meta, label)))
            cells.append(new)
    intro = {"cell_type": "markdown", "id": "crepe-provenance", "metadata": {}, "source": head}
    nb["cells"] = cells[:1] + [intro] + cells[1:]
    nb.setdefault("metadata", {}).pop("widgets", None)
    return nb, shown


# ---------------------------------------------------------------- Markdown pages
#: Links whose target is a folder or a file the book shows on a page of its own.
_LINK = re.compile(r"\]\((?P<url>[^)\s#]*)(?P<rest>[^)]*)\)")


def rewrite_links(text: str, mapping: dict[str, str]) -> str:
    """Markdown links to ``figures``, ``tables``, ``tables/checks.md`` or the README pointed at their page."""
    return _LINK.sub(lambda m: f"]({mapping.get(m.group('url'), m.group('url'))}{m.group('rest')})", text)


def claims_text(text: str, source: Path, tables_dir: Path) -> str:
    if CLAIMS_START not in text or CLAIMS_END not in text:
        raise SiteError(f"{source} lacks the claims markers {CLAIMS_START} … {CLAIMS_END}")
    table = (tables_dir / "checks.md").read_text(encoding="utf-8")
    return re.sub(re.escape(CLAIMS_START) + ".*?" + re.escape(CLAIMS_END), lambda _: table, text, flags=re.S)


def drawn_by(made: tuple[str, str, str] | None) -> str:
    """Which page draws a figure, as Markdown: ``made`` is (the notebook's stem, or ``toy/<stem>`` for the toy
    world's run of it, its label, what the figure shows), or None for a figure no executed notebook shows."""
    if not made:
        return "No executed notebook of this build shows it (`make all` redraws figures/ and build/)."
    stem, label = made[0], escaping.markdown(made[1])
    if stem.startswith("toy/"):
        return f"Drawn by the toy world's run of [{label}](notebooks/{stem[4:]}.ipynb), which the book does not show."
    return f"Drawn by [{label}](notebooks/{stem}.ipynb), whose page lists the data it read."


_README_IMAGE = re.compile(r"^!\[(?P<alt>[^\]]*)\]\(figures/(?P<name>[\w.-]+)\.png\)\s*$", re.M)


def index_text(readme: str, made_by: dict[str, tuple[str, str, str]] | None = None, notebooks=NOTEBOOKS) -> str:
    """The README with the book's parts as hidden tables of contents (the sidebar's navigation); each figure it
    shows on a line of its own a numbered figure, captioned with its text and the notebook that draws it."""
    def figure(m: re.Match) -> str:
        where = drawn_by((made_by or {}).get(m.group("name")))
        return (f"```{{figure}} figures/{m.group('name')}.png\n:alt: {escaping.visible(m.group('alt'))}\n\n"
                f"{escaping.markdown(m.group('alt'))}. {where} (figures/{m.group('name')}.png)\n```")
    tocs = [f"```{{toctree}}\n:caption: {caption}\n:hidden:\n\n" + "\n".join(docs) + "\n```\n"
            for caption, docs in parts(notebooks)]
    text = _README_IMAGE.sub(figure, rewrite_links(readme, {"figures": "gallery.md", "tables": "tables.md"}))
    return text.rstrip("\n") + "\n\n" + "\n".join(tocs)


def gallery_text(figures: list[Path], made_by: dict[str, tuple[str, str, str]]) -> str:
    """Every figure of figures/ as a numbered figure: its caption from the notebook that shows it, a link
    to that notebook's page, and its files."""
    out = ["# Figures\n", "Every figure in `figures/`, as the notebooks last wrote it, with the page that draws it.\n"]
    for png in figures:
        caption, where = (made_by.get(png.stem) or ("", "", ""))[2], drawn_by(made_by.get(png.stem))
        files = " · ".join(f"{{download}}`{ext.upper()} <figures/{png.stem}.{ext}>`"
                           for ext in ("png", "svg") if png.with_suffix(f".{ext}").is_file())
        text = f"{caption}." if caption else escaping.markdown(png.stem)
        out.append(f"```{{figure}} figures/{png.name}\n:name: gallery-{png.stem.replace('_', '-')}\n"
                   f":alt: {escaping.visible(png.stem)}\n\n{text} {where} {files}\n```\n")
    return "\n".join(out)


def tables_text(tables: list[Path]) -> str:
    out = ["# Tables\n", "Every table in `tables/` (CSV at full precision, Markdown, LaTeX booktabs), as the "
           "notebooks and `make check` last wrote it.\n"]
    for md in tables:
        files = " · ".join(f"{{download}}`{ext[1:].upper()} <tables/{md.stem}{ext}>`"
                           for ext in (".csv", ".tex", ".md") if md.with_suffix(ext).is_file())
        out.append(f"## {escaping.markdown(md.stem)}\n\n{files}\n\n{md.read_text(encoding='utf-8')}\n")
    return "\n".join(out)


# ---------------------------------------------------------------- Sphinx
def sphinx_config(title: str = "CREPE companion") -> dict:
    """Sphinx's settings (there is no conf.py): MyST-NB never executes a notebook, figures are numbered,
    the book theme shows the parts, previous/next links and each page's contents, and nothing is fetched."""
    return {
        "project": title, "html_title": title, "extensions": ["myst_nb"],
        "nb_execution_mode": "off", "nb_merge_streams": True, "nb_render_markdown_format": "gfm",
        "myst_heading_anchors": 4, "myst_enable_extensions": [],
        "numfig": True, "numfig_format": {"figure": "Figure %s"},
        "exclude_patterns": ["figures/**", "tables/**", "notebooks/*.md"],
        "html_theme": "sphinx_book_theme", "html_static_path": [str(HERE / "static")],
        "html_css_files": ["crepe.css"], "html_copy_source": False, "html_show_sourcelink": False,
        "html_last_updated_fmt": None, "html_permalinks": True,
        "html_theme_options": {"show_toc_level": 2, "use_download_button": False, "use_fullscreen_button": False,
                               "use_repository_button": False, "home_page_in_toc": True,
                               "show_navbar_depth": 1, "navigation_with_keys": False},
    }


#: what builds the book: the ``docs`` extra (``make docs`` installs it)
BOOK_MODULES = ("sphinx", "myst_nb", "sphinx_book_theme")


def missing_extra() -> list[str]:
    """The modules of the ``docs`` extra this environment lacks (none: the book can be built here)."""
    return [m for m in BOOK_MODULES if importlib.util.find_spec(m) is None]


def run_sphinx(src: Path, out: Path, doctrees: Path) -> None:
    """Sphinx's HTML build; a warning (a link or reference without a target) fails it after the whole run."""
    absent = missing_extra()
    if absent:
        raise SiteError(f"the book needs the docs extra, which this environment lacks ({', '.join(absent)}): "
                        "make docs installs it, or pip install -c requirements.lock -e '.[docs]'")
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    warnings = io.StringIO()
    with patch_docutils(src), docutils_namespace():
        app = Sphinx(str(src), None, str(out), str(doctrees), "html", confoverrides=sphinx_config(),
                     status=None, warning=warnings, freshenv=True, warningiserror=False)
        app.build()
    found = [line for line in warnings.getvalue().splitlines() if line.strip()]
    if found:                                          # every warning kept beside the book's source
        write_text(src.with_name(src.name + ".warnings"), "\n".join(found) + "\n")
        raise SiteError(f"Sphinx warned {len(found)} times (all in {src.name}.warnings); first: {found[0]}")


def build(build_dir: Path, out: Path, readme: Path, figures_dir: Path, tables_dir: Path,
          docs_dir: Path | None = None) -> list[Path]:
    """Write the book into ``out`` (replacing what a previous build left there); returns its pages."""
    docs_dir = readme.parent / "docs" if docs_dir is None else docs_dir
    absent = [str(docs_dir / f"{stem}.md") for stem in DOCS if not (docs_dir / f"{stem}.md").is_file()]
    if absent:
        raise SiteError(f"no page {', '.join(absent)}")
    missing = [build_dir / f"{stem}.ipynb" for stem, _ in NOTEBOOKS if not (build_dir / f"{stem}.ipynb").is_file()]
    if missing:
        raise SiteError(f"no executed notebook {', '.join(map(str, missing))}: run `make all` first")
    if not (tables_dir / "checks.md").is_file():
        raise SiteError(f"no {tables_dir / 'checks.md'}: run `make all` (or `make check`) first")
    src, staging = out.with_name(out.name + ".src"), out.with_name(out.name + ".partial")
    for folder in (src, staging):
        shutil.rmtree(folder, ignore_errors=True)
    (src / "notebooks").mkdir(parents=True)
    (src / "docs").mkdir()
    shutil.copytree(figures_dir, src / "figures")
    shutil.copytree(tables_dir, src / "tables")
    revision, date = commit(), datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    no_data = provenance(revision, date, None)
    made_by: dict[str, tuple[str, str, str]] = {}
    for stem, label in NOTEBOOKS:
        executed = json.loads((build_dir / f"{stem}.ipynb").read_text(encoding="utf-8"))
        files = [(name, sha256_file(path)) for name, path in data_files(stem)]
        nb, shown = book_notebook(executed, stem, label, provenance(revision, date, files)
                                  + f'\n<a class="download-notebook" href="{stem}.ipynb" download>'
                                  "Download this executed notebook (.ipynb)</a>\n")
        write_text(src / "notebooks" / f"{stem}.ipynb", json.dumps(nb, ensure_ascii=False, indent=1))
        for name, caption in shown:
            made_by.setdefault(name, (stem, label, caption))
    for executed in sorted((build_dir / "toy").glob("*.ipynb")):     # the toy world's runs of 02 and 03
        label = dict(NOTEBOOKS).get(executed.stem, executed.stem)
        nb = json.loads(executed.read_text(encoding="utf-8"))
        for name, caption in book_notebook(nb, executed.stem, label, "")[1]:
            made_by.setdefault(name, (f"toy/{executed.stem}", label, caption))
    for stem in DOCS:
        source = docs_dir / f"{stem}.md"
        text = source.read_text(encoding="utf-8")
        text = claims_text(text, source, tables_dir) if stem == "claims" else text
        text = rewrite_links(text, {"../tables/checks.md": "claims.md", "../README.md": "../index.md",
                                    "../figures": "../gallery.md", "../tables": "../tables.md"})
        write_text(src / "docs" / f"{stem}.md", text.rstrip("\n") + "\n\n" + no_data)
    write_text(src / "index.md", index_text(readme.read_text(encoding="utf-8"), made_by) + "\n" + no_data)
    write_text(src / "gallery.md", gallery_text(sorted(figures_dir.glob("*.png")), made_by) + "\n" + no_data)
    write_text(src / "tables.md", tables_text(sorted(tables_dir.glob("*.md"))) + "\n" + no_data)

    run_sphinx(src, staging, src.with_name(src.name + ".doctrees"))
    for stem, _ in NOTEBOOKS:                         # the download beside each notebook's page, as executed
        shutil.copy2(build_dir / f"{stem}.ipynb", staging / "notebooks" / f"{stem}.ipynb")
    pages = sorted(staging.rglob("*.html"))
    for page in pages:                               # status marks as badges; a caption's bidi override shown
        text = page.read_text(encoding="utf-8")
        write_text(page, escaping.page(status_badges(plain_marks(text))))
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    return [out / p.relative_to(staging) for p in pages]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crepe_utils.site.build", description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build", help="folder of the executed notebooks (default: build)")
    parser.add_argument("--out", default=None, help="site folder (default: <build-dir>/site)")
    parser.add_argument("--readme", default=str(PROJECT_ROOT / "README.md"))
    parser.add_argument("--docs-dir", default=None, help="the Markdown pages (default: docs/ beside the README)")
    parser.add_argument("--figures-dir", default="figures")
    parser.add_argument("--tables-dir", default="tables")
    args = parser.parse_args(argv)
    build_dir = Path(args.build_dir)
    out = Path(args.out) if args.out else build_dir / "site"
    start = time.monotonic()
    try:
        pages = build(build_dir, out, Path(args.readme), Path(args.figures_dir), Path(args.tables_dir),
                      Path(args.docs_dir) if args.docs_dir else None)
    except SiteError as exc:
        print(error_line(exc), file=sys.stderr)
        return 1
    print(f"site: {len(pages)} pages in {out} ({time.monotonic() - start:.0f} s); open {out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
