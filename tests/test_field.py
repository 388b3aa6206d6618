"""The field (vl_compo's 202-checkpoint table): the carried copy against its source, each row's checkpoint key
against open_clip's own tables, and (below) the analyses recomputed here with code written for the test.

Would notice: a carried value that is not the source's, a column dropped or reordered, a row mapped to a
checkpoint of another architecture or tag, a QuickGELU checkpoint built with GELU (or the reverse), a GELU twin
mapped to its QuickGELU key, a roster that is not the mapped keys.
"""
from __future__ import annotations

import csv
import hashlib

import open_clip
import pytest
from open_clip import pretrained as P

from crepe_utils import field
from crepe_utils.field import reported as field_reported
from crepe_utils.models import checkpoints

from shared_guard import SHARED

SOURCE = SHARED / "reference" / "vl_compo" / field.SOURCE_FILE
#: the table's names that open_clip 3.3.0 spells otherwise: (arch, tag) → (architecture, tag)
RENAMED = {("MobileCLIP-B-LT", "datacomp-dr"): ("MobileCLIP-B", "datacompdr_lt"),
           ("MobileCLIP-B", "datacomp-dr"): ("MobileCLIP-B", "datacompdr"),
           ("MobileCLIP-S1", "datacomp-dr"): ("MobileCLIP-S1", "datacompdr"),
           ("MobileCLIP-S2", "datacomp-dr"): ("MobileCLIP-S2", "datacompdr")}


# ------------------------------------------------------------------ the carried table against its source

@pytest.fixture
def source_rows():
    if not SOURCE.is_file():
        pytest.skip(f"{SOURCE} is not present")
    assert hashlib.sha256(SOURCE.read_bytes()).hexdigest() == field.SOURCE_SHA256
    with SOURCE.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.shared
def test_every_carried_value_is_the_sources_as_printed(source_rows):
    carried = field_reported.table_text()
    assert len(carried) == len(source_rows) == 202
    used = [c for cols in field.COLUMNS.values() for c in cols] + [field.IMAGENET]
    assert list(carried[0]) == ["row", "arch", "pretrained", "family", *used]
    for i, (ours, theirs) in enumerate(zip(carried, source_rows)):
        assert ours["row"] == str(i)
        assert {c: ours[c] for c in ours if c != "row"} == {c: theirs[c] for c in ours if c != "row"}, i


def test_the_float_table_is_the_text_table():
    text, values = field_reported.table_text(), field_reported.values()
    for col in list(values.columns[4:]):
        assert [float(r[col]) for r in text] == values[col].tolist()
    assert values["row"].tolist() == list(range(202))


# ------------------------------------------------------------------ rows → checkpoint keys

def _built_as(arch: str, tag: str, flag: str) -> tuple[str, str]:
    """What open_clip 3.3.0 must build for a row: its names, renamed, with -quickgelu where the row's flag says so."""
    arch, tag = RENAMED.get((arch, tag), (arch, tag))
    return (arch + "-quickgelu" if flag == "quickgelu-renamed" or (flag == "duplicate-row" and tag == "openai"
                                                                    and not arch.endswith("-quickgelu")) else arch), tag


def test_each_mapped_row_is_its_checkpoints_architecture_and_tag():
    table = field_reported.values().set_index("row")
    mapped = field_reported.checkpoints()
    assert len(mapped) == 89 and set(mapped["flag"]) <= set(field_reported.FLAGS) | {""}
    for r in mapped.itertuples():
        assert (table.loc[r.row, "arch"], table.loc[r.row, "pretrained"]) == (r.arch, r.pretrained)
        if r.flag == "gelu-build":
            assert r.checkpoint == "" and not r.arch.endswith("-quickgelu")
            continue
        c = checkpoints.checkpoint(r.checkpoint)
        assert (c.family, c.architecture, c.pretrained) == ("open_clip", *_built_as(r.arch, r.pretrained, r.flag)), r.row
    assert (mapped["flag"] == "gelu-build").sum() == 4 and (mapped["checkpoint"] != "").sum() == 85


def test_each_mapped_checkpoint_has_the_activation_open_clip_declares():
    """The architecture's config sets the activation the build uses; the tag's entry, where it states one, is the
    weights'. Both must agree with the checkpoint table, for every key the field maps to."""
    assert len(field.ROSTER) == 84 and len(set(field.ROSTER)) == 84
    silent = set()
    for key in field.ROSTER:
        c = checkpoints.checkpoint(key)
        built = bool((open_clip.get_model_config(c.architecture) or {}).get("quick_gelu", False))
        assert built == c.quick_gelu, key
        tag = P.get_pretrained_cfg(c.architecture, c.pretrained)
        assert tag, f"open_clip 3.3.0 has no {c.architecture}/{c.pretrained}"
        if "quick_gelu" in tag:
            assert tag["quick_gelu"] == c.quick_gelu, key
        elif c.quick_gelu:
            silent.add(key)
    assert silent == {"laion2b-roberta-vit-b-32"}     # its architecture's config is QuickGELU, its tag entry silent


def test_the_gelu_twins_are_not_their_quickgelu_checkpoints():
    """The four rows that evaluated QuickGELU weights with GELU differ from their -quickgelu rows: mapping them to
    the QuickGELU key would put two different numbers on one checkpoint."""
    table = field.table()
    twins = table[table["flag"] == "gelu-build"]
    assert len(twins) == 4
    for _, r in twins.iterrows():
        same = table[(table["arch"] == r["arch"] + "-quickgelu") & (table["pretrained"] == r["pretrained"])]
        assert len(same) == 1 and same["checkpoint"].iloc[0]
        assert same[field.IMAGENET].iloc[0] != r[field.IMAGENET]


def test_the_roster_is_the_mapped_keys_in_row_order_and_fine_tunes_end_in_ft():
    table = field.table()
    assert list(field.ROSTER) == list(dict.fromkeys(k for k in table.sort_values("row")["checkpoint"] if k))
    assert set(field.ROSTER) <= set(checkpoints.keys())
    assert table["fine_tuned"].sum() == 8 and set(table.loc[table["fine_tuned"], "family"]) == {"StructuredCLIP"}
    assert not table.loc[table["fine_tuned"], "checkpoint"].any()          # none is an open_clip checkpoint
