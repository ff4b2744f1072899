"""The sigmoid scaling law with a fine-tuning shift (Appendix D, F.1) and its bootstrap."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import OptimizeWarning, curve_fit, least_squares
from scipy.special import expit

from hca.causal.trf_batch import trf_batch
from hca.estimator.results import r_squared
from hca.validation import (
    check_same_length,
    check_vector,
)

__all__ = [
    "PARAM_NAMES",
    "sigmoid_law",
    "SigmoidFit",
    "fit_sigmoid_law",
    "warm_refit",
    "warm_refit_counted",
    "WarmRefits",
    "warm_refit_batch",
    "AUTHORS_LOG_OFFSET",
    "fit_sigmoid_curve_fit",
    "SigmoidBootstrap",
]


#: Names of the sigmoid-law parameters, in the order used by ``cov`` and bootstrap samples.
PARAM_NAMES: tuple[str, ...] = ("L", "k", "log_c0", "tau", "b")
MIN_POINTS_SIGMOID = 6
#: ``max_nfev`` of a warm refit (:func:`warm_refit`, :func:`warm_refit_batch`).
WARM_MAX_NFEV = 500


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
            {
                "estimate": [self.params[p] for p in PARAM_NAMES],
                "se": [self.se[p] for p in PARAM_NAMES],
            },
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
    x = check_vector(log_c, "log_c")
    yy = check_vector(y, "y")
    tt = check_vector(t, "t", binary=True)
    n = check_same_length(log_c=x, t=tt, y=yy)
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


def _grid_starts(
    u: np.ndarray, t: np.ndarray, v: np.ndarray, use_tau: bool
) -> list[tuple[float, np.ndarray]]:
    """Starting values on a fixed grid over ``(k_u, u0)``.

    For fixed ``(k_u, u0)`` the model is linear in ``(L, tau, b)`` (variable projection), so
    these are solved by (batched, slightly ridged) least squares. Returns ``(rss, params)``
    sorted by ``rss``.
    """
    span, v_range = float(np.ptp(u)), float(np.ptp(v))
    kk, uu = np.meshgrid(
        np.geomspace(0.25, 20.0, 12),
        np.linspace(u.min() - 0.5 * span, u.max() + 0.5 * span, 15),
        indexing="ij",
    )
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


def _scaled_start(start: Mapping[str, float], xm: float, xs: float, ym: float, ys: float):
    """``start`` (original units, all of :data:`PARAM_NAMES`) on the scale of ``u`` and ``v``."""
    return np.array(
        [
            start["L"] / ys,
            start["k"] * xs,
            (start["log_c0"] - xm) / xs,
            start["tau"] / ys,
            (start["b"] - ym) / ys,
        ]
    )


def _warm_problem(x: np.ndarray, y: np.ndarray, start: Mapping[str, float], use_tau: bool):
    """The scaled problem of a warm refit: ``(u, v, lo, hi, idx, p0, (xm, xs, ym, ys))``.

    Raises ValueError when the resample is degenerate (constant ``x`` or ``y``).
    """
    xm, xs = float(x.mean()), float(x.std())
    ym, ys = float(y.mean()), float(y.std())
    if xs <= 0 or ys <= 0:
        raise ValueError("constant log_c or y in the resample")
    u, v = (x - xm) / xs, (y - ym) / ys
    lo, hi, idx = _scaled_bounds(u, v, use_tau)
    p0 = _inside(_scaled_start(start, xm, xs, ym, ys)[idx], lo, hi)
    return u, v, lo, hi, idx, p0, (xm, xs, ym, ys)


def _inside(p: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``p`` clipped just inside the bounds (an infinite bound stays infinite)."""
    eps_lo = lo + 1e-9 * (1 + np.abs(np.where(np.isfinite(lo), lo, 0.0)))
    eps_hi = hi - 1e-9 * (1 + np.abs(np.where(np.isfinite(hi), hi, 0.0)))
    return np.clip(p, eps_lo, eps_hi)


def _original_units(p: np.ndarray, resid: np.ndarray, v: np.ndarray, units) -> np.ndarray:
    """``[L, k, log_c0, tau, b, R^2]`` in original units from scaled parameters ``p`` (5)."""
    xm, xs, ym, ys = units
    return np.array([*_unscaled(p, xm, xs, ym, ys), r_squared(v, resid)])


def _unscaled(p: np.ndarray, xm: float, xs: float, ym: float, ys: float) -> list[float]:
    """Scaled ``(L, k_u, u0, tau, b)`` in original units: ``L``, ``tau`` scale with ``ys``;
    ``b = ys b_v + ym``; ``k = k_u / xs``; ``log_c0 = xm + xs u0``."""
    return [ys * p[0], p[1] / xs, xm + xs * p[2], ys * p[3], ys * p[4] + ym]


def warm_refit_counted(
    x: np.ndarray,
    t: np.ndarray,
    y: np.ndarray,
    start: Mapping[str, float],
    use_tau: bool,
    tol: float = 1e-6,
) -> tuple[np.ndarray, int, int]:
    """:func:`warm_refit` with scipy's evaluation counts: ``(values, nfev, njev)``."""
    u, v, lo, hi, idx, p0, units = _warm_problem(x, y, start, use_tau)
    resid, jac = _scaled_residuals(u, t, v, use_tau)
    res = least_squares(
        resid,
        p0,
        jac=jac,
        bounds=(lo, hi),
        method="trf",
        x_scale="jac",
        max_nfev=WARM_MAX_NFEV,
        ftol=tol,
        xtol=tol,
        gtol=tol,
    )
    values = _original_units(_expand(res.x, use_tau), res.fun, v, units)
    return values, int(res.nfev), int(res.njev)


def warm_refit(
    x: np.ndarray,
    t: np.ndarray,
    y: np.ndarray,
    start: Mapping[str, float],
    use_tau: bool,
    tol: float = 1e-6,
) -> np.ndarray:
    """One bounded local refit started at ``start`` (original units).

    The cheap refit of a bootstrap replicate: the same scaling, bounds and residuals as
    :func:`fit_sigmoid_law` but a single optimisation from the full-data estimate and no grid.
    Returns ``[L, k, log_c0, tau, b, R^2]`` in original units; raises ValueError when the
    resample is degenerate (constant ``x`` or ``y``). :func:`warm_refit_batch` computes many
    of them at once (the same algorithm, vectorised); this one-at-a-time version with
    :func:`scipy.optimize.least_squares` is its reference.
    """
    return warm_refit_counted(x, t, y, start, use_tau, tol)[0]


@dataclass(frozen=True)
class WarmRefits:
    """Result of :func:`warm_refit_batch`, one row per problem.

    Attributes
    ----------
    values : numpy.ndarray
        ``(B, 6)``: ``[L, k, log_c0, tau, b, R^2]`` in original units as :func:`warm_refit`
        returns them; NaN rows where ``ok`` is False.
    ok : numpy.ndarray
        False where :func:`warm_refit` raises ValueError (a constant ``x`` or ``y``, a start
        the optimiser refuses, a degenerate trust-region step).
    nfev, njev : numpy.ndarray
        Residual and Jacobian evaluations of every refit (0 where not fitted).
    """

    values: np.ndarray
    ok: np.ndarray
    nfev: np.ndarray
    njev: np.ndarray

    def summary(self) -> str:
        """One line: refits, failures and evaluations."""
        done = self.nfev[self.ok]
        span = f"nfev {int(done.min())}-{int(done.max())}" if len(done) else "none fitted"
        return f"{len(self.ok)} warm refits, {int((~self.ok).sum())} not fittable; {span}"


def _batch_functions(U: np.ndarray, T: np.ndarray, V: np.ndarray, use_tau: bool):
    """Residuals and Jacobians of stacked scaled problems for :func:`trf_batch`."""

    def full(p: np.ndarray) -> list[np.ndarray]:
        cols = [p[:, j, None] for j in range(p.shape[1])]
        return cols if use_tau else [*cols[:3], np.zeros_like(cols[0]), cols[3]]

    def resid(p: np.ndarray, members: np.ndarray) -> np.ndarray:
        L, k_u, u0, tau, b = full(p)
        u = U[members]
        return L * expit(k_u * (u - u0)) + tau * T[members] + b - V[members]

    def jac(p: np.ndarray, members: np.ndarray) -> np.ndarray:
        L, k_u, u0, _tau, _b = full(p)
        u = U[members]
        out = np.empty((*u.shape, p.shape[1]))  # the columns of _scaled_residuals' jac
        diff = u - u0
        s = expit(k_u * diff)
        ds = s * (1.0 - s)
        out[..., 0] = s
        out[..., 1] = L * ds * diff
        out[..., 2] = -L * ds * k_u
        if use_tau:
            out[..., 3] = T[members]
        out[..., -1] = 1.0
        return out

    return resid, jac


def _check_problems(xs, ts, ys) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Every problem's ``x``, ``t``, ``y`` checked as :func:`check_vector` checks them, in one
    call per kind on their concatenation (a failure is located problem by problem)."""
    out = []
    for seq, name in ((xs, "xs"), (ts, "ts"), (ys, "ys")):
        arrays = [np.asarray(a) for a in seq]
        for i, a in enumerate(arrays):
            if a.ndim != 1:
                raise ValueError(f"{name}[{i}] must be one-dimensional, found shape {a.shape}")
        try:
            whole = check_vector(
                np.concatenate(arrays) if arrays else [], name, binary=name == "ts"
            )
        except (TypeError, ValueError):
            for i, a in enumerate(arrays):  # name the problem
                check_vector(a, f"{name}[{i}]", binary=name == "ts")
            raise
        out.append(np.split(whole, np.cumsum([len(a) for a in arrays])[:-1]))
    for i, (x, t, y) in enumerate(zip(*out)):
        check_same_length(**{f"xs[{i}]": x, f"ts[{i}]": t, f"ys[{i}]": y})
    return out[0], out[1], out[2]


def warm_refit_batch(
    xs: Sequence[np.ndarray],
    ts: Sequence[np.ndarray],
    ys: Sequence[np.ndarray],
    starts: Sequence[Mapping[str, float]],
    use_tau: bool,
    tol: float = 1e-6,
) -> WarmRefits:
    """Many :func:`warm_refit` at once (e.g. every replicate and outcome of a bootstrap).

    Problem ``i`` is ``warm_refit(xs[i], ts[i], ys[i], starts[i], use_tau, tol)``; the
    problems are solved together by :func:`hca.causal.trf_batch.trf_batch`, scipy's
    algorithm vectorised, each on its own path and its own residuals (``tests/test_sigmoid_batch.py``
    checks every problem against :func:`warm_refit` to 1e-10 with the same evaluation counts).

    Parameters
    ----------
    xs, ts, ys : sequence of array-like
        Natural-log compute, 0/1 treatment and score of every problem (the lengths of one
        problem equal; problems may differ in length).
    starts : sequence of mapping
        Start of every problem (keys :data:`PARAM_NAMES`, original units).
    use_tau : bool
        Fit the treatment shift ``tau`` (False: fixed at 0), for every problem.
    tol : float, default 1e-6
        ``ftol = xtol = gtol`` of the optimiser.

    Returns
    -------
    WarmRefits

    Raises
    ------
    ValueError
        Sequences of different lengths, a problem whose arrays differ in length, are not
        1-d, hold NaN/inf, a ``t`` that is not 0/1, or a start missing a parameter.
    """
    n_prob = check_same_length(xs=xs, ts=ts, ys=ys, starts=starts)
    if not tol > 0:
        raise ValueError(f"tol must be > 0, found {tol}")
    x_all, t_all, y_all = _check_problems(xs, ts, ys)
    problems: list[tuple | None] = []
    for i, (x, t, y) in enumerate(zip(x_all, t_all, y_all)):
        missing = set(PARAM_NAMES) - set(starts[i])
        if missing:
            raise ValueError(f"starts[{i}] is missing parameter(s) {sorted(missing)}")
        try:
            problems.append((t, *_warm_problem(x, y, starts[i], use_tau)))
        except ValueError:  # degenerate resample: warm_refit raises, the refit is not fittable
            problems.append(None)
    values = np.full((n_prob, 6), np.nan)
    ok = np.zeros(n_prob, dtype=bool)
    nfev = np.zeros(n_prob, dtype=int)
    njev = np.zeros(n_prob, dtype=int)
    members = np.flatnonzero([p is not None for p in problems])
    if members.size:
        group = [problems[i] for i in members]
        lengths = np.array([len(p[0]) for p in group])
        M = int(lengths.max())

        def padded(k: int) -> np.ndarray:
            out = np.zeros((len(group), M))
            for row, p in enumerate(group):
                out[row, : len(p[k])] = p[k]
            return out

        resid, jac = _batch_functions(padded(1), padded(0), padded(2), use_tau)
        res = trf_batch(
            resid,
            jac,
            np.stack([p[6] for p in group]),
            np.stack([p[3] for p in group]),
            np.stack([p[4] for p in group]),
            ftol=tol,
            xtol=tol,
            gtol=tol,
            max_nfev=WARM_MAX_NFEV,
            lengths=lengths,
        )
        nfev[members], njev[members] = res.nfev, res.njev
        for row, i in enumerate(members):
            if res.failed[row]:
                continue
            ok[i] = True
            p = group[row]
            values[i] = _original_units(
                _expand(res.x[row], use_tau), res.fun[row, : lengths[row]], p[2], p[7]
            )
    return WarmRefits(values=values, ok=ok, nfev=nfev, njev=njev)


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
        p0 = _inside(np.where(np.isfinite(start[idx]), start[idx], 0.0), lo, hi)
        res = least_squares(
            resid,
            p0,
            jac=jac,
            bounds=(lo, hi),
            method="trf",
            x_scale="jac",
            max_nfev=2000,
            ftol=1e-12,
            xtol=1e-12,
            gtol=1e-12,
        )
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


def _standard_errors(cov: np.ndarray) -> dict[str, float]:
    """Square roots of the diagonal of ``cov`` by parameter name (NaN where not >= 0)."""
    diag = np.diag(cov)
    return {
        p: float(np.sqrt(diag[j])) if np.isfinite(diag[j]) and diag[j] >= 0 else float("nan")
        for j, p in enumerate(PARAM_NAMES)
    }


def _params_at_bound(
    p: np.ndarray, lo: np.ndarray, hi: np.ndarray, idx: list[int], tol: float = 1e-6
) -> tuple[str, ...]:
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
        extra = _scaled_start(start, xm, xs, ym, ys)

    res, lo, hi, idx = _fit_scaled(u, tt, v, use_tau, n_starts, extra)
    params = np.array(_unscaled(_expand(res.x, use_tau), xm, xs, ym, ys))
    dof = n - len(idx)
    cov = _original_covariance(res, idx, np.array([ys, 1.0 / xs, xs, ys, ys]), dof)
    se = _standard_errors(cov)
    rss = float(np.sum(res.fun**2)) * ys**2
    at_bound = _params_at_bound(res.x, lo, hi, idx)
    converged = bool(res.success and res.status > 0 and np.all(np.isfinite(cov[np.ix_(idx, idx)])))
    notes = []
    if not use_tau:
        notes.append(f"all T = {int(tt[0])}: tau is not identifiable and was fixed at 0")
    if at_bound:
        notes.append(f"parameter(s) {', '.join(at_bound)} at a bound; their SEs are unreliable")
    if not converged:
        singular = res.success and not np.all(np.isfinite(cov[np.ix_(idx, idx)]))
        notes.append(
            "J'J is singular: the parameters are not identifiable from these data "
            "(e.g. no increasing trend)"
            if singular
            else f"optimiser: {res.message}"
        )
    return SigmoidFit(
        L=float(params[0]),
        k=float(params[1]),
        log_c0=float(params[2]),
        tau=float(params[3]),
        b=float(params[4]),
        se=se,
        cov=cov,
        r2=r_squared(yy, ys * res.fun),
        n=n,
        n_treated=int(tt.sum()),
        resid_std=float(np.sqrt(rss / dof)),
        converged=converged,
        tau_fixed=not use_tau,
        at_bound=at_bound,
        notes="; ".join(notes),
    )


#: ``ln C`` in FLOPs minus the authors' ``x = ln(6 N D)`` with N in billions of parameters and
#: D in trillions of tokens (scaling_law.ipynb): ``ln(1e9 * 1e12)``.
AUTHORS_LOG_OFFSET: float = float(np.log(1e21))
# curve_fit's parameter order in scaling_law.ipynb -> positions in PARAM_NAMES
_CF_ORDER = ("L", "log_c0", "k", "b", "tau")


def _authors_law(xt, L, x0, k, b, c):
    return L * expit(k * (xt[0] - x0)) + b + c * xt[1]


def _authors_law_no_t(xt, L, x0, k, b):
    return L * expit(k * (xt[0] - x0)) + b


def fit_sigmoid_curve_fit(log_c, t, y, *, offset: float = AUTHORS_LOG_OFFSET) -> SigmoidFit:
    """The sigmoid law fitted as in the authors' ``scaling_law.ipynb`` (Appendix D, F.1).

    ``scipy.optimize.curve_fit`` of ``L / (1 + exp(-k (x - x0))) + b + c T`` with the
    notebook's settings: ``method="trf"``, start ``[max y, median x, 1, min y, 0]``, bounds
    ``L >= 0`` (the others free, ``k`` included), ``maxfev=50000``, ``ftol = xtol = 1e-7``,
    on the notebook's scale ``x = ln C - offset`` (``ln(6 N D)`` with N in billions and D in
    trillions: the optimiser's path depends on it). One start, no grid: unlike
    :func:`fit_sigmoid_law` it may stop at a local optimum, as theirs may have.

    Parameters
    ----------
    log_c, t, y : array-like
        As in :func:`fit_sigmoid_law` (``log_c`` the natural log of C in FLOPs).
    offset : float, default :data:`AUTHORS_LOG_OFFSET`
        Subtracted from ``log_c`` before fitting; ``log_c0`` is returned in FLOPs again.

    Returns
    -------
    SigmoidFit
        ``tau`` is the notebook's ``c``; ``se`` from ``curve_fit``'s covariance.

    Raises
    ------
    ValueError
        Invalid input (as :func:`fit_sigmoid_law`), or ``curve_fit`` did not converge.
    """
    x, tt, yy = _check_sigmoid_inputs(log_c, t, y)
    u = x - offset
    use_tau = 0 < tt.sum() < len(tt)
    p0 = [float(yy.max()), float(np.median(u)), 1.0, float(yy.min()), 0.0]
    law, npar = (_authors_law, 5) if use_tau else (_authors_law_no_t, 4)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)
        try:
            popt, pcov = curve_fit(
                law,
                (u, tt.astype(float)),
                yy,
                p0=p0[:npar],
                method="trf",
                maxfev=50000,
                bounds=([0.0] + [-np.inf] * (npar - 1), [np.inf] * npar),
                ftol=1e-7,
                xtol=1e-7,
            )
        except RuntimeError as err:
            raise ValueError(f"curve_fit did not converge: {err}") from None
    full = np.append(popt, 0.0) if not use_tau else popt
    pos = [_CF_ORDER.index(p) for p in PARAM_NAMES]  # PARAM_NAMES order from curve_fit's
    est = dict(zip(_CF_ORDER, full))
    est["log_c0"] += offset
    cov = np.full((5, 5), np.nan)
    idx = pos if use_tau else [i for i, p in zip(pos, PARAM_NAMES) if p != "tau"]
    keep = [j for j, p in enumerate(PARAM_NAMES) if use_tau or p != "tau"]
    cov[np.ix_(keep, keep)] = pcov[np.ix_(idx, idx)]
    se = _standard_errors(cov)
    resid = law((u, tt.astype(float)), *popt) - yy
    n = len(yy)
    at_bound = ("L",) if popt[0] <= 1e-6 * (1 + abs(p0[0])) else ()
    converged = bool(np.all(np.isfinite(cov[np.ix_(keep, keep)])))
    notes = [] if use_tau else [f"all T = {int(tt[0])}: tau fixed at 0"]
    if not converged:
        notes.append("curve_fit's covariance is not finite (parameters not identifiable)")
    return SigmoidFit(
        L=float(est["L"]),
        k=float(est["k"]),
        log_c0=float(est["log_c0"]),
        tau=float(est["tau"]),
        b=float(est["b"]),
        se=se,
        cov=cov,
        r2=r_squared(yy, resid),
        n=n,
        n_treated=int(tt.sum()),
        resid_std=float(np.sqrt(np.sum(resid**2) / max(n - npar, 1))),
        converged=converged,
        tau_fixed=not use_tau,
        at_bound=at_bound,
        notes="; ".join(notes),
    )


# ----------------------------------------------------------------------------- sigmoid bootstrap
@dataclass(frozen=True)
class SigmoidBootstrap:
    """A percentile bootstrap of the sigmoid law (:attr:`hca.causal.panels.SigmoidPanel.boot`).

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
