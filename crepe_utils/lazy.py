"""Modules imported on first use: ``pd = lazy("pandas")`` reads like ``import pandas as pd``, but pandas loads
only when an attribute of ``pd`` is first read. The command line's help and the benchmark declarations it
lists import the modules that use pandas, numpy's heavy neighbours or scipy; this keeps them from loading
what printing help never uses (``tests/test_cli_speed.py``)."""
from __future__ import annotations

import importlib
import types


class LazyModule(types.ModuleType):
    """Stands for module ``name`` until an attribute is read; then holds the module's names itself."""

    def __getattr__(self, attribute: str):
        module = importlib.import_module(self.__name__)
        self.__dict__.update(module.__dict__)          # later reads find the names directly
        return getattr(module, attribute)


def lazy(name: str) -> types.ModuleType:
    return LazyModule(name)
