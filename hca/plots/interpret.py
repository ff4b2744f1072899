"""Figures of the interpretation of the factors (Figure 3, Table 2, Appendix D)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap

from hca.interpret import Alignment
from hca.plots.axes import benchmark_label, get_axes, get_axes_grid
from hca.plots.estimator import plot_unmixing
from hca.validation import check_frame

__all__ = [
    "plot_adjusted_unmixing",
    "plot_alignment",
    "plot_instruct_shift",
    "plot_r2_comparison",
    "plot_compute_factor",
    "plot_lookup_cells",
    "plot_alignment_panels",
]


def plot_adjusted_unmixing(
    alignment: Alignment, ax: Axes | None = None, benchmark_units: bool = False
) -> Axes:
    """Heatmap of the adjusted unmixing matrix (Figure 3a), via :func:`hca.plots.plot_unmixing`.

    Rows are labelled with the factor and the benchmark it is aligned with; with
    ``benchmark_units=True`` each row is divided by its slope (see
    :meth:`Alignment.unmixing_frame`). Returns the axes.
    """
    U = alignment.unmixing_frame(benchmark_units)
    names = [f"{z} ({benchmark_label(b)})" for z, b in zip(U.index, alignment.benchmarks)]
    title = "adjusted unmixing (benchmark → factor)" + (
        ", per benchmark point" if benchmark_units else ""
    )
    return plot_unmixing(
        U.to_numpy(), list(alignment.feature_names), ax, factor_names=names, title=title
    )


def plot_alignment(
    alignment: Alignment,
    factor: int,
    in_sample: pd.DataFrame,
    others: Mapping[str, pd.DataFrame] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Figure 3b: adjusted factor ``factor`` (0-based) against its benchmark, with the line.

    In-sample models are grey dots; every entry of ``others`` (name -> scores) gets its own
    colour. The fitted OLS line ``c + gamma x`` is drawn over the in-sample range.
    """
    ax = get_axes(ax)
    if not 0 <= factor < len(alignment.factor_names):
        raise ValueError(f"plot_alignment: factor must be in 0..{len(alignment.factor_names) - 1}")
    bench = alignment.benchmarks[factor]
    z = alignment.factor_names[factor]
    x_in = in_sample[bench].to_numpy(dtype=float)
    ax.scatter(
        x_in,
        alignment.factors(in_sample)[:, factor],
        s=8,
        c="0.6",
        alpha=0.6,
        label=f"in sample ({len(x_in)})",
        rasterized=True,
    )
    for name, rows in (others or {}).items():
        if len(rows) == 0:
            continue
        ax.scatter(
            rows[bench],
            alignment.factors(rows)[:, factor],
            s=10,
            alpha=0.7,
            label=f"{name} ({len(rows)})",
            rasterized=True,
        )
    grid = np.linspace(np.nanmin(x_in), np.nanmax(x_in), 50)
    ax.plot(grid, alignment.line(factor, grid), "k-", lw=1.5, label="fitted OLS line")
    ax.set_xlabel(f"{benchmark_label(bench)} (normalized score)")
    ax.set_ylabel(f"adjusted {z}")
    ax.set_title(
        f"{z} vs {benchmark_label(bench)} (in-sample R² = {alignment.r2_table.loc[z, bench]:.2f})",
        fontsize=10,
    )
    return ax


def plot_instruct_shift(
    shifts: pd.DataFrame,
    factor_names: Sequence[str],
    ax: Axes | None = None,
    highlight: Sequence[str] = (),
) -> Axes:
    """Strip plot of the factor changes from base to official instruct checkpoint.

    ``shifts`` is :func:`instruct_shift` output; pairs whose ``base_id`` is in ``highlight``
    are drawn in red.
    """
    ax = get_axes(ax, (5, 3.5))
    rng = np.random.default_rng(0)
    hi = shifts["base_id"].isin(list(highlight)).to_numpy()
    for k, z in enumerate(factor_names):
        v = shifts[f"d_{z}"].to_numpy(dtype=float)
        jitter = k + rng.uniform(-0.15, 0.15, len(v))
        ax.scatter(jitter[~hi], v[~hi], s=14, c="0.4", alpha=0.7)
        ax.scatter(jitter[hi], v[hi], s=22, c="tab:red")
        ax.plot([k - 0.3, k + 0.3], [np.median(v)] * 2, "k-", lw=2)
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xticks(range(len(factor_names)), list(factor_names))
    ax.set_ylabel("instruct − base (in-sample SDs)")
    return ax


#: Marker and colour of each source in the comparison plots (paper first).
_SOURCES = {
    "paper": ("o", "black"),
    "authors' code": ("D", "0.55"),
    "authors' setup": ("s", "tab:blue"),
    "careful setup": ("^", "tab:orange"),
}


def plot_r2_comparison(
    table: pd.DataFrame,
    ax: Axes | None = None,
    *,
    reference: str = "paper",
    bands: tuple[float, float] = (0.05, 0.15),
    floor: float | None = None,
    hollow: pd.DataFrame | None = None,
    title: str | None = None,
) -> Axes:
    """Values of several sources (rows of ``table``) per group (columns), around a reference.

    Each column gets a dark band of ``± bands[0]`` and a light band of ``± bands[1]`` around
    the ``reference`` row (the reproduced / partly tolerances), and one marker per source,
    side by side. Values below ``floor`` are drawn at the floor as a downward triangle with
    their value written next to it; cells marked True in ``hollow`` (same shape) are drawn
    as open markers (e.g. not applicable). NaN cells are skipped. Returns the axes.
    """
    if reference not in table.index:
        raise ValueError(
            f"plot_r2_comparison: reference {reference!r} is not a row of the "
            f"table ({list(table.index)})"
        )
    ax = get_axes(ax, (8, 3))
    cols = list(table.columns)
    x = np.arange(len(cols))
    ref = table.loc[reference].to_numpy(dtype=float)
    for k, r in enumerate(ref):
        if np.isfinite(r):
            ax.fill_between([k - 0.42, k + 0.42], r - bands[1], r + bands[1], color="0.93", lw=0)
            ax.fill_between([k - 0.42, k + 0.42], r - bands[0], r + bands[0], color="0.82", lw=0)
    n = len(table)
    offsets = (np.arange(n) - (n - 1) / 2) * min(0.8 / max(n, 1), 0.2)
    for j, (source, row) in enumerate(table.iterrows()):
        marker, colour = _SOURCES.get(str(source), ("o", f"C{j}"))
        labelled = False
        for k, v in enumerate(row.to_numpy(dtype=float)):
            if not np.isfinite(v):
                continue
            open_ = (
                hollow is not None and source in hollow.index and bool(hollow.loc[source, cols[k]])
            )
            y, m = v, marker
            if floor is not None and v < floor:
                y, m = floor, "v"
                ax.annotate(
                    f"{v:.1f}",
                    (x[k] + offsets[j], floor),
                    xytext=(0, -11),
                    textcoords="offset points",
                    ha="center",
                    fontsize=9,
                    color=colour,
                )
            ax.scatter(
                x[k] + offsets[j],
                y,
                marker=m,
                s=34,
                zorder=3,
                facecolors="none" if open_ else colour,
                edgecolors=colour,
                label=None if labelled else str(source),
            )
            labelled = True
    ax.set_xticks(x, [benchmark_label(c) for c in cols])
    ax.set_xlim(-0.5, len(cols) - 0.5)
    if floor is not None:
        ax.set_ylim(floor - 0.35, max(1.08, np.nanmax(table.to_numpy(dtype=float)) + 0.05))
    ax.set_ylabel("R²")
    if title:
        ax.set_title(title)
    return ax


def plot_compute_factor(
    checkpoints: pd.DataFrame,
    factor: str,
    ax: Axes | None = None,
    *,
    label: str | None = None,
    title: str | None = None,
) -> Axes:
    """One oriented factor (column ``factor`` of ``checkpoints``) of the official base
    checkpoints against ``log10_compute``, with the Pearson r in the title. Returns the axes."""
    check_frame(checkpoints, ["log10_compute", factor], context="plot_compute_factor")
    ax = get_axes(ax, (4, 3))
    x = checkpoints["log10_compute"].to_numpy(dtype=float)
    y = checkpoints[factor].to_numpy(dtype=float)
    ax.scatter(x, y, s=16, c="k", alpha=0.75)
    r = float(np.corrcoef(x, y)[0, 1])
    ax.set_xlabel("log10 pretraining compute (FLOPs)")
    ax.set_ylabel(label or factor)
    ax.set_title((title + ": " if title else "") + f"r = {r:.2f} ({len(x)} checkpoints)")
    return ax


def plot_lookup_cells(
    ours: pd.DataFrame,
    paper: pd.DataFrame,
    ax: Axes | None = None,
    *,
    tolerance: tuple[float, float] = (0.005, 0.03),
    fmt: str = "{:.3f}",
) -> Axes:
    """Cells looked up on the leaderboard against the paper's: one cell per value, coloured
    by ``|ours − paper|`` (green within ``tolerance[0]``, yellow within ``tolerance[1]``, red
    beyond) and labelled ``ours`` over ``(paper)``. ``ours`` and ``paper`` have the same
    index and columns. Returns the axes."""
    if list(ours.index) != list(paper.index) or list(ours.columns) != list(paper.columns):
        raise ValueError("plot_lookup_cells: ours and paper must have the same rows and columns")
    ax = get_axes(ax, (8, 0.6 * len(ours) + 1))
    a, p = ours.to_numpy(dtype=float), paper.to_numpy(dtype=float)
    diff = np.abs(a - p)
    band = np.where(diff <= tolerance[0] + 1e-12, 0, np.where(diff <= tolerance[1] + 1e-12, 1, 2))
    ax.imshow(
        band, cmap=ListedColormap(["#cfe8cf", "#f6e7a8", "#f2b8b0"]), vmin=0, vmax=2, aspect="auto"
    )
    for (i, j), v in np.ndenumerate(a):
        ax.text(j, i, f"{fmt.format(v)}\n({p[i, j]:.2f})", ha="center", va="center", fontsize=9)
    ax.set_xticks(range(a.shape[1]), [benchmark_label(c) for c in ours.columns])
    ax.set_yticks(
        range(a.shape[0]),
        [" ".join(map(str, r)) if isinstance(r, tuple) else str(r) for r in ours.index],
    )
    ax.tick_params(length=0)
    return ax


def plot_alignment_panels(
    alignment: Alignment,
    in_sample: pd.DataFrame,
    others: Mapping[str, pd.DataFrame] | None = None,
    axes: Any = None,
) -> np.ndarray:
    """Figure 3b: every adjusted factor against its benchmark (:func:`plot_alignment`), one
    panel per factor, with one legend below the panels. Returns the axes."""
    k = len(alignment.factor_names)
    grid = get_axes_grid(axes, 1, k, figsize=(3.5 * k, 3.9))
    panels = grid.ravel()
    for i, ax in enumerate(panels):
        plot_alignment(alignment, i, in_sample, others, ax=ax)
        ax.get_legend() and ax.get_legend().remove()
    fig = panels[0].figure
    handles, labels = panels[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    return panels
