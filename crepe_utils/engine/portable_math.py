"""Elementwise functions whose bits are the same on every CPU: exp, log, sqrt, sin, cos, tanh.

Where torch is built with MKL (its x86-64 wheels), ATen computes these functions, and erf, tan, log2 and a
few others, of float32 and float64 tensors with MKL's vector math library (VML). VML picks its code path by
CPU vendor, instruction set and ``MKL_CBWR``, and the paths differ in the last bit: the same ``torch.exp``
of the same float32 tensor gives other bits on an Intel processor with AVX-512 than on an AMD one. Pinning
ATen's instruction set (``ATEN_CPU_CAPABILITY``) does not reach VML.

The functions here are built from operations whose IEEE-754 results are defined exactly: addition,
subtraction, multiplication, division and square root (each correctly rounded), comparison, rounding to an
integer, splitting a number into its significand and exponent, and scaling by a power of two built from its
bits. They run in a fixed order on float64 and round once to the input's dtype, so every machine computes
the same bits whatever its vendor, vector width or libraries. The float64 value is within a few units in
the last place of the true one (tested against mpmath): a float32 result is the correctly rounded value
except where the true value lies within about 2**-45 of halfway between two float32 numbers, and then it
is one of the two.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..errors import ModelError

#: ln 2 split so that k * LN2_HI is exact for |k| < 2**21 (fdlibm's split).
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
INV_LN2 = 1.44269504088896338700e+00
SQRT_HALF = 0.70710678118654752440
#: pi/2 in three 33-bit parts and a tail: n * part is exact for |n| < 2**20 (fdlibm's split).
PIO2 = (1.57079632673412561417e+00, 6.07710050630396597660e-11, 2.02226624871116645580e-21,
        8.47842766036889956997e-32)
INV_PIO2 = 6.36619772367581382433e-01
#: sin and cos take arguments below this (|n| < 2**20 quarter turns); larger ones are refused.
TRIG_LIMIT = 2.0 ** 20 * 1.5707963267948966

# Taylor coefficients, each the correctly rounded float64 of an exact rational (Python's int division).
_EXP = [1 / math.factorial(n) for n in range(14)]                        # exp(r), |r| <= ln2/2: error < 5e-18
_EXPM1 = [1 / math.factorial(n + 1) for n in range(14)]                  # expm1(r) / r, 0 <= r < 0.35
_ATANH = [1 / (2 * n + 1) for n in range(12)]                            # atanh(s) / s in s**2, |s| < 0.172
_SIN = [(-1) ** k / math.factorial(2 * k + 1) for k in range(10)]       # sin(r) / r in r**2, |r| <= pi/4
_COS = [(-1) ** k / math.factorial(2 * k) for k in range(11)]           # cos(r) in r**2


class RangeError(ModelError, ValueError):
    """An argument outside the range a portable function computes (sin and cos of |x| >= TRIG_LIMIT)."""


def _horner(x: torch.Tensor, coefficients: list[float]) -> torch.Tensor:
    """sum(c[n] * x**n) by Horner's rule: one rounded multiplication and one rounded addition per term."""
    p = torch.full_like(x, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        p = p * x
        p = p + c
    return p


def _pow2(k: torch.Tensor) -> torch.Tensor:
    """2**k as float64 from its bits (exact), for integer k in [-1022, 1023]."""
    return ((k.to(torch.int64) + 1023) << 52).view(torch.float64)


def _scale(x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """x * 2**k for x in [0.5, 2] and integer k in [-1100, 1100], rounded once (into the subnormals or to
    infinity where the result lies there): the first factor keeps x * 2**a a normal number."""
    a = torch.div(k, 2, rounding_mode="floor")
    return x * _pow2(a) * _pow2(k - a)


def _as_float(x: torch.Tensor) -> torch.Tensor:
    """The input as ATen would compute it: integers and booleans in the default float dtype."""
    return x if x.is_floating_point() else x.to(torch.get_default_dtype())


def _exp64(d: torch.Tensor) -> torch.Tensor:
    k = (d * INV_LN2).round_().nan_to_num_(0.0).clamp_(-1100, 1100)
    r = (d - k * LN2_HI) - k * LN2_LO                                   # |r| <= ln2/2 (exact first step)
    out = _scale(_horner(r, _EXP), k.to(torch.int64))
    out = torch.where(d > 710, math.inf, out)
    out = torch.where(d < -746, 0.0, out)
    return torch.where(d.isnan(), d, out)


def exp(x: torch.Tensor) -> torch.Tensor:
    x = _as_float(x)
    return _exp64(x.double()).to(x.dtype)


def _expm1_nonnegative(y: torch.Tensor) -> torch.Tensor:
    """exp(y) - 1 for y >= 0, without cancellation near 0."""
    return torch.where(y < 0.35, y * _horner(y, _EXPM1), _exp64(y) - 1)


def log(x: torch.Tensor) -> torch.Tensor:
    x = _as_float(x)
    d = x.double()
    m, e = torch.frexp(d)                                               # d = m * 2**e, m in [0.5, 1)
    low = m < SQRT_HALF
    m = torch.where(low, m * 2, m)                                      # m in [sqrt(1/2), sqrt(2))
    k = (e - low.to(e.dtype)).double()
    f = m - 1                                                           # exact (Sterbenz)
    s = f / (f + 2)                                                     # log(m) = 2 atanh(s)
    log_m = 2 * s * _horner(s * s, _ATANH)
    out = k * LN2_HI + (k * LN2_LO + log_m)
    out = torch.where(d == 0, -math.inf, out)
    out = torch.where(d == math.inf, math.inf, out)
    out = torch.where((d < 0) | d.isnan(), math.nan, out)
    return out.to(x.dtype)


def sqrt(x: torch.Tensor) -> torch.Tensor:
    """IEEE-754's square root (correctly rounded in the input's own dtype: one machine instruction, through
    numpy, whose square root is that instruction at every vector width)."""
    x = _as_float(x)
    with np.errstate(invalid="ignore"):
        return torch.from_numpy(np.asarray(np.sqrt(x.detach().numpy())))


def _sin_cos(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    d = x.double()
    big = (d.abs() >= TRIG_LIMIT) & d.isfinite()
    if bool(big.any()):
        raise RangeError(f"portable sin and cos take |x| < {TRIG_LIMIT:.4g}; got {float(d[big].abs().max()):.4g}")
    n = (d * INV_PIO2).round_().nan_to_num_(0.0, 0.0, 0.0)
    r = ((d - n * PIO2[0]) - n * PIO2[1]) - n * PIO2[2]                 # |r| <= pi/4 (about)
    z = r * r
    s, c = r * _horner(z, _SIN), _horner(z, _COS)
    quadrant = torch.remainder(n.to(torch.int64), 4)
    sin = torch.where(quadrant == 0, s, torch.where(quadrant == 1, c, torch.where(quadrant == 2, -s, -c)))
    cos = torch.where(quadrant == 0, c, torch.where(quadrant == 1, -s, torch.where(quadrant == 2, -c, s)))
    sin = torch.where(d == 0, d, sin)                                   # sin(-0) = -0
    undefined = ~d.isfinite()
    return torch.where(undefined, math.nan, sin), torch.where(undefined, math.nan, cos)


def sin(x: torch.Tensor) -> torch.Tensor:
    x = _as_float(x)
    return _sin_cos(x)[0].to(x.dtype)


def cos(x: torch.Tensor) -> torch.Tensor:
    x = _as_float(x)
    return _sin_cos(x)[1].to(x.dtype)


def tanh(x: torch.Tensor) -> torch.Tensor:
    x = _as_float(x)
    d = x.double()
    a = d.abs()
    t = _expm1_nonnegative(torch.minimum(2 * a, torch.full_like(a, 44.0)))
    y = t / (t + 2)
    y = torch.where(a > 22, 1.0, y)                                     # tanh(22) rounds to 1 in float64
    y = torch.where(a < 2.0 ** -28, a, y)                               # tanh(a) rounds to a
    return torch.copysign(y, d).to(x.dtype)                             # nan stays nan (y is nan)


#: ATen's name of each function → its portable form.
FUNCTIONS = {"exp": exp, "log": log, "sqrt": sqrt, "sin": sin, "cos": cos, "tanh": tanh}
