"""Readouts of an HCA fit on MMLU subjects (Appendix H.5), for :mod:`hca.paper.mmlu`.

With ``n_components`` equal to the number of subjects (three and three in H.5) the
unmixing matrix ``H_hat`` is square with orthonormal rows, i.e. orthogonal. If the
subjects themselves follow a hierarchy ``x_a -> x_b -> x_c``, the recovered rows are
``h_1 ~ e_a``, ``h_2 ~ e_b`` and ``h_3 ~ e_c`` (row ``i`` lies in the span of the first
``i`` subjects and is orthogonal to the earlier rows), so ``H_hat`` is close to a signed
permutation matrix and the hierarchy can be read from it: :func:`factor_alignment`
assigns one subject to every factor (the assignment of largest total squared weight)
and reports the squared weight of that subject in the factor (``share``; 1 for a pure
factor, 1/3 for an even mixture of three). The first row is unaffected by the
lower-triangular ambiguity of Appendix C.2 and by the OLS adjustment, so "``z_1`` is
close to subject ``a``" is a statement about identified quantities.

:func:`seed_fits` refits over FastICA seeds and reads these off every fit
(:func:`seed_fit_row`); :func:`order_counts` tallies them; :func:`subset_mic` looks one subset
up in a MIC-by-subset table.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from sklearn.exceptions import ConvergenceWarning

from hca import stability as st
from hca.data.registry import benchmark_label
from hca.estimator.model import HCA, clone_hca
from hca.stability import fit_record
from hca.validation import check_matrix

__all__ = [
    "factor_alignment",
    "recovered_order",
    "subset_mic",
    "seed_fit_row",
    "seed_fits",
    "order_counts",
]


def factor_alignment(unmixing: Any, benchmarks: Sequence[str]) -> pd.DataFrame:
    """The subject each latent factor is closest to (see the module docstring).

    Parameters
    ----------
    unmixing : array-like of shape (n_factors, n_benchmarks)
        Rows ``h_i`` of the unmixing matrix (``z_i = h_i x``); rows are normalised here.
    benchmarks : sequence of str
        Benchmark (column) names.

    Returns
    -------
    DataFrame
        Index ``z1..zd``; ``benchmark`` (one distinct benchmark per factor, the assignment
        that maximises the total squared normalised weight), ``share`` (its squared weight
        in the normalised row) and ``top`` (the largest-weight benchmark of the row alone).
    """
    H = np.asarray(unmixing, dtype=float)
    if H.ndim != 2 or H.shape[1] != len(benchmarks):
        raise ValueError(
            f"unmixing has shape {H.shape} but {len(benchmarks)} benchmarks were "
            "named; expected (n_factors, n_benchmarks)"
        )
    if H.shape[0] > H.shape[1]:
        raise ValueError(
            f"unmixing has more factors ({H.shape[0]}) than benchmarks "
            f"({H.shape[1]}); one distinct benchmark per factor is impossible"
        )
    norms = np.linalg.norm(H, axis=1)
    if not np.all(norms > 0) or not np.isfinite(H).all():
        raise ValueError("unmixing has a zero or non-finite row")
    W = (H / norms[:, None]) ** 2
    rows, cols = linear_sum_assignment(-W)
    assigned = np.empty(H.shape[0], dtype=int)
    assigned[rows] = cols
    names = list(benchmarks)
    return pd.DataFrame(
        {
            "benchmark": [names[j] for j in assigned],
            "share": W[np.arange(H.shape[0]), assigned],
            "top": [names[j] for j in W.argmax(axis=1)],
        },
        index=[f"z{i + 1}" for i in range(H.shape[0])],
    )


def recovered_order(unmixing: Any, benchmarks: Sequence[str]) -> tuple[str, ...]:
    """Benchmarks in causal order, root first (``factor_alignment(...)["benchmark"]``)."""
    return tuple(factor_alignment(unmixing, benchmarks)["benchmark"])


def subset_mic(table: pd.DataFrame, subset: Sequence[Hashable]) -> pd.Series:
    """Row of a :func:`hca.estimator.mic_by_subset` table for ``subset`` (any order).

    Returns
    -------
    Series
        The table's row plus ``rank`` (1 = smallest MIC among subsets of the same size) and
        ``rank_all`` (among all rows of the table).
    """
    for col in ("subset", "size", "mic"):
        if col not in table.columns:
            raise ValueError(f"table lacks column {col!r}; pass the output of mic_by_subset")
    key = frozenset(subset)
    hit = [i for i, s in zip(table.index, table["subset"]) if frozenset(s) == key]
    if not hit:
        raise ValueError(f"subset {tuple(subset)} is not in the table")
    row = table.loc[hit[0]].copy()
    same = table[table["size"] == row["size"]]
    row["rank"] = int((same["mic"] < row["mic"]).sum()) + 1
    row["rank_all"] = int((table["mic"] < row["mic"]).sum()) + 1
    return row


def seed_fit_row(model: HCA, X: pd.DataFrame, seed: int) -> dict:
    """The row of :func:`seed_fits` of one fitted model."""
    rec = fit_record(model)
    align = factor_alignment(model.unmixing_, [str(c) for c in X.columns])
    H = np.asarray(model.unmixing_, dtype=float)
    W = (H / np.linalg.norm(H, axis=1, keepdims=True)) ** 2
    row = {
        "seed": seed,
        "mic": rec["mic"],
        "order": tuple(align["benchmark"]),
        "z1": align["benchmark"].iloc[0],
        "z1_share": float(align["share"].iloc[0]),
        "top": tuple(align["top"]),
        "sq_weights": tuple(map(tuple, W.round(12))),
        "ols_alignment": rec["alignment"],
        "ica_converged": rec["ica_converged"],
        "certified": rec["certified"],
    }
    row.update({k: v for k, v in rec.items() if k.startswith("alpha[")})
    row.update({f"converged[{dom}]": bool(ok) for dom, ok in model.ica_converged_.items()})
    return row


def seed_fits(
    estimator: HCA,
    X: pd.DataFrame,
    domains: Any,
    *,
    seeds: Sequence[int] = range(20),
    n_jobs: int | None = None,
) -> pd.DataFrame:
    """Refit HCA with every ICA seed and read the causal order off each fit.

    :func:`hca.stability.seed_stability` reads the order from the OLS adjustment, whose
    last pick is arbitrary when there are as many factors as benchmarks (``z_3`` regressed
    on ``z_1, z_2`` and any one benchmark is then exact, ``R^2 = 1`` for every benchmark).
    This keeps :func:`hca.stability.fit_record` and adds the readout of
    :func:`factor_alignment`.

    Parameters
    ----------
    estimator : hca.estimator.HCA
        Settings of the refits (cloned; ``random_state`` set to every seed).
    X : DataFrame of shape (n_models, n_benchmarks)
        Scores (the column names name the benchmarks).
    domains : array-like of shape (n_models,)
        Domain labels.
    seeds : sequence of int
        ICA seeds.
    n_jobs : int, optional
        Unused: the refits run as one batch (:func:`hca.stability.seed_fits`); kept for
        callers that pass it.

    Returns
    -------
    DataFrame
        One row per seed: ``seed``, ``mic``, ``order`` (tuple of benchmarks, root first),
        ``z1`` (its first entry), ``z1_share``, ``top`` (the largest-weight benchmark of
        every row taken alone), ``sq_weights`` (the rows normalised to unit length and
        squared, a tuple of tuples: factors x benchmarks), ``ols_alignment`` (the OLS picks of
        :func:`hca.stability.fit_record`), ``ica_converged`` (all domains), ``certified``
        (the search's optimum is certified), and per domain ``alpha[<domain>]`` and
        ``converged[<domain>]`` (ICA converged).
    """
    clone_hca(estimator)
    check_matrix(X, require_names=True)
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds is empty")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # recorded in the model
        models = st.seed_fits(estimator, X, domains, seeds)
    return pd.DataFrame([seed_fit_row(m, X, s) for m, s in zip(models, seeds)])


def order_counts(
    fits: pd.DataFrame, column: str = "order", labels: dict | None = None
) -> pd.DataFrame:
    """How often each value of ``column`` (an order or ``z1``) came back over the seeds.

    Returns
    -------
    DataFrame
        ``value`` (orders joined by ``" > "`` with short subject names), ``count``,
        ``share``; most frequent first.
    """
    if column not in fits.columns:
        raise ValueError(f"fits lacks column {column!r}; pass the output of seed_fits")

    def show(v):
        items = v if isinstance(v, tuple) else (v,)
        return " > ".join((labels or {}).get(x, benchmark_label(x)) for x in items)

    values = fits[column].map(show)
    counts = values.value_counts()
    return pd.DataFrame(
        {"value": counts.index, "count": counts.to_numpy(), "share": counts.to_numpy() / len(fits)}
    )
