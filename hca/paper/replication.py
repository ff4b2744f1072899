"""The paper's frames and shared fits used by every chapter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import numpy as np
import pandas as pd

from hca.data.registry import V1_BENCHMARKS, V2_BENCHMARKS
from hca.paper.constants import (
    PAPER_V1_SINV,
    PAPER_V2_FOUR,
    PAPER_V2_PRETRAINED,
    PAPER_V2_SINV,
)
from hca.validation import check_frame

__all__ = [
    "v2_frame",
    "v1_frame",
    "domain_data",
    "fit_v2",
    "fit_v1",
    "BaseFilter",
    "filter_below_base",
]


@lru_cache(maxsize=None)
def _v2_frame_cached() -> pd.DataFrame:
    from hca.attribution.domains import load_v2_domains

    return load_v2_domains()


@lru_cache(maxsize=None)
def _v1_frame_cached() -> pd.DataFrame:
    from hca.attribution.domains import load_v1_domains

    return load_v1_domains()


def v2_frame() -> pd.DataFrame:
    """The de-duplicated v2 leaderboard with base-model domains attached (a fresh copy)."""
    return _v2_frame_cached().copy()


def v1_frame() -> pd.DataFrame:
    """The de-duplicated v1 leaderboard with base-model domains attached (a fresh copy)."""
    return _v1_frame_cached().copy()


def domain_data(frame: pd.DataFrame, domains: Sequence[str],
                benchmarks: Sequence[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """Rows of ``frame`` whose ``base_model`` is in ``domains``: scores and domain labels.

    Raises
    ------
    ValueError
        If a requested domain has no model, or a benchmark column is missing.
    """
    check_frame(frame, ["base_model", *benchmarks], context="domain_data")
    present = set(frame["base_model"].dropna())
    absent = [d for d in domains if d not in present]
    if absent:
        raise ValueError(f"no model is attributed to domain(s) {absent}")
    rows = frame[frame["base_model"].isin(list(domains))]
    return rows[list(benchmarks)].reset_index(drop=True), rows["base_model"].to_numpy(dtype=object)


def fit_v2(domains: Sequence[str] = PAPER_V2_FOUR, n_components: int = 3,
           random_state: Any = 0, *, frame: pd.DataFrame | None = None, **hca_params: Any):
    """Fit :class:`hca.estimator.HCA` on v2's six normalized benchmarks in ``domains``.

    The default is the paper's Section 4 fit: Llama-3-8B, Llama-3.1-8B, Qwen2.5-7B and
    Qwen2.5-14B, three latent factors, on :func:`v2_frame`. ``frame`` fits another frame
    with a ``base_model`` column instead (e.g. :func:`filter_below_base` or
    :func:`v2_frame_authors`); ``hca_params`` go to :class:`~hca.estimator.HCA`
    (``residual``, ``n_restarts``, ...).
    """
    return _fit(v2_frame() if frame is None else frame, domains, V2_BENCHMARKS,
                n_components, random_state, hca_params)


def fit_v1(domains: Sequence[str] = PAPER_V1_SINV, n_components: int = 3,
           random_state: Any = 0, *, frame: pd.DataFrame | None = None, **hca_params: Any):
    """Fit :class:`hca.estimator.HCA` on v1's six benchmarks in ``domains`` (Appendix H.4).

    ``frame`` fits another frame with a ``base_model`` column instead of :func:`v1_frame`.
    """
    return _fit(v1_frame() if frame is None else frame, domains, V1_BENCHMARKS,
                n_components, random_state, hca_params)


def _fit(frame: pd.DataFrame, domains: Sequence[str], benchmarks: Sequence[str],
         n_components: int, random_state: Any, hca_params: dict):
    from hca.estimator.model import HCA

    X, labels = domain_data(frame, domains, benchmarks)
    return HCA(n_components=n_components, random_state=random_state, **hca_params).fit(X, labels)


# ----------------------------------------------------------------------------------------
# Appendix H.3: models fine-tuned "badly", below their base model
# ----------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class BaseFilter:
    """Outcome of :func:`filter_below_base`.

    Attributes
    ----------
    frame : DataFrame
        The kept rows (all rows outside ``domains`` are kept).
    table : DataFrame
        Per domain: ``checkpoint``, its leaderboard ``base_average``, ``models`` before,
        ``removed`` and ``kept``.
    """

    frame: pd.DataFrame
    table: pd.DataFrame

    def summary(self) -> str:
        """One line per domain."""
        lines = ["Appendix H.3 filter: drop models whose average is below their base model's"]
        for dom, row in self.table.iterrows():
            lines.append(f"  {dom}: base {row['checkpoint']} average {row['base_average']:.2f}; "
                         f"{row['removed']} of {row['models']} removed, {row['kept']} kept")
        return "\n".join(lines)


def filter_below_base(frame: pd.DataFrame, domains: Sequence[str] = PAPER_V2_SINV,
                      checkpoints: Mapping[str, str] | None = None) -> BaseFilter:
    """Remove "badly" fine-tuned models (Appendix H.3).

    Rule: in every domain, a model whose leaderboard ``average`` (the mean of the six
    normalized scores) is strictly below the ``average`` of the domain's official pretrained
    checkpoint (:data:`PAPER_V2_PRETRAINED`, matched case-insensitively on ``model_id``)
    is removed. The checkpoint itself is kept.

    Raises
    ------
    ValueError
        If ``frame`` lacks a needed column, or a domain's checkpoint has no row.
    """
    check_frame(frame, ["model_id", "base_model", "average"], context="filter_below_base")
    checkpoints = dict(PAPER_V2_PRETRAINED if checkpoints is None else checkpoints)
    ids = frame["model_id"].astype(str).str.lower()
    drop = pd.Series(False, index=frame.index)
    rows = []
    for dom in domains:
        if dom not in checkpoints:
            raise ValueError(f"filter_below_base: no official checkpoint known for {dom!r}")
        ref = frame.loc[ids == checkpoints[dom].lower(), "average"]
        if ref.empty:
            raise ValueError(f"filter_below_base: checkpoint {checkpoints[dom]!r} of domain "
                             f"{dom!r} has no row in the frame")
        base_avg = float(ref.iloc[0])
        in_dom = (frame["base_model"] == dom).fillna(False).astype(bool)
        below = in_dom & (frame["average"] < base_avg)
        drop |= below
        rows.append({"domain": dom, "checkpoint": checkpoints[dom], "base_average": base_avg,
                     "models": int(in_dom.sum()), "removed": int(below.sum()),
                     "kept": int(in_dom.sum() - below.sum())})
    kept = frame.loc[~drop].copy()
    return BaseFilter(frame=kept, table=pd.DataFrame(rows).set_index("domain"))
