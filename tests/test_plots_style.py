"""hca.plots.style: the book's figure style and its px/pt arithmetic."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from hca.plots import style  # noqa: E402


def test_px_per_pt_one_to_one_up_to_the_column_width():
    # 96 CSS px per inch, 72 pt per inch: 4/3 px per pt while the figure fits the column
    assert style.px_per_pt(4.0) == pytest.approx(4 / 3)
    assert style.px_per_pt(style.COLUMN_PX / 96) == pytest.approx(4 / 3)
    # a 16 in figure is shrunk to 768 px: 768 / (16 * 72) px per pt
    assert style.px_per_pt(16.0) == pytest.approx(768 / 1152)


def test_min_font_pt():
    assert style.min_font_pt(8.0) == pytest.approx(6.75)
    assert style.min_font_pt(16.0) == pytest.approx(13.5)
    with pytest.raises(ValueError, match="fig_width_in must be positive"):
        style.min_font_pt(0)


def test_book_rc_text_is_legible_at_the_default_size():
    width_in = style.BOOK_RC["figure.figsize"][0]
    assert width_in * 96 == pytest.approx(style.COLUMN_PX)
    sizes = [v for k, v in style.BOOK_RC.items() if k.endswith("size") and k != "figure.figsize"]
    assert min(sizes) * style.px_per_pt(width_in) >= style.MIN_TEXT_PX


def test_use_book_style_sets_svg_text_and_returns_none():
    with matplotlib.rc_context():
        assert style.use_book_style() is None  # ends a setup cell without output
        assert matplotlib.rcParams["svg.fonttype"] == "none"
        assert matplotlib.rcParams["xtick.labelsize"] == 9


def test_smallest_text_px_accounts_for_wide_figures():
    with matplotlib.rc_context(style.BOOK_RC):
        fig, ax = plt.subplots(figsize=(8, 4))
        ax.set_title("title")
        narrow = style.smallest_text_px(fig)
        fig.set_size_inches(20, 4)
        wide = style.smallest_text_px(fig)
        plt.close(fig)
    assert narrow >= 9 * 4 / 3 - 0.5    # 9 pt tick labels, shown 1:1
    assert wide < style.MIN_TEXT_PX     # the same fonts shrunk to the column: too small
