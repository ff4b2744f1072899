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

import difflib
import time
import warnings
from dataclasses import dataclass, fields
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
from hca.paper.words import count, join_words, k_of_n, share_words

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
#: The fewest models the completed domain may have in a setup's table. At the largest hidden
#: share of the curve, 0.9, a column of a domain of ``n`` models is hidden entirely with
#: probability ``0.9 ** n``, which soft-impute cannot fill; with 80 models the chance that this
#: happens in one of the six columns of the careful setup's 20 repetitions is about 3 %, and
#: it falls tenfold every 22 models more (Appendix G's domain has 92 and 134).
MIN_LOCAL_MODELS = 80
#: Local soft-impute "equals" the local column means when their mean RMSEs differ by less
#: than this share.
EQUAL_WITHIN = 0.02
_AUTHORS_BLOCK = 50  # repetitions per joblib task in the authors' design (every row masked)
_LABELS = {v: k for k, v in AUTHORS_V2_LABELS.items()}  # "Qwen2.5-14B" -> "qwen2.5-14b"


def authors_label(domain: str) -> str:
    """The name pattern by which the authors' code chooses a domain's rows (their
    ``choose_subset_indices``: the model's name, lower-cased, contains it): their label of one
    of the eight base models of Section 1.1 (``"qwen2.5-14b"``), else the name lower-cased."""
    return _LABELS.get(domain, domain.lower())


@dataclass(frozen=True)
class Settings:
    """Repetition counts (defaults: the book's full counts) and worker processes.

    Attributes
    ----------
    setups : tuple of str
        The setups to run (:data:`hca.paper.setups.SETUP_NAMES`: both).
    domain : str
        The domain whose scores are hidden and completed (default Appendix G's,
        :data:`DOMAIN`), named as in this book's attribution; under the authors' setup its
        rows are the models whose name contains :func:`authors_label`. It needs
        :data:`MIN_LOCAL_MODELS` models in every setup's table (:func:`check_domain`).
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
    domain: str = DOMAIN  # the domain completed
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

    def __post_init__(self) -> None:
        if not isinstance(self.domain, str) or not self.domain.strip():
            raise ValueError(f"Settings.domain must be a base model's name, got {self.domain!r}")
        counts = {f.name: getattr(self, f.name) for f in fields(self) if f.name.endswith("_reps")}
        bad = {
            k: v
            for k, v in counts.items()
            if not (v is None and k == "random_reps")
            and (not isinstance(v, int) or isinstance(v, bool) or v < 0)
        }
        if bad or self.random_reps == 0 or self.set_reps < 1 or self.authors_set_reps < 1:
            raise ValueError(
                f"Settings: repetition counts must be whole numbers >= 0 (random_reps None or "
                f">= 1, set_reps and authors_set_reps >= 1); got {bad or counts}"
            )

    @property
    def paper_domain(self) -> bool:
        """Whether the completed domain is Appendix G's (:data:`DOMAIN`)."""
        return self.domain == DOMAIN

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
    domain : str
        The domain completed (:attr:`Settings.domain`).
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
    domain: str
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


def _data(setup: Setup, domain: str = DOMAIN) -> tuple[pd.DataFrame, np.ndarray, str]:
    """Scores, local rows and the rule that chose them."""
    frame = v2_frame(setup).reset_index(drop=True)
    if setup.completion == "authors":
        label = authors_label(domain)
        names = frame["model_id"].astype(str).str.lower()
        local = names.str.contains(label, regex=True).to_numpy(dtype=bool)
        X = frame[list(V2_BENCHMARKS)].astype(float)
        return X, local, f"model name contains '{label}' (the authors' choose_subset_indices)"
    present = set(frame["base_model"].dropna())
    if domain not in present:  # 0 models: check_domain names it with its neighbours
        return frame[list(V2_BENCHMARKS)].astype(float), np.zeros(len(frame), bool), ""
    X, local = domain_matrix(frame, domain, V2_BENCHMARKS)
    return X, local, f"attributed to {domain} by this book's rule"


def check_domain(settings: Settings) -> None:
    """Check that ``settings.domain`` has at least :data:`MIN_LOCAL_MODELS` models in the
    table of every setup of ``settings.setups`` (before any completion runs).

    Raises
    ------
    ValueError
        Naming the domain, the setup, its number of models and what is expected (with the
        nearest names of this book's attribution when it has none).
    """
    for name in settings.setups:
        setup = SETUPS[name]
        _, local, rule = _data(setup, settings.domain)
        n = int(local.sum())
        if n >= MIN_LOCAL_MODELS:
            continue
        names = [str(x) for x in v2_frame("careful")["base_model"].dropna().unique()]
        near = difflib.get_close_matches(settings.domain, names, n=3, cutoff=0.6)
        hint = f"; similar names: {near}" if near and n == 0 else ""
        raise ValueError(
            f"Settings.domain: {settings.domain!r} has {n} models in the {setup.label}'s table"
            + (f" ({rule})" if rule else "")
            + f"; expected at least {MIN_LOCAL_MODELS} (at 0.9 hidden a smaller domain loses "
            f"whole columns){hint}"
        )


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
    check_domain(settings)
    t0 = time.perf_counter()
    X, local, rule = _data(setup, settings.domain)
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
        domain=settings.domain,
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
        f"hidden share {p:g}, {count(s95['n'], 'repetition')}, {res.method['random']}: "
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
    n = int(s95["n"])
    reason += f"; local wins in {share_words(s95['share_local_better'], n, 'repetitions')}"
    for q in other:
        o = res.at(q)
        reason += (
            f"; at hidden share {q:g} local − global = {o['diff_mean']:+.2f} "
            f"({count(o['n'], 'repetition')})"
        )
    return {"F15a-local": _outcome(res, ours, v, reason, float(s95["diff_mean"]))}


#: The reason of a claim about Appendix G's domain when the settings complete another.
def _other_domain(res: CompletionResults) -> str:
    return f"the settings complete another domain ({res.domain}) than the paper's ({DOMAIN})"


def _outcome(res: CompletionResults, ours: str, v: str, reason: str, value: float) -> Outcome:
    """The claim's outcome; not applicable when the settings complete another domain."""
    if res.domain != DOMAIN:
        return Outcome(ours, "not applicable", _other_domain(res), value=value)
    return Outcome(ours, v, reason, value=value)


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
    return {"F15b-local": _outcome(res, ours, v, reason, float(better))}


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
        f"{count(s['n'].min(), 'repetition')} per set)"
    )
    if worse:
        w = s[s["verdict"] == "global better"]
        ours += "; global ahead by " + ", ".join(f"{d:.2f}" for d in w["diff_mean"]) + " points"
    never = "local never worse" if worse == 0 else f"global better in {count(worse, 'set')}"
    mostly = f"local significantly better in {better} of {n} sets"
    return {
        "F16-no-worse": _outcome(res, ours, grade(worse == 0, worse <= 2), never, float(worse)),
        "F16-mostly-better": _outcome(
            res, ours, grade(better >= 11, better >= 7), mostly, float(better)
        ),
    }


# =========================================================================== the page
#: The hidden share of the paper's text (the careful setup's) and of the authors' code.
TEXT_SHARE: float = SETUPS["careful"].hidden_share
CODE_SHARE: float = SETUPS["authors"].hidden_share
#: What the page shows for a number it cannot compute under its settings.
MISSING = "–"


def _share_at(values: Any, share: float) -> Any:
    """The element of ``values`` equal to ``share`` up to rounding, or None."""
    hit = [p for p in values if np.isclose(p, share)]
    return hit[0] if hit else None


def _authors_numbers(au: CompletionResults) -> dict[str, Any]:
    """The authors' setup's numbers the page quotes (floats, ints and ready phrases)."""
    a_code, a_text = au.at(CODE_SHARE), au.at(TEXT_SHARE)
    curve = au.random_summary().loc[au.method["random"]]
    worse = [float(p) for p, r in curve.iterrows() if r["local_mean"] >= r["global_mean"]]
    out: dict[str, Any] = {
        "au_code_g": a_code["global_mean"],
        "au_code_l": a_code["local_mean"],
        "au_text_g": a_text["global_mean"],
        "au_text_l": a_text["local_mean"],
        "au_code_n": int(a_code["n"]),
        "au_text_n": int(a_text["n"]),
        "au_code_win": share_words(a_code["share_local_better"], a_code["n"], "repetitions"),
        "au_text_win": share_words(a_text["share_local_better"], a_text["n"], "repetitions"),
        "au_code_share_better": float(a_code["share_local_better"]),
        "au_text_share_better": float(a_text["share_local_better"]),
        "ours_cross": min(worse) if worse else None,
        "au_local_n": au.n_local,
        "au_rows": au.n_rows,
    }
    runs = au.runs.select("15a", au.method["random"])
    glob = runs[np.isclose(runs.p, TEXT_SHARE) & (runs.approach == "global")]
    capped = int((glob.n_iter == AUTHORS_SOFT_IMPUTE["max_iter"]).sum())
    out |= {"capped": k_of_n(capped, len(glob), "global fits"), "capped_share": capped / len(glob)}
    if au.solver_check is not None:
        check = compare_approaches(au.solver_check, by=("variant", "p"))
        fi, lim = check.loc["fancyimpute's stopping rule"], check.loc["solved to the limit"]
        p = _share_at(fi.index, TEXT_SHARE)
        out |= {
            "fi_text_g": fi.loc[p, "global_mean"],
            "fi_text_l": fi.loc[p, "local_mean"],
            "lim_text_g": lim.loc[p, "global_mean"],
            "lim_text_l": lim.loc[p, "local_mean"],
            "solver_n": int(fi.loc[p, "n"]),
        }
    if au.domain == DOMAIN:
        out |= _printed_numbers(au)
    return out


def _printed_numbers(au: CompletionResults) -> dict[str, Any]:
    """The authors' setup beside the means the authors' notebook prints (Appendix G's domain)."""
    printed = printed_means()
    pc, pt = _share_at(printed.index, CODE_SHARE), _share_at(printed.index, TEXT_SHARE)
    cross = [float(p) for p in printed.index if printed.loc[p, "local"] >= printed.loc[p, "global"]]
    rates = rate_table({"authors": au})
    label = au.setup.label
    main = rates.loc[[p for p in rates.index if _share_at(au.main_shares, p) is not None]]
    gap = max(
        (main[(label, k)] - main[("authors' notebook", k)]).abs().max() for k in ("global", "local")
    )
    out: dict[str, Any] = {
        "pr_code_g": printed.loc[pc, "global"],
        "pr_code_l": printed.loc[pc, "local"],
        "pr_text_g": printed.loc[pt, "global"],
        "pr_text_l": printed.loc[pt, "local"],
        "printed_cross": min(cross) if cross else None,
        "max_gap": float(gap),
    }
    third = rates.loc[[p for p in rates.index if _share_at(au.main_shares, p) is None]]
    if len(third):
        row = third.iloc[0]
        out |= {
            "third_p": float(third.index[0]),
            "third_g": row[(label, "global")],
            "third_l": row[(label, "local")],
            "third_pr_g": row[("authors' notebook", "global")],
            "third_pr_l": row[("authors' notebook", "local")],
            "third_n": int(row[(label, "repetitions")]),
        }
        out["third_gap"] = max(
            abs(out["third_g"] - out["third_pr_g"]), abs(out["third_l"] - out["third_pr_l"])
        )
    return out


def _careful_numbers(ca: CompletionResults) -> dict[str, Any]:
    """The careful setup's numbers the page quotes."""
    c_code, c_text = ca.at(CODE_SHARE), ca.at(TEXT_SHARE)
    eq = ca.local_vs_means()
    diag = ca.diagnostics[np.isclose(ca.diagnostics.hidden_share, TEXT_SHARE)]
    by = diag.groupby(["method", "row_observed"])[["n_entries", "sse"]].sum()
    total = diag.groupby("method")["n_entries"].sum()
    sse = diag.groupby("method")["sse"].sum()
    empty = by.xs(0, level="row_observed") if 0 in by.index.get_level_values(1) else None
    authors = "authors' soft-impute"
    out: dict[str, Any] = {
        "ca_code_g": c_code["global_mean"],
        "ca_code_l": c_code["local_mean"],
        "ca_text_g": c_text["global_mean"],
        "ca_text_l": c_text["local_mean"],
        "ca_text_n": int(c_text["n"]),
        "ca_text_ratio": c_text["ratio_median"],
        "ca_text_share_better": float(c_text["share_local_better"]),
        "ca_local_n": ca.n_local,
        "ca_rows": ca.n_rows,
        "ca_eq_si": eq.loc[_share_at(eq.index, TEXT_SHARE), "soft_impute"],
        "ca_eq_cm": eq.loc[_share_at(eq.index, TEXT_SHARE), "column_means"],
        "ca_eq_text": bool(eq.loc[_share_at(eq.index, TEXT_SHARE), "equal"]),
        "ca_code_rel": -eq.loc[_share_at(eq.index, CODE_SHARE), "relative"],
        "ca_cm_global": ca.at(TEXT_SHARE, "column means")["global_mean"],
        "diag_draws": count(diag["draw"].nunique(), "random mask"),
    }
    if empty is not None and authors in empty.index:
        out |= {
            "empty_share": empty["n_entries"].iloc[0] / total.iloc[0],
            "empty_rmse_authors": float(
                np.sqrt(empty.loc[authors, "sse"] / empty.loc[authors, "n_entries"])
            ),
            "empty_err_authors": empty.loc[authors, "sse"] / sse[authors],
        }
    return out


def _block_numbers(res: CompletionResults, prefix: str) -> dict[str, Any]:
    """Figure 15b's numbers of one setup: at how many ``p`` local beats global, and the ranges."""
    summary = res.block_summary()
    m = summary.loc[res.method["block"]]
    cm = summary.loc["column means"]
    return {
        f"{prefix}_b_better": k_of_n(int((m.local_mean < m.global_mean).sum()), len(m)),
        f"{prefix}_b_lo": m.local_mean.min(),
        f"{prefix}_b_lhi": m.local_mean.max(),
        f"{prefix}_b_glo": m.global_mean.min(),
        f"{prefix}_b_ghi": m.global_mean.max(),
        f"{prefix}_cm_lo": cm.local_mean.min(),
        f"{prefix}_cm_hi": cm.local_mean.max(),
    }


def page_numbers(page: Any) -> dict[str, Any]:
    """Every number the chapter's prose quotes (and its asserts check), from ``page``
    (:func:`hca.paper.scorecard.chapter_page` of this chapter): floats, ints and phrases such
    as ``"500 of 500 repetitions"``. A number the settings do not let the page compute (a
    setup not run; the authors' printed means, which exist for Appendix G's domain only) is
    absent."""
    res: dict[str, CompletionResults] = dict(page.results)
    au, ca = res.get("authors"), res.get("careful")
    out: dict[str, Any] = {
        "domain": page.settings.domain,
        "code_share": CODE_SHARE,
        "text_share": TEXT_SHARE,
        "max_iter": AUTHORS_SOFT_IMPUTE["max_iter"],
        "tol": AUTHORS_SOFT_IMPUTE["tol"],
        "au_reps": page.settings.random_reps or SETUPS["authors"].completion_reps,
        "ca_reps": page.settings.random_reps or SETUPS["careful"].completion_reps,
    }
    if au is not None:
        out |= _authors_numbers(au) | _block_numbers(au, "authors")
    if ca is not None:
        out |= _careful_numbers(ca) | _block_numbers(ca, "careful")
    gaps = [r.levels.loc["domain"] - r.levels.loc["other models"] for r in res.values()]
    out |= {"gap_min": min(g.min() for g in gaps), "gap_max": max(g.max() for g in gaps)}
    return out


#: How the page shows each number of :func:`page_numbers` (a format, or None: as it is).
_FORMATS: dict[str, str | None] = {
    "domain": None,
    "code_share": "g",
    "text_share": "g",
    "max_iter": "d",
    "tol": ".1%",
    "au_reps": ",d",
    "ca_reps": ",d",
    **dict.fromkeys(["au_code_g", "au_code_l", "au_text_g", "au_text_l"], ".2f"),
    **dict.fromkeys(["pr_code_g", "pr_code_l", "pr_text_g", "pr_text_l", "max_gap"], ".2f"),
    **dict.fromkeys(["third_g", "third_l", "third_pr_g", "third_pr_l", "third_gap"], ".2f"),
    **dict.fromkeys(["ca_code_g", "ca_code_l", "ca_text_g", "ca_text_l"], ".2f"),
    **dict.fromkeys(["ca_text_ratio", "ca_eq_si", "ca_eq_cm"], ".2f"),
    **dict.fromkeys(["fi_text_g", "fi_text_l", "lim_text_g", "lim_text_l"], ".1f"),
    **dict.fromkeys(["au_code_n", "au_text_n", "ca_text_n", "third_n", "solver_n"], ",d"),
    **dict.fromkeys(["au_local_n", "au_rows", "ca_local_n", "ca_rows"], ",d"),
    **dict.fromkeys(["au_code_win", "au_text_win", "capped", "diag_draws"], None),
    **dict.fromkeys(["printed_cross", "ours_cross", "third_p"], "g"),
    "ca_code_rel": ".0%",
    "ca_cm_global": ".1f",
    **dict.fromkeys(["gap_min", "gap_max", "empty_rmse_authors"], ".0f"),
    **dict.fromkeys(["empty_share", "empty_err_authors"], ".0%"),
    **{
        f"{s}_{k}": f
        for s in ("authors", "careful")
        for k, f in (
            ("b_better", None),
            ("b_lo", ".1f"),
            ("b_lhi", ".1f"),
            ("b_glo", ".1f"),
            ("b_ghi", ".1f"),
            ("cm_lo", ".1f"),
            ("cm_hi", ".1f"),
        )
    },
}


def page_values(page: Any) -> dict[str, str]:
    """Every number the chapter's prose quotes, as text (:func:`page_numbers` formatted);
    :data:`MISSING` for one the settings do not let the page compute, so the prose renders
    under any settings."""
    nums = page_numbers(page)
    out = {}
    for key, fmt in _FORMATS.items():
        v = nums.get(key)
        if v is None or (isinstance(v, float) and not np.isfinite(v)):
            out[key] = MISSING
        elif fmt is None:
            out[key] = str(v)
        else:
            out[key] = format(int(v) if fmt.endswith("d") else float(v), fmt)
    return out


def _compare_words(s: pd.Series) -> str:
    """``"wins"``, ``"loses"`` or ``"ties"``: local against global by the 95 % interval of
    their paired difference (local - global)."""
    if s["diff_hi"] < 0:
        return "wins"
    if s["diff_lo"] > 0:
        return "loses"
    return "ties"


def _random_sentence(r: CompletionResults, label: str) -> str:
    """Figure 15a under one setup: local against global at both hidden shares."""
    own = r.setup.hidden_share
    shares = [own] + [q for q in r.main_shares if not np.isclose(q, own)]
    rows = [r.at(q) for q in shares]
    verbs = [_compare_words(x) for x in rows]
    same_n = len({int(x["n"]) for x in rows}) == 1

    def rmse(x: pd.Series, q: float) -> str:
        reps = "" if same_n else f", {count(x['n'], 'repetition')}"
        return f"{x['local_mean']:.2f} against {x['global_mean']:.2f} at {q:g} hidden{reps}"

    if len(set(verbs)) == 1:
        each = f", over {count(rows[0]['n'], 'repetition')} each" if same_n else ""
        return (
            f"Under {label}, local completion {verbs[0]} at both hidden shares: mean RMSE "
            + join_words(rmse(x, q) for x, q in zip(rows, shares))
            + f"{each}."
        )
    parts = [
        f"{v} at {q:g} hidden (mean RMSE {x['local_mean']:.2f} against "
        f"{x['global_mean']:.2f} over {count(x['n'], 'repetition')})"
        for v, x, q in zip(verbs, rows, shares)
    ]
    return f"Under {label}, local completion " + " but ".join(parts) + "."


def _block_sentence(res: dict[str, CompletionResults]) -> str:
    """Figure 16 under every setup: in how many of the sets local or global is better."""
    parts, worse_all = [], []
    for s, r in res.items():
        v = r.sets_summary().loc[r.method["block"]]["verdict"]
        better, worse = int((v == "local better").sum()), int((v == "global better").sum())
        worse_all.append(worse)
        parts.append(f"{k_of_n(better, len(v), 'sets')} under the {SETUPS[s].label}")
    glob = (
        "and global in none"
        if not any(worse_all)
        else "and global in "
        + join_words(f"{w:,}" for w in worse_all)
        + (" respectively" if len(worse_all) > 1 else "")
    )
    return (
        "With three of the six benchmarks fully observed, local completion is significantly "
        f"better in {join_words(parts)}, {glob}."
    )


def _solver_sentence(au: CompletionResults) -> str:
    """Why the authors' setup ranks global first at the text's share, when the solver does."""
    nums = _authors_numbers(au)
    if "fi_text_l" not in nums:
        return ""
    flips = nums["fi_text_l"] > nums["fi_text_g"] and nums["lim_text_l"] < nums["lim_text_g"]
    if not flips:
        return ""
    return (
        f"At {TEXT_SHARE:g} hidden the authors' ranking is their solver's doing: fancyimpute "
        f"stops after {AUTHORS_SOFT_IMPUTE['max_iter']} iterations in {nums['capped']}, and the "
        "same soft-impute solved to its limit ranks local first "
        "(see {ref}`the solver <completion-solver>`)."
    )


def _level_sentence(ca: CompletionResults) -> str:
    """What makes local win under the careful setup, when it is the domain's level."""
    eq = ca.local_vs_means()
    p = _share_at(eq.index, TEXT_SHARE)
    if p is None or not bool(eq.loc[p, "equal"]):
        return ""
    return (
        f"Under the careful setup, local soft-impute at {TEXT_SHARE:g} hidden does no better "
        "than the domain's own column means, so its advantage there is the domain's higher "
        "score level (see {ref}`the levels <completion-level>`)."
    )


def answer(page: Any) -> str:
    """The chapter's answer (MyST, one paragraph): what the paper claims, what held under
    each setup of ``page`` (:func:`hca.paper.scorecard.chapter_page`), and the causes of the
    differences, with links to the sections that show them. Every word that depends on a
    result is chosen from it."""
    res: dict[str, CompletionResults] = dict(page.results)
    domain = page.settings.domain
    head = (
        "The paper claims that the missing scores of one domain's models are better filled "
        "in from that domain alone (local completion) than from the whole leaderboard "
        f"(global completion), and shows it for the {DOMAIN} fine-tunes."
    )
    if domain != DOMAIN:
        head = head[:-1] + f"; these settings complete the {domain} fine-tunes instead."
    sents = [head]
    sents += [_random_sentence(r, f"the {SETUPS[s].label}") for s, r in res.items()]
    sents.append(_block_sentence(res))
    if "authors" in res:
        sents.append(_solver_sentence(res["authors"]))
    if "careful" in res:
        sents.append(_level_sentence(res["careful"]))
    return " ".join(x for x in sents if x)
