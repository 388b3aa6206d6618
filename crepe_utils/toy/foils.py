"""Hard negatives for the toy world, each verified false against its scene graph.

Candidates are built on the structure of a caption (:class:`~crepe_utils.toy.world.Caption`),
rendered to text, then *parsed back from the text* and evaluated on the scene by the semantic
checker (:func:`~crepe_utils.toy.world.holds`). Only texts that are false of the scene are kept;
string inequality is never taken as evidence.

=========  ===================================================================================
type       construction (CREPE §4.1, §4.2, app. A.4)
=========  ===================================================================================
HN-Atom    one atom replaced by another of its type: a shape by a shape, a colour by a colour,
           a size by a size, a relation by a relation
HN-Comp    two single-compound foils joined by "and", as in CREPE's released files ("a red
           brick paved sidewalk" → "a red mall and blue sidewalk"): a compound of the caption
           with one atom replaced, twice, each part false on its own. Parts of the same compound
           with different atoms replaced come first (that example), then parts of two compounds
HN-Swap    atoms of one type permuted within the caption: two shapes, two relations, or the
           colour (size) words of two mentions exchanged (a word may move to a mention without
           one). Single exchanges first; compositions of two, then three, only when needed
HN-Neg     one atom negated ("non-red", "non-circle", "not left of") or the whole caption
           ("there is no ...")
=========  ===================================================================================

:func:`pick_foils` keeps the verified-false candidates with distinct texts and draws the
requested number in the order above (shuffled within a tier by the caller's random generator).
:func:`verify_foil` and :func:`verify_positive` are the checks the builder and the tests apply to
every written row.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import replace

from ..errors import DataError

from .world import (ATTRIBUTES, RELATIONS, SHAPES, Caption, CaptionError, Clause, Mention, Scene, holds,
                    parse_caption, render_caption)


class FoilError(DataError):
    """A hard negative that is true of its scene (or not a caption), or a positive that is false."""


def verify_foil(text: str, scene: Scene) -> None:
    """Raise :class:`FoilError` unless ``text`` parses and is false of ``scene``."""
    try:
        true = holds(parse_caption(text), scene)
    except CaptionError as exc:
        raise FoilError(f"hard negative {text!r} is not a caption: {exc}") from None
    if true:
        raise FoilError(f"hard negative {text!r} is true of image {scene.image_id}")


def verify_positive(text: str, scene: Scene) -> None:
    """Raise :class:`FoilError` unless ``text`` parses and is true of ``scene``."""
    try:
        true = holds(parse_caption(text), scene)
    except CaptionError as exc:
        raise FoilError(f"caption {text!r} is not a caption: {exc}") from None
    if not true:
        raise FoilError(f"caption {text!r} is false of image {scene.image_id}")


def pick_foils(tiers: list[list[Caption]], scene: Scene, positive: str, k: int,
               rng: random.Random) -> list[str] | None:
    """``k`` distinct verified-false texts, earlier tiers first; ``None`` when there are fewer."""
    out: list[str] = []
    seen = {positive}
    for tier in tiers:
        texts = [render_caption(c) for c in tier]
        rng.shuffle(texts)
        for text in texts:
            if text in seen:
                continue
            seen.add(text)
            try:
                verify_foil(text, scene)
            except FoilError:
                continue
            out.append(text)
            if len(out) == k:
                return out
    return None


# ------------------------------------------------------------------------------ helpers

def _single_clause(caption: Caption) -> Clause:
    if len(caption.clauses) != 1:
        raise ValueError("hard negatives are built from one-clause captions")
    return caption.clauses[0]


def _with_mention(clause: Clause, i: int, mention: Mention) -> Clause:
    mentions = list(clause.mentions)
    mentions[i] = mention
    return replace(clause, mentions=tuple(mentions))


def _as_caption(clause: Clause) -> Caption:
    return Caption((clause,))


# ------------------------------------------------------------------------------ HN-Atom

def atom_foils(caption: Caption) -> list[Caption]:
    """Every caption with exactly one atom replaced by another atom of the same type."""
    clause = _single_clause(caption)
    out = []
    for i, m in enumerate(clause.mentions):
        out += [_with_mention(clause, i, replace(m, shape=s)) for s in SHAPES if s != m.shape]
        for kind, values in ATTRIBUTES.items():
            current = getattr(m, kind)
            if current is not None:
                out += [_with_mention(clause, i, replace(m, **{kind: v})) for v in values if v != current]
    for j, relation in enumerate(clause.relations):
        for r in RELATIONS:
            if r != relation:
                relations = list(clause.relations)
                relations[j] = r
                out.append(replace(clause, relations=tuple(relations)))
    return [_as_caption(c) for c in out]


# ------------------------------------------------------------------------------ HN-Comp

def _single_compound_foils(clause: Clause) -> list[tuple[tuple, int, Clause]]:
    """(compound id, replaced position, one-compound clause) for every compound of the clause."""
    out = []
    for i, m in enumerate(clause.mentions):
        for kind, values in ATTRIBUTES.items():
            attr = getattr(m, kind)
            if attr is None:
                continue
            compound = ("attribute-object", i, kind)
            out += [(compound, 0, Clause((Mention(m.shape, **{kind: v}),))) for v in values if v != attr]
            out += [(compound, 1, Clause((Mention(s, **{kind: attr}),))) for s in SHAPES if s != m.shape]
    for j, relation in enumerate(clause.relations):
        a, b = clause.mentions[j].shape, clause.mentions[j + 1].shape
        compound = ("object-relation-object", j)
        out += [(compound, 0, Clause((Mention(s), Mention(b)), (relation,))) for s in SHAPES if s != a]
        out += [(compound, 1, Clause((Mention(a), Mention(b)), (r,))) for r in RELATIONS if r != relation]
        out += [(compound, 2, Clause((Mention(a), Mention(s)), (relation,))) for s in SHAPES if s != b]
    return out


def comp_foil_tiers(caption: Caption, scene: Scene) -> list[list[Caption]]:
    """HN-Comp candidates: [same-compound pairs, pairs across compounds], parts false on their own."""
    parts = [p for p in _single_compound_foils(_single_clause(caption))
             if not holds(_as_caption(p[2]), scene)]
    same, across = [], []
    for (c1, pos1, a), (c2, pos2, b) in itertools.combinations(parts, 2):
        if c1 == c2 and pos1 == pos2:
            continue
        # the part keeping the compound's first atom is written first
        first, second = (a, b) if pos1 >= pos2 else (b, a)
        (same if c1 == c2 else across).append(Caption((first, second)))
    return [same, across]


# ------------------------------------------------------------------------------ HN-Swap

def _transpositions(clause: Clause) -> list[Clause]:
    """Every exchange of two atoms of one type (shapes, colours, sizes, relations)."""
    out = []
    n = len(clause.mentions)
    for i, j in itertools.combinations(range(n), 2):
        mi, mj = clause.mentions[i], clause.mentions[j]
        for kind in ("shape", "colour", "size"):
            if getattr(mi, kind) != getattr(mj, kind):
                swapped = _with_mention(clause, i, replace(mi, **{kind: getattr(mj, kind)}))
                out.append(_with_mention(swapped, j, replace(mj, **{kind: getattr(mi, kind)})))
    for i, j in itertools.combinations(range(len(clause.relations)), 2):
        if clause.relations[i] != clause.relations[j]:
            relations = list(clause.relations)
            relations[i], relations[j] = relations[j], relations[i]
            out.append(replace(clause, relations=tuple(relations)))
    return out


def swap_foil_tiers(caption: Caption, max_depth: int = 3) -> list[list[Caption]]:
    """HN-Swap candidates by number of exchanges: [one exchange, two, ..., ``max_depth``]."""
    clause = _single_clause(caption)
    seen = {clause}
    frontier = [clause]
    tiers = []
    for _ in range(max_depth):
        nxt = []
        for c in frontier:
            for t in _transpositions(c):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        tiers.append([_as_caption(c) for c in nxt])
        frontier = nxt
    return tiers


# ------------------------------------------------------------------------------ HN-Neg

def negation_foils(caption: Caption) -> list[Caption]:
    """One atom negated (``non-`` word, ``not`` relation), or the whole caption (``there is no``)."""
    clause = _single_clause(caption)
    out = [replace(clause, negated=True)]
    for i, m in enumerate(clause.mentions):
        for kind in ("shape", "colour", "size"):
            if getattr(m, kind) is not None:
                out.append(_with_mention(clause, i, replace(m, negated=m.negated | {kind})))
    for j in range(len(clause.relations)):
        out.append(replace(clause, negated_relations=clause.negated_relations | {j}))
    return [_as_caption(c) for c in out]
