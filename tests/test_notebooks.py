"""Every notebook runs through papermill with its default parameters and writes what it promises.

Runs write figures and tables into temporary folders, never into the project's own. Every run
also checks that a reader sees each figure the run saved, inline in the executed notebook and
its HTML, byte for byte the PNG in ``figures/``.
"""
from __future__ import annotations

import base64
import shutil
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from crepe_utils.evaluation import evaluate
from crepe_utils.notebooks import execute
from crepe_utils.paths import machine_roots, portable_text

import helpers
from conftest import SMALL_TOY

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

pytestmark = pytest.mark.slow

EXPECTED = {
    "01_benchmark_totals": (["productivity_rows", "caption_tokens"],
                            ["chance_levels", "paper_totals", "productivity_rows", "productivity_facts",
                             "granularity", "checks_totals"]),
    "02_systematicity": (["systematicity_delta", "systematicity_sc_uc"],
                         ["systematicity_published", "checks_systematicity"]),
    "03_productivity": (["productivity_endpoints"], ["productivity_published", "checks_productivity"]),
    "05_winoground": (["winoground_table3", "winoground_vs_crepe"], ["winoground_table3", "winoground_caption_pairs",
                                                                    "winoground_vs_crepe", "checks_winoground"]),
    "07_blind_baselines": (["blind_published", "blind_productivity", "blind_length", "blind_sugarcrepe"],
                           ["blind_scorers", "blind_productivity", "blind_length", "blind_sugarcrepe",
                            "blind_winoground", "blind_published", "blind_hard_sizes", "checks_blind"]),
    "04_imagenet_correlation": (["r2_imagenet"], ["imagenet_zeroshot", "r2_model_set_search", "r2_imagenet",
                                                  "checks_r2"]),
    "08_sugarcrepe": (["sugarcrepe_published", "sugarcrepe_imagenet_correlation"],
                      ["sugarcrepe_subsets", "sugarcrepe_published", "sugarcrepe_published_intervals",
                       "sugarcrepe_imagenet_r", "checks_sugarcrepe"]),
    "10_field": (["field_imagenet_crepe", "field_imagenet_sugarcrepe", "field_imagenet_winoground", "field_imagenet_valse",
                  "field_correlations", "field_blind"],
                 ["field_flagged_rows", "field_granularity", "field_sugarcrepe_agreement", "field_correlations",
                  "field_papers", "field_blind", "checks_field"]),
}


def _run(name, tmp_path, **params):
    figures, tables = tmp_path / "figures", tmp_path / "tables"
    out = execute(NOTEBOOKS / f"{name}.ipynb", tmp_path / "build" / f"{name}.ipynb",
                  {"figures_dir": str(figures), "tables_dir": str(tables), **params})
    return figures, tables, nbformat.read(out, as_version=4)


def _inline_pngs(nb) -> list[bytes]:
    return [base64.b64decode(o["data"]["image/png"]) for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if "image/png" in o.get("data", {})]


def assert_figures_inline(figures: Path, executed: Path, nb) -> None:
    """Each PNG the run saved is an output of the executed notebook and an image of its HTML; nothing else is."""
    saved = {png.name: png.read_bytes() for png in sorted(figures.glob("*.png"))}
    shown = _inline_pngs(nb)
    html = executed.with_suffix(".html").read_text(encoding="utf-8")
    for name, data in saved.items():
        assert data in shown, f"{executed.name}: {name} is saved to figures/ but not shown in the notebook"
        assert f"data:image/png;base64,{base64.b64encode(data).decode()}" in html, \
            f"{executed.with_suffix('.html').name}: {name} is not an image of the HTML"
    assert len(shown) == len(saved), f"{executed.name}: {len(shown)} inline images for {len(saved)} saved figures"
    texts = [str(o.get("text", "")) for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "stream"]
    assert not [t for t in texts if "IProgress" in t or "non-interactive" in t], "a progress or backend warning"


def _errors(nb) -> list[str]:
    return [o.get("ename", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
            if o.get("output_type") == "error"]


#: What the notebooks that read data write before any download (the others do not read data).
WITHOUT_DATA = {
    "01_benchmark_totals": (["productivity_rows"], ["chance_levels", "paper_totals", "productivity_rows", "granularity",
                                                    "checks_totals"]),
    "05_winoground": (EXPECTED["05_winoground"][0],
                      [t for t in EXPECTED["05_winoground"][1] if t != "winoground_caption_pairs"]),
    "07_blind_baselines": (["blind_published"], ["blind_scorers", "blind_published", "checks_blind"]),
    "08_sugarcrepe": (EXPECTED["08_sugarcrepe"][0],
                      [t for t in EXPECTED["08_sugarcrepe"][1] if t != "sugarcrepe_subsets"]),
    "10_field": ([f for f in EXPECTED["10_field"][0] if f != "field_blind"],       # the table is carried; the blind
                 [t for t in EXPECTED["10_field"][1] if t != "field_blind"]),      # part needs the released text
}


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """``default_run(name)``: (folder, figures, tables, executed notebook) of notebook ``name`` run with its defaults
    on a machine with no data and nothing evaluated; each notebook once per session, whichever tests read it."""
    runs: dict = {}

    def run(name: str):
        if name not in runs:
            folder = tmp_path_factory.mktemp(f"default-{name}")
            runs[name] = (folder, *_run(name, folder, results_dir=str(folder / "no-results")))
        return runs[name]
    return run


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs_with_defaults(name, default_run):
    """As on a machine with no data downloaded and nothing evaluated."""
    assert_default_run(name, *default_run(name), *WITHOUT_DATA.get(name, EXPECTED[name]))


@pytest.mark.shared
@pytest.mark.parametrize("name", sorted(WITHOUT_DATA))
def test_notebook_runs_with_defaults_on_the_reference_data(name, tmp_path):
    assert_default_run(name, tmp_path, *_run(name, tmp_path, results_dir=str(tmp_path / "no-results")),
                       *EXPECTED[name])


def assert_default_run(name, tmp_path, figures, tables, nb, fig_names, table_names):
    assert not _errors(nb)
    for stem in fig_names:
        for ext in ("png", "svg"):
            assert (figures / f"{stem}.{ext}").stat().st_size > 1000, f"{stem}.{ext}"
    for stem in table_names:
        for ext in ("csv", "md", "tex"):
            assert (tables / f"{stem}.{ext}").exists(), f"{stem}.{ext}"
    checks_csv = next(tables.glob("checks_*.csv"))
    statuses = set(pd.read_csv(checks_csv)["status"])
    assert "fail" not in statuses and statuses <= {"pass", "paper inconsistency", "sources disagree",
                                                   "differs at scale", "holds in part", "needs data"}
    assert (tmp_path / "build" / f"{name}.html").exists()
    assert_figures_inline(figures, tmp_path / "build" / f"{name}.ipynb", nb)
    if fig_names:
        assert len(_inline_pngs(nb)) >= len(fig_names)


def _markdown(nb) -> str:
    return "\n".join(str(o.get("data", {}).get("text/markdown", "")) for c in nb.cells for o in c.get("outputs", []))


def test_sugarcrepe_notebook_says_what_is_missing(default_run):
    """No JSONs, no results: the published sections run, and two sentences say what is missing and how to get it."""
    _, figures, tables, nb = default_run("08_sugarcrepe")
    assert not _errors(nb) and not (tables / "sugarcrepe_subsets.csv").exists()
    text = _markdown(nb)
    assert "No SugarCrepe JSONs" in text and "make data-sugarcrepe" in text
    assert "No evaluated SugarCrepe results" in text and "evaluate --benchmark sugarcrepe" in text
    assert "make data-coco" in text
    r = pd.read_csv(tables / "sugarcrepe_imagenet_r.csv").set_index("subset")
    assert len(r) == 7 and (r["n_models"] == 17).all() and (r["difference"].abs() < 0.015).all()


def _sugarcrepe_fixture_results(root: Path) -> Path:
    """SugarCrepe summaries of one checkpoint of the published table (kind "fixture"): the published R@1 plus
    one point, two tied pairs per subset, an interval around each."""
    from crepe_utils.benchmarks.sugarcrepe import reported as sugarcrepe_reported
    from crepe_utils.results import store
    pub = sugarcrepe_reported.results()
    pub = pub[pub["imagenet_model"] == "openai-vit-b-32"]
    rows = [{"model": "openai-vit-b-32", "benchmark": "sugarcrepe", "hn_type": r.subset, "n_queries": 500,
             "n_candidates": 2, "chance_r1": 50.0, "r1": r.r1 + 1, "r1_ci_low": r.r1 - 3, "r1_ci_high": r.r1 + 5,
             "r1_optimistic": r.r1 + 1.4, "n_tied_queries": 2, "n_skipped": 0} for r in pub.itertuples()]
    helpers.write_retrieval(store.result_dir(root, "openai-vit-b-32", "sugarcrepe"),
                            pd.DataFrame(rows).reindex(columns=store.SUMMARY_COLUMNS),
                            pd.DataFrame(columns=store.PER_QUERY_COLUMNS),
                            {"kind": "fixture", "engine": {"limit": None}})
    return root


def test_sugarcrepe_notebook_shows_evaluated_results_beside_the_published(tmp_path):
    results = _sugarcrepe_fixture_results(tmp_path / "results")
    figures, tables, nb = _run("08_sugarcrepe", tmp_path, results_dir=str(results), output_prefix="fx_")
    assert not _errors(nb)
    ev = pd.read_csv(tables / "fx_sugarcrepe_evaluated.csv")
    assert len(ev) == 7 and set(ev["kind"]) == {"fixture"} and (ev["n_tied_queries"] == 2).all()
    assert ev["difference"].round(6).eq(1.0).all()                 # beside the same checkpoint's published R@1
    assert (ev["r1_ci_low"] <= ev["r1"]).all() and (ev["r1"] <= ev["r1_ci_high"]).all()
    assert (figures / "fx_sugarcrepe_evaluated.png").stat().st_size > 1000
    assert_figures_inline(figures, tmp_path / "build" / "08_sugarcrepe.ipynb", nb)
    assert "No evaluated SugarCrepe results" not in _markdown(nb)


def test_r2_notebook_reproduces_the_paper(default_run):
    _, _, tables, _ = default_run("04_imagenet_correlation")
    r2 = pd.read_csv(tables / "r2_imagenet.csv")
    known = r2[r2["n_models"] > 0]
    assert len(known) == 6 and known["reproduced"].all()
    assert (known["r2_ci_low"] <= known["r2"]).all() and (known["r2"] <= known["r2_ci_high"]).all()


@pytest.fixture(scope="module")
def fixture_results(tmp_path_factory, tiny_model, synthetic_root):
    cfg, ckpt = tiny_model
    data_dir, image_dir = synthetic_root
    out = tmp_path_factory.mktemp("fixture-results")
    common = dict(data_dir=data_dir, image_dir=image_dir, out=out, kind="fixture", label="synthetic fixture",
                  cache_dir=False, device="cpu", progress=False, n_boot=200)
    evaluate(cfg.stem, "productivity", model_config=str(cfg), pretrained=str(ckpt), complexities=(4, 5), **common)
    evaluate(cfg.stem, "systematicity", model_config=str(cfg), pretrained=str(ckpt), train_data="laion", **common)
    return out


def _with_damaged_copies(results: Path, out: Path) -> tuple[Path, list[Path]]:
    """``results`` plus two damaged copies of its results: a truncated per-query table, a summary that is not CSV."""
    shutil.copytree(results, out)
    [syst] = [p.parent for p in out.rglob("summary.csv") if p.parent.name.startswith("systematicity")]
    [prod] = [p.parent for p in out.rglob("summary.csv") if p.parent.name == "productivity"]
    damaged = [out / "damaged-a" / syst.name / "per_query.csv.gz", out / "damaged-b" / prod.name / "summary.csv"]
    for source, bad in zip((syst, prod), damaged):
        shutil.copytree(source, bad.parent)
    damaged[0].write_bytes(damaged[0].read_bytes()[:200])
    damaged[1].write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    return out, damaged


def test_systematicity_notebook_shows_evaluated_results(fixture_results, tmp_path):
    """Beside damaged copies of the results, which the notebook names and leaves out."""
    results, damaged = _with_damaged_copies(fixture_results, tmp_path / "results")
    figures, tables, nb = _run("02_systematicity", tmp_path, results_dir=str(results), n_boot=200,
                               output_prefix="fx_")
    assert not _errors(nb)
    stderr = "".join(str(o.get("text", "")) for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stderr")
    for bad in damaged:               # named as the runner writes every path of this machine ($TMPDIR/...)
        assert f"UnreadableResultWarning: {portable_text(str(bad), machine_roots())} " in stderr
    ev = pd.read_csv(tables / "fx_systematicity_evaluated.csv")
    assert set(ev["kind"]) == {"fixture"} and sorted(ev["hn_type"]) == ["atom", "combined", "comp"]
    assert (ev["delta_ci_low"] <= ev["delta"]).all() and (ev["delta"] <= ev["delta_ci_high"]).all()
    assert (figures / "fx_systematicity_delta_evaluated.png").exists()
    assert_figures_inline(figures, tmp_path / "build" / "02_systematicity.ipynb", nb)
    text = "\n".join(str(o.get("data", {}).get("text/markdown", "")) for c in nb.cells for o in c.get("outputs", []))
    assert "synthetic test fixtures" in text                        # a fixture number is labelled as such


def test_productivity_notebook_draws_evaluated_curves(fixture_results, tmp_path):
    figures, tables, nb = _run("03_productivity", tmp_path, results_dir=str(fixture_results), output_prefix="fx_")
    assert not _errors(nb)
    ev = pd.read_csv(tables / "fx_productivity_evaluated.csv")
    assert set(ev["complexity"]) == {4, 5} and set(ev["kind"]) == {"fixture"}
    assert (figures / "fx_productivity_curves.png").exists()
    assert_figures_inline(figures, tmp_path / "build" / "03_productivity.ipynb", nb)


def test_winoground_notebook_shows_evaluated_scores_and_cross_benchmark(fixture_results, tiny_model, tmp_path):
    cfg, ckpt = tiny_model
    data_dir = helpers.synthetic_winoground(tmp_path / "wg")
    evaluate(cfg.stem, "winoground", pretrained=str(ckpt), model_config=str(cfg), out=fixture_results,
             data_dir=data_dir, why_hard="none", device="cpu", n_boot=200, kind="fixture", progress=False)
    figures, tables, nb = _run("05_winoground", tmp_path, results_dir=str(fixture_results),
                               winoground_dir=str(data_dir), output_prefix="fx_")
    assert not _errors(nb)
    ev = pd.read_csv(tables / "fx_winoground_evaluated.csv")
    assert set(ev["kind"]) == {"fixture"} and len(ev) > 3
    cross = pd.read_csv(tables / "fx_winoground_vs_crepe.csv")
    assert set(cross["source"]) == {"published", "evaluated"}
    assert set(cross.loc[cross["source"] == "evaluated", "kind"]) == {"fixture"}
    assert_figures_inline(figures, tmp_path / "build" / "05_winoground.ipynb", nb)


def test_toy_world_notebook_runs_the_pipeline_and_labels_its_numbers(tmp_path, monkeypatch, small_toy):
    """A small world (few scenes, few steps) through the real pipeline, engine and notebook: the notebook calls the
    pipeline with the session's small toy world's settings, in a copy of its folder, and finds every stage
    computed (trained once per session: tests/conftest.py)."""
    monkeypatch.setenv("CREPE_CACHE", str(tmp_path / "cache"))
    shutil.copytree(small_toy, tmp_path / "toy")
    stages = {p: p.read_bytes() for p in (tmp_path / "toy").glob("*/stage.json")}
    figures, tables, nb = _run("06_toy_world", tmp_path, toy_dir=str(tmp_path / "toy"), **SMALL_TOY, n_boot=200)
    assert not _errors(nb)
    for stem in ("toy_world_examples", "toy_training_loss", "toy_world_systematicity", "toy_world_productivity"):
        assert (figures / f"{stem}.png").exists(), stem
    assert_figures_inline(figures, tmp_path / "build" / "06_toy_world.ipynb", nb)
    syst = pd.read_csv(tables / "toy_world_systematicity.csv")
    assert set(syst["hn_type"]) == {"atom", "comp", "combined"} and (syst["n_SC"] == 40).all()
    manifests = list((tmp_path / "toy" / "results").rglob("manifest.json"))
    assert manifests and all('"kind": "toy"' in m.read_text() for m in manifests)
    assert len(stages) == 3 and all(p.read_bytes() == b for p, b in stages.items())    # reused, not recomputed
