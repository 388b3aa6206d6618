"""Tables and figures in one style: CSV + Markdown + LaTeX (booktabs), PNG + SVG.

Every writer is atomic and deterministic (no timestamps in SVG or PNG metadata), so a rerun that
computes the same numbers leaves ``figures/`` and ``tables/`` byte-identical.
"""
from __future__ import annotations

import math
import os
import warnings
from pathlib import Path

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
STATUS_MARKS = {"pass": "✅ pass", "fail": "❌ fail", "paper inconsistency": "⚠️ paper inconsistency",
                "sources disagree": "⇄ sources disagree", "differs at scale": "↕ differs at scale",
                "holds in part": "◐ holds in part", "needs data": "… needs data"}


def set_style() -> None:
    """The seaborn style of every figure in the project."""
    import matplotlib as mpl
    import seaborn as sns
    sns.set_theme(context="notebook", style="whitegrid", font_scale=0.95)
    mpl.rcParams.update({
        "figure.dpi": 110, "savefig.dpi": 150, "savefig.bbox": "tight",
        "axes.titleweight": "bold", "axes.titlesize": 11, "legend.frameon": False,
        "svg.hashsalt": "crepe-companion", "svg.fonttype": "none",
        "text.parse_math": False,            # a '$' in a caption or a model's name is a dollar sign
    })


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


def save_figure(fig, name: str, figures_dir: str | os.PathLike, formats=("png", "svg"),
                show: bool | None = None, caption: str | None = None, source: str | None = None) -> list[Path]:
    """Write ``fig`` as ``<figures_dir>/<name>.<fmt>`` for each format, atomically and deterministically.

    ``show`` (default: inside a notebook kernel) displays the file just written, byte for byte, as
    the cell's output, then closes ``fig`` so that no backend shows a second, different rendering. The output's
    metadata names the figure and carries its caption for the book (``make docs``: a numbered figure): what it
    shows (``caption``, default: its title) and where its numbers come from (``source``, default: the book
    says the notebook's data and results, listed in the page's provenance).
    """
    out = []
    for fmt in formats:
        path = Path(figures_dir) / f"{name}.{fmt}"
        metadata = {"Date": None} if fmt == "svg" else {"Software": None} if fmt == "png" else {}
        with atomic_path(path) as tmp:
            render_figure(fig, tmp, format=fmt, metadata=metadata)
        out.append(path)
    if show if show is not None else in_notebook_kernel():
        _display_saved(fig, name, out, caption, source)
    return out


def show_example(figures_dir: str | os.PathLike, name: str, note: str) -> bool:
    """Display ``<figures_dir>/<name>.png`` under ``note`` when it exists (a figure another run of the notebook
    drew, e.g. the toy world's, shown where this run has no data for it); whether it was shown."""
    from IPython.display import Image, Markdown, display

    png = Path(figures_dir) / f"{name}.png"
    if not png.is_file():
        return False
    display(Markdown(note))
    shown = {"figure": name, "alt": note, "source": "Drawn by another run of this notebook, as the note above says"}
    display(Image(data=png.read_bytes(), format="png", metadata=shown, alt=note))
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
