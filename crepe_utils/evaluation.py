"""Evaluate a model on a benchmark: one path for every benchmark and every model.

``crepe_utils.evaluate(model, benchmark, ...)`` (this module's :func:`evaluate`) is what notebooks
call; ``python -m crepe_utils evaluate``, ``evaluate-paper`` and ``make evaluate`` call it too. The
steps: the benchmark's queries (:mod:`crepe_utils.benchmarks`) → the model's scores (the engine, or
a text-only scorer that needs no images) → the benchmark's scoring rule (:mod:`crepe_utils.protocol`)
→ one result folder with its provenance (:mod:`crepe_utils.results`).

What a call describes lives in four declared objects, each field of which may also be passed as a
keyword (``evaluate(..., out="results", hn_types=("atom",), precision="bf16")``):

* :class:`Run`: where the data are, where the result goes and how it is labelled, the cache;
* :class:`crepe_utils.protocol.Selection`: which part of the benchmark, by its own options;
* :class:`crepe_utils.settings.EvaluationSettings`: every setting that can change a number;
* the model: a registry key, an open_clip architecture (with ``pretrained``/``model_config`` in the
  Run), ``blind:<scorer>``, or a model already loaded.
"""
from __future__ import annotations

import dataclasses
import os
import time
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from . import benchmarks, paths
from .protocol.benchmark import Selection, Sources
from .engine import core as engine
from .errors import CrepeError, CrepeWarning, DataError
from .models import load_model, resolve
from .models.spec import LoadedModel, check_device
from .results import provenance
from .results.store import check_kind, result_dir, sets_replaced, write_result
from .settings import EvaluationSettings, option_name
from .lazy import lazy

pd = lazy("pandas")


class EvaluationError(CrepeError, ValueError):
    """A call that names no such setting, selection or run field; the message lists the ones there are."""


class UnscoredSetWarning(CrepeWarning):
    """A selected set (or subset) with no scored query: its summary row is kept, with a count of 0."""


class ReplacedResultWarning(CrepeWarning):
    """A run wrote its result over an earlier one of the same model and benchmark that held sets it does not."""


@dataclass(frozen=True)
class Run:
    """Where a run reads and writes, how its result is labelled, and how its model is found."""

    data_dir: str | os.PathLike | None = None     #: the benchmark's data (default: its folder under $CREPE_DATA)
    image_dir: str | os.PathLike | None = None    #: its images (default: $VG_IMAGES, $COCO_IMAGES, ...)
    out: str | os.PathLike = "results/evaluated"
    cache_dir: str | os.PathLike | bool | None = None   #: embedding cache ($CREPE_CACHE); False: none
    kind: str = "evaluated"                       #: evaluated / toy / fixture (crepe_utils.results.store.KINDS)
    label: str = ""
    pretrained: str | None = None                 #: open_clip tag, URL or checkpoint for an architecture name
    model_config: str | None = None               #: model-config JSON of a custom architecture
    progress: bool = True
    shared: object = None                         #: one engine.SharedInputs across a multi-model run

    def __post_init__(self):
        for name, types in _RUN_TYPES.items():
            value = getattr(self, name)
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types and value is not False):
                allowed = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
                raise EvaluationError(f"evaluate(): {name}={value!r} is not allowed: it must be {allowed}")


_PATH = (str, os.PathLike)
_NONE = type(None)
#: what each field of a Run may hold (cache_dir: also False, no cache)
_RUN_TYPES = {"data_dir": (*_PATH, _NONE), "image_dir": (*_PATH, _NONE), "out": _PATH,
              "cache_dir": (*_PATH, _NONE, bool), "kind": (str,), "label": (str,), "pretrained": (str, _NONE),
              "model_config": (*_PATH, _NONE), "progress": (bool,)}
_TYPE_NAMES = {str: "a string", os.PathLike: "a path", _NONE: "None", bool: "False (no cache)"}


def _fields(cls) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def _route(bench, run: Run | None, selection: Selection | None, settings: EvaluationSettings | None,
           keywords: dict) -> tuple[Run, Selection, EvaluationSettings]:
    """The run, the benchmark's checked selection and the settings, with ``keywords`` applied to whichever
    declares each name (the benchmark's options are its selection's)."""
    if run is not None and not isinstance(run, Run):
        raise EvaluationError(f"evaluate(): run= must be a Run (or None), got {type(run).__name__}; its fields can "
                              "also be passed as keywords")
    if selection is not None and not isinstance(selection, Mapping):
        raise EvaluationError(f"evaluate(): selection= must be a Selection or a mapping of option → value (or None), "
                              f"got {type(selection).__name__}; its options can also be passed as keywords")
    options = {o.name for o in bench.options}
    unknown = sorted(set(keywords) - _fields(Run) - options - _fields(EvaluationSettings))
    if unknown:
        raise EvaluationError(f"evaluate() has no {', '.join(map(repr, unknown))}; it takes the fields of Run "
                              f"({', '.join(sorted(_fields(Run)))}), {bench.name}'s selection options "
                              f"({', '.join(sorted(options)) or 'none'}) and EvaluationSettings "
                              f"({', '.join(sorted(_fields(EvaluationSettings)))})")
    run = dataclasses.replace(run or Run(), **{k: v for k, v in keywords.items() if k in _fields(Run)})
    chosen = bench.selection(selection, **{k: v for k, v in keywords.items() if k in options})
    settings = EvaluationSettings.build(settings, **{k: v for k, v in keywords.items()
                                                     if k in _fields(EvaluationSettings)})
    refused = bench.refused_settings(settings)
    if refused:
        fields = {f.name: f for f in dataclasses.fields(EvaluationSettings)}
        named = ", ".join(f"{r} ({option_name(fields[r])})" if r in fields else r for r in refused)
        raise EvaluationError(f"{bench.name} does not apply {named} (its scoring rule "
                              f"{bench.rule.name!r} and reader take: "
                              f"{', '.join(sorted(bench.honours | bench.rule.honours)) or 'none of these'}); "
                              "leave it at its default")
    return run, chosen, settings


def _device(model, settings: EvaluationSettings) -> str:
    """The one device of the run: a loaded model's own, else the setting's (``auto`` resolved), checked."""
    if isinstance(model, LoadedModel):
        own = str(model.device)
        if settings.device not in ("auto", own):
            raise EvaluationError(f"the model is loaded on {own}, but device={settings.device!r} was asked for; "
                                  "load it there, or leave device out")
        return own
    return check_device(settings.device)


def evaluate(model: str | LoadedModel, benchmark: str, *, run: Run | None = None, selection: Selection | None = None,
             settings: EvaluationSettings | None = None, **keywords) -> pd.DataFrame:
    """Evaluate ``model`` on ``benchmark``; write its result folder under ``run.out``; return the summary table
    (its folder in ``.attrs["result_dir"]``)."""
    t0 = time.time()
    bench = benchmarks.get(benchmark)
    run, selection, settings = _route(bench, run, selection, settings, keywords)
    check_kind(run.kind)
    if not isinstance(model, (str, LoadedModel)):
        raise EvaluationError(f"evaluate(): model must be a name (python -m crepe_utils models) or a loaded model, "
                              f"got {type(model).__name__}")
    device = _device(model, settings)                       # before anything is read or loaded
    spec = model.spec if isinstance(model, LoadedModel) else resolve(model, run.pretrained, run.model_config)
    selection = bench.selection(bench.for_model(selection, spec))     # checked again: the model may choose
    queries = _queries(bench, run, selection, settings)     # the data are read before any weights load
    _refuse_if_empty(bench, selection, queries, None)
    loaded = model if isinstance(model, LoadedModel) else load_model(
        model, run.pretrained, run.model_config, device=device, precision=settings.precision)
    used = settings.resolved(device, loaded.spec)     # what the run uses (and records): nothing left to "auto"
    rule = bench.rule
    result = _scores(loaded, queries, used, run, rule.score_dtype)
    _refuse_if_empty(bench, selection, queries, result)
    tables = rule.evaluate(result, queries, used, loaded.spec.key)
    _refuse_if_empty(bench, selection, queries, result, tables)
    manifest = _manifest(bench, loaded, run, selection, queries, result, used, tables, time.time() - t0)
    directory = result_dir(run.out, loaded.spec.key, bench.folder(selection))
    dropped = sets_replaced(directory, tables)         # read before the folder is replaced
    folder = write_result(directory, tables, manifest)
    for line in tables.unscored:        # once the result holds their rows
        warnings.warn(f"{bench.name}: {line}", UnscoredSetWarning, stacklevel=2)
    if dropped:
        warnings.warn(_replaced_line(bench, folder, dropped), ReplacedResultWarning, stacklevel=2)
    tables.summary.attrs["result_dir"] = str(folder)
    return tables.summary


def _replaced_line(bench, folder, dropped: list[str]) -> str:
    shown = ", ".join(dropped[:5]) + (f" and {len(dropped) - 5} more" if len(dropped) > 5 else "")
    return (f"{bench.name}: {folder} held an earlier result with {len(dropped)} set(s) this run did not select "
            f"({shown}); it is replaced by this run's. Evaluate every set in one run, or pass another --out (out=) "
            "to keep both")


def _refuse_if_empty(bench, selection: Selection, queries, result, tables=None) -> None:
    """A :class:`DataError` saying which selection and folder left nothing to score: no query read, every
    query skipped by the engine (``result``), or no example whole (``tables``); nothing is written then."""
    where = f"nothing to score: {bench.name} ({bench.describe(selection)}) in {queries.data.get('data_dir')}"
    skipped_rows = Counter(i.kind for i in queries.issues if i.skipped)
    if result is None and not queries.queries:
        rows = sum(queries.files.values())
        files = ", ".join(f"{name} ({n} read)" for name, n in sorted(queries.files.items())[:10]) or "no file"
        if rows == 0:
            raise DataError(f"{where}: the selected files hold no rows or items: {files}. Re-download them, or "
                            "select other sets.")
        if skipped_rows:
            raise DataError(f"{where}: every one of the {rows} rows read was skipped ({_counted(skipped_rows)}): "
                            f"{files}. Fix those rows, or select other sets.")
        raise DataError(f"{where}: none of the {rows} rows read forms a query of the selected sets: {files}. "
                        "Select other sets.")
    if result is not None and (not result.queries or (tables is not None and not tables.n_scored)):
        skipped = (f"every one of its {len(queries.queries)} queries was skipped" if not result.queries else
                   f"{len(result.skipped)} of its {len(queries.queries)} queries were skipped, leaving no example "
                   "with both images")
        index = queries.images() if queries.images is not None else None
        remedy = f"{index.remedy}, or run" if index is not None else "Run"
        raise DataError(f"{where}: {skipped} ({_counted(Counter(why for _, why in result.skipped))}; images under "
                        f"{getattr(index, 'root', queries.data.get('image_dir'))}). {remedy} without "
                        "--skip-missing-images / --skip-bad-rows to see which images or rows they are.")


def _counted(counts: Counter) -> str:
    return ", ".join(f"{kind}: {n}" for kind, n in counts.most_common())


def _queries(bench, run: Run, selection: Selection, used: EvaluationSettings):
    """The benchmark's queries, read once per multi-model run (``run.shared``)."""
    sources = Sources(run.data_dir, run.image_dir)

    if run.shared is None:
        return bench.read(sources, selection, used)
    key = ("queries", bench.name, str(sources), selection, used.limit, used.on_bad_row, used.empty_negatives,
           used.skip_missing_images)
    return run.shared.memo(key, lambda: bench.read(sources, selection, used))


def _scores(loaded, queries, used: EvaluationSettings, run: Run, score_dtype):
    """Every candidate's score: by the engine from the images and captions, or by a text-only scorer."""
    if hasattr(loaded.model, "score_texts"):             # blind scorers read no image
        scores, stats = loaded.model.score_texts(queries.queries)
        return engine.EngineResult.of_scores(queries.queries, scores.astype(score_dtype), stats)
    cache = paths.cache_dir(run.cache_dir) / "embeddings" if run.cache_dir is not False else None
    options = engine.RunOptions.of(used, score_dtype=score_dtype)
    return engine.run(loaded, queries.queries, queries.images(), options, cache_dir=cache, progress=run.progress,
                      shared=run.shared)


def _manifest(bench, loaded, run: Run, selection: Selection, queries, result, used: EvaluationSettings, tables,
              seconds: float) -> dict:
    run_stats = {k: v for k, v in result.stats.items() if k.startswith(engine.RUN_STATS)}
    return {
        **provenance.manifest(run.kind, run.label, loaded.spec, seconds=seconds, run_stats=run_stats),
        "benchmark": bench.name, "scoring": bench.rule.name, "groups": list(bench.groups), "caveat": loaded.spec.caveat,
        "selection": dict(selection),
        "data": {**queries.data, "skipped_by_engine": dict(Counter(why for _, why in result.skipped))},
        # the settings as the run used them, then what the engine found (overlength texts, ...)
        "engine": {**used.record(), **{k: v for k, v in result.stats.items() if not k.startswith(engine.RUN_STATS)}},
        **tables.headline,
    }
