"""Progress bars that suit where they are shown; a drop-in for ``tqdm.tqdm``.

- a terminal: tqdm's live bar;
- a notebook kernel: tqdm's widget bar when ipywidgets is installed, otherwise none (a text bar
  would leave every one of its updates in the executed notebook, and tqdm.auto warns);
- anything else (a log file, CI): one update a minute at most (a new postfix, such as a loss,
  waits for it), so that a long run writes a few lines, not thousands.
"""
from __future__ import annotations

import sys

from .kernel import has_widgets, in_notebook_kernel
from tqdm import std

#: Seconds between two updates of a bar written to a log rather than a terminal.
LOG_INTERVAL_S = 60.0


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _log_bar_class():

    class LogBar(std.tqdm):
        """tqdm's bar, except that a new description or postfix waits for the next regular update."""

        def set_postfix(self, ordered_dict=None, refresh=False, **kwargs):
            super().set_postfix(ordered_dict, refresh=False, **kwargs)

        def set_postfix_str(self, s="", refresh=False):
            super().set_postfix_str(s, refresh=False)

        def set_description(self, desc=None, refresh=False):
            super().set_description(desc, refresh=False)

        def set_description_str(self, desc=None, refresh=False):
            super().set_description_str(desc, refresh=False)

    return LogBar


def tqdm(*args, **kwargs):
    """``tqdm.tqdm(*args, **kwargs)``, shown as this module's docstring says."""

    if kwargs.get("disable"):
        return std.tqdm(*args, **kwargs)
    if in_notebook_kernel():
        if has_widgets():
            from tqdm.notebook import tqdm as widget_bar
            return widget_bar(*args, **kwargs)
        return std.tqdm(*args, **{**kwargs, "disable": True})
    if _isatty(kwargs.get("file") or sys.stderr):
        return std.tqdm(*args, **kwargs)
    return _log_bar_class()(*args, **{"mininterval": LOG_INTERVAL_S, "maxinterval": LOG_INTERVAL_S, **kwargs})
