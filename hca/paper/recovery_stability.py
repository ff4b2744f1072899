"""How firm the recovery chapter's headline is: refits, and the levers that move it.

The recovery chapter (:mod:`hca.paper.recovery`) reads its headline claims off single fits at
FastICA seed 0: which domain subsets of S_inv fit one SCM best (Figure 18, ``F18-four-smallest``,
``S4-best-four``) and the causal order of the four-domain fit (``S4-order``). This module
measures them and explains the gap to the paper:

* :func:`read_sweep` reads one Figure 18 sweep (:func:`hca.estimator.mic_by_subset` with the
  chosen domains, the paper's four by default, in ``align``) as the three claims read it; :func:`four_smallest` and
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
  from, and how the MIC of the chosen domains and their rank move with the rule, the table,
  the residuals and FastICA restarts (a sensitivity check, not a setup).

Every function takes the sweep's ``candidates`` (default: the paper's S_inv) and the
``chosen`` domains of Section 4's fit (default: the paper's four), the recovery chapter's
settings :attr:`~hca.paper.recovery.Settings.candidates` and
:attr:`~hca.paper.recovery.Settings.domains`.

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
from math import comb
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
from hca.paper.words import seed_list
from hca.stability import bootstrap_samples, domain_icas, matches_alignment, ranked_orders

__all__ = [
    "EXCLUDED",
    "SWEEP_MIN_SIZE",
    "sweep_min_size",
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
    "lever_frames",
    "printed_value",
    "authors_stored_order",
]

#: The domain the paper's Figure 18 claim is about (the four best subsets exclude it).
EXCLUDED = "Qwen2-7B"
#: Smallest subset of Figure 18 under both setups. The authors' public notebook printed only
#: the six subsets of at least four domains, but of those only one excludes Qwen2-7B, so the
#: paper's Figure 18 ("all possible choices", four best subsets without Qwen2-7B) must have
#: swept the subsets of three as well, as the criterion of F18-four-smallest says.
SWEEP_MIN_SIZE = 3


def sweep_min_size(chosen: Sequence[str]) -> int:
    """The smallest subset of a sweep that must hold the ``chosen`` domains:
    :data:`SWEEP_MIN_SIZE`, or the number of chosen domains when they are fewer."""
    return min(SWEEP_MIN_SIZE, len(chosen))


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
    *,
    candidates: Sequence[str] = PAPER_V2_SINV,
    chosen: Sequence[str] = PAPER_V2_FOUR,
) -> list[list[pd.DataFrame]]:
    """Figure 18's sweep (every subset of ``candidates`` with at least
    :func:`sweep_min_size` domains, the ``chosen`` domains' alignment included) of every data
    set of ``datasets`` under every FastICA seed of ``seeds`` as one batch
    (:func:`hca.estimator.mic_by_subset_many`; ``icas`` and ``n_jobs`` as there):
    ``out[g][i]`` is data set ``g`` under ``seeds[i]``. FastICA and search warnings are
    silenced (convergence and certification are in the tables)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UncertifiedSearchWarning)
        return mic_by_subset_many(
            est,
            datasets,
            seeds,
            list(candidates),
            sweep_min_size(chosen),
            align=[tuple(chosen)],
            n_jobs=n_jobs,
            icas=icas,
        )


def read_sweep(table: pd.DataFrame, chosen: Sequence[str] = PAPER_V2_FOUR) -> dict:
    """What the three headline claims read off one sweep.

    Returns
    -------
    dict
        ``without`` (how many of the four smallest MICs exclude Qwen2-7B), ``chosen_rank``
        (rank of the ``chosen`` domains among the subsets of their size), ``chosen_mic``,
        ``alignment`` (of the chosen domains' fit), the claims ``F18-four-smallest``,
        ``S4-best-four`` and ``S4-order`` (bool; read as written, whatever the domains) and
        ``uncertified`` (searches not certified optimal).
    """
    # four_smallest and subset_rank(size=k) on arrays (the headline reads hundreds of sweeps)
    subsets = [frozenset(s) for s in table["subset"]]
    mics = table["mic"].to_numpy(dtype=float)
    without = sum(EXCLUDED not in subsets[i] for i in np.argsort(mics, kind="stable")[:4])
    target = frozenset(chosen)
    of_size = table["size"].to_numpy() == len(target)
    at = next((i for i, s in enumerate(subsets) if s == target and of_size[i]), None)
    if at is None:
        raise ValueError(f"read_sweep: subset {tuple(chosen)} is not in the table")
    mic = float(mics[at])
    rank = int(np.sum(mics[of_size] < mic)) + 1
    alignment = tuple(table["alignment"].iloc[at])
    return {
        "without": without,
        "chosen_rank": rank,
        "chosen_mic": mic,
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
    candidates: Sequence[str] = PAPER_V2_SINV,
    chosen: Sequence[str] = PAPER_V2_FOUR,
) -> HeadlineStability:
    """The three headline claims over ``n_boot`` within-domain resamples x ``seeds``.

    Parameters
    ----------
    setup : Setup
        Gives the estimator (:func:`hca.paper.replication.estimator`, sequential search).
    X, domains
        Scores and domains of the ``candidates`` (S_inv by default).
    n_boot : int
        Bootstrap resamples of the models within every domain
        (:func:`hca.stability.bootstrap_samples`, seed ``random_state``).
    seeds : sequence of int
        FastICA seeds; every resample is fitted with each.
    n_jobs : int, optional
        The searches in parallel chunks (:func:`hca.estimator.model.search_many`).
    candidates, chosen : sequence of str
        The sweep's domains and Section 4's (:func:`sweeps`).
    """
    est = estimator(setup, search="sequential")
    samples = bootstrap_samples(X, domains, n_boot, random_state)
    tables = sweeps(est, samples, seeds, n_jobs=n_jobs, candidates=candidates, chosen=chosen)
    records = pd.DataFrame(
        [
            {"replicate": b, "seed": int(s), **read_sweep(table, chosen)}
            for b, per_seed in enumerate(tables)
            for s, table in zip(seeds, per_seed)
        ]
    )
    design = (
        f"{n_boot} within-domain bootstrap resamples of the models × FastICA {seed_list(seeds)}"
    )
    return HeadlineStability(records, design)


# =========================================================================== domain rule
def printed_value(key: str) -> float:
    """A value the authors' notebook printed (``authors_code_values.csv``), NaN when it printed
    none (a domain the paper did not use)."""
    acv = authors_code_values()
    return float(acv.loc[key, "value"]) if key in acv.index else float("nan")


def authors_printed_sizes(candidates: Sequence[str] = PAPER_V2_SINV) -> pd.Series:
    """Domain sizes printed by the authors' notebook (authors_code_values.csv) of the
    ``candidates`` (NaN where it printed none)."""
    return pd.Series(
        {d: printed_value(f"size-{d}") for d in candidates},
        name="authors' notebook (printed)",
        dtype=float,
    )


def authors_stored_order() -> tuple[str, ...]:
    """The causal order the authors' stored run prints: for each of its factors z1..z3 the
    benchmark of largest R² in their ``latent_ols`` table (``authors_code_values.csv``,
    ``ols-r2-z<i>-<benchmark>``; the same table chapter 4 shows)."""
    acv = authors_code_values()
    order = []
    for i in (1, 2, 3):
        r2 = {b: float(acv.loc[f"ols-r2-z{i}-{b}", "value"]) for b in V2_BENCHMARKS}
        order.append(max(r2, key=lambda b: r2[b]))
    return tuple(order)


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
        The sweep's candidate domains x ``this book``, ``authors' rule`` (our
        re-implementation on the 4,576-model table) and ``authors' notebook (printed)``.
    crossing : DataFrame
        CSV rows the authors' rule puts in each candidate domain, by this book's attribution:
        ``same domain``, ``another candidate``, ``another base model``, ``unattributed``.
    newer_base : dict
        Authors' Llama-3-8B rows that this book attributes to Llama-3.1-8B, and authors'
        Qwen2-7B rows it attributes to Qwen2.5-7B.
    levers : DataFrame
        One row per variant (rule, table of this book's CSV or with the final table's
        score-only models, residuals ``domain`` = Algorithm 1 or ``shared`` = the authors'
        code): the MIC of the chosen domains at FastICA seed 0 (``MIC (seed 0)``), its rank
        among all subsets of the sweep (``rank (seed 0)``), how many of the four best subsets
        contain Qwen2-7B, and the same MIC and rank with ``restarts`` FastICA runs per domain
        (``MIC (restarts)``, ``rank (restarts)``: the run with the largest negentropy kept; a
        sensitivity check, not a setup).
    restarts : int
    optimum : DataFrame
        The authors' setup's fit of the chosen domains with one FastICA run (seed 0) and with
        the best of ``restarts`` runs per domain, beside the authors' printed values (NaN for
        a domain the paper did not fit): per domain the inexactness (``α``), the unmixing
        error and FastICA's negentropy (its objective).
    optimum_mic : tuple of float
        The MIC of that fit with one run (seed 0) and with ``restarts`` runs.
    optimum_alignment : tuple
        The causal order of the fit with ``restarts`` runs.
    optimum_ranked : DataFrame
        Its five row orders with the smallest MIC (:func:`hca.stability.ranked_orders`).
    candidates, chosen : tuple of str
        The sweep's domains and Section 4's.
    """

    sizes: pd.DataFrame
    crossing: pd.DataFrame
    newer_base: dict
    levers: pd.DataFrame
    restarts: int
    optimum: pd.DataFrame
    optimum_mic: tuple
    optimum_alignment: tuple
    optimum_ranked: pd.DataFrame
    candidates: tuple = PAPER_V2_SINV
    chosen: tuple = PAPER_V2_FOUR

    @property
    def n_subsets(self) -> int:
        """Subsets of the sweep (the ``rank`` columns of :attr:`levers` rank among them)."""
        return sum(
            comb(len(self.candidates), k)
            for k in range(sweep_min_size(self.chosen), len(self.candidates) + 1)
        )

    def summary(self) -> str:
        return "\n".join(
            ["domain sizes:", self.sizes.to_string(), "levers:", self.levers.round(3).to_string()]
        )


def _crossing(
    book: pd.DataFrame, authors: pd.DataFrame, candidates: Sequence[str]
) -> tuple[pd.DataFrame, dict]:
    ours_by_id = (
        book.assign(key=book["model_id"].str.lower())
        .drop_duplicates("key")
        .set_index("key")["base_model"]
    )
    rows = authors[(authors["source"] == "csv") & authors["base_model"].isin(list(candidates))]
    ours = rows["model_id"].str.lower().map(ours_by_id).astype(object)
    theirs = rows["base_model"].astype(object)
    kind = np.select(
        [
            ours.isna().to_numpy(),
            (ours == theirs).to_numpy(dtype=bool),
            ours.isin(list(candidates)).to_numpy(),
        ],
        ["unattributed", "same domain", "another candidate"],
        "another base model",
    )
    table = pd.crosstab(rows["base_model"], kind, rownames=["authors' rule"], colnames=[None])
    cols = ["same domain", "another candidate", "another base model", "unattributed"]
    table = table.reindex(index=list(candidates), columns=cols, fill_value=0)
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
    candidates: Sequence[str],
    chosen: Sequence[str],
) -> list[dict]:
    """The rows of :attr:`DomainRuleEvidence.levers` of every data set of the candidates (in
    order, residuals ``domain`` then ``shared``), from their per-domain ICA with one run and
    with ``restarts`` runs (``icas[runs][g]`` as :func:`hca.stability.domain_icas`: the
    residuals do not change it); the sweeps of all data sets in one search batch per residual
    and number of runs."""
    found: dict[tuple[str, int], list[pd.DataFrame]] = {}
    for runs in icas:
        for residual in ("domain", "shared"):
            est = HCA(search="sequential", residual=residual, random_state=0, n_restarts=runs)
            swept = sweeps(
                est,
                datasets,
                [0],
                icas=icas[runs][: len(datasets)],
                candidates=candidates,
                chosen=chosen,
            )
            found[residual, runs] = [per_seed[0] for per_seed in swept]
    rows = []
    for g in range(len(datasets)):
        for residual in ("domain", "shared"):
            out = {}
            for key, runs in (("seed 0", 1), ("restarts", restarts)):
                table = found[residual, runs][g]
                rank, _, mic = subset_rank(table, chosen)
                out[f"MIC ({key})"] = mic
                out[f"rank ({key})"] = rank
                if runs == 1:
                    out[f"{EXCLUDED} in 4 best"] = 4 - four_smallest(table)[1]
            rows.append(out)
    return rows


#: The variants of :attr:`DomainRuleEvidence.levers`: (domain rule, table) -> frame builder.
_LEVER_FRAMES = (("this book", "CSV"), ("authors'", "CSV"), ("authors'", "CSV + final table"))


def _lever_frame(rule: str, table: str) -> pd.DataFrame:
    if rule == "this book":
        return v2_frame("careful")
    return v2_frame("authors") if table.endswith("final table") else v2_authors(include_final=False)


def lever_frames() -> dict[str, pd.DataFrame]:
    """The frames of :attr:`DomainRuleEvidence.levers`, by name (``"this book, CSV"``, ...):
    every domain the evidence uses must have models in each."""
    return {f"{rule} rule, {table}": _lever_frame(rule, table) for rule, table in _LEVER_FRAMES}


def _optimum(
    restarts: int, icas: Mapping[Hashable, DomainICA], chosen: Sequence[str]
) -> tuple[pd.DataFrame, HCA, HCA]:
    """The authors' setup's fit of the ``chosen`` domains with one and with ``restarts``
    FastICA runs (the per-domain ICA of the latter: ``icas``, with its settings)."""
    one = main_fit("authors", chosen)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        best = estimator("authors", n_restarts=restarts).fit_from_ica(
            *main_data("authors", chosen), icas=icas
        )
    rows = {}
    for d in chosen:
        rows[d] = {
            "α printed": printed_value(f"alpha4-{d}"),
            "α seed 0": one.inexactness_[d],
            f"α {restarts} runs": best.inexactness_[d],
            "error printed": printed_value(f"recovery-error-{d}"),
            "error seed 0": one.unmixing_error_[d],
            f"error {restarts} runs": best.unmixing_error_[d],
            "negentropy seed 0": one.ica_[d].objective,
            f"negentropy {restarts} runs": best.ica_[d].objective,
        }
    return pd.DataFrame(rows).T, one, best


def domain_rule_evidence(
    restarts: int = 10,
    candidates: Sequence[str] = PAPER_V2_SINV,
    chosen: Sequence[str] = PAPER_V2_FOUR,
) -> DomainRuleEvidence:
    """The comparison of the two domain rules (see :class:`DomainRuleEvidence`) on the sweep's
    ``candidates`` and Section 4's ``chosen`` domains; the twelve sweeps of the levers and the
    fit of the optimum take about a second, so they run in this process: the FastICA of every
    table (and of the authors' setup's chosen domains) in one batch per number of runs
    (:func:`hca.stability.domain_icas`), the searches of the sweeps in one batch per residual
    and number of runs."""
    candidates, chosen = tuple(candidates), tuple(chosen)
    book, authors = v2_frame("careful"), v2_frame("authors")
    sizes = pd.DataFrame(
        {
            "this book": book["base_model"].value_counts().reindex(candidates),
            "authors' rule": authors["base_model"].value_counts().reindex(candidates),
            "authors' notebook (printed)": authors_printed_sizes(candidates),
        }
    ).astype(float)
    crossing, newer = _crossing(book, authors, candidates)
    sinv = [
        domain_data(_lever_frame(rule, table), candidates, V2_BENCHMARKS)
        for rule, table in _LEVER_FRAMES
    ]
    datasets = [*sinv, main_data("authors", chosen)]  # its domains are fitted once, in sinv
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
    levers = pd.DataFrame(_lever_rows(sinv, int(restarts), icas, candidates, chosen), index=index)
    optimum, one, best = _optimum(restarts, icas[int(restarts)][-1][0], chosen)
    return DomainRuleEvidence(
        sizes=sizes,
        crossing=crossing,
        newer_base=newer,
        levers=levers,
        restarts=int(restarts),
        optimum=optimum,
        optimum_mic=(float(one.mic_), float(best.mic_)),
        optimum_alignment=tuple(best.adjust().benchmarks),
        optimum_ranked=ranked_orders(best, n=5, patterns=PAPER_PATTERNS),
        candidates=candidates,
        chosen=chosen,
    )
