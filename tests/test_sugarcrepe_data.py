"""SugarCrepe's loader on files in the released format written here, every kind of bad input, and (marked
shared) the seven released files counted independently with plain ``json``."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from crepe_utils.errors import DataError, error_line
from crepe_utils.benchmarks.sugarcrepe import SUBSETS, load_pairs

RELEASED = ["add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj"]
ITEMS = {
    "add_att": {"0": {"filename": "000000085329.jpg",
                      "caption": "A drawing of a young woman with many facial piercings.",
                      "negative_caption": "A drawing of a tattooed young woman with many facial piercings."},
                "1": {"filename": "000000562121.jpg", "caption": "Two zebras are battling each other on hind legs. ",
                      "negative_caption": "Two striped zebras are battling each other on hind legs."}},
    "swap_obj": {"0": {"filename": "000000222235.jpg",
                       "caption": "A cat sits on its hind legs, and swats at the plant.",
                       "negative_caption": "A cat sits on the plant, and swats at its hind legs."},
                 "109": {"filename": "000000007816.jpg", "caption": "A person on a motorcycle passes a fence.",
                         "negative_caption": "A fence passes a person on a motorcycle."}},
}


def released_text(items: dict) -> str:
    """A file as RAIVNLab/sugar-crepe releases it: 4-space indent, no newline at the end."""
    return json.dumps(items, indent=4)


def write_folder(folder: Path, items_by_subset: dict | None = None) -> Path:
    """All seven files: the given items, and one plain item in each other subset."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, subset in enumerate(RELEASED):
        items = (items_by_subset or ITEMS).get(subset) or {
            "0": {"filename": f"{i + 1:012d}.jpg", "caption": f"a photo of {subset}",
                  "negative_caption": f"a photo without {subset}"}}
        (folder / f"{subset}.json").write_text(released_text(items), encoding="utf-8")
    return folder


def test_pairs_carry_what_the_engine_reads(tmp_path):
    pairs = load_pairs(write_folder(tmp_path))
    assert SUBSETS == tuple(RELEASED)
    assert pairs.files == {f"{s}.json": len(ITEMS.get(s, {"0": None})) for s in RELEASED}
    assert len(pairs) == 4 + 5
    first = pairs.pairs[0]
    assert (first.subset, first.key, first.image_id, first.box) == ("add_att", "0", "000000085329.jpg", None)
    assert first.candidates == ("A drawing of a young woman with many facial piercings.",
                                "A drawing of a tattooed young woman with many facial piercings.")
    assert first.query_id == first.source == "add_att.json:0"
    # captions exactly as written (a trailing space included), subsets in the released order, items in file order
    assert pairs.pairs[1].positive.endswith("hind legs. ")
    assert [p.source for p in pairs if p.subset == "swap_obj"] == ["swap_obj.json:0", "swap_obj.json:109"]
    assert [p.subset for p in pairs][:3] == ["add_att", "add_att", "add_obj"]
    assert pairs.issues == [] and set(pairs.by_subset()) == set(RELEASED)
    with pytest.raises(AttributeError):
        first.positive = "changed"                      # frozen


def test_subsets_select_and_an_unknown_one_is_one_line_listing_the_known(tmp_path):
    folder = write_folder(tmp_path)
    chosen = load_pairs(folder, subsets=["swap_obj", "add_att"])
    assert [p.source for p in chosen] == ["add_att.json:0", "add_att.json:1", "swap_obj.json:0", "swap_obj.json:109"]
    assert list(chosen.files) == ["add_att.json", "swap_obj.json"]
    assert len(load_pairs(folder, subsets="swap_obj")) == 2
    with pytest.raises(DataError) as err:
        load_pairs(folder, subsets=["add_att", "swap_objects"])
    message = str(err.value)
    assert "\n" not in message and "'swap_objects'" in message
    assert all(s in message for s in RELEASED)


def test_missing_folder_and_missing_file_name_the_folder_and_the_make_target(tmp_path):
    with pytest.raises(DataError, match=r"does not exist.*make data-sugarcrepe"):
        load_pairs(tmp_path / "nowhere")
    folder = write_folder(tmp_path / "sc")
    (folder / "replace_rel.json").unlink()
    with pytest.raises(DataError) as err:
        load_pairs(folder)
    assert str(folder) in str(err.value) and "replace_rel.json" in str(err.value)
    assert "make data-sugarcrepe" in str(err.value)
    assert len(load_pairs(folder, subsets=["add_att"])) == 2       # what is not asked for is not needed


def test_the_default_folder_is_sugarcrepe_data(tmp_path, monkeypatch):
    monkeypatch.setenv("SUGARCREPE_DATA", str(write_folder(tmp_path / "elsewhere")))
    assert len(load_pairs()) == 9


@pytest.mark.parametrize("content, expected", [
    ("{\n    \"0\": {\"filename\": \"000000085329.jpg\",\n", r"add_obj\.json: not valid JSON .* line 3"),
    ("[{\"filename\": \"000000085329.jpg\", \"caption\": \"a\", \"negative_caption\": \"b\"}]",
     r"add_obj\.json: holds a JSON list; expected an object"),
    ("{\"0\": {\"filename\": \"000000000001.jpg\", \"caption\": \"a\", \"negative_caption\": \"b\"},\n"
     " \"0\": {\"filename\": \"000000000002.jpg\", \"caption\": \"c\", \"negative_caption\": \"d\"}}",
     r"add_obj\.json: an object gives key\(s\) \['0'\] more than once"),
])
def test_a_file_that_is_not_an_object_of_items_is_named(tmp_path, content, expected):
    folder = write_folder(tmp_path)
    (folder / "add_obj.json").write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=expected):
        load_pairs(folder)


BAD_ITEMS = {
    "3": ("not an object", r"add_att\.json\[3\]: is a str; expected an object"),
    "4": ({"filename": "000000000004.jpg", "caption": "a dog"}, r"add_att\.json\[4\]: lacks field\(s\) \['negative_caption'\]"),
    "5": ({"filename": "000000000005.jpg", "caption": None, "negative_caption": "a cat"},
          r"add_att\.json\[5\]: 'caption' is a NoneType \(None\); expected text"),
    "6": ({"filename": "000000000006.jpg", "caption": "a dog", "negative_caption": "   "},
          r"add_att\.json\[6\]: 'negative_caption' is empty"),
    "7": ({"filename": "COCO_val2014_000000000007.jpg", "caption": "a dog", "negative_caption": "a cat"},
          r"add_att\.json\[7\]: 'filename' is 'COCO_val2014_000000000007\.jpg'; expected a COCO 2017 file name"),
    "8": ({"filename": "000000000008.png", "caption": "a dog", "negative_caption": "a cat"}, r"add_att\.json\[8\]: 'filename' is '000000000008\.png'"),
    "9": ({"filename": "../000000000009.jpg", "caption": "a dog", "negative_caption": "a cat"}, r"add_att\.json\[9\]: 'filename' is '\.\./000000000009\.jpg'"),
    "10": ({"filename": 10, "caption": "a dog", "negative_caption": "a cat"}, r"add_att\.json\[10\]: 'filename' is a int"),
    "11": ({"filename": "000000000011.jpg", "caption": "a dog", "negative_caption": ["a cat " * 20]},
           r"add_att\.json\[11\]: 'negative_caption' is a list \(\['(a cat ){5}a cat\.\.\.\); expected text"),
}


def test_every_bad_item_is_listed_with_its_file_and_key_and_nothing_is_returned(tmp_path):
    items = dict(ITEMS["add_att"], **{k: item for k, (item, _) in BAD_ITEMS.items()})
    folder = write_folder(tmp_path, {"add_att": items})
    with pytest.raises(DataError) as err:
        load_pairs(folder)
    message = str(err.value)
    assert message.startswith(f"{len(BAD_ITEMS)} malformed SugarCrepe item(s) in {folder}")
    for _, pattern in BAD_ITEMS.values():
        assert re.search(pattern, message), pattern
    assert "add_att.json[0]" not in message and "make data-sugarcrepe" in message
    assert error_line(err.value).count("\n") == 0          # what a command prints: one line


def test_more_than_ten_bad_items_are_counted_beyond_the_tenth(tmp_path):
    bad = {str(k): {"filename": "x.jpg", "caption": "a", "negative_caption": "b"} for k in range(13)}
    folder = write_folder(tmp_path, {"add_att": {}, "swap_att": bad})
    with pytest.raises(DataError) as err:
        load_pairs(folder)
    message = str(err.value)
    assert message.startswith("13 malformed")
    assert message.count("swap_att.json[") == 10 and "... and 3 more" in message


def test_kept_oddities_are_counted(tmp_path):
    items = {"0": {"filename": "000000000001.jpg", "caption": "a dog", "negative_caption": "a dog"},
             "1": {"filename": "000000000002.jpg", "caption": "a dog", "negative_caption": "a cat", "note": "x"}}
    pairs = load_pairs(write_folder(tmp_path, {"replace_obj": items}))
    assert len(pairs) == 8
    assert pairs.issue_counts() == Counter({"positive equals negative": 1, "extra fields": 1})
    assert [str(i) for i in pairs.issues] == ["replace_obj.json[0]: the negative is the caption itself (an exact tie)",
                                              "replace_obj.json[1]: fields ['note'] are not read"]


def test_a_byte_order_mark_and_crlf_read_as_the_plain_file_and_other_bytes_are_named(tmp_path):
    plain = load_pairs(write_folder(tmp_path / "plain"))
    saved = write_folder(tmp_path / "saved")
    path = saved / "swap_obj.json"
    path.write_bytes(b"\xef\xbb\xbf" + released_text(ITEMS["swap_obj"]).replace("\n", "\r\n").encode("utf-8"))
    again = load_pairs(saved)
    assert again.pairs == plain.pairs and again.files == plain.files
    path.write_bytes(released_text(ITEMS["swap_obj"]).replace("plant", "pl\xe4nt").encode("latin-1"))
    with pytest.raises(DataError, match=r"swap_obj\.json:4: bytes .* are not UTF-8"):
        load_pairs(saved)


@pytest.mark.shared
def test_the_released_files_load_whole(shared_sugarcrepe):
    pairs = load_pairs(shared_sugarcrepe)
    counted = {s: len(json.loads((shared_sugarcrepe / f"{s}.json").read_text(encoding="utf-8"))) for s in RELEASED}
    # the release at RAIVNLab/sugar-crepe@0047054, counted here with plain json
    assert counted == {"add_att": 692, "add_obj": 2062, "replace_att": 788, "replace_obj": 1652,
                       "replace_rel": 1406, "swap_att": 666, "swap_obj": 245}
    assert sum(counted.values()) == 7511 == len(pairs)
    assert {s: len(p) for s, p in pairs.by_subset().items()} == counted
    assert pairs.files == {f"{s}.json": n for s, n in counted.items()}
    assert pairs.issues == [] and len({p.query_id for p in pairs}) == 7511
    raw = json.loads((shared_sugarcrepe / "swap_obj.json").read_text(encoding="utf-8"))
    last = [p for p in pairs if p.subset == "swap_obj"][-1]
    key = list(raw)[-1]
    assert (last.key, last.image_id, last.positive, last.negative) == (
        key, raw[key]["filename"], raw[key]["caption"], raw[key]["negative_caption"])
