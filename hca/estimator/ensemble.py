"""The per-domain ICA of an analysis as a value, and whether a fit's ICA is reproducible.

One lockstep loop of FastICA iterations costs less than separate loops of the same starts
(every iteration pays the fixed cost of its numpy calls once), so :func:`domain_icas` fits
the per-domain ICA of several data sets under several seeds in one call, and the result is
passed on as the ``icas`` of :func:`hca.stability.seed_fits`,
:func:`hca.stability.subset_stability` and :func:`hca.estimator.mic_by_subset_many`, or the
``again`` of :func:`ica_reproducible_many`. :func:`ica_reproducible` says whether a fit's ICA
is a property of the data or of rounding (the same ICA on the models in reverse order,
:func:`reversed_rows`); :func:`ica_solutions` groups the ICA solutions of every domain over
many seeds into distinct local optima. All of them are re-exported by :mod:`hca.stability`.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from hca.estimator.ica import DomainICA, fit_icas, fit_icas_many
from hca.estimator.model import HCA, clone_hca, ica_options
from hca.validation import check_fit_data, check_is_fitted, check_params, is_int

__all__ = [
    "domain_icas",
    "reversed_rows",
    "check_icas",
    "int_seeds",
    "ica_solutions",
    "ica_reproducible",
    "ica_reproducible_many",
    "canonical_rows",
    "same_solution",
]


def int_seeds(seeds: Iterable[int]) -> list[int]:
    """``seeds`` as a non-empty list of ints."""
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds is empty")
    return seeds


def check_icas(
    icas: Sequence[Mapping[Hashable, DomainICA]], n: int, order: Sequence[Hashable], name: str
) -> list[Mapping[Hashable, DomainICA]]:
    """``icas`` (one ``{domain: DomainICA}`` per fit) checked to hold ``n`` fits of the
    domains of ``order``."""
    icas = list(icas)
    if len(icas) != n:
        raise ValueError(f"{name} holds {len(icas)} ICA fits for {n} seeds")
    for fits in icas:
        if sorted(map(str, fits)) != sorted(map(str, order)):
            raise ValueError(
                f"{name}: an ICA fit of domains {sorted(map(str, fits))} for data of domains "
                f"{sorted(map(str, order))}"
            )
    return icas


def reversed_rows(X: Any, domains: Any) -> tuple[np.ndarray, np.ndarray]:
    """The scores and domain labels of ``X`` with the rows in reverse order (validated
    arrays): the data set :func:`ica_reproducible` refits, for :func:`domain_icas`."""
    data = check_fit_data(X, domains, 1)
    rev = np.arange(len(data.values))[::-1]
    return data.values[rev], data.labels[rev]


def domain_icas(
    estimator: HCA, datasets: Sequence[tuple[Any, Any]], seeds: Sequence[int]
) -> list[list[dict[Hashable, DomainICA]]]:
    """Step 1 of HCA (the per-domain ICA, with ``estimator``'s settings) of every data set
    under every seed, in one batch (:func:`hca.estimator.ica.fit_icas_many`); a domain whose
    scores are the same in several data sets is fitted once.

    Parameters
    ----------
    estimator : HCA
        ICA settings (``n_components``, ``ica``, ``max_iter``, ``tol``, ``n_restarts``).
    datasets : sequence of (X, domains)
        Data sets, each as in :meth:`hca.estimator.HCA.fit` (they may hold different domains).
    seeds : sequence of int
        FastICA seeds.

    Returns
    -------
    list of list of dict
        ``out[g][i]`` is the ``ica_`` of ``clone_hca(estimator, random_state=seeds[i])``
        fitted on ``datasets[g]``.
    """
    seeds = int_seeds(seeds)
    est = clone_hca(estimator)
    check_params(est)
    checked = [check_fit_data(X, domains, est.n_components) for X, domains in datasets]
    order = list(dict.fromkeys(label for data in checked for label in data.order))
    return fit_icas_many(
        [(data.values, data.labels) for data in checked],
        order,
        int(est.n_components),
        seeds,
        **ica_options(est),
        orders=[data.order for data in checked],
    )


def canonical_rows(W: np.ndarray) -> np.ndarray:
    """Rows of an unmixing matrix scaled to unit norm with their largest-magnitude entry positive."""
    W = W / np.linalg.norm(W, axis=1, keepdims=True)
    return W * np.sign(W[np.arange(len(W)), np.abs(W).argmax(axis=1)])[:, None]


def same_solution(A: np.ndarray, B: np.ndarray, threshold: float) -> bool:
    """Whether two unmixing matrices have the same rows up to order, sign and scale."""
    C = np.abs(A @ B.T)
    return bool(np.all(C.max(axis=1) >= threshold) and len(set(C.argmax(axis=1))) == len(A))


def ica_solutions(
    estimator: HCA,
    X: Any,
    domains: Any,
    *,
    seeds: Iterable[int] = range(30),
    threshold: float = 0.99,
) -> pd.DataFrame:
    """Distinct ICA local optima of every domain over many seeds (ICASSO-style).

    Two solutions are the same when every unit-norm row of one has absolute cosine at
    least ``threshold`` with a distinct row of the other (rows up to order and sign). The
    ICA settings are the estimator's.

    Returns
    -------
    DataFrame
        One row per (domain, solution), solutions numbered by decreasing number of seeds:
        ``domain``, ``models``, ``solution``, ``n_seeds``, ``share``, ``negentropy`` (of the
        first seed that found it), ``best_negentropy`` (True for the solution with the
        largest negentropy in its domain), ``first_seed``.
    """
    est = clone_hca(estimator)
    data = check_fit_data(X, domains, est.n_components)
    seeds = int_seeds(seeds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        by_seed = fit_icas_many(
            [(data.values, data.labels)],
            data.order,
            data.n_components,
            seeds,
            **ica_options(est),
        )[0]
    rows = []
    for label in data.order:
        clusters: list[dict] = []
        for seed, icas in zip(seeds, by_seed):
            fit = icas[label]
            W = canonical_rows(fit.unmixing)
            for c in clusters:
                if same_solution(W, c["W"], threshold):
                    c["seeds"].append(seed)
                    break
            else:
                clusters.append({"W": W, "seeds": [seed], "negentropy": fit.objective})
        clusters.sort(key=lambda c: (-len(c["seeds"]), c["seeds"][0]))
        top = max(c["negentropy"] for c in clusters)
        for k, c in enumerate(clusters):
            rows.append(
                {
                    "domain": label,
                    "models": int(np.sum(data.labels == label)),
                    "solution": k + 1,
                    "n_seeds": len(c["seeds"]),
                    "share": len(c["seeds"]) / len(seeds),
                    "negentropy": float(c["negentropy"]),
                    "best_negentropy": bool(c["negentropy"] == top),
                    "first_seed": c["seeds"][0],
                }
            )
    return pd.DataFrame(rows)


def ica_reproducible(
    model: HCA,
    X: Any,
    domains: Any,
    *,
    threshold: float = 0.99,
) -> dict[Hashable, bool]:
    """Whether each domain's ICA in a fitted HCA is a property of the data, not of rounding.

    The same ICA is run again on every domain's models listed in reverse order: exact
    arithmetic gives the same result, so a run that lands elsewhere was steered by rounding
    (such a run also lands in different optima on different processors). Two unmixings agree
    when every unit-norm row of one has absolute cosine at least ``threshold`` with a distinct
    row of the other (as in :func:`ica_solutions`).

    Parameters
    ----------
    model : HCA
        Fitted on ``X`` and ``domains``.
    X, domains
        The model's training data.
    threshold : float, default=0.99

    Returns
    -------
    dict
        Domain -> True when the reordered run gives the model's unmixing.

    Raises
    ------
    ValueError
        If ``X`` and ``domains`` do not hold the model's domains.
    """
    return ica_reproducible_many([model], X, domains, threshold=threshold)[0]


def ica_reproducible_many(
    models: Sequence[HCA],
    X: Any,
    domains: Any,
    *,
    threshold: float = 0.99,
    again: Sequence[Mapping[Hashable, DomainICA]] | None = None,
) -> list[dict[Hashable, bool]]:
    """:func:`ica_reproducible` of every fitted model of ``models`` (e.g. :func:`seed_fits`).

    Entry ``i`` equals ``ica_reproducible(models[i], X, domains, threshold=threshold)``; the
    reversed-row ICA of the models with integer seeds runs in one batch.

    Parameters
    ----------
    models : sequence of HCA
        Fitted on ``X`` and ``domains`` (with the same ``n_components``).
    X, domains
        The models' training data.
    threshold : float, default=0.99
    again : sequence of mapping, optional
        The reordered runs, computed before: ``again[i]`` is the per-domain ICA of
        ``models[i]``'s settings and seed on :func:`reversed_rows` of ``X`` and ``domains``
        (:func:`domain_icas`); None: computed here.

    Returns
    -------
    list of dict
        Per model, domain -> True when the reordered run gives the model's unmixing.
    """
    models = list(models)
    if not models:
        raise ValueError("ica_reproducible_many: models is empty")
    for m in models:
        check_is_fitted(m, "unmixing_", msg="ica_reproducible needs a fitted HCA model")
    d = models[0].n_components
    if any(m.n_components != d for m in models):
        raise ValueError("ica_reproducible_many: the models differ in n_components")
    data = check_fit_data(X, domains, d)
    for m in models:
        if list(data.order) != list(m.domains_):
            raise ValueError(
                f"ica_reproducible: the data's domains {list(data.order)} are not the model's "
                f"{list(m.domains_)}"
            )
    if again is not None:
        return _compare_runs(models, check_icas(again, len(models), data.order, "again"), threshold)
    rev = np.arange(len(data.values))[::-1]
    values, labels = data.values[rev], data.labels[rev]
    runs_again: list[Mapping[Hashable, DomainICA] | None] = [None] * len(models)
    groups: dict[tuple, list[int]] = {}
    for i, m in enumerate(models):
        if is_int(m.random_state):
            groups.setdefault(tuple(ica_options(m).items()), []).append(i)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for key, members in groups.items():
            seeds = [int(models[i].random_state) for i in members]
            runs = fit_icas_many(
                [(values, labels)], data.order, data.n_components, seeds, **dict(key)
            )[0]
            for i, run in zip(members, runs):
                runs_again[i] = run
        for i, m in enumerate(models):
            if runs_again[i] is None:  # a seed that is not an int: one fit
                runs_again[i] = fit_icas(
                    values,
                    labels,
                    data.order,
                    data.n_components,
                    random_state=m.random_state,
                    **ica_options(m),
                )
    return _compare_runs(models, [r for r in runs_again if r is not None], threshold)


def _compare_runs(
    models: Sequence[HCA], again: Sequence[Mapping[Hashable, DomainICA]], threshold: float
) -> list[dict[Hashable, bool]]:
    """Per model, domain -> whether the reordered run ``again`` gives the model's unmixing."""
    out = []
    for m, fits in zip(models, again):
        out.append(
            {
                label: same_solution(
                    canonical_rows(m.ica_[label].unmixing),
                    canonical_rows(fits[label].unmixing),
                    threshold,
                )
                for label in m.domains_
            }
        )
    return out
