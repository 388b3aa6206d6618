"""Sentences built from the values they describe, so a notebook's prose cannot drift from its tables.

Every number and every direction word ("gains", "falls", "every model", "most") that a notebook's prose
states is rendered here from the values it is about: a count becomes "all 7 models" or "5 of the 7
models" from the mask it counts, a change becomes "gains" or "loses" from its sign, a range is the
smallest and largest value shown. Notebooks display these strings as Markdown outputs; their static
Markdown holds no number and no direction word that is not a cited published value
(``tests/test_prose.py`` checks every executed notebook).
"""
from __future__ import annotations

import math
from collections.abc import Iterable

MINUS = "−"   # U+2212, as the tables' Markdown prints a negative number in prose


def num(value: float, nd: int = 2, signed: bool = False) -> str:
    """``value`` with ``nd`` decimals (thousands separated; a true minus sign; ``+`` when ``signed``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    text = f"{abs(float(value)):,.{nd}f}"
    if float(text.replace(",", "")) == 0:
        return text
    return (MINUS if value < 0 else "+" if signed else "") + text


def count(value: int) -> str:
    """An integer count, thousands separated."""
    return f"{int(value):,}"


def span(values: Iterable[float], nd: int = 2, signed: bool = False, sep: str = " to ") -> str:
    """"a to b" for the smallest and largest of ``values`` (one value when they are equal)."""
    vals = [float(v) for v in values if not (isinstance(v, float) and math.isnan(v))]
    if not vals:
        return "—"
    lo, hi = num(min(vals), nd, signed), num(max(vals), nd, signed)
    return lo if lo == hi else f"{lo}{sep}{hi}"


def interval(low: float, high: float, nd: int = 2, signed: bool = False) -> str:
    """A confidence interval as "[low, high]"."""
    return f"[{num(low, nd, signed)}, {num(high, nd, signed)}]"


def listing(items: Iterable[str], conjunction: str = "and") -> str:
    """"a", "a and b", "a, b and c"."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}"


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    return singular if n == 1 else (plural_form or singular + "s")


def how_many(mask: Iterable[bool], noun: str, plural_form: str | None = None) -> str:
    """"all 7 models", "none of the 7 models", "5 of the 7 models", "the one model" from a boolean mask."""
    flags = [bool(m) for m in mask]
    k, n = sum(flags), len(flags)
    nouns = plural(n, noun, plural_form)
    if n == 0:
        return f"no {plural_form or noun + 's'}"
    if n == 1:
        return f"the one {noun}" if k else f"not the one {noun}"
    if k == n:
        return f"all {n} {nouns}"
    if k == 0:
        return f"none of the {n} {nouns}"
    return f"{k} of the {n} {nouns}"


def change(delta: float, up: str = "gains", down: str = "loses", flat: str = "does not change",
           nd: int = 2) -> str:
    """A verb and its size from the sign of ``delta``: "loses 6.28 points", "gains 2.51 points"."""
    if round(float(delta), nd) == 0:
        return flat
    size = num(abs(delta), nd)
    return f"{up if delta > 0 else down} {size} {'point' if size == num(1, nd) else 'points'}"


def pct(row, digits: int = 1) -> str:
    """``r1`` with its 95% interval, from a row with ``r1``, ``ci_low``, ``ci_high``: "57.6% [55.2, 60.0]"."""
    return f"{row['r1']:.{digits}f}% [{row['ci_low']:.{digits}f}, {row['ci_high']:.{digits}f}]"


def pct_span(values) -> str:
    """The range of percentages, one decimal: "57.6-73.8%", or one value when both ends print alike."""
    lo, hi = float(min(values)), float(max(values))
    return f"{lo:.1f}%" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}-{hi:.1f}%"


def count_span(values) -> str:
    """The range of counts: "3-7", or one count when both ends are equal."""
    lo, hi = int(min(values)), int(max(values))
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def beats(value: float, other: float) -> str:
    """Where ``value`` lies against ``other``: "above", "equal to" or "below"."""
    return "above" if value > other else "equal to" if value == other else "below"
