"""Figures of the scaling-law and ATE analyses (Figures 7, 12-14)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hca.causal.ate import propensity_scores
from hca.causal.panels import SigmoidPanel
from hca.causal.sigmoid import SigmoidFit
from hca.plots.axes import get_axes, get_axes_grid
from hca.validation import check_frame, check_same_length, check_vector

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = [
    "plot_sigmoid_fit",
    "plot_ate",
    "plot_ate_steps",
    "plot_family_sizes",
    "plot_sigmoid_panel",
    "plot_propensity_strata",
]


def plot_sigmoid_fit(
    fit: SigmoidFit,
    log_c,
    t,
    y,
    *,
    ax: Axes | None = None,
    labels: tuple[str, str] = ("pretrained (T=0)", "fine-tuned (T=1)"),
    flops_axis: bool = False,
) -> Axes:
    """Scatter of the data coloured by ``T`` with the fitted curves for ``T = 0`` and ``T = 1``.

    Parameters
    ----------
    fit : SigmoidFit
        Result of :func:`fit_sigmoid_law`.
    log_c, t, y : array-like
        Data (natural log compute in FLOPs, treatment, score).
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure is created when None.
    labels : tuple of str
        Legend labels for ``T = 0`` and ``T = 1``.
    flops_axis : bool, default False
        Plot against ``C`` (FLOPs, log-scaled axis) instead of ``ln C``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    x = check_vector(log_c, "log_c")
    yy = check_vector(y, "y")
    tt = check_vector(t, "t", binary=True)
    check_same_length(log_c=x, t=tt, y=yy)
    ax = get_axes(ax, (6, 4))
    grid = np.linspace(x.min(), x.max(), 200)
    xp = (lambda v: np.exp(v)) if flops_axis else (lambda v: v)
    colors = ("tab:blue", "tab:orange")
    for arm in (0, 1):
        mask = tt == arm
        if mask.any():
            ax.scatter(xp(x[mask]), yy[mask], s=14, alpha=0.6, color=colors[arm], label=labels[arm])
        if mask.any() or not fit.tau_fixed:
            ax.plot(xp(grid), fit.predict(grid, arm), color=colors[arm], lw=2)
    if flops_axis:
        ax.set_xscale("log")
        ax.set_xlabel("pretraining compute C (FLOPs)")
    else:
        ax.set_xlabel("ln C (C = pretraining FLOPs)")
    ax.set_ylabel("score")
    ax.set_title(f"sigmoid law: R² = {fit.r2:.2f}, τ = {fit.tau:.2g}")
    ax.legend(loc="best", fontsize="small")
    return ax


def plot_ate(
    frame: pd.DataFrame,
    *,
    ax: Axes | None = None,
    group: str = "estimator",
    value: str = "ate",
    reference: Mapping[str, float] | None = None,
    reference_label: str = "reference",
    xlabel: str = "ATE of fine-tuning (score points)",
    zero: bool = True,
) -> Axes:
    """Forest plot of estimates with their intervals, one row per outcome, offset by group.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``outcome``, ``group``, ``value``, ``ci_low``, ``ci_high`` (e.g. one subset
        of :attr:`hca.causal.ATEPanel.table`: one point per outcome and estimator).
    ax : matplotlib Axes, optional
    group : str, default "estimator"
        Column whose values are offset within an outcome's row (and named in the legend).
    value : str, default "ate"
        Column of the point estimates.
    reference : mapping, optional
        Outcome -> a value drawn as a black cross (e.g. a value printed elsewhere).
    reference_label : str
        Legend label of the crosses.
    xlabel : str
    zero : bool, default True
        Draw a dashed line at 0.

    Returns
    -------
    matplotlib.axes.Axes
    """
    check_frame(frame, ["outcome", group, value, "ci_low", "ci_high"])
    ax = get_axes(ax, (6, 4))
    outcomes = list(dict.fromkeys(frame["outcome"]))
    groups = list(dict.fromkeys(frame[group]))
    height = 0.8 / max(1, len(groups))
    for j, g in enumerate(groups):
        sub = frame[frame[group] == g].set_index("outcome").reindex(outcomes)
        pos = np.arange(len(outcomes)) - 0.4 + height * (j + 0.5)
        point = sub[value].to_numpy(dtype=float)
        low, high = sub["ci_low"].to_numpy(dtype=float), sub["ci_high"].to_numpy(dtype=float)
        err = np.vstack([point - low, high - point])
        # a percentile interval need not hold its point estimate: such an interval is drawn
        # on its own, centred on itself, and the point without error bars
        inside = np.all(err >= 0, axis=0)
        line = ax.errorbar(
            point,
            pos,
            xerr=np.where(np.isfinite(err) & inside, err, 0.0),
            fmt="o",
            capsize=3,
            label=g,
        )
        apart = ~inside & np.isfinite(low) & np.isfinite(high)
        if apart.any():
            ax.errorbar(
                (low[apart] + high[apart]) / 2,
                pos[apart],
                xerr=(high[apart] - low[apart]) / 2,
                fmt="none",
                capsize=3,
                color=line.lines[0].get_color(),
            )
    if reference is not None:
        ref = [(i, reference[o]) for i, o in enumerate(outcomes) if o in reference]
        if ref:
            ax.scatter(
                [v for _, v in ref],
                [i for i, _ in ref],
                marker="x",
                color="black",
                s=40,
                zorder=5,
                label=reference_label,
            )
    if zero:
        ax.axvline(0.0, color="grey", lw=1, ls="--")
    ax.set_yticks(np.arange(len(outcomes)))
    ax.set_yticklabels(outcomes)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.legend(loc="best", fontsize="small")
    return ax


def plot_ate_steps(
    table: pd.DataFrame,
    *,
    ax: Axes | None = None,
    labels: Mapping[str, str] | None = None,
) -> Axes:
    """Point estimates across a sequence of analysis choices, one line per outcome.

    Parameters
    ----------
    table : pandas.DataFrame
        Index: the steps in order; columns: outcomes; values: estimates.
    ax : matplotlib Axes, optional
    labels : mapping, optional
        Display names of the outcomes.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if table.empty:
        raise ValueError("plot_ate_steps: the table is empty")
    ax = get_axes(ax, (6, 4))
    steps = [str(s) for s in table.index]
    for col in table.columns:
        ax.plot(
            steps, table[col].to_numpy(dtype=float), marker="o", label=(labels or {}).get(col, col)
        )
    ax.axhline(0.0, color="grey", lw=1, ls="--")
    ax.set_xlabel("step")
    ax.set_ylabel("backdoor ATE (score points)")
    ax.legend(loc="best", fontsize="small", ncol=2)
    return ax


def plot_family_sizes(
    table: pd.DataFrame,
    family: str,
    *,
    ax: Axes | None = None,
    labels: Mapping[str, str] | None = None,
) -> Axes:
    """Grouped bars of one family's mean scores by base size (paper Figure 12).

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`family_size_means`.
    family : str
        The family to draw.
    ax : matplotlib Axes, optional
    labels : mapping, optional
        Display names of the outcomes (e.g. ``hca.data.BENCHMARK_LABELS``).

    Returns
    -------
    matplotlib.axes.Axes
    """
    part = table[table["family"] == family]
    if part.empty:
        raise ValueError(
            f"family {family!r} not in table; found {sorted(table['family'].unique())}"
        )
    ax = get_axes(ax, (6, 4))
    outcomes = list(dict.fromkeys(part["outcome"]))
    sizes = list(dict.fromkeys(part.sort_values("size")["size"]))
    width = 0.8 / len(sizes)
    cmap = __import__("matplotlib").colormaps["viridis"]
    for j, sz in enumerate(sizes):
        rows = part[part["size"] == sz].set_index("outcome").reindex(outcomes)
        pos = np.arange(len(outcomes)) - 0.4 + width * (j + 0.5)
        err = np.vstack([rows["mean"] - rows["ci_low"], rows["ci_high"] - rows["mean"]])
        ax.bar(
            pos,
            rows["mean"],
            width,
            yerr=np.where(np.isfinite(err), err, 0.0),
            capsize=2,
            color=cmap(j / max(1, len(sizes) - 1)),
            label=f"{rows['size_label'].iloc[0]} (n = {int(rows['n'].iloc[0])})",
        )
    ax.set_xticks(np.arange(len(outcomes)))
    ax.set_xticklabels([(labels or {}).get(o, o) for o in outcomes], rotation=30, ha="right")
    ax.set_ylabel("mean normalized score")
    ax.set_title(family)
    # the legend in one band above the bars, never over them (MMLU-PRO, the last group)
    top = float(np.nanmax(part["ci_high"].where(np.isfinite(part["ci_high"]), part["mean"])))
    rows_needed = -(-len(sizes) // 3)
    ax.set_ylim(0, max(ax.get_ylim()[1], top * (1.12 + 0.14 * rows_needed)))
    ax.legend(
        loc="upper center",
        ncols=min(3, len(sizes)),
        fontsize="x-small",
        title="base size",
        title_fontsize="x-small",
        frameon=False,
        columnspacing=0.8,
        handlelength=1.2,
    )
    return ax


def plot_sigmoid_panel(
    panel: SigmoidPanel,
    *,
    axes=None,
    labels: Mapping[str, str] | None = None,
    flops_axis: bool = True,
):
    """Grid of :func:`plot_sigmoid_fit`: one row per subset, one column per outcome.

    Parameters
    ----------
    panel : SigmoidPanel
    axes : 2-D array of Axes, optional
        Shape ``(len(subsets), len(outcomes))``; a new figure is created when None.
    labels : mapping, optional
        Display names of the outcomes.
    flops_axis : bool, default True
        Compute in FLOPs on a log axis (else ``ln C``).

    Returns
    -------
    numpy.ndarray of Axes
    """
    shape = (len(panel.subsets), len(panel.outcomes))
    axes = get_axes_grid(axes, *shape, (2.6 * shape[1], 2.4 * shape[0]), sharex=True)
    axes = np.asarray(axes).reshape(shape)
    for i, s in enumerate(panel.subsets):
        d = panel.data[s]
        for j, o in enumerate(panel.outcomes):
            ax = axes[i, j]
            fit = panel.fits[(s, o)]
            plot_sigmoid_fit(fit, d[panel.x], d[panel.t], d[o], ax=ax, flops_axis=flops_axis)
            ax.set_title(
                f"{s}: {(labels or {}).get(o, o)}\nR² = {fit.r2:.2f}, τ = {fit.tau:+.1f}",
                fontsize="small",
            )
            ax.tick_params(labelsize="x-small")
            ax.set_xlabel("C (FLOPs)" if flops_axis else "ln C", fontsize="small")
            ax.set_ylabel("score" if j == 0 else "", fontsize="small")
            if (i, j) != (0, 0) and ax.get_legend() is not None:
                ax.get_legend().remove()
    return axes


def plot_propensity_strata(
    x,
    t,
    *,
    degree: int = 1,
    penalty: float = 1e-3,
    ax: Axes | None = None,
) -> Axes:
    """Share of fine-tuned models per ``x`` stratum against the fitted logistic propensity.

    Each distinct ``x`` (one base model's compute) is a point at its share of ``T = 1``,
    with area proportional to its number of models; strata with a single arm are hollow.
    The line is the logistic propensity of :func:`propensity_scores` (what IPW uses).

    Parameters
    ----------
    x, t : array-like
        Adjustment covariate and treatment.
    degree, penalty
        Propensity model, as in :func:`propensity_scores`.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    xx = check_vector(x, "x")
    tt = check_vector(t, "t", binary=True)
    check_same_length(x=xx, t=tt)
    e = propensity_scores(xx, tt, degree=degree, penalty=penalty)
    ax = get_axes(ax, (6, 4))
    values, inverse, counts = np.unique(xx, return_inverse=True, return_counts=True)
    share = np.bincount(inverse, weights=tt, minlength=len(values)) / counts
    both = (share > 0) & (share < 1)
    size = 8 + 120 * counts / counts.max()
    ax.scatter(
        values[both],
        share[both],
        s=size[both],
        color="tab:green",
        alpha=0.6,
        label=f"stratum with both arms ({int(both.sum())})",
    )
    ax.scatter(
        values[~both],
        share[~both],
        s=size[~both],
        facecolors="none",
        edgecolors="grey",
        label=f"single-arm stratum ({int((~both).sum())})",
    )
    order = np.argsort(xx)
    ax.plot(xx[order], e[order], color="black", lw=1.5, label=f"logistic e(x), degree {degree}")
    ax.set_xlabel("ln C (C = pretraining FLOPs)")
    ax.set_ylabel("share fine-tuned, P(T=1 | x)")
    ax.set_ylim(-0.05, 1.05)
    ax.legend(loc="lower left", fontsize="x-small")
    return ax
