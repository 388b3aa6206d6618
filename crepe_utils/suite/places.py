"""Where each dataset goes without ``--dest``, and the variable that moves it (see :mod:`crepe_utils.paths`)."""
from __future__ import annotations

from pathlib import Path

from .. import paths

#: the variable that moves each dataset's default folder (see :mod:`crepe_utils.paths`)
DEST_VARIABLES = {"crepe": "CREPE_DATA", "vg": "VG_IMAGES", "winoground": "WINOGROUND_DATA",
                  "sugarcrepe": "SUGARCREPE_DATA", "coco": "COCO_IMAGES"}


def default_destination(dataset: str) -> Path:
    """Where ``dataset`` goes without ``--dest`` (see :mod:`crepe_utils.paths`)."""
    return {"crepe": paths.data_root() / "crepe", "vg": paths.vg_images_dir(),
            "winoground": paths.winoground_dir(), "sugarcrepe": paths.sugarcrepe_dir(),
            "coco": paths.coco_images_dir()}[dataset]
