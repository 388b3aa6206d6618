"""The package's error types: one base class, so every command can catch a user error in one place.

A :class:`CrepeError` always means bad or missing input (data, images, a model file or name) and its
message says what was found, what was expected and how to fix it; commands print it as one error
and exit non-zero. Anything else escaping is a bug in this package.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import warnings
from typing import Callable, Iterator

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


class DiskFullError(CrepeError, OSError):
    """A write that found the disk (or quota) full; the message names what was being written, where, and,
    where known, how much it needed and how much is free. It is an :class:`OSError` (``errno`` ENOSPC), so
    code that tolerates a failed write (a checksum cache) tolerates this one too."""

    def __init__(self, message: str):
        super().__init__(errno.ENOSPC, message)

    def __str__(self) -> str:
        return str(self.strerror)

    def __reduce__(self):
        return type(self), (self.strerror,)


class UnwritableError(CrepeError, OSError):
    """A write that could not create its file or folder (a file stands where a folder must be, no permission, a
    read-only file system); the message names what was being written, where, and why. An :class:`OSError` with the
    original ``errno``, as :class:`DiskFullError` is."""

    def __init__(self, message: str, code: int = errno.EACCES):
        super().__init__(code, message)

    def __str__(self) -> str:
        return str(self.strerror)

    def __reduce__(self):
        return type(self), (self.strerror, self.errno)


class CrepeWarning(UserWarning):
    """Base of the package's warnings: something a run left out or could not do that its user must know
    (a damaged result left out, a set with nothing scored); a command prints each as one ``warning:`` line."""


def _joined(exc: BaseException | str) -> str:
    parts = [line.strip() for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
    text = parts[0]
    for part in parts[1:]:
        text += (" " if text.endswith(":") else "; ") + part
    return text


def error_line(exc: BaseException | str) -> str:
    """``error: <message>`` on one line, as every command prints a user error to stderr.

    A message written over several lines (a list of the URLs tried, of bad rows) keeps its parts,
    joined by ``; `` (or a space after a line ending in a colon).
    """
    return f"error: {_joined(exc)}"


def warning_line(message: Warning | str) -> str:
    """``warning: <message>`` on one line, as every command prints a :class:`CrepeWarning`."""
    return f"warning: {_joined(message)}"


#: what a command interrupted by Ctrl-C says (every output is written atomically; caches keep finished shards)
INTERRUPTED = ("interrupted: nothing half-written is left (each output is written whole or not at all); "
               "run the command again to resume")


@contextlib.contextmanager
def one_line_warnings() -> Iterator[None]:
    """Within the block, the package's warnings (:class:`CrepeWarning`) are printed as one ``warning:`` line each
    (others as Python prints them): what a command, or a worker process of one, shows its user."""
    with warnings.catch_warnings():
        default = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, CrepeWarning):
                print(warning_line(message), file=file or sys.stderr, flush=True)
            else:
                default(message, category, filename, lineno, file, line)
        warnings.showwarning = show
        yield


def _reader_left() -> bool:
    """Whether stdout is a pipe whose reader has gone (``... | head``); if so stdout is pointed at the null
    device, so that the interpreter's last flush does not fail again."""
    try:
        if not stat.S_ISFIFO(os.fstat(sys.stdout.fileno()).st_mode):
            return False
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
        return True
    except (OSError, ValueError, AttributeError):   # no real stdout (a notebook, a test's capture)
        return False


def exit_status(run: Callable[[], int | None]) -> int:
    """``run()``'s exit status, with the one error boundary of every command around it.

    A user error (:class:`CrepeError`; an :class:`OSError` names the file or folder it could not read
    or write) is printed as one line and exits 1, since its message says what to fix; with
    ``CREPE_TRACEBACK=1`` it propagates with its traceback. Ctrl-C prints :data:`INTERRUPTED` and exits
    130; a reader that stops reading stdout (``| head``) ends the command quietly, with status 141. The package's warnings (:class:`CrepeWarning`) are printed as one ``warning:`` line each.
    Anything else is a bug and propagates.
    """
    for stream in (sys.stdout, sys.stderr):   # a path of bytes that are not UTF-8 is printed escaped, not fatal
        if hasattr(stream, "reconfigure") and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")
    with one_line_warnings():
        try:
            return int(run() or 0)
        except BrokenPipeError:
            if not _reader_left():
                raise
            return 141                          # as a shell tool SIGPIPE ends: the reader (`| head`) stopped
        except (CrepeError, OSError) as exc:
            if os.environ.get(TRACEBACK_ENV):
                raise
            print(error_line(exc), file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            if os.environ.get(TRACEBACK_ENV):
                raise
            print(INTERRUPTED, file=sys.stderr)
            return 130
