"""`evaluate-paper` plans CREPE's and SugarCrepe's jobs from the two papers' tables, reads each benchmark's
own folders, refuses one folder for different datasets, and writes results for both benchmarks."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import crepe_utils

sys.path.insert(0, str(Path(__file__).resolve().parent))
import helpers  # noqa: E402

from crepe_utils import cli  # noqa: E402
from crepe_utils.runs import planner as paper_jobs, scheduling
from crepe_utils.errors import CrepeError, ModelError  # noqa: E402
from crepe_utils.benchmarks.crepe import roster as crepe_roster
from crepe_utils.benchmarks.sugarcrepe import roster as sugarcrepe_models
from crepe_utils.benchmarks.sugarcrepe import SUBSETS

ROOT = Path(__file__).resolve().parent.parent


def _benchmarks(jobs) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for job in jobs:
        out.setdefault(job.key, []).append(job.benchmark)
    return out


# ------------------------------------------------------------------------------ planning

def test_paper_is_each_tables_models_on_their_own_benchmarks():
    jobs, skipped = paper_jobs.plan(["paper"])
    by_key = _benchmarks(jobs)
    crepe = crepe_roster.model_order()
    assert list(by_key) == paper_jobs.paper_keys() == crepe + [k for k in sugarcrepe_models.keys() if k not in crepe]
    assert skipped == []
    assert by_key["laion400m-vit-b-32"] == ["crepe-systematicity", "crepe-productivity"]   # CREPE only
    assert by_key["cyclip-rn50"] == ["crepe-productivity"]
    assert by_key["openai-rn50"] == ["crepe-productivity", "sugarcrepe"]                  # in both tables: both
    assert by_key["datacomp-s-vit-b-32"] == ["sugarcrepe"]                        # SugarCrepe only
    assert [k for k, b in by_key.items() if "sugarcrepe" in b] == [k for k in by_key if k in sugarcrepe_models.keys()]
    assert len(jobs) == len(crepe_roster.SYSTEMATICITY_MODELS) + len(crepe_roster.PRODUCTIVITY_MODELS) + len(
        sugarcrepe_models.keys())
    # a model's jobs stay together, in registry order (a worker keeps its model between them)
    assert [j.key for j in jobs] == [k for k in by_key for _ in by_key[k]]
    displays = {j.key: j.display for j in jobs}
    assert displays["cc12m-rn50"] == "CC-12M RN50" and displays["datacomp-s-vit-b-32"] == "DataComp small:ViT-B-32"


def test_all_adds_every_other_benchmark_that_takes_a_model():
    paper, _ = paper_jobs.plan(["paper"])
    every, skipped = paper_jobs.plan(["all"])
    added = set((j.key, j.benchmark) for j in every) - set((j.key, j.benchmark) for j in paper)
    crepe_only = [k for k in crepe_roster.model_order() if k not in sugarcrepe_models.keys()]
    sugar_only = [k for k in sugarcrepe_models.keys() if k not in crepe_roster.model_order()]
    # SugarCrepe takes any model; CREPE's productivity too; its systematicity only its own seven (training set)
    assert added == {(k, "sugarcrepe") for k in crepe_only} | {(k, "crepe-productivity") for k in sugar_only}
    assert skipped == []
    assert _benchmarks(every)["flava"] == ["crepe-productivity", "sugarcrepe"]


def test_named_keys_get_their_papers_benchmarks_and_the_chosen_ones_only():
    jobs, skipped = paper_jobs.plan(["openai-rn50", "laion2b-vit-h-14", "cc12m-rn50", "openai-rn50"])
    assert [(j.key, j.benchmark) for j in jobs] == [
        ("openai-rn50", "crepe-productivity"), ("openai-rn50", "sugarcrepe"), ("laion2b-vit-h-14", "sugarcrepe"),
        ("cc12m-rn50", "crepe-systematicity"), ("cc12m-rn50", "crepe-productivity")]
    jobs, skipped = paper_jobs.plan(["cc12m-rn50", "openai-rn50"], ["sugarcrepe"])
    assert [(j.key, j.benchmark) for j in jobs] == [("openai-rn50", "sugarcrepe")]
    assert skipped == ["skip cc12m-rn50: not evaluated on these benchmarks in its paper"]
    with pytest.raises(ModelError, match="unknown paper model 'nope'; the rosters' checkpoints: .*datacomp"):
        paper_jobs.plan(["nope"])


def test_scheduling_runs_the_planned_jobs():
    assert scheduling.Job is paper_jobs.Job
    options = {a.dest: a for a in cli.build_parser("evaluate-paper")._actions}
    assert options["benchmarks"].default is None        # each word of --models has its own: the rosters' ...
    assert paper_jobs.benchmark_names() == ["crepe-systematicity", "crepe-productivity", "sugarcrepe"]
    assert paper_jobs.field_benchmarks() == ["crepe-productivity", "winoground", "sugarcrepe", "valse"]  # ... the field's
    assert options["models"].default == ["paper"]


def test_field_is_the_tables_checkpoints_on_its_four_benchmarks():
    from crepe_utils import field
    jobs, skipped = paper_jobs.plan(["field"])
    assert skipped == [] and len(jobs) == 84 * 4
    by_key = _benchmarks(jobs)
    assert list(by_key) == list(field.ROSTER)
    assert {tuple(b) for b in by_key.values()} == {("crepe-productivity", "winoground", "sugarcrepe", "valse")}
    assert by_key["dfn2b-vit-b-16"] and "laion400m-vit-b-32" in by_key                  # new rows and reused ones
    jobs, _ = paper_jobs.plan(["field"], ["valse", "crepe-systematicity"])
    assert {j.benchmark for j in jobs} == {"valse"} and len(jobs) == 84
    args = cli.build_parser("evaluate-paper").parse_args(["--models", "field", "--benchmarks", "valse", "--out", "x"])
    assert args.benchmarks == ["valse"]


# ------------------------------------------------------------------------------ folders

def test_one_folder_for_different_datasets_is_refused():
    jobs, _ = paper_jobs.plan(["openai-rn50"])
    with pytest.raises(paper_jobs.FolderError) as caught:
        paper_jobs.check_folders(jobs, "data/crepe", None)
    assert isinstance(caught.value, CrepeError)
    assert str(caught.value) == (
        "--data-dir names one folder, but these jobs read different data (crepe-productivity read crepe and vg; "
        "sugarcrepe read sugarcrepe and coco): leave them out (each benchmark then reads its own: "
        "crepe-productivity: $CREPE_DATA/crepe and $VG_IMAGES; sugarcrepe: $SUGARCREPE_DATA and $COCO_IMAGES) or "
        "choose one kind with --benchmarks")
    paper_jobs.check_folders(jobs, None, None)                                   # no folder given: fine
    crepe_jobs, _ = paper_jobs.plan(["paper"], ["systematicity", "productivity"])
    paper_jobs.check_folders(crepe_jobs, "data/crepe", "data/vg")               # one dataset: fine


def test_the_command_refuses_it_in_one_line_before_any_model_loads(tmp_path, capsys):
    rc = cli.main(["evaluate-paper", "--models", "openai-rn50", "--data-dir", str(tmp_path), "--image-dir",
                   str(tmp_path), "--out", str(tmp_path / "out"), "--device", "cpu"])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 1 and len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith("error: --data-dir and --image-dir each name one folder, but these jobs read "
                               "different data")
    assert not (tmp_path / "out").exists()


def test_make_evaluate_lets_each_benchmark_read_its_own_folders():
    recipe = re.search(r"^evaluate:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert "evaluate-paper" in recipe and "--data-dir" not in recipe and "--image-dir" not in recipe
    help_text = cli.build_parser("evaluate-paper").format_help()
    assert "$SUGARCREPE_DATA" in help_text and "$VG_IMAGES" in help_text
    assert "`make evaluate`" in (ROOT / "docs" / "evaluating.md").read_text() and \
        "$SUGARCREPE_DATA" in (ROOT / "docs" / "evaluating.md").read_text()


# ------------------------------------------------------------------------------ end to end

@pytest.fixture
def both_benchmarks(tmp_path, monkeypatch):
    """A synthetic CREPE root (every complexity) and SugarCrepe root, found through the environment only."""
    from crepe_utils.benchmarks.crepe import queries as D
    _, vg = helpers.synthetic_crepe_root(tmp_path / "data", n_images=8, rows_per_file=3, complexities=D.COMPLEXITIES)
    sugar, coco = helpers.sugarcrepe_root(tmp_path / "sugar")
    for name, value in (("CREPE_DATA", tmp_path / "data"), ("VG_IMAGES", vg), ("SUGARCREPE_DATA", sugar),
                        ("COCO_IMAGES", coco)):
        monkeypatch.setenv(name, str(value))
    return tmp_path


def test_evaluate_paper_writes_both_benchmarks_results(both_benchmarks, tiny_model, monkeypatch, capsys):
    """openai-rn50 is in both tables: its productivity and SugarCrepe jobs run (a tiny random model stands in
    for its weights), each reading its own benchmark's folders."""
    from crepe_utils.models import load_model
    cfg, ckpt = tiny_model
    asked = []

    def load(self, key):
        asked.append(key)
        return load_model(cfg.stem, str(ckpt), str(cfg), device=self.device, precision=self._precision())

    monkeypatch.setattr(scheduling._Runner, "_load", load)
    out = both_benchmarks / "out"
    rc = cli.main(["evaluate-paper", "--models", "openai-rn50", "--out", str(out), "--no-cache", "--kind", "fixture",
                   "--limit", "2", "--device", "cpu"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert asked == ["openai-rn50"] and "error" not in captured.err
    assert "== OpenAI CLIP RN50: crepe-productivity" in captured.out and "== OpenAI CLIP RN50: sugarcrepe" in captured.out
    summary = crepe_utils.load_results(out)
    assert set(summary["benchmark"]) == {"productivity", "sugarcrepe"}
    assert set(summary.loc[summary["benchmark"] == "sugarcrepe", "subset"]) == set(SUBSETS)
    manifests = {p.parent.name: p.read_text() for p in out.rglob("manifest.json")}
    assert sorted(manifests) == ["productivity", "sugarcrepe"], sorted(manifests)
    assert str(both_benchmarks / "data" / "crepe") in manifests["productivity"]
    assert str(both_benchmarks / "sugar" / "sugarcrepe") in manifests["sugarcrepe"]
