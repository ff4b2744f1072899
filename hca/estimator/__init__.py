"""The HCA estimator: ICA per domain, the search over row orders, the fitted SCMs.
"""

from __future__ import annotations

from hca.estimator.ica import (  # noqa: F401
    GAUSSIAN_LOGCOSH,
    DomainICA,
    domain_ica,
    domain_unmixings,
    ica_negentropy,
    picard_ica,
    restart_seeds,
)
from hca.estimator.model import (  # noqa: F401
    HCA,
    mic_by_subset,
)
from hca.estimator.results import (  # noqa: F401
    DomainSCM,
    OLSAdjustment,
)
from hca.estimator.search import (  # noqa: F401
    HCASearchResult,
    evaluate_order,
    hca_search,
)

__all__ = [
    "GAUSSIAN_LOGCOSH",
    "DomainICA",
    "domain_ica",
    "ica_negentropy",
    "restart_seeds",
    "picard_ica",
    "domain_unmixings",
    "HCASearchResult",
    "hca_search",
    "evaluate_order",
    "DomainSCM",
    "OLSAdjustment",
    "HCA",
    "mic_by_subset",
]
