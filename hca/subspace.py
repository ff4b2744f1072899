"""Per-domain PCA, principal subspaces and subspace distances.

This module reproduces the principal-component analysis of Section 2 (Figure 2b),
Appendix E (Figures 9-11) and Appendix H.4 (Figure 23b) of Jin, Syrgkanis, Kakade &
Zhang (2025), and adds the uncertainty the paper does not report.

Computation (as in the paper and its authors' code)
----------------------------------------------------
For each domain (the models fine-tuned from one base model, say) the benchmark scores
are used as they are (the normalized 0-100 scores; centred by PCA, not scaled).
``sklearn.decomposition.PCA(n_components=r)`` is fitted on the domain's rows and the
transposed ``components_`` give an orthonormal basis ``U_k`` (``n_benchmarks x r``) of
the rank-``r`` principal subspace. The distance between two subspaces is

    d(U_i, U_j) = 1 - mean(cos theta_1, ..., cos theta_r),

where ``cos theta_l`` are the cosines of the principal angles, i.e. the singular
values of ``U_i^T U_j``. It is 0 for identical subspaces and 1 for orthogonal ones.

Rules stated in advance (not tuned to the paper's answer)
---------------------------------------------------------
* Effective rank (:func:`effective_rank`): ``rule="cumulative"`` is the smallest
  ``r`` whose cumulative explained-variance ratio is at least ``threshold`` (0.9 by
  default); ``rule="kaiser"`` counts the eigenvalues of the covariance matrix larger
  than their mean (``total variance / n_benchmarks``).
* Null distances (:func:`split_half_null`): the distance between the principal
  subspaces of two disjoint random halves of one domain. Halves have half the rows,
  so this null is noisier than a comparison of two full domains: it is conservative
  for declaring domains different (errs towards a larger invariant set).
* Threshold (:func:`null_threshold`): ``tau`` is the 0.95 quantile of the split-half
  null distances pooled over the candidate domains, each domain weighted equally.
  :func:`pair_thresholds` gives the per-pair alternative (nulls of the two domains only).
* Invariant set (:func:`invariant_set`): the largest set of domains whose pairwise
  distances are all ``<= tau`` (a maximum clique of the threshold graph); among
  several of that size, the one with the smallest mean pairwise distance, then the
  one first in the matrix order.

Uncertainty: :func:`bootstrap_distance_matrix` resamples models within each domain and
reports percentile intervals (biased upwards near 0; see its notes);
:func:`invariant_set_stability` applies the invariant-set rule to every bootstrap matrix.
:func:`compare_groups` bundles distances, split-half nulls and pair thresholds for groups of
very different sizes (Figure 11).

Descriptions: :func:`spectrum_table` (Figure 9 ranks), :func:`singular_spectrum` (centred or
uncentred singular values, Figure 2a), :func:`benchmark_leverage` (how much of each
benchmark's axis lies in a subspace) and :func:`residual_variance` (variance left after the
leading components), which show *which* benchmark directions make two subspaces differ.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA, FastICA

__all__ = [
    "ExplainedVariance",
    "BootstrapDistances",
    "explained_variance",
    "effective_rank",
    "principal_subspace",
    "ica_subspace",
    "orthonormalize",
    "principal_angles",
    "subspace_distance",
    "group_subspaces",
    "subspace_distance_matrix",
    "distance_matrix",
    "bootstrap_distance_matrix",
    "split_half_null",
    "split_half_nulls",
    "null_threshold",
    "pair_thresholds",
    "invariant_set",
    "candidate_sets",
    "invariant_set_stability",
    "top_groups",
    "benchmark_leverage",
    "residual_variance",
    "spectrum_table",
    "GroupComparison",
    "compare_groups",
    "singular_spectrum",
    "plot_explained_variance",
    "plot_distance_matrix",
    "plot_null_vs_observed",
    "plot_pair_intervals",
]

_METHODS = ("pca", "ica")
_RANK_RULES = ("cumulative", "kaiser")
_RANK_TOL = 1e-10  # relative singular-value tolerance for "numerically rank deficient"
_MAX_REDRAWS = 100  # resamples redrawn when a resample is rank deficient


# --------------------------------------------------------------------------- input checks
def _as_matrix(X: Any, name: str = "X") -> np.ndarray:
    """Return ``X`` as a finite 2-D float array; raise naming what is wrong."""
    if isinstance(X, pd.DataFrame):
        non_numeric = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
        if non_numeric:
            raise TypeError(f"{name} has non-numeric columns {non_numeric}")
        bad = X.isna().sum()
        bad = bad[bad > 0]
        if len(bad):
            detail = ", ".join(f"{c!r}: {n}" for c, n in bad.items())
            raise ValueError(
                f"{name} contains missing values (NaN) in columns {{{detail}}}; "
                "drop or impute them first"
            )
        arr = X.to_numpy(dtype=float)
    else:
        try:
            arr = np.asarray(X, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be numeric, got {type(X).__name__}") from exc
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows x benchmarks), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        rows, cols = np.nonzero(~np.isfinite(arr))
        raise ValueError(
            f"{name} contains {rows.size} NaN/inf entries (first at row {rows[0]}, "
            f"column {cols[0]}); drop or impute them first"
        )
    return arr


def _check_n_components(n_components: Any, n_features: int) -> int:
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)):
        raise TypeError(f"n_components must be an int, got {n_components!r}")
    if not 1 <= n_components <= n_features:
        raise ValueError(
            f"n_components must be between 1 and the number of benchmarks "
            f"({n_features}), got {n_components}"
        )
    return int(n_components)


def _check_rows(n_rows: int, n_components: int, what: str) -> None:
    if n_rows < n_components + 1:
        raise ValueError(
            f"{what} has {n_rows} rows; a rank-{n_components} principal subspace of "
            f"centred data needs at least n_components + 1 = {n_components + 1} rows"
        )


def _check_method(method: str) -> str:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    return method


def _is_missing(label: Any) -> bool:
    try:
        return bool(pd.isna(label))
    except (TypeError, ValueError):
        return False


def _as_groups(groups: Any, n_rows: int) -> np.ndarray:
    arr = np.asarray(groups, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"groups must be 1-D (one label per row), got shape {arr.shape}")
    if arr.shape[0] != n_rows:
        raise ValueError(
            f"groups has {arr.shape[0]} labels but X has {n_rows} rows; "
            "pass one label per row"
        )
    return arr


def _resolve_order(groups: np.ndarray, order: Sequence | None) -> list:
    if order is None:
        missing = int(sum(_is_missing(g) for g in groups))
        if missing:
            raise ValueError(
                f"groups contains {missing} missing labels; pass order=[...] to choose "
                "the groups to compare"
            )
        return top_groups(groups, len(pd.unique(groups)))
    order = list(order)
    if len(order) == 0:
        raise ValueError("order is empty; give at least one group label")
    dup = [g for g in pd.unique(np.asarray(order, dtype=object)) if order.count(g) > 1]
    if dup:
        raise ValueError(f"order lists these groups more than once: {dup}")
    present = set(g for g in groups if not _is_missing(g))
    absent = [g for g in order if g not in present]
    if absent:
        raise ValueError(f"order names groups with no rows in groups: {absent}")
    return order


def _split(X: Any, groups: Any, order: Sequence | None) -> tuple[list, dict]:
    arr = _as_matrix(X)
    g = _as_groups(groups, arr.shape[0])
    labels = _resolve_order(g, order)
    return labels, {lab: arr[g == lab] for lab in labels}


# --------------------------------------------------------------------------- explained variance
@dataclass(frozen=True, eq=False)
class ExplainedVariance:
    """Spectrum of the covariance matrix of one domain (PCA on centred, unscaled data).

    Attributes
    ----------
    eigenvalues : ndarray
        Variances along the principal axes (``PCA.explained_variance_``, ``ddof=1``).
    ratios : ndarray
        ``eigenvalues / total_variance``.
    cumulative : ndarray
        Cumulative sum of ``ratios``.
    singular_values : ndarray
        Singular values of the centred data matrix (``PCA.singular_values_``).
    total_variance : float
        Sum of the variances of all benchmarks (all eigenvalues).
    n_samples, n_features : int
        Shape of the data.
    label : str or None
        Optional name of the domain.
    """

    eigenvalues: np.ndarray
    ratios: np.ndarray
    cumulative: np.ndarray
    singular_values: np.ndarray
    total_variance: float
    n_samples: int
    n_features: int
    label: str | None = None

    def effective_rank(self, threshold: float = 0.9, rule: str = "cumulative") -> int:
        """Effective rank by the stated rule; see :func:`effective_rank`."""
        return effective_rank(self, threshold=threshold, rule=rule)

    def to_frame(self) -> pd.DataFrame:
        """One row per component: eigenvalue, ratio, cumulative ratio, singular value."""
        idx = pd.RangeIndex(1, len(self.eigenvalues) + 1, name="component")
        return pd.DataFrame(
            {
                "eigenvalue": self.eigenvalues,
                "ratio": self.ratios,
                "cumulative": self.cumulative,
                "singular_value": self.singular_values,
            },
            index=idx,
        )

    def summary(self) -> str:
        """Short text report."""
        name = f" ({self.label})" if self.label is not None else ""
        ratios = ", ".join(f"{r:.3f}" for r in self.ratios)
        cum = ", ".join(f"{c:.3f}" for c in self.cumulative)
        try:
            kaiser = str(self.effective_rank(rule="kaiser"))
        except ValueError:
            kaiser = "n/a (spectrum truncated)"
        try:
            cum_rank = str(self.effective_rank(0.9))
        except ValueError:
            cum_rank = "n/a (spectrum truncated)"
        return (
            f"ExplainedVariance{name}: {self.n_samples} rows x {self.n_features} benchmarks\n"
            f"  ratios:     {ratios}\n"
            f"  cumulative: {cum}\n"
            f"  effective rank: {cum_rank} (cumulative >= 0.9), "
            f"{kaiser} (Kaiser: eigenvalues > mean)"
        )


def explained_variance(
    X: Any, n_components: int | None = None, label: str | None = None
) -> ExplainedVariance:
    """PCA spectrum of one domain (centred, not scaled).

    Parameters
    ----------
    X : array-like of shape (n_models, n_benchmarks)
        Scores of one domain, used as they are (the paper uses the normalized 0-100 scores).
    n_components : int, optional
        Number of leading components to keep. Ratios are always relative to the total
        variance of all benchmarks. Default: all, ``min(n_models - 1, n_benchmarks)``.
    label : str, optional
        Name stored in the result.

    Returns
    -------
    ExplainedVariance
    """
    arr = _as_matrix(X)
    n, d = arr.shape
    if n < 2:
        raise ValueError(f"X has {n} rows; explained variance needs at least 2 rows")
    k_max = min(n - 1, d)
    k = k_max if n_components is None else _check_n_components(n_components, d)
    if k > k_max:
        raise ValueError(
            f"X has {n} rows; centred data has at most {k_max} non-zero components, "
            f"got n_components={k}"
        )
    pca = PCA(n_components=min(n, d), svd_solver="full").fit(arr)
    total = float(np.sum(pca.explained_variance_))
    if total <= 0:
        raise ValueError("X has zero variance: every benchmark is constant across rows")
    eig = pca.explained_variance_[:k].copy()
    ratios = eig / total
    return ExplainedVariance(
        eigenvalues=eig,
        ratios=ratios,
        cumulative=np.cumsum(ratios),
        singular_values=pca.singular_values_[:k].copy(),
        total_variance=total,
        n_samples=n,
        n_features=d,
        label=label,
    )


def effective_rank(X: Any, threshold: float = 0.9, rule: str = "cumulative") -> int:
    """Effective rank of a domain's score matrix by a rule stated in advance.

    Rules
    -----
    ``"cumulative"`` (default)
        The smallest ``r`` such that the first ``r`` principal components explain at
        least ``threshold`` (default 0.9) of the total variance.
    ``"kaiser"``
        The number of covariance eigenvalues strictly larger than their mean,
        ``total variance / n_benchmarks`` (Kaiser-Guttman rule on the covariance).
        ``threshold`` is ignored.

    Parameters
    ----------
    X : array-like of shape (n_models, n_benchmarks) or ExplainedVariance
    threshold : float
        Fraction of variance for the cumulative rule, in (0, 1].
    rule : {"cumulative", "kaiser"}

    Returns
    -------
    int
    """
    if rule not in _RANK_RULES:
        raise ValueError(f"rule must be one of {_RANK_RULES}, got {rule!r}")
    ev = X if isinstance(X, ExplainedVariance) else explained_variance(X)
    if rule == "kaiser":
        mean = ev.total_variance / ev.n_features
        truncated = len(ev.eigenvalues) < min(ev.n_samples - 1, ev.n_features)
        if truncated and ev.eigenvalues[-1] > mean:
            raise ValueError(
                "the Kaiser rule needs more of the spectrum than was kept; compute "
                "explained_variance with n_components=None"
            )
        return int(np.sum(ev.eigenvalues > mean))
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    reached = np.nonzero(ev.cumulative >= threshold - 1e-12)[0]
    if reached.size == 0:
        raise ValueError(
            f"the {len(ev.cumulative)} components kept explain only "
            f"{ev.cumulative[-1]:.3f} < threshold={threshold}; keep more components"
        )
    return int(reached[0] + 1)


# --------------------------------------------------------------------------- subspaces
def orthonormalize(A: Any) -> np.ndarray:
    """Orthonormal basis (reduced QR) of the column span of ``A``.

    Raises
    ------
    ValueError
        If ``A`` has more columns than rows or linearly dependent columns.
    """
    arr = _as_matrix(A, "basis")
    n, k = arr.shape
    if k > n:
        raise ValueError(f"basis has {k} columns but only {n} rows; columns are dependent")
    Q, R = np.linalg.qr(arr)
    diag = np.abs(np.diag(R))
    if diag.max() == 0 or diag.min() <= _RANK_TOL * diag.max():
        raise ValueError("basis has linearly dependent columns; its span has lower rank")
    return Q


def principal_subspace(X: Any, n_components: int = 3) -> np.ndarray:
    """Orthonormal basis of the rank-``n_components`` principal subspace of ``X``.

    ``PCA(n_components).fit(X).components_.T`` on the centred, unscaled scores, as in the
    authors' code.

    Parameters
    ----------
    X : array-like of shape (n_models, n_benchmarks)
    n_components : int

    Returns
    -------
    ndarray of shape (n_benchmarks, n_components)
        Orthonormal columns.

    Raises
    ------
    ValueError
        If ``X`` has NaN, fewer than ``n_components + 1`` rows, or its centred data have
        rank below ``n_components`` (the subspace is then not unique).
    """
    arr = _as_matrix(X)
    k = _check_n_components(n_components, arr.shape[1])
    _check_rows(arr.shape[0], k, "X")
    return _pca_basis(arr, k)


def _pca_basis(arr: np.ndarray, k: int) -> np.ndarray:
    pca = PCA(n_components=k, svd_solver="full").fit(arr)
    s = pca.singular_values_
    if s[0] == 0 or s[-1] <= _RANK_TOL * s[0]:
        raise ValueError(
            f"X has numerical rank below n_components={k} after centring; "
            "its principal subspace is not unique"
        )
    return pca.components_.T.copy()


def ica_subspace(
    X: Any, n_components: int = 3, random_state: int | None = 0, max_iter: int = 1000
) -> np.ndarray:
    """Orthonormal basis of the span of FastICA's mixing columns.

    Fits ``FastICA(n_components, whiten="unit-variance")`` and orthonormalises
    ``mixing_`` by QR, as in the authors' code. Because FastICA whitens with PCA, this
    span equals the PCA subspace (distance ~ 1e-15): ICA only re-parametrises the
    sources inside it.

    Parameters
    ----------
    X : array-like of shape (n_models, n_benchmarks)
    n_components : int
    random_state : int or None
        Seed of FastICA's initial unmixing matrix.
    max_iter : int

    Returns
    -------
    ndarray of shape (n_benchmarks, n_components)
    """
    arr = _as_matrix(X)
    k = _check_n_components(n_components, arr.shape[1])
    _check_rows(arr.shape[0], k, "X")
    return _ica_basis(arr, k, random_state, max_iter)


def _ica_basis(arr: np.ndarray, k: int, random_state: Any, max_iter: int = 1000) -> np.ndarray:
    _pca_basis(arr, k)  # same rank check as PCA
    ica = FastICA(
        n_components=k, whiten="unit-variance", random_state=random_state, max_iter=max_iter
    )
    ica.fit(arr)
    return orthonormalize(ica.mixing_)


def _basis(arr: np.ndarray, k: int, method: str, random_state: Any) -> np.ndarray:
    if method == "pca":
        return _pca_basis(arr, k)
    return _ica_basis(arr, k, random_state)


def _cosines(U: Any, V: Any) -> np.ndarray:
    Q1 = orthonormalize(U)
    Q2 = orthonormalize(V)
    if Q1.shape[0] != Q2.shape[0]:
        raise ValueError(
            f"bases live in different spaces: {Q1.shape[0]} vs {Q2.shape[0]} rows"
        )
    s = np.linalg.svd(Q1.T @ Q2, compute_uv=False)
    return np.clip(s, 0.0, 1.0)


def principal_angles(U: Any, V: Any) -> np.ndarray:
    """Principal angles (radians, ascending) between the column spans of ``U`` and ``V``.

    The bases are orthonormalised first, so any basis of a subspace gives the same
    angles. With ``k`` and ``l`` columns there are ``min(k, l)`` angles.
    """
    return np.arccos(_cosines(U, V))


def subspace_distance(U: Any, V: Any) -> float:
    """Cosine distance between subspaces: ``1 - mean`` of the principal-angle cosines.

    The cosines are the singular values of ``Q_U^T Q_V`` where ``Q_U``, ``Q_V`` are
    orthonormal bases (QR) of the column spans of ``U`` and ``V``; the result therefore
    depends only on the spans. It is 0 for identical subspaces, 1 for orthogonal ones,
    and symmetric. For bases with different numbers of columns the mean runs over the
    ``min(k, l)`` angles (0 when one span contains the other).

    Parameters
    ----------
    U, V : array-like of shape (n_benchmarks, k) and (n_benchmarks, l)

    Returns
    -------
    float in [0, 1]
    """
    return float(np.clip(1.0 - np.mean(_cosines(U, V)), 0.0, 1.0))


# --------------------------------------------------------------------------- groups
def top_groups(groups: Any, n: int) -> list:
    """The ``n`` most frequent labels, most frequent first (ties: first appearance).

    Missing labels (None/NaN) are not counted.

    Raises
    ------
    ValueError
        If there are fewer than ``n`` distinct labels.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    arr = np.asarray(groups, dtype=object).ravel()
    labels = [g for g in arr if not _is_missing(g)]
    counts = Counter(labels)  # insertion order = first appearance
    ranked = sorted(counts, key=lambda lab: -counts[lab])  # stable sort keeps ties in order
    if len(ranked) < n:
        raise ValueError(f"asked for the top {n} groups but there are only {len(ranked)}")
    return list(ranked[:n])


def group_subspaces(
    X: Any,
    groups: Any,
    n_components: int = 3,
    order: Sequence | None = None,
    method: str = "pca",
    random_state: int | None = 0,
) -> dict:
    """Principal (or ICA) subspace basis of each group, ``{label: ndarray}``.

    See :func:`distance_matrix` for the parameters.
    """
    _check_method(method)
    labels, parts = _split(X, groups, order)
    k = _check_n_components(n_components, next(iter(parts.values())).shape[1])
    out = {}
    for lab in labels:
        _check_rows(parts[lab].shape[0], k, f"group {lab!r}")
        try:
            out[lab] = _basis(parts[lab], k, method, random_state)
        except ValueError as exc:
            raise ValueError(f"group {lab!r}: {exc}") from exc
    return out


def subspace_distance_matrix(bases: Mapping) -> pd.DataFrame:
    """Pairwise :func:`subspace_distance` of ``{label: basis}``; diagonal exactly 0."""
    labels = list(bases)
    k = len(labels)
    D = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            D[i, j] = D[j, i] = subspace_distance(bases[labels[i]], bases[labels[j]])
    idx = pd.Index(labels, name="group")
    return pd.DataFrame(D, index=idx, columns=idx.copy())


def distance_matrix(
    X: Any,
    groups: Any,
    n_components: int = 3,
    order: Sequence | None = None,
    method: str = "pca",
    random_state: int | None = 0,
) -> pd.DataFrame:
    """Pairwise cosine distances between the per-group principal subspaces (Figure 2b).

    Parameters
    ----------
    X : array-like of shape (n_models, n_benchmarks)
        Scores, used as they are (centred by PCA, not scaled).
    groups : array-like of length n_models
        One domain label per row (positional, not aligned on an index).
    n_components : int
        Rank ``r`` of each principal subspace (3 in the paper).
    order : sequence of labels, optional
        Groups to compare, in this order; rows of other groups (or with missing labels)
        are ignored. Default: all groups, most frequent first.
    method : {"pca", "ica"}
        ``"ica"`` uses :func:`ica_subspace` (same spans, up to rounding).
    random_state : int or None
        FastICA seed (``method="ica"`` only).

    Returns
    -------
    DataFrame
        Square, indexed and labelled by group, symmetric, zero diagonal.
    """
    bases = group_subspaces(X, groups, n_components, order, method, random_state)
    return subspace_distance_matrix(bases)


# --------------------------------------------------------------------------- uncertainty
@dataclass(frozen=True, eq=False)
class BootstrapDistances:
    """Bootstrap of the subspace distance matrix (models resampled within each domain).

    Attributes
    ----------
    point : DataFrame
        Distances on the full data (:func:`distance_matrix`).
    lower, upper : DataFrame
        Percentile interval of the bootstrap distances at ``level``.
    samples : ndarray of shape (n_boot, k, k)
        Bootstrap distance matrices.
    self_samples : ndarray of shape (n_boot, k)
        Distance between each domain's full-data subspace and its bootstrap subspace:
        a per-domain scale of sampling noise.
    level : float
    n_boot : int
    """

    point: pd.DataFrame
    lower: pd.DataFrame
    upper: pd.DataFrame
    samples: np.ndarray
    self_samples: np.ndarray
    level: float
    n_boot: int

    @property
    def bias(self) -> pd.DataFrame:
        """Mean bootstrap distance minus the point estimate (typically > 0)."""
        return pd.DataFrame(
            self.samples.mean(axis=0), index=self.point.index, columns=self.point.columns
        ) - self.point

    def to_frame(self) -> pd.DataFrame:
        """Tidy table, one row per unordered pair: point, lower, upper, boot_mean."""
        labels = list(self.point.index)
        rows = []
        mean = self.samples.mean(axis=0)
        for i in range(len(labels)):
            for j in range(i + 1, len(labels)):
                rows.append(
                    {
                        "group_a": labels[i],
                        "group_b": labels[j],
                        "point": self.point.iat[i, j],
                        "lower": self.lower.iat[i, j],
                        "upper": self.upper.iat[i, j],
                        "boot_mean": mean[i, j],
                    }
                )
        columns = ["group_a", "group_b", "point", "lower", "upper", "boot_mean"]
        return pd.DataFrame(rows, columns=columns)

    def summary(self) -> str:
        """Short text report."""
        tidy = self.to_frame()
        noise = np.median(self.self_samples, axis=0)
        lines = [
            f"BootstrapDistances: {len(self.point)} groups, {self.n_boot} resamples, "
            f"{self.level:.0%} percentile intervals",
        ]
        for _, r in tidy.iterrows():
            lines.append(
                f"  {r.group_a} - {r.group_b}: {r.point:.3f} [{r.lower:.3f}, {r.upper:.3f}]"
            )
        lines.append(
            "  median distance full vs resampled subspace: "
            + ", ".join(f"{lab}: {v:.3f}" for lab, v in zip(self.point.index, noise))
        )
        return "\n".join(lines)


def _resample_basis(
    arr: np.ndarray, k: int, rng: np.random.Generator, method: str, what: str
) -> np.ndarray:
    n = arr.shape[0]
    for _ in range(_MAX_REDRAWS):
        idx = rng.integers(0, n, size=n)
        try:
            return _basis(arr[idx], k, method, rng.integers(2**31 - 1))
        except ValueError:
            continue
    raise ValueError(
        f"{what}: {_MAX_REDRAWS} bootstrap resamples in a row had rank below {k}; "
        f"the group is too small or degenerate for a rank-{k} subspace"
    )


def bootstrap_distance_matrix(
    X: Any,
    groups: Any,
    n_components: int = 3,
    n_boot: int = 200,
    order: Sequence | None = None,
    level: float = 0.95,
    method: str = "pca",
    random_state: int | np.random.Generator | None = 0,
) -> BootstrapDistances:
    """Bootstrap percentile intervals for the subspace distance matrix.

    In each of ``n_boot`` replicates the models (rows) of every domain are resampled
    with replacement, independently per domain and at the domain's size, the principal
    subspaces are recomputed and all pairwise distances are taken. A resample whose
    centred data have rank below ``n_components`` (possible for tiny domains) is redrawn.

    Notes
    -----
    The distance is bounded below by 0 and resampling noise tilts subspaces in random
    directions, so bootstrap distances are biased upwards (see ``bias``). For two domains
    with nearly the same subspace the percentile interval can therefore lie entirely
    above the point estimate; it describes variability, and whether a distance is larger
    than noise is judged against :func:`split_half_null`.

    Parameters
    ----------
    X, groups, n_components, order, method
        As in :func:`distance_matrix`.
    n_boot : int
        Number of bootstrap replicates.
    level : float
        Coverage of the percentile interval, in (0, 1).
    random_state : int, Generator or None
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    BootstrapDistances
    """
    _check_method(method)
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive int, got {n_boot!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    bases = group_subspaces(X, groups, n_components, order, method, 0)
    point = subspace_distance_matrix(bases)
    labels, parts = _split(X, groups, order)
    k = len(labels)
    r = next(iter(bases.values())).shape[1]
    rng = np.random.default_rng(random_state)
    samples = np.zeros((n_boot, k, k))
    self_samples = np.zeros((n_boot, k))
    for b in range(n_boot):
        boot = {
            lab: _resample_basis(parts[lab], r, rng, method, f"group {lab!r}") for lab in labels
        }
        samples[b] = subspace_distance_matrix(boot).to_numpy()
        self_samples[b] = [subspace_distance(bases[lab], boot[lab]) for lab in labels]
    alpha = (1 - level) / 2
    lo, hi = np.quantile(samples, [alpha, 1 - alpha], axis=0)
    return BootstrapDistances(
        point=point,
        lower=pd.DataFrame(lo, index=point.index, columns=point.columns),
        upper=pd.DataFrame(hi, index=point.index, columns=point.columns),
        samples=samples,
        self_samples=self_samples,
        level=float(level),
        n_boot=int(n_boot),
    )


def split_half_null(
    X_group: Any,
    n_components: int = 3,
    n_splits: int = 200,
    random_state: int | np.random.Generator | None = 0,
    half_size: int | None = None,
    method: str = "pca",
) -> np.ndarray:
    """Null distribution: distance between the subspaces of two random halves of a domain.

    Each split permutes the rows and takes two disjoint halves of ``half_size`` rows
    (default ``n // 2``; with odd ``n`` one row is left out). Both halves come from the
    same domain, so their distance is pure sampling noise.

    Notes
    -----
    Each half has about ``n/2`` rows, fewer than the full domain. To first order the
    squared principal angles between two independent estimates scale like
    ``1/n_1 + 1/n_2``, so two halves (``4/n``) are noisier than two full domains of
    size ``n`` (``2/n``). A threshold taken from this null is therefore *conservative
    for declaring two domains different* (it errs towards calling them the same, i.e.
    towards a larger invariant set). To compare at matched sample sizes, pass a smaller
    ``half_size`` to the larger domain or subsample the data.

    Parameters
    ----------
    X_group : array-like of shape (n_models, n_benchmarks)
        Scores of one domain.
    n_components : int
    n_splits : int
    random_state : int, Generator or None
    half_size : int, optional
        Rows per half; at least ``n_components + 1`` and at most ``n // 2``.
    method : {"pca", "ica"}

    Returns
    -------
    ndarray of shape (n_splits,)
    """
    _check_method(method)
    arr = _as_matrix(X_group, "X_group")
    n = arr.shape[0]
    k = _check_n_components(n_components, arr.shape[1])
    if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)) or n_splits < 1:
        raise ValueError(f"n_splits must be a positive int, got {n_splits!r}")
    h = n // 2 if half_size is None else int(half_size)
    if h > n // 2:
        raise ValueError(f"half_size={h} exceeds half of the {n} rows of X_group")
    _check_rows(h, k, f"each half of X_group ({n} rows)")
    rng = np.random.default_rng(random_state)
    out = np.empty(n_splits)
    for s in range(n_splits):
        for _ in range(_MAX_REDRAWS):
            perm = rng.permutation(n)
            try:
                seed = rng.integers(2**31 - 1)
                A = _basis(arr[perm[:h]], k, method, seed)
                B = _basis(arr[perm[h : 2 * h]], k, method, seed)
                break
            except ValueError:
                continue
        else:
            raise ValueError(
                f"X_group: {_MAX_REDRAWS} random halves in a row had rank below {k}"
            )
        out[s] = subspace_distance(A, B)
    return out


def split_half_nulls(
    X: Any,
    groups: Any,
    n_components: int = 3,
    n_splits: int = 200,
    order: Sequence | None = None,
    random_state: int | np.random.Generator | None = 0,
    method: str = "pca",
) -> dict:
    """:func:`split_half_null` for every group, ``{label: ndarray}``.

    Each group gets an independent stream spawned from ``random_state``.
    """
    labels, parts = _split(X, groups, order)
    streams = np.random.default_rng(random_state).spawn(len(labels))
    out = {}
    for lab, stream in zip(labels, streams):
        try:
            out[lab] = split_half_null(parts[lab], n_components, n_splits, stream, method=method)
        except ValueError as exc:
            raise ValueError(f"group {lab!r}: {exc}") from exc
    return out


def null_threshold(null: Any, quantile: float = 0.95) -> float:
    """Threshold ``tau`` from null distances: an upper quantile, domains weighted equally.

    Parameters
    ----------
    null : array-like, or mapping / sequence of array-likes
        Split-half null distances of one domain, or of several (e.g. the output of
        :func:`split_half_nulls`). Several domains are pooled as an equal-weight mixture,
        so a domain with more splits does not count more.
    quantile : float
        In (0, 1); 0.95 is the rule used for the invariant set.

    Returns
    -------
    float
        The smallest null value ``t`` with mixture CDF ``F(t) >= quantile``.
    """
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be in (0, 1), got {quantile}")
    if isinstance(null, Mapping):
        arrays = list(null.values())
    elif isinstance(null, np.ndarray) and null.ndim == 1:
        arrays = [null]
    elif isinstance(null, Sequence) and len(null) and np.ndim(null[0]) == 1:
        arrays = list(null)
    else:
        arrays = [null]
    arrays = [np.asarray(a, dtype=float).ravel() for a in arrays]
    if not arrays or any(a.size == 0 for a in arrays):
        raise ValueError("null distances are empty")
    if any(not np.all(np.isfinite(a)) for a in arrays):
        raise ValueError("null distances contain NaN/inf")
    values = np.unique(np.concatenate(arrays))
    cdfs = [np.searchsorted(np.sort(a), values, side="right") / a.size for a in arrays]
    cdf = np.mean(cdfs, axis=0)
    return float(values[np.nonzero(cdf >= quantile - 1e-12)[0][0]])


def pair_thresholds(nulls: Mapping, quantile: float = 0.95) -> pd.DataFrame:
    """Pair-specific thresholds: ``tau_ij`` from the null distances of domains i and j only.

    ``tau_ij = null_threshold({i: nulls[i], j: nulls[j]}, quantile)``; the diagonal is
    the single-domain quantile. An alternative to one pooled threshold when the domains
    differ much in size or noise; :func:`invariant_set` accepts the result as
    ``threshold``.
    """
    labels = list(nulls)
    k = len(labels)
    T = np.zeros((k, k))
    for i in range(k):
        for j in range(i, k):
            sub = {labels[i]: nulls[labels[i]], labels[j]: nulls[labels[j]]}
            T[i, j] = T[j, i] = null_threshold(sub, quantile)
    idx = pd.Index(labels, name="group")
    return pd.DataFrame(T, index=idx, columns=idx.copy())


# --------------------------------------------------------------------------- invariant set
def _check_dist(dist: Any) -> pd.DataFrame:
    if not isinstance(dist, pd.DataFrame):
        dist = pd.DataFrame(np.asarray(dist, dtype=float))
    D = _as_matrix(dist, "dist")
    if D.shape[0] != D.shape[1]:
        raise ValueError(f"dist must be square, got shape {D.shape}")
    if list(dist.index) != list(dist.columns):
        raise ValueError("dist must have the same labels, in the same order, on index and columns")
    if not np.allclose(D, D.T, atol=1e-8):
        raise ValueError("dist is not symmetric")
    return dist


def _maximal_cliques(adj: np.ndarray) -> list[tuple[int, ...]]:
    """All maximal cliques (Bron-Kerbosch with pivoting)."""
    nbrs = [set(np.nonzero(row)[0]) - {i} for i, row in enumerate(adj)]
    out: list[tuple[int, ...]] = []

    def expand(R: set, P: set, Xs: set) -> None:
        if not P and not Xs:
            out.append(tuple(sorted(R)))
            return
        pivot = max(P | Xs, key=lambda u: len(nbrs[u] & P))
        for v in sorted(P - nbrs[pivot]):
            expand(R | {v}, P & nbrs[v], Xs & nbrs[v])
            P = P - {v}
            Xs = Xs | {v}

    expand(set(), set(range(len(adj))), set())
    return out


def _threshold_matrix(dist: pd.DataFrame, threshold: Any) -> np.ndarray:
    if isinstance(threshold, pd.DataFrame):
        missing = [
            lab for lab in dist.index if lab not in threshold.index or lab not in threshold.columns
        ]
        if missing:
            raise ValueError(f"threshold has no entries for groups {missing}")
        T = threshold.loc[list(dist.index), list(dist.columns)].to_numpy(dtype=float)
    else:
        T = np.full(dist.shape, float(threshold))
    if not np.all(np.isfinite(T)):
        raise ValueError("threshold must be finite")
    return T


def candidate_sets(dist: Any, threshold: float | pd.DataFrame) -> pd.DataFrame:
    """All maximal sets of groups whose pairwise distances are all ``<= threshold``.

    ``threshold`` is a number or a DataFrame of pair thresholds (:func:`pair_thresholds`).
    Returns a DataFrame with columns ``groups`` (list of labels in ``dist`` order),
    ``size`` and ``mean_distance`` (mean pairwise distance; 0 for a single group),
    sorted by size (descending), then mean distance, then position in ``dist``.
    The first row is :func:`invariant_set`.
    """
    dist = _check_dist(dist)
    D = dist.to_numpy(dtype=float)
    cliques = _maximal_cliques(D <= _threshold_matrix(dist, threshold))
    labels = list(dist.index)
    rows = []
    for c in cliques:
        sub = D[np.ix_(c, c)]
        mean = float(sub[np.triu_indices(len(c), 1)].mean()) if len(c) > 1 else 0.0
        members = [labels[i] for i in c]
        rows.append({"groups": members, "size": len(c), "mean_distance": mean, "_key": c})
    rows.sort(key=lambda r: (-r["size"], r["mean_distance"], r["_key"]))
    frame = pd.DataFrame(rows, columns=["groups", "size", "mean_distance", "_key"])
    return frame.drop(columns="_key").reset_index(drop=True)


def invariant_set(dist: Any, threshold: float | pd.DataFrame) -> list:
    """The invariant set ``S_inv`` of domains with (statistically) the same subspace.

    Rule: the largest set of groups whose pairwise distances are all ``<= threshold``
    (a maximum clique of the graph joining two groups when their distance is at most
    ``threshold``). If several sets have that size, the one with the smallest mean
    pairwise distance is chosen; remaining ties go to the set that comes first in the
    order of ``dist``. ``threshold`` should be fixed before looking at ``dist``, e.g.
    ``null_threshold(split_half_nulls(...), 0.95)``, the 0.95 quantile of the split-half
    null distances pooled over the candidate domains. Use :func:`candidate_sets` to see
    the runners-up.

    Parameters
    ----------
    dist : DataFrame
        Square symmetric distance matrix (e.g. :func:`distance_matrix`).
    threshold : float or DataFrame
        One threshold for all pairs, or pair thresholds (:func:`pair_thresholds`).

    Returns
    -------
    list
        Labels of the chosen groups, in the order of ``dist``.
    """
    return list(candidate_sets(dist, threshold).loc[0, "groups"])


def invariant_set_stability(
    boot: BootstrapDistances, threshold: float | pd.DataFrame
) -> pd.DataFrame:
    """How often each group is in the invariant set across bootstrap distance matrices.

    :func:`invariant_set` is applied with the same (fixed) ``threshold`` to every bootstrap
    matrix in ``boot.samples``. Bootstrap distances are biased upwards (see
    :func:`bootstrap_distance_matrix`), so these frequencies lean towards *exclusion*:
    a group in the set in most replicates is a robust member; one near 50 % is borderline.

    Parameters
    ----------
    boot : BootstrapDistances
    threshold : float or DataFrame
        As in :func:`invariant_set`.

    Returns
    -------
    DataFrame
        Indexed by group: ``in_point_set`` (bool, membership on the full data) and
        ``frequency`` (share of replicates whose invariant set contains the group).
    """
    if not isinstance(boot, BootstrapDistances):
        raise TypeError(f"boot must be a BootstrapDistances, got {type(boot).__name__}")
    labels = list(boot.point.index)
    point = set(invariant_set(boot.point, threshold))
    counts = Counter()
    for sample in boot.samples:
        D = pd.DataFrame(sample, index=boot.point.index, columns=boot.point.columns)
        counts.update(invariant_set(D, threshold))
    idx = pd.Index(labels, name="group")
    return pd.DataFrame(
        {
            "in_point_set": [lab in point for lab in labels],
            "frequency": [counts[lab] / boot.n_boot for lab in labels],
        },
        index=idx,
    )


# --------------------------------------------------------------------------- descriptions
def spectrum_table(
    spectra: Mapping, n_show: int = 4, threshold: float = 0.9
) -> pd.DataFrame:
    """One row per domain: size, leading variance ratios and effective ranks (Figure 9).

    Parameters
    ----------
    spectra : mapping ``{label: ExplainedVariance}``
    n_show : int
        Number of leading variance ratios shown (``PC1 .. PC<n_show>``).
    threshold : float
        Threshold of the cumulative rule (see :func:`effective_rank`).

    Returns
    -------
    DataFrame
        Columns ``models``, ``PC1..``, ``cumulative_3`` (share of the first three
        components), ``rank_cumulative`` and ``rank_kaiser``.
    """
    if not spectra:
        raise ValueError("spectra is empty")
    rows = {}
    for lab, ev in spectra.items():
        if not isinstance(ev, ExplainedVariance):
            raise TypeError(f"spectra[{lab!r}] is a {type(ev).__name__}, not ExplainedVariance")
        k = min(n_show, len(ev.ratios))
        row: dict[str, Any] = {"models": ev.n_samples}
        row.update({f"PC{i + 1}": float(ev.ratios[i]) for i in range(k)})
        row["cumulative_3"] = float(ev.cumulative[min(2, len(ev.cumulative) - 1)])
        row["rank_cumulative"] = effective_rank(ev, threshold=threshold)
        row["rank_kaiser"] = effective_rank(ev, rule="kaiser")
        rows[lab] = row
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "group"
    return out


@dataclass(frozen=True, eq=False)
class GroupComparison:
    """Subspace distances between groups with split-half null thresholds.

    Attributes
    ----------
    dist : DataFrame
        :func:`distance_matrix`.
    nulls : dict
        :func:`split_half_nulls`, ``{label: ndarray}``.
    threshold : float
        Pooled threshold (:func:`null_threshold` at ``quantile``).
    pair_threshold : DataFrame
        Pair thresholds (:func:`pair_thresholds` at ``quantile``).
    sizes : Series
        Rows per group.
    quantile : float
    """

    dist: pd.DataFrame
    nulls: dict
    threshold: float
    pair_threshold: pd.DataFrame
    sizes: pd.Series
    quantile: float

    def to_frame(self) -> pd.DataFrame:
        """One row per unordered pair: ``distance``, ``pair_threshold``, ``beyond_noise``
        (distance above the pair threshold)."""
        labels = list(self.dist.index)
        rows = []
        for i in range(len(labels)):
            for j in range(i + 1, len(labels)):
                d = float(self.dist.iat[i, j])
                t = float(self.pair_threshold.iat[i, j])
                rows.append({"group_a": labels[i], "group_b": labels[j], "distance": d,
                             "pair_threshold": t, "beyond_noise": d > t})
        return pd.DataFrame(rows, columns=["group_a", "group_b", "distance", "pair_threshold",
                                           "beyond_noise"])

    def summary(self) -> str:
        """Short text report."""
        lines = [f"GroupComparison: {len(self.dist)} groups; pooled threshold "
                 f"{self.threshold:.3f} ({self.quantile:.0%} split-half null)"]
        for _, r in self.to_frame().iterrows():
            flag = "beyond noise" if r.beyond_noise else "within noise"
            lines.append(f"  {r.group_a} - {r.group_b}: {r.distance:.3f} "
                         f"(pair threshold {r.pair_threshold:.3f}, {flag})")
        return "\n".join(lines)


def compare_groups(
    X: Any,
    groups: Any,
    order: Sequence | None = None,
    n_components: int = 3,
    n_splits: int = 200,
    quantile: float = 0.95,
    random_state: int | np.random.Generator | None = 0,
) -> GroupComparison:
    """Distance matrix of the groups' principal subspaces with its split-half null.

    Combines :func:`distance_matrix`, :func:`split_half_nulls`, :func:`null_threshold`
    and :func:`pair_thresholds` with the same groups and order. Useful when groups differ
    much in size (Figure 11): a pair's distance is then judged against its own pair
    threshold rather than a pooled one dominated by the smallest group.

    Parameters
    ----------
    X, groups, order, n_components
        As in :func:`distance_matrix`.
    n_splits : int
        Splits per group for the null.
    quantile : float
        Quantile of the null used for the thresholds.
    random_state : int, Generator or None

    Returns
    -------
    GroupComparison
    """
    labels, parts = _split(X, groups, order)
    dist = distance_matrix(X, groups, n_components=n_components, order=labels)
    nulls = split_half_nulls(X, groups, n_components=n_components, n_splits=n_splits,
                             order=labels, random_state=random_state)
    sizes = pd.Series({lab: parts[lab].shape[0] for lab in labels}, name="rows")
    sizes.index.name = "group"
    return GroupComparison(
        dist=dist,
        nulls=nulls,
        threshold=null_threshold(nulls, quantile),
        pair_threshold=pair_thresholds(nulls, quantile),
        sizes=sizes,
        quantile=float(quantile),
    )


def residual_variance(X: Any, n_components: int = 2) -> np.ndarray:
    """Variance of each benchmark left after removing the first principal components.

    The next principal direction is the leading direction of this residual, so comparing
    two benchmarks' residual variances tells which one the ``n_components + 1``-th
    component will mostly follow (e.g. MATH Lvl 5 or MUSR as the third direction).

    Parameters
    ----------
    X : array-like of shape (n_models, n_benchmarks)
    n_components : int
        Number of leading components removed (``0`` gives the plain variances).

    Returns
    -------
    ndarray of shape (n_benchmarks,)
        Column variances (``ddof=1``) of the centred data minus its projection on the
        first ``n_components`` principal axes.
    """
    arr = _as_matrix(X)
    n, d = arr.shape
    if n < 2:
        raise ValueError(f"X has {n} rows; variances need at least 2")
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)):
        raise TypeError(f"n_components must be an int, got {n_components!r}")
    if not 0 <= n_components < d:
        raise ValueError(f"n_components must be between 0 and {d - 1}, got {n_components}")
    Xc = arr - arr.mean(axis=0)
    if n_components:
        _check_rows(n, n_components, "X")
        V = PCA(n_components=n_components, svd_solver="full").fit(arr).components_
        Xc = Xc - Xc @ V.T @ V
    return Xc.var(axis=0, ddof=1)


def benchmark_leverage(bases: Mapping, columns: Sequence | None = None) -> pd.DataFrame:
    """How much of each benchmark's axis lies in each group's subspace.

    For an orthonormal basis ``U`` (``n_benchmarks x r``) the leverage of benchmark ``j``
    is ``||U[j, :]||^2 = cos^2`` of the angle between the axis ``e_j`` and the subspace:
    1 when the benchmark's axis lies in the subspace, 0 when it is orthogonal to it. A
    row sums to ``r``. Comparing rows shows *which* benchmark directions make two
    subspaces differ.

    Parameters
    ----------
    bases : mapping ``{label: basis}``
        E.g. the output of :func:`group_subspaces`; bases are orthonormalised first.
    columns : sequence, optional
        Benchmark names for the columns (default ``0 .. n_benchmarks - 1``).

    Returns
    -------
    DataFrame
        One row per group, one column per benchmark.
    """
    if not bases:
        raise ValueError("bases is empty")
    rows = {}
    for lab, U in bases.items():
        Q = orthonormalize(U)
        rows[lab] = np.sum(Q**2, axis=1)
    d = {len(v) for v in rows.values()}
    if len(d) != 1:
        raise ValueError(f"bases live in spaces of different dimensions: {sorted(d)}")
    n = d.pop()
    cols = list(range(n)) if columns is None else list(columns)
    if len(cols) != n:
        raise ValueError(f"columns has {len(cols)} names for {n} benchmarks")
    out = pd.DataFrame.from_dict(rows, orient="index", columns=cols)
    out.index.name = "group"
    return out


def singular_spectrum(X: Any, center: bool = False) -> pd.DataFrame:
    """Singular values of the score matrix, centred or not, with their energy shares.

    The authors' code plotted the singular values of the *uncentred* score matrix for
    Figure 2a; :func:`explained_variance` is the centred PCA spectrum. Uncentred, the first
    singular vector is close to the mean score vector, so its share mostly measures how
    far the scores are from 0, not a latent dimension.

    Parameters
    ----------
    X : array-like of shape (n_models, n_benchmarks)
    center : bool, default False
        Subtract the column means first (then ``energy`` equals the PCA variance ratios).

    Returns
    -------
    DataFrame
        Indexed by component (1..n_benchmarks): ``singular_value``, ``energy``
        (``s^2 / sum s^2``) and ``cumulative``.
    """
    arr = _as_matrix(X)
    if arr.shape[0] < 2:
        raise ValueError(f"X has {arr.shape[0]} rows; a spectrum needs at least 2")
    if center:
        arr = arr - arr.mean(axis=0)
    s = np.linalg.svd(arr, compute_uv=False)
    total = float(np.sum(s**2))
    if total <= 0:
        raise ValueError("X is identically zero (after centring)")
    energy = s**2 / total
    idx = pd.RangeIndex(1, len(s) + 1, name="component")
    return pd.DataFrame({"singular_value": s, "energy": energy,
                         "cumulative": np.cumsum(energy)}, index=idx)


# --------------------------------------------------------------------------- plots
def _get_ax(ax: Any) -> Any:
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    return ax


def plot_explained_variance(
    ev_or_dict: Any,
    ax: Any = None,
    kind: str = "ratio",
    threshold: float | None = None,
) -> Any:
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
    fields = {"ratio": "ratios", "cumulative": "cumulative", "eigenvalue": "eigenvalues"}
    if kind not in fields:
        raise ValueError(f"kind must be one of {tuple(fields)}, got {kind!r}")
    if isinstance(ev_or_dict, Mapping):
        items = list(ev_or_dict.items())
    elif isinstance(ev_or_dict, ExplainedVariance):
        items = [(ev_or_dict.label, ev_or_dict)]
    else:
        items = [(None, explained_variance(ev_or_dict))]
    ax = _get_ax(ax)
    for label, ev in items:
        if not isinstance(ev, ExplainedVariance):
            ev = explained_variance(ev)
        y = getattr(ev, fields[kind])
        name = None if label is None else str(label)
        ax.plot(np.arange(1, len(y) + 1), y, marker="o", label=name)
    if threshold is not None:
        ax.axhline(threshold, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("principal component")
    ax.set_ylabel({"ratio": "explained variance ratio", "cumulative": "cumulative ratio",
                   "eigenvalue": "eigenvalue (variance)"}[kind])
    if any(label is not None for label, _ in items):
        ax.legend(fontsize="small")
    return ax


def plot_distance_matrix(
    dist_df: pd.DataFrame,
    ax: Any = None,
    annotate: bool = True,
    lower: pd.DataFrame | None = None,
    upper: pd.DataFrame | None = None,
    cmap: str = "Blues",
    vmin: float = 0.0,
    vmax: float | None = None,
    fmt: str = ".2f",
    highlight: Sequence | None = None,
    colorbar: bool = True,
) -> Any:
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

    Returns
    -------
    matplotlib Axes
    """
    dist_df = _check_dist(dist_df)
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
    ax = _get_ax(ax)
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
        size = "small" if lower is None else "x-small"
        for i in range(k):
            for j in range(k):
                text = format(D[i, j], fmt)
                if lower is not None and i != j:
                    text += f"\n[{format(lower.iat[i, j], fmt)}, {format(upper.iat[i, j], fmt)}]"
                ax.text(j, i, text, ha="center", va="center", fontsize=size,
                        color="white" if D[i, j] > mid else "black")
    if colorbar:
        ax.figure.colorbar(im, ax=ax, label="subspace distance")
    return ax


def plot_null_vs_observed(
    null: Any,
    observed: Any,
    ax: Any = None,
    threshold: float | None = None,
    bins: int = 30,
    label_observed: bool = True,
) -> Any:
    """Histogram of null distances with observed distances marked.

    Parameters
    ----------
    null : array-like or mapping ``{label: array}``
        Split-half null distances; several domains are pooled with equal weight.
    observed : DataFrame, Series, mapping or array-like
        Observed distances; a square DataFrame contributes its upper-triangle pairs,
        labelled ``"A - B"``.
    ax : matplotlib Axes, optional
    threshold : float, optional
        Drawn as a dashed line (e.g. :func:`null_threshold`).
    bins : int
    label_observed : bool
        Write the pair labels next to the observed lines.

    Returns
    -------
    matplotlib Axes
    """
    arrays = list(null.values()) if isinstance(null, Mapping) else [null]
    arrays = [np.asarray(a, dtype=float).ravel() for a in arrays]
    if any(a.size == 0 for a in arrays):
        raise ValueError("null distances are empty")
    values = np.concatenate(arrays)
    weights = np.concatenate([np.full(a.size, 1.0 / (a.size * len(arrays))) for a in arrays])
    if isinstance(observed, pd.DataFrame):
        obs = _check_dist(observed)
        labs = list(obs.index)
        iu = np.triu_indices(len(labs), 1)
        obs_vals = obs.to_numpy(dtype=float)[iu]
        obs_labels = [f"{labs[i]} - {labs[j]}" for i, j in zip(*iu)]
    elif isinstance(observed, (pd.Series, Mapping)):
        series = pd.Series(observed, dtype=float)
        obs_vals, obs_labels = series.to_numpy(), [str(i) for i in series.index]
    else:
        obs_vals = np.atleast_1d(np.asarray(observed, dtype=float))
        obs_labels = [None] * obs_vals.size
    ax = _get_ax(ax)
    ax.hist(values, bins=bins, weights=weights, color="lightgrey", edgecolor="grey",
            label="split-half null")
    top = ax.get_ylim()[1]
    for v, lab in zip(obs_vals, obs_labels):
        ax.axvline(v, color="tab:blue", linewidth=1, alpha=0.8)
        if label_observed and lab is not None:
            ax.text(v, top, lab, rotation=90, va="top", ha="right", fontsize="x-small")
    if threshold is not None:
        ax.axvline(threshold, color="tab:red", linestyle="--", label=f"threshold {threshold:.3f}")
    ax.set_xlabel("subspace distance")
    ax.set_ylabel("fraction of null splits")
    ax.legend(fontsize="small")
    return ax


def plot_pair_intervals(
    boot: BootstrapDistances,
    threshold: float | None = None,
    ax: Any = None,
    highlight: Sequence | None = None,
) -> Any:
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
    ax = _get_ax(ax)
    y = np.arange(len(tidy))
    for flag, colour, name in ((False, "tab:blue", "other pairs"),
                               (True, "tab:orange", "pairs within highlighted set")):
        sel = np.array(inside) == flag
        if not sel.any():
            continue
        t = tidy[sel]
        ax.errorbar(t["point"], y[sel],
                    xerr=[t["point"] - t["lower"], t["upper"] - t["point"]],
                    fmt="o", color=colour, ecolor=colour, capsize=2, markersize=4,
                    label=name if marked else None)
    ax.set_yticks(y, [f"{a} - {b}" for a, b in zip(tidy.group_a, tidy.group_b)],
                  fontsize="x-small")
    if threshold is not None:
        ax.axvline(threshold, color="tab:red", linestyle="--",
                   label=f"threshold {threshold:.3f}")
    ax.set_xlabel(f"subspace distance ({boot.level:.0%} bootstrap interval)")
    if marked or threshold is not None:
        ax.legend(fontsize="small", loc="lower right")
    return ax
