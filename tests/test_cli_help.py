"""The command line's help starts fast: printing it imports neither torch, open_clip, scipy, pandas nor matplotlib
(``speed/bench_cli_help.py`` times it). Run in a fresh process, since this test session has imported them all."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "open_clip", "scipy", "pandas", "matplotlib", "wordfreq")

_PROBE = """
import contextlib, io, json, sys
from crepe_utils import cli
HEAVY = %r
loaded = {}
for argv in [["--help"], *([name, "--help"] for name in cli.all_commands())]:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            cli.main(argv)
        except SystemExit:
            pass
    loaded[" ".join(argv)] = [m for m in HEAVY if m in sys.modules]
import scipy                                       # the control: an import the probe must see
loaded["control"] = [m for m in HEAVY if m in sys.modules]
print(json.dumps(loaded))
"""


def test_no_command_help_imports_a_heavy_library():
    """Each command's help, in the order listed, and the overall help: what it left imported. A command whose
    help imports torch (say) shows from that command on, so the first one listed is the culprit. The control:
    an import of scipy after them is seen."""
    done = subprocess.run([sys.executable, "-c", _PROBE % (HEAVY,)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"--help", "evaluate --help", "crepe-productivity --help"} <= set(loaded)
    assert "scipy" in loaded.pop("control")
    assert {argv: heavy for argv, heavy in loaded.items() if heavy} == {}
