"""A validation report for a CREPE data folder (and, optionally, its images).

``python -m crepe_utils validate --data-dir D [--image-dir I]`` prints it and exits non-zero when
there are errors; notebook 01 shows the same report. Errors are what would make an evaluation
wrong or impossible: missing files, malformed rows, missing or unreadable images. Everything else
(set literals, exact ties, duplicates, boxes outside their image, captions over 77 tokens) is
counted and shown, because it changes how results must be read, not whether they can be computed.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ... import paths
from ...engine.images import box_outside, box_wholly_outside, open_rgb
from ...digests import sha256_file
from . import queries as D
from ...imagesets.visual_genome import ImageIndex
from ...models import fast_tokenizer
from .datasets import CREPE_CSVS
from ...lazy import lazy

pd = lazy("pandas")

CONTEXT_LENGTH = 77


@dataclass
class ValidationReport:
    data_dir: str
    image_dir: str | None
    files: pd.DataFrame                       #: one row per CSV: counts
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing_images: list[str] = field(default_factory=list)
    unreadable_images: list[str] = field(default_factory=list)
    boxes_outside: int = 0
    token_lengths: pd.DataFrame | None = None  #: per distinct text: benchmark, hn_type, role, n_tokens
    stats: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors

    COUNT_COLUMNS = ("rows", "queries", "bad_rows", "empty_negatives", "set_literal_rows",
                     "positive_among_negatives", "duplicate_queries")

    def totals(self) -> pd.Series:
        return self.files[list(self.COUNT_COLUMNS)].sum()

    def to_text(self, max_files: int = 60) -> str:
        lines = [f"CREPE data: {self.data_dir}" + (f"   images: {self.image_dir}" if self.image_dir else "")]
        if not self.files.empty:
            view = self.files.drop(columns=["path", "train_data"], errors="ignore")
            lines.append(view.head(max_files).to_string(index=False))
            if len(view) > max_files:
                lines.append(f"... {len(view) - max_files} more files")
            t = self.totals()
            lines.append("totals: " + ", ".join(f"{k}={int(v):,}" for k, v in t.items()))
        if self.image_dir:
            lines.append(f"images: {len(self.missing_images):,} missing"
                         + (f" (first: {', '.join(self.missing_images[:10])})" if self.missing_images else "")
                         + f", {len(self.unreadable_images):,} unreadable, "
                           f"{self.boxes_outside:,} boxes reach outside their image")
        for note in self.notes:
            lines.append(f"note: {note}")
        for err in self.errors:
            lines.append(f"ERROR: {err}")
        lines.append("OK" if self.ok else f"{len(self.errors)} error(s)")
        return "\n".join(lines)


def _file_row(label: str, qs: D.QuerySet, benchmark: str, hn_type: str, split: str, complexity, path: Path,
              train_data: str = "") -> dict:
    kinds = Counter(i.kind for i in qs.issues)
    keys = Counter((q.image_id, q.box, q.positive) for q in qs)
    n_negs = [len(q.negatives) for q in qs]
    return {
        "file": label, "benchmark": benchmark, "hn_type": hn_type, "split": split,
        "complexity": complexity if complexity is not None else pd.NA,
        "rows": qs.files.get(label, 0), "queries": len(qs),
        "bad_rows": kinds.get("bad row", 0), "empty_negatives": kinds.get("empty negatives", 0),
        "set_literal_rows": kinds.get("set literal", 0),
        "positive_among_negatives": kinds.get("positive among negatives", 0),
        "duplicate_queries": sum(v - 1 for v in keys.values() if v > 1),
        "negatives_min": min(n_negs) if n_negs else 0, "negatives_max": max(n_negs) if n_negs else 0,
        "path": str(path), "train_data": train_data,     # a systematicity file's training set
    }


def systematicity_train_data(data_dir: str | os.PathLike) -> list[str]:
    """Training-set names of the systematicity files under ``data_dir`` (cc12m, yfcc, laion, toy …)."""
    names = set()
    for path in Path(data_dir).rglob("syst_vg_hard_negs_*_compounds_in_*.csv"):
        match = re.fullmatch(r"syst_vg_hard_negs_(?:seen|unseen)_compounds_in_(.+)\.csv", path.name)
        if match and "__MACOSX" not in path.parts:
            names.add(match.group(1))
    return sorted(names)


def validate(data_dir: str | os.PathLike, image_dir: str | os.PathLike | None = None,
             token_lengths: bool = True, train_data=None, progress: bool = False) -> ValidationReport:
    """Check every CREPE CSV found under ``data_dir`` (and the images, when ``image_dir`` is given).

    ``train_data``: the systematicity training sets to check; default: every one with files.
    """
    report = ValidationReport(str(data_dir), str(image_dir) if image_dir else None, pd.DataFrame())
    if not Path(data_dir).is_dir():
        report.errors.append(f"data folder {data_dir} {paths.not_a_folder(data_dir)} (run `make data` or pass --data-dir)")
        return report
    found = _Found()
    _read_productivity(data_dir, report, found)
    _read_systematicity(data_dir, report, found,
                        systematicity_train_data(data_dir) if train_data is None else train_data)
    _note_what_was_found(data_dir, report, found)
    report.files = pd.DataFrame(found.rows)
    if not report.files.empty:
        report.files["complexity"] = report.files["complexity"].astype("Int64")
    report.stats = productivity_stats([q for q in found.queries if q.benchmark == "productivity"])
    if found.prod_files:
        report.stats["files"] = found.prod_files
    if token_lengths and found.queries:
        _check_tokens(report, found.queries)
    if image_dir is not None:
        _check_images(report, found.queries, image_dir, progress)
    return report


@dataclass
class _Found:
    """What :func:`validate` read: a row per file, every query, the productivity files' stats."""
    rows: list[dict] = field(default_factory=list)
    queries: list[D.Query] = field(default_factory=list)
    prod_files: dict[str, dict] = field(default_factory=dict)
    n_productivity: int = 0
    n_systematicity: int = 0

    def add(self, report: ValidationReport, row: dict, qs: D.QuerySet) -> None:
        self.rows.append(row)
        self.queries.extend(qs.queries)
        report.errors.extend(str(i) for i in qs.issues if i.kind == "bad row")


def _read_productivity(data_dir, report: ValidationReport, found: _Found) -> None:
    for hn in D.PROD_HN_TYPES:
        for n in D.COMPLEXITIES:
            name = D.productivity_file_name(hn, n)
            try:
                path = D.find_file(data_dir, name, prefer_parent=hn)
            except D.DataError:
                continue
            found.n_productivity += 1
            try:
                qs = D.load_productivity(data_dir, [hn], [n], on_bad_row="skip")
            except D.DataError as exc:
                report.errors.append(str(exc))
                continue
            found.add(report, _file_row(name, qs, "productivity", hn, "", n, path), qs)
            found.prod_files[name] = productivity_file_stats(qs, name, path)


def _read_systematicity(data_dir, report: ValidationReport, found: _Found, train_data) -> None:
    for td in train_data:
        for split in D.SYST_SPLITS:
            name = D.systematicity_file_name(split, td)
            try:
                path = D.find_file(data_dir, name)
            except D.DataError:
                continue
            found.n_systematicity += 1
            for hn in D.SYST_HN_TYPES:
                try:
                    qs = D.load_systematicity(data_dir, td, [hn], [split], on_bad_row="skip")
                except D.DataError as exc:
                    report.errors.append(str(exc))
                    continue
                found.add(report, _file_row(f"{name}[{hn}]", qs, "systematicity", hn, split, None, path, td), qs)


def _note_what_was_found(data_dir, report: ValidationReport, found: _Found) -> None:
    if found.n_productivity == 0 and found.n_systematicity == 0:
        report.errors.append(f"no CREPE CSV found under {data_dir} (run `make data` or pass --data-dir)")
    elif found.n_productivity not in (0, 27):
        report.notes.append(f"{found.n_productivity} of CREPE's 27 productivity files found under {data_dir}: "
                            "an evaluation covers only those (name the complexities explicitly)")
    if found.n_systematicity == 0:
        report.notes.append("no systematicity CSVs found (they are in syst_hard_negatives.zip)")
    if any(p.name.endswith("_all.csv") for p in Path(data_dir).rglob("prod_vg_hard_negs_*_all.csv")):
        report.notes.append("prod_vg_hard_negs_*_all.csv present: not used; the paper's productivity results "
                            "come from the per-complexity files (the _all files are not their concatenation)")


def _check_tokens(report: ValidationReport, queries) -> None:
    ids = distinct_token_ids(t for q in queries for t in (q.positive, *q.negatives))
    report.token_lengths = _token_lengths(queries, ids)
    over = report.token_lengths[report.token_lengths["n_tokens"] > CONTEXT_LENGTH]
    if len(over):
        report.notes.append(f"{len(over):,} distinct captions exceed {CONTEXT_LENGTH} tokens; the evaluation "
                            "truncates them (policy in the results manifest)")
    ties = token_identical_ties(queries, ids)
    report.stats["token_identical_ties"] = sum(ties.values())
    if ties:
        report.notes.append("queries with a negative token-identical to the positive (an exact tie for "
                            "every CLIP model): " + ", ".join(f"{b} {h}: {n:,}" for (b, h), n in sorted(ties.items())))


def productivity_stats(queries) -> dict:
    """Totals of the productivity files, in the paper's terms (Table 1 / app. A.5)."""
    queries = list(queries)
    if not queries:
        return {}
    per_type = Counter(q.hn_type for q in queries)
    return {
        "n_rows": len(queries),
        "n_hard_negatives": sum(len(q.negatives) for q in queries),
        "n_distinct_hard_negatives": len({n for q in queries for n in q.negatives}),
        "n_ground_truths": len({(q.image_id, q.positive) for q in queries}),
        "n_distinct_captions": len({q.positive for q in queries}),
        "n_images": len({q.image_id for q in queries}),
        "n_crops": len({(q.image_id, q.box) for q in queries}),
        "n_distinct_texts": len({c for q in queries for c in q.candidates}),
        "n_candidate_texts": sum(len(q.candidates) for q in queries),
        "rows_per_type": dict(per_type),
        "set_literal_rows": sum(q.set_literal for q in queries),
        # rows repeating an earlier (HN type, image, caption), e.g. the same caption at two complexities
        "repeated_ground_truths": len(queries) - len({(q.hn_type, q.image_id, q.positive) for q in queries}),
        "positive_among_negatives": sum(q.positive_in_negatives for q in queries),
    }


def productivity_file_stats(qs: D.QuerySet, name: str, path: Path) -> dict:
    """One productivity CSV's sha256 and counts, in the columns of the pinned released counts."""
    return {
        "sha256": sha256_file(path), "rows": qs.files.get(name, 0), "queries": len(qs),
        "hard_negatives": sum(len(q.negatives) for q in qs),
        "ground_truths": len({(q.image_id, q.positive) for q in qs}),
        "set_literal_rows": sum(q.set_literal for q in qs),
        "positive_among_negatives": sum(q.positive_in_negatives for q in qs),
    }


def query_counts(queries) -> dict[tuple[str, int], int]:
    """(hn_type, complexity) → number of queries (N of the granularity check)."""
    return dict(Counter((q.hn_type, q.complexity) for q in queries if q.benchmark == "productivity"))


_TOKENIZER = None


def _tokenizer():
    global _TOKENIZER
    if _TOKENIZER is None:
        from open_clip.tokenizer import SimpleTokenizer
        _TOKENIZER = SimpleTokenizer()
    return _TOKENIZER


@lru_cache(maxsize=None)
def token_ids(text: str) -> tuple[int, ...]:
    """CLIP BPE ids of ``text`` without start/end tokens (open_clip's cleaning: ftfy, lower-case)."""
    return tuple(_tokenizer().encode(text))


def distinct_token_ids(texts) -> dict[str, tuple[int, ...]]:
    """Each distinct text of ``texts`` → its ids as :func:`token_ids` gives them, encoded as one batch by the fast
    path (:mod:`crepe_utils.models.fast_tokenizer`: each distinct word encoded once; the same ids, which its tests
    check on every released caption)."""
    distinct = list(dict.fromkeys(texts))
    return dict(zip(distinct, map(tuple, fast_tokenizer.encode_batch(_tokenizer(), distinct))))


def _token_lengths(queries, ids: dict[str, tuple[int, ...]]) -> pd.DataFrame:
    """CLIP token counts (with start and end tokens) of each distinct text per retrieval set."""
    seen: dict[tuple, None] = {}
    for q in queries:
        group = (q.benchmark, q.hn_type, q.split, q.complexity if q.complexity is not None else -1)
        seen.setdefault(group + ("positive", q.positive))
        for n in q.negatives:
            seen.setdefault(group + ("negative", n))
    rows = [key[:5] + (len(ids[key[5]]) + 2,) for key in seen]
    df = pd.DataFrame(rows, columns=["benchmark", "hn_type", "split", "complexity", "role", "n_tokens"])
    df["complexity"] = df["complexity"].where(df["complexity"] >= 0).astype("Int64")
    return df


def token_identical_ties(queries, ids: dict[str, tuple[int, ...]] | None = None) -> Counter:
    """Queries with a negative whose CLIP tokens equal the positive's, per (benchmark, HN type).

    Such a negative is an exact tie for every CLIP model (the tokenizer lower-cases and collapses
    white space), whether or not its string equals the positive: e.g. HN-Neg negatives that are
    only the sentence-cased positive.
    """
    queries = list(queries)
    ids = ids if ids is not None else distinct_token_ids(t for q in queries for t in (q.positive, *q.negatives))
    out: Counter = Counter()
    for q in queries:
        pos = ids[q.positive]
        if any(ids[neg] == pos for neg in q.negatives):
            out[(q.benchmark, q.hn_type)] += 1
    return out


def _check_images(report: ValidationReport, queries, image_dir, progress: bool = False) -> None:
    """Every queried image decoded in full (a damaged file fails here, not halfway through a run)."""
    from tqdm.auto import tqdm
    try:
        index = ImageIndex(image_dir)
    except FileNotFoundError as exc:
        report.errors.append(str(exc))
        return
    report.missing_images = index.missing(q.image_id for q in queries)
    if report.missing_images:
        report.errors.append(f"{len(report.missing_images):,} image(s) missing under {image_dir} "
                             f"(first: {', '.join(report.missing_images[:10])}); run `make data-vg`")
    sizes: dict[str, tuple[int, int] | None] = {}
    ids = list(dict.fromkeys(q.image_id for q in queries if q.image_id in index))
    for image_id in tqdm(ids, desc="decode images", unit="img", disable=not progress):
        try:
            sizes[image_id] = open_rgb(index.path(image_id)).size
        except Exception as exc:  # noqa: BLE001 - any decoder failure means an unreadable image
            sizes[image_id] = None
            report.unreadable_images.append(image_id)
            if len(report.unreadable_images) <= 10:
                report.errors.append(f"{index.path(image_id)} (image {image_id}) cannot be decoded: "
                                     f"{type(exc).__name__}: {exc}")
    if report.unreadable_images:
        report.errors.append(f"{len(report.unreadable_images):,} image(s) unreadable "
                             f"(first: {', '.join(report.unreadable_images[:10])}); re-download them")
    seen_boxes = set()
    outside = []
    for q in queries:
        size = sizes.get(q.image_id)
        if size is None:
            continue
        if box_wholly_outside(q.box, size):
            outside.append(f"{q.query_id}: box {q.box} lies wholly outside image {q.image_id} ({size[0]}×{size[1]})")
        key = (q.image_id, q.box)
        if key not in seen_boxes:
            seen_boxes.add(key)
            report.boxes_outside += box_outside(q.box, size)
    report.errors.extend(outside[:10])
    if len(outside) > 10:
        report.errors.append(f"... {len(outside) - 10} more rows with a box wholly outside its image")


# ------------------------------------------------------------------------------ command line

def add_arguments(parser) -> None:
    parser.add_argument("--data-dir", default=None,
                        help="folder holding CREPE's CSVs (default: $CREPE_DATA/crepe, i.e. ./data/crepe)")
    parser.add_argument("--image-dir", default=None, help="Visual Genome images (checked when given)")
    parser.add_argument("--no-tokens", action="store_true", help="skip the CLIP token-length and tie scan")


def run(args) -> int:
    # No folder to validate is a user error (one line on stderr); what is wrong inside one, the report.
    data_dir = CREPE_CSVS.existing(args.data_dir)
    if data_dir is None:
        raise D.DataError(f"no CREPE data found at {CREPE_CSVS.dir()}: "
                          "run `make data` or pass --data-dir")
    if not Path(data_dir).is_dir():
        raise D.DataError(f"data folder {data_dir} {paths.not_a_folder(data_dir)} (run `make data` or pass --data-dir)")
    report = validate(data_dir, args.image_dir, token_lengths=not args.no_tokens, progress=True)
    print(report.to_text())
    return 0 if report.ok else 1
