"""Sigmoid scaling laws and average treatment effects of fine-tuning (Appendices D, F)."""

from __future__ import annotations

from hca.causal import ate, frames, overlap, panels, sigmoid
from hca.causal.ate import (  # noqa: F401
    ATEResult,
    ate_aipw,
    ate_backdoor,
    ate_ipw,
    ate_ipw_strata,
    propensity_scores,
)
from hca.causal.frames import (  # noqa: F401
    AUTHORS_TYPES,
    PRETRAINED_TYPES,
    authors_scaling_frame,
    base_lineage,
    family_size_means,
    fine_tuning_treatment,
    rows_by_name,
    scaling_frame,
    size_monotonicity,
)
from hca.causal.overlap import (  # noqa: F401
    ipw_balance,
    stratum_effects,
)
from hca.causal.panels import (  # noqa: F401
    ATEPanel,
    SigmoidPanel,
    ate_panel,
    fit_sigmoid_panel,
)
from hca.causal.sigmoid import (  # noqa: F401
    AUTHORS_LOG_OFFSET,
    PARAM_NAMES,
    SigmoidBootstrap,
    SigmoidFit,
    WarmRefits,
    fit_sigmoid_curve_fit,
    fit_sigmoid_law,
    sigmoid_law,
    warm_refit,
    warm_refit_batch,
    warm_refit_counted,
)

__all__ = [*ate.__all__, *frames.__all__, *overlap.__all__, *panels.__all__, *sigmoid.__all__]
