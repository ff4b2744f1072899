"""The batched subspace computations equal the former one-matrix-at-a-time code (issue 33).

The ``former_*`` functions below are the code of ``hca.subspace.distances`` before batching
(commit 3d812c7), kept verbatim as the reference: the same random draws in the same order, one
PCA basis and one distance at a time. The batched functions must give the same numbers to
1e-10 and leave a passed generator in the same state.
"""

import numpy as np
import pandas as pd
import pytest

from hca import subspace as ss
from hca.subspace.distances import redraw_until_full_rank
from hca.subspace.pca import MAX_REDRAWS, subspace_basis

TOL = 1e-10


# ---------------------------------------------------------------- the former code (reference)
def former_distance_matrix(bases):
    labels = list(bases)
    D = np.zeros((len(labels), len(labels)))
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            D[i, j] = D[j, i] = ss.subspace_distance(bases[labels[i]], bases[labels[j]])
    return D


def former_split_half_null(arr, k=3, *, n_splits=200, half_size=None, method="pca", rng=0):
    n = arr.shape[0]
    h = n // 2 if half_size is None else half_size
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    out = np.empty(n_splits)
    for s in range(n_splits):
        for _ in range(MAX_REDRAWS):
            perm = rng.permutation(n)
            try:
                seed = rng.integers(2**31 - 1)
                A = subspace_basis(arr[perm[:h]], k, method, seed)
                B = subspace_basis(arr[perm[h : 2 * h]], k, method, seed)
                break
            except ValueError:
                continue
        else:
            raise ValueError("too many redraws")
        out[s] = ss.subspace_distance(A, B)
    return out


def former_resample_basis(arr, k, rng, method):
    n = arr.shape[0]
    for _ in range(MAX_REDRAWS):
        idx = rng.integers(0, n, size=n)
        try:
            return subspace_basis(arr[idx], k, method, rng.integers(2**31 - 1))
        except ValueError:
            continue
    raise ValueError("too many redraws")


def former_bootstrap(X, domains, order, *, n_boot, method="pca", rng=0, k=3):
    bases = ss.group_subspaces(X, domains, k, order=order, method=method, random_state=0)
    parts = {lab: X[domains == lab] for lab in order}
    rng = np.random.default_rng(rng)
    samples = np.zeros((n_boot, len(order), len(order)))
    self_samples = np.zeros((n_boot, len(order)))
    for b in range(n_boot):
        boot = {lab: former_resample_basis(parts[lab], k, rng, method) for lab in order}
        samples[b] = former_distance_matrix(boot)
        self_samples[b] = [ss.subspace_distance(bases[lab], boot[lab]) for lab in order]
    return samples, self_samples


# ---------------------------------------------------------------- data
def low_rank(rng, n, d=6, r=3, noise=0.05):
    basis = np.linalg.qr(rng.standard_normal((d, r)))[0]
    return (
        50
        + rng.laplace(size=(n, r)) * [3.0, 2.5, 2.0][:r] @ basis.T
        + noise * (rng.standard_normal((n, d)))
    )


def with_ties(rng, n, d=6):
    """Three repeated rows (rank 2 once centred) and a few rows moved off their plane: many
    halves and resamples lose rank 3 and are drawn again."""
    base = np.round(rng.standard_normal((3, d)) * 5)
    rows = base[rng.integers(0, 3, size=n)]
    return rows + (rng.random((n, 1)) < 0.15) * np.round(rng.standard_normal((n, d)))


def one_off_plane(rng, n, d=6):
    """Three repeated rows (rank 2 once centred) and one row off their plane: rank 3, but a
    resample without that row (about a third of them) has rank 2 and is drawn again."""
    rows = np.round(rng.standard_normal((3, d)) * 5)[np.arange(n) % 3]
    rows[-1] += rng.standard_normal(d)
    return rows


@pytest.fixture(scope="module")
def book_domains(v2):
    """The book's data: the v2 scores of the eight largest domains by the authors' labels."""
    from hca.data import V2_BENCHMARKS

    frame = v2.dropna(subset=["authors_base_model", *V2_BENCHMARKS])
    order = list(frame["authors_base_model"].value_counts().index[:8])
    frame = frame[frame["authors_base_model"].isin(order)]
    return (
        frame[list(V2_BENCHMARKS)].to_numpy(dtype=float),
        frame["authors_base_model"].to_numpy(dtype=object),
        order,
    )


# ---------------------------------------------------------------- stacked primitives
def test_principal_subspaces_equal_principal_subspace_with_signs():
    rng = np.random.default_rng(0)
    for n, d, k in [(4, 6, 3), (9, 6, 3), (57, 6, 2), (300, 6, 3), (40, 12, 5)]:
        stack = rng.standard_normal((25, n, d)) @ rng.standard_normal((d, d)) * 7 + 50
        bases, full = ss.principal_subspaces(stack, k)
        assert bases.shape == (25, d, k) and full.all()
        for b, X in zip(bases, stack):
            np.testing.assert_allclose(b, ss.principal_subspace(X, k), rtol=0, atol=TOL)


def test_principal_subspaces_flag_rank_deficient_matrices():
    rng = np.random.default_rng(1)
    stack = rng.standard_normal((4, 10, 6))
    stack[1] = np.outer(rng.standard_normal(10), rng.standard_normal(6))  # rank 1
    stack[3] = 5.0  # constant: zero variance
    _, full = ss.principal_subspaces(stack, 3)
    assert full.tolist() == [True, False, True, False]
    for X, ok in zip(stack, full):
        if not ok:
            with pytest.raises(ValueError, match="rank below"):
                ss.principal_subspace(X, 3)


def test_principal_subspaces_reject_bad_input():
    with pytest.raises(ValueError, match="3-D"):
        ss.principal_subspaces(np.zeros((5, 6)), 3)
    bad = np.ones((3, 8, 6))
    bad[2, 1, 4] = np.nan
    with pytest.raises(ValueError, match=r"stack\[2\].*NaN"):
        ss.principal_subspaces(bad, 3)
    with pytest.raises(ValueError, match="at least n_components"):
        ss.principal_subspaces(np.ones((3, 3, 6)), 3)
    with pytest.raises(TypeError, match="stack must be a numeric array"):
        ss.principal_subspaces([[["a"] * 6] * 5], 3)


def test_subspace_distances_equal_subspace_distance():
    rng = np.random.default_rng(2)
    for k, ell in [(3, 3), (2, 4), (1, 1)]:
        U = rng.standard_normal((30, 6, k)) * rng.uniform(0.1, 10, size=(30, 1, k))
        V = rng.standard_normal((30, 6, ell))
        V[:5, :, : min(k, ell)] = U[:5, :, : min(k, ell)]  # some (nearly) shared spans
        got = ss.subspace_distances(U, V)
        want = [ss.subspace_distance(u, v) for u, v in zip(U, V)]
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL)
        one = ss.subspace_distances(U[0], V)  # a single basis against a stack
        np.testing.assert_allclose(
            one, [ss.subspace_distance(U[0], v) for v in V], rtol=0, atol=TOL
        )


def test_subspace_distances_reject_bad_input():
    E = np.eye(6)
    with pytest.raises(ValueError, match="different spaces"):
        ss.subspace_distances(E[:, :2], np.eye(5)[:, :2])
    with pytest.raises(ValueError, match=r"V\[1\]: .*linearly dependent"):
        ss.subspace_distances(E[:, :2], [E[:, :2], np.column_stack([E[:, 0], 2 * E[:, 0]])])
    with pytest.raises(ValueError, match="holds 2 bases"):
        ss.subspace_distances([E[:, :2]] * 2, [E[:, :2]] * 3)
    with pytest.raises(ValueError, match="NaN"):
        ss.subspace_distances(np.full((6, 2), np.nan), E[:, :2])
    with pytest.raises(TypeError, match="V must be a numeric array"):
        ss.subspace_distances(E[:, :2], [["x", "y"]] * 6)


def test_subspace_distance_matrix_equals_pairwise_loop():
    rng = np.random.default_rng(3)
    bases = {f"g{i}": rng.standard_normal((6, 3)) for i in range(7)}
    got = ss.subspace_distance_matrix(bases)
    np.testing.assert_allclose(got.to_numpy(), former_distance_matrix(bases), rtol=0, atol=TOL)
    assert np.all(np.diag(got.to_numpy()) == 0)
    # bases of different widths go pair by pair, dependent ones are named as before
    mixed = {"a": np.eye(6)[:, :2], "b": np.eye(6)[:, 1:4]}
    assert ss.subspace_distance_matrix(mixed).iat[0, 1] == pytest.approx(0.5, abs=1e-12)
    with pytest.raises(ValueError, match="linearly dependent"):
        ss.subspace_distance_matrix({"a": np.eye(6)[:, :2], "b": np.ones((6, 2))})


# ---------------------------------------------------------------- redraws keep the stream
def test_redraw_until_full_rank_replays_the_sequential_loop():
    """A toy task that fails at random: the batched replay accepts the same draws and leaves
    the generator where the sequential loop leaves it."""

    def sequential(rng, n_tasks):
        out = []
        for _ in range(n_tasks):
            for _ in range(MAX_REDRAWS):
                x = rng.integers(0, 10, size=3)
                if x[0] >= 3:  # fails 30 % of the time
                    out.append(tuple(x))
                    break
        return out

    def draw(task, rng):
        return rng.integers(0, 10, size=3)

    def evaluate(tasks, draws):
        return [tuple(x) if x[0] >= 3 else None for x in draws]

    a, b = np.random.default_rng(5), np.random.default_rng(5)
    assert redraw_until_full_rank(a, 300, draw, evaluate, str) == sequential(b, 300)
    assert a.integers(2**62) == b.integers(2**62)


def test_redraw_until_full_rank_gives_up_after_max_redraws():
    def evaluate(tasks, draws):
        return [None if t == 4 else t for t in tasks]

    with pytest.raises(ValueError, match="task 4"):
        redraw_until_full_rank(
            np.random.default_rng(0), 9, lambda t, g: g.random(), evaluate, lambda t: f"task {t}"
        )


# ---------------------------------------------------------------- nulls and bootstraps
@pytest.mark.parametrize("maker,n", [(low_rank, 60), (low_rank, 9), (with_ties, 24)])
def test_split_half_null_equals_former_loop(maker, n):
    X = maker(np.random.default_rng(n), n)
    got_rng, want_rng = np.random.default_rng(7), np.random.default_rng(7)
    got = ss.split_half_null(X, 3, n_splits=120, random_state=got_rng)
    want = former_split_half_null(X, 3, n_splits=120, rng=want_rng)
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL)
    assert got_rng.integers(2**62) == want_rng.integers(2**62)  # the same stream consumed


def test_split_half_null_with_redraws_and_half_size():
    X = with_ties(np.random.default_rng(11), 30)
    # the tied data make some halves rank deficient, so the redraw path is exercised
    halves = [X[np.random.default_rng(s).permutation(30)[:10]] for s in range(40)]
    assert not all(ss.principal_subspaces(np.stack(halves), 3)[1])
    got = ss.split_half_null(X, 3, n_splits=80, half_size=10, random_state=2)
    want = former_split_half_null(X, 3, n_splits=80, half_size=10, rng=2)
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL)


def test_split_half_null_in_small_stacks_is_unchanged(monkeypatch):
    import hca.subspace.distances as dist_module

    X = with_ties(np.random.default_rng(3), 40)
    whole = ss.split_half_null(X, 3, n_splits=50, random_state=4)
    monkeypatch.setattr(dist_module, "STACK_VALUES", 7 * 20 * 6)  # seven halves per stack
    small = ss.split_half_null(X, 3, n_splits=50, random_state=4)
    np.testing.assert_allclose(small, whole, rtol=0, atol=TOL)
    np.testing.assert_allclose(
        whole, former_split_half_null(X, 3, n_splits=50, rng=4), rtol=0, atol=TOL
    )


def test_split_half_null_ica_equals_former_loop():
    X = low_rank(np.random.default_rng(4), 40)
    got = ss.split_half_null(X, 3, n_splits=6, method="ica", random_state=1)
    want = former_split_half_null(X, 3, n_splits=6, method="ica", rng=1)
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL)


def test_split_half_null_gives_up_on_degenerate_domain():
    X = np.repeat(np.random.default_rng(0).standard_normal((2, 6)), 10, axis=0)
    with pytest.raises(ValueError, match=f"{MAX_REDRAWS} random halves"):
        ss.split_half_null(X, 3, n_splits=5)


def test_bootstrap_equals_former_loop():
    rng = np.random.default_rng(8)
    X = np.vstack([low_rank(rng, 50), one_off_plane(rng, 30), low_rank(rng, 7)])
    g = np.array(["a"] * 50 + ["b"] * 30 + ["c"] * 7, dtype=object)
    resamples = X[50:80][np.random.default_rng(0).integers(0, 30, size=(50, 30))]
    assert not all(ss.principal_subspaces(resamples, 3)[1])  # "b" and "c" are redrawn
    got = ss.bootstrap_distance_matrix(X, g, order=["a", "b", "c"], n_boot=70, random_state=3)
    samples, self_samples = former_bootstrap(X, g, ["a", "b", "c"], n_boot=70, rng=3)
    np.testing.assert_allclose(got.samples, samples, rtol=0, atol=TOL)
    np.testing.assert_allclose(got.self_samples, self_samples, rtol=0, atol=TOL)


def test_bootstrap_ica_equals_former_loop():
    rng = np.random.default_rng(9)
    X = np.vstack([low_rank(rng, 30), low_rank(rng, 20)])
    g = np.array(["a"] * 30 + ["b"] * 20, dtype=object)
    got = ss.bootstrap_distance_matrix(X, g, n_boot=3, method="ica", random_state=0)
    samples, self_samples = former_bootstrap(X, g, ["a", "b"], n_boot=3, method="ica", rng=0)
    np.testing.assert_allclose(got.samples, samples, rtol=0, atol=TOL)
    np.testing.assert_allclose(got.self_samples, self_samples, rtol=0, atol=TOL)


def test_bootstrap_gives_up_on_degenerate_domain(monkeypatch):
    import hca.subspace.distances as dist_module

    rng = np.random.default_rng(0)
    X = np.vstack([low_rank(rng, 30), low_rank(rng, 4)])
    g = np.array(["a"] * 30 + ["tiny"] * 4, dtype=object)
    # four rows: a resample keeps rank 3 only if it draws all four (9 % of resamples)
    monkeypatch.setattr(dist_module, "MAX_REDRAWS", 2)
    with pytest.raises(ValueError, match="domain 'tiny': 2 bootstrap resamples in a row"):
        ss.bootstrap_distance_matrix(X, g, n_boot=5)


# ---------------------------------------------------------------- the book's data
def test_book_data_nulls_bootstrap_and_rule_equal_former_loops(book_domains):
    X, g, order = book_domains
    streams = np.random.default_rng(0).spawn(len(order))
    nulls = ss.split_half_nulls(X, g, order=order, n_splits=60, random_state=0)
    for lab, stream in zip(order, streams):
        want = former_split_half_null(X[g == lab], 3, n_splits=60, rng=stream)
        np.testing.assert_allclose(nulls[lab], want, rtol=0, atol=TOL, err_msg=lab)

    bases = ss.group_subspaces(X, g, order=order)
    dist = ss.distance_matrix(X, g, order=order)
    np.testing.assert_allclose(dist.to_numpy(), former_distance_matrix(bases), rtol=0, atol=TOL)

    rule = ss.invariant_set_rule(X, g, order, n_splits=60, random_state=0)
    tau = ss.null_threshold({lab: nulls[lab] for lab in order}, 0.95)
    assert rule.threshold == pytest.approx(tau, abs=TOL)
    former_dist = pd.DataFrame(former_distance_matrix(bases), index=order, columns=order)
    assert list(rule.members) == ss.invariant_set(former_dist, tau)

    boot = ss.bootstrap_distance_matrix(X, g, order=order, n_boot=25, random_state=0)
    samples, self_samples = former_bootstrap(X, g, order, n_boot=25, rng=0)
    np.testing.assert_allclose(boot.samples, samples, rtol=0, atol=TOL)
    np.testing.assert_allclose(boot.self_samples, self_samples, rtol=0, atol=TOL)
    for got, want in zip(boot.samples, samples):
        frame = pd.DataFrame(want, index=order, columns=order)
        assert ss.invariant_set(pd.DataFrame(got, index=order, columns=order), tau) == (
            ss.invariant_set(frame, tau)
        )


def test_book_data_compare_groups_equals_former_loops(book_domains):
    X, g, order = book_domains
    cmp = ss.compare_groups(X, g, order=order[:5], n_splits=40, random_state=1)
    streams = np.random.default_rng(1).spawn(5)
    for lab, stream in zip(order[:5], streams):
        want = former_split_half_null(X[g == lab], 3, n_splits=40, rng=stream)
        np.testing.assert_allclose(cmp.nulls[lab], want, rtol=0, atol=TOL, err_msg=lab)
    want_pairs = ss.pair_thresholds(
        {
            lab: former_split_half_null(X[g == lab], 3, n_splits=40, rng=s)
            for lab, s in zip(order[:5], np.random.default_rng(1).spawn(5))
        }
    )
    np.testing.assert_allclose(cmp.pair_threshold.to_numpy(), want_pairs.to_numpy(), atol=TOL)


def test_invariant_set_is_the_first_candidate_set():
    """invariant_set ranks the cliques without building the candidate table: the same set."""
    rng = np.random.default_rng(12)
    labels = list("abcdefgh")
    for _ in range(100):
        A = rng.uniform(0, 0.3, (8, 8))
        A = (A + A.T) / 2
        np.fill_diagonal(A, 0)
        dist = pd.DataFrame(A, index=labels, columns=labels)
        for tau in (0.05, 0.12, 0.2):
            assert ss.invariant_set(dist, tau) == list(
                ss.candidate_sets(dist, tau).loc[0, "groups"]
            )


def test_bootstrap_sets_equal_invariant_set_of_every_sample(book_domains):
    X, g, order = book_domains
    boot = ss.bootstrap_distance_matrix(X, g, order=order, n_boot=30, random_state=2)
    nulls = ss.split_half_nulls(X, g, order=order, n_splits=30, random_state=0)
    idx = boot.point.index
    for tau in (ss.null_threshold(nulls), ss.pair_thresholds(nulls), 0.02):
        want = [
            tuple(ss.invariant_set(pd.DataFrame(m, index=idx, columns=idx), tau))
            for m in boot.samples
        ]
        assert ss.bootstrap_sets(boot, tau) == want
    with pytest.raises(TypeError, match="BootstrapDistances"):
        ss.bootstrap_sets(boot.samples, 0.1)
