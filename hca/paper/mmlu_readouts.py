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

:func:`seed_fit_row` reads these off one fit of a batch of seed refits
(:func:`hca.stability.seed_fits`); :func:`subset_mic` looks one subset up in a MIC-by-subset
table.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

from hca.estimator.model import HCA
from hca.stability import fit_record

__all__ = ["factor_alignment", "subset_mic", "seed_fit_row"]


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
    """One refit over FastICA seeds read off as a row: ``seed``, ``mic``, ``order`` (the
    :func:`factor_alignment`, root first), ``z1`` (its first entry), ``z1_share``, ``top``
    (the largest-weight benchmark of every row alone), ``sq_weights`` (the rows normalised to
    unit length and squared), ``ols_alignment`` (the OLS picks of
    :func:`hca.stability.fit_record`, whose last pick is arbitrary with as many factors as
    benchmarks), ``ica_converged``, ``certified`` and per domain ``alpha[<domain>]`` and
    ``converged[<domain>]``."""
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
