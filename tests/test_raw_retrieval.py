"""CREPE's raw-set retrieval (app. B.2, ``--benchmark crepe-raw``): the raw set from the released positives, the
folds by their documented rules, both directions' ranks with ties against a brute force written here, and the
bad inputs that must end in one line with nothing written."""
from __future__ import annotations

import csv
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import helpers
from crepe_utils import benchmarks, cli, evaluate, load_results
from crepe_utils.benchmarks.crepe import raw
from crepe_utils.engine.core import EngineResult
from crepe_utils.settings import EvaluationSettings

BOXES = {"101": (0, 0, 40, 30), "102": (5, 5, 40, 30), "103": (0, 0, 50, 40), "104": (2, 2, 30, 30),
         "105": (0, 0, 60, 50), "106": (1, 1, 40, 40), "107": (3, 0, 35, 30)}


def _row(image_id, caption, box=None):
    x, y, w, h = box or BOXES[image_id]
    return dict(image_id=image_id, caption=caption, x=x, y=y, width=w, height=h,
                hard_negs=[f"{caption} not {k}" for k in range(5)])


def raw_root(root: Path) -> tuple[Path, Path]:
    """Complexity 4: seven images, 104 with two captions (one in atom's file, one in swap's), 105 with a second
    region, 'dog on mat' the caption of 101 and of 106 (a false negative of each other), rows repeated across
    the three HN types' files."""
    data_dir, image_dir = root / "crepe", root / "images"
    helpers.make_vg_root(image_dir, list(BOXES), size=(80, 60))
    files = {
        "atom": [_row("101", "dog on mat"), _row("102", "cat under table"), _row("104", "man with hat"),
                 _row("103", "red car near tree")],
        "swap": [_row("102", "cat under table"), _row("104", "hat on man"), _row("105", "tall tree"),
                 _row("105", "small tree", (10, 10, 40, 40))],
        "negate": [_row("106", "dog on mat"), _row("107", "old chair"), _row("101", "dog on mat")],
    }
    for hn, rows in files.items():
        helpers.write_productivity_csv(data_dir / "prod_hard_negatives" / hn /
                                       f"prod_vg_hard_negs_{hn}_complexity_4.csv", rows, 4)
    for hn in files:          # the other complexities' files exist, each with one row
        for n in range(5, 13):
            helpers.write_productivity_csv(data_dir / "prod_hard_negatives" / hn /
                                           f"prod_vg_hard_negs_{hn}_complexity_{n}.csv",
                                           [_row("101", f"complexity {n} caption")], n)
    return data_dir, image_dir


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return raw_root(tmp_path_factory.mktemp("raw"))


def expected_items(data_dir: Path, n: int = 4) -> list[tuple]:
    """(image id, box, captions) in order of first appearance over atom, swap, negate: read here with csv."""
    return items_of([data_dir / "prod_hard_negatives" / hn / f"prod_vg_hard_negs_{hn}_complexity_{n}.csv"
                     for hn in ("atom", "swap", "negate")])


def items_of(paths) -> list[tuple]:
    """(image id, box, captions) over the CSVs ``paths``, in order of first appearance, read with csv."""
    items: dict[tuple, list[str]] = {}
    for path in paths:
        with open(path) as fh:
            for r in csv.DictReader(fh):
                key = (r["image_id"], tuple(float(r[c]) for c in ("x", "y", "width", "height")))
                caps = items.setdefault(key, [])
                if r["caption"] not in caps:
                    caps.append(r["caption"])
    return [(i, b, tuple(c)) for (i, b), c in items.items()]


def load(data_dir, **selection):
    bench = benchmarks.get("crepe-raw")
    return bench.read(benchmarks.Sources(data_dir), bench.selection(complexities=(4,), **selection),
                      EvaluationSettings())


def test_the_raw_set_is_every_region_with_its_captions(root):
    data_dir, _ = root
    loaded = load(data_dir, fold_size=8, fold_rule="contiguous")
    items = expected_items(data_dir)
    assert len(items) == 8
    assert ("104", (2.0, 2.0, 30.0, 30.0), ("man with hat", "hat on man")) in items
    assert [(q.image_id, q.box) for q in loaded.queries] == [(i, b) for i, b, _ in items]
    assert loaded.queries[0].candidates == tuple(c for _, _, caps in items for c in caps)
    assert loaded.data["raw_sets"] == {"4": {"n_items": 8, "n_folds": 1}}


@pytest.mark.parametrize("n_items,size,cap,k", [(8, 3, 20, 2), (8, 8, 20, 1), (100, 3, 20, 20), (100, 3, 5, 5),
                                                 (41, 20, 20, 2), (1445, 1508, 20, 0), (2283, 1508, 20, 1)])
def test_k_is_min_of_the_cap_and_the_whole_folds(n_items, size, cap, k):
    assert raw.fold_count(n_items, size, cap) == k == min(cap, n_items // size)


@pytest.mark.parametrize("seed", [0, 7])
def test_seeded_folds_follow_the_documented_rule(root, seed):
    data_dir, _ = root
    loaded = load(data_dir, fold_size=3, fold_seed=seed)
    items = expected_items(data_dir)
    perm = np.random.default_rng([seed, 4]).permutation(len(items))       # the rule as documented
    want = [[items[i][:2] for i in perm[f * 3:(f + 1) * 3]] for f in range(2)]
    got = [[(q.image_id, q.box) for q in loaded.queries if q.fold == f] for f in range(2)]
    assert got == want
    again = load(data_dir, fold_size=3, fold_seed=seed)
    assert [q.query_id for q in again.queries] == [q.query_id for q in loaded.queries]


def test_contiguous_folds_are_file_order_slices(root):
    data_dir, _ = root
    loaded = load(data_dir, fold_size=3, fold_rule="contiguous")
    items = expected_items(data_dir)
    for f in range(2):
        assert [(q.image_id, q.box) for q in loaded.queries if q.fold == f] == [i[:2] for i in items[3 * f:3 * f + 3]]


def brute_force(scores: np.ndarray, owner: list[int], image: int, direction: str) -> tuple[int, int, int]:
    """(pessimistic, optimistic, ties) of one query, by looping: image → its best own caption against the
    others' captions; caption → its image against the other images."""
    if direction == "image_to_text":
        row = scores[image]
        own = [c for c in range(len(owner)) if owner[c] == image]
        best = max(row[c] for c in own)
        negs = [row[c] for c in range(len(owner)) if owner[c] != image]
    else:
        col = scores[:, image]            # here ``image`` is the caption's index
        best = col[owner[image]]
        negs = [col[j] for j in range(scores.shape[0]) if j != owner[image]]
    higher = sum(1 for s in negs if s > best)
    equal = sum(1 for s in negs if s == best)
    return 1 + higher + equal, 1 + higher, equal


def check_folds_by_brute_force(loaded, per_query, tables, n_folds: int, policy: str = "pessimistic") -> dict:
    """Each fold's per-query ranks, ties and Recall@1/5/10 in both directions against :func:`brute_force` on that
    fold's own score matrix; returns each direction's per-fold recalls ({direction: {k: [fold 0, fold 1, …]}})."""
    log, summary = pd.concat(list(tables.per_query)), tables.summary
    recalls = {d: {k: [] for k in (1, 5, 10)} for d in raw.DIRECTIONS}
    for f in range(n_folds):
        qs = [(i, q) for i, q in enumerate(loaded.queries) if q.fold == f]
        matrix = np.stack([per_query[i] for i, _ in qs])
        owner = [j for j, (_, q) in enumerate(qs) for _ in q.positives]
        for d, n in (("image_to_text", len(qs)), ("text_to_image", len(owner))):
            got = log[(log.direction == d) & (log.fold == str(f))]
            want = [brute_force(matrix, owner, x, d) for x in range(n)]
            assert list(zip(got["rank"], got.rank_optimistic, got.n_ties)) == want
            chosen = [w[0] if policy == "pessimistic" else w[1] for w in want]
            row = summary[(summary.direction == d) & (summary.fold == str(f))].iloc[0]
            for k in (1, 5, 10):
                r = 100 * sum(c <= k for c in chosen) / len(chosen)
                assert row[f"r{k}"] == pytest.approx(r)
                recalls[d][k].append(r)
            assert row.n_tied_queries == sum(w[2] > 0 for w in want)
    return recalls


def test_ranks_and_recall_match_a_brute_force_with_ties(root):
    data_dir, _ = root
    loaded = dataclass_groups(load(data_dir, fold_size=4, fold_rule="contiguous"))
    rng = np.random.default_rng(3)
    per_query = [rng.integers(0, 4, size=len(q.candidates)).astype(np.float32) / 4 for q in loaded.queries]
    result = EngineResult.of_scores(loaded.queries, np.concatenate(per_query), {})
    for policy in ("pessimistic", "optimistic"):
        tables = raw.evaluate(result, loaded, EvaluationSettings(tie_policy=policy), "m")
        summary = tables.summary
        recalls = check_folds_by_brute_force(loaded, per_query, tables, 2, policy)
        for d in raw.DIRECTIONS:
            mean = summary[(summary.direction == d) & (summary.fold == raw.MEAN)].iloc[0]
            assert (mean.n_folds, mean.fold_size, mean.n_set) == (2, 4, 8)
            for k in (1, 5, 10):
                assert mean[f"r{k}"] == pytest.approx(statistics.mean(recalls[d][k]))
                assert mean[f"r{k}_std"] == pytest.approx(statistics.stdev(recalls[d][k]))


def dataclass_groups(loaded):
    import dataclasses
    return dataclasses.replace(loaded, groups=raw.GROUPS)


def test_a_shared_caption_is_a_tied_false_negative(root):
    """'dog on mat' is 101's and 106's caption: with equal caption scores, 101's query ties 106's caption."""
    data_dir, _ = root
    loaded = dataclass_groups(load(data_dir, fold_size=8, fold_rule="contiguous"))
    scores = np.concatenate([np.array([1.0 if c == "dog on mat" else 0.0 for c in q.candidates], np.float32)
                             for q in loaded.queries])
    tables = raw.evaluate(EngineResult.of_scores(loaded.queries, scores, {}), loaded, EvaluationSettings(), "m")
    log = pd.concat(list(tables.per_query)).set_index("query_id")
    first = loaded.queries[0]
    assert first.image_id == "101"
    assert tuple(log.loc[first.query_id, ["rank", "rank_optimistic", "n_ties"]]) == (2, 1, 1)


# ------------------------------------------------------------------------------ end to end, and bad input

def _cli(capsys, *argv):
    rc = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    return rc, [line for line in err.splitlines() if line.strip() and "%|" not in line], out


def _args(tiny_model, data_dir, image_dir, out):
    cfg, ckpt = tiny_model
    return ["evaluate", "--benchmark", "crepe-raw", "--model", cfg.stem, "--pretrained", ckpt, "--model-config", cfg,
            "--device", "cpu", "--no-cache", "--data-dir", data_dir, "--image-dir", image_dir, "--out", out,
            "--complexities", "4"]


def _one_error(rc, lines, out: Path) -> str:
    assert rc == 1 and len(lines) == 1 and lines[0].startswith("error: "), lines
    assert not out.exists() or not [p for p in out.rglob("*") if p.is_file()], "partial output left"
    return lines[0]


def test_a_model_run_is_reproducible_and_logs_every_query(root, tiny_model, tmp_path):
    data_dir, image_dir = root
    cfg, ckpt = tiny_model
    common = dict(pretrained=str(ckpt), model_config=str(cfg), data_dir=str(data_dir), image_dir=str(image_dir),
                  device="cpu", cache_dir=False, progress=False, complexities=(4,), fold_size=3, kind="fixture")
    a = evaluate(cfg.stem, "crepe-raw", out=str(tmp_path / "a"), **common)
    b = evaluate(cfg.stem, "crepe-raw", out=str(tmp_path / "b"), **common)
    folder_a, folder_b = Path(a.attrs["result_dir"]), Path(b.attrs["result_dir"])
    assert folder_a.name == "raw-productivity-seeded-n3"
    assert (folder_a / "summary.csv").read_bytes() == (folder_b / "summary.csv").read_bytes()
    log = pd.read_csv(folder_a / "per_query.csv.gz")
    assert len(log) == 2 * 3 + sum(len(q.positives) for q in load(data_dir, fold_size=3).queries)
    assert set(a.direction) == set(raw.DIRECTIONS) and set(a.fold) == {"0", "1", raw.MEAN}
    back = load_results(tmp_path / "a", scoring="raw-retrieval")
    assert len(back) == len(a) and set(back.kind) == {"fixture"}
    assert list(back[back.fold == raw.MEAN].r1) == pytest.approx(list(a[a.fold == raw.MEAN].r1), abs=5e-4)


def test_a_fold_larger_than_the_set_is_one_line(root, tiny_model, tmp_path, capsys):
    rc, lines, _ = _cli(capsys, *_args(tiny_model, *root, tmp_path / "out"), "--fold-size", "9")
    assert _one_error(rc, lines, tmp_path / "out") == (
        "error: crepe-raw: complexity 4: a fold of 9 images is larger than the raw set's 8 images, so K = "
        "floor(8 / 9) = 0; give --fold-size 8 or less, or leave this complexity out (--complexities)")


def test_k_0_is_one_line(root, tiny_model, tmp_path, capsys):
    rc, lines, _ = _cli(capsys, *_args(tiny_model, *root, tmp_path / "out"), "--fold-size", "2", "--max-folds", "0")
    assert "K = 0 folds asked for (--max-folds 0)" in _one_error(rc, lines, tmp_path / "out")


def test_the_default_n_on_a_small_set_is_one_line(root, tiny_model, tmp_path, capsys):
    rc, lines, _ = _cli(capsys, *_args(tiny_model, *root, tmp_path / "out"))
    assert "a fold of 1,508 images is larger than the raw set's 8 images" in _one_error(rc, lines, tmp_path / "out")


def test_a_missing_image_is_one_line(root, tiny_model, tmp_path, capsys):
    data_dir, image_dir = root
    partial = tmp_path / "images"
    helpers.make_vg_root(partial, [i for i in BOXES if i != "103"], size=(80, 60))
    rc, lines, _ = _cli(capsys, *_args(tiny_model, data_dir, partial, tmp_path / "out"), "--fold-size", "4")
    assert "103" in _one_error(rc, lines, tmp_path / "out")
    rc, lines, _ = _cli(capsys, *_args(tiny_model, data_dir, partial, tmp_path / "out"), "--fold-size", "4",
                        "--skip-missing-images")
    assert "a raw fold needs every image" in _one_error(rc, lines, tmp_path / "out")


@pytest.mark.shared
def test_the_released_raw_sets(shared_crepe):
    """Regions per complexity in the released positives, and K with app. B.2's N = 1,508: zero at n = 4."""
    bench = benchmarks.get("crepe-raw")
    counts = {}
    for n in range(4, 13):
        items = expected_items(shared_crepe, n)
        counts[n] = len(items)
    assert counts == {4: 1445, 5: 1570, 6: 1886, 7: 2127, 8: 2266, 9: 1883, 10: 2258, 11: 1716, 12: 1991}
    loaded = bench.read(benchmarks.Sources(shared_crepe), bench.selection(complexities=(5, 12)), EvaluationSettings())
    assert loaded.data["raw_sets"] == {"5": {"n_items": 1570, "n_folds": 1}, "12": {"n_items": 1991, "n_folds": 1}}
    assert len(loaded.queries) == 2 * 1508
    with pytest.raises(raw.RawSetError, match="complexity 4: a fold of 1,508 images is larger than the raw set's 1,445"):
        bench.read(benchmarks.Sources(shared_crepe), bench.selection(complexities=(4,)), EvaluationSettings())


# ------------------------------------------------------------------------------ systematicity raw sets (N = 1,855)

#: the systematicity CSVs' documented columns, in the documented order (region_id first, image_id near the end)
SYST_COLUMNS = ["region_id", "caption", "x", "y", "width", "height", "valid_hard_negs_comp", "valid_hard_negs_atom",
                "image_id", "valid_hard_negs_combined"]


def write_syst(path: Path, rows: list[tuple]) -> Path:
    """Rows (image_id, caption, (x, y, w, h) as written, atom negatives, comp negatives) in the documented format:
    coordinates as the text given ('346' or '12.0'), negative lists of any length, possibly empty."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(SYST_COLUMNS)
        for region, (image_id, caption, (x, y, wd, ht), atom, comp) in enumerate(rows):
            w.writerow([300 + region, caption, x, y, wd, ht, repr(comp), repr(atom), image_id, repr(atom + comp)])
    return path


SC_ROWS = [("201", "a red brick paved sidewalk", ("3", "4", "40", "30"), ["a brown brick paved sidewalk"],
            ["a red mall and blue sidewalk", "a red alley and black sidewalk"]),
           ("202", "a dog on a mat", ("0", "0", "50", "40"), [], []),               # no negatives: still a positive
           ("203", "a man with a hat", ("2.0", "2.0", "30.0", "30.0"), ["a woman with a hat"], []),
           ("201", "a sidewalk of red bricks", ("3", "4", "40", "30"), [], ["x"]),  # a second caption of 201's region
           ("204", "a dog on a mat", ("1", "1", "40", "40"), ["a cat on a mat"], []),   # shared with 202
           ("205", "a tall tree", ("0", "0", "60", "50"), ["a short tree"], []),
           ("205", "a green tree", ("10", "10", "40", "40"), ["a red tree"], []),       # another region of 205
           ("202", "a dog on a mat", ("0", "0", "50", "40"), ["a dog under a mat"], [])]  # a repeated row
UC_ROWS = [("206", "an old chair", ("0", "0", "40", "30"), ["a new chair"], []),
           ("207", "a blue car", ("5", "5", "40", "30"), ["a red car"], ["a blue bus and car"]),
           ("208", "a small boat", ("0", "0", "30", "30"), [], []),
           ("209", "a wet road", ("1", "2", "30", "30"), ["a dry road"], [])]
SYST_IMAGES = sorted({r[0] for r in SC_ROWS + UC_ROWS})


@pytest.fixture(scope="module")
def syst_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("raw-syst")
    data_dir, image_dir = root / "crepe", root / "images"
    helpers.make_vg_root(image_dir, SYST_IMAGES, size=(80, 60))
    write_syst(data_dir / "syst_hard_negatives" / "syst_vg_hard_negs_seen_compounds_in_laion.csv", SC_ROWS)
    write_syst(data_dir / "syst_hard_negatives" / "syst_vg_hard_negs_unseen_compounds_in_laion.csv", UC_ROWS)
    return data_dir, image_dir


def expected_syst_items(data_dir: Path, split: str, train_data: str = "laion") -> list[tuple]:
    """(image id, box, captions) of one split's file in order of first appearance: read here with csv."""
    name = {"SC": "seen", "UC": "unseen"}[split]
    return items_of([data_dir / "syst_hard_negatives" / f"syst_vg_hard_negs_{name}_compounds_in_{train_data}.csv"])


def load_syst(data_dir, **selection):
    bench = benchmarks.get("crepe-raw")
    return bench.read(benchmarks.Sources(data_dir),
                      bench.selection(protocol="systematicity", train_data="laion", **selection), EvaluationSettings())


def test_the_systematicity_raw_set_is_every_region_of_the_split_with_its_captions(syst_root):
    data_dir, _ = syst_root
    sc = expected_syst_items(data_dir, "SC")
    assert len(sc) == 6          # 201 (two captions), 202, 203, 204, 205 twice; the repeated row adds nothing
    assert ("201", (3.0, 4.0, 40.0, 30.0), ("a red brick paved sidewalk", "a sidewalk of red bricks")) in sc
    assert ("202", (0.0, 0.0, 50.0, 40.0), ("a dog on a mat",)) in sc          # its row has no negatives
    loaded = load_syst(data_dir, splits=("SC",), fold_size=6, fold_rule="contiguous")
    assert [(q.image_id, q.box) for q in loaded.queries] == [(i, b) for i, b, _ in sc]
    assert loaded.queries[0].candidates == tuple(c for _, _, caps in sc for c in caps)
    assert {(q.benchmark, q.train_data, q.split, q.complexity) for q in loaded.queries} == {
        ("raw-systematicity", "laion", "SC", None)}
    assert loaded.data["raw_sets"] == {"SC": {"n_items": 6, "n_folds": 1}}
    assert loaded.data["protocol"] == "systematicity" and loaded.data["train_data"] == "laion"


@pytest.mark.parametrize("seed", [0, 5])
def test_systematicity_folds_follow_the_documented_rule(syst_root, seed):
    """Seeded: default_rng([seed, 0]) permutes SC, default_rng([seed, 1]) UC; fold k is positions kN..(k+1)N-1;
    contiguous: file order. K = min(max folds, floor(|D| / N)) per split."""
    data_dir, _ = syst_root
    loaded = load_syst(data_dir, fold_size=2, fold_seed=seed)
    for split, stream in (("SC", 0), ("UC", 1)):
        items = expected_syst_items(data_dir, split)
        k = min(20, len(items) // 2)
        perm = np.random.default_rng([seed, stream]).permutation(len(items))
        want = [[items[i][:2] for i in perm[f * 2:(f + 1) * 2]] for f in range(k)]
        got = [[(q.image_id, q.box) for q in loaded.queries if q.split == split and q.fold == f] for f in range(k)]
        assert got == want
        assert loaded.data["raw_sets"][split] == {"n_items": len(items), "n_folds": k}
    contiguous = load_syst(data_dir, splits=("SC",), fold_size=4, fold_rule="contiguous")
    items = expected_syst_items(data_dir, "SC")
    assert [(q.image_id, q.box) for q in contiguous.queries] == [i[:2] for i in items[:4]]      # K = floor(6/4) = 1


def test_systematicity_ranks_match_a_brute_force_with_ties(syst_root):
    """Both directions' ranks, ties and Recall@K of every systematicity fold against the loop in brute_force,
    with coarse scores (many ties) and the shared caption 'a dog on a mat' (202's and 204's)."""
    data_dir, _ = syst_root
    loaded = dataclass_groups(load_syst(data_dir, splits=("SC",), fold_size=3, fold_rule="contiguous"))
    rng = np.random.default_rng(11)
    per_query = [rng.integers(0, 3, size=len(q.candidates)).astype(np.float32) / 3 for q in loaded.queries]
    result = EngineResult.of_scores(loaded.queries, np.concatenate(per_query), {})
    tables = raw.evaluate(result, loaded, EvaluationSettings(), "m")
    log = pd.concat(list(tables.per_query))
    summary = tables.summary
    assert set(summary.benchmark) == {"raw-systematicity"} and set(summary.split) == {"SC"}
    assert set(summary.train_data) == {"laion"} and summary.complexity.isna().all()
    check_folds_by_brute_force(loaded, per_query, tables, 2)
    folds = summary[summary.fold != raw.MEAN]
    assert len(folds) == 4 and set(zip(folds.n_folds, folds.fold_size, folds.n_set)) == {(2, 3, 6)}
    assert set(log.split) == {"SC"} and set(log.benchmark) == {"raw-systematicity"}


def test_systematicity_n_is_1855_and_recorded(tmp_path):
    """App. B.2's N = 1,855 is the systematicity default: 3,800 regions give K = min(20, floor(3800 / 1855)) = 2;
    1,854 give none (one line)."""
    rows = [(str(10_000 + i), f"caption {i}", ("0", "0", "40", "30"), [], []) for i in range(3800)]
    write_syst(tmp_path / "syst_vg_hard_negs_seen_compounds_in_yfcc.csv", rows)
    write_syst(tmp_path / "syst_vg_hard_negs_unseen_compounds_in_yfcc.csv", rows[:1854])
    bench = benchmarks.get("crepe-raw")
    sel = bench.selection(protocol="systematicity", train_data="yfcc", splits=("SC",))
    loaded = bench.read(benchmarks.Sources(tmp_path), sel, EvaluationSettings())
    assert loaded.data["fold_size"] == 1855 and loaded.data["raw_sets"] == {"SC": {"n_items": 3800, "n_folds": 2}}
    assert len(loaded.queries) == 2 * 1855 and len(loaded.queries[0].candidates) == 1855
    with pytest.raises(raw.RawSetError, match=r"crepe-raw: yfcc UC: a fold of 1,855 images is larger than the raw "
                                              r"set's 1,854 images.*leave this split out \(--splits\)"):
        bench.read(benchmarks.Sources(tmp_path), sel.replace(splits=("UC",)), EvaluationSettings())


def test_systematicity_selection_contradictions_are_refused():
    bench = benchmarks.get("crepe-raw")
    with pytest.raises(benchmarks.SelectionError, match="complexities select productivity's raw sets"):
        bench.selection(protocol="systematicity", train_data="laion", complexities=(4,))
    with pytest.raises(benchmarks.SelectionError, match="add --protocol systematicity"):
        bench.selection(train_data="laion")
    with pytest.raises(benchmarks.SelectionError, match="splits"):
        bench.selection(protocol="systematicity", train_data="laion", splits=("UA",))
    assert bench.folder(bench.selection(protocol="systematicity", train_data="laion", splits=("UC",),
                                        fold_size=40)) == "raw-systematicity-laion-UC-seeded-n40"


def _syst_args(tiny_model, data_dir, image_dir, out, train_data="laion"):
    cfg, ckpt = tiny_model
    return ["evaluate", "--benchmark", "crepe-raw", "--protocol", "systematicity", "--train-data", train_data,
            "--model", cfg.stem, "--pretrained", ckpt, "--model-config", cfg, "--device", "cpu", "--no-cache",
            "--data-dir", data_dir, "--image-dir", image_dir, "--out", out]


def test_a_systematicity_model_run_is_reproducible_and_logs_every_query(syst_root, tiny_model, tmp_path, capsys):
    data_dir, image_dir = syst_root
    for name in ("a", "b"):
        rc, lines, _ = _cli(capsys, *_syst_args(tiny_model, data_dir, image_dir, tmp_path / name), "--fold-size", "2")
        assert rc == 0, lines
    folder = next((tmp_path / "a").rglob("summary.csv")).parent
    assert folder.name == "raw-systematicity-laion-seeded-n2"
    other = next((tmp_path / "b").rglob("summary.csv")).parent
    assert (folder / "summary.csv").read_bytes() == (other / "summary.csv").read_bytes()
    summary = pd.read_csv(folder / "summary.csv", dtype={"fold": str})
    assert set(summary.split) == {"SC", "UC"} and set(summary.benchmark) == {"raw-systematicity"}
    means = summary[summary.fold == raw.MEAN]
    assert sorted(zip(means.split, means.direction, means.n_folds)) == [
        ("SC", "image_to_text", 3), ("SC", "text_to_image", 3), ("UC", "image_to_text", 2), ("UC", "text_to_image", 2)]
    log = pd.read_csv(folder / "per_query.csv.gz")
    loaded = load_syst(data_dir, fold_size=2)
    # one row per image (image to text) and one per caption (text to image) of every fold
    assert len(log) == len(loaded.queries) + sum(len(q.positives) for q in loaded.queries) == 10 + 11


def test_a_missing_systematicity_file_is_one_line_with_the_data_target(syst_root, tiny_model, tmp_path, capsys):
    data_dir, image_dir = syst_root
    rc, lines, _ = _cli(capsys, *_syst_args(tiny_model, data_dir, image_dir, tmp_path / "out", train_data="yfcc"))
    line = _one_error(rc, lines, tmp_path / "out")
    assert "syst_vg_hard_negs_seen_compounds_in_yfcc.csv not found under" in line
    assert "`make data-crepe` fetches both archives" in line


def test_the_false_negative_section_reads_productivity_raw_results_only(root, syst_root, tiny_model, tmp_path, capsys):
    """Notebook 03 draws raw Recall@1 against complexity: a systematicity raw result beside it is left out."""
    from crepe_utils.benchmarks.crepe import false_negatives as FN
    out = tmp_path / "results"
    rc, lines, _ = _cli(capsys, *_syst_args(tiny_model, *syst_root, out), "--fold-size", "2")
    assert rc == 0, lines
    rc, lines, _ = _cli(capsys, *_args(tiny_model, *root, out), "--fold-size", "4")
    assert rc == 0, lines
    assert set(raw.read_raw(out).benchmark) == {"raw-productivity", "raw-systematicity"}
    shown = FN.evaluated_raw(out)
    assert list(shown.benchmark) == ["raw-productivity"] and list(shown.complexity) == [4]


def test_systematicity_raw_sets_take_a_registry_models_training_set():
    """As crepe-systematicity: the split is the model's training set unless given; another model must name one."""
    from types import SimpleNamespace
    bench = benchmarks.get("crepe-raw")
    sel = bench.selection(protocol="systematicity")
    assert bench.for_model(sel, SimpleNamespace(key="yfcc15m-rn101")).train_data == "yfcc"
    assert bench.for_model(sel.replace(train_data="laion"), SimpleNamespace(key="yfcc15m-rn101")).train_data == "laion"
    with pytest.raises(benchmarks.SelectionError, match="say which systematicity split to use"):
        bench.for_model(sel, SimpleNamespace(key="crepe-tiny-test"))
    productivity = bench.selection()
    assert bench.for_model(productivity, SimpleNamespace(key="crepe-tiny-test")) == productivity
