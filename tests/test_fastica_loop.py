"""The batched FastICA loop is bitwise the plain loop it replaced.

``hca.estimator.fastica_batch`` iterates only the starts still active and updates its
temporaries in place. Its public wrappers (:func:`fastica_batch`, :func:`fastica_stack`) must
give bit-for-bit the results of the straightforward loop below (gather ``W[active]`` and
``X1[which[active]]`` afresh at every iteration), a copy of the loop as it was before that
change: the results feed rounding-sensitive fits.
"""

from __future__ import annotations

import numpy as np
import pytest

from hca.estimator.fastica_batch import fastica_batch, fastica_stack, initial_matrices, whiten


# ----------------------------------------------------------------- reference (the plain loop)
def _ref_sym_decorrelation(W: np.ndarray) -> np.ndarray:
    s, u = np.linalg.eigh(W @ np.swapaxes(W, -1, -2))
    s = np.clip(s, a_min=np.finfo(W.dtype).tiny, a_max=None)
    return (u * (1.0 / np.sqrt(s))[:, np.newaxis, :]) @ np.swapaxes(u, -1, -2) @ W


def _ref_iterate(X1, W, tol, max_iter, which=None):
    W = _ref_sym_decorrelation(W)
    b = W.shape[0]
    p_ = float(X1.shape[-1])
    n_iter = np.full(b, max_iter, dtype=int)
    active = np.arange(b)
    for ii in range(max_iter):
        Wa = W[active]
        Xa = X1 if which is None else X1[which[active]]
        gwtx = np.tanh(Wa @ Xa)
        g_wtx = (1 - gwtx**2).mean(axis=-1)
        W1 = _ref_sym_decorrelation(
            gwtx @ np.swapaxes(Xa, -1, -2) / p_ - g_wtx[:, :, np.newaxis] * Wa
        )
        lim = np.max(np.abs(np.abs(np.einsum("bij,bij->bi", W1, Wa)) - 1), axis=-1)
        W[active] = W1
        done = lim < tol
        n_iter[active[done]] = ii + 1
        active = active[~done]
        if active.size == 0:
            break
    converged = np.ones(b, dtype=bool)
    converged[active] = False
    return W, n_iter, converged


def _ref_components(W, wh):
    S = W @ wh.K @ wh.XT
    S_std = np.std(S, axis=-1)
    return (W / S_std[:, :, np.newaxis]) @ wh.K


def _ref_stack(whs, W0, max_iter, tol):
    """(components, n_iter, converged) of every data matrix, from the plain loop."""
    g, b, d = W0.shape[:3]
    X1 = np.stack([w.X1 for w in whs])
    which = np.repeat(np.arange(g), b)
    W, n_iter, conv = _ref_iterate(X1, W0.reshape(g * b, d, d).copy(), tol, max_iter, which)
    return [
        (
            _ref_components(W[i * b : (i + 1) * b], wh),
            n_iter[i * b : (i + 1) * b],
            conv[i * b : (i + 1) * b],
        )
        for i, wh in enumerate(whs)
    ]


# ----------------------------------------------------------------------------------- data
def _data(rng, n, d, kind):
    """n samples of d + 2 features: d mixed sources (non-Gaussian, or nearly Gaussian so that
    starts converge slowly) plus two noise features."""
    if kind == "laplace":
        S = rng.laplace(size=(n, d))
    elif kind == "mixed":
        S = np.column_stack(
            [rng.laplace(size=n), rng.uniform(-1, 1, size=n)]
            + [rng.normal(size=n) for _ in range(d - 2)]
        )
    else:  # near-Gaussian: sums of many uniforms
        S = rng.uniform(-1, 1, size=(n, d, 6)).sum(axis=-1)
    A = rng.normal(size=(d, d + 2))
    return S @ A + 0.05 * rng.normal(size=(n, d + 2))


CASES = [
    # (seed, n samples, d, kind, starts, matrices, max_iter, tol)
    (0, 40, 3, "laplace", 16, 3, 200, 1e-6),
    (1, 150, 3, "mixed", 24, 4, 60, 1e-5),
    (2, 150, 3, "gauss", 20, 2, 150, 1e-4),
    (3, 300, 2, "gauss", 10, 5, 80, 1e-5),
    (4, 90, 4, "mixed", 12, 3, 120, 1e-6),
    (5, 29, 3, "gauss", 40, 1, 400, 1e-4),
]


@pytest.mark.parametrize("seed, n, d, kind, starts, g, max_iter, tol", CASES)
def test_wrappers_bitwise_equal_plain_loop(seed, n, d, kind, starts, g, max_iter, tol):
    """fastica_stack (starts of several matrices in one stack) and fastica_batch (one shared
    matrix) equal the plain loop bit for bit, with starts stopping at different iterations
    and some never converging."""
    rng = np.random.default_rng(seed)
    Xs = [_data(rng, n, d, kind) for _ in range(g)]
    whs = [whiten(X, d) for X in Xs]
    W0 = rng.normal(size=(g, starts, d, d))
    refs = _ref_stack(whs, W0, max_iter, tol)
    got = fastica_stack(whs, W0, max_iter=max_iter, tol=tol)
    for (comp, n_iter, conv), res in zip(refs, got):
        assert np.array_equal(res.components, comp)
        assert np.array_equal(res.n_iter, n_iter)
        assert np.array_equal(res.converged, conv)
    for X, wh, w0, (comp, n_iter, conv) in zip(Xs, whs, W0, refs):
        res = fastica_batch(X, d, w_init=w0, whitened=wh, max_iter=max_iter, tol=tol)
        assert np.array_equal(res.components, comp)
        assert np.array_equal(res.n_iter, n_iter)
        assert np.array_equal(res.converged, conv)


def test_cases_cover_staggered_and_failed_convergence():
    """The cases above exercise what the loop's bookkeeping has to get right: starts of one
    stack stopping at many different iterations, starts never converging, and stacks where
    every start converges before max_iter."""
    distinct, unconverged, all_done = [], 0, 0
    for seed, n, d, kind, starts, g, max_iter, tol in CASES:
        rng = np.random.default_rng(seed)
        whs = [whiten(_data(rng, n, d, kind), d) for _ in range(g)]
        W0 = rng.normal(size=(g, starts, d, d))
        res = fastica_stack(whs, W0, max_iter=max_iter, tol=tol)
        n_iter = np.concatenate([r.n_iter[r.converged] for r in res])
        distinct.append(len(np.unique(n_iter)))
        unconverged += sum(int((~r.converged).sum()) for r in res)
        all_done += int(all(r.converged.all() for r in res))
    assert min(distinct) >= 3
    assert unconverged >= 5
    assert all_done >= 1


@pytest.mark.parametrize("max_iter", [0, 1, 2])
def test_tiny_budgets_bitwise_equal_plain_loop(max_iter):
    """No iteration, one, two: the same as the plain loop (nothing converges at tol 1e-12)."""
    rng = np.random.default_rng(7)
    X = _data(rng, 60, 3, "laplace")
    wh = whiten(X, 3)
    W0 = initial_matrices([0, 1, 2, 3], 3)
    ((comp, n_iter, conv),) = _ref_stack([wh], W0[np.newaxis], max_iter, 1e-12)
    res = fastica_batch(X, 3, w_init=W0, whitened=wh, max_iter=max_iter, tol=1e-12)
    assert np.array_equal(res.components, comp)
    assert np.array_equal(res.n_iter, n_iter) and not res.converged.any()
    assert np.array_equal(res.converged, conv)
