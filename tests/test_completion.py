"""Matrix completion: soft-impute, structured completion, masks and the global-vs-local runner."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from hca.completion import (
    AUTHORS_SOFT_IMPUTE,
    ColumnMeans,
    SoftImpute,
    StructuredCompletion,
    compare_approaches,
    default_shrinkage_grid,
    domain_matrix,
    global_vs_local,
    mask_block,
    mask_random,
    observed_column_sets,
    paired_rmse,
    random_mask_diagnostics,
    rmse_by_row_observed,
    rmse_on_mask,
)
from hca.paper.appendix_g import AppendixGDesign, run_appendix_g
from hca.plots import plot_rmse_distributions, plot_rmse_vs_p

COLS = ["ifeval", "bbh", "math_lvl_5", "gpqa", "musr", "mmlu_pro"]


def _low_rank(n: int, d: int, rank: int, seed: int, scale: float = 5.0,
              shift: float = 20.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return scale * rng.normal(size=(n, rank)) @ rng.normal(size=(rank, d)) + shift


def _with_nan(X: np.ndarray, mask: np.ndarray) -> np.ndarray:
    out = X.copy()
    out[mask] = np.nan
    return out


def _two_subspaces(n_out: int = 900, n_dom: int = 150, seed: int = 0,
                   noise: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    """A global matrix whose domain rows (the last ``n_dom``) live in another subspace."""
    rng = np.random.default_rng(seed)
    d = 6
    V = np.linalg.qr(rng.normal(size=(d, 2)))[0]
    Vd = np.linalg.qr(rng.normal(size=(d, 2)))[0]
    X = np.vstack([rng.normal(size=(n_out, 2)) * [8, 4] @ V.T,
                   rng.normal(size=(n_dom, 2)) * [8, 4] @ Vd.T])
    X += noise * rng.normal(size=X.shape) + 30
    local = np.zeros(n_out + n_dom, dtype=bool)
    local[n_out:] = True
    return X, local


def _reference_soft_impute(Xm: np.ndarray, shrinkage: float, n_iter: int = 20000
                           ) -> tuple[np.ndarray, float]:
    """Plain soft-impute with full SVDs (Mazumder et al. 2010) on the centred matrix."""
    miss = np.isnan(Xm)
    mu = np.nanmean(Xm, axis=0)
    A = np.where(miss, 0.0, Xm - mu)
    lam = shrinkage * np.linalg.svd(A, compute_uv=False)[0]
    Z = np.zeros_like(A)
    for _ in range(n_iter):
        U, s, Vt = np.linalg.svd(np.where(miss, Z, A), full_matrices=False)
        Z = (U * np.maximum(s - lam, 0.0)) @ Vt
    return np.where(miss, Z + mu, Xm), lam


def _objective(H: np.ndarray, Xm: np.ndarray, lam: float) -> float:
    """Soft-impute objective at the fit implied by the completed matrix ``H``."""
    miss = np.isnan(Xm)
    mu = np.nanmean(Xm, axis=0)
    U, s, Vt = np.linalg.svd(H - mu, full_matrices=False)
    Z = (U * np.maximum(s - lam, 0.0)) @ Vt
    resid = (np.where(miss, 0.0, Xm - mu) - Z)[~miss]
    return 0.5 * float(resid @ resid) + lam * float(np.maximum(s - lam, 0.0).sum())


# --------------------------------------------------------------------------- soft-impute
def _rel_error(X: np.ndarray, H: np.ndarray, mask: np.ndarray) -> float:
    """Error on the masked entries relative to their spread around the column means."""
    return float(np.linalg.norm((H - X)[mask]) / np.linalg.norm((X - X.mean(axis=0))[mask]))


def test_soft_impute_recovers_low_rank_matrix():
    X = _low_rank(200, 40, 2, seed=1)
    mask = mask_random(X.shape, 0.3, 2)
    est = SoftImpute(shrinkage=1e-3)
    H = est.fit_transform(_with_nan(X, mask))
    assert _rel_error(X, H, mask) < 0.01
    assert est.rank_ <= 3  # rank 2 plus the offset left by centring on observed entries
    np.testing.assert_array_equal(H[~mask], X[~mask])
    validated = SoftImpute().fit_transform(_with_nan(X, mask))
    assert _rel_error(X, validated, mask) < 0.01


def test_soft_impute_six_columns_with_rank_cap():
    X = _low_rank(300, 6, 2, seed=1, shift=0.0)
    mask = mask_random(X.shape, 0.2, 2)
    est = SoftImpute(shrinkage=1e-4, max_rank=2, center=False, empty_row="ignore")
    H = est.fit_transform(_with_nan(X, mask))
    assert _rel_error(X, H, mask) < 0.02
    assert est.rank_ == 2 and est.converged_


def test_soft_impute_matches_plain_soft_impute_objective():
    rng = np.random.default_rng(5)
    X = _low_rank(120, 6, 2, seed=5, scale=1.0, shift=0.0) + 0.1 * rng.normal(size=(120, 6))
    Xm = _with_nan(X, mask_random(X.shape, 0.3, 6))
    for shrink in (0.1, 0.01):
        ref, lam = _reference_soft_impute(Xm, shrink, n_iter=3000)
        est = SoftImpute(shrinkage=shrink, tol=1e-12, max_iter=20000).fit(Xm)
        assert est.lambda_ == pytest.approx(lam, rel=1e-10)
        assert _objective(est.completed_, Xm, lam) <= _objective(ref, Xm, lam) * (1 + 1e-7)
        np.testing.assert_allclose(est.completed_, ref, atol=5e-3)


def test_soft_impute_max_rank_and_dataframe_round_trip():
    X = pd.DataFrame(_low_rank(80, 6, 3, seed=7), columns=COLS,
                     index=[f"m{i}" for i in range(80)])
    mask = mask_random(X.shape, 0.2, 8)
    Xm = X.mask(mask)
    out = SoftImpute(shrinkage=0.01, max_rank=1, empty_row="ignore").fit_transform(Xm)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == COLS and list(out.index) == list(X.index)
    assert not out.isna().any().any()
    est = SoftImpute(shrinkage=0.01, max_rank=1, empty_row="ignore").fit(Xm)
    assert est.rank_ == 1


def test_validation_picks_grid_value_deterministically():
    X = _low_rank(150, 6, 2, seed=9) + np.random.default_rng(9).normal(size=(150, 6))
    Xm = _with_nan(X, mask_random(X.shape, 0.4, 10))
    a = SoftImpute(random_state=3, empty_row="ignore").fit(Xm)
    b = SoftImpute(random_state=3, empty_row="ignore").fit(Xm)
    grid = default_shrinkage_grid()
    assert np.isclose(grid, a.shrinkage_).sum() == 1
    assert a.shrinkage_ == b.shrinkage_
    np.testing.assert_array_equal(a.validation_rmse_, b.validation_rmse_)
    np.testing.assert_array_equal(a.completed_, b.completed_)
    # the rule: the largest value within 1% of the best held-out RMSE
    best = a.validation_rmse_.min()
    ok = a.shrinkage_grid_[a.validation_rmse_ <= 1.01 * best]
    assert a.shrinkage_ == ok.max()
    assert a.lambda_ == pytest.approx(a.shrinkage_ * a.lambda_max_)
    # a custom grid is respected
    c = SoftImpute(shrinkage_grid=[0.5, 0.05], random_state=3, empty_row="ignore").fit(Xm)
    assert c.shrinkage_ in (0.5, 0.05)


def test_soft_impute_without_missing_entries_passes_through():
    X = _low_rank(20, 6, 2, seed=11)
    for est in (SoftImpute(), StructuredCompletion()):
        out = est.fit_transform(X)
        np.testing.assert_array_equal(out, X)
        assert out is not X


def test_soft_impute_bad_masks():
    X = pd.DataFrame(_low_rank(30, 6, 2, seed=12), columns=COLS,
                     index=[f"model_{i}" for i in range(30)])
    with pytest.raises(ValueError, match="every entry of X is missing"):
        SoftImpute(shrinkage=0.1).fit(X * np.nan)
    col_gone = X.copy()
    col_gone["gpqa"] = np.nan
    with pytest.raises(ValueError, match="gpqa"):
        SoftImpute(shrinkage=0.1).fit(col_gone)
    row_gone = X.copy()
    row_gone.iloc[4] = np.nan
    with pytest.warns(UserWarning, match="model_4"):
        out = SoftImpute(shrinkage=0.1).fit_transform(row_gone)
    np.testing.assert_allclose(out.iloc[4].to_numpy(), X.drop(index="model_4").mean(),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="model_4"):
        SoftImpute(shrinkage=0.1, empty_row="raise").fit(row_gone)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SoftImpute(shrinkage=0.1, empty_row="ignore").fit(row_gone)
    bad = X.copy()
    bad.iloc[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        SoftImpute(shrinkage=0.1).fit(bad)
    with pytest.raises(ValueError, match="shrinkage"):
        SoftImpute(shrinkage=-1.0).fit(row_gone)


# --------------------------------------------------------------------------- SMC
@pytest.mark.parametrize("kwargs", [{}, {"scale": True}, {"thresholding": "column"},
                                    {"rank": 2}, {"center": False}])
def test_structured_completion_is_exact_for_low_rank(kwargs):
    X = _low_rank(120, 6, 2, seed=13)
    rng = np.random.default_rng(14)
    rows = rng.permutation(120)[:50]  # scattered rows and columns: permuted into blocks
    Xm = X.copy()
    Xm[np.ix_(rows, [1, 4, 5])] = np.nan
    est = StructuredCompletion(**kwargs)
    H = est.fit_transform(Xm)
    np.testing.assert_allclose(H, X, atol=1e-8)
    assert est.rank_ == (3 if kwargs.get("center") is False else 2)  # affine: rank + 1
    np.testing.assert_array_equal(est.complete_cols_, [0, 2, 3])
    assert est.complete_rows_.size == 70


def test_structured_completion_rank_zero_gives_column_means_and_unused_entries():
    X = _low_rank(40, 6, 2, seed=15)
    Xm = X.copy()
    Xm[:10, 3:] = np.nan
    Xm[10:15, 5] = np.nan  # rows 10-14 also incomplete: row 10-14 x cols 3,4 observed
    est = StructuredCompletion(rank=0)
    H = est.fit_transform(Xm)
    np.testing.assert_allclose(H[:10, 3:], np.broadcast_to(X[15:, 3:].mean(axis=0), (10, 3)))
    assert est.n_unused_observed_ == 10


def test_structured_completion_bad_masks():
    X = pd.DataFrame(_low_rank(30, 6, 2, seed=16), columns=COLS,
                     index=[f"model_{i}" for i in range(30)])
    with pytest.raises(ValueError, match="every entry of X is missing"):
        StructuredCompletion().fit(X * np.nan)
    no_row = X.copy()
    no_row.iloc[:, 2] = np.nan
    with pytest.raises(ValueError, match="fully observed row.*math_lvl_5"):
        StructuredCompletion().fit(no_row)
    no_col = X.copy()
    for j in range(6):
        no_col.iloc[j, j] = np.nan
    with pytest.raises(ValueError, match="fully observed column"):
        StructuredCompletion().fit(no_col)
    with pytest.raises(ValueError, match="thresholding"):
        StructuredCompletion(thresholding="diagonal").fit(no_col)


# --------------------------------------------------------------------------- masks, RMSE
def test_mask_random_fraction_and_determinism():
    m = mask_random((400, 50), 0.3, 1)
    assert m.dtype == bool and m.shape == (400, 50)
    assert abs(m.mean() - 0.3) < 0.01
    np.testing.assert_array_equal(m, mask_random((400, 50), 0.3, 1))
    assert not mask_random((10, 6), 0.0, 1).any()
    with pytest.raises(ValueError, match="p must be"):
        mask_random((3, 3), 1.0, 1)


def test_mask_block_structure():
    m = mask_block(200, 6, [0, 2], 0.35, 4)
    assert not m[:, [0, 2]].any()
    missing_rows = m.any(axis=1)
    assert missing_rows.sum() == 70
    assert m[missing_rows][:, [1, 3, 4, 5]].all()
    with pytest.raises(ValueError, match="observed_cols"):
        mask_block(10, 6, [0, 1, 2, 3, 4, 5], 0.5, 0)
    with pytest.raises(ValueError, match="observed_cols"):
        mask_block(10, 6, [7], 0.5, 0)


def test_rmse_on_mask():
    a = np.zeros((2, 2))
    b = np.array([[3.0, 1.0], [4.0, 0.0]])
    mask = np.array([[True, False], [True, False]])
    assert rmse_on_mask(a, b, mask) == pytest.approx(np.sqrt(12.5))
    with pytest.raises(ValueError, match="no entry"):
        rmse_on_mask(a, b, np.zeros((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="shapes differ"):
        rmse_on_mask(a, b[:1], mask)


def test_observed_column_sets():
    sets = observed_column_sets(6, 3)
    assert len(sets) == 20 and sets[0] == (0, 1, 2) and sets[-1] == (3, 4, 5)


# --------------------------------------------------------------------------- experiment
def test_global_vs_local_columns_and_local_wins_random():
    X, local = _two_subspaces()
    df = global_vs_local(X, local, pattern="random", p=0.5, n_reps=15, random_state=0)
    assert list(df.columns) == ["rep", "approach", "rmse", "n_missing", "rank", "shrinkage",
                                "n_iter", "pattern", "p", "method", "observed_cols",
                                "mask_scope"]
    assert (df.n_iter >= 1).all()
    assert len(df) == 30
    assert set(df.approach) == {"global", "local"}
    assert (df.method == "soft_impute").all() and (df.pattern == "random").all()
    assert df.groupby("approach").shrinkage.nunique().eq(1).all()  # fixed across reps
    wide = df.pivot(index="rep", columns="approach", values="rmse")
    assert wide["local"].mean() < 0.8 * wide["global"].mean()
    assert (wide["local"] < wide["global"]).mean() >= 0.9


def test_global_vs_local_block_local_wins_and_matches_estimator():
    X, local = _two_subspaces(seed=1)
    frame = pd.DataFrame(X, columns=COLS)
    df = global_vs_local(frame, local, pattern="block", p=0.5, n_reps=10,
                         observed_cols=["ifeval", "bbh", "gpqa"], random_state=2)
    assert (df.method == "structured").all()
    assert (df.observed_cols == "ifeval,bbh,gpqa").all()
    wide = df.pivot(index="rep", columns="approach", values="rmse")
    assert wide["local"].mean() < wide["global"].mean()
    # the fast path equals StructuredCompletion on the same draws
    rng = np.random.default_rng(2)
    for r in range(3):
        m = mask_block(local.sum(), 6, [0, 1, 3], 0.5, rng)
        Xg = X.copy()
        sub = Xg[local]
        sub[m] = np.nan
        Xg[local] = sub
        g = rmse_on_mask(X[local], StructuredCompletion().fit_transform(Xg)[local], m)
        loc = rmse_on_mask(X[local], StructuredCompletion().fit_transform(sub), m)
        assert wide.loc[r, "global"] == pytest.approx(g, rel=1e-8)
        assert wide.loc[r, "local"] == pytest.approx(loc, rel=1e-8)


def test_global_vs_local_soft_impute_matches_estimator():
    X, local = _two_subspaces(n_out=300, n_dom=60, seed=3, noise=1.0)
    df = global_vs_local(X, local, pattern="random", p=0.5, n_reps=3, random_state=4,
                         method_params={"shrinkage": 0.05})
    rng = np.random.default_rng(4)
    for r in range(3):
        m = mask_random((60, 6), 0.5, rng)
        sub = _with_nan(X[local], m)
        est = SoftImpute(shrinkage=0.05, empty_row="ignore")
        loc = rmse_on_mask(X[local], est.fit_transform(sub), m)
        row = df[(df.rep == r) & (df.approach == "local")].iloc[0]
        assert row.rmse == pytest.approx(loc, rel=1e-3)
        assert row["rank"] == est.rank_


def test_global_vs_local_generic_estimator_and_errors():
    X, local = _two_subspaces(n_out=200, n_dom=40, seed=5)
    df = global_vs_local(X, np.flatnonzero(local), pattern="block", p=0.3, n_reps=2,
                         method=StructuredCompletion(rank=1), observed_cols=[0, 1])
    assert (df["rank"] == 1).all() and (df.method == "StructuredCompletion").all()
    with pytest.raises(ValueError, match="observed_cols"):
        global_vs_local(X, local, pattern="block", p=0.3, n_reps=2)
    with pytest.raises(ValueError, match="pattern"):
        global_vs_local(X, local, pattern="diagonal")
    Xn = X.copy()
    Xn[3, 2] = np.nan
    with pytest.raises(ValueError, match="fully observed"):
        global_vs_local(Xn, local, n_reps=2)
    with pytest.raises(ValueError, match="local_rows"):
        global_vs_local(X, np.ones(len(X), dtype=bool), n_reps=2)


def test_mask_block_per_column_rows():
    m = mask_block(400, 6, [1, 4], 0.25, 7, same_rows=False)
    assert not m[:, [1, 4]].any()
    np.testing.assert_array_equal(m[:, [0, 2, 3, 5]].sum(axis=0), [100] * 4)
    assert m.any(axis=1).sum() > 100  # different rows per column: not one block


def test_global_vs_local_mask_scope_all_matches_estimators():
    X, local = _two_subspaces(n_out=300, n_dom=60, seed=6, noise=1.0)
    df = global_vs_local(X, local, pattern="block", p=0.4, n_reps=3, observed_cols=[0, 2],
                         random_state=8, mask_scope="all", same_rows=False)
    assert (df.mask_scope == "all").all()
    rng = np.random.default_rng(8)
    for r in range(3):
        m = mask_block(len(X), 6, [0, 2], 0.4, rng, same_rows=False)
        Xm = _with_nan(X, m)
        g = rmse_on_mask(X[local], StructuredCompletion().fit_transform(Xm)[local], m[local])
        loc = rmse_on_mask(X[local], StructuredCompletion().fit_transform(Xm[local]),
                           m[local])
        wide = df.pivot(index="rep", columns="approach", values="rmse")
        assert wide.loc[r, "global"] == pytest.approx(g, rel=1e-8)
        assert wide.loc[r, "local"] == pytest.approx(loc, rel=1e-8)
        assert df.n_missing[r] == m[local].sum()
    soft = global_vs_local(X, local, pattern="random", p=0.3, n_reps=2, random_state=9,
                           mask_scope="all", method_params={"shrinkage": 0.05})
    rng = np.random.default_rng(9)
    m = mask_random(X.shape, 0.3, rng)
    H = SoftImpute(shrinkage=0.05, empty_row="ignore").fit_transform(_with_nan(X, m))
    g = rmse_on_mask(X[local], H[local], m[local])
    assert soft.rmse[0] == pytest.approx(g, rel=1e-3)


def test_global_vs_local_is_deterministic_and_smc_needs_a_block():
    X, local = _two_subspaces(n_out=200, n_dom=50, seed=10)
    a = global_vs_local(X, local, pattern="random", p=0.5, n_reps=4, random_state=11)
    b = global_vs_local(X, local, pattern="random", p=0.5, n_reps=4, random_state=11)
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(ValueError, match="no fully observed"):
        global_vs_local(X, local, pattern="random", p=0.9, n_reps=2, method="structured")


# --------------------------------------------------------------------------- column means
def test_column_means_fills_observed_means_and_matches_other_estimators():
    X = _low_rank(80, 6, 2, seed=20)
    m = mask_random(X.shape, 0.4, 21)
    Xm = _with_nan(X, m)
    out = ColumnMeans().fit_transform(Xm)
    expected = np.where(m, np.nanmean(Xm, axis=0), X)
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    soft = SoftImpute(shrinkage=1.0, empty_row="ignore").fit_transform(Xm)
    np.testing.assert_allclose(out, soft, rtol=1e-9, atol=1e-9)
    mb = mask_block(80, 6, [0, 2], 0.5, 22)
    Xb = _with_nan(X, mb)
    np.testing.assert_allclose(ColumnMeans().fit_transform(Xb),
                               StructuredCompletion(rank=0).fit_transform(Xb), rtol=1e-12)
    frame = pd.DataFrame(Xm, columns=COLS)
    est = ColumnMeans().fit(frame)
    assert est.rank_ == 0 and isinstance(est.fit_transform(frame), pd.DataFrame)
    Xm[:, 3] = np.nan
    with pytest.raises(ValueError, match="without any observed entry"):
        ColumnMeans().fit(pd.DataFrame(Xm, columns=COLS))


@pytest.mark.parametrize("scope", ["domain", "all"])
def test_global_vs_local_column_means_fast_path(scope):
    X, local = _two_subspaces(n_out=200, n_dom=40, seed=23)
    df = global_vs_local(X, local, pattern="random", p=0.5, n_reps=4, random_state=24,
                         method=ColumnMeans(), mask_scope=scope)
    assert (df.method == "ColumnMeans").all() and (df["rank"] == 0).all()
    wide = df.pivot(index="rep", columns="approach", values="rmse")
    rng = np.random.default_rng(24)
    dom = np.flatnonzero(local)
    for r in range(4):
        if scope == "all":
            m = mask_random(X.shape, 0.5, rng)
            Xg = _with_nan(X, m)
            md = m[dom]
        else:
            md = mask_random((dom.size, 6), 0.5, rng)
            Xg = X.copy()
            Xg[dom] = _with_nan(X[dom], md)
        g = rmse_on_mask(X[dom], ColumnMeans().fit_transform(Xg)[dom], md)
        loc = rmse_on_mask(X[dom], ColumnMeans().fit_transform(Xg[dom]), md)
        assert wide.loc[r, "global"] == pytest.approx(g, rel=1e-10)
        assert wide.loc[r, "local"] == pytest.approx(loc, rel=1e-10)


# --------------------------------------------------------------------------- domain matrix
def test_domain_matrix_and_its_errors():
    df = pd.DataFrame({"ifeval": [1.0, 2.0, 3.0, 4.0], "bbh": [5.0, 6.0, 7.0, 8.0],
                       "base_model": pd.array(["A", None, "B", "A"], dtype="string")},
                      index=[10, 11, 12, 13])
    X, local = domain_matrix(df, "A", ["ifeval", "bbh"])
    assert list(X.index) == [0, 1, 2, 3] and X.dtypes.eq(float).all()
    np.testing.assert_array_equal(local, [True, False, False, True])
    with pytest.raises(ValueError, match="no rows"):
        domain_matrix(df, "C", ["ifeval", "bbh"])
    with pytest.raises(ValueError, match="missing"):
        domain_matrix(df, "A", ["ifeval", "gpqa"])
    bad = df.assign(bbh=[5.0, np.nan, 7.0, 8.0])
    with pytest.raises(ValueError, match="missing scores"):
        domain_matrix(bad, "A", ["ifeval", "bbh"])
    with pytest.raises(TypeError):
        domain_matrix(X.to_numpy(), "A", ["ifeval"])


# --------------------------------------------------------------------------- summaries
def _toy_runs() -> pd.DataFrame:
    rows = []
    for p, g, loc in ((0.1, [2, 4, 6, 8], [1, 2, 3, 4]), (0.5, [1, 1, 1, 1], [1, 2, 1, 3])):
        for rep in range(4):
            rows.append({"rep": rep, "approach": "global", "rmse": g[rep], "p": p})
            rows.append({"rep": rep, "approach": "local", "rmse": loc[rep], "p": p})
    return pd.DataFrame(rows)


def test_paired_rmse_and_compare_approaches_by_hand():
    df = _toy_runs()
    wide = paired_rmse(df)
    assert list(wide.columns) == ["global", "local"] and len(wide) == 8
    s = compare_approaches(df, by=("p",), level=0.95)
    a = s.loc[0.1]
    assert a.n == 4 and a.global_mean == 5 and a.local_mean == 2.5
    assert a.ratio_median == pytest.approx(0.5) and a.share_local_better == 1.0
    half = 1.959964 * np.std([-1, -2, -3, -4], ddof=1) / 2
    assert a.diff_mean == -2.5 and a.diff_hi == pytest.approx(-2.5 + half, rel=1e-5)
    assert a.global_lo == pytest.approx(5 - 1.959964 * np.std([2, 4, 6, 8], ddof=1) / 2,
                                        rel=1e-5)
    assert a.verdict == "local better"
    b = s.loc[0.5]
    assert b.local_median == 1.5 and b.share_local_better == 0.0
    assert b.verdict == "no clear difference"  # diff = [0, 1, 0, 2]: interval covers 0
    one = compare_approaches(df, by=())
    assert len(one) == 1 and one.n.iloc[0] == 8
    assert compare_approaches(df[df.rep == 0], by=("p",)).verdict.eq(
        "too few repetitions").all()
    with pytest.raises(ValueError, match="share one repetition"):
        paired_rmse(pd.concat([df, df]))
    with pytest.raises(ValueError, match="approach"):
        paired_rmse(df[df.approach == "global"])
    with pytest.raises(ValueError, match="grouping columns"):
        compare_approaches(df, by=("variant",))
    with pytest.raises(ValueError, match="level"):
        compare_approaches(df, level=1.5)


def test_plots_return_axes():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = _toy_runs()
    ax = plot_rmse_distributions(df[df.p == 0.1], bins=5)
    assert len(ax.lines) == 2  # the two mean lines
    assert ax.lines[0].get_xdata()[0] == pytest.approx(5.0)
    ax2 = plot_rmse_vs_p(df)
    assert len(ax2.containers) == 2
    np.testing.assert_allclose(ax2.containers[1].lines[0].get_ydata(), [2.5, 1.75])
    plt.close("all")


# --------------------------------------------------------------------------- Appendix G
@pytest.mark.slow  # more than ~5 s
def test_run_appendix_g_small_design():
    X, local = _two_subspaces(n_out=200, n_dom=40, seed=27, noise=1.0)
    frame = pd.DataFrame(X, columns=COLS)
    design = AppendixGDesign(random_runs=((0.2, 3), (0.8, 2)), ps_block=(0.3, 0.5),
                             n_reps_block=1, n_reps_sets=2, n_reps_rank_check=1)
    res = run_appendix_g(frame, local, design)
    f = res.frame
    assert set(f.experiment) == {"15a", "15b", "16-rank"}
    assert len(res.select("15a", "soft-impute (validated)")) == 2 * (3 + 2)
    assert len(res.select("15a", "column means")) == 2 * (3 + 2)
    assert len(res.select("15b", "SMC")) == 2 * 20 * (1 + 2)
    assert len(res.sets("SMC")) == 2 * 20 * 2 and (res.sets().p == 0.5).all()
    assert set(res.select("16-rank").variant) == {
        "SMC, column rule", "SMC, rank 1", "SMC, rank 2", "SMC, rank 3"}
    # the method and the baseline see the same masks
    a, b = res.select("15b", "SMC"), res.select("15b", "column means")
    np.testing.assert_array_equal(a.n_missing.to_numpy(), b.n_missing.to_numpy())
    # the rank check reuses the first masks of Figure 16: rank 3 equals the row rule when
    # the row rule keeps rank 3
    assert (res.select("16-rank", "SMC, rank 2")["rank"] == 2).all()
    # blocks of repetitions and joblib workers do not change the output
    split = run_appendix_g(frame, local, design, max_reps_per_task=1)
    assert len(split.frame) == len(f) and set(split.frame.rep) == set(f.rep)
    again = run_appendix_g(frame, local, design, n_jobs=2)
    pd.testing.assert_frame_equal(again.frame, f)
    t = res.timings
    assert len(t) == 8 and (t.seconds >= 0).all()
    assert "total" in res.summary() and "15a: soft-impute (validated)" in design.summary()
    with pytest.raises(ValueError, match="no runs"):
        res.select("17")
    with pytest.raises(ValueError, match="p_sets"):
        AppendixGDesign(ps_block=(0.3,))


def test_authors_design_and_soft_impute():
    d = AppendixGDesign.authors(random_runs=((0.2, 2),), ps_block=(0.5,), n_reps_sets=1)
    assert d.mask_scope == "all" and not d.same_rows and d.random_state == 2025
    assert d.method_labels == {"random": "soft-impute (authors' code)",
                               "block": "soft-impute (authors' code)"}
    assert AUTHORS_SOFT_IMPUTE["stopping"] == "change" and AUTHORS_SOFT_IMPUTE["max_iter"] == 100
    X, local = _two_subspaces(n_out=120, n_dom=30, seed=30, noise=1.0)
    res = run_appendix_g(X, local, d)
    si = res.select("15a", "soft-impute (authors' code)")
    assert (si.mask_scope == "all").all() and (si.n_iter.between(2, 100)).all()
    assert (res.select("15b", "column means").observed_cols != "").all()


def test_fancyimpute_stopping_rule_by_hand():
    """stopping="change": plain soft-impute from zero, stopped when the filled-in entries
    change by less than tol (fancyimpute.SoftImpute), written out with numpy."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3)) @ rng.normal(size=(3, 6)) + 20
    miss = rng.random(X.shape) < 0.3
    Xm = np.where(miss, np.nan, X)
    est = SoftImpute(shrinkage=0.02, max_rank=3, center=False, stopping="change", tol=1e-3,
                     max_iter=100).fit(Xm)
    filled = np.where(miss, 0.0, X)
    lam = 0.02 * np.linalg.svd(filled, compute_uv=False)[0]
    for it in range(100):
        U, s, Vt = np.linalg.svd(filled, full_matrices=False)
        s = np.maximum(s - lam, 0)[:3]
        rec = (U[:, :3] * s) @ Vt[:3]
        old = filled[miss]
        done = np.linalg.norm(old) > 0 and np.linalg.norm(old - rec[miss]) < 1e-3 * np.linalg.norm(old)
        filled[miss] = rec[miss]
        if done:
            break
    np.testing.assert_allclose(est.completed_[miss], filled[miss], rtol=1e-8, atol=1e-8)
    assert est.n_iter_ == it + 1
    with pytest.raises(ValueError, match="stopping"):
        SoftImpute(stopping="never").fit(Xm)


def test_rmse_by_row_observed_by_hand():
    truth = np.zeros((3, 3))
    hat = np.array([[1.0, 2.0, 0.0], [3.0, 0.0, 0.0], [0.0, 0.0, 5.0]])
    mask = np.array([[True, True, False], [True, False, False], [False, False, False]])
    out = rmse_by_row_observed(truth, hat, mask)
    assert out.row_observed.tolist() == [1, 2]
    assert out.n_entries.tolist() == [2, 1] and out.sse.tolist() == [5.0, 9.0]
    assert out.rmse.tolist() == pytest.approx([np.sqrt(2.5), 3.0])
    with pytest.raises(ValueError, match="no entry"):
        rmse_by_row_observed(truth, hat, np.zeros((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="shapes"):
        rmse_by_row_observed(truth, hat[:2], mask)


def test_random_mask_diagnostics():
    X, local = _two_subspaces(n_out=100, n_dom=60, seed=28, noise=1.0)
    d = random_mask_diagnostics(X, local, p=0.6, n_draws=2, random_state=3)
    assert set(d.method) == {"soft-impute", "authors' soft-impute", "column means"}
    assert list(d.columns) == ["draw", "method", "shrinkage", "row_observed", "n_entries",
                               "sse", "rmse"]
    per = d.groupby(["draw", "method"]).n_entries.sum().unstack()
    assert (per.nunique(axis=1) == 1).all()  # every method scored on the same entries
    assert d[d.method == "authors' soft-impute"].shrinkage.eq(0.02).all()
    assert d[d.method == "column means"].shrinkage.isna().all()
    # uncentred fits put rows without observed entries at 0: error ~ the score level (30)
    empty = d[(d.method == "authors' soft-impute") & (d.row_observed == 0)]
    assert (empty.rmse > 20).all()
    cm = d[(d.method == "column means") & (d.row_observed == 0)]
    assert (cm.rmse < 10).all()


def test_blas_thread_limit_is_restored_after_runs():
    from threadpoolctl import threadpool_info

    before = [(i["filepath"], i["num_threads"]) for i in threadpool_info()]
    X, local = _two_subspaces(n_out=100, n_dom=30, seed=29)
    global_vs_local(X, local, pattern="block", p=0.3, observed_cols=[0, 1, 2], n_reps=2)
    after = [(i["filepath"], i["num_threads"]) for i in threadpool_info()]
    assert after == before
