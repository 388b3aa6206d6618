"""Where the data live. No path in this package is hard-coded beyond these defaults.

Resolution order, for each location: an explicit argument (function parameter, CLI flag,
notebook parameter, Make variable) wins; then an environment variable; then the default.

=================  ====================  =====================================================
location           environment variable  default
=================  ====================  =====================================================
data root          ``CREPE_DATA``        ``./data``
CREPE CSVs         (data root)           ``<data root>/crepe`` (holds ``prod_hard_negatives/``
                                         and ``syst_hard_negatives/``)
Visual Genome      ``VG_IMAGES``         ``<data root>/visual_genome`` (``VG_100K/``,
                                         ``VG_100K_2/``, or a flat folder of ``<id>.jpg``)
Winoground         ``WINOGROUND_DATA``   ``<data root>/winoground``
SugarCrepe         ``SUGARCREPE_DATA``   ``<data root>/sugarcrepe`` (the seven ``*.json``)
COCO images        ``COCO_IMAGES``       ``<data root>/coco`` (``val2017/``, SugarCrepe's images, or
                                         a flat folder of ``<12-digit id>.jpg``)
model weights      (open_clip's cache)   ``~/.cache/huggingface`` and ``~/.cache/clip``
placed weights     ``CREPE_MODELS``      ``<data root>/models`` (files a user downloads by hand:
                                         CyCLIP, ALBEF, the BERT vocabulary)
embedding cache    ``CREPE_CACHE``       ``./cache``
checksum cache     ``CREPE_CACHE``       ``./cache/sha256.json`` (SHA-256 of large checkpoints, by
                                         path, size, mtime; ``models.spec.sha256_file``)
=================  ====================  =====================================================
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def data_root(explicit: str | os.PathLike | None = None) -> Path:
    """The data root: ``explicit``, else ``$CREPE_DATA``, else ``./data``."""
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("CREPE_DATA") or "data")


def crepe_dir(explicit: str | os.PathLike | None = None) -> Path | None:
    """The folder holding CREPE's CSVs, or ``None`` when there is none.

    ``explicit`` is returned as given (the loaders report a missing folder precisely); otherwise
    ``<data root>/crepe`` when it exists.
    """
    if explicit:
        return Path(explicit)
    candidate = data_root() / "crepe"
    return candidate if candidate.is_dir() else None


def _dataset_dir(explicit, variable: str, folder: str) -> Path:
    """``explicit``, else ``$variable``, else ``<data root>/folder``: where each dataset is looked for."""
    if explicit:
        return Path(explicit)
    env = os.environ.get(variable)
    return Path(env) if env else data_root() / folder


def vg_images_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Visual Genome images: ``explicit``, else ``$VG_IMAGES``, else ``<data root>/visual_genome``."""
    return _dataset_dir(explicit, "VG_IMAGES", "visual_genome")


def winoground_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Winoground: ``explicit``, else ``$WINOGROUND_DATA``, else ``<data root>/winoground``."""
    return _dataset_dir(explicit, "WINOGROUND_DATA", "winoground")


def sugarcrepe_dir(explicit: str | os.PathLike | None = None) -> Path:
    """SugarCrepe's JSONs: ``explicit``, else ``$SUGARCREPE_DATA``, else ``<data root>/sugarcrepe``."""
    return _dataset_dir(explicit, "SUGARCREPE_DATA", "sugarcrepe")


def coco_images_dir(explicit: str | os.PathLike | None = None) -> Path:
    """COCO val2017 images: ``explicit``, else ``$COCO_IMAGES``, else ``<data root>/coco``."""
    return _dataset_dir(explicit, "COCO_IMAGES", "coco")


def models_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Hand-placed weights: ``explicit``, else ``$CREPE_MODELS``, else ``<data root>/models``."""
    return _dataset_dir(explicit, "CREPE_MODELS", "models")


def cache_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Embedding cache: ``explicit``, else ``$CREPE_CACHE``, else ``./cache``."""
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("CREPE_CACHE") or "cache")


# ------------------------------------------------------------------------------ this machine's folders

def machine_roots() -> list[tuple[str, str]]:
    """(absolute folder of this machine, what a page shows instead), most specific first: the data
    folders (as their environment variables), the project (``.``), the temporary folder and home (``~``).
    What an executed notebook or a page of the site writes in their place (:func:`portable_text`)."""
    roots = [(str(data_root().resolve()), "$CREPE_DATA")]
    for variable in ("VG_IMAGES", "WINOGROUND_DATA", "SUGARCREPE_DATA", "COCO_IMAGES", "CREPE_MODELS", "CREPE_CACHE"):
        if os.environ.get(variable):
            roots.append((str(Path(os.environ[variable]).resolve()), f"${variable}"))
    roots += [(str(PROJECT_ROOT), "."), (str(Path(tempfile.gettempdir()).resolve()), "$TMPDIR"),
              (str(Path.home().resolve()), "~")]
    seen, out = set(), []
    for path, name in sorted(roots, key=lambda r: -len(r[0])):
        if path not in seen and path != "/":
            seen.add(path)
            out.append((path, name))
    return out


def portable_text(text: str, roots: list[tuple[str, str]]) -> str:
    """``text`` with each root by its name, where the root is a whole path (``/data`` is replaced neither in
    ``/database`` nor in ``/srv/data``)."""
    for path, name in roots:
        text = re.sub(r"(?<![\w.~/-])" + re.escape(path) + r"(?=$|[/\\\s'\"),.:;\]}<>&])", lambda _: name, text)
    return text


#: The variables that name a data folder, most specific first (how a path under one is shown).
_SHOWN_VARIABLES = ("VG_IMAGES", "WINOGROUND_DATA", "SUGARCREPE_DATA", "COCO_IMAGES", "CREPE_MODELS", "CREPE_CACHE",
                    "CREPE_DATA")


def shown(path: str | os.PathLike) -> str:
    """``path`` as a page may print it, without the absolute paths of the machine that ran it: relative to the
    project when inside it, else as the variable that names its folder (``$CREPE_DATA/crepe``), else ``~/…``
    under the home folder, else its last two parts after ``…/``."""
    p = Path(path)
    if not p.is_absolute():
        return str(p)
    resolved = p.resolve()
    for base, name in [(PROJECT_ROOT, None)] + [(os.environ.get(v), v) for v in _SHOWN_VARIABLES]:
        if not base:
            continue
        base = Path(base).resolve()
        if resolved == base or base in resolved.parents:
            rest = resolved.relative_to(base).as_posix()
            if name is None:
                return rest or "."
            return f"${name}" + (f"/{rest}" if rest != "." else "")
    home = Path.home().resolve()
    if home in resolved.parents:
        return "~/" + resolved.relative_to(home).as_posix()
    return "…/" + "/".join(resolved.parts[-2:])


def not_a_folder(path: str | os.PathLike) -> str:
    """Why ``path`` is not a folder a dataset can be read from, as a message says it: it does not exist, or is a file."""
    return "is a file, not a folder" if Path(path).exists() else "does not exist"
