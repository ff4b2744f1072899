"""The report of ``python -m hca fit``: fits over FastICA seeds, JSON report, text (its figure:
:func:`hca.plots.report.plot_fit_report`, imported only for ``--plot``).

The JSON report is described by ``report.schema.json`` (shipped with the package,
:func:`report_schema`); :data:`ORIENTATION` documents how ``weights`` and ``unmixing`` read.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import resources

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

import hca
from hca.cli import ESTIMATE_NOTE_SECONDS
from hca.cli.estimate import duration
from hca.cli.inputs import Leaderboard
from hca.cli.notes import Notes, Progress
from hca.data.registry import benchmark_label
from hca.estimator.model import HCA
from hca.estimator.progress import Listener
from hca.estimator.results import WEAK_MATCH_R2, OLSAdjustment, one_to_one_alignment
from hca.estimator.search import check_search_size, n_row_orders_text
from hca.stability import TRUSTED_DOMAIN_SIZE, rotation_null, seed_stability

__all__ = [
    "REPORT_VERSION",
    "ORIENTATION",
    "FitSettings",
    "Fit",
    "Fits",
    "seed_record",
    "fit_seeds",
    "mic_reference",
    "reference_draws",
    "reference_budget",
    "range_coverage",
    "build_report",
    "format_report",
    "report_schema",
]

REPORT_VERSION = 3
#: How to read the matrices of the report.
ORIENTATION = {
    "weights": (
        "graphs[domain].weights[i][j] is the weight of the edge z{j+1} -> z{i+1} (row = "
        "effect, column = cause; strictly lower-triangular) in z = W z + "
        "diag(source_scales) eps, with unit-variance sources eps, after the OLS adjustment"
    ),
    "unmixing": (
        "unmixing[i][j] is the weight of benchmark j (in the order of 'benchmarks') in factor "
        "z{i+1}: z = unmixing @ x (rows = factors in causal order, columns = benchmarks; "
        "scores not centred), after the OLS adjustment"
    ),
}
#: Two seeds give the same factor when the absolute cosine of their unmixing rows is at least
#: this (after matching the factors of the two seeds one to one).
SAME_FACTOR = 0.9


@dataclass(frozen=True)
class FitSettings:
    """Every setting of a ``fit`` run (recorded in the report)."""

    n_components: int = 3
    search: str = "exhaustive"
    max_nodes: int = 1_000_000
    beam_width: int = 32
    residual: str = "domain"
    random_state: int = 0
    n_restarts: int = 1
    seeds: int = 1
    max_iter: int = 1000
    tol: float = 1e-4
    min_domain_size: int = 0
    dropna: bool = False
    drop_duplicates: bool = False
    null_draws: int = 20
    n_jobs: int | None = None

    def seed_list(self) -> list[int]:
        return [self.random_state + i for i in range(self.seeds)]

    def estimator(self, seed: int) -> HCA:
        return HCA(
            n_components=self.n_components,
            search=self.search,
            residual=self.residual,
            beam_width=self.beam_width,
            max_nodes=self.max_nodes,
            random_state=seed,
            max_iter=self.max_iter,
            tol=self.tol,
            n_restarts=self.n_restarts,
            n_jobs=self.n_jobs,
        )


@dataclass(frozen=True, eq=False)
class Fit:
    """One fitted seed: the estimator and its OLS adjustment."""

    seed: int
    model: HCA
    adjusted: OLSAdjustment

    @property
    def assignment(self) -> pd.DataFrame:
        """The one-to-one alignment of the factors with benchmarks."""
        return one_to_one_alignment(self.adjusted.r2)


@dataclass(frozen=True, eq=False)
class Fits:
    """The reported fit (first seed), a record per seed (:func:`seed_record`, with
    ``seed``), the measured time of one fit in seconds and, of it, the search's (from the
    end of the ICA step; the whole fit when the ICA step reported no progress)."""

    reference: Fit
    records: list = field(default_factory=list)
    seconds: float = 0.0
    search_seconds: float = 0.0


def seed_record(model: HCA) -> dict:
    """What the seed agreement reads off one fit (module level: sent to joblib workers)."""
    return {
        "mic": float(model.mic_),
        "certified": bool(model.search_result_.certified),
        "alignment": tuple(one_to_one_alignment(model.adjust().r2)["benchmark"]),
        "unmixing": np.array(model.unmixing_),
        "ica_converged": bool(all(model.ica_converged_.values())),
    }


def fit_seeds(
    board: Leaderboard,
    settings: FitSettings,
    notes: Notes,
    progress: Progress,
    announce: Callable[[str], None],
    expected: dict[str, float] | None = None,
    after: float = 0.0,
) -> Fits:
    """Fit HCA with the first seed (timed; warnings become ``notes``), then refit the other
    seeds with :func:`hca.stability.seed_stability` (through joblib: any backend).

    When the other seeds would take longer than :data:`hca.cli.ESTIMATE_NOTE_SECONDS` (from the
    measured time of the first fit), ``announce`` gets a note with the estimate first.
    ``expected`` (seconds of one fit's ``"ICA"``, ``"search"`` and ``"rest"``) and ``after``
    (seconds of the work after the fits) give the progress its ETA.
    """
    seeds = settings.seed_list()
    listener = progress.listener
    one = sum(expected.values()) if expected else 0.0
    jobs = max(1, min(settings.n_jobs or 1, len(seeds) - 1))
    later = one * math.ceil((len(seeds) - 1) / jobs) if expected else 0.0
    progress.stage(f"seed {seeds[0]} (1/{len(seeds)})", expected, after + later)
    start = time.perf_counter()
    ica_done = [start]

    def timed(step: str, done: int, total: int) -> None:  # when the ICA step ends
        if step == "ICA" and done >= total:
            ica_done[0] = time.perf_counter()
        listener(step, done, total)

    with notes.capture(run=seeds[0]):
        model = settings.estimator(seeds[0]).fit(board.X, board.domains, progress=timed)
        search_end = time.perf_counter()
        adjusted = model.adjust(board.X)
    seconds = time.perf_counter() - start
    search_seconds = search_end - ica_done[0]
    progress.advance()
    reference = Fit(seeds[0], model, adjusted)
    records = [{"seed": seeds[0], **seed_record(model)}]
    rest = seeds[1:]
    if rest:
        estimate = seconds * len(rest)
        if estimate > ESTIMATE_NOTE_SECONDS:
            announce(
                f"--seeds {len(seeds)}: one fit took {duration(seconds)}, so the other "
                f"{len(rest)} seeds will take about {duration(estimate)} on one core "
                "(fewer --seeds, or a joblib backend with more workers, is faster)"
            )
        progress.stage(
            f"seeds {rest[0]}-{rest[-1]} ({len(rest)} more)",
            {"stage": seconds * math.ceil(len(rest) / jobs)} if expected else None,
            after,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # what they say is in the records
            sweep = seed_stability(
                settings.estimator(seeds[0]),
                board.X,
                board.domains,
                seeds=rest,
                n_jobs=settings.n_jobs,
                record=seed_record,
                progress=listener,
            )
        records += sweep.records.to_dict("records")
        progress.advance(len(rest))
    return Fits(reference, records, seconds, search_seconds)


#: ``--null-draws`` by default: this many random rotations, fewer when they would take longer
#: than :data:`NULL_BUDGET_SECONDS` or, on large inputs, than the fit itself, none when fewer
#: than :data:`MIN_NULL_DRAWS` fit in that time.
DEFAULT_NULL_DRAWS, MIN_NULL_DRAWS, NULL_BUDGET_SECONDS = 20, 5, 60.0


def reference_budget(fit_seconds: float) -> float:
    """Seconds the default MIC reference may take: a minute, or the fit's own time when the
    fit is longer (so that on large inputs it costs no more than the fit)."""
    return max(NULL_BUDGET_SECONDS, fit_seconds)


def range_coverage(n_draws: int) -> float:
    """The share of the rotations' MICs that the 5-95% range of ``n_draws`` draws covers on
    average, ``0.9 (n - 1) / (n + 1)`` (the sample quantiles sit at ranks ``0.05 (n - 1)``
    and ``0.95 (n - 1)``, and the expected mass between order statistics ``a < b`` of ``n``
    draws is ``(b - a) / (n + 1)``): 0.81 for 20 draws, 0.60 for 5. Fewer draws give a
    narrower range, which a MIC falls outside of more easily."""
    return 0.9 * (n_draws - 1) / (n_draws + 1)


def reference_draws(
    search_seconds: float,
    fit_seconds: float,
    requested: int | None,
    announce: Callable[[str], None] | None = None,
) -> int:
    """How many random rotations the MIC reference uses (one search each, of about
    ``search_seconds``: the fit's own search, measured).

    ``requested`` (``--null-draws``) is honoured as given; by default (``None``) as many as
    :data:`DEFAULT_NULL_DRAWS` says. ``announce`` gets a note when fewer than the default are
    used, or when the draws asked for would take longer than :func:`reference_budget`."""
    if requested == 0:
        return 0
    one = max(search_seconds, 1e-9)
    budget = reference_budget(fit_seconds)
    if requested is not None:
        if announce is not None and one * requested > budget:
            announce(
                f"the MIC reference uses {requested} random rotations, one search of up to "
                f"about {duration(one)} each: up to about {duration(one * requested)}"
            )
        return int(requested)
    draws = min(DEFAULT_NULL_DRAWS, int(budget // one))
    if draws < MIN_NULL_DRAWS:
        if announce is not None:
            announce(
                f"no MIC reference by default: one random rotation needs a search of "
                f"about {duration(one)}, and fewer than {MIN_NULL_DRAWS} fit in "
                f"{duration(budget)} (a minute, or the fit's time when longer); "
                f"--null-draws {MIN_NULL_DRAWS} "
                f"gives a rough range in up to about {duration(one * MIN_NULL_DRAWS)} (its "
                f"5-95% range covers on average {range_coverage(MIN_NULL_DRAWS):.0%} of the "
                "rotations' MICs)"
            )
        return 0
    if draws < DEFAULT_NULL_DRAWS and announce is not None:
        announce(
            f"the MIC reference uses {draws} random rotations (not {DEFAULT_NULL_DRAWS}), "
            f"one search of about {duration(one)} each, within {duration(budget)} (a minute, "
            f"or the fit's time when longer); its 5-95% range covers on average "
            f"{range_coverage(draws):.0%} of the rotations' MICs "
            f"({range_coverage(DEFAULT_NULL_DRAWS):.0%} with {DEFAULT_NULL_DRAWS}); "
            "--null-draws N sets the number"
        )
    return int(draws)


def mic_reference(
    model: HCA, n_draws: int, random_state: int = 0, *, progress: Listener | None = None
) -> dict | None:
    """The MIC under random rotations of every domain's ICA sources
    (:func:`hca.stability.rotation_null`, its search steps reported to ``progress``) and what
    the fitted MIC means against it."""
    if n_draws <= 0:
        return None
    null = rotation_null(model, n_draws, random_state, progress=progress)
    mic = float(model.mic_)
    q05, q50, q95 = (float(v) for v in np.quantile(null, [0.05, 0.5, 0.95]))
    share = float(np.mean(null <= mic))
    if mic < q05:
        reading = (
            "below the range under random rotations: the domains' ICA sources line up "
            "in a common hierarchy better than arbitrary sources would"
        )
    elif mic <= q95:
        reading = (
            "inside the range under random rotations: nothing in this fit says that the "
            "domains share a hierarchy; do not read the causal order as a finding"
        )
    else:
        reading = (
            "above the range under random rotations: the ICA sources fit a common "
            "hierarchy worse than arbitrary sources; do not read the causal order as a "
            "finding"
        )
    return {
        "method": "MIC after rotating every domain's ICA sources by a random rotation "
        "(hca.stability.rotation_null)",
        "n_draws": int(n_draws),
        "random_state": int(random_state),
        "q05": q05,
        "median": q50,
        "q95": q95,
        "share_at_or_below": share,
        "range_coverage": range_coverage(n_draws),
        "reading": reading,
    }


def _factor_match(ref: np.ndarray, other: np.ndarray) -> tuple[bool, list[float]]:
    """Match the factors (rows of the orthonormal unmixing matrices) one to one by absolute
    cosine; return whether the matching keeps the causal order, and the cosines."""
    C = np.abs(other @ ref.T)
    rows, cols = linear_sum_assignment(-C)
    cosines = C[rows, cols]
    same = bool(np.array_equal(cols, np.arange(len(cols))) and np.all(cosines >= SAME_FACTOR))
    return same, [float(c) for c in cosines]


def seed_agreement(fits: Fits) -> dict:
    """How often the causal order and the alignment of each seed agree with the first's."""
    ref = fits.records[0]
    records = []
    for rec in fits.records:
        same_order, cosines = _factor_match(ref["unmixing"], rec["unmixing"])
        records.append(
            {
                "seed": int(rec["seed"]),
                "mic": float(rec["mic"]),
                "certified": bool(rec["certified"]),
                "alignment": [str(b) for b in rec["alignment"]],
                "same_order": same_order,
                "same_alignment": tuple(rec["alignment"]) == tuple(ref["alignment"]),
                "factor_cosines": cosines,
                "ica_converged": bool(rec["ica_converged"]),
            }
        )
    counts = Counter(tuple(r["alignment"]) for r in records)
    modal, n_modal = counts.most_common(1)[0]
    n = len(records)
    return {
        "seeds": [r["seed"] for r in records],
        "reference_seed": records[0]["seed"],
        "same_factor_threshold": SAME_FACTOR,
        "order_agreement": sum(r["same_order"] for r in records) / n,
        "alignment_agreement": sum(r["same_alignment"] for r in records) / n,
        "modal_alignment": list(modal),
        "modal_alignment_share": n_modal / n,
        "distinct_alignments": len(counts),
        "fits": records,
    }


def _domains_block(board: Leaderboard, model: HCA) -> dict:
    sizes = board.domain_sizes()
    res = model.search_result_
    out = {}
    for k, dom in enumerate(model.domains_):
        ica = model.ica_[dom]
        out[str(dom)] = {
            "rows": sizes[str(dom)],
            "dropped_incomplete": int(board.dropped_incomplete.get(str(dom), 0)),
            "inexactness": float(model.inexactness_[dom]),
            "unmixing_error": float(res.unmixing_error[k]),
            "ica_converged": bool(ica.converged),
            "ica_iterations": int(ica.n_iter),
        }
    return out


def order_text(assignment: pd.DataFrame) -> str:
    """The causal order in benchmark terms: ``z1 (≈ IFEval) -> z2 (≈ MATH Lvl 5) -> z3``
    (a factor that matches no benchmark well keeps its bare name)."""
    return " -> ".join(
        z if row.weak else f"{z} (≈ {benchmark_label(row.benchmark)})"
        for z, row in assignment.iterrows()
    )


def trust(board: Leaderboard, n_components: int) -> dict:
    """Whether the domains are numerous and large enough for the search to be trusted, by
    the rule drawn in chapter 11 from :func:`hca.stability.recovery_study`."""
    sizes = board.domain_sizes()
    smallest = min(sizes.values())
    return {
        "n_domains": len(sizes),
        "smallest_domain": int(smallest),
        "min_domains": int(n_components),
        "min_domain_size": TRUSTED_DOMAIN_SIZE,
        "trusted": bool(len(sizes) >= n_components and smallest >= TRUSTED_DOMAIN_SIZE),
    }


def build_report(
    board: Leaderboard,
    settings: FitSettings,
    fits: Fits,
    *,
    csv: str = "",
    domain_col: str = "",
    reference: dict | None = None,
    estimate: dict | None = None,
) -> dict:
    """The JSON-ready report of a run (see ``report.schema.json``); ``estimate``: the work
    and memory estimated before it (:func:`estimate_record`)."""
    fit = fits.reference
    assignment = fit.assignment
    model, adj = fit.model, fit.adjusted
    res = model.search_result_
    factors = list(adj.r2.index)
    d, K = settings.n_components, len(model.domains_)
    return {
        "report_version": REPORT_VERSION,
        "hca_version": hca.__version__,
        "input": {
            "csv": str(csv),
            "domain_col": domain_col,
            "rows_read": board.rows_read,
            "rows_used": int(len(board.X)),
            "rows_dropped_incomplete": int(sum(board.dropped_incomplete.values())),
            "rows_dropped_small_domains": int(sum(board.dropped_domains.values())),
            "duplicated_rows": int(board.duplicated_rows),
            "rows_dropped_duplicates": int(board.dropped_duplicates),
            "dropped_incomplete": {str(k): int(v) for k, v in board.dropped_incomplete.items()},
            "dropped_domains": {str(k): int(v) for k, v in board.dropped_domains.items()},
            "from_pipe": bool(board.stream),
            "dropped_labels": {str(k): int(v) for k, v in board.dropped_labels.items()},
            "merged_spellings": {
                str(k): {str(a): int(b) for a, b in v.items()}
                for k, v in board.case_spellings.items()
            },
            "placeholder_domains": {str(k): int(v) for k, v in board.placeholders.items()},
            "scale_findings": [scale_record(f, board.data_rows) for f in board.scales],
        },
        "estimate": estimate,
        "settings": asdict(settings),
        "n_models": int(len(board.X)),
        "benchmarks": [str(b) for b in board.X.columns],
        "domains": _domains_block(board, model),
        "search": {
            "method": res.search,
            "certified": bool(res.certified),
            "enumerated": bool(res.enumerated),
            "nodes_evaluated": int(res.n_nodes),
            "orders_evaluated": int(res.n_evaluated),
            "orders_pruned": int(res.n_pruned),
            "beam_width": int(res.beam_width),
            "row_orders": n_row_orders_text(K, d),
            "stop": None,
        },
        "ica": {
            "all_converged": bool(all(model.ica_converged_.values())),
            "n_restarts": settings.n_restarts,
            "random_state": fit.seed,
        },
        "mic": float(model.mic_),
        "inexactness": {str(k): float(v) for k, v in model.inexactness_.items()},
        "mic_reference": reference,
        "causal_order": factors,
        "causal_order_text": order_text(assignment),
        "weak_match_r2": WEAK_MATCH_R2,
        "alignment": [
            {
                "factor": z,
                "benchmark": str(row.benchmark),
                "r2": float(row.r2),
                "weak": bool(row.weak),
                "ols_pick": str(b),
            }
            for (z, row), b in zip(assignment.iterrows(), adj.benchmarks)
        ],
        "trust": trust(board, d),
        "r2_table": {z: {str(b): float(v) for b, v in adj.r2.loc[z].items()} for z in factors},
        "graphs": {
            str(k): {
                "equations": m.equations(),
                "weights": m.A.tolist(),
                "source_scales": m.omega_sqrt.tolist(),
            }
            for k, m in adj.models.items()
        },
        "unmixing": adj.unmixing.tolist(),
        "orientation": dict(ORIENTATION),
        "stability": seed_agreement(fits),
        "notes": [],
    }


def stop_reason(report: dict) -> dict | None:
    """Why a sequential search stopped without certifying its answer (None when it did):
    ``{"reason": "budget" | "candidates", "next_width", "next_cost", "first_level",
    "text"}``. ``budget``: the next beam (twice as wide) could evaluate more prefixes than
    were left of ``--max-nodes``; ``candidates``: the first level was too large to enumerate
    and the beam's proposals ran out, so a wider beam finds the same order, and only a
    budget that enumerates the first level (``d0^K`` prefixes) could certify it."""
    from hca.cli.estimate import Shape

    s, settings = report["search"], report["settings"]
    if s["certified"] or s["method"] != "sequential":
        return None
    K, d = len(report["domains"]), settings["n_components"]
    shape = Shape(
        (1,) * K, len(report["benchmarks"]), d, "sequential", settings["max_nodes"],
        settings["beam_width"],
    )  # fmt: skip
    width, used, budget = s["beam_width"], s["nodes_evaluated"], settings["max_nodes"]
    next_cost = shape.round_cost(2 * width)
    first = d**K if K * math.log10(max(d, 1)) < 18 else None
    if used + next_cost > budget:
        text = (
            f"it stopped at its budget: {used:,} of --max-nodes {budget:,} prefixes used, and "
            f"the next beam (width {2 * width:,}) may evaluate up to {next_cost:,} more"
        )
        reason = "budget"
    else:
        text = (
            f"the beam's candidates ran out at width {width:,} ({used:,} of --max-nodes "
            f"{budget:,} prefixes used): a wider beam finds the same order"
        )
        reason = "candidates"
    if not s["enumerated"]:
        text += (
            "; the first level has "
            + (f"{first:,}" if first is not None else f"{d}^{K}")
            + " prefixes, more than --max-nodes, so it was explored from a few starting "
            "directions and the answer cannot be proved optimal"
        )
    return {
        "reason": reason,
        "next_width": 2 * width,
        "next_cost": int(next_cost),
        "first_level": first,
        "text": text,
    }


def scale_record(finding, data_rows: np.ndarray, n_rows: int = 50) -> dict:
    """One :class:`hca.cli.scales.ScaleFinding` for the JSON report: its data rows (1-based,
    the first ``n_rows``) and how many there are."""
    rows = sorted(int(data_rows[r]) + 1 for r in finding.rows)
    return {
        "kind": finding.kind,
        "domains": {str(k): int(v) for k, v in finding.domains.items()},
        "columns": [str(c) for c in finding.columns],
        "n_rows": len(rows),
        "data_rows": rows[:n_rows],
        "factor": float(finding.factor),
    }


def estimate_record(
    work, memory, seconds: float | None = None, cpu_seconds: float | None = None
) -> dict:
    """The estimate of :mod:`hca.cli.estimate` for the JSON report (``seconds`` and
    ``cpu_seconds``: the wall and CPU time the work took, measured, for comparison)."""
    return {
        "seconds": float(work.total),
        "seconds_low": float(work.low),
        "seconds_high": float(work.high),
        "search_prefixes": int(work.nodes),
        "search_prefixes_range": [int(work.nodes_low), int(work.nodes_high)],
        "regime": work.regime,
        "speed": float(work.speed),
        "load": float(work.load),
        "memory_bytes": float(memory.main + memory.workers),
        "measured_seconds": None if seconds is None else float(seconds),
        "measured_cpu_seconds": None if cpu_seconds is None else float(cpu_seconds),
    }


def search_note(report: dict) -> str | None:
    """A plain note when the search did not certify its answer: why it stopped (which bound:
    the budget, or the beam's candidates) and what would help (and, over several seeds, in
    how many it did not certify)."""
    s, seeds = report["search"], report["settings"]["seeds"]
    why = report["search"].get("stop") or stop_reason(report)
    if s["certified"] or why is None:
        return None
    d, K = report["settings"]["n_components"], len(report["domains"])
    budget = report["settings"]["max_nodes"]
    n_unc = sum(not f["certified"] for f in report["stability"]["fits"])
    helps = []
    if why["reason"] == "budget":
        helps.append(f"--max-nodes {s['nodes_evaluated'] + why['next_cost']:,} or more")
    first = why["first_level"]
    if not s["enumerated"] and first is not None and first > budget and first <= 10**9:
        helps.append(f"--max-nodes {first:,} (enumerates the first level, which can certify)")
    try:
        check_search_size("exhaustive", K, d)
        helps.append(f"--search exhaustive ({s['row_orders']} row orders)")
    except ValueError:
        pass
    if not helps:
        helps.append("no budget can certify it here; compare --seeds and the MIC reference")
    return (
        f"the sequential search did not certify its answer (MIC = {report['mic']:.4f} may not "
        f"be the smallest): {why['text']}; to certify: {' or '.join(helps)}"
    ) + (f" (not certified in {n_unc} of {seeds} seeds)" if seeds > 1 else "")


def convergence_note(report: dict) -> str | None:
    """One note for every domain whose FastICA did not converge (instead of one per domain)."""
    bad = [k for k, v in report["domains"].items() if not v["ica_converged"]]
    fits = report["stability"]["fits"]
    n_bad_seeds = sum(not f["ica_converged"] for f in fits)
    if not bad and not n_bad_seeds:
        return None
    settings = report["settings"]
    text = ""
    if bad:
        shown = ", ".join(bad[:10]) + (", ..." if len(bad) > 10 else "")
        text = (
            f"FastICA did not converge within {settings['max_iter']} iterations in "
            f"{len(bad)} of {len(report['domains'])} domains ({shown}); treat their "
            "unmixing matrices with caution ('ica_converged' in the JSON report)"
        )
    if len(fits) > 1:
        text += ("; " if text else "") + (
            f"some domain's FastICA did not converge in {n_bad_seeds} of {len(fits)} seeds"
        )
    return text


def _stability_line(st: dict) -> str:
    n = len(st["seeds"])
    if n == 1:
        return (
            f"One FastICA seed ({st['seeds'][0]}); --seeds N refits with N seeds and "
            "reports how often the order and the alignment agree"
        )
    n_order = round(st["order_agreement"] * n)
    n_align = round(st["alignment_agreement"] * n)
    return (
        f"Stability over {n} FastICA seeds ({st['seeds'][0]}-{st['seeds'][-1]}): the "
        f"factors come in the same causal order as with seed {st['reference_seed']} in "
        f"{n_order}/{n} seeds, the same alignment in {n_align}/{n}; "
        f"{st['distinct_alignments']} distinct alignment(s), most frequent "
        f"{' > '.join(st['modal_alignment'])} ({round(st['modal_alignment_share'] * n)}/{n})"
    )


def _rows_line(inp: dict) -> str:
    parts = [f"Rows: {inp['rows_used']} of {inp['rows_read']} used"]
    if inp.get("dropped_labels"):
        parts.append(
            f"{sum(inp['dropped_labels'].values())} rows of {len(inp['dropped_labels'])} "
            "domain label(s) dropped (--drop-domain): " + _counts(inp["dropped_labels"])
        )
    if inp["rows_dropped_incomplete"]:
        parts.append(
            f"{inp['rows_dropped_incomplete']} incomplete rows dropped (--dropna): "
            + _counts(inp["dropped_incomplete"])
        )
    if inp["dropped_domains"]:
        parts.append(
            f"{len(inp['dropped_domains'])} domains with "
            f"{inp['rows_dropped_small_domains']} rows dropped (--min-domain-size): "
            + _counts(inp["dropped_domains"])
        )
    return "; ".join(parts)


def _counts(counts: dict, n: int = 8) -> str:
    shown = ", ".join(f"{k} {v}" for k, v in list(counts.items())[:n])
    return shown + (f", ... ({len(counts)} in all)" if len(counts) > n else "")


#: Chapter 11's recovery study (:func:`hca.stability.recovery_study`: exact SCMs with 3
#: factors and 3, 4 and 6 domains, 100 draws per cell) from two generators, which the trust
#: note quotes: the project's (:func:`hca.synthetic.simulate_scm`) and one built apart from it
#: (:func:`hca.synthetic_alt.simulate_leaderboard`: other source laws, weights, scales and
#: mixing). Generator -> models per domain -> (fewest, most) draws of 100 in which the known
#: order came back over the numbers of domains, and the exact 90 % interval of the fewest (at
#: 250) or of the most (at 60). The chapter recomputes both studies and asserts these figures.
RECOVERY_STUDY: dict[str, dict[int, tuple[int, int, float, float]]] = {
    "simulate_scm": {250: (84, 97, 0.77, 0.90), 60: (25, 39, 0.31, 0.48)},
    "simulate_leaderboard": {250: (43, 58, 0.35, 0.52), 60: (12, 17, 0.11, 0.24)},
}
#: Where each generator lives, for the note.
GENERATORS = {
    "simulate_scm": "hca.synthetic.simulate_scm",
    "simulate_leaderboard": "hca.synthetic_alt.simulate_leaderboard",
}


def recovery_evidence() -> str:
    """The trust note's account of :data:`RECOVERY_STUDY`: the range over both generators,
    each generator's own, and the 90 % interval of the extreme cell."""

    def span(size: int) -> tuple[int, int, float, float, str]:
        cells = {g: RECOVERY_STUDY[g][size] for g in RECOVERY_STUDY}
        if size >= TRUSTED_DOMAIN_SIZE:  # the worst cell, with its interval
            g = min(cells, key=lambda k: cells[k][0])
        else:  # the best cell
            g = max(cells, key=lambda k: cells[k][1])
        lo = min(c[0] for c in cells.values())
        hi = max(c[1] for c in cells.values())
        return lo, hi, cells[g][2], cells[g][3], g

    a, b, lo, hi, _ = span(250)
    c, d, lo6, hi6, _ = span(60)
    each = "; ".join(
        f"{GENERATORS[g]}: {v[250][0]}-{v[250][1]} and {v[60][0]}-{v[60][1]}"
        for g, v in RECOVERY_STUDY.items()
    )
    return (
        f"on simulated data from two independently built generators (exact SCMs, 3 factors, "
        f"3 to 6 domains, 100 draws each) HCA recovered a known order in {a} to {b} of 100 "
        f"draws with 250 models per domain (90 % interval of the lowest: {lo:.0%} to {hi:.0%}) "
        f"and in {c} to {d} of 100 with 60 (90 % interval of the highest: {lo6:.0%} to "
        f"{hi6:.0%}); by generator, at 250 and 60 models: {each}; chapter 11, "
        "hca.stability.recovery_study"
    )


def trust_note(report: dict) -> str | None:
    """A note when the domains are too few or too small for the search to be trusted."""
    t = report["trust"]
    if t["trusted"]:
        return None
    parts = []
    if t["n_domains"] < t["min_domains"]:
        parts.append(
            f"{t['n_domains']} domains for {t['min_domains']} factors (Theorem 1 "
            "needs at least as many domains as factors)"
        )
    if t["smallest_domain"] < t["min_domain_size"]:
        parts.append(
            f"the smallest domain has {t['smallest_domain']} models ({recovery_evidence()})"
        )
    return (
        "the data may be too few for the search to be trusted: "
        + "; ".join(parts)
        + "; check the order with --seeds and the MIC reference"
    )


def duplicates_note(duplicated: int, dropped: int) -> str | None:
    """A note for duplicated model rows that were kept."""
    n = duplicated - dropped
    if n <= 0:
        return None
    return (
        f"{n} row{'s' * (n != 1)} repeat an earlier row (same domain and scores) and "
        "count twice; --drop-duplicates drops them"
    )


def _reference_lines(report: dict) -> list[str]:
    ref = report["mic_reference"]
    if ref is None:
        return ["  (no reference: 0 random rotations; --null-draws N sets them, see the notes)"]
    return [
        f"  Reference on the same data: after rotating every domain's ICA sources at random "
        f"({ref['n_draws']} draws) the MIC is {ref['q05']:.4f}-{ref['q95']:.4f} (5-95%, "
        f"median {ref['median']:.4f}; with {ref['n_draws']} draws this range covers on average "
        f"{ref['range_coverage']:.0%} of the rotations' MICs); "
        f"{ref['share_at_or_below']:.0%} of the draws are at or below {report['mic']:.4f}.",
        "  Meaning: the MIC is the largest share of a domain's ICA sources that one common "
        "hierarchy leaves unexplained (0 = every domain fits it exactly); this value is "
        f"{ref['reading']}.",
    ]


def format_report(report: dict) -> str:
    """The text printed by ``python -m hca fit``."""
    doms = report["domains"]
    shown = ", ".join(f"{k}: {v['rows']}" for k, v in list(doms.items())[:12])
    more = f", ... ({len(doms)} domains)" if len(doms) > 12 else ""
    s = report["search"]
    cert = "certified optimal" if s["certified"] else "NOT certified optimal"
    lines = [
        f"HCA on {report['n_models']} models, {len(report['benchmarks'])} benchmarks, "
        f"{len(doms)} domains ({shown}{more})",
        _rows_line(report["input"]),
        f"Search: {s['method']} over {s['row_orders']} row orders, {cert} "
        f"({s['nodes_evaluated']:,} prefixes evaluated)",
        f"Causal order: {report['causal_order_text']}",
        f"MIC = {report['mic']:.4f}  (per domain: "
        + ", ".join(f"{k} {v:.4f}" for k, v in list(report["inexactness"].items())[:12])
        + (", ..." if len(doms) > 12 else "")
        + ")",
        *_reference_lines(report),
        f"Alignment (one benchmark per factor, the largest total R^2 of z_i ~ z_1..z_(i-1) + "
        f"benchmark; R^2 below {report['weak_match_r2']:.2f}: matches no benchmark well):",
    ]
    width = max(len(a["benchmark"]) for a in report["alignment"])
    for a in report["alignment"]:
        flag = ", matches no benchmark well" if a["weak"] else ""
        pick = (
            f"; alone, the OLS adjustment would pick {a['ols_pick']}"
            if a["ols_pick"] != a["benchmark"]
            else ""
        )
        lines.append(
            f"  {a['factor']}  <->  {a['benchmark']:<{width}}  (R^2 = {a['r2']:.2f}{flag}{pick})"
        )
    lines.append(_stability_line(report["stability"]))
    lines.append("Causal graphs (after the OLS adjustment; unit-variance sources):")
    for dom, g in report["graphs"].items():
        lines.append(f"  {dom}")
        lines += [f"    {eq}" for eq in g["equations"]]
    return "\n".join(lines)


def report_schema() -> dict:
    """The JSON Schema of the report (``hca/cli/report.schema.json``)."""
    text = resources.files("hca.cli").joinpath("report.schema.json").read_text(encoding="utf-8")
    return json.loads(text)
