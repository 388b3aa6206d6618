"""The package's error types: one base class, so every command can catch a user error in one place.

A :class:`CrepeError` always means bad or missing input (data, images, a model file or name) and its
message says what was found, what was expected and how to fix it; commands print it as one error
and exit non-zero. Anything else escaping is a bug in this package.
"""
from __future__ import annotations

import os
import sys
from typing import Callable

#: set to 1 to see the traceback of a user error (CrepeError or OSError) instead of its one line
TRACEBACK_ENV = "CREPE_TRACEBACK"


class CrepeError(Exception):
    """Base of every error this package raises for input it cannot use."""


class DataError(CrepeError, ValueError):
    """Bad or missing benchmark data; the message says which file and row, and how to fix it."""


class ModelError(CrepeError, ValueError):
    """A model that cannot be built or used as asked (unknown name, tag, file, config, or its output)."""


class DownloadError(CrepeError, RuntimeError):
    """A download that cannot complete; the message names the URL or file and how to fix it."""


class DeviceError(CrepeError, ValueError):
    """A device string that names no usable device (``--device``, ``--devices``); the message lists what works."""


def error_line(exc: BaseException | str) -> str:
    """``error: <message>`` on one line, as every command prints a user error to stderr.

    A message written over several lines (a list of the URLs tried, of bad rows) keeps its parts,
    joined by ``; `` (or a space after a line ending in a colon).
    """
    parts = [line.strip() for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
    text = parts[0]
    for part in parts[1:]:
        text += (" " if text.endswith(":") else "; ") + part
    return f"error: {text}"


def exit_status(run: Callable[[], int | None]) -> int:
    """``run()``'s exit status, with the one error boundary of every command around it.

    A user error (:class:`CrepeError`; an :class:`OSError` names the file or folder it could not read
    or write) is printed as one line and exits 1, since its message says what to fix; with
    ``CREPE_TRACEBACK=1`` it propagates with its traceback. Anything else is a bug and propagates.
    """
    try:
        return int(run() or 0)
    except (CrepeError, OSError) as exc:
        if os.environ.get(TRACEBACK_ENV):
            raise
        print(error_line(exc), file=sys.stderr)
        return 1
