"""Matrix completion of a leaderboard: soft-impute and structured matrix completion.

This module supports Remark 1 and Appendix G (Figures 15-16) of Jin, Syrgkanis, Kakade &
Zhang (2025): missing benchmark scores of the models of one domain (the models fine-tuned
from one base model) are filled in either from the whole leaderboard ("global") or from
the rows of that domain alone ("local"), and the two are compared by the RMSE on the
removed entries.

Methods
-------
:class:`SoftImpute`
    Nuclear-norm regularised completion (Mazumder, Hastie & Tibshirani 2010). It solves
    ``min_Z 1/2 ||P_obs(X - Z)||_F^2 + lambda ||Z||_*`` by iterating
    ``Z <- S_lambda(P_obs(X) + P_miss(Z))`` where ``S_lambda`` soft-thresholds the singular
    values. The paper's "NNR" (Recht 2011) is this estimator.
:class:`StructuredCompletion`
    Structured matrix completion (SMC; Cai, Cai & Zhang 2016, JASA 111:621-633) for
    block-missing patterns. After permuting rows and columns so that the fully observed
    rows come first and the fully observed columns come first,
    ``X = [[A11, A12], [A21, A22]]`` with ``A22`` the block to fill in.

Rules stated in advance (not tuned to the paper's answer)
---------------------------------------------------------
* **Centring and scaling.** Both estimators centre every column by the mean of its
  observed entries (``center=True``) and leave the scale alone (``scale=False``): the
  scores of the six benchmarks share one 0-100 scale and the paper reports RMSE on
  that scale. ``scale=True`` divides every column by the (population) standard deviation
  of its observed entries; a column whose observed entries are constant is not scaled.
  For :class:`StructuredCompletion` the means and standard deviations are computed on the
  fully observed rows only (the rows of ``A11`` and ``A12``), for every column: centring by
  means of one common set of rows keeps an exactly rank-``r`` matrix of rank ``<= r``,
  so exact recovery is not lost.
* **Choice of lambda** (``SoftImpute(shrinkage=None)``). ``lambda`` is expressed relative
  to ``lambda_max``, the largest singular value of the centred (and scaled) matrix with
  missing entries set to zero; ``lambda >= lambda_max`` gives the zero matrix. A random
  ``validation_fraction`` (10%) of the observed entries is held out (``random_state``;
  an entry is returned to the training set if holding it out would empty its column);
  soft-impute is fitted on the remaining entries for every value of ``shrinkage_grid``
  (default: 20 values geometrically spaced from 1 down to 1e-3); the chosen value is the
  largest one whose RMSE on the held-out entries (original units) is within
  ``selection_tolerance`` (1%) of the smallest, and the model is refitted on all observed
  entries with that relative value. (Held-out RMSE curves are flat towards small
  ``lambda`` on leaderboard data; the 1% rule prefers the more regularised, faster
  converging fit among practically equivalent ones.)
* **Algorithm and convergence** of soft-impute. Each step is
  ``Z <- S_lambda(P_obs(X) + P_miss(Y))`` with Nesterov's extrapolation ``Y`` and a
  gradient restart (FISTA; the same convex problem and solution as plain soft-impute,
  in fewer steps). The iterations stop when the estimated squared distance of the fit
  of the rows with missing entries to its limit, ``||dZ_k||^2 / (1 - rho)^2`` with
  ``rho = ||dZ_k|| / ||dZ_{k-1}||``, is at most ``tol * ||Z_k||^2`` (``tol = 1e-8``), or
  after ``max_iter`` steps (with a ``ConvergenceWarning``). The rate factor matters for
  small ``lambda``, where single steps are tiny although the fit is far from its limit.
  The fully observed rows enter the singular value decomposition through their fixed
  Gram matrix and are not iterated. The decomposition of the ``n x d`` working matrix
  comes from its ``d x d`` Gram matrix, so one step costs ``O(n d^2 + d^3)``: the
  method is meant for matrices with few columns (the leaderboard has six).
* **Rank in SMC** (``StructuredCompletion(rank=None)``): the thresholding rule of Cai,
  Cai & Zhang (2016, Algorithm 1) as implemented in the authors' R package
  ``StructureMC``: with ``[A11; A21] = U1 S1 V1^T``, ``[A11, A12] = U2 S2 V2^T``,
  ``B11 = U2^T A11 V1``, ``B12 = U2^T A12`` and ``B21 = A21 V1``, the rank is the largest
  ``s <= min(m1, m2)`` such that ``B11[:s, :s]`` is non-singular and
  ``||B21[:, :s] B11[:s, :s]^{-1}||_2 <= c_T sqrt(n_rows / m1)`` ("row thresholding"; the
  "column thresholding" variant bounds ``||B11[:s, :s]^{-1} B12[:s, :]||_2`` by
  ``c_T sqrt(n_cols / m2)``), with ``c_T = 2`` (the package default), ``m1`` the number of
  fully observed rows and ``m2`` the number of fully observed columns. Then
  ``A22_hat = B21[:, :r] B11[:r, :r]^{-1} B12[:r, :]``; if no ``s`` qualifies, ``r = 0`` and
  ``A22`` is filled with the column means.
* **Masks** (Appendix G). :func:`mask_random` removes every entry independently with
  probability ``p``. :func:`mask_block` keeps ``observed_cols`` fully observed and removes
  the other columns of exactly ``round(p * n_rows)`` rows drawn without replacement, the
  same rows in every other column, so the missing entries form one block
  (``same_rows=False`` draws the rows per column instead).
* **Global versus local** (:func:`global_vs_local`): entries are removed only from the
  rows of the domain (``mask_scope="domain"``; ``"all"`` masks every row); the domain is
  completed once from the whole matrix (global) and once from its own rows (local), and
  the RMSE on the removed entries of the domain is recorded. For soft-impute the
  relative ``shrinkage`` is chosen once per approach by the validation rule above on
  the first draw (repetition 0) and then held fixed for every repetition; the SMC rank
  rule is applied afresh in every repetition (it is closed-form).

Baseline, sweeps and the Appendix G runner
------------------------------------------
* :class:`ColumnMeans` fills every missing entry with its column's observed mean (the
  baseline a completion method has to beat; equal to ``SoftImpute(shrinkage=1)``).
* :func:`completion_sweep` runs :func:`global_vs_local` over values of ``p`` and sets of
  observed columns, one seed stream per setting, so that methods run with the same
  ``random_state`` see the same masks (paired comparisons).
* :func:`compare_approaches` summarises global versus local per group: means and medians,
  the median ratio, the share of repetitions local wins, and a normal-approximation
  interval of the mean paired difference whose sign gives the verdict.
* :func:`run_appendix_g` runs the whole design of the book chapter
  (:class:`AppendixGDesign`): the library defaults, the column-means baseline and the
  authors' setup for Figures 15a, 15b and 16, plus an SMC rank check; the benchmark
  ``benchmarks/bench_completion.py`` times the same call.

Errors and warnings
-------------------
Entirely missing input raises ``ValueError``. Soft-impute raises on an entirely missing
column (nothing identifies its values); a row with no observed entry can only receive
the column means (zero before un-centring), so by default it gets them with a
``UserWarning`` naming the rows (``empty_row="raise"`` makes it an error,
``empty_row="ignore"`` silences it; the Appendix G experiments, where 0.8^6 = 26% of the
domain rows lose every entry, use ``"ignore"``). SMC raises when no row or no column is
fully observed, naming the columns (rows) that have missing entries. Input without
missing entries is returned unchanged (as a float copy).

Deviations from the paper and from the authors' notebook
--------------------------------------------------------
The paper does not state its tuning rules, centring, repetition counts for Figure 16 or
how the block pattern is drawn; the choices above are ours. The authors' public notebook
(``hlzhang109/causal-eval``, ``scripts/matrix_completion.ipynb``) differs in ways worth
knowing when comparing numbers: it uses ``fancyimpute.SoftImpute(max_rank=3)`` with that
package's default ``lambda = lambda_max / 50`` on the uncentred, zero-filled matrix
(here: ``SoftImpute(shrinkage=0.02, max_rank=3, center=False)``, solved to convergence
rather than by 100 randomized-SVD steps); it masks every row of the leaderboard, not
only the domain (here: ``global_vs_local(..., mask_scope="all")``); in its fixed-column
scheme each other column loses its own random rows (here: ``same_rows=False``); and it
calls SMC through the authors' R package ``StructureMC``. SMC's singularity check here is
relative (``sigma_min(B11[:s, :s]) <= 1e-10 sigma_max(B11)``) where ``StructureMC`` uses
``|det| < 1e-8``. SMC ignores observed entries that fall inside the ``A22`` block (rows
and columns that both have some missing entry): they are kept in the output but do not
inform the estimate; their count is ``n_unused_observed_``.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.exceptions import ConvergenceWarning

__all__ = [
    "SoftImpute",
    "StructuredCompletion",
    "mask_random",
    "mask_block",
    "rmse_on_mask",
    "global_vs_local",
    "observed_column_sets",
    "default_shrinkage_grid",
    "ColumnMeans",
    "domain_matrix",
    "completion_sweep",
    "paired_rmse",
    "compare_approaches",
    "plot_rmse_distributions",
    "plot_rmse_vs_p",
    "plot_rmse_by_column_set",
    "AUTHORS_SOFT_IMPUTE",
    "AppendixGDesign",
    "AppendixGResults",
    "run_appendix_g",
    "rmse_by_row_observed",
    "random_mask_diagnostics",
]

_EMPTY_ROW_OPTIONS = ("warn", "raise", "ignore")
_THRESHOLDING = ("row", "column")
_PATTERNS = ("random", "block")
_METHODS = ("auto", "soft_impute", "structured")
_TINY = 1e-300
_SINGULAR_RTOL = 1e-10  # B11[:s, :s] is singular when sigma_min <= this * sigma_max(B11)
_MAX_SHOW = 10  # offending rows/columns listed in an error message


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


_BLAS_CONTROLLER: list = []  # one cached threadpoolctl controller (scanning costs ~5 ms)


def _single_thread_blas() -> contextlib.AbstractContextManager:
    """Limit BLAS/LAPACK to one thread: the many tiny decompositions here are several
    times slower with a multi-threaded OpenBLAS (thread start-up dominates). The loaded
    libraries are scanned once and the controller is reused, so that many short calls
    (e.g. :func:`completion_sweep`) do not pay for a scan each."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return contextlib.nullcontext()
    if not _BLAS_CONTROLLER:
        _BLAS_CONTROLLER.append(ThreadpoolController())
    return _BLAS_CONTROLLER[0].limit(limits=1, user_api="blas")


# --------------------------------------------------------------------------- input checks
def _labels(X: Any) -> tuple[list, list]:
    """Row and column labels used in messages (DataFrame labels or integer positions)."""
    if isinstance(X, pd.DataFrame):
        return list(X.index), list(X.columns)
    arr = np.asarray(X)
    return list(range(arr.shape[0])), list(range(arr.shape[1]))


def _show(labels: Sequence, idx: np.ndarray) -> str:
    """Format the labels at positions ``idx``, at most ``_MAX_SHOW`` of them."""
    idx = np.asarray(idx)
    shown = [labels[i] for i in idx[:_MAX_SHOW]]
    more = f" and {len(idx) - _MAX_SHOW} more" if len(idx) > _MAX_SHOW else ""
    return f"{shown}{more}"


def _as_matrix(X: Any, name: str = "X") -> np.ndarray:
    """Return ``X`` as a 2-D float array (NaN allowed, +-inf not)."""
    if isinstance(X, pd.DataFrame):
        bad = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
        if bad:
            raise TypeError(f"{name} has non-numeric columns {bad}")
        arr = X.to_numpy(dtype=float, na_value=np.nan)
    else:
        try:
            arr = np.asarray(X, dtype=float)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name} must be a numeric 2-D array or DataFrame: {err}") from err
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D; got {arr.ndim} dimension(s), shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape})")
    if np.isinf(arr).any():
        r, c = np.argwhere(np.isinf(arr))[0]
        rows, cols = _labels(X)
        raise ValueError(f"{name} has infinite entries (first at row {rows[r]!r}, "
                         f"column {cols[c]!r}); only NaN marks a missing entry")
    return arr


def _wrap(X_in: Any, arr: np.ndarray) -> Any:
    """Return ``arr`` as a DataFrame shaped like ``X_in`` when the input was one."""
    if isinstance(X_in, pd.DataFrame):
        return pd.DataFrame(arr, index=X_in.index, columns=X_in.columns)
    return arr


def _check_not_all_missing(missing: np.ndarray) -> None:
    if missing.all():
        raise ValueError(f"every entry of X is missing (shape {missing.shape}); "
                         "nothing to complete from")


# --------------------------------------------------------------------------- soft-impute core
def _svt_weights(G: np.ndarray, lam: np.ndarray, max_rank: int | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Singular value soft-thresholding through the Gram matrix.

    For a working matrix ``M`` with ``G = M^T M`` (batched: ``(R, d, d)``),
    ``S_lambda(M) = M @ W`` with ``W = V diag(max(s - lambda, 0) / s) V^T``.
    Returns ``W`` and the thresholded singular values (ascending order).
    """
    evals, V = np.linalg.eigh(G)
    s = np.sqrt(np.clip(evals, 0.0, None))
    shrunk = np.clip(s - lam[:, None], 0.0, None)
    if max_rank is not None and max_rank < s.shape[1]:
        shrunk[:, : s.shape[1] - max_rank] = 0.0
    w = np.divide(shrunk, s, out=np.zeros_like(s), where=s > 0)
    W = (V * w[:, None, :]) @ np.swapaxes(V, 1, 2)
    return W, shrunk


def _soft_impute_batch(Xc: np.ndarray, observed: np.ndarray, G_fixed: np.ndarray,
                       lam: np.ndarray, Z0: np.ndarray, max_rank: int | None,
                       max_iter: int, tol: float, accelerate: bool = True
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Soft-impute for a batch of ``R`` problems sharing a row count.

    Each step is ``Z <- S_lambda(P_obs(X) + P_miss(Y))``; with ``accelerate`` the point
    ``Y`` is Nesterov's extrapolation ``Z_k + (t_{k-1} - 1) / t_k (Z_k - Z_{k-1})`` (FISTA,
    Beck & Teboulle 2009, with the gradient restart of O'Donoghue & Candes 2015), which
    solves the same convex problem in fewer steps; otherwise ``Y = Z_k`` (the plain
    soft-impute of Mazumder et al. 2010).

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
    R = lam.shape[0]
    Z = np.array(Z0, dtype=float, copy=True)
    W_out = np.zeros((R, Xc.shape[2], Xc.shape[2]))
    n_iter = np.full(R, max_iter)
    converged = np.zeros(R, dtype=bool)
    idx = np.arange(R)  # problems in the working set
    done = np.zeros(R, dtype=bool)  # finished, within the working set
    Xa = np.where(observed, Xc, 0.0)
    Ua = (~np.asarray(observed, dtype=bool)).astype(float)  # 1 where missing
    Ga, La = G_fixed, lam
    Za = Z.copy()
    prev_step = np.zeros_like(Za)  # Z_k - Z_{k-1}
    Y, M, step = np.empty_like(Za), np.empty_like(Za), np.empty_like(Za)
    den = np.einsum("rij,rij->r", Za, Za)  # ||Z_k||^2
    num_prev = np.full(R, np.inf)  # ||Z_k - Z_{k-1}||^2
    t = np.ones(R)

    def take(a: np.ndarray, keep: np.ndarray) -> np.ndarray:
        return a if a.shape[0] == 1 else a[keep]

    for it in range(1, max_iter + 1):
        if accelerate:
            t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            beta = (t - 1.0) / t_next
            np.multiply(prev_step, beta[:, None, None], out=Y)
            Y += Za
        else:
            Y[...] = Za
        np.multiply(Ua, Y, out=M)  # observed entries of X, current fit elsewhere
        M += Xa
        G = Ga + np.swapaxes(M, 1, 2) @ M
        W, _ = _svt_weights(G, La, max_rank)
        Znew = M @ W
        np.subtract(Znew, Za, out=step)
        num = np.einsum("rij,rij->r", step, step)
        # distance to the limit ~ ||step|| / (1 - rho), rho = ratio of successive steps
        rho = np.sqrt(num / np.maximum(num_prev, _TINY))
        ok = (rho < 1.0) & (num <= tol * np.maximum(den, _TINY)
                            * (1.0 - np.minimum(rho, 1.0)) ** 2)
        ok = (ok & (it >= 3)) | (num == 0.0)  # the first step leaves the start: no rate yet
        new = (ok | (it == max_iter)) & ~done
        if new.any():
            gi = idx[new]
            Z[gi] = Znew[new]
            W_out[gi] = W[new]
            n_iter[gi] = it
            converged[gi] = ok[new]
            done |= new
            if done.all():
                break
        if accelerate:
            # gradient restart: <Y - Z_new, Z_new - Z_k> > 0, with Y - Z_k = beta * prev_step
            restart = beta * np.einsum("rij,rij->r", prev_step, step) - num > 0
            t = np.where(restart, 1.0, t_next)
        den = np.einsum("rij,rij->r", Znew, Znew)
        num_prev = num
        Za, prev_step, step = Znew, step, prev_step
        if done.mean() >= 0.25:  # compact the working set
            keep = ~done
            idx, Xa, Ua, Ga, La = (idx[keep], take(Xa, keep), take(Ua, keep),
                                   take(Ga, keep), La[keep])
            Za, prev_step, den, t, done = (Za[keep], prev_step[keep], den[keep], t[keep],
                                           done[keep])
            num_prev = num_prev[keep]
            Y, M, step = np.empty_like(Za), np.empty_like(Za), np.empty_like(Za)
    return Z, W_out, n_iter, converged


def _standardise(X_rows: np.ndarray, observed: np.ndarray, X_fixed: np.ndarray | None,
                 center: bool, scale: bool
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


def _lambda_max(Xc: np.ndarray, G_fixed: np.ndarray) -> np.ndarray:
    """Largest singular value of each zero-filled standardised matrix."""
    G = G_fixed + np.swapaxes(Xc, 1, 2) @ Xc
    return np.sqrt(np.clip(np.linalg.eigvalsh(G)[:, -1], 0.0, None))


# --------------------------------------------------------------------------- SoftImpute
class SoftImpute(TransformerMixin, BaseEstimator):
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
        Stop when the estimated squared distance of the fit of the incomplete rows to its
        limit, ``||Z_k - Z_{k-1}||^2 / (1 - rho)^2`` with ``rho`` the ratio of successive
        step lengths, is at most ``tol * ||Z_k||^2`` (not before the third iteration).
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

    def __init__(self, shrinkage: float | None = None, max_rank: int | None = None,
                 max_iter: int = 2000, tol: float = 1e-8, center: bool = True,
                 scale: bool = False, shrinkage_grid: Sequence[float] | None = None,
                 validation_fraction: float = 0.1, selection_tolerance: float = 0.01,
                 empty_row: str = "warn", random_state: Any = 0) -> None:
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

    # ---------------------------------------------------------------- checks
    def _check_params(self) -> None:
        if self.shrinkage is not None and not (np.isfinite(self.shrinkage)
                                               and self.shrinkage >= 0):
            raise ValueError(f"shrinkage must be None or a finite value >= 0; "
                             f"got {self.shrinkage!r}")
        if self.max_rank is not None and int(self.max_rank) < 1:
            raise ValueError(f"max_rank must be None or >= 1; got {self.max_rank!r}")
        if int(self.max_iter) < 1:
            raise ValueError(f"max_iter must be >= 1; got {self.max_iter!r}")
        if not self.tol > 0:
            raise ValueError(f"tol must be > 0; got {self.tol!r}")
        if not 0 < self.validation_fraction < 1:
            raise ValueError(f"validation_fraction must be in (0, 1); "
                             f"got {self.validation_fraction!r}")
        if not (np.isfinite(self.selection_tolerance) and self.selection_tolerance >= 0):
            raise ValueError(f"selection_tolerance must be a finite value >= 0; "
                             f"got {self.selection_tolerance!r}")
        if self.empty_row not in _EMPTY_ROW_OPTIONS:
            raise ValueError(f"empty_row must be one of {_EMPTY_ROW_OPTIONS}; "
                             f"got {self.empty_row!r}")

    def _grid(self) -> np.ndarray:
        grid = (default_shrinkage_grid() if self.shrinkage_grid is None
                else np.asarray(self.shrinkage_grid, dtype=float).ravel())
        if grid.size == 0 or not np.all(np.isfinite(grid)) or (grid < 0).any():
            raise ValueError(f"shrinkage_grid must hold finite values >= 0; got {grid}")
        return np.sort(grid)[::-1]

    def _check_mask(self, missing: np.ndarray, rows: list, cols: list) -> np.ndarray:
        _check_not_all_missing(missing)
        empty_cols = np.flatnonzero(missing.all(axis=0))
        if empty_cols.size:
            raise ValueError(f"SoftImpute cannot fill columns without any observed entry: "
                             f"{_show(cols, empty_cols)}")
        empty_rows = np.flatnonzero(missing.all(axis=1))
        if empty_rows.size and self.empty_row != "ignore":
            msg = (f"rows without any observed entry receive only the column means: "
                   f"{_show(rows, empty_rows)}")
            if self.empty_row == "raise":
                raise ValueError(msg)
            warnings.warn(msg, UserWarning, stacklevel=4)
        return empty_rows

    # ---------------------------------------------------------------- fitting
    def _fit_arrays(self, X: np.ndarray, missing: np.ndarray, lam_rel: np.ndarray
                    ) -> dict[str, Any]:
        """Fit every relative shrinkage in ``lam_rel`` on the observed entries of ``X``."""
        inc = missing.any(axis=1)
        observed = ~missing[inc][None]
        Xc, G, mean, sd = _standardise(X[inc], observed, X[~inc], self.center, self.scale)
        lam_max = _lambda_max(Xc, G)[0]
        lam = np.asarray(lam_rel, dtype=float) * lam_max
        Z0 = np.zeros((lam.size,) + Xc.shape[1:])
        max_rank = None if self.max_rank is None else int(self.max_rank)
        Z, W, n_iter, conv = _soft_impute_batch(Xc, observed, G, lam, Z0, max_rank,
                                                int(self.max_iter), float(self.tol))
        return {"inc": inc, "Z": Z, "W": W, "mean": mean[0], "sd": sd[0], "lam": lam,
                "lam_max": lam_max, "n_iter": n_iter, "converged": conv}

    def _validate(self, X: np.ndarray, missing: np.ndarray) -> tuple[float, np.ndarray,
                                                                       np.ndarray]:
        """Choose the relative shrinkage by held-out RMSE (module docstring)."""
        grid = self._grid()
        rng = np.random.default_rng(self.random_state)
        obs_idx = np.flatnonzero(~missing.ravel())
        n_val = int(round(self.validation_fraction * obs_idx.size))
        if n_val < 1 or obs_idx.size - n_val < 1:
            raise ValueError(f"too few observed entries ({obs_idx.size}) to hold out "
                             f"{self.validation_fraction:.0%} for choosing the shrinkage; "
                             "pass shrinkage explicitly")
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

    def fit(self, X: Any, y: Any = None) -> SoftImpute:
        """Complete ``X`` (NaN = missing) and store the result in ``completed_``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_cols)
        y : ignored

        Returns
        -------
        SoftImpute
            The fitted estimator.
        """
        with _single_thread_blas():
            return self._fit(X)

    def _fit(self, X: Any) -> SoftImpute:
        self._check_params()
        arr = _as_matrix(X)
        rows, cols = _labels(X)
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
        _, shrunk = _svt_weights(self._final_gram(arr, missing, fit), fit["lam"][:1],
                                 max_rank)
        self.completed_ = out
        self.shrinkage_ = shrink
        self.lambda_ = float(fit["lam"][0])
        self.lambda_max_ = float(fit["lam_max"])
        self.rank_ = int((shrunk[0] > 0).sum())
        self.mean_, self.scale_ = fit["mean"], fit["sd"]
        self.n_iter_ = int(fit["n_iter"][0])
        self.converged_ = bool(fit["converged"][0])
        if not self.converged_:
            warnings.warn(f"soft-impute did not converge in {self.max_iter} iterations "
                          f"(tol={self.tol}); increase max_iter", ConvergenceWarning,
                          stacklevel=3)
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


# --------------------------------------------------------------------------- SMC
def _smc_rule(V1: np.ndarray, B1: np.ndarray, A21: np.ndarray, m1: int, rank: int | None,
              c_T: float, thresholding: str, n_rows: int, n_cols: int
              ) -> tuple[np.ndarray, int, float]:
    """Rank rule and estimate of Cai, Cai & Zhang (2016) from the rotated blocks.

    ``V1`` holds the right singular vectors of ``[A11; A21]`` (columns, by decreasing
    singular value) and ``B1 = U2^T [A11, A12] = S2 V2^T`` (rows by decreasing singular
    value; the first ``m2`` columns belong to ``A11``).
    """
    m2 = V1.shape[0]
    B11, B12, B21 = B1[:, :m2] @ V1, B1[:, m2:], A21 @ V1
    k = min(m1, m2)
    thr = c_T * np.sqrt(n_rows / m1) if thresholding == "row" else c_T * np.sqrt(n_cols / m2)
    smax = np.linalg.norm(B11, 2) if B11.size else 0.0
    r = 0
    candidates = [min(int(rank), k)] if rank is not None else range(k, 0, -1)
    for s in candidates:
        if s == 0:
            break
        sub = B11[:s, :s]
        sv = np.linalg.svd(sub, compute_uv=False)
        if sv[-1] <= _SINGULAR_RTOL * smax:
            if rank is not None:
                raise ValueError(f"rank={rank}: B11[:{s}, :{s}] is singular (A11 has "
                                 f"numerical rank < {s}); choose a smaller rank or rank=None")
            continue
        if rank is not None:
            r = s
            break
        if thresholding == "row":
            T = np.linalg.solve(sub.T, B21[:, :s].T).T  # B21[:, :s] sub^{-1}
        else:
            T = np.linalg.solve(sub, B12[:s, :])  # sub^{-1} B12[:s, :]
        if np.linalg.norm(T, 2) <= thr:
            r = s
            break
    if r == 0:
        return np.zeros((A21.shape[0], B12.shape[1])), 0, float(thr)
    A22 = B21[:, :r] @ np.linalg.solve(B11[:r, :r], B12[:r, :])
    return A22, r, float(thr)


def _smc_block(A11: np.ndarray, A12: np.ndarray, A21: np.ndarray, rank: int | None,
               c_T: float, thresholding: str, n_rows: int, n_cols: int
               ) -> tuple[np.ndarray, int, float]:
    """Cai, Cai & Zhang (2016) estimate of ``A22`` from ``A11``, ``A12``, ``A21``."""
    # Only the right singular vectors of [A11; A21] and S2 V2^T = U2^T [A11, A12] are
    # needed; the R factor of a QR decomposition gives them without forming U.
    R1 = np.linalg.qr(np.vstack([A11, A21]), mode="r")
    V1 = np.linalg.svd(R1)[2].T
    R2 = np.linalg.qr(np.hstack([A11, A12]), mode="r")
    _, s2, V2t = np.linalg.svd(R2, full_matrices=False)
    return _smc_rule(V1, s2[:, None] * V2t, A21, A11.shape[0], rank, c_T, thresholding,
                     n_rows, n_cols)


def _eig_desc(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (clipped at 0) and eigenvectors of a symmetric matrix, decreasing."""
    e, V = np.linalg.eigh(G)
    return np.clip(e[::-1], 0.0, None), V[:, ::-1]


class StructuredCompletion(TransformerMixin, BaseEstimator):
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

    def __init__(self, rank: int | None = None, threshold_constant: float = 2.0,
                 thresholding: str = "row", center: bool = True, scale: bool = False
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
            raise ValueError(f"threshold_constant must be > 0; "
                             f"got {self.threshold_constant!r}")
        if self.thresholding not in _THRESHOLDING:
            raise ValueError(f"thresholding must be one of {_THRESHOLDING}; "
                             f"got {self.thresholding!r}")

    def fit(self, X: Any, y: Any = None) -> StructuredCompletion:
        """Complete ``X`` (NaN = missing) and store the result in ``completed_``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_cols)
        y : ignored

        Returns
        -------
        StructuredCompletion
            The fitted estimator.
        """
        with _single_thread_blas():
            return self._fit(X)

    def _fit(self, X: Any) -> StructuredCompletion:
        self._check_params()
        arr = _as_matrix(X)
        rows, cols = _labels(X)
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
        if R1.size == 0:
            empty = np.flatnonzero(missing.all(axis=0))
            extra = (f"; columns without any observed entry: {_show(cols, empty)}"
                     if empty.size else "")
            raise ValueError("StructuredCompletion needs at least one fully observed row; "
                             f"every row has a missing entry: rows {_show(rows, np.arange(n))}"
                             f"{extra}")
        if C1.size == 0:
            empty = np.flatnonzero(missing.all(axis=1))
            extra = (f"; rows without any observed entry: {_show(rows, empty)}"
                     if empty.size else "")
            raise ValueError("StructuredCompletion needs at least one fully observed "
                             "column; every column has a missing entry: columns "
                             f"{_show(cols, np.arange(d))}{extra}")
        R2 = np.flatnonzero(missing.any(axis=1))
        C2 = np.flatnonzero(missing.any(axis=0))
        top = arr[R1]
        mean = top.mean(axis=0) if self.center else np.zeros(d)
        sd = top.std(axis=0) if self.scale else np.ones(d)
        sd[~(sd > 1e-12 * np.maximum(np.abs(mean), 1.0))] = 1.0
        S = (arr - mean) / sd
        A22, r, thr = _smc_block(S[np.ix_(R1, C1)], S[np.ix_(R1, C2)], S[np.ix_(R2, C1)],
                                 None if self.rank is None else int(self.rank),
                                 float(self.threshold_constant), self.thresholding, n, d)
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


# --------------------------------------------------------------------------- masks, RMSE
def _check_p(p: float) -> float:
    if not (np.isfinite(p) and 0 <= p < 1):
        raise ValueError(f"p must be in [0, 1); got {p!r}")
    return float(p)


def mask_random(shape: tuple[int, int], p: float, rng: Any = None) -> np.ndarray:
    """Missing-at-random mask: every entry is removed independently with probability ``p``.

    Parameters
    ----------
    shape : tuple of int
        Shape of the matrix.
    p : float
        Probability that an entry is missing, in [0, 1).
    rng : int, numpy.random.Generator or None
        Random state (``numpy.random.default_rng(rng)``).

    Returns
    -------
    numpy.ndarray of bool
        ``True`` where the entry is removed.
    """
    p = _check_p(p)
    return np.random.default_rng(rng).random(tuple(shape)) < p


def mask_block(n_rows: int, n_cols: int, observed_cols: Sequence[int], p: float,
               rng: Any = None, same_rows: bool = True) -> np.ndarray:
    """Block-missing mask: ``observed_cols`` stay observed; in every other column
    ``round(p * n_rows)`` random rows (drawn without replacement) are removed.

    Parameters
    ----------
    n_rows, n_cols : int
        Shape of the matrix.
    observed_cols : sequence of int
        Positions of the fully observed columns (at least one, not all).
    p : float
        Fraction of rows removed in each of the other columns, in [0, 1).
    rng : int, numpy.random.Generator or None
        Random state (``numpy.random.default_rng(rng)``).
    same_rows : bool
        ``True`` (default): the same rows in every other column, so the missing entries
        form one block (the design SMC is made for). ``False``: each other column draws its
        own rows (the scheme of the authors' notebook), so the missing part is not one block.

    Returns
    -------
    numpy.ndarray of bool
        ``True`` where the entry is removed.
    """
    p = _check_p(p)
    obs = np.unique(np.asarray(observed_cols, dtype=int))
    if obs.size == 0 or obs.size >= n_cols or obs.min() < 0 or obs.max() >= n_cols:
        raise ValueError(f"observed_cols must name between 1 and {n_cols - 1} of the "
                         f"columns 0..{n_cols - 1}; got {list(observed_cols)}")
    gen = np.random.default_rng(rng)
    k = int(round(p * n_rows))
    mask = np.zeros((n_rows, n_cols), dtype=bool)
    other = np.setdiff1d(np.arange(n_cols), obs)
    if same_rows:
        mask[np.ix_(gen.choice(n_rows, size=k, replace=False), other)] = True
    else:
        for j in other:
            mask[gen.choice(n_rows, size=k, replace=False), j] = True
    return mask


def rmse_on_mask(X_true: Any, X_hat: Any, mask: Any) -> float:
    """Root mean squared error of ``X_hat`` against ``X_true`` on the entries of ``mask``.

    Parameters
    ----------
    X_true, X_hat : array-like of the same shape
    mask : array-like of bool, same shape
        Entries to score (typically the removed ones).

    Returns
    -------
    float
    """
    a, b = np.asarray(X_true, dtype=float), np.asarray(X_hat, dtype=float)
    m = np.asarray(mask, dtype=bool)
    if not (a.shape == b.shape == m.shape):
        raise ValueError(f"shapes differ: X_true {a.shape}, X_hat {b.shape}, mask {m.shape}")
    if not m.any():
        raise ValueError("mask selects no entry")
    diff = a[m] - b[m]
    if not np.isfinite(diff).all():
        raise ValueError(f"{int((~np.isfinite(diff)).sum())} masked entries of X_true or "
                         "X_hat are not finite")
    return float(np.sqrt(np.mean(diff ** 2)))


def observed_column_sets(n_cols: int, k: int) -> list[tuple[int, ...]]:
    """All ``k``-subsets of ``range(n_cols)`` in lexicographic order (Figure 16: 6 choose 3)."""
    return list(combinations(range(n_cols), k))


# --------------------------------------------------------------------------- experiment
_SCOPES = ("domain", "all")
_CHUNK_ENTRIES = 3_000_000  # entries per soft-impute batch (memory bound)


def _rows_index(local_rows: Any, n: int) -> np.ndarray:
    """Positions of the domain rows from a boolean mask or integer positions."""
    lr = np.asarray(local_rows)
    if lr.dtype == bool:
        if lr.shape != (n,):
            raise ValueError(f"boolean local_rows must have length {n}; got shape {lr.shape}")
        idx = np.flatnonzero(lr)
    else:
        idx = np.unique(lr.astype(int))
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(f"local_rows must be positions in 0..{n - 1}")
    if idx.size < 2 or idx.size >= n:
        raise ValueError(f"local_rows must select at least 2 and fewer than all {n} rows; "
                         f"got {idx.size}")
    return idx


def _cols_index(observed_cols: Any, columns: list) -> np.ndarray:
    """Positions of ``observed_cols`` given as labels (DataFrame) or positions."""
    out = []
    for c in observed_cols:
        if c in columns:
            out.append(columns.index(c))
        elif isinstance(c, (int, np.integer)) and 0 <= int(c) < len(columns):
            out.append(int(c))
        else:
            raise ValueError(f"observed column {c!r} is not a column of X_global "
                             f"({columns})")
    return np.array(out, dtype=int)


class _Design:
    """One approach of the experiment: rows that carry masks, fixed complete rows, and
    the positions (within the masked rows) of the domain rows that are scored."""

    def __init__(self, X_rows: np.ndarray, masks: np.ndarray, X_fixed: np.ndarray | None,
                 scored: np.ndarray, label: str) -> None:
        self.X_rows, self.masks, self.X_fixed = X_rows, masks, X_fixed
        self.scored, self.label = scored, label

    def matrix(self, r: int) -> np.ndarray:
        """The masked matrix of repetition ``r`` (masked rows first, then fixed rows)."""
        Xm = self.X_rows.copy()
        Xm[self.masks[r]] = np.nan
        return Xm if self.X_fixed is None else np.vstack([Xm, self.X_fixed])

    def rmse(self, pred: np.ndarray, r: np.ndarray | slice) -> np.ndarray:
        """RMSE on the scored masked entries; ``pred`` is (R, n_scored, d) for reps ``r``."""
        m = self.masks[r][:, self.scored]
        err = np.where(m, pred - self.X_rows[self.scored][None], 0.0)
        return np.sqrt((err ** 2).sum(axis=(1, 2)) / m.sum(axis=(1, 2)))


def _soft_impute_runs(design: _Design, est: SoftImpute) -> tuple[np.ndarray, float,
                                                                  np.ndarray]:
    """RMSE of soft-impute on every repetition (batched; fixed rows via their Gram)."""
    R, n, d = design.masks.shape
    empty = design.masks.all(axis=1)
    if empty.any():
        r, j = np.argwhere(empty)[0]
        raise ValueError(f"repetition {r}: column {j} is entirely masked in the "
                         f"{design.label} matrix, which soft-impute cannot fill "
                         "(use a smaller p)")
    shrink = est.shrinkage
    if shrink is None:  # the validation rule on the first draw, then held fixed
        shrink = clone(est).set_params(empty_row="ignore").fit(design.matrix(0)).shrinkage_
    max_rank = None if est.max_rank is None else int(est.max_rank)
    rmse, rank = np.empty(R), np.empty(R, dtype=int)
    chunk = max(1, min(250, _CHUNK_ENTRIES // (n * d)))
    for start in range(0, R, chunk):
        sl = slice(start, min(start + chunk, R))
        observed = ~design.masks[sl]
        Xc, G, mean, sd = _standardise(design.X_rows, observed, design.X_fixed,
                                       est.center, est.scale)
        lam = shrink * _lambda_max(Xc, G)
        Z, _, _, conv = _soft_impute_batch(Xc, observed, G, lam, np.zeros_like(Xc),
                                           max_rank, int(est.max_iter), float(est.tol))
        if not conv.all():
            warnings.warn(f"soft-impute did not converge in {est.max_iter} iterations in "
                          f"{int((~conv).sum())} repetitions", ConvergenceWarning,
                          stacklevel=4)
        pred = Z[:, design.scored] * sd[:, None, :] + mean[:, None, :]
        rmse[sl] = design.rmse(pred, sl)
        M = np.where(observed, Xc, Z)
        _, shrunk = _svt_weights(G + np.swapaxes(M, 1, 2) @ M, lam, max_rank)
        rank[sl] = (shrunk > 0).sum(axis=1)
    return rmse, float(shrink), rank


def _smc_runs(design: _Design, est: StructuredCompletion) -> tuple[np.ndarray, np.ndarray]:
    """RMSE of SMC on every repetition (fast path).

    The same estimator as :class:`StructuredCompletion`, with the singular vectors taken
    from Gram matrices so that the fixed complete rows enter through precomputed sums.
    """
    est._check_params()
    X_rows, d = design.X_rows, design.X_rows.shape[1]
    X_out = design.X_fixed if design.X_fixed is not None else X_rows[:0]
    n_out = X_out.shape[0]
    out_mean = X_out.mean(axis=0) if n_out else np.zeros(d)
    C_out = (X_out - out_mean).T @ (X_out - out_mean)
    n_rows = n_out + X_rows.shape[0]
    rank = None if est.rank is None else int(est.rank)
    scored = np.zeros(X_rows.shape[0], dtype=bool)
    scored[design.scored] = True
    R = design.masks.shape[0]
    rmse, ranks = np.empty(R), np.empty(R, dtype=int)
    for r in range(R):
        miss = design.masks[r]
        inc = miss.any(axis=1)
        c2 = miss.any(axis=0)
        C1, C2 = np.flatnonzero(~c2), np.flatnonzero(c2)
        top = X_rows[~inc]
        m1 = n_out + top.shape[0]
        if m1 == 0 or C1.size == 0:
            raise ValueError(f"repetition {r}: the {design.label} matrix has no fully "
                             f"observed {'row' if m1 == 0 else 'column'}; structured "
                             "completion needs both (use a smaller p)")
        mu = (n_out * out_mean + top.sum(axis=0)) / m1 if est.center else np.zeros(d)
        shift = out_mean - mu
        Gt = C_out + n_out * np.outer(shift, shift) + (top - mu).T @ (top - mu)
        if est.scale:
            sd = np.sqrt(np.diag(Gt) / m1)
            sd[~(sd > 1e-12 * np.maximum(np.abs(mu), 1.0))] = 1.0
        else:
            sd = np.ones(d)
        Gt = Gt / np.outer(sd, sd)
        A21 = (X_rows[inc][:, C1] - mu[C1]) / sd[C1]
        _, V1 = _eig_desc(Gt[np.ix_(C1, C1)] + A21.T @ A21)
        perm = np.concatenate([C1, C2])
        e2, V2 = _eig_desc(Gt[np.ix_(perm, perm)])
        B1 = (np.sqrt(e2)[:, None] * V2.T)[: min(m1, d)]
        A22, ranks[r], _ = _smc_rule(V1, B1, A21, m1, rank, float(est.threshold_constant),
                                     est.thresholding, n_rows, d)
        pred = A22 * sd[C2] + mu[C2]
        keep = scored[inc]
        m = miss[inc][keep][:, C2]
        err = (pred[keep] - X_rows[inc][keep][:, C2])[m]
        rmse[r] = np.sqrt(np.mean(err ** 2))
    return rmse, ranks


def _estimator_runs(design: _Design, est: Any) -> tuple[np.ndarray, np.ndarray]:
    """RMSE of any ``fit_transform`` estimator on every repetition (one fit per draw)."""
    R = design.masks.shape[0]
    rmse, rank = np.empty(R), np.full(R, -1)
    for r in range(R):
        model = clone(est)
        filled = np.asarray(model.fit_transform(design.matrix(r)), dtype=float)
        rmse[r] = design.rmse(filled[design.scored][None], slice(r, r + 1))[0]
        rank[r] = getattr(model, "rank_", -1)
    return rmse, rank


def _resolve_method(method: Any, pattern: str, params: dict) -> tuple[str, Any]:
    if isinstance(method, str):
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS} or an estimator with "
                             f"fit_transform; got {method!r}")
        name = method
        if name == "auto":
            name = "soft_impute" if pattern == "random" else "structured"
        est = (SoftImpute(**params) if name == "soft_impute"
               else StructuredCompletion(**params))
        return name, est
    if not hasattr(method, "fit_transform"):
        raise TypeError(f"method must be a name or an estimator with fit_transform; "
                        f"got {type(method).__name__}")
    if params:
        method = clone(method).set_params(**params)
    return type(method).__name__, method


def _approach_frame(design: _Design, est: Any) -> pd.DataFrame:
    """RMSE, rank and shrinkage of one approach over every repetition."""
    shrink = float("nan")
    if isinstance(est, SoftImpute):
        rmse, shrink, rank = _soft_impute_runs(design, est)
    elif isinstance(est, StructuredCompletion):
        rmse, rank = _smc_runs(design, est)
    elif isinstance(est, ColumnMeans):
        rmse, rank = _column_means_runs(design)
    else:
        rmse, rank = _estimator_runs(design, est)
    return pd.DataFrame({"rmse": rmse, "rank": rank, "shrinkage": shrink})


def global_vs_local(X_global: Any, local_rows: Any, pattern: str = "random", p: float = 0.8,
                    n_reps: int = 1000, method: Any = "auto", random_state: Any = 0,
                    observed_cols: Sequence[Any] | None = None,
                    method_params: dict | None = None, mask_scope: str = "domain",
                    same_rows: bool = True) -> pd.DataFrame:
    """Compare global and local completion of one domain (Appendix G, Figures 15-16).

    In every repetition entries are removed (``pattern``); the domain rows are then
    completed once from the whole matrix ("global") and once from the domain rows alone
    ("local"), and the RMSE on the removed entries of the domain rows is recorded.

    Parameters
    ----------
    X_global : array-like or DataFrame of shape (n_rows, n_cols)
        The fully observed matrix (the ground truth), e.g. the six leaderboard scores.
    local_rows : array-like of bool (length n_rows) or of int
        The rows of the domain.
    pattern : {"random", "block"}
        :func:`mask_random` (each entry removed with probability ``p``) or
        :func:`mask_block` (``observed_cols`` kept; in the other columns a fraction ``p``
        of the rows removed).
    p : float
        Missing probability (random) or fraction of rows removed per column (block).
    n_reps : int
        Number of repetitions (independent masks).
    method : {"auto", "soft_impute", "structured"} or estimator
        ``"auto"``: soft-impute for the random pattern, SMC for the block pattern (as in
        the paper). An estimator with ``fit_transform`` is cloned and fitted per draw.
    random_state : int, numpy.random.Generator or None
        Seeds the masks (and the held-out draw of the shrinkage rule).
    observed_cols : sequence of labels or positions, optional
        Fully observed columns of the block pattern (required for ``pattern="block"``).
    method_params : dict, optional
        Parameters of :class:`SoftImpute` / :class:`StructuredCompletion` (or set on the
        estimator). With ``shrinkage`` given, no validation is run.
    mask_scope : {"domain", "all"}
        ``"domain"`` (default): entries are removed from the domain rows only, and the
        rest of the matrix is fully observed. ``"all"``: every row of the matrix is
        masked by the same scheme (as in the authors' notebook); the score still uses the
        domain rows only. ``"all"`` makes the global soft-impute about ``n_rows /
        n_domain`` times slower.
    same_rows : bool
        Block pattern only: one set of rows for all other columns (a single block; default)
        or an independent set per column (see :func:`mask_block`).

    Returns
    -------
    pandas.DataFrame
        One row per repetition and approach: ``rep``, ``approach`` (``"global"`` or
        ``"local"``), ``rmse``, ``n_missing`` (removed entries of the domain),
        ``rank`` (rank of the fit; -1 if unknown), ``shrinkage`` (relative lambda used by
        soft-impute; NaN otherwise), ``pattern``, ``p``, ``method``, ``observed_cols``
        (comma-separated labels; "" for random), ``mask_scope``.

    Notes
    -----
    Soft-impute's relative shrinkage is chosen per approach by the validation rule of
    :class:`SoftImpute` on the draw of repetition 0 and then held fixed; all repetitions
    are fitted together (batched soft-impute; fully observed rows enter only through their
    Gram matrix). SMC uses the same estimator as :class:`StructuredCompletion` with its
    singular vectors computed from Gram matrices (identical up to rounding). Rows whose
    every entry is removed receive the column means, without a warning.
    """
    if pattern not in _PATTERNS:
        raise ValueError(f"pattern must be one of {_PATTERNS}; got {pattern!r}")
    if mask_scope not in _SCOPES:
        raise ValueError(f"mask_scope must be one of {_SCOPES}; got {mask_scope!r}")
    X = _as_matrix(X_global, "X_global")
    rows, cols = _labels(X_global)
    if np.isnan(X).any():
        bad = np.flatnonzero(np.isnan(X).any(axis=1))
        raise ValueError(f"X_global must be fully observed (it is the ground truth); "
                         f"rows with NaN: {_show(rows, bad)}")
    if int(n_reps) < 1:
        raise ValueError(f"n_reps must be >= 1; got {n_reps!r}")
    n, d = X.shape
    dom = _rows_index(local_rows, n)
    n_masked = n if mask_scope == "all" else dom.size
    rng = np.random.default_rng(random_state)
    if pattern == "block":
        if observed_cols is None:
            raise ValueError("pattern='block' needs observed_cols")
        obs_idx = _cols_index(observed_cols, cols)
        masks = np.stack([mask_block(n_masked, d, obs_idx, p, rng, same_rows)
                          for _ in range(n_reps)])
        obs_label = ",".join(str(cols[j]) for j in obs_idx)
    else:
        masks = np.stack([mask_random((n_masked, d), p, rng) for _ in range(n_reps)])
        obs_label = ""
    dom_masks = masks[:, dom] if mask_scope == "all" else masks
    n_missing = dom_masks.sum(axis=(1, 2))
    if (n_missing == 0).any():
        raise ValueError(f"p={p} removes no entry of the {dom.size} domain rows in some "
                         "repetition; increase p")
    params = dict(method_params or {})
    name, est = _resolve_method(method, pattern, params)
    if isinstance(est, SoftImpute) and "random_state" not in params:
        seed = random_state if not isinstance(random_state, np.random.Generator) else 0
        est = est.set_params(random_state=seed)
    local = _Design(X[dom], dom_masks, None, np.arange(dom.size), "local")
    if mask_scope == "all":
        glob = _Design(X, masks, None, dom, "global")
    else:
        glob = _Design(X[dom], masks, np.delete(X, dom, axis=0), np.arange(dom.size),
                       "global")
    with _single_thread_blas():
        frames = [_approach_frame(design, est) for design in (glob, local)]
    out = pd.concat(frames, ignore_index=True)
    out.insert(0, "rep", np.tile(np.arange(n_reps), 2))
    out.insert(1, "approach", np.repeat(["global", "local"], n_reps))
    out["n_missing"] = np.tile(n_missing, 2)
    out["pattern"] = pattern
    out["p"] = float(p)
    out["method"] = name
    out["observed_cols"] = obs_label
    out["mask_scope"] = mask_scope
    return out[["rep", "approach", "rmse", "n_missing", "rank", "shrinkage", "pattern", "p",
                "method", "observed_cols", "mask_scope"]]


# --------------------------------------------------------------------------- baseline
class ColumnMeans(TransformerMixin, BaseEstimator):
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

    def fit(self, X: Any, y: Any = None) -> ColumnMeans:
        """Complete ``X`` (NaN = missing) and store the result in ``completed_``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_cols)
        y : ignored

        Returns
        -------
        ColumnMeans
            The fitted estimator.
        """
        arr = _as_matrix(X)
        rows, cols = _labels(X)
        missing = np.isnan(arr)
        _check_not_all_missing(missing)
        empty = np.flatnonzero(missing.all(axis=0))
        if empty.size:
            raise ValueError(f"ColumnMeans cannot fill columns without any observed entry: "
                             f"{_show(cols, empty)}")
        count = (~missing).sum(axis=0)
        mean = np.where(missing, 0.0, arr).sum(axis=0) / count
        self.missing_ = missing
        self.mean_ = mean
        self.completed_ = np.where(missing, mean[None, :], arr)
        self.rank_ = 0
        return self

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
        """Return ``X`` with its missing entries (NaN) replaced by the column means.

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


def _column_means_runs(design: _Design) -> tuple[np.ndarray, np.ndarray]:
    """RMSE of :class:`ColumnMeans` on every repetition (vectorised, in chunks)."""
    R, n, d = design.masks.shape
    fixed_sum = design.X_fixed.sum(axis=0) if design.X_fixed is not None else np.zeros(d)
    n_fixed = 0 if design.X_fixed is None else design.X_fixed.shape[0]
    rmse = np.empty(R)
    chunk = max(1, _CHUNK_ENTRIES // (n * d))
    for start in range(0, R, chunk):
        sl = slice(start, min(start + chunk, R))
        observed = ~design.masks[sl]
        count = observed.sum(axis=1) + n_fixed
        if (count == 0).any():
            r, j = np.argwhere(count == 0)[0]
            raise ValueError(f"repetition {start + r}: column {j} is entirely masked in the "
                             f"{design.label} matrix (use a smaller p)")
        total = np.einsum("rnd,nd->rd", observed.astype(float), design.X_rows) + fixed_sum
        mean = total / count
        pred = np.broadcast_to(mean[:, None, :], (mean.shape[0], design.scored.size, d))
        rmse[sl] = design.rmse(pred, sl)
    return rmse, np.zeros(R, dtype=int)


# --------------------------------------------------------------------------- domain matrix
def domain_matrix(df: pd.DataFrame, domain: str, columns: Sequence[str],
                  by: str = "base_model") -> tuple[pd.DataFrame, np.ndarray]:
    """The score matrix of a leaderboard and the rows of one domain.

    Parameters
    ----------
    df : DataFrame
        A leaderboard with the score ``columns`` and the domain label ``by`` (e.g. the
        v2 leaderboard joined with :func:`hca.base_models.identify`).
    domain : str
        The domain, e.g. ``"Qwen2.5-14B"``.
    columns : sequence of str
        Score columns, e.g. :data:`hca.data.V2_BENCHMARKS`.
    by : str
        Column holding the domain labels (NA: unattributed).

    Returns
    -------
    X : DataFrame
        ``df[columns]`` as floats with a fresh 0..n-1 index.
    local : ndarray of bool
        ``True`` for the rows of ``domain``.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"domain_matrix expects a DataFrame, got {type(df).__name__}")
    missing_cols = [c for c in [*columns, by] if c not in df.columns]
    if missing_cols:
        raise ValueError(f"domain_matrix: columns {missing_cols} are missing; found "
                         f"{list(df.columns)[:12]}")
    X = df[list(columns)].astype(float).reset_index(drop=True)
    bad = np.flatnonzero(X.isna().any(axis=1).to_numpy())
    if bad.size:
        raise ValueError(f"domain_matrix: {bad.size} rows have missing scores (positions "
                         f"{bad[:_MAX_SHOW].tolist()}); the ground truth must be complete")
    labels = df[by].astype("string")
    local = labels.eq(domain).fillna(False).to_numpy(dtype=bool)
    if not local.any():
        top = labels.value_counts().head(5).index.tolist()
        raise ValueError(f"domain {domain!r} has no rows in column {by!r}; largest "
                         f"domains: {top}")
    return X, local


# --------------------------------------------------------------------------- sweeps
def _seeds(random_state: Any, k: int) -> list[int]:
    """``k`` integer seeds derived from ``random_state`` (int, None or Generator)."""
    if isinstance(random_state, np.random.Generator):
        return [int(s) for s in random_state.integers(0, 2 ** 32, size=k)]
    return [int(s) for s in np.random.SeedSequence(random_state).generate_state(k)]


def completion_sweep(X_global: Any, local_rows: Any, ps: Sequence[float],
                     observed_sets: Sequence[Sequence[Any]] | None = None,
                     pattern: str = "block", n_reps: int = 100, random_state: Any = 0,
                     **kwargs: Any) -> pd.DataFrame:
    """Run :func:`global_vs_local` for every ``p`` in ``ps`` and every observed set.

    Parameters
    ----------
    X_global, local_rows
        As in :func:`global_vs_local`.
    ps : sequence of float
        Missing probabilities (random) or fractions of rows removed (block).
    observed_sets : sequence of sequences, optional
        Fully observed columns (block pattern; e.g. :func:`observed_column_sets`). Every
        ``p`` is run with every set. ``None`` for the random pattern.
    pattern : {"random", "block"}
    n_reps : int
        Repetitions per ``(p, set)`` setting.
    random_state : int, Generator or None
        Seeds one independent stream per setting (``numpy.random.SeedSequence``): two
        sweeps with the same ``random_state``, ``ps`` and ``observed_sets`` draw the same
        masks, so methods run on them are paired.
    **kwargs
        Passed to :func:`global_vs_local` (``method``, ``method_params``, ``mask_scope``,
        ``same_rows``).

    Returns
    -------
    DataFrame
        The frames of :func:`global_vs_local` stacked, with a leading ``setting`` column
        (0, 1, ... in the order ``p`` outer, set inner) and ``n_observed`` (the number of
        fully observed columns; 0 for the random pattern).
    """
    if pattern == "block" and not observed_sets:
        raise ValueError("pattern='block' needs observed_sets (e.g. observed_column_sets(6, 3))")
    if pattern == "random" and observed_sets:
        raise ValueError("observed_sets applies to pattern='block' only")
    ps = [float(p) for p in ps]
    if not ps:
        raise ValueError("ps is empty")
    sets = [list(s) for s in observed_sets] if observed_sets else [None]
    settings = [(p, s) for p in ps for s in sets]
    frames = []
    for i, ((p, cols), seed) in enumerate(zip(settings, _seeds(random_state,
                                                               len(settings)))):
        df = global_vs_local(X_global, local_rows, pattern=pattern, p=p, n_reps=n_reps,
                             random_state=seed, observed_cols=cols, **kwargs)
        df.insert(0, "setting", i)
        df.insert(1, "n_observed", 0 if cols is None else len(cols))
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- summaries
_RESULT_COLUMNS = ("approach", "rmse", "rank", "shrinkage")


def paired_rmse(df: pd.DataFrame) -> pd.DataFrame:
    """Global and local RMSE side by side, one row per repetition.

    Parameters
    ----------
    df : DataFrame
        Output of :func:`global_vs_local`, :func:`completion_sweep` or
        :func:`run_appendix_g` (any extra columns that identify a repetition are kept).

    Returns
    -------
    DataFrame
        Columns ``global`` and ``local``, indexed by every column of ``df`` other than
        ``approach``, ``rmse``, ``rank`` and ``shrinkage``.
    """
    need = [c for c in ("approach", "rmse", "rep") if c not in df.columns]
    if need:
        raise ValueError(f"paired_rmse: columns {need} are missing; found {list(df.columns)}")
    found = set(df["approach"].unique())
    if found != {"global", "local"}:
        raise ValueError(f"paired_rmse: approach must take the values 'global' and "
                         f"'local'; found {sorted(found)}")
    keys = [c for c in df.columns if c not in _RESULT_COLUMNS]
    if df.duplicated(subset=[*keys, "approach"]).any():
        raise ValueError("paired_rmse: several rows share one repetition and approach; "
                         "the frame mixes runs that no column tells apart")
    wide = df.set_index([*keys, "approach"])["rmse"].unstack("approach")
    if wide.isna().any().any():
        raise ValueError("paired_rmse: some repetitions have only one approach")
    wide.columns.name = None
    return wide[["global", "local"]]


def compare_approaches(df: pd.DataFrame, by: Sequence[str] = ("p",),
                       level: float = 0.95) -> pd.DataFrame:
    """Summarise global versus local RMSE per group of repetitions.

    Parameters
    ----------
    df : DataFrame
        Output of :func:`global_vs_local`, :func:`completion_sweep` or :func:`run_appendix_g`.
    by : sequence of str
        Columns to group by (empty: one group).
    level : float
        Level of the normal-approximation intervals for the means and for the mean paired
        difference (repetitions treated as independent draws).

    Returns
    -------
    DataFrame
        One row per group: ``n`` (repetitions), ``global_mean``, ``global_lo``,
        ``global_hi``, ``local_mean``, ``local_lo``, ``local_hi``, ``global_median``,
        ``local_median``, ``ratio_median`` (median over repetitions of local / global),
        ``share_local_better`` (share of repetitions with local < global),
        ``diff_mean`` (mean of local - global), ``diff_lo``, ``diff_hi`` and ``verdict``:
        "local better" if the interval of the difference lies below 0, "global better" if
        above, "no clear difference" otherwise ("too few repetitions" if n < 2).
    """
    from statistics import NormalDist

    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    by = list(by)
    missing = [c for c in by if c not in df.columns]
    if missing:
        raise ValueError(f"compare_approaches: grouping columns {missing} are missing")
    z = NormalDist().inv_cdf(0.5 + level / 2)
    wide = paired_rmse(df).reset_index()
    g, loc = wide["global"], wide["local"]
    wide = wide.assign(_diff=loc - g, _ratio=loc / g, _better=(loc < g).astype(float))
    groups = wide.groupby(by, sort=True, observed=True) if by else [((), wide)]
    rows, index = [], []
    for key, sub in groups:
        n = len(sub)
        row = {"n": n}
        for name, col in (("global", sub["global"]), ("local", sub["local"]),
                          ("diff", sub["_diff"])):
            m = col.mean()
            half = z * col.std(ddof=1) / np.sqrt(n) if n > 1 else float("nan")
            row[f"{name}_mean"], row[f"{name}_lo"], row[f"{name}_hi"] = m, m - half, m + half
        row["global_median"] = sub["global"].median()
        row["local_median"] = sub["local"].median()
        row["ratio_median"] = sub["_ratio"].median()
        row["share_local_better"] = sub["_better"].mean()
        if n < 2:
            row["verdict"] = "too few repetitions"
        elif row["diff_hi"] < 0:
            row["verdict"] = "local better"
        elif row["diff_lo"] > 0:
            row["verdict"] = "global better"
        else:
            row["verdict"] = "no clear difference"
        rows.append(row)
        index.append(key)
    cols = ["n", "global_mean", "global_lo", "global_hi", "local_mean", "local_lo",
            "local_hi", "global_median", "local_median", "ratio_median",
            "share_local_better", "diff_mean", "diff_lo", "diff_hi", "verdict"]
    out = pd.DataFrame(rows, columns=cols)
    if by:
        out.index = (pd.MultiIndex.from_tuples(index, names=by) if len(by) > 1
                     else pd.Index([k[0] if isinstance(k, tuple) else k for k in index],
                                   name=by[0]))
    return out


# --------------------------------------------------------------------------- plots
_APPROACH_COLORS = {"global": "#4C72B0", "local": "#DD8452"}


def plot_rmse_distributions(df: pd.DataFrame, ax: Any = None, bins: int = 40,
                            label: str = "") -> Any:
    """Histograms of the global and local RMSE over repetitions (Figure 15a).

    Parameters
    ----------
    df : DataFrame
        One experiment (e.g. one ``variant``) of :func:`global_vs_local` output.
    ax : matplotlib Axes, optional
    bins : int
        Number of common bins.
    label : str
        Appended to the legend entries (e.g. the method).

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    wide = paired_rmse(df)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.8))
    edges = np.histogram_bin_edges(wide.to_numpy().ravel(), bins=bins)
    for approach in ("global", "local"):
        vals = wide[approach].to_numpy()
        color = _APPROACH_COLORS[approach]
        ax.hist(vals, bins=edges, color=color, alpha=0.6, edgecolor="black", linewidth=0.5,
                label=f"{approach}{label} (mean {vals.mean():.2f})")
        ax.axvline(vals.mean(), color=color, linestyle="--", linewidth=2)
    ax.set_xlabel("RMSE on the removed entries (score points)")
    ax.set_ylabel("repetitions")
    ax.legend(fontsize="small")
    return ax


def plot_rmse_vs_p(df: pd.DataFrame, ax: Any = None, level: float = 0.95,
                   label: str = "", linestyle: str = "-", shift: float = 0.008) -> Any:
    """Mean RMSE with intervals against ``p``, global and local (Figure 15b).

    Parameters
    ----------
    df : DataFrame
        One method's runs of :func:`completion_sweep` (column ``p``).
    ax : matplotlib Axes, optional
    level : float
        Level of the interval of each mean (see :func:`compare_approaches`).
    label : str
        Appended to the legend entries.
    linestyle : str
    shift : float
        Horizontal offset between the global and local markers.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    s = compare_approaches(df, by=("p",), level=level)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    x = s.index.to_numpy(dtype=float)
    for k, approach in enumerate(("global", "local")):
        m = s[f"{approach}_mean"].to_numpy()
        err = np.vstack([m - s[f"{approach}_lo"].to_numpy(), s[f"{approach}_hi"].to_numpy() - m])
        ax.errorbar(x + (k - 0.5) * shift, m, yerr=err, marker="o", markersize=4, capsize=3,
                    color=_APPROACH_COLORS[approach], linestyle=linestyle,
                    label=f"{approach}{label}")
    ax.set_xlabel("fraction p of rows removed in the other columns")
    ax.set_ylabel("mean RMSE (score points)")
    ax.legend(fontsize="small")
    return ax


def plot_rmse_by_column_set(df: pd.DataFrame, axes: Any = None,
                            names: dict[str, str] | None = None, ncols: int = 5) -> Any:
    """Global versus local RMSE for every set of fully observed columns (Figure 16).

    Parameters
    ----------
    df : DataFrame
        One method's runs with an ``observed_cols`` column (comma-separated labels).
    axes : array of matplotlib Axes, optional
        At least as many as there are column sets; created (``ncols`` per row) if omitted.
    names : dict, optional
        Short names of the columns for the panel titles (e.g. ``{"ifeval": "1", ...}``).
    ncols : int
        Panels per row when ``axes`` is created.

    Returns
    -------
    numpy.ndarray of matplotlib Axes
    """
    import matplotlib.pyplot as plt

    if "observed_cols" not in df.columns:
        raise ValueError("plot_rmse_by_column_set: column 'observed_cols' is missing")
    sets = list(dict.fromkeys(df["observed_cols"]))
    if axes is None:
        nrows = int(np.ceil(len(sets) / ncols))
        _, axes = plt.subplots(nrows, ncols, figsize=(2.5 * ncols, 2.3 * nrows),
                               squeeze=False)
    flat = np.asarray(axes).ravel()
    if flat.size < len(sets):
        raise ValueError(f"need {len(sets)} axes, got {flat.size}")
    names = names or {}
    for ax, s in zip(flat, sets):
        wide = paired_rmse(df[df["observed_cols"] == s])
        bp = ax.boxplot([wide["global"], wide["local"]], tick_labels=["global", "local"],
                        whis=(5, 95), showfliers=False, patch_artist=True, widths=0.6)
        for box, approach in zip(bp["boxes"], ("global", "local")):
            box.set_facecolor(_APPROACH_COLORS[approach])
            box.set_alpha(0.7)
        ax.plot([1, 2], [wide["global"].mean(), wide["local"].mean()], "kD", markersize=3)
        ax.set_title("observed: " + ",".join(names.get(c, c) for c in s.split(",")),
                     fontsize="small")
        ax.tick_params(labelsize="small")
    for ax in flat[len(sets):]:
        ax.set_visible(False)
    return np.asarray(axes)


# --------------------------------------------------------------------------- Appendix G
#: The authors' soft-impute (``fancyimpute.SoftImpute(max_rank=3)``: lambda = lambda_max / 50
#: on the uncentred, zero-filled matrix), as :class:`SoftImpute` parameters.
AUTHORS_SOFT_IMPUTE: dict[str, Any] = {"shrinkage": 0.02, "max_rank": 3, "center": False}


@dataclass(frozen=True)
class AppendixGDesign:
    """The repetitions of the Appendix G experiments (Figures 15a, 15b and 16).

    Methods (fixed in advance): the library defaults (soft-impute with the validation
    rule and centring for the random pattern; SMC with the row-thresholding rank rule for
    the block pattern), the column-means baseline on the same masks, and the authors'
    setup (:data:`AUTHORS_SOFT_IMPUTE`, every row masked, per-column rows in the block
    pattern) as a robustness check. Figure 16 adds SMC on the authors' masks.

    Attributes
    ----------
    p_random : float
        Missing probability of Figure 15a (the paper: 0.8).
    n_reps_random : int
        Repetitions of Figure 15a (the paper: 1,000).
    ps_block : tuple of float
        Fractions of rows removed in Figure 15b (the paper: 0.1, ..., 0.9).
    observed_sizes : tuple of int
        Numbers of fully observed columns in Figure 15b; every set of that size is run
        and the results are pooled (the paper's text says 2 in one place and "all 20
        sets of size 3" in another).
    n_reps_block : int
        Repetitions per ``p`` and per set in Figure 15b.
    p_sets : float
        Fraction of rows removed in Figure 16 (the paper: 0.5).
    n_reps_sets : int
        Repetitions per set of 3 observed columns in Figure 16.
    n_reps_authors_random, ps_authors_block, n_reps_authors_block, n_reps_authors_sets
        The same for the authors' setup (fewer: masking every row is slower).
    n_reps_rank_check : int
        Repetitions per set of the SMC rank check of Figure 16 (experiment "16-rank":
        the column-thresholding rule and fixed ranks 1, 2, 3 on the first masks of
        Figure 16, so that they pair with its first ``n_reps_rank_check`` repetitions).
    random_state : int
        Seeds every mask (one stream per experiment and setting).
    """

    p_random: float = 0.8
    n_reps_random: int = 1000
    ps_block: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    observed_sizes: tuple[int, ...] = (3, 2)
    n_reps_block: int = 5
    p_sets: float = 0.5
    n_reps_sets: int = 100
    n_reps_authors_random: int = 30
    ps_authors_block: tuple[float, ...] = (0.1, 0.5, 0.9)
    n_reps_authors_block: int = 2
    n_reps_authors_sets: int = 5
    n_reps_rank_check: int = 10
    random_state: int = 0

    def summary(self) -> str:
        """The design in a few lines."""
        ps = ", ".join(f"{p:g}" for p in self.ps_block)
        pa = ", ".join(f"{p:g}" for p in self.ps_authors_block)
        return "\n".join([
            f"15a: random, p = {self.p_random:g}, {self.n_reps_random} repetitions "
            f"(authors' setup: {self.n_reps_authors_random})",
            f"15b: block, every set of {' and of '.join(map(str, self.observed_sizes))} "
            f"observed columns, p = {ps}; {self.n_reps_block} repetitions per set and p "
            f"(authors' setup: sets of {self.observed_sizes[0]}, p = {pa}, "
            f"{self.n_reps_authors_block} per set and p)",
            f"16: block, each of the sets of 3 observed columns, p = {self.p_sets:g}, "
            f"{self.n_reps_sets} repetitions per set (authors' setup: "
            f"{self.n_reps_authors_sets}; SMC rank check: {self.n_reps_rank_check})",
            f"random_state = {self.random_state}",
        ])


@dataclass(frozen=True, eq=False)
class AppendixGResults:
    """Output of :func:`run_appendix_g`.

    Attributes
    ----------
    frame : DataFrame
        Every repetition of every experiment: ``experiment`` ("15a", "15b", "16",
        "16-rank"),
        ``variant`` (method), then the columns of :func:`completion_sweep`.
    timings : DataFrame
        ``experiment``, ``variant``, ``repetitions`` and wall-clock ``seconds`` per run.
    warnings : tuple of str
        Warnings raised by the runs (e.g. soft-impute not converging), with their run.
    design : AppendixGDesign
    """

    frame: pd.DataFrame
    timings: pd.DataFrame
    warnings: tuple[str, ...]
    design: AppendixGDesign

    def select(self, experiment: str, variant: str | None = None) -> pd.DataFrame:
        """The repetitions of one experiment (and variant)."""
        out = self.frame[self.frame["experiment"] == experiment]
        if variant is not None:
            out = out[out["variant"] == variant]
        if out.empty:
            raise ValueError(f"no runs for experiment {experiment!r}, variant {variant!r}; "
                             f"have {sorted(set(zip(self.frame.experiment, self.frame.variant)))}")
        return out

    def summary(self) -> str:
        """Mean RMSE per experiment and variant, and the time taken."""
        s = compare_approaches(self.frame, by=("experiment", "variant"))
        lines = [f"{e:>7s} {v:<22s} n={int(r.n):5d}  global {r.global_mean:7.3f}  "
                 f"local {r.local_mean:7.3f}  ({r.verdict})" for (e, v), r in s.iterrows()]
        lines.append(f"total {self.timings['seconds'].sum():.1f} s")
        return "\n".join(lines)


def run_appendix_g(X_global: Any, local_rows: Any,
                   design: AppendixGDesign | None = None) -> AppendixGResults:
    """Run the Appendix G experiments (Figures 15a, 15b, 16) as set out in ``design``.

    Parameters
    ----------
    X_global : array-like or DataFrame (n_rows, n_cols)
        The fully observed leaderboard scores.
    local_rows : array-like of bool or int
        The rows of the domain (the paper: the Qwen2.5-14B fine-tunes).
    design : AppendixGDesign, optional
        Default: ``AppendixGDesign()``.

    Returns
    -------
    AppendixGResults
    """
    design = design or AppendixGDesign()
    d = _as_matrix(X_global, "X_global").shape[1]
    seed_a, seed_b, seed_c = _seeds(design.random_state, 3)
    authors_block = {"method": "soft_impute", "method_params": AUTHORS_SOFT_IMPUTE,
                     "mask_scope": "all", "same_rows": False}
    triples = observed_column_sets(d, 3)
    runs: list[tuple[str, str, dict]] = [
        ("15a", "soft-impute", {"ps": [design.p_random], "pattern": "random",
                                "n_reps": design.n_reps_random, "random_state": seed_a}),
        ("15a", "column means", {"ps": [design.p_random], "pattern": "random",
                                 "n_reps": design.n_reps_random, "random_state": seed_a,
                                 "method": ColumnMeans()}),
        ("15a", "authors' setup", {"ps": [design.p_random], "pattern": "random",
                                   "n_reps": design.n_reps_authors_random,
                                   "random_state": seed_a, "method": "soft_impute",
                                   "method_params": AUTHORS_SOFT_IMPUTE, "mask_scope": "all"}),
    ]
    for k, size in enumerate(design.observed_sizes):
        common = {"ps": design.ps_block, "observed_sets": observed_column_sets(d, size),
                  "n_reps": design.n_reps_block, "random_state": seed_b + k}
        runs += [("15b", "SMC", common),
                 ("15b", "column means", {**common, "method": ColumnMeans()})]
    runs.append(("15b", "authors' setup", {
        "ps": design.ps_authors_block, "observed_sets": observed_column_sets(
            d, design.observed_sizes[0]), "n_reps": design.n_reps_authors_block,
        "random_state": seed_b, **authors_block}))
    sets = {"ps": [design.p_sets], "observed_sets": triples, "random_state": seed_c}
    runs += [
        ("16", "SMC", {**sets, "n_reps": design.n_reps_sets}),
        ("16", "column means", {**sets, "n_reps": design.n_reps_sets, "method": ColumnMeans()}),
        ("16", "authors' setup", {**sets, "n_reps": design.n_reps_authors_sets,
                                  **authors_block}),
        ("16", "SMC, authors' masks", {**sets, "n_reps": design.n_reps_authors_sets,
                                       "mask_scope": "all", "same_rows": False}),
    ]
    check = {**sets, "n_reps": design.n_reps_rank_check}
    runs.append(("16-rank", "SMC, column rule",
                 {**check, "method_params": {"thresholding": "column"}}))
    runs += [("16-rank", f"SMC, rank {r}", {**check, "method_params": {"rank": r}})
             for r in (1, 2, 3)]
    frames, timing, caught = [], [], []
    for experiment, variant, kwargs in runs:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            df = completion_sweep(X_global, local_rows, **kwargs)
            seconds = time.perf_counter() - t0
        caught += [f"{experiment} / {variant}: {w.message}" for w in record]
        df.insert(0, "experiment", experiment)
        df.insert(1, "variant", variant)
        frames.append(df)
        timing.append({"experiment": experiment, "variant": variant,
                       "repetitions": int(df["rep"].size // 2), "seconds": seconds})
    frame = pd.concat(frames, ignore_index=True)
    timings = pd.DataFrame(timing).groupby(["experiment", "variant"], sort=False,
                                           as_index=False).sum()
    return AppendixGResults(frame=frame, timings=timings, warnings=tuple(caught),
                            design=design)


def rmse_by_row_observed(X_true: Any, X_hat: Any, mask: Any) -> pd.DataFrame:
    """Error on the removed entries, split by how many entries of their row are observed.

    Parameters
    ----------
    X_true, X_hat : array-like of the same shape
    mask : array-like of bool, same shape
        The removed entries (``True``).

    Returns
    -------
    DataFrame
        One row per number of observed entries in the row (0 .. n_cols - 1) that occurs
        among rows with a removed entry: ``row_observed``, ``n_entries`` (removed entries),
        ``sse`` (sum of squared errors) and ``rmse``.
    """
    a, b = np.asarray(X_true, dtype=float), np.asarray(X_hat, dtype=float)
    m = np.asarray(mask, dtype=bool)
    if not (a.shape == b.shape == m.shape) or a.ndim != 2:
        raise ValueError(f"shapes differ or are not 2-D: X_true {a.shape}, X_hat {b.shape}, "
                         f"mask {m.shape}")
    if not m.any():
        raise ValueError("mask selects no entry")
    err = np.where(m, a - b, 0.0)
    if not np.isfinite(err).all():
        raise ValueError("masked entries of X_true or X_hat are not finite")
    observed = (~m).sum(axis=1)
    rows = m.any(axis=1)
    frame = pd.DataFrame({"row_observed": observed[rows], "n_entries": m[rows].sum(axis=1),
                          "sse": (err[rows] ** 2).sum(axis=1)})
    out = frame.groupby("row_observed", as_index=False).sum()
    out["rmse"] = np.sqrt(out["sse"] / out["n_entries"])
    return out


def random_mask_diagnostics(X_global: Any, local_rows: Any, p: float = 0.8,
                            n_draws: int = 20, random_state: Any = 0) -> pd.DataFrame:
    """Local completion of a domain under random masks, error split by row coverage.

    For each of ``n_draws`` random masks of the domain rows (probability ``p``), the
    domain is completed from its own rows by soft-impute with the validation rule (the
    library default), by the authors' soft-impute (:data:`AUTHORS_SOFT_IMPUTE`) and by
    :class:`ColumnMeans`; the squared errors are split with :func:`rmse_by_row_observed`.

    Parameters
    ----------
    X_global : array-like or DataFrame (n_rows, n_cols)
    local_rows : array-like of bool or int
    p : float
    n_draws : int
    random_state : int, Generator or None

    Returns
    -------
    DataFrame
        ``draw``, ``method``, ``shrinkage`` (relative lambda used; NaN for column means),
        ``row_observed``, ``n_entries``, ``sse``, ``rmse``.
    """
    X = _as_matrix(X_global, "X_global")
    dom = _rows_index(local_rows, X.shape[0])
    Xd = X[dom]
    methods = {"soft-impute": lambda seed: SoftImpute(empty_row="ignore", random_state=seed),
               "authors' setup": lambda seed: SoftImpute(empty_row="ignore",
                                                         **AUTHORS_SOFT_IMPUTE),
               "column means": lambda seed: ColumnMeans()}
    parts = []
    for draw, seed in enumerate(_seeds(random_state, int(n_draws))):
        mask = mask_random(Xd.shape, p, seed)
        Xm = np.where(mask, np.nan, Xd)
        for name, make in methods.items():
            est = make(seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                filled = est.fit_transform(Xm)
            part = rmse_by_row_observed(Xd, filled, mask)
            part.insert(0, "draw", draw)
            part.insert(1, "method", name)
            part.insert(2, "shrinkage", getattr(est, "shrinkage_", float("nan")))
            parts.append(part)
    return pd.concat(parts, ignore_index=True)
