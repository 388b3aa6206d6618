"""Execute a parameterised notebook with papermill; keep the executed copy and an HTML rendering.

``python -m crepe_utils.notebooks notebooks/02_systematicity.ipynb build/02_systematicity.ipynb
-p results_dir results/evaluated`` (what the Makefile runs). The executed copy replaces the old
one only when every cell ran, so a failed run never leaves a half-executed notebook that looks
finished; the source notebook is never written to.

Every kernel starts with the same display settings (:data:`KERNEL_SETUP`: pandas shows every
column, row and character of a table, so no cell of a page is cut with "..."), and the executed copy
names no place of the building machine: its papermill record holds project-relative paths, and the
data, project, home and temporary folders in its outputs read ``$CREPE_DATA/...``, ``./...``,
``~/...`` and ``$TMPDIR/...`` (:func:`portable_notebook`).

``python -m crepe_utils.notebooks deps NOTEBOOK...`` prints, as Make variables, the package files
each notebook's imports reach (and those of the toy pipeline): what its executed copy depends on.
"""
from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

from . import escaping
from .textfile import parse_json
from .atomic import atomic_path, write_text
from .errors import CrepeError, exit_status
from .paths import PROJECT_ROOT, machine_roots, portable_text


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
    """Run ``source`` into ``executed`` (atomically) and write ``executed`` with suffix .html beside it.

    A failing cell raises :class:`NotebookError` naming the cell; a missing notebook, an OSError.
    """
    import papermill as pm
    from jupyter_client.kernelspec import NoSuchKernel

    executed = Path(executed)
    _check_source(source, parameters or {})
    try:
        _run_notebook(source, executed, parameters, cwd, progress)
    except (pm.PapermillExecutionError, NoSuchKernel) as exc:   # a failing cell, no python3 kernel
        raise NotebookError(f"{source} failed: {_failure(exc)}") from exc
    if html:
        body, _ = html_exporter().from_filename(str(executed))
        write_text(executed.with_suffix(".html"), escaping.page(body))
    return executed


#: JupyterLab's look without MathJax: no notebook here typesets mathematics, and a caption's ``$x$`` or a
#: folder's ``$CREPE_DATA ... $VG_IMAGES`` is text, not a formula.
_NO_MATH = ("{%- extends 'lab/index.html.j2' -%}\n"
            "{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}\n")


def html_exporter():
    """nbconvert's HTML exporter for an executed notebook's page beside it (``build/<stem>.html``)."""
    import jinja2
    from nbconvert import HTMLExporter
    return HTMLExporter(extra_loaders=[jinja2.DictLoader({"crepe-lab.html.j2": _NO_MATH})],
                        template_file="crepe-lab.html.j2")


#: Run in every kernel before the notebook's first cell: pandas shows tables whole (no cell cut with
#: "...", no row or column elided); a page wraps long cells instead (the site's style).
KERNEL_SETUP = ("import pandas as _crepe_pd",
                "_crepe_pd.set_option('display.max_colwidth', None)",
                "_crepe_pd.set_option('display.max_columns', None)",
                "_crepe_pd.set_option('display.max_rows', None)",
                "_crepe_pd.set_option('display.width', None)",
                "del _crepe_pd")


def _check_source(source, parameters: dict) -> None:
    """Refuse a source that is not a notebook, or a parameter its ``parameters`` cell does not declare
    (papermill would only warn, and the run would silently use the default instead)."""
    import papermill as pm
    try:
        content = parse_json(Path(source).read_text(encoding="utf-8"))
        if not isinstance(content, dict) or not isinstance(content.get("cells"), list):
            raise ValueError(f"a JSON {type(content).__name__} without a list of 'cells'")
        declared = pm.inspect_notebook(str(source))
    except ValueError as exc:        # not UTF-8, not JSON, not a notebook, or one of an unknown format
        raise NotebookError(f"{source} is not a readable notebook ({type(exc).__name__}: "
                            f"{' '.join(str(exc).split())[:120]})") from None
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise NotebookError(f"{source} has no parameter {', '.join(map(repr, unknown))}; its parameters are: "
                            f"{', '.join(sorted(declared)) or 'none'}")


def _run_notebook(source, executed: Path, parameters: dict | None, cwd, progress: bool) -> None:
    import nbformat
    import papermill as pm
    with atomic_path(executed) as tmp:
        # the kernel's own log stays quiet: ipykernel warns on stderr at every start that its local TCP
        # sockets are unencrypted, and logs the interrupt papermill sends it after a failed cell (the
        # failure is this command's one error line); the cells' output and warnings go to the notebook
        pm.execute_notebook(str(source), str(tmp), parameters=parameters or {}, kernel_name="python3",
                            cwd=str(cwd or PROJECT_ROOT), progress_bar=progress, log_output=False,
                            extra_arguments=["--IPKernelApp.log_level=CRITICAL",
                                             *(f"--IPKernelApp.exec_lines={line}" for line in KERNEL_SETUP)],
                            kernel_manager_class=_quiet_kernel_manager())
        nb = nbformat.read(tmp, as_version=4)
        portable_notebook(nb, source, executed)
        nbformat.write(nb, tmp)


# ------------------------------------------------------------------------------ no machine's paths

def _relative(path, roots) -> str:
    path = Path(path).absolute()
    try:
        return path.relative_to(PROJECT_ROOT).as_posix()
    except ValueError:
        return portable_text(str(path), roots)


def portable_notebook(nb, source, executed) -> None:
    """Rewrite an executed notebook in place so that it names no folder of the building machine.

    papermill's record gets the project-relative source and final names (not the temporary file it
    wrote); parameters, the injected parameters cell and every text output get :func:`portable_text`.
    Images are left alone."""
    roots = machine_roots()
    record = nb.metadata.get("papermill", {})
    if record:
        record["input_path"], record["output_path"] = _relative(source, roots), _relative(executed, roots)
        for key in ("parameters", "default_parameters"):
            if key in record:
                record[key] = json.loads(portable_text(json.dumps(record[key]), roots))
    for cell in nb.cells:
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            cell.source = portable_text(cell.source, roots)
        for output in cell.get("outputs", []):
            _portable_output(output, roots)


def _portable_output(output, roots) -> None:
    if "text" in output:
        output["text"] = portable_text(output["text"], roots)
    if "traceback" in output:
        output["traceback"] = [portable_text(line, roots) for line in output["traceback"]]
    if "evalue" in output:
        output["evalue"] = portable_text(output["evalue"], roots)
    for mime, value in output.get("data", {}).items():
        if mime.startswith("text/") or mime in ("application/json", "image/svg+xml"):
            output["data"][mime] = (portable_text(value, roots) if isinstance(value, str)
                                    else json.loads(portable_text(json.dumps(value), roots)))


def _quiet_kernel_manager():
    """A kernel manager whose kernel process writes nothing to this command's stderr: what a cell prints
    reaches the notebook through the kernel's messages; the process's own stderr holds only library noise
    at shutdown (libzmq's assertion on a closed socket, at random), which would break the one error line."""
    from jupyter_client.manager import AsyncKernelManager

    class QuietKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd, **kw):
            kw.setdefault("stderr", subprocess.DEVNULL)
            return await super()._async_launch_kernel(kernel_cmd, **kw)

    return QuietKernelManager


class NotebookError(CrepeError, RuntimeError):
    """A notebook that did not run to its end: the failing cell, or no kernel to run it."""


def _failure(exc: Exception) -> str:
    """What went wrong, without the kernel's traceback: a failing cell's number, error type and message."""
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    if ename is None:                        # not a cell's error (papermill's PapermillExecutionError)
        return str(exc)
    cell = getattr(exc, "exec_count", None)
    return (f"cell [{cell}] raised " if cell is not None else "a cell raised ") + f"{ename}: {evalue}; " \
        "run the notebook in Jupyter to see the traceback"


# ------------------------------------------------------------------------------ dependencies

PACKAGE = Path(__file__).resolve().parent


def _module_files() -> dict[str, Path]:
    files = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


def _imports(tree: ast.AST, package: str, files: dict[str, Path]) -> set[str]:
    """The package modules ``tree`` imports: at the top or inside a function (a lazy import counts),
    relative or absolute. The CLI's ``importlib`` imports of its commands are not seen: a notebook that
    runs a command (06 runs the toy pipeline) depends on that command's output instead."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.add(source)
            found.update(f"{source}.{a.name}" for a in node.names)
    return {name for name in found if name in files}


def reached_files(roots: set[str]) -> list[Path]:
    """The files loading ``roots`` can read: the modules they import, transitively, with the packages
    around them and the data files (CSV, JSON, CSS ...) beside each. The top package's own imports are
    not followed: it loads :mod:`crepe_utils.api` only when an API name is used (a root then)."""
    files = _module_files()
    todo, seen = [m for m in roots if m in files], set()
    while todo:
        mod = todo.pop()
        if mod in seen:
            continue
        seen.add(mod)
        parts = mod.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]          # the packages around it
        if mod != PACKAGE.name:
            path = files[mod]
            package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
            todo += _imports(ast.parse(path.read_text(encoding="utf-8")), package, files)
    out = {files[m] for m in seen}
    out |= {f for p in list(out) for f in p.parent.iterdir() if f.is_file() and f.suffix not in (".py", ".pyc")}
    return sorted(out)


def notebook_roots(notebook: str | Path) -> set[str]:
    """The package modules a notebook's code cells import (an API name counts as :mod:`crepe_utils.api`)."""
    files = _module_files()
    api = next(ast.literal_eval(node.value) for node in ast.parse(files[PACKAGE.name].read_text(encoding="utf-8")).body
               if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["API"])
    cells = json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))  # magics
    tree = ast.parse(code)
    roots = _imports(tree, PACKAGE.name, files)
    names = {a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module == PACKAGE.name
             for a in node.names}
    names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
              and isinstance(node.value, ast.Name) and node.value.id == PACKAGE.name}
    return roots | ({f"{PACKAGE.name}.api"} if names & set(api) else set())


def make_variables(notebooks: list[str]) -> str:
    """``NB_DEPS_<stem> := files`` per notebook and ``TOY_SOURCES := files`` (the toy command's)."""
    def line(name: str, roots: set[str]) -> str:
        return f"{name} := " + " ".join(p.relative_to(PACKAGE.parent).as_posix() for p in reached_files(roots))
    lines = ["# what each notebook's imports reach (python -m crepe_utils.notebooks deps); generated by make"]
    lines += [line(f"NB_DEPS_{Path(nb).stem}", notebook_roots(nb)) for nb in notebooks]
    lines.append(line("TOY_SOURCES", {f"{PACKAGE.name}.__main__", f"{PACKAGE.name}.cli", f"{PACKAGE.name}.toy.pipeline"}))
    return "\n".join(lines) + "\n"


def data_variables(notebooks: list[str]) -> str:
    """Make variables naming the data files each notebook reads: the files of the text datasets of the benchmarks
    that list it (:attr:`crepe_utils.protocol.Benchmark.notebooks`), or of every benchmark for a notebook none
    lists; each dataset's folder as Make finds it (its variable, else ``$(CREPE_DATA)/<folder>``)."""
    from . import benchmarks     # the registry: only for `deps`, which make runs when a source changed
    def folder(d) -> str:
        return f"$(or $({d.variable}),$(CREPE_DATA)/{d.folder})" if d.variable else f"$(CREPE_DATA)/{d.folder}"
    lines = []
    for nb in notebooks:
        stem = Path(nb).stem
        owners = [b for b in benchmarks.BENCHMARKS.values() if stem in b.notebooks] or benchmarks.BENCHMARKS.values()
        text = dict.fromkeys(d for b in owners for d in b.datasets if not d.images)
        finds = " ".join(f"$(shell find {folder(d)} -type f -not -path '*/.*' 2>/dev/null)" for d in text)
        lines.append(f"NB_DATA_{stem} = {finds}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["deps"]:
        sys.stdout.write(make_variables(argv[1:]) + data_variables(argv[1:]))
        return 0
    parser = argparse.ArgumentParser(prog="python -m crepe_utils.notebooks", description=__doc__.splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("executed")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    parser.add_argument("--no-html", action="store_true")
    args = parser.parse_args(argv)
    params = {name: _value(value) for name, value in args.parameter}
    print(f"running {args.source} -> {args.executed}" + (f" with {params}" if params else ""), flush=True)
    return exit_status(lambda: execute(args.source, args.executed, params, html=not args.no_html,
                                       progress=sys.stderr.isatty()) and 0)


if __name__ == "__main__":
    sys.exit(main())
