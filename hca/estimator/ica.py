"""Step 1 of HCA: ICA per domain (FastICA, Picard-O or Picard; optionally with restarts)."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from types import FrameType
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.decomposition import FastICA
from sklearn.exceptions import ConvergenceWarning

from hca.estimator.fastica_batch import fastica_lockstep, initial_matrices, whiten
from hca.estimator.progress import Listener, report
from hca.validation import check_fit_data, check_positive_int, is_int

__all__ = [
    "ICA_METHODS",
    "DEFAULT_TOL",
    "GAUSSIAN_LOGCOSH",
    "DomainICA",
    "domain_ica",
    "fit_icas",
    "ica_negentropy",
    "restart_seeds",
    "check_ica",
    "fastica_runs",
    "fit_icas_many",
    "ICARun",
]

#: ICA algorithms: scikit-learn's FastICA, Picard-O (orthogonal) and Picard.
ICA_METHODS: tuple[str, ...] = ("fastica", "picard-o", "picard")
#: Display name of every algorithm (used in messages).
ICA_NAMES: dict[str, str] = {"fastica": "FastICA", "picard-o": "Picard-O", "picard": "Picard"}
#: Default tolerance of every algorithm (``tol=None``).
DEFAULT_TOL: dict[str, float] = {"fastica": 1e-4, "picard-o": 1e-7, "picard": 1e-7}


# =========================================================================== ICA
#: ``E[log cosh(nu)]`` for a standard normal ``nu`` (Gauss-Hermite quadrature, 80 nodes).
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(80)
GAUSSIAN_LOGCOSH: float = float(np.sum(_WEIGHTS * np.log(np.cosh(_NODES))) / np.sqrt(2 * np.pi))


def ica_negentropy(sources: Any) -> np.ndarray:
    """FastICA's negentropy approximation of every source (Hyvarinen, 1999).

    ``J(y) = (E[G(y)] - E[G(nu)])^2`` with ``G(u) = log cosh(u)``, ``y`` standardised and
    ``nu`` standard normal; the sum over the sources chooses between restarts.

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
    """ICA fit of one domain.

    Attributes
    ----------
    domain : hashable
        Domain label.
    unmixing : ndarray of shape (n_components, n_benchmarks)
        ``M_k``: sources ``= (x - mean) @ unmixing.T`` have unit variance.
    mean : ndarray of shape (n_benchmarks,)
        Domain mean of the scores.
    converged : bool
        Whether the ICA algorithm converged within ``max_iter``.
    n_iter : int
        Iterations.
    n_samples : int
        Models in the domain.
    objective : float
        Sum over the sources of :func:`ica_negentropy` (larger is better).
    restart : int
        Index of the restart kept (0 when ``n_restarts=1``).
    restart_objectives : tuple of float
        Objective of every restart (NaN for unconverged ones when at least one converged).
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
            extra = (
                f"; restart {self.restart} of {len(self.restart_objectives)} kept "
                f"(largest negentropy {self.objective:.4g})"
            )
        return (
            f"ICA {self.domain!r}: {self.n_samples} models, {self.unmixing.shape[0]} sources, "
            f"{state} after {self.n_iter} iterations{extra}"
        )


@dataclass(frozen=True, eq=False)
class ICARun:
    """One ICA run on one domain (before the choice between restarts); fields as in
    :class:`DomainICA`."""

    unmixing: np.ndarray
    mean: np.ndarray
    converged: bool
    n_iter: int
    objective: float

    def summary(self) -> str:
        """One line describing the run."""
        state = "converged" if self.converged else "NOT converged"
        return f"ICA run: {state} after {self.n_iter} iterations, negentropy {self.objective:.4g}"


def restart_seeds(random_state: Any, n_restarts: int) -> list:
    """The ``random_state`` of every ICA restart: ``s, s + 1, ...`` for an int ``s``, ``None``
    each time for ``None``, integers drawn from a ``numpy.random.RandomState``."""
    n_restarts = check_positive_int(n_restarts, "n_restarts")
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


def check_ica(ica: str) -> str:
    """``ica`` must be one of :data:`ICA_METHODS`."""
    if ica not in ICA_METHODS:
        raise ValueError(f"unknown ica {ica!r}; expected one of {ICA_METHODS}")
    return ica


def _ica_settings(ica: str, tol: float | None, n_restarts: int) -> tuple[str, float, int]:
    """The checked algorithm, its tolerance (default :data:`DEFAULT_TOL`) and restarts."""
    ica = check_ica(ica)
    return (
        ica,
        DEFAULT_TOL[ica] if tol is None else float(tol),
        check_positive_int(n_restarts, "n_restarts"),
    )


def _relay_warnings(caught, is_convergence) -> bool:
    """Re-emit caught warnings except the convergence one; return whether it converged."""
    converged = True
    for w in caught:
        if is_convergence(w):
            converged = False
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return converged


def _fastica_run(Xk: np.ndarray, d: int, seed: Any, max_iter: int, tol: float) -> ICARun:
    """One scikit-learn FastICA run with its negentropy (for seeds that are not ints)."""
    ica = FastICA(
        n_components=d,
        whiten="unit-variance",
        random_state=seed,
        max_iter=max_iter,
        tol=tol,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ica.fit(Xk)
    converged = _relay_warnings(caught, lambda w: issubclass(w.category, ConvergenceWarning))
    objective = float(np.sum(ica_negentropy((Xk - ica.mean_) @ ica.components_.T)))
    return ICARun(
        np.array(ica.components_, dtype=float),
        np.array(ica.mean_, dtype=float),
        converged,
        int(ica.n_iter_),
        objective,
    )


def fastica_runs(
    Xk: np.ndarray, d: int, seeds: Sequence[Any], max_iter: int = 1000, tol: float = 1e-4
) -> list[ICARun]:
    """FastICA on one domain's data from every seed of ``seeds``, one run per seed (each
    owning its arrays): the integer seeds in one vectorised batch (equal to scikit-learn's
    ``FastICA`` with the same seed), other seeds with scikit-learn's ``FastICA``."""
    return fastica_runs_many([Xk], d, seeds, max_iter, tol)[0]


def fastica_runs_many(
    Xks: Sequence[np.ndarray],
    d: int,
    seeds: Sequence[Any],
    max_iter: int = 1000,
    tol: float = 1e-4,
    *,
    paired: bool = False,
    on_done: Callable[[int], None] | None = None,
) -> list[list[ICARun]]:
    """:func:`fastica_runs` of several data matrices, the integer seeds of all of them
    iterating in lockstep (:func:`hca.estimator.fastica_batch.fastica_lockstep`). Entry ``g``
    equals ``fastica_runs(Xks[g], d, seeds, ...)``, or with ``paired=True``
    ``fastica_runs(Xks[g], d, seeds[g], ...)``. ``on_done(g)`` is called once the batched
    runs of ``Xks[g]`` have stopped."""
    Xks = [np.asarray(X, dtype=np.float64) for X in Xks]
    if paired and len(seeds) != len(Xks):
        raise ValueError(f"paired: {len(seeds)} seed lists for {len(Xks)} data matrices")
    seed_lists = [list(s) for s in seeds] if paired else [list(seeds)] * len(Xks)
    distinct = [sorted({int(s) for s in sl if is_int(s)}) for sl in seed_lists]
    shared = None if paired or not distinct or not distinct[0] else initial_matrices(distinct[0], d)
    batched = [g for g in range(len(Xks)) if distinct[g]]
    if on_done is not None:
        for g in range(len(Xks)):
            if not distinct[g]:
                on_done(g)
    batches = fastica_lockstep(
        [whiten(Xks[g], d) for g in batched],
        [shared if shared is not None else initial_matrices(distinct[g], d) for g in batched],
        max_iter=max_iter,
        tol=tol,
        on_done=None if on_done is None else (lambda k: on_done(batched[k])),
    )
    found: list[dict[int, ICARun]] = [{} for _ in Xks]
    for g, batch in zip(batched, batches):
        for i, s in enumerate(distinct[g]):
            W = batch.components[i]
            objective = float(np.sum(ica_negentropy((Xks[g] - batch.mean) @ W.T)))
            found[g][s] = ICARun(
                W, batch.mean, bool(batch.converged[i]), int(batch.n_iter[i]), objective
            )
    out = []
    for g, X in enumerate(Xks):
        runs = []
        for s in seed_lists[g]:
            if not is_int(s):
                runs.append(_fastica_run(X, d, s, max_iter, tol))
                continue
            r = found[g][int(s)]
            runs.append(
                ICARun(r.unmixing.copy(), r.mean.copy(), r.converged, r.n_iter, r.objective)
            )
        out.append(runs)
    return out


def _one_picard(
    Xk: np.ndarray, label: Hashable, d: int, seed: Any, max_iter: int, tol: float, ortho: bool
) -> ICARun:
    """One Picard run, sources rescaled to unit variance."""
    try:  # an optional dependency, imported only when Picard is asked for
        import picard
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "ica='picard' needs the python-picard package (pip install python-picard)"
        ) from err
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        K, W, _, mean, n_iter = picard.picard(
            Xk.T,
            n_components=d,
            ortho=ortho,
            extended=True,
            random_state=seed,
            max_iter=max_iter,
            tol=tol,
            return_X_mean=True,
            return_n_iter=True,
        )
    converged = _relay_warnings(caught, lambda w: "did not converge" in str(w.message))
    unmixing = W @ K
    sources = (Xk - mean) @ unmixing.T
    sd = sources.std(axis=0)
    if np.any(sd <= 0) or not np.all(np.isfinite(sd)):
        raise ValueError(f"Picard returned a degenerate source for domain {label!r}")
    return ICARun(
        np.asarray(unmixing / sd[:, None], dtype=float),
        np.asarray(mean, dtype=float),
        converged,
        int(n_iter),
        float(np.sum(ica_negentropy(sources / sd))),
    )


_HCA_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _outside_hca() -> int:
    """``stacklevel`` of the first frame outside the hca package, seen from the caller."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_HCA_DIR):
        frame, level = frame.f_back, level + 1
    return level


def _domain_runs(
    Xk: np.ndarray,
    label: Hashable,
    d: int,
    ica: str,
    seeds: Sequence[Any],
    max_iter: int,
    tol: float,
) -> list[ICARun]:
    """The ICA runs of one domain from every seed of ``seeds`` (FastICA: one batch)."""
    if ica == "fastica":
        return fastica_runs(Xk, d, seeds, max_iter, tol)
    return [_one_picard(Xk, label, d, seed, max_iter, tol, ica == "picard-o") for seed in seeds]


def _keep_best_run(
    runs: Sequence[ICARun],
    label: Hashable,
    n_samples: int,
    ica: str,
    max_iter: int,
    tol: float,
) -> DomainICA:
    """The converged run with the largest negentropy; warn when it did not converge."""
    any_converged = any(r.converged for r in runs)
    scores = [r.objective if (r.converged or not any_converged) else np.nan for r in runs]
    best = int(np.nanargmax(scores)) if len(runs) > 1 else 0
    run = runs[best]
    if not run.converged:
        warnings.warn(
            f"{ICA_NAMES[ica]} did not converge for domain {label!r} ({n_samples} models) "
            f"after {run.n_iter} iterations (max_iter={max_iter}, tol={tol}); increase "
            "max_iter or tol, and treat this domain's unmixing matrix with caution",
            ConvergenceWarning,
            stacklevel=_outside_hca(),  # point at the caller's code
        )
    return DomainICA(
        domain=label,
        unmixing=run.unmixing,
        mean=run.mean,
        converged=run.converged,
        n_iter=run.n_iter,
        n_samples=n_samples,
        objective=run.objective,
        restart=best,
        restart_objectives=tuple(float(x) for x in scores),
    )


def _fit_one_ica(
    Xk: np.ndarray,
    label: Hashable,
    d: int,
    ica: str,
    random_state: Any,
    max_iter: int,
    tol: float,
    n_restarts: int,
) -> DomainICA:
    """ICA on one domain (best of ``n_restarts`` by negentropy)."""
    runs = _domain_runs(Xk, label, d, ica, restart_seeds(random_state, n_restarts), max_iter, tol)
    return _keep_best_run(runs, label, int(Xk.shape[0]), ica, max_iter, tol)


def _fit_one_ica_quietly(*args: Any) -> tuple[DomainICA, list]:
    """:func:`_fit_one_ica` with its warnings returned (to re-emit them in the caller)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _fit_one_ica(*args)
    return result, [(w.message, w.category) for w in caught]


def fit_icas(
    values: np.ndarray,
    domains: np.ndarray,
    order: Sequence[Hashable],
    d: int,
    *,
    ica: str = "fastica",
    random_state: Any = 0,
    max_iter: int = 1000,
    tol: float | None = None,
    n_restarts: int = 1,
    n_jobs: int | None = None,
    progress: Listener | None = None,
) -> dict[Hashable, DomainICA]:
    """ICA on every domain in ``order`` of already validated data (see :func:`domain_ica`).

    ``n_jobs`` (other than ``None`` and 1) runs the domains in parallel with
    :class:`joblib.Parallel`; every domain gets the same ``random_state`` either way, so the
    result does not depend on ``n_jobs`` (a ``RandomState`` instance always runs the domains
    one after another). Progress is reported per domain (stage ``"ICA"``).
    """
    ica, tol, n_restarts = _ica_settings(ica, tol, n_restarts)
    if ica == "fastica" and n_jobs in (None, 1) and is_int(random_state):
        return fit_icas_many(
            [(values, domains)],
            order,
            d,
            [int(random_state)],
            max_iter=max_iter,
            tol=tol,
            n_restarts=n_restarts,
            progress=progress,
        )[0][0]
    args = [
        (values[domains == label], label, d, ica, random_state, max_iter, tol, n_restarts)
        for label in order
    ]
    out = {}
    if n_jobs in (None, 1) or isinstance(random_state, np.random.RandomState):
        for i, a in enumerate(args):
            out[a[1]] = _fit_one_ica(*a)
            report(progress, "ICA", i + 1, len(args))
        return out
    results = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(_fit_one_ica_quietly)(*a) for a in args
    )
    for i, (a, (result, caught)) in enumerate(zip(args, results)):
        for message, category in caught:
            warnings.warn(message, category, stacklevel=_outside_hca())
        out[a[1]] = result
        report(progress, "ICA", i + 1, len(args))
    return out


def fit_icas_many(
    datasets: Sequence[tuple[np.ndarray, np.ndarray]],
    order: Sequence[Hashable],
    d: int,
    seeds: Sequence[int],
    *,
    ica: str = "fastica",
    max_iter: int = 1000,
    tol: float | None = None,
    n_restarts: int = 1,
    progress: Listener | None = None,
    orders: Sequence[Sequence[Hashable]] | None = None,
    paired: bool = False,
) -> list[list[dict[Hashable, DomainICA]]]:
    """:func:`fit_icas` of several data sets under every seed of ``seeds``, the FastICA runs of
    every data set, seed and restart iterating in lockstep (:func:`fastica_runs_many`). A
    domain whose scores are the same in several data sets is fitted once for all of them.

    Parameters
    ----------
    datasets : sequence of (values, domains)
        Validated data, as in :func:`fit_icas`.
    order, d
        As in :func:`fit_icas`; ``order`` lists every domain of every data set.
    seeds : sequence of int
        ICA seeds (``random_state`` of every fit).
    ica, max_iter, tol, n_restarts
        As in :func:`domain_ica`.
    progress : callable, optional
        Called as ``progress("ICA", done, n_domains)`` once all runs of a domain have stopped.
    orders : sequence of sequence, optional
        The domains of each data set (each within ``order``); default: every data set holds
        every domain of ``order``.
    paired : bool, default=False
        If True, ``seeds[g]`` is the seed of data set ``g`` alone: ``out[g]`` holds one
        entry, equal to ``fit_icas(*datasets[g], orders[g], d, random_state=seeds[g], ...)``.

    Returns
    -------
    list of list of dict
        ``out[g][i]`` equals ``fit_icas(*datasets[g], orders[g], d, random_state=seeds[i],
        ...)``.

    Raises
    ------
    TypeError
        If a seed is not an int.
    ValueError
        If ``orders`` does not give one domain list per data set within ``order``, or
        ``paired`` seeds are not one per data set.
    """
    ica, tol, n_restarts = _ica_settings(ica, tol, n_restarts)
    bad = [s for s in seeds if not is_int(s)]
    if bad:
        raise TypeError(f"seeds must be ints, got {bad[0]!r} ({type(bad[0]).__name__})")
    holds = [set(order)] * len(datasets) if orders is None else [set(o) for o in orders]
    if len(holds) != len(datasets) or any(not h <= set(order) for h in holds):
        raise ValueError("orders must list, for every data set, domains of order")
    if paired and len(seeds) != len(datasets):
        raise ValueError(f"paired: {len(seeds)} seeds for {len(datasets)} data sets")
    per_seed = [restart_seeds(int(s), n_restarts) for s in seeds]
    flat = [s for restarts in per_seed for s in restarts]
    n_out = 1 if paired else len(seeds)
    members = [[g for g in range(len(datasets)) if label in holds[g]] for label in order]
    Xks: list[list[np.ndarray]] = []  # per domain: its distinct matrices
    source: list[dict[int, int]] = []  # per domain: data set -> its matrix (equal: fitted once)
    for j, label in enumerate(order):
        Xks.append([])
        source.append({})
        for g in members[j]:
            values, domains = datasets[g]
            Xk = values[domains == label]
            same = [] if paired else [k for k, Y in enumerate(Xks[j]) if np.array_equal(Xk, Y)]
            source[j][g] = same[0] if same else len(Xks[j])
            if not same:
                Xks[j].append(Xk)
    starts = [[per_seed[g] for g in m] for m in members] if paired else flat  # paired: per matrix
    runs_of = _domain_runs_many(Xks, order, d, ica, starts, max_iter, tol, paired, progress)
    out: list[list[dict[Hashable, DomainICA]]] = [[{} for _ in range(n_out)] for _ in datasets]
    for j, label in enumerate(order):
        used: set[int] = set()
        for g in members[j]:
            Xk, runs = Xks[j][source[j][g]], runs_of[j][source[j][g]]
            if source[j][g] in used:  # every data set owns its arrays
                runs = [replace(r, unmixing=r.unmixing.copy(), mean=r.mean.copy()) for r in runs]
            used.add(source[j][g])
            for i in range(n_out):
                restarts = runs[i * n_restarts : (i + 1) * n_restarts]
                out[g][i][label] = _keep_best_run(
                    restarts, label, int(Xk.shape[0]), ica, max_iter, tol
                )
    return out


def _domain_runs_many(
    Xks: Sequence[Sequence[np.ndarray]],
    order: Sequence[Hashable],
    d: int,
    ica: str,
    seeds: Sequence[Any],
    max_iter: int,
    tol: float,
    paired: bool,
    progress: Listener | None,
) -> list[list[list[ICARun]]]:
    """The ICA runs of every matrix ``Xks[j][k]`` of every domain ``order[j]`` from every seed
    of ``seeds`` (``paired``: ``seeds[j][k]``); FastICA in one lockstep batch."""
    if ica != "fastica":
        out = []
        for j, label in enumerate(order):
            out.append(
                [
                    _domain_runs(Xk, label, d, ica, seeds[j][k] if paired else seeds, max_iter, tol)
                    for k, Xk in enumerate(Xks[j])
                ]
            )
            report(progress, "ICA", j + 1, len(order))
        return out
    domain_of = [j for j in range(len(order)) for _ in Xks[j]]
    left = [len(x) for x in Xks]
    finished = [0]

    def finish_domain() -> None:
        finished[0] += 1
        report(progress, "ICA", finished[0], len(order))

    def on_done(m: int) -> None:
        left[domain_of[m]] -= 1
        if left[domain_of[m]] == 0:
            finish_domain()

    for j in range(len(order)):
        if not Xks[j]:
            finish_domain()
    flat = fastica_runs_many(
        [Xk for per_domain in Xks for Xk in per_domain],
        d,
        [s for per_domain in seeds for s in per_domain] if paired else seeds,
        max_iter,
        tol,
        paired=paired,
        on_done=on_done,
    )
    out, lo = [], 0
    for per_domain in Xks:
        out.append(flat[lo : lo + len(per_domain)])
        lo += len(per_domain)
    return out


def domain_ica(
    X: Any,
    domains: Any,
    n_components: int = 3,
    *,
    ica: str = "fastica",
    random_state: Any = 0,
    max_iter: int = 1000,
    tol: float | None = None,
    n_restarts: int = 1,
) -> dict[Hashable, DomainICA]:
    """Fit ICA separately on every domain (step 1 of HCA).

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_models, n_benchmarks)
        Benchmark scores.
    domains : array-like of shape (n_models,)
        Domain label of every row.
    n_components : int, default=3
        Number of sources ``d0``.
    ica : {"fastica", "picard-o", "picard"}, default="fastica"
        scikit-learn's ``FastICA``; Picard-O (with FastICA's constraint of white sources) or
        Picard, both from ``python-picard`` with the extended density model (Ablin, Cardoso
        & Gramfort, 2018). Every algorithm returns unit-variance (ddof=0) sources.
    random_state : int, RandomState or None, default=0
        Seed of every run (see :func:`restart_seeds` for the restarts).
    max_iter : int, default=1000
        Iterations of every run.
    tol : float, optional
        Tolerance; default :data:`DEFAULT_TOL` of the algorithm (FastICA 1e-4, Picard 1e-7).
    n_restarts : int, default=1
        Runs per domain from different initialisations; the converged run with the largest
        negentropy (:func:`ica_negentropy`) is kept, never looking at the MIC. ``1`` is the
        authors' single run.

    Returns
    -------
    dict
        Domain label (sorted) -> :class:`DomainICA`.

    Warns
    -----
    ConvergenceWarning
        Naming every domain whose kept run did not converge.
    """
    check_ica(ica)
    check_positive_int(n_restarts, "n_restarts")
    data = check_fit_data(X, domains, n_components)
    return fit_icas(
        data.values,
        data.labels,
        data.order,
        data.n_components,
        ica=ica,
        random_state=random_state,
        max_iter=max_iter,
        tol=tol,
        n_restarts=n_restarts,
    )
