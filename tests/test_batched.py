"""Batched computations equal their one-at-a-time counterparts (issue 33): the search over many
problems (:func:`hca.estimator.search.hca_search_batch`), the ensemble of seeds
(:func:`hca.stability.seed_fits`) and the reversed-row ICA of many seeds
(:func:`hca.stability.ica_reproducible_many`), to 1e-10, ties and restarts included."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import special_ortho_group
from sklearn.exceptions import ConvergenceWarning

from hca.estimator import HCA, clone_hca, domain_ica, hca_search, mic_by_subset
from hca.estimator.search import hca_search_batch
from hca.estimator.search_tree import PRUNE_MARGIN, BatchTree
from hca.stability import (
    ica_reproducible,
    ica_reproducible_many,
    rotation_null,
    seed_fits,
    subset_stability,
)
from hca.synthetic import simulate_scm

ATOL = 1e-10


def assert_same_fit(a: HCA, b: HCA) -> None:
    """Two fitted HCA models agree to ATOL: ICA, MIC, orders, signs, weights, diagnostics."""
    assert a.domains_ == b.domains_ and a.random_state == b.random_state
    for label in a.domains_:
        np.testing.assert_allclose(
            a.ica_[label].unmixing, b.ica_[label].unmixing, atol=ATOL, rtol=0
        )
        assert a.ica_[label].n_iter == b.ica_[label].n_iter
        assert a.ica_[label].restart == b.ica_[label].restart
        assert a.permutations_[label] == b.permutations_[label]
        np.testing.assert_allclose(a.weights_[label], b.weights_[label], atol=ATOL, rtol=0)
        assert a.inexactness_[label] == pytest.approx(b.inexactness_[label], abs=ATOL)
    assert a.mic_ == pytest.approx(b.mic_, abs=ATOL)
    np.testing.assert_allclose(a.unmixing_, b.unmixing_, atol=ATOL, rtol=0)
    ra, rb = a.search_result_, b.search_result_
    for sa, sb in zip(ra.signs, rb.signs):
        np.testing.assert_array_equal(sa, sb)
    np.testing.assert_allclose(ra.rank1_error, rb.rank1_error, atol=ATOL, rtol=0)
    assert (ra.n_evaluated, ra.n_nodes, ra.n_pruned, ra.certified) == (
        rb.n_evaluated,
        rb.n_nodes,
        rb.n_pruned,
        rb.certified,
    )


def per_seed(est: HCA, X, domains, seeds) -> list[HCA]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return [clone_hca(est, random_state=s).fit(X, domains) for s in seeds]


@pytest.fixture(scope="module")
def sim():
    s = simulate_scm(n_domains=4, n_per_domain=150, alpha=0.05, random_state=11)
    return pd.DataFrame(s.X, columns=list(s.feature_names)), s.domains


@pytest.mark.parametrize(
    "params",
    [{}, {"n_restarts": 3}, {"residual": "shared"}, {"search": "sequential", "beam_width": 2}],
)
def test_seed_fits_equal_per_seed_fits(sim, params):
    X, dom = sim
    est = HCA(**params)
    seeds = [3, 0, 7, 3]  # unsorted, with a duplicate
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fits = seed_fits(est, X, dom, seeds)
    assert len(fits) == 4 and len({id(f) for f in fits}) == 4
    for fit, ref in zip(fits, per_seed(est, X, dom, seeds)):
        assert_same_fit(fit, ref)
    assert est.get_params() == HCA(**params).get_params()  # not fitted, not changed
    assert not hasattr(est, "unmixing_")


def test_ica_reproducible_many_equals_one_at_a_time(sim):
    X, dom = sim
    fits = seed_fits(HCA(n_restarts=2), X, dom, range(5))
    many = ica_reproducible_many(fits, X, dom)
    assert many == [ica_reproducible(f, X, dom) for f in fits]
    assert all(isinstance(v, bool) for flags in many for v in flags.values())
    with pytest.raises(ValueError, match="models is empty"):
        ica_reproducible_many([], X, dom)


# --------------------------------------------------------------------------- the book's data
@pytest.fixture(scope="module", params=["careful", "authors"])
def book(request):
    from hca.paper.replication import estimator, main_data

    X, labels = main_data(request.param)
    return estimator(request.param), X, labels


def test_seed_fits_on_the_books_four_domains(book):
    est, X, labels = book
    seeds = [0, 5, 17]
    fits = seed_fits(est, X, labels, seeds)
    for fit, ref in zip(fits, per_seed(est, X, labels, seeds)):
        assert_same_fit(fit, ref)
    # with restarts (the careful setup's option), the residual of the other setup
    other = "shared" if est.residual == "domain" else "domain"
    est2 = clone_hca(est, n_restarts=3, residual=other)
    for fit, ref in zip(seed_fits(est2, X, labels, [2, 9]), per_seed(est2, X, labels, [2, 9])):
        assert_same_fit(fit, ref)
    flags = ica_reproducible_many(fits, X, labels)
    assert flags == [ica_reproducible(f, X, labels) for f in fits]


def _assert_same_results(batch, single):
    for a, b in zip(batch, single, strict=True):
        assert a.domains == b.domains and a.mic == b.mic  # bitwise: same arithmetic
        for x, y in zip(a.permutations, b.permutations):
            np.testing.assert_array_equal(x, y)
        for x, y in zip(a.signs, b.signs):
            np.testing.assert_array_equal(x, y)
        for x, y in zip(a.weights, b.weights):
            np.testing.assert_allclose(x, y, atol=ATOL, rtol=0)
        np.testing.assert_allclose(a.alphas, b.alphas, atol=ATOL, rtol=0)
        assert (a.n_evaluated, a.n_nodes, a.certified, a.beam_width) == (
            b.n_evaluated,
            b.n_nodes,
            b.certified,
            b.beam_width,
        )


@pytest.mark.parametrize("options", [{}, {"residual": "shared"}, {"search": "sequential"}])
def test_search_batch_equals_one_search_at_a_time(book, options):
    """Subsets of several sizes (shapes), seeds, duplicated problems and exact ties (a domain
    repeated, all domains equal, rows reordered) in one batch."""
    _, X, labels = book
    problems = []
    for seed in (0, 3):
        icas = domain_ica(X, labels, 3, random_state=seed)
        names = sorted(icas)
        for size in (2, 3, 4):
            for sub in itertools.combinations(names, size):
                problems.append({k: icas[k].unmixing for k in sub})
    M = [icas[k].unmixing for k in names]
    problems += [
        [M[0], M[0], M[1]],  # a repeated domain: tied orders
        [M[1]] * 4,  # all domains equal
        [M[2], M[2][::-1], M[3]],  # the same rows in another order
        problems[0],  # the same problem twice
    ]
    batch = hca_search_batch(problems, **options)
    _assert_same_results(batch, [hca_search(p, **options) for p in problems])
    # a problem's result does not depend on its batch
    _assert_same_results(hca_search_batch(problems[::-1], **options)[::-1], batch)


def test_search_batch_errors_name_the_problem():
    good = [np.eye(2, 3), np.eye(2, 3)[::-1]]
    assert hca_search_batch([]) == []
    with pytest.raises(ValueError, match=r"problems\[1\]: unmixing matrix of domain 'b'"):
        hca_search_batch([good, {"a": np.eye(2, 3), "b": np.ones((2, 3))}])
    with pytest.raises(ValueError, match=r"problems\[0\]: HCA needs unmixing matrices"):
        hca_search_batch([[np.eye(2, 3)]])
    with pytest.raises(ValueError, match="exceeds the limit"):
        hca_search_batch([good, [np.eye(4, 5)] * 6])
    with pytest.raises(ValueError, match="unknown search"):
        hca_search_batch([good], search="greedy")


def test_batched_sweeps_equal_their_searches(sim):
    """mic_by_subset, subset_stability and rotation_null run their searches in one batch."""
    X, dom = sim
    table = mic_by_subset(HCA(n_restarts=2), X, dom, min_size=2)
    icas = domain_ica(X, dom, 3, n_restarts=2)
    for _, row in table.iterrows():
        ref = hca_search({k: icas[k].unmixing for k in row["subset"]})
        assert row["mic"] == ref.mic
    sweeps = subset_stability(HCA(), X, dom, seeds=[4, 1])
    for rep, seed in enumerate([4, 1]):
        ref = mic_by_subset(HCA(random_state=seed), X, dom)
        np.testing.assert_array_equal(sweeps[sweeps["rep"] == rep]["mic"], ref["mic"])
    model = HCA().fit(X, dom)
    null = rotation_null(model, n_draws=3, random_state=2)
    rng = np.random.default_rng(2)
    for value in null:
        rotated = {
            k: special_ortho_group.rvs(3, random_state=rng) @ model.ica_[k].unmixing
            for k in model.domains_
        }
        assert value == hca_search(rotated).mic
    assert null.shape == (3,)


def test_fit_from_ica_checks_its_input_before_fitting(sim):
    from hca.estimator import DomainICA
    from hca.estimator.model import fit_many_from_ica

    X, dom = sim
    icas = domain_ica(X, dom, 3, random_state=4)
    model = HCA(random_state=4).fit_from_ica(X, dom, icas)
    assert_same_fit(model, HCA(random_state=4).fit(X, dom))
    bad = dict(icas)
    bad.pop("D1")
    fresh = HCA()
    with pytest.raises(ValueError, match=r"missing \['D1'\]"):
        fresh.fit_from_ica(X, dom, bad)
    assert not hasattr(fresh, "domains_")  # nothing set
    wrong = {**icas, "D2": DomainICA("D2", np.eye(2, 6), np.zeros(6), True, 1, 10)}
    with pytest.raises(ValueError, match=r"icas\['D2'\]: unmixing of shape \(2, 6\)"):
        HCA().fit_from_ica(X, dom, wrong)
    a, b = HCA(), HCA()
    with pytest.raises(ValueError, match="distinct instances"):
        fit_many_from_ica([a, a], X, dom, [icas, icas])
    with pytest.raises(ValueError, match=r"icas\['D2'\]"):
        fit_many_from_ica([a, b], X, dom, [icas, wrong])
    assert not hasattr(a, "domains_")  # the first was not fitted either


def test_resample_fits_equal_one_fit_per_resample(sim):
    """resample_fits (FastICA of every resample in one stack, searches in one batch) equals a
    fit per resample; bootstrap_stability reads it."""
    from hca.stability import bootstrap_samples, bootstrap_stability, resample_fits

    X, domains = sim
    est = HCA(n_restarts=2, random_state=3)
    samples = bootstrap_samples(X, domains, 4, random_state=5)
    fits = resample_fits(est, samples, 3)
    for model, (Xb, lb) in zip(fits, samples):
        assert_same_fit(model, per_seed(est, Xb, lb, [3])[0])
    table = bootstrap_stability(est, X, domains, n_boot=4, random_state=5).records
    np.testing.assert_allclose(table["mic"], [m.mic_ for m in fits], atol=ATOL, rtol=0)
    with pytest.raises(ValueError, match="different domains"):
        keep = domains != "D1"
        resample_fits(est, [samples[0], (X[keep], domains[keep])], 3)


def test_resample_fits_with_a_seed_per_sample_equal_one_fit_each():
    """resample_fits with one seed per sample (simulations with their own seed, every domain
    and sample in one FastICA stack) equals one HCA.fit per sample bit for bit, exhaustive
    and sequential; the recovery study built on it gives the former per-fit table."""
    from hca.stability import order_recovered, recovery_study, resample_fits

    for K, search in ((3, "exhaustive"), (6, "sequential")):
        sims = [simulate_scm(n_domains=K, n_per_domain=60, random_state=40 + r) for r in range(5)]
        samples = [(s.X, s.domains) for s in sims]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits = resample_fits(HCA(search=search, n_restarts=2), samples, [7, 0, 3, 9, 1])
            one = [
                HCA(search=search, n_restarts=2, random_state=r).fit(*xy)
                for r, xy in zip([7, 0, 3, 9, 1], samples)
            ]
        for a, b in zip(fits, one):
            assert a.random_state == b.random_state
            assert np.array_equal(a.unmixing_, b.unmixing_) and a.mic_ == b.mic_
            for label in a.domains_:
                assert np.array_equal(a.ica_[label].unmixing, b.ica_[label].unmixing)
                assert a.ica_[label].restart == b.ica_[label].restart
    with pytest.raises(ValueError, match="2 seeds for 5 samples"):
        resample_fits(HCA(), samples, [1, 2])
    table = recovery_study(n_domains=(3,), n_per_domain=(60, 250), n_reps=6, n_jobs=2)
    former = []  # the former study: one simulation and one HCA.fit per replication
    for n in (60, 250):
        hits = 0
        for rep in range(6):
            seed = np.random.SeedSequence([0, 3, n, rep]).generate_state(1)[0]
            sim = simulate_scm(n_domains=3, n_per_domain=n, random_state=int(seed))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = HCA(3, search="exhaustive", random_state=rep).fit(sim.X, sim.domains)
            hits += order_recovered(model, sim.G)
        former.append(hits)
    assert table["recovered"].tolist() == former


def test_mic_by_subset_many_equals_one_sweep_per_seed_and_data_set(sim):
    from hca.estimator import mic_by_subset_many
    from hca.stability import bootstrap_samples

    X, domains = sim
    est = HCA(search="sequential")
    data = [(X, domains), *bootstrap_samples(X, domains, 2, random_state=1)]
    tables = mic_by_subset_many(est, data, [0, 7], align=[("D1", "D2", "D3")])
    assert [len(t) for t in tables] == [2, 2, 2]
    for (Xg, dg), per_seed_tables in zip(data, tables):
        for seed, table in zip([0, 7], per_seed_tables):
            one = mic_by_subset(
                clone_hca(est, random_state=seed), Xg, dg, align=[("D1", "D2", "D3")]
            )
            pd.testing.assert_frame_equal(table, one, check_exact=False, atol=ATOL, rtol=0)
    with pytest.raises(ValueError, match="different candidate domains"):
        keep = domains != "D4"
        mic_by_subset_many(est, [(X, domains), (X[keep], domains[keep])], [0])


# --------------------------------------------------------------------------- ICA shared by analyses
def _same_ica_bits(a, b) -> None:
    """Two per-domain ICA fits equal to the last bit."""
    assert list(a) == list(b)
    for label in a:
        np.testing.assert_array_equal(a[label].unmixing, b[label].unmixing)
        np.testing.assert_array_equal(a[label].mean, b[label].mean)
        assert (a[label].n_iter, a[label].converged, a[label].restart) == (
            b[label].n_iter,
            b[label].converged,
            b[label].restart,
        )


def test_domain_icas_equal_each_analysis_alone(sim):
    """One batch for the fits, the reversed rows and a larger table holding the same domains
    gives, bit for bit, what each analysis computes alone; results passed on give the same
    fits, tables, sweeps and reproducibility flags."""
    from hca.estimator import mic_by_subset_many
    from hca.stability import domain_icas, reversed_rows

    X, domains = sim
    keep = domains != "D4"
    X3, d3 = X[keep], domains[keep]
    est = HCA(search="sequential", n_restarts=2)
    seeds = [5, 0, 5, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        icas = domain_icas(est, [(X3, d3), reversed_rows(X3, d3), (X, domains)], seeds)
        assert [len(per_seed) for per_seed in icas] == [4, 4, 4]
        assert [sorted(icas[g][0]) for g in range(3)] == [["D1", "D2", "D3"]] * 2 + [
            ["D1", "D2", "D3", "D4"]
        ]
        alone = seed_fits(est, X3, d3, seeds)
        shared = seed_fits(est, X3, d3, seeds, icas=icas[0])
        for a, b in zip(shared, alone):
            _same_ica_bits(a.ica_, b.ica_)
            assert_same_fit(a, b)
        for g in (0, 2):  # the domains held by both tables: fitted once, the same bits
            for i in range(len(seeds)):
                _same_ica_bits(
                    {k: icas[g][i][k] for k in ("D1", "D2", "D3")},
                    {k: alone[i].ica_[k] for k in ("D1", "D2", "D3")},
                )
        assert icas[0][0]["D1"].unmixing is not icas[2][0]["D1"].unmixing  # own arrays
        assert ica_reproducible_many(shared, X3, d3, again=icas[1]) == ica_reproducible_many(
            alone, X3, d3
        )
        one_by_one = mic_by_subset_many(est, [(X, domains)], seeds)[0]
        passed = mic_by_subset_many(est, [(X, domains)], seeds, icas=[icas[2]])[0]
        for t1, t2 in zip(passed, one_by_one):
            pd.testing.assert_frame_equal(t1, t2, check_exact=True)
        pd.testing.assert_frame_equal(
            subset_stability(est, X, domains, seeds=seeds, icas=icas[2]),
            subset_stability(est, X, domains, seeds=seeds),
            check_exact=True,
        )


def test_shared_ica_is_checked(sim):
    from hca.estimator import mic_by_subset_many
    from hca.stability import domain_icas

    X, domains = sim
    est = HCA()
    icas = domain_icas(est, [(X, domains)], [0, 1])[0]
    with pytest.raises(ValueError, match="holds 2 ICA fits for 3 seeds"):
        seed_fits(est, X, domains, [0, 1, 2], icas=icas)
    keep = domains != "D4"
    with pytest.raises(ValueError, match="an ICA fit of domains"):
        seed_fits(est, X[keep], domains[keep], [0, 1], icas=icas)
    fits = seed_fits(est, X, domains, [0, 1], icas=icas)
    with pytest.raises(ValueError, match="again holds 2 ICA fits for 1 seeds"):
        ica_reproducible_many(fits[:1], X, domains, again=icas)
    with pytest.raises(ValueError, match="one ICA fit per data set and seed"):
        mic_by_subset_many(est, [(X, domains)], [0, 1, 2], icas=[icas])
    with pytest.raises(ValueError, match="n_boot=0"):
        subset_stability(est, X, domains, seeds=[0, 1], n_boot=2, icas=icas)
    with pytest.raises(ValueError, match="orders"):
        from hca.estimator.ica import fit_icas_many

        fit_icas_many([(X.to_numpy(), np.asarray(domains))], ["D1"], 3, [0], orders=[["D9"]])


def test_seed_stability_reads_fits_passed_in(sim):
    """``seed_stability(..., fits=...)`` with the fits of the same seeds computed before (from
    a shared ICA batch) gives, bit for bit, the records it computes itself; fits of other seeds
    are refused."""
    from hca.stability import domain_icas, seed_stability

    X, domains = sim
    est = HCA(search="sequential", n_restarts=2)
    seeds = [3, 0, 3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        icas = domain_icas(est, [(X, domains)], seeds)[0]
        fits = seed_fits(est, X, domains, seeds, icas=icas)
        alone = seed_stability(est, X, domains, seeds=seeds)
        passed = seed_stability(est, X, domains, seeds=seeds, fits=fits)
    pd.testing.assert_frame_equal(passed.records, alone.records, check_exact=True)
    assert passed.kind == alone.kind == "seed"
    with pytest.raises(ValueError, match=r"fits has the seeds \[3, 0, 3\], expected \[3, 0\]"):
        seed_stability(est, X, domains, seeds=[3, 0], fits=fits)


def scm_problems(n: int, K: int, d: int, q: int, noise: float, seed: int) -> np.ndarray:
    """``n`` search problems in reduced coordinates (n, K, d, q): rows of lower-triangular
    mixtures of one shared ``H`` plus noise, shuffled and sign-flipped per domain."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, K, d, q))
    for i in range(n):
        H = np.linalg.qr(rng.standard_normal((q, d)))[0].T
        for k in range(K):
            B = np.tril(0.5 * rng.standard_normal((d, d)), -1) + np.eye(d)
            M = B @ H + noise * rng.standard_normal((d, q))
            out[i, k] = M[rng.permutation(d)] * rng.choice([-1.0, 1.0], size=(d, 1))
    return out


@pytest.mark.parametrize("residual", ["domain", "shared"])
@pytest.mark.parametrize("noise", [0.0, 0.05, 0.3, 2.0])
def test_pruned_exhaustive_search_equals_visiting_every_order(residual, noise):
    """The branch and bound keeps the order that visiting every order keeps (the first with
    the smallest MIC, exact ties included when ``noise=0``), and its MIC to rounding (a
    problem's products run over fewer prefixes, which can move the last bit); what it leaves
    out is counted."""
    M = scm_problems(12, 4, 3, 6, noise, seed=int(noise * 100))
    full = BatchTree(M, residual)
    full.run(full.roots(), 0)
    pruned = BatchTree(M, residual)
    pruned.greedy_bounds()
    pruned.run(pruned.roots(), 0)
    np.testing.assert_array_equal(pruned.best_rows, full.best_rows)
    np.testing.assert_allclose(pruned.best_mic, full.best_mic, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(full.n_leaves, 6**4)
    np.testing.assert_array_equal(full.n_pruned, 0)
    np.testing.assert_array_equal(pruned.n_leaves + pruned.n_pruned, 6**4)
    assert pruned.n_leaves.sum() < full.n_leaves.sum()  # some orders were ruled out
    assert np.all(pruned.best_mic <= pruned.prune_above + PRUNE_MARGIN)
