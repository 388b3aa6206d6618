"""A stand-in for another CPU's MKL vector math: a shared library, preloaded into a test's child process,
that wraps the VML entry points libtorch_cpu exports (``vmsExp``, ``vmdLn``, ...), counts the elements each
call computes and, with ``VMLSHIM_FLIP=1``, flips the last bit of every result.

On an Intel processor VML's code path (its vendor, instruction set and ``MKL_CBWR``) moves results by about
one unit in the last place; on an AMD one ``MKL_CBWR`` changes nothing, so a test that only varies
``MKL_CBWR`` would pass there whatever the code did. With the shim the change happens on every x86-64
machine: a computation that reaches VML shows it in its bits and in the count (``vmlshim_total``, readable
with ctypes from the child process).

:func:`build` compiles it with the system's C compiler, or returns None (with the reason) where that
cannot be done: no compiler, not Linux, or a torch without MKL's vector math.
"""
from __future__ import annotations

import platform
import shutil
import subprocess
from pathlib import Path

#: VML's names of the functions ATen hands it (crepe_utils.engine.portable.VECTOR_MATH, and trunc).
FUNCTIONS = ("Exp", "Ln", "Sqrt", "Sin", "Cos", "Tanh", "Erf", "Erfc", "ErfInv", "Tan", "Acos", "Asin", "Atan",
             "Log2", "Log10", "Trunc")

_HEAD = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
long vmlshim_total = 0;
static int flip = -1;
static void *real_symbol(const char *name) {
  void *lib = dlopen("libtorch_cpu.so", RTLD_NOW | RTLD_NOLOAD);
  void *found = lib ? dlsym(lib, name) : 0;
  if (!found) { fprintf(stderr, "vmlshim: libtorch_cpu.so has no %s\n", name); abort(); }
  return found;
}
static void perturb(void *r, long n, int size) {
  if (flip < 0) flip = getenv("VMLSHIM_FLIP") != 0;
  if (!flip) return;
  for (long i = 0; i < n; i++) {
    if (size == 4) ((uint32_t *)r)[i] ^= 1u; else ((uint64_t *)r)[i] ^= 1u;
  }
}
"""

_WRAPPER = r"""
void {name}(int n, const {t} *a, {t} *r, long long mode) {{
  static void (*real)(int, const {t} *, {t} *, long long);
  if (!real) real = real_symbol("{name}");
  vmlshim_total += n;
  real(n, a, r, mode);
  perturb(r, n, {size});
}}
"""


def source() -> str:
    wrappers = [_WRAPPER.format(name=f"{prefix}{function}", t=t, size=size)
                for function in FUNCTIONS for prefix, t, size in (("vms", "float", 4), ("vmd", "double", 8))]
    return _HEAD + "".join(wrappers)


def build(folder: Path) -> tuple[Path | None, str]:
    """(the compiled shim, "") or (None, why not)."""
    import torch
    if platform.system() != "Linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        return None, "the shim preloads into Linux x86-64 processes"
    library = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    if not library.is_file() or not _exports(library):
        return None, "this torch calls no MKL vector math (no vmsExp in libtorch_cpu.so)"
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None, "no C compiler to build the shim"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vmlshim.c").write_text(source())
    done = subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(folder / "vmlshim.so"),
                           str(folder / "vmlshim.c"), "-ldl"], capture_output=True, text=True)
    if done.returncode:
        return None, f"the shim did not compile: {done.stderr.strip()[:300]}"
    return folder / "vmlshim.so", ""


def _exports(library: Path) -> bool:
    """Whether the (already loaded) library exports VML's float32 exp."""
    import ctypes
    try:
        return hasattr(ctypes.CDLL(str(library)), "vmsExp")
    except OSError:
        return False
