"""CREPE in vl_compo's table of the field (:class:`~crepe_utils.protocol.benchmark.FieldView`): the paper's n = 4 and
n = 12 values against the field's pooled ones, the N the field pooled (the archive's ``_all`` files), what pooling
does to that test, and §5.4's R² of HN-Swap against ImageNet as a claim to try at the field's scale.

``agreement``          per checkpoint in both × HN type: the paper's k at n = 4 and 12 against the field's pooled k
``rank_agreement``     per HN type: how many lie between, how many are feasible, Spearman's ρ (descriptive)
``lattice_power``      the granularity test on simulated tables, averaged over files or pooled
``check_agreement``    the agreement as a claim (weak: other items, other aggregation)
``check_granularity_of_parts``  the field's N of each type is the archive's ``_all`` file's row count
``paper_claims``       §5.4's R² of HN-Swap at n = 4, 8, 12 over the paper's seven open_clip models
"""
from __future__ import annotations

import numpy as np

from ...analysis.proportions import counts, fits, printed_k, smallest_denominator
from ...claims.base import FAIL, NEEDS, PASS, SOURCES, Check
from ...protocol.benchmark import FieldView
from . import PRODUCTIVITY_COLUMNS, reported, roster
from ...lazy import lazy

pd = lazy("pandas")
stats = lazy("scipy.stats")

COLUMNS = PRODUCTIVITY_COLUMNS.columns


def agreement(view: FieldView, published: pd.DataFrame | None = None,
              table_n: dict[str, int] | None = None) -> pd.DataFrame:
    """Per checkpoint in both CREPE's productivity table and the field × HN type: the paper's R@1 at n = 4 and 12
    (with k of those files), the field's pooled value (k of its N: ``table_n``, default its smallest common N),
    whether it lies between the two, and whether k_4 + k_12 ≤ k ≤ k_4 + k_12 + (N − N_4 − N_12): what holds if the
    field's items contain the released n = 4 and n = 12 files."""
    rows_by_key = view.rows
    published = reported.productivity() if published is None else published
    files = reported.released_productivity_queries()
    table_n = table_n or {c: smallest_denominator(view.table[c]) for c in COLUMNS}
    out = []
    for key in [k for k in roster.model_order() if k in rows_by_key.index]:
        for c in COLUMNS:
            hn = c.split("::", 1)[1]
            pub = published[(published["model"] == key) & (published["hn_type"] == hn)].set_index("complexity")["r1"]
            n4, n12, n = files[(hn, 4)], files[(hn, 12)], table_n[c]
            k4, k12 = printed_k(float(pub[4]), 2, n4), printed_k(float(pub[12]), 2, n12)
            value = float(rows_by_key.loc[key, c])
            k = int(counts([value], n)[0]) if n and fits([value], n)[0] else None
            out.append({"checkpoint": key, "hn_type": hn, "paper_n4": float(pub[4]), "paper_n12": float(pub[12]),
                        "k4": k4, "k12": k12, "field": value, "field_k": k, "field_n": n,
                        "between": min(pub[4], pub[12]) <= value <= max(pub[4], pub[12]),
                        "feasible": None if None in (k, k4, k12) else k4 + k12 <= k <= k4 + k12 + n - n4 - n12})
    return pd.DataFrame(out)


def rank_agreement(agreement: pd.DataFrame) -> pd.DataFrame:
    """Per HN type: Spearman's ρ over the shared checkpoints, field's pooled value against the paper's n = 4 and
    against its n = 12 (descriptive: other items, other aggregation)."""
    rows = []
    for hn, g in agreement.groupby("hn_type", sort=False):
        rows.append({"hn_type": hn, "checkpoints": len(g), "between": int(g["between"].sum()),
                     "feasible": int(g["feasible"].fillna(False).sum()),
                     "spearman_n4": float(stats.spearmanr(g["field"], g["paper_n4"]).statistic),
                     "spearman_n12": float(stats.spearmanr(g["field"], g["paper_n12"]).statistic)})
    return pd.DataFrame(rows)


def lattice_power(table: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per CREPE type: the granularity test on two simulated tables of ``table``'s rows at the field's own rates,
    drawn on the released complexity files: the mean over the nine files of k_i/N_i (what "averaged over
    complexities" would print), and Σk_i/ΣN_i (pooled). The pooled table recovers ΣN; the averaged one fits no N."""
    files = reported.released_productivity_queries()
    rng = np.random.default_rng(seed)
    rows = []
    for c in COLUMNS:
        ns = np.array([rows_ for (t, _), rows_ in sorted(files.items()) if t == c.split("::", 1)[1]])
        p = np.clip(table[c].to_numpy(float) / 100, 0.01, 0.99)
        k = rng.binomial(ns[None, :], p[:, None])
        rows.append({"column": c, "released_sum": int(ns.sum()),
                     "averaged_common_n": smallest_denominator(100 * (k / ns).mean(axis=1)),
                     "pooled_common_n": smallest_denominator(100 * k.sum(axis=1) / ns.sum())})
    return pd.DataFrame(rows)


def check_agreement(agree: pd.DataFrame, view: FieldView | None = None) -> list[Check]:
    """CREPE's n = 4 and n = 12 values against the field's pooled ones for the checkpoints in both: every cell
    within the k bounds that hold if the field's items contain those two files (pass), or not (the sources
    disagree); with the weak comparisons (between the two, Spearman) in the detail."""
    group = view.group if view is not None else "field"
    claim = ("vl_compo's pooled CREPE values are consistent with its items containing the released n = 4 and "
             "n = 12 files")
    paper = f"CREPE's n = 4 and n = 12 R@1, {agree['checkpoint'].nunique()} checkpoints × 3 types"
    if agree.empty or agree["feasible"].isna().any():
        return [Check(claim, paper, "—", FAIL, "a value that is not k/N, or no checkpoint in both", group)]
    ranks = rank_agreement(agree)
    ok = int(agree["feasible"].sum())
    detail = ("; ".join(f"{r.hn_type}: between n = 4 and 12 for {r.between} of {r.checkpoints}, Spearman "
                        f"{r.spearman_n4:+.2f} (n = 4) / {r.spearman_n12:+.2f} (n = 12)" for r in ranks.itertuples())
              + ". Weak: the field pools every complexity over more items; CyCLIP, FLAVA and ALBEF are not open_clip "
              "rows of the field")
    return [Check(claim, paper, f"{ok} of {len(agree)} cells", PASS if ok == len(agree) else SOURCES, detail, group)]


def check_granularity_of_parts(gran: pd.DataFrame, view: FieldView | None = None,
                       all_rows: dict[str, int] | None = None) -> list[Check]:
    """Per CREPE type (``gran``: the granularity rows of its columns): the table's N is the row count of the
    archive's ``prod_vg_hard_negs_{type}_all.csv``, the file beside the nine complexity files (pass where that count
    is pinned and equal, fail where it differs, ``needs data`` where it is not pinned: the inference rests on the
    swap file)."""
    all_rows = reported.released_all_rows() if all_rows is None else all_rows
    group = view.group if view is not None else "field"
    out = []
    for r in gran[gran["column"].isin(COLUMNS)].itertuples():
        hn = r.column.split("::", 1)[1]
        name = f"prod_vg_hard_negs_{hn}_all.csv"
        claim = f"vl_compo pooled CREPE's {hn} hard negatives over the archive's {name}"
        found = bool(pd.notna(r.common_n) and r.common_n)
        ours = f"N = {int(r.common_n):,} ({int(r.fits_common)} of {int(r.values)} values)" if found else "no N"
        if not found or r.fits_common < r.values:
            out.append(Check(claim, "its row count", ours, FAIL, "the values are not k/N for one N", group))
        elif hn in all_rows:
            ok = int(r.common_n) == all_rows[hn]
            out.append(Check(claim, f"{all_rows[hn]:,} rows", ours, PASS if ok else FAIL,
                             (f"established: the table's N is the file's row count, {int(r.common_n) - int(r.released_n):+,}"
                              f" against the nine complexity files ({int(r.released_n):,}), which it is not the "
                              "concatenation of") if ok else "the table's N is not the file's row count", group))
        else:
            out.append(Check(claim, "its row count (not pinned)", ours, NEEDS,
                             f"inferred: N is {int(r.common_n) - int(r.released_n):+,} against the nine complexity "
                             f"files, as the swap file's count is against its nine; {name} is in CREPE's archive but "
                             "not in the released data read here, so its row count is not pinned", group))
    return out


def paper_claims() -> list[dict]:
    """§5.4's R² of HN-Swap against ImageNet at n = 4, 8 and 12, over the paper's seven open_clip checkpoints: each
    as the field's comparison takes it (the field pools HN-Swap over every complexity)."""
    claims = reported.claims().set_index("claim_id")
    return [{"paper": "CREPE §5.4", "column": "crepe::swap", "statistic": f"R² of HN-Swap at n = {n}", "kind": "r2",
             "value": float(claims.loc[f"r2_swap_{n}", "value"]), "decimals": 2, "models": 7,
             "checkpoints": list(roster.SYSTEMATICITY_MODELS)} for n in (4, 8, 12)]


def blind_claims() -> list[tuple[str, str, list[str], str]]:
    """What the blind scorers reach among the field on CREPE: (claim, scorer, columns, among which checkpoints)."""
    return [("A cross-fitted text-only bigram model beats every pretrained checkpoint of the field on each CREPE type",
             "bigram", list(COLUMNS), "pretrained"),
            ("The one-line negation rule beats all 202 checkpoints of the field on CREPE HN-Neg", "negation",
             ["crepe::negate"], "all")]
