"""BERT WordPiece tokenization (``bert-base-uncased``) with the engine's tokenizer protocol.

ALBEF's and FLAVA's official scripts tokenize with ``BertTokenizer.from_pretrained("bert-base-uncased")``
and ``truncation=True``: over-long texts are cut and still end with ``[SEP]`` (our ``keep_eot``),
and padding is ``[PAD]`` = 0 (the engine pads with 0). The vocabulary is one file, ``vocab.txt``:
a placed copy (``<models dir>/bert-base-uncased/vocab.txt``), else the Hugging Face cache or hub.
"""
from __future__ import annotations

import os
from pathlib import Path

from .. import paths
from ..errors import ModelError
from .spec import require

VOCAB_NAME = "bert-base-uncased"


def vocab_file(name: str = VOCAB_NAME) -> Path:
    """``vocab.txt`` of ``name``: placed under the models folder, else from the Hugging Face cache or hub."""
    placed = paths.models_dir() / name / "vocab.txt"
    if placed.is_file():
        return placed
    hub = require("huggingface_hub", "hf", "the BERT vocabulary download")
    try:
        return Path(hub.hf_hub_download(name, "vocab.txt"))
    except Exception as exc:  # noqa: BLE001 - offline, unknown repo, broken cache: one message
        raise ModelError(f"the {name} vocabulary (vocab.txt) is neither at {placed} nor reachable on the Hugging "
                         f"Face hub ({type(exc).__name__}). Download https://huggingface.co/{name}/resolve/main/"
                         f"vocab.txt once and place it at {placed} (CREPE_MODELS sets the folder).") from None


class BertTokenizer:
    """Lower-cased WordPiece; ``[CLS] … [SEP]``, padded with ``[PAD]`` (0) to ``context_length``."""

    def __init__(self, vocab: str | os.PathLike, context_length: int, extra: str = "albef"):
        transformers = require("transformers", extra, "BERT tokenization")
        if not Path(vocab).is_file():
            raise ModelError(f"BERT vocabulary {vocab} is not a file")
        self.vocab = str(vocab)
        self._tok = transformers.BertTokenizer(vocab=self.vocab, do_lower_case=True)
        self.context_length = int(context_length)
        self.sot_token_id = self._tok.cls_token_id
        self.eot_token_id = self._tok.sep_token_id
        if self._tok.pad_token_id != 0 or None in (self.sot_token_id, self.eot_token_id):
            raise ModelError(f"BERT vocabulary {vocab} lacks [CLS]/[SEP], or [PAD] is not its first entry "
                             "(the engine pads with id 0); expected bert-base-uncased's vocab.txt")

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False))

    def __call__(self, texts):
        import torch
        if isinstance(texts, str):
            texts = [texts]
        out = torch.zeros(len(texts), self.context_length, dtype=torch.long)
        for i, text in enumerate(texts):
            ids = [self.sot_token_id] + self.encode(text)[:self.context_length - 2] + [self.eot_token_id]
            out[i, :len(ids)] = torch.tensor(ids)
        return out


def cls_features(text_model, ids):
    """The CLS hidden state of a BERT-style text encoder, padding (id 0) masked out."""
    return text_model(input_ids=ids, attention_mask=(ids != 0).long()).last_hidden_state[:, 0]
