"""The one checkpoint table (crepe_utils/models/checkpoints.py) and the rosters that name its keys: SugarCrepe's
against its published results table, every open_clip row against open_clip's own pretrained table, and the rows
through the open_clip family's resolution.

Would notice: a roster row missing, added or out of its table's order, a tag or architecture that is not the
published one, an activation that contradicts open_clip's tag entry (the QuickGELU trap), a checkpoint described
twice, an (architecture, tag) pair that loses its key, open_clip's HF text tower failing as a download.
"""
from __future__ import annotations

import importlib.util

import pytest
from open_clip import pretrained as P

from crepe_utils import benchmarks, models
from crepe_utils.benchmarks.crepe import roster as crepe_roster
from crepe_utils.benchmarks.sugarcrepe import reported, roster as S
from crepe_utils.models import ModelError, QuickGELUMismatch, checkpoints

ROWS = {key: checkpoints.checkpoint(key) for key in S.keys()}


def _published_models():
    """The CLIP rows of the published table, one per model, in its order."""
    pub = reported.results()
    pub = pub[pub["imagenet_model"].astype(str).str.len() > 0]
    return pub.drop_duplicates("imagenet_model")


def test_the_table_is_the_published_tables_17_models_in_order():
    pub = _published_models()
    assert S.keys() == list(pub["imagenet_model"]) and len(S.keys()) == 17
    for r in pub.itertuples():
        row = ROWS[r.imagenet_model]
        assert S.display_names()[r.imagenet_model] == f"{r.group} {r.model}" and row.pretrained == r.open_clip_pretrained
        assert row.architecture.removesuffix("-quickgelu") == r.open_clip_arch.removesuffix("-quickgelu")


def test_names_differ_from_the_published_ones_only_for_the_activation():
    pub = _published_models().set_index("imagenet_model")
    renamed = {k for k, row in ROWS.items() if row.architecture != pub.loc[k, "open_clip_arch"]}
    openai = {k for k in ROWS if k.startswith("openai-")}
    assert renamed == openai | {"datacomp-s-vit-b-32", "datacomp-m-vit-b-32"}
    assert all(ROWS[k].architecture.endswith("-quickgelu") for k in openai)       # QuickGELU weights
    assert ROWS["datacomp-s-vit-b-32"].architecture == "ViT-B-32"                    # GELU, as DataComp trained it


def test_each_activation_agrees_with_open_clips_tag_entry_where_it_states_one():
    silent = set()
    for row in checkpoints.of_family("open_clip"):
        if row.weights_url:
            continue        # a release file, not open_clip's source for the tag
        cfg = P.get_pretrained_cfg(row.architecture, row.pretrained)
        assert cfg, f"open_clip has no {row.architecture}/{row.pretrained}"
        if "quick_gelu" in cfg:
            assert cfg["quick_gelu"] == row.quick_gelu, row.key
        elif row.quick_gelu:
            silent.add(row.key)
    assert silent == {"laion2b-roberta-vit-b-32"}        # its config is QuickGELU, its tag entry says nothing


def test_every_row_resolves_with_its_activation():
    for row in ROWS.values():
        spec = models.resolve(row.key)
        assert spec.quick_gelu == spec.weights_quick_gelu == row.quick_gelu, row.key
        assert (spec.architecture, spec.pretrained, spec.family) == (row.architecture, row.pretrained, "open_clip")
        assert spec.train_data in ("openai", "other")           # never "laion": that is LAION-400M's split


def test_each_checkpoint_is_one_row_whichever_roster_names_it():
    keys = [c.key for c in checkpoints.CHECKPOINTS]
    assert len(keys) == len(set(keys))
    pairs = [(c.architecture, c.pretrained, c.weights_url) for c in checkpoints.of_family("open_clip")]
    assert len(pairs) == len(set(pairs))                                    # no checkpoint described twice
    shared = [k for k in S.keys() if k in crepe_roster.model_order()]
    assert shared == ["openai-rn50", "openai-rn101", "openai-vit-b-32", "openai-vit-l-14"]
    for b in benchmarks.BENCHMARKS.values():                                # every roster names table keys
        assert set(b.roster) <= set(keys), b.name


def test_architecture_and_tag_find_the_table_row():
    spec = models.resolve("roberta-ViT-B-32", "laion2b_s12b_b32k")          # refused before the table said QuickGELU
    assert (spec.key, spec.weights_quick_gelu) == ("laion2b-roberta-vit-b-32", True)
    assert models.resolve("RN50x16-quickgelu", "openai").key == "openai-rn50x16"
    with pytest.raises(QuickGELUMismatch, match="'RN50x16-quickgelu'"):
        models.resolve("RN50x16", "openai")                                   # the published name, as main_eval.py
    with pytest.raises(ModelError, match="no pretrained tag 'datacomp_s_s13m_b4k'"):
        models.resolve("ViT-B-32-quickgelu", "datacomp_s_s13m_b4k")           # main_eval.py's (commented) name


def test_an_unknown_key_lists_the_table():
    with pytest.raises(ModelError, match="laion2b-vit-h-14"):
        checkpoints.checkpoint("laion2b-vit-h")
    assert checkpoints.for_open_clip("ViT-H-14", "laion2b_s32b_b79k").key == "laion2b-vit-h-14"
    assert checkpoints.for_open_clip("ViT-H-14", "laion2b_s32b_b80k") is None


@pytest.mark.skipif(importlib.util.find_spec("transformers") is not None, reason="transformers is installed here")
def test_a_hugging_face_text_tower_without_transformers_names_the_extra():
    with pytest.raises(ModelError, match=r"roberta-ViT-B-32 .*'transformers'.*pip install '\.\[hf\]'"):
        models.load_model("laion2b-roberta-vit-b-32", device="cpu")


def test_the_models_command_lists_the_table_and_every_roster(capsys):
    from crepe_utils.cli import main
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    table, rosters = out.split("Rosters (evaluate-paper's jobs):")
    lines = table.strip().splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["key", "name"])
    listed = [line.split()[0] for line in lines[header + 1:]]
    assert listed == [c.key for c in checkpoints.CHECKPOINTS]
    rows = [line.split()[:2] for line in rosters.strip().splitlines()[1:]]
    assert rows == [[b.name, key] for b in benchmarks.BENCHMARKS.values() for key in b.roster]
