"""SugarCrepe's released data: its seven JSONs, pinned (sha256 and exact size). Its images are COCO val2017's
(:mod:`crepe_utils.imagesets.coco`)."""
from __future__ import annotations

from ...download.datasets import Checksum, Dataset, RemoteFile

#: RAIVNLab/sugar-crepe main at 2024-02-13; data/ unchanged since 546eb51 (2023-11-18)
SUGARCREPE_COMMIT = "0047054b243992f0fad63d6f64f7544862daf846"
_SC_RAW = "https://raw.githubusercontent.com/RAIVNLab/sugar-crepe/{revision}/data/"
_SC_GITHUB = "https://github.com/RAIVNLab/sugar-crepe/raw/{revision}/data/"
_SC_SOURCES = (
    "RAIVNLab/sugar-crepe@0047054 data/*.json (last changed in 546eb51, 2023-11-18, \"remove a test case with "
    "incorrect caption\"); README: the images are COCO-2017 val",
    "sha256 and sizes: computed from the released files (git blob ids equal to the commit's)",
    "images: RAIVNLab/sugar-crepe README: SugarCrepe uses the images of the COCO-2017 validation set",
)
_SC_NOTES = ("JSON object: index -> {filename, caption, negative_caption}; filename names a COCO val2017 image, "
             "which is not part of this file.")
_SC_LICENCE = "MIT (LICENSE of RAIVNLab/sugar-crepe)"


def _sugarcrepe(subset: str, triples: int, sha256: str, size: int) -> RemoteFile:
    """One of SugarCrepe's seven JSONs (``subset`` as in its file name)."""
    return RemoteFile(
        name=f"sugarcrepe-{subset.replace('_', '-')}", dataset="sugarcrepe",
        description=f"SugarCrepe {subset}: {triples:,} image-caption-negative triples (COCO val2017 file names)",
        filename=f"{subset}.json", url=_SC_RAW + f"{subset}.json", mirrors=(_SC_GITHUB + f"{subset}.json",),
        revision=SUGARCREPE_COMMIT, checksum=Checksum("sha256", sha256), size=size,
        licence=_SC_LICENCE, notes=_SC_NOTES, sources=_SC_SOURCES, released_text=True,
    )


SUGARCREPE_JSONS = Dataset(
    name="sugarcrepe", folder="sugarcrepe", variable="SUGARCREPE_DATA",
    description="SugarCrepe's seven JSONs (1.7 MB)",
    unlocks="SugarCrepe's data checks and the blind scorers on it; evaluation (with COCO val2017's images)",
    files=(
        _sugarcrepe("add_att", 692, "012d88d729693d193760e6f3393b06a1cf874380a9db0062e937201199fe044d", 158_863),
        _sugarcrepe("add_obj", 2062, "1b9d76b93139a937b8dc1ada92a4f05ecc821bb3c291d752428bafadd4bb0682", 484_593),
        _sugarcrepe("replace_att", 788, "9fe55fd4c0a9ad1f85d486d9f6d0215b41f867eb025026e7f7b5ce44352545ee", 176_843),
        _sugarcrepe("replace_obj", 1652, "9d299600639947e9d15281a9ded1382b376cf4ea088a8d08a1314bfe76e81898", 361_126),
        _sugarcrepe("replace_rel", 1406, "356bcc2fc4c6aed3f4d9fd50acc58489bb1fe70c28791f9368d4cbf9ea39cdc9", 312_629),
        _sugarcrepe("swap_att", 666, "7a7ce04e5c4c80412b48c6f0c1347fb1a2f5d54c0be6aa429b64d390e442f8d0", 154_665),
        _sugarcrepe("swap_obj", 245, "073cdb8e253d053614e80710834d9773b09dbc1dd0a412f6f9492262caa1dcad", 57_569),
    ),
)
