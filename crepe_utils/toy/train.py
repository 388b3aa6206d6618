"""Train a tiny CLIP on the toy world's training split, on a CPU, reproducibly.

The model is an ordinary open_clip ``CLIP`` described by a model-config JSON (registered with
``open_clip.add_model_config``): a ViT of 2 layers, width 32, 8-pixel patches on the 64-pixel
images, mean-pooled patch tokens and fixed 2-D sin-cos positions, and a text transformer of 2 layers, width 64, with the stock tokenizer vocabulary
(49,408 words) and a 32-token context (the default world's longest text, a negated 12-atom caption,
fits with start and end; training refuses a world whose texts do not fit).
Training minimises open_clip's contrastive loss (``open_clip.ClipLoss``) on in-batch pairs with
AdamW, a linear warm-up and a cosine decay (by default 1,500 steps of 64 pairs). Images get no
augmentation (a flip would swap "left of" and "right of").

``train(world, out, config)`` writes, atomically::

    out/<model_name>.json     the model config (load with crepe_utils.models.load_model)
    out/<model_name>.pt       the checkpoint ({"state_dict": ...}, crepe_utils.models.save_checkpoint)
    out/train_log.csv         step, loss, learning rate, logit scale

Reproducibility: the seed fixes initialisation and batch order; the thread count is part of the
config; the whole run, initialisation and optimiser included, is inside
:func:`crepe_utils.toy.numerics.pinned` (that thread count, deterministic algorithms, oneDNN off,
every matrix product exact and MKL's vector-math functions portable: :mod:`crepe_utils.engine.portable`). The
same config gives the same weights on every x86-64 machine with AVX2 when the process was pinned
before torch was imported (:func:`crepe_utils.toy.numerics.pin_environment`, which the toy
pipeline does).

``in_batch_accuracy`` is the sanity check: image-to-caption accuracy among ``k`` candidates from
unseen validation scenes whose captions use seen compounds only (chance 1/k).
"""
from __future__ import annotations

import ast
import csv
import io
import json
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..progress import tqdm

from ..atomic import write_json, write_text
from ..engine.images import open_rgb
from ..errors import DataError
from .numerics import pinned


class TrainError(DataError):
    """A training run that cannot start as configured."""


@dataclass(frozen=True)
class TrainConfig:
    seed: int = 0
    steps: int = 1500
    batch_size: int = 64
    learning_rate: float = 2e-3
    weight_decay: float = 0.1
    warmup_steps: int = 50
    threads: int = 2
    model_name: str = "crepe-toy-vit"
    embed_dim: int = 64
    vision_width: int = 32
    vision_layers: int = 2
    patch_size: int = 8
    vision_pool: str = "avg"                 #: mean of the patch tokens (learns faster here than "tok")
    vision_pos_embed: str = "sin_cos_2d"     #: fixed 2-D positions
    text_width: int = 64
    text_layers: int = 2
    context_length: int = 32
    #: The token embedding stays at its random initialisation: the world's few dozen words need no learnt
    #: vectors, and leaving its 49,408 rows out of the optimiser saves a third of a training step.
    learn_token_embedding: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    def model_config(self, image_size: int) -> dict:
        """The open_clip model config (embed_dim, vision_cfg, text_cfg)."""
        return {
            "embed_dim": self.embed_dim,
            "vision_cfg": {"image_size": image_size, "layers": self.vision_layers, "width": self.vision_width,
                           "head_width": 32, "patch_size": self.patch_size, "pool_type": self.vision_pool,
                           "pos_embed_type": self.vision_pos_embed},
            "text_cfg": {"context_length": self.context_length, "vocab_size": 49408, "width": self.text_width,
                         "heads": max(1, self.text_width // 32), "layers": self.text_layers},
        }


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """(image_id, caption) rows of a training-split CSV."""
    if not path.is_file():
        raise TrainError(f"{path} not found: build the world first (crepe_utils.toy.build.build_world)")
    with open(path, newline="", encoding="utf-8") as fh:
        return [(row["image_id"], row["caption"]) for row in csv.DictReader(fh)]


def encode_split(pairs, image_dir: Path, preprocess, tokenizer):
    """(images [n_images, 3, H, W], image index per pair, tokens [n_pairs, context])."""
    import torch
    ids = sorted({i for i, _ in pairs}, key=int)
    position = {i: k for k, i in enumerate(ids)}
    images = torch.stack([preprocess(open_rgb(image_dir / f"{i}.jpg")) for i in ids])
    index = torch.tensor([position[i] for i, _ in pairs])
    return images, index, tokenizer([c for _, c in pairs])


def _max_tokens(world: Path) -> tuple[int, str]:
    """The longest text of the world in CLIP tokens (with start and end), and that text."""
    from ..benchmarks.crepe.validation import token_ids
    texts = set()
    for path in world.rglob("*.csv"):
        with open(path, newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                texts.add(row["caption"])
                for column, value in row.items():
                    if column in ("hard_negs", "valid_hard_negs_combined"):
                        texts.update(ast.literal_eval(value))
    return max((len(token_ids(t)) + 2, t) for t in texts)


def _sin_cos_positions(visual) -> None:
    """Replace open_clip's 2-D sin-cos position table (computed by numpy, whose float64 sin and cos
    take other code paths on other CPUs) with the same formula computed with the pinned numerics
    (portable sin and cos)."""
    import torch
    grid = visual.grid_size[0]
    width = visual.positional_embedding.shape[-1]
    omega = 1.0 / 10000 ** (torch.arange(width // 4, dtype=torch.float64) / (width // 4))
    ys, xs = torch.meshgrid(torch.arange(grid, dtype=torch.float64), torch.arange(grid, dtype=torch.float64),
                            indexing="ij")
    parts = [f(pos.reshape(-1, 1) * omega) for pos in (xs, ys) for f in (torch.sin, torch.cos)]
    table = torch.cat([torch.zeros(1, width, dtype=torch.float64), torch.cat(parts, dim=1)])
    with torch.no_grad():
        visual.positional_embedding.copy_(table.float())


def _lr(step: int, config: TrainConfig) -> float:
    if step < config.warmup_steps:
        return config.learning_rate * (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(1, config.steps - config.warmup_steps)
    return config.learning_rate * 0.5 * (1 + math.cos(math.pi * progress))


def in_batch_accuracy(model, images, index, tokens, k: int) -> float:
    """Image-to-caption accuracy among ``k`` consecutive pairs (groups of k; chance 1/k)."""
    import torch
    n = (len(index) // k) * k
    if n == 0:
        raise TrainError(f"fewer than {k} validation pairs")
    with torch.no_grad():
        img = model.encode_image(images[index[:n]], normalize=True)
        txt = model.encode_text(tokens[:n], normalize=True)
        scores = torch.einsum("gid,gtd->git", img.reshape(-1, k, img.shape[-1]), txt.reshape(-1, k, txt.shape[-1]))
        correct = scores.argmax(-1) == torch.arange(k)
    return float(correct.float().mean())


def train(world: str | os.PathLike, out: str | os.PathLike, config: TrainConfig,
          progress: bool = True, eval_k: int = 4) -> dict:
    """Train on ``world``'s training split; write the model to ``out``; return a summary dict."""
    import open_clip
    import torch

    from ..models import save_checkpoint

    world, out = Path(world), Path(out)
    description_path = world / "world.json"
    if not description_path.is_file():
        raise TrainError(f"{description_path} not found: {world} is not a toy world")
    image_size = json.loads(description_path.read_text(encoding="utf-8"))["image_size"]
    longest, text = _max_tokens(world)
    if longest > config.context_length:
        raise TrainError(f"the world has a {longest}-token text ({text!r}) but the context length is "
                         f"{config.context_length}: raise context_length")
    cfg_path = write_json(out / f"{config.model_name}.json", config.model_config(image_size))

    with pinned(config.threads):
        open_clip.add_model_config(cfg_path)
        torch.manual_seed(config.seed)
        model, _, preprocess = open_clip.create_model_and_transforms(config.model_name, pretrained=None)
        if config.vision_pos_embed == "sin_cos_2d":
            _sin_cos_positions(model.visual)
        tokenizer = open_clip.get_tokenizer(config.model_name)
        images, index, tokens = encode_split(read_pairs(world / "training" / "train.csv"),
                                              world / "training" / "images", preprocess, tokenizer)
        val = encode_split(read_pairs(world / "training" / "val.csv"), world / "training" / "images",
                            preprocess, tokenizer)
        start = time.perf_counter()
        log = _fit(model, images, index, tokens, config, progress)
        seconds = time.perf_counter() - start
        model.eval()
        accuracy = in_batch_accuracy(model, *val, k=eval_k)

    checkpoint = save_checkpoint(model, out / f"{config.model_name}.pt")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["step", "loss", "learning_rate", "logit_scale"])
    writer.writerows(log)
    write_text(out / "train_log.csv", buf.getvalue())
    return {"model_name": config.model_name, "model_config": str(cfg_path), "checkpoint": str(checkpoint),
            "train_pairs": int(len(index)), "train_images": int(len(images)), "seconds": round(seconds, 1),
            "final_loss": float(log[-1][1]) if log else None, "val_accuracy": accuracy, "val_k": eval_k,
            "val_chance": 1 / eval_k, "longest_text_tokens": longest}


def _fit(model, images, index, tokens, config: TrainConfig, progress: bool) -> list[list]:
    """The training loop; returns the log rows [step, loss, learning rate, logit scale]."""
    import open_clip
    import torch

    generator = torch.Generator().manual_seed(config.seed)
    model.token_embedding.requires_grad_(config.learn_token_embedding)
    learnt = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    decay = [p for n, p in learnt if p.ndim >= 2 and "embedding" not in n]
    no_decay = [p for n, p in learnt if p.ndim < 2 or "embedding" in n]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=config.learning_rate, betas=(0.9, 0.98), eps=1e-6)
    loss_fn = open_clip.ClipLoss()
    model.train()
    order = torch.randperm(len(index), generator=generator)
    cursor = 0
    log = []
    bar = tqdm(range(config.steps), desc="toy model: training", disable=not progress)
    for step in bar:
        if cursor + config.batch_size > len(order):
            order, cursor = torch.randperm(len(index), generator=generator), 0
        batch = order[cursor:cursor + config.batch_size]
        cursor += config.batch_size
        lr = _lr(step, config)
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.zero_grad(set_to_none=True)
        image_features, text_features, logit_scale = model(images[index[batch]], tokens[batch])[:3]
        loss = loss_fn(image_features, text_features, logit_scale)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            model.logit_scale.clamp_(0, math.log(100))
        log.append([step + 1, f"{loss.item():.6f}", f"{lr:.6g}", f"{model.logit_scale.exp().item():.4f}"])
        bar.set_postfix(loss=f"{loss.item():.3f}")
    return log
