"""Fixtures shared by the tests: tiny models, synthetic Visual Genome roots, CREPE-format CSVs.

Everything here is synthetic. Numbers computed on it test the code, not the benchmark.
"""
from __future__ import annotations

import csv
import json
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
from PIL import Image

from shared_guard import SHARED

#: The reference data (shared_guard.SHARED, beside the project); ``CREPE_SHARED=/nonexistent`` runs the suite as a
#: clean machine would.
SHARED_CREPE = SHARED / "data" / "crepe"
SHARED_WINOGROUND = SHARED / "data" / "winoground"
SHARED_SUGARCREPE = SHARED / "data" / "sugarcrepe"

#: The smallest open_clip CLIP that builds with the stock tokenizer (77 tokens, 49408 words).
TINY_CONFIG = {
    "embed_dim": 32,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 64, "head_width": 32, "patch_size": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


def make_tiny_model(tmp_path: Path, name: str = "crepe-tiny-test", seed: int = 0,
                    config: dict | None = None) -> tuple[Path, Path]:
    """A randomly initialised tiny open_clip model saved as (config JSON, checkpoint file)."""
    import open_clip
    import torch

    cfg_path = Path(tmp_path) / f"{name}.json"
    cfg_path.write_text(json.dumps(config or TINY_CONFIG))
    open_clip.add_model_config(cfg_path)
    torch.manual_seed(seed)
    model = open_clip.create_model(name, pretrained=None)
    ckpt = Path(tmp_path) / f"{name}-seed{seed}.pt"
    torch.save({"state_dict": {"module." + k: v for k, v in model.state_dict().items()}}, ckpt)
    return cfg_path, ckpt


def make_image(path: Path, size=(80, 60), seed: int = 0, mode: str = "RGB", fmt: str = "JPEG") -> Path:
    """A random-noise image of ``size`` (width, height)."""
    rng = np.random.default_rng(seed)
    channels = {"RGB": 3, "RGBA": 4, "L": 1}[mode]
    arr = rng.integers(0, 256, size=(size[1], size[0], channels), dtype=np.uint8)
    img = Image.fromarray(arr.squeeze() if channels == 1 else arr, mode)
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, format=fmt)
    return path


def make_vg_root(root: Path, image_ids, size=(80, 60), second_half=()) -> Path:
    """A Visual Genome folder: ids in ``second_half`` go to VG_100K_2, the others to VG_100K."""
    for i, image_id in enumerate(image_ids):
        folder = "VG_100K_2" if image_id in second_half else "VG_100K"
        make_image(Path(root) / folder / f"{image_id}.jpg", size=size, seed=int(image_id))
    return Path(root)


PROD_HEADER = ["image_id", "caption", "n", "n_objects", "n_relations", "n_attributes",
               "n_connected_components", "hard_negs", "x", "y", "width", "height"]


def write_productivity_csv(path: Path, rows: list[dict], complexity: int) -> Path:
    """Rows: dicts with image_id, caption, hard_negs (list or set), x, y, width, height."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(PROD_HEADER)
        for r in rows:
            w.writerow([r["image_id"], r["caption"], complexity, 2, 1, 1, 1, repr(r["hard_negs"]),
                        f"{float(r['x'])}", f"{float(r['y'])}", f"{float(r['width'])}", f"{float(r['height'])}"])
    return path


SYST_HEADER = ["region_id", "caption", "x", "y", "width", "height", "valid_hard_negs_comp",
               "valid_hard_negs_atom", "image_id", "valid_hard_negs_combined"]


def write_systematicity_csv(path: Path, rows: list[dict]) -> Path:
    """Rows: dicts with image_id, caption, x, y, width, height, atom, comp (lists)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(SYST_HEADER)
        for i, r in enumerate(rows):
            w.writerow([i, r["caption"], r["x"], r["y"], r["width"], r["height"], repr(r["comp"]),
                        repr(r["atom"]), r["image_id"], repr(list(r["atom"]) + list(r["comp"]))])
    return path


WORDS = ["red", "blue", "green", "small", "large", "dog", "cat", "table", "chair", "on", "under",
         "next", "to", "a", "the", "wooden", "metal", "shiny", "old", "man", "woman", "car", "tree"]


def synthetic_crepe_root(root: Path, n_images: int = 12, rows_per_file: int = 6, seed: int = 0,
                         complexities=(4, 5), train_data: str = "laion") -> tuple[Path, Path]:
    """A small CREPE data root (productivity + systematicity) and its image folder.

    Captions are random word strings; some rows use set literals and share crops across files,
    one swap row holds its positive among its negatives (an exact tie).
    """
    rng = np.random.default_rng(seed)
    data_dir, image_dir = Path(root) / "crepe", Path(root) / "images"
    ids = [str(1000 + i) for i in range(n_images)]
    make_vg_root(image_dir, ids, size=(80, 60), second_half=set(ids[::3]))

    def caption(k=6):
        return " ".join(rng.choice(WORDS, size=k))

    boxes = {i: (float(rng.integers(0, 20)), float(rng.integers(0, 15)), float(rng.integers(30, 60)),
                 float(rng.integers(30, 45))) for i in ids}
    for hn in ("atom", "swap", "negate"):
        for n in complexities:
            rows = []
            for j in range(rows_per_file):
                image_id = ids[(j + n) % n_images]
                x, y, w, h = boxes[image_id]
                pos = caption(n)
                negs = [caption(n) for _ in range(5)]
                row = dict(image_id=image_id, caption=pos, x=x, y=y, width=w, height=h, hard_negs=negs)
                if hn == "negate" and j % 2 == 0:
                    row["hard_negs"] = set(negs)
                if hn == "swap" and j == 0:
                    row["hard_negs"] = [negs[0], pos] + negs[2:]
                rows.append(row)
            write_productivity_csv(data_dir / "prod_hard_negatives" / hn /
                                   f"prod_vg_hard_negs_{hn}_complexity_{n}.csv", rows, n)
    for split in ("seen_compounds", "unseen_compounds"):
        rows = []
        for j in range(rows_per_file):
            image_id = ids[j % n_images]
            x, y, w, h = boxes[image_id]
            rows.append(dict(image_id=image_id, caption=caption(4), x=x, y=y, width=w, height=h,
                             atom=[caption(4) for _ in range(int(rng.integers(1, 5)))],
                             comp=[caption(5) for _ in range(int(rng.integers(1, 7)))]))
        write_systematicity_csv(data_dir / "syst_hard_negatives" /
                                f"syst_vg_hard_negs_{split}_in_{train_data}.csv", rows)
    return data_dir, image_dir



def sugarcrepe_root(root: Path, pairs_per_subset: int = 2, n_images: int = 4, seed: int = 0) -> tuple[Path, Path]:
    """(SugarCrepe data folder with all seven subsets in the released layout, COCO-like image folder)."""
    from crepe_utils.benchmarks.sugarcrepe import SUBSETS
    rng = np.random.default_rng(seed)
    data_dir, image_dir = Path(root) / "sugarcrepe", Path(root) / "coco"
    data_dir.mkdir(parents=True)
    names = [f"{100 + i:012d}.jpg" for i in range(n_images)]
    for i, name in enumerate(names):
        make_image(image_dir / "val2017" / name, size=(64, 48), seed=40 + i)
    for s, subset in enumerate(SUBSETS):
        items = {str(k): {"filename": names[(k + s) % n_images], "caption": " ".join(rng.choice(WORDS, size=5)),
                          "negative_caption": " ".join(rng.choice(WORDS, size=5))} for k in range(pairs_per_subset)}
        (data_dir / f"{subset}.json").write_text(json.dumps(items, indent=4), encoding="utf-8")
    return data_dir, image_dir

#: Boxes of the differential fixture, (x, y, width, height) on an 80 × 60 image, by what they test.
DIFFERENTIAL_BOXES = {
    "whole-pixel": (4.0, 3.0, 50.0, 40.0),
    "fractional": (10.4, 3.6, 30.5, 20.5),
    "half-pixel": (10.5, 2.5, 20.0, 20.5),        # PIL rounds halves to even: 10..30 × 2..22
    "partly-outside": (60.0, 40.0, 40.0, 40.0),   # right and bottom edges past the image: black padding
    "negative-origin": (-5.2, -3.7, 30.0, 25.0),
}
WHOLLY_OUTSIDE_BOX = (90.0, 10.0, 20.0, 20.0)
OVERLONG_CAPTION = " ".join(["a small red dog next to a wooden table"] * 12)   # 110 tokens with start/end


def differential_crepe_root(root: Path, seed: int = 1) -> tuple[Path, Path]:
    """A CREPE data root built to exercise every path of the engine against a naive reference.

    Productivity (complexities 4 and 5, all three HN types): twin rows present in all three types (so
    the all-negatives sets of app. B.3 are built), set literals, a positive among its own negatives,
    a case-only negative (token-identical to the positive), an over-long negative, and every kind of
    box in DIFFERENTIAL_BOXES, on images in both VG_100K folders. Systematicity (laion): one row with
    an empty HN-Comp list, for the empty-negatives policies.
    """
    rng = np.random.default_rng(seed)
    data_dir, image_dir = Path(root) / "crepe", Path(root) / "images"
    ids = [str(2000 + i) for i in range(6)]
    make_vg_root(image_dir, ids, size=(80, 60), second_half=set(ids[1::2]))
    boxes = list(DIFFERENTIAL_BOXES.values())

    def caption(k):
        return " ".join(rng.choice(WORDS, size=k))

    for n in (4, 5):
        twins = [dict(image_id=ids[j % len(ids)], caption=caption(n), box=boxes[j % len(boxes)])
                 for j in range(5)]
        for t, hn in enumerate(("atom", "swap", "negate")):
            rows = []
            for j, twin in enumerate(twins):
                negs = [caption(n) for _ in range(5)]
                if hn == "negate" and j == 1:
                    negs = set(negs)
                if hn == "swap" and j == 2:
                    negs[3] = twin["caption"]                       # the positive among its negatives
                if hn == "negate" and j == 3:
                    negs[0] = twin["caption"].upper().replace(" ", "  ")   # token-identical to the positive
                if hn == "atom" and j == 4 and n == 5:
                    negs[4] = OVERLONG_CAPTION
                rows.append(_row(twin["image_id"], twin["caption"], twin["box"], negs))
            # one row of this type only (no all-negatives twin), on a box of its own
            rows.append(_row(ids[(t + n) % len(ids)], caption(n), boxes[(t + 2) % len(boxes)],
                             [caption(n) for _ in range(5)]))
            write_productivity_csv(data_dir / "prod_hard_negatives" / hn /
                                   f"prod_vg_hard_negs_{hn}_complexity_{n}.csv", rows, n)
    for split in ("seen_compounds", "unseen_compounds"):
        rows = [dict(image_id=ids[j], caption=caption(4), x=b[0], y=b[1], width=b[2], height=b[3],
                     atom=[caption(4) for _ in range(3)], comp=[caption(5) for _ in range(4)])
                for j, b in enumerate(boxes[:4])]
        rows[1]["comp"] = []                                      # empty HN-Comp list
        write_systematicity_csv(data_dir / "syst_hard_negatives" /
                                f"syst_vg_hard_negs_{split}_in_laion.csv", rows)
    return data_dir, image_dir


def _row(image_id, caption, box, negs):
    return dict(image_id=image_id, caption=caption, x=box[0], y=box[1], width=box[2], height=box[3],
                hard_negs=negs)


def reference_text_work(data_dir: Path, complexities=(4, 5)) -> list[tuple[int, ...]]:
    """The distinct token-id sequences of a synthetic root's productivity captions, shortest first
    (ties by ids): the engine's text work order, computed with open_clip's own tokenizer."""
    import open_clip

    queries = crepe_queries(data_dir, complexities=tuple(complexities)).queries
    texts = sorted({c for q in queries for c in q.candidates})
    rows = open_clip.get_tokenizer("ViT-B-32")(texts).tolist()
    ids = {tuple(t for t in row if t) for row in rows}     # 0 pads; the fixture's words never encode to it
    return sorted(ids, key=lambda t: (len(t), t))


def result_files(root: Path) -> dict:
    """Every file under ``root`` (hidden ones included) as bytes; manifests without their run-specific
    ``run`` section. Two runs that should be identical compare equal through this."""
    out = {}
    for p in sorted(Path(root).rglob("*")):
        if p.is_file():
            if p.name == "manifest.json":
                m = json.loads(p.read_text())
                m.pop("run")
                out[p.relative_to(root)] = json.dumps(m, sort_keys=True)
            else:
                out[p.relative_to(root)] = p.read_bytes()
    return out


# ------------------------------------------------------------------------------ Winoground

RECORDS = [
    dict(id=0, caption_0="a red dog on a blue chair", caption_1="a blue dog on a red chair",
         tag="Adjective-Color", secondary_tag="", num_main_preds=1, collapsed_tag="Relation"),
    dict(id=1, caption_0="the cat sits under the table", caption_1="the table sits under the cat",
         tag="Noun", secondary_tag="Symbolic", num_main_preds=1, collapsed_tag="Object"),
    dict(id=2, caption_0="an old man holds a small tree", caption_1="a small man holds an old tree",
         tag="Adjective-Age", secondary_tag="Symbolic, Series", num_main_preds=2, collapsed_tag="Both"),
    dict(id=3, caption_0="the car is next to the woman", caption_1="the woman is next to the car",
         tag="Noun", secondary_tag="Series", num_main_preds=1, collapsed_tag="Object"),
    dict(id=4, caption_0="fish flying", caption_1="fly fishing",
         tag="Noun", secondary_tag="Morpheme-Level", num_main_preds=1, collapsed_tag="Object"),
    dict(id=5, caption_0="a dog next to a cat", caption_1="a dog next to a cat",        # identical captions
         tag="Noun", secondary_tag="", num_main_preds=1, collapsed_tag="Object"),
    dict(id=6, caption_0="a shiny table on a wooden chair", caption_1="a wooden table on a shiny chair",
         tag="Adjective-Texture", secondary_tag="", num_main_preds=2, collapsed_tag="Relation"),  # identical images
    dict(id=7, caption_0="the large cat watches the small dog", caption_1="the small cat watches the large dog",
         tag="Adjective-Size", secondary_tag="Pragmatics", num_main_preds=1, collapsed_tag="Relation"),
]
FILE_ORDER = [3, 0, 7, 1, 6, 2, 5, 4]   # files list examples out of id order; loaders sort by id
RGBA_IMAGE, JPEG_AS_PNG, SAME_IMAGES, SAME_CAPTIONS = (2, 0), (3, 1), 6, 5


def winoground_image_blobs(tmp: Path) -> dict[tuple[int, int], bytes]:
    """Encoded bytes of every synthetic image (RGBA PNG, JPEG data under a .png name, a duplicate)."""
    blobs = {}
    for rec in RECORDS:
        for k in (0, 1):
            mode, fmt = ("RGBA", "PNG") if (rec["id"], k) == RGBA_IMAGE else ("RGB", "PNG")
            fmt = "JPEG" if (rec["id"], k) == JPEG_AS_PNG else fmt
            path = make_image(tmp / f"src_{rec['id']}_{k}.png", size=(48, 40), seed=10 * rec["id"] + k,
                                      mode=mode, fmt=fmt)
            blobs[rec["id"], k] = path.read_bytes()
    blobs[SAME_IMAGES, 1] = blobs[SAME_IMAGES, 0]
    return blobs


def winoground_jsonl_lines() -> list[str]:
    by_id = {r["id"]: r for r in RECORDS}
    return [json.dumps({**by_id[i], "image_0": f"ex_{i}_img_0", "image_1": f"ex_{i}_img_1"}) for i in FILE_ORDER]


def make_winoground(root: Path, layout: str, blobs: dict) -> Path:
    """A synthetic Winoground copy in ``layout`` (folder / zip / parquet) under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    if layout in ("folder", "zip"):
        (root / "examples.jsonl").write_text("\n".join(winoground_jsonl_lines()) + "\n", encoding="utf-8")
    if layout == "folder":
        for (i, k), raw in blobs.items():
            (root / "images").mkdir(exist_ok=True)
            (root / "images" / f"ex_{i}_img_{k}.png").write_bytes(raw)
    elif layout == "zip":
        with zipfile.ZipFile(root / "images.zip", "w") as zf:
            for (i, k), raw in sorted(blobs.items()):
                zf.writestr(f"images/ex_{i}_img_{k}.png", raw)
    elif layout == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq
        by_id = {r["id"]: r for r in RECORDS}
        rows = [by_id[i] for i in FILE_ORDER]
        image_type = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
        columns = {"id": pa.array([r["id"] for r in rows], pa.int32())}
        for k in (0, 1):
            columns[f"image_{k}"] = pa.array([{"bytes": blobs[r["id"], k], "path": f"ex_{r['id']}_img_{k}.png"}
                                              for r in rows], image_type)
        for f in ("caption_0", "caption_1", "tag", "secondary_tag", "collapsed_tag"):
            columns[f] = pa.array([r[f] for r in rows], pa.string())
        columns["num_main_preds"] = pa.array([r["num_main_preds"] for r in rows], pa.int32())
        (root / "data").mkdir(exist_ok=True)
        pq.write_table(pa.table(columns), root / "data" / "test-00000-of-00001.parquet")
    return root


def synthetic_winoground(root: Path, layout: str = "folder") -> Path:
    """A synthetic Winoground copy (8 examples, one with identical captions, one with identical images)."""
    return make_winoground(Path(root), layout, winoground_image_blobs(Path(root).parent / f"{Path(root).name}-src"))


# ------------------------------------------------------------------------------ engine results as tables

def per_query_table(result, groups=None):
    """The whole per-query table of an engine result at once (the results writer streams it in chunks); ``groups``:
    the benchmark's grouping fields (default: CREPE's)."""
    import pandas as pd
    from crepe_utils import metrics
    from crepe_utils.protocol import retrieval
    from crepe_utils.results import store
    ranks = metrics.ranks_from_flat(result.scores, result.offsets)
    return pd.concat(list(retrieval.per_query_frames(result, ranks, groups or store.LEGACY_GROUPS)), ignore_index=True)


def retrieval_summary(result, loaded, n_boot: int = 50, tie_policy: str = "pessimistic"):
    """The retrieval summary table of an engine result on ``loaded`` (a benchmarks.Loaded)."""
    from crepe_utils import metrics
    from crepe_utils.protocol import Loaded, retrieval
    from crepe_utils.results import store
    if not isinstance(loaded, Loaded):          # a CREPE QuerySet: its queries, grouped as CREPE's are
        loaded = Loaded(loaded.queries, loaded.issues, groups=store.LEGACY_GROUPS)
    ranks = metrics.ranks_from_flat(result.scores, result.offsets)
    return retrieval.summary_table(result, loaded, ranks, tie_policy, n_boot)


def crepe_queries(data_dir, benchmark: str = "productivity", **selection):
    """A CREPE benchmark's queries as an evaluation reads them (benchmarks.Loaded)."""
    from crepe_utils import benchmarks
    return benchmarks.load(benchmark, benchmarks.Sources(data_dir), benchmarks.Selection(**selection))


def write_retrieval(directory, summary, per_query, manifest):
    """Write a retrieval result from its two tables (a frame or frames) through the one results writer."""
    import pandas as pd
    from crepe_utils.results import store
    from crepe_utils.protocol import Tables
    frames = [per_query] if isinstance(per_query, pd.DataFrame) else per_query
    tables = Tables(summary, store.SUMMARY_COLUMNS, frames, store.PER_QUERY_COLUMNS, "%.6g", "%.9g")
    model = str(summary["model"].iloc[0]) if len(summary) and "model" in summary else "fixture-model"
    return store.write_result(directory, tables, {"model": {"key": model}, **manifest})


def is_temporary(path: Path, root: Path) -> bool:
    """Whether ``path`` lies inside a hidden (temporary) folder below ``root``."""
    return any(part.startswith(".") for part in path.relative_to(root).parts[:-1])


def issue_counts(query_set) -> Counter:
    """A CREPE query set's issues counted by kind."""
    return Counter(i.kind for i in query_set.issues)


def book_missing() -> str | None:
    """Why the book cannot be built here (the docs extra, which make docs installs, is absent), or None."""
    from crepe_utils.site.build import missing_extra
    absent = missing_extra()
    return (f"the docs extra (pip install '.[docs]', which make docs installs) builds the book; absent: "
            f"{', '.join(absent)}") if absent else None
