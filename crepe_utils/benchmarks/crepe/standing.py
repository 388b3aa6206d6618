"""CREPE's results among the paper's own models, for ``python -m crepe_utils standing`` (found through the registry:
a folder's ``standing`` module): each productivity set the paper published (app. B.1: n = 4 and n = 12 per hard-
negative type), the result's k of N beside the published models read as k of the released file's N."""
from __future__ import annotations

import numpy as np

from ...analysis.proportions import printed_k
from ...analysis.uncertainty import clopper_pearson_or_nan
from . import PRODUCTIVITY, reported
from ...lazy import lazy

pd = lazy("pandas")


def published(benchmark: str, summary: pd.DataFrame, manifest: dict, tie_policy: str) -> list[dict]:
    """A productivity result beside the paper's own models on each set both cover (app. B.1 publishes n = 4 and
    n = 12 per HN type): per set, the result's k of N, the paper's models as k of the released file's N (the k its
    printed R@1 fits), how many lie strictly below the result, and the best with its exact 95% interval. A set the
    paper did not publish adds no row; a published value that fits no k of the file's N is counted apart. Only
    productivity results: the paper's systematicity table is per training set, which a standing does not have."""
    if benchmark != PRODUCTIVITY.name:
        return []
    published = reported.productivity()
    files = reported.released_productivity_queries()
    value = f"r1_{tie_policy}" if f"r1_{tie_policy}" in summary else "r1"
    rows = []
    for r in summary[(summary["n_queries"] > 0)].itertuples():
        hn, n = getattr(r, "hn_type", None), getattr(r, "complexity", None)
        pub = published[(published["hn_type"] == hn) & (published["complexity"] == n)] if pd.notna(n) else []
        if not len(pub) or (hn, int(n)) not in files:
            continue
        n_file = files[(hn, int(n))]
        ks = {m: printed_k(float(v), 2, n_file) for m, v in zip(pub["model"], pub["r1"])}
        fitted = {m: k for m, k in ks.items() if k is not None}
        k = int(round(float(getattr(r, value)) * r.n_queries / 100.0))
        mine = 100.0 * k / r.n_queries
        best = max(fitted, key=lambda m: fitted[m]) if fitted else None
        low, high = clopper_pearson_or_nan(fitted[best], n_file) if best else (np.nan, np.nan)
        rows.append({"set": f"{hn} n = {int(n)}", "k": k, "n": int(r.n_queries), "value": mine,
                     "paper_models": len(pub), "paper_n": n_file,
                     "paper_below": sum(100.0 * v / n_file < mine for v in fitted.values()),
                     "paper_unfitted": len(ks) - len(fitted), "paper_best": best or "",
                     "paper_best_value": 100.0 * fitted[best] / n_file if best else np.nan,
                     "paper_best_low": low, "paper_best_high": high,
                     "note": "" if r.n_queries == n_file else
                     f"this result counts {int(r.n_queries)} queries, the released file {n_file}: placed by value"})
    return rows
