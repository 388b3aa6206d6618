"""Evaluate a model on CREPE: load queries and model, run the engine, write results.

``crepe_utils.evaluate(...)`` (this module's :func:`evaluate`) is what notebooks call;
``python -m crepe_utils evaluate ...`` and ``make evaluate`` call it too.
"""
from __future__ import annotations

import platform
import subprocess
import sys
import time
from collections import Counter

import numpy as np
import pandas as pd

from . import data as D
from .errors import CrepeError
from . import engine, metrics, paths, registry
from .models import load_model, sha256_file
from .results import KINDS, PER_QUERY_COLUMNS, format_scores, result_dir, write_result

BENCHMARKS = ("systematicity", "productivity")


def load_queries(benchmark: str, data_dir, hn_types=None, train_data: str | None = None,
                 complexities=None, on_bad_row: str = "raise", empty_negatives: str = "skip",
                 all_negatives: bool = True) -> D.QuerySet:
    """The queries of one benchmark (productivity adds the all-negatives sets of app. B.3)."""
    if benchmark == "productivity":
        types = [t for t in (hn_types or D.PROD_HN_TYPES) if t != "all"]
        qs = D.load_productivity(data_dir, types, complexities or D.COMPLEXITIES, on_bad_row=on_bad_row)
        want_all = all_negatives and (hn_types is None or "all" in hn_types)
        if want_all and set(types) == set(D.PROD_HN_TYPES):
            combined = D.all_negatives_sets(qs)
            qs.queries.extend(combined.queries)
            qs.issues.extend(i for i in combined.issues if i.kind != "not in all HN types")
            qs.files["all-negatives sets"] = len(combined)
        return qs
    if benchmark == "systematicity":
        if not train_data:
            raise ValueError("systematicity needs train_data (cc12m, yfcc or laion): the split depends on "
                             "the model's training set")
        return D.load_systematicity(data_dir, train_data, hn_types or D.SYST_HN_TYPES,
                                    on_bad_row=on_bad_row, empty_negatives=empty_negatives)
    raise ValueError(f"benchmark must be one of {BENCHMARKS}, got {benchmark!r}")


def _limit(qs: D.QuerySet, limit: int | None) -> D.QuerySet:
    if not limit:
        return qs
    counts: Counter = Counter()
    kept = []
    for q in qs:
        key = (q.hn_type, q.split, q.complexity)
        if counts[key] < limit:
            kept.append(q)
            counts[key] += 1
    return D.QuerySet(kept, qs.issues, qs.files)


def evaluate(model: str, pretrained: str | None = None, model_config: str | None = None, *,
             benchmark: str, data_dir=None, image_dir=None, out="results/evaluated",
             hn_types=None, train_data: str | None = None, complexities=None,
             device: str = "auto", precision: str = "fp32", batch_size: int = 256,
             text_batch_size: int = 512, num_workers: int | None = None, limit: int | None = None,
             kind: str = "evaluated", label: str = "", cache_dir=None, tie_policy: str = "pessimistic",
             truncation: str | None = None, length_cut: bool = True, skip_missing_images: bool = False,
             on_bad_row: str = "raise", empty_negatives: str = "skip", all_negatives: bool = True,
             n_boot: int = 5000, progress: bool = True, loaded=None, shared=None) -> pd.DataFrame:
    """Evaluate one model on one benchmark; write the results folder; return the summary table.

    ``model`` is a registry key (``laion400m-vit-b-32``), an open_clip architecture (with
    ``pretrained`` a tag, URL or checkpoint path) or a custom config name (with ``model_config``).
    For systematicity, ``train_data`` defaults to the registry model's training set.
    ``loaded`` (a :class:`crepe_utils.models.LoadedModel`) skips loading, e.g. across benchmarks.
    ``truncation`` defaults to the model family's official policy (``loaded.spec.truncation``).
    ``shared`` (an :class:`engine.SharedInputs`, one per multi-model run) reuses the queries, crops and
    token ids of earlier calls; the results are the same without it.
    """
    from .images import ImageIndex

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    t0 = time.time()
    data_dir = paths.crepe_dir(data_dir)
    if data_dir is None:
        raise D.DataError("no CREPE data folder: run `make data` or pass data_dir / --data-dir")
    image_dir = paths.vg_images_dir(image_dir)
    loaded = loaded or load_model(model, pretrained, model_config, device=device)
    truncation = truncation or loaded.spec.truncation
    if benchmark == "systematicity" and not train_data:
        paper = next((m for m in registry.PAPER_MODELS if m.key == loaded.spec.key), None)
        if paper is None or paper.train_data not in registry.SYSTEMATICITY_TRAIN_DATA:
            raise ValueError(f"{loaded.spec.key}: say which systematicity split to use (train_data=cc12m, yfcc or "
                             "laion); it must be the model's training set for SC/UC to mean anything")
        train_data = paper.train_data
    def read_queries():
        return _limit(load_queries(benchmark, data_dir, hn_types, train_data, complexities, on_bad_row,
                                   empty_negatives, all_negatives), limit)
    tupled = [tuple(v) if v is not None else None for v in (hn_types, complexities)]
    queries = shared.memo(("queries", benchmark, str(data_dir), *tupled, train_data, on_bad_row, empty_negatives,
                           all_negatives, limit), read_queries) if shared is not None else read_queries()
    index = ImageIndex(image_dir)
    if num_workers is None:
        num_workers = min(8, engine.available_cores()) if loaded.device.type == "cuda" else 0
    cache = paths.cache_dir(cache_dir) / "embeddings" if cache_dir is not False else None
    result = engine.run(loaded, queries.queries, index, cache_dir=cache, precision=precision,
                        image_batch_size=batch_size, text_batch_size=text_batch_size, num_workers=num_workers,
                        length_cut=length_cut, truncation=truncation, skip_missing_images=skip_missing_images,
                        skip_bad_boxes=on_bad_row == "skip", progress=progress, shared=shared)
    ranks = metrics.ranks_from_flat(result.scores, result.offsets)
    summary = summarize(result, queries, ranks, tie_policy, n_boot)
    summary.insert(0, "model", loaded.spec.key)
    manifest = _manifest(loaded, benchmark, kind, label, data_dir, image_dir, queries, result, {
        "precision": precision, "tie_policy": tie_policy, "truncation": truncation,
        "length_cut_requested": length_cut, "batch_size": batch_size, "text_batch_size": text_batch_size,
        "num_workers": num_workers, "limit": limit, "on_bad_row": on_bad_row, "empty_negatives": empty_negatives,
        "skip_missing_images": skip_missing_images, "n_boot": n_boot,
    }, seconds=time.time() - t0)
    write_result(result_dir(out, loaded.spec.key, benchmark, train_data if benchmark == "systematicity" else None),
                 summary, per_query_frames(result, ranks), manifest)
    return summary


PER_QUERY_CHUNK = 50_000


def per_query_frames(result: engine.EngineResult, ranks: metrics.Ranks | None = None, chunk: int = PER_QUERY_CHUNK):
    """The per-query table in chunks of ``chunk`` rows (memory stays flat however many queries)."""
    ranks = ranks or metrics.ranks_from_flat(result.scores, result.offsets)
    n = len(result.queries)
    for start in range(0, max(n, 1), chunk):
        qs = result.queries[start:start + chunk]
        if not qs:
            break
        idx = range(start, start + len(qs))
        per = [result.query_scores(i) for i in idx]
        frame = pd.DataFrame({
            "query_id": [q.query_id for q in qs], "benchmark": [q.benchmark for q in qs],
            "train_data": [q.train_data for q in qs], "hn_type": [q.hn_type for q in qs],
            "split": [q.split for q in qs], "complexity": pd.array([q.complexity for q in qs], dtype="Int64"),
            "image_id": [q.image_id for q in qs], "n_candidates": [len(s) for s in per],
            "rank": ranks.pessimistic[start:start + len(qs)], "rank_optimistic": ranks.optimistic[start:start + len(qs)],
            "n_ties": ranks.n_ties[start:start + len(qs)],
            "score_positive": [float(s[0]) for s in per],
            "score_best_negative": [float(s[1:].max()) if len(s) > 1 else np.nan for s in per],
            "scores": [format_scores(s) for s in per], "n_truncated": result.truncated[start:start + len(qs)],
        })
        yield frame


def per_query_table(result: engine.EngineResult) -> pd.DataFrame:
    """The whole per-query table at once (for small runs and tests)."""
    frames = list(per_query_frames(result))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=PER_QUERY_COLUMNS)


def summarize(result: engine.EngineResult, queries: D.QuerySet, ranks: metrics.Ranks | None = None,
              tie_policy: str = "pessimistic", n_boot: int = 5000) -> pd.DataFrame:
    """One row per retrieval set with every metric, the R@1 bootstrap interval and skip counts."""
    ranks = ranks or metrics.ranks_from_flat(result.scores, result.offsets)
    near = metrics.near_ties_from_flat(result.scores, result.offsets)
    skipped = Counter((q.hn_type, q.split, q.complexity) for q, _ in result.skipped)
    bad = Counter(_group_of_issue(i) for i in queries.issues if i.skipped)
    groups: dict[tuple, list[int]] = {}
    for i, q in enumerate(result.queries):
        groups.setdefault((q.benchmark, q.train_data, q.hn_type, q.split, q.complexity), []).append(i)
    n_cand = np.diff(result.offsets)
    rows = []
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2], k[3], -1 if k[4] is None else k[4])):
        idx = np.array(groups[key])
        benchmark, train_data, hn_type, split, complexity = key
        sub = metrics.Ranks(ranks.pessimistic[idx], ranks.optimistic[idx], ranks.n_ties[idx])
        row = {"benchmark": benchmark, "train_data": train_data, "hn_type": hn_type, "split": split,
               "complexity": complexity}
        row.update(metrics.summarize(sub, n_cand[idx], tie_policy))
        hits = 100.0 * (sub.select(tie_policy) <= 1)
        row["r1_ci_low"], row["r1_ci_high"] = metrics.bootstrap_mean_ci(hits, n_boot=n_boot, seed=0)
        row["n_skipped"] = skipped[(hn_type, split, complexity)] + bad.get((hn_type, split, complexity), 0)
        row["n_truncated_queries"] = int((result.truncated[idx] > 0).sum())
        row["n_near_tie_queries"] = int(near[idx].sum())
        rows.append(row)
    out = pd.DataFrame(rows)
    if not out.empty:
        out["complexity"] = out["complexity"].astype("Int64")
    return out


def _group_of_issue(issue: D.RowIssue) -> tuple:
    """(hn_type, split, complexity) of a loader issue, from its file label."""
    name = issue.file
    if name.startswith("prod_vg_hard_negs_"):
        parts = name.removesuffix(".csv").split("_")
        return parts[4], "", int(parts[-1])
    if name.startswith("syst_vg_hard_negs_"):
        split = "SC" if "_seen_compounds_" in name else "UC"
        hn = name.rsplit("[", 1)[-1].rstrip("]")
        return hn, split, None
    return ("", "", None)


# ------------------------------------------------------------------------------ provenance

def _git_commit() -> dict:
    root = paths.PROJECT_ROOT
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                timeout=10).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                    capture_output=True, text=True, timeout=10).stdout.strip())
        return {"commit": commit or None, "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def environment() -> dict:
    import open_clip
    import torch
    from importlib.metadata import version
    cuda = torch.cuda.is_available()
    return {
        "python": sys.version.split()[0], "platform": platform.platform(),
        "packages": {p: version(p) for p in ("torch", "torchvision", "open_clip_torch", "numpy", "pandas",
                                              "pillow", "crepe_utils")},
        "open_clip": open_clip.__version__, "cuda": torch.version.cuda if cuda else None,
        "gpu": torch.cuda.get_device_name(0) if cuda else None,
        "git": _git_commit(),
    }


def _manifest(loaded, benchmark, kind, label, data_dir, image_dir, queries: D.QuerySet,
              result: engine.EngineResult, settings: dict, seconds: float) -> dict:
    files = {}
    for name in sorted(queries.files):
        base = name.split("[", 1)[0]
        try:
            files[base] = sha256_file(D.find_file(data_dir, base))
        except D.DataError:
            continue  # the all-negatives sets are built, not read
    issues = Counter(i.kind for i in queries.issues)
    return {
        "kind": kind, "label": label, "benchmark": benchmark,
        "model": loaded.spec.to_dict(), "caveat": loaded.spec.caveat,
        "data": {"data_dir": str(data_dir), "image_dir": str(image_dir), "files_sha256": files,
                 "rows_read": queries.files, "issues": dict(issues),
                 "skipped_by_engine": dict(Counter(why for _, why in result.skipped))},
        "engine": {**settings, **{k: v for k, v in result.stats.items() if not k.startswith(engine.RUN_STATS)},
                   "device": str(loaded.device)},
        "environment": environment(),
        # Everything that differs between two identical runs lives here (and only here).
        "run": {"created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "seconds": round(seconds, 1),
                "host": platform.node(),
                **{k: v for k, v in result.stats.items() if k.startswith(engine.RUN_STATS)}},
    }


# ------------------------------------------------------------------------------ command line

def _common(parser) -> None:
    parser.add_argument("--data-dir", default=None, help="CREPE CSV folder (default: $CREPE_DATA/crepe)")
    parser.add_argument("--image-dir", default=None, help="Visual Genome images (default: $VG_IMAGES)")
    parser.add_argument("--out", default="results/evaluated", help="results folder (default: %(default)s)")
    parser.add_argument("--device", default="auto", help="cuda, cpu, cuda:1 ... (default: cuda when available)")
    parser.add_argument("--precision", default="fp32", choices=engine.PRECISIONS,
                        help="fp32 (default, faithful to the paper), tf32, bf16 or fp16 autocast")
    parser.add_argument("--batch-size", type=int, default=256, help="images per batch")
    parser.add_argument("--text-batch-size", type=int, default=512, help="captions per batch")
    parser.add_argument("--num-workers", type=int, default=None, help="image decoding workers")
    parser.add_argument("--limit", type=int, default=None, help="at most N queries per retrieval set (smoke tests)")
    parser.add_argument("--cache-dir", default=None, help="embedding cache (default: $CREPE_CACHE or ./cache)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    parser.add_argument("--tie-policy", default="pessimistic", choices=("pessimistic", "optimistic"))
    parser.add_argument("--truncation", default=None, choices=engine.TRUNCATIONS,
                        help="over-long captions (default: the model family's official policy)")
    parser.add_argument("--no-length-cut", action="store_true", help="encode every caption at the full 77 tokens")
    parser.add_argument("--skip-missing-images", action="store_true", help="evaluate without queries whose image "
                        "is missing or unreadable (counted in the results)")
    parser.add_argument("--skip-bad-rows", action="store_true", help="skip malformed CSV rows and regions that "
                        "cannot be encoded, e.g. a box wholly outside its image (counted in the results)")
    parser.add_argument("--kind", default="evaluated", choices=KINDS, help="what the data are (labels the results)")
    parser.add_argument("--label", default="", help="free-text label stored in the manifest")


def add_arguments_evaluate(parser) -> None:
    parser.add_argument("--benchmark", required=True, choices=BENCHMARKS)
    parser.add_argument("--model", required=True, help="registry key, open_clip architecture or config name, "
                        "hf-hub:org/repo, or transformers:org/repo (a Hugging Face CLIPModel)")
    parser.add_argument("--pretrained", default=None, help="open_clip tag, URL or local checkpoint")
    parser.add_argument("--model-config", default=None, help="model-config JSON for a custom architecture")
    parser.add_argument("--hn-types", nargs="+", default=None,
                        help="atom comp combined (systematicity); atom swap negate all (productivity)")
    parser.add_argument("--train-data", default=None, help="systematicity split: cc12m, yfcc or laion")
    parser.add_argument("--complexities", nargs="+", type=int, default=None)
    _common(parser)


def _kwargs(args) -> dict:
    return dict(data_dir=args.data_dir, image_dir=args.image_dir, out=args.out, device=args.device,
                precision=args.precision, batch_size=args.batch_size, text_batch_size=args.text_batch_size,
                num_workers=args.num_workers, limit=args.limit,
                cache_dir=False if args.no_cache else args.cache_dir, tie_policy=args.tie_policy,
                truncation=args.truncation, length_cut=not args.no_length_cut,
                skip_missing_images=args.skip_missing_images, on_bad_row="skip" if args.skip_bad_rows else "raise",
                kind=args.kind, label=args.label)


def _print_summary(summary: pd.DataFrame) -> None:
    cols = ["model", "hn_type", "split", "complexity", "n_queries", "r1", "r1_ci_low", "r1_ci_high",
            "r1_optimistic", "n_tied_queries", "chance_r1"]
    print(summary[cols].to_string(index=False, float_format=lambda v: f"{v:.2f}"))


def run_evaluate(args) -> int:
    try:
        summary = evaluate(args.model, args.pretrained, args.model_config, benchmark=args.benchmark,
                           hn_types=args.hn_types, train_data=args.train_data, complexities=args.complexities,
                           **_kwargs(args))
    except (CrepeError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    _print_summary(summary)
    return 0


def add_arguments_evaluate_paper(parser) -> None:
    parser.add_argument("--models", nargs="+", default=["paper"],
                        help="registry keys, or 'paper' / 'all' for every evaluable paper model (default)")
    parser.add_argument("--benchmarks", nargs="+", default=list(BENCHMARKS), choices=BENCHMARKS)
    _common(parser)


def run_evaluate_paper(args) -> int:
    """Every requested registry model on every benchmark it entered in the paper."""
    every = args.models in (["paper"], ["all"])
    keys = [m.key for m in registry.paper_models(evaluable=True)] if every else args.models
    failed = []
    shared = engine.SharedInputs()         # the queries, crops and token ids, prepared once for all models
    for key in keys:
        row = registry.paper_model(key)
        benches = [b for b in args.benchmarks if (b == "systematicity" and row.systematicity)
                   or (b == "productivity" and row.productivity)]
        if not row.evaluable or not benches:
            print(f"skip {key}: {row.note or 'not evaluated on these benchmarks in the paper'}")
            continue
        try:
            loaded = load_model(key, device=args.device)
            for bench in benches:
                print(f"== {row.display}: {bench}", flush=True)
                summary = evaluate(key, benchmark=bench, loaded=loaded, shared=shared, **_kwargs(args))
                _print_summary(summary)
        except Exception as exc:  # noqa: BLE001 - report and continue with the next model
            print(f"error: {key}: {exc}", file=sys.stderr)
            failed.append(key)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0
