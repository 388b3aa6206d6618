"""``python -m crepe_utils evaluate --benchmark NAME --model KEY``: one model on one benchmark, any benchmark.

``python -m crepe_utils <benchmark> ...`` is the same command with ``--benchmark <benchmark>``. Options:
where the data and the result are (:class:`crepe_utils.evaluation.Run`), which part of the benchmark
(:class:`crepe_utils.benchmarks.Selection`), and one option per evaluation setting
(:mod:`crepe_utils.settings`). Errors reach the command line's one handler (crepe_utils.cli).
"""
from __future__ import annotations

from . import benchmarks, settings as settings_cli
from .results.store import KINDS


def add_run_arguments(parser) -> None:
    """Where things are and how results are labelled, then one option per evaluation setting."""
    parser.add_argument("--data-dir", default=None, help="the benchmark's data folder (default: its folder "
                        "under $CREPE_DATA, or its own variable: python -m crepe_utils download --help)")
    parser.add_argument("--image-dir", default=None, help="its images (default: its image set's folder, likewise)")
    parser.add_argument("--out", default="results/evaluated", help="results folder (default: %(default)s)")
    parser.add_argument("--cache-dir", default=None, help="embedding cache (default: $CREPE_CACHE or ./cache)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    parser.add_argument("--kind", default="evaluated", choices=KINDS, help="what the data are (labels the results)")
    parser.add_argument("--label", default="", help="free-text label stored in the manifest")
    settings_cli.add_arguments(parser)


def _option_help(declared) -> str:
    """One option's help: what each benchmark that has it means by it, and the values it takes."""
    parts = []
    for bench, option in declared:
        values = " ".join(map(str, option.choices)) if option.choices else ""
        parts.append(f"{bench.name}: {option.help}" + (f" ({values})" if values else ""))
    return "; ".join(parts)


def add_selection_arguments(parser, benchmark: str | None = None) -> None:
    """One option per selection option any benchmark declares, or ``benchmark`` does (the benchmark checks the
    values it is given)."""
    for name, declared in benchmarks.options().items():
        declared = [(b, o) for b, o in declared if benchmark is None or b.name == benchmark]
        if not declared:
            continue
        option = declared[0][1]
        flag = option.flag
        if option.type is bool:     # a switch away from the default (e.g. --no-all-negatives)
            parser.add_argument(flag, dest=name, action="store_const", const=not option.default, default=None,
                                help=_option_help(declared))
        else:
            kind = str if isinstance(option.type, tuple) else option.type      # a path, or a word: given as text
            parser.add_argument(flag, dest=name, nargs="+" if option.many else None, type=kind,
                                default=None, metavar=name.upper(), help=_option_help(declared))


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
    add_selection_arguments(parser, benchmark)
    add_run_arguments(parser)


def run_of(args):
    from .evaluation import Run         # here: the command's help starts without the engine and the models
    return Run(data_dir=args.data_dir, image_dir=args.image_dir, out=args.out,
               cache_dir=False if args.no_cache else args.cache_dir, kind=args.kind, label=args.label,
               pretrained=getattr(args, "pretrained", None), model_config=getattr(args, "model_config", None))


def selection_of(args, bench) -> dict:
    """The selection options the user gave (only those: each benchmark refuses the ones it lacks)."""
    return {name: getattr(args, name) for name in benchmarks.options() if getattr(args, name, None) is not None}


def run(args) -> int:
    from .evaluation import evaluate
    bench = benchmarks.get(args.benchmark)
    selection = bench.selection(selection_of(args, bench))     # an option this benchmark lacks is named here
    summary = evaluate(args.model, bench.name, run=run_of(args), settings=settings_cli.from_args(args),
                       selection=selection)
    print_summary(summary, bench)
    print(f"results: {summary.attrs['result_dir']}")
    return 0


def print_summary(summary, bench) -> None:
    """The run's headline rows, as its scoring rule shows them."""
    shown = bench.rule.brief(summary, bench.groups)
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.2f}"))

