"""Figures of the robustness page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from hca.plots.axes import get_axes

__all__ = ["plot_robustness", "plot_s_inv_membership"]


def _truthy(value: Any) -> bool:
    """True only for a non-missing true value (NA and None count as False)."""
    return value is not None and not pd.isna(value) and bool(value)


def plot_robustness(result: Any, ax: Axes | None = None, *, show_replicates: bool = True) -> Axes:
    """MIC of every perturbation with its interval, coloured by the recovered order.

    ``result`` has a ``table`` (one row per perturbation: ``order``, ``mic``, ``mic_lo``,
    ``mic_hi``, ``paper_order``, ``default_order``) and ``replicates`` (``perturbation``,
    ``mic``), e.g. :class:`hca.paper.robustness.RobustnessTable`.

    One row per perturbation (top: default). The dot is the point MIC (the median for the
    resampling rows), the bar the bootstrap interval; grey ticks are the replicates. The
    colour says which order the fit recovered (legend); a star marks the paper's order, an
    open marker an order different from the default's. A point fit outside its own interval
    (a single fit at seed 0 beside the interval of the refits) is joined to the interval by a
    dotted line and marked "outside".
    """
    ax = get_axes(ax, (9, 0.45 * len(result.table) + 1.5))
    t = result.table
    orders = list(dict.fromkeys(t["order"]))
    colours = matplotlib.colormaps["tab10"]
    y = np.arange(len(t))[::-1]
    outside = 0
    for yi, (name, r) in zip(y, t.iterrows()):
        if show_replicates:
            mics = result.replicates.loc[result.replicates["perturbation"] == name, "mic"]
            ax.plot(mics, np.full(len(mics), yi), "|", color="0.6", markersize=7, zorder=1)
        c = colours(orders.index(r["order"]) % 10)
        ax.plot([r["mic_lo"], r["mic_hi"]], [yi, yi], "-", color=c, linewidth=2.5, zorder=2)
        same = _truthy(r["default_order"])
        marker = "*" if _truthy(r["paper_order"]) else "o"
        ax.plot(
            r["mic"],
            yi,
            marker,
            markersize=9 if marker == "o" else 13,
            zorder=3,
            markerfacecolor=c if same else "white",
            markeredgecolor=c,
            markeredgewidth=2,
        )
        edge = r["mic_lo"] if r["mic"] < r["mic_lo"] else r["mic_hi"]
        if not r["mic_lo"] <= r["mic"] <= r["mic_hi"]:  # the point fit lies outside its band
            outside += 1
            ax.plot([edge, r["mic"]], [yi, yi], ":", color=c, linewidth=1.5, zorder=2)
            ax.annotate(
                "outside",
                (r["mic"], yi),
                xytext=(0, 7),
                textcoords="offset points",
                ha="left" if r["mic"] < 0.02 else "center",
                va="bottom",
                fontsize=9,
                color=c,
            )
    ax.set_yticks(y, list(t.index))
    ax.set_xlabel("MIC of HCA on the four domains")
    ax.set_xlim(left=0)
    handles = [
        Line2D([], [], marker="o", linestyle="", color=colours(i % 10), label=o)
        for i, o in enumerate(orders)
    ]
    if outside:
        handles.append(
            Line2D(
                [], [], linestyle=":", color="0.3", label="point fit outside its interval (dotted)"
            )
        )
    ax.legend(
        handles=handles,
        title="recovered order (z1 > z2 > ...)",
        fontsize="small",
        title_fontsize="small",
        loc="upper center",
        bbox_to_anchor=(0.5, -0.12),
        ncol=2,
        frameon=False,
    )
    ax.grid(axis="x", alpha=0.3)
    return ax


def plot_s_inv_membership(
    result: Any,
    candidates: Sequence[str],
    ax: Axes | None = None,
    *,
    highlight: Sequence[str] = (),
    highlight_label: str = "highlighted",
    short: Mapping[str, str] | None = None,
) -> Axes:
    """Which candidates are in S_inv under each perturbation (filled: member).

    ``result.table`` has one row per perturbation with ``s_inv`` (tuple) and
    ``s_inv_recomputed`` (e.g. :class:`hca.paper.robustness.RobustnessTable`). Rows whose
    S_inv was not recomputed (the ICA perturbations) are drawn hatched; the candidates in
    ``highlight`` (e.g. a published S_inv) are outlined on top and named ``highlight_label``
    in the title.
    """
    ax = get_axes(ax, (0.6 * len(candidates) + 2, 0.45 * len(result.table) + 1.5))
    t = result.table
    short = dict(short or {})
    y = np.arange(len(t))[::-1]
    for yi, (_, r) in zip(y, t.iterrows()):
        for j, cand in enumerate(candidates):
            member = cand in r["s_inv"]
            ax.add_patch(
                Rectangle(
                    (j - 0.4, yi - 0.35),
                    0.8,
                    0.7,
                    facecolor=("#4C72B0" if r["s_inv_recomputed"] else "#A9BCD9")
                    if member
                    else "white",
                    edgecolor="0.5",
                    hatch=None if r["s_inv_recomputed"] else "//",
                )
            )
    for j, cand in enumerate(candidates):
        if cand in highlight:
            ax.add_patch(
                Rectangle(
                    (j - 0.48, y.min() - 0.45),
                    0.96,
                    y.max() - y.min() + 0.9,
                    fill=False,
                    edgecolor="#DD8452",
                    linewidth=2,
                )
            )
    ax.set_xlim(-0.6, len(candidates) - 0.4)
    ax.set_ylim(y.min() - 0.6, y.max() + 0.6)
    ax.set_xticks(
        range(len(candidates)), [short.get(c, c) for c in candidates], rotation=40, ha="right"
    )
    ax.set_yticks(y, list(t.index))
    ax.set_title(f"S_inv (filled: member; orange: {highlight_label})", fontsize="medium")
    return ax
