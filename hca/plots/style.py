"""The book's figure style: SVG figures whose text stays legible at the page's width.

Every notebook calls :func:`use_book_style` once in its setup cell. It makes inline figures
SVG (text kept as ``<text>``, so it can be searched, measured and copied) and sets matplotlib's
defaults so that every text element is at least :data:`MIN_TEXT_PX` CSS pixels high when the
figure is shown in the book's text column.

The arithmetic. At a 1400 px wide browser window the book's text column shows a figure at most
:data:`COLUMN_PX` = 768 CSS px wide (measured in Chromium with the book's theme). A matplotlib
SVG of width ``w`` inches is ``72 w`` pt wide, i.e. ``96 w`` CSS px; the browser shows it at
``min(96 w, COLUMN_PX)`` px, so one point of text becomes

    px per pt = min(96 w, COLUMN_PX) / (72 w)

CSS pixels: 4/3 while ``w <= COLUMN_PX / 96 = 8`` in, less for wider figures. The defaults below
(figure width 8 in, smallest font 9 pt) give 12 px text; a wider figure needs larger fonts,
``min_font_pt(w)`` says how large (``w`` is the width of the saved figure, after
``bbox_inches="tight"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "BOOK_RC",
    "COLUMN_PX",
    "MIN_TEXT_PX",
    "min_font_pt",
    "px_per_pt",
    "smallest_text_px",
    "use_book_style",
]

#: Widest a figure is shown in the text column at a 1400 px viewport (CSS px).
COLUMN_PX: float = 768.0
#: Smallest legible text at that width (CSS px), checked by the browser tests.
MIN_TEXT_PX: float = 9.0
#: CSS px per inch and points per inch.
_PX_PER_IN = 96.0
_PT_PER_IN = 72.0

#: matplotlib settings of the book (applied by :func:`use_book_style`).
BOOK_RC: dict[str, Any] = {
    # one column wide: shown at 1:1, 4/3 px per pt
    "figure.figsize": (COLUMN_PX / _PX_PER_IN, 0.6 * COLUMN_PX / _PX_PER_IN),
    "savefig.dpi": 200,  # resolution of raster parts (imshow) embedded in an SVG
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "figure.titlesize": 12,
    # text stays text in the SVG; ids are deterministic so rebuilt figures are byte-identical
    "svg.fonttype": "none",
    "svg.hashsalt": "hca-book",
}


def px_per_pt(fig_width_in: float, column_px: float = COLUMN_PX) -> float:
    """CSS px per typographic point for a figure ``fig_width_in`` inches wide in the column.

    Parameters
    ----------
    fig_width_in : float
        Width of the saved figure in inches (after ``bbox_inches="tight"``).
    column_px : float, default COLUMN_PX
        Widest the page shows a figure, in CSS px.

    Returns
    -------
    float
        ``min(96 w, column_px) / (72 w)``.
    """
    if not fig_width_in > 0:
        raise ValueError(f"fig_width_in must be positive, got {fig_width_in!r}")
    shown_px = min(_PX_PER_IN * fig_width_in, column_px)
    return shown_px / (_PT_PER_IN * fig_width_in)


def min_font_pt(
    fig_width_in: float, min_px: float = MIN_TEXT_PX, column_px: float = COLUMN_PX
) -> float:
    """Smallest font size (pt) that is still ``min_px`` CSS px high in the column.

    Parameters
    ----------
    fig_width_in : float
        Width of the saved figure in inches.
    min_px : float, default MIN_TEXT_PX
        Smallest legible text height in CSS px.
    column_px : float, default COLUMN_PX
        Widest the page shows a figure, in CSS px.

    Returns
    -------
    float
        ``min_px / px_per_pt(fig_width_in)``; e.g. 6.75 pt up to 8 in, 9 pt at 10.7 in.
    """
    return min_px / px_per_pt(fig_width_in, column_px)


def smallest_text_px(fig: Any, column_px: float = COLUMN_PX) -> float:
    """Height in CSS px of the smallest visible text of ``fig`` when shown in the column.

    Uses the figure's tight bounding box (as the inline backend saves it); ``inf`` when the
    figure has no text. The browser tests measure the built page; this is the quick check to
    run while drawing a figure.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    column_px : float, default COLUMN_PX

    Returns
    -------
    float
    """
    # lazy: matplotlib loads only when drawing (no pyplot at import)
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    width_in = fig.get_tightbbox(renderer).width
    sizes = [
        t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
    ]
    if not sizes:
        return float("inf")
    return min(sizes) * px_per_pt(width_in, column_px)


def use_book_style() -> None:
    """Apply the book's figure style; call once in a notebook's setup cell.

    Sets :data:`BOOK_RC` in ``matplotlib.rcParams`` and, inside IPython/Jupyter, makes the
    inline backend emit SVG only (no PNG) without a creation date, so rebuilt figures are
    byte-identical, and shows every DataFrame as a numbered, captioned book table
    (:mod:`hca.plots.tables`). Outside IPython only the rcParams change. Returns None, so that it can
    end a setup cell without printing anything.
    """
    # lazy: matplotlib loads only when drawing (no pyplot at import)
    import matplotlib

    matplotlib.rcParams.update(BOOK_RC)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is only needed inside notebooks
        return
    if get_ipython() is not None:
        # lazy: matplotlib loads only when drawing (no pyplot at import)
        import matplotlib.pyplot  # activates the inline backend before configuring it
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("svg", metadata={"Date": None}, dpi=BOOK_RC["savefig.dpi"])
        # The inline backend renders every new figure as SVG after its cell; pyplot's own
        # hook would first draw it once more with Agg, a raster nobody sees (a third of a
        # page's figure time).
        matplotlib.pyplot.uninstall_repl_displayhook()
        from hca.plots.tables import register_formatter

        register_formatter(get_ipython())
        _register_svg_with_data(get_ipython())


def figure_data(fig: Any) -> pd.DataFrame:
    """The data drawn in ``fig``, one row per point, bar or image cell (the book's "Data (CSV)"
    download beside each figure).

    Columns: ``panel`` (1-based axes number), ``panel_title``, ``series`` (the artist's label),
    ``kind`` (``line``, ``points``, ``bar``, ``cell``), ``x``, ``y`` (data coordinates; for a
    bar its centre and height, for an image cell its column and row), ``x_label``,
    ``y_label`` (the tick label at that position on a categorical axis) and ``value`` (an
    image cell's value).
    """
    # lazy: matplotlib loads only when drawing (no pyplot at import)
    from matplotlib.collections import PathCollection
    from matplotlib.container import BarContainer
    from matplotlib.image import AxesImage

    rows: list[dict] = []

    def ticks(axis: Any) -> dict:
        """Tick position -> its label, for a categorical axis (labels that are not numbers)."""
        out = {}
        for loc, lab in zip(axis.get_ticklocs(), axis.get_ticklabels()):
            text = lab.get_text().replace("\u2212", "-").strip()
            try:
                float(text.rstrip("%"))
            except ValueError:
                if text:
                    out[round(float(loc), 9)] = text
        return out

    def add(panel, artist, kind, xs, ys, values=None) -> None:
        label = str(artist.get_label()) if artist is not None else "image"
        values = [None] * len(xs) if values is None else values
        for x, y, v in zip(xs, ys, values):
            rows.append(
                {
                    "panel": panel,
                    "panel_title": title,
                    "series": "" if label.startswith("_") else label,
                    "kind": kind,
                    "x": x,
                    "y": y,
                    "x_label": xlab.get(round(float(x), 9), "") if xlab else "",
                    "y_label": ylab.get(round(float(y), 9), "") if ylab else "",
                    "value": v,
                }
            )

    for k, ax in enumerate(fig.get_axes(), start=1):
        title = ax.get_title() or ax.get_title(loc="left")
        xlab, ylab = ticks(ax.xaxis), ticks(ax.yaxis)
        for line in ax.get_lines():
            xs, ys = line.get_xdata(orig=True), line.get_ydata(orig=True)
            try:
                xs, ys = np.asarray(xs, float), np.asarray(ys, float)
            except (TypeError, ValueError):
                continue
            if xs.ndim == 0 or len(xs) != len(ys):
                continue
            add(k, line, "line", xs, ys)
        for coll in ax.collections:
            if isinstance(coll, PathCollection):
                off = np.asarray(coll.get_offsets(), float)
                if off.ndim == 2 and len(off):
                    add(k, coll, "points", off[:, 0], off[:, 1])
        for cont in ax.containers:
            if isinstance(cont, BarContainer):
                xs = [p.get_x() + p.get_width() / 2 for p in cont.patches]
                ys = [p.get_height() for p in cont.patches]
                if cont.orientation == "horizontal":
                    xs = [p.get_width() for p in cont.patches]
                    ys = [p.get_y() + p.get_height() / 2 for p in cont.patches]
                add(k, cont, "bar", xs, ys)
        for im in ax.get_images():
            if isinstance(im, AxesImage):
                arr = np.ma.filled(np.ma.asarray(im.get_array(), dtype=float), np.nan)
                if arr.ndim == 2:
                    i, j = np.indices(arr.shape)
                    add(k, None, "cell", j.ravel(), i.ravel(), arr.ravel())
    return pd.DataFrame(
        rows,
        columns=["panel", "panel_title", "series", "kind", "x", "y", "x_label", "y_label", "value"],
    )


#: Marks the figure's data (CSV) inside its SVG; book/_ext/hca_book/figures.py writes it out.
DATA_MARK = "hca-figure-data"


def svg_with_data(fig: Any, svg: str) -> str:
    """``svg`` with :func:`figure_data` of ``fig`` as CSV in a ``<metadata>`` element."""
    try:
        csv = figure_data(fig).to_csv(index=False)
    except Exception:  # noqa: BLE001 - a figure without extractable data gets no CSV
        return svg
    if "]]>" in csv or not csv.strip():
        return svg
    block = f'<metadata id="{DATA_MARK}"><![CDATA[\n{csv}]]></metadata>\n'
    end = svg.rfind("</svg>")
    return svg if end < 0 else svg[:end] + block + svg[end:]


def _register_svg_with_data(ip: Any) -> None:
    # lazy: matplotlib loads only when drawing (no pyplot at import)
    from matplotlib.figure import Figure

    formatter = ip.display_formatter.formatters["image/svg+xml"]
    base = formatter.lookup_by_type(Figure)
    if getattr(base, "_hca_with_data", False):  # use_book_style() called twice
        return

    def _svg(fig: Any) -> str | None:
        svg = base(fig)
        if svg is None:
            return None
        if isinstance(svg, bytes):
            svg = svg.decode("utf-8")
        return svg_with_data(fig, svg)

    setattr(_svg, "_hca_with_data", True)  # noqa: B010 - marks the wrapper (called twice)
    formatter.for_type(Figure, _svg)
