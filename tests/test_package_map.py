"""docs/package.md lists every module of crepe_utils/ with a line on what it holds, and nothing else.

A module added without its line, a line left behind for a removed module, or a module listed twice
fails here.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "crepe_utils"
MAP = ROOT / "docs" / "package.md"
#: One module per line: "- `crepe_utils.x.y`: what it holds."
LINE = re.compile(r"^- `(crepe_utils(?:\.\w+)*)`: (\S.*)$")


def modules(package: Path = PACKAGE) -> set[str]:
    """Dotted names of every module and package under ``package`` (a package is its __init__.py)."""
    names = set()
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def mapped() -> list[tuple[str, str]]:
    return [m.groups() for line in MAP.read_text(encoding="utf-8").splitlines() if (m := LINE.match(line))]


def test_every_module_has_one_line_and_every_line_a_module():
    listed = [name for name, _ in mapped()]
    twice = sorted(name for name, n in Counter(listed).items() if n > 1)
    assert not twice, f"docs/package.md lists these more than once: {twice}"
    missing = sorted(modules() - set(listed))
    assert not missing, f"modules without a line in docs/package.md: {missing}"
    stale = sorted(set(listed) - modules())
    assert not stale, f"docs/package.md lists modules that do not exist: {stale}"


def test_each_line_says_what_the_module_holds():
    for name, text in mapped():
        assert len(text.split()) >= 3, f"{name}: say what it holds"


def test_modules_are_grouped_under_their_subpackage():
    """Each `## ` group names the package its modules belong to, so a module sits beside its siblings."""
    groups = re.split(r"^## +(.+)$", MAP.read_text(encoding="utf-8"), flags=re.M)
    for heading, body in zip(groups[1::2], groups[2::2]):
        names = [m.group(1) for line in body.splitlines() if (m := LINE.match(line))]
        assert names, f"group {heading!r} lists no module"
        packages = set(re.findall(r"`(crepe_utils(?:\.\w+)*)`", heading))
        for name in names:
            assert name in packages or name.rpartition(".")[0] in packages, f"{name} is not under {heading!r}"


def test_the_map_notices_a_module_added_without_a_line(tmp_path):
    fake = tmp_path / "crepe_utils"
    for name in ("__init__.py", "engine/__init__.py", "engine/core.py", "engine/brand_new.py"):
        (fake / name).parent.mkdir(parents=True, exist_ok=True)
        (fake / name).write_text("")
    assert modules(fake) == {"crepe_utils", "crepe_utils.engine", "crepe_utils.engine.core",
                             "crepe_utils.engine.brand_new"}
    assert modules(fake) - {name for name, _ in mapped()} == {"crepe_utils.engine.brand_new"}
