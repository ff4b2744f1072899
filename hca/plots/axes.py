"""Shared helpers of every figure function: axes, heatmap cell texts and benchmark labels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from hca.data.registry import benchmark_label  # noqa: F401  (part of hca.plots' API)

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["annotate_cells", "benchmark_label", "get_axes", "get_axes_grid"]


def get_axes(ax: Axes | None = None, figsize: tuple[float, float] | None = None) -> Axes:
    """``ax``, or the axes of a new figure of size ``figsize`` (matplotlib's default if None).

    Every figure function of :mod:`hca.plots` takes ``ax=None`` and goes through this helper;
    pyplot is imported only when a figure is made.
    """
    if ax is not None:
        return ax
    # lazy: matplotlib loads only when drawing (no pyplot at import)
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


def get_axes_grid(
    axes: Any,
    nrows: int,
    ncols: int,
    figsize: tuple[float, float] | None = None,
    **subplots_kw: Any,
) -> np.ndarray:
    """``axes`` as a 2-D array, or the axes of a new ``nrows x ncols`` figure.

    ``subplots_kw`` (``sharex``, ``sharey``, ...) go to :func:`matplotlib.pyplot.subplots`.
    """
    if axes is not None:
        return np.asarray(axes)
    # lazy: matplotlib loads only when drawing (no pyplot at import)
    import matplotlib.pyplot as plt

    _, grid = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False, **subplots_kw)
    return grid


def annotate_cells(ax: Axes, texts: Any, dark: Any, **kwargs: Any) -> None:
    """Write ``texts[i][j]`` in the middle of every cell of a heatmap (none where it is None),
    white where ``dark[i][j]``, black elsewhere; ``kwargs`` go to :meth:`Axes.text`."""
    for i, row in enumerate(texts):
        for j, text in enumerate(row):
            if text is not None:
                color = "white" if dark[i][j] else "black"
                ax.text(j, i, text, ha="center", va="center", color=color, **kwargs)
