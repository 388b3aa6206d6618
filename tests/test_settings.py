"""The evaluation settings are declared once: the command line, the checks and the manifest follow them."""
from __future__ import annotations

import dataclasses
import json

import pytest

from crepe_utils.cli import build_parser, main
from crepe_utils.evaluation import EvaluationError, evaluate
from crepe_utils.engine import precisions
from crepe_utils.settings import EvaluationSettings, SettingsError, from_args
from crepe_utils.errors import CrepeError

#: Written out by hand: setting → its command-line option. A field added without an option, or an
#: option that stops setting its field, fails here.
OPTIONS = {
    "device": "--device", "precision": "--precision", "batch_size": "--batch-size",
    "text_batch_size": "--text-batch-size", "num_workers": "--num-workers", "limit": "--limit",
    "tie_policy": "--tie-policy", "truncation": "--truncation", "length_cut": "--no-length-cut",
    "skip_missing_images": "--skip-missing-images", "on_bad_row": "--skip-bad-rows",
    "empty_negatives": "--empty-negatives", "n_boot": "--n-boot",
}
#: The options that are not evaluation settings (locations, labels, what to evaluate).
NOT_SETTINGS = {"--data-dir", "--image-dir", "--out", "--cache-dir", "--no-cache", "--kind", "--label"}
WHAT = {"evaluate": {"--benchmark", "--model", "--pretrained", "--model-config", "--hn-types", "--train-data",
                     "--complexities", "--no-all-negatives", "--subsets", "--layout", "--why-hard", "--grouping",
                     "--pieces", "--subset", "--fold-size", "--max-folds", "--fold-rule", "--fold-seed",
                     "--protocol", "--splits"},
        "evaluate-paper": {"--models", "--benchmarks", "--devices"}}


def _options(command: str) -> dict[str, str]:
    """option string → destination, for every option of ``command`` but --help."""
    parser = build_parser(command)
    return {s: a.dest for a in parser._actions for s in a.option_strings if s not in ("-h", "--help")}


@pytest.mark.parametrize("command", ["evaluate", "evaluate-paper"])
def test_every_setting_has_its_option_and_every_option_is_a_setting_or_listed(command):
    assert {f.name for f in dataclasses.fields(EvaluationSettings)} == set(OPTIONS)
    options = _options(command)
    assert {options[o] for o in OPTIONS.values()} == set(OPTIONS)          # each option sets its own field
    assert {o: options[o] for o in OPTIONS.values()} == {o: f for f, o in OPTIONS.items()}
    assert set(options) == set(OPTIONS.values()) | NOT_SETTINGS | WHAT[command]


def test_options_parse_to_the_settings_they_name():
    base = ["--benchmark", "productivity", "--model", "m"]
    parser = build_parser("evaluate")
    assert from_args(parser.parse_args(base)) == EvaluationSettings()
    args = parser.parse_args(base + [
        "--device", "cpu", "--precision", "bf16", "--batch-size", "3", "--text-batch-size", "7", "--num-workers", "2",
        "--limit", "5", "--tie-policy", "optimistic", "--truncation", "official", "--no-length-cut",
        "--skip-missing-images", "--skip-bad-rows", "--empty-negatives", "keep", "--n-boot", "100"])
    assert from_args(args) == EvaluationSettings(
        device="cpu", precision="bf16", batch_size=3, text_batch_size=7, num_workers=2, limit=5,
        tie_policy="optimistic", truncation="official", length_cut=False, skip_missing_images=True,
        on_bad_row="skip", empty_negatives="keep", n_boot=100)


def test_defaults_are_the_documented_ones():
    assert dataclasses.asdict(EvaluationSettings()) == {
        "device": "auto", "precision": "fp32", "batch_size": 256, "text_batch_size": 512, "num_workers": None,
        "limit": None, "tie_policy": "pessimistic", "truncation": None, "length_cut": True,
        "skip_missing_images": False, "on_bad_row": "raise", "empty_negatives": "skip", "n_boot": 5000}


@pytest.mark.parametrize("overrides, named, allowed", [
    ({"batch_size": 0}, "batch_size=0 (--batch-size)", "an integer >= 1"),
    ({"text_batch_size": "512"}, "text_batch_size='512' (--text-batch-size)", "an integer >= 1"),
    ({"num_workers": -1}, "num_workers=-1 (--num-workers)", "an integer >= 0 or None"),
    ({"limit": 2.5}, "limit=2.5 (--limit)", "an integer >= 1 or None"),
    ({"limit": 0}, "limit=0 (--limit)", "an integer >= 1 or None"),   # 0 is refused: it would read as "no limit"
    # the engine's list of precisions may grow: that list, however long
    ({"precision": "fp8"}, "precision='fp8' (--precision)", "one of " + ", ".join(map(repr, precisions.PRECISIONS))),
    ({"tie_policy": "random"}, "tie_policy='random' (--tie-policy)", "one of 'pessimistic', 'optimistic'"),
    ({"truncation": "cut"}, "truncation='cut' (--truncation)", "one of 'keep_eot', 'official', 'error' or None"),
    ({"length_cut": "no"}, "length_cut='no' (--no-length-cut)", "True or False"),
    ({"skip_missing_images": 1}, "skip_missing_images=1 (--skip-missing-images)", "True or False"),
    ({"on_bad_row": "ignore"}, "on_bad_row='ignore' (--skip-bad-rows)", "one of 'raise', 'skip'"),
    ({"n_boot": True}, "n_boot=True (--n-boot)", "an integer >= 1"),
])
def test_an_invalid_setting_is_one_error_naming_it(overrides, named, allowed):
    with pytest.raises(SettingsError) as err:
        EvaluationSettings(**overrides)
    assert str(err.value) == f"evaluation setting {named} is not allowed: it must be {allowed}"
    assert isinstance(err.value, CrepeError)


def test_evaluate_checks_its_settings_before_loading_anything(tmp_path):
    # "no-such-model" would be a model error: the settings error must come first
    with pytest.raises(SettingsError, match="batch_size=0"):
        evaluate("no-such-model", "productivity", out=tmp_path, batch_size=0)
    with pytest.raises(EvaluationError, match="no 'batchsize'.*EvaluationSettings .*batch_size"):
        evaluate("no-such-model", "productivity", out=tmp_path, batchsize=8)
    with pytest.raises(SettingsError, match="must be an EvaluationSettings"):
        evaluate("no-such-model", "productivity", out=tmp_path, settings={"batch_size": 8})
    assert not tmp_path.joinpath("no-such-model").exists()


def test_a_bad_setting_on_the_command_line_is_a_clean_error(tmp_path, capsys):
    rc = main(["evaluate-paper", "--models", "no-such-model", "--out", str(tmp_path), "--batch-size", "0"])
    err = capsys.readouterr().err
    assert rc == 1 and err == ("error: evaluation setting batch_size=0 (--batch-size) is not allowed: it must be an integer "
                        ">= 1\n")


def test_the_manifest_records_the_settings_the_run_used(tiny_model, synthetic_root, tmp_path):
    cfg, ckpt = tiny_model
    data_dir, image_dir = synthetic_root
    chosen = EvaluationSettings(device="cpu", batch_size=3, text_batch_size=7, limit=2, tie_policy="optimistic",
                                length_cut=False, on_bad_row="skip", n_boot=50)
    evaluate(cfg.stem, "productivity", model_config=str(cfg), pretrained=str(ckpt), complexities=(4,), data_dir=data_dir, image_dir=image_dir, out=tmp_path, cache_dir=False, kind="fixture", progress=False, settings=chosen, text_batch_size=9)        # a keyword overrides settings=
    [path] = tmp_path.rglob("manifest.json")
    engine_section = json.loads(path.read_text())["engine"]
    # what was left open is recorded as the run resolved it: the tiny model's policy, no workers on CPU
    expected = {"device": "cpu", "precision": "fp32", "batch_size": 3, "text_batch_size": 9, "num_workers": 0,
                "limit": 2, "tie_policy": "optimistic", "truncation": "keep_eot", "length_cut_requested": False,
                "skip_missing_images": False, "on_bad_row": "skip", "empty_negatives": "skip", "n_boot": 50}
    assert {k: engine_section[k] for k in expected} == expected
    assert engine_section["length_cut"] is False                    # the engine's own record, beside the request
    used = dataclasses.replace(chosen, text_batch_size=9, num_workers=0, truncation="keep_eot")
    # record() is asdict() but for the one key the engine's record already takes
    renamed = {("length_cut_requested" if k == "length_cut" else k): v for k, v in dataclasses.asdict(used).items()}
    assert used.record() == renamed == expected
