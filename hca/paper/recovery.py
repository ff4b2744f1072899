"""The recovery chapter's analysis (Sections 3-4, Appendices C, H.1-H.3), under either setup.

The paper fits HCA on the domains of S_inv, picks the four domains Llama-3-8B, Llama-3.1-8B,
Qwen2.5-7B and Qwen2.5-14B because they give the smallest MIC (Figure 18), reads the causal
order general reasoning (BBH, MMLU-PRO) -> instruction following (IFEval) -> mathematics
(MATH Lvl 5) off the fit after an OLS adjustment (Figure 4), reports its diagnostics (Figure 17,
Table 3, Figure 19) and refits without "badly" fine-tuned models (Appendix H.3, Figures 20-22).
:func:`run` computes all of it under one setup (:mod:`hca.paper.setups`); the evaluators below
judge the chapter's claims (criteria in ``paper_values.csv``).

A reader changes the chapter with its :class:`Settings`: ``domains`` (Section 4's fit, the
paper's four by default) and ``candidates`` (Figure 18's sweep, S_inv by default), besides the
ensemble's seeds and the setups. Claims about the paper's own choice of domains read "not
applicable" for another choice, and say why. :func:`answer` and the ``*_text`` functions write
the page's paragraphs from its results (:func:`hca.paper.scorecard.chapter_page`), so that every
word that depends on a result is chosen from it.

Shared objects: the four-domain fit is :func:`hca.paper.replication.main_fit` and its FastICA
seed refits :func:`hca.paper.replication.seed_refits` (the interpretation chapter shows the
same objects). The headline stability and the domain-rule evidence are in
:mod:`hca.paper.recovery_stability`.

Choices stated here once:

* Figure 18 sweeps the subsets of S_inv of at least three domains under both setups
  (:data:`~hca.paper.recovery_stability.SWEEP_MIN_SIZE`, or fewer when Section 4's fit has
  fewer domains; the authors' notebook printed only those of four or more, which cannot test
  the paper's claim: see there).
* The filtered fits (Appendix H.3) use ``max_iter=20000``: FastICA needs 3,509 iterations on
  the careful setup's filtered Qwen2.5-14B domain; convergence, not the MIC, decides. (Under
  the authors' setup every domain converges in fewer than 1,000, their code's cap.)
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.exceptions import ConvergenceWarning

from hca.data import load_paper_values
from hca.data.registry import V2_BENCHMARKS, alignment_text, benchmark_label, role_position
from hca.estimator.model import HCA
from hca.estimator.results import OLSAdjustment
from hca.interpret import noise_shares
from hca.paper.cache import cached, stored_json
from hca.paper.claims import (
    Outcome,
    RunEvidence,
    claim,
    grade,
    numeric_verdict,
    paper_list,
    ratio_band,
    set_verdict,
)
from hca.paper.constants import (
    PAPER_ALIGNMENT,
    PAPER_PATTERNS,
    PAPER_V2_BASES,
    PAPER_V2_FOUR,
    PAPER_V2_PRETRAINED,
    PAPER_V2_SINV,
)
from hca.paper.glue import times_text
from hca.paper.recovery_stability import (
    EXCLUDED,
    HEADLINE_CLAIMS,
    DomainRuleEvidence,
    HeadlineStability,
    authors_printed_mics,
    authors_stored_order,
    domain_rule_evidence,
    four_smallest,
    headline_stability,
    lever_frames,
    printed_value,
    read_sweep,
    short_subset,
    subset_rank,
    sweeps,
)
from hca.paper.replication import (
    BaseFilter,
    domain_data,
    estimator,
    filter_below_base,
    main_fits,
    main_fits_steered,
    seed_refits,
    v2_frame,
)
from hca.paper.setups import SETUP_NAMES, SETUPS, Setup, get_setup
from hca.paper.shape import ChapterSpec, check_settings, each_setup
from hca.paper.words import count, join_words, k_of_n, median_range, number, seed_list, whole
from hca.stability import StabilityResult, fit_record, matches_alignment, ranked_orders, seed_fits

__all__ = [
    "Settings",
    "RecoveryResults",
    "run",
    "near_tie",
    "table3",
    "figure18_table",
    "FILTERED_MAX_ITER",
    "role_index",
    "order_text",
    "ranked_table",
    "pooled_within_variance",
    "VARIANCE_DROP_MAX",
    "EXPECTED_MIC",
    "mic_as_expected",
    "MIN_MODELS",
    "KNOWN_DOMAINS",
    "check_models",
    "ORDER_TIE_MIC",
    "NEAR_TIE_MIC",
    "LOCAL_OPTIMUM_FACTOR",
    "EDGE_DOMAIN",
    "SECTIONS",
    "refits_text",
    "f18_not_applicable",
    "order_tie",
    "printed_mic",
    "rank_phrase",
    "rule_is_main_lever",
    "seed0_in_local_optimum",
    "tie_gap",
    "local_runs",
    "needs_setup",
    "ensemble_table",
    "answer",
    "domains_text",
    "figure18_intro",
    "figure18_text",
    "printed_ranks_text",
    "table3_text",
    "figure19_text",
    "order_paragraph",
    "one_run_text",
    "headline_text",
    "rule_text",
    "optimum_text",
    "tie_text",
    "stored_run_text",
    "filtered_text",
]

#: FastICA iterations of the filtered fits (see the module docstring).
FILTERED_MAX_ITER = 20000
#: Two row orders of a fit whose MICs differ by at most this much are a tie for the order
#: claim: FastICA runs that land in the same optimum of the four domains differ by up to about
#: 0.002 in MIC (the authors' setup, seeds 1-19: 0.036-0.038; FastICA stops at tol 1e-4), so a
#: smaller gap between two orders says nothing about which the data prefer.
ORDER_TIE_MIC = 0.003
#: Appendix H.3's criterion: BBH's and MMLU-PRO's within-domain variance ratio (filtered /
#: unfiltered) at most this (the claim's evaluator, the page's check and the unit tests).
VARIANCE_DROP_MAX = 0.75
#: The MIC of this book's Section 4 fit per setup in its typical run (the median over the
#: 20-seed ensemble; seed 0 of the authors' setup lands in a local optimum at about 0.07 on some
#: processors) and the tolerance of the page's and the unit tests' checks: a regression check
#: of our own number, not the paper's.
EXPECTED_MIC: dict[str, tuple[float, float]] = {
    "authors": (0.038, 0.004),
    "careful": (0.152, 0.004),
}
GENERAL, IFEVAL, MATH = PAPER_ALIGNMENT
_ROLE_NAMES = {GENERAL: "general", IFEVAL: "IFEval", MATH: "MATH Lvl 5"}
B2 = list(V2_BENCHMARKS)


#: ``"MATH Lvl 5 → BBH → IFEval"``: the library's :func:`hca.data.alignment_text`.
order_text = alignment_text


#: Position (0-based) of the first factor aligned with a benchmark of a role:
#: :func:`hca.data.registry.role_position`.
role_index = role_position


# =========================================================================== settings, results
#: The fewest models a domain of the chapter may hold in every frame it is read from: HCA needs
#: more models than benchmarks (seven for six), and the bootstrap resamples of the headline
#: (drawn with replacement) and Appendix H.3's filter must leave a domain well above that.
MIN_MODELS = 20
#: Domains the chapter can use: the base models that both domain rules attribute (this
#: book's and the authors', whose re-implementation labels the paper's eight base models).
KNOWN_DOMAINS: tuple[str, ...] = PAPER_V2_BASES


def _check_names(field: str, value: object, allowed: Sequence[str], why: str) -> tuple:
    """``value`` as a tuple of distinct domain names out of ``allowed``, or a ValueError naming
    ``field``, the value and what is expected."""
    if isinstance(value, str) or not isinstance(value, (tuple, list)):
        raise ValueError(f"Settings.{field} must be a tuple of domain names, got {value!r}")
    names = tuple(value)
    bad = [d for d in names if not isinstance(d, str) or d not in allowed]
    if bad:
        raise ValueError(
            f"Settings.{field}={names!r}: unknown domain(s) {bad}; expected names among "
            f"{list(allowed)} ({why})"
        )
    if len(set(names)) != len(names):
        raise ValueError(f"Settings.{field}={names!r}: a domain is named twice")
    return names


def _check_seeds(field: str, value: object) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or not value:
        raise ValueError(f"Settings.{field} must be a non-empty tuple of seeds, got {value!r}")
    if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in value):
        raise ValueError(f"Settings.{field}={value!r}: expected non-negative integers")
    if len(set(value)) != len(value):
        raise ValueError(f"Settings.{field}={value!r}: a seed is named twice")
    return tuple(value)


def _check_count(field: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"Settings.{field} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class Settings:
    """The chapter's analysis choices (defaults: the book's). Checked when made: a
    :class:`ValueError` names the field, its value and what is expected.

    Attributes
    ----------
    domains : tuple of str
        The domains of Section 4's fit (the paper's four, :data:`PAPER_V2_FOUR`): at least
        two, all among ``candidates``, each with an official checkpoint for Appendix H.3's
        filter (:data:`PAPER_V2_PRETRAINED`: the five domains of S_inv).
    candidates : tuple of str
        The domains of Figure 18's sweep (every subset of them with at least
        ``min(3, len(domains))`` domains; the paper's S_inv, :data:`PAPER_V2_SINV`), among
        :data:`KNOWN_DOMAINS`. Every domain needs :data:`MIN_MODELS` models in each frame
        the chapter reads (checked before any fit, :func:`check_models`).
    setups : tuple of str
        The setups to run (:data:`hca.paper.setups.SETUP_NAMES`: both).
    n_seeds : int
        FastICA seeds of the ensemble every fit-based claim is read from (seeds
        ``0 .. n_seeds - 1``; :class:`hca.paper.shape.EnsembleSettings`).
    n_seeds_more : int
        The larger ensemble a claim is read from when a share of the first runs lies
        near a threshold or one of them is rounding-sensitive.
    seeds : tuple of int
        FastICA seeds of the refits of every run's Section 4 fit on the same data (S4-order,
        F4, F21, F4-z2-noise): the *refits*.
    n_boot : int
        Within-domain bootstrap resamples of the headline stability.
    boot_seeds : tuple of int
        FastICA seeds crossed with every resample (``n_boot x len(boot_seeds)`` fits).
    restarts : int
        FastICA runs per domain of the sensitivity check (not a setup).
    n_jobs : int or None
        Parallel jobs of the sweeps (:class:`joblib.Parallel`).
    """

    domains: tuple[str, ...] = PAPER_V2_FOUR  # Section 4's fit
    candidates: tuple[str, ...] = PAPER_V2_SINV  # Figure 18's sweep
    setups: tuple[str, ...] = SETUP_NAMES  # the setups to run
    n_seeds: int = 20  # FastICA seeds of the chapter's ensemble
    n_seeds_more: int = 40  # the larger ensemble near a threshold
    seeds: tuple[int, ...] = tuple(range(10))
    n_boot: int = 50
    boot_seeds: tuple[int, ...] = (0, 1, 2, 3)
    restarts: int = 10
    n_jobs: int | None = None

    def __post_init__(self) -> None:
        candidates = _check_names(
            "candidates", self.candidates, KNOWN_DOMAINS, "the base models both rules attribute"
        )
        domains = _check_names(
            "domains",
            self.domains,
            [d for d in candidates if d in PAPER_V2_PRETRAINED],
            "the candidates with an official checkpoint for Appendix H.3's filter",
        )
        if len(domains) < 2:
            raise ValueError(f"Settings.domains={domains!r}: HCA needs at least two domains")
        object.__setattr__(self, "candidates", candidates)
        object.__setattr__(self, "domains", domains)
        object.__setattr__(self, "seeds", _check_seeds("seeds", self.seeds))
        object.__setattr__(self, "boot_seeds", _check_seeds("boot_seeds", self.boot_seeds))
        if isinstance(self.setups, list):
            object.__setattr__(self, "setups", tuple(self.setups))
        for field in ("n_boot", "restarts"):
            _check_count(field, getattr(self, field))
        if self.n_jobs is not None:
            _check_count("n_jobs", self.n_jobs)
        check_settings(self, ensemble=True)

    @property
    def paper_domains(self) -> bool:
        """Whether Section 4's fit has the paper's four domains (in any order)."""
        return set(self.domains) == set(PAPER_V2_FOUR)


def check_models(settings: Settings, setups: Sequence[str | Setup] = ()) -> None:
    """Every domain of ``settings`` (its candidates) has at least :data:`MIN_MODELS` models in
    each frame the chapter reads: the frames of ``setups`` and of the domain-rule evidence
    (:func:`hca.paper.recovery_stability.lever_frames`), and, for Section 4's domains, after
    Appendix H.3's filter. Called before any fit.

    Raises
    ------
    ValueError
        Naming the domain, the frame, its number of models and the minimum.
    """
    frames = {f"the {get_setup(s).name} setup's table": v2_frame(s) for s in setups}
    frames.update({f"the {name}": f for name, f in lever_frames().items()})
    for s in setups:
        filt = filter_below_base(v2_frame(s), settings.domains)
        frames[f"the {get_setup(s).name} setup's table after Appendix H.3's filter"] = filt.frame
    for where, frame in frames.items():
        counts = frame["base_model"].value_counts()
        doms = settings.candidates if "filter" not in where else settings.domains
        for d in doms:
            n = int(counts.get(d, 0))
            if n < MIN_MODELS:
                raise ValueError(
                    f"Settings: domain {d!r} has {n} models in {where}; the recovery chapter "
                    f"needs at least {MIN_MODELS} (MIN_MODELS) in every frame it reads"
                )


@dataclass(frozen=True, eq=False)
class RecoveryResults:
    """Everything the recovery chapter shows and its claims need, under one setup.

    Attributes
    ----------
    setup : Setup
    sizes : Series
        Models per candidate domain (Figure 18's) in the setup's frame.
    subsets : DataFrame
        Figure 18 at the run's FastICA seed (:func:`hca.paper.recovery_stability.sweeps`),
        with ``printed`` (the authors' notebook's MIC, NaN where it printed none).
    fit : HCA
        Section 4's fit of the settings' domains (:func:`hca.paper.replication.main_fit`).
    adjustment : OLSAdjustment
        Its OLS adjustment (Figure 4).
    seeds : StabilityResult
        The fit refitted with :attr:`Settings.seeds` (:func:`~hca.paper.replication.seed_refits`).
    ranked : DataFrame
        The five row orders of the fit with the smallest MIC
        (:func:`hca.stability.ranked_orders`): how far the chosen order is ahead.
    headline : HeadlineStability
        S4-order, S4-best-four and F18-four-smallest over resamples x seeds.
    reconstruction : DataFrame
        Figure 19 per benchmark: ``relative_error``, ``mse`` (uncentred) and
        ``centred_relative_error``.
    means : DataFrame
        Per benchmark, the mean normalized score (the fit's scale) and raw accuracy over the
        fit's models.
    below : tuple of int
        Of those models, how many score GPQA and MUSR both below all four other benchmarks,
        and how many there are.
    filtered : BaseFilter
        Appendix H.3's filter on the setup's frame.
    fit_filtered : HCA
    adjustment_filtered : OLSAdjustment
    seeds_filtered : StabilityResult
    variance : DataFrame
        Pooled within-domain variance of each benchmark over the fit's domains: ``unfiltered``,
        ``filtered`` and ``ratio``.
    general_shares : DataFrame
        Squared shares of every benchmark in the general-aligned factor's unit-norm row of
        the adjusted unmixing matrix, ``unfiltered`` and ``filtered`` (NaN without such a
        factor).
    noise : DataFrame
        Domains x factors: share of each adjusted factor's variance from its own source.
    evidence : DomainRuleEvidence
        The comparison of the domain rules (the same under both setups).
    steered : str
        The domains whose FastICA in Section 4's fit was steered by rounding (empty: the
        run is evidence; :func:`hca.paper.replication.main_fits_steered`).
    domains, candidates : tuple of str
        The settings' domains of Section 4's fit and of Figure 18's sweep.
    """

    setup: Setup
    sizes: pd.Series
    subsets: pd.DataFrame
    fit: HCA
    adjustment: OLSAdjustment
    seeds: StabilityResult
    ranked: pd.DataFrame
    headline: HeadlineStability
    reconstruction: pd.DataFrame
    means: pd.DataFrame
    below: tuple
    filtered: BaseFilter
    fit_filtered: HCA
    adjustment_filtered: OLSAdjustment
    seeds_filtered: StabilityResult
    variance: pd.DataFrame
    general_shares: pd.DataFrame
    noise: pd.DataFrame
    evidence: DomainRuleEvidence
    steered: str = ""
    domains: tuple = PAPER_V2_FOUR
    candidates: tuple = PAPER_V2_SINV

    @property
    def seed0(self) -> dict:
        """The headline claims read off this run's Figure 18 sweep (:func:`read_sweep`; the
        name is historical: the run's own seed)."""
        return read_sweep(self.subsets, self.domains)

    @property
    def n_same_size(self) -> int:
        """Subsets of the sweep with as many domains as Section 4's fit."""
        return int((self.subsets["size"] == len(self.domains)).sum())

    def summary(self) -> str:
        al = order_text(self.adjustment.benchmarks)
        return (
            f"{self.setup.label}: MIC of the {len(self.domains)} domains {self.fit.mic_:.3f} "
            f"(rank {self.seed0['chosen_rank']} of {self.n_same_size} "
            f"subsets of {len(self.domains)}), order {al}; "
            f"filtered MIC {self.fit_filtered.mic_:.3f}; {self.headline.summary()}"
        )


# =========================================================================== analysis steps
def _figure18(
    setup: Setup, settings: Settings, seeds: Sequence[int], X: pd.DataFrame, labels: np.ndarray
) -> list:
    """Figure 18's sweep under every FastICA seed of ``seeds`` in one batch, with the authors'
    printed MICs."""
    printed = authors_printed_mics()
    est = estimator(setup, search="sequential")
    tables = sweeps(
        est, [(X, labels)], seeds, candidates=settings.candidates, chosen=settings.domains
    )[0]
    for table in tables:
        table["printed"] = [printed.get(frozenset(s), np.nan) for s in table["subset"]]
    return tables


def _reconstruction(fit: HCA) -> pd.DataFrame:
    out = fit.reconstruction_error()[["relative_error", "mse"]]
    out["centred_relative_error"] = fit.reconstruction_error(centre=True)["relative_error"]
    return out


def _means(frame: pd.DataFrame, domains: Sequence[str]) -> tuple[pd.DataFrame, tuple]:
    rows = frame[frame["base_model"].isin(list(domains))]
    scores = rows[B2].astype(float)
    means = pd.DataFrame(
        {
            "mean score": scores.mean(),
            "mean raw accuracy": rows[[f"{b}_raw" for b in B2]].astype(float).mean().set_axis(B2),
        }
    )
    others = scores.drop(columns=["gpqa", "musr"]).min(axis=1)
    below = (scores["gpqa"] < others) & (scores["musr"] < others)
    return means, (int(below.sum()), len(below))


def pooled_within_variance(X: pd.DataFrame, domains: np.ndarray) -> pd.Series:
    """Per column, the within-domain variance pooled over the domains (ddof = #domains)."""
    dev = X - X.groupby(domains).transform("mean")
    return (dev**2).sum() / (len(X) - len(pd.unique(domains)))


def _general_shares(adj: OLSAdjustment) -> pd.Series:
    i = role_index(adj.benchmarks, GENERAL)
    if i is None:
        return pd.Series(np.nan, index=B2)
    row = np.asarray(adj.unmixing[i], dtype=float)
    return pd.Series(row**2 / np.sum(row**2), index=B2)


def _filtered_fits(
    setup: Setup, settings: Settings, seeds: tuple[int, ...], X: pd.DataFrame, labels: np.ndarray
) -> tuple[tuple[HCA, ...], StabilityResult]:
    """The filtered fit under every seed of ``seeds`` and its refits with :attr:`Settings.seeds`
    (as :func:`hca.stability.seed_stability` gives them), the fits of all seeds in one batch."""
    distinct = tuple(dict.fromkeys((*seeds, *settings.seeds)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = dict(
            zip(
                distinct,
                seed_fits(estimator(setup, max_iter=FILTERED_MAX_ITER), X, labels, distinct),
            )
        )
    records = Parallel(n_jobs=settings.n_jobs)(
        delayed(fit_record)(fitted[s], patterns=PAPER_PATTERNS) for s in settings.seeds
    )
    refits = StabilityResult(
        pd.DataFrame([{"seed": s, **r} for s, r in zip(settings.seeds, records)]),
        "seed",
        tuple(PAPER_PATTERNS),
    )
    return tuple(fitted[s] for s in seeds), refits


def _headline(
    setup: Setup,
    n_boot: int,
    boot_seeds: tuple[int, ...],
    candidates: tuple[str, ...],
    domains: tuple[str, ...],
    n_jobs: int | None,
) -> HeadlineStability:
    """The headline claims over resamples x seeds (seed-free: shared by an ensemble; keyed by
    the settings it reads, so that a reader's other ensemble size does not recompute it)."""
    X, labels = domain_data(v2_frame(setup), candidates, B2)
    return headline_stability(
        setup,
        X,
        labels,
        n_boot=n_boot,
        seeds=boot_seeds,
        n_jobs=n_jobs,
        candidates=candidates,
        chosen=domains,
    )


def _runs(setup: Setup, settings: Settings, seeds: tuple[int, ...]) -> tuple[RecoveryResults, ...]:
    """The chapter's results for every FastICA seed of ``seeds`` under the seed-free ``setup``:
    the four-domain fits, the filtered fits and the Figure 18 sweeps of all seeds in one batch
    each, the seed-free headline stability and domain-rule evidence once per process."""
    check_models(settings, (setup,))  # before any fit: every domain has enough models
    doms, cands = settings.domains, settings.candidates
    frame = v2_frame(setup)
    X_c, l_c = domain_data(frame, cands, B2)
    X4, l4 = domain_data(frame, doms, B2)
    fits = main_fits(setup, seeds, doms)
    steered = main_fits_steered(setup, seeds, doms)
    filt = filter_below_base(frame, doms)
    Xf, lf = domain_data(filt.frame, doms, B2)
    fits_f, seeds_filtered = _filtered_fits(setup, settings, seeds, Xf, lf)
    means, below = _means(frame, doms)
    var_u, var_f = pooled_within_variance(X4, l4), pooled_within_variance(Xf, lf)
    headline_args = (settings.n_boot, settings.boot_seeds, cands, doms, settings.n_jobs)
    shared = {
        "sizes": frame["base_model"].value_counts().reindex(cands),
        "seeds": seed_refits(setup, settings.seeds, doms),
        "headline": cached("recovery_headline", _headline, setup, *headline_args),
        "means": means,
        "below": below,
        "filtered": filt,
        "seeds_filtered": seeds_filtered,
        "variance": pd.DataFrame({"unfiltered": var_u, "filtered": var_f, "ratio": var_f / var_u}),
        "evidence": cached(
            "recovery_evidence", domain_rule_evidence, settings.restarts, cands, doms
        ),
        "domains": doms,
        "candidates": cands,
    }
    tables = _figure18(setup, settings, seeds, X_c, l_c)
    out = []
    for seed, fit, fit_f, why, table in zip(seeds, fits, fits_f, steered, tables):
        adj, adj_f = fit.adjust(), fit_f.adjust()
        run_setup = setup.with_seed(seed)
        out.append(
            RecoveryResults(
                setup=run_setup,
                subsets=table,
                fit=fit,
                adjustment=adj,
                ranked=ranked_orders(fit, n=5, patterns=PAPER_PATTERNS),
                reconstruction=_reconstruction(fit),
                fit_filtered=fit_f,
                adjustment_filtered=adj_f,
                general_shares=pd.DataFrame(
                    {"unfiltered": _general_shares(adj), "filtered": _general_shares(adj_f)}
                ),
                noise=noise_shares(adj.models),
                steered=why,
                **shared,
            )
        )
    return tuple(out)


#: The chapter's shape (:class:`hca.paper.shape.ChapterSpec`), declared by its ensemble's runs
#: (:func:`_runs`; the run at a setup's own seed is the ensemble's): the claims read its
#: four-domain fit (whose rounding-sensitive domains it names), and a run is typical by that
#: fit's MIC.
CHAPTER: ChapterSpec[Settings, RecoveryResults] = ChapterSpec.from_runs(
    key="recovery",
    settings=Settings,
    runs=each_setup(_runs),
    evidence=lambda r: RunEvidence.of(r.fit, r.steered),
    typical_key=lambda r: float(r.fit.mic_),
)

#: The chapter's results under a setup, once per process (:meth:`~hca.paper.shape.ChapterSpec.run`).
run = CHAPTER.run


def near_tie(setup: str = "authors") -> float:
    """The MIC gap between the two best row orders of the better-optimum fit under ``setup``
    (``evidence.optimum_ranked``; the intro's "near tie"). Stored as plain JSON once per build
    (:func:`hca.paper.cache.stored_json`): chapter 3 computes it with its results, and the
    intro reads it instead of computing the chapter again."""
    gap = stored_json(
        "recovery_near_tie", _near_tie, setup, check=lambda data: isinstance(data, float)
    )
    return float(gap)


def _near_tie(setup: str) -> float:
    ranked = run(setup).evidence.optimum_ranked
    return float(ranked.loc[1, "mic"] - ranked.loc[0, "mic"])


# =========================================================================== tables
def mic_as_expected(setup: str, mic: float) -> bool:
    """Whether ``mic`` is this book's MIC of the Section 4 fit under ``setup`` within the
    tolerance of :data:`EXPECTED_MIC`."""
    value, tol = EXPECTED_MIC[setup]
    return abs(float(mic) - value) <= tol


def ranked_table(ranked: pd.DataFrame, n: int = 3) -> pd.DataFrame:
    """The first ``n`` rows of :func:`hca.stability.ranked_orders` (recorded with the paper's
    pattern) by rank: MIC, the order as text (:func:`order_text`) and whether it is the
    paper's."""
    out = ranked.head(n).assign(order=ranked["order"].map(lambda o: order_text(o.split(" > "))))
    return out.set_index("rank")[["mic", "order", "paper_order"]]


def table3(results: Mapping[str, RecoveryResults]) -> pd.DataFrame:
    """Table 3 of the paper beside the authors' notebook and ours under every setup.

    Rows ``rank-1 error z1..z3`` and ``unmixing error <domain>`` (every domain of the fits,
    the paper's four by default); columns ``paper``, ``authors' notebook`` (printed recovery
    errors; no rank-1 errors were printed) and one column per setup label. NaN where a side
    has no value (a domain the paper did not fit, or a fit without it).
    """
    pv = load_paper_values()
    rows = {}
    for i in range(3):
        rows[f"rank-1 error z{i + 1}"] = (
            float(pv.loc[f"T3a-z{i + 1}", "value"]),
            np.nan,
            [r.fit.rank1_error_[i] for r in results.values()],
        )
    doms = list(dict.fromkeys(d for r in results.values() for d in r.domains))
    for dom in doms:
        cid = f"T3b-{dom}"
        rows[f"unmixing error {dom}"] = (
            float(pv.loc[cid, "value"]) if cid in pv.index else np.nan,
            printed_value(f"recovery-error-{dom}"),
            [r.fit.unmixing_error_.get(dom, np.nan) for r in results.values()],
        )
    labels = [r.setup.label for r in results.values()]
    return pd.DataFrame(
        [[p, a, *ours] for p, a, ours in rows.values()],
        index=list(rows),
        columns=["paper", "authors' notebook", *labels],
    )


def figure18_table(results: Mapping[str, RecoveryResults]) -> pd.DataFrame:
    """The subsets the authors' notebook printed (six, of at least four domains) that every
    sweep of ``results`` holds: its MIC beside ours under every setup (rows sorted by the
    printed MIC; empty when the settings sweep none of them)."""
    printed = authors_printed_mics().sort_values()
    swept = [set(map(frozenset, r.subsets["subset"])) for r in results.values()]
    printed = printed[[all(s in w for w in swept) for s in printed.index]]
    out = pd.DataFrame(index=[short_subset(s) for s in printed.index])
    out["authors' notebook"] = printed.to_numpy()
    for r in results.values():
        t = r.subsets.set_index(r.subsets["subset"].map(frozenset))["mic"]
        out[r.setup.label] = [float(t[s]) for s in printed.index]
    return out


# =========================================================================== claims: wording
def refits_text(res: RecoveryResults) -> str:
    """``"refits (FastICA seeds 0-9)"``: the run's refits of Section 4's fit
    (:attr:`Settings.seeds`), named with their seeds."""
    return f"refits (FastICA {seed_list(res.seeds.records['seed'])})"


def _refit_share(res: RecoveryResults, k: int, what: str) -> str:
    """One sentence on the refits: ``"The paper's order comes back in 0 of 10 refits
    (FastICA seeds 0-9)"`` with ``what`` = ``"the paper's order comes back"``."""
    n = len(res.seeds.records)
    return f"{what[0].upper()}{what[1:]} in {k_of_n(k, n)} {refits_text(res)}"


def _not_paper_domains(res: RecoveryResults) -> str:
    """Why a claim about the paper's choice of four domains does not apply to a fit of other
    domains (empty when the fit has the paper's four)."""
    if set(res.domains) == set(PAPER_V2_FOUR):
        return ""
    return (
        f"the settings fit {join_words(res.domains)}, not the paper's four domains "
        f"({join_words(PAPER_V2_FOUR)}), whose choice the claim is about"
    )


# =========================================================================== claims: Figure 18
def _subset_text(four: pd.DataFrame) -> str:
    return "; ".join(f"{{{short_subset(s)}}} {m:.3f}" for s, m in zip(four["subset"], four["mic"]))


def f18_not_applicable(res: RecoveryResults) -> str:
    """Why the claim that the four best subsets exclude :data:`EXCLUDED` does not apply to
    the settings' sweep (empty when it applies): it needs Qwen2-7B among the candidates and at
    least four subsets without it, besides others."""
    t = res.subsets
    if EXCLUDED not in res.candidates:
        return f"the settings' candidates do not include {EXCLUDED}, the domain the claim is about"
    without = sum(EXCLUDED not in s for s in t["subset"])
    if without < 4 or len(t) <= 4:
        return (
            f"the sweep has {count(without, 'subset')} without {EXCLUDED} among "
            f"{count(len(t), 'subset')}, so its four best cannot test the claim"
        )
    return ""


@claim(
    "F18-four-smallest",
    "S4-best-four",
    chapter="recovery",
    figure="fig-recovery-fig18",
    ensemble=True,
)
def _subsets(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    t = res.subsets
    four, n = four_smallest(t)
    out: dict[str, Outcome] = {}
    na = f18_not_applicable(res)
    ours = f"{n} of the 4 smallest MICs exclude {EXCLUDED}: {_subset_text(four)}"
    if na:
        out["F18-four-smallest"] = Outcome(ours, "not applicable", na, value=float(n))
    else:
        note = (
            ". The authors' notebook printed only the six subsets of at least four domains, "
            f"one of them without {EXCLUDED}, so the sweep includes the subsets of three"
            if res.setup.name == "authors" and tuple(res.candidates) == PAPER_V2_SINV
            else ""
        )
        reason = f"{EXCLUDED} is in {4 - n} of the 4 best of {count(len(t), 'subset')}{note}"
        stab = res.headline.stability("F18-four-smallest")
        out["F18-four-smallest"] = Outcome(
            ours, grade(n == 4, 2 <= n <= 3), reason, value=float(n), stability=stab
        )
    size = len(res.domains)
    rank, total, mic = subset_rank(t, res.domains, size=size)
    best = t[t["size"] == size].sort_values("mic", kind="stable").iloc[0]
    ours = (
        f"rank {rank} of the {count(total, 'subset')} of {size} domains (MIC {mic:.3f}; "
        f"smallest {{{short_subset(best['subset'])}}} {best['mic']:.3f})"
    )
    na = _not_paper_domains(res) or (
        "the paper's four domains are the only subset of four among the settings' candidates"
        if total == 1
        else ""
    )
    if na:
        out["S4-best-four"] = Outcome(ours, "not applicable", na, value=float(rank))
        return out
    out["S4-best-four"] = Outcome(
        ours,
        grade(rank == 1, rank == 2),
        "the paper's four domains fit best among the subsets of four"
        if rank == 1
        else f"{count(rank - 1, 'other subset')} of four fit better",
        value=float(rank),
        stability=res.headline.stability("S4-best-four"),
    )
    return out


# =========================================================================== claims: the order
def _roles(alignment: Sequence[str]) -> set:
    return {_ROLE_NAMES[r] for r in PAPER_ALIGNMENT for b in alignment if b in r}


@claim(
    "S4-aligned-benchmarks",
    "S4-order",
    chapter="recovery",
    figure="fig-recovery-fig4-authors",
    ensemble=True,
)
def _order(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    al, seeds = res.adjustment.benchmarks, res.seeds
    roles = _roles(al)
    r2 = ", ".join(
        f"{res.adjustment.r2.loc[z, b]:.2f}" for z, b in zip(res.adjustment.r2.index, al)
    )
    counts = seeds.alignment_counts()
    same = int(counts.loc[counts["order"] == " > ".join(al), "count"].sum())
    out = {
        "S4-aligned-benchmarks": Outcome(
            f"{', '.join(benchmark_label(b) for b in al)} (R² {r2})",
            set_verdict(roles, _ROLE_NAMES.values()),
            f"{len(roles)} of the paper's three roles (general, IFEval, MATH Lvl 5) have a "
            f"factor. {_refit_share(res, same, 'the same alignment comes back')}",
            value=float(len(roles)),
        )
    }
    ok = matches_alignment(al, PAPER_ALIGNMENT)
    n = len(seeds.records)
    k = int(seeds.records["paper_order"].sum())
    many = k >= 0.5 * n
    refits = _refit_share(res, k, "the paper's order comes back")
    tied = order_tie(res.ranked)
    if tied is not None:
        paper_in = bool(tied["paper_order"].any())
        names = " / ".join(
            f"{order_text(o.split(' > '))} {m:.3f}"
            for o, m in zip(tied["order"][:2], tied["mic"][:2])
        )
        more = f" / {count(len(tied) - 2, 'other order')}" if len(tied) > 2 else ""
        ours = f"tie in MIC: {names}{more}"
        v = grade(False, paper_in or many)
        reason = (
            f"{count(len(tied), 'order')} within {ORDER_TIE_MIC} in MIC, "
            + ("the paper's among them" if paper_in else "none the paper's")
            + " (a tie is at most partly the paper's order). "
            + refits
        )
    else:
        ours = f"{order_text(al)} (MIC {res.fit.mic_:.3f})"
        v = grade(ok and many, ok != many)
        gives = "the paper's order" if ok else "another order"
        reason = (
            f"this run gives {gives} (reproduced needs it and at least half the refits). " + refits
        )
    stab = res.headline.stability("S4-order")
    out["S4-order"] = Outcome(ours, v, reason, value=k / n, stability=stab)
    return out


def order_tie(ranked: pd.DataFrame, tol: float = ORDER_TIE_MIC) -> pd.DataFrame | None:
    """The best row orders of a fit that tie (:data:`ORDER_TIE_MIC`): the rows of
    :func:`hca.stability.ranked_orders` within ``tol`` of the best MIC, one per distinct
    alignment, or None when the best alignment is alone."""
    near = ranked[ranked["mic"] <= float(ranked["mic"].iloc[0]) + tol]
    near = near.drop_duplicates("order")
    return near.reset_index(drop=True) if len(near) > 1 else None


# =========================================================================== claims: Table 3
@claim(prefix="T3a-", chapter="recovery", figure="fig-recovery-fig17-authors", ensemble=True)
def _table3a(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    out = {}
    for cid, row in rows.iterrows():
        ours = float(res.fit.rank1_error_[int(cid.split("-z")[1]) - 1])
        v, r = numeric_verdict(ours, float(row["value"]), row["tolerance"])
        out[cid] = Outcome(
            f"{ours:.3f} (order {order_text(res.adjustment.benchmarks)})", v, r, value=ours
        )
    return out


@claim(prefix="T3b-", chapter="recovery", figure="fig-recovery-fig17-authors", ensemble=True)
def _table3b(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    out = {}
    for cid, row in rows.iterrows():
        dom = cid[len("T3b-") :]
        if dom not in res.fit.unmixing_error_:
            out[cid] = Outcome(
                f"{dom} not fitted",
                "not applicable",
                f"{dom} is not among the settings' domains ({join_words(res.domains)})",
            )
            continue
        ours = float(res.fit.unmixing_error_[dom])
        v, r = numeric_verdict(ours, float(row["value"]), row["tolerance"])
        printed = printed_value(f"recovery-error-{dom}")
        out[cid] = Outcome(
            f"{ours:.3f} (the authors' notebook printed {printed:.3f})", v, r, value=ours
        )
    return out


# =========================================================================== claims: edges
def _edge(alignment: Sequence[str]) -> tuple[int, int] | None:
    i, j = role_index(alignment, GENERAL), role_index(alignment, IFEVAL)
    return (i, j) if i is not None and j is not None and i < j else None


def _seed_edges(records: pd.DataFrame, domain: str) -> list[tuple[float, float] | None]:
    """Per seed refit, (weight, scale) of the general -> IFEval edge in ``domain`` or None."""
    out: list[tuple[float, float] | None] = []
    for _, rec in records.iterrows():
        e = _edge(rec["alignment"])
        if e is None:
            out.append(None)
            continue
        i, j = e[0] + 1, e[1] + 1
        out.append((float(rec[f"w[{domain}] z{i}->z{j}"]), float(rec[f"scale[{domain}] eps{j}"])))
    return out


#: The domain of the Llama-3-8B equation of Figures 4 and 21.
EDGE_DOMAIN = "Llama-3-8B"


def _edge_outcomes(
    rows: pd.DataFrame,
    wid: str,
    sid: str,
    adj: OLSAdjustment,
    seeds: StabilityResult,
    res: RecoveryResults,
    domain: str = EDGE_DOMAIN,
) -> dict[str, Outcome]:
    """The rule of the F4/F21 weight and scale rows of ``paper_values.csv``: reproduced when
    the run's edge lies in the inner band of the paper's value and at least half the refits
    (``seeds``) have the edge within [0.5, 2] times it; partly when one of the two holds."""
    if domain not in res.domains:
        why = f"{domain} is not among the settings' domains ({join_words(res.domains)})"
        return {cid: Outcome(f"{domain} not fitted", "not applicable", why) for cid in (wid, sid)}
    paper = (float(rows.loc[wid, "value"]), float(rows.loc[sid, "value"]))
    edges = _seed_edges(seeds.records, domain)
    n = len(edges)
    hits = [
        sum(e is not None and ratio_band(e[k], paper[k]) != "outside" for e in edges)
        for k in (0, 1)
    ]
    e0 = _edge(adj.benchmarks)
    out = {}
    for k, (cid, what) in enumerate(((wid, "weight"), (sid, "scale"))):
        value: float | None
        s = hits[k] / n
        refits = (
            f"The edge has a {what} within [0.5, 2]× the paper's in {k_of_n(hits[k], n)} "
            f"{refits_text(res)}"
        )
        if e0 is not None:
            scm = adj.models[domain]
            value = float(scm.A[e0[1], e0[0]] if k == 0 else scm.omega_sqrt[e0[1]])
            band = ratio_band(value, paper[k])
            v = grade(band == "inner" and s >= 0.5, band != "outside" or s >= 0.5)
            ours = f"{value:.2f} (our z{e0[0] + 1} → z{e0[1] + 1})"
            reason = f"ours/paper = {value / paper[k]:.2f} ({band} band). {refits}"
        else:
            value, ours, reason = _selected_median(seeds, domain, k, adj)
            v = grade(False, s >= 0.5)
            reason += f". {refits}"
        out[cid] = Outcome(ours, v, reason, value=value)
    return out


def _selected_median(
    seeds: StabilityResult, domain: str, k: int, adj: OLSAdjustment
) -> tuple[float | None, str, str]:
    """Our value when the run's fit has no general -> IFEval edge: the median over the refits
    with the paper's order (named as such; it never decides the verdict)."""
    rec = seeds.records[seeds.records["paper_order"]]
    no_edge = f"no general → IFEval edge in this run (order {order_text(adj.benchmarks)})"
    if rec.empty:
        return (
            None,
            "no general → IFEval edge in this run, and no refit with the paper's order",
            no_edge,
        )
    col = f"w[{domain}] z1->z2" if k == 0 else f"scale[{domain}] eps2"
    med = float(rec[col].median())
    sel = f"median over the {count(len(rec), 'refit')} with the paper's order"
    return (
        med,
        f"{med:.2f} ({sel}; no such edge in this run)",
        f"{no_edge}; the {sel} decides nothing",
    )


@claim(
    "F4-llama3-weight",
    "F4-llama3-scale",
    chapter="recovery",
    figure="fig-recovery-fig4-authors",
    ensemble=True,
)
def _fig4(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    return _edge_outcomes(
        rows, "F4-llama3-weight", "F4-llama3-scale", res.adjustment, res.seeds, res
    )


@claim(
    "F21-llama3-weight",
    "F21-llama3-scale",
    chapter="recovery",
    figure="fig-recovery-fig21-authors",
    ensemble=True,
)
def _fig21(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    return _edge_outcomes(
        rows,
        "F21-llama3-weight",
        "F21-llama3-scale",
        res.adjustment_filtered,
        res.seeds_filtered,
        res,
    )


# =========================================================================== claims: H.3
@claim(
    "H.3-mic-larger",
    "H.3-same-pattern",
    chapter="recovery",
    figure="fig-recovery-fig21-authors",
    ensemble=True,
)
def _filtered_claims(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    a, b = float(res.fit_filtered.mic_), float(res.fit.mic_)
    t = res.filtered.table.loc[list(res.domains)]
    removed = k_of_n(int(t["removed"].sum()), int(t["models"].sum()), "models")
    out = {
        "H.3-mic-larger": Outcome(
            f"MIC {b:.3f} → {a:.3f} after filtering (×{a / b:.2f}); {removed} of the fit's "
            f"{count(len(t), 'domain')} removed",
            grade(a >= 1.5 * b, a >= 1.2 * b),
            f"filtered / unfiltered MIC = {a / b:.2f} (reproduced from 1.5, partly from 1.2)",
            value=a / b,
        )
    }
    fa, ua = res.adjustment_filtered.benchmarks, res.adjustment.benchmarks
    paper_like, same = matches_alignment(fa, PAPER_ALIGNMENT), tuple(fa) == tuple(ua)
    reason = (
        "the paper's order after filtering"
        if paper_like
        else "the same order as our unfiltered fit"
        if same
        else "the filtered fit neither has the paper's order nor our unfiltered one"
    )
    ours = f"filtered: {order_text(fa)}; unfiltered: {order_text(ua)}"
    out["H.3-same-pattern"] = Outcome(ours, grade(paper_like, same), reason)
    return out


@claim("H.3-variance-drop", chapter="recovery", figure="fig-recovery-h3-variance")
def _variance(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    r = res.variance["ratio"]
    gm, other = r[["bbh", "mmlu_pro"]], r[["gpqa", "musr"]]
    ok = bool((gm <= VARIANCE_DROP_MAX).all() and gm.max() < other.min())
    text = ", ".join(
        f"{benchmark_label(b)} {r[b]:.2f}" for b in ("bbh", "mmlu_pro", "gpqa", "musr")
    )
    ours = f"filtered / unfiltered pooled within-domain variance: {text}"
    reason = (
        f"BBH and MMLU-PRO drop to ≤ {VARIANCE_DROP_MAX} and more than GPQA and MUSR"
        if ok
        else f"BBH or MMLU-PRO does not drop to ≤ {VARIANCE_DROP_MAX} below GPQA's and MUSR's "
        "ratios"
    )
    v = grade(ok, bool((gm < 1).all()))
    return {"H.3-variance-drop": Outcome(ours, v, reason, value=float(gm.max()))}


@claim("H.3-gpqa-musr-weights", chapter="recovery", figure="fig-recovery-fig22", ensemble=True)
def _general(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    g = res.general_shares
    if g.isna().any().any():
        missing = [c for c in g.columns if g[c].isna().all()]
        ours = f"no general-aligned (BBH/MMLU-PRO) factor in the {' and '.join(missing)} fit"
        reason = "no general-aligned factor to compare"
        return {"H.3-gpqa-musr-weights": Outcome(ours, "not reproduced", reason)}
    u, f = g["unfiltered"], g["filtered"]
    both = bool(f["gpqa"] > u["gpqa"] and f["musr"] > u["musr"])
    combined = float(f[["gpqa", "musr"]].sum() - u[["gpqa", "musr"]].sum())
    ours = (
        f"squared shares in the general factor, unfiltered → filtered: GPQA {u['gpqa']:.3f} → "
        f"{f['gpqa']:.3f}, MUSR {u['musr']:.3f} → {f['musr']:.3f}"
    )
    larger = "larger" if combined > 0 else "not larger"
    reason = "both larger after filtering" if both else f"combined share {larger} after filtering"
    return {
        "H.3-gpqa-musr-weights": Outcome(ours, grade(both, combined > 0), reason, value=combined)
    }


# =========================================================================== claims: Figure 19
@claim(
    "F19-worst-two",
    "F19-mse",
    "F19-four-near-perfect",
    chapter="recovery",
    figure="fig-recovery-fig19",
    ensemble=True,
)
def _fig19(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    rec = res.reconstruction
    rel = rec["relative_error"].sort_values(ascending=False)
    worst = list(rel.index[:2])
    ours = "largest relative errors: " + ", ".join(
        f"{benchmark_label(b)} {rel[b]:.3f}" for b in rel.index[:3]
    )
    v = set_verdict(worst, paper_list(rows, "F19-worst-two"))
    reason = f"worst two: {', '.join(benchmark_label(b) for b in worst)}"
    out = {"F19-worst-two": Outcome(ours, v, reason)}
    mse = rec["mse"]
    others = mse.drop(["gpqa", "musr"])
    top, inside = mse.idxmax() == "musr", bool(others.min() <= mse["gpqa"] <= others.max())
    out["F19-mse"] = Outcome(
        f"MSE MUSR {mse['musr']:.1f}, GPQA {mse['gpqa']:.1f}, the other four "
        f"{others.min():.1f} to {others.max():.1f}",
        grade(top and inside, top),
        (f"{benchmark_label(mse.idxmax())} largest" if not top else "MUSR largest")
        + ("; GPQA within the others' range" if inside else "; GPQA outside the others' range"),
    )
    four = paper_list(rows, "F19-four-near-perfect")
    worst4 = float(rec.loc[four, "relative_error"].max())
    cen = float(rec.loc[four, "centred_relative_error"].max())
    errors = ", ".join(f"{benchmark_label(b)} {rec.loc[b, 'relative_error']:.4f}" for b in four)
    ours = f"relative errors {errors} (centred within domains: up to {cen:.3f})"
    v = grade(worst4 <= 0.02, worst4 <= 0.05)
    out["F19-four-near-perfect"] = Outcome(
        ours,
        v,
        f"largest of the four: {worst4:.4f} (reproduced to 0.02, partly to 0.05)",
        value=worst4,
    )
    return out


@claim("F19-low-accuracy", chapter="recovery", figure="fig-recovery-fig19")
def _low(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    m = res.means["mean score"].sort_values()
    low = list(m.index[:2])
    raw = res.means["mean raw accuracy"]
    rest = raw.drop(["gpqa", "musr"])
    ours = (
        "lowest mean scores: "
        + ", ".join(f"{benchmark_label(b)} {m[b]:.1f}" for b in m.index[:3])
        + f"; raw accuracy GPQA {raw['gpqa']:.2f}, MUSR {raw['musr']:.2f} (the others "
        f"{rest.min():.2f} to {rest.max():.2f}); {k_of_n(res.below[0], res.below[1], 'models')} "
        "score GPQA and MUSR below the other four"
    )
    v = set_verdict(low, paper_list(rows, "F19-low-accuracy"))
    reason = f"two lowest means: {', '.join(benchmark_label(b) for b in low)}"
    return {"F19-low-accuracy": Outcome(ours, v, reason)}


# =========================================================================== claims: the fit
@claim("F4-z2-noise", chapter="recovery", figure="fig-recovery-fig4-authors", ensemble=True)
def _noise(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    j = role_index(res.adjustment.benchmarks, IFEVAL)
    k = _ifeval_largest_seeds(res.seeds.records, res.domains)
    refits = _refit_share(res, k, "the IFEval-aligned factor has the largest σ in every domain")
    n_dom = len(res.domains)
    if j is None:
        reason = f"no IFEval-aligned factor in this run's fit. {refits}"
        return {"F4-z2-noise": Outcome("no IFEval-aligned factor", "not reproduced", reason)}
    largest = [d for d, m in res.adjustment.models.items() if int(np.argmax(m.omega_sqrt)) == j]
    shares = res.noise.iloc[:, j]
    ours = (
        f"IFEval-aligned z{j + 1} has the largest σ in {len(largest)} of {n_dom} domains; "
        "σ²/Var: " + ", ".join(f"{d} {s:.2f}" for d, s in shares.items())
    )
    n4 = len(largest)
    v = grade(n4 == n_dom, n4 == n_dom - 1)
    reason = f"largest σ in {n4} of {n_dom} domains. {refits}"
    return {"F4-z2-noise": Outcome(ours, v, reason, value=float(n4))}


def _ifeval_largest_seeds(records: pd.DataFrame, domains: Sequence[str]) -> int:
    """Seed refits whose IFEval-aligned factor has the largest source scale in every domain."""
    count_ = 0
    for _, rec in records.iterrows():
        j = role_index(rec["alignment"], IFEVAL)
        if j is None:
            continue
        count_ += all(
            rec[f"scale[{d}] eps{j + 1}"] >= max(rec[f"scale[{d}] eps{i + 1}"] for i in range(3))
            for d in domains
        )
    return count_


@claim("S4-mic-small", chapter="recovery", figure="fig-recovery-fig18", ensemble=True)
def _mic_small(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    mic = float(res.fit.mic_)
    reason = f"MIC {mic:.3f} against the bands 0.10 (reproduced) and 0.20 (partly)"
    v = grade(mic < 0.10, mic < 0.20)
    return {"S4-mic-small": Outcome(f"MIC {mic:.3f}", v, reason, value=mic)}


@claim("F17-K", chapter="recovery", figure="fig-recovery-fig17-authors")
def _k(res: RecoveryResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    k = len(res.fit.domains_)
    ours = f"K = {k} domains (n = 6 benchmarks, d = 3 factors)"
    reason = _not_paper_domains(res) or (
        "erratum in the paper: its caption names four domains but says K = 6"
    )
    return {"F17-K": Outcome(ours, "not applicable", reason, value=float(k))}


# =========================================================================== the page's words
# The chapter's page (notebooks/03_hca_recovery.md) quotes these paragraphs: every word that
# depends on a result is chosen here from the page's results (hca.paper.scorecard.ChapterPage,
# computed under the notebook's settings), for one setup or both, for the paper's domains or a
# reader's.

#: The MIC gap between two row orders under which they are called a near tie on the page: twice
#: :data:`ORDER_TIE_MIC` (a tie), so "near" means within two spreads of the MIC of one optimum.
NEAR_TIE_MIC = 2 * ORDER_TIE_MIC

#: The labels of the page's sections that the answer links to.
SECTIONS: dict[str, str] = {
    "domains": "recovery-domains",
    "one_run": "recovery-one-run",
    "why": "recovery-why-differ",
    "optimum": "recovery-local-optimum",
    "near_tie": "recovery-near-tie",
    "stored_run": "recovery-stored-run",
}


def _link(key: str, text: str) -> str:
    return f"{{ref}}`{text} <{SECTIONS[key]}>`"


def _the(setup: str) -> str:
    """``"the authors' setup"``, ``"the careful setup"``."""
    return f"the {SETUPS[setup].label}"


def _sentences(parts: Sequence[str]) -> str:
    """Sentences joined into one paragraph, each capitalised and ending with a full stop."""
    return " ".join(f"{p[0].upper()}{p[1:]}" + ("" if p.endswith(".") else ".") for p in parts)


def _evidence(page: Any) -> DomainRuleEvidence:
    """The domain-rule evidence of the page (the same in every run and setup)."""
    return next(iter(page.results.values())).evidence


def _chosen(settings: Settings) -> str:
    """``"the four domains"`` (the paper's) or ``"the settings' 3 domains"``."""
    if settings.paper_domains:
        return "the four domains"
    return f"the settings' {count(len(settings.domains), 'domain')}"


def _mics(runs: Sequence[RecoveryResults]) -> np.ndarray:
    return np.array([float(m.fit.mic_) for m in runs])


def _paper_order_runs(runs: Sequence[RecoveryResults]) -> int:
    return sum(bool(matches_alignment(m.adjustment.benchmarks, PAPER_ALIGNMENT)) for m in runs)


def rank_phrase(runs: Sequence[RecoveryResults]) -> tuple[str, bool]:
    """How Section 4's domains rank among the sweep's subsets of their size over ``runs`` (an
    ensemble), in words, and whether they fit best in at least half of them:
    ``("fit best of the 5 subsets of four in 20 of 20 runs", True)``."""
    n = len(runs)
    size, total = len(runs[0].domains), runs[0].n_same_size
    of = f"of the {count(total, 'subset')} of {size if size != 4 else 'four'}"
    if total == 1:
        return "are the only subset of their size in the sweep", True
    ranks = [int(m.seed0["chosen_rank"]) for m in runs]
    best, worst = ranks.count(1), ranks.count(total)
    if best >= n / 2:
        return f"fit best {of} in {k_of_n(best, n, 'FastICA runs')}", True
    if worst >= n / 2:
        return f"fit worst {of} in {k_of_n(worst, n, 'FastICA runs')}", False
    if len(set(ranks)) == 1:
        return f"rank {ranks[0]} {of} in all {count(n, 'FastICA run')}", False
    spread = median_range(ranks, what="")
    return f"rank {spread} {of} over {count(n, 'FastICA run')}", False


def _held(page: Any, setup: str) -> str:
    """What held under ``setup``: the domains' rank and the paper's order over its runs."""
    runs = page.ensembles[setup]
    n = len(runs)
    fit, good = rank_phrase(runs)
    k = _paper_order_runs(runs)
    back = k >= n / 2
    joint = "and" if good == back else "but"
    order = (
        f"the paper's order comes back in {whole(k)} of them"
        if k
        else "the paper's order comes back in none of them"
    )
    return f"under {_the(setup)} {_chosen(page.settings)} {fit}, {joint} {order}"


def _levers(ev: DomainRuleEvidence) -> dict[str, float]:
    """The MIC of the chosen domains at seed 0 for each lever of :attr:`levers`."""
    mic = ev.levers["MIC (seed 0)"]
    return {
        "book": float(mic.loc[("this book", "CSV", "domain")]),
        "rule": float(mic.loc[("authors'", "CSV", "domain")]),
        "table": float(mic.loc[("authors'", "CSV + final table", "domain")]),
        "authors": float(mic.loc[("authors'", "CSV + final table", "shared")]),
    }


def rule_is_main_lever(ev: DomainRuleEvidence) -> bool:
    """Whether changing the domain rule moves the chosen domains' MIC (seed 0) more than
    changing the table or the residuals does."""
    v = _levers(ev)
    rule = abs(v["book"] - v["rule"])
    return rule > max(abs(v["rule"] - v["table"]), abs(v["table"] - v["authors"]))


def _rule_sentence(ev: DomainRuleEvidence) -> str:
    v = _levers(ev)
    how = "mainly by" if rule_is_main_lever(ev) else "partly by"
    return (
        f"the setups differ {how} the domain rule: at FastICA seed 0 the MIC (HCA's misfit, "
        f"smaller is better) of "
        f"{'the four domains' if set(ev.chosen) == set(PAPER_V2_FOUR) else 'the domains'} "
        f"is {number(v['book'])} with this book's attribution and {number(v['rule'])} with "
        f"the authors' rule ({_link('domains', 'the domains')})"
    )


def seed0_in_local_optimum(ev: DomainRuleEvidence) -> bool:
    """Whether the authors' setup's single FastICA run at seed 0 stops in a worse optimum than
    the best of :attr:`Settings.restarts` runs per domain: its MIC larger by more than
    :data:`ORDER_TIE_MIC`, the spread of the MIC within one optimum."""
    one, best = ev.optimum_mic
    return one - best > ORDER_TIE_MIC


def printed_mic(domains: Sequence[str]) -> float:
    """The MIC the authors' notebook printed for the subset ``domains`` (NaN if none)."""
    return float(authors_printed_mics().get(frozenset(domains), np.nan))


def _optimum_sentence(ev: DomainRuleEvidence) -> str:
    one, best = ev.optimum_mic
    runs = f"the best of {count(ev.restarts, 'run')} per domain"
    link = _link("optimum", "a FastICA local optimum")
    if seed0_in_local_optimum(ev):
        return (
            f"under the authors' setup the single FastICA run at seed 0, as their code makes "
            f"it, stops in a local optimum: MIC {number(one)}, against {number(best)} for "
            f"{runs} ({link})"
        )
    return (
        f"under the authors' setup the single FastICA run at seed 0 reaches the fit of {runs} "
        f"(MIC {number(one)} and {number(best)}; {link})"
    )


def tie_gap(ranked: pd.DataFrame) -> tuple[float, int | None]:
    """The MIC gap between the two best row orders of :func:`hca.stability.ranked_orders`,
    and the rank of the first with the paper's order (None: not among them)."""
    gap = float(ranked["mic"].iloc[1] - ranked["mic"].iloc[0])
    paper = ranked.loc[ranked["paper_order"].astype(bool), "rank"]
    return gap, (int(paper.min()) if len(paper) else None)


def _tie_sentence(ev: DomainRuleEvidence) -> str:
    gap, paper_rank = tie_gap(ev.optimum_ranked)
    tie = _link("near_tie", "the near tie")
    where = f"with the best of {count(ev.restarts, 'run')} per domain"
    if paper_rank is None:
        head = f"{where} the paper's order is not among the five best orders HCA scores ({tie})"
    elif paper_rank == 1:
        head = f"{where} the paper's order is the best of the orders HCA scores ({tie})"
    else:
        second = "the runner-up" if paper_rank == 2 else f"number {paper_rank}"
        behind = float(
            ev.optimum_ranked.loc[ev.optimum_ranked["rank"] == paper_rank, "mic"].iloc[0]
            - ev.optimum_ranked["mic"].iloc[0]
        )
        close = ", a near tie" if behind <= NEAR_TIE_MIC else ""
        head = (
            f"{where} the paper's order is {second}, "
            f"{number(behind, 4)} behind in MIC{close} ({tie})"
        )
    stored = authors_stored_order()
    printed = printed_mic(ev.chosen)
    is_paper = bool(matches_alignment(stored, PAPER_ALIGNMENT))
    what = (
        ("it" if paper_rank is not None else "the paper's order")
        if is_paper
        else (f"the order {order_text(stored)}")
    )
    mic = f", with MIC {number(printed)}," if np.isfinite(printed) else ""
    return (
        f"{head}; the authors' stored run{mic} printed {what} ({_link('stored_run', 'their run')})"
    )


def answer(page: Any) -> str:
    """The chapter's answer (MyST, one paragraph): what the paper claims, what held under each
    setup the page runs (counts over its ensemble), and the causes of the differences, each
    with a link to the section that shows it. Every word that depends on a result is chosen
    from ``page`` (a :class:`hca.paper.scorecard.ChapterPage` of this chapter)."""
    st = page.settings
    ev = _evidence(page)
    order = "general reasoning → instruction following → mathematics"
    if st.paper_domains:
        first = (
            f"the paper fits HCA on four domains ({join_words(PAPER_V2_FOUR)}), chosen "
            f"because they fit one hierarchical model best, and reads the causal order "
            f"{order} off the fit"
        )
    else:
        first = (
            f"the paper fits HCA on four domains, chosen because they fit best, and reads "
            f"the causal order {order} off the fit; these settings fit "
            f"{join_words(st.domains)} instead"
        )
    parts = [first, *(_held(page, s) for s in page.setups), _rule_sentence(ev)]
    if "authors" in page.setups:
        parts += [_optimum_sentence(ev), _tie_sentence(ev)]
    else:
        parts.append(
            "these settings run only the careful setup, so the authors' single FastICA run "
            "is not examined here"
        )
    return _sentences(parts)


def needs_setup(setup: str) -> str:
    """The line a cell of one setup shows when the settings do not run it."""
    return f"This part shows {_the(setup)}, which these settings do not run."


def ensemble_table(page: Any) -> pd.DataFrame:
    """Section 4's fit over each setup's ensemble (columns: setup labels): the MIC at seed 0,
    in the typical run and over all runs (median and range), and how many runs give the
    domains the best fit of their size and the paper's order."""
    out = {}
    for s in page.setups:
        runs, typical = page.ensembles[s], page.results[s]
        n = len(runs)
        ranks = [int(m.seed0["chosen_rank"]) for m in runs]
        out[SETUPS[s].label] = {
            "MIC, seed 0 (one run)": number(runs[0].fit.mic_),
            "MIC, typical run": f"{number(typical.fit.mic_)} (seed {typical.setup.ica_seed})",
            "MIC over the runs": median_range(_mics(runs)),
            "runs where they fit best of their size": k_of_n(ranks.count(1), n),
            "runs with the paper's order": k_of_n(_paper_order_runs(runs), n),
        }
    return pd.DataFrame(out).rename_axis("Section 4's fit")


def domains_text(page: Any) -> str:
    """The domains section's result: how much larger the authors' domains are, the most
    extreme one, and where the authors' extra models of one domain come from."""
    ev = _evidence(page)
    sizes = ev.sizes.dropna(subset=["this book", "authors' rule"])
    larger = int((sizes["authors' rule"] > sizes["this book"]).sum())
    ratio = sizes["authors' rule"] / sizes["this book"]
    d = str(ratio.idxmax())
    row = sizes.loc[d]
    rule = "authors' rule"
    parts = [
        f"the authors' rule gives {k_of_n(larger, len(sizes))} candidate domains more models "
        "than this book's"
    ]
    printed = row["authors' notebook (printed)"]
    extreme = (
        f"{d} is the extreme case: {count(row['this book'], 'model')} here and "
        f"{whole(row[rule])} under the re-implemented authors' rule"
    )
    if np.isfinite(printed):
        extreme += f", against {whole(printed)} in the authors' notebook"
    parts.append(extreme)
    if np.isfinite(printed) and printed > row[rule]:
        parts.append(
            "the models only in the final table have no architecture or `Base Model` field in "
            "public data, so the re-implementation finds fewer"
        )
    cross = ev.crossing
    top = str(cross["unattributed"].idxmax())
    c = cross.loc[top]
    total = int(c.sum())
    elsewhere = int(c["another candidate"] + c["another base model"])
    parts.append(
        f"of the {count(total, 'CSV row')} the authors' rule puts in {top}, this book leaves "
        f"{whole(c['unattributed'])} unattributed and gives {elsewhere} to another base model"
    )
    return _sentences(parts)


def figure18_intro(page: Any) -> str:
    """What the Figure 18 sweep holds under the settings, and why it includes subsets of
    three (with the paper's candidates)."""
    st = page.settings
    first = next(iter(page.results.values()))
    size = min(3, len(st.domains))
    parts = [
        f"HCA is fitted on every subset of the {count(len(st.candidates), 'candidate domain')} "
        f"with at least {size} domains ({count(len(first.subsets), 'subset')})",
        "each setup's figure shows its typical run, the FastICA seed whose fit of Section 4's "
        "domains has the median MIC of the ensemble: "
        + join_words(f"seed {page.results[s].setup.ica_seed} under {_the(s)}" for s in page.setups),
    ]
    if tuple(st.candidates) == PAPER_V2_SINV:
        printed = authors_printed_mics()
        without = sum(EXCLUDED not in s for s in printed.index)
        parts += [
            f"the authors' notebook printed the sweep for the {count(len(printed), 'subset')} "
            "of at least four domains only",
            f"of those, {count(without, 'subset')} "
            f"{'excludes' if without == 1 else 'exclude'} {EXCLUDED}",
            f"so the paper's Figure 18, whose four best subsets exclude {EXCLUDED}, must have "
            "swept the subsets of three as well",
        ]
    return _sentences(parts)


def figure18_text(page: Any) -> str:
    """Figure 18 in each setup's typical run: the rank of Section 4's domains among the
    subsets of their size, and how many of the four best subsets exclude Qwen2-7B."""
    parts = []
    for s in page.setups:
        r = page.results[s]
        rank, total = r.seed0["chosen_rank"], r.n_same_size
        where = "fit best" if rank == 1 else "fit worst" if rank == total else f"rank {rank}"
        printed = printed_mic(r.domains) if s == "authors" else float("nan")
        mic = f"MIC {number(r.fit.mic_)}" + (
            f"; the authors' notebook printed {number(printed)}" if np.isfinite(printed) else ""
        )
        head = (
            f"in the typical run of {_the(s)} {_chosen(page.settings)} {where} of the "
            f"{count(total, 'subset')} of their size ({mic})"
        )
        if not f18_not_applicable(r):
            n = int(r.seed0["without"])
            verb = "excludes" if n == 1 else "exclude"
            head += f", and {n} of the 4 best subsets {verb} {EXCLUDED}"
        parts.append(head)
    return _sentences(parts)


def printed_ranks_text(page: Any) -> str:
    """The authors' printed subsets ranked by MIC, beside the authors' setup's typical run
    (empty when the settings do not run the authors' setup or sweep none of them)."""
    if "authors" not in page.setups:
        return needs_setup("authors")
    table = figure18_table(page.results)
    if table.empty:
        return "The settings' sweep holds none of the subsets the authors' notebook printed."
    ranks = table.rank(method="min").astype(int)
    ours, printed = SETUPS["authors"].label, "authors' notebook"
    moved = [i for i in table.index if ranks.loc[i, printed] != ranks.loc[i, ours]]
    n = len(table)
    if not moved:
        head = (
            f"ranked by MIC, all {count(n, 'subset')} the authors' notebook printed keep their "
            "printed place in the authors' setup's typical run"
            if n > 1
            else "the one subset the authors' notebook printed that the settings sweep keeps "
            "its printed place in the authors' setup's typical run"
        )
    else:
        head = (
            f"ranked by MIC, {k_of_n(n - len(moved), n)} subsets the authors' notebook printed "
            "keep their printed place in the authors' setup's typical run; "
            + "; ".join(
                f"{{{i}}} moves from {ranks.loc[i, printed]} to {ranks.loc[i, ours]}" for i in moved
            )
        )
    parts = [head]
    four = short_subset(page.settings.domains)
    if four in table.index:
        ratio = table.loc[four, ours] / table.loc[four, printed]
        parts.append(
            f"the MIC of Section 4's domains there is {times_text(ratio, 'the printed one')}"
        )
    seed0 = page.ensembles["authors"][0]
    parts.append(
        f"seed 0, the authors' own seed, gives {number(seed0.fit.mic_)} on the machine that "
        f"built this page ({_link('one_run', 'one run or twenty')}; "
        f"{_link('optimum', 'a FastICA local optimum')})"
    )
    return _sentences(parts)


def table3_text(page: Any) -> str:
    """Table 3 in the typical runs: the unmixing errors beside the paper's, and which position
    of the careful setup's fit fits worst."""
    pv = load_paper_values()
    parts = []
    for s in page.setups:
        r = page.results[s]
        errs = np.array([float(r.fit.unmixing_error_[d]) for d in r.domains])
        paper = np.array(
            [float(pv.loc[f"T3b-{d}", "value"]) for d in r.domains if f"T3b-{d}" in pv.index]
        )
        ours = f"{number(errs.min(), 2)} to {number(errs.max(), 2)}"
        text = f"in the typical run of {_the(s)} the unmixing errors are {ours}"
        if paper.size:
            gap = max(
                abs(float(r.fit.unmixing_error_[d]) - float(pv.loc[f"T3b-{d}", "value"]))
                for d in r.domains
                if f"T3b-{d}" in pv.index
            )
            near = (
                "close to" if gap < 0.1 else "far above" if errs.min() > paper.max() else "unlike"
            )
            text += f", {near} the paper's {number(paper.min(), 2)} to {number(paper.max(), 2)}"
        parts.append(text)
        rank1 = np.asarray(r.fit.rank1_error_, dtype=float)
        worst = int(np.argmax(rank1))
        if worst == 0 and rank1[0] > 2 * np.sort(rank1)[-2]:
            parts.append(
                f"its worst position is the root (rank-1 error {number(rank1[0], 2)} at "
                "$z_1$): the domains do not share a first source"
            )
    return _sentences(parts)


def figure19_text(page: Any) -> str:
    """Figure 19 in the typical runs: which benchmarks fit worst, and whether they are the
    ones with the lowest mean scores."""
    parts = []
    for s in page.setups:
        r = page.results[s]
        worst = list(r.reconstruction["relative_error"].nlargest(2).index)
        low = list(r.means["mean score"].nsmallest(2).index)
        names = join_words(benchmark_label(b) for b in worst)
        same = "also" if set(worst) == set(low) else "not"
        parts.append(
            f"in the typical run of {_the(s)} {names} fit worst in relative terms, and they are "
            f"{same} the two benchmarks with the lowest mean scores"
        )
    paper = {"gpqa", "musr"}
    agree = all(
        set(page.results[s].reconstruction["relative_error"].nlargest(2).index) == paper
        for s in page.setups
    )
    parts.append(
        "the paper names GPQA and MUSR, and explains them by their low scores"
        + ("; so does each setup here" if agree else "")
    )
    return _sentences(parts)


def _edge_values(
    runs: Sequence[RecoveryResults], domain: str = EDGE_DOMAIN, filtered: bool = False
) -> tuple[list, list]:
    """Per run with a general -> IFEval edge, its weight and IFEval's source scale in
    ``domain`` (after the OLS adjustment; of the filtered fit with ``filtered``)."""
    w, sc = [], []
    for m in runs:
        adj = m.adjustment_filtered if filtered else m.adjustment
        e = _edge(adj.benchmarks)
        if e is None or domain not in adj.models:
            continue
        scm = adj.models[domain]
        w.append(float(scm.A[e[1], e[0]]))
        sc.append(float(scm.omega_sqrt[e[1]]))
    return w, sc


def order_paragraph(page: Any) -> str:
    """The order after the OLS adjustment: each setup's typical run, the runs with the
    paper's order, and the paper's Llama-3-8B equation over the runs with the edge."""
    pv = load_paper_values()
    w_paper = float(pv.loc["F4-llama3-weight", "value"])
    s_paper = float(pv.loc["F4-llama3-scale", "value"])
    parts = []
    for s in page.setups:
        runs = page.ensembles[s]
        n, k = len(runs), _paper_order_runs(runs)
        r = page.results[s]
        parts.append(
            f"the typical run of {_the(s)} gives {order_text(r.adjustment.benchmarks)}, and the "
            f"paper's order comes back in {k_of_n(k, n, 'runs')}"
        )
    parts.append(
        f"the paper's {EDGE_DOMAIN} equation is $z_2 = {number(w_paper, 2)} z_1 + "
        f"{number(s_paper, 0)} \\epsilon_2$, an edge from the general factor to IFEval"
    )
    for s in page.setups:
        runs = page.ensembles[s]
        n = len(runs)
        if EDGE_DOMAIN not in page.settings.domains:
            parts.append(f"the settings do not fit {EDGE_DOMAIN}")
            break
        w, sc = _edge_values(runs)
        if not w:
            first = sum(role_index(m.adjustment.benchmarks, IFEVAL) == 0 for m in runs)
            parts.append(
                f"under {_the(s)} no run has that edge: IFEval comes first in "
                f"{k_of_n(first, n, 'runs')}"
            )
            continue
        parts.append(
            f"under {_the(s)} {k_of_n(len(w), n, 'runs')} have the edge, with weight "
            f"{median_range(w, what='', digits=2)} and IFEval's source scale "
            f"{median_range(sc, what='', digits=1)}"
        )
    return _sentences(parts)


#: A run whose MIC exceeds its ensemble's median by this factor has stopped in a worse local
#: optimum: the runs that share an optimum differ by about :data:`ORDER_TIE_MIC` in MIC, far
#: less (the authors' setup: most runs 0.036-0.040, two at 0.071-0.076).
LOCAL_OPTIMUM_FACTOR = 1.5


def local_runs(runs: Sequence[RecoveryResults]) -> list[RecoveryResults]:
    """The runs of an ensemble whose MIC is more than :data:`LOCAL_OPTIMUM_FACTOR` times the
    ensemble's median."""
    mics = _mics(runs)
    med = float(np.median(mics))
    return [m for m, x in zip(runs, mics) if x > LOCAL_OPTIMUM_FACTOR * med]


def one_run_text(page: Any) -> str:
    """The authors' setup's ensemble of MICs: how many runs end in a local optimum, and
    whether seed 0 is one of them."""
    if "authors" not in page.setups:
        return needs_setup("authors")
    runs = page.ensembles["authors"]
    mics = _mics(runs)
    local = [m.setup.ica_seed for m in local_runs(runs)]
    parts = [f"under the authors' setup the MIC of the runs is {median_range(mics)}"]
    if local:
        parts.append(
            f"{k_of_n(len(local), len(runs), 'runs')} ({seed_list(local)}) end with a MIC more "
            f"than {LOCAL_OPTIMUM_FACTOR} times the median, in a worse local optimum"
        )
        zero = "is one of them" if 0 in local else "is not one of them"
        parts.append(f"on the machine that built this page seed 0 {zero} (MIC {number(mics[0])})")
    else:
        parts.append(f"no run ends with a MIC more than {LOCAL_OPTIMUM_FACTOR} times the median")
    printed = printed_mic(runs[0].domains)
    if np.isfinite(printed):
        parts.append(f"the authors printed {number(printed)} from their own single run")
    return _sentences(parts)


def headline_text(page: Any) -> str:
    """The headline claims over each setup's bootstrap refits, as counts of fits."""
    first = next(iter(page.results.values())).headline
    parts = [
        f"each setup has {count(first.n_fits, 'fit')} ({first.design}); "
        + (
            "every sequential search was certified optimal"
            if all(page.results[s].headline.n_uncertified == 0 for s in page.setups)
            else f"{count(sum(page.results[s].headline.n_uncertified for s in page.setups), 'search')} "
            "were not certified optimal"
        )
    ]
    for s in page.setups:
        h = page.results[s].headline
        n = h.n_fits
        k = {c: whole(round(h.share(c) * n)) for c in HEADLINE_CLAIMS}
        parts.append(
            f"under {_the(s)} the paper's order comes back in {k_of_n(k['S4-order'], n, 'fits')}; "
            f"{_chosen(page.settings)} fit best of their size in {k['S4-best-four']}, and the "
            f"four best subsets all exclude {EXCLUDED} in {k['F18-four-smallest']}"
        )
    return _sentences(parts)


def rule_text(page: Any) -> str:
    """The domain rule as a lever: the MIC and rank of Section 4's domains with each rule."""
    ev = _evidence(page)
    lv = ev.levers.reset_index()
    book = lv[lv["domain rule"] == "this book"].set_index("residuals")
    v = _levers(ev)
    n = ev.n_subsets
    worst = bool((book[["rank (seed 0)", "rank (restarts)"]] == n).all().all())
    parts = [
        f"with this book's domains the MIC of Section 4's domains is {number(v['book'])} at "
        f"seed 0, rank {whole(book.loc['domain', 'rank (seed 0)'])} of the "
        f"{count(n, 'subset')}"
        + ("; they rank last whatever the residuals or the FastICA runs" if worst else ""),
        f"the authors' rule alone brings it to {number(v['rule'])}",
        f"the final table's extra models bring it to {number(v['table'])} and the authors' "
        f"residuals to {number(v['authors'])}"
        + (", smaller steps" if rule_is_main_lever(ev) else ""),
    ]
    return _sentences(parts)


def optimum_text(page: Any) -> str:
    """The FastICA local optimum at seed 0 under the authors' setup: the MICs with one and
    with several runs, the domain whose run stops short, and what the authors printed."""
    ev = _evidence(page)
    one, best = ev.optimum_mic
    opt = ev.optimum
    runs = f"{ev.restarts} runs"
    gap = opt[f"negentropy {runs}"] - opt["negentropy seed 0"]
    d = str(gap.idxmax())
    parts = [
        f"under the authors' setup one FastICA run per domain at seed 0 gives MIC "
        f"{number(one)}; keeping the best of {count(ev.restarts, 'run')} per domain gives "
        f"{number(best)}"
    ]
    printed = printed_mic(ev.chosen)
    if np.isfinite(printed):
        parts.append(f"the authors printed {number(printed)}")
    parts.append(
        f"the domain whose run stops shortest is {d}: its negentropy, FastICA's objective, is "
        f"{number(opt.loc[d, 'negentropy seed 0'], 4)} at seed 0 and "
        f"{number(opt.loc[d, f'negentropy {runs}'], 4)} in the best run"
    )
    alpha = opt.loc[d, "α printed"]
    if np.isfinite(alpha):
        closer = (
            "our best run's"
            if abs(alpha - opt.loc[d, f"α {runs}"]) < abs(alpha - opt.loc[d, "α seed 0"])
            else "our seed-0 run's"
        )
        parts.append(
            f"the inexactness the authors printed for {d} ({number(alpha)}) is closer to "
            f"{closer} ({number(opt.loc[d, f'α {runs}'])}) than to the other "
            f"({number(opt.loc[d, 'α seed 0'])}), so their single run reached the "
            + ("better optimum" if closer == "our best run's" else "same local optimum")
        )
    return _sentences(parts)


def tie_text(page: Any) -> str:
    """The near tie of the two best row orders in the fit with the best of several runs."""
    ev = _evidence(page)
    gap, paper_rank = tie_gap(ev.optimum_ranked)
    near = gap <= NEAR_TIE_MIC
    parts = [
        f"in the fit with the best of {count(ev.restarts, 'run')} per domain the order is "
        f"{order_text(ev.optimum_alignment)}",
        f"its two best row orders are {number(gap, 4)} apart in MIC"
        + (f", within twice the MIC's spread inside one optimum ({ORDER_TIE_MIC})" if near else ""),
        "the paper's order is not among its five best"
        if paper_rank is None
        else f"the paper's order is number {paper_rank} (table below)",
    ]
    if near and paper_rank is not None and paper_rank <= 2:
        parts.append("so small differences between our rows and the authors' can swap them")
    return _sentences(parts)


def stored_run_text(page: Any) -> str:
    """What the authors' stored run printed, beside what the runs here give."""
    ev = _evidence(page)
    stored = authors_stored_order()
    printed = printed_mic(ev.chosen)
    is_paper = bool(matches_alignment(stored, PAPER_ALIGNMENT))
    parts = [
        f"the authors' stored run prints the order {order_text(stored)}"
        + (", the paper's" if is_paper else "")
        + " (the R² table of their alignment code, shown in {doc}`04_interpretation`)"
    ]
    if np.isfinite(printed):
        parts.append(f"it printed MIC {number(printed)} for the four domains")
    for s in page.setups:
        runs = page.ensembles[s]
        parts.append(
            f"under {_the(s)} the paper's order comes back in "
            f"{k_of_n(_paper_order_runs(runs), len(runs), 'runs')}"
        )
    gap, paper_rank = tie_gap(ev.optimum_ranked)
    if is_paper and paper_rank == 2 and gap <= NEAR_TIE_MIC:
        parts.append(
            "on our rows the paper's order is the runner-up of the better fit, so a run on the "
            "authors' larger table can have tipped the near tie its way"
        )
    return _sentences(parts)


def filtered_text(page: Any) -> str:
    """Appendix H.3 in words: the variance drop, the MIC in the typical runs, and how often
    the filtered fits keep a general factor and the paper's order."""
    parts = []
    drop = [
        s
        for s in page.setups
        if page.results[s].variance.loc[["bbh", "mmlu_pro"], "ratio"].max()
        < page.results[s].variance.loc[["gpqa", "musr"], "ratio"].min()
    ]
    if drop:
        parts.append(
            "the filter shrinks the spread of BBH and MMLU-PRO more than that of GPQA and MUSR "
            + ("under both setups" if len(drop) == 2 else f"under {_the(drop[0])}")
            + ", the paper's explanation"
        )
    for s in page.setups:
        r = page.results[s]
        a, b = float(r.fit_filtered.mic_), float(r.fit.mic_)
        if a > 1.2 * b:
            move = f"rises from {number(b)} to {number(a)}"
        elif a < b / 1.2:
            move = f"falls from {number(b)} to {number(a)}"
        else:
            move = f"stays near {number(b)} ({number(a)} after the filter)"
        parts.append(f"in the typical run of {_the(s)} the MIC {move}")
    for s in page.setups:
        runs = page.ensembles[s]
        n = len(runs)
        filt = [m.adjustment_filtered.benchmarks for m in runs]
        gen = sum(role_index(al, GENERAL) is not None for al in filt)
        po = sum(bool(matches_alignment(al, PAPER_ALIGNMENT)) for al in filt)
        parts.append(
            f"under {_the(s)} the filtered fit has a factor aligned with BBH or MMLU-PRO in "
            f"{k_of_n(gen, n, 'runs')}, and the paper's order in {k_of_n(po, n, 'runs')}"
        )
        if EDGE_DOMAIN in page.settings.domains:
            w, sc = _edge_values(runs, filtered=True)
            if w:
                parts.append(
                    f"{k_of_n(len(w), n, 'runs')} have a general → IFEval edge in {EDGE_DOMAIN}, "
                    f"with weight {median_range(w, what='', digits=2)} and IFEval's source "
                    f"scale {median_range(sc, what='', digits=1)}"
                )
    return _sentences(parts)
