"""SugarCrepe's seven JSONs read into image–caption–negative pairs, as the evaluation engine consumes them.

Released layout (``RAIVNLab/sugar-crepe`` ``data/``, see :mod:`crepe_utils.download.datasets`): one file per
subset, ``<subset>.json``, a JSON object mapping a key (``"0"``, ``"1"``, …) to
``{"filename": "000000391895.jpg", "caption": ..., "negative_caption": ...}``; ``filename`` names a
COCO val2017 image. A pair is one retrieval set of two candidates, the positive first.

How bad input is treated (nothing is half-returned, nothing dropped silently):

==========================================  ===============================================================
case                                        treatment
==========================================  ===============================================================
missing folder or file                      :class:`DataError` naming the folder and ``make data-sugarcrepe``
bytes that are not UTF-8                    :class:`DataError` naming file, line and bytes
byte-order mark, CRLF line ends             read as the plain file
not JSON, not an object of objects,         :class:`DataError` naming the file
a key given twice
item without a field, non-text or empty     one :class:`DataError` listing ``file[key]: reason`` for every bad
caption, a file name that is not a COCO     item (the first 10, then how many more)
2017 file name (12-digit id + ``.jpg``)
fields beyond the three                     kept out of the pair, counted in :attr:`PairSet.issues`
positive equal to its negative              kept (an exact tie), counted in :attr:`PairSet.issues`
==========================================  ===============================================================

Captions are kept exactly as written (some end in a space, as released): the tokenizer decides what
whitespace means, as in the official evaluation.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import DataError
from ...imagesets.coco import COCO_FILE_NAME
from ...textfile import not_utf8, parse_json, read_text
from .datasets import SUGARCREPE_JSONS

#: the released subsets, in the order the loader returns them (file ``<subset>.json`` each)
SUBSETS = ("add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj")
FIELDS = ("filename", "caption", "negative_caption")
#: COCO 2017 image file names: the image id zero-padded to 12 digits, then ``.jpg``
MAX_LISTED = 10
_HOW_TO_GET = "Run `make data-sugarcrepe` (or `python -m crepe_utils download sugarcrepe --dest DIR`)"


@dataclass(frozen=True)
class Pair:
    """One SugarCrepe item: a COCO image, its caption and the caption's hard negative."""

    subset: str
    key: str                 #: the item's key in its JSON file
    image_id: str            #: the COCO file name, e.g. "000000391895.jpg"
    positive: str
    negative: str
    source: str              #: "<subset>.json:<key>" (the query id)
    box: None = None         #: the whole image

    @property
    def candidates(self) -> tuple[str, str]:
        return (self.positive, self.negative)

    @property
    def query_id(self) -> str:
        return self.source


@dataclass(frozen=True)
class ItemIssue:
    """Something odd about one item that was kept."""

    file: str
    key: str
    kind: str                #: "extra fields", "positive equals negative"
    message: str

    def __str__(self) -> str:
        return f"{self.file}[{self.key}]: {self.message}"


@dataclass
class PairSet:
    """Pairs plus an account of what loading them met."""

    pairs: list[Pair] = field(default_factory=list)
    files: dict[str, int] = field(default_factory=dict)     #: file name → items read
    issues: list[ItemIssue] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.pairs)

    def __iter__(self):
        return iter(self.pairs)

    def issue_counts(self) -> Counter:
        return Counter(i.kind for i in self.issues)

    def by_subset(self) -> dict[str, list[Pair]]:
        out: dict[str, list[Pair]] = {}
        for p in self.pairs:
            out.setdefault(p.subset, []).append(p)
        return out


class _BadItem(Exception):
    pass


def _unique_keys(items: list[tuple[str, object]]) -> dict:
    """``json`` object hook: a key given twice would silently keep only the last item."""
    counts = Counter(k for k, _ in items)
    twice = sorted(k for k, n in counts.items() if n > 1)
    if twice:
        raise DataError(f"an object gives key(s) {twice[:MAX_LISTED]} more than once")
    return dict(items)


def _read_json(path: Path) -> dict:
    """The top-level object of ``path``; anything else raises naming the file."""
    text = read_text(path, f"SugarCrepe's JSONs are UTF-8. {_HOW_TO_GET}, or re-save the file as UTF-8.")
    try:
        data = parse_json(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON ({exc.msg.removesuffix(' at')} at line {exc.lineno}, column {exc.colno}). "
                        f"{_HOW_TO_GET} to fetch the released file.") from None
    except DataError as exc:
        raise DataError(f"{path}: {exc} (JSON keeps only the last). {_HOW_TO_GET}.") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: holds a JSON {type(data).__name__}; expected an object mapping keys to items "
                        f'{{"filename", "caption", "negative_caption"}}. {_HOW_TO_GET}.')
    return data


def _text(item: dict, name: str) -> str:
    value = item[name]
    if not isinstance(value, str):
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise _BadItem(f"{name!r} is a {type(value).__name__} ({shown}); expected text")
    if not value.strip():
        raise _BadItem(f"{name!r} is empty")
    if not_utf8(value):
        raise _BadItem(f"{name!r} {not_utf8(value)}")
    return value


def _parse_item(item) -> tuple[str, str, str, list[str]]:
    """(file name, caption, negative, extra field names) of one item, or :class:`_BadItem`."""
    if not isinstance(item, dict):
        raise _BadItem(f"is a {type(item).__name__}; expected an object with fields {list(FIELDS)}")
    missing = [f for f in FIELDS if f not in item]
    if missing:
        raise _BadItem(f"lacks field(s) {missing}; found {sorted(item)}")
    filename, caption, negative = (_text(item, f) for f in FIELDS)
    if not COCO_FILE_NAME.fullmatch(filename):
        raise _BadItem(f"'filename' is {filename!r}; expected a COCO 2017 file name such as '000000391895.jpg'")
    return filename, caption, negative, sorted(set(item) - set(FIELDS))


def _load_file(path: Path, subset: str, out: PairSet, bad: list[str]) -> None:
    """Append the pairs of one file to ``out`` and its bad items to ``bad``."""
    name = path.name
    data = _read_json(path)
    for key, item in data.items():
        try:
            filename, caption, negative, extra = _parse_item(item)
        except _BadItem as exc:
            bad.append(f"{name}[{key}]: {exc}")
            continue
        if extra:
            out.issues.append(ItemIssue(name, key, "extra fields", f"fields {extra} are not read"))
        if caption == negative:
            out.issues.append(ItemIssue(name, key, "positive equals negative",
                                        "the negative is the caption itself (an exact tie)"))
        out.pairs.append(Pair(subset, key, filename, caption, negative, f"{name}:{key}"))
    out.files[name] = len(data)


def _chosen(subsets) -> list[str]:
    asked = [subsets] if isinstance(subsets, str) else list(subsets)
    unknown = [s for s in asked if s not in SUBSETS]
    if unknown:
        raise DataError(f"unknown SugarCrepe subset(s) {unknown}; known: {', '.join(SUBSETS)}")
    return [s for s in SUBSETS if s in asked]


def load_pairs(data_dir: str | os.PathLike | None = None, subsets=SUBSETS) -> PairSet:
    """The pairs of ``subsets`` (default: all seven) from the folder holding ``<subset>.json``
    (default: ``$SUGARCREPE_DATA``, else ``<data root>/sugarcrepe``).

    Subsets come in :data:`SUBSETS` order, items in file order. Any bad item in any file raises one
    :class:`DataError` listing them; nothing is returned then.
    """
    chosen = _chosen(subsets)
    root = SUGARCREPE_JSONS.require(data_dir)
    absent = [f"{s}.json" for s in chosen if not (root / f"{s}.json").is_file()]
    if absent:
        raise DataError(f"SugarCrepe folder {root} lacks {', '.join(absent)}. {_HOW_TO_GET}, or point "
                        "SUGARCREPE_DATA at the folder holding the seven JSONs.")
    out, bad = PairSet(), []
    for subset in chosen:
        _load_file(root / f"{subset}.json", subset, out, bad)
    if bad:
        more = f"\n  ... and {len(bad) - MAX_LISTED} more" if len(bad) > MAX_LISTED else ""
        raise DataError(f"{len(bad)} malformed SugarCrepe item(s) in {root}:\n  "
                        + "\n  ".join(bad[:MAX_LISTED]) + more
                        + f"\nFix those items. {_HOW_TO_GET} to restore the released files.")
    return out
