"""The batched FastICA loop is bitwise the plain loop it replaced.

``hca.estimator.fastica_batch`` iterates only the starts still active and updates its
temporaries in place. Its one entry point, :func:`fastica_lockstep`, must give bit-for-bit the
results of the straightforward loop below (gather ``W[active]`` and ``X1[which[active]]``
afresh at every iteration), a copy of the loop as it was before that change: the results feed
rounding-sensitive fits. It runs the starts of data matrices of one shape or of different
numbers of samples in one loop (the decorrelation of all their starts in one stack): every
matrix gets what the plain loop gives it alone, with the same iteration counts, whichever
matrices share its loop; and so must :func:`hca.estimator.ica.fit_icas_many`, which runs every
domain of every data set in it.
"""

from __future__ import annotations

import numpy as np
import pytest

from hca.estimator.fastica_batch import fastica_lockstep, initial_matrices, whiten


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
    """fastica_lockstep on several matrices of one shape (their starts in one stack) and on
    one matrix alone equals the plain loop bit for bit, with starts stopping at different
    iterations and some never converging."""
    rng = np.random.default_rng(seed)
    Xs = [_data(rng, n, d, kind) for _ in range(g)]
    whs = [whiten(X, d) for X in Xs]
    W0 = rng.normal(size=(g, starts, d, d))
    refs = _ref_stack(whs, W0, max_iter, tol)
    got = fastica_lockstep(whs, list(W0), max_iter=max_iter, tol=tol)
    for (comp, n_iter, conv), res in zip(refs, got):
        assert np.array_equal(res.components, comp)
        assert np.array_equal(res.n_iter, n_iter)
        assert np.array_equal(res.converged, conv)
    for wh, w0, (comp, n_iter, conv) in zip(whs, W0, refs):
        (res,) = fastica_lockstep([wh], [w0], max_iter=max_iter, tol=tol)
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
        res = fastica_lockstep(whs, list(W0), max_iter=max_iter, tol=tol)
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
    (res,) = fastica_lockstep([wh], [W0], max_iter=max_iter, tol=1e-12)
    assert np.array_equal(res.components, comp)
    assert np.array_equal(res.n_iter, n_iter) and not res.converged.any()
    assert np.array_equal(res.converged, conv)


# ------------------------------------------------------- lockstep: several shapes at once
def _lockstep_inputs(rng):
    """Data matrices of several numbers of samples (two of them with 40 samples but different
    numbers of features, so that they share a stack), their own numbers of starts, and data
    that converge fast (Laplace sources), slowly (near-Gaussian) or not at all."""
    specs = [(40, "laplace", 6), (150, "gauss", 10), (29, "gauss", 8), (300, "laplace", 4)]
    specs += [(40, "gauss", 5), (90, "mixed", 7)]
    Xs = [_data(rng, n, 3, kind) for n, kind, _ in specs]
    Xs[4] = Xs[4][:, :4]  # 40 samples, 4 features (the first matrix has 5)
    W0s = [rng.normal(size=(b, 3, 3)) for _, _, b in specs]
    return Xs, W0s


@pytest.mark.parametrize("max_iter, tol", [(400, 1e-6), (60, 1e-4), (2, 1e-12), (0, 1e-4)])
def test_lockstep_bitwise_equals_per_matrix_loop(max_iter, tol):
    """fastica_lockstep (the starts of matrices of different shapes, numbers of starts and
    speeds of convergence in one loop) gives every matrix bit for bit what the plain loop
    gives it alone, and what the lockstep loop gives it alone, with the same iteration counts
    and convergence flags; on_done reports every matrix once, when its last start stops."""
    rng = np.random.default_rng(11)
    Xs, W0s = _lockstep_inputs(rng)
    whs = [whiten(X, 3) for X in Xs]
    finished: list[int] = []
    got = fastica_lockstep(whs, W0s, max_iter=max_iter, tol=tol, on_done=finished.append)
    assert len(got) == len(Xs)
    for X, wh, w0, res in zip(Xs, whs, W0s, got):
        ((comp, n_iter, conv),) = _ref_stack([wh], w0[np.newaxis], max_iter, tol)
        assert np.array_equal(res.components, comp)
        assert np.array_equal(res.n_iter, n_iter)
        assert np.array_equal(res.converged, conv)
        assert np.array_equal(res.mean, wh.mean)
        (alone,) = fastica_lockstep([wh], [w0], max_iter=max_iter, tol=tol)
        assert np.array_equal(alone.components, res.components)
        assert np.array_equal(alone.n_iter, res.n_iter)
        assert np.array_equal(alone.converged, res.converged)
    assert sorted(finished) == list(range(len(Xs)))
    last = [int(got[i].n_iter.max()) for i in finished]
    assert last == sorted(last)  # reported as they finish
    if max_iter == 400:  # the matrices stop at very different iterations, some never
        ends = [int(r.n_iter.max()) for r in got]
        assert min(ends) < 40 and max(ends) == max_iter
        assert any(not r.converged.all() for r in got)
        assert any(r.converged.all() for r in got)


def test_lockstep_does_not_depend_on_the_company():
    """A matrix's result in the lockstep loop does not depend on the other matrices: the
    same with every subset of them, in any order, and with a matrix repeated."""
    rng = np.random.default_rng(12)
    Xs, W0s = _lockstep_inputs(rng)
    whs = [whiten(X, 3) for X in Xs]
    full = fastica_lockstep(whs, W0s, max_iter=300, tol=1e-6)
    for pick in ([5, 1], [3, 0, 4, 0], [2], [4, 3, 2, 1, 0, 5]):
        part = fastica_lockstep(
            [whs[i] for i in pick], [W0s[i] for i in pick], max_iter=300, tol=1e-6
        )
        for i, res in zip(pick, part):
            assert np.array_equal(res.components, full[i].components)
            assert np.array_equal(res.n_iter, full[i].n_iter)
            assert np.array_equal(res.converged, full[i].converged)


def test_lockstep_matrices_without_starts_and_bad_input():
    """A matrix without starts gets an empty result and is reported first; w_init must hold
    one (n, d, d) stack per matrix and the matrices one d."""
    rng = np.random.default_rng(13)
    Xs, W0s = _lockstep_inputs(rng)
    whs = [whiten(X, 3) for X in Xs[:3]]
    W0s = [W0s[0], np.empty((0, 3, 3)), W0s[2]]
    finished: list[int] = []
    got = fastica_lockstep(whs, W0s, max_iter=100, tol=1e-5, on_done=finished.append)
    assert finished[0] == 1 and sorted(finished) == [0, 1, 2]
    assert got[1].components.shape == (0, 3, Xs[1].shape[1]) and got[1].n_iter.size == 0
    ((comp, n_iter, _),) = _ref_stack([whs[2]], W0s[2][np.newaxis], 100, 1e-5)
    assert np.array_equal(got[2].components, comp) and np.array_equal(got[2].n_iter, n_iter)
    assert fastica_lockstep([], []) == []
    with pytest.raises(ValueError, match="2 stacks of initial matrices for 3"):
        fastica_lockstep(whs, W0s[:2])
    with pytest.raises(ValueError, match=r"w_init\[1\] must have shape"):
        fastica_lockstep(whs, [W0s[0], np.eye(3), W0s[2]])
    with pytest.raises(ValueError, match="differ in components"):
        fastica_lockstep([whs[0], whiten(Xs[1], 2)], [W0s[0], W0s[0][:, :2, :2]])


def test_lockstep_on_the_books_mmlu_data(mmlu):
    """The book's data: the physics and mathematics subjects of MMLU on every base model with
    at least 25 models (different numbers of models; Llama-2-70B's starts take hundreds of
    iterations or never converge), twelve seeds each, all in one lockstep loop: every matrix
    bit for bit as the plain loop gives it alone."""
    from hca.estimator.fastica_batch import initial_matrices
    from hca.paper.constants import MATH_SUBJECTS, PHYSICS_SUBJECTS
    from hca.paper.mmlu import mmlu_frame

    frame = mmlu_frame()
    counts = frame["base_model"].value_counts()
    bases = sorted(counts.index[counts >= 25])
    assert len(bases) >= 4
    Xs = [
        frame.loc[frame["base_model"] == b, list(cols)].to_numpy(np.float64)
        for cols in (PHYSICS_SUBJECTS, MATH_SUBJECTS)
        for b in bases
    ]
    whs = [whiten(X, 3) for X in Xs]
    W0 = initial_matrices(range(12), 3)
    got = fastica_lockstep(whs, [W0] * len(whs), max_iter=1000, tol=1e-4)
    ends = []
    for wh, res in zip(whs, got):
        ((comp, n_iter, conv),) = _ref_stack([wh], W0[np.newaxis], 1000, 1e-4)
        assert np.array_equal(res.components, comp)
        assert np.array_equal(res.n_iter, n_iter)
        assert np.array_equal(res.converged, conv)
        ends.append(int(n_iter.max()))
    assert len({X.shape[0] for X in Xs}) >= 4 and max(ends) > 5 * min(ends)


def _fits_equal(a, b):
    return (
        np.array_equal(a.unmixing, b.unmixing)
        and np.array_equal(a.mean, b.mean)
        and (a.n_iter, a.converged, a.n_samples, a.restart)
        == (b.n_iter, b.converged, b.n_samples, b.restart)
        and np.array_equal(a.objective, b.objective)
        and np.array_equal(a.restart_objectives, b.restart_objectives)
    )


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("paired", [False, True])
def test_fit_icas_many_in_lockstep_equals_domain_by_domain(paired):
    """fit_icas_many runs every domain of every data set in one lockstep loop; every fit is
    bit for bit fit_icas of its data set with its seed (one domain at a time, each in a loop
    of its own), and progress reports every domain once, counting up."""
    from hca.estimator.ica import fit_icas, fit_icas_many
    from hca.synthetic import simulate_scm

    sim = simulate_scm(n_domains=4, n_per_domain=80, alpha=0.2, random_state=4)
    rng = np.random.default_rng(5)
    datasets = [(sim.X, sim.domains)]
    for n_rows in (200, 260):  # resamples: the domains differ in size between data sets
        rows = rng.choice(len(sim.X), size=n_rows, replace=False)
        datasets.append((sim.X[rows], sim.domains[rows]))
    datasets.append((sim.X[::-1], sim.domains[::-1]))  # the same domains, rows reversed
    order = ["D1", "D2", "D3", "D4"]
    orders = [order, order[:3], order[1:], order]
    seeds = [3, 8, 1, 0] if paired else [3, 8, 1]
    calls: list[tuple] = []
    got = fit_icas_many(
        datasets,
        order,
        3,
        seeds,
        n_restarts=2,
        max_iter=300,
        tol=1e-6,
        orders=orders,
        paired=paired,
        progress=lambda *a: calls.append(a),
    )
    assert calls == [("ICA", j + 1, len(order)) for j in range(len(order))]
    iters = []
    for g, (X, domains) in enumerate(datasets):
        for i, seed in enumerate([seeds[g]] if paired else seeds):
            for label in orders[g]:
                alone = fit_icas(
                    X, domains, [label], 3, random_state=seed, n_restarts=2, max_iter=300, tol=1e-6
                )[label]
                assert _fits_equal(got[g][i][label], alone)
                iters.append(alone.n_iter)
            assert set(got[g][i]) == set(orders[g])
    assert max(iters) > 3 * min(iters)
