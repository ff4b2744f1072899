"""Matrix completion (soft-impute, structured completion, column means) and the comparison of
global and local completion of one domain (Appendix G's designs: :mod:`hca.paper.appendix_g`).
"""

from __future__ import annotations

from hca.completion import estimators, experiment, masks
from hca.completion.estimators import (  # noqa: F401
    ColumnMeans,
    SoftImpute,
    StructuredCompletion,
    default_shrinkage_grid,
)
from hca.completion.experiment import (  # noqa: F401
    AUTHORS_SOFT_IMPUTE,
    compare_approaches,
    domain_matrix,
    global_vs_local,
    global_vs_local_many,
    local_row_positions,
    paired_rmse,
    random_mask_diagnostics,
    rmse_by_row_observed,
)
from hca.completion.masks import (  # noqa: F401
    mask_block,
    mask_blocks,
    mask_random,
    mask_randoms,
    observed_column_sets,
    rmse_on_mask,
)

__all__ = [*estimators.__all__, *masks.__all__, *experiment.__all__]
