"""The toy world: vocabulary, scene graphs, pictures, captions and what a caption means.

Atoms and compounds are CREPE's (§3.1), on a world small enough to know completely:

=============  ==========================================================================
atom type      values
=============  ==========================================================================
object         circle, square, triangle, cross
attribute      colour: red, green, blue, yellow, purple; size: small, large
relation       left of, right of, above, below
=============  ==========================================================================

Compounds are attribute-object pairs (``"red circle"``, ``"small cross"``) and
object-relation-object triples (``"circle left of square"``), written as these strings.

**Scenes.** A scene graph is a set of objects, each with a shape, a colour, a size and its own
cell of a 2 × 2 grid (so at most four objects; large cells keep each shape several of the toy
model's 8-pixel patches wide). Relations are properties of the cells: *a* is left of *b* when
*a*'s column is smaller, above *b* when its row is smaller (right of and below are the converses).
Any two objects are therefore related, and a triple and its converse (``"circle left of
square"``, ``"square right of circle"``) describe the same picture. Scenes are drawn with PIL:
flat shapes on a light background, small or large, centred in their cells.

**Captions.** A caption is one or more clauses joined by ``" and "``; a clause is a chain of
mentions linked by relations, the later links introduced by ``", which is"``::

    a large red circle left of a small blue square, which is above a green triangle
    a red square and a green circle                      (two clauses: an HN-Comp foil)
    a red circle not left of a non-blue square           (negated relation and attribute)
    there is no large red circle left of a square        (negated clause)

A mention is ``a [size] [colour] shape``; ``non-`` negates one of its words and ``not`` a
relation. :func:`render_caption` and :func:`parse_caption` convert between the text and a
:class:`Caption`; the parser accepts exactly the rendered language, so a text round-trips.

**Meaning** (:func:`holds`). Every mention (``a ...``) denotes its own object: the mentions of
all positive clauses need one injective assignment to scene objects under which every mention
matches its object and every link's relation holds (or, negated, does not). A clause starting
with ``there is no`` is true when no injective assignment satisfies it. This is the semantic
checker that verifies every positive (true) and every hard negative (false) of the toy world.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from PIL import Image, ImageDraw

from ..errors import DataError

SHAPES = ("circle", "square", "triangle", "cross")
COLOURS = ("red", "green", "blue", "yellow", "purple")
SIZES = ("small", "large")
RELATIONS = ("left of", "right of", "above", "below")
CONVERSE = {"left of": "right of", "right of": "left of", "above": "below", "below": "above"}

#: attribute kind → its values (both kinds are CREPE "attribute" atoms)
ATTRIBUTES = {"colour": COLOURS, "size": SIZES}
GRID = 2

RGB = {"red": (214, 39, 40), "green": (44, 160, 44), "blue": (31, 88, 220),
       "yellow": (236, 200, 20), "purple": (148, 62, 189)}
BACKGROUND = (235, 235, 235)
#: half the extent of a shape, as a fraction of the grid cell
HALF_EXTENT = {"small": 0.22, "large": 0.42}
NEGATION_PREFIX = "non-"


class CaptionError(DataError):
    """A text that is not a caption of the toy world's language."""


# ------------------------------------------------------------------------------ scene graphs

@dataclass(frozen=True)
class SceneObject:
    shape: str
    colour: str
    size: str
    row: int
    col: int
    dx: int = 0          #: pixel offset of the shape from its cell's centre
    dy: int = 0

    def box(self, image_size: int) -> tuple[int, int, int, int]:
        """(left, top, right, bottom) of the drawn shape, in pixels."""
        cell = image_size / GRID
        half = round(HALF_EXTENT[self.size] * cell)
        cx = round((self.col + 0.5) * cell) + self.dx
        cy = round((self.row + 0.5) * cell) + self.dy
        return cx - half, cy - half, cx + half, cy + half


@dataclass(frozen=True)
class Scene:
    image_id: int
    objects: tuple[SceneObject, ...]

    def to_dict(self) -> dict:
        return {"image_id": self.image_id,
                "objects": [[o.shape, o.colour, o.size, o.row, o.col, o.dx, o.dy] for o in self.objects]}

    @classmethod
    def from_dict(cls, data: dict) -> "Scene":
        return cls(int(data["image_id"]), tuple(SceneObject(*o) for o in data["objects"]))


def relation_holds(relation: str, a: SceneObject, b: SceneObject) -> bool:
    if relation == "left of":
        return a.col < b.col
    if relation == "right of":
        return a.col > b.col
    if relation == "above":
        return a.row < b.row
    if relation == "below":
        return a.row > b.row
    raise CaptionError(f"unknown relation {relation!r}; the toy world knows {', '.join(RELATIONS)}")


def depicted_compounds(scene: Scene) -> set[str]:
    """Every compound the picture shows: each object's attribute pairs and every true triple."""
    out = set()
    for a in scene.objects:
        out.add(f"{a.colour} {a.shape}")
        out.add(f"{a.size} {a.shape}")
        for b in scene.objects:
            if a is not b:
                out.update(f"{a.shape} {r} {b.shape}" for r in RELATIONS if relation_holds(r, a, b))
    return out


def sample_scene(rng: random.Random, image_id: int, n_objects: int, max_jitter: int = 1) -> Scene:
    """A scene of ``n_objects`` objects in distinct grid cells, every property uniform."""
    if not 1 <= n_objects <= GRID * GRID:
        raise ValueError(f"a scene holds 1 to {GRID * GRID} objects, not {n_objects}")
    cells = rng.sample(range(GRID * GRID), n_objects)
    objects = tuple(
        SceneObject(rng.choice(SHAPES), rng.choice(COLOURS), rng.choice(SIZES), cell // GRID, cell % GRID,
                    rng.randint(-max_jitter, max_jitter), rng.randint(-max_jitter, max_jitter))
        for cell in sorted(cells))
    return Scene(image_id, objects)


def render_scene(scene: Scene, image_size: int) -> Image.Image:
    """The picture of a scene: an RGB image of ``image_size`` × ``image_size`` pixels."""
    img = Image.new("RGB", (image_size, image_size), BACKGROUND)
    draw = ImageDraw.Draw(img)
    for obj in scene.objects:
        left, top, right, bottom = obj.box(image_size)
        fill = RGB[obj.colour]
        if obj.shape == "circle":
            draw.ellipse((left, top, right, bottom), fill=fill)
        elif obj.shape == "square":
            draw.rectangle((left, top, right, bottom), fill=fill)
        elif obj.shape == "triangle":
            draw.polygon([((left + right) / 2, top), (left, bottom), (right, bottom)], fill=fill)
        elif obj.shape == "cross":
            arm = max(1, round((right - left) / 6))
            cx, cy = (left + right) // 2, (top + bottom) // 2
            draw.rectangle((cx - arm, top, cx + arm, bottom), fill=fill)
            draw.rectangle((left, cy - arm, right, cy + arm), fill=fill)
        else:
            raise ValueError(f"unknown shape {obj.shape!r}")
    return img


# ------------------------------------------------------------------------------ captions

@dataclass(frozen=True)
class Mention:
    """``a [size] [colour] shape``; ``negated`` names the words carrying ``non-``."""

    shape: str
    colour: str | None = None
    size: str | None = None
    negated: frozenset[str] = field(default_factory=frozenset)   #: subset of {"shape", "colour", "size"}

    def matches(self, obj: SceneObject) -> bool:
        for kind in ("shape", "colour", "size"):
            wanted = getattr(self, kind)
            if wanted is not None and (getattr(obj, kind) == wanted) == (kind in self.negated):
                return False
        return True


@dataclass(frozen=True)
class Clause:
    """A chain of mentions: ``relations[i]`` links ``mentions[i]`` to ``mentions[i + 1]``."""

    mentions: tuple[Mention, ...]
    relations: tuple[str, ...] = ()
    negated_relations: frozenset[int] = field(default_factory=frozenset)
    negated: bool = False        #: "there is no ..."

    def __post_init__(self):
        if len(self.relations) != len(self.mentions) - 1:
            raise CaptionError(f"a chain of {len(self.mentions)} mentions needs {len(self.mentions) - 1} "
                               f"relations, got {len(self.relations)}")


@dataclass(frozen=True)
class Caption:
    clauses: tuple[Clause, ...]

    @property
    def text(self) -> str:
        return render_caption(self)


def render_mention(m: Mention) -> str:
    words = []
    for kind in ("size", "colour", "shape"):
        value = getattr(m, kind)
        if value is not None:
            words.append(NEGATION_PREFIX + value if kind in m.negated else value)
    return " ".join(words)


def render_clause(c: Clause) -> str:
    parts = [("there is no " if c.negated else "a ") + render_mention(c.mentions[0])]
    for i, relation in enumerate(c.relations):
        joint = " " if i == 0 else ", which is "
        neg = "not " if i in c.negated_relations else ""
        parts.append(f"{joint}{neg}{relation} a {render_mention(c.mentions[i + 1])}")
    return "".join(parts)


def render_caption(caption: Caption) -> str:
    return " and ".join(render_clause(c) for c in caption.clauses)


_WORD_KIND = {**{w: "size" for w in SIZES}, **{w: "colour" for w in COLOURS}, **{w: "shape" for w in SHAPES}}
_ORDER = ("size", "colour", "shape")


def _parse_mention(words: list[str], text: str) -> tuple[Mention, list[str]]:
    values: dict[str, str] = {}
    negated = set()
    last = -1
    while words:
        word = words[0]
        bare = word[len(NEGATION_PREFIX):] if word.startswith(NEGATION_PREFIX) else word
        kind = _WORD_KIND.get(bare)
        if kind is None or _ORDER.index(kind) <= last:
            break
        values[kind] = bare
        if bare != word:
            negated.add(kind)
        last = _ORDER.index(kind)
        words = words[1:]
        if kind == "shape":
            return Mention(values["shape"], values.get("colour"), values.get("size"), frozenset(negated)), words
    raise CaptionError(f"expected '[size] [colour] shape' at {' '.join(words)!r} in {text!r}")


def _parse_relation(words: list[str], text: str) -> tuple[str, bool, list[str]]:
    negated = bool(words) and words[0] == "not"
    if negated:
        words = words[1:]
    for relation in RELATIONS:
        n = len(relation.split())
        if " ".join(words[:n]) == relation:
            if words[n:n + 1] != ["a"]:
                raise CaptionError(f"expected 'a' after {relation!r} in {text!r}")
            return relation, negated, words[n + 1:]
    raise CaptionError(f"expected a relation ({', '.join(RELATIONS)}) at {' '.join(words)!r} in {text!r}")


def parse_clause(text: str) -> Clause:
    segments = text.split(", which is ")
    words = segments[0].split(" ")
    negated = words[:3] == ["there", "is", "no"]
    if negated:
        words = words[3:]
    elif words[:1] == ["a"]:
        words = words[1:]
    else:
        raise CaptionError(f"a clause starts with 'a' or 'there is no': {text!r}")
    first, words = _parse_mention(words, text)
    mentions, relations, negated_relations = [first], [], set()
    pending = [words] + [s.split(" ") for s in segments[1:]]
    for i, words in enumerate(pending):
        if i == 0 and not words:
            if len(segments) > 1:
                raise CaptionError(f"', which is' follows a mention without a relation in {text!r}")
            continue
        relation, rel_negated, words = _parse_relation(words, text)
        mention, words = _parse_mention(words, text)
        if words:
            raise CaptionError(f"unexpected words {' '.join(words)!r} in {text!r}")
        if rel_negated:
            negated_relations.add(len(relations))
        relations.append(relation)
        mentions.append(mention)
    return Clause(tuple(mentions), tuple(relations), frozenset(negated_relations), negated)


def parse_caption(text: str) -> Caption:
    """The :class:`Caption` written by ``text``; :class:`CaptionError` when it is not one."""
    if not isinstance(text, str) or not text or text != text.strip():
        raise CaptionError(f"not a caption: {text!r}")
    return Caption(tuple(parse_clause(part) for part in text.split(" and ")))


# ------------------------------------------------------------------------------ meaning

def _satisfiable(clauses: list[Clause], objects: tuple[SceneObject, ...]) -> bool:
    """Whether one injective assignment of all the clauses' mentions satisfies them."""
    slots: list[tuple[Mention, Clause, int]] = [(m, c, i) for c in clauses for i, m in enumerate(c.mentions)]
    chosen: list[SceneObject] = []
    used: set[int] = set()

    def fits(slot: int, obj: SceneObject) -> bool:
        mention, clause, i = slots[slot]
        if not mention.matches(obj):
            return False
        if i == 0:
            return True
        holds_ = relation_holds(clause.relations[i - 1], chosen[slot - 1], obj)
        return holds_ != (i - 1 in clause.negated_relations)

    def search(slot: int) -> bool:
        if slot == len(slots):
            return True
        for k, obj in enumerate(objects):
            if k not in used and fits(slot, obj):
                used.add(k)
                chosen.append(obj)
                if search(slot + 1):
                    return True
                used.discard(k)
                chosen.pop()
        return False

    return search(0)


def holds(caption: Caption | str, scene: Scene) -> bool:
    """Whether ``caption`` (a :class:`Caption` or its text) is true of ``scene`` (module docstring)."""
    if isinstance(caption, str):
        caption = parse_caption(caption)
    positive = [c for c in caption.clauses if not c.negated]
    if not _satisfiable(positive, scene.objects):
        return False
    return not any(_satisfiable([c], scene.objects) for c in caption.clauses if c.negated)


# ------------------------------------------------------------------------------ atoms and compounds

def atoms(caption: Caption) -> list[str]:
    """The atoms a caption mentions, in order (negated words count as the atom they negate)."""
    out = []
    for clause in caption.clauses:
        for i, m in enumerate(clause.mentions):
            if i:
                out.append(clause.relations[i - 1])
            out.extend(v for v in (m.size, m.colour, m.shape) if v is not None)
    return out


def atom_counts(caption: Caption) -> dict[str, int]:
    """Numbers of objects, relations and attributes (CREPE's n = their sum)."""
    mentions = [m for c in caption.clauses for m in c.mentions]
    return {"n_objects": len(mentions),
            "n_relations": sum(len(c.relations) for c in caption.clauses),
            "n_attributes": sum((m.colour is not None) + (m.size is not None) for m in mentions)}


def compounds(caption: Caption) -> set[str]:
    """The compounds a caption writes: attribute-object pairs and object-relation-object triples."""
    out = set()
    for clause in caption.clauses:
        for m in clause.mentions:
            out.update(f"{a} {m.shape}" for a in (m.colour, m.size) if a is not None)
        for i, relation in enumerate(clause.relations):
            out.add(f"{clause.mentions[i].shape} {relation} {clause.mentions[i + 1].shape}")
    return out


def compound_kind(compound: str) -> str:
    """``"attribute-object"`` or ``"object-relation-object"``; :class:`CaptionError` otherwise."""
    words = compound.split(" ")
    if len(words) == 2 and words[0] in _WORD_KIND and _WORD_KIND[words[0]] != "shape" and words[1] in SHAPES:
        return "attribute-object"
    if len(words) >= 3 and words[0] in SHAPES and words[-1] in SHAPES and " ".join(words[1:-1]) in RELATIONS:
        return "object-relation-object"
    raise CaptionError(f"{compound!r} is not a compound: write 'red circle' or 'circle left of square'")


def with_converses(compounds_: list[str] | tuple[str, ...]) -> set[str]:
    """The compounds plus the converse of every triple (the same picture, said the other way)."""
    out = set()
    for c in compounds_:
        if compound_kind(c) == "object-relation-object":
            words = c.split(" ")
            out.add(f"{words[-1]} {CONVERSE[' '.join(words[1:-1])]} {words[0]}")
        out.add(c)
    return out


# ------------------------------------------------------------------------------ sampling captions

def describe(scene: Scene, rng: random.Random, n_objects: int, n_attributes: int) -> Caption:
    """A true one-clause caption: a random walk over ``n_objects`` distinct objects of ``scene``.

    Each step follows a relation that holds between the two objects (every pair has one);
    ``n_attributes`` of the walk's colour and size words are written, chosen at random.
    """
    if not 1 <= n_objects <= len(scene.objects):
        raise ValueError(f"cannot walk over {n_objects} objects of a {len(scene.objects)}-object scene")
    if not 0 <= n_attributes <= 2 * n_objects:
        raise ValueError(f"{n_objects} objects carry 0 to {2 * n_objects} attributes, not {n_attributes}")
    walk = rng.sample(scene.objects, n_objects)
    relations = tuple(rng.choice([r for r in RELATIONS if relation_holds(r, a, b)])
                      for a, b in zip(walk, walk[1:]))
    slots = [(i, kind) for i in range(n_objects) for kind in ("size", "colour")]
    shown = set(rng.sample(slots, n_attributes))
    mentions = tuple(Mention(o.shape, o.colour if (i, "colour") in shown else None,
                             o.size if (i, "size") in shown else None)
                     for i, o in enumerate(walk))
    return Caption((Clause(mentions, relations),))


def chain_shapes(n_atoms: int, max_objects: int) -> list[tuple[int, int]]:
    """Every (objects, attributes) of a one-clause chain with ``n_atoms`` atoms.

    A chain of k objects has k - 1 relations and 0 to 2k attributes: n = 2k - 1 + attributes.
    """
    return [(k, n_atoms - (2 * k - 1)) for k in range(1, max_objects + 1) if 0 <= n_atoms - (2 * k - 1) <= 2 * k]
