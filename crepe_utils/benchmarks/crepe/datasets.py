"""CREPE's released data: the two archives of hard-negative CSVs (systematicity, productivity), pinned.

The images are Visual Genome's (:mod:`crepe_utils.imagesets.visual_genome`).
"""
from __future__ import annotations

from ...download.datasets import Checksum, Dataset, Extraction, RemoteFile

CREPE_COMMIT = "1fa81c425f442396fe304f170c8eb6dc0747c814"
_CREPE_RAW = "https://raw.githubusercontent.com/RAIVNLab/CREPE/{revision}/data/"
_CREPE_GITHUB = "https://github.com/RAIVNLab/CREPE/raw/{revision}/data/"
_CREPE_SOURCES = (
    "RAIVNLab/CREPE@1fa81c4 data/ (added in 48c6bae, 2023-04-27; same blobs at HEAD)",
)
_CREPE_NOTES = ("Plain git blobs (no LFS); size unknown, at least 4 MiB. Whether the archive has a "
                "top folder is not established: either way the content lands in the folder above.")
_CREPE_LICENCE = "not stated in the sources used here; see the RAIVNLab/CREPE repository"

CREPE_CSVS = Dataset(
    name="crepe", folder="crepe",
    description="CREPE's hard-negative CSVs (two zips: systematicity and productivity, a few MB)",
    unlocks="CREPE's productivity and systematicity queries: the data checks, the blind scorers on CREPE, "
            "evaluation (with Visual Genome's images)",
    files=(
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
    ),
)
