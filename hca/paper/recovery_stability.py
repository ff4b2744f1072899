"""How firm the recovery chapter's headline is: refits, and the levers that move it.

The recovery chapter (:mod:`hca.paper.recovery`) reads its headline claims off single fits at
FastICA seed 0: which domain subsets of S_inv fit one SCM best (Figure 18, ``F18-four-smallest``,
``S4-best-four``) and the causal order of the four-domain fit (``S4-order``). This module
measures them and explains the gap to the paper:

* :func:`read_sweep` reads one Figure 18 sweep (:func:`hca.estimator.mic_by_subset` with the
  paper's four domains in ``align``) as the three claims read it; :func:`four_smallest` and
  :func:`subset_rank` are the two readings it uses. :func:`sweeps` runs the sweep of several
  data sets under several FastICA seeds as one batch (the Figure 18 sweeps of an ensemble's
  runs, the levers of :func:`domain_rule_evidence`).
* :func:`headline_stability` repeats that sweep on within-domain bootstrap resamples of the
  models crossed with FastICA seeds (one sweep per fit serves all three claims; the
  four-domain subset's fit gives the order) and returns a :class:`HeadlineStability`: the
  share of fits in which each claim holds.
* :func:`domain_rule_evidence` (setup-independent) compares this book's attribution of models
  to base models with the authors' rule (:func:`hca.attribution.v2_frame_authors`): domain
  sizes beside the counts the authors' notebook printed, where the authors' extra models come
  from, and how the MIC of the four domains and their rank move with the rule, the table,
  the residuals and FastICA restarts (a sensitivity check, not a setup).

Every sweep clones the setup's :class:`~hca.estimator.HCA` with ``search="sequential"``
(certified sequential search returns the exhaustive optimum; uncertified searches are
counted); the sweeps of all resamples and seeds run as one batch
(:func:`hca.estimator.mic_by_subset_many`); resamples and seeds are fixed before the fits, so
the results do not depend on ``n_jobs``.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from hca.data import authors_code_values
from hca.data.registry import V2_BENCHMARKS
from hca.estimator.ica import DomainICA
from hca.estimator.model import HCA, mic_by_subset_many
from hca.estimator.search import UncertifiedSearchWarning
from hca.paper.claims import Stability
from hca.paper.constants import PAPER_ALIGNMENT, PAPER_PATTERNS, PAPER_V2_FOUR, PAPER_V2_SINV
from hca.paper.replication import domain_data, estimator, main_data, main_fit, v2_authors, v2_frame
from hca.paper.setups import Setup
from hca.stability import bootstrap_samples, domain_icas, matches_alignment, ranked_orders

__all__ = [
    "EXCLUDED",
    "SWEEP_MIN_SIZE",
    "HEADLINE_CLAIMS",
    "short_subset",
    "four_smallest",
    "subset_rank",
    "sweeps",
    "read_sweep",
    "HeadlineStability",
    "headline_stability",
    "DomainRuleEvidence",
    "domain_rule_evidence",
    "authors_printed_sizes",
    "authors_printed_mics",
]

#: The domain the paper's Figure 18 claim is about (the four best subsets exclude it).
EXCLUDED = "Qwen2-7B"
#: Smallest subset of Figure 18 under both setups. The authors' public notebook printed only
#: the six subsets of at least four domains, but of those only one excludes Qwen2-7B, so the
#: paper's Figure 18 ("all possible choices", four best subsets without Qwen2-7B) must have
#: swept the subsets of three as well, as the criterion of F18-four-smallest says.
SWEEP_MIN_SIZE = 3

_SHORT = {
    "Llama-3-8B": "L3-8B",
    "Llama-3.1-8B": "L3.1-8B",
    "Qwen2-7B": "Q2-7B",
    "Qwen2.5-7B": "Q2.5-7B",
    "Qwen2.5-14B": "Q2.5-14B",
}


def short_subset(subset: Sequence[str]) -> str:
    """``"L3-8B, L3.1-8B, Q2.5-7B"``: short names, domains in the order of S_inv."""
    return ", ".join(_SHORT.get(d, d) for d in sorted(subset, key=_sinv_position))


def _sinv_position(domain: str) -> int:
    return PAPER_V2_SINV.index(domain) if domain in PAPER_V2_SINV else len(PAPER_V2_SINV)


# =========================================================================== one sweep
def four_smallest(table: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The four subsets with the smallest MIC and how many of them exclude :data:`EXCLUDED`."""
    four = table.sort_values("mic", kind="stable").head(4)
    return four, int(sum(EXCLUDED not in s for s in four["subset"]))


def subset_rank(
    table: pd.DataFrame, subset: Sequence[str], size: int | None = None
) -> tuple[int, int, float]:
    """Rank (1 = smallest MIC), number of candidates and MIC of ``subset`` in a
    :func:`~hca.estimator.mic_by_subset` table (restricted to subsets of ``size``).

    Raises
    ------
    ValueError
        If ``subset`` is not in the table.
    """
    t = table if size is None else table[table["size"] == size]
    hit = t[t["subset"].map(frozenset) == frozenset(subset)]
    if hit.empty:
        raise ValueError(f"subset_rank: subset {tuple(subset)} is not in the table")
    mic = float(hit["mic"].iloc[0])
    return int((t["mic"] < mic).sum()) + 1, len(t), mic


def sweeps(
    est: Any,
    datasets: Sequence[tuple[Any, Any]],
    seeds: Sequence[int],
    icas: Sequence[Sequence[Mapping[Hashable, DomainICA]]] | None = None,
    n_jobs: int | None = None,
) -> list[list[pd.DataFrame]]:
    """Figure 18's sweep (every subset of S_inv with at least :data:`SWEEP_MIN_SIZE` domains,
    the paper's four domains' alignment included) of every data set of ``datasets`` under
    every FastICA seed of ``seeds`` as one batch (:func:`hca.estimator.mic_by_subset_many`;
    ``icas`` and ``n_jobs`` as there): ``out[g][i]`` is data set ``g`` under ``seeds[i]``.
    FastICA and search warnings are silenced (convergence and certification are in the
    tables)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UncertifiedSearchWarning)
        return mic_by_subset_many(
            est,
            datasets,
            seeds,
            list(PAPER_V2_SINV),
            SWEEP_MIN_SIZE,
            align=[PAPER_V2_FOUR],
            n_jobs=n_jobs,
            icas=icas,
        )


def read_sweep(table: pd.DataFrame) -> dict:
    """What the three headline claims read off one sweep.

    Returns
    -------
    dict
        ``without`` (how many of the four smallest MICs exclude Qwen2-7B), ``four_rank``
        (rank of the paper's four among the subsets of four), ``four_mic``, ``alignment``
        (of the four-domain fit), the claims ``F18-four-smallest``, ``S4-best-four`` and
        ``S4-order`` (bool) and ``uncertified`` (searches not certified optimal).
    """
    # four_smallest and subset_rank(size=4) on arrays (the headline reads hundreds of sweeps)
    subsets = [frozenset(s) for s in table["subset"]]
    mics = table["mic"].to_numpy(dtype=float)
    without = sum(EXCLUDED not in subsets[i] for i in np.argsort(mics, kind="stable")[:4])
    four = frozenset(PAPER_V2_FOUR)
    of_four = table["size"].to_numpy() == 4
    at = next((i for i, s in enumerate(subsets) if s == four and of_four[i]), None)
    if at is None:
        raise ValueError(f"read_sweep: subset {tuple(PAPER_V2_FOUR)} is not in the table")
    mic = float(mics[at])
    rank = int(np.sum(mics[of_four] < mic)) + 1
    alignment = tuple(table["alignment"].iloc[at])
    return {
        "without": without,
        "four_rank": rank,
        "four_mic": mic,
        "alignment": alignment,
        "F18-four-smallest": without == 4,
        "S4-best-four": rank == 1,
        "S4-order": matches_alignment(alignment, PAPER_ALIGNMENT),
        "uncertified": int(np.sum(~table["certified"].to_numpy().astype(bool))),
    }


# =========================================================================== stability
#: The headline claims measured by :func:`headline_stability`.
HEADLINE_CLAIMS: tuple[str, ...] = ("S4-order", "S4-best-four", "F18-four-smallest")


@dataclass(frozen=True, eq=False)
class HeadlineStability:
    """The headline claims over refits: bootstrap resamples of the models x FastICA seeds.

    Attributes
    ----------
    records : DataFrame
        One row per fit: ``replicate``, ``seed`` and the fields of :func:`read_sweep`.
    design : str
        The resamples and seeds, in words.
    """

    records: pd.DataFrame
    design: str

    @property
    def n_fits(self) -> int:
        return len(self.records)

    @property
    def n_uncertified(self) -> int:
        """Searches (over all fits and subsets) not certified optimal."""
        return int(self.records["uncertified"].sum())

    def share(self, claim_id: str) -> float:
        """Share of the fits in which claim ``claim_id`` holds."""
        if claim_id not in HEADLINE_CLAIMS:
            raise ValueError(f"share: {claim_id!r} is not one of {HEADLINE_CLAIMS}")
        return float(self.records[claim_id].mean())

    def stability(self, claim_id: str) -> Stability:
        """:class:`~hca.paper.claims.Stability` of claim ``claim_id``."""
        return Stability(self.share(claim_id), self.n_fits, self.design)

    def orders(self) -> pd.DataFrame:
        """How often each causal order of the four-domain fit came back: ``order``,
        ``fits``, ``share``, ``paper`` (the paper's order)."""
        counts = self.records["alignment"].value_counts()
        return pd.DataFrame(
            {
                "order": [" → ".join(a) for a in counts.index],
                "fits": counts.to_numpy(),
                "share": counts.to_numpy() / self.n_fits,
                "paper": [matches_alignment(a, PAPER_ALIGNMENT) for a in counts.index],
            }
        )

    def summary(self) -> str:
        parts = [f"{c} {self.share(c):.0%}" for c in HEADLINE_CLAIMS]
        return (
            f"{self.n_fits} fits ({self.design}): "
            + ", ".join(parts)
            + f"; {self.n_uncertified} uncertified searches"
        )


def headline_stability(
    setup: Setup,
    X: pd.DataFrame,
    domains: np.ndarray,
    *,
    n_boot: int,
    seeds: Sequence[int],
    random_state: int = 0,
    n_jobs: int | None = None,
) -> HeadlineStability:
    """The three headline claims over ``n_boot`` within-domain resamples x ``seeds``.

    Parameters
    ----------
    setup : Setup
        Gives the estimator (:func:`hca.paper.replication.estimator`, sequential search).
    X, domains
        Scores and domains of S_inv.
    n_boot : int
        Bootstrap resamples of the models within every domain
        (:func:`hca.stability.bootstrap_samples`, seed ``random_state``).
    seeds : sequence of int
        FastICA seeds; every resample is fitted with each.
    n_jobs : int, optional
        The searches in parallel chunks (:func:`hca.estimator.model.search_many`).
    """
    est = estimator(setup, search="sequential")
    samples = bootstrap_samples(X, domains, n_boot, random_state)
    tables = sweeps(est, samples, seeds, n_jobs=n_jobs)
    records = pd.DataFrame(
        [
            {"replicate": b, "seed": int(s), **read_sweep(table)}
            for b, per_seed in enumerate(tables)
            for s, table in zip(seeds, per_seed)
        ]
    )
    design = (
        f"{n_boot} within-domain bootstrap resamples of the models × FastICA seeds "
        f"{', '.join(map(str, seeds))}"
    )
    return HeadlineStability(records, design)


# =========================================================================== domain rule
def authors_printed_sizes() -> pd.Series:
    """Domain sizes of S_inv printed by the authors' notebook (authors_code_values.csv)."""
    acv = authors_code_values()
    return pd.Series(
        {d: float(acv.loc[f"size-{d}", "value"]) for d in PAPER_V2_SINV},
        name="authors' notebook (printed)",
    )


def authors_printed_mics() -> pd.Series:
    """MICs of the subsets of at least four domains printed by the authors' notebook, keyed by
    frozenset of domains (authors_code_values.csv, ``mic-*``)."""
    acv = authors_code_values()
    rows = acv[acv.index.str.startswith("mic-")]
    return pd.Series(
        {frozenset(i[len("mic-") :].split("+")): float(v) for i, v in rows["value"].items()},
        name="authors' notebook (printed)",
    )


@dataclass(frozen=True, eq=False)
class DomainRuleEvidence:
    """Why the careful and the authors' setups differ: the attribution of models to domains.

    Attributes
    ----------
    sizes : DataFrame
        S_inv domains x ``this book``, ``authors' rule`` (our re-implementation on the
        4,576-model table) and ``authors' notebook (printed)``.
    crossing : DataFrame
        CSV rows the authors' rule puts in each S_inv domain, by this book's attribution:
        ``same domain``, ``another S_inv domain``, ``another base model``, ``unattributed``.
    newer_base : dict
        Authors' Llama-3-8B rows that this book attributes to Llama-3.1-8B, and authors'
        Qwen2-7B rows it attributes to Qwen2.5-7B.
    levers : DataFrame
        One row per variant (rule, table of this book's CSV or with the final table's
        score-only models, residuals ``domain`` = Algorithm 1 or ``shared`` = the authors'
        code): the MIC of the paper's four domains at
        FastICA seed 0, its rank among the 16 subsets, how many of the four best subsets
        contain Qwen2-7B, and the same MIC and rank with ``restarts`` FastICA runs per domain
        (the run with the largest negentropy kept; a sensitivity check, not a setup).
    restarts : int
    optimum : DataFrame
        The authors' setup's four-domain fit with one FastICA run (seed 0) and with the best of
        ``restarts`` runs per domain, beside the authors' printed values: per domain the
        inexactness (``α``), the unmixing error and FastICA's negentropy (its objective).
    optimum_alignment : tuple
        The causal order of the fit with ``restarts`` runs.
    optimum_ranked : DataFrame
        Its five row orders with the smallest MIC (:func:`hca.stability.ranked_orders`).
    """

    sizes: pd.DataFrame
    crossing: pd.DataFrame
    newer_base: dict
    levers: pd.DataFrame
    restarts: int
    optimum: pd.DataFrame
    optimum_alignment: tuple
    optimum_ranked: pd.DataFrame

    def summary(self) -> str:
        return "\n".join(
            ["domain sizes:", self.sizes.to_string(), "levers:", self.levers.round(3).to_string()]
        )


def _crossing(book: pd.DataFrame, authors: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    ours_by_id = (
        book.assign(key=book["model_id"].str.lower())
        .drop_duplicates("key")
        .set_index("key")["base_model"]
    )
    rows = authors[(authors["source"] == "csv") & authors["base_model"].isin(PAPER_V2_SINV)]
    ours = rows["model_id"].str.lower().map(ours_by_id).astype(object)
    theirs = rows["base_model"].astype(object)
    kind = np.select(
        [
            ours.isna().to_numpy(),
            (ours == theirs).to_numpy(dtype=bool),
            ours.isin(PAPER_V2_SINV).to_numpy(),
        ],
        ["unattributed", "same domain", "another S_inv domain"],
        "another base model",
    )
    table = pd.crosstab(rows["base_model"], kind, rownames=["authors' rule"], colnames=[None])
    cols = ["same domain", "another S_inv domain", "another base model", "unattributed"]
    table = table.reindex(index=list(PAPER_V2_SINV), columns=cols, fill_value=0)
    newer = {
        "Llama-3-8B -> Llama-3.1-8B": int(
            ((theirs == "Llama-3-8B") & (ours == "Llama-3.1-8B")).sum()
        ),
        "Qwen2-7B -> Qwen2.5-7B": int(((theirs == "Qwen2-7B") & (ours == "Qwen2.5-7B")).sum()),
    }
    return table, newer


def _lever_rows(
    datasets: Sequence[tuple[pd.DataFrame, np.ndarray]],
    restarts: int,
    icas: Mapping[int, Sequence[Sequence[Mapping[Hashable, DomainICA]]]],
) -> list[dict]:
    """The rows of :attr:`DomainRuleEvidence.levers` of every data set of S_inv (in order,
    residuals ``domain`` then ``shared``), from their per-domain ICA with one run and with
    ``restarts`` runs (``icas[runs][g]`` as :func:`hca.stability.domain_icas`: the residuals
    do not change it); the sweeps of all data sets in one search batch per residual and
    number of runs."""
    found: dict[tuple[str, int], list[pd.DataFrame]] = {}
    for runs in icas:
        for residual in ("domain", "shared"):
            est = HCA(search="sequential", residual=residual, random_state=0, n_restarts=runs)
            swept = sweeps(est, datasets, [0], icas=icas[runs][: len(datasets)])
            found[residual, runs] = [per_seed[0] for per_seed in swept]
    rows = []
    for g in range(len(datasets)):
        for residual in ("domain", "shared"):
            out = {}
            for key, runs in (("seed 0", 1), ("restarts", restarts)):
                table = found[residual, runs][g]
                rank, _, mic = subset_rank(table, PAPER_V2_FOUR)
                out[f"MIC of the four ({key})"] = mic
                out[f"rank of 16 ({key})"] = rank
                if runs == 1:
                    out["Qwen2-7B in 4 best"] = 4 - four_smallest(table)[1]
            rows.append(out)
    return rows


#: The variants of :attr:`DomainRuleEvidence.levers`: (domain rule, table) -> frame builder.
_LEVER_FRAMES = (("this book", "CSV"), ("authors'", "CSV"), ("authors'", "CSV + final table"))


def _lever_frame(rule: str, table: str) -> pd.DataFrame:
    if rule == "this book":
        return v2_frame("careful")
    return v2_frame("authors") if table.endswith("final table") else v2_authors(include_final=False)


def _optimum(restarts: int, icas: Mapping[Hashable, DomainICA]) -> tuple[pd.DataFrame, HCA]:
    """The authors' setup's four-domain fit with one and with ``restarts`` FastICA runs (the
    per-domain ICA of the latter: ``icas``, with its settings)."""
    acv = authors_code_values()
    one = main_fit("authors")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        best = estimator("authors", n_restarts=restarts).fit_from_ica(
            *main_data("authors"), icas=icas
        )
    rows = {}
    for d in PAPER_V2_FOUR:
        rows[d] = {
            "α printed": float(acv.loc[f"alpha4-{d}", "value"]),
            "α seed 0": one.inexactness_[d],
            f"α {restarts} runs": best.inexactness_[d],
            "error printed": float(acv.loc[f"recovery-error-{d}", "value"]),
            "error seed 0": one.unmixing_error_[d],
            f"error {restarts} runs": best.unmixing_error_[d],
            "negentropy seed 0": one.ica_[d].objective,
            f"negentropy {restarts} runs": best.ica_[d].objective,
        }
    return pd.DataFrame(rows).T, best


def domain_rule_evidence(restarts: int = 10) -> DomainRuleEvidence:
    """The comparison of the two domain rules (see :class:`DomainRuleEvidence`); the twelve
    sweeps of the levers and the fit of the optimum take about a second, so they run in this
    process: the FastICA of every table (and of the authors' setup's four domains) in one
    batch per number of runs (:func:`hca.stability.domain_icas`), the searches of the
    sweeps in one batch per residual and number of runs."""
    book, authors = v2_frame("careful"), v2_frame("authors")
    sizes = pd.DataFrame(
        {
            "this book": book["base_model"].value_counts().reindex(PAPER_V2_SINV),
            "authors' rule": authors["base_model"].value_counts().reindex(PAPER_V2_SINV),
            "authors' notebook (printed)": authors_printed_sizes(),
        }
    ).astype(float)
    crossing, newer = _crossing(book, authors)
    sinv = [
        domain_data(_lever_frame(rule, table), PAPER_V2_SINV, V2_BENCHMARKS)
        for rule, table in _LEVER_FRAMES
    ]
    datasets = [*sinv, main_data("authors")]  # its domains are fitted once, in sinv
    icas = {
        runs: domain_icas(HCA(random_state=0, n_restarts=runs), datasets, [0])
        for runs in dict.fromkeys((1, int(restarts)))
    }
    variants = [
        (rule, table, residual)
        for rule, table in _LEVER_FRAMES
        for residual in ("domain", "shared")
    ]
    index = pd.MultiIndex.from_tuples(variants, names=["domain rule", "table", "residuals"])
    levers = pd.DataFrame(_lever_rows(sinv, int(restarts), icas), index=index)
    optimum, best = _optimum(restarts, icas[int(restarts)][-1][0])
    return DomainRuleEvidence(
        sizes=sizes,
        crossing=crossing,
        newer_base=newer,
        levers=levers,
        restarts=int(restarts),
        optimum=optimum,
        optimum_alignment=tuple(best.adjust().benchmarks),
        optimum_ranked=ranked_orders(best, n=5, patterns=PAPER_PATTERNS),
    )
