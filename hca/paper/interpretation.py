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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter

import numpy as np
import pandas as pd

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
    share_text,
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
    main_fit,
    main_fits,
    main_fits_steered,
    seed_refits,
    v2_frame,
)
from hca.paper.setups import SETUP_NAMES, Setup
from hca.paper.shape import ChapterSpec, each_setup
from hca.stability import fit_record
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
    "authors_edge_comparison",
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
    """Repetition counts (defaults: the book's).

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
        FastICA seeds of :func:`hca.paper.replication.seed_refits` (how often the general
        factor is the root, how stable the order is).
    n_boot : int
        Bootstrap resamples of the base checkpoints for I-z2-compute.
    """

    setups: tuple[str, ...] = SETUP_NAMES  # the setups to run
    n_seeds: int = 20  # FastICA seeds of the chapter's ensemble
    n_seeds_more: int = 40  # the larger ensemble near a threshold
    seeds: tuple[int, ...] = tuple(range(10))
    n_boot: int = 2000


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
    seed_alignments : tuple
        The alignment (benchmark per factor) of every refit of :attr:`seeds`.
    seeds : tuple of int
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
    seed_alignments: tuple
    seeds: tuple
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

    def seed_share(self, predicate) -> tuple[int, int]:
        """(refits whose alignment satisfies ``predicate``, refits)."""
        return sum(bool(predicate(a)) for a in self.seed_alignments), len(self.seed_alignments)

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


def _edge_weight(weights: Mapping[str, float], al: Sequence[str], domain: str) -> tuple:
    """The general -> IFEval weight of one fit in ``domain`` (``w[<domain>] z<j>->z<i>``
    of :func:`hca.stability.fit_record`) or None, with the order when there is none."""
    pos = {r: role_position(al, ROLES[r]) for r in ROLES}
    g, i = pos["general"], pos["ifeval"]
    if g is None or i is None:
        return None, "no general or no IFEval factor"
    if g > i:
        back = weights.get(f"w[{domain}] z{i + 1}->z{g + 1}")
        tail = f" (the edge runs IFEval → general, weight {back:.2f})" if back is not None else ""
        return None, f"IFEval comes before the general factor{tail}"
    return float(weights[f"w[{domain}] z{g + 1}->z{i + 1}"]), ""


def authors_edge_comparison(res: InterpretationResults) -> pd.DataFrame:
    """The authors' printed z1 -> z2 weights (:func:`hca.data.authors_edge_weights`; their
    order MMLU-PRO -> IFEval -> MATH) beside our general -> IFEval edge in the same domain
    under ``res``'s setup: in the chapter's run, and its median over the seed refits that
    have the edge, with the reason where there is no such edge.

    Returns
    -------
    DataFrame
        One row per domain: ``authors``, ``ours``, ``seeds_with_edge`` (``"k of n"``),
        ``seeds_median`` (NaN without one) and ``why`` (empty when our run has the edge).
    """
    printed = authors_edge_weights()
    own = fit_record(main_fit(res.setup))
    al = tuple(own["alignment"])
    records = seed_refits(res.setup, res.seeds).records
    rows = {}
    for domain, theirs in printed.items():
        ours, why = _edge_weight(own, al, domain)
        per_seed = [
            _edge_weight(rec, tuple(rec["alignment"]), domain)[0]
            for rec in records.to_dict("records")
        ]
        have = [w for w in per_seed if w is not None]
        rows[domain] = {
            "authors": float(theirs),
            "ours": np.nan if ours is None else ours,
            "seeds_with_edge": f"{len(have)} of {len(per_seed)}",
            "seeds_median": float(np.median(have)) if have else np.nan,
            "why": "" if ours is not None else f"no such edge: order {alignment_text(al)}; {why}",
        }
    return pd.DataFrame(rows).T.rename_axis("domain")


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


def _oos_frame(setup: Setup) -> pd.DataFrame:
    """The setup's v2 frame with Table 2b's seven base models named in ``base_model``."""
    frame = v2_frame(setup)
    if setup.domain_rule == "authors":
        names = {d.lower(): d for d in PAPER_OOS_DOMAINS}
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
    (the four-domain fits in one batch)."""
    X, _ = main_data(setup)
    frame = _oos_frame(setup)
    oos = {d: frame.loc[frame["base_model"] == d, _B] for d in PAPER_OOS_DOMAINS}
    lookup = v2_frame("careful")  # Figure 8 and the official pairs: leaderboard look-ups
    pairs = official_pairs(lookup)
    figure8 = figure8_table(lookup)
    records = seed_refits(setup, settings.seeds).records
    seed_alignments = tuple(tuple(a) for a in records["alignment"])
    # what every run reads, selected and converted once per batch (the same rows and arrays)
    x = _matrix(X)
    oos_x = [_matrix(scores) for scores in oos.values() if len(scores) >= 3]
    groups = frame["base_model"].isin([*PAPER_OOS_DOMAINS, *PAPER_V2_FOUR])
    transfer_rows = frame.loc[groups, ["base_model", *_B]]
    ids = lookup["model_id"].isin([*pairs["base_id"], *pairs["instruct_id"]])
    pair_rows = lookup.loc[ids, ["model_id", *_B]]
    checkpoint_rows = _checkpoint_rows(frame, setup)
    out = []
    for seed, fit, why in zip(seeds, main_fits(setup, seeds), main_fits_steered(setup, seeds)):
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
                transfer=out_of_sample_r2(al, transfer_rows, PAPER_OOS_DOMAINS, PAPER_V2_FOUR),
                oos_scores=oos,
                paper_order_r2=order_r2,
                authors_ols_gap=_latent_ols_gap(al, x, oos_x),
                checkpoints=cp,
                compute_r=compute_r,
                compute_diff=_compute_diff(cp, roles, settings.n_boot),
                figure8=figure8,
                instruct=_oriented_shift(al, pair_rows, pairs, x),
                seed_alignments=seed_alignments,
                seeds=tuple(settings.seeds),
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
    paper = rows  # every T2b- row, the In Sample ones of the rule included
    out = {}
    for cid, row in rows.iterrows():
        _, zp, slug = cid.split("-", 2)
        role, col = _ROLE_OF[zp], _t2b_column(slug)
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
    paper = load_paper_values()
    named = [d for d in PAPER_OOS_DOMAINS if d.lower() in paper_list(rows, "S4-transfer-poor")]
    cells: list[str] = []
    poor_named: list[str] = []
    poor_other: list[str] = []
    drop_named: list[str] = []
    for role in ("general", "ifeval"):
        if not informative(res, role, paper):
            continue
        z = res.roles[role]
        r = res.transfer.r2.loc[z]
        for d in PAPER_OOS_DOMAINS:
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
    g, i = res.roles["general"], res.roles["ifeval"]
    if g is None:
        return {"D-general-compute": _missing("general")}
    names = list(res.alignment.factor_names)
    r = res.compute_r[names]
    top = r.idxmax() == g
    root = names[0] == g
    beats_ifeval = i is not None and r[g] > r[i]
    k, n = res.seed_share(lambda a: a[0] in ROLES["general"])
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
    ours = f"{_compute_text(res)}; general factor at the root in {share_text(k, n)}"
    return {"D-general-compute": Outcome(ours, v, reason, value=float(r[g]))}


@claim("I-z2-compute", chapter="interpretation", figure="fig-interp-compute", ensemble=True)
def _ifeval_compute(res: InterpretationResults, rows: pd.DataFrame) -> dict[str, Outcome]:
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
