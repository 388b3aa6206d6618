"""What a model family supplies, so that the engine treats every family alike.

A family turns the user's words into a :class:`~crepe_utils.models.spec.ModelSpec` (``resolve``:
nothing loaded, nothing downloaded) and a spec into a :class:`~crepe_utils.models.spec.LoadedModel`
(``load``). The loaded model carries everything the engine uses:

* ``model.encode_image(pixels)`` and ``model.encode_text(token ids)``, unnormalised features;
  ``encode_text`` gets ids right-padded with 0 to the batch width;
* ``model.length_cut_exact`` (optional, bool): whether ``encode_text`` gives the same features
  when a batch is cut to its longest caption instead of ``context_length``. Families with an
  attention mask built from the padding and absolute positions set True; a family whose official
  code attends to its padding sets False. Without the attribute the engine inspects open_clip's
  text tower (``engine.cut_text_forward``);
* ``preprocess``: PIL image → tensor, the family's evaluation transform;
* ``tokenizer``: ``encode(text)`` (ids without special tokens), ``sot_token_id``,
  ``eot_token_id``, ``context_length``, and ``__call__(texts)`` → padded LongTensor;
* ``spec.truncation``: the official script's truncation policy (``engine.TRUNCATIONS``), the
  default of every evaluation of the model; ``spec.libraries``: versions of the code that built it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .spec import LoadedModel, ModelSpec


@dataclass(frozen=True)
class Family:
    name: str                                    #: key of FAMILIES and of Checkpoint.family
    loader: str                                  #: what builds the model, for the checkpoint listing
    resolve: Callable[..., ModelSpec]            #: (model, pretrained, model_config) → spec
    load: Callable[..., LoadedModel]             #: (spec, device, cache_dir) → loaded model
    prefix: str | None = None                    #: a model-name prefix selecting this family outside the table
    extra: str | None = None                     #: the optional dependency group it needs (pip install '.[extra]')
