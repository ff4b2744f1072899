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

As Remark 3 of the paper stresses, these are causal effects only under conditional
ignorability given ``log C``; the code estimates the adjusted contrast, it cannot check that
assumption.
"""

from __future__ import annotations

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
    span = float(np.ptp(u))
    v_range = float(np.ptp(v))
    lo = np.array([1e-8, 1e-3, u.min() - 2.0 * span, -np.inf, -np.inf])
    hi = np.array([10.0 * v_range, 50.0, u.max() + 2.0 * span, np.inf, np.inf])
    idx = [0, 1, 2, 3, 4] if use_tau else [0, 1, 2, 4]
    lo, hi = lo[idx], hi[idx]

    # Grid over the nonlinear parameters, linear ones by least squares; keep the best few.
    starts = [p for _, p in _grid_starts(u, t, v, use_tau)[: max(1, n_starts)]]
    if extra_start is not None:
        starts.insert(0, np.asarray(extra_start, dtype=float))

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
_ESTIMATORS = {"backdoor": ate_backdoor, "ipw": ate_ipw, "aipw": ate_aipw}


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
    estimators : sequence of {"backdoor", "ipw", "aipw"}
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
