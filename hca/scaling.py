"""Sigmoid scaling laws and the average effect of fine-tuning (paper Appendices D and F).

Two analyses from Jin, Syrgkanis, Kakade & Zhang (2025):

**Sigmoid scaling law with a fine-tuning shift** (Appendix D, Figure 7; Appendix F.1,
Figure 14)::

    Y ~ L / (1 + exp(-k (log C - log C0))) + tau * T + b

where ``C`` is the pretraining compute in FLOPs, approximated by ``C = 6 N D`` with ``N`` the
number of parameters and ``D`` the number of pretraining tokens (:func:`pretraining_flops`),
``log`` is the *natural* logarithm, and ``T`` is 1 for fine-tuned / instruct models and 0 for
pretrained models. :func:`fit_sigmoid_law` fits it by bounded nonlinear least squares and
:func:`bootstrap_sigmoid` gives percentile intervals for its parameters.

**Average treatment effect of fine-tuning** (Appendix F, Figure 13, Remark 3). With
``X = log C`` as the adjustment set (the base model confounds both whether a model is
fine-tuned and how well it scores), the backdoor formula gives::

    E[Y | do(T = t)] = integral of E[Y | T = t, X = x] p(x) dx,   ATE = E[Y|do(1)] - E[Y|do(0)].

Estimators:

* :func:`ate_backdoor` -- outcome regression per arm, averaged over the empirical
  distribution of ``x`` inside the common support. With few distinct ``x`` values (one per base
  model) it is the stratified estimator; otherwise a natural cubic spline per arm.
* :func:`ate_ipw` -- inverse-propensity weighting with a (ridge-stabilised) logistic propensity
  in ``x``, Hajek-normalised (stabilised) weights, min-max common-support restriction and
  propensity trimming.
* :func:`ate_aipw` -- the doubly robust augmented IPW estimator combining both.

Every estimator reports a percentile bootstrap interval (units resampled with replacement
within each arm, or whole clusters when ``groups`` is given). :func:`overlap_diagnostics` and
:func:`plot_overlap` check positivity, and :func:`ate_by_outcome` runs the estimators over
several score columns into a tidy table for :func:`plot_ate`.

:func:`ate_ipw_strata` is IPW restricted to the stratified backdoor estimator's support
(:func:`common_strata`), to separate "different population" from "different model".

**Leaderboard helpers.** :func:`scaling_frame` builds the analysis rows from the v2 leaderboard
(base model, ``C = 6 N D``, ``log_c``, lineage) with the treatment of
:func:`fine_tuning_treatment`; :func:`authors_scaling_frame` builds the same from the paper
authors' own columns. :func:`family_size_means` / :func:`plot_family_sizes` give Figure 12;
:func:`fit_sigmoid_panel` / :func:`plot_sigmoid_panel` fit and draw the law over outcomes and
subsets (Figures 7, 14) with a joint cluster bootstrap; :func:`ate_panel` /
:func:`plot_ate_panel` run the ATE estimators over subsets (Figure 13), in parallel if asked;
:func:`plot_propensity_strata` shows per-stratum treatment shares against the propensity;
:func:`stratum_effects` and :func:`ipw_balance` show what the backdoor and IPW estimates rest on.

As Remark 3 of the paper stresses, these are causal effects only under conditional
ignorability given ``log C``; the code estimates the adjusted contrast, it cannot check that
assumption.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import least_squares
from scipy.special import expit

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = [
    "PARAM_NAMES",
    "pretraining_flops",
    "log_compute",
    "sigmoid_law",
    "SigmoidFit",
    "fit_sigmoid_law",
    "SigmoidBootstrap",
    "bootstrap_sigmoid",
    "ATEResult",
    "ate_backdoor",
    "ate_ipw",
    "ate_aipw",
    "propensity_scores",
    "OverlapDiagnostics",
    "overlap_diagnostics",
    "ate_by_outcome",
    "plot_sigmoid_fit",
    "plot_ate",
    "plot_overlap",
    "common_strata",
    "ate_ipw_strata",
    "PRETRAINED_TYPES",
    "fine_tuning_treatment",
    "base_lineage",
    "scaling_frame",
    "authors_scaling_frame",
    "family_size_means",
    "plot_family_sizes",
    "SigmoidPanel",
    "fit_sigmoid_panel",
    "plot_sigmoid_panel",
    "ATEPanel",
    "ate_panel",
    "plot_ate_panel",
    "plot_propensity_strata",
    "stratum_effects",
    "ipw_balance",
]

#: Names of the sigmoid-law parameters, in the order used by ``cov`` and bootstrap samples.
PARAM_NAMES: tuple[str, ...] = ("L", "k", "log_c0", "tau", "b")

MIN_POINTS_SIGMOID = 6


# ----------------------------------------------------------------------------- input checks
def _as_float(a, name: str) -> np.ndarray:
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric, could not convert: {exc}") from exc
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, found shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(
            f"{name} contains {int(bad.sum())} NaN/inf value(s) (first at position "
            f"{int(np.flatnonzero(bad)[0])}); drop or impute them first"
        )
    return arr


def _as_treatment(t, name: str = "t") -> np.ndarray:
    arr = np.asarray(t)
    if arr.dtype == bool:
        arr = arr.astype(float)
    arr = _as_float(arr, name)
    values = np.unique(arr)
    if not np.isin(values, (0.0, 1.0)).all():
        raise ValueError(
            f"{name} must be binary (0 = pretrained, 1 = fine-tuned); found values "
            f"{values[~np.isin(values, (0.0, 1.0))][:5].tolist()}"
        )
    return arr.astype(int)


def _check_lengths(**arrays: np.ndarray) -> int:
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"inputs must have the same length, found {lengths}")
    return next(iter(lengths.values()))


def _check_ci(ci: float) -> None:
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), found {ci}")


# ----------------------------------------------------------------------------- compute
def pretraining_flops(params_b, tokens_t) -> np.ndarray:
    """Pretraining compute ``C = 6 N D`` in FLOPs.

    Parameters
    ----------
    params_b : array-like
        Number of parameters ``N`` in billions (the leaderboard's ``#Params (B)``).
    tokens_t : array-like
        Number of pretraining tokens ``D`` in trillions.

    Returns
    -------
    numpy.ndarray
        ``6 * (params_b * 1e9) * (tokens_t * 1e12)`` FLOPs. For example Llama-2-7B
        (7B parameters, 2T tokens) gives 8.4e22 FLOPs.
    """
    n = np.atleast_1d(np.asarray(params_b, dtype=float))
    d = np.atleast_1d(np.asarray(tokens_t, dtype=float))
    for arr, name in ((n, "params_b"), (d, "tokens_t")):
        if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError(f"{name} must be finite and positive, found {arr[~(arr > 0)][:5]}")
    return 6.0 * (n * 1e9) * (d * 1e12)


def log_compute(params_b, tokens_t) -> np.ndarray:
    """Natural log of the pretraining compute ``ln(6 N D)`` with ``C`` in FLOPs.

    See :func:`pretraining_flops` for the units of the inputs. This is the ``log C`` (and the
    adjustment variable ``X``) used throughout this module.
    """
    return np.log(pretraining_flops(params_b, tokens_t))


# ----------------------------------------------------------------------------- sigmoid law
def sigmoid_law(log_c, t, L: float, k: float, log_c0: float, tau: float, b: float) -> np.ndarray:
    """Evaluate ``L / (1 + exp(-k (log_c - log_c0))) + tau * t + b``.

    ``log_c`` is the natural log of the pretraining compute in FLOPs and ``t`` is 0/1
    (broadcast against ``log_c``).
    """
    log_c = np.asarray(log_c, dtype=float)
    t = np.asarray(t, dtype=float)
    return L * expit(k * (log_c - log_c0)) + tau * t + b


@dataclass(frozen=True)
class SigmoidFit:
    """Result of :func:`fit_sigmoid_law`.

    Attributes
    ----------
    L, k, log_c0, tau, b : float
        Fitted parameters; ``log_c0`` is the natural log of the midpoint compute in FLOPs.
    se : dict
        Asymptotic standard errors ``sqrt(diag(s^2 (J'J)^-1))`` from the Jacobian at the
        optimum, ``s^2 = RSS / (n - p)``. NaN for a fixed parameter.
    cov : numpy.ndarray
        5 x 5 covariance matrix in the order of :data:`PARAM_NAMES` (NaN row/column for a
        fixed ``tau``).
    r2 : float
        Coefficient of determination ``1 - RSS / TSS``.
    n, n_treated : int
        Number of points and of points with ``T = 1``.
    resid_std : float
        Residual standard deviation ``sqrt(RSS / (n - p))``.
    converged : bool
        The optimiser reported success and the covariance matrix is finite.
    tau_fixed : bool
        True when all ``T`` are equal: ``tau`` is not identifiable and is fixed at 0.
    at_bound : tuple of str
        Parameters that ended on (within 1e-6 relative of) a bound; their standard errors
        are not reliable.
    notes : str
        Human-readable notes (fixed ``tau``, parameters at bounds, optimiser message).
    """

    L: float
    k: float
    log_c0: float
    tau: float
    b: float
    se: Mapping[str, float]
    cov: np.ndarray = field(repr=False, compare=False)
    r2: float
    n: int
    n_treated: int
    resid_std: float
    converged: bool
    tau_fixed: bool
    at_bound: tuple[str, ...] = ()
    notes: str = ""

    @property
    def params(self) -> dict[str, float]:
        """Fitted parameters as a dict in the order of :data:`PARAM_NAMES`."""
        return {name: float(getattr(self, name)) for name in PARAM_NAMES}

    @property
    def c0(self) -> float:
        """Midpoint compute ``C0 = exp(log_c0)`` in FLOPs."""
        return float(np.exp(self.log_c0))

    def predict(self, log_c, t) -> np.ndarray:
        """Predicted score at natural-log compute ``log_c`` and treatment ``t`` (0/1)."""
        return sigmoid_law(log_c, t, **self.params)

    def to_frame(self) -> pd.DataFrame:
        """Parameter table with columns ``estimate`` and ``se`` (index = parameter)."""
        return pd.DataFrame(
            {"estimate": [self.params[p] for p in PARAM_NAMES], "se": [self.se[p] for p in PARAM_NAMES]},
            index=pd.Index(PARAM_NAMES, name="param"),
        )

    def summary(self) -> str:
        """Multi-line text summary."""
        lines = [
            "Sigmoid scaling law  Y = L / (1 + exp(-k (ln C - ln C0))) + tau T + b   (C in FLOPs)",
            f"n = {self.n} (T=1: {self.n_treated}, T=0: {self.n - self.n_treated}), "
            f"R^2 = {self.r2:.4f}, residual sd = {self.resid_std:.4g}, converged = {self.converged}",
        ]
        for p in PARAM_NAMES:
            est, se = self.params[p], self.se[p]
            se_txt = "fixed" if (p == "tau" and self.tau_fixed) else f"{se:.4g}"
            lines.append(f"  {p:>7s} = {est: .5g}  (se {se_txt})")
        lines.append(f"  C0 = {self.c0:.4g} FLOPs")
        if self.notes:
            lines.append(f"Notes: {self.notes}")
        return "\n".join(lines)


def _check_sigmoid_inputs(log_c, t, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = _as_float(log_c, "log_c")
    yy = _as_float(y, "y")
    tt = _as_treatment(t, "t")
    n = _check_lengths(log_c=x, t=tt, y=yy)
    if n < MIN_POINTS_SIGMOID:
        raise ValueError(
            f"fit_sigmoid_law needs at least {MIN_POINTS_SIGMOID} points for 5 parameters, found {n}"
        )
    if np.ptp(x) <= 1e-12 * max(1.0, np.abs(x).max()):
        raise ValueError(f"log_c is constant ({x[0]:.6g}); the scaling law is not identifiable")
    if np.ptp(yy) == 0:
        raise ValueError(f"y is constant ({yy[0]:.6g}); nothing to fit (R^2 undefined)")
    if np.abs(x).max() > 1e3:
        raise ValueError(
            f"log_c has values up to {np.abs(x).max():.3g}: pass the natural log of the compute "
            "(e.g. log_compute(...)), not the compute itself"
        )
    return x, tt, yy


def _grid_starts(u: np.ndarray, t: np.ndarray, v: np.ndarray, use_tau: bool) -> list[tuple[float, np.ndarray]]:
    """Starting values on a fixed grid over ``(k_u, u0)``.

    For fixed ``(k_u, u0)`` the model is linear in ``(L, tau, b)`` (variable projection), so
    these are solved by (batched, slightly ridged) least squares. Returns ``(rss, params)``
    sorted by ``rss``.
    """
    span, v_range = float(np.ptp(u)), float(np.ptp(v))
    kk, uu = np.meshgrid(np.geomspace(0.25, 20.0, 12),
                         np.linspace(u.min() - 0.5 * span, u.max() + 0.5 * span, 15), indexing="ij")
    kk, uu = kk.ravel(), uu.ravel()
    S = expit(kk[:, None] * (u[None, :] - uu[:, None]))  # (G, n)
    tf = t.astype(float)
    cols = [S, np.broadcast_to(tf, S.shape), np.ones_like(S)] if use_tau else [S, np.ones_like(S)]
    D = np.stack(cols, axis=2)  # (G, n, q)
    gram = np.einsum("gnq,gnr->gqr", D, D)
    gram += 1e-10 * np.trace(gram, axis1=1, axis2=2)[:, None, None] * np.eye(D.shape[2])
    coef = np.linalg.solve(gram, np.einsum("gnq,n->gq", D, v)[..., None])[..., 0]
    rss = np.sum((v[None, :] - np.einsum("gnq,gq->gn", D, coef)) ** 2, axis=1)
    if not use_tau:
        coef = np.column_stack([coef[:, 0], np.zeros(len(coef)), coef[:, 1]])
    out = []
    for g in np.argsort(rss, kind="stable"):
        L0, tau0, b0 = coef[g]
        if L0 <= 0:  # decreasing fit is outside the model (L > 0): start from a flat one
            L0, tau0, b0 = 0.1 * max(v_range, 1e-6), 0.0, float(v.mean() - 0.05 * v_range)
        out.append((float(rss[g]), np.array([L0, kk[g], uu[g], tau0, b0])))
    return out


def _scaled_bounds(u: np.ndarray, v: np.ndarray, use_tau: bool):
    """Bounds of the free scaled parameters and their positions in ``PARAM_NAMES``."""
    span = float(np.ptp(u))
    v_range = float(np.ptp(v))
    lo = np.array([1e-8, 1e-3, u.min() - 2.0 * span, -np.inf, -np.inf])
    hi = np.array([10.0 * v_range, 50.0, u.max() + 2.0 * span, np.inf, np.inf])
    idx = [0, 1, 2, 3, 4] if use_tau else [0, 1, 2, 4]
    return lo[idx], hi[idx], idx


def _scaled_residuals(u: np.ndarray, t: np.ndarray, v: np.ndarray, use_tau: bool):
    """Residual and analytic Jacobian functions of the free scaled parameters."""

    def resid(p):
        full = _expand(p, use_tau)
        return sigmoid_law(u, t, *full) - v

    def jac(p):
        L, k_u, u0, _tau, _b = _expand(p, use_tau)
        s = expit(k_u * (u - u0))
        ds = s * (1.0 - s)
        cols = [s, L * ds * (u - u0), -L * ds * k_u]
        if use_tau:
            cols.append(t.astype(float))
        cols.append(np.ones_like(u))
        return np.column_stack(cols)

    return resid, jac


def _warm_refit(x: np.ndarray, t: np.ndarray, y: np.ndarray, start: Mapping[str, float],
                use_tau: bool, tol: float = 1e-6) -> np.ndarray:
    """One bounded local refit started at ``start`` (original units).

    The cheap refit of a bootstrap replicate: the same scaling, bounds and residuals as
    :func:`fit_sigmoid_law` but a single optimisation from the full-data estimate and no grid.
    Returns ``[L, k, log_c0, tau, b, R^2]`` in original units; raises ValueError when the
    resample is degenerate (constant ``x`` or ``y``).
    """
    xm, xs = float(x.mean()), float(x.std())
    ym, ys = float(y.mean()), float(y.std())
    if xs <= 0 or ys <= 0:
        raise ValueError("constant log_c or y in the resample")
    u, v = (x - xm) / xs, (y - ym) / ys
    lo, hi, idx = _scaled_bounds(u, v, use_tau)
    p0 = np.array([start["L"] / ys, start["k"] * xs, (start["log_c0"] - xm) / xs,
                   start["tau"] / ys, (start["b"] - ym) / ys])[idx]
    eps_lo = lo + 1e-9 * (1 + np.abs(np.where(np.isfinite(lo), lo, 0.0)))
    eps_hi = hi - 1e-9 * (1 + np.abs(np.where(np.isfinite(hi), hi, 0.0)))
    resid, jac = _scaled_residuals(u, t, v, use_tau)
    res = least_squares(resid, np.clip(p0, eps_lo, eps_hi), jac=jac, bounds=(lo, hi),
                        method="trf", x_scale="jac", max_nfev=500, ftol=tol, xtol=tol, gtol=tol)
    p = _expand(res.x, use_tau)
    r2 = 1.0 - float(np.sum(res.fun**2)) / float(np.sum(v**2))
    return np.array([ys * p[0], p[1] / xs, xm + xs * p[2], ys * p[3], ys * p[4] + ym, r2])


def _fit_scaled(
    u: np.ndarray,
    t: np.ndarray,
    v: np.ndarray,
    use_tau: bool,
    n_starts: int,
    extra_start: np.ndarray | None,
):
    """Fit on standardised log-compute ``u`` and standardised score ``v``.

    Scaled parameters: ``(L, k_u, u0, tau, b)``; returns the least-squares result.
    """
    lo, hi, idx = _scaled_bounds(u, v, use_tau)

    # Grid over the nonlinear parameters, linear ones by least squares; keep the best few.
    starts = [p for _, p in _grid_starts(u, t, v, use_tau)[: max(1, n_starts)]]
    if extra_start is not None:
        starts.insert(0, np.asarray(extra_start, dtype=float))

    resid, jac = _scaled_residuals(u, t, v, use_tau)
    best = None
    for start in starts:
        eps_lo = lo + 1e-9 * (1 + np.abs(np.where(np.isfinite(lo), lo, 0.0)))  # -inf stays
        eps_hi = hi - 1e-9 * (1 + np.abs(np.where(np.isfinite(hi), hi, 0.0)))
        p0 = np.clip(np.where(np.isfinite(start[idx]), start[idx], 0.0), eps_lo, eps_hi)
        res = least_squares(resid, p0, jac=jac, bounds=(lo, hi), method="trf", x_scale="jac",
                            max_nfev=2000, ftol=1e-12, xtol=1e-12, gtol=1e-12)
        if best is None or res.cost < best.cost - 1e-12 * (1 + best.cost):
            best = res
    return best, lo, hi, idx


def _expand(p: np.ndarray, use_tau: bool) -> np.ndarray:
    if use_tau:
        return np.asarray(p, dtype=float)
    return np.array([p[0], p[1], p[2], 0.0, p[3]], dtype=float)


def _original_covariance(res, idx: list[int], scale: np.ndarray, dof: int) -> np.ndarray:
    """``s^2 (J'J)^-1`` in scaled units mapped to original units (``D cov D``), 5 x 5.

    Rows/columns of fixed parameters (``tau`` when not identifiable) are NaN, and so is the
    whole matrix when ``J'J`` is singular.
    """
    s2_v = float(np.sum(res.fun**2)) / dof  # residual variance in standardised-y units
    cov = np.full((5, 5), np.nan)
    try:
        jtj_inv = np.linalg.inv(res.jac.T @ res.jac)
    except np.linalg.LinAlgError:
        return cov
    if np.all(np.isfinite(jtj_inv)):
        d = scale[idx]  # the scaled -> original map is affine with diagonal D
        cov[np.ix_(idx, idx)] = s2_v * jtj_inv * np.outer(d, d)
    return cov


def _params_at_bound(p: np.ndarray, lo: np.ndarray, hi: np.ndarray, idx: list[int],
                     tol: float = 1e-6) -> tuple[str, ...]:
    """Names of the free parameters within ``tol`` (relative) of a finite bound."""
    return tuple(
        PARAM_NAMES[j]
        for j, val, l_, h_ in zip(idx, p, lo, hi)
        if (np.isfinite(l_) and val - l_ <= tol * (1 + abs(l_)))
        or (np.isfinite(h_) and h_ - val <= tol * (1 + abs(h_)))
    )


def fit_sigmoid_law(
    log_c,
    t,
    y,
    *,
    n_starts: int = 5,
    start: Mapping[str, float] | None = None,
) -> SigmoidFit:
    """Fit ``Y ~ L / (1 + exp(-k (log C - log C0))) + tau T + b`` by nonlinear least squares.

    Parameters
    ----------
    log_c : array-like
        Natural log of the pretraining compute ``C`` in FLOPs (``C = 6 N D``, see
        :func:`log_compute`).
    t : array-like
        Treatment, 1 = fine-tuned / instruct, 0 = pretrained (bool or 0/1).
    y : array-like
        Scores (any scale, e.g. the leaderboard's normalized 0-100 scores).
    n_starts : int, default 5
        Number of starting values refined by the optimiser. Starting values come from a fixed
        12 x 15 grid over ``(k, log_c0)`` on which ``(L, tau, b)`` are solved by linear least
        squares; the ``n_starts`` best grid points are refined with
        :func:`scipy.optimize.least_squares` (``trf``, analytic Jacobian) and the lowest cost
        is kept. Deterministic.
    start : mapping, optional
        An extra starting value (keys :data:`PARAM_NAMES`, original units), tried first.

    Returns
    -------
    SigmoidFit

    Raises
    ------
    ValueError
        Fewer than 6 points, NaN/inf values, non-binary ``t``, mismatched lengths, constant
        ``log_c`` or ``y``, or ``log_c`` that looks like raw FLOPs rather than its log.

    Notes
    -----
    Fitting is done on standardised ``u = (log_c - mean) / sd`` and ``v = (y - mean) / sd``
    with bounds (in original units) ``0 < L <= 10 (max y - min y)``,
    ``1e-3 <= k sd(log_c) <= 50`` and ``log_c0`` within two ranges of ``log_c`` either side of
    the data; ``tau`` and ``b`` are free. Estimates and the covariance are mapped back to the
    original units. A parameter that ends on a bound is listed in ``at_bound`` (typical when
    the data do not show both plateaus: ``L`` and ``b`` then trade off). When all ``t`` are
    equal, ``tau`` is not identifiable and is fixed at 0 (``tau_fixed=True``).
    """
    x, tt, yy = _check_sigmoid_inputs(log_c, t, y)
    if n_starts < 1:
        raise ValueError(f"n_starts must be >= 1, found {n_starts}")
    n = len(x)
    use_tau = 0 < tt.sum() < n
    xm, xs = float(x.mean()), float(x.std())
    ym, ys = float(yy.mean()), float(yy.std())
    u, v = (x - xm) / xs, (yy - ym) / ys

    extra = None
    if start is not None:
        missing = set(PARAM_NAMES) - set(start)
        if missing:
            raise ValueError(f"start is missing parameter(s) {sorted(missing)}")
        extra = np.array([start["L"] / ys, start["k"] * xs, (start["log_c0"] - xm) / xs,
                          start["tau"] / ys, (start["b"] - ym) / ys])

    res, lo, hi, idx = _fit_scaled(u, tt, v, use_tau, n_starts, extra)
    p_scaled = _expand(res.x, use_tau)
    # back to original units: L, tau scale with ys; b = ys*b_v + ym; k = k_u/xs; x0 = xm + xs*u0
    params = np.array([ys * p_scaled[0], p_scaled[1] / xs, xm + xs * p_scaled[2],
                       ys * p_scaled[3], ys * p_scaled[4] + ym])
    dof = n - len(idx)
    cov = _original_covariance(res, idx, np.array([ys, 1.0 / xs, xs, ys, ys]), dof)
    diag = np.diag(cov)
    se = {name: float(np.sqrt(diag[i])) if np.isfinite(diag[i]) and diag[i] >= 0 else float("nan")
          for i, name in enumerate(PARAM_NAMES)}
    rss = float(np.sum(res.fun**2)) * ys**2
    at_bound = _params_at_bound(res.x, lo, hi, idx)
    tss = float(np.sum((yy - ym) ** 2))
    converged = bool(res.success and res.status > 0 and np.all(np.isfinite(cov[np.ix_(idx, idx)])))
    notes = []
    if not use_tau:
        notes.append(f"all T = {int(tt[0])}: tau is not identifiable and was fixed at 0")
    if at_bound:
        notes.append(f"parameter(s) {', '.join(at_bound)} at a bound; their SEs are unreliable")
    if not converged:
        singular = res.success and not np.all(np.isfinite(cov[np.ix_(idx, idx)]))
        notes.append("J'J is singular: the parameters are not identifiable from these data "
                     "(e.g. no increasing trend)" if singular else f"optimiser: {res.message}")
    return SigmoidFit(
        L=float(params[0]), k=float(params[1]), log_c0=float(params[2]),
        tau=float(params[3]), b=float(params[4]), se=se, cov=cov,
        r2=1.0 - rss / tss, n=n, n_treated=int(tt.sum()), resid_std=float(np.sqrt(rss / dof)),
        converged=converged, tau_fixed=not use_tau, at_bound=at_bound, notes="; ".join(notes),
    )


# ----------------------------------------------------------------------------- bootstrap core
def _resample_indices(
    rng: np.random.Generator, t: np.ndarray, groups: np.ndarray | None
) -> np.ndarray:
    """One bootstrap resample: units within each arm, or whole clusters when ``groups``."""
    if groups is not None:
        labels, inverse = np.unique(groups, return_inverse=True)
        members = [np.flatnonzero(inverse == g) for g in range(len(labels))]
        pick = rng.integers(0, len(labels), size=len(labels))
        return np.concatenate([members[g] for g in pick])
    parts = []
    for arm in (0, 1):
        arm_idx = np.flatnonzero(t == arm)
        if len(arm_idx):
            parts.append(arm_idx[rng.integers(0, len(arm_idx), size=len(arm_idx))])
    return np.concatenate(parts)


def _bootstrap(
    stat: Callable[[np.ndarray], np.ndarray],
    t: np.ndarray,
    n_boot: int,
    random_state,
    groups: np.ndarray | None,
    what: str,
) -> tuple[np.ndarray, int]:
    """Run ``stat`` on ``n_boot`` resamples; failed replicates (ValueError) are dropped."""
    rng = np.random.default_rng(random_state)
    out, failed = [], 0
    for _ in range(n_boot):
        idx = _resample_indices(rng, t, groups)
        try:
            val = np.atleast_1d(np.asarray(stat(idx), dtype=float))
        except ValueError:
            failed += 1
            continue
        if not np.all(np.isfinite(val)):
            failed += 1
            continue
        out.append(val)
    if n_boot > 0 and len(out) < (n_boot + 1) // 2:
        raise ValueError(
            f"bootstrap for {what}: only {len(out)} of {n_boot} replicates succeeded; "
            "the estimate is too fragile to bootstrap (check overlap / sample size)"
        )
    return (np.vstack(out) if out else np.empty((0, 0))), failed


def _percentile_ci(samples: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1.0 - ci) / 2.0
    return (np.quantile(samples, alpha, axis=0), np.quantile(samples, 1.0 - alpha, axis=0))


def _check_groups(groups, n: int) -> np.ndarray | None:
    if groups is None:
        return None
    g = np.asarray(groups)
    if g.ndim != 1 or len(g) != n:
        raise ValueError(f"groups must be one-dimensional of length {n}, found shape {g.shape}")
    if pd.isna(g).any():
        raise ValueError("groups contains missing values")
    return g


# ----------------------------------------------------------------------------- sigmoid bootstrap
@dataclass(frozen=True)
class SigmoidBootstrap:
    """Result of :func:`bootstrap_sigmoid`.

    Attributes
    ----------
    fit : SigmoidFit
        Fit on the full data.
    samples : numpy.ndarray
        ``(n_ok, 5)`` bootstrap estimates in the order of :data:`PARAM_NAMES`.
    ci_low, ci_high : dict
        Percentile interval bounds per parameter.
    ci : float
        Nominal coverage.
    n_boot, n_failed : int
        Requested replicates and replicates dropped (resample not fittable).
    """

    fit: SigmoidFit
    samples: np.ndarray = field(repr=False, compare=False)
    ci_low: Mapping[str, float]
    ci_high: Mapping[str, float]
    ci: float
    n_boot: int
    n_failed: int

    def to_frame(self) -> pd.DataFrame:
        """Table with columns ``estimate, se, ci_low, ci_high, boot_se`` per parameter."""
        df = self.fit.to_frame()
        df["ci_low"] = [self.ci_low[p] for p in PARAM_NAMES]
        df["ci_high"] = [self.ci_high[p] for p in PARAM_NAMES]
        df["boot_se"] = self.samples.std(axis=0, ddof=1) if len(self.samples) > 1 else np.nan
        return df

    def summary(self) -> str:
        """Multi-line text summary."""
        lines = [
            f"Sigmoid scaling law, percentile bootstrap ({self.n_boot - self.n_failed} of "
            f"{self.n_boot} replicates, {100 * self.ci:g}% intervals)",
            f"n = {self.fit.n}, R^2 = {self.fit.r2:.4f}",
        ]
        for p in PARAM_NAMES:
            if p == "tau" and self.fit.tau_fixed:
                lines.append(f"  {p:>7s} = 0 (fixed: all T equal)")
                continue
            lines.append(
                f"  {p:>7s} = {self.fit.params[p]: .5g}  [{self.ci_low[p]:.5g}, {self.ci_high[p]:.5g}]"
            )
        return "\n".join(lines)


def bootstrap_sigmoid(
    log_c,
    t,
    y,
    *,
    n_boot: int = 200,
    ci: float = 0.95,
    random_state=None,
    n_starts: int = 2,
    groups=None,
) -> SigmoidBootstrap:
    """Percentile bootstrap intervals for the sigmoid-law parameters.

    Models (rows) are resampled with replacement within each arm (``T = 0`` and ``T = 1``
    keep their sizes), or, when ``groups`` is given (e.g. the base model), whole groups are
    resampled. Each replicate is refitted with :func:`fit_sigmoid_law` starting from the
    full-data estimate plus ``n_starts`` grid starts.

    Parameters
    ----------
    log_c, t, y : array-like
        As in :func:`fit_sigmoid_law`.
    n_boot : int, default 200
        Number of bootstrap replicates (>= 1).
    ci : float, default 0.95
        Nominal coverage of the percentile intervals.
    random_state : int, numpy Generator or None
        Seed for :func:`numpy.random.default_rng`.
    n_starts : int, default 2
        Grid starts per replicate (in addition to the full-data estimate).
    groups : array-like, optional
        Cluster labels for a cluster bootstrap.

    Returns
    -------
    SigmoidBootstrap
    """
    _check_ci(ci)
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, found {n_boot}")
    x, tt, yy = _check_sigmoid_inputs(log_c, t, y)
    g = _check_groups(groups, len(x))
    fit = fit_sigmoid_law(x, tt, yy, n_starts=n_starts)
    start = fit.params

    def stat(idx: np.ndarray) -> np.ndarray:
        if not fit.tau_fixed and len(np.unique(tt[idx])) < 2:
            raise ValueError("resample has a single arm")
        f = fit_sigmoid_law(x[idx], tt[idx], yy[idx], n_starts=n_starts, start=start)
        return np.array([f.params[p] for p in PARAM_NAMES])

    samples, failed = _bootstrap(stat, tt, n_boot, random_state, g, "the sigmoid law")
    low, high = _percentile_ci(samples, ci)
    return SigmoidBootstrap(
        fit=fit, samples=samples,
        ci_low={p: float(low[i]) for i, p in enumerate(PARAM_NAMES)},
        ci_high={p: float(high[i]) for i, p in enumerate(PARAM_NAMES)},
        ci=ci, n_boot=n_boot, n_failed=failed,
    )


# ----------------------------------------------------------------------------- ATE: models
def _check_ate_inputs(x, t, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xx = _as_float(x, "x")
    yy = _as_float(y, "y")
    tt = _as_treatment(t, "t")
    _check_lengths(x=xx, t=tt, y=yy)
    n1, n0 = int(tt.sum()), int(len(tt) - tt.sum())
    if n1 < 2 or n0 < 2:
        raise ValueError(
            f"need at least 2 units in each arm, found {n1} treated (T=1) and {n0} control (T=0)"
        )
    return xx, tt, yy


def _natural_spline_basis(x: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """Natural cubic spline basis (ESL eq. 5.4-5.5): columns 1, x, N_3..N_K; linear outside."""
    K = len(knots)
    if K < 3:
        cols = [np.ones_like(x), x] if K == 2 else [np.ones_like(x)]
        return np.column_stack(cols)

    def d(j: int) -> np.ndarray:
        return (np.maximum(x - knots[j], 0.0) ** 3 - np.maximum(x - knots[-1], 0.0) ** 3) / (
            knots[-1] - knots[j]
        )

    dK1 = d(K - 2)
    cols = [np.ones_like(x), x] + [d(j) - dK1 for j in range(K - 2)]
    return np.column_stack(cols)


def _auto_method(x: np.ndarray) -> str:
    return "stratified" if len(np.unique(x)) <= len(x) / 2 else "spline"


@dataclass(frozen=True)
class _OutcomeModel:
    """Fitted per-arm outcome regression, evaluated on a set of units."""

    m1: np.ndarray  # E[Y | T=1, X=x_i] on the units kept
    m0: np.ndarray
    keep: np.ndarray  # boolean mask over the input units
    description: str


def _support_mask(x: np.ndarray, t: np.ndarray, method: str) -> np.ndarray:
    if method == "stratified":
        in1 = np.isin(x, np.unique(x[t == 1]))
        in0 = np.isin(x, np.unique(x[t == 0]))
        keep = in1 & in0
        if not keep.any():
            raise ValueError("no x value is observed in both arms (no common support)")
        return keep
    lo = max(x[t == 1].min(), x[t == 0].min())
    hi = min(x[t == 1].max(), x[t == 0].max())
    if lo >= hi:
        raise ValueError(
            f"x ranges of the arms do not overlap: T=1 in [{x[t == 1].min():.4g}, "
            f"{x[t == 1].max():.4g}], T=0 in [{x[t == 0].min():.4g}, {x[t == 0].max():.4g}]"
        )
    return (x >= lo) & (x <= hi)


def _fit_outcome_model(
    x: np.ndarray, t: np.ndarray, y: np.ndarray, method: str, n_knots: int, keep: np.ndarray
) -> _OutcomeModel:
    xs, ts, ys = x[keep], t[keep], y[keep]
    if min(ts.sum(), len(ts) - ts.sum()) < 1:
        raise ValueError("an arm is empty inside the common support")
    if method == "stratified":
        values, inverse = np.unique(xs, return_inverse=True)
        m = np.zeros((2, len(values)))
        for arm in (0, 1):
            sums = np.bincount(inverse[ts == arm], weights=ys[ts == arm], minlength=len(values))
            counts = np.bincount(inverse[ts == arm], minlength=len(values))
            if np.any(counts == 0):
                raise ValueError("a stratum lacks one arm")  # cannot happen after _support_mask
            m[arm] = sums / counts
        return _OutcomeModel(m[1][inverse], m[0][inverse], keep,
                             f"stratified means over {len(values)} x values")
    # natural cubic spline per arm, knots at pooled quantiles of x within the support
    n_distinct = min(len(np.unique(xs[ts == 1])), len(np.unique(xs[ts == 0])))
    K = int(max(1, min(n_knots, n_distinct)))
    knots = np.unique(np.quantile(xs, np.linspace(0, 1, K))) if K > 1 else np.array([xs.mean()])
    center, scale = xs.mean(), max(xs.std(), 1e-12)
    z, zk = (xs - center) / scale, (knots - center) / scale
    basis = _natural_spline_basis(z, zk)
    preds = {}
    for arm in (0, 1):
        coef, *_ = np.linalg.lstsq(basis[ts == arm], ys[ts == arm], rcond=None)
        preds[arm] = basis @ coef
    return _OutcomeModel(preds[1], preds[0], keep,
                         f"natural cubic spline per arm, {len(knots)} knots at quantiles of x")


def _logistic_fit(features: np.ndarray, t: np.ndarray, penalty: float) -> np.ndarray:
    """Ridge-penalised logistic regression by damped Newton; returns fitted P(T=1|x)."""
    X = np.column_stack([np.ones(len(t)), features])
    pen = np.full(X.shape[1], penalty)
    pen[0] = penalty * 1e-6  # near-unpenalised intercept, still strictly convex

    def objective(beta: np.ndarray) -> float:
        eta = X @ beta
        return float(np.sum(np.logaddexp(0.0, eta) - t * eta) + 0.5 * np.sum(pen * beta**2))

    beta = np.zeros(X.shape[1])
    p_bar = np.clip(t.mean(), 1e-6, 1 - 1e-6)
    beta[0] = np.log(p_bar / (1 - p_bar))
    obj = objective(beta)
    for _ in range(200):
        p = expit(X @ beta)
        grad = X.T @ (p - t) + pen * beta
        hess = (X * (p * (1 - p))[:, None]).T @ X + np.diag(pen)
        step = np.linalg.solve(hess, grad)
        lr = 1.0
        while True:
            cand = beta - lr * step
            new_obj = objective(cand)
            if new_obj <= obj + 1e-12 * (1 + abs(obj)) or lr < 1e-10:
                break
            lr *= 0.5
        beta, converged = cand, abs(obj - new_obj) <= 1e-12 * (1 + abs(obj))
        obj = new_obj
        if converged and np.max(np.abs(lr * step)) < 1e-8:
            break
    return expit(X @ beta)


def propensity_scores(x, t, *, degree: int = 1, penalty: float = 1e-3) -> np.ndarray:
    """Logistic propensity ``P(T = 1 | x)`` with a polynomial of ``degree`` in standardised x.

    Fitted by Newton's method with a small ridge penalty (``penalty / 2 * ||beta||^2`` on the
    slope coefficients), which keeps the estimate finite under (quasi-)separation.

    Parameters
    ----------
    x : array-like
        Adjustment covariate (``log C``).
    t : array-like
        Binary treatment.
    degree : int, default 1
        Polynomial degree in ``x`` (1 = logistic-linear).
    penalty : float, default 1e-3
        Ridge penalty (on standardised features).

    Returns
    -------
    numpy.ndarray
        Propensity score per unit.
    """
    xx = _as_float(x, "x")
    tt = _as_treatment(t, "t")
    _check_lengths(x=xx, t=tt)
    if degree < 1:
        raise ValueError(f"degree must be >= 1, found {degree}")
    if penalty < 0:
        raise ValueError(f"penalty must be >= 0, found {penalty}")
    return _propensity(xx, tt, degree, penalty)


def _propensity(x: np.ndarray, t: np.ndarray, degree: int, penalty: float) -> np.ndarray:
    z = (x - x.mean()) / max(x.std(), 1e-12)
    feats = np.column_stack([z**p for p in range(1, degree + 1)])
    feats = (feats - feats.mean(axis=0)) / np.where(feats.std(axis=0) > 0, feats.std(axis=0), 1.0)
    return _logistic_fit(feats, t.astype(float), max(penalty, 1e-10))


# ----------------------------------------------------------------------------- ATE: results
@dataclass(frozen=True)
class ATEResult:
    """Result of an ATE estimator (:func:`ate_backdoor`, :func:`ate_ipw`, :func:`ate_aipw`).

    Attributes
    ----------
    estimator : str
        ``"backdoor"``, ``"ipw"`` or ``"aipw"``.
    ate : float
        ``mu1 - mu0``.
    mu1, mu0 : float
        Estimated ``E[Y | do(T=1)]`` and ``E[Y | do(T=0)]``.
    ci_low, ci_high : float
        Percentile bootstrap interval (NaN when ``n_boot = 0``).
    ci : float
        Nominal coverage.
    naive : float
        Unadjusted difference in means ``mean(Y | T=1) - mean(Y | T=0)`` on all units.
    n_treated, n_control : int
        Units per arm in the input.
    n_used : int
        Units entering the estimate (after common support / trimming).
    share_outside_support : float
        Share of input units dropped (outside the common support or trimmed).
    n_boot, n_boot_failed : int
        Requested and dropped bootstrap replicates.
    boot_samples : numpy.ndarray
        Bootstrap ATEs.
    details : str
        Model description (outcome model, propensity model, trimming).
    """

    estimator: str
    ate: float
    mu1: float
    mu0: float
    ci_low: float
    ci_high: float
    ci: float
    naive: float
    n_treated: int
    n_control: int
    n_used: int
    share_outside_support: float
    n_boot: int
    n_boot_failed: int
    boot_samples: np.ndarray = field(repr=False, compare=False)
    details: str = ""

    def summary(self) -> str:
        """Multi-line text summary."""
        if self.n_boot:
            ci_txt = (f"[{self.ci_low:.4g}, {self.ci_high:.4g}] ({100 * self.ci:g}% percentile "
                      f"bootstrap, {self.n_boot - self.n_boot_failed}/{self.n_boot} replicates)")
        else:
            ci_txt = "not computed (n_boot = 0)"
        return "\n".join([
            f"ATE of fine-tuning, {self.estimator} estimator: {self.ate:.4g}  CI {ci_txt}",
            f"  E[Y|do(T=1)] = {self.mu1:.4g}, E[Y|do(T=0)] = {self.mu0:.4g}; "
            f"naive difference in means = {self.naive:.4g}",
            f"  n treated = {self.n_treated}, n control = {self.n_control}, used = {self.n_used} "
            f"({100 * self.share_outside_support:.1f}% outside common support / trimmed)",
            f"  {self.details}",
        ])


def _make_result(
    estimator: str,
    point: Callable[[np.ndarray], tuple[float, float, int, str]],
    x: np.ndarray,
    t: np.ndarray,
    y: np.ndarray,
    n_boot: int,
    ci: float,
    random_state,
    groups,
) -> ATEResult:
    _check_ci(ci)
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, found {n_boot}")
    g = _check_groups(groups, len(x))
    all_idx = np.arange(len(x))
    mu1, mu0, n_used, details = point(all_idx)

    def stat(idx: np.ndarray) -> float:
        if min(t[idx].sum(), len(idx) - t[idx].sum()) < 2:
            raise ValueError("resample has fewer than 2 units in an arm")
        m1, m0, _, _ = point(idx)
        return m1 - m0

    samples, failed = _bootstrap(stat, t, n_boot, random_state, g, f"the {estimator} ATE")
    samples = samples.ravel()
    low, high = _percentile_ci(samples, ci) if n_boot else (np.nan, np.nan)
    n1 = int(t.sum())
    return ATEResult(
        estimator=estimator, ate=mu1 - mu0, mu1=mu1, mu0=mu0,
        ci_low=float(low), ci_high=float(high), ci=ci,
        naive=float(y[t == 1].mean() - y[t == 0].mean()),
        n_treated=n1, n_control=len(t) - n1, n_used=n_used,
        share_outside_support=1.0 - n_used / len(t), n_boot=n_boot, n_boot_failed=failed,
        boot_samples=samples, details=details,
    )


def _resolve_method(method: str, x: np.ndarray) -> str:
    if method not in ("auto", "stratified", "spline"):
        raise ValueError(f"method must be 'auto', 'stratified' or 'spline', found {method!r}")
    return _auto_method(x) if method == "auto" else method


def ate_backdoor(
    x,
    t,
    y,
    *,
    method: str = "auto",
    n_knots: int = 4,
    n_boot: int = 500,
    ci: float = 0.95,
    random_state=None,
    groups=None,
) -> ATEResult:
    """ATE of fine-tuning by backdoor adjustment over ``x = log C`` (outcome regression).

    ``E[Y | do(T=t)] = mean_i m_t(x_i)`` where ``m_t(x) = E[Y | T=t, X=x]`` is fitted
    separately in each arm and the average runs over the empirical distribution of ``x`` of
    all units in the common support.

    Parameters
    ----------
    x : array-like
        Adjustment covariate, the natural log of pretraining compute in FLOPs.
    t : array-like
        Treatment (1 = fine-tuned, 0 = pretrained).
    y : array-like
        Outcome (a benchmark score).
    method : {"auto", "stratified", "spline"}, default "auto"
        ``"stratified"``: ``m_t(x)`` is the mean of ``Y`` in arm ``t`` among units with exactly
        that ``x`` (one stratum per base model); strata observed in only one arm are dropped
        (common support) and the strata are weighted by their total number of units.
        ``"spline"``: a natural cubic spline in ``x`` per arm (OLS; ``n_knots`` knots at
        pooled quantiles, linear beyond the boundary knots, fewer knots if an arm has fewer
        distinct ``x``), units outside the overlap of the arms' ``x`` ranges are dropped.
        ``"auto"`` picks ``"stratified"`` when ``x`` has at most ``n / 2`` distinct values.
    n_knots : int, default 4
        Knots of the spline (ignored for ``"stratified"``).
    n_boot : int, default 500
        Bootstrap replicates (0 to skip the interval).
    ci : float, default 0.95
        Nominal coverage of the percentile interval.
    random_state : int, numpy Generator or None
        Seed for the bootstrap.
    groups : array-like, optional
        Cluster labels (e.g. base model) for a cluster bootstrap instead of resampling units
        within arms.

    Returns
    -------
    ATEResult
    """
    xx, tt, yy = _check_ate_inputs(x, t, y)
    meth = _resolve_method(method, xx)
    if n_knots < 2:
        raise ValueError(f"n_knots must be >= 2, found {n_knots}")

    def point(idx: np.ndarray):
        xi, ti, yi = xx[idx], tt[idx], yy[idx]
        keep = _support_mask(xi, ti, meth)
        om = _fit_outcome_model(xi, ti, yi, meth, n_knots, keep)
        return float(om.m1.mean()), float(om.m0.mean()), int(keep.sum()), om.description

    return _make_result("backdoor", point, xx, tt, yy, n_boot, ci, random_state, groups)


def _ipw_mask(e: np.ndarray, t: np.ndarray, trim: float, common_support: bool) -> np.ndarray:
    keep = (e >= trim) & (e <= 1.0 - trim)
    if common_support:
        lo = max(e[t == 1].min(), e[t == 0].min())
        hi = min(e[t == 1].max(), e[t == 0].max())
        keep &= (e >= lo) & (e <= hi)
    if min(t[keep].sum(), keep.sum() - t[keep].sum()) < 1:
        raise ValueError(
            "after trimming/common support an arm is empty; lower trim or check overlap "
            f"(propensity range T=1 [{e[t == 1].min():.3g}, {e[t == 1].max():.3g}], "
            f"T=0 [{e[t == 0].min():.3g}, {e[t == 0].max():.3g}])"
        )
    return keep


def _check_trim(trim: float) -> None:
    if not 0.0 <= trim < 0.5:
        raise ValueError(f"trim must be in [0, 0.5), found {trim}")


def _ipw_details(degree: int, penalty: float, trim: float, common_support: bool) -> str:
    cs = "min-max common support on e(x), " if common_support else ""
    return (f"logistic propensity (degree {degree} in x, ridge {penalty:g}); {cs}"
            f"trimmed to e in [{trim:g}, {1 - trim:g}]; Hajek-normalised (stabilised) weights")


def ate_ipw(
    x,
    t,
    y,
    *,
    degree: int = 1,
    penalty: float = 1e-3,
    trim: float = 0.01,
    common_support: bool = False,
    n_boot: int = 500,
    ci: float = 0.95,
    random_state=None,
    groups=None,
) -> ATEResult:
    """ATE of fine-tuning by inverse-propensity weighting on ``x = log C``.

    The propensity ``e(x) = P(T=1 | x)`` is a logistic regression on a polynomial of
    ``degree`` in standardised ``x`` (see :func:`propensity_scores`), refitted in every
    bootstrap replicate. Units with ``e`` outside ``[trim, 1 - trim]`` are dropped (fixed
    trimming), and, only when ``common_support=True``, also those outside the min-max common
    support ``[max_t min e, min_t max e]``. The means use Hajek (normalised, i.e. stabilised)
    weights::

        mu1 = sum(T Y / e) / sum(T / e),   mu0 = sum((1-T) Y / (1-e)) / sum((1-T) / (1-e)).

    Parameters
    ----------
    x, t, y : array-like
        As in :func:`ate_backdoor`.
    degree : int, default 1
        Polynomial degree of the logistic propensity in ``x``.
    penalty : float, default 1e-3
        Ridge penalty of the propensity model.
    trim : float, default 0.01
        Propensity trimming threshold.
    common_support : bool, default False
        Also drop units outside the min-max propensity common support. Off by default: the
        bounds are set by single extreme units, whose large weights then bias the estimate
        in simulations (fixed ``trim`` thresholds do not).
    n_boot, ci, random_state, groups
        As in :func:`ate_backdoor`.

    Returns
    -------
    ATEResult
    """
    xx, tt, yy = _check_ate_inputs(x, t, y)
    _check_trim(trim)
    if degree < 1:
        raise ValueError(f"degree must be >= 1, found {degree}")
    details = _ipw_details(degree, penalty, trim, common_support)

    def point(idx: np.ndarray):
        xi, ti, yi = xx[idx], tt[idx], yy[idx]
        e = _propensity(xi, ti, degree, penalty)
        keep = _ipw_mask(e, ti, trim, common_support)
        e, ti, yi = e[keep], ti[keep], yi[keep]
        w1, w0 = ti / e, (1 - ti) / (1 - e)
        return float(np.sum(w1 * yi) / w1.sum()), float(np.sum(w0 * yi) / w0.sum()), int(keep.sum()), details

    return _make_result("ipw", point, xx, tt, yy, n_boot, ci, random_state, groups)


def ate_aipw(
    x,
    t,
    y,
    *,
    method: str = "auto",
    n_knots: int = 4,
    degree: int = 1,
    penalty: float = 1e-3,
    trim: float = 0.01,
    n_boot: int = 500,
    ci: float = 0.95,
    random_state=None,
    groups=None,
) -> ATEResult:
    """Doubly robust (augmented IPW) ATE of fine-tuning.

    ``mu_t = mean_i m_t(x_i) + sum_i w_ti (Y_i - m_t(x_i)) / sum_i w_ti`` with the outcome
    model of :func:`ate_backdoor` (``method``, ``n_knots``) and the Hajek-normalised weights of
    :func:`ate_ipw` (``w_1 = T/e``, ``w_0 = (1-T)/(1-e)``). The units used are those inside the
    outcome model's common support and inside the propensity trimming bounds. Consistent if
    either model is correct. With the stratified outcome model the residuals average to zero
    within every (stratum, arm) and ``e(x)`` is constant within a stratum, so AIPW then equals
    the stratified backdoor estimate exactly.

    Parameters
    ----------
    x, t, y : array-like
        As in :func:`ate_backdoor`.
    method, n_knots
        Outcome model, as in :func:`ate_backdoor`.
    degree, penalty, trim
        Propensity model and trimming, as in :func:`ate_ipw`.
    n_boot, ci, random_state, groups
        As in :func:`ate_backdoor`.

    Returns
    -------
    ATEResult
    """
    xx, tt, yy = _check_ate_inputs(x, t, y)
    meth = _resolve_method(method, xx)
    _check_trim(trim)
    if degree < 1 or n_knots < 2:
        raise ValueError(f"need degree >= 1 and n_knots >= 2, found {degree} and {n_knots}")

    def point(idx: np.ndarray):
        xi, ti, yi = xx[idx], tt[idx], yy[idx]
        e = _propensity(xi, ti, degree, penalty)
        keep = (e >= trim) & (e <= 1 - trim)
        if min(ti[keep].sum(), keep.sum() - ti[keep].sum()) < 1:
            raise ValueError("after propensity trimming an arm is empty; lower trim")
        kept = np.flatnonzero(keep)  # outcome-model common support among the trimmed units
        keep = np.zeros_like(keep)
        keep[kept[_support_mask(xi[kept], ti[kept], meth)]] = True
        om = _fit_outcome_model(xi, ti, yi, meth, n_knots, keep)
        e, ti, yi = e[keep], ti[keep], yi[keep]
        w1, w0 = ti / e, (1 - ti) / (1 - e)
        mu1 = om.m1.mean() + np.sum(w1 * (yi - om.m1)) / w1.sum()
        mu0 = om.m0.mean() + np.sum(w0 * (yi - om.m0)) / w0.sum()
        details = f"{om.description}; {_ipw_details(degree, penalty, trim, False)}"
        return float(mu1), float(mu0), int(keep.sum()), details

    return _make_result("aipw", point, xx, tt, yy, n_boot, ci, random_state, groups)


def common_strata(x, t) -> np.ndarray:
    """Mask of the units whose exact ``x`` value is observed in both arms.

    These are the units the stratified backdoor estimator (:func:`ate_backdoor` with
    ``method="stratified"``) averages over: one stratum per distinct ``x`` (per base model's
    compute), kept only when it holds both pretrained and fine-tuned models.

    Parameters
    ----------
    x, t : array-like
        Adjustment covariate and binary treatment.

    Returns
    -------
    numpy.ndarray
        Boolean mask, True for units in a stratum with both arms.
    """
    xx = _as_float(x, "x")
    tt = _as_treatment(t, "t")
    _check_lengths(x=xx, t=tt)
    in1 = np.isin(xx, np.unique(xx[tt == 1]))
    in0 = np.isin(xx, np.unique(xx[tt == 0]))
    return in1 & in0


def ate_ipw_strata(
    x,
    t,
    y,
    *,
    degree: int = 1,
    penalty: float = 1e-3,
    trim: float = 0.01,
    n_boot: int = 500,
    ci: float = 0.95,
    random_state=None,
    groups=None,
) -> ATEResult:
    """IPW ATE restricted to the stratified backdoor estimator's support.

    Identical to :func:`ate_ipw` except that only the units of :func:`common_strata` (their
    exact ``x`` is observed in both arms) enter, recomputed in every bootstrap replicate.
    It therefore averages over the same units as the stratified backdoor estimate, so a gap
    between the two comes from the propensity model, not from the population. (With a
    saturated propensity, one share per stratum, the Hajek IPW estimate *equals* the
    stratified backdoor estimate; the logistic propensity in ``x`` smooths those shares.)

    Parameters
    ----------
    x, t, y : array-like
        As in :func:`ate_backdoor`.
    degree, penalty, trim
        Propensity model and trimming, as in :func:`ate_ipw`.
    n_boot, ci, random_state, groups
        As in :func:`ate_backdoor`.

    Returns
    -------
    ATEResult
        ``estimator == "ipw_strata"``; ``n_used`` counts units inside the strata and the
        trimming bounds.
    """
    xx, tt, yy = _check_ate_inputs(x, t, y)
    _check_trim(trim)
    if degree < 1:
        raise ValueError(f"degree must be >= 1, found {degree}")
    details = "units in strata with both arms; " + _ipw_details(degree, penalty, trim, False)

    def point(idx: np.ndarray):
        xi, ti, yi = xx[idx], tt[idx], yy[idx]
        keep = _support_mask(xi, ti, "stratified")
        xi, ti, yi = xi[keep], ti[keep], yi[keep]
        if min(ti.sum(), len(ti) - ti.sum()) < 2:
            raise ValueError("fewer than 2 units in an arm inside the common strata")
        e = _propensity(xi, ti, degree, penalty)
        k2 = _ipw_mask(e, ti, trim, False)
        e, ti, yi = e[k2], ti[k2], yi[k2]
        w1, w0 = ti / e, (1 - ti) / (1 - e)
        return (float(np.sum(w1 * yi) / w1.sum()), float(np.sum(w0 * yi) / w0.sum()),
                int(k2.sum()), details)

    return _make_result("ipw_strata", point, xx, tt, yy, n_boot, ci, random_state, groups)


# ----------------------------------------------------------------------------- overlap
@dataclass(frozen=True)
class OverlapDiagnostics:
    """Positivity diagnostics from :func:`overlap_diagnostics`.

    Attributes
    ----------
    propensity : numpy.ndarray
        Estimated ``P(T=1 | x)`` per unit.
    t : numpy.ndarray
        Treatment per unit.
    ps_range_treated, ps_range_control : tuple of float
        (min, max) propensity in each arm.
    x_range_treated, x_range_control : tuple of float
        (min, max) of ``x`` in each arm.
    common_support : tuple of float
        Propensity interval ``[max_t min e, min_t max e]`` (empty if low > high).
    share_outside, share_outside_treated, share_outside_control : float
        Share of units (overall / per arm) with propensity outside the common support.
    share_trimmed : float
        Share of units with propensity outside ``[trim, 1 - trim]``.
    trim : float
        Threshold used for ``share_trimmed``.
    """

    propensity: np.ndarray = field(repr=False, compare=False)
    t: np.ndarray = field(repr=False, compare=False)
    ps_range_treated: tuple[float, float]
    ps_range_control: tuple[float, float]
    x_range_treated: tuple[float, float]
    x_range_control: tuple[float, float]
    common_support: tuple[float, float]
    share_outside: float
    share_outside_treated: float
    share_outside_control: float
    share_trimmed: float
    trim: float

    def summary(self) -> str:
        """Multi-line text summary."""
        lo, hi = self.common_support
        return "\n".join([
            "Overlap (positivity) diagnostics, logistic propensity e(x) = P(T=1 | x)",
            f"  e range T=1: [{self.ps_range_treated[0]:.3g}, {self.ps_range_treated[1]:.3g}], "
            f"T=0: [{self.ps_range_control[0]:.3g}, {self.ps_range_control[1]:.3g}]",
            f"  x range T=1: [{self.x_range_treated[0]:.4g}, {self.x_range_treated[1]:.4g}], "
            f"T=0: [{self.x_range_control[0]:.4g}, {self.x_range_control[1]:.4g}]",
            f"  common support on e: [{lo:.3g}, {hi:.3g}]" + ("  (EMPTY)" if lo > hi else ""),
            f"  outside common support: {100 * self.share_outside:.1f}% of units "
            f"(T=1 {100 * self.share_outside_treated:.1f}%, T=0 {100 * self.share_outside_control:.1f}%)",
            f"  e outside [{self.trim:g}, {1 - self.trim:g}]: {100 * self.share_trimmed:.1f}% of units",
        ])


def overlap_diagnostics(
    x, t, *, degree: int = 1, penalty: float = 1e-3, trim: float = 0.01
) -> OverlapDiagnostics:
    """Propensity-score overlap diagnostics for the fine-tuning ATE.

    Parameters
    ----------
    x, t : array-like
        Adjustment covariate (``log C``) and binary treatment.
    degree, penalty : int, float
        Propensity model, as in :func:`propensity_scores`.
    trim : float, default 0.01
        Threshold for the reported trimmed share.

    Returns
    -------
    OverlapDiagnostics
    """
    xx = _as_float(x, "x")
    tt = _as_treatment(t, "t")
    _check_lengths(x=xx, t=tt)
    _check_trim(trim)
    if tt.min() == tt.max():
        raise ValueError(f"t has a single arm (all T = {tt[0]}); overlap is undefined")
    e = propensity_scores(xx, tt, degree=degree, penalty=penalty)
    e1, e0 = e[tt == 1], e[tt == 0]
    lo, hi = max(e1.min(), e0.min()), min(e1.max(), e0.max())
    outside = (e < lo) | (e > hi)
    return OverlapDiagnostics(
        propensity=e, t=tt,
        ps_range_treated=(float(e1.min()), float(e1.max())),
        ps_range_control=(float(e0.min()), float(e0.max())),
        x_range_treated=(float(xx[tt == 1].min()), float(xx[tt == 1].max())),
        x_range_control=(float(xx[tt == 0].min()), float(xx[tt == 0].max())),
        common_support=(float(lo), float(hi)),
        share_outside=float(outside.mean()),
        share_outside_treated=float(outside[tt == 1].mean()),
        share_outside_control=float(outside[tt == 0].mean()),
        share_trimmed=float(((e < trim) | (e > 1 - trim)).mean()),
        trim=trim,
    )


# ----------------------------------------------------------------------------- table
_ESTIMATORS = {"backdoor": ate_backdoor, "ipw": ate_ipw, "aipw": ate_aipw,
               "ipw_strata": ate_ipw_strata}


def ate_by_outcome(
    df: pd.DataFrame,
    outcomes: Sequence[str],
    *,
    x: str,
    t: str,
    estimators: Sequence[str] = ("backdoor", "ipw"),
    n_boot: int = 500,
    ci: float = 0.95,
    random_state=0,
    dropna: bool = False,
    groups: str | None = None,
    estimator_kwargs: Mapping[str, Mapping] | None = None,
) -> pd.DataFrame:
    """Run the ATE estimators for several outcome columns into a tidy table.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per model.
    outcomes : sequence of str
        Score columns (e.g. ``hca.data.V2_BENCHMARKS``).
    x, t : str
        Columns holding ``log C`` and the 0/1 (or bool) treatment.
    estimators : sequence of {"backdoor", "ipw", "aipw", "ipw_strata"}
        Estimators to run.
    n_boot, ci, random_state
        Bootstrap settings, the same seed for every outcome and estimator (common random
        numbers when the rows are the same).
    dropna : bool, default False
        Drop rows with a missing outcome, per outcome. When False a missing value raises.
    groups : str, optional
        Column of cluster labels for a cluster bootstrap.
    estimator_kwargs : mapping, optional
        Extra keyword arguments per estimator, e.g. ``{"ipw": {"trim": 0.05}}``.

    Returns
    -------
    pandas.DataFrame
        Columns ``outcome, estimator, ate, ci_low, ci_high, n_treated, n_control, n_used,
        mu1, mu0, naive``.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, found {type(df).__name__}")
    needed = [x, t, *outcomes] + ([groups] if groups else [])
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(f"df is missing column(s) {missing}")
    unknown = [e for e in estimators if e not in _ESTIMATORS]
    if unknown:
        raise ValueError(f"unknown estimator(s) {unknown}; choose from {sorted(_ESTIMATORS)}")
    kwargs = dict(estimator_kwargs or {})
    rows = []
    for col in outcomes:
        sub = df
        if df[col].isna().any():
            if not dropna:
                raise ValueError(f"outcome column {col!r} has {int(df[col].isna().sum())} missing "
                                 "values; pass dropna=True to drop them")
            sub = df[df[col].notna()]
        for name in estimators:
            res = _ESTIMATORS[name](
                sub[x].to_numpy(), sub[t].to_numpy(), sub[col].to_numpy(), n_boot=n_boot, ci=ci,
                random_state=random_state, groups=None if groups is None else sub[groups].to_numpy(),
                **kwargs.get(name, {}),
            )
            rows.append({"outcome": col, "estimator": name, "ate": res.ate, "ci_low": res.ci_low,
                         "ci_high": res.ci_high, "n_treated": res.n_treated,
                         "n_control": res.n_control, "n_used": res.n_used, "mu1": res.mu1,
                         "mu0": res.mu0, "naive": res.naive})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- plots
def _get_ax(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 4))
    return ax


def plot_sigmoid_fit(
    fit: SigmoidFit,
    log_c,
    t,
    y,
    *,
    ax: "Axes | None" = None,
    labels: tuple[str, str] = ("pretrained (T=0)", "fine-tuned (T=1)"),
    flops_axis: bool = False,
) -> "Axes":
    """Scatter of the data coloured by ``T`` with the fitted curves for ``T = 0`` and ``T = 1``.

    Parameters
    ----------
    fit : SigmoidFit
        Result of :func:`fit_sigmoid_law`.
    log_c, t, y : array-like
        Data (natural log compute in FLOPs, treatment, score).
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure is created when None.
    labels : tuple of str
        Legend labels for ``T = 0`` and ``T = 1``.
    flops_axis : bool, default False
        Plot against ``C`` (FLOPs, log-scaled axis) instead of ``ln C``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    x = _as_float(log_c, "log_c")
    yy = _as_float(y, "y")
    tt = _as_treatment(t, "t")
    _check_lengths(log_c=x, t=tt, y=yy)
    ax = _get_ax(ax)
    grid = np.linspace(x.min(), x.max(), 200)
    xp = (lambda v: np.exp(v)) if flops_axis else (lambda v: v)
    colors = ("tab:blue", "tab:orange")
    for arm in (0, 1):
        mask = tt == arm
        if mask.any():
            ax.scatter(xp(x[mask]), yy[mask], s=14, alpha=0.6, color=colors[arm], label=labels[arm])
        if mask.any() or not fit.tau_fixed:
            ax.plot(xp(grid), fit.predict(grid, arm), color=colors[arm], lw=2)
    if flops_axis:
        ax.set_xscale("log")
        ax.set_xlabel("pretraining compute C (FLOPs)")
    else:
        ax.set_xlabel("ln C (C = pretraining FLOPs)")
    ax.set_ylabel("score")
    ax.set_title(f"sigmoid law: R$^2$ = {fit.r2:.2f}, $\\tau$ = {fit.tau:.2g}")
    ax.legend(loc="best", fontsize="small")
    return ax


def plot_ate(df: pd.DataFrame, *, ax: "Axes | None" = None) -> "Axes":
    """Forest plot of ATEs with their intervals, one row per outcome, offset by estimator.

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`ate_by_outcome` (columns ``outcome, estimator, ate, ci_low, ci_high``).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    needed = ["outcome", "estimator", "ate", "ci_low", "ci_high"]
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(f"df is missing column(s) {missing}")
    ax = _get_ax(ax)
    outcomes = list(dict.fromkeys(df["outcome"]))
    estimators = list(dict.fromkeys(df["estimator"]))
    height = 0.8 / max(1, len(estimators))
    for j, est in enumerate(estimators):
        sub = df[df["estimator"] == est].set_index("outcome").reindex(outcomes)
        pos = np.arange(len(outcomes)) - 0.4 + height * (j + 0.5)
        err = np.vstack([sub["ate"] - sub["ci_low"], sub["ci_high"] - sub["ate"]])
        ax.errorbar(sub["ate"], pos, xerr=np.where(np.isfinite(err), err, 0.0), fmt="o",
                    capsize=3, label=est)
    ax.axvline(0.0, color="grey", lw=1, ls="--")
    ax.set_yticks(np.arange(len(outcomes)))
    ax.set_yticklabels(outcomes)
    ax.invert_yaxis()
    ax.set_xlabel("ATE of fine-tuning (score points)")
    ax.legend(loc="best", fontsize="small")
    return ax


def plot_overlap(
    x,
    t,
    *,
    degree: int = 1,
    penalty: float = 1e-3,
    trim: float = 0.01,
    bins: int = 20,
    ax: "Axes | None" = None,
) -> "Axes":
    """Histograms of the estimated propensity ``P(T=1 | x)`` by arm.

    Each arm's histogram is normalised to sum to 1 (arms can differ a lot in size). The
    common support (min-max rule) is shaded and the trimming thresholds, when inside the
    plotted range, are dashed.

    Parameters
    ----------
    x, t : array-like
        Adjustment covariate (``log C``) and binary treatment.
    degree, penalty, trim
        As in :func:`overlap_diagnostics`.
    bins : int, default 20
        Histogram bins over the range of the estimated propensities.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    diag = overlap_diagnostics(x, t, degree=degree, penalty=penalty, trim=trim)
    ax = _get_ax(ax)
    e = diag.propensity
    pad = 0.05 * max(float(np.ptp(e)), 0.02)
    lo_edge, hi_edge = max(0.0, float(e.min()) - pad), min(1.0, float(e.max()) + pad)
    edges = np.linspace(lo_edge, hi_edge, bins + 1)
    for arm, label, color in ((0, "pretrained (T=0)", "tab:blue"), (1, "fine-tuned (T=1)", "tab:orange")):
        e_arm = e[diag.t == arm]
        ax.hist(e_arm, bins=edges, weights=np.full(len(e_arm), 1.0 / len(e_arm)), alpha=0.5,
                color=color, label=f"{label}, n = {len(e_arm)}")
    lo, hi = diag.common_support
    if lo <= hi:
        ax.axvspan(lo, hi, color="green", alpha=0.08, label="common support")
    for thr in (trim, 1 - trim):
        if lo_edge <= thr <= hi_edge:
            ax.axvline(thr, color="grey", ls="--", lw=1)
    ax.set_xlabel("propensity P(T=1 | log C)")
    ax.set_ylabel("share of models in the arm")
    ax.legend(loc="best", fontsize="small")
    return ax


# ----------------------------------------------------------------------------- leaderboard rows
#: Leaderboard ``type`` values that count as *not* post-trained (``T = 0``).
PRETRAINED_TYPES: tuple[str, ...] = ("pretrained", "continuously_pretrained")

# A post-training marker as a separate token of the repository name (``-Instruct``, ``-chat``,
# ``-it``, ``-SFT``, ``-DPO``, ...).
_POST_TRAINING_MARKER = re.compile(
    r"(?:^|[-_.])(?:instruct|chat|it|sft|dpo|rlhf|orpo|kto|simpo)(?=$|[-_.\d])", re.IGNORECASE)

# Lineage of a token-table family: its leading word, with these exceptions.
_LINEAGE_ALIASES = {"CodeLlama": "Llama", "Mixtral": "Mistral", "Codestral": "Mistral"}


def fine_tuning_treatment(
    df: pd.DataFrame,
    *,
    overrides: Mapping[str, int] | None = None,
    name_markers: bool = True,
) -> pd.DataFrame:
    """Binary treatment ``T`` of leaderboard rows: 1 = post-trained, 0 = pretrained.

    Rule, in order:

    1. ``type``: ``T = 0`` for :data:`PRETRAINED_TYPES` (``pretrained``,
       ``continuously_pretrained``), ``T = 1`` for every other type (``fine-tuned``,
       ``chat``, ``merge``, ``multimodal``, ``other``). On the v2 file this is exactly the
       negation of the paper authors' own ``pretrain`` column.
    2. ``name_markers``: a row typed pretrained whose repository name (after ``org/``) holds a
       post-training marker as a separate token (``instruct``, ``chat``, ``it``, ``sft``,
       ``dpo``, ``rlhf``, ``orpo``, ``kto``, ``simpo``) gets ``T = 1``: the leaderboard types
       e.g. ``meta-llama/Llama-3.1-8B-Instruct`` as pretrained.
    3. ``overrides``: ``{model_id: 0 or 1}`` for hand-checked rows.

    Parameters
    ----------
    df : pandas.DataFrame
        Needs ``model_id`` and ``type`` (as in :func:`hca.data.load_leaderboard_v2`).
    overrides : mapping, optional
        Hand-checked treatments by exact ``model_id``.
    name_markers : bool, default True
        Apply rule 2.

    Returns
    -------
    pandas.DataFrame
        Aligned with ``df.index``: ``T`` (int 0/1) and ``t_rule`` (``"type"``,
        ``"name marker"`` or ``"override"``).
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, found {type(df).__name__}")
    missing = [c for c in ("model_id", "type") if c not in df.columns]
    if missing:
        raise ValueError(f"df is missing column(s) {missing}")
    typ = df["type"].astype("string")
    if typ.isna().any():
        rows = df.index[typ.isna().to_numpy()][:5].tolist()
        raise ValueError(f"column 'type' has {int(typ.isna().sum())} missing value(s) (rows {rows})")
    t = np.where(typ.isin(PRETRAINED_TYPES).to_numpy(), 0, 1)
    rule = np.full(len(df), "type", dtype=object)
    if name_markers:
        repo = df["model_id"].astype(str).str.split("/").str[-1]
        flip = (t == 0) & repo.str.contains(_POST_TRAINING_MARKER).to_numpy()
        t[flip], rule[flip] = 1, "name marker"
    for model_id, value in (overrides or {}).items():
        if value not in (0, 1):
            raise ValueError(f"override for {model_id!r} must be 0 or 1, found {value!r}")
        hit = (df["model_id"] == model_id).to_numpy()
        if not hit.any():
            raise ValueError(f"override model_id {model_id!r} is not in df")
        t[hit], rule[hit] = value, "override"
    return pd.DataFrame({"T": t.astype(int), "t_rule": pd.array(rule, dtype="string")},
                        index=df.index)


def base_lineage(base_model) -> pd.Series:
    """Developer lineage of canonical base-model names (``"Llama"``, ``"Qwen"``, ...).

    The leading word of the base's ``family`` in :func:`hca.base_models.pretraining_tokens`
    (``Llama-3.1`` -> ``Llama``, ``Qwen2.5-Coder`` -> ``Qwen``, ``Gemma-2`` -> ``Gemma``),
    counting Code Llama as Llama and Mixtral and Codestral as Mistral.

    Parameters
    ----------
    base_model : array-like of str
        Canonical names as returned by :func:`hca.base_models.identify`; NA stays NA.

    Returns
    -------
    pandas.Series
        String dtype, aligned with ``base_model`` when it is a Series.
    """
    from .base_models import pretraining_tokens

    s = base_model if isinstance(base_model, pd.Series) else pd.Series(base_model)
    s = s.astype("string")
    fam = pretraining_tokens().set_index("base_model")["family"]
    unknown = sorted(set(s.dropna()) - set(fam.index))
    if unknown:
        raise ValueError(f"unknown base model(s) {unknown[:5]}; expected names from "
                         "hca.base_models.pretraining_tokens()")
    lead = s.map(fam).astype("string").str.extract(r"^([A-Za-z]+)", expand=False)
    return lead.replace(_LINEAGE_ALIASES).astype("string")


def scaling_frame(
    df: pd.DataFrame,
    *,
    official_only: bool = False,
    overrides: Mapping[str, int] | None = None,
    name_markers: bool = True,
    include_estimates: bool = True,
) -> pd.DataFrame:
    """Leaderboard rows with pretraining compute and treatment, for Appendices D and F.

    Adds ``base_model``, ``layer``, ``evidence`` (:func:`hca.base_models.identify`, when
    ``df`` has no ``base_model`` column), ``tokens_t``, ``compute_flops``, ``log10_compute``
    (:func:`hca.base_models.add_compute`: ``C = 6 N D`` with ``N`` the *base model's*
    parameters from the token table, active parameters for mixtures of experts, and ``D`` its
    pretraining tokens), ``family``, ``lineage`` (:func:`base_lineage`), ``base_params_b``,
    ``log_c`` (natural log of ``C`` in FLOPs, the ``X`` of the paper), ``T`` and ``t_rule``
    (:func:`fine_tuning_treatment`). Keeps only rows with a finite compute (attributed to a
    base whose token count is known) and, with ``official_only``, the rows whose
    ``official_providers`` flag is True.

    Parameters
    ----------
    df : pandas.DataFrame
        The v2 leaderboard (:func:`hca.data.load_leaderboard_v2`).
    official_only : bool, default False
        Keep only the leaderboard's "official providers" rows.
    overrides, name_markers
        Passed to :func:`fine_tuning_treatment`.
    include_estimates : bool, default True
        Passed to :func:`hca.base_models.add_compute` (False: drop bases whose token count is
        only a third-party estimate).

    Returns
    -------
    pandas.DataFrame
        A copy of the kept rows (original index) with the new columns.
    """
    from .base_models import add_compute, pretraining_tokens

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, found {type(df).__name__}")
    if official_only and "official_providers" not in df.columns:
        raise ValueError("official_only=True needs column 'official_providers'")
    out = add_compute(df, include_estimates=include_estimates)
    out = out.join(fine_tuning_treatment(df, overrides=overrides, name_markers=name_markers))
    keep = np.isfinite(out["compute_flops"].to_numpy(dtype=float))
    if official_only:
        keep &= out["official_providers"].fillna(False).astype(bool).to_numpy()
    out = out[keep].copy()
    tok = pretraining_tokens().set_index("base_model")
    base = out["base_model"].astype("string")
    out["family"] = base.map(tok["family"]).astype("string")
    out["lineage"] = base_lineage(base)
    out["base_params_b"] = base.map(tok["params_b"]).astype(float)
    out["log_c"] = np.log(out["compute_flops"].to_numpy(dtype=float))
    return out


_AUTHORS_LINEAGE = {"llama-3": "Llama", "qwen2": "Qwen", "qwen2.5": "Qwen",
                    "gemma-2-9b": "Gemma", "mistral-7b": "Mistral"}


def authors_scaling_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The same analysis frame built from the paper authors' own columns of the v2 file.

    The published CSV carries three columns added by the authors: ``Tokens``
    (``authors_tokens``, trillions; 0 when unassigned), ``base_model``
    (``authors_base_model``: ``llama-3``, ``qwen2.5``, ``qwen2``, ``gemma-2-9b``,
    ``mistral-7b``) and ``pretrain`` (``authors_pretrain``). This keeps rows with
    ``authors_tokens > 0`` and ``params_b > 0`` and sets ``T = 1 - authors_pretrain``,
    ``log_c = ln(6 N D)`` in FLOPs with ``N`` the row's own ``params_b`` (the file gives no
    other N) and ``D = authors_tokens``, ``base_model = authors_base_model`` and ``lineage``
    (Llama, Qwen, Gemma, Mistral).

    Returns
    -------
    pandas.DataFrame
        A copy of the kept rows (original index) with ``T``, ``log_c``, ``base_model`` and
        ``lineage``.
    """
    need = ["authors_tokens", "authors_base_model", "authors_pretrain", "params_b"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ValueError(f"df is missing column(s) {missing}")
    tokens = pd.to_numeric(df["authors_tokens"], errors="coerce")
    params = pd.to_numeric(df["params_b"], errors="coerce")
    out = df[(tokens > 0).to_numpy() & (params > 0).to_numpy()].copy()
    base = out["authors_base_model"].astype("string")
    if base.isna().any():
        raise ValueError(f"{int(base.isna().sum())} row(s) have authors_tokens > 0 but no "
                         "authors_base_model")
    unknown = sorted(set(base) - set(_AUTHORS_LINEAGE))
    if unknown:
        raise ValueError(f"unknown authors_base_model value(s) {unknown}")
    out["T"] = (~out["authors_pretrain"].astype(bool)).astype(int)
    out["log_c"] = log_compute(out["params_b"].to_numpy(dtype=float),
                               out["authors_tokens"].to_numpy(dtype=float))
    out["base_model"] = base
    out["lineage"] = base.map(_AUTHORS_LINEAGE).astype("string")
    return out


# ----------------------------------------------------------------------------- Figure 12
_SIZE_TOKEN = re.compile(r"(\d+(?:\.\d+)?[BM])(?:-A\d+B)?$")


def _size_label(names: pd.Series, size: float) -> str:
    labels = sorted({m.group(1) for m in (_SIZE_TOKEN.search(str(n)) for n in names) if m})
    return "/".join(labels) if labels else f"{size:.3g}B"


def family_size_means(
    df: pd.DataFrame,
    outcomes: Sequence[str],
    *,
    family: str = "family",
    size: str = "base_params_b",
    label: str | None = "base_model",
    top: int = 3,
    min_sizes: int = 3,
    ci: float = 0.95,
) -> pd.DataFrame:
    """Mean score by base-model size within model families (paper Figure 12).

    Families with at least ``min_sizes`` distinct base sizes are ranked by their number of
    rows, and the ``top`` largest kept. Pass only the rows to summarise (e.g. ``T == 1``).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per model.
    outcomes : sequence of str
        Score columns.
    family, size : str
        Columns with the family label and the base model's size (parameters, B).
    label : str or None, default "base_model"
        Column whose names give size labels (the trailing ``8B`` of ``Llama-3.1-8B``); sizes
        shared by several names are joined with ``/``. None: label from ``size``.
    top, min_sizes : int
        Number of families kept and minimum number of sizes per family.
    ci : float, default 0.95
        Coverage of the normal-approximation interval ``mean +- z sem``.

    Returns
    -------
    pandas.DataFrame
        Columns ``family, size, size_label, outcome, mean, sem, ci_low, ci_high, n``;
        families in rank order, sizes increasing. ``sem`` is NaN for a single model.
    """
    from scipy.stats import norm

    _check_ci(ci)
    needed = [family, size, *outcomes] + ([label] if label else [])
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(f"df is missing column(s) {missing}")
    if top < 1 or min_sizes < 1:
        raise ValueError(f"top and min_sizes must be >= 1, found {top} and {min_sizes}")
    sub = df[df[family].notna() & df[size].notna()]
    for col in outcomes:
        if sub[col].isna().any():
            raise ValueError(f"outcome column {col!r} has {int(sub[col].isna().sum())} missing "
                             "values")
    stats = sub.groupby(family)[size].agg(["size", "nunique"])
    ranked = stats[stats["nunique"] >= min_sizes].sort_values("size", ascending=False,
                                                               kind="stable")
    if ranked.empty:
        raise ValueError(f"no family has at least {min_sizes} distinct sizes")
    z = float(norm.ppf(0.5 + ci / 2))
    rows = []
    for fam in ranked.index[:top]:
        part = sub[sub[family] == fam]
        for sz, grp in part.groupby(size, sort=True):
            lab = _size_label(grp[label], sz) if label else f"{sz:.3g}B"
            for col in outcomes:
                v = grp[col].to_numpy(dtype=float)
                sem = float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else float("nan")
                m = float(v.mean())
                rows.append({"family": fam, "size": float(sz), "size_label": lab,
                             "outcome": col, "mean": m, "sem": sem, "ci_low": m - z * sem,
                             "ci_high": m + z * sem, "n": len(v)})
    return pd.DataFrame(rows)


def plot_family_sizes(
    table: pd.DataFrame,
    family: str,
    *,
    ax: "Axes | None" = None,
    labels: Mapping[str, str] | None = None,
) -> "Axes":
    """Grouped bars of one family's mean scores by base size (paper Figure 12).

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`family_size_means`.
    family : str
        The family to draw.
    ax : matplotlib Axes, optional
    labels : mapping, optional
        Display names of the outcomes (e.g. ``hca.data.BENCHMARK_LABELS``).

    Returns
    -------
    matplotlib.axes.Axes
    """
    part = table[table["family"] == family]
    if part.empty:
        raise ValueError(f"family {family!r} not in table; found {sorted(table['family'].unique())}")
    ax = _get_ax(ax)
    outcomes = list(dict.fromkeys(part["outcome"]))
    sizes = list(dict.fromkeys(part.sort_values("size")["size"]))
    width = 0.8 / len(sizes)
    cmap = __import__("matplotlib").colormaps["viridis"]
    for j, sz in enumerate(sizes):
        rows = part[part["size"] == sz].set_index("outcome").reindex(outcomes)
        pos = np.arange(len(outcomes)) - 0.4 + width * (j + 0.5)
        err = np.vstack([rows["mean"] - rows["ci_low"], rows["ci_high"] - rows["mean"]])
        ax.bar(pos, rows["mean"], width, yerr=np.where(np.isfinite(err), err, 0.0), capsize=2,
               color=cmap(j / max(1, len(sizes) - 1)),
               label=f"{rows['size_label'].iloc[0]} (n = {int(rows['n'].iloc[0])})")
    ax.set_xticks(np.arange(len(outcomes)))
    ax.set_xticklabels([(labels or {}).get(o, o) for o in outcomes], rotation=30, ha="right")
    ax.set_ylabel("mean normalized score")
    ax.set_title(family)
    ax.legend(loc="upper right", fontsize="x-small", title="base size", title_fontsize="x-small")
    return ax


# ----------------------------------------------------------------------------- panels
def _seed_from(random_state) -> int:
    """An integer seed from ``random_state`` (int, Generator or None)."""
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    if random_state is None:
        return int(np.random.SeedSequence().entropy % (2**63))
    if isinstance(random_state, (int, np.integer)) and random_state >= 0:
        return int(random_state)
    raise ValueError(f"random_state must be a non-negative int, a Generator or None, found "
                     f"{random_state!r}")


def _run_jobs(fn: Callable, jobs: list[tuple], n_jobs: int) -> list:
    """``[fn(*job) for job in jobs]``, in parallel processes (joblib) when ``n_jobs != 1``."""
    if n_jobs == 1 or len(jobs) <= 1:
        return [fn(*job) for job in jobs]
    from joblib import Parallel, delayed

    return Parallel(n_jobs=n_jobs)(delayed(fn)(*job) for job in jobs)


def _subset_masks(df: pd.DataFrame, subsets) -> dict[str, np.ndarray]:
    if subsets is None:
        return {"all": np.ones(len(df), dtype=bool)}
    out = {}
    for name, mask in subsets.items():
        if mask is None:
            out[str(name)] = np.ones(len(df), dtype=bool)
            continue
        m = np.asarray(mask)
        if m.dtype != bool or m.shape != (len(df),):
            raise ValueError(f"subset {name!r} must be None or a boolean mask of length "
                             f"{len(df)}, found dtype {m.dtype} and shape {m.shape}")
        out[str(name)] = m
    if not out:
        raise ValueError("subsets is empty")
    return out


def _check_panel_columns(df: pd.DataFrame, cols: list[str]) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, found {type(df).__name__}")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"df is missing column(s) {missing}")


def _group_codes(df: pd.DataFrame, groups: str | None, mask: np.ndarray) -> np.ndarray | None:
    if groups is None:
        return None
    g = df[groups][mask]
    if g.isna().any():
        raise ValueError(f"groups column {groups!r} has {int(g.isna().sum())} missing values")
    return pd.factorize(g, sort=True)[0]


def _r2_treatment_only(t: np.ndarray, y: np.ndarray) -> float:
    """R^2 of the arm means alone (the share of variance T explains without compute)."""
    fitted = np.where(t == 1, y[t == 1].mean() if (t == 1).any() else 0.0,
                      y[t == 0].mean() if (t == 0).any() else 0.0)
    return float(1.0 - np.sum((y - fitted) ** 2) / np.sum((y - y.mean()) ** 2))


def _sigmoid_boot_block(x, t, Y, groups, tau_fixed, starts, n_starts, seed, sub_idx, reps):
    """Joint bootstrap replicates ``reps`` of one subset: params + R^2 of every outcome."""
    out = []
    for r in reps:
        rng = np.random.default_rng([seed, sub_idx, r])
        idx = _resample_indices(rng, t, groups)
        if not tau_fixed and len(np.unique(t[idx])) < 2:
            out.append(None)
            continue
        vals = []
        try:
            for j in range(Y.shape[1]):
                if n_starts == 0:
                    vals.append(_warm_refit(x[idx], t[idx], Y[idx, j], starts[j], not tau_fixed))
                    continue
                f = fit_sigmoid_law(x[idx], t[idx], Y[idx, j], n_starts=n_starts, start=starts[j])
                vals.append([*(f.params[p] for p in PARAM_NAMES), f.r2])
        except ValueError:
            out.append(None)
            continue
        arr = np.asarray(vals, dtype=float)
        out.append(arr if np.all(np.isfinite(arr)) else None)
    return out


@dataclass(frozen=True)
class SigmoidPanel:
    """Sigmoid-law fits for several outcomes and subsets (:func:`fit_sigmoid_panel`).

    Attributes
    ----------
    subsets, outcomes : tuple of str
        Row and column labels of the panel.
    fits : dict
        ``(subset, outcome) -> SigmoidFit`` on the full subset.
    boot : dict
        ``(subset, outcome) -> SigmoidBootstrap`` (empty when ``n_boot = 0``).
    r2_samples : dict
        ``subset -> (n_ok, n_outcomes)`` bootstrap R^2, one row per joint replicate (the same
        resample for every outcome of a subset).
    data : dict
        ``subset -> DataFrame`` with the ``x``, ``t`` and outcome columns used.
    x, t : str
        Column names of ``log C`` and the treatment.
    ci : float
        Nominal coverage of the intervals.
    n_boot : int
        Requested replicates per subset.
    groups : str or None
        Cluster column of the bootstrap (None: models resampled within arms).
    """

    subsets: tuple[str, ...]
    outcomes: tuple[str, ...]
    fits: Mapping[tuple[str, str], SigmoidFit] = field(repr=False)
    boot: Mapping[tuple[str, str], SigmoidBootstrap] = field(repr=False)
    r2_samples: Mapping[str, np.ndarray] = field(repr=False, compare=False)
    data: Mapping[str, pd.DataFrame] = field(repr=False, compare=False)
    x: str
    t: str
    ci: float
    n_boot: int
    groups: str | None

    def to_frame(self) -> pd.DataFrame:
        """Long table: ``subset, outcome, param, estimate, se, ci_low, ci_high``."""
        rows = []
        for s in self.subsets:
            for o in self.outcomes:
                fit, bs = self.fits[(s, o)], self.boot.get((s, o))
                for p in PARAM_NAMES:
                    rows.append({"subset": s, "outcome": o, "param": p,
                                 "estimate": fit.params[p], "se": fit.se[p],
                                 "ci_low": bs.ci_low[p] if bs else np.nan,
                                 "ci_high": bs.ci_high[p] if bs else np.nan})
        return pd.DataFrame(rows)

    def r2_table(self) -> pd.DataFrame:
        """Fit quality per subset and outcome.

        Columns ``subset, outcome, n, n_treated, n_clusters, r2, r2_ci_low, r2_ci_high,
        r2_t_only, r2_compute, converged, at_bound, n_boot_ok``. ``r2_t_only`` is the R^2 of
        the two arm means alone and ``r2_compute = r2 - r2_t_only`` the share of variance the
        compute curve adds to the fine-tuning shift.
        """
        alpha = (1.0 - self.ci) / 2.0
        rows = []
        for s in self.subsets:
            d = self.data[s]
            samples = self.r2_samples.get(s)
            n_cl = int(d[self.groups].nunique()) if self.groups else np.nan
            for j, o in enumerate(self.outcomes):
                fit = self.fits[(s, o)]
                t, y = d[self.t].to_numpy(dtype=int), d[o].to_numpy(dtype=float)
                r2t = _r2_treatment_only(t, y)
                ok = samples is not None and len(samples) > 0
                rows.append({
                    "subset": s, "outcome": o, "n": fit.n, "n_treated": fit.n_treated,
                    "n_clusters": n_cl, "r2": fit.r2,
                    "r2_ci_low": float(np.quantile(samples[:, j], alpha)) if ok else np.nan,
                    "r2_ci_high": float(np.quantile(samples[:, j], 1 - alpha)) if ok else np.nan,
                    "r2_t_only": r2t, "r2_compute": fit.r2 - r2t, "converged": fit.converged,
                    "at_bound": ",".join(fit.at_bound), "n_boot_ok": len(samples) if ok else 0,
                })
        return pd.DataFrame(rows)

    def r2_gap(self, better: Sequence[str], worse: Sequence[str]) -> pd.DataFrame:
        """Mean R^2 of the ``better`` outcomes minus that of the ``worse`` ones, per subset.

        The interval is the percentile interval of the same difference over the joint
        bootstrap replicates (NaN without bootstrap).

        Returns
        -------
        pandas.DataFrame
            Columns ``subset, gap, ci_low, ci_high``.
        """
        unknown = [o for o in [*better, *worse] if o not in self.outcomes]
        if unknown or not better or not worse:
            raise ValueError(f"better and worse must be non-empty lists of outcomes in "
                             f"{list(self.outcomes)}; unknown {unknown}")
        ib = [self.outcomes.index(o) for o in better]
        iw = [self.outcomes.index(o) for o in worse]
        alpha = (1.0 - self.ci) / 2.0
        rows = []
        for s in self.subsets:
            r2 = np.array([self.fits[(s, o)].r2 for o in self.outcomes])
            gap = float(r2[ib].mean() - r2[iw].mean())
            smp = self.r2_samples.get(s)
            if smp is not None and len(smp):
                g = smp[:, ib].mean(axis=1) - smp[:, iw].mean(axis=1)
                lo, hi = float(np.quantile(g, alpha)), float(np.quantile(g, 1 - alpha))
            else:
                lo = hi = np.nan
            rows.append({"subset": s, "gap": gap, "ci_low": lo, "ci_high": hi})
        return pd.DataFrame(rows)

    def summary(self) -> str:
        """Multi-line text summary (R^2 and tau per subset and outcome)."""
        boot = (f"{self.n_boot} joint bootstrap replicates per subset"
                + (f", clusters = {self.groups}" if self.groups else ", within arms")
                if self.n_boot else "no bootstrap")
        lines = [f"Sigmoid law Y = L/(1+exp(-k(ln C - ln C0))) + tau T + b; {boot}"]
        for s in self.subsets:
            parts = []
            for o in self.outcomes:
                f = self.fits[(s, o)]
                parts.append(f"{o}: R^2 {f.r2:.2f}, tau {f.tau:+.1f}")
            lines.append(f"  {s} (n = {self.fits[(s, self.outcomes[0])].n}): " + "; ".join(parts))
        return "\n".join(lines)


def fit_sigmoid_panel(
    df: pd.DataFrame,
    outcomes: Sequence[str],
    *,
    x: str = "log_c",
    t: str = "T",
    subsets: Mapping[str, object] | None = None,
    groups: str | None = None,
    n_boot: int = 0,
    ci: float = 0.95,
    n_starts: int = 0,
    random_state=0,
    n_jobs: int = 1,
) -> SigmoidPanel:
    """Fit the sigmoid law to several outcomes in several subsets (paper Figures 7 and 14).

    Every (subset, outcome) is fitted with :func:`fit_sigmoid_law`. With ``n_boot > 0`` each
    subset gets a *joint* percentile bootstrap: one resample (of whole clusters when
    ``groups`` is given, else of models within each arm) is refitted for every outcome, so
    that differences of R^2 between outcomes (:meth:`SigmoidPanel.r2_gap`) get intervals.
    Replicate ``r`` of subset ``i`` uses ``numpy.random.default_rng([seed, i, r])``, so the
    result does not depend on ``n_jobs``. Replicates that cannot be fitted are dropped.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per model with columns ``x``, ``t``, the outcomes and ``groups``.
    outcomes : sequence of str
        Score columns.
    x, t : str
        Natural-log compute and 0/1 treatment columns.
    subsets : mapping, optional
        ``name -> boolean mask over df rows`` (or None for all rows). Default: all rows.
    groups : str, optional
        Cluster column for the bootstrap (e.g. ``"base_model"``).
    n_boot : int, default 0
        Joint bootstrap replicates per subset.
    ci : float, default 0.95
        Nominal coverage.
    n_starts : int, default 0
        Starts per bootstrap refit. 0: a single local optimisation from the full-data
        estimate (fast; the usual warm-started bootstrap); ``k >= 1``: :func:`fit_sigmoid_law`
        with the full-data estimate plus ``k`` grid starts, as :func:`bootstrap_sigmoid`.
    random_state : int, Generator or None, default 0
        Seed.
    n_jobs : int, default 1
        Parallel processes (joblib) for the bootstrap.

    Returns
    -------
    SigmoidPanel
    """
    outcomes = list(outcomes)
    if not outcomes:
        raise ValueError("outcomes is empty")
    _check_panel_columns(df, [x, t, *outcomes] + ([groups] if groups else []))
    _check_ci(ci)
    if n_boot < 0 or n_starts < 0:
        raise ValueError(f"n_boot and n_starts must be >= 0, found {n_boot} and {n_starts}")
    masks = _subset_masks(df, subsets)
    seed = _seed_from(random_state)
    fits, boot, r2s, data, jobs, prepared = {}, {}, {}, {}, [], {}
    for i, (name, mask) in enumerate(masks.items()):
        d = df.loc[mask, [x, t, *outcomes] + ([groups] if groups else [])]
        for col in [x, t, *outcomes]:
            if d[col].isna().any():
                raise ValueError(f"subset {name!r}: column {col!r} has "
                                 f"{int(d[col].isna().sum())} missing values")
        data[name] = d
        xx = d[x].to_numpy(dtype=float)
        tt = _as_treatment(d[t].to_numpy(), t)
        Y = d[outcomes].to_numpy(dtype=float)
        sub_fits = [fit_sigmoid_law(xx, tt, Y[:, j]) for j in range(len(outcomes))]
        for o, f in zip(outcomes, sub_fits):
            fits[(name, o)] = f
        if n_boot:
            g = _group_codes(df, groups, mask)
            prepared[name] = (i, sub_fits)
            n_blocks = max(1, min(n_boot, 4 * max(1, n_jobs)))
            for block in np.array_split(np.arange(n_boot), n_blocks):
                jobs.append((xx, tt, Y, g, sub_fits[0].tau_fixed, [f.params for f in sub_fits],
                             n_starts, seed, i, block.tolist()))
    if n_boot:
        results = _run_jobs(_sigmoid_boot_block, jobs, n_jobs)
        per_subset: dict[int, list] = {}
        for job, res in zip(jobs, results):
            per_subset.setdefault(job[8], []).extend(res)
        alpha = (1.0 - ci) / 2.0
        for name, (i, sub_fits) in prepared.items():
            ok = [a for a in per_subset[i] if a is not None]
            if len(ok) < (n_boot + 1) // 2:
                raise ValueError(f"subset {name!r}: only {len(ok)} of {n_boot} bootstrap "
                                 "replicates could be fitted")
            arr = np.stack(ok)  # (n_ok, n_outcomes, 6)
            r2s[name] = arr[:, :, 5]
            for j, o in enumerate(outcomes):
                smp = arr[:, j, :5]
                lo, hi = np.quantile(smp, alpha, axis=0), np.quantile(smp, 1 - alpha, axis=0)
                boot[(name, o)] = SigmoidBootstrap(
                    fit=sub_fits[j], samples=smp,
                    ci_low={p: float(lo[k]) for k, p in enumerate(PARAM_NAMES)},
                    ci_high={p: float(hi[k]) for k, p in enumerate(PARAM_NAMES)},
                    ci=ci, n_boot=n_boot, n_failed=n_boot - len(ok))
    return SigmoidPanel(subsets=tuple(masks), outcomes=tuple(outcomes), fits=fits, boot=boot,
                        r2_samples=r2s, data=data, x=x, t=t, ci=ci, n_boot=n_boot,
                        groups=groups)


def plot_sigmoid_panel(
    panel: SigmoidPanel,
    *,
    axes=None,
    labels: Mapping[str, str] | None = None,
    flops_axis: bool = True,
):
    """Grid of :func:`plot_sigmoid_fit`: one row per subset, one column per outcome.

    Parameters
    ----------
    panel : SigmoidPanel
    axes : 2-D array of Axes, optional
        Shape ``(len(subsets), len(outcomes))``; a new figure is created when None.
    labels : mapping, optional
        Display names of the outcomes.
    flops_axis : bool, default True
        Compute in FLOPs on a log axis (else ``ln C``).

    Returns
    -------
    numpy.ndarray of Axes
    """
    import matplotlib.pyplot as plt

    shape = (len(panel.subsets), len(panel.outcomes))
    if axes is None:
        _, axes = plt.subplots(*shape, figsize=(2.6 * shape[1], 2.4 * shape[0]),
                               sharex=True, squeeze=False)
    axes = np.asarray(axes).reshape(shape)
    for i, s in enumerate(panel.subsets):
        d = panel.data[s]
        for j, o in enumerate(panel.outcomes):
            ax = axes[i, j]
            fit = panel.fits[(s, o)]
            plot_sigmoid_fit(fit, d[panel.x], d[panel.t], d[o], ax=ax, flops_axis=flops_axis)
            ax.set_title(f"{s}: {(labels or {}).get(o, o)}\nR$^2$ = {fit.r2:.2f}, "
                         f"$\\tau$ = {fit.tau:+.1f}", fontsize="small")
            ax.tick_params(labelsize="x-small")
            ax.set_xlabel("C (FLOPs)" if flops_axis else "ln C", fontsize="small")
            ax.set_ylabel("score" if j == 0 else "", fontsize="small")
            if (i, j) != (0, 0) and ax.get_legend() is not None:
                ax.get_legend().remove()
    return axes


def _ate_job(name, x, t, y, n_boot, ci, seed, groups, kwargs):
    return _ESTIMATORS[name](x, t, y, n_boot=n_boot, ci=ci, random_state=seed, groups=groups,
                             **kwargs)


@dataclass(frozen=True)
class ATEPanel:
    """ATEs for several outcomes, subsets and estimators (:func:`ate_panel`).

    Attributes
    ----------
    table : pandas.DataFrame
        ``subset, outcome, estimator, ate, ci_low, ci_high, n_treated, n_control, n_used,
        mu1, mu0, naive, n_boot_failed``.
    samples : dict
        ``(subset, outcome, estimator) -> bootstrap ATEs``.
    rows : dict
        ``subset -> positions of its rows in the input frame``.
    ci : float
        Nominal coverage.
    """

    table: pd.DataFrame
    samples: Mapping[tuple[str, str, str], np.ndarray] = field(repr=False, compare=False)
    rows: Mapping[str, np.ndarray] = field(repr=False, compare=False)
    ci: float

    def contrast(self, a: str, b: str, estimator: str = "backdoor") -> pd.DataFrame:
        """ATE in subset ``a`` minus ATE in subset ``b``, per outcome, with an interval.

        The subsets must not share rows: their bootstraps are then independent and the
        interval is the percentile interval of replicate-wise differences.

        Returns
        -------
        pandas.DataFrame
            Columns ``outcome, ate_a, ate_b, diff, ci_low, ci_high``.
        """
        for s in (a, b):
            if s not in self.rows:
                raise ValueError(f"unknown subset {s!r}; found {list(self.rows)}")
        if np.intersect1d(self.rows[a], self.rows[b]).size:
            raise ValueError(f"subsets {a!r} and {b!r} share rows; their ATEs are not "
                             "independent")
        tab = self.table[self.table["estimator"] == estimator].set_index(["subset", "outcome"])
        if tab.empty:
            raise ValueError(f"estimator {estimator!r} not in the panel")
        alpha = (1.0 - self.ci) / 2.0
        rows = []
        for o in dict.fromkeys(self.table["outcome"]):
            ea, eb = tab.loc[(a, o), "ate"], tab.loc[(b, o), "ate"]
            sa, sb = self.samples[(a, o, estimator)], self.samples[(b, o, estimator)]
            m = min(len(sa), len(sb))
            d = sa[:m] - sb[:m]
            rows.append({"outcome": o, "ate_a": ea, "ate_b": eb, "diff": ea - eb,
                         "ci_low": float(np.quantile(d, alpha)) if m else np.nan,
                         "ci_high": float(np.quantile(d, 1 - alpha)) if m else np.nan})
        return pd.DataFrame(rows)

    def wide(self, value: str = "ate") -> pd.DataFrame:
        """``value`` as an outcome x (subset, estimator) table."""
        return self.table.pivot_table(index="outcome", columns=["subset", "estimator"],
                                      values=value, sort=False)

    def summary(self) -> str:
        """Multi-line text summary."""
        lines = [f"ATE of fine-tuning ({100 * self.ci:g}% percentile bootstrap intervals)"]
        for r in self.table.itertuples():
            lines.append(f"  {r.subset:>8s} {r.outcome:>11s} {r.estimator:>10s}: {r.ate:+6.2f} "
                         f"[{r.ci_low:+6.2f}, {r.ci_high:+6.2f}]  n_used = {r.n_used}")
        return "\n".join(lines)


def ate_panel(
    df: pd.DataFrame,
    outcomes: Sequence[str],
    *,
    x: str = "log_c",
    t: str = "T",
    subsets: Mapping[str, object] | None = None,
    estimators: Sequence[str] = ("backdoor", "ipw"),
    groups: str | None = None,
    n_boot: int = 200,
    ci: float = 0.95,
    random_state=0,
    n_jobs: int = 1,
    estimator_kwargs: Mapping[str, Mapping] | None = None,
) -> ATEPanel:
    """Run the ATE estimators over outcomes, subsets and estimators (paper Figure 13).

    Like :func:`ate_by_outcome`, for several subsets at once and in parallel. Within a subset
    every outcome and estimator uses the same seed (common random numbers); subsets get
    independent seeds (``SeedSequence([seed, i])``), so :meth:`ATEPanel.contrast` of two
    disjoint subsets has independent bootstraps. Cluster labels are passed as integer codes
    (sorted labels). Results do not depend on ``n_jobs``.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per model.
    outcomes : sequence of str
        Score columns; missing values raise.
    x, t : str
        Adjustment and treatment columns.
    subsets : mapping, optional
        ``name -> boolean mask over df rows`` (or None for all rows). Default: all rows.
    estimators : sequence of str
        Names from ``"backdoor"``, ``"ipw"``, ``"aipw"``, ``"ipw_strata"``.
    groups : str, optional
        Cluster column for a cluster bootstrap (e.g. ``"base_model"``).
    n_boot, ci : int, float
        Bootstrap replicates and coverage.
    random_state : int, Generator or None, default 0
    n_jobs : int, default 1
        Parallel processes (joblib).
    estimator_kwargs : mapping, optional
        Extra keyword arguments per estimator name.

    Returns
    -------
    ATEPanel
    """
    outcomes = list(outcomes)
    if not outcomes:
        raise ValueError("outcomes is empty")
    _check_panel_columns(df, [x, t, *outcomes] + ([groups] if groups else []))
    unknown = [e for e in estimators if e not in _ESTIMATORS]
    if unknown or not estimators:
        raise ValueError(f"unknown estimator(s) {unknown}; choose from {sorted(_ESTIMATORS)}")
    _check_ci(ci)
    masks = _subset_masks(df, subsets)
    seed = _seed_from(random_state)
    kwargs = dict(estimator_kwargs or {})
    jobs, keys, rows = [], [], {}
    for i, (name, mask) in enumerate(masks.items()):
        rows[name] = np.flatnonzero(mask)
        d = df.loc[mask]
        for col in [x, t, *outcomes]:
            if d[col].isna().any():
                raise ValueError(f"subset {name!r}: column {col!r} has "
                                 f"{int(d[col].isna().sum())} missing values")
        sub_seed = int(np.random.SeedSequence([seed, i]).generate_state(1)[0])
        g = _group_codes(df, groups, mask)
        xx, tt = d[x].to_numpy(dtype=float), d[t].to_numpy()
        for o in outcomes:
            for e in estimators:
                jobs.append((e, xx, tt, d[o].to_numpy(dtype=float), n_boot, ci, sub_seed, g,
                             dict(kwargs.get(e, {}))))
                keys.append((name, o, e))
    results = _run_jobs(_ate_job, jobs, n_jobs)
    table, samples = [], {}
    for (name, o, e), res in zip(keys, results):
        table.append({"subset": name, "outcome": o, "estimator": e, "ate": res.ate,
                      "ci_low": res.ci_low, "ci_high": res.ci_high, "n_treated": res.n_treated,
                      "n_control": res.n_control, "n_used": res.n_used, "mu1": res.mu1,
                      "mu0": res.mu0, "naive": res.naive, "n_boot_failed": res.n_boot_failed})
        samples[(name, o, e)] = res.boot_samples
    return ATEPanel(table=pd.DataFrame(table), samples=samples, rows=rows, ci=ci)


def plot_ate_panel(
    panel: ATEPanel,
    *,
    axes=None,
    labels: Mapping[str, str] | None = None,
):
    """One :func:`plot_ate` forest plot per subset, with a shared x axis.

    Parameters
    ----------
    panel : ATEPanel
    axes : sequence of Axes, optional
        One per subset; a new figure is created when None.
    labels : mapping, optional
        Display names of the outcomes.

    Returns
    -------
    numpy.ndarray of Axes
    """
    import matplotlib.pyplot as plt

    subsets = list(dict.fromkeys(panel.table["subset"]))
    if axes is None:
        _, axes = plt.subplots(1, len(subsets), figsize=(4.2 * len(subsets), 3.8),
                               sharex=True, sharey=True, squeeze=False)
    axes = np.asarray(axes).ravel()
    if len(axes) != len(subsets):
        raise ValueError(f"need {len(subsets)} axes, found {len(axes)}")
    for ax, s in zip(axes, subsets):
        part = panel.table[panel.table["subset"] == s].copy()
        part["outcome"] = part["outcome"].map(lambda o: (labels or {}).get(o, o))
        plot_ate(part, ax=ax)
        ax.set_title(s)
        if ax is not axes[0] and ax.get_legend() is not None:
            ax.get_legend().remove()
    return axes


def plot_propensity_strata(
    x,
    t,
    *,
    degree: int = 1,
    penalty: float = 1e-3,
    ax: "Axes | None" = None,
) -> "Axes":
    """Share of fine-tuned models per ``x`` stratum against the fitted logistic propensity.

    Each distinct ``x`` (one base model's compute) is a point at its share of ``T = 1``,
    with area proportional to its number of models; strata with a single arm are hollow.
    The line is the logistic propensity of :func:`propensity_scores` (what IPW uses).

    Parameters
    ----------
    x, t : array-like
        Adjustment covariate and treatment.
    degree, penalty
        Propensity model, as in :func:`propensity_scores`.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    xx = _as_float(x, "x")
    tt = _as_treatment(t, "t")
    _check_lengths(x=xx, t=tt)
    e = propensity_scores(xx, tt, degree=degree, penalty=penalty)
    ax = _get_ax(ax)
    values, inverse, counts = np.unique(xx, return_inverse=True, return_counts=True)
    share = np.bincount(inverse, weights=tt, minlength=len(values)) / counts
    both = (share > 0) & (share < 1)
    size = 8 + 120 * counts / counts.max()
    ax.scatter(values[both], share[both], s=size[both], color="tab:green", alpha=0.6,
               label=f"stratum with both arms ({int(both.sum())})")
    ax.scatter(values[~both], share[~both], s=size[~both], facecolors="none",
               edgecolors="grey", label=f"single-arm stratum ({int((~both).sum())})")
    order = np.argsort(xx)
    ax.plot(xx[order], e[order], color="black", lw=1.5, label=f"logistic e(x), degree {degree}")
    ax.set_xlabel("ln C (C = pretraining FLOPs)")
    ax.set_ylabel("share fine-tuned, P(T=1 | x)")
    ax.set_ylim(-0.05, 1.05)
    ax.legend(loc="lower left", fontsize="x-small")
    return ax


# ----------------------------------------------------------------------------- transparency
def stratum_effects(
    df: pd.DataFrame,
    outcome: str,
    *,
    x: str = "log_c",
    t: str = "T",
    label: str | None = "base_model",
) -> pd.DataFrame:
    """Per-stratum means and differences behind the stratified backdoor estimate.

    One row per distinct ``x`` observed in both arms: ``n1, n0, mean1, mean0, diff =
    mean1 - mean0`` and ``weight = (n1 + n0) / total`` (the empirical ``p(x)`` the backdoor
    formula averages over), so ``sum(weight * diff)`` is :func:`ate_backdoor`'s stratified
    estimate. ``label`` names the stratum (its distinct labels joined with ``/``).

    Returns
    -------
    pandas.DataFrame
        Sorted by ``weight`` (largest first); columns ``x, label, n1, n0, mean1, mean0, diff,
        weight, contribution`` (``weight * diff``).
    """
    _check_panel_columns(df, [x, t, outcome] + ([label] if label else []))
    xx = _as_float(df[x].to_numpy(), x)
    tt = _as_treatment(df[t].to_numpy(), t)
    yy = _as_float(df[outcome].to_numpy(), outcome)
    keep = _support_mask(xx, tt, "stratified")
    rows = []
    for v in np.unique(xx[keep]):
        m = keep & (xx == v)
        lab = ("/".join(sorted(map(str, pd.unique(df[label].to_numpy()[m])))) if label else "")
        y1, y0 = yy[m & (tt == 1)], yy[m & (tt == 0)]
        rows.append({"x": float(v), "label": lab, "n1": len(y1), "n0": len(y0),
                     "mean1": float(y1.mean()), "mean0": float(y0.mean()),
                     "diff": float(y1.mean() - y0.mean())})
    out = pd.DataFrame(rows)
    out["weight"] = (out["n1"] + out["n0"]) / float(keep.sum())
    out["contribution"] = out["weight"] * out["diff"]
    return out.sort_values("weight", ascending=False, kind="stable").reset_index(drop=True)


def ipw_balance(x, t, *, degree: int = 1, penalty: float = 1e-3, trim: float = 0.01) -> pd.DataFrame:
    """Covariate balance of the IPW weights on ``x`` itself.

    IPW is meant to give both arms the same ``x`` distribution. This reports the mean of
    ``x`` in each arm raw and under the Hajek weights of :func:`ate_ipw` (same propensity and
    trimming), next to the mean of ``x`` over all kept units, and the standardised mean
    difference (difference over the pooled raw standard deviation).

    Returns
    -------
    pandas.DataFrame
        Index ``raw, ipw``; columns ``mean_x_treated, mean_x_control, mean_x_all, smd``.
    """
    xx = _as_float(x, "x")
    tt = _as_treatment(t, "t")
    _check_lengths(x=xx, t=tt)
    _check_trim(trim)
    e = propensity_scores(xx, tt, degree=degree, penalty=penalty)
    keep = _ipw_mask(e, tt, trim, False)
    xk, tk, ek = xx[keep], tt[keep], e[keep]
    sd = float(np.sqrt((xk[tk == 1].var() + xk[tk == 0].var()) / 2.0))
    w1, w0 = tk / ek, (1 - tk) / (1 - ek)
    raw = (float(xk[tk == 1].mean()), float(xk[tk == 0].mean()))
    ipw = (float(np.sum(w1 * xk) / w1.sum()), float(np.sum(w0 * xk) / w0.sum()))
    rows = {name: {"mean_x_treated": m1, "mean_x_control": m0, "mean_x_all": float(xk.mean()),
                   "smd": (m1 - m0) / sd if sd > 0 else np.nan}
            for name, (m1, m0) in (("raw", raw), ("ipw", ipw))}
    return pd.DataFrame(rows).T
