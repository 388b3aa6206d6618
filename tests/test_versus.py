"""compare and standing on hand-built result folders: pairing by query id (reordered, unpaired), ties under both
policies, Holm over the file's sets, Winoground's three scores per example, refusals (not a result, another
benchmark, other data, a damaged log, a column the field lacks) with nothing written, and the standing's counts
recomputed here from the carried field table read with the csv module.

Would catch: pairing by position instead of id, unpaired queries dropped or counted as wrong, the pooled row in
Holm's family, a tie counted the same under both policies, Winoground's image score computed as its text score,
a data digest not compared, a partial output folder left on refusal, ``field_below`` counting ties as below,
CREPE's all-negatives sets pooled into a type's column.
"""
from __future__ import annotations

import csv
import gzip
import json
import math
from pathlib import Path

import pytest

import crepe_utils
from crepe_utils import cli
from crepe_utils.analysis import paired
from crepe_utils.versus import pairing, standing as standing_module
from crepe_utils.errors import CrepeError

ROOT = Path(__file__).resolve().parent.parent
FIELD_CSV = ROOT / "crepe_utils" / "field" / "reported" / "vl_compo.csv"


def write_result(folder: Path, model: str, rows: list[dict], *, benchmark="sugarcrepe", groups=("subset",),
                 files=None, selection=None, summary=None) -> Path:
    """A retrieval result: per-query rows (query_id, groups, rank, rank_optimistic) and a summary per set."""
    folder.mkdir(parents=True)
    manifest = {"schema_version": 1, "kind": "fixture", "scoring": "retrieval", "benchmark": benchmark,
                "groups": list(groups), "model": {"key": model},
                "data": {"files_sha256": files or {"a.json": "0" * 64}}, "selection": selection or {"subsets": None}}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    columns = ["query_id", *groups, "rank", "rank_optimistic"]
    text = ",".join(columns) + "\n" + "".join(",".join(str(r.get(c, "")) for c in columns) + "\n" for r in rows)
    with gzip.open(folder / "per_query.csv.gz", "wt", encoding="utf-8") as fh:
        fh.write(text)
    if summary is None:
        sets = list(dict.fromkeys(tuple(r[g] for g in groups) for r in rows))
        summary = []
        for key in sets:
            part = [r for r in rows if tuple(r[g] for g in groups) == key]
            n = len(part)
            summary.append({**dict(zip(groups, key)), "model": model, "n_queries": n,
                            "r1": 100 * sum(r["rank"] == 1 for r in part) / n,
                            "r1_pessimistic": 100 * sum(r["rank"] == 1 for r in part) / n,
                            "r1_optimistic": 100 * sum(r["rank_optimistic"] == 1 for r in part) / n})
    head = ["model", *groups, "n_queries", "r1", "r1_pessimistic", "r1_optimistic"]
    (folder / "summary.csv").write_text(",".join(head) + "\n" + "".join(
        ",".join(str(s.get(c, "")) for c in head) + "\n" for s in summary), encoding="utf-8")
    return folder


def q(qid, subset, correct, tie=False):
    """A query: rank 1 when correct; a tie: pessimistic rank 2, optimistic rank 1."""
    return {"query_id": qid, "subset": subset, "rank": 1 if correct else 2,
            "rank_optimistic": 1 if (correct or tie) else 2}


def test_pairs_by_query_id_counting_unpaired(tmp_path):
    a = write_result(tmp_path / "a", "m:a", [q("x1", "s", True), q("x2", "s", True), q("x3", "s", False),
                                             q("x4", "s", False), q("x5", "s", True), q("y1", "t", True)])
    # B in another order, without x1, with x9 that A lacks
    b = write_result(tmp_path / "b", "m:b", [q("y1", "t", False), q("x5", "s", False), q("x9", "s", True),
                                             q("x4", "s", True), q("x3", "s", True), q("x2", "s", True)])
    result = crepe_utils.compare(a, b)
    rows = {r["subset"] or "pooled": r for r in result.table.to_dict("records")}
    s = rows["s"]     # paired x2..x5: A = T F F T, B = T T T F
    assert (s["n_paired"], s["only_a"], s["only_b"], s["n_only_in_a"], s["n_only_in_b"], s["n_unpaired"]) == \
        (4, 1, 2, 1, 1, 2)
    assert (s["a_correct"], s["b_correct"]) == (2, 3)
    assert s["diff_pp"] == pytest.approx(25.0)
    assert s["p_value"] == pytest.approx(1.0)                  # 2 of 3 discordant: the two-sided exact p is 1
    t = rows["t"]
    assert (t["n_paired"], t["only_a"], t["only_b"]) == (1, 1, 0)
    pooled = rows["pooled"]
    assert (pooled["n_paired"], pooled["only_a"], pooled["only_b"], pooled["n_unpaired"]) == (5, 2, 2, 2)
    assert math.isnan(pooled["p_holm"])
    low, high = paired.newcombe_paired(paired.Table(1, 1, 2, 0))
    assert (s["diff_ci_low"], s["diff_ci_high"]) == pytest.approx((low, high))


def test_holm_runs_over_the_sets_of_the_file_only(tmp_path):
    rows_a, rows_b = [], []
    for subset, (n_a_only, n_b_only) in {"s1": (0, 9), "s2": (1, 7), "s3": (3, 4)}.items():
        for i in range(n_a_only):
            rows_a.append(q(f"{subset}a{i}", subset, True)), rows_b.append(q(f"{subset}a{i}", subset, False))
        for i in range(n_b_only):
            rows_a.append(q(f"{subset}b{i}", subset, False)), rows_b.append(q(f"{subset}b{i}", subset, True))
    a, b = write_result(tmp_path / "a", "m:a", rows_a), write_result(tmp_path / "b", "m:b", rows_b)
    result = crepe_utils.compare(a, b)
    sets = result.sets.set_index("subset")
    p = {s: 2 * sum(math.comb(a + b, i) for i in range(min(a, b) + 1)) / 2 ** (a + b)
         for s, (a, b) in {"s1": (0, 9), "s2": (1, 7), "s3": (3, 4)}.items()}
    p = {s: min(1.0, v) for s, v in p.items()}
    assert dict(sets["p_value"]) == pytest.approx(p)
    # by hand: s1 smallest ×3, s2 ×2 (then running max), s3 ×1 (running max)
    h1 = 3 * p["s1"]
    h2 = max(h1, 2 * p["s2"])
    h3 = max(h2, min(1.0, p["s3"]))
    assert dict(sets["p_holm"]) == pytest.approx({"s1": h1, "s2": h2, "s3": h3})


def test_ties_under_both_policies(tmp_path):
    a = write_result(tmp_path / "a", "m:a", [q("1", "s", True), q("2", "s", False, tie=True), q("3", "s", False)])
    b = write_result(tmp_path / "b", "m:b", [q("1", "s", False, tie=True), q("2", "s", True), q("3", "s", False,
                                                                                            tie=True)])
    pess = crepe_utils.compare(a, b).sets.iloc[0]
    opt = crepe_utils.compare(a, b, tie_policy="optimistic").sets.iloc[0]
    # pessimistic: A = T F F, B = F T F; optimistic: A = T T F, B = T T T
    assert (pess["only_a"], pess["only_b"], pess["diff_pp"]) == (1, 1, 0.0)
    assert (opt["only_a"], opt["only_b"], opt["a_correct"], opt["b_correct"]) == (0, 1, 2, 3)
    assert pess["tie_policy"] == "pessimistic" and opt["tie_policy"] == "optimistic"


def test_writes_the_table_and_the_forest_plot(tmp_path):
    a = write_result(tmp_path / "a", "m:a", [q("1", "s", True), q("2", "s", False)])
    b = write_result(tmp_path / "b", "m:b", [q("1", "s", True), q("2", "s", True)])
    crepe_utils.compare(a, b, out=tmp_path / "out")
    with open(tmp_path / "out" / "comparison.csv", encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert [r["scope"] for r in table] == ["set", "pooled"]
    assert {"n_paired", "a_correct", "b_correct", "only_a", "only_b", "diff_pp", "diff_ci_low", "diff_ci_high",
            "p_value", "p_holm", "n_unpaired"} <= set(table[0])
    assert "Newcombe" in table[0]["interval"]
    svg = (tmp_path / "out" / "comparison.svg").read_text(encoding="utf-8")
    assert "Newcombe" in svg


def _refused(tmp_path, capsys, argv, *words):
    status = cli.main(["compare", *map(str, argv), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(err) == 1 and err[0].startswith("error:"), err
    for word in words:
        assert word in err[0]
    assert not (tmp_path / "out").exists()


def test_refusals_are_one_line_and_write_nothing(tmp_path, capsys):
    a = write_result(tmp_path / "a", "m:a", [q("1", "s", True)])
    other = write_result(tmp_path / "other", "m:b", [q("1", "s", True)], files={"a.json": "1" * 64})
    _refused(tmp_path, capsys, [a, other], "a.json", "same data")
    picked = write_result(tmp_path / "picked", "m:b", [q("1", "s", True)], selection={"subsets": ["s"]})
    _refused(tmp_path, capsys, [a, picked], "subsets")
    valse = write_result(tmp_path / "valse", "m:b", [{"query_id": "1", "piece": "p", "rank": 1,
                                                       "rank_optimistic": 1}], benchmark="valse", groups=("piece",))
    _refused(tmp_path, capsys, [a, valse], "valse", "sugarcrepe")
    _refused(tmp_path, capsys, [a, tmp_path], "not a result folder")
    damaged = write_result(tmp_path / "damaged", "m:b", [q(str(i), "s", True) for i in range(500)])
    raw = (damaged / "per_query.csv.gz").read_bytes()
    (damaged / "per_query.csv.gz").write_bytes(raw[: len(raw) // 2])
    _refused(tmp_path, capsys, [a, damaged], "per_query.csv.gz")


WINO_COLUMNS = ["id", "tag", "secondary_tag", "num_main_preds", "collapsed_tag", "c0_i0", "c0_i1", "c1_i0", "c1_i1"]


def write_winoground(folder: Path, model: str, scores: list[tuple]) -> Path:
    folder.mkdir(parents=True)
    manifest = {"schema_version": 1, "kind": "fixture", "scoring": "winoground", "benchmark": "winoground",
                "model": {"key": model}, "data": {"files_sha256": {"examples.jsonl": "0" * 64}}, "selection": {}}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    lines = [",".join(WINO_COLUMNS)]
    lines += [f"{i},Object,,1,Object,{s[0]},{s[1]},{s[2]},{s[3]}" for i, s in enumerate(scores)]
    with gzip.open(folder / "per_query.csv.gz", "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    head = "breakdown,subset,metric,n_examples,n_correct,score\n"
    body = "".join(f"{b},{s},{m},0,0,0\n" for b, s in (("all", "all"), ("collapsed_tag", "Object"),
                                                      ("num_main_preds", "1")) for m in ("text", "image", "group"))
    (folder / "summary.csv").write_text(head + body, encoding="utf-8")
    return folder


def test_winoground_scores_each_example_text_image_group(tmp_path):
    # (c0_i0, c0_i1, c1_i0, c1_i1): text needs c0_i0 > c1_i0 and c1_i1 > c0_i1; image c0_i0 > c0_i1, c1_i1 > c1_i0
    a = write_winoground(tmp_path / "a", "m:a", [(0.9, 0.1, 0.2, 0.8),     # text, image, group
                                                 (0.9, 0.95, 0.2, 0.99),   # text only (0.9 < 0.95: image fails)
                                                 (0.5, 0.5, 0.1, 0.9)])    # text; image tied (0.5 = 0.5)
    b = write_winoground(tmp_path / "b", "m:b", [(0.1, 0.9, 0.8, 0.2),     # nothing
                                                 (0.9, 0.1, 0.2, 0.8),     # all three
                                                 (0.5, 0.5, 0.1, 0.9)])
    result = crepe_utils.compare(a, b)
    rows = {(r["breakdown"], r["metric"]): r for r in result.sets.to_dict("records")}
    assert (rows["all", "text"]["a_correct"], rows["all", "text"]["b_correct"]) == (3, 2)
    assert (rows["all", "image"]["a_correct"], rows["all", "image"]["b_correct"]) == (1, 1)
    assert (rows["all", "image"]["only_a"], rows["all", "image"]["only_b"]) == (1, 1)
    assert (rows["all", "group"]["a_correct"], rows["all", "group"]["b_correct"]) == (1, 1)
    optimistic = crepe_utils.compare(a, b, tie_policy="optimistic").sets
    image = optimistic[(optimistic["breakdown"] == "all") & (optimistic["metric"] == "image")].iloc[0]
    assert (image["a_correct"], image["b_correct"]) == (2, 2)     # the tied example passes on both sides
    assert result.pooled["n_paired"] == 3 and result.pooled_means.startswith("the group score")


# ------------------------------------------------------------------ standing

def field_column(column: str) -> list[tuple[str, float]]:
    with open(FIELD_CSV, encoding="utf-8") as fh:
        return [(f"{r['arch']}/{r['pretrained']}", float(r[column])) for r in csv.DictReader(fh)]


def test_standing_counts_recomputed_from_the_field_table(tmp_path):
    rows = [q(str(i), "swap_obj", i < 150) for i in range(245)] + [q(f"r{i}", "add_att", i < 600) for i in range(692)]
    model = write_result(tmp_path / "m", "m:model", rows)
    blind = write_result(tmp_path / "blind", "blind:bigram", [q(str(i), "swap_obj", i < 140) for i in range(245)])
    result = crepe_utils.standing([model, blind])
    table = result.table.set_index(["model", "column"])
    for column, k, n in (("sugarcrepe::swap_obj", 150, 245), ("sugarcrepe::add_att", 600, 692)):
        values = field_column(column)
        value = 100 * k / n
        row = table.loc[("m:model", column)]
        assert row["model_value"] == pytest.approx(value)
        assert row["field_n"] == len(values) == 202
        assert row["field_below"] == sum(v < value for _, v in values)
        assert row["field_percentile"] == pytest.approx(100 * sum(v < value for _, v in values) / 202)
        best = max(values, key=lambda x: x[1])
        assert (row["field_best"], row["field_best_value"]) == (best[0], pytest.approx(best[1]))
    swap = table.loc[("m:model", "sugarcrepe::swap_obj")]
    assert swap["blind_best"] == "blind:bigram" and swap["blind_best_value"] == pytest.approx(100 * 140 / 245)
    assert table.loc[("m:model", "sugarcrepe::add_att")]["blind_best"] == ""


def test_a_value_equal_to_checkpoints_is_not_above_them(tmp_path):
    values = [v for _, v in field_column("winoground::group")]
    target = sorted(values)[100]                                 # a value the field holds: k of 400 examples
    k = round(target * 400 / 100)
    folder = write_winoground(tmp_path / "w", "m:model", [(0.9, 0.1, 0.2, 0.8)])
    (folder / "summary.csv").write_text("breakdown,subset,metric,n_examples,n_correct,score\n"
                                        f"all,all,group,400,{k},{100 * k / 400}\n", encoding="utf-8")
    row = crepe_utils.standing([folder]).table.iloc[0]
    assert row["column"] == "winoground::group" and row["model_value"] == pytest.approx(target)
    assert row["field_below"] == sum(v < target - 1e-9 for v in values)
    assert row["field_below"] < sum(v <= target + 1e-9 for v in values)     # the equal ones are not below


def test_crepe_pools_a_types_complexities_without_the_all_negatives_sets(tmp_path):
    crepe = write_result(tmp_path / "c", "m:model", [
        {"query_id": f"{t}{n}-{i}", "benchmark": "productivity", "hn_type": t, "complexity": n,
         "rank": 1 if i < ok else 3, "rank_optimistic": 1 if i < ok else 3}
        for t, n, ok in (("atom", 4, 3), ("atom", 5, 2), ("all", 4, 4)) for i in range(4)],
        benchmark="crepe-productivity", groups=("benchmark", "hn_type", "complexity"))
    result = crepe_utils.standing([crepe]).table
    assert set(result["column"]) == {"crepe::atom"}
    atom = result.iloc[0]
    assert (atom["model_k"], atom["model_n"]) == (5, 8)           # 3 + 2 of 4 + 4: the all-negatives set left out
    assert "k/17698" in atom["pooling"]                           # the field's own N, read off its values
    assert atom["field_below"] == sum(v < 62.5 for _, v in field_column("crepe::atom"))


def test_a_productivity_result_stands_among_the_papers_own_models_per_published_set(tmp_path):
    """App. B.1 publishes n = 4 and 12: a result on HN-Neg n = 4 and n = 5 gets one row (n = 4), its place among the
    paper's models recomputed here: each printed R@1 as the one k of the released file's N that prints as it."""
    from crepe_utils.benchmarks.crepe import reported
    n_file = reported.released_productivity_queries()[("negate", 4)]
    ok = int(0.5 * n_file)
    crepe = write_result(tmp_path / "c", "m:model", [
        {"query_id": f"negate{n}-{i}", "benchmark": "productivity", "hn_type": "negate", "complexity": n,
         "rank": 1 if i < ok else 2, "rank_optimistic": 1 if i < ok else 2}
        for n, size in ((4, n_file), (5, 10)) for i in range(size)],
        benchmark="crepe-productivity", groups=("benchmark", "hn_type", "complexity"))
    with open(ROOT / "crepe_utils/benchmarks/crepe/reported/productivity_r1.csv", newline="", encoding="utf-8") as fh:
        published = [(r["model"], float(r["r1"])) for r in csv.DictReader(fh)
                     if r["hn_type"] == "negate" and r["complexity"] == "4"]
    ks = {m: [k for k in range(n_file + 1) if abs(100 * k / n_file - r1) <= 0.005 + 1e-9] for m, r1 in published}
    assert all(len(k) == 1 for k in ks.values())
    mine = 100 * ok / n_file
    best = max(ks, key=lambda m: ks[m][0])
    result = crepe_utils.standing([crepe], out=tmp_path / "out")
    (row,) = result.paper.to_dict("records")
    assert row["set"] == "negate n = 4" and (row["k"], row["n"]) == (ok, n_file)
    assert row["paper_models"] == len(published) == 15
    assert row["paper_below"] == sum(100 * k[0] / n_file < mine for k in ks.values())
    assert row["paper_best"] == best and row["paper_best_value"] == pytest.approx(100 * ks[best][0] / n_file)
    assert row["paper_best_low"] < row["paper_best_value"] < row["paper_best_high"]
    assert (tmp_path / "out" / "standing_paper.csv").is_file()
    assert "Among the paper's own models" in (tmp_path / "out" / "standing.md").read_text(encoding="utf-8")


def test_standing_refuses_a_column_the_field_lacks_and_writes_nothing(tmp_path, capsys):
    model = write_result(tmp_path / "m", "m:model", [q("1", "swap_obj", True)])
    status = cli.main(["standing", str(model), "--columns", "sugarcrepe::nope", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(err) == 1 and "sugarcrepe::nope" in err[0]
    assert not (tmp_path / "out").exists()
    with pytest.raises(CrepeError, match="not a result folder"):
        standing_module.standing([tmp_path])


def test_standing_writes_its_page(tmp_path):
    model = write_result(tmp_path / "m", "m:<b>model</b>", [q(str(i), "swap_obj", i < 2) for i in range(4)])
    crepe_utils.standing([model], out=tmp_path / "out")
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["standing.csv", "standing.html", "standing.md", "standing.svg"]
    html = (tmp_path / "out" / "standing.html").read_text(encoding="utf-8")
    assert "<b>model</b>" not in html and "&lt;b&gt;model&lt;/b&gt;" in html
    assert pairing.POOLED == "pooled"


@pytest.mark.shared
@pytest.mark.slow                   # 13 s: two blind scorers over 7,511 pairs
def test_compare_and_standing_on_blind_results_of_the_released_sugarcrepe(shared_sugarcrepe, tmp_path):
    """Two blind scorers evaluated on the released JSONs, compared and placed: the pairs recounted here from the
    two per-query logs read with the csv module, joined by query id."""
    from crepe_utils.evaluation import Run
    folders = {}
    for scorer in ("blind:length", "blind:negation"):
        summary = crepe_utils.evaluate(scorer, "sugarcrepe", run=Run(data_dir=shared_sugarcrepe, out=str(tmp_path),
                                                                     progress=False, cache_dir=False))
        folders[scorer] = Path(summary.attrs["result_dir"])

    def outcomes(folder):
        with gzip.open(folder / "per_query.csv.gz", "rt", encoding="utf-8") as fh:
            return {r["query_id"]: (r["subset"], int(r["rank"]) == 1) for r in csv.DictReader(fh)}
    a, b = outcomes(folders["blind:length"]), outcomes(folders["blind:negation"])
    result = crepe_utils.compare(folders["blind:length"], folders["blind:negation"], out=tmp_path / "cmp")
    pooled = result.pooled
    assert pooled["n_paired"] == len(a) == len(b) == 7511 and pooled["n_unpaired"] == 0
    assert pooled["only_a"] == sum(a[q][1] and not b[q][1] for q in a)
    assert pooled["only_b"] == sum(b[q][1] and not a[q][1] for q in a)
    for row in result.sets.to_dict("records"):
        ids = [q for q in a if a[q][0] == row["subset"]]
        assert (row["n_paired"], row["a_correct"]) == (len(ids), sum(a[q][1] for q in ids))
    placed = crepe_utils.standing(list(folders.values())).table
    row = placed[(placed["model"] == "blind:length") & (placed["column"] == "sugarcrepe::swap_obj")].iloc[0]
    k = sum(ok for subset, ok in a.values() if subset == "swap_obj")
    assert (row["model_k"], row["model_n"]) == (k, 245)
    assert row["field_below"] == sum(v < 100 * k / 245 for _, v in field_column("sugarcrepe::swap_obj"))
