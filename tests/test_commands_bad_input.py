"""Every command, run through its entry point as a user runs it (in this process: tests/cli_runner.py), on bad
input: one ``error:`` line, no traceback.

For each command of ``crepe_utils.cli.COMMANDS`` and each ``python -m`` module the Makefile calls,
one bad input: a missing folder, an unknown model, a malformed CSV, a corrupt toy-world folder, a
notebook that does not exist or fails. The command must exit non-zero and print exactly one
non-empty line on stderr, starting with ``error:``, and nothing anywhere may be a traceback.
A bad option is argparse's business: its usage message (two lines, exit status 2) is accepted.
Nothing here downloads anything or needs the reference data. One case runs as a real process, to show that
``python -m crepe_utils`` is that entry point (CREPE_TRACEBACK's traceback).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from crepe_utils import cli

import cli_runner

ROOT = Path(__file__).resolve().parent.parent


def _run(tmp_path: Path, *argv: str, module: str = "crepe_utils", env: dict | None = None):
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "CREPE_DATA": str(tmp_path / "no-data"),
                   "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg", **(env or {})}
    return cli_runner.run(argv, module=module, env=environment, cwd=tmp_path)


def _one_error_line(proc) -> str:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and lines[0].strip() != "error:", proc.stderr
    return lines[0]


def _malformed_crepe(tmp_path: Path) -> Path:
    """A CREPE folder whose one productivity CSV lacks most of its columns."""
    path = tmp_path / "crepe" / "prod_hard_negatives" / "atom" / "prod_vg_hard_negs_atom_complexity_4.csv"
    path.parent.mkdir(parents=True)
    path.write_text("image_id,caption\n7,a red dog\n")
    return tmp_path / "crepe"


def _corrupt_toy(tmp_path: Path) -> Path:
    """A toy-world output folder whose world stage record is not JSON (an interrupted copy, an editor)."""
    (tmp_path / "toy" / "world").mkdir(parents=True)
    (tmp_path / "toy" / "world" / "stage.json").write_text("{not json")
    return tmp_path / "toy"


def _failing_notebook(tmp_path: Path) -> Path:
    import nbformat
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("raise ValueError('no such table\\nat all')")])
    path = tmp_path / "fails.ipynb"
    nbformat.write(nb, path)
    return path


#: case → (arguments after ``python -m crepe_utils``, or (module, arguments), and what the line must name)
CASES = {
    "download: override file missing": (["download", "crepe", "--yes", "--dest", "dl"], "CREPE_DATASETS_OVERRIDE"),
    "validate: missing folder": (["validate", "--data-dir", "nowhere", "--no-tokens"], "nowhere does not exist"),
    "evaluate: unknown model": (["evaluate", "--benchmark", "productivity", "--model", "no-such-model",
                                 "--data-dir", "nowhere", "--out", "out", "--device", "cpu"], "no-such-model"),
    "evaluate: malformed CSV": (None, "prod_vg_hard_negs_atom_complexity_4.csv"),
    "evaluate-paper: unknown key": (["evaluate-paper", "--models", "no-such-key", "--out", "out", "--device", "cpu"],
                                    "unknown paper model 'no-such-key'"),
    "check: missing claims page": (["check", "--tables-dir", "tables", "--claims-page", "nowhere/claims.md"],
                                   "nowhere/claims.md"),
    "winoground: missing folder": (["winoground", "--model", "RN50", "--data-dir", "nowhere", "--out", "out",
                                    "--device", "cpu"], "nowhere does not exist"),
    "winoground: malformed examples.jsonl": (None, "2 malformed row(s): examples.jsonl:1: missing field(s)"),
    "toy: corrupt world folder": (None, "stage.json is not the toy pipeline's record"),
    "toy: misspelt held-out compound": (["toy", "--out", "toy", "--held-out", "purple blob", "--quiet"],
                                        "'purple blob' is not a compound"),
    "compare: not a result folder": (["compare", "nowhere", "nowhere", "--out", "out"],
                                     "nowhere is not a result folder"),
    "standing: not a result folder": (["standing", "nowhere", "--out", "out"], "nowhere is not a result folder"),
    "unknown command": (["evaluat"], "unknown command 'evaluat'"),
    "notebooks: missing notebook": (("crepe_utils.notebooks", ["nowhere.ipynb", "out.ipynb"]), "nowhere.ipynb"),
    "notebooks: failing cell": (None, "ValueError: no such table; at all"),
    "site.build: no executed notebooks": (("crepe_utils.site.build", ["--build-dir", "nowhere", "--out", "site"]),
                                          "run `make all` first"),
    "site.check: no site": (("crepe_utils.site.check", ["nowhere"]), "holds no index.html"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_command_prints_one_error_line(case, tmp_path, tiny_model):
    argv, expected = CASES[case]
    module, env = "crepe_utils", None
    if case == "download: override file missing":
        env = {"CREPE_DATASETS_OVERRIDE": str(tmp_path / "nowhere.json")}
    elif case == "evaluate: malformed CSV":
        cfg, ckpt = tiny_model
        argv = ["evaluate", "--benchmark", "productivity", "--model", cfg.stem, "--pretrained", str(ckpt),
                "--model-config", str(cfg), "--data-dir", str(_malformed_crepe(tmp_path)), "--image-dir", "images",
                "--out", "out", "--complexities", "4", "--hn-types", "atom", "--no-cache", "--device", "cpu"]
    elif case == "winoground: malformed examples.jsonl":      # its message lists the rows, one a line
        (tmp_path / "wg" / "images").mkdir(parents=True)
        (tmp_path / "wg" / "examples.jsonl").write_text('{"id": "x"}\nnot json\n')
        argv = ["winoground", "--model", "RN50", "--data-dir", "wg", "--out", "out", "--device", "cpu"]
    elif case == "toy: corrupt world folder":
        argv = ["toy", "--out", str(_corrupt_toy(tmp_path)), "--quiet"]
    elif case == "notebooks: failing cell":
        argv = ("crepe_utils.notebooks", [str(_failing_notebook(tmp_path)), "out.ipynb", "--no-html"])
    if isinstance(argv, tuple):
        module, argv = argv
    line = _one_error_line(_run(tmp_path, *argv, module=module, env=env))
    assert expected in line
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.ipynb").exists()


def test_every_command_has_a_bad_input_case():
    covered = {argv[0] for argv, _ in CASES.values() if isinstance(argv, list)} | {"evaluate", "toy"}
    assert set(cli.COMMANDS) - {"models"} <= covered       # `models` reads no input: its bad option below


def test_bad_option_is_an_argparse_usage_error(tmp_path):
    proc = _run(tmp_path, "models", "--no-such-option")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1].endswith("error: unrecognized arguments: --no-such-option")


def test_traceback_on_request(tmp_path):
    """CREPE_TRACEBACK=1 shows where a user error came from (for a bug report)."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "CREPE_TRACEBACK": "1"}
    proc = subprocess.run([sys.executable, "-m", "crepe_utils", "validate", "--data-dir", "nowhere"],
                          capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=300)
    assert proc.returncode == 1 and "Traceback" in proc.stderr and "DataError" in proc.stderr


def test_every_package_exception_is_a_crepe_error():
    """Every exception class the package defines is a CrepeError, except the few a module raises and
    catches itself (they never reach a user) and warnings (CacheWarning)."""
    import importlib
    import inspect

    from crepe_utils.errors import CrepeError
    internal = {"crepe_utils.benchmarks.crepe.queries._BadRow", "crepe_utils.benchmarks.winoground.data.BadRow",
                "crepe_utils.benchmarks.sugarcrepe.data._BadItem",
                "crepe_utils.download.transport._Transient", "crepe_utils.download.transport._RangeRejected",
                "crepe_utils.download.transport._SourceFailed"}
    found = []
    for path in sorted((ROOT / "crepe_utils").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] in ("__init__", "__main__") else parts)
        if parts[-1] == "__main__":
            continue
        module = importlib.import_module(name)
        for cls_name, cls in vars(module).items():
            if (inspect.isclass(cls) and issubclass(cls, Exception) and not issubclass(cls, Warning)
                    and cls.__module__ == name):
                found.append(f"{name}.{cls_name}")
                if f"{name}.{cls_name}" not in internal:
                    assert issubclass(cls, CrepeError), f"{name}.{cls_name} is not a CrepeError"
    assert internal <= set(found)            # the list of internal ones is current
    assert len(found) > len(internal) + 8
