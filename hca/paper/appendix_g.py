"""Appendix G's experiments (Figures 15a, 15b and 16) as the paper and the authors ran them.

The library's :mod:`hca.completion` compares global and local completion of one domain
(:func:`hca.completion.global_vs_local`); this module holds the paper-specific *designs*
(which masks, methods and repetitions, :class:`AppendixGDesign`: this book's and the
authors' code's) and runs one (:func:`run_appendix_g`). The completion chapter
(:mod:`hca.paper.completion`) calls it.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.exceptions import ConvergenceWarning

from hca.completion.estimators import ColumnMeans
from hca.completion.experiment import (
    AUTHORS_SOFT_IMPUTE,
    compare_approaches,
    global_vs_local_many,
    local_row_positions,
)
from hca.completion.masks import observed_column_sets
from hca.validation import check_matrix, labels_of

__all__ = [
    "SOFT_IMPUTE_PARAMS",
    "AppendixGDesign",
    "AppendixGResults",
    "run_appendix_g",
]

_SCOPES = ("domain", "all")


#: Soft-impute of the two designs, as :class:`SoftImpute` parameters: the library defaults
#: (validated shrinkage, centring, solved to the limit) and the authors' code.
SOFT_IMPUTE_PARAMS: dict[str, dict[str, Any]] = {"validated": {}, "authors": AUTHORS_SOFT_IMPUTE}
_DECIMALS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass(frozen=True)
class AppendixGDesign:
    """One design of the Appendix G experiments (Figures 15a, 15b and 16): rows masked,
    methods and repetitions, fixed before the runs.

    The default is this book's design; :meth:`authors` is the design of the authors' code
    (``hlzhang109/causal-eval``, ``scripts/matrix_completion.ipynb``).

    Attributes
    ----------
    soft_impute : {"validated", "authors"}
        Soft-impute of the random pattern (:data:`SOFT_IMPUTE_PARAMS`).
    block_method : {"structured", "soft_impute"}
        Completion of the block pattern: SMC (:class:`StructuredCompletion`, the paper's
        text) or the same soft-impute (the authors' code).
    mask_scope : {"domain", "all"}
        Rows that lose entries (see :func:`global_vs_local`).
    same_rows : bool
        Block pattern: one set of rows for every other column (one block) or one per column.
    random_runs : tuple of (float, int)
        Random pattern (Figure 15a): pairs (hidden share, repetitions).
    ps_block : tuple of float
        Fractions of rows hidden in the other columns (Figure 15b); every set of three
        fully observed columns is run at each.
    n_reps_block : int
        Repetitions per set and ``p`` (``p`` other than ``p_sets``).
    p_sets : float
        The ``p`` of Figure 16, run with ``n_reps_sets`` repetitions per set (these runs are
        also Figure 15b's at that ``p``).
    n_reps_sets : int
    n_reps_rank_check : int
        SMC only: repetitions per set of the rank check (experiment ``"16-rank"``: the
        column rule and ranks 1, 2, 3 on the first masks of Figure 16); 0 for none.
    random_state : int
        Seeds every mask (one stream per setting and block of repetitions).
    """

    soft_impute: str = "validated"
    block_method: str = "structured"
    mask_scope: str = "domain"
    same_rows: bool = True
    random_runs: tuple[tuple[float, int], ...] = tuple(
        (p, 1000 if p in (0.2, 0.8) else 20) for p in _DECIMALS
    )
    ps_block: tuple[float, ...] = _DECIMALS
    n_reps_block: int = 5
    p_sets: float = 0.5
    n_reps_sets: int = 100
    n_reps_rank_check: int = 10
    random_state: int = 0

    def __post_init__(self):
        if self.soft_impute not in SOFT_IMPUTE_PARAMS:
            raise ValueError(
                f"soft_impute must be one of {tuple(SOFT_IMPUTE_PARAMS)}; got {self.soft_impute!r}"
            )
        if self.block_method not in ("structured", "soft_impute"):
            raise ValueError(
                f"block_method must be 'structured' or 'soft_impute'; got {self.block_method!r}"
            )
        if self.mask_scope not in _SCOPES:
            raise ValueError(f"mask_scope must be one of {_SCOPES}; got {self.mask_scope!r}")
        if self.p_sets not in self.ps_block:
            raise ValueError(f"p_sets={self.p_sets} must be one of ps_block {self.ps_block}")

    @classmethod
    def authors(cls, **changes: Any) -> AppendixGDesign:
        """The authors' code: fancyimpute's soft-impute (:data:`AUTHORS_SOFT_IMPUTE`) for
        both patterns, every row masked, each other column losing its own rows, hidden
        shares 0.1, ..., 0.9 with 500 repetitions each and 100 per set and ``p``, seed 2025
        (``changes`` override fields, e.g. fewer repetitions)."""
        base = {
            "soft_impute": "authors",
            "block_method": "soft_impute",
            "mask_scope": "all",
            "same_rows": False,
            "random_runs": tuple((p, 500) for p in _DECIMALS),
            "n_reps_block": 100,
            "n_reps_sets": 100,
            "n_reps_rank_check": 0,
            "random_state": 2025,
        }
        return cls(**{**base, **changes})

    @property
    def method_labels(self) -> dict[str, str]:
        """Display names of the random and block methods."""
        si = (
            "soft-impute (authors' code)"
            if self.soft_impute == "authors"
            else "soft-impute (validated)"
        )
        return {"random": si, "block": "SMC" if self.block_method == "structured" else si}

    def summary(self) -> str:
        """The design in a few lines."""
        ps = ", ".join(f"{p:g}" for p in self.ps_block)
        lab = self.method_labels
        rows = "every row" if self.mask_scope == "all" else "the domain's rows"
        runs = "; ".join(f"{p:g}: {n}" for p, n in self.random_runs)
        return "\n".join(
            [
                f"15a: {lab['random']}, entries of {rows} hidden at random; repetitions per "
                f"hidden share {runs}",
                f"15b/16: {lab['block']}, all 20 sets of 3 observed columns, "
                f"{'one block of rows' if self.same_rows else 'rows drawn per column'} of {rows}"
                f", p = {ps}; {self.n_reps_block} repetitions per set and p, "
                f"{self.n_reps_sets} at p = {self.p_sets:g}",
                f"random_state = {self.random_state}",
            ]
        )


@dataclass(frozen=True, eq=False)
class AppendixGResults:
    """Output of :func:`run_appendix_g`.

    Attributes
    ----------
    frame : DataFrame
        Every repetition: ``experiment`` ("15a", "15b", "16-rank"), ``variant`` (the
        design's method label, ``"column means"`` on the same masks, or an SMC rank-check
        variant), ``setting``, ``n_observed`` (fully observed columns; 0 for the random
        pattern), then the columns of :func:`hca.completion.global_vs_local`. Figure 16 is
        the ``"15b"`` runs at ``p == design.p_sets`` (:meth:`sets`).
    timings : DataFrame
        ``experiment``, ``variant``, ``repetitions`` and ``seconds`` (CPU seconds of the
        processes that ran them, summed).
    design : AppendixGDesign
    """

    frame: pd.DataFrame
    timings: pd.DataFrame
    design: AppendixGDesign

    def select(self, experiment: str, variant: str | None = None) -> pd.DataFrame:
        """The repetitions of one experiment (and variant)."""
        out = self.frame[self.frame["experiment"] == experiment]
        if variant is not None:
            out = out[out["variant"] == variant]
        if out.empty:
            raise ValueError(
                f"no runs for experiment {experiment!r}, variant {variant!r}; "
                f"have {sorted(set(zip(self.frame.experiment, self.frame.variant)))}"
            )
        return out

    def sets(self, variant: str | None = None) -> pd.DataFrame:
        """Figure 16: the block runs at ``p = design.p_sets``."""
        out = self.select("15b", variant)
        return out[np.isclose(out["p"], self.design.p_sets)]

    def summary(self) -> str:
        """Mean RMSE per experiment and variant, and the time taken."""
        s = compare_approaches(self.frame, by=("experiment", "variant"))
        lines = [
            f"{e:>7s} {v:<28s} n={int(r.n):5d}  global {r.global_mean:7.3f}  "
            f"local {r.local_mean:7.3f}  ({r.verdict})"
            for (e, v), r in s.iterrows()
        ]
        lines.append(f"total {self.timings['seconds'].sum():.1f} s CPU")
        return "\n".join(lines)


@dataclass(frozen=True)
class _Task:
    """One block of repetitions of one setting: a call of :func:`global_vs_local`."""

    experiment: str
    variant: str
    setting: int
    rep0: int
    kwargs: dict
    cost: float


def _block_seed(random_state: int, *key: int) -> int:
    return int(np.random.SeedSequence(int(random_state), spawn_key=key).generate_state(1)[0])


def _tasks(design: AppendixGDesign, d: int, n_masked: int, max_reps: int) -> list[_Task]:
    """Every block of repetitions of ``design`` (method and baseline share seeds)."""
    lab = design.method_labels
    si = {"method": "soft_impute", "method_params": SOFT_IMPUTE_PARAMS[design.soft_impute]}
    block = {"method": "structured"} if design.block_method == "structured" else si
    scope = {"mask_scope": design.mask_scope}
    triples = observed_column_sets(d, 3)
    runs: list[tuple[str, list[tuple[str, dict]], list[tuple[dict, int]]]] = []
    shares = [(float(p), int(n)) for p, n in design.random_runs if n > 0]
    runs.append(
        (
            "15a",
            [(lab["random"], si), ("column means", {"method": ColumnMeans()})],
            [({"pattern": "random", "p": p}, r) for p, r in shares],
        )
    )
    settings = [
        (
            {"pattern": "block", "p": p, "observed_cols": list(s), "same_rows": design.same_rows},
            design.n_reps_sets if np.isclose(p, design.p_sets) else design.n_reps_block,
        )
        for p in design.ps_block
        for s in triples
    ]
    runs.append(
        ("15b", [(lab["block"], block), ("column means", {"method": ColumnMeans()})], settings)
    )
    out = []
    for e, (experiment, variants, sets) in enumerate(runs):
        for i, (kw, n_reps) in enumerate(sets):
            for b, rep0 in enumerate(range(0, n_reps, max_reps)):
                seed = _block_seed(design.random_state, e, i, b)
                n = min(max_reps, n_reps - rep0)
                for variant, method in variants:
                    cost = n * n_masked * (0.02 if variant == "column means" else 1.0)
                    kwargs = {**kw, **scope, **method, "n_reps": n, "random_state": seed}
                    out.append(_Task(experiment, variant, i, rep0, kwargs, cost))
    if design.block_method == "structured" and design.n_reps_rank_check > 0:
        i0 = [i for i, (kw, _) in enumerate(settings) if np.isclose(kw["p"], design.p_sets)]
        checks = [("SMC, column rule", {"thresholding": "column"})] + [
            (f"SMC, rank {r}", {"rank": r}) for r in (1, 2, 3)
        ]
        n = min(design.n_reps_rank_check, max_reps)
        for i in i0:
            seed = _block_seed(design.random_state, 1, i, 0)
            for variant, params in checks:
                kwargs = {**settings[i][0], **scope, "method": "structured"}
                kwargs |= {"method_params": params, "n_reps": n, "random_state": seed}
                out.append(_Task("16-rank", variant, i, 0, kwargs, 1.0))
    return out


def _jobs(tasks: list[_Task], max_reps: int) -> list[list[int]]:
    """The tasks run together: those of one experiment and variant whose soft-impute has a
    given shrinkage (one stack of repetitions, :func:`global_vs_local_many`), in their
    order, up to ``max_reps`` repetitions a job; every other task alone."""
    stacks: dict[tuple[str, str], list[list[int]]] = {}
    jobs: list[list[int]] = []
    for k, t in enumerate(tasks):
        params = t.kwargs.get("method_params") or {}
        if t.kwargs.get("method") != "soft_impute" or params.get("shrinkage") is None:
            jobs.append([k])
            continue
        chunks = stacks.setdefault((t.experiment, t.variant), [[]])
        if sum(tasks[i].kwargs["n_reps"] for i in chunks[-1]) + t.kwargs["n_reps"] > max_reps:
            chunks.append([])
        chunks[-1].append(k)
    return jobs + [c for chunks in stacks.values() for c in chunks if c]


def _run_job(
    X: np.ndarray, local_rows: Any, columns: list, tasks: list[_Task]
) -> list[tuple[pd.DataFrame, float]]:
    """The frames of a job's tasks and their CPU seconds (a stack's shared by repetitions)."""
    t0 = time.process_time()
    Xf = pd.DataFrame(X, columns=columns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        frames = global_vs_local_many(Xf, local_rows, [t.kwargs for t in tasks])
    seconds = time.process_time() - t0
    reps = np.array([t.kwargs["n_reps"] for t in tasks], dtype=float)
    for df, t in zip(frames, tasks):
        if t.rep0:  # the task's other columns are added by run_appendix_g
            df["rep"] += t.rep0
    return list(zip(frames, seconds * reps / reps.sum()))


def run_appendix_g(
    X_global: Any,
    local_rows: Any,
    design: AppendixGDesign | None = None,
    n_jobs: int | None = None,
    max_reps_per_task: int | None = None,
) -> AppendixGResults:
    """Run the Appendix G experiments (Figures 15a, 15b, 16) as set out in ``design``.

    Every setting's repetitions are split into blocks of at most ``max_reps_per_task``, each
    with its own seed derived from ``design.random_state`` (the method and the column-means
    baseline share it, so they see the same masks). Soft-impute blocks with a given shrinkage
    (the authors' design) are fitted as one stack (:func:`global_vs_local_many`: every
    repetition gets the fit it gets alone); the jobs run in parallel, largest first, and the
    output does not depend on ``n_jobs``. Validated soft-impute chooses its shrinkage on the
    first draw of each block: split the cheap designs little.

    Parameters
    ----------
    X_global : array-like or DataFrame (n_rows, n_cols)
        The fully observed leaderboard scores.
    local_rows : array-like of bool or int
        The rows of the domain.
    design : AppendixGDesign, optional
        Default: ``AppendixGDesign()`` (this book's design).
    n_jobs : int or None
        Worker processes (joblib; ``None``: one).
    max_reps_per_task : int or None
        Repetitions per block (None: no split). Splitting balances the workers when few
        settings hold most repetitions (the authors' design masks every row).

    Returns
    -------
    AppendixGResults
    """
    design = design or AppendixGDesign()
    arr = check_matrix(X_global, name="X_global", allow_nan=True)
    _, columns = labels_of(X_global)
    n_masked = (
        arr.shape[0]
        if design.mask_scope == "all"
        else int(local_row_positions(local_rows, arr.shape[0]).size)
    )
    most = max([n for _, n in design.random_runs] + [design.n_reps_block, design.n_reps_sets])
    tasks = _tasks(design, arr.shape[1], n_masked, int(max_reps_per_task or max(most, 1)))
    jobs = _jobs(tasks, int(max_reps_per_task or max(most, 1)))
    jobs.sort(key=lambda job: -sum(tasks[k].cost for k in job))  # big blocks first
    done = Parallel(n_jobs=n_jobs, batch_size=1)(
        delayed(_run_job)(arr, local_rows, list(columns), [tasks[k] for k in job]) for job in jobs
    )
    results: list[Any] = [None] * len(tasks)
    for job, res in zip(jobs, done):
        for k, one in zip(job, res):
            results[k] = one
    frame = pd.concat([df for df, _ in results], ignore_index=True)
    sizes = [len(df) for df, _ in results]
    frame.insert(0, "experiment", np.repeat([t.experiment for t in tasks], sizes))
    frame.insert(1, "variant", np.repeat([t.variant for t in tasks], sizes))
    frame.insert(2, "setting", np.repeat([t.setting for t in tasks], sizes))
    n_observed = [len(t.kwargs.get("observed_cols") or ()) for t in tasks]
    frame.insert(3, "n_observed", np.repeat(n_observed, sizes))
    timing = pd.DataFrame(
        {
            "experiment": [t.experiment for t in tasks],
            "variant": [t.variant for t in tasks],
            "repetitions": [t.kwargs["n_reps"] for t in tasks],
            "seconds": [sec for _, sec in results],
        }
    )
    timings = timing.groupby(["experiment", "variant"], sort=False, as_index=False).sum()
    return AppendixGResults(frame=frame, timings=timings, design=design)
