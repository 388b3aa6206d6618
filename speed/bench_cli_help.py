"""How long the command line takes to print its help, from a cold start, against 0.3 s.

    .venv/bin/python speed/bench_cli_help.py              # 7 runs of each
    .venv/bin/python speed/bench_cli_help.py --repeat 1 --json out.json

Each command runs in a fresh interpreter (``python -m crepe_utils <argv>``), the way a user types it. Printed, per
command: the median wall time of its runs, that time over the budget, and over the *floor*, the median start of a
bare interpreter (``python -c pass``) on the same machine, the least any command can take. Beside them, what a
help must not import: torch, open_clip, scipy, pandas, matplotlib (read from the last run, ``-X importtime``).
Wall times on a shared machine drift with its load: the load average is printed.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 0.3
HEAVY = ("torch", "open_clip", "scipy", "pandas", "matplotlib")
COMMANDS = (["--help"], ["evaluate", "--help"], ["crepe-productivity", "--help"], ["download", "--help"],
            ["check", "--help"], ["toy", "--help"])


def timed(argv: list[str]) -> tuple[float, str]:
    """(wall seconds, stderr) of one fresh ``python argv`` run."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - start
    if done.returncode not in (0,):
        sys.exit(f"error: python {' '.join(argv)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return wall, done.stderr


def imported(stderr: str) -> list[str]:
    """The heavy top-level modules an ``-X importtime`` listing names."""
    names = {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}
    return [m for m in HEAVY if m in names]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each command (default: 7)")
    parser.add_argument("--json", default=None, help="also write the numbers here")
    args = parser.parse_args()
    floor = statistics.median(timed(["-c", "pass"])[0] for _ in range(args.repeat))
    rows = []
    for command in COMMANDS:
        walls = [timed(["-m", "crepe_utils", *command])[0] for _ in range(args.repeat)]
        heavy = imported(timed(["-X", "importtime", "-m", "crepe_utils", *command])[1])
        rows.append({"command": " ".join(command), "median_s": round(statistics.median(walls), 4),
                     "over_budget": round(statistics.median(walls) / BUDGET_S, 2),
                     "over_floor": round(statistics.median(walls) / floor, 1), "heavy_imports": heavy})
    print(f"python -c pass (the floor): {floor:.3f} s median of {args.repeat}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; budget {BUDGET_S} s")
    print(f"{'python -m crepe_utils':<40}{'median':>9}{'/budget':>9}{'/floor':>8}  heavy imports")
    for r in rows:
        print(f"{r['command']:<40}{r['median_s']:>8.3f}s{r['over_budget']:>9.2f}{r['over_floor']:>8.1f}  "
              f"{', '.join(r['heavy_imports']) or 'none'}")
    if args.json:
        Path(args.json).write_text(json.dumps({"floor_s": round(floor, 4), "budget_s": BUDGET_S, "commands": rows},
                                              indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
