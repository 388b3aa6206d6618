"""``python -m crepe_utils models``: the checkpoint table with ImageNet accuracy, then each benchmark's roster (the
checkpoints its paper evaluated, which ``evaluate-paper`` runs on it)."""
from __future__ import annotations

from .. import benchmarks
from ..analysis.reporting import markdown_table
from ..models import FAMILIES, checkpoints
from ..models.imagenet import top1 as imagenet_top1
from ..lazy import lazy

pd = lazy("pandas")


def checkpoint_table() -> pd.DataFrame:
    """Every checkpoint of the table with its ImageNet top-1 (the authors' number, else open_clip's re-evaluation)."""
    imagenet = imagenet_top1()
    return pd.DataFrame([{
        "key": c.key, "name": c.display, "training data": c.train_label,
        "architecture": c.architecture or "—", "pretrained": c.pretrained or "—",
        "QuickGELU": {True: "yes", False: "no", None: "—"}[c.quick_gelu],
        "ImageNet top-1": imagenet.get(c.key, float("nan")),
        "loader": FAMILIES[c.family].loader if c.family in FAMILIES else c.family,
        "caveat": c.caveat or "—",
    } for c in checkpoints.CHECKPOINTS])


def roster_table() -> pd.DataFrame:
    """One row per benchmark × checkpoint of its roster, in registry and roster order."""
    return pd.DataFrame([{"benchmark": b.name, "key": key, "name": checkpoints.checkpoint(key).display}
                         for b in benchmarks.BENCHMARKS.values() for key in b.roster],
                        columns=["benchmark", "key", "name"])


def add_arguments(parser) -> None:
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")


def run(args) -> int:
    for title, table in (("Checkpoints", checkpoint_table()), ("Rosters (evaluate-paper's jobs)", roster_table())):
        print(f"{title}:\n")
        print(markdown_table(table) if args.markdown else table.to_string(index=False) + "\n")
    return 0
