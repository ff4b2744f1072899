"""The second simulator, built apart from ``hca.synthetic`` (issue 49)."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import hca.synthetic_alt as alt
from hca import HCA
from hca.stability import order_recovered
from hca.synthetic_alt import ALT_DISTRIBUTIONS, simulate_leaderboard, standard_source


@pytest.mark.parametrize("law", ALT_DISTRIBUTIONS)
def test_every_source_law_is_standardised_and_not_gaussian(law):
    x = standard_source(law, 400_000, np.random.default_rng(0))
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1) < 0.01
    z = (x - x.mean()) / x.std()
    skew, kurt = np.mean(z**3), np.mean(z**4) - 3
    assert abs(skew) > 0.3 or abs(kurt) > 0.3  # ICA needs non-Gaussian sources


def test_shares_no_code_with_the_project_simulator():
    source = inspect.getsource(alt)
    assert "hca.synthetic import" not in source and "from hca" not in source
    assert set(ALT_DISTRIBUTIONS).isdisjoint(
        {"uniform", "laplace", "exponential", "student_t", "bimodal", "gamma"})


def test_simulated_board_has_the_documented_structure():
    board = simulate_leaderboard(n_domains=3, n_per_domain=[100, 200, 300], n_benchmarks=5,
                                 random_state=4)
    assert board.X.shape == (600, 5) and list(np.unique(board.domains)) == ["A1", "A2", "A3"]
    assert (board.G > 0).all()  # every benchmark loads positively on every capability
    for k, A in board.A.items():
        assert np.allclose(A, np.tril(A, -1)) and len(set(board.laws[k])) == 3
        assert (board.scales[k] >= 0.5).all() and (board.scales[k] <= 2.0).all()
    again = simulate_leaderboard(n_domains=3, n_per_domain=[100, 200, 300], n_benchmarks=5,
                                 random_state=4)
    assert np.array_equal(board.X, again.X)  # seeded
    assert "3 domains" in board.summary() and board.frame().shape == (600, 6)
    with pytest.raises(ValueError, match="n_per_domain must give 2 positive sizes"):
        simulate_leaderboard(n_domains=2, n_per_domain=[10])


def test_hca_recovers_the_order_with_many_models():
    board = simulate_leaderboard(n_domains=4, n_per_domain=4000, random_state=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = HCA().fit(board.X, board.domains)
    assert order_recovered(model, board.G)
    assert not order_recovered(model, board.G[:, ::-1])
