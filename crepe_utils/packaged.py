"""Tables carried inside the package as CSV files (published numbers, pinned counts, ImageNet accuracies): one reader.

Every such CSV has one value per row and a ``source`` column naming the paper section or table it comes
from. Values are read as written (``keep_default_na=False``: a model called "NA" stays a string); each file
is read once per process.
"""
from __future__ import annotations

import csv
from functools import lru_cache
from importlib import resources

from .lazy import lazy

pd = lazy("pandas")


@lru_cache(maxsize=None)
def _read(package: str, name: str) -> pd.DataFrame:
    with resources.files(package).joinpath(name).open("r", encoding="utf-8") as fh:
        return pd.read_csv(fh, keep_default_na=False)


def table(package: str, name: str) -> pd.DataFrame:
    """The CSV ``name`` of ``package`` (a benchmark's ``reported``, e.g.), as a fresh copy."""
    return _read(package, name).copy()


def rows(package: str, name: str) -> list[dict[str, str]]:
    """The CSV ``name`` of ``package`` as its text: one dict per row, every value the string the file holds (a
    test that compares a carried copy with its source compares these)."""
    with resources.files(package).joinpath(name).open("r", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def path(package: str, name: str) -> str:
    """Where the CSV ``name`` of ``package`` lives in the repository (``crepe_utils/.../name``, forward slashes):
    what a page names beside a published number, so a reader can open the file it was transcribed into."""
    if not resources.files(package).joinpath(name).is_file():
        raise FileNotFoundError(f"{package} carries no {name}")
    return "/".join(package.split(".")) + "/" + name


def transcribed(package: str, *names: str) -> str:
    """``transcribed in `path` `` (and `` and `path` `` for each further file), Markdown: a citation's file."""
    return "transcribed in " + " and ".join(f"`{path(package, n)}`" for n in names)


def values(package: str, name: str, key: str, value: str = "value") -> dict:
    """``key`` → ``value`` of one such CSV (a claims or counts file)."""
    df = _read(package, name)
    return dict(zip(df[key], df[value]))
