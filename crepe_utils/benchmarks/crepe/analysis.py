"""The tables the notebooks show: published numbers beside evaluated ones, with differences and CIs.

Each function takes the output of :func:`crepe_utils.results.store.load_results` (possibly empty) and
returns a tidy DataFrame; notebooks only format and plot them.
"""
from __future__ import annotations

import numpy as np

from ... import metrics
from . import reported
from ...models import imagenet
from . import roster as registry
from ...models import checkpoints
from ...results.completeness import complete_only
from ...results.store import ResultsError, load_per_query, warn_unreadable
from ...lazy import lazy

pd = lazy("pandas")

HN_ORDER = {"systematicity": ["combined", "atom", "comp"], "productivity": ["atom", "swap", "negate", "all"]}


def _display(key: str, fallback: str | None = None) -> str:
    """The paper's name of a registry model; otherwise ``fallback`` (the manifest's) or the key."""
    return registry.display_names().get(key, fallback or key)


def _train(key: str, default: str = "other") -> str:
    return registry.train_data(key) if key in registry.model_order() else default


OUTSIDE_PAPER = "not in the paper (evaluated here only)"


def model_note(key: str) -> str:
    """What a reader must know about a model's row: its checkpoint's caveat (FLAVA and ALBEF saw Visual
    Genome images in training, §5.2), or that the model is not one of the paper's."""
    return checkpoints.checkpoint(key).caveat if key in registry.model_order() else OUTSIDE_PAPER


def _hits(pq: pd.DataFrame, hn_type: str, split: str, tie_policy: str = "pessimistic") -> np.ndarray:
    g = pq[(pq["hn_type"] == hn_type) & (pq["split"].fillna("") == split)]
    ranks = g["rank"] if tie_policy == "pessimistic" else g["rank_optimistic"]
    return 100.0 * (ranks.to_numpy() <= 1)


def _random_ties(pq: pd.DataFrame, hn_type: str, split: str) -> float:
    """R@1 (%) expected if ties were broken at random (:func:`crepe_utils.metrics.expected_recall_at_k`), from a
    per-query table's two ranks."""
    g = pq[(pq["hn_type"] == hn_type) & (pq["split"].fillna("") == split)]
    optimistic = g["rank_optimistic"].to_numpy()
    ranks = metrics.Ranks(g["rank"].to_numpy(), optimistic, g["rank"].to_numpy() - optimistic)
    return metrics.expected_recall_at_k(ranks, 1)


def systematicity_evaluated(evaluated: pd.DataFrame, n_boot: int = 10_000) -> pd.DataFrame:
    """SC, UC and UC − SC per evaluated (model, HN type), with bootstrap intervals, and SC and UC expected if ties
    were broken at random (``SC_random_ties``, ``UC_random_ties``).

    A result whose per-query table cannot be read is left out, with an UnreadableResultWarning.
    """
    ev = evaluated[evaluated["benchmark"] == "systematicity"]
    rows, per_query = [], {}
    for (model, hn, rdir, kind, train), g in ev.groupby(["model", "hn_type", "result_dir", "kind", "train_data"]):
        shown = g["display"].iloc[0] if "display" in g else None
        by_split = g.set_index("split")
        if not {"SC", "UC"} <= set(by_split.index):
            continue
        if rdir not in per_query:
            try:
                per_query[rdir] = load_per_query(rdir)
            except ResultsError as exc:
                warn_unreadable(exc, f"the systematicity of {model} is left out of this table")
                per_query[rdir] = None
        if per_query[rdir] is None:
            continue
        sc_hits, uc_hits = _hits(per_query[rdir], hn, "SC"), _hits(per_query[rdir], hn, "UC")
        lo, hi = metrics.bootstrap_delta_ci(sc_hits, uc_hits, n_boot=n_boot, seed=0)
        rows.append({
            "model": model, "display": _display(model, shown), "train_data": _train(model, train), "hn_type": hn,
            "kind": kind, "SC": by_split.loc["SC", "r1"], "UC": by_split.loc["UC", "r1"],
            "SC_ci_low": by_split.loc["SC", "r1_ci_low"], "SC_ci_high": by_split.loc["SC", "r1_ci_high"],
            "UC_ci_low": by_split.loc["UC", "r1_ci_low"], "UC_ci_high": by_split.loc["UC", "r1_ci_high"],
            "SC_random_ties": _random_ties(per_query[rdir], hn, "SC"),
            "UC_random_ties": _random_ties(per_query[rdir], hn, "UC"),
            "delta": by_split.loc["UC", "r1"] - by_split.loc["SC", "r1"], "delta_ci_low": lo, "delta_ci_high": hi,
            "n_SC": int(by_split.loc["SC", "n_queries"]), "n_UC": int(by_split.loc["UC", "n_queries"]),
            "chance": by_split["chance_r1"].mean(),
        })
    return pd.DataFrame(rows)


def systematicity_comparison(evaluated: pd.DataFrame, n_boot: int = 10_000) -> pd.DataFrame:
    """Published SC/UC/Δ beside evaluated SC/UC/Δ (and their differences) per model × HN set."""
    pub = reported.systematicity_wide().rename(columns={"SC": "SC_paper", "UC": "UC_paper", "delta": "delta_paper"})
    ev = systematicity_evaluated(evaluated, n_boot)
    if ev.empty:
        return pub
    ev = ev.rename(columns={c: f"{c}_eval" for c in ev.columns
                            if c not in ("model", "display", "train_data", "hn_type", "kind")})
    out = pub.merge(ev, on=["model", "display", "train_data", "hn_type"], how="outer")
    out["SC_diff"] = out["SC_eval"] - out["SC_paper"]
    out["UC_diff"] = out["UC_eval"] - out["UC_paper"]
    return reported.sort_by_model(out, extra=["hn_type"], extra_order={"hn_type": HN_ORDER["systematicity"]})


def productivity_evaluated(evaluated: pd.DataFrame) -> pd.DataFrame:
    """Evaluated R@1 per model × HN type × complexity (with interval and chance)."""
    ev = evaluated[evaluated["benchmark"] == "productivity"].copy()
    if ev.empty:
        return pd.DataFrame(columns=["model", "display", "train_data", "hn_type", "complexity", "r1",
                                     "r1_ci_low", "r1_ci_high", "r1_optimistic", "chance_r1", "n_queries",
                                     "n_tied_queries", "kind", "n_skipped", "result_dir", "note"])
    shown = ev["display"] if "display" in ev else ev["model"]
    ev["display"] = [_display(m, d) for m, d in zip(ev["model"], shown)]
    ev["train_data"] = ev["model"].map(lambda k: _train(k, "toy" if (ev["kind"] == "toy").any() else "other"))
    ev["note"] = [model_note(m) if k == "evaluated" else "" for m, k in zip(ev["model"], ev["kind"])]
    cols = ["model", "display", "train_data", "hn_type", "complexity", "r1", "r1_ci_low", "r1_ci_high",
            "r1_optimistic", "chance_r1", "n_queries", "n_tied_queries", "kind", "n_skipped", "result_dir", "note"]
    return ev[cols].reset_index(drop=True)


def productivity_comparison(evaluated: pd.DataFrame) -> pd.DataFrame:
    """Published R@1 (n = 4, 12) beside evaluated R@1 at every complexity."""
    pub = reported.productivity()[["model", "display", "train_data", "hn_type", "complexity", "r1"]]
    pub = pub.rename(columns={"r1": "r1_paper"})
    ev = productivity_evaluated(evaluated)
    if ev.empty:
        return pub
    ev = ev.rename(columns={"r1": "r1_eval", "r1_ci_low": "r1_eval_ci_low", "r1_ci_high": "r1_eval_ci_high"})
    names = dict(zip(ev["model"], ev["display"]))
    trains = dict(zip(ev["model"], ev["train_data"]))
    out = pub.merge(ev.drop(columns=["display", "train_data", "n_skipped", "result_dir", "note"]),
                    on=["model", "hn_type", "complexity"], how="outer")
    out["display"] = [_display(m, names.get(m)) for m in out["model"]]
    out["train_data"] = [_train(m, trains.get(m, "other")) for m in out["model"]]
    out["note"] = [model_note(m) for m in out["model"]]
    out["diff"] = out["r1_eval"] - out["r1_paper"]
    return reported.sort_by_model(out, extra=["hn_type", "complexity"],
                                   extra_order={"hn_type": HN_ORDER["productivity"]})


def evaluated_swap_r2_inputs(evaluated: pd.DataFrame, complexity: int, source: str = "open_clip_docs",
                             models: list[str] | None = None) -> pd.DataFrame:
    """Evaluated HN-Swap R@1 at one complexity with ImageNet accuracy (complete real evaluations only).

    Complete: no limit, no skipped query, as many queries as the released file
    (:func:`crepe_utils.results.completeness.complete_only`).
    """
    ev = productivity_evaluated(evaluated)
    ev = complete_only(ev[ev["kind"] == "evaluated"], ["hn_type", "complexity"], reported.released_productivity_queries())
    models = models or list(registry.SYSTEMATICITY_MODELS)
    ev = ev[(ev["kind"] == "evaluated") & (ev["hn_type"] == "swap") & (ev["complexity"] == complexity)
            & ev["model"].isin(models)].copy()
    ev["imagenet_top1"] = ev["model"].map(imagenet.top1(source))
    return ev


def granularity_table(prod: pd.DataFrame, query_counts: dict[tuple[str, int], int]) -> pd.DataFrame:
    """Each published productivity R@1 with N (its file's query count) and the k with 100·k/N nearest.

    ``is_k_over_n`` is True when 100·k/N rounds to the published value: the value can have been
    computed on that file. HN-Swap at n = 4 has N = 27, so its values move in steps of 3.7 points.
    """
    rows = []
    for r in prod.itertuples():
        n = query_counts.get((r.hn_type, int(r.complexity)))
        k = round(r.r1 * n / 100.0) if n else None
        rows.append({"model": r.model, "display": r.display, "hn_type": r.hn_type, "complexity": int(r.complexity),
                     "r1_paper": r.r1, "N": n, "k": k, "k_over_N": 100.0 * k / n if n else np.nan,
                     "is_k_over_n": bool(n) and round(100.0 * k / n, 2) == round(r.r1, 2)})
    return pd.DataFrame(rows)


MODEL_SETS = {
    "7 open_clip (systematicity models)": lambda: list(registry.SYSTEMATICITY_MODELS),
    "12: + 5 OpenAI CLIP": lambda: [k for k in registry.model_order() if checkpoints.checkpoint(k).family == "open_clip"],
    "5 OpenAI CLIP only": lambda: [k for k in registry.model_order() if checkpoints.checkpoint(k).family == "open_clip"
                                   and registry.train_data(k) == "openai"],
}


def r2_table(source: str = "open_clip_docs", n_boot: int = 10_000, evaluated: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every R² of §5.4 recomputed (with bootstrap interval and leave-one-out range) beside the paper's."""
    from ...analysis.correlation import r_squared_table
    claims = reported.claims().set_index("claim_id")["value"].astype(float)
    syst = systematicity_r2_inputs(source=source)
    t1 = r_squared_table(syst, "imagenet_top1", "r1", ["hn_type", "split"], n_boot=n_boot)
    t1["set"] = t1["hn_type"].map({"atom": "HN-Atom", "comp": "HN-Comp"}) + " " + t1["split"]
    t1["r2_paper"] = [claims[f"r2_{h}_{s}"] for h, s in zip(t1["hn_type"], t1["split"])]
    prod = productivity_r2_inputs(source=source)
    if evaluated is not None:
        swap8 = evaluated_swap_r2_inputs(evaluated, 8, source)
        if len(swap8) >= 3:
            prod = pd.concat([prod, swap8[prod.columns.intersection(swap8.columns)]], ignore_index=True)
    t2 = r_squared_table(prod, "imagenet_top1", "r1", ["complexity"], n_boot=n_boot)
    t2["set"] = "HN-Swap n=" + t2["complexity"].astype(str)
    t2["r2_paper"] = [claims[f"r2_swap_{n}"] for n in t2["complexity"]]
    out = pd.concat([t1, t2], ignore_index=True)
    missing = [n for n in (4, 8, 12) if n not in set(t2["complexity"])]
    for n in missing:
        out.loc[len(out)] = {"set": f"HN-Swap n={n}", "r2_paper": claims[f"r2_swap_{n}"], "n_models": 0}
    out["imagenet_source"] = source
    out["reproduced"] = out["r2"].round(2) == out["r2_paper"]
    cols = ["set", "imagenet_source", "n_models", "r2_paper", "r2", "r2_ci_low", "r2_ci_high", "r2_fisher_low",
            "r2_fisher_high", "r2_loo_min", "r2_loo_max", "reproduced"]
    return out[cols]


def r2_model_set_search(n_boot: int = 0) -> pd.DataFrame:
    """HN-Swap R² for each candidate model set × ImageNet source: which one did the paper use?"""
    from ...analysis.correlation import r_squared
    claims = reported.claims().set_index("claim_id")["value"].astype(float)
    rows = []
    for set_name, keys in MODEL_SETS.items():
        for source in imagenet.SOURCES:
            d = productivity_r2_inputs(source=source, models=keys())
            row = {"model set": set_name, "imagenet_source": source, "n_models": d["model"].nunique()}
            for n in (4, 12):
                g = d[d["complexity"] == n]
                row[f"R² n={n}"] = r_squared(g["imagenet_top1"], g["r1"])
                row[f"paper n={n}"] = claims[f"r2_swap_{n}"]
            row["reproduces"] = all(round(row[f"R² n={n}"], 2) == row[f"paper n={n}"] for n in (4, 12))
            rows.append(row)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ R² inputs

def systematicity_r2_inputs(syst: pd.DataFrame | None = None, source: str = "open_clip_docs") -> pd.DataFrame:
    """R@1 per model × HN set × split with the model's ImageNet accuracy (atom and comp only)."""
    syst = syst if syst is not None else reported.systematicity()
    df = syst[syst["hn_type"].isin(["atom", "comp"])].copy()
    df["imagenet_top1"] = df["model"].map(imagenet.top1(source))
    return df


def productivity_r2_inputs(prod: pd.DataFrame | None = None, source: str = "open_clip_docs",
                           models: list[str] | None = None) -> pd.DataFrame:
    """HN-Swap R@1 per model × complexity with ImageNet accuracy, for ``models``.

    Default models: the seven open_clip checkpoints of the systematicity study, the set that
    reproduces the paper's HN-Swap R² (see notebook 04).
    """
    prod = prod if prod is not None else reported.productivity()
    models = models or list(registry.SYSTEMATICITY_MODELS)
    df = prod[(prod["hn_type"] == "swap") & prod["model"].isin(models)].copy()
    df["imagenet_top1"] = df["model"].map(imagenet.top1(source))
    return df

