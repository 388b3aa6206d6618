"""A user's text files as spreadsheet programs and Windows editors save them: a UTF-8 byte-order mark
and CRLF line ends. Each loads exactly as the plain file does, and as this file says it should.

Would notice: a reader that keeps the mark (a header ``\\ufeffimage_id``, a JSON line that does not parse,
a token that does not authenticate), one that keeps a ``\\r`` in the last field, and a line number
counted from the wrong byte when a marked file holds bytes that are not UTF-8.
"""
from __future__ import annotations

import codecs
import json

import pandas as pd
import pytest

from crepe_utils.benchmarks.crepe import queries as D
from crepe_utils.errors import DataError
from crepe_utils.benchmarks.winoground import data as wd
from crepe_utils.benchmarks.winoground import metadata as wm
from crepe_utils import benchmarks

PROD_NAME = D.productivity_file_name("atom", 4)

#: A released-format productivity file (pandas' ``to_csv``: LF line ends, quotes only where needed).
PROD_CSV = (
    "image_id,caption,n,n_objects,n_relations,n_attributes,n_connected_components,hard_negs,x,y,width,height\n"
    "7,\"a red dog, on a table\",4,2,1,1,1,\"['a blue dog, on a table', \"\"a red dog's chair\"\"]\",1.0,2.0,30.0,20.0\n"
    "8,a cat under a chair,4,2,1,1,1,\"{'a cat on a chair', 'a cat under a bed'}\",0.0,5.0,12.5,40.0\n"
)


def spreadsheet_saved(text: str) -> bytes:
    """``text`` as a spreadsheet program saves it: a byte-order mark, CRLF line ends."""
    return codecs.BOM_UTF8 + text.replace("\n", "\r\n").encode("utf-8")


def _prod_folder(root, content: bytes):
    path = root / "prod_hard_negatives" / "atom" / PROD_NAME
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    return root


def test_a_spreadsheet_saved_crepe_csv_loads_the_same_queries(tmp_path):
    plain = D.load_productivity(_prod_folder(tmp_path / "plain", PROD_CSV.encode()), ["atom"], [4])
    saved = D.load_productivity(_prod_folder(tmp_path / "saved", spreadsheet_saved(PROD_CSV)), ["atom"], [4])
    expected = [
        D.Query("productivity", "atom", "", 4, "", "7", (1.0, 2.0, 30.0, 20.0), "a red dog, on a table",
                ("a blue dog, on a table", "a red dog's chair"), f"{PROD_NAME}:2"),
        D.Query("productivity", "atom", "", 4, "", "8", (0.0, 5.0, 12.5, 40.0), "a cat under a chair",
                ("a cat on a chair", "a cat under a bed"), f"{PROD_NAME}:3", set_literal=True),
    ]
    assert saved.queries == plain.queries == expected
    assert saved.issues == plain.issues and saved.files == plain.files == {PROD_NAME: 2}


def test_bytes_that_are_not_utf8_after_a_byte_order_mark_name_their_line(tmp_path):
    bad = PROD_CSV.replace("a cat under a chair,", "a caf\u00e9 under a chair,").encode("latin-1")
    folder = _prod_folder(tmp_path, codecs.BOM_UTF8 + bad)
    with pytest.raises(DataError) as err:
        D.load_productivity(folder, ["atom"], [4])
    assert f"{PROD_NAME}:3: bytes b'\\xe9 un'" in str(err.value) and "not UTF-8" in str(err.value)


WINO_TSV = ("id\tcaption_0\tcaption_1\ttag\tsecondary_tag\tnum_main_preds\tcollapsed_tag\n"
            "1\tthe cat sits under the table\tthe table sits under the cat\tNoun\tSymbolic\t1\tObject\n"
            "0\ta red dog on a \"blue\" chair\ta blue dog on a red chair\tAdjective-Color\t\t1\tRelation\n")
WHY_TSV = ("id\tcaption_0\tcaption_1\tclass\n"
           "0\ta red dog on a \"blue\" chair\ta blue dog on a red chair\tno-tag\n"
           "1\tthe cat sits under the table\tthe table sits under the cat\tunusual-text\n")


def test_spreadsheet_saved_winoground_metadata_loads_the_same_table(tmp_path):
    for name, content in (("plain", lambda t: t.encode()), ("saved", spreadsheet_saved)):
        (tmp_path / name).mkdir()
        (tmp_path / name / wm.EXAMPLES_TEXT).write_bytes(content(WINO_TSV))
        (tmp_path / name / wm.WHY_HARD).write_bytes(content(WHY_TSV))
    plain, saved = wm.load_text_metadata(tmp_path / "plain"), wm.load_text_metadata(tmp_path / "saved")
    pd.testing.assert_frame_equal(saved, plain)
    assert saved["id"].tolist() == [0, 1] and saved["caption_0"][0] == 'a red dog on a "blue" chair'
    assert saved["collapsed_tag"].tolist() == ["Relation", "Object"]             # no "\r" kept at a line's end
    assert saved["why_hard"].tolist() == ["no-tag", "unusual-text"]


def test_a_byte_order_marked_examples_jsonl_loads_the_same_examples(tmp_path):
    records = [dict(id=1, caption_0="the cat sits under the table", caption_1="the table sits under the cat",
                    tag="Noun", secondary_tag="Symbolic", num_main_preds=1, collapsed_tag="Object",
                    image_0="ex_1_img_0", image_1="ex_1_img_1.png"),
               dict(id=0, caption_0="a red dog", caption_1="a dog in red", tag="Adjective-Color", secondary_tag="",
                    num_main_preds=1, collapsed_tag="Relation", image_0="ex_0_img_0", image_1="ex_0_img_1")]
    text = "".join(json.dumps(r) + "\n" for r in records)
    (tmp_path / "plain.jsonl").write_text(text, encoding="utf-8")
    (tmp_path / "saved.jsonl").write_bytes(spreadsheet_saved(text))
    plain, saved = wd.read_examples_jsonl(tmp_path / "plain.jsonl"), wd.read_examples_jsonl(tmp_path / "saved.jsonl")
    assert [e.as_row() for e in saved[0]] == [e.as_row() for e in plain[0]] and saved[1] == plain[1]
    assert [e.id for e in saved[0]] == [0, 1] and [e.caption_1 for e in saved[0]] == ["a dog in red",
                                                                                     "the table sits under the cat"]
    assert saved[1] == [("ex_0_img_0", "ex_0_img_1"), ("ex_1_img_0", "ex_1_img_1")]


def test_a_byte_order_marked_model_config_builds_the_same_model(tiny_model, tmp_path):
    import torch

    from crepe_utils import models
    cfg, ckpt = tiny_model
    marked = tmp_path / "crepe-tiny-marked.json"
    marked.write_bytes(spreadsheet_saved(cfg.read_text()))
    plain = models.load_model(cfg.stem, pretrained=str(ckpt), model_config=str(cfg), device="cpu")
    saved = models.load_model(marked.stem, pretrained=str(ckpt), model_config=str(marked), device="cpu")
    assert saved.spec.architecture == "crepe-tiny-marked"
    assert all(torch.equal(a, b) for a, b in zip(plain.model.state_dict().values(), saved.model.state_dict().values()))
    import open_clip
    assert open_clip.get_model_config("crepe-tiny-marked") == json.loads(cfg.read_text())


def test_byte_order_marked_download_settings_read_as_written(tmp_path, monkeypatch):
    from crepe_utils.commands import download as command
    from crepe_utils.download import datasets
    token = tmp_path / "token"
    token.write_bytes(codecs.BOM_UTF8 + b"hf_abc123\r\n")
    assert command.hub_token({"HF_TOKEN_PATH": str(token)}) == "hf_abc123"
    name = benchmarks.DATASETS.files()[0].name
    overrides = tmp_path / "overrides.json"
    overrides.write_bytes(spreadsheet_saved(json.dumps({name: {"sha256": "0" * 64}})))
    assert datasets.load_overrides(overrides, benchmarks.DATASETS.files()) == {name: {"sha256": "0" * 64}}
