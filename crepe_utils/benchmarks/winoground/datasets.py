"""Winoground's data: 400 examples and 800 images, gated on the Hugging Face hub, pinned to a revision."""
from __future__ import annotations

from ...download.datasets import Dataset, Extraction, RemoteFile

#: the revision mteb's Winoground task pins since embeddings-benchmark/mteb#1391, which replaced an
#: earlier pin that was not a Winoground commit
WINOGROUND_REVISION = "b400e173549071916ad1b3d449293bc8d8b4b763"
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

WINOGROUND_FILES = Dataset(
    name="winoground", folder="winoground", variable="WINOGROUND_DATA",
    description="Winoground: 400 examples, 800 images; gated on the Hugging Face hub (needs HF_TOKEN)",
    unlocks="Winoground's data checks and evaluation (text, image and group scores)",
    files=(
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
    ),
)
