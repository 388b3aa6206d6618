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
#: Packages in one layer are peers: they may not import each other either. A ``package.module`` entry
#: places one module apart from its package (a command module above the evaluation it drives).
LAYERS = [
    ["errors", "paths", "atomic", "kernel", "metrics"],
    ["progress", "textfile", "blind"],
    ["models", "download"],
    ["reported"],
    ["engine"],
    ["settings"],
    ["results"],
    ["crepe", "winoground", "sugarcrepe"],
    ["benchmarks", "scoring"],
    ["evaluation"],
    ["evaluate_command"],
    ["crepe.scheduling", "analysis"],
    ["claims"],
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
    if len(parts) == 1:
        return "__init__"
    own = ".".join(parts[1:3])
    return own if any(own in layer for layer in LAYERS) else parts[1]


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
    assert layer_violations({"crepe_utils.engine.core": {"crepe_utils.crepe.queries"}}) == [
        "crepe_utils.engine.core imports crepe_utils.crepe.queries (a higher layer)"]
    assert layer_violations({"crepe_utils.crepe.x": {"crepe_utils.winoground.y"}}) == [
        "crepe_utils.crepe.x imports crepe_utils.winoground.y (a peer)"]


def test_the_graph_sees_relative_and_module_imports():
    graph = import_graph()
    assert "crepe_utils.engine.core" in graph["crepe_utils.evaluation"]       # from ..engine import core
    assert "crepe_utils.crepe.queries" in graph["crepe_utils.benchmarks.crepe"]  # from ..crepe import queries as Q
    assert "crepe_utils.models.registry" in graph["crepe_utils.reported"]


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
