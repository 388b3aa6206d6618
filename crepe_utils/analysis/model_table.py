"""``python -m crepe_utils models``: the model registry as a table, with ImageNet accuracy."""
from __future__ import annotations

import pandas as pd

from .. import reported
from ..models import FAMILIES, registry
from .reporting import markdown_table


def registry_table():
    """The registry as a DataFrame, with ImageNet accuracy, for listing and the README."""
    imagenet = reported.imagenet()
    return pd.DataFrame([{
        "key": m.key, "paper name": m.display, "training data": m.train_label,
        "architecture": m.architecture or "—", "pretrained": m.pretrained or "—",
        "QuickGELU": {True: "yes", False: "no", None: "—"}[m.quick_gelu],
        "systematicity": "yes" if m.systematicity else "no",
        "ImageNet top-1": imagenet.get(m.key, float("nan")),
        "loader": FAMILIES[m.loader].loader if m.loader in FAMILIES else m.loader,
        "caveat": m.caveat or "—",
    } for m in registry.PAPER_MODELS])


def add_arguments(parser) -> None:
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")


def run(args) -> int:
    table = registry_table()
    if args.markdown:
        print(markdown_table(table))
    else:
        print(table.to_string(index=False))
    return 0
