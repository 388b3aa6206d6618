"""How long the blind scorers take: every scorer on every benchmark, from a cold start, against 60 s.

    .venv/bin/python speed/bench_blind.py --crepe-dir DIR --sugarcrepe-dir DIR --winoground-dir DIR
    .venv/bin/python speed/bench_blind.py ... --limit 300        # quick: the first 300 queries each

Benchmarks: CREPE's 27 productivity CSVs (all 39,715 queries, one list), SugarCrepe's 7 JSONs (one
list of image–caption–negative pairs) and Winoground's 400 examples (text metadata or the full
dataset; two queries per example, :func:`crepe_utils.benchmarks.winoground.blind.caption_queries`). Each
benchmark is one query list, so the trained scorers cross-fit over all of it.

Printed, per benchmark: the time to read the list through each view (shared by the scorers of that
view), then each scorer's own time and that time over the *floor*, the least work any scorer must
do: one regex pass over every distinct candidate text. Then the total, from the first line of this
script (imports, data loading, readings, scorings), wall and CPU, over the budget. Scores are
summarised as Recall@1 per file or subset (ties count against the model) and, for Winoground, the
text / image / group scores with their tie counts. Wall times on a shared machine drift with its
load: the load average is printed beside them.
"""
from __future__ import annotations

import time

START_WALL, START_CPU = time.perf_counter(), time.process_time()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crepe_utils import blind, metrics  # noqa: E402
from crepe_utils.benchmarks.crepe import queries as crepe_queries
from crepe_utils.benchmarks.winoground import blind as winoground_blind
from crepe_utils.benchmarks.winoground.metadata import load_examples

BUDGET_S = 60.0
SUGARCREPE_SUBSETS = ("add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj")


def crepe(folder: str) -> tuple[list, list[str]]:
    """CREPE's productivity queries and, per query, its file's label (``atom-4`` … ``negate-12``)."""
    qs = crepe_queries.load_productivity(folder).queries
    return qs, [f"{q.hn_type}-{q.complexity}" for q in qs]


def sugarcrepe(folder: str) -> tuple[list, list[str]]:
    """SugarCrepe's pairs: the COCO file name as image id, (caption, negative_caption) as candidates."""
    queries, groups = [], []
    for subset in SUGARCREPE_SUBSETS:
        path = Path(folder) / f"{subset}.json"
        if not path.is_file():
            sys.exit(f"error: {path} not found: --sugarcrepe-dir must hold SugarCrepe's 7 JSONs")
        for key, row in json.loads(path.read_text(encoding="utf-8")).items():
            if not {"filename", "caption", "negative_caption"} <= set(row):
                sys.exit(f"error: {path.name} entry {key!r} lacks filename, caption or negative_caption")
            queries.append(blind.TextQuery(row["filename"], (row["caption"], row["negative_caption"])))
            groups.append(subset)
    return queries, groups


def winoground(folder: str) -> tuple[list, list[str]]:
    frame, _ = load_examples(folder)
    if frame is None:
        sys.exit(f"error: {folder} does not exist: --winoground-dir must hold Winoground (or its examples_text.tsv)")
    queries = winoground_blind.caption_queries(list(frame.itertuples(index=False)))
    return queries, ["winoground"] * len(queries)


def floor_seconds(queries) -> float:
    """One regex pass over every distinct candidate text: the least any scorer reads."""
    t0 = time.perf_counter()
    for text in {c for q in queries for c in q.candidates}:
        re.findall(r"[a-z]+", text.lower())
    return time.perf_counter() - t0


def recall(scores: np.ndarray, queries, groups: list[str]) -> dict[str, float]:
    offsets = np.r_[0, np.cumsum([len(q.candidates) for q in queries])]
    ok = metrics.ranks_from_flat(scores, offsets).pessimistic == 1
    labels = np.array(groups)
    return {g: 100.0 * float(ok[labels == g].mean()) for g in dict.fromkeys(groups)}


def winoground_scores(scores: np.ndarray, queries, groups: list[str]) -> dict[str, float]:
    summary = winoground_blind.summary(winoground_blind.caption_scores(scores))
    return {f"{m}{suffix}": float(v[key]) for m, v in summary.items()
            for suffix, key in (("", "score"), (" ties", "ties"))}


def run_benchmark(name: str, queries, groups: list[str], summarise) -> dict:
    out = {"benchmark": name, "queries": len(queries), "floor_s": floor_seconds(queries), "read_s": {},
           "scorers": {}}
    corpora = {}
    for view in (blind.UNCASED, blind.CASED):
        t0 = time.perf_counter()
        corpora[view.name] = blind.read_corpus(queries, view)
        out["read_s"][view.name] = time.perf_counter() - t0
    for scorer in blind.SCORERS.values():
        t0, c0 = time.perf_counter(), time.process_time()
        scores = scorer.score_corpus(corpora[scorer.view.name], ARGS.settings)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        out["scorers"][scorer.name] = {"seconds": wall, "cpu_seconds": cpu, "over_floor": wall / out["floor_s"],
                                       "with_reading_s": wall + out["read_s"][scorer.view.name],
                                       "scores": summarise(scores, queries, groups)}
    return out


def report(row: dict) -> None:
    print(f"\n== {row['benchmark']}: {row['queries']:,} queries; floor {row['floor_s']:.2f} s; reading "
          + ", ".join(f"{v} {s:.2f} s" for v, s in row["read_s"].items()))
    for name, r in row["scorers"].items():
        print(f"  {name:17s} {r['seconds']:7.2f} s (cpu {r['cpu_seconds']:6.2f}, {r['over_floor']:6.1f}x floor, "
              f"{r['with_reading_s']:6.2f} s with its reading)")
    if ARGS.recall:
        groups = list(next(iter(row["scorers"].values()))["scores"])
        print("  " + " " * 17 + "".join(f"{g:>11s}" for g in groups))
        for name, r in row["scorers"].items():
            print(f"  {name:17s}" + "".join(f"{r['scores'][g]:11.1f}" for g in groups))


def main() -> None:
    load_avg = os.getloadavg()
    rows = []
    limit = ARGS.limit - ARGS.limit % 2 or None      # even: Winoground's queries come in pairs
    for name, loader, folder, summarise in (("CREPE productivity", crepe, ARGS.crepe_dir, recall),
                                            ("SugarCrepe", sugarcrepe, ARGS.sugarcrepe_dir, recall),
                                            ("Winoground", winoground, ARGS.winoground_dir, winoground_scores)):
        t0 = time.perf_counter()
        queries, groups = loader(folder)
        queries, groups = queries[:limit], groups[:limit]
        load_s = time.perf_counter() - t0
        rows.append(run_benchmark(name, queries, groups, summarise) | {"load_s": load_s})
        report(rows[-1])
    total, cpu = time.perf_counter() - START_WALL, time.process_time() - START_CPU
    scoring = sum(r["seconds"] for row in rows for r in row["scorers"].values())
    reading = sum(s for row in rows for s in row["read_s"].values())
    loading = sum(row["load_s"] for row in rows)
    print(f"\ntotal {total:.1f} s wall ({cpu:.1f} s cpu) = {total / BUDGET_S:.2f} of the {BUDGET_S:.0f} s budget: "
          f"scoring {scoring:.1f} s, reading {reading:.1f} s, loading data {loading:.1f} s, the rest (imports, "
          f"floors) {total - scoring - reading - loading:.1f} s; load average {load_avg[0]:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} cores")
    if ARGS.json:
        Path(ARGS.json).write_text(json.dumps({"total_s": total, "cpu_s": cpu, "budget_s": BUDGET_S,
                                               "load_average": load_avg[0], "benchmarks": rows}, indent=2))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--crepe-dir", required=True, help="CREPE's data folder (holds prod_hard_negatives/)")
    p.add_argument("--sugarcrepe-dir", required=True, help="the folder of SugarCrepe's 7 JSONs")
    p.add_argument("--winoground-dir", required=True, help="Winoground: the dataset, or its examples_text.tsv")
    p.add_argument("--limit", type=int, default=0, help="the first N queries of each benchmark only (0: all)")
    p.add_argument("--folds", type=int, default=blind.BlindSettings().folds)
    p.add_argument("--no-recall", dest="recall", action="store_false", help="leave out the Recall@1 tables")
    p.add_argument("--json", default=None, help="also write the numbers to this file")
    ARGS = p.parse_args()
    ARGS.settings = blind.BlindSettings(folds=ARGS.folds)
    main()
