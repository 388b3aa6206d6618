"""Evaluate a model on CREPE: load queries and model, run the engine, write results.

``crepe_utils.evaluate(...)`` (this module's :func:`evaluate`) is what notebooks call;
``python -m crepe_utils evaluate ...`` and ``make evaluate`` call it too.
"""
from __future__ import annotations

import sys
import time
from collections import Counter

import numpy as np
import pandas as pd

from . import queries as D
from ..errors import CrepeError, error_line
from ..engine import core as engine
from .. import metrics, paths
from ..models import load_model, registry, sha256_file
from ..results import provenance
from ..results.store import KINDS, PER_QUERY_COLUMNS, check_kind, format_scores, result_dir, write_result
from .settings import EvaluationSettings
from . import settings as settings_cli

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
             hn_types=None, train_data: str | None = None, complexities=None, all_negatives: bool = True,
             cache_dir=None, kind: str = "evaluated", label: str = "", progress: bool = True, loaded=None,
             shared=None, settings: EvaluationSettings | None = None, **overrides) -> pd.DataFrame:
    """Evaluate one model on one benchmark; write the results folder; return the summary table.

    ``model`` is a registry key (``laion400m-vit-b-32``), an open_clip architecture (with
    ``pretrained`` a tag, URL or checkpoint path) or a custom config name (with ``model_config``).
    For systematicity, ``train_data`` defaults to the registry model's training set.
    ``loaded`` (a :class:`crepe_utils.models.LoadedModel`) skips loading, e.g. across benchmarks.
    The evaluation settings (:class:`~crepe_utils.crepe.settings.EvaluationSettings`: precision,
    batch sizes, ``limit``, ``tie_policy``, ...) come from ``settings`` with any of them overridden
    by keyword (``evaluate(..., precision="bf16")``). ``truncation`` defaults to the model family's
    official policy (``loaded.spec.truncation``). ``cache_dir=False`` reads and writes no cache.
    ``shared`` (an :class:`shared_inputs.SharedInputs`, one per multi-model run) reuses the queries, crops and
    token ids of earlier calls; the results are the same without it.
    """
    from .images import ImageIndex

    settings = EvaluationSettings.build(settings, **overrides)
    check_kind(kind)
    t0 = time.time()
    data_dir = paths.crepe_dir(data_dir)
    if data_dir is None:
        raise D.DataError("no CREPE data folder: run `make data` or pass data_dir / --data-dir")
    image_dir = paths.vg_images_dir(image_dir)
    loaded = loaded or load_model(model, pretrained, model_config, device=settings.device,
                                  precision=settings.precision)
    used = settings.resolved(loaded)     # what the run uses (and records): nothing left to "auto"
    if benchmark == "systematicity" and not train_data:
        paper = next((m for m in registry.PAPER_MODELS if m.key == loaded.spec.key), None)
        if paper is None or paper.train_data not in registry.SYSTEMATICITY_TRAIN_DATA:
            raise ValueError(f"{loaded.spec.key}: say which systematicity split to use (train_data=cc12m, yfcc or "
                             "laion); it must be the model's training set for SC/UC to mean anything")
        train_data = paper.train_data
    query_args = (benchmark, data_dir, hn_types, train_data, complexities, used.on_bad_row, used.empty_negatives,
                  all_negatives)

    def read_queries():
        return _limit(load_queries(*query_args), used.limit)
    if shared is not None:      # the key: load_queries' arguments and the limit, lists made hashable
        key = tuple(tuple(a) if isinstance(a, (list, tuple, set, frozenset)) else a for a in query_args)
        queries = shared.memo(("queries", *key, used.limit), read_queries)
        index = shared.memo(("image index", str(image_dir)), lambda: ImageIndex(image_dir))   # listed once
    else:
        queries, index = read_queries(), ImageIndex(image_dir)
    cache = paths.cache_dir(cache_dir) / "embeddings" if cache_dir is not False else None
    result = engine.run(loaded, queries.queries, index, cache_dir=cache, precision=used.precision,
                        image_batch_size=used.batch_size, text_batch_size=used.text_batch_size,
                        num_workers=used.num_workers, length_cut=used.length_cut, truncation=used.truncation,
                        skip_missing_images=used.skip_missing_images, skip_bad_boxes=used.on_bad_row == "skip",
                        progress=progress, shared=shared)
    ranks = metrics.ranks_from_flat(result.scores, result.offsets)
    summary = summarize(result, queries, ranks, used.tie_policy, used.n_boot)
    summary.insert(0, "model", loaded.spec.key)
    manifest = _manifest(loaded, benchmark, kind, label, data_dir, image_dir, queries, result, used,
                         seconds=time.time() - t0)
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


def _manifest(loaded, benchmark, kind, label, data_dir, image_dir, queries: D.QuerySet,
              result: engine.EngineResult, settings: EvaluationSettings, seconds: float) -> dict:
    files = {}
    for name in sorted(queries.files):
        base = name.split("[", 1)[0]
        try:
            files[base] = sha256_file(D.find_file(data_dir, base))
        except D.DataError:
            continue  # the all-negatives sets are built, not read
    issues = Counter(i.kind for i in queries.issues)
    run_stats = {k: v for k, v in result.stats.items() if k.startswith(engine.RUN_STATS)}
    return {
        **provenance.manifest(kind, label, loaded.spec, seconds=seconds, run_stats=run_stats),
        "benchmark": benchmark, "caveat": loaded.spec.caveat,
        "data": {"data_dir": str(data_dir), "image_dir": str(image_dir), "files_sha256": files,
                 "rows_read": queries.files, "issues": dict(issues),
                 "skipped_by_engine": dict(Counter(why for _, why in result.skipped))},
        # the settings as the run used them, then what the engine found (overlength texts, ...)
        "engine": {**settings.record(),
                   **{k: v for k, v in result.stats.items() if not k.startswith(engine.RUN_STATS)}},
    }


# ------------------------------------------------------------------------------ command line

def _common(parser) -> None:
    """Where things are and how results are labelled, then one option per evaluation setting."""
    parser.add_argument("--data-dir", default=None, help="CREPE CSV folder (default: $CREPE_DATA/crepe)")
    parser.add_argument("--image-dir", default=None, help="Visual Genome images (default: $VG_IMAGES)")
    parser.add_argument("--out", default="results/evaluated", help="results folder (default: %(default)s)")
    parser.add_argument("--cache-dir", default=None, help="embedding cache (default: $CREPE_CACHE or ./cache)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    parser.add_argument("--kind", default="evaluated", choices=KINDS, help="what the data are (labels the results)")
    parser.add_argument("--label", default="", help="free-text label stored in the manifest")
    settings_cli.add_arguments(parser)


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
    """evaluate()'s keywords from the options of :func:`_common` (the settings validated once, here)."""
    return dict(data_dir=args.data_dir, image_dir=args.image_dir, out=args.out,
                cache_dir=False if args.no_cache else args.cache_dir, kind=args.kind, label=args.label,
                settings=settings_cli.from_args(args))


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
        print(error_line(exc), file=sys.stderr)
        return 1
    _print_summary(summary)
    return 0
