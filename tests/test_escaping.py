"""Text from data shown as the characters it holds, wherever it lands (issue 32, item 7).

Each escaper is checked through the thing that reads its output, never against its own output: the
Markdown and HTML through a real renderer (mistune, a CommonMark one, as the book's MyST-NB is) and an HTML
parser, whose text must equal the input with its invisible characters made visible and which must hold no
element the text did not ask for; the LaTeX through a decoder written here from LaTeX's rules.
"""
from __future__ import annotations

import html.parser
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

import helpers

from crepe_utils import escaping
from crepe_utils.analysis import reporting

ROOT = Path(__file__).resolve().parent.parent

#: Hostile texts, each aimed at one reader: HTML, Markdown's inline markup, GitHub's tables, LaTeX, TeX
#: in notebooks and figures, and characters that hide or reorder text.
HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<!-- hidden --> a comment",
    "[click](javascript:alert(1)) and ![img](x.png) and [ref][1]",
    "<https://example.com> and https://example.com/a_b?x=1&y=2",
    "*bold* **strong** _em_ __under__ add_att snake_case_name _edge",
    "`code` ``double`` and a lone ` backtick",
    "~~struck~~ and ~one",
    "a | b || c \\| d",
    "&amp; &lt; &#60; &copy; & alone",
    "back\\slash \\* \\\\ trailing\\",
    "$x^2$ costs $5, 50% of #1 {a} ~b ^c _d",
    "NUL\x00 ESC\x1b[31m BEL\x07 DEL\x7f C1\x85",
    "bidi \u202eevil\u202c isolate \u2066x\u2069 lrm\u200e zwj\u200d bom\ufeff",
    "line\nbreak\r\nand\ttab and\u2028separator",
    "# not a heading", "- not a list", "> not a quote", "1. not a list", "===",
    "ünïcödé ✅ ⚠️ 中文 non\u00a0breaking",
]

#: What `visible` shows for each kind of invisible character, written from Python's string-literal escapes.
VISIBLE = [("\x00", "\\x00"), ("\x1b", "\\x1b"), ("\x7f", "\\x7f"), ("\x85", "\\x85"), ("\n", "\\n"),
           ("\t", "\\t"), ("\r", "\\r"), ("\u202e", "\\u202e"), ("\u2066", "\\u2066"), ("\u200e", "\\u200e"),
           ("\u200d", "\\u200d"), ("\ufeff", "\\ufeff"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"),
           ("\ud800", "\\ud800"), ("\U000e0001", "\\U000e0001")]


class _Reader(html.parser.HTMLParser):
    """An HTML fragment's elements and text (entities decoded)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.code = [], [], []
        self._in_code = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in_code += tag == "code"

    def handle_endtag(self, tag):
        self._in_code -= tag == "code"

    def handle_data(self, data):
        self.text.append(data)
        if self._in_code:
            self.code.append(data)

    def handle_comment(self, data):
        self.tags.append("!--")


def read_html(fragment: str) -> _Reader:
    reader = _Reader()
    reader.feed(fragment)
    reader.close()
    return reader


def render(text: str, escape: bool) -> str:
    import mistune
    return mistune.create_markdown(escape=escape, plugins=["table", "strikethrough", "url"])(text)


@pytest.mark.parametrize("raw,shown", VISIBLE)
def test_visible_writes_each_hidden_character_as_its_escape(raw, shown):
    assert escaping.visible(f"a{raw}b") == f"a{shown}b"


def test_visible_leaves_printable_text_and_marks_alone():
    text = "ünïcödé ✅ ⚠️ 中文 non\u00a0breaking — “quoted” R² ±"
    assert escaping.visible(text) == text


@pytest.mark.parametrize("escape", [False, True], ids=["raw-html-passed", "raw-html-escaped"])
@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_shows_the_text_and_nothing_else_in_either_renderer_mode(text, escape):
    out = read_html(render(f"Before {escaping.markdown(text)} after.", escape))
    assert out.tags == ["p"], out.tags                         # no link, emphasis, code, image, script
    assert "".join(out.text).strip() == f"Before {escaping.visible(text)} after."


@pytest.mark.parametrize("text", HOSTILE + ["---", "***", "===", "  - item", "2) item", "-0.5 and 1.5", "    code"])
def test_markdown_starting_a_line_is_a_paragraph_of_the_text(text):
    out = read_html(render(f"{escaping.markdown(text)}\n", escape=True))
    assert out.tags == ["p"], out.tags
    assert "".join(out.text).strip() == escaping.visible(text).strip()


@pytest.mark.parametrize("text", HOSTILE)
def test_a_markdown_table_cell_shows_the_text_in_one_cell(text):
    table = reporting.markdown_table(pd.DataFrame({"caption": [text], "n": [3]}))
    out = read_html(render(table, escape=False))
    assert sorted(set(out.tags)) == ["table", "tbody", "td", "th", "thead", "tr"], out.tags
    cells = [t for t in out.text if t.strip()]
    assert cells == ["caption", "n", escaping.visible(text), "3"]


def test_a_table_cell_shows_our_own_backticks_too():
    cell = "run `python -m crepe_utils download | head` on <b>this</b>"
    table = reporting.markdown_table(pd.DataFrame({"detail": [cell]}))
    out = read_html(render(table, escape=True))
    assert "code" not in out.tags and "b" not in out.tags
    assert "".join(t for t in out.text if t.strip() and t != "detail") == cell


def test_a_message_keeps_its_code_spans_and_escapes_the_rest():
    message = "cannot read data/x_1.json: item '0' is <b>; `make data-valse | tee log` fetches it"
    out = read_html(render(escaping.markdown_message(message), escape=False))
    assert out.tags == ["p", "code"] and out.code == ["make data-valse | tee log"]
    assert "".join(out.text).strip() == message.replace("`", "")          # the code span's fences


@pytest.mark.parametrize("text", ["plain/path", "a`b", "``x``", "`lead", "trail`", "<b>|*_", "two\nlines"])
def test_code_shows_any_text_literally_in_one_code_span(text):
    out = read_html(render(f"in {escaping.code(text)} here", escape=False))
    assert out.tags == ["p", "code"] and out.code == [escaping.visible(text)]


@pytest.mark.parametrize("text", HOSTILE)
def test_html_escapes_for_element_content_and_quoted_attributes(text):
    out = read_html(f'<p title="{escaping.html(text)}">{escaping.html(text)}</p>')
    assert out.tags == ["p"] and "".join(out.text) == escaping.visible(text)


#: LaTeX's text-mode commands for the characters it reserves, written here from the LaTeX manual.
_LATEX_COMMANDS = {"textbackslash": "\\", "textasciitilde": "~", "textasciicircum": "^", "textless": "<",
                   "textgreater": ">", "textbar": "|"}
_LATEX_SPECIAL = set("\\&%$#_{}~^")


def decode_latex(text: str) -> str:
    """What LaTeX prints for ``text``, or AssertionError at a character it would read as markup."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            m = re.match(r"\\([a-z]+)\{\}", text[i:])
            if m:
                assert m.group(1) in _LATEX_COMMANDS, f"unknown command {m.group(0)}"
                out.append(_LATEX_COMMANDS[m.group(1)])
                i += m.end()
                continue
            assert text[i + 1:i + 2] in set("&%$#_{}"), f"stray backslash at {i}: {text!r}"
            out.append(text[i + 1])
            i += 2
            continue
        assert ch not in _LATEX_SPECIAL and ch not in "<>|", f"unescaped {ch!r} at {i}: {text!r}"
        out.append(ch)
        i += 1
    return "".join(out)


@pytest.mark.parametrize("text", HOSTILE)
def test_latex_prints_the_text(text):
    assert decode_latex(escaping.latex(text)) == escaping.visible(text)


def test_a_latex_table_prints_each_cell_and_header():
    df = pd.DataFrame({"cap_tion & more": HOSTILE[:6], "n": range(6)})
    lines = reporting.latex_table(df, caption="Rows of 50% & more").splitlines()
    body = lines[lines.index(r"\toprule") + 1:lines.index(r"\bottomrule")]
    rows = [line.removesuffix(r" \\") for line in body if line != r"\midrule"]
    cells = [re.split(r"(?<!\\) & ", r) for r in rows]
    assert [decode_latex(c) for c in cells[0]] == ["cap_tion & more", "n"]
    assert [[decode_latex(c) for c in row] for row in cells[1:]] == [[escaping.visible(t), str(k)]
                                                                     for k, t in enumerate(HOSTILE[:6])]


def test_the_books_figure_caption_is_the_captions_text():
    from crepe_utils.site import build
    caption, name = build.figure_caption({"caption": "A <script>alert(1)</script> with *b* and [l](x)",
                                          "source": "from `data` <i>x</i>", "figure": "f"}, "Page")
    reader = read_html(render(caption, escape=False))
    assert {"script", "em", "a", "code", "i"}.isdisjoint(reader.tags) and name == "f"
    assert "".join(reader.text).strip() == ("A <script>alert(1)</script> with *b* and [l](x). from `data` <i>x</i> "
                                    "(figures/f.png).")


def test_a_figure_shows_dollars_and_control_characters_as_text(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    reporting.set_style()                                               # text as text in the SVG
    fig, ax = plt.subplots()
    ax.set_title("costs $5 and $x^2$ and one $ more")                  # an odd count stopped the figure
    ax.set_yticks([0, 1], ["a\x00b", "two\nlines"])
    written = reporting.save_figure(fig, "f", tmp_path, formats=("svg",), show=False)
    svg = written[0].read_text(encoding="utf-8")                        # svg.fonttype none: text as text
    assert "costs $5 and $x^2$ and one $ more" in svg
    assert "a\\x00b" in svg and "two" in svg and "lines" in svg and "\x00" not in svg


# ------------------------------------------------------------------ a hostile caption through the notebooks

PAYLOAD = "<script>alert(1)</script> *b* [l](javascript:alert(2)) $x$ 50% #1 {a}_b~c^d \\ | & \u202eevil\u202c end"
SHOWN_HTML = "&lt;script&gt;alert(1)&lt;/script&gt;"


def _hostile_crepe(folder: Path) -> Path:
    """CREPE's 27 productivity files, n = 4 holding one query per type whose caption and negatives are hostile."""
    import csv
    header = ["image_id", "caption", "n", "n_objects", "n_relations", "n_attributes", "n_connected_components",
              "hard_negs", "x", "y", "width", "height"]
    for hn in ("atom", "swap", "negate"):
        for n in range(4, 13):
            path = folder / "prod_hard_negatives" / hn / f"prod_vg_hard_negs_{hn}_complexity_{n}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w", newline="", encoding="utf-8") as f:
                writer = csv.writer(f)
                writer.writerow(header)
                if n == 4:
                    negatives = [f"{PAYLOAD} negative {k}" for k in range(1, 4)]
                    writer.writerow([7, PAYLOAD, 4, 2, 1, 1, 1, repr(negatives), 0.0, 0.0, 64.0, 64.0])
    return folder


def _hostile_sugarcrepe(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for subset in ("add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj"):
        items = {"0": {"filename": "000000000001.jpg", "caption": PAYLOAD, "negative_caption": f"{PAYLOAD} no"}}
        (folder / f"{subset}.json").write_text(json.dumps(items), encoding="utf-8")
    return folder


@pytest.mark.slow
def test_a_hostile_caption_is_text_on_every_page_table_and_figure(tmp_path):
    """A caption holding a script tag, Markdown, LaTeX specials and a bidirectional override, in CREPE's and
    SugarCrepe's released formats, through the teaching notebook (00) and SugarCrepe's (08), their tables,
    figures and pages, the claims table, and the site built from them."""
    import nbformat

    from crepe_utils.notebooks import execute
    from crepe_utils.site import build as site_build

    crepe, sugarcrepe = _hostile_crepe(tmp_path / "crepe"), _hostile_sugarcrepe(tmp_path / "sugarcrepe")
    build, figures, tables = tmp_path / "build", tmp_path / "figures", tmp_path / "tables"
    shutil.copytree(ROOT / "figures", figures)                     # the README's figures, for the site's links
    common = {"figures_dir": str(figures), "tables_dir": str(tables), "results_dir": str(tmp_path / "none")}
    runs = {"00_how_compositionality_is_evaluated": {"crepe_dir": str(crepe), "toy_dir": str(tmp_path / "no-toy")},
            "08_sugarcrepe": {"sugarcrepe_dir": str(sugarcrepe)}}
    for stem, parameters in runs.items():
        execute(ROOT / "notebooks" / f"{stem}.ipynb", build / f"{stem}.ipynb", {**parameters, **common})
    shown = nbformat.read(build / "00_how_compositionality_is_evaluated.ipynb", as_version=4)
    html_outputs = [str(o.get("data", {}).get("text/html", "")) for c in shown.cells for o in c.get("outputs", [])]
    assert any(SHOWN_HTML in h for h in html_outputs)                 # the caption reached a table, escaped
    assert not any("<script>alert" in h for h in html_outputs)        # and never as markup

    checks = pd.DataFrame({"benchmark": ["sugarcrepe"], "claim": [f"a claim about {PAYLOAD}"], "paper": ["1"],
                           "found": ["1"], "status": ["pass"], "detail": [PAYLOAD]})
    reporting.write_table(checks, "checks", tables)
    for stem, label in site_build.NOTEBOOKS:                        # the other pages: a line each
        if stem not in runs:
            nb = nbformat.v4.new_notebook()
            nb.cells = [nbformat.v4.new_markdown_cell(f"# {label}")]
            nbformat.write(nb, build / f"{stem}.ipynb")
    site = tmp_path / "site"
    book = helpers.book_missing() is None           # without the docs extra: every page but the book's
    if book:
        site_build.build(build, site, ROOT / "README.md", figures, tables)

    pages = {p.relative_to(tmp_path).as_posix(): p.read_text(encoding="utf-8")
             for p in [*site.rglob("*.html"), *build.glob("*.html")]}
    for name in ("site/notebooks/00_how_compositionality_is_evaluated.html",
                 "build/00_how_compositionality_is_evaluated.html", "site/notebooks/08_sugarcrepe.html",
                 "build/08_sugarcrepe.html", "site/tables.html", "site/docs/claims.html"):
        if book or not name.startswith("site/"):
            assert SHOWN_HTML in pages[name], name                  # shown, as text, where it lands
    for name, text in pages.items():
        assert "<script>alert" not in text and "\u202e" not in text, name
        assert 'href="javascript' not in text, name
    assert "\\u202eevil" in pages["site/notebooks/08_sugarcrepe.html" if book else "build/08_sugarcrepe.html"]
    for name in ("build/08_sugarcrepe.html", *(["site/notebooks/08_sugarcrepe.html"] if book else [])):
        assert "mathjax" not in pages[name].lower(), name                  # no $x$ typeset from a caption

    md = {p.name: p.read_text(encoding="utf-8") for p in tables.glob("*.md")}
    assert {"sugarcrepe_subsets.md", "checks.md"} <= set(md)
    for name, text in md.items():
        reader = read_html(render(text, escape=False))
        assert {"script", "a", "em", "strong"}.isdisjoint(reader.tags), name
    subsets = read_html(render(md["sugarcrepe_subsets.md"], escape=False))
    assert escaping.visible(PAYLOAD) in subsets.text
    tex = (tables / "sugarcrepe_subsets.tex").read_text(encoding="utf-8")
    assert r"\textless{}script\textgreater{}" in tex and "<script>" not in tex and "\u202e" not in tex
    assert r"50\% \#1 \{a\}\_b\textasciitilde{}c\textasciicircum{}d \textbackslash{} \textbar{} \&" in tex

    svg = (figures / "teaching_worked_query.svg").read_text(encoding="utf-8")
    assert "&lt;script&gt;" in svg and "$x$" in svg and "\u202e" not in svg   # drawn as text, no mathematics


def _prose(folder: Path, label: str) -> dict[str, str]:
    from crepe_utils.benchmarks.crepe import totals
    from crepe_utils.benchmarks.sugarcrepe import analysis as sc
    from crepe_utils.benchmarks.winoground import view as W
    from crepe_utils.results import store

    folder.mkdir()
    (folder / "add_att.json").write_text('{"0": {"caption": "<script>x</script>"}}', encoding="utf-8")
    for name in ("add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj"):
        (folder / f"{name}.json").write_text("{}", encoding="utf-8")
    labels = pd.DataFrame({"kind": ["evaluated"], "label": [label], "model": ["m"]})
    return {"winoground": W.source_line(None, None, folder), "crepe": totals.data_line(folder),
            "no results": sc.no_results_sentence(folder), "sugarcrepe": sc.released_subsets(folder)[1],
            "label": store.describe_kind(labels)}


def test_generated_prose_shows_folders_labels_and_error_lines_as_text(tmp_path):
    """A folder given as a flag, a manifest's label and a file's error line, interpolated into the notebooks'
    generated Markdown: each page has the elements it has with a plain folder and label (no markup made of
    the data), and the data read back as the text they are."""
    hostile = _prose(tmp_path / "my_*data*_[1]<b>|x", "*run* <b>1</b>")
    plain = _prose(tmp_path / "plain", "run 1")
    for what, text in hostile.items():
        out, expected = read_html(render(text, escape=False)), read_html(render(plain[what], escape=False))
        assert out.tags == expected.tags, (what, text)
    ticks = _prose(tmp_path / "a`b``c", "run 1")                     # a folder shown as code, whatever it holds
    for what in ("winoground", "crepe", "no results"):
        assert read_html(render(ticks[what], escape=False)).tags == read_html(render(plain[what], escape=False)).tags
        assert any(c.endswith("a`b``c") for c in read_html(render(ticks[what], escape=False)).code), what
    assert "*run* <b>1</b>" in "".join(read_html(render(hostile["label"], escape=False)).text)
    assert "cannot be read" in hostile["sugarcrepe"] and "my_*data*_[1]<b>|x: add_att.json[0]" in "".join(
        read_html(render(hostile["sugarcrepe"], escape=False)).text)                  # the error line, as text
