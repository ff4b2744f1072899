"""Figures of per-domain PCA and subspace distances (Figures 2, 9-11)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from hca.plots.axes import annotate_cells, get_axes
from hca.subspace.distances import BootstrapDistances, check_distance_matrix
from hca.subspace.pca import ExplainedVariance, explained_variance

__all__ = [
    "plot_explained_variance",
    "plot_distance_matrix",
    "plot_pair_intervals",
    "plot_null_distributions",
    "plot_leverage",
]


def plot_explained_variance(
    ev_or_dict: Any,
    ax: Axes | None = None,
    kind: str = "ratio",
    threshold: float | None = None,
) -> Axes:
    """Scree plot for one domain or several (Figure 9).

    Parameters
    ----------
    ev_or_dict : ExplainedVariance, mapping ``{label: ExplainedVariance}``, or an array
        An array is passed to :func:`explained_variance`.
    ax : matplotlib Axes, optional
    kind : {"ratio", "cumulative", "eigenvalue"}
        What to plot against the component index.
    threshold : float, optional
        Horizontal reference line (e.g. 0.9 with ``kind="cumulative"``).

    Returns
    -------
    matplotlib Axes
    """
    fields = {
        "ratio": ("ratios", "explained variance ratio"),
        "cumulative": ("cumulative", "cumulative ratio"),
        "eigenvalue": ("eigenvalues", "eigenvalue (variance)"),
    }
    if kind not in fields:
        raise ValueError(f"kind must be one of {tuple(fields)}, got {kind!r}")
    if isinstance(ev_or_dict, Mapping):
        items = list(ev_or_dict.items())
    elif isinstance(ev_or_dict, ExplainedVariance):
        items = [(ev_or_dict.label, ev_or_dict)]
    else:
        items = [(None, explained_variance(ev_or_dict))]
    ax = get_axes(ax)
    for label, ev in items:
        if not isinstance(ev, ExplainedVariance):
            ev = explained_variance(ev)
        y = getattr(ev, fields[kind][0])
        name = None if label is None else str(label)
        ax.plot(np.arange(1, len(y) + 1), y, marker="o", label=name)
    if threshold is not None:
        ax.axhline(threshold, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("principal component")
    ax.set_ylabel(fields[kind][1])
    if any(label is not None for label, _ in items):
        ax.legend(fontsize="small")
    return ax


def plot_distance_matrix(
    dist_df: pd.DataFrame,
    ax: Axes | None = None,
    annotate: bool = True,
    lower: pd.DataFrame | None = None,
    upper: pd.DataFrame | None = None,
    cmap: str = "Blues",
    vmin: float = 0.0,
    vmax: float | None = None,
    fmt: str = ".2f",
    highlight: Sequence | None = None,
    colorbar: bool = True,
    fontsize: float | str | None = None,
) -> Axes:
    """Heatmap of a subspace distance matrix (Figures 2b, 10, 11, 23b).

    Parameters
    ----------
    dist_df : DataFrame
        Square distance matrix.
    ax : matplotlib Axes, optional
    annotate : bool
        Write each value in its cell; with ``lower`` and ``upper`` the interval is
        written below it (off-diagonal cells).
    lower, upper : DataFrame, optional
        Interval bounds with the labels of ``dist_df`` (e.g. from
        :func:`bootstrap_distance_matrix`).
    cmap, vmin, vmax, fmt
        Colour map, colour limits (``vmax`` default: the largest distance) and number format.
    highlight : sequence of labels, optional
        Tick labels drawn in bold (e.g. the invariant set).
    colorbar : bool
    fontsize : float or str, optional
        Size of the cell annotations (default ``"small"``, ``"x-small"`` with intervals).

    Returns
    -------
    matplotlib Axes
    """
    dist_df = check_distance_matrix(dist_df)
    if (lower is None) != (upper is None):
        raise ValueError("give both lower and upper, or neither")
    for name, frame in (("lower", lower), ("upper", upper)):
        if frame is not None and (
            list(frame.index) != list(dist_df.index) or list(frame.columns) != list(dist_df.columns)
        ):
            raise ValueError(f"{name} must have the same labels as dist_df")
    D = dist_df.to_numpy(dtype=float)
    vmax = float(D.max()) if vmax is None else vmax
    if vmax <= vmin:
        vmax = vmin + 1.0
    ax = get_axes(ax)
    im = ax.imshow(D, cmap=cmap, vmin=vmin, vmax=vmax)
    k = D.shape[0]
    labels = [str(lab) for lab in dist_df.index]
    ax.set_xticks(np.arange(k), labels, rotation=45, ha="right")
    ax.set_yticks(np.arange(k), labels)
    if highlight is not None:
        marked = {str(h) for h in highlight}
        for tick in list(ax.get_xticklabels()) + list(ax.get_yticklabels()):
            if tick.get_text() in marked:
                tick.set_fontweight("bold")
    if annotate:
        mid = vmin + 0.5 * (vmax - vmin)
        size = fontsize if fontsize is not None else ("small" if lower is None else "x-small")
        texts = [[format(v, fmt) for v in row] for row in D]
        for i, j in np.ndindex(k, k):
            if lower is not None and i != j:
                texts[i][j] += f"\n[{format(lower.iat[i, j], fmt)}, {format(upper.iat[i, j], fmt)}]"
        annotate_cells(ax, texts, D > mid, fontsize=size)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, label="subspace distance")
    return ax


def plot_pair_intervals(
    boot: BootstrapDistances,
    threshold: float | None = None,
    ax: Axes | None = None,
    highlight: Sequence | None = None,
) -> Axes:
    """Forest plot: every pair's distance with its bootstrap interval, sorted by distance.

    Parameters
    ----------
    boot : BootstrapDistances
    threshold : float, optional
        Drawn as a dashed vertical line (e.g. the split-half null threshold).
    ax : matplotlib Axes, optional
    highlight : sequence of labels, optional
        Pairs with both groups in ``highlight`` are drawn in a second colour (e.g. the
        paper's invariant set).

    Returns
    -------
    matplotlib Axes
    """
    if not isinstance(boot, BootstrapDistances):
        raise TypeError(f"boot must be a BootstrapDistances, got {type(boot).__name__}")
    tidy = boot.to_frame().sort_values("point", kind="stable").reset_index(drop=True)
    marked = set(highlight) if highlight is not None else set()
    inside = [(a in marked and b in marked) for a, b in zip(tidy.group_a, tidy.group_b)]
    ax = get_axes(ax)
    y = np.arange(len(tidy))
    for flag, colour, name in (
        (False, "tab:blue", "other pairs"),
        (True, "tab:orange", "pairs within highlighted set"),
    ):
        sel = np.array(inside) == flag
        if not sel.any():
            continue
        t = tidy[sel]
        ax.errorbar(
            t["point"],
            y[sel],
            xerr=[t["point"] - t["lower"], t["upper"] - t["point"]],
            fmt="o",
            color=colour,
            ecolor=colour,
            capsize=2,
            markersize=4,
            label=name if marked else None,
        )
    ax.set_yticks(y, [f"{a} - {b}" for a, b in zip(tidy.group_a, tidy.group_b)], fontsize="x-small")
    if threshold is not None:
        ax.axvline(threshold, color="tab:red", linestyle="--", label=f"threshold {threshold:.3f}")
    ax.set_xlabel(f"subspace distance ({boot.level:.0%} bootstrap interval)")
    if marked or threshold is not None:
        ax.legend(fontsize="small", loc="lower right")
    return ax


def plot_null_distributions(
    nulls: Mapping, threshold: float | None = None, ax: Axes | None = None
) -> Axes:
    """Box plot of every domain's split-half null distances (5-95 % whiskers).

    Parameters
    ----------
    nulls : mapping ``{label: array}``
        E.g. :func:`hca.subspace.split_half_nulls`.
    threshold : float, optional
        The pooled threshold ``tau``, drawn as a dashed line.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    if not nulls:
        raise ValueError("nulls is empty")
    labels = [str(k) for k in nulls]
    ax = get_axes(ax)
    ax.boxplot(
        [np.asarray(v, dtype=float) for v in nulls.values()],
        orientation="horizontal",
        whis=(5, 95),
        tick_labels=labels,
        flierprops={"markersize": 2},
    )
    if threshold is not None:
        ax.axvline(threshold, color="tab:red", linestyle="--", label=f"tau = {threshold:.3f}")
        ax.legend(loc="lower right")
    ax.invert_yaxis()
    ax.set_xlabel("split-half null distance")
    return ax


def plot_leverage(
    leverage: pd.DataFrame, ax: Axes | None = None, colorbar: bool = True, fmt: str = ".2f"
) -> Axes:
    """Annotated heatmap of benchmark leverages (:func:`hca.subspace.benchmark_leverage`).

    Parameters
    ----------
    leverage : DataFrame
        One row per domain, one column per benchmark, values in [0, 1].
    ax : matplotlib Axes, optional
    colorbar : bool
    fmt : str
        Format of the cell annotations.

    Returns
    -------
    matplotlib Axes
    """
    if not isinstance(leverage, pd.DataFrame) or leverage.empty:
        raise ValueError("leverage must be a non-empty DataFrame")
    arr = leverage.to_numpy(dtype=float)
    ax = get_axes(ax)
    im = ax.imshow(arr, cmap="Greens", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(arr.shape[1]), [str(c) for c in leverage.columns], rotation=30, ha="right")
    ax.set_yticks(range(arr.shape[0]), [str(i) for i in leverage.index])
    annotate_cells(ax, [[format(v, fmt) for v in row] for row in arr], arr > 0.6, fontsize="small")
    if colorbar:
        ax.figure.colorbar(im, ax=ax, label="leverage")
    return ax
