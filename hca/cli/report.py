"""The report of ``python -m hca fit``: fits over FastICA seeds, JSON report, text, figure.

The JSON report is described by ``report.schema.json`` (shipped with the package,
:func:`report_schema`); :data:`ORIENTATION` documents how ``weights`` and ``unmixing`` read.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

import hca
from hca.cli.inputs import Leaderboard
from hca.cli.notes import Notes, Progress
from hca.estimator.model import HCA
from hca.estimator.results import OLSAdjustment
from hca.estimator.search import check_search_size, n_row_orders_text

__all__ = [
    "REPORT_VERSION",
    "ORIENTATION",
    "FitSettings",
    "Fit",
    "fit_seeds",
    "build_report",
    "format_report",
    "plot_report",
    "report_schema",
    "fit_report",
]

REPORT_VERSION = 1
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

    def seed_list(self) -> list[int]:
        return [self.random_state + i for i in range(self.seeds)]

    def estimator(self, seed: int) -> HCA:
        return HCA(n_components=self.n_components, search=self.search, residual=self.residual,
                   beam_width=self.beam_width, max_nodes=self.max_nodes, random_state=seed,
                   max_iter=self.max_iter, tol=self.tol, n_restarts=self.n_restarts)


@dataclass(frozen=True, eq=False)
class Fit:
    """One fitted seed: the estimator and its OLS adjustment."""

    seed: int
    model: HCA
    adjusted: OLSAdjustment

    @property
    def alignment(self) -> tuple:
        return tuple(str(b) for b in self.adjusted.benchmarks)


def fit_seeds(board: Leaderboard, settings: FitSettings, notes: Notes | None = None,
              progress: Progress | None = None) -> list[Fit]:
    """Fit HCA once per FastICA seed; warnings become ``notes``."""
    notes = notes if notes is not None else Notes()
    fits = []
    seeds = settings.seed_list()
    for i, seed in enumerate(seeds):
        if progress is not None:
            progress.stage(f"seed {seed} ({i + 1}/{len(seeds)}): ICA per domain and search")
        with notes.capture(run=seed):
            model = settings.estimator(seed).fit(board.X, board.domains)
            adjusted = model.adjust(board.X)
        fits.append(Fit(seed, model, adjusted))
        if progress is not None:
            progress.advance()
    return fits


def _factor_match(ref: np.ndarray, other: np.ndarray) -> tuple[bool, list[float]]:
    """Match the factors (rows of the orthonormal unmixing matrices) one to one by absolute
    cosine; return whether the matching keeps the causal order, and the cosines."""
    from scipy.optimize import linear_sum_assignment

    C = np.abs(other @ ref.T)
    rows, cols = linear_sum_assignment(-C)
    cosines = C[rows, cols]
    same = bool(np.array_equal(cols, np.arange(len(cols))) and np.all(cosines >= SAME_FACTOR))
    return same, [float(c) for c in cosines]


def seed_agreement(fits: list[Fit]) -> dict:
    """How often the causal order and the alignment of each seed agree with the first's."""
    ref = fits[0]
    records = []
    for fit in fits:
        same_order, cosines = _factor_match(ref.model.unmixing_, fit.model.unmixing_)
        records.append({
            "seed": fit.seed,
            "mic": float(fit.model.mic_),
            "certified": bool(fit.model.search_result_.certified),
            "alignment": list(fit.alignment),
            "same_order": same_order,
            "same_alignment": fit.alignment == ref.alignment,
            "factor_cosines": cosines,
            "ica_converged": bool(all(fit.model.ica_converged_.values())),
        })
    counts = Counter(tuple(r["alignment"]) for r in records)
    modal, n_modal = counts.most_common(1)[0]
    n = len(records)
    return {
        "seeds": [f.seed for f in fits],
        "reference_seed": ref.seed,
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


def build_report(board: Leaderboard, settings: FitSettings, fits: list[Fit], *,
                 csv: str = "", domain_col: str = "", notes: list[str] | None = None) -> dict:
    """The JSON-ready report of a run (see ``report.schema.json``)."""
    fit = fits[0]
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
            "dropped_incomplete": {str(k): int(v) for k, v in board.dropped_incomplete.items()},
            "dropped_domains": {str(k): int(v) for k, v in board.dropped_domains.items()},
        },
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
            "beam_width": int(res.beam_width),
            "row_orders": n_row_orders_text(K, d),
        },
        "ica": {
            "all_converged": bool(all(model.ica_converged_.values())),
            "n_restarts": settings.n_restarts,
            "random_state": fit.seed,
        },
        "mic": float(model.mic_),
        "inexactness": {str(k): float(v) for k, v in model.inexactness_.items()},
        "causal_order": factors,
        "alignment": [
            {"factor": z, "benchmark": str(b), "r2": float(adj.r2.loc[z, b])}
            for z, b in zip(factors, adj.benchmarks)
        ],
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
        "notes": list(notes or []),
    }


def search_note(report: dict) -> str | None:
    """A plain note when the search did not certify its answer, with what to do."""
    s = report["search"]
    if s["certified"]:
        return None
    d, K = report["settings"]["n_components"], len(report["domains"])
    how = ("some levels of the search tree had more than --max-nodes prefixes and were "
           "explored from a few starting directions; " if not s["enumerated"] else "")
    exhaustive = ""
    try:
        check_search_size("exhaustive", K, d)
        exhaustive = f", or use --search exhaustive ({s['row_orders']} row orders)"
    except ValueError:
        pass
    return (f"the sequential search did not certify its answer: MIC = {report['mic']:.4f} "
            f"may not be the smallest ({how}{s['nodes_evaluated']:,} prefixes evaluated with "
            f"--max-nodes {report['settings']['max_nodes']:,}); raise --max-nodes{exhaustive}")


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
        text = (f"FastICA did not converge within {settings['max_iter']} iterations in "
                f"{len(bad)} of {len(report['domains'])} domains ({shown}); treat their "
                "unmixing matrices with caution ('ica_converged' in the JSON report)")
    if len(fits) > 1:
        text += ("; " if text else "") + (f"some domain's FastICA did not converge in "
                                          f"{n_bad_seeds} of {len(fits)} seeds")
    return text


def _stability_line(st: dict) -> str:
    n = len(st["seeds"])
    if n == 1:
        return (f"One FastICA seed ({st['seeds'][0]}); --seeds N refits with N seeds and "
                "reports how often the order and the alignment agree")
    n_order = round(st["order_agreement"] * n)
    n_align = round(st["alignment_agreement"] * n)
    return (f"Stability over {n} FastICA seeds ({st['seeds'][0]}-{st['seeds'][-1]}): the "
            f"factors come in the same causal order as with seed {st['reference_seed']} in "
            f"{n_order}/{n} seeds, the same alignment in {n_align}/{n}; "
            f"{st['distinct_alignments']} distinct alignment(s), most frequent "
            f"{' > '.join(st['modal_alignment'])} ({round(st['modal_alignment_share'] * n)}/{n})")


def _rows_line(inp: dict) -> str:
    parts = [f"Rows: {inp['rows_used']} of {inp['rows_read']} used"]
    if inp["rows_dropped_incomplete"]:
        parts.append(f"{inp['rows_dropped_incomplete']} incomplete rows dropped (--dropna): "
                     + _counts(inp["dropped_incomplete"]))
    if inp["dropped_domains"]:
        parts.append(f"{len(inp['dropped_domains'])} domains with "
                     f"{inp['rows_dropped_small_domains']} rows dropped (--min-domain-size): "
                     + _counts(inp["dropped_domains"]))
    return "; ".join(parts)


def _counts(counts: dict, n: int = 8) -> str:
    shown = ", ".join(f"{k} {v}" for k, v in list(counts.items())[:n])
    return shown + (f", ... ({len(counts)} in all)" if len(counts) > n else "")


def format_report(report: dict) -> str:
    """The text printed by ``python -m hca fit``."""
    doms = report["domains"]
    shown = ", ".join(f"{k}: {v['rows']}" for k, v in list(doms.items())[:12])
    more = f", ... ({len(doms)} domains)" if len(doms) > 12 else ""
    s = report["search"]
    cert = ("certified optimal" if s["certified"] else "NOT certified optimal")
    lines = [
        f"HCA on {report['n_models']} models, {len(report['benchmarks'])} benchmarks, "
        f"{len(doms)} domains ({shown}{more})",
        _rows_line(report["input"]),
        f"Search: {s['method']} over {s['row_orders']} row orders, {cert} "
        f"({s['nodes_evaluated']:,} prefixes evaluated)",
        f"MIC = {report['mic']:.4f}  (per domain: "
        + ", ".join(f"{k} {v:.4f}" for k, v in list(report["inexactness"].items())[:12])
        + (", ..." if len(doms) > 12 else "") + ")",
        "Causal order and alignment (benchmark with the largest R^2, earlier factors as "
        "controls):",
    ]
    lines += [f"  {a['factor']}  <->  {a['benchmark']}  (R^2 = {a['r2']:.2f})"
              for a in report["alignment"]]
    lines.append(_stability_line(report["stability"]))
    lines.append("Causal graphs (after the OLS adjustment; unit-variance sources):")
    for dom, g in report["graphs"].items():
        lines.append(f"  {dom}")
        lines += [f"    {eq}" for eq in g["equations"]]
    return "\n".join(lines)


def plot_report(fit: Fit, path: Path, max_domains: int = 12) -> int:
    """The unmixing matrix and the causal graphs of (at most ``max_domains``) domains, saved
    to ``path`` (format from the suffix). Returns the number of domains drawn."""
    from matplotlib.figure import Figure

    from hca.plots import plot_causal_graph, plot_unmixing

    adj = fit.adjusted
    doms = list(adj.models)[:max_domains]
    d = len(adj.unmixing)
    ncols = min(2, len(doms))  # at most 10 in wide: legible when shown at a page's width
    nrows = -(-len(doms) // ncols)
    width = min(10.0, max(4.0, 1.6 + 1.6 * d) * ncols)
    fig = Figure(figsize=(width, 0.8 + 0.5 * d + 1.0 + 3.0 * nrows), layout="constrained")
    grid = fig.add_gridspec(nrows + 1, ncols, height_ratios=[0.8 + 0.5 * d] + [3.0] * nrows)
    plot_unmixing(adj.unmixing, [str(b) for b in adj.r2.columns], fig.add_subplot(grid[0, :]),
                  title="Unmixing matrix after the OLS adjustment (z = H x)")
    for i, dom in enumerate(doms):
        ax = fig.add_subplot(grid[1 + i // ncols, i % ncols])
        plot_causal_graph(adj.models[dom], ax, title=str(dom), node_labels=list(fit.alignment))
    fig.savefig(path, format=path.suffix.lstrip(".").lower())
    return len(doms)


def report_schema() -> dict:
    """The JSON Schema of the report (``hca/cli/report.schema.json``)."""
    text = resources.files("hca.cli").joinpath("report.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def fit_report(X: pd.DataFrame, domains: np.ndarray, n_components: int = 3,
               search: str = "exhaustive", random_state: int = 0) -> dict:
    """Fit HCA with one seed and return the JSON-ready report (kept for scripts that used the
    first version of the command line)."""
    board = Leaderboard(pd.DataFrame(X).reset_index(drop=True),
                        np.asarray(domains, dtype=object), rows_read=len(X))
    settings = FitSettings(n_components=n_components, search=search, random_state=random_state)
    return build_report(board, settings, fit_seeds(board, settings))

