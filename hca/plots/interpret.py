"""Figures of the interpretation of the factors (Figure 3, Table 2, Appendix D).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from hca.interpret import Alignment, base_checkpoint_mask
from hca.plots.axes import benchmark_label, get_axes
from hca.plots.estimator import plot_unmixing

__all__ = [
    "plot_adjusted_unmixing",
    "plot_alignment",
    "plot_compute",
    "plot_instruct_shift",
]


def plot_adjusted_unmixing(alignment: Alignment, ax=None, benchmark_units: bool = False):
    """Heatmap of the adjusted unmixing matrix (Figure 3a), via :func:`hca.plots.plot_unmixing`.

    Rows are labelled with the factor and the benchmark it is aligned with; with
    ``benchmark_units=True`` each row is divided by its slope (see
    :meth:`Alignment.unmixing_frame`). Returns the axes.
    """

    U = alignment.unmixing_frame(benchmark_units)
    names = [f"{z} ({benchmark_label(b)})" for z, b in zip(U.index, alignment.benchmarks)]
    title = ("adjusted unmixing (benchmark → factor)"
             + (", per benchmark point" if benchmark_units else ""))
    return plot_unmixing(U.to_numpy(), list(alignment.feature_names), ax,
                          factor_names=names, title=title)


def plot_alignment(alignment: Alignment, factor: int, in_sample: pd.DataFrame,
                   others: Mapping[str, pd.DataFrame] | None = None, ax=None):
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
    ax.scatter(x_in, alignment.factors(in_sample)[:, factor], s=8, c="0.6", alpha=0.6,
               label=f"in sample ({len(x_in)})", rasterized=True)
    for name, rows in (others or {}).items():
        if len(rows) == 0:
            continue
        ax.scatter(rows[bench], alignment.factors(rows)[:, factor], s=10, alpha=0.7,
                   label=f"{name} ({len(rows)})", rasterized=True)
    grid = np.linspace(np.nanmin(x_in), np.nanmax(x_in), 50)
    ax.plot(grid, alignment.line(factor, grid), "k-", lw=1.5, label="fitted OLS line")
    ax.set_xlabel(f"{benchmark_label(bench)} (normalized score)")
    ax.set_ylabel(f"adjusted {z}")
    ax.set_title(f"{z} vs {benchmark_label(bench)} (in-sample R² = "
                 f"{alignment.r2_table.loc[z, bench]:.2f})", fontsize=10)
    return ax


def plot_compute(alignment: Alignment, frame: pd.DataFrame, factor: int, ax=None,
                 label_top: int = 0):
    """Adjusted factor ``factor`` (0-based) against log10 pretraining compute.

    All models with a known compute are small grey dots; official base checkpoints are
    larger black dots (``label_top`` of them, largest compute first, are labelled).
    """
    from hca.attribution.compute import add_compute

    ax = get_axes(ax)
    df = frame if "log10_compute" in frame.columns else add_compute(frame)
    df = df[np.isfinite(df["log10_compute"].to_numpy(dtype=float))]
    z = alignment.factors(df[list(alignment.feature_names)])[:, factor]
    base = base_checkpoint_mask(df).to_numpy()
    ax.scatter(df["log10_compute"], z, s=5, c="0.7", alpha=0.5, label="all models",
               rasterized=True)
    ax.scatter(df.loc[base, "log10_compute"], z[base], s=18, c="k", label="base checkpoints")
    if label_top:
        sub = df[base].assign(_z=z[base]).nlargest(label_top, "log10_compute")
        for _, r in sub.iterrows():
            ax.annotate(str(r["base_model"]), (r["log10_compute"], r["_z"]), fontsize=6)
    name = alignment.factor_names[factor]
    ax.set_xlabel("log10 pretraining compute (FLOPs, C = 6ND)")
    ax.set_ylabel(f"adjusted {name} ({benchmark_label(alignment.benchmarks[factor])}-aligned)")
    return ax


def plot_instruct_shift(shifts: pd.DataFrame, factor_names: Sequence[str], ax=None,
                        highlight: Sequence[str] = ()):
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
