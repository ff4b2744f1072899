"""Figures of the matrix-completion experiments (Figures 15-16)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from hca.completion.experiment import compare_approaches, paired_rmse
from hca.plots.axes import get_axes

__all__ = ["plot_rmse_distributions", "plot_rmse_vs_p", "plot_rmse_vs_share", "plot_set_means"]


_APPROACH_COLORS = {"global": "#4C72B0", "local": "#DD8452"}


def plot_rmse_distributions(
    frame: pd.DataFrame, ax: Axes | None = None, bins: int = 40, label: str = ""
) -> Axes:
    """Histograms of the global and local RMSE over repetitions (Figure 15a).

    Parameters
    ----------
    frame : DataFrame
        One experiment (e.g. one ``variant``) of :func:`global_vs_local` output.
    ax : matplotlib Axes, optional
    bins : int
        Number of common bins.
    label : str
        Appended to the legend entries (e.g. the method).

    Returns
    -------
    matplotlib.axes.Axes
    """
    wide = paired_rmse(frame)
    ax = get_axes(ax, (7, 3.8))
    edges = np.histogram_bin_edges(wide.to_numpy().ravel(), bins=bins)
    for approach in ("global", "local"):
        vals = wide[approach].to_numpy()
        color = _APPROACH_COLORS[approach]
        ax.hist(
            vals,
            bins=edges,
            color=color,
            alpha=0.6,
            edgecolor="black",
            linewidth=0.5,
            label=f"{approach}{label} (mean {vals.mean():.2f})",
        )
        ax.axvline(vals.mean(), color=color, linestyle="--", linewidth=2)
    ax.set_xlabel("RMSE on the removed entries (score points)")
    ax.set_ylabel("repetitions")
    ax.legend(fontsize="small")
    return ax


def plot_rmse_vs_p(
    frame: pd.DataFrame,
    ax: Axes | None = None,
    level: float = 0.95,
    label: str = "",
    linestyle: str = "-",
    shift: float = 0.008,
) -> Axes:
    """Mean RMSE with intervals against ``p``, global and local (Figure 15b).

    Parameters
    ----------
    frame : DataFrame
        One method's runs of :func:`hca.completion.global_vs_local` at several ``p``.
    ax : matplotlib Axes, optional
    level : float
        Level of the interval of each mean (see :func:`compare_approaches`).
    label : str
        Appended to the legend entries.
    linestyle : str
    shift : float
        Horizontal offset between the global and local markers.

    Returns
    -------
    matplotlib.axes.Axes
    """
    s = compare_approaches(frame, by=("p",), level=level)
    ax = get_axes(ax, (7, 4))
    x = s.index.to_numpy(dtype=float)
    for k, approach in enumerate(("global", "local")):
        m = s[f"{approach}_mean"].to_numpy()
        err = np.vstack([m - s[f"{approach}_lo"].to_numpy(), s[f"{approach}_hi"].to_numpy() - m])
        ax.errorbar(
            x + (k - 0.5) * shift,
            m,
            yerr=err,
            marker="o",
            markersize=4,
            capsize=3,
            color=_APPROACH_COLORS[approach],
            linestyle=linestyle,
            label=f"{approach}{label}",
        )
    ax.set_xlabel("fraction p of rows removed in the other columns")
    ax.set_ylabel("mean RMSE (score points)")
    ax.legend(fontsize="small")
    return ax


def plot_rmse_vs_share(
    frame: pd.DataFrame,
    printed: pd.DataFrame | None = None,
    ax: Axes | None = None,
    level: float = 0.95,
    label: str = "",
) -> Axes:
    """Mean RMSE of global and local completion against the hidden share (Figure 15a's
    design over every share), optionally with another source's means as open markers.

    Parameters
    ----------
    frame : DataFrame
        One method's random-pattern runs (column ``p`` = hidden share).
    printed : DataFrame, optional
        Means to overlay, indexed by hidden share, columns ``global`` and ``local`` (e.g.
        :func:`hca.paper.completion.printed_means`).
    ax : matplotlib Axes, optional
    level : float
        Level of the intervals of the means.
    label : str
        Appended to the legend entries of ``frame``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = plot_rmse_vs_p(frame, ax=ax, level=level, label=label)
    if printed is not None:
        for approach in ("global", "local"):
            ax.plot(
                printed.index.to_numpy(dtype=float),
                printed[approach].to_numpy(),
                linestyle="none",
                marker="s",
                markersize=7,
                markerfacecolor="none",
                markeredgecolor=_APPROACH_COLORS[approach],
                label=f"{approach}, authors' notebook",
            )
    ax.set_xlabel("hidden share of the entries")
    ax.legend(fontsize="small")
    return ax


_VERDICT_MARKERS = {
    "local better": ("o", "#DD8452"),
    "global better": ("X", "#4C72B0"),
    "no clear difference": ("s", "grey"),
}


def plot_set_means(
    summary: pd.DataFrame, names: dict[str, str] | None = None, ax: Axes | None = None
) -> Axes:
    """Mean RMSE of local against global completion, one point per set of fully observed
    columns, marked by the verdict of the paired difference (Figure 16 in one panel).

    Parameters
    ----------
    summary : DataFrame
        :func:`~hca.completion.compare_approaches` by ``observed_cols`` (one method).
    names : dict, optional
        Short names of the columns for the labels (e.g. ``{"ifeval": "1", ...}``).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    need = [c for c in ("global_mean", "local_mean", "verdict") if c not in summary.columns]
    if need:
        raise ValueError(f"plot_set_means: columns {need} are missing")
    ax = get_axes(ax, (5, 4.5))
    names = names or {}
    for verdict, (marker, color) in _VERDICT_MARKERS.items():
        sub = summary[summary["verdict"] == verdict]
        if len(sub):
            ax.scatter(
                sub["global_mean"],
                sub["local_mean"],
                marker=marker,
                color=color,
                s=36,
                label=f"{verdict} ({len(sub)})",
                zorder=3,
            )
    for key, row in summary.iterrows():
        text = ",".join(names.get(c, c) for c in str(key).split(","))
        ax.annotate(
            text,
            (row["global_mean"], row["local_mean"]),
            fontsize="small",
            xytext=(3, 2),
            textcoords="offset points",
        )
    hi = float(max(summary["global_mean"].max(), summary["local_mean"].max())) * 1.08
    ax.plot([0, hi], [0, hi], color="grey", linestyle="--", linewidth=1)
    ax.set_xlim(0, hi)
    ax.set_ylim(0, hi)
    ax.set_xlabel("global: mean RMSE")
    ax.set_ylabel("local: mean RMSE")
    ax.legend(fontsize="small", loc="upper left")
    return ax
