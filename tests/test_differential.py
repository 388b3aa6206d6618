"""The engine against a naive reference that shares none of its code.

The reference reads the CSVs itself (csv + ast.literal_eval), finds the image files itself, crops
with PIL's own ``Image.crop`` on the CSV's floats (what torchvision's ``crop`` does for PIL images),
tokenizes each query's candidates with open_clip's tokenizer at the full context length, encodes
one query at a time, and scores with a plain dot product. Only the model (its weights, its
preprocessing transform, its tokenizer) is shared, because the model is not under test.

What is compared, per query: every candidate's score (within SCORE_TOL: the engine encodes in
batches and cuts batches to their longest caption, so the last float bits may differ), and the
pessimistic rank, optimistic rank and tie count exactly. The fixture is checked to hold no
near-tie closer than SCORE_TOL, so that exact rank equality is a meaningful claim.
"""
from __future__ import annotations

import ast
import csv
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import helpers
from crepe_utils.engine import core as engine
from crepe_utils.engine.core import RunOptions
from crepe_utils import metrics
from crepe_utils.imagesets.visual_genome import ImageIndex
from crepe_utils.evaluation import evaluate

SCORE_TOL = 1e-5          # |engine − reference| for fp32 cosine scores in [-1, 1]
HN_TYPES = ("atom", "swap", "negate")


# ------------------------------------------------------------------ the reference

def _literal(raw: str) -> list[str]:
    value = ast.literal_eval(raw)
    return sorted(value) if isinstance(value, set) else list(value)   # sets: the package's documented order


def reference_queries(data_dir: Path, complexities=(4, 5)) -> dict[str, dict]:
    """query id → {image_id, box, candidates, hn_type, complexity}, from the raw productivity CSVs."""
    out, rows = {}, {}
    for hn in HN_TYPES:
        for n in complexities:
            name = f"prod_vg_hard_negs_{hn}_complexity_{n}.csv"
            path = next(Path(data_dir).rglob(name))
            with open(path, newline="", encoding="utf-8") as fh:
                reader = csv.DictReader(fh)
                for r in reader:
                    qid = f"{name}:{reader.line_num}"
                    box = tuple(float(r[c]) for c in ("x", "y", "width", "height"))
                    negs = _literal(r["hard_negs"])
                    out[qid] = dict(image_id=r["image_id"], box=box, candidates=[r["caption"]] + negs,
                                    hn_type=hn, complexity=n)
                    rows.setdefault((n, r["image_id"], box, r["caption"]), {}).setdefault(hn, (qid, negs))
    # app. B.3: a query present in all three types gets positive + 5 negatives of each, atom first
    for (n, image_id, box, positive), per in rows.items():
        if len(per) == 3:
            qid = "+".join(per[t][0] for t in HN_TYPES)
            out[qid] = dict(image_id=image_id, box=box, hn_type="all", complexity=n,
                            candidates=[positive] + [c for t in HN_TYPES for c in per[t][1][:5]])
    return out


def _image_file(image_dir: Path, image_id: str) -> Path:
    for folder in ("VG_100K", "VG_100K_2"):
        p = Path(image_dir) / folder / f"{image_id}.jpg"
        if p.exists():
            return p
    raise AssertionError(f"fixture image {image_id} missing")


def _token_rows(tokenizer, texts, truncation: str):
    import torch
    if truncation == "keep_eot":
        return tokenizer(texts)                       # open_clip's own call: cut, end token kept
    ctx, rows = tokenizer.context_length, []
    for t in texts:                                   # CREPE's vendored tokenizer: cut, end token lost
        ids = ([tokenizer.sot_token_id] + tokenizer.encode(t) + [tokenizer.eot_token_id])[:ctx]
        rows.append(ids + [0] * (ctx - len(ids)))
    return torch.tensor(rows, dtype=torch.long)


def reference_scores(loaded, queries: dict[str, dict], image_dir: Path, truncation: str = "keep_eot",
                     token_rows=None):
    """query id → (scores, pessimistic rank, optimistic rank, ties), one query at a time.

    ``token_rows(texts, truncation)`` → padded LongTensor is the family's own tokenization (default:
    open_clip's, for the open_clip and CyCLIP tokenizers)."""
    token_rows = token_rows or (lambda texts, trunc: _token_rows(loaded.tokenizer, texts, trunc))
    import torch
    import torch.nn.functional as F
    from PIL import Image

    out = {}
    with torch.no_grad():
        for qid, q in queries.items():
            with Image.open(_image_file(image_dir, q["image_id"])) as im:
                img = im.convert("RGB")
            x, y, w, h = q["box"]
            pixels = loaded.preprocess(img.crop((x, y, x + w, y + h))).unsqueeze(0)
            img_emb = F.normalize(loaded.model.encode_image(pixels), dim=-1)[0]
            # candidates with identical token ids are one text (CLIP lower-cases and collapses white
            # space): encode each distinct row once, so that such candidates tie exactly
            rows, inverse = torch.unique(token_rows(q["candidates"], truncation), dim=0,
                                         return_inverse=True)
            txt = F.normalize(loaded.model.encode_text(rows), dim=-1)
            scores = (txt @ img_emb)[inverse].numpy().astype(np.float64)
            pos, negs = scores[0], scores[1:]
            out[qid] = (scores, 1 + int((negs >= pos).sum()), 1 + int((negs > pos).sum()), int((negs == pos).sum()))
    return out


# ------------------------------------------------------------------ comparison

def assert_engine_equals_reference(result, ref: dict, expect_ids=None):
    got = {q.query_id: i for i, q in enumerate(result.queries)}
    assert set(got) == set(expect_ids if expect_ids is not None else ref)
    ranks = metrics.ranks_from_flat(result.scores, result.offsets)
    worst = 0.0
    for qid, i in got.items():
        scores, pess, opt, ties = ref[qid]
        ours = result.query_scores(i).astype(np.float64)
        assert ours.shape == scores.shape, qid
        worst = max(worst, float(np.abs(ours - scores).max()))
        assert (ranks.pessimistic[i], ranks.optimistic[i], ranks.n_ties[i]) == (pess, opt, ties), qid
    assert worst <= SCORE_TOL, f"largest score difference {worst:.3g} > {SCORE_TOL}"
    return worst


def _near_ties(ref) -> int:
    """Reference queries with a negative within SCORE_TOL of the positive but not equal to it."""
    return sum(bool(((np.abs(s[1:] - s[0]) < SCORE_TOL) & (s[1:] != s[0])).any()) for s, *_ in ref.values())


@pytest.fixture(scope="module")
def differential_root(tmp_path_factory):
    data_dir, image_dir = helpers.differential_crepe_root(tmp_path_factory.mktemp("differential"))
    return data_dir, image_dir, reference_queries(data_dir)


@pytest.fixture(scope="module")
def differential(differential_root, loaded_tiny):
    data_dir, image_dir, raw = differential_root
    ref = reference_scores(loaded_tiny, raw, image_dir)
    assert _near_ties(ref) == 0
    return data_dir, image_dir, raw, ref


def _queries(data_dir, **kw):
    return helpers.crepe_queries(data_dir, complexities=(4, 5), **kw).queries


# ------------------------------------------------------------------ the tests

def test_fixture_covers_what_the_differential_claims(differential):
    data_dir, image_dir, raw, ref = differential
    kinds = Counter(q["hn_type"] for q in raw.values())
    assert kinds["all"] == 10 and all(len(q["candidates"]) == 16 for q in raw.values() if q["hn_type"] == "all")
    boxes = {q["box"] for q in raw.values()}
    assert set(helpers.DIFFERENTIAL_BOXES.values()) <= boxes
    assert any(helpers.OVERLONG_CAPTION in q["candidates"] for q in raw.values())
    assert sum(t for *_, t in ref.values()) >= 2 * 2      # the in-list positive and the case-only negative, ×2 sets


def test_scores_and_ranks_equal_the_reference(differential, loaded_tiny):
    data_dir, image_dir, raw, ref = differential
    res = engine.run(loaded_tiny, _queries(data_dir), ImageIndex(image_dir), cache_dir=None)
    worst = assert_engine_equals_reference(res, ref)
    assert worst < SCORE_TOL                                 # and the scores are cosines, not a transform of them
    table = helpers.per_query_table(res).set_index("query_id")
    for qid, (scores, *_rest) in ref.items():
        assert [float(v) for v in table.loc[qid, "scores"].split()] == pytest.approx(scores, abs=SCORE_TOL)


def test_summary_recall_equals_the_reference(differential, loaded_tiny):
    data_dir, image_dir, raw, ref = differential
    qs = helpers.crepe_queries(data_dir, complexities=(4, 5))
    res = engine.run(loaded_tiny, qs.queries, ImageIndex(image_dir), cache_dir=None)
    summary = helpers.retrieval_summary(res, qs, n_boot=50).set_index(["hn_type", "complexity"])
    for (hn, n), group in _group(raw).items():
        hits = [ref[qid][1] == 1 for qid in group]
        assert summary.loc[(hn, n), "n_queries"] == len(group)
        assert summary.loc[(hn, n), "r1"] == pytest.approx(100.0 * sum(hits) / len(hits))
        assert summary.loc[(hn, n), "chance_r1"] == pytest.approx(100.0 / len(raw[group[0]]["candidates"]))


def _group(raw):
    out = {}
    for qid, q in raw.items():
        out.setdefault((q["hn_type"], q["complexity"]), []).append(qid)
    return out


def test_image_workers_give_the_same_result(differential, loaded_tiny):
    data_dir, image_dir, raw, ref = differential
    res = engine.run(loaded_tiny, _queries(data_dir), ImageIndex(image_dir), RunOptions(num_workers=2, image_batch_size=4), cache_dir=None)
    assert_engine_equals_reference(res, ref)


def test_cached_and_uncached_runs_equal_the_reference(differential, loaded_tiny, tmp_path):
    data_dir, image_dir, raw, ref = differential
    qs = _queries(data_dir)
    fresh = engine.run(loaded_tiny, qs, ImageIndex(image_dir), cache_dir=tmp_path)
    cached = engine.run(loaded_tiny, qs, ImageIndex(image_dir), cache_dir=tmp_path)
    uncached = engine.run(loaded_tiny, qs, ImageIndex(image_dir), cache_dir=None)
    assert any(tmp_path.rglob("shard-*.npz"))
    for res in (fresh, cached, uncached):
        assert_engine_equals_reference(res, ref)
    assert np.array_equal(cached.scores, fresh.scores) and np.array_equal(uncached.scores, fresh.scores)


@pytest.mark.parametrize("truncation", ["keep_eot", "official"])
def test_overlong_caption_under_each_truncation(differential, loaded_tiny, truncation):
    data_dir, image_dir, raw, _ = differential
    long_ids = {qid for qid, q in raw.items() if helpers.OVERLONG_CAPTION in q["candidates"]}
    assert len(long_ids) == 2                                  # the atom row and its all-negatives set
    sub = {qid: raw[qid] for qid in long_ids}
    ref = reference_scores(loaded_tiny, sub, image_dir, truncation)
    qs = [q for q in _queries(data_dir) if q.query_id in long_ids]
    res = engine.run(loaded_tiny, qs, ImageIndex(image_dir), RunOptions(truncation=truncation), cache_dir=None)
    assert_engine_equals_reference(res, ref)
    assert res.stats["n_overlength_texts"] == 1 and res.truncated.tolist() == [1, 1]
    other = reference_scores(loaded_tiny, sub, image_dir, "official" if truncation == "keep_eot" else "keep_eot")
    assert any(np.abs(other[q][0] - ref[q][0]).max() > 1e-4 for q in sub)   # the two policies really differ


def test_overlong_caption_under_truncation_error(differential, loaded_tiny, tiny_model, tmp_path):
    from crepe_utils.errors import DataError
    data_dir, image_dir, *_ = differential
    cfg, ckpt = tiny_model
    with pytest.raises(DataError, match=r"(?s)1 caption\(s\) exceed the context length of 77.*"
                                        r"prod_vg_hard_negs_atom_complexity_5.csv:6: 'a small red dog"):
        evaluate(cfg.stem, "productivity", model_config=str(cfg), pretrained=str(ckpt), complexities=(5,), hn_types=["atom"], data_dir=data_dir, image_dir=image_dir, out=tmp_path / "out", cache_dir=False, kind="fixture", device="cpu", progress=False, truncation="error")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("policy", ["skip", "keep", "error"])
def test_empty_negatives_under_each_policy(differential, loaded_tiny, policy):
    from crepe_utils.benchmarks.crepe import queries as D
    data_dir, image_dir, *_ = differential
    load = lambda: D.load_systematicity(data_dir, "laion", ["comp"], empty_negatives=policy)  # noqa: E731
    if policy == "error":
        with pytest.raises(D.DataError, match=r"(?s)seen_compounds_in_laion.csv\[comp\]:3: no hard negatives.*empty_negatives='skip'"):
            load()
        return
    qs = load()
    ids = {q.query_id for q in qs}
    empty = {f"syst_vg_hard_negs_{s}_compounds_in_laion.csv[comp]:3" for s in ("seen", "unseen")}
    if policy == "keep":
        assert empty <= ids
    else:
        assert not empty & ids
    assert [i.skipped for i in qs.issues if i.kind == "empty negatives"] == [policy == "skip"] * 2
    res = engine.run(loaded_tiny, qs.queries, ImageIndex(image_dir), cache_dir=None)
    ranks = metrics.ranks_from_flat(res.scores, res.offsets)
    for i, q in enumerate(res.queries):
        if q.query_id in empty:
            assert len(res.query_scores(i)) == 1 and ranks.pessimistic[i] == 1   # the official "always first"


BF16_TOL = 0.01   # |bf16 − fp32| of cosine scores: bf16 keeps 8 significant bits


def test_bf16_ranks_equal_fp32_except_within_its_tolerance(differential, loaded_tiny):
    data_dir, image_dir, raw, ref = differential
    res = engine.run(loaded_tiny, _queries(data_dir), ImageIndex(image_dir), RunOptions(precision="bf16"), cache_dir=None)
    index = {q.query_id: i for i, q in enumerate(res.queries)}
    moved, decided = 0, 0
    for qid, (scores, *_rest) in ref.items():
        ours = res.query_scores(index[qid]).astype(np.float64)
        assert np.abs(ours - scores).max() <= BF16_TOL, qid
        moved += int(np.abs(ours - scores).max() > 1e-6)
        # every negative that fp32 puts clearly above or below the positive stays on that side
        clear = np.abs(scores[1:] - scores[0]) > 2 * BF16_TOL
        decided += int(clear.sum())
        assert np.array_equal(np.sign(ours[1:] - ours[0])[clear], np.sign(scores[1:] - scores[0])[clear]), qid
    assert moved > len(ref) // 2 and decided > len(ref)    # bf16 really ran, and the claim covers most pairs


def test_fp32_is_strict_ieee_on_every_backend_and_recorded(differential, loaded_tiny):
    import torch
    data_dir, image_dir, *_ = differential
    b = torch.backends

    def flags():
        return (b.cuda.matmul.fp32_precision, b.cudnn.conv.fp32_precision, b.mkldnn.matmul.fp32_precision)
    before = flags()
    qs = _queries(data_dir)[:2]
    for precision, gpu in (("fp32", "ieee"), ("bf16", "ieee"), ("tf32", "tf32")):
        res = engine.run(loaded_tiny, qs, ImageIndex(image_dir), RunOptions(precision=precision), cache_dir=None)
        recorded = res.stats["fp32_precision"]
        assert recorded["cuda.matmul"] == recorded["cudnn.conv"] == recorded["cudnn.rnn"] == gpu
        assert recorded["mkldnn.matmul"] == recorded["mkldnn.conv"] == "ieee"
    assert flags() == before                     # the global settings are restored
    assert before[1] == "tf32"                   # PyTorch's default for cuDNN convolutions: strict fp32 overrides it


# ------------------------------------------------------------------ every model family

def _bert_rows(vocab: Path, ctx: int):
    """The official ALBEF/FLAVA tokenization (BertTokenizer, truncation=True, padded), via the tokenizers library."""
    def rows(texts, truncation):
        import torch
        from tokenizers import BertWordPieceTokenizer
        tok = BertWordPieceTokenizer(str(vocab), lowercase=True)
        tok.enable_truncation(ctx)
        tok.enable_padding(length=ctx, pad_id=0)
        return torch.tensor([e.ids for e in tok.encode_batch(list(texts))], dtype=torch.long)
    return rows


def _hf_rows(folder: Path):
    """transformers' own tokenizer call: padded with its pad token to 77, end token kept on truncation."""
    def rows(texts, truncation):
        import torch
        import transformers
        tok = transformers.AutoTokenizer.from_pretrained(folder)
        return torch.tensor(tok(list(texts), padding="max_length", max_length=77, truncation=True)["input_ids"])
    return rows


@pytest.fixture(params=["open_clip", "cyclip", "albef", "flava", "hf_clip"])
def family_case(request, family_models_dir):
    """(loaded model, its reference tokenization) for each family, in the family's official truncation."""
    if request.param == "open_clip":
        return request.getfixturevalue("loaded_tiny"), None
    if request.param == "hf_clip":
        return request.getfixturevalue("loaded_hf_clip"), _hf_rows(request.getfixturevalue("hf_clip_folder"))
    if request.param == "cyclip":
        return request.getfixturevalue("loaded_cyclip"), None     # OpenAI BPE, as open_clip's SimpleTokenizer
    loaded = request.getfixturevalue(f"loaded_{request.param}")
    return loaded, _bert_rows(family_models_dir / "bert-base-uncased" / "vocab.txt", loaded.spec.context_length)


def test_each_family_equals_the_reference_in_its_official_truncation(differential_root, family_case, tmp_path):
    data_dir, image_dir, raw = differential_root
    loaded, rows = family_case
    ref = reference_scores(loaded, raw, image_dir, loaded.spec.truncation, rows)
    assert _near_ties(ref) == 0
    qs = _queries(data_dir)
    res = engine.run(loaded, qs, ImageIndex(image_dir), RunOptions(truncation=loaded.spec.truncation, image_batch_size=8, text_batch_size=16), cache_dir=tmp_path)
    assert_engine_equals_reference(res, ref)
    cached = engine.run(loaded, qs, ImageIndex(image_dir), RunOptions(truncation=loaded.spec.truncation, image_batch_size=8, text_batch_size=16), cache_dir=tmp_path)   # the batch size is part of the cache key
    assert cached.stats["run_n_crops_encoded"] == cached.stats["run_n_texts_encoded"] == 0
    assert np.array_equal(cached.scores, res.scores)
    assert res.stats["length_cut"] is True
