"""MMLU by subject (Appendix H.5): the chapter's analysis, its claims, and its helpers.

The chapter (:func:`run`, computed once per setup, :mod:`hca.paper.cache`) fits HCA with three
factors on three related subjects at a time: mathematics and physics on the paper's choices of
base models, with the MIC of every subset of the available base models, and Figure 30's
subjects on the physics choice and on two alternatives; every fit is repeated over FastICA
seeds (:class:`Settings`). The evaluators at the end judge the paper's claims. The leaderboard
has no public domain rule of the authors, so both setups (:mod:`hca.paper.setups`) use this
book's attribution (:func:`mmlu_frame`, shared: :func:`mmlu_data`) and differ in the
estimator's options; where the paper states no subset size (Figure 30's alternative choice of
base models) the setup's ``min_subset_size`` applies. Refits use ``search="sequential"``, which
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
are :mod:`hca.paper.mmlu_readouts`, re-exported here.
"""

from __future__ import annotations

import difflib
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
from hca.estimator.model import HCA, mic_by_subset_many
from hca.interpret import cluster_order
from hca.paper.cache import cached
from hca.paper.claims import (
    Outcome,
    RunEvidence,
    claim,
    grade,
    numeric_verdict,
    paper_list,
    share_text,
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


@dataclass(frozen=True)
class Settings:
    """Repetition counts of the MMLU chapter (defaults: the book's).

    Attributes
    ----------
    setups : tuple of str
        The setups to run (:data:`hca.paper.setups.SETUP_NAMES`: both).
    n_seeds : int
        FastICA seeds of the ensemble every fit-based claim is read from (seeds
        ``0 .. n_seeds - 1``; :class:`hca.paper.shape.EnsembleSettings`).
    n_seeds_more : int
        The larger ensemble a claim is read from when a share of the first runs lies
        near a threshold or one of them is rounding-sensitive.
    seeds : tuple of int
        FastICA seeds of the refits on the paper's choices of base models (the criteria's 20).
    sweep_seeds : tuple of int
        Seeds over which the MIC-by-subset sweeps of mathematics and physics are repeated.
    alt_seeds : tuple of int
        Seeds of the refits on the alternative base models of Figure 30.
    n_jobs : int or None
        joblib jobs of the sweeps (None: the active backend's default, one process).
    """

    setups: tuple[str, ...] = SETUP_NAMES  # the setups to run
    n_seeds: int = 20  # FastICA seeds of the chapter's ensemble
    n_seeds_more: int = 40  # the larger ensemble near a threshold
    seeds: tuple[int, ...] = tuple(range(20))
    sweep_seeds: tuple[int, ...] = tuple(range(10))
    alt_seeds: tuple[int, ...] = tuple(range(10))
    n_jobs: int | None = None


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


#: The three sets of subjects the chapter fits.
_SUBJECT_SETS = (MATH_SUBJECTS, PHYSICS_SUBJECTS, CROSS_SUBJECTS)


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
    batches: dict, est: HCA, data: MMLUData, seeds: tuple[int, ...]
) -> dict[tuple, _SubjectICA]:
    """:func:`_subject_icas` of ``seeds``, computed once per set of FastICA options of ``est``
    (the book's two setups differ only in HCA's residuals and the subset size)."""
    options = tuple(est.get_params()[k] for k in _ICA_OPTIONS)
    if options not in batches:
        batches[options] = _subject_icas(est, data, _SUBJECT_SETS, seeds)
    return batches[options]


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


def _estimator(setup: Setup) -> HCA:
    return estimator(setup, search="sequential", max_iter=MAX_ITER)


def _fixed_fits(setup: Setup, settings: Settings) -> dict[str, _Fixed]:
    """The subject fits every run of ``setup`` makes on fixed base models."""
    k = min(setup.min_subset_size, len(mmlu_data().available))
    seeds, sweep = settings.seeds, settings.sweep_seeds
    return {
        "math": _Fixed(MATH_SUBJECTS, PAPER_MATH_DOMAINS, seeds, 3, sweep),
        "physics": _Fixed(PHYSICS_SUBJECTS, PAPER_PHYSICS_DOMAINS, seeds, 4, sweep),
        "cross": _Fixed(CROSS_SUBJECTS, PAPER_PHYSICS_DOMAINS, seeds, k),
        "math_choice": _Fixed(CROSS_SUBJECTS, PAPER_MATH_DOMAINS, settings.alt_seeds),
    }


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
        dict.fromkeys(int(s) for s in (*settings.seeds, *settings.alt_seeds, *settings.sweep_seeds))
    )
    batches: dict[tuple, dict[tuple, _SubjectICA]] = {}
    icas, refits = [], []
    for setup in setups:
        est = _estimator(setup)
        batch = _ica_batch(batches, est, data, seeds)
        icas.append(batch)
        fixed = _fixed_fits(setup, settings).items()
        refits.append(
            {k: _refits(est, data, batch[f.subjects], f, settings.n_jobs) for k, f in fixed}
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
    data = mmlu_data()
    common = cached("mmlu_common", _common, setups, settings)
    more: dict[tuple, dict[tuple, _SubjectICA]] = {}
    out = []
    for i, setup in enumerate(setups):
        est = _estimator(setup)
        icas = common.icas[i]
        new = tuple(s for s in seeds if s not in icas[MATH_SUBJECTS].seeds)
        if new:
            extra = _ica_batch(more, est, data, new)
            icas = {subjects: icas[subjects].extended(extra[subjects]) for subjects in icas}
        out.append(_setup_runs(setup, est, data, icas, common.refits[i], settings, seeds))
    return tuple(out)


def _setup_runs(
    setup: Setup,
    est: HCA,
    data: MMLUData,
    icas: dict[tuple, _SubjectICA],
    refits: dict[str, _Refits],
    settings: Settings,
    seeds: tuple[int, ...],
) -> tuple[MMLUResults, ...]:
    """The runs of :func:`_runs` under one setup, from its FastICA ``icas`` and the refits of
    its fixed subject fits."""
    fits = {
        name: _subject_fits(est, data, icas[f.subjects], f, seeds, refits[name], settings.n_jobs)
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
    ica = icas[CROSS_SUBJECTS]
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


# =========================================================================== claims
def short_label(col: str) -> str:
    """A subject's short display name (``"college math"``)."""
    return subject_label(col).replace("mathematics", "math")


def _seed_rule(ok0: bool, k: int, n: int) -> str:
    """Seed 0 matches and at least half the seeds do -> reproduced; one of the two -> partly."""
    half = k >= 0.5 * n
    return grade(ok0 and half, ok0 != half)


def _seed_reason(ok0: bool, k: int, n: int, what: str) -> str:
    return f"{what} {'holds' if ok0 else 'fails'} at seed 0 and in {k / n:.0%} of {n} seeds"


@claim("F27-one-factor", chapter="mmlu", figure="fig-mmlu-corr57")
def _fig27(res: MMLUResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    d = res.data
    bar = float(rows.loc["F27-one-factor", "value"])
    pc1 = float(d.pc1["all models"])
    ours = (
        f"median pairwise correlation {d.median_corr:.2f} (min {d.min_corr:.2f}); PC1 "
        f"{pc1:.1%} of the variance ({len(d.frame):,} models)"
    )
    ok = [d.median_corr >= bar, pc1 >= bar]
    reason = f"{sum(ok)} of the 2 measures reach {bar:g}"
    return {"F27-one-factor": Outcome(ours, grade(all(ok), any(ok)), reason, value=d.median_corr)}


def _mic_outcome(fit: SubjectFit, rows: pd.DataFrame, cid: str) -> Outcome:
    mic = float(fit.model.mic_)
    v, r = numeric_verdict(mic, float(rows.loc[cid, "value"]), rows.loc[cid, "tolerance"])
    # the range over seeds is the ensemble's (one seed set beside the median)
    return Outcome(f"{mic:.3f} (seed 0; {', '.join(fit.domains)})", v, r, value=mic)


def _minimal_outcome(fit: SubjectFit, size: int | None, what: str) -> Outcome:
    if fit.table is None:
        raise ValueError(f"{fit.summary()}: no subset table to rank (min_size was None)")
    row = fit.rank()
    table = fit.table if size is None else fit.table[fit.table["size"] == size]
    rank = int(row["rank"] if size is not None else row["rank_all"])
    best = table.sort_values("mic", kind="stable").iloc[0]
    per = fit.best_per_seed(size)
    k = int((per["subset"].map(frozenset) == frozenset(fit.domains)).sum())
    ours = (
        f"rank {rank} of {len(table)} {what} (MIC {row['mic']:.3f}); smallest: "
        f"{', '.join(best['subset'])} ({best['mic']:.3f}); the paper's choice smallest in "
        f"{share_text(k, len(per))}"
    )
    reason = (
        "the paper's choice has the smallest MIC"
        if rank == 1
        else f"{rank - 1} subset(s) have a smaller MIC at seed 0"
    )
    return Outcome(ours, grade(rank == 1, rank == 2), reason, value=float(rank))


def _z1_outcome(fit: SubjectFit, subject: str) -> Outcome:
    top0 = fit.alignment.loc["z1", "top"]
    tops = fit.seeds["top"].map(lambda t: t[0])
    k, n = int((tops == subject).sum()), len(tops)
    counts = tops.value_counts(normalize=True)
    ours = (
        f"seed 0: z1 = {short_label(top0)} (squared weight "
        f"{_row_share(fit.model.unmixing_, 0, fit.subjects.index(top0)):.2f}); over {n} "
        "seeds: " + ", ".join(f"{short_label(c)} {v:.0%}" for c, v in counts.items())
    )
    reason = _seed_reason(top0 == subject, k, n, f"z1 = {short_label(subject)}")
    return Outcome(ours, _seed_rule(top0 == subject, k, n), reason, value=k / n)


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
    return {
        "H.5-math-mic": _mic_outcome(f, rows, "H.5-math-mic"),
        "H.5-math-minimal": _minimal_outcome(f, 3, "three-domain subsets"),
        "H.5-math-z1": _z1_outcome(f, rows.loc["H.5-math-z1", "value"]),
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
        "H.5-phys-mic": _mic_outcome(f, rows, "H.5-phys-mic"),
        "H.5-phys-minimal": _minimal_outcome(f, None, f"subsets of at least {f.min_size}"),
        "H.5-phys-z1": _z1_outcome(f, rows.loc["H.5-phys-z1", "value"]),
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
        f"seed 0: {' → '.join(short_label(c) for c in order)} (MIC {f.model.mic_:.3f}, physics "
        f"choice of base models); the paper's order in {share_text(k, n)}"
    )
    v = _seed_rule(order == paper, k, n)
    reason = _seed_reason(order == paper, k, n, "the paper's order")
    return {"H.5-cross-order": Outcome(ours, v, reason, value=k / n)}


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
        f"seed 0: top(z2) = {short_label(top0[0])}, top(z3) = {short_label(top0[1])}; "
        f"{{elementary, high school}} in {share_text(k, n)}"
    )
    reason = _seed_reason(ok0, k, n, "{top(z2), top(z3)} = {elementary, high-school math}")
    if not ok0 and not half and one:
        reason += "; exactly one of top(z2), top(z3) is one of them at seed 0"
    v = grade(ok0 and half, ok0 != half or one)
    return {"H.5-math-z23": Outcome(ours, v, reason, value=k / n)}


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
    ours = (
        f"seed 0: high-school + college physics share {shares}; both rows mixtures in "
        f"{share_text(k, n)}"
    )
    both = all(rows0)
    reason = (
        f"{sum(rows0)} of the 2 rows are such mixtures at seed 0; both in {k / n:.0%} of {n} seeds"
    )
    v = grade(both and k >= 0.5 * n, sum(rows0) >= 1)
    return {"H.5-phys-z23": Outcome(ours, v, reason, value=k / n)}
