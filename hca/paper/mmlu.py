"""MMLU by subject (Appendix H.5): the chapter's analysis, its claims, and its helpers.

The chapter (:func:`run`, computed once per setup, :mod:`hca.paper.cache`) fits HCA with three
factors on three related subjects at a time: mathematics and physics on the settings' choices
of base models (the paper's by default), with the MIC of every subset of the available base
models, and Figure 30's subjects on the physics choice and on two alternatives; every fit is
repeated over FastICA seeds (:class:`Settings`, whose fields a reader may change). The
evaluators judge the paper's claims; a claim about the paper's choice of base models does not
apply to other ones. The leaderboard has no public domain rule of the authors, so both setups
(:mod:`hca.paper.setups`) use this book's attribution (:func:`mmlu_frame`, shared:
:func:`mmlu_data`) and differ in the estimator's options: HCA's residuals, and under the
careful setup the best of several FastICA starts per run in the cross-subject fit
(:data:`CAREFUL_RESTARTS`, measured by :func:`restart_measurement`); where the paper states no
subset size (Figure 30's alternative choice of base models) the setup's ``min_subset_size``
applies. Refits use ``search="sequential"``, which
returns the exhaustive optimum when it certifies it; ``n_uncertified`` counts the others.
Every fit allows FastICA :data:`MAX_ITER` iterations: at the default 1,000 the physics fit's
Llama-2-70B stops short of convergence at most seeds (it needs about 1,300), and a run stopped
mid-way ends wherever rounding takes it, which differs between processors (convergence, not
the MIC, decides; Figure 30's Llama-2-13B does not converge at any budget, and its claims are
read from the ensemble of seeds like every other).

The MMLU-by-task leaderboard lists 57 subject accuracies per model but only names and
parameter counts. :func:`mmlu_frame` joins v1's architecture and date by model id
(:func:`hca.attribution.join_v1_metadata`) and attributes every row to a base model
(:func:`hca.attribution.attach_domains`), so that the same domains as in Appendix H.4 exist.

The readouts of a fit on as many subjects as components (which subject each factor is closest
to, :func:`factor_alignment`, and a refit over seeds read off as a row, :func:`seed_fit_row`)
are :mod:`hca.paper.mmlu_readouts`, re-exported here. The chapter's page
(:func:`hca.paper.scorecard.chapter_page`) is written by :func:`answer`, the section texts
(:func:`math_text`, :func:`physics_text`, :func:`cross_text`, :func:`fragile_text`,
:func:`stability_text`, :func:`why_texts`), the tables (:func:`seed_table`,
:func:`cross_table`, :func:`convergence_table`, :func:`optima_table`) and the figures
(:func:`subject_figure`, :func:`mic_figure`, :func:`seeds_figure`), all from the page.
"""

from __future__ import annotations

import difflib
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from hca import stability as st
from hca import subspace as ss
from hca.attribution.domains import attach_domains
from hca.attribution.identify import join_v1_metadata
from hca.data.loaders import load_leaderboard_v1, load_mmlu_by_task
from hca.data.registry import MMLU_SUBJECTS, benchmark_label
from hca.estimator.ensemble import canonical_rows, same_solution
from hca.estimator.model import HCA, mic_by_subset_many
from hca.interpret import cluster_order
from hca.paper.cache import cached
from hca.paper.claims import (
    MAJOR_SHARE,
    SAME_OPTIMUM,
    Outcome,
    RunEvidence,
    claim,
    grade,
    numeric_verdict,
    objective_order,
    paper_list,
)
from hca.paper.constants import (
    CROSS_SUBJECTS,
    MATH_SUBJECTS,
    PAPER_MATH_DOMAINS,
    PAPER_PHYSICS_DOMAINS,
    PAPER_V1_BASES,
    PHYSICS_SUBJECTS,
)
from hca.paper.mmlu_readouts import factor_alignment, seed_fit_row, subset_mic
from hca.paper.replication import domain_data, estimator
from hca.paper.setups import SETUP_NAMES, Setup
from hca.paper.shape import ChapterSpec
from hca.paper.words import count, join_words, k_of_n, median_range, seed_list, whole
from hca.validation import check_frame

__all__ = [
    "subject_columns",
    "subject_label",
    "short_label",
    "mmlu_frame",
    "domain_counts",
    "cluster_order",
    "factor_alignment",
    "subset_mic",
    "seed_fit_row",
    "Settings",
    "MMLUData",
    "SubjectFit",
    "MMLUResults",
    "mmlu_data",
    "run",
    "MAX_ITER",
    "FITS",
    "CAREFUL_RESTARTS",
    "check_available",
    "RestartMeasurement",
    "restart_measurement",
    "FIT_CLAIMS",
    "CLAIM_NAMES",
    "SETUP_WORDS",
    "SETUP_LABELS",
    "FIT_WORDS",
    "SHORT_NAMES",
    "holds",
    "paper_cross",
    "answer",
    "setups_text",
    "cross_cause",
    "fragile_text",
    "optima_table",
    "math_text",
    "mixture_share",
    "physics_text",
    "cross_text",
    "stability_text",
    "why_texts",
    "seed_table",
    "cross_table",
    "convergence_table",
    "subject_figure",
    "mic_figure",
    "seeds_figure",
]


def subject_columns(subjects: Sequence[str]) -> list[str]:
    """Column names ``mmlu_<subject>`` for MMLU subjects, with or without the prefix.

    Raises
    ------
    ValueError
        Naming an unknown subject and the closest existing ones (e.g.
        ``college_electrical_engineering`` -> ``electrical_engineering``).
    """
    if isinstance(subjects, str):
        raise TypeError("subjects must be a sequence of subject names, not one string")
    out = []
    for s in subjects:
        name = str(s).lower()
        name = name[len("mmlu_") :] if name.startswith("mmlu_") else name
        if name not in MMLU_SUBJECTS:
            close = difflib.get_close_matches(name, MMLU_SUBJECTS, n=3, cutoff=0.5)
            raise ValueError(f"{s!r} is not an MMLU subject; closest: {close}")
        out.append(f"mmlu_{name}")
    return out


#: Display name of an ``mmlu_<subject>`` column (``"college mathematics"``): the library's
#: :func:`hca.data.benchmark_label`, under the name this chapter uses.
subject_label = benchmark_label


def _frame() -> pd.DataFrame:
    return attach_domains(join_v1_metadata(load_mmlu_by_task(), load_leaderboard_v1()))


def mmlu_frame() -> pd.DataFrame:
    """The MMLU-by-task leaderboard with v1 metadata and base-model domains (a fresh copy).

    Returns
    -------
    DataFrame
        :func:`hca.data.load_mmlu_by_task` plus ``architecture`` and ``date`` from v1
        (matched by model id) and the columns of :func:`hca.attribution.attach_domains`
        (``base_model``, ``layer``, ``evidence``, ...).
    """
    return cached("mmlu_frame", _frame)


def domain_counts(
    frame: pd.DataFrame, candidates: Sequence[str], n_benchmarks: int
) -> pd.DataFrame:
    """Models per candidate domain and whether HCA can use the domain.

    A domain is usable when it has more models than benchmarks (FastICA with as many
    components as benchmarks needs at least that many rows; one more keeps the sample
    covariance non-singular after centring).

    Returns
    -------
    DataFrame
        Index ``candidates``; columns ``n_models`` and ``usable``.
    """
    check_frame(frame, ["base_model"], context="domain_counts (use mmlu_frame())")
    counts = frame["base_model"].value_counts()
    n = pd.Series(
        [int(counts.get(c, 0)) for c in candidates], index=list(candidates), name="n_models"
    )
    out = n.to_frame()
    out["usable"] = out["n_models"] > n_benchmarks
    out.index.name = "base_model"
    return out


# =========================================================================== the chapter
#: FastICA iterations of every fit of the chapter (see the module docstring).
MAX_ITER = 5000

#: The chapter's three subject fits by name (Figures 28, 29 and 30): the subjects each fits.
#: Figure 30's subjects are also fitted on the alternative choices of base models.
FITS: dict[str, tuple[str, ...]] = {
    "math": MATH_SUBJECTS,
    "physics": PHYSICS_SUBJECTS,
    "cross": CROSS_SUBJECTS,
}

#: FastICA starts per run under the careful setup, per subject fit (a fit not named: one).
#: Each run keeps the start with the largest objective (``HCA(n_restarts=k)``: run ``s`` keeps
#: the best of the starts ``s .. s + k - 1``, so neighbouring runs share starts), FastICA's
#: standard remedy for local optima, applied where one optimum is clearly better
#: (CONTRIBUTING.md, the rule of 2026-11-29, step 5c). Measured with
#: :func:`restart_measurement` (``benchmarks/bench_mmlu_restarts.py``; 2-core machine,
#: 2026-11-29) over the 40 runs of seeds 0-39 on the book's data. Cross-subject fit: 76 of 400
#: single starts land in Mixtral-8x7B's better optimum (objective median 0.00278 against 0.00132
#: in the optimum of 321); the best of k starts finds it in 7 of the 40 runs for k = 1, 26 for
#: 5, 39 for 10 and all 40 for 15, 20, 30 and 40, and no run is rounding-sensitive from k = 15.
#: By the single starts' rate, 10 starts leave an expected 4.9 of 40 runs in the worse optimum
#: and 20 starts 0.6, so 20 starts find it in nearly every run, here and on another processor
#: or seed set. They cost about 0.5 s of FastICA per 40 runs (59 distinct starts instead of
#: 40); the whole chapter under both setups takes 12.1 s of CPU from scratch instead of 9.3 s.
#: Physics fit: Llama-2-70B's two major optima cannot be told apart by the objective (medians
#: 0.00417 and 0.00416, within the spread of one; step 4), so it keeps one start: the best of
#: 10 or more starts would land every run in the optimum whose best starts happen to score
#: highest, and would move the careful setup's physics MIC from not determined to reproduced
#: on a difference the rule calls noise. The mathematics fit has no rounding-sensitive run.
CAREFUL_RESTARTS: tuple[tuple[str, int], ...] = (("cross", 20),)


@dataclass(frozen=True)
class Settings:
    """The MMLU chapter's analysis choices (defaults: the book's).

    Attributes
    ----------
    math_domains : tuple of str
        Base models of the mathematics fit (Figure 28; the paper's
        :data:`~hca.paper.constants.PAPER_MATH_DOMAINS`); also Figure 30's "mathematics
        choice".
    physics_domains : tuple of str
        Base models of the physics fit (Figure 29; the paper's
        :data:`~hca.paper.constants.PAPER_PHYSICS_DOMAINS`) and of Figure 30's fit, for which
        the paper names none.
    careful_restarts : tuple of (str, int)
        FastICA starts per run under the careful setup, per subject fit (``"math"``,
        ``"physics"``, ``"cross"``; a fit not named gets one start, as under the authors'
        setup): :data:`CAREFUL_RESTARTS`, with its measurement.
    setups : tuple of str
        The setups to run (:data:`hca.paper.setups.SETUP_NAMES`: both).
    n_seeds : int
        FastICA seeds of the ensemble every fit-based claim is read from (seeds
        ``0 .. n_seeds - 1``; :class:`hca.paper.shape.EnsembleSettings`). They are also the
        seeds of the refits each run's claims compare it with (the criteria's "in at least half
        the seeds"): every run of the first ``n_seeds`` is one of them.
    n_seeds_more : int
        The larger ensemble a claim is read from when a share of the first runs lies
        near a threshold or one of them is rounding-sensitive.
    sweep_seeds : tuple of int
        Seeds over which the MIC-by-subset sweeps of mathematics and physics are repeated.
    alt_seeds : tuple of int
        Seeds of the refits on the alternative base models of Figure 30.
    n_jobs : int or None
        joblib jobs of the sweeps (None: the active backend's default, one process).

    Raises
    ------
    ValueError
        On construction, naming the field, its value and what is expected: a domain list
        with fewer than two base models, a repeated one or one that is not among Appendix
        H.4's six (:data:`~hca.paper.constants.PAPER_V1_BASES`); restarts for a fit that is
        not one of :data:`FITS` or a number of starts below one; seeds that are not integers.
        Base models with too few models on the MMLU leaderboard are refused when the chapter
        is computed (before any fit).
    """

    math_domains: tuple[str, ...] = PAPER_MATH_DOMAINS  # base models of the mathematics fit
    physics_domains: tuple[str, ...] = PAPER_PHYSICS_DOMAINS  # of the physics fit
    careful_restarts: tuple[tuple[str, int], ...] = CAREFUL_RESTARTS  # careful setup's starts
    setups: tuple[str, ...] = SETUP_NAMES  # the setups to run
    n_seeds: int = 20  # FastICA seeds of the chapter's ensemble
    n_seeds_more: int = 40  # the larger ensemble near a threshold
    sweep_seeds: tuple[int, ...] = tuple(range(10))
    alt_seeds: tuple[int, ...] = tuple(range(10))
    n_jobs: int | None = None

    def __post_init__(self) -> None:
        for name in ("math_domains", "physics_domains"):
            doms = getattr(self, name)
            if isinstance(doms, str) or not isinstance(doms, tuple):
                raise ValueError(
                    f"Settings.{name} must be a tuple of base-model names, got {doms!r}"
                )
            unknown = [d for d in doms if d not in PAPER_V1_BASES]
            if unknown or len(set(doms)) != len(doms) or len(doms) < 2:
                raise ValueError(
                    f"Settings.{name}={doms!r}: expected at least two distinct base models "
                    f"among {PAPER_V1_BASES}" + (f"; unknown: {unknown}" if unknown else "")
                )
        restarts = self.careful_restarts
        ok = isinstance(restarts, tuple) and all(
            isinstance(p, tuple) and len(p) == 2 and p[0] in FITS and _is_count(p[1])
            for p in restarts
        )
        if not ok or len({p[0] for p in restarts}) != len(restarts):
            raise ValueError(
                f"Settings.careful_restarts={restarts!r}: expected distinct pairs (fit, starts) "
                f"with fit one of {tuple(FITS)} and starts an integer >= 1, e.g. (('cross', 20),)"
            )
        for name in ("sweep_seeds", "alt_seeds"):
            seeds = getattr(self, name)
            if not isinstance(seeds, tuple) or not all(_is_count(s, 0) for s in seeds):
                raise ValueError(
                    f"Settings.{name}={seeds!r}: expected a tuple of integer seeds >= 0"
                )

    def restarts(self, setup: str, fit: str) -> int:
        """FastICA starts per run of subject fit ``fit`` under ``setup`` (one under the
        authors' setup, as in their code)."""
        return dict(self.careful_restarts).get(fit, 1) if setup == "careful" else 1


def _is_count(x: Any, low: int = 1) -> bool:
    """Whether ``x`` is an integer (not a bool) of at least ``low``."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool) and int(x) >= low


@dataclass(frozen=True, eq=False)
class MMLUData:
    """The MMLU-by-task leaderboard with domains, and Figure 27 (the same under both setups).

    Attributes
    ----------
    frame : DataFrame
        :func:`mmlu_frame`.
    counts : DataFrame
        :func:`domain_counts` of the six v1 base models with the attribution layers.
    available : tuple
        Base models with more models than subjects (usable by HCA on three subjects).
    n_llama3_names : int
        Model ids that name Llama-3-8B or -70B.
    corr : DataFrame
        Correlations of the 57 subjects over all models; ``order`` its clustered order.
    median_corr, min_corr, share_above : float
        Median and smallest pairwise correlation, share of pairs above 0.8.
    spectra : dict
        Ten leading components of the 57 subjects: all models and every available domain.
    """

    frame: pd.DataFrame
    counts: pd.DataFrame
    available: tuple
    n_llama3_names: int
    corr: pd.DataFrame
    order: list
    median_corr: float
    min_corr: float
    share_above: float
    spectra: dict

    @property
    def pc1(self) -> pd.Series:
        """Share of the variance on the first component, per spectrum."""
        return pd.Series({k: float(e.ratios[0]) for k, e in self.spectra.items()}, name="PC1 share")

    def summary(self) -> str:
        return (
            f"{len(self.frame)} models; available base models {', '.join(self.available)}; "
            f"median subject correlation {self.median_corr:.2f}, PC1 "
            f"{self.pc1['all models']:.1%}"
        )


def _data() -> MMLUData:
    frame = mmlu_frame()
    counts = domain_counts(frame, PAPER_V1_BASES, n_benchmarks=3)
    layers = pd.crosstab(frame["base_model"], frame["layer"]).reindex(list(PAPER_V1_BASES))
    counts = counts.join(layers.fillna(0).astype(int))
    available = tuple(d for d in PAPER_V1_BASES if counts.loc[d, "usable"])
    cols = subject_columns(MMLU_SUBJECTS)
    corr = frame[cols].corr()
    off = corr.to_numpy()[np.triu_indices(len(cols), 1)]
    spectra = {
        "all models": ss.explained_variance(frame[cols], n_components=10, label="all models")
    }
    spectra |= {
        d: ss.explained_variance(
            frame.loc[frame["base_model"] == d, cols], n_components=10, label=d
        )
        for d in available
    }
    llama3 = frame["model_id"].str.contains(r"llama[-_ ]?3(?:\.\d)?[-_ ]?(?:8|70)b", case=False)
    return MMLUData(
        frame=frame,
        counts=counts,
        available=available,
        n_llama3_names=int(llama3.sum()),
        corr=corr,
        order=cluster_order(corr),
        median_corr=float(np.median(off)),
        min_corr=float(off.min()),
        share_above=float(np.mean(off > 0.8)),
        spectra=spectra,
    )


def mmlu_data() -> MMLUData:
    """:class:`MMLUData` (computed once per process)."""
    return cached("mmlu_data", _data)


@dataclass(frozen=True, eq=False)
class SubjectFit:
    """HCA with three factors on three subjects, on one choice of base models.

    Attributes
    ----------
    subjects : tuple
        The three ``mmlu_<subject>`` columns.
    domains : tuple
        The base models fitted (the paper's choice, or an alternative).
    corr, corr_all : DataFrame
        Correlations of the subjects over the models of ``domains`` and over all models.
    spectra : dict
        Explained variance of the subjects within each of ``domains``.
    table : DataFrame or None
        MIC of every subset of the available base models (seed ``setup.ica_seed``), sizes
        from ``min_size`` (:func:`hca.estimator.mic_by_subset`).
    min_size : int
        Smallest subset size of ``table``.
    sweeps : DataFrame or None
        ``table`` repeated over FastICA seeds (:func:`hca.stability.subset_stability`).
    model : hca.estimator.HCA
        The fit on ``domains`` (seed ``setup.ica_seed``).
    alignment : DataFrame
        :func:`factor_alignment` of ``model``.
    seeds : DataFrame
        :func:`seed_fit_row` of the refits on ``domains`` over the settings' seeds.
    reproducible : dict
        Domain -> whether ``model``'s FastICA gives the same result with the domain's models
        listed in reverse order (:func:`hca.stability.ica_reproducible`; False: the run is
        rounding-sensitive, :data:`hca.paper.claims.ENSEMBLE_RULE`).
    """

    subjects: tuple
    domains: tuple
    corr: pd.DataFrame
    corr_all: pd.DataFrame
    spectra: dict
    table: pd.DataFrame | None
    min_size: int
    sweeps: pd.DataFrame | None
    model: Any
    alignment: pd.DataFrame
    seeds: pd.DataFrame
    reproducible: dict

    def rounding_steered(self) -> str:
        """The domains whose FastICA run in ``model`` is rounding-sensitive (comma-separated;
        empty when none is)."""
        return ", ".join(d for d, ok in self.reproducible.items() if not ok)

    def evidence(self) -> RunEvidence:
        """What the ensemble rule reads of this fit: its rounding-sensitive domains and every
        domain's FastICA solution and objective (:class:`hca.paper.claims.RunEvidence`)."""
        return RunEvidence.of(self.model, self.reproducible)

    def rank(self, subset: Sequence[str] | None = None) -> pd.Series:
        """:func:`subset_mic` of ``subset`` (default ``domains``) in ``table``."""
        return subset_mic(self.table, self.domains if subset is None else subset)

    def best_per_seed(self, size: int | None = None) -> pd.DataFrame:
        """The subset with the smallest MIC in every repetition of ``sweeps`` (one size)."""
        rows = self.sweeps if size is None else self.sweeps[self.sweeps["size"] == size]
        return rows.loc[rows.groupby("rep")["mic"].idxmin()].set_index("rep")

    def n_certified(self) -> tuple[int, int]:
        """Searches certified and searches run for this fit."""
        flags = [bool(self.model.search_result_.certified), *self.seeds["certified"]]
        for t in (self.table, self.sweeps):
            if t is not None:
                flags += list(t["certified"])
        return sum(flags), len(flags)

    def summary(self) -> str:
        return (
            f"{', '.join(subject_label(c) for c in self.subjects)} on "
            f"{', '.join(self.domains)}: MIC {self.model.mic_:.3f}; order "
            f"{' > '.join(subject_label(c) for c in self.alignment['benchmark'])}"
        )


@dataclass(frozen=True, eq=False)
class MMLUResults:
    """Our side of the MMLU chapter's claims under one setup.

    Attributes
    ----------
    setup : Setup
    math, physics, cross : SubjectFit
        Figures 28, 29 and 30 on the paper's base models (Figure 30: the physics choice).
    alternatives : dict
        Figure 30's subjects on other base models: ``"mathematics choice"`` and
        ``"smallest MIC"`` (the subset of at least ``setup.min_subset_size`` available base
        models with the smallest MIC for these subjects).
    n_fits, n_uncertified : int
        HCA searches run for this result and those the sequential search did not certify.
    """

    setup: Any
    math: SubjectFit
    physics: SubjectFit
    cross: SubjectFit
    alternatives: dict
    n_fits: int
    n_uncertified: int

    @property
    def data(self) -> MMLUData:
        """The frame and Figure 27 (:func:`mmlu_data`; one object for both setups)."""
        return mmlu_data()

    def summary(self) -> str:
        return "\n".join(
            [
                f"{self.setup.label}: {self.data.summary()}",
                *(f"  {f.summary()}" for f in (self.math, self.physics, self.cross)),
            ]
        )


@dataclass(frozen=True, eq=False)
class _SubjectInputs:
    available: tuple  # (X, labels) of every available base model
    chosen: tuple  # (X, labels) of the fitted base models
    corr: pd.DataFrame
    corr_all: pd.DataFrame
    spectra: dict


def _subject_inputs(subjects: tuple, domains: tuple) -> _SubjectInputs:
    """What a subject fit needs that does not depend on the seed (computed once per process:
    every run of an ensemble shares it)."""
    return cached("mmlu_subject_inputs", _subject_inputs_compute, subjects, domains)


def _subject_inputs_compute(subjects: tuple, domains: tuple) -> _SubjectInputs:
    data = mmlu_data()
    cols = list(subjects)
    rows = data.frame["base_model"].isin(domains)
    return _SubjectInputs(
        available=domain_data(data.frame, data.available, cols),
        chosen=domain_data(data.frame, list(domains), cols),
        corr=data.frame.loc[rows, cols].corr(),
        corr_all=data.frame[cols].corr(),
        spectra={
            d: ss.explained_variance(data.frame.loc[data.frame["base_model"] == d, cols], label=d)
            for d in domains
        },
    )


@dataclass(frozen=True, eq=False)
class _SubjectICA:
    """The per-domain FastICA of one set of subjects on every available base model, for every
    seed of ``seeds``: the rows in order (``forward``) and in reverse order (``backward``, the
    rounding check of :func:`hca.stability.ica_reproducible`)."""

    seeds: tuple[int, ...]
    forward: list
    backward: list

    def of(self, seeds: Sequence[int], domains: Sequence[str], backward: bool = False) -> list:
        """The ICA of ``domains`` under every seed of ``seeds`` (each fit's ``icas``)."""
        runs = self.backward if backward else self.forward
        return [{d: runs[self.seeds.index(s)][d] for d in domains} for s in seeds]

    def extended(self, more: _SubjectICA) -> _SubjectICA:
        """These runs and those of ``more`` (other seeds of the same subjects)."""
        return _SubjectICA(
            (*self.seeds, *more.seeds),
            [*self.forward, *more.forward],
            [*self.backward, *more.backward],
        )


def _subject_icas(
    est: HCA, data: MMLUData, subject_sets: Sequence[tuple], seeds: tuple[int, ...]
) -> dict[tuple, _SubjectICA]:
    """Every FastICA of a batch of MMLU runs in one call (:func:`hca.stability.domain_icas`):
    for every set of subjects, every available base model with its rows in order and
    reversed, under every seed. The models of a base model are the same rows in every fit of
    the chapter (a fit on a few base models, the subset table of all of them, a resampled
    choice), so each subject fit reads its ICA from here."""
    datasets = []
    for subjects in subject_sets:
        X, labels = domain_data(data.frame, data.available, list(subjects))
        datasets += [(X, labels), st.reversed_rows(X, labels)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # counted in the seed fits
        icas = st.domain_icas(est, datasets, seeds)
    return {
        subjects: _SubjectICA(seeds, icas[2 * k], icas[2 * k + 1])
        for k, subjects in enumerate(subject_sets)
    }


#: The options of :class:`~hca.estimator.HCA` its per-domain FastICA reads
#: (:func:`hca.stability.domain_icas`); setups that agree on them share one FastICA batch.
_ICA_OPTIONS = ("n_components", "ica", "max_iter", "tol", "n_restarts")


def _ica_batch(
    batches: dict, setup: Setup, settings: Settings, data: MMLUData, seeds: tuple[int, ...]
) -> dict[tuple, _SubjectICA]:
    """The FastICA of every subject fit of ``setup`` under ``seeds`` (:func:`_subject_icas`),
    subjects -> :class:`_SubjectICA`, computed once per set of FastICA options and subjects
    in ``batches`` (the book's two setups differ in HCA's residuals, the subset size and the
    careful setup's starts per run, so they share the FastICA of the fits they start alike);
    the subject sets still to compute with the same options are one batch."""
    todo: dict[tuple, tuple[HCA, list[tuple]]] = {}
    keys = {}
    for subjects in FITS.values():
        est = _estimator(setup, settings, subjects)
        options = tuple(est.get_params()[k] for k in _ICA_OPTIONS)
        keys[subjects] = (options, subjects)
        if keys[subjects] not in batches:
            todo.setdefault(options, (est, []))[1].append(subjects)
    for options, (est, sets) in todo.items():
        for subjects, ica in _subject_icas(est, data, sets, seeds).items():
            batches[(options, subjects)] = ica
    return {subjects: batches[key] for subjects, key in keys.items()}


def _chosen(data: MMLUData, subjects: Sequence[str], domains: Sequence[str]) -> tuple:
    """The scores and labels of ``domains`` (checked to be available) for ``subjects``."""
    missing = [d for d in domains if d not in data.available]
    if missing:
        raise ValueError(
            f"MMLU subject fit: base model(s) {missing} have too few models for "
            f"{len(subjects)} subjects (available: {list(data.available)})"
        )
    return _subject_inputs(tuple(subjects), tuple(domains)).chosen


class _Fixed(NamedTuple):
    """A subject fit on fixed base models: the seeds of its refits, the smallest subset size
    of its table (None: no table) and the seeds of its subset sweeps (None: no sweeps)."""

    subjects: tuple
    domains: tuple
    refit_seeds: tuple
    min_size: int | None = None
    sweep_seeds: tuple | None = None


@dataclass(frozen=True, eq=False)
class _Refits:
    """What every run of a subject fit shares: the refits on the settings' seeds (their fits
    and their :func:`seed_fit_row` records) and the subset sweeps over the sweep seeds."""

    fits: dict  # seed -> fitted HCA
    records: pd.DataFrame
    sweeps: Any  # hca.stability.SubsetStability or None


def _refits(est: HCA, data: MMLUData, ica: _SubjectICA, fit: _Fixed, n_jobs: int | None) -> _Refits:
    """The refits of ``fit`` (their searches in one batch) and its subset sweeps over the
    available base models, from the chapter's batch of FastICA ``ica``."""
    Xd, ld = _chosen(data, fit.subjects, fit.domains)
    seeds = tuple(int(x) for x in fit.refit_seeds)
    sweeps = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # counted in the seed fits
        fits = st.seed_fits(est, Xd, ld, seeds, icas=ica.of(seeds, fit.domains))
        if fit.min_size is not None and fit.sweep_seeds:
            X, labels = _subject_inputs(tuple(fit.subjects), tuple(fit.domains)).available
            sweep = tuple(int(x) for x in fit.sweep_seeds)
            sweeps = st.subset_stability(
                est,
                X,
                labels,
                candidates=list(data.available),
                min_size=fit.min_size,
                seeds=sweep,
                n_jobs=n_jobs,
                icas=ica.of(sweep, data.available),
            )
    records = pd.DataFrame([seed_fit_row(m, Xd, s) for m, s in zip(fits, seeds)])
    return _Refits(dict(zip(seeds, fits)), records, sweeps)


def _subject_fits(
    est: HCA,
    data: MMLUData,
    ica: _SubjectICA,
    fit: _Fixed,
    run_seeds: tuple[int, ...],
    refits: _Refits,
    n_jobs: int | None,
) -> tuple[SubjectFit, ...]:
    """``fit`` for every FastICA seed of ``run_seeds``, from the chapter's batch of FastICA
    ``ica`` and the fit's shared ``refits``: the fits (a run seed among the refits' is that
    refit; the others' searches in one batch), the subset table of the available base models,
    and whether each fit is reproducible with its models in reverse order."""
    subjects, domains = list(fit.subjects), list(fit.domains)
    Xd, ld = _chosen(data, subjects, domains)
    inputs = _subject_inputs(tuple(subjects), tuple(domains))
    X, labels = inputs.available
    new = tuple(s for s in run_seeds if s not in refits.fits)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # counted in the seed fits
        fits = dict(refits.fits)
        if new:
            fits |= zip(new, st.seed_fits(est, Xd, ld, new, icas=ica.of(new, domains)))
        models = [fits[s] for s in run_seeds]
        tables: list[pd.DataFrame | None] = [None] * len(run_seeds)
        if fit.min_size is not None:
            tables = list(
                mic_by_subset_many(
                    est,
                    [(X, labels)],
                    run_seeds,
                    candidates=list(data.available),
                    min_size=fit.min_size,
                    n_jobs=n_jobs,
                    icas=[ica.of(run_seeds, data.available)],
                )[0]
            )
        again = ica.of(run_seeds, domains, backward=True)
        reproducible = st.ica_reproducible_many(models, Xd, ld, again=again)
    return tuple(
        SubjectFit(
            subjects=tuple(subjects),
            domains=tuple(domains),
            corr=inputs.corr,
            corr_all=inputs.corr_all,
            spectra=inputs.spectra,
            table=table,
            min_size=int(fit.min_size or len(domains)),
            sweeps=refits.sweeps,
            model=model,
            alignment=factor_alignment(model.unmixing_, subjects),
            seeds=refits.records,
            reproducible=rep,
        )
        for model, table, rep in zip(models, tables, reproducible)
    )


def _estimator(setup: Setup, settings: Settings, subjects: tuple) -> HCA:
    """The HCA of the subject fit on ``subjects`` under ``setup``: the sequential search,
    :data:`MAX_ITER` FastICA iterations and the settings' starts per run
    (:meth:`Settings.restarts`)."""
    name = next(k for k, v in FITS.items() if v == tuple(subjects))
    restarts = settings.restarts(setup.name, name)
    return estimator(setup, search="sequential", max_iter=MAX_ITER, n_restarts=restarts)


#: The smallest subset of base models in the MIC-by-subset tables of the mathematics and the
#: physics fits (Figures 28 and 29: subsets of three, of at least four), or the number of
#: base models of the fit if smaller (so that the chosen subset is always in its table).
_TABLE_SIZES = {"math": 3, "physics": 4}


def _fixed_fits(setup: Setup, settings: Settings) -> dict[str, _Fixed]:
    """The subject fits every run of ``setup`` makes on fixed base models (the settings')."""
    k = min(setup.min_subset_size, len(mmlu_data().available))
    seeds, sweep = tuple(range(settings.n_seeds)), settings.sweep_seeds
    math, physics = settings.math_domains, settings.physics_domains
    return {
        "math": _Fixed(MATH_SUBJECTS, math, seeds, min(_TABLE_SIZES["math"], len(math)), sweep),
        "physics": _Fixed(
            PHYSICS_SUBJECTS, physics, seeds, min(_TABLE_SIZES["physics"], len(physics)), sweep
        ),
        "cross": _Fixed(CROSS_SUBJECTS, physics, seeds, k),
        "math_choice": _Fixed(CROSS_SUBJECTS, math, settings.alt_seeds),
    }


def check_available(settings: Settings) -> None:
    """Check that every base model of the settings' fits has more models than subjects on
    the MMLU-by-task leaderboard (:attr:`MMLUData.available`), before any fit.

    Raises
    ------
    ValueError
        Naming the field, the base models with too few models and those available.
    """
    available = mmlu_data().available
    for name in ("math_domains", "physics_domains"):
        missing = [d for d in getattr(settings, name) if d not in available]
        if missing:
            raise ValueError(
                f"Settings.{name}: base model(s) {missing} have too few models on the "
                f"MMLU-by-task leaderboard for three subjects; available: {list(available)}"
            )


@dataclass(frozen=True, eq=False)
class _Common:
    """What every run of the chapter's ensembles under ``setups`` shares, per setup: the
    FastICA of the settings' seeds (the refits', the alternatives', the sweeps'; one batch per
    set of FastICA options, :func:`_ica_batch`) and the refits of the fixed subject fits."""

    icas: tuple  # per setup: subjects -> _SubjectICA
    refits: tuple  # per setup: name of a fixed fit -> _Refits


def _common(setups: tuple[Setup, ...], settings: Settings) -> _Common:
    data = mmlu_data()
    seeds = tuple(
        dict.fromkeys(
            int(s) for s in (*range(settings.n_seeds), *settings.alt_seeds, *settings.sweep_seeds)
        )
    )
    batches: dict[tuple, dict[tuple, _SubjectICA]] = {}
    icas, refits = [], []
    for setup in setups:
        batch = _ica_batch(batches, setup, settings, data, seeds)
        icas.append(batch)
        fixed = _fixed_fits(setup, settings).items()
        refits.append(
            {
                k: _refits(
                    _estimator(setup, settings, f.subjects),
                    data,
                    batch[f.subjects],
                    f,
                    settings.n_jobs,
                )
                for k, f in fixed
            }
        )
    return _Common(tuple(icas), tuple(refits))


def _runs(
    setups: tuple[Setup, ...], settings: Settings, seeds: tuple[int, ...]
) -> tuple[tuple[MMLUResults, ...], ...]:
    """The chapter's results for every FastICA seed of ``seeds`` under every seed-free setup
    of ``setups``. What the runs share is computed once for all batches of seeds
    (:func:`_common`: the refits and sweeps, and the FastICA of their seeds); the FastICA of
    the other run seeds in one batch shared by the setups whose FastICA options agree
    (:func:`_ica_batch`), and every subject fit's searches of all seeds in one batch per
    setup."""
    check_available(settings)
    data = mmlu_data()
    common = cached("mmlu_common", _common, setups, settings)
    more: dict[tuple, dict[tuple, _SubjectICA]] = {}
    out = []
    for i, setup in enumerate(setups):
        icas = common.icas[i]
        new = tuple(s for s in seeds if s not in icas[MATH_SUBJECTS].seeds)
        if new:
            extra = _ica_batch(more, setup, settings, data, new)
            icas = {subjects: icas[subjects].extended(extra[subjects]) for subjects in icas}
        out.append(_setup_runs(setup, data, icas, common.refits[i], settings, seeds))
    return tuple(out)


def _setup_runs(
    setup: Setup,
    data: MMLUData,
    icas: dict[tuple, _SubjectICA],
    refits: dict[str, _Refits],
    settings: Settings,
    seeds: tuple[int, ...],
) -> tuple[MMLUResults, ...]:
    """The runs of :func:`_runs` under one setup, from its FastICA ``icas`` and the refits of
    its fixed subject fits."""
    fits = {
        name: _subject_fits(
            _estimator(setup, settings, f.subjects),
            data,
            icas[f.subjects],
            f,
            seeds,
            refits[name],
            settings.n_jobs,
        )
        for name, f in _fixed_fits(setup, settings).items()
    }
    math, physics, cross, math_choice = fits.values()
    # the base models with the smallest MIC for Figure 30's subjects depend on the seed: the
    # seeds that share them are fitted in one batch
    best = [
        tuple(c.table.sort_values("mic", kind="stable").iloc[0]["subset"])
        for c in cross
        if c.table is not None
    ]
    ica, est = icas[CROSS_SUBJECTS], _estimator(setup, settings, CROSS_SUBJECTS)
    smallest: dict[int, SubjectFit] = {}
    for choice in dict.fromkeys(best):
        group = tuple(s for s, b in zip(seeds, best) if b == choice)
        alt = _Fixed(CROSS_SUBJECTS, choice, settings.alt_seeds)
        shared = _refits(est, data, ica, alt, settings.n_jobs)
        smallest |= zip(group, _subject_fits(est, data, ica, alt, group, shared, None))
    out = []
    for i, seed in enumerate(seeds):
        alternatives = {"mathematics choice": math_choice[i], "smallest MIC": smallest[seed]}
        fits_i = (math[i], physics[i], cross[i], *alternatives.values())
        counts = [f.n_certified() for f in fits_i]
        n_ok, n_all = (sum(c[j] for c in counts) for j in (0, 1))
        out.append(
            MMLUResults(
                setup=setup.with_seed(seed),
                math=math[i],
                physics=physics[i],
                cross=cross[i],
                alternatives=alternatives,
                n_fits=n_all,
                n_uncertified=n_all - n_ok,
            )
        )
    return tuple(out)


def _typical_key(res: MMLUResults) -> float:
    """What makes a run of the chapter's ensemble typical: the MIC of its mathematics fit,
    whose FastICA runs converge in a few iterations in every domain (the physics and
    cross-subject fits reach several optima, and Figure 30's Llama-2-13B never converges)."""
    return float(res.math.model.mic_)


#: The chapter's shape (:class:`hca.paper.shape.ChapterSpec`), declared by its ensemble's runs
#: (:func:`_runs`; the run at a setup's own seed is the ensemble's): each claim names the
#: subject fit it reads (``@claim(..., evidence=...)``), and a run is typical by its
#: mathematics fit's MIC.
CHAPTER: ChapterSpec[Settings, MMLUResults] = ChapterSpec.from_runs(
    key="mmlu",
    settings=Settings,
    runs=_runs,
    evidence=lambda res: RunEvidence(),
    typical_key=_typical_key,
)

#: The chapter's results under a setup, once per process (:meth:`~hca.paper.shape.ChapterSpec.run`).
run = CHAPTER.run


# =========================================================================== the page
#: The claims read from each subject fit.
FIT_CLAIMS: dict[str, tuple[str, ...]] = {
    "math": ("H.5-math-mic", "H.5-math-minimal", "H.5-math-z1", "H.5-math-z23"),
    "physics": ("H.5-phys-mic", "H.5-phys-minimal", "H.5-phys-z1", "H.5-phys-z23"),
    "cross": ("H.5-cross-order",),
}
#: Plain names of the claims, for prose (no claim ids) and for table columns (short).
CLAIM_NAMES: dict[str, tuple[str, str]] = {
    "F27-one-factor": ("one knowledge factor behind the 57 subjects", "one factor"),
    "H.5-math-mic": ("the mathematics fit's MIC", "MIC"),
    "H.5-math-minimal": ("the mathematics choice of base models", "choice"),
    "H.5-math-z1": ("college mathematics as the first factor", "z1"),
    "H.5-math-z23": ("elementary and high-school mathematics as the next two factors", "z2, z3"),
    "H.5-phys-mic": ("the physics fit's MIC", "MIC"),
    "H.5-phys-minimal": ("the physics choice of base models", "choice"),
    "H.5-phys-z1": ("conceptual physics as the first factor", "z1"),
    "H.5-phys-z23": ("the physics fit's next two factors as mixtures", "z2, z3"),
    "H.5-cross-order": ("the order mathematics → electrical engineering → physics", "order"),
}
#: How prose names a setup, and how a table labels it.
SETUP_WORDS = {"authors": "the authors' setup", "careful": "the careful setup"}
SETUP_LABELS = {"authors": "authors'", "careful": "careful"}
#: How prose names the subject fits.
FIT_WORDS = {"math": "mathematics", "physics": "physics", "cross": "cross-subject"}
_VERDICT_WORDS = {
    "reproduced": ("holds", "hold"),
    "partly": ("holds in part", "hold in part"),
    "not reproduced": ("does not hold", "do not hold"),
    "not determined": ("is not determined", "are not determined"),
    "not applicable": ("does not apply", "do not apply"),
}


def _row(page: Any, cid: str) -> Any:
    """The page's row of claim ``cid``."""
    return next(r for r in page.rows if r.id == cid)


def _shown(page: Any) -> str:
    """The setup whose numbers the prose quotes where it quotes one: the careful setup when
    the page runs it, else its only setup."""
    return "careful" if "careful" in page.setups else page.setups[0]


def _under(page: Any, setups: Sequence[str]) -> str:
    """``"under both setups"``, ``"under the authors' setup"``."""
    if len(setups) == 2:
        return "under both setups"
    return "under " + join_words(SETUP_WORDS[s] for s in setups)


def holds(page: Any, cids: Sequence[str]) -> str:
    """Whether the claims ``cids`` hold on the page, in words chosen from their verdicts
    (``"hold under both setups"``, ``"does not hold under either setup"``, ``"holds under the
    authors' setup and does not hold under the careful setup"``); plural for several claims
    with the same verdicts."""
    plural = int(len(cids) > 1)
    groups: dict[str, list[str]] = {}
    for s in page.setups:
        verdicts = {_row(page, c).setups[s].verdict for c in cids}
        if len(verdicts) > 1:
            raise ValueError(f"holds: the claims {list(cids)} differ under {s}")
        groups.setdefault(verdicts.pop(), []).append(s)
    parts = []
    for v, which in groups.items():
        under = _under(page, which)
        if v == "not reproduced" and len(which) == 2:
            under = "under either setup"
        parts.append(f"{_VERDICT_WORDS[v][plural]} {under}")
    return join_words(parts)


def _fits(page: Any, setup: str, fit: str) -> list[SubjectFit]:
    """Subject fit ``fit`` of every run of ``setup``'s ensemble on the page."""
    return [getattr(r, fit) for r in page.ensembles[setup]]


def _k_runs(page: Any, setup: str, fit: str, test: Any) -> str:
    """``"3 of 20 runs"``: the runs of ``setup``'s ensemble whose fit ``fit`` passes
    ``test``."""
    fits = _fits(page, setup, fit)
    return k_of_n(sum(bool(test(f)) for f in fits), len(fits), "runs")


def paper_cross() -> tuple[str, ...]:
    """The paper's order of Figure 30's subjects (``paper_values.csv``)."""
    from hca.data import load_paper_values

    return tuple(load_paper_values().loc["H.5-cross-order", "value"].split(">"))


def _objective(x: float) -> str:
    """A FastICA objective (about 0.001 to 0.02 here), with the digits that tell its optima
    apart."""
    return f"{x:.5f}"


def _domain_objective(fits: Sequence[SubjectFit], domain: str) -> float:
    """The median of FastICA's objective in ``domain`` over ``fits``."""
    return float(np.median([f.model.ica_[domain].objective for f in fits]))


def answer(page: Any) -> str:
    """The chapter's opening paragraph (MyST), written from its page
    (:func:`hca.paper.scorecard.chapter_page`): what Appendix H.5 claims, what holds under
    each setup, and the causes of the differences (a FastICA local optimum, optima that
    FastICA's objective cannot tell apart), with links to the section that shows them."""
    out = [
        "Appendix H.5 claims one knowledge factor behind all 57 MMLU subjects, which "
        f"{holds(page, ['F27-one-factor'])}, and causal orders within three related subjects: "
        "college mathematics first, conceptual physics first, and mathematics → electrical "
        "engineering → physics."
    ]
    leads = {
        x: (
            _k_runs(page, x, "math", lambda f: f.alignment.loc["z1", "top"] == MATH_SUBJECTS[0]),
            _k_runs(
                page, x, "physics", lambda f: f.alignment.loc["z1", "top"] == PHYSICS_SUBJECTS[0]
            ),
        )
        for x in page.setups
    }
    z1 = ["H.5-math-z1", "H.5-phys-z1"]
    if all(_row(page, c).setups[x].verdict == "not reproduced" for c in z1 for x in page.setups):
        head = "Neither first factor comes back" + (
            " under either setup" if len(page.setups) == 2 else ""
        )
    else:
        head = (
            f"College mathematics first {holds(page, z1[:1])}, and conceptual physics first "
            f"{holds(page, z1[1:])}"
        )

    def lead(x: str) -> str:
        return (
            f"college mathematics leads the mathematics fit in {leads[x][0]}, conceptual "
            f"physics the physics fit in {leads[x][1]}"
        )

    if len(set(leads.values())) == 1:  # the same counts under every setup: said once
        each = ", under each setup" if len(page.setups) > 1 else ""
        out.append(f"{head}: {lead(page.setups[0])}{each}.")
    else:
        out.append(
            f"{head}: " + "; ".join(f"under {SETUP_WORDS[x]} {lead(x)}" for x in page.setups) + "."
        )
    paper = list(paper_cross())
    per = [
        f"in {_k_runs(page, x, 'cross', lambda f: f.alignment['benchmark'].tolist() == paper)}"
        f" under {SETUP_WORDS[x]}"
        for x in page.setups
    ]
    out.append(f"Across subjects the paper's order comes back {join_words(per)}.")
    cause = cross_cause(page)
    if cause:
        out.append(f"{cause} ({{ref}}`the fragile fits <mmlu-fragile>`).")
    nd = {
        cid: [x for x in page.setups if _row(page, cid).setups[x].verdict == "not determined"]
        for cid in CLAIM_NAMES
    }
    nd = {cid: w for cid, w in nd.items() if w}
    if nd:
        names = join_words(
            CLAIM_NAMES[c][0]
            + (
                ""
                if len(page.setups) == 1
                else " (both setups)"
                if len(w) == 2
                else f" ({SETUP_LABELS[w[0]]} setup)"
            )
            for c, w in nd.items()
        )
        doms = sorted(
            {
                d
                for c, w in nd.items()
                for x in w
                for o in _row(page, c).setups[x].ensemble.optima
                for d, _ in o.groups
            }
        )
        out.append(f"Not determined {'is' if len(nd) == 1 else 'are'} {names}.")
        out.append(
            f"There {join_words(doms)}'s FastICA lands in optima that its objective cannot tell "
            "apart and that answer differently, so rounding, not the data, picks the answer "
            "({ref}`the fragile fits <mmlu-fragile>`)."
        )
    return " ".join(out)


def setups_text(page: Any) -> str:
    """How the page's setups start FastICA, in one or two sentences chosen from its settings
    (MyST)."""
    several = [f for f in FITS if page.settings.restarts("careful", f) > 1]
    if "careful" not in page.setups or not several:
        return "Every run makes one FastICA start per base model, as the authors' code does."
    each = join_words(
        f"each run of the {FIT_WORDS[f]} fit keeps the best of "
        f"{count(page.settings.restarts('careful', f), 'FastICA start')}"
        for f in several
    )
    return (
        f"Under the careful setup {each}, by FastICA's own objective ({{ref}}`mmlu-fragile` "
        "says why). Every other run makes one start, as the authors' code does."
    )


def cross_cause(page: Any) -> str:
    """Why the setups answer the cross-subject order differently, in one sentence chosen from
    the page (empty when no setup's runs land in a FastICA optimum the objective clearly
    prefers over the one giving the paper's order): the domain, the two optima's objectives,
    and where the careful setup's best of several starts lands."""
    for s in page.setups:
        e = _row(page, "H.5-cross-order").setups[s].ensemble
        if e is None or e.case != "better" or e.preferred is None:
            continue
        best = e.optima[e.preferred]
        paper = [o for o in e.optima if o.major and o.answer == "reproduced"]
        if not paper or best.answer == "reproduced" or len(best.objective) != 1:
            continue
        d, med_best, lo, hi = best.objective[0]
        never = "never gives it" if best.share == 0 else "rarely does"
        k = page.settings.restarts("careful", "cross")
        where = f"FastICA's objective prefers one with {_objective(med_best)}"
        if "careful" in page.setups and k > 1:
            med = _domain_objective(_fits(page, "careful", "cross"), d)
            if abs(med - med_best) <= max(hi - lo, 1e-5):
                where = (
                    f"the careful setup's {count(k, 'start')} find a better one, {_objective(med)}"
                )
        return (
            f"The cause is a FastICA local optimum of {d}: the paper's order comes from one with "
            f"objective {_objective(paper[0].objective[0][1])}, and {where}, which {never}"
        )
    return ""


def _optimum_name(o: Any) -> str:
    """``"optimum 3"`` (one fragile domain) or ``"Llama-2-70B optimum 1 and ..."``."""
    if len(o.groups) == 1:
        return f"optimum {o.groups[0][1]}"
    return " and ".join(f"{d} optimum {g}" for d, g in o.groups)


#: Names of the claims inside one fit's story (the fit is named already), and whether the
#: name is plural.
_IN_FIT = {
    "MIC": ("the MIC", False),
    "choice": ("the choice of base models", False),
    "z1": ("the first factor", False),
    "z2, z3": ("the next two factors", True),
    "order": ("the order", False),
}


def fragile_text(page: Any, fit: str) -> str:
    """The story of subject fit ``fit``'s rounding-sensitive base models in plain words (MyST,
    one paragraph; empty when no run of the page is rounding-sensitive in this fit): which
    base model, in how many runs, the FastICA optima its runs land in, how far apart their
    objectives are, what each claim answers in them and what the rule makes of it, and (for a
    fit the careful setup starts several times) what the careful setup's runs give."""
    claims = FIT_CLAIMS[fit]
    evidence = [
        (s, max((_row(page, c).setups[s].ensemble for c in claims), key=lambda e: e.runs))
        for s in page.setups
    ]
    with_optima = [(s, e) for s, e in evidence if e.optima]
    if not with_optima:
        return ""
    data = page.results[page.setups[0]].data
    e0 = with_optima[0][1]
    same = [s for s, e in with_optima if e.fragile == e0.fragile and e.runs == e0.runs]
    doms = [d for d, _ in e0.fragile_domains]
    sizes = join_words(f"{d} ({count(data.counts.loc[d, 'n_models'], 'model')})" for d in doms)
    out = [
        f"In the {FIT_WORDS[fit]} fit, {sizes} {'is' if len(doms) == 1 else 'are'} "
        f"rounding-sensitive in {k_of_n(e0.fragile, e0.runs, 'runs')} {_under(page, same)}."
    ]
    major = [o for o in e0.optima if o.major]
    optima = count(len(e0.optima), "FastICA optimum", "FastICA optima")
    held = f"{join_words(o.runs for o in major)} of the {count(e0.runs, 'run')}"
    if len(major) < 2:
        which = "only one of which holds" if major else "none of which holds"
        out.append(f"The runs land in {optima}, {which} at least a tenth of them.")
    elif len(major) == len(e0.optima):
        out.append(f"The runs land in {optima}, each holding at least a tenth of them: {held}.")
    else:
        out.append(
            f"The runs land in {optima}, {len(major)} of which hold at least a tenth of them: "
            f"{held}."
        )
    if len(major) >= 2 and len(major[0].objective) == 1:
        a, b = major[:2]
        (_, ma, la, ha), (_, mb, lb, hb) = a.objective[0], b.objective[0]
        out.append(
            f"FastICA's objective has median {_objective(ma)} (range {_objective(la)} to "
            f"{_objective(ha)}) in {_optimum_name(a)} and {_objective(mb)} (range "
            f"{_objective(lb)} to {_objective(hb)}) in {_optimum_name(b)}."
        )
        gap, spread = abs(ma - mb), max(ha - la, hb - lb)
        if gap <= spread:
            out.append(
                f"The gap between the medians, {gap:.6f}, is smaller than the spread within one "
                f"optimum, {spread:.6f}: the objective cannot tell them apart."
            )
        else:
            top, low = (b, a) if mb > ma else (a, b)
            out.append(
                f"The objective of {_optimum_name(top)} is {max(ma, mb) / min(ma, mb):.1f} times "
                f"that of {_optimum_name(low)}, far beyond the spread within either: FastICA's "
                "objective clearly prefers it."
            )
        for s, _ in with_optima:
            out += _answers_text(page, s, fit, a, b)
    k = page.settings.restarts("careful", fit)
    careful = dict(evidence).get("careful")
    if careful is not None and k > 1:
        vals = [f.model.ica_[doms[0]].objective for f in _fits(page, "careful", fit)]
        spread_text = median_range(vals, what="runs", digits=5)
        verb = "has " if spread_text.startswith("median") else "is "
        sensitive = (
            f"none of the {count(careful.runs, 'run')} is rounding-sensitive"
            if careful.fragile == 0
            else f"{k_of_n(careful.fragile, careful.runs, 'runs')} are rounding-sensitive"
        )
        out.append(
            f"Under the careful setup each run keeps the best of {count(k, 'FastICA start')}."
        )
        out.append(f"Then {sensitive}, and {doms[0]}'s objective {verb}{spread_text}.")
    return " ".join(out)


def _answers_text(page: Any, setup: str, fit: str, a: Any, b: Any) -> list[str]:
    """What each claim of ``fit`` answers under ``setup`` in the optima ``a`` and ``b``
    (:class:`hca.paper.claims.Optimum` of its evidence fit) and what the rule makes of it: one
    sentence per claim that answers differently, one for those that answer the same."""
    differ, agree = [], []
    for c in FIT_CLAIMS[fit]:
        o = _row(page, c).setups[setup]
        found = {x.groups: x for x in o.ensemble.optima}
        if a.groups not in found or b.groups not in found:
            continue
        va, vb = found[a.groups].answer, found[b.groups].answer
        name, plural = _IN_FIT[CLAIM_NAMES[c][1]]
        if va == vb:
            agree.append(name)
            continue
        is_ = "are" if plural else "is"
        then = (
            f", so {'they' if plural else 'it'} {is_} not determined"
            if o.verdict == "not determined"
            else f"; every run counts under this setup, so {'they' if plural else 'it'} {is_} "
            f"{o.verdict} over all {count(o.ensemble.runs, 'run')}"
        )
        differ.append(
            f"{name} {'read' if plural else 'reads'} {va} in {_optimum_name(a)} and {vb} in "
            f"{_optimum_name(b)}{then}"
        )
    if agree:
        plural = len(agree) > 1 or any(n == agree[0] and p for n, p in _IN_FIT.values())
        differ.append(f"{join_words(agree)} {'read' if plural else 'reads'} the same in both")
    if len(page.setups) > 1 and differ:
        differ[0] = f"under {SETUP_WORDS[setup]}, {differ[0]}"
    return [f"{t[0].upper()}{t[1:]}." for t in differ]


def optima_table(page: Any, fit: str) -> pd.DataFrame:
    """The FastICA optima of subject fit ``fit``'s rounding-sensitive base models, per setup
    (from the page's rows, :attr:`hca.paper.claims.Ensemble.optima`): each optimum's runs,
    rounding-sensitive runs (in brackets), objective (median and range, times 1,000) and every
    claim's answer
    in it ("–" for a claim read from another set of runs); the optimum the objective clearly
    prefers is marked. A setup without a rounding-sensitive run in this fit gets one row, "all
    runs", with the claims' verdicts. Empty when no setup has a rounding-sensitive run here."""
    claims = FIT_CLAIMS[fit]
    obj = "objective ×1000, median (range)"
    runs = "runs (sensitive)"  # of them rounding-sensitive, in brackets
    records = []
    for s in page.setups:
        ens = [_row(page, c).setups[s].ensemble for c in claims]
        base = max(ens, key=lambda e: e.runs)
        if not base.optima:
            rec = {"setup": SETUP_LABELS[s], "optimum": "all runs", runs: f"{base.runs} (0)"}
            rec |= {obj: "–"}
            rec |= {CLAIM_NAMES[c][1]: _row(page, c).setups[s].verdict for c in claims}
            records.append(rec)
            continue
        for k, o in enumerate(base.optima):
            # the optimum's number (the column names it), marked when the objective prefers it
            name = _optimum_name(o).removeprefix("optimum ") + (
                " (preferred)" if base.preferred == k else ""
            )
            rec = {"setup": SETUP_LABELS[s], "optimum": name, runs: f"{o.runs} ({o.fragile})"}
            rec[obj] = "; ".join(
                f"{1e3 * m:.3f} ({1e3 * lo:.3f}-{1e3 * hi:.3f})" for _, m, lo, hi in o.objective
            )
            for c, e in zip(claims, ens):
                same = [x for x in e.optima if x.groups == o.groups]
                rec[CLAIM_NAMES[c][1]] = same[0].answer if e.seeds == base.seeds and same else "–"
            records.append(rec)
    out = pd.DataFrame(records)
    if out.empty or (out["optimum"] == "all runs").all():
        return out.iloc[0:0]
    return out


# --------------------------------------------------------------------------- sections' words
def _typical(page: Any, setup: str) -> str:
    """``"the typical run (seed 2)"`` of ``setup``'s ensemble."""
    return f"the typical run (seed {page.results[setup].setup.ica_seed})"


def _paper_value(cid: str) -> float:
    from hca.data import load_paper_values

    return float(load_paper_values().loc[cid, "value"])


def _ensemble_words(page: Any, cid: str, setup: str) -> str:
    """``"median 0.110 (range 0.097 to 0.121) over 20 runs"``: the value of claim ``cid``
    over the runs it is read from under ``setup``."""
    e = _row(page, cid).setups[setup].ensemble
    return median_range(median=e.median, low=e.low, high=e.high, n=e.runs)


def _corr_range(corr: pd.DataFrame) -> tuple[float, float]:
    vals = corr.to_numpy()[np.triu_indices(len(corr), 1)]
    return float(vals.min()), float(vals.max())


def _top_counts(fits: Sequence[SubjectFit], row: str) -> pd.Series:
    """How many of ``fits`` have each subject as the top subject of factor ``row``."""
    return pd.Series([f.alignment.loc[row, "top"] for f in fits]).value_counts()


def math_text(page: Any) -> str:
    """What the mathematics fit (Figure 28) finds, in words chosen from the page (MyST)."""
    s = _shown(page)
    f, fits = page.results[s].math, _fits(page, s, "math")
    paper = _paper_choice(f, "math")
    lo, hi = _corr_range(f.corr)
    alo, ahi = _corr_range(f.corr_all)
    less = "far less" if hi < alo else "differently"
    out = [
        f"Over the models of these {count(len(f.domains), 'base model')} the mathematics subjects "
        f"correlate {less} ({lo:.2f} to {hi:.2f}) than across the whole leaderboard ({alo:.2f} "
        f"to {ahi:.2f}).",
        "The knowledge factor of Paper Figure 27 is mostly the difference between model "
        "families and sizes, and HCA works on the variation that remains within them.",
    ]
    mic = _row(page, "H.5-math-mic").setups[s].ensemble
    ratio = mic.median / _paper_value("H.5-math-mic")
    than = (
        f", {ratio:.0f} times the paper's {_paper_value('H.5-math-mic'):g}"
        if ratio >= 2
        else f", against the paper's {_paper_value('H.5-math-mic'):g}"
    )
    where = "On the paper's three base models" if paper else "On the settings' base models"
    out.append(
        f"{where} the MIC has {_ensemble_words(page, 'H.5-math-mic', s)} under "
        f"{SETUP_WORDS[s]}{than if paper else ''}."
    )
    size = len(f.domains)
    table = f.table[f.table["size"] == size]
    per = f.best_per_seed(size)
    k = int((per["subset"].map(frozenset) == frozenset(f.domains)).sum())
    best = table.sort_values("mic", kind="stable").iloc[0]
    out.append(
        f"This choice has the smallest MIC among the {count(len(table), 'subset')} of "
        f"{count(size, 'base model')} in {k_of_n(k, len(per), 'sweep seeds')}."
    )
    if frozenset(best["subset"]) != frozenset(f.domains):
        swap = len(set(best["subset"]) - set(f.domains))
        out.append(
            f"In {_typical(page, s)} the smallest, {best['mic']:.3f}, belongs to "
            f"{join_words(best['subset'])}, which differs from this choice in "
            f"{count(swap, 'base model')}."
        )
    z1 = _top_counts(fits, "z1")
    n = len(fits)
    named = join_words(f"{short_label(c)} in {whole(v)}" for c, v in z1.items())
    college = int(z1.get(MATH_SUBJECTS[0], 0))
    out.append(
        f"The top subject of z1 is {named} of the {count(n, 'run')}; college mathematics leads "
        f"in {k_of_n(college, n)}."
    )
    rows = [r for r in ("z2", "z3") if f.alignment.loc[r, "top"] == MATH_SUBJECTS[0]]
    if rows and college == 0:
        out.append(f"In {_typical(page, s)} college mathematics is the top subject of {rows[0]}.")
    out.append(
        f"The paper's reading of z1 {holds(page, ['H.5-math-z1'])}, and its reading of z2 "
        f"and z3 {holds(page, ['H.5-math-z23'])}."
    )
    return " ".join(out)


def mixture_share(fit: SubjectFit) -> tuple[float, float]:
    """High-school + college physics share of the squared (row-normalised) weights of z2
    and z3 of a physics fit."""
    H = np.asarray(fit.model.unmixing_, dtype=float)
    W = (H / np.linalg.norm(H, axis=1, keepdims=True)) ** 2
    idx = [fit.subjects.index(x) for x in PHYSICS_SUBJECTS[1:]]
    return float(W[1, idx].sum()), float(W[2, idx].sum())


def physics_text(page: Any) -> str:
    """What the physics fit (Figure 29) finds, in words chosen from the page (MyST)."""
    s = _shown(page)
    f, fits = page.results[s].physics, _fits(page, s, "physics")
    minimal = [x for x in page.setups if page.results[x].physics.rank()["rank_all"] == 1]
    per = f.best_per_seed()
    k = int((per["subset"].map(frozenset) == frozenset(f.domains)).sum())
    choice = (
        "The choice of base models " + holds(page, ["H.5-phys-minimal"])
        if _paper_choice(f, "physics")
        else "On the settings' base models"
    )
    has = "have" if minimal else "do not have"
    where = f" {_under(page, minimal)}" if minimal else ""
    out = [
        f"{choice}: {join_words(f.domains)} {has} the smallest MIC among the "
        f"{count(len(f.table), 'subset')} of at least {count(f.min_size, 'base model')} in the "
        f"typical run{where}.",
        f"This choice has the smallest MIC in {k_of_n(k, len(per), 'sweep seeds')} of "
        f"{SETUP_WORDS[s]}.",
        f"Its MIC has {_ensemble_words(page, 'H.5-phys-mic', s)} under {SETUP_WORDS[s]}"
        + (
            f", against the paper's {_paper_value('H.5-phys-mic'):g}."
            if _paper_choice(f, "physics")
            else "."
        ),
    ]
    conv = sum(all(x.model.ica_converged_.values()) for x in fits)
    spread = {
        fit: max(x.model.mic_ for x in _fits(page, s, fit))
        / min(x.model.mic_ for x in _fits(page, s, fit))
        for fit in ("math", "physics")
    }
    ratio = spread["physics"] / spread["math"]
    than = "more than" if ratio > 1.1 else "less than" if ratio < 1 / 1.1 else "about as much as"
    out.append(
        f"FastICA converges in every base model in {k_of_n(conv, len(fits), 'runs')}, and the "
        f"MIC varies with the seed {than} the mathematics MIC ({{ref}}`mmlu-seeds`)."
    )
    z1 = _top_counts(fits, "z1")
    concept = int(z1.get(PHYSICS_SUBJECTS[0], 0))
    others = join_words((short_label(c) for c in z1.index if c != PHYSICS_SUBJECTS[0]), "or")
    out.append(f"Conceptual physics as the first factor {holds(page, ['H.5-phys-z1'])}.")
    most = "in most runs" if concept < len(fits) / 2 else "in the other runs"
    out.append(
        f"The first factor is {others or 'another subject'} {most}, conceptual physics "
        f"in {k_of_n(concept, len(fits), 'runs')}."
    )
    both = sum(all(_mixture_rows(_sq(x), x.subjects, PHYSICS_SUBJECTS[1:])) for x in fits)
    z2, z3 = mixture_share(f)
    al = f.alignment["benchmark"]
    other = short_label(al["z3"] if z3 < z2 else al["z2"])
    out.append(
        f"Factors z2 and z3 are both mixtures of high-school and college physics in "
        f"{k_of_n(both, len(fits), 'runs')}."
    )
    out.append(
        f"In {_typical(page, s)} those two subjects hold {z2:.2f} of the squared weight of z2 "
        f"and {z3:.2f} of z3: one row is mostly the two physics subjects, the other mostly "
        f"{other}."
        if min(z2, z3) < 0.5 < max(z2, z3)
        else f"In {_typical(page, s)} those two subjects hold {z2:.2f} of the squared weight "
        f"of z2 and {z3:.2f} of z3."
    )
    return " ".join(out)


def _sq(fit: SubjectFit) -> np.ndarray:
    H = np.asarray(fit.model.unmixing_, dtype=float)
    return (H / np.linalg.norm(H, axis=1, keepdims=True)) ** 2


def cross_text(page: Any) -> str:
    """What the cross-subject fit (Figure 30) finds, in words chosen from the page (MyST)."""
    s = _shown(page)
    paper = list(paper_cross())
    f = page.results[s].cross
    per = [
        f"in {_k_runs(page, x, 'cross', lambda g: g.alignment['benchmark'].tolist() == paper)}"
        f" under {SETUP_WORDS[x]}"
        for x in page.setups
    ]
    order = " → ".join(short_label(c) for c in f.alignment["benchmark"])
    out = [
        f"On {join_words(f.domains)} the paper's order, college mathematics → electrical "
        f"engineering → college physics, comes back {join_words(per)}.",
        f"In {_typical(page, s)} of {SETUP_WORDS[s]} the order is {order}.",
    ]
    fits = _fits(page, s, "cross")
    for d in f.domains:
        conv = sum(bool(x.model.ica_converged_[d]) for x in fits)
        if conv == 0:
            steady = all(x.reproducible[d] for x in fits)
            out.append(
                f"FastICA never converges on {d}'s scores of these subjects (in none of the "
                f"{count(len(fits), 'run')})"
                + (
                    ", yet it stops in the same place whatever the order of the models (the "
                    "iterations settle into a cycle)."
                    if steady
                    else "."
                )
            )
    alt = [r.alternatives["mathematics choice"] for r in page.ensembles[s]]
    ee = sum(x.alignment.loc["z1", "benchmark"] == CROSS_SUBJECTS[2] for x in alt)
    small = [r.alternatives["smallest MIC"] for r in page.ensembles[s]]
    kp = sum(x.alignment["benchmark"].tolist() == paper for x in small)
    out.append(
        f"The order depends on the base models ({SETUP_WORDS[s]}): on the mathematics choice, "
        f"electrical engineering comes first in {k_of_n(ee, len(alt), 'runs')}."
    )
    out.append(
        f"On the subset with the smallest MIC the paper's order comes back in "
        f"{k_of_n(kp, len(small), 'runs')}."
    )
    return " ".join(out)


def stability_text(page: Any) -> str:
    """How the fits' MICs move with FastICA's seed, in words chosen from the page (MyST)."""
    s = _shown(page)
    mic = {fit: [x.model.mic_ for x in _fits(page, s, fit)] for fit in FITS}
    out = []
    for fit, v in mic.items():
        spread = max(v) / min(v)
        moves = "moves little" if spread < 1.2 else f"spreads over a factor of {spread:.1f}"
        out.append(f"the {FIT_WORDS[fit]} MIC {moves}, {median_range(v, what='')}.")
    out[0] = f"Over the {count(len(mic['math']), 'run')} of {SETUP_WORDS[s]} {out[0]}"
    return " ".join(t[0].upper() + t[1:] for t in out)


def why_texts(page: Any) -> dict[str, str]:
    """The causes of the differences from the paper, one paragraph per subject fit (MyST,
    fit -> text, each opening with the fit's name in bold)."""
    s = _shown(page)
    m = page.results[s].math
    size = len(m.domains)
    best = m.table[m.table["size"] == size].sort_values("mic", kind="stable").iloc[0]
    math = (
        f"**Mathematics (Paper Figure 28).** The paper's MIC and its choice of base models "
        f"{holds(page, ['H.5-math-mic', 'H.5-math-minimal'])}"
        if _row(page, "H.5-math-mic").setups[s].verdict
        == _row(page, "H.5-math-minimal").setups[s].verdict
        else "**Mathematics (Paper Figure 28).** The paper's MIC "
        f"{holds(page, ['H.5-math-mic'])}, its choice of base models "
        f"{holds(page, ['H.5-math-minimal'])}"
    )
    added = sorted(set(best["subset"]) - set(m.domains))
    removed = sorted(set(m.domains) - set(best["subset"]))
    if len(added) == len(removed) == 1:
        math += (
            f"; the smallest MIC, {best['mic']:.3f}, belongs to a neighbouring subset, with "
            f"{added[0]} in place of {removed[0]}."
        )
    elif added or removed:
        math += f"; the smallest MIC, {best['mic']:.3f}, belongs to {join_words(best['subset'])}."
    else:
        math += "."
    if not _paper_choice(m, "math"):
        math = (
            "**Mathematics (Paper Figure 28).** The settings fit other base models than the "
            "paper's, so its MIC and its choice of base models do not apply."
        )
    else:
        math += (
            " The most likely reason is the domains: the MMLU leaderboard has no base-model "
            "column, our attribution of its models (through v1's metadata) is not the authors', "
            "and a different set of models gives a different fit."
        )
    college = sum(
        f.alignment.loc["z1", "top"] == MATH_SUBJECTS[0]
        for x in page.setups
        for f in _fits(page, x, "math")
    )
    if college == 0:
        runs = "either setup" if len(page.setups) == 2 else SETUP_WORDS[page.setups[0]]
        math += f" College mathematics is z1 in no run of {runs}, so the seed is not the cause."
    p = page.results[s].physics
    last = [r for r in p.alignment.index if p.alignment.loc[r, "benchmark"] == PHYSICS_SUBJECTS[0]]
    choice = (
        f"The choice of base models {holds(page, ['H.5-phys-minimal'])}, and the MIC "
        f"{holds(page, ['H.5-phys-mic'])}. "
        if _paper_choice(p, "physics")
        else "The settings fit other base models than the paper's, so its MIC and its choice "
        "of base models do not apply. "
    )
    physics = (
        f"**Physics (Paper Figure 29).** {choice}"
        f"Conceptual physics as the first factor {holds(page, ['H.5-phys-z1'])}"
        + (f". It is {last[0]} in {_typical(page, s)}." if last and last[0] != "z1" else ".")
    )
    cross = f"**Across subjects (Paper Figure 30).** The order {holds(page, ['H.5-cross-order'])}."
    cause = cross_cause(page)
    if cause:
        cross += f" {cause} ({{ref}}`mmlu-fragile`)."
    return {"math": math, "physics": physics, "cross": cross}


# --------------------------------------------------------------------------- tables and figures
#: Short names of the base models in the MIC figures.
SHORT_NAMES = {
    "Mistral-7B": "M7",
    "Mixtral-8x7B": "Mx",
    "Llama-2-7B": "L7",
    "Llama-2-13B": "L13",
    "Llama-2-70B": "L70",
    "Llama-3-8B": "L3-8",
}


def _most_often(values: Sequence[Any], label: Any) -> str:
    """``"elementary math (14 of 20 runs)"``: the most frequent value of ``values``."""
    counts = pd.Series(list(values)).value_counts()
    return f"{label(counts.index[0])} ({k_of_n(int(counts.iloc[0]), len(values), 'runs')})"


def seed_table(page: Any, fit: str) -> pd.DataFrame:
    """Subject fit ``fit`` per setup: the MIC of the typical run and over the runs of the
    ensemble, the rank of the fitted subset in the typical run's MIC table, and the most
    frequent top subject of z1 and order over the runs."""
    out = {}
    for s in page.setups:
        f, fits = getattr(page.results[s], fit), _fits(page, s, fit)
        size = len(f.domains) if fit == "math" else None
        row = f.rank()
        table = f.table if size is None else f.table[f.table["size"] == size]
        rank = int(row["rank"] if size else row["rank_all"])
        out[SETUP_WORDS[s][4:]] = {
            "MIC, typical run": f"{f.model.mic_:.3f} (seed {page.results[s].setup.ica_seed})",
            "MIC over the runs": median_range([x.model.mic_ for x in fits], what="runs"),
            "rank of this choice, typical run": k_of_n(rank, len(table)),
            "top(z1), most often": _most_often(
                [x.alignment.loc["z1", "top"] for x in fits], short_label
            ),
            "order, most often": _most_often(
                [tuple(x.alignment["benchmark"]) for x in fits],
                lambda o: " > ".join(short_label(c) for c in o),
            ),
        }
    return pd.DataFrame(out)


def cross_table(page: Any) -> pd.DataFrame:
    """Figure 30's subjects on the three choices of base models, per setup: the base models,
    the typical run's MIC and order, and the runs that give the paper's order."""
    paper = list(paper_cross())
    abbr = {CROSS_SUBJECTS[0]: "math", CROSS_SUBJECTS[1]: "physics", CROSS_SUBJECTS[2]: "EE"}
    records = []
    for s in page.setups:
        r = page.results[s]
        fits = {"physics choice": r.cross, **r.alternatives}
        for name, f in fits.items():
            runs = [
                x.cross if name == "physics choice" else x.alternatives[name]
                for x in page.ensembles[s]
            ]
            k = sum(x.alignment["benchmark"].tolist() == paper for x in runs)
            records.append(
                {
                    "setup": SETUP_LABELS[s],
                    "fit": name,
                    "base models": ", ".join(SHORT_NAMES.get(d, d) for d in f.domains),
                    "MIC, typical run": f"{f.model.mic_:.3f}",
                    "order, typical run": " > ".join(abbr[x] for x in f.alignment["benchmark"]),
                    "paper's order": k_of_n(k, len(runs), "runs"),
                }
            )
    return pd.DataFrame(records)


def convergence_table(page: Any) -> pd.DataFrame:
    """Per base model, setup and subject fit: the runs of the ensemble in which FastICA
    converged ("k of n"; "–" where the fit does not use the base model)."""
    cols = {}
    for s in page.setups:
        for fit in FITS:
            fits = _fits(page, s, fit)
            cols[f"{SETUP_LABELS[s]} {FIT_WORDS[fit]}"] = pd.Series(
                {
                    d: k_of_n(sum(bool(x.model.ica_converged_[d]) for x in fits), len(fits))
                    for d in fits[0].domains
                }
            )
    out = pd.DataFrame(cols)
    out.index.name = "FastICA converged (runs)"
    return out.fillna("–")


def subject_figure(page: Any, fit: str) -> Any:
    """Figures 28-30 for subject fit ``fit``: the correlations and spectra of its subjects
    within its base models, and the mixing matrix of each setup's typical run
    (:func:`hca.plots.plot_subject_panels`). Returns the figure."""
    from hca import plots

    fits = {s: getattr(page.results[s], fit) for s in page.setups}
    f = fits[_shown(page)]
    names = [short_label(x) for x in f.subjects]
    mixings = {
        f"{SETUP_LABELS[s]} (seed {page.results[s].setup.ica_seed})": fits[s].model.mixing_
        for s in page.setups
    }
    return plots.plot_subject_panels(f.corr, f.spectra, mixings, names)[0, 0].figure


def mic_figure(page: Any, fit: str, paper_mic: float | None = None) -> Any:
    """The MIC of every subset of the available base models for subject fit ``fit``, one
    panel per setup (its typical run), the fitted subset outlined
    (:func:`hca.plots.plot_mic_panels`). Returns the figure."""
    from hca import plots

    fits = {SETUP_WORDS[s][4:]: getattr(page.results[s], fit) for s in page.setups}
    ref = {"paper": paper_mic} if paper_mic is not None else None
    return plots.plot_mic_panels(
        {k: f.table for k, f in fits.items()},
        {k: f.domains for k, f in fits.items()},
        short_names=SHORT_NAMES,
        reference=ref,
    )[0].figure


def seeds_figure(page: Any) -> Any:
    """The MIC of every run of each setup's ensemble for the three subject fits, the typical
    run ringed, the paper's MIC where it gives one (:func:`hca.plots.plot_runs_mic`). Returns
    the figure."""
    from hca import plots

    refs = {"math": _paper_value("H.5-math-mic"), "physics": _paper_value("H.5-phys-mic")}
    values = {
        FIT_WORDS[fit]: {
            SETUP_WORDS[s][4:]: [x.model.mic_ for x in _fits(page, s, fit)] for s in page.setups
        }
        for fit in FITS
    }
    typical = {
        FIT_WORDS[fit]: {
            SETUP_WORDS[s][4:]: float(getattr(page.results[s], fit).model.mic_) for s in page.setups
        }
        for fit in FITS
    }
    reference = {FIT_WORDS[fit]: refs.get(fit) for fit in FITS}
    return plots.plot_runs_mic(values, typical, reference=reference).figure


# =========================================================================== starts per run
@dataclass(frozen=True, eq=False)
class RestartMeasurement:
    """How many FastICA starts per run the careful setup needs in one subject fit.

    Attributes
    ----------
    fit : str
        The subject fit (a key of :data:`FITS`).
    domains : tuple
        Its base models (the settings').
    fragile : tuple
        Those whose FastICA, from one start, is rounding-sensitive in at least one of the
        runs (the domain's models listed in reverse order give another result).
    optima : DataFrame
        The optima of the fragile domains over ``n_reference`` single starts (seeds
        ``0 .. n_reference - 1``), most starts first: ``domain``, ``optimum``, ``starts``,
        ``objective`` (median), ``low``, ``high`` (range), ``top`` (the major optimum, holding
        at least :data:`~hca.paper.claims.MAJOR_SHARE` of the starts, with the largest median
        objective) and ``better`` (the top one, when the objective clearly prefers it: its
        median exceeds every other major optimum's by more than the larger of the two ranges,
        as in the rule's step 4).
    table : DataFrame
        One row per number of starts ``k``: ``runs`` (seeds ``0 .. n_seeds - 1``, each
        keeping the best of the starts ``seed .. seed + k - 1``), ``top`` (runs that land in
        the top optimum in every fragile domain; 0 without a fragile domain), ``sensitive``
        (runs rounding-sensitive in some base model of the fit), ``expected`` (runs expected
        to miss the better optimum by the single starts' rate, ``runs (1 - rate)^k``; NaN
        without a better optimum), ``starts`` (distinct FastICA starts per base model and row
        order) and ``cpu_s`` (CPU seconds of the subject set's FastICA on every available
        base model, in both row orders: what the chapter pays for these runs).
    """

    fit: str
    domains: tuple
    fragile: tuple
    optima: pd.DataFrame
    table: pd.DataFrame

    @property
    def rate(self) -> float | None:
        """Share of the single starts that land in the better optimum (None: no such one)."""
        better = self.optima[self.optima["better"]]
        return None if better.empty else float(better["starts"].sum() / self.n_reference)

    @property
    def n_reference(self) -> int:
        """Single starts the optima are read from."""
        per = self.optima.groupby("domain")["starts"].sum()
        return int(per.iloc[0]) if len(per) else 0

    def needed(self, at_least: int) -> int | None:
        """The fewest starts per run (among those measured) from which the better optimum is
        found in at least ``at_least`` runs for this and every larger number of starts."""
        if self.rate is None:
            return None
        ok = (self.table["top"] >= at_least).to_numpy()
        for i in range(len(ok)):
            if ok[i:].all():
                return int(self.table.index[i])
        return None

    def summary(self) -> str:
        lines = [f"{self.fit} fit on {', '.join(self.domains)}"]
        if not self.fragile:
            lines.append("  no base model is rounding-sensitive with one start")
        for r in self.optima.itertuples():
            mark = " (better)" if r.better else " (top, not clearly better)" if r.top else ""
            lines.append(
                f"  {r.domain} optimum {r.optimum}{mark}: {r.starts} starts, objective median "
                f"{r.objective:.5f} (range {r.low:.5f} to {r.high:.5f})"
            )
        lines.append(self.table.to_string(float_format=lambda x: f"{x:.2f}"))
        return "\n".join(lines)


def restart_measurement(
    fit: str = "cross",
    ks: Sequence[int] = (1, 2, 5, 10, 15, 20, 30, 40),
    *,
    n_seeds: int = 40,
    n_reference: int = 400,
    settings: Settings | None = None,
) -> RestartMeasurement:
    """Measure how many FastICA starts per run the careful setup needs in subject fit
    ``fit``: for every ``k`` of ``ks``, in how many of the runs of seeds ``0 .. n_seeds - 1``
    (each keeping the best of ``k`` starts by FastICA's objective, ``HCA(n_restarts=k)``) the
    better optimum of the fit's rounding-sensitive base models is found, how many runs stay
    rounding-sensitive, and the CPU time (:class:`RestartMeasurement`). The optima and the
    better one are read from ``n_reference`` single starts. The printout of
    ``benchmarks/bench_mmlu_restarts.py``; :data:`CAREFUL_RESTARTS` is set from it.

    Raises
    ------
    ValueError
        If ``fit`` is not one of :data:`FITS`, a ``k`` is below one, or ``n_seeds`` or
        ``n_reference`` is below one (before any fit).
    """
    if fit not in FITS:
        raise ValueError(f"restart_measurement: fit {fit!r} is not one of {tuple(FITS)}")
    if not ks or not all(_is_count(k) for k in ks) or not _is_count(n_seeds):
        raise ValueError(
            f"restart_measurement: ks={tuple(ks)!r} and n_seeds={n_seeds!r} must be integers >= 1"
        )
    if not _is_count(n_reference):
        raise ValueError(f"restart_measurement: n_reference={n_reference!r} must be >= 1")
    st_ = Settings() if settings is None else settings
    check_available(st_)
    data = mmlu_data()
    subjects = FITS[fit]
    domains = st_.math_domains if fit == "math" else st_.physics_domains
    X, labels = domain_data(data.frame, data.available, list(subjects))
    both = [(X, labels), st.reversed_rows(X, labels)]

    def icas(k: int, seeds: Sequence[int]) -> tuple[list, list, float]:
        est = estimator("careful", search="sequential", max_iter=MAX_ITER, n_restarts=k)
        start = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fw, bw = st.domain_icas(est, both, list(seeds))
        return fw, bw, time.process_time() - start

    def rows(fits: list, d: str) -> list[np.ndarray]:
        return [canonical_rows(np.asarray(f[d].unmixing, dtype=float)) for f in fits]

    def differ(fw: list, bw: list, d: str) -> list[bool]:
        return [not same_solution(a, b, SAME_OPTIMUM) for a, b in zip(rows(fw, d), rows(bw, d))]

    fw1, bw1, _ = icas(1, range(n_seeds))
    fragile = tuple(d for d in domains if any(differ(fw1, bw1, d)))
    ref, _, _ = icas(1, range(n_reference)) if fragile else ([], [], 0.0)
    optima, tops, clear = [], {}, bool(fragile)
    for d in fragile:
        found: list[tuple[np.ndarray, list[float]]] = []
        for r, f in zip(rows(ref, d), ref):
            hit = next((g for g in found if same_solution(r, g[0], SAME_OPTIMUM)), None)
            if hit is None:
                found.append((r, []))
                hit = found[-1]
            hit[1].append(float(f[d].objective))
        found.sort(key=lambda g: -len(g[1]))
        major = [g for g in found if len(g[1]) >= max(2, MAJOR_SHARE * n_reference)]
        top = max(major, key=lambda g: float(np.median(g[1])))
        tops[d] = top[0]

        def stats(g: Any) -> tuple[float, float, float]:
            return float(np.median(g[1])), min(g[1]), max(g[1])

        clear &= all(objective_order(stats(top), stats(g)) == 1 for g in major if g is not top)
        for j, g in enumerate(found):
            optima.append(
                {
                    "domain": d,
                    "optimum": j + 1,
                    "starts": len(g[1]),
                    "objective": float(np.median(g[1])),
                    "low": min(g[1]),
                    "high": max(g[1]),
                    "top": g is top,
                }
            )
    frame = pd.DataFrame(
        optima, columns=["domain", "optimum", "starts", "objective", "low", "high", "top"]
    )
    frame["better"] = frame["top"] & clear

    def in_top(fits: list) -> list[bool]:
        per = [[same_solution(r, tops[d], SAME_OPTIMUM) for r in rows(fits, d)] for d in tops]
        return [all(x) for x in zip(*per)] if tops else [False] * len(fits)

    rate = float(np.mean(in_top(ref))) if clear else None
    table = []
    for k in ks:
        fw, bw, cpu = icas(int(k), range(n_seeds))
        sensitive = [any(x) for x in zip(*(differ(fw, bw, d) for d in domains))]
        table.append(
            {
                "k": int(k),
                "runs": n_seeds,
                "top": int(sum(in_top(fw))),
                "sensitive": int(sum(sensitive)),
                "expected": n_seeds * (1 - rate) ** int(k) if rate is not None else np.nan,
                "starts": n_seeds + int(k) - 1,
                "cpu_s": round(cpu, 2),
            }
        )
    return RestartMeasurement(
        fit=fit,
        domains=tuple(domains),
        fragile=fragile,
        optima=frame,
        table=pd.DataFrame(table).set_index("k"),
    )


# =========================================================================== claims
def short_label(col: str) -> str:
    """A subject's short display name (``"college math"``)."""
    return subject_label(col).replace("mathematics", "math")


#: The paper's choice of base models for each subject fit whose claims compare with it.
_PAPER_DOMAINS = {"math": PAPER_MATH_DOMAINS, "physics": PAPER_PHYSICS_DOMAINS}


def _paper_choice(fit: SubjectFit, name: str) -> bool:
    """Whether ``fit`` (the subject fit ``name``) is on the paper's choice of base models."""
    return frozenset(fit.domains) == frozenset(_PAPER_DOMAINS[name])


def _other_domains(fit: SubjectFit, name: str) -> str:
    """The reason of a claim about the paper's choice of base models when the settings fit
    other ones."""
    return (
        f"the settings fit other base models ({', '.join(fit.domains)}) than the paper's "
        f"({', '.join(_PAPER_DOMAINS[name])}), and the claim is about the paper's choice"
    )


def _on_settings(fit: SubjectFit, name: str) -> str:
    """A note for a claim judged on base models other than the paper's (empty on its own)."""
    return "" if _paper_choice(fit, name) else " (on the settings' base models, not the paper's)"


def _refit_set(fit: SubjectFit, k: int | None = None) -> str:
    """The run set of a fit's refits, ``"20 refits (seeds 0-19)"``, or ``k`` of them,
    ``"14 of 20 refits (seeds 0-19)"``."""
    n, seeds = len(fit.seeds), seed_list(list(fit.seeds["seed"]))
    return (count(n, "refit") if k is None else k_of_n(k, n, "refits")) + f" ({seeds})"


def _seed_rule(ok0: bool, k: int, n: int) -> str:
    """Seed 0 matches and at least half the seeds do -> reproduced; one of the two -> partly."""
    half = k >= 0.5 * n
    return grade(ok0 and half, ok0 != half)


def _seed_reason(ok0: bool, k: int, fit: SubjectFit, what: str) -> str:
    """``"the paper's order holds at seed 0 and holds in 14 of 20 refits (seeds 0-19)"``."""
    return f"{what} {'holds' if ok0 else 'fails'} at seed 0 and holds in {_refit_set(fit, k)}"


@claim("F27-one-factor", chapter="mmlu", figure="fig-mmlu-corr57")
def _fig27(res: MMLUResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    d = res.data
    bar = float(rows.loc["F27-one-factor", "value"])
    pc1 = float(d.pc1["all models"])
    ours = (
        f"median pairwise correlation {d.median_corr:.2f} (min {d.min_corr:.2f}); PC1 "
        f"{pc1:.1%} of the variance ({count(len(d.frame), 'model')})"
    )
    ok = [d.median_corr >= bar, pc1 >= bar]
    words = {
        2: "both measures reach",
        1: "1 of the 2 measures reaches",
        0: "neither measure reaches",
    }
    reason = f"{words[sum(ok)]} {bar:g}"
    return {"F27-one-factor": Outcome(ours, grade(all(ok), any(ok)), reason, value=d.median_corr)}


def _mic_outcome(fit: SubjectFit, name: str, rows: pd.DataFrame, cid: str) -> Outcome:
    mic = float(fit.model.mic_)
    ours = f"{mic:.3f} on {', '.join(fit.domains)}"
    if not _paper_choice(fit, name):
        return Outcome(ours, "not applicable", _other_domains(fit, name), value=mic)
    v, r = numeric_verdict(mic, float(rows.loc[cid, "value"]), rows.loc[cid, "tolerance"])
    return Outcome(ours, v, r, value=mic)


def _minimal_outcome(fit: SubjectFit, name: str, size: int | None, what: str) -> Outcome:
    if fit.table is None:
        raise ValueError(f"{fit.summary()}: no subset table to rank (min_size was None)")
    row = fit.rank()
    table = fit.table if size is None else fit.table[fit.table["size"] == size]
    rank = int(row["rank"] if size is not None else row["rank_all"])
    best = table.sort_values("mic", kind="stable").iloc[0]
    per = fit.best_per_seed(size)
    k = int((per["subset"].map(frozenset) == frozenset(fit.domains)).sum())
    ours = (
        f"rank {rank} of {count(len(table), 'subset')} {what} (MIC {row['mic']:.3f}); smallest: "
        f"{', '.join(best['subset'])} ({best['mic']:.3f}); this choice smallest in "
        f"{k_of_n(k, len(per))} sweep seeds"
    )
    if not _paper_choice(fit, name):
        return Outcome(ours, "not applicable", _other_domains(fit, name), value=float(rank))
    smaller = count(rank - 1, "subset")
    reason = (
        "the paper's choice has the smallest MIC"
        if rank == 1
        else f"{smaller} {'has' if rank == 2 else 'have'} a smaller MIC at seed 0"
    )
    return Outcome(ours, grade(rank == 1, rank == 2), reason, value=float(rank))


def _z1_outcome(fit: SubjectFit, name: str, subject: str) -> Outcome:
    top0 = fit.alignment.loc["z1", "top"]
    tops = fit.seeds["top"].map(lambda t: t[0])
    k, n = int((tops == subject).sum()), len(tops)
    counts = tops.value_counts()
    ours = (
        f"z1 = {short_label(top0)} (squared weight "
        f"{_row_share(fit.model.unmixing_, 0, fit.subjects.index(top0)):.2f}); the top "
        f"subject of z1 over {_refit_set(fit)}: "
        + join_words(f"{short_label(c)} in {whole(v)}" for c, v in counts.items())
    )
    reason = _seed_reason(top0 == subject, k, fit, f"z1 = {short_label(subject)}")
    return Outcome(ours, _seed_rule(top0 == subject, k, n), reason + _on_settings(fit, name))


def _row_share(H: Any, i: int, j: int) -> float:
    row = np.asarray(H, dtype=float)[i]
    return float(row[j] ** 2 / np.sum(row**2))


@claim(
    "H.5-math-mic",
    "H.5-math-minimal",
    "H.5-math-z1",
    chapter="mmlu",
    figure="fig-mmlu-math-mic",
    ensemble=True,
    evidence=lambda res: res.math.evidence(),
)
def _math(res: MMLUResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    f = res.math
    size = len(f.domains)
    return {
        "H.5-math-mic": _mic_outcome(f, "math", rows, "H.5-math-mic"),
        "H.5-math-minimal": _minimal_outcome(f, "math", size, f"of {size} base models"),
        "H.5-math-z1": _z1_outcome(f, "math", rows.loc["H.5-math-z1", "value"]),
    }


@claim(
    "H.5-phys-mic",
    "H.5-phys-minimal",
    "H.5-phys-z1",
    chapter="mmlu",
    figure="fig-mmlu-physics-mic",
    ensemble=True,
    evidence=lambda res: res.physics.evidence(),
)
def _physics(res: MMLUResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    f = res.physics
    return {
        "H.5-phys-mic": _mic_outcome(f, "physics", rows, "H.5-phys-mic"),
        "H.5-phys-minimal": _minimal_outcome(
            f, "physics", None, f"of at least {f.min_size} base models"
        ),
        "H.5-phys-z1": _z1_outcome(f, "physics", rows.loc["H.5-phys-z1", "value"]),
    }


@claim(
    "H.5-cross-order",
    chapter="mmlu",
    figure="fig-mmlu-cross",
    ensemble=True,
    evidence=lambda res: res.cross.evidence(),
)
def _cross(res: MMLUResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    paper = tuple(rows.loc["H.5-cross-order", "value"].split(">"))
    f = res.cross
    order = tuple(f.alignment["benchmark"])
    k, n = int((f.seeds["order"] == paper).sum()), len(f.seeds)
    ours = (
        f"{' → '.join(short_label(c) for c in order)} (MIC {f.model.mic_:.3f}, on "
        f"{', '.join(f.domains)}); the paper's order in {_refit_set(f, k)}"
    )
    v = _seed_rule(order == paper, k, n)
    reason = _seed_reason(order == paper, k, f, "the paper's order")
    return {"H.5-cross-order": Outcome(ours, v, reason + _on_settings(f, "physics"))}


@claim(
    "H.5-math-z23",
    chapter="mmlu",
    figure="fig-mmlu-math",
    ensemble=True,
    evidence=lambda res: res.math.evidence(),
)
def _math_z23(res: MMLUResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    target = set(paper_list(rows, "H.5-math-z23"))
    f = res.math
    tops = f.seeds["top"].map(lambda t: set(t[1:3]))
    top0 = tuple(f.alignment["top"])[1:3]
    ok0 = set(top0) == target
    k, n = int(sum(t == target for t in tops)), len(tops)
    one = sum(t in target for t in top0) == 1
    half = k >= 0.5 * n
    ours = (
        f"top(z2) = {short_label(top0[0])}, top(z3) = {short_label(top0[1])}; "
        f"{{elementary, high school}} in {_refit_set(f, k)}"
    )
    reason = _seed_reason(ok0, k, f, "{top(z2), top(z3)} = {elementary, high-school math}")
    if not ok0 and not half and one:
        reason += "; exactly one of top(z2), top(z3) is one of them at seed 0"
    v = grade(ok0 and half, ok0 != half or one)
    return {"H.5-math-z23": Outcome(ours, v, reason + _on_settings(f, "math"))}


def _mixture_rows(W: Any, subjects: Sequence[str], pair: Sequence[str]) -> list[bool]:
    """For z2 and z3: the pair's squared-weight share >= 0.8 with each >= 0.1."""
    W = np.asarray(W, dtype=float)
    idx = [list(subjects).index(p) for p in pair]
    return [bool(W[i, idx].sum() >= 0.8 and (W[i, idx] >= 0.1).all()) for i in (1, 2)]


@claim(
    "H.5-phys-z23",
    chapter="mmlu",
    figure="fig-mmlu-physics",
    ensemble=True,
    evidence=lambda res: res.physics.evidence(),
)
def _phys_z23(res: MMLUResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    pair = paper_list(rows, "H.5-phys-z23")
    f = res.physics
    H = np.asarray(f.model.unmixing_, dtype=float)
    W0 = (H / np.linalg.norm(H, axis=1, keepdims=True)) ** 2
    rows0 = _mixture_rows(W0, f.subjects, pair)
    per_seed = [all(_mixture_rows(w, f.subjects, pair)) for w in f.seeds["sq_weights"]]
    k, n = int(sum(per_seed)), len(per_seed)
    idx = [f.subjects.index(p) for p in pair]
    shares = ", ".join(f"z{i + 1} {W0[i, idx].sum():.2f}" for i in (1, 2))
    ours = f"high-school + college physics share {shares}; both rows mixtures in {_refit_set(f, k)}"
    both = all(rows0)
    reason = (
        f"{k_of_n(sum(rows0), 2)} rows are such mixtures at seed 0; both are in "
        f"{_refit_set(f, k)}" + _on_settings(f, "physics")
    )
    v = grade(both and k >= 0.5 * n, sum(rows0) >= 1)
    return {"H.5-phys-z23": Outcome(ours, v, reason)}
