"""The scorecard at a glance: verdicts by chapter and setup, and the headline claims' stability."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from hca.plots.axes import get_axes_grid

__all__ = ["VERDICT_COLORS", "plot_verdict_summary"]

#: One colour per verdict (colour-blind safe; the book's scorecard table uses the same).
VERDICT_COLORS: dict[str, str] = {
    "reproduced": "#1b9e77",
    "partly": "#e6ab02",
    "not reproduced": "#d95f02",
    "not determined": "#7570b3",
    "not applicable": "#bbbbbb",
}


def plot_verdict_summary(
    counts: pd.DataFrame, shares: pd.DataFrame | None = None, axes: Sequence[Axes] | None = None
) -> list[Axes]:
    """Claims per chapter and setup as bars coloured by verdict, above the headline shares.

    The panels are stacked and every row's label is written above its bars, so that the figure
    is 4.8 inches wide: on a phone's screen (390 CSS px) it fits the text column with its text
    still legible (the book's landing figure).

    Parameters
    ----------
    counts : DataFrame
        Index: chapter labels (top to bottom); columns: a MultiIndex ``(setup, verdict)`` of
        claim counts (as :meth:`hca.paper.scorecard.Scorecard.by_chapter` returns).
    shares : DataFrame, optional
        Headline claims (rows) by setup (columns): the share of refits in which the claim
        holds (0-1). Drawn as a second panel, below the first, when given.
    axes : sequence of two Axes, optional

    Returns
    -------
    list of Axes
    """
    if not isinstance(counts.columns, pd.MultiIndex) or counts.columns.nlevels != 2:
        raise ValueError("plot_verdict_summary: counts needs (setup, verdict) columns")
    setups = list(dict.fromkeys(counts.columns.get_level_values(0)))
    verdicts = [v for v in VERDICT_COLORS if v in set(counts.columns.get_level_values(1))]
    n, m = len(counts), 0 if shares is None else len(shares)
    nrows = 2 if shares is not None else 1
    axes = get_axes_grid(
        axes,
        nrows,
        1,
        figsize=(4.8, 0.62 * (n + m) + 1.3 * nrows),
        gridspec_kw={"height_ratios": [n + 0.9, m + 0.9][:nrows]},
        layout="constrained",  # room for the legend below panel (a)
    ).ravel()
    height = 0.8 / max(len(setups), 2) * 0.7
    ax = axes[0]
    y0 = np.arange(n)[::-1].astype(float)
    for k, setup in enumerate(setups):
        y = y0 - 0.12 - height * (k - 0.5)
        left = np.zeros(n)
        for v in verdicts:
            vals = counts[(setup, v)].to_numpy(float)
            ax.barh(
                y,
                vals,
                height * 0.92,
                left=left,
                color=VERDICT_COLORS[v],
                label=v if k == 0 else None,
                edgecolor="white",
                linewidth=0.5,
            )
            for yy, ll, vv in zip(y, left, vals):
                if vv >= 3:
                    ax.text(ll + vv / 2, yy, f"{vv:.0f}", ha="center", va="center", fontsize=9)
            left += vals
        for yy, total in zip(y, left):
            ax.text(total + 0.4, yy, setup, va="center", fontsize=9, color="#444444")
    _row_labels(ax, y0, counts.index)
    ax.set_xlabel("analysis claims")
    ax.set_xlim(0, counts.T.groupby(level=0).sum().T.to_numpy().max() * 1.25)
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.085 * 9 / (n + 0.9)),
        ncols=min(3, len(verdicts)),
        frameon=False,
        fontsize=9,
    )
    ax.set_title("(a) verdicts by chapter and setup", loc="left", fontsize=11)
    if shares is None:
        return [ax]
    bx = axes[1]
    yb = np.arange(m)[::-1].astype(float)
    colors = ("#4c72b0", "#dd8452", "#55a868")
    for k, setup in enumerate(shares.columns):
        y = yb - 0.12 - height * (k - 0.5)
        vals = shares[setup].to_numpy(float)
        bx.barh(y, vals, height * 0.92, color=colors[k % len(colors)], label=str(setup))
        for yy, vv in zip(y, vals):
            bx.text(vv + 0.02, yy, f"{vv:.0%} {setup}", va="center", fontsize=9, color="#444444")
    _row_labels(bx, yb, [str(i).replace("\n", " ") for i in shares.index])
    bx.set_xlim(0, 1.3)
    bx.set_xticks([0, 0.5, 1], ["0", "50%", "100%"])
    bx.set_xlabel("share of refits in which it holds")
    bx.set_title("(b) headline claims", loc="left", fontsize=11)
    return [ax, bx]


def _row_labels(ax: Axes, y: np.ndarray, labels: Sequence[object]) -> None:
    """Every row's label above its bars (instead of tick labels beside them)."""
    for yy, label in zip(y, labels):
        ax.text(0, yy + 0.24, str(label), va="bottom", ha="left", fontsize=9.5)
    ax.set_yticks([])
    ax.set_ylim(-0.7, len(y) - 0.35)
    ax.spines[["top", "right", "left"]].set_visible(False)
