"""``make docs-check``: open every page of the site in headless Chromium, as a reader would.

``python -m crepe_utils.site.check build/site --screenshots build/docs-check``. Fails (exit 1,
each problem named by page) on

* a page that does not load, an image that does not load or has no alt text, a script error, any
  request for something other than a file of the site (a CDN script, a web font);
* a local link whose file or ``#anchor`` does not exist;
* a notebook page that shows fewer figures than its executed notebook holds, or none at all, or a figure
  that is not a numbered figure with a caption;
* a table cell cut with "..." (pandas' display limits), or one that says NaN;
* a prompt (``Out[3]:``), a log line (:data:`LOG_LINE`) or a stderr output shown on a page;
* markup from data that became markup (a script, frame or event handler inside a page's article), or text
  escaped twice (an entity such as ``&lt;`` shown as typed);
* a search (the search page, offline) that finds nothing for :data:`SEARCH_TERM`;
* an absolute path of a building machine (``/home/...``, ``/tmp/...``, this machine's project, data,
  home and temporary folders) in a page or in an executed notebook the site offers for download;
* code shown by default on a notebook page, or a cell's "show code" switch that does not show it;
* a character that many fonts lack (an emoji status mark), which renders as an empty box there.

Prints per page what it found and the totals; saves full-page screenshots of a few pages.

Chromium is the system's (``apt-get install chromium`` on Debian), driven by Playwright (the
``docs`` extra: ``pip install '.[docs]'``); Playwright's own browser download is not used.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..errors import CrepeError, error_line
from ..paths import machine_roots

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Flags of a quiet headless run on a machine without network: no first-run work, no background fetches.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-quic", "--disable-extensions",
                  "--hide-scrollbars", "--mute-audio")
SCREENSHOT_PAGES = ("index.html", "notebooks/00_how_compositionality_is_evaluated.html",
                    "notebooks/02_systematicity.html", "docs/claims.html", "gallery.html")
#: A word every build of the book holds (the README's): the search page must find it.
SEARCH_TERM = "compositionality"
#: A line of a log or a cache's chatter in a notebook's outputs: a logging level at its start (``INFO:name:``,
#: ``[WARNING]``, ``WARNING -``), a timestamp at its start, a cache's hit/miss/loaded message, or a stage's
#: cache report (``world: results/toy/world (cached; key 0935ae404336)``).
LOG_LINE = re.compile(r"^\s*(?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?::[\w.]*:| -|:\s)"
                      r"|\[(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\]"
                      r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d"
                      r"|.*\bcache (?:hit|miss|loaded|written|saved)\b|.*\(cached\b[^)]*\bkey [0-9a-f]{6,})", re.I | re.M)
#: A Jupyter prompt in a page's text (``Out[3]:``, ``In [2]:``): the book shows no execution counts.
PROMPT = re.compile(r"\b(?:Out|In ?)\[\d*\]:")
#: An HTML entity shown to the reader as typed: a text escaped twice.
DOUBLE_ESCAPED = re.compile(r"&(?:lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);")
#: What a table cell of missing values says when a notebook left pandas' default in.
NAN_CELLS = ("NaN", "nan", "<NA>", "NaT")
VIEWPORT = (1280, 900)
MAX_SCREENSHOT_HEIGHT = 7000
PAGE_TIMEOUT_S = 60.0

#: Runs in the page once it has loaded: waits for every image, then reports what the checks need.
INSPECT_JS = """(async () => {
  const images = Array.from(document.images);
  await Promise.all(images.map(i => i.complete ? null : new Promise(done => { i.onload = i.onerror = done; })));
  const shown = e => e.checkVisibility ? e.checkVisibility() : e.getClientRects().length > 0;
  return {
    title: document.title,
    images: images.map(i => ({src: (i.getAttribute("src") || "").slice(0, 100), loaded: i.complete && i.naturalWidth > 0,
                              alt: i.alt || ""})),
    links: Array.from(document.querySelectorAll("a[href]")).map(a => a.getAttribute("href")),
    ids: Array.from(document.querySelectorAll("[id]")).map(e => e.id),
    cut: Array.from(document.querySelectorAll("td, th")).map(c => c.textContent.trim())
              .filter(t => t.endsWith("...")).map(t => t.slice(-60)),
    cells: Array.from(document.querySelectorAll("td, th")).map(c => c.textContent.trim()),
    code: Array.from(document.querySelectorAll(".cell_input")).length,
    codeShown: Array.from(document.querySelectorAll(".cell_input")).filter(shown).length,
    uncaptioned: Array.from(document.querySelectorAll("article img")).filter(i => {
      const f = i.closest("figure");
      return !(f && f.querySelector("figcaption .caption-number") && f.querySelector("figcaption .caption-text"));
    }).map(i => (i.getAttribute("src") || "").slice(0, 100)),
    stderr: document.querySelectorAll(".output.stderr").length,
    markup: Array.from(document.querySelectorAll("article script, article iframe, article object, article embed, "
                       + "article [onload], article [onerror], article [onclick], article [onmouseover]"))
              .map(e => e.outerHTML.slice(0, 80)),
    article: (document.querySelector("article") || document.body || {innerText: ""}).innerText,
    outputs: Array.from(document.querySelectorAll(".cell_output")).map(e => e.innerText).join("\\n"),
    text: document.body ? document.body.innerText : "",
    height: Math.ceil(document.documentElement.scrollHeight),
  };
})()"""
SHOWN_CODE_JS = """Array.from(document.querySelectorAll(".cell_input"))
  .filter(e => e.checkVisibility ? e.checkVisibility() : e.getClientRects().length > 0).length"""
#: The search page's results once its script has searched (a list of links to pages).
SEARCH_ANSWERED_JS = """() => window.__crepe_search_error || document.querySelector("#search-results li a")
  || (document.querySelector("#search-results .search-summary") || {}).textContent"""
SEARCH_RESULTS_JS = """Array.from(document.querySelectorAll("#search-results li a")).map(a => a.getAttribute("href"))"""

#: Characters that a machine without an emoji or symbol font draws as an empty box: emoji, dingbats,
#: miscellaneous symbols and pictographs, and the variation selector that asks for emoji presentation.
RARE_GLYPHS = re.compile("[\u2600-\u27bf\u2b00-\u2bff\ufe0f\U0001f000-\U0001faff]")
#: Folders of a building machine a page must not name (and, in :func:`absolute_paths`, this machine's own).
MACHINE_PATH = re.compile(r"(?<![\w.~/-])(?:/(?:home|root|tmp|work|Users|mnt|media|private|scratch|srv|"
                          r"var/folders)(?:/[\w.+-]+)+|[A-Z]:\\(?:Users|Windows)\\[\w.+\\-]*)")
_REST = r"(?:/[\w.+-]+)*"
_DATA_URI = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=\s]*")


class BrowserError(CrepeError, RuntimeError):
    """Chromium or its driver could not be started, or did not answer."""


def find_chromium(explicit: str | None = None) -> str:
    for name in ([explicit] if explicit else CHROMIUM_NAMES):
        found = shutil.which(name) or (name if name and os.path.isfile(name) else None)
        if found:
            return found
    raise BrowserError("no Chromium found: install it (Debian: `apt-get install chromium`) or pass --chromium PATH")


class Browser:
    """One headless Chromium page, driven by Playwright (the system's Chromium; nothing downloaded)."""

    def __init__(self, chromium: str, viewport=VIEWPORT, timeout: float = PAGE_TIMEOUT_S):
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            raise BrowserError("the docs check drives Chromium with Playwright: install the docs extra "
                               "(`pip install '.[docs]'`; `make docs-check` does)") from None
        from playwright.sync_api import Error as PlaywrightError

        self.Error, self.viewport, self.timeout_ms = PlaywrightError, viewport, timeout * 1000
        self.requests: list[str] = []
        self.errors: list[str] = []
        self._driver = sync_playwright().start()
        try:
            self._browser = self._driver.chromium.launch(executable_path=chromium, args=list(CHROMIUM_FLAGS),
                                                         headless=True, timeout=self.timeout_ms)
        except PlaywrightError as exc:
            self._driver.stop()
            raise BrowserError(f"{chromium} did not start: {str(exc).splitlines()[0]}") from None
        self.page = self._browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
        self.page.set_default_timeout(self.timeout_ms)
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        # an uncaught exception leaves a mark that a wait in the page can see (SEARCH_ANSWERED_JS); a rejected
        # promise does not (under file:// the search's fetch of each hit's summary is refused, and it goes on)
        self.page.add_init_script("window.addEventListener('error', () => { window.__crepe_search_error = true; });")

    def open(self, url: str) -> str | None:
        """Load ``url`` and wait for its load event; the error text when it does not load."""
        self.requests.clear()
        self.errors.clear()
        try:
            self.page.goto(url, wait_until="load", timeout=self.timeout_ms)
        except self.Error as exc:
            return str(exc).splitlines()[0]
        return None

    def evaluate(self, expression: str):
        try:
            return self.page.evaluate(expression)
        except self.Error as exc:
            raise BrowserError(f"script failed: {str(exc).splitlines()[0]}") from None

    def click(self, selector: str) -> bool:
        """Click the first element ``selector`` finds; whether there was one."""
        found = self.page.locator(selector).first
        if found.count() == 0:
            return False
        found.click()
        return True

    def screenshot(self, path: Path, height: int) -> Path:
        """The whole page (up to MAX_SCREENSHOT_HEIGHT pixels) as a PNG."""
        path.parent.mkdir(parents=True, exist_ok=True)
        clip = {"x": 0, "y": 0, "width": self.viewport[0], "height": max(self.viewport[1], min(height,
                                                                                            MAX_SCREENSHOT_HEIGHT))}
        self.page.screenshot(path=str(path), full_page=True, clip=clip)
        return path

    def close(self) -> None:
        try:
            self._browser.close()
        finally:
            self._driver.stop()


@dataclass
class PageReport:
    page: str
    images: int = 0
    loaded: int = 0
    links: int = 0
    cut_cells: int = 0
    absolute_paths: int = 0
    code_cells: int = 0
    code_shown: int = 0            #: code inputs visible as the page opens
    notebook: bool = False         #: a notebook page (an executed notebook behind it)
    problems: list[str] = field(default_factory=list)


def executed_notebook(site: Path, page: str) -> dict | None:
    """The executed notebook behind a notebook page, offered beside it (None: not a notebook page)."""
    executed = site / Path(page).with_suffix(".ipynb")
    if not page.startswith("notebooks/") or not executed.is_file():
        return None
    return json.loads(executed.read_text(encoding="utf-8"))


def expected_figures(site: Path, page: str) -> int | None:
    """How many figures the executed notebook behind a notebook page holds (None: not a notebook page)."""
    nb = executed_notebook(site, page)
    if nb is None:
        return None
    return sum(1 for c in nb["cells"] for o in c.get("outputs", [])
               if any(k in o.get("data", {}) for k in ("image/png", "image/svg+xml", "image/jpeg")))


def absolute_paths(text: str) -> list[str]:
    """The absolute paths of a building machine in ``text`` (embedded images left out): any under the
    usual home, work and temporary folders, and this machine's own project, data, home and temporary ones."""
    text = _DATA_URI.sub("", text)
    at: dict[int, str] = {}                  # where each path starts: the longest match there
    matches = list(MACHINE_PATH.finditer(text))
    for root, _ in machine_roots():
        matches += re.finditer(r"(?<![\w.~/-])" + re.escape(root) + _REST + r"(?=$|[/\\\s'\"<&,;:)\]])", text)
    for m in matches:
        if len(m.group(0)) > len(at.get(m.start(), "")):
            at[m.start()] = m.group(0)
    return [at[start] for start in sorted(at)]


def notebook_text(nb: dict) -> str:
    """An executed notebook as JSON without its images: what :func:`absolute_paths` reads of it."""
    def strip(obj):
        if isinstance(obj, dict):
            return {k: strip(v) for k, v in obj.items() if not k.startswith("image/")}
        if isinstance(obj, list):
            return [strip(v) for v in obj]
        return obj
    return json.dumps(strip(nb), ensure_ascii=False)


def _local_target(site: Path, page: str, href: str) -> tuple[Path | None, str]:
    """(the file a relative link points to, its fragment as written); no file for a same-page anchor."""
    parts = urlsplit(href)
    if not parts.path:
        return None, parts.fragment
    return (site / page).parent.joinpath(unquote(parts.path)).resolve(), parts.fragment


def _inspect(browser: Browser, site: Path, report: PageReport, info: dict) -> None:
    """Every check of one loaded page but its links (those need every page's ids)."""
    report.images, report.links = len(info["images"]), len(info["links"])
    report.loaded = sum(i["loaded"] for i in info["images"])
    report.problems += [f"image does not load: {i['src']}" for i in info["images"] if not i["loaded"]]
    report.problems += [f"image without alt text: {i['src']}" for i in info["images"] if not i["alt"]]
    expected = expected_figures(site, report.page)
    report.notebook = expected is not None
    if expected is not None and report.loaded < expected:
        report.problems.append(f"shows {report.loaded} figures; its executed notebook holds {expected}")
    if report.notebook and report.loaded == 0:
        report.problems.append("a notebook page without a figure")
    report.cut_cells = len(info["cut"])
    report.problems += [f"a table cell cut with '...': {t!r}" for t in info["cut"][:5]]
    nan = [t for t in info["cells"] if t in NAN_CELLS]
    report.problems += [f"{len(nan)} table cells say {nan[0]!r}"] if nan else []
    report.problems += [f"an image outside a numbered figure with a caption: {src}" for src in info["uncaptioned"][:5]]
    prompts = PROMPT.findall(info["article"])
    report.problems += [f"shows {len(prompts)} prompts such as {prompts[0]!r}"] if prompts else []
    logs = [m.group(0).strip()[:80] for m in LOG_LINE.finditer(info["outputs"])]
    report.problems += [f"shows {len(logs)} log lines, e.g. {logs[0]!r}"] if logs else []
    report.problems += [f"shows {info['stderr']} stderr outputs"] if info["stderr"] else []
    report.problems += [f"markup from a page's text became an element: {m}" for m in info["markup"][:5]]
    twice = sorted(set(DOUBLE_ESCAPED.findall(info["article"])))
    report.problems += [f"shows text escaped twice: {t!r}" for t in twice[:5]]
    if report.notebook:                                # a notebook is linked by its page, but for its own download
        own = Path(report.page).with_suffix(".ipynb").name
        report.problems += [f"links to a notebook's file, not its page: {h}" for h in info["links"]
                            if urlsplit(h).path.endswith(".ipynb") and urlsplit(h).path != own][:5]
    paths = absolute_paths((site / report.page).read_text(encoding="utf-8"))
    report.absolute_paths = len(paths)
    report.problems += [f"names a path of the building machine: {p}" for p in paths[:5]]
    glyphs = sorted(set(RARE_GLYPHS.findall(info["text"])) - {"\ufe0f"})
    report.problems += [f"shows {g!r} (U+{ord(g):04X}), which fonts without emoji draw as an empty box"
                        for g in glyphs]
    report.code_cells, report.code_shown = info["code"], info["codeShown"]
    if report.code_shown:
        report.problems.append(f"shows {report.code_shown} of {report.code_cells} code inputs as it opens "
                               "(code is folded away by default)")
    if report.code_cells and not report.code_shown:
        _check_switch(browser, report)
    report.problems += [f"requests something outside the site: {u}" for u in browser.requests
                        if not u.startswith(("file:", "data:", "about:"))]
    report.problems += [f"script error: {e}" for e in browser.errors]


def _check_switch(browser: Browser, report: PageReport) -> None:
    """A cell's "show code" switch (the theme's folded block) shows its code, and folds it again."""
    summary = "details.hide.above-input > summary"
    if not browser.click(summary):
        report.problems.append("has code cells without a 'show code' switch")
    elif browser.evaluate(SHOWN_CODE_JS) != 1:
        report.problems.append("a cell's 'show code' switch does not show its code")
    else:
        browser.click(summary)


def check_search(browser: Browser, site: Path, term: str = SEARCH_TERM) -> list[str]:
    """Type ``term`` into the search page, as a reader would: the problems (no result, no search box)."""
    if browser.open((site / "search.html").as_uri()):
        return ["the search page does not load"]
    box = browser.page.locator("form input[name=q]:visible").first
    if box.count() == 0:
        return ["the search page has no search box in view"]
    try:
        box.fill(term)
        box.press("Enter")
        # the search has answered once it lists a page or says in its summary what it found; a script error
        # (a damaged index) stops it for good, so that ends the wait too rather than the page timeout
        browser.page.wait_for_function(SEARCH_ANSWERED_JS, timeout=browser.timeout_ms, polling=100)
    except browser.Error:
        return [f"searching for {term!r} finds nothing"]
    if browser.evaluate(SEARCH_RESULTS_JS):
        return []
    stopped = browser.evaluate("window.__crepe_search_error === true")
    return [f"searching for {term!r} finds nothing"] + [f"the search stopped: {e}" for e in browser.errors[:stopped]]


def _downloads(site: Path) -> list[PageReport]:
    """The executed notebooks the site offers for download: each must name no path of the building machine."""
    reports = []
    for path in sorted((site / "notebooks").glob("*.ipynb")):
        report = PageReport(path.relative_to(site).as_posix())
        found = absolute_paths(notebook_text(json.loads(path.read_text(encoding="utf-8"))))
        report.absolute_paths = len(found)
        report.problems += [f"names a path of the building machine: {p}" for p in found[:5]]
        reports.append(report)
    return reports


def check_site(site: Path, chromium: str | None = None, screenshots: Path | None = None) -> list[PageReport]:
    site = site.resolve()
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                   if not p.relative_to(site).as_posix().startswith("_"))     # the theme's own files
    if "index.html" not in pages:
        raise BrowserError(f"{site} holds no index.html: run `make docs` first")
    browser = Browser(find_chromium(chromium))
    reports, seen_ids, links = [], {}, {}
    try:
        for page in pages:
            report = PageReport(page)
            reports.append(report)
            error = browser.open((site / page).as_uri())
            if error:
                report.problems.append(f"does not load: {error}")
                continue
            info = browser.evaluate(INSPECT_JS)
            seen_ids[page], links[page] = set(info["ids"]), info["links"]
            if screenshots is not None and page in SCREENSHOT_PAGES:
                browser.screenshot(screenshots / (page.replace("/", "_")[:-len(".html")] + ".png"), info["height"])
            _inspect(browser, site, report, info)
        search = PageReport("search.html (a search for " + repr(SEARCH_TERM) + ")")
        search.problems = check_search(browser, site)
        reports.append(search)
    finally:
        browser.close()
    for report in reports:
        report.problems += _link_problems(site, report.page, links.get(report.page, []), seen_ids)
    return reports + _downloads(site)


def _link_problems(site: Path, page: str, hrefs: list[str], seen_ids: dict[str, set[str]]) -> list[str]:
    out = []
    for href in hrefs:
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", href):
            continue                                  # https:, mailto: links leave the site by the reader's choice
        target, fragment = _local_target(site, page, href)
        if target is not None and (site not in target.parents or not target.is_file()):
            out.append(f"broken link: {href}")
            continue
        name = page if target is None else target.relative_to(site).as_posix()
        # a browser matches a fragment as written and percent-decoded
        if fragment and name in seen_ids and not {fragment, unquote(fragment)} & seen_ids[name]:
            out.append(f"broken anchor: {href}")
    return out


def totals(reports: list[PageReport]) -> dict[str, int]:
    """What the issue counts: cut cells, absolute paths, pages showing code, notebook pages without a figure."""
    return {"cut cells": sum(r.cut_cells for r in reports),
            "absolute paths": sum(r.absolute_paths for r in reports),
            "pages showing code": sum(r.code_shown > 0 for r in reports),
            "notebook pages without a figure": sum(r.notebook and r.loaded == 0 for r in reports)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crepe_utils.site.check", description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", default="build/site", help="the site folder (default: build/site)")
    parser.add_argument("--screenshots", default=None, help="folder for the screenshots (default: <site>/../docs-check)")
    parser.add_argument("--chromium", default=None, help="the browser (default: chromium on PATH)")
    args = parser.parse_args(argv)
    site = Path(args.site)
    shots = Path(args.screenshots) if args.screenshots else site.parent / "docs-check"
    try:
        reports = check_site(site, args.chromium, shots)
    except BrowserError as exc:
        print(error_line(exc), file=sys.stderr)
        return 1
    failed = [r for r in reports if r.problems]
    for r in reports:
        seen = (f"{r.loaded}/{r.images} images loaded, {r.links} links" if r.page.endswith(".html")
                else "download" if r.page.endswith(".ipynb") else "")
        print(f"{'FAIL' if r.problems else 'ok  '}  {r.page:<44} {seen}")
        for problem in r.problems:
            print(f"        {problem}")
    print("docs-check: " + ", ".join(f"{v} {k}" for k, v in totals(reports).items()))
    print(f"docs-check: {len(reports)} pages and downloads of {site}, {len(failed)} with problems; "
          f"screenshots in {shots}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
