"""Every figure function of the library; each takes ``ax=None`` and returns the axes.
"""

from __future__ import annotations

from hca.plots.axes import (  # noqa: F401
    benchmark_label,
)
from hca.plots.causal import (  # noqa: F401
    plot_ate,
    plot_ate_panel,
    plot_ate_steps,
    plot_family_sizes,
    plot_overlap,
    plot_propensity_strata,
    plot_sigmoid_fit,
    plot_sigmoid_panel,
)
from hca.plots.completion import (  # noqa: F401
    plot_rmse_by_column_set,
    plot_rmse_distributions,
    plot_rmse_vs_p,
)
from hca.plots.estimator import (  # noqa: F401
    plot_causal_graph,
    plot_distribution,
    plot_matrix,
    plot_mic_by_subset,
    plot_mixing,
    plot_reconstruction_error,
    plot_scm_weights,
    plot_unmixing,
)
from hca.plots.interpret import (  # noqa: F401
    plot_adjusted_unmixing,
    plot_alignment,
    plot_compute,
    plot_instruct_shift,
)
from hca.plots.mmlu import (  # noqa: F401
    plot_clustered_correlation,
)
from hca.plots.robustness import (  # noqa: F401
    plot_robustness,
    plot_s_inv_membership,
)
from hca.plots.style import use_book_style  # noqa: F401
from hca.plots.subspace import (  # noqa: F401
    plot_distance_matrix,
    plot_explained_variance,
    plot_null_vs_observed,
    plot_pair_intervals,
)

__all__ = [
    "benchmark_label",
    "plot_matrix",
    "plot_unmixing",
    "plot_mixing",
    "plot_scm_weights",
    "plot_causal_graph",
    "plot_mic_by_subset",
    "plot_reconstruction_error",
    "plot_distribution",
    "plot_explained_variance",
    "plot_distance_matrix",
    "plot_null_vs_observed",
    "plot_pair_intervals",
    "plot_rmse_distributions",
    "plot_rmse_vs_p",
    "plot_rmse_by_column_set",
    "plot_sigmoid_fit",
    "plot_ate",
    "plot_overlap",
    "plot_family_sizes",
    "plot_sigmoid_panel",
    "plot_ate_panel",
    "plot_ate_steps",
    "plot_propensity_strata",
    "plot_adjusted_unmixing",
    "plot_alignment",
    "plot_compute",
    "plot_instruct_shift",
    "plot_robustness",
    "plot_s_inv_membership",
    "plot_clustered_correlation",
    "use_book_style",
]
