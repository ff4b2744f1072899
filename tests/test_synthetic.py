"""Tests for hca.synthetic (simulated exact and alpha-inexact linear SCMs)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from hca.synthetic import (
    SOURCE_DISTRIBUTIONS,
    make_inexact_mixing,
    sample_sources,
    simulate_scm,
)


@pytest.fixture(scope="module")
def exact():
    return simulate_scm(n_domains=3, n_per_domain=[400, 500, 600], random_state=7)


@pytest.fixture(scope="module")
def inexact():
    return simulate_scm(n_domains=3, n_per_domain=300, alpha=[0.0, 0.1, 0.25], random_state=8)


def test_shapes_and_labels(exact):
    assert exact.X.shape == (1500, 6)
    assert exact.Z.shape == exact.sources.shape == (1500, 3)
    assert exact.G.shape == (6, 3) and exact.H.shape == (3, 6)
    assert exact.domain_labels == ["D1", "D2", "D3"]
    counts = pd.Series(exact.domains).value_counts()
    assert counts.to_dict() == {"D3": 600, "D2": 500, "D1": 400}
    assert exact.feature_names == ("b1", "b2", "b3", "b4", "b5", "b6")


def test_seeded_and_deterministic():
    a = simulate_scm(n_per_domain=50, random_state=3)
    b = simulate_scm(n_per_domain=50, random_state=3)
    c = simulate_scm(n_per_domain=50, random_state=4)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.allclose(a.X, c.X)


def test_structural_equations_hold(exact):
    np.testing.assert_allclose(exact.H @ exact.G, np.eye(3), atol=1e-10)
    np.testing.assert_allclose(exact.X, exact.Z @ exact.G.T + exact.offset, atol=1e-10)
    for label in exact.domain_labels:
        rows = exact.domains == label
        A, omega = exact.A[label], exact.omega_sqrt[label]
        Z, eps = exact.Z[rows], exact.sources[rows]
        np.testing.assert_allclose(Z, Z @ A.T + eps * omega, atol=1e-10)
        np.testing.assert_array_equal(A, np.tril(A, -1))
        off = np.abs(A[np.tril_indices(3, -1)])
        assert np.all((off >= 0.25) & (off <= 1.0))
        assert np.all((omega >= 0.7) & (omega <= 1.5))


def test_population_unmixing_recovers_sources(inexact):
    for label, M in inexact.unmixing.items():
        rows = inexact.domains == label
        sources = (inexact.X[rows] - inexact.offset) @ M.T
        np.testing.assert_allclose(sources, inexact.sources[rows], atol=1e-8)
        B = inexact.B[label]
        np.testing.assert_array_equal(B, np.tril(B))
        np.testing.assert_allclose(np.diag(B), 1 / inexact.omega_sqrt[label])


def test_sources_unit_variance_and_distinct(exact):
    for label in exact.domain_labels:
        eps = exact.sources[exact.domains == label]
        np.testing.assert_allclose(eps.mean(axis=0), 0, atol=0.15)
        np.testing.assert_allclose(eps.std(axis=0), 1, atol=0.15)
        assert len(set(exact.distributions[label])) == 3


@pytest.mark.parametrize("name", SOURCE_DISTRIBUTIONS)
def test_sample_sources_moments_and_non_gaussian(name):
    x = sample_sources(name, 200_000, np.random.default_rng(0))
    assert abs(x.mean()) < 0.02
    assert abs(x.var() - 1) < 0.05
    # non-Gaussian: skewness or excess kurtosis clearly away from 0
    assert max(abs(stats.skew(x)), abs(stats.kurtosis(x))) > 0.5


def test_sample_sources_unknown_name():
    with pytest.raises(ValueError, match="unknown source distribution 'cauchy'"):
        sample_sources("cauchy", 10, np.random.default_rng(0))


@pytest.mark.parametrize("alpha", [0.0, 0.05, 0.3, 0.9])
def test_inexact_mixing_has_exact_coefficient(alpha):
    U = make_inexact_mixing(4, alpha, np.random.default_rng(1))
    np.testing.assert_allclose(np.linalg.norm(U, axis=1), 1.0, atol=1e-12)
    off = (np.sum(U**2) - np.sum(np.diag(U) ** 2)) / 4
    assert off == pytest.approx(alpha, abs=1e-12)
    if alpha == 0:
        np.testing.assert_array_equal(U, np.eye(4))


def test_inexact_mixing_rejects_bad_alpha():
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\)"):
        make_inexact_mixing(3, 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_components == 1"):
        make_inexact_mixing(1, 0.1, np.random.default_rng(0))


def test_per_domain_alpha(inexact):
    assert inexact.alpha == pytest.approx({"D1": 0.0, "D2": 0.1, "D3": 0.25})
    assert inexact.mic == pytest.approx(0.25)
    np.testing.assert_array_equal(inexact.U["D1"], np.eye(3))


def test_noise_and_offset():
    clean = simulate_scm(n_per_domain=500, offset=50.0, random_state=2)
    noisy = simulate_scm(n_per_domain=500, offset=50.0, noise=0.5, random_state=2)
    np.testing.assert_allclose(clean.X.mean(axis=0), 50.0, atol=0.5)
    resid = noisy.X - noisy.Z @ noisy.G.T - noisy.offset
    assert resid.std() == pytest.approx(0.5, rel=0.05)


def test_frame_and_summary(exact):
    df = exact.frame()
    assert list(df.columns) == [*exact.feature_names, "domain"]
    assert len(df) == 1500
    text = exact.summary()
    assert "3 latent factors" in text and "D2: 500 models" in text


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_components=7, n_benchmarks=6), r"n_components \(7\) must not exceed n_benchmarks"),
        (dict(alpha=[0.1, 0.2]), "alpha has 2 entries but there are 4 domains"),
        (dict(alpha=1.5), r"alpha must be in \[0, 1\)"),
        (dict(noise=-1.0), "noise must be >= 0"),
        (dict(distributions=["uniform", "normal"]), "unknown source distribution"),
        (dict(weight_range=(2.0, 1.0)), "weight_range must be"),
        (dict(n_domains=0), "n_domains must be >= 1"),
    ],
)
def test_invalid_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate_scm(n_per_domain=20, **kwargs)
