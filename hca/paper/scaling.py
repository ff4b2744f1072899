"""The scaling chapter's analysis (Appendices D and F): sigmoid laws and the effect of
fine-tuning, under either setup.

The paper fits a sigmoid law in pretraining compute with a fine-tuning shift to the officially
released models (Figures 7 and 14), shows that fine-tunes of bigger bases score higher
(Figure 12), and estimates the average effect of fine-tuning by backdoor adjustment over
compute, for all models and for Llama- and Qwen-based ones (Figure 13). :func:`run` computes
our side of these claims under one setup (:mod:`hca.paper.setups`):

``authors``
    ``scaling_law.ipynb`` of the authors' public code (hlzhang109/causal-eval @248059c), as
    exactly as public data allow (:func:`hca.causal.authors_scaling_frame`): the official
    providers' rows typed "pretrained" (T = 0) or "fine-tuned on domain-specific datasets"
    (T = 1), precision duplicates kept, C = 6 x the model's own parameters x its family's
    tokens (``BASE_MODEL_TOKENS``), exact strata of C, the sigmoid law by their ``curve_fit``.
    Their estimators have no interval; ours is a cluster bootstrap by their base-model label.
    The Llama/Qwen split (Figure 13b-c, Figure 14's rows) is not in their code: the family
    label starting with ``llama`` / ``qwen`` is our reconstruction, as is Figure 12 from
    their Feb 2025 ``Qwen_illustrate`` notebook (Qwen2.5 0.5B/7B/14B rows matched by name).
``careful``
    This book's analysis: every attributed model, T = 1 for every non-pretrained type (chat
    models and merges included) with the name-marker corrections and one hand-checked
    override, C from the *base model's* parameters and tokens, a cluster bootstrap by base
    model; Figure 12 from the three families with the most fine-tunes.

:func:`bridge` walks from the first to the second one change at a time (the evidence for why
their estimates differ).

:class:`Settings` holds what a reader may change: the setups, the two lineages of Figures 13b-c
and 14 (the paper's Llama and Qwen) and the bootstrap counts. :func:`answer` writes the
chapter's opening paragraph and :func:`numbers` every number its prose quotes, both from a
:class:`hca.paper.scorecard.ChapterPage`, so that a page run with other settings says what those
settings give.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from hca.attribution.authors import authors_base_model, authors_token_families
from hca.attribution.compute import pretraining_tokens
from hca.causal import (
    PARAM_NAMES,
    ATEPanel,
    SigmoidPanel,
    ate_backdoor,
    ate_ipw,
    ate_panel,
    authors_scaling_frame,
    base_lineage,
    family_size_means,
    fit_sigmoid_panel,
    ipw_balance,
    rows_by_name,
    scaling_frame,
    size_monotonicity,
    stratum_effects,
)
from hca.causal.sigmoid import AUTHORS_LOG_OFFSET, MIN_POINTS_SIGMOID
from hca.data import V2_BENCHMARKS, authors_code_values, load_paper_values
from hca.data.registry import benchmark_label
from hca.paper.cache import cached
from hca.paper.claims import Outcome, claim, grade, interval_verdict
from hca.paper.glue import times_text
from hca.paper.replication import v2_authors, v2_frame
from hca.paper.setups import SETUP_NAMES, SETUPS, Setup, get_setup
from hca.paper.shape import ChapterSpec, check_settings
from hca.paper.words import count, join_words, k_of_n

__all__ = [
    "printed_sigmoid",
    "Settings",
    "ScalingResults",
    "Bridge",
    "run",
    "bridge",
    "setups_table",
    "comparison_table",
    "printed_values",
    "lineage_names",
    "contrast_label",
    "answer",
    "numbers",
    "KNOWLEDGE",
    "OTHER",
    "PAPER_LINEAGES",
    "MIN_BOOT",
    "SCALING_OVERRIDES",
    "AUTHORS_FIGURE12",
]

BENCH: tuple[str, ...] = tuple(V2_BENCHMARKS)
#: Figure 14's split: the knowledge-heavy benchmarks the law should describe better, and the rest.
KNOWLEDGE: tuple[str, ...] = ("bbh", "mmlu_pro", "gpqa")
OTHER: tuple[str, ...] = ("ifeval", "math_lvl_5", "musr")
#: Figure 13a: the two benchmarks with a "substantial gain".
GAINS: tuple[str, ...] = ("ifeval", "math_lvl_5")
#: Figure 13b-c's "general reasoning".
GENERAL: tuple[str, ...] = ("bbh", "musr", "mmlu_pro")
#: The careful setup's hand-checked treatment override (Meta's base checkpoint typed fine-tuned).
SCALING_OVERRIDES: dict[str, int] = {"meta-llama/Llama-3.1-8B": 0}
#: Meta's 3.x releases share architecture and tokenizer: one family in Figure 12.
LLAMA3X: dict[str, str] = {
    f: "Llama-3.x" for f in ("Llama-3", "Llama-3.1", "Llama-3.2", "Llama-3.3")
}
#: Figure 12 in the authors' code (Qwen_illustrate, Feb 2025): rows whose name contains these.
AUTHORS_FIGURE12: dict[str, str] = {
    "Qwen2.5-0.5B": "qwen2.5-0.5b",
    "Qwen2.5-7B": "qwen2.5-7b",
    "Qwen2.5-14B": "qwen2.5-14b",
}
#: The paper's two lineages (Figures 13b-c and 14's rows); its contrast is Qwen minus Llama.
PAPER_LINEAGES: tuple[str, str] = ("Llama", "Qwen")
#: The fewest bootstrap replicates a setting may ask for (a 95 % percentile interval needs a
#: few draws beyond each 2.5 % tail to mean anything; the book uses 100 and 200).
MIN_BOOT: int = 10
#: What a lineage needs under a setup: base models (the cluster bootstrap resamples them), and
#: fine-tuned and pretrained models in compute strata holding both (the backdoor ATE).
MIN_LINEAGE_BASES: int = 2
MIN_LINEAGE_ARM: int = 2
_SEED = 0


def lineage_names() -> tuple[str, ...]:
    """The lineages a setting may name: the leading word of every base model's family in
    :func:`hca.attribution.pretraining_tokens` (:func:`hca.causal.base_lineage`)."""
    names = base_lineage(pretraining_tokens()["base_model"]).dropna()
    return tuple(sorted(set(names)))


def contrast_label(lineages: tuple[str, ...]) -> str:
    """The name of the lineages' contrast in the tables: ``"Qwen - Llama"`` (second minus
    first)."""
    return f"{lineages[1]} - {lineages[0]}"


def _check_count(name: str, value: object, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"settings.{name}={value!r}: expected a whole number of at least {low}")


@dataclass(frozen=True)
class Settings:
    """The chapter's analysis choices (the defaults are the book's, and the paper's).

    Attributes
    ----------
    lineages : tuple of two str
        The two lineages whose models are fitted apart and compared (Figures 13b-c and 14's
        middle and bottom rows): the second's ATE minus the first's. Names from
        :func:`lineage_names`; the paper's are :data:`PAPER_LINEAGES` (Llama, Qwen). The
        paper's claims about Llama and Qwen are "not applicable" under other lineages.
    setups : tuple of str
        The setups to run (:data:`hca.paper.setups.SETUP_NAMES`: both).
    n_boot_fit : int
        Joint bootstrap replicates of the sigmoid fits (per subset), at least :data:`MIN_BOOT`.
    n_boot_ate : int
        Cluster-bootstrap replicates of every ATE, at least :data:`MIN_BOOT`.
    n_jobs : int or None
        joblib processes for the bootstraps (None: one; in parallel the replicates cost about
        twice the CPU time on two cores); the results do not depend on it.

    Raises
    ------
    ValueError
        On construction, naming the field, its value and what is expected (two distinct known
        lineages; bootstrap counts of at least :data:`MIN_BOOT`; known, distinct setups). A
        lineage with too few models under a setup is refused when the chapter runs, before
        any fit (:data:`MIN_LINEAGE_BASES`, :data:`MIN_LINEAGE_ARM`).
    """

    lineages: tuple[str, str] = PAPER_LINEAGES  # the two lineages compared (the paper's)
    setups: tuple[str, ...] = SETUP_NAMES  # the setups to run
    n_boot_fit: int = 100
    n_boot_ate: int = 200
    n_jobs: int | None = None

    def __post_init__(self) -> None:
        check_settings(self)
        lin = self.lineages
        known = lineage_names()
        if (
            not isinstance(lin, tuple)
            or len(lin) != 2
            or len(set(lin)) != 2
            or any(x not in known for x in lin)
        ):
            raise ValueError(
                f"settings.lineages={lin!r}: expected a tuple of two distinct lineages among "
                f"{join_words(known, 'or')} (the paper's: {PAPER_LINEAGES!r})"
            )
        _check_count("n_boot_fit", self.n_boot_fit, MIN_BOOT)
        _check_count("n_boot_ate", self.n_boot_ate, MIN_BOOT)
        if self.n_jobs is not None and (
            isinstance(self.n_jobs, bool) or not isinstance(self.n_jobs, int) or self.n_jobs == 0
        ):
            raise ValueError(
                f"settings.n_jobs={self.n_jobs!r}: expected None or a non-zero whole number"
            )

    @property
    def jobs(self) -> int:
        return 1 if self.n_jobs is None else int(self.n_jobs)

    @property
    def paper_lineages(self) -> bool:
        """Whether the settings compare the paper's lineages (Qwen minus Llama)."""
        return self.lineages == PAPER_LINEAGES


@dataclass(frozen=True, eq=False)
class Bridge:
    """From the authors' ATE to the careful one, one change at a time (:func:`bridge`).

    Attributes
    ----------
    steps : DataFrame
        One row per step (index ``step``): ``change`` (what the step adds), ``models``,
        ``treated``, ``strata``, ``strata_both`` (with both arms) and ``share_both`` (share of
        the models in them).
    ates : DataFrame
        Backdoor ATEs (point estimates; NaN where a subset holds no estimate): index ``step``,
        columns ``(subset, outcome)`` with subsets ``all``, the two lineages and their
        contrast (:func:`contrast_label`: ``Qwen - Llama``).
    final_candidates : DataFrame
        Models only in the final table (no type, no provider flag) from an organisation that
        is an official provider in the CSV and with a token family under the authors' rule:
        the candidates for the rows the authors had and we cannot place.
    n_final_only : int
        Models only in the final table (their type and provider flag are not public).
    n_csv : int
        Rows of the leaderboard CSV (with type and provider flag).
    lineages : tuple of two str
        The lineages of the contrast.
    """

    steps: pd.DataFrame
    ates: pd.DataFrame
    final_candidates: pd.DataFrame
    n_final_only: int
    n_csv: int
    lineages: tuple[str, ...] = PAPER_LINEAGES

    def summary(self) -> str:
        lines = ["Backdoor ATE (all models) from the authors' setup to the careful one:"]
        for step, r in self.steps.iterrows():
            a = self.ates.loc[step, "all"]
            lines.append(
                f"  {step} {r['change']}: {int(r['models'])} models; "
                + ", ".join(f"{benchmark_label(b)} {a[b]:+.1f}" for b in BENCH)
            )
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class ScalingResults:
    """Our side of the scaling chapter's claims under one setup.

    Attributes
    ----------
    setup : Setup
    rows : DataFrame
        The ATE population (``log_c``, ``T``, ``base_model`` = bootstrap cluster,
        ``lineage``, the six scores).
    official : DataFrame
        The sigmoid-law population (official providers; under ``authors`` = ``rows``).
    population : DataFrame
        Per subset (all and the settings' two lineages, by default Llama and Qwen) of
        ``rows``: models, treated, clusters, strata, strata with both arms and the share of
        models in them.
    family_sizes, monotonicity : DataFrame
        Figure 12: :func:`hca.causal.family_size_means` and
        :func:`hca.causal.size_monotonicity`.
    sigmoid : SigmoidPanel
        The law on every official model, cluster bootstrap by base model.
    lineage : SigmoidPanel
        The law on the official models of each of the two lineages, models resampled within
        base model.
    ates : ATEPanel
        Backdoor ATEs (all and the two lineages), exact strata of compute, cluster bootstrap.
    effects : DataFrame
        Per subset and outcome: ``ate``, 95 % and 80 % intervals, ``sd`` of the benchmark
        over the same models and ``d = ate / sd``.
    contrast : DataFrame
        The second lineage's ATE minus the first's (Qwen minus Llama) per outcome with 95 %
        and 80 % intervals and ``n_boot``, the bootstrap replicates behind them.
    tau : DataFrame
        The fine-tuning shift of the all-official fits with 95 % and 80 % intervals.
    r2 : DataFrame
        R^2 per subset and outcome with the 95 % interval.
    r2_gaps : DataFrame
        Mean R^2 of :data:`KNOWLEDGE` minus that of :data:`OTHER` per subset, 95/80 %.
    printed : DataFrame
        The authors' printed ATE, tau (their ``c``) and R^2 beside ours, per benchmark.
    printed_population : DataFrame
        The authors' printed rows, strata and share of rows in strata with both arms (and
        the rows that share implies) beside ours; columns ``theirs``, ``ours``.
    ipw : DataFrame
        IPW point estimates with a logistic propensity of degree 1-3 beside the backdoor one.
    balance : DataFrame
        Standardised mean difference of ``log_c`` raw and under IPW weights, per degree.
    lineage_strata : dict
        Outcome -> per-stratum effects of the second lineage's subset (by default Qwen's;
        IFEval, MATH Lvl 5).
    mix : DataFrame
        Per lineage: fine-tunes, share with a math-oriented name, share of merges.
    override_check : DataFrame
        Type and scores of ``meta-llama/Llama-3.1-8B`` (typed fine-tuned, treated as the base
        checkpoint it is under ``careful``) beside Meta's pretrained and instruct 3.1-8B.
    bridge : Bridge
        :func:`bridge` (the same object under both setups).
    notes : str
        What public data cannot reproduce of this setup.
    lineages : tuple of two str
        The lineages compared (:attr:`Settings.lineages`).
    """

    setup: Setup
    rows: pd.DataFrame = field(repr=False)
    official: pd.DataFrame = field(repr=False)
    population: pd.DataFrame
    family_sizes: pd.DataFrame = field(repr=False)
    monotonicity: pd.DataFrame = field(repr=False)
    sigmoid: SigmoidPanel = field(repr=False)
    lineage: SigmoidPanel = field(repr=False)
    ates: ATEPanel = field(repr=False)
    effects: pd.DataFrame = field(repr=False)
    contrast: pd.DataFrame = field(repr=False)
    tau: pd.DataFrame = field(repr=False)
    r2: pd.DataFrame = field(repr=False)
    r2_gaps: pd.DataFrame = field(repr=False)
    printed: pd.DataFrame = field(repr=False)
    printed_population: pd.DataFrame = field(repr=False)
    ipw: pd.DataFrame = field(repr=False)
    balance: pd.DataFrame = field(repr=False)
    lineage_strata: dict = field(repr=False)
    mix: pd.DataFrame = field(repr=False)
    override_check: pd.DataFrame = field(repr=False)
    bridge: Bridge = field(repr=False)
    notes: str = ""
    lineages: tuple[str, ...] = PAPER_LINEAGES

    def summary(self) -> str:
        e = self.effects.loc["all"]
        g = self.r2_gaps.loc["all"]
        return (
            f"{self.setup.label}: {len(self.rows):,} models in the ATE population, "
            f"{len(self.official):,} official models for the sigmoid law; backdoor ATE "
            + ", ".join(f"{benchmark_label(b)} {e.loc[b, 'ate']:+.1f}" for b in BENCH)
            + f"; R² gap (BBH, MMLU-PRO, GPQA minus the rest) {g['gap']:+.2f}"
        )


# =========================================================================== populations
def _population(rows: pd.DataFrame, lineages: tuple[str, ...]) -> pd.DataFrame:
    out = {}
    for name, d in _subsets(rows, lineages).items():
        sub = rows if d is None else rows[d]
        x, t = sub["log_c"].to_numpy(), sub["T"].to_numpy()
        both = np.isin(x, x[t == 1]) & np.isin(x, x[t == 0])
        out[name] = {
            "models": len(sub),
            "treated": int(t.sum()),
            "clusters": int(sub["base_model"].nunique()),
            "strata": int(len(np.unique(x))),
            "strata_both": int(len(np.unique(x[both]))),
            "share_both": float(both.mean()),
        }
    return pd.DataFrame.from_dict(out, orient="index").rename_axis("subset")


def _subsets(rows: pd.DataFrame, lineages: tuple[str, ...]) -> dict[str, np.ndarray | None]:
    return {
        "all": None,
        **{lin: rows["lineage"].eq(lin).fillna(False).to_numpy(dtype=bool) for lin in lineages},
    }


def _authors_lineages(rows: pd.DataFrame, lineages: tuple[str, ...]) -> pd.DataFrame:
    """The authors' rows with each of ``lineages`` reconstructed as the paper's Llama and Qwen
    are (:func:`hca.causal.authors_scaling_frame`): the rows whose token family starts with
    the lineage's name, lower-cased (the same rows for Llama and Qwen)."""
    family = rows["token_family"].astype("string").str.lower()
    out = rows.copy()
    for lin in lineages:
        hit = family.str.startswith(lin.lower()).fillna(False).to_numpy(dtype=bool)
        out.loc[hit, "lineage"] = lin
    return out


def _lineage_needs(rows: pd.DataFrame, off: pd.DataFrame, lineage: str) -> dict[str, int]:
    """What one lineage holds under a setup: official models (the law), their distinct
    compute values, base models, and fine-tuned and pretrained models in compute strata that
    hold both arms (the backdoor ATE)."""
    sub = rows[rows["lineage"].eq(lineage).fillna(False).to_numpy(dtype=bool)]
    law = off[off["lineage"].eq(lineage).fillna(False).to_numpy(dtype=bool)]
    x, t = sub["log_c"].to_numpy(), sub["T"].to_numpy()
    both = np.isin(x, x[t == 1]) & np.isin(x, x[t == 0])
    return {
        "official": len(law),
        "compute values": int(law["log_c"].nunique()),
        "bases": int(sub["base_model"].nunique()),
        "treated": int((t[both] == 1).sum()),
        "control": int((t[both] == 0).sum()),
    }


def _lineage_ok(need: dict[str, int]) -> bool:
    return (
        need["official"] >= MIN_POINTS_SIGMOID
        and need["compute values"] >= 2
        and need["bases"] >= MIN_LINEAGE_BASES
        and min(need["treated"], need["control"]) >= MIN_LINEAGE_ARM
    )


def _check_lineages(
    setup: Setup, rows: pd.DataFrame, off: pd.DataFrame, lineages: tuple[str, ...]
) -> None:
    """Refuse, before any fit, a lineage too small to fit under ``setup``."""
    for lin in lineages:
        need = _lineage_needs(rows, off, lin)
        if _lineage_ok(need):
            continue
        usable = [x for x in lineage_names() if _lineage_ok(_lineage_needs(rows, off, x))]
        raise ValueError(
            f"settings.lineages: {lin!r} is too small under the {setup.label}: "
            f"{count(need['official'], 'official model')} with "
            f"{count(need['compute values'], 'compute value')}, "
            f"{count(need['bases'], 'base model')}, {need['treated']} fine-tuned and "
            f"{need['control']} pretrained models in compute strata holding both. A lineage "
            f"needs at least {MIN_POINTS_SIGMOID} official models with two compute values "
            f"(the sigmoid law), {MIN_LINEAGE_BASES} base models and {MIN_LINEAGE_ARM} models "
            f"of each arm in shared strata (the backdoor ATE). Usable under this setup: "
            f"{join_words(usable) or 'none'}"
            + ("; or run only the careful setup" if setup.ate_population == "authors" else "")
            + "."
        )


# =========================================================================== Figure 12
def _family_sizes(setup: Setup, rows: pd.DataFrame) -> pd.DataFrame:
    if setup.ate_population == "book":
        ft = rows[rows["T"] == 1].assign(series=lambda d: d["family"].replace(LLAMA3X))
        return family_size_means(ft, BENCH, family="series", top=3, min_sizes=3)

    frame = v2_frame(setup)
    base = rows_by_name(frame, AUTHORS_FIGURE12)
    params = pretraining_tokens().set_index("base_model")["params_b"]
    d = frame[base.notna()].assign(base_model=base[base.notna()], series="Qwen2.5")
    d["base_params_b"] = d["base_model"].map(params).astype(float)
    return family_size_means(d, BENCH, family="series", top=1, min_sizes=3)


# =========================================================================== fits
def _sigmoid(
    setup: Setup, off: pd.DataFrame, settings: Settings, subsets: dict | None, resample: str
) -> SigmoidPanel:
    solver = "curve_fit" if setup.ate_population == "authors" else "least_squares"
    return fit_sigmoid_panel(
        off,
        BENCH,
        subsets=subsets,
        domains="base_model",
        n_boot=settings.n_boot_fit,
        random_state=_SEED,
        n_jobs=settings.jobs,
        solver=solver,
        resample=resample,
    )


#: The interval columns of the chapter's tables: 95 % and 80 %, low and high.
_CI = ("ci95_low", "ci95_high", "ci80_low", "ci80_high")


def _intervals(samples: np.ndarray) -> dict[str, float]:
    s = np.asarray(samples, dtype=float)
    q = np.quantile(s, [0.025, 0.975, 0.10, 0.90]) if len(s) else [np.nan] * 4
    return {k: float(v) for k, v in zip(_CI, q)}


def _ci_columns(c95: pd.DataFrame, c80: pd.DataFrame) -> dict[str, pd.Series]:
    """The ``ci_low`` and ``ci_high`` columns of a 95 % and an 80 % table as :data:`_CI`."""
    return dict(zip(_CI, (c95["ci_low"], c95["ci_high"], c80["ci_low"], c80["ci_high"])))


def _effects(rows: pd.DataFrame, ates: ATEPanel, lineages: tuple[str, ...]) -> pd.DataFrame:
    out = []
    tab = ates.table.set_index(["subset", "outcome"])
    for name, mask in _subsets(rows, lineages).items():
        sub = rows if mask is None else rows[mask]
        for b in BENCH:
            ate = float(tab.loc[(name, b), "ate"])
            sd = float(sub[b].std(ddof=1))
            out.append(
                {
                    "subset": name,
                    "outcome": b,
                    "ate": ate,
                    "sd": sd,
                    "d": ate / sd,
                    "n_used": int(tab.loc[(name, b), "n_used"]),
                    "n_boot": len(ates.samples[(name, b, "backdoor")]),
                    **_intervals(ates.samples[(name, b, "backdoor")]),
                }
            )
    return pd.DataFrame(out).set_index(["subset", "outcome"])


def _contrast(ates: ATEPanel, lineages: tuple[str, ...]) -> pd.DataFrame:
    first, second = lineages
    c95 = ates.contrast(second, first, ci=0.95).set_index("outcome")
    c80 = ates.contrast(second, first, ci=0.80).set_index("outcome")
    columns = {"second": c95["ate_a"], "first": c95["ate_b"], "diff": c95["diff"]}
    n = {b: min(len(ates.samples[(s, b, "backdoor")]) for s in lineages) for b in c95.index}
    return pd.DataFrame({**columns, **_ci_columns(c95, c80), "n_boot": pd.Series(n)})


def _tau(panel: SigmoidPanel) -> pd.DataFrame:
    out, k = {}, PARAM_NAMES.index("tau")
    for b in BENCH:
        bs = panel.boot.get(("all", b))
        out[b] = {
            "tau": panel.fits[("all", b)].tau,
            "se": panel.fits[("all", b)].se["tau"],
            "n_boot": 0 if bs is None else len(bs.samples),
            **_intervals(bs.samples[:, k] if bs is not None else np.empty(0)),
        }
    return pd.DataFrame(out).T.rename_axis("outcome")


def _r2(panels: tuple[SigmoidPanel, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    r2 = pd.concat([p.r2_table() for p in panels]).set_index(["subset", "outcome"])
    gaps = []
    for p in panels:
        g95 = p.r2_gap(KNOWLEDGE, OTHER, ci=0.95).set_index("subset")
        g80 = p.r2_gap(KNOWLEDGE, OTHER, ci=0.80).set_index("subset")
        n = {s: len(p.r2_samples.get(s, ())) for s in p.subsets}
        gaps.append(
            pd.DataFrame({"gap": g95["gap"], **_ci_columns(g95, g80), "n_boot": pd.Series(n)})
        )
    return r2, pd.concat(gaps)


def _printed(effects: pd.DataFrame, tau: pd.DataFrame, r2: pd.DataFrame) -> pd.DataFrame:
    acv = authors_code_values()["value"]
    return pd.DataFrame(
        {
            "ate_theirs": [acv[f"ate-{b}"] for b in BENCH],
            "ate_ours": [effects.loc[("all", b), "ate"] for b in BENCH],
            "tau_theirs": [acv[f"sigmoid-tau-{b}"] for b in BENCH],
            "tau_ours": [tau.loc[b, "tau"] for b in BENCH],
            "r2_theirs": [acv[f"sigmoid-r2-{b}"] for b in BENCH],
            "r2_ours": [r2.loc[("all", b), "r2"] for b in BENCH],
        },
        index=pd.Index(BENCH, name="outcome"),
    )


def _printed_population(pop: pd.Series) -> pd.DataFrame:
    acv = authors_code_values()["value"]
    theirs = {
        "rows": acv["ate-rows"],
        "strata": acv["ate-strata"],
        "share_both": acv["ate-support-share"],
    }
    theirs["rows_both"] = round(theirs["share_both"] * theirs["rows"])
    ours = {
        "rows": pop["models"],
        "strata": pop["strata"],
        "share_both": pop["share_both"],
        "rows_both": round(pop["share_both"] * pop["models"]),
    }
    return pd.DataFrame({"theirs": theirs, "ours": ours})


def _ipw(rows: pd.DataFrame, effects: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    x, t = rows["log_c"].to_numpy(), rows["T"].to_numpy()
    fits: dict = {}  # one propensity fit per degree, shared by the six outcomes
    ipw = pd.DataFrame(
        {
            f"IPW degree {k}": [
                ate_ipw(x, t, rows[b], degree=k, n_boot=0, propensities=fits).ate for b in BENCH
            ]
            for k in (1, 2, 3)
        },
        index=pd.Index(BENCH, name="outcome"),
    )
    ipw["backdoor"] = [effects.loc[("all", b), "ate"] for b in BENCH]
    bal = pd.DataFrame({f"degree {k}": ipw_balance(x, t, degree=k)["smd"] for k in (1, 2, 3)}).T
    return ipw, bal


def _mix(rows: pd.DataFrame) -> pd.DataFrame:
    post = rows[rows["T"] == 1]
    kind = pd.DataFrame(
        {
            "lineage": post["lineage"].astype(str),
            "math-oriented name": post["model_id"].str.contains(
                r"math|r1-distill|deepseek-r1|numina", case=False
            ),
            "merge": post["type"].eq("merge"),
        }
    )
    return (
        kind.groupby("lineage")[["math-oriented name", "merge"]]
        .mean()
        .join(post.groupby(post["lineage"].astype(str)).size().rename("fine-tunes"))
    )


def _override_check() -> pd.DataFrame:
    v2 = v2_frame("careful").set_index("model_id")
    ids = [*SCALING_OVERRIDES, "meta-llama/Meta-Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct"]
    return v2.loc[ids, ["type", *BENCH]]


_NOTES = {
    "authors": (
        "The authors' table of 4,576 models with each model's type and provider flag is not "
        "public: the final table's 663 extra models have scores only, so their population is "
        "rebuilt from the 3,913-row CSV (they had 140 rows, 78 strata). The Llama/Qwen split, "
        "Figure 12 and Figure 14's rows are not in their scaling notebook: family label "
        "starting with llama/qwen and Qwen2.5 rows matched by name are our reconstruction. "
        "Intervals are ours (cluster bootstrap by their base-model label)."
    ),
    "book": (
        "This book's population: every attributed model, chat models and merges counted as "
        "fine-tuned, compute from the base model's parameters and tokens; the paper's text "
        "does not say which models it used."
    ),
}


def _frames(setup: Setup, lineages: tuple[str, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ATE population and the sigmoid law's official models under ``setup``."""
    if setup.ate_population == "authors":
        rows = _authors_lineages(authors_scaling_frame(v2_frame("authors")), lineages)
        return rows, rows
    v2 = v2_frame("careful")
    rows = scaling_frame(v2, overrides=SCALING_OVERRIDES)
    return rows, scaling_frame(v2, official_only=True, overrides=SCALING_OVERRIDES)


def _compute(setup: Setup, settings: Settings) -> ScalingResults:
    lineages = tuple(settings.lineages)
    rows, off = _frames(setup, lineages)
    # before any fit: the lineages under this setup and every other one the settings run
    for other in settings.setups:
        ot = get_setup(other)
        _check_lineages(ot, *((rows, off) if ot == setup else _frames(ot, lineages)), lineages)
    subsets = _subsets(rows, lineages)
    fam = _family_sizes(setup, rows)
    try:
        sig = _sigmoid(setup, off, settings, {"all": None}, "clusters")
        lin = _sigmoid(
            setup,
            off,
            settings,
            {k: v for k, v in _subsets(off, lineages).items() if v is not None},
            "within",
        )
        ates = ate_panel(
            rows,
            BENCH,
            subsets=subsets,
            estimators=("backdoor",),
            domains="base_model",
            n_boot=settings.n_boot_ate,
            random_state=_SEED,
            n_jobs=settings.jobs,
            estimator_kwargs={"backdoor": {"method": "stratified"}},
        )
    except ValueError as err:  # a fit or bootstrap the settings' lineages cannot carry
        raise ValueError(
            f"the scaling chapter under the {setup.label} with lineages "
            f"{join_words(lineages)}: {err}"
        ) from err
    effects = _effects(rows, ates, lineages)
    tau = _tau(sig)
    r2, gaps = _r2((sig, lin))
    ipw, bal = _ipw(rows, effects)
    second = rows[subsets[lineages[1]]]
    pop = _population(rows, lineages)
    return ScalingResults(
        setup=setup,
        rows=rows,
        official=off,
        population=pop,
        printed_population=_printed_population(pop.loc["all"]),
        family_sizes=fam,
        monotonicity=size_monotonicity(fam),
        sigmoid=sig,
        lineage=lin,
        ates=ates,
        effects=effects,
        contrast=_contrast(ates, lineages),
        tau=tau,
        r2=r2,
        r2_gaps=gaps,
        printed=_printed(effects, tau, r2),
        ipw=ipw,
        balance=bal,
        lineage_strata={b: stratum_effects(second, b) for b in GAINS},
        mix=_mix(rows),
        override_check=_override_check(),
        bridge=bridge(lineages),
        notes=_NOTES[setup.ate_population],
        lineages=lineages,
    )


#: The chapter's shape (:class:`hca.paper.shape.ChapterSpec`).
CHAPTER: ChapterSpec[Settings, ScalingResults] = ChapterSpec(
    key="scaling", settings=Settings, compute=_compute
)


#: The chapter's results under a setup, once per process (:meth:`~hca.paper.shape.ChapterSpec.run`).
run = CHAPTER.run


# =========================================================================== the bridge
def _point_ate(sub: pd.DataFrame, outcome: str) -> float:
    """The stratified backdoor ATE without interval; NaN where the rows hold no stratum with
    both arms, or fewer than two models in an arm (a reader's lineage at an early step of the
    walk: no estimate exists there; the paper's lineages have one at every step)."""
    try:
        return ate_backdoor(sub["log_c"], sub["T"], sub[outcome], method="stratified", n_boot=0).ate
    except ValueError:
        return float("nan")


def _point_ates(rows: pd.DataFrame, lineages: tuple[str, ...]) -> dict[tuple[str, str], float]:
    out = {}
    for name, mask in _subsets(rows, lineages).items():
        sub = rows if mask is None else rows[mask]
        for b in BENCH:
            out[(name, b)] = _point_ate(sub, b)
    first, second = lineages
    for b in BENCH:
        out[(contrast_label(lineages), b)] = out[(second, b)] - out[(first, b)]
    return out


def _final_candidates() -> pd.DataFrame:
    f = v2_frame("authors")
    org = f["model_id"].str.split("/").str[0].str.lower()
    official = set(org[f["official_providers"].fillna(False).astype(bool)])
    cand = f[f["type"].isna() & org.isin(official)]
    cols = ["model_id", "base_model_hub", "architecture", "params_b"]
    label = [authors_base_model(*r, strict=True) for r in cand[cols].itertuples(index=False)]
    fam = pd.Series(authors_token_families(label), index=cand.index, dtype="string")
    return (
        cand.loc[fam.notna(), ["model_id", "params_b"]]
        .assign(token_family=fam[fam.notna()])
        .reset_index(drop=True)
    )


def _bridge(lineages: tuple[str, ...]) -> Bridge:
    careful, authors = v2_frame("careful"), v2_frame("authors")

    def theirs(frame: pd.DataFrame, **kwargs: Any) -> pd.DataFrame:
        return _authors_lineages(authors_scaling_frame(frame, **kwargs), lineages)

    steps = [
        ("A", "the authors' setup", theirs(authors)),
        ("B", "+ chat, merges, other types as T = 1", theirs(authors, types=None)),
        ("C", "+ every provider", theirs(authors, types=None, official_only=False)),
        (
            "D",
            "+ one row per model",
            theirs(v2_authors(dedupe=True), types=None, official_only=False),
        ),
        ("E", "+ book's base models and compute", scaling_frame(careful, name_markers=False)),
        (
            "F",
            "+ book's T corrections (careful)",
            scaling_frame(careful, overrides=SCALING_OVERRIDES),
        ),
    ]
    info, ates = [], {}
    for step, change, rows in steps:
        pop = _population(rows, lineages).loc["all"]
        info.append(
            {
                "step": step,
                "change": change,
                **{k: (float(v) if k == "share_both" else int(v)) for k, v in pop.items()},
            }
        )
        ates[step] = _point_ates(rows, lineages)
    tab = pd.DataFrame(ates).T.rename_axis("step")
    tab.columns = pd.MultiIndex.from_tuples(tab.columns, names=["subset", "outcome"])
    return Bridge(
        steps=pd.DataFrame(info).set_index("step"),
        ates=tab,
        final_candidates=_final_candidates(),
        n_final_only=int(authors["type"].isna().sum()),
        n_csv=int(authors["type"].notna().sum()),
        lineages=lineages,
    )


def bridge(lineages: tuple[str, ...] = PAPER_LINEAGES) -> Bridge:
    """The authors' backdoor ATE turned into the careful one, one change at a time, over all
    models and for the contrast of ``lineages`` (second minus first; computed once,
    independent of the setup). A lineage that holds no stratum with both arms at a step has
    no estimate there (NaN)."""
    return cached("scaling_bridge", _bridge, tuple(lineages))


# =========================================================================== claims
def _signed(x: float, digits: int = 1) -> str:
    """A signed estimate: ``"+16.3"``."""
    return f"{float(x):+.{digits}f}"


def _plain(x: float, digits: int = 2) -> str:
    return f"{float(x):.{digits}f}"


def _interval(low: float, high: float, digits: int = 1, signed: bool = True) -> str:
    """``"+8.1 to +27.5"``."""
    f = _signed if signed else _plain
    return f"{f(low, digits)} to {f(high, digits)}"


def _ci(r: Any, key: str = "ate", digits: int = 1, label: bool = True, unit: str = "") -> str:
    """An estimate with its 95 % interval: ``"+16.3 points (95 % interval +8.1 to +27.5)"``
    (without ``label``: ``"+16.3 (+8.1 to +27.5)"``)."""
    span = _interval(r["ci95_low"], r["ci95_high"], digits)
    value = _signed(r[key], digits) + (f" {unit}" if unit else "")
    return f"{value} ({'95 % interval ' if label else ''}{span})"


def _ci2(r: Any, key: str, digits: int = 1) -> str:
    """An estimate with its 95 % and 80 % intervals."""
    return (
        f"{_signed(r[key], digits)} (95 % interval "
        f"{_interval(r['ci95_low'], r['ci95_high'], digits)}; 80 %: "
        f"{_interval(r['ci80_low'], r['ci80_high'], digits)})"
    )


def _over(n: Any, what: str, note: str = "") -> str:
    """The replicates behind an interval: ``"over 200 cluster-bootstrap resamples"`` (and
    ``note`` after them, in parentheses)."""
    return f"over {count(n, what)}" + (f" ({note})" if note else "")


def _setup_note(res: ScalingResults, lineage: bool = False) -> str:
    if res.setup.ate_population != "authors":
        return ""
    a, b = res.lineages
    return (
        f" ({a}/{b} split reconstructed: family label starting with {a.lower()}/{b.lower()})"
        if lineage
        else " (the authors' population: official, pretrained vs domain-specific fine-tunes)"
    )


def _other_lineages(res: ScalingResults) -> str:
    """The reason of a claim about the paper's lineages under other ones."""
    return (
        f"the settings compare {join_words(res.lineages)}, not the paper's "
        f"{join_words(PAPER_LINEAGES)}"
    )


def _law_boot(n: Any, subset: str) -> str:
    """The law's bootstrap refits of ``subset`` and how they resample its models."""
    if subset == "all":
        return _over(n, "cluster-bootstrap refit")
    return _over(n, "bootstrap refit", "models resampled within base model")


@claim("F7-bbh-tau", chapter="scaling", figure="fig-scaling-tau")
def _bbh_tau(res: ScalingResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    b, i = res.tau.loc["bbh"], res.tau.loc["ifeval"]
    small = (b["ci95_low"] <= 0 <= b["ci95_high"]) or abs(b["tau"]) <= 2
    ok = small and abs(b["tau"]) < i["tau"] / 5
    ours = (
        f"fine-tuning shift τ: BBH {_ci(b, 'tau', unit='points')}, IFEval "
        f"{_ci(i, 'tau', label=False)}; "
        f"{count(len(res.official), 'official model')}, intervals "
        f"{_over(b['n_boot'], 'cluster-bootstrap refit')}"
    )
    v = grade(ok, abs(b["tau"]) < i["tau"] / 2)
    reason = {
        "reproduced": "BBH's shift is small and under a fifth of IFEval's",
        "partly": "BBH's shift is under half of IFEval's",
        "not reproduced": "BBH's shift is not small next to IFEval's",
    }[v]
    return {"F7-bbh-tau": Outcome(ours, v, reason + _setup_note(res), value=float(b["tau"]))}


@claim("F7-bbh-fit", chapter="scaling", figure="fig-scaling-bbh-law")
def _bbh_fit(res: ScalingResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    r = res.r2.loc[("all", "bbh")]
    span = _interval(r["r2_ci_low"], r["r2_ci_high"], 2, signed=False)
    ours = (
        f"R² {_plain(r['r2'])} (95 % interval {span} "
        f"{_over(r['n_boot_ok'], 'cluster-bootstrap refit')}) on "
        f"{count(r['n'], 'official model')}"
    )
    v = grade(r["r2"] >= 0.70, r["r2"] >= 0.50)
    reason = {
        "reproduced": "R² at least 0.70",
        "partly": "R² between 0.50 and 0.70",
        "not reproduced": "R² below 0.50",
    }[v]
    return {"F7-bbh-fit": Outcome(ours, v, reason + _setup_note(res), value=float(r["r2"]))}


@claim("F12-bigger-better", chapter="scaling", figure="fig-scaling-family-sizes")
def _fig12(res: ScalingResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    mono = res.monotonicity
    up = int((mono["largest_minus_smallest"] > 0).sum())
    drops, steps = int(mono["adjacent_drops"].sum()), int(mono["steps"].sum())
    fams = join_words(dict.fromkeys(mono["family"]))
    ours = (
        f"the largest base's fine-tunes score above the smallest's in "
        f"{k_of_n(up, len(mono), 'family × benchmark pairs')} ({fams}); "
        f"{k_of_n(drops, steps, 'steps')} between adjacent sizes go down"
    )
    v = grade(up == len(mono) and drops == 0, up == len(mono))
    reason = (
        "uniform"
        if v == "reproduced"
        else ("a trend, not uniform" if v == "partly" else "a larger base scores lower somewhere")
    )
    if res.setup.ate_population == "authors":
        n_fam = mono["family"].nunique()
        reason += (
            " (their Figure 12 code: Qwen2.5 0.5B/7B/14B rows matched by name, "
            f"{count(n_fam, 'family', 'families')}, so {count(len(mono), 'pair')})"
        )
    return {"F12-bigger-better": Outcome(ours, v, reason, value=float(up))}


@claim(
    "F13a-ifeval",
    "F13a-math_lvl_5",
    "F13a-bbh",
    "F13a-gpqa",
    "F13a-musr",
    "F13a-mmlu_pro",
    chapter="scaling",
    figure="fig-scaling-ate",
)
def _fig13a(res: ScalingResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    e = res.effects.loc["all"]
    floor = min(e.loc["ifeval", "d"], e.loc["math_lvl_5", "d"])
    out = {}
    for cid in rows.index:
        b = cid.split("-", 1)[1]
        r = e.loc[b]
        ours = (
            f"backdoor ATE {_signed(r['ate'])} points (95 % interval "
            f"{_interval(r['ci95_low'], r['ci95_high'])} "
            f"{_over(r['n_boot'], 'cluster-bootstrap resample')}); effect size "
            f"d = ATE / SD = {_signed(r['d'], 2)}"
        )
        if b in GAINS:
            lo95, lo80, d = r["ci95_low"], r["ci80_low"], r["d"]
            v = grade(
                lo95 > 0 and d >= 0.5, (lo95 > 0 and 0.2 <= d < 0.5) or (d >= 0.5 and lo80 > 0)
            )
            reason = (
                "a large gain, 95 % interval above 0"
                if v == "reproduced"
                else "a moderate gain (d < 0.5)"
                if v == "partly" and lo95 > 0
                else "a large gain, only the 80 % interval above 0"
                if v == "partly"
                else "no substantial gain (d < 0.2 or the interval reaches 0)"
            )
        else:
            d = r["d"]
            v = grade(d <= 0.2, 0.2 < d <= 0.5 and d < floor / 2)
            reason = (
                "little or negative (d ≤ 0.2)"
                if v == "reproduced"
                else "a small gain, under half of IFEval's and MATH's"
                if v == "partly"
                else "a gain too large to be 'little'"
            )
        out[cid] = Outcome(ours, v, reason + _setup_note(res), value=float(r["ate"]))
    return out


def _contrast_name(res: ScalingResults) -> str:
    first, second = res.lineages
    return f"{second} − {first}"


def _diff_text(c: pd.DataFrame, b: str) -> str:
    return f"{benchmark_label(b)} {_ci2(c.loc[b], 'diff')}"


@claim(
    "F13bc-math_lvl_5", "F13bc-ifeval", "F13bc-general", chapter="scaling", figure="fig-scaling-ate"
)
def _fig13bc(res: ScalingResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    c = res.contrast
    note = _setup_note(res, lineage=True)
    boot = _over(int(c["n_boot"].min()), "cluster-bootstrap resample")
    paper = res.lineages == PAPER_LINEAGES
    out = {}
    for cid in ("F13bc-math_lvl_5", "F13bc-ifeval"):
        b = cid.split("-", 1)[1]
        r = c.loc[b]
        ours = f"{_contrast_name(res)}: {_diff_text(c, b)}, {boot}"
        if not paper:
            out[cid] = Outcome(ours, "not applicable", _other_lineages(res), value=None)
            continue
        v = interval_verdict(
            r["diff"], (r["ci95_low"], r["ci95_high"]), (r["ci80_low"], r["ci80_high"])
        )
        reason = (
            "Qwen gains more, 95 % interval above 0"
            if v == "reproduced"
            else "direction supported at the one-sided 10 % level only"
            if v == "partly"
            else "the 80 % interval contains 0"
            if r["diff"] > 0
            else "Llama gains at least as much"
        )
        out[cid] = Outcome(ours, v, reason + note, value=float(r["diff"]))
    neg = [b for b in GENERAL if c.loc[b, "diff"] < 0]
    sure = [b for b in GENERAL if c.loc[b, "ci95_high"] < 0]
    sure80 = [b for b in GENERAL if c.loc[b, "ci80_high"] < 0]
    ours = f"{_contrast_name(res)}: " + "; ".join(_diff_text(c, b) for b in GENERAL) + f"; {boot}"
    if not paper:
        out["F13bc-general"] = Outcome(ours, "not applicable", _other_lineages(res), value=None)
        return out
    v = grade(
        len(sure) == len(GENERAL),
        len(neg) == len(GENERAL) and (bool(sure) or len(sure80) == len(GENERAL)),
    )
    reason = f"Qwen drops more on {_which_general(neg)}" + (
        f"; 95 % interval below 0 on {join_words(map(benchmark_label, sure))}"
        if sure
        else "; no 95 % interval below 0"
    )
    out["F13bc-general"] = Outcome(ours, v, reason + note, value=float(len(neg)))
    return out


def _which_general(drops: list[str], named: bool = False) -> str:
    """Which of :data:`GENERAL` (BBH, MUSR, MMLU-PRO) ``drops`` holds, in words."""
    three = " of " + join_words(map(benchmark_label, GENERAL)) if named else ""
    if len(drops) == len(GENERAL):
        return "all three" + three
    if drops:
        return join_words(map(benchmark_label, drops)) + " only"
    return "none of " + (three[4:] if named else "the three")


def _r2_list(res: ScalingResults, subset: str) -> str:
    r2 = res.r2.loc[subset, "r2"]
    return "R² " + ", ".join(f"{benchmark_label(b)} {_plain(r2[b])}" for b in KNOWLEDGE + OTHER)


def _gap_outcome(res: ScalingResults, subset: str, implied: bool) -> Outcome:
    g = res.r2_gaps.loc[subset]
    ours = f"mean R² gap {_ci2(g, 'gap', 2)} {_law_boot(g['n_boot'], subset)}; " + _r2_list(
        res, subset
    )
    v = interval_verdict(g["gap"], (g["ci95_low"], g["ci95_high"]), (g["ci80_low"], g["ci80_high"]))
    reason = (
        "higher on average, 95 % interval above 0"
        if v == "reproduced"
        else "higher on average, only the 80 % interval above 0"
        if v == "partly"
        else "the interval reaches 0"
        if g["gap"] > 0
        else "lower on average"
    )
    if implied:
        reason += "; the paper states no finding for this row (shown in its figure only)"
    return Outcome(ours, v, reason + _setup_note(res, lineage=implied), value=float(g["gap"]))


@claim("F14-group", "F14-pairwise", chapter="scaling", figure="fig-scaling-r2")
def _fig14(res: ScalingResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    r2 = res.r2.loc["all", "r2"]
    pairs = [(k, o) for k in KNOWLEDGE for o in OTHER]
    good = [(k, o) for k, o in pairs if r2[k] > r2[o]]
    bad = [f"{benchmark_label(k)} < {benchmark_label(o)}" for k, o in pairs if (k, o) not in good]
    ours = (
        f"R² higher for BBH, MMLU-PRO or GPQA than for IFEval, MATH or MUSR in "
        f"{k_of_n(len(good), len(pairs), 'pairs')}; " + _r2_list(res, "all")
    )
    reason = "all pairs ordered" if not bad else "exceptions: " + ", ".join(bad)
    v = grade(len(good) == len(pairs), len(good) >= 7)
    pw = Outcome(ours, v, reason + _setup_note(res), value=float(len(good)))
    return {"F14-group": _gap_outcome(res, "all", implied=False), "F14-pairwise": pw}


@claim("F14-llama-lineage", "F14-qwen-lineage", chapter="scaling", figure="fig-scaling-r2")
def _fig14_lineages(res: ScalingResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    out = {}
    for s in PAPER_LINEAGES:
        cid = f"F14-{s.lower()}-lineage"
        if s in res.lineages:
            out[cid] = _gap_outcome(res, s, implied=True)
        else:
            ours = f"not fitted: the settings fit the lineages {join_words(res.lineages)}"
            out[cid] = Outcome(ours, "not applicable", _other_lineages(res), value=None)
    return out


@claim("F14-tau-order", chapter="scaling", figure="fig-scaling-tau")
def _tau_order(res: ScalingResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    tau = res.tau
    pairs = [(o, k) for o in OTHER for k in KNOWLEDGE]
    good = [(o, k) for o, k in pairs if tau.loc[o, "tau"] > tau.loc[k, "tau"]]
    above = [o for o in OTHER if tau.loc[o, "ci95_low"] > 0]
    ours = (
        f"τ larger for IFEval, MATH or MUSR than for BBH, MMLU-PRO or GPQA in "
        f"{k_of_n(len(good), len(pairs), 'pairs')}; τ in points with 95 % intervals "
        f"{_over(tau['n_boot'].min(), 'cluster-bootstrap refit')}: "
        + ", ".join(
            f"{benchmark_label(b)} {_ci(tau.loc[b], 'tau', label=False)}" for b in OTHER + KNOWLEDGE
        )
    )
    v = grade(len(good) == len(pairs) and len(above) == 3, len(good) >= 7)
    missing = [benchmark_label(o) for o in OTHER if o not in above]
    reason = (
        f"{k_of_n(len(good), len(pairs), 'pairs')} ordered; 95 % interval of τ above 0 for "
        f"{join_words(map(benchmark_label, above)) or 'none'}"
        + (f", not for {join_words(missing)}" if missing else "")
    )
    return {"F14-tau-order": Outcome(ours, v, reason + _setup_note(res), value=float(len(good)))}


def setups_table(results: dict[str, ScalingResults]) -> pd.DataFrame:
    """The two setups' populations side by side (for the chapter's first table)."""
    recs = {}
    for name, res in results.items():
        p = res.population.loc["all"]
        recs[SETUPS[name].label] = {
            "models (ATE)": int(p["models"]),
            "fine-tuned (T = 1)": int(p["treated"]),
            "compute strata": int(p["strata"]),
            "strata with both arms": int(p["strata_both"]),
            "share in them": f"{p['share_both']:.1%}",
            "official models (law)": len(res.official),
        }
    return pd.DataFrame(recs)


def comparison_table(results: dict[str, ScalingResults], what: str) -> pd.DataFrame:
    """One quantity under every setup, long, with 95 % intervals (for
    :func:`hca.plots.plot_ate` with ``group="setup"``).

    Parameters
    ----------
    results : dict
        Setup name -> :class:`ScalingResults`.
    what : {"ate", "r2", "tau"}
        Backdoor ATE (subsets all and the two lineages, by default Llama and Qwen), R^2 of
        the law (the same subsets) or the fine-tuning shift of the all-official fits.

    Returns
    -------
    pandas.DataFrame
        Columns ``subset, outcome`` (display name), ``setup`` (label), ``what``, ``ci_low``,
        ``ci_high``.
    """
    if what not in ("ate", "r2", "tau"):
        raise ValueError(f"what must be 'ate', 'r2' or 'tau', found {what!r}")
    low, high = ("r2_ci_low", "r2_ci_high") if what == "r2" else ("ci95_low", "ci95_high")
    recs = []
    for name, res in results.items():
        table = {"ate": res.effects, "r2": res.r2, "tau": res.tau}[what]
        for b in BENCH:
            base = {"outcome": benchmark_label(b), "setup": SETUPS[name].label}
            for sub in ("all",) if what == "tau" else ("all", *res.lineages):
                r = table.loc[b] if what == "tau" else table.loc[(sub, b)]
                recs.append(
                    {**base, "subset": sub, what: r[what], "ci_low": r[low], "ci_high": r[high]}
                )
    return pd.DataFrame(recs)


def printed_sigmoid(res: ScalingResults) -> pd.DataFrame:
    """Every parameter of the sigmoid law with treatment the authors' notebook printed
    (``L, x0, k, b`` and ``c``: scaling_law.ipynb, cell gKsjy_nl4nqF, cited in
    :func:`hca.data.authors_code_values`) beside ours on all rows of ``res``.

    Ours are put on their scale: ``x0`` is our ``log_c0`` minus
    :data:`hca.causal.sigmoid.AUTHORS_LOG_OFFSET` (their ``x = ln(6 N D)`` with N in billions
    and D in trillions), ``c`` is our ``tau``. Rows ``(outcome, parameter)``; columns
    ``theirs``, ``ours``, ``se_ours`` and ``ratio`` (ours / theirs).
    """
    acv = authors_code_values()["value"]
    names = {"L": "L", "x0": "log_c0", "k": "k", "b": "b", "c": "tau"}  # theirs -> ours
    recs = []
    for b in BENCH:
        fit = res.sigmoid.fits[("all", b)]
        for p, name in names.items():
            theirs = float(acv[f"sigmoid-tau-{b}" if p == "c" else f"sigmoid-{p}-{b}"])
            ours = float(getattr(fit, name)) - (AUTHORS_LOG_OFFSET if p == "x0" else 0.0)
            recs.append(
                {
                    "outcome": b,
                    "parameter": p,
                    "theirs": theirs,
                    "ours": ours,
                    "se_ours": float(fit.se[name]),
                    "ratio": ours / theirs if theirs else np.nan,
                }
            )
    return pd.DataFrame(recs).set_index(["outcome", "parameter"])


def printed_values(what: str) -> dict[str, float]:
    """The authors' printed ATE, tau (their ``c``) or R^2 per benchmark display name
    (:func:`hca.data.authors_code_values`; scaling_law.ipynb, all official rows)."""
    key = {"ate": "ate", "tau": "sigmoid-tau", "r2": "sigmoid-r2"}[what]
    acv = authors_code_values()["value"]
    return {benchmark_label(b): float(acv[f"{key}-{b}"]) for b in BENCH}


# =========================================================================== the page's words
#: What each step of the walk from the authors' setup to the careful one changes, in words.
STEP_WORDS: dict[str, str] = {
    "B": "counting chat models, merges and the other types as fine-tuned",
    "C": "adding the models of every provider",
    "D": "keeping one row per model",
    "E": "taking compute from the base model under the book's attribution",
    "F": "the book's corrections of the leaderboard's types",
}
#: Two R² closer than this are "about as well" fitted (the spread of R² between benchmarks
#: is ten times larger).
R2_TIE: float = 0.05
_MISSING = "–"


def _verdicts(page: Any, setup: str) -> dict[str, str]:
    return {r.id: r.setups[setup].verdict for r in page.rows if setup in r.setups}


def _pairs(res: ScalingResults) -> int:
    """How many of the 9 (knowledge-heavy, other) benchmark pairs the law's R² orders."""
    r2 = res.r2.loc["all", "r2"]
    return int(sum(r2[k] > r2[o] for k in KNOWLEDGE for o in OTHER))


def _setup_sentence(page: Any, setup: str) -> str:
    """What held under one setup: its claim counts and the lineages' MATH contrast."""
    res = page.results[setup]
    verdicts = _verdicts(page, setup)
    applicable = [v for v in verdicts.values() if v != "not applicable"]
    done = sum(v == "reproduced" for v in applicable)
    first, second = res.lineages
    diff = res.contrast.loc["math_lvl_5"]
    lo, hi = diff["ci95_low"], diff["ci95_high"]
    where = "spanning 0" if lo <= 0 <= hi else ("above 0" if lo > 0 else "below 0")
    who = (
        f"{count(len(res.official), 'official model')}"
        if setup == "authors"
        else f"{count(len(res.rows), 'model')}, chat models and merges counted as fine-tuned"
    )
    return (
        f"Under the {SETUPS[setup].label} ({who}), "
        f"{k_of_n(done, len(applicable), 'claims judged')} "
        + ("are" if done != 1 else "is")
        + f" reproduced, and {second}'s MATH gain minus {first}'s is {_signed(diff['diff'])} "
        f"points, its 95 % interval {where}."
    )


def _bridge_sentence(res: ScalingResults) -> str:
    """The step of the walk that moves the lineages' MATH contrast most, in words."""
    col = res.bridge.ates[(contrast_label(res.lineages), "math_lvl_5")]
    moves = col.diff().iloc[1:].abs().dropna()
    if moves.empty:
        return ""
    step = str(moves.idxmax())
    before = col.iloc[list(col.index).index(step) - 1]
    return (
        "The estimator is the same in both setups, but the fine-tuned models are not: "
        f"{STEP_WORDS[step]} alone moves that MATH difference from {_signed(before)} to "
        f"{_signed(col[step])} points ({{ref}}`scaling-bridge`)."
    )


def _r2_sentence(page: Any) -> str:
    """Why the setups' R² orders differ, in words chosen from the careful setup's R²."""
    a, c = page.results["authors"], page.results["careful"]
    r2 = c.r2.loc["all", "r2"]
    m, b = r2["math_lvl_5"], r2["bbh"]
    how = "about as well as" if abs(m - b) <= R2_TIE else ("better than" if m > b else "worse than")
    return (
        f"The law fits BBH, MMLU-PRO and GPQA better in {k_of_n(_pairs(a), 9, 'benchmark pairs')}"
        f" under the authors' setup, in {k_of_n(_pairs(c), 9)} under the careful one, where "
        f"MATH fits {how} BBH (R² {_plain(m)} against {_plain(b)}; {{ref}}`scaling-r2`)."
    )


def _sizes_sentence(page: Any) -> str:
    """Why Figure 12's verdict differs: one family by name against three by count."""
    a, c = page.results["authors"].monotonicity, page.results["careful"].monotonicity
    drops_a, drops_c = int(a["adjacent_drops"].sum()), int(c["adjacent_drops"].sum())
    how = "uniform" if drops_a == 0 else "not uniform either"
    return (
        f"Paper Figure 12's trend is {how} in the authors' {join_words(dict.fromkeys(a['family']))}"
        f" rows, matched by name, but {k_of_n(drops_c, int(c['steps'].sum()), 'steps')} between "
        f"adjacent base sizes go down in the careful setup's "
        f"{count(c['family'].nunique(), 'family', 'families')} ({{ref}}`scaling-family-sizes`)."
    )


def answer(page: Any) -> str:
    """The chapter's opening paragraph (MyST): what the paper claims, what held under each
    setup the page runs, and the cause of each difference, with links to the sections that
    show it. Every word that depends on a result is chosen from the page's results.

    Parameters
    ----------
    page : hca.paper.scorecard.ChapterPage
        The scaling chapter's page (:func:`hca.paper.scorecard.chapter_page`).
    """
    if page.chapter != "scaling":
        raise ValueError(f"answer: expected the scaling chapter's page, got {page.chapter!r}")
    first, second = page.settings.lineages
    claims = (
        "The paper finds that fine-tuning raises IFEval and MATH most, more so for Qwen- than "
        "for Llama-based models"
    )
    out = [
        claims + ", and that a sigmoid law in pretraining compute fits BBH, MMLU-PRO and GPQA best."
        if page.settings.paper_lineages
        else claims + f"; these settings compare {second} with {first} instead, so those claims "
        "are not applicable."
    ]
    out += [_setup_sentence(page, s) for s in page.setups]
    if len(page.setups) < 2:
        other = next(s for s in SETUP_NAMES if s not in page.setups)
        out.append(
            f"These settings do not run the {SETUPS[other].label}, so this page shows no "
            "comparison between the setups."
        )
        return " ".join(out)
    a, c = _verdicts(page, "authors"), _verdicts(page, "careful")
    moved = {cid for cid in a if a[cid] != c.get(cid)}
    if not moved:
        out.append(f"The two setups judge all {count(len(a), 'claim')} alike.")
        return " ".join(out)
    careful = page.results["careful"]
    if moved & {cid for cid in a if cid.startswith(("F13a", "F13bc"))}:
        out.append(_bridge_sentence(careful))
    if moved & {"F14-group", "F14-pairwise"}:
        out.append(_r2_sentence(page))
    if "F12-bigger-better" in moved:
        out.append(_sizes_sentence(page))
    return " ".join(s for s in out if s)


def _times(ratio: float) -> str:
    """Ours over theirs in words (:func:`hca.paper.glue.times_text`; a ratio below 0 is a
    parameter of the opposite sign)."""
    if ratio > 0:
        return times_text(ratio, "theirs")
    return f"{ratio:.2f} times theirs, the opposite sign"


def _setup_numbers(res: ScalingResults) -> dict[str, str]:
    """Every number the chapter's prose quotes of one setup's results, as text (keys without
    the setup's prefix; the same keys for every setup)."""
    first, second = res.lineages
    out: dict[str, str] = {}
    pp = res.printed_population["ours"]
    pop = res.population
    out["rows"] = f"{len(res.rows):,}"
    out["official"] = f"{len(res.official):,}"
    out["strata"] = f"{int(pp['strata']):,}"
    out["share_both"] = f"{pp['share_both']:.1%}"
    out["rows_both"] = f"{int(pp['rows_both']):,}"
    # their printed ATE, tau and R^2 beside ours
    pr = res.printed
    same = np.sign(pr["ate_theirs"]) == np.sign(pr["ate_ours"])
    gap = (pr["ate_ours"] - pr["ate_theirs"]).abs()
    out["ate_same_sign"] = k_of_n(int(same.sum()), len(pr))
    out["sign_note"] = (
        " ("
        + join_words(
            f"{benchmark_label(b)} is {_signed(pr.loc[b, 'ate_ours'])} for us, "
            f"{_signed(pr.loc[b, 'ate_theirs'])} for them"
            for b in pr.index[~same]
        )
        + ")"
        if (~same).any()
        else ""
    )
    out["ate_gap_min"], out["ate_gap_max"] = _plain(gap.min(), 1), _plain(gap.max(), 1)
    tau_gap = (pr["tau_ours"] - pr["tau_theirs"]).abs()
    out["tau_gap_max"] = _plain(tau_gap.max(), 1)
    out["tau_gap_name"] = benchmark_label(str(tau_gap.idxmax()))
    out["r2_gap_max"] = _plain((pr["r2_ours"] - pr["r2_theirs"]).abs().max())
    # every parameter of their sigmoid law: signed (SE below the size) or too uncertain to sign
    sig = printed_sigmoid(res)
    signed = sig["se_ours"] < sig["ours"].abs()
    close = (sig["ratio"] - 1).abs() <= 0.25
    out["sig_n"] = count(len(sig), "parameter")
    out["sig_signed"] = f"{int(signed.sum())}"
    out["sig_close"] = f"{int((close & signed).sum())}"
    far = sig.loc[signed & ~close, "ratio"]
    out["sig_far"] = (
        join_words(f"{benchmark_label(o)} {p} ({_times(r)})" for (o, p), r in far.items()) or "none"
    )
    out["sig_unsigned"] = join_words(f"{benchmark_label(o)} {p}" for o, p in sig.index[~signed])
    out["sig_ifeval_max"] = f"{(sig.loc['ifeval', 'ratio'] - 1).abs().max():.0%}"
    # Figure 12
    mono = res.monotonicity
    out["f12_up"] = k_of_n(int((mono["largest_minus_smallest"] > 0).sum()), len(mono))
    out["f12_drops"] = k_of_n(int(mono["adjacent_drops"].sum()), int(mono["steps"].sum()), "steps")
    # the law: R^2, tau, the R^2 gap and the pairs it orders
    r2 = res.r2.loc["all", "r2"]
    for b in BENCH:
        t = res.tau.loc[b]
        out[f"r2_{b}"] = _plain(r2[b])
        out[f"tau_{b}"] = _signed(t["tau"])
        out[f"tau_{b}_ci"] = _ci(t, "tau")
    out["tau_boot"] = count(res.tau["n_boot"].min(), "cluster-bootstrap refit")
    out["gap_ci"] = _ci(res.r2_gaps.loc["all"], "gap", 2)
    out["pairs"] = k_of_n(_pairs(res), 9, "pairs")
    # Figure 13: ATEs, effect sizes, the lineages' contrast
    e = res.effects.loc["all"]
    for b in BENCH:
        out[f"ate_{b}"] = _signed(e.loc[b, "ate"])
        out[f"d_{b}"] = _plain(e.loc[b, "d"])
        out[f"diff_{b}"] = _signed(res.contrast.loc[b, "diff"])
    out["ate_boot"] = count(e["n_boot"].min(), "cluster-bootstrap resample")
    arm = res.rows[(res.rows["lineage"] == second) & (res.rows["T"] == 1)]
    out["second_treated"] = f"{len(arm):,}"
    out["second_used"] = k_of_n(int(res.lineage_strata["math_lvl_5"]["n1"].sum()), len(arm))
    out["second_strata"] = count(pop.loc[second, "strata_both"], "stratum", "strata")
    heavy = res.lineage_strata["ifeval"].iloc[0]
    out["heavy_label"] = str(heavy["label"])
    out["heavy_weight"] = f"{heavy['weight']:.0%}"
    out["heavy_gain"] = _signed(heavy["diff"])
    # the estimator: IPW against backdoor
    out["smd_raw"] = _signed(res.balance.loc["degree 1", "raw"], 2)
    out["smd_ipw1"] = _signed(res.balance.loc["degree 1", "ipw"], 2)
    out["smd_ipw2"] = _signed(res.balance.loc["degree 2", "ipw"], 3)
    out["ipw2_gap"] = _plain((res.ipw["IPW degree 2"] - res.ipw["backdoor"]).abs().max(), 1)
    # Remark 3: what each lineage is fine-tuned for
    for key, lin in (("first", first), ("second", second)):
        n_ft = int(res.mix.loc[lin, "fine-tunes"]) if lin in res.mix.index else 0
        share = float(res.mix.loc[lin, "math-oriented name"]) if n_ft else 0.0
        out[f"mix_{key}"] = f"{round(share * n_ft):,} of {lin}'s {n_ft:,}"
    return out


def _contrast_words(res: ScalingResults) -> str:
    """One sentence: the lineages' contrast under one setup, its directions chosen from it."""
    first, second = res.lineages
    c = res.contrast

    def more(b: str) -> str:
        d = c.loc[b, "diff"]
        side = "more" if d > 0 else "less"
        return f"{_plain(abs(d), 1)} points {side} on {benchmark_label(b)}" if d else "as much"

    drops = [b for b in GENERAL if c.loc[b, "diff"] < 0]
    return (
        f"Under the {res.setup.label}, {second} gains {more('math_lvl_5')} and "
        f"{more('ifeval')} than {first}, and drops more on {_which_general(drops, named=True)}."
    )


def numbers(page: Any) -> dict[str, str]:
    """Every number and result-dependent phrase the chapter's prose quotes, as text, from the
    page's results (``{eval}`text(G, "name")```).

    Keys: ``<setup>_<name>`` for each setup (:func:`_setup_numbers`; ``"–"`` for a setup the
    settings do not run, so that the prose still reads), ``their_*`` (the authors' printed
    population), ``br_<step>_<all|contrast>_<outcome>`` (the walk between the setups),
    ``first``, ``second``, ``contrast`` (the lineages), and a few phrases chosen from the
    results (``contrast_text``, ``arm_text``).

    Parameters
    ----------
    page : hca.paper.scorecard.ChapterPage
        The scaling chapter's page.
    """
    if page.chapter != "scaling":
        raise ValueError(f"numbers: expected the scaling chapter's page, got {page.chapter!r}")
    first, second = page.settings.lineages
    ran = {s: _setup_numbers(page.results[s]) for s in page.setups}
    keys = next(iter(ran.values())).keys()
    out: dict[str, str] = {"first": first, "second": second, "contrast": f"{second} − {first}"}
    for s in SETUP_NAMES:
        for k in keys:
            out[f"{s}_{k}"] = ran[s][k] if s in ran else _MISSING
    acv = authors_code_values()["value"]
    their = {"rows": acv["ate-rows"], "strata": acv["ate-strata"]}
    out["their_rows"] = f"{int(their['rows']):,}"
    out["their_strata"] = f"{int(their['strata']):,}"
    out["their_share_both"] = f"{acv['ate-support-share']:.1%}"
    out["their_rows_both"] = f"{round(acv['ate-support-share'] * their['rows']):,}"
    out["their_table"] = f"{int(acv['table-rows']):,}"
    out["bbh_fit_paper"] = f"{float(load_paper_values().loc['F7-bbh-fit', 'value']):.1f}"
    any_res = page.results[page.setups[0]]
    br = any_res.bridge
    out["n_final_only"] = f"{br.n_final_only:,}"
    out["n_csv"] = f"{br.n_csv:,}"
    out["n_candidates"] = count(len(br.final_candidates), "model")
    label = contrast_label(page.settings.lineages)
    for step in br.ates.index:
        for sub, key in (("all", "all"), (label, "contrast")):
            for b in BENCH:
                v = br.ates.loc[step, (sub, b)]
                out[f"br_{step}_{key}_{b}"] = _MISSING if np.isnan(v) else _signed(v)
    out["contrast_text"] = " ".join(_contrast_words(page.results[s]) for s in page.setups)
    if "authors" not in page.setups:
        out["arm_text"] = "The authors' setup, whose treated arm this paragraph reads, is not run."
    elif page.settings.paper_lineages:
        out["arm_text"] = (
            "The authors' Qwen arm is the official domain-specific fine-tunes alone, mostly math "
            "and instruction specialists (a math model, distilled reasoning models, 1M-context "
            "instruct models):"
        )
    else:
        out["arm_text"] = (
            f"The authors' {second} arm is the official domain-specific fine-tunes of {second} "
            "alone:"
        )
    return out
