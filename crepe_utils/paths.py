"""Where the data live. No path in this package is hard-coded beyond these defaults.

Resolution order, for each location: an explicit argument (function parameter, CLI flag,
notebook parameter, Make variable) wins; then an environment variable; then the default.

=================  ====================  =====================================================
location           environment variable  default
=================  ====================  =====================================================
data root          ``CREPE_DATA``        ``./data``
each dataset       its own, if it has    ``<data root>/<its folder>``: every dataset declares its
                   one (``VG_IMAGES``,   folder and variable once, in its benchmark's folder or
                   ``COCO_IMAGES``, ...) in :mod:`crepe_utils.imagesets` (``python -m crepe_utils
                                         download --help`` lists them)
model weights      (open_clip's cache)   ``~/.cache/huggingface`` and ``~/.cache/clip``
placed weights     ``CREPE_MODELS``      ``<data root>/models`` (files a user downloads by hand:
                                         CyCLIP, ALBEF, the BERT vocabulary)
embedding cache    ``CREPE_CACHE``       ``./cache``
checksum cache     ``CREPE_CACHE``       ``./cache/sha256.json`` (SHA-256 of large checkpoints, by
                                         path, size, mtime; ``digests.sha256_file``)
=================  ====================  =====================================================
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


#: the variable that moves the data root, and with it every dataset without a variable of its own
DATA_ROOT_ENV = "CREPE_DATA"


def data_root(explicit: str | os.PathLike | None = None) -> Path:
    """The data root: ``explicit``, else ``$CREPE_DATA``, else ``./data``."""
    if explicit:
        return Path(explicit)
    return Path(os.environ.get(DATA_ROOT_ENV) or "data")


def dataset_dir(explicit: str | os.PathLike | None, variable: str | None, folder: str) -> Path:
    """Where a dataset is looked for: ``explicit``, else ``$variable``, else ``<data root>/folder``.

    Every dataset declares its ``variable`` and ``folder`` once (:class:`crepe_utils.download.datasets.Dataset`).
    """
    if explicit:
        return Path(explicit)
    env = os.environ.get(variable) if variable else None
    return Path(env) if env else data_root() / folder


def models_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Hand-placed weights: ``explicit``, else ``$CREPE_MODELS``, else ``<data root>/models``."""
    return dataset_dir(explicit, "CREPE_MODELS", "models")


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
    for variable in folder_variables():
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


#: How a dataset's own environment variable is named (a declaration's ``variable``: ``VALSE_DATA``,
#: ``VG_IMAGES``), so that a folder named by one is recognised without a list of them here.
FOLDER_VARIABLE = re.compile(r"[A-Z][A-Z0-9_]*_(DATA|IMAGES)")
_OWN_VARIABLES = ("CREPE_MODELS", "CREPE_CACHE")


def folder_variables() -> list[str]:
    """The environment variables set here that name a folder of this project: every dataset's
    (:data:`FOLDER_VARIABLE`), the models' and the cache's; ``CREPE_DATA`` last (the least specific)."""
    named = sorted(v for v in os.environ if FOLDER_VARIABLE.fullmatch(v) and v != DATA_ROOT_ENV)
    return [*named, *(v for v in _OWN_VARIABLES if v in os.environ), DATA_ROOT_ENV]


def shown(path: str | os.PathLike) -> str:
    """``path`` as a page may print it, without the absolute paths of the machine that ran it: relative to the
    project when inside it, else as the variable that names its folder (``$CREPE_DATA/crepe``), else ``~/…``
    under the home folder, else its last two parts after ``…/``."""
    p = Path(path)
    if not p.is_absolute():
        return str(p)
    resolved = p.resolve()
    bases = [(Path(os.environ[v]).resolve(), v) for v in folder_variables() if os.environ.get(v)]
    for base, name in [(PROJECT_ROOT, None)] + sorted(bases, key=lambda b: -len(b[0].parts)):
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


# ------------------------------------------------------------------------------ names that become paths

#: The longest folder name made from a name (file systems allow 255 bytes; a digest keeps longer names apart).
MAX_COMPONENT = 120


def folder_name(name: str) -> str:
    """``name`` (a model key, a benchmark or training-set name: from a user or from data) as one folder name that
    stays where it is put: characters other than letters, digits and ``._+-`` become ``_``; a name that would be
    empty, ``.`` or ``..``, or hidden (the results store writes and skips hidden temporary folders), starts with
    ``_``; one longer than :data:`MAX_COMPONENT` keeps its start and a digest of the whole."""
    safe = "".join(c if c.isalnum() or c in "._+-" else "_" for c in str(name))
    if not safe or safe.startswith("."):
        safe = "_" + safe
    if len(safe) > MAX_COMPONENT:
        digest = hashlib.sha256(str(name).encode("utf-8", "surrogatepass")).hexdigest()[:16]
        safe = f"{safe[:MAX_COMPONENT - 17]}-{digest}"
    return safe


def relative_inside(value: str, what: str) -> str | None:
    """Why ``value`` (a file or folder name that a declaration or an override places under a given folder) could
    leave that folder or name no place in it, or None when it cannot: it must be a relative path whose parts are
    neither empty, ``.`` nor ``..`` (no absolute path, drive, backslash or NUL)."""
    if not isinstance(value, str) or not value:
        return f"{what} must be a non-empty name, got {value!r}"
    if "\x00" in value or "\\" in value or value.startswith("/") or re.match(r"^[A-Za-z]:", value):
        return f"{what} {value!r} is not a relative name inside its folder"
    if any(part in ("", ".", "..") for part in value.split("/")):
        return f"{what} {value!r} has an empty, '.' or '..' part: it would not stay inside its folder"
    return None
