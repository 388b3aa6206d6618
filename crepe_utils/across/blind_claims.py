"""What a model gets without looking: claims about text-only ("blind") scorers, computed from the data.

``check_rule_beats_published``  a one-line text rule beats every published model on HN-Neg (n = 4, n = 12)
``check_above_chance``          the best cross-fitted blind scorer beats chance on every productivity file
``check_sugarcrepe_above_chance``  the cross-fitted bigram beats chance on SugarCrepe's five REPLACE and SWAP
                                subsets, although SugarCrepe removed text-only cues with its own adversaries
``check_winoground_zero``       every blind scorer's Winoground text, image and group scores are 0

Each takes the numbers it checks as arguments (None: no data), so a test can hand it wrong ones and
watch it fail; :func:`blind_sections` computes them from the data folders.
"""
from __future__ import annotations

from .. import blind
from ..benchmarks.crepe import reported
from ..benchmarks.sugarcrepe import reported as sugarcrepe_reported
from . import blind as blind_analysis
from ..claims.base import FAIL, NEEDS, PASS, Check, Topic
from ..lazy import lazy

pd = lazy("pandas")

GROUP = "blind"
RULE = "negation"
ENDPOINTS = (4, 12)
#: SugarCrepe's subsets whose negatives replace or swap words (its ADD subsets add them: a length cue).
REPLACE_SWAP = ("replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj")


def _needs(claim: str, paper: str, dataset: str) -> Check:
    return Check(claim, paper, "—", NEEDS, f"no {dataset} data ({blind_analysis.HOW_TO_GET[dataset]})", GROUP)


def check_rule_beats_published(recall: pd.DataFrame | None, published: pd.DataFrame | None = None,
                               rule: str = RULE) -> list[Check]:
    """Per endpoint n: the rule's HN-Neg R@1 (``recall``: :func:`~crepe_utils.across.blind.recall_table`)
    above the best published model's (default: CREPE's productivity table)."""
    published = published if published is not None else reported.productivity()
    out = []
    for n in ENDPOINTS:
        pub = published[(published["hn_type"] == "negate") & (published["complexity"] == n)]
        best = pub.loc[pub["r1"].idxmax()]
        claim = f"A one-line text rule (blind:{rule}) beats every published model on HN-Neg at n = {n}"
        paper = f"best published {best['r1']:.2f} ({best['model']})"
        if recall is None:
            out.append(_needs(claim, paper, "crepe"))
            continue
        row = recall[(recall["scorer"] == rule) & (recall["hn_type"] == "negate") & (recall["complexity"] == n)]
        if row.empty:
            out.append(Check(claim, paper, "—", FAIL, f"no blind:{rule} result on HN-Neg n = {n}", GROUP))
            continue
        ours = float(row["r1"].iloc[0])
        ok = ours > float(best["r1"])
        out.append(Check(claim, paper, f"{ours:.2f}", PASS if ok else FAIL,
                         f"{len(pub)} published models; the rule {'beats' if ok else 'does not beat'} the best by "
                         f"{ours - float(best['r1']):+.2f} points on {int(row['n_queries'].iloc[0]):,} queries, "
                         "never looking at the image", GROUP))
    return out


def check_above_chance(recall: pd.DataFrame | None) -> list[Check]:
    """Per productivity file, the best cross-fitted scorer of ``recall`` has R@1 above the file's chance."""
    claim = "The best cross-fitted blind scorer beats chance on every productivity file"
    paper = "chance = mean 1/candidates"
    if recall is None:
        return [_needs(claim, paper, "crepe")]
    trained = recall[recall["scorer"].map(lambda s: blind.scorer(s).trained)]
    if trained.empty:
        return [Check(claim, paper, "—", FAIL, "no cross-fitted scorer among the results", GROUP)]
    best = trained.loc[trained.groupby("group", sort=False)["r1"].idxmax()]
    below = best[best["r1"] <= best["chance_r1"]]
    sure = int((best["ci_low"] > best["chance_r1"]).sum())
    margin = best.assign(m=best["r1"] - best["chance_r1"]).sort_values("m").iloc[0]
    detail = (f"scorers {', '.join(sorted(trained['scorer'].unique()))}; smallest margin {margin['m']:+.1f} points "
              f"({margin['group']}, {margin['scorer']}); lower 95% bound above chance on {sure} of {len(best)} files")
    if len(below):
        detail = "at or below chance: " + ", ".join(below["group"]) + "; " + detail
    return [Check(claim, paper, f"{len(best) - len(below)} of {len(best)} files", FAIL if len(below) else PASS,
                  detail, GROUP)]


def check_sugarcrepe_above_chance(recall: pd.DataFrame | None, published: pd.DataFrame | None = None,
                                  scorer: str = "bigram") -> list[Check]:
    """On each REPLACE and SWAP subset of SugarCrepe, the lower end of ``scorer``'s 95% interval (``recall``:
    :func:`~crepe_utils.across.blind.recall_table` of the SugarCrepe run) lies above chance."""
    published = published if published is not None else sugarcrepe_reported.results()
    adversaries = published[published["model"].isin(("vera", "grammar")) & published["subset"].isin(REPLACE_SWAP)]
    claim = (f"A cross-fitted bigram (blind:{scorer}) beats chance on all five REPLACE and SWAP subsets of "
             "SugarCrepe, whose negatives were filtered by text-only adversaries")
    paper = f"chance 50; the adversaries (Vera, grammar) {adversaries['r1'].min():.0f}-{adversaries['r1'].max():.0f}"
    if recall is None:
        return [_needs(claim, paper, "sugarcrepe")]
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


def check_winoground_zero(table: pd.DataFrame | None) -> list[Check]:
    """Every scorer of ``table`` (:func:`~crepe_utils.across.blind.winoground_table`) scores 0 on text,
    image and group: a text-only score is the same for both images, and the strict rule counts that tie."""
    claim = "Every blind scorer scores 0 on Winoground's text, image and group scores (ties counted)"
    paper = "0 by construction"
    if table is None:
        return [_needs(claim, paper, "winoground")]
    nonzero = table[table["score"] != 0]
    ours = f"max {table['score'].max():.2f}" if len(table) else "—"
    if table.empty or len(nonzero):
        what = ", ".join(f"{r.scorer} {r.metric} {r.score:.2f}" for r in nonzero.itertuples()) or "no scores"
        return [Check(claim, paper, ours, FAIL, what, GROUP)]
    scorers = table["scorer"].nunique()
    return [Check(claim, paper, ours, PASS, f"{scorers} scorers × {len(table) // scorers} metrics on "
                  f"{int(table['examples'].iloc[0])} examples", GROUP)]


def blind_sections(data_dir=None, winoground_dir=None, runs: dict | None = None,
                   sugarcrepe_dir=None) -> dict[str, list[Check]]:
    """``blind``: the claims, from ``runs`` (:func:`~crepe_utils.across.blind.load_runs`' output) or computed
    here from the CREPE folder (``$CREPE_DATA/crepe``), SugarCrepe's (``$SUGARCREPE_DATA``) and Winoground's
    (``$WINOGROUND_DATA``)."""
    if runs is None:
        runs = {"crepe": blind_analysis.crepe_run(data_dir, blind_analysis.CLAIM_SCORERS),
                "sugarcrepe": blind_analysis.sugarcrepe_run(sugarcrepe_dir, blind_analysis.SUGARCREPE_CLAIM_SCORERS),
                "winoground": blind_analysis.winoground_table(winoground_dir)}
    recall = {name: blind_analysis.recall_table(run) if isinstance(run, blind_analysis.BlindRun) else None
              for name, run in ((n, runs.get(n)) for n in ("crepe", "sugarcrepe"))}
    winoground = runs.get("winoground")
    winoground = winoground if isinstance(winoground, pd.DataFrame) else None
    return {"blind": check_rule_beats_published(recall["crepe"]) + check_above_chance(recall["crepe"])
            + check_sugarcrepe_above_chance(recall["sugarcrepe"]) + check_winoground_zero(winoground)}


def blind_checks(data_dir=None, winoground_dir=None, runs: dict | None = None, sugarcrepe_dir=None) -> list[Check]:
    """The blind claims (notebook 07's check cell, and ``make check``)."""
    return blind_sections(data_dir, winoground_dir, runs, sugarcrepe_dir)["blind"]


TOPICS = {"blind": Topic(blind_checks, "07_blind_baselines")}
ORDER = (("blind", "blind"),)


def sections(results_dir=None, data_dirs=None) -> dict[tuple[str, str], list[Check]]:
    """The blind scorers' sections for ``make check``: (topic, section) → rows."""
    dirs = data_dirs or {}
    parts = blind_sections(dirs.get("crepe"), dirs.get("winoground"), sugarcrepe_dir=dirs.get("sugarcrepe"))
    return {("blind", name): rows for name, rows in parts.items()}
