"""The matrix-completion chapter's analysis (Remark 1, Appendix G), under either setup.

Appendix G removes scores of the Qwen2.5-14B fine-tunes and compares completing them from the
whole leaderboard ("global") with completing the domain alone ("local"): at random
(Figure 15a) and in blocks, three benchmarks fully observed (Figures 15b and 16).
:func:`run` computes our side under one setup (:mod:`hca.paper.setups`) with
:func:`hca.paper.appendix_g.run_appendix_g`, and the evaluators below judge the four claims.

``careful``
    This book's design (:class:`hca.paper.appendix_g.AppendixGDesign` defaults): the table of
    one row per model, the domain by this book's attribution, only the domain's rows lose
    entries, soft-impute with the validated shrinkage (centred, solved to its limit), SMC
    for the blocks (one block of rows), the text's hidden share and 1,000 repetitions.
``authors``
    The authors' code (``hlzhang109/causal-eval``, ``scripts/matrix_completion.ipynb``,
    :meth:`hca.paper.appendix_g.AppendixGDesign.authors`): the final 4,576-row table with
    precision duplicates, the local rows every model whose name contains the authors'
    label ``qwen2.5-14b`` (their ``choose_subset_indices``), every row masked,
    ``fancyimpute.SoftImpute(max_rank=3)`` with its defaults for both patterns
    (:data:`hca.completion.AUTHORS_SOFT_IMPUTE`), each other column losing its own rows,
    the code's hidden share with its 500 repetitions, seed 2025. The block design runs
    fewer repetitions than their 100 per set and ``p`` (:class:`Settings`).

Both setups run both hidden shares (the text's, the careful setup's, and the code's, the
authors' setup's) and a curve over the shares 0.1, ..., 0.9 with fewer repetitions, so that
the chapter can set them beside the means the authors' notebook prints
(:func:`printed_means`).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from hca.completion import (
    AUTHORS_SOFT_IMPUTE,
    compare_approaches,
    domain_matrix,
    global_vs_local,
    random_mask_diagnostics,
)
from hca.data import authors_code_values
from hca.data.registry import V2_BENCHMARKS
from hca.paper.appendix_g import AppendixGDesign, AppendixGResults, run_appendix_g
from hca.paper.claims import Outcome, claim, grade, interval_verdict
from hca.paper.constants import AUTHORS_V2_LABELS
from hca.paper.replication import v2_frame
from hca.paper.setups import SETUP_NAMES, SETUPS, Setup
from hca.paper.shape import ChapterSpec

__all__ = [
    "Settings",
    "CompletionResults",
    "run",
    "printed_means",
    "rate_table",
    "design_table",
    "DOMAIN",
    "EQUAL_WITHIN",
]

#: The domain of Appendix G.
DOMAIN = "Qwen2.5-14B"
#: Local soft-impute "equals" the local column means when their mean RMSEs differ by less
#: than this share.
EQUAL_WITHIN = 0.02
_AUTHORS_BLOCK = 50  # repetitions per joblib task in the authors' design (every row masked)
_LABEL = {v: k for k, v in AUTHORS_V2_LABELS.items()}[DOMAIN]  # the authors' "qwen2.5-14b"


@dataclass(frozen=True)
class Settings:
    """Repetition counts (defaults: the book's full counts) and worker processes.

    Attributes
    ----------
    setups : tuple of str
        The setups to run (:data:`hca.paper.setups.SETUP_NAMES`: both).
    random_reps : int or None
        Figure 15a at the setup's hidden share (None: ``Setup.completion_reps``).
    other_reps, authors_other_reps : int
        At the other setup's hidden share (careful setup, authors' setup).
    curve_reps, authors_curve_reps : int
        At each further hidden share 0.1, ..., 0.9 (0: no curve).
    block_reps, authors_block_reps : int
        Figure 15b: per set of observed benchmarks and ``p`` (``p`` other than 0.5).
    set_reps, authors_set_reps : int
        Figure 16: per set at ``p = 0.5`` (also Figure 15b's runs at 0.5).
    block_ps : tuple of float or None
        Values of ``p`` of the block design (None: 0.1, ..., 0.9).
    rank_check_reps : int
        SMC rank check per set (careful setup only).
    diagnostic_draws : int
        Random masks of the domain alone whose errors are split by row coverage.
    solver_reps : int
        Authors' setup: repetitions per hidden share of the solver check (fancyimpute's
        stopping rule against the same soft-impute solved to its limit, same masks).
    n_jobs : int or None
        joblib workers for the repetitions (None: joblib's default, one process unless
        :func:`joblib.parallel_config` says otherwise; the results do not depend on it).
    """

    setups: tuple[str, ...] = SETUP_NAMES  # the setups to run
    random_reps: int | None = None
    other_reps: int = 1000
    authors_other_reps: int = 100
    curve_reps: int = 20
    authors_curve_reps: int = 10
    block_reps: int = 5
    authors_block_reps: int = 1
    set_reps: int = 100
    authors_set_reps: int = 10
    block_ps: tuple[float, ...] | None = None
    rank_check_reps: int = 10
    diagnostic_draws: int = 6
    solver_reps: int = 6
    n_jobs: int | None = None

    def design(self, setup: Setup) -> AppendixGDesign:
        """The :class:`~hca.paper.appendix_g.AppendixGDesign` of ``setup`` with these counts."""
        authors = setup.completion == "authors"
        other = next(
            s.hidden_share for s in SETUPS.values() if s.hidden_share != setup.hidden_share
        )
        reps = {
            setup.hidden_share: self.random_reps or setup.completion_reps,
            other: self.authors_other_reps if authors else self.other_reps,
        }
        curve = self.authors_curve_reps if authors else self.curve_reps
        base = AppendixGDesign()
        shares = sorted({p for p, _ in base.random_runs} | set(reps))
        runs = tuple((p, reps.get(p, curve)) for p in shares if reps.get(p, curve) > 0)
        common: dict[str, Any] = {
            "random_runs": runs,
            "ps_block": self.block_ps or base.ps_block,
            "n_reps_block": self.authors_block_reps if authors else self.block_reps,
            "n_reps_sets": self.authors_set_reps if authors else self.set_reps,
        }
        if authors:
            return AppendixGDesign.authors(**common)
        return AppendixGDesign(**common, n_reps_rank_check=self.rank_check_reps)


@dataclass(frozen=True, eq=False)
class CompletionResults:
    """Our side of Appendix G under one setup.

    Attributes
    ----------
    setup : Setup
    runs : AppendixGResults
        Every repetition (``runs.frame``) and the design (``runs.design``).
    n_rows, n_local : int
        Rows of the score matrix and of the domain.
    local_rule : str
        How the domain's rows are chosen.
    levels : DataFrame
        Mean score per benchmark of the domain and of the other models.
    diagnostics : DataFrame
        :func:`hca.completion.random_mask_diagnostics` of the domain alone at the text's
        hidden share (column ``hidden_share``).
    solver_check : DataFrame or None
        Authors' setup only: Figure 15a's design at both hidden shares with the authors'
        soft-impute (``variant`` "fancyimpute's stopping rule") and the same soft-impute
        solved to its limit ("solved to the limit") on the same masks.
    seconds : float
        Wall seconds of the computation.
    """

    setup: Setup
    runs: AppendixGResults
    n_rows: int
    n_local: int
    local_rule: str
    levels: pd.DataFrame
    diagnostics: pd.DataFrame
    solver_check: pd.DataFrame | None
    seconds: float

    @property
    def design(self) -> AppendixGDesign:
        return self.runs.design

    @property
    def method(self) -> dict[str, str]:
        """Display names of the random and block methods."""
        return self.design.method_labels

    def random_summary(self, level: float = 0.95) -> pd.DataFrame:
        """Figure 15a: :func:`~hca.completion.compare_approaches` by variant and hidden share."""
        return compare_approaches(self.runs.select("15a"), by=("variant", "p"), level=level)

    def block_summary(self) -> pd.DataFrame:
        """Figure 15b: by variant and ``p``, pooled over the 20 sets."""
        return compare_approaches(self.runs.select("15b"), by=("variant", "p"))

    def sets_summary(self) -> pd.DataFrame:
        """Figure 16: by variant and set of observed benchmarks, at ``p = 0.5``."""
        return compare_approaches(self.runs.sets(), by=("variant", "observed_cols"))

    def at(self, share: float, variant: str | None = None, level: float = 0.95) -> pd.Series:
        """Figure 15a's summary row at one hidden share (default variant: the method)."""
        s = self.random_summary(level)
        ps = s.index.get_level_values("p").unique()
        p = _key(ps, share, f"hidden share {share} was not run; have {sorted(ps)}")
        return s.loc[(variant or self.method["random"], p)]

    def local_vs_means(self) -> pd.DataFrame:
        """Local soft-impute against the local column means at every hidden share run with
        the full repetitions: mean RMSEs, relative difference and whether they are equal
        (within :data:`EQUAL_WITHIN`)."""
        s = self.random_summary()
        rows = []
        for p in self.main_shares:
            si, cm = s.loc[(self.method["random"], p)], s.loc[("column means", p)]
            rel = si["local_mean"] / cm["local_mean"] - 1.0
            rows.append(
                {
                    "hidden_share": p,
                    "soft_impute": si["local_mean"],
                    "column_means": cm["local_mean"],
                    "relative": rel,
                    "equal": bool(abs(rel) < EQUAL_WITHIN),
                }
            )
        return pd.DataFrame(rows).set_index("hidden_share")

    @property
    def main_shares(self) -> tuple[float, ...]:
        """The two hidden shares (the setups') run with many repetitions, ascending."""
        return tuple(sorted({s.hidden_share for s in SETUPS.values()}))

    def summary(self) -> str:
        own = self.at(self.setup.hidden_share)
        return (
            f"{self.setup.label}: {self.n_local} of {self.n_rows} rows local; "
            f"hidden share {self.setup.hidden_share:g}: RMSE local "
            f"{own['local_mean']:.2f} vs global {own['global_mean']:.2f} "
            f"({int(own['n'])} repetitions, {self.method['random']})"
        )


def _key(values: Any, share: float, missing: str) -> float:
    """The value of ``values`` equal to ``share`` up to rounding (else ValueError ``missing``)."""
    hit = [p for p in values if np.isclose(p, share)]
    if not hit:
        raise ValueError(missing)
    return hit[0]


def _data(setup: Setup) -> tuple[pd.DataFrame, np.ndarray, str]:
    """Scores, local rows and the rule that chose them."""
    frame = v2_frame(setup).reset_index(drop=True)
    if setup.completion == "authors":
        names = frame["model_id"].astype(str).str.lower()
        local = names.str.contains(_LABEL, regex=True).to_numpy(dtype=bool)
        X = frame[list(V2_BENCHMARKS)].astype(float)
        return X, local, f"model name contains '{_LABEL}' (the authors' choose_subset_indices)"
    X, local = domain_matrix(frame, DOMAIN, V2_BENCHMARKS)
    return X, local, f"attributed to {DOMAIN} by this book's rule"


def _levels(X: pd.DataFrame, local: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {"domain": X[local].mean(), "other models": X[~local].mean(), "domain sd": X[local].std()}
    ).T


def _diagnostics(
    X: pd.DataFrame, local: np.ndarray, shares: tuple[float, ...], draws: int, seed: int
) -> pd.DataFrame:
    parts = [
        random_mask_diagnostics(X, local, p=p, n_draws=draws, random_state=seed).assign(
            hidden_share=p
        )
        for p in shares
    ]
    return pd.concat(parts, ignore_index=True)


def _solver_check(
    X: pd.DataFrame, local: np.ndarray, shares: tuple[float, ...], reps: int, seed: int
) -> pd.DataFrame:
    """The authors' soft-impute with fancyimpute's stopping rule and solved to its limit."""
    limit = {
        k: v for k, v in AUTHORS_SOFT_IMPUTE.items() if k not in ("stopping", "tol", "max_iter")
    }
    parts = []
    for p in shares:
        for variant, params in (
            ("fancyimpute's stopping rule", AUTHORS_SOFT_IMPUTE),
            ("solved to the limit", limit),
        ):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                df = global_vs_local(
                    X,
                    local,
                    "random",
                    p=p,
                    n_reps=reps,
                    random_state=seed,
                    method="soft_impute",
                    method_params=params,
                    mask_scope="all",
                )
            parts.append(df.assign(variant=variant))
    return pd.concat(parts, ignore_index=True)


def _compute(setup: Setup, settings: Settings) -> CompletionResults:
    t0 = time.perf_counter()
    X, local, rule = _data(setup)
    design = settings.design(setup)
    split = _AUTHORS_BLOCK if setup.completion == "authors" else None  # balance the workers
    runs = run_appendix_g(X, local, design, n_jobs=settings.n_jobs, max_reps_per_task=split)
    shares = tuple(sorted({s.hidden_share for s in SETUPS.values()}))
    text = (SETUPS["careful"].hidden_share,)  # where the levels matter most
    diag = _diagnostics(X, local, text, settings.diagnostic_draws, design.random_state)
    check = (
        _solver_check(X, local, shares, settings.solver_reps, design.random_state)
        if setup.completion == "authors" and settings.solver_reps > 0
        else None
    )
    return CompletionResults(
        setup=setup,
        runs=runs,
        n_rows=len(X),
        n_local=int(local.sum()),
        local_rule=rule,
        levels=_levels(X, local),
        diagnostics=diag,
        solver_check=check,
        seconds=time.perf_counter() - t0,
    )


#: The chapter's shape (:class:`hca.paper.shape.ChapterSpec`).
CHAPTER: ChapterSpec[Settings, CompletionResults] = ChapterSpec(
    key="completion", settings=Settings, compute=_compute
)


#: The chapter's results under a setup, once per process (:meth:`~hca.paper.shape.ChapterSpec.run`).
run = CHAPTER.run


# =========================================================================== the authors' code
def printed_means() -> pd.DataFrame:
    """The mean RMSEs the authors' notebook prints for Figure 15a's design (500 repetitions
    per hidden share), indexed by hidden share: ``global``, ``local``
    (``hca/data/tables/authors_code_values.csv``, ids ``completion-<approach>-<share>``)."""
    acv = authors_code_values()
    rows = acv[acv["id"].str.startswith("completion-")]
    parts = rows["id"].str.extract(r"completion-(global|local)-([0-9.]+)")
    out = pd.DataFrame(
        {
            "approach": parts[0].to_numpy(),
            "p": parts[1].astype(float).to_numpy(),
            "value": rows["value"].to_numpy(),
        }
    )
    return (
        out.pivot(index="p", columns="approach", values="value")
        .rename_axis("hidden_share")
        .rename_axis(None, axis=1)[["global", "local"]]
    )


def _design_row(res: CompletionResults) -> dict[str, str]:
    d = res.design
    own = res.at(res.setup.hidden_share)
    return {
        "models in the table": f"{res.n_rows:,}",
        "local rows": f"{res.n_local} ({res.local_rule})",
        "rows that lose entries": "every row" if d.mask_scope == "all" else "the domain's",
        "random pattern": res.method["random"],
        "block pattern": res.method["block"]
        + (", one block of rows" if d.same_rows else ", rows drawn per column"),
        "hidden share of the claim": f"{res.setup.hidden_share:g} ({int(own['n'])} repetitions)",
        "blocks: repetitions per set": f"{d.n_reps_block} per p, {d.n_reps_sets} at "
        f"p = {d.p_sets:g}",
    }


def design_table(results: dict[str, CompletionResults]) -> pd.DataFrame:
    """The design of every setup side by side (one column per setup, as on the page): table
    size, local rows, masks, methods, the claim's hidden share and the repetitions."""
    return pd.DataFrame({r.setup.label: _design_row(r) for r in results.values()})


def rate_table(
    results: dict[str, CompletionResults], shares: tuple[float, ...] | None = None
) -> pd.DataFrame:
    """Mean RMSE of global and local completion: the authors' printed means beside each
    setup's (columns ``(source, approach)``, and ``(setup, "repetitions")``).

    ``shares`` defaults to 0.1 (when the curve over shares was run) and the two hidden shares
    run with many repetitions (the setups' 0.2 and 0.8): the three the chapter discusses. A
    share off the two main ones comes from the curve (fewer repetitions; the ``repetitions``
    column says how many).
    """
    printed = printed_means()
    res0 = next(iter(results.values()))
    if shares is None:  # 0.1 where the curve was run
        run_ps = res0.random_summary().index.get_level_values("p").unique()
        extra = (0.1,) if any(np.isclose(0.1, q) for q in run_ps) else ()
        shares = tuple(sorted({*extra, *res0.main_shares}))
    cols = {}
    for share in shares:
        p = _key(printed.index, share, f"no printed mean at hidden share {share}")
        row = {
            ("authors' notebook", "global"): printed.loc[p, "global"],
            ("authors' notebook", "local"): printed.loc[p, "local"],
        }
        for res in results.values():
            s = res.at(share)
            row[(res.setup.label, "global")] = s["global_mean"]
            row[(res.setup.label, "local")] = s["local_mean"]
            row[(res.setup.label, "repetitions")] = int(s["n"])
        cols[share] = row
    out = pd.DataFrame(cols).T
    out.index.name = "hidden share"
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    return out


# =========================================================================== claims
@claim("F15a-local", chapter="completion", figure="fig-completion-15a")
def _fig15a(res: CompletionResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    p = res.setup.hidden_share
    s95, s80 = res.at(p), res.at(p, level=0.80)
    cm = res.at(p, "column means")
    v = interval_verdict(
        s95["diff_mean"],
        (s95["diff_lo"], s95["diff_hi"]),
        (s80["diff_lo"], s80["diff_hi"]),
        sign=-1,
    )
    ours = (
        f"hidden share {p:g}, {int(s95['n'])} repetitions, {res.method['random']}: "
        f"RMSE local {s95['local_mean']:.2f} vs global {s95['global_mean']:.2f}; "
        f"local − global {s95['diff_mean']:+.2f} (95 % interval {s95['diff_lo']:+.2f} to "
        f"{s95['diff_hi']:+.2f}); local column means {cm['local_mean']:.2f}"
    )
    other = [q for q in res.main_shares if not np.isclose(q, p)]
    reason = {
        "reproduced": "local better, 95 % interval below 0",
        "partly": "local better, only the 80 % interval below 0",
        "not reproduced": "the interval of local − global is not below 0",
    }[v]
    reason += f"; local wins {s95['share_local_better']:.0%} of repetitions"
    for q in other:
        o = res.at(q)
        reason += (
            f"; at hidden share {q:g} local − global = {o['diff_mean']:+.2f} "
            f"({int(o['n'])} repetitions)"
        )
    return {"F15a-local": Outcome(ours, v, reason, value=float(s95["diff_mean"]))}


@claim("F15b-local", chapter="completion", figure="fig-completion-15b")
def _fig15b(res: CompletionResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    s = res.block_summary().loc[res.method["block"]]
    better = int((s["local_mean"] < s["global_mean"]).sum())
    n_p = len(s)
    avg = float((s["local_mean"] - s["global_mean"]).mean())
    ours = (
        f"local mean RMSE < global at {better} of {n_p} values of p (all 20 sets of 3 "
        f"observed benchmarks, {res.method['block']}); local {s['local_mean'].min():.1f}-"
        f"{s['local_mean'].max():.1f}, global {s['global_mean'].min():.1f}-"
        f"{s['global_mean'].max():.1f}; averaged over p local − global {avg:+.2f}"
    )
    worse = [f"{p:g}" for p, r in s.iterrows() if r["local_mean"] >= r["global_mean"]]
    v = grade(better == n_p, better >= n_p - 2 and avg < 0)
    reason = (
        "local better at every p"
        if not worse
        else "global at least as good at p = " + ", ".join(worse)
    )
    return {"F15b-local": Outcome(ours, v, reason, value=float(better))}


@claim("F16-no-worse", "F16-mostly-better", chapter="completion", figure="fig-completion-16")
def _fig16(res: CompletionResults, rows: pd.DataFrame) -> dict[str, Outcome]:
    s = res.sets_summary().loc[res.method["block"]]
    counts = s["verdict"].value_counts()
    worse, better = int(counts.get("global better", 0)), int(counts.get("local better", 0))
    n = len(s)
    ours = (
        f"local better in {better}, no clear difference in {n - worse - better}, global "
        f"better in {worse} of {n} sets (95 % intervals of the paired difference; "
        f"{res.method['block']}, p = {res.design.p_sets:g}, "
        f"{int(s['n'].min())} repetitions per set)"
    )
    if worse:
        w = s[s["verdict"] == "global better"]
        ours += "; global ahead by " + ", ".join(f"{d:.2f}" for d in w["diff_mean"]) + " points"
    never = "local never worse" if worse == 0 else f"global better in {worse} set(s)"
    mostly = f"local significantly better in {better} of {n} sets"
    return {
        "F16-no-worse": Outcome(ours, grade(worse == 0, worse <= 2), never, value=float(worse)),
        "F16-mostly-better": Outcome(
            ours, grade(better >= 11, better >= 7), mostly, value=float(better)
        ),
    }
