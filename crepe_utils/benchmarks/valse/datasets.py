"""VALSE's released data: its eleven JSONs, pinned (sha256 and exact size). The images are each piece's source
dataset's (:mod:`crepe_utils.imagesets`: Visual7W, SWiG, COCO 2017 and 2014, Visual Dialog)."""
from __future__ import annotations

from ...download.datasets import Checksum, Dataset, RemoteFile

#: Heidelberg-NLP/VALSE main at 2024-02-15 ("Fix foil probability in output dictionary"); data/ unchanged since
#: a64f89e ("Publish data", 2021-12-15)
VALSE_COMMIT = "2152d90d4aecd11f7f74cf03420abcb63efff9c5"
_RAW = "https://raw.githubusercontent.com/Heidelberg-NLP/VALSE/{revision}/data/"
_GITHUB = "https://github.com/Heidelberg-NLP/VALSE/raw/{revision}/data/"
_SOURCES = (
    "Heidelberg-NLP/VALSE@2152d90 data/*.json; README: the valid set is mturk.caption >= 2; images: follow each "
    "original dataset's instructions (the dataset field)",
    "sha256 and sizes: computed from the released files (git blob ids equal to the commit's)",
)
_NOTES = ("JSON object: item id -> {dataset, image_file, caption, foil, mturk, ...}; the images are not part of "
          "these files.")
_LICENCE = "MIT (LICENSE of Heidelberg-NLP/VALSE)"


def _piece(piece: str, items: int, sha256: str, size: int) -> RemoteFile:
    """One of VALSE's eleven JSONs."""
    return RemoteFile(
        name=f"valse-{piece}", dataset="valse",
        description=f"VALSE {piece}: {items:,} caption-foil items (valid and not yet validated)",
        filename=f"{piece}.json", url=_RAW + f"{piece}.json", mirrors=(_GITHUB + f"{piece}.json",),
        revision=VALSE_COMMIT, checksum=Checksum("sha256", sha256), size=size,
        licence=_LICENCE, notes=_NOTES, sources=_SOURCES, released_text=True,
    )


VALSE_JSONS = Dataset(
    name="valse", folder="valse", variable="VALSE_DATA",
    description="VALSE's eleven JSONs (6 MB)",
    unlocks="VALSE's data checks and the blind scorers on it; evaluation (with its pieces' image sets)",
    files=(
        _piece("existence", 534, "b20fca52eba86c544083d423345a2e28e60e601ef61c56c9ac1c73a95a3a6d18", 420_403),
        _piece("plurals", 1000, "43760db7fc8c6f2a21d3536d52f81539cb101f3370e8d2effb09de43d91486a3", 1_097_122),
        _piece("counting-hard", 1000, "2cc83615653675fb50914ce2d8ab4041cce1278eed7ac0abf6f319dbce5c967a", 537_197),
        _piece("counting-small-quant", 1000, "ca0645885b05738f6c6df2dffec70c669aaff64114017f33425821faab4bc374", 534_996),
        _piece("counting-adversarial", 756, "0d23529308449c98b37a91048a865a5f377325eceb9accd73f2947bc512d12b0", 407_394),
        _piece("relations", 614, "061fc557459c318ccd6734d07c21cfa5bf5ae87aa6b1110b8f5ec3d6b2911043", 664_587),
        _piece("action-replacement", 779, "336ba134f29a3475d0508809067218909a6bd30f079c59309d19244eccb7917f", 664_129),
        _piece("actant-swap", 1042, "915294ac3ade7c4c067b1c6841d0db93b60cb8a61ac8e2fb6b125c2a1c0ca93a", 503_017),
        _piece("coreference-standard", 916, "dae1d9eb018acb54e29a1c4983f3563f86ec3b6beb4037a261564270b0473e95", 592_329),
        _piece("coreference-hard", 141, "ef54d8d971d9e0f264e07de08d9915c6e3d6129a2f239888f2b938f5c2eb4139", 95_649),
        _piece("foil-it", 1000, "6f6f0d7494271ed28f6e6f075c3ba36ba1bc45d00ecf7403920f060915130460", 538_911),
    ),
)
