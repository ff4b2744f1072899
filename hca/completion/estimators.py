"""Matrix completion estimators: soft-impute, structured matrix completion, column means."""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning

from hca.validation import check_fraction, check_matrix, labels_of, show_labels

__all__ = [
    "SoftImpute",
    "StructuredCompletion",
    "default_shrinkage_grid",
    "ColumnMeans",
]


_EMPTY_ROW_OPTIONS = ("warn", "raise", "ignore")
_THRESHOLDING = ("row", "column")
_STOPPING = ("limit", "change")
PATTERNS = ("random", "block")
METHODS = ("auto", "soft_impute", "structured")
_TINY = 1e-300
_SINGULAR_RTOL = 1e-10  # B11[:s, :s] is singular when sigma_min <= this * sigma_max(B11)


def default_shrinkage_grid(n: int = 20, smallest: float = 1e-3) -> np.ndarray:
    """Relative shrinkage values searched when ``SoftImpute(shrinkage=None)``.

    Parameters
    ----------
    n : int
        Number of values.
    smallest : float
        Smallest value; the largest is 1 (which gives the zero matrix).

    Returns
    -------
    numpy.ndarray
        ``n`` values geometrically spaced from 1 down to ``smallest`` (descending).
    """
    if n < 1 or not 0 < smallest <= 1:
        raise ValueError(f"need n >= 1 and 0 < smallest <= 1; got n={n}, smallest={smallest}")
    return np.geomspace(1.0, smallest, n)


@functools.cache
def _blas_controller() -> Any:
    """The process's threadpoolctl controller: a handle on the BLAS/OpenMP libraries loaded
    in this process (no data, nothing a result depends on). Building one scans every loaded
    shared library (about 8 ms); the completion chapter opens the limit about 900 times per
    scorecard, so the scan is done once per process (a process-wide store CONTRIBUTING lists)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def single_thread_blas() -> contextlib.AbstractContextManager:
    """Limit BLAS/LAPACK to one thread: the many tiny decompositions here are several
    times slower with a multi-threaded OpenBLAS (thread start-up dominates)."""
    return _blas_controller().limit(limits=1, user_api="blas")


def _wrap(X_in: Any, arr: np.ndarray) -> Any:
    """Return ``arr`` as a DataFrame shaped like ``X_in`` when the input was one."""
    if isinstance(X_in, pd.DataFrame):
        return pd.DataFrame(arr, index=X_in.index, columns=X_in.columns)
    return arr


def _check_not_all_missing(missing: np.ndarray) -> None:
    if missing.all():
        raise ValueError(
            f"every entry of X is missing (shape {missing.shape}); nothing to complete from"
        )


def _check_columns_observed(missing: np.ndarray, cols: list, who: str) -> None:
    """Every column needs an observed entry (and so X one)."""
    _check_not_all_missing(missing)
    empty = np.flatnonzero(missing.all(axis=0))
    if empty.size:
        raise ValueError(
            f"{who} cannot fill columns without any observed entry: {show_labels(cols, empty)}"
        )


# --------------------------------------------------------------------------- soft-impute core
def svt_weights(
    G: np.ndarray, lam: np.ndarray, max_rank: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Singular value soft-thresholding through the Gram matrix.

    For a working matrix ``M`` with ``G = M^T M`` (batched: ``(R, d, d)``),
    ``S_lambda(M) = M @ W`` with ``W = V diag(max(s - lambda, 0) / s) V^T``.
    Returns ``W`` and the thresholded singular values (ascending order).
    """
    evals, V = np.linalg.eigh(G)
    s = np.sqrt(np.maximum(evals, 0.0))  # np.clip(., 0.0, None) is np.maximum
    shrunk = np.maximum(s - lam[:, None], 0.0)
    if max_rank is not None and max_rank < s.shape[1]:
        shrunk[:, : s.shape[1] - max_rank] = 0.0
    w = np.divide(shrunk, s, out=np.zeros(s.shape), where=s > 0)
    W = (V * w[:, None, :]) @ V.transpose(0, 2, 1)
    return W, shrunk


def soft_impute_batch(
    Xc: np.ndarray,
    observed: np.ndarray,
    G_fixed: np.ndarray,
    lam: np.ndarray,
    Z0: np.ndarray,
    max_rank: int | None,
    max_iter: int,
    tol: float,
    accelerate: bool = True,
    stopping: str = "limit",
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Soft-impute for a batch of ``R`` problems sharing a row count.

    Each step is ``Z <- S_lambda(P_obs(X) + P_miss(Y))``; with ``accelerate`` the point
    ``Y`` is Nesterov's extrapolation ``Z_k + (t_{k-1} - 1) / t_k (Z_k - Z_{k-1})`` (FISTA,
    Beck & Teboulle 2009, with the gradient restart of O'Donoghue & Candes 2015), which
    solves the same convex problem in fewer steps; otherwise ``Y = Z_k`` (the plain
    soft-impute of Mazumder et al. 2010).

    ``stopping="limit"`` stops when the estimated distance to the limit is small (see
    :class:`SoftImpute`); ``stopping="change"`` runs the plain iterations (``accelerate`` is
    ignored) and stops as ``fancyimpute.SoftImpute`` does: when the change of the filled-in
    entries is below ``tol`` times their norm (never at the first step, which leaves the
    zero start), returning the last iterate.

    Parameters
    ----------
    Xc : (R or 1, n, d) array
        Centred/scaled data of the rows that are iterated, zero where missing.
    observed : (R or 1, n, d) bool array
    G_fixed : (R or 1, d, d) array
        Gram matrix of the fully observed rows (constant during the iterations).
    lam : (R,) array
        Absolute thresholds.
    Z0 : (R, n, d) array
        Starting low-rank fit of the iterated rows.

    Returns
    -------
    Z : (R, n, d) low-rank fit of the iterated rows; W : (R, d, d) with
    ``fit = working matrix @ W``; n_iter : (R,); converged : (R,) bool.
    """
    if stopping not in _STOPPING:
        raise ValueError(f"stopping must be one of {_STOPPING}; got {stopping!r}")
    if stopping == "change":
        return _plain_batch(Xc, observed, G_fixed, lam, Z0, max_rank, max_iter, tol)
    return _limit_batch(Xc, observed, G_fixed, lam, Z0, max_rank, max_iter, tol, accelerate)


class _Slots:
    """The working set of a batch of soft-impute problems: every problem has a slot in
    preallocated arrays and the problems still iterating fill the first ``k`` slots, so that
    each step works in place on views of those. A problem that stops hands its slot to one
    of the last problems still iterating: the few problems moved are copied, not the whole
    stack. Arrays with one slice shared by every problem (``shape[0] == 1``) stay as they
    are. The batched products and decompositions treat each slice on its own, so every
    problem's arithmetic is that of the problem alone, wherever its slot."""

    def __init__(self, R: int) -> None:
        self.k = R
        self.problem = np.arange(R)  # the problem in each slot

    def head(self, a: np.ndarray) -> np.ndarray:
        """The slots in use of ``a`` (all of ``a`` when it is shared)."""
        return a if a.shape[0] == 1 else a[: self.k]

    def release(self, stop: np.ndarray, arrays: Sequence[np.ndarray]) -> np.ndarray:
        """Free the slots where ``stop`` (length ``k``) is true: move the last problems
        still iterating into them in every array of ``arrays`` (in place) and return the
        new order of the first ``k`` slots (to index small per-problem arrays by)."""
        k = self.k - int(stop.sum())
        holes = np.flatnonzero(stop[:k])  # stopped problems' slots that stay in use
        movers = k + np.flatnonzero(~stop[k:])  # problems still iterating beyond them
        for a in (*arrays, self.problem):
            if a.shape[0] > 1:
                a[holes] = a[movers]
        order = np.arange(k)
        order[holes] = movers
        self.k = k
        return order


def _limit_batch(
    Xc: np.ndarray,
    observed: np.ndarray,
    G_fixed: np.ndarray,
    lam: np.ndarray,
    Z0: np.ndarray,
    max_rank: int | None,
    max_iter: int,
    tol: float,
    accelerate: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Soft-impute stopped at its limit (``stopping="limit"`` of :func:`soft_impute_batch`)."""
    R, d = lam.shape[0], Xc.shape[2]
    shape = (R,) + Xc.shape[1:]
    Z = np.array(Z0, dtype=float, copy=True)
    W_out = np.zeros((R, d, d))
    n_iter = np.full(R, max_iter)
    converged = np.zeros(R, dtype=bool)
    slots = _Slots(R)
    head = slots.head
    Xa, Ua, Ga = _working_arrays(Xc, observed, G_fixed)
    La = np.array(lam, dtype=float, copy=True)
    Za, Znew = Z.copy(), np.empty(shape)
    prev_step, step = np.zeros(shape), np.empty(shape)  # Z_k - Z_{k-1}
    Y, M = np.empty(shape), np.empty(shape)
    den = np.einsum("rij,rij->r", Za, Za)  # ||Z_k||^2
    num_prev = np.full(R, np.inf)  # ||Z_k - Z_{k-1}||^2
    t = np.ones(R)
    for it in range(1, max_iter + 1):
        za, m = head(Za), head(M)
        if accelerate:
            t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            beta = (t - 1.0) / t_next
            y = np.multiply(head(prev_step), beta[:, None, None], out=head(Y))
            y += za
        else:
            y = za
        np.multiply(head(Ua), y, out=m)  # observed entries of X, current fit elsewhere
        m += head(Xa)
        W, _ = svt_weights(head(Ga) + np.swapaxes(m, 1, 2) @ m, La, max_rank)
        zn = np.matmul(m, W, out=head(Znew))
        st = np.subtract(zn, za, out=head(step))
        num = np.einsum("rij,rij->r", st, st)
        # distance to the limit ~ ||step|| / (1 - rho), rho = ratio of successive steps
        rho = np.sqrt(num / np.maximum(num_prev, _TINY))
        ok = (rho < 1.0) & (num <= tol * np.maximum(den, _TINY) * (1.0 - np.minimum(rho, 1.0)) ** 2)
        ok = (ok & (it >= 3)) | (num == 0.0)  # the first step leaves the start: no rate yet
        new = ok | (it == max_iter)
        if accelerate:
            # gradient restart: <Y - Z_new, Z_new - Z_k> > 0, with Y - Z_k = beta * prev_step
            restart = beta * np.einsum("rij,rij->r", head(prev_step), st) - num > 0
            t = np.where(restart, 1.0, t_next)
        den = np.einsum("rij,rij->r", zn, zn)
        num_prev = num
        Za, Znew, prev_step, step = Znew, Za, step, prev_step
        if new.any():
            gi = slots.problem[: slots.k][new]
            Z[gi], W_out[gi], n_iter[gi], converged[gi] = zn[new], W[new], it, ok[new]
            if new.all():
                break
            order = slots.release(new, (Xa, Ua, Ga, Za, prev_step))
            La, t, den, num_prev = La[order], t[order], den[order], num_prev[order]
    return Z, W_out, n_iter, converged


def _working_arrays(
    Xc: np.ndarray, observed: np.ndarray, G_fixed: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The observed entries (zero elsewhere), the indicator of the missing entries (1.0) and
    the fixed rows' Gram, each with one slice per problem or one shared slice; fresh arrays
    (the slots of :class:`_Slots` are moved in place)."""
    Xa = np.where(observed, Xc, 0.0)
    Ua = (~np.asarray(observed, dtype=bool)).astype(float)
    Ga = np.array(G_fixed, dtype=float, copy=True)
    return Xa, Ua, Ga


def _far(old: np.ndarray, new: np.ndarray, tol: float, slack: float) -> np.ndarray:
    """Where ``fancyimpute``'s rule cannot stop, whatever the change of the filled-in part.

    The change is at least the change of the norms: ``||P_new - P_old|| >= | ||P_new|| -
    ||P_old|| |``. ``old`` and ``new`` are the computed norms, each within a relative
    ``slack`` (``(entries + 2)`` machine epsilons: a sum of squares and a square root) of
    the exact one. Where ``|new - old|`` exceeds ``tol * old`` by more than those errors
    (``2 slack (old + new)`` and a relative ``8 slack``), the computed change is at least
    the computed ``tol * old``, so the rule's test ``change < tol * old`` fails.
    """
    return np.abs(new - old) > tol * old * (1.0 + 8.0 * slack) + 2.0 * slack * (old + new)


def _plain_batch(
    Xc: np.ndarray,
    observed: np.ndarray,
    G_fixed: np.ndarray,
    lam: np.ndarray,
    Z0: np.ndarray,
    max_rank: int | None,
    max_iter: int,
    tol: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Plain soft-impute stopped by ``fancyimpute``'s rule (``stopping="change"`` of
    :func:`soft_impute_batch`).

    ``fancyimpute.SoftImpute._converged`` stops when ``||P_miss(Z_new - Z_old)|| < tol
    ||P_miss(Z_old)||`` and never while ``P_miss(Z_old)`` is 0 (or below float32 precision
    while the step is not). Only the filled-in part ``P = P_miss(Z)`` is carried between
    steps, so that each step makes few passes over the ``(R, n, d)`` arrays (in place, in
    the slots of :class:`_Slots`). The change ``||P_new - P_old||`` is computed only at the
    steps where some problem may stop (:func:`_far`): the rule's decisions, and so every
    iterate, are those of computing it at every step.
    """
    R, d = lam.shape[0], Xc.shape[2]
    shape = (R,) + Xc.shape[1:]
    Z = np.array(Z0, dtype=float, copy=True)
    W_out = np.zeros((R, d, d))
    n_iter = np.full(R, max_iter)
    converged = np.zeros(R, dtype=bool)
    eps = np.finfo(np.float32).eps
    slack = (Xc.shape[1] * d + 2) * np.finfo(float).eps  # rounding of a norm, relative
    slots = _Slots(R)
    head = slots.head
    Xa, Ua, Ga = _working_arrays(Xc, observed, G_fixed)
    La = np.array(lam, dtype=float, copy=True)
    P, Pn, M, Znew = np.multiply(Ua, Z), np.empty(shape), np.empty(shape), np.empty(shape)
    old2 = np.einsum("rij,rij->r", P, P)
    np.add(P, Xa, out=M)
    for it in range(1, max_iter + 1):
        m = head(M)
        W, _ = svt_weights(head(Ga) + np.swapaxes(m, 1, 2) @ m, La, max_rank)
        zn = np.matmul(m, W, out=head(Znew))
        pn = np.multiply(head(Ua), zn, out=head(Pn))
        new2 = np.einsum("rij,rij->r", pn, pn)  # the next step's old2
        old = np.sqrt(old2)
        if _far(old, np.sqrt(new2), tol, slack).all():  # no problem can stop
            ok = np.zeros(slots.k, dtype=bool)
        else:
            D = np.subtract(pn, head(P), out=m)  # M is rebuilt below
            ssd = np.sqrt(np.einsum("rij,rij->r", D, D))
            ok = ~((old == 0) | ((old < eps) & (ssd > eps))) & (ssd < tol * old)
        new = ok | (it == max_iter)
        P, Pn, old2 = Pn, P, new2
        if new.any():
            gi = slots.problem[: slots.k][new]
            Z[gi], W_out[gi], n_iter[gi], converged[gi] = zn[new], W[new], it, ok[new]
            if new.all():
                break
            order = slots.release(new, (Xa, Ua, Ga, P))
            La, old2 = La[order], old2[order]
        np.add(head(P), head(Xa), out=head(M))
    return Z, W_out, n_iter, converged


def standardise(
    X_rows: np.ndarray, observed: np.ndarray, X_fixed: np.ndarray | None, center: bool, scale: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centre/scale a batch of masked copies of the same rows plus fixed complete rows.

    Parameters
    ----------
    X_rows : (n, d) array
        Rows that carry missing entries (their NaN, if any, are ignored).
    observed : (R, n, d) bool array
        Which entries of ``X_rows`` are observed, per problem.
    X_fixed : (m, d) array or None
        Fully observed rows shared by every problem.

    Returns
    -------
    Xc : (R, n, d) standardised rows, zero where missing; G_fixed : (R, d, d) Gram of the
    standardised fixed rows; mean, sd : (R, d).
    """
    R, n, d = observed.shape
    Xf = np.nan_to_num(X_rows, nan=0.0)
    obs = observed.astype(float)
    count = obs.sum(axis=1)
    total = np.einsum("rnd,nd->rd", obs, Xf)
    if X_fixed is not None and len(X_fixed):
        m = X_fixed.shape[0]
        fixed_mean = X_fixed.mean(axis=0)
        Dc = X_fixed - fixed_mean
        C = Dc.T @ Dc
        count = count + m
        total = total + m * fixed_mean
    else:
        m, fixed_mean, C = 0, np.zeros(d), np.zeros((d, d))
    if (count == 0).any():  # callers check this earlier; guard against division by zero
        raise ValueError("a column has no observed entry")
    mean = total / count if center else np.zeros((R, d))
    dev = Xf[None, :, :] - mean[:, None, :]
    if scale:
        ss = np.einsum("rnd,rnd->rd", obs, dev * dev)
        ss = ss + np.diag(C)[None, :] + m * (fixed_mean[None, :] - mean) ** 2
        sd = np.sqrt(ss / count)
        sd[~(sd > 1e-12 * np.maximum(np.abs(mean), 1.0))] = 1.0
    else:
        sd = np.ones((R, d))
    Xc = np.where(observed, dev / sd[:, None, :], 0.0)
    shift = fixed_mean[None, :] - mean
    G = C[None] + m * shift[:, :, None] * shift[:, None, :]
    G = G / (sd[:, :, None] * sd[:, None, :])
    return Xc, G, mean, sd


def lambda_max(Xc: np.ndarray, G_fixed: np.ndarray) -> np.ndarray:
    """Largest singular value of each zero-filled standardised matrix."""
    G = G_fixed + np.swapaxes(Xc, 1, 2) @ Xc
    return np.sqrt(np.clip(np.linalg.eigvalsh(G)[:, -1], 0.0, None))


# --------------------------------------------------------------------------- base
class MatrixCompleter(TransformerMixin, BaseEstimator):
    """What every completion estimator shares: ``fit`` stores the completed matrix in
    ``completed_`` (computed by the subclass's ``_fit``, with single-threaded BLAS: the
    matrices are small) and ``fit_transform`` returns ``X`` with its missing entries filled."""

    def _fit(self, X: Any) -> MatrixCompleter:  # pragma: no cover - abstract
        raise NotImplementedError

    def fit(self, X: Any, y: Any = None) -> MatrixCompleter:
        """Complete ``X`` (NaN = missing) and store the result in ``completed_``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_cols)
        y : ignored

        Returns
        -------
        self
        """
        with single_thread_blas():
            return self._fit(X)

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
        """Return ``X`` with its missing entries (NaN) filled in.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_cols)
        y : ignored

        Returns
        -------
        ndarray or DataFrame
            Same type and shape as ``X``; observed entries unchanged.
        """
        return _wrap(X, self.fit(X).completed_.copy())


# --------------------------------------------------------------------------- SoftImpute
class SoftImpute(MatrixCompleter):
    """Nuclear-norm regularised matrix completion (soft-impute).

    Solves ``min_Z 1/2 ||P_obs(X - Z)||_F^2 + lambda ||Z||_*`` on the centred (optionally
    scaled) matrix by the soft-impute iterations of Mazumder, Hastie & Tibshirani (2010)
    and returns ``X`` with its missing entries (NaN) replaced by the fit. The iterations
    are accelerated (FISTA with restart) and the singular value decomposition comes from
    the ``n_cols x n_cols`` Gram matrix: meant for matrices with few columns (see the
    module docstring for the rules).

    Parameters
    ----------
    shrinkage : float or None
        ``lambda / lambda_max`` where ``lambda_max`` is the largest singular value of the
        centred, zero-filled matrix (``>= 1`` gives the zero fit, i.e. column means).
        ``None`` chooses it from ``shrinkage_grid`` by validation on a random
        ``validation_fraction`` of the observed entries (see the module docstring).
    max_rank : int or None
        Keep at most this many singular values of every iterate (``None``: no limit).
    max_iter : int
        Maximum number of soft-impute iterations per fit.
    tol : float
        With ``stopping="limit"``: stop when the estimated squared distance of the fit of
        the incomplete rows to its limit, ``||Z_k - Z_{k-1}||^2 / (1 - rho)^2`` with ``rho``
        the ratio of successive step lengths, is at most ``tol * ||Z_k||^2`` (not before the
        third iteration). With ``stopping="change"``: see there.
    stopping : {"limit", "change"}
        ``"limit"`` (default): accelerated iterations run until the fit is at its limit
        (the solution of the convex problem). ``"change"``: plain iterations from the zero
        start, stopped as ``fancyimpute.SoftImpute`` stops them, when the filled-in entries
        change by less than ``tol`` times their norm (fancyimpute: ``tol=0.001``,
        ``max_iter=100``); the fit may then be far from the solution.
    center, scale : bool
        Centre (scale) each column by the mean (standard deviation) of its observed entries.
    shrinkage_grid : array-like or None
        Relative values searched when ``shrinkage=None``; default
        :func:`default_shrinkage_grid` (20 values from 1 to 1e-3).
    validation_fraction : float
        Fraction of the observed entries held out when ``shrinkage=None``.
    selection_tolerance : float
        The chosen value is the largest grid value whose held-out RMSE is at most
        ``(1 + selection_tolerance)`` times the smallest (0: the best value).
    empty_row : {"warn", "raise", "ignore"}
        What to do about rows without any observed entry (they receive the column means).
    random_state : int, numpy.random.Generator or None
        Seed of the held-out draw.

    Attributes
    ----------
    completed_ : ndarray
        ``X`` with its missing entries filled in (also returned by ``fit_transform``).
    missing_ : ndarray of bool
        Where ``X`` was missing.
    shrinkage_ : float
        Relative shrinkage used for the final fit (NaN when nothing was missing).
    lambda_, lambda_max_ : float
        Absolute threshold of the final fit and ``lambda_max``, in centred (scaled) units.
    rank_ : int
        Rank of the final low-rank fit.
    mean_, scale_ : ndarray
        Column centres and scales used.
    n_iter_ : int
    converged_ : bool
    shrinkage_grid_, validation_rmse_ : ndarray
        Searched values and their held-out RMSE (only when ``shrinkage=None``).
    empty_rows_ : ndarray
        Positions of the rows without any observed entry.
    """

    def __init__(
        self,
        shrinkage: float | None = None,
        max_rank: int | None = None,
        max_iter: int = 2000,
        tol: float = 1e-8,
        center: bool = True,
        scale: bool = False,
        shrinkage_grid: Sequence[float] | None = None,
        validation_fraction: float = 0.1,
        selection_tolerance: float = 0.01,
        empty_row: str = "warn",
        random_state: Any = 0,
        stopping: str = "limit",
    ) -> None:
        self.shrinkage = shrinkage
        self.max_rank = max_rank
        self.max_iter = max_iter
        self.tol = tol
        self.center = center
        self.scale = scale
        self.shrinkage_grid = shrinkage_grid
        self.validation_fraction = validation_fraction
        self.selection_tolerance = selection_tolerance
        self.empty_row = empty_row
        self.random_state = random_state
        self.stopping = stopping

    # ---------------------------------------------------------------- checks
    def _check_params(self) -> None:
        if self.shrinkage is not None and not (np.isfinite(self.shrinkage) and self.shrinkage >= 0):
            raise ValueError(
                f"shrinkage must be None or a finite value >= 0; got {self.shrinkage!r}"
            )
        if self.max_rank is not None and int(self.max_rank) < 1:
            raise ValueError(f"max_rank must be None or >= 1; got {self.max_rank!r}")
        if int(self.max_iter) < 1:
            raise ValueError(f"max_iter must be >= 1; got {self.max_iter!r}")
        if not self.tol > 0:
            raise ValueError(f"tol must be > 0; got {self.tol!r}")
        check_fraction(self.validation_fraction, "validation_fraction")
        if not (np.isfinite(self.selection_tolerance) and self.selection_tolerance >= 0):
            raise ValueError(
                f"selection_tolerance must be a finite value >= 0; got {self.selection_tolerance!r}"
            )
        if self.stopping not in _STOPPING:
            raise ValueError(f"stopping must be one of {_STOPPING}; got {self.stopping!r}")
        if self.empty_row not in _EMPTY_ROW_OPTIONS:
            raise ValueError(
                f"empty_row must be one of {_EMPTY_ROW_OPTIONS}; got {self.empty_row!r}"
            )

    def _grid(self) -> np.ndarray:
        grid = (
            default_shrinkage_grid()
            if self.shrinkage_grid is None
            else np.asarray(self.shrinkage_grid, dtype=float).ravel()
        )
        if grid.size == 0 or not np.all(np.isfinite(grid)) or (grid < 0).any():
            raise ValueError(f"shrinkage_grid must hold finite values >= 0; got {grid}")
        return np.sort(grid)[::-1]

    def _check_mask(self, missing: np.ndarray, rows: list, cols: list) -> np.ndarray:
        _check_columns_observed(missing, cols, "SoftImpute")
        empty_rows = np.flatnonzero(missing.all(axis=1))
        if empty_rows.size and self.empty_row != "ignore":
            msg = (
                f"rows without any observed entry receive only the column means: "
                f"{show_labels(rows, empty_rows)}"
            )
            if self.empty_row == "raise":
                raise ValueError(msg)
            warnings.warn(msg, UserWarning, stacklevel=4)
        return empty_rows

    # ---------------------------------------------------------------- fitting
    def _fit_arrays(
        self, X: np.ndarray, missing: np.ndarray, lam_rel: np.ndarray
    ) -> dict[str, Any]:
        """Fit every relative shrinkage in ``lam_rel`` on the observed entries of ``X``."""
        inc = missing.any(axis=1)
        observed = ~missing[inc][None]
        Xc, G, mean, sd = standardise(X[inc], observed, X[~inc], self.center, self.scale)
        lam_max = lambda_max(Xc, G)[0]
        lam = np.asarray(lam_rel, dtype=float) * lam_max
        Z0 = np.zeros((lam.size,) + Xc.shape[1:])
        max_rank = None if self.max_rank is None else int(self.max_rank)
        settings = (max_rank, int(self.max_iter), float(self.tol))
        Z, _, n_iter, conv = soft_impute_batch(
            Xc, observed, G, lam, Z0, *settings, stopping=self.stopping
        )
        return {
            "inc": inc,
            "Z": Z,
            "mean": mean[0],
            "sd": sd[0],
            "lam": lam,
            "lam_max": lam_max,
            "n_iter": n_iter,
            "converged": conv,
        }

    def _validate(self, X: np.ndarray, missing: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Choose the relative shrinkage by held-out RMSE (module docstring)."""
        grid = self._grid()
        rng = np.random.default_rng(self.random_state)
        obs_idx = np.flatnonzero(~missing.ravel())
        n_val = int(round(self.validation_fraction * obs_idx.size))
        if n_val < 1 or obs_idx.size - n_val < 1:
            raise ValueError(
                f"too few observed entries ({obs_idx.size}) to hold out "
                f"{self.validation_fraction:.0%} for choosing the shrinkage; "
                "pass shrinkage explicitly"
            )
        val = np.zeros(missing.size, dtype=bool)
        val[rng.choice(obs_idx, size=n_val, replace=False)] = True
        val = val.reshape(missing.shape)
        train_missing = missing | val
        for j in np.flatnonzero(train_missing.all(axis=0)):  # keep one entry per column
            val[np.flatnonzero(val[:, j])[0], j] = False
        train_missing = missing | val
        fit = self._fit_arrays(X, train_missing, grid)
        inc = fit["inc"]
        rows, cols = np.nonzero(val[inc])
        pred = fit["Z"][:, rows, cols] * fit["sd"][cols] + fit["mean"][cols]
        truth = X[inc][rows, cols]
        rmse = np.sqrt(np.mean((pred - truth) ** 2, axis=1))
        within = rmse <= (1.0 + self.selection_tolerance) * rmse.min()
        return float(grid[int(np.argmax(within))]), grid, rmse

    def choose_shrinkage(self, X: Any) -> float:
        """The relative shrinkage :meth:`fit` would use on ``X``, without the final fit.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_cols)

        Returns
        -------
        float
            ``shrinkage``, or when it is None the value the validation rule chooses (the
            ``shrinkage_`` of ``fit(X)``); NaN when nothing is missing.
        """
        self._check_params()
        arr = check_matrix(X, allow_nan=True)
        rows, cols = labels_of(X)
        missing = np.isnan(arr)
        if not missing.any():
            return float("nan")
        self._check_mask(missing, rows, cols)
        if self.shrinkage is not None:
            return float(self.shrinkage)
        with single_thread_blas():
            return self._validate(arr, missing)[0]

    def _fit(self, X: Any) -> SoftImpute:
        self._check_params()
        arr = check_matrix(X, allow_nan=True)
        rows, cols = labels_of(X)
        missing = np.isnan(arr)
        self.missing_ = missing
        if not missing.any():
            self._set_trivial(arr)
            return self
        self.empty_rows_ = self._check_mask(missing, rows, cols)
        if self.shrinkage is None:
            shrink, grid, rmse = self._validate(arr, missing)
            self.shrinkage_grid_, self.validation_rmse_ = grid, rmse
        else:
            shrink = float(self.shrinkage)
        fit = self._fit_arrays(arr, missing, np.array([shrink]))
        Zs = fit["Z"][0] * fit["sd"] + fit["mean"]
        out = arr.copy()
        inc = fit["inc"]
        block = out[inc]
        block[missing[inc]] = Zs[missing[inc]]
        out[inc] = block
        max_rank = None if self.max_rank is None else int(self.max_rank)
        _, shrunk = svt_weights(self._final_gram(arr, missing, fit), fit["lam"][:1], max_rank)
        self.completed_ = out
        self.shrinkage_ = shrink
        self.lambda_ = float(fit["lam"][0])
        self.lambda_max_ = float(fit["lam_max"])
        self.rank_ = int((shrunk[0] > 0).sum())
        self.mean_, self.scale_ = fit["mean"], fit["sd"]
        self.n_iter_ = int(fit["n_iter"][0])
        self.converged_ = bool(fit["converged"][0])
        if not self.converged_:
            warnings.warn(
                f"soft-impute did not converge in {self.max_iter} iterations "
                f"(tol={self.tol}); increase max_iter",
                ConvergenceWarning,
                stacklevel=3,
            )
        return self

    def _final_gram(self, arr: np.ndarray, missing: np.ndarray, fit: dict) -> np.ndarray:
        """Gram matrix of the final working matrix (observed entries + fit), standardised."""
        M = (np.where(missing, np.nan, arr) - fit["mean"]) / fit["sd"]
        inc = fit["inc"]
        Mi = M[inc]
        Mi[missing[inc]] = fit["Z"][0][missing[inc]]
        M[inc] = Mi
        return (M.T @ M)[None]

    def _set_trivial(self, arr: np.ndarray) -> None:
        """Attributes when nothing is missing: the input passes through unchanged."""
        self.completed_ = arr.copy()
        self.empty_rows_ = np.array([], dtype=int)
        self.shrinkage_ = float("nan")
        self.lambda_ = float("nan")
        self.lambda_max_ = float("nan")
        self.rank_ = int(np.linalg.matrix_rank(arr))
        self.mean_ = arr.mean(axis=0) if self.center else np.zeros(arr.shape[1])
        self.scale_ = np.ones(arr.shape[1])
        self.n_iter_ = 0
        self.converged_ = True


# --------------------------------------------------------------------------- SMC
def smc_rule_batch(
    V1: np.ndarray,
    B1: np.ndarray,
    A21: np.ndarray,
    m1: int,
    rank: int | None,
    c_T: float,
    thresholding: str,
    n_rows: int,
    n_cols: int,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Rank rule and estimate of Cai, Cai & Zhang (2016) from the rotated blocks, for ``R``
    problems of one shape at once.

    ``V1`` holds the right singular vectors of ``[A11; A21]`` (columns, by decreasing
    singular value) and ``B1 = U2^T [A11, A12] = S2 V2^T`` (rows by decreasing singular
    value; the first ``m2`` columns belong to ``A11``).

    Every problem takes the rank the one-problem rule would take: the candidate ranks are
    tried from the largest down, each on the problems not yet decided, and the estimate of
    each rank is computed for the problems that took it (the same LAPACK calls per problem
    as one at a time).

    Parameters
    ----------
    V1 : (R, m2, m2) array
    B1 : (R, q, n_cols) array
    A21 : (R, k21, m2) array
    m1 : int
        Fully observed rows (the same in every problem).

    Returns
    -------
    A22 : (R, k21, n_cols - m2) array; rank : (R,) int array; threshold : float
    """
    R, m2 = V1.shape[0], V1.shape[1]
    B11, B12, B21 = B1[:, :, :m2] @ V1, B1[:, :, m2:], A21 @ V1
    k = min(m1, m2)
    thr = c_T * np.sqrt(n_rows / m1) if thresholding == "row" else c_T * np.sqrt(n_cols / m2)
    smax = np.linalg.norm(B11, 2, axis=(1, 2)) if B11.size else np.zeros(R)
    r = np.zeros(R, dtype=int)
    open_ = np.ones(R, dtype=bool)  # rank not decided yet
    candidates = [min(int(rank), k)] if rank is not None else range(k, 0, -1)
    for s in candidates:
        if s == 0 or not open_.any():
            break
        live = np.flatnonzero(open_)
        sub = B11[live, :s, :s]
        sv = np.linalg.svd(sub, compute_uv=False)
        regular = ~(sv[:, -1] <= _SINGULAR_RTOL * smax[live])
        if rank is not None:
            if not regular.all():
                raise ValueError(
                    f"rank={rank}: B11[:{s}, :{s}] is singular (A11 has "
                    f"numerical rank < {s}); choose a smaller rank or rank=None"
                )
            r[live] = s
            break
        live, sub = live[regular], sub[regular]
        if not live.size:
            continue
        if thresholding == "row":  # B21[:, :s] sub^{-1}
            T = np.swapaxes(
                np.linalg.solve(np.swapaxes(sub, 1, 2), np.swapaxes(B21[live, :, :s], 1, 2)),
                1,
                2,
            )
        else:  # sub^{-1} B12[:s, :]
            T = np.linalg.solve(sub, B12[live, :s, :])
        take = live[np.linalg.norm(T, 2, axis=(1, 2)) <= thr]
        r[take] = s
        open_[take] = False
    A22 = np.zeros((R, A21.shape[1], B12.shape[2]))
    for s in np.unique(r[r > 0]):
        at = np.flatnonzero(r == s)
        A22[at] = B21[at, :, :s] @ np.linalg.solve(B11[at, :s, :s], B12[at, :s, :])
    return A22, r, float(thr)


def smc_block(
    A11: np.ndarray,
    A12: np.ndarray,
    A21: np.ndarray,
    rank: int | None,
    c_T: float,
    thresholding: str,
    n_rows: int,
    n_cols: int,
) -> tuple[np.ndarray, int, float]:
    """Cai, Cai & Zhang (2016) estimate of ``A22`` from ``A11``, ``A12``, ``A21``."""
    # Only the right singular vectors of [A11; A21] and S2 V2^T = U2^T [A11, A12] are
    # needed; the R factor of a QR decomposition gives them without forming U.
    R1 = np.linalg.qr(np.vstack([A11, A21]), mode="r")
    V1 = np.linalg.svd(R1)[2].T
    R2 = np.linalg.qr(np.hstack([A11, A12]), mode="r")
    _, s2, V2t = np.linalg.svd(R2, full_matrices=False)
    B1 = s2[:, None] * V2t
    A22, r, thr = smc_rule_batch(
        V1[None], B1[None], A21[None], A11.shape[0], rank, c_T, thresholding, n_rows, n_cols
    )
    return A22[0], int(r[0]), thr


def eig_desc(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (clipped at 0) and eigenvectors of a symmetric matrix (or of a stack of
    them, ``(..., d, d)``), decreasing."""
    e, V = np.linalg.eigh(G)
    return np.clip(e[..., ::-1], 0.0, None), V[..., ::-1]


class StructuredCompletion(MatrixCompleter):
    """Structured matrix completion for block-missing patterns (Cai, Cai & Zhang 2016).

    Rows without missing entries and columns without missing entries define the
    observed blocks: with ``R1`` the complete rows, ``R2`` the others, ``C1`` the complete
    columns and ``C2`` the others, ``A11 = X[R1, C1]``, ``A12 = X[R1, C2]``,
    ``A21 = X[R2, C1]`` and the block ``X[R2, C2]`` is estimated by
    ``A21 V1_r (U2_r^T A11 V1_r)^{-1} U2_r^T A12`` (see the module docstring for the rank
    rule). Missing entries take the estimate; observed entries are left unchanged.

    Parameters
    ----------
    rank : int or None
        Rank ``r`` of the estimate (capped at ``min(m1, m2)``, the numbers of fully observed
        rows and columns); ``None`` applies the thresholding rule.
    threshold_constant : float
        ``c_T`` of the thresholding rule (2, the default of the authors' R package).
    thresholding : {"row", "column"}
        Which of the two rules of Cai, Cai & Zhang (2016) selects the rank.
    center, scale : bool
        Centre (scale) every column by its mean (standard deviation) over the fully
        observed rows before completing; undone afterwards.

    Attributes
    ----------
    completed_ : ndarray
    missing_ : ndarray of bool
    rank_ : int
        Rank used (0: the block received the column means).
    threshold_ : float
        Threshold of the rule (NaN when ``rank`` was given or nothing was missing).
    complete_rows_, complete_cols_ : ndarray
        Positions of the fully observed rows (``R1``) and columns (``C1``).
    mean_, scale_ : ndarray
    n_unused_observed_ : int
        Observed entries inside the ``R2 x C2`` block, not used by the estimate.
    """

    def __init__(
        self,
        rank: int | None = None,
        threshold_constant: float = 2.0,
        thresholding: str = "row",
        center: bool = True,
        scale: bool = False,
    ) -> None:
        self.rank = rank
        self.threshold_constant = threshold_constant
        self.thresholding = thresholding
        self.center = center
        self.scale = scale

    def _check_params(self) -> None:
        if self.rank is not None and int(self.rank) < 0:
            raise ValueError(f"rank must be None or >= 0; got {self.rank!r}")
        if not self.threshold_constant > 0:
            raise ValueError(f"threshold_constant must be > 0; got {self.threshold_constant!r}")
        if self.thresholding not in _THRESHOLDING:
            raise ValueError(
                f"thresholding must be one of {_THRESHOLDING}; got {self.thresholding!r}"
            )

    def _fit(self, X: Any) -> StructuredCompletion:
        self._check_params()
        arr = check_matrix(X, allow_nan=True)
        rows, cols = labels_of(X)
        missing = np.isnan(arr)
        self.missing_ = missing
        n, d = arr.shape
        R1 = np.flatnonzero(~missing.any(axis=1))
        C1 = np.flatnonzero(~missing.any(axis=0))
        self.complete_rows_, self.complete_cols_ = R1, C1
        if not missing.any():
            self.completed_ = arr.copy()
            self.rank_ = int(np.linalg.matrix_rank(arr))
            self.threshold_ = float("nan")
            self.mean_ = arr.mean(axis=0) if self.center else np.zeros(d)
            self.scale_ = np.ones(d)
            self.n_unused_observed_ = 0
            return self
        _check_not_all_missing(missing)
        for full, what, names, other, other_names, axis in (
            (R1, "row", rows, "column", cols, 0),
            (C1, "column", cols, "row", rows, 1),
        ):
            if full.size == 0:
                empty = np.flatnonzero(missing.all(axis=axis))
                extra = (
                    f"; {other}s without any observed entry: {show_labels(other_names, empty)}"
                    if empty.size
                    else ""
                )
                raise ValueError(
                    f"StructuredCompletion needs at least one fully observed {what}; every "
                    f"{what} has a missing entry: {what}s "
                    f"{show_labels(names, np.arange(len(names)))}{extra}"
                )
        R2 = np.flatnonzero(missing.any(axis=1))
        C2 = np.flatnonzero(missing.any(axis=0))
        top = arr[R1]
        mean = top.mean(axis=0) if self.center else np.zeros(d)
        sd = top.std(axis=0) if self.scale else np.ones(d)
        sd[~(sd > 1e-12 * np.maximum(np.abs(mean), 1.0))] = 1.0
        S = (arr - mean) / sd
        A22, r, thr = smc_block(
            S[np.ix_(R1, C1)],
            S[np.ix_(R1, C2)],
            S[np.ix_(R2, C1)],
            None if self.rank is None else int(self.rank),
            float(self.threshold_constant),
            self.thresholding,
            n,
            d,
        )
        fill = A22 * sd[C2] + mean[C2]
        out = arr.copy()
        block = out[np.ix_(R2, C2)]
        block_missing = missing[np.ix_(R2, C2)]
        block[block_missing] = fill[block_missing]
        out[np.ix_(R2, C2)] = block
        self.completed_ = out
        self.rank_ = r
        self.threshold_ = thr if self.rank is None else float("nan")
        self.mean_, self.scale_ = mean, sd
        self.n_unused_observed_ = int((~block_missing).sum())
        return self


# --------------------------------------------------------------------------- baseline
class ColumnMeans(MatrixCompleter):
    """Fill every missing entry with the mean of the observed entries of its column.

    The baseline any completion method has to beat. It equals
    ``SoftImpute(shrinkage=1)`` (``lambda = lambda_max`` gives the zero fit of the centred
    matrix) and, on a block pattern whose missing entries form one block,
    ``StructuredCompletion(rank=0)``. In :func:`global_vs_local` it runs vectorised over
    all repetitions.

    Attributes
    ----------
    completed_ : ndarray
    missing_ : ndarray of bool
    mean_ : ndarray
        Column means of the observed entries.
    rank_ : int
        Always 0 (no low-rank part).
    """

    def _fit(self, X: Any) -> ColumnMeans:
        arr = check_matrix(X, allow_nan=True)
        rows, cols = labels_of(X)
        missing = np.isnan(arr)
        _check_columns_observed(missing, cols, "ColumnMeans")
        count = (~missing).sum(axis=0)
        mean = np.where(missing, 0.0, arr).sum(axis=0) / count
        self.missing_ = missing
        self.mean_ = mean
        self.completed_ = np.where(missing, mean[None, :], arr)
        self.rank_ = 0
        return self
