"""A user's text files (CSV, TSV, JSON, JSON Lines) read as the tools that write them write them.

Spreadsheet programs and Windows editors start a UTF-8 file with a byte-order mark and end its lines
with CRLF. The mark is dropped (``utf-8-sig``), so a header reads ``image_id``, not ``\\ufeffimage_id``;
line ends are left to the reader (the ``csv`` module with ``newline=""``, or universal newlines).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .errors import DataError

#: UTF-8, a leading byte-order mark dropped
ENCODING = "utf-8-sig"


def read_text(path: str | os.PathLike, fix: str, error: type[Exception] = DataError) -> str:
    """The text of the file ``path``; bytes that are not UTF-8 raise ``error`` naming the file, the line
    and the bytes, followed by ``fix`` (how to repair the file)."""
    raw = Path(path).read_bytes()
    try:
        return raw.decode(ENCODING)
    except UnicodeDecodeError as exc:
        data = exc.object                   # the bytes after any byte-order mark, which exc.start counts in
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start:exc.start + 4]
        raise error(f"{path}:{line}: bytes {bad!r} are not UTF-8 ({exc.reason}); {fix}") from None


def not_utf8(text: str) -> str | None:
    """Why ``text`` cannot be written as UTF-8 (a lone surrogate, which a JSON ``\\ud800`` escape can make), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"holds {text[exc.start]!r} at character {exc.start}, a lone surrogate that UTF-8 cannot "
                "encode (a JSON escape such as \\ud800 without its pair)")
    return None


#: How deep a JSON value may nest before its reader names the place; the benchmarks' files nest four levels.
JSON_DEPTH = 500
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def parse_json(text: str, **kwargs):
    """``json.loads(text, **kwargs)``; a value nested too deeply for Python's reader (which would raise a
    ``RecursionError``, a traceback) is a ``json.JSONDecodeError`` at the place it passes :data:`JSON_DEPTH` levels,
    as every other malformed file is reported."""
    try:
        return json.loads(text, **kwargs)
    except RecursionError:
        depth = 0
        for match in _JSON_TOKENS.finditer(text):
            token = match.group()
            if token in "[{":
                depth += 1
                if depth > JSON_DEPTH:
                    raise json.JSONDecodeError(f"nested more than {JSON_DEPTH} levels deep", text,
                                               match.start()) from None
            elif token in "]}":
                depth -= 1
        raise json.JSONDecodeError("nested too deeply to read", text, 0) from None
