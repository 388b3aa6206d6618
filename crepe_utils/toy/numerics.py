"""Pinned CPU numerics for the toy world: the same bits on every x86-64 machine with AVX2.

PyTorch on a CPU chooses its kernels by the machine it runs on, and each choice changes the last
bits of a result, which training then amplifies:

* ATen's vectorised kernels by instruction set (AVX512 where there is one, else AVX2);
* the BLAS (MKL) by CPU vendor, instruction set and thread count: its matrix products differ
  between Intel and AMD processors whatever ``MKL_CBWR`` asks for;
* MKL's vector math (VML), which ATen calls for exp, log, sqrt, sin, cos, tanh, erf, ... of
  float32 and float64 tensors, by CPU vendor, instruction set and ``MKL_CBWR``: on an Intel
  processor with AVX-512 its exp changes bits between ``MKL_CBWR=AUTO`` and ``COMPATIBLE``;
* oneDNN's kernels by instruction set, compiled at run time;
* any reduction split over threads by the thread count.

The toy pipeline therefore pins, for training and evaluation alike: ATen to its AVX2 kernels (an
environment variable read when torch loads, so it is set before torch is imported:
:func:`pin_environment`), a fixed thread count, deterministic algorithms and oneDNN off, and it
computes every matrix product exactly and VML's functions from IEEE-754 basic operations
(:mod:`crepe_utils.engine.portable`, entered by :func:`pinned` for the whole block), so that no
result depends on MKL. What remains is ATen's own code at one instruction set (its vectorised
kernels, and the C library's scalar functions some of them call), the same instructions on Intel
and AMD. On other architectures (ARM: NEON or SVE kernels) the results differ in their last bits.
:func:`in_effect` says what a process actually runs with; it is part of the pipeline's stage keys,
so a process that could not be pinned (torch imported before the pipeline started) recomputes
rather than mixes.
"""
from __future__ import annotations

import contextlib
import os
import platform
import sys
from typing import Iterator

#: Read by torch (ATen) when it loads; ignored on other architectures.
PINNED_ENV = {"ATEN_CPU_CAPABILITY": "avx2"}
X86 = ("x86_64", "amd64")


def pin_environment() -> bool:
    """Set :data:`PINNED_ENV` for this process if that can still take effect; whether it did."""
    if platform.machine().lower() not in X86:
        return False
    if "torch" in sys.modules:
        return all(os.environ.get(k) == v for k, v in PINNED_ENV.items())
    os.environ.update(PINNED_ENV)
    return True


@contextlib.contextmanager
def pinned(threads: int) -> Iterator[None]:
    """Run torch with ``threads`` threads, deterministic algorithms, oneDNN off, exact matrix products and
    portable vector-math functions (:func:`crepe_utils.engine.portable.portable_numerics`, in this thread);
    restore afterwards."""
    import torch
    from ..engine.portable import portable_numerics     # torch loads only after the environment is pinned
    saved = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(), torch.backends.mkldnn.enabled)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    torch.backends.mkldnn.enabled = False
    try:
        with portable_numerics():
            yield
    finally:
        torch.set_num_threads(saved[0])
        torch.use_deterministic_algorithms(saved[1])
        torch.backends.mkldnn.enabled = saved[2]


def in_effect(threads: int) -> dict:
    """The numerics a :func:`pinned` block of this process runs with (JSON-ready)."""
    import torch
    return {"machine": platform.machine().lower(), "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "threads": int(threads), "deterministic": True, "mkldnn": False, "matrix_products": "exact",
            "vector_math": "portable"}
