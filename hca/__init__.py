"""hca: Hierarchical Component Analysis for LLM leaderboards.

A small library for the methods of Jin, Syrgkanis, Kakade & Zhang (2025), "Discovering
Hierarchical Latent Capabilities of Language Models via Causal Representation Learning".

Modules
-------
data          pinned, verified public data files and tidy loaders
base_models   base-model identification (the paper's domains) and pretraining compute
domains       leaderboards with domains attached; audit helpers
subspace      per-domain PCA, principal-subspace distances, the invariant set S_inv
estimator     the HCA estimator (ICA per domain, row alignment, MIC, OLS adjustment)
synthetic     simulated exact and inexact linear SCMs
stability     seed and bootstrap stability of HCA results
plots         plot helpers for HCA results
interpret     alignment of latent factors with benchmarks (Table 2)
scaling       sigmoid scaling laws and average treatment effects of fine-tuning
completion    soft-impute and structured matrix completion (global vs local)
mmlu          the MMLU-by-task analyses
replication   the paper's settings and shared fits used by every chapter
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["HCA", "OLSAdjustment", "DomainSCM", "hca_search", "mic_by_subset", "simulate_scm",
           "__version__"]

# The top-level names are imported on first use (PEP 562), so that ``python -m hca --help``
# does not pay for numpy, pandas and scikit-learn.
_LAZY = {
    "HCA": "hca.estimator.model",
    "mic_by_subset": "hca.estimator.model",
    "DomainSCM": "hca.estimator.results",
    "OLSAdjustment": "hca.estimator.results",
    "hca_search": "hca.estimator.search",
    "simulate_scm": "hca.synthetic",
}

if TYPE_CHECKING:  # pragma: no cover
    from hca.estimator.model import HCA, mic_by_subset
    from hca.estimator.results import DomainSCM, OLSAdjustment
    from hca.estimator.search import hca_search
    from hca.synthetic import simulate_scm


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hca' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
