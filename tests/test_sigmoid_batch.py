"""The batched warm refits (hca.causal.trf_batch, sigmoid.warm_refit_batch) against scipy's."""

from __future__ import annotations

import numpy as np
import pytest

from hca.causal.bootstrap import resampler
from hca.causal.sigmoid import (
    fit_sigmoid_law,
    sigmoid_law,
    warm_refit,
    warm_refit_batch,
    warm_refit_counted,
)
from hca.causal.trf_batch import trf_batch

TRUE = {"L": 40.0, "k": 0.8, "log_c0": 53.0, "tau": 3.0, "b": 10.0}


def _compare(xs, ts, ys, starts, use_tau, rtol=1e-10):
    """Every batched refit equals scipy's (relative to 1 + |value|) with the same counts."""
    batch = warm_refit_batch(xs, ts, ys, starts, use_tau)
    for i, (x, t, y, start) in enumerate(zip(xs, ts, ys, starts)):
        try:
            values, nfev, njev = warm_refit_counted(x, t, y, start, use_tau)
        except ValueError:
            assert not batch.ok[i] and np.isnan(batch.values[i]).all()
            continue
        assert batch.ok[i]
        err = np.abs(batch.values[i] - values) / (1.0 + np.abs(values))
        assert err.max() <= rtol, (i, err.max())
        assert (batch.nfev[i], batch.njev[i]) == (nfev, njev), i
    return batch


def _simulated(seed: int, n: int = 40, noise: float = 3.0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(48.0, 58.0, n)
    t = (rng.random(n) < 0.5).astype(int)
    y = sigmoid_law(x, t, **TRUE) + rng.normal(0.0, noise, n)
    return x, t, y


def _resamples(x, t, y, n_boot: int, seed: int, domains=None):
    draw = resampler(t, domains)
    idx = [draw(np.random.default_rng([seed, r])) for r in range(n_boot)]
    return [x[i] for i in idx], [t[i] for i in idx], [y[i] for i in idx]


@pytest.mark.parametrize("use_tau", [True, False])
def test_batch_equals_scipy_on_simulated_resamples(use_tau):
    x, t, y = _simulated(0)
    start = fit_sigmoid_law(x, t, y, n_starts=2).params
    # cluster resamples of different lengths (domains of 1 to 4 models)
    domains = np.repeat(np.arange(16), [1, 2, 3, 4] * 4)[: len(x)]
    xs, ts, ys = _resamples(x, t, y, 40, 1, domains)
    assert len({len(a) for a in xs}) > 3
    batch = _compare(xs, ts, ys, [start] * len(xs), use_tau)
    assert batch.ok.all() and batch.nfev.max() > 3
    assert "40 warm refits" in batch.summary()


def test_batch_equals_scipy_with_tau_fixed_and_one_arm():
    x, _t, y = _simulated(2)
    t = np.zeros(len(x), dtype=int)  # a single arm: tau fixed at 0
    y = y - 3.0 * _t
    fit = fit_sigmoid_law(x, t, y)
    assert fit.tau_fixed
    xs, ts, ys = _resamples(x, t, y, 25, 3)
    batch = _compare(xs, ts, ys, [fit.params] * 25, False)
    assert np.all(batch.values[:, 3] == 0.0)


def test_batch_ending_on_a_bound():
    # a step in the scores: the slope runs to its upper bound (k sd(log C) = 50)
    rng = np.random.default_rng(4)
    x = np.sort(rng.uniform(48.0, 58.0, 30))
    t = np.tile([0, 1], 15)
    y = np.where(x > 53.0, 40.0, 10.0) + 2.0 * t + rng.normal(0.0, 0.05, 30)
    start = dict(fit_sigmoid_law(x, t, y).params, k=5.0)
    xs, ts, ys = _resamples(x, t, y, 20, 5)
    batch = _compare(xs, ts, ys, [start] * 20, True)
    k_scaled = batch.values[:, 1] * np.array([a.std() for a in xs])
    assert np.sum(np.isclose(k_scaled, 50.0, rtol=1e-6)) >= 5


def test_batch_degenerate_problem_is_not_fittable():
    x, t, y = _simulated(6, n=12)
    start = fit_sigmoid_law(x, t, y).params
    flat = np.full_like(y, 3.0)
    with pytest.raises(ValueError, match="constant"):
        warm_refit(x, t, flat, start, True)
    batch = _compare([x, x], [t, t], [y, flat], [start, start], True)
    assert batch.ok.tolist() == [True, False] and batch.nfev[1] == 0


def test_batch_result_does_not_depend_on_the_batch():
    x, t, y = _simulated(7)
    start = fit_sigmoid_law(x, t, y, n_starts=2).params
    xs, ts, ys = _resamples(x, t, y, 12, 8, np.arange(len(x)) // 3)
    whole = warm_refit_batch(xs, ts, ys, [start] * 12, True)
    half = warm_refit_batch(xs[::2], ts[::2], ys[::2], [start] * 6, True)
    np.testing.assert_array_equal(half.values, whole.values[::2])
    np.testing.assert_array_equal(half.nfev, whole.nfev[::2])


def test_batch_equals_scipy_on_the_book_scaling_data():
    """The careful setup's official population (the chapter's sigmoid panel), cluster
    resamples as the panel draws them, three outcomes."""
    from hca.causal import scaling_frame
    from hca.paper.replication import v2_frame
    from hca.paper.scaling import BENCH, SCALING_OVERRIDES

    off = scaling_frame(v2_frame("careful"), official_only=True, overrides=SCALING_OVERRIDES)
    x = off["log_c"].to_numpy(dtype=float)
    t = off["T"].to_numpy().astype(int)
    g = off["base_model"].factorize(sort=True)[0]
    draw = resampler(t, g)
    idx = [draw(np.random.default_rng([0, 0, r])) for r in range(8)]
    idx = [i for i in idx if len(np.unique(t[i])) == 2]
    xs, ts, ys, starts = [], [], [], []
    for b in BENCH[:3]:
        y = off[b].to_numpy(dtype=float)
        start = fit_sigmoid_law(x, t, y).params
        for i in idx:
            xs.append(x[i]), ts.append(t[i]), ys.append(y[i]), starts.append(start)
    batch = _compare(xs, ts, ys, starts, True)
    assert batch.ok.all()


def test_batch_bad_input():
    x, t, y = _simulated(9, n=10)
    start = fit_sigmoid_law(x, t, y).params
    with pytest.raises(ValueError, match="same length"):
        warm_refit_batch([x, x], [t], [y, y], [start, start], True)
    with pytest.raises(ValueError, match=r"ys\[1\].*NaN"):
        warm_refit_batch([x, x], [t, t], [y, np.r_[y[:-1], np.nan]], [start, start], True)
    with pytest.raises(ValueError, match=r"ts\[0\]"):
        warm_refit_batch([x], [t + 1], [y], [start], True)
    with pytest.raises(ValueError, match="same length"):
        warm_refit_batch([x], [t], [y[:-1]], [start], True)
    with pytest.raises(ValueError, match="one-dimensional"):
        warm_refit_batch([x[:, None]], [t], [y], [start], True)
    with pytest.raises(ValueError, match="missing parameter"):
        warm_refit_batch([x], [t], [y], [{"L": 1.0}], True)
    with pytest.raises(ValueError, match="tol"):
        warm_refit_batch([x], [t], [y], [start], True, tol=0.0)


def test_trf_batch_bad_input():
    def fun(p, members):
        return p[:, :1] - np.ones((len(members), 3))

    def jac(p, members):
        return np.ones((len(members), 3, 1))

    with pytest.raises(ValueError, match="2-d"):
        trf_batch(fun, jac, np.zeros(2), 0.0, 1.0)
    with pytest.raises(ValueError, match="ftol"):
        trf_batch(fun, jac, np.zeros((2, 1)), 0.0, 1.0, ftol=0.0)
    with pytest.raises(ValueError, match="lengths"):
        trf_batch(fun, jac, np.full((2, 1), 0.5), 0.0, 2.0, lengths=np.array([3, 4]))
    # a start outside the bounds is refused for that problem only (scipy raises)
    res = trf_batch(fun, jac, np.array([[0.5], [3.0]]), 0.0, 2.0)
    assert res.failed.tolist() == [False, True]
    np.testing.assert_allclose(res.x[0], [1.0], atol=1e-8)
    assert "1 failed" in res.summary()


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_panel_bootstrap_equals_one_warm_refit_per_replicate(n_jobs):
    """fit_sigmoid_panel's n_starts=0 replicates are scipy's warm refits, replicate by
    replicate (the loop the batch replaced), with any number of processes."""
    import pandas as pd

    from hca.causal import fit_sigmoid_panel

    x, t, y = _simulated(10, n=36)
    y2 = 0.5 * y + np.random.default_rng(11).normal(0.0, 2.0, len(y))
    g = np.arange(len(x)) // 3
    df = pd.DataFrame({"log_c": x, "T": t, "y1": y, "y2": y2, "base_model": g})
    panel = fit_sigmoid_panel(
        df, ["y1", "y2"], domains="base_model", n_boot=12, random_state=5, n_jobs=n_jobs
    )
    starts = [panel.fits[("all", o)].params for o in ("y1", "y2")]
    draw = resampler(t, g)
    expected = []
    for r in range(12):
        idx = draw(np.random.default_rng([5, 0, r]))
        if len(np.unique(t[idx])) < 2:
            continue
        expected.append(
            [warm_refit(x[idx], t[idx], col[idx], s, True) for col, s in zip((y, y2), starts)]
        )
    want = np.asarray(expected)
    for j, o in enumerate(("y1", "y2")):
        np.testing.assert_array_equal(panel.boot[("all", o)].samples, want[:, j, :5])
    np.testing.assert_array_equal(panel.r2_samples["all"], want[:, :, 5])


def _exp_problem(seed: int, m: int):
    """``a exp(-b u) + c`` data; residuals are inf where ``a > 2.3`` (scipy then shrinks)."""
    rng = np.random.default_rng(seed)
    u = np.linspace(0.0, 3.0, m)
    y = 2.0 * np.exp(-1.3 * u) + 0.5 + rng.normal(0.0, 0.05, m)
    return u, y


def _exp_resid(p, u, y):
    r = p[0] * np.exp(-p[1] * u) + p[2] - y
    return r if p[0] <= 2.3 else np.full_like(u, np.inf)


def _exp_jac(p, u, _y=None):
    e = np.exp(-p[1] * u)
    return np.column_stack([e, -p[0] * u * e, np.ones_like(u)])


@pytest.mark.parametrize("max_nfev", [3, 500])
def test_trf_batch_equals_least_squares_on_another_problem(max_nfev):
    """A generic check of trf_batch against scipy.optimize.least_squares: problems of three
    lengths, a bound that binds (c <= 0.3), non-finite residuals beyond a = 2.3 (met on the way
    from the second start; at the third start, which scipy refuses), and a budget of 3 evaluations that stops every problem
    early."""
    from scipy.optimize import least_squares

    probs = [_exp_problem(s, m) for s, m in enumerate([12, 20, 12, 31, 20, 31])]
    starts = np.array([[1.0, 0.9, 0.0], [1.5, 2.0, -1.0], [5.0, 0.5, -2.0]] * 2)
    lb, ub = np.array([0.0, 0.0, -np.inf]), np.array([10.0, np.inf, 0.3])
    lengths = np.array([len(u) for u, _ in probs])
    M = lengths.max()
    U = np.zeros((6, M))
    Y = np.zeros((6, M))
    for i, (u, y) in enumerate(probs):
        U[i, : len(u)], Y[i, : len(u)] = u, y

    def fun(p, members):
        out = np.zeros((len(members), M))
        for r, i in enumerate(members):
            out[r, : lengths[i]] = _exp_resid(p[r], U[i, : lengths[i]], Y[i, : lengths[i]])
        return out

    def jac(p, members):
        out = np.zeros((len(members), M, 3))
        for r, i in enumerate(members):
            out[r, : lengths[i]] = _exp_jac(p[r], U[i, : lengths[i]])
        return out

    res = trf_batch(fun, jac, starts, lb, ub, ftol=1e-10, xtol=1e-10, gtol=1e-10,
                    max_nfev=max_nfev, lengths=lengths)
    assert res.failed.tolist() == [False, False, True] * 2
    for i, (u, y) in enumerate(probs):
        kwargs = dict(jac=_exp_jac, bounds=(lb, ub), method="trf", x_scale="jac", ftol=1e-10,
                      xtol=1e-10, gtol=1e-10, max_nfev=max_nfev, args=(u, y))
        if res.failed[i]:
            with pytest.raises(ValueError, match="not finite"):
                least_squares(_exp_resid, starts[i], **kwargs)
            continue
        ref = least_squares(_exp_resid, starts[i], **kwargs)
        np.testing.assert_allclose(res.x[i], ref.x, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(res.fun[i, : len(u)], ref.fun, rtol=1e-10, atol=1e-12)
        assert (res.nfev[i], res.njev[i], res.status[i]) == (ref.nfev, ref.njev, ref.status)
        assert res.optimality[i] == pytest.approx(ref.optimality, rel=1e-10, abs=1e-14)
    ok = ~res.failed
    assert np.any(res.x[ok, 2] > 0.3 - 1e-6) if max_nfev == 500 else np.all(res.status[ok] == 0)
