"""``python -m crepe_utils models``: the model registry as a table, with ImageNet accuracy, then SugarCrepe's
models (the checkpoints of its results table that ``evaluate-paper`` runs on SugarCrepe)."""
from __future__ import annotations

import pandas as pd

from ..benchmarks.crepe import reported
from ..models import FAMILIES
from ..models.imagenet import top1 as imagenet_top1
from ..benchmarks.crepe import roster as registry
from ..benchmarks.sugarcrepe import roster as sugarcrepe_models
from ..analysis.reporting import markdown_table


def registry_table():
    """The registry as a DataFrame, with ImageNet accuracy, for listing and the README."""
    imagenet = imagenet_top1()
    return pd.DataFrame([{
        "key": m.key, "paper name": m.display, "training data": m.train_label,
        "architecture": m.architecture or "—", "pretrained": m.pretrained or "—",
        "QuickGELU": {True: "yes", False: "no", None: "—"}[m.quick_gelu],
        "systematicity": "yes" if m.systematicity else "no",
        "ImageNet top-1": imagenet.get(m.key, float("nan")),
        "loader": FAMILIES[m.loader].loader if m.loader in FAMILIES else m.loader,
        "caveat": m.caveat or "—",
    } for m in registry.PAPER_MODELS])


def sugarcrepe_table():
    """SugarCrepe's 17 models, with ImageNet accuracy (open_clip's re-evaluation, the one source with all 17)."""
    imagenet = imagenet_top1("open_clip_results_table")
    crepe = set(registry.model_order())
    return pd.DataFrame([{
        "key": m.key, "SugarCrepe name": m.display, "architecture": m.architecture, "pretrained": m.pretrained,
        "QuickGELU": "yes" if m.quick_gelu else "no", "also in CREPE's registry": "yes" if m.key in crepe else "no",
        "ImageNet top-1": imagenet.get(m.key, float("nan")), "note": m.note or "—",
    } for m in sugarcrepe_models.SUGARCREPE_MODELS])


def add_arguments(parser) -> None:
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")


def run(args) -> int:
    for title, table in (("CREPE's models", registry_table()), ("SugarCrepe's models", sugarcrepe_table())):
        print(f"{title}:\n")
        print(markdown_table(table) if args.markdown else table.to_string(index=False) + "\n")
    return 0
