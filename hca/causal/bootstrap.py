"""Bootstrap resampling (optionally by cluster) and percentile intervals."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


# ----------------------------------------------------------------------------- bootstrap core
def resampler(
    t: np.ndarray, domains: np.ndarray | None, within: bool = False
) -> Callable[[np.random.Generator], np.ndarray]:
    """A bootstrap draw ``rng -> indices``: units within each arm, or whole clusters when
    ``domains`` (with ``within=True``: units within each cluster, every cluster kept once);
    the groups are found once, not for every replicate."""
    if domains is not None and within:
        groups = [np.flatnonzero(domains == g) for g in np.unique(domains)]
        return lambda rng: np.concatenate([m[rng.integers(0, len(m), size=len(m))] for m in groups])
    if domains is not None:
        labels, inverse = np.unique(domains, return_inverse=True)
        members = [np.flatnonzero(inverse == g) for g in range(len(labels))]
        n = len(labels)
        return lambda rng: np.concatenate([members[g] for g in rng.integers(0, n, size=n)])
    arms = [a for a in (np.flatnonzero(t == arm) for arm in (0, 1)) if len(a)]
    return lambda rng: np.concatenate([a[rng.integers(0, len(a), size=len(a))] for a in arms])


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
    draw = resampler(t, domains)
    out, failed = [], 0
    for _ in range(n_boot):
        idx = draw(rng)
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
