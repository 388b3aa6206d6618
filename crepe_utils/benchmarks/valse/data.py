"""VALSE's released pieces read into items: a caption, its foil, the image they describe, the annotators' votes.

Each released file is one JSON object, item id → item. What is read (the other fields vary by piece and are not
needed to score): ``caption`` and ``foil`` (non-empty strings), ``dataset`` and ``image_file`` (which source
image), and ``mturk`` = {``caption``, ``foil``, ``other``}: how many of three annotators chose the caption only,
the foil, neither (integers summing to 3). The *valid* set is the authors' (their README: at least two of three
annotators chose the caption and not the foil, ``mturk.caption >= 2``); the *full* set is every item.

An item id is unique only within its piece (action-replacement and actant-swap both use ``actions_test_<n>``),
so an item is named by (piece, id). A piece is checked whole before anything is returned: every bad item is one
line naming the file, the item and what was expected (the first :data:`MAX_LINES` shown, the rest counted), and
nothing of a bad file is used. Texts are kept exactly as written.

Which image set an item's image is in follows from its ``dataset`` field and its file name together
(:data:`IMAGE_RULES`): ``VisDial_v1.0`` names COCO 2014 files in one coreference piece and Visual Dialog's own
validation images in the other.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import DataError
from ...textfile import parse_json, read_text
from .datasets import VALSE_JSONS

SUBSETS = ("valid", "full")
MAX_LINES = 20


@dataclass(frozen=True)
class Piece:
    name: str            #: the released file's stem
    phenomenon: str      #: the paper's piece
    instrument: str      #: the instrument within the piece ("" where the piece has one)


#: The eleven released files, in the paper's order of pieces. Which counting and coreference file is which
#: instrument is read from the data (counting-hard balances its numbers; coreference-hard is the VisDial-val one).
PIECES: tuple[Piece, ...] = (
    Piece("existence", "existence", ""),
    Piece("plurals", "plurality", ""),
    Piece("counting-hard", "counting", "balanced"),
    Piece("counting-small-quant", "counting", "small numbers"),
    Piece("counting-adversarial", "counting", "adversarial"),
    Piece("relations", "spatial relations", ""),
    Piece("action-replacement", "actions", "replacement"),
    Piece("actant-swap", "actions", "actant swap"),
    Piece("coreference-standard", "coreference", "standard"),
    Piece("coreference-hard", "coreference", "clean"),
    Piece("foil-it", "foil-it", ""),
)
PIECE_NAMES = tuple(p.name for p in PIECES)

#: (the ``dataset`` field, the ``image_file`` pattern, the image set it is in)
IMAGE_RULES: tuple[tuple[str, re.Pattern, str], ...] = (
    ("visual7w", re.compile(r"v7w_\d+\.jpg"), "visual7w"),
    ("SWiG", re.compile(r"[a-z]+_\d+\.jpg"), "swig"),
    ("coco2017", re.compile(r"\d{12}\.jpg"), "coco"),
    ("coco_2017", re.compile(r"\d{12}\.jpg"), "coco"),
    ("FOIL dataset", re.compile(r"COCO_val2014_\d{12}\.jpg"), "coco2014"),
    ("VisDial_v1.0", re.compile(r"COCO_(val|train)2014_\d{12}\.jpg"), "coco2014"),
    ("VisDial_v1.0", re.compile(r"VisualDialog_val2018_\d{12}\.jpg"), "visdial"),
)


@dataclass(frozen=True)
class Item:
    """One VALSE item: an engine query of two candidates, the caption first, the whole image."""

    piece: str
    key: str                          #: its id in the piece's file
    image_set: str                    #: the image set its image is in (IMAGE_RULES)
    image_file: str
    caption: str
    foil: str
    votes: tuple[int, int, int]       #: mturk (caption, foil, other)
    box: None = None

    @property
    def valid(self) -> bool:
        return self.votes[0] >= 2

    @property
    def query_id(self) -> str:
        return f"{self.piece}:{self.key}"

    @property
    def image_id(self) -> str:
        return f"{self.image_set}/{self.image_file}"

    @property
    def candidates(self) -> tuple[str, str]:
        return (self.caption, self.foil)


@dataclass
class Items:
    """The selected items of the pieces read, and what reading them met."""

    items: list[Item] = field(default_factory=list)
    files: dict[str, int] = field(default_factory=dict)       #: file name → items in the file (the full set)
    valid: dict[str, int] = field(default_factory=dict)       #: piece → items in its valid set
    identical: dict[str, int] = field(default_factory=dict)   #: piece → selected items whose caption is the foil

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


class _Object(list):
    """A JSON object as its (key, value) pairs, duplicates kept."""


def _parse(path: Path) -> _Object:
    text = read_text(path, "re-download VALSE's data (`make data-valse`)")
    try:
        top = parse_json(text, object_pairs_hook=_Object)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: not JSON ({exc.msg} at column {exc.colno}); expected one JSON "
                        "object of items: re-download VALSE's data (`make data-valse`)") from None
    if not isinstance(top, _Object):
        raise DataError(f"{path}: the top level is a JSON {type(top).__name__}; expected an object of items "
                        "(re-download VALSE's data: `make data-valse`)")
    return top


def image_set(dataset: object, image_file: object) -> str | None:
    """The image set of an item's image, or None when the pair fits no rule."""
    if isinstance(dataset, str) and isinstance(image_file, str):
        for name, pattern, where in IMAGE_RULES:
            if dataset == name and pattern.fullmatch(image_file):
                return where
    return None


def _votes(mturk: object) -> tuple[int, int, int] | str:
    """The three vote counts, or what is wrong with them."""
    if not isinstance(mturk, _Object):
        return "has no mturk object (expected mturk = {caption, foil, other})"
    fields = dict(mturk)
    if len(fields) != len(mturk):
        return "mturk repeats a key"
    try:
        votes = tuple(fields[k] for k in ("caption", "foil", "other"))
    except KeyError as missing:
        return f"mturk lacks {missing} (expected caption, foil, other)"
    if not all(type(v) is int and 0 <= v <= 3 for v in votes) or sum(votes) != 3:
        return f"mturk votes {list(votes)} (expected three integers 0..3 summing to 3)"
    return votes


def _item(piece: str, key: str, value: object, where: str) -> Item | str:
    """One item, or the one line that says what is wrong with it."""
    head = f"{where}: item {key!r}:"
    if not isinstance(value, _Object):
        return f"{head} is a JSON {type(value).__name__} (expected an object)"
    fields = dict(value)
    repeated = sorted(k for k, n in Counter(k for k, _ in value).items() if n > 1)     # linear in the fields
    if repeated:
        return f"{head} repeats field(s) {', '.join(repeated)} (expected each field once)"
    for name in ("caption", "foil"):
        text = fields.get(name)
        if not isinstance(text, str) or not text.strip():
            return f"{head} {name} is {text!r} (expected a non-empty string)"
    where_image = image_set(fields.get("dataset"), fields.get("image_file"))
    if where_image is None:
        return (f"{head} dataset {fields.get('dataset')!r} with image_file {fields.get('image_file')!r} fits no "
                f"image set (expected one of: {'; '.join(f'{d} + {p.pattern}' for d, p, _ in IMAGE_RULES)})")
    votes = _votes(fields.get("mturk"))
    if isinstance(votes, str):
        return f"{head} {votes}"
    return Item(piece, key, where_image, fields["image_file"], fields["caption"], fields["foil"], votes)


def _lines(problems: list[str]) -> str:
    shown = problems[:MAX_LINES] + ([f"... and {len(problems) - MAX_LINES} more"] if len(problems) > MAX_LINES else [])
    return "\n".join(shown)


def read_piece(path: Path, piece: str) -> tuple[list[Item], list[str]]:
    """Every item of one file, and one line per problem (nothing to use when there is any)."""
    top = _parse(path)
    seen: dict[str, int] = {}
    for key, _ in top:
        seen[key] = seen.get(key, 0) + 1
    problems = [f"{path}: item {k!r} occurs {n} times (expected unique ids: a JSON reader keeps only the last)"
                for k, n in seen.items() if n > 1]
    items = []
    for key, value in top:
        got = _item(piece, key, value, str(path))
        (problems.append(got) if isinstance(got, str) else items.append(got))
    if not top:
        problems.append(f"{path}: holds no items (expected an object of items)")
    return items, problems


def load_items(folder: str | Path, pieces: tuple[str, ...] = PIECE_NAMES, subset: str = "valid") -> Items:
    """The selected ``subset`` of each of ``pieces`` from ``folder/<piece>.json``, in file order; a missing file
    or any bad item fails the whole call with one line per problem of every piece."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(VALSE_JSONS.missing(folder))
    out, problems = Items(), []
    for piece in pieces:
        path = folder / f"{piece}.json"
        if not path.is_file():
            problems.append(f"{path}: missing (expected VALSE's released {piece}.json: run `make data-valse`)")
            continue
        items, bad = read_piece(path, piece)
        problems += bad
        chosen = [i for i in items if subset == "full" or i.valid]
        out.items += chosen
        out.files[path.name] = len(items)
        out.valid[piece] = sum(i.valid for i in items)
        out.identical[piece] = sum(i.caption == i.foil for i in chosen)
    if problems:
        raise DataError(_lines(problems))
    return out
