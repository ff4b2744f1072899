"""Per-domain PCA, principal-subspace distances and the invariant set S_inv.
"""

from __future__ import annotations

from hca.subspace.distances import (  # noqa: F401
    BootstrapDistances,
    GroupComparison,
    bootstrap_distance_matrix,
    candidate_sets,
    compare_groups,
    distance_matrix,
    group_subspaces,
    invariant_set,
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
    residual_variance,
    singular_spectrum,
    spectrum_table,
    subspace_distance,
)
from hca.validation import top_groups  # noqa: F401

__all__ = [
    "top_groups",
    "ExplainedVariance",
    "explained_variance",
    "effective_rank",
    "principal_subspace",
    "ica_subspace",
    "orthonormalize",
    "principal_angles",
    "subspace_distance",
    "benchmark_leverage",
    "residual_variance",
    "spectrum_table",
    "singular_spectrum",
    "BootstrapDistances",
    "group_subspaces",
    "subspace_distance_matrix",
    "distance_matrix",
    "bootstrap_distance_matrix",
    "split_half_null",
    "split_half_nulls",
    "null_threshold",
    "pair_thresholds",
    "invariant_set",
    "candidate_sets",
    "invariant_set_stability",
    "GroupComparison",
    "compare_groups",
]
