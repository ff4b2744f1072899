"""Tests for hca.subspace: subspace distances, per-domain PCA, uncertainty, S_inv rule."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402

from hca import subspace as ss  # noqa: E402
from hca import plots as hp

D_BENCH = 6


def random_basis(rng, d=D_BENCH, r=3):
    q, _ = np.linalg.qr(rng.standard_normal((d, r)))
    return q


def make_domain(rng, basis, n=200, scales=(3.0, 2.5, 2.0), noise=0.05):
    """Rank-r scores (non-Gaussian sources) around 50 plus small isotropic noise."""
    r = basis.shape[1]
    z = rng.laplace(size=(n, r)) * np.asarray(scales[:r]) / np.sqrt(2)
    return 50.0 + z @ basis.T + noise * rng.standard_normal((n, basis.shape[0]))


@pytest.fixture(scope="module")
def three_domains():
    """Domains a and b share a subspace; c has a different one."""
    rng = np.random.default_rng(1)
    shared, other = random_basis(rng), random_basis(rng)
    X = np.vstack([
        make_domain(rng, shared, 150),
        make_domain(rng, shared, 120),
        make_domain(rng, other, 100),
    ])
    groups = np.array(["a"] * 150 + ["b"] * 120 + ["c"] * 100, dtype=object)
    return X, groups, shared, other


# ---------------------------------------------------------------- subspace_distance
def test_distance_zero_for_identical_and_rebased_subspaces():
    rng = np.random.default_rng(0)
    U = random_basis(rng)
    assert ss.subspace_distance(U, U) == pytest.approx(0.0, abs=1e-12)
    R = rng.standard_normal((3, 3)) + 3 * np.eye(3)  # invertible change of basis
    assert ss.subspace_distance(U, U @ R) == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(ss.principal_angles(U, U @ R), 0.0, atol=1e-6)


def test_distance_one_for_orthogonal_subspaces():
    E = np.eye(D_BENCH)
    assert ss.subspace_distance(E[:, :2], E[:, 2:4]) == pytest.approx(1.0, abs=1e-12)
    assert ss.subspace_distance(E[:, :3], E[:, 3:]) == pytest.approx(1.0, abs=1e-12)


def test_distance_known_principal_angles():
    a, b = 0.3, 1.1
    E = np.eye(D_BENCH)
    U = E[:, :3]
    V = np.column_stack([
        np.cos(a) * E[:, 0] + np.sin(a) * E[:, 3],
        np.cos(b) * E[:, 1] + np.sin(b) * E[:, 4],
        E[:, 2],
    ])
    Q, _ = np.linalg.qr(np.random.default_rng(2).standard_normal((D_BENCH, D_BENCH)))
    expected = 1 - (np.cos(a) + np.cos(b) + 1) / 3
    assert ss.subspace_distance(Q @ U, Q @ V) == pytest.approx(expected, abs=1e-12)
    np.testing.assert_allclose(ss.principal_angles(Q @ U, Q @ V), [0.0, a, b], atol=1e-7)


def test_distance_symmetric_and_scale_invariant():
    rng = np.random.default_rng(3)
    U, V = random_basis(rng), random_basis(rng)
    d = ss.subspace_distance(U, V)
    assert 0.0 < d < 1.0
    assert ss.subspace_distance(V, U) == pytest.approx(d, abs=1e-14)
    scaled = U * np.array([10.0, -0.01, 3.0])  # rescaled, sign-flipped columns
    assert ss.subspace_distance(scaled, V) == pytest.approx(d, abs=1e-12)
    assert ss.subspace_distance(scaled[:, ::-1], V * 7.0) == pytest.approx(d, abs=1e-12)


def test_distance_rejects_mismatched_or_dependent_bases():
    E = np.eye(D_BENCH)
    with pytest.raises(ValueError, match="different spaces"):
        ss.subspace_distance(E[:, :2], np.eye(5)[:, :2])
    with pytest.raises(ValueError, match="linearly dependent"):
        ss.subspace_distance(np.column_stack([E[:, 0], 2 * E[:, 0]]), E[:, :2])


# ---------------------------------------------------------------- PCA / ICA / rank
def test_principal_subspace_matches_sklearn_and_recovers_truth():
    rng = np.random.default_rng(4)
    B = random_basis(rng)
    X = make_domain(rng, B, 300)
    U = ss.principal_subspace(X, 3)
    np.testing.assert_allclose(U, PCA(3).fit(X).components_.T, atol=1e-10)
    np.testing.assert_allclose(U.T @ U, np.eye(3), atol=1e-12)
    assert ss.subspace_distance(U, B) < 1e-3


def test_principal_subspace_is_bit_identical_to_sklearn_pca():
    # the fast path of the split-half nulls and bootstraps computes what PCA computes
    rng = np.random.default_rng(3)
    for n in (4, 9, 57, 400):
        X = 50 + 10 * rng.standard_normal((n, D_BENCH)) @ rng.standard_normal((D_BENCH, D_BENCH))
        ref = PCA(n_components=3, svd_solver="full").fit(X).components_.T
        assert np.array_equal(ss.principal_subspace(X, 3), ref)


def test_ica_subspace_equals_pca_subspace():
    rng = np.random.default_rng(5)
    X = make_domain(rng, random_basis(rng), 300)
    U_ica = ss.ica_subspace(X, 3, random_state=0)
    np.testing.assert_allclose(U_ica.T @ U_ica, np.eye(3), atol=1e-12)
    assert ss.subspace_distance(U_ica, ss.principal_subspace(X, 3)) < 1e-8


def test_effective_rank_recovers_planted_rank():
    rng = np.random.default_rng(6)
    for r in (2, 3, 4):
        X = make_domain(rng, random_basis(rng, r=r), 400, scales=(2.5, 2.2, 2.0, 1.9))
        assert ss.effective_rank(X, 0.9) == r
        assert ss.effective_rank(X, rule="kaiser") == r


def test_explained_variance_values():
    rng = np.random.default_rng(7)
    X = make_domain(rng, random_basis(rng), 100)
    ev = ss.explained_variance(X, label="dom")
    ref = PCA().fit(X)
    np.testing.assert_allclose(ev.ratios, ref.explained_variance_ratio_, atol=1e-12)
    np.testing.assert_allclose(ev.eigenvalues, ref.explained_variance_, rtol=1e-8, atol=1e-9)
    assert ev.cumulative[-1] == pytest.approx(1.0, abs=1e-12)
    ev2 = ss.explained_variance(X, n_components=2)
    np.testing.assert_allclose(ev2.ratios, ev.ratios[:2], atol=1e-12)  # still of total
    assert "dom" in ev.summary() and "effective rank: 3" in ev.summary()
    assert ev.effective_rank(0.5) == int(np.argmax(ev.cumulative >= 0.5) + 1)
    assert list(ev.to_frame().columns) == ["eigenvalue", "ratio", "cumulative", "singular_value"]


def test_effective_rank_rejects_bad_rule_and_threshold():
    X = make_domain(np.random.default_rng(8), random_basis(np.random.default_rng(9)), 50)
    with pytest.raises(ValueError, match="rule"):
        ss.effective_rank(X, rule="elbow")
    with pytest.raises(ValueError, match="threshold"):
        ss.effective_rank(X, threshold=1.5)


# ---------------------------------------------------------------- distance matrix
def test_distance_matrix_structure(three_domains):
    X, groups, shared, other = three_domains
    D = ss.distance_matrix(X, groups)
    assert list(D.index) == ["a", "b", "c"] and list(D.columns) == ["a", "b", "c"]
    np.testing.assert_allclose(D.to_numpy(), D.to_numpy().T, atol=0)
    np.testing.assert_allclose(np.diag(D.to_numpy()), 0.0, atol=0)
    manual = ss.subspace_distance(
        ss.principal_subspace(X[groups == "a"]), ss.principal_subspace(X[groups == "c"])
    )
    assert D.loc["a", "c"] == pytest.approx(manual, abs=1e-14)
    assert D.loc["a", "b"] < 1e-3
    assert D.loc["a", "c"] == pytest.approx(ss.subspace_distance(shared, other), abs=5e-3)
    D_ica = ss.distance_matrix(X, groups, method="ica")
    np.testing.assert_allclose(D_ica.to_numpy(), D.to_numpy(), atol=1e-8)
    D_ord = ss.distance_matrix(X, groups, order=["c", "a"])
    assert list(D_ord.index) == ["c", "a"]
    assert D_ord.loc["c", "a"] == pytest.approx(D.loc["a", "c"], abs=1e-14)


def test_top_groups_order_and_ties():
    groups = ["x", "y", "y", "z", "x", "w", "y", None, np.nan]
    assert ss.top_groups(groups, 3) == ["y", "x", "z"]  # z before w: first appearance
    with pytest.raises(ValueError, match="only 4"):
        ss.top_groups(groups, 5)


# ---------------------------------------------------------------- bad input
def test_bad_input_raises_value_error_naming_problem(three_domains):
    X, groups, *_ = three_domains
    X_nan = X.copy()
    X_nan[5, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ss.distance_matrix(X_nan, groups)
    frame = pd.DataFrame(X_nan, columns=[f"b{i}" for i in range(D_BENCH)])
    with pytest.raises(ValueError, match="'b2'"):
        ss.principal_subspace(frame)
    with pytest.raises(ValueError, match="X has 370 rows but domains has 369 labels"):
        ss.distance_matrix(X, groups[:-1])
    small = np.array(list(groups[:-3]) + ["tiny"] * 3, dtype=object)
    msg = "domain 'tiny' has 3 rows.*at least n_components \\+ 1 = 4"
    with pytest.raises(ValueError, match=msg):
        ss.distance_matrix(X, small)
    with pytest.raises(ValueError, match="X has 3 rows"):
        ss.principal_subspace(X[:3], 3)
    with pytest.raises(ValueError, match=r"n_components \(7\) must be between 1 and the number"):
        ss.principal_subspace(X, 7)
    with pytest.raises(ValueError, match="no rows"):
        ss.distance_matrix(X, groups, order=["a", "nope"])
    with pytest.raises(ValueError, match="missing labels"):
        ss.distance_matrix(X, np.where(groups == "c", None, groups))
    rank2 = np.column_stack([X[:, :2], X[:, :2] @ np.ones((2, 4))])
    with pytest.raises(ValueError, match="rank below n_components=3"):
        ss.principal_subspace(rank2, 3)


# ---------------------------------------------------------------- uncertainty
def test_bootstrap_contains_point_and_is_deterministic(three_domains):
    X, groups, *_ = three_domains
    keep = groups != "b"  # a vs c: a clearly non-zero distance
    bs = ss.bootstrap_distance_matrix(X[keep], groups[keep], n_boot=60, random_state=11)
    assert bs.samples.shape == (60, 2, 2)
    assert bs.lower.loc["a", "c"] <= bs.point.loc["a", "c"] <= bs.upper.loc["a", "c"]
    assert bs.upper.loc["a", "c"] - bs.lower.loc["a", "c"] > 0
    np.testing.assert_allclose(bs.lower.to_numpy(), bs.lower.to_numpy().T, atol=0)
    again = ss.bootstrap_distance_matrix(X[keep], groups[keep], n_boot=60, random_state=11)
    np.testing.assert_array_equal(again.samples, bs.samples)
    other = ss.bootstrap_distance_matrix(X[keep], groups[keep], n_boot=60, random_state=12)
    assert not np.array_equal(other.samples, bs.samples)
    tidy = bs.to_frame()
    assert tidy.shape == (1, 6) and tidy.loc[0, "point"] == bs.point.loc["a", "c"]
    assert "a - c" in bs.summary()


def test_split_half_null_small_for_same_domain_and_deterministic(three_domains):
    X, groups, *_ = three_domains
    null = ss.split_half_null(X[groups == "a"], n_splits=40, random_state=3)
    assert null.shape == (40,) and np.all((null >= 0) & (null <= 1))
    again = ss.split_half_null(X[groups == "a"], n_splits=40, random_state=3)
    np.testing.assert_array_equal(null, again)
    D = ss.distance_matrix(X, groups)
    nulls = ss.split_half_nulls(X, groups, n_splits=40, random_state=0)
    tau = ss.null_threshold(nulls, 0.95)
    assert D.loc["a", "b"] <= tau < D.loc["a", "c"]
    with pytest.raises(ValueError, match="each half of X_group \\(7 rows\\) has 3 rows"):
        ss.split_half_null(X[:7], 3)


def test_null_threshold_weights_domains_equally():
    single = np.random.default_rng(0).random(101)
    expected = np.quantile(single, 0.9, method="inverted_cdf")
    assert ss.null_threshold(single, 0.9) == pytest.approx(expected)
    nulls = {"few": np.zeros(10), "many": np.ones(1000)}
    assert ss.null_threshold(nulls, 0.5) == 0.0  # pooled concatenation would give 1.0
    assert ss.null_threshold(nulls, 0.6) == 1.0
    with pytest.raises(ValueError, match="quantile"):
        ss.null_threshold(single, 1.0)


# ---------------------------------------------------------------- invariant set
def planted_matrix():
    labels = [f"g{i}" for i in range(7)]
    rng = np.random.default_rng(0)
    D = 0.3 + 0.4 * rng.random((7, 7))
    clique = [0, 2, 4, 5]
    for i in clique:
        for j in clique:
            D[i, j] = 0.02 + 0.01 * ((i + j) % 3)
    D[1, 6] = D[6, 1] = 0.05  # a smaller clique elsewhere
    D = np.triu(D, 1) + np.triu(D, 1).T
    return pd.DataFrame(D, index=labels, columns=labels)


def test_invariant_set_finds_planted_clique():
    D = planted_matrix()
    assert ss.invariant_set(D, 0.1) == ["g0", "g2", "g4", "g5"]
    cands = ss.candidate_sets(D, 0.1)
    assert cands.loc[0, "size"] == 4 and cands.loc[1, "groups"] == ["g1", "g6"]
    assert ss.invariant_set(D, 0.0) == ["g0"]  # no edges: first singleton


def test_invariant_set_tie_break_by_mean_distance():
    labels = list("pqrs")
    M = np.full((4, 4), 0.9)
    np.fill_diagonal(M, 0.0)
    D = pd.DataFrame(M, index=labels, columns=labels)
    D.loc["p", "q"] = D.loc["q", "p"] = 0.08
    D.loc["r", "s"] = D.loc["s", "r"] = 0.03
    assert ss.invariant_set(D, 0.1) == ["r", "s"]


def test_invariant_set_with_pair_thresholds():
    D = planted_matrix()
    T = pd.DataFrame(0.1, index=D.index, columns=D.columns)
    T.loc["g0", "g2"] = T.loc["g2", "g0"] = 0.01  # g0 and g2 no longer "the same"
    result = ss.invariant_set(D, T)
    assert len(result) == 3 and {"g4", "g5"} < set(result)
    nulls = {"a": np.zeros(10), "b": np.ones(10)}
    PT = ss.pair_thresholds(nulls, 0.95)
    assert PT.loc["a", "a"] == 0.0 and PT.loc["a", "b"] == 1.0 and PT.loc["b", "a"] == 1.0


def test_invariant_set_rejects_bad_matrix():
    D = planted_matrix()
    asym = D.copy()
    asym.iloc[0, 1] += 0.5
    with pytest.raises(ValueError, match="symmetric"):
        ss.invariant_set(asym, 0.1)
    with pytest.raises(ValueError, match="square"):
        ss.invariant_set(D.iloc[:, :3], 0.1)


# ---------------------------------------------------------------- plots
def test_plot_distance_matrix_annotations(three_domains):
    X, groups, *_ = three_domains
    bs = ss.bootstrap_distance_matrix(X, groups, n_boot=20, random_state=0)
    fig, ax = plt.subplots()
    out = hp.plot_distance_matrix(bs.point, ax=ax, lower=bs.lower, upper=bs.upper, highlight=["a"])
    assert out is ax
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 9 and sum("[" in t for t in texts) == 6
    assert texts[1].startswith(format(bs.point.iat[0, 1], ".2f"))
    bold = [t.get_text() for t in ax.get_yticklabels() if t.get_fontweight() == "bold"]
    assert bold == ["a"]
    plt.close(fig)


def test_plot_explained_variance(three_domains):
    X, groups, *_ = three_domains
    evs = {g: ss.explained_variance(X[groups == g], label=g) for g in ["a", "b", "c"]}
    ax = hp.plot_explained_variance(evs, kind="cumulative", threshold=0.9)
    assert len(ax.lines) == 4  # three domains + threshold
    np.testing.assert_allclose(ax.lines[0].get_ydata(), evs["a"].cumulative)
    plt.close(ax.figure)


# ---------------------------------------------------------------- descriptions
def test_benchmark_leverage_axes_and_rows_sum_to_rank():
    E = np.eye(D_BENCH)
    rng = np.random.default_rng(3)
    R = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    lev = ss.benchmark_leverage({"x": E[:, :3] @ R, "y": E[:, [0, 1, 4]]},
                                columns=list("abcdef"))
    np.testing.assert_allclose(lev.loc["x"], [1, 1, 1, 0, 0, 0], atol=1e-12)
    np.testing.assert_allclose(lev.loc["y"], [1, 1, 0, 0, 1, 0], atol=1e-12)
    U = random_basis(rng)
    lev = ss.benchmark_leverage({"u": U})
    assert lev.loc["u"].sum() == pytest.approx(3.0, abs=1e-12)
    assert ((lev.to_numpy() >= -1e-12) & (lev.to_numpy() <= 1 + 1e-12)).all()
    with pytest.raises(ValueError, match="columns has 2 names"):
        ss.benchmark_leverage({"u": U}, columns=["a", "b"])
    with pytest.raises(ValueError, match="different dimensions"):
        ss.benchmark_leverage({"u": U, "v": E[:4, :2]})


def test_singular_spectrum_centred_matches_pca_and_uncentred_mean_dominates():
    rng = np.random.default_rng(4)
    X = make_domain(rng, random_basis(rng), n=300)
    centred = ss.singular_spectrum(X, center=True)
    ev = ss.explained_variance(X)
    np.testing.assert_allclose(centred["energy"].to_numpy(), ev.ratios, rtol=1e-10)
    np.testing.assert_allclose(centred["singular_value"].to_numpy(), ev.singular_values,
                               rtol=1e-10)
    raw = ss.singular_spectrum(X)
    # scores sit around 50: the first uncentred direction is the mean vector
    assert raw["energy"].iloc[0] > 0.99
    assert raw["cumulative"].iloc[-1] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="NaN"):
        ss.singular_spectrum(np.array([[1.0, np.nan], [2.0, 3.0]]))


def test_invariant_set_stability(three_domains):
    X, groups, *_ = three_domains
    bs = ss.bootstrap_distance_matrix(X, groups, n_boot=30, random_state=0)
    nulls = ss.split_half_nulls(X, groups, n_splits=30, random_state=0)
    tau = ss.null_threshold(nulls)
    stab = ss.invariant_set_stability(bs, tau)
    assert list(stab.index) == list(bs.point.index)
    assert stab.loc["a", "in_point_set"] and stab.loc["b", "in_point_set"]
    assert not stab.loc["c", "in_point_set"]
    # a and b share a subspace: always together; c is far from both: never with them
    assert stab.loc["a", "frequency"] == pytest.approx(1.0)
    assert stab.loc["b", "frequency"] == pytest.approx(1.0)
    assert stab.loc["c", "frequency"] == pytest.approx(0.0)
    with pytest.raises(TypeError, match="BootstrapDistances"):
        ss.invariant_set_stability(bs.point, tau)


def test_spectrum_table(three_domains):
    X, groups, *_ = three_domains
    evs = {g: ss.explained_variance(X[groups == g], label=g) for g in ["a", "c"]}
    tab = ss.spectrum_table(evs, n_show=3)
    assert list(tab.columns) == ["models", "PC1", "PC2", "PC3", "cumulative_3",
                                 "rank_cumulative", "rank_kaiser"]
    assert tab.loc["a", "models"] == 150
    assert tab.loc["a", "PC1"] == pytest.approx(evs["a"].ratios[0])
    # rank-3 data with small noise: three components carry nearly all variance
    assert tab.loc["a", "cumulative_3"] > 0.99 and tab.loc["a", "rank_cumulative"] == 3
    with pytest.raises(TypeError, match="not ExplainedVariance"):
        ss.spectrum_table({"a": X})


def test_compare_groups(three_domains):
    X, groups, *_ = three_domains
    cmp = ss.compare_groups(X, groups, order=["a", "b", "c"], n_splits=30, random_state=0)
    pd.testing.assert_frame_equal(cmp.dist, ss.distance_matrix(X, groups, order=["a", "b", "c"]))
    assert cmp.sizes.to_dict() == {"a": 150, "b": 120, "c": 100}
    tidy = cmp.to_frame().set_index(["group_a", "group_b"])
    assert not tidy.loc[("a", "b"), "beyond_noise"]
    assert tidy.loc[("a", "c"), "beyond_noise"] and tidy.loc[("b", "c"), "beyond_noise"]
    nulls = ss.split_half_nulls(X, groups, n_splits=30, order=["a", "b", "c"], random_state=0)
    assert cmp.threshold == pytest.approx(ss.null_threshold(nulls))
    assert "a - c" in cmp.summary()


def test_plot_pair_intervals(three_domains):
    X, groups, *_ = three_domains
    bs = ss.bootstrap_distance_matrix(X, groups, n_boot=20, random_state=0)
    ax = hp.plot_pair_intervals(bs, threshold=0.1, highlight=["a", "b"])
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 3 and labels[0] == "a - b"  # smallest distance first
    assert any(line.get_linestyle() == "--" for line in ax.lines)
    plt.close(ax.figure)


def test_residual_variance():
    rng = np.random.default_rng(5)
    # column 0 carries a big factor, column 1 a smaller independent one, column 2 noise
    z = rng.standard_normal((500, 2)) * [10.0, 3.0]
    X = np.column_stack([z[:, 0], z[:, 1], 0.5 * rng.standard_normal(500)])
    np.testing.assert_allclose(ss.residual_variance(X, 0), X.var(axis=0, ddof=1))
    r1 = ss.residual_variance(X, 1)
    assert r1[0] < 0.01 * X[:, 0].var()       # the first component takes column 0
    assert r1[1] > 0.9 * X[:, 1].var(ddof=1)  # column 1 is left: it leads the next component
    assert r1[1] > r1[2]
    with pytest.raises(ValueError, match="between 0 and 2"):
        ss.residual_variance(X, 3)


def test_plot_null_distributions_and_leverage(three_domains):
    X, g, _, _ = three_domains
    nulls = ss.split_half_nulls(X, g, n_splits=5)
    ax = hp.plot_null_distributions(nulls, threshold=0.1)
    assert [t.get_text() for t in ax.get_yticklabels()] == [str(k) for k in nulls]
    assert ax.get_legend() is not None
    plt.close(ax.figure)
    lev = ss.benchmark_leverage(ss.group_subspaces(X, g))
    ax = hp.plot_leverage(lev, colorbar=False)
    assert len(ax.texts) == lev.size
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="nulls is empty"):
        hp.plot_null_distributions({})
    with pytest.raises(ValueError, match="non-empty DataFrame"):
        hp.plot_leverage(pd.DataFrame())
