"""Every downloadable file of the project, described once, as data.

One :class:`RemoteFile` per file: what it is, where it comes from (URL, mirrors, pinned
revision), how to check it (checksum kind and value, size), how it unpacks (folder, layout),
its licence, and where each fact comes from. :mod:`crepe_utils.download` reads this table and
nothing else; adding a file means adding an entry, never a branch in the downloader.

=================  ======================================================================
dataset            files
=================  ======================================================================
``crepe``          ``syst_hard_negatives.zip``, ``prod_hard_negatives.zip`` (git blob SHA-1)
``vg``             ``images.zip`` → ``VG_100K/``, ``images2.zip`` → ``VG_100K_2/`` (no
                   published checksum: sha256 recorded at the first download)
``winoground``     ``examples.jsonl``, ``images.zip`` → ``images/`` (gated on the Hugging
                   Face hub; sha256 recorded at the first download, checked against the
                   hub's ``X-Linked-Etag`` where it sends one)
``sugarcrepe``     ``{add_att,add_obj,replace_att,replace_obj,replace_rel,swap_att,swap_obj}.json``
                   (sha256 and exact size pinned). Its images are the next dataset.
``coco``           ``val2017.zip`` → ``val2017/`` (COCO 2017 validation images, 5,000 JPEGs;
                   no published checksum: sha256 recorded at the first download)
=================  ======================================================================

Entries marked ``released_text`` (CREPE's two archives, SugarCrepe's JSONs: small, public, no
token) are what ``make all`` fetches when they are missing (:mod:`.released`).

Two seams let users and tests point the table elsewhere without editing it:

``CREPE_MIRROR``
    a base URL; every file is fetched from ``<mirror>/<file name>`` instead of its table URL
    (mirrors listed in the table are then not tried, and no Hugging Face token is sent: a
    mirror is a plain file server).
``CREPE_DATASETS_OVERRIDE``
    a JSON file mapping an entry name (``crepe-prod``, ``winoground-images``, …) to the fields
    to replace, for mirrors with other checksums and for tests, e.g.
    ``{"crepe-prod": {"url": "http://127.0.0.1:8000/p.zip",
    "checksum": {"kind": "sha256", "value": "…"}, "size": 1234}}`` or, should the pinned
    Winoground revision lack a file, ``{"winoground-images": {"revision": "main"}}``.
    Overrides apply first, then the mirror.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Mapping

from ..errors import DownloadError
from ..textfile import read_text

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


@dataclass(frozen=True)
class RemoteFile:
    """One downloadable file and everything known about it."""

    name: str                        #: table key, e.g. "crepe-prod"
    dataset: str                     #: the CLI group: crepe, vg, winoground, sugarcrepe or coco
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

    def urls(self) -> tuple[str, ...]:
        """The URL then the mirrors, with the revision filled in."""
        return tuple(u.format(revision=self.revision) for u in (self.url,) + self.mirrors)


CREPE_COMMIT = "1fa81c425f442396fe304f170c8eb6dc0747c814"
#: the revision mteb's Winoground task pins since embeddings-benchmark/mteb#1391, which replaced an
#: earlier pin that was not a Winoground commit
WINOGROUND_REVISION = "b400e173549071916ad1b3d449293bc8d8b4b763"

_CREPE_RAW = "https://raw.githubusercontent.com/RAIVNLab/CREPE/{revision}/data/"
_CREPE_GITHUB = "https://github.com/RAIVNLab/CREPE/raw/{revision}/data/"
_CREPE_SOURCES = (
    "RAIVNLab/CREPE@1fa81c4 data/ (added in 48c6bae, 2023-04-27; same blobs at HEAD)",
)
_CREPE_NOTES = ("Plain git blobs (no LFS); size unknown, at least 4 MiB. Whether the archive has a "
                "top folder is not established: either way the content lands in the folder above.")
_CREPE_LICENCE = "not stated in the sources used here; see the RAIVNLab/CREPE repository"

_VG_BASE = "https://cs.stanford.edu/people/rak248/VG_100K_2/"
_VG_SOURCES = (
    "URLs: Hugging Face loading script ranjaykrishna/visual_genome visual_genome.py (_BASE_IMAGE_URLS)",
    "sizes: huggingface.co/datasets/BoyangZ/VisualGenome_VG_100K_1_and_2 (a mirror; official sizes unknown)",
)
_VG_NOTES = ("No checksum is published anywhere known: the sha256 and size of the first download are "
             "recorded and later runs are checked against that record. Both zips sit under "
             ".../VG_100K_2/, even part 1. CREPE's README also links a Google Drive folder "
             "(not fetchable without a browser).")
_VG_LICENCE = "CC BY 4.0 (dataset card of ranjaykrishna/visual_genome on the Hugging Face hub)"

_WG_RESOLVE = "https://huggingface.co/datasets/facebook/winoground/resolve/{revision}/data/"
_WG_SOURCES = (
    "layout and gating: the dataset card of facebook/winoground on the Hugging Face hub (captions in "
    "data/examples.jsonl, images in data/images.zip)",
    "revision: mteb Winoground TaskMetadata after embeddings-benchmark/mteb#1391",
)
_WG_NOTES = ("Pinned to mteb's revision. That revision is reported in parquet form by some users and with "
             "data/examples.jsonl + data/images.zip by one pinned third-party fetcher: that both layouts "
             "sit at it is not verified here. On HTTP 404 override the revision (see module doc) and the "
             "resolved commit (X-Repo-Commit) is recorded. No checksum is published: the sha256 of the "
             "first download is recorded (and checked against the hub's X-Linked-Etag for LFS files).")
_WG_LICENCE = ("gated: accept the terms on the dataset page; research use only, full agreement in the "
               "dataset's license_agreement.txt; do not redistribute the images")
#: the hub's current layout, which the Winoground loader reads as well (like the others in a data/ sub-folder)
_WG_PARQUET = ("test-*.parquet",)

#: RAIVNLab/sugar-crepe main at 2024-02-13; data/ unchanged since 546eb51 (2023-11-18)
SUGARCREPE_COMMIT = "0047054b243992f0fad63d6f64f7544862daf846"
_SC_RAW = "https://raw.githubusercontent.com/RAIVNLab/sugar-crepe/{revision}/data/"
_SC_GITHUB = "https://github.com/RAIVNLab/sugar-crepe/raw/{revision}/data/"
_SC_SOURCES = (
    "RAIVNLab/sugar-crepe@0047054 data/*.json (last changed in 546eb51, 2023-11-18, \"remove a test case with "
    "incorrect caption\"); README: the images are COCO-2017 val",
    "sha256 and sizes: computed from the released files (git blob ids equal to the commit's)",
)
_SC_NOTES = ("JSON object: index -> {filename, caption, negative_caption}; filename names a COCO val2017 image, "
             "which is not part of this file.")
_SC_LICENCE = "MIT (LICENSE of RAIVNLab/sugar-crepe)"


_COCO_SOURCES = (
    "URL: cocodataset.org/#download (2017 Val images [5K/1GB]); RAIVNLab/sugar-crepe README: SugarCrepe uses "
    "the images of the COCO-2017 validation set",
    "approximate size: 815,585,330 bytes, the Content-Length public download logs of this URL show (COCO publishes "
    "none)",
)
_COCO_NOTES = ("No checksum is published: the sha256 and size of the first download are recorded and later runs "
               "are checked against that record. The archive holds val2017/<12-digit id>.jpg.")
_COCO_LICENCE = ("COCO images: Flickr terms of use, each image under its own Creative Commons licence "
                 "(cocodataset.org/#termsofuse)")


def _sugarcrepe(subset: str, triples: int, sha256: str, size: int) -> RemoteFile:
    """One of SugarCrepe's seven JSONs (``subset`` as in its file name)."""
    return RemoteFile(
        name=f"sugarcrepe-{subset.replace('_', '-')}", dataset="sugarcrepe",
        description=f"SugarCrepe {subset}: {triples:,} image-caption-negative triples (COCO val2017 file names)",
        filename=f"{subset}.json", url=_SC_RAW + f"{subset}.json", mirrors=(_SC_GITHUB + f"{subset}.json",),
        revision=SUGARCREPE_COMMIT, checksum=Checksum("sha256", sha256), size=size,
        licence=_SC_LICENCE, notes=_SC_NOTES, sources=_SC_SOURCES, released_text=True,
    )


FILES: tuple[RemoteFile, ...] = (
    RemoteFile(
        name="crepe-syst", dataset="crepe",
        description="CREPE systematicity hard negatives (6 CSVs: {seen,unseen}_compounds × {cc12m,yfcc,laion})",
        filename="syst_hard_negatives.zip",
        url=_CREPE_RAW + "syst_hard_negatives.zip", mirrors=(_CREPE_GITHUB + "syst_hard_negatives.zip",),
        revision=CREPE_COMMIT,
        checksum=Checksum("git-blob-sha1", "54eebe3a52eaacd978a08f2a5c1aaa7e53b82b4b"),
        extract=Extraction("syst_hard_negatives"),
        licence=_CREPE_LICENCE, notes=_CREPE_NOTES, sources=_CREPE_SOURCES,
        released_text=True, found_as=("syst_vg_hard_negs_*.csv",),
    ),
    RemoteFile(
        name="crepe-prod", dataset="crepe",
        description="CREPE productivity hard negatives ({atom,swap,negate}/…_complexity_{4..12}.csv, *_all.csv)",
        filename="prod_hard_negatives.zip",
        url=_CREPE_RAW + "prod_hard_negatives.zip", mirrors=(_CREPE_GITHUB + "prod_hard_negatives.zip",),
        revision=CREPE_COMMIT,
        checksum=Checksum("git-blob-sha1", "e73068643923319ab8bd38a43404a34221d41b41"),
        extract=Extraction("prod_hard_negatives"),
        licence=_CREPE_LICENCE, notes=_CREPE_NOTES, sources=_CREPE_SOURCES,
        released_text=True, found_as=("prod_vg_hard_negs_*_complexity_*.csv",),
    ),
    RemoteFile(
        name="vg-images-1", dataset="vg",
        description="Visual Genome 1.2 images, part 1",
        filename="images.zip", url=_VG_BASE + "images.zip",
        approx_size=9_730_000_000, extract=Extraction("VG_100K", root_required=True),
        licence=_VG_LICENCE, notes=_VG_NOTES, sources=_VG_SOURCES,
    ),
    RemoteFile(
        name="vg-images-2", dataset="vg",
        description="Visual Genome 1.2 images, part 2",
        filename="images2.zip", url=_VG_BASE + "images2.zip",
        approx_size=5_470_000_000, extract=Extraction("VG_100K_2", root_required=True),
        licence=_VG_LICENCE, notes=_VG_NOTES, sources=_VG_SOURCES,
    ),
    RemoteFile(
        name="winoground-examples", dataset="winoground",
        description="Winoground examples (400 JSON lines: captions, tags, image stems)",
        filename="examples.jsonl", url=_WG_RESOLVE + "examples.jsonl",
        revision=WINOGROUND_REVISION, hub=True, found_as=("examples.jsonl",) + _WG_PARQUET,
        licence=_WG_LICENCE, notes=_WG_NOTES, sources=_WG_SOURCES,
    ),
    RemoteFile(
        name="winoground-images", dataset="winoground",
        description="Winoground images (800 files images/ex_{id}_img_{0,1}.png)",
        filename="images.zip", url=_WG_RESOLVE + "images.zip",
        revision=WINOGROUND_REVISION, hub=True, extract=Extraction("images"),
        found_as=("images", "images.zip") + _WG_PARQUET,
        licence=_WG_LICENCE, notes=_WG_NOTES, sources=_WG_SOURCES,
    ),
    # SugarCrepe: sha256 and sizes computed from the released files, whose git blob ids equal those
    # of data/*.json at the pinned commit.
    _sugarcrepe("add_att", 692, "012d88d729693d193760e6f3393b06a1cf874380a9db0062e937201199fe044d", 158_863),
    _sugarcrepe("add_obj", 2062, "1b9d76b93139a937b8dc1ada92a4f05ecc821bb3c291d752428bafadd4bb0682", 484_593),
    _sugarcrepe("replace_att", 788, "9fe55fd4c0a9ad1f85d486d9f6d0215b41f867eb025026e7f7b5ce44352545ee", 176_843),
    _sugarcrepe("replace_obj", 1652, "9d299600639947e9d15281a9ded1382b376cf4ea088a8d08a1314bfe76e81898", 361_126),
    _sugarcrepe("replace_rel", 1406, "356bcc2fc4c6aed3f4d9fd50acc58489bb1fe70c28791f9368d4cbf9ea39cdc9", 312_629),
    _sugarcrepe("swap_att", 666, "7a7ce04e5c4c80412b48c6f0c1347fb1a2f5d54c0be6aa429b64d390e442f8d0", 154_665),
    _sugarcrepe("swap_obj", 245, "073cdb8e253d053614e80710834d9773b09dbc1dd0a412f6f9492262caa1dcad", 57_569),
    # SugarCrepe's images (large: never released_text)
    RemoteFile(
        name="coco-val2017", dataset="coco",
        description="COCO 2017 validation images (5,000 JPEGs val2017/<12-digit id>.jpg; SugarCrepe's images)",
        filename="val2017.zip", url="http://images.cocodataset.org/zips/val2017.zip",
        approx_size=815_585_330, extract=Extraction("val2017", root_required=True),
        licence=_COCO_LICENCE, notes=_COCO_NOTES, sources=_COCO_SOURCES,
    ),
)

DATASETS: tuple[str, ...] = tuple(dict.fromkeys(f.dataset for f in FILES))

_OVERRIDABLE = {f.name for f in fields(RemoteFile)} - {"name", "dataset"}


def files_for(dataset: str, environ: Mapping[str, str] | None = None) -> list[RemoteFile]:
    """The files of ``dataset``, with ``CREPE_DATASETS_OVERRIDE`` then ``CREPE_MIRROR`` applied."""
    if dataset not in DATASETS:
        raise DatasetTableError(f"unknown dataset {dataset!r}; choose from {', '.join(DATASETS)}")
    environ = os.environ if environ is None else environ
    overrides = load_overrides(environ[OVERRIDE_ENV]) if environ.get(OVERRIDE_ENV) else {}
    mirror = (environ.get(MIRROR_ENV) or "").rstrip("/")
    out = []
    for entry in FILES:
        if entry.dataset != dataset:
            continue
        if entry.name in overrides:
            entry = apply_override(entry, overrides[entry.name], environ[OVERRIDE_ENV])
        if mirror:
            entry = replace(entry, url=f"{mirror}/{entry.filename}", mirrors=(), hub=False)
        out.append(entry)
    return out


def load_overrides(path: str | os.PathLike) -> dict[str, dict]:
    """Read an override file (see the module docstring) and check its entry names."""
    path = Path(path)
    try:
        data = json.loads(read_text(path, f"re-save {OVERRIDE_ENV}'s file as UTF-8", DatasetTableError))
    except FileNotFoundError:
        raise DatasetTableError(f"{OVERRIDE_ENV} points to {path}, which does not exist; "
                                f"unset it or create the file") from None
    except json.JSONDecodeError as exc:
        raise DatasetTableError(f"{path} ({OVERRIDE_ENV}) is not valid JSON: {exc}") from None
    known = {f.name for f in FILES}
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
    return replace(entry, **converted)
