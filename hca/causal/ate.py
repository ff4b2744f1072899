"""Average treatment effects of fine-tuning: backdoor, IPW, AIPW (Appendix F)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from sklearn.linear_model import LogisticRegression

from hca.causal.bootstrap import percentile_ci, run_bootstrap
from hca.validation import (
    check_domains,
    check_fraction,
    check_same_length,
    check_vector,
)

__all__ = [
    "ATEResult",
    "ate_backdoor",
    "ate_ipw",
    "ate_aipw",
    "propensity_scores",
    "ate_ipw_strata",
]


# ----------------------------------------------------------------------------- ATE: models
def _check_ate_inputs(x, t, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xx = check_vector(x, "x")
    yy = check_vector(y, "y")
    tt = check_vector(t, "t", binary=True)
    check_same_length(x=xx, t=tt, y=yy)
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


def support_mask(x: np.ndarray, t: np.ndarray, method: str) -> np.ndarray:
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
                raise ValueError("a stratum lacks one arm")  # cannot happen after support_mask
            m[arm] = sums / counts
        return _OutcomeModel(
            m[1][inverse], m[0][inverse], keep, f"stratified means over {len(values)} x values"
        )
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
    return _OutcomeModel(
        preds[1],
        preds[0],
        keep,
        f"natural cubic spline per arm, {len(knots)} knots at quantiles of x",
    )


def _logistic_fit(features: np.ndarray, t: np.ndarray, penalty: float) -> np.ndarray:
    """Fitted ``P(T=1 | x)`` of a ridge-penalised logistic regression (scikit-learn).

    Minimises ``sum of log-losses + penalty / 2 * ||slopes||^2`` (``C = 1 / penalty``; the
    intercept is not penalised) by Newton's method to a tight tolerance.
    """
    model = LogisticRegression(C=1.0 / penalty, solver="newton-cholesky", tol=1e-10, max_iter=200)
    return model.fit(features, t).predict_proba(features)[:, 1]


def propensity_scores(x, t, *, degree: int = 1, penalty: float = 1e-3) -> np.ndarray:
    """Logistic propensity ``P(T = 1 | x)`` with a polynomial of ``degree`` in standardised x.

    Fitted by scikit-learn's :class:`~sklearn.linear_model.LogisticRegression` (Newton's
    method) with a small ridge penalty (``penalty / 2 * ||beta||^2`` on the slope
    coefficients, ``C = 1 / penalty``, intercept unpenalised), which keeps the estimate finite
    under (quasi-)separation.

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
    xx = check_vector(x, "x")
    tt = check_vector(t, "t", binary=True)
    check_same_length(x=xx, t=tt)
    if degree < 1:
        raise ValueError(f"degree must be >= 1, found {degree}")
    if penalty < 0:
        raise ValueError(f"penalty must be >= 0, found {penalty}")
    if tt.min() == tt.max():
        raise ValueError(f"t has a single arm (all T = {tt[0]}); a propensity needs both")
    return _propensity(xx, tt, degree, penalty)


def _propensity(
    x: np.ndarray,
    t: np.ndarray,
    degree: int,
    penalty: float,
    memo: dict | None = None,
) -> np.ndarray:
    """Fitted propensities; with ``memo`` (a dict owned by the caller) a fit on the same data
    and settings is reused, and every caller gets its own copy."""
    x = np.ascontiguousarray(x, dtype=float)
    t = np.ascontiguousarray(t, dtype=float)
    if memo is None:
        return _fit_propensity(x, t, degree, penalty)
    key = (x.tobytes(), t.tobytes(), int(degree), float(penalty))
    if key not in memo:
        memo[key] = _fit_propensity(x, t, degree, penalty)
    return memo[key].copy()


def _fit_propensity(x: np.ndarray, t: np.ndarray, degree: int, penalty: float) -> np.ndarray:
    z = (x - x.mean()) / max(x.std(), 1e-12)
    feats = np.column_stack([z**p for p in range(1, degree + 1)])
    feats = (feats - feats.mean(axis=0)) / np.where(feats.std(axis=0) > 0, feats.std(axis=0), 1.0)
    return _logistic_fit(feats, t, max(penalty, 1e-10))


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
            ci_txt = (
                f"[{self.ci_low:.4g}, {self.ci_high:.4g}] ({100 * self.ci:g}% percentile "
                f"bootstrap, {self.n_boot - self.n_boot_failed}/{self.n_boot} replicates)"
            )
        else:
            ci_txt = "not computed (n_boot = 0)"
        return "\n".join(
            [
                f"ATE of fine-tuning, {self.estimator} estimator: {self.ate:.4g}  CI {ci_txt}",
                f"  E[Y|do(T=1)] = {self.mu1:.4g}, E[Y|do(T=0)] = {self.mu0:.4g}; "
                f"naive difference in means = {self.naive:.4g}",
                f"  n treated = {self.n_treated}, n control = {self.n_control}, used = {self.n_used} "
                f"({100 * self.share_outside_support:.1f}% outside common support / trimmed)",
                f"  {self.details}",
            ]
        )


def _make_result(
    estimator: str,
    point: Callable[[np.ndarray], tuple[float, float, int, str]],
    x: np.ndarray,
    t: np.ndarray,
    y: np.ndarray,
    n_boot: int,
    ci: float,
    random_state,
    domains,
) -> ATEResult:
    check_fraction(ci, "ci")
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, found {n_boot}")
    g = None if domains is None else check_domains(domains, x, X_name="x").labels
    all_idx = np.arange(len(x))
    mu1, mu0, n_used, details = point(all_idx)

    def stat(idx: np.ndarray) -> float:
        if min(t[idx].sum(), len(idx) - t[idx].sum()) < 2:
            raise ValueError("resample has fewer than 2 units in an arm")
        m1, m0, _, _ = point(idx)
        return m1 - m0

    samples, failed = run_bootstrap(stat, t, n_boot, random_state, g, f"the {estimator} ATE")
    samples = samples.ravel()
    low, high = percentile_ci(samples, ci) if n_boot else (np.nan, np.nan)
    n1 = int(t.sum())
    return ATEResult(
        estimator=estimator,
        ate=mu1 - mu0,
        mu1=mu1,
        mu0=mu0,
        ci_low=float(low),
        ci_high=float(high),
        ci=ci,
        naive=float(y[t == 1].mean() - y[t == 0].mean()),
        n_treated=n1,
        n_control=len(t) - n1,
        n_used=n_used,
        share_outside_support=1.0 - n_used / len(t),
        n_boot=n_boot,
        n_boot_failed=failed,
        boot_samples=samples,
        details=details,
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
    domains=None,
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
    domains : array-like, optional
        Domain (base model) of every unit: the bootstrap then resamples whole domains
        (a cluster bootstrap) instead of units within arms.

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
        keep = support_mask(xi, ti, meth)
        om = _fit_outcome_model(xi, ti, yi, meth, n_knots, keep)
        return float(om.m1.mean()), float(om.m0.mean()), int(keep.sum()), om.description

    return _make_result("backdoor", point, xx, tt, yy, n_boot, ci, random_state, domains)


def ipw_mask(e: np.ndarray, t: np.ndarray, trim: float, common_support: bool) -> np.ndarray:
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


def check_trim(trim: float) -> None:
    if not 0.0 <= trim < 0.5:
        raise ValueError(f"trim must be in [0, 0.5), found {trim}")


def hajek_means(e: np.ndarray, t: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Hajek-normalised IPW means of the two arms, ``(mu1, mu0)``."""
    w1, w0 = t / e, (1 - t) / (1 - e)
    return float(np.sum(w1 * y) / w1.sum()), float(np.sum(w0 * y) / w0.sum())


def _ipw_details(degree: int, penalty: float, trim: float, common_support: bool) -> str:
    cs = "min-max common support on e(x), " if common_support else ""
    return (
        f"logistic propensity (degree {degree} in x, ridge {penalty:g}); {cs}"
        f"trimmed to e in [{trim:g}, {1 - trim:g}]; Hajek-normalised (stabilised) weights"
    )


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
    domains=None,
    propensities: dict | None = None,
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
    n_boot, ci, random_state, domains
        As in :func:`ate_backdoor`.
    propensities : dict, optional
        Fitted propensities to share between calls on the same ``(x, t)`` (an empty dict the
        caller creates and passes to every call, as :mod:`hca.paper.scaling` does across
        outcomes: the bootstrap resamples, hence the propensity fits, are the same for every
        outcome). Keyed by the resample's data, ``degree`` and ``penalty``; nothing is kept
        once the caller drops the dict.

    Returns
    -------
    ATEResult
    """
    xx, tt, yy = _check_ate_inputs(x, t, y)
    check_trim(trim)
    if degree < 1:
        raise ValueError(f"degree must be >= 1, found {degree}")
    details = _ipw_details(degree, penalty, trim, common_support)

    def point(idx: np.ndarray):
        xi, ti, yi = xx[idx], tt[idx], yy[idx]
        e = _propensity(xi, ti, degree, penalty, propensities)
        keep = ipw_mask(e, ti, trim, common_support)
        return (*hajek_means(e[keep], ti[keep], yi[keep]), int(keep.sum()), details)

    return _make_result("ipw", point, xx, tt, yy, n_boot, ci, random_state, domains)


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
    domains=None,
    propensities: dict | None = None,
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
    n_boot, ci, random_state, domains
        As in :func:`ate_backdoor`.
    propensities : dict, optional
        As in :func:`ate_ipw`.

    Returns
    -------
    ATEResult
    """
    xx, tt, yy = _check_ate_inputs(x, t, y)
    meth = _resolve_method(method, xx)
    check_trim(trim)
    if degree < 1 or n_knots < 2:
        raise ValueError(f"need degree >= 1 and n_knots >= 2, found {degree} and {n_knots}")

    def point(idx: np.ndarray):
        xi, ti, yi = xx[idx], tt[idx], yy[idx]
        e = _propensity(xi, ti, degree, penalty, propensities)
        keep = (e >= trim) & (e <= 1 - trim)
        if min(ti[keep].sum(), keep.sum() - ti[keep].sum()) < 1:
            raise ValueError("after propensity trimming an arm is empty; lower trim")
        kept = np.flatnonzero(keep)  # outcome-model common support among the trimmed units
        keep = np.zeros_like(keep)
        keep[kept[support_mask(xi[kept], ti[kept], meth)]] = True
        om = _fit_outcome_model(xi, ti, yi, meth, n_knots, keep)
        e, ti, yi = e[keep], ti[keep], yi[keep]
        w1, w0 = ti / e, (1 - ti) / (1 - e)
        mu1 = om.m1.mean() + np.sum(w1 * (yi - om.m1)) / w1.sum()
        mu0 = om.m0.mean() + np.sum(w0 * (yi - om.m0)) / w0.sum()
        details = f"{om.description}; {_ipw_details(degree, penalty, trim, False)}"
        return float(mu1), float(mu0), int(keep.sum()), details

    return _make_result("aipw", point, xx, tt, yy, n_boot, ci, random_state, domains)


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
    domains=None,
    propensities: dict | None = None,
) -> ATEResult:
    """IPW ATE restricted to the stratified backdoor estimator's support.

    Identical to :func:`ate_ipw` except that only the units whose exact ``x`` is observed in
    both arms enter, recomputed in every bootstrap replicate.
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
    n_boot, ci, random_state, domains
        As in :func:`ate_backdoor`.
    propensities : dict, optional
        As in :func:`ate_ipw`.

    Returns
    -------
    ATEResult
        ``estimator == "ipw_strata"``; ``n_used`` counts units inside the strata and the
        trimming bounds.
    """
    xx, tt, yy = _check_ate_inputs(x, t, y)
    check_trim(trim)
    if degree < 1:
        raise ValueError(f"degree must be >= 1, found {degree}")
    details = "units in strata with both arms; " + _ipw_details(degree, penalty, trim, False)

    def point(idx: np.ndarray):
        xi, ti, yi = xx[idx], tt[idx], yy[idx]
        keep = support_mask(xi, ti, "stratified")
        xi, ti, yi = xi[keep], ti[keep], yi[keep]
        if min(ti.sum(), len(ti) - ti.sum()) < 2:
            raise ValueError("fewer than 2 units in an arm inside the common strata")
        e = _propensity(xi, ti, degree, penalty, propensities)
        k2 = ipw_mask(e, ti, trim, False)
        return (*hajek_means(e[k2], ti[k2], yi[k2]), int(k2.sum()), details)

    return _make_result("ipw_strata", point, xx, tt, yy, n_boot, ci, random_state, domains)


# ----------------------------------------------------------------------------- by name
ESTIMATORS = {
    "backdoor": ate_backdoor,
    "ipw": ate_ipw,
    "aipw": ate_aipw,
    "ipw_strata": ate_ipw_strata,
}
