"""Every figure function of the library; each takes ``ax=None`` and returns the axes."""

from __future__ import annotations

from hca.plots import causal, completion, estimator, interpret, mmlu, recovery, robustness, subspace
from hca.plots.axes import benchmark_label  # noqa: F401
from hca.plots.causal import (  # noqa: F401
    plot_ate,
    plot_ate_steps,
    plot_family_sizes,
    plot_propensity_strata,
    plot_sigmoid_fit,
    plot_sigmoid_panel,
)
from hca.plots.completion import (  # noqa: F401
    plot_rmse_distributions,
    plot_rmse_vs_p,
    plot_rmse_vs_share,
    plot_set_means,
)
from hca.plots.estimator import (  # noqa: F401
    plot_causal_graph,
    plot_domain_graphs,
    plot_domain_scms,
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
    plot_alignment_panels,
    plot_compute_factor,
    plot_instruct_shift,
    plot_lookup_cells,
    plot_r2_comparison,
)
from hca.plots.mmlu import (  # noqa: F401
    plot_clustered_correlation,
    plot_mic_panels,
    plot_runs_mic,
    plot_subject_panels,
)
from hca.plots.recovery import (  # noqa: F401
    plot_benchmark_ratios,
    plot_causal_graphs,
    plot_claim_shares,
    plot_recovered_dgp,
)
from hca.plots.robustness import plot_robustness, plot_s_inv_membership  # noqa: F401
from hca.plots.scorecard import VERDICT_COLORS, plot_verdict_summary  # noqa: F401
from hca.plots.style import use_book_style  # noqa: F401
from hca.plots.subspace import (  # noqa: F401
    plot_distance_matrix,
    plot_explained_variance,
    plot_leverage,
    plot_null_distributions,
    plot_pair_intervals,
)
from hca.plots.tables import captioned, table_markdown  # noqa: F401

__all__ = [
    *causal.__all__,
    *completion.__all__,
    *estimator.__all__,
    *interpret.__all__,
    *mmlu.__all__,
    *recovery.__all__,
    *robustness.__all__,
    *subspace.__all__,
    "benchmark_label",
    "use_book_style",
    "captioned",
    "plot_verdict_summary",
    "table_markdown",
]
