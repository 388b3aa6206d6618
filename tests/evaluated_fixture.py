"""A results folder of kind "evaluated" built from the published numbers, without running a model."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

import helpers
from crepe_utils.benchmarks.crepe import reported

SYST_TRAIN = {"cc12m-rn50": "cc12m", "laion400m-vit-b-32": "laion"}


def write_evaluated_results(root: Path, syst_queries: int = 100) -> Path:
    """A results folder of kind "evaluated" holding the published R@1 (complete runs as far as the manifest and
    skip counts go): productivity at n = 4, 8, 12 for three open_clip models (the released files' query counts),
    systematicity for two (``syst_queries`` queries per retrieval set)."""
    from crepe_utils.results import store
    prod = reported.productivity()
    queries = reported.released_productivity_queries()
    columns = store.SUMMARY_COLUMNS
    per_query = pd.DataFrame(columns=store.PER_QUERY_COLUMNS)
    for model in ("cc12m-rn50", "yfcc15m-rn50", "laion400m-vit-b-32"):
        rows = []
        for hn in ("atom", "swap", "negate"):
            for n in (4, 8, 12):
                pub = prod[(prod["model"] == model) & (prod["hn_type"] == hn)].set_index("complexity")["r1"]
                r1 = float(pub[n]) if n in pub.index else float(pub.mean())   # n = 8 is not published: between
                rows.append({"model": model, "benchmark": "productivity", "hn_type": hn, "complexity": n,
                             "n_queries": queries[(hn, n)], "r1": r1, "n_skipped": 0, "chance_r1": 100 / 6})
        helpers.write_retrieval(store.result_dir(root, model, "productivity"), pd.DataFrame(rows).reindex(columns=columns),
                           per_query, {"kind": "evaluated", "engine": {"limit": None}})
    syst = reported.systematicity()
    for model, train in SYST_TRAIN.items():
        g = syst[syst["model"] == model]
        rows = [{"model": model, "benchmark": "systematicity", "train_data": train, "hn_type": r["hn_type"],
                 "split": r["split"], "n_queries": syst_queries, "r1": r["r1"], "n_skipped": 0} for r in g.to_dict("records")]
        helpers.write_retrieval(store.result_dir(root, model, "systematicity", train),
                           pd.DataFrame(rows).reindex(columns=columns), per_query,
                           {"kind": "evaluated", "engine": {"limit": None}})
    return root
