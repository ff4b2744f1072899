"""The interpretation chapter's analysis: what the three factors of Section 4's fit mean.

Section 4 of the paper aligns every factor of the four-domain fit with the benchmark that
explains it best (the OLS adjustment, :meth:`hca.estimator.HCA.adjust`) and reads the factors
as capabilities: ``z1`` a general capability (BBH, MMLU-Pro) driven by pretraining compute,
``z2`` instruction following (IFEval), ``z3`` mathematical reasoning (MATH Lvl 5). Table 2
gives the R^2 of the alignment in sample (2a) and on seven other base models (2b), Figure 3a
the adjusted unmixing matrix, Appendix D the outside evidence (compute, official instruct
checkpoints of Figure 8) and Appendix I the takeaways. :func:`run` computes our side of all of
it under one setup (:mod:`hca.paper.setups`) from the shared fit
(:func:`hca.paper.replication.main_fit`, never refitted here), and the evaluators below judge
the claims.

Factors are matched to the paper's by *role* (the benchmark the adjustment aligns them with:
BBH or MMLU-PRO for the general factor, IFEval, MATH Lvl 5), not by position: the fits order
the same three directions differently, and an R^2 "with the earlier factors as controls"
depends on the position (:attr:`InterpretationResults.paper_order_r2` refits the adjustment
with our factors in the paper's order to show how much).

Under the ``authors`` setup the four domains and Table 2b's seven out-of-sample domains come
from the authors' rule (:func:`hca.attribution.authors.v2_frame_authors`, the label equal to
the lower-cased base model, as their ``str.contains`` selects), pretraining compute is their
``6 x #Params x BASE_MODEL_TOKENS[family]``, and the OLS adjustment is this book's, which is
the same regression as the authors' ``latent_ols`` (``scripts/find_proximal_benchmark.ipynb``
of hlzhang109/causal-eval: raw earlier factors as controls instead of adjusted ones span the
same space; :attr:`InterpretationResults.authors_ols_gap` measures the difference). Figure 8's
cells and the official base/instruct pairs are leaderboard look-ups, the same under both
setups.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np
import pandas as pd

from hca.attribution.catalogue import BASE_MODELS
from hca.attribution.compute import add_compute
from hca.data import (
    V2_BENCHMARKS,
    authors_code_values,
    authors_edge_weights,
    authors_tokens,
    load_paper_values,
)
from hca.data.registry import alignment_text, benchmark_label, role_position
from hca.estimator.results import ols_adjustment, r_squared
from hca.interpret import (
    Alignment,
    TransferR2,
    align,
    base_checkpoint_mask,
    benchmark_unit_models,
    figure8_table,
    instruct_shift,
    official_pairs,
    out_of_sample_r2,
)
from hca.paper.claims import (
    Outcome,
    claim,
    grade,
    interval_verdict,
    numeric_verdict,
    paper_list,
    set_verdict,
)
from hca.paper.constants import (
    FIGURE8_CHECKPOINTS,
    FIGURE8_COLUMNS,
    PAPER_ALIGNMENT,
    PAPER_OOS_DOMAINS,
    PAPER_V2_FOUR,
)
from hca.paper.replication import (
    main_data,
    main_fits,
    main_fits_steered,
    v2_frame,
)
from hca.paper.setups import SETUP_NAMES, Setup, get_setup
from hca.paper.shape import ChapterSpec, each_setup
from hca.paper.words import count, join_words, k_of_n, median_range, number
from hca.validation import check_matrix

__all__ = [
    "Settings",
    "InterpretationResults",
    "run",
    "ROLES",
    "PAPER_FACTOR",
    "ROLE_NAMES",
    "NOT_INFORMATIVE",
    "informative",
    "not_informative_because",
    "instruct_changes",
    "paper_table2a",
    "authors_code_table2a",
    "edge_table",
    "authors_adjusted_weights",
    "check_settings",
    "answer",
    "page_words",
    "table2a_verdicts",
    "T2A_CONTROLS",
]

#: The paper's three roles, in its causal order, with the benchmarks that define them.
ROLES: dict[str, frozenset] = dict(zip(("general", "ifeval", "math"), PAPER_ALIGNMENT))
#: The paper's factor of every role (Section 4) and back.
PAPER_FACTOR: dict[str, str] = {"general": "z1", "ifeval": "z2", "math": "z3"}
_ROLE_OF: dict[str, str] = {z: r for r, z in PAPER_FACTOR.items()}
#: Display names of the roles.
ROLE_NAMES: dict[str, str] = {
    "general": "general (BBH/MMLU-PRO)",
    "ifeval": "IFEval",
    "math": "MATH Lvl 5",
}
#: What every Table 2a row says about its control set: the authors' code (and Section 4's text)
#: and this book use the earlier factors, the paper's Table 2 caption says the later ones.
T2A_CONTROLS = (
    "controls: the earlier factors z_j, j < i, as in Section 4's text and the authors' code "
    "(latent_ols); the paper's Table 2 caption says z_j, j > i, which this book does not follow"
)
#: The reason of Table 2b's not-applicable cells (criterion of paper_values.csv, issue 18).
NOT_INFORMATIVE = (
    "not informative: in sample the factor is ≥ 99 % a linear function of its "
    "aligned benchmark and the earlier factors, so its out-of-sample R² is ≈ 1 "
    "by construction"
)
_B = list(V2_BENCHMARKS)
_IN = "In sample"
_FLOP = 6.0 * 1e9 * 1e12  # 6 N D with N in billions and D in trillions


@dataclass(frozen=True)
class Settings:
    """The chapter's analysis choices (defaults: the book's).

    Attributes
    ----------
    domains : tuple of str
        The base models whose models Section 4's HCA fit is fitted on (the paper's four,
        :data:`~hca.paper.constants.PAPER_V2_FOUR`); at least two, each with more models
        than benchmarks under every setup run.
    oos_domains : tuple of str
        The other base models the fitted alignment is applied to (Table 2b's seven,
        :data:`~hca.paper.constants.PAPER_OOS_DOMAINS`); none of :attr:`domains`.
    n_seeds : int
        FastICA seeds of the ensemble every fit-based claim is read from (seeds
        ``0 .. n_seeds - 1``; :class:`hca.paper.shape.EnsembleSettings`).
    n_seeds_more : int
        The larger ensemble a claim is read from when a share of the first runs lies
        near a threshold or one of them is rounding-sensitive.
    setups : tuple of str
        The setups to run (:data:`hca.paper.setups.SETUP_NAMES`: both).
    n_boot : int
        Bootstrap resamples of the base checkpoints for the compute correlations.
    """

    domains: tuple[str, ...] = PAPER_V2_FOUR  # the fit's base models
    oos_domains: tuple[str, ...] = PAPER_OOS_DOMAINS  # Table 2b's other base models
    n_seeds: int = 20  # FastICA seeds of the chapter's ensemble
    n_seeds_more: int = 40  # the larger ensemble near a threshold
    setups: tuple[str, ...] = SETUP_NAMES  # the setups to run
    n_boot: int = 2000  # bootstrap resamples of the compute correlations


#: The smallest number of models a domain of the fit needs: more models than benchmarks.
MIN_MODELS = len(V2_BENCHMARKS) + 1
_KNOWN = frozenset(b.name for b in BASE_MODELS)


def _names(value: object, field: str, least: int) -> tuple[str, ...]:
    if not isinstance(value, tuple) or not all(isinstance(d, str) for d in value):
        raise ValueError(f"settings.{field} must be a tuple of base-model names, got {value!r}")
    if len(set(value)) != len(value) or len(value) < least:
        raise ValueError(
            f"settings.{field} {value!r}: expected at least {least} distinct base models"
        )
    unknown = [d for d in value if d not in _KNOWN]
    if unknown:
        raise ValueError(
            f"settings.{field}: unknown base model(s) {unknown}; expected names of "
            "hca.attribution.BASE_MODELS such as 'Llama-3-8B'"
        )
    return value


def check_settings(settings: Settings, setup: str | Setup | None = None) -> None:
    """Check the chapter's own settings before any work: known, distinct base models in
    ``domains`` (at least two) and ``oos_domains`` (none of the fit's), ``n_boot`` at least
    100, and, for ``setup``, at least :data:`MIN_MODELS` models with all six scores in every
    domain of the fit under that setup's attribution.

    Raises
    ------
    ValueError
        Naming the field, the bad value and what is expected.
    """
    fit = _names(settings.domains, "domains", 2)
    oos = _names(settings.oos_domains, "oos_domains", 0)
    both = [d for d in oos if d in fit]
    if both:
        raise ValueError(f"settings.oos_domains {both} are also in settings.domains")
    n_boot = settings.n_boot
    if not isinstance(n_boot, int) or isinstance(n_boot, bool) or n_boot < 100:
        raise ValueError(f"settings.n_boot={n_boot!r}: expected an integer of at least 100")
    if setup is None:
        return
    frame = v2_frame(setup)
    complete = frame[_B].notna().all(axis=1)
    sizes = frame.loc[complete, "base_model"].value_counts()
    small = {d: int(sizes.get(d, 0)) for d in fit if sizes.get(d, 0) < MIN_MODELS}
    if small:
        raise ValueError(
            f"settings.domains: under the {get_setup(setup).label} "
            + ", ".join(f"{d} has {count(n, 'model')}" for d, n in small.items())
            + f" with all six scores; each domain of the fit needs at least {MIN_MODELS}"
        )


@dataclass(frozen=True, eq=False)
class InterpretationResults:
    """Our side of the interpretation chapter under one setup.

    Attributes
    ----------
    setup : Setup
    alignment : Alignment
        The OLS alignment of the shared seed-0 fit (Figure 3a, Table 2a, the lines of 3b).
    mixing : DataFrame
        Adjusted mixing matrix ``G`` (``x = G z_adj``): benchmarks x factors.
    roles : dict
        Role (``"general"``, ``"ifeval"``, ``"math"``) -> our factor with it, or None.
    in_sample : DataFrame
        The fit's scores (four domains); ``n_in_sample`` their number.
    transfer : TransferR2
        Table 2b: R^2 of the fitted OLS in sample and on the seven other base models.
    oos_scores : dict
        Base model -> scores of its models (Figure 3b).
    paper_order_r2 : DataFrame
        Table 2a recomputed with our raw factors put in the paper's order (rows: roles).
    authors_ols_gap : float
        Largest |difference| between our R^2 tables (in and out of sample) and the authors'
        ``latent_ols`` regression on raw earlier factors (0 up to rounding).
    checkpoints : DataFrame
        Official base checkpoints with a compute: ``model_id``, ``base``, ``log10_compute``,
        the oriented factors (each rises with its aligned benchmark) and the benchmarks.
    compute_r : Series
        Pearson r of the oriented factors and the benchmarks with log10 compute.
    compute_diff : dict
        r(IFEval-aligned) - r(general-aligned): ``point``, ``ci95``, ``ci80`` (bootstrap of
        the checkpoints, ``n_boot`` resamples).
    figure8 : DataFrame
        Figure 8's Base and Official Instruct rows from the leaderboard (raw accuracies).
    instruct : DataFrame
        :func:`hca.interpret.instruct_shift` over every official base/instruct pair, in
        in-sample standard deviations of each factor, each factor signed to rise with its
        aligned benchmark.
    edges : DataFrame
        Per domain of the fit, the edge between the general and the IFEval factor
        (:func:`_edges`): ``direction`` (``"general → IFEval"``, ``"IFEval → general"`` or
        empty without both factors), its weight ``unscaled`` (the adjusted SCM of
        :meth:`hca.estimator.HCA.adjust`), ``points`` (factors in points of their aligned
        benchmarks, :func:`hca.interpret.benchmark_unit_models`' adjusted rule) and
        ``authors_rule`` (the arithmetic of the authors' cell), and the IFEval factor's source
        scale ``ifeval_scale`` (points) and ``ifeval_scale_unscaled``.
    domains, oos_domains : tuple of str
        The settings' domains of the fit and of Table 2b.
    n_boot : int
    mic : float
        The MIC of the run's four-domain fit (what makes a run typical).
    steered : str
        The domains whose FastICA in the four-domain fit was steered by rounding (empty: the
        run is evidence; :func:`hca.paper.replication.main_fits_steered`).
    """

    setup: Setup
    alignment: Alignment
    mixing: pd.DataFrame
    roles: dict
    in_sample: pd.DataFrame
    transfer: TransferR2
    oos_scores: dict
    paper_order_r2: pd.DataFrame
    authors_ols_gap: float
    checkpoints: pd.DataFrame
    compute_r: pd.Series
    compute_diff: dict
    figure8: pd.DataFrame
    instruct: pd.DataFrame
    edges: pd.DataFrame
    domains: tuple
    oos_domains: tuple
    n_boot: int
    mic: float = float("nan")
    steered: str = ""

    @property
    def n_in_sample(self) -> int:
        return len(self.in_sample)

    @property
    def order(self) -> str:
        """Our causal order as benchmarks (``"MATH Lvl 5 → BBH → IFEval"``)."""
        return alignment_text(self.alignment.benchmarks)

    def role_benchmark(self, role: str) -> str | None:
        """The benchmark our factor with ``role`` is aligned with."""
        z = self.roles[role]
        return None if z is None else self.alignment.benchmarks[self._index(z)]

    def _index(self, z: str) -> int:
        return list(self.alignment.factor_names).index(z)

    def unmixing(self) -> pd.DataFrame:
        """Adjusted unmixing matrix in benchmark units (Figure 3a), columns = benchmark keys."""
        U = self.alignment.unmixing / self.alignment.slopes[:, None]
        return pd.DataFrame(U, index=list(self.alignment.factor_names), columns=_B)

    def dominant(self, z: str, frac: float = 0.5) -> list[str]:
        """Benchmarks with |weight| >= ``frac`` x the largest in factor ``z``'s row (Figure 3a
        reading, benchmark units)."""
        row = self.unmixing().loc[z].abs()
        return [b for b in _B if row[b] >= frac * row.max()]

    def oriented_mixing(self, z: str) -> pd.Series:
        """Factor ``z``'s column of :attr:`mixing`, signed so that its aligned benchmark's
        loading is positive."""
        col = self.mixing[z]
        b = self.alignment.benchmarks[self._index(z)]
        return col * (1.0 if col[b] >= 0 else -1.0)

    def position_r2(self) -> pd.DataFrame:
        """Per role: our factor (position), its R^2 on its own benchmark there (Table 2a) and
        with our factors re-adjusted in the paper's order (:attr:`paper_order_r2`)."""
        rows = {}
        for role in ROLES:
            z, b = self.roles[role], self.role_benchmark(role)
            ours = np.nan if z is None else float(self.alignment.r2_table.loc[z, b])
            paper = np.nan if z is None else float(self.paper_order_r2.loc[role, b])
            rows[ROLE_NAMES[role]] = {
                "ours": z or "none",
                "R² at our position": ours,
                "R² in the paper's order": paper,
            }
        return pd.DataFrame(rows).T

    def table2a_by_role(self, paper_order: bool = False) -> pd.DataFrame:
        """Our Table 2a with rows named by the paper's factor of each role (z1 general, z2
        IFEval, z3 MATH); ``paper_order`` uses :attr:`paper_order_r2` instead."""
        if paper_order:
            return self.paper_order_r2.rename(index=PAPER_FACTOR)
        return pd.DataFrame(
            {
                PAPER_FACTOR[r]: (
                    self.alignment.r2_table.loc[z] if z else pd.Series(np.nan, index=_B)
                )
                for r, z in self.roles.items()
            }
        ).T[_B]

    @property
    def papers_domains(self) -> bool:
        """Whether the fit is on the paper's four domains (in any order)."""
        return set(self.domains) == set(PAPER_V2_FOUR)

    def summary(self) -> str:
        r = self.compute_r
        g, i = self.roles["general"], self.roles["ifeval"]
        lines = [
            f"{self.setup.label}: {self.n_in_sample:,} models in the four domains; "
            f"order {self.order}; roles "
            + ", ".join(f"{ROLE_NAMES[k]} = {v}" for k, v in self.roles.items())
        ]
        if g is not None and i is not None:
            lines.append(
                f"  r with log10 compute over {len(self.checkpoints)} base checkpoints: "
                f"general {r[g]:.2f}, IFEval {r[i]:.2f}"
            )
        lines.append(f"  authors' latent_ols vs ours: max |ΔR²| = {self.authors_ols_gap:.1e}")
        return "\n".join(lines)


# =========================================================================== cited tables
def paper_table2a() -> pd.DataFrame:
    """The paper's Table 2a (from ``paper_values.csv``): rows z1..z3, benchmark columns."""
    pv = load_paper_values()
    return pd.DataFrame(
        [[float(pv.loc[f"T2a-{z}-{b}", "value"]) for b in _B] for z in PAPER_FACTOR.values()],
        index=list(PAPER_FACTOR.values()),
        columns=_B,
    )


def authors_code_table2a() -> pd.DataFrame:
    """The R^2 table printed by the authors' ``latent_ols`` (``authors_code_values.csv``,
    find_proximal_benchmark.ipynb): rows z1..z3 in their fit's order, benchmark columns."""
    acv = authors_code_values()
    return pd.DataFrame(
        [[float(acv.loc[f"ols-r2-{z}-{b}", "value"]) for b in _B] for z in PAPER_FACTOR.values()],
        index=list(PAPER_FACTOR.values()),
        columns=_B,
    )


def authors_adjusted_weights() -> pd.Series:
    """The authors' printed z1 -> z2 weights (:func:`hca.data.authors_edge_weights`, drawn
    with their cell's arithmetic) restated under the adjusted rule of
    :func:`hca.interpret.benchmark_unit_models`, from their own printed coefficients: for
    the first edge the two rules differ by ``c (gamma_1 - 1) / gamma_2`` (``c`` the raw
    z1's coefficient in z2's regression, ``gamma`` the slopes; ``ols-coef-*`` of
    ``authors_code_values.csv``), so each value is the printed one minus that amount (the
    printed values have two decimals)."""
    acv = authors_code_values()["value"].astype(float)
    g1, g2 = acv["ols-coef-z1-mmlu_pro"], acv["ols-coef-z2-ifeval"]
    c = acv["ols-coef-z2-z1"]
    return (authors_edge_weights() - c * (g1 - 1.0) / g2).rename(
        "authors' run, adjusted rule (from their printed coefficients)"
    )


def _edges(fit, adjustment, al: Alignment) -> pd.DataFrame:
    """Per domain of ``fit``: the edge between its general and IFEval factors (whichever
    comes first is the parent), in the adjusted SCM's own scale and in benchmark points by
    both rules of :func:`hca.interpret.benchmark_unit_models`, and the IFEval factor's
    source scale."""
    pos = {r: role_position(al.benchmarks, ROLES[r]) for r in ROLES}
    g, i = pos["general"], pos["ifeval"]
    adj = dict(adjustment.models)
    units = {rule: benchmark_unit_models(fit, al, rule=rule) for rule in ("adjusted", "authors")}
    rows = {}
    for d in adj:
        row: dict[str, object] = {"direction": ""}
        for key in ("unscaled", "points", "authors_rule", "ifeval_scale", "ifeval_scale_unscaled"):
            row[key] = np.nan
        if i is not None:
            row["ifeval_scale"] = float(units["adjusted"][d].omega_sqrt[i])
            row["ifeval_scale_unscaled"] = float(adj[d].omega_sqrt[i])
        if g is not None and i is not None:
            child, parent = (i, g) if g < i else (g, i)
            row["direction"] = "general → IFEval" if g < i else "IFEval → general"
            row["unscaled"] = float(adj[d].A[child, parent])
            row["points"] = float(units["adjusted"][d].A[child, parent])
            row["authors_rule"] = float(units["authors"][d].A[child, parent])
        rows[d] = row
    return pd.DataFrame(rows).T.rename_axis("domain")


#: The columns of :func:`edge_table` that hold weights, with what each measures.
EDGE_UNITS = {
    "authors_rule": "points, the authors' rule",
    "points": "points, the adjusted rule",
    "unscaled": "the adjusted SCM's own scale",
}


def edge_table(runs: Sequence[InterpretationResults], direction: str) -> pd.DataFrame:
    """The ensemble's weights of one edge (``"general → IFEval"`` or ``"IFEval → general"``)
    per domain of the fit, beside the authors' printed z1 -> z2 weights where they have one.

    Returns
    -------
    DataFrame
        One row per domain: ``runs`` (runs with this edge), ``of`` (runs), and for every
        column of :data:`EDGE_UNITS` its ``median``, ``low`` and ``high`` over those runs
        (columns ``(<unit>, <stat>)``), ``authors`` (printed; NaN for another domain) and
        ``authors_adjusted`` (:func:`authors_adjusted_weights`).
    """
    if not runs:
        raise ValueError("edge_table: no runs")
    printed, adjusted = authors_edge_weights(), authors_adjusted_weights()
    out = {}
    for d in runs[0].edges.index:
        sel = [r.edges.loc[d] for r in runs if r.edges.loc[d, "direction"] == direction]
        row: dict[tuple[str, str], float] = {("runs", ""): len(sel), ("of", ""): len(runs)}
        for unit in EDGE_UNITS:
            v = np.array([float(e[unit]) for e in sel])
            for stat, f in (("median", np.median), ("low", np.min), ("high", np.max)):
                row[(unit, stat)] = float(f(v)) if len(v) else np.nan
        row[("authors", "")] = float(printed.get(d, np.nan))
        row[("authors_adjusted", "")] = float(adjusted.get(d, np.nan))
        out[d] = row
    table = pd.DataFrame(out).T
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    return table.rename_axis("domain")


def table2a_verdicts(table: pd.DataFrame) -> pd.DataFrame:
    """Verdict of every cell of a Table 2a (rows z1..z3 by the paper's roles, benchmark
    columns) under the T2a criterion of ``paper_values.csv``."""
    pv = load_paper_values()
    return pd.DataFrame(
        {
            b: {
                z: numeric_verdict(
                    float(table.loc[z, b]),
                    float(pv.loc[f"T2a-{z}-{b}", "value"]),
                    pv.loc[f"T2a-{z}-{b}", "tolerance"],
                )[0]
                for z in PAPER_FACTOR.values()
            }
            for b in _B
        }
    )


# =========================================================================== computation
def _roles(alignment: Alignment) -> dict[str, str | None]:
    out = {}
    for role, allowed in ROLES.items():
        i = role_position(alignment.benchmarks, allowed)
        out[role] = None if i is None else alignment.factor_names[i]
    return out


def _oos_frame(setup: Setup, oos_domains: Sequence[str]) -> pd.DataFrame:
    """The setup's v2 frame with Table 2b's other base models named in ``base_model``
    (under the authors' rule: the models whose label is the lower-cased name)."""
    frame = v2_frame(setup)
    if setup.domain_rule == "authors":
        names = {d.lower(): d for d in oos_domains}
        extra = frame["authors_label"].map(names)
        frame["base_model"] = frame["base_model"].fillna(extra)
    return frame


def _paper_order(fit, adj, x: np.ndarray, roles: dict) -> pd.DataFrame:
    """Table 2a with our raw factors in the paper's role order (NaN rows if a role is
    missing); ``adj`` is ``fit.adjust()`` and ``x`` the scores it was fitted on
    (:func:`_matrix`)."""
    if any(z is None for z in roles.values()):
        return pd.DataFrame(np.nan, index=list(ROLES), columns=_B)
    names = list(adj.r2.index)
    perm = [names.index(roles[r]) for r in ROLES]
    Z = x @ fit.unmixing_.T
    r2 = ols_adjustment(Z[:, perm], x, _B)[3]
    return r2.set_axis(list(ROLES), axis=0)


def _matrix(scores: pd.DataFrame) -> np.ndarray:
    """The array an :class:`~hca.interpret.Alignment` reads from ``scores`` (bit for bit), so
    that the scores every run of a batch shares are converted once."""
    return check_matrix(scores, name="scores", columns=_B)


def _latent_ols_gap(alignment: Alignment, x: np.ndarray, oos: Sequence[np.ndarray]) -> float:
    """Largest |ΔR²| between our tables and the authors' ``latent_ols``: z_i regressed on
    ``[1, x_B, raw z_<i]`` (in sample ``x``, every benchmark), the chosen regression applied to
    the other domains' scores ``oos`` (:func:`_matrix`, domains of at least three models) and
    scored against their raw z_i."""
    Z = alignment.raw_factors(x)
    other = [(xo, alignment.raw_factors(xo), alignment.r2(xo)) for xo in oos]
    gap = 0.0
    for i in range(len(alignment.factor_names)):
        best, best_coef = -np.inf, None
        for j in range(len(_B)):
            design = np.column_stack([np.ones(len(x)), x[:, j], Z[:, :i]])
            coef, *_ = np.linalg.lstsq(design, Z[:, i], rcond=None)
            r2 = r_squared(Z[:, i], Z[:, i] - design @ coef)
            gap = max(gap, abs(r2 - alignment.r2_table.iloc[i, j]))
            if r2 > best:
                best, best_coef, best_j = r2, coef, j
        for xo, Zo, ours in other:
            design = np.column_stack([np.ones(len(xo)), xo[:, best_j], Zo[:, :i]])
            theirs = r_squared(Zo[:, i], Zo[:, i] - design @ best_coef)
            gap = max(gap, abs(theirs - ours.iloc[i]))
    return float(gap)


def _authors_log10_compute(frame: pd.DataFrame) -> np.ndarray:
    """log10 of ``6 x #Params x BASE_MODEL_TOKENS[family]`` (find_token_size.ipynb): the
    family is the label itself where the token table has it (``gemma-2-9b``), else the label
    without its size (``llama-3.1-8b`` -> ``llama-3.1``)."""
    tokens = authors_tokens()

    def family(label):
        if pd.isna(label):
            return None
        if label in tokens.index:
            return label
        m = re.match(r"([a-z0-9.\-]+)-\d", str(label))
        return m.group(1) if m else None

    d = frame["authors_label"].map(family).map(tokens).astype(float).to_numpy()
    n = pd.to_numeric(frame["params_b"], errors="coerce").to_numpy(dtype=float)
    c = _FLOP * n * d
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(c > 0, np.log10(c), np.nan)


@dataclass(frozen=True, eq=False)
class _Checkpoints:
    """The official base checkpoints with a compute, the same in every run of a batch:
    ``table`` (``model_id``, ``base``, ``log10_compute``), their scores ``x``
    (:func:`_matrix`) and every benchmark's column ``columns``."""

    table: pd.DataFrame
    x: np.ndarray
    columns: dict


def _checkpoint_rows(frame: pd.DataFrame, setup: Setup) -> _Checkpoints:
    """Official base checkpoints with a compute (every run's factors are read on them)."""
    if setup.domain_rule == "authors":
        logc, base = _authors_log10_compute(frame), frame["authors_label"]
    else:
        logc, base = add_compute(frame)["log10_compute"].to_numpy(dtype=float), frame["base_model"]
    keep = base_checkpoint_mask(frame).to_numpy() & np.isfinite(logc)
    rows = frame.loc[keep]
    table = pd.DataFrame(
        {
            "model_id": rows["model_id"].to_numpy(),
            "base": base[keep].astype(str).to_numpy(),
            "log10_compute": logc[keep],
        }
    )
    columns = {b: rows[b].to_numpy(dtype=float) for b in _B}
    return _Checkpoints(table, _matrix(rows[_B]), columns)


def _checkpoints(alignment: Alignment, rows: _Checkpoints) -> pd.DataFrame:
    """Official base checkpoints with a compute, their oriented factors and benchmarks."""
    Z = alignment.factors(rows.x) * np.sign(alignment.slopes)
    out = rows.table.copy()
    for k, z in enumerate(alignment.factor_names):
        out[z] = Z[:, k]
    for b in _B:
        out[b] = rows.columns[b]
    return out


def _pearson_rows(A: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Pearson r of every row of ``A`` (resamples x n) with the matching row of ``c``."""
    A = A - A.mean(axis=1, keepdims=True)
    c = c - c.mean(axis=1, keepdims=True)
    return (A * c).sum(axis=1) / np.sqrt((A**2).sum(axis=1) * (c**2).sum(axis=1))


def _compute_diff(cp: pd.DataFrame, roles: dict, n_boot: int) -> dict:
    """r(IFEval-aligned) - r(general-aligned) with percentile intervals (checkpoints
    resampled with replacement, seed 0)."""
    g, i = roles["general"], roles["ifeval"]
    if g is None or i is None or len(cp) < 4:
        return {"point": np.nan, "ci95": (np.nan, np.nan), "ci80": (np.nan, np.nan)}
    c = cp["log10_compute"].to_numpy(dtype=float)
    zg, zi = cp[g].to_numpy(dtype=float), cp[i].to_numpy(dtype=float)
    point = float(np.corrcoef(zi, c)[0, 1] - np.corrcoef(zg, c)[0, 1])
    idx = np.random.default_rng(0).integers(0, len(c), size=(n_boot, len(c)))
    d = _pearson_rows(zi[idx], c[idx]) - _pearson_rows(zg[idx], c[idx])
    d = d[np.isfinite(d)]
    q = np.percentile(d, [2.5, 97.5, 10, 90])
    return {"point": point, "ci95": (float(q[0]), float(q[1])), "ci80": (float(q[2]), float(q[3]))}


def _oriented_shift(
    alignment: Alignment, frame: pd.DataFrame, pairs: pd.DataFrame, x: np.ndarray
) -> pd.DataFrame:
    """:func:`hca.interpret.instruct_shift` with every factor signed to rise with its aligned
    benchmark (the sign of its OLS slope); ``x`` the in-sample scores (:func:`_matrix`)."""
    shift = instruct_shift(alignment, frame, pairs, scale=x)
    for z, sign in zip(alignment.factor_names, np.sign(alignment.slopes)):
        shift[f"d_{z}"] = sign * shift[f"d_{z}"]
    return shift


def _runs(
    setup: Setup, settings: Settings, seeds: tuple[int, ...]
) -> tuple[InterpretationResults, ...]:
    """The chapter's results for every FastICA seed of ``seeds`` under the seed-free ``setup``
    (the fits on the settings' domains in one batch)."""
    check_settings(settings, setup)
    fit_domains, oos_domains = tuple(settings.domains), tuple(settings.oos_domains)
    X, _ = main_data(setup, fit_domains)
    frame = _oos_frame(setup, oos_domains)
    oos = {d: frame.loc[frame["base_model"] == d, _B] for d in oos_domains}
    lookup = v2_frame("careful")  # Figure 8 and the official pairs: leaderboard look-ups
    pairs = official_pairs(lookup)
    figure8 = figure8_table(lookup)
    # what every run reads, selected and converted once per batch (the same rows and arrays)
    x = _matrix(X)
    oos_x = [_matrix(scores) for scores in oos.values() if len(scores) >= 3]
    groups = frame["base_model"].isin([*oos_domains, *fit_domains])
    transfer_rows = frame.loc[groups, ["base_model", *_B]]
    ids = lookup["model_id"].isin([*pairs["base_id"], *pairs["instruct_id"]])
    pair_rows = lookup.loc[ids, ["model_id", *_B]]
    checkpoint_rows = _checkpoint_rows(frame, setup)
    out = []
    fits = main_fits(setup, seeds, fit_domains)
    for seed, fit, why in zip(seeds, fits, main_fits_steered(setup, seeds, fit_domains)):
        run_setup = setup.with_seed(seed)
        adj = fit.adjust()
        al = align(fit, X, adj)
        if list(al.feature_names) != _B:
            raise ValueError(f"interpretation: the fit's columns {al.feature_names} are not {_B}")
        roles = _roles(al)
        order_r2 = _paper_order(fit, adj, x, roles)
        cp = _checkpoints(al, checkpoint_rows)
        names = list(al.factor_names)
        compute_r = pd.Series(
            {v: float(np.corrcoef(cp[v], cp["log10_compute"])[0, 1]) for v in names + _B}
        )
        out.append(
            InterpretationResults(
                setup=run_setup,
                alignment=al,
                mixing=pd.DataFrame(adj.mixing, index=_B, columns=names),
                roles=roles,
                in_sample=X[_B].reset_index(drop=True),
                transfer=out_of_sample_r2(al, transfer_rows, oos_domains, fit_domains),
                oos_scores=oos,
                paper_order_r2=order_r2,
                authors_ols_gap=_latent_ols_gap(al, x, oos_x),
                checkpoints=cp,
                compute_r=compute_r,
                compute_diff=_compute_diff(cp, roles, settings.n_boot),
                figure8=figure8,
                instruct=_oriented_shift(al, pair_rows, pairs, x),
                edges=_edges(fit, adj, al),
                domains=fit_domains,
                oos_domains=oos_domains,
                n_boot=settings.n_boot,
                mic=float(fit.mic_),
                steered=why,
            )
        )
    return tuple(out)


#: The chapter's shape (:class:`hca.paper.shape.ChapterSpec`), declared by its ensemble's runs
#: (:func:`_runs`; the run at a setup's own seed is the ensemble's): the claims read its
#: four-domain fit (whose rounding-sensitive domains it names), and a run is typical by that
#: fit's MIC.
CHAPTER: ChapterSpec[Settings, InterpretationResults] = ChapterSpec.from_runs(
    key="interpretation",
    settings=Settings,
    runs=each_setup(_runs),
    evidence=attrgetter("steered"),
    typical_key=attrgetter("mic"),
)

#: The chapter's results under a setup, once per process (:meth:`~hca.paper.shape.ChapterSpec.run`).
run = CHAPTER.run


# =========================================================================== claims
def _other_domains(res: InterpretationResults, ids: Sequence[str]) -> dict[str, Outcome] | None:
    """Not-applicable outcomes for ``ids`` when the settings fit other domains than the
    paper's four (every fit-based claim compares with the paper's fit), else None."""
    if res.papers_domains:
        return None
    ours = f"fit on {join_words(res.domains)}"
    why = "not applicable: the settings fit other domains than the paper's four"
    return {cid: Outcome(ours, "not applicable", why) for cid in ids}


def _missing(role: str) -> Outcome:
    return Outcome(
        f"no factor aligned with {ROLE_NAMES[role]}", "not reproduced", "role missing in our fit"
    )


def _row_text(res: InterpretationResults, z: str, k: int = 3) -> str:
    row = res.unmixing().loc[z]
    top = row.abs().sort_values(ascending=False).index[:k]
    return ", ".join(f"{benchmark_label(b)} {row[b]:+.2f}" for b in top)


def _set_text(items) -> str:
    return "{" + ", ".join(benchmark_label(b) for b in items) + "}"


@claim(
    "F3a-general",
    "F3a-ifeval",
    "F3a-math",
    chapter="interpretation",
    figure="fig-interp-unmixing",
    ensemble=True,
)
def _fig3a(res: InterpretationResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    if (na := _other_domains(res, ("F3a-general", "F3a-ifeval", "F3a-math"))) is not None:
        return na
    out = {}
    for cid, role in (("F3a-general", "general"), ("F3a-ifeval", "ifeval")):
        z = res.roles[role]
        if z is None:
            out[cid] = _missing(role)
            continue
        paper, got = paper_list(rows, cid), res.dominant(z)
        v = set_verdict(got, paper)
        reason = (
            "the same dominant benchmarks"
            if v == "reproduced"
            else f"dominant {_set_text(got)} against the paper's {_set_text(paper)}"
        )
        if role == "general":
            row = res.unmixing().loc[z].abs()
            smallest = row.idxmin() == "ifeval"
            if v == "reproduced" and not smallest:
                v = "partly"
                reason = f"same set, but {benchmark_label(row.idxmin())} is smaller than IFEval"
            reason += "; IFEval's weight the smallest" if smallest else ""
        ours = f"our {z}: dominant {_set_text(got)} ({_row_text(res, z)})"
        out[cid] = Outcome(ours, v, reason, value=float(len(set(got) ^ set(paper))))
    z = res.roles["math"]
    if z is None:
        out["F3a-math"] = _missing("math")
        return out
    row = res.unmixing().loc[z].abs()
    ratio = float(row.drop("math_lvl_5").max() / row["math_lvl_5"])
    only = res.dominant(z) == ["math_lvl_5"]
    v = grade(ratio < 0.2, only)
    ours = f"our {z}: largest other weight {ratio:.2f} × MATH's ({_row_text(res, z)})"
    reason = (
        "every other weight below 0.2 × MATH's"
        if v == "reproduced"
        else f"MATH Lvl 5 alone dominates, but other weights reach {ratio:.2f} × MATH's"
        if only
        else f"{_set_text(res.dominant(z))} dominate the row"
    )
    out["F3a-math"] = Outcome(ours, v, reason, value=ratio)
    return out


@claim(chapter="interpretation", prefix="T2a-", figure="fig-interp-table2a", ensemble=True)
def _table2a(res: InterpretationResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    if (na := _other_domains(res, list(rows.index))) is not None:
        return na
    out = {}
    for cid, row in rows.iterrows():
        _, zp, col = cid.split("-", 2)
        z = res.roles[_ROLE_OF[zp]]
        if z is None:
            out[cid] = _missing(_ROLE_OF[zp])
            continue
        ours = float(res.alignment.r2_table.loc[z, col])
        v, reason = numeric_verdict(ours, float(row["value"]), row["tolerance"])
        out[cid] = Outcome(f"{ours:.3f} (our {z})", v, f"{reason}; {T2A_CONTROLS}", value=ours)
    return out


def _t2b_column(slug: str) -> str | None:
    if slug == "in_sample":
        return _IN
    return next((d for d in PAPER_OOS_DOMAINS if d.lower() == slug), None)


def _left_out(res: InterpretationResults, domain: str) -> Outcome:
    return Outcome(
        f"{domain} is not among the settings' other base models",
        "not applicable",
        f"not applicable: the settings leave {domain} out of Table 2b's base models",
    )


def not_informative_because(
    res: InterpretationResults, role: str, paper: pd.DataFrame
) -> str | None:
    """Table 2b's rule: why the out-of-sample cells of ``role`` are not informative (our
    in-sample R^2 of its factor or the paper's In Sample value is >= 0.99), or None."""
    z = res.roles[role]
    ours = float(res.transfer.r2.loc[z, _IN]) if z is not None else float("nan")
    theirs = float(paper.loc[f"T2b-{PAPER_FACTOR[role]}-in_sample", "value"])
    why = ([f"our in-sample R² {ours:.3f}"] if ours >= 0.99 else []) + (
        [f"the paper's In Sample R² {theirs:g}"] if theirs >= 0.99 else []
    )
    return " and ".join(why) + " ≥ 0.99" if why else None


def informative(res: InterpretationResults, role: str, paper: pd.DataFrame) -> bool:
    """Whether ``role``'s out-of-sample Table 2b cells are scored (a factor with the role
    exists and :func:`not_informative_because` gives no reason)."""
    return res.roles[role] is not None and not_informative_because(res, role, paper) is None


@claim(chapter="interpretation", prefix="T2b-", figure="fig-interp-table2b", ensemble=True)
def _table2b(res: InterpretationResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    if (na := _other_domains(res, list(rows.index))) is not None:
        return na
    paper = rows  # every T2b- row, the In Sample ones of the rule included
    out = {}
    for cid, row in rows.iterrows():
        _, zp, slug = cid.split("-", 2)
        role, col = _ROLE_OF[zp], _t2b_column(slug)
        if col not in res.transfer.r2.columns:
            out[cid] = _left_out(res, str(col))
            continue
        z = res.roles[role]
        if z is None:
            out[cid] = _missing(role)
            continue
        ours = float(res.transfer.r2.loc[z, col])
        n = int(res.transfer.n_models[col])
        text = f"{ours:.3f} (our {z}; {n:,} models)"
        if col != _IN and not informative(res, role, paper):
            why = not_informative_because(res, role, paper)
            out[cid] = Outcome(text, "not applicable", f"{NOT_INFORMATIVE} ({why})", value=ours)
            continue
        if not np.isfinite(ours):
            out[cid] = Outcome(
                f"no value (our {z}; {n} models)",
                "not reproduced",
                "fewer than 3 models in this domain",
            )
            continue
        v, reason = numeric_verdict(ours, float(row["value"]), row["tolerance"])
        out[cid] = Outcome(text, v, reason, value=ours)
    return out


@claim("S4-transfer-poor", chapter="interpretation", figure="fig-interp-table2b", ensemble=True)
def _transfer_poor(res: InterpretationResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    if (na := _other_domains(res, ["S4-transfer-poor"])) is not None:
        return na
    paper = load_paper_values()
    named = [d for d in PAPER_OOS_DOMAINS if d.lower() in paper_list(rows, "S4-transfer-poor")]
    named = [d for d in named if d in res.oos_domains]
    cells: list[str] = []
    poor_named: list[str] = []
    poor_other: list[str] = []
    drop_named: list[str] = []
    for role in ("general", "ifeval"):
        if not informative(res, role, paper):
            continue
        z = res.roles[role]
        r = res.transfer.r2.loc[z]
        for d in res.oos_domains:
            if not np.isfinite(r[d]):
                continue
            cells.append(f"{ROLE_NAMES[role]} on {d} {r[d]:.2f}")
            if r[d] < 0.5:
                (poor_named if d in named else poor_other).append(f"{ROLE_NAMES[role]}/{d}")
            elif d in named and r[d] <= r[_IN] - 0.2:
                drop_named.append(f"{ROLE_NAMES[role]}/{d}")
    if not cells:
        reason = "every general/IFEval cell is not applicable"
        return {
            "S4-transfer-poor": Outcome("no informative Table 2b cell", "not reproduced", reason)
        }
    v = grade(bool(poor_named), bool(poor_other or drop_named))
    shown = [c for c in cells if any(d in c for d in named)]
    reason = (
        f"R² < 0.5 on {', '.join(poor_named)}"
        if poor_named
        else f"R² < 0.5 only on {', '.join(poor_other)}"
        if poor_other
        else f"R² ≥ 0.2 below in sample on {', '.join(drop_named)}"
        if drop_named
        else "the alignment transfers to every informative domain"
    )
    return {"S4-transfer-poor": Outcome("; ".join(shown), v, reason, value=float(len(poor_named)))}


def _figure8_cell(cid: str) -> tuple[str, str, str]:
    rest = cid[len("F8-") :]
    model = next(m for m in FIGURE8_CHECKPOINTS if rest.startswith(m + "-"))
    config, col = rest[len(model) + 1 :].split("-", 1)
    return model, ("Base" if config == "base" else "Official Instruct"), col


@claim(chapter="interpretation", prefix="F8-", figure="fig-interp-figure8")
def _fig8(res: InterpretationResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    out = {}
    for cid, row in rows.iterrows():
        model, config, col = _figure8_cell(cid)
        ours = float(res.figure8.loc[(model, config), col])
        v, reason = numeric_verdict(ours, float(row["value"]), row["tolerance"])
        out[cid] = Outcome(f"{ours:.3f}", v, reason, value=ours)
    return out


def instruct_changes(figure8: pd.DataFrame) -> pd.DataFrame:
    """Official Instruct - Base of Figure 8's rows (raw accuracy), one row per model."""
    cols = list(FIGURE8_COLUMNS)
    inst = figure8.xs("Official Instruct", level="config")[cols]
    base = figure8.xs("Base", level="config")[cols]
    return (inst - base).astype(float)


@claim("D-instruct-minimal", chapter="interpretation", figure="fig-interp-figure8")
def _instruct(res: InterpretationResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    d = instruct_changes(res.figure8)
    others = d[["bbh", "gpqa", "musr", "mmlu_pro"]].abs().max(axis=1)
    ok = bool((d["ifeval"] >= 0.3).all() and (others <= 0.10).all())
    largest = bool((d.abs().idxmax(axis=1) == "ifeval").all())
    ours = "; ".join(
        f"{m}: IFEval {d.loc[m, 'ifeval']:+.2f}, BBH/GPQA/MUSR/MMLU-PRO within {others[m]:.2f}"
        for m in d.index
    )
    reason = (
        "IFEval gains ≥ 0.3 and the other four move ≤ 0.10 in every pair"
        if ok
        else "IFEval's gain is the largest change in every pair, but "
        + (
            "a gain is below 0.3"
            if (d["ifeval"] < 0.3).any()
            else "another benchmark moves more than 0.10"
        )
        if largest
        else "IFEval's gain is not the largest change in every pair"
    )
    v = grade(ok, largest)
    return {"D-instruct-minimal": Outcome(ours, v, reason, value=float(others.max()))}


def _compute_text(res: InterpretationResults) -> str:
    names = list(res.alignment.factor_names)
    return (
        ", ".join(
            f"{z} ({benchmark_label(b)}-aligned) r = {res.compute_r[z]:.2f}"
            for z, b in zip(names, res.alignment.benchmarks)
        )
        + f" ({len(res.checkpoints)} base checkpoints)"
    )


@claim("D-general-compute", chapter="interpretation", figure="fig-interp-compute", ensemble=True)
def _general_compute(res: InterpretationResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    if (na := _other_domains(res, ["D-general-compute"])) is not None:
        return na
    g, i = res.roles["general"], res.roles["ifeval"]
    if g is None:
        return {"D-general-compute": _missing("general")}
    names = list(res.alignment.factor_names)
    r = res.compute_r[names]
    top = r.idxmax() == g
    root = names[0] == g
    beats_ifeval = i is not None and r[g] > r[i]
    v = grade(root and top, top or (root and beats_ifeval))
    reason = (
        "the general factor is the root and tracks compute most"
        if v == "reproduced"
        else f"the general factor tracks compute most but is {g}, not the root z1"
        if top
        else "the general factor is the root but another factor tracks compute more"
        if root
        else "another factor tracks compute more and the general factor is not the root"
    )
    ours = f"{_compute_text(res)}; our order {res.order}"
    return {"D-general-compute": Outcome(ours, v, reason, value=float(r[g]))}


@claim("I-z2-compute", chapter="interpretation", figure="fig-interp-compute", ensemble=True)
def _ifeval_compute(res: InterpretationResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    if (na := _other_domains(res, ["I-z2-compute"])) is not None:
        return na
    g, i = res.roles["general"], res.roles["ifeval"]
    if g is None or i is None:
        return {"I-z2-compute": _missing("general" if g is None else "ifeval")}
    d = res.compute_diff
    v = interval_verdict(d["point"], d["ci95"], d["ci80"], sign=-1)
    ours = (
        f"r(IFEval-aligned {i}) − r(general {g}) = {d['point']:+.2f}, 95 % "
        f"[{d['ci95'][0]:+.2f}, {d['ci95'][1]:+.2f}], 80 % [{d['ci80'][0]:+.2f}, "
        f"{d['ci80'][1]:+.2f}] ({len(res.checkpoints)} checkpoints, {res.n_boot} resamples)"
    )
    reason = (
        "the 95 % interval lies below 0"
        if v == "reproduced"
        else "only the 80 % interval lies below 0"
        if v == "partly"
        else "the interval reaches 0"
    )
    return {"I-z2-compute": Outcome(ours, v, reason, value=d["point"])}


@claim("D-z1-positive", chapter="interpretation", figure="fig-interp-mixing", ensemble=True)
def _z1_positive(res: InterpretationResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    if (na := _other_domains(res, ["D-z1-positive"])) is not None:
        return na
    g = res.roles["general"]
    if g is None:
        return {"D-z1-positive": _missing("general")}
    col = res.oriented_mixing(g)
    n_pos = int((col > 0).sum())
    neg = [benchmark_label(b) for b in _B if col[b] <= 0]
    urow = res.unmixing().loc[g]
    signs = "".join("+" if urow[b] > 0 else "−" for b in _B)
    v = grade(n_pos >= 5, n_pos == 4)
    ours = (
        f"our {g}: mixing loadings > 0 on {n_pos} of 6"
        + (f" (not {', '.join(neg)})" if neg else "")
        + f"; unmixing row signs {signs} "
        f"({', '.join(benchmark_label(b) for b in _B)})"
    )
    reason = f"{n_pos} of 6 loadings positive"
    return {"D-z1-positive": Outcome(ours, v, reason, value=float(n_pos))}


@claim("D-z2-mixing", chapter="interpretation", figure="fig-interp-mixing", ensemble=True)
def _z2_mixing(res: InterpretationResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    if (na := _other_domains(res, ["D-z2-mixing"])) is not None:
        return na
    i = res.roles["ifeval"]
    if i is None:
        return {"D-z2-mixing": _missing("ifeval")}
    col = res.mixing[i].abs()
    four = paper_list(rows, "D-z2-mixing")
    ratios = col[four] / col["ifeval"]
    worst = float(ratios.max())
    v = grade(worst <= 0.25, worst <= 0.5)
    ours = f"our {i}: |loading| / IFEval's = " + ", ".join(
        f"{benchmark_label(b)} {ratios[b]:.2f}" for b in four
    )
    reason = f"largest ratio {worst:.2f} ({benchmark_label(ratios.idxmax())})"
    return {"D-z2-mixing": Outcome(ours, v, reason, value=worst)}


# =========================================================================== the page's words
#: How the prose names each setup.
SETUP_WORDS = {"authors": "the authors' setup", "careful": "the careful setup"}
_GI, _IG = "general → IFEval", "IFEval → general"


def _spread(values: Sequence[float], digits: int = 2, what: str = "runs") -> str:
    """A fit-based quantity over the runs of an ensemble: its median and range."""
    vals = [float(v) for v in values if np.isfinite(v)]
    if not vals:
        return "not measured in any run"
    if len(vals) == 1:
        return f"{number(vals[0], digits)} (one run)"
    return median_range(vals, what=what, digits=digits)


def _median(values: Sequence[float]) -> float:
    """The median of the finite values (NaN when there is none)."""
    v = [float(x) for x in values if np.isfinite(x)]
    return float(np.median(v)) if v else float("nan")


def _modal(values: Sequence[object]) -> tuple[object, int]:
    """The most frequent value (first seen on a tie) and how often it occurs."""
    counts: dict[object, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    best = max(counts, key=lambda k: counts[k])
    return best, counts[best]


def _role_value(run: InterpretationResults, role: str, fn) -> float:
    z = run.roles[role]
    return float("nan") if z is None else float(fn(run, z))


def _complete(run: InterpretationResults) -> bool:
    return all(z is not None for z in run.roles.values())


def _root_general(run: InterpretationResults) -> bool:
    return run.roles["general"] == run.alignment.factor_names[0]


def _typical(page: Any, s: str) -> str:
    return f"typical run, seed {page.results[s].setup.ica_seed}"


def edge_frame(page: Any, setup: str) -> pd.DataFrame:
    """Table of the general/IFEval edge under ``setup`` for the page: per domain, the
    authors' printed weight and ours (median and range over the runs with the edge) in
    points by the authors' rule, by the adjusted rule, and in the unscaled SCM."""
    runs = page.ensembles[setup]
    rows = {}
    for direction in (_GI, _IG):
        t = edge_table(runs, direction)
        for d, r in t.iterrows():
            if int(r[("runs", "")]) == 0:
                continue
            k = int(r[("runs", "")])
            rec = {"edge": direction, "runs with it": k_of_n(k, int(r[("of", "")]))}
            rec["authors' printed (points, their rule)"] = (
                number(r[("authors", "")], 2) if direction == _GI and d in _printed() else "–"
            )
            for unit, head in (
                ("authors_rule", "ours, points, authors' rule"),
                ("points", "ours, points, adjusted rule"),
                ("unscaled", "ours, unscaled"),
            ):
                rec[head] = median_range(
                    median=r[(unit, "median")],
                    low=r[(unit, "low")],
                    high=r[(unit, "high")],
                    n=k,
                    what="",
                    digits=2,
                )
            rows[(d, direction)] = rec
    out = pd.DataFrame(rows).T
    out.index = [d for d, _ in out.index]
    return out.rename_axis("domain")


def _printed() -> dict[str, float]:
    return {str(k): float(v) for k, v in authors_edge_weights().items()}


def _source_scales() -> dict[str, float]:
    """The source weights ε2 -> z2 the authors' drawn graphs print (``scale-z2-*``)."""
    acv = authors_code_values()
    rows = acv[acv["id"].str.startswith("scale-z2-")]
    return {i[len("scale-z2-") :]: float(v) for i, v in zip(rows["id"], rows["value"])}


def _edge_words(page: Any) -> dict[str, str]:
    """The sentences of the edge-weight section."""
    out: dict[str, str] = {}
    printed = _printed()
    adjusted = authors_adjusted_weights()
    acv = authors_code_values()["value"].astype(float)
    shift = float(
        acv["ols-coef-z2-z1"] * (acv["ols-coef-z1-mmlu_pro"] - 1.0) / acv["ols-coef-z2-ifeval"]
    )
    out["edge_printed"] = join_words(f"{d} {number(w, 2)}" for d, w in printed.items())
    out["edge_shift"] = number(shift, 2)
    out["edge_printed_adjusted"] = join_words(f"{d} {number(w, 2)}" for d, w in adjusted.items())
    paper = float(load_paper_values().loc["F4-llama3-weight", "value"])
    paper_scale = float(load_paper_values().loc["F4-llama3-scale", "value"])
    out["edge_paper"] = number(paper, 2)
    out["scale_paper"] = number(paper_scale, 0)
    drawn = _source_scales()
    out["scale_drawn"] = number(abs(drawn.get("Llama-3-8B", np.nan)), 0) if drawn else "–"
    said = []
    for s in page.setups:
        runs = page.ensembles[s]
        n = len(runs)
        fwd, back = edge_table(runs, _GI), edge_table(runs, _IG)
        k_fwd = int(fwd[("runs", "")].max())
        k_back = int(back[("runs", "")].max())
        who = SETUP_WORDS[s].capitalize()
        if k_fwd:
            both = [d for d in fwd.index if d in printed and fwd.loc[d, ("runs", "")] > 0]
            ratio = [fwd.loc[d, ("authors_rule", "median")] / printed[d] for d in both]
            text = f"{who}: the general factor comes before IFEval in {k_of_n(k_fwd, n, 'runs')}."
            if ratio:
                text += (
                    " In the authors' units and by their rule, the medians of our weights are "
                    f"{number(min(ratio), 2)} to {number(max(ratio), 2)} times their printed ones."
                )
            out[f"edge_{s}"] = text
        elif not k_back:
            text = f"{who}: no run has both a general and an IFEval factor."
        else:
            first = sum(r.alignment.benchmarks[0] == "ifeval" for r in runs)
            text = f"{who}: IFEval comes first in {k_of_n(first, n, 'runs')}"
            text += ", so no run has a general → IFEval edge."
            if k_back:
                text += (
                    f" The reverse edge exists in the {count(k_back, 'run')} with a general factor."
                )
                lo = float(back[("authors_rule", "median")].min())
                hi = float(back[("authors_rule", "median")].max())
                alo = float(back[("points", "median")].min())
                ahi = float(back[("points", "median")].max())
                text += (
                    f" Its weight, IFEval → general, has medians of {number(lo, 2)}"
                    f" to {number(hi, 2)} across the domains in the authors' units and by their"
                    f" rule, and {number(alo, 2)} to {number(ahi, 2)} by the adjusted rule."
                )
            out[f"edge_{s}"] = text
        if "Llama-3-8B" in runs[0].edges.index:
            sc_ = [float(r.edges.loc["Llama-3-8B", "ifeval_scale"]) for r in runs]
            raw = [float(r.edges.loc["Llama-3-8B", "ifeval_scale_unscaled"]) for r in runs]
            said.append(
                f"Under {SETUP_WORDS[s]}, our IFEval factor's source weight in Llama-3-8B is "
                f"{_spread(sc_, 1)} in points and {_spread(raw, 1)} unscaled."
            )
    out["scale_ours"] = " ".join(said) if said else "The settings' fit has no Llama-3-8B domain."
    for s in SETUP_NAMES:
        out.setdefault(
            f"edge_{s}", f"{SETUP_WORDS[s].capitalize()} is not run under these settings."
        )
    return out


#: The per-setup phrases of :func:`page_words` (each key prefixed with the setup's name).
_SETUP_KEYS = (
    "order",
    "order_runs",
    "n",
    "root",
    "rg",
    "ri",
    "ncp",
    "ci",
    "t2a",
    "math_ratio",
    "g_pos",
    "i_ratio",
    "typical",
    "g_bbh",
    "g_mmlu",
    "m_math",
    "m_if",
    "i_if",
    "general_r2_own",
    "general_r2_paper",
    "ifeval_r2_own",
    "ifeval_r2_paper",
    "math_r2_own",
    "math_r2_paper",
    "max_move",
    "g_q05",
    "g_l1b",
    "if_insample",
    "npairs",
    "if_largest",
    "if_med",
    "g_med",
)


def page_words(page: Any) -> dict[str, str]:
    """Every phrase the chapter's prose quotes, computed from its page
    (:func:`hca.paper.scorecard.chapter_page`): fit-based numbers as ensemble medians with
    ranges, counts of runs as "k of n", one run set per phrase; a setup the settings do not
    run gets a phrase that says so."""
    out: dict[str, str] = {}
    book = "a setup not run under these settings"
    for s in SETUP_NAMES:
        if s not in page.setups:
            for key in _SETUP_KEYS:
                out[f"{s}_{key}"] = book
            continue
        runs, typ = page.ensembles[s], page.results[s]
        n = len(runs)
        out[f"{s}_typical"] = _typical(page, s)
        out[f"{s}_order"] = typ.order
        k = sum(r.order == typ.order for r in runs)
        out[f"{s}_order_runs"] = k_of_n(k, n, "runs")
        out[f"{s}_n"] = count(typ.n_in_sample, "model")
        out[f"{s}_root"] = k_of_n(sum(_root_general(r) for r in runs), n, "runs")
        out[f"{s}_rg"] = _spread(
            [_role_value(r, "general", lambda r, z: r.compute_r[z]) for r in runs]
        )
        out[f"{s}_ri"] = _spread(
            [_role_value(r, "ifeval", lambda r, z: r.compute_r[z]) for r in runs]
        )
        out[f"{s}_ncp"] = count(len(typ.checkpoints), "official base checkpoint")
        ci = typ.compute_diff["ci95"]
        out[f"{s}_ci"] = (
            f"[{number(ci[0], 2)}, {number(ci[1], 2)}] ({_typical(page, s)})"
            if np.isfinite(ci[0])
            else "not measured"
        )
        rep = [
            int((table2a_verdicts(r.table2a_by_role()) == "reproduced").sum().sum())
            if _complete(r) and r.papers_domains
            else np.nan
            for r in runs
        ]
        out[f"{s}_t2a"] = _spread(rep, 0)

        def math_ratio(r: InterpretationResults, z: str) -> float:
            row = r.unmixing().loc[z].abs()
            return float(row.drop("math_lvl_5").max() / row["math_lvl_5"])

        def i_ratio(r: InterpretationResults, z: str) -> float:
            col = r.mixing[z].abs()
            return float((col[["bbh", "gpqa", "musr", "mmlu_pro"]] / col["ifeval"]).max())

        out[f"{s}_math_ratio"] = _spread([_role_value(r, "math", math_ratio) for r in runs])
        out[f"{s}_g_pos"] = _spread(
            [
                _role_value(r, "general", lambda r, z: (r.oriented_mixing(z) > 0).sum())
                for r in runs
            ],
            0,
        )
        out[f"{s}_i_ratio"] = _spread([_role_value(r, "ifeval", i_ratio) for r in runs])
        for role, b, key in (
            ("general", "bbh", "g_bbh"),
            ("general", "mmlu_pro", "g_mmlu"),
            ("math", "math_lvl_5", "m_math"),
            ("math", "ifeval", "m_if"),
            ("ifeval", "ifeval", "i_if"),
        ):
            out[f"{s}_{key}"] = _spread(
                [
                    _role_value(r, role, lambda r, z, b=b: r.alignment.r2_table.loc[z, b])
                    for r in runs
                ]
            )
        for role in ROLES:
            for col, key in (("R² at our position", "own"), ("R² in the paper's order", "paper")):
                out[f"{s}_{role}_r2_{key}"] = _spread(
                    [float(r.position_r2().loc[ROLE_NAMES[role], col]) for r in runs]
                )
        moves = [
            float(
                (r.position_r2()["R² in the paper's order"] - r.position_r2()["R² at our position"])
                .abs()
                .max()
            )
            for r in runs
        ]
        out[f"{s}_max_move"] = _spread(moves)
        for d, key in (("Qwen2.5-0.5B", "g_q05"), ("Llama-3.2-1B", "g_l1b")):
            out[f"{s}_{key}"] = (
                _spread(
                    [
                        _role_value(r, "general", lambda r, z, d=d: r.transfer.r2.loc[z, d])
                        for r in runs
                    ]
                )
                if d in typ.oos_domains
                else f"not measured ({d} is not among the settings' other base models)"
            )
        out[f"{s}_if_insample"] = _spread(
            [_role_value(r, "ifeval", lambda r, z: r.transfer.r2.loc[z, _IN]) for r in runs], 3
        )
        i, g = typ.roles["ifeval"], typ.roles["general"]
        pairs = len(typ.instruct)
        out[f"{s}_npairs"] = count(pairs, "official pair")
        out[f"{s}_if_largest"] = (
            k_of_n(int((typ.instruct["largest"] == i).sum()), pairs, "pairs")
            if i is not None
            else "none of the pairs (no IFEval factor)"
        )
        out[f"{s}_if_med"] = "–" if i is None else number(typ.instruct[f"d_{i}"].median(), 2)
        out[f"{s}_g_med"] = "–" if g is None else number(typ.instruct[f"d_{g}"].median(), 2)
    out.update(_edge_words(page))
    gaps = [r.authors_ols_gap for s in page.setups for r in page.ensembles[s]]
    out["ols_gap"] = f"{max(gaps):.0e}"
    out["ols_runs"] = count(len(gaps), "run")
    code = [authors_code_table2a().loc[z].idxmax() for z in PAPER_FACTOR.values()]
    out["code_order"] = alignment_text(code)
    out["code_t2a"] = str(
        int((table2a_verdicts(authors_code_table2a()) == "reproduced").sum().sum())
    )
    out["domains"] = join_words(page.settings.domains)
    return out


def answer(page: Any) -> str:
    """The chapter's opening paragraph (MyST), written from its page: what the paper reads
    into the three factors, what holds under each setup run (ensemble counts and medians),
    and why the setups differ from the paper, with links to the sections that show it."""
    st = page.settings
    where = (
        "its four-domain fit"
        if set(st.domains) == set(PAPER_V2_FOUR)
        else f"a fit on {join_words(st.domains)} (the settings' domains, not the paper's four)"
    )
    out = [
        f"Section 4 of the paper reads the three factors of {where} as capabilities: a general "
        "one (BBH, MMLU-Pro) at the root, driven by pretraining compute, then instruction "
        "following (IFEval), then mathematics (MATH Lvl 5)."
    ]
    roots, tracks = [], []
    for s in page.setups:
        runs = page.ensembles[s]
        n = len(runs)
        full = sum(_complete(r) for r in runs)
        order, k = _modal([r.order for r in runs])
        root = sum(_root_general(r) for r in runs)
        roots.append(root)
        content = (
            "all three factors" if full == n else f"all three factors in {k_of_n(full, n, 'runs')}"
        )
        out.append(
            f"Under {SETUP_WORDS[s]} our alignment finds {content}, ordered {order} "
            f"in {k_of_n(k, n, 'runs')}; the general factor is the root in {k_of_n(root, n)}."
        )
        rg = [_role_value(r, "general", lambda r, z: r.compute_r[z]) for r in runs]
        ri = [_role_value(r, "ifeval", lambda r, z: r.compute_r[z]) for r in runs]
        tracks.append((s, rg, ri))
    if any(root < len(page.ensembles[s]) for root, s in zip(roots, page.setups)):
        out.append(
            "The factors' content holds but their order does not, which the recovery chapter "
            "traces to the domains and the fit; every number that depends on a factor's "
            "position moves with it ({ref}`why <interpretation-why-differ>`)."
        )

    more = [s for s, rg, ri in tracks if _median(rg) > _median(ri)]
    if more:
        pairs = join_words(
            f"{number(_median(rg), 2)} against {number(_median(ri), 2)} under {SETUP_WORDS[s]}"
            for s, rg, ri in tracks
            if s in more
        )
        out.append(
            "The general factor tracks pretraining compute more closely than the IFEval "
            f"factor (median r {pairs})."
        )
    else:
        out.append(
            "The general factor does not track pretraining compute more than the IFEval factor."
        )
    paper = float(load_paper_values().loc["F4-llama3-weight", "value"])
    present, absent = [], []
    for s in page.setups:
        runs = page.ensembles[s]
        if "Llama-3-8B" not in runs[0].edges.index:
            continue
        way = [r.edges.loc["Llama-3-8B", "direction"] for r in runs]
        w = [
            float(r.edges.loc["Llama-3-8B", "authors_rule"]) for r, d in zip(runs, way) if d == _GI
        ]
        if w:
            present.append(f"{_spread(w)} under {SETUP_WORDS[s]}")
        else:
            absent.append(SETUP_WORDS[s])
    link = " ({ref}`the weights <interpretation-edges>`)."
    head = f"In the authors' units, the paper's general → IFEval weight of {number(paper, 2)}"
    if present:
        tail = f", and has no counterpart under {join_words(absent)}" if absent else ""
        out.append(f"{head} in Llama-3-8B compares with {join_words(present)}{tail}{link}")
    elif absent:
        out.append(f"{head} in Llama-3-8B has no counterpart under {join_words(absent)}{link}")
    return " ".join(out)
