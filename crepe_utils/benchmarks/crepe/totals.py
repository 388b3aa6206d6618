"""Notebook 01's tables, figures and sentences: CREPE's set sizes and chance levels, the paper's totals, the
released productivity files (validated when present, their pinned counts otherwise) and the granularity of
every published productivity Recall@1, with its exact binomial interval.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

from ... import escaping, paths
from . import reported
from ...analysis import prose, uncertainty
from ...analysis.reporting import HN_LABELS
from .analysis import granularity_table
from ...lazy import lazy

pd = lazy("pandas")

HN_ROWS = ["atom", "swap", "negate"]


def _claims() -> pd.Series:
    return reported.claims().set_index("claim_id")["value"].astype(float)


def data_line(crepe) -> str:
    """One line: where the CREPE CSVs were found, or what is missing, what it hides and which target fetches it."""
    if crepe is not None:
        return f"CREPE data: {escaping.code(paths.shown(crepe))}."
    where = paths.shown(paths.data_root() / "crepe")
    return (f"**No CREPE CSVs in {escaping.code(where)}.** Missing here: the released files validated row by row, their exact "
            "ties and caption lengths. `make data-crepe` fetches them (`make all` does, online). Shown without "
            "them: the chance levels, the paper's totals, and the released files' pinned counts "
            "(`crepe_utils/reported`), labelled as such.")


def chance_table() -> pd.DataFrame:
    """Every retrieval set's size, the paper's chance level and 1/N."""
    c = _claims()
    atom, comp = int(c["set_size_syst_atom"]), int(c["set_size_syst_comp"])
    rows = [("Systematicity HN-Atom", atom, c["chance_syst_atom"], "app. A.5, B.1"),
            ("Systematicity HN-Comp", comp, c["chance_syst_comp"], "app. A.5, B.1"),
            ("Systematicity combined", 1 + (atom - 1) + (comp - 1), c["chance_syst_combined"],
             f"B.1 (size inferred: 1 + {atom - 1} + {comp - 1})"),
            ("Productivity, one HN type", int(c["set_size_prod"]), c["chance_prod"], "app. A.5, B.1"),
            ("Productivity, all negatives", int(c["set_size_prod_all"]), float("nan"), "B.3 (no line printed)")]
    out = pd.DataFrame(rows, columns=["retrieval set", "candidates", "paper chance (%)", "source"])
    out["1/N (%)"] = 100 / out["candidates"]
    return out


def _chance_facts(chance: pd.DataFrame) -> tuple[str, pd.Series]:
    printed = chance.dropna(subset=["paper chance (%)"])
    agree = (printed["paper chance (%)"] - printed["1/N (%)"]).abs() < 0.005
    return prose.how_many(agree, "printed chance level"), chance.set_index("retrieval set").loc["Systematicity combined"]


def chance_sentence(chance: pd.DataFrame) -> str:
    """What the chance table shows, in words: which printed levels are 1/N, and the combined set's size."""
    agree, combined = _chance_facts(chance)
    return (f"{agree[0].upper()}{agree[1:]} equal 1/N of the set's size. The combined systematicity line of "
            f"{prose.num(combined['paper chance (%)'])} has no stated size; it is 1/{int(combined['candidates'])}: "
            "the positive with both negative lists together.")


def totals_table() -> pd.DataFrame:
    """The dataset totals as the paper states them, where it states them."""
    c = _claims()
    t1, a5 = int(c["syst_hn_cc12m_table1"]), int(c["syst_hn_cc12m_a5"])
    rows = [("Systematicity image-text pairs", "abstract", f"> {int(c['syst_pairs_abstract'] / 1000)}K", ""),
            ("Systematicity HN texts, CC-12M", "abstract", f"{int(c['syst_hn_cc12m_abstract'] / 1000)}K", ""),
            ("Systematicity HN texts, CC-12M", "Table 1", f"{t1:,}", ""),
            ("Systematicity HN texts, CC-12M", "app. A.5 (HN-Atom + HN-Comp, SC + UC)", f"{a5:,}",
             f"{t1 - a5:,} fewer than Table 1"),
            ("Systematicity HN texts, YFCC-15M / LAION-400M", "abstract",
             f"{int(c['syst_hn_yfcc_abstract'] / 1000)}K / {int(c['syst_hn_laion_abstract'] / 1000)}K", ""),
            ("Productivity image-text pairs", "abstract", f"{int(c['prod_pairs_abstract'] / 1000)}K", ""),
            ("Productivity HN texts", "Table 1 and app. A.5", f"{int(c['prod_hn_table1']):,}", ""),
            ("Productivity ground truths", "Table 1 and app. A.5", f"{int(c['prod_gt_table1']):,}", "")]
    return pd.DataFrame(rows, columns=["quantity", "where", "value", "note"])


def totals_sentence() -> str:
    c = _claims()
    gap = int(c["syst_hn_cc12m_table1"] - c["syst_hn_cc12m_a5"])
    return (f"Table 1 and appendix A.5 disagree for CC-12M by {prose.count(gap)} hard-negative texts; the paper does "
            "not say why. This notebook does not count the systematicity CSVs (`make data-crepe` fetches them "
            "beside the productivity ones; `python -m crepe_utils validate` counts them), so which count describes "
            "the released files stays open here.")


def file_counts(report) -> tuple[pd.DataFrame, str]:
    """Queries per productivity file (HN type × complexity) with totals, and where they come from: the
    validated files when ``report`` has them, else the pinned counts of the release."""
    if report is not None and not report.files.empty:
        files = report.files[report.files["benchmark"] == "productivity"]
        source = "counted from the CSVs present"
    else:
        files = reported.released_productivity_files()
        source = "pinned counts of the released files (`crepe_utils/reported`), not validated here"
    counts = files.pivot_table(index="hn_type", columns="complexity", values="rows", aggfunc="sum")
    counts = counts.reindex([h for h in HN_ROWS if h in counts.index]).astype(int)
    counts.columns = [int(c) for c in counts.columns]
    counts["total"] = counts.sum(axis=1)
    counts.loc["total"] = counts.sum()
    counts.index.name, counts.columns.name = "hn_type", "complexity"
    return counts, source


def file_counts_figure(counts: pd.DataFrame, source: str):
    fig, ax = plt.subplots(figsize=(8, 2.6))
    sns.heatmap(counts.drop(index="total", columns="total"), annot=True, fmt=",", cmap="Blues", cbar=False, ax=ax)
    label = "pinned counts of the release" if source.startswith("pinned") else "counted from the CSVs"
    ax.set(xlabel="complexity n (atoms per caption)", ylabel="", title=f"Queries per productivity file ({label})")
    return fig


def thin_files_sentence(counts: pd.DataFrame) -> str:
    """Where the files are thin, and what one query is worth there."""
    body = counts.drop(index="total", columns="total")
    (hn, n), smallest = body.stack().idxmin(), int(body.stack().min())
    row = body.loc[hn].sort_index()
    nxt = int(row.index[row.index > n][0]) if (row.index > n).any() else None
    others = {h: int(body.loc[h, n]) for h in body.index if h != hn}
    return (f"{HN_LABELS[hn]} is the thinnest: {prose.count(smallest)} queries at "
            f"n = {n}" + (f" and {prose.count(row[nxt])} at n = {nxt}" if nxt else "")
            + f". A single query moves its Recall@1 by {prose.num(100 / smallest)} points at n = {n}, against "
            + prose.listing(f"{prose.num(100 / v)} for {HN_LABELS[h]} ({prose.count(v)} queries)"
                            for h, v in others.items())
            + ", so a published value of that file carries a far wider interval (below).")


def facts_table(stats: dict) -> pd.DataFrame:
    c = _claims()
    rows = [("rows (queries)", stats["n_rows"], ""),
            ("hard-negative texts (5 per row)", stats["n_hard_negatives"], f"paper: {int(c['prod_hn_table1']):,}"),
            ("distinct hard-negative texts", stats["n_distinct_hard_negatives"], ""),
            ("distinct (image, positive) pairs", stats["n_ground_truths"],
             f"paper: {int(c['prod_gt_table1']):,} ground truths"),
            ("rows repeating an earlier (type, image, positive)", stats["repeated_ground_truths"], ""),
            ("distinct images / crops", f"{stats['n_images']:,} / {stats['n_crops']:,}", ""),
            ("distinct texts among all candidates", stats["n_distinct_texts"], f"of {stats['n_candidate_texts']:,}"),
            ("rows whose negatives are a set literal", stats["set_literal_rows"],
             "order depends on PYTHONHASHSEED in the official code"),
            ("rows with the positive among its own negatives", stats["positive_among_negatives"],
             "exact tie (string-identical)"),
            ("rows with a negative token-identical to the positive", stats.get("token_identical_ties", "—"),
             "exact tie for every CLIP model")]
    out = pd.DataFrame(rows, columns=["quantity", "value", "note"])
    out["value"] = out["value"].map(lambda v: f"{v:,}" if isinstance(v, int) else v)
    return out


def ties_sentence(stats: dict | None, ties=None) -> str:
    """The two kinds of exact tie, with their counts: validated (``ties``: (benchmark, HN type) → queries with a
    token-identical negative, :func:`crepe_utils.benchmarks.crepe.validation.token_identical_ties`), or pinned without data."""
    pinned = reported.released_counts()
    among = stats["positive_among_negatives"] if stats else pinned["positive_among_negatives"]
    text = (f"Two kinds of exact tie hide in the files. In {prose.count(among)} rows"
            + ("" if stats else " (pinned count)") + " the positive caption is literally one of its own negatives. ")
    by_type = {hn: n for (_, hn), n in (ties or {}).items()}
    if by_type:
        text += ("Counting negatives whose CLIP tokens equal the positive's (the tokenizer lower-cases): "
                 + prose.listing(f"{prose.count(n)} {HN_LABELS[hn]} rows" for hn, n in sorted(by_type.items()))
                 + "; on HN-Neg such a \"negation\" only sentence-cases the caption")
    else:
        text += ("Other rows hold a \"negation\" that only sentence-cases the caption, which CLIP's tokenizer undoes "
                 "(it lower-cases); counting them needs the CSVs")
    return text + (". The official code ranks with an unstable `argsort`, so each such query is a coin flip there; "
                   "here a tie counts against the model by default and the optimistic score is reported beside it.")


def lengths_sentence(lengths: pd.DataFrame, context: int = 77) -> str:
    over = int((lengths["n_tokens"] > context).sum())
    return (f"Longest text: **{int(lengths['n_tokens'].max())} tokens**; {prose.count(over)} of "
            f"{prose.count(len(lengths))} texts exceed the {context}-token context"
            + (", so truncation never applies to productivity. " if over == 0 else ". ")
            + f"The median text has {int(lengths['n_tokens'].median())} tokens, so sorting captions by length and "
            "cutting each batch to its longest caption (the engine's default) saves much of the text tower's work.")


def caption_lengths_figure(lengths: pd.DataFrame, context: int = 77):
    fig, ax = plt.subplots(figsize=(7.2, 3.8))
    sns.boxplot(data=lengths, x="complexity", y="n_tokens", hue="hn_type", hue_order=HN_ROWS, fliersize=1,
                linewidth=0.8, ax=ax)
    ax.axhline(context, color="black", ls="--", lw=1)
    ax.text(len(set(lengths["complexity"])) - 0.6, context + 1.5, f"context length {context}", fontsize=9,
            ha="right", va="bottom")
    ax.set(xlabel="complexity n", ylabel="tokens (with start/end)", title="Caption length of every distinct text",
           ylim=(0, context + 11))
    ax.legend(title="HN type", ncols=3, loc="upper left", bbox_to_anchor=(0, 0.86))
    return fig


def granularity(query_counts: dict[tuple[str, int], int] | None) -> tuple[pd.DataFrame, str]:
    """Every published productivity R@1 as k/N with its exact 95% interval: N from the files present, else the
    pinned counts; and where N comes from."""
    source = "the CSVs present" if query_counts else "the pinned counts of the released files"
    counts = query_counts or reported.released_productivity_queries()
    table = granularity_table(reported.productivity(), counts)
    table = uncertainty.with_intervals(table.rename(columns={"r1_paper": "r1"}), "r1", "N").rename(
        columns={"r1": "r1_paper"})
    table["k"] = table["k"].astype(int)
    return table[["model", "display", "hn_type", "complexity", "r1_paper", "N", "k", "k_over_N", "is_k_over_n",
                  "r1_ci_low", "r1_ci_high"]], source


def granularity_sentence(table: pd.DataFrame, source: str) -> str:
    ok = table["is_k_over_n"]
    swap = table[(table["hn_type"] == "swap") & (table["complexity"] == table["complexity"].min())]
    steps = swap.drop_duplicates("k").sort_values("k").head(3)
    widest = table.assign(width=table["r1_ci_high"] - table["r1_ci_low"]).sort_values("width").iloc[-1]
    many = prose.how_many(ok, "published value")
    return (f"**{many[0].upper()}{many[1:]}** {'are' if ok.sum() != 1 else 'is'} k/N of their file (N "
            f"from {source})" + (": the released files are the ones the paper evaluated" if ok.all() else "")
            + ". The HN-Swap rows at n = 4 show the coarse grid: "
            + prose.listing(f"{prose.num(r.r1_paper)} = {r.k}/{r.N}" for r in steps.itertuples())
            + f". Each value's exact 95% interval follows from k and N: the widest is {widest['display']}'s "
            f"{prose.num(widest['r1_paper'])} on {HN_LABELS[widest['hn_type']]} at n = {widest['complexity']}, "
            f"{prose.interval(widest['r1_ci_low'], widest['r1_ci_high'])} on {widest['N']} queries.")


def summary(report, gran: pd.DataFrame) -> str:
    """The closing paragraph, from the tables above."""
    c = _claims()
    agree, combined = _chance_facts(chance_table())
    text = (f"**What this shows.** The chance levels follow from the set sizes ({agree} equal 1/N), and the "
            f"unexplained combined {prose.num(combined['paper chance (%)'])} is 1/{int(combined['candidates'])}, "
            "both negative lists together. ")
    ok = gran["is_k_over_n"]
    if report is not None and report.stats:
        s = report.stats
        text += (f"The released productivity files are the evaluated ones ({prose.how_many(ok, 'published value')} "
                 f"are k/N), yet they hold {prose.count(s['n_hard_negatives'])} hard negatives and "
                 f"{prose.count(s['n_ground_truths'])} distinct ground truths where the paper states "
                 f"{prose.count(c['prod_hn_table1'])} and {prose.count(c['prod_gt_table1'])}. ")
    else:
        text += (f"Against the pinned counts of the release, {prose.how_many(ok, 'published value')} are k/N; with "
                 "the CSVs present (`make data-crepe`) the same test runs on the files themselves. ")
    return text + ("The paper's own Table 1 and appendix A.5 disagree for systematicity. The paper does not explain "
                   "these differences; they are reported, not corrected. Each exact tie above is a coin flip in the "
                   "official code and a miss here.")
