"""Simulated exact and alpha-inexact linear SCMs (Definitions 1-2 of the paper).

The data-generating process follows Equation (1) and Appendix C.1 of Jin, Syrgkanis,
Kakade & Zhang (2025), with nodes in topological order (``z_1`` is the root):

    eps^(k)    independent, zero mean, unit variance, non-Gaussian, with a different
               distribution per node (and, in general, per domain)
    epshat^(k) = U_k eps^(k)                      (U_k = I for an exact SCM)
    z          = A_k z + Omega_k^{1/2} epshat^(k)  (A_k strictly lower-triangular)
    x          = G z                              (G shared by all domains)

so that ``epshat = B_k H x`` with ``B_k = Omega_k^{-1/2} (I - A_k)`` and
``H = (G^T G)^{-1} G^T``. ``A_k[i, j]`` is the weight of the edge ``z_j -> z_i``.

Inexactness (Definition 2): ``U_k`` has unit-norm rows and inexactness coefficient
``(1/d0) sum_{i != j} U_k[i, j]^2``. :func:`make_inexact_mixing` builds ``U_k`` with
diagonal ``sqrt(1 - alpha)`` and a random off-diagonal part of squared norm ``alpha`` in
every row, so the coefficient is exactly ``alpha``.

The population ICA unmixing matrix of domain ``k`` (the matrix that maps ``x`` to the
independent unit-variance sources ``eps^(k)``, in causal order) is
``M_k = U_k^{-1} B_k H`` (:attr:`SyntheticSCM.unmixing`); an exact ICA recovers it up to
the order and the signs of its rows.

All randomness comes from ``numpy.random.default_rng(random_state)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = [
    "SOURCE_DISTRIBUTIONS",
    "SyntheticSCM",
    "sample_sources",
    "make_inexact_mixing",
    "simulate_scm",
]


#: Names of the unit-variance, zero-mean, non-Gaussian source distributions.
SOURCE_DISTRIBUTIONS: tuple[str, ...] = (
    "uniform",
    "laplace",
    "exponential",
    "student_t",
    "bimodal",
    "gamma",
)
_T_DF = 6.0  # degrees of freedom of the Student-t sources (finite kurtosis)


# --------------------------------------------------------------------------- result
@dataclass(frozen=True, eq=False)
class SyntheticSCM:
    """A simulated multi-domain linear SCM and its data.

    Attributes
    ----------
    X : ndarray of shape (n_models, n_benchmarks)
        Observed benchmark scores ``x = G z + offset (+ noise)``, domains stacked in order.
    domains : ndarray of shape (n_models,)
        Domain label of every row.
    Z : ndarray of shape (n_models, n_components)
        Latent factors.
    sources : ndarray of shape (n_models, n_components)
        The independent unit-variance sources ``eps`` (before the mixing ``U_k``).
    G : ndarray of shape (n_benchmarks, n_components)
        Shared mixing matrix.
    H : ndarray of shape (n_components, n_benchmarks)
        ``(G^T G)^{-1} G^T``, the left inverse of ``G``.
    A, omega_sqrt, U : dict
        Per domain: SCM weights (strictly lower-triangular), source scales
        ``diag(Omega_k^{1/2})`` and the inexactness mixing ``U_k``.
    alpha : dict
        Per domain inexactness coefficient of ``U_k`` (0 for an exact SCM).
    distributions : dict
        Per domain, the source distribution of every node.
    offset : ndarray of shape (n_benchmarks,)
        Constant added to every row of ``X``.
    noise : float
        Standard deviation of the Gaussian observation noise added to ``X``.
    feature_names : tuple of str
        Benchmark names (``"b1"``, ``"b2"``, ...).
    """

    X: np.ndarray
    domains: np.ndarray
    Z: np.ndarray
    sources: np.ndarray
    G: np.ndarray
    H: np.ndarray
    A: dict
    omega_sqrt: dict
    U: dict
    alpha: dict
    distributions: dict
    offset: np.ndarray
    noise: float
    feature_names: tuple = field(default=())

    @property
    def domain_labels(self) -> list:
        """Domain labels in order of appearance."""
        return list(self.A)

    @property
    def B(self) -> dict:
        """Per domain ``B_k = Omega_k^{-1/2} (I - A_k)`` (lower-triangular)."""
        d = self.G.shape[1]
        return {k: (np.eye(d) - a) / self.omega_sqrt[k][:, None] for k, a in self.A.items()}

    @property
    def unmixing(self) -> dict:
        """Per domain population ICA unmixing matrix ``M_k = U_k^{-1} B_k H`` (causal order)."""
        return {k: np.linalg.solve(self.U[k], b @ self.H) for k, b in self.B.items()}

    @property
    def mic(self) -> float:
        """Maximum inexactness coefficient ``max_k alpha_k`` of the simulated SCMs."""
        return float(max(self.alpha.values()))

    def frame(self) -> pd.DataFrame:
        """The data as a DataFrame: one column per benchmark plus ``domain``."""
        df = pd.DataFrame(self.X, columns=list(self.feature_names))
        df["domain"] = self.domains
        return df

    def summary(self) -> str:
        """Short description of the simulation."""
        n, p = self.X.shape
        d = self.G.shape[1]
        lines = [
            f"Synthetic linear SCM: {n} models, {p} benchmarks, {d} latent factors, "
            f"{len(self.A)} domains, MIC = {self.mic:.3g}, noise = {self.noise:.3g}"
        ]
        for k in self.A:
            size = int(np.sum(self.domains == k))
            dist = ", ".join(self.distributions[k])
            lines.append(f"  {k}: {size} models, alpha = {self.alpha[k]:.3g}, sources: {dist}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- building blocks
def sample_sources(name: str, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``size`` zero-mean, unit-variance samples from a named distribution.

    Parameters
    ----------
    name : str
        One of :data:`SOURCE_DISTRIBUTIONS`.
    size : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (size,)
    """
    if name == "uniform":
        return rng.uniform(-np.sqrt(3.0), np.sqrt(3.0), size)
    if name == "laplace":
        return rng.laplace(0.0, 1.0 / np.sqrt(2.0), size)
    if name == "exponential":
        return rng.exponential(1.0, size) - 1.0
    if name == "student_t":
        return rng.standard_t(_T_DF, size) * np.sqrt((_T_DF - 2.0) / _T_DF)
    if name == "bimodal":
        centre = 0.9 * rng.choice([-1.0, 1.0], size)
        return centre + rng.normal(0.0, np.sqrt(1.0 - 0.81), size)
    if name == "gamma":
        return (rng.gamma(2.0, 1.0, size) - 2.0) / np.sqrt(2.0)
    raise ValueError(
        f"unknown source distribution {name!r}; expected one of {SOURCE_DISTRIBUTIONS}"
    )


def make_inexact_mixing(n_components: int, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """Mixing ``U`` with unit-norm rows and inexactness coefficient exactly ``alpha``.

    Row ``i`` is ``sqrt(1 - alpha) e_i + sqrt(alpha) v_i`` with ``v_i`` a random unit
    vector supported off the diagonal, so ``(1/d0) sum_{i != j} U_ij^2 = alpha``.

    Parameters
    ----------
    n_components : int
        Size ``d0`` of ``U``.
    alpha : float
        Inexactness in ``[0, 1)``; must be 0 when ``n_components == 1``.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_components, n_components)
    """
    if not 0.0 <= alpha < 1.0:
        raise ValueError(f"alpha must be in [0, 1), got {alpha}")
    if n_components == 1 and alpha > 0:
        raise ValueError("alpha must be 0 when n_components == 1 (no off-diagonal entries)")
    U = np.sqrt(1.0 - alpha) * np.eye(n_components)
    if alpha == 0.0:
        return U
    for i in range(n_components):
        off = rng.normal(size=n_components)
        off[i] = 0.0
        U[i] += np.sqrt(alpha) * off / np.linalg.norm(off)
    return U


def _inexactness(U: np.ndarray) -> float:
    return float(np.sum(U**2) - np.sum(np.diag(U) ** 2)) / len(U)


def _strictly_lower_weights(
    d: int, low: float, high: float, rng: np.random.Generator
) -> np.ndarray:
    A = rng.uniform(low, high, (d, d)) * rng.choice([-1.0, 1.0], (d, d))
    return np.tril(A, -1)


def _per_domain(value, n_domains: int, name: str) -> list:
    if np.ndim(value) == 0:
        return [value] * n_domains
    values = list(value)
    if len(values) != n_domains:
        raise ValueError(f"{name} has {len(values)} entries but there are {n_domains} domains")
    return values


def _check_range(pair: Sequence[float], name: str) -> tuple[float, float]:
    low, high = (float(v) for v in pair)
    if not 0.0 < low <= high:
        raise ValueError(f"{name} must be (low, high) with 0 < low <= high, got {tuple(pair)}")
    return low, high


def _check_sizes(n_domains: int, n_components: int, n_benchmarks: int) -> None:
    if n_domains < 1:
        raise ValueError(f"n_domains must be >= 1, got {n_domains}")
    if n_components < 1:
        raise ValueError(f"n_components must be >= 1, got {n_components}")
    if n_components > n_benchmarks:
        raise ValueError(
            f"n_components ({n_components}) must not exceed n_benchmarks ({n_benchmarks})"
        )


def _domain_distributions(
    d: int, distributions: Sequence[str] | None, rng: np.random.Generator
) -> tuple[str, ...]:
    """Distinct source distributions for the ``d`` nodes of one domain."""
    pool = tuple(distributions) if distributions is not None else SOURCE_DISTRIBUTIONS
    unknown = [name for name in pool if name not in SOURCE_DISTRIBUTIONS]
    if unknown:
        raise ValueError(
            f"unknown source distribution(s) {unknown}; expected names from {SOURCE_DISTRIBUTIONS}"
        )
    order = rng.permutation(len(pool))
    return tuple(pool[order[i % len(pool)]] for i in range(d))


# --------------------------------------------------------------------------- simulation
def simulate_scm(
    n_domains: int = 4,
    n_per_domain: int | Sequence[int] = 2000,
    n_components: int = 3,
    n_benchmarks: int = 6,
    *,
    alpha: float | Sequence[float] = 0.0,
    weight_range: tuple[float, float] = (0.25, 1.0),
    scale_range: tuple[float, float] = (0.7, 1.5),
    distributions: Sequence[str] | None = None,
    offset: float | Sequence[float] = 0.0,
    noise: float = 0.0,
    random_state: int | None = None,
) -> SyntheticSCM:
    """Simulate exact or alpha-inexact linear SCMs sharing one mixing matrix ``G``.

    Parameters
    ----------
    n_domains : int, default=4
        Number of domains ``K`` (labelled ``"D1"``, ``"D2"``, ...).
    n_per_domain : int or sequence of int, default=2000
        Models per domain.
    n_components : int, default=3
        Number of latent factors ``d0``.
    n_benchmarks : int, default=6
        Number of observed benchmarks.
    alpha : float or sequence of float, default=0.0
        Inexactness coefficient of every domain (0: exact SCM), in ``[0, 1)``.
    weight_range : (float, float), default=(0.25, 1.0)
        Range of the magnitudes of the edge weights ``A_k[i, j]`` (random signs). Large
        weights relative to the source scales make the MIC sensitive to ICA estimation error.
    scale_range : (float, float), default=(0.7, 1.5)
        Range of the source scales ``diag(Omega_k^{1/2})``.
    distributions : sequence of str, optional
        Pool of source distributions (default: :data:`SOURCE_DISTRIBUTIONS`); every
        domain draws a random assignment of distinct distributions to its nodes.
    offset : float or sequence of float, default=0.0
        Constant added to every benchmark (one value or one per benchmark).
    noise : float, default=0.0
        Standard deviation of i.i.d. Gaussian observation noise added to ``X``.
    random_state : int, optional
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    SyntheticSCM
    """
    _check_sizes(n_domains, n_components, n_benchmarks)
    w_low, w_high = _check_range(weight_range, "weight_range")
    s_low, s_high = _check_range(scale_range, "scale_range")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    sizes = [int(n) for n in _per_domain(n_per_domain, n_domains, "n_per_domain")]
    if min(sizes) < 1:
        raise ValueError(f"n_per_domain must be >= 1, got {min(sizes)}")
    alphas = [float(a) for a in _per_domain(alpha, n_domains, "alpha")]
    offsets = np.broadcast_to(np.asarray(offset, dtype=float), (n_benchmarks,)).copy()

    rng = np.random.default_rng(random_state)
    d = n_components
    G = rng.normal(size=(n_benchmarks, d))
    H = np.linalg.solve(G.T @ G, G.T)
    labels = [f"D{k + 1}" for k in range(n_domains)]
    A, omega_sqrt, U, dists = {}, {}, {}, {}
    Z_parts, eps_parts = [], []
    for label, size, a in zip(labels, sizes, alphas):
        A[label] = _strictly_lower_weights(d, w_low, w_high, rng)
        omega_sqrt[label] = rng.uniform(s_low, s_high, d)
        U[label] = make_inexact_mixing(d, a, rng)
        dists[label] = _domain_distributions(d, distributions, rng)
        eps = np.column_stack([sample_sources(name, size, rng) for name in dists[label]])
        shocks = (eps @ U[label].T) * omega_sqrt[label]
        Z_parts.append(np.linalg.solve(np.eye(d) - A[label], shocks.T).T)
        eps_parts.append(eps)
    Z = np.vstack(Z_parts)
    X = Z @ G.T + offsets
    if noise > 0:
        X = X + rng.normal(0.0, noise, X.shape)
    return SyntheticSCM(
        X=X,
        domains=np.repeat(np.array(labels, dtype=object), sizes),
        Z=Z,
        sources=np.vstack(eps_parts),
        G=G,
        H=H,
        A=A,
        omega_sqrt=omega_sqrt,
        U=U,
        alpha={label: _inexactness(U[label]) for label in labels},
        distributions=dists,
        offset=offsets,
        noise=float(noise),
        feature_names=tuple(f"b{i + 1}" for i in range(n_benchmarks)),
    )
