"""scikit-learn conformance of the HCA estimator (issue 28): the common checks, the factor
names, and ``n_jobs`` for the per-domain ICA."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from hca import HCA
from hca.estimator.model import EXPECTED_FAILED_CHECKS
from hca.stability import rotation_null, seed_fits
from hca.synthetic import simulate_scm


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        yield


@parametrize_with_checks([HCA(n_components=1)],
                         expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS,
                         xfail_strict=True)
def test_sklearn_common_checks(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def sim():
    return simulate_scm(n_domains=4, n_per_domain=200, n_benchmarks=5, random_state=2)


def test_feature_names_out_and_pandas_output(sim):
    X = pd.DataFrame(sim.X, columns=list(sim.feature_names))
    model = HCA().fit(X, sim.domains)
    assert list(model.get_feature_names_out()) == ["z1", "z2", "z3"]
    Z = model.set_output(transform="pandas").transform(X)
    assert list(Z.columns) == ["z1", "z2", "z3"]
    with pytest.raises(ValueError, match="not the fitted benchmarks"):
        model.get_feature_names_out(["a", "b"])
    with pytest.raises(ValueError, match="X has 4 features, but HCA is expecting 5"):
        HCA().fit(sim.X, sim.domains).transform(sim.X[:, :4])


def test_n_jobs_gives_identical_fits(sim):
    ref = HCA(random_state=3).fit(sim.X, sim.domains)
    for n_jobs in (2, -1):
        other = HCA(random_state=3, n_jobs=n_jobs).fit(sim.X, sim.domains)
        np.testing.assert_array_equal(other.unmixing_, ref.unmixing_)
        assert other.mic_ == ref.mic_ and other.permutations_ == ref.permutations_
        for dom in ref.domains_:
            np.testing.assert_array_equal(other.ica_[dom].unmixing, ref.ica_[dom].unmixing)


def test_n_jobs_reemits_convergence_warnings(sim):
    with pytest.warns(ConvergenceWarning, match="did not converge for domain"):
        HCA(max_iter=1, n_jobs=2).fit(sim.X, sim.domains)


def test_progress_is_reported_per_domain_and_search_level(sim):
    events = []

    def record(stage, done, total):
        events.append((stage, done, total))

    est = HCA(search="sequential")
    est.fit(sim.X, sim.domains, progress=record)
    assert [e for e in events if e[0] == "ICA"] == [("ICA", i, 4) for i in range(1, 5)]
    levels = [e for e in events if e[0].startswith("search")]
    assert levels and levels[-1][1:] == (3, 3)
    assert "progress" not in est.get_params()  # a fit argument, not a parameter
    events.clear()
    HCA().fit(sim.X, sim.domains, progress=record)
    assert events[-1] == ("search", 6 ** 4, 6 ** 4)
    events.clear()
    HCA().fit(sim.X, sim.domains)  # no callback: nothing is reported, nothing is kept
    assert events == []


def test_progress_of_the_batched_fits_and_the_rotation_reference(sim):
    events = []

    def record(stage, done, total):
        events.append((stage, done, total))

    fits = seed_fits(HCA(), sim.X, sim.domains, [0, 1], progress=record)
    assert [e for e in events if e[0] == "ICA"] == [("ICA", i, 4) for i in range(1, 5)]
    assert events[-1] == ("search", 2 * 6 ** 4, 2 * 6 ** 4)  # both seeds in one batch
    events.clear()
    null = rotation_null(fits[0], 3, progress=record)
    assert len(null) == 3 and events[-1] == ("search", 3 * 6 ** 4, 3 * 6 ** 4)
