"""Attributing leaderboard models to base models (the paper's domains) and pretraining compute."""

from __future__ import annotations

from hca.attribution import compute, domains
from hca.attribution.authors import (  # noqa: F401
    authors_base_model,
    authors_token_families,
    authors_token_family,
    v2_frame_authors,
)
from hca.attribution.catalogue import (  # noqa: F401
    BASE_MODELS,
    LAYERS,
    BaseModel,
)
from hca.attribution.compute import (  # noqa: F401
    add_compute,
    log_compute,
    pretraining_compute,
    pretraining_flops,
    pretraining_tokens,
)
from hca.attribution.domains import (  # noqa: F401
    REGIMES,
    AgreementCheck,
    RegimeCuts,
    attach_domains,
    attribution_sample,
    authors_agreement,
    coarse_family,
    hub_holdout_agreement,
    layer_shares,
    load_v1_domains,
    load_v2_domains,
    nd_regimes,
    stack_groups,
    top_within,
    unattributed_reasons,
)
from hca.attribution.identify import (  # noqa: F401
    Attribution,
    domain_sizes,
    identify,
    identify_name,
    join_v1_metadata,
)

__all__ = [
    *compute.__all__,
    *domains.__all__,
    "BaseModel",
    "BASE_MODELS",
    "LAYERS",
    "Attribution",
    "identify",
    "identify_name",
    "domain_sizes",
    "join_v1_metadata",
    "authors_base_model",
    "authors_token_family",
    "authors_token_families",
    "v2_frame_authors",
]
