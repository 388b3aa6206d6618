"""The toy world: generator invariants, verified hard negatives, the real data layer, training, caching.

Numbers computed here describe small synthetic worlds and tiny models; they test the code only.
"""
from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from crepe_utils.benchmarks.crepe import queries as D
from crepe_utils.toy import foils as F
from crepe_utils.toy import world as W
from crepe_utils.toy.build import SYST_NEGATIVES, TRAIN_DATA, WorldConfig, WorldError, build_world

SMALL = WorldConfig(seed=3, train_scenes=300, captions_per_scene=2, val_scenes=64,
                    syst_rows_per_split=20, prod_rows_per_complexity=4)


@pytest.fixture(scope="module")
def small_world(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("toy") / "world"
    build_world(SMALL, out, progress=False)
    return out


def scenes_of(world: Path) -> dict[str, dict[int, W.Scene]]:
    out: dict[str, dict[int, W.Scene]] = {}
    for line in (world / "scene_graphs.jsonl").read_text().splitlines():
        record = json.loads(line)
        out.setdefault(record["split"].split("-")[0], {})[record["image_id"]] = W.Scene.from_dict(record)
    return out


def training_captions(world: Path, split: str = "train") -> list[tuple[int, str]]:
    with open(world / "training" / f"{split}.csv", newline="") as fh:
        return [(int(r["image_id"]), r["caption"]) for r in csv.DictReader(fh)]


def all_queries(world: Path) -> list[D.Query]:
    syst = D.load_systematicity(world, TRAIN_DATA, hn_types=("atom", "comp", "combined")).queries
    return syst + D.load_productivity(world).queries


# ------------------------------------------------------------------------------ language and meaning

SCENE = W.Scene(1, (W.SceneObject("circle", "red", "small", 0, 0),
                    W.SceneObject("square", "blue", "large", 0, 2),
                    W.SceneObject("triangle", "red", "large", 2, 2)))


@pytest.mark.parametrize("text, truth", [
    ("a small red circle left of a large blue square", True),
    ("a large blue square left of a small red circle", False),
    ("a red circle left of a blue square, which is above a red triangle", True),
    ("a red circle left of a blue square, which is below a red triangle", False),
    ("a red circle not left of a blue square", False),
    ("a red triangle not left of a blue square", True),
    ("a non-red circle", False),
    ("a red non-circle", True),
    ("a large non-red square", True),
    ("there is no red circle", False),
    ("there is no green circle", True),
    ("a red circle and a red triangle", True),
    ("a red circle and a red circle", False),          # two mentions, two objects: only one red circle
    ("a circle left of a circle", False),              # an object is not left of itself
])
def test_checker_meaning(text, truth):
    assert W.holds(text, SCENE) is truth


def test_checker_rejects_a_true_caption_offered_as_foil():
    F.verify_foil("a blue square left of a red circle", SCENE)         # false: passes
    with pytest.raises(F.FoilError, match="true of image"):
        F.verify_foil("a square right of a red circle", SCENE)
    with pytest.raises(F.FoilError, match="not a caption"):
        F.verify_foil("a squares right of a red circle", SCENE)
    with pytest.raises(F.FoilError, match="false of image"):
        F.verify_positive("a green circle", SCENE)


@pytest.mark.parametrize("text", ["a red red circle", "a circle red", "the circle", "a circle above",
                                  "a circle, which is above a square", "a circle and", " a circle",
                                  "a circle next to a square"])
def test_parser_rejects_what_it_cannot_read(text):
    with pytest.raises(W.CaptionError):
        W.parse_caption(text)


def test_every_written_text_round_trips(small_world):
    texts = {c for _, c in training_captions(small_world)}
    texts |= {t for q in all_queries(small_world) for t in q.candidates}
    assert len(texts) > 500
    assert all(W.render_caption(W.parse_caption(t)) == t for t in texts)


def test_held_out_compounds_come_with_their_converses():
    assert W.with_converses(["circle left of square", "red circle"]) == {
        "circle left of square", "square right of circle", "red circle"}
    with pytest.raises(W.CaptionError):
        W.with_converses(["circle next to square"])


# ------------------------------------------------------------------------------ generator invariants

def test_held_out_compounds_never_in_training_captions_or_scenes(small_world):
    description = json.loads((small_world / "world.json").read_text())
    held_out = set(description["compounds"]["held_out_with_converses"])
    assert held_out == W.with_converses(SMALL.held_out) and len(held_out) == 12
    scenes = scenes_of(small_world)
    for split in ("train", "val"):
        for image_id, caption in training_captions(small_world, split):
            assert not W.compounds(W.parse_caption(caption)) & held_out, caption
            assert W.holds(caption, scenes[split][image_id]), caption
        assert all(not W.depicted_compounds(s) & held_out for s in scenes[split].values())
    # the test images do show them (that is where UC captions come from)
    assert any(W.depicted_compounds(s) & held_out for s in scenes["systematicity"].values())


def test_every_positive_is_true_and_every_negative_false(small_world):
    scenes = {i: s for part in scenes_of(small_world).values() for i, s in part.items()}
    queries = all_queries(small_world)
    assert len(queries) > 200
    for q in queries:
        scene = scenes[int(q.image_id)]
        F.verify_positive(q.positive, scene)
        for negative in q.negatives:
            F.verify_foil(negative, scene)


def test_negative_counts_match_crepe(small_world):
    syst = D.load_systematicity(small_world, TRAIN_DATA, hn_types=("atom", "comp", "combined"))
    sizes = {hn: {len(q.negatives) for q in syst if q.hn_type == hn} for hn in ("atom", "comp", "combined")}
    assert sizes == {"atom": {SYST_NEGATIVES["atom"]}, "comp": {SYST_NEGATIVES["comp"]},
                     "combined": {SYST_NEGATIVES["atom"] + SYST_NEGATIVES["comp"]}}
    prod = D.load_productivity(small_world)
    assert {len(q.negatives) for q in prod} == {5}
    per_file = Counter((q.hn_type, q.complexity) for q in prod)
    assert per_file[("swap", 4)] == 0            # no 4-atom caption has five false permutations
    assert all(per_file[(hn, n)] == SMALL.prod_rows_per_complexity
               for hn in D.PROD_HN_TYPES for n in D.COMPLEXITIES if (hn, n) != ("swap", 4))


def test_productivity_rows_have_n_atoms(small_world):
    for q in D.load_productivity(small_world):
        caption = W.parse_caption(q.positive)
        assert len(W.atoms(caption)) == q.complexity
        assert len(caption.clauses) == 1


def test_systematicity_splits_follow_the_training_captions(small_world):
    train = [W.parse_caption(c) for _, c in training_captions(small_world)]
    seen_compounds = set().union(*(W.compounds(c) for c in train))
    seen_atoms = set().union(*(W.atoms(c) for c in train))
    syst = D.load_systematicity(small_world, TRAIN_DATA, hn_types=("atom",))
    shapes = {}
    for split in ("SC", "UC"):
        captions = [W.parse_caption(q.positive) for q in syst if q.split == split]
        assert len(captions) == SMALL.syst_rows_per_split
        assert all(set(W.atoms(c)) <= seen_atoms for c in captions)
        unseen = [bool(W.compounds(c) - seen_compounds) for c in captions]
        assert all(unseen) if split == "UC" else not any(unseen)
        shapes[split] = Counter(tuple(W.atom_counts(c).values()) for c in captions)
    assert shapes["SC"] == shapes["UC"]          # the splits are matched on caption shape


def test_world_passes_validation_clean(small_world):
    from crepe_utils.benchmarks.crepe.validation import validate

    report = validate(small_world, small_world / "images", train_data=(TRAIN_DATA,))
    assert report.ok, report.errors
    totals = report.totals()
    assert totals["bad_rows"] == 0 and totals["duplicate_queries"] == 0
    assert totals["positive_among_negatives"] == 0 and totals["empty_negatives"] == 0
    assert report.boxes_outside == 0 and not report.missing_images
    assert report.stats["token_identical_ties"] == 0
    assert len(report.files) == 27 + 2 * 3       # 27 productivity files, 2 splits × 3 HN columns
    assert report.token_lengths["n_tokens"].max() <= 32
    default = validate(small_world, small_world / "images")        # finds the "toy" training set by itself
    assert default.ok and len(default.files) == 27 + 2 * 3


def test_generation_is_deterministic(tmp_path):
    config = WorldConfig(seed=11, train_scenes=40, captions_per_scene=2, val_scenes=8,
                         syst_rows_per_split=5, prod_rows_per_complexity=1)

    def files(folder: Path) -> dict[str, bytes]:
        return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}

    first, second = files(_built(config, tmp_path / "a")), files(_built(config, tmp_path / "b"))
    assert len(first) > 50 and first == second
    other = files(_built(WorldConfig(**{**config.to_dict(), "seed": 12}), tmp_path / "c"))
    assert other != first


def _built(config: WorldConfig, out: Path) -> Path:
    build_world(config, out, progress=False)
    return out


def test_builder_refuses_an_existing_world_and_impossible_held_out_sets(small_world, tmp_path):
    with pytest.raises(WorldError, match="already holds a world"):
        build_world(SMALL, small_world, progress=False)
    with pytest.raises(WorldError, match="hold out at least one compound"):
        build_world(WorldConfig(held_out=(), train_scenes=5, val_scenes=2), tmp_path / "x", progress=False)


# ------------------------------------------------------------------------------ training

TINY = dict(batch_size=32, embed_dim=32, vision_width=32, vision_layers=1, patch_size=8, text_width=32,
            text_layers=1)


@pytest.mark.slow
def test_training_learns_seen_compounds_and_reloads_through_the_real_path(tmp_path):
    from crepe_utils.models import load_model
    from crepe_utils.toy.train import TrainConfig, encode_split, in_batch_accuracy, read_pairs, train

    world = _built(WorldConfig(seed=5, train_scenes=600, captions_per_scene=2, val_scenes=200,
                               syst_rows_per_split=5, prod_rows_per_complexity=1), tmp_path / "world")
    config = TrainConfig(steps=300, model_name="crepe-toy-test-learns", **TINY)
    summary = train(world, tmp_path / "model", config, progress=False)
    # validation: unseen scenes, seen compounds only; the right caption among 4 (chance 25 %)
    assert summary["val_k"] == 4 and summary["val_accuracy"] > 0.45
    with open(tmp_path / "model" / "train_log.csv", newline="") as fh:
        losses = [float(r["loss"]) for r in csv.DictReader(fh)]
    assert len(losses) == 300 and sum(losses[-50:]) < sum(losses[:50]) - 25    # ln 32 ≈ 3.47 at the start

    loaded = load_model(config.model_name, pretrained=summary["checkpoint"], model_config=summary["model_config"],
                        device="cpu")
    assert loaded.spec.context_length == 32 and loaded.spec.checkpoint_sha256
    val = encode_split(read_pairs(world / "training" / "val.csv"), world / "training" / "images",
                       loaded.preprocess, loaded.tokenizer)
    assert in_batch_accuracy(loaded.model, *val, k=4) == pytest.approx(summary["val_accuracy"], abs=0.011)


def test_training_is_reproducible(small_world, tmp_path):
    import torch

    from crepe_utils.toy.train import TrainConfig, train

    config = TrainConfig(steps=4, model_name="crepe-toy-test-repro", **{**TINY, "batch_size": 16})
    runs = [train(small_world, tmp_path / name, config, progress=False) for name in ("a", "b")]
    states = [torch.load(r["checkpoint"], weights_only=True)["state_dict"] for r in runs]
    assert states[0].keys() == states[1].keys()
    assert all(torch.equal(states[0][k], states[1][k]) for k in states[0])
    logs = [(tmp_path / name / "train_log.csv").read_text() for name in ("a", "b")]
    assert logs[0] == logs[1] and len(logs[0].splitlines()) == 5
    other = train(small_world, tmp_path / "c", TrainConfig(**{**config.to_dict(), "seed": 1}), progress=False)
    other_state = torch.load(other["checkpoint"], weights_only=True)["state_dict"]
    assert not torch.equal(other_state["text_projection"], states[0]["text_projection"])


# ------------------------------------------------------------------------------ the pipeline

def _toy(out: Path, *extra: str) -> int:
    """The toy command's exit status, through the command line's one error boundary."""
    from crepe_utils.cli import main

    return main(["toy", "--out", str(out), "--train-scenes", "60", "--syst-rows", "5",
                 "--prod-rows", "1", "--batch-size", "8", "--quiet", *extra])


def test_pipeline_caches_each_stage(tmp_path, capsys):
    out = tmp_path / "toy"
    assert _toy(out, "--steps", "2", "--until", "model") == 0
    first = {s: json.loads((out / s / "stage.json").read_text()) for s in ("world", "model")}
    assert all(r["complete"] for r in first.values())
    assert (out / "world" / "images" / "VG_100K").is_dir() and (out / "world" / "world.json").is_file()
    assert {p.name for p in (out / "model").iterdir()} == {"stage.json", "crepe-toy-vit.json", "crepe-toy-vit.pt",
                                                          "train_log.csv"}
    capsys.readouterr()

    assert _toy(out, "--steps", "2", "--until", "model") == 0
    assert capsys.readouterr().out.count("(cached;") == 2
    assert {s: json.loads((out / s / "stage.json").read_text()) for s in first} == first

    assert _toy(out, "--steps", "3", "--until", "model") == 0
    printed = capsys.readouterr().out
    assert "world: " in printed and printed.count("(cached;") == 1
    model = json.loads((out / "model" / "stage.json").read_text())
    assert model["key"] != first["model"]["key"] and model["config"]["steps"] == 3
    assert len((out / "model" / "train_log.csv").read_text().splitlines()) == 4


def test_pipeline_never_deletes_a_folder_it_did_not_make(tmp_path, capsys):
    mine = tmp_path / "toy" / "world" / "notes.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("keep me")
    assert _toy(tmp_path / "toy", "--until", "world") == 1
    assert "was not made by the toy pipeline" in capsys.readouterr().err
    assert mine.read_text() == "keep me"


def test_evaluate_stage_goes_through_the_engine(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CREPE_CACHE", str(tmp_path / "cache"))      # the engine's embedding cache
    out = tmp_path / "toy"
    status = _toy(out, "--steps", "2")
    printed = capsys.readouterr().out
    assert json.loads((out / "model" / "stage.json").read_text())["complete"]
    from crepe_utils.results.store import load_results

    assert status == 0 and "Recall@1 % on the toy world" in printed and "UC-SC" in printed
    results = load_results(out / "results")
    assert set(results["kind"]) == {"toy"} and set(results["benchmark"]) == {"systematicity", "productivity"}
    assert set(results.loc[results["benchmark"] == "systematicity", "split"]) == {"SC", "UC"}


def _toy_files(out: Path) -> dict:
    """What the toy pipeline computed: weights, training log, result files (manifests without
    their run section and cache key), each stage's record without its timing; ``out`` itself reads OUT."""
    import torch
    files = {}
    for p in sorted(out.rglob("*")):
        if not p.is_file() or "world" in p.relative_to(out).parts[:1]:
            continue
        rel = str(p.relative_to(out))
        if p.suffix == ".pt":
            state = torch.load(p, weights_only=True)["state_dict"]
            files[rel] = {k: v.numpy().tobytes() for k, v in state.items()}
        elif p.name in ("manifest.json", "stage.json"):
            record = json.loads(p.read_text().replace(str(out), "OUT"))     # paths name the folder
            for key in ("run", "seconds"):
                record.pop(key, None)
            record.get("summary", {}).pop("seconds", None)
            record.get("engine", {}).pop("cache_fingerprint", None)    # a cache key: names MKL's path by design
            files[rel] = json.dumps(record, sort_keys=True)
        else:
            files[rel] = p.read_bytes()
    return files


#: Runs the toy command, then reads how many elements MKL's vector math computed during it (the shim's count,
#: when the shim is preloaded) and computes one control exp outside the pinned numerics.
_TOY_THEN_COUNT = """
import ctypes, sys
from crepe_utils.cli import main
status = main(sys.argv[1:])
import torch
counter = getattr(ctypes.CDLL(None), "vmlshim_total", None)
during = ctypes.c_long.in_dll(ctypes.CDLL(None), "vmlshim_total").value if counter else None
torch.exp(torch.ones(1000))
after = ctypes.c_long.in_dll(ctypes.CDLL(None), "vmlshim_total").value if counter else None
print("vector math elements:", during, None if after is None else after - during)
sys.exit(status)
"""


@pytest.mark.slow
def test_pipeline_pins_cpu_numerics_whatever_the_machine_prefers(tmp_path):
    """Two processes told different machines' preferences train and evaluate bit-identically: ATen's
    instruction set (AVX512 against its default), MKL's code path (AUTO against COMPATIBLE), the thread
    count, and, where a C compiler can build the shim (tests/vml_shim.py), MKL's vector math itself: in the
    first process every VML result is off by one bit, as on another CPU kind. The pipeline pins ATen and
    the threads before torch loads, computes products exactly and VML's functions portably: no element of
    it reaches VML (the shim counts none), while a plain torch.exp after it does (the control)."""
    import os
    import subprocess
    import sys

    import vml_shim

    root = Path(__file__).resolve().parent.parent
    shim, why_not = vml_shim.build(tmp_path / "shim")
    machines = {"a": {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AUTO", "OMP_NUM_THREADS": "1",
                      **({"LD_PRELOAD": str(shim), "VMLSHIM_FLIP": "1"} if shim else {})},
                "b": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "OMP_NUM_THREADS": "2"}}
    printed = {}
    for name, machine in machines.items():
        env = {**os.environ, **machine, "CREPE_CACHE": str(tmp_path / f"cache-{name}"),
               "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run([sys.executable, "-c", _TOY_THEN_COUNT, "toy", "--out", str(tmp_path / name),
                               "--train-scenes", "60", "--syst-rows", "5", "--prod-rows", "1", "--batch-size", "8",
                               "--steps", "3", "--quiet"], env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout + done.stderr
        printed[name] = done.stdout.strip().splitlines()[-1]
    a, b = _toy_files(tmp_path / "a"), _toy_files(tmp_path / "b")
    assert a.keys() == b.keys() and any(k.endswith(".pt") for k in a) and any("per_query" in k for k in a)
    assert a == b
    record = json.loads((tmp_path / "a" / "model" / "stage.json").read_text())
    assert record["config"]["numerics"]["threads"] == 2 and record["config"]["numerics"]["matrix_products"] == "exact"
    assert record["config"]["numerics"]["vector_math"] == "portable"
    if shim is None:
        pytest.skip(f"compared without MKL's vector math perturbed: {why_not}")
    assert printed["a"] == "vector math elements: 0 1000"       # none in the pipeline; the control's 1000 after it


def test_stage_reports_print_in_a_terminal_and_stay_out_of_a_notebook(monkeypatch, capsys, caplog):
    import logging

    from crepe_utils.toy import pipeline as toy_pipeline

    monkeypatch.setattr(toy_pipeline, "in_notebook_kernel", lambda: False)
    toy_pipeline._say("   world: results/toy/world (cached; key 0123456789ab)")
    assert "cached; key" in capsys.readouterr().out
    monkeypatch.setattr(toy_pipeline, "in_notebook_kernel", lambda: True)
    with caplog.at_level(logging.INFO, logger="crepe_utils.toy"):
        toy_pipeline._say("   world: results/toy/world (cached; key 0123456789ab)")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""                # nothing lands in the notebook's output
    assert [r.getMessage() for r in caplog.records] == ["   world: results/toy/world (cached; key 0123456789ab)"]


def test_in_a_notebook_the_pipelines_warnings_join_its_log(monkeypatch, capsys, caplog):
    import logging
    import warnings

    from crepe_utils.errors import CrepeWarning
    from crepe_utils.toy import pipeline as toy_pipeline

    def stages(*args):
        warnings.warn(CrepeWarning("set hn_type=swap complexity=4 has no scored query"))
        return {"done": True}

    monkeypatch.setattr(toy_pipeline, "_pipeline", stages)
    monkeypatch.setattr(toy_pipeline, "in_notebook_kernel", lambda: True)
    with caplog.at_level(logging.INFO, logger="crepe_utils.toy"), warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        assert toy_pipeline.pipeline("unused", None, None) == {"done": True}
    assert not shown and capsys.readouterr().err == ""
    assert [r.getMessage() for r in caplog.records] == ["warning: set hn_type=swap complexity=4 has no scored query"]
    monkeypatch.setattr(toy_pipeline, "in_notebook_kernel", lambda: False)
    with warnings.catch_warnings(record=True) as shown:           # a terminal sees the warning as before
        warnings.simplefilter("always")
        toy_pipeline.pipeline("unused", None, None)
    assert [str(w.message) for w in shown] == ["set hn_type=swap complexity=4 has no scored query"]
