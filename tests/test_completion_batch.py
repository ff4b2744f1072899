"""Batched completion runs against the former one-repetition-at-a-time code.

``_former_smc_runs`` and ``_former_smc_rule`` are the code of ``hca.completion`` before the
repetitions were stacked (commit 3d812c7), kept here as the reference; ``_former_masks`` is
the former mask drawing (one :func:`mask_block` / :func:`mask_random` call per repetition).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning

from hca.completion import (
    AUTHORS_SOFT_IMPUTE,
    ColumnMeans,
    StructuredCompletion,
    global_vs_local,
    global_vs_local_many,
    mask_block,
    mask_blocks,
    mask_random,
    mask_randoms,
)
from hca.completion.estimators import eig_desc, smc_block, smc_rule_batch
from hca.completion.experiment import _Design, _smc_runs  # the code under test
from hca.paper.appendix_g import AppendixGDesign, _tasks, run_appendix_g

_SINGULAR_RTOL = 1e-10


def _former_smc_rule(V1, B1, A21, m1, rank, c_T, thresholding, n_rows, n_cols):
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
                raise ValueError("singular")
            continue
        if rank is not None:
            r = s
            break
        if thresholding == "row":
            T = np.linalg.solve(sub.T, B21[:, :s].T).T
        else:
            T = np.linalg.solve(sub, B12[:s, :])
        if np.linalg.norm(T, 2) <= thr:
            r = s
            break
    if r == 0:
        return np.zeros((A21.shape[0], B12.shape[1])), 0, float(thr)
    A22 = B21[:, :r] @ np.linalg.solve(B11[:r, :r], B12[:r, :])
    return A22, r, float(thr)


def _former_smc_runs(design, est):
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
        _, V1 = eig_desc(Gt[np.ix_(C1, C1)] + A21.T @ A21)
        perm = np.concatenate([C1, C2])
        e2, V2 = eig_desc(Gt[np.ix_(perm, perm)])
        B1 = (np.sqrt(e2)[:, None] * V2.T)[: min(m1, d)]
        A22, ranks[r], _ = _former_smc_rule(
            V1, B1, A21, m1, rank, float(est.threshold_constant), est.thresholding, n_rows, d
        )
        pred = A22 * sd[C2] + mu[C2]
        keep = scored[inc]
        m = miss[inc][keep][:, C2]
        err = (pred[keep] - X_rows[inc][keep][:, C2])[m]
        rmse[r] = np.sqrt(np.mean(err**2))
    return rmse, ranks


def _data(n_out=150, n_dom=40, d=6, seed=0, signal=0.4):
    """Rank 3 plus noise, weak enough that the rank rules pick different ranks."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_out + n_dom, 3)) @ rng.normal(size=(3, d)) * signal + 50
    X += rng.normal(size=X.shape)
    return X, np.arange(n_out, n_out + n_dom)


@pytest.mark.parametrize("same_rows", [True, False])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_mask_blocks_draw_the_former_stream(same_rows, p):
    rng1, rng2 = np.random.default_rng(5), np.random.default_rng(5)
    former = np.stack([mask_block(37, 6, [0, 2, 4], p, rng1, same_rows) for _ in range(25)])
    np.testing.assert_array_equal(mask_blocks(37, 6, [0, 2, 4], p, rng2, same_rows, 25), former)
    assert rng1.random() == rng2.random()  # the generators are left in the same state
    np.testing.assert_array_equal(
        mask_block(37, 6, [4, 0, 2], p, 3, same_rows),
        mask_blocks(37, 6, [0, 2, 4], p, 3, same_rows, 1)[0],
    )


def test_mask_randoms_draw_the_former_stream():
    rng1, rng2 = np.random.default_rng(8), np.random.default_rng(8)
    former = np.stack([mask_random((37, 6), 0.3, rng1) for _ in range(25)])
    np.testing.assert_array_equal(mask_randoms((37, 6), 0.3, rng2, 25), former)
    assert rng1.random() == rng2.random()
    with pytest.raises(ValueError, match="p must be"):
        mask_randoms((3, 3), 1.0, 0, 2)


def _check_smc(params: dict, scope: str, same_rows: bool) -> np.ndarray:
    """The batched SMC runs equal the former ones on simulated data; their ranks."""
    X, dom = _data(seed=len(params) + 3 * same_rows)
    est = StructuredCompletion(**params)
    rng = np.random.default_rng(11)
    n_masked = X.shape[0] if scope == "all" else dom.size
    masks = np.stack(
        [
            mask_block(n_masked, 6, [1, 3, 4], p, rng, same_rows)
            for p in (0.2, 0.5, 0.7)
            for _ in range(12)
        ]
    )
    if scope == "all":
        design = _Design(X, masks, None, dom, "global")
    else:
        design = _Design(X[dom], masks, np.delete(X, dom, axis=0), np.arange(dom.size), "g")
    rmse, rank = _smc_runs(design, est)
    rmse0, rank0 = _former_smc_runs(design, est)
    np.testing.assert_array_equal(rank, rank0)
    np.testing.assert_allclose(rmse, rmse0, rtol=1e-10, atol=0)
    return rank0


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"thresholding": "column"},
        {"rank": 1},
        {"rank": 2},
        {"rank": 3},
        {"scale": True},
        {"center": False},
        {"threshold_constant": 0.3},
    ],
)
@pytest.mark.parametrize("scope", ["domain", "all"])
@pytest.mark.parametrize("same_rows", [True, False])
def test_smc_runs_equal_the_former_code_on_random_data(params, scope, same_rows):
    _check_smc(params, scope, same_rows)


def test_smc_runs_cover_several_ranks():
    """The cases above exercise the rank rule: it picks different ranks on their draws."""
    picked = {
        tuple(np.unique(_check_smc(params, "domain", True)))
        for params in ({"scale": True}, {"thresholding": "column"})
    }
    assert {r for ranks in picked for r in ranks} >= {2, 3}


def test_smc_rule_batch_equals_the_rule_one_problem_at_a_time():
    X, _ = _data(n_out=60, n_dom=0, seed=4)
    rng = np.random.default_rng(0)
    seen: set[int] = set()
    for thresholding in ("row", "column"):
        for c_T in (0.2, 1.0, 2.0, 8.0):
            probs = []
            for _ in range(10):
                rows = rng.permutation(60)
                A = X[rows] - X.mean(axis=0) + rng.normal(scale=3, size=(60, 6))
                R1 = np.linalg.qr(np.vstack([A[:30, :3], A[30:, :3]]), mode="r")
                V1 = np.linalg.svd(R1)[2].T
                R2 = np.linalg.qr(A[:30], mode="r")
                _, s2, V2t = np.linalg.svd(R2, full_matrices=False)
                probs.append((V1, s2[:, None] * V2t, A[30:, :3]))
            V1s, B1s, A21s = (np.stack(x) for x in zip(*probs))
            A22, r, thr = smc_rule_batch(V1s, B1s, A21s, 30, None, c_T, thresholding, 60, 6)
            seen.update(r.tolist())
            for i, (V1, B1, A21) in enumerate(probs):
                a0, r0, t0 = _former_smc_rule(V1, B1, A21, 30, None, c_T, thresholding, 60, 6)
                a1, r1, _ = smc_rule_batch(
                    V1[None], B1[None], A21[None], 30, None, c_T, thresholding, 60, 6
                )
                a1, r1 = a1[0], r1[0]
                assert r[i] == r0 == r1 and thr == t0
                np.testing.assert_allclose(A22[i], a0, rtol=1e-10, atol=1e-12)
                np.testing.assert_allclose(a1, a0, rtol=1e-10, atol=1e-12)
    assert len(seen) >= 2  # the candidates are tried on part of the batch
    with pytest.raises(ValueError, match="singular"):
        smc_block(np.ones((4, 3)), np.ones((4, 3)), np.ones((2, 3)), 2, 2.0, "row", 6, 6)


def test_global_vs_local_smc_equals_the_former_code_and_estimator():
    X, dom = _data(n_out=120, n_dom=30, seed=9)
    frame = pd.DataFrame(X, columns=list("abcdef"))
    local = np.isin(np.arange(len(X)), dom)
    df = global_vs_local(
        frame,
        local,
        pattern="block",
        p=0.5,
        n_reps=6,
        observed_cols=["a", "c", "d"],
        random_state=4,
    )
    rng = np.random.default_rng(4)
    for r in range(6):
        m = mask_block(dom.size, 6, [0, 2, 3], 0.5, rng)
        sub = X[dom].copy()
        sub[m] = np.nan
        fit = StructuredCompletion().fit(sub)
        err = np.sqrt(np.mean((fit.completed_[m] - X[dom][m]) ** 2))
        row = df[(df.rep == r) & (df.approach == "local")].iloc[0]
        assert row.rmse == pytest.approx(err, rel=1e-10) and row["rank"] == fit.rank_


def test_global_vs_local_many_equals_one_setting_at_a_time():
    X, dom = _data(n_out=90, n_dom=30, seed=12, signal=3.0)
    frame = pd.DataFrame(X, columns=list("abcdef"))
    local = np.isin(np.arange(len(X)), dom)
    authors = dict(AUTHORS_SOFT_IMPUTE)
    settings = [
        {
            "pattern": "random",
            "p": 0.2,
            "n_reps": 3,
            "method": "soft_impute",
            "method_params": authors,
            "mask_scope": "all",
            "random_state": 1,
        },
        {
            "pattern": "block",
            "p": 0.5,
            "n_reps": 2,
            "method": "soft_impute",
            "method_params": authors,
            "mask_scope": "all",
            "random_state": 2,
            "observed_cols": ["a", "b", "c"],
            "same_rows": False,
        },
        {
            "pattern": "random",
            "p": 0.7,
            "n_reps": 4,
            "method": "soft_impute",
            "method_params": {"shrinkage": 0.1},
            "random_state": 3,
        },
        {
            "pattern": "random",
            "p": 0.5,
            "n_reps": 2,
            "method": "soft_impute",
            "method_params": {"shrinkage": 0.1},
            "random_state": 4,
        },
        {"pattern": "random", "p": 0.5, "n_reps": 2, "method": "soft_impute", "random_state": 5},
        {
            "pattern": "block",
            "p": 0.3,
            "n_reps": 3,
            "observed_cols": ["b", "d", "f"],
            "random_state": 6,
        },
        {"pattern": "random", "p": 0.4, "n_reps": 3, "method": ColumnMeans(), "random_state": 7},
        {
            "pattern": "random",
            "p": 0.3,
            "n_reps": 1,
            "method": "soft_impute",
            "method_params": authors,
            "mask_scope": "all",
            "random_state": 8,
        },
    ]
    many = global_vs_local_many(frame, local, settings)
    for kw, got in zip(settings, many):
        pd.testing.assert_frame_equal(
            got, global_vs_local(frame, local, **kw), check_exact=False, rtol=1e-10, atol=0
        )
    assert many[0].n_iter.between(2, 100).all() and (many[2].shrinkage == 0.1).all()
    with pytest.raises(ValueError, match="repetition 0: column"):
        global_vs_local_many(frame, local, [settings[2], {**settings[3], "p": 0.99}])


def _former_appendix_g_frame(frame, local, design, max_reps):
    """run_appendix_g's frame as the former code built it: one global_vs_local per task."""
    tasks = _tasks(design, 6, len(frame), max_reps)
    parts = []
    for t in tasks:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            df = global_vs_local(frame, local, **t.kwargs)
        df["rep"] += t.rep0
        df.insert(0, "experiment", t.experiment)
        df.insert(1, "variant", t.variant)
        df.insert(2, "setting", t.setting)
        df.insert(3, "n_observed", len(t.kwargs.get("observed_cols") or ()))
        parts.append(df)
    return pd.concat(parts, ignore_index=True)


@pytest.mark.parametrize("max_reps, n_jobs", [(1, None), (3, None), (3, 2), (None, None)])
def test_run_appendix_g_jobs_equal_one_task_at_a_time(max_reps, n_jobs):
    X, local = _data(n_out=80, n_dom=25, seed=13, signal=3.0)
    frame = pd.DataFrame(X, columns=list("abcdef"))
    mask = np.isin(np.arange(len(X)), local)
    d = AppendixGDesign.authors(
        random_runs=((0.2, 3), (0.5, 2)), ps_block=(0.3, 0.5), n_reps_block=1, n_reps_sets=2
    )
    res = run_appendix_g(frame, mask, d, n_jobs=n_jobs, max_reps_per_task=max_reps)
    former = _former_appendix_g_frame(frame, mask, d, max_reps or 3)
    pd.testing.assert_frame_equal(res.frame, former, check_exact=False, rtol=1e-10, atol=0)
    assert res.timings.repetitions.sum() == len(former) // 2
    assert (res.timings.seconds >= 0).all()
