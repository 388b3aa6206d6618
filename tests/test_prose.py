"""A sentence is a claim: the static prose of every executed notebook states no number and no direction that its
own outputs or a cited published table do not hold.

The rules, applied to the Markdown cells of each executed notebook (its *static* prose; what a code cell
displays is *generated* and is the place for numbers and directions):

1. **Numbers.** Every number in static prose (digits, or a number word from "two" up) must be printed, with the
   same value, in that notebook's outputs (any text, table, Markdown or figure title a cell displays), or be a
   value of a published table (``crepe_utils/reported/*.csv``) in a sentence that cites its source (§, app.,
   Table, tab., abstract, et al., "paper", "published", "printed"). Not numbers: identifiers (ViT-B-32,
   CC-12M, Recall@1, top-1, 1/N), references (§5.1, app. B.1, Table 3, notebook 07, arXiv ids, venue years),
   inline code and link targets, and a heading's own section number.
2. **Directions.** Words that assert a result's direction or reach (gains, falls, drops, rises, loses, beats,
   exceeds, higher, lower, above, below, better, worse, best, every, all, most, none, never, always, several,
   many, reversed, ...) may not appear in static prose, except: inside a quotation in a sentence that cites its
   source (the paper's claim, which the notebook then checks); in a question; and in the few fixed phrases of
   :data:`ALLOWED_PHRASES` (names and layout words, each with its reason). Everything else is generated from
   the values (:mod:`crepe_utils.analysis.prose`).
3. **Paths.** No output holds an absolute path of the machine that ran it.

The checker itself is tested on small synthetic notebooks (a planted wrong number must fail). The executed
notebooks are checked where ``make all`` left them: ``build/`` (and ``build/toy/``), and ``build/nodata/``
(``make prose-check`` runs every notebook a second time with an empty data folder there, then this file with
``PROSE_REQUIRE=1``, which turns a missing or stale executed notebook from a skip into a failure). Without
executed notebooks those tests skip.
"""
from __future__ import annotations

import csv
import html
import os
import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path

import nbformat
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: Every folder of published numbers: each benchmark's ``reported/`` and the field's.
REPORTED = sorted(ROOT.glob("crepe_utils/**/reported"))

#: Notebooks known to fail a rule, (notebook stem, rule) → reason, marked xfail (non-strict: once fixed they pass
#: and the entry should go). None today: every notebook passes every rule, with the data and without.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}

# ------------------------------------------------------------------ the checker

_ABBREVIATIONS = ("app.", "tab.", "e.g.", "i.e.", "et al.", "Fig.", "fig.", "eq.", "vs.", "cf.", "no.", "tabs.")
_CITATION = re.compile(r"§|\bapp\.|\bappendix\b|\btables?\s+\d|\btab\.|\babstract\b|\bet al\.|\bpapers?\b|"
                       r"\bpublished\b|\bprinted\b", re.I)
#: References that carry numbers which are not values: section, appendix, table, figure, equation, notebook
#: numbers, arXiv ids and venue years.
_REFERENCE = re.compile(
    r"(?:§|\bapp\.|\bappendix|\btables?|\btab\.|\bfig\.|\bfigures?|\beq\.|\bsections?|\bnotebooks?|\barXiv|"
    r"\b(?:CVPR|ICCV|ECCV|NeurIPS|ICML|ICLR|ACL|EMNLP|NAACL|TACL|TMLR)|\bet al\.,?)\s*"
    r"[A-Z]?\d[\d.]*(?:\s*(?:,|and|or|–|-|to)\s*§?[A-Z]?\d[\d.]*)*", re.I)
_NUMBER = re.compile(r"(?<![\w@#.§\\])(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?P<frac>\.\d+)?(?![\w@]|\.\d)")
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split()) if w != "_"}
_NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "hundred": 100, "thousand": 1000})
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.I)
DIRECTION_WORDS = re.compile(
    r"\b(gain(?:s|ed|ing)?|fall(?:s|en|ing)?|fell|drop(?:s|ped|ping)?|ris(?:e|es|en|ing)|rose|"
    r"increas(?:e|es|ed|ing)|decreas(?:e|es|ed|ing)|declin(?:e|es|ed|ing)|improv(?:e|es|ed|ing)|"
    r"los(?:e|es|ing)|lost|beat(?:s|en|ing)?|exceed(?:s|ed|ing)?|outperform(?:s|ed|ing)?|surpass(?:es|ed|ing)?|"
    r"higher|lower|above|below|better|worse|best|worst|every|all|most|none|never|always|several|many|"
    r"majority|unanimous(?:ly)?|reversed?)\b", re.I)
#: Fixed phrases in which a direction word names a thing or a place on the page, not a result (each: why).
ALLOWED_PHRASES = {
    r"\ball[- ]negatives\b": "the name of CREPE's 16-candidate productivity set (app. B.3)",
    r"\b(?:lower|upper)[- ]cas(?:e|es|ed|ing)\b": "letter case, what a tokenizer does to text",
    r"\b(?:lower|upper) (?:95% )?(?:bound|end)\b": "an interval's ends",
    r"\bstrictly (?:higher|greater|lower)\b": "a scoring rule's strict inequality, a definition",
    r"\b(?:table|tables|figure|figures|cell|cells|section|sections|check|checks|panel|panels|list|code|"
    r"sentence|paragraph|line)s? (?:above|below)\b": "where on the page",
    r"\b(?:above|below)(?=[:.,)]|\s*$)": "where on the page (the text above, shown below)",
    r"\b(?:shown|listed|drawn|see|as) (?:above|below)\b": "where on the page",
}
_ALLOWED = re.compile("|".join(f"(?:{p})" for p in ALLOWED_PHRASES), re.I | re.M)
_ABSOLUTE_PATH = re.compile(r"(?:^|[\s`'\"(\[=,:])(/(?:[\w.+-]+/)+[\w.+-]*)", re.M)


def _plain(markdown: str) -> str:
    """Markdown without what is not prose: code, link targets, HTML tags, a heading's section number."""
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"^(#+\s*)\d+\s*·", r"\1", text, flags=re.M)
    return text.replace("**", "").replace("\u00a0", " ")


def sentences(markdown: str) -> list[str]:
    """The sentences of static Markdown (paragraphs, list items, then full stops not ending an abbreviation)."""
    text = _plain(markdown)
    for i, abbr in enumerate(_ABBREVIATIONS):
        text = text.replace(abbr, f"\x00{i}\x00")
    out = []
    for block in re.split(r"\n\s*\n|\n\s*[*-]\s+|\n#+\s*", text):
        for s in re.split(r"(?<=[.!?:])\s+(?=[A-Z*_(\"“§])", " ".join(block.split())):
            for i, abbr in enumerate(_ABBREVIATIONS):
                s = s.replace(f"\x00{i}\x00", abbr)
            if s.strip():
                out.append(s.strip())
    return out


def _value(token: str) -> Decimal | None:
    try:
        return abs(Decimal(token.replace(",", "").replace("−", "-")))
    except InvalidOperation:
        return None


#: A confidence level named with its interval ("exact 95% intervals", "95% percentile bootstrap interval"): a setting
#: of the method, not a value of the data.
_LEVEL = re.compile(r"\b95%(?=\s+(?:[\w-]+\s+){0,3}(?:intervals?|CIs?|confidence)\b)", re.I)


def numbers(text: str, words: bool = True) -> list[tuple[str, Decimal]]:
    """(as written, absolute value) of every number in ``text`` that is a value, not a reference, identifier or
    confidence level."""
    text = _LEVEL.sub(" ", _REFERENCE.sub(" ", text))
    found = []
    for m in _NUMBER.finditer(text):
        before = text[max(0, m.start() - 2):m.start()]
        if before[-1:] == "-" and before[:1].isalnum():       # top-1, ViT-B-32, x86-64: a name
            continue
        sign = before[-1:] if before[-1:] in "+−-" else ""
        token = sign + m.group("int") + (m.group("frac") or "")
        value = _value(token)
        if value is not None:
            found.append((token, value))
    if words:
        found += [(m.group(1), Decimal(_NUMBER_WORDS[m.group(1).lower()])) for m in _NUMBER_WORD.finditer(text)]
    return found


def output_text(nb) -> str:
    """Everything a reader sees that code produced: streams, text, Markdown, HTML (tags dropped), figure titles."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            parts.append(str(out.get("text", "")))
            data = out.get("data", {})
            for kind in ("text/plain", "text/markdown", "text/latex"):
                parts.append(str(data.get(kind, "")))
            parts.append(html.unescape(re.sub(r"<[^>]+>", " ", str(data.get("text/html", "")))))
            parts += [str(v.get("alt", "")) for v in out.get("metadata", {}).values() if isinstance(v, dict)]
            parts.append(str(out.get("metadata", {}).get("alt", "")))
    return "\n".join(parts)


@lru_cache(maxsize=None)
def published_values() -> frozenset[Decimal]:
    """Every number of the published tables (``crepe_utils/**/reported/*.csv``)."""
    values = set()
    for path in sorted(p for folder in REPORTED for p in folder.glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as fh:
            for row in csv.reader(fh):
                for cell in row:
                    values.update(v for _, v in numbers(cell, words=False))
    return frozenset(values)


def static_markdown(nb) -> list[str]:
    return [cell.source for cell in nb.cells if cell.cell_type == "markdown"]


def number_problems(nb) -> list[str]:
    """One line per number of the static prose that neither the outputs nor a cited published table hold."""
    shown = {v for _, v in numbers(output_text(nb), words=False)}
    problems = []
    for source in static_markdown(nb):
        for sentence in sentences(source):
            cited = bool(_CITATION.search(sentence))
            for token, value in numbers(sentence):
                if value in shown or (cited and value in published_values()):
                    continue
                why = ("a published value, but the sentence cites no source" if value in published_values()
                       else "in no output of this notebook and no published table")
                problems.append(f"{token!r} ({why}): {sentence}")
    return problems


def _quoted_spans(sentence: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"“[^”]*”|\"[^\"]*\"", sentence)]


def direction_problems(nb) -> list[str]:
    """One line per direction word of the static prose outside a cited quotation, a question or an allowed phrase."""
    problems = []
    for source in static_markdown(nb):
        for sentence in sentences(source):
            if sentence.rstrip("*_ )").endswith("?"):
                continue
            allowed = [m.span() for m in _ALLOWED.finditer(sentence)]
            if _CITATION.search(sentence):
                allowed += _quoted_spans(sentence)
            for m in DIRECTION_WORDS.finditer(sentence):
                if not any(a <= m.start() < b for a, b in allowed):
                    problems.append(f"{m.group(0)!r}: {sentence}")
    return problems


def path_problems(nb) -> list[str]:
    """One line per absolute path in a cell's output."""
    return sorted({f"{m.group(1)!r}" for m in _ABSOLUTE_PATH.finditer(output_text(nb))})


RULES = {"numbers": number_problems, "directions": direction_problems, "paths": path_problems}

#: README numbers that are not results: sizes, durations, core counts and the Python version.
_OPERATIONAL = re.compile(r"\d[\d.,]*\s*(?:GB|MB|kB|KB|minutes?|seconds?|hours?|-?cores?\b)|Python\s*≥\s*[\d.]+", re.I)


@lru_cache(maxsize=None)
def table_values(tables: Path = ROOT / "tables") -> frozenset[Decimal]:
    """Every number of the committed tables (their CSV at full precision and their Markdown as printed)."""
    values = set()
    for path in sorted(tables.glob("*.csv")) + sorted(tables.glob("*.md")):
        values.update(v for _, v in numbers(path.read_text(encoding="utf-8"), words=False))
    return frozenset(values)


def readme_problems(text: str, known: frozenset[Decimal]) -> list[str]:
    """Numbers of README's prose that no committed table and no published table holds (a stale README)."""
    text = _OPERATIONAL.sub(" ", re.sub(r"^\|.*\|$", " ", text, flags=re.M))      # tables: how-to, not results
    return [f"{token!r}: {sentence}" for sentence in sentences(text) for token, value in numbers(sentence)
            if value not in known]

# ------------------------------------------------------------------ the checker, tested


def _notebook(markdown: list[str], outputs: list[str]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(m) for m in markdown]
    code = nbformat.v4.new_code_cell("display(...)")
    code.outputs = [nbformat.v4.new_output("display_data", data={"text/markdown": o}) for o in outputs]
    nb.cells.append(code)
    return nb


def test_a_planted_wrong_number_fails_and_the_shown_one_passes():
    shown = ["| model | delta |\n|---|---:|\n| toy | −9.17 |\n| other | 12.57 |"]
    assert number_problems(_notebook(["The toy model loses 9.17 points."], shown)) == []
    problems = number_problems(_notebook(["The toy model loses 9.2 points."], shown))
    assert len(problems) == 1 and "'9.2'" in problems[0]
    assert number_problems(_notebook(["A gap of 12.570 points."], shown)) == []     # the same value
    assert number_problems(_notebook(["About 13 points."], shown))                   # rounded: not held


def test_numbers_that_are_references_or_identifiers_are_not_values():
    text = ("CREPE (Ma et al., CVPR 2023, arXiv 2212.07796) evaluates ViT-B-32 and CC-12M RN50 by Recall@1 "
            "and top-1 (§5.4, app. B.1, Table 1, tab. 3, notebooks 03 and 04), `n_boot=10000`, "
            "[a link](https://example.org/2023/07).")
    assert numbers(_plain(text)) == []
    assert [t for t, _ in numbers(_plain("# 2 · Systematicity at n = 4, 1/11 and −9.2"))] == ["4", "1", "11", "−9.2"]


def test_published_values_need_a_citation_and_number_words_count():
    published = sorted(published_values())
    assert Decimal("12.57") in published and Decimal("0.47") in published
    assert number_problems(_notebook(["The abstract's figure is 12.57 points."], [])) == []
    [problem] = number_problems(_notebook(["The drop is 12.57 points."], []))
    assert "cites no source" in problem
    [problem] = number_problems(_notebook(["Seventeen models are shown."], ["| 16 |"]))
    assert "'Seventeen'" in problem


def test_a_confidence_level_is_not_a_value_but_a_percentage_of_the_data_is():
    assert numbers("with exact 95% intervals; its 95% percentile bootstrap interval") == []
    assert [t for t, _ in numbers("HN-Neg reaches 95% on 1,262 queries")] == ["95", "1,262"]


def test_direction_words_only_in_generated_prose_cited_quotes_and_questions():
    assert direction_problems(_notebook([], ["Every model loses Recall@1."])) == []
    [problem] = direction_problems(_notebook(["Every model loses Recall@1 from SC to UC."], []))[:1]
    assert "'Every'" in problem
    assert len(direction_problems(_notebook(["HN-Swap falls for most models."], []))) == 2
    assert direction_problems(_notebook(['§5.2 reports that Recall@1 "falls with complexity".'], [])) == []
    assert direction_problems(_notebook(['A reader says "it falls".'], []))           # a quote without a source
    assert direction_problems(_notebook(["Does Recall@1 fall as captions grow?"], [])) == []
    assert direction_problems(_notebook(["The all-negatives set, in the table below, counts ties strictly "
                                         "higher; the tokenizer lower-cases."], [])) == []


def test_absolute_paths_in_outputs_are_found():
    assert path_problems(_notebook([], ["CREPE data: `$CREPE_DATA/crepe` (data/crepe)"])) == []
    assert path_problems(_notebook([], ["No CSVs in `/home/someone/data/crepe`."])) == ["'/home/someone/data/crepe'"]
    assert path_problems(_notebook([], ["1/N, HN-Atom/Swap and https://example.org/a/b"])) == []


def test_readme_numbers_come_from_the_tables():
    """README's result paragraphs quote the committed tables; a number none of them holds is stale or wrong. (Its
    direction words are not checked: README is static by nature; its results are read by hand against the
    notebooks.)"""
    assert readme_problems("It loses 15.17 points, on 2 cores in 3 minutes (6 GB).", frozenset({Decimal("15.17")})) == []
    assert readme_problems("It loses 15.2 points.", frozenset({Decimal("15.17")}))
    known = table_values() | published_values()
    problems = readme_problems((ROOT / "README.md").read_text(encoding="utf-8"), known)
    assert not problems, "README numbers that no table in tables/ or crepe_utils/reported holds:\n" + "\n".join(problems)


def test_readme_puts_the_toy_gap_beside_its_text_only_confound():
    """README's toy headline (UC − SC on HN-Atom) and, beside it, what scorers that never see an image do on the same
    splits: each number is the committed tables' row for that model, HN type and split."""
    readme = re.sub(r"\s+", " ", (ROOT / "README.md").read_text(encoding="utf-8"))
    gap = pd.read_csv(ROOT / "tables" / "toy_world_systematicity.csv").set_index("hn_type")
    blind = pd.read_csv(ROOT / "tables" / "toy_blind_systematicity.csv").set_index(["model", "hn_type", "split"])
    def r1(model: str, hn: str, split: str) -> str:
        return f"{blind.loc[(model, hn, split), 'r1']:.2f}%"
    clip = next(m for m in blind.index.get_level_values("model") if not m.startswith("blind:"))
    assert f"loses {-gap.loc['atom', 'delta']:.2f} points on HN-Atom" in readme
    assert (f"gets {r1('blind:bigram', 'atom', 'SC')} on seen and {r1('blind:bigram', 'atom', 'UC')} on unseen "
            "HN-Atom compounds") in readme
    assert (f"({r1('blind:length', 'comp', 'SC')} against {r1(clip, 'comp', 'SC')} on seen, "
            f"{r1('blind:length', 'comp', 'UC')} against {r1(clip, 'comp', 'UC')} on unseen compounds)") in readme
    for split in ("SC", "UC"):      # "beats the tiny CLIP on HN-Comp" holds on both splits
        assert blind.loc[("blind:length", "comp", split), "r1"] > blind.loc[(clip, "comp", split), "r1"]


def test_readme_counts_the_productivity_files_the_bigram_clears_as_the_check_does():
    """README's "above chance on all N productivity files, its 95% interval clear of chance on M of them" is the
    check's row: N its point estimates above chance, M its lower bounds above chance."""
    readme = re.sub(r"\s+", " ", (ROOT / "README.md").read_text(encoding="utf-8"))
    checks = pd.read_csv(ROOT / "tables" / "checks.csv").set_index("claim")
    row = checks.loc["The best cross-fitted blind scorer beats chance on every productivity file"]
    if row["status"] == "needs data":           # the checks table of a run without CREPE's files: nothing to bind
        pytest.skip(f"tables/checks.csv was made without CREPE's productivity files: {row['detail']}")
    above, files = map(int, re.fullmatch(r"(\d+) of (\d+) files", row["found"]).groups())
    clear = int(re.search(r"lower 95% bound above chance on (\d+) of \d+ files", row["detail"]).group(1))
    said = re.search(r"is above chance on (all|\d+ of) (\d+) productivity files, its 95% interval clear of chance on "
                     r"(\d+) of them", readme)
    assert said, "README no longer states the bigram's productivity count in the checked words"
    assert int(said.group(2)) == files and (said.group(1) == "all") == (above == files) and int(said.group(3)) == clear


def test_every_notebook_has_a_place_in_this_check():
    assert NOTEBOOKS, "no notebooks found"
    unknown = {stem for stem, _ in KNOWN_FAILURES} - {p.stem for p in NOTEBOOKS}
    assert not unknown, f"KNOWN_FAILURES names notebooks that do not exist: {sorted(unknown)}"

# ------------------------------------------------------------------ the executed notebooks

REQUIRE = os.environ.get("PROSE_REQUIRE") == "1"
BUILDS = [ROOT / b for b in os.environ.get("PROSE_BUILDS", "build build/nodata").split()]


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _executed_copies(source: Path) -> list[Path]:
    """Every executed copy of ``source`` in the build folders (``<build>/`` and ``<build>/toy/``)."""
    return [p for build in BUILDS for p in (build / source.name, build / "toy" / source.name) if p.is_file()]


def _stale(source: Path, executed: Path) -> bool:
    """Whether the executed copy's Markdown differs from the source's (an edit since the last ``make``)."""
    src = nbformat.read(source, as_version=4)
    ran = nbformat.read(executed, as_version=4)
    return static_markdown(src) != static_markdown(ran)


def _cases() -> list:
    cases = []
    for source in NOTEBOOKS:
        for rule in RULES:
            reason = KNOWN_FAILURES.get((source.stem, rule))
            marks = [pytest.mark.xfail(reason=reason, strict=False)] if reason else []
            cases.append(pytest.param(source, rule, id=f"{source.stem}-{rule}", marks=marks))
    return cases


@pytest.mark.parametrize("source, rule", _cases())
def test_executed_notebook_prose(source, rule):
    copies = _executed_copies(source)
    if not copies:
        message = f"{source.name}: no executed copy in {', '.join(_rel(b) for b in BUILDS)}"
        if REQUIRE and any(b.is_dir() for b in BUILDS):
            pytest.fail(message + " (is it in `make all`?)")
        pytest.skip(message + " (`make all` writes one)")
    problems = []
    for executed in copies:
        if _stale(source, executed):
            message = f"{_rel(executed)} is older than {_rel(source)}: run `make all`"
            if REQUIRE:
                pytest.fail(message)
            pytest.skip(message)
        nb = nbformat.read(executed, as_version=4)
        problems += [f"{_rel(executed)}: {p}" for p in RULES[rule](nb)]
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems)

