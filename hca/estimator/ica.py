"""Step 1 of HCA: ICA per domain (FastICA, optionally with restarts).
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.decomposition import FastICA
from sklearn.exceptions import ConvergenceWarning

from hca.validation import check_n_restarts, validate_hca_data

__all__ = [
    "ICA_METHODS",
    "GAUSSIAN_LOGCOSH",
    "DomainICA",
    "domain_ica",
    "ica_negentropy",
    "restart_seeds",
    "picard_ica",
    "domain_unmixings",
]

#: ICA algorithms: scikit-learn's FastICA, Picard-O (orthogonal) and Picard.
ICA_METHODS: tuple[str, ...] = ("fastica", "picard-o", "picard")


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


def restart_seeds(random_state: Any, n_restarts: int) -> list:
    """The ``random_state`` of every FastICA restart.

    An int seed ``s`` gives ``s, s + 1, ..., s + n_restarts - 1`` (so restart 0 is the
    single fit of ``n_restarts=1``); ``None`` gives ``None`` each time (not reproducible);
    a ``numpy.random.RandomState`` gives ``n_restarts`` integers drawn from it.
    """
    n_restarts = check_n_restarts(n_restarts)
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
            stacklevel=4,  # _fit_one_ica -> fit_icas -> public function -> caller
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


def fit_icas(values, labels, order, d, random_state, max_iter, tol,
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
    n_restarts = check_n_restarts(n_restarts)
    values, _, _, labels, order, d = validate_hca_data(X, domains, n_components)
    return fit_icas(values, labels, order, d, random_state, max_iter, tol, n_restarts)


# =========================================================================== ICA
def check_ica(ica: str) -> str:
    if ica not in ICA_METHODS:
        raise ValueError(f"unknown ica {ica!r}; expected one of {ICA_METHODS}")
    return ica


def _picard_module():
    try:
        import picard
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("picard_ica needs the python-picard package "
                          "(pip install python-picard)") from err
    return picard


def _one_picard(Xk: np.ndarray, label: Hashable, d: int, ortho: bool, extended: bool,
                random_state: Any, max_iter: int, tol: float) -> DomainICA:
    """Picard on one domain; unit-variance sources; record convergence."""
    picard = _picard_module()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        K, W, _, mean, n_iter = picard.picard(
            Xk.T, n_components=d, ortho=ortho, extended=extended, random_state=random_state,
            max_iter=max_iter, tol=tol, return_X_mean=True, return_n_iter=True)
    converged = True
    for w in caught:
        if "did not converge" in str(w.message):
            converged = False
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    unmixing = W @ K
    sources = (Xk - mean) @ unmixing.T
    sd = sources.std(axis=0)
    if np.any(sd <= 0) or not np.all(np.isfinite(sd)):
        raise ValueError(f"Picard returned a degenerate source for domain {label!r}")
    unmixing = unmixing / sd[:, None]
    return DomainICA(
        domain=label, unmixing=np.asarray(unmixing, dtype=float),
        mean=np.asarray(mean, dtype=float), converged=converged, n_iter=int(n_iter),
        n_samples=int(Xk.shape[0]),
        objective=float(np.sum(ica_negentropy(sources / sd))))


def picard_ica(
    X: Any,
    domains: Any,
    n_components: int = 3,
    *,
    ortho: bool = True,
    extended: bool = True,
    random_state: Any = 0,
    max_iter: int = 1000,
    tol: float = 1e-7,
) -> dict[Hashable, DomainICA]:
    """Per-domain ICA with Picard (Ablin, Cardoso & Gramfort, 2018) instead of FastICA.

    Same output as :func:`hca.estimator.domain_ica`: ``unmixing`` maps ``x - mean`` to
    ``n_components`` sources with unit variance (ddof=0) in the domain.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_models, n_benchmarks)
    domains : array-like of shape (n_models,)
    n_components : int, default=3
    ortho : bool, default=True
        ``True``: Picard-O (white sources, FastICA's constraint); ``False``: Picard.
    extended : bool, default=True
        Extended density model, which separates sub- as well as super-Gaussian sources
        (Picard's own default is ``True`` only with ``ortho=True``; without it, Picard cannot
        separate sub-Gaussian sources such as uniform ones).
    random_state : int or None, default=0
        Seed of Picard's random initial rotation.
    max_iter, tol
        Passed to ``picard.picard``.

    Returns
    -------
    dict
        Domain label (sorted) -> :class:`~hca.estimator.DomainICA` (``objective`` is the
        negentropy of the sources, ``converged`` Picard's flag).

    Warns
    -----
    ConvergenceWarning
        Naming every domain where Picard did not converge.
    """
    values, _, _, labels, order, d = validate_hca_data(X, domains, n_components)
    out = {}
    for label in order:
        fit = _one_picard(values[labels == label], label, d, bool(ortho), bool(extended),
                          random_state, max_iter, tol)
        if not fit.converged:
            warnings.warn(f"Picard did not converge for domain {label!r} "
                          f"({fit.n_samples} models, max_iter={max_iter})",
                          ConvergenceWarning, stacklevel=2)
        out[label] = fit
    return out


def domain_unmixings(X: Any, domains: Any, n_components: int = 3, *, ica: str = "fastica",
                     random_state: Any = 0) -> dict[Hashable, DomainICA]:
    """Per-domain ICA with the chosen algorithm (:data:`ICA_METHODS`)."""
    if check_ica(ica) == "fastica":
        return domain_ica(X, domains, n_components, random_state=random_state)
    return picard_ica(X, domains, n_components, ortho=(ica == "picard-o"),
                      random_state=random_state)
