"""Winoground in vl_compo's table of the field (:class:`~crepe_utils.protocol.benchmark.FieldView`): Table 3's CLIP
row against the field's row of the same checkpoint, in examples.

``agreement``         per score: Table 3's k and the field's k of the 400 examples, and their difference
``check_agreement``  the agreement as a claim, within two examples
"""
from __future__ import annotations

import numpy as np

from ...analysis.proportions import AGREE_ITEMS, counts, fits, printed_k
from ...claims.base import FAIL, PASS, SOURCES, Check
from ...protocol.benchmark import FieldView
from . import TABLE_COLUMNS, reported, roster
from ...lazy import lazy

pd = lazy("pandas")


def agreement(view: FieldView, table3: pd.DataFrame | None = None, name: str = "CLIP (ViT-B/32)") -> pd.DataFrame:
    """Table 3's ``name`` row against the field's row of the same checkpoint: per score, both as k of the 400
    examples and the difference in examples."""
    rows_by_key = view.rows
    table3 = reported.table3() if table3 is None else table3
    key = roster.TABLE3_CHECKPOINTS[name]
    paper = table3.set_index("model").loc[name]
    out = []
    for column in TABLE_COLUMNS.columns:
        metric = column.split("::", 1)[1]
        n = view.released[column]
        value = float(rows_by_key.loc[key, column]) if key in rows_by_key.index else np.nan
        k_paper = printed_k(float(paper[metric]), 2, n)
        k = int(counts([value], n)[0]) if fits([value], n)[0] else None
        out.append({"checkpoint": key, "metric": metric, "paper": float(paper[metric]), "paper_k": k_paper,
                    "field": value, "field_k": k, "n": n,
                    "diff_examples": k - k_paper if k is not None and k_paper is not None else np.nan})
    return pd.DataFrame(out)


def check_agreement(agree: pd.DataFrame, view: FieldView | None = None) -> list[Check]:
    """Table 3's CLIP (ViT-B/32) row against the field's OpenAI ViT-B/32, in examples."""
    group = view.group if view is not None else "field"
    claim = f"vl_compo's OpenAI ViT-B/32 agrees within {AGREE_ITEMS} examples with Winoground Table 3's CLIP row"
    paper = " / ".join(f"{v:.2f}" for v in agree["paper"]) + " (text / image / group)"
    if agree["field_k"].isna().any() or agree["paper_k"].isna().any():
        return [Check(claim, paper, "—", FAIL, "a value that is not k/400", group)]
    ours = " / ".join(f"{v:.2f}" for v in agree["field"]) + " (" + ", ".join(
        f"{int(d):+d}" for d in agree["diff_examples"]) + " examples)"
    worst = int(agree["diff_examples"].abs().max())
    detail = (f"{' / '.join(f'{int(v):,}' for v in agree['paper_k'])} against "
              f"{' / '.join(f'{int(v):,}' for v in agree['field_k'])} of {int(agree['n'].iloc[0])} examples; "
              "Winoground does not publish how it scored CLIP (preprocessing, precision), which could explain a few "
              "examples")
    return [Check(claim, paper, ours, SOURCES if worst > AGREE_ITEMS else PASS, detail, group)]
