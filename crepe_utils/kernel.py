"""Whether code runs inside a Jupyter kernel, which decides how figures and progress are shown."""
from __future__ import annotations

import importlib.util
import sys


def in_notebook_kernel() -> bool:
    """True inside a Jupyter kernel (a notebook run by Jupyter or papermill), False in scripts and consoles."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def has_widgets() -> bool:
    """True when ipywidgets is installed (notebook progress bars need it)."""
    return importlib.util.find_spec("ipywidgets") is not None
