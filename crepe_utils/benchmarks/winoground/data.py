"""Winoground's 400 examples and 800 images, read from a local copy in any published layout.

Layouts (those the dataset is published in), looked for in the data folder itself and in
its ``data/`` sub-folder (the Hugging Face repository's own layout):

===========  ===================================================================================
``folder``   ``examples.jsonl`` + ``images/`` holding ``ex_{id}_img_{0|1}.png``
``zip``      ``examples.jsonl`` + ``images.zip`` (members ``images/ex_{id}_img_{k}.png``; read one
             member at a time, never extracted)
``parquet``  ``test-*.parquet`` (the hub's current format): the text fields plus ``image_0`` and
             ``image_1`` columns holding the encoded image bytes
===========  ===================================================================================

The layout is detected. Pieces of two layouts side by side (say a parquet file next to
``examples.jsonl``), copies in both the folder and ``data/``, or a layout with a piece missing are
errors that list what was found; ``layout=`` (``--layout``) picks one of several complete layouts.
One combination is not mixed: ``images.zip`` beside an ``images/`` folder that
``python -m crepe_utils download winoground`` extracted from it (its marker file names the
archive). That is what the downloader leaves, and the images are read from the verified zip.

Images are opened by content, not by file name (some ``.png`` files hold JPEG data), and
converted to RGB (some are RGBA; the alpha channel is dropped, as every peer does). They are
decoded only when encoded, one batch at a time, so the 800 full-size images never sit in memory
together. A missing or undecodable image is a :class:`~crepe_utils.errors.DataError` naming it.

Examples are always returned sorted by id. The text-only metadata is read by :mod:`.metadata`.
"""
from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from ...errors import DataError
from .datasets import WINOGROUND_FILES
from ...textfile import not_utf8, parse_json, read_text
from ...download.extraction import MARKER_NAME
from ...lazy import lazy

pd = lazy("pandas")

LAYOUTS = ("folder", "zip", "parquet")
TEXT_FIELDS = ("id", "caption_0", "caption_1", "tag", "secondary_tag", "num_main_preds", "collapsed_tag")
IMAGE_FIELDS = ("image_0", "image_1")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
EXAMPLES_TEXT = "examples_text.tsv"   #: the text-only metadata (no images)
MAX_LISTED = 10
_HOW_TO_GET = ("Download it with `python -m crepe_utils download winoground --dest DIR` (gated: accept the "
               "terms on huggingface.co/datasets/facebook/winoground and set HF_TOKEN), then pass --data-dir DIR "
               "or set WINOGROUND_DATA.")


@dataclass(frozen=True)
class Example:
    """The text fields of one Winoground example."""

    id: int
    caption_0: str
    caption_1: str
    tag: str
    secondary_tag: str       #: "" or comma-separated tags, e.g. "Symbolic, Series"
    num_main_preds: int
    collapsed_tag: str       #: Object / Relation / Both
    source: str              #: where it was read: "examples.jsonl:3", "test-0.parquet row 2"

    def as_row(self) -> dict:
        return {f: getattr(self, f) for f in TEXT_FIELDS}


# ------------------------------------------------------------------------------ image sources

def _absent(where: str) -> DataError:
    return DataError(f"{where}: missing. Re-download the images.")


class FolderImages:
    """Images as files in a folder (``None`` for one that is missing: only with ``missing_ok``)."""

    def __init__(self, paths: list[tuple[Path | None, Path | None]], root: Path, names: list[tuple[str, str]]):
        self.paths, self.root, self.names = paths, root, names

    def read(self, index: int, k: int) -> bytes:
        if self.paths[index][k] is None:
            raise _absent(self.where(index, k))
        try:
            return self.paths[index][k].read_bytes()
        except OSError as exc:
            raise DataError(f"{self.where(index, k)}: cannot be read ({exc}). Re-download the images.") from None

    def where(self, index: int, k: int) -> str:
        path = self.paths[index][k]
        return str(path.relative_to(self.root)) if path is not None else f"{self.names[index][k]} (missing)"

    def locator(self, index: int, k: int) -> str:
        """What the engine opens (:func:`crepe_utils.engine.images.open_rgb`)."""
        return str(self.paths[index][k])


class ZipImages:
    """Images as members of a zip archive, read one at a time."""

    def __init__(self, archive: Path, members: list[tuple[str | None, str | None]], names: list[tuple[str, str]]):
        self.archive, self.members, self.names = archive, members, names

    def read(self, index: int, k: int) -> bytes:
        if self.members[index][k] is None:
            raise _absent(self.where(index, k))
        try:
            with zipfile.ZipFile(self.archive) as zf:
                return zf.read(self.members[index][k])
        except (OSError, zipfile.BadZipFile, KeyError) as exc:
            raise DataError(f"{self.where(index, k)}: cannot be read ({type(exc).__name__}: {exc}). "
                            "Re-download images.zip.") from None

    def where(self, index: int, k: int) -> str:
        member = self.members[index][k]
        return f"{self.archive.name}:{member if member is not None else self.names[index][k] + ' (missing)'}"

    def locator(self, index: int, k: int) -> tuple:
        return ("zip", str(self.archive), self.members[index][k])


class ParquetImages:
    """Images as encoded bytes taken from parquet cells."""

    def __init__(self, blobs: list[tuple[bytes, bytes]], places: list[tuple[str, str]]):
        self.blobs, self.places = blobs, places   #: places: "<file> row <n> image_<k> (<stored name>)"

    def read(self, index: int, k: int) -> bytes:
        return self.blobs[index][k]

    def where(self, index: int, k: int) -> str:
        return self.places[index][k]

    def locator(self, index: int, k: int) -> tuple:
        return ("bytes", self.blobs[index][k])


ImageSource = FolderImages | ZipImages | ParquetImages


def decode_image(raw: bytes, where: str) -> Image.Image:
    """Decode image bytes by their content (whatever the file name says) into an RGB image."""
    try:
        with Image.open(io.BytesIO(raw)) as img:
            img.load()
            return img.convert("RGB")
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        raise DataError(f"{where}: cannot be decoded as an image ({type(exc).__name__}: {exc}). "
                        "The file is damaged or not an image; re-download the dataset.") from None


@dataclass
class WinogroundData:
    """The examples (sorted by id) and where their images are."""

    examples: list[Example]
    images: ImageSource
    layout: str              #: folder / zip / parquet
    root: Path               #: the folder holding the layout's files
    files: list[Path]        #: the files read (checksummed in results manifests); images/ for ``folder``

    def __len__(self) -> int:
        return len(self.examples)

    def image_bytes(self, index: int, k: int) -> bytes:
        """The encoded bytes of image ``k`` (0 or 1) of the ``index``-th example."""
        return self.images.read(index, k)

    def image(self, index: int, k: int) -> Image.Image:
        """Image ``k`` of the ``index``-th example, decoded and converted to RGB."""
        return decode_image(self.image_bytes(index, k), self.images.where(index, k))

    def frame(self) -> pd.DataFrame:
        """The text fields and image locations, one row per example."""
        rows = [{**ex.as_row(), "image_0": self.images.where(i, 0), "image_1": self.images.where(i, 1),
                 "source": ex.source} for i, ex in enumerate(self.examples)]
        return pd.DataFrame(rows, columns=[*TEXT_FIELDS, *IMAGE_FIELDS, "source"])


# ------------------------------------------------------------------------------ record parsing

class BadRow(Exception):
    """One malformed record; collected per file and raised together as a DataError."""


def _int_field(rec: dict, name: str) -> int:
    value = rec.get(name)
    if isinstance(value, bool):
        raise BadRow(f"field {name!r} is {value!r}; expected an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise BadRow(f"field {name!r} is {value!r}; expected an integer")


def _str_field(rec: dict, name: str, allow_empty: bool) -> str:
    value = rec.get(name)
    if not isinstance(value, str):
        raise BadRow(f"field {name!r} is {value!r}; expected a string")
    if not allow_empty and not value.strip():
        raise BadRow(f"field {name!r} is empty")
    if not_utf8(value):
        raise BadRow(f"field {name!r} {not_utf8(value)}")
    return value


def parse_example(rec: dict, source: str) -> Example:
    missing = [f for f in TEXT_FIELDS if f not in rec]
    if missing:
        raise BadRow(f"missing field(s) {missing}; expected {list(TEXT_FIELDS)}")
    return Example(id=_int_field(rec, "id"), caption_0=_str_field(rec, "caption_0", False),
                   caption_1=_str_field(rec, "caption_1", False), tag=_str_field(rec, "tag", True),
                   secondary_tag=_str_field(rec, "secondary_tag", True),
                   num_main_preds=_int_field(rec, "num_main_preds"),
                   collapsed_tag=_str_field(rec, "collapsed_tag", False), source=source)


def raise_bad_rows(path: Path, bad: list[str], expected: str) -> None:
    if bad:
        more = f"\n  ... and {len(bad) - MAX_LISTED} more" if len(bad) > MAX_LISTED else ""
        listed = "\n  ".join(bad[:MAX_LISTED]) + more
        raise DataError(f"{path}: {len(bad)} malformed row(s):\n  {listed}\nExpected {expected}. "
                        f"Re-download the file, or fix the rows listed.")


def sorted_unique_ids(examples: list[Example], path: Path) -> list[Example]:
    seen: dict[int, str] = {}
    dupes = []
    for ex in examples:
        if ex.id in seen:
            dupes.append(f"id {ex.id} at {seen[ex.id]} and {ex.source}")
        seen.setdefault(ex.id, ex.source)
    if dupes:
        raise DataError(f"{path}: duplicate example ids: {'; '.join(dupes[:MAX_LISTED])}. Every id must appear once; "
                        "re-download the file.")
    return sorted(examples, key=lambda ex: ex.id)


def _image_stem(value, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadRow(f"field {name!r} is {value!r}; expected an image name such as 'ex_0_img_0'")
    stem = value.strip()
    suffix = os.path.splitext(stem)[1].lower()
    return os.path.splitext(stem)[0] if suffix in IMAGE_SUFFIXES else stem


def read_examples_jsonl(path: str | os.PathLike) -> tuple[list[Example], list[tuple[str, str]]]:
    """Examples of ``examples.jsonl`` (sorted by id) and each one's two image names (file stems)."""
    path = Path(path)
    parsed, bad = [], []
    text = read_text(path, "examples.jsonl is UTF-8: re-save it as UTF-8, or download it again.")
    for line_no, line in enumerate(io.StringIO(text, newline=None), start=1):     # universal newlines, as open()
        if not line.strip():
            continue
        where = f"{path.name}:{line_no}"
        try:
            try:
                rec = parse_json(line)
            except json.JSONDecodeError as exc:
                raise BadRow(f"not valid JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})") from None
            if not isinstance(rec, dict):
                raise BadRow(f"holds a JSON {type(rec).__name__}; expected an object")
            ex = parse_example(rec, where)
            stems = (_image_stem(rec.get("image_0"), "image_0"), _image_stem(rec.get("image_1"), "image_1"))
        except BadRow as exc:
            bad.append(f"{where}: {exc}")
            continue
        parsed.append((ex, stems))
    raise_bad_rows(path, bad, f"one JSON object per line with the fields {list(TEXT_FIELDS + IMAGE_FIELDS)}")
    if not parsed:
        raise DataError(f"{path} holds no examples. Re-download it.")
    stems_by_id = {ex.id: stems for ex, stems in parsed}
    examples = sorted_unique_ids([ex for ex, _ in parsed], path)
    return examples, [stems_by_id[ex.id] for ex in examples]


# ------------------------------------------------------------------------------ layout detection

@dataclass(frozen=True)
class _Pieces:
    """The Winoground files found in one folder."""

    base: Path
    jsonl: Path | None
    images_dir: Path | None
    images_zip: Path | None
    parquet: tuple[Path, ...]

    def names(self) -> list[str]:
        out = [p.name for p in (self.jsonl, self.images_zip) if p is not None]
        out += ["images/"] if self.images_dir is not None else []
        return out + [p.name for p in self.parquet]

    def complete(self) -> dict[str, list[Path]]:
        out = {}
        if self.jsonl and self.images_dir:
            out["folder"] = [self.jsonl, self.images_dir]
        if self.jsonl and self.images_zip:
            out["zip"] = [self.jsonl, self.images_zip]
        if self.parquet:
            out["parquet"] = list(self.parquet)
        return out


def _pieces(base: Path) -> _Pieces | None:
    if not base.is_dir():
        return None
    found = _Pieces(base, base / "examples.jsonl" if (base / "examples.jsonl").is_file() else None,
                    base / "images" if (base / "images").is_dir() else None,
                    base / "images.zip" if (base / "images.zip").is_file() else None,
                    tuple(sorted(base.glob("test-*.parquet"))))
    return found if found.names() else None


def _extracted_by_downloader(images_dir: Path) -> bool:
    """Whether ``images_dir`` is the downloader's extraction of the ``images.zip`` beside it."""
    try:
        marker = json.loads((images_dir / MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(marker, dict) and marker.get("archive") == "images.zip"


def detect_layout(data_dir: str | os.PathLike, layout: str | None = None) -> tuple[str, list[Path]]:
    """The layout under ``data_dir`` and its files: (``"folder"``, [jsonl, images dir]), ...

    ``layout`` chooses when pieces of several layouts are present; otherwise a mixed or incomplete
    folder is a :class:`DataError` saying what was found and what is expected.
    """
    root = Path(data_dir)
    if layout is not None and layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS} (or None to detect it), got {layout!r}")
    expected = ("one of: examples.jsonl + images/ (folder), examples.jsonl + images.zip (zip), or the hub's "
                "test-*.parquet files (parquet), in the folder or its data/ sub-folder")
    if not root.is_dir():
        raise DataError(WINOGROUND_FILES.missing(root))
    found = [p for p in (_pieces(root), _pieces(root / "data")) if p is not None]
    if not found:
        text_only = (root / EXAMPLES_TEXT).is_file()
        hint = f" {EXAMPLES_TEXT} is the text-only metadata (no images); scoring needs the images." if text_only else ""
        listing = ", ".join(sorted(p.name for p in root.iterdir())[:MAX_LISTED]) or "nothing"
        raise DataError(f"no Winoground data in {root} (found: {listing}). Expected {expected}.{hint} {_HOW_TO_GET}")
    if len(found) > 1:
        raise DataError(f"Winoground files in both {found[0].base} ({', '.join(found[0].names())}) and "
                        f"{found[1].base} ({', '.join(found[1].names())}). Keep one copy, or pass the folder "
                        "that holds the one you mean.")
    pieces = found[0]
    complete = pieces.complete()
    what = f"{pieces.base} holds {', '.join(pieces.names())}"
    if layout is not None:
        if layout not in complete:
            raise DataError(f"layout {layout!r} asked for, but {what}: not a complete {layout!r} layout. "
                            f"Expected {expected}.")
        return layout, complete[layout]
    if not complete:
        if pieces.jsonl:
            need = "images/ (the extracted images) or images.zip next to it"
        else:
            need = "examples.jsonl next to the images (the captions and tags)"
        raise DataError(f"incomplete Winoground layout: {what}; missing {need}. Expected {expected}. {_HOW_TO_GET}")
    if set(complete) == {"folder", "zip"} and not pieces.parquet and _extracted_by_downloader(pieces.images_dir):
        return "zip", complete["zip"]
    has_jsonl_pieces = bool(pieces.jsonl or pieces.images_dir or pieces.images_zip)
    mixed = len(complete) > 1 or (bool(pieces.parquet) and has_jsonl_pieces)
    if mixed:
        raise DataError(f"mixed Winoground layouts: {what}. Pass --layout (layout=) with one of "
                        f"{', '.join(sorted(complete))}, or remove the other files.")
    (name, files), = complete.items()
    return name, files


# ------------------------------------------------------------------------------ loading

def load_dataset(data_dir: str | os.PathLike, layout: str | None = None, missing_ok: bool = False) -> WinogroundData:
    """Winoground from a local copy in any published layout (see the module docstring).

    Checks that every example has both images (by name; they are decoded later, when encoded): a missing
    one is a :class:`DataError` listing them, or, with ``missing_ok`` (``--skip-missing-images``), kept as an
    image whose bytes cannot be read (its example is then skipped and counted, as for an unreadable image).
    """
    name, files = detect_layout(data_dir, layout)
    if name == "parquet":
        return _load_parquet(files)
    jsonl, image_place = files
    examples, stems = read_examples_jsonl(jsonl)
    if name == "folder":
        # any depth: `unzip images.zip -d images` leaves images/images/ex_*.png
        index = _unique_index(((os.path.splitext(p.name)[0], p) for p in sorted(image_place.rglob("*"))
                               if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES), str(image_place))
        paths = _lookup(index, examples, stems, str(image_place), missing_ok)
        return WinogroundData(examples, FolderImages(paths, jsonl.parent, stems), "folder", jsonl.parent,
                              [jsonl, image_place])
    try:
        with zipfile.ZipFile(image_place) as zf:
            members = [m for m in zf.namelist() if not m.endswith("/") and "__MACOSX" not in m
                       and os.path.splitext(m)[1].lower() in IMAGE_SUFFIXES]
    except (OSError, zipfile.BadZipFile) as exc:
        raise DataError(f"{image_place}: not a readable zip archive ({exc}). Re-download images.zip.") from None
    index = _unique_index(((os.path.splitext(os.path.basename(m))[0], m) for m in members), str(image_place))
    members = _lookup(index, examples, stems, str(image_place), missing_ok)
    return WinogroundData(examples, ZipImages(image_place, members, stems),
                          "zip", jsonl.parent, [jsonl, image_place])


def _unique_index(items, where: str) -> dict:
    index: dict = {}
    dupes = []
    for stem, item in items:
        if stem in index:
            dupes.append(f"{index[stem]} and {item}")
        index.setdefault(stem, item)
    if dupes:
        raise DataError(f"{where}: several images with the same name: {'; '.join(map(str, dupes[:MAX_LISTED]))}. "
                        "Keep one copy of each.")
    return index


def _lookup(index: dict, examples: list[Example], stems: list[tuple[str, str]], where: str,
            missing_ok: bool = False) -> list[tuple]:
    out, missing = [], []
    for ex, pair in zip(examples, stems):
        for stem in pair:
            if stem not in index:
                missing.append(f"{stem} (example {ex.id}, {ex.source})")
        out.append(tuple(index.get(stem) for stem in pair))
    if missing and not missing_ok:
        raise DataError(f"{len(missing)} image(s) missing from {where}: {', '.join(missing[:MAX_LISTED])}"
                        f"{' ...' if len(missing) > MAX_LISTED else ''}. Expected files named "
                        "<image_0/image_1 field>.png, e.g. ex_0_img_0.png. Re-download the images, or pass "
                        "--skip-missing-images to evaluate without their examples (they are counted).")
    return out


def _image_cell(cell, column: str) -> bytes:
    raw = cell.get("bytes") if isinstance(cell, dict) else cell
    if isinstance(raw, (bytes, bytearray)) and raw:
        return bytes(raw)
    raise BadRow(f"column {column!r} holds no image bytes ({type(cell).__name__}); expected the hub's "
                  "Image feature (a struct with 'bytes') or raw bytes")


def _stored_name(cell) -> str:
    name = cell.get("path") if isinstance(cell, dict) else None
    return f" ({name})" if name else ""


def _load_parquet(files: list[Path]) -> WinogroundData:
    import pyarrow.parquet as pq

    examples, blobs, places = [], [], []
    for path in files:
        try:
            table = pq.read_table(path)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for damaged files
            raise DataError(f"{path}: cannot be read as parquet ({type(exc).__name__}: {exc}). "
                            "Re-download it.") from None
        missing = [c for c in TEXT_FIELDS + IMAGE_FIELDS if c not in table.column_names]
        if missing:
            raise DataError(f"{path}: missing column(s) {missing}; found {table.column_names}. Expected the "
                            f"hub's Winoground parquet with {list(TEXT_FIELDS + IMAGE_FIELDS)}.")
        bad = []
        for row_no, rec in enumerate(table.select(list(TEXT_FIELDS + IMAGE_FIELDS)).to_pylist()):
            where = f"{path.name} row {row_no}"
            try:
                ex = parse_example(rec, where)
                pair = (_image_cell(rec["image_0"], "image_0"), _image_cell(rec["image_1"], "image_1"))
            except BadRow as exc:
                bad.append(f"{where}: {exc}")
                continue
            examples.append(ex)
            blobs.append(pair)
            places.append(tuple(f"{where} image_{k}" + _stored_name(rec[f"image_{k}"]) for k in (0, 1)))
        raise_bad_rows(path, bad, "one example per row with both images' bytes")
    if not examples:
        raise DataError(f"{', '.join(map(str, files))} hold no examples. Re-download the parquet files.")
    order = sorted(range(len(examples)), key=lambda i: examples[i].id)
    examples = sorted_unique_ids(examples, files[0].parent)
    return WinogroundData(examples, ParquetImages([blobs[i] for i in order], [places[i] for i in order]),
                          "parquet", files[0].parent, list(files))
