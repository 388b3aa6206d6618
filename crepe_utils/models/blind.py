"""The blind family: text-only scorers (:mod:`crepe_utils.blind`) as models, ``blind:<scorer>``.

A blind model is evaluated by the same command and path as any model, into the same results format,
and reads no image: instead of the engine, the evaluation asks it for every candidate's score
(``model.score_queries``). Its scores are exact and shared by texts that read the same, so ties are
real ties, counted against it by the scoring rules. Cross-fitted scorers keep the queries of one image
(or of one ``fold_unit``, e.g. the two images of one example) in one fold.
"""
from __future__ import annotations

import time
from importlib.metadata import version

import numpy as np

from .. import blind
from ..errors import ModelError
from .family import Family
from .spec import LoadedModel, ModelSpec

PREFIX = "blind:"


class TextOnly:
    """A loaded blind scorer: scores every candidate of a query list from its text alone."""

    def __init__(self, scorer: blind.BlindScorer, settings: blind.BlindSettings = blind.BlindSettings()):
        self.scorer, self.settings = scorer, settings

    def score_texts(self, queries) -> tuple[np.ndarray, dict]:
        """Every candidate's score (flat, in query order) and what the scorer did."""
        t0 = time.perf_counter()
        texts = [blind.TextQuery(str(getattr(q, "fold_unit", q.image_id)), tuple(q.candidates)) for q in queries]
        scores = blind.score(self.scorer.name, texts, self.settings)
        stats = {"scorer": self.scorer.name, "view": self.scorer.view.name,
                 "cross_fitted_folds": self.settings.folds if self.scorer.trained else None,
                 "seconds_total": round(time.perf_counter() - t0, 3)}
        return scores, stats


def resolve(model: str, pretrained=None, model_config=None) -> ModelSpec:
    name = model.removeprefix(PREFIX)
    if name not in blind.SCORERS:
        raise ModelError(f"no blind scorer {name!r}; choose one of {', '.join(PREFIX + s for s in blind.SCORERS)}")
    if pretrained or model_config:
        raise ModelError(f"{model} is a text-only scorer: it takes no --pretrained or --model-config")
    row = blind.SCORERS[name]
    return ModelSpec(key=model, architecture="blind", pretrained=None, quick_gelu=False, weights_quick_gelu=None,
                     display=f"blind: {name}", train_data="none", family="blind",
                     libraries={"crepe_utils": version("crepe_utils"), "wordfreq": version("wordfreq")},
                     caveat=f"text only, never sees the image: {row.description}")


def load(spec: ModelSpec, device="auto", cache_dir=None) -> LoadedModel:
    import torch                           # only for the device record the settings resolve against
    return LoadedModel(TextOnly(blind.SCORERS[spec.key.removeprefix(PREFIX)]), None, None, spec, torch.device("cpu"))


FAMILY = Family("blind", loader="crepe_utils.blind (text only)", resolve=resolve, load=load, prefix=PREFIX)
