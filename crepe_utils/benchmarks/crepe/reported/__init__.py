"""CREPE's published numbers (Ma et al., CVPR 2023), as tidy tables with their sources.

Every CSV here has one value per row and a ``source`` column naming the paper section, table or
appendix it comes from; the functions only read them. Model keys are checkpoint keys
(:mod:`crepe_utils.models.checkpoints`), named as the paper names them (:mod:`..roster`).

Two files hold counts of the released *data* rather than the paper's numbers, pinned so that a recount
can be checked against them: ``released_productivity_files.csv`` (per productivity CSV: sha256 and
counts) and ``released_counts.csv`` (totals of the productivity files); ``released_all_files.csv`` holds what
is known of the archive's three ``prod_vg_hard_negs_{type}_all.csv`` files, which sit beside the type folders and
which the development data lack (the swap file's row count). ``blind_published.csv`` holds the text-only numbers
other papers published on CREPE productivity.
"""
from __future__ import annotations

from ....models import imagenet
from .... import packaged
from ....packaged import table
from .. import roster
from ....lazy import lazy

pd = lazy("pandas")

_PACKAGE = __name__


def _read(name: str) -> pd.DataFrame:
    return table(_PACKAGE, name)


def transcribed(*names: str) -> str:
    """``transcribed in `crepe_utils/benchmarks/crepe/reported/<name>` ``: the file a cited number is in."""
    return packaged.transcribed(_PACKAGE, *names)


def _with_model_columns(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    names = roster.display_names()
    out.insert(1, "display", out["model"].map(names))
    out.insert(2, "train_data", out["model"].map({k: roster.train_data(k) for k in names}))
    return out


def systematicity() -> pd.DataFrame:
    """Systematicity Recall@1 (%), one row per model × HN set (combined/atom/comp) × split (SC/UC)."""
    return _with_model_columns(_read("systematicity_r1.csv"))


def systematicity_printed_deltas() -> pd.DataFrame:
    """The UC − SC changes as printed in the paper (checked against the R@1 values)."""
    return _with_model_columns(_read("systematicity_delta_printed.csv"))


def systematicity_wide() -> pd.DataFrame:
    """SC, UC and UC − SC per model × HN set, in paper order."""
    df = systematicity()
    wide = df.pivot_table(index=["model", "display", "train_data", "hn_type"], columns="split",
                          values="r1").reset_index()
    wide.columns.name = None
    wide["delta"] = (wide["UC"] - wide["SC"]).round(2)
    return sort_by_model(wide, extra=["hn_type"], extra_order={"hn_type": ["combined", "atom", "comp"]})


def productivity() -> pd.DataFrame:
    """Productivity Recall@1 (%) at complexity 4 and 12 for 15 models × HN-Atom/Swap/Neg."""
    return _with_model_columns(_read("productivity_r1.csv"))


def blind_published() -> pd.DataFrame:
    """Published text-only ("blind") Recall@1 (%) on CREPE productivity per HN type, beside the CLIP row they
    were compared with."""
    return _read("blind_published.csv").copy()


def claims() -> pd.DataFrame:
    """The paper's stated numbers that the checks test (R², chance levels, totals)."""
    return _read("claims.csv").copy()


def claim(claim_id: str) -> float:
    """The value of one claim."""
    df = claims().set_index("claim_id")
    if claim_id not in df.index:
        raise KeyError(f"no claim {claim_id!r} in CREPE's reported/claims.csv")
    return float(df.loc[claim_id, "value"])


def released_productivity_files() -> pd.DataFrame:
    """Per released productivity CSV: hn_type, complexity, sha256 and its pinned counts."""
    return _read("released_productivity_files.csv").copy()


def released_productivity_queries() -> dict[tuple[str, int], int]:
    """(hn_type, complexity) → the pinned row count of that released productivity CSV (one query per row)."""
    df = released_productivity_files()
    return {(hn, int(n)): int(rows) for hn, n, rows in zip(df["hn_type"], df["complexity"], df["rows"])}


def released_counts() -> dict[str, int | str]:
    """Pinned counts of the released productivity files: quantity → value."""
    df = _read("released_counts.csv")
    return {q: int(v) if str(v).isdigit() else str(v) for q, v in zip(df["quantity"], df["value"])}


def imagenet_table() -> pd.DataFrame:
    """ImageNet zero-shot top-1 of the paper's checkpoints, every measurement with its source."""
    df = imagenet.measurements()
    return _with_model_columns(df[df["model"].isin(roster.model_order())].reset_index(drop=True))
def released_all_rows() -> dict[str, int]:
    """HN type → the row count of the archive's ``prod_vg_hard_negs_{type}_all.csv``, where it is known (not the
    sum of the type's nine complexity files)."""
    df = _read("released_all_files.csv")
    return {hn: int(rows) for hn, rows in zip(df["hn_type"], df["rows"])}


def claim_source(claim_id: str) -> str:
    return str(claims().set_index("claim_id").loc[claim_id, "source"])


def sort_by_model(df: pd.DataFrame, extra: list[str] | None = None,
                  extra_order: dict[str, list] | None = None) -> pd.DataFrame:
    """Sort rows in paper model order (unknown models last, alphabetically), then by ``extra``."""
    order = {k: i for i, k in enumerate(roster.model_order())}
    keys = ["_model_rank", "model"] + (extra or [])
    out = df.assign(_model_rank=df["model"].map(order).fillna(len(order)))
    for col, values in (extra_order or {}).items():
        rank = {v: i for i, v in enumerate(values)}
        out[f"_{col}_rank"] = out[col].map(rank).fillna(len(rank))
        keys[keys.index(col)] = f"_{col}_rank"
    out = out.sort_values(keys, kind="stable")
    return out.drop(columns=[c for c in out.columns if c.startswith("_")]).reset_index(drop=True)
