"""Figures of HCA fits: matrices, causal graphs, MIC by subset (Figures 3-4, 17-21)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import Circle, FancyArrowPatch, Patch

from hca.plots.axes import annotate_cells, benchmark_label, get_axes, get_axes_grid
from hca.validation import check_labels, check_matrix

__all__ = [
    "plot_matrix",
    "plot_unmixing",
    "plot_mixing",
    "plot_scm_weights",
    "plot_causal_graph",
    "plot_mic_by_subset",
    "plot_reconstruction_error",
    "plot_domain_scms",
    "plot_domain_graphs",
]


POS_COLOR = "#2166ac"  # positive weights
NEG_COLOR = "#b2182b"  # negative weights
NODE_COLOR = "#f7f7f7"


def plot_matrix(
    M: Any,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    ax: Axes | None = None,
    *,
    title: str | None = None,
    cmap: str = "RdBu_r",
    fmt: str = "{:.2f}",
    vmax: float | None = None,
    colorbar: bool = True,
    mask_zero: bool = False,
    fontsize: float = 9,
) -> Axes:
    """Annotated heatmap of ``M`` with a colour scale symmetric about zero.

    Parameters
    ----------
    M : array-like of shape (n_rows, n_cols)
    row_labels, col_labels : sequence of str, optional
    ax : Axes, optional
    title : str, optional
    cmap : str, default "RdBu_r"
    fmt : str, default "{:.2f}"
        Format of the cell annotations.
    vmax : float, optional
        Colour limit (default: the largest absolute entry).
    colorbar : bool, default True
    mask_zero : bool, default False
        Leave exact zeros blank (e.g. the upper triangle of an SCM matrix).
    fontsize : float, default 9

    Returns
    -------
    Axes
    """
    arr = check_matrix(M, name="M")
    rows = check_labels(row_labels, arr.shape[0], "row_labels")
    cols = check_labels(col_labels, arr.shape[1], "col_labels")
    ax = get_axes(ax, (1.0 + 0.9 * arr.shape[1], 0.8 + 0.5 * arr.shape[0]))
    limit = float(vmax) if vmax is not None else float(np.max(np.abs(arr))) or 1.0
    shown = np.ma.masked_where(arr == 0, arr) if mask_zero else arr
    im = ax.imshow(shown, cmap=cmap, vmin=-limit, vmax=limit, aspect="auto")
    texts = [
        [None if mask_zero and v == 0 else _no_negative_zero(fmt.format(v)) for v in row]
        for row in arr
    ]
    annotate_cells(ax, texts, np.abs(arr) > 0.6 * limit, fontsize=fontsize)
    ax.set_xticks(range(arr.shape[1]))
    ax.set_yticks(range(arr.shape[0]))
    ax.set_xticklabels(
        cols if cols is not None else range(arr.shape[1]),
        rotation=30 if cols and max(len(c) for c in cols) > 4 else 0,
        ha="right" if cols and max(len(c) for c in cols) > 4 else "center",
    )
    ax.set_yticklabels(rows if rows is not None else range(arr.shape[0]))
    ax.tick_params(length=0)
    if title:
        ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.03)
    return ax


def _factor_labels(d: int, names: Sequence[str] | None) -> list[str]:
    return [f"z{i + 1}" for i in range(d)] if names is None else [str(n) for n in names]


def plot_unmixing(
    H: Any,
    benchmarks: Sequence[str],
    ax: Axes | None = None,
    *,
    factor_names: Sequence[str] | None = None,
    **kwargs: Any,
) -> Axes:
    """The unmixing matrix ``H`` (``z = H x``): factors as rows, benchmarks as columns
    (``kwargs``, e.g. ``title``, go to :func:`plot_matrix`)."""
    arr = check_matrix(H, name="H")
    return plot_matrix(
        arr,
        _factor_labels(arr.shape[0], factor_names),
        [benchmark_label(b) for b in benchmarks],
        ax,
        **kwargs,
    )


def plot_mixing(
    G: Any,
    benchmarks: Sequence[str],
    ax: Axes | None = None,
    *,
    factor_names: Sequence[str] | None = None,
    **kwargs: Any,
) -> Axes:
    """The mixing matrix ``G`` (``x = G z``): benchmarks as rows, factors as columns
    (``kwargs``, e.g. ``title``, go to :func:`plot_matrix`)."""
    arr = check_matrix(G, name="G")
    return plot_matrix(
        arr,
        [benchmark_label(b) for b in benchmarks],
        _factor_labels(arr.shape[1], factor_names),
        ax,
        **kwargs,
    )


def _no_negative_zero(text: str) -> str:
    """``"-0.00"`` -> ``"0.00"`` (a value that rounds to zero has no sign)."""
    return text[1:] if re.fullmatch(r"[-−]0(\.0+)?", text) else text


def _scm_parts(scm: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, str | None]:
    """``(B, A, omega_sqrt, name)`` of a DomainSCM or of a lower-triangular ``B``."""
    if all(hasattr(scm, a) for a in ("A", "omega_sqrt", "B")):
        return (
            np.asarray(scm.B, float),
            np.asarray(scm.A, float),
            np.asarray(scm.omega_sqrt, float),
            str(getattr(scm, "domain", "")) or None,
        )
    B = check_matrix(scm, name="B")
    if B.shape[0] != B.shape[1] or np.any(np.triu(B, 1) != 0) or np.any(np.diag(B) <= 0):
        raise ValueError("B must be square, lower-triangular with a positive diagonal")
    omega = 1.0 / np.diag(B)
    A = np.tril(np.eye(len(B)) - omega[:, None] * B, -1)
    return B, A, omega, None


def plot_scm_weights(
    scm: Any,
    ax: Axes | None = None,
    *,
    kind: str = "total",
    title: str | None = None,
    **kwargs: Any,
) -> Axes:
    """One domain's SCM as a matrix (Figure 17, second column).

    Parameters
    ----------
    scm : DomainSCM or array-like
        A :class:`hca.estimator.DomainSCM`, or a lower-triangular ``B`` with positive
        diagonal (sources ``ε = B z``).
    kind : {"total", "structural"}, default "total"
        ``"total"``: ``B^{-1}`` (rows ``z_i``, columns ``ε_j``: ``z = B^{-1} ε``), as the
        authors plot it. ``"structural"``: rows ``z_i``, the edge weights ``A[i, j]`` of
        ``z_j -> z_i`` below the diagonal and the source scale of ``ε_i`` on it.
    """
    if kind not in ("total", "structural"):
        raise ValueError(f"kind must be 'total' or 'structural', got {kind!r}")
    B, A, omega, name = _scm_parts(scm)
    d = len(B)
    if kind == "total":
        M, cols = np.linalg.inv(B), [f"ε{j + 1}" for j in range(d)]
    else:
        M, cols = A + np.diag(omega), [f"z{j + 1} | ε{j + 1}" for j in range(d)]
    kwargs.setdefault("mask_zero", True)
    kwargs.setdefault("fmt", "{:.3g}")
    return plot_matrix(
        np.where(np.abs(M) < 1e-12, 0.0, M),
        _factor_labels(d, None),
        cols,
        ax,
        title=title if title is not None else name,
        **kwargs,
    )


def _edge_label_point(p0: np.ndarray, p1: np.ndarray, rad: float) -> np.ndarray:
    """Midpoint of matplotlib's ``arc3,rad=rad`` curve from ``p0`` to ``p1``."""
    dx, dy = p1 - p0
    return (p0 + p1) / 2 + 0.5 * rad * np.array([dy, -dx])


def _trimmed_arc(p0: np.ndarray, p1: np.ndarray, rad: float, gap: float):
    """End points moved ``gap`` along the curve's tangents, and the ``rad`` that keeps the
    same control point (so the arrow starts and ends on the node circles)."""
    dx, dy = p1 - p0
    control = (p0 + p1) / 2 + rad * np.array([dy, -dx])
    q0 = p0 + gap * (control - p0) / np.linalg.norm(control - p0)
    q1 = p1 + gap * (control - p1) / np.linalg.norm(control - p1)
    d = q1 - q0
    new_rad = float(np.dot(control - (q0 + q1) / 2, np.array([d[1], -d[0]])) / np.dot(d, d))
    return q0, q1, new_rad


def plot_causal_graph(
    scm: Any,
    ax: Axes | None = None,
    *,
    title: str | None = None,
    fmt: str = "{:.2f}",
    scale_fmt: str = "{:.3g}",
    min_abs: float = 0.0,
    show_sources: bool = True,
    factor_names: Sequence[str] | None = None,
    node_labels: Sequence[str] | None = None,
) -> Axes:
    """A domain's causal graph with edge weights and source scales (Figure 4).

    Nodes ``z1..zd`` are placed left to right in causal order; the edge ``z_j -> z_i``
    carries ``A[i, j]`` (blue positive, red negative, width growing with ``|A[i, j]|``);
    edges skipping nodes arc above. With ``show_sources`` every ``ε_i`` sits below its
    node with the scale ``omega_sqrt[i]`` on its arrow, so the equations read
    ``z_i = sum_j A[i, j] z_j + omega_sqrt[i] ε_i``.

    Parameters
    ----------
    scm : DomainSCM or array-like
        As in :func:`plot_scm_weights`.
    ax : Axes, optional
    title : str, optional
        Default: the domain name of a DomainSCM.
    fmt, scale_fmt : str
        Formats of the edge weights and the source scales.
    min_abs : float, default 0
        Edges with ``|weight| < min_abs`` are drawn dashed and grey.
    show_sources : bool, default True
    factor_names : sequence of str, optional
        Node names (default ``z1..zd``).
    node_labels : sequence of str, optional
        A second line under each node name (e.g. the aligned benchmark).
    """
    _, A, omega, name = _scm_parts(scm)
    d = len(A)
    names = _factor_labels(d, factor_names)
    extra = check_labels(node_labels, d, "node_labels")
    ax = get_axes(ax, (1.6 + 1.6 * d, 3.2))
    xs = np.arange(d, dtype=float) * 2.0
    pos = [np.array([x, 0.0]) for x in xs]
    radius = 0.42
    wmax = max(float(np.max(np.abs(A))), 1e-12)
    for i in range(d):
        for j in range(i):
            w = float(A[i, j])
            rad = 0.0 if i - j == 1 else -0.25 - 0.05 * (i - j)
            weak = abs(w) < min_abs
            color = "#999999" if weak else (POS_COLOR if w >= 0 else NEG_COLOR)
            q0, q1, qrad = _trimmed_arc(pos[j], pos[i], rad, radius + 0.03)
            arrow = FancyArrowPatch(
                q0,
                q1,
                connectionstyle=f"arc3,rad={qrad}",
                arrowstyle="-|>",
                mutation_scale=14,
                lw=0.8 + 2.2 * abs(w) / wmax,
                color=color,
                linestyle="--" if weak else "-",
                shrinkA=0,
                shrinkB=0,
                zorder=1,
            )
            ax.add_patch(arrow)
            lx, ly = _edge_label_point(q0, q1, qrad)
            ax.text(
                lx,
                ly + (0.12 if rad == 0 else 0.0),
                fmt.format(w),
                ha="center",
                va="bottom" if rad == 0 else "center",
                fontsize=9,
                color=color,
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85),
                zorder=3,
            )
    for i, p in enumerate(pos):
        ax.add_patch(Circle(p, radius, fc=NODE_COLOR, ec="black", lw=1.2, zorder=2))
        ax.text(
            p[0], p[1], names[i], ha="center", va="center", fontsize=11, fontweight="bold", zorder=4
        )
        if extra is not None:
            ax.text(
                p[0],
                p[1] - radius - 0.12,
                extra[i],
                ha="center",
                va="top",
                fontsize=9,
                color="#444444",
                zorder=4,
            )
        if show_sources:
            src = p + np.array([0.0, -1.55])
            ax.annotate(
                "",
                xy=(p[0], p[1] - radius - (0.32 if extra is not None else 0.02)),
                xytext=(src[0], src[1] + 0.2),
                arrowprops=dict(arrowstyle="-|>", color="#555555", lw=1.0),
            )
            ax.text(
                src[0], src[1], f"ε{i + 1}", ha="center", va="center", fontsize=10, color="#333333"
            )
            ax.text(
                src[0] + 0.12,
                src[1] + 0.62,
                scale_fmt.format(omega[i]),
                ha="left",
                va="center",
                fontsize=9,
                color="#333333",
            )
    top = 0.45 + 0.55 * max(1, d - 1)
    ax.set_xlim(xs[0] - 0.9, xs[-1] + 0.9)
    ax.set_ylim(-1.95 if show_sources else -0.9, top)
    ax.set_aspect("equal")
    ax.axis("off")
    title = title if title is not None else name
    if title:
        ax.set_title(title)
    return ax


def plot_mic_by_subset(
    table: pd.DataFrame,
    ax: Axes | None = None,
    *,
    highlight: Sequence[Any] | None = None,
    mark: Any = None,
    short_names: Mapping[Any, str] | None = None,
    reference: Mapping[str, float] | None = None,
    sort: bool = True,
) -> Axes:
    """The MIC of every domain subset as horizontal bars (Figure 18).

    Parameters
    ----------
    table : DataFrame
        With columns ``subset`` (tuple of domain labels) and ``mic``, as returned by
        :func:`hca.estimator.mic_by_subset`.
    highlight : sequence, optional
        A subset to outline in black (e.g. the paper's choice).
    mark : hashable, optional
        A domain: bars of subsets containing it are orange, the others blue.
    short_names : mapping, optional
        Short label of every domain (default: the labels themselves).
    reference : mapping, optional
        Vertical reference lines, label -> value.
    sort : bool, default True
        Smallest MIC at the top.
    """
    for col in ("subset", "mic"):
        if col not in table.columns:
            raise ValueError(f"table lacks column {col!r}")
    data = table.sort_values("mic") if sort else table
    short = dict(short_names or {})
    labels = [", ".join(short.get(x, str(x)) for x in s) for s in data["subset"]]
    ax = get_axes(ax, (7.5, 0.8 + 0.32 * len(data)))
    y = np.arange(len(data))[::-1]
    colors = ["#dd8452" if mark is not None and mark in s else "#4c72b0" for s in data["subset"]]
    bars = ax.barh(y, data["mic"], color=colors)
    target = tuple(highlight) if highlight is not None else None
    for bar, s in zip(bars, data["subset"]):
        if target is not None and set(s) == set(target):
            bar.set_edgecolor("black")
            bar.set_linewidth(2.0)
    for yy, v in zip(y, data["mic"]):
        ax.text(v, yy, f" {v:.3f}", va="center", fontsize=8)
    handles = []
    if mark is not None:
        handles = [
            Patch(color="#dd8452", label=f"contains {short.get(mark, mark)}"),
            Patch(color="#4c72b0", label=f"without {short.get(mark, mark)}"),
        ]
    if target is not None:
        handles.append(Patch(fc="white", ec="black", lw=2.0, label="highlighted subset"))
    for k, (label, value) in enumerate((reference or {}).items()):
        handles.append(
            ax.axvline(value, color="0.3", ls=["--", ":", "-."][k % 3], lw=1, label=label)
        )
    if handles:
        ax.legend(handles=handles, loc="upper right", fontsize=8)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlabel("MIC (maximum inexactness coefficient)")
    ax.set_xlim(0, float(data["mic"].max()) * 1.18)
    return ax


def plot_reconstruction_error(
    table: pd.DataFrame,
    ax: Axes | None = None,
    *,
    column: str = "relative_error",
    title: str | None = None,
) -> Axes:
    """Low-rank approximation error per benchmark (Figure 19).

    ``table`` is :meth:`hca.estimator.HCA.reconstruction_error` (benchmarks as the index).
    """
    if column not in table.columns:
        raise ValueError(f"table lacks column {column!r}; it has {list(table.columns)}")
    ax = get_axes(ax, (5.5, 3.0))
    labels = [benchmark_label(b) for b in table.index]
    ax.bar(labels, table[column], color="#4c72b0")
    for k, v in enumerate(table[column]):
        ax.text(k, v, f"{v:.3g}", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel(column.replace("_", " "))
    ax.tick_params(axis="x", rotation=30)
    if title:
        ax.set_title(title)
    return ax


def plot_domain_scms(
    model: Any, benchmarks: Sequence[str], axes: Any = None, *, ncols: int = 3
) -> np.ndarray:
    """Every domain's structural weights (with its inexactness alpha) of a fitted
    :class:`~hca.estimator.HCA`, then the shared mixing matrix G, on a grid of ``ncols``
    columns (Figure 24). Returns the grid of axes."""
    n = len(model.domains_) + 1
    nrows = -(-n // ncols)
    grid = get_axes_grid(axes, nrows, ncols, figsize=(10, 3.1 * nrows))
    flat = grid.ravel()
    for ax, d in zip(flat, model.domains_):
        plot_scm_weights(
            model.models_[d],
            ax=ax,
            kind="structural",
            colorbar=False,
            title=f"{d} (α = {model.inexactness_[d]:.3f})",
        )
    plot_mixing(
        model.mixing_, list(benchmarks), ax=flat[-1], title="mixing matrix G", colorbar=False
    )
    grid[0, 0].figure.tight_layout()
    return grid


def plot_domain_graphs(
    models: Mapping[str, Any], node_labels: Sequence[str], axes: Any = None, *, ncols: int = 2
) -> np.ndarray:
    """Every domain's causal graph (:func:`plot_causal_graph`) on a grid of ``ncols``
    columns; unused panels are switched off. Returns the grid of axes."""
    nrows = -(-len(models) // ncols)
    grid = get_axes_grid(axes, nrows, ncols, figsize=(8, 2.8 * nrows))
    flat = grid.ravel()
    for ax, d in zip(flat, models):
        plot_causal_graph(models[d], ax=ax, node_labels=list(node_labels))
    for ax in flat[len(models) :]:
        ax.axis("off")
    grid[0, 0].figure.tight_layout()
    return grid
