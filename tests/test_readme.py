"""Every Python and shell example in README.md and the pages of docs/ runs, or says why it cannot run on a laptop.

Examples are the lines of their ```bash and ```python blocks and their inline ``python -m
crepe_utils ...`` and ``crepe_utils.…(...)`` spans. They run as written, in a temporary working
folder, with two substitutions for what a laptop lacks: synthetic CREPE, Winoground and SugarCrepe
fixtures stand in for the real data (through the documented environment variables), and the
tiny random model stands in for any downloadable checkpoint.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

import crepe_utils
from crepe_utils import benchmarks, cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: README and the pages of docs/, whose examples are run alike.
TEXTS = "\n".join([README, *(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))])

#: Examples that are not run here, and why. Each must appear in README or docs/ (a stale entry fails).
NOT_RUN = {
    "make all": "runs in CI: .ci/run's `make docs-check` depends on it",
    "make test": "is this test suite",
    ".venv/bin/python -m pytest tests/test_metrics.py": "runs a part of this test suite",
    '.venv/bin/python -m pytest "tests/test_toy.py::test_training_is_reproducible"': "runs a part of this test suite",
    ".venv/bin/python -m pytest tests/test_valse.py -k command_line -x -q": "runs a part of this test suite",
    "make docs": "runs in CI (`make docs-check` depends on it)",
    "make docs-check": "runs in CI (.ci/run)",
    "make data": "downloads about 15 GB",
    "make evaluate": "needs the real data and weights (a GPU machine)",
    'make evaluate MODELS="laion400m-vit-b-32 openai-rn50" DEVICE=cuda PRECISION=fp32': "needs a GPU",
    "make evaluate DEVICE=cuda:0,cuda:1": "needs two GPUs (tests/test_scheduling.py runs two CPU workers)",
    "sbatch docs/slurm/evaluate_array.sbatch": "needs a Slurm cluster (tests/test_scheduling.py dry-runs its tasks)",
    "python -m crepe_utils compare A B --out DIR": "a synopsis: A and B stand for result folders",
    "python -m crepe_utils standing RESULTS... --out DIR": "a synopsis: RESULTS stands for result folders",
    "python -m crepe_utils compare results/evaluated/blind_bigram/sugarcrepe "
    "results/evaluated/blind_classifier/sugarcrepe --out results/compare/bigram-vs-classifier":
        "needs the two results the lines before it write (each example runs in a fresh folder); the Python example "
        "after it evaluates, compares and places in one, and tests/test_versus.py runs both commands",
    "python -m crepe_utils standing results/evaluated/my-model/sugarcrepe results/evaluated/blind_bigram/sugarcrepe "
    "--out results/standing/my-model": "needs results evaluated before it (each example runs in a fresh folder); "
                                       "the Python example of docs/comparing.md places two",
}


def _blocks(lang: str, text: str = TEXTS) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.S | re.M)


def shell_examples(text: str = TEXTS) -> list[str]:
    commands = []
    for block in _blocks("bash", text):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line:
                commands.append(re.sub(r"\s+", " ", line))
    inline = [re.sub(r"\s+", " ", c) for c in re.findall(r"`(python -m crepe_utils [^`]+)`", text)]
    return list(dict.fromkeys(commands + inline))


def python_examples() -> list[str]:
    inline = [f"import crepe_utils\n{code}" for code in re.findall(r"`(crepe_utils\.\w+\([^`]*\))`", TEXTS)]
    return _blocks("python") + inline


def test_readme_shows_how_to_evaluate_on_every_benchmark():
    evaluate = [c for c in shell_examples(README) if c.startswith("python -m crepe_utils evaluate --benchmark")]
    shown = {c.split("--benchmark ")[1].split()[0] for c in evaluate}
    assert shown == set(benchmarks.BENCHMARKS), f"README's evaluate examples cover {shown}"
    assert "python -m crepe_utils evaluate --help" in README


def test_readme_is_short_and_links_every_page_of_docs():
    assert len(README.splitlines()) <= 200
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)\)", README))
    assert pages <= linked, f"pages of docs/ the README does not link: {sorted(pages - linked)}"


def test_readme_lists_every_declared_dataset_as_the_declarations_say():
    from crepe_utils.commands.download import dataset_table
    block = re.search(r"<!-- datasets:start[^>]*-->\n(.*?)<!-- datasets:end -->", README, flags=re.S)
    assert block, "README has no datasets block"
    assert block.group(1) == dataset_table(), ("README's dataset table is not the declarations': paste the output "
                                               "of `python -m crepe_utils download --table` between its markers")
    for name in benchmarks.DATASETS.datasets:
        assert f"make data-{name}`" in block.group(1)                   # a row (and its target) per dataset
    assert "v7w\\_\\<id\\>.jpg" in block.group(1)                      # no raw <tag> for Markdown to swallow
    # an image set is what the benchmarks reading it make of it: COCO val2017 is SugarCrepe's and VALSE's
    assert "| images for evaluating on SugarCrepe and VALSE | `$COCO_IMAGES` | `make data-coco` |" in block.group(1)
    assert ("| images for evaluating on CREPE systematicity, CREPE productivity and CREPE raw-set retrieval | "
            "`$VG_IMAGES` |") in block.group(1)
    gated = [line for line in block.group(1).splitlines() if "HF_TOKEN=... make data-" in line]
    assert len(gated) == 1 and "make data-winoground`" in gated[0]


def test_readme_has_the_examples_this_file_knows():
    commands = shell_examples()
    assert any(c.startswith("python -m crepe_utils evaluate") for c in commands)
    assert any("crepe_utils.evaluate(" in code for code in python_examples())
    stale = set(NOT_RUN) - set(commands)
    assert not stale, f"NOT_RUN names commands README and docs/ no longer have: {stale}"
    unknown = [c for c in commands if c not in NOT_RUN and not c.startswith("python -m crepe_utils ")]
    assert not unknown, f"examples that no test runs: {unknown} (run them here, or say why not in NOT_RUN)"


@pytest.fixture
def laptop(tmp_path, monkeypatch, tiny_model):
    """A working folder where the README's data and checkpoints are the fixtures; returns the substitutions."""
    import helpers
    from test_sugarcrepe_data import write_folder
    from test_winoground import _image_blobs, make_winoground

    from crepe_utils.benchmarks.crepe import queries as data
    from crepe_utils import evaluation
    from crepe_utils import models
    cfg, ckpt = tiny_model
    data_dir, image_dir = helpers.synthetic_crepe_root(tmp_path / "crepe-root", rows_per_file=3,
                                                       complexities=data.COMPLEXITIES)
    winoground = make_winoground(tmp_path / "winoground", "folder", _image_blobs(tmp_path))
    sugarcrepe, coco = write_folder(tmp_path / "sugarcrepe"), tmp_path / "coco"
    for item in (i for path in sugarcrepe.glob("*.json") for i in json.loads(path.read_text()).values()):
        if not (coco / item["filename"]).is_file():
            helpers.make_image(coco / item["filename"], size=(64, 48), seed=len(item["caption"]))
    valse = tmp_path / "valse"                 # one item per piece, each on a COCO image of the folder above
    valse.mkdir()
    from crepe_utils.benchmarks.valse.data import PIECE_NAMES
    for k, piece in enumerate(PIECE_NAMES):
        name = f"{k + 1:012d}.jpg"
        helpers.make_image(coco / name, size=(64, 48), seed=100 + k)
        (valse / f"{piece}.json").write_text(json.dumps({f"{piece}_0": {
            "dataset": "coco2017", "image_file": name, "caption": f"a {piece} caption", "foil": "a foil",
            "mturk": {"caption": 3, "foil": 0, "other": 0}}}, indent=4))
    real_load = models.load_model

    def load_tiny(model, pretrained=None, model_config=None, **kwargs):
        if model_config is None:                 # a registry key or hub tag: a checkpoint a laptop does not have
            model, pretrained, model_config = cfg.stem, str(ckpt), str(cfg)
        return real_load(model, pretrained, model_config, device="cpu")

    monkeypatch.setattr(models, "load_model", load_tiny)
    monkeypatch.setattr(evaluation, "load_model", load_tiny)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CREPE_DATA", str(data_dir.parent))
    monkeypatch.setenv("VG_IMAGES", str(image_dir))
    monkeypatch.setenv("WINOGROUND_DATA", str(winoground))
    monkeypatch.setenv("SUGARCREPE_DATA", str(sugarcrepe))
    monkeypatch.setenv("COCO_IMAGES", str(coco))
    monkeypatch.setenv("VALSE_DATA", str(valse))
    monkeypatch.setenv("CREPE_CACHE", str(tmp_path / "cache"))
    # app. B.2's raw fold of 1,508 regions, cut to the synthetic set's few
    return {"my-arch": cfg.stem, "my-arch.json": str(cfg), "/path/to/checkpoint.pt": str(ckpt),
            "data/visual_genome": str(image_dir), "1508": "2"}


def _cli_examples() -> list[str]:
    return [c for c in shell_examples() if c.startswith("python -m crepe_utils ") and c not in NOT_RUN]


@pytest.mark.slow
@pytest.mark.parametrize("command", _cli_examples())
def test_readme_command_runs(command, laptop, capsys):
    argv = [laptop.get(word, word) for word in shlex.split(command)[3:]]
    if "--help" in argv:
        with pytest.raises(SystemExit) as exit_:
            cli.main(argv)
        assert exit_.value.code == 0 and capsys.readouterr().out.startswith(f"usage: python -m crepe_utils {argv[0]} ")
        return
    status = cli.main(argv)
    captured = capsys.readouterr()
    out = captured.out
    assert status == 0, f"{command!r} exited {status}:\n{out}\n{captured.err}"
    if argv[0] == "models":
        assert "laion400m-vit-b-32" in out
    if argv[0] == "evaluate":
        written = crepe_utils.load_results(argv[argv.index("--out") + 1] if "--out" in argv else "results/evaluated")
        bench = benchmarks.get(argv[argv.index("--benchmark") + 1])
        assert set(written["benchmark"]) <= {bench.name, *bench.aliases} and (written["n_queries"] > 0).all()
    if argv[0] == "winoground":
        assert len(crepe_utils.load_results(argv[argv.index("--out") + 1], scoring="winoground")) > 0


@pytest.mark.slow
@pytest.mark.parametrize("code", python_examples(), ids=lambda code: code.strip().splitlines()[-1][:60])
def test_readme_python_example_runs(code, laptop, request):
    if "results/toy-small" in code:       # the docs' small toy world is there, computed once per session (SMALL_TOY)
        shutil.copytree(request.getfixturevalue("small_toy"), Path("results") / "toy-small")
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the README's (or docs') own example
    assert namespace["crepe_utils"] is crepe_utils
    for name in ("summary", "evaluated", "toy"):
        if name in namespace:
            frame = namespace[name]
            assert len(frame) > 0 and {"r1", "n_queries"} <= set(frame.columns), name
