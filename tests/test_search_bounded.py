"""The sequential search at any number of domains: bounded memory, honest certification.

Issue 20: ``search="sequential"`` used to materialise every first-position choice of all
domains (``d0^K`` rows), outside ``max_nodes``; exhaustive search ran every ICA before
refusing a too-large problem with an error that printed ``(d0!)^K`` in full.
"""

from __future__ import annotations

import itertools
import time
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hca.estimator import HCA, hca_search, mic_by_subset
from hca.estimator.search import (
    MAX_EXHAUSTIVE_ORDERS,
    UncertifiedSearchWarning,
    check_search_size,
    evaluate_order,
)
from hca.synthetic import simulate_scm


def scrambled(n_domains, d=3, alpha=0.0, noise=0.0, seed=0, n_benchmarks=None):
    """Population unmixing matrices with rows shuffled and flipped (plus noise), and the
    row order that undoes the shuffle."""
    sim = simulate_scm(n_domains=n_domains, n_per_domain=3, n_components=d,
                       n_benchmarks=n_benchmarks or d + 3, alpha=alpha, random_state=seed)
    rng = np.random.default_rng(seed)
    Ms, truth = [], []
    for M in sim.unmixing.values():
        perm = rng.permutation(d)
        E = noise * np.sqrt(np.mean(M**2)) * rng.normal(size=M.shape)
        Ms.append(rng.choice([-1.0, 1.0], d)[:, None] * M[perm] + E)
        truth.append(np.argsort(perm))
    return Ms, truth


def sequential(Ms, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncertifiedSearchWarning)
        return hca_search(Ms, search="sequential", **kwargs)


# --------------------------------------------------------------------------- many domains
@pytest.mark.slow  # more than ~5 s
def test_fifty_domains_bounded_memory_and_not_certified():
    Ms, truth = scrambled(50, alpha=0.1, noise=0.05, seed=1)
    tracemalloc.start()
    with pytest.warns(UncertifiedSearchWarning, match="without certifying") as record:
        res = hca_search(Ms, search="sequential", max_nodes=100_000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 400e6, f"peak {peak / 1e6:.0f} MB"
    assert not res.certified and not res.enumerated
    assert "explored from a few starting directions" in str(record[0].message)
    assert len(str(record[0].message).splitlines()) == 1
    # the answer is at least as good as the order the data were generated with
    assert res.mic <= evaluate_order(Ms, truth).mic + 1e-9


def test_max_nodes_bounds_every_level():
    Ms, _ = scrambled(30, alpha=0.1, noise=0.05, seed=2)
    for budget in (50, 2_000, 20_000):
        res = sequential(Ms, max_nodes=budget, beam_width=8)
        d = Ms[0].shape[0]
        assert res.n_nodes <= d * budget  # no level evaluates more than max_nodes prefixes


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), K=st.integers(14, 40))
@pytest.mark.slow  # more than ~5 s
def test_exact_scm_identified_beyond_enumeration(seed, K):
    """Levels too large to enumerate: an exact SCM is still recovered (MIC 0)."""
    Ms, truth = scrambled(K, seed=seed)
    res = sequential(Ms)
    assert res.mic < 1e-8
    assert all(np.array_equal(p, t) for p, t in zip(res.permutations, truth))


@pytest.mark.slow  # more than ~5 s
def test_small_budget_agrees_with_optimum_often():
    """Forced to explore the first level by alternating search, the answer stays close to
    the certified optimum (found by enumeration with a large budget)."""
    gaps = []
    for seed in range(6):
        Ms, _ = scrambled(8, alpha=0.2, noise=0.1, seed=seed)
        opt = sequential(Ms, max_nodes=10**7)
        heu = sequential(Ms, max_nodes=3_000)
        assert opt.certified and opt.enumerated and not heu.enumerated
        gaps.append(heu.mic - opt.mic)
    gaps = np.array(gaps)
    assert np.all(gaps >= -1e-12)
    assert np.mean(gaps < 1e-9) >= 0.5 and gaps.max() < 0.05


@pytest.mark.slow  # more than ~5 s
def test_enumerable_problems_unchanged():
    """Where every level fits in max_nodes, the search is the plain certified beam search:
    same order and MIC as exhaustive, everything enumerated."""
    for seed, K in itertools.product(range(3), (3, 6)):
        Ms, _ = scrambled(K, alpha=0.3, noise=0.1, seed=seed)
        ex, seq = hca_search(Ms), sequential(Ms, beam_width=2)
        assert seq.enumerated and seq.certified
        assert seq.mic == pytest.approx(ex.mic, abs=1e-12)
        assert all(np.array_equal(p, q) for p, q in zip(ex.permutations, seq.permutations))


def test_heuristic_residual_shared():
    Ms, truth = scrambled(20, seed=5)
    res = sequential(Ms, residual="shared")
    assert res.mic < 1e-8 and not res.enumerated


# --------------------------------------------------------------------------- exhaustive guard
def test_exhaustive_refusal_is_one_short_line():
    with pytest.raises(ValueError) as err:
        check_search_size("exhaustive", 1000, 6)
    msg = str(err.value)
    assert "(6!)^1000 ~ 10^2857" in msg and "sequential" in msg
    assert len(msg) < 160 and "\n" not in msg
    check_search_size("exhaustive", 8, 3)  # (3!)^8 = 1,679,616 orders: accepted
    check_search_size("sequential", 1000, 6)
    with pytest.raises(ValueError, match=r"\(3!\)\^9 = 10077696 row orders exceeds"):
        check_search_size("exhaustive", 9, 3)
    assert 6**8 <= MAX_EXHAUSTIVE_ORDERS < 6**9


def test_exhaustive_refused_before_any_ica(monkeypatch):
    import hca.estimator.model as model_module

    def no_ica(*args, **kwargs):
        raise AssertionError("ICA was run")

    monkeypatch.setattr(model_module, "fit_icas", no_ica)
    sim = simulate_scm(n_domains=40, n_per_domain=8, random_state=0)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"\(3!\)\^40 ~ 10\^31 row orders exceeds"):
        HCA(search="exhaustive").fit(sim.X, sim.domains)
    with pytest.raises(ValueError, match="row orders exceeds"):
        mic_by_subset(HCA(), sim.X, sim.domains)
    assert time.perf_counter() - start < 5


def test_certified_attribute_on_the_estimator():
    sim = simulate_scm(n_domains=4, n_per_domain=300, random_state=0)
    model = HCA(search="sequential").fit(sim.X, sim.domains)
    assert model.certified_ is True and model.search_result_.enumerated
    Ms, _ = scrambled(16, alpha=0.2, noise=0.1, seed=0)
    with pytest.warns(UncertifiedSearchWarning):
        assert not hca_search(Ms, search="sequential", max_nodes=1_000).certified
