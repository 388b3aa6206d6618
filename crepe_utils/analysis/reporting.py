"""Tables and figures in one style: CSV + Markdown + LaTeX (booktabs), PNG + SVG.

Every writer is atomic and deterministic (no timestamps in SVG or PNG metadata), so a rerun that
computes the same numbers leaves ``figures/`` and ``tables/`` byte-identical.
"""
from __future__ import annotations

import math
import os
import warnings
from pathlib import Path

import numpy as np

from .. import escaping
from ..atomic import atomic_path, write_text
from ..kernel import in_notebook_kernel
from ..lazy import lazy

pd = lazy("pandas")

#: One colour per training set, used by every figure.
TRAIN_PALETTE = {
    "cc12m": "#4C72B0", "yfcc": "#55A868", "laion": "#C44E52", "openai": "#8172B2", "other": "#937860",
    "toy": "#DD8452",
}
HN_LABELS = {"atom": "HN-Atom", "comp": "HN-Comp", "combined": "Combined", "swap": "HN-Swap",
             "negate": "HN-Neg", "all": "All negatives"}
#: one colour per blind scorer, in every figure that draws them
SCORER_COLORS = {"negation": "#C44E52", "length": "#DD8452", "wordfreq": "#937860", "wordfreq-cased": "#DA8BC3",
                 "bigram": "#4C72B0", "bigram-cased": "#64B5CD", "bigram-mean": "#1B2A49", "classifier": "#55A868",
                 "classifier-cased": "#8C8C8C"}
#: Each claim status (crepe_utils.claims.base.STATUSES): the mark written before it in the claims tables and the
#: README, and the badge (a CSS class of the book's style) that the book draws for the status and for its mark.
STATUS_STYLES = {"pass": ("✅", "pass"), "fail": ("❌", "fail"), "paper inconsistency": ("⚠️", "warn"),
                 "sources disagree": ("⇄", "sources"), "differs at scale": ("↕", "scale"),
                 "holds in part": ("◐", "part"), "needs data": ("…", "needs")}
STATUS_MARKS = {status: f"{mark} {status}" for status, (mark, _) in STATUS_STYLES.items()}


# ------------------------------------------------------------------------------ figures readable at column width
#
# A page shows a figure's PNG at its pixel size, shrunk to the content column when wider. Text of ``f`` points in a
# figure ``w`` inches wide saved at ``dpi`` is ``f * dpi / 72`` pixels high in the PNG; shown at column width it is
# that times ``min(1, COLUMN_PX / (w * dpi))`` CSS pixels, and a CSS pixel is 3/4 of a point (96 px, 72 pt an inch).
# So when a figure is shrunk its text shows at ``f * COLUMN_PX * 3 / (4 * 72 * w)`` points, whatever its dpi: a
# figure may be at most ``f * COLUMN_PX / (96 * MIN_SHOWN_PT)`` inches wide for its smallest text ``f`` to stay
# at MIN_SHOWN_PT. With 9-point text in a 750-pixel column that is 7.81 inches.

#: The reading view's content column, in CSS pixels (the book's column is 700 to 800 px; the wider end is assumed,
#: as a narrower column shrinks every figure wider than it by the same factor).
COLUMN_PX = 750
#: The smallest text a figure may show at column width, in points.
MIN_SHOWN_PT = 9.0
#: The smallest font size a figure should draw text with, in points (the style's own sizes are larger: its tick
#: labels are 10.45 points).
MIN_FONT_PT = 9.0
#: The PNG's resolution.
SAVE_DPI = 150


def shown_pt(font_pt: float, width_in: float, dpi: float = SAVE_DPI) -> float:
    """The size, in points, at which text of ``font_pt`` shows in a figure ``width_in`` inches wide saved at ``dpi``,
    displayed at its pixel size or shrunk to :data:`COLUMN_PX`."""
    pixels = width_in * dpi
    return font_pt * dpi / 72 * min(1.0, COLUMN_PX / pixels) * 72 / 96


def max_width_in(font_pt: float = MIN_FONT_PT) -> float:
    """The widest a figure may be, in inches, for text of ``font_pt`` to show at :data:`MIN_SHOWN_PT`."""
    return font_pt * COLUMN_PX / (96 * MIN_SHOWN_PT)


def panel_grid(n: int, width: float, row_height: float, margin: float = 0.0, **subplots):
    """``(fig, axes)`` for ``n`` panels in two columns (one when ``n`` is 1): ``width`` inches wide, ``row_height``
    a row plus ``margin`` inches high; ``axes`` is 2-D (``axes[:, 0]`` is the left column) and its cells past the
    ``n``-th are removed from the figure, so an odd count leaves an empty cell, not an empty frame."""
    import matplotlib.pyplot as plt
    ncols = 2 if n > 1 else 1
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, row_height * nrows + margin), squeeze=False, **subplots)
    for ax in axes.flat[n:]:
        fig.delaxes(ax)
    return fig, axes


#: The legend's name for :func:`random_tie_marks`' hollow markers.
RANDOM_TIES = "expected if ties were broken at random"


def random_tie_marks(ax, x, rows: pd.DataFrame, color="black", label: str | None = None, s: float = 22,
                     linewidths: float = 1.1, zorder: int = 4) -> bool:
    """Hollow markers at x, at each row's Recall@1 expected if ties were broken at random (``r1_random_ties``,
    what the chance line assumes), where a tie decided some query of the row (``decided_by_tie``): the strict
    score beside them is then partly the tie rule's doing. Whether any was drawn (a table without those columns
    draws none)."""
    if "r1_random_ties" not in rows or "decided_by_tie" not in rows:
        return False
    tied = (rows["decided_by_tie"].fillna(0).to_numpy() > 0) & rows["r1_random_ties"].notna().to_numpy()
    if tied.any():
        ax.scatter(np.asarray(x, dtype=float)[tied], rows["r1_random_ties"].to_numpy(dtype=float)[tied], s=s,
                   facecolors="none", edgecolors=color, linewidths=linewidths, zorder=zorder, label=label)
    return bool(tied.any())


def set_style() -> None:
    """The seaborn style of every figure in the project (and, in a notebook kernel, every table in the reading
    view's form: :func:`use_reading_tables`)."""
    import matplotlib as mpl
    import seaborn as sns
    sns.set_theme(context="notebook", style="whitegrid", font_scale=0.95)
    mpl.rcParams.update({
        "figure.dpi": 110, "savefig.dpi": SAVE_DPI, "savefig.bbox": "tight",
        "axes.titleweight": "bold", "axes.titlesize": 11, "legend.frameon": False,
        "svg.hashsalt": "crepe-companion", "svg.fonttype": "none",
        "text.parse_math": False,            # a '$' in a caption or a model's name is a dollar sign
    })
    use_reading_tables()                     # every notebook calls this first: its tables in the reading view's form


def _shown(text) -> str:
    """A figure's text with its hidden characters made visible and its own line breaks kept."""
    return escaping.visible(text, keep="\n")


def _showing(func):
    """A tick-label function whose labels pass through :func:`_shown`."""
    def label(x, pos=None):
        return _shown(func(x, pos))
    label.shows_text = True
    return label


def render_figure(fig, target, **savefig) -> None:
    """``fig.savefig(target, ...)`` with every text shown as the characters it holds: no ``$...$`` read as
    mathematics (no figure of ours typesets any; a caption's dollar signs would otherwise be typeset, or an
    odd number of them stop the figure) and control characters other than line breaks made visible."""
    import matplotlib as mpl
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    for text in fig.findobj(Text):
        text.set_parse_math(False)
        shown = _shown(text.get_text())
        if shown != text.get_text():
            text.set_text(shown)
    for ax in fig.axes:                                       # tick labels given as text are drawn from these
        for formatter in (ax.xaxis.get_major_formatter(), ax.yaxis.get_major_formatter()):
            if isinstance(formatter, FixedFormatter):
                formatter.seq = [_shown(label) for label in formatter.seq]
            elif isinstance(formatter, FuncFormatter) and not getattr(formatter.func, "shows_text", False):
                formatter.func = _showing(formatter.func)
    with mpl.rc_context({"text.parse_math": False}):         # tick labels are made while drawing
        fig.savefig(target, **savefig)


class Outputs:
    """Where a notebook run writes: ``<figures_dir>/<prefix><stem>.{png,svg}`` and
    ``<tables_dir>/<prefix><stem>.{csv,md,tex}``; each writer returns what a cell should display."""

    def __init__(self, figures_dir: str | os.PathLike, tables_dir: str | os.PathLike, prefix: str = ""):
        self.figures_dir, self.tables_dir, self.prefix = Path(figures_dir), Path(tables_dir), prefix

    def name(self, stem: str) -> str:
        return f"{self.prefix}{stem}"

    def table(self, df: pd.DataFrame, stem: str, caption: str, float_format: str = "{:.2f}") -> pd.DataFrame:
        """Write ``df`` (:func:`write_table`) and return it, for the cell to display."""
        write_table(df, self.name(stem), self.tables_dir, float_format=float_format, caption=caption)
        return df

    def figure(self, fig, stem: str, caption: str | None = None, source: str | None = None) -> None:
        """Write ``fig`` (:func:`save_figure`), shown inline in a kernel with ``caption`` and ``source``."""
        save_figure(fig, self.name(stem), self.figures_dir, caption=caption, source=source)

    def example(self, stem: str, note: str) -> bool:
        """Show another run's figure ``<figures_dir>/<stem>.png`` under ``note`` (:func:`show_example`)."""
        return show_example(self.figures_dir, stem, note)


def setup(figures_dir: str | os.PathLike = "figures", tables_dir: str | os.PathLike = "tables",
          prefix: str = "") -> Outputs:
    """A notebook's first call: the project's figure style, tqdm's IProgress warning silenced (open_clip's
    dependencies import ``tqdm.auto``), and where this run writes."""
    warnings.filterwarnings("ignore", message="IProgress not found")
    set_style()
    return Outputs(figures_dir, tables_dir, prefix)


def _figure_title(fig, fallback: str) -> str:
    titles = [fig._suptitle.get_text()] if getattr(fig, "_suptitle", None) is not None else []
    titles += [ax.get_title() for ax in fig.axes]
    return next((t for t in titles if t.strip()), fallback)


#: the attribute :func:`cite` sets on a figure: where its numbers come from, in words
SOURCE_ATTRIBUTE = "crepe_source"


def cite(fig, source: str):
    """``fig``, with where its numbers come from (a published table and the file it was transcribed into, as plain
    text: code marks dropped), which :func:`save_figure` gives the book's caption when its caller names no
    ``source``; returns ``fig``."""
    setattr(fig, SOURCE_ATTRIBUTE, " ".join(source.replace("`", "").split()))   # plain text: the book escapes it
    return fig


def save_figure(fig, name: str, figures_dir: str | os.PathLike, formats=("png", "svg"),
                show: bool | None = None, caption: str | None = None, source: str | None = None) -> list[Path]:
    """Write ``fig`` as ``<figures_dir>/<name>.<fmt>`` for each format, atomically and deterministically.

    ``show`` (default: inside a notebook kernel) displays the file just written, byte for byte, as
    the cell's output, then closes ``fig`` so that no backend shows a second, different rendering. The output's
    metadata names the figure and carries its caption for the book (``make docs``: a numbered figure): what it
    shows (``caption``, default: its title) and where its numbers come from (``source``, default: the book
    says the notebook's data and results, listed in the page's provenance; a figure :func:`cite` marked says its own).
    """
    out = []
    for fmt in formats:
        path = Path(figures_dir) / f"{name}.{fmt}"
        metadata = {"Date": None} if fmt == "svg" else {"Software": None} if fmt == "png" else {}
        with atomic_path(path) as tmp:
            render_figure(fig, tmp, format=fmt, metadata=metadata)
        out.append(path)
    if show if show is not None else in_notebook_kernel():
        _display_saved(fig, name, out, caption, source or getattr(fig, SOURCE_ATTRIBUTE, None))
    return out


def show_example(figures_dir: str | os.PathLike, name: str, note: str) -> bool:
    """Display ``<figures_dir>/<name>.png`` under ``note`` when it exists (a figure another run of the notebook
    drew, e.g. the toy world's, shown where this run has no data for it); whether it was shown."""
    from IPython.display import Image, Markdown, display

    png = Path(figures_dir) / f"{name}.png"
    if not png.is_file():
        return False
    display(Markdown(note))
    plain = note.strip().strip("_*").rstrip(":").strip()    # the caption: the note without its emphasis
    shown = {"figure": name, "alt": plain, "caption": plain,
             "source": "Drawn by another run of this notebook, as the note above says"}
    display(Image(data=png.read_bytes(), format="png", metadata=shown, alt=plain))
    return True


def _display_saved(fig, name: str, written: list[Path], caption: str | None = None,
                   source: str | None = None) -> None:
    import matplotlib.pyplot as plt
    from IPython.display import SVG, Image, display

    png = next((p for p in written if p.suffix == ".png"), None)
    svg = next((p for p in written if p.suffix == ".svg"), None)
    shown = {"figure": name, "alt": _figure_title(fig, name)}
    shown.update({k: v for k, v in (("caption", caption), ("source", source)) if v})
    if png is not None:
        display(Image(data=png.read_bytes(), format="png", metadata=shown, alt=shown["alt"]))
    elif svg is not None:
        display(SVG(data=svg.read_text(encoding="utf-8"), metadata=shown))
    plt.close(fig)


def _cell(value, float_format: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "—"
    if isinstance(value, float):
        return float_format.format(value)
    return str(value)


def markdown_table(df: pd.DataFrame, float_format: str = "{:.2f}") -> str:
    """A GitHub-flavoured Markdown table (numbers right-aligned). Every header and cell is shown as the text
    it holds (:func:`crepe_utils.escaping.markdown`): a caption's ``<script>``, ``*``, backticks or ``|`` are
    escaped, its control characters made visible."""
    cols = [escaping.markdown(str(c)) for c in df.columns]
    rows = [[escaping.markdown(_cell(v, float_format)) for v in row] for row in df.itertuples(index=False)]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def latex_table(df: pd.DataFrame, float_format: str = "{:.2f}", caption: str | None = None) -> str:
    """A booktabs ``tabular`` (wrapped in a ``table`` with caption when one is given)."""
    numeric = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]
    spec = "".join("r" if n else "l" for n in numeric)
    body = [" & ".join(escaping.latex(str(c)) for c in df.columns) + r" \\", r"\midrule"]
    for row in df.itertuples(index=False):
        body.append(" & ".join(escaping.latex(_cell(v, float_format)) for v in row) + r" \\")
    tabular = "\n".join([rf"\begin{{tabular}}{{{spec}}}", r"\toprule", *body, r"\bottomrule", r"\end{tabular}"])
    if caption:
        return "\n".join([r"\begin{table}[t]", r"\centering", tabular,
                          rf"\caption{{{escaping.latex(caption)}}}", r"\end{table}"]) + "\n"
    return tabular + "\n"


def write_table(df: pd.DataFrame, name: str, tables_dir: str | os.PathLike, float_format: str = "{:.2f}",
                caption: str | None = None) -> list[Path]:
    """Write ``df`` as ``<name>.csv`` (full precision), ``.md`` and ``.tex``, atomically."""
    tables_dir = Path(tables_dir)
    csv_path = tables_dir / f"{name}.csv"
    with atomic_path(csv_path) as tmp:
        df.to_csv(tmp, index=False, float_format="%.6g")
    md = (f"{caption}\n\n" if caption else "") + markdown_table(df, float_format)
    return [csv_path, write_text(tables_dir / f"{name}.md", md),
            write_text(tables_dir / f"{name}.tex", latex_table(df, float_format, caption))]


def check_table(checks_df: pd.DataFrame) -> pd.DataFrame:
    """The closing check table of a notebook: claim, paper, found, status (with a mark), detail."""
    out = checks_df[["claim", "paper", "found", "status", "detail"]].copy()
    out["status"] = out["status"].map(lambda s: STATUS_MARKS.get(s, s))
    return out


CLAIMS_START, CLAIMS_END = "<!-- claims:start -->", "<!-- claims:end -->"


def _page_with_claims(path: Path, checks_df: pd.DataFrame) -> tuple[str, str]:
    """(the page's text, the same text with the claims table of ``checks_df``)."""
    text = path.read_text(encoding="utf-8")
    if CLAIMS_START not in text or CLAIMS_END not in text:
        raise ValueError(f"{path} lacks the markers {CLAIMS_START} … {CLAIMS_END}")
    table = checks_df[["claim", "paper", "found", "status"]].copy()
    table["status"] = table["status"].map(lambda s: STATUS_MARKS.get(s, s))
    head, rest = text.split(CLAIMS_START, 1)
    _, tail = rest.split(CLAIMS_END, 1)
    return text, f"{head}{CLAIMS_START}\n{markdown_table(table)}{CLAIMS_END}{tail}"


def update_claims_page(page: str | os.PathLike, checks_df: pd.DataFrame) -> bool:
    """Replace the claims table between the page's claim markers (docs/claims.md); True when it changed."""
    path = Path(page)
    text, new = _page_with_claims(path, checks_df)
    if new != text:
        write_text(path, new)
    return new != text


def claims_page_current(page: str | os.PathLike, checks_df: pd.DataFrame) -> bool:
    """True when the page's claims table is exactly the one ``checks_df`` gives (nothing is written)."""
    text, new = _page_with_claims(Path(page), checks_df)
    return new == text


# ------------------------------------------------------------------------------ tables in the reading view

#: The reading view's header for each column name the notebooks' tables use; a name not listed is shown by its
#: HN type's name (``atom``: HN-Atom) or with its underscores as spaces (:func:`header`).
HEADERS = {
    "r1": "R@1 (%)", "r1_ci_low": "R@1, 95% CI low", "r1_ci_high": "R@1, 95% CI high", "chance_r1": "chance (%)",
    "r1_paper": "R@1, paper (%)", "r1_eval": "R@1, evaluated (%)", "r1_eval_ci_low": "evaluated, 95% CI low",
    "r1_eval_ci_high": "evaluated, 95% CI high", "r1_all": "R@1, all queries (%)",
    "r1_blind_hard": "R@1, blind-hard queries (%)", "r1_optimistic": "R@1, ties optimistic (%)",
    "n_tied_queries": "queries with a tie", "ci_low": "95% CI low", "ci_high": "95% CI high",
    "n_queries": "queries", "n_examples": "examples", "n_SC": "SC queries", "n_UC": "UC queries",
    "SC_paper": "SC, paper", "SC_eval": "SC, evaluated", "SC_diff": "SC, evaluated − paper", "UC_paper": "UC, paper",
    "UC_eval": "UC, evaluated", "UC_diff": "UC, evaluated − paper", "delta": "UC − SC",
    "delta_ci_low": "UC − SC, 95% CI low", "delta_ci_high": "UC − SC, 95% CI high", "delta_paper": "UC − SC, paper",
    "delta_eval": "UC − SC, evaluated", "diff": "evaluated − paper", "hn_type": "HN type", "display": "model",
    "acc": "accuracy (%)", "acc_r": "pairwise accuracy (%)", "n_blind_hard": "blind-hard queries",
    "blind_hard": "blind-hard queries", "beats": "checkpoints beaten", "beats_surely":
    "checkpoints below the interval", "beats_pretrained": "pretrained checkpoints beaten",
    "decided_by_tie": "decided by a tie", "length_share": "shorter caption is the positive (%)",
    "t_ci_low": "95% CI low (t)", "t_ci_high": "95% CI high (t)", "boot_ci_low": "95% CI low (bootstrap)",
    "boot_ci_high": "95% CI high (bootstrap)", "n_ties": "ties", "r2": "R²", "r2_ci_low": "R², 95% CI low",
    "r2_ci_high": "R², 95% CI high", "r2_paper": "R², paper", "r2_fisher_low": "R², Fisher's z low",
    "r2_fisher_high": "R², Fisher's z high", "r2_loo_min": "R², leave-one-out min", "r2_loo_max":
    "R², leave-one-out max", "n_models": "models", "train_data": "training data", "collapsed_tag": "tag",
    "valid_pct": "valid (%)", "a_correct": "A right", "b_correct": "B right", "only_a": "only A right",
    "only_b": "only B right", "n_paired": "paired queries", "n_unpaired": "unpaired queries",
    "n_only_in_a": "only in A", "n_only_in_b": "only in B", "diff_pp": "B − A (points)",
    "diff_ci_low": "B − A, 95% CI low", "diff_ci_high": "B − A, 95% CI high", "p_value": "p (exact McNemar)",
    "p_holm": "p (Holm)", "paired_width": "paired interval width", "independent_width": "independent interval width",
    "independent_low": "independent, 95% CI low", "independent_high": "independent, 95% CI high",
    "width_ratio": "width ratio", "paired_excludes_zero": "paired interval excludes 0",
    "queries_to_match": "queries to match", "queries_to_separate": "queries to separate",
    "pearson_r": "Pearson r", "spearman_n4": "Spearman ρ, n = 4", "spearman_n12": "Spearman ρ, n = 12",
    "paper_r": "r, paper", "paper_k": "k, paper", "k_over_N": "k / N", "is_k_over_n": "is k / N",
    "released_n": "released N", "common_n": "common N", "fits_released": "fits released N",
    "fits_common": "fits common N", "diff_examples": "difference (examples)", "diff_items": "difference (items)",
    "field_k": "k, field", "field_n": "N, field", "field_percentile": "field percentile", "model_k": "k, model",
    "model_n": "N, model", "model_value": "model value", "field_best": "field's best",
    "field_best_value": "field's best value", "blind_best": "best blind scorer", "blind_best_value":
    "best blind scorer's value", "field_below": "field checkpoints below", "result_kind": "result kind",
    "tie_policy": "tie policy", "model_a": "model A", "model_b": "model B", "k_min": "k min", "k_max": "k max",
    "a_low": "A, 95% CI low", "a_high": "A, 95% CI high", "b_low": "B, 95% CI low", "b_high": "B, 95% CI high",
    "own_intervals_overlap": "own intervals overlap", "identical_texts": "identical texts",
    "identical_valid": "identical, valid", "only_in_caption_0": "words only in caption 0",
    "only_in_caption_1": "words only in caption 1", "same_letters": "same letters", "same_order": "same order",
    "caption_share": "share of captions (%)", "comma_split": "split at a comma", "tagged_morpheme": "tagged morpheme",
    "best_alternative": "best alternative", "imagenet_source": "ImageNet source", "n_imagenet_50plus":
    "checkpoints with ImageNet ≥ 50%", "pearson_r_imagenet_50plus": "Pearson r, ImageNet ≥ 50%",
    "field_items": "field items", "open_clip_docs": "open_clip docs", "open_clip_results_table":
    "open_clip results table",
}
#: A column's header where its :data:`HEADERS` name is another column's too (``display`` beside ``model``).
SECOND_HEADERS = {"display": "model, as named"}
#: Values shown by a name: a column's codes (``atom``) as the papers name them (``HN-Atom``).
VALUE_LABELS = {"hn_type": HN_LABELS}
#: What a missing value is shown as; the table's footnote says why it is missing.
MISSING_MARK = "—"
MISSING_WHY = "no value: not published or not computed for this row"


def header(name, headers: dict | None = None) -> str:
    """A column's header in the reading view: ``headers``' name for it, else :data:`HEADERS`', else the name with
    its underscores as spaces. A pivot table's column (a tuple) joins its non-empty parts with " · "."""
    if isinstance(name, tuple):
        return " · ".join(header(part, headers) for part in name if str(part) != "")
    headers = {**HEADERS, **(headers or {})}
    if name in headers:
        return headers[name]
    return HN_LABELS.get(name, str(name).replace("_", " "))


def _missing(value) -> bool:
    try:
        return (value is None or value is pd.NA or value is pd.NaT
                or (isinstance(value, (float, np.floating)) and math.isnan(value)))
    except TypeError:
        return False


def _integral(values) -> bool:
    """Every non-missing value is a whole number (a count that a missing value turned into floats)."""
    present = [v for v in values if not _missing(v)]
    return bool(present) and all(isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer()
                                 for v in present)


#: The most decimals the reading view shows where a table does not say (:func:`decimals`).
MAX_DIGITS = 3


def decimals(values, most: int = MAX_DIGITS) -> int:
    """The fewest decimals (at most ``most``) that show every one of ``values`` exactly: a column rounded to one
    decimal is shown with one, an unrounded one with ``most``."""
    for d in range(most + 1):
        if all(abs(v - round(v, d)) <= 1e-9 * max(1.0, abs(v)) for v in values):
            return d
    return most


def _number(v: float, digits: int) -> str:
    if v != 0 and abs(v) < 0.5 * 10 ** -digits:                # shown as 0.00 it would read as zero: 1.2e-05
        return f"{v:.2g}"
    return f"{v:,.{digits}f}"


def reading_cells(df: pd.DataFrame, digits: int | None = None, headers: dict | None = None) -> tuple[list[str], list[list],
                                                                                          list[bool]]:
    """(headers, rows of shown texts — ``None`` where a value is missing —, which columns are numbers) of ``df``
    as the reading view shows it: an index becomes columns, unless it is row numbers (unnamed integers); whole
    numbers are shown as integers with thousands separators, other numbers with ``digits`` decimals (None: the
    fewest that show the column's values exactly, at most :data:`MAX_DIGITS`), a tiny one in two significant
    digits rather than as zero, booleans as
    yes / no; a column of :data:`VALUE_LABELS` by its values' names. Nothing is escaped here."""
    row_numbers = df.index.nlevels == 1 and df.index.name is None and pd.api.types.is_integer_dtype(df.index)
    if not row_numbers:                                       # an unnamed label column gets an empty header
        df = df.rename_axis([name if name is not None else "" for name in df.index.names])
    table = df.reset_index(drop=row_numbers)
    names, rows, numeric = [], [[] for _ in range(len(table))], []
    for position, column in enumerate(table.columns):
        values = table.iloc[:, position].tolist()
        present = [v for v in values if not _missing(v)]
        labels = VALUE_LABELS.get(column, {}) if not isinstance(column, tuple) else {}
        is_bool = bool(present) and all(isinstance(v, (bool, np.bool_)) for v in present)
        is_number = bool(present) and not is_bool and all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) for v in present)
        whole = is_number and _integral([float(v) for v in present])
        places = digits if digits is not None or not is_number else decimals([float(v) for v in present])
        names.append(header(column, headers))
        numeric.append(is_number)
        for row, v in zip(rows, values):
            if _missing(v):
                row.append(None)
            elif is_bool:
                row.append("yes" if v else "no")
            elif whole:
                row.append(f"{int(round(float(v))):,}")
            elif is_number:
                row.append(_number(float(v), places))
            else:
                row.append(str(labels.get(v, v)))
    for k, (column, shown) in enumerate(zip(table.columns, list(names))):   # two columns never share a header
        if names.count(shown) > 1 and (headers or {}).get(column) != shown and str(column) != shown:
            names[k] = SECOND_HEADERS.get(column, str(column).replace("_", " "))
    return names, rows, numeric


class ReadingTable:
    """A table as the reading view shows it (:func:`reading_table`): HTML for the page, Markdown for a text view."""

    def __init__(self, html: str, markdown: str):
        self.html, self.markdown = html, markdown

    def _repr_html_(self) -> str:
        return self.html

    def _repr_markdown_(self) -> str:
        return self.markdown

    def __repr__(self) -> str:
        return self.markdown


def reading_table(df: pd.DataFrame, digits: int | None = None, headers: dict | None = None, missing: str = MISSING_WHY,
                  caption: str | None = None) -> ReadingTable:
    """``df`` for the reading view, in HTML and Markdown (:func:`reading_cells`): every header and cell escaped
    for where it lands; a missing value shown as :data:`MISSING_MARK`, with a footnote saying ``missing`` (why
    it is missing) under any table that has one; ``caption`` above it."""
    names, rows, numeric = reading_cells(df, digits, headers)
    any_missing = any(cell is None for row in rows for cell in row)
    html_cells = lambda row: "".join(  # noqa: E731
        f'<td style="text-align: {"right" if n else "left"}">{escaping.html(MISSING_MARK if c is None else c)}</td>'
        for c, n in zip(row, numeric))
    html = ['<table class="reading">']
    if caption:
        html.append(f"<caption>{escaping.html(caption)}</caption>")
    html.append("<thead><tr>" + "".join(f'<th style="text-align: {"right" if n else "left"}">{escaping.html(h)}</th>'
                                        for h, n in zip(names, numeric)) + "</tr></thead>")
    html.append("<tbody>" + "".join(f"<tr>{html_cells(row)}</tr>" for row in rows) + "</tbody></table>")
    md = ["| " + " | ".join(escaping.markdown(h) for h in names) + " |",
          "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    md += ["| " + " | ".join(escaping.markdown(MISSING_MARK if c is None else c) for c in row) + " |" for row in rows]
    if any_missing:
        html.append(f'<p class="table-note"><small>{MISSING_MARK} {escaping.html(missing)}</small></p>')
        md.append(f"\n{MISSING_MARK} {escaping.markdown(missing)}")
    if caption:
        md.insert(0, f"{escaping.markdown(caption)}\n")
    return ReadingTable("\n".join(html), "\n".join(md) + "\n")


def show_table(df: pd.DataFrame, digits: int | None = None, headers: dict | None = None, missing: str = MISSING_WHY,
               caption: str | None = None) -> None:
    """Display ``df`` in a notebook as the reading view shows tables (:func:`reading_table`)."""
    from IPython.display import display
    display(reading_table(df, digits, headers, missing, caption))


def use_reading_tables() -> bool:
    """In a notebook kernel, show every DataFrame a cell displays through :func:`reading_table` (its HTML, and its
    Markdown as the plain text), so that no table of a page shows pandas' own form; whether it was set."""
    if not in_notebook_kernel():
        return False
    from IPython import get_ipython
    formatters = get_ipython().display_formatter.formatters
    formatters["text/html"].for_type(pd.DataFrame, lambda df: reading_table(df).html)
    formatters["text/plain"].for_type(pd.DataFrame, lambda df, printer, cycle: printer.text(reading_table(df).markdown))
    return True
