"""Matrix products and elementwise functions whose bits do not depend on the CPU, its libraries or the thread count.

A BLAS chooses the order in which it sums each dot product by instruction set, CPU vendor and
thread count, so the same float32 product differs in its last bits from one machine to another
(MKL takes other code paths on Intel and AMD processors), and training amplifies those bits.
Inside :func:`portable_numerics` every matrix product torch computes is exact instead:

1. each row of the left operand and each column of the right operand is rounded to ``b``
   significant bits relative to the power of two above its largest magnitude, with
   ``b = min(24, (53 - ceil(log2 K)) // 2)`` for inner dimension ``K`` (24 bits up to K = 32,
   19 bits at K = 16,384): at most float32's own precision;
2. the rounded operands are multiplied in float64, where every product and every partial sum of
   one output element is an integer multiple of the same power of two below 2**53, so the sum is
   exact in whatever order, blocking or instruction set the BLAS uses;
3. the exact result is rounded once to the operands' dtype.

The convolutions and attention of the supported models reduce to such products here (patch and
general 2-D convolutions through an explicit unfold, attention through its plain formula with ATen's
own softmax), in the forward and the backward pass.

MKL's vector math (VML) is the other library on the path: ATen hands it exp, log, sqrt, sin, cos,
tanh, erf and a few more functions of float32 and float64 tensors (:data:`VECTOR_MATH`), and VML
too picks its code path by CPU vendor and instruction set. Inside the block those functions are
computed by :mod:`.portable_math` instead (``pow(x, 0.5)``, which ATen sends to VML's square root,
and ``logsumexp``, whose kernel calls exp and log, included); the ones it does not implement are
refused. oneDNN, whose kernels are compiled at run time for the machine's instruction set and which
ATen calls from inside ordinary operators (GELU, among others), is switched off in the block. An
operation that would reach another external kernel (oneDNN by name, LAPACK, FFT, fused attention)
raises :class:`PortabilityError` instead of running. Everything else runs in ATen's own
kernels, whose results depend only on the instruction set ATen dispatches to (pin it with
``ATEN_CPU_CAPABILITY``) and on torch's thread count.

Rows whose largest magnitude is below 2**-100 are rounded as if it were 2**-100 (their entries
become 0 or keep fewer bits); nothing a model computes comes near that.
"""
from __future__ import annotations

import contextlib
import math
import threading
from typing import Iterator

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from ..errors import ModelError
from . import portable_math

aten = torch.ops.aten

#: Operand bits: float32's significand at most; fewer where K products must fit float64's 53 bits.
MAX_BITS = 24
#: Scale exponents stay where 2**shift is a normal float32 (see the module docstring).
MAX_SHIFT = 126
#: ATen operators that would run an external kernel (or a fused one) whose summation order is not ours.
REFUSED = ("mv", "addmv", "dot", "vdot", "addr", "addbmm", "_addmm_activation", "_int_mm",
           "_native_multi_head_attention", "_transformer_encoder_layer_fwd")
REFUSED_PARTS = ("linalg_", "mkldnn", "flash", "efficient_attention", "cudnn", "_fft", "cdist", "lstsq", "svd",
                 "cholesky", "triangular_solve", "conv")
#: ATen's own reductions, whatever their names say.
NATIVE = ("linalg_vector_norm",)
#: ATen's functions that MKL's vector math computes for float32 and float64 CPU tensors (the VML entry points
#: libtorch_cpu links, vmsExp, vmdExp, ...; trunc, the other one, is exact however it is computed). Those in
#: portable_math.FUNCTIONS are computed there; the others are refused.
VECTOR_MATH = ("exp", "log", "sqrt", "sin", "cos", "tanh", "erf", "erfc", "erfinv", "tan", "acos", "asin", "atan",
               "log2", "log10")


class PortabilityError(ModelError):
    """An operation that :func:`portable_numerics` cannot compute exactly."""


def operand_bits(k: int) -> int:
    """Significant bits per operand for inner dimension ``k``: ``k`` products of two such
    operands, and every partial sum of them, stay below 2**53."""
    return min(MAX_BITS, (53 - math.ceil(math.log2(max(k, 1)))) // 2)


def _pow2(exponent: torch.Tensor) -> torch.Tensor:
    """2**exponent as float32, built from its bits (exact; ``exponent`` within ±126)."""
    return ((exponent.to(torch.int32) + 127) << 23).view(torch.float32)


def on_grid(x: torch.Tensor, dim: int, bits: int) -> torch.Tensor:
    """``x`` (as float32) with each slice along ``dim`` rounded, half to even, to ``bits``
    significant bits relative to the power of two above the slice's largest magnitude."""
    return _on_grid_float64(x, dim, bits).float()       # grid values of a float32 slice are float32 numbers


def _on_grid_float64(x: torch.Tensor, dim: int, bits: int) -> torch.Tensor:
    """:func:`on_grid`'s values as float64, the products' operands (scaling by a power of two and rounding
    to an integer are exact in float64, and a grid value of a float32 slice is a normal float32)."""
    x = x.float()
    largest = torch.maximum(x.amax(dim=dim, keepdim=True), -x.amin(dim=dim, keepdim=True))
    _, exponent = torch.frexp(largest)
    shift = (bits - exponent).clamp_(-MAX_SHIFT, MAX_SHIFT)
    scaled = (x * _pow2(shift)).round_().double()
    return scaled.mul_(_pow2(-shift).double())


def exact_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` (batched like torch.matmul) on the rounded operands, summed exactly, in ``a``'s dtype."""
    bits = operand_bits(a.shape[-1])
    product = torch.matmul(_on_grid_float64(a, -1, bits), _on_grid_float64(b, -2, bits))
    return product.to(torch.promote_types(a.dtype, b.dtype))


def _add_scaled(bias, product, beta, alpha):
    if alpha != 1:
        product = product * alpha
    return product + (bias if beta == 1 else bias * beta)


def _addmm(bias, a, b, *, beta=1, alpha=1):
    return _add_scaled(bias, exact_matmul(a, b), beta, alpha)


def _conv_geometry(weight, stride, padding, dilation, transposed, groups):
    if transposed or groups != 1 or weight.dim() != 4:
        raise PortabilityError(f"portable products compute 2-D convolutions with groups=1 only (got a "
                               f"{weight.dim() - 2}-D{' transposed' if transposed else ''} convolution with "
                               f"groups={groups})")
    return dict(kernel_size=tuple(weight.shape[2:]), dilation=tuple(dilation), padding=tuple(padding),
                stride=tuple(stride))


def _conv_out_size(x, weight, geometry):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (geometry[k] for k in ("kernel_size", "dilation", "padding", "stride"))
    return ((x.shape[2] + 2 * ph - dh * (kh - 1) - 1) // sh + 1,
            (x.shape[3] + 2 * pw - dw * (kw - 1) - 1) // sw + 1)


def _convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """A 2-D convolution as unfold (im2col: copies, no arithmetic) and one exact product."""
    geometry = _conv_geometry(weight, stride, padding, dilation, transposed, groups)
    cols = torch.nn.functional.unfold(x, **geometry)                       # N, C·kh·kw, L
    out = exact_matmul(weight.reshape(weight.shape[0], -1), cols)          # N, O, L
    if bias is not None:
        out = out + bias[:, None]
    return out.reshape(x.shape[0], weight.shape[0], *_conv_out_size(x, weight, geometry))


def _convolution_backward(grad, x, weight, bias_sizes, stride, padding, dilation, transposed,
                          output_padding, groups, output_mask):
    geometry = _conv_geometry(weight, stride, padding, dilation, transposed, groups)
    g = grad.reshape(grad.shape[0], grad.shape[1], -1)                     # N, O, L
    grad_x = grad_w = grad_b = None
    if output_mask[0]:
        cols = exact_matmul(weight.reshape(weight.shape[0], -1).t(), g)    # N, C·kh·kw, L
        grad_x = torch.nn.functional.fold(cols, tuple(x.shape[2:]), **geometry)
    if output_mask[1]:
        cols = torch.nn.functional.unfold(x, **geometry)                   # N, C·kh·kw, L
        flat_g = g.permute(1, 0, 2).reshape(g.shape[1], -1)                # O, N·L
        flat_cols = cols.permute(0, 2, 1).reshape(-1, cols.shape[1])       # N·L, C·kh·kw
        grad_w = exact_matmul(flat_g, flat_cols).reshape(weight.shape)
    if output_mask[2]:
        grad_b = grad.sum(dim=(0, 2, 3))
    return grad_x, grad_w, grad_b


def _attention_scores(query, key, is_causal, attn_mask, scale):
    """Scaled scores QKᵀ·scale with the causal or given mask applied (float32, [..., L, S])."""
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = exact_matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        future = torch.ones(scores.shape[-2:], dtype=torch.bool, device=scores.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    if attn_mask is not None:
        scores = (scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool
                  else scores + attn_mask)
    return scores, scale


def _attention(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None):
    """CPU flash attention's outputs (output, log-sum-exp per query) by the plain formula; the
    probabilities from ATen's softmax (its own exp, not VML's)."""
    if dropout_p:
        raise PortabilityError("portable products compute attention without dropout")
    scores, _ = _attention_scores(query, key, is_causal, attn_mask, scale)
    # log-sum-exp = x - log_softmax(x) at any x; at the largest it is max + log(sum exp(x - max)), as
    # ATen's log_softmax computes that sum (exactly the value the fused kernel returns)
    top = scores.argmax(dim=-1, keepdim=True)
    lse = (scores.gather(-1, top) - torch.log_softmax(scores, dim=-1).gather(-1, top)).squeeze(-1)
    return exact_matmul(torch.softmax(scores, dim=-1), value), lse


def _attention_backward(grad_out, query, key, value, out, lse, dropout_p, is_causal, *, attn_mask=None, scale=None):
    """Gradients of :func:`_attention`, recomputing its probabilities (the usual recomputation)."""
    scores, scale = _attention_scores(query, key, is_causal, attn_mask, scale)
    probs = torch.softmax(scores, dim=-1)
    grad_value = exact_matmul(probs.transpose(-2, -1), grad_out)
    grad_probs = exact_matmul(grad_out, value.transpose(-2, -1))
    grad_scores = probs * (grad_probs - (grad_out * out).sum(dim=-1, keepdim=True))
    grad_query = exact_matmul(grad_scores, key) * scale
    grad_key = exact_matmul(grad_scores.transpose(-2, -1), query) * scale
    return grad_query, grad_key, grad_value


def _on_vector_math_path(x) -> bool:
    """Whether ATen would hand ``x`` to MKL's vector math: a CPU tensor computed in float32 or float64
    (integers and booleans are computed in the default float dtype; half types and complex numbers in ATen's
    own code)."""
    return (isinstance(x, torch.Tensor) and x.device.type == "cpu"
            and (x.dtype in (torch.float32, torch.float64) or not (x.is_floating_point() or x.is_complex())))


def _give(func, result, args, kwargs):
    """``result`` delivered as ``func`` would: in place (``exp_``), into ``out=``, or as a new tensor."""
    if func._schema.name.endswith("_"):
        return args[0].copy_(result)
    out = kwargs.get("out")
    if out is not None:
        out.resize_(result.shape)
        return out.copy_(result)
    return result


def _vector_math(func, name: str):
    """The route of one of VML's functions: portable_math's form, or a refusal; ATen's own where VML is not
    on the path."""
    function = portable_math.FUNCTIONS.get(name)

    def route(*args, **kwargs):
        if not _on_vector_math_path(args[0]):
            return func(*args, **kwargs)
        if function is None:
            raise PortabilityError(f"portable numerics cannot compute {func.name()} (MKL's vector math computes it "
                                   f"here, with bits that depend on the CPU; portable forms exist for "
                                   f"{', '.join(sorted(portable_math.FUNCTIONS))}); use another precision for this "
                                   "model")
        try:
            return _give(func, function(args[0]), args, kwargs)
        except portable_math.RangeError as exc:
            raise PortabilityError(f"portable numerics cannot compute {func.name()} here: {exc}; use another "
                                   "precision for this model") from None
    return route


def _pow(func):
    """``x ** 0.5`` is VML's square root in ATen (its fast path); other exponents are ATen's own pow."""
    def route(x, exponent, **kwargs):
        if exponent == 0.5 and _on_vector_math_path(x) and not isinstance(exponent, bool):
            return _give(func, portable_math.sqrt(x), (x, exponent), kwargs)
        return func(x, exponent, **kwargs)
    return route


def _logsumexp(x, dim, keepdim=False):
    """ATen's logsumexp (whose kernel calls exp and log) with portable exp and log: shifted by the largest
    finite maximum, as ATen shifts it."""
    if not _on_vector_math_path(x):
        return torch.logsumexp(x, dim, keepdim)
    x = portable_math._as_float(x)
    top = x.amax(dim=dim, keepdim=True)
    top = torch.where(top.isinf(), 0.0, top)
    out = portable_math.log(portable_math.exp(x - top).sum(dim=dim, keepdim=True)) + top
    return out if keepdim else out.squeeze(dim)


EXACT = {aten.mm.default: exact_matmul, aten.bmm.default: exact_matmul, aten.addmm.default: _addmm,
         aten.baddbmm.default: _addmm, aten.convolution.default: _convolution,
         aten.convolution_backward.default: _convolution_backward,
         aten._scaled_dot_product_flash_attention_for_cpu.default: _attention,
         aten._scaled_dot_product_flash_attention_for_cpu_backward.default: _attention_backward}


def _route(func) -> object:
    """How the dispatch mode handles one ATen operator: exactly or portably, by its decomposition, refused, or
    natively."""
    if func in EXACT:
        return EXACT[func]
    base = func._schema.name.removeprefix("aten::")                    # without the overload: exp_, log (of log.out)
    if base.removesuffix("_") in VECTOR_MATH:
        return _vector_math(func, base.removesuffix("_"))
    if (base, func._overloadname) in (("pow", "Tensor_Scalar"), ("pow", "Tensor_Scalar_out"), ("pow_", "Scalar")):
        return _pow(func)
    if base == "logsumexp":
        return lambda x, dim, keepdim=False, **kwargs: _give(func, _logsumexp(x, dim, keepdim), (x,), kwargs)
    if torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), "CompositeImplicitAutograd"):
        return "decompose"         # e.g. linear, matmul, conv2d under inference mode: run their parts here
    if base not in NATIVE and (base in REFUSED or any(part in base for part in REFUSED_PARTS)):
        return "refuse"
    return "native"


class _Portable(TorchDispatchMode):
    """Replaces matrix products by :func:`exact_matmul`, and VML's functions by portable_math's, below
    autograd (forward and backward)."""

    routes: dict = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        route = self.routes.get(func)
        if route is None:
            route = self.routes[func] = _route(func)
        if route == "native":
            return func(*args, **kwargs)
        if route == "decompose":
            with self:
                return func.decompose(*args, **kwargs)
        if route == "refuse":
            raise PortabilityError(f"portable numerics cannot compute {func.name()} exactly (it runs an external "
                                   "or fused kernel); use another precision for this model")
        return route(*args, **kwargs)


class _ComposedModules(TorchFunctionMode):
    """Passes every call through. Its presence alone makes ``nn.MultiheadAttention`` take its composed
    path (linear, attention, linear) instead of the fused ``_native_multi_head_attention`` kernel,
    which it may not when any torch-function mode is active."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


_active = threading.local()
#: oneDNN's switch is one flag for the process: off while any thread's outermost block is open, restored by the last
_onednn = {"blocks": 0, "saved": True}
_onednn_lock = threading.Lock()


@contextlib.contextmanager
def portable_numerics() -> Iterator[None]:
    """Compute every matrix product in this block exactly and VML's functions portably, with oneDNN off
    (see the module docstring); per thread, re-entrant. oneDNN's switch is torch's one global flag: it is
    off for the whole process while any thread's outermost block is open, and the last to close restores it
    (whichever thread that is)."""
    if getattr(_active, "depth", 0):
        _active.depth += 1
        try:
            yield
        finally:
            _active.depth -= 1
        return
    _active.depth = 1
    with _onednn_lock:                            # process-wide: torch has no per-thread switch
        if not _onednn["blocks"]:
            _onednn["saved"] = torch.backends.mkldnn.enabled
            torch.backends.mkldnn.enabled = False
        _onednn["blocks"] += 1
    try:
        with _ComposedModules(), _Portable():
            yield
    finally:
        with _onednn_lock:
            _onednn["blocks"] -= 1
            if not _onednn["blocks"]:
                torch.backends.mkldnn.enabled = _onednn["saved"]
        _active.depth = 0
