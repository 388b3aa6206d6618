"""Checks of the Winoground paper's claims against its released data and against our evaluations.

Each function returns :class:`crepe_utils.checks.Check` rows (claim, paper, ours, status) with the
statuses of :mod:`crepe_utils.checks`. The data checks take the examples as a DataFrame with
Winoground's fields (``examples_text.tsv`` or the real ``examples.jsonl``); claim values come from
``reported/claims.csv`` (benchmark "winoground") and Table 3 from ``reported/winoground_table3.csv``.

Same words, different order [§3.1]: captions are compared as multisets of words after
lower-casing and stripping punctuation from the ends of each word (so ``"organism,"`` equals
``"organism"``). The paper allows "the same words *or morphemes*": a pair whose words differ but
whose letters are the same (``"fly fishing"`` / ``"fish flying"``) is reported, by id and with the
differing words, as a morpheme-level swap, consistent with the claim; a pair that differs even
in its letters would contradict it.
"""
from __future__ import annotations

import math
import string
from collections import Counter

import pandas as pd

from .. import published
from ..checks import FAIL, NEEDS, PAPER, PASS, Check
from .scoring import METRICS, chance_levels
from .statistics import split_tags

GROUP = "winoground"
TAG_CLAIMS = {"Object": "wg_tag_object", "Relation": "wg_tag_relation", "Both": "wg_tag_both"}
SECONDARY_CLAIMS = {"Symbolic": "wg_tag_symbolic", "Series": "wg_tag_series", "Pragmatics": "wg_tag_pragmatics"}
TABLE5_HUMAN_CLAIMS = {"Symbolic": "wg_human_symbolic", "Series": "wg_human_series",
                       "Pragmatics": "wg_human_pragmatics"}
TABLE3_CLIP_ROW = "CLIP (ViT-B/32)"
TABLE3_ARCHITECTURE, TABLE3_PRETRAINED = "ViT-B-32-quickgelu", "openai"
TABLE3_REGISTRY_KEY = "openai-vit-b-32"   #: also given to a local copy of the OpenAI release file
MORPHEME_TAG = "Morpheme-Level"


def _claim(claim_id: str) -> float:
    return published.claim(claim_id)


def _source(claim_id: str) -> str:
    return published.claim_source(claim_id)


# ------------------------------------------------------------------------------ counts

def check_example_count(examples: pd.DataFrame) -> list[Check]:
    """400 examples with distinct ids [§3.1]."""
    paper = int(_claim("wg_examples"))
    n, distinct = len(examples), examples["id"].nunique()
    ok = n == paper and distinct == n
    return [Check("Winoground has 400 examples", str(paper), f"{n} rows, {distinct} distinct ids",
                  PASS if ok else PAPER, _source("wg_examples"), GROUP)]


def check_tag_counts(examples: pd.DataFrame) -> list[Check]:
    """Table 1: 141 Object, 233 Relation, 26 Both (``collapsed_tag``)."""
    counts = examples["collapsed_tag"].value_counts()
    out = []
    for tag, claim_id in TAG_CLAIMS.items():
        paper, ours = int(_claim(claim_id)), int(counts.get(tag, 0))
        out.append(Check(f"Examples tagged {tag} (Table 1)", str(paper), str(ours), PASS if ours == paper else PAPER,
                         f"collapsed_tag; {_source(claim_id)}", GROUP))
    return out


def secondary_tag_counts(examples: pd.DataFrame) -> pd.DataFrame:
    """Per secondary tag: examples carrying it (comma-split) and examples whose field is exactly it."""
    field = examples["secondary_tag"].fillna("").astype(str).str.strip()
    split = Counter(t for value in field for t in split_tags(value))
    exact = Counter(field)
    tags = sorted(split, key=lambda t: (-split[t], t))
    return pd.DataFrame({"tag": tags, "comma_split": [split[t] for t in tags],
                         "exact": [exact.get(t, 0) for t in tags]})


def check_secondary_tags(examples: pd.DataFrame) -> list[Check]:
    """Table 1: Symbolic 41, Series 31, Pragmatics 24, counting an example once per tag it carries."""
    counts = secondary_tag_counts(examples).set_index("tag")
    out = []
    for tag, claim_id in SECONDARY_CLAIMS.items():
        paper = int(_claim(claim_id))
        split = int(counts["comma_split"].get(tag, 0))
        exact = int(counts["exact"].get(tag, 0))
        out.append(Check(f"Examples with secondary tag {tag} (Table 1)", str(paper), str(split),
                         PASS if split == paper else PAPER,
                         f"comma-split membership ('Symbolic, Series' counts for both); exact match gives {exact}. "
                         f"{_source(claim_id)}", GROUP))
    return out


def _denominators(percent: float, limit: int) -> list[int]:
    """The n ≤ limit for which some k/n rounds to ``percent`` (two decimals)."""
    return [n for n in range(1, limit + 1)
            if any(math.isclose(round(100 * k / n, 2), percent, abs_tol=1e-9) for k in range(n + 1))]


def check_table5_denominators(examples: pd.DataFrame) -> list[Check]:
    """Table 5's human scores per secondary tag imply exact-match subset sizes, not Table 1's counts."""
    counts = secondary_tag_counts(examples).set_index("tag")
    out = []
    for tag, claim_id in TABLE5_HUMAN_CLAIMS.items():
        value = _claim(claim_id)
        split = int(counts["comma_split"].get(tag, 0))
        exact = int(counts["exact"].get(tag, 0))
        possible = set(_denominators(value, max(split, exact)))
        k = round(value * exact / 100)
        if exact in possible and split not in possible:
            detail = (f"{value:.2f} = {k}/{exact}, the exact-match count (the dataset's compute_statistics.py filters "
                      f"by equality); no k/{split} (Table 1's comma-split count) gives {value:.2f}")
        elif split in possible:
            detail = f"{value:.2f} is k/{split}: consistent with Table 1's count"
        else:
            detail = f"{value:.2f} is neither k/{exact} (exact match) nor k/{split} (comma-split): unexplained"
        status = PASS if split in possible else PAPER
        out.append(Check(f"Table 5 human score on {tag} uses Table 1's {split} examples",
                         f"{value:.2f} ({_source(claim_id)})", f"denominator {exact if exact in possible else '?'}",
                         status, detail, GROUP))
    return out


# ------------------------------------------------------------------------------ captions

def _word_bag(caption: str) -> Counter:
    return Counter(w for w in (t.strip(string.punctuation) for t in caption.lower().split()) if w)


def _letters(caption: str) -> Counter:
    return Counter(ch for ch in caption.lower() if ch.isalnum())


def caption_pair_exceptions(examples: pd.DataFrame) -> pd.DataFrame:
    """Examples whose two captions are not the same words in a different order.

    Columns: id, only_in_caption_0, only_in_caption_1 (the differing words), same_letters
    (a rearrangement of the same letters: a morpheme-level swap), same_order (the captions are
    identical word for word), tagged_morpheme (secondary tag includes Morpheme-Level).
    """
    rows = []
    for ex in examples.itertuples(index=False):
        bag0, bag1 = _word_bag(ex.caption_0), _word_bag(ex.caption_1)
        same_order = ex.caption_0.lower().split() == ex.caption_1.lower().split()
        if bag0 == bag1 and not same_order:
            continue
        rows.append({"id": int(ex.id), "only_in_caption_0": " ".join(sorted((bag0 - bag1).elements())),
                     "only_in_caption_1": " ".join(sorted((bag1 - bag0).elements())),
                     "same_letters": _letters(ex.caption_0) == _letters(ex.caption_1), "same_order": same_order,
                     "tagged_morpheme": MORPHEME_TAG in split_tags(ex.secondary_tag or "")})
    return pd.DataFrame(rows, columns=["id", "only_in_caption_0", "only_in_caption_1", "same_letters", "same_order",
                                       "tagged_morpheme"])


def check_caption_pairs(examples: pd.DataFrame) -> list[Check]:
    """§3.1: the two captions use the same words (or morphemes) in a different order.

    One summary row (the morpheme-level swaps listed in its detail), then one row per pair that is
    neither the same words nor a rearrangement of the same letters.
    """
    exc = caption_pair_exceptions(examples)
    n = len(examples)
    bad = exc[~exc["same_letters"] | exc["same_order"]]
    untagged = exc[exc["same_letters"] & ~exc["tagged_morpheme"]]["id"].tolist()
    tagged_ids = examples.loc[examples["secondary_tag"].fillna("").map(lambda v: MORPHEME_TAG in split_tags(v)), "id"]
    tagged_same_words = sorted(set(tagged_ids.astype(int)) - set(exc["id"]))
    punctuation_only = [int(ex.id) for ex in examples.itertuples(index=False)
                        if Counter(ex.caption_0.lower().split()) != Counter(ex.caption_1.lower().split())
                        and _word_bag(ex.caption_0) == _word_bag(ex.caption_1)]
    swaps = "; ".join(f"{r.id}: '{r.only_in_caption_0}' / '{r.only_in_caption_1}'"
                      for r in exc[exc["same_letters"] & ~exc["same_order"]].itertuples(index=False))
    detail = (f"{len(exc)} pairs differ in words: {len(exc) - len(bad)} are rearrangements of the same letters "
              f"(morpheme-level swaps: {swaps or 'none'}), {len(bad)} are not. Not tagged {MORPHEME_TAG}: ids {untagged or 'none'}; "
              f"tagged {MORPHEME_TAG} but same words: ids {tagged_same_words or 'none'}. Words compared lower-cased, "
              f"punctuation stripped from word ends (which alone makes ids {punctuation_only or 'none'} equal).")
    out = [Check("The two captions use the same words or morphemes in a different order (§3.1)",
                 f"all {n}", f"{n - len(exc)} same words; {len(exc) - len(bad)} morpheme-level; {len(bad)} neither",
                 PASS if bad.empty else PAPER, detail, GROUP)]
    for row in exc.itertuples(index=False):
        if row.same_order:
            ours, status = "identical word order", PAPER
        else:
            ours = f"'{row.only_in_caption_0}' vs '{row.only_in_caption_1}'"
            status = PASS if row.same_letters else PAPER
        if status == PASS:
            continue
        note = ("same letters: a morpheme-level swap" if row.same_letters else "different letters") + \
               ("" if row.tagged_morpheme else f"; not tagged {MORPHEME_TAG}")
        out.append(Check(f"Example {row.id}: same words in a different order", "same words or morphemes", ours,
                         status, note, GROUP))
    return out


# ------------------------------------------------------------------------------ chance and Table 3

def check_chance_levels() -> list[Check]:
    """Table 3's random chance (25 / 25 / 16.67) from the metric definitions."""
    ours = chance_levels()
    out = []
    for metric in METRICS:
        claim_id = f"wg_chance_{metric}"
        paper = _claim(claim_id)
        out.append(Check(f"Random chance for the {metric} score", f"{paper:.2f}", f"{ours[metric]:.2f}",
                         PASS if math.isclose(round(ours[metric], 2), paper, abs_tol=1e-9) else FAIL,
                         "share of the 24 orders of four distinct scores that pass (strict inequalities); "
                         f"{_source(claim_id)}", GROUP))
    return out


def check_table3(results: pd.DataFrame | None, table3: pd.DataFrame | None = None,
                 tolerance: float = 0.5) -> list[Check]:
    """Evaluated CLIP ViT-B/32 (open_clip ``ViT-B-32-quickgelu`` / ``openai``) against Table 3.

    ``results`` is :func:`crepe_utils.winoground.results.load_results`'s table. Only ``kind ==
    "evaluated"`` results on all 400 examples are compared; "needs data" when there are none.
    ``tolerance`` is in points (0.5 = two examples).
    """
    table3 = table3 if table3 is not None else published.winoground_table3()
    paper = table3.set_index("model").loc[TABLE3_CLIP_ROW]
    claim = f"Evaluated CLIP ViT-B/32 reproduces Table 3 ({', '.join(f'{float(paper[m]):.2f}' for m in METRICS)})"
    rows = pd.DataFrame() if results is None else results
    if not rows.empty:
        is_clip = (((rows["architecture"] == TABLE3_ARCHITECTURE) & (rows["pretrained"] == TABLE3_PRETRAINED))
                   | (rows["model"] == TABLE3_REGISTRY_KEY))
        rows = rows[(rows["kind"] == "evaluated") & (rows["breakdown"] == "all") & is_clip]
    if rows.empty:
        return [Check(claim, "—", "—", NEEDS, f"no evaluated result of open_clip {TABLE3_ARCHITECTURE} / "
                      f"{TABLE3_PRETRAINED} on the real data; run `python -m crepe_utils winoground --model "
                      f"{TABLE3_ARCHITECTURE} --pretrained {TABLE3_PRETRAINED} --data-dir DIR --out DIR`", GROUP)]
    out = []
    for result_dir, group in rows.groupby("result_dir", sort=True):
        by_metric = group.set_index("metric")
        n = int(by_metric["n_examples"].iloc[0])
        where = f"{result_dir} ({group['precision'].iloc[0]})"
        if n != int(_claim("wg_examples")):
            out.append(Check(claim, "400 examples", f"{n} examples", NEEDS,
                             f"{where}: not the full dataset, so not comparable", GROUP))
            continue
        for metric in METRICS:
            ours, ref = float(by_metric.at[metric, "score"]), float(paper[metric])
            first = float(by_metric.at[metric, "score_first_index"])
            ties = int(by_metric.at[metric, "n_ties"])
            out.append(Check(f"Evaluated CLIP ViT-B/32 {metric} score matches Table 3", f"{ref:.2f}", f"{ours:.2f}",
                             PASS if abs(ours - ref) <= tolerance + 1e-9 else FAIL,
                             f"difference {ours - ref:+.2f} (tolerance {tolerance}); {ties} tied example(s), "
                             f"first-index rule {first:.2f}; {where}", GROUP))
    return out


def data_checks(examples: pd.DataFrame) -> list[Check]:
    """Every check of the released text metadata, plus the chance levels."""
    return (check_example_count(examples) + check_tag_counts(examples) + check_secondary_tags(examples)
            + check_table5_denominators(examples) + check_caption_pairs(examples) + check_chance_levels())
