"""The paper's own analysis settings, as functions every chapter and the scorecard share.

Chapters must not copy code between them: the recovery chapter, the interpretation chapter,
the robustness page and ``python -m hca scorecard`` all obtain the paper's fits from here.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .data import V1_BENCHMARKS, V2_BENCHMARKS

__all__ = [
    "PAPER_V2_SINV",
    "PAPER_V2_FOUR",
    "PAPER_V1_DOMAINS",
    "PAPER_V1_SINV",
    "v2_frame",
    "v1_frame",
    "domain_data",
    "fit_v2",
    "fit_v1",
]

#: The paper's invariant set on v2 (Section 2) and the four domains it fits (Section 4).
PAPER_V2_SINV: tuple[str, ...] = (
    "Llama-3-8B", "Llama-3.1-8B", "Qwen2-7B", "Qwen2.5-7B", "Qwen2.5-14B")
PAPER_V2_FOUR: tuple[str, ...] = ("Llama-3-8B", "Llama-3.1-8B", "Qwen2.5-7B", "Qwen2.5-14B")
#: The six v1 domains of Appendix H.4 and the invariant set the paper reads off Figure 23b.
PAPER_V1_DOMAINS: tuple[str, ...] = (
    "Mistral-7B", "Llama-2-13B", "Llama-3-8B", "Llama-2-7B", "Llama-2-70B", "Mixtral-8x7B")
PAPER_V1_SINV: tuple[str, ...] = (
    "Mistral-7B", "Llama-2-13B", "Llama-3-8B", "Llama-2-70B", "Mixtral-8x7B")


@lru_cache(maxsize=None)
def _v2_frame_cached() -> pd.DataFrame:
    from .domains import load_v2_domains

    return load_v2_domains()


@lru_cache(maxsize=None)
def _v1_frame_cached() -> pd.DataFrame:
    from .domains import load_v1_domains

    return load_v1_domains()


def v2_frame() -> pd.DataFrame:
    """The de-duplicated v2 leaderboard with base-model domains attached (a fresh copy)."""
    return _v2_frame_cached().copy()


def v1_frame() -> pd.DataFrame:
    """The de-duplicated v1 leaderboard with base-model domains attached (a fresh copy)."""
    return _v1_frame_cached().copy()


def domain_data(df: pd.DataFrame, domains: Sequence[str],
                benchmarks: Sequence[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """Rows of ``df`` whose ``base_model`` is in ``domains``: scores and domain labels.

    Raises
    ------
    ValueError
        If a requested domain has no model, or a benchmark column is missing.
    """
    missing_cols = [b for b in benchmarks if b not in df.columns]
    if missing_cols:
        raise ValueError(f"benchmark column(s) {missing_cols} not in the frame")
    present = set(df["base_model"].dropna())
    absent = [d for d in domains if d not in present]
    if absent:
        raise ValueError(f"no model is attributed to domain(s) {absent}")
    rows = df[df["base_model"].isin(list(domains))]
    return rows[list(benchmarks)].reset_index(drop=True), rows["base_model"].to_numpy(dtype=object)


def fit_v2(domains: Sequence[str] = PAPER_V2_FOUR, n_components: int = 3,
           random_state: Any = 0, **hca_params: Any):
    """Fit :class:`hca.estimator.HCA` on v2's six normalized benchmarks in ``domains``.

    The default is the paper's Section 4 fit: Llama-3-8B, Llama-3.1-8B, Qwen2.5-7B and
    Qwen2.5-14B, three latent factors.
    """
    from .estimator import HCA

    X, labels = domain_data(v2_frame(), domains, V2_BENCHMARKS)
    return HCA(n_components=n_components, random_state=random_state, **hca_params).fit(X, labels)


def fit_v1(domains: Sequence[str] = PAPER_V1_SINV, n_components: int = 3,
           random_state: Any = 0, **hca_params: Any):
    """Fit :class:`hca.estimator.HCA` on v1's six benchmarks in ``domains`` (Appendix H.4)."""
    from .estimator import HCA

    X, labels = domain_data(v1_frame(), domains, V1_BENCHMARKS)
    return HCA(n_components=n_components, random_state=random_state, **hca_params).fit(X, labels)
