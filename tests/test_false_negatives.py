"""App. B.2's hypothesis counted in captions (notebook 03's raw-set section): matches against a pairwise loop
written here, the fold law against enumerating every fold, and the sentence's numbers against its table."""
from __future__ import annotations

import itertools
import math

import pytest

from crepe_utils.analysis import prose
from crepe_utils.benchmarks.crepe import false_negatives as F, queries as Q, raw
from crepe_utils.benchmarks.crepe.raw import RawItem

ITEMS = [RawItem("1", (0, 0, 1, 1), ("dog on mat.",)),
         RawItem("2", (0, 0, 1, 1), ("Dog  on mat.", "a dog on mat. there is a red ball.")),
         RawItem("3", (0, 0, 1, 1), ("cat under table.",)),
         RawItem("4", (0, 0, 1, 1), ("the cat under the table. cat has tail.",)),
         RawItem("5", (0, 0, 1, 1), ("mat under dog.",))]


def brute(items):
    stop = {"a", "an", "the", "there", "is"}

    def words(c):
        return {w.strip(".").lower() for w in c.split() if w.strip(".").lower() not in stop}

    caps = [(i, c) for i, it in enumerate(items) for c in it.captions]
    ident = [sum(1 for j, it in enumerate(items) if j != i and any(" ".join(d.lower().split()) == " ".join(c.lower().split())
                                                                  for d in it.captions)) for i, c in caps]
    cont = [sum(1 for j, it in enumerate(items) if j != i and any(words(c) <= words(d) for d in it.captions))
            for i, c in caps]
    return ident, cont


def test_matches_count_other_regions_as_a_pairwise_loop_does():
    ident, cont = brute(ITEMS)
    got = F.matches(ITEMS)
    assert got["identical"] == ident == [1, 1, 0, 0, 0, 0]
    assert got["contained"] == cont == [1, 1, 0, 1, 0, 0]      # "mat under dog" has dog and mat but "under"


@pytest.mark.parametrize("m,others,draws", [(0, 6, 3), (1, 6, 3), (2, 6, 3), (4, 6, 5), (6, 6, 2), (3, 7, 0)])
def test_the_fold_law_is_every_fold_enumerated(m, others, draws):
    folds = list(itertools.combinations(range(others), draws))
    met = [sum(1 for x in fold if x < m) for fold in folds]        # the first m others match
    want = (sum(f > 0 for f in met) / len(folds), sum(met) / len(folds), sum(1 / (1 + f) for f in met) / len(folds))
    assert F.fold_law(m, others, draws) == pytest.approx(want)


def test_the_table_and_its_sentence():
    sets = {4: ITEMS, 5: ITEMS[2:]}
    tab = F.table(sets, fold_size=4)
    row = tab[(tab.complexity == 4) & (tab.kind == "contained")].iloc[0]
    assert (row.n_regions, row.n_captions, row.fold_size, bool(row.whole_set)) == (5, 6, 4, False)
    assert row.share_in_set == pytest.approx(100 * 3 / 6)
    laws = [F.fold_law(m, 4, 3) for m in (1, 1, 0, 1, 0, 0)]
    assert row.share_in_fold == pytest.approx(100 * sum(p for p, _, _ in laws) / 6)
    assert row.ceiling_r1 == pytest.approx(100 * sum(c for _, _, c in laws) / 6)
    assert bool(tab[tab.complexity == 5].whole_set.iloc[0])                   # 3 regions < a fold of 4
    text = F.sentence(tab)
    d = tab[tab.kind == "contained"].set_index("complexity")
    assert f"{prose.num(d.loc[4, 'share_in_fold'], 1)}% at n = 4" in text
    assert f"{prose.num(d.loc[5, 'share_in_fold'], 1)}% at n = 5" in text
    assert "At n = 5 the set has fewer regions than a fold" in text
    delta = d.loc[5, "share_in_fold"] - d.loc[4, "share_in_fold"]
    assert ("falls" in text) == (delta <= -1) and ("stays within 1 point" in text) == (abs(delta) < 1)


def test_content_words_keep_relations_and_drop_articles():
    assert F.content_words("The dog is on a mat. There is a ball.") == {"dog", "on", "mat", "ball"}


@pytest.mark.shared
def test_the_released_captions(shared_crepe):
    """Measured on the released positives: textual false negatives are rare and fewer at n = 12 than at n = 4."""
    tab = F.table(raw.raw_sets(Q.load_productivity(shared_crepe)))
    d = tab[tab.kind == "contained"].set_index("complexity")
    assert round(d.loc[4, "share_in_set"], 2) == 2.42 and round(d.loc[12, "share_in_set"], 2) == 0.30
    assert bool(d.loc[4, "whole_set"]) and not d.loc[5:, "whole_set"].any()
    assert (tab.ceiling_r1 > 98).all()
