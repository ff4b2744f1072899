"""Hierarchical Component Analysis (HCA): the estimator of Appendix C.

This module implements HCA (Appendix C.2-C.3, Algorithms 1-2, Proposition 1) of Jin,
Syrgkanis, Kakade & Zhang (2025) in three layers:

1. :func:`domain_ica` -- per-domain ICA. scikit-learn ``FastICA(n_components,
   whiten="unit-variance")`` on the rows of each domain gives an unmixing matrix
   ``M_k`` (``n_components x n_benchmarks``) that maps centred scores ``x - mean_k``
   to unit-variance sources. (This equals the pseudo-inverse of the rescaled ICA mixing
   matrix used in the authors' code.) Convergence warnings are re-emitted with the
   domain's name and recorded. FastICA's fixed-point iteration can stop in different
   local optima for different initialisations; ``n_restarts > 1`` runs it from several
   seeds and keeps the run with the largest negentropy (FastICA's own objective,
   :func:`ica_negentropy`), a choice that never looks at the MIC. The default
   ``n_restarts=1`` is one run seeded with ``random_state`` (the authors' setting).
2. :func:`hca_search` -- the search core. It takes only the list of ``M_k`` and searches
   the row orders ``pi_k`` of all domains for the one with the smallest MIC.
3. :class:`HCA` -- the scikit-learn-style estimator combining both, recovering the
   per-domain SCMs and offering the OLS ambiguity adjustment of Section 4
   (:meth:`HCA.adjust`). :func:`mic_by_subset` sweeps domain subsets (Figure 18).

Conventions
-----------
* Main-text convention: ``B_k`` is lower-triangular and ``z_1`` is the root (first in
  causal order). Algorithm 2 writes the same thing upper-triangular with reversed rows.
  Position ``i`` of a row order means causal position ``i``.
* For a row order ``pi = (pi_1, ..., pi_K)``, ``M'_k = M_k[pi_k]``. For positions
  ``i = 1..d0`` the residual of row ``i`` of every ``M'_k`` is taken and
  ``h_i`` is the top right singular vector of the ``K x n_benchmarks`` stack of residuals:

  - ``residual="domain"`` (default, Algorithm 1): residual after projecting out the span
    of the domain's own rows ``M'_k[:i]``; ``h_i`` is then orthogonalised against
    ``h_1..h_{i-1}`` (the optional Gram-Schmidt of Algorithm 2) so that ``H_hat`` has
    orthonormal rows.
  - ``residual="shared"`` (the authors' reference code): residual after projecting out
    ``h_1..h_{i-1}``; the rows are orthonormal by construction.

  For an exact SCM the two coincide.
* ``B_hat_k = argmin_{B lower-triangular} ||M'_k - B H_hat||_F``; because ``H_hat`` has
  orthonormal rows this is ``tril(M'_k H_hat^T)``.
* MIC (Proposition 1): ``J_k = B_hat_k H_hat M'_k^T (M'_k M'_k^T)^{-1}``; with rows of
  ``J_k`` scaled to unit norm, ``alpha_k = (1/d0) sum_{i != j} J_k[i, j]^2`` and
  ``MIC = max_k alpha_k``. The MIC does not depend on the signs of the rows of ``M_k``;
  it does depend on their scale when the SCM is inexact, which is why the ICA sources
  are scaled to unit variance.
* Table 3 diagnostics: the rank-1 error at position ``i`` is ``1 - s_1^2 / sum s^2`` of
  the stacked residuals; the unmixing error of domain ``k`` is
  ``||M'_k - B_hat_k H_hat||_F / ||M'_k||_F``.
* Signs: every row of ``H_hat`` is signed so that its entries sum to a non-negative
  number (the factor grows with the average score); in each domain the rows of
  ``M'_k`` are signed so that ``diag(B_hat_k) > 0``.

Search strategies
-----------------
``search="exhaustive"`` evaluates all ``(d0!)^K`` row orders (Algorithm 2). The orders
form a tree: ``h_i`` and the contribution of position ``i`` to every ``alpha_k`` depend
only on the rows chosen at positions ``<= i``, so the work is shared by all orders with
a common prefix and each tree level is evaluated in vectorised batches. Writing
``c_{k,i}`` for the squared diagonal entry of the normalised row ``i`` of ``J_k`` (which
is fixed once positions ``<= i`` are chosen), ``alpha_k = 1 - (1/d0) sum_i c_{k,i}`` and
``c_{k,i} <= 1``, so a prefix of length ``j`` has the lower bound
``LB = max_k (j - sum_{i<=j} c_{k,i}) / d0`` on the MIC of every completion.
``search="sequential"`` is a beam search over the positions: all position-1 choices
are evaluated, the ``beam_width`` prefixes with the smallest ``LB`` are kept, their
position-2 children are evaluated, and so on (parents whose bound already exceeds the
current ``beam_width``-th best child are skipped, which does not change the result).
The result is *certified* optimal when no discarded prefix had a bound below the MIC
found, since every completion of a discarded prefix has an MIC at least its bound. If
not, the beam width is doubled and the search repeated, until the result is certified
or the next round would exceed ``max_nodes`` evaluated prefixes (then a warning says the
result is not certified). A certified result is the exhaustive optimum (up to exact
ties), and a beam that keeps every prefix is the exhaustive search, so the sequential
search returns the exhaustive optimum on every problem whose widening fits in
``max_nodes``; on larger problems it is fast when the data fit a hierarchical model
well (few prefixes have a small bound) and slow, or uncertified, when no order fits well.

Differences from the authors' code (``scripts/utils_full.py`` of hlzhang109/causal-eval)
-----------------------------------------------------------------------------------------
* Order: their ``recover_H`` fills ``H_hat`` from the last row to the first
  (upper-triangular ``B_k``); here position 1 is the root (lower-triangular ``B_k``).
* Residuals: their code projects out the recovered rows of ``H_hat``
  (``residual="shared"`` here); the default here is Algorithm 1 (``"domain"``).
* ICA scaling: they rescale FastICA's mixing matrix by the sample standard deviation
  of the sources (ddof=1) and take its pseudo-inverse; here ``components_`` of
  ``FastICA(whiten="unit-variance")`` is used (ddof=0), i.e. the same matrix up to the
  factor ``sqrt((n - 1) / n)``.
* ``B_hat_k``: they minimise ``||M'_k - B H_hat||_F`` numerically (BFGS); here the
  closed form gives the exact minimiser.
* Search: their ``process_matrices`` helper chooses rows greedily, position by position,
  by a singular-value ratio, but the notebook that produces the paper's Figures 17-18
  (``scripts/main.ipynb``) does not call it: it evaluates every row order with
  ``recover_H`` and keeps the smallest MIC, i.e. ``search="exhaustive",
  residual="shared"`` here. ``"sequential"`` here ranks prefixes by the MIC bound and
  certifies optimality (the exhaustive search is Algorithm 2 as printed).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.decomposition import FastICA
from sklearn.exceptions import ConvergenceWarning

__all__ = [
    "GAUSSIAN_LOGCOSH",
    "HCA",
    "DomainICA",
    "DomainSCM",
    "HCASearchResult",
    "OLSAdjustment",
    "domain_ica",
    "ica_negentropy",
    "restart_seeds",
    "hca_search",
    "evaluate_order",
    "mic_by_subset",
]

SEARCHES = ("exhaustive", "sequential")
RESIDUALS = ("domain", "shared")
#: Largest number of row orders ``(d0!)^K`` that ``search="exhaustive"`` accepts.
MAX_EXHAUSTIVE_ORDERS = 5_000_000
_MAX_CHILDREN = 1 << 15  # nodes expanded per vectorised batch (bounds memory)
_TINY = 1e-300
_RANK_TOL = 1e-10


# =========================================================================== formatting
def _fmt(value: float) -> str:
    """Three significant digits, keeping trailing zeros (``24.0``, ``2.76``)."""
    value = float(value)
    if abs(value) >= 1000:
        return f"{value:.0f}"
    return f"{value:#.3g}".rstrip(".")


def _factor_names(d: int) -> list[str]:
    """``["z1", ..., "zd"]``."""
    return [f"z{i + 1}" for i in range(d)]


# =========================================================================== input checks
def _label_order(labels: np.ndarray) -> list:
    """Sorted unique labels (by ``str`` when the labels are not mutually comparable)."""
    unique = list(pd.unique(pd.Series(labels, dtype=object)))
    try:
        return sorted(unique)
    except TypeError:
        return sorted(unique, key=str)


def _as_numeric_frame(X: Any) -> tuple[np.ndarray, list[str], bool, pd.Index | None]:
    """Return ``(values, column names, has_names, row index)`` for an array or DataFrame."""
    if isinstance(X, pd.DataFrame):
        bad = [str(c) for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
        if bad:
            raise TypeError(f"X has non-numeric column(s) {bad}; benchmark scores must be numbers")
        names = [str(c) for c in X.columns]
        return X.to_numpy(dtype=float), names, True, X.index
    try:
        values = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"X must be a numeric array or DataFrame ({err})") from None
    if values.ndim != 2:
        raise ValueError(f"X must be 2-D (models x benchmarks), got {values.ndim} dimension(s)")
    return values, [f"x{j}" for j in range(values.shape[1])], False, None


def _check_finite(values: np.ndarray, names: list[str], index: pd.Index | None) -> None:
    """Raise naming the columns and rows with NaN or infinite values."""
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    cols = [names[j] for j in np.flatnonzero(bad.any(axis=0))]
    rows = np.flatnonzero(bad.any(axis=1))
    shown = index[rows[:5]].tolist() if index is not None else rows[:5].tolist()
    more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
    raise ValueError(
        f"X contains NaN or infinite values in column(s) {cols}, rows {shown}{more}; "
        "impute or drop them first"
    )


def _check_constant(values: np.ndarray, names: list[str]) -> None:
    """Raise naming the constant columns."""
    constant = [names[j] for j in range(values.shape[1]) if np.ptp(values[:, j]) == 0]
    if constant:
        raise ValueError(f"X has constant column(s) {constant}; drop them before fitting")


def _check_domains(domains: Any, n_rows: int) -> np.ndarray:
    """Domain labels as an object array of length ``n_rows``."""
    labels = np.asarray(domains, dtype=object)
    if labels.ndim != 1:
        raise ValueError(f"domains must be 1-D (one label per model), got shape {labels.shape}")
    if len(labels) != n_rows:
        raise ValueError(
            f"X has {n_rows} rows but domains has {len(labels)} labels; one label per row is needed"
        )
    if pd.isna(pd.Series(labels)).any():
        raise ValueError("domains contains missing labels (None/NaN)")
    return labels


def _check_domain_sizes(labels: np.ndarray, order: list, n_benchmarks: int) -> None:
    """Need at least two domains, each with at least ``n_benchmarks`` models."""
    if len(order) < 2:
        raise ValueError(
            f"HCA needs at least 2 domains, found {len(order)} ({order!r}); "
            "a single domain does not identify the causal order"
        )
    for label in order:
        count = int(np.sum(labels == label))
        if count < n_benchmarks:
            raise ValueError(
                f"domain {label!r} has {count} models but at least {n_benchmarks} "
                f"(the number of benchmarks) are needed"
            )


def _check_n_components(n_components: Any, n_benchmarks: int) -> int:
    """``1 <= n_components <= n_benchmarks``."""
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)):
        raise TypeError(f"n_components must be an int, got {type(n_components).__name__}")
    if not 1 <= n_components <= n_benchmarks:
        raise ValueError(
            f"n_components ({n_components}) must be between 1 and the number of "
            f"benchmarks ({n_benchmarks})"
        )
    return int(n_components)


def _check_options(search: str, residual: str, beam_width: Any, max_nodes: Any = 1) -> None:
    """Validate the search options."""
    if search not in SEARCHES:
        raise ValueError(f"unknown search {search!r}; expected one of {SEARCHES}")
    if residual not in RESIDUALS:
        raise ValueError(f"unknown residual {residual!r}; expected one of {RESIDUALS}")
    for name, value in (("beam_width", beam_width), ("max_nodes", max_nodes)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def _validate_data(X: Any, domains: Any, n_components: Any):
    """Validate ``X``/``domains``; return ``(values, names, has_names, labels, order, d)``."""
    values, names, has_names, index = _as_numeric_frame(X)
    if values.size == 0:
        raise ValueError(f"X is empty (shape {values.shape})")
    labels = _check_domains(domains, values.shape[0])
    d = _check_n_components(n_components, values.shape[1])
    _check_finite(values, names, index)
    _check_constant(values, names)
    order = _label_order(labels)
    _check_domain_sizes(labels, order, values.shape[1])
    return values, names, has_names, labels, order, d


# =========================================================================== ICA
#: ``E[log cosh(nu)]`` for a standard normal ``nu`` (Gauss-Hermite quadrature, 80 nodes).
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(80)
GAUSSIAN_LOGCOSH: float = float(np.sum(_WEIGHTS * np.log(np.cosh(_NODES))) / np.sqrt(2 * np.pi))


def ica_negentropy(sources: Any) -> np.ndarray:
    """FastICA's negentropy approximation of every source (Hyvarinen, 1999).

    ``J(y) = (E[G(y)] - E[G(nu)])^2`` with ``G(u) = log cosh(u)`` (scikit-learn's default
    contrast ``fun="logcosh"``), ``y`` standardised and ``nu`` standard normal. FastICA
    looks for directions that make ``J`` large; the sum over the sources is the objective
    used to choose between restarts (``n_restarts``).

    Parameters
    ----------
    sources : array-like of shape (n_samples, n_sources)

    Returns
    -------
    ndarray of shape (n_sources,)
    """
    S = np.asarray(sources, dtype=float)
    if S.ndim != 2 or S.shape[0] < 2:
        raise ValueError(f"sources must be 2-D with at least 2 rows, got shape {S.shape}")
    sd = S.std(axis=0)
    if np.any(sd == 0) or not np.all(np.isfinite(S)):
        raise ValueError("sources contain a constant column or non-finite values")
    Y = (S - S.mean(axis=0)) / sd
    # log cosh(y) = |y| + log1p(exp(-2|y|)) - log 2, stable for large |y|
    A = np.abs(Y)
    G = A + np.log1p(np.exp(-2 * A)) - np.log(2.0)
    return (G.mean(axis=0) - GAUSSIAN_LOGCOSH) ** 2


@dataclass(frozen=True, eq=False)
class DomainICA:
    """FastICA fit of one domain.

    Attributes
    ----------
    domain : hashable
        Domain label.
    unmixing : ndarray of shape (n_components, n_benchmarks)
        ``M_k``: sources ``= (x - mean) @ unmixing.T`` have unit variance.
    mean : ndarray of shape (n_benchmarks,)
        Domain mean of the scores.
    converged : bool
        Whether FastICA converged within ``max_iter``.
    n_iter : int
        FastICA iterations.
    n_samples : int
        Models in the domain.
    objective : float
        Sum over the sources of :func:`ica_negentropy` (larger is better).
    restart : int
        Index of the restart kept (0 when ``n_restarts=1``).
    restart_objectives : tuple of float
        Objective of every restart (NaN for restarts that did not converge when at least
        one did, as those are never kept).
    """

    domain: Hashable
    unmixing: np.ndarray
    mean: np.ndarray
    converged: bool
    n_iter: int
    n_samples: int
    objective: float = float("nan")
    restart: int = 0
    restart_objectives: tuple = ()

    def summary(self) -> str:
        """One line describing the fit."""
        state = "converged" if self.converged else "NOT converged"
        extra = ""
        if len(self.restart_objectives) > 1:
            extra = (f"; restart {self.restart} of {len(self.restart_objectives)} kept "
                     f"(largest negentropy {self.objective:.4g})")
        return (
            f"ICA {self.domain!r}: {self.n_samples} models, {self.unmixing.shape[0]} sources, "
            f"{state} after {self.n_iter} iterations{extra}"
        )


def _check_n_restarts(n_restarts: Any) -> int:
    if isinstance(n_restarts, bool) or not isinstance(n_restarts, (int, np.integer)) \
            or n_restarts < 1:
        raise ValueError(f"n_restarts must be a positive int, got {n_restarts!r}")
    return int(n_restarts)


def restart_seeds(random_state: Any, n_restarts: int) -> list:
    """The ``random_state`` of every FastICA restart.

    An int seed ``s`` gives ``s, s + 1, ..., s + n_restarts - 1`` (so restart 0 is the
    single fit of ``n_restarts=1``); ``None`` gives ``None`` each time (not reproducible);
    a ``numpy.random.RandomState`` gives ``n_restarts`` integers drawn from it.
    """
    n_restarts = _check_n_restarts(n_restarts)
    if random_state is None:
        return [None] * n_restarts
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return [int(random_state) + r for r in range(n_restarts)]
    if isinstance(random_state, np.random.RandomState):
        if n_restarts == 1:
            return [random_state]
        return [int(x) for x in random_state.randint(0, 2**31 - 1, size=n_restarts)]
    raise TypeError(
        f"random_state must be an int, None or numpy.random.RandomState, got "
        f"{type(random_state).__name__}"
    )


def _one_fastica(Xk: np.ndarray, d: int, seed: Any, max_iter: int, tol: float):
    """One FastICA run; return ``(ica, converged)`` with warnings other than convergence
    re-emitted."""
    ica = FastICA(
        n_components=d, whiten="unit-variance", random_state=seed, max_iter=max_iter, tol=tol,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ica.fit(Xk)
    converged = True
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            converged = False
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return ica, converged


def _fit_one_ica(
    Xk: np.ndarray, label: Hashable, d: int, random_state: Any, max_iter: int, tol: float,
    n_restarts: int = 1,
) -> DomainICA:
    """FastICA on one domain (best of ``n_restarts`` by negentropy); re-emit warnings, the
    convergence one with the domain name."""
    runs = []
    for seed in restart_seeds(random_state, n_restarts):
        ica, converged = _one_fastica(Xk, d, seed, max_iter, tol)
        objective = float(np.sum(ica_negentropy((Xk - ica.mean_) @ ica.components_.T)))
        runs.append((ica, converged, objective))
    any_converged = any(c for _, c, _ in runs)
    scores = [obj if (c or not any_converged) else np.nan for _, c, obj in runs]
    best = int(np.nanargmax(scores)) if n_restarts > 1 else 0
    ica, converged, objective = runs[best]
    if not converged:
        warnings.warn(
            f"FastICA did not converge for domain {label!r} ({Xk.shape[0]} models) after "
            f"{ica.n_iter_} iterations (max_iter={max_iter}, tol={tol}); increase max_iter "
            "or tol, and treat this domain's unmixing matrix with caution",
            ConvergenceWarning,
            stacklevel=4,  # _fit_one_ica -> _fit_icas -> public function -> caller
        )
    return DomainICA(
        domain=label,
        unmixing=np.array(ica.components_, dtype=float),
        mean=np.array(ica.mean_, dtype=float),
        converged=converged,
        n_iter=int(ica.n_iter_),
        n_samples=int(Xk.shape[0]),
        objective=objective,
        restart=best,
        restart_objectives=tuple(float(x) for x in scores),
    )


def _fit_icas(values, labels, order, d, random_state, max_iter, tol,
              n_restarts: int = 1) -> dict[Hashable, DomainICA]:
    """FastICA on every domain in ``order``."""
    fits = {}
    for label in order:
        fits[label] = _fit_one_ica(values[labels == label], label, d, random_state, max_iter,
                                   tol, n_restarts)
    return fits


def domain_ica(
    X: Any,
    domains: Any,
    n_components: int = 3,
    *,
    random_state: Any = 0,
    max_iter: int = 1000,
    tol: float = 1e-4,
    n_restarts: int = 1,
) -> dict[Hashable, DomainICA]:
    """Fit FastICA separately on every domain (step 1 of HCA).

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_models, n_benchmarks)
        Benchmark scores.
    domains : array-like of shape (n_models,)
        Domain label of every row.
    n_components : int, default=3
        Number of sources ``d0``.
    random_state : int, RandomState or None, default=0
        Passed to every ``FastICA`` (see :func:`restart_seeds` for the restarts).
    max_iter, tol
        Passed to every ``FastICA``.
    n_restarts : int, default=1
        FastICA runs per domain from different initialisations; the converged run with
        the largest negentropy (:func:`ica_negentropy`, FastICA's own objective) is kept.
        The choice never looks at the MIC. ``1`` (the default) is a single run with
        ``random_state``, as in the authors' code.

    Returns
    -------
    dict
        Domain label (sorted) -> :class:`DomainICA`.

    Warns
    -----
    ConvergenceWarning
        Naming every domain whose kept FastICA run did not converge.
    """
    n_restarts = _check_n_restarts(n_restarts)
    values, _, _, labels, order, d = _validate_data(X, domains, n_components)
    return _fit_icas(values, labels, order, d, random_state, max_iter, tol, n_restarts)


# =========================================================================== search result
@dataclass(frozen=True, eq=False)
class HCASearchResult:
    """Outcome of the HCA search over row orders (Algorithm 2).

    Attributes
    ----------
    domains : tuple
        Domain names, in the order of the input matrices.
    permutations : tuple of ndarray
        Per domain, ``permutations[k][i]`` is the row of ``M_k`` placed at causal
        position ``i`` (0-based).
    signs : tuple of ndarray
        Per domain, the sign applied to each placed row so that ``diag(B_hat_k) > 0``.
    aligned : tuple of ndarray
        ``M'_k = signs[k][:, None] * M_k[permutations[k]]``.
    unmixing : ndarray of shape (n_components, n_benchmarks)
        ``H_hat`` with orthonormal rows.
    weights : tuple of ndarray
        Least-squares lower-triangular ``B_hat_k = tril(M'_k H_hat^T)``.
    J : tuple of ndarray
        ``J_k = B_hat_k H_hat M'_k^T (M'_k M'_k^T)^{-1}`` (Proposition 1).
    alphas : ndarray of shape (n_domains,)
        Inexactness ``alpha_k`` per domain.
    mic : float
        ``max_k alpha_k``.
    rank1_error : ndarray of shape (n_components,)
        ``1 - s_1^2 / sum s^2`` of the stacked residuals at every position (Table 3a).
    unmixing_error : ndarray of shape (n_domains,)
        ``||M'_k - B_hat_k H_hat||_F / ||M'_k||_F`` (Table 3b).
    search, residual : str
        The options used.
    n_evaluated : int
        Complete row orders whose MIC was computed.
    n_nodes : int
        Prefixes (nodes of the search tree, complete orders included) evaluated.
    beam_width : int
        Final beam width of ``"sequential"`` (0 for ``"exhaustive"``).
    certified : bool
        True when the search proves this is the minimal MIC over all ``(d0!)^K`` orders
        (always for ``"exhaustive"``).
    """

    domains: tuple
    permutations: tuple
    signs: tuple
    aligned: tuple
    unmixing: np.ndarray
    weights: tuple
    J: tuple
    alphas: np.ndarray
    mic: float
    rank1_error: np.ndarray
    unmixing_error: np.ndarray
    search: str = "evaluate"
    residual: str = "domain"
    n_evaluated: int = 1
    n_nodes: int = 0
    beam_width: int = 0
    certified: bool = False

    def summary(self) -> str:
        """Text summary: MIC, Table 3 diagnostics and the chosen orders."""
        d = self.unmixing.shape[0]
        names = _factor_names(d)
        lines = [
            f"HCA search ({self.search}, residual={self.residual}): MIC = {self.mic:.4g} "
            f"({self.n_evaluated} row orders evaluated, "
            f"{'certified optimal' if self.certified else 'not certified'})",
            "rank-1 error: " + ", ".join(f"{n} {e:.3g}" for n, e in zip(names, self.rank1_error)),
        ]
        for k, name in enumerate(self.domains):
            order = ", ".join(str(int(r)) for r in self.permutations[k])
            lines.append(
                f"  {name}: alpha = {self.alphas[k]:.4g}, unmixing error = "
                f"{self.unmixing_error[k]:.3g}, ICA rows in causal order = ({order})"
            )
        return "\n".join(lines)


# =========================================================================== core checks
def _as_unmixing_list(unmixings: Any) -> tuple[np.ndarray, tuple]:
    """Stack the ``M_k`` into a ``(K, d, p)`` array; return it with the domain names."""
    if isinstance(unmixings, Mapping):
        names = tuple(unmixings.keys())
        mats = [unmixings[n] for n in names]
    else:
        mats = list(unmixings)
        names = tuple(range(len(mats)))
    if len(mats) < 2:
        raise ValueError(f"HCA needs unmixing matrices of at least 2 domains, got {len(mats)}")
    arrays = [np.asarray(m, dtype=float) for m in mats]
    shape = arrays[0].shape
    for name, m in zip(names, arrays):
        if m.ndim != 2 or m.shape != shape:
            raise ValueError(
                f"unmixing matrix of domain {name!r} has shape {m.shape}, expected {shape}"
            )
        if not np.all(np.isfinite(m)):
            raise ValueError(f"unmixing matrix of domain {name!r} contains NaN or infinite values")
        s = np.linalg.svd(m, compute_uv=False)
        if shape[0] > shape[1] or s[-1] <= _RANK_TOL * s[0]:
            raise ValueError(f"unmixing matrix of domain {name!r} does not have full row rank")
    return np.stack(arrays), names


# =========================================================================== single order
def _place_rows(M: np.ndarray, perms: Sequence[np.ndarray], residual: str):
    """Row-residual extraction for one row order; return ``(H_hat, rank-1 errors)``."""
    K, d, p = M.shape
    Mp = np.stack([M[k][perms[k]] for k in range(K)])
    H = np.zeros((d, p))
    errors = np.zeros(d)
    for i in range(d):
        R = np.empty((K, p))
        for k in range(K):
            prev = Mp[k, :i] if residual == "domain" else H[:i]
            basis = np.linalg.qr(prev.T)[0] if i else np.zeros((p, 0))
            R[k] = Mp[k, i] - basis @ (basis.T @ Mp[k, i])
        _, s, vt = np.linalg.svd(R, full_matrices=False)
        total = float(np.sum(s**2))
        errors[i] = 1.0 - s[0] ** 2 / total if total > 0 else 0.0
        h = vt[0] - H[:i].T @ (H[:i] @ vt[0])
        h /= max(np.linalg.norm(h), _TINY)
        H[i] = h if h.sum() >= 0 else -h
    return H, np.clip(errors, 0.0, 1.0), Mp


def _inexactness(J: np.ndarray) -> float:
    """``(1/d) sum_{i != j} Jn_ij^2`` with unit-norm rows ``Jn``."""
    norms = np.maximum(np.sum(J**2, axis=1), _TINY)
    return float(1.0 - np.mean(np.diag(J) ** 2 / norms))


def evaluate_order(
    unmixings: Sequence[np.ndarray] | Mapping[Hashable, np.ndarray],
    permutations: Sequence[Sequence[int]],
    *,
    residual: str = "domain",
) -> HCASearchResult:
    """Evaluate one row order: ``H_hat``, ``B_hat_k``, MIC and the Table 3 diagnostics.

    Parameters
    ----------
    unmixings : sequence of ndarray or mapping
        ICA unmixing matrices ``M_k`` (``d0 x n_benchmarks``, full row rank).
    permutations : sequence of sequence of int
        Per domain, the row of ``M_k`` placed at each causal position.
    residual : {"domain", "shared"}, default="domain"
        Residual definition (see the module docstring).

    Returns
    -------
    HCASearchResult
    """
    if residual not in RESIDUALS:
        raise ValueError(f"unknown residual {residual!r}; expected one of {RESIDUALS}")
    M, names = _as_unmixing_list(unmixings)
    K, d, _ = M.shape
    perms = [np.asarray(p, dtype=int) for p in permutations]
    if len(perms) != K or any(sorted(p.tolist()) != list(range(d)) for p in perms):
        raise ValueError(f"permutations must give one permutation of range({d}) per domain ({K})")
    H, errors, Mp = _place_rows(M, perms, residual)
    signs, aligned, weights, Js, alphas, unmix = [], [], [], [], [], []
    for k in range(K):
        B = np.tril(Mp[k] @ H.T)
        s = np.where(np.diag(B) < 0, -1.0, 1.0)
        B, Mk = s[:, None] * B, s[:, None] * Mp[k]
        J = B @ H @ Mk.T @ np.linalg.inv(Mk @ Mk.T)
        signs.append(s)
        aligned.append(Mk)
        weights.append(B)
        Js.append(J)
        alphas.append(_inexactness(J))
        unmix.append(np.linalg.norm(Mk - B @ H) / np.linalg.norm(Mk))
    alphas = np.array(alphas)
    return HCASearchResult(
        domains=names,
        permutations=tuple(perms),
        signs=tuple(signs),
        aligned=tuple(aligned),
        unmixing=H,
        weights=tuple(weights),
        J=tuple(Js),
        alphas=alphas,
        mic=float(alphas.max()),
        rank1_error=errors,
        unmixing_error=np.array(unmix),
        residual=residual,
    )


# =========================================================================== search tree
@dataclass
class _Nodes:
    """A batch of prefixes (rows chosen at positions ``1..depth`` in every domain)."""

    rows: np.ndarray  # (N, K, depth) row of M_k placed at each position
    mask: np.ndarray  # (N, K) bit mask of the rows already placed
    H: np.ndarray  # (N, depth, q) orthonormal h_1..h_depth (reduced coordinates)
    csum: np.ndarray  # (N, K) sum over positions of c_{k,i}
    lb: np.ndarray  # (N,) lower bound on the MIC of every completion

    def __len__(self) -> int:
        return len(self.lb)

    @property
    def depth(self) -> int:
        return self.rows.shape[2]

    def take(self, idx) -> _Nodes:
        return _Nodes(self.rows[idx], self.mask[idx], self.H[idx], self.csum[idx], self.lb[idx])

    @staticmethod
    def concat(parts: Sequence[_Nodes]) -> _Nodes:
        names = ("rows", "mask", "H", "csum", "lb")
        return _Nodes(*(np.concatenate([getattr(p, f) for p in parts]) for f in names))


@dataclass
class _Children:
    """Children of a batch of parents, kept light until :meth:`nodes` materialises them."""

    parents: _Nodes
    parent: np.ndarray  # (n,) index into parents
    rows: np.ndarray  # (n, K) row placed at the new position
    h: np.ndarray  # (n, q) new row of H_hat
    csum: np.ndarray  # (n, K)
    lb: np.ndarray  # (n,)

    def __len__(self) -> int:
        return len(self.lb)

    def nodes(self, idx=slice(None)) -> _Nodes:
        """Materialise the selected children as prefixes."""
        p, rows = self.parent[idx], self.rows[idx]
        return _Nodes(
            np.concatenate([self.parents.rows[p], rows[:, :, None]], axis=2),
            self.parents.mask[p] | (1 << rows),
            np.concatenate([self.parents.H[p], self.h[idx][:, None, :]], axis=1),
            self.csum[idx],
            self.lb[idx],
        )

    def full_rows(self, i: int) -> np.ndarray:
        """Complete ``(K, depth)`` row choices of child ``i``."""
        return np.concatenate([self.parents.rows[self.parent[i]], self.rows[i][:, None]], axis=1)


def _top_direction(R: np.ndarray) -> np.ndarray:
    """Top right singular vector of every ``K x q`` matrix in ``R`` (batched)."""
    n, K, q = R.shape
    if K <= q:
        _, V = np.linalg.eigh(R @ R.transpose(0, 2, 1))
        h = (V[:, None, :, -1] @ R)[:, 0, :]
    else:
        _, V = np.linalg.eigh(R.transpose(0, 2, 1) @ R)
        h = V[:, :, -1]
    return h / np.maximum(np.linalg.norm(h, axis=1, keepdims=True), _TINY)


class _SearchTree:
    """Vectorised evaluation of the tree of row-order prefixes.

    Everything is computed in an orthonormal basis of the span of all rows of all
    ``M_k`` (which preserves every inner product and projection).
    """

    def __init__(self, M: np.ndarray, residual: str, max_children: int = _MAX_CHILDREN):
        self.K, self.d, p = M.shape
        self.residual = residual
        self.max_children = max_children
        _, s, vt = np.linalg.svd(M.reshape(-1, p), full_matrices=False)
        basis = vt[: int(np.sum(s > _RANK_TOL * s[0]))]
        self.M = M @ basis.T  # (K, d, q)
        self.Q = np.stack([m.T @ np.linalg.inv(m @ m.T) for m in self.M])  # (K, q, d)
        self.free = self._free_table()
        self.res = self._domain_residuals() if residual == "domain" else None
        self._combos: dict[int, np.ndarray] = {}
        self.n_leaves = 0  # complete row orders evaluated
        self.n_nodes = 0  # prefixes (tree nodes) evaluated
        self.skipped = np.inf  # smallest bound of a parent skipped by ``children``

    def _free_table(self) -> np.ndarray:
        """``free[mask]`` lists the rows not in ``mask`` first (padded with 0)."""
        d = self.d
        table = np.zeros((1 << d, d), dtype=np.intp)
        for mask in range(1 << d):
            rows = [r for r in range(d) if not mask >> r & 1]
            table[mask, : len(rows)] = rows
        return table

    def _domain_residuals(self) -> np.ndarray:
        """``res[k, mask, r]``: row ``r`` of ``M_k`` minus its projection on rows ``mask``."""
        K, d, q = self.M.shape
        res = np.zeros((K, 1 << d, d, q))
        for k in range(K):
            for mask in range(1 << d):
                placed = [r for r in range(d) if mask >> r & 1]
                basis = np.linalg.qr(self.M[k, placed].T)[0] if placed else np.zeros((q, 0))
                res[k, mask] = self.M[k] - (self.M[k] @ basis) @ basis.T
        return res

    def combos(self, n_free: int) -> np.ndarray:
        """All ``n_free ** K`` choices of one free row per domain."""
        if n_free not in self._combos:
            grid = itertools.product(range(n_free), repeat=self.K)
            self._combos[n_free] = np.array(list(grid), dtype=np.intp).reshape(-1, self.K)
        return self._combos[n_free]

    def root(self) -> _Nodes:
        K, q = self.K, self.M.shape[2]
        return _Nodes(
            np.zeros((1, K, 0), dtype=np.intp), np.zeros((1, K), dtype=np.intp),
            np.zeros((1, 0, q)), np.zeros((1, K)), np.zeros(1),
        )

    def _residual_stack(self, nodes: _Nodes, rows: np.ndarray) -> np.ndarray:
        """Residuals ``(N, B, K, q)`` of the candidate rows at the next position."""
        kk = np.arange(self.K)
        if self.residual == "domain":
            return self.res[kk, nodes.mask[:, None, :], rows]
        coef = self.M[None] @ nodes.H.transpose(0, 2, 1)[:, None]  # (N, K, d, depth)
        full = self.M[None] - coef @ nodes.H[:, None]  # (N, K, d, q)
        return full[np.arange(len(nodes))[:, None, None], kk, rows]

    def expand(self, nodes: _Nodes, combos: np.ndarray) -> _Children:
        """Children of ``nodes`` for the given choices of free rows."""
        N, B, K, j = len(nodes), len(combos), self.K, nodes.depth
        kk = np.arange(K)
        rows = self.free[nodes.mask][:, kk, combos]  # (N, B, K)
        h = _top_direction(self._residual_stack(nodes, rows).reshape(N * B, K, -1))
        parent = np.repeat(np.arange(N), B)
        rows = rows.reshape(N * B, K)
        if j and self.residual == "domain":  # Gram-Schmidt against h_1..h_j
            Hp = nodes.H[parent]
            h = h - np.sum(np.sum(Hp * h[:, None, :], axis=2)[:, :, None] * Hp, axis=1)
            h /= np.maximum(np.linalg.norm(h, axis=1, keepdims=True), _TINY)
        # Row j+1 of J_k: m P_{V_{j+1}} Q_k = m P_{V_j} Q_k + (m . h) h Q_k, as h is orthogonal
        # to V_j = span(h_1..h_j).
        P = nodes.H.transpose(0, 2, 1) @ nodes.H  # (N, q, q)
        old = ((self.M[None] @ P[:, None]) @ self.Q[None])[parent[:, None], kk, rows]  # (NB, K, d)
        q = h.shape[1]
        mh = np.take_along_axis((h @ self.M.reshape(K * self.d, q).T).reshape(-1, K, self.d),
                                rows[:, :, None], axis=2)  # (NB, K, 1)
        hQ = (h @ self.Q.transpose(1, 0, 2).reshape(q, K * self.d)).reshape(-1, K, self.d)
        w = old + mh * hQ
        diag = np.take_along_axis(w, rows[:, :, None], axis=2)[:, :, 0]
        csum = nodes.csum[parent] + diag**2 / np.maximum(np.sum(w**2, axis=2), _TINY)
        return _Children(nodes, parent, rows, h, csum, np.max(j + 1 - csum, axis=1) / self.d)

    def children(
        self, nodes: _Nodes, threshold: Callable[[], float] | None = None
    ) -> Iterator[_Children]:
        """Yield the children of ``nodes`` in batches.

        Parents are visited in the given order; when ``threshold`` is given, parents whose
        bound is ``>= threshold()`` are skipped (every child's bound is at least its
        parent's) and the smallest skipped bound is kept in ``self.skipped``.
        """
        combos = self.combos(self.d - nodes.depth)
        per_parent = max(1, self.max_children // len(combos))
        step = min(len(combos), self.max_children)
        for start in range(0, len(nodes), per_parent):
            parents = nodes.take(slice(start, start + per_parent))
            if threshold is not None:
                drop = parents.lb >= threshold()
                if drop.any():
                    self.skipped = min(self.skipped, float(parents.lb[drop].min()))
                    parents = parents.take(np.flatnonzero(~drop))
            if not len(parents):
                continue
            for c0 in range(0, len(combos), step):
                self.n_nodes += len(parents) * len(combos[c0 : c0 + step])
                yield self.expand(parents, combos[c0 : c0 + step])


class _Best:
    """Incumbent of a search."""

    def __init__(self) -> None:
        self.mic, self.rows = np.inf, None

    def update(self, leaves: _Children) -> None:
        i = int(np.argmin(leaves.lb))
        if leaves.lb[i] < self.mic:
            self.mic, self.rows = float(leaves.lb[i]), leaves.full_rows(i)


def _exhaustive(tree: _SearchTree, nodes: _Nodes, best: _Best) -> None:
    """Depth-first traversal of every row order."""
    last = nodes.depth == tree.d - 1
    for batch in tree.children(nodes):
        if last:
            tree.n_leaves += len(batch)
            best.update(batch)
        else:
            _exhaustive(tree, batch.nodes(), best)


def _smallest(lb: np.ndarray, width: int) -> tuple[np.ndarray, float]:
    """Indices of the ``width`` smallest bounds (stable) and the smallest bound left out."""
    if len(lb) <= width:
        return np.arange(len(lb)), np.inf
    order = np.argsort(lb, kind="stable")
    return order[:width], float(lb[order[width]])


def _beam_level(tree: _SearchTree, nodes: _Nodes, width: int, batches=None) -> tuple[_Nodes, float]:
    """Keep the ``width`` children of ``nodes`` with the smallest bounds."""
    kept: _Nodes | None = None
    discarded = np.inf

    def threshold() -> float:
        return float(kept.lb[-1]) if kept is not None and len(kept) >= width else np.inf

    tree.skipped = np.inf
    for batch in batches if batches is not None else tree.children(nodes, threshold):
        idx, left = _smallest(batch.lb, width)
        pool = batch.nodes(idx) if kept is None else _Nodes.concat([kept, batch.nodes(idx)])
        keep, dropped = _smallest(pool.lb, width)
        kept = pool.take(keep)
        discarded = min(discarded, left, dropped)
    return kept, min(discarded, tree.skipped)


def _beam(tree: _SearchTree, width: int, first: list | None = None) -> tuple[_Best, float]:
    """One beam search; return the best leaf and the smallest bound of a discarded prefix."""
    nodes, discarded = tree.root(), np.inf
    for j in range(tree.d - 1):
        nodes, dropped = _beam_level(tree, nodes, width, first if j == 0 else None)
        discarded = min(discarded, dropped)
    best = _Best()
    for batch in tree.children(nodes):
        tree.n_leaves += len(batch)
        best.update(batch)
    return best, discarded


def _beam_cost(d: int, K: int, width: int) -> int:
    """Upper bound on the nodes evaluated by one beam search of the given width."""
    total, parents = 0, 1
    for j in range(d):
        level = parents * (d - j) ** K
        total += level
        parents = min(level, width)
    return total


def _sequential(tree: _SearchTree, width: int, max_nodes: int) -> tuple[_Best, bool, int]:
    """Beam searches of doubling width until the result is certified or the budget is spent."""
    first = list(tree.children(tree.root())) if tree.d > 1 else None  # shared by all rounds
    while True:
        best, discarded = _beam(tree, width, first)
        certified = best.mic <= discarded
        next_cost = _beam_cost(tree.d, tree.K, 2 * width) - tree.d**tree.K
        if certified or tree.n_nodes + next_cost > max_nodes:
            return best, certified, width
        width *= 2


def _all_orders(unmixings: Any, residual: str = "domain") -> tuple[np.ndarray, np.ndarray]:
    """Every row order and its MIC, from the vectorised tree (small problems; for tests)."""
    M, _ = _as_unmixing_list(unmixings)
    tree = _SearchTree(M, residual)
    nodes = tree.root()
    for _ in range(tree.d):
        nodes = _Nodes.concat([batch.nodes() for batch in tree.children(nodes)])
    return nodes.rows, nodes.lb


def hca_search(
    unmixings: Sequence[np.ndarray] | Mapping[Hashable, np.ndarray],
    *,
    search: str = "exhaustive",
    residual: str = "domain",
    beam_width: int = 32,
    max_nodes: int = 1_000_000,
) -> HCASearchResult:
    """Search the row orders of the ICA unmixing matrices for the minimal MIC (Algorithm 2).

    Parameters
    ----------
    unmixings : sequence of ndarray or mapping
        ICA unmixing matrices ``M_k`` (``d0 x n_benchmarks``, full row rank), one per
        domain; a mapping gives the domain names.
    search : {"exhaustive", "sequential"}, default="exhaustive"
        ``"exhaustive"``: all ``(d0!)^K`` orders (Algorithm 2). ``"sequential"``: beam
        search over positions, widened until certified optimal (see the module docstring).
    residual : {"domain", "shared"}, default="domain"
        ``"domain"``: project out the domain's own earlier rows (Algorithm 1);
        ``"shared"``: project out the recovered rows of ``H_hat`` (authors' code).
    beam_width : int, default=32
        Initial beam width of ``"sequential"``; doubled while the result is not certified.
    max_nodes : int, default=1_000_000
        Budget of prefixes evaluated by ``"sequential"``; no wider beam is started when
        it would exceed the budget, and the best order found is returned uncertified
        (with a warning).

    Returns
    -------
    HCASearchResult
        The best row order, evaluated by :func:`evaluate_order`.

    Warns
    -----
    UserWarning
        When ``"sequential"`` stops without certifying its result.

    Notes
    -----
    The result is invariant to the order and signs of the rows of every ``M_k``. It is
    invariant to their scale only for an exact SCM (the MIC weighs domains and rows by
    their scale), so pass unit-variance ICA unmixing matrices.
    """
    _check_options(search, residual, beam_width, max_nodes)
    M, names = _as_unmixing_list(unmixings)
    K, d, _ = M.shape
    tree = _SearchTree(M, residual)
    if search == "exhaustive":
        n_orders = math.factorial(d) ** K
        if n_orders > MAX_EXHAUSTIVE_ORDERS:
            raise ValueError(
                f"exhaustive search over (d0!)^K = ({d}!)^{K} = {n_orders} row orders exceeds "
                f"{MAX_EXHAUSTIVE_ORDERS}; use search='sequential'"
            )
        best = _Best()
        _exhaustive(tree, tree.root(), best)
        certified, width = True, 0
    else:
        best, certified, width = _sequential(tree, int(beam_width), int(max_nodes))
        if not certified:
            warnings.warn(
                f"sequential search stopped at beam width {width} after {tree.n_nodes} prefixes "
                f"(max_nodes={max_nodes}) without certifying that MIC = {best.mic:.4g} is minimal; "
                "increase max_nodes or use search='exhaustive' if it is affordable",
                UserWarning,
                stacklevel=2,
            )
    perms = [best.rows[k] for k in range(K)]
    result = evaluate_order(dict(zip(names, M)), perms, residual=residual)
    return _with_search_info(result, names, search, tree, certified, width)


def _with_search_info(
    result: HCASearchResult,
    names: tuple,
    search: str,
    tree: _SearchTree,
    certified: bool,
    width: int,
) -> HCASearchResult:
    """Copy of ``result`` with the search bookkeeping filled in."""
    fields = {f: getattr(result, f) for f in result.__dataclass_fields__}
    fields.update(domains=names, search=search, n_evaluated=int(tree.n_leaves),
                  n_nodes=int(tree.n_nodes), beam_width=int(width), certified=bool(certified))
    return HCASearchResult(**fields)


# =========================================================================== per-domain SCM
@dataclass(frozen=True, eq=False)
class DomainSCM:
    """Linear SCM recovered for one domain: ``z = A z + diag(omega_sqrt) eps``.

    Attributes
    ----------
    domain : hashable
        Domain label.
    A : ndarray of shape (d0, d0)
        Strictly lower-triangular weights; ``A[i, j]`` is the weight of ``z_j -> z_i``.
    omega_sqrt : ndarray of shape (d0,)
        Source scales ``diag(Omega_k^{1/2})`` (positive).
    B : ndarray of shape (d0, d0)
        ``Omega_k^{-1/2} (I - A)``: the sources are ``eps = B z`` (unit variance in
        this domain, positive diagonal).
    alpha : float
        Inexactness ``alpha_k`` of the domain (Proposition 1).
    factor_names : tuple of str
        Names of the latent factors.
    """

    domain: Hashable
    A: np.ndarray
    omega_sqrt: np.ndarray
    B: np.ndarray
    alpha: float
    factor_names: tuple = field(default=())

    @classmethod
    def from_B(cls, domain: Hashable, B: np.ndarray, alpha: float, names=None) -> DomainSCM:
        """Build from a lower-triangular ``B`` with positive diagonal."""
        omega_sqrt = 1.0 / np.diag(B)
        A = np.tril(np.eye(len(B)) - omega_sqrt[:, None] * B, -1)
        names = tuple(names) if names is not None else tuple(_factor_names(len(B)))
        return cls(domain, A, omega_sqrt, np.array(B), float(alpha), names)

    def equations(self) -> list[str]:
        """Structural equations, e.g. ``"z2 = 2.76 z1 + 24.0 ε2"``."""
        lines = []
        for i, zi in enumerate(self.factor_names):
            terms = [(self.A[i, j], self.factor_names[j]) for j in range(i)]
            terms.append((self.omega_sqrt[i], f"ε{i + 1}"))
            text = ""
            for weight, name in terms:
                mag = _fmt(abs(weight))
                if not text:
                    text = f"-{mag} {name}" if weight < 0 else f"{mag} {name}"
                else:
                    text += f" {'-' if weight < 0 else '+'} {mag} {name}"
            lines.append(f"{zi} = {text}")
        return lines

    def summary(self) -> str:
        """The domain's structural equations and inexactness."""
        head = f"{self.domain} (alpha = {self.alpha:.3g})"
        return "\n".join([head] + ["  " + e for e in self.equations()])


# =========================================================================== OLS adjustment
@dataclass(frozen=True, eq=False)
class OLSAdjustment:
    """OLS ambiguity adjustment of Section 4 (``z_adj = L z``).

    Attributes
    ----------
    L : ndarray of shape (d0, d0)
        Unit lower-triangular with ``z_adj = L z``. The steps are
        ``z_adj_i = z_i - sum_{j<i} a_ij z_adj_j``, so ``L = (I + a)^{-1}``. (Regressing
        on the adjusted or on the original ``z_1..z_{i-1}`` gives the same ``z_adj_i``:
        both span the same space.)
    coefficients : ndarray of shape (d0, d0)
        The strictly lower-triangular ``a``: OLS coefficients of ``z_adj_j`` in the
        regression of ``z_i`` with the chosen benchmark.
    unmixing : ndarray of shape (d0, n_benchmarks)
        Adjusted unmixing matrix ``L H_hat``.
    mixing : ndarray of shape (n_benchmarks, d0)
        Its pseudo-inverse ``H_hat^T L^{-1}``.
    benchmarks : tuple
        Benchmark chosen (largest R^2) for each factor.
    r2 : DataFrame
        R^2 of ``z_i ~ z_1..z_{i-1} + x_B + const`` (factors x benchmarks, Table 2a).
    weights : dict
        Per domain adjusted ``B_k L^{-1}`` (lower-triangular, unit-variance sources).
    models : dict
        Per domain adjusted :class:`DomainSCM`.
    """

    L: np.ndarray
    coefficients: np.ndarray
    unmixing: np.ndarray
    mixing: np.ndarray
    benchmarks: tuple
    r2: pd.DataFrame
    weights: dict
    models: dict

    def summary(self) -> str:
        """Chosen benchmarks, R^2 table and adjusted structural equations."""
        names = list(self.r2.index)
        lines = ["OLS adjustment: " + ", ".join(
            f"{z} ~ {b} (R^2 = {self.r2.loc[z, b]:.2f})" for z, b in zip(names, self.benchmarks))]
        lines.append(self.r2.round(2).to_string())
        lines += [m.summary() for m in self.models.values()]
        return "\n".join(lines)


def _r2(y: np.ndarray, design: np.ndarray) -> tuple[float, np.ndarray]:
    """R^2 and coefficients of the OLS of ``y`` on ``design`` (which includes a constant)."""
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ coef
    sst = float(np.sum((y - y.mean()) ** 2))
    return (1.0 - float(resid @ resid) / sst if sst > 0 else 0.0), coef


def _ols_adjustment(Z: np.ndarray, X: np.ndarray, benchmark_names: Sequence[str]):
    """Sequential OLS adjustment; return ``(L, coefficients, chosen indices, R^2 table)``."""
    n, d = Z.shape
    p = X.shape[1]
    Zadj = Z.copy()
    L = np.eye(d)
    coefs = np.zeros((d, d))
    table = np.zeros((d, p))
    chosen = []
    ones = np.ones((n, 1))
    for i in range(d):
        fits = [_r2(Zadj[:, i], np.hstack([ones, Zadj[:, :i], X[:, [b]]])) for b in range(p)]
        table[i] = [f[0] for f in fits]
        b = int(np.argmax(table[i]))
        chosen.append(b)
        a = fits[b][1][1 : 1 + i]
        coefs[i, :i] = a
        L[i] = L[i] - a @ L[:i]
        Zadj[:, i] = Zadj[:, i] - Zadj[:, :i] @ a
    r2 = pd.DataFrame(table, index=_factor_names(d), columns=list(benchmark_names))
    return L, coefs, chosen, r2


# =========================================================================== estimator
class HCA(BaseEstimator):
    """Hierarchical Component Analysis (Appendix C of Jin et al., 2025).

    Parameters
    ----------
    n_components : int, default=3
        Number of latent factors ``d0``.
    search : {"exhaustive", "sequential"}, default="exhaustive"
        Search over row orders (see the module docstring).
    residual : {"domain", "shared"}, default="domain"
        Row-residual definition: the domain's own earlier rows (Algorithm 1) or the
        recovered rows of ``H_hat`` (authors' code).
    beam_width : int, default=32
        Initial beam width of ``search="sequential"`` (doubled until certified).
    max_nodes : int, default=1_000_000
        Budget of evaluated prefixes for ``search="sequential"``.
    random_state : int, RandomState or None, default=0
        Passed to every ``FastICA``.
    max_iter : int, default=1000
        FastICA iterations.
    tol : float, default=1e-4
        FastICA tolerance.
    n_restarts : int, default=1
        FastICA runs per domain; the converged run with the largest negentropy is kept
        (see :func:`domain_ica`). The default, one run seeded with ``random_state``, is the
        authors' setting; FastICA can stop in different local optima for different seeds.

    Attributes
    ----------
    domains_ : list
        Sorted domain labels.
    n_features_in_ : int
        Number of benchmarks.
    feature_names_in_ : ndarray of str
        Benchmark names (only when ``X`` was a DataFrame).
    ica_ : dict
        Domain -> :class:`DomainICA`.
    ica_converged_ : dict
        Domain -> whether FastICA converged.
    unmixing_ : ndarray of shape (n_components, n_benchmarks)
        ``H_hat`` (orthonormal rows), ``z = H_hat x``.
    mixing_ : ndarray of shape (n_benchmarks, n_components)
        ``G_hat = pinv(H_hat) = H_hat^T``.
    weights_ : dict
        Domain -> ``B_hat_k`` of the recovered SCM: the least-squares lower-triangular
        fit with each row rescaled so that the sources ``B_hat_k H_hat (x - mean_k)``
        have unit variance (ddof=0) in the domain; positive diagonal. (For an exact SCM
        the rescaling is 1; the unscaled fit is ``search_result_.weights``.)
    models_ : dict
        Domain -> :class:`DomainSCM` built from ``weights_``.
    mic_ : float
        Maximum inexactness coefficient.
    inexactness_ : dict
        Domain -> ``alpha_k``.
    permutations_ : dict
        Domain -> tuple, the ICA source placed at every causal position.
    rank1_error_ : ndarray of shape (n_components,)
        Table 3a.
    unmixing_error_ : dict
        Domain -> Table 3b error.
    search_result_ : HCASearchResult
        Full output of the search.
    """

    def __init__(
        self,
        n_components: int = 3,
        *,
        search: str = "exhaustive",
        residual: str = "domain",
        beam_width: int = 32,
        max_nodes: int = 1_000_000,
        random_state: Any = 0,
        max_iter: int = 1000,
        tol: float = 1e-4,
        n_restarts: int = 1,
    ):
        self.n_components = n_components
        self.search = search
        self.residual = residual
        self.beam_width = beam_width
        self.max_nodes = max_nodes
        self.random_state = random_state
        self.max_iter = max_iter
        self.tol = tol
        self.n_restarts = n_restarts

    # ----------------------------------------------------------------- fitting
    def fit(self, X: Any, domains: Any) -> HCA:
        """Fit HCA.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_models, n_benchmarks)
            Benchmark scores (DataFrame column names are kept).
        domains : array-like of shape (n_models,)
            Domain (e.g. base model) of every row; at least two domains, each with at
            least ``n_benchmarks`` models.

        Returns
        -------
        self
        """
        _check_options(self.search, self.residual, self.beam_width, self.max_nodes)
        n_restarts = _check_n_restarts(self.n_restarts)
        values, names, has_names, labels, order, d = _validate_data(X, domains, self.n_components)
        if len(order) < d:
            warnings.warn(
                f"{len(order)} domains for {d} components: Theorem 1 needs at least as many "
                "domains as components for identifiability",
                UserWarning,
                stacklevel=2,
            )
        self.n_features_in_ = values.shape[1]
        if has_names:
            self.feature_names_in_ = np.array(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):  # refit on an array
            del self.feature_names_in_
        self._benchmarks = names
        self.domains_ = order
        self.ica_ = _fit_icas(values, labels, order, d, self.random_state, self.max_iter,
                              self.tol, n_restarts)
        self.ica_converged_ = {label: ica.converged for label, ica in self.ica_.items()}
        self._X_train = np.array(values, dtype=float, copy=True)
        self._labels_train = labels
        return self._fit_search()

    def _fit_search(self) -> HCA:
        """Run the search on the fitted ICA matrices and build the per-domain models."""
        order = self.domains_
        res = hca_search(
            {label: self.ica_[label].unmixing for label in order},
            search=self.search, residual=self.residual, beam_width=self.beam_width,
            max_nodes=self.max_nodes,
        )
        self.search_result_ = res
        self.unmixing_ = res.unmixing
        self.mixing_ = np.linalg.pinv(res.unmixing)
        self.mic_ = res.mic
        self.inexactness_ = dict(zip(order, res.alphas.tolist()))
        self.permutations_ = {
            label: tuple(int(r) for r in perm) for label, perm in zip(order, res.permutations)
        }
        self.rank1_error_ = res.rank1_error
        self.unmixing_error_ = dict(zip(order, res.unmixing_error.tolist()))
        self.weights_ = {}
        self.models_ = {}
        for k, label in enumerate(order):
            B = self._unit_variance(res.weights[k], label)
            self.weights_[label] = B
            self.models_[label] = DomainSCM.from_B(label, B, res.alphas[k])
        return self

    def _unit_variance(self, B: np.ndarray, label: Hashable) -> np.ndarray:
        """Rescale the rows of ``B`` so that ``B H_hat (x - mean)`` has unit variance."""
        Xk = self._X_train[self._labels_train == label] - self.ica_[label].mean
        std = np.std(Xk @ (B @ self.unmixing_).T, axis=0)
        return B / np.maximum(std, _TINY)[:, None]

    def _check_fitted(self) -> None:
        if not hasattr(self, "unmixing_"):
            raise ValueError("this HCA instance is not fitted yet; call fit(X, domains) first")

    # ----------------------------------------------------------------- transform
    def _as_input(self, X: Any) -> np.ndarray:
        """Validate new data against the fitted benchmarks."""
        if isinstance(X, pd.DataFrame) and hasattr(self, "feature_names_in_"):
            missing = [c for c in self.feature_names_in_ if c not in X.columns]
            if missing:
                raise ValueError(f"X is missing the fitted benchmark column(s) {missing}")
            X = X[list(self.feature_names_in_)]
        values, names, _, index = _as_numeric_frame(X)
        if values.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {values.shape[1]} columns but HCA was fitted on "
                f"{self.n_features_in_} benchmarks"
            )
        _check_finite(values, names, index)
        return values

    def transform(self, X: Any) -> np.ndarray:
        """Latent factors ``Z = X H_hat^T`` (``z = H_hat x`` as in the paper; *not* centred).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_models, n_benchmarks)

        Returns
        -------
        ndarray of shape (n_models, n_components)
        """
        self._check_fitted()
        return self._as_input(X) @ self.unmixing_.T

    def fit_transform(self, X: Any, domains: Any) -> np.ndarray:
        """Fit, then return the latent factors of ``X``."""
        return self.fit(X, domains).transform(X)

    # ----------------------------------------------------------------- adjustment
    def adjust(self, X: Any = None) -> OLSAdjustment:
        """OLS ambiguity adjustment of Section 4.

        For ``i = 1..d0`` and every benchmark ``B`` the OLS
        ``z_i ~ z_1..z_{i-1} + x_B + const`` is fitted on the pooled data; the benchmark
        with the largest R^2 is chosen and ``z_i`` is replaced by
        ``z_i - sum_{j<i} a_ij z_j``. The composed map is a unit lower-triangular ``L``:
        the adjusted unmixing matrix is ``L H_hat`` and ``B_k`` becomes ``B_k L^{-1}``
        (still lower-triangular, same ``Omega_k``, same sources).

        Parameters
        ----------
        X : array-like or DataFrame, optional
            Scores to fit the OLS on; default the pooled training data.

        Returns
        -------
        OLSAdjustment
        """
        self._check_fitted()
        values = self._X_train if X is None else self._as_input(X)
        L, coefs, chosen, r2 = _ols_adjustment(values @ self.unmixing_.T, values, self._benchmarks)
        L_inv = np.linalg.inv(L)
        weights = {label: np.tril(B @ L_inv) for label, B in self.weights_.items()}
        models = {
            label: DomainSCM.from_B(label, B, self.inexactness_[label])
            for label, B in weights.items()
        }
        return OLSAdjustment(
            L=L,
            coefficients=coefs,
            unmixing=L @ self.unmixing_,
            mixing=self.mixing_ @ L_inv,
            benchmarks=tuple(self._benchmarks[b] for b in chosen),
            r2=r2,
            weights=weights,
            models=models,
        )

    def reconstruction_error(self, X: Any = None, *, centre: bool = False) -> pd.DataFrame:
        """Low-rank approximation error per benchmark (Figure 19 of Appendix H.2).

        The scores are projected on the ``n_components``-dimensional row space of
        ``H_hat``: ``x_hat = H_hat^T H_hat x`` (``z = H_hat x`` as in the paper, not centred).

        Parameters
        ----------
        X : array-like or DataFrame, optional
            Scores; default the pooled training data.
        centre : bool, default=False
            Subtract each training domain's mean first (only with ``X=None``), which
            measures the error of the within-domain variation alone.

        Returns
        -------
        DataFrame
            One row per benchmark: ``relative_error`` (``sum (x - x_hat)^2 / sum x^2``),
            ``mse`` and ``rmse`` (score units).
        """
        self._check_fitted()
        if centre and X is not None:
            raise ValueError("centre=True uses the training domains' means; pass X=None")
        values = self._X_train.copy() if X is None else self._as_input(X)
        if centre:
            for label, ica in self.ica_.items():
                values[self._labels_train == label] -= ica.mean
        residual = values - values @ self.unmixing_.T @ self.unmixing_
        sq = np.sum(residual**2, axis=0)
        return pd.DataFrame(
            {"relative_error": sq / np.maximum(np.sum(values**2, axis=0), _TINY),
             "mse": sq / len(values), "rmse": np.sqrt(sq / len(values))},
            index=pd.Index(self._benchmarks, name="benchmark"),
        )

    # ----------------------------------------------------------------- reporting
    def summary(self) -> str:
        """MIC, Table 3 diagnostics and the per-domain structural equations."""
        self._check_fitted()
        lines = [self.search_result_.summary()]
        lines += [m.summary() for m in self.models_.values()]
        return "\n".join(lines)


# =========================================================================== subsets
def mic_by_subset(
    X: Any,
    domains: Any,
    candidates: Sequence[Hashable] | None = None,
    min_size: int = 3,
    *,
    n_components: int = 3,
    search: str = "exhaustive",
    residual: str = "domain",
    beam_width: int = 32,
    max_nodes: int = 1_000_000,
    random_state: Any = 0,
    max_iter: int = 1000,
    tol: float = 1e-4,
    n_restarts: int = 1,
) -> pd.DataFrame:
    """MIC of HCA on every subset of the candidate domains (Figure 18).

    ICA is fitted once per candidate domain and reused by every subset.

    Parameters
    ----------
    X, domains
        As in :meth:`HCA.fit`.
    candidates : sequence, optional
        Domains to combine (default: all, sorted).
    min_size : int, default=3
        Smallest subset size (at least 2).
    n_components, search, residual, beam_width, max_nodes, random_state, max_iter, tol, n_restarts
        As in :class:`HCA`.

    Returns
    -------
    DataFrame
        One row per subset (by size, then in the order of ``candidates``), with columns
        ``subset`` (tuple of labels), ``size``, ``mic``, ``certified`` and one column
        ``alpha_<label>`` per candidate (NaN when the domain is not in the subset).
    """
    _check_options(search, residual, beam_width, max_nodes)
    n_restarts = _check_n_restarts(n_restarts)
    values, _, _, labels, order, d = _validate_data(X, domains, n_components)
    cands = list(order) if candidates is None else list(candidates)
    missing = [c for c in cands if c not in order]
    if missing:
        raise ValueError(f"candidate domain(s) {missing} not found in domains; available: {order}")
    if len(set(cands)) != len(cands):
        raise ValueError(f"candidates contains duplicates: {cands}")
    if not 2 <= min_size <= len(cands):
        raise ValueError(
            f"min_size must be between 2 and the number of candidates ({len(cands)}), "
            f"got {min_size}"
        )
    icas = _fit_icas(values, labels, cands, d, random_state, max_iter, tol, n_restarts)
    records = []
    for size in range(min_size, len(cands) + 1):
        for subset in itertools.combinations(cands, size):
            res = hca_search({c: icas[c].unmixing for c in subset}, search=search,
                             residual=residual, beam_width=beam_width, max_nodes=max_nodes)
            row = {"subset": subset, "size": size, "mic": res.mic, "certified": res.certified}
            alphas = dict(zip(subset, res.alphas))
            row.update({f"alpha_{c}": alphas.get(c, np.nan) for c in cands})
            records.append(row)
    return pd.DataFrame.from_records(records)
