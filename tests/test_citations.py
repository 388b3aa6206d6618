"""What a reader sees cites the papers (section, table, figure), never the project's development notes.

Checked: README.md, the pages of docs/, the notebooks' cells, the published numbers' source column
(crepe_utils/reported/*.csv, which the claims tables print) and the string literals of the claims code.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: A "card" cited as a source ("card 003 Pitfalls", "the paper's card"); a dataset card on the hub is public.
CARD = re.compile(r"(?<!dataset )\bcards?\b", re.I)


def notebook_text(path: Path) -> str:
    return "\n".join("".join(cell["source"]) for cell in json.loads(path.read_text(encoding="utf-8"))["cells"])


def claim_strings(path: Path) -> str:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return "\n".join(node.value for node in ast.walk(tree)
                     if isinstance(node, ast.Constant) and isinstance(node.value, str))


def sources() -> dict[str, str]:
    """Every text a reader sees, by file (relative to the project root)."""
    texts = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    for path in sorted((ROOT / "docs").rglob("*.md")) + sorted((ROOT / "crepe_utils" / "reported").glob("*.csv")):
        texts[path.relative_to(ROOT).as_posix()] = path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        texts[path.relative_to(ROOT).as_posix()] = notebook_text(path)
    for path in sorted((ROOT / "crepe_utils" / "claims").glob("*.py")):
        texts[path.relative_to(ROOT).as_posix()] = claim_strings(path)
    return texts


@pytest.mark.parametrize("name", sorted(sources()))
def test_no_development_file_is_cited(name):
    hits = [line.strip() for line in sources()[name].splitlines() if CARD.search(line)]
    assert not hits, f"{name} cites a development file; cite the paper's section, table or figure: {hits[:3]}"


def test_the_pattern_catches_a_card_and_spares_a_dataset_card():
    for text in ("Winoground tab. 5 (card 003 Pitfalls)", "The paper's card carries", "As the card notes"):
        assert CARD.search(text), text
    for text in ("the dataset card of facebook/winoground", "discarded rows", "CREPE app. B.1"):
        assert not CARD.search(text), text
