"""The settings of an evaluation, any benchmark: every choice that can change its numbers, declared once.

:class:`EvaluationSettings` is the one list. Each field carries its default, help text and
allowed values; from it come the command-line options (:func:`add_arguments`), the keyword
overrides of :func:`crepe_utils.evaluate` (:meth:`EvaluationSettings.build`), the validation
(``__post_init__``) and the settings recorded in a result's manifest (:meth:`EvaluationSettings.record`).

Not settings, because they cannot change a result: where things are (``data_dir``, ``image_dir``,
``out``, ``cache_dir``: the cache is keyed by everything that matters, and a cached run writes
the same files as an uncached one), how it is labelled (``kind``, ``label``) or shown
(``progress``). What is evaluated (the model, the benchmark and its selection options:
:class:`crepe_utils.protocol.Selection`) is recorded in the manifest's ``model``, ``selection`` and ``data``
sections instead. Which settings a benchmark applies is its declaration's (``honours``, its rule's ``honours``):
one set away from its default that a benchmark does not apply is refused, never ignored.
"""
from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass, field

from .engine import threads
from .engine import precisions
from .engine.truncation import TRUNCATIONS
from .errors import CrepeError

TIE_POLICIES = ("pessimistic", "optimistic")
ON_BAD_ROW = ("raise", "skip")
EMPTY_NEGATIVES = ("skip", "keep", "error")


class SettingsError(CrepeError, ValueError):
    """An evaluation setting with a value it cannot take; the message names the setting."""


def _setting(default, help: str, *, choices=None, type=None, minimum=None, optional=False,
             flag: tuple[str, object] | None = None, record_as: str | None = None):
    """A field of :class:`EvaluationSettings` with what the CLI and the checks need to know.

    ``type`` is the value's type (int, str or bool; from the default when that is not None);
    ``minimum`` the least allowed int; ``optional`` that None is allowed (and means "resolve it
    from the model or machine"). ``flag`` = (option, value) makes the option a switch that sets
    ``value`` (``--skip-bad-rows`` sets on_bad_row="skip"). ``record_as`` is the manifest key when
    it is not the field's name.
    """
    type = type or default.__class__
    return field(default=default, metadata={"help": help, "choices": choices, "type": type, "minimum": minimum,
                                            "optional": optional or default is None, "flag": flag,
                                            "record_as": record_as})


@dataclass(frozen=True)
class EvaluationSettings:
    """Every setting that can change a result (see the module docstring for what is not one)."""

    device: str = _setting("auto", "cuda, cpu, cuda:1 ... (default: cuda when available)")
    precision: str = _setting("fp32", "fp32 (default, faithful to the paper), tf32, bf16 or fp16 autocast, "
                              "fp16-weights, or portable (exact matrix products, portable math functions: the "
                              "same bits on any x86-64 CPU)",
                              choices=precisions.PRECISIONS)
    batch_size: int = _setting(256, "images per batch", minimum=1)
    text_batch_size: int = _setting(512, "captions per batch", minimum=1)
    num_workers: int | None = _setting(None, "image decoding workers (default: up to 8 on CUDA, else 0)",
                                       type=int, minimum=0)
    limit: int | None = _setting(None, "at most N queries per retrieval set, N >= 1 (smoke tests; default: all)",
                                 type=int, minimum=1)
    tie_policy: str = _setting("pessimistic", "how a tie with a negative counts for R@k (default: %(default)s)",
                               choices=TIE_POLICIES)
    truncation: str | None = _setting(None, "over-long captions (default: the model family's official policy)",
                                      type=str, choices=TRUNCATIONS)
    # The engine records the cut in effect (a family may not support it) as "length_cut" beside it.
    length_cut: bool = _setting(True, "encode every caption at the full 77 tokens", record_as="length_cut_requested")
    skip_missing_images: bool = _setting(False, "evaluate without queries whose image is missing or unreadable "
                                         "(counted in the results)")
    on_bad_row: str = _setting("raise", "skip malformed CSV rows and regions that cannot be encoded, e.g. a box "
                               "wholly outside its image (counted in the results)", choices=ON_BAD_ROW,
                               flag=("--skip-bad-rows", "skip"))
    empty_negatives: str = _setting("skip", "rows without hard negatives (a query of one candidate): skip "
                                    "(default), keep (as an official code may) or error", choices=EMPTY_NEGATIVES)
    n_boot: int = _setting(5000, "bootstrap resamples of the intervals (R@1, and every rule's scores)", minimum=1)

    def __post_init__(self):
        for f in dataclasses.fields(self):
            _check(f, getattr(self, f.name))

    @classmethod
    def build(cls, settings: EvaluationSettings | None = None, **overrides) -> EvaluationSettings:
        """``settings`` (default: the defaults) with ``overrides`` applied; an unknown name is an error."""
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(overrides) - set(names))
        if unknown:
            raise SettingsError(f"unknown evaluation setting(s) {', '.join(map(repr, unknown))}; the settings are: "
                                f"{', '.join(names)}")
        if settings is not None and not isinstance(settings, cls):
            raise SettingsError(f"settings must be an {cls.__name__}, got {settings.__class__.__name__}")
        return dataclasses.replace(settings or cls(), **overrides)

    def resolved(self, device: str, spec) -> EvaluationSettings:
        """These settings with what was left to the machine and the model filled in, as the run uses them:
        the run's one ``device`` (already checked) and the model's ``spec`` (its official truncation)."""
        workers = self.num_workers
        if workers is None:
            workers = min(8, threads.available_cores()) if device.startswith("cuda") else 0
        return dataclasses.replace(self, device=device, num_workers=workers,
                                   truncation=self.truncation or spec.truncation)

    @classmethod
    def default(cls, name: str):
        """The default of setting ``name``."""
        return cls.__dataclass_fields__[name].default

    def record(self) -> dict:
        """The settings as the manifest records them: ``asdict`` under each field's manifest key."""
        return {f.metadata["record_as"] or f.name: value for f, value in
                zip(dataclasses.fields(self), dataclasses.astuple(self))}


def _check(f: dataclasses.Field, value) -> None:
    """Raise a :class:`SettingsError` naming ``f`` unless ``value`` is one it allows."""
    meta = f.metadata
    if value is None and meta["optional"]:
        return
    kind = meta["type"]
    ok_type = isinstance(value, bool) if kind is bool else (
        isinstance(value, numbers.Integral) and not isinstance(value, bool) if kind is int else isinstance(value, kind))
    allowed = (f"one of {', '.join(map(repr, meta['choices']))}" if meta["choices"]
               else f"an integer >= {meta['minimum']}" if meta["minimum"] is not None
               else {bool: "True or False", str: "a string", int: "an integer"}[kind])
    if meta["optional"]:
        allowed += " or None"
    if (not ok_type or (meta["choices"] and value not in meta["choices"])
            or (meta["minimum"] is not None and value < meta["minimum"])):
        raise SettingsError(f"evaluation setting {f.name}={value!r} ({option_name(f)}) is not allowed: it must be "
                            f"{allowed}")


# ------------------------------------------------------------------------------ command line

def option_name(f: dataclasses.Field) -> str:
    """The command-line option of one setting."""
    if f.metadata["flag"]:
        return f.metadata["flag"][0]
    if f.metadata["type"] is bool and f.default is True:
        return "--no-" + f.name.replace("_", "-")
    return "--" + f.name.replace("_", "-")


def add_arguments(parser) -> None:
    """One option per field of :class:`EvaluationSettings` (destination: the field's name)."""
    for f in dataclasses.fields(EvaluationSettings):
        meta, name = f.metadata, option_name(f)
        if meta["flag"]:
            parser.add_argument(name, dest=f.name, action="store_const", const=meta["flag"][1], default=f.default,
                                help=meta["help"])
        elif meta["type"] is bool:
            parser.add_argument(name, dest=f.name, action="store_false" if f.default else "store_true",
                                help=meta["help"])
        else:
            parser.add_argument(name, dest=f.name, type=meta["type"], default=f.default, choices=meta["choices"],
                                help=meta["help"])


def from_args(args) -> EvaluationSettings:
    """The settings that parsed options (from :func:`add_arguments`) ask for."""
    return EvaluationSettings(**{f.name: getattr(args, f.name) for f in dataclasses.fields(EvaluationSettings)})
