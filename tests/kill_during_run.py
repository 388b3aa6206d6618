"""Run one small evaluation and SIGKILL this process at a chosen point (used by test_crash_safety).

    python kill_during_run.py SPEC.json

SPEC holds ``model`` ([config, checkpoint]), ``data`` ([data dir, image dir]), ``out``, ``cache``,
``kwargs`` (for ``crepe_utils.evaluate``), ``kill`` (where, or null to run to the end), ``at`` (the
how-many-th event kills) and optionally ``barrier`` (a file to wait for before starting, so that
two processes start together). The kill points are wrappers installed here, from outside the
library:

* ``images`` / ``texts``: the ``at``-th forward pass of the image / text transformer;
* ``shard``: the ``at``-th cache shard, after half its bytes are written, before the rename;
* ``write``: while writing the per-query table, after ``at`` chunks of 10 rows;
* ``publish``: right after a previous result folder has been moved away, before the new one
  is moved in.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def counter(at: int):
    state = {"n": 0}

    def tick() -> None:
        state["n"] += 1
        if state["n"] == at:
            die()
    return tick


def install(kill: str, at: int, loaded, out: Path) -> None:
    import numpy as np

    from crepe_utils import atomic
    from crepe_utils.engine import core as engine
    from crepe_utils.protocol import retrieval

    tick = counter(at)
    if kill == "images":
        loaded.model.visual.transformer.register_forward_hook(lambda *a: tick())
    elif kill == "texts":
        loaded.model.transformer.register_forward_hook(lambda *a: tick())
    elif kill == "shard":
        real_savez = np.savez
        shards = {"n": 0}

        def savez(fh, **arrays):
            real_savez(fh, **arrays)
            shards["n"] += 1
            if shards["n"] == at:
                fh.flush()
                fh.truncate(fh.tell() // 2)
                die()
        engine.np.savez = savez  # the engine calls np.savez through the numpy module
    elif kill == "write":
        real_frames = retrieval.per_query_frames

        def frames(result, ranks, groups, chunk=retrieval.PER_QUERY_CHUNK):
            for i, frame in enumerate(real_frames(result, ranks, groups, chunk=10)):
                if i == at:
                    die()
                yield frame
        retrieval.per_query_frames = frames
    elif kill == "publish":
        real_rename = os.rename

        def rename(src, dst, *args, **kwargs):
            real_rename(src, dst, *args, **kwargs)
            if Path(src).name == out.name and str(dst).endswith(".replaced"):
                die()                  # the old folder is gone, the new one not yet in place
        atomic.os.rename = rename
    elif kill:
        raise SystemExit(f"unknown kill point {kill!r}")


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    from crepe_utils.evaluation import evaluate
    from crepe_utils.models import load_model

    cfg, ckpt = spec["model"]
    data_dir, image_dir = spec["data"]
    loaded = load_model(Path(cfg).stem, pretrained=ckpt, model_config=cfg, device="cpu")
    kwargs = spec.get("kwargs", {})
    out = Path(spec["out"])
    target = out / Path(cfg).stem / "productivity"
    if spec.get("kill"):
        install(spec["kill"], int(spec.get("at", 1)), loaded, target)
    if spec.get("barrier"):
        while not Path(spec["barrier"]).exists():
            time.sleep(0.01)
    evaluate(loaded, "productivity", model_config=cfg, pretrained=ckpt, data_dir=data_dir, image_dir=image_dir, out=str(out), cache_dir=spec["cache"], kind="fixture", device="cpu", progress=False, **kwargs)


if __name__ == "__main__":
    main()
