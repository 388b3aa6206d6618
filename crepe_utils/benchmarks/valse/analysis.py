"""VALSE's tables: items per piece (full and valid), the text-only scorers per piece with exact intervals and their
ties, and the properties of the text that decide what a text-only scorer can get (what VALSE balanced).

Every number is computed from the released JSONs (:mod:`.data`); intervals are exact binomial (Clopper–Pearson)
95% intervals of k wins in N items. A text-only scorer wins an item only when the caption's score is strictly
above the foil's: a tie (the two texts read the same to it) counts against, as every model's does, and is shown.
"""
from __future__ import annotations

import re

import numpy as np

from ... import blind
from ...analysis import uncertainty
from .data import PIECES, PIECE_NAMES, Items, load_items
from .datasets import VALSE_JSONS
from ...lazy import lazy

pd = lazy("pandas")

#: the text-only scorers run per piece: the fixed rules and the cross-fitted bigram, summed and per word (a foil one
#: word longer than its caption, as existence's "no" makes half of them, is less probable summed for that alone)
SCORERS = ("negation", "length", "wordfreq", "bigram", "bigram-mean")
_NEGATION = re.compile(r"(?<![a-z])(no|not)(?![a-z])")
_NUMBER = re.compile(r"\d+")


def items(data_dir=None, subset: str = "valid") -> Items | str:
    """Every piece's items, or one line saying why there are none (no data folder: how to get it)."""
    folder = VALSE_JSONS.existing(data_dir)
    if folder is None:
        return f"No VALSE data in {VALSE_JSONS.dir()}: `make data-valse` fetches its JSONs (6 MB)."
    return load_items(folder, PIECE_NAMES, subset)


def exact_interval(k: int, n: int) -> tuple[float, float]:
    """The exact (Clopper–Pearson) 95% interval of a rate of k in n, in percent; (nan, nan) for n = 0."""
    return uncertainty.clopper_pearson_or_nan(k, n)


def counts_table(full: Items) -> pd.DataFrame:
    """Items per piece: the full set, the valid set, the valid share, and texts identical to their foil."""
    rows = []
    for p in PIECES:
        n = sum(i.piece == p.name for i in full)
        valid = sum(i.piece == p.name and i.valid for i in full)
        identical = sum(i.piece == p.name and i.caption == i.foil for i in full)
        rows.append({"piece": p.name, "phenomenon": p.phenomenon, "instrument": p.instrument, "full": n,
                     "valid": valid, "valid_pct": 100 * valid / n if n else float("nan"),
                     "identical_texts": identical, "identical_valid": sum(i.piece == p.name and i.valid and
                                                                          i.caption == i.foil for i in full)})
    return pd.DataFrame(rows)


def _wins(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item (two scores, caption first): caption strictly above, and tied."""
    pairs = scores.reshape(-1, 2)
    return pairs[:, 0] > pairs[:, 1], pairs[:, 0] == pairs[:, 1]


def blind_table(selected: Items, scorers=SCORERS, settings=blind.BlindSettings()) -> pd.DataFrame:
    """Each text-only scorer on each piece: N, wins, ties, pairwise accuracy (%) with its exact interval.

    The cross-fitted scorers are fitted over all the pieces given (folds by image), as every benchmark's are."""
    pieces = np.array([i.piece for i in selected])
    rows = []
    for name in scorers:
        win, tie = _wins(blind.score(name, selected.items, settings))
        for piece in PIECE_NAMES:
            mask = pieces == piece
            n, k = int(mask.sum()), int(win[mask].sum())
            low, high = exact_interval(k, n)
            rows.append({"scorer": f"blind:{name}", "piece": piece, "n": n, "wins": k, "ties": int(tie[mask].sum()),
                         "acc": 100 * k / n if n else float("nan"), "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows)


def _has_negation(text: str) -> bool:
    return bool(_NEGATION.search(text.lower()))


def negation_balance(selected: Items) -> pd.DataFrame:
    """Per piece: items whose caption holds "no"/"not" and its foil not, the reverse, both, neither."""
    rows = []
    for piece in PIECE_NAMES:
        got = [(_has_negation(i.caption), _has_negation(i.foil)) for i in selected if i.piece == piece]
        rows.append({"piece": piece, "n": len(got), "caption_only": sum(c and not f for c, f in got),
                     "foil_only": sum(f and not c for c, f in got), "both": sum(c and f for c, f in got),
                     "neither": sum(not c and not f for c, f in got)})
    return pd.DataFrame(rows)


def larger_number_wins(selected: Items, piece: str) -> dict[str, int]:
    """The rule "the text with the larger number is the caption" on one piece: wins, losses, ties, N (items whose
    two texts hold one number each)."""
    out = {"n": 0, "wins": 0, "losses": 0, "ties": 0}
    for i in selected:
        if i.piece != piece:
            continue
        a, b = _NUMBER.findall(i.caption), _NUMBER.findall(i.foil)
        if len(a) != 1 or len(b) != 1:
            continue
        out["n"] += 1
        x, y = int(a[0]), int(b[0])
        out["wins" if x > y else "losses" if x < y else "ties"] += 1
    return out


def negation_share(label: str, pairs) -> dict:
    """Of the (caption, other text) ``pairs`` where exactly one text holds "no"/"not": how many, and the share (with
    its exact interval) where it is the caption: 50% for a set that puts the negation on either side equally."""
    marks = [(_has_negation(c), _has_negation(o)) for c, o in pairs]
    k = sum(c and not o for c, o in marks)
    n = k + sum(o and not c for c, o in marks)
    low, high = exact_interval(k, n)
    return {"set": label, "pairs": len(marks), "n": n, "k": k, "caption_share": 100 * k / n if n else float("nan"),
            "ci_low": low, "ci_high": high}


def negation_shares(selected: Items) -> pd.DataFrame:
    """:func:`negation_share` for every piece in which a negation word appears at all."""
    rows = [negation_share(piece, [(i.caption, i.foil) for i in selected if i.piece == piece]) for piece in PIECE_NAMES]
    return pd.DataFrame([r for r in rows if r["n"]])


def published_sentence(results: pd.DataFrame) -> str:
    """What the published averages (:func:`..reported.results`) say, from their values: the highest pairwise
    accuracy, CLIP's, and how close the paper's text-only baselines (GPT-1, GPT-2) come to CLIP's. Needs no data."""
    pairwise = results[results["metric"] == "acc_r"].sort_values("value", ascending=False)
    top = pairwise.iloc[0]
    clip = float(pairwise.loc[pairwise["model"] == "CLIP", "value"].iloc[0])
    text_only = pairwise[pairwise["model"].str.startswith("GPT")]
    return (f"The highest average pairwise accuracy is {top['model']}'s ({top['value']:.1f}); CLIP's is {clip:.1f}, "
            "and the paper's text-only baselines, "
            + " and ".join(f"{r.model} ({r.value:.1f})" for r in text_only.itertuples())
            + f", come within {clip - text_only['value'].max():.1f} points of CLIP's average.")
