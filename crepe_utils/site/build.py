"""``make docs``: the companion as a static website, built from the executed notebooks.

``python -m crepe_utils.site.build --build-dir build --out build/site``. Pages: the README (the
landing page), every notebook of ``notebooks/`` in file-name order, the Markdown pages of
``docs/`` (the claims page with the full checks table), and every figure and table. The site opens
from disk (``file://``): links are relative, images are files of the site or embedded in the page,
and no page loads a script, font or style sheet from anywhere. A link that would have no target on
the site stops the build.

What a reader sees, on any machine and in any browser, without a script:

* a notebook page shows its prose, outputs and figures; each code input is folded away behind a
  "show code" switch, and one switch at the top of the page shows them all (CSS only: a checkbox
  and its label);
* a table cell is never cut: the executed notebooks hold whole tables (the runner's kernel setup)
  and the style wraps long cells;
* the status marks of the claims tables (the emoji ✅, ❌, ⚠️) are drawn by the style sheet as
  coloured badges beside their word, so they need no emoji font (:func:`plain_marks`).
"""
from __future__ import annotations

import argparse
import html
import posixpath
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import escaping
from ..atomic import write_text
from ..errors import CrepeError, error_line
from ..paths import PROJECT_ROOT
from ..chapters.pages import notebook_pages

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"


@dataclass(frozen=True)
class Page:
    file: str       # name in the site folder
    title: str      # navigation label


#: The Markdown pages of docs/, in navigation order: (stem, navigation label); docs/<stem>.md -> <stem>.html.
DOCS = (("evaluating", "Evaluating"), ("comparing", "Comparing models"), ("results", "Results format"),
        ("claims", "Claims"), ("traps", "Traps"), ("determinism", "Determinism"), ("performance", "Performance"),
        ("package", "The package"), ("security", "Security"), ("development", "Development"))
HOME = Page("index.html", "CREPE companion")
CLAIMS = Page("claims.html", "Claims")
FIGURES = Page("figures/index.html", "Figures")
TABLES = Page("tables/index.html", "Tables")
CLAIMS_START, CLAIMS_END = "<!-- claims:start -->", "<!-- claims:end -->"


class SiteError(CrepeError):
    """The site cannot be built as asked (a missing executed notebook, a link with no target)."""


#: The notebooks, the teaching one first, then the paper's in order: (stem, navigation label).
NOTEBOOKS = tuple((p.stem, p.label) for p in notebook_pages())
NAV = (HOME, *(Page(f"{stem}.html", label) for stem, label in NOTEBOOKS),
       *(Page(f"{stem}.html", label) for stem, label in DOCS), FIGURES, TABLES)


def css() -> str:
    return (HERE / "style.css").read_text(encoding="utf-8")


def nav(current: Page, prefix: str = "") -> str:
    """The navigation bar; ``prefix`` leads from a page in a subfolder back to the site's root."""
    links = []
    for p in NAV:
        mark = ' class="current"' if p == current else ""
        links.append(f'<a href="{prefix}{p.file}"{mark}>{html.escape(p.title)}</a>')
    return '<nav class="site-nav">' + "".join(links) + "</nav>"


def page(title: str, body: str, current: Page, prefix: str = "") -> str:
    """A complete, self-contained page: the site's style inline, no script."""
    return plain_marks(
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)} · CREPE companion</title>\n<style>\n{css()}</style>\n</head>\n<body>\n"
        f'{nav(current, prefix)}\n<article class="page">\n{body}\n</article>\n</body>\n</html>\n')


#: The status marks written as emoji (claims tables, README) and the badge the style draws for each.
MARKS = {"\u2705": "pass", "\u274c": "fail", "\u26a0\ufe0f": "warn", "\u26a0": "warn"}
_MARK = re.compile("|".join(map(re.escape, sorted(MARKS, key=len, reverse=True))))
_TAG_OR_TEXT = re.compile(r"(<[^>]*>)")


def plain_marks(page_html: str) -> str:
    """Each emoji status mark in the text of a page (not inside a tag) as a badge drawn by CSS: a coloured
    disc (green, red, amber) that renders without an emoji font; the word beside it says what it means."""
    def badge(m: re.Match) -> str:
        kind = MARKS[m.group(0)]
        return f'<span class="mark mark-{kind}" role="img" aria-label="{kind}"></span>'
    parts = _TAG_OR_TEXT.split(page_html)
    return "".join(part if i % 2 else _MARK.sub(badge, part) for i, part in enumerate(parts))


_COMMENT = re.compile(r"<!--.*?-->\n?", re.S)


def markdown(text: str) -> str:
    """GitHub-flavoured Markdown (tables, strikethrough, bare URLs) to HTML, with raw HTML escaped: a page
    shows what its text says and never runs it. Our pages' HTML comments (the markers between which
    generated blocks are kept) are dropped first."""
    import mistune
    render = mistune.create_markdown(escape=True, plugins=["table", "strikethrough", "url"])
    return render(_COMMENT.sub("", text))


_LINK = re.compile(r'(?P<attr>href|src)="(?P<url>[^"]*)"')


def link_targets(site_files: set[str]) -> dict[str, str]:
    """Where a link (relative to the project root) points on the site."""
    targets = {f: f for f in site_files}
    targets.update({f"notebooks/{stem}.ipynb": f"{stem}.html" for stem, _ in NOTEBOOKS})
    targets.update({f"docs/{stem}.md": f"{stem}.html" for stem, _ in DOCS})
    targets.update({"README.md": HOME.file, "figures": FIGURES.file, "tables": TABLES.file,
                    "tables/checks.md": CLAIMS.file})
    return targets


def rewrite_links(body: str, targets: dict[str, str], where: str, prefix: str = "", base: str = "") -> str:
    """Point each relative link at its page or file on the site; SiteError for one with no target.

    ``base`` is the folder of the Markdown file the links were written in (``docs`` for its pages).
    """
    def fix(m: re.Match) -> str:
        url = m.group("url")
        if not url or url.startswith("#") or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", url):
            return m.group(0)                                   # an anchor, https:, mailto:, data:
        path, _, fragment = url.partition("#")
        key = posixpath.normpath(posixpath.join(base, path)).rstrip("/")
        if key not in targets:
            raise SiteError(f"{where}: the link {url!r} has no target on the site; link to a notebook, a page "
                            "of docs/, a file in figures/ or tables/, or a full https:// address")
        return f'{m.group("attr")}="{prefix}{targets[key]}{"#" + fragment if fragment else ""}"'
    return _LINK.sub(fix, body)


#: Where the template puts the navigation and the intro: filled in after the notebook's own links are
#: pointed at the site (those are relative to notebooks/, the navigation's to the site's root).
_NAV_SLOT, _INTRO_SLOT = "<!-- crepe:site-nav -->", "<!-- crepe:site-intro -->"


def notebook_page(executed: Path, stem: str, label: str, targets: dict[str, str] | None = None) -> str:
    """An executed notebook as a page of the site (the lab look; figures are embedded in the page; code
    inputs folded away, each behind its own switch, all behind the page's). Links in its Markdown are
    relative to ``notebooks/`` (``03_productivity.ipynb``, ``../docs/traps.md``) and point into the site."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(executed, as_version=4)
    first = next((c.source for c in nb.cells if c.cell_type == "markdown"), "")
    title = re.sub(r"^#+\s*", "", first.strip().splitlines()[0]) if first.strip() else label
    current = next(p for p in NAV if p.file == f"{stem}.html")
    n_code = 0
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            cell.metadata["crepe_site"] = {"code_id": f"code-{i}"}
            n_code += 1
    switch = ' · <label class="code-all" for="show-all-code"></label>' if n_code else ""
    intro = (f'<p class="site-intro">Executed notebook <code>notebooks/{stem}.ipynb</code>, as <code>make all</code> '
             f'last ran it · <a href="notebooks/{stem}.ipynb">download the executed notebook</a>{switch}</p>')
    exporter = HTMLExporter(template_name="crepe", extra_template_basedirs=[str(TEMPLATES)])
    body, _ = exporter.from_notebook_node(nb, resources={
        "metadata": {"name": f"{title} · CREPE companion"}, "site_css": css(), "site_nav": _NAV_SLOT,
        "site_intro": _INTRO_SLOT})
    if targets is not None:
        body = rewrite_links(body, targets, str(executed), base="notebooks")
    return plain_marks(body.replace(_NAV_SLOT, nav(current)).replace(_INTRO_SLOT, intro))


def figures_page(figures: list[Path]) -> str:
    items = []
    for png in figures:
        svg = png.with_suffix(".svg")
        also = f' · <a href="{svg.name}">SVG</a>' if svg.is_file() else ""
        items.append(f'<h3 id="{png.stem}">{html.escape(png.stem)}</h3>\n'
                     f'<p><a href="{png.name}">PNG</a>{also}</p>\n<img src="{png.name}" alt="{html.escape(png.stem)}">')
    intro = "<h1>Figures</h1>\n<p>Every figure in <code>figures/</code>, as the notebooks last wrote it.</p>"
    return page("Figures", intro + "\n" + "\n".join(items), FIGURES, prefix="../")


def tables_page(tables: list[Path]) -> str:
    items = []
    for md in tables:
        links = " · ".join(f'<a href="{md.with_suffix(ext).name}">{ext[1:].upper()}</a>'
                           for ext in (".csv", ".tex", ".md") if md.with_suffix(ext).is_file())
        items.append(f'<h3 id="{md.stem}">{html.escape(md.stem)}</h3>\n<p>{links}</p>\n'
                     + markdown(md.read_text(encoding="utf-8")))
    intro = ("<h1>Tables</h1>\n<p>Every table in <code>tables/</code> (CSV at full precision, Markdown, LaTeX "
             "booktabs), as the notebooks and <code>make check</code> last wrote it.</p>")
    return page("Tables", intro + "\n" + "\n".join(items), TABLES, prefix="../")


def docs_page(source: Path, stem: str, label: str, targets: dict[str, str], tables_dir: Path) -> str:
    """A Markdown page of docs/ as a page of the site; the claims page shows the full checks table."""
    text = source.read_text(encoding="utf-8")
    if stem == "claims":
        if CLAIMS_START not in text or CLAIMS_END not in text:
            raise SiteError(f"{source} lacks the claims markers {CLAIMS_START} … {CLAIMS_END}")
        text = re.sub(re.escape(CLAIMS_START) + ".*?" + re.escape(CLAIMS_END),
                      lambda _: (tables_dir / "checks.md").read_text(encoding="utf-8"), text, flags=re.S)
    current = next(p for p in NAV if p.file == f"{stem}.html")
    return page(label, rewrite_links(markdown(text), targets, str(source), base="docs"), current)


def build(build_dir: Path, out: Path, readme: Path, figures_dir: Path, tables_dir: Path,
          docs_dir: Path | None = None) -> list[Path]:
    """Write the site into ``out`` (replacing what a previous build left there); returns the pages.

    ``docs_dir`` holds the Markdown pages (default: ``docs/`` beside the README).
    """
    docs_dir = readme.parent / "docs" if docs_dir is None else docs_dir
    absent = [str(docs_dir / f"{stem}.md") for stem, _ in DOCS if not (docs_dir / f"{stem}.md").is_file()]
    if absent:
        raise SiteError(f"no page {', '.join(absent)}")
    missing = [build_dir / f"{stem}.ipynb" for stem, _ in NOTEBOOKS if not (build_dir / f"{stem}.ipynb").is_file()]
    if missing:
        raise SiteError(f"no executed notebook {', '.join(map(str, missing))}: run `make all` first")
    if not (tables_dir / "checks.md").is_file():
        raise SiteError(f"no {tables_dir / 'checks.md'}: run `make all` (or `make check`) first")
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "notebooks").mkdir(parents=True)
    shutil.copytree(figures_dir, staging / "figures")
    shutil.copytree(tables_dir, staging / "tables")
    for stem, _ in NOTEBOOKS:
        shutil.copy2(build_dir / f"{stem}.ipynb", staging / "notebooks" / f"{stem}.ipynb")
    files = {p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file()}
    targets = link_targets(files)

    text = readme.read_text(encoding="utf-8")
    pages: dict[str, str] = {HOME.file: page("Home", rewrite_links(markdown(text), targets, str(readme)), HOME)}
    for stem, label in DOCS:
        pages[f"{stem}.html"] = docs_page(docs_dir / f"{stem}.md", stem, label, targets, tables_dir)
    for stem, label in NOTEBOOKS:
        pages[f"{stem}.html"] = notebook_page(build_dir / f"{stem}.ipynb", stem, label, targets)
    pages[FIGURES.file] = figures_page(sorted((staging / "figures").glob("*.png")))
    pages[TABLES.file] = tables_page(sorted((staging / "tables").glob("*.md")))
    for name, body in pages.items():                         # a caption's NUL or bidi override shown as text
        write_text(staging / name, escaping.page(body))
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    return [out / name for name in pages]


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
    try:
        pages = build(build_dir, out, Path(args.readme), Path(args.figures_dir), Path(args.tables_dir),
                      Path(args.docs_dir) if args.docs_dir else None)
    except SiteError as exc:
        print(error_line(exc), file=sys.stderr)
        return 1
    print(f"site: {len(pages)} pages in {out}; open {out / HOME.file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
