"""Results of an HCA fit: per-domain SCMs and the OLS ambiguity adjustment."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

__all__ = [
    "WEAK_MATCH_R2",
    "one_to_one_alignment",
    "DomainSCM",
    "OLSAdjustment",
    "r_squared",
    "ols_adjustment",
]


# =========================================================================== formatting
def format_number(value: float) -> str:
    """Three significant digits, keeping trailing zeros (``24.0``, ``2.76``)."""
    value = float(value)
    if abs(value) >= 1000:
        return f"{value:.0f}"
    return f"{value:#.3g}".rstrip(".")


def factor_names(d: int) -> list[str]:
    """``["z1", ..., "zd"]``."""
    return [f"z{i + 1}" for i in range(d)]


# =========================================================================== per-domain SCM
@dataclass(frozen=True, eq=False)
class DomainSCM:
    """Linear SCM recovered for one domain: ``z = A z + diag(omega_sqrt) eps``.

    Attributes
    ----------
    domain : hashable
        Domain label.
    A : ndarray of shape (d0, d0)
        Strictly lower-triangular weights; ``A[i, j]`` is the weight of ``z_j -> z_i``.
    omega_sqrt : ndarray of shape (d0,)
        Source scales ``diag(Omega_k^{1/2})`` (positive).
    B : ndarray of shape (d0, d0)
        ``Omega_k^{-1/2} (I - A)``: the sources are ``eps = B z`` (unit variance in
        this domain, positive diagonal).
    alpha : float
        Inexactness ``alpha_k`` of the domain (Proposition 1).
    factor_names : tuple of str
        Names of the latent factors.
    """

    domain: Hashable
    A: np.ndarray
    omega_sqrt: np.ndarray
    B: np.ndarray
    alpha: float
    factor_names: tuple = field(default=())

    @classmethod
    def from_B(cls, domain: Hashable, B: np.ndarray, alpha: float, names=None) -> DomainSCM:
        """Build from a lower-triangular ``B`` with positive diagonal."""
        omega_sqrt = 1.0 / np.diag(B)
        A = np.tril(np.eye(len(B)) - omega_sqrt[:, None] * B, -1)
        names = tuple(names) if names is not None else tuple(factor_names(len(B)))
        return cls(domain, A, omega_sqrt, np.array(B), float(alpha), names)

    def equations(self) -> list[str]:
        """Structural equations, e.g. ``"z2 = 2.76 z1 + 24.0 ε2"``."""
        lines = []
        for i, zi in enumerate(self.factor_names):
            terms = [(self.A[i, j], self.factor_names[j]) for j in range(i)]
            terms.append((self.omega_sqrt[i], f"ε{i + 1}"))
            text = ""
            for weight, name in terms:
                mag = format_number(abs(weight))
                if not text:
                    text = f"-{mag} {name}" if weight < 0 else f"{mag} {name}"
                else:
                    text += f" {'-' if weight < 0 else '+'} {mag} {name}"
            lines.append(f"{zi} = {text}")
        return lines

    def summary(self) -> str:
        """The domain's structural equations and inexactness."""
        head = f"{self.domain} (alpha = {self.alpha:.3g})"
        return "\n".join([head] + ["  " + e for e in self.equations()])


# =========================================================================== OLS adjustment
@dataclass(frozen=True, eq=False)
class OLSAdjustment:
    """OLS ambiguity adjustment of Section 4 (``z_adj = L z``).

    Attributes
    ----------
    L : ndarray of shape (d0, d0)
        Unit lower-triangular with ``z_adj = L z``: the steps are
        ``z_adj_i = z_i - sum_{j<i} a_ij z_adj_j``, so ``L = (I + a)^{-1}``.
    coefficients : ndarray of shape (d0, d0)
        The strictly lower-triangular ``a``: OLS coefficients of ``z_adj_j`` in the
        regression of ``z_i`` with the chosen benchmark.
    unmixing : ndarray of shape (d0, n_benchmarks)
        Adjusted unmixing matrix ``L H_hat``.
    mixing : ndarray of shape (n_benchmarks, d0)
        Its pseudo-inverse ``H_hat^T L^{-1}``.
    benchmarks : tuple
        Benchmark chosen (largest R^2) for each factor.
    r2 : DataFrame
        R^2 of ``z_i ~ z_1..z_{i-1} + x_B + const`` (factors x benchmarks, Table 2a).
    weights : dict
        Per domain adjusted ``B_k L^{-1}`` (lower-triangular, unit-variance sources).
    models : dict
        Per domain adjusted :class:`DomainSCM`.
    """

    L: np.ndarray
    coefficients: np.ndarray
    unmixing: np.ndarray
    mixing: np.ndarray
    benchmarks: tuple
    r2: pd.DataFrame
    weights: dict
    models: dict

    def summary(self) -> str:
        """Chosen benchmarks, R^2 table and adjusted structural equations."""
        names = list(self.r2.index)
        lines = [
            "OLS adjustment: "
            + ", ".join(
                f"{z} ~ {b} (R^2 = {self.r2.loc[z, b]:.2f})" for z, b in zip(names, self.benchmarks)
            )
        ]
        lines.append(self.r2.round(2).to_string())
        lines += [m.summary() for m in self.models.values()]
        return "\n".join(lines)


def r_squared(y: np.ndarray, residuals: np.ndarray) -> float:
    """Coefficient of determination ``1 - sum(residuals^2) / sum((y - mean y)^2)``.

    ``residuals`` are ``y`` minus any prediction (so the value can be negative out of
    sample); NaN for a constant ``y``.
    """
    y = np.asarray(y, dtype=float)
    residuals = np.asarray(residuals, dtype=float)
    sst = float(np.sum((y - y.mean()) ** 2))
    return 1.0 - float(residuals @ residuals) / sst if sst > 0 else float("nan")


def _ols(y: np.ndarray, design: np.ndarray) -> tuple[float, np.ndarray]:
    """R^2 and coefficients of the OLS of ``y`` on ``design`` (which includes a constant)."""
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return r_squared(y, y - design @ coef), coef


def ols_adjustment(Z: np.ndarray, X: np.ndarray, benchmark_names: Sequence[str]):
    """Sequential OLS adjustment; return ``(L, coefficients, chosen indices, R^2 table)``."""
    n, d = Z.shape
    p = X.shape[1]
    Zadj = Z.copy()
    L = np.eye(d)
    coefs = np.zeros((d, d))
    table = np.zeros((d, p))
    chosen = []
    for i in range(d):
        design = np.ones((n, i + 2), dtype=np.result_type(np.float64, Zadj, X))  # [1, z_<i, x_b]
        design[:, 1:-1] = Zadj[:, :i]
        fits = []
        for b in range(p):
            design[:, -1] = X[:, b]
            fits.append(_ols(Zadj[:, i], design))
        table[i] = [f[0] for f in fits]
        b = int(np.argmax(np.nan_to_num(table[i], nan=-np.inf)))  # NaN: z_i constant
        chosen.append(b)
        a = fits[b][1][1 : 1 + i]
        coefs[i, :i] = a
        L[i] = L[i] - a @ L[:i]
        Zadj[:, i] = Zadj[:, i] - Zadj[:, :i] @ a
    r2 = pd.DataFrame(table, index=factor_names(d), columns=list(benchmark_names))
    return L, coefs, chosen, r2


#: A factor "matches no benchmark well" when its one-to-one benchmark explains less than
#: this share of its variance (R^2 of the OLS adjustment, :func:`one_to_one_alignment`).
WEAK_MATCH_R2 = 0.5


def one_to_one_alignment(r2: pd.DataFrame, weak: float = WEAK_MATCH_R2) -> pd.DataFrame:
    """Match factors to distinct benchmarks, maximising the total R^2.

    The OLS adjustment picks, for every factor, the benchmark with the largest R^2, so two
    factors can pick the same one; this assigns one distinct benchmark to every factor with
    the largest sum of R^2 (:func:`scipy.optimize.linear_sum_assignment`).

    Parameters
    ----------
    r2 : DataFrame
        Factors (rows, causal order) x benchmarks, e.g. :attr:`OLSAdjustment.r2`; at least as
        many benchmarks as factors.
    weak : float, default=WEAK_MATCH_R2
        A factor whose assigned benchmark has ``R^2 < weak`` is flagged ``weak``.

    Returns
    -------
    DataFrame
        Indexed by factor: ``benchmark``, ``r2``, ``weak`` (bool) and ``best`` (the
        per-factor maximum the OLS adjustment picks, for comparison).
    """
    values = r2.to_numpy(dtype=float)
    if values.shape[0] > values.shape[1]:
        raise ValueError(
            f"{values.shape[0]} factors but only {values.shape[1]} benchmarks: "
            "a one-to-one alignment needs at least as many benchmarks"
        )
    rows, cols = linear_sum_assignment(np.nan_to_num(values, nan=-1.0), maximize=True)
    chosen = values[rows, cols]
    return pd.DataFrame(
        {
            "benchmark": [str(r2.columns[c]) for c in cols],
            "r2": chosen,
            "weak": chosen < weak,
            "best": [str(r2.columns[int(np.nanargmax(v))]) for v in values],
        },
        index=pd.Index([str(r2.index[r]) for r in rows], name="factor"),
    )
