"""The package's shape: no import cycles, and data flowing one way through its layers.

Read from the source with ``ast`` (nothing is imported), so a lazy import inside a function counts
as much as one at the top of a module.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "crepe_utils"

#: Lowest first. A module may import from its own layer's packages or from lower layers, never higher.
#: Packages in one layer are peers: they may not import each other either. Every package is in one layer,
#: whole: no module is placed apart from its package.
LAYERS = [
    ["errors", "lazy", "escaping"],  # below everything: the atomic writers raise its DiskFullError; lazy imports; escaping
    ["paths", "atomic", "kernel", "metrics", "packaged"],
    ["progress", "textfile", "digests", "blind"],
    ["models", "download"],
    ["engine"],
    ["settings"],
    ["results"],
    ["protocol", "imagesets"],
    ["analysis", "claims"],
    ["benchmarks"],
    ["field"],
    ["evaluation"],
    ["evaluate_command"],
    ["runs"],
    ["across", "versus"],
    ["commands"],
    ["chapters"],
    ["toy", "site", "notebooks"],
    ["cli"],
    ["api"],
    ["__main__", "__init__"],
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """module → the package modules it imports (``from x import y`` counts y when y is a module)."""
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.split(".")[0] == "crepe_utils")
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if source.split(".")[0] != "crepe_utils":
                    continue
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    targets.add(sub if sub in files else source)
        graph[mod] = {t for t in targets if t != mod}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def top_package(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    layer_of = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}
    out = []
    for mod, targets in sorted(graph.items()):
        src = top_package(mod)
        for target in sorted(targets):
            dst = top_package(target)
            if dst == src:
                continue
            if layer_of[dst] >= layer_of[src]:
                why = "a peer" if layer_of[dst] == layer_of[src] else "a higher layer"
                out.append(f"{mod} imports {target} ({why})")
    return out


def test_the_cycle_finder_finds_a_cycle_and_the_layer_check_a_violation():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert layer_violations({"crepe_utils.engine.core": {"crepe_utils.benchmarks.crepe.queries"}}) == [
        "crepe_utils.engine.core imports crepe_utils.benchmarks.crepe.queries (a higher layer)"]
    assert layer_violations({"crepe_utils.analysis.x": {"crepe_utils.claims.y"}}) == [
        "crepe_utils.analysis.x imports crepe_utils.claims.y (a peer)"]
    assert folder_violations({"crepe_utils.benchmarks.crepe.x": {"crepe_utils.benchmarks.winoground.y",
                                                                 "crepe_utils.benchmarks.crepe.z"}}) == [
        "crepe_utils.benchmarks.crepe.x imports crepe_utils.benchmarks.winoground.y (another benchmark's folder)"]


def test_the_graph_sees_relative_and_module_imports():
    graph = import_graph()
    assert "crepe_utils.engine.core" in graph["crepe_utils.evaluation"]       # from ..engine import core
    assert "crepe_utils.benchmarks.crepe.queries" in graph["crepe_utils.benchmarks.crepe"]  # from . import queries as Q
    assert "crepe_utils.models.checkpoints" in graph["crepe_utils.benchmarks.crepe.roster"]


def folder_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports from one benchmark folder into another: a folder holds its benchmark whole, and only the
    registry (``crepe_utils.benchmarks``) and the layers above it see several."""
    def folder_of(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if len(parts) > 2 and parts[1] == "benchmarks" else None
    return [f"{mod} imports {target} (another benchmark's folder)" for mod, targets in sorted(graph.items())
            for target in sorted(targets) if folder_of(mod) and folder_of(target) not in (None, folder_of(mod))]


def test_benchmark_folders_do_not_import_each_other():
    assert folder_violations(import_graph()) == []


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_every_package_has_a_layer():
    packages = {top_package(m) for m in import_graph()}
    placed = {p for layer in LAYERS for p in layer}
    assert packages <= placed, f"place these in LAYERS: {sorted(packages - placed)}"


def test_imports_point_down_the_layers():
    assert layer_violations(import_graph()) == []


@pytest.mark.parametrize("needle", ["allow_shared", "../shared", "SHARED_DIR"])
def test_the_library_never_reaches_for_the_development_data(needle):
    hits = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if needle in p.read_text(encoding="utf-8")]
    assert hits == []


# ------------------------------------------------------------------ the house a newcomer can change

MAX_FUNCTION_LINES = 60
MAX_PUBLIC_PARAMETERS = 8

#: public functions allowed more parameters, each with why
MANY_PARAMETERS: dict[str, str] = {}

#: third-party modules imported inside functions on purpose (a prefix of the imported name), each with why
LAZY_LIBRARIES = {
    "torch": "heavy; the command line starts without it, and the toy world pins its numerics first",
    "torchvision": "loads torch",
    "open_clip": "loads torch",
    "PIL": "used only where images are decoded",
    "matplotlib": "plotting helpers only; slow to import",
    "seaborn": "plotting helpers only; loads matplotlib",
    "IPython": "only inside a notebook",
    "tqdm.notebook": "needs ipywidgets, only inside a notebook kernel",
    "tqdm.auto": "warns when imported in a notebook kernel without ipywidgets (notebook 01 imports validation)",
    "papermill": "notebooks runner: `notebooks deps` (read by make on every run) must start fast",
    "jupyter_client": "notebooks runner, as papermill",
    "nbconvert": "notebooks runner: slow to import",
    "jinja2": "the notebooks runner's page template, with nbconvert",
    "nbformat": "the notebooks runner, as papermill",
    "sphinx": "site: crepe_utils/site/build.py, optional docs extra (Sphinx builds the book)",
    "playwright": "site: crepe_utils/site/check.py, optional docs extra",
    "pyarrow": "only for Winoground's parquet release; heavy",
    "scipy": "Winoground's t interval only; slow to import",
    "statsmodels": "the binomial intervals (analysis/uncertainty.py) only; loads scipy and pandas",
    "transformers": "optional extras (albef, flava, hf)",
    "timm": "optional extra (albef)",
}

#: package modules imported inside functions on purpose: (file, imported module) → why
LAZY_PACKAGE_IMPORTS = {
    ("__init__.py", "crepe_utils.api"): "`import crepe_utils` stays light; the entry points load on first use",
    ("benchmarks/crepe/analysis.py", "crepe_utils.analysis.correlation"): "scipy, only for the R² tables",
    ("cli.py", "crepe_utils.benchmarks"): "the registry, read only for a command that is not one of cli's own",
    ("notebooks.py", "crepe_utils.benchmarks"): "the registry, only for `deps` (each notebook's data folders)",
    ("engine/precisions.py", "crepe_utils.engine.portable"): "imports torch at its top",
    ("evaluate_command.py", "crepe_utils.evaluation"): "the engine and the models: `evaluate --help` starts without them",
    ("toy/numerics.py", "crepe_utils.engine.portable"): "imports torch, which must wait for the toy's pinned numerics",
    ("toy/train.py", "crepe_utils.benchmarks.crepe.validation"): "toy/train.py is edited elsewhere; torch after the pinning",
    ("toy/train.py", "crepe_utils.engine.portable"): "imports torch, which must wait for the toy's pinned numerics",
    ("toy/train.py", "crepe_utils.models"): "toy/train.py is edited elsewhere; torch after the pinning",
}

#: modules that may catch a user error to print it: the boundary, and files edited elsewhere
ERROR_BOUNDARY = {
    "errors.py": "the one boundary (exit_status)",
    "site/build.py": "its own entry point; crepe_utils/site/ is edited elsewhere",
    "site/check.py": "its own entry point; crepe_utils/site/ is edited elsewhere",
}


def _sources():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _functions(tree):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_no_function_is_over_60_lines():
    long = [f"{rel}:{f.lineno} {f.name} ({f.end_lineno - f.lineno + 1} lines)"
            for rel, tree in _sources() for f in _functions(tree)
            if f.end_lineno - f.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []


def _parameters(f) -> list[str]:
    a = f.args
    return [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg not in ("self", "cls")]


def test_no_public_function_takes_over_8_parameters():
    many = [f"{rel}:{f.name} ({len(_parameters(f))})" for rel, tree in _sources() for f in _functions(tree)
            if not f.name.startswith("_") and len(_parameters(f)) > MAX_PUBLIC_PARAMETERS
            and f"{rel}:{f.name}" not in MANY_PARAMETERS]
    assert many == []


def _imported(rel: str, node) -> list[str]:
    """The absolute names an import statement brings in."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not node.level:
        return [node.module]
    package = ["crepe_utils"] + rel.split("/")[:-1]
    base = ".".join(package[: len(package) - node.level + 1])
    return [f"{base}.{node.module}"] if node.module else [f"{base}.{a.name}" for a in node.names]


def lazy_import_violations(sources) -> list[str]:
    out = []
    for rel, tree in sources:
        for f in _functions(tree):
            for node in ast.walk(f):
                if not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                for name in _imported(rel, node):
                    if any(name == lib or name.startswith(lib + ".") for lib in LAZY_LIBRARIES):
                        continue
                    if (rel, name) in LAZY_PACKAGE_IMPORTS:
                        continue
                    out.append(f"{rel}:{node.lineno} {f.name}: {ast.unparse(node)}")
    return sorted(set(out))


def test_the_lazy_import_check_sees_a_function_import():
    tree = ast.parse("def f():\n    import json\n    import torch\n    from ..paths import x\n")
    assert lazy_import_violations([("claims/x.py", tree)]) == [
        "claims/x.py:2 f: import json", "claims/x.py:4 f: from ..paths import x"]


def test_imports_are_at_the_top_unless_allowed():
    assert lazy_import_violations(_sources()) == []


def _user_error_classes() -> set[str]:
    """CrepeError and every class of the package derived from it (by name)."""
    bases = {}
    for _, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = {ast.unparse(b).rpartition(".")[2] for b in node.bases}
    found = {"CrepeError"}
    while True:
        more = {name for name, b in bases.items() if b & found} - found
        if not more:
            return found
        found |= more


def test_user_errors_are_printed_at_one_boundary():
    caught = _user_error_classes() | {"Exception", "BaseException"}
    printers = {"print"}          # error_line alone formats a message (a check's detail), it prints nothing
    out = []
    for rel, tree in _sources():
        if rel in ERROR_BOUNDARY:
            continue
        for handler in (n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler)):
            types = {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(handler.type)
                     if isinstance(n, (ast.Name, ast.Attribute))} if handler.type else {"BaseException"}
            calls = {c.func.id if isinstance(c.func, ast.Name) else getattr(c.func, "attr", "")
                     for stmt in handler.body for c in ast.walk(stmt) if isinstance(c, ast.Call)}
            if types & caught and calls & printers:
                out.append(f"{rel}:{handler.lineno} catches {sorted(types & caught)} to print it")
    assert out == []


@pytest.mark.parametrize("name", ["is_temporary", "issue_counts"])
def test_test_only_helpers_live_in_the_tests(name):
    hits = [rel for rel, tree in _sources() for f in _functions(tree)
            if f.name == name and not rel.startswith("benchmarks/sugarcrepe/")]   # SugarCrepe's own reports its issues
    assert hits == []
