"""vl_compo's table as the package carries it, and its rows' checkpoint keys.

``vl_compo.csv``: the used columns of ``individual_results.csv`` (ytaek-oh/vl_compo at 43e2eae), each value as the
source prints it, with the source's 0-based data-row number (``row``); a test compares it with the source file.
``checkpoints.csv``: each row open_clip 3.3.0 builds → its checkpoint-table key (empty for a row evaluated with
the wrong activation), a ``flag`` (:data:`FLAGS`) and a note. ``explanations.csv``: where a benchmark's own
published number for a checkpoint differs from the field's, what explains it, and whether that is established or
inferred.
"""
from __future__ import annotations

from importlib import resources

from ... import packaged
from ...packaged import rows, table
from ...lazy import lazy

pd = lazy("pandas")

_PACKAGE = __name__


def transcribed(*names: str) -> str:
    """``transcribed in `crepe_utils/field/reported/<name>` ``: the file a cited number is in."""
    return packaged.transcribed(_PACKAGE, *names)

#: what a row's flag says about its values
FLAGS = {
    "quickgelu-renamed": "named with the GELU architecture of QuickGELU weights; the key builds the -quickgelu one",
    "gelu-build": "QuickGELU weights evaluated with the GELU architecture, as named: not a checkpoint's evaluation",
    "duplicate-row": "every value equals another row's: not an independent evaluation",
    "weights-undetermined": "open_clip can serve two weight files for this tag; which one the table evaluated is "
                            "not known",
}


def values() -> pd.DataFrame:
    """The carried columns: row, arch, pretrained, family, then one float column per benchmark part."""
    df = table(_PACKAGE, "vl_compo.csv")
    for c in df.columns[4:]:
        df[c] = df[c].astype(float)
    return df


def header() -> list[str]:
    """The carried table's column names, in its order."""
    with resources.files(_PACKAGE).joinpath("vl_compo.csv").open(encoding="utf-8") as f:
        return f.readline().rstrip("\r\n").split(",")


def table_text() -> list[dict[str, str]]:
    """The carried columns as the file writes them (text, one dict per row)."""
    return rows(_PACKAGE, "vl_compo.csv")


def checkpoints() -> pd.DataFrame:
    """Per row open_clip builds: row, arch, pretrained (as the table names them), checkpoint key, flag, note."""
    return table(_PACKAGE, "checkpoints.csv")


def explanations() -> pd.DataFrame:
    """benchmark, checkpoint, evidence (established or inferred), explanation."""
    return table(_PACKAGE, "explanations.csv")
