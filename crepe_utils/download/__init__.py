"""Resumable, verified downloads of the files in :mod:`crepe_utils.download.datasets` (``make data``).

The machinery of ``python -m crepe_utils download <dataset>`` (the command: :mod:`crepe_utils.commands.download`).
For each file of the dataset a run goes through these steps; an interrupted run resumes at the
step it stopped in, and nothing unverified is ever given a final name:

1. **State on disk** (:mod:`.plan`). ``<dest>/<folder>/`` with a matching extraction marker: done.
   The folder without a marker: placed by hand, left alone. The file with a matching entry (size
   and mtime) in ``<dest>/download_record.json``: verified, not hashed again. Any other copy of the
   file: hashed and checked (a mismatch is moved aside as ``<name>.bad``). ``<name>.part``: resumed.
2. **Plan** (:mod:`.plan`). What, how big, where; free disk space checked (downloads plus
   extraction, with a margin); confirmation asked on a terminal unless ``--yes``.
3. **Download** (:mod:`.transport`) into ``<name>.part`` (next to it ``<name>.part.json``: URL,
   validator, size). Interruptions are retried, then resumed with HTTP ``Range`` + ``If-Range``; a
   server that ignores the range (200) or a remote file that changed restarts from zero.
4. **Verification** (:mod:`.verification`) against the pinned checksum, else the sha256 recorded at
   the first download, plus the hub's ``X-Linked-Etag``; archives must also open as zips. Only then
   the file is renamed to its final name and recorded; on a mismatch the download is deleted.
5. **Extraction** (:mod:`.extraction`) into ``<dest>/.crepe-extract-*``; a marker
   (``.crepe_extracted.json``) is written inside, and one rename moves the folder into place.
   Leftovers of an interrupted extraction are deleted by the next run.

:mod:`.downloader` runs these steps in order. ``download --released-text`` (:mod:`crepe_utils.commands.released`, ``make all``'s
first step) runs them for the small public text files that are missing, and only says what is missing when
it cannot fetch them (offline, a folder arranged by hand). Files on the hub may be gated: the token comes from
``HF_TOKEN``, ``HUGGING_FACE_HUB_TOKEN`` or the file written by ``huggingface-cli login``; it is sent
only to the URL's own host (never along a redirect to another host, nor to a ``CREPE_MIRROR``).
Standard library only (urllib), plus tqdm bars.
"""
from __future__ import annotations

import importlib

from ..errors import DownloadError

#: name → the module that holds it, imported on first use: a dataset's declaration (``.datasets``) needs none of
#: the machinery, so importing it stays light
_LAZY = {"Downloader": "downloader", "MARKER_NAME": "extraction", "RECORD_NAME": "verification"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DownloadError", "Downloader", "MARKER_NAME", "RECORD_NAME"]
