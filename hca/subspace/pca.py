"""Per-domain PCA: spectra, effective ranks, principal subspaces and principal angles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import linalg
from sklearn.decomposition import PCA, FastICA
from sklearn.utils.extmath import svd_flip

from hca.validation import check_matrix, check_n_components

__all__ = [
    "ExplainedVariance",
    "explained_variance",
    "effective_rank",
    "principal_subspace",
    "principal_subspaces",
    "ica_subspace",
    "orthonormalize",
    "principal_angles",
    "subspace_distance",
    "subspace_distances",
    "benchmark_leverage",
    "residual_variance",
    "spectrum_table",
    "singular_spectrum",
]


_METHODS = ("pca", "ica")
_RANK_RULES = ("cumulative", "kaiser")
_RANK_TOL = 1e-10  # relative singular-value tolerance for "numerically rank deficient"
MAX_REDRAWS = 100  # resamples redrawn when a resample is rank deficient


def check_rows(n_rows: int, n_components: int, what: str) -> None:
    if n_rows < n_components + 1:
        raise ValueError(
            f"{what} has {n_rows} rows; a rank-{n_components} principal subspace of "
            f"centred data needs at least n_components + 1 = {n_components + 1} rows"
        )


def check_method(method: str) -> str:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    return method


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

    def _rank_text(self, rule: str) -> str:
        try:
            return str(self.effective_rank(0.9, rule=rule))
        except ValueError:
            return "n/a (spectrum truncated)"

    def summary(self) -> str:
        """Short text report."""
        name = f" ({self.label})" if self.label is not None else ""
        ratios = ", ".join(f"{r:.3f}" for r in self.ratios)
        cum = ", ".join(f"{c:.3f}" for c in self.cumulative)
        kaiser, cum_rank = (self._rank_text(rule) for rule in ("kaiser", "cumulative"))
        return (
            f"ExplainedVariance{name}: {self.n_samples} rows x {self.n_features} benchmarks\n"
            f"  ratios:     {ratios}\n"
            f"  cumulative: {cum}\n"
            f"  effective rank: {cum_rank} (cumulative >= 0.9), "
            f"{kaiser} (Kaiser: eigenvalues > mean)"
        )


def explained_variance(
    X: Any, n_components: int | None = None, *, label: str | None = None
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
    arr = check_matrix(X)
    n, d = arr.shape
    if n < 2:
        raise ValueError(f"X has {n} rows; explained variance needs at least 2 rows")
    k_max = min(n - 1, d)
    k = k_max if n_components is None else check_n_components(n_components, d)
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
    """Orthonormal basis (reduced QR) of the column span of ``A`` (ValueError if its columns
    are linearly dependent)."""
    arr = check_matrix(A, name="basis")
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
    arr = check_matrix(X)
    k = check_n_components(n_components, arr.shape[1])
    check_rows(arr.shape[0], k, "X")
    return _pca_basis(arr, k)


def _pca_basis(arr: np.ndarray, k: int) -> np.ndarray:
    # What PCA(n_components=k, svd_solver="full").fit(arr).components_.T computes (the same
    # centring, LAPACK call and sign convention, so the same bits), without scikit-learn's
    # input validation, which costs more than the SVD itself for the thousands of small
    # matrices of the split-half nulls and bootstraps (checked in tests/test_subspace.py).
    centred = arr - arr.mean(axis=0)
    U, s, Vt = linalg.svd(centred, full_matrices=False)
    U, Vt = svd_flip(U, Vt, u_based_decision=False)
    s = s[:k]
    if s[0] == 0 or s[-1] <= _RANK_TOL * s[0]:
        raise ValueError(
            f"X has numerical rank below n_components={k} after centring; "
            "its principal subspace is not unique"
        )
    return Vt[:k].T.copy()


def principal_subspaces(stack: Any, n_components: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """:func:`principal_subspace` of many matrices of one shape at once (one batched SVD).

    The same centring, sign convention and rank check; the bases equal those of
    :func:`principal_subspace` up to rounding (LAPACK's batched and single calls may differ in
    the last bits).

    Parameters
    ----------
    stack : array-like of shape (n_matrices, n_models, n_benchmarks)
    n_components : int

    Returns
    -------
    bases : ndarray of shape (n_matrices, n_benchmarks, n_components)
        Orthonormal columns; the entries of a rank-deficient matrix are not a basis.
    full_rank : ndarray of bool, shape (n_matrices,)
        False where the centred matrix has numerical rank below ``n_components``, where
        :func:`principal_subspace` raises (the caller decides: redraw or error).
    """
    arr = _float_array(stack, "stack")
    if arr.ndim != 3:
        raise ValueError(
            f"stack must be 3-D (n_matrices, n_models, n_benchmarks), got shape {arr.shape}"
        )
    if arr.shape[0] == 0:
        raise ValueError("stack holds no matrices")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr).all(axis=(1, 2)))[0])
        raise ValueError(f"stack[{bad}] contains NaN or infinite values")
    k = check_n_components(n_components, arr.shape[2])
    check_rows(arr.shape[1], k, "each matrix of stack")
    return pca_bases(arr, k)


def _float_array(values: Any, name: str) -> np.ndarray:
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array ({exc})") from exc


def pca_bases(stack: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`principal_subspaces` without input checks: ``stack`` a finite float array of
    shape (m, n, p) with ``n >= k + 1`` and ``k <= p`` (the hot path of the nulls)."""
    centred = stack - stack.mean(axis=1, keepdims=True)
    try:
        _, s, Vt = np.linalg.svd(centred, full_matrices=False)
    except np.linalg.LinAlgError:  # an SVD that does not converge fails that matrix only
        return _pca_bases_one_by_one(centred, k)
    return _flipped_bases(s, Vt, k)


def _flipped_bases(s: np.ndarray, Vt: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    # svd_flip(u_based_decision=False) on every matrix: the largest |entry| of each row of Vt
    # is made positive (argmax takes the first of tied entries, as in scikit-learn).
    rows = np.take_along_axis(Vt, np.argmax(np.abs(Vt), axis=2)[:, :, None], axis=2)
    Vt = Vt * np.sign(rows)
    s = s[:, :k]
    full_rank = (s[:, 0] != 0) & (s[:, -1] > _RANK_TOL * s[:, 0])
    return np.ascontiguousarray(Vt[:, :k].transpose(0, 2, 1)), full_rank


def _pca_bases_one_by_one(centred: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    m, _, p = centred.shape
    bases = np.zeros((m, p, k))
    full_rank = np.zeros(m, dtype=bool)
    for i, c in enumerate(centred):
        try:
            _, s, Vt = np.linalg.svd(c, full_matrices=False)
        except np.linalg.LinAlgError:
            continue
        b, ok = _flipped_bases(s[None], Vt[None], k)
        bases[i], full_rank[i] = b[0], ok[0]
    return bases, full_rank


def ica_subspace(
    X: Any, n_components: int = 3, *, random_state: int | None = 0, max_iter: int = 1000
) -> np.ndarray:
    """Orthonormal basis of the span of FastICA's mixing columns.

    ``mixing_`` of ``FastICA(n_components, whiten="unit-variance")`` orthonormalised by QR,
    as in the authors' code. FastICA whitens with PCA, so this span equals the PCA subspace.

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
    arr = check_matrix(X)
    k = check_n_components(n_components, arr.shape[1])
    check_rows(arr.shape[0], k, "X")
    return _ica_basis(arr, k, random_state, max_iter)


def _ica_basis(arr: np.ndarray, k: int, random_state: Any, max_iter: int = 1000) -> np.ndarray:
    _pca_basis(arr, k)  # same rank check as PCA
    ica = FastICA(
        n_components=k, whiten="unit-variance", random_state=random_state, max_iter=max_iter
    )
    ica.fit(arr)
    return orthonormalize(ica.mixing_)


def subspace_basis(arr: np.ndarray, k: int, method: str, random_state: Any) -> np.ndarray:
    if method == "pca":
        return _pca_basis(arr, k)
    return _ica_basis(arr, k, random_state)


def _cosines(U: Any, V: Any) -> np.ndarray:
    Q1 = orthonormalize(U)
    Q2 = orthonormalize(V)
    if Q1.shape[0] != Q2.shape[0]:
        raise ValueError(f"bases live in different spaces: {Q1.shape[0]} vs {Q2.shape[0]} rows")
    s = np.linalg.svd(Q1.T @ Q2, compute_uv=False)
    return np.clip(s, 0.0, 1.0)


def principal_angles(U: Any, V: Any) -> np.ndarray:
    """Principal angles (radians, ascending) between the column spans of ``U`` and ``V``:
    ``min(k, l)`` of them for ``k`` and ``l`` columns."""
    return np.arccos(_cosines(U, V))


def subspace_distance(U: Any, V: Any) -> float:
    """Cosine distance between subspaces: ``1 - mean`` of the principal-angle cosines.

    The cosines are the singular values of ``Q_U^T Q_V`` (orthonormal bases of the column
    spans, by QR), so the result depends only on the spans: 0 for identical subspaces, 1 for
    orthogonal ones. For bases with different numbers of columns the mean runs over the
    ``min(k, l)`` angles.

    Parameters
    ----------
    U, V : array-like of shape (n_benchmarks, k) and (n_benchmarks, l)

    Returns
    -------
    float in [0, 1]
    """
    return float(np.clip(1.0 - np.mean(_cosines(U, V)), 0.0, 1.0))


def subspace_distances(U: Any, V: Any) -> np.ndarray:
    """:func:`subspace_distance` of many pairs of bases at once (``U[i]`` with ``V[i]``),
    equal to it up to rounding.

    Parameters
    ----------
    U, V : array-like of shape (m, n_benchmarks, k) and (m, n_benchmarks, l)
        Stacks of bases; a single basis (2-D) is paired with every basis of the other stack.

    Returns
    -------
    ndarray of shape (m,), values in [0, 1]

    Raises
    ------
    ValueError
        If the stacks do not match, hold NaN, or a basis has dependent columns.
    """
    Q1 = _orthonormal_stack(U, "U")
    Q2 = _orthonormal_stack(V, "V")
    if Q1.shape[1] != Q2.shape[1]:
        raise ValueError(f"bases live in different spaces: {Q1.shape[1]} vs {Q2.shape[1]} rows")
    if Q1.shape[0] != Q2.shape[0] and 1 not in (Q1.shape[0], Q2.shape[0]):
        raise ValueError(f"U holds {Q1.shape[0]} bases but V holds {Q2.shape[0]}")
    cos = np.clip(np.linalg.svd(Q1.transpose(0, 2, 1) @ Q2, compute_uv=False), 0.0, 1.0)
    return np.clip(1.0 - cos.mean(axis=1), 0.0, 1.0)


def _orthonormal_stack(A: Any, name: str) -> np.ndarray:
    """:func:`orthonormalize` of every basis of a stack (one batched QR)."""
    arr = _float_array(A, name)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or 0 in arr.shape:
        raise ValueError(f"{name} must be a basis or a non-empty stack of bases, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    n, k = arr.shape[1:]
    if k > n:
        raise ValueError(f"basis has {k} columns but only {n} rows; columns are dependent")
    Q, R = np.linalg.qr(arr)
    diag = np.abs(np.diagonal(R, axis1=1, axis2=2))
    top = diag.max(axis=1)
    dependent = (top == 0) | (diag.min(axis=1) <= _RANK_TOL * top)
    if dependent.any():
        raise ValueError(
            f"{name}[{int(np.flatnonzero(dependent)[0])}]: basis has linearly dependent "
            "columns; its span has lower rank"
        )
    return Q


# --------------------------------------------------------------------------- descriptions
def spectrum_table(spectra: Mapping, n_show: int = 4, threshold: float = 0.9) -> pd.DataFrame:
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


def residual_variance(X: Any, n_components: int = 2) -> np.ndarray:
    """Variance of each benchmark left after removing the first principal components.

    The next principal direction is the leading direction of this residual, so it tells
    which benchmark the ``n_components + 1``-th component will mostly follow.

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
    arr = check_matrix(X)
    n, d = arr.shape
    if n < 2:
        raise ValueError(f"X has {n} rows; variances need at least 2")
    check_n_components(n_components, d, minimum=0, maximum=d - 1)
    Xc = arr - arr.mean(axis=0)
    if n_components:
        check_rows(n, n_components, "X")
        V = PCA(n_components=n_components, svd_solver="full").fit(arr).components_
        Xc = Xc - Xc @ V.T @ V
    return Xc.var(axis=0, ddof=1)


def benchmark_leverage(bases: Mapping, columns: Sequence | None = None) -> pd.DataFrame:
    """How much of each benchmark's axis lies in each domain's subspace.

    For an orthonormal basis ``U`` (``n_benchmarks x r``) the leverage of benchmark ``j``
    is ``||U[j, :]||^2``, the squared cosine of the angle between the axis ``e_j`` and the
    subspace; a row sums to ``r``.

    Parameters
    ----------
    bases : mapping ``{label: basis}``
        E.g. the output of :func:`group_subspaces`; bases are orthonormalised first.
    columns : sequence, optional
        Benchmark names for the columns (default ``0 .. n_benchmarks - 1``).

    Returns
    -------
    DataFrame
        One row per domain (index ``group``), one column per benchmark.
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
    Figure 2a, whose first share mostly measures how far the scores are from 0;
    :func:`explained_variance` is the centred PCA spectrum.

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
    arr = check_matrix(X)
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
    return pd.DataFrame(
        {"singular_value": s, "energy": energy, "cumulative": np.cumsum(energy)}, index=idx
    )
