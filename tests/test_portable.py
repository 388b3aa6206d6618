"""Portable products (crepe_utils.engine.portable): exact matrix products whose bits do not depend on
the BLAS, its code path or the order in which it sums.

Would notice: operands rounded to another grid than the documented one (wrong exponent, too many
bits for an exact float64 sum, truncation instead of rounding half to even), a product that is not
the exact sum of the rounded operands, a result that changes with the summation order or MKL's code
path, a convolution or attention gradient computed wrongly, a fused or external kernel that slips
through, and a mode that leaks into other threads.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch

from crepe_utils.engine.portable import (PortabilityError, _on_grid_float64, exact_matmul, on_grid, operand_bits,
                                         portable_numerics)

ROOT = Path(__file__).resolve().parent.parent


def _reference_round(row: list[float], bits: int) -> list[float]:
    """Each value rounded half to even to ``bits`` bits below the power of two above the row's maximum."""
    top = max(abs(v) for v in row)
    exponent = math.frexp(top)[1]                   # top < 2**exponent
    shift = max(-126, min(126, bits - exponent))
    return [round(v * 2.0 ** shift) / 2.0 ** shift for v in row]    # round(): half to even


def _awkward(shape, seed=0) -> torch.Tensor:
    """float32 values spanning many magnitudes, with zeros and ties at the rounding points."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * torch.exp2(torch.randint(-30, 30, shape, generator=g).float())
    x[..., 0] = 0.0
    return x


def test_operand_bits_keep_every_partial_sum_below_2_to_the_53():
    for k in (1, 2, 31, 32, 33, 257, 1024, 16_448, 1 << 20):
        bits = operand_bits(k)
        assert bits <= 24 and 2 * bits + math.ceil(math.log2(k)) <= 53
        assert 2 * (bits + 1) + math.ceil(math.log2(k)) > 53 or bits == 24      # and no fewer bits than that allows


@pytest.mark.parametrize("bits", [24, 19, 5])
def test_operands_are_rounded_to_the_documented_grid(bits):
    x = _awkward((7, 40))
    x[3] = torch.tensor([1.5, 2.5, -0.5] + [0.0] * 37) * 2.0 ** -bits * 4    # exact halves: ties to even
    x[4] = 0.0
    got = on_grid(x, -1, bits)
    want = torch.tensor([_reference_round(row, bits) for row in x.tolist()], dtype=torch.float32)
    assert torch.equal(got, want)
    assert torch.equal(on_grid(x.t(), 0, bits), want.t())       # columns, as for the right operand


def test_a_product_is_the_exact_sum_of_the_rounded_operands():
    a, b = _awkward((6, 300), seed=1), _awkward((300, 5), seed=2)
    got = exact_matmul(a, b)
    bits = operand_bits(300)
    ra = [_reference_round(row, bits) for row in a.tolist()]
    rb = list(zip(*[_reference_round(col, bits) for col in b.t().tolist()]))      # rows of the rounded b
    for i in range(6):
        for j in range(5):
            exact = sum(Fraction(ra[i][k]) * Fraction(rb[k][j]) for k in range(300))
            assert Fraction(float(exact)) == exact             # the sum fits float64 exactly ...
            assert got[i, j].item() == np.float32(float(exact)).item()    # ... and is rounded once


def test_products_do_not_depend_on_the_order_of_summation():
    a, b = torch.randn(4, 50, 257), torch.randn(4, 257, 30)
    order = torch.randperm(257, generator=torch.Generator().manual_seed(0))
    assert not torch.equal(a @ b, a[..., order] @ b[:, order])            # the BLAS's result moves ...
    assert torch.equal(exact_matmul(a, b), exact_matmul(a[..., order], b[:, order]))    # ... ours does not
    assert torch.allclose(exact_matmul(a, b), a @ b, rtol=1e-5, atol=1e-4)


def test_layers_compute_what_torch_computes_forward_and_backward():
    """Linear, 2-D convolution (strided, padded) and attention (causal and masked) under the mode agree
    with torch's own kernels to float32 accuracy, gradients included."""
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
    lin = torch.nn.Linear(8, 6)
    x = torch.randn(2, 3, 11, 9, requires_grad=True)
    q, k, v = (torch.randn(2, 2, 7, 8, requires_grad=True) for _ in range(3))
    mask = torch.rand(7, 7) > 0.3
    mask.fill_diagonal_(True)

    def run():
        y = lin(conv(x).flatten(2).transpose(1, 2))
        causal = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        masked = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        loss = y.square().sum() + causal.square().sum() + masked.sin().sum()
        params = [x, q, k, v, conv.weight, conv.bias, lin.weight, lin.bias]
        return [y, causal, masked] + list(torch.autograd.grad(loss, params))

    native = run()
    with portable_numerics():
        portable = run()
    for got, want in zip(portable, native):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_an_operation_without_an_exact_form_is_refused_not_run():
    with portable_numerics(), pytest.raises(PortabilityError, match="linalg_inv"):
        torch.linalg.inv(torch.eye(3) * 2)


def test_the_mode_is_per_thread_and_reentrant():
    a, b = torch.randn(30, 257), torch.randn(257, 20)
    seen = {}
    with portable_numerics(), portable_numerics():
        inside = a @ b
        worker = threading.Thread(target=lambda: seen.setdefault("other", a @ b))
        worker.start()
        worker.join()
    assert torch.equal(inside, exact_matmul(a, b))
    assert torch.equal(seen["other"], a @ b)                  # the other thread computed natively
    assert torch.equal(a @ b, torch.mm(a, b))                  # and the mode is gone afterwards


_PROBE = """
import hashlib, json, torch
from crepe_utils.engine.portable import portable_numerics
torch.set_num_threads(2)
g = torch.Generator().manual_seed(0)
a, b = torch.randn(64, 300, generator=g), torch.randn(300, 48, generator=g)
w = torch.randn(48, 300, generator=g, requires_grad=True)
digest = lambda t: hashlib.sha256(t.detach().numpy().tobytes()).hexdigest()
native = a @ b
with portable_numerics():
    y = torch.nn.functional.linear(a, w)
    y.square().sum().backward()
print(json.dumps({"native": digest(native), "portable": digest(y), "grad": digest(w.grad)}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not torch.backends.mkl.is_available(), reason="compares MKL's code paths")
def test_products_do_not_depend_on_mkls_code_path():
    """MKL's conditional-reproducibility modes run other kernels: its float32 product changes between
    them, the portable one (and its gradient) does not."""
    runs = {}
    for mode in ("AUTO", "COMPATIBLE"):
        env = {**os.environ, "MKL_CBWR": mode, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        runs[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    assert runs["AUTO"]["native"] != runs["COMPATIBLE"]["native"]     # the control: another path, other bits
    assert {k: v for k, v in runs["AUTO"].items() if k != "native"} == \
           {k: v for k, v in runs["COMPATIBLE"].items() if k != "native"}


def test_multi_head_attention_without_grad_avoids_its_fused_kernel():
    """Without autograd, nn.MultiheadAttention would call a fused kernel; under the mode it is composed of
    exact products and matches torch (with a causal float mask, a boolean mask, and none)."""
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(16, 2, batch_first=True).eval()
    x = torch.randn(3, 7, 16)
    causal = torch.full((7, 7), float("-inf")).triu(1)
    banned = torch.rand(7, 7) > 0.7
    banned.fill_diagonal_(False)
    for mask in (None, causal, banned):
        with torch.no_grad():
            want = mha(x, x, x, need_weights=False, attn_mask=mask)[0]
            with portable_numerics():
                got = mha(x, x, x, need_weights=False, attn_mask=mask)[0]
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_the_float64_grid_of_products_is_the_documented_grid():
    """The products' one-pass rounding gives on_grid's values exactly, down to slices near float32's range ends."""
    g = torch.Generator().manual_seed(3)
    for shape, dim in [((30, 70), -1), ((70, 30), -2), ((4, 33, 65), -1)]:
        for scale in (1e-30, 1e-3, 1.0, 1e30):
            x = torch.randn(*shape, generator=g) * scale
            x[0] = 0
            for bits in (12, 23, 24):
                assert torch.equal(_on_grid_float64(x, dim, bits), on_grid(x, dim, bits).double())
