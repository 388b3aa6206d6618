"""``python -m crepe_utils winoground``: load a model and the data, evaluate, write the results.

:func:`evaluate_to_folder` is the same run as a Python call (for notebooks and scripts).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ..engine import precisions
from .. import paths
from ..errors import DataError, error_line
from ..results.store import KINDS, check_kind
from .data import WinogroundData, load_dataset
from .evaluation import Evaluation, evaluate
from .metadata import WHY_HARD, examples_frame, join_why_hard, load_why_hard
from .results import results_dir, write_results
from .scoring import METRICS
from .statistics import GROUPINGS, N_GROUPS


def resolve_why_hard(choice: str | None, data: WinogroundData, data_dir: Path) -> Path | None:
    """The why-hard label file: a path, ``"none"``, or ``"auto"``/None (next to the data, if there)."""
    if choice is not None and choice not in ("auto", "none"):
        return Path(choice)
    if choice == "none":
        return None
    for candidate in (data.root / WHY_HARD, data_dir / WHY_HARD):
        if candidate.is_file():
            return candidate
    return None


def build_manifest(loaded, data: WinogroundData, evaluation: Evaluation, *, data_dir: Path,
                   why_hard_path: Path | None, settings: dict, kind: str, label: str, seconds: float) -> dict:
    """Provenance of one evaluation (model, data and checksums, settings, ties, environment)."""
    from ..results import provenance
    from ..models import sha256_file

    all_rows = evaluation.summary[evaluation.summary["breakdown"] == "all"].set_index("metric")
    run_stats = {k: v for k, v in evaluation.encoding.items() if k.startswith("seconds")}
    return {
        **provenance.manifest(kind, label, loaded.spec, seconds=seconds, run_stats=run_stats),
        "data": {"data_dir": str(data_dir), "layout": data.layout, "root": str(data.root),
                 "files_sha256": {str(p.relative_to(data.root)): sha256_file(p) for p in data.files if p.is_file()},
                 "images_sha256": evaluation.encoding["images_sha256"],
                 "n_examples": len(data),
                 "why_hard": None if why_hard_path is None else {"path": str(why_hard_path),
                                                                  "sha256": sha256_file(why_hard_path)}},
        "engine": {**settings, "device": str(loaded.device),
                   **{k: v for k, v in evaluation.encoding.items() if not k.startswith(("seconds", "images_sha"))}},
        "scores": {m: float(all_rows.at[m, "score"]) for m in METRICS},
        "ties": {m: int(all_rows.at[m, "n_ties"]) for m in METRICS},
        "tie_rule": "strict inequalities (paper eq. 1-3; a tie fails); first-index rule in *_first_index",
    }


def evaluate_to_folder(model: str, pretrained: str | None = None, model_config: str | None = None, *,
                       out: str | os.PathLike, data_dir: str | os.PathLike | None = None, layout: str | None = None,
                       why_hard: str | None = "auto", device: str = "auto", precision: str = "fp32",
                       batch_size: int = 64, text_batch_size: int = 256, grouping: str = "contiguous",
                       n_boot: int = 10_000, seed: int = 0, kind: str = "evaluated",
                       label: str = "") -> tuple[Path, Evaluation]:
    """Evaluate one model on Winoground and write the result under ``out``; returns (folder, evaluation)."""
    from ..models import load_model

    check_kind(kind)
    t0 = time.perf_counter()
    data_dir = paths.winoground_dir(data_dir)
    data = load_dataset(data_dir, layout)
    why_hard_path = resolve_why_hard(why_hard, data, data_dir)
    labels = None
    if why_hard_path is not None:
        joined = join_why_hard(examples_frame(data.examples), load_why_hard(why_hard_path), str(why_hard_path))
        labels = joined.set_index("id")["why_hard"]
    loaded = load_model(model, pretrained, model_config, device=device, precision=precision)
    evaluation = evaluate(loaded, data, why_hard=labels, batch_size=batch_size, text_batch_size=text_batch_size,
                          precision=precision, grouping=grouping, n_boot=n_boot, seed=seed)
    settings = {"precision": precision, "batch_size": batch_size, "text_batch_size": text_batch_size,
                "truncation": loaded.spec.truncation, "ci": {"method": f"Student t over {N_GROUPS} equal groups (app. A)",
                                                 "grouping": grouping, "n_boot": n_boot, "seed": seed, "level": 0.95}}
    manifest = build_manifest(loaded, data, evaluation, data_dir=data_dir, why_hard_path=why_hard_path,
                              settings=settings, kind=kind, label=label, seconds=time.perf_counter() - t0)
    folder = write_results(results_dir(out, loaded.spec.key), evaluation, manifest)
    return folder, evaluation


def add_arguments(parser) -> None:
    parser.add_argument("--model", required=True, help="registry key, open_clip architecture or config name")
    parser.add_argument("--pretrained", default=None, help="open_clip tag (e.g. openai) or local checkpoint")
    parser.add_argument("--model-config", default=None, help="model-config JSON for a custom architecture")
    parser.add_argument("--data-dir", default=None, help="Winoground folder (default: $WINOGROUND_DATA, else "
                        "$CREPE_DATA/winoground)")
    parser.add_argument("--layout", default=None, choices=("folder", "zip", "parquet"),
                        help="choose a layout when the folder holds several (default: detect)")
    parser.add_argument("--why-hard", default="auto", help="why_hard_tags.tsv for the why-hard breakdown: a path, "
                        "'none', or 'auto' (next to the data when present)")
    parser.add_argument("--out", required=True, help="results folder; the result goes to OUT/<model>/winoground/")
    parser.add_argument("--device", default="auto", help="cuda, cpu, cuda:1 ... (default: cuda when available)")
    parser.add_argument("--precision", default="fp32", choices=precisions.PRECISIONS)
    parser.add_argument("--batch-size", type=int, default=64, help="images per batch")
    parser.add_argument("--text-batch-size", type=int, default=256, help="captions per batch")
    parser.add_argument("--grouping", default="contiguous", choices=GROUPINGS,
                        help="how the 4 groups of the appendix-A interval are formed (id order)")
    parser.add_argument("--n-boot", type=int, default=10_000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--kind", default="evaluated", choices=KINDS, help="what the data are (labels the results)")
    parser.add_argument("--label", default="", help="free-text label stored in the manifest")


def run(args) -> int:
    try:
        folder, evaluation = evaluate_to_folder(
            args.model, args.pretrained, args.model_config, out=args.out, data_dir=args.data_dir, layout=args.layout,
            why_hard=args.why_hard, device=args.device, precision=args.precision, batch_size=args.batch_size,
            text_batch_size=args.text_batch_size, grouping=args.grouping, n_boot=args.n_boot, seed=args.seed,
            kind=args.kind, label=args.label)
    except (DataError, ValueError, FileNotFoundError) as exc:
        print(error_line(exc), file=sys.stderr)
        return 1
    overall = evaluation.summary[evaluation.summary["breakdown"] == "all"]
    cols = ["metric", "n_examples", "score", "t_ci_low", "t_ci_high", "score_first_index", "n_ties", "chance"]
    print(overall[cols].to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    print(f"results: {folder}")
    return 0
