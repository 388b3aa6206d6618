"""Precision modes: what each one changes, and the floating-point settings a run records."""
from __future__ import annotations

import contextlib

from ..errors import ModelError


PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp16-weights", "portable")


def pixel_dtype(precision: str):
    """The dtype pixels enter the image tower in: fp16 for fp16 weights (OpenAI's
    ``encode_image(image.type(self.dtype))``), else as preprocessed (fp32)."""
    import torch
    return torch.float16 if precision == "fp16-weights" else None


def check_weights(loaded, precision: str) -> None:
    """A clear error when the model's weights do not fit the precision (fp16 weights iff fp16-weights)."""
    import torch
    half = any(p.dtype == torch.float16 for p in loaded.model.parameters())
    if precision == "fp16-weights" and not half:
        raise ModelError(f"{loaded.spec.key}: precision fp16-weights needs a model loaded with fp16 weights: "
                         "load_model(..., precision='fp16-weights')")
    if precision != "fp16-weights" and half:
        raise ModelError(f"{loaded.spec.key} holds fp16 weights (loaded for fp16-weights); precision {precision} "
                         "needs the fp32 model: load it again without precision='fp16-weights'")


def _fp32_knobs():
    """PyTorch's per-backend fp32 precision settings (its current API; the legacy allow_tf32 flags
    must not be mixed with it)."""
    import torch
    b = torch.backends
    return {"cuda.matmul": b.cuda.matmul, "cudnn.conv": b.cudnn.conv, "cudnn.rnn": b.cudnn.rnn,
            "mkldnn.matmul": b.mkldnn.matmul, "mkldnn.conv": b.mkldnn.conv}


def fp32_settings() -> dict[str, str]:
    """The fp32 precision in effect per backend ("ieee", "tf32", ...), as the manifest records it."""
    return {name: knob.fp32_precision for name, knob in _fp32_knobs().items()}


@contextlib.contextmanager
def precision_context(precision: str, device):
    """Autocast and fp32 settings for one precision; restores the global settings afterwards.

    ``fp32`` is strict IEEE fp32 on every backend: PyTorch's default lets cuDNN convolutions use
    TF32, which would change the ResNet numbers on Ampere and later GPUs. ``tf32`` allows TF32 for
    CUDA matmuls and cuDNN; CPU backends stay IEEE in every mode. ``fp16-weights`` runs no
    autocast: the weights are fp16 already (:func:`check_weights`), what stays fp32 is IEEE.
    ``portable`` is fp32 with every matrix product computed exactly and MKL's vector-math functions
    computed portably (:mod:`.portable`): the same bits on every CPU, BLAS and MKL code path, given the
    same ATen instruction set and thread count. Entered per thread.
    """
    import torch
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    knobs = _fp32_knobs()
    saved = {name: knob.fp32_precision for name, knob in knobs.items()}
    gpu = "tf32" if precision == "tf32" else "ieee"
    for name, knob in knobs.items():
        knob.fp32_precision = gpu if name.startswith(("cuda", "cudnn")) else "ieee"
    try:
        if precision in ("bf16", "fp16"):
            dtype = torch.bfloat16 if precision == "bf16" else torch.float16
            with torch.autocast(device_type=device.type, dtype=dtype):
                yield
        elif precision == "portable":
            from .portable import portable_numerics     # torch-free at import, like this module
            with portable_numerics():
                yield
        else:
            yield
    finally:
        for name, knob in knobs.items():
            knob.fp32_precision = saved[name]


def settings_in_effect(precision: str, device) -> dict[str, str]:
    with precision_context(precision, device):
        return fp32_settings()
