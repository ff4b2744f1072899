"""The figure of ``python -m hca fit --plot``: the unmixing matrix, the R^2 table behind the
one-to-one alignment and each domain's causal graph."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from hca.data.registry import benchmark_label
from hca.estimator.results import OLSAdjustment
from hca.plots.estimator import plot_causal_graph, plot_matrix
from hca.plots.style import BOOK_RC

__all__ = ["COMPACT_BENCHMARKS", "LABEL_SHARE", "draw_matrix", "plot_fit_report"]


#: ``--plot``: with more benchmarks than this the unmixing matrix is drawn benchmarks down
#: the page, without cell values, and only the benchmarks whose largest |weight| is at least
#: :data:`LABEL_SHARE` of the matrix's largest are named.
COMPACT_BENCHMARKS = 15
LABEL_SHARE = 0.25


def draw_matrix(
    ax,
    M: np.ndarray,
    benchmarks: list[str],
    title: str,
    outlined: list[int] | None = None,
    **kwargs,
) -> None:
    """Factors x benchmarks as a heatmap (benchmarks down the page, without cell values and
    with only the heavily weighted ones named, beyond :data:`COMPACT_BENCHMARKS`); the cell
    of every factor's one-to-one benchmark outlined."""
    d, p = M.shape
    names = [benchmark_label(b) for b in benchmarks]
    factors = [f"z{i + 1}" for i in range(d)]
    if p <= COMPACT_BENCHMARKS:
        plot_matrix(M, factors, names, ax, title=title, **kwargs)
        cells = [(j, i) for i, j in enumerate(outlined or [])]
    else:
        keep = np.max(np.abs(M), axis=0) >= LABEL_SHARE * np.max(np.abs(M))
        keep[list(outlined or [])] = True
        plot_matrix(M.T, None, factors, ax, title=title, fmt="", fontsize=7, **kwargs)
        ax.set_yticks([j for j in range(p) if keep[j]])
        ax.set_yticklabels([names[j] for j in range(p) if keep[j]], fontsize=6)
        cells = [(i, j) for i, j in enumerate(outlined or [])]
    for x, y in cells:
        ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, lw=2, ec="black"))


def plot_fit_report(
    adjusted: OLSAdjustment, assignment: pd.DataFrame, path: Path, max_domains: int = 12
) -> int:
    """The unmixing matrix, the R^2 table of the alignment and the causal graphs of (at most
    ``max_domains``) domains, saved to ``path`` (format from the suffix).

    The node labels of the graphs are the one-to-one alignment (in parentheses when the
    factor matches no benchmark well), the outlined cells of the R^2 table. Returns the
    number of domains drawn. ``adjusted`` is the fit's OLS adjustment
    (:meth:`hca.estimator.HCA.adjust`) and ``assignment`` its one-to-one alignment
    (:func:`hca.estimator.results.one_to_one_alignment`: columns ``benchmark`` and ``weak``)."""
    with matplotlib.rc_context(BOOK_RC):  # an SVG keeps its text as text, at the book's sizes
        return _draw_report(adjusted, assignment, path, max_domains)


def _draw_report(adj: OLSAdjustment, assignment: pd.DataFrame, path: Path, max_domains: int) -> int:
    """:func:`plot_fit_report`'s drawing, under the rcParams it sets."""
    benchmarks = [str(b) for b in adj.r2.columns]
    assigned = [benchmarks.index(b) for b in assignment["benchmark"]]
    node_labels = [
        f"({benchmark_label(b)})" if w else benchmark_label(b)
        for b, w in zip(assignment["benchmark"], assignment["weak"])
    ]
    doms = list(adj.models)[:max_domains]
    d, p = adj.unmixing.shape
    ncols = min(2, len(doms))  # at most 10 in wide: legible when shown at a page's width
    nrows = -(-len(doms) // ncols)
    width = min(10.0, max(4.0, 1.6 + 1.6 * d) * ncols)
    compact = p > COMPACT_BENCHMARKS
    top = 1.0 + 0.12 * p if compact else 0.8 + 0.5 * d
    fig = Figure(
        figsize=(width, (top if compact else 2 * top) + 1.0 + 3.0 * nrows), layout="constrained"
    )
    if compact:  # the two matrices side by side, benchmarks down the page
        grid = fig.add_gridspec(nrows + 1, 2, height_ratios=[top] + [3.0] * nrows)
        ax_h, ax_r = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
        first = 1
    else:
        grid = fig.add_gridspec(nrows + 2, ncols, height_ratios=[top, top] + [3.0] * nrows)
        ax_h, ax_r = fig.add_subplot(grid[0, :]), fig.add_subplot(grid[1, :])
        first = 2
    titles = (
        ("Unmixing H (z = H x)", "R^2 of z_i ~ z_<i + benchmark\n(outlined: node labels)")
        if compact
        else (
            "Unmixing matrix after the OLS adjustment (z = H x)",
            "R^2 of z_i ~ z_1..z_(i-1) + benchmark; outlined: the aligned benchmark (node labels)",
        )
    )
    draw_matrix(ax_h, adj.unmixing, benchmarks, titles[0])
    draw_matrix(
        ax_r, adj.r2.to_numpy(dtype=float), benchmarks, titles[1], outlined=assigned, vmax=1.0
    )
    for i, dom in enumerate(doms):
        ax = fig.add_subplot(grid[first + i // ncols, i % ncols])
        plot_causal_graph(adj.models[dom], ax, title=str(dom), node_labels=node_labels)
    fmt = path.suffix.lstrip(".").lower()
    # no creation date: the same fit draws the same file (PNG records none)
    metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(fmt)
    fig.savefig(path, format=fmt, metadata=metadata)
    return len(doms)
