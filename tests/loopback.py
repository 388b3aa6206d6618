"""A loopback HTTP server for the download tests, and fixture archives in CREPE's real layout.

The server (stdlib ``http.server`` on 127.0.0.1, port 0) honours ``Range``/``If-Range``, logs every
request, and can be told to answer an HTTP status, cut the connection after N bytes, ignore ``Range``
or redirect. Nothing here leaves the machine.
"""
from __future__ import annotations

import hashlib
import io
import threading
import zipfile
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import helpers

PROD_CSV = "prod_hard_negatives/atom/prod_vg_hard_negs_atom_complexity_4.csv"
PROD_ROWS = [
    dict(image_id=13, caption="red car next to a tree", x=237, y=391, width=402, height=208,
         hard_negs=["blue car next to a tree", "red bus next to a tree", "red car under a tree",
                    "red car next to a bush", "green car next to a tree"]),
    dict(image_id=286, caption="man on a wooden chair", x=10, y=20, width=300, height=200,
         hard_negs={"woman on a wooden chair", "man on a metal chair", "man under a wooden chair",
                    "man on a wooden table", "boy on a wooden chair"}),
]


# ------------------------------------------------------------------------------- fixtures

def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def prod_archive(folder: Path) -> bytes:
    """CREPE's productivity archive in its real layout, macOS junk included (CSVs written to ``folder``)."""
    csv_path = helpers.write_productivity_csv(folder / "p.csv", PROD_ROWS, 4)
    csv_bytes = csv_path.read_bytes()
    return make_zip({
        "prod_hard_negatives/": b"",
        PROD_CSV: csv_bytes,
        "prod_hard_negatives/swap/prod_vg_hard_negs_swap_complexity_4.csv": csv_bytes.replace(b"red", b"tan"),
        "prod_hard_negatives/.DS_Store": b"\0junk",
        "__MACOSX/prod_hard_negatives/atom/._prod_vg_hard_negs_atom_complexity_4.csv": b"\0junk",
    })


def syst_archive(folder: Path) -> bytes:
    path = helpers.write_systematicity_csv(folder / "s.csv", [
        dict(image_id=2, caption="a red brick sidewalk", x=346, y=329, width=452, height=269,
             atom=["a white brick sidewalk"], comp=["a red mall and blue sidewalk"])])
    return make_zip({"syst_hard_negatives/syst_vg_hard_negs_seen_compounds_in_laion.csv": path.read_bytes(),
                     "__MACOSX/._x": b"junk"})


@dataclass
class Fault:
    """What the server does to one request: answer ``status``, or cut the body after ``cut_after`` bytes."""

    status: int | None = None
    cut_after: int | None = None


class LoopbackServer:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.headers: dict[str, dict[str, str]] = {}     # path → extra response headers
        self.faults: dict[str, list[Fault]] = {}         # path → faults, one per request, in order
        self.ignore_range: set[str] = set()
        self.redirects: dict[str, str] = {}              # path → Location
        self.requests: list[tuple[str, dict[str, str]]] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self.base = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True)
        self._thread.start()

    def url(self, name: str) -> str:
        return f"{self.base}/{name}"

    def etag(self, path: str) -> str:
        return '"%s"' % sha256(self.files[path])[:16]

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        srv: LoopbackServer = self.server.owner
        srv.requests.append((self.path, dict(self.headers)))
        if self.path in srv.redirects:
            self.send_response(302)
            self.send_header("Location", srv.redirects[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        queued = srv.faults.get(self.path)
        fault = queued.pop(0) if queued else Fault()
        if fault.status:
            self.send_error(fault.status)
            return
        data = srv.files.get(self.path)
        if data is None:
            self.send_error(404)
            return
        start, status = 0, 200
        wanted = self.headers.get("Range")
        if wanted and self.path not in srv.ignore_range and self.headers.get("If-Range", srv.etag(self.path)) \
                == srv.etag(self.path):
            start, status = int(wanted.removeprefix("bytes=").split("-")[0]), 206
        body = data[start:]
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", srv.etag(self.path))
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        for key, value in srv.headers.get(self.path, {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body if fault.cut_after is None else body[:fault.cut_after])
