"""The reading view's one table formatter (crepe_utils.analysis.reporting.reading_table): counts stay integers,
a missing value is a mark with a footnote saying why, headers are human, no row index, data text escaped."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from crepe_utils.analysis import reporting


def _cells(html: str) -> list[list[str]]:
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body)]


def _headers(html: str) -> list[str]:
    return re.findall(r"<th\b[^>]*>(.*?)</th>", html)


def test_counts_stay_integers_even_beside_a_missing_value():
    df = pd.DataFrame({"n_queries": [676.0, np.nan, 1372.0], "r1": [12.345, 0.5, 100.0]})
    table = reporting.reading_table(df, digits=2)
    assert _cells(table.html) == [["676", "12.35"], ["—", "0.50"], ["1,372", "100.00"]]
    assert "676.0" not in table.markdown and "nan" not in table.markdown.lower()


def test_a_missing_value_is_a_mark_explained_under_the_table():
    df = pd.DataFrame({"model": ["a", None], "r1": [1.25, np.nan]})
    table = reporting.reading_table(df, missing="not published by the paper")
    assert _cells(table.html) == [["a", "1.25"], ["—", "—"]]
    assert "— not published by the paper" in table.html
    assert table.markdown.rstrip().endswith("— not published by the paper")
    full = reporting.reading_table(pd.DataFrame({"r1": [1.0, 2.0]}), missing="never shown")
    assert "never shown" not in full.html and "never shown" not in full.markdown


def test_headers_come_from_the_mapping_and_codes_by_their_names():
    df = pd.DataFrame({"hn_type": ["atom", "negate"], "n_blind_hard": [3, 0], "beats_surely": [True, False],
                       "some_column": [1, 2]})
    table = reporting.reading_table(df, headers={"some_column": "what it counts"})
    assert _headers(table.html) == ["HN type", "blind-hard queries", "checkpoints below the interval", "what it counts"]
    assert _cells(table.html) == [["HN-Atom", "3", "yes", "1"], ["HN-Neg", "0", "no", "2"]]
    both = reporting.reading_table(pd.DataFrame({"model": ["m/k"], "display": ["M"]}))
    assert _headers(both.html) == ["model", "model, as named"]             # two columns never share a header
    unnamed = reporting.reading_table(pd.DataFrame({"mean_words": [1.5]}))
    assert _headers(unnamed.html) == ["mean words"]


def test_decimals_follow_the_column_unless_given():
    df = pd.DataFrame({"rounded": [12.3, 4.0, 0.5], "raw": [1 / 3, 2.0, 0.25], "p_value": [0.000012, 0.5, 0.0]})
    assert _cells(reporting.reading_table(df).html) == [["12.3", "0.333", "1.2e-05"], ["4.0", "2.000", "0.500"],
                                                        ["0.5", "0.250", "0.000"]]
    assert _cells(reporting.reading_table(df, digits=1).html)[0] == ["12.3", "0.3", "1.2e-05"]


def test_no_row_numbers_but_a_named_index_is_a_column():
    df = pd.DataFrame({"r1": [10.0, 20.5]}, index=[7, 8])
    assert _cells(reporting.reading_table(df, digits=2).html) == [["10.00"], ["20.50"]]     # no 7, 8: row numbers
    plain = pd.DataFrame({"r1": [10.5, 20.5]})
    assert _cells(reporting.reading_table(plain, digits=2).html) == [["10.50"], ["20.50"]]
    labelled = pd.DataFrame({"atom": [3], "swap": [4]}, index=["examples"])     # a transposed count: its label kept
    assert _headers(reporting.reading_table(labelled).html) == ["", "HN-Atom", "HN-Swap"]
    assert _cells(reporting.reading_table(labelled).html) == [["examples", "3", "4"]]
    wide = pd.DataFrame({"split": ["SC", "UC"], "model": ["m", "m"], "r1": [50.5, 40.25]}).pivot_table(
        index="model", columns="split", values="r1")
    table = reporting.reading_table(wide, digits=1)
    assert _headers(table.html) == ["model", "SC", "UC"]
    assert _cells(table.html) == [["m", "50.5", "40.2"]]          # 40.25 rounds half to even at one decimal


def test_data_text_is_escaped_for_html_and_markdown():
    df = pd.DataFrame({"caption": ["<script>alert(1)</script>", "a | b & *c*"], "n": [1, 2]})
    table = reporting.reading_table(df, caption="first <b>pairs</b>")
    assert "<script>" not in table.html and "&lt;script&gt;alert(1)&lt;/script&gt;" in table.html
    assert "a | b &amp; *c*" in table.html
    assert "<caption>first &lt;b&gt;pairs&lt;/b&gt;</caption>" in table.html
    assert "<script>" not in table.markdown and "a \\| b" in table.markdown
    header_attack = reporting.reading_table(pd.DataFrame({"<img src=x>": [1]}))
    assert "<img" not in header_attack.html


def test_a_notebook_shows_it_as_html(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    reporting.show_table(pd.DataFrame({"n_queries": [3.0]}))
    assert shown and shown[0]._repr_html_().startswith('<table class="reading">')


def test_in_a_kernel_every_displayed_dataframe_is_a_reading_table(monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    monkeypatch.setattr(reporting, "in_notebook_kernel", lambda: True)
    monkeypatch.setattr("IPython.get_ipython", lambda: shell)
    html_formatter = shell.display_formatter.formatters["text/html"]
    plain_formatter = shell.display_formatter.formatters["text/plain"]
    before = (html_formatter.type_printers.get(pd.DataFrame), plain_formatter.type_printers.get(pd.DataFrame))
    try:
        assert reporting.use_reading_tables()
        data, _ = shell.display_formatter.format(pd.DataFrame({"n_queries": [676.0, np.nan]}))
        assert data["text/html"].startswith('<table class="reading">') and ">676<" in data["text/html"]
        assert "676.0" not in data["text/plain"] and "NaN" not in data["text/plain"] and "| queries |" in data["text/plain"]
    finally:
        for formatter, printer in zip((html_formatter, plain_formatter), before):
            formatter.type_printers.pop(pd.DataFrame, None)
            if printer is not None:
                formatter.type_printers[pd.DataFrame] = printer
    monkeypatch.setattr(reporting, "in_notebook_kernel", lambda: False)
    assert not reporting.use_reading_tables()                   # a script's tables are left as they are
