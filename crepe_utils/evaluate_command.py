"""``python -m crepe_utils evaluate --benchmark NAME --model KEY``: one model on one benchmark, any benchmark.

``python -m crepe_utils winoground ...`` is the same command with ``--benchmark winoground``. Options:
where the data and the result are (:class:`crepe_utils.evaluation.Run`), which part of the benchmark
(:class:`crepe_utils.benchmarks.Selection`), and one option per evaluation setting
(:mod:`crepe_utils.settings`). Errors reach the command line's one handler (crepe_utils.cli).
"""
from __future__ import annotations

import dataclasses

import pandas as pd

from . import benchmarks, settings as settings_cli
from .evaluation import Run, evaluate
from .results.store import KINDS

#: The columns printed after a run, per scoring rule (those present).
PRINTED = {"retrieval": ["model", "hn_type", "split", "complexity", "n_queries", "r1", "r1_ci_low", "r1_ci_high",
                         "r1_optimistic", "n_tied_queries", "chance_r1"],
           "winoground": ["metric", "n_examples", "score", "t_ci_low", "t_ci_high", "score_first_index", "n_ties",
                          "chance"]}


def add_run_arguments(parser) -> None:
    """Where things are and how results are labelled, then one option per evaluation setting."""
    parser.add_argument("--data-dir", default=None, help="the benchmark's data folder (default: its folder "
                        "under $CREPE_DATA: crepe/, winoground/, sugarcrepe/)")
    parser.add_argument("--image-dir", default=None, help="its images (default: $VG_IMAGES for CREPE, "
                        "$COCO_IMAGES for SugarCrepe)")
    parser.add_argument("--out", default="results/evaluated", help="results folder (default: %(default)s)")
    parser.add_argument("--cache-dir", default=None, help="embedding cache (default: $CREPE_CACHE or ./cache)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    parser.add_argument("--kind", default="evaluated", choices=KINDS, help="what the data are (labels the results)")
    parser.add_argument("--label", default="", help="free-text label stored in the manifest")
    settings_cli.add_arguments(parser)


#: what each selection option's help says beyond its allowed values (which come from the benchmarks' declarations)
SELECTION_HELP = {
    "hn_types": "HN types", "complexities": "complexities n", "train_data": "systematicity split, the model's "
    "training set: cc12m, yfcc or laion in the released files (registry models: their own)", "subsets": "subsets",
    "layout": "which copy when the folder holds several (default: detect)",
    "why_hard": "why_hard_tags.tsv for the why-hard breakdown: a path, 'none', or 'auto' (next to the data when "
                "present)", "grouping": "how the 4 groups of the appendix-A interval are formed (id order)",
}


def _selection_help(name: str) -> str:
    """An option's help: what it selects, then each benchmark that selects by it with its allowed values."""
    allowed = [f"{b.name}: {' '.join(map(str, b.selects[name]))}" if b.selects[name] else b.name
               for b in benchmarks.BENCHMARKS.values() if name in b.selects]
    return f"{SELECTION_HELP[name]} ({'; '.join(allowed)})"


def add_selection_arguments(parser) -> None:
    """One option per field of :class:`crepe_utils.benchmarks.Selection` that has one; each benchmark checks
    the values against its declaration (:meth:`crepe_utils.benchmarks.Benchmark.check`)."""
    for f in dataclasses.fields(benchmarks.Selection):
        option, kind = f.metadata["option"], f.metadata["type"]
        if option is None:
            continue
        kwargs = {"nargs": "+", "type": kind} if f.metadata["many"] else {}
        parser.add_argument(option, dest=f.name, default=f.default, help=_selection_help(f.name), **kwargs)


def add_arguments(parser, benchmark: str | None = None) -> None:
    if benchmark is None:
        names = [*benchmarks.BENCHMARKS, *benchmarks.ALIASES]
        parser.add_argument("--benchmark", required=True, choices=names, help="the benchmark (or an alias)")
    else:
        parser.set_defaults(benchmark=benchmark)
    parser.add_argument("--model", required=True, help="registry key (python -m crepe_utils models), open_clip "
                        "architecture or config name, hf-hub:org/repo, transformers:org/repo, or blind:<scorer>")
    parser.add_argument("--pretrained", default=None, help="open_clip tag, URL or local checkpoint")
    parser.add_argument("--model-config", default=None, help="model-config JSON for a custom architecture")
    add_selection_arguments(parser)
    add_run_arguments(parser)


def add_arguments_winoground(parser) -> None:
    add_arguments(parser, benchmark="winoground")


def run_of(args) -> Run:
    return Run(data_dir=args.data_dir, image_dir=args.image_dir, out=args.out,
               cache_dir=False if args.no_cache else args.cache_dir, kind=args.kind, label=args.label,
               pretrained=getattr(args, "pretrained", None), model_config=getattr(args, "model_config", None))


def selection_of(args, bench) -> dict:
    """The selection options the user gave (only those: each benchmark refuses the ones it lacks)."""
    given = {}
    for f in dataclasses.fields(benchmarks.Selection):
        value = getattr(args, f.name, f.default)
        if f.metadata["option"] and value != f.default:
            given[f.name] = tuple(value) if isinstance(value, list) else value
    return given


def run(args) -> int:
    bench = benchmarks.get(args.benchmark)
    summary = evaluate(args.model, bench.name, run=run_of(args), settings=settings_cli.from_args(args),
                       **selection_of(args, bench))
    print_summary(summary, bench.scoring)
    print(f"results: {summary.attrs['result_dir']}")
    return 0


def print_summary(summary: pd.DataFrame, scoring: str) -> None:
    if scoring == "winoground":
        summary = summary[summary["breakdown"] == "all"]
    cols = [c for c in PRINTED[scoring] if c in summary.columns]
    print(summary[cols].to_string(index=False, float_format=lambda v: f"{v:.2f}"))


run_winoground = run
