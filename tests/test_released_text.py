"""`make all`'s first step (`download --released-text`) against the loopback server: fetches what is
missing, resumes, verifies, leaves present data (and folders arranged by hand) untouched, and answers
within seconds, exit 0, one line per dataset, when nothing can be reached. Nothing here leaves the machine."""
from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from crepe_utils.download import RECORD_NAME, datasets
from crepe_utils.commands import released
from crepe_utils.download.transport import TransferPolicy
import cli_runner
from loopback import PROD_CSV, Fault, LoopbackServer, git_blob_sha1, prod_archive, sha256, syst_archive

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SUBSETS = ["add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj"]
PIECES = ["existence", "plurals", "counting-hard", "counting-small-quant", "counting-adversarial", "relations",
          "action-replacement", "actant-swap", "coreference-standard", "coreference-hard", "foil-it"]
SYST_CSV = "syst_hard_negatives/syst_vg_hard_negs_seen_compounds_in_laion.csv"
HANG_GUARD_S = 20      # a generous bound: only catches a hang, the offline runs take well under a second here


def sugarcrepe_json(subset: str) -> bytes:
    return json.dumps({"0": {"filename": "000000000139.jpg", "caption": f"a {subset} caption",
                             "negative_caption": f"a {subset} negative"}}).encode()


def valse_json(piece: str) -> bytes:
    return json.dumps({f"{piece}_0": {"dataset": "coco2017", "image_file": "000000000139.jpg", "caption": "a cat",
                                      "foil": "a dog", "mturk": {"caption": 3, "foil": 0, "other": 0}}},
                      indent=4).encode()


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> dict[str, bytes]:
    """Every released-text file, by name on the server: fixture archives and fixture JSONs."""
    files = {"prod_hard_negatives.zip": prod_archive(tmp_path_factory.mktemp("prod")),
             "syst_hard_negatives.zip": syst_archive(tmp_path_factory.mktemp("syst"))}
    files.update({f"{s}.json": sugarcrepe_json(s) for s in SUBSETS})
    files.update({f"{p}.json": valse_json(p) for p in PIECES})
    return files


@pytest.fixture
def server(served):
    srv = LoopbackServer()
    srv.files.update({f"/{name}": data for name, data in served.items()})
    yield srv
    srv.stop()


@pytest.fixture
def env(monkeypatch, tmp_path, served) -> dict[str, str]:
    """The process environment of a user with an empty data folder, the fixtures' checksums pinned by an
    override; ``CREPE_MIRROR`` is left to each test. Applied to this process and returned for subprocesses."""
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
                 "HF_TOKEN_PATH", "SUGARCREPE_DATA", "WINOGROUND_DATA", "VALSE_DATA", datasets.MIRROR_ENV):
        monkeypatch.delenv(name, raising=False)
    override = {"crepe-prod": {"checksum": {"kind": "git-blob-sha1",
                                            "value": git_blob_sha1(served["prod_hard_negatives.zip"])}},
                "crepe-syst": {"checksum": {"kind": "git-blob-sha1",
                                            "value": git_blob_sha1(served["syst_hard_negatives.zip"])}}}
    override.update({f"sugarcrepe-{s.replace('_', '-')}": {
        "checksum": {"kind": "sha256", "value": sha256(served[f"{s}.json"])}, "size": len(served[f"{s}.json"])}
        for s in SUBSETS})
    override.update({f"valse-{p}": {"checksum": {"kind": "sha256", "value": sha256(served[f"{p}.json"])},
                                    "size": len(served[f"{p}.json"])} for p in PIECES})
    (tmp_path / "override.json").write_text(json.dumps(override))
    values = {"CREPE_DATA": str(tmp_path / "data"), datasets.OVERRIDE_ENV: str(tmp_path / "override.json"),
              "HF_HOME": str(tmp_path / "hf-home"), "no_proxy": "*"}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def cli(environ: dict[str, str]) -> tuple[cli_runner.Completed, float]:
    start = time.monotonic()
    done = cli_runner.run(["download", "--released-text"], env={**os.environ, **environ}, cwd=PROJECT_ROOT)
    return done, time.monotonic() - start


def lines_by_dataset(stdout: str) -> dict[str, str]:
    lines = stdout.splitlines()
    by = {line.split(":", 1)[0]: line for line in lines}
    assert len(by) == len(lines), lines           # one line per dataset
    return by


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def dead_port() -> int:
    with socket.socket() as sock:                 # a port nobody listens on once this closes
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ------------------------------------------------------------------------------- fetching

def test_missing_crepe_sugarcrepe_and_valse_are_fetched_and_verified(server, env, served, tmp_path, monkeypatch):
    monkeypatch.setenv(datasets.MIRROR_ENV, server.base)
    outcomes = {o.dataset: o for o in released.fetch_released_text()}

    data = tmp_path / "data"
    assert outcomes.keys() == {"crepe", "winoground", "sugarcrepe", "valse"}
    assert {k: o.status for k, o in outcomes.items()} == {"crepe": "fetched", "winoground": "missing",
                                                          "sugarcrepe": "fetched", "valse": "fetched"}
    assert (data / "valse" / "foil-it.json").read_bytes() == served["foil-it.json"]
    assert (data / "crepe" / PROD_CSV).is_file() and (data / "crepe" / SYST_CSV).is_file()
    for subset in SUBSETS:
        assert (data / "sugarcrepe" / f"{subset}.json").read_bytes() == served[f"{subset}.json"]
    records = json.loads((data / "sugarcrepe" / RECORD_NAME).read_text())["files"]
    assert records["swap_obj.json"]["sha256"] == sha256(served["swap_obj.json"])
    assert sorted(path for path, _ in server.requests) == sorted(f"/{name}" for name in served)   # no Winoground
    assert "all 7 files (add_att.json, ...)" in outcomes["sugarcrepe"].line and str(data / "sugarcrepe") in outcomes["sugarcrepe"].line
    assert "make data-winoground" in outcomes["winoground"].line and "HF_TOKEN" in outcomes["winoground"].line


def test_a_partial_download_is_resumed_by_the_next_run(server, env, served, tmp_path, monkeypatch):
    monkeypatch.setenv(datasets.MIRROR_ENV, server.base)
    zip_bytes = served["prod_hard_negatives.zip"]
    cut = len(zip_bytes) // 2
    server.faults["/prod_hard_negatives.zip"] = [Fault(cut_after=cut)]
    first = {o.dataset: o for o in released.fetch_released_text()}
    crepe = tmp_path / "data" / "crepe"
    assert first["crepe"].status == "missing" and "prod_hard_negatives.zip missing" in first["crepe"].line
    assert "make data-crepe" in first["crepe"].line and "\n" not in first["crepe"].line
    assert (crepe / "prod_hard_negatives.zip.part").stat().st_size == cut
    assert not (crepe / "prod_hard_negatives").exists()           # a partial never passes as complete
    # the host failed once: the files after it are not tried this run (one timeout per host, not per file)
    assert first["sugarcrepe"].line.endswith(f"not tried after a failure on 127.0.0.1 in this run. "
                                             "Run `make data-sugarcrepe`.")
    assert "/add_att.json" not in [path for path, _ in server.requests]

    server.requests.clear()
    second = {o.dataset: o for o in released.fetch_released_text()}
    assert second["crepe"].status == "fetched" and second["sugarcrepe"].status == "fetched"
    prod_requests = [headers for path, headers in server.requests if path == "/prod_hard_negatives.zip"]
    assert len(prod_requests) == 1 and prod_requests[0]["Range"] == f"bytes={cut}-"
    assert (crepe / "prod_hard_negatives.zip").read_bytes() == zip_bytes


def test_a_checksum_mismatch_is_one_line_and_leaves_no_file(server, env, tmp_path, monkeypatch):
    monkeypatch.setenv(datasets.MIRROR_ENV, server.base)
    server.files["/swap_att.json"] = server.files["/swap_att.json"].replace(b"caption", b"captioN")  # same size
    done, _ = cli(env)
    assert done.returncode == 0, done.stderr
    line = lines_by_dataset(done.stdout)["sugarcrepe"]
    assert "swap_att.json and swap_obj.json missing" in line       # swap_obj: not tried after the failure
    assert "fetching failed" in line and "sha256 expected" in line
    assert "make data-sugarcrepe" in line
    assert not (tmp_path / "data" / "sugarcrepe" / "swap_att.json").exists()
    assert (tmp_path / "data" / "sugarcrepe" / "add_att.json").is_file()      # those before it are kept


@pytest.mark.shared
def test_the_released_sugarcrepe_bytes_pass_the_table_s_own_pins(shared_sugarcrepe, server, env, tmp_path, monkeypatch):
    """No override for SugarCrepe: the table's sha256 and sizes checked by the downloader on the real files."""
    override = json.loads(Path(env[datasets.OVERRIDE_ENV]).read_text())
    Path(env[datasets.OVERRIDE_ENV]).write_text(json.dumps({k: v for k, v in override.items()
                                                            if not k.startswith("sugarcrepe-")}))
    server.files.update({f"/{p.name}": p.read_bytes() for p in shared_sugarcrepe.glob("*.json")})
    monkeypatch.setenv(datasets.MIRROR_ENV, server.base)
    outcome = {o.dataset: o for o in released.fetch_released_text()}["sugarcrepe"]
    assert outcome.status == "fetched", outcome.line
    assert (tmp_path / "data/sugarcrepe/replace_rel.json").read_bytes() == (shared_sugarcrepe / "replace_rel.json").read_bytes()


# ------------------------------------------------------------------------------- nothing to do, nothing written

def test_present_data_are_a_no_op_that_writes_nothing(server, env, tmp_path, monkeypatch):
    monkeypatch.setenv(datasets.MIRROR_ENV, server.base)
    released.fetch_released_text()
    data = tmp_path / "data"
    before = snapshot(data)
    server.requests.clear()
    for path in [data, *data.rglob("*")]:          # read-only (root ignores the bits: the snapshot decides)
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        done, _ = cli({**env, datasets.MIRROR_ENV: server.base})
    finally:
        for path in [data, *data.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    assert done.returncode == 0, done.stderr
    by = lines_by_dataset(done.stdout)
    assert by["crepe"] == f"crepe: present in {data / 'crepe'}"
    assert by["sugarcrepe"] == f"sugarcrepe: present in {data / 'sugarcrepe'}"
    assert server.requests == [] and snapshot(data) == before


def test_a_folder_arranged_by_hand_gets_nothing_added(server, env, tmp_path):
    """The development copy's shape: productivity CSVs (no marker, a README beside them), no systematicity."""
    crepe = tmp_path / "data" / "crepe"
    (crepe / "prod_hard_negatives" / "atom").mkdir(parents=True)
    (crepe / "prod_hard_negatives" / "atom" / "prod_vg_hard_negs_atom_complexity_4.csv").write_text("image_id\n")
    (crepe / "README.md").write_text("placed by hand")
    before = snapshot(tmp_path / "data")
    done, _ = cli({**env, datasets.MIRROR_ENV: server.base})
    assert done.returncode == 0, done.stderr
    line = lines_by_dataset(done.stdout)["crepe"]
    assert line.startswith(f"crepe: syst_hard_negatives.zip missing in {crepe}, a folder arranged by hand")
    assert "make data-crepe" in line
    assert not any(path.startswith("/prod") or path.startswith("/syst") for path, _ in server.requests)
    after = snapshot(tmp_path / "data")
    assert {k: v for k, v in after.items() if k.startswith("crepe")} == before


@pytest.mark.shared
def test_the_development_data_folder_gets_nothing_written(shared_crepe, server, env, monkeypatch):
    """CI points CREPE_DATA at the development copy: SugarCrepe present, CREPE's productivity CSVs placed by
    hand without the systematicity ones. Even with a mirror that would answer, nothing is fetched or written."""
    data = shared_crepe.parent
    before = snapshot(data)
    monkeypatch.setenv("CREPE_DATA", str(data))
    monkeypatch.setenv(datasets.MIRROR_ENV, server.base)
    outcomes = {o.dataset: o for o in released.fetch_released_text()}
    assert server.requests == []
    assert outcomes["sugarcrepe"].status == "present"
    assert outcomes["crepe"].status == "missing" and "arranged by hand" in outcomes["crepe"].line
    assert "syst_hard_negatives.zip missing" in outcomes["crepe"].line
    assert snapshot(data) == before


def test_a_copy_in_another_layout_counts_as_present(server, env, tmp_path, monkeypatch):
    crepe = tmp_path / "data" / "crepe"
    (crepe / "csvs").mkdir(parents=True)
    for name in ("prod_vg_hard_negs_swap_complexity_7.csv", "syst_vg_hard_negs_unseen_compounds_in_yfcc.csv"):
        (crepe / "csvs" / name).write_text("image_id\n")
    winoground = tmp_path / "wg"
    (winoground / "data").mkdir(parents=True)
    (winoground / "data" / "test-00000-of-00001.parquet").write_bytes(b"PAR1")
    monkeypatch.setenv("WINOGROUND_DATA", str(winoground))
    monkeypatch.setenv(datasets.MIRROR_ENV, server.base)
    outcomes = {o.dataset: o.status for o in released.fetch_released_text()}
    assert outcomes == {"crepe": "present", "winoground": "present", "sugarcrepe": "fetched", "valse": "fetched"}


def test_winoground_is_never_fetched_even_with_a_token(server, env, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_fixture")
    monkeypatch.setenv(datasets.MIRROR_ENV, server.base)
    server.files["/examples.jsonl"] = b'{"id": 0}\n'
    outcome = {o.dataset: o for o in released.fetch_released_text()}["winoground"]
    assert outcome.status == "missing" and "gated" in outcome.line
    assert "/examples.jsonl" not in [path for path, _ in server.requests]


# ------------------------------------------------------------------------------- offline

@pytest.fixture
def black_hole():
    """A port whose connections hang: a listener with a full accept queue, so the kernel drops new SYNs."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    waiting = []
    for _ in range(4):
        client = socket.socket()
        client.setblocking(False)
        client.connect_ex(("127.0.0.1", port))
        waiting.append(client)
    time.sleep(0.2)
    yield port
    for sock in waiting + [listener]:
        sock.close()


# a port with nothing listening; one whose connections hang; RFC 5737 TEST-NET-1 (unroutable)
@pytest.mark.parametrize("mirror", ["dead-port", "black-hole", "http://192.0.2.1:9"])
def test_offline_is_one_line_per_dataset_exit_0_within_seconds(env, tmp_path, mirror, request):
    if mirror == "dead-port":
        mirror = f"http://127.0.0.1:{dead_port()}"
    elif mirror == "black-hole":
        mirror = f"http://127.0.0.1:{request.getfixturevalue('black_hole')}"
    done, took = cli({**env, datasets.MIRROR_ENV: mirror})
    assert done.returncode == 0, done.stderr
    assert took < HANG_GUARD_S
    by = lines_by_dataset(done.stdout)
    assert sorted(by) == ["crepe", "sugarcrepe", "valse", "winoground"]
    assert "syst_hard_negatives.zip and prod_hard_negatives.zip missing" in by["crepe"]
    for dataset in ("crepe", "sugarcrepe", "valse"):
        assert "cannot reach" in by[dataset] and f"`make data-{dataset}`" in by[dataset]
    assert not (tmp_path / "data").exists()           # nothing written


def test_a_host_that_never_answers_costs_one_timeout_not_one_per_file(env, monkeypatch):
    """Connections accepted, requests never answered (a captive proxy, a stuck server): 9 files, 1 timeout."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held, stop = [], threading.Event()

    def accept():
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    monkeypatch.setenv(datasets.MIRROR_ENV, f"http://127.0.0.1:{listener.getsockname()[1]}")
    start = time.monotonic()
    try:
        outcomes = released.fetch_released_text(TransferPolicy(attempts=1, retry_wait=0, timeout_s=1.0))
    finally:
        stop.set()
        thread.join()
        for sock in held + [listener]:
            sock.close()
    assert time.monotonic() - start < 5          # one 1 s timeout; nine would take 9 s
    lines = {o.dataset: o.line for o in outcomes}
    assert "fetching failed" in lines["crepe"] and "timed out" in lines["crepe"]
    assert "not tried after a failure on 127.0.0.1" in lines["sugarcrepe"]


@pytest.mark.slow
def test_a_hanging_lookup_is_cut_at_the_probe_deadline(env, monkeypatch):
    """A resolver that never answers (create_connection blocks before its own timeout applies)."""
    release = threading.Event()

    def hang(*args, **kwargs):
        release.wait(60)
        raise OSError("released by the test")

    monkeypatch.setattr(released.socket, "create_connection", hang)
    monkeypatch.setenv(datasets.MIRROR_ENV, "http://mirror.invalid")
    start = time.monotonic()
    try:
        outcomes = released.fetch_released_text()
    finally:
        release.set()
    assert time.monotonic() - start < released.PROBE_TIMEOUT_S + 3
    assert [o.status for o in outcomes] == ["missing"] * 4
    assert "cannot reach mirror.invalid" in outcomes[0].line


def test_the_probe_goes_to_the_proxy_when_one_applies(monkeypatch):
    monkeypatch.setenv("https_proxy", "http://proxy.example:3128")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    assert released._endpoint("https://raw.githubusercontent.com/x.zip") == ("proxy.example", 3128)
    assert released._endpoint("http://127.0.0.1:8000/x.zip") == ("127.0.0.1", 8000)
    monkeypatch.delenv("https_proxy")
    assert released._endpoint("https://raw.githubusercontent.com/x.zip") == ("raw.githubusercontent.com", 443)


# ------------------------------------------------------------------------------- make

def test_make_data_text_end_to_end(server, env, tmp_path):
    """`make data-text` itself (`make all`'s first step), against the loopback server."""
    if shutil.which("make") is None or not (PROJECT_ROOT / ".venv" / ".crepe-installed").exists():
        pytest.skip("needs make and the project's .venv (run through `make test`)")
    environ = {**os.environ, **env, datasets.MIRROR_ENV: server.base}
    environ.pop("SUGARCREPE_DATA", None)
    done = subprocess.run(["make", "--no-print-directory", "-C", str(PROJECT_ROOT), "data-text",
                           f"CREPE_DATA={tmp_path / 'data'}"], env=environ, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "data" / "sugarcrepe" / "add_obj.json").is_file()
    assert (tmp_path / "data" / "crepe" / PROD_CSV).is_file()


def test_the_command_line_says_what_it_needs(capsys):
    from crepe_utils import cli
    assert cli.main(["download", "--released-text", "crepe"]) == 2
    assert capsys.readouterr().err.startswith("error: --released-text takes no dataset and no --dest")
    assert cli.main(["download"]) == 2
    assert capsys.readouterr().err == "error: name a dataset (crepe, vg, winoground, sugarcrepe, coco, valse, visual7w, coco2014, swig, visdial) or pass --released-text\n"
