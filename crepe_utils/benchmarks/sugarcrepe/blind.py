"""SugarCrepe without looking: blind scorers on its seven subsets (notebooks 07 and 10).

``run``           blind results on the seven subsets, or why there are none
``field_counts``  a run's k of N per subset, as vl_compo's table counts them
``claims``        the cross-fitted bigram beats chance on the five REPLACE and SWAP subsets, although SugarCrepe
                  removed text-only cues with its own adversaries
"""
from __future__ import annotations

from ... import blind
from ...blind.runs import FAST_SCORERS, BlindRun, absent, recall_table, run as run_blind
from ...claims.base import FAIL, NEEDS, PASS, Check
from ...errors import CrepeError, error_line
from . import reported
from .data import load_pairs
from .datasets import SUGARCREPE_JSONS
from ...lazy import lazy

pd = lazy("pandas")

#: The scorers ``make check``'s blind claim needs on SugarCrepe.
CLAIM_SCORERS = ("bigram",)
HOW_TO_GET = "`make data-text` fetches SugarCrepe's JSONs"
#: what its blind claim reads, and its group in ``make check``
WHAT, GROUP = "sugarcrepe", "blind"
#: its subsets whose negatives replace or swap words (its ADD subsets add them: a length cue)
REPLACE_SWAP = ("replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj")


def run(data_dir=None, scorers=FAST_SCORERS, settings=blind.BlindSettings()) -> BlindRun | str:
    """Blind results on SugarCrepe's seven subsets, or why there are none."""
    folder = SUGARCREPE_JSONS.dir(data_dir)
    if absent(folder):
        return f"No SugarCrepe JSONs found: {HOW_TO_GET}."
    try:
        pairs = list(load_pairs(folder))
    except CrepeError as exc:
        return f"SugarCrepe's JSONs cannot be read ({error_line(exc)}); {HOW_TO_GET}."
    frame = pd.DataFrame({"query_id": [p.query_id for p in pairs], "group": [p.subset for p in pairs],
                          "hn_type": [p.subset for p in pairs], "complexity": pd.NA, "n_candidates": 2})
    return run_blind("sugarcrepe", pairs, frame, scorers, settings)


def field_counts(run: BlindRun) -> list[dict]:
    """Each scorer's k of N per subset: rows of column, scorer, k, n."""
    return [{"column": f"sugarcrepe::{group}", "scorer": s, "k": int(g[s].sum()), "n": len(g)}
            for group, g in run.per_query.groupby("hn_type", sort=False) for s in run.scorers]


def _needs(claim: str, paper: str) -> Check:
    return Check(claim, paper, "—", NEEDS, f"no {WHAT} data ({HOW_TO_GET})", GROUP)


def check_sugarcrepe_above_chance(recall: pd.DataFrame | None, published: pd.DataFrame | None = None,
                                  scorer: str = "bigram") -> list[Check]:
    """On each REPLACE and SWAP subset of SugarCrepe, the lower end of ``scorer``'s 95% interval (``recall``:
    :func:`~crepe_utils.blind.runs.recall_table` of the SugarCrepe run) lies above chance."""
    published = published if published is not None else reported.results()
    adversaries = published[published["model"].isin(("vera", "grammar")) & published["subset"].isin(REPLACE_SWAP)]
    claim = (f"A cross-fitted bigram (blind:{scorer}) beats chance on all five REPLACE and SWAP subsets of "
             "SugarCrepe, whose negatives were filtered by text-only adversaries")
    paper = f"chance 50; the adversaries (Vera, grammar) {adversaries['r1'].min():.0f}-{adversaries['r1'].max():.0f}"
    if recall is None:
        return [_needs(claim, paper)]
    rows = recall[(recall["scorer"] == scorer) & recall["group"].isin(REPLACE_SWAP)].set_index("group")
    missing = [s for s in REPLACE_SWAP if s not in rows.index]
    if missing:
        return [Check(claim, paper, "—", FAIL, f"no blind:{scorer} result on {', '.join(missing)}", GROUP)]
    rows = rows.loc[list(REPLACE_SWAP)]
    sure = rows[rows["ci_low"] > rows["chance_r1"]]
    detail = "; ".join(f"{g} {r.r1:.1f} [{r.ci_low:.1f}, {r.ci_high:.1f}] of {r.n_queries:,}"
                       for g, r in rows.iterrows())
    ours = f"{rows['r1'].min():.1f}-{rows['r1'].max():.1f}"
    return [Check(claim, paper, ours, PASS if len(sure) == len(rows) else FAIL,
                  f"lower 95% bound above chance on {len(sure)} of {len(rows)} subsets: {detail}", GROUP)]


def claims(result: BlindRun | str | None) -> list[Check]:
    """Its blind claim from a run with :data:`CLAIM_SCORERS` (a message or None: no data)."""
    return check_sugarcrepe_above_chance(recall_table(result) if isinstance(result, BlindRun) else None)
