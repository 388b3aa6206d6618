"""SugarCrepe in vl_compo's table of the field (:class:`~crepe_utils.protocol.benchmark.FieldView`): its own results
table against the field's rows of the same checkpoints, in items, and its published r against ImageNet as a claim
to try at the field's scale.

``agreement``         per published checkpoint × subset: the paper's k of the N it fits, the field's k, the difference
``check_agreement``  one row for the checkpoints without a recorded explanation, one per explained checkpoint
``paper_claims``      its r of each subset against ImageNet, over its 17 models
"""
from __future__ import annotations

import numpy as np

from ...analysis.proportions import AGREE_ITEMS, counts, fits, printed_k
from ...claims.base import FAIL, PASS, SOURCES, Check
from ...models import imagenet
from ...protocol.benchmark import FieldView
from . import reported
from ...lazy import lazy

pd = lazy("pandas")


def agreement(view: FieldView, published: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per checkpoint of SugarCrepe's results table × subset: its published R@1 as k of the N it was computed on
    (the released count, or an earlier one it fits), the field's k of the released N, and the difference in items
    (field − published; NaN where the field lacks the checkpoint)."""
    rows_by_key = view.rows
    published = reported.results() if published is None else published
    published = published[published["imagenet_model"].astype(str) != ""]
    out = []
    for r in published.itertuples():
        column = f"sugarcrepe::{r.subset}"
        ns = [view.released[column]] + [n for _, n in view.alternatives.get(column, [])]
        paper_n = next((n for n in ns if printed_k(float(r.r1), int(r.decimals), n) is not None), None)
        paper_k = printed_k(float(r.r1), int(r.decimals), paper_n) if paper_n else None
        present = r.imagenet_model in rows_by_key.index
        value = float(rows_by_key.loc[r.imagenet_model, column]) if present else np.nan
        n = view.released[column]
        k = int(counts([value], n)[0]) if present and fits([value], n)[0] else None
        out.append({"checkpoint": r.imagenet_model, "name": f"{r.group} {r.model}", "subset": r.subset,
                    "paper_r1": float(r.r1), "paper_n": paper_n, "paper_k": paper_k, "in_field": present,
                    "field_r1": value, "field_n": n, "field_k": k,
                    "diff_items": k - paper_k if k is not None and paper_k is not None else np.nan})
    return pd.DataFrame(out)


def _cells(diffs) -> str:
    d = np.abs(np.asarray(diffs, dtype=float))
    return f"{int((d == 0).sum())} of {len(d)} cells identical, {int((d <= 1).sum())} within 1 item"


def _explained_row(key: str, g: pd.DataFrame, why, field_imagenet: float, group: str) -> Check:
    name = g["name"].iloc[0]
    worst = int(g["diff_items"].abs().max())
    claim = f"vl_compo's {name} agrees within {AGREE_ITEMS} items with SugarCrepe's published row"
    ours = "; ".join(f"{s} {int(d):+d}" for s, d in zip(g["subset"], g["diff_items"]))
    re_eval = imagenet.top1("open_clip_results_table").get(key, np.nan)
    detail = (f"explained ({why.evidence}): {why.explanation}; ImageNet {field_imagenet:.3f} in the table, "
              f"{re_eval:.2f} in open_clip's re-evaluation")
    return Check(claim, "7 subsets", ours, PASS if worst <= AGREE_ITEMS else SOURCES,
                 detail if worst > AGREE_ITEMS else f"within {AGREE_ITEMS} items", group)


def check_agreement(agree: pd.DataFrame, view: FieldView) -> list[Check]:
    """SugarCrepe's published checkpoints in the field, subset by subset in items: one row for those without a
    recorded explanation (``view.explanations``; pass when every one is within :data:`AGREE_ITEMS`), one row per
    explained checkpoint."""
    group = view.group
    why = view.explanations.set_index("checkpoint")
    present = agree[agree["in_field"]]
    claim = f"vl_compo's SugarCrepe values agree within {AGREE_ITEMS} items with SugarCrepe's own table"
    absent = list(dict.fromkeys(agree.loc[~agree["in_field"], "name"]))
    paper = f"{agree['checkpoint'].nunique()} checkpoints × 7 subsets"
    broken = present[present["paper_k"].isna() | present["field_k"].isna()]
    if present.empty or len(broken):
        what = "; ".join(f"{r.name} {r.subset}" for r in broken.itertuples()) or "no checkpoint in the field"
        return [Check(claim, paper, "—", FAIL, f"not k/N: {what}", group)]
    plain = present[~present["checkpoint"].isin(why.index)]
    worst = plain.groupby("name", sort=False)["diff_items"].apply(lambda d: d.abs().max())
    beyond = worst[worst > AGREE_ITEMS]
    ours = f"{len(worst) - len(beyond)} of {len(worst)} checkpoints; {_cells(plain['diff_items'])}"
    detail = (f"not in the field: {', '.join(absent)}; explained apart: {', '.join(why.index)}" +
              (f"; unexplained: {', '.join(f'{n} (up to {int(d)} items)' for n, d in beyond.items())}" if len(beyond) else ""))
    rows = [Check(claim, paper, ours, SOURCES if len(beyond) else PASS, detail, group)]
    for key in why.index:
        g = present[present["checkpoint"] == key]
        if len(g):
            rows.append(_explained_row(key, g, why.loc[key], float(view.rows.loc[key, view.imagenet]), group))
    return rows


def paper_claims() -> list[dict]:
    """Its published r of each subset against ImageNet, over its 17 models' checkpoints."""
    keys = list(dict.fromkeys(reported.results()["imagenet_model"]))
    return [{"paper": "SugarCrepe", "column": f"sugarcrepe::{r.subset}", "statistic": f"r of {r.subset}", "kind": "r",
             "value": float(r.pearson_r), "decimals": int(r.decimals), "models": 17, "checkpoints": keys}
            for r in reported.imagenet_r().itertuples()]


def blind_claims() -> list[tuple[str, str, list[str], str]]:
    """What the blind scorers reach among the field on SugarCrepe: (claim, scorer, columns, among which)."""
    return [("A text-only scorer beats all 202 checkpoints of the field on SugarCrepe's add subsets", "best",
             ["sugarcrepe::add_obj", "sugarcrepe::add_att"], "all")]
