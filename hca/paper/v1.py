"""The Leaderboard v1 chapter's analysis (Appendix H.4), under either setup.

Appendix H.4 repeats the paper's analysis on the first Open LLM Leaderboard (ARC, HellaSwag,
MMLU, TruthfulQA, Winogrande, GSM8K) with its six most used base models: the principal
subspaces of five of them agree (all but Llama-2-7B, Mixtral-8x7B included; Figure 23b), HCA on
those five has a small MIC (Figure 23c), and the adjusted causal graphs and alignment read a
hierarchy from truthfulness through general reasoning to mathematics (Figures 24-26).

:func:`run` computes our side under one setup (:mod:`hca.paper.setups`); the evaluators below
judge it. The ``authors`` setup labels the v1 file with the authors' own rule (their v2
function, run on the v1 file in ``find_token_size.ipynb``:
:func:`hca.attribution.authors.v1_frame_authors`, every row kept) and uses their estimator
options (residuals on the recovered rows of ``H``); the ``careful`` setup uses this book's
attribution (:func:`hca.paper.replication.v1_frame`) and Algorithm 1's per-domain residuals.

:class:`Settings` holds what a reader may change: the domains of the HCA fit (``domains``, the
paper's five), the base models the PCA part compares (``bases``, the paper's six), the
ensemble's seeds and the setups; claims about the paper's own choice of domains are "not
applicable" under other ones. The PCA analysis of Figure 23b and the FastICA local optima
depend on the domains only, and are computed once per domain rule (:func:`subspaces`,
:func:`ica_optima`). Figure 23c sweeps the subsets of at least three of the ``bases`` under
both setups, as the paper states for this figure. :func:`answer` writes the page's opening
paragraph from its results; :func:`mic_summary`, :func:`order_counts`, :func:`edge_values`,
:func:`two_optima` and the other helpers of the last section read a page's runs.

Refits use ``search="sequential"``, which returns the exhaustive optimum when it certifies it;
``n_uncertified`` counts the fits it could not certify.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from hca import interpret as it
from hca import stability as st
from hca import subspace as ss
from hca.attribution.authors import v1_frame_authors
from hca.data import authors_code_values
from hca.data.registry import V1_BENCHMARKS, alignment_text, benchmark_label, role_position
from hca.data.tables import load_paper_values
from hca.estimator.model import HCA, mic_by_subset_many
from hca.paper.cache import cached
from hca.paper.claims import (
    Outcome,
    RunEvidence,
    claim,
    grade,
    paper_list,
    ratio_band,
)
from hca.paper.constants import PAPER_PATTERNS, PAPER_V1_BASES, PAPER_V1_SINV
from hca.paper.pca import invariant_set_rule, set_text
from hca.paper.replication import (
    domain_data,
    estimator,
    main_fits,
    rounding_steered,
    seed_refits,
    v1_frame,
)
from hca.paper.setups import SETUP_NAMES, Setup, get_setup
from hca.paper.shape import ChapterSpec, each_setup
from hca.paper.words import count, join_words, k_of_n, seed_list, share_words, whole

__all__ = [
    "Settings",
    "check_domains",
    "MIN_MODELS",
    "MIN_DOMAINS",
    "N_COMPONENTS",
    "V1Subspaces",
    "V1Results",
    "run",
    "subspaces",
    "ica_optima",
    "parse_order",
    "paper_roles",
    "role_position",
    "precedes",
    "edge_table",
    "order_text",
    "authors_v1_counts",
    "first_runs",
    "boot_words",
    "answer",
    "per_setup",
    "SETUP_WORDS",
    "SHORT_NAMES",
    "domain_sizes",
    "authors_rule_without_duplicates",
    "subsets_within",
    "mic_summary",
    "mic_table",
    "order_counts",
    "v2_counts",
    "edge_values",
    "two_optima",
]

#: The v1 domain rules: the authors' (every row of the v1 file) and this book's.
_DOMAIN_RULES = ("authors", "book")
_B1 = list(V1_BENCHMARKS)
_OUTSIDE = "Llama-2-7B"  # the domain the paper leaves out of S_inv
#: Latent factors of every HCA fit and principal subspace of the chapter (the paper's 3).
N_COMPONENTS = 3
#: Fewest models a domain of the settings may have: the split-half null of the PCA part
#: compares two halves of a domain, each with at least ``N_COMPONENTS + 1`` models.
MIN_MODELS = 2 * (N_COMPONENTS + 1)
#: Fewest domains of the HCA fit and base models of the PCA part: Figure 23c's subsets
#: have at least three domains.
MIN_DOMAINS = 3


def _check_names(field: str, value: Any, minimum: int) -> None:
    """``value`` is a tuple of at least ``minimum`` distinct non-empty strings."""
    ok = isinstance(value, tuple) and all(isinstance(d, str) and d.strip() for d in value)
    if not ok or len(value) < minimum or len(set(value)) != len(value):
        raise ValueError(
            f"Settings.{field} = {value!r}: expected a tuple of at least {minimum} distinct "
            "base-model names (domains), e.g. "
            f"{(PAPER_V1_SINV if field == 'domains' else PAPER_V1_BASES)[:minimum]!r}"
        )


@dataclass(frozen=True)
class Settings:
    """The v1 chapter's analysis choices (defaults: the book's).

    The names are checked when the settings are made; whether every domain has enough
    models under every setup is checked (:func:`check_domains`) before any computation.

    Attributes
    ----------
    domains : tuple of str
        The domains of the HCA fit (the paper's five of ``S_inv``, :data:`PAPER_V1_SINV`);
        at least :data:`MIN_DOMAINS`, all among ``bases``.
    bases : tuple of str
        The base models whose principal subspaces the PCA part compares (Figure 23a-b) and
        whose subsets of at least three Figure 23c fits (the paper's six,
        :data:`PAPER_V1_BASES`).
    setups : tuple of str
        The setups to run (:data:`hca.paper.setups.SETUP_NAMES`: both).
    n_seeds : int
        FastICA seeds of the ensemble every fit-based claim is read from (seeds
        ``0 .. n_seeds - 1``; :class:`hca.paper.shape.EnsembleSettings`). The seed refits
        of the fit (:attr:`V1Results.seeds`) are the ensemble's first ``n_seeds`` runs.
    n_seeds_more : int
        The larger ensemble a claim is read from when a share of the first runs lies
        near a threshold or one of them is rounding-sensitive.
    n_splits, n_boot : int
        Split-half null splits per domain and bootstrap resamples of the distance matrix
        (Figure 23b).
    n_boot_hca : int
        Within-domain bootstrap refits of HCA (seed 0).
    solution_seeds : tuple of int
        FastICA seeds over which the local optima of every domain are grouped.
    v2_seeds : tuple of int
        Seeds of the v2 four-domain refits (:func:`hca.paper.replication.seed_refits`).
    n_jobs : int or None
        joblib jobs of the sweeps (None: the active backend's default, one process).

    Raises
    ------
    ValueError
        If ``domains`` or ``bases`` is not a tuple of distinct names, too short, or a domain
        is not among ``bases``.
    """

    domains: tuple[str, ...] = PAPER_V1_SINV  # the domains of the HCA fit
    bases: tuple[str, ...] = PAPER_V1_BASES  # the base models of the PCA part
    setups: tuple[str, ...] = SETUP_NAMES  # the setups to run
    n_seeds: int = 20  # FastICA seeds of the chapter's ensemble
    n_seeds_more: int = 40  # the larger ensemble near a threshold
    n_splits: int = 100
    n_boot: int = 100
    n_boot_hca: int = 20
    solution_seeds: tuple[int, ...] = tuple(range(30))
    v2_seeds: tuple[int, ...] = tuple(range(10))
    n_jobs: int | None = None

    def __post_init__(self) -> None:
        _check_names("bases", self.bases, MIN_DOMAINS)
        _check_names("domains", self.domains, MIN_DOMAINS)
        outside = [d for d in self.domains if d not in self.bases]
        if outside:
            raise ValueError(
                f"Settings.domains: {outside} not among Settings.bases {self.bases!r}; "
                "expected the domains of the HCA fit to be base models the PCA part compares"
            )

    @property
    def seeds(self) -> tuple[int, ...]:
        """FastICA seeds of the seed refits: the ensemble's first ``n_seeds`` seeds."""
        return tuple(range(int(self.n_seeds)))

    @property
    def paper_domains(self) -> bool:
        """Whether the HCA fit uses the paper's five domains (in any order)."""
        return set(self.domains) == set(PAPER_V1_SINV)

    @property
    def paper_bases(self) -> bool:
        """Whether the PCA part compares the paper's six base models (in any order)."""
        return set(self.bases) == set(PAPER_V1_BASES)


def check_domains(settings: Settings) -> None:
    """Check, before any computation, that every base model of ``settings`` has at least
    :data:`MIN_MODELS` models in the v1 frame of every setup it runs.

    Raises
    ------
    ValueError
        Naming the field, the base model, its number of models, the setup and the base
        models that have enough.
    """
    for name in settings.setups:
        sizes = _rule_frame(get_setup(name).domain_rule)["base_model"].value_counts()
        small = [d for d in settings.bases if int(sizes.get(d, 0)) < MIN_MODELS]
        if small:
            field = "domains" if all(d in settings.domains for d in small) else "bases"
            have = sizes[sizes >= MIN_MODELS]
            listed = ", ".join(f"{d} ({n:,})" for d, n in have.head(12).items())
            found = join_words(f"{d} has {count(int(sizes.get(d, 0)), 'model')}" for d in small)
            raise ValueError(
                f"Settings.{field}: {found} under the {name} setup; expected at least "
                f"{MIN_MODELS} models per domain. Base models with enough models there"
                f"{' (the largest)' if len(have) > 12 else ''}: {listed}"
            )


# =========================================================================== the paper's roles
def parse_order(value: str) -> tuple[frozenset, ...]:
    """``"a>b|c>d"`` (a ``value`` of ``paper_values.csv``) -> ``({a}, {b, c}, {d})``."""
    parts = [frozenset(p.split("|")) for p in str(value).split(">")]
    if len(parts) < 2 or any(not p or "" in p for p in parts):
        raise ValueError(f"expected roles like 'a>b|c>d', got {value!r}")
    return tuple(parts)


def paper_roles() -> tuple[frozenset, ...]:
    """The paper's roles of the three v1 factors (Figure 26: TruthfulQA, general reasoning,
    GSM8K), read from the ``H.4-order`` row of ``paper_values.csv``."""
    return parse_order(load_paper_values().loc["H.4-order", "value"])


def _edge(alignment: Sequence[str], parent: frozenset, child: frozenset) -> tuple[int, int] | None:
    """The positions of the factors aligned with ``parent`` and ``child`` when the first comes
    before the second (both present), else None."""
    i, j = role_position(alignment, parent), role_position(alignment, child)
    return (i, j) if i is not None and j is not None and i < j else None


def precedes(alignment: Sequence[str], parent: frozenset, child: frozenset) -> bool:
    """Whether a factor aligned with ``parent`` comes before the first one aligned with
    ``child`` (both present)."""
    return _edge(alignment, parent, child) is not None


def edge_table(
    record: Mapping, domains: Sequence[str], parent: frozenset, child: frozenset
) -> pd.DataFrame | None:
    """Weight and child source scale of the edge between the factors aligned with ``parent``
    and ``child`` in every domain's adjusted SCM, read off a :func:`hca.stability.fit_record`.

    Returns None when the fit has no such edge (a role is missing or the child comes first);
    otherwise a frame indexed by domain (``weight``, ``scale``) with ``attrs`` ``parent`` and
    ``child`` (1-based factor numbers).
    """
    edge = _edge(tuple(record["alignment"]), parent, child)
    if edge is None:
        return None
    columns = {
        what: _edge_column(record, domains, parent, child, what) for what in ("weight", "scale")
    }
    table = pd.DataFrame(columns, index=pd.Index(list(domains), name="domain"))
    table.attrs.update(parent=edge[0] + 1, child=edge[1] + 1)
    return table


#: ``"HellaSwag → TruthfulQA → GSM8K"``: the library's :func:`hca.data.alignment_text`.
order_text = alignment_text


def authors_v1_counts() -> pd.DataFrame:
    """The authors' v1 label counts: printed by their notebook beside the same rule on the
    public v1 file (every row; :func:`hca.attribution.authors.v1_frame_authors`).

    Indexed by the authors' label in their printed order (the ``v1size-*`` rows of
    :func:`hca.data.authors_code_values`, from ``scripts/subgroup_pca.ipynb``); columns
    ``printed``, ``ours`` and ``difference`` (ours − printed). Their v1 table itself is not
    public, so a difference is a row of theirs missing from the public file (or one more).
    """
    acv = authors_code_values()
    rows = acv[acv["id"].str.startswith("v1size-")]
    printed = pd.Series(
        rows["value"].astype(int).to_numpy(),
        index=[i[len("v1size-") :] for i in rows["id"]],
        name="printed",
    )
    ours = v1_frame("authors")["authors_label"].value_counts().reindex(printed.index, fill_value=0)
    out = pd.DataFrame({"printed": printed, "ours": ours.astype(int)})
    out["difference"] = out["ours"] - out["printed"]
    out.index.name = "authors' label"
    return out


# =========================================================================== shared steps
@dataclass(frozen=True, eq=False)
class V1Subspaces:
    """Figure 23a-b on the six v1 domains (the same under both setups).

    Attributes
    ----------
    sizes : Series
        Models per domain (the paper's order).
    spectra : dict
        ``"all v1 models"`` and every domain -> :class:`hca.subspace.ExplainedVariance`.
    nulls : dict
        Split-half null distances per domain.
    tau : float
        Pooled 95 % threshold (the PCA chapter's rule).
    boot : hca.subspace.BootstrapDistances
        Distance matrix (``boot.point``) with bootstrap intervals.
    s_inv, s_inv_pair : list
        Invariant set by the rule (pooled ``tau``), and with the pair thresholds.
    membership : Series
        Share of bootstrap distance matrices whose invariant set contains each domain.
    mean_distance : Series
        Mean distance of each domain to the other five.
    leverage : DataFrame
        Benchmark leverage of every domain's principal subspace.
    """

    sizes: pd.Series
    spectra: dict
    nulls: dict
    tau: float
    boot: Any
    s_inv: Sequence[str]
    s_inv_pair: list
    membership: pd.Series
    mean_distance: pd.Series
    leverage: pd.DataFrame

    @property
    def dist(self) -> pd.DataFrame:
        """The distance matrix of the full data."""
        return self.boot.point

    def per_domain(self) -> pd.DataFrame:
        """One row per domain: models, 95 % split-half null quantile, mean distance to the
        others, TruthfulQA and HellaSwag leverage, share of bootstrap invariant sets holding
        it."""
        return pd.DataFrame(
            {
                "models": self.sizes,
                "null 95 %": pd.Series(
                    {d: float(np.quantile(v, 0.95)) for d, v in self.nulls.items()}
                ),
                "mean distance": self.mean_distance,
                "TruthfulQA leverage": self.leverage["TruthfulQA"],
                "HellaSwag leverage": self.leverage["HellaSwag"],
                "in S_inv (bootstrap)": self.membership,
            }
        )

    def summary(self) -> str:
        return (
            f"S_inv (pooled tau = {self.tau:.3f}): {', '.join(self.s_inv)}; largest "
            f"distance {self.dist.to_numpy().max():.3f}; farthest on average: "
            f"{self.mean_distance.idxmax()} ({self.mean_distance.max():.3f})"
        )


def _rule_frame(domain_rule: str) -> pd.DataFrame:
    """The v1 frame of a domain rule (``"authors"`` or ``"book"``)."""
    return v1_frame("authors" if domain_rule == "authors" else "careful")


def _subspaces(
    n_splits: int, n_boot: int, domain_rule: str = "book", bases: tuple[str, ...] = PAPER_V1_BASES
) -> V1Subspaces:
    doms = list(bases)
    frame = _rule_frame(domain_rule)
    X6, dom6 = domain_data(frame, doms, _B1)
    spectra = {"all v1 models": ss.explained_variance(frame[_B1], label="all v1 models")}
    spectra |= {d: ss.explained_variance(X6[dom6 == d], label=d) for d in doms}
    rule = invariant_set_rule(frame, "v1", doms, n_splits=n_splits, benchmarks=_B1)
    nulls, tau = rule.nulls, rule.tau
    pair_tau = ss.pair_thresholds(nulls)
    boot = ss.bootstrap_distance_matrix(X6, dom6, order=doms, n_boot=n_boot, random_state=0)
    lev = ss.benchmark_leverage(
        ss.group_subspaces(X6, dom6, order=doms), columns=[benchmark_label(b) for b in _B1]
    )
    return V1Subspaces(
        sizes=pd.Series(dom6).value_counts().reindex(doms).rename("models"),
        spectra=spectra,
        nulls=nulls,
        tau=tau,
        boot=boot,
        s_inv=rule.members,
        s_inv_pair=ss.invariant_set(boot.point, pair_tau),
        membership=ss.invariant_set_stability(boot, tau)["frequency"],
        mean_distance=(boot.point.sum() / (len(doms) - 1)).rename("mean distance"),
        leverage=lev,
    )


def subspaces(
    n_splits: int = 100,
    n_boot: int = 100,
    domain_rule: str = "book",
    bases: Sequence[str] = PAPER_V1_BASES,
) -> V1Subspaces:
    """Figure 23a-b on the ``bases`` (default: the paper's six) under the domains of
    ``domain_rule`` (``"authors"`` or ``"book"``; computed once per process and build; no
    estimator option enters)."""
    if domain_rule not in _DOMAIN_RULES:
        raise ValueError(f"domain_rule must be one of {list(_DOMAIN_RULES)}, got {domain_rule!r}")
    doms = tuple(str(d) for d in bases)
    return cached("v1_subspaces", _subspaces, int(n_splits), int(n_boot), domain_rule, doms)


def _ica_optima(
    params: tuple,
    seeds: tuple[int, ...],
    domain_rule: str = "book",
    domains: tuple[str, ...] = PAPER_V1_SINV,
) -> pd.DataFrame:
    X5, dom5 = domain_data(_rule_frame(domain_rule), domains, _B1)
    return st.ica_solutions(HCA(**dict(params)), X5, dom5, seeds=seeds)


def ica_optima(
    setup: str | Setup,
    seeds: Sequence[int] = tuple(range(30)),
    domains: Sequence[str] = PAPER_V1_SINV,
) -> pd.DataFrame:
    """FastICA's distinct local optima in every domain of ``domains`` (default: the paper's
    five; :func:`hca.stability.ica_solutions`), computed once per domain rule with the same
    ICA options (the residual option does not enter ICA)."""
    s = get_setup(setup)
    params = (("n_components", N_COMPONENTS), ("n_restarts", s.n_restarts))
    seeds_ = tuple(int(x) for x in seeds)
    doms = tuple(str(d) for d in domains)
    return cached("v1_ica_optima", _ica_optima, params, seeds_, s.domain_rule, doms)


# =========================================================================== results
@dataclass(frozen=True, eq=False)
class V1Results:
    """Our side of the v1 chapter's claims under one setup.

    Attributes
    ----------
    setup : Setup
    settings : Settings
    fit : hca.estimator.HCA
        HCA on the five domains, FastICA seed ``setup.ica_seed`` (Figures 24-26).
    adjustment : hca.estimator.OLSAdjustment
        ``fit.adjust()`` (Figure 25's adjusted SCMs).
    alignment : hca.interpret.Alignment
        Figure 26 (the OLS alignment with its lines).
    record : dict
        :func:`hca.stability.fit_record` of ``fit``.
    subsets : DataFrame
        MIC of every subset of at least three of the six domains (Figure 23c).
    seeds : hca.stability.StabilityResult
        The fit refitted with every seed of ``Settings.seeds``.
    boots : hca.stability.StabilityResult
        The fit refitted on within-domain bootstrap resamples (seed ``setup.ica_seed``).
    v2_alignment : tuple
        Alignment of Section 4's v2 fit under the setup
        (:func:`hca.paper.replication.main_fit`).
    v2_seed_alignments : tuple of tuple
        Alignments of its refits over ``Settings.v2_seeds``.
    n_fits, n_uncertified : int
        HCA searches run for this result and those the sequential search did not certify.
    roles : tuple of frozenset
        The paper's roles of the three factors (:func:`paper_roles`, read once per batch).
    steered : str
        The domains whose FastICA in the five-domain fit was steered by rounding (empty: the
        run is evidence; :func:`hca.paper.replication.rounding_steered`).
    """

    setup: Setup
    settings: Settings
    fit: Any
    adjustment: Any
    alignment: Any
    record: dict
    subsets: pd.DataFrame
    seeds: Any
    boots: Any
    v2_alignment: tuple
    v2_seed_alignments: tuple
    n_fits: int
    n_uncertified: int
    roles: tuple
    steered: str = ""

    @property
    def pca(self) -> V1Subspaces:
        """Figures 23a-b (:func:`subspaces` on the settings' base models, under the setup's
        domain rule)."""
        st_ = self.settings
        return subspaces(st_.n_splits, st_.n_boot, self.setup.domain_rule, st_.bases)

    @property
    def solutions(self) -> pd.DataFrame:
        """FastICA's local optima per domain of the fit (:func:`ica_optima`)."""
        return ica_optima(self.setup, self.settings.solution_seeds, self.settings.domains)

    @property
    def domains(self) -> list:
        """The domains of the fit (sorted, as in ``fit.domains_``)."""
        return list(self.fit.domains_)

    def order_shares(self) -> pd.DataFrame:
        """Per recovered order: share of seed refits and of bootstrap refits, whether it is
        the paper's order and whether a reasoning factor precedes GSM8K's."""
        roles = self.roles
        out = pd.concat(
            {
                "FastICA seeds": _shares(self.seeds.records),
                "bootstrap": _shares(self.boots.records),
            },
            axis=1,
        ).fillna(0.0)
        align = pd.concat([self.seeds.records, self.boots.records]).drop_duplicates("order")
        align = align.set_index("order")["alignment"]
        out["paper's order"] = [_matches(align[o], roles) for o in out.index]
        out["reasoning before GSM8K"] = [precedes(align[o], roles[1], roles[2]) for o in out.index]
        return out.sort_values("FastICA seeds", ascending=False)

    def summary(self) -> str:
        al = self.seeds.records["alignment"]
        roles = self.roles
        share = float(np.mean([_matches(a, roles) for a in al]))
        return (
            f"{self.setup.label}: MIC {self.fit.mic_:.3f}; order "
            f"{order_text(self.adjustment.benchmarks)}; paper's order in {share:.0%} of "
            f"{len(al)} seeds; {self.pca.summary()}"
        )


def _matches(alignment: Sequence[str], roles: Sequence[frozenset]) -> bool:
    return len(alignment) == len(roles) and all(a in r for a, r in zip(alignment, roles))


def _shares(records: pd.DataFrame) -> pd.Series:
    return records["order"].value_counts(normalize=True)


def _fits(
    setup: Setup, seeds: tuple[int, ...], domains: tuple[str, ...], bases: tuple[str, ...]
) -> tuple:
    """The fits on ``domains`` of every seed of ``seeds`` under the seed-free ``setup``, their
    :func:`~hca.paper.replication.rounding_steered` and the per-domain ICA of the table of
    ``bases`` (Figure 23c), all FastICA in one batch; computed once per setup, seeds and
    domains, so that the seed refits of :func:`_sweeps` are the fits of the ensemble's
    batch."""
    frame = v1_frame(setup)
    X5, dom5 = domain_data(frame, domains, _B1)
    X6, dom6 = domain_data(frame, bases, _B1)
    est = estimator(setup, search="sequential")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        icas = st.domain_icas(est, [(X5, dom5), st.reversed_rows(X5, dom5), (X6, dom6)], seeds)
        fits = st.seed_fits(est, X5, dom5, seeds, icas=icas[0])
    return fits, rounding_steered(fits, X5, dom5, again=icas[1]), icas[2]


def _sweeps(setup: Setup, settings: Settings) -> tuple:
    """Seed and bootstrap refits of the fit (keyed by the seed-free setup: every member of an
    ensemble shares them); the seed refits are the fits of :func:`_fits` of the ensemble's
    first ``n_seeds`` seeds."""
    X5, dom5 = domain_data(v1_frame(setup), settings.domains, _B1)
    est = estimator(setup, search="sequential")
    seeds = settings.seeds
    seeds_result = st.seed_stability(
        est,
        X5,
        dom5,
        seeds=seeds,
        patterns=PAPER_PATTERNS,
        n_jobs=settings.n_jobs,
        fits=cached("v1_fits", _fits, setup, seeds, settings.domains, settings.bases)[0],
    )
    boots = st.bootstrap_stability(
        est,
        X5,
        dom5,
        n_boot=settings.n_boot_hca,
        random_state=setup.ica_seed,
        n_jobs=settings.n_jobs,
    )
    return seeds_result, boots


def _runs(setup: Setup, settings: Settings, seeds: tuple[int, ...]) -> tuple[V1Results, ...]:
    """The chapter's results for every FastICA seed of ``seeds`` under the seed-free ``setup``:
    the fits of all seeds in one batch (:func:`_fits`), the seed-free sweeps once."""
    frame = v1_frame(setup)
    doms, bases = settings.domains, settings.bases
    X5, dom5 = domain_data(frame, doms, _B1)
    X6, dom6 = domain_data(frame, bases, _B1)
    est = estimator(setup, search="sequential")
    fits, steered, icas6 = cached(
        "v1_fits", _fits, setup, tuple(int(s) for s in seeds), doms, bases
    )
    sweeps, boots = cached("v1_sweeps", _sweeps, setup, settings)
    v2 = seed_refits(setup, settings.v2_seeds)
    v2_alignments = tuple(tuple(m.adjust().benchmarks) for m in main_fits(setup, seeds))
    subspaces(settings.n_splits, settings.n_boot, setup.domain_rule, bases)  # shared, once
    ica_optima(setup, settings.solution_seeds, doms)
    roles = paper_roles()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        tables = mic_by_subset_many(  # the sweeps of all seeds in one batch
            est,
            [(X6, dom6)],
            seeds,
            candidates=list(bases),
            min_size=3,
            n_jobs=settings.n_jobs,
            icas=[icas6],
        )[0]
    out = []
    for seed, fit, v2_alignment, why, subsets in zip(seeds, fits, v2_alignments, steered, tables):
        adj = fit.adjust()
        certified = [
            bool(fit.search_result_.certified),
            *subsets["certified"],
            *sweeps.records["certified"],
            *boots.records["certified"],
        ]
        out.append(
            V1Results(
                setup=setup.with_seed(seed),
                settings=settings,
                fit=fit,
                adjustment=adj,
                alignment=it.align(fit, X5, adj),
                record=st.fit_record(fit, patterns=PAPER_PATTERNS),
                subsets=subsets,
                seeds=sweeps,
                boots=boots,
                v2_alignment=v2_alignment,
                v2_seed_alignments=tuple(tuple(a) for a in v2.records["alignment"]),
                n_fits=len(certified),
                n_uncertified=int(len(certified) - sum(certified)),
                roles=roles,
                steered=why,
            )
        )
    return tuple(out)


def _runs_checked(
    setups: tuple[Setup, ...], settings: Settings, seeds: tuple[int, ...]
) -> tuple[tuple[V1Results, ...], ...]:
    """:func:`_runs` of every setup, after :func:`check_domains` (so that a domain with too
    few models under any setup stops the computation before it starts)."""
    check_domains(settings)
    return each_setup(_runs)(setups, settings, seeds)


#: The chapter's shape (:class:`hca.paper.shape.ChapterSpec`), declared by its ensemble's runs
#: (:func:`_runs`; the run at a setup's own seed is the ensemble's): the claims read its
#: fit on the settings' domains (whose rounding-sensitive domains it names), and a run is
#: typical by that fit's MIC.
CHAPTER: ChapterSpec[Settings, V1Results] = ChapterSpec.from_runs(
    key="v1",
    settings=Settings,
    runs=_runs_checked,
    evidence=lambda r: RunEvidence.of(r.fit, r.steered),
    typical_key=lambda r: float(r.fit.mic_),
)

#: The chapter's results under a setup, once per process (:meth:`~hca.paper.shape.ChapterSpec.run`).
run = CHAPTER.run


# =========================================================================== claims
def first_runs(k: int, n: int) -> str:
    """``"5 of the first 20 runs"``: a count among the seed refits of a run
    (:attr:`V1Results.seeds`), which are the ensemble's first ``n`` runs (named apart from
    the ensemble a verdict is read from, which may hold more)."""
    k_of_n(k, n)  # 0 <= k <= n, whole numbers
    return f"{whole(k):,} of the first {count(n, 'run')}"


def _not_applicable(cid: str, ours: str, why: str) -> dict[str, Outcome]:
    return {cid: Outcome(ours, "not applicable", f"not applicable: {why}")}


_OTHER_BASES = "the settings compare other base models than the paper's six"


def _on_domains(res: V1Results, reason: str) -> str:
    """``reason``, saying so when the fit's domains are not the paper's five."""
    if res.settings.paper_domains:
        return reason
    return f"{reason}; HCA on the settings' domains ({', '.join(res.domains)}), not the paper's"


def boot_words(pca: V1Subspaces, domain: str, inside: bool = True) -> str:
    """``"93 of 100 bootstrap resamples"``: the resamples whose invariant set holds
    ``domain`` (or, with ``inside`` False, leaves it out)."""
    share = float(pca.membership[domain])
    return share_words(share if inside else 1.0 - share, pca.boot.n_boot, "bootstrap resamples")


def _outside_text(pca: V1Subspaces) -> str:
    rank = int(pca.mean_distance.rank(ascending=False, method="min")[_OUTSIDE])
    return (
        f"{_OUTSIDE} ranks {rank} of {len(pca.mean_distance)} by mean distance to the "
        f"others ({pca.mean_distance[_OUTSIDE]:.3f}), and the invariant sets of "
        f"{boot_words(pca, _OUTSIDE, inside=False)} exclude it"
    )


@claim("H.4-sinv-v1", chapter="v1", figure="fig-v1-distance")
def _sinv(res: V1Results, rows: pd.DataFrame) -> dict[str, Outcome]:
    pca, paper = res.pca, paper_list(rows, "H.4-sinv-v1")
    s_inv = list(pca.s_inv)
    head = (
        f"{set_text(s_inv, paper)} (pooled τ = {pca.tau:.3f}, largest distance "
        f"{pca.dist.to_numpy().max():.3f})"
    )
    if not res.settings.paper_bases:
        return _not_applicable("H.4-sinv-v1", head, _OTHER_BASES)
    outside = _OUTSIDE not in s_inv
    others = (set(s_inv) - {_OUTSIDE}) ^ set(paper)
    pair = set_text(pca.s_inv_pair, paper)
    ours = f"{head}. {_outside_text(pca)}. With pair thresholds: {pair}"
    v = grade(outside and not others, outside and len(others) == 1)
    if not outside:
        reason = f"{_OUTSIDE} is inside our invariant set" + (
            " (all six lie within τ)" if len(s_inv) == len(PAPER_V1_BASES) else ""
        )
    else:
        reason = (
            "the paper's five, Llama-2-7B apart"
            if not others
            else f"Llama-2-7B apart; {', '.join(sorted(others))} differ"
        )
    return {"H.4-sinv-v1": Outcome(ours, v, reason, value=float(len(s_inv)))}


@claim("H.4-mixtral-in", chapter="v1", figure="fig-v1-distance")
def _mixtral(res: V1Results, rows: pd.DataFrame) -> dict[str, Outcome]:
    pca = res.pca
    (moe,) = paper_list(rows, "H.4-mixtral-in")
    if not res.settings.paper_bases:
        where = "in" if moe in pca.s_inv else "outside"
        return _not_applicable("H.4-mixtral-in", f"{moe} {where} our invariant set", _OTHER_BASES)
    inside, l7 = moe in pca.s_inv, _OUTSIDE in pca.s_inv
    ours = (
        f"{moe} {'in' if inside else 'outside'} our invariant set (and in those of "
        f"{boot_words(pca, moe)}); {_OUTSIDE} {'in it too' if l7 else 'outside'}"
    )
    reason = (
        "Mixtral-8x7B in, Llama-2-7B out"
        if inside and not l7
        else "the set also holds Llama-2-7B: it does not discriminate"
        if inside
        else "Mixtral-8x7B lies outside"
    )
    v = grade(inside and not l7, inside)
    return {"H.4-mixtral-in": Outcome(ours, v, reason, value=float(inside))}


@claim("H.4-mic-small", chapter="v1", figure="fig-v1-mic-subsets", ensemble=True)
def _mic(res: V1Results, rows: pd.DataFrame) -> dict[str, Outcome]:
    mic = float(res.fit.mic_)
    # the range over seeds is the ensemble's (one seed set beside its median)
    ours = f"MIC {mic:.3f} (FastICA seed {res.setup.ica_seed})"
    reason = "below 0.10" if mic < 0.10 else ("below 0.20" if mic < 0.20 else "0.20 or more")
    v = grade(mic < 0.10, mic < 0.20)
    return {"H.4-mic-small": Outcome(ours, v, _on_domains(res, reason), value=mic)}


def _seed_share(res: V1Results, test) -> tuple[int, int]:
    al = res.seeds.records["alignment"]
    return int(sum(bool(test(tuple(a))) for a in al)), len(al)


@claim("H.4-order", chapter="v1", figure="fig-v1-alignment", ensemble=True)
def _order(res: V1Results, rows: pd.DataFrame) -> dict[str, Outcome]:
    roles = parse_order(rows.loc["H.4-order", "value"])
    al = tuple(res.adjustment.benchmarks)
    ok0 = _matches(al, roles)
    k, n = _seed_share(res, lambda a: _matches(a, roles))
    half = k >= 0.5 * n
    reasoning = precedes(al, roles[1], roles[2])
    v = grade(ok0 and half, ok0 != half or reasoning)
    # no value: the share of the seed refits is the same in every run of the ensemble
    ours = f"{order_text(al)}; the paper's order in {first_runs(k, n)}"
    reason = (
        "the paper's order"
        if ok0
        else "a reasoning factor precedes GSM8K's, but not the paper's order"
        if reasoning
        else "a different order"
    ) + (" at seed 0" + ("" if half else f", and in fewer than half of the first {n} runs"))
    return {"H.4-order": Outcome(ours, v, _on_domains(res, reason))}


@claim("H.4-aligned-benchmarks", chapter="v1", figure="fig-v1-alignment", ensemble=True)
def _aligned(res: V1Results, rows: pd.DataFrame) -> dict[str, Outcome]:
    roles = [frozenset(r.split("|")) for r in paper_list(rows, "H.4-aligned-benchmarks")]
    al = tuple(res.adjustment.benchmarks)
    covered = [any(b in r for b in al) for r in roles]
    n_roles = sum(covered)
    r2 = ", ".join(
        f"{res.alignment.r2_table.loc[z, b]:.2f}" for z, b in zip(res.alignment.factor_names, al)
    )
    ours = f"{order_text(al)} (in-sample R² {r2})"
    missing = [order_text(sorted(r)).replace(" → ", "/") for r, c in zip(roles, covered) if not c]
    reason = f"{k_of_n(n_roles, len(roles))} roles have a factor" + (
        f"; none for {', '.join(missing)}" if missing else ""
    )
    v = grade(n_roles == 3, n_roles == 2)
    return {
        "H.4-aligned-benchmarks": Outcome(ours, v, _on_domains(res, reason), value=float(n_roles))
    }


@claim("H.4-v1-v2-consistent", chapter="v1", figure="fig-v1-alignment", ensemble=True)
def _consistent(res: V1Results, rows: pd.DataFrame) -> dict[str, Outcome]:
    v2_roles, v1_roles = (parse_order(p) for p in paper_list(rows, "H.4-v1-v2-consistent"))
    on_v2 = precedes(res.v2_alignment, *v2_roles)
    on_v1 = precedes(res.adjustment.benchmarks, *v1_roles)
    k2, n2 = (
        sum(precedes(a, *v2_roles) for a in res.v2_seed_alignments),
        len(res.v2_seed_alignments),
    )
    k1, n1 = _seed_share(res, lambda a: precedes(a, *v1_roles))
    # each run set in a sentence of its own
    ours = (
        f"v2 seed 0: {order_text(res.v2_alignment)}; v1 seed 0: "
        f"{order_text(res.adjustment.benchmarks)}. General before MATH in {k_of_n(k2, n2)} v2 "
        f"seed refits. Reasoning before GSM8K in {first_runs(k1, n1)} on v1"
    )
    held = [name for name, ok in (("v2", on_v2), ("v1", on_v1)) if ok]
    reason = (
        f"holds at seed 0 on {' and '.join(held)}"
        if held
        else "holds at seed 0 on neither leaderboard"
    )
    if len(held) == 1:
        reason += f", not on {'v1' if held == ['v2'] else 'v2'} (a role missing or after)"
    v = grade(len(held) == 2, len(held) == 1)
    return {
        "H.4-v1-v2-consistent": Outcome(ours, v, _on_domains(res, reason), value=float(len(held)))
    }


def _edge_values(
    res: V1Results, domain: str, parent: frozenset, child: frozenset, what: str
) -> list[float | None]:
    """``what`` (``weight``/``scale``) of the edge in ``domain`` for every seed refit."""
    out = []
    for rec in _edge_records(res, (f"w[{domain}]", f"scale[{domain}]")):
        col = _edge_column(rec, [domain], parent, child, what)
        out.append(None if col is None else col[domain])
    return out


def _edge_records(res: V1Results, prefixes: tuple[str, ...]) -> list[dict]:
    """The records of the seed refits with their ``alignment`` and the columns starting with
    ``prefixes`` only (what the edge claims read; the records of every column take much
    longer to build)."""
    records = res.seeds.records
    columns = ["alignment", *(c for c in records.columns if str(c).startswith(prefixes))]
    return records[columns].to_dict("records")


def _edge_column(
    record: Mapping, domains: Sequence[str], parent: frozenset, child: frozenset, what: str
) -> dict[str, float] | None:
    """Column ``what`` (``weight``/``scale``) of :func:`edge_table` as domain -> value (None
    without the edge), read off the record without building the frame."""
    edge = _edge(tuple(record["alignment"]), parent, child)
    if edge is None:
        return None
    i, j = edge[0] + 1, edge[1] + 1
    if what == "weight":
        return {d: float(record[f"w[{d}] z{i}->z{j}"]) for d in domains}
    return {d: float(record[f"scale[{d}] eps{j}"]) for d in domains}


def _largest(values: Mapping[str, float]) -> str:
    """The domain with the largest value, the first on ties (``Series.idxmax``)."""
    if any(np.isnan(v) for v in values.values()):
        return str(pd.Series(values).idxmax())
    return max(values, key=values.__getitem__)


def _selected_median(res: V1Results, values: list, roles) -> tuple[float | None, int]:
    keep = [
        v
        for v, a in zip(values, res.seeds.records["alignment"])
        if v is not None and _matches(a, roles)
    ]
    return (float(np.median(keep)) if keep else None), len(keep)


def _selected(k: int, n: int) -> str:
    """``"the 5 of the first 20 runs selected for the paper's order"``."""
    return f"the {first_runs(k, n)} selected for the paper's order"


def _edge_outcome(res: V1Results, paper: float, domain: str, what: str) -> Outcome:
    roles = res.roles
    if domain not in res.domains:
        return Outcome(
            f"{domain} is not among the settings' domains",
            "not applicable",
            f"not applicable: the settings fit HCA without {domain}",
        )
    tab0 = edge_table(res.record, res.domains, roles[0], roles[1])
    values = _edge_values(res, domain, roles[0], roles[1], what)
    n = len(values)
    hits = sum(v is not None and ratio_band(v, paper) != "outside" for v in values)
    half = hits >= 0.5 * n
    s_text = f"in the outer band in {first_runs(hits, n)}"
    if tab0 is not None:
        v0 = float(tab0.loc[domain, what])
        band = ratio_band(v0, paper)
        verdict = grade(band == "inner" and half, band != "outside" or half)
        ours = (
            f"{v0:.2f} (seed-0 fit, our z{tab0.attrs['parent']} → z{tab0.attrs['child']}); {s_text}"
        )
        reason = f"seed 0: ours/paper = {v0 / paper:.2f} ({band} band); {s_text}"
        return Outcome(ours, verdict, _on_domains(res, reason), value=v0)
    # no edge in this run: no value of its own (a median over other runs is not this run's)
    med, k = _selected_median(res, values, roles)
    head = f"no seed-0 edge (seed-0 order {order_text(res.adjustment.benchmarks)}). " + (
        f"Median {med:.2f} over {_selected(k, n)}"
        if k and med is not None
        else f"None of the first {n} runs gives the paper's order"
    )
    reason = (
        f"median over {_selected(k, n)}, not the seed-0 fit (ours/paper = {med / paper:.2f}); "
        f"{s_text}"
        if k and med is not None
        else f"no seed-0 edge; {s_text}"
    )
    return Outcome(f"{head}; {s_text}", grade(False, half), _on_domains(res, reason))


@claim(
    "F25-llama13-weight", "F25-llama13-scale", chapter="v1", figure="fig-v1-graphs", ensemble=True
)
def _fig25(res: V1Results, rows: pd.DataFrame) -> dict[str, Outcome]:
    domain = "Llama-2-13B"
    return {
        cid: _edge_outcome(res, float(rows.loc[cid, "value"]), domain, what)
        for cid, what in (("F25-llama13-weight", "weight"), ("F25-llama13-scale", "scale"))
    }


@claim("H.4-llama3-z23", chapter="v1", figure="fig-v1-graphs", ensemble=True)
def _z23(res: V1Results, rows: pd.DataFrame) -> dict[str, Outcome]:
    (who,) = paper_list(rows, "H.4-llama3-z23")
    if who not in res.domains:
        return _not_applicable(
            "H.4-llama3-z23",
            f"{who} is not among the settings' domains",
            f"the settings fit HCA without {who}",
        )
    roles = res.roles
    records = _edge_records(res, ("w[", "scale["))
    weights = [_edge_column(r, res.domains, roles[1], roles[2], "weight") for r in records]
    hits, n = sum(w is not None and _largest(w) == who for w in weights), len(weights)
    half = hits >= 0.5 * n
    s_text = f"{who} largest in {first_runs(hits, n)}"
    tab0 = edge_table(res.record, res.domains, roles[1], roles[2])
    if tab0 is None:
        keep = [
            edge_table(r, res.domains, roles[1], roles[2])["weight"]
            for r, w, a in zip(records, weights, res.seeds.records["alignment"])
            if w is not None and _matches(a, roles)
        ]
        med = pd.concat(keep, axis=1).median(axis=1).sort_values(ascending=False) if keep else None
        ours = (
            "no seed-0 edge; "
            + (
                ", ".join(f"{d} {x:.2f}" for d, x in med.items())
                + f" = median over {_selected(len(keep), n)}; "
                if med is not None
                else ""
            )
            + s_text
        )
        reason = f"no seed-0 edge; {s_text}"
        return {"H.4-llama3-z23": Outcome(ours, grade(False, half), _on_domains(res, reason))}
    w = tab0["weight"].sort_values(ascending=False)
    top, rest = float(w[who]), float(w.drop(who).max())
    twice = top > 0 and (rest <= 0 or top >= 2 * rest)
    largest = w.index[0] == who
    ours = (
        ", ".join(f"{d} {x:.2f}" for d, x in w.items())
        + f" (seed-0 fit, our z{tab0.attrs['parent']} → z{tab0.attrs['child']}); {s_text}"
    )
    reason = (
        f"largest at seed 0: {w.index[0]}"
        + (
            f", {top / rest:.1f}× the next (the criterion asks for 2×)"
            if largest and rest > 0 and not twice
            else f", {top / rest:.1f}× the next"
            if largest and rest > 0
            else ""
        )
        + f"; {s_text}"
    )
    v = grade(twice and half, largest or half)
    return {"H.4-llama3-z23": Outcome(ours, v, _on_domains(res, reason), value=top)}


# =========================================================================== the page
#: How the answer and the page name a setup.
SETUP_WORDS = {"authors": "the authors' setup", "careful": "the careful setup"}
#: A relative gap of FastICA's objective below which two optima are "almost equal".
NEAR_EQUAL_OBJECTIVE = 0.01


def subsets_within(res: V1Results) -> pd.DataFrame:
    """The rows of Figure 23c's sweep (:attr:`V1Results.subsets`) whose subset lies within the
    fit's domains (the paper's figure: the 16 subsets of its five)."""
    doms = set(res.settings.domains)
    t = res.subsets
    return t[[set(x) <= doms for x in t["subset"]]]


def mic_summary(res: V1Results) -> dict[str, float]:
    """The MICs of Figure 23c in one run: the fit's domains as a subset of the sweep, its
    rank among the subsets of those domains (1 = smallest), how many such subsets there are,
    the smallest of their MICs, and the MIC of all the base models of the sweep."""
    t, within = res.subsets, subsets_within(res)
    full = float(within.loc[within["size"] == len(res.settings.domains), "mic"].iloc[0])
    return {
        "MIC of the domains": full,
        "rank among the subsets": int((within["mic"] < full).sum()) + 1,
        "subsets": len(within),
        "smallest MIC": float(within["mic"].min()),
        "MIC of all bases": float(t.loc[t["size"] == t["size"].max(), "mic"].iloc[0]),
    }


def order_counts(runs: Sequence[V1Results]) -> dict[str, int]:
    """Over the runs of an ensemble: how many give the paper's order (:func:`paper_roles`),
    how many put a reasoning factor before GSM8K's, and how many runs there are."""
    if not runs:
        raise ValueError("order_counts: no runs")
    roles = runs[0].roles
    orders = [tuple(r.adjustment.benchmarks) for r in runs]
    return {
        "paper's order": sum(_matches(a, roles) for a in orders),
        "reasoning first": sum(precedes(a, roles[1], roles[2]) for a in orders),
        "runs": len(orders),
    }


def edge_values(
    runs: Sequence[V1Results], parent: frozenset, child: frozenset, what: str = "weight"
) -> pd.DataFrame:
    """The edge between the factors aligned with ``parent`` and ``child`` in every run of an
    ensemble that has it (:func:`edge_table`): one row per such run (indexed by its FastICA
    seed), one column per domain, ``what`` (``"weight"`` or ``"scale"``); no row for a run
    without the edge."""
    if what not in ("weight", "scale"):
        raise ValueError(f"edge_values: what must be 'weight' or 'scale', got {what!r}")
    rows = {}
    for r in runs:
        tab = edge_table(r.record, r.domains, parent, child)
        if tab is not None:
            rows[r.setup.ica_seed] = tab[what]
    domains = list(runs[0].domains) if runs else []
    out = pd.DataFrame.from_dict(rows, orient="index").reindex(columns=domains)
    return out.rename_axis("FastICA seed")


def two_optima(res: V1Results, share: float = 0.1) -> pd.DataFrame:
    """The domains where FastICA lands in a second local optimum in at least ``share`` of the
    seeds of :attr:`V1Results.solutions`: per domain, the share of seeds of its two largest
    optima, their objectives (negentropy) and the relative gap between them."""
    sol = res.solutions
    rows = {}
    for d, g in sol.groupby("domain", sort=False):
        g = g.set_index("solution")
        if 2 in g.index and float(g.loc[2, "share"]) >= share:
            n1, n2 = float(g.loc[1, "negentropy"]), float(g.loc[2, "negentropy"])
            rows[d] = {
                "first optimum": float(g.loc[1, "share"]),
                "second optimum": float(g.loc[2, "share"]),
                "relative gap": abs(n1 - n2) / max(abs(n1), abs(n2)),
                "first seed of the second": int(g.loc[2, "first_seed"]),
            }
    cols = ["first optimum", "second optimum", "relative gap", "first seed of the second"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=cols).rename_axis("domain")


#: Short names of the paper's six base models in Figure 23c's labels (others: in full).
SHORT_NAMES = {
    "Mistral-7B": "Mis7",
    "Llama-2-13B": "L2-13",
    "Llama-3-8B": "L3-8",
    "Llama-2-7B": "L2-7",
    "Llama-2-70B": "L2-70",
    "Mixtral-8x7B": "Mix",
}


def domain_sizes(bases: Sequence[str] = PAPER_V1_BASES) -> pd.DataFrame:
    """Models per base model of ``bases`` under both domain rules (rows: the setups' labels,
    columns: ``bases``; 0 where a rule names no such domain), and every rule's rows of the v1
    file (column ``"v1 rows"``): what the two setups' domains are, before any analysis."""
    out = {}
    for name in SETUP_NAMES:
        frame = v1_frame(name)
        sizes = frame["base_model"].value_counts().reindex(list(bases), fill_value=0)
        out[get_setup(name).label] = {**sizes.astype(int).to_dict(), "v1 rows": len(frame)}
    return pd.DataFrame(out).T.rename_axis("setup")


def _dedup_rule(bases: tuple[str, ...], n_splits: int) -> Any:
    return invariant_set_rule(
        v1_frame_authors(dedupe=True), "v1", list(bases), n_splits=n_splits, benchmarks=_B1
    )


def authors_rule_without_duplicates(settings: Settings) -> Any:
    """The invariant-set rule (:func:`hca.paper.pca.invariant_set_rule`) on the authors'
    domains of the settings' base models without their duplicate rows (a model listed at two
    precisions): whether the duplicates make the authors' set (computed once per process)."""
    bases = tuple(settings.bases)
    return cached("v1_authors_dedup", _dedup_rule, bases, int(settings.n_splits))


def mic_table(runs: Sequence[V1Results]) -> pd.DataFrame:
    """:func:`mic_summary` of every run of an ensemble, one row per run (indexed by its
    FastICA seed)."""
    return pd.DataFrame({r.setup.ica_seed: mic_summary(r) for r in runs}).T.rename_axis(
        "FastICA seed"
    )


def v2_counts(runs: Sequence[V1Results], rows: pd.DataFrame | None = None) -> dict[str, int]:
    """Over the runs of an ensemble, how many of Section 4's v2 fits at the same seeds put a
    general factor before MATH's (the roles of ``H.4-v1-v2-consistent``), and how many runs
    there are."""
    rows = load_paper_values() if rows is None else rows
    v2_roles = parse_order(paper_list(rows, "H.4-v1-v2-consistent")[0])
    return {
        "general first": sum(precedes(r.v2_alignment, *v2_roles) for r in runs),
        "runs": len(runs),
    }


def _set_words(s_inv: Sequence[str], settings: Settings) -> str:
    """The invariant set in words: "the paper's five", "all 6 base models" or its members."""
    if settings.paper_bases and set(s_inv) == set(PAPER_V1_SINV):
        return "the paper's five"
    if set(s_inv) == set(settings.bases):
        return f"all {count(len(s_inv), 'base model')}"
    return f"only {join_words(s_inv)}"


def per_setup(page: Any, words: Mapping[str, str]) -> str:
    """``"X under the authors' setup and Y under the careful setup"``, or ``"X under both
    setups"`` when they read the same."""
    names = list(page.setups)
    if len(names) > 1 and len({words[s] for s in names}) == 1:
        return f"{words[names[0]]} under both setups"
    return join_words(f"{words[s]} under {SETUP_WORDS[s]}" for s in names)


def _sinv_cause(page: Any) -> str:
    """Why the two setups' invariant sets differ (empty when they do not, or with one
    setup): the pooled threshold, and the domains whose noisy nulls raise it."""
    if len(page.setups) < 2:
        return ""
    pcas = {s: page.results[s].pca for s in page.setups}
    if len({frozenset(p.s_inv) for p in pcas.values()}) == 1:
        return ""
    hi, lo = sorted(page.setups, key=lambda s: pcas[s].tau, reverse=True)[:2]
    p = pcas[hi]
    q95 = pd.Series({d: float(np.quantile(v, 0.95)) for d, v in p.nulls.items()})
    noisy = list(q95.sort_values(ascending=False).index[:2])
    small = set(p.sizes.sort_values().index[:2]) == set(noisy)
    ratio = p.dist.to_numpy().max() / pcas[lo].dist.to_numpy().max()
    lead = (
        "The threshold, not the distances, makes the difference"
        if 0.8 <= ratio <= 1.25
        else "The thresholds differ, and so do the distances"
    )
    return (
        f"{lead}: the pooled split-half threshold is {pcas[hi].tau:.3f} under {SETUP_WORDS[hi]} "
        f"against {pcas[lo].tau:.3f} under {SETUP_WORDS[lo]}, raised by the noisy subspaces of "
        f"its {'small ' if small else ''}{join_words(noisy)} domains "
        "({ref}`why <v1-sinv>`)."
    )


def _order_cause(page: Any, counts: Mapping[str, Mapping[str, int]]) -> str:
    """Why the recovered order moves between runs (empty when every run gives the paper's
    order): the domains where FastICA has two local optima, and how close their objectives
    are."""
    if all(c["paper's order"] == c["runs"] for c in counts.values()):
        return ""
    if all(len({tuple(r.adjustment.benchmarks) for r in page.ensembles[s]}) == 1 for s in counts):
        return ""  # every setup's runs agree on one order: nothing moves between runs
    tables = [two_optima(page.results[s]) for s in page.setups]
    doms = list(dict.fromkeys(d for t in tables for d in t.index))
    if not doms:
        return (
            "The order moves between runs although FastICA finds one main optimum in every "
            "domain ({ref}`the runs <v1-stability>`)."
        )
    gap = max(float(t["relative gap"].max()) for t in tables if len(t))
    how = (
        "of almost equal objective"
        if gap < NEAR_EQUAL_OBJECTIVE
        else f"whose objectives lie within {100 * gap:.1f} % of each other"
    )
    where = f"the {join_words(doms)} domain{'s' if len(doms) > 1 else ''}"
    return (
        f"FastICA has two local optima {how} in {where}, and which one a run finds decides "
        "where truthfulness sits in the order ({ref}`the runs <v1-stability>`)."
    )


def _link_words(counts: Mapping[str, Mapping[str, int]]) -> str:
    """How stable the reasoning -> mathematics link is over the runs, in words chosen from
    its lowest share."""
    shares = [c["reasoning first"] / c["runs"] for c in counts.values()]
    if min(shares) >= 0.9:
        return "The link from reasoning to mathematics is stable"
    if min(shares) >= 0.5:
        return "The link from reasoning to mathematics holds in most runs"
    if max(shares) < 0.5:
        return "Even the link from reasoning to mathematics is rare"
    return "The link from reasoning to mathematics depends on the setup"


def answer(page: Any) -> str:
    """The chapter's opening paragraph (MyST), written from its page
    (:func:`hca.paper.scorecard.chapter_page`): what Appendix H.4 claims, what held under
    each setup (the invariant set; the order over the ensemble's runs), and the cause of
    each difference, with links to the sections that show it."""
    st: Settings = page.settings
    out = [
        "Appendix H.4 claims that on Leaderboard v1 five of the six most used base models share "
        "one principal subspace (all but Llama-2-7B), and that HCA on these five reads a "
        "hierarchy from truthfulness through general reasoning to mathematics."
    ]
    sets = {s: _set_words(page.results[s].pca.s_inv, st) for s in page.setups}
    among = "" if st.paper_bases else f" among the settings' {count(len(st.bases), 'base model')}"
    out.append(
        f"The rule for that set stated in {{doc}}`chapter 2 <02_latent_pca>` returns{among} "
        f"{per_setup(page, sets)}."
    )
    cause = _sinv_cause(page)
    if cause:
        out.append(cause)
    counts = {s: order_counts(page.ensembles[s]) for s in page.setups}
    fit = (
        "the paper's five"
        if st.paper_domains
        else f"the settings' {count(len(st.domains), 'domain')}"
    )
    seeds = seed_list([r.setup.ica_seed for r in page.ensembles[page.setups[0]]])
    n = counts[page.setups[0]]["runs"]
    found = {}
    for s in page.setups:
        k, m = counts[s]["paper's order"], counts[s]["runs"]
        found[s] = ("only " if 0 < k < m / 2 else "") + k_of_n(k, m)
    out.append(
        f"Over {count(n, 'run')} (HCA on {fit} with FastICA {seeds}), the paper's order comes "
        f"back in {per_setup(page, found)}."
    )
    first = {
        s: k_of_n(counts[s]["reasoning first"], counts[s]["runs"], "runs" if i == 0 else "")
        for i, s in enumerate(page.setups)
    }
    out.append(
        f"{_link_words(counts)}: a reasoning factor precedes GSM8K's in {per_setup(page, first)}."
    )
    cause = _order_cause(page, counts)
    if cause:
        out.append(cause)
    return " ".join(out)
