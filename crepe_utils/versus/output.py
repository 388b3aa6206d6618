"""What ``compare`` and ``standing`` write: each its own folder, written whole or not at all
(:func:`crepe_utils.atomic.atomic_directory`), tables as CSV, figures as deterministic SVG, the standing's page
as Markdown and HTML with every text from a result escaped."""
from __future__ import annotations

import os
from pathlib import Path

from .. import escaping
from ..analysis import paired
from ..analysis.reporting import markdown_table, save_figure
from ..atomic import atomic_directory
from . import figures
from . import pairing, standing as standing_module
from .pairing import Comparison
from .standing import Standing

COMPARISON_CSV, COMPARISON_FIGURE = "comparison.csv", "comparison"
STANDING_CSV, STANDING_FIGURE, STANDING_PAGE, STANDING_HTML = "standing.csv", "standing", "standing.md", "standing.html"
STANDING_PAPER_CSV = "standing_paper.csv"
PAPER_PAGE_COLUMNS = ["model", "set", "value", "paper_below", "paper_models", "paper_best", "paper_best_value",
                      "paper_best_low", "paper_best_high"]
#: the standing page's table: its columns, as shown
PAGE_COLUMNS = ["model", "column", "model_value", "field_below", "field_n", "field_percentile", "field_best_value",
                "blind_best", "blind_best_value"]


def write_comparison(result: Comparison, out: str | os.PathLike) -> Path:
    """``out``/comparison.csv and comparison.svg (the forest plot), as one folder."""
    with atomic_directory(Path(out), "the comparison folder", ", or pass another --out") as tmp:
        result.table.to_csv(tmp / COMPARISON_CSV, index=False, float_format="%.6g")
        save_figure(figures.forest(result), COMPARISON_FIGURE, tmp, formats=("svg",), show=False)
    return Path(out)


def standing_page(result: Standing, figure: str = f"{STANDING_FIGURE}.svg") -> str:
    """The standing as Markdown: what it is, the strip figure, the table, how each value was pooled."""
    shown = result.table[PAGE_COLUMNS]
    notes = dict.fromkeys(f"- `{escaping.visible(r.column)}`: {escaping.markdown(r.pooling)}"
                          for r in result.table.itertuples())
    kinds = sorted(set(result.table["result_kind"]) - {"evaluated"})
    caveat = (f"\n\n_Results of kind {', '.join(kinds)} are not evaluations on the released data: their place "
              "among the field is illustrative only._") if kinds else ""
    return (f"# Where the model stands among the field's checkpoints\n\n"
            f"Each strip is one column of the field table of {len(result.field_values)} checkpoints "
            f"(Oh et al. 2024, vl_compo): grey, the checkpoints; red diamonds, the models given; orange squares, "
            f"the blind (text-only) scorers given. Ties: {result.tie_policy}.{caveat}\n\n"
            f"![standing]({figure})\n\n{markdown_table(shown)}\n\nHow each value is pooled to match its column:\n\n"
            + "\n".join(notes) + "\n" + _paper_section(result))


def _paper_section(result: Standing) -> str:
    """Each model among its benchmark's paper's own models, per set both cover (nothing when none)."""
    if result.paper is None or result.paper.empty:
        return ""
    notes = "".join(f"\n- {escaping.markdown(r.set)}: {escaping.markdown(r.note)}" for r in result.paper.itertuples()
                    if r.note)
    return ("\n## Among the paper's own models\n\nPer set the paper published: the result's value, how many of the "
            "paper's models lie strictly below it, and the paper's best with its exact 95% interval (its printed R@1 "
            "as k of the released file's N).\n\n" + markdown_table(result.paper[PAPER_PAGE_COLUMNS]) + "\n" + notes
            + ("\n" if notes else ""))


def standing_html(result: Standing, figure: str = f"{STANDING_FIGURE}.svg") -> str:
    """The standing as one HTML page (the same table; every text from a result escaped)."""
    head = "".join(f"<th>{escaping.html(c)}</th>" for c in PAGE_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{escaping.html(_cell(v))}</td>" for v in row) + "</tr>"
                   for row in result.table[PAGE_COLUMNS].itertuples(index=False))
    notes = "".join(f"<li><code>{escaping.html(r.column)}</code>: {escaping.html(r.pooling)}</li>"
                    for r in result.table.drop_duplicates(["model", "column"]).itertuples())
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Standing among the field</title></head>"
            f"<body><h1>Where the model stands among the field's checkpoints</h1><img src=\"{figure}\" alt=\"strips\">"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table><ul>{notes}</ul>"
            f"{_paper_html(result)}"
            f"<p>Intervals of comparisons: {escaping.html(paired.INTERVAL_METHOD)}.</p></body></html>\n")


def _paper_html(result: Standing) -> str:
    if result.paper is None or result.paper.empty:
        return ""
    head = "".join(f"<th>{escaping.html(c)}</th>" for c in PAPER_PAGE_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{escaping.html(_cell(v))}</td>" for v in row) + "</tr>"
                   for row in result.paper[PAPER_PAGE_COLUMNS].itertuples(index=False))
    return (f"<h2>Among the paper's own models</h2><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
            "</table>")


def _cell(value) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def write_standing(result: Standing, out: str | os.PathLike) -> Path:
    """``out``/standing.csv, standing.svg (the strips), standing.md and standing.html, as one folder."""
    with atomic_directory(Path(out), "the standing folder", ", or pass another --out") as tmp:
        result.table.to_csv(tmp / STANDING_CSV, index=False, float_format="%.6g")
        if result.paper is not None and len(result.paper):
            result.paper.to_csv(tmp / STANDING_PAPER_CSV, index=False, float_format="%.6g")
        save_figure(strips_figure(result), STANDING_FIGURE, tmp, formats=("svg",), show=False)
        (tmp / STANDING_PAGE).write_text(escaping.page(standing_page(result)), encoding="utf-8")
        (tmp / STANDING_HTML).write_text(escaping.page(standing_html(result)), encoding="utf-8")
    return Path(out)


def strips_figure(result: Standing):
    models = ", ".join(sorted(set(result.models["model"]))) or "blind scorers only"
    return figures.strips(result.field_values, result.table,
                          f"{models} among the field's {len(result.field_values)} checkpoints")


def compare(a: str | os.PathLike, b: str | os.PathLike, *, tie_policy: str = "pessimistic",
            out: str | os.PathLike | None = None) -> Comparison:
    """B against A, paired by query (:func:`crepe_utils.versus.pairing.compare`); written to ``out`` when given.
    Nothing is written when either result cannot be read or the two cannot be compared."""
    result = pairing.compare(a, b, tie_policy)
    if out is not None:
        write_comparison(result, out)
    return result


def standing(results, *, tie_policy: str = "pessimistic", columns=None,
             out: str | os.PathLike | None = None) -> Standing:
    """The results placed among the field (:func:`crepe_utils.versus.standing.standing`); written to ``out`` when
    given. Nothing is written when a result cannot be read or a column is not the field table's."""
    result = standing_module.standing(results, tie_policy, columns)
    if out is not None:
        write_standing(result, out)
    return result
