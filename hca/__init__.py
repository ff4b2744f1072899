"""hca: Hierarchical Component Analysis for LLM leaderboards.

A small library for the methods of Jin, Syrgkanis, Kakade & Zhang (2025), "Discovering
Hierarchical Latent Capabilities of Language Models via Causal Representation Learning".

Layout (the data flow of the book: load -> attribute base models -> domain matrices ->
estimator -> results -> figure)
----------------------------------------------------------------------------------------------
data/             the data: pinned public files and their tidy loaders
  registry          the pinned files: registry, verified fetch, cache
  loaders           tidy leaderboard and base-model frames (one row per model)
  tables            the small cited tables shipped inside the package (importlib.resources)
  frames            leaderboard frame -> (X, domains), the one step every estimator starts from
attribution/      leaderboard models -> base models (the paper's domains), pretraining compute
  catalogue         the canonical base models (BaseModel, BASE_MODELS), from base_models.csv
  identify          layered identification of every model's base model (Appendix B)
  authors           the authors' own domain rule, re-implemented as a labelled variant
  compute           pretraining tokens and compute C = 6 N D
  domains           leaderboards with domains attached; N/D regimes; audits
validation        shared input checks on sklearn.utils.validation (one error style)
subspace/         per-domain PCA and principal subspaces (Section 2)
  pca               spectra, effective ranks, principal subspaces and angles
  distances         subspace distances, split-half nulls, the invariant set S_inv
estimator/        the HCA estimator (Section 3, Appendix C)
  ica               step 1: ICA per domain (FastICA, Picard-O, Picard; restarts; seed batches)
  fastica_batch     FastICA from many seeds at once (vectorised; equal to scikit-learn's)
  search            steps 2-3: row residuals and the search over row orders (MIC), batched
  search_tree       the tree of row-order prefixes with MIC bounds and its beam search
  results           DomainSCM, OLSAdjustment, the OLS adjustment and r_squared
  model             the HCA class, clone_hca, mic_by_subset (Figure 18)
  ensemble          the per-domain ICA as one value (domain_icas), ica_reproducible, optima
  progress          the `progress` callback of a fit (ICA per domain, search levels)
synthetic         simulated exact and inexact linear SCMs
synthetic_alt     a second simulator, built apart: leaderboard-like scores of exact SCMs
stability         seed, bootstrap and subset sweeps of HCA; MIC under rotations; recovery study
interpret         the factors' alignment with benchmarks (Table 2), compute, instruct shifts
causal/           scaling laws and the effect of fine-tuning (Appendices D, F)
  sigmoid           the sigmoid scaling law and its bootstrap; warm refits, one or a batch
  trf_batch         scipy's bounded least squares (trf) on many problems at once (vectorised)
  ate               ATE estimators: backdoor, IPW, AIPW (propensity by LogisticRegression)
  overlap           overlap diagnostics, per-stratum effects, IPW balance
  frames            analysis frames: treatment, lineage, compute
  panels            sigmoid and ATE fits over outcomes and subsets (joblib)
  bootstrap         resampling (optionally by domain) and percentile intervals
completion/       matrix completion, global vs local (Remark 1, Appendix G)
  estimators        SoftImpute, StructuredCompletion, ColumnMeans
  experiment        global vs local completion of one domain, sweeps and their summaries
  masks             missing-entry masks and the error on hidden entries
plots/            every figure function (ax=None, returns the axes; pyplot imported lazily)
  axes              get_axes / get_axes_grid ("use ax or make a figure"), annotate_cells
  estimator         HCA fits: matrices, causal graphs, MIC by subset
  subspace          spectra and subspace distances
  interpret         the factors' alignment, compute and instruct shifts
  causal            scaling laws, ATEs and overlap
  completion        matrix-completion errors
  mmlu              clustered subject correlations
  recovery          recovered DGPs, every domain's causal graph, shares of refits
  robustness        the robustness overview
  style             the book's figure style (font sizes readable on the page; figure data)
  tables            tables for the page: numbered captions, no NaN or index columns
  scorecard         the verdict summary figure (claims by chapter x setup)
  report            the figure of `hca fit --plot` (unmixing, R^2 table, causal graphs)
paper/            the paper's own settings and analyses
  constants         every constant of the paper (domain sets, roles, checkpoints)
  shape             a chapter's declared shape (ChapterSpec: compute, ensemble runs, evidence)
  chapters          the explicit list of chapters (each module's CHAPTER)
  setups            the two setups every claim is judged under: authors' and careful
  replication       the paper's frames and the shared fits of every chapter, per setup
  cache             results once per process (read-only copies) and on disk per build
  plain             results as plain data: one .npz of arrays and a JSON tree, no pickle
  claims            the claim-evaluator registry and the shared verdict rules
  words             numbers that say what they are (k of n, median and range) and prose slips
  data              the data chapter: domain sizes under both rules, attribution audits
  pca               the PCA chapter: Section 2 and Appendix E under both setups
  mmlu              MMLU by subject (Appendix H.5)
  mmlu_readouts     its readouts of a fit: the subject of every factor, refits over seeds
  recovery          the recovery chapter under both setups (Figure 18, Table 3, H.3, claims)
  recovery_stability  its headline over bootstrap x seed refits; the domain-rule evidence
  interpretation    the factors' meaning: Figure 3, Tables 2a-2b, Figure 8, Appendices D, I
  scaling           sigmoid laws and fine-tuning ATEs, the authors' scaling_law.ipynb setup
  completion        Appendix G: global vs local completion at the text's and the code's rate
  appendix_g        Appendix G's designs (this book's and the authors' code's) and their runner
  v1                Leaderboard v1 (Appendix H.4)
  robustness        the headline results under perturbations
  robustness_settings  the robustness page's settings, one per perturbation
  scorecard         every claim of the paper under both setups; verdict boxes, JSON
  glue              the notebooks' one glue helper and cell formatters
  pages             tables, shares and figure adapters of the chapter pages
  summaries         each chapter's opening paragraph, written from its scorecard rows
cli/              python -m hca: data, fit, scorecard
  data              python -m hca data: fetch and verify the pinned files
  fit               python -m hca fit on a user's CSV
  sources           where the CSV comes from: a regular file, or a pipe read once
  labels            the domain column as written: spellings merged, placeholders noted
  scales            a domain, rows or part of a column on another scale than the rest
  inputs            reading and checking the user's CSV
  estimate          the work and memory of a fit, estimated before it starts (calibrated)
  memory            how much more memory the process may use (rlimits, cgroup, RAM)
  report            the fit report and its JSON Schema
  scorecard         python -m hca scorecard's arguments (it runs paper/scorecard)
  notes             warnings as one-line notes
  outputs           files written without harming them (atomic, links followed, devices)
__main__          entry point of python -m hca
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "HCA",
    "OLSAdjustment",
    "DomainSCM",
    "hca_search",
    "mic_by_subset",
    "simulate_scm",
    "__version__",
]

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
