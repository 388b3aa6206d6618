"""Where the evaluation time goes: the engine against a naive per-query loop and its compute floor.

    .venv/bin/python speed/bench_engine.py                 # both models, CPU
    .venv/bin/python speed/bench_engine.py --models tiny   # quick
    .venv/bin/python speed/bench_engine.py --device cuda --precision bf16

Data: CREPE's real productivity queries (``--data-dir``, default: $CREPE_DATA/crepe),
restricted to the queries of the first ``--images`` image ids so that crops and captions are
shared across HN types and complexities exactly as in the full benchmark. Images are synthetic
JPEGs of Visual Genome's size (800 × 600 noise); models are randomly initialised (a tiny CLIP and
a ViT-B-32-sized one) loaded through the real checkpoint path. Nothing here is a benchmark *score*.

Printed, per model:

* queries/s of the naive loop (one query at a time: its crop, then its captions at 77 tokens)
  and of the engine (deduplicated, batched, length-cut), and their ratio;
* the compute floor: forward time of the encoders alone on the distinct crops and captions
  (tensors prepared beforehand, no decoding), at 77 tokens and length-cut; the engine's wall time
  as a multiple of the 77-token floor, with and without length cutting;
* the work no engine can skip (decoding each distinct image, preprocessing each distinct crop,
  tokenizing each distinct caption with the engine's tokenizer, ``crepe_utils.models.fast_tokenizer``
  for open_clip's; one core each) and the bound it sets: on the CPU, that work plus the length-cut
  encoder floor at one thread (its CPU time), spread perfectly over all cores; on a GPU, the larger
  of the CPU work over the cores and the encoder floor. From it, the best ratio to the naive loop
  that this machine allows (``attainable_vs_naive``) and the engine's time over it
  (``engine_over_attainable``);
* whether length cutting kept every rank identical, and the largest score change;
* peak memory (RSS, a fresh process each) as the query list grows 1×, 4× and 16×.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from crepe_utils.benchmarks.crepe.datasets import CREPE_CSVS

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

TINY = {"embed_dim": 32,
        "vision_cfg": {"image_size": 32, "layers": 1, "width": 64, "head_width": 32, "patch_size": 16},
        "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1}}


def load_subset(data_dir, n_images: int):
    from crepe_utils.benchmarks.crepe import queries as D
    qs = D.load_productivity(data_dir).queries
    ids = sorted({q.image_id for q in qs}, key=int)[:n_images]
    keep = set(ids)
    return [q for q in qs if q.image_id in keep]


def make_images(queries, root: Path, size=(800, 600)) -> Path:
    from PIL import Image
    rng = np.random.default_rng(0)
    folder = root / "VG_100K"
    folder.mkdir(parents=True, exist_ok=True)
    extent: dict[str, tuple[int, int]] = {}          # each image at least as large as its boxes reach
    for q in queries:
        w, h = extent.get(q.image_id, size)
        extent[q.image_id] = (max(w, int(q.box[0] + q.box[2])), max(h, int(q.box[1] + q.box[3])))
    for image_id in sorted(extent):
        w, h = extent[image_id]
        # smooth noise compresses like a photograph more than white noise does
        small = rng.integers(0, 256, size=(h // 8, w // 8, 3), dtype=np.uint8)
        Image.fromarray(small).resize((w, h), Image.BILINEAR).save(folder / f"{image_id}.jpg", quality=90)
    return root


def images_for(queries, kind: str, workdir: Path) -> Path:
    """The synthetic images of a run; with --images-dir, made once there and reused by later runs."""
    if not ARGS.images_dir:
        return make_images(queries, workdir / f"images-{kind}")
    root = Path(ARGS.images_dir) / f"{kind}-{len(queries)}"
    if not (root / "done").exists():
        make_images(queries, root)
        (root / "done").touch()
    return root


def make_model(kind: str, workdir: Path):
    import open_clip
    import torch
    from crepe_utils.models import load_model, save_checkpoint
    torch.manual_seed(0)
    if kind == "tiny":
        cfg = workdir / "bench-tiny.json"
        cfg.write_text(json.dumps(TINY))
        open_clip.add_model_config(cfg)
        model = open_clip.create_model("bench-tiny", pretrained=None)
        ckpt = save_checkpoint(model, workdir / "bench-tiny.pt")
        return load_model("bench-tiny", str(ckpt), str(cfg), device=ARGS.device)
    model = open_clip.create_model("ViT-B-32", pretrained=None)
    ckpt = save_checkpoint(model, workdir / "vit-b-32-random.pt")
    return load_model("ViT-B-32", str(ckpt), device=ARGS.device)


def sync():
    import torch
    if ARGS.device.startswith("cuda"):
        torch.cuda.synchronize()


def naive(loaded, queries, image_dir: Path) -> float:
    """The official protocol's shape: one query at a time, its own crop and captions."""
    import torch
    import torch.nn.functional as F
    from crepe_utils.engine.precisions import precision_context
    from crepe_utils.imagesets.visual_genome import ImageIndex, load_crop
    index = ImageIndex(image_dir)
    t0 = time.perf_counter()
    with torch.inference_mode(), precision_context(ARGS.precision, loaded.device):
        for q in queries:
            pixels = loaded.preprocess(load_crop(index.path(q.image_id), q.box)).unsqueeze(0).to(loaded.device)
            img = F.normalize(loaded.model.encode_image(pixels).float(), dim=-1)
            txt = F.normalize(loaded.model.encode_text(loaded.tokenizer(list(q.candidates)).to(loaded.device)).float(), dim=-1)
            (txt @ img[0]).argsort(descending=True)
    sync()
    return time.perf_counter() - t0


def floor(loaded, queries, image_dir: Path) -> tuple[float, float, float]:
    """Encoder forward time alone on the distinct crops and captions (inputs prepared beforehand):
    (images, texts at 77 tokens, texts length-cut)."""
    import torch
    from crepe_utils.engine import encoders, precisions, tokenizing
    from crepe_utils.imagesets.visual_genome import ImageIndex, load_crop
    index = ImageIndex(image_dir)
    crops = sorted({(q.image_id, q.box) for q in queries})
    pixels = torch.stack([loaded.preprocess(load_crop(index.path(i), b)) for i, b in crops])
    texts = sorted({c for q in queries for c in q.candidates})
    ids = tokenizing.tokenize(loaded.tokenizer, texts).ids
    ids = sorted(set(ids), key=lambda t: (len(t), t))
    times = []
    with torch.inference_mode(), precisions.precision_context(ARGS.precision, loaded.device):
        sync()
        t0 = time.perf_counter()
        for s in range(0, len(pixels), ARGS.image_batch):
            loaded.model.encode_image(pixels[s:s + ARGS.image_batch].to(loaded.device))
        sync()
        times.append(time.perf_counter() - t0)
        for cut in (False, True):
            forward = encoders.cut_text_forward(loaded.model) if cut else None
            batches = []
            for s in range(0, len(ids), ARGS.text_batch):
                chunk = ids[s:s + ARGS.text_batch]
                width = max(len(t) for t in chunk) if cut else 77
                tok = torch.zeros(len(chunk), width, dtype=torch.long)
                for k, t in enumerate(chunk):
                    tok[k, :len(t)] = torch.tensor(t)
                batches.append(tok.to(loaded.device))
            sync()
            t0 = time.perf_counter()
            for tok in batches:
                forward(tok) if forward is not None else loaded.model.encode_text(tok)
            sync()
            times.append(time.perf_counter() - t0)
    return tuple(times)


def serial_work(loaded, queries, image_dir: Path) -> dict:
    """CPU seconds of the work no engine can skip: decode each distinct image once, crop and
    preprocess each distinct crop once, tokenize each distinct caption once (one core, no model)."""
    from crepe_utils.engine import tokenizing
    from crepe_utils.imagesets.visual_genome import ImageIndex
    from crepe_utils.engine.images import crop, open_rgb
    index = ImageIndex(image_dir)
    boxes: dict[str, set] = {}
    for q in queries:
        boxes.setdefault(q.image_id, set()).add(q.box)
    t_decode = t_prep = 0.0
    for image_id, bs in boxes.items():
        t0 = time.perf_counter()
        img = open_rgb(index.path(image_id))
        t1 = time.perf_counter()
        for b in bs:
            loaded.preprocess(crop(img, b))
        t_decode += t1 - t0
        t_prep += time.perf_counter() - t1
    texts = sorted({c for q in queries for c in q.candidates})
    t0 = time.perf_counter()
    tokenizing.tokenize(loaded.tokenizer, texts)
    return {"decode_s": t_decode, "preprocess_s": t_prep, "tokenize_s": time.perf_counter() - t0}


def run_engine(loaded, queries, image_dir: Path, cut: bool):
    from crepe_utils.engine import core as engine
    from crepe_utils import metrics
    from crepe_utils.imagesets.visual_genome import ImageIndex
    t0 = time.perf_counter()
    res = engine.run(loaded, queries, ImageIndex(image_dir), engine.RunOptions(precision=ARGS.precision, image_batch_size=ARGS.image_batch, text_batch_size=ARGS.text_batch, length_cut=cut, num_workers=ARGS.workers), cache_dir=None)
    sync()
    wall = time.perf_counter() - t0
    return wall, res, metrics.ranks_from_flat(res.scores, res.offsets)


def bench_model(kind: str, data_dir, workdir: Path) -> dict:
    n_images = ARGS.images_tiny if kind == "tiny" else ARGS.images_b32
    queries = load_subset(data_dir, n_images)
    image_dir = images_for(queries, kind, workdir)
    loaded = make_model(kind, workdir)
    n_naive = min(len(queries), ARGS.naive_queries_tiny if kind == "tiny" else ARGS.naive_queries_b32)
    # the naive loop's queries spread evenly over the list, so that their crops and captions are typical
    sample = [queries[i] for i in np.linspace(0, len(queries) - 1, n_naive).round().astype(int)]
    # warm-up (allocator, kernels) on a handful of queries
    run_engine(loaded, queries[:8], image_dir, True)
    naive(loaded, queries[:2], image_dir)
    # Each measurement is the best of --repeat rounds, interleaved, so that a slow spell of a shared
    # machine (its speed varies by tens of percent over minutes) affects neither side alone.
    t_naive = wall_cut = float("inf")
    work = {}
    for _ in range(ARGS.repeat):
        t_naive = min(t_naive, naive(loaded, sample, image_dir))
        wall, res_cut, ranks_cut = run_engine(loaded, queries, image_dir, True)
        if wall < wall_cut:
            wall_cut, stats_cut = wall, res_cut.stats
        for k, v in serial_work(loaded, queries, image_dir).items():
            work[k] = min(work.get(k, v), v)
    wall_full, res_full, ranks_full = run_engine(loaded, queries, image_dir, False)
    f_img, f_txt77, f_txtcut = floor(loaded, queries, image_dir)
    floor77 = f_img + f_txt77
    if ARGS.device == "cpu":                 # the encoders' CPU time: their floor at one thread
        import torch
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            f_img1, _, f_txtcut1 = floor(loaded, queries, image_dir)
        finally:
            torch.set_num_threads(threads)
    # The best any exact engine could do on this machine: on the CPU, the unskippable one-core work
    # above and the encoders' one-thread time, spread perfectly over every core; on a GPU the encoders
    # run beside the CPU work, so the larger of the two.
    cores = os.cpu_count() or 1
    if ARGS.device == "cpu":
        best_s = (sum(work.values()) + f_img1 + f_txtcut1) / cores
    else:
        best_s = max(sum(work.values()) / cores, f_img + f_txtcut)
    same = bool(np.array_equal(ranks_cut.pessimistic, ranks_full.pessimistic)
                and np.array_equal(ranks_cut.optimistic, ranks_full.optimistic))
    return {
        "model": kind, "queries": len(queries), "distinct_crops": res_cut.stats["n_distinct_crops"],
        "distinct_texts": res_cut.stats["n_distinct_texts"], "naive_queries": n_naive,
        "naive_qps": n_naive / t_naive, "engine_qps": len(queries) / wall_cut,
        "engine_vs_naive": (len(queries) / wall_cut) / (n_naive / t_naive),
        "floor_images_s": f_img, "floor_texts77_s": f_txt77, "floor_texts_cut_s": f_txtcut,
        "images_per_s": res_cut.stats["n_distinct_crops"] / f_img,
        "texts_per_s_77": res_cut.stats["n_distinct_texts"] / f_txt77,
        "texts_per_s_cut": res_cut.stats["n_distinct_texts"] / f_txtcut,
        "engine_s": wall_cut, "engine_nocut_s": wall_full,
        "engine_images_s": stats_cut["seconds_images"], "engine_tokenize_s": stats_cut["seconds_tokenize"],
        "engine_texts_s": stats_cut["seconds_texts"], "repeat": ARGS.repeat,
        "engine_over_floor77": wall_cut / floor77, "engine_nocut_over_floor77": wall_full / floor77,
        "decode_s": work["decode_s"], "preprocess_s": work["preprocess_s"], "tokenize_s": work["tokenize_s"],
        "cores": cores, "attainable_s": best_s,
        **({"floor_images_1thread_s": f_img1, "floor_texts_cut_1thread_s": f_txtcut1} if ARGS.device == "cpu" else {}),
        "attainable_vs_naive": (len(queries) / best_s) / (n_naive / t_naive),
        "engine_over_attainable": wall_cut / best_s,
        "ranks_identical_with_cut": same, "max_abs_score_change": float(np.abs(res_cut.scores - res_full.scores).max()),
    }


def _status_mib(field: str) -> float:
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def memory_child(data_dir: str, scale: int) -> None:
    """Run the engine on the full query list replicated ``scale`` times; print peak RSS (MiB)."""
    import open_clip
    import torch
    from crepe_utils.benchmarks.crepe import queries as D
    from crepe_utils.engine import core as engine
    from crepe_utils import metrics
    from crepe_utils.protocol.retrieval import per_query_frames
    from crepe_utils.imagesets.visual_genome import ImageIndex
    from crepe_utils.models import LoadedModel, ModelSpec
    workdir = Path(tempfile.mkdtemp())
    qs = D.load_productivity(data_dir).queries
    img_root = workdir / "img"
    (img_root / "VG_100K").mkdir(parents=True)
    from PIL import Image
    tile = Image.new("RGB", (800, 600), (120, 90, 60))      # Visual Genome's size: every box lies inside
    for i in {q.image_id for q in qs}:
        tile.save(img_root / "VG_100K" / f"{i}.jpg")
    cfg = workdir / "mem-tiny.json"
    cfg.write_text(json.dumps(TINY))
    open_clip.add_model_config(cfg)
    torch.manual_seed(0)
    model, _, pre = open_clip.create_model_and_transforms("mem-tiny", pretrained=None)
    spec = ModelSpec(key="mem-tiny", architecture="mem-tiny", pretrained=None, quick_gelu=False, weights_quick_gelu=None)
    loaded = LoadedModel(model.eval(), pre, open_clip.get_tokenizer("mem-tiny"), spec, torch.device("cpu"))
    # Reset the peak-RSS mark (Linux: VmHWM) so that it measures the engine alone; ru_maxrss would
    # report the parent's peak, which a forked child inherits.
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    rss_before = _status_mib("VmRSS")
    t0 = time.perf_counter()
    res = engine.run(loaded, qs * scale, ImageIndex(img_root), engine.RunOptions(text_batch_size=1024), cache_dir=None)
    ranks = metrics.ranks_from_flat(res.scores, res.offsets)
    rows = 0
    for frame in per_query_frames(res, ranks):       # what writing the per-query file costs, streamed
        rows += len(frame)
    print(json.dumps({"scale": scale, "queries": len(qs) * scale, "rows": rows,
                      "rss_before_mib": rss_before, "peak_rss_mib": _status_mib("VmHWM"),
                      "seconds": time.perf_counter() - t0}))


def main() -> None:
    from crepe_utils import paths
    data_dir = CREPE_CSVS.existing(ARGS.data_dir)
    if data_dir is None:
        sys.exit("no CREPE productivity CSVs: pass --data-dir or run `make data`")
    import torch
    torch.set_num_threads(ARGS.threads or torch.get_num_threads())
    print(f"device {ARGS.device}, precision {ARGS.precision}, torch threads {torch.get_num_threads()}, data {data_dir}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ARGS.models:
            print(f"\n== {kind}", flush=True)
            r = bench_model(kind, data_dir, Path(tmp))
            rows.append(r)
            for k, v in r.items():
                print(f"  {k:28s} {v:.4g}" if isinstance(v, float) else f"  {k:28s} {v}")
    if ARGS.memory:
        print("\n== memory (tiny model, full query list replicated)")
        for scale in (1, 4, 16):
            out = subprocess.run([sys.executable, __file__, "--memory-child", str(scale), "--data-dir", str(data_dir)],
                                 capture_output=True, text=True, check=True)
            m = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append({"memory": m})
            print(f"  {scale:>2}×: {m['queries']:>8,} queries  peak RSS {m['peak_rss_mib']:7.0f} MiB "
                  f"(before the engine {m['rss_before_mib']:.0f})  {m['seconds']:.1f} s")
    if ARGS.json:
        Path(ARGS.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument("--models", nargs="+", default=["tiny", "b32"], choices=["tiny", "b32"])
    p.add_argument("--device", default="cpu")
    p.add_argument("--precision", default="fp32")
    p.add_argument("--images-tiny", type=int, default=400, help="image ids whose queries form the tiny run")
    p.add_argument("--images-b32", type=int, default=40, help="image ids whose queries form the ViT-B-32 run")
    p.add_argument("--naive-queries-tiny", type=int, default=1000)
    p.add_argument("--naive-queries-b32", type=int, default=40)
    p.add_argument("--image-batch", type=int, default=64)
    p.add_argument("--text-batch", type=int, default=256)
    p.add_argument("--workers", type=int, default=2, help="image decoding workers (default 2: the CPU's cores)")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--repeat", type=int, default=3, help="rounds of naive loop, engine and serial work; best of each")
    p.add_argument("--images-dir", default=None, help="make the synthetic images here once and reuse them")
    p.add_argument("--no-memory", dest="memory", action="store_false")
    p.add_argument("--memory-child", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--json", default=None, help="also write the numbers to this file")
    ARGS = p.parse_args()
    if ARGS.memory_child is not None:
        memory_child(ARGS.data_dir, ARGS.memory_child)
    else:
        main()
