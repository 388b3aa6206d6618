"""How long each tier of the test suite takes, from a cold start, against its budget; and its 20 slowest tests.

    .venv/bin/python speed/bench_tests.py                          # quick and full tiers, with the reference data
    .venv/bin/python speed/bench_tests.py --without-reference      # as a fresh clone without ../shared runs them
    .venv/bin/python speed/bench_tests.py --tiers quick --tests tests/test_metrics.py   # a part of the suite

A tier is what ``make test-quick`` and ``make test`` run: pytest on every core (pytest-xdist, at most 4 workers, a
file's tests on one worker), ``-m "not slow"`` for the quick one. Each tier starts a fresh pytest (imports, the
workers, every fixture: a cold start). Printed per tier: the wall time, its budget and the ratio; the sum of the
tests' own times (setup, call and teardown, from pytest's JUnit XML) and the *floor* that sum sets, divided evenly
over the workers (no scheduling, no start-up: the least the tier can take), with the wall time over that floor;
the counts of passed, failed and skipped tests; then the 20 slowest tests of the last tier. The budgets are issue
31's: 5 minutes for the whole suite on 2 cores without the reference data, 8 with it. Wall times on a shared
machine drift with its load: the CPU and the load average are printed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIERS = {"quick": ["-m", "not slow"], "full": []}
BUDGET_S = {("quick", False): 120, ("quick", True): 180, ("full", False): 300, ("full", True): 480}


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run_tier(name: str, tests: list[str], workers: str, without_reference: bool) -> dict:
    """One tier in a fresh pytest; its wall time and the per-test times of its JUnit XML."""
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        env = dict(os.environ)
        if without_reference:
            env["CREPE_SHARED"] = str(Path(tmp) / "no-reference-data")
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers, "--maxprocesses",
                   "4", "--dist", "loadfile", f"--junitxml={junit}", *TIERS[name], *tests]
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if not junit.is_file():
            sys.exit(f"error: the {name} tier wrote no report (exit {done.returncode}):\n{done.stdout[-3000:]}")
        cases = ET.parse(junit).getroot().iter("testcase")
        times, counts = [], {"passed": 0, "failed": 0, "skipped": 0}
        for case in cases:
            outcome = ("failed" if case.find("failure") is not None or case.find("error") is not None
                       else "skipped" if case.find("skipped") is not None else "passed")
            counts[outcome] += 1
            times.append((float(case.get("time", 0)), f"{case.get('classname', '')}::{case.get('name', '')}"))
    n_workers = min(4, os.cpu_count() or 1) if workers == "auto" else max(1, int(workers))
    floor = sum(t for t, _ in times) / n_workers
    budget = BUDGET_S[(name, not without_reference)]
    return {"tier": name, "wall_s": round(wall, 1), "budget_s": budget, "over_budget": round(wall / budget, 2),
            "tests_s": round(sum(t for t, _ in times), 1), "workers": n_workers, "floor_s": round(floor, 1),
            "over_floor": round(wall / floor, 2) if floor else None, "exit": done.returncode, **counts,
            "slowest": [{"seconds": round(t, 2), "test": n} for t, n in sorted(times, reverse=True)[:20]]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", nargs="+", choices=list(TIERS), default=list(TIERS))
    parser.add_argument("--tests", nargs="*", default=[], help="test files or ids (default: the whole suite)")
    parser.add_argument("--workers", default="auto", help="pytest -n (default: auto, at most 4; 0: in one process)")
    parser.add_argument("--without-reference", action="store_true",
                        help="run as a machine without the reference data beside the checkout")
    parser.add_argument("--json", default=None, help="also write the numbers here")
    args = parser.parse_args()
    rows = [run_tier(name, args.tests, args.workers, args.without_reference) for name in args.tiers]
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; reference data: "
          f"{'no' if args.without_reference else 'beside the checkout where present'}")
    print(f"{'tier':<7}{'wall':>9}{'budget':>9}{'/budget':>9}{'tests':>9}{'floor':>9}{'/floor':>8}  "
          "passed failed skipped")
    for r in rows:
        print(f"{r['tier']:<7}{r['wall_s']:>8.1f}s{r['budget_s']:>8}s{r['over_budget']:>9.2f}{r['tests_s']:>8.1f}s"
              f"{r['floor_s']:>8.1f}s{r['over_floor'] or 0:>8.2f}  {r['passed']:>6} {r['failed']:>6} {r['skipped']:>7}")
    print(f"\nthe 20 slowest tests of the {rows[-1]['tier']} tier:")
    for s in rows[-1]["slowest"]:
        print(f"{s['seconds']:>8.2f}s  {s['test']}")
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": cpu_name(), "cores": os.cpu_count(), "tiers": rows}, indent=2))
    return 1 if any(r["failed"] or r["exit"] not in (0, 5) for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
