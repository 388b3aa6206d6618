"""Execute a parameterised notebook with papermill; keep the executed copy and an HTML rendering.

``python -m crepe_utils.notebooks notebooks/02_systematicity.ipynb build/02_systematicity.ipynb
-p results_dir results/evaluated`` (what the Makefile runs). The executed copy replaces the old
one only when every cell ran, so a failed run never leaves a half-executed notebook that looks
finished; the source notebook is never written to.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .atomic import atomic_path, write_text
from .errors import error_line
from .paths import PROJECT_ROOT


def _value(text: str):
    """Parameter values from the command line: None, int, float, bool, else the string."""
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def execute(source: str | Path, executed: str | Path, parameters: dict | None = None,
            html: bool = True, cwd: str | Path | None = None, progress: bool = False) -> Path:
    """Run ``source`` into ``executed`` (atomically) and write ``executed`` with suffix .html beside it."""
    import papermill as pm

    executed = Path(executed)
    with atomic_path(executed) as tmp:
        # the kernel's own log stays quiet below errors (ipykernel warns on stderr at every start that
        # its local TCP sockets are unencrypted); the cells' output and warnings go to the notebook
        pm.execute_notebook(str(source), str(tmp), parameters=parameters or {}, kernel_name="python3",
                            cwd=str(cwd or PROJECT_ROOT), progress_bar=progress, log_output=False,
                            extra_arguments=["--IPKernelApp.log_level=ERROR"])
    if html:
        from nbconvert import HTMLExporter
        body, _ = HTMLExporter().from_filename(str(executed))
        write_text(executed.with_suffix(".html"), body)
    return executed


def _failure(exc: Exception) -> str:
    """What went wrong, without the kernel's traceback: a failing cell's number, error type and message."""
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    if ename is None:                        # not a cell's error (papermill's PapermillExecutionError)
        return str(exc)
    cell = getattr(exc, "exec_count", None)
    return (f"cell [{cell}] raised " if cell is not None else "a cell raised ") + f"{ename}: {evalue}; " \
        "run the notebook in Jupyter to see the traceback"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crepe_utils.notebooks", description=__doc__.splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("executed")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    parser.add_argument("--no-html", action="store_true")
    args = parser.parse_args(argv)
    params = {name: _value(value) for name, value in args.parameter}
    print(f"running {args.source} -> {args.executed}" + (f" with {params}" if params else ""), flush=True)
    try:
        execute(args.source, args.executed, params, html=not args.no_html, progress=sys.stderr.isatty())
    except Exception as exc:  # noqa: BLE001 - a failing cell, a missing notebook or kernel: one line each
        print(error_line(f"{args.source} failed: {_failure(exc)}"), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
