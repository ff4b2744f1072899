"""Bootstrap resampling (optionally by cluster) and percentile intervals."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    pass


# ----------------------------------------------------------------------------- bootstrap core
def resample_indices(
    rng: np.random.Generator,
    t: np.ndarray,
    domains: np.ndarray | None,
    within: bool = False,
) -> np.ndarray:
    """One bootstrap resample: units within each arm, or whole clusters when ``domains``
    (with ``within=True``: units within each cluster, every cluster kept once)."""
    if domains is not None and within:
        parts = []
        for g in np.unique(domains):
            members = np.flatnonzero(domains == g)
            parts.append(members[rng.integers(0, len(members), size=len(members))])
        return np.concatenate(parts)
    if domains is not None:
        labels, inverse = np.unique(domains, return_inverse=True)
        members = [np.flatnonzero(inverse == g) for g in range(len(labels))]
        pick = rng.integers(0, len(labels), size=len(labels))
        return np.concatenate([members[g] for g in pick])
    parts = []
    for arm in (0, 1):
        arm_idx = np.flatnonzero(t == arm)
        if len(arm_idx):
            parts.append(arm_idx[rng.integers(0, len(arm_idx), size=len(arm_idx))])
    return np.concatenate(parts)


def run_bootstrap(
    stat: Callable[[np.ndarray], np.ndarray],
    t: np.ndarray,
    n_boot: int,
    random_state,
    domains: np.ndarray | None,
    what: str,
) -> tuple[np.ndarray, int]:
    """Run ``stat`` on ``n_boot`` resamples; failed replicates (ValueError) are dropped."""
    rng = np.random.default_rng(random_state)
    out, failed = [], 0
    for _ in range(n_boot):
        idx = resample_indices(rng, t, domains)
        try:
            val = np.atleast_1d(np.asarray(stat(idx), dtype=float))
        except ValueError:
            failed += 1
            continue
        if not np.all(np.isfinite(val)):
            failed += 1
            continue
        out.append(val)
    if n_boot > 0 and len(out) < (n_boot + 1) // 2:
        raise ValueError(
            f"bootstrap for {what}: only {len(out)} of {n_boot} replicates succeeded; "
            "the estimate is too fragile to bootstrap (check overlap / sample size)"
        )
    return (np.vstack(out) if out else np.empty((0, 0))), failed


def percentile_ci(samples: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1.0 - ci) / 2.0
    return (np.quantile(samples, alpha, axis=0), np.quantile(samples, 1.0 - alpha, axis=0))
