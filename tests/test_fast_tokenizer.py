"""The fast tokenizer against open_clip's own SimpleTokenizer, id for id.

The reference is always a separately constructed open_clip tokenizer called through its own
``encode`` or ``__call__``; the fast path runs on another instance.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from crepe_utils.benchmarks.crepe import queries as D
from crepe_utils.engine import tokenizing
from crepe_utils.engine import core as engine
from crepe_utils.models import fast_tokenizer

open_clip = pytest.importorskip("open_clip")
from open_clip.tokenizer import SimpleTokenizer  # noqa: E402

#: captions the text fixing or the splitting could get wrong, and ordinary ones between them
TRICKY = [
    "a red dog on a table",
    "A Red DOG on a TABLE.",
    "",
    "   ",
    "  leading and trailing spaces  ",
    "a dog\ton a\ttable\n\nnext to\t\n a chair\n",
    "tabs\tand\nnewlines\r\nand a carriage\rreturn",
    "form\x0cfeed and vertical\x0btab",
    "non\u00a0breaking\u00a0space and a thin\u2009space",
    "zero\u200bwidth, line\u2028separator, next\x85line, BOM\ufeff",
    "Crème brûlée on a café table",
    "e\u0301 decomposed accent",
    "猫がテーブルの上にいる",
    "一只狗在桌子上",
    "🐶 dog on a table 👍🏽",
    "ＬＯＵＤ　ＮＯＩＳＥＳ full width",
    "ﬁsh and ﬂowers (ligatures)",
    "it’s “curly” quotes",
    "cafÃ© mojibake, donâ€™t, Ã¼ber",
    "&amp; AT&T &#39;quoted&#39; &lt;b&gt; &nbsp; &#x27; &amp;amp; &notin",
    "<b>bold</b> &amp; tag",
    "a&b",
    "&amp; a dog",                                    # the only character that is not plain comes first,
    "\x00a dog",
    "a dog on a caf\u00e9",                           # or last
    "\u00e9",
    "& sign on a building",
    "\x1b[31mred\x1b[0m terminal escape",
    "null\x00byte and del\x7f and unit\x1fseparator",
    "dog's, DOG'S, I'M, we'LL, they'D, 's alone, don't",
    "12345 digits and 3.14 and 1,000",
    "!!!???... --- ;;; punctuation runs",
    "<start_of_text> and <END_OF_TEXT> literally",
    "a<end_of_text>b",
    "hello" * 30,
    " ".join(["word"] * 100),                         # over-long, plain
    " ".join(["café"] * 100),                         # over-long, not plain
]


@pytest.fixture(scope="module")
def reference():
    return open_clip.get_tokenizer("ViT-B-32")


@pytest.fixture(scope="module")
def fast_tok():
    tok = open_clip.get_tokenizer("ViT-B-32")
    assert fast_tokenizer.supports(tok)
    return tok


def reference_ids(reference, texts):
    return [reference.encode(t) for t in texts]


def test_tricky_captions_match_reference(reference, fast_tok):
    # one batch, plain and non-plain interleaved: each must reach the right path
    assert fast_tokenizer.encode_batch(fast_tok, TRICKY) == reference_ids(reference, TRICKY)
    for text in TRICKY:                                    # and alone
        assert fast_tokenizer.encode_batch(fast_tok, [text]) == [reference.encode(text)], repr(text)


def test_every_ascii_character_in_context(reference, fast_tok):
    texts = [template.format(chr(c)) for c in range(128)
             for template in ("{}", "a{}b", "A{0}{0}B", "{}dog's", "x {} y", "the{}&amp;cat", "5{}6")]
    assert fast_tokenizer.encode_batch(fast_tok, texts) == reference_ids(reference, texts)


def test_random_plain_strings(reference, fast_tok):
    rng = random.Random(0)
    atoms = (list("abcXYZ019 \t\n.,;:!?'\"-()[]/_%#@*+=<>") + ["'s", "'S", "'ll", "'RE", "don't", "dog",
             "Tables", "<start_of_text>", "<end_of_text>", "  ", "&"])
    texts = ["".join(rng.choice(atoms) for _ in range(rng.randrange(0, 40))) for _ in range(3000)]
    assert sum(map(fast_tokenizer.is_plain, texts)) > 1000          # both paths are exercised
    assert sum(not fast_tokenizer.is_plain(t) for t in texts) > 100
    assert fast_tokenizer.encode_batch(fast_tok, texts) == reference_ids(reference, texts)


def test_only_captions_that_are_not_plain_reach_the_reference_encode(fast_tok, monkeypatch):
    seen = []
    real = SimpleTokenizer.encode

    def counting(self, text):
        seen.append(text)
        return real(self, text)

    monkeypatch.setattr(SimpleTokenizer, "encode", counting)
    fast_tokenizer.encode_batch(fast_tok, TRICKY)
    assert seen == [t for t in TRICKY if not fast_tokenizer.is_plain(t)]
    assert 0 < len(seen) < len(TRICKY)


@pytest.mark.parametrize("text,plain", [
    ("a red dog\ton a\nmat", True), ("It's 5 o'clock! (really?) <b>", True), ("", True),
    ("AT&T", False), ("caf\u00e9", False), ("a\u00a0b", False), ("a\rb", False), ("a\x0bb", False),
    ("a\x0cb", False), ("a\x1bb", False), ("a\x1cb", False), ("a\x7fb", False), ("a\x00b", False),
])
def test_plain_means_printable_ascii_tab_newline_and_no_ampersand(text, plain):
    assert fast_tokenizer.is_plain(text) is plain


class _Subclassed(SimpleTokenizer):
    pass


@pytest.mark.parametrize("make", [
    lambda: SimpleTokenizer(clean="whitespace"),               # keeps case
    lambda: SimpleTokenizer(clean="canonicalize"),             # drops punctuation
    lambda: SimpleTokenizer(additional_special_tokens=["<mask>"]),
    lambda: SimpleTokenizer(reduction_mask="simple"),
    lambda: _Subclassed(),
], ids=["clean-whitespace", "clean-canonicalize", "extra-special-token", "reduction-mask", "subclass"])
def test_other_tokenizers_take_their_own_encode(make):
    tok = make()
    assert not fast_tokenizer.supports(tok)
    texts = ["A Red DOG, on a <mask> table.", "two cats"]
    assert fast_tokenizer.encode_batch(tok, texts) == [tok.encode(t) for t in texts]


def test_supports_the_standard_tokenizer_and_the_engines_models(loaded_tiny):
    assert fast_tokenizer.supports(SimpleTokenizer())
    assert fast_tokenizer.supports(loaded_tiny.tokenizer)
    assert not fast_tokenizer.supports(object())


def test_a_case_keeping_tokenizer_really_differs_from_the_fast_path():
    # so the test above would fail if the fast path took it
    assert SimpleTokenizer(clean="whitespace").encode("A Red DOG") != SimpleTokenizer().encode("A Red DOG")


# ------------------------------------------------------------------ tokenizing.tokenize on top of it

def test_engine_tokenize_at_the_context_length_under_each_policy(reference, fast_tok):
    ctx = int(fast_tok.context_length)
    sot, eot = reference.sot_token_id, reference.eot_token_id
    plain = [" ".join(["a"] * n) for n in range(ctx - 4, ctx + 2)]   # bodies of ctx-4 .. ctx+1 tokens
    accented = [t.replace("a", "é") for t in plain]            # not plain: the reference path
    texts = plain + accented + TRICKY
    full = [[sot] + reference.encode(t) + [eot] for t in texts]
    assert [len(f) for f in full[:6]] == list(range(ctx - 2, ctx + 4))
    assert [len(f) > ctx for f in full[:6]] == [False, False, False, True, True, True]

    keep = tokenizing.tokenize(fast_tok, texts, "keep_eot")
    padded = reference(texts).numpy()                          # open_clip's own call: cut, end with the end token
    for ids, row in zip(keep.ids, padded):
        assert list(ids) == np.trim_zeros(row, "b").tolist()
    assert keep.overlength.tolist() == [len(f) > ctx for f in full]

    official = tokenizing.tokenize(fast_tok, texts, "official")    # cut at the context length, end token lost
    assert [list(i) for i in official.ids] == [f[:ctx] for f in full]
    assert official.overlength.tolist() == keep.overlength.tolist()

    fits = [t for t, f in zip(texts, full) if len(f) <= ctx]
    assert [list(i) for i in tokenizing.tokenize(fast_tok, fits, "error").ids] == [f for f in full if len(f) <= ctx]
    with pytest.raises(D.DataError, match="over the context length"):
        tokenizing.tokenize(fast_tok, texts, "error")


def test_tokenize_parallel_keeps_workers_for_other_tokenizers(reference):
    tok = _Subclassed()
    texts = [f"{n} {colour} dogs on a table" for n in range(40) for colour in ("red", "Blue", "café")]
    parallel = tokenizing.tokenize_parallel(tok, texts, num_workers=2, chunk=16)
    assert [list(i) for i in parallel.ids] == [[tok.sot_token_id] + reference.encode(t) + [tok.eot_token_id]
                                               for t in texts]
    fast = tokenizing.tokenize_parallel(open_clip.get_tokenizer("ViT-B-32"), texts, num_workers=2, chunk=16)
    assert fast.ids == parallel.ids


def test_engine_results_are_byte_identical_with_the_reference_tokenizer(loaded_tiny, synthetic_root, monkeypatch):
    from crepe_utils.imagesets.visual_genome import ImageIndex
    data_dir, image_dir = synthetic_root
    qs = D.load_productivity(data_dir, complexities=(4, 5)).queries
    extra = [D.Query(benchmark="productivity", hn_type="atom", split="", complexity=4, train_data="",
                     image_id=qs[0].image_id, box=qs[0].box, positive=TRICKY[1], negatives=tuple(TRICKY[5:20]),
                     source="tricky:1")]
    fast = engine.run(loaded_tiny, qs + extra, ImageIndex(image_dir), cache_dir=None)
    monkeypatch.setattr(fast_tokenizer, "supports", lambda tokenizer: False)
    ref = engine.run(loaded_tiny, qs + extra, ImageIndex(image_dir), cache_dir=None)
    assert fast.scores.tobytes() == ref.scores.tobytes()
    assert fast.offsets.tolist() == ref.offsets.tolist() and fast.truncated.tolist() == ref.truncated.tolist()
    drop = {k for k in fast.stats if k.startswith("seconds")}
    assert {k: v for k, v in fast.stats.items() if k not in drop} == \
        {k: v for k, v in ref.stats.items() if k not in drop}


# ------------------------------------------------------------------ every real caption

@pytest.mark.shared
@pytest.mark.slow
def test_every_real_productivity_caption_matches_reference(shared_crepe, reference, fast_tok):
    qs = D.load_productivity(shared_crepe).queries
    texts = sorted({c for q in qs for c in q.candidates})
    assert len(texts) > 200_000
    expected = reference_ids(reference, texts)
    got = fast_tokenizer.encode_batch(fast_tok, texts)
    assert sum(a != b for a, b in zip(got, expected)) == 0 and len(got) == len(expected)
    assert sum(map(fast_tokenizer.is_plain, texts)) > 0.99 * len(texts)   # the fast path carries nearly all
    ctx = int(fast_tok.context_length)
    keep = tokenizing.tokenize(fast_tok, texts, "keep_eot")
    for ids, body in zip(keep.ids, expected):
        full = [fast_tok.sot_token_id] + body + [fast_tok.eot_token_id]
        assert list(ids) == (full if len(full) <= ctx else full[:ctx - 1] + [fast_tok.eot_token_id])


# ------------------------------------------------------------------ the benchmark runs

@pytest.mark.slow                                                 # a fresh interpreter imports open_clip
def test_benchmark_runs_on_generated_captions_and_finds_no_differing_ids(tmp_path):
    out = tmp_path / "bench.json"
    script = Path(__file__).resolve().parent.parent / "speed" / "bench_tokenizer.py"
    subprocess.run([sys.executable, str(script), "--synthetic", "--synthetic-n", "300", "--rounds", "2",
                    "--json", str(out)], check=True, capture_output=True, text=True)
    row = json.loads(out.read_text())
    assert row["captions"] == 300 and row["source"] == "synthetic captions"
    assert 0 < row["plain_share"] < 1                              # both paths ran
    assert row["differing_ids"] == 0 and row["differing_ids_after_cut"] == 0
    assert len(row["ratio_per_round_cpu"]) == 2
