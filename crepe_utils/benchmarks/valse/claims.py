"""VALSE's claims that its released data allow, checked: the valid set's size per piece, and that its existence
piece balances negation (the caption holds "no" about as often as the foil), the construction that keeps a
text-only rule at chance there.

Each function takes what it checks as arguments (defaults: the released data), so a test can hand it wrong
input and watch it fail.
"""
from __future__ import annotations

from ...claims.base import FAIL, NEEDS, PASS, Check, Topic
from . import analysis, reported

GROUP = "valse"


def check_counts(full, pinned: dict | None = None) -> list[Check]:
    """Items and valid items (``mturk.caption >= 2``) of every piece against the pinned counts of the release."""
    pinned = pinned if pinned is not None else reported.released_counts()
    claim = "VALSE's released pieces hold the pinned items, full and valid (mturk.caption >= 2)"
    if isinstance(full, str):
        return [Check(claim, f"{pinned['items']:,} / {pinned['valid']:,}", "—", NEEDS, full, GROUP)]
    table = analysis.counts_table(full)
    wrong = [f"{r.piece}: {r.full}/{r.valid}, pinned {pinned[f'items:{r.piece}']}/{pinned[f'valid:{r.piece}']}"
             for r in table.itertuples() if (r.full, r.valid) != (pinned[f"items:{r.piece}"], pinned[f"valid:{r.piece}"])]
    ours = f"{int(table['full'].sum()):,} / {int(table['valid'].sum()):,}"
    return [Check(claim, f"{pinned['items']:,} / {pinned['valid']:,}", ours, FAIL if wrong else PASS,
                  "; ".join(wrong) or f"{len(table)} pieces, each as pinned", GROUP)]


def check_existence_negation(valid) -> list[Check]:
    """Existence's foils add or remove "no" about equally often: the share of items whose caption (not its foil)
    holds the negation has a 95% interval that contains 50%, and so does ``blind:negation``'s accuracy."""
    claim = "VALSE's existence piece balances negation: a 'no'/'not' rule is at chance (95% interval holds 50%)"
    if isinstance(valid, str):
        return [Check(claim, "50%", "—", NEEDS, valid, GROUP)]
    bal = analysis.negation_balance(valid).set_index("piece").loc["existence"]
    k, n = int(bal["caption_only"]), int(bal["caption_only"] + bal["foil_only"])
    if n == 0:
        return [Check(claim, "50%", "—", FAIL, f"no existence item has the negation in exactly one of its "
                      f"{int(bal['n'])} caption-foil pairs: the piece is not built as released", GROUP)]
    low, high = analysis.exact_interval(k, n)
    rule = analysis.blind_table(valid, ("negation",)).set_index("piece").loc["existence"]
    ok = low <= 50 <= high and rule["ci_low"] <= 50 <= rule["ci_high"]
    return [Check(claim, "50%", f"{100 * k / n:.1f}% [{low:.1f}, {high:.1f}]", PASS if ok else FAIL,
                  f"caption holds the negation in {k} of {n} items where exactly one text does; blind:negation "
                  f"{rule['acc']:.1f}% [{rule['ci_low']:.1f}, {rule['ci_high']:.1f}] of {int(rule['n'])}", GROUP)]


def valse_sections(data_dir=None) -> dict[str, list[Check]]:
    """``data``: what the released JSONs allow (counts, the existence piece's balance)."""
    full, valid = analysis.items(data_dir, "full"), analysis.items(data_dir, "valid")
    return {"data": check_counts(full) + check_existence_negation(valid)}


def valse_checks(data_dir=None) -> list[Check]:
    """Notebook 09's checks."""
    return [row for rows in valse_sections(data_dir).values() for row in rows]


TOPICS = {"valse": Topic(valse_checks, "09_valse")}
ORDER = (("valse", "data"),)


def sections(results_dir=None, data_dirs=None) -> dict[tuple[str, str], list[Check]]:
    """VALSE's sections for ``make check``: (topic, section) → rows."""
    return {("valse", name): rows for name, rows in valse_sections((data_dirs or {}).get("valse")).items()}
