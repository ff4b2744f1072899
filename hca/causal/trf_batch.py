"""scipy's bounded Trust Region Reflective least squares, run on many problems at once.

The scaling chapter's bootstrap refits the sigmoid law thousands of times, each refit a
small :func:`scipy.optimize.least_squares` problem (``method="trf"``, bounds,
``x_scale="jac"``, an analytic Jacobian, ``tr_solver="exact"``). Each call spends its time in
per-call Python and numpy overhead on 5 x 5 matrices. :func:`trf_batch` runs the same
algorithm (scipy 1.17's ``trf_bounds``: Coleman-Li scaling, the Jacobian scaling kept as the
running maximum of the column norms, the exact trust-region solve by SVD, the reflective and
bound-intersection step selection, the acceptance ratio and radius update, the ``ftol``,
``xtol`` and ``gtol`` tests and ``max_nfev``) on a stack of problems, every problem on its
own path: a problem that has stopped is left alone, and problems at different stages (a new
trust-region subproblem, a retry with a smaller radius) advance together. Problems may differ
in their number of residuals: they are stored padded, and every product over residuals is
computed per length on the problem's own residuals only (never on the padding).

The arithmetic follows scipy's operation by operation, in the same order: the products go
through ``numpy.matmul``, which calls BLAS once per slice of a stack exactly as
``numpy.dot`` does for one vector (with scipy's memory layouts of ``U'`` and ``V``), and the
SVDs through ``numpy.linalg.svd``, LAPACK's ``gesdd`` as ``scipy.linalg.svd``. On the book's
3,600 warm refits of the scaling chapter the results are bitwise equal to scipy's, with the
same evaluation counts, even on fits whose Jacobian is singular to working precision (where
a change in the last bits moved results by up to 6e-4 relative); ``tests/test_sigmoid_batch.py``
checks 1e-10 and equal counts. Every problem is computed from its own slice of the stack, so
its result does not depend on which other problems share its batch. Where scipy raises (the
start outside the bounds or its residuals not finite, a degenerate reflection), the problem
is marked ``failed``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["TRFBatchResult", "trf_batch"]

EPS = float(np.finfo(float).eps)
RUNNING = -1  # status of a problem that has not stopped (scipy's ``None``)

#: ``fun(x, members) -> (k, m)`` residuals and ``jac(x, members) -> (k, m, n)`` Jacobians of
#: the problems ``members`` (indices into the batch) at their parameters ``x`` (``(k, n)``).
BatchFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class TRFBatchResult:
    """Result of :func:`trf_batch`, one row per problem.

    Attributes
    ----------
    x : ndarray of shape (B, n)
        Solutions.
    fun : ndarray of shape (B, m)
        Residuals at ``x``.
    cost : ndarray of shape (B,)
        ``0.5 * sum(fun**2)``.
    optimality : ndarray of shape (B,)
        The scaled gradient's infinity norm at the last test (scipy's ``optimality``).
    nfev, njev : ndarray of shape (B,)
        Residual and Jacobian evaluations, as scipy counts them.
    status : ndarray of shape (B,)
        scipy's status: 0 ``max_nfev`` reached, 1 ``gtol``, 2 ``ftol``, 3 ``xtol``, 4 both
        ``ftol`` and ``xtol``; -1 for a failed problem.
    failed : ndarray of shape (B,)
        True where scipy would have raised ``ValueError`` (the start outside the bounds, or
        a degenerate trust-region intersection); such rows hold the last iterate.
    """

    x: np.ndarray
    fun: np.ndarray
    cost: np.ndarray
    optimality: np.ndarray
    nfev: np.ndarray
    njev: np.ndarray
    status: np.ndarray
    failed: np.ndarray

    def summary(self) -> str:
        """One line: problems, failures, status counts and evaluations."""
        codes, counts = np.unique(self.status[~self.failed], return_counts=True)
        stat = ", ".join(f"status {c}: {k}" for c, k in zip(codes.tolist(), counts.tolist()))
        return (
            f"TRF batch: {len(self.x)} problems, {int(self.failed.sum())} failed; {stat}; "
            f"nfev {int(self.nfev.min()) if len(self.x) else 0}-"
            f"{int(self.nfev.max()) if len(self.x) else 0}"
        )


# ----------------------------------------------------------------------------- small helpers
def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot products of two stacks of vectors.

    ``numpy.matmul`` on a stack calls BLAS once per slice, as ``numpy.dot`` does on one
    vector, so every product is the one scipy computes, to the last bit.
    """
    return np.matmul(a[..., None, :], b[..., :, None])[..., 0, 0]


def _norm(a: np.ndarray) -> np.ndarray:
    """Row-wise Euclidean norms (``numpy.linalg.norm`` of every row)."""
    return np.sqrt(_dot(a, a))


def _matvec(J: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``J[b] @ s[b]`` for every problem ``b`` (BLAS per slice, as ``numpy.dot``)."""
    return np.matmul(J, s[..., None])[..., 0]


Plan = list[tuple[int, np.ndarray]]


def _plan(lengths: np.ndarray) -> Plan:
    """The rows of a stack grouped by their problem's number of residuals: ``[(m, rows)]``."""
    if not len(lengths):
        return []
    order = np.argsort(lengths, kind="stable")
    ordered = lengths[order]
    cuts = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
    starts, ends = np.r_[0, cuts], np.r_[cuts, len(order)]
    return [(int(ordered[a]), order[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]


def _mdot(a: np.ndarray, b: np.ndarray, plan: Plan) -> np.ndarray:
    """Dot products of residual vectors over every problem's own ``m_b`` entries."""
    out = np.empty(len(a))
    for m, rows in plan:
        out[rows] = _dot(a[rows, :m], b[rows, :m])
    return out


def _grad(J: np.ndarray, f: np.ndarray, plan: Plan, ids: np.ndarray) -> np.ndarray:
    """``J[i]' f[i]`` of the problems ``ids`` over their own residuals (``compute_grad``)."""
    out = np.empty((len(ids), J.shape[2]))
    for m, rows in plan:
        sel = ids[rows]
        out[rows] = _matvec(np.swapaxes(J[sel, :m], 1, 2), f[sel, :m])
    return out


def _column_norms(J: np.ndarray, plan: Plan, ids: np.ndarray) -> np.ndarray:
    """Column norms of the Jacobians of the problems ``ids`` (``compute_jac_scale``)."""
    out = np.empty((len(ids), J.shape[2]))
    for m, rows in plan:
        out[rows] = np.sum(J[ids[rows], :m] ** 2, axis=1) ** 0.5
    return out


def _products(
    J: np.ndarray,
    ids: np.ndarray,
    plan: Plan,
    vectors: list[np.ndarray],
    pairs: list[tuple[int, int]],
) -> list[np.ndarray]:
    """``(J s_i) . (J s_j)`` for every pair, row by row (``J[ids[r], :m_r]``), each product
    as :func:`_mv` and :func:`_mdot` compute it, with one gather of ``J`` per length."""
    out = [np.empty(len(ids)) for _ in pairs]
    for m, rows in plan:
        Jr = J[ids[rows], :m]
        images = [_matvec(Jr, v[rows]) for v in vectors]
        for k, (i, j) in enumerate(pairs):
            out[k][rows] = _dot(images[i], images[j])
    return out


def _active(x: np.ndarray, lb: np.ndarray, ub: np.ndarray, rtol: float) -> np.ndarray:
    """scipy's ``find_active_constraints``: -1 at an active lower, 1 at an upper bound."""
    active = np.zeros(x.shape, dtype=int)
    if rtol == 0:
        active[x <= lb] = -1
        active[x >= ub] = 1
        return active
    lower_dist, upper_dist = x - lb, ub - x
    with np.errstate(invalid="ignore"):
        lower = np.isfinite(lb) & (
            lower_dist <= np.minimum(upper_dist, rtol * np.maximum(1, np.abs(lb)))
        )
        upper = np.isfinite(ub) & (
            upper_dist <= np.minimum(lower_dist, rtol * np.maximum(1, np.abs(ub)))
        )
    active[lower] = -1
    active[upper] = 1
    return active


def _strictly_feasible(x: np.ndarray, lb: np.ndarray, ub: np.ndarray, rstep: float) -> np.ndarray:
    """scipy's ``make_strictly_feasible`` on every row."""
    x_new = x.copy()
    active = _active(x, lb, ub, rstep)
    low, up = active == -1, active == 1
    if rstep == 0:
        x_new[low] = np.nextafter(lb[low], ub[low])
        x_new[up] = np.nextafter(ub[up], lb[up])
    else:
        x_new[low] = lb[low] + rstep * np.maximum(1, np.abs(lb[low]))
        x_new[up] = ub[up] - rstep * np.maximum(1, np.abs(ub[up]))
    tight = (x_new < lb) | (x_new > ub)
    x_new[tight] = 0.5 * (lb[tight] + ub[tight])
    return x_new


def _step_to_bound(
    x: np.ndarray, s: np.ndarray, lb: np.ndarray, ub: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """scipy's ``step_size_to_bound`` per row: the step to the first bound and the hits."""
    nz = s != 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        steps = np.where(nz, np.maximum((lb - x) / s, (ub - x) / s), np.inf)
    min_step = steps.min(axis=1)
    hits = (steps == min_step[:, None]) * np.sign(s).astype(int)
    return min_step, hits


def _min_quadratic(
    a: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray, c: np.ndarray | float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """scipy's ``minimize_quadratic_1d`` per problem: ``a t^2 + b t + c`` on ``[lo, hi]``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ext = -0.5 * b / a
    inside = (a != 0) & (lo < ext) & (ext < hi)
    t = np.stack([lo, hi, np.where(inside, ext, 0.0)], axis=1)
    with np.errstate(invalid="ignore", over="ignore"):
        y = t * (a[:, None] * t + b[:, None]) + np.asarray(c)[..., None]
    y[:, 2] = np.where(inside, y[:, 2], np.inf)
    k = np.argmin(y, axis=1)
    rows = np.arange(len(a))
    return t[rows, k], y[rows, k]


def _quadratic(
    J: np.ndarray, g: np.ndarray, s: np.ndarray, diag: np.ndarray, plan: Plan, ids: np.ndarray
) -> np.ndarray:
    """scipy's ``evaluate_quadratic``: ``0.5 s'(J'J + diag)s + g's`` per problem."""
    (q,) = _products(J, ids, plan, [s], [(0, 0)])
    q = q + _dot(s * diag, s)
    return 0.5 * q + _dot(s, g)


# ----------------------------------------------------------------------------- trust region
def _py_max(a: np.ndarray, b: np.ndarray | float) -> np.ndarray:
    """Python's ``max(a, b)`` element-wise: ``b`` only where ``b > a``."""
    return np.where(b > a, b, a)


def _reset_alpha(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """scipy's restart of ``alpha``: ``max(0.001 * hi, (lo * hi) ** 0.5)``."""
    return _py_max(0.001 * hi, (lo * hi) ** 0.5)


def _phi(alpha: np.ndarray, suf: np.ndarray, s: np.ndarray, Delta: np.ndarray):
    denom = s**2 + alpha[:, None]
    p_norm = _norm(suf / denom)
    phi = p_norm - Delta
    phi_prime = -np.sum(suf**2 / denom**3, axis=1) / p_norm
    return phi, phi_prime


def _solve_trust_region(
    m: np.ndarray,
    uf: np.ndarray,
    s: np.ndarray,
    V: np.ndarray,
    Delta: np.ndarray,
    initial_alpha: np.ndarray,
    rtol: float = 0.01,
    max_iter: int = 10,
) -> tuple[np.ndarray, np.ndarray]:
    """scipy's ``solve_lsq_trust_region`` per problem: the step ``p_h`` and the new ``alpha``."""
    n = s.shape[1]
    suf = s * uf
    full_rank = (m >= n) & (s[:, -1] > EPS * m * s[:, 0])
    with np.errstate(divide="ignore", invalid="ignore"):
        p_gn = -_matvec(V, uf / s)
    gauss_newton = full_rank & (_norm(p_gn) <= Delta)

    alpha_upper = _norm(suf) / Delta
    alpha_lower = np.zeros(len(s))
    if full_rank.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            phi, phi_prime = _phi(np.zeros(len(s)), suf, s, Delta)
            alpha_lower = np.where(full_rank, -phi / phi_prime, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        alpha = np.where(
            ~full_rank & (initial_alpha == 0),
            _reset_alpha(alpha_lower, alpha_upper),
            initial_alpha,
        )
        todo = ~gauss_newton
        for _ in range(max_iter):
            if not todo.any():
                break
            out = (alpha < alpha_lower) | (alpha > alpha_upper)
            alpha = np.where(todo & out, _reset_alpha(alpha_lower, alpha_upper), alpha)
            phi, phi_prime = _phi(alpha, suf, s, Delta)
            alpha_upper = np.where(todo & (phi < 0), alpha, alpha_upper)
            ratio = phi / phi_prime
            alpha_lower = np.where(todo, _py_max(alpha_lower, alpha - ratio), alpha_lower)
            alpha = np.where(todo, alpha - (phi + Delta) * ratio / Delta, alpha)
            todo = todo & ~(np.abs(phi) < rtol * Delta)
        p = -_matvec(V, suf / (s**2 + alpha[:, None]))
        p = p * (Delta / _norm(p))[:, None]
    return np.where(gauss_newton[:, None], p_gn, p), np.where(gauss_newton, 0.0, alpha)


def _intersect_trust_region(x: np.ndarray, s: np.ndarray, Delta: np.ndarray):
    """scipy's ``intersect_trust_region``: the larger root, and where scipy raises."""
    a = _dot(s, s)
    b = _dot(x, s)
    c = _dot(x, x) - Delta**2
    bad = (a == 0) | (c > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.sqrt(b * b - a * c)
        q = -(b + np.copysign(d, b))
        t1 = q / a
        t2 = c / q
    return np.where(t1 < t2, t2, t1), bad


def _select_step(x, J_h, ids, diag_h, g_h, p, p_h, d, Delta, lb, ub, theta, lengths):
    """scipy's ``select_step`` per problem: step, scaled step, predicted reduction, failure.

    ``J_h[ids[r]]`` is the scaled Jacobian of row ``r`` (rows of the whole batch, not copied).
    """
    B = len(x)
    step, step_h = p.copy(), p_h.copy()
    predicted = -_quadratic(J_h, g_h, p_h, diag_h, _plan(lengths), ids)
    failed = np.zeros(B, dtype=bool)
    xp = x + p
    outside = np.flatnonzero(~np.all((xp >= lb) & (xp <= ub), axis=1))
    if not outside.size:
        return step, step_h, predicted, failed
    o = outside
    x, ids, diag_h, g_h = x[o], ids[o], diag_h[o], g_h[o]
    p, p_h, d, Delta, lb, ub, theta = p[o], p_h[o], d[o], Delta[o], lb[o], ub[o], theta[o]
    plan = _plan(lengths[o])

    p_stride, hits = _step_to_bound(x, p, lb, ub)
    r_h = np.where(hits != 0, -p_h, p_h)
    r = d * r_h
    p = p * p_stride[:, None]
    p_h = p_h * p_stride[:, None]
    x_on_bound = x + p
    to_tr, bad = _intersect_trust_region(p_h, r_h, Delta)
    to_bound, _ = _step_to_bound(x_on_bound, r, lb, ub)
    r_stride = np.where(to_tr < to_bound, to_tr, to_bound)  # Python's min(to_bound, to_tr)
    positive = r_stride > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        r_lo = np.where(positive, (1 - theta) * p_stride / r_stride, 0.0)
    r_hi = np.where(positive, np.where(r_stride == to_bound, theta * to_bound, to_tr), -1.0)
    reflect = r_lo <= r_hi
    p_h_theta = p_h * theta[:, None]
    ag_h = -g_h
    # the residual-space products of the three quadratics, one gather per length
    (vv, uv, uu, qq, ww) = _products(
        J_h, ids, plan, [r_h, p_h, p_h_theta, ag_h], [(0, 0), (1, 0), (1, 1), (2, 2), (3, 3)]
    )
    # build_quadratic_1d(J_h, g_h, r_h, s0=p_h, diag=diag_h)
    a = vv
    a = a + _dot(r_h * diag_h, r_h)
    a = a * 0.5
    b = _dot(g_h, r_h)
    b = b + uv
    c = 0.5 * uu + _dot(g_h, p_h)
    b = b + _dot(p_h * diag_h, r_h)
    c = c + 0.5 * _dot(p_h * diag_h, p_h)
    r_t, r_value = _min_quadratic(a, b, r_lo, r_hi, c)
    r_h = np.where(reflect[:, None], r_h * r_t[:, None] + p_h, r_h)
    r = np.where(reflect[:, None], r_h * d, r)
    r_value = np.where(reflect, r_value, np.inf)

    p = p * theta[:, None]
    p_h = p_h_theta
    # evaluate_quadratic(J_h, g_h, p_h, diag=diag_h)
    q = qq
    q = q + _dot(p_h * diag_h, p_h)
    p_value = 0.5 * q + _dot(p_h, g_h)

    ag = d * ag_h
    with np.errstate(divide="ignore"):
        to_tr = Delta / _norm(ag_h)
    to_bound, _ = _step_to_bound(x, ag, lb, ub)
    ag_stride = np.where(to_bound < to_tr, theta * to_bound, to_tr)
    # build_quadratic_1d(J_h, g_h, ag_h, diag=diag_h)
    a = ww
    a = a + _dot(ag_h * diag_h, ag_h)
    a = a * 0.5
    b = _dot(g_h, ag_h)
    ag_stride, ag_value = _min_quadratic(a, b, np.zeros(len(o)), ag_stride)
    ag_h = ag_h * ag_stride[:, None]
    ag = ag * ag_stride[:, None]

    use_p = (p_value < r_value) & (p_value < ag_value)
    use_r = ~use_p & (r_value < p_value) & (r_value < ag_value)
    step[o] = np.where(use_p[:, None], p, np.where(use_r[:, None], r, ag))
    step_h[o] = np.where(use_p[:, None], p_h, np.where(use_r[:, None], r_h, ag_h))
    predicted[o] = -np.where(use_p, p_value, np.where(use_r, r_value, ag_value))
    failed[o] = bad
    return step, step_h, predicted, failed


def _scaling_vector(x, g, lb, ub):
    """scipy's ``CL_scaling_vector`` (Coleman-Li) per row."""
    v = np.ones_like(x)
    dv = np.zeros_like(x)
    mask = (g < 0) & np.isfinite(ub)
    v[mask] = ub[mask] - x[mask]
    dv[mask] = -1
    mask = (g > 0) & np.isfinite(lb)
    v[mask] = x[mask] - lb[mask]
    dv[mask] = 1
    return v, dv


# ----------------------------------------------------------------------------- the algorithm
def _check_batch(x0: np.ndarray, lb: np.ndarray, ub: np.ndarray, tols, max_nfev: int):
    x0 = np.asarray(x0, dtype=float)
    if x0.ndim != 2 or x0.shape[1] < 1:
        raise ValueError(f"x0 must be a 2-d array (problems x parameters), found shape {x0.shape}")
    lb = np.broadcast_to(np.asarray(lb, dtype=float), x0.shape)
    ub = np.broadcast_to(np.asarray(ub, dtype=float), x0.shape)
    for name, tol in zip(("ftol", "xtol", "gtol"), tols):
        if not tol >= EPS:
            raise ValueError(f"{name} must be at least machine epsilon ({EPS:.3g}), found {tol}")
    if int(max_nfev) < 1:
        raise ValueError(f"max_nfev must be >= 1, found {max_nfev}")
    return x0, lb, ub


def trf_batch(
    fun: BatchFunction,
    jac: BatchFunction,
    x0: np.ndarray,
    lb: np.ndarray,
    ub: np.ndarray,
    *,
    ftol: float = 1e-8,
    xtol: float = 1e-8,
    gtol: float = 1e-8,
    max_nfev: int = 500,
    lengths: np.ndarray | None = None,
) -> TRFBatchResult:
    """Bounded least squares of many problems at once, as ``scipy.optimize.least_squares``.

    Every problem ``b`` is solved as ``least_squares(fun_b, x0[b], jac=jac_b, bounds=(lb[b],
    ub[b]), method="trf", x_scale="jac", ftol=ftol, xtol=xtol, gtol=gtol,
    max_nfev=max_nfev)`` with at least one finite bound (scipy's ``trf_bounds``).

    Parameters
    ----------
    fun, jac : callable
        ``fun(x, members)`` returns the residuals ``(k, m)`` and ``jac(x, members)`` the
        Jacobians ``(k, m, n)`` of the problems ``members`` (integer indices into the batch)
        at ``x`` (``(k, n)``); problem ``b`` uses the first ``lengths[b]`` of the ``m`` columns
        (its residuals), the others are ignored.
    x0 : ndarray of shape (B, n)
        Starts (inside the bounds).
    lb, ub : ndarray of shape (B, n) or (n,)
        Bounds (``-inf``/``inf`` for none).
    ftol, xtol, gtol : float
        scipy's tolerances (each at least machine epsilon).
    max_nfev : int, default 500
        Evaluations of ``fun`` per problem.
    lengths : ndarray of shape (B,), optional
        Number of residuals of every problem (default: all ``m``). Problems of the same length
        share their products; each is computed on its own residuals only, as scipy does.

    Returns
    -------
    TRFBatchResult

    Raises
    ------
    ValueError
        ``x0`` not 2-d, bounds of another shape, a tolerance below machine epsilon or
        ``max_nfev < 1``; ``fun``/``jac`` returning arrays of the wrong shape.
    """
    x0, lb, ub = _check_batch(x0, lb, ub, (ftol, xtol, gtol), max_nfev)
    B, n = x0.shape
    failed = ~np.all((x0 >= lb) & (x0 <= ub), axis=1) | np.any(lb >= ub, axis=1)
    with np.errstate(invalid="ignore"):
        x = np.where(failed[:, None], x0, _strictly_feasible(x0, lb, ub, 1e-10))
    everyone = np.arange(B)
    f = np.asarray(fun(x, everyone), dtype=float)
    J = np.asarray(jac(x, everyone), dtype=float)
    if f.ndim != 2 or f.shape[0] != B or J.shape != (B, f.shape[1], n):
        raise ValueError(
            f"fun and jac must return (problems, residuals) and (problems, residuals, "
            f"parameters) arrays, found {f.shape} and {J.shape} for {B} problems of {n}"
        )
    M = f.shape[1]
    m = np.full(B, M) if lengths is None else np.asarray(lengths, dtype=int)
    if m.shape != (B,) or np.any(m < 1) or np.any(m > M):
        raise ValueError(f"lengths must be {B} integers in 1..{M}, found {m!r}")
    rows = np.arange(M)[None, :] < m[:, None]  # the residuals of every problem
    failed |= ~np.all(np.isfinite(f) | ~rows, axis=1)  # scipy: residuals not finite at start
    nfev = np.ones(B, dtype=int)
    njev = np.ones(B, dtype=int)
    everyone_plan = _plan(m)
    with np.errstate(invalid="ignore", over="ignore"):  # the failed ones are not used
        cost = 0.5 * _mdot(f, f, everyone_plan)
        g = _grad(J, f, everyone_plan, everyone)
        scale_inv = _column_norms(J, everyone_plan, everyone)
    scale_inv[scale_inv == 0] = 1
    scale = 1 / scale_inv
    v, dv = _scaling_vector(x, g, lb, ub)
    v = np.where(dv != 0, v * scale_inv, v)
    with np.errstate(divide="ignore", invalid="ignore"):
        Delta = _norm(x * scale_inv / v**0.5)
    Delta[Delta == 0] = 1.0
    alpha = np.zeros(B)
    status = np.full(B, RUNNING)
    g_norm = np.zeros(B)
    running = ~failed
    outer = running.copy()  # problems about to start an iteration (scipy's outer loop)
    actual = np.full(B, -1.0)
    # per-iteration quantities of the problems in their inner loop
    d, diag_h, g_h, theta = (np.zeros((B, n)), np.zeros((B, n)), np.zeros((B, n)), np.zeros(B))
    s_all, uf_all = np.zeros((B, n)), np.zeros((B, n))
    V_all, J_h_all = np.zeros((B, n, n)), np.zeros((B, M, n))

    while True:
        o = np.flatnonzero(running & outer)
        if o.size:
            v, dv = _scaling_vector(x[o], g[o], lb[o], ub[o])
            g_norm[o] = np.max(np.abs(g[o] * v), axis=1)
            status[o] = np.where(g_norm[o] < gtol, 1, status[o])
            stop = (status[o] != RUNNING) | (nfev[o] == max_nfev)
            running[o[stop]] = False
            outer[o] = False
            keep = ~stop
            o, v, dv = o[keep], v[keep], dv[keep]
            v = np.where(dv != 0, v * scale_inv[o], v)
            d[o] = v**0.5 * scale[o]
            diag_h[o] = g[o] * dv * scale[o]
            g_h[o] = d[o] * g[o]
            root = np.einsum("bi,ij->bij", diag_h[o] ** 0.5, np.eye(n))
            for mm, grp in _plan(m[o]):
                og = o[grp]
                J_h = J[og, :mm] * d[og][:, None, :]
                J_h_all[og, :mm] = J_h
                J_aug = np.concatenate([J_h, root[grp]], axis=1)
                U, s, Vt = np.linalg.svd(J_aug, full_matrices=False)
                # scipy's ``U.T`` and ``V = Vt.T`` are C-ordered; the same layout makes BLAS
                # compute the same products
                s_all[og] = s
                V_all[og] = np.ascontiguousarray(np.swapaxes(Vt, 1, 2))
                f_aug = np.concatenate([f[og, :mm], np.zeros((len(og), n))], axis=1)
                uf_all[og] = _matvec(np.ascontiguousarray(np.swapaxes(U, 1, 2)), f_aug)
            theta[o] = _py_max(np.full(len(o), 0.995), 1 - g_norm[o])
            actual[o] = -1.0
        a = np.flatnonzero(running)
        if not a.size:
            break
        # one pass of scipy's inner loop for every running problem
        p_h, alpha[a] = _solve_trust_region(m[a], uf_all[a], s_all[a], V_all[a], Delta[a], alpha[a])
        p = d[a] * p_h
        step, step_h, predicted, bad = _select_step(
            x[a],
            J_h_all,
            a,
            diag_h[a],
            g_h[a],
            p,
            p_h,
            d[a],
            Delta[a],
            lb[a],
            ub[a],
            theta[a],
            m[a],
        )
        if bad.any():
            failed[a[bad]] = True
            running[a[bad]] = False
            keep = ~bad
            a, step, step_h, predicted = a[keep], step[keep], step_h[keep], predicted[keep]
            if not a.size:
                continue
        x_new = _strictly_feasible(x[a] + step, lb[a], ub[a], 0)
        f_new = np.asarray(fun(x_new, a), dtype=float)
        nfev[a] += 1
        step_h_norm = _norm(step_h)
        finite = np.all(np.isfinite(f_new) | ~rows[a], axis=1)
        Delta[a[~finite]] = 0.25 * step_h_norm[~finite]
        with np.errstate(invalid="ignore", over="ignore"):
            cost_new = 0.5 * _mdot(f_new, f_new, _plan(m[a]))
        act = np.where(finite, cost[a] - cost_new, actual[a])
        actual[a] = act
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(
                predicted > 0,
                act / predicted,
                np.where((predicted == 0) & (act == 0), 1.0, 0.0),
            )
        Delta_a = Delta[a]
        Delta_new = np.where(
            ratio < 0.25,
            0.25 * step_h_norm,
            np.where((ratio > 0.75) & (step_h_norm > 0.95 * Delta_a), 2.0 * Delta_a, Delta_a),
        )
        ftol_ok = (act < ftol * cost[a]) & (ratio > 0.25)
        xtol_ok = _norm(step) < xtol * (xtol + _norm(x[a]))
        code = np.where(ftol_ok & xtol_ok, 4, np.where(ftol_ok, 2, np.where(xtol_ok, 3, RUNNING)))
        stopped = finite & (code != RUNNING)
        status[a] = np.where(stopped, code, status[a])
        go_on = finite & ~stopped
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha[a] = np.where(go_on, alpha[a] * (Delta_a / Delta_new), alpha[a])
        Delta[a] = np.where(go_on, Delta_new, Delta[a])
        leave = stopped | (act > 0) | (nfev[a] >= max_nfev)
        accept = leave & (act > 0)
        outer[a[leave]] = True
        if accept.any():
            acc = a[accept]
            x[acc] = x_new[accept]
            f[acc] = f_new[accept]
            cost[acc] = cost_new[accept]
            J[acc] = np.asarray(jac(x[acc], acc), dtype=float)
            njev[acc] += 1
            acc_plan = _plan(m[acc])
            g[acc] = _grad(J, f, acc_plan, acc)
            scale_inv[acc] = np.maximum(_column_norms(J, acc_plan, acc), scale_inv[acc])
            scale[acc] = 1 / scale_inv[acc]

    status = np.where(failed, -1, np.where(status == RUNNING, 0, status))
    return TRFBatchResult(
        x=x,
        fun=f,
        cost=cost,
        optimality=g_norm,
        nfev=nfev,
        njev=njev,
        status=status,
        failed=failed,
    )
