"""Figures of the MMLU-by-subject analysis (Appendix H.5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from hca.data.registry import benchmark_label
from hca.interpret import cluster_order
from hca.plots.axes import annotate_cells, get_axes, get_axes_grid
from hca.plots.estimator import plot_matrix, plot_mic_by_subset, plot_mixing
from hca.plots.subspace import plot_explained_variance

__all__ = [
    "plot_clustered_correlation",
    "plot_subject_panels",
    "plot_mic_panels",
    "plot_runs_mic",
]


def plot_clustered_correlation(
    corr: pd.DataFrame,
    order: Sequence | None = None,
    ax: Axes | None = None,
    vmin: float | None = None,
    annotate: bool = False,
    labels: dict | None = None,
) -> Axes:
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
        values = mat.to_numpy()
        annotate_cells(ax, [[f"{v:.2f}" for v in row] for row in values], values < (lo + 1) / 2)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="Pearson correlation")
    return ax


def plot_subject_panels(
    corr: pd.DataFrame,
    spectra: Any,
    mixings: Mapping[str, Any],
    names: Sequence[str],
    axes: Any = None,
) -> np.ndarray:
    """A subject fit (Figures 28-30): (a) the subjects' correlations, (b) their spectra
    within the base models (:func:`hca.plots.plot_explained_variance`), (c) and (d) one mixing
    matrix per entry of ``mixings`` (title -> G, one or two; with one, panel (d) is left out),
    with display ``names``. Returns the 2 x 2 axes."""
    if not 1 <= len(mixings) <= 2:
        raise ValueError(f"plot_subject_panels: one or two mixing matrices, got {len(mixings)}")
    grid = get_axes_grid(axes, 2, 2, figsize=(8, 6.4))
    plot_matrix(
        corr.to_numpy(),
        names,
        names,
        ax=grid[0, 0],
        vmax=1.0,
        title="(a) correlations",
        colorbar=False,
    )
    plot_explained_variance(spectra, ax=grid[0, 1])
    grid[0, 1].set_title("(b) explained variance")
    grid[0, 1].set_xticks([1, 2, 3])
    for ax, (title, G), tag in zip(grid[1], mixings.items(), "cd"):
        plot_mixing(G, names, ax=ax, colorbar=False, title=f"({tag}) mixing matrix, {title}")
    for ax in grid[1][len(mixings) :]:
        ax.set_visible(False)
    grid[0, 0].figure.tight_layout()
    return grid


def plot_mic_panels(
    tables: Mapping[str, pd.DataFrame],
    highlights: Mapping[str, Sequence],
    *,
    short_names: Mapping[Any, str] | None = None,
    reference: Mapping[str, float] | None = None,
    axes: Any = None,
) -> np.ndarray:
    """:func:`hca.plots.plot_mic_by_subset` of every table (title -> table), one panel per
    row, with the subset ``highlights[title]`` outlined. Returns the axes."""
    grid = get_axes_grid(axes, len(tables), 1, figsize=(8, 4.3 * len(tables)))
    panels = grid.ravel()
    for ax, (title, table) in zip(panels, tables.items()):
        plot_mic_by_subset(
            table, ax=ax, highlight=highlights[title], short_names=short_names, reference=reference
        )
        ax.set_title(title)
    panels[0].figure.tight_layout()
    return panels


#: Colours of the setups' dots in :func:`plot_runs_mic` (in the order the setups come).
_RUN_COLOURS = ("#dd8452", "#4c72b0")


def plot_runs_mic(
    values: Mapping[str, Mapping[str, Sequence[float]]],
    typical: Mapping[str, Mapping[str, float]],
    *,
    reference: Mapping[str, float | None] | None = None,
    ax: Axes | None = None,
    seed: int = 0,
) -> Axes:
    """The MIC of every run of an ensemble, one column of dots per group (a subject fit) and
    setup, the typical run ringed, the paper's MIC as a black bar.

    Parameters
    ----------
    values : mapping
        Group -> setup label -> the runs' MICs.
    typical : mapping
        Group -> setup label -> the typical run's MIC.
    reference : mapping, optional
        Group -> the paper's MIC (None: the paper gives none).
    ax : matplotlib Axes, optional
    seed : int, default=0
        Seed of the dots' horizontal jitter (drawing only).

    Returns
    -------
    matplotlib Axes
    """
    ax = get_axes(ax, figsize=(8, 3.4))
    rng = np.random.default_rng(seed)
    setups = list(dict.fromkeys(s for v in values.values() for s in v))
    if len(setups) > len(_RUN_COLOURS):
        raise ValueError(f"plot_runs_mic: at most {len(_RUN_COLOURS)} setups, got {setups}")
    offsets = [0.0] if len(setups) == 1 else [-0.17, 0.17]
    for k, (group, per) in enumerate(values.items()):
        for off, s, colour in zip(offsets, setups, _RUN_COLOURS):
            v = np.asarray(per[s], dtype=float)
            x = k + off + rng.uniform(-0.06, 0.06, len(v))
            ax.scatter(x, v, s=14, color=colour, alpha=0.75, label=s if k == 0 else None)
            ax.scatter([k + off], [typical[group][s]], s=90, facecolors="none", edgecolors="black")
        ref = (reference or {}).get(group)
        if ref is not None:
            ax.hlines(
                ref, k - 0.35, k + 0.35, color="black", lw=2, label="paper" if k == 0 else None
            )
    ax.set_xticks(range(len(values)), list(values))
    ax.set_ylabel("MIC")
    ax.set_ylim(0, None)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, fontsize=9, frameon=False)
    return ax
