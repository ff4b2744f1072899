"""A second simulator of leaderboards with a known causal order, built apart from
:mod:`hca.synthetic`.

What the book concludes from simulated data (how many models per domain HCA needs, the
interval of the command line's trust note) should not be a property of one generator. This
module shares no code and no choice with :func:`hca.synthetic.simulate_scm` beyond the model
class itself (a linear SCM per domain, one mixing shared by the domains); it is built the
way a leaderboard looks rather than the way the paper's appendix writes the model:

* **Sources** from other distributions: Gumbel, log-normal (sigma 0.5), arcsine
  (Beta(1/2, 1/2)), chi-squared (3 degrees of freedom), a three-point law (-sqrt 2, 0,
  sqrt 2 with probabilities 1/4, 1/2, 1/4) and Weibull (shape 1.5), each standardised; every
  node of a domain draws a different one.
* **Weights** ``z_i = sum_{j<i} A_ij z_j + s_i eps_i``: every edge present, magnitudes from a
  Gamma(2, 1/4) law (mean 0.5, some near 0) with random signs, against
  :func:`~hca.synthetic.simulate_scm`'s uniform magnitudes in (0.25, 1).
* **Scales**: source scales ``s_i`` log-uniform in (0.5, 2).
* **Mixing** like benchmarks in percent: every benchmark loads positively on every capability
  (loadings ``|N(0, 1)| + 0.05``), is stretched by 5 to 20 points per unit and shifted to a
  mean of 20 to 60, and every domain adds its own offset to every benchmark (a base model's
  level, N(0, 5) points): ``x = o + m_k + G z``.

The data are exact SCMs (no observation noise by default), like the project's study, so the
two simulators differ in the construction, not in the model. Every random step draws from
``numpy.random.default_rng(random_state)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["ALT_DISTRIBUTIONS", "SimulatedBoard", "standard_source", "simulate_leaderboard"]

#: The standardised (zero mean, unit variance) source laws of :func:`simulate_leaderboard`.
ALT_DISTRIBUTIONS: tuple[str, ...] = (
    "gumbel",
    "lognormal",
    "arcsine",
    "chi2",
    "three_point",
    "weibull",
)
_EULER = 0.5772156649015329
_LOGNORMAL_SIGMA = 0.5
_CHI2_DF = 3.0
_WEIBULL_SHAPE = 1.5


def standard_source(name: str, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws of one of :data:`ALT_DISTRIBUTIONS`, shifted and scaled to zero mean
    and unit variance (by the law's exact moments)."""
    if name == "gumbel":
        return (rng.gumbel(0.0, 1.0, size) - _EULER) / (math.pi / math.sqrt(6.0))
    if name == "lognormal":
        s2 = _LOGNORMAL_SIGMA**2
        mean, var = math.exp(s2 / 2), (math.exp(s2) - 1) * math.exp(s2)
        return (rng.lognormal(0.0, _LOGNORMAL_SIGMA, size) - mean) / math.sqrt(var)
    if name == "arcsine":
        return (rng.beta(0.5, 0.5, size) - 0.5) * math.sqrt(8.0)
    if name == "chi2":
        return (rng.chisquare(_CHI2_DF, size) - _CHI2_DF) / math.sqrt(2 * _CHI2_DF)
    if name == "three_point":
        return rng.choice([-math.sqrt(2.0), 0.0, math.sqrt(2.0)], size, p=[0.25, 0.5, 0.25])
    if name == "weibull":
        k = _WEIBULL_SHAPE
        m1, m2 = math.gamma(1 + 1 / k), math.gamma(1 + 2 / k)
        return (rng.weibull(k, size) - m1) / math.sqrt(m2 - m1**2)
    raise ValueError(f"unknown source law {name!r}; expected one of {ALT_DISTRIBUTIONS}")


@dataclass(frozen=True, eq=False)
class SimulatedBoard:
    """A simulated leaderboard from :func:`simulate_leaderboard`.

    Attributes
    ----------
    X : ndarray of shape (n_models, n_benchmarks)
        Scores ``x = o + m_k + G z`` (domains stacked in order).
    domains : ndarray of shape (n_models,)
        Domain of every row (``"A1"``, ``"A2"``, ...).
    G : ndarray of shape (n_benchmarks, n_components)
        The mixing of the latent capabilities ``z`` (in causal order) into the scores.
    A, scales : dict
        Per domain: the edge weights (``A[i, j]``: ``z_j -> z_i``, strictly lower-triangular)
        and the source scales ``s``.
    laws : dict
        Per domain, the source law of every node.
    feature_names : tuple of str
        Benchmark names (``"b1"``, ...).
    """

    X: np.ndarray
    domains: np.ndarray
    G: np.ndarray
    A: dict
    scales: dict
    laws: dict
    feature_names: tuple = field(default=())

    def frame(self) -> pd.DataFrame:
        """The scores as a DataFrame, one column per benchmark plus ``domain``."""
        df = pd.DataFrame(self.X, columns=list(self.feature_names))
        df["domain"] = self.domains
        return df

    def summary(self) -> str:
        n, p = self.X.shape
        lines = [
            f"Simulated leaderboard (hca.synthetic_alt): {n} models, {p} benchmarks, "
            f"{self.G.shape[1]} capabilities, {len(self.A)} domains"
        ]
        for k in self.A:
            lines.append(
                f"  {k}: {int(np.sum(self.domains == k))} models, sources: "
                + ", ".join(self.laws[k])
            )
        return "\n".join(lines)


def simulate_leaderboard(
    n_domains: int = 4,
    n_per_domain: int | Sequence[int] = 250,
    n_components: int = 3,
    n_benchmarks: int = 6,
    *,
    noise: float = 0.0,
    random_state: int | None = None,
) -> SimulatedBoard:
    """Simulate a leaderboard of ``n_domains`` exact linear SCMs sharing one mixing
    (module docstring: the laws, weights, scales and mixing, none of them
    :mod:`hca.synthetic`'s).

    Parameters
    ----------
    n_domains : int, default 4
    n_per_domain : int or sequence of int, default 250
        Models per domain.
    n_components : int, default 3
        Latent capabilities, in causal order (``z_1`` is the root).
    n_benchmarks : int, default 6
        At least ``n_components``.
    noise : float, default 0
        Standard deviation of Gaussian noise added to every score (in points).
    random_state : int, optional
        Seed of ``numpy.random.default_rng``.
    """
    if n_domains < 1 or n_components < 1 or n_benchmarks < n_components:
        raise ValueError(
            "need n_domains >= 1 and 1 <= n_components <= n_benchmarks, got "
            f"{n_domains}, {n_components}, {n_benchmarks}"
        )
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    sizes = (
        [int(n_per_domain)] * n_domains
        if np.ndim(n_per_domain) == 0
        else [int(n) for n in n_per_domain]  # type: ignore[union-attr]
    )
    if len(sizes) != n_domains or min(sizes) < 1:
        raise ValueError(f"n_per_domain must give {n_domains} positive sizes, got {n_per_domain}")
    rng = np.random.default_rng(random_state)
    d, p = n_components, n_benchmarks
    loadings = np.abs(rng.normal(size=(p, d))) + 0.05
    G = loadings * rng.uniform(5.0, 20.0, p)[:, None]
    base = rng.uniform(20.0, 60.0, p)
    labels = [f"A{k + 1}" for k in range(n_domains)]
    A, scales, laws, parts = {}, {}, {}, []
    for label, size in zip(labels, sizes):
        weights = rng.gamma(2.0, 0.25, (d, d)) * rng.choice([-1.0, 1.0], (d, d))
        A[label] = np.tril(weights, -1)
        scales[label] = np.exp(rng.uniform(np.log(0.5), np.log(2.0), d))
        order = rng.permutation(len(ALT_DISTRIBUTIONS))  # distinct laws (cycled beyond six)
        laws[label] = tuple(ALT_DISTRIBUTIONS[order[i % len(order)]] for i in range(d))
        eps = np.column_stack([standard_source(law, size, rng) for law in laws[label]])
        z = np.zeros((size, d))
        for i in range(d):  # in causal order
            z[:, i] = z[:, :i] @ A[label][i, :i] + scales[label][i] * eps[:, i]
        level = rng.normal(0.0, 5.0, p)
        parts.append(base + level + z @ G.T)
    X = np.vstack(parts)
    if noise > 0:
        X = X + rng.normal(0.0, noise, X.shape)
    return SimulatedBoard(
        X=X,
        domains=np.repeat(np.array(labels, dtype=object), sizes),
        G=G,
        A=A,
        scales=scales,
        laws=laws,
        feature_names=tuple(f"b{j + 1}" for j in range(p)),
    )
