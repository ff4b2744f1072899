"""Interpreting HCA's latent factors (Section 4, Appendices D, H.1 and I of the paper).

The paper aligns every recovered factor ``z_i`` with its "most indicative" benchmark by the
OLS ``z_i ~ z_1..z_{i-1} + x_B + const`` (:meth:`hca.estimator.HCA.adjust`), reports the R^2
of these regressions (Table 2a), applies the fitted regressions to base models outside the
fit (Table 2b, Figure 3b), and reads the factors with outside evidence: pretraining compute
for ``z_1``, official instruct checkpoints and its own instruction fine-tuning for ``z_2``
(Figure 8), MATH for ``z_3`` (Appendix D). This module holds those steps.

:func:`align` adds to an :class:`~hca.estimator.OLSAdjustment` the intercept and slope of
every factor's fitted OLS line (Figure 3b). :func:`out_of_sample_r2` is Table 2b, following the
authors' code (``scripts/find_proximal_benchmark.ipynb`` of hlzhang109/causal-eval): the
prediction of ``z_i`` is ``c + a . z_{<i} + gamma x_B`` and the R^2 is taken against the
unadjusted ``z_i`` of the new domain; ``controls=False`` asks how much of the *adjusted*
factor the benchmark alone tracks.

Conventions: factors are ``z = H x`` on the leaderboard's normalized scores (0-100), not
centred, as in :meth:`hca.estimator.HCA.transform`; adjusted factors are ``L z``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import leaves_list, linkage, optimal_leaf_ordering
from scipy.spatial.distance import squareform

from hca.data.registry import benchmark_label
from hca.data.tables import FIGURE8_CHECKPOINTS, FIGURE8_COLUMNS
from hca.estimator.results import DomainSCM, r_squared
from hca.validation import check_frame, check_is_fitted, check_matrix

__all__ = [
    "Alignment",
    "align",
    "TransferR2",
    "out_of_sample_r2",
    "base_checkpoint_mask",
    "official_pairs",
    "factor_change",
    "instruct_shift",
    "figure8_table",
    "noise_shares",
    "cluster_order",
    "BENCHMARK_UNIT_RULES",
    "benchmark_unit_models",
]


_TOL = 1e-6


# =========================================================================== alignment
@dataclass(frozen=True, eq=False)
class Alignment:
    """The OLS alignment of Section 4 with the fitted lines of Figure 3b.

    Attributes
    ----------
    factor_names : tuple of str
        ``("z1", "z2", ...)``.
    feature_names : tuple of str
        Benchmark columns, in the order of the unmixing matrix.
    benchmarks : tuple of str
        Benchmark chosen for each factor (largest in-sample R^2).
    H : ndarray of shape (d, p)
        HCA's unmixing matrix before the adjustment (``z = H x``).
    L : ndarray of shape (d, d)
        Unit lower-triangular adjustment, adjusted factors ``L z``.
    controls : ndarray of shape (d, d)
        Strictly lower-triangular OLS coefficients of the earlier adjusted factors.
    slopes, intercepts : ndarray of shape (d,)
        ``gamma_i`` and ``c_i`` of the fitted OLS
        ``z_i = c_i + sum_j controls[i, j] z_adj_j + gamma_i x_B``; the adjusted factor
        follows the line ``z_adj_i = c_i + gamma_i x_B`` up to the OLS residual.
    r2_table : DataFrame
        In-sample R^2 of every factor on every benchmark, earlier factors as controls
        (Table 2a).
    """

    factor_names: tuple
    feature_names: tuple
    benchmarks: tuple
    H: np.ndarray
    L: np.ndarray
    controls: np.ndarray
    slopes: np.ndarray
    intercepts: np.ndarray
    r2_table: pd.DataFrame

    @property
    def unmixing(self) -> np.ndarray:
        """Adjusted unmixing matrix ``L H`` (Figure 3a): ``z_adj = (L H) x``."""
        return self.L @ self.H

    @property
    def benchmark_index(self) -> np.ndarray:
        """Column index of the benchmark chosen for every factor."""
        return np.array([self.feature_names.index(b) for b in self.benchmarks])

    def unmixing_frame(self, benchmark_units: bool = False) -> pd.DataFrame:
        """Adjusted unmixing matrix as a labelled frame (factors x benchmarks); with
        ``benchmark_units=True`` every row is divided by its slope ``gamma_i`` (the authors'
        scaling: factors in points of their chosen benchmark)."""
        U = self.unmixing / self.slopes[:, None] if benchmark_units else self.unmixing
        return pd.DataFrame(
            U,
            index=list(self.factor_names),
            columns=[benchmark_label(b) for b in self.feature_names],
        )

    def _scores(self, X: Any, method: str) -> np.ndarray:
        return check_matrix(X, name=f"Alignment.{method}: X", columns=self.feature_names)

    def raw_factors(self, X: Any) -> np.ndarray:
        """Unadjusted factors ``z = H x`` of the rows of ``X`` (not centred)."""
        return self._scores(X, "raw_factors") @ self.H.T

    def factors(self, X: Any) -> np.ndarray:
        """Adjusted factors ``L H x`` of the rows of ``X`` (not centred)."""
        return self._scores(X, "factors") @ self.unmixing.T

    def line(self, i: int, x: Any) -> np.ndarray:
        """The fitted line ``c_i + gamma_i x`` of factor ``i`` (0-based) at benchmark scores ``x``."""
        return self.intercepts[i] + self.slopes[i] * np.asarray(x, dtype=float)

    def residuals(self, X: Any) -> np.ndarray:
        """Residuals ``z_adj_i - c_i - gamma_i x_B`` of the fitted OLS, shape (n, d)."""
        values = self._scores(X, "residuals")
        Zadj = values @ self.unmixing.T
        return Zadj - self.intercepts - self.slopes * values[:, self.benchmark_index]

    def r2(self, X: Any, controls: bool = True) -> pd.Series:
        """R^2 of the fitted OLS on the rows of ``X`` (coefficients are not refitted).

        Parameters
        ----------
        X : DataFrame or array
            Benchmark scores.
        controls : bool, default True
            True: the paper's definition, ``c + a . z_{<i} + gamma x_B`` predicting the
            unadjusted ``z_i``. False: the line ``c + gamma x_B`` predicting the adjusted factor.

        Returns
        -------
        Series indexed by factor name; can be negative out of sample.
        """
        values = self._scores(X, "r2")  # checked once
        resid = self.residuals(values)
        target = self.raw_factors(values) if controls else self.factors(values)
        return pd.Series(
            [r_squared(target[:, i], resid[:, i]) for i in range(len(self.factor_names))],
            index=list(self.factor_names),
            name="R2",
        )

    def summary(self) -> str:
        """Chosen benchmarks, lines and in-sample R^2."""
        lines = ["OLS alignment (factors in leaderboard points):"]
        for i, (z, b) in enumerate(zip(self.factor_names, self.benchmarks)):
            lines.append(
                f"  {z} ~ {benchmark_label(b)}: z_adj = {self.intercepts[i]:.3g} + {self.slopes[i]:.3g} x, "
                f"R^2 = {self.r2_table.loc[z, b]:.3f}"
            )
        return "\n".join(lines)


def align(model: Any, X: Any, adjustment: Any = None) -> Alignment:
    """Build the :class:`Alignment` of a fitted HCA on its training data.

    Parameters
    ----------
    model : hca.estimator.HCA
        A fitted estimator.
    X : DataFrame or array
        The scores the adjustment was fitted on (the pooled training data of ``model``).
    adjustment : hca.estimator.OLSAdjustment, optional
        Default ``model.adjust(X)``.

    Returns
    -------
    Alignment

    Raises
    ------
    ValueError
        If ``model`` is not fitted, or if the OLS on ``X`` does not reproduce the
        adjustment's coefficients (``X`` is not the data the adjustment was fitted on).
    """
    check_is_fitted(model, "unmixing_", msg="align: the %(name)s model is not fitted")
    names = (
        tuple(model.feature_names_in_)
        if hasattr(model, "feature_names_in_")
        else tuple(f"x{j}" for j in range(model.n_features_in_))
    )
    if adjustment is None:
        adjustment = model.adjust(X)
    values = check_matrix(X, name="align: X", columns=names)
    H = np.asarray(model.unmixing_, dtype=float)
    L = np.asarray(adjustment.L, dtype=float)
    Z = values @ H.T
    Zadj = Z @ L.T
    d = H.shape[0]
    slopes, intercepts = np.zeros(d), np.zeros(d)
    ones = np.ones((len(values), 1))
    for i, bench in enumerate(adjustment.benchmarks):
        if bench not in names:
            raise ValueError(f"align: chosen benchmark {bench!r} is not a fitted column {names}")
        b = names.index(bench)
        design = np.hstack([ones, Zadj[:, :i], values[:, [b]]])
        coef, *_ = np.linalg.lstsq(design, Z[:, i], rcond=None)
        a = coef[1 : 1 + i]
        ref = np.asarray(adjustment.coefficients)[i, :i]
        if not np.allclose(
            a, ref, rtol=1e-6, atol=_TOL * max(1.0, float(np.abs(ref).max(initial=0)))
        ):
            raise ValueError(
                "align: the OLS on X does not reproduce the adjustment's coefficients "
                f"for {adjustment.r2.index[i]} ({a} vs {ref}); pass the data the "
                "adjustment was fitted on"
            )
        intercepts[i], slopes[i] = coef[0], coef[-1]
    return Alignment(
        factor_names=tuple(adjustment.r2.index),
        feature_names=names,
        benchmarks=tuple(adjustment.benchmarks),
        H=H,
        L=L,
        controls=np.asarray(adjustment.coefficients, dtype=float),
        slopes=slopes,
        intercepts=intercepts,
        r2_table=adjustment.r2.copy(),
    )


# =========================================================================== benchmark units
#: The two ways of putting the adjusted per-domain SCMs in benchmark units
#: (:func:`benchmark_unit_models`).
BENCHMARK_UNIT_RULES: tuple[str, ...] = ("adjusted", "authors")


def benchmark_unit_models(
    model: Any, alignment: Alignment, *, rule: str = "adjusted"
) -> dict[Any, DomainSCM]:
    """The adjusted per-domain SCMs with every factor in points of its aligned benchmark.

    The OLS adjustment (:meth:`hca.estimator.HCA.adjust`) leaves the factors in the scale of
    HCA's unmixing matrix (unit-norm rows), which no benchmark shares. The authors' code
    (``find_proximal_benchmark.ipynb`` of hlzhang109/causal-eval, cell ``aLIFcVvqIVHz``)
    divides every adjusted factor by ``gamma_i``, the OLS coefficient of the benchmark it is
    aligned with (:attr:`Alignment.slopes`), so that a factor moves one point when its
    benchmark does, other things equal. The sources keep unit variance.

    Parameters
    ----------
    model : hca.estimator.HCA
        The fitted estimator ``alignment`` was built from (:func:`align`).
    alignment : Alignment
        Its OLS alignment (``L``, ``slopes``).
    rule : {"adjusted", "authors"}, default "adjusted"
        ``"adjusted"``: the adjusted factors divided by their slopes, ``u = D^-1 L z`` with
        ``D = diag(gamma)``; an edge weight becomes ``A_ij gamma_j / gamma_i`` of the adjusted
        SCM and a source scale ``omega_i / |gamma_i|``. This is what the authors' code does to
        the unmixing matrix (their Figure 3a). ``"authors"``: the arithmetic of the same cell
        for the per-domain graphs it draws (Figure 4): the rows of ``M`` (``z = M eps``, raw
        factors) are updated in causal order, each one subtracting the *already divided*
        earlier rows with the coefficients that were fitted on the raw factors,
        ``M'_i = (M_i - sum_j<i c_ij M'_j) / gamma_i``, that is ``M' = (D + C)^-1 M`` with
        ``C = I - L``. The two agree on the source scales and on the root's row, not on the
        other edge weights (they would for two factors with ``gamma_1 = 1``).

    Returns
    -------
    dict
        Domain -> :class:`hca.estimator.DomainSCM` (``z_i = sum_j A_ij z_j + omega_i eps_i``,
        every source's sign chosen so that ``omega_i > 0``; weights in benchmark points).

    Raises
    ------
    ValueError
        If ``rule`` is unknown, ``model`` is not fitted, ``alignment`` is not of this fit,
        or a slope is zero or not finite.
    """
    if rule not in BENCHMARK_UNIT_RULES:
        raise ValueError(
            f"benchmark_unit_models: rule {rule!r} is not one of {BENCHMARK_UNIT_RULES}"
        )
    check_is_fitted(
        model, "unmixing_", msg="benchmark_unit_models: the %(name)s model is not fitted"
    )
    H = np.asarray(model.unmixing_, dtype=float)
    if H.shape != alignment.H.shape or not np.allclose(H, alignment.H, rtol=0, atol=1e-12):
        raise ValueError(
            "benchmark_unit_models: the alignment was not built from this model (its H "
            "differs from model.unmixing_); pass the alignment of the same fit"
        )
    gamma = np.asarray(alignment.slopes, dtype=float)
    if not np.all(np.isfinite(gamma)) or np.any(gamma == 0):
        raise ValueError(
            f"benchmark_unit_models: every slope must be finite and non-zero, got {gamma}"
        )
    L = np.asarray(alignment.L, dtype=float)
    D = np.diag(gamma)
    # eps = B z (raw factors): with u = T z the sources read eps = (B T^-1) u
    T_inv = np.linalg.inv(L) @ D if rule == "adjusted" else D + (np.eye(len(L)) - L)
    out = {}
    names = tuple(alignment.factor_names)
    for label, B in model.weights_.items():
        Bu = np.tril(np.asarray(B, dtype=float) @ T_inv)
        Bu = np.sign(np.diag(Bu))[:, None] * Bu  # a source's sign is free: omega > 0
        out[label] = DomainSCM.from_B(label, Bu, model.inexactness_[label], names)
    return out


# =========================================================================== Table 2b
@dataclass(frozen=True, eq=False)
class TransferR2:
    """Out-of-sample R^2 of the fitted alignment (Table 2b).

    Attributes
    ----------
    r2 : DataFrame
        Factors x groups (``"In sample"`` first, then one column per domain); NaN where a
        domain has fewer than ``min_models`` models.
    n_models : Series
        Models per group.
    controls : bool
        Whether the earlier factors were part of the prediction (the paper's definition).
    """

    r2: pd.DataFrame
    n_models: pd.Series
    controls: bool

    def summary(self) -> str:
        """The table with the group sizes."""
        kind = "with earlier factors as controls" if self.controls else "benchmark alone"
        table = self.r2.round(2)
        table.loc["models"] = self.n_models
        return f"Out-of-sample R^2 of the fitted OLS ({kind}):\n{table.to_string()}"


def out_of_sample_r2(
    alignment: Alignment,
    frame: pd.DataFrame,
    domains: Sequence[str],
    in_sample: Sequence[str],
    controls: bool = True,
    min_models: int = 3,
) -> TransferR2:
    """Table 2b: R^2 of the fitted OLS alignment on the models of other base models.

    Parameters
    ----------
    alignment : Alignment
        From :func:`align`.
    frame : DataFrame
        Leaderboard rows with a ``base_model`` column and the benchmark columns.
    domains : sequence of str
        Base models to evaluate (e.g. :data:`PAPER_OOS_DOMAINS`).
    in_sample : sequence of str
        The domains the alignment was fitted on (the ``"In sample"`` column).
    controls : bool, default True
        See :meth:`Alignment.r2`.
    min_models : int, default 3
        Domains with fewer models get NaN (their size is still reported; 0 when absent).

    Returns
    -------
    TransferR2
    """
    check_frame(frame, ["base_model", *alignment.feature_names], context="out_of_sample_r2")
    groups = {"In sample": list(in_sample), **{d: [d] for d in domains}}
    scores = frame[list(alignment.feature_names)]
    r2, sizes = {}, {}
    for name, members in groups.items():
        rows = scores[frame["base_model"].isin(members)]
        sizes[name] = len(rows)
        if len(rows) < max(min_models, 2):
            r2[name] = pd.Series(np.nan, index=list(alignment.factor_names))
            continue
        r2[name] = alignment.r2(rows, controls=controls)
    return TransferR2(pd.DataFrame(r2), pd.Series(sizes, name="models"), bool(controls))


# =========================================================================== base checkpoints
_INSTRUCT_NAME = re.compile(r"(?i)(?:instruct|chat|-it$|-it-)")


def base_checkpoint_mask(frame: pd.DataFrame) -> pd.Series:
    """Official base checkpoints: ``type == "pretrained"``, ``official_providers`` true, and
    no ``instruct``/``chat``/``-it`` in the name (the leaderboard types a few chat models as
    pretrained)."""
    check_frame(frame, ["model_id", "type", "official_providers"], context="base_checkpoint_mask")
    official = frame["official_providers"].fillna(False).astype(bool)
    named = frame["model_id"].astype(str).str.contains(_INSTRUCT_NAME)
    return (frame["type"] == "pretrained") & official & ~named


# =========================================================================== z2 and instruct
_INSTRUCT_RULES: tuple[tuple[str, str], ...] = (
    (r"$", "-Instruct"),
    (r"$", "-instruct"),
    (r"$", "-it"),
    (r"$", "-Chat"),
    (r"$", "-chat"),
    (r"-Base(?=-|$)", "-Instruct"),
    (r"-base(?=-|$)", "-instruct"),
    (r"-base(?=-|$)", "-chat"),
    (r"-hf$", "-chat-hf"),
    (r"-v0\.(\d)$", r"-Instruct-v0.\1"),
)


def official_pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """Pairs of an official base checkpoint and the same developer's instruct checkpoint.

    Rule: among official models, every ``pretrained`` model ``org/name`` is paired with each
    one whose name follows from it by a rule of ``_INSTRUCT_RULES`` (``-Instruct``, ``-it``,
    ``-chat``, ``-Base`` -> ``-Instruct``, ...). Nothing else is paired.

    Returns
    -------
    DataFrame
        Columns ``base_id, instruct_id, base_model, params_b`` (sorted by ``base_id``).
    """
    check_frame(frame, ["model_id", "type", "official_providers"], context="official_pairs")
    official = frame[frame["official_providers"].fillna(False).astype(bool)]
    ids = set(official["model_id"])
    records = []
    for _, row in official[official["type"] == "pretrained"].iterrows():
        base = row["model_id"]
        found = []
        for pattern, repl in _INSTRUCT_RULES:
            cand = re.sub(pattern, repl, base, count=1)
            if cand != base and cand in ids and cand not in found:
                found.append(cand)
        for cand in found:
            records.append(
                {
                    "base_id": base,
                    "instruct_id": cand,
                    "base_model": row.get("base_model", pd.NA),
                    "params_b": row.get("params_b", np.nan),
                }
            )
    out = pd.DataFrame.from_records(
        records, columns=["base_id", "instruct_id", "base_model", "params_b"]
    )
    return out.sort_values("base_id").reset_index(drop=True)


def _rows_by_id(frame: pd.DataFrame, ids: Sequence[str], what: str) -> pd.DataFrame:
    by_id = frame.drop_duplicates("model_id").set_index("model_id")
    missing = [m for m in ids if m not in by_id.index]
    if missing:
        raise ValueError(f"{what}: model(s) {missing} not in the frame")
    return by_id.loc[list(ids)]


def factor_change(
    alignment: Alignment, before: pd.DataFrame, after: pd.DataFrame, scale: Any = None
) -> pd.DataFrame:
    """Change of every benchmark and adjusted factor from ``before`` to ``after`` (row by row).

    Parameters
    ----------
    alignment : Alignment
    before, after : DataFrame
        Normalized scores (the fitted benchmark columns), same number of rows.
    scale : DataFrame or array, optional
        Scores whose per-factor standard deviation the factor changes are divided by
        (e.g. the in-sample data), so they read in standard deviations.

    Returns
    -------
    DataFrame
        Indexed like ``after``: ``d_<benchmark>`` (points), ``d_<factor>`` and ``largest``
        (the factor with the largest absolute change).
    """
    cols = list(alignment.feature_names)
    xb = check_matrix(before, name="factor_change: before", columns=cols)
    xa = check_matrix(after, name="factor_change: after", columns=cols)
    if xb.shape != xa.shape:
        raise ValueError(f"factor_change: before has {len(xb)} rows, after {len(xa)}")
    dx = xa - xb
    dz = dx @ alignment.unmixing.T
    if scale is not None:
        dz = dz / alignment.factors(scale).std(axis=0)
    out = pd.DataFrame(index=after.index)
    for j, c in enumerate(cols):
        out[f"d_{benchmark_label(c)}"] = dx[:, j]
    names = list(alignment.factor_names)
    for i, z in enumerate(names):
        out[f"d_{z}"] = dz[:, i]
    out["largest"] = [names[k] for k in np.argmax(np.abs(dz), axis=1)]
    return out


def instruct_shift(
    alignment: Alignment, frame: pd.DataFrame, pairs: pd.DataFrame, scale: Any = None
) -> pd.DataFrame:
    """:func:`factor_change` from every base checkpoint to its instruct checkpoint.

    Parameters
    ----------
    alignment : Alignment
    frame : DataFrame
        Leaderboard rows (``model_id`` and the benchmark columns).
    pairs : DataFrame
        ``base_id`` and ``instruct_id`` columns (e.g. :func:`official_pairs`).
    scale : DataFrame or array, optional
        As in :func:`factor_change`.

    Returns
    -------
    DataFrame
        ``base_id, instruct_id`` and the columns of :func:`factor_change`, one row per pair.
    """
    check_frame(pairs, ["base_id", "instruct_id"], name="pairs", context="instruct_shift")
    cols = list(alignment.feature_names)
    base = _rows_by_id(frame, pairs["base_id"], "instruct_shift")[cols].reset_index(drop=True)
    inst = _rows_by_id(frame, pairs["instruct_id"], "instruct_shift")[cols].reset_index(drop=True)
    change = factor_change(alignment, base, inst, scale)
    return pd.concat([pairs[["base_id", "instruct_id"]].reset_index(drop=True), change], axis=1)


def figure8_table(
    frame: pd.DataFrame,
    checkpoints: Mapping[str, tuple[str, str]] = FIGURE8_CHECKPOINTS,
    columns: Sequence[str] = FIGURE8_COLUMNS,
    raw: bool = True,
) -> pd.DataFrame:
    """The Base and Official Instruct rows of Figure 8, from the leaderboard.

    Parameters
    ----------
    frame : DataFrame
        Leaderboard rows with ``model_id`` and ``<benchmark>_raw`` (or normalized) columns.
    checkpoints : mapping
        Model label -> (base id, instruct id).
    columns : sequence of str
        Benchmarks, in the table's order.
    raw : bool, default True
        Raw accuracies on 0-1 (the scale of the paper's table) or normalized scores.

    Returns
    -------
    DataFrame
        Indexed by ``(model, config)`` with ``config`` in ``("Base", "Official Instruct")``,
        the benchmark columns and ``model_id``.
    """
    suffix = "_raw" if raw else ""
    cols = [c + suffix for c in columns]
    check_frame(frame, cols + ["model_id"], context="figure8_table")
    records = []
    for model, (base_id, inst_id) in checkpoints.items():
        rows = _rows_by_id(frame, [base_id, inst_id], "figure8_table")
        for config, mid in (("Base", base_id), ("Official Instruct", inst_id)):
            rec = {"model": model, "config": config, "model_id": mid}
            rec.update({c: float(rows.loc[mid, c + suffix]) for c in columns})
            records.append(rec)
    return pd.DataFrame.from_records(records).set_index(["model", "config"])


# =========================================================================== noise shares
def noise_shares(models: Mapping[Any, Any]) -> pd.DataFrame:
    """Share of each factor's variance that is its own noise, per domain.

    For ``z = A z + diag(omega) eps`` with unit-variance sources the share is
    ``omega_i^2 / Var(z_i)``, ``Var(z_i) = sum_j T_ij^2`` with ``T = (I - A)^{-1} diag(omega)``.

    Parameters
    ----------
    models : mapping
        Domain -> :class:`hca.estimator.DomainSCM` (e.g. ``adjustment.models``).

    Returns
    -------
    DataFrame
        Domains x factors.
    """
    rows = {}
    names = None
    for domain, m in models.items():
        A = np.asarray(m.A, dtype=float)
        omega = np.asarray(m.omega_sqrt, dtype=float)
        T = np.linalg.solve(np.eye(len(A)) - A, np.diag(omega))
        rows[domain] = omega**2 / np.sum(T**2, axis=1)
        names = list(m.factor_names) or [f"z{i + 1}" for i in range(len(A))]
    if not rows:
        raise ValueError("noise_shares: no domain model given")
    return pd.DataFrame(rows, index=names).T


# =========================================================================== clustering
def cluster_order(corr: pd.DataFrame, method: str = "average") -> list:
    """Order of the variables of a correlation matrix by hierarchical clustering.

    Agglomerative clustering on the distance ``1 - corr`` with optimal leaf ordering.

    Parameters
    ----------
    corr : DataFrame
        Square, symmetric correlation matrix with matching index and columns.
    method : str, default="average"
        Linkage method.

    Returns
    -------
    list
        The labels of ``corr`` in leaf order.
    """
    if not isinstance(corr, pd.DataFrame) or list(corr.index) != list(corr.columns):
        raise ValueError("corr must be a square DataFrame with identical index and columns")
    values = check_matrix(corr, name="corr")  # NaN: a constant column
    dist = np.clip(1.0 - (values + values.T) / 2.0, 0.0, None)
    np.fill_diagonal(dist, 0.0)
    condensed = squareform(dist, checks=False)
    link = optimal_leaf_ordering(linkage(condensed, method=method), condensed)
    return [corr.index[i] for i in leaves_list(link)]
