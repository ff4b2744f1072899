"""MMLU by subject (Appendix H.5): the frame with domains, subject sets and readouts.

The MMLU-by-task leaderboard lists 57 subject accuracies per model but only names and
parameter counts. :func:`mmlu_frame` joins v1's architecture and date by model id
(:func:`hca.attribution.join_v1_metadata`) and attributes every row to a base model
(:func:`hca.attribution.attach_domains`), so that the same domains as in Appendix H.4 exist.

Readouts of an HCA fit on as many subjects as components
----------------------------------------------------------
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
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Hashable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.exceptions import ConvergenceWarning

from hca.data.registry import BENCHMARK_LABELS, MMLU_SUBJECTS
from hca.estimator.model import HCA, clone_hca
from hca.stability import fit_record
from hca.validation import check_frame, check_matrix

__all__ = [
    "subject_columns",
    "subject_label",
    "mmlu_frame",
    "domain_counts",
    "cluster_order",
    "factor_alignment",
    "recovered_order",
    "subset_mic",
    "seed_fits",
    "order_counts",
]


def subject_columns(subjects: Sequence[str]) -> list[str]:
    """Column names ``mmlu_<subject>`` for MMLU subjects, with or without the prefix.

    Raises
    ------
    ValueError
        Naming an unknown subject and the closest existing ones (e.g.
        ``college_electrical_engineering`` -> ``electrical_engineering``).
    """
    if isinstance(subjects, str):
        raise TypeError("subjects must be a sequence of subject names, not one string")
    out = []
    for s in subjects:
        name = str(s).lower()
        name = name[len("mmlu_"):] if name.startswith("mmlu_") else name
        if name not in MMLU_SUBJECTS:
            close = difflib.get_close_matches(name, MMLU_SUBJECTS, n=3, cutoff=0.5)
            raise ValueError(f"{s!r} is not an MMLU subject; closest: {close}")
        out.append(f"mmlu_{name}")
    return out


def subject_label(column: str) -> str:
    """Display name of an ``mmlu_<subject>`` column (``"college mathematics"``)."""
    return BENCHMARK_LABELS.get(column, str(column))


@lru_cache(maxsize=1)
def _frame_cached() -> pd.DataFrame:
    from hca.attribution.domains import attach_domains
    from hca.attribution.identify import join_v1_metadata
    from hca.data.loaders import load_leaderboard_v1, load_mmlu_by_task

    return attach_domains(join_v1_metadata(load_mmlu_by_task(), load_leaderboard_v1()))


def mmlu_frame() -> pd.DataFrame:
    """The MMLU-by-task leaderboard with v1 metadata and base-model domains (a fresh copy).

    Returns
    -------
    DataFrame
        :func:`hca.data.load_mmlu_by_task` plus ``architecture`` and ``date`` from v1
        (matched by model id) and the columns of :func:`hca.attribution.attach_domains`
        (``base_model``, ``layer``, ``evidence``, ...).
    """
    return _frame_cached().copy()


def domain_counts(frame: pd.DataFrame, candidates: Sequence[str], n_benchmarks: int) -> pd.DataFrame:
    """Models per candidate domain and whether HCA can use the domain.

    A domain is usable when it has more models than benchmarks (FastICA with as many
    components as benchmarks needs at least that many rows; one more keeps the sample
    covariance non-singular after centring).

    Returns
    -------
    DataFrame
        Index ``candidates``; columns ``n_models`` and ``usable``.
    """
    check_frame(frame, ["base_model"], context="domain_counts (use mmlu_frame())")
    counts = frame["base_model"].value_counts()
    n = pd.Series([int(counts.get(c, 0)) for c in candidates], index=list(candidates),
                  name="n_models")
    out = n.to_frame()
    out["usable"] = out["n_models"] > n_benchmarks
    out.index.name = "base_model"
    return out


def cluster_order(corr: pd.DataFrame, method: str = "average") -> list:
    """Order of the variables of a correlation matrix by hierarchical clustering.

    Agglomerative clustering (``scipy.cluster.hierarchy.linkage``) on the distance
    ``1 - corr`` with optimal leaf ordering, so that similar subjects sit side by side.

    Parameters
    ----------
    corr : DataFrame
        Square, symmetric correlation matrix with matching index and columns.
    method : str, default="average"
        Linkage method.

    Returns
    -------
    list
        The labels of ``corr`` in leaf order.
    """
    from scipy.cluster.hierarchy import leaves_list, linkage, optimal_leaf_ordering
    from scipy.spatial.distance import squareform

    if not isinstance(corr, pd.DataFrame) or list(corr.index) != list(corr.columns):
        raise ValueError("corr must be a square DataFrame with identical index and columns")
    values = check_matrix(corr, name="corr")  # NaN: a constant column
    dist = np.clip(1.0 - (values + values.T) / 2.0, 0.0, None)
    np.fill_diagonal(dist, 0.0)
    condensed = squareform(dist, checks=False)
    link = optimal_leaf_ordering(linkage(condensed, method=method), condensed)
    return [corr.index[i] for i in leaves_list(link)]


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
    from scipy.optimize import linear_sum_assignment

    H = np.asarray(unmixing, dtype=float)
    if H.ndim != 2 or H.shape[1] != len(benchmarks):
        raise ValueError(f"unmixing has shape {H.shape} but {len(benchmarks)} benchmarks were "
                         "named; expected (n_factors, n_benchmarks)")
    if H.shape[0] > H.shape[1]:
        raise ValueError(f"unmixing has more factors ({H.shape[0]}) than benchmarks "
                         f"({H.shape[1]}); one distinct benchmark per factor is impossible")
    norms = np.linalg.norm(H, axis=1)
    if not np.all(norms > 0) or not np.isfinite(H).all():
        raise ValueError("unmixing has a zero or non-finite row")
    W = (H / norms[:, None]) ** 2
    rows, cols = linear_sum_assignment(-W)
    assigned = np.empty(H.shape[0], dtype=int)
    assigned[rows] = cols
    names = list(benchmarks)
    return pd.DataFrame({
        "benchmark": [names[j] for j in assigned],
        "share": W[np.arange(H.shape[0]), assigned],
        "top": [names[j] for j in W.argmax(axis=1)],
    }, index=[f"z{i + 1}" for i in range(H.shape[0])])


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


def _seed_fit_row(estimator: HCA, X: pd.DataFrame, domains: Any, seed: int) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # recorded in the model
        model = clone_hca(estimator, random_state=seed).fit(X, domains)
    rec = fit_record(model)
    align = factor_alignment(model.unmixing_, [str(c) for c in X.columns])
    row = {"seed": seed, "mic": rec["mic"], "order": tuple(align["benchmark"]),
           "z1": align["benchmark"].iloc[0], "z1_share": float(align["share"].iloc[0]),
           "ols_alignment": rec["alignment"], "ica_converged": rec["ica_converged"]}
    row.update({k: v for k, v in rec.items() if k.startswith("alpha[")})
    row.update({f"converged[{dom}]": bool(ok) for dom, ok in model.ica_converged_.items()})
    return row


def seed_fits(estimator: HCA, X: pd.DataFrame, domains: Any, *,
              seeds: Sequence[int] = range(20), n_jobs: int | None = None) -> pd.DataFrame:
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
        Refits in parallel (:class:`joblib.Parallel`); the result does not depend on it.

    Returns
    -------
    DataFrame
        One row per seed: ``seed``, ``mic``, ``order`` (tuple of benchmarks, root first),
        ``z1`` (its first entry), ``z1_share``, ``ols_alignment`` (the OLS picks of
        :func:`hca.stability.fit_record`), ``ica_converged`` (all domains), and per domain
        ``alpha[<domain>]`` and ``converged[<domain>]`` (ICA converged).
    """
    clone_hca(estimator)
    check_matrix(X, require_names=True)
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds is empty")
    rows = Parallel(n_jobs=n_jobs)(
        delayed(_seed_fit_row)(estimator, X, domains, seed) for seed in seeds)
    return pd.DataFrame(rows)


def order_counts(fits: pd.DataFrame, column: str = "order",
                 labels: dict | None = None) -> pd.DataFrame:
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
        return " > ".join((labels or {}).get(x, subject_label(x)) for x in items)

    values = fits[column].map(show)
    counts = values.value_counts()
    return pd.DataFrame({"value": counts.index, "count": counts.to_numpy(),
                         "share": counts.to_numpy() / len(fits)})
