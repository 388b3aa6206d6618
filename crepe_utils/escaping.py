"""Text from data, escaped for where it lands: HTML, Markdown and LaTeX (a figure's text:
``analysis.reporting.render_figure``).

A caption, a file name or a model's name is data: it is shown as the characters it holds, never read
as markup. Every function here first makes invisible characters visible (:func:`visible`), so that a
NUL, a bidirectional override or a line break inside a caption is seen, and can neither reorder the
text around it nor start a new Markdown block; then it escapes what the target would read as markup.

Our own sentences are Markdown and are not passed through here; the data interpolated into them are.
"""
from __future__ import annotations

import html as _html
import re
import unicodedata

#: Unicode categories shown as escapes: controls (NUL, ESC, line breaks), format characters (the
#: bidirectional overrides and isolates, zero-width joiners, the byte-order mark), lone surrogates,
#: and the line and paragraph separators.
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})

_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape_code(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str, keep: str = "") -> str:
    """``text`` with each control, format or separator character written as Python writes it in a
    string literal (``\\x00``, ``\\n``, ``\\u202e``): shown, never obeyed. Characters in ``keep`` (a
    page's own line breaks) are left as they are."""
    text = str(text)
    if text.isprintable():                                   # the common case: nothing to do
        return text
    return "".join(_escape_code(ch) if unicodedata.category(ch) in HIDDEN_CATEGORIES and ch not in keep else ch
                   for ch in text)


def page(text: str) -> str:
    """A written page (HTML) with every hidden character a text from data brought into it made visible; the
    page's own line breaks and tabs are kept."""
    return visible(text, keep="\n\t\r")


def html(text: str) -> str:
    """``text`` for HTML, in an element's content or a quoted attribute."""
    return _html.escape(visible(text), quote=True)


#: What CommonMark (with GitHub's tables and strikethrough) could read as inline markup: each is written
#: with a backslash, CommonMark's escape of any ASCII punctuation, which every renderer we meet reads the
#: same whether it passes raw HTML or escapes it (an entity such as &lt; would show as typed in the
#: latter). Block markup cannot start inside our lines: line breaks are made visible first.
_MARKDOWN_RE = re.compile(r"[<>&\\`*\[\]|~$#]"
                          r"|(?<![^\W_])_|_(?![^\W_])"     # '_' unless inside a word
                          r"|:(?=//)")                      # a bare address's scheme, not made a link
#: A list item, a rule or a heading's underline where the text starts a line ("- x", "1. x", "---", "==="),
#: not a number ("-0.5", "1.5").
_BLOCK_START = re.compile(r"^(\s*)([-+=](?![\w.])|\d+[.)](?=\s|$))")


def markdown(text: str) -> str:
    """``text`` for Markdown, literally: inline markup (emphasis, links, code, raw HTML, entities, a table's
    cell separator, strikethrough, TeX's ``$``, a bare address made a link) is escaped, and so is a block
    marker it starts with (``#``, ``>``, ``-``, ``1.``, an indent). An underscore inside a word (``add_att``) is left as
    it is: CommonMark never reads it as emphasis."""
    out = _MARKDOWN_RE.sub(lambda m: "\\" + m.group(0), visible(text))
    out = re.sub(r"^ {4,}", " ", out)                         # not an indented code block (HTML shows one space)
    return _BLOCK_START.sub(lambda m: m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], out, count=1)


_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


def markdown_message(text: str) -> str:
    """One of our messages with data inside (an error line quoting a file's item, a folder given as a flag),
    for Markdown: like :func:`markdown`, except that a code span written with balanced backticks
    (``make data-text``) is kept as code, where nothing is markup. (Balanced backticks inside the data, as
    in a folder named ``a`b`c``, make a code span too: its text is still shown literally. A folder or name
    shown on its own goes through :func:`code`, which has no such case.)"""
    text = visible(text)
    out, at = [], 0
    for m in _CODE_SPAN.finditer(text):
        out += [markdown(text[at:m.start()]), m.group(0)]
        at = m.end()
    out.append(markdown(text[at:]))
    return "".join(out)


def code(text: str) -> str:
    """``text`` (a path, a file's name, a key) as a Markdown code span that shows it literally, whatever
    backticks it holds: the fence is one backtick longer than its longest run of them."""
    text = visible(text)
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
          ">": r"\textgreater{}", "|": r"\textbar{}"}


def latex(text: str) -> str:
    """``text`` for LaTeX's text mode: each of ``\\ & % $ # _ { } ~ ^`` and ``< > |`` (which the
    default font encoding prints as other glyphs) written as the command that prints it."""
    return "".join(_LATEX.get(ch, ch) for ch in visible(text))

