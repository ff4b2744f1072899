"""Per-domain PCA, principal-subspace distances and the invariant set S_inv."""

from __future__ import annotations

from hca.subspace import distances, pca
from hca.subspace.distances import (  # noqa: F401
    BootstrapDistances,
    GroupComparison,
    InvariantSetRule,
    bootstrap_distance_matrix,
    bootstrap_sets,
    candidate_sets,
    compare_groups,
    distance_matrix,
    group_subspaces,
    invariant_set,
    invariant_set_rule,
    invariant_set_stability,
    null_threshold,
    pair_thresholds,
    split_half_null,
    split_half_nulls,
    subspace_distance_matrix,
)
from hca.subspace.pca import (  # noqa: F401
    ExplainedVariance,
    benchmark_leverage,
    effective_rank,
    explained_variance,
    ica_subspace,
    orthonormalize,
    principal_angles,
    principal_subspace,
    principal_subspaces,
    residual_variance,
    singular_spectrum,
    spectrum_table,
    subspace_distance,
    subspace_distances,
)
from hca.validation import top_groups  # noqa: F401

__all__ = [*distances.__all__, *pca.__all__, "top_groups"]
