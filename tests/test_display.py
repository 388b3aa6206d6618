"""What a reader sees: saved figures shown inline in a notebook kernel, progress bars that suit their output."""
from __future__ import annotations

import io
import time
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from tqdm import tqdm  # noqa: E402

from crepe_utils import progress
from crepe_utils.analysis import reporting  # noqa: E402


@pytest.fixture
def shown(monkeypatch):
    """What IPython.display.display received."""
    import IPython.display
    received = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: received.extend(objs))
    return received


def _figure(title="Recall@1 by complexity"):
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, 1], [1, 0])
    ax.set_title(title)
    return fig


def test_in_a_kernel_the_saved_png_is_displayed_byte_for_byte_and_the_figure_closed(tmp_path, shown, monkeypatch):
    monkeypatch.setattr(reporting, "in_notebook_kernel", lambda: True)
    fig = _figure()
    paths = reporting.save_figure(fig, "curve", tmp_path)
    assert [p.name for p in paths] == ["curve.png", "curve.svg"]
    assert len(shown) == 1
    image = shown[0]
    assert image.format == "png" and image.data == (tmp_path / "curve.png").read_bytes()
    assert image.metadata["figure"] == "curve" and image.metadata["alt"] == "Recall@1 by complexity"
    assert not plt.fignum_exists(fig.number)          # no second rendering by an inline backend


def test_a_figures_caption_and_source_travel_with_its_output_for_the_book(tmp_path, shown):
    reporting.save_figure(_figure(), "curve", tmp_path, show=True, caption="What it shows",
                          source="From the released CSVs")
    assert {k: shown[0].metadata[k] for k in ("figure", "alt", "caption", "source")} == {
        "figure": "curve", "alt": "Recall@1 by complexity", "caption": "What it shows",
        "source": "From the released CSVs"}
    shown.clear()
    reporting.save_figure(_figure(), "plain", tmp_path, show=True)           # none given: none written
    assert "caption" not in shown[0].metadata and "source" not in shown[0].metadata


def test_a_cited_figure_gives_its_own_source_unless_its_caller_names_one(tmp_path, shown):
    reporting.save_figure(reporting.cite(_figure(), "CREPE app. B.1, transcribed in `a/b.csv`"), "cited", tmp_path,
                          show=True)
    assert shown[0].metadata["source"] == "CREPE app. B.1, transcribed in a/b.csv"       # plain text, one line
    shown.clear()
    reporting.save_figure(reporting.cite(_figure(), "the figure's"), "both", tmp_path, show=True, source="the call's")
    assert shown[0].metadata["source"] == "the call's"


def test_another_runs_figure_is_captioned_by_its_note_without_emphasis(tmp_path, shown):
    reporting.save_figure(_figure(), "toy_curve", tmp_path, show=False)
    assert reporting.show_example(tmp_path, "toy_curve", "_Full curves as the toy world's run draws them:_")
    image = shown[-1]
    assert image.metadata["caption"] == image.metadata["alt"] == "Full curves as the toy world's run draws them"


def test_svg_only_figures_display_the_svg(tmp_path, shown):
    fig = _figure()
    reporting.save_figure(fig, "curve", tmp_path, formats=("svg",), show=True)
    written = (tmp_path / "curve.svg").read_text(encoding="utf-8")
    assert len(shown) == 1 and shown[0].data.startswith("<svg")      # IPython keeps the <svg> element only
    view_box = written.split('viewBox="', 1)[1].split('"', 1)[0]
    assert f'viewBox="{view_box}"' in shown[0].data


def test_outside_a_kernel_nothing_is_displayed_and_the_figure_stays_open(tmp_path, shown):
    fig = _figure()
    reporting.save_figure(fig, "curve", tmp_path)
    assert shown == [] and plt.fignum_exists(fig.number)
    plt.close(fig)


def _updates(stream: io.StringIO) -> int:
    return stream.getvalue().count("\r")


def _run_bar(bar, seconds: float = 0.6) -> None:
    end = time.perf_counter() + seconds
    with bar:
        while time.perf_counter() < end:
            bar.update(1)
            bar.set_postfix(loss=f"{end - time.perf_counter():.3f}")     # as the toy world's training does
            time.sleep(0.002)


def test_a_bar_written_to_a_log_updates_rarely():
    stream = io.StringIO()                 # not a terminal
    _run_bar(progress.tqdm(total=None, file=stream, desc="encode"))
    plain = io.StringIO()
    _run_bar(tqdm(total=None, file=plain, desc="encode"))
    assert _updates(plain) >= 4            # tqdm's own bar: ten updates a second
    assert _updates(stream) <= 2           # ours: the first and the last
    assert "encode" in stream.getvalue()


def test_a_bar_on_a_terminal_is_tqdms_own():
    class Terminal(io.StringIO):
        def isatty(self):
            return True
    stream = Terminal()
    _run_bar(progress.tqdm(total=None, file=stream))
    assert _updates(stream) >= 4


def test_in_a_kernel_without_widgets_a_bar_is_quiet_and_does_not_warn(monkeypatch):
    monkeypatch.setattr(progress, "in_notebook_kernel", lambda: True)
    monkeypatch.setattr(progress, "has_widgets", lambda: False)
    stream = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bar = progress.tqdm(range(100), file=stream)
        assert sum(1 for _ in bar) == 100  # still iterates
    assert stream.getvalue() == ""
