"""The HCA estimator: ICA per domain, the search over row orders, the fitted SCMs."""

from __future__ import annotations

from hca.estimator.ica import (  # noqa: F401
    DEFAULT_TOL,
    GAUSSIAN_LOGCOSH,
    ICA_METHODS,
    DomainICA,
    domain_ica,
    ica_negentropy,
    restart_seeds,
)
from hca.estimator.model import (  # noqa: F401
    HCA,
    clone_hca,
    mic_by_subset,
    mic_by_subset_many,
)
from hca.estimator.results import (  # noqa: F401
    DomainSCM,
    OLSAdjustment,
    r_squared,
)
from hca.estimator.search import (  # noqa: F401
    HCASearchResult,
    evaluate_order,
    hca_search,
)

__all__ = [
    "ICA_METHODS",
    "DEFAULT_TOL",
    "GAUSSIAN_LOGCOSH",
    "DomainICA",
    "domain_ica",
    "ica_negentropy",
    "restart_seeds",
    "HCASearchResult",
    "hca_search",
    "evaluate_order",
    "DomainSCM",
    "OLSAdjustment",
    "r_squared",
    "HCA",
    "clone_hca",
    "mic_by_subset",
    "mic_by_subset_many",
]
