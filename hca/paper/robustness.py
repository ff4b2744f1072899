"""How the headline results move under perturbations of the data and of the method.

The paper's headline results on leaderboard v2 are (1) the causal order of the three latent
factors, read off the OLS alignment of Section 4 (the paper: BBH/MMLU-PRO -> IFEval ->
MATH Lvl 5), (2) the MIC of HCA on its four domains (Llama-3-8B, Llama-3.1-8B, Qwen2.5-7B,
Qwen2.5-14B) and (3) the invariant set S_inv of Section 2. This module recomputes all three
under one perturbation at a time and returns a tidy table, one row per perturbation.

* The perturbed settings (:class:`Setting`, :func:`paper_settings`) live in
  :mod:`hca.paper.robustness_settings` and are importable from here.
* :func:`robust_fit` reduces one HCA fit (FastICA, Picard-O or Picard) to a
  :class:`RobustFit`; :func:`bootstrap_fits` repeats it on within-domain resamples, and
  :func:`invariant_set_rule` is the S_inv rule of the PCA chapter.
* :func:`run_setting`, :func:`bootstrap_row` and :func:`seed_row` make the rows,
  :func:`run_perturbations` the table; :func:`precedence` counts how often each of the
  paper's pairwise precedences holds among the refits.
* :func:`authors_table_variants` fits the authors' looser domain rule (the lever the recovery
  chapter identifies) on the CSV and the final table, with and without precision duplicates.
* :func:`run` computes the page's results once (:func:`hca.paper.cache.cached`).

Conventions
-----------
* Picard-O constrains the sources to be white, as FastICA does; Picard drops that constraint
  (:func:`hca.estimator.domain_ica` rescales its sources to unit variance).
* The search is exhaustive when ``(d0!)^K <= 10,000`` row orders (the estimator's default
  for the paper's fit) and the certified sequential search otherwise (e.g. four components);
  a certified sequential result is the exhaustive optimum.
* Orders are compared by *role*: BBH and MMLU-PRO are interchangeable (the paper: "BBH and
  MMLU-PRO" for ``z_1``), every other benchmark is its own role. With as many factors as
  roles in the reference the factor-by-factor match is required; with more factors, the first
  factor aligned with each role must come in the reference's order (the extra factors are
  ignored); with fewer, the comparison is undefined (NA).
* ``*_raw`` score columns are compared and displayed under the name of the normalized score.
* Every random step takes ``random_state`` (``numpy.random.default_rng``); resamples and
  seeds are fixed before the refits, which run through :class:`joblib.Parallel` (``n_jobs``),
  so the table is the same for any ``n_jobs``.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.exceptions import ConvergenceWarning

from hca import subspace as ss
from hca.data.frames import domain_data
from hca.data.registry import V2_BENCHMARKS, alignment_text, role_position
from hca.estimator.model import HCA, clone_hca
from hca.estimator.search import HCASearchResult
from hca.paper.constants import (
    PAPER_ALIGNMENT,
    PAPER_V2_BASES,
    PAPER_V2_FOUR,
)
from hca.paper.replication import v2_authors, v2_final_frame, v2_frame
from hca.paper.robustness_settings import (
    RAW_SUFFIX,
    Setting,
    authors_domains_setting,
    components_setting,
    default_setting,
    final_table_setting,
    ica_setting,
    paper_settings,
    raw_scores_setting,
    search_for,
    without_merged_setting,
)
from hca.paper.setups import SETUP_NAMES, Setup
from hca.paper.shape import ChapterSpec
from hca.stability import bootstrap_samples, matches_alignment, resample_fits, seed_fits
from hca.validation import check_fraction, check_frame

__all__ = [
    "Settings",
    "RobustnessResults",
    "run",
    "authors_table_variants",
    "raw_score_map",
    "Setting",
    "RobustFit",
    "SInvResult",
    "RobustnessTable",
    "search_for",
    "robust_fit",
    "bootstrap_fits",
    "invariant_set_rule",
    "order_label",
    "role_pattern",
    "order_matches",
    "default_setting",
    "final_table_setting",
    "raw_scores_setting",
    "ica_setting",
    "components_setting",
    "without_merged_setting",
    "authors_domains_setting",
    "paper_settings",
    "run_setting",
    "bootstrap_row",
    "seed_row",
    "run_perturbations",
    "precedence",
]


#: Benchmarks that play the same role in an order (the paper's general factor).
ROLE_GROUPS: tuple[frozenset, ...] = (frozenset({"bbh", "mmlu_pro"}),)


# =========================================================================== orders
def _base_name(name: str) -> str:
    """``"bbh_raw"`` -> ``"bbh"`` (raw and normalized scores share a role)."""
    name = str(name)
    return name[: -len(RAW_SUFFIX)] if name.endswith(RAW_SUFFIX) else name


def order_label(alignment: Sequence[str]) -> str:
    """``("math_lvl_5", "bbh_raw", "ifeval")`` -> ``"MATH Lvl 5 > BBH > IFEval"``
    (:func:`hca.data.alignment_text` of the names without ``_raw``)."""
    return alignment_text([_base_name(b) for b in alignment], sep=" > ")


def role_pattern(
    alignment: Sequence[str], groups: Sequence[frozenset] = ROLE_GROUPS
) -> tuple[frozenset, ...]:
    """The role of every factor of an alignment (a pattern for :func:`order_matches`).

    A benchmark in one of ``groups`` stands for the whole group (BBH for BBH or MMLU-PRO);
    any other benchmark is its own role. ``*_raw`` names count as the normalized score.
    """
    out = []
    for b in alignment:
        base = _base_name(b)
        out.append(next((g for g in groups if base in g), frozenset({base})))
    return tuple(out)


def order_matches(alignment: Sequence[str], pattern: Sequence[Iterable[str]]) -> Any:
    """Whether an alignment follows a pattern of roles (see the module docstring): the
    library's :func:`hca.stability.matches_alignment`, not strict, on the names without the
    ``_raw`` suffix.

    Returns
    -------
    bool or pandas.NA
        Same length: every factor's benchmark is in its role. More factors: the first factor
        of every role exists and they come in the pattern's order. Fewer factors: NA.
    """
    return matches_alignment([_base_name(b) for b in alignment], pattern, strict=False)


# =========================================================================== one fit
@dataclass(frozen=True, eq=False)
class RobustFit:
    """One HCA fit reduced to what the robustness table reports.

    Attributes
    ----------
    mic : float
    alphas : dict
        Domain -> inexactness ``alpha_k``.
    alignment : tuple of str
        Benchmark each factor is aligned with by the OLS adjustment (Section 4).
    certified : bool
        Whether the search proved the row order optimal.
    converged : bool
        Whether ICA converged in every domain.
    search_result : HCASearchResult
    """

    mic: float
    alphas: dict
    alignment: tuple
    certified: bool
    converged: bool
    search_result: HCASearchResult = field(repr=False)

    @property
    def order(self) -> str:
        """The alignment as ``"BBH > IFEval > MATH Lvl 5"``."""
        return order_label(self.alignment)

    def summary(self) -> str:
        """One line: MIC and order."""
        return f"MIC {self.mic:.3f}; order {self.order}"

    @classmethod
    def from_model(cls, model: HCA) -> RobustFit:
        """Reduce a fitted :class:`~hca.estimator.HCA`."""
        return cls(
            mic=float(model.mic_),
            alphas=dict(model.inexactness_),
            alignment=tuple(model.adjust().benchmarks),
            certified=bool(model.search_result_.certified),
            converged=all(model.ica_converged_.values()),
            search_result=model.search_result_,
        )


def robust_fit(estimator: HCA, X: Any, domains: Any) -> RobustFit:
    """Fit a clone of ``estimator`` and reduce it to a :class:`RobustFit`.

    ICA convergence warnings are silenced and recorded in ``converged``.

    Parameters
    ----------
    estimator : HCA
        E.g. :meth:`Setting.estimator`; its ``ica`` option chooses FastICA or Picard.
    X : DataFrame of shape (n_models, n_benchmarks)
        Scores; the column names name the alignment.
    domains : array-like of shape (n_models,)
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return RobustFit.from_model(clone_hca(estimator).fit(X, domains))


def bootstrap_fits(
    estimator: HCA,
    X: pd.DataFrame,
    domains: Any,
    *,
    n_boot: int = 20,
    random_state: int = 0,
    n_jobs: int | None = None,
) -> pd.DataFrame:
    """:func:`robust_fit` on ``n_boot`` resamples of the models drawn within every domain.

    The resamples are :func:`hca.stability.bootstrap_samples` (drawn in advance from
    ``random_state``); ``n_jobs`` runs the refits in parallel.

    Returns
    -------
    DataFrame
        ``replicate``, ``mic``, ``alignment`` (tuple), ``order``, ``converged``,
        ``certified``.
    """
    base = clone_hca(estimator)
    samples = bootstrap_samples(X, domains, n_boot, random_state)
    if not isinstance(base.random_state, (int, np.integer)) or isinstance(base.random_state, bool):
        fits = Parallel(n_jobs=n_jobs)(delayed(robust_fit)(base, Xb, lb) for Xb, lb in samples)
    else:  # every resample's ICA in one stack, the searches in one batch (the same fits)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            models = resample_fits(base, samples, int(base.random_state))
        fits = [RobustFit.from_model(m) for m in models]
    return pd.DataFrame([_replicate(b, fit) for b, fit in enumerate(fits)])


def _replicate(b: int, fit: RobustFit) -> dict:
    return {
        "replicate": b,
        "mic": fit.mic,
        "alignment": fit.alignment,
        "order": fit.order,
        "converged": fit.converged,
        "certified": fit.certified,
    }


# =========================================================================== S_inv
@dataclass(frozen=True, eq=False)
class SInvResult:
    """Outcome of the S_inv rule.

    Attributes
    ----------
    members : tuple
        The invariant set (in the order of the candidates).
    threshold : float
        ``tau``, the pooled 95 % quantile of the split-half nulls.
    dist : DataFrame
        Distances between the candidates' principal subspaces.
    boot_share : float
        Share of bootstrap distance matrices (``tau`` fixed) whose rule set is ``members``
        (NaN without bootstrap).
    """

    members: tuple
    threshold: float
    dist: pd.DataFrame
    boot_share: float = float("nan")

    def summary(self) -> str:
        return (
            f"S_inv ({len(self.members)}): {', '.join(self.members)}; tau = "
            f"{self.threshold:.3f}; bootstrap share {self.boot_share:.0%}"
        )


def invariant_set_rule(
    frame: pd.DataFrame,
    benchmarks: Sequence[str],
    candidates: Sequence[str] = PAPER_V2_BASES,
    n_components: int = 3,
    *,
    n_splits: int = 200,
    n_boot: int = 0,
    random_state: int = 0,
) -> SInvResult:
    """The S_inv rule of the PCA chapter on one frame (:func:`hca.subspace.invariant_set_rule`).

    ``tau`` is the 95 % quantile of split-half null distances pooled over the candidates
    (``n_splits`` per domain); S_inv is the largest set of candidates whose pairwise
    rank-``n_components`` subspace distances are all ``<= tau``. With ``n_boot > 0`` the
    rule is also applied, with the same ``tau``, to ``n_boot`` bootstrap distance matrices.
    """
    X, labels = domain_data(frame, candidates, benchmarks, context="invariant_set_rule")
    rule = ss.invariant_set_rule(
        X,
        labels,
        candidates,
        n_components=n_components,
        n_splits=n_splits,
        random_state=random_state,
    )
    members, tau, dist = rule.members, rule.threshold, rule.dist
    share = float("nan")
    if n_boot:
        sets = _bootstrap_sets(X, labels, candidates, n_components, n_boot, random_state, tau)
        share = float(np.mean([s == members for s in sets]))
    return SInvResult(members, float(tau), dist, share)


def _bootstrap_sets(
    X: pd.DataFrame,
    labels: np.ndarray,
    candidates: Sequence[str],
    n_components: int,
    n_boot: int,
    random_state: int,
    tau: float,
) -> list[tuple]:
    """The rule's set (threshold ``tau``) on each of ``n_boot`` bootstrap distance matrices."""
    boot = ss.bootstrap_distance_matrix(
        X,
        labels,
        n_components=n_components,
        n_boot=n_boot,
        order=list(candidates),
        random_state=random_state,
    )
    idx = boot.point.index
    return [
        tuple(ss.invariant_set(pd.DataFrame(s, index=idx, columns=idx), tau)) for s in boot.samples
    ]


# =========================================================================== rows
def _domain_rows(setting: Setting, domains: Sequence[str]) -> tuple[pd.DataFrame, np.ndarray]:
    return domain_data(
        setting.frame,
        domains,
        setting.benchmarks,
        complete=True,
        context=f"setting {setting.name!r}",
    )


def _compare(alignment: tuple, reference: Sequence[str] | None, pattern) -> dict:
    return {
        "paper_order": order_matches(alignment, pattern),
        "default_order": (
            pd.NA if reference is None else order_matches(alignment, role_pattern(reference))
        ),
    }


def run_setting(
    setting: Setting,
    *,
    domains: Sequence[str] = PAPER_V2_FOUR,
    candidates: Sequence[str] = PAPER_V2_BASES,
    n_boot: int = 20,
    n_splits: int = 200,
    level: float = 0.9,
    random_state: int = 0,
    reference: Sequence[str] | None = None,
    pattern: Sequence[Iterable[str]] = PAPER_ALIGNMENT,
    s_inv: SInvResult | None = None,
    n_jobs: int | None = None,
) -> tuple[dict, pd.DataFrame]:
    """Evaluate one setting; return its table record and its bootstrap replicates.

    Parameters
    ----------
    setting : Setting
    domains : sequence of str
        Domains HCA is fitted on (default: the paper's four).
    candidates : sequence of str
        Candidates of the S_inv rule (default: the eight base models of Section 1.1).
    n_boot : int
        Bootstrap resamples (within domains) for the MIC interval, the order share and the
        S_inv share.
    n_splits : int
        Split-half null splits per candidate for the S_inv threshold.
    level : float
        Coverage of the percentile interval of the MIC.
    random_state : int
        ICA seed and seed of the resampling.
    reference : sequence of str, optional
        The default fit's alignment, for the ``default_order`` column.
    pattern : sequence of sets
        The paper's order, for the ``paper_order`` column.
    s_inv : SInvResult, optional
        Reported as is when ``setting.subspace`` is False (the default's S_inv).
    n_jobs : int, optional
        Parallel refits (:class:`joblib.Parallel`); the result does not depend on it.
    """
    check_fraction(level, "level")
    X, labels = _domain_rows(setting, domains)
    estimator = setting.estimator(len(domains), random_state)
    fit = robust_fit(estimator, X, labels)
    boot = bootstrap_fits(
        estimator, X, labels, n_boot=n_boot, random_state=random_state, n_jobs=n_jobs
    )
    boot.insert(0, "perturbation", setting.name)
    if setting.subspace or s_inv is None:
        s_inv = invariant_set_rule(
            setting.frame,
            setting.benchmarks,
            candidates,
            setting.n_components,
            n_splits=n_splits,
            n_boot=n_boot,
            random_state=random_state,
        )
    record = _record(setting, len(X), boot, s_inv, level, reference, pattern, fit)
    return record | {f"alpha[{d}]": a for d, a in fit.alphas.items()}, boot


def _paper_share(alignments: Iterable[tuple], pattern) -> float:
    """Share of replicates whose alignment follows the paper's order (NA counts as no)."""
    hits = [order_matches(a, pattern) for a in alignments]
    return float(np.mean([h is True for h in hits])) if hits else float("nan")


def _modal(values: Sequence[tuple]) -> tuple[tuple, float]:
    counts = Counter(values)
    best = max(counts, key=lambda v: (counts[v], -values.index(v)))
    return best, counts[best] / len(values)


def _record(
    setting: Setting,
    models: int,
    reps: pd.DataFrame,
    s_inv: SInvResult,
    level: float,
    reference: Sequence[str] | None,
    pattern: Sequence[Iterable[str]],
    fit: RobustFit | None = None,
    *,
    name: str | None = None,
    recomputed: bool | None = None,
) -> dict:
    """A row of the robustness table (columns in :class:`RobustnessTable`): the point ``fit``
    with the interval of its replicates ``reps``, or without a fit (a resampling row) the
    replicates' median MIC and modal order."""
    alignments = list(reps["alignment"])
    if fit is None:
        alignment, order_share = _modal(alignments)
        mic = float(np.median(reps["mic"]))
        certified, converged = bool(np.all(reps["certified"])), bool(np.all(reps["converged"]))
    else:
        alignment, mic, certified, converged = fit.alignment, fit.mic, fit.certified, fit.converged
        order_share = float(np.mean([a == alignment for a in alignments]))
    lo, hi = np.quantile(reps["mic"], [(1 - level) / 2, (1 + level) / 2])
    return {
        "perturbation": setting.name if name is None else name,
        "group": setting.group if fit is not None else "resampling",
        "models": models,
        "n_components": setting.n_components,
        "ica": setting.ica,
        "s_inv": s_inv.members,
        "s_inv_size": len(s_inv.members),
        "s_inv_recomputed": bool(setting.subspace) if recomputed is None else recomputed,
        "s_inv_share": s_inv.boot_share,
        "tau": s_inv.threshold,
        "mic": mic,
        "mic_lo": float(lo),
        "mic_hi": float(hi),
        "alignment": alignment,
        "order": order_label(alignment),
        "order_share": order_share,
        "paper_share": _paper_share(alignments, pattern),
        **_compare(alignment, reference, pattern),
        "certified": certified,
        "ica_converged": converged,
        "n_resamples": len(reps),
    }


def bootstrap_row(
    setting: Setting,
    *,
    n_boot: int = 100,
    domains: Sequence[str] = PAPER_V2_FOUR,
    candidates: Sequence[str] = PAPER_V2_BASES,
    n_splits: int = 200,
    level: float = 0.9,
    random_state: int = 0,
    reference: Sequence[str] | None = None,
    pattern: Sequence[Iterable[str]] = PAPER_ALIGNMENT,
    n_jobs: int | None = None,
) -> tuple[dict, pd.DataFrame]:
    """The bootstrap perturbation: ``n_boot`` resamples of the models within domains.

    The record gives the median MIC with its interval, the *modal* order and its share, and
    the modal S_inv over ``n_boot`` bootstrap distance matrices (``tau`` of the full data)
    with its share.
    """
    X, labels = _domain_rows(setting, domains)
    boot = bootstrap_fits(
        setting.estimator(len(domains), random_state),
        X,
        labels,
        n_boot=n_boot,
        random_state=random_state,
        n_jobs=n_jobs,
    )
    full = invariant_set_rule(
        setting.frame,
        setting.benchmarks,
        candidates,
        setting.n_components,
        n_splits=n_splits,
        random_state=random_state,
    )
    Xc, labels_c = domain_data(setting.frame, candidates, setting.benchmarks)
    sets = _bootstrap_sets(
        Xc, labels_c, candidates, setting.n_components, n_boot, random_state, full.threshold
    )
    members, share = _modal(sets)
    boot.insert(0, "perturbation", "bootstrap")
    s_inv = SInvResult(members, full.threshold, full.dist, share)
    rec = _record(
        setting, len(X), boot, s_inv, level, reference, pattern, name="bootstrap", recomputed=True
    )
    return rec, boot


def seed_row(
    setting: Setting,
    *,
    seeds: Iterable[int] = range(20),
    domains: Sequence[str] = PAPER_V2_FOUR,
    level: float = 0.9,
    reference: Sequence[str] | None = None,
    pattern: Sequence[Iterable[str]] = PAPER_ALIGNMENT,
    s_inv: SInvResult | None = None,
    n_jobs: int | None = None,
) -> tuple[dict, pd.DataFrame]:
    """The ICA-seed perturbation: the same data refitted with every seed in ``seeds``.

    S_inv does not involve ICA, so ``s_inv`` (the default's) is reported unchanged.
    """
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds is empty")
    X, labels = _domain_rows(setting, domains)
    with warnings.catch_warnings():  # the refits of all seeds in one batch (the same fits)
        warnings.simplefilter("ignore", ConvergenceWarning)
        models = seed_fits(setting.estimator(len(domains)), X, labels, seeds)
    fits = [RobustFit.from_model(m) for m in models]
    reps = pd.DataFrame(
        [{"perturbation": "ICA seed", **_replicate(seed, fit)} for seed, fit in zip(seeds, fits)]
    )
    if s_inv is None:
        s_inv = SInvResult((), float("nan"), pd.DataFrame())
    rec = _record(
        setting, len(X), reps, s_inv, level, reference, pattern, name="ICA seed", recomputed=False
    )
    return rec, reps


# =========================================================================== table
@dataclass(frozen=True, eq=False)
class RobustnessTable:
    """The robustness table and the replicates behind its intervals.

    Attributes
    ----------
    table : DataFrame
        One row per perturbation (index ``perturbation``): ``group``, ``models`` (in the
        fitted domains), ``n_components``, ``ica``, ``s_inv`` (tuple), ``s_inv_size``,
        ``s_inv_recomputed``, ``s_inv_share`` (bootstrap share of that set), ``tau``,
        ``mic`` with ``mic_lo``/``mic_hi`` (bootstrap percentile interval; for the
        resampling rows the median and interval of the replicates), ``alignment`` (tuple),
        ``order``, ``order_share`` (share of replicates with that order), ``paper_share``
        (share of replicates with the paper's order), ``paper_order``
        and ``default_order`` (bool or NA, see :func:`order_matches`), ``certified``,
        ``ica_converged``, ``n_resamples`` and ``alpha[<domain>]`` (point fits).
    replicates : DataFrame
        Every bootstrap/seed refit: ``perturbation``, ``replicate``, ``mic``, ``alignment``,
        ``order``, ``converged``, ``certified``.
    """

    table: pd.DataFrame
    replicates: pd.DataFrame

    def summary(self) -> str:
        """One line per perturbation."""
        lines = [f"Robustness of the headline results ({len(self.table)} rows)"]
        for name, r in self.table.iterrows():
            lines.append(
                f"  {name}: S_inv {len(r['s_inv'])} domains; MIC {r['mic']:.3f} "
                f"[{r['mic_lo']:.3f}, {r['mic_hi']:.3f}]; {r['order']} "
                f"({r['order_share']:.0%}); paper {_yes_no(r['paper_order'])}, "
                f"default {_yes_no(r['default_order'])}"
            )
        return "\n".join(lines)


def _yes_no(value: Any) -> str:
    if value is pd.NA or value is None or (isinstance(value, float) and np.isnan(value)):
        return "n/a"
    return "yes" if bool(value) else "no"


def run_perturbations(
    settings: Sequence[Setting],
    *,
    domains: Sequence[str] = PAPER_V2_FOUR,
    candidates: Sequence[str] = PAPER_V2_BASES,
    n_boot: int = 20,
    n_boot_models: int = 100,
    seeds: Iterable[int] = range(20),
    n_splits: int = 200,
    level: float = 0.9,
    random_state: int = 0,
    pattern: Sequence[Iterable[str]] = PAPER_ALIGNMENT,
    progress: Callable[[str], None] | None = None,
    n_jobs: int | None = None,
) -> RobustnessTable:
    """The robustness table: every setting, then the bootstrap and ICA-seed perturbations.

    The first setting is the default: its alignment is the reference of ``default_order``,
    its S_inv is reported for settings that cannot change it, and the resampling rows
    perturb it. ``n_boot_models=0`` or empty ``seeds`` skips the corresponding row.

    Parameters
    ----------
    settings : sequence of Setting
        Default first (e.g. :func:`paper_settings`).
    domains, candidates, n_boot, n_splits, level, random_state, pattern
        As in :func:`run_setting`.
    n_boot_models : int
        Resamples of the bootstrap row.
    seeds : iterable of int
        ICA seeds of the seed row.
    progress : callable, optional
        Called with each perturbation's name before it runs.
    n_jobs : int, optional
        Parallel refits within each perturbation (:class:`joblib.Parallel`, e.g. on a Dask or
        Ray cluster inside ``joblib.parallel_backend``); the table does not depend on it.

    Returns
    -------
    RobustnessTable
    """
    settings = list(settings)
    if not settings:
        raise ValueError("settings is empty")
    names = [s.name for s in settings]
    if len(set(names)) != len(names):
        raise ValueError(f"setting names must be unique, got {names}")
    common: dict[str, Any] = dict(domains=domains, level=level, pattern=pattern, n_jobs=n_jobs)
    records, reps = [], []
    default = settings[0]
    reference, base_s_inv = None, None
    for setting in settings:
        if progress:
            progress(setting.name)
        rec, boot = run_setting(
            setting,
            candidates=candidates,
            n_boot=n_boot,
            n_splits=n_splits,
            random_state=random_state,
            reference=reference,
            s_inv=base_s_inv,
            **common,
        )
        if setting is default:
            reference = rec["alignment"]
            rec.update(_compare(reference, reference, pattern))
            base_s_inv = SInvResult(rec["s_inv"], rec["tau"], pd.DataFrame(), rec["s_inv_share"])
        records.append(rec)
        reps.append(boot)
    if n_boot_models:
        if progress:
            progress("bootstrap")
        rec, boot = bootstrap_row(
            default,
            n_boot=n_boot_models,
            candidates=candidates,
            n_splits=n_splits,
            random_state=random_state,
            reference=reference,
            **common,
        )
        records.append(rec)
        reps.append(boot)
    seeds = list(seeds)
    if seeds:
        if progress:
            progress("ICA seed")
        rec, boot = seed_row(default, seeds=seeds, reference=reference, s_inv=base_s_inv, **common)
        records.append(rec)
        reps.append(boot)
    table = pd.DataFrame(records).set_index("perturbation")
    for col in ("paper_order", "default_order"):
        table[col] = table[col].astype("boolean")
    return RobustnessTable(table, pd.concat(reps, ignore_index=True))


def _first_position(alignment: Sequence[str], role: frozenset) -> int | None:
    return role_position([_base_name(b) for b in alignment], role)


def precedence(
    replicates: pd.DataFrame,
    pattern: Sequence[Iterable[str]] = PAPER_ALIGNMENT,
    names: Sequence[str] = ("general", "IFEval", "MATH"),
) -> pd.DataFrame:
    """How often each of the pattern's pairwise precedences holds among the replicates.

    For every pair of roles ``(a, b)`` with ``a`` before ``b`` in ``pattern`` (the paper:
    general before IFEval, general before MATH, IFEval before MATH), a replicate counts when
    both roles have an aligned factor; it agrees when the first factor of ``a`` comes before
    the first factor of ``b``.

    Parameters
    ----------
    replicates : DataFrame
        With ``perturbation`` and ``alignment`` (e.g. :attr:`RobustnessTable.replicates`).
    pattern : sequence of sets
    names : sequence of str
        A name for every role of ``pattern``.

    Returns
    -------
    DataFrame
        One row per (perturbation, pair): ``perturbation``, ``pair`` (``"a < b"``),
        ``replicates``, ``defined`` (both roles aligned), ``agree`` and ``share``
        (``agree / defined``, NaN when nothing is defined).
    """
    check_frame(replicates, ["perturbation", "alignment"])
    roles = [frozenset(p) for p in pattern]
    if len(names) != len(roles):
        raise ValueError(f"names has {len(names)} entries for {len(roles)} roles")
    rows = []
    for pert, group in replicates.groupby("perturbation", sort=False):
        firsts = [[_first_position(a, r) for r in roles] for a in group["alignment"]]
        for i in range(len(roles)):
            for j in range(i + 1, len(roles)):
                pairs = [(f[i], f[j]) for f in firsts if f[i] is not None and f[j] is not None]
                agree = sum(a < b for a, b in pairs)
                rows.append(
                    {
                        "perturbation": pert,
                        "pair": f"{names[i]} < {names[j]}",
                        "replicates": len(group),
                        "defined": len(pairs),
                        "agree": agree,
                        "share": agree / len(pairs) if pairs else float("nan"),
                    }
                )
    return pd.DataFrame(rows)


# =========================================================================== the page
@dataclass(frozen=True)
class Settings:
    """Repetition counts of the robustness page (defaults: the book's).

    Attributes
    ----------
    setups : tuple of str
        The setups to run (:data:`hca.paper.setups.SETUP_NAMES`: both).
    n_boot : int
        Bootstrap resamples per perturbation (MIC interval, order share, S_inv share).
    n_boot_models : int
        Resamples of the bootstrap perturbation.
    seeds : tuple of int
        FastICA seeds of the seed perturbation.
    n_splits : int
        Split-half null splits per domain for the S_inv threshold.
    random_state : int
    n_jobs : int or None
        Parallel refits (None: joblib's default, one process unless
        :func:`joblib.parallel_config` says otherwise); the results do not depend on it.
    """

    setups: tuple[str, ...] = SETUP_NAMES  # the setups to run
    n_boot: int = 20
    n_boot_models: int = 100
    seeds: tuple[int, ...] = tuple(range(20))
    n_splits: int = 100
    random_state: int = 0
    n_jobs: int | None = None


@dataclass(frozen=True, eq=False)
class RobustnessResults:
    """Everything the robustness page shows.

    Attributes
    ----------
    table : RobustnessTable
        :func:`run_perturbations` of :func:`paper_settings`.
    models : dict
        Rows of the frames: ``csv`` (this book's, one per model), ``final`` (CSV plus the
        final table's models), ``final_only`` and ``authors`` (the authors' setup's table).
    authors_tables : DataFrame
        :func:`authors_table_variants`.
    raw_map : DataFrame
        :func:`raw_score_map` on the four domains.
    settings : Settings
    """

    table: RobustnessTable
    models: dict
    authors_tables: pd.DataFrame
    raw_map: pd.DataFrame
    settings: Settings

    def summary(self) -> str:
        return self.table.summary()


def authors_table_variants(
    domains: Sequence[str] = PAPER_V2_FOUR, random_state: int = 0
) -> pd.DataFrame:
    """The authors' domain rule on the CSV or the CSV plus the final table, with or without
    precision duplicates: models in ``domains``, MIC and order of the point fit (the
    robustness page's estimator, :meth:`Setting.estimator`).

    The last row (final table, duplicates kept) is the authors' setup's table.
    """
    rows = []
    for final in (False, True):
        for dedupe in (True, False):
            setting = authors_domains_setting(v2_authors(include_final=final, dedupe=dedupe))
            X, labels = _domain_rows(setting, domains)
            fit = robust_fit(setting.estimator(len(domains), random_state), X, labels)
            rows.append(
                {
                    "table": "CSV + final table" if final else "CSV",
                    "precision duplicates": "kept" if not dedupe else "dropped",
                    "models": len(X),
                    "mic": fit.mic,
                    "order": fit.order,
                }
            )
    return pd.DataFrame(rows)


def raw_score_map(
    frame: pd.DataFrame,
    domains: Sequence[str] = PAPER_V2_FOUR,
    benchmarks: Sequence[str] = V2_BENCHMARKS,
) -> pd.DataFrame:
    """How the normalized scores (0-100) depend on the raw ones (0-1) in ``domains``: the
    least-squares line ``normalized = slope * raw + intercept`` and its R^2 per benchmark."""
    check_frame(frame, ["base_model", *benchmarks, *(f"{b}{RAW_SUFFIX}" for b in benchmarks)])
    rows = frame[frame["base_model"].isin(list(domains))]
    out = {}
    for b in benchmarks:
        x, y = rows[f"{b}{RAW_SUFFIX}"].to_numpy(float), rows[b].to_numpy(float)
        slope, intercept = np.polyfit(x, y, 1)
        out[b] = {"slope": slope, "intercept": intercept, "R2": np.corrcoef(x, y)[0, 1] ** 2}
    return pd.DataFrame(out).T.rename_axis("benchmark")


def _compute(setup: Setup, settings: Settings) -> RobustnessResults:
    """The page's results: it perturbs the careful setup (its frame is the default setting;
    the authors' domain rule and the final table are perturbations of it)."""
    if setup.name != "careful":
        raise ValueError(
            f"the robustness page perturbs the careful setup; got setup "
            f"{setup.name!r} (the authors' domain rule is one of its rows)"
        )
    frame = v2_frame(setup)
    final = v2_final_frame()
    authors = v2_frame("authors")
    table = run_perturbations(
        paper_settings(frame, final, authors),
        n_boot=settings.n_boot,
        n_boot_models=settings.n_boot_models,
        seeds=settings.seeds,
        n_splits=settings.n_splits,
        random_state=settings.random_state,
        n_jobs=settings.n_jobs,
    )
    models = {
        "csv": len(frame),
        "final": len(final),
        "final_only": int((final["source"] == "final_html").sum()),
        "authors": len(authors),
    }
    return RobustnessResults(
        table,
        models,
        authors_table_variants(random_state=settings.random_state),
        raw_score_map(frame),
        settings,
    )


#: The page's shape (:class:`hca.paper.shape.ChapterSpec`; no claims of its own).
CHAPTER: ChapterSpec[Settings, RobustnessResults] = ChapterSpec(
    key="robustness",
    settings=Settings,
    compute=_compute,
    page="10_robustness",
)


def run(setup: str | Setup = "careful", settings: Settings | None = None) -> RobustnessResults:
    """The robustness page's results (computed once per process; a read-only copy). ``setup``
    must be ``"careful"``; the argument is there so that every chapter is run the same way."""
    return CHAPTER.run(setup, settings)
