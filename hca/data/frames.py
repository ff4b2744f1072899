"""From a leaderboard frame to the ``(X, domains)`` that every estimator of :mod:`hca` takes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from hca.validation import check_frame

__all__ = ["domain_data"]


def domain_data(
    frame: pd.DataFrame,
    domains: Sequence[str],
    benchmarks: Sequence[str],
    *,
    by: str = "base_model",
    complete: bool = False,
    context: str = "domain_data",
) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows of ``frame`` in ``domains``: their scores and their domain labels.

    Parameters
    ----------
    frame : DataFrame
        One row per model, with the score columns ``benchmarks`` and the domain column ``by``.
    domains : sequence of str
        Domains to keep (values of ``by``); every one must have at least one model.
    benchmarks : sequence of str
        Score columns, in the order of the columns of ``X``.
    by : str, default="base_model"
        Column holding every model's domain (NA: unattributed).
    complete : bool, default=False
        Raise when a kept row misses a score (otherwise missing scores are returned as NaN).
    context : str, default="domain_data"
        Prefix of the error messages (e.g. the caller's name).

    Returns
    -------
    X : DataFrame of shape (n_models, len(benchmarks))
        ``frame[benchmarks]`` of the kept rows, in frame order, with a fresh 0..n-1 index.
    domains : ndarray of object, shape (n_models,)
        The domain of every row of ``X``.

    Raises
    ------
    ValueError
        If a column is missing, a requested domain has no model, or (``complete``) a score
        is missing.
    """
    check_frame(frame, [by, *benchmarks], context=context)
    present = set(frame[by].dropna())
    absent = [d for d in domains if d not in present]
    if absent:
        raise ValueError(f"{context}: no model is attributed to domain(s) {absent}")
    rows = frame[frame[by].isin(list(domains))]
    X = rows[list(benchmarks)].reset_index(drop=True)
    if complete and X.isna().any().any():
        bad = list(X.columns[X.isna().any()])
        raise ValueError(
            f"{context}: missing scores in column(s) {bad} within the domains {list(domains)}"
        )
    return X, rows[by].to_numpy(dtype=object)
