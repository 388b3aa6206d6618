"""`make slurm-check` (docs/slurm/check.sh): the documented job array on a single-node Slurm started on localhost,
each task's summary (blind scorers, and a tiny fixture CLIP on crepe-productivity and crepe-raw) byte-identical with
the same run in one process, and a failed task one line with nothing merged. Slow (a real slurmctld and slurmd); skipped, saying why, where Slurm cannot start here."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import helpers

ROOT = Path(__file__).resolve().parent.parent
CHECK = ROOT / "docs" / "slurm" / "check.sh"


def _why_not() -> str | None:
    missing = [c for c in ("slurmctld", "slurmd", "munged", "sbatch") if shutil.which(c) is None]
    if missing:
        return f"Slurm cannot start here: {', '.join(missing)} not installed (apt-get install slurm-wlm munge)"
    if os.geteuid() != 0:
        return "Slurm cannot start here: the one-node cluster runs its daemons as root, and this is not root"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")]


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("slurm-data")
    helpers.synthetic_crepe_root(root, complexities=range(4, 13), rows_per_file=4)
    return root


def _check(data_root, scorers: str, wait: int = 300, fixture: bool = True):
    env = {**os.environ, "CREPE_DATA": str(data_root), "VPY": sys.executable, "SLURM_CHECK_SCORERS": scorers,
           "SLURM_CHECK_WAIT": str(wait), "PYTHONPATH": str(ROOT), "SLURM_CHECK_FIXTURE": "1" if fixture else "0"}
    return subprocess.run(["bash", str(CHECK)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=wait + 120)


def _daemons() -> set[str]:
    """Every running slurmctld, slurmd and munged (pid and command line); pgrep -x takes one name at a time."""
    return {line for name in ("slurmctld", "slurmd", "munged")
            for line in subprocess.run(["pgrep", "-a", "-x", name], capture_output=True, text=True).stdout.splitlines()}


def _no_daemon_left(before: set[str]) -> None:
    left = _daemons() - before
    assert not left, f"daemons left running: {sorted(left)}"


def test_the_array_matches_one_process(data_root):
    before = _daemons()
    done = _check(data_root, "length negation")
    assert done.returncode == 0, done.stderr + done.stdout
    # two blind scorers and the fixture model on two benchmarks, each its own task
    tasks = [line.strip() for line in done.stdout.splitlines() if line.startswith("  --model ")]
    assert [t.split()[1:4:2] for t in tasks] == [["blind:length", "crepe-productivity"],
                                                 ["blind:negation", "crepe-productivity"],
                                                 [tasks[2].split()[1], "crepe-productivity"],
                                                 [tasks[2].split()[1], "crepe-raw"]]
    assert tasks[2].split()[1].startswith("local-dir:") and tasks[2].split()[1] == tasks[3].split()[1]
    assert done.stdout.splitlines()[-1] == "slurm: 4 tasks, results identical"
    _no_daemon_left(before)


def test_a_failed_task_is_one_line_and_nothing_is_merged(data_root):
    before = _daemons()
    done = _check(data_root, "length no-such-scorer", fixture=False)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 1 and len(errors) == 1, done.stderr + done.stdout
    assert "task 1 FAILED" in errors[0] and "nothing merged" in errors[0]
    assert "results identical" not in done.stdout
    _no_daemon_left(before)
