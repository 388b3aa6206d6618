"""Several devices: `evaluate-paper --devices` gives the sequential run's files, reports failures alike, survives a
dead worker; concurrent writers of one cache shard are safe; device strings fail with one clear line."""
from __future__ import annotations

import io
import multiprocessing
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import helpers  # noqa: E402

from crepe_utils import cli  # noqa: E402
from crepe_utils.runs import scheduling
from crepe_utils.errors import DeviceError  # noqa: E402


# ------------------------------------------------------------------------------ device strings

def _one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("argv, says", [
    (["--devices", "cpu,foo"], "unknown device 'foo': use cpu or auto"),
    (["--devices", "cpu,"], "comma-separated list"),
    (["--device", "gpu"], "unknown device 'gpu'"),
    (["--device", "cuda"], "no CUDA device is visible"),
    (["--device", "cpu", "--devices", "cpu,cpu"], "--device or --devices, not both"),
    (["--device", "cpu,cuda:7"], "device 'cuda:7': no CUDA device is visible"),
    (["--models", "no-such-model", "--device", "cpu"], "unknown paper model 'no-such-model'"),
])
def test_bad_devices_give_one_clear_line(argv, says, capsys, monkeypatch):
    import torch
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert cli.main(["evaluate-paper", *argv]) == 1
    assert says in _one_error_line(capsys.readouterr().err)


def test_evaluate_names_a_bad_device_in_one_line(tiny_model, synthetic_root, capsys):
    cfg, ckpt = tiny_model
    data_dir, _ = synthetic_root
    assert cli.main(["evaluate", "--benchmark", "productivity", "--model", cfg.stem, "--pretrained", str(ckpt),
                     "--model-config", str(cfg), "--data-dir", str(data_dir), "--device", "cuda:x"]) == 1
    assert "unknown device 'cuda:x'" in _one_error_line(capsys.readouterr().err)


def test_cuda_indices_are_checked_against_the_devices_present(monkeypatch):
    """The CUDA branch, on a CPU machine: a pretended two-GPU machine."""
    import torch
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert scheduling.parse_devices("cuda:0, cuda:1") == ["cuda:0", "cuda:1"]
    assert scheduling.parse_devices("cuda:1,cuda:1") == ["cuda:1", "cuda:1"]
    assert scheduling.check_device("auto") == "cuda"
    with pytest.raises(DeviceError, match=r"has 2 CUDA device\(s\); use cpu, cuda, cuda:0 … cuda:1 or auto"):
        scheduling.parse_devices("cuda:0,cuda:2")
    with pytest.raises(DeviceError, match="only CPU and CUDA"):
        scheduling.check_device("meta")


# ------------------------------------------------------------------------------ sequential ≡ parallel

@pytest.fixture
def placed(family_models_dir, cyclip_checkpoint, albef_checkpoint, monkeypatch):
    """Two registry models with tiny weights where a user places them (CyCLIP, ALBEF)."""
    monkeypatch.setenv("CREPE_MODELS", str(family_models_dir))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return family_models_dir


@pytest.fixture(scope="module")
def every_complexity(tmp_path_factory):
    """A small synthetic CREPE root with every productivity complexity (evaluate-paper runs them all)."""
    from crepe_utils.benchmarks.crepe import queries as D
    return helpers.synthetic_crepe_root(tmp_path_factory.mktemp("every-complexity"), n_images=8, rows_per_file=3,
                                        complexities=D.COMPLEXITIES)


def _paper(synthetic_root, out, cache, *extra):
    data_dir, image_dir = synthetic_root
    return cli.main(["evaluate-paper", "--models", "cyclip-rn50", "albef-14m", "--benchmarks", "productivity",
                     "--data-dir", str(data_dir), "--image-dir", str(image_dir), "--out", str(out),
                     "--cache-dir", str(cache), "--kind", "fixture", "--limit", "2", *extra])


def _shards(cache: Path) -> set:
    return {p.relative_to(cache) for p in cache.rglob("shard-*.npz")}


def test_two_workers_write_the_sequential_runs_bytes(placed, every_complexity, tmp_path, capsys):
    synthetic_root = every_complexity
    assert _paper(synthetic_root, tmp_path / "seq", tmp_path / "cache-seq", "--device", "cpu") == 0
    seq_out = capsys.readouterr().out
    assert _paper(synthetic_root, tmp_path / "par", tmp_path / "cache-par", "--devices", "cpu,cpu") == 0
    captured = capsys.readouterr()
    seq, par = helpers.result_files(tmp_path / "seq"), helpers.result_files(tmp_path / "par")
    assert len(seq) == 6 and seq.keys() == par.keys()          # two models × (summary, per-query, manifest)
    assert seq == par
    assert _shards(tmp_path / "cache-seq") == _shards(tmp_path / "cache-par") != set()
    assert "== [cpu] CyCLIP RN50: productivity" in captured.out and "== [cpu] ALBEF: productivity" in captured.out
    assert captured.out.count("r1_ci_low") == seq_out.count("r1_ci_low") == 2      # each summary printed once
    assert "error" not in captured.err


def test_a_failed_model_is_reported_and_counted_like_the_sequential_loop(cyclip_checkpoint, every_complexity,
                                                                         tmp_path, monkeypatch, capsys):
    synthetic_root = every_complexity
    bare = tmp_path / "models"                                   # CyCLIP placed, ALBEF not
    (bare / "cyclip-rn50").mkdir(parents=True)
    (bare / "cyclip-rn50" / "best.pt").write_bytes(Path(cyclip_checkpoint[1]).read_bytes())
    monkeypatch.setenv("CREPE_MODELS", str(bare))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    results = {}
    for name, flags in (("seq", ["--device", "cpu"]), ("par", ["--devices", "cpu,cpu"])):
        assert _paper(synthetic_root, tmp_path / name, tmp_path / f"cache-{name}", *flags) == 1
        err = capsys.readouterr().err
        assert err.count("error: albef-14m: ALBEF weights not found at") == 1 and "Traceback" not in err
        assert err.strip().endswith("failed: albef-14m")
        results[name] = helpers.result_files(tmp_path / name)
    assert results["seq"] == results["par"] and len(results["seq"]) == 3     # CyCLIP's result, complete


def test_the_next_model_loads_while_the_current_job_runs(monkeypatch):
    """Sequential jobs: while a model's jobs run, the next other model loads in a thread; the job that
    needs it gets that very object, and a model that fails to load in the background fails its own
    jobs only, with its own error. The overlap is checked by an event, not by timing: the first job
    waits until the second model has started loading, which only a loader beside it can do."""
    import threading
    from types import SimpleNamespace
    from crepe_utils.errors import ModelError
    started = {k: threading.Event() for k in ("a", "b", "bad", "c")}
    loaded_in, evaluated = {}, []

    def load(self, key):
        loaded_in[key] = threading.current_thread().name
        started[key].set()
        if key == "bad":
            raise ModelError("its weights are damaged")
        return SimpleNamespace(key=key)

    def evaluate(loaded, benchmark, **kw):
        key = loaded.key
        if key == "a" and benchmark == "systematicity":
            assert started["b"].wait(timeout=30), "model b did not start loading while a's first job ran"
        evaluated.append((key, benchmark))

    monkeypatch.setattr(scheduling._Runner, "_load", load)
    monkeypatch.setattr(scheduling, "evaluate", evaluate)
    monkeypatch.setattr(scheduling, "print_summary", lambda summary, scoring: None)
    jobs = [scheduling.Job("a", "systematicity"), scheduling.Job("a", "productivity"),
            scheduling.Job("b", "productivity"), scheduling.Job("bad", "systematicity"),
            scheduling.Job("bad", "productivity"), scheduling.Job("c", "productivity")]
    err = io.StringIO()
    outcomes = scheduling.run_jobs(jobs, ["cpu"], {}, out=io.StringIO(), err=err)
    assert [o.ok for o in outcomes] == [True, True, True, False, False, True]
    assert evaluated == [("a", "systematicity"), ("a", "productivity"), ("b", "productivity"), ("c", "productivity")]
    assert loaded_in["a"] == threading.main_thread().name
    assert {loaded_in[k] for k in ("b", "bad", "c")} == {"crepe-load-next"}
    assert err.getvalue().splitlines() == ["error: bad: its weights are damaged"]


def _dying_worker(index, device, settings, conn):
    """A worker that dies (as if killed) when it is handed the job of model "die"."""
    conn.send(("ready", None))
    while True:
        job = conn.recv()
        if job is None:
            return
        if job.key == "die":
            os._exit(3)
        conn.send(("done", scheduling.Outcome(job, device, True, output=f"ran {job.key}\n", pid=os.getpid())))


def test_a_dead_worker_fails_its_job_and_the_others_finish_the_queue():
    jobs = [scheduling.Job(k, "productivity") for k in ("a", "die", "b", "c", "d")]
    out, errors = io.StringIO(), []

    def report(o):
        out.write(o.output)
        errors.extend(o.errors)
    outcomes = scheduling._run_parallel(jobs, ["cpu", "cpu"], {}, out, report, target=_dying_worker)
    assert [o.ok for o in outcomes] == [True, False, True, True, True]
    assert errors == ["error: die: the worker on cpu stopped (exit code 3) while evaluating productivity; "
                      "out of memory, or killed?"]
    assert all(o.pid not in (None, os.getpid()) for o in outcomes if o.ok)   # run in worker processes
    assert {"ran a", "ran b", "ran c", "ran d"} <= set(out.getvalue().splitlines())
    assert out.getvalue().count("== [cpu] ") == 5                            # each job announced once


def _all_workers_die(index, device, settings, conn):
    conn.send(("ready", None))
    conn.recv()
    os._exit(5)                                   # dies on the first job it is handed


def test_jobs_are_failed_not_awaited_when_every_worker_dies():
    jobs = [scheduling.Job(k, "productivity") for k in ("a", "b", "c")]
    errors = []
    outcomes = scheduling._run_parallel(jobs, ["cpu", "cpu"], {}, io.StringIO(), lambda o: errors.extend(o.errors),
                                        target=_all_workers_die)
    assert not any(o.ok for o in outcomes) and len(errors) == 3
    assert sum("stopped (exit code 5) while evaluating" in e for e in errors) == 2      # the two handed out
    assert "error: c: not evaluated on productivity: every worker stopped" in errors


# ------------------------------------------------------------------------------ one cache, several writers

def _write_same_shard(root, barrier, rounds, queue):
    from crepe_utils.engine.embedding_cache import EmbeddingStore
    keys = [f"k{i}" for i in range(64)]
    emb = np.random.default_rng(0).standard_normal((64, 512)).astype(np.float32)
    barrier.wait()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(rounds):
            EmbeddingStore(root).add(keys, emb)          # write the shard ...
            store = EmbeddingStore(root)                 # ... and read every shard back, verifying it
            assert np.array_equal(store.get(keys), emb)
    queue.put(([str(w.message) for w in caught], os.getpid()))


def test_concurrent_writers_of_one_shard_never_damage_it(tmp_path):
    from crepe_utils.engine.embedding_cache import EmbeddingStore, shard_digest
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_write_same_shard, args=(tmp_path, barrier, 150, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    reports = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert [w for w, _ in reports] == [[], []]                       # no damaged shard seen by either
    keys = [f"k{i}" for i in range(64)]
    emb = np.random.default_rng(0).standard_normal((64, 512)).astype(np.float32)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"shard-{shard_digest(keys, emb)}.npz"]  # no temp left
    assert not EmbeddingStore(tmp_path).damaged


def _run_engine(cfg, ckpt, data_dir, image_dir, cache, barrier, queue):
    try:
        from crepe_utils.engine import core as engine
        from crepe_utils.engine.core import RunOptions
        from crepe_utils.imagesets.visual_genome import ImageIndex
        from crepe_utils.models import load_model
        loaded = load_model(cfg.stem, str(ckpt), str(cfg), device="cpu")
        qs = helpers.crepe_queries(data_dir, complexities=(4, 5))
        barrier.wait()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = engine.run(loaded, qs.queries, ImageIndex(image_dir), RunOptions(image_batch_size=2, text_batch_size=4, shard_batches=1), cache_dir=cache)
        queue.put((res.scores, res.stats["run_n_damaged_cache_shards"], [str(w.message) for w in caught]))
    except BaseException as exc:                     # say why instead of leaving the parent waiting
        queue.put(exc)
        raise


def _get(queue):
    got = queue.get(timeout=300)
    if isinstance(got, BaseException):
        raise got
    return got


@pytest.mark.slow
def test_two_processes_sharing_one_cache_get_a_lone_runs_scores(tiny_model, synthetic_root, tmp_path):
    cfg, ckpt = tiny_model
    data_dir, image_dir = synthetic_root
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_run_engine, args=(cfg, ckpt, data_dir, image_dir, tmp_path / "shared", barrier,
                                                  queue)) for _ in range(2)]
    for p in procs:
        p.start()
    got = [_get(queue) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    lone, alone = ctx.Queue(), ctx.Barrier(1)       # held here until the child has them
    solo = ctx.Process(target=_run_engine, args=(cfg, ckpt, data_dir, image_dir, tmp_path / "lone", alone, lone))
    solo.start()
    ref = _get(lone)
    solo.join(timeout=60)
    for scores, damaged, caught in got:
        assert damaged == 0 and not [w for w in caught if "cache" in w]
        assert np.array_equal(scores.view(np.uint32), ref[0].view(np.uint32))
    assert _shards(tmp_path / "shared") == _shards(tmp_path / "lone") and len(_shards(tmp_path / "lone")) > 4
    assert not [p for p in (tmp_path / "shared").rglob("*") if p.name.startswith(".")]     # no temp file left


# ------------------------------------------------------------------------------ the Slurm recipe

SBATCH = Path(__file__).resolve().parent.parent / "docs" / "slurm" / "evaluate_array.sbatch"


def test_slurm_array_has_one_task_per_evaluable_model():
    import re
    from crepe_utils.runs import planner as paper_jobs
    n = len(paper_jobs.paper_keys())
    assert re.search(r"^#SBATCH --array=0-(\d+)$", SBATCH.read_text(), re.M).group(1) == str(n - 1)


@pytest.mark.parametrize("task", [0, 14, 27])
def test_slurm_task_runs_evaluate_paper_on_its_model(task, tmp_path):
    import subprocess
    from crepe_utils.runs import planner as paper_jobs
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": str(task), "CREPE_DRY_RUN": "1", "RESULTS": "/r",
           "VENV": str(Path(sys.executable).parent.parent), "PYTHONPATH": str(SBATCH.parent.parent.parent),
           "SLURM_SUBMIT_DIR": str(tmp_path)}
    done = subprocess.run(["bash", str(SBATCH)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    key = paper_jobs.paper_keys()[task]
    words = done.stdout.split()
    assert words[1:4] == ["-m", "crepe_utils", "evaluate-paper"] and words[words.index("--models") + 1] == key
    assert words[words.index("--out") + 1] == "/r" and words[words.index("--device") + 1] == "cuda"
    assert "--data-dir" not in words and "--image-dir" not in words      # each benchmark reads its own folders
    bad = subprocess.run(["bash", str(SBATCH)], env={**env, "SLURM_ARRAY_TASK_ID": "99"}, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 2 and "array index 99 has no model" in bad.stderr


def test_slurm_task_file_gives_each_task_its_own_command_line(tmp_path):
    """CREPE_ARRAY_TASKS (what `make slurm-check` submits): line i, comments and blank lines skipped, is task i's
    `evaluate` arguments, with the common device, output, kind and data folder after it."""
    import subprocess
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("# the grid\n--model blind:length --benchmark crepe-productivity --complexities 4 12\n\n"
                     "--model local-dir:/m/tiny --benchmark crepe-raw --complexities 4 --fold-size 100\n")
    env = {**os.environ, "CREPE_DRY_RUN": "1", "RESULTS": "/r", "CREPE_ARRAY_TASKS": str(tasks), "DEVICE": "cpu",
           "KIND": "fixture", "CREPE_ARRAY_DATA_DIR": "/d", "VENV": str(Path(sys.executable).parent.parent),
           "SLURM_SUBMIT_DIR": str(tmp_path)}
    want = {0: ["--model", "blind:length", "--benchmark", "crepe-productivity", "--complexities", "4", "12"],
            1: ["--model", "local-dir:/m/tiny", "--benchmark", "crepe-raw", "--complexities", "4", "--fold-size", "100"]}
    for task, args in want.items():
        done = subprocess.run(["bash", str(SBATCH)], env={**env, "SLURM_ARRAY_TASK_ID": str(task)},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        words = done.stdout.split()
        assert words[1:4] == ["-m", "crepe_utils", "evaluate"]
        assert words[4:4 + len(args)] == args
        assert words[4 + len(args):] == ["--device", "cpu", "--out", "/r", "--precision", "fp32", "--kind", "fixture",
                                         "--data-dir", "/d"]
    bad = subprocess.run(["bash", str(SBATCH)], env={**env, "SLURM_ARRAY_TASK_ID": "2"}, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 2 and "array index 2 has no model" in bad.stderr
