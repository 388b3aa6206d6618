"""The downloader against a loopback HTTP server (tests/loopback.py): resume, verification, errors,
extraction, CLI. Nothing here leaves the machine.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from crepe_utils.download import datasets
from crepe_utils import download
from crepe_utils.benchmarks.crepe.queries import load_productivity
from crepe_utils.download.datasets import Checksum, DatasetTableError, Extraction, RemoteFile
from crepe_utils.download import MARKER_NAME, RECORD_NAME, DownloadError, Downloader
from crepe_utils.download.transport import TransferPolicy
from crepe_utils import benchmarks
from crepe_utils.commands import download as download_command
from crepe_utils.benchmarks.winoground import datasets as wg_datasets
import cli_runner
from loopback import (PROD_CSV, PROD_ROWS, Fault, LoopbackServer, git_blob_sha1, make_zip, prod_archive, sha256,
                      syst_archive)

PROJECT_ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def prod_zip(tmp_path_factory) -> bytes:
    return prod_archive(tmp_path_factory.mktemp("csv"))


@pytest.fixture(scope="module")
def syst_zip(tmp_path_factory) -> bytes:
    return syst_archive(tmp_path_factory.mktemp("syst"))


@pytest.fixture
def server():
    srv = LoopbackServer()
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch, tmp_path):
    """No proxies, tokens, mirrors or overrides leak in from the developer's environment."""
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "HF_TOKEN",
                 "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", datasets.MIRROR_ENV, datasets.OVERRIDE_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))


def prod_entry(server: LoopbackServer, data: bytes, **changes) -> RemoteFile:
    """The table's CREPE productivity entry, pointed at the server and pinned to ``data``."""
    server.files.setdefault("/prod_hard_negatives.zip", data)
    entry = next(f for f in benchmarks.DATASETS.files() if f.name == "crepe-prod")
    fields = dict(url=server.url("prod_hard_negatives.zip"), mirrors=(),
                  checksum=Checksum("git-blob-sha1", git_blob_sha1(data)))
    return replace(entry, **{**fields, **changes})


def make_downloader(entries: list[RemoteFile], dest: Path, **kwargs) -> Downloader:
    policy = TransferPolicy(attempts=kwargs.pop("attempts", 3), retry_wait=0)
    return Downloader(entries, dest, policy=policy, out=io.StringIO(), **kwargs)


def record(dest: Path) -> dict:
    return json.loads((dest / RECORD_NAME).read_text())["files"]


def leftovers(dest: Path) -> list[str]:
    return sorted(p.name for p in dest.iterdir() if p.name.endswith((".part", ".part.json", ".bad")))


# ------------------------------------------------------------------------------- happy path, extraction

def test_download_verifies_records_and_extracts_in_archive_layout(server, prod_zip, tmp_path):
    make_downloader([prod_entry(server, prod_zip)], tmp_path).run()

    assert (tmp_path / PROD_CSV).is_file()
    assert (tmp_path / "prod_hard_negatives/swap/prod_vg_hard_negs_swap_complexity_4.csv").is_file()
    assert not list(tmp_path.rglob("__MACOSX")) and not list(tmp_path.rglob(".DS_Store"))
    assert not list(tmp_path.glob(".crepe-extract-*")) and leftovers(tmp_path) == []
    info = record(tmp_path)["prod_hard_negatives.zip"]
    assert info["sha256"] == sha256(prod_zip)
    assert info["digests"]["git-blob-sha1"] == git_blob_sha1(prod_zip)
    assert info["url"] == server.url("prod_hard_negatives.zip")
    marker = json.loads((tmp_path / "prod_hard_negatives" / MARKER_NAME).read_text())
    assert marker["sha256"] == sha256(prod_zip) and marker["files"] == 2   # junk entries skipped
    queries = load_productivity(tmp_path, ["atom"], [4])
    assert [q.image_id for q in queries] == ["13", "286"]
    assert queries.queries[0].positive == "red car next to a tree"


def test_bare_archive_lands_under_its_folder(server, tmp_path):
    data = make_zip({"atom/prod_vg_hard_negs_atom_complexity_4.csv": b"image_id\n"})
    make_downloader([prod_entry(server, data)], tmp_path).run()
    assert (tmp_path / PROD_CSV).read_bytes() == b"image_id\n"


def test_archive_without_required_top_folder_is_refused(server, tmp_path):
    data = make_zip({"1.jpg": b"jpeg", "2.jpg": b"jpeg"})
    entry = prod_entry(server, data, extract=Extraction("VG_100K", root_required=True))
    with pytest.raises(DownloadError, match=r"should hold everything under VG_100K/.*\['1.jpg', '2.jpg'\]"):
        make_downloader([entry], tmp_path).run()
    assert not (tmp_path / "prod_hard_negatives.zip").exists() and not (tmp_path / "VG_100K").exists()


def test_interrupted_extraction_is_redone_and_hand_placed_folders_are_left_alone(server, prod_zip, tmp_path):
    entry = prod_entry(server, prod_zip)
    make_downloader([entry], tmp_path).run()
    # simulate a crash mid-extraction of a rerun: extracted folder gone, temporary folder half full
    shutil.rmtree(tmp_path / "prod_hard_negatives")
    (tmp_path / ".crepe-extract-prod_hard_negatives-x/prod_hard_negatives").mkdir(parents=True)
    server.requests.clear()
    make_downloader([entry], tmp_path).run()
    assert (tmp_path / PROD_CSV).is_file() and not list(tmp_path.glob(".crepe-extract-*"))
    assert server.requests == []   # the verified zip was reused

    by_hand = tmp_path / "other"
    (by_hand / "prod_hard_negatives").mkdir(parents=True)
    (by_hand / "prod_hard_negatives/mine.csv").write_text("keep me")
    downloader = make_downloader([entry], by_hand)
    downloader.run()
    assert (by_hand / "prod_hard_negatives/mine.csv").read_text() == "keep me"
    assert not (by_hand / "prod_hard_negatives.zip").exists() and server.requests == []
    assert "not extracted by this tool" in downloader.out.getvalue()


def test_remove_archives_keeps_the_record_and_skips_next_time(server, prod_zip, tmp_path):
    entry = prod_entry(server, prod_zip)
    make_downloader([entry], tmp_path, remove_archives=True).run()
    assert not (tmp_path / "prod_hard_negatives.zip").exists() and (tmp_path / PROD_CSV).is_file()
    assert record(tmp_path)["prod_hard_negatives.zip"]["sha256"] == sha256(prod_zip)
    server.requests.clear()
    make_downloader([entry], tmp_path).run()
    assert server.requests == []


# ------------------------------------------------------------------------------- already present

def test_verified_files_are_neither_fetched_nor_hashed_again(server, prod_zip, tmp_path, monkeypatch):
    entry = prod_entry(server, prod_zip)
    make_downloader([entry], tmp_path).run()
    server.requests.clear()

    def no_hashing(*args, **kwargs):
        raise AssertionError("a verified file was hashed again")

    monkeypatch.setattr(download.verification, "digests", no_hashing)
    downloader = make_downloader([entry], tmp_path)
    downloader.run()
    assert server.requests == []
    assert "already extracted and verified" in downloader.out.getvalue()
    shutil.rmtree(tmp_path / "prod_hard_negatives")   # the zip's record (size, mtime) still vouches for it
    make_downloader([entry], tmp_path).run()
    assert server.requests == [] and (tmp_path / PROD_CSV).is_file()


def test_bad_local_copy_is_moved_aside_and_downloaded_again(server, prod_zip, tmp_path):
    (tmp_path / "prod_hard_negatives.zip").write_bytes(b"not the archive")
    downloader = make_downloader([prod_entry(server, prod_zip)], tmp_path)
    downloader.run()
    assert (tmp_path / "prod_hard_negatives.zip.bad").read_bytes() == b"not the archive"
    assert (tmp_path / "prod_hard_negatives.zip").read_bytes() == prod_zip
    assert "failed verification" in downloader.out.getvalue()


# ------------------------------------------------------------------------------- verification

def test_checksum_mismatch_deletes_the_download_and_says_expected_vs_got(server, prod_zip, tmp_path):
    wrong = prod_zip[:-10] + b"0123456789"
    server.files["/prod_hard_negatives.zip"] = wrong           # the server serves wrong bytes
    entry = prod_entry(server, prod_zip)
    with pytest.raises(DownloadError) as err:
        make_downloader([entry], tmp_path).run()
    message = str(err.value)
    assert f"expected {git_blob_sha1(prod_zip)}" in message and f"got {git_blob_sha1(wrong)}" in message
    assert server.url("prod_hard_negatives.zip") in message
    assert str(tmp_path.resolve() / "prod_hard_negatives.zip") in message    # where to place it by hand
    assert not (tmp_path / "prod_hard_negatives.zip").exists() and leftovers(tmp_path) == []
    assert not (tmp_path / "prod_hard_negatives").exists()


def test_unpinned_file_is_checked_against_its_first_download(server, prod_zip, tmp_path):
    entry = prod_entry(server, prod_zip, checksum=None, name="vg-images-1")
    make_downloader([entry], tmp_path).run()
    assert record(tmp_path)["prod_hard_negatives.zip"]["checksum"] is None
    (tmp_path / "prod_hard_negatives.zip").unlink()
    shutil.rmtree(tmp_path / "prod_hard_negatives")
    server.files["/prod_hard_negatives.zip"] = make_zip({"prod_hard_negatives/x.csv": b"changed upstream"})
    with pytest.raises(DownloadError, match="recorded at the first download"):
        make_downloader([entry], tmp_path).run()


# ------------------------------------------------------------------------------- resume

def test_cut_connection_is_retried_with_a_range_request(server, prod_zip, tmp_path):
    cut = len(prod_zip) // 3
    server.faults["/prod_hard_negatives.zip"] = [Fault(cut_after=cut)]
    make_downloader([prod_entry(server, prod_zip)], tmp_path).run()
    assert len(server.requests) == 2
    retry = server.requests[1][1]
    assert retry["Range"] == f"bytes={cut}-" and retry["If-Range"] == server.etag("/prod_hard_negatives.zip")
    assert (tmp_path / "prod_hard_negatives.zip").read_bytes() == prod_zip


def test_interrupted_run_leaves_a_part_file_that_the_next_run_resumes(server, prod_zip, tmp_path):
    cut = len(prod_zip) // 2
    server.faults["/prod_hard_negatives.zip"] = [Fault(cut_after=cut)]
    entry = prod_entry(server, prod_zip)
    with pytest.raises(DownloadError, match=r"(?s)connection closed.*next run resumes it"):
        make_downloader([entry], tmp_path, attempts=1).run()
    assert (tmp_path / "prod_hard_negatives.zip.part").stat().st_size == cut
    assert not (tmp_path / "prod_hard_negatives.zip").exists()      # a partial never passes as complete

    make_downloader([entry], tmp_path).run()
    assert server.requests[-1][1]["Range"] == f"bytes={cut}-"
    assert record(tmp_path)["prod_hard_negatives.zip"]["sha256"] == sha256(prod_zip)
    assert leftovers(tmp_path) == []


def test_server_ignoring_range_restarts_cleanly(server, prod_zip, tmp_path):
    server.faults["/prod_hard_negatives.zip"] = [Fault(cut_after=100)]
    server.ignore_range.add("/prod_hard_negatives.zip")
    downloader = make_downloader([prod_entry(server, prod_zip)], tmp_path)
    downloader.run()
    assert server.requests[1][1]["Range"] == "bytes=100-"
    assert (tmp_path / "prod_hard_negatives.zip").read_bytes() == prod_zip     # not 100 bytes too many
    assert "ignored the range request" in downloader.out.getvalue()


def test_rejected_range_discards_the_partial_and_restarts(server, prod_zip, tmp_path):
    server.faults["/prod_hard_negatives.zip"] = [Fault(cut_after=100), Fault(status=416)]
    make_downloader([prod_entry(server, prod_zip)], tmp_path).run()
    assert [headers.get("Range") for _, headers in server.requests] == [None, "bytes=100-", None]
    assert (tmp_path / "prod_hard_negatives.zip").read_bytes() == prod_zip


def test_changed_remote_file_restarts_through_if_range(server, prod_zip, syst_zip, tmp_path):
    server.faults["/prod_hard_negatives.zip"] = [Fault(cut_after=100)]
    entry = prod_entry(server, prod_zip)
    with pytest.raises(DownloadError):
        make_downloader([entry], tmp_path, attempts=1).run()
    old_etag = server.etag("/prod_hard_negatives.zip")
    new = make_zip({"prod_hard_negatives/new.csv": b"new release"})
    server.files["/prod_hard_negatives.zip"] = new
    make_downloader([replace(entry, checksum=Checksum("sha256", sha256(new)))], tmp_path).run()
    assert server.requests[-1][1]["If-Range"] == old_etag
    assert (tmp_path / "prod_hard_negatives.zip").read_bytes() == new


# ------------------------------------------------------------------------------- errors

def test_404_names_the_url_and_where_to_place_the_file(server, prod_zip, tmp_path):
    entry = prod_entry(server, prod_zip, url=server.url("missing.zip"))
    with pytest.raises(DownloadError) as err:
        make_downloader([entry], tmp_path).run()
    message = str(err.value)
    assert f"{server.url('missing.zip')}: HTTP 404" in message
    assert str(tmp_path.resolve() / "prod_hard_negatives.zip") in message
    assert "revision" not in message          # a pinned commit of CREPE does not move
    assert len(server.requests) == 1                        # a 404 is not retried


def test_mirror_is_tried_when_the_url_fails(server, prod_zip, tmp_path):
    entry = prod_entry(server, prod_zip, url=server.url("missing.zip"),
                       mirrors=(server.url("prod_hard_negatives.zip"),))
    make_downloader([entry], tmp_path).run()
    assert [path for path, _ in server.requests] == ["/missing.zip", "/prod_hard_negatives.zip"]
    assert record(tmp_path)["prod_hard_negatives.zip"]["url"] == server.url("prod_hard_negatives.zip")


def test_server_errors_are_retried(server, prod_zip, tmp_path):
    server.faults["/prod_hard_negatives.zip"] = [Fault(status=503)]
    make_downloader([prod_entry(server, prod_zip)], tmp_path).run()
    assert len(server.requests) == 2 and (tmp_path / "prod_hard_negatives.zip").is_file()


def test_no_network_gives_a_clear_error(prod_zip, tmp_path):
    with socket.socket() as sock:           # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/prod_hard_negatives.zip"
    entry = replace(next(f for f in benchmarks.DATASETS.files() if f.name == "crepe-prod"), url=url, mirrors=())
    with pytest.raises(DownloadError) as err:
        make_downloader([entry], tmp_path).run()
    assert f"{url}: cannot connect" in str(err.value) and "CREPE_MIRROR" in str(err.value)
    assert not (tmp_path / "prod_hard_negatives.zip").exists()


def test_short_disk_is_refused_before_any_request(server, prod_zip, tmp_path, monkeypatch):
    monkeypatch.setattr(download.disk.shutil, "disk_usage", lambda path: type("U", (), {"free": 10**6})())
    entry = prod_entry(server, prod_zip, approx_size=5 * 10**9)   # download + extraction: 10 GB
    with pytest.raises(DownloadError, match=r"Not enough disk space.*10\.0 GB.*1\.0 MB free"):
        make_downloader([entry], tmp_path).run()
    assert server.requests == []


# ------------------------------------------------------------------------------- Winoground (gated)

def winoground_override(server: LoopbackServer, tmp_path: Path, images_zip: bytes) -> dict[str, str]:
    server.files["/examples.jsonl"] = b'{"id": 0, "caption_0": "an old person kisses a young person"}\n'
    server.files["/images.zip"] = images_zip
    override = tmp_path / "override.json"
    override.write_text(json.dumps({"winoground-examples": {"url": server.url("examples.jsonl")},
                                    "winoground-images": {"url": server.url("images.zip")}}))
    return {datasets.OVERRIDE_ENV: str(override)}


def test_winoground_without_token_fails_before_any_request(tmp_path, monkeypatch):
    def no_requests(*args, **kwargs):
        raise AssertionError("a request was made without a token")

    monkeypatch.setattr(download.transport.Transport, "_open", no_requests)
    entries = benchmarks.DATASETS.files_for("winoground", environ={})
    assert download_command.hub_token({"HF_HOME": str(tmp_path)}) is None
    with pytest.raises(DownloadError) as err:
        make_downloader(entries, tmp_path / "wg").run()
    message = str(err.value)
    assert "https://huggingface.co/datasets/facebook/winoground" in message and "accept the terms" in message
    assert "export HF_TOKEN=" in message and "huggingface.co/settings/tokens" in message
    assert str((tmp_path / "wg").resolve() / "examples.jsonl") in message
    assert str((tmp_path / "wg").resolve() / "images") in message


def test_token_sources(tmp_path):
    assert download_command.hub_token({"HUGGING_FACE_HUB_TOKEN": " hf_b "}) == "hf_b"
    assert download_command.hub_token({"HF_TOKEN": "hf_a", "HUGGING_FACE_HUB_TOKEN": "hf_b"}) == "hf_a"
    (tmp_path / "token").write_text("hf_from_login\n")          # what `huggingface-cli login` writes
    assert download_command.hub_token({"HF_HOME": str(tmp_path)}) == "hf_from_login"


def test_winoground_with_token_sends_it_and_records_the_commit(server, tmp_path):
    images = make_zip({"images/ex_0_img_0.png": b"png0", "images/ex_0_img_1.png": b"png1"})
    env = winoground_override(server, tmp_path, images)
    server.headers["/examples.jsonl"] = {"X-Repo-Commit": "c" * 40}
    server.headers["/images.zip"] = {"X-Linked-Etag": f'"{sha256(images)}"', "X-Repo-Commit": "c" * 40}
    dest = tmp_path / "wg"
    make_downloader(benchmarks.DATASETS.files_for("winoground", environ=env), dest, token="hf_fixture").run()

    assert {headers.get("Authorization") for _, headers in server.requests} == {"Bearer hf_fixture"}
    assert (dest / "images/ex_0_img_1.png").read_bytes() == b"png1"
    info = record(dest)
    assert info["examples.jsonl"]["resolved_revision"] == "c" * 40
    assert info["images.zip"]["revision"] == wg_datasets.WINOGROUND_REVISION
    assert info["images.zip"]["sha256"] == sha256(images)


def test_winoground_hub_checksum_mismatch_is_refused(server, tmp_path):
    images = make_zip({"images/ex_0_img_0.png": b"png0"})
    env = winoground_override(server, tmp_path, images)
    server.headers["/images.zip"] = {"X-Linked-Etag": '"' + "0" * 64 + '"'}
    with pytest.raises(DownloadError, match="X-Linked-Etag"):
        make_downloader(benchmarks.DATASETS.files_for("winoground", environ=env), tmp_path / "wg", token="hf_x").run()
    assert not (tmp_path / "wg/images.zip").exists()


@pytest.mark.parametrize("status, explanation", [(401, "token was refused"), (403, "not accepted")])
def test_winoground_refused_token_explains_the_gating(server, tmp_path, status, explanation):
    env = winoground_override(server, tmp_path, make_zip({"images/a.png": b"a"}))
    server.faults["/examples.jsonl"] = [Fault(status=status)]
    with pytest.raises(DownloadError, match=f"(?s)HTTP {status}.*{explanation}.*accept the terms"):
        make_downloader(benchmarks.DATASETS.files_for("winoground", environ=env), tmp_path / "wg", token="hf_x").run()


def test_winoground_missing_at_pinned_revision_suggests_an_override(server, tmp_path):
    env = winoground_override(server, tmp_path, make_zip({"images/a.png": b"a"}))
    del server.files["/examples.jsonl"]
    with pytest.raises(DownloadError) as err:
        make_downloader(benchmarks.DATASETS.files_for("winoground", environ=env), tmp_path / "wg", token="hf_x").run()
    assert "HTTP 404" in str(err.value) and wg_datasets.WINOGROUND_REVISION in str(err.value)
    assert '{"winoground-examples": {"revision": "main"}}' in str(err.value)


def test_token_is_not_forwarded_to_another_host(server, tmp_path):
    env = winoground_override(server, tmp_path, make_zip({"images/a.png": b"a"}))
    server.files["/elsewhere/examples.jsonl"] = server.files["/examples.jsonl"]
    server.redirects["/examples.jsonl"] = server.url("elsewhere/examples.jsonl").replace("127.0.0.1", "localhost")
    entries = benchmarks.DATASETS.files_for("winoground", environ=env)[:1]
    make_downloader(entries, tmp_path / "wg", token="hf_secret").run()
    first, second = server.requests[0][1], server.requests[1][1]
    assert first["Authorization"] == "Bearer hf_secret" and "Authorization" not in second
    assert second["Host"].startswith("localhost")


def test_mirror_never_receives_the_token(server, tmp_path):
    entries = benchmarks.DATASETS.files_for("winoground", environ={datasets.MIRROR_ENV: server.base + "/"})
    assert [e.url for e in entries] == [server.url("examples.jsonl"), server.url("images.zip")]
    assert not any(e.hub for e in entries)


# ------------------------------------------------------------------------------- table and overrides

def test_table_pins_what_the_reference_gives():
    by_name = {f.name: f for f in benchmarks.DATASETS.files()}
    assert by_name["crepe-prod"].urls()[0] == (
        "https://raw.githubusercontent.com/RAIVNLab/CREPE/1fa81c425f442396fe304f170c8eb6dc0747c814/"
        "data/prod_hard_negatives.zip")
    assert by_name["crepe-syst"].checksum == Checksum("git-blob-sha1", "54eebe3a52eaacd978a08f2a5c1aaa7e53b82b4b")
    assert by_name["vg-images-1"].checksum is None and by_name["vg-images-1"].extract.folder == "VG_100K"
    wg_images = by_name["winoground-images"].urls()[0]
    assert "/resolve/b400e173549071916ad1b3d449293bc8d8b4b763/data/images.zip" in wg_images
    assert all(f.sources and f.licence for f in benchmarks.DATASETS.files())


SUGARCREPE_SUBSETS = ["add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj"]


def test_sugarcrepe_table_pins_the_commit_and_the_seven_files(monkeypatch, tmp_path):
    entries = benchmarks.DATASETS.files_for("sugarcrepe", environ={})
    assert [e.filename for e in entries] == [f"{s}.json" for s in SUGARCREPE_SUBSETS]
    assert entries[4].urls() == (
        "https://raw.githubusercontent.com/RAIVNLab/sugar-crepe/0047054b243992f0fad63d6f64f7544862daf846/"
        "data/replace_rel.json",
        "https://github.com/RAIVNLab/sugar-crepe/raw/0047054b243992f0fad63d6f64f7544862daf846/data/replace_rel.json")
    assert all(e.checksum.kind == "sha256" and e.size and e.extract is None and e.released_text
               and e.licence.startswith("MIT") and e.sources for e in entries)
    monkeypatch.delenv("SUGARCREPE_DATA", raising=False)       # `make test` exports the Makefile's default
    monkeypatch.setenv("CREPE_DATA", str(tmp_path))
    assert benchmarks.DATASETS.get("sugarcrepe").dir() == tmp_path / "sugarcrepe"
    monkeypatch.setenv("SUGARCREPE_DATA", str(tmp_path / "elsewhere"))
    assert benchmarks.DATASETS.get("sugarcrepe").dir() == tmp_path / "elsewhere"


@pytest.mark.shared
def test_sugarcrepe_checksums_and_sizes_are_the_released_files(shared_sugarcrepe):
    released = {p.name: p.read_bytes() for p in shared_sugarcrepe.glob("*.json")}
    assert sorted(released) == sorted(f"{s}.json" for s in SUGARCREPE_SUBSETS)
    for entry in benchmarks.DATASETS.files_for("sugarcrepe", environ={}):
        data = released[entry.filename]
        assert (entry.checksum.value, entry.size) == (sha256(data), len(data)), entry.filename
        triples = len(json.loads(data))
        assert f"{triples:,} image-caption-negative triples" in entry.description
    assert (shared_sugarcrepe / "LICENSE").read_text().startswith("MIT License")


def test_override_errors_name_the_file_and_the_problem(tmp_path):
    override = tmp_path / "o.json"
    override.write_text(json.dumps({"crepe-prodd": {"url": "x"}}))
    with pytest.raises(DatasetTableError, match=r"unknown entries \['crepe-prodd'\]"):
        benchmarks.DATASETS.files_for("crepe", environ={datasets.OVERRIDE_ENV: str(override)})
    override.write_text(json.dumps({"crepe-prod": {"checksum": {"kind": "sha256", "value": "abc"}}}))
    with pytest.raises(DatasetTableError, match="64 lower-case hex digits"):
        benchmarks.DATASETS.files_for("crepe", environ={datasets.OVERRIDE_ENV: str(override)})
    override.write_text(json.dumps({"crepe-prod": {"sha": "x"}}))
    with pytest.raises(DatasetTableError, match=r"unknown field\(s\) \['sha'\]"):
        benchmarks.DATASETS.files_for("crepe", environ={datasets.OVERRIDE_ENV: str(override)})


# ------------------------------------------------------------------------------- end to end

def test_cli_end_to_end_with_mirror_and_override(server, prod_zip, syst_zip, tmp_path):
    server.files["/prod_hard_negatives.zip"] = prod_zip
    server.files["/syst_hard_negatives.zip"] = syst_zip
    override = tmp_path / "override.json"
    override.write_text(json.dumps({
        "crepe-prod": {"checksum": {"kind": "git-blob-sha1", "value": git_blob_sha1(prod_zip)}},
        "crepe-syst": {"checksum": {"kind": "sha256", "value": sha256(syst_zip)}, "size": len(syst_zip)},
    }))
    dest = tmp_path / "crepe"
    env = {**os.environ, datasets.MIRROR_ENV: server.base, datasets.OVERRIDE_ENV: str(override),
           "no_proxy": "*"}
    command = ["download", "crepe", "--dest", dest, "--yes"]
    done = cli_runner.run(command, env=env, cwd=PROJECT_ROOT)
    assert done.returncode == 0, done.stderr
    assert "Plan for" in done.stdout and "syst_hard_negatives.zip" in done.stdout
    assert sorted(path for path, _ in server.requests) == ["/prod_hard_negatives.zip", "/syst_hard_negatives.zip"]
    queries = load_productivity(dest, ["atom"], [4])
    assert len(queries) == len(PROD_ROWS) and queries.queries[1].image_id == "286"
    assert (dest / "syst_hard_negatives/syst_vg_hard_negs_seen_compounds_in_laion.csv").is_file()

    server.files["/syst_hard_negatives.zip"] = b"broken"
    (dest / "syst_hard_negatives.zip").unlink()
    shutil.rmtree(dest / "syst_hard_negatives")
    failed = cli_runner.run(command, env=env, cwd=PROJECT_ROOT)
    assert failed.returncode != 0
    assert "error:" in failed.stderr and "offers 6 bytes" in failed.stderr


def test_make_data_crepe_end_to_end(server, prod_zip, syst_zip, tmp_path):
    """`make data-crepe` itself (the README's path), against the loopback server."""
    if shutil.which("make") is None or not (PROJECT_ROOT / ".venv" / ".crepe-installed").exists():
        pytest.skip("needs make and the project's .venv (run through `make test`)")
    server.files["/prod_hard_negatives.zip"] = prod_zip
    server.files["/syst_hard_negatives.zip"] = syst_zip
    override = tmp_path / "override.json"
    override.write_text(json.dumps({
        "crepe-prod": {"checksum": {"kind": "git-blob-sha1", "value": git_blob_sha1(prod_zip)}},
        "crepe-syst": {"checksum": {"kind": "git-blob-sha1", "value": git_blob_sha1(syst_zip)}},
    }))
    env = {**os.environ, datasets.MIRROR_ENV: server.base, datasets.OVERRIDE_ENV: str(override), "no_proxy": "*"}
    done = subprocess.run(["make", "-C", str(PROJECT_ROOT), "data-crepe", f"CREPE_DATA={tmp_path / 'data'}"],
                          env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    queries = load_productivity(tmp_path / "data" / "crepe", ["atom"], [4])   # where the loaders look by default
    assert len(queries) == len(PROD_ROWS)
