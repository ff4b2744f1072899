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

from hca.estimator.model import HCA, mic_by_subset
from hca.estimator.results import DomainSCM, OLSAdjustment
from hca.estimator.search import hca_search
from hca.synthetic import simulate_scm

__version__ = "0.1.0"

__all__ = ["HCA", "OLSAdjustment", "DomainSCM", "hca_search", "mic_by_subset", "simulate_scm",
           "__version__"]
