"""``make docs-check``: open every page of the site in headless Chromium, as a reader would.

``python -m crepe_utils.site.check build/site --screenshots build/docs-check``. Fails (exit 1,
each problem named by page) on a page that does not load, an image that does not load, a
notebook page that shows fewer figures than its executed notebook holds, a local link whose file
or ``#anchor`` does not exist, any request for something other than a file of the site (a CDN
script, a web font), and a script error. Saves full-page screenshots of the landing page and of
one notebook page.

Chromium is driven over its DevTools protocol on a loopback port (websocket-client, a dependency
of Jupyter); it is the system's package: ``apt-get install chromium`` on Debian.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..errors import CrepeError, error_line

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Flags of a quiet headless run on a machine without network: no first-run work, no background fetches.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-quic", "--disable-extensions",
                  "--hide-scrollbars", "--mute-audio", "--remote-debugging-port=0")
SCREENSHOT_PAGES = ("index.html", "02_systematicity.html")
VIEWPORT = (1280, 900)
MAX_SCREENSHOT_HEIGHT = 7000
PAGE_TIMEOUT_S = 60.0

#: Runs in the page once it has loaded: waits for every image, then reports images, links and ids.
INSPECT_JS = """(async () => {
  const images = Array.from(document.images);
  await Promise.all(images.map(i => i.complete ? null : new Promise(done => { i.onload = i.onerror = done; })));
  return {
    title: document.title,
    images: images.map(i => ({src: (i.getAttribute("src") || "").slice(0, 100), loaded: i.complete && i.naturalWidth > 0,
                              alt: i.alt || ""})),
    links: Array.from(document.querySelectorAll("a[href]")).map(a => a.getAttribute("href")),
    ids: Array.from(document.querySelectorAll("[id]")).map(e => e.id),
    height: Math.ceil(document.documentElement.scrollHeight),
  };
})()"""


class BrowserError(CrepeError, RuntimeError):
    """Chromium could not be started or did not answer."""


def find_chromium(explicit: str | None = None) -> str:
    for name in ([explicit] if explicit else CHROMIUM_NAMES):
        found = shutil.which(name) or (name if name and os.path.isfile(name) else None)
        if found:
            return found
    raise BrowserError("no Chromium found: install it (Debian: `apt-get install chromium`) or pass --chromium PATH")


class Browser:
    """One headless Chromium tab, driven over the DevTools protocol (loopback only)."""

    def __init__(self, chromium: str, viewport=VIEWPORT, timeout: float = PAGE_TIMEOUT_S):
        import websocket

        self.timeout, self.viewport = timeout, viewport
        self.profile = tempfile.mkdtemp(prefix="crepe-chromium-")
        self.proc = subprocess.Popen([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not (port_file.is_file() and len(port_file.read_text().split()) == 2):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise BrowserError(f"{chromium} did not start (exit status {self.proc.returncode})")
            time.sleep(0.1)
        port, path = port_file.read_text().split()
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}{path}", timeout=timeout, suppress_origin=True)
        self.next_id, self.events, self.session = 0, [], None
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable")
        self._viewport(*viewport)

    def _receive(self) -> dict:
        message = json.loads(self.ws.recv())
        if "id" not in message:
            self.events.append(message)
        return message

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        self.ws.send(json.dumps(message))
        while True:
            reply = self._receive()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})

    def _viewport(self, width: int, height: int) -> None:
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def open(self, url: str) -> str | None:
        """Load ``url`` and wait for its load event; the error text when it does not load."""
        self.events.clear()
        result = self.call("Page.navigate", url=url)
        if result.get("errorText"):
            return result["errorText"]
        deadline = time.monotonic() + self.timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.monotonic() > deadline:
                return f"no load event within {self.timeout:.0f} s"
            self._receive()
        return None

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"script failed: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def requested(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def script_errors(self) -> list[str]:
        return [e["params"]["exceptionDetails"].get("text", "error") for e in self.events
                if e.get("method") == "Runtime.exceptionThrown"]

    def screenshot(self, path: Path, height: int) -> Path:
        """The whole page (up to MAX_SCREENSHOT_HEIGHT pixels) as a PNG."""
        width = self.viewport[0]
        self._viewport(width, max(self.viewport[1], min(height, MAX_SCREENSHOT_HEIGHT)))
        data = self.call("Page.captureScreenshot", format="png")["data"]
        self._viewport(*self.viewport)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


@dataclass
class PageReport:
    page: str
    images: int = 0
    loaded: int = 0
    links: int = 0
    problems: list[str] = field(default_factory=list)


def expected_figures(site: Path, page: str) -> int | None:
    """How many figures the executed notebook behind a notebook page holds (None: not a notebook page)."""
    executed = site / "notebooks" / Path(page).with_suffix(".ipynb").name
    if "/" in page or not executed.is_file():
        return None
    nb = json.loads(executed.read_text(encoding="utf-8"))
    return sum(1 for c in nb["cells"] for o in c.get("outputs", [])
               if any(k in o.get("data", {}) for k in ("image/png", "image/svg+xml", "image/jpeg")))


def _local_target(site: Path, page: str, href: str) -> tuple[Path | None, str]:
    """(the file a relative link points to, its fragment as written); no file for a same-page anchor."""
    parts = urlsplit(href)
    if not parts.path:
        return None, parts.fragment
    return (site / page).parent.joinpath(unquote(parts.path)).resolve(), parts.fragment


def check_site(site: Path, chromium: str | None = None, screenshots: Path | None = None) -> list[PageReport]:
    site = site.resolve()
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
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
            seen_ids[page] = set(info["ids"])
            links[page] = info["links"]
            report.images, report.links = len(info["images"]), len(info["links"])
            report.loaded = sum(i["loaded"] for i in info["images"])
            report.problems += [f"image does not load: {i['src']}" for i in info["images"] if not i["loaded"]]
            report.problems += [f"image without alt text: {i['src']}" for i in info["images"] if not i["alt"]]
            expected = expected_figures(site, page)
            if expected is not None and report.loaded < expected:
                report.problems.append(f"shows {report.loaded} figures; its executed notebook holds {expected}")
            report.problems += [f"requests something outside the site: {u}" for u in browser.requested()
                                if not u.startswith(("file:", "data:", "about:"))]
            report.problems += [f"script error: {e}" for e in browser.script_errors()]
            if screenshots is not None and page in SCREENSHOT_PAGES:
                browser.screenshot(screenshots / Path(page).with_suffix(".png").name, info["height"])
    finally:
        browser.close()
    for report in reports:
        for href in links.get(report.page, []):
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", href):
                continue                                  # https:, mailto: links leave the site by the reader's choice
            target, fragment = _local_target(site, report.page, href)
            if target is not None and (site not in target.parents or not target.is_file()):
                report.problems.append(f"broken link: {href}")
                continue
            name = report.page if target is None else target.relative_to(site).as_posix()
            # a browser matches a fragment as written and percent-decoded
            if fragment and name in seen_ids and not {fragment, unquote(fragment)} & seen_ids[name]:
                report.problems.append(f"broken anchor: {href}")
    return reports


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
        print(f"{'FAIL' if r.problems else 'ok  '}  {r.page:<32} {r.loaded}/{r.images} images loaded, {r.links} links")
        for problem in r.problems:
            print(f"        {problem}")
    print(f"docs-check: {len(reports)} pages of {site}, {len(failed)} with problems; screenshots in {shots}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
