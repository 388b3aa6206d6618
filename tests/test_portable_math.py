"""Portable elementwise functions (crepe_utils.engine.portable_math) and their routing inside the portable
numerics: correctly rounded float32 values against mpmath, special values bit for bit, only IEEE-754
basic operations inside, and no function of MKL's vector math left to run under the mode."""
from __future__ import annotations

import math

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from crepe_utils.engine import portable_math as P
from crepe_utils.engine.portable import VECTOR_MATH, PortabilityError, portable_numerics

mpmath = pytest.importorskip("mpmath")


def _reference(function: str, values, bits: int) -> list[float]:
    """Each value's function from mpmath at 200 bits, rounded (to nearest, ties to even) to ``bits`` bits."""
    f = {"exp": mpmath.exp, "log": mpmath.log, "sqrt": mpmath.sqrt, "sin": mpmath.sin, "cos": mpmath.cos,
         "tanh": mpmath.tanh}[function]
    out = []
    for v in values:
        with mpmath.workprec(200):
            y = f(mpmath.mpf(v))
        with mpmath.workprec(bits):
            out.append(float(+y))
    return out


def _samples(function: str, dtype, n: int = 1500) -> torch.Tensor:
    """Arguments over each function's range where float32 results are normal numbers."""
    g = torch.Generator().manual_seed(7)
    u = torch.rand(n, generator=g, dtype=torch.float64)
    spans = {"exp": (-87.0, 88.7), "sin": (-3000.0, 3000.0), "cos": (-3000.0, 3000.0), "tanh": (-9.0, 9.0)}
    if function in ("log", "sqrt"):
        x = torch.exp2(u * 250 - 125)                                      # 2**-125 .. 2**125
    else:
        low, high = spans[function]
        x = low + (high - low) * u
        x[: n // 10] *= 1e-4                                               # near zero, where cancellation bites
    return x.to(dtype)


def _ulps(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Distance in units in the last place of the dtype (same-sign finite values)."""
    ints = torch.int32 if a.dtype == torch.float32 else torch.int64
    return (a.view(ints).long() - b.view(ints).long()).abs()


@pytest.mark.parametrize("function", sorted(P.FUNCTIONS))
def test_float32_results_are_the_correctly_rounded_values(function):
    x = _samples(function, torch.float32)
    got = P.FUNCTIONS[function](x)
    want = torch.tensor(_reference(function, x.tolist(), 24), dtype=torch.float32)
    assert got.dtype == torch.float32
    assert torch.equal(got, want), f"{int((got != want).sum())} of {len(x)} differ"


@pytest.mark.parametrize("function", sorted(P.FUNCTIONS))
def test_float64_results_are_within_four_units_in_the_last_place(function):
    x = _samples(function, torch.float64)
    got = P.FUNCTIONS[function](x)
    want = torch.tensor(_reference(function, x.tolist(), 53), dtype=torch.float64)
    assert got.dtype == torch.float64 and int(_ulps(got, want).max()) <= 4


INF, NAN = math.inf, math.nan
#: (function, argument, value) where IEEE-754 and C99's Annex F define the value (signed zeros included)
SPECIAL = [("exp", 0.0, 1.0), ("exp", -0.0, 1.0), ("exp", INF, INF), ("exp", -INF, 0.0), ("exp", NAN, NAN),
           ("exp", 710.0, INF), ("exp", -746.0, 0.0), ("exp", 1e-45, 1.0),
           ("log", 1.0, 0.0), ("log", 0.0, -INF), ("log", -0.0, -INF), ("log", INF, INF), ("log", -1.0, NAN),
           ("log", -INF, NAN), ("log", NAN, NAN),
           ("sqrt", 0.0, 0.0), ("sqrt", -0.0, -0.0), ("sqrt", INF, INF), ("sqrt", -1.0, NAN), ("sqrt", 4.0, 2.0),
           ("sin", 0.0, 0.0), ("sin", -0.0, -0.0), ("sin", INF, NAN), ("sin", -INF, NAN), ("sin", NAN, NAN),
           ("cos", 0.0, 1.0), ("cos", -0.0, 1.0), ("cos", INF, NAN), ("cos", NAN, NAN),
           ("tanh", 0.0, 0.0), ("tanh", -0.0, -0.0), ("tanh", INF, 1.0), ("tanh", -INF, -1.0), ("tanh", NAN, NAN),
           ("tanh", 30.0, 1.0), ("tanh", -30.0, -1.0), ("tanh", 1e-30, 1e-30)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("function, argument, value", SPECIAL)
def test_special_values_bit_for_bit(function, argument, value, dtype):
    got = float(P.FUNCTIONS[function](torch.tensor([argument], dtype=dtype))[0])
    want = float(torch.tensor(value, dtype=dtype))
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == want and math.copysign(1, got) == math.copysign(1, want), (got, want)


def test_float32_overflow_and_underflow():
    got = P.exp(torch.tensor([88.8, 89.0, -104.0, -200.0]))
    assert got.tolist() == [INF, INF, 0.0, 0.0]


def test_subnormal_results_and_arguments():
    tiny = torch.tensor([2.0 ** -140, 2.0 ** -149], dtype=torch.float32)        # float32 subnormals
    assert torch.equal(P.log(tiny), torch.tensor(_reference("log", tiny.tolist(), 24), dtype=torch.float32))
    assert torch.equal(P.sqrt(tiny), torch.sqrt(tiny.double()).float())
    x = torch.tensor([-100.0, -103.0], dtype=torch.float32)                    # exp lands among the subnormals
    assert torch.equal(P.exp(x), torch.tensor(_reference("exp", x.tolist(), 200), dtype=torch.float64).float())


def test_integer_arguments_are_computed_in_the_default_float_dtype():
    got = P.exp(torch.tensor([0, 1, 2]))
    assert got.dtype == torch.get_default_dtype() and torch.equal(got, P.exp(torch.tensor([0.0, 1.0, 2.0])))


def test_sin_and_cos_refuse_arguments_beyond_their_reduction():
    P.sin(torch.tensor([P.TRIG_LIMIT * 0.99], dtype=torch.float64))
    with pytest.raises(P.RangeError, match="take |x| <"):
        P.cos(torch.tensor([1.0, 1e30]))


class _Recorder(TorchDispatchMode):
    """Records each ATen operator (with its overload) that runs."""

    def __init__(self):
        super().__init__()
        self.seen = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.add(str(func).removeprefix("aten."))
        return func(*args, **(kwargs or {}))


#: Operators whose IEEE-754 results are exactly defined whatever the machine: arithmetic (each correctly
#: rounded), comparison, selection, rounding to an integer, significand and exponent, bits, copies.
BASIC = {"add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "div.Tensor_mode", "neg.default", "abs.default",
         "round_.default", "frexp.Tensor", "copysign.Tensor", "minimum.default", "clamp_.default",
         "remainder.Scalar", "where.self", "lt.Scalar", "gt.Scalar", "ge.Scalar", "eq.Scalar", "eq.Tensor",
         "ne.Scalar", "isnan.default", "any.default", "bitwise_and.Tensor", "bitwise_or.Tensor",
         "bitwise_not.default", "__lshift__.Scalar", "nan_to_num_.default", "full_like.default", "scalar_tensor.default",
         "_to_copy.default", "view.dtype", "lift_fresh.default", "detach.default", "_local_scalar_dense.default"}


@pytest.mark.parametrize("function", sorted(P.FUNCTIONS))
def test_built_from_ieee_basic_operations_only(function):
    """Inside each function every ATen operator is one whose result IEEE-754 defines exactly (sqrt's one
    computation is numpy's square root, itself such an operation): nothing of a vector-math library or of
    libm runs, so the bits cannot depend on the CPU."""
    x = torch.linspace(-30, 30, 101)
    x = x.abs() if function in ("log", "sqrt") else x
    with _Recorder() as recorder:
        P.FUNCTIONS[function](x)
        P.FUNCTIONS[function](x.double())
    assert recorder.seen <= BASIC, recorder.seen - BASIC


class _Native(TorchDispatchMode):
    """Below the portable mode: records the operators that actually run natively."""

    def __init__(self):
        super().__init__()
        self.ran = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ran.append(func.name().removeprefix("aten::").removesuffix("_"))
        return func(*args, **(kwargs or {}))


def test_the_mode_computes_every_vector_math_call_portably():
    """exp, log, sqrt, sin, cos and tanh, called every way torch offers (function, method, in place, out=,
    pow(x, 0.5), logsumexp, an integer tensor), give portable_math's bits, and none of VML's functions runs
    natively on a float32 or float64 tensor; half precision stays with ATen (VML takes no half)."""
    g = torch.Generator().manual_seed(0)
    x = torch.rand(300, generator=g) * 4 + 0.1
    native = _Native()
    with native, portable_numerics():
        results = {"exp": torch.exp(x), "log": x.log(), "sqrt": torch.sqrt(x.double()), "sin": torch.sin(x),
                   "cos": x.cos(), "tanh": torch.tanh(x), "pow": x ** 0.5, "pow_": x.clone().pow_(0.5),
                   "exp_": x.clone().exp_(), "int": torch.exp(torch.arange(5)),
                   "lse": torch.logsumexp(x.reshape(30, 10), dim=1), "half": torch.exp(x.half())}
        out = torch.empty(0)
        torch.log(x, out=out)
    assert not set(native.ran) & set(VECTOR_MATH) - {"exp"}, native.ran
    assert native.ran.count("exp") == 1                                  # the half-precision one
    assert torch.equal(results["exp"], P.exp(x)) and torch.equal(results["exp_"], P.exp(x))
    assert torch.equal(results["log"], P.log(x)) and torch.equal(out, P.log(x))
    assert torch.equal(results["sqrt"], P.sqrt(x.double()))
    assert torch.equal(results["pow"], P.sqrt(x)) and torch.equal(results["pow_"], P.sqrt(x))
    assert torch.equal(results["sin"], P.sin(x)) and torch.equal(results["cos"], P.cos(x))
    assert torch.equal(results["tanh"], P.tanh(x)) and torch.equal(results["int"], P.exp(torch.arange(5.0)))
    torch.testing.assert_close(results["lse"], torch.logsumexp(x.reshape(30, 10), dim=1))
    assert results["half"].dtype == torch.float16


def test_gradients_flow_through_the_portable_functions():
    x = torch.tensor([0.5, 1.5, 2.5], requires_grad=True)
    with portable_numerics():
        (torch.exp(x) + torch.log(x) + torch.sqrt(x) + torch.tanh(x) + torch.sin(x)).sum().backward()
    want = x.detach().exp() + 1 / x.detach() + 0.5 / x.detach().sqrt() + 1 - x.detach().tanh() ** 2 + x.detach().cos()
    torch.testing.assert_close(x.grad, want)


@pytest.mark.parametrize("call", [torch.erf, torch.tan, torch.log2, torch.erfinv])
def test_the_functions_it_lacks_are_refused_by_name(call):
    with portable_numerics():
        with pytest.raises(PortabilityError, match=f"cannot compute aten::{call.__name__}"):
            call(torch.rand(4) * 0.5)
        assert call(torch.rand(4, dtype=torch.bfloat16) * 0.5).dtype == torch.bfloat16   # VML takes no bfloat16


def test_onednn_is_off_while_any_thread_is_inside_and_restored_by_the_last_to_leave():
    """Two threads' blocks overlap, the one entered first leaving first: oneDNN stays off until the other leaves,
    then is what it was before either entered (a per-thread save and restore would leave it off)."""
    import threading
    before = torch.backends.mkldnn.enabled
    inside, leave = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with portable_numerics():
            inside.set()
            leave.wait(10)
            seen["worker, after main left"] = torch.backends.mkldnn.enabled
    with portable_numerics():
        thread = threading.Thread(target=worker)
        thread.start()
        inside.wait(10)
        seen["main, inside"] = torch.backends.mkldnn.enabled
    seen["main left, worker inside"] = torch.backends.mkldnn.enabled
    leave.set()
    thread.join(10)
    assert seen == {"main, inside": False, "main left, worker inside": False, "worker, after main left": False}
    assert torch.backends.mkldnn.enabled == before
