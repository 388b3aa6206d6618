"""Checks of the Winoground paper's claims against its released data and against our evaluations.

Each function returns :class:`crepe_utils.claims.base.Check` rows (claim, paper, ours, status) with the
statuses of :mod:`crepe_utils.claims.base`. The data checks take the examples as a DataFrame with
Winoground's fields (``examples_text.tsv`` or the real ``examples.jsonl``); claim values come from
``reported/claims.csv`` and Table 3 from ``reported/table3.csv``.

Same words, different order [§3.1]: captions are compared as multisets of words after
lower-casing and stripping punctuation from the ends of each word (so ``"organism,"`` equals
``"organism"``). The paper allows "the same words *or morphemes*": a pair whose words differ but
whose letters are the same (``"fly fishing"`` / ``"fish flying"``) is reported, by id and with the
differing words, as a morpheme-level swap, consistent with the claim; a pair that differs even
in its letters would contradict it.

Every count of the metadata is first compared with the count pinned for the released data
(``reported/released_counts.csv``, dataset "winoground"): a difference is ``fail`` (our counting,
or metadata that are not the release; :func:`metadata_digest` tells which). Only a count that
agrees with the pin is compared with the paper, where a difference is ``paper inconsistency``.
"""
from __future__ import annotations

import hashlib
import math
import string
from collections import Counter

from ...claims.base import FAIL, NEEDS, PAPER, PASS, Check, Topic
from . import reported
from .datasets import WINOGROUND_FILES
from .metadata import load_examples
from .results import load_results
from .scoring import METRICS, chance_levels
from .statistics import split_tags
from ...lazy import lazy

pd = lazy("pandas")

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
    return reported.claim(claim_id)


def _source(claim_id: str) -> str:
    return reported.claim_source(claim_id)


def metadata_digest(examples: pd.DataFrame) -> str:
    """sha256 of the fields the counts depend on: id, captions, collapsed and secondary tag.

    One tab-separated line per example in id order, values as read; the pinned digest
    identifies the copy the pinned counts were taken from.
    """
    rows = examples.sort_values("id")[["id", "caption_0", "caption_1", "collapsed_tag", "secondary_tag"]]
    text = "".join(f"{int(i)}\t{c0}\t{c1}\t{tag}\t{'' if pd.isna(sec) else sec}\n"
                   for i, c0, c1, tag, sec in rows.itertuples(index=False))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Pins:
    """The pinned counts of the released metadata, and how ``examples`` relate to them."""

    def __init__(self, examples: pd.DataFrame, pinned: dict | None = None):
        self.values = pinned if pinned is not None else reported.released_counts()
        self.same_copy = metadata_digest(examples) == self.values.get("metadata_sha256")

    def differs(self, quantity: str, ours: int) -> str:
        """"" when ``ours`` equals the pinned count, else the failure's explanation."""
        pinned = self.values[quantity]
        if ours == pinned:
            return ""
        why = ("the metadata are the pinned copy (same digest): our count is wrong" if self.same_copy else
               "the metadata differ from the pinned copy (digest): not the released data, or our count is wrong")
        return f"our count {ours} differs from the pinned count {pinned} of the released metadata; {why}"


# ------------------------------------------------------------------------------ counts

def check_example_count(examples: pd.DataFrame, pinned: dict | None = None) -> list[Check]:
    """400 examples with distinct ids [§3.1]."""
    pins = _Pins(examples, pinned)
    paper = int(_claim("wg_examples"))
    n, distinct = len(examples), examples["id"].nunique()
    wrong = "; ".join(filter(None, [pins.differs("examples", n), pins.differs("distinct_ids", distinct)]))
    ok = pins.values["examples"] == paper == pins.values["distinct_ids"]
    return [Check("Winoground has 400 examples", str(paper), f"{n} rows, {distinct} distinct ids",
                  FAIL if wrong else PASS if ok else PAPER, wrong or _source("wg_examples"), GROUP)]


def check_tag_counts(examples: pd.DataFrame, pinned: dict | None = None) -> list[Check]:
    """Table 1: 141 Object, 233 Relation, 26 Both (``collapsed_tag``)."""
    pins = _Pins(examples, pinned)
    counts = examples["collapsed_tag"].value_counts()
    out = []
    for tag, claim_id in TAG_CLAIMS.items():
        paper, ours = int(_claim(claim_id)), int(counts.get(tag, 0))
        wrong = pins.differs(f"tag:{tag}", ours)
        out.append(Check(f"Examples tagged {tag} (Table 1)", str(paper), str(ours),
                         FAIL if wrong else PASS if pins.values[f"tag:{tag}"] == paper else PAPER,
                         wrong or f"collapsed_tag; {_source(claim_id)}", GROUP))
    return out


def secondary_tag_counts(examples: pd.DataFrame) -> pd.DataFrame:
    """Per secondary tag: examples carrying it (comma-split) and examples whose field is exactly it."""
    field = examples["secondary_tag"].fillna("").astype(str).str.strip()
    split = Counter(t for value in field for t in split_tags(value))
    exact = Counter(field)
    tags = sorted(split, key=lambda t: (-split[t], t))
    return pd.DataFrame({"tag": tags, "comma_split": [split[t] for t in tags],
                         "exact": [exact.get(t, 0) for t in tags]})


def check_secondary_tags(examples: pd.DataFrame, pinned: dict | None = None) -> list[Check]:
    """Table 1: Symbolic 41, Series 31, Pragmatics 24, counting an example once per tag it carries."""
    pins = _Pins(examples, pinned)
    counts = secondary_tag_counts(examples).set_index("tag")
    out = []
    for tag, claim_id in SECONDARY_CLAIMS.items():
        paper = int(_claim(claim_id))
        split = int(counts["comma_split"].get(tag, 0))
        exact = int(counts["exact"].get(tag, 0))
        wrong = "; ".join(filter(None, [pins.differs(f"secondary:{tag}", split),
                                        pins.differs(f"secondary_exact:{tag}", exact)]))
        out.append(Check(f"Examples with secondary tag {tag} (Table 1)", str(paper), str(split),
                         FAIL if wrong else PASS if pins.values[f"secondary:{tag}"] == paper else PAPER,
                         wrong or f"comma-split membership ('Symbolic, Series' counts for both); exact match gives "
                         f"{exact}. {_source(claim_id)}", GROUP))
    return out


def _denominators(percent: float, limit: int) -> list[int]:
    """The n ≤ limit for which some k/n rounds to ``percent`` (two decimals)."""
    return [n for n in range(1, limit + 1)
            if any(math.isclose(round(100 * k / n, 2), percent, abs_tol=1e-9) for k in range(n + 1))]


def check_table5_denominators(examples: pd.DataFrame, pinned: dict | None = None) -> list[Check]:
    """Table 5's human scores per secondary tag imply exact-match subset sizes, not Table 1's counts.

    The subset sizes are ours, counted; they must equal the pinned ones before the paper's
    denominators are judged.
    """
    pins = _Pins(examples, pinned)
    counts = secondary_tag_counts(examples).set_index("tag")
    out = []
    for tag, claim_id in TABLE5_HUMAN_CLAIMS.items():
        value = _claim(claim_id)
        split = int(counts["comma_split"].get(tag, 0))
        exact = int(counts["exact"].get(tag, 0))
        wrong = "; ".join(filter(None, [pins.differs(f"secondary:{tag}", split),
                                        pins.differs(f"secondary_exact:{tag}", exact)]))
        possible = set(_denominators(value, max(split, exact)))
        k = round(value * exact / 100)
        if exact in possible and split not in possible:
            detail = (f"{value:.2f} = {k}/{exact}, the exact-match count (the dataset's compute_statistics.py filters "
                      f"by equality); no k/{split} (Table 1's comma-split count) gives {value:.2f}")
        elif split in possible:
            detail = f"{value:.2f} is k/{split}: consistent with Table 1's count"
        else:
            detail = f"{value:.2f} is neither k/{exact} (exact match) nor k/{split} (comma-split): unexplained"
        status = FAIL if wrong else PASS if split in possible else PAPER
        out.append(Check(f"Table 5 human score on {tag} uses Table 1's {int(_claim(SECONDARY_CLAIMS[tag]))} examples",
                         f"{value:.2f} ({_source(claim_id)})", f"denominator {exact if exact in possible else '?'}",
                         status, wrong or detail, GROUP))
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


def check_caption_pairs(examples: pd.DataFrame, pinned: dict | None = None) -> list[Check]:
    """§3.1: the two captions use the same words (or morphemes) in a different order.

    One summary row (the morpheme-level swaps listed in its detail), then one row per pair that is
    neither the same words nor a rearrangement of the same letters: a ``paper inconsistency`` only
    if the pinned release holds such pairs, else ``fail`` (the pairs are our finding, not the release's).
    """
    pins = _Pins(examples, pinned)
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
    wrong = "; ".join(filter(None, [pins.differs("pairs_differing_words", len(exc)),
                                    pins.differs("pairs_same_letters", int(exc["same_letters"].sum()))]))
    release_has_neither = pins.values["pairs_differing_words"] > pins.values["pairs_same_letters"]
    out = [Check("The two captions use the same words or morphemes in a different order (§3.1)",
                 f"all {n}", f"{n - len(exc)} same words; {len(exc) - len(bad)} morpheme-level; {len(bad)} neither",
                 FAIL if wrong else PASS if bad.empty else PAPER, (wrong + ". " if wrong else "") + detail, GROUP)]
    for row in exc.itertuples(index=False):
        if not row.same_order and row.same_letters:
            continue
        ours = "identical word order" if row.same_order else f"'{row.only_in_caption_0}' vs '{row.only_in_caption_1}'"
        status = PAPER if release_has_neither else FAIL
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

    ``results`` is :func:`crepe_utils.benchmarks.winoground.results.load_results`'s table. Only ``kind ==
    "evaluated"`` results on all 400 examples are compared; "needs data" when there are none.
    ``tolerance`` is in points (0.5 = two examples).
    """
    table3 = table3 if table3 is not None else reported.table3()
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
    several = rows["result_dir"].nunique() > 1
    for result_dir, group in rows.groupby("result_dir", sort=True):
        suffix = f" ({result_dir})" if several else ""
        by_metric = group.set_index("metric")
        n = int(by_metric["n_examples"].iloc[0])
        where = f"{result_dir} ({group['precision'].iloc[0]})"
        if n != int(_claim("wg_examples")):
            out.append(Check(claim + suffix, "400 examples", f"{n} examples", NEEDS,
                             f"{where}: not the full dataset, so not comparable", GROUP))
            continue
        for metric in METRICS:
            ours, ref = float(by_metric.at[metric, "score"]), float(paper[metric])
            first = float(by_metric.at[metric, "score_first_index"])
            ties = int(by_metric.at[metric, "n_ties"])
            out.append(Check(f"Evaluated CLIP ViT-B/32 {metric} score matches Table 3{suffix}", f"{ref:.2f}", f"{ours:.2f}",
                             PASS if abs(ours - ref) <= tolerance + 1e-9 else FAIL,
                             f"difference {ours - ref:+.2f} (tolerance {tolerance}); {ties} tied example(s), "
                             f"first-index rule {first:.2f}; {where}", GROUP))
    return out


def data_checks(examples: pd.DataFrame, pinned: dict | None = None) -> list[Check]:
    """Every check of the released text metadata (against ``pinned``, default the pinned release), plus the
    chance levels."""
    return (check_example_count(examples, pinned) + check_tag_counts(examples, pinned)
            + check_secondary_tags(examples, pinned) + check_table5_denominators(examples, pinned)
            + check_caption_pairs(examples, pinned) + check_chance_levels())


# ------------------------------------------------------------------ the topic (notebook 05, make check)

def winoground_sections(results=None, data_dir=None) -> dict[str, list[Check]]:
    """``data``: the checks of the text metadata (the local dataset, ``$WINOGROUND_DATA`` by default),
    or one "needs data" row without it; ``table3``: evaluated CLIP ViT-B/32 against Table 3."""
    examples, _ = load_examples(WINOGROUND_FILES.dir(data_dir))
    if examples is None:
        data = [Check("Winoground metadata checks", "—", "—", NEEDS, "no Winoground data (make data-winoground)",
                      "winoground")]
    else:
        data = data_checks(examples)
    scores = results if isinstance(results, pd.DataFrame) else load_results(results)
    return {"data": data, "table3": check_table3(scores)}


def winoground_checks(results=None, data_dir=None) -> list[Check]:
    """Notebook 05's checks: Winoground's text-metadata checks and Table 3."""
    return [row for rows in winoground_sections(results, data_dir).values() for row in rows]


TOPICS = {"winoground": Topic(winoground_checks, "05_winoground")}
ORDER = (("winoground", "data"), ("winoground", "table3"))


def sections(results_dir=None, data_dirs=None) -> dict[tuple[str, str], list[Check]]:
    """Winoground's sections for ``make check``: (topic, section) → rows."""
    parts = winoground_sections(results_dir, (data_dirs or {}).get("winoground"))
    return {("winoground", name): rows for name, rows in parts.items()}
