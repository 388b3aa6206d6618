"""The material of the teaching notebook (00, "How compositionality is evaluated"): one productivity
query worked through, the rank rule and its tie policies, Recall@K, and a reader's own query.

``load_source``     the productivity queries to work through: CREPE's released CSVs when present, else
                    the toy world's (the same format, generated), else a hand-written example, labelled
``score_source``    every candidate's score from each blind scorer (trained ones cross-fitted by image)
``worked_query``    the query worked through (the first of the HN-Atom file of lowest complexity) and the
                    same image's queries of the other HN types
``candidate_table`` / ``rank_table``  its candidates and scores; per scorer, the rank of the positive
``tie_table``       Recall@1 of each scorer on one file under each tie policy, beside chance
``recall_table``    Recall@K of each scorer on one file, K = 1 … the candidates per query
``model_scoring``   how the toy model scores a query: image and caption embeddings, their cosines
``swap_words``      how many HN-Swap negatives only reorder the positive's words
``reader_table``    a reader's caption and negatives, as each blind scorer (and the toy model) ranks them
``exercises``, ``notebook_map``  Markdown generated from those tables (every number in it is computed)

The tie policies, for a positive with ``h`` negatives scoring higher and ``t`` scoring the same:
*strict* (this project's, "pessimistic") gives rank ``1 + h + t``, so a tie is a miss at Recall@1;
*optimistic* gives ``1 + h``; *random* breaks ties by a fair draw, a hit at Recall@1 with probability
``1 / (1 + t)`` when ``h = 0``; the official CREPE code takes the positive's position in
``torch.argsort(descending=True)``, whose order among equal scores PyTorch does not specify.
"""
from __future__ import annotations

import io
import json
import os
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import benchmarks, blind, escaping, metrics
from ..analysis import reporting
from ..blind.folds import fold_of
from ..benchmarks.crepe import queries as crepe_queries
from ..benchmarks.crepe.datasets import CREPE_CSVS
from ..benchmarks.crepe.queries import Query
from ..engine.encoders import encode_images, encode_texts
from ..engine.images import crop, open_rgb
from ..errors import CrepeError, error_line
from ..models import load_model
from .pages import notebook_pages
from ..lazy import lazy

pd = lazy("pandas")

#: The scorers worked through: two fixed rules, an English prior and a model trained on true captions.
SCORERS = ("length", "negation", "wordfreq", "bigram")
#: The image id the reader's query is scored under (its own fold of the cross-fitting).
READER_IMAGE = "your query"
HN_NAMES = {"atom": "HN-Atom", "swap": "HN-Swap", "negate": "HN-Neg", "comp": "HN-Comp"}
POLICIES = ("strict", "random", "optimistic")


@dataclass(frozen=True)
class Source:
    """The productivity queries the notebook works through, and what they are."""

    kind: str                    #: "crepe", "toy" or "example"
    label: str                   #: how the notebook names them
    queries: tuple               #: crepe_utils.benchmarks.crepe.queries.Query, file order
    note: str                    #: one line: where they come from, and what brings the real ones


#: A hand-written example in CREPE's productivity form (our own captions, not CREPE's data): what the
#: notebook works through when neither CREPE's CSVs nor the toy world are on this machine.
EXAMPLE = (
    ("1", "atom", "a dog on a sofa. a cushion under the dog.",
     ("a cat on a sofa. a cushion under the dog.", "a dog on a chair. a cushion under the dog.",
      "a dog on a sofa. a blanket under the dog.", "a dog under a sofa. a cushion under the dog.",
      "a dog on a sofa. a cushion under the cat.")),
    ("1", "swap", "a dog on a sofa. a cushion under the dog.",
     ("a sofa on a dog. a cushion under the dog.", "a dog on a cushion. a sofa under the dog.",
      "a cushion on a sofa. a dog under the cushion.", "a dog on a sofa. a dog under the cushion.",
      "a sofa on a dog. a dog under the cushion.")),
    ("1", "negate", "a dog on a sofa. a cushion under the dog.",
     ("A dog not on a sofa. A cushion under the dog.", "There is no dog on a sofa. A cushion under the dog.",
      "A dog on a sofa. A cushion not under the dog.", "A dog on a sofa. There is no cushion.",
      "A dog on a sofa. A cushion under the dog. There is no sofa.")),
    ("2", "atom", "a red kite above a green tree.",
     ("a blue kite above a green tree.", "a red kite below a green tree.", "a red bird above a green tree.",
      "a red kite above a green house.", "a red kite above a yellow tree.")),
    ("3", "atom", "a man holding a white cup.",
     ("a woman holding a white cup.", "a man holding a black cup.", "a man dropping a white cup.",
      "a man holding a white plate.", "a boy holding a white cup.")),
    ("4", "atom", "two birds on a wire.",
     ("two birds under a wire.", "two cats on a wire.", "two birds on a branch.", "three birds on a wire.",
      "two birds on a roof.")),
)


def _example() -> tuple:
    return tuple(Query("productivity", hn, "", 4, "", image, (0.0, 0.0, 1.0, 1.0), positive, negatives,
                       f"hand-written example:{i + 1}") for i, (image, hn, positive, negatives) in enumerate(EXAMPLE))


def load_source(crepe_dir=None, toy_dir: str | os.PathLike | None = "results/toy") -> Source:
    """CREPE's productivity queries when their CSVs are found, else the toy world's, else the example."""
    folder = CREPE_CSVS.existing(crepe_dir)
    why = "no CREPE productivity CSVs were found"
    if folder is not None and folder.is_dir():
        try:
            queries = tuple(crepe_queries.load_productivity(folder).queries)
            return Source("crepe", "CREPE's released productivity files", queries,
                          "The queries are CREPE's own, read from its released productivity CSVs.")
        except CrepeError as exc:
            why = f"CREPE's productivity CSVs cannot be read ({error_line(exc)})"
    world = Path(toy_dir) / "world" if toy_dir is not None else None
    if world is not None and (world / "prod_hard_negatives").is_dir():
        queries = tuple(crepe_queries.load_productivity(world).queries)
        return Source("toy", "the toy world's productivity files (generated, in CREPE's format)", queries,
                      f"The queries are the toy world's, not CREPE's: {why}; `make data-text` fetches CREPE's.")
    return Source("example", "a hand-written example in CREPE's format (not CREPE's data)", _example(),
                  f"The queries are a hand-written example, not CREPE's: {why}, and no toy world is built; "
                  "`make data-text` fetches CREPE's, `make toy` builds the toy world.")


@dataclass(frozen=True)
class Scored:
    """Every candidate's score from each scorer, flat in query order (``offsets`` delimit the queries)."""

    source: Source
    scores: dict                 #: scorer name → np.ndarray, one score per candidate
    offsets: np.ndarray

    def of(self, index: int) -> dict[str, np.ndarray]:
        lo, hi = self.offsets[index], self.offsets[index + 1]
        return {name: s[lo:hi] for name, s in self.scores.items()}

    def indices(self, hn_type: str, complexity: int) -> np.ndarray:
        return np.array([i for i, q in enumerate(self.source.queries)
                         if q.hn_type == hn_type and q.complexity == complexity], dtype=np.int64)


def score_source(source: Source, scorers=SCORERS) -> Scored:
    """Each scorer's scores of every candidate of the source (trained scorers cross-fitted over all of it)."""
    offsets = np.r_[0, np.cumsum([len(q.candidates) for q in source.queries])].astype(np.int64)
    return Scored(source, {name: blind.score(name, source.queries) for name in scorers}, offsets)


def worked_query(source: Source) -> tuple[int, list[int]]:
    """(the query worked through: the first of the HN-Atom file of lowest complexity, the same image and
    caption's queries of the other HN types at that complexity)."""
    atoms = [i for i, q in enumerate(source.queries) if q.hn_type == "atom"]
    low = min(source.queries[i].complexity for i in atoms)
    first = next(i for i in atoms if source.queries[i].complexity == low)
    q = source.queries[first]
    others = [next((i for i, o in enumerate(source.queries) if o.hn_type == hn and o.complexity == q.complexity
                    and o.image_id == q.image_id and o.positive == q.positive), None) for hn in ("swap", "negate")]
    return first, [i for i in others if i is not None]


def candidate_table(scored: Scored, index: int) -> pd.DataFrame:
    """The query's candidates (positive first), their words, and each scorer's score."""
    q = scored.source.queries[index]
    table = pd.DataFrame({"candidate": ["positive"] + [f"negative {k}" for k in range(1, len(q.negatives) + 1)],
                          "text": list(q.candidates),
                          "words": [len(blind.UNCASED.words(t)) for t in q.candidates]})
    for name, s in scored.of(index).items():
        table[f"blind:{name}"] = s
    return table


def ranks_of(scores: np.ndarray) -> dict:
    """The positive's (column 0's) rank under each tie policy, for one query's scores."""
    higher = int(np.sum(scores[1:] > scores[0]))
    tied = int(np.sum(scores[1:] == scores[0]))
    return {"higher": higher, "tied": tied, "rank (strict)": 1 + higher + tied, "rank (optimistic)": 1 + higher,
            "R@1 (random)": 100.0 * (higher == 0) / (1 + tied), "rank (torch.argsort)": argsort_rank(scores)}


def argsort_rank(scores: np.ndarray) -> int:
    """The official code's rank: 1 + the positive's position in ``torch.argsort(descending=True)`` here."""
    import torch
    order = torch.argsort(torch.tensor(np.array(scores, dtype=np.float64)), descending=True)
    return int((order == 0).nonzero()[0, 0]) + 1


def rank_table(scored: Scored, index: int) -> pd.DataFrame:
    """Per scorer: how many negatives score above and level with the positive, and its rank per policy."""
    return pd.DataFrame([{"scorer": f"blind:{name}", **ranks_of(s)} for name, s in scored.of(index).items()])


def _file_ranks(scored: Scored, name: str, rows: np.ndarray) -> tuple[metrics.Ranks, np.ndarray]:
    lo, hi = scored.offsets[rows], scored.offsets[rows + 1]
    take = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi)])
    local = np.r_[0, np.cumsum(hi - lo)]
    return metrics.ranks_from_flat(scored.scores[name][take], local), hi - lo


def tie_table(scored: Scored, hn_type: str, complexity: int) -> pd.DataFrame:
    """Per scorer, on one file: queries, those with a negative level with the positive, and Recall@1 (%)
    under each tie policy (and the official code's order on this machine), beside chance."""
    rows = scored.indices(hn_type, complexity)
    out = []
    for name in scored.scores:
        ranks, sizes = _file_ranks(scored, name, rows)
        random = np.where(ranks.optimistic == 1, 1.0 / (1 + ranks.n_ties), 0.0)
        argsort = [argsort_rank(scored.of(i)[name]) for i in rows]
        out.append({"scorer": f"blind:{name}", "queries": len(rows),
                    "tied with the positive": int(np.sum(ranks.n_ties > 0)),
                    "R@1 strict": metrics.recall_at_k(ranks.pessimistic, 1),
                    "R@1 random": 100.0 * float(random.mean()),
                    "R@1 optimistic": metrics.recall_at_k(ranks.optimistic, 1),
                    "R@1 torch.argsort": metrics.recall_at_k(np.array(argsort), 1),
                    "chance": 100.0 * float(np.mean(1.0 / sizes))})
    return pd.DataFrame(out)


def recall_table(scored: Scored, hn_type: str, complexity: int) -> pd.DataFrame:
    """Recall@K (%, strict) of each scorer on one file for K = 1 … candidates per query, and chance K/m."""
    rows = scored.indices(hn_type, complexity)
    out = []
    for name in scored.scores:
        ranks, sizes = _file_ranks(scored, name, rows)
        for k in range(1, int(sizes.max()) + 1):
            out.append({"scorer": f"blind:{name}", "K": k, "R@K": metrics.recall_at_k(ranks.pessimistic, k),
                        "chance": 100.0 * float(np.mean(np.minimum(k / sizes, 1.0)))})
    return pd.DataFrame(out)


def hn_examples(source: Source, indices) -> pd.DataFrame:
    """The candidates of the given queries (one image's caption under several HN types), one row each."""
    rows = []
    for i in indices:
        q = source.queries[i]
        rows += [{"HN type": HN_NAMES.get(q.hn_type, q.hn_type), "candidate": "positive" if k == 0 else f"negative {k}",
                  "text": text} for k, text in enumerate(q.candidates)]
    return pd.DataFrame(rows)


def systematicity_examples(toy_dir: str | os.PathLike | None = "results/toy") -> pd.DataFrame | str:
    """The toy world's first HN-Atom and HN-Comp query of each split (SC, UC), its caption and negatives;
    one line instead when the toy world is not built (CREPE's own systematicity files are not public text
    here: `make data-crepe` fetches them)."""
    world = Path(toy_dir) / "world" if toy_dir is not None else None
    if world is None or not (world / "syst_hard_negatives").is_dir():
        return "No toy world is built here (`make toy`), so no systematicity query is shown."
    queries = crepe_queries.load_systematicity(world, "toy", ["atom", "comp"]).queries
    rows = []
    for split in ("SC", "UC"):
        for hn in ("atom", "comp"):
            q = next((q for q in queries if q.split == split and q.hn_type == hn), None)
            if q is not None:
                rows.append({"split": split, "HN type": HN_NAMES[hn], "image": q.image_id, "caption": q.positive,
                             "hard negatives": "; ".join(q.negatives)})
    return pd.DataFrame(rows)


def worked_text(scored: Scored, index: int) -> str:
    """The worked query, described from its own fields."""
    q = scored.source.queries[index]
    name, _, line = q.source.rpartition(":")
    box = ", ".join(f"{v:g}" for v in q.box)
    md = escaping.markdown                                    # the file's texts, shown as they are
    return (f"**The query.** Image {md(q.image_id)}, the region at x, y, width, height = ({box}), from "
            f"{md(name)} (line {line}): {HN_NAMES[q.hn_type]} at complexity n = {q.complexity}. Its positive "
            f"caption is “{md(q.positive)}”; its {len(q.negatives)} hard negatives are below. "
            f"{escaping.markdown_message(scored.source.note)}")


def ranks_text(ranks: pd.DataFrame) -> str:
    """One line per scorer: what it does with the worked query under the strict rule and the others."""
    lines = []
    for r in ranks.to_dict("records"):
        if r["tied"]:
            draw = (f"a hit at Recall@1 with probability {_pct(r['R@1 (random)'])} under a random draw"
                    if not r["higher"] else "no draw among the tied makes it a hit, as a negative scores above it")
            lines.append(f"- `{r['scorer']}` scores {_count(r['tied'], 'negative')} level with "
                         f"the positive and {r['higher']} above it: strict rank {r['rank (strict)']}, optimistic "
                         f"rank {r['rank (optimistic)']}; {draw}.")
        else:
            lines.append(f"- `{r['scorer']}` scores {_count(r['higher'], 'negative')} above "
                         f"the positive and none level with it: rank {r['rank (strict)']} under every tie policy"
                         + (" (a hit at Recall@1)." if r["rank (strict)"] == 1 else "."))
    return "\n".join(lines) + "\n"


def ties_text(ties: pd.DataFrame, file_label: str) -> str:
    """One line per scorer on one file: its Recall@1 under each tie policy, and how many queries tie."""
    lines = [f"On {file_label} ({int(ties['queries'].iloc[0]):,} queries; chance {_pct(ties['chance'].iloc[0])}):"]
    for r in ties.to_dict("records"):
        lines.append(f"- `{r['scorer']}`: a negative level with the positive in {r['tied with the positive']:,} "
                     f"queries; Recall@1 {_pct(r['R@1 strict'])} strict, {_pct(r['R@1 random'])} random, "
                     f"{_pct(r['R@1 optimistic'])} optimistic, {_pct(r['R@1 torch.argsort'])} in the order "
                     "`torch.argsort` gave on the machine that ran this notebook.")
    return "\n".join(lines) + "\n"


def recall_text(recall: pd.DataFrame) -> str:
    """Per scorer: Recall@1, and the smallest K whose Recall@K reaches half and all of the queries."""
    lines = []
    for name, g in recall.groupby("scorer", sort=False):
        def first_k(level: float) -> str:
            ks = g.loc[g["R@K"] >= level, "K"]
            return f"the top {int(ks.min())}" if len(ks) else "no K"
        lines.append(f"- `{name}`: Recall@1 {_pct(g['R@K'].iloc[0])}; half the positives are within "
                     f"{first_k(50.0)}, all within {first_k(100.0)} (of {int(g['K'].max())} candidates).")
    for name, earlier in coinciding(recall).items():
        lines.append(f"- `{name}` has the same Recall@K as `{earlier}` at every K: in the figure their lines coincide "
                     f"(hollow markers, nudged right, mark `{name}`).")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ the reader's own query

@dataclass(frozen=True)
class ToyModel:
    """The toy world's trained tiny CLIP, loaded, and the world whose pictures it was trained on."""

    loaded: object
    world: Path


def load_toy_model(toy_dir: str | os.PathLike | None = "results/toy") -> ToyModel | str:
    """The toy world's model when `make toy` has built it; else one line saying how to build it."""
    toy = Path(toy_dir) if toy_dir is not None else None
    stage = toy / "model" / "stage.json" if toy is not None else None
    if stage is None or not stage.is_file():
        return ("No toy world is built here (`make toy` builds it in minutes on a CPU), so only the blind scorers "
                "answer.")
    record = json.loads(stage.read_text(encoding="utf-8"))
    summary = record.get("summary") or {}
    if not record.get("complete") or "checkpoint" not in summary:
        return f"The toy world's model under {toy} is not complete: `make toy` finishes it."
    model = toy / "model"
    with warnings.catch_warnings():        # tqdm.auto, which open_clip imports, warns in a kernel without ipywidgets
        warnings.filterwarnings("ignore", message="IProgress not found")
        loaded = load_model(summary["model_name"], pretrained=str(model / summary["checkpoint"]),
                            model_config=str(model / summary["model_config"]), device="cpu")
    return ToyModel(loaded, toy / "world")


def toy_picture(model: ToyModel, image_id: str) -> Path:
    """The toy world's picture ``image_id`` (a file name under its images folder)."""
    found = sorted((model.world / "images").rglob(f"{image_id}.jpg"))
    if not found:
        raise CrepeError(f"the toy world has no picture {image_id!r}: pick an image_id from its CSVs under "
                         f"{model.world / 'prod_hard_negatives'}")
    return found[0]


def toy_scores(model: ToyModel, image_id: str, texts) -> np.ndarray:
    """The toy model's cosine similarity of picture ``image_id`` with each text (fp32, this machine)."""
    picture = open_rgb(toy_picture(model, image_id))
    image = encode_images(model.loaded, [crop(picture, (0.0, 0.0, float(picture.width), float(picture.height)))])
    return encode_texts(model.loaded, list(texts)) @ image[0]


@dataclass(frozen=True)
class ModelScoring:
    """How the toy model scores one query: its picture region's embedding, each candidate's, their cosines."""

    query: Query
    picture: Path
    image: np.ndarray            #: the region's embedding (length 1)
    texts: np.ndarray            #: one embedding per candidate, the positive first (each of length 1)

    @property
    def cosine(self) -> np.ndarray:
        """Each candidate's cosine similarity with the region: the dot product of two vectors of length 1."""
        return self.texts.astype(np.float64) @ self.image.astype(np.float64)


def model_scoring(toy: ToyModel | str) -> ModelScoring | str:
    """The toy model on the toy world's first systematicity HN-Atom query (seen compounds): the region's and each
    candidate's embedding; the one line of :func:`load_toy_model` when there is no model."""
    if isinstance(toy, str):
        return toy
    query = next(q for q in crepe_queries.load_systematicity(toy.world, "toy", ["atom"]).queries if q.split == "SC")
    picture = toy_picture(toy, query.image_id)
    image = encode_images(toy.loaded, [crop(open_rgb(picture), query.box)])[0]
    return ModelScoring(query, picture, image, encode_texts(toy.loaded, list(query.candidates)))


#: coordinates of each embedding shown in the table (of all of them)
SHOWN_COORDINATES = 4


def scoring_table(scoring: ModelScoring) -> pd.DataFrame:
    """One row for the region and one per candidate: the first coordinates of its embedding, its length, and
    (candidates) the cosine with the region and the rank it gives (1: the model's choice; strict)."""
    vectors = np.vstack([scoring.image[None, :], scoring.texts]).astype(np.float64)
    cosine = scoring.cosine
    table = pd.DataFrame({"what": ["the image region"] + ["positive"] + [f"negative {k}" for k in
                                                                          range(1, len(cosine))],
                          "text": [f"image {scoring.query.image_id}"] + list(scoring.query.candidates)})
    for d in range(min(SHOWN_COORDINATES, vectors.shape[1])):
        table[f"coordinate {d + 1}"] = np.round(vectors[:, d], 3)
    table["length"] = np.round(np.linalg.norm(vectors, axis=1), 3)
    table["cosine with the image"] = [np.nan] + list(np.round(cosine, 3))
    higher = [np.nan] + [1 + int(np.sum(np.delete(cosine, k) >= cosine[k])) for k in range(len(cosine))]
    table["rank"] = pd.array(higher, dtype="Int64")
    return table


def scoring_text(scoring: ModelScoring) -> str:
    """What the table shows, from its numbers: the embeddings' size, the positive's cosine, the best negative's,
    and whether the model answers the query."""
    q, cosine = scoring.query, scoring.cosine
    best = 1 + int(np.argmax(cosine[1:]))
    rank = ranks_of(cosine)["rank (strict)"]
    md = escaping.markdown
    verdict = ("the positive scores highest, so the model answers this query (a hit at Recall@1)" if rank == 1 else
               f"a negative scores higher, so the model misses this query: the positive ranks {rank} of {len(cosine)}")
    return (f"The model turns the image region (image {md(q.image_id)} of the toy world) into "
            f"{len(scoring.image)} numbers, its *embedding*, and each caption into {len(scoring.image)} numbers "
            f"too; the table shows the first {min(SHOWN_COORDINATES, len(scoring.image))} of each. Every embedding has length 1, so the dot "
            "product of the image's and a caption's embedding is the *cosine similarity* of the two: 1 when they "
            "point the same way, 0 when they are unrelated. That cosine is the caption's score. The positive "
            f"“{md(q.positive)}” scores {cosine[0]:.3f}; the highest negative, “{md(q.candidates[best])}”, scores "
            f"{cosine[best]:.3f}: {verdict}. The rank rule below is the same whether the scores come from a model "
            "or from a blind scorer.")


def scoring_figure(scoring: ModelScoring, title: str):
    """The image region the model sees, beside each candidate's cosine with it (the positive in orange)."""
    import matplotlib.pyplot as plt

    cosine = np.round(scoring.cosine, 4)          # the drawing does not move with a last bit of the arithmetic
    fig, (pic, bars) = plt.subplots(1, 2, figsize=(7.2, 0.5 * len(cosine) + 1.9),
                                    gridspec_kw={"width_ratios": [1, 2.6]})
    pic.imshow(crop(open_rgb(scoring.picture), scoring.query.box), interpolation="nearest")
    pic.set_axis_off()
    pic.set_title(f"image {scoring.query.image_id}", fontsize=10)
    labels = ["positive: " + _wrapped(scoring.query.positive, 24)] + [
        f"negative {k}: " + _wrapped(t, 24) for k, t in enumerate(scoring.query.negatives, 1)]
    y = np.arange(len(cosine))[::-1]
    bars.barh(y, cosine, color=[_POSITIVE] + [_NEGATIVE] * (len(cosine) - 1))
    for yi, c in zip(y, cosine):
        bars.text(c, yi, f" {c:.3f}", va="center", fontsize=9)
    bars.set_yticks(y, labels, fontsize=9)
    bars.set_xlim(min(0.0, float(cosine.min()) - 0.05), float(cosine.max()) + 0.15)
    bars.set_xlabel("cosine similarity with the image")
    bars.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def swap_words(source: Source, complexity: int | None = None) -> dict:
    """Of the HN-Swap negatives (of one complexity, or all), how many use exactly the positive's words in another
    order (a permutation, case aside) and how many bring in a word the positive does not have."""
    total = same = 0
    for q in source.queries:
        if q.hn_type != "swap" or (complexity is not None and q.complexity != complexity):
            continue
        words = sorted(blind.UNCASED.words(q.positive))
        for negative in q.negatives:
            total += 1
            same += sorted(blind.UNCASED.words(negative)) == words
    return {"negatives": total, "permutations": same, "new words": total - same}


def swap_text(counts: dict, where: str) -> str:
    """The HN-Swap definition checked against the data: how many negatives only reorder the positive's words."""
    if not counts["negatives"]:
        return ""
    head = f"**HN-Swap in the data.** Of the {counts['negatives']:,} HN-Swap negatives in {where}, "
    if not counts["new words"]:
        return head + "every one uses exactly the positive's words in another order."
    return (head + f"{counts['permutations']:,} ({_pct(100 * counts['permutations'] / counts['negatives'])}) use "
            f"exactly the positive's words in another order; the other {counts['new words']:,} also bring in a word "
            "the positive does not have.")


def reader_table(caption: str, negatives, scored: Scored, toy: ToyModel | None = None,
                 image_id: str | None = None) -> pd.DataFrame:
    """A reader's caption (the positive) and negatives: each candidate's score from every scorer of
    ``scored`` (a trained one fitted, as for every query, on the folds of the source that do not hold the
    reader's query) and, with ``toy`` and ``image_id``, the toy model's."""
    candidates = tuple([str(caption)] + [str(n) for n in negatives])
    if len(candidates) < 2 or any(not c.strip() for c in candidates):
        raise CrepeError("write a caption and at least one hard negative, each a non-empty text")
    reader = blind.TextQuery(READER_IMAGE, candidates)
    table = pd.DataFrame({"candidate": ["your caption"] + [f"negative {k}" for k in range(1, len(candidates))],
                          "text": list(candidates)})
    for name in scored.scores:
        if blind.scorer(name).trained:
            table[f"blind:{name}"] = blind.score(name, list(scored.source.queries) + [reader])[-len(candidates):]
        else:
            table[f"blind:{name}"] = blind.score(name, [reader])
    if toy is not None and image_id is not None:
        table["toy model"] = toy_scores(toy, image_id, candidates)
    return table


def reader_verdicts(table: pd.DataFrame) -> str:
    """One Markdown line per scorer: the rank it gives the reader's caption (strict) and its first choice."""
    lines = []
    for column in [c for c in table.columns if c.startswith("blind:") or c == "toy model"]:
        s = table[column].to_numpy(dtype=np.float64)
        r = ranks_of(s)
        tie = f", level with {_count(r['tied'], 'negative')}" if r["tied"] else ""
        first = f"; its first choice is {escaping.markdown(table['candidate'][int(np.argmax(s))])}" if r["higher"] else ""
        hit = " (a hit at Recall@1)" if r["rank (strict)"] == 1 else ""
        lines.append(f"- `{column}` ranks your caption **{r['rank (strict)']} of {len(s)}**{tie}{first}{hit}")
    return "\n".join(lines) + "\n"


def reader_fold(folds: int = blind.BlindSettings().folds) -> int:
    """The cross-fitting fold the reader's query falls in (its image id hashed, as for every image)."""
    return fold_of(READER_IMAGE, folds)


# ------------------------------------------------------------------------------ figures

_POSITIVE, _NEGATIVE, _CHANCE = "#DD8452", "#4C72B0", "#6e7781"
_POLICY_COLOURS = {"strict": "#4C72B0", "random": "#8172B2", "optimistic": "#55A868"}


def _wrapped(text: str, width: int = 44) -> str:
    text = escaping.visible(text)                             # a caption's own line breaks shown, not wrapped
    return "\n".join(textwrap.wrap(text, width)) or text


def worked_figure(table: pd.DataFrame, title: str):
    """One panel per scorer, two panels a row: each candidate's score (the positive in orange); equal scores share
    a column. The candidates are named as in the table above it (their texts are there); the title quotes the
    positive."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    scorers = [c for c in table.columns if c.startswith("blind:")]
    columns = 2 if len(scorers) > 1 else 1
    rows = -(-len(scorers) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(7.4, rows * (0.3 * len(table) + 1.5) + 0.6), sharey=True,
                             squeeze=False)
    y = np.arange(len(table))[::-1]
    for ax, name in zip(axes.flat, scorers):
        s = table[name].to_numpy(dtype=float)
        colours = [_POSITIVE] + [_NEGATIVE] * (len(s) - 1)
        ax.scatter(s, y, c=colours, s=46, zorder=3)
        ax.axvline(s[0], color=_POSITIVE, lw=0.8, ls=":", zorder=2)
        r = ranks_of(s)
        ax.set_title(f"{name}: strict rank {r['rank (strict)']}, ties {r['tied']}", fontsize=10)
        ax.set_xlabel("score (higher: more likely true)")
        span = max(float(np.ptp(s)), 1.0)
        ax.set_xlim(s.min() - 0.15 * span, s.max() + 0.15 * span)
        ax.set_yticks(y, list(table["candidate"]))
        ax.xaxis.set_major_locator(MaxNLocator(4))
    for ax in list(axes.flat)[len(scorers):]:
        ax.set_axis_off()
    positive = "positive: “" + escaping.visible(str(table["text"].iloc[0])) + "”"   # the texts: the table above
    fig.suptitle("\n".join(textwrap.wrap(escaping.visible(title), 64) + textwrap.wrap(positive, 72)),
                 fontweight="bold")
    fig.tight_layout()
    return fig


def coinciding(recall: pd.DataFrame) -> dict[str, str]:
    """Scorer → the earlier scorer whose Recall@K equals its own at every K (their lines coincide)."""
    curves = {name: tuple(g["R@K"]) for name, g in recall.groupby("scorer", sort=False)}
    same = {}
    for i, (name, curve) in enumerate(curves.items()):
        earlier = next((other for other, c in list(curves.items())[:i] if c == curve), None)
        if earlier is not None:
            same[name] = same.get(earlier, earlier)
    return same


def ties_recall_figure(ties: pd.DataFrame, recall: pd.DataFrame, title: str):
    """Top: Recall@1 of each scorer under each tie policy, chance dashed. Bottom: Recall@K against K; a scorer
    whose curve is another's is drawn with hollow markers, nudged aside, and says so in the legend."""
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(2, 1, figsize=(7.4, 9.4), gridspec_kw={"height_ratios": [1.1, 1]})
    x = np.arange(len(ties))
    width = 0.8 / len(POLICIES)
    for j, policy in enumerate(POLICIES):
        bars = left.bar(x + (j - 1) * width, ties[f"R@1 {policy}"], width, label=policy, color=_POLICY_COLOURS[policy])
        left.bar_label(bars, fmt="%.0f", fontsize=9, padding=1)
    for xi, c in zip(x, ties["chance"]):
        left.hlines(c, xi - 0.45, xi + 0.45, color="black", ls="--", lw=1)
    left.set_xticks(x, ties["scorer"])
    left.set(ylabel="Recall@1 (%)", ylim=(0, 115), title="Recall@1 under each tie policy (dashed: chance)")
    left.legend(title="tie policy", loc="upper center", ncols=3, bbox_to_anchor=(0.5, -0.1))
    same = coinciding(recall)
    markers = ("o", "s", "^", "D", "v", "P") * 4
    for k, ((name, g), style) in enumerate(zip(recall.groupby("scorer", sort=False), ("-", "--", "-.", ":") * 4)):
        nudge = 0.12 * sum(1 for n in list(same)[: list(same).index(name) + 1]) if name in same else 0.0
        label = f"{name} (same as {same[name]}: the lines coincide)" if name in same else name
        right.plot(g["K"] + nudge, g["R@K"], ls=style, marker=markers[k], ms=7 if name in same else 5,
                   mfc="none" if name in same else None, label=label)
    chance = recall.drop_duplicates("K")
    right.plot(chance["K"], chance["chance"], color="black", ls="--", lw=1, label="chance")
    right.set(xlabel="K", ylabel="Recall@K (%), strict", ylim=(0, 108), xticks=chance["K"],
              title="Recall@K: the positive within the top K")
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2)
    fig.suptitle("\n".join(textwrap.wrap(escaping.visible(title), 64)), fontweight="bold")
    fig.tight_layout()
    return fig


def show_figure(fig, alt: str) -> None:
    """Display ``fig`` inline as a PNG (not saved: a figure of the reader's own query), then close it."""
    import matplotlib.pyplot as plt
    from IPython.display import Image, display

    buffer = io.BytesIO()
    reporting.render_figure(fig, buffer, format="png", metadata={"Software": None})
    plt.close(fig)
    shown = {"alt": alt, "source": "Scored in this run from the captions given above"}   # the book's caption
    display(Image(data=buffer.getvalue(), format="png", metadata=shown, alt=alt))


def reader_figure(table: pd.DataFrame, picture: Path | None, title: str):
    """The reader's candidates as each scorer ranks them (1 = the scorer's first choice), beside the toy
    world's picture the toy model looks at, when there is one."""
    import matplotlib.pyplot as plt
    from PIL import Image

    columns = [c for c in table.columns if c.startswith("blind:") or c == "toy model"]
    ranks = pd.DataFrame({c: table[c].rank(ascending=False, method="max").astype(int) for c in columns})
    fig, axes = plt.subplots(1, 2 if picture else 1, figsize=(7.4, 0.55 * len(table) + 2.0),
                             gridspec_kw={"width_ratios": [1, 3.2]} if picture else None)
    axes = np.atleast_1d(axes)
    if picture is not None:
        with Image.open(picture) as img:
            axes[0].imshow(img.convert("RGB"))
        axes[0].set_axis_off()
        axes[0].set_title("the toy model's\npicture", fontsize=10)
    ax = axes[-1]
    ax.imshow(ranks.to_numpy(), cmap="Blues_r", vmin=1, vmax=len(table) + 1, aspect="auto")
    for (i, j), r in np.ndenumerate(ranks.to_numpy()):
        ax.text(j, i, str(r), ha="center", va="center", fontsize=9,
                color="white" if r == 1 else "black", fontweight="bold" if i == 0 else "normal")
    ax.set_xticks(range(len(columns)), [c.replace("blind:", "blind:\n") for c in columns], fontsize=9)
    ax.set_yticks(range(len(table)), [f"{c}:\n{_wrapped(t, 30)}" for c, t in zip(table["candidate"], table["text"])],
                  fontsize=9)
    ax.grid(False)
    ax.set_title("\n".join(textwrap.wrap(escaping.visible(title), 48)), fontsize=10)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------ generated prose

#: Which notebook answers which question: (stem, title, question).
#: The notebooks in file-name order: (stem, title, the question it answers), from their own metadata (:mod:`.pages`).
NOTEBOOK_MAP = tuple((p.stem, p.title, p.question) for p in notebook_pages())


def notebook_map(current: str = "00_how_compositionality_is_evaluated") -> str:
    """The map of the notebooks as a Markdown table: each one's question, linked."""
    rows = ["| notebook | the question it answers |", "|---|---|"]
    for stem, title, question in NOTEBOOK_MAP:
        name = f"{stem[:2]} · {title}"
        rows.append(f"| {'**' + name + '** (this one)' if stem == current else f'[{name}]({stem}.ipynb)'} "
                    f"| {question} |")
    return "\n".join(rows) + "\n"


def _answer(question: str, answer: str) -> str:
    return (f"{question}\n\n<details class=\"answer\"><summary>Answer</summary>\n\n{answer}\n\n</details>\n")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _pct(x: float) -> str:
    return f"{x:.1f}%"


def exercises(scored: Scored, index: int, ties: pd.DataFrame, negate_ties: pd.DataFrame | None) -> str:
    """Exercises on the worked query and its file, each with its answer folded in a <details>."""
    q = scored.source.queries[index]
    m = len(q.candidates)
    length = ranks_of(scored.of(index)["length"])
    row = ties.set_index("scorer").loc["blind:length"]
    out = [_answer(f"**1.** Each query of the worked file has its positive and {m - 1} hard negatives. What Recall@1 "
                   "does a scorer get that picks one candidate at random? What Recall@K?",
                   f"1/{m} = {_pct(100 / m)} of the queries on average; Recall@K is K/{m} (the chance line of the "
                   "Recall@K figure).")]
    out.append(_answer(
        f"**2.** On the worked query, `blind:length` scores {_count(length['higher'], 'negative')} above the positive "
        f"and {_count(length['tied'], 'negative')} level with it. Which rank does each tie policy give the positive, "
        "and what does it count at Recall@1?",
        f"Strict: rank {length['rank (strict)']}, a miss. Optimistic: rank {length['rank (optimistic)']}"
        f"{', a hit' if length['rank (optimistic)'] == 1 else ''}. Random: a hit with probability "
        f"{_pct(length['R@1 (random)'])}. The official code: whatever position `torch.argsort` gives the positive "
        f"among equal scores (rank {length['rank (torch.argsort)']} on the machine that ran this notebook; PyTorch "
        "does not promise it)."))
    out.append(_answer(
        f"**3.** On the whole file ({int(row['queries']):,} queries) `blind:length` gets {_pct(row['R@1 strict'])} "
        "Recall@1 under the strict policy. What would it get if ties were broken at random, or in the positive's "
        "favour? Which of the three says how much the text alone tells?",
        f"Random: {_pct(row['R@1 random'])} (chance is {_pct(row['chance'])}); optimistic: "
        f"{_pct(row['R@1 optimistic'])}. A rule that cannot tell the candidates apart ties them, and a fair draw "
        "among tied candidates is chance, not knowledge; the strict policy counts such a query as a miss, so a "
        "blind rule's strict score is what its text cue earns and nothing more. The optimistic policy credits the "
        "positive with every tie: a rule that scores every candidate the same would get full marks."))
    if negate_ties is not None:
        neg = negate_ties.set_index("scorer").loc["blind:negation"]
        out.append(_answer(
            "**4.** Which of the four scorers would you expect to do best on HN-Neg, and why?",
            f"`blind:negation`: HN-Neg's negatives are the positive with a negation added, so the candidate with "
            f"the fewest \"no\"s and \"not\"s is the positive. On the HN-Neg file of the same complexity it gets "
            f"{_pct(neg['R@1 strict'])} Recall@1 (strict), against chance {_pct(neg['chance'])}."))
    out.append(_answer(
        f"**{len(out) + 1}.** In the cell where you write your own query, write a negative that `blind:length` "
        "prefers to your caption, and one that the blind scorers cannot tell from your caption but a model that "
        "looks at the picture can.",
        "`blind:length` prefers any candidate with fewer words, such as \"a cross left of a circle\" against \"a cross "
        "left of a green square\". A negative must be false of the picture, and a shorter caption often is not (\"a "
        "cross left of a square\" is true wherever the caption is): check each one against the picture. A negative "
        "with as many words as the caption, no negation and words as common (the colour moved to the other object), "
        "leaves only the picture to decide: that is what a hard negative is for."))
    for question, answer in folder_exercises():
        out.append(_answer(f"**{len(out) + 1}.** {question}", answer))
    return "\n".join(out)


def folder_exercises() -> list[tuple[str, str]]:
    """The exercises benchmark folders add about themselves (their ``blind.EXERCISE``: question, answer), in
    registry order."""
    found = (benchmarks.part(name, "blind") for name in benchmarks.FOLDERS)
    return [m.EXERCISE for m in found if m is not None and hasattr(m, "EXERCISE")]
