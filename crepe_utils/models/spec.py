"""What a load records (:class:`ModelSpec`) and what it returns (:class:`LoadedModel`).

Shared by every model family; imports no torch at module level.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import CrepeWarning, ModelError
from .. import paths
from ..errors import DeviceError
from importlib.metadata import PackageNotFoundError, version
import importlib
from . import checkpoints


class QuickGELUMismatch(ModelError):
    """The weights were trained with one activation and the architecture uses the other."""


@dataclass(frozen=True)
class ModelSpec:
    """What was (or will be) loaded; stored in every results manifest."""

    key: str                          #: checkpoint key, or "<architecture>/<tag or file name>"
    architecture: str
    pretrained: str | None            #: tag, URL or local path
    quick_gelu: bool                  #: activation of the built model
    weights_quick_gelu: bool | None   #: activation the weights were trained with (None: unknown)
    display: str = ""
    train_data: str = "other"
    checkpoint_path: str | None = None
    checkpoint_sha256: str | None = None
    model_config: dict | None = None  #: custom architecture config, when one was given
    preprocess: dict = field(default_factory=dict)
    context_length: int = 77
    family: str = "open_clip"         #: key of crepe_utils.models.FAMILIES
    truncation: str = "keep_eot"      #: the family's official truncation policy (engine.TRUNCATIONS)
    libraries: dict = field(default_factory=dict)   #: package → version of the code that built the model
    caveat: str = ""                  #: what a reader of this model's results must know (the checkpoint table)

    def to_dict(self) -> dict:
        return asdict(self)

    def replace(self, **changes) -> "ModelSpec":
        return ModelSpec(**{**self.to_dict(), **changes})


@dataclass
class LoadedModel:
    model: Any                        #: has encode_image(pixels) and encode_text(token ids); eval mode, fp32
    preprocess: Callable              #: PIL image → tensor (validation transform)
    tokenizer: Callable               #: encode / sot_token_id / eot_token_id / context_length (engine.tokenize)
    spec: ModelSpec
    device: Any


def check_device(device: str | None = "auto") -> str:
    """``device`` if it names a device this machine has (``auto``: cuda when available, else cpu), as a
    string; a :class:`~crepe_utils.errors.DeviceError` saying what would work otherwise."""
    import torch
    if device in (None, "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    works = f"cpu, cuda, cuda:0 … cuda:{n - 1} or auto" if n else "cpu or auto (no CUDA device is visible)"
    try:
        dev = torch.device(str(device).strip())
    except (RuntimeError, TypeError, ValueError):
        raise DeviceError(f"unknown device {device!r}: use {works}") from None
    if dev.type == "cuda":
        if not n:
            raise DeviceError(f"device {device!r}: no CUDA device is visible here (torch.cuda.is_available() is "
                              f"False; CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r}); use cpu")
        if dev.index is not None and dev.index >= n:
            raise DeviceError(f"device {device!r}: this machine has {n} CUDA device(s); use {works}")
    elif dev.type != "cpu" and not (dev.type == "mps" and torch.backends.mps.is_available()):
        raise DeviceError(f"device {device!r}: only CPU and CUDA devices are supported here; use {works}")
    return str(dev)


def pick_device(device: str = "auto"):
    import torch
    return torch.device(check_device(device))


def library_versions(*packages: str) -> dict:
    """Installed versions of ``packages`` (None for one that is not installed)."""
    out = {}
    for p in packages:
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            out[p] = None
    return out


def check_checkpoint_file(path: str | os.PathLike) -> None:
    """A clear error for a path that is no file, or an empty one."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"checkpoint {path} is not a file")
    if path.stat().st_size == 0:
        raise ModelError(f"checkpoint {path} is empty (0 bytes): an interrupted download or copy? "
                         "Download or copy it again.")


#: What a weights file may hold beside tensors, numbers, strings and containers: objects that rebuild data and
#: run nothing else (numpy's scalars and dtypes: training scripts store an epoch or a loss as numpy numbers, as
#: open_clip's own release files do; the codec their pickles use for bytes). Anything else is refused.
DATA_GLOBALS = ("numpy.core.multiarray.scalar", "numpy._core.multiarray.scalar", "numpy.dtype", "_codecs.encode")
DATA_GLOBAL_PREFIXES = ("numpy.dtypes.",)


def data_globals(path: str | os.PathLike) -> list:
    """The objects (of :data:`DATA_GLOBALS`) that loading ``path`` weights-only needs beyond torch's own list,
    read from the file's content, whatever it is called; a ModelError naming any other object it would build.

    Nothing is trusted by name: a file named like a release file is read the same way (its name abbreviates a
    checksum, which a forged file can match)."""
    import torch
    try:
        needed = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    except Exception:  # noqa: BLE001 - not the zip format: weights-only loading itself refuses what it must
        return []
    other = [g for g in needed if g not in DATA_GLOBALS and not g.startswith(DATA_GLOBAL_PREFIXES)]
    if other:
        raise ModelError(f"checkpoint {path} holds Python objects other than weights and numbers "
                         f"({', '.join(other[:4])}{' ...' if len(other) > 4 else ''}): loading it would run their "
                         "code, which the companion never does, whatever the file is called. Re-save its weights "
                         "as a state dict (torch.save(model.state_dict(), file)) where you trust the file.")
    found = []
    for name in needed:
        module, _, attribute = name.rpartition(".")
        found.append(getattr(importlib.import_module(module), attribute))
    if "numpy.dtype" in needed:       # a dtype rebuilds as its class (numpy.dtypes.Int64DType, ...): data types only
        dtypes = importlib.import_module("numpy.dtypes")
        found += [getattr(dtypes, n) for n in dir(dtypes) if n.endswith("DType")]
    return found


def load_torch_file(path: str | os.PathLike, what: str):
    """``torch.load`` of a weights file (tensors only), or a ModelError saying what the file should be."""
    import torch
    check_checkpoint_file(path)
    allowed = data_globals(path)
    try:
        with torch.serialization.safe_globals(allowed):
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch.load raises many types for a bad file
        first = (str(exc).splitlines() or [""])[0][:160]
        raise ModelError(f"checkpoint {path} is not a readable PyTorch file for {what} ({type(exc).__name__}: "
                         f"{first}). A truncated download, or a file of another kind, gives this error: download "
                         "or copy it again.") from None


def require(module: str, extra: str, what: str):
    """Import ``module`` or raise a ModelError naming the optional extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ModelError(f"{what} needs the Python package {module!r}, which is not installed. Install the "
                         f"optional extra: pip install '.[{extra}]'") from None


def placed_checkpoint_spec(model: str, pretrained: str | None, model_config, family: str,
                           context_length: int) -> ModelSpec:
    """The spec of a paper model whose weights the user places by hand (sized from its checkpoint):
    ``pretrained``, else ``<CREPE_MODELS>/<key>/<release file>``."""

    row = checkpoints.checkpoint(model)
    if model_config is not None:
        raise ModelError(f"{row.display} is sized from its checkpoint; drop --model-config")
    path = Path(pretrained) if pretrained else paths.models_dir() / row.key / row.release_file
    return ModelSpec(key=row.key, architecture=row.architecture, pretrained=str(path), quick_gelu=False,
                     weights_quick_gelu=None, display=row.display, train_data=row.train_data, family=family,
                     truncation="keep_eot", context_length=context_length, caveat=row.caveat)


#: OpenAI CLIP's image statistics (open_clip's OPENAI_DATASET_MEAN/STD), here without importing open_clip.
OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)


def squash_transform(size: int):
    """Resize to ``size`` × ``size`` (bicubic, no crop) → ToTensor → Normalize with OpenAI's mean/std: the
    evaluation transform of both ALBEF's and FLAVA's official scripts. Returns (transform, its record)."""
    from torchvision import transforms
    transform = transforms.Compose([
        transforms.Resize((size, size), interpolation=transforms.InterpolationMode.BICUBIC),
        transforms.ToTensor(), transforms.Normalize(OPENAI_MEAN, OPENAI_STD)])
    record = {"size": [size, size], "resize": "squash", "interpolation": "bicubic",
              "mean": list(OPENAI_MEAN), "std": list(OPENAI_STD)}
    return transform, record
