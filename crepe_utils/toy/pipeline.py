"""``python -m crepe_utils toy --out DIR``: generate the toy world, train a tiny CLIP, evaluate it.

Three stages, each in its own folder under ``DIR``::

    DIR/world/     the data root: CREPE CSVs, images/VG_100K/<id>.jpg, training/, world.json
    DIR/model/     <model>.json (open_clip config), <model>.pt (checkpoint), train_log.csv
    DIR/results/   the engine's results (summary.csv, per_query.csv.gz, manifest.json per set)

Each folder holds a ``stage.json`` whose ``key`` is a SHA-256 of the stage's configuration, the
key of the stage before it, the versions of torch and open_clip and the source of the code that
runs it. A rerun whose key matches skips the stage (seconds); a changed key recomputes the stage
and, since their keys contain it, every later one. ``stage.json`` is written as "started" before
the work and "complete" after it, so an interrupted stage is recomputed, and a folder without
one was not made here and is never deleted.

Training and evaluation run with pinned CPU numerics (:mod:`crepe_utils.toy.numerics`): the
environment is pinned before torch is imported, and what is in effect is part of the model's
and the results' keys.

Every number this produces is labelled ``kind="toy"``: it describes a model trained for minutes
on synthetic shapes, not the paper's models.
"""
from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
import warnings
from importlib.metadata import version
from pathlib import Path

from ..textfile import parse_json
from ..atomic import write_json
from ..evaluation import evaluate
from ..errors import CrepeError, CrepeWarning, warning_line
from ..kernel import in_notebook_kernel
from . import numerics
from ..benchmarks.crepe import queries as Q, raw
from .build import DEFAULT_HELD_OUT, TRAIN_DATA, WorldConfig, build_world
from .train import TrainConfig, train
from .world import with_converses
from ..lazy import lazy

pd = lazy("pandas")

STAGES = ("world", "model", "results")
PACKAGE = Path(__file__).resolve().parent.parent
SOURCES = {
    "world": [PACKAGE / "toy" / f for f in ("world.py", "foils.py", "build.py")]
    + [PACKAGE / "benchmarks" / "crepe" / "queries.py"],
    "model": [PACKAGE / "toy" / "train.py", PACKAGE / "toy" / "numerics.py", PACKAGE / "models" / "spec.py",
              PACKAGE / "models" / "openclip.py", PACKAGE / "engine" / "portable.py",
              PACKAGE / "engine" / "portable_math.py"],
    # the evaluation path: the top-level modules, what evaluation reads and CREPE's folder (its benchmarks)
    "results": sorted(PACKAGE.glob("*.py")) + [PACKAGE / "benchmarks" / "__init__.py"]
    + [p for sub in ("engine", "models", "results", "protocol", "imagesets", "benchmarks/crepe")
       for p in sorted((PACKAGE / sub).rglob("*.py"))],
}


class StageError(CrepeError, RuntimeError):
    """A stage folder that the pipeline may not touch, or a stage that could not run."""


# ------------------------------------------------------------------------------ caching

def stage_key(stage: str, config: dict, upstream: str | None) -> str:
    h = hashlib.sha256()
    h.update(json.dumps({"stage": stage, "config": config, "upstream": upstream,
                         "torch": version("torch"), "open_clip": version("open_clip_torch")},
                        sort_keys=True).encode())
    for path in SOURCES[stage]:
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _record(folder: Path) -> dict | None:
    path = folder / "stage.json"
    if not path.is_file():
        return None
    try:
        record = parse_json(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StageError(f"{path} is not the toy pipeline's record ({exc}); remove {folder} to recompute "
                         "that stage, or choose another --out") from None
    if not isinstance(record, dict):
        raise StageError(f"{path} holds a JSON {type(record).__name__}, not the toy pipeline's record; "
                         f"remove {folder} to recompute that stage, or choose another --out")
    return record


def _run_stage(folder: Path, stage: str, key: str, config: dict, work, force: bool) -> tuple[dict, bool]:
    """The stage's summary, from the cache or by running ``work(folder)``; and whether it was cached."""
    record = _record(folder)
    if record and record.get("complete") and record.get("key") == key and not force:
        return record["summary"], True
    if folder.exists():
        if record is None:
            raise StageError(f"{folder} exists but was not made by the toy pipeline (no stage.json); "
                             "remove it or choose another --out")
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    write_json(folder / "stage.json", {"stage": stage, "key": key, "config": config, "complete": False})
    start = time.perf_counter()
    summary = work(folder)
    seconds = round(time.perf_counter() - start, 1)
    write_json(folder / "stage.json", {"stage": stage, "key": key, "config": config, "complete": True,
                                       "seconds": seconds, "summary": summary})
    return summary, False


# ------------------------------------------------------------------------------ the stages

#: regions a raw-set fold on the toy world (app. B.2's N is 1,508; the toy world has 120 regions a complexity)
TOY_RAW_FOLD_SIZE = 20


def raw_fold_size(world: Path) -> int:
    """The toy world's raw fold size: :data:`TOY_RAW_FOLD_SIZE`, or half the smallest raw set of a smaller world
    (so that every complexity has at least two folds)."""
    sets = raw.raw_sets(Q.load_productivity(world))
    return max(1, min(TOY_RAW_FOLD_SIZE, min(len(items) for items in sets.values()) // 2))


def evaluate_toy(world: Path, model: Path, model_summary: dict, out: Path, seed: int, progress: bool,
                 threads: int = 2) -> dict:
    """Evaluate the trained model on the world with the engine (both benchmarks, and raw-set retrieval in folds of
    :func:`raw_fold_size`), with pinned numerics on ``threads`` threads and exact matrix products (precision
    "portable"); headline numbers."""
    common = dict(pretrained=str(model / model_summary["checkpoint"]),
                  model_config=str(model / model_summary["model_config"]), data_dir=str(world),
                  image_dir=str(world / "images"), out=str(out), kind="toy", label=f"toy world (seed {seed})",
                  device="cpu", precision="portable", progress=progress)
    with numerics.pinned(threads):
        syst = evaluate(model_summary["model_name"], "crepe-systematicity", train_data=TRAIN_DATA, **common)
        prod = evaluate(model_summary["model_name"], "crepe-productivity", **common)
        fold_size = raw_fold_size(world)
        raw_sets = evaluate(model_summary["model_name"], "crepe-raw", fold_size=fold_size, **common)
    columns = ["hn_type", "split", "complexity", "n_queries", "r1", "chance_r1", "r1_ci_low", "r1_ci_high"]
    raw_columns = ["complexity", "direction", "n_folds", "fold_size", "n_set", "r1", "r1_std", "r5", "r10"]
    return {"systematicity": _records(syst, columns), "productivity": _records(prod, columns),
            "raw": _records(raw_sets[raw_sets["fold"] == raw.MEAN], raw_columns)}


def _records(df, columns: list[str]) -> list[dict]:
    """Rows of a summary table as JSON-ready dicts (missing values as None)."""
    return [{k: (None if pd.isna(v) else v.item() if hasattr(v, "item") else v) for k, v in row.items()}
            for row in df[[c for c in columns if c in df.columns]].to_dict("records")]


def headline(summary: dict) -> str:
    """SC → UC per HN type and R@1 by complexity per HN type, as a small text table."""
    lines = ["Recall@1 % on the toy world (kind=toy: a tiny CLIP trained for minutes, not the paper's models)",
             f"{'systematicity':<15}{'HN type':<10}{'SC':>7}{'UC':>7}{'UC-SC':>8}{'chance':>8}"]
    syst = {(r["hn_type"], r["split"]): r for r in summary["systematicity"]}
    for hn in sorted({h for h, _ in syst}):
        sc, uc = syst.get((hn, "SC")), syst.get((hn, "UC"))
        if sc and uc and sc["r1"] is not None and uc["r1"] is not None:
            lines.append(f"{'':<15}{hn:<10}{sc['r1']:7.1f}{uc['r1']:7.1f}{uc['r1'] - sc['r1']:+8.1f}"
                         f"{sc['chance_r1']:8.1f}")
    prod = [r for r in summary["productivity"] if r.get("complexity") is not None]
    complexities = sorted({int(r["complexity"]) for r in prod})
    lines.append(f"{'productivity':<15}{'HN type':<10}" + "".join(f"{n:>6}" for n in complexities) + f"{'chance':>8}")
    for hn in sorted({r["hn_type"] for r in prod}):
        rows = {int(r["complexity"]): r for r in prod if r["hn_type"] == hn and r["r1"] is not None}
        cells = "".join(f"{rows[n]['r1']:6.1f}" if n in rows else f"{'-':>6}" for n in complexities)
        lines.append(f"{'':<15}{hn:<10}{cells}{next(iter(rows.values()))['chance_r1']:8.1f}" if rows else
                     f"{'':<15}{hn:<10}{cells}")   # a set with no scored query (n = 4 swap: none exists) shows "-"
    rows = {(r["direction"], int(r["complexity"])): r for r in summary.get("raw", ())}
    if rows:
        first = next(iter(rows.values()))
        lines.append(f"{'raw sets':<15}{'(K=' + str(first['n_folds']) + ', N=' + str(first['fold_size']) + ')':<10}"
                     + "".join(f"{n:>6}" for n in complexities))
        for direction in raw.DIRECTIONS:
            lines.append(f"{'':<15}{direction.replace('_to_', '→'):<10}"
                         + "".join(f"{rows[(direction, n)]['r1']:6.1f}" if (direction, n) in rows else f"{'-':>6}"
                                   for n in complexities))
    return "\n".join(lines)


# ------------------------------------------------------------------------------ command line

def add_arguments(parser) -> None:
    w, t = WorldConfig(), TrainConfig()
    parser.add_argument("--out", default="results/toy", help="output folder (default: results/toy)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the world and of training (default: 0)")
    parser.add_argument("--steps", type=int, default=t.steps, help=f"training steps (default: {t.steps})")
    parser.add_argument("--batch-size", type=int, default=t.batch_size, help=f"default: {t.batch_size}")
    parser.add_argument("--threads", type=int, default=t.threads,
                        help=f"CPU threads for training and evaluation; part of the result (default: {t.threads})")
    parser.add_argument("--train-scenes", type=int, default=w.train_scenes, help=f"default: {w.train_scenes}")
    parser.add_argument("--syst-rows", type=int, default=w.syst_rows_per_split,
                        help=f"systematicity rows per split (default: {w.syst_rows_per_split})")
    parser.add_argument("--prod-rows", type=int, default=w.prod_rows_per_complexity,
                        help=f"productivity rows per complexity (default: {w.prod_rows_per_complexity})")
    parser.add_argument("--held-out", default=",".join(DEFAULT_HELD_OUT),
                        help="comma-separated compounds never shown in training (default: %(default)s)")
    parser.add_argument("--until", choices=STAGES, default="results", help="stop after this stage")
    parser.add_argument("--force", action="store_true", help="recompute every stage")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


class OptionError(CrepeError, ValueError):
    """A toy-world option with a value it cannot take (a count below 1, a negative seed)."""


#: settings → the least value each takes
MINIMUM = {"seed": 0, "steps": 1, "batch_size": 1, "threads": 1, "train_scenes": 1, "syst_rows_per_split": 1,
           "prod_rows_per_complexity": 1}


def configs(args) -> tuple[WorldConfig, TrainConfig]:
    """The world and training configurations the command line asks for (a value below its minimum named by
    its option)."""
    for name, least in MINIMUM.items():
        short = next((k for k, v in SHORT_NAMES.items() if v == name), name)
        if getattr(args, short) < least:
            raise OptionError(f"--{short.replace('_', '-')} {getattr(args, short)} is not allowed: it must be at "
                              f"least {least}")
    return build_configs(seed=args.seed, train_scenes=args.train_scenes, syst_rows_per_split=args.syst_rows,
                         prod_rows_per_complexity=args.prod_rows, held_out=args.held_out, steps=args.steps,
                         batch_size=args.batch_size, threads=args.threads)


#: the command line's names of two world settings, also taken by :func:`build_configs`
SHORT_NAMES = {"syst_rows": "syst_rows_per_split", "prod_rows": "prod_rows_per_complexity"}


def build_configs(**fields) -> tuple[WorldConfig, TrainConfig]:
    """The world and training configurations with ``fields`` set (each to whichever declares it; ``seed`` to
    both; ``held_out`` a comma-separated string or a sequence of compounds). An unknown name is a StageError."""
    fields = {SHORT_NAMES.get(k, k): v for k, v in fields.items()}
    world_fields, train_fields = set(WorldConfig.__dataclass_fields__), set(TrainConfig.__dataclass_fields__)
    unknown = sorted(set(fields) - world_fields - train_fields)
    if unknown:
        raise StageError(f"the toy world has no setting {', '.join(map(repr, unknown))}; its settings: "
                         f"{', '.join(sorted(world_fields | train_fields))}")
    for name, least in MINIMUM.items():
        value = fields.get(name, least)
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise OptionError(f"the toy world's {name}={value!r} is not allowed: it must be an integer of at least "
                              f"{least}")
    if isinstance(fields.get("held_out"), str):
        fields["held_out"] = tuple(c.strip() for c in fields["held_out"].split(",") if c.strip())
    if "held_out" in fields:
        fields["held_out"] = tuple(fields["held_out"])
        with_converses(fields["held_out"])          # CaptionError for a misspelt compound
    return (WorldConfig(**{k: v for k, v in fields.items() if k in world_fields}),
            TrainConfig(**{k: v for k, v in fields.items() if k in train_fields}))


def run(args) -> int:
    world_cfg, train_cfg = configs(args)
    pipeline(args.out, world_cfg, train_cfg, until=args.until, force=args.force, progress=not args.quiet)
    return 0


def pipeline(out, world_cfg: WorldConfig, train_cfg: TrainConfig, until: str = "results", force: bool = False,
             progress: bool = True) -> dict | None:
    """Build the world, train the model and evaluate it under ``out`` (each stage reused when its key matches);
    the results stage's summary (None when stopped earlier, ``until``). In a notebook kernel the package's warnings
    (such as the toy world's n = 4 swap set having no query) go to the ``crepe_utils.toy`` logger with the stage
    reports, not into the page."""
    if not in_notebook_kernel():
        return _pipeline(out, world_cfg, train_cfg, until, force, progress)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CrepeWarning)
        summary = _pipeline(out, world_cfg, train_cfg, until, force, progress)
    for w in caught:
        if issubclass(w.category, CrepeWarning):
            _say(warning_line(w.message))
        else:                                             # not ours: shown as Python shows it
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return summary


def _pipeline(out, world_cfg: WorldConfig, train_cfg: TrainConfig, until: str, force: bool,
              progress: bool) -> dict | None:
    out = Path(out)
    world_dir, model_dir, results_dir = (out / s for s in STAGES)
    numerics.pin_environment()     # before anything below imports torch
    keys = {"world": stage_key("world", world_cfg.to_dict(), None)}
    world, cached = _run_stage(world_dir, "world", keys["world"], world_cfg.to_dict(),
                               lambda f: build_world(world_cfg, f, progress=progress)["counts"], force)
    _report("world", world_dir, cached)
    if until == "world":
        return None
    cpu = numerics.in_effect(train_cfg.threads)
    model_cfg = {**train_cfg.to_dict(), "numerics": cpu}
    keys["model"] = stage_key("model", model_cfg, keys["world"])
    model, cached = _run_stage(model_dir, "model", keys["model"], model_cfg,
                               lambda f: _train_stage(world_dir, f, train_cfg, progress), force)
    _report("model", model_dir, cached)
    _say(f"  training: {model['seconds']} s, final loss {model['final_loss']:.3f}, in-batch accuracy "
          f"{100 * model['val_accuracy']:.1f} % among {model['val_k']} "
          f"(chance {100 * model['val_chance']:.1f} %)")
    if until == "model":
        return None
    eval_cfg = {"seed": train_cfg.seed, "device": "cpu", "precision": "portable", "numerics": cpu}
    keys["results"] = stage_key("results", eval_cfg, keys["model"])
    results, cached = _run_stage(results_dir, "results", keys["results"], eval_cfg,
                                 lambda f: evaluate_toy(world_dir, model_dir, model, f, train_cfg.seed, progress,
                                                        train_cfg.threads), force)
    _report("results", results_dir, cached)
    _say(headline(results))
    return results


def _train_stage(world_dir: Path, folder: Path, config: TrainConfig, progress: bool) -> dict:
    summary = train(world_dir, folder, config, progress=progress)
    for key in ("model_config", "checkpoint"):
        summary[key] = Path(summary[key]).name
    return summary


def _report(stage: str, folder: Path, cached: bool) -> None:
    record = _record(folder) or {}
    how = "cached" if cached else f"computed in {record.get('seconds', '?')} s"
    _say(f"{stage:>8}: {folder} ({how}; key {record.get('key', '')[:12]})")


def _say(line: str) -> None:
    """A stage's report: printed on a terminal or a log; in a notebook kernel sent to the ``crepe_utils.toy``
    logger instead (not shown unless a handler is set), as the notebook shows the same results as its own tables."""
    if in_notebook_kernel():
        logging.getLogger("crepe_utils.toy").info(line)
    else:
        print(line, flush=True)
