"""A text-only classifier: L2-regularised logistic regression on word unigrams and bigrams.

Features of a word sequence: the presence (0/1) of each word and of each pair of neighbouring
words, with the sentence start and end as words (so "starts with X" and "ends with Y" are
features), among those that at least ``settings.min_texts`` training texts have. Trained on the
distinct (text, label) pairs of the training queries' candidates, label 1 for positives and 0 for
negatives, by minimising

    Σᵢ log(1 + exp(−yᵢ (xᵢ · w + b)))  +  l2 / 2 · ‖w‖²       (yᵢ = ±1; the bias b is not penalised)

with L-BFGS (``scipy.optimize``) from zero, until an iteration lowers the objective by less than
``settings.tolerance`` of its value. L-BFGS runs on rescaled columns, feature j divided by
``sqrt(¼ · (training texts with j) + l2)`` (a diagonal preconditioner: the same optimum, reached in
fewer iterations). The score of a text is its logit ``x · w + b``; features left out have weight 0.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..lazy import lazy
from .folds import labelled
from .settings import BlindSettings
from .text import Corpus

scipy = lazy("scipy")          # its optimize, sparse and special load on first use (scipy's own lazy submodules)


@dataclass(frozen=True)
class Logistic:
    weights: np.ndarray
    bias: float


def _objective(v: np.ndarray, x: scipy.sparse.csr_matrix, x_t: scipy.sparse.csr_matrix, y: np.ndarray,
               penalty: np.ndarray) -> tuple[float, np.ndarray]:
    margin = y * (x @ v)
    loss = np.logaddexp(0.0, -margin).sum() + 0.5 * (penalty * v) @ v
    d_logit = -y * scipy.special.expit(-margin)
    return loss, x_t @ d_logit + penalty * v


def fit(corpus: Corpus, training: np.ndarray, settings: BlindSettings) -> Logistic:
    sequences, labels = labelled(corpus, training)
    weights = np.zeros(corpus.ngram_presence.shape[1])
    if len(sequences) == 0:
        return Logistic(weights, 0.0)
    x = corpus.ngram_presence[sequences]
    used = np.flatnonzero(np.asarray(x.sum(axis=0)).ravel() >= settings.min_texts)
    # the bias is a last column of ones, unpenalised
    x = scipy.sparse.hstack([x[:, used], np.ones((len(sequences), 1))], format="csr")
    y = np.where(labels == 1, 1.0, -1.0)
    l2 = np.r_[np.full(len(used), settings.l2), 0.0]
    scale = 1.0 / np.sqrt(0.25 * np.asarray(x.sum(axis=0)).ravel() + l2)
    x_scaled = x @ scipy.sparse.diags(scale, format="csr")
    result = scipy.optimize.minimize(_objective, np.zeros(len(used) + 1), jac=True, method="L-BFGS-B",
                                     args=(x_scaled, x_scaled.T.tocsr(), y, l2 * scale * scale),
                                     options={"maxiter": settings.max_iter, "ftol": settings.tolerance, "gtol": 0.0})
    if result.nit >= settings.max_iter:
        warnings.warn(f"blind classifier: L-BFGS stopped at max_iter={settings.max_iter} before the tolerance "
                      f"{settings.tolerance} held ({len(sequences)} training texts)", RuntimeWarning, stacklevel=2)
    solution = result.x * scale
    weights[used] = solution[:-1]
    return Logistic(weights, float(solution[-1]))


def logit(model: Logistic, corpus: Corpus, sequences: np.ndarray) -> np.ndarray:
    return corpus.ngram_presence[sequences] @ model.weights + model.bias
