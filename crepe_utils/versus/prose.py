"""The "Is it better?" notebook's sentences, each built from the numbers shown beside it (a comparison's rows, the
paired-against-independent table, a standing's rows): every number and direction word comes from those values."""
from __future__ import annotations


from .. import escaping
from ..analysis.prose import count, how_many, interval, num
from .pairing import POOLED, p_text


def _name(model: str) -> str:
    return f"`{escaping.visible(model)}`"


def comparison(result) -> str:
    """The pooled difference, its interval and p; how many sets the paired interval puts on either side of zero."""
    pooled = result.pooled
    sets = result.sets[result.sets["n_paired"] > 0]
    above, below = sets["diff_ci_low"] > 0, sets["diff_ci_high"] < 0
    if not pooled["n_paired"]:
        return f"{_name(result.b)} and {_name(result.a)} share no query: nothing can be compared."
    d = pooled["diff_pp"]
    verdict = ("B is better" if pooled["diff_ci_low"] > 0 else "A is better" if pooled["diff_ci_high"] < 0
               else "the interval holds zero: neither is shown better")
    text = (f"Pooled over {count(int(pooled['n_paired']))} paired queries ({escaping.markdown(result.pooled_means)}), "
            f"{_name(result.b)} (B) minus {_name(result.a)} (A) is {num(d, signed=True)} points, 95% interval "
            f"{interval(pooled['diff_ci_low'], pooled['diff_ci_high'], signed=True)}, exact McNemar p "
            f"{p_text(pooled['p_value'])} ({count(int(pooled['only_b']))} queries only B gets right, "
            f"{count(int(pooled['only_a']))} only A): {verdict}.")
    if len(sets):
        text += (f" Set by set, the paired interval lies above zero in {how_many(above, 'set')} and below it in "
                 f"{int(below.sum())}; after Holm's adjustment {int((sets['p_holm'] < 0.05).sum())} of "
                 f"{len(sets)} sets have p < 0.05.")
    if pooled["n_unpaired"]:
        text += f" {count(int(pooled['n_unpaired']))} queries are in one run only and are left out of the pairs."
    return text


def both_ways(table, which: str = POOLED) -> str:
    """The same difference, paired and independent: the widths, which excludes zero, the queries the independent
    designs would need (the row ``which``: its label)."""
    rows = table[table["label"] == which]
    if rows.empty:
        return ""
    r = rows.iloc[0]
    paired_says = "excludes zero" if r["paired_excludes_zero"] else "holds zero"
    indep_excludes = r["independent_low"] > 0 or r["independent_high"] < 0
    overlap = "overlap" if r["own_intervals_overlap"] else "do not overlap"
    return (f"On the {escaping.markdown(which)} row the difference is {num(r['diff_pp'], signed=True)} points over "
            f"{count(int(r['n_paired']))} queries. Paired, its interval "
            f"{interval(r['diff_ci_low'], r['diff_ci_high'], signed=True)} is {num(r['paired_width'])} points wide "
            f"and {paired_says}; treated as two independent samples, the interval "
            f"{interval(r['independent_low'], r['independent_high'], signed=True)} is {num(r['independent_width'])} "
            f"points wide and {'excludes' if indep_excludes else 'holds'} zero, and the two models' own intervals "
            f"({interval(r['a_low'], r['a_high'])} and {interval(r['b_low'], r['b_high'])}) {overlap}. To be as "
            f"narrow without pairing, the difference would need about {count(int(r['queries_to_match']))} queries "
            f"({num(r['width_ratio'] ** 2)} times as many); for the two own intervals to part as decisively, about "
            f"{count(int(r['queries_to_separate']))}.")


def gains(table) -> str:
    """Across the rows: the range of the factor of queries pairing saves, against the independent difference and
    against two own intervals."""
    if table.empty:
        return ""
    factor = table["width_ratio"] ** 2
    own = table["queries_to_separate"] / table["n_paired"]
    return (f"Across the {len(table)} rows, an independent design needs {num(factor.min())} to {num(factor.max())} "
            f"times the queries for an interval as narrow as the paired one, and comparing two own intervals "
            f"{num(own.min())} to {num(own.max())} times.")


def standing(result) -> str:
    """Per column, the models given: their value, how many checkpoints are below, and the best blind scorer given."""
    parts = []
    for r in result.models.to_dict("records"):
        blind = (f"; the best blind scorer given, {_name(r['blind_best'])}, has {num(r['blind_best_value'])}"
                 if r["blind_best"] else "")
        parts.append(f"On `{escaping.visible(r['column'])}`, {_name(r['model'])} has {num(r['model_value'])} "
                     f"({count(int(r['model_k']))} of {count(int(r['model_n']))}), above "
                     f"{r['field_below']} of the {r['field_n']} checkpoints (the best: {num(r['field_best_value'])})"
                     f"{blind}.")
    if not parts:
        return "No model (other than blind scorers) was given."
    return " ".join(parts)


def missing_line(missing: dict[str, str]) -> str:
    """What this run could not show, and why: one line per part (empty when nothing is missing)."""
    if not missing:
        return "Every part of this notebook has its data."
    return "Not shown in this run: " + " ".join(f"**{escaping.markdown(k)}**: {v}" for k, v in missing.items())
