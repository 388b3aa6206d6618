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
        pm.execute_notebook(str(source), str(tmp), parameters=parameters or {}, kernel_name="python3",
                            cwd=str(cwd or PROJECT_ROOT), progress_bar=progress, log_output=False)
    if html:
        from nbconvert import HTMLExporter
        body, _ = HTMLExporter().from_filename(str(executed))
        write_text(executed.with_suffix(".html"), body)
    return executed


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
    except Exception as exc:  # noqa: BLE001 - papermill's error names the failing cell
        print(f"error: {args.source} failed: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
