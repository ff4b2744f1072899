"""The soft-impute batch loops against their former code, bit for bit.

``_former_soft_impute_batch`` and ``_former_plain_batch`` are the loops of
:func:`hca.completion.estimators.soft_impute_batch` before the problems were kept in slots
worked in place (commit 7f8ba54), kept here word for word as the reference: every fit,
threshold matrix, iteration count and convergence flag must be the same bytes, whatever the
batch (a problem's arithmetic does not depend on the problems batched with it).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from hca.completion import AUTHORS_SOFT_IMPUTE, SoftImpute, experiment
from hca.completion.estimators import (
    _STOPPING,
    _TINY,
    _far,
    lambda_max,
    soft_impute_batch,
    standardise,
    svt_weights,
)
from hca.completion.experiment import _check_fillable, _Design, _soft_impute_runs  # under test


def _former_soft_impute_batch(
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
    """The former code."""
    if stopping not in _STOPPING:
        raise ValueError(f"stopping must be one of {_STOPPING}; got {stopping!r}")
    if stopping == "change":
        return _former_plain_batch(Xc, observed, G_fixed, lam, Z0, max_rank, max_iter, tol)
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
        W, _ = svt_weights(G, La, max_rank)
        Znew = M @ W
        np.subtract(Znew, Za, out=step)
        num = np.einsum("rij,rij->r", step, step)
        # distance to the limit ~ ||step|| / (1 - rho), rho = ratio of successive steps
        rho = np.sqrt(num / np.maximum(num_prev, _TINY))
        ok = (rho < 1.0) & (num <= tol * np.maximum(den, _TINY) * (1.0 - np.minimum(rho, 1.0)) ** 2)
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
            idx, Xa, Ua, Ga, La = (
                idx[keep],
                take(Xa, keep),
                take(Ua, keep),
                take(Ga, keep),
                La[keep],
            )
            Za, prev_step, den, t, done = (
                Za[keep],
                prev_step[keep],
                den[keep],
                t[keep],
                done[keep],
            )
            num_prev = num_prev[keep]
            Y, M, step = np.empty_like(Za), np.empty_like(Za), np.empty_like(Za)
    return Z, W_out, n_iter, converged


def _former_plain_batch(
    Xc: np.ndarray,
    observed: np.ndarray,
    G_fixed: np.ndarray,
    lam: np.ndarray,
    Z0: np.ndarray,
    max_rank: int | None,
    max_iter: int,
    tol: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The former code."""
    R, d = lam.shape[0], Xc.shape[2]
    Z = np.array(Z0, dtype=float, copy=True)
    W_out = np.zeros((R, d, d))
    n_iter = np.full(R, max_iter)
    converged = np.zeros(R, dtype=bool)
    eps = np.finfo(np.float32).eps
    idx = np.arange(R)
    Xa = np.broadcast_to(np.where(observed, Xc, 0.0), Z.shape)
    Ua = np.broadcast_to((~np.asarray(observed, dtype=bool)).astype(float), Z.shape)
    Ga, La = np.broadcast_to(G_fixed, (R, d, d)), lam
    P = Ua * Z
    old2 = np.einsum("rij,rij->r", P, P)
    M = P + Xa
    for it in range(1, max_iter + 1):
        W, _ = svt_weights(Ga + np.swapaxes(M, 1, 2) @ M, La, max_rank)
        Znew = M @ W
        Pn = np.multiply(Ua, Znew, out=M)  # M is rebuilt below
        D = Pn - P
        ssd = np.sqrt(np.einsum("rij,rij->r", D, D))
        old = np.sqrt(old2)
        ok = ~((old == 0) | ((old < eps) & (ssd > eps))) & (ssd < tol * old)
        new = ok | (it == max_iter)
        if new.any():
            gi = idx[new]
            Z[gi], W_out[gi], n_iter[gi], converged[gi] = Znew[new], W[new], it, ok[new]
            keep = ~new
            if not keep.any():
                break
            idx, Xa, Ua, Ga, La = idx[keep], Xa[keep], Ua[keep], Ga[keep], La[keep]
            Pn = Pn[keep]
        P = Pn
        old2 = np.einsum("rij,rij->r", P, P)
        M = P + Xa
    return Z, W_out, n_iter, converged


def _former_soft_impute_runs(
    design: _Design, est: SoftImpute
) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """The former code (its batches: ``experiment._CHUNK_ENTRIES`` entries)."""
    _check_fillable(design)
    R, n, d = design.masks.shape
    shrink = est.shrinkage
    if shrink is None:  # the validation rule on the first draw, then held fixed
        shrink = clone(est).set_params(empty_row="ignore").fit(design.matrix(0)).shrinkage_
    max_rank = None if est.max_rank is None else int(est.max_rank)
    rmse, rank, n_iter = np.empty(R), np.empty(R, dtype=int), np.empty(R, dtype=int)
    chunk = max(1, min(250, experiment._CHUNK_ENTRIES // (n * d)))
    for start in range(0, R, chunk):
        sl = slice(start, min(start + chunk, R))
        observed = ~design.masks[sl]
        Xc, G, mean, sd = standardise(
            design.X_rows, observed, design.X_fixed, est.center, est.scale
        )
        lam = shrink * lambda_max(Xc, G)
        Z, _, n_iter[sl], conv = _former_soft_impute_batch(
            Xc,
            observed,
            G,
            lam,
            np.zeros_like(Xc),
            max_rank,
            int(est.max_iter),
            float(est.tol),
            stopping=est.stopping,
        )
        if not conv.all() and est.stopping == "limit":
            warnings.warn(
                f"soft-impute did not converge in {est.max_iter} iterations in "
                f"{int((~conv).sum())} repetitions",
                ConvergenceWarning,
                stacklevel=4,
            )
        pred = Z[:, design.scored] * sd[:, None, :] + mean[:, None, :]
        rmse[sl] = design.rmse(pred, sl)
        M = np.where(observed, Xc, Z)
        _, shrunk = svt_weights(G + np.swapaxes(M, 1, 2) @ M, lam, max_rank)
        rank[sl] = (shrunk > 0).sum(axis=1)
    return rmse, float(shrink), rank, n_iter


def _problems(seed, R, n, d, rank, p, shared, fixed_rows):
    """``R`` masked copies of a noisy low-rank ``n x d`` matrix (one shared mask when
    ``shared``), standardised with ``fixed_rows`` complete rows."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + fixed_rows, rank)) @ rng.normal(size=(rank, d))
    X += 0.3 * rng.normal(size=X.shape)
    observed = rng.random((1 if shared else R, n, d)) > p
    observed[:, 0, :] = True  # every column keeps an observed entry
    fixed = X[n:] if fixed_rows else None
    Xc, G, _, _ = standardise(X[:n], observed, fixed, True, False)
    lam_rel = rng.uniform(0.02, 0.4, size=R)
    lam = lam_rel * (lambda_max(Xc, G) if not shared else lambda_max(Xc, G)[0])
    return Xc, observed, G, lam


def _same(a, b):
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes()


CASES = [
    # seed, R, n, d, rank, p, shared, fixed_rows, max_rank
    (0, 7, 40, 6, 2, 0.5, False, 0, None),
    (1, 9, 60, 6, 3, 0.3, False, 25, 3),
    (2, 12, 30, 5, 2, 0.6, True, 10, None),
    (3, 1, 50, 6, 2, 0.4, False, 0, 2),
    (4, 16, 25, 4, 1, 0.7, False, 5, None),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("stopping", _STOPPING)
@pytest.mark.parametrize("accelerate", [True, False])
@pytest.mark.parametrize("max_iter", [3, 500])
def test_soft_impute_batch_equals_the_former_loops(case, stopping, accelerate, max_iter):
    seed, R, n, d, rank, p, shared, fixed_rows, max_rank = case
    Xc, observed, G, lam = _problems(seed, R, n, d, rank, p, shared, fixed_rows)
    tol = 1e-3 if stopping == "change" else 1e-7
    Z0 = np.zeros((R, n, d))
    args = (Xc, observed, G, lam, Z0, max_rank, max_iter, tol)
    new = soft_impute_batch(*args, accelerate=accelerate, stopping=stopping)
    former = _former_soft_impute_batch(*args, accelerate=accelerate, stopping=stopping)
    _same(new, former)
    if max_iter == 500 and R > 1:  # staggered stops: the slots were handed on
        assert np.unique(new[2]).size > 1


def test_soft_impute_batch_leaves_its_inputs_alone():
    Xc, observed, G, lam = _problems(5, 8, 30, 6, 2, 0.5, False, 12)
    G = np.broadcast_to(G, (8,) + G.shape[1:]).copy()  # one fixed Gram per problem
    copies = [a.copy() for a in (Xc, observed, G, lam)]
    Z0 = np.zeros((8, 30, 6))
    for stopping in _STOPPING:
        soft_impute_batch(Xc, observed, G, lam, Z0, None, 300, 1e-4, stopping=stopping)
    for a, b in zip((Xc, observed, G, lam), copies):
        assert a.tobytes() == b.tobytes()
    assert not Z0.any()


@pytest.mark.parametrize("stopping", _STOPPING)
def test_a_problem_fits_the_same_in_any_batch(stopping):
    """A problem's fit is the same bytes alone, in a batch, and wherever it sits."""
    Xc, observed, G, lam = _problems(6, 10, 35, 6, 2, 0.5, False, 8)
    Z0 = np.zeros_like(Xc)
    tol = 1e-3 if stopping == "change" else 1e-7
    whole = soft_impute_batch(Xc, observed, G, lam, Z0, 3, 400, tol, stopping=stopping)
    perm = np.random.default_rng(0).permutation(10)
    shuffled = soft_impute_batch(
        Xc[perm], observed[perm], G[perm], lam[perm], Z0, 3, 400, tol, stopping=stopping
    )
    _same([a[perm] for a in whole], shuffled)
    for r in (0, 4, 9):
        one = soft_impute_batch(
            Xc[r : r + 1],
            observed[r : r + 1],
            G[r : r + 1],
            lam[r : r + 1],
            Z0[:1],
            3,
            400,
            tol,
            stopping=stopping,
        )
        _same([a[r : r + 1] for a in whole], one)


@pytest.mark.parametrize("stopping", _STOPPING)
def test_soft_impute_runs_do_not_depend_on_the_batch_size(monkeypatch, stopping):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(70, 2)) @ rng.normal(size=(2, 6)) + 0.2 * rng.normal(size=(70, 6))
    masks = rng.random((13, 30, 6)) < 0.4
    masks[:, 0, :] = False
    design = _Design(X[:30], masks, X[30:], np.arange(30), "global")
    est = SoftImpute(shrinkage=0.05, max_rank=3, stopping=stopping, tol=1e-3, max_iter=300)
    runs = []
    for entries in (10**6, experiment._SOFT_IMPUTE_ENTRIES, 400, 1):  # 13, ..., 2, 1 a batch
        monkeypatch.setattr(experiment, "_SOFT_IMPUTE_ENTRIES", entries)
        runs.append(_soft_impute_runs(design, est))
    for other in runs[1:]:
        _same([np.asarray(a) for a in runs[0]], [np.asarray(a) for a in other])
    assert np.unique(runs[0][3]).size > 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_choose_shrinkage_is_the_shrinkage_fit_uses(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 2)) @ rng.normal(size=(2, 6)) + 0.3 * rng.normal(size=(40, 6))
    X[rng.random(X.shape) < 0.4] = np.nan
    X[0] = 1.0  # every column keeps an observed entry
    est = SoftImpute(random_state=seed)
    chosen = est.choose_shrinkage(X)
    assert not hasattr(est, "shrinkage_")  # nothing fitted
    assert chosen == SoftImpute(random_state=seed).fit(X).shrinkage_
    assert SoftImpute(shrinkage=0.3).choose_shrinkage(X) == 0.3
    assert np.isnan(SoftImpute().choose_shrinkage(np.ones((5, 3))))


@pytest.mark.parametrize("scope", ["domain", "all"])
@pytest.mark.parametrize("params", [AUTHORS_SOFT_IMPUTE, {}, {"shrinkage": 0.1, "scale": True}])
def test_soft_impute_runs_equal_the_former_code(monkeypatch, scope, params):
    """Fits in batches of any size, RMSE, rank and iterations the former code's bytes."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(90, 2)) @ rng.normal(size=(2, 6)) + 0.2 * rng.normal(size=(90, 6))
    local = np.zeros(90, dtype=bool)
    local[:25] = True
    run = experiment._prepare(X, local, "random", 0.3, 23, "soft_impute", 5, None, params, scope)
    monkeypatch.setattr(experiment, "_CHUNK_ENTRIES", 6 * 25 * 10 if scope == "domain" else 6 * 900)
    for design in run.designs:
        former = _former_soft_impute_runs(design, run.est)
        for entries in (10**6, 1000, 1):
            monkeypatch.setattr(experiment, "_SOFT_IMPUTE_ENTRIES", entries)
            _same(
                [np.asarray(a) for a in former],
                [np.asarray(a) for a in _soft_impute_runs(design, run.est)],
            )


@pytest.mark.parametrize("tol", [1e-3, 1e-8, 0.5])
def test_far_only_where_the_change_rule_fails(tol):
    """Where _far says a problem cannot stop, the computed change is >= the computed tol * old;
    near-equal norms (the hard cases) included."""
    rng = np.random.default_rng(3)
    n, d = 300, 6
    slack = (n * d + 2) * np.finfo(float).eps
    P = rng.normal(size=(400, n, d))
    scale = 1.0 + np.geomspace(1e-12, 1.0, 400) * rng.choice([-1, 1], 400)
    Pn = (
        P * scale[:, None, None]
        + rng.normal(size=P.shape) * np.geomspace(1e-14, 1e-1, 400)[:, None, None]
    )
    old = np.sqrt(np.einsum("rij,rij->r", P, P))
    new = np.sqrt(np.einsum("rij,rij->r", Pn, Pn))
    D = Pn - P
    ssd = np.sqrt(np.einsum("rij,rij->r", D, D))
    far = _far(old, new, tol, slack)
    assert far.any() and (~far).any()
    assert (ssd[far] >= tol * old[far]).all()
