"""Tokenizer speed: the fast path of ``crepe_utils.models.fast_tokenizer`` against open_clip's SimpleTokenizer.

    .venv/bin/python speed/bench_tokenizer.py                      # real captions when found
    .venv/bin/python speed/bench_tokenizer.py --data-dir DIR       # CREPE's CSVs in DIR
    .venv/bin/python speed/bench_tokenizer.py --synthetic          # generated captions

Captions: every distinct caption and hard negative of CREPE's productivity files (``--data-dir``,
default: $CREPE_DATA/crepe or the development copy), or, when there are none, a generated set of
benchmark-like captions with a share of non-plain ones (accents, entities, emoji, odd whitespace).

Both tokenizers run in this process on one core (pure Python and single-threaded). Each round
builds a fresh tokenizer for each side, so every BPE cache starts cold, as in an engine run, and
the construction is not timed; the two sides alternate in order from round to round, and the
best round of each is kept, because other work on a shared machine only ever adds time. Times
are the process's CPU time, which leaves out waiting for a core; wall-clock ratios are printed
beside them.

Printed: captions/s of each, their ratio (target ≥ 10×), the ratio within each round, the time of
``tokenizing.tokenize`` on top of the fast path, and the number of captions whose ids differ from the
reference (target 0): raw ids, and after the context-length cut of open_clip's own call.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from crepe_utils.benchmarks.crepe.datasets import CREPE_CSVS

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def real_captions(data_dir) -> list[str]:
    from crepe_utils.benchmarks.crepe import queries as D
    return sorted({c for q in D.load_productivity(data_dir).queries for c in q.candidates})


def synthetic_captions(n: int, seed: int = 0) -> list[str]:
    """Captions in the productivity files' shape: clauses over a few thousand words, 1% not plain."""
    rng = random.Random(seed)
    syllables = ["ta", "ble", "do", "g", "ca", "t", "re", "d", "wo", "od", "en", "mi", "ro", "an", "st", "ing"]
    nouns = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(1500)})
    adjectives = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))) for _ in range(500)})
    relations = ["on", "under", "next to", "behind", "in front of", "holding", "wearing", "near", "not on"]
    odd = ["café", "crème brûlée", "&amp;", "it&#39;s", "🐶", "猫", "a\u00a0b", "x\r\ny", "ＬＯＵＤ", "Ã©"]
    out = set()
    while len(out) < n:
        clauses = []
        for _ in range(rng.randint(1, 4)):
            clauses.append(f"{rng.choice(['a', 'the', 'two', 'some'])} {rng.choice(adjectives)} {rng.choice(nouns)} "
                           f"{rng.choice(relations)} {rng.choice(['a', 'the'])} {rng.choice(nouns)}")
        text = ", and ".join(clauses)
        text = text[0].upper() + text[1:] + rng.choice([".", "", ". There is no " + rng.choice(nouns) + "."])
        if rng.random() < 0.01:
            text += " " + rng.choice(odd)
        out.add(text)
    return sorted(out)


def timed(fn, *args):
    """(CPU seconds of this process, wall seconds, result). On a shared machine the CPU time
    leaves out the time spent waiting for a core; the wall time does not."""
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn(*args)
    return time.process_time() - c0, time.perf_counter() - w0, out


def reference_encode(tokenizer, texts):
    return [tokenizer.encode(t) for t in texts]


def main() -> None:
    import open_clip
    from crepe_utils.engine import tokenizing
    from crepe_utils.models import fast_tokenizer
    from crepe_utils import paths

    data_dir = None if ARGS.synthetic else CREPE_CSVS.existing(ARGS.data_dir)
    if data_dir is not None:
        texts, source = real_captions(data_dir), f"real productivity captions, {data_dir}"
    else:
        texts, source = synthetic_captions(ARGS.synthetic_n), "synthetic captions"
    if ARGS.limit:
        texts = texts[:ARGS.limit]
    n = len(texts)
    n_plain = sum(map(fast_tokenizer.is_plain, texts))
    print(f"{n:,} distinct {source}; {n_plain / n:.2%} plain (the rest take the reference encode)")
    assert fast_tokenizer.supports(open_clip.get_tokenizer(ARGS.model))

    cpu = {"reference": [], "fast": []}
    wall = {"reference": [], "fast": []}
    out = {}
    for r in range(ARGS.rounds):
        for side in (("reference", "fast") if r % 2 == 0 else ("fast", "reference")):
            tok = open_clip.get_tokenizer(ARGS.model)            # cold caches, construction not timed
            out[side] = None                                     # the previous round's ids are not kept alive
            c, w, out[side] = timed(reference_encode if side == "reference" else fast_tokenizer.encode_batch,
                                    tok, texts)
            cpu[side].append(c)
            wall[side].append(w)
        print(f"  round {r + 1}: reference {cpu['reference'][-1]:6.2f} s CPU ({wall['reference'][-1]:6.2f} s wall)"
              f"   fast {cpu['fast'][-1]:5.2f} s CPU ({wall['fast'][-1]:5.2f} s wall)"
              f"   ratio {cpu['reference'][-1] / cpu['fast'][-1]:5.1f}× CPU", flush=True)
    expected, got = out["reference"], out["fast"]

    tok = open_clip.get_tokenizer(ARGS.model)
    engine_cpu, engine_wall, tokens = timed(tokenizing.tokenize, tok, texts, "keep_eot")
    ctx, sot, eot = int(tok.context_length), tok.sot_token_id, tok.eot_token_id
    # open_clip's own call: start, ids, end; over the context length cut to it, the last one the end token
    wanted = [[sot] + e + [eot] for e in expected]
    wanted = [w if len(w) <= ctx else w[:ctx - 1] + [eot] for w in wanted]
    differ_raw = sum(a != b for a, b in zip(got, expected))
    differ_cut = sum(list(a) != b for a, b in zip(tokens.ids, wanted))

    best = {side: min(v) for side, v in cpu.items()}
    best_wall = {side: min(v) for side, v in wall.items()}
    row = {
        "captions": n, "source": source, "plain_share": n_plain / n, "rounds": ARGS.rounds,
        "cpu_s": cpu, "wall_s": wall,
        "reference_captions_per_cpu_s": n / best["reference"], "fast_captions_per_cpu_s": n / best["fast"],
        "ratio_best_cpu": best["reference"] / best["fast"],
        "ratio_best_wall": best_wall["reference"] / best_wall["fast"],
        "ratio_per_round_cpu": [a / b for a, b in zip(cpu["reference"], cpu["fast"])],
        "engine_tokenize_cpu_s": engine_cpu, "engine_tokenize_wall_s": engine_wall,
        "n_overlength": int(tokens.overlength.sum()),
        "differing_ids": differ_raw, "differing_ids_after_cut": differ_cut,
    }
    print(f"\nbest of {ARGS.rounds} rounds, CPU time of this process (one core):")
    print(f"reference (open_clip SimpleTokenizer.encode)  {n / best['reference']:10,.0f} captions/s  "
          f"({best['reference']:.2f} s)")
    print(f"fast      (fast_tokenizer.encode_batch)     {n / best['fast']:10,.0f} captions/s  ({best['fast']:.2f} s)")
    print(f"ratio, best against best                     {row['ratio_best_cpu']:10.1f}×   (target ≥ 10×; "
          f"wall clock {row['ratio_best_wall']:.1f}×)")
    print(f"ratio within each round                      {'  '.join(f'{x:.1f}×' for x in row['ratio_per_round_cpu'])}")
    print(f"tokenizing.tokenize (keep_eot) on the fast path  {engine_cpu:10.2f} s CPU  ({row['n_overlength']} over-long)")
    print(f"captions with differing ids                  {differ_raw:10d}     (target 0)")
    print(f"  after open_clip's context-length cut       {differ_cut:10d}")
    if ARGS.json:
        Path(ARGS.json).write_text(json.dumps(row, indent=2))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=None, help="folder with CREPE's productivity CSVs")
    p.add_argument("--synthetic", action="store_true", help="use generated captions even when real ones exist")
    p.add_argument("--synthetic-n", type=int, default=50_000)
    p.add_argument("--limit", type=int, default=0, help="only the first N captions (quick runs)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--model", default="ViT-B-32", help="open_clip architecture whose tokenizer is measured")
    p.add_argument("--json", default=None, help="also write the numbers to this file")
    ARGS = p.parse_args()
    main()
