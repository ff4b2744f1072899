"""Batched computations equal their one-at-a-time counterparts (issue 33): the search over many
problems (:func:`hca.estimator.search.hca_search_batch`), the ensemble of seeds
(:func:`hca.stability.seed_fits`) and the reversed-row ICA of many seeds
(:func:`hca.stability.ica_reproducible_many`), to 1e-10, ties and restarts included."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning

from hca.estimator import HCA, clone_hca
from hca.stability import ica_reproducible, ica_reproducible_many, seed_fits
from hca.synthetic import simulate_scm

ATOL = 1e-10


def assert_same_fit(a: HCA, b: HCA) -> None:
    """Two fitted HCA models agree to ATOL: ICA, MIC, orders, signs, weights, diagnostics."""
    assert a.domains_ == b.domains_ and a.random_state == b.random_state
    for label in a.domains_:
        np.testing.assert_allclose(a.ica_[label].unmixing, b.ica_[label].unmixing, atol=ATOL, rtol=0)
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
    assert (ra.n_evaluated, ra.n_nodes, ra.certified) == (rb.n_evaluated, rb.n_nodes, rb.certified)


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
