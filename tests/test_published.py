"""The published numbers are complete, sourced and shaped as the papers print them."""
from __future__ import annotations

import pytest

from crepe_utils.benchmarks.crepe import reported, roster
from crepe_utils.benchmarks.winoground import reported as winoground_reported
from crepe_utils.models import checkpoints, imagenet

OPEN_CLIP = [k for k in roster.model_order() if checkpoints.checkpoint(k).family == "open_clip"]


def test_systematicity_table_is_complete():
    df = reported.systematicity()
    assert len(df) == 7 * 3 * 2
    assert set(df["hn_type"]) == {"combined", "atom", "comp"} and set(df["split"]) == {"SC", "UC"}
    assert df["r1"].between(0, 100).all() and (df["source"].str.len() > 0).all()


def test_productivity_table_is_complete():
    df = reported.productivity()
    assert len(df) == 15 * 3 * 2
    assert set(df["complexity"]) == {4, 12} and set(df["hn_type"]) == {"atom", "swap", "negate"}
    assert df["r1"].between(0, 100).all() and (df["source"].str.len() > 0).all()


def test_winoground_table3():
    df = winoground_reported.table3()
    clip = df.set_index("model").loc["CLIP (ViT-B/32)"]
    assert (clip["text"], clip["image"], clip["group"]) == (30.75, 10.50, 8.00)
    assert len(df) == 21
    # every reported score is a count out of 400 (multiples of 0.25), except chance
    scores = df[df["model"] != "Random chance"][["text", "image", "group"]].to_numpy().ravel()
    assert ((scores * 4) % 1 == 0).all()


def test_imagenet_sources_cover_the_open_clip_models():
    for source in imagenet.SOURCES:
        s = imagenet.top1(source)
        for key in OPEN_CLIP:
            assert 30 < s[key] < 80, (source, key)
    with pytest.raises(ValueError, match="unknown ImageNet source"):
        imagenet.top1("wikipedia")


def test_claims_have_sources():
    c = reported.claims()
    assert c["claim_id"].is_unique and (c["source"].str.len() > 0).all()
    assert reported.claim("r2_atom_SC") == 0.95
    with pytest.raises(KeyError):
        reported.claim("no_such_claim")


def test_wide_table_deltas():
    w = reported.systematicity_wide().set_index(["model", "hn_type"])
    assert w.loc[("laion400m-vit-b-32", "atom"), "delta"] == pytest.approx(-12.57)
    assert list(w.index.get_level_values(0).unique()) == list(roster.SYSTEMATICITY_MODELS)
