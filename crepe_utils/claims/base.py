"""The check row every claim produces: (claim, paper value, ours, status), and its statuses.

Status values:

``pass``                 our number agrees with the paper's;
``fail``                 it does not, and the fault would be ours (the build fails);
``paper inconsistency``  the paper disagrees with itself or with its released data; reported,
                         never a build failure;
``sources disagree``     a third party's published numbers (vl_compo's table) disagree with a paper's, or
                         with the data the paper released: which source is right is not known; reported,
                         never a build failure;
``differs at scale``     a number that holds on the paper's own models does not hold over the field's
                         pretrained checkpoints (a different population, and often not the same quantity);
                         reported, never a build failure;
``holds in part``        a statement of the paper, read as the claim column words it, holds for only part
                         of what it covers (some models, one subset, to within one printed step): the words
                         are the paper's or the companion's reading of them, and the detail says where it
                         holds; reported, never a build failure;
``needs data``           the check needs data or evaluated results that are not present.

Counts of the released data are checked twice: our count against the count pinned in
``reported/released_*.csv`` (a difference is ``fail``: our counting, or data that are not the
release), and only then the pinned count against the paper (a difference is ``paper
inconsistency``). A row whose comparison is the paper against itself cannot fail; it says so with
``can_fail=False``, and ``make check`` closes by counting the rows that can.

Every function takes the tables it checks as arguments (defaults: the published numbers), so a
test can hand it wrong input and watch it fail.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from ..lazy import lazy

pd = lazy("pandas")

PASS, FAIL, PAPER, PART, NEEDS = "pass", "fail", "paper inconsistency", "holds in part", "needs data"
SOURCES, SCALE = "sources disagree", "differs at scale"
STATUSES = (PASS, FAIL, PAPER, SOURCES, SCALE, PART, NEEDS)
#: the columns of the checks table (``tables/checks.csv``): ``paper`` is the paper's value (or what the paper
#: says where it prints none); ``found`` is what the check found, which is not always a number of ours: the
#: released data's count, or a third party's published value where the row compares a paper with it
COLUMNS = ("group", "claim", "paper", "found", "status", "detail")


@dataclass(frozen=True)
class Check:
    claim: str
    paper: str
    #: what the check found: the table's ``found`` column (ours, the release's count, or a third party's value)
    ours: str
    status: str
    detail: str = ""
    group: str = ""
    #: False for a row that compares the paper with itself: no fault of ours can show there.
    can_fail: bool = True

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")
        if self.status == FAIL and not self.can_fail:
            raise ValueError(f"{self.claim!r}: a row that cannot fail has status fail")


@dataclass(frozen=True)
class Topic:
    """One topic of ``make check``: the function a notebook's check cell calls for its rows, and that notebook.

    A module that has claims lists its topics in ``TOPICS``, the order of its (topic, section) pairs in
    ``make check`` in ``ORDER``, and builds every section's rows with ``sections(results_dir, data_dirs)``
    (``data_dirs``: a benchmark folder's name → its data folder, where one is given; others read their default).
    """

    checks: Callable
    notebook: str | None = None


def to_frame(checks: list[Check]) -> pd.DataFrame:
    """The checks as the table ``make check`` writes, one row each, columns :data:`COLUMNS`."""
    rows = [{**asdict(c), "found": c.ours} for c in checks]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def failures(checks: list[Check]) -> list[Check]:
    return [c for c in checks if c.status == FAIL]


def _fmt(v, nd=2) -> str:
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return f"{v:.{nd}f}"
