"""Figures of the recovery chapter: recovered DGPs, causal graphs of all domains, shares."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from hca.plots.axes import benchmark_label, get_axes, get_axes_grid
from hca.plots.estimator import plot_causal_graph, plot_mixing, plot_scm_weights, plot_unmixing

__all__ = ["plot_recovered_dgp", "plot_causal_graphs", "plot_claim_shares", "plot_benchmark_ratios"]

_SETUP_COLORS = ("#dd8452", "#4c72b0", "#55a868", "#8172b3")


def _dgp_axes(n_domains: int) -> list[Axes]:
    # lazy: matplotlib loads only when drawing (no pyplot at import)
    import matplotlib.pyplot as plt

    rows = int(np.ceil(n_domains / 2))
    fig = plt.figure(figsize=(8.0, 2.3 * rows + 2.9))
    grid = fig.add_gridspec(
        rows + 1, 4, height_ratios=[1.0] * rows + [1.45], hspace=0.75, wspace=0.9
    )
    axes = [fig.add_subplot(grid[k // 2, 2 * (k % 2) : 2 * (k % 2) + 2]) for k in range(n_domains)]
    return axes + [fig.add_subplot(grid[rows, 0:2]), fig.add_subplot(grid[rows, 2:4])]


def plot_recovered_dgp(
    model: Any, axes: Sequence[Axes] | None = None, *, benchmarks: Sequence[str] | None = None
) -> list[Axes]:
    """A fitted HCA's data-generating process before the adjustment (Figures 17 and 20).

    One panel per domain shows its SCM as ``B_k^{-1}`` (how each unit-variance source
    ``ε_j`` moves each factor ``z_i``, :func:`hca.plots.plot_scm_weights`) with the domain's
    inexactness in the title; the last two show the shared mixing matrix ``G`` and unmixing
    matrix ``H``.

    Parameters
    ----------
    model : HCA
        A fitted :class:`hca.estimator.HCA`.
    axes : sequence of Axes, optional
        ``len(model.domains_) + 2`` axes; by default a new 8 in wide figure, two domains a row.
    benchmarks : sequence of str, optional
        Benchmark names (default: the model's ``feature_names_in_``).

    Returns
    -------
    list of Axes
    """
    models = model.models_
    names = list(benchmarks if benchmarks is not None else model.feature_names_in_)
    axes = list(axes) if axes is not None else _dgp_axes(len(models))
    if len(axes) != len(models) + 2:
        raise ValueError(f"plot_recovered_dgp: need {len(models) + 2} axes, got {len(axes)}")
    for ax, (dom, scm) in zip(axes, models.items()):
        plot_scm_weights(scm, ax=ax, colorbar=False, title=f"{dom} (α = {scm.alpha:.3f})")
    plot_mixing(model.mixing_, names, ax=axes[-2], title="mixing matrix Ĝ", colorbar=False)
    plot_unmixing(model.unmixing_, names, ax=axes[-1], title="unmixing matrix Ĥ", colorbar=False)
    return axes


def plot_causal_graphs(
    models: Mapping[Any, Any],
    node_labels: Sequence[str] | None = None,
    axes: Any = None,
    *,
    ncols: int = 2,
) -> np.ndarray:
    """The causal graph of every domain (Figures 4 and 21), ``ncols`` to a row.

    Parameters
    ----------
    models : mapping
        Domain -> :class:`hca.estimator.DomainSCM` (e.g. ``adjustment.models``).
    node_labels : sequence of str, optional
        A second line under every node (e.g. the aligned benchmark).
    axes : array of Axes, optional
        At least ``len(models)`` axes; by default a new 8 in wide figure.

    Returns
    -------
    ndarray of Axes
    """
    nrows = int(np.ceil(len(models) / ncols))
    grid = get_axes_grid(axes, nrows, ncols, (8.0, 2.7 * nrows))
    flat = np.asarray(grid).ravel()
    if flat.size < len(models):
        raise ValueError(f"plot_causal_graphs: need {len(models)} axes, got {flat.size}")
    for ax, (dom, scm) in zip(flat, models.items()):
        plot_causal_graph(scm, ax=ax, node_labels=node_labels, title=str(dom))
    for ax in flat[len(models) :]:
        ax.set_visible(False)
    return np.asarray(grid)


def plot_claim_shares(
    shares: pd.DataFrame, ax: Axes | None = None, *, threshold: float | None = 0.5
) -> Axes:
    """Share of refits in which each claim holds, one bar per claim and column (setup).

    Parameters
    ----------
    shares : DataFrame
        Claims (index) x setups (columns), values in [0, 1].
    threshold : float, optional
        A dashed reference line (e.g. one half).
    """
    ax = get_axes(ax, (8.0, 1.0 + 0.32 * shares.size))
    n = shares.shape[1]
    height = 0.8 / n
    y = np.arange(len(shares))[::-1]
    for k, col in enumerate(shares.columns):
        pos = y + (n - 1 - 2 * k) * height / 2
        bars = ax.barh(pos, shares[col], height=height, color=_SETUP_COLORS[k % 4], label=col)
        for bar, v in zip(bars, shares[col]):
            ax.text(
                v + 0.01, bar.get_y() + bar.get_height() / 2, f"{v:.0%}", va="center", fontsize=9
            )
    if threshold is not None:
        ax.axvline(threshold, color="0.4", ls="--", lw=1)
    ax.set_yticks(y, list(shares.index))
    ax.set_xlim(0, 1.08)
    ax.set_xlabel("share of refits in which the claim holds")
    ax.legend(loc="lower right", fontsize=9)
    return ax


def plot_benchmark_ratios(
    ratios: pd.DataFrame,
    ax: Axes | None = None,
    *,
    reference: float | None = 1.0,
    ylabel: str = "ratio",
) -> Axes:
    """Grouped bars of a per-benchmark quantity (index: benchmarks, columns: setups), e.g.
    the filtered / unfiltered variance of Appendix H.3."""
    ax = get_axes(ax, (8.0, 3.0))
    n = ratios.shape[1]
    width = 0.8 / n
    x = np.arange(len(ratios))
    for k, col in enumerate(ratios.columns):
        bars = ax.bar(
            x + (2 * k - n + 1) * width / 2,
            ratios[col],
            width=width,
            color=_SETUP_COLORS[k % 4],
            label=col,
        )
        for bar, v in zip(bars, ratios[col]):
            ax.text(
                bar.get_x() + bar.get_width() / 2,
                v,
                f"{v:.2f}",
                ha="center",
                va="bottom",
                fontsize=9,
            )
    if reference is not None:
        ax.axhline(reference, color="0.4", ls="--", lw=1)
    ax.set_xticks(x, [benchmark_label(b) for b in ratios.index])
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=9)
    return ax
