"""Run a command's ``main(argv)`` in this process, as ``python -m <module> argv`` would run it in another.

A child process pays 2 to 7 s of imports before it does anything; most command tests ask only what the command
prints and returns, which the entry point decides in-process just the same. :func:`run` gives what
``subprocess.run(..., capture_output=True, text=True)`` gives (``returncode``, ``stdout``, ``stderr``) and
reproduces what a fresh process would see:

* the environment given (``env`` replaces os.environ for the call; ``unset`` removes names), the working folder;
* Python's default warning filters, with each warning printed on stderr as a process prints it (pytest's own
  capture would otherwise keep a stray warning off stderr, and a test of "one error line" would miss it);
* ``SystemExit`` (argparse's usage errors) as the exit status.

An exception that escapes ``main`` is a traceback in a real process: here it propagates into the test, which fails.
Tests that need a real process (a kill, a signal, a pipe closed by its reader, an import from scratch, ``make``)
start one.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

#: Python's own warning filters in a fresh process without -W or PYTHONWARNINGS (most shown once per place,
#: these ignored)
_IGNORED_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


@dataclass
class Completed:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def _environment(env: dict | None, unset=()):
    saved = dict(os.environ)
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update({k: str(v) for k, v in env.items()})
        for name in unset:
            os.environ.pop(name, None)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _working_folder(cwd):
    saved = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved)


def run(argv, *, module: str = "crepe_utils", env: dict | None = None, unset=("CREPE_TRACEBACK",),
        cwd=None) -> Completed:
    """``python -m <module> *argv`` (``main`` of ``module``, or of ``crepe_utils.cli`` for the package) in this
    process; ``env`` is the whole environment (default: this one), less ``unset``."""
    argv = [str(a) for a in argv]
    main = importlib.import_module("crepe_utils.cli" if module == "crepe_utils" else module).main
    out, err = io.StringIO(), io.StringIO()

    def show(message, category, filename, lineno, file=None, line=None):
        err.write(warnings.formatwarning(message, category, filename, lineno, line))

    with _environment(env, unset), _working_folder(cwd), warnings.catch_warnings():
        warnings.resetwarnings()
        warnings.simplefilter("default")
        for category in _IGNORED_BY_DEFAULT:
            warnings.simplefilter("ignore", category)
        warnings.showwarning = show
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if exc.code is not None and not isinstance(exc.code, int):
                    print(exc.code, file=sys.stderr)
    return Completed([module, *argv], int(status or 0), out.getvalue(), err.getvalue())
