"""What a model gets without looking: text-only ("blind") scorers of retrieval candidates.

A Recall@1 says something about vision-language compositionality only beside what a scorer that
never sees the image gets on the same candidates. Each scorer here gives every candidate of a
query a score from its text alone (:mod:`.scorers` is the table; ``score(name, queries)``):

``negation``, ``length``            fixed rules: −(words "no"/"not"), −(words)
``wordfreq``                        an external English word-frequency prior (the wordfreq package)
``bigram``                          a Kneser–Ney bigram model of other images' true captions
``bigram-mean``                     the same per predicted word (length-normalised)
``classifier``                      logistic regression separating other images' positives from
                                    their negatives
``…-cased``                         the same on the text as written (the default view lower-cases,
                                    as CLIP's tokenizers do), to measure a casing artefact

The two trained kinds are cross-fitted by image (:mod:`.folds`). Modules: ``text`` (views and the
corpus every scorer reads), ``rules``, ``bigram``, ``classifier``, ``folds``, ``settings``,
``scorers``. Pure numpy/scipy; no torch. A benchmark whose rule is not retrieval keeps its blind scores in
its own folder.
"""
from .scorers import SCORERS, BlindScorer, score, scorer
from .settings import BlindSettings
from .text import CASED, UNCASED, Corpus, TextQuery, View, read_corpus

__all__ = ["SCORERS", "BlindScorer", "BlindSettings", "CASED", "UNCASED", "Corpus", "TextQuery", "View",
           "read_corpus", "score", "scorer"]
