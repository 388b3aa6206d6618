"""(model, benchmark) evaluation jobs, run here or spread over several devices.

``evaluate-paper --devices cuda:0,cuda:1`` starts one worker process per listed device; each takes
the next job from one queue, so a device that finishes early takes more. A worker keeps the model it
loaded last, so consecutive jobs of one model load it once. Results are the same files a sequential
run writes: every job writes its own result folder (atomically), the embedding cache is shared
safely (write-once shards named by their content, written by atomic renames: two writers of one
shard write the same bytes under the same name), and nothing a result holds depends on which device
index or worker ran it (the cache fingerprint and the results record the device *type* and GPU model).

Failures are the sequential loop's: a failed job is reported as one ``error: <model>: ...`` line,
the run goes on, and the exit status is non-zero. A worker that dies (killed, out of memory) fails
the job it held; the other workers finish the queue.

Workers are started with ``spawn`` (CUDA cannot be used in a forked child). Each prints nothing
itself: what a job prints comes back with its outcome and is printed by the parent whole, in the
order jobs finish; progress bars are off in workers.
"""
from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import sys
from dataclasses import dataclass, field

from ..engine.shared_inputs import SharedInputs
from ..engine.threads import Background
from ..errors import DeviceError, error_line, one_line_warnings
from ..models.spec import check_device
from .. import settings as settings_cli
from ..evaluate_command import add_run_arguments, print_summary, run_of
from ..evaluation import evaluate
from multiprocessing.connection import wait
from ..models import load_model
from .. import benchmarks
from . import planner as paper_jobs
from .planner import Job

__all__ = ["Job", "Outcome", "check_device", "parse_devices", "run_jobs"]


@dataclass
class Outcome:
    job: Job
    device: str
    ok: bool
    output: str = ""                                   #: what the job printed (its summary table)
    pid: int | None = None                             #: the process that ran it
    errors: list[str] = field(default_factory=list)    #: its ``error: ...`` lines


def parse_devices(text: str) -> list[str]:
    """``"cuda:0,cuda:1"`` → ``["cuda:0", "cuda:1"]``, each checked (:func:`check_device`); a
    device may be listed twice (two workers share it)."""
    parts = [p.strip() for p in str(text).split(",")]
    if not parts or any(not p for p in parts):
        raise DeviceError(f"--devices {text!r}: give a comma-separated list of devices, e.g. cuda:0,cuda:1")
    return [check_device(p) for p in parts]


class _Runner:
    """Runs jobs on one device in this process, keeping the last loaded model for the next job, and
    (:meth:`prefetch`) loading the next job's model in a thread while the current job runs."""

    def __init__(self, device: str, settings: dict):
        self.device, self.settings = device, dict(settings, device=device)
        self.key, self.loaded, self.load_error = None, None, {}
        self.shared = None      # one SharedInputs per runner: queries, crops, token ids prepared once
        self._next: tuple[str, Background] | None = None     # the model loading for a later job

    def _load(self, key: str):
        return load_model(key, device=self.device, precision=self._precision())

    def prefetch(self, key: str) -> None:
        """Start loading ``key``'s model in a thread (reading, hashing and unpickling the checkpoint, moving
        it to the device), so that the job that needs it need not wait; a failure is that job's."""
        if key != self.key and key not in self.load_error and (self._next is None or self._next[0] != key):
            self._cancel_prefetch()
            import torch      # one thread: loading is mostly reading and copying, beside a run that computes
            self._next = (key, Background(lambda: self._load(key), "crepe-load-next", device=torch.device(self.device),
                                          threads=1))

    def _switch_to(self, key: str) -> None:
        """Make ``key``'s model the loaded one: the one loading in the background, or loaded now. A load
        error is remembered, so that the model's other jobs fail alike without loading it again."""
        if key in self.load_error:
            raise self.load_error[key]
        if key == self.key:
            return
        self._release()
        try:
            if self._next is not None and self._next[0] == key:
                pending, self._next = self._next, None
                self.loaded = pending[1].result()
            else:
                self._cancel_prefetch()
                self.loaded = self._load(key)
        except Exception as exc:  # noqa: BLE001 - any load failure is the model's
            self.load_error[key] = exc
            raise
        self.key = key

    def _cancel_prefetch(self) -> None:
        """Wait for a model still loading and drop it (its error too)."""
        pending, self._next = self._next, None
        if pending is not None:
            pending[1].wait()

    def __call__(self, job: Job, out, announce: bool = True, then: str | None = None) -> Outcome:
        """Run ``job``; ``then``: the model of a later job, loaded (:meth:`prefetch`) while this one runs."""
        if announce:
            print(f"== {job.display or job.key}: {job.benchmark}", file=out, flush=True)
        try:
            failure = None
            try:
                self._switch_to(job.key)
            except Exception as exc:  # noqa: BLE001 - this job fails below, once the next model is loading
                failure = exc
            if then is not None:
                self.prefetch(then)
            if failure is not None:
                raise failure
            with contextlib.redirect_stdout(out):
                if self.shared is None:
                    self.shared = SharedInputs()
                summary = evaluate(self.loaded, job.benchmark, shared=self.shared, **self.settings)
                print_summary(summary, benchmarks.get(job.benchmark))
        except Exception as exc:  # noqa: BLE001 - report and continue with the next job
            return Outcome(job, self.device, False, errors=[error_line(f"{job.key}: {exc}")], pid=os.getpid())
        return Outcome(job, self.device, True, pid=os.getpid())

    def _precision(self) -> str | None:
        """The run's precision: from the settings object evaluate-paper passes, or a plain keyword."""
        settings = self.settings.get("settings")
        return settings.precision if settings is not None else self.settings.get("precision")

    def _release(self) -> None:
        self.key, self.loaded = None, None
        if self.device.startswith("cuda"):
            import torch
            torch.cuda.empty_cache()


def _worker(index: int, device: str, settings: dict, conn) -> None:
    """One device's worker: ask for a job, run it, send its outcome (which asks for the next); stop at None.

    Sends are synchronous (a pipe, no feeder thread), so what a worker sent before dying has arrived.
    """
    if device.startswith("cuda"):
        import torch
        torch.cuda.set_device(torch.device(device))     # pinned memory and kernels on this device, not cuda:0
    runner = _Runner(device, {**settings, "progress": False})
    conn.send(("ready", None))
    with one_line_warnings(), contextlib.suppress(KeyboardInterrupt):   # Ctrl-C: the parent, interrupted too, says so
        while True:
            item = conn.recv()
            if item is None:
                return
            buf = io.StringIO()
            outcome = runner(item, buf, announce=False)
            outcome.output = buf.getvalue()
            conn.send(("done", outcome))


def run_jobs(jobs: list[Job], devices: list[str], settings: dict, out=None, err=None) -> list[Outcome]:
    """Run ``jobs`` (evaluation settings ``settings``: ``evaluate``'s keywords) and return their outcomes
    in job order. One device: in this process, printing as it goes. Several: one worker per device."""
    out, err = out or sys.stdout, err or sys.stderr
    seen_errors: set[str] = set()

    def report(o: Outcome) -> None:
        if o.output:
            print(o.output, end="" if o.output.endswith("\n") else "\n", file=out, flush=True)
        for line in o.errors:
            if line not in seen_errors:          # a model that cannot load fails each of its jobs alike
                seen_errors.add(line)
                print(line, file=err, flush=True)

    if len(devices) == 1:
        runner = _Runner(devices[0], settings)
        outcomes = []
        for i, job in enumerate(jobs):      # the next other model loads in the background while this job runs
            outcomes.append(runner(job, out, then=next((j.key for j in jobs[i + 1:] if j.key != job.key), None)))
            report(outcomes[-1])
        return outcomes
    return _run_parallel(jobs, devices, settings, out, report)


def _run_parallel(jobs, devices, settings, out, report, target=_worker) -> list[Outcome]:
    """The parent hands out jobs: each worker gets the next one when it reports the last (or is ready),
    so the parent always knows which job a worker holds, and a worker that dies fails only that one."""
    ctx = multiprocessing.get_context("spawn")
    pipes = [ctx.Pipe() for _ in devices]
    workers = [ctx.Process(target=target, args=(w, d, settings, pipes[w][1]), daemon=True,
                           name=f"crepe-worker-{w}-{d}") for w, d in enumerate(devices)]
    outcomes: dict[int, Outcome] = {}
    running: dict[int, int] = {}                 # worker → index of the job it holds
    queue = list(range(len(jobs)))[::-1]         # popped from the end: job order
    live = {pipes[w][0]: w for w in range(len(workers))}
    try:
        for w, proc in enumerate(workers):
            proc.start()
            pipes[w][1].close()                  # the parent's copy: a worker's exit then reads as EOF
        while live:
            for conn in wait(list(live)):
                w = live[conn]
                try:
                    kind, payload = conn.recv()
                except (EOFError, OSError):      # the worker is gone
                    del live[conn]
                    workers[w].join(timeout=10)
                    if w in running:
                        i = running.pop(w)
                        job = jobs[i]
                        outcomes[i] = o = Outcome(job, devices[w], False, errors=[
                            f"error: {job.key}: the worker on {devices[w]} stopped (exit code "
                            f"{workers[w].exitcode}) while evaluating {job.benchmark}; out of memory, or killed?"])
                        report(o)
                    continue
                if kind == "done":
                    outcomes[running.pop(w)] = payload
                    report(payload)
                try:
                    if queue:
                        i = queue.pop()
                        running[w] = i
                        conn.send(jobs[i])
                        print(f"== [{devices[w]}] {jobs[i].display or jobs[i].key}: {jobs[i].benchmark}",
                              file=out, flush=True)
                    else:
                        conn.send(None)
                except (BrokenPipeError, OSError):   # died meanwhile: the job goes back; EOF comes next
                    if w in running:
                        queue.append(running.pop(w))
        for i, job in enumerate(jobs):           # never handed out: every worker stopped first
            if i not in outcomes:
                outcomes[i] = o = Outcome(job, "", False, errors=[
                    f"error: {job.key}: not evaluated on {job.benchmark}: every worker stopped"])
                report(o)
    finally:
        for proc in workers:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=10)
    return [outcomes[i] for i in range(len(jobs))]


# ------------------------------------------------------------------------------ command line

def add_arguments_evaluate_paper(parser) -> None:
    parser.add_argument("--models", nargs="+", default=[paper_jobs.PAPER],
                        help="checkpoint keys, or 'paper' (default: every checkpoint of the benchmarks' rosters, "
                        "each on the benchmarks whose paper evaluated it), 'all' (each also on every other "
                        "benchmark that takes it) or 'field' (the open_clip checkpoints of vl_compo's 202-checkpoint "
                        "table, on the benchmarks it covers); `python -m crepe_utils models` lists them")
    choices = paper_jobs.choosable()
    parser.add_argument("--benchmarks", nargs="+", default=None,
                        choices=[*choices, *(a for a, n in benchmarks.ALIASES.items() if n in choices)],
                        help="which benchmarks to run, or their aliases (default: every one with a roster; with "
                        "--models field, the field's: " + ", ".join(paper_jobs.field_benchmarks()) + ")")
    add_run_arguments(parser)
    parser.add_argument("--devices", default=None, help="comma-separated devices, e.g. cuda:0,cuda:1: one worker "
                        "process per device, each taking the next (model, benchmark) job (a comma-separated "
                        "--device does the same)")
    parser.epilog = ("Folders: without --data-dir and --image-dir each benchmark reads its own datasets' folders ("
                     + paper_jobs.own_folders(choices) + "). --data-dir / --image-dir name one folder, so they are "
                     "refused when the jobs read different datasets: choose one kind with --benchmarks to give them.")


def run_evaluate_paper(args) -> int:
    """Every requested model on every benchmark its paper's table has it on (crepe_utils.runs.planner)."""
    if args.devices and args.device != "auto":
        raise DeviceError("give --device or --devices, not both")
    spread = args.devices or (args.device if "," in args.device else None)   # make evaluate DEVICE=cuda:0,cuda:1
    devices = parse_devices(spread) if spread else [check_device(args.device)]
    kwargs = {"run": run_of(args), "settings": settings_cli.from_args(args)}   # a bad setting stops here
    chosen = None if args.benchmarks is None else [benchmarks.get(b).name for b in args.benchmarks]
    jobs, skipped = paper_jobs.plan(args.models, chosen)
    paper_jobs.check_folders(jobs, args.data_dir, args.image_dir)
    for line in skipped:
        print(line)
    outcomes = run_jobs(jobs, devices, kwargs)
    failed = list(dict.fromkeys(o.job.key for o in outcomes if not o.ok))
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0
