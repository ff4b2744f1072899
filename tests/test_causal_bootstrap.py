"""hca.causal.bootstrap: the resampler found once draws what the per-replicate version drew."""

from __future__ import annotations

import numpy as np
import pytest

from hca.causal.bootstrap import resampler


def reference(rng, t, domains, within=False):
    """The resampling as written before the groups were found once (one np.unique a call)."""
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


@pytest.mark.parametrize("within", [False, True])
@pytest.mark.parametrize("clustered", [False, True])
def test_resampler_draws_the_same_stream(within, clustered):
    r = np.random.default_rng(0)
    t = r.integers(0, 2, 200)
    domains = r.choice(["a", "b", "c", "d"], 200) if clustered else None
    draw = resampler(t, domains, within)
    a, b = (np.random.default_rng(7) for _ in range(2))
    for _ in range(20):
        idx = draw(a)
        np.testing.assert_array_equal(idx, reference(b, t, domains, within))
    if clustered and within:  # every cluster kept with its size
        np.testing.assert_array_equal(np.sort(domains[idx]), np.sort(domains))
    if not clustered:  # every arm keeps its size
        assert (t[idx] == 1).sum() == (t == 1).sum()
