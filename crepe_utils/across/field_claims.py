"""What vl_compo's 202-checkpoint table (:mod:`crepe_utils.field`) says, checked: its granularity against the
released data, its agreement with the benchmarks' own tables, the papers' ImageNet claims at its scale, and the
blind scorers among its checkpoints.

``check_granularity``        per benchmark: every value is k/N for the released count (CREPE: a paper inconsistency)
``check_all_files``          CREPE: the N of each type is the archive's ``_all`` file's row count
``check_sugarcrepe_agreement`` SugarCrepe's own table against the field's rows, within :data:`AGREE_ITEMS` items
``check_winoground_agreement`` Winoground's Table 3 CLIP row against the field's
``check_crepe_agreement``    CREPE's n = 4 and 12 values are consistent with the field's pooled ones (weak)
``check_valse_average``      VALSE's CLIP average against the field's OpenAI ViT-B/32
``check_papers_at_scale``    CREPE's and SugarCrepe's ImageNet numbers against the field's 194 pretrained checkpoints
``check_blind``              text-only scorers beat whole parts of the field

Each takes the tables it checks as arguments (defaults: computed from the carried table and the pinned counts; the
blind rows from the released data, ``needs data`` without them), so a test can hand it wrong numbers and watch it
fail. A row fails where the fault would be ours (a carried value that is not k/N, a claim of ours the numbers
contradict); a difference between two publications is a paper inconsistency, with its evidence.
"""
from __future__ import annotations

import numpy as np

from .. import field
from ..benchmarks.crepe import reported as crepe_reported
from ..benchmarks.valse import analysis as valse_analysis
from ..claims.base import FAIL, NEEDS, PAPER, PASS, Check, Topic
from ..field import reported as field_reported
from ..models import imagenet
from . import blind as blind_analysis
from . import field as F
from ..lazy import lazy

pd = lazy("pandas")

GROUP = "field"
#: two evaluations of one checkpoint on the same items agree when they differ by at most this many items
AGREE_ITEMS = 2
LABELS = {"crepe-productivity": "CREPE productivity", "sugarcrepe": "SugarCrepe", "winoground": "Winoground",
          "valse": "VALSE", "imagenet": "ImageNet"}
#: the blind scorers the field's blind rows run (VALSE's: the fixed rules, the word prior, the bigram)
SCORERS = valse_analysis.SCORERS


def _n(values) -> str:
    return " / ".join(f"{int(v):,}" for v in values)


# ------------------------------------------------------------------ granularity

def check_granularity(gran: pd.DataFrame | None = None) -> list[Check]:
    """Per benchmark: all values of each column are k/N for its released count (pass); for another single N
    each (a paper inconsistency: the table counts other items); for no N (fail: the carried values are not the
    table's)."""
    gran = F.granularity() if gran is None else gran
    out = []
    for bench, g in gran.groupby("benchmark", sort=False):
        claim = f"vl_compo's {LABELS[bench]} values are k/N for the released item counts"
        paper = f"{len(g)} column{'s' * (len(g) > 1)} × {int(g['values'].iloc[0])} values"
        lost = g[g["common_n"].isna()]
        if len(lost):
            out.append(Check(claim, paper, "—", FAIL, "no N ≤ 60,000 of which all values are k/N: "
                             + ", ".join(lost["column"]) + " (the carried values are not the table's)", GROUP))
            continue
        off = g[g["fits_released"] < g["values"]]
        rejected = "; ".join(f"{field.part(r.column)}: {r.best_alternative}" for r in g.itertuples()
                             if r.best_alternative)
        if off.empty:
            out.append(Check(claim, paper, f"all fit N = {_n(g['released_n'])}", PASS,
                             f"each column's smallest common N is its released count; other item sets: "
                             f"{rejected}" if rejected else "each column's smallest common N is its released count",
                             GROUP))
            continue
        diff = ", ".join(f"{r.column} {int(r.common_n):,} ({int(r.common_n) - int(r.released_n):+,}; "
                         f"{int(r.fits_released)} of {int(r.values)} fit {int(r.released_n):,})" for r in off.itertuples())
        out.append(Check(claim, paper, f"N = {_n(off['common_n'])}; released {_n(off['released_n'])}", PAPER,
                         f"every value is k/N for one N per column, not the released count: {diff}. Counted on other "
                         f"items than the release's; best other item sets: {rejected}", GROUP))
    return out


def check_all_files(gran: pd.DataFrame | None = None, all_rows: dict[str, int] | None = None) -> list[Check]:
    """Per CREPE type: the table's N is the row count of the archive's ``prod_vg_hard_negs_{type}_all.csv``, the
    file beside the nine complexity files (pass where that count is pinned and equal, fail where it differs,
    ``needs data`` where it is not pinned: the inference rests on the swap file)."""
    gran = F.granularity() if gran is None else gran
    all_rows = crepe_reported.released_all_rows() if all_rows is None else all_rows
    out = []
    for r in gran[gran["benchmark"] == "crepe-productivity"].itertuples():
        hn = field.part(r.column)
        name = f"prod_vg_hard_negs_{hn}_all.csv"
        claim = f"vl_compo pooled CREPE's {hn} hard negatives over the archive's {name}"
        found = bool(pd.notna(r.common_n) and r.common_n)
        ours = f"N = {int(r.common_n):,} ({int(r.fits_common)} of {int(r.values)} values)" if found else "no N"
        if not found or r.fits_common < r.values:
            out.append(Check(claim, "its row count", ours, FAIL, "the values are not k/N for one N", GROUP))
        elif hn in all_rows:
            ok = int(r.common_n) == all_rows[hn]
            out.append(Check(claim, f"{all_rows[hn]:,} rows", ours, PASS if ok else FAIL,
                             (f"established: the table's N is the file's row count, {int(r.common_n) - int(r.released_n):+,}"
                              f" against the nine complexity files ({int(r.released_n):,}), which it is not the "
                              "concatenation of") if ok else "the table's N is not the file's row count", GROUP))
        else:
            out.append(Check(claim, "its row count (not pinned)", ours, NEEDS,
                             f"inferred: N is {int(r.common_n) - int(r.released_n):+,} against the nine complexity "
                             f"files, as the swap file's count is against its nine; {name} is in CREPE's archive but "
                             "not in the released data read here, so its row count is not pinned", GROUP))
    return out


# ------------------------------------------------------------------ agreement with the benchmarks' own tables

def _cells(diffs) -> str:
    d = np.abs(np.asarray(diffs, dtype=float))
    return f"{int((d == 0).sum())} of {len(d)} cells identical, {int((d <= 1).sum())} within 1 item"


def _explained_row(key: str, g: pd.DataFrame, why, field_imagenet: float) -> Check:
    name = g["name"].iloc[0]
    worst = int(g["diff_items"].abs().max())
    claim = f"vl_compo's {name} agrees within {AGREE_ITEMS} items with SugarCrepe's published row"
    ours = "; ".join(f"{s} {int(d):+d}" for s, d in zip(g["subset"], g["diff_items"]))
    re_eval = imagenet.top1("open_clip_results_table").get(key, np.nan)
    detail = (f"explained ({why.evidence}): {why.explanation}; ImageNet {field_imagenet:.3f} in the table, "
              f"{re_eval:.2f} in open_clip's re-evaluation")
    return Check(claim, "7 subsets", ours, PASS if worst <= AGREE_ITEMS else PAPER,
                 detail if worst > AGREE_ITEMS else f"within {AGREE_ITEMS} items", GROUP)


def check_sugarcrepe_agreement(agree: pd.DataFrame | None = None, explanations: pd.DataFrame | None = None,
                               table: pd.DataFrame | None = None) -> list[Check]:
    """SugarCrepe's published checkpoints in the field, subset by subset in items: one row for those without a
    recorded explanation (pass when every one is within :data:`AGREE_ITEMS`), one row per explained checkpoint."""
    agree = F.sugarcrepe_agreement(table) if agree is None else agree
    explanations = field_reported.explanations() if explanations is None else explanations
    why = explanations[explanations["benchmark"] == "sugarcrepe"].set_index("checkpoint")
    present = agree[agree["in_field"]]
    claim = f"vl_compo's SugarCrepe values agree within {AGREE_ITEMS} items with SugarCrepe's own table"
    absent = list(dict.fromkeys(agree.loc[~agree["in_field"], "name"]))
    paper = f"{agree['checkpoint'].nunique()} checkpoints × 7 subsets"
    broken = present[present["paper_k"].isna() | present["field_k"].isna()]
    if present.empty or len(broken):
        what = "; ".join(f"{r.name} {r.subset}" for r in broken.itertuples()) or "no checkpoint in the field"
        return [Check(claim, paper, "—", FAIL, f"not k/N: {what}", GROUP)]
    plain = present[~present["checkpoint"].isin(why.index)]
    worst = plain.groupby("name", sort=False)["diff_items"].apply(lambda d: d.abs().max())
    beyond = worst[worst > AGREE_ITEMS]
    ours = f"{len(worst) - len(beyond)} of {len(worst)} checkpoints; {_cells(plain['diff_items'])}"
    detail = (f"not in the field: {', '.join(absent)}; explained apart: {', '.join(why.index)}" +
              (f"; unexplained: {', '.join(f'{n} (up to {int(d)} items)' for n, d in beyond.items())}" if len(beyond) else ""))
    rows = [Check(claim, paper, ours, PAPER if len(beyond) else PASS, detail, GROUP)]
    field_rows = F.checkpoint_rows(table)
    for key in why.index:
        g = present[present["checkpoint"] == key]
        if len(g):
            rows.append(_explained_row(key, g, why.loc[key], float(field_rows.loc[key, field.IMAGENET])))
    return rows


def check_winoground_agreement(agree: pd.DataFrame | None = None) -> list[Check]:
    """Table 3's CLIP (ViT-B/32) row against the field's OpenAI ViT-B/32, in examples."""
    agree = F.winoground_agreement() if agree is None else agree
    claim = f"vl_compo's OpenAI ViT-B/32 agrees within {AGREE_ITEMS} examples with Winoground Table 3's CLIP row"
    paper = " / ".join(f"{v:.2f}" for v in agree["paper"]) + " (text / image / group)"
    if agree["field_k"].isna().any() or agree["paper_k"].isna().any():
        return [Check(claim, paper, "—", FAIL, "a value that is not k/400", GROUP)]
    ours = " / ".join(f"{v:.2f}" for v in agree["field"]) + " (" + ", ".join(
        f"{int(d):+d}" for d in agree["diff_examples"]) + " examples)"
    worst = int(agree["diff_examples"].abs().max())
    detail = (f"{_n(agree['paper_k'])} against {_n(agree['field_k'])} of {int(agree['n'].iloc[0])} examples; "
              "Winoground does not publish how it scored CLIP (preprocessing, precision), which could explain a few "
              "examples")
    return [Check(claim, paper, ours, PAPER if worst > AGREE_ITEMS else PASS, detail, GROUP)]


def check_crepe_agreement(agree: pd.DataFrame | None = None) -> list[Check]:
    """CREPE's n = 4 and n = 12 values against the field's pooled ones for the checkpoints in both: every cell
    within the k bounds that hold if the field's items contain those two files (pass), or not (a paper
    inconsistency); with the weak comparisons (between the two, Spearman) in the detail."""
    agree = F.crepe_agreement() if agree is None else agree
    claim = ("vl_compo's pooled CREPE values are consistent with its items containing the released n = 4 and "
             "n = 12 files")
    paper = f"CREPE's n = 4 and n = 12 R@1, {agree['checkpoint'].nunique()} checkpoints × 3 types"
    if agree.empty or agree["feasible"].isna().any():
        return [Check(claim, paper, "—", FAIL, "a value that is not k/N, or no checkpoint in both", GROUP)]
    ranks = F.crepe_rank_agreement(agree)
    ok = int(agree["feasible"].sum())
    detail = ("; ".join(f"{r.hn_type}: between n = 4 and 12 for {r.between} of {r.checkpoints}, Spearman "
                        f"{r.spearman_n4:+.2f} (n = 4) / {r.spearman_n12:+.2f} (n = 12)" for r in ranks.itertuples())
              + ". Weak: the field pools every complexity over more items; CyCLIP, FLAVA and ALBEF are not open_clip "
              "rows of the field")
    return [Check(claim, paper, f"{ok} of {len(agree)} cells", PASS if ok == len(agree) else PAPER, detail, GROUP)]


def check_valse_average(average: dict | None = None) -> list[Check]:
    """VALSE's CLIP average pairwise accuracy against the unweighted mean of the field's OpenAI ViT-B/32 pieces."""
    average = F.valse_average() if average is None else average
    claim = "vl_compo's OpenAI ViT-B/32 averages VALSE's CLIP pairwise accuracy over the pieces"
    paper = f"{average['paper']:.1f} (CLIP, acc_r)"
    if not np.isfinite(average["pieces_mean"]) or not np.isfinite(average["paper"]):
        return [Check(claim, paper, "—", FAIL, "no VALSE values for the checkpoint", GROUP)]
    off = average["pieces_mean"] - average["paper"]
    ok = abs(off) <= 0.05 + 1e-9
    detail = (f"the unweighted mean of the eleven pieces, {off:+.2f} points; the mean of the seven phenomena (vl_compo's "
              f"own average) is {average['phenomena_mean']:.2f} and the valid items pooled {average['pooled']:.2f}; "
              f"the field's {average['openai_checkpoints']} OpenAI CLIP rows average {average['openai_min']:.2f} to "
              f"{average['openai_max']:.2f}. VALSE names its model CLIP (taken as ViT-B/32 here) and its per-piece "
              "values are not carried, so which pieces differ cannot be said")
    return [Check(claim, paper, f"{average['pieces_mean']:.2f}", PASS if ok else PAPER, detail, GROUP)]


# ------------------------------------------------------------------ the papers' claims at scale

def check_papers_at_scale(rows: pd.DataFrame | None = None) -> list[Check]:
    """Each published r or R² against ImageNet holds at scale when it (± its printed rounding) lies in the field's
    95% bootstrap interval over the 194 pretrained checkpoints (pass); otherwise a paper inconsistency: the number
    does not hold beyond the paper's models."""
    rows = F.paper_correlations() if rows is None else rows
    out = []
    for r in rows.itertuples():
        claim = f"{r.paper}: {r.statistic} against ImageNet ({r.paper_models} models) holds over the field"
        paper = f"{r.paper_value:.{r.paper_decimals}f}"
        if not np.isfinite([r.field, r.field_low, r.field_high]).all():
            out.append(Check(claim, paper, "—", FAIL, f"{r.column}: no correlation over the field", GROUP))
            continue
        pooled = " (the field pools HN-Swap over every complexity; CREPE's R² is at one n)" if r.kind == "r2" else ""
        detail = (f"{'holds' if r.holds else 'does not hold'} at scale: {r.field_n} pretrained checkpoints"
                  f"{pooled}; over the paper's {r.same_n} checkpoints in the field, {r.same:.2f} "
                  f"[{r.same_low:.2f}, {r.same_high:.2f}]")
        out.append(Check(claim, paper, f"{r.field:.2f} [{r.field_low:.2f}, {r.field_high:.2f}]",
                         PASS if r.holds else PAPER, detail, GROUP))
    return out


# ------------------------------------------------------------------ the blind scorers among the field

def _blind_claims() -> list[tuple[str, str, list[str], str]]:
    """(claim, scorer or "best", columns, "pretrained" or "all") of the blind rows."""
    crepe = list(field.COLUMNS["crepe-productivity"])
    return [("A cross-fitted text-only bigram model beats every pretrained checkpoint of the field on each CREPE type",
             "bigram", crepe, "pretrained"),
            ("The one-line negation rule beats all 202 checkpoints of the field on CREPE HN-Neg", "negation",
             ["crepe::negate"], "all"),
            ("A text-only scorer beats all 202 checkpoints of the field on SugarCrepe's add subsets", "best",
             ["sugarcrepe::add_obj", "sugarcrepe::add_att"], "all"),
            ("A text-only scorer beats all 202 checkpoints of the field on VALSE's existence piece", "best",
             ["valse::existence"], "all")]


def check_blind(placement: pd.DataFrame | None, table: pd.DataFrame | None = None) -> list[Check]:
    """The blind rows (:func:`_blind_claims`) from ``placement`` (:func:`crepe_utils.across.field.blind_placement`;
    None: no data). CREPE's numbers are on the released complexity files pooled, not the field's ``_all`` items:
    each row also says whether its claim survives the bound on the field's items."""
    table = field.table() if table is None else table
    pretrained = int((~table["fine_tuned"]).sum())
    out = []
    for claim, scorer, columns, among in _blind_claims():
        target = pretrained if among == "pretrained" else len(table)
        paper = f"{target} {'pretrained ' if among == 'pretrained' else ''}checkpoints"
        got = None if placement is None else placement[placement["column"].isin(columns)]
        if got is None or got.empty:
            data = "crepe" if columns[0].startswith("crepe::") else field.benchmark_of(columns[0]).split("-")[0]
            how = blind_analysis.HOW_TO_GET.get(data, f"`make data-{data}` fetches its released text")
            out.append(Check(claim, paper, "—", NEEDS, f"no released text for these columns ({how})", GROUP))
            continue
        got = got[got["scorer"] == scorer] if scorer != "best" else F.best_blind(got)
        beats = "beats_pretrained" if among == "pretrained" else "beats"
        ok = len(got) == len(columns) and bool((got[beats] == target).all())
        ours = "; ".join(f"{field.part(r.column)} {r.value:.2f} (blind:{r.scorer}, beats {getattr(r, beats)})"
                         for r in got.itertuples())
        bound = [f"{field.part(r.column)} ≥ {r.bound_low:.2f}, beats {getattr(r, beats + '_at_bound', r.beats_at_bound)}"
                 for r in got.itertuples() if r.field_n > r.n]
        detail = (f"exact 95% intervals: " + "; ".join(f"{field.part(r.column)} [{r.ci_low:.2f}, {r.ci_high:.2f}] "
                                                      f"of {r.n:,}" for r in got.itertuples()))
        if bound:
            detail += ("; on the released complexity files pooled, not the field's _all items; on those, were they "
                       "a superset: " + "; ".join(bound))
        out.append(Check(claim, paper, ours or "—", PASS if ok else FAIL, detail, GROUP))
    return out


def blind_runs(data_dirs: dict | None = None) -> dict:
    """The blind scorers' runs :func:`crepe_utils.across.field.blind_counts` takes, from each benchmark's folder
    (``data_dirs``: folder name → data folder; others their default); a message in place of each without data."""
    dirs = data_dirs or {}
    items = valse_analysis.items(dirs.get("valse"), "valid")
    return {"crepe": blind_analysis.crepe_run(dirs.get("crepe"), SCORERS),
            "sugarcrepe": blind_analysis.sugarcrepe_run(dirs.get("sugarcrepe"), SCORERS),
            "winoground": blind_analysis.winoground_table(dirs.get("winoground"), SCORERS),
            "valse": items if isinstance(items, str) else valse_analysis.blind_table(items, SCORERS)}


# ------------------------------------------------------------------ the topic

def field_sections(data_dirs: dict | None = None, runs: dict | None = None) -> dict[str, list[Check]]:
    """``granularity``, ``agreement``, ``scale`` (from the carried table and the pinned counts) and ``blind``
    (from ``runs``, :func:`blind_runs`' output, or computed from the data folders)."""
    table = field.table()
    gran = F.granularity(table)
    runs = blind_runs(data_dirs) if runs is None else runs
    counted = F.blind_counts(runs)
    placement = F.blind_placement(counted, table) if len(counted) else None
    return {"granularity": check_granularity(gran) + check_all_files(gran),
            "agreement": check_sugarcrepe_agreement(table=table) + check_winoground_agreement(F.winoground_agreement(table))
            + check_crepe_agreement(F.crepe_agreement(table)) + check_valse_average(F.valse_average(table)),
            "scale": check_papers_at_scale(F.paper_correlations(table)),
            "blind": check_blind(placement, table)}


def field_checks(data_dirs: dict | None = None, runs: dict | None = None) -> list[Check]:
    """Notebook 10's checks, and ``make check``'s field topic."""
    return [row for rows in field_sections(data_dirs, runs).values() for row in rows]


TOPICS = {"field": Topic(field_checks, "10_field")}
ORDER = (("field", "granularity"), ("field", "agreement"), ("field", "scale"), ("field", "blind"))


def sections(results_dir=None, data_dirs=None) -> dict[tuple[str, str], list[Check]]:
    """The field's sections for ``make check``: (topic, section) → rows."""
    return {("field", name): rows for name, rows in field_sections(data_dirs).items()}
