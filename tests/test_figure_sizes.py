"""Every committed figure is readable at column width: its smallest text, shown in the reading view's column
(crepe_utils.analysis.reporting: COLUMN_PX, MIN_SHOWN_PT), is at least 9 points.

The PNG gives the figure's pixel width and resolution; the SVG of the same figure (text kept as text) gives the
font sizes it draws with. The arithmetic is redone here from the rule's definition, not from the package's
function, and the package's function is checked against it.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from PIL import Image

from crepe_utils.analysis import reporting

FIGURES = Path(__file__).resolve().parent.parent / "figures"

#: Figures drawn before the rule and still to be redrawn within it, each with the notebook that draws it (empty:
#: every committed figure keeps the rule). A figure in this list that passes fails the test, so the list only
#: shrinks.
NOT_YET: dict[str, str] = {}


def _png(stem: str) -> tuple[int, float]:
    with Image.open(FIGURES / f"{stem}.png") as img:
        return img.size[0], float(img.info["dpi"][0])


def _smallest_font_pt(stem: str) -> float:
    """The smallest font size the SVG draws text with (matplotlib writes points as SVG user units, 'px')."""
    svg = (FIGURES / f"{stem}.svg").read_text(encoding="utf-8")
    sizes = [float(x) for x in re.findall(r"font(?:-size)?:\s*(?:[a-z-]+\s+)*([\d.]+)px", svg)]
    assert sizes, f"{stem}.svg has no text with a font size"
    return min(sizes)


def _shown_pt(font_pt: float, pixels: int, dpi: float) -> float:
    """Independent of the package: text of font_pt is font_pt/72 inches, i.e. font_pt*dpi/72 PNG pixels; the page
    shows the PNG at its pixel size, or scaled down to the column; 1 CSS px = 0.75 pt."""
    css_px = font_pt * dpi / 72 * (reporting.COLUMN_PX / pixels if pixels > reporting.COLUMN_PX else 1.0)
    return css_px * 0.75


STEMS = sorted(p.stem for p in FIGURES.glob("*.png") if (FIGURES / f"{p.stem}.svg").is_file())


def test_the_rule_in_numbers():
    assert reporting.COLUMN_PX == 750 and reporting.MIN_SHOWN_PT == 9.0
    # 9-point text in a figure 750 px wide is shown unshrunk: 9 * 150 / 72 = 18.75 px = 14.06 pt
    assert reporting.shown_pt(9, 5.0, 150) == pytest.approx(14.0625)
    # a 15-inch figure is shrunk to 750/2250 of its size: 8-point text shows at 8 * 750 / (96 * 15) = 4.17 pt
    assert reporting.shown_pt(8, 15.0, 150) == pytest.approx(8 * 750 / (96 * 15))
    assert reporting.max_width_in(9) == pytest.approx(9 * 750 / (96 * 9))
    assert reporting.shown_pt(9, reporting.max_width_in(9), 150) == pytest.approx(9.0)


@pytest.mark.parametrize("stem", STEMS)
def test_a_committed_figure_is_readable_at_column_width(stem):
    pixels, dpi = _png(stem)
    font = _smallest_font_pt(stem)
    shown = _shown_pt(font, pixels, dpi)
    assert reporting.shown_pt(font, pixels / dpi, dpi) == pytest.approx(shown)
    if stem in NOT_YET:
        assert shown < reporting.MIN_SHOWN_PT, f"{stem} now passes: remove it from NOT_YET"
        pytest.xfail(f"{stem} ({NOT_YET[stem]}): smallest text {font:g} pt in {pixels} px at {dpi:.0f} dpi shows "
                     f"at {shown:.1f} pt")
    assert shown >= reporting.MIN_SHOWN_PT, (
        f"{stem}: its smallest text, {font:g} pt, in a figure {pixels} px wide at {dpi:.0f} dpi shows at "
        f"{shown:.1f} pt in a {reporting.COLUMN_PX}-px column (at least {reporting.MIN_SHOWN_PT:g}); it may be at "
        f"most {reporting.max_width_in(font):.2f} inches wide")


@pytest.mark.parametrize("n, shape, kept", [(1, (1, 1), 1), (2, (1, 2), 2), (3, (2, 2), 3), (5, (3, 2), 5)])
def test_panel_grid_leaves_no_empty_frame(n, shape, kept):
    """n panels in two columns: the grid's shape, its height from the row count, and only n axes left drawn (an
    empty cell that were only hidden would still be an axes of the figure)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = reporting.panel_grid(n, 7.0, 2.0, 0.5, sharey=True)
    try:
        assert axes.shape == shape
        assert len(fig.axes) == kept
        assert all(ax in fig.axes for ax in axes.flat[:n]) and not any(ax in fig.axes for ax in axes.flat[n:])
        assert tuple(fig.get_size_inches()) == pytest.approx((7.0, 2.0 * shape[0] + 0.5))
    finally:
        plt.close(fig)
