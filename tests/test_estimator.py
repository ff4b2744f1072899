"""Tests for hca.estimator (HCA: Appendix C, Algorithms 1-2, Proposition 1, Theorem 1)."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

import hca.estimator.ica as est_module
from hca.estimator import (
    GAUSSIAN_LOGCOSH,
    HCA,
    DomainSCM,
    domain_ica,
    evaluate_order,
    hca_search,
    ica_negentropy,
    mic_by_subset,
    restart_seeds,
)
from hca.estimator.search import all_orders
from hca.synthetic import simulate_scm


def upper_share(HG: np.ndarray) -> float:
    """Norm of the strictly upper part of H_hat G relative to its norm (0 for lower-triangular)."""
    return float(np.linalg.norm(np.triu(HG, 1)) / np.linalg.norm(HG))


def scrambled(sim, rng, noise=0.0, scale=False):
    """Population unmixing matrices with rows shuffled, flipped (and rescaled), plus noise."""
    out, perms = [], []
    for M in sim.unmixing.values():
        perm = rng.permutation(M.shape[0])
        factor = rng.choice([-1.0, 1.0], M.shape[0])
        if scale:
            factor = factor * rng.uniform(0.2, 5.0, M.shape[0])
        E = noise * np.sqrt(np.mean(M**2)) * rng.normal(size=M.shape)
        out.append(factor[:, None] * M[perm] + E)
        perms.append(perm)
    return out, perms


def same_order(a, b) -> bool:
    return all(np.array_equal(p, q) for p, q in zip(a.permutations, b.permutations))


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def exact_sim():
    return simulate_scm(n_domains=5, n_per_domain=2000, alpha=0.0, random_state=0)


@pytest.fixture(scope="module")
def exact_fit(exact_sim):
    return HCA().fit(exact_sim.X, exact_sim.domains)


# --------------------------------------------------------------------------- exact SCMs
def test_exact_scm_has_small_mic(exact_fit):
    assert exact_fit.mic_ < 0.01
    assert max(exact_fit.inexactness_.values()) == pytest.approx(exact_fit.mic_)
    assert exact_fit.search_result_.certified


def test_exact_scm_theorem1_lower_triangular(exact_fit, exact_sim):
    # Theorem 1: H_hat = L H with L lower-triangular, so H_hat G = L is lower-triangular.
    assert upper_share(exact_fit.unmixing_ @ exact_sim.G) < 0.05


def test_exact_scm_recovers_sources_in_causal_order(exact_fit, exact_sim):
    for label in exact_fit.domains_:
        rows = exact_sim.domains == label
        X = exact_sim.X[rows] - exact_fit.ica_[label].mean
        eps_hat = X @ (exact_fit.weights_[label] @ exact_fit.unmixing_).T
        corr = np.corrcoef(eps_hat.T, exact_sim.sources[rows].T)[:3, 3:]
        assert np.all(np.abs(np.diag(corr)) > 0.95), label  # sources up to sign
        np.testing.assert_allclose(eps_hat.std(axis=0), 1.0, atol=1e-8)


def test_fitted_structure(exact_fit):
    d = 3
    H = exact_fit.unmixing_
    np.testing.assert_allclose(H @ H.T, np.eye(d), atol=1e-10)
    np.testing.assert_allclose(exact_fit.mixing_, np.linalg.pinv(H), atol=1e-10)
    assert exact_fit.domains_ == ["D1", "D2", "D3", "D4", "D5"]
    for label, B in exact_fit.weights_.items():
        np.testing.assert_array_equal(B, np.tril(B))
        assert np.all(np.diag(B) > 0)
        model = exact_fit.models_[label]
        np.testing.assert_array_equal(model.A, np.tril(model.A, -1))
        assert np.all(model.omega_sqrt > 0)
        expected = (np.eye(d) - model.A) / model.omega_sqrt[:, None]
        np.testing.assert_allclose(model.B, expected, atol=1e-12)
        assert sorted(exact_fit.permutations_[label]) == [0, 1, 2]
        assert exact_fit.ica_converged_[label]


def test_table3_diagnostics(exact_fit):
    res = exact_fit.search_result_
    assert res.rank1_error.shape == (3,)
    assert np.all((res.rank1_error >= 0) & (res.rank1_error < 0.01))
    for k, label in enumerate(exact_fit.domains_):
        M, B = res.aligned[k], res.weights[k]
        expected = np.linalg.norm(M - B @ res.unmixing) / np.linalg.norm(M)
        assert exact_fit.unmixing_error_[label] == pytest.approx(expected)
        assert expected < 0.05


def test_transform_and_dataframe_input(exact_sim, exact_fit):
    df = exact_sim.frame()
    est = HCA().fit(df[list(exact_sim.feature_names)], df["domain"])
    assert list(est.feature_names_in_) == list(exact_sim.feature_names)
    np.testing.assert_allclose(est.unmixing_, exact_fit.unmixing_, atol=1e-10)
    Z = est.transform(df[list(exact_sim.feature_names)[::-1]])  # columns matched by name
    np.testing.assert_allclose(Z, exact_sim.X @ est.unmixing_.T, atol=1e-10)
    with pytest.raises(ValueError, match="missing the fitted benchmark column"):
        est.transform(df[["b1", "b2"]])


def test_summaries(exact_fit):
    text = exact_fit.summary()
    assert "MIC =" in text and "certified optimal" in text
    assert "z2 = " in text and "ε3" in text


def test_domain_scm_summary_format():
    B = np.linalg.inv(np.diag([1.0, 24.0])) @ (np.eye(2) - np.array([[0, 0], [2.76, 0]]))
    model = DomainSCM.from_B("Llama-3-8B", B, 0.01)
    assert model.equations() == ["z1 = 1.00 ε1", "z2 = 2.76 z1 + 24.0 ε2"]
    neg = DomainSCM.from_B("x", np.array([[2.0, 0], [0.25, 0.5]]), 0.0)
    assert neg.equations()[1] == "z2 = -0.500 z1 + 2.00 ε2"
    assert neg.summary().startswith("x (alpha = 0)")


# --------------------------------------------------------------------------- inexactness
def test_mic_grows_with_inexactness():
    mics = []
    for alpha in (0.0, 0.1, 0.3):
        sim = simulate_scm(n_domains=4, n_per_domain=2000, alpha=alpha, random_state=1)
        mics.append(HCA().fit(sim.X, sim.domains).mic_)
    assert mics[0] < 0.01 < mics[1] < mics[2]


# --------------------------------------------------------------------------- invariances
def test_invariant_to_row_and_domain_order(exact_sim, exact_fit):
    rng = np.random.default_rng(5)
    order = rng.permutation(len(exact_sim.X))
    shuffled = HCA().fit(exact_sim.X[order], exact_sim.domains[order])
    np.testing.assert_allclose(shuffled.unmixing_, exact_fit.unmixing_, atol=1e-6)
    assert shuffled.mic_ == pytest.approx(exact_fit.mic_, abs=1e-6)
    assert shuffled.domains_ == exact_fit.domains_
    # domains given in reverse order of appearance
    rev = np.argsort(exact_sim.domains, kind="stable")[::-1]
    reversed_fit = HCA().fit(exact_sim.X[rev], exact_sim.domains[rev])
    for label in exact_fit.domains_:
        alpha = exact_fit.inexactness_[label]
        assert reversed_fit.inexactness_[label] == pytest.approx(alpha, abs=1e-6)
        np.testing.assert_allclose(
            reversed_fit.weights_[label], exact_fit.weights_[label], atol=1e-5
        )


@pytest.mark.parametrize("residual", ["domain", "shared"])
def test_core_exact_sign_scale_and_row_order_invariance(residual):
    sim = simulate_scm(n_domains=4, n_per_domain=5, random_state=11)
    truth = hca_search(list(sim.unmixing.values()), residual=residual)
    assert truth.mic < 1e-10
    assert upper_share(truth.unmixing @ sim.G) < 1e-8
    rng = np.random.default_rng(0)
    Ms, perms = scrambled(sim, rng, scale=True)
    res = hca_search(Ms, residual=residual)
    assert res.mic < 1e-10
    np.testing.assert_allclose(res.unmixing, truth.unmixing, atol=1e-8)
    for k, perm in enumerate(perms):  # position i holds the shuffled row of causal node i
        np.testing.assert_array_equal(perm[res.permutations[k]], [0, 1, 2])
        assert np.all(np.diag(res.weights[k]) > 0)


@pytest.mark.parametrize("residual", ["domain", "shared"])
def test_core_inexact_sign_and_row_order_invariance(residual):
    sim = simulate_scm(n_domains=4, n_per_domain=5, alpha=0.15, random_state=12)
    rng = np.random.default_rng(1)
    Ms, _ = scrambled(sim, rng, noise=0.03)
    base = hca_search(Ms, residual=residual)
    flips = [rng.choice([-1.0, 1.0], 3)[:, None] * M for M in Ms]
    shuffles = [rng.permutation(3) for _ in Ms]
    moved = [M[s] for M, s in zip(flips, shuffles)]
    res = hca_search(moved, residual=residual)
    assert res.mic == pytest.approx(base.mic, abs=1e-10)
    np.testing.assert_allclose(res.unmixing, base.unmixing, atol=1e-8)
    np.testing.assert_allclose(res.alphas, base.alphas, atol=1e-10)
    for k, s in enumerate(shuffles):
        np.testing.assert_array_equal(s[res.permutations[k]], base.permutations[k])
    # domain order: alphas follow the domains
    rev = hca_search(Ms[::-1], residual=residual)
    np.testing.assert_allclose(rev.alphas[::-1], base.alphas, atol=1e-10)
    np.testing.assert_allclose(rev.unmixing, base.unmixing, atol=1e-8)


def test_residual_options_coincide_on_exact_scm():
    sim = simulate_scm(n_domains=3, n_per_domain=5, random_state=13)
    Ms, _ = scrambled(sim, np.random.default_rng(2))
    a, b = hca_search(Ms, residual="domain"), hca_search(Ms, residual="shared")
    assert same_order(a, b)
    np.testing.assert_allclose(a.unmixing, b.unmixing, atol=1e-10)


def test_residual_options_differ_on_inexact_scm():
    sim = simulate_scm(n_domains=4, n_per_domain=5, alpha=0.2, random_state=14)
    Ms, _ = scrambled(sim, np.random.default_rng(3), noise=0.05)
    a, b = hca_search(Ms, residual="domain"), hca_search(Ms, residual="shared")
    assert a.residual == "domain" and b.residual == "shared"
    assert not np.allclose(a.unmixing, b.unmixing, atol=1e-6)


# --------------------------------------------------------------------------- search core
@pytest.mark.parametrize("residual", ["domain", "shared"])
def test_tree_matches_direct_evaluation_of_every_order(residual):
    sim = simulate_scm(n_domains=3, n_per_domain=5, alpha=0.1, random_state=15)
    Ms, _ = scrambled(sim, np.random.default_rng(4), noise=0.05)
    rows, mics = all_orders(Ms, residual)
    assert len(mics) == 6**3
    assert len({tuple(r.ravel()) for r in rows}) == 6**3
    direct = [evaluate_order(Ms, list(r), residual=residual).mic for r in rows]
    np.testing.assert_allclose(mics, direct, atol=1e-10)
    best = hca_search(Ms, residual=residual)
    assert best.mic == pytest.approx(min(direct), abs=1e-12)
    assert best.n_evaluated + best.n_pruned == 216  # every order evaluated or ruled out
    assert best.n_evaluated <= 216


def test_evaluate_order_closed_forms():
    sim = simulate_scm(n_domains=3, n_per_domain=5, alpha=0.2, random_state=16)
    Ms, _ = scrambled(sim, np.random.default_rng(5), noise=0.05)
    res = evaluate_order(Ms, [np.array([2, 0, 1])] * 3)
    H = res.unmixing
    for k, M in enumerate(res.aligned):
        B = res.weights[k]
        for i in range(3):  # row i of B is the least-squares fit of M'_i on h_1..h_i
            coef, *_ = np.linalg.lstsq(H[: i + 1].T, M[i], rcond=None)
            np.testing.assert_allclose(B[i, : i + 1], coef, atol=1e-10)
        J = B @ H @ M.T @ np.linalg.inv(M @ M.T)
        Jn = J / np.linalg.norm(J, axis=1, keepdims=True)
        alpha = (np.sum(Jn**2) - np.sum(np.diag(Jn) ** 2)) / 3
        assert res.alphas[k] == pytest.approx(alpha)
    assert res.mic == pytest.approx(res.alphas.max())
    np.testing.assert_allclose(H.sum(axis=1) >= 0, True)


SEQUENTIAL_CASES = [
    (d, K, alpha, noise, seed)
    for seed, (d, K) in enumerate([(3, 3), (3, 4), (3, 5), (4, 3)] * 2)
    for alpha, noise in [(0.0, 0.0), (0.0, 0.05), (0.1, 0.02), (0.3, 0.1)]
]


@pytest.mark.parametrize("d, K, alpha, noise, seed", SEQUENTIAL_CASES)
@pytest.mark.slow  # more than ~5 s on a loaded machine
def test_sequential_equals_exhaustive(d, K, alpha, noise, seed):
    sim = simulate_scm(
        n_domains=K, n_per_domain=5, n_components=d, alpha=alpha, random_state=100 + seed
    )
    Ms, _ = scrambled(sim, np.random.default_rng(seed), noise=noise)
    for residual in ("domain", "shared"):
        ex = hca_search(Ms, residual=residual)
        seq = hca_search(Ms, search="sequential", residual=residual, beam_width=4)
        assert seq.certified
        assert same_order(ex, seq)
        assert seq.mic == pytest.approx(ex.mic, abs=1e-12)
        assert seq.n_evaluated < ex.n_evaluated + ex.n_pruned or K * d <= 9


def test_sequential_equals_exhaustive_after_ica():
    for seed, alpha in enumerate([0.0, 0.05, 0.2]):
        sim = simulate_scm(n_domains=4, n_per_domain=300, alpha=alpha, random_state=200 + seed)
        icas = domain_ica(sim.X, sim.domains, 3)
        Ms = {label: fit.unmixing for label, fit in icas.items()}
        ex, seq = hca_search(Ms), hca_search(Ms, search="sequential")
        assert same_order(ex, seq) and seq.mic == pytest.approx(ex.mic, abs=1e-12)
        assert seq.domains == tuple(icas)


def test_sequential_uncertified_warns():
    sim = simulate_scm(n_domains=5, n_per_domain=5, alpha=0.3, random_state=17)
    Ms, _ = scrambled(sim, np.random.default_rng(6), noise=0.1)
    with pytest.warns(UserWarning, match="without certifying"):
        res = hca_search(Ms, search="sequential", beam_width=1, max_nodes=300)
    assert not res.certified
    assert res.mic >= hca_search(Ms).mic - 1e-12


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    d=st.integers(2, 3),
    K=st.integers(2, 4),
    p_extra=st.integers(0, 3),
)
def test_property_exact_scm_identified(seed, d, K, p_extra):
    sim = simulate_scm(
        n_domains=K, n_per_domain=3, n_components=d, n_benchmarks=d + p_extra, random_state=seed
    )
    Ms, _ = scrambled(sim, np.random.default_rng(seed), scale=True)
    res = hca_search(Ms, search="sequential")
    assert res.mic < 1e-8
    if K >= d:  # Theorem 1 needs at least d domains
        assert upper_share(res.unmixing @ sim.G) < 1e-6


# --------------------------------------------------------------------------- OLS adjustment
def test_ols_adjustment(exact_sim, exact_fit):
    adj = exact_fit.adjust()
    L = adj.L
    np.testing.assert_allclose(np.diag(L), 1.0)
    np.testing.assert_array_equal(L, np.tril(L))
    assert adj.r2.shape == (3, 6)
    assert list(adj.r2.index) == ["z1", "z2", "z3"]
    assert ((adj.r2.values >= 0) & (adj.r2.values <= 1 + 1e-12)).all()
    assert adj.benchmarks == tuple(adj.r2.idxmax(axis=1))
    np.testing.assert_allclose(adj.unmixing, L @ exact_fit.unmixing_)
    np.testing.assert_allclose(adj.mixing, np.linalg.pinv(adj.unmixing), atol=1e-10)
    for label, B in adj.weights.items():
        np.testing.assert_allclose(B, np.tril(B), atol=1e-12)
        before = exact_fit.weights_[label] @ exact_fit.unmixing_
        np.testing.assert_allclose(B @ adj.unmixing, before, atol=1e-10)
        omega = exact_fit.models_[label].omega_sqrt
        np.testing.assert_allclose(adj.models[label].omega_sqrt, omega)
    # after the adjustment z_i is orthogonal (in the OLS sense) to z_1..z_{i-1}
    Z = exact_sim.X @ adj.unmixing.T
    for i, bench in enumerate(adj.benchmarks):
        if i == 0:
            continue
        b = int(bench[1:])  # fitted on an array: benchmarks are named x0, x1, ...
        design = np.column_stack([np.ones(len(Z)), Z[:, :i], exact_sim.X[:, b]])
        coef, *_ = np.linalg.lstsq(design, Z[:, i], rcond=None)
        np.testing.assert_allclose(coef[1 : 1 + i], 0.0, atol=1e-8)
    assert "OLS adjustment" in adj.summary()


def test_ols_adjustment_known_answer():
    # z2 = x3 + 0.5 z1 exactly: the adjustment removes 0.5 z1 and picks benchmark x3 (R^2 = 1).
    rng = np.random.default_rng(0)
    est = HCA(n_components=2)
    est.unmixing_ = np.array([[1.0, 0, 0], [0.5, 0, 1.0]])
    est.mixing_ = np.linalg.pinv(est.unmixing_)
    est.weights_, est.inexactness_ = {}, {}
    est.n_features_in_ = 3
    est._benchmarks = ["x1", "x2", "x3"]
    X = rng.normal(size=(200, 3))
    adj = est.adjust(X)
    assert adj.benchmarks[1] == "x3"
    assert adj.r2.loc["z2", "x3"] == pytest.approx(1.0)
    np.testing.assert_allclose(adj.L, [[1, 0], [-0.5, 1]], atol=1e-10)


# --------------------------------------------------------------------------- subsets
@pytest.mark.slow  # more than ~5 s
def test_mic_by_subset(exact_sim):
    keep = np.isin(exact_sim.domains, ["D1", "D2", "D3", "D4"])
    X, dom = exact_sim.X[keep][::2], exact_sim.domains[keep][::2]
    table = mic_by_subset(HCA(), X, dom, min_size=2)
    pd.testing.assert_frame_equal(table, mic_by_subset(HCA(), X, dom, min_size=2, n_jobs=2))
    assert len(table) == 6 + 4 + 1
    assert table["size"].tolist() == [2] * 6 + [3] * 4 + [4]
    alphas = table[[f"alpha_D{i}" for i in range(1, 5)]]
    np.testing.assert_allclose(table["mic"], alphas.max(axis=1, skipna=True))
    assert alphas.notna().sum(axis=1).tolist() == table["size"].tolist()
    full = HCA().fit(X, dom)
    assert table["mic"].iloc[-1] == pytest.approx(full.mic_, abs=1e-10)
    with pytest.raises(ValueError, match=r"candidate domain\(s\) \['D9'\] not found"):
        mic_by_subset(HCA(), X, dom, candidates=["D1", "D2", "D9"])
    assert "alignment" not in table.columns


def test_mic_by_subset_alignment(exact_sim):
    """A subset's alignment is the one its own fit gives (HCA.adjust on its rows)."""
    X, dom = exact_sim.X[::4], exact_sim.domains[::4]
    three = ("D3", "D1", "D2")
    table = mic_by_subset(HCA(), X, dom, min_size=3, align=[three, ("D1", "D2", "D3", "D4")])
    keep = np.isin(dom, three)
    expected = HCA().fit(X[keep], dom[keep]).adjust().benchmarks
    row = table[table["subset"].map(frozenset) == frozenset(three)].iloc[0]
    assert row["alignment"] == expected
    assert table["alignment"].notna().sum() == 2
    with pytest.raises(ValueError, match=r"align: subset\(s\) \[\['D1', 'D9'\]\] are not swept"):
        mic_by_subset(HCA(), X, dom, min_size=3, align=[("D1", "D9")])


# --------------------------------------------------------------------------- warnings and errors
def test_ica_convergence_warning_names_domain():
    sim = simulate_scm(n_domains=3, n_per_domain=200, random_state=3)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est = HCA(max_iter=1, tol=1e-12).fit(sim.X, sim.domains)
    messages = [str(w.message) for w in record if issubclass(w.category, ConvergenceWarning)]
    assert len(messages) == 3
    for label in ("D1", "D2", "D3"):
        assert sum(f"FastICA did not converge for domain '{label}'" in m for m in messages) == 1
    assert all(w.filename == __file__ for w in record)  # points at the caller
    assert est.ica_converged_ == {"D1": False, "D2": False, "D3": False}
    assert not est.ica_["D2"].converged


def test_no_warning_when_converged(exact_sim):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        HCA().fit(exact_sim.X[:3000:2], np.repeat(["a", "b", "c"], 500))


def _small():
    sim = simulate_scm(n_domains=3, n_per_domain=20, random_state=4)
    return pd.DataFrame(sim.X, columns=list(sim.feature_names)), np.array(sim.domains)


def test_error_nan_names_column_and_row():
    X, dom = _small()
    X.iloc[[3, 7], 2] = np.nan
    match = r"NaN or infinite values in column\(s\) \['b3'\], rows \[3, 7\]"
    with pytest.raises(ValueError, match=match):
        HCA().fit(X, dom)


def test_error_inf():
    X, dom = _small()
    X.iloc[0, 0] = np.inf
    with pytest.raises(ValueError, match=r"column\(s\) \['b1'\], rows \[0\]"):
        HCA().fit(X, dom)


def test_error_inf_array_names_position():
    X, dom = _small()
    values = X.to_numpy(copy=True)
    values[5, 4] = -np.inf
    with pytest.raises(ValueError, match=r"column\(s\) \['x4'\], rows \[5\]"):
        HCA().fit(values, dom)


def test_error_small_domain():
    X, dom = _small()
    match = r"domain 'D3' has 4 models but at least 6 \(the number of benchmarks\)"
    with pytest.raises(ValueError, match=match):
        HCA().fit(X.iloc[:44], dom[:44])


def test_error_single_domain():
    X, dom = _small()
    with pytest.raises(ValueError, match=r"at least 2 domains, found 1 \(\['D1'\]\)"):
        HCA().fit(X.iloc[:20], dom[:20])


def test_error_too_many_components():
    X, dom = _small()
    match = r"n_components \(7\) must be between 1 and the number of benchmarks \(6\)"
    with pytest.raises(ValueError, match=match):
        HCA(n_components=7).fit(X, dom)


def test_error_constant_column():
    X, dom = _small()
    X["b5"] = 42.0
    with pytest.raises(ValueError, match=r"constant column\(s\) \['b5'\]"):
        HCA().fit(X, dom)


def test_error_length_mismatch():
    X, dom = _small()
    with pytest.raises(ValueError, match="X has 60 rows but domains has 59 labels"):
        HCA().fit(X, dom[:-1])


def test_error_unknown_search_and_residual():
    X, dom = _small()
    with pytest.raises(ValueError, match="'search' parameter of HCA must be a str among .*greedy"):
        HCA(search="greedy").fit(X, dom)
    with pytest.raises(ValueError, match="'residual' parameter of HCA must be a str among"):
        HCA(residual="own").fit(X, dom)
    with pytest.raises(ValueError, match="beam_width must be a positive int"):
        hca_search([np.eye(2, 3)] * 2, beam_width=0)


def test_error_core_inputs():
    with pytest.raises(ValueError, match="at least 2 domains, got 1"):
        hca_search([np.eye(3)])
    with pytest.raises(ValueError, match=r"domain 1 has shape \(2, 4\), expected \(3, 4\)"):
        hca_search([np.eye(3, 4), np.eye(2, 4)])
    with pytest.raises(ValueError, match="domain 'b' does not have full row rank"):
        hca_search({"a": np.eye(2, 3), "b": np.ones((2, 3))})
    with pytest.raises(ValueError, match=r"\(4!\)\^6 = 191102976 row orders exceeds"):
        hca_search([np.eye(4, 5)] * 6)


def test_transform_before_fit():
    with pytest.raises(ValueError, match="not fitted yet"):
        HCA().transform(np.zeros((2, 6)))


# --------------------------------------------------------------------------- ICA restarts
def test_gaussian_logcosh_constant():
    # E[log cosh(nu)] for nu ~ N(0, 1), by a fine Riemann sum of the density
    x = np.linspace(-12, 12, 400_001)
    density = np.exp(-(x**2) / 2) / np.sqrt(2 * np.pi)
    assert GAUSSIAN_LOGCOSH == pytest.approx(
        np.sum(np.log(np.cosh(x)) * density) * (x[1] - x[0]), abs=1e-9
    )
    assert GAUSSIAN_LOGCOSH == pytest.approx(0.3746, abs=1e-4)


def test_ica_negentropy_values():
    rng = np.random.default_rng(0)
    n = 400_000
    gauss = rng.normal(size=(n, 1))
    uniform = rng.uniform(-1, 1, size=(n, 1))
    J = ica_negentropy(np.hstack([gauss, 5 * uniform + 3]))
    assert J[0] < 1e-6
    # standardised uniform on [-sqrt 3, sqrt 3]: E log cosh by a fine Riemann sum
    u = np.linspace(-np.sqrt(3), np.sqrt(3), 200_001)
    expected = (np.mean(np.log(np.cosh(u))) - GAUSSIAN_LOGCOSH) ** 2
    assert J[1] == pytest.approx(expected, rel=0.02)
    # invariant to the scale and location of a source, and to its sign
    np.testing.assert_allclose(
        ica_negentropy(-2 * uniform[:1000] + 1), ica_negentropy(uniform[:1000])
    )
    with pytest.raises(ValueError, match="constant column"):
        ica_negentropy(np.ones((10, 2)))
    with pytest.raises(ValueError, match="2-D with at least 2 rows"):
        ica_negentropy(np.ones(10))


def test_restart_seeds():
    assert restart_seeds(7, 3) == [7, 8, 9]
    assert restart_seeds(None, 2) == [None, None]
    a = restart_seeds(np.random.RandomState(1), 4)
    assert a == restart_seeds(np.random.RandomState(1), 4) and len(set(a)) == 4
    with pytest.raises(ValueError, match="n_restarts must be a positive int, got 0"):
        restart_seeds(0, 0)
    with pytest.raises(TypeError, match="random_state must be an int"):
        restart_seeds("seed", 2)


def test_single_restart_is_the_default(exact_sim):
    X, dom = exact_sim.X[:6000], exact_sim.domains[:6000]
    a = HCA(random_state=3).fit(X, dom)
    b = HCA(random_state=3, n_restarts=1).fit(X, dom)
    for label in a.domains_:
        np.testing.assert_array_equal(a.ica_[label].unmixing, b.ica_[label].unmixing)
        assert a.ica_[label].restart == 0 and len(a.ica_[label].restart_objectives) == 1
        sources = (X[dom == label] - a.ica_[label].mean) @ a.ica_[label].unmixing.T
        assert a.ica_[label].objective == pytest.approx(ica_negentropy(sources).sum())
    assert a.mic_ == b.mic_


def test_restarts_keep_the_largest_negentropy():
    sim = simulate_scm(n_domains=3, n_per_domain=150, random_state=11)
    fits = domain_ica(sim.X, sim.domains, random_state=5, n_restarts=6)
    for label, fit in fits.items():
        objs = np.array(fit.restart_objectives)
        assert len(objs) == 6 and fit.objective == pytest.approx(objs.max())
        assert fit.restart == int(np.argmax(objs))
        # the kept run is the single run seeded with random_state + restart
        single = domain_ica(sim.X, sim.domains, random_state=5 + fit.restart)[label]
        np.testing.assert_allclose(fit.unmixing, single.unmixing)
        # restart 0 is the default single run
        first = domain_ica(sim.X, sim.domains, random_state=5)[label]
        assert objs[0] == pytest.approx(first.objective)
        assert "restart" in fit.summary()


def test_restarts_skip_unconverged_runs(monkeypatch):
    sim = simulate_scm(n_domains=2, n_per_domain=200, random_state=2)
    real = est_module.fastica_lockstep
    flags = np.array([False, True, False])  # seeds 10, 11, 12 (the distinct seeds, sorted)

    def fake_batch(whitened, w_init, **kw):
        return [dataclasses.replace(r, converged=flags) for r in real(whitened, w_init, **kw)]

    calls = iter([10.0, 1.0, 20.0] * 2)  # the unconverged runs look best
    monkeypatch.setattr(est_module, "fastica_lockstep", fake_batch)
    monkeypatch.setattr(est_module, "ica_negentropy", lambda S: np.array([next(calls), 0.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fits = domain_ica(sim.X, sim.domains, random_state=10, n_restarts=3)
    for fit in fits.values():
        assert fit.restart == 1 and fit.converged and fit.objective == 1.0
        assert np.isnan(fit.restart_objectives[0]) and np.isnan(fit.restart_objectives[2])


def test_restarts_in_hca_and_subsets():
    sim = simulate_scm(n_domains=4, n_per_domain=300, alpha=0.05, random_state=8)
    model = HCA(n_restarts=3).fit(sim.X, sim.domains)
    table = mic_by_subset(HCA(n_restarts=3), sim.X, sim.domains)
    assert table["mic"].iloc[-1] == pytest.approx(model.mic_, abs=1e-12)
    keep = np.isin(sim.domains, ["D1", "D2", "D3"])
    sub = HCA(n_restarts=3).fit(sim.X[keep], sim.domains[keep])
    row = table[table["subset"] == ("D1", "D2", "D3")]
    assert row["mic"].iloc[0] == pytest.approx(sub.mic_, abs=1e-12)
    with pytest.raises(
        ValueError,
        match=r"'n_restarts' parameter of HCA must be an int in the "
        r"range \[1, inf\)\. Got 0",
    ):
        HCA(n_restarts=0).fit(sim.X, sim.domains)


# --------------------------------------------------------------------------- Figure 19
def test_reconstruction_error():
    exact = simulate_scm(n_domains=3, n_per_domain=500, random_state=1)
    err = HCA().fit(exact.X, exact.domains).reconstruction_error()
    assert list(err.columns) == ["relative_error", "mse", "rmse"]
    assert err["relative_error"].max() < 1e-10  # x = G z lies in the row space of H_hat
    noisy = simulate_scm(n_domains=3, n_per_domain=500, noise=0.3, random_state=1)
    X = pd.DataFrame(noisy.X, columns=list(noisy.feature_names))
    model = HCA().fit(X, noisy.domains)
    err = model.reconstruction_error()
    H = model.unmixing_
    resid = noisy.X - noisy.X @ H.T @ H
    np.testing.assert_allclose(err["mse"], np.mean(resid**2, axis=0))
    np.testing.assert_allclose(
        err["relative_error"], np.sum(resid**2, axis=0) / np.sum(noisy.X**2, axis=0)
    )
    assert list(err.index) == list(noisy.feature_names)
    centred = model.reconstruction_error(centre=True)
    Xc = noisy.X.copy()
    for label in model.domains_:
        Xc[noisy.domains == label] -= model.ica_[label].mean
    np.testing.assert_allclose(centred["mse"], np.mean((Xc - Xc @ H.T @ H) ** 2, axis=0))
    with pytest.raises(ValueError, match="centre=True uses the training domains"):
        model.reconstruction_error(X, centre=True)


# --------------------------------------------------------------------------- R^2
def test_r_squared_contract():
    from hca.estimator import r_squared

    y = np.array([1.0, 2.0, 4.0, 5.0])
    assert r_squared(y, np.zeros(4)) == 1.0
    assert r_squared(y, y - y.mean()) == pytest.approx(0.0)
    assert r_squared(y, 2 * (y - y.mean())) == pytest.approx(-3.0)  # worse than the mean
    assert np.isnan(r_squared(np.ones(4), np.zeros(4)))  # constant y: undefined, NaN


def test_hca_ica_option_and_default_tolerance():
    sim = simulate_scm(n_domains=3, n_per_domain=400, alpha=0.0, random_state=6)
    fast = HCA().fit(sim.X, sim.domains)
    assert fast.get_params()["ica"] == "fastica" and fast.get_params()["tol"] is None
    for ica in ("picard-o", "picard"):
        model = HCA(ica=ica).fit(sim.X, sim.domains)
        assert model.mic_ < 0.05 and all(model.ica_converged_.values())
        direct = domain_ica(sim.X, sim.domains, 3, ica=ica)
        for label in model.domains_:
            np.testing.assert_array_equal(model.ica_[label].unmixing, direct[label].unmixing)


# --------------------------------------------------------------------------- batched FastICA
@pytest.mark.parametrize("n, seed", [(40, 0), (150, 1), (400, 2)])
def test_fastica_batch_equals_sklearn(n, seed):
    """The vectorised solver gives scikit-learn's FastICA, start by start: same whitened data,
    same initial matrix, the same iteration count and components to 1e-10."""
    from sklearn.decomposition import FastICA

    from hca.estimator.fastica_batch import fastica_lockstep, initial_matrices, whiten

    sim = simulate_scm(n_domains=1, n_per_domain=n, alpha=0.05, offset=30.0, random_state=seed)
    X = np.asarray(sim.X, dtype=float)
    seeds = list(range(12))
    wh = whiten(X, 3)
    (batch,) = fastica_lockstep([wh], [initial_matrices(seeds, 3)], max_iter=1000, tol=1e-4)
    for i, s in enumerate(seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            ref = FastICA(3, whiten="unit-variance", random_state=s, max_iter=1000, tol=1e-4).fit(X)
        assert batch.n_iter[i] == ref.n_iter_
        np.testing.assert_allclose(batch.components[i], ref.components_, rtol=0, atol=1e-10)
        np.testing.assert_allclose(batch.mean, ref.mean_, rtol=0, atol=1e-12)
        np.testing.assert_allclose(wh.K, ref.whitening_, rtol=0, atol=1e-12)
    # a start's result does not depend on its batch
    (alone,) = fastica_lockstep([whiten(X, 3)], [initial_matrices([seeds[5]], 3)])
    np.testing.assert_array_equal(alone.components[0], batch.components[5])
    assert "12 starts" in batch.summary()


def test_fastica_lockstep_of_one_shape_equals_one_matrix_at_a_time():
    """fastica_lockstep iterates the starts of several data matrices of one shape together;
    every matrix's result equals the loop on it alone (bitwise here: the same per-slice
    operations), and fastica_runs_many equals fastica_runs."""
    from hca.estimator.fastica_batch import fastica_lockstep, initial_matrices, whiten
    from hca.estimator.ica import fastica_runs, fastica_runs_many

    rng = np.random.default_rng(3)
    Xs = [rng.laplace(size=(120, 6)) @ rng.normal(size=(6, 6)) for _ in range(5)]
    seeds = [0, 4, 9]
    whs = [whiten(X, 3) for X in Xs]
    W0 = initial_matrices(seeds, 3)
    for wh, res in zip(whs, fastica_lockstep(whs, [W0] * len(Xs), max_iter=500, tol=1e-5)):
        (alone,) = fastica_lockstep([wh], [W0], max_iter=500, tol=1e-5)
        np.testing.assert_allclose(res.components, alone.components, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(res.n_iter, alone.n_iter)
    many = fastica_runs_many(Xs + [Xs[0][:80]], 3, [9, 0, 9])  # a second shape, a repeat
    for X, runs in zip(Xs + [Xs[0][:80]], many):
        for a, b in zip(runs, fastica_runs(X, 3, [9, 0, 9])):
            np.testing.assert_allclose(a.unmixing, b.unmixing, rtol=0, atol=1e-12)
            assert a.n_iter == b.n_iter and a.objective == pytest.approx(b.objective, abs=1e-12)


def test_fastica_lockstep_reports_nonconvergence_and_bad_input():
    from hca.estimator.fastica_batch import fastica_lockstep, initial_matrices, whiten

    sim = simulate_scm(n_domains=1, n_per_domain=60, random_state=3)
    wh = whiten(sim.X, 3)
    (res,) = fastica_lockstep([wh], [initial_matrices([0, 1], 3)], max_iter=1, tol=1e-12)
    assert not res.converged.any() and (res.n_iter == 1).all()
    assert "2 starts, 0 converged" in res.summary()
    with pytest.raises(ValueError, match=r"w_init\[0\] must have shape"):
        fastica_lockstep([wh], [np.eye(3)])
    with pytest.raises(ValueError, match="n_components"):
        whiten(sim.X, 99)


def test_domain_ica_has_no_memo():
    """Every fit computes its own runs and owns its arrays (no process-wide FastICA memo)."""
    sim = simulate_scm(n_domains=3, n_per_domain=80, random_state=4)
    assert not hasattr(est_module, "_MEMO") and not hasattr(est_module, "prefetch_fastica")
    first = domain_ica(sim.X, sim.domains, 3, random_state=7)
    first[next(iter(first))].unmixing[:] = 0.0
    again = domain_ica(sim.X, sim.domains, 3, random_state=7)
    for label in again:
        assert np.abs(again[label].unmixing).sum() > 0
    # duplicated seeds share no arrays either
    runs = est_module.fastica_runs(sim.X[sim.domains == "D1"], 3, [7, 7])
    assert runs[0].unmixing is not runs[1].unmixing
    np.testing.assert_array_equal(runs[0].unmixing, runs[1].unmixing)
