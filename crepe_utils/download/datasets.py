"""What a downloadable dataset is, declared as data: a :class:`Dataset` of :class:`RemoteFile` entries.

One :class:`RemoteFile` per file: what it is, where it comes from (URL, mirrors, pinned
revision), how to check it (checksum kind and value, size), how it unpacks (folder, layout),
its licence, and where each fact comes from. One :class:`Dataset` per ``download <name>`` /
``make data-<name>`` target: its files, where it lives (its folder under the data root and the
variable that moves it, :func:`crepe_utils.paths.dataset_dir`), and what it unlocks. Each benchmark
declares its own datasets in its folder, the image sets theirs in :mod:`crepe_utils.imagesets`; the
benchmark registry gathers them into one :class:`Catalogue`, which :mod:`crepe_utils.download` reads
and nothing else: adding a file means adding an entry, never a branch in the downloader.

Entries marked ``released_text`` (small, public, no token) are what ``make all`` fetches when they are
missing (:mod:`crepe_utils.commands.released`).

Two seams let users and tests point the table elsewhere without editing it:

``CREPE_MIRROR``
    a base URL; every file is fetched from ``<mirror>/<file name>`` instead of its table URL
    (mirrors listed in the table are then not tried, and no Hugging Face token is sent: a
    mirror is a plain file server).
``CREPE_DATASETS_OVERRIDE``
    a JSON file mapping an entry name (``python -m crepe_utils download --help`` lists the datasets) to
    the fields to replace, for mirrors with other checksums and for tests, e.g.
    ``{"<entry>": {"url": "http://127.0.0.1:8000/p.zip",
    "checksum": {"kind": "sha256", "value": "…"}, "size": 1234}}`` or, should a pinned
    hub revision lack a file, ``{"<entry>": {"revision": "main"}}``.
    Overrides apply first, then the mirror.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Iterable, Mapping

from .. import paths
from ..errors import DataError, DownloadError
from ..textfile import parse_json, read_text

MIRROR_ENV = "CREPE_MIRROR"
OVERRIDE_ENV = "CREPE_DATASETS_OVERRIDE"

#: checksum kind → length of its hex digest
CHECKSUM_KINDS = {"sha256": 64, "git-blob-sha1": 40}


class DatasetTableError(DownloadError, ValueError):
    """An override or mirror setting that does not fit the table; the message says how to fix it."""


@dataclass(frozen=True)
class Checksum:
    """A published digest. ``git-blob-sha1`` is git's object id: SHA-1 of ``b"blob <len>\\0" + bytes``."""

    kind: str
    value: str

    def __post_init__(self) -> None:
        length = CHECKSUM_KINDS.get(self.kind)
        if length is None:
            raise DatasetTableError(f"unknown checksum kind {self.kind!r}; use one of {sorted(CHECKSUM_KINDS)}")
        if not re.fullmatch(f"[0-9a-f]{{{length}}}", self.value):
            raise DatasetTableError(f"{self.kind} checksum must be {length} lower-case hex digits, "
                                    f"got {self.value!r}")


@dataclass(frozen=True)
class Extraction:
    """How an archive unpacks: its content ends up in ``<destination>/<folder>/``.

    With ``root_required`` every member must sit under ``<folder>/`` in the archive (anything else
    is refused before extraction); without it, an archive of bare files or another root is placed
    under ``<folder>/`` as it is. ``__MACOSX/`` and ``.DS_Store`` entries are always skipped.
    """

    folder: str
    root_required: bool = False

    def __post_init__(self) -> None:
        problem = paths.relative_inside(self.folder, "extract folder")
        if problem:
            raise DatasetTableError(f"{problem}; name a folder under the destination")


#: The note of a file whose source publishes no digest or size (``checksum`` None): what the download does instead.
UNPUBLISHED_DIGEST = ("No checksum or size is published: the sha256 and size of the first download are recorded and "
                      "later runs are checked against that record.")


@dataclass(frozen=True)
class RemoteFile:
    """One downloadable file and everything known about it."""

    name: str                        #: table key, e.g. "crepe-prod"
    dataset: str                     #: the name of the Dataset it belongs to (``download <name>``)
    description: str
    filename: str                    #: name on disk, under the destination folder
    url: str                         #: may contain ``{revision}``
    mirrors: tuple[str, ...] = ()    #: tried in order when the URL fails; may contain ``{revision}``
    revision: str | None = None      #: pinned commit the URL points at
    checksum: Checksum | None = None #: published digest; None: sha256 recorded at first download
    size: int | None = None          #: exact size in bytes, when published
    approx_size: int | None = None   #: for the plan and the disk-space check
    extract: Extraction | None = None
    hub: bool = False                #: Hugging Face hub: token, X-Repo-Commit, X-Linked-Etag
    licence: str = ""
    notes: str = ""
    sources: tuple[str, ...] = ()    #: where the facts above come from
    released_text: bool = False      #: small public text data: `make all` fetches it when missing
    found_as: tuple[str, ...] = ()   #: file-name patterns (any depth under the destination) that also
                                     #: count as present: a copy placed by hand, another layout

    def __post_init__(self) -> None:
        problem = paths.relative_inside(self.filename, "filename")
        if problem is None and "/" in self.filename:
            problem = f"filename {self.filename!r} names a folder: it must be a file name in the destination folder"
        if problem:
            raise DatasetTableError(f"entry {self.name!r}: {problem}")

    def urls(self) -> tuple[str, ...]:
        """The URL then the mirrors, with the revision filled in."""
        return tuple(u.format(revision=self.revision) for u in (self.url,) + self.mirrors)


@dataclass(frozen=True)
class Dataset:
    """One downloadable dataset: ``python -m crepe_utils download <name>``, ``make data-<name>``."""

    name: str
    description: str                 #: one line: what it is and how big
    folder: str                      #: its default folder under the data root ($CREPE_DATA)
    files: tuple[RemoteFile, ...]
    variable: str | None = None      #: the environment variable that moves it (None: only $CREPE_DATA does)
    unlocks: str = ""                #: what having it makes possible, for a person choosing what to fetch
    images: bool = False             #: a set of images (large; read by the engine, never listed or hashed whole)

    def __post_init__(self) -> None:
        strays = [f.name for f in self.files if f.dataset != self.name]
        if strays:
            raise DatasetTableError(f"dataset {self.name!r} holds entries of another dataset: {strays}")
        if self.variable is not None and not paths.FOLDER_VARIABLE.fullmatch(self.variable):
            raise DatasetTableError(f"dataset {self.name!r}: its variable {self.variable!r} must be named "
                                    "<NAME>_DATA or <NAME>_IMAGES, so that a page shows a folder by it")

    def dir(self, explicit: str | os.PathLike | None = None) -> Path:
        """Where it is looked for: ``explicit``, else its variable, else ``<data root>/<folder>``."""
        return paths.dataset_dir(explicit, self.variable, self.folder)

    def existing(self, explicit: str | os.PathLike | None = None) -> Path | None:
        """``explicit`` as given (its reader reports a missing folder precisely), else the default folder
        when it exists, else None: whether there is anything to read."""
        if explicit:
            return Path(explicit)
        found = self.dir()
        return found if found.is_dir() else None

    def missing(self, folder: str | os.PathLike) -> str:
        """The one line for a data folder that is not there, on every benchmark: which folder, why, what brings
        it and how to point at another."""
        gated = "; gated: accept its terms on the Hugging Face hub and set HF_TOKEN first" if self.gated else ""
        where = (f"set {self.variable}" if self.variable else
                 f"set {paths.DATA_ROOT_ENV} to the folder holding {self.folder}/")
        return (f"{self.name} data folder {folder} {paths.not_a_folder(folder)}: `make data-{self.name}` fetches "
                f"it (or `python -m crepe_utils download {self.name} --dest DIR`{gated}); then pass --data-dir DIR "
                f"or {where}")

    def require(self, explicit: str | os.PathLike | None = None) -> Path:
        """:meth:`dir`, or a DataError saying :meth:`missing` when it is not a folder."""
        folder = self.dir(explicit)
        if not folder.is_dir():
            raise DataError(self.missing(folder))
        return folder

    @property
    def gated(self) -> bool:
        return any(f.hub for f in self.files)

    @property
    def moved_by(self) -> str:
        """How a user moves its folder, for messages: its variable, else the data root's."""
        return self.variable or paths.DATA_ROOT_ENV


class Catalogue:
    """Every dataset a command can fetch, in order (the benchmark registry builds the one there is)."""

    def __init__(self, datasets: Iterable[Dataset]):
        self.datasets: dict[str, Dataset] = {}
        for d in datasets:
            if self.datasets.setdefault(d.name, d) is not d:
                raise DatasetTableError(f"two datasets are called {d.name!r}")
        names = [f.name for d in self.datasets.values() for f in d.files]
        if len(names) != len(set(names)):
            raise DatasetTableError(f"entry names repeat across datasets: {sorted({n for n in names if names.count(n) > 1})}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.datasets)

    def get(self, name: str) -> Dataset:
        if name not in self.datasets:
            raise DatasetTableError(f"unknown dataset {name!r}; choose from {', '.join(self.datasets)}")
        return self.datasets[name]

    def files(self) -> tuple[RemoteFile, ...]:
        """Every entry of every dataset, in order."""
        return tuple(f for d in self.datasets.values() for f in d.files)

    def files_for(self, name: str, environ: Mapping[str, str] | None = None) -> list[RemoteFile]:
        """The files of dataset ``name``, with ``CREPE_DATASETS_OVERRIDE`` then ``CREPE_MIRROR`` applied."""
        dataset = self.get(name)
        environ = os.environ if environ is None else environ
        overrides = load_overrides(environ[OVERRIDE_ENV], self.files()) if environ.get(OVERRIDE_ENV) else {}
        mirror = (environ.get(MIRROR_ENV) or "").rstrip("/")
        out = []
        for entry in dataset.files:
            if entry.name in overrides:
                entry = apply_override(entry, overrides[entry.name], environ[OVERRIDE_ENV])
            if mirror:
                entry = replace(entry, url=f"{mirror}/{entry.filename}", mirrors=(), hub=False)
            out.append(entry)
        return out


_OVERRIDABLE = {f.name for f in fields(RemoteFile)} - {"name", "dataset"}


def load_overrides(path: str | os.PathLike, entries: Iterable[RemoteFile]) -> dict[str, dict]:
    """Read an override file (see the module docstring) and check its entry names."""
    path = Path(path)
    try:
        data = parse_json(read_text(path, f"re-save {OVERRIDE_ENV}'s file as UTF-8", DatasetTableError))
    except FileNotFoundError:
        raise DatasetTableError(f"{OVERRIDE_ENV} points to {path}, which does not exist; "
                                f"unset it or create the file") from None
    except json.JSONDecodeError as exc:
        raise DatasetTableError(f"{path} ({OVERRIDE_ENV}) is not valid JSON: {exc}") from None
    known = {f.name for f in entries}
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise DatasetTableError(f"{path} ({OVERRIDE_ENV}) must map entry names to objects of fields, "
                                'e.g. {"crepe-prod": {"url": "..."}}')
    unknown = sorted(set(data) - known)
    if unknown:
        raise DatasetTableError(f"{path} ({OVERRIDE_ENV}) names unknown entries {unknown}; "
                                f"known: {sorted(known)}")
    return data


def apply_override(entry: RemoteFile, changes: Mapping, source: str = "override") -> RemoteFile:
    """``entry`` with the fields in ``changes`` replaced (JSON values converted to the field types)."""
    unknown = sorted(set(changes) - _OVERRIDABLE)
    if unknown:
        raise DatasetTableError(f"{source}: entry {entry.name!r} has unknown field(s) {unknown}; "
                                f"allowed: {sorted(_OVERRIDABLE)}")
    converted = dict(changes)
    try:
        if converted.get("checksum") is not None:
            converted["checksum"] = Checksum(**converted["checksum"])
        if converted.get("extract") is not None:
            converted["extract"] = Extraction(**converted["extract"])
    except (TypeError, DatasetTableError) as exc:
        raise DatasetTableError(f"{source}: entry {entry.name!r}: {exc}") from None
    if "mirrors" in converted:
        converted["mirrors"] = tuple(converted["mirrors"])
    try:
        return replace(entry, **converted)
    except DatasetTableError as exc:          # a filename that would leave the destination
        raise DatasetTableError(f"{source}: {exc}") from None
