"""Figures of the MMLU-by-subject analysis (Appendix H.5).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from hca.data.registry import benchmark_label
from hca.interpret import cluster_order
from hca.plots.axes import get_axes

__all__ = [
    "plot_clustered_correlation",
]


def plot_clustered_correlation(corr: pd.DataFrame, order: Sequence | None = None, ax: Axes | None = None,
                               vmin: float | None = None, annotate: bool = False,
                               labels: dict | None = None) -> Axes:
    """Heat map of a correlation matrix with rows and columns in clustering order.

    Parameters
    ----------
    corr : DataFrame
        Correlation matrix.
    order : sequence, optional
        Label order; default :func:`hca.interpret.cluster_order`.
    ax : matplotlib Axes, optional
    vmin : float, optional
        Lower end of the colour scale (default: the smallest correlation).
    annotate : bool, default=False
        Write the values in the cells (for small matrices).
    labels : dict, optional
        Display names; default :func:`hca.data.benchmark_label`.

    Returns
    -------
    matplotlib Axes
    """
    order = cluster_order(corr) if order is None else list(order)
    mat = corr.loc[order, order]
    ax = get_axes(ax)
    lo = float(np.nanmin(mat.to_numpy())) if vmin is None else vmin
    im = ax.imshow(mat.to_numpy(), cmap="viridis", vmin=lo, vmax=1.0)
    names = [(labels or {}).get(c, benchmark_label(c)) for c in order]
    ax.set_xticks(range(len(order)), names, rotation=90)
    ax.set_yticks(range(len(order)), names)
    if annotate:
        for i in range(len(order)):
            for j in range(len(order)):
                ax.text(j, i, f"{mat.iat[i, j]:.2f}", ha="center", va="center",
                        color="white" if mat.iat[i, j] < (lo + 1) / 2 else "black")
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="Pearson correlation")
    return ax
