"""One prepared check for a machine with an accelerator: throughput against the FLOP bound, and exactness.

    .venv/bin/python speed/device_check.py --device cuda                 # every paper architecture
    .venv/bin/python speed/device_check.py --device cuda --captions-dir data/crepe
    .venv/bin/python speed/device_check.py --device cpu --tiny --images 4   # what the test runs

Needs no network and no weights: each model is a randomly initialised open_clip model of the real
architecture at its real size, saved and loaded through the real checkpoint path; images are
synthetic 800 × 600 JPEGs with two query regions each; captions are CREPE's real ones when
``--captions-dir`` holds the productivity CSVs, random word strings otherwise. Nothing here is a
benchmark score.

Per architecture and precision it measures images/s (decode, crop, preprocess, encode), texts/s
(length-cut batches) and end-to-end queries/s of ``engine.run``, and sets each against the FLOP
time of the same work at two peaks: the device's data-sheet peak (known devices only) and a
measured large-matmul peak. Per architecture and each of ``--exact-precisions`` (default fp32 and
fp16-weights, the paper's OpenAI CLIP path: weights converted as ``clip.load`` does on CUDA) it
checks that two device runs give bit-identical scores and compares the device's ranks with fp32
ranks on the CPU: how many differ among the queries that are no near-tie (no negative within
``--tau`` of the positive in the CPU's fp32 scores, ``metrics.near_ties_from_flat``, the
``n_near_tie_queries`` of every summary), and how many differ in all. fp32 should agree wherever
there is no near-tie; fp16 weights round every weight, so their disagreements are measured, not
expected to be zero. It stops starting new measurements after ``--budget-s`` seconds,
writes one JSON (``--out``) and prints a table.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAPER_ARCHS = ("RN50-quickgelu", "RN101-quickgelu", "ViT-B-32-quickgelu", "ViT-B-16", "ViT-B-16-plus-240",
               "ViT-L-14")
TINY = {"embed_dim": 32,
        "vision_cfg": {"image_size": 32, "layers": 1, "width": 64, "head_width": 32, "patch_size": 16},
        "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1}}
#: Dense data-sheet peaks in FLOP/s (no sparsity), by a substring of torch.cuda.get_device_name().
DATASHEET_PEAKS = {
    "H200": {"fp32": 67e12, "tf32": 494.7e12, "bf16": 989.4e12, "fp16": 989.4e12},
    "H100": {"fp32": 67e12, "tf32": 494.7e12, "bf16": 989.4e12, "fp16": 989.4e12},
    "A100": {"fp32": 19.5e12, "tf32": 156e12, "bf16": 312e12, "fp16": 312e12},
}
for _peaks in DATASHEET_PEAKS.values():
    _peaks["fp16-weights"] = _peaks["fp16"]          # fp16 matmuls, as under autocast
WORDS = ("red blue green small large dog cat table chair on under next to a the wooden metal shiny old man "
         "woman car tree window street sign building").split()


def sync(device) -> None:
    import torch
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def synthetic_data(root: Path, n_images: int, captions: list[str], seed: int = 0):
    """Images (800 × 600 smooth noise), two regions each, and productivity-shaped queries over them."""
    from PIL import Image
    from crepe_utils.benchmarks.crepe.queries import Query
    rng = np.random.default_rng(seed)
    folder = root / "VG_100K"
    folder.mkdir(parents=True, exist_ok=True)
    queries = []
    for i in range(n_images):
        small = rng.integers(0, 256, size=(75, 100, 3), dtype=np.uint8)
        Image.fromarray(small).resize((800, 600), Image.BILINEAR).save(folder / f"{i + 1}.jpg", quality=90)
        for r in range(2):
            box = (float(rng.integers(0, 300)), float(rng.integers(0, 200)), float(rng.integers(200, 500)),
                   float(rng.integers(150, 400)))
            for hn in ("atom", "swap", "negate"):
                pick = rng.choice(len(captions), size=6, replace=False)
                queries.append(Query(benchmark="productivity", hn_type=hn, split="", complexity=4, train_data="",
                                     image_id=str(i + 1), box=box, positive=captions[pick[0]],
                                     negatives=tuple(captions[j] for j in pick[1:]), source=f"synthetic:{len(queries)}"))
    return queries


def load_captions(captions_dir: str | None, n: int, seed: int = 0) -> tuple[list[str], str]:
    if captions_dir:
        from crepe_utils.benchmarks.crepe import queries as D
        texts = sorted({c for q in D.load_productivity(captions_dir).queries for c in q.candidates})
        rng = np.random.default_rng(seed)
        return [texts[i] for i in rng.choice(len(texts), size=min(n, len(texts)), replace=False)], "CREPE productivity"
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(4, 24)))) for _ in range(n)], "synthetic"


def build_model(arch: str, workdir: Path, device: str, precision: str | None = None):
    """The random model of ``arch`` through the real checkpoint path; saved once per workdir, so every
    device and precision loads the same weights. ``precision="fp16-weights"`` converts them at load."""
    import open_clip
    import torch
    from crepe_utils.models import load_model, save_checkpoint
    config = None
    if arch == "tiny":
        config = workdir / "device-check-tiny.json"
        config.write_text(json.dumps(TINY))
        open_clip.add_model_config(config)
        arch = config.stem
    ckpt = workdir / f"{arch}-random.pt"
    if not ckpt.exists():
        torch.manual_seed(0)
        save_checkpoint(open_clip.create_model(arch, pretrained=None), ckpt)
    return load_model(arch, str(ckpt), str(config) if config else None, device=device, precision=precision)


def flops_per_item(loaded, text_len: int) -> tuple[float, float]:
    """Forward FLOPs of one image and of one caption of ``text_len`` tokens (PyTorch's FLOP counter)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    size = loaded.spec.preprocess.get("size", 224)
    size = size if isinstance(size, (list, tuple)) else (size, size)
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)     # the fused attention kernel is invisible to the counter
    with torch.inference_mode():
        with FlopCounterMode(display=False) as counter:
            loaded.model.encode_image(torch.zeros(1, 3, *size, device=loaded.device))
        image = counter.get_total_flops()
        with FlopCounterMode(display=False) as counter:
            tokens = torch.zeros(1, loaded.spec.context_length, dtype=torch.long, device=loaded.device)
            tokens[0, text_len - 1] = 49407
            loaded.model.encode_text(tokens)
        text_full = counter.get_total_flops()
    torch.backends.mha.set_fastpath_enabled(fastpath)
    # the engine cuts each batch to its longest caption: attention aside, cost scales with length
    return float(image), float(text_full) * text_len / loaded.spec.context_length


def measured_peak(device, precision: str, n: int = 8192) -> float:
    """FLOP/s of a large square matmul at ``precision`` on ``device`` (a practical peak)."""
    import torch
    from crepe_utils.engine.precisions import precision_context
    if device.type == "cpu":
        n = 1024
    dtype = torch.float16 if precision == "fp16-weights" else torch.float32     # fp16 weights: fp16 matmuls
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    with torch.inference_mode(), precision_context(precision, device):
        for _ in range(2):
            a @ b
        sync(device)
        t0, reps = time.perf_counter(), 0
        while time.perf_counter() - t0 < 1.0:
            a @ b
            reps += 1
        sync(device)
    return 2 * n ** 3 * reps / (time.perf_counter() - t0)


def measure(loaded, queries, image_dir: Path, precision: str, workers: int) -> dict:
    from crepe_utils.engine import encoders, tokenizing, core as engine
    from crepe_utils.imagesets.visual_genome import ImageIndex
    index = ImageIndex(image_dir)
    crops = sorted({(q.image_id, q.box) for q in queries})
    items = [(str(index.path(i)), b) for i, b in crops]
    texts = sorted({c for q in queries for c in q.candidates})
    ids = sorted(set(tokenizing.tokenize(loaded.tokenizer, texts).ids), key=lambda t: (len(t), t))
    encoders.encode_token_ids(loaded, ids[:64], precision=precision)          # warm-up (kernels, allocator)
    sync(loaded.device)
    t0 = time.perf_counter()
    encoders.encode_crops(loaded, items, precision=precision, num_workers=workers)
    sync(loaded.device)
    t_img = time.perf_counter() - t0
    t0 = time.perf_counter()
    encoders.encode_token_ids(loaded, ids, precision=precision)
    sync(loaded.device)
    t_txt = time.perf_counter() - t0
    t0 = time.perf_counter()
    engine.run(loaded, queries, index, engine.RunOptions(precision=precision, num_workers=workers), cache_dir=None)
    sync(loaded.device)
    t_e2e = time.perf_counter() - t0
    return {"n_crops": len(items), "n_texts": len(ids), "n_queries": len(queries),
            "mean_tokens": float(np.mean([len(t) for t in ids])),
            "images_per_s": len(items) / t_img, "texts_per_s": len(ids) / t_txt, "queries_per_s": len(queries) / t_e2e,
            "seconds": {"images": t_img, "texts": t_txt, "end_to_end": t_e2e}}


def exactness(loaded, cpu_ref, queries, image_dir: Path, tau: float, precision: str) -> dict:
    """Two device runs at ``precision`` bit for bit, and their ranks against the CPU's fp32 ranks (``cpu_ref``,
    an engine result), outside and inside the CPU's near-ties within ``tau``."""
    from crepe_utils.engine import core as engine
    from crepe_utils import metrics
    from crepe_utils.imagesets.visual_genome import ImageIndex
    index = ImageIndex(image_dir)
    runs = [engine.run(loaded, queries, index, engine.RunOptions(precision=precision), cache_dir=None) for _ in range(2)]
    out = {"device_runs_bit_identical": bool(np.array_equal(runs[0].scores.view(np.uint32),
                                                            runs[1].scores.view(np.uint32)))}
    dev = metrics.ranks_from_flat(runs[0].scores, runs[0].offsets)
    cpu = metrics.ranks_from_flat(cpu_ref.scores, cpu_ref.offsets)
    near = metrics.near_ties_from_flat(cpu_ref.scores, cpu_ref.offsets, tau)
    differ = dev.pessimistic != cpu.pessimistic
    clear = ~near
    out.update({"tau": tau, "reference": "cpu fp32", "queries_compared": len(queries),
                "near_ties_below_tau": int(near.sum()),
                "ranks_differing_beyond_tau": int((differ & clear).sum()),
                "rank_agreement_beyond_tau": float(1 - (differ & clear).sum() / max(int(clear.sum()), 1)),
                "ranks_differing_total": int(differ.sum()),
                "r1_device": float(100 * np.mean(dev.pessimistic <= 1)),
                "r1_cpu_fp32": float(100 * np.mean(cpu.pessimistic <= 1)),
                "max_abs_score_difference": float(np.abs(runs[0].scores - cpu_ref.scores).max())})
    return out


def _models_by_precision(models: dict, arch: str, workdir: Path, device: str):
    """precision → model: fp16-weights needs its own (converted) copy, loaded once; the rest share fp32's."""
    def model_for(precision):
        key = "fp16-weights" if precision == "fp16-weights" else "fp32"
        if key not in models:
            models[key] = build_model(arch, workdir, device, precision=key)
        return models[key]
    return model_for


def main(argv=None) -> int:
    import torch
    from crepe_utils.engine import core as engine
    from crepe_utils.imagesets.visual_genome import ImageIndex
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--archs", nargs="+", default=list(PAPER_ARCHS))
    p.add_argument("--tiny", action="store_true", help="one tiny model instead of the paper's architectures")
    p.add_argument("--precisions", nargs="+", default=["fp32", "bf16", "fp16-weights"])
    p.add_argument("--exact-precisions", nargs="+", default=["fp32", "fp16-weights"],
                   help="precisions whose device ranks are compared with the CPU's fp32 ranks")
    p.add_argument("--images", type=int, default=1000, help="synthetic images (two regions, six queries each)")
    p.add_argument("--captions", type=int, default=20000)
    p.add_argument("--captions-dir", default=None, help="CREPE CSV folder: use its real captions")
    p.add_argument("--exact-queries", type=int, default=240, help="queries in the device-vs-CPU comparison")
    p.add_argument("--tau", type=float, default=1e-4, help="margin below which a rank may differ")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--budget-s", type=float, default=420.0)
    p.add_argument("--out", default="build/device_check.json")
    args = p.parse_args(argv)
    start = time.perf_counter()
    device = torch.device(args.device)
    archs = ["tiny"] if args.tiny else args.archs
    workers = args.workers if args.workers is not None else (min(8, (torch.get_num_threads() or 1)) if device.type == "cuda" else 0)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    sheet = next((v for k, v in DATASHEET_PEAKS.items() if k in name), None)
    report = {"device": name, "torch": torch.__version__, "archs": {}, "skipped": [],
              "measured_peak_flops": {}, "datasheet_peak_flops": sheet}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        captions, source = load_captions(args.captions_dir, args.captions)
        report["captions"] = source
        queries = synthetic_data(tmp / "images", args.images, captions)
        for precision in args.precisions:
            report["measured_peak_flops"][precision] = measured_peak(device, precision)
        for arch in archs:
            if time.perf_counter() - start > args.budget_s:
                report["skipped"].append(arch)
                continue
            workdir = tmp / arch
            workdir.mkdir()
            models = {"fp32": build_model(arch, workdir, args.device)}
            loaded = models["fp32"]
            model_for = _models_by_precision(models, arch, workdir, args.device)
            f_img, f_txt = flops_per_item(loaded, 16)
            entry = {"flops_per_image": f_img, "flops_per_text_16_tokens": f_txt, "precisions": {}, "exactness": {}}
            for precision in args.precisions:
                if time.perf_counter() - start > args.budget_s:
                    report["skipped"].append(f"{arch} {precision}")
                    continue
                m = measure(model_for(precision), queries, tmp / "images", precision, workers)
                work = m["n_crops"] * f_img + m["n_texts"] * f_txt * m["mean_tokens"] / 16
                for label, peak in (("measured", report["measured_peak_flops"][precision]),
                                    ("datasheet", (sheet or {}).get(precision))):
                    if peak:
                        m[f"floor_seconds_{label}_peak"] = work / peak
                        m[f"end_to_end_over_floor_{label}"] = m["seconds"]["end_to_end"] / (work / peak)
                entry["precisions"][precision] = m
            exact_queries = queries[:args.exact_queries]
            cpu_loaded = build_model(arch, workdir, "cpu") if device.type != "cpu" else loaded
            cpu_ref = engine.run(cpu_loaded, exact_queries, ImageIndex(tmp / "images"), engine.RunOptions(precision="fp32"), cache_dir=None)
            del cpu_loaded
            for precision in args.exact_precisions:
                if time.perf_counter() - start > args.budget_s:
                    report["skipped"].append(f"{arch} exactness {precision}")
                    continue
                entry["exactness"][precision] = exactness(model_for(precision), cpu_ref, exact_queries,
                                                          tmp / "images", args.tau, precision)
            report["archs"][arch] = entry
            del loaded, models, model_for
            if device.type == "cuda":
                torch.cuda.empty_cache()
    report["seconds"] = time.perf_counter() - start
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    print(table(report))
    print(f"\nwrote {out} ({report['seconds']:.0f} s)")
    return 0


def table(report: dict) -> str:
    rows = [f"device: {report['device']}   torch {report['torch']}   captions: {report['captions']}",
            f"{'architecture':<20} {'prec':<12} {'img/s':>9} {'txt/s':>10} {'query/s':>10} {'e2e/floor':>10}"]
    for arch, entry in report["archs"].items():
        for precision, m in entry["precisions"].items():
            ratio = m.get("end_to_end_over_floor_datasheet", m.get("end_to_end_over_floor_measured"))
            rows.append(f"{arch:<20} {precision:<12} {m['images_per_s']:>9.1f} {m['texts_per_s']:>10.1f} "
                        f"{m['queries_per_s']:>10.1f} {ratio:>10.2f}")
    rows += ["", "ranks against the CPU's fp32 ranks (τ: near-tie margin)",
             f"{'architecture':<20} {'prec':<12} {'bit-id':>6} {'queries':>7} {'near-ties':>9} {'≠ beyond τ':>10} "
             f"{'≠ total':>7} {'R@1 dev':>7} {'R@1 cpu':>7} {'max |Δs|':>9}"]
    for arch, entry in report["archs"].items():
        for precision, ex in entry["exactness"].items():
            rows.append(f"{arch:<20} {precision:<12} {str(ex['device_runs_bit_identical']):>6} "
                        f"{ex['queries_compared']:>7} {ex['near_ties_below_tau']:>9} "
                        f"{ex['ranks_differing_beyond_tau']:>10} {ex['ranks_differing_total']:>7} "
                        f"{ex['r1_device']:>7.2f} {ex['r1_cpu_fp32']:>7.2f} {ex['max_abs_score_difference']:>9.2e}")
    if report["skipped"]:
        rows.append("skipped (time budget): " + ", ".join(report["skipped"]))
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
