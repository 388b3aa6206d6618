"""Write a toy world: a CREPE data root in the real layout, its images, and the training split.

``build_world(config, out)`` writes (all files atomically; same config → byte-identical files)::

    out/syst_hard_negatives/syst_vg_hard_negs_{seen,unseen}_compounds_in_toy.csv
    out/prod_hard_negatives/{atom,swap,negate}/prod_vg_hard_negs_{type}_complexity_{4..12}.csv
    out/images/VG_100K/<image_id>.jpg          test images (what the loaders and engine read)
    out/training/{train,val}.csv               image_id, caption (val: unseen scenes, seen compounds)
    out/training/images/<image_id>.jpg
    out/scene_graphs.jsonl                     every scene: split, image_id, objects
    out/world.json                             vocabulary, held-out compounds, counts, id ranges

**Held out.** ``config.held_out`` lists compounds (``"red circle"``, ``"circle left of square"``);
a triple's converse (``"square right of circle"``) is held out with it, since both describe one
picture. No training or validation scene *depicts* a held-out compound (scenes are redrawn until
none does), so no true training caption can write one. The default holds out each of red, green,
blue and yellow on two of the four shapes (and two triples): every atom is seen, but a held-out
colour is seen only on the other two shapes, as unseen compounds arise in real corpora from
skewed co-occurrence. (Holding out one colour per shape leaves a tiny CLIP, which reads captions
much like bags of words, with no measurable SC → UC difference.)

**Systematicity** (CREPE §3.2, §4.1). Test scenes are drawn without restriction and give one
caption each, of one or two objects (≥ 2 atoms, ≥ 1 compound). A caption is SC when all its
compounds occur in the training captions, UC when at least one does not (its atoms all occur).
The splits are matched on caption shape: row i of both has the same numbers of objects and
attributes (``SYST_CAPTION_SHAPES``), so SC and UC differ in seen-ness, not in caption length.
Every row has 4 HN-Atom and 6 HN-Comp negatives (retrieval sets of 5 and 7, app. A.5; the
combined set of 11 gives CREPE's 9.09 % chance).

**Productivity** (§3.3, §4.2). For each n in 4..12, captions of exactly n atoms: one random walk
over at most four objects (n = 2k - 1 + attributes), with 5 negatives of each type. The same
captions appear in the three files, so the 16-candidate "all" sets exist, except at n = 4: a
4-atom caption ("a red circle left of a square") has at most 3 distinct permutations of its
atoms, so no HN-Swap set of 5 exists and the n = 4 swap file has a header and no rows (CREPE's
own n = 4 swap file has 27 rows against 1,258 for HN-Atom).

**Boxes** are the full image: size is an absolute attribute here, and cropping then resizing
to the model's input would change how large a shape looks.
"""
from __future__ import annotations

import csv
import io
import json
import os
import random
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..progress import tqdm

from ..benchmarks.crepe import queries as D
from ..atomic import atomic_path, write_json, write_text
from ..errors import DataError
from . import foils as F
from . import world as W

TRAIN_DATA = "toy"
SYST_NEGATIVES = {"atom": 4, "comp": 6}
PROD_NEGATIVES = 5
#: a 4-atom caption has at most 3 distinct permutations of its atoms (module docstring)
SWAP_MIN_COMPLEXITY = 5
MAX_CHAIN = 4             #: objects in one caption (keeps captions within 32 tokens)
#: (objects, attributes) of systematicity captions, cycled through; SC and UC get the same shapes
SYST_CAPTION_SHAPES = ((1, 1), (1, 2), (2, 0), (2, 1), (2, 2))
#: relative frequency of training captions of 1, 2, 3 and 4 objects (short captions teach atoms,
#: long ones are specific enough to have few false negatives in a batch)
TRAIN_CAPTION_OBJECTS = (0.3, 0.35, 0.2, 0.15)
SYST_HEADER = ["region_id", "caption", "x", "y", "width", "height", "valid_hard_negs_comp",
               "valid_hard_negs_atom", "image_id", "valid_hard_negs_combined"]
#: each of red, green, blue and yellow is held out on two of the four shapes (and seen on the other
#: two), purple on none; plus two triples (with their converses)
DEFAULT_HELD_OUT = ("red circle", "red triangle", "green circle", "green cross", "blue square", "blue cross",
                    "yellow triangle", "yellow square", "circle left of square", "triangle above cross")


class WorldError(DataError):
    """A world that cannot be built as configured (the message says which setting to change)."""


@dataclass(frozen=True)
class WorldConfig:
    seed: int = 0
    image_size: int = 64
    train_scenes: int = 6000
    captions_per_scene: int = 4
    val_scenes: int = 400
    syst_rows_per_split: int = 600
    prod_rows_per_complexity: int = 120
    held_out: tuple[str, ...] = DEFAULT_HELD_OUT
    scene_objects: tuple[int, int] = (2, 5)      #: objects per training and systematicity scene
    prod_scene_objects: tuple[int, int] = (4, 6)
    attribute_probability: float = 0.75          #: chance that a training caption writes a word
    max_attempts_per_row: int = 500

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Row:
    scene: W.Scene
    caption: str
    negatives: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


# ------------------------------------------------------------------------------ scenes

def _scene_count(rng: random.Random, bounds: tuple[int, int]) -> int:
    return rng.randint(bounds[0], min(bounds[1], W.GRID * W.GRID))


def _training_scene(rng: random.Random, image_id: int, config: WorldConfig, held_out: set[str]) -> W.Scene:
    for _ in range(config.max_attempts_per_row):
        scene = W.sample_scene(rng, image_id, _scene_count(rng, config.scene_objects))
        if not W.depicted_compounds(scene) & held_out:
            return scene
    raise WorldError(f"no scene without the held-out compounds {sorted(held_out)} in "
                     f"{config.max_attempts_per_row} draws; hold out fewer compounds or use fewer objects")


def _training_caption(rng: random.Random, scene: W.Scene, p: float) -> str:
    k = min(len(scene.objects), rng.choices(range(1, MAX_CHAIN + 1), weights=TRAIN_CAPTION_OBJECTS)[0])
    n_attributes = sum(rng.random() < p for _ in range(2 * k))
    caption = W.describe(scene, rng, k, n_attributes).text
    F.verify_positive(caption, scene)
    return caption


# ------------------------------------------------------------------------------ test rows

def _syst_row(rng: random.Random, scene: W.Scene, shape: tuple[int, int], split: str,
              seen_compounds: set[str], seen_atoms: set[str]) -> _Row | None:
    """A systematicity row of ``split`` with a caption of ``shape`` (objects, attributes), or None."""
    caption = W.describe(scene, rng, *shape)
    unseen = W.compounds(caption) - seen_compounds
    if ("UC" if unseen else "SC") != split or not set(W.atoms(caption)) <= seen_atoms:
        return None
    text = caption.text
    F.verify_positive(text, scene)
    atom = F.pick_foils([F.atom_foils(caption)], scene, text, SYST_NEGATIVES["atom"], rng)
    comp = F.pick_foils(F.comp_foil_tiers(caption, scene), scene, text, SYST_NEGATIVES["comp"], rng)
    if atom is None or comp is None:
        return None
    return _Row(scene, text, {"atom": atom, "comp": comp}, W.atom_counts(caption))


def _prod_row(rng: random.Random, scene: W.Scene, n: int) -> _Row | None:
    shapes = W.chain_shapes(n, min(MAX_CHAIN, len(scene.objects)))
    if not shapes:
        return None
    k, n_attributes = rng.choice(shapes)
    caption = W.describe(scene, rng, k, n_attributes)
    text = caption.text
    F.verify_positive(text, scene)
    tiers = {"atom": [F.atom_foils(caption)], "negate": [F.negation_foils(caption)]}
    if n >= SWAP_MIN_COMPLEXITY:
        tiers["swap"] = F.swap_foil_tiers(caption)
    negatives = {}
    for hn, candidates in tiers.items():
        picked = F.pick_foils(candidates, scene, text, PROD_NEGATIVES, rng)
        if picked is None:
            return None
        negatives[hn] = picked
    return _Row(scene, text, negatives, W.atom_counts(caption))


# ------------------------------------------------------------------------------ writing

def _csv_text(header: list[str], rows: list[list]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def _save_image(scene: W.Scene, path: Path, image_size: int) -> None:
    with atomic_path(path) as tmp:
        W.render_scene(scene, image_size).save(tmp, format="JPEG", quality=95, subsampling=0)


def _write_systematicity(out: Path, rows: dict[str, list[_Row]], size: int) -> None:
    for split in D.SYST_SPLITS:
        table = [[i, r.caption, 0, 0, size, size, repr(r.negatives["comp"]), repr(r.negatives["atom"]),
                  r.scene.image_id, repr(r.negatives["atom"] + r.negatives["comp"])]
                 for i, r in enumerate(rows[split])]
        write_text(out / "syst_hard_negatives" / D.systematicity_file_name(split, TRAIN_DATA),
                   _csv_text(SYST_HEADER, table))


def _write_productivity(out: Path, rows: dict[int, list[_Row]], size: int) -> None:
    box = [float(0), float(0), float(size), float(size)]
    for hn in D.PROD_HN_TYPES:
        for n, at_n in rows.items():
            table = [[r.scene.image_id, r.caption, n, r.counts["n_objects"], r.counts["n_relations"],
                      r.counts["n_attributes"], 1, repr(r.negatives[hn])] + box
                     for r in at_n if hn in r.negatives]
            write_text(out / "prod_hard_negatives" / hn / D.productivity_file_name(hn, n),
                       _csv_text(list(D.PROD_COLUMNS), table))


# ------------------------------------------------------------------------------ the world

def build_world(config: WorldConfig, out: str | os.PathLike, progress: bool = True) -> dict:
    """Generate the world of ``config`` into ``out`` (a folder without a world); returns world.json."""
    out = Path(out)
    if (out / "world.json").exists():
        raise WorldError(f"{out} already holds a world; build a new one into another folder")
    held_out = W.with_converses(config.held_out)
    syst_caption_shapes(held_out)          # fail before the work when no UC caption can exist
    rngs = {part: random.Random(f"crepe-toy-{config.seed}-{part}") for part in ("train", "val", "syst", "prod")}
    next_id = 1
    scenes: list[tuple[str, W.Scene]] = []

    def new_id() -> int:
        nonlocal next_id
        next_id += 1
        return next_id - 1

    # training and validation: scenes free of held-out compounds, several true captions each
    split_captions: dict[str, list[tuple[int, str]]] = {"train": [], "val": []}
    for part, n_scenes, per_scene in (("train", config.train_scenes, config.captions_per_scene),
                                      ("val", config.val_scenes, 1)):
        rng = rngs[part]
        for _ in tqdm(range(n_scenes), desc=f"toy world: {part} scenes", disable=not progress):
            scene = _training_scene(rng, new_id(), config, held_out)
            scenes.append((part, scene))
            split_captions[part] += [(scene.image_id, _training_caption(rng, scene, config.attribute_probability))
                                     for _ in range(per_scene)]
    seen_compounds = set().union(*(W.compounds(W.parse_caption(c)) for _, c in split_captions["train"]))
    seen_atoms = set().union(*(W.atoms(W.parse_caption(c)) for _, c in split_captions["train"]))

    syst = _systematicity_rows(config, rngs["syst"], held_out, seen_compounds, seen_atoms, new_id, progress)
    prod = _productivity_rows(config, rngs["prod"], new_id, progress)
    scenes += [(f"systematicity-{s}", r.scene) for s in D.SYST_SPLITS for r in syst[s]]
    scenes += [(f"productivity-{n}", r.scene) for n in prod for r in prod[n]]

    for part, scene in tqdm(scenes, desc="toy world: images", disable=not progress):
        folder = out / ("training/images" if part in ("train", "val") else "images/VG_100K")
        _save_image(scene, folder / f"{scene.image_id}.jpg", config.image_size)
    for part, pairs in split_captions.items():
        write_text(out / "training" / f"{part}.csv", _csv_text(["image_id", "caption"], [list(p) for p in pairs]))
    write_text(out / "scene_graphs.jsonl",
               "".join(json.dumps({"split": part, **s.to_dict()}) + "\n" for part, s in scenes))
    _write_systematicity(out, syst, config.image_size)
    _write_productivity(out, prod, config.image_size)
    description = _describe(config, held_out, seen_compounds, split_captions, syst, prod, scenes)
    write_json(out / "world.json", description)
    return description


def syst_caption_shapes(held_out: set[str]) -> list[tuple[int, int]]:
    """The (objects, attributes) shapes of systematicity captions for which a UC caption can exist."""
    kinds = {W.compound_kind(c) for c in held_out}
    shapes = [s for s in SYST_CAPTION_SHAPES
              if (s[0] == 2 and "object-relation-object" in kinds) or (s[1] > 0 and "attribute-object" in kinds)]
    if not shapes:
        raise WorldError("hold out at least one compound: without one there is no unseen-compound (UC) split")
    return shapes


def _systematicity_rows(config: WorldConfig, rng: random.Random, held_out: set[str], seen_compounds: set[str],
                        seen_atoms: set[str], new_id, progress: bool) -> dict[str, list[_Row]]:
    """SC and UC rows matched on caption shape: row i of both splits has the same shape."""
    rows: dict[str, list[_Row]] = {"SC": [], "UC": []}
    shapes = syst_caption_shapes(held_out)
    for i in tqdm(range(config.syst_rows_per_split), desc="toy world: systematicity rows", disable=not progress):
        shape = shapes[i % len(shapes)]
        for split in rows:
            for _ in range(config.max_attempts_per_row):
                scene = W.sample_scene(rng, 0, _scene_count(rng, config.scene_objects))
                row = _syst_row(rng, scene, shape, split, seen_compounds, seen_atoms)
                if row is not None:
                    row.scene = replace(scene, image_id=new_id())
                    rows[split].append(row)
                    break
            else:
                raise WorldError(f"no {split} caption of {shape[0]} object(s) and {shape[1]} attribute(s) in "
                                 f"{config.max_attempts_per_row} scenes; raise max_attempts_per_row or change "
                                 "the held-out compounds")
    return rows


def _productivity_rows(config: WorldConfig, rng: random.Random, new_id, progress: bool) -> dict[int, list[_Row]]:
    rows: dict[int, list[_Row]] = {}
    quota = config.prod_rows_per_complexity
    for n in tqdm(D.COMPLEXITIES, desc="toy world: productivity complexities", disable=not progress):
        rows[n] = []
        for _ in range(config.max_attempts_per_row * quota):
            if len(rows[n]) == quota:
                break
            scene = W.sample_scene(rng, 0, _scene_count(rng, config.prod_scene_objects))
            row = _prod_row(rng, scene, n)
            if row is not None:
                row.scene = replace(scene, image_id=new_id())
                rows[n].append(row)
        if len(rows[n]) < quota:
            raise WorldError(f"only {len(rows[n])} productivity rows of complexity {n}; "
                             "raise max_attempts_per_row or prod_scene_objects")
    return rows


def all_compounds() -> set[str]:
    """Every compound the vocabulary can write (28 attribute-object pairs, 64 triples)."""
    pairs = {f"{a} {s}" for values in W.ATTRIBUTES.values() for a in values for s in W.SHAPES}
    return pairs | {f"{a} {r} {b}" for a in W.SHAPES for r in W.RELATIONS for b in W.SHAPES}


def _describe(config: WorldConfig, held_out: set[str], seen_compounds: set[str],
              split_captions: dict[str, list[tuple[int, str]]], syst: dict[str, list[_Row]],
              prod: dict[int, list[_Row]], scenes: list[tuple[str, W.Scene]]) -> dict:
    """The content of world.json."""
    ids: dict[str, list[int]] = {}
    for part, scene in scenes:
        ids.setdefault(part.split("-")[0], []).append(scene.image_id)
    return {
        "kind": "toy",
        "config": config.to_dict(),
        "vocabulary": {"objects": list(W.SHAPES), "attributes": {k: list(v) for k, v in W.ATTRIBUTES.items()},
                       "relations": list(W.RELATIONS)},
        "compounds": {
            "held_out": list(config.held_out),
            "held_out_with_converses": sorted(held_out),
            "unseen_in_training": sorted(all_compounds() - seen_compounds),
            "n_possible": len(all_compounds()),
            "n_seen_in_training": len(seen_compounds),
        },
        "counts": {
            "train": {"scenes": config.train_scenes, "captions": len(split_captions["train"])},
            "val": {"scenes": config.val_scenes, "captions": len(split_captions["val"])},
            "systematicity": {s: len(r) for s, r in syst.items()},
            "productivity": {hn: {str(n): sum(hn in r.negatives for r in rows) for n, rows in prod.items()}
                             for hn in D.PROD_HN_TYPES},
        },
        "systematicity": {"train_data": TRAIN_DATA, "negatives": SYST_NEGATIVES,
                          "caption_shapes": [list(s) for s in syst_caption_shapes(held_out)]},
        "productivity": {"complexities": list(D.COMPLEXITIES), "negatives": PROD_NEGATIVES,
                         "swap_complexities": [n for n in D.COMPLEXITIES if n >= SWAP_MIN_COMPLEXITY],
                         "max_objects_per_caption": MAX_CHAIN},
        "image_id_ranges": {part: [min(v), max(v)] for part, v in ids.items()},
        "image_size": config.image_size,
        "box": "full image",
    }
