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


def test_the_benchmarks_declare_every_column_of_the_table_once():
    """Each benchmark's declared columns are columns of the carried table, together all of them but the
    ImageNet one, in the table's order, and each benchmark's chance and counts are numbers where it declares
    them. Would catch: a declared part the table spells otherwise, a column no benchmark declares, a chance
    given as prose."""
    header = field_reported.table_text()[0]
    benchmark_columns = [c for c in header if "::" in c and c != field.IMAGENET]
    declared = [c for d in field.declarations().values() for c in d.columns]
    assert declared == benchmark_columns
    assert len(benchmark_columns) == 24
    for d in field.declarations().values():
        for part in d.parts:
            assert 0 < d.chance(part) < 100
            assert isinstance(d.released(part), int) and d.released(part) > 0
    assert field.benchmark_of("valse::plurals") == "valse"


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


# ------------------------------------------------------------------ independent recomputations

def _pearson(x, y) -> float:
    """Pearson r from its definition (sums of products of deviations), with nothing shared with the package."""
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / (sxx * syy) ** 0.5


def _rows_by_set(which: str) -> list[dict]:
    """The carried table's rows as text → floats, for one set of checkpoints (the fine-tune rule: tag ends -ft)."""
    rows = [{k: (v if k in ("arch", "pretrained", "family") else float(v)) for k, v in r.items()}
            for r in field_reported.table_text()]
    ft = [r["pretrained"].endswith("-ft") for r in rows]
    return [r for r, f in zip(rows, ft) if which == "all" or (which == "fine-tuned") == f]


def test_the_correlations_are_recomputed_from_the_carried_table():
    from crepe_utils.across import field as F
    table = F.correlations(n_boot=200)
    assert len(table) == 24 * 3
    assert table.groupby("set")["n"].first().to_dict() == {"all": 202, "fine-tuned": 8, "pretrained": 194}
    for r in table.itertuples():
        rows = _rows_by_set(r.set)
        x = [row["elevator::imagenet-1k"] for row in rows]
        y = [row[r.column] for row in rows]
        assert r.r == pytest.approx(_pearson(x, y), abs=1e-12), (r.column, r.set)
        assert r.r2 == pytest.approx(_pearson(x, y) ** 2, abs=1e-12)
        assert r.r_low <= r.r <= r.r_high and r.r2_low <= r.r2 <= r.r2_high


def test_a_few_correlations_are_the_values_the_research_found():
    """Spot values (two decimals), so a change of sets or columns shows as a number, not only as a mismatch."""
    from crepe_utils.across import field as F
    r = F.correlations(n_boot=100).set_index(["column", "set"])["r"]
    assert round(r["crepe::swap", "pretrained"], 2) == 0.57 and round(r["crepe::swap", "all"], 2) == 0.21
    assert round(r["sugarcrepe::replace_obj", "pretrained"], 2) == 0.91
    assert round(r["crepe::atom", "fine-tuned"], 2) == -0.74


def test_the_bootstrap_interval_is_a_resampling_of_checkpoints():
    """Percentiles of r over resamples drawn here with the same generator contract (indices with replacement)."""
    import numpy as np
    from crepe_utils.analysis.correlation import pearson_with_uncertainty
    rows = _rows_by_set("pretrained")
    x = np.array([row["elevator::imagenet-1k"] for row in rows])
    y = np.array([row["crepe::swap"] for row in rows])
    got = pearson_with_uncertainty(x, y, n_boot=500, seed=[0, 7])
    rng = np.random.default_rng([0, 7])
    idx = rng.integers(0, len(x), size=(500, len(x)))
    draws = [_pearson(list(x[i]), list(y[i])) for i in idx]
    assert got.r_low == pytest.approx(np.quantile(draws, 0.025), abs=1e-9)
    assert got.r2_high == pytest.approx(np.quantile(np.square(draws), 0.975), abs=1e-9)


def test_blind_ranks_are_counted_from_the_carried_table():
    """A scorer's place among the 202: checkpoints strictly below its value, and below its exact lower bound."""
    import pandas as pd
    from scipy.stats import beta
    from crepe_utils.across import field as F
    blind = pd.DataFrame([{"column": "crepe::atom", "scorer": "bigram", "k": 7800, "n": 16727},
                          {"column": "sugarcrepe::replace_rel", "scorer": "bigram", "k": 1037, "n": 1406},
                          {"column": "valse::existence", "scorer": "negation", "k": 249, "n": 505}])
    placed = F.blind_placement(blind, field_n={"crepe::atom": 17698}).set_index("column")
    rows = _rows_by_set("all")
    for r in blind.itertuples():
        value = 100 * r.k / r.n
        low = 100 * beta.ppf(0.025, r.k, r.n - r.k + 1)           # Clopper–Pearson, from the beta quantiles
        column = [row[r.column] for row in rows]
        assert placed.loc[r.column, "beats"] == sum(v < value for v in column)
        assert placed.loc[r.column, "beats_surely"] == sum(v < low for v in column)
        assert placed.loc[r.column, "beats_pretrained"] == sum(
            v < value for v, row in zip(column, rows) if not row["pretrained"].endswith("-ft"))
    assert placed.loc["crepe::atom", "beats"] == 199                  # all but DAC-LLM, DAC-SAM, CLoVe
    assert placed.loc["crepe::atom", "bound_low"] == pytest.approx(100 * 7800 / 17698)
    assert placed.loc["crepe::atom", "bound_high"] == pytest.approx(100 * (7800 + 17698 - 16727) / 17698)


def test_the_granularity_search_finds_the_table_n_and_rejects_the_released():
    from crepe_utils.across import field as F
    gran = F.granularity().set_index("column")
    for column in [c for cols in field.COLUMNS.values() for c in cols] + [field.IMAGENET]:
        values = [row[column] for row in _rows_by_set("all")]
        n = int(gran.loc[column, "common_n"])
        # every value is k/n here, and no smaller N holds them all (checked by brute force below n)
        assert all(abs(100 * round(v * n / 100) / n - v) <= 1e-9 for v in values), column
        assert not any(all(abs(100 * round(v * m / 100) / m - v) <= 1e-9 for v in values) for m in range(1, n)), column
    assert gran.loc[["crepe::atom", "crepe::swap", "crepe::negate"], "common_n"].tolist() == [17698, 7405, 17303]
    assert gran.loc["crepe::swap", "fits_released"] == 0 and gran.loc["sugarcrepe::swap_obj", "common_n"] == 245


def test_a_mean_over_files_would_not_sit_on_one_lattice():
    from crepe_utils.benchmarks.crepe import field_table as crepe_field
    power = crepe_field.lattice_power(field.table()).set_index("column")
    assert power["averaged_common_n"].isna().all()
    assert (power["pooled_common_n"] == power["released_sum"]).all()


def test_evaluated_results_are_set_beside_the_table_in_items_where_the_items_are_the_same(tmp_path):
    """A SugarCrepe result equal to the field's row but for one item, and a productivity result (other items)."""
    import pandas as pd
    import helpers
    from crepe_utils.results import store
    from crepe_utils.across import field as F
    row = F.checkpoint_rows().loc["openai-rn50"]
    counts = F.released_counts()
    subsets = [field.part(c) for c in field.COLUMNS["sugarcrepe"]]
    ks = {s: round(row[f"sugarcrepe::{s}"] * counts[f"sugarcrepe::{s}"] / 100) for s in subsets}
    ks["add_att"] += 1
    sugar = pd.DataFrame([{"model": "openai-rn50", "benchmark": "sugarcrepe", "hn_type": s,
                           "n_queries": counts[f"sugarcrepe::{s}"], "r1": 100 * ks[s] / counts[f"sugarcrepe::{s}"],
                           "n_skipped": 0} for s in subsets]).reindex(columns=store.SUMMARY_COLUMNS)
    empty = pd.DataFrame(columns=store.PER_QUERY_COLUMNS)
    helpers.write_retrieval(store.result_dir(tmp_path, "openai-rn50", "sugarcrepe"), sugar, empty,
                            {"kind": "evaluated", "benchmark": "sugarcrepe"})
    prod = pd.DataFrame([{"model": "openai-rn50", "benchmark": "productivity", "hn_type": "atom", "complexity": n,
                          "n_queries": 100, "r1": 20.0, "n_skipped": 0} for n in (4, 12)]).reindex(
        columns=store.SUMMARY_COLUMNS)
    helpers.write_retrieval(store.result_dir(tmp_path, "openai-rn50", "productivity"), prod, empty,
                            {"kind": "evaluated", "benchmark": "crepe-productivity"})
    beside = F.evaluated_beside(tmp_path).set_index("column")
    assert set(beside.index) == {f"sugarcrepe::{s}" for s in subsets} | {"crepe::atom"}
    assert beside.loc["sugarcrepe::add_att", "diff_items"] == 1 and beside.loc["sugarcrepe::replace_obj", "diff_items"] == 0
    atom = beside.loc["crepe::atom"]
    assert not atom["same_items"] and (atom["evaluated_k"], atom["evaluated_n"], atom["field_n"]) == (40, 200, 17698)
    assert F.evaluated_beside(tmp_path / "none").empty


def test_a_winoground_result_stands_beside_the_field_through_its_rule(tmp_path):
    """A Winoground result (its own rule's summary: breakdown × metric rows) reaches the field's columns through the
    generic path; only the ``all`` rows count, and a fixture (not evaluated) result adds nothing."""
    import json
    from crepe_utils.across import field as F
    def write(folder, kind, correct):
        folder.mkdir(parents=True)
        manifest = {"schema_version": 1, "kind": kind, "scoring": "winoground", "benchmark": "winoground",
                    "model": {"key": "openai-rn50"}, "selection": {}}
        (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        body = "".join(f"{b},{sub},{m},{n},{k},{100 * k / n}\n" for b, sub, n in (("all", "all", 400), ("tag", "Object", 7))
                       for m, k in zip(("text", "image", "group"), correct if b == "all" else (7, 7, 7)))
        (folder / "summary.csv").write_text("breakdown,subset,metric,n_examples,n_correct,score\n" + body,
                                            encoding="utf-8")
    write(tmp_path / "openai-rn50" / "winoground", "evaluated", (120, 40, 30))
    write(tmp_path / "fixture" / "winoground", "fixture", (1, 1, 1))
    beside = F.evaluated_beside(tmp_path).set_index("column")
    assert list(beside.index) == ["winoground::text", "winoground::image", "winoground::group"]
    assert beside["evaluated_k"].tolist() == [120, 40, 30] and set(beside["evaluated_n"]) == {400}
    assert beside.loc["winoground::text", "evaluated"] == 30.0
