"""What the chapter pages show beyond the chapters' own results: small tables and shares
composed from ``hca.paper.<chapter>.run`` results, and the adapters from those results to the
multi-panel figures of :mod:`hca.plots` (which draw every figure).

The notebooks hold narrative, calls and figures; the helpers they would otherwise define live
here, one section per page, with unit tests (``tests/test_paper_pages.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from hca import plots
from hca.data.registry import benchmark_label
from hca.paper.cache import cached
from hca.paper.mmlu import short_label
from hca.paper.setups import SETUP_NAMES, SETUPS
from hca.paper.v1 import precedes
from hca.stability import matches_alignment, recovery_study

__all__ = [
    "alignment_figure",
    "v1_dgp_figure",
    "v1_graphs_figure",
    "alignment_share",
    "refit_share",
    "v1_is_paper_order",
    "v1_reasoning_first",
    "mmlu_label",
    "mmlu_subject_figure",
    "mmlu_mic_figure",
    "mmlu_seed_table",
    "mmlu_fit_values",
    "mmlu_mixture_share",
    "recovery_grid",
]


# =========================================================================== 03 interpretation
def alignment_figure(res: Any):
    """Paper Figure 3b for one setup (:func:`hca.plots.plot_alignment_panels`); ``res`` is an
    :class:`hca.paper.interpretation.InterpretationResults`. Returns the figure."""
    return plots.plot_alignment_panels(res.alignment, res.in_sample, res.oos_scores)[0].figure


# =========================================================================== 06 leaderboard v1
def v1_dgp_figure(res: Any, benchmarks: Sequence[str]):
    """Every v1 domain's structural weights and the mixing matrix G
    (:func:`hca.plots.plot_domain_scms`). Returns the figure."""
    return plots.plot_domain_scms(res.fit, benchmarks)[0, 0].figure


def v1_graphs_figure(res: Any):
    """Every v1 domain's causal graph after the OLS adjustment
    (:func:`hca.plots.plot_domain_graphs`). Returns the figure."""
    labels = [benchmark_label(b) for b in res.adjustment.benchmarks]
    models = {d: res.adjustment.models[d] for d in res.fit.domains_}
    return plots.plot_domain_graphs(models, labels)[0, 0].figure


def alignment_share(records: pd.DataFrame, test: Callable[[tuple], bool]) -> float:
    """Share of refits (rows of :mod:`hca.stability` records, column ``alignment``) whose
    alignment passes ``test``."""
    return float(np.mean([bool(test(tuple(x))) for x in records["alignment"]]))


def refit_share(res: Any, test: Callable[[tuple], bool], what: str = "seeds") -> float:
    """:func:`alignment_share` of a chapter result's FastICA-seed refits (``res.seeds``) or,
    with ``what="boot"``, of its bootstrap refits (``res.boots``)."""
    if what not in ("seeds", "boot"):
        raise ValueError(f"what must be 'seeds' or 'boot', got {what!r}")
    return alignment_share(res.seeds.records if what == "seeds" else res.boots.records, test)


def v1_is_paper_order(alignment: Sequence[str], roles: Sequence[frozenset]) -> bool:
    """Whether a v1 alignment is the paper's order (:func:`hca.paper.v1.paper_roles`)."""
    return bool(matches_alignment(alignment, roles))


def v1_reasoning_first(alignment: Sequence[str], roles: Sequence[frozenset]) -> bool:
    """Whether a reasoning factor precedes GSM8K's (roles 2 and 3 of the paper's)."""
    return precedes(alignment, roles[1], roles[2])


# =========================================================================== 07 MMLU by subject
#: A subject's short display name (``"college math"``).
mmlu_label = short_label


def _fits(results: Mapping[str, Any], name: str) -> dict[str, Any]:
    return {s: getattr(results[s], name) for s in SETUP_NAMES}


def mmlu_subject_figure(results: Mapping[str, Any], name: str):
    """Figures 28-30 for the subject fit ``name`` (``"math"``, ``"physics"``, ``"cross"``):
    the careful setup's correlations and spectra, each setup's mixing matrix
    (:func:`hca.plots.plot_subject_panels`). Returns the figure."""
    fits = _fits(results, name)
    f = fits["careful"]
    names = [mmlu_label(x) for x in f.subjects]
    mixings = {SETUPS[s].label: fits[s].model.mixing_ for s in SETUP_NAMES}
    return plots.plot_subject_panels(f.corr, f.spectra, mixings, names)[0, 0].figure


def mmlu_mic_figure(
    results: Mapping[str, Any], name: str, short: Mapping[str, str], paper_mic: float | None = None
):
    """The MIC of every subset of base models for the subject fit ``name``, one panel per
    setup (:func:`hca.plots.plot_mic_panels`). Returns the figure."""
    fits = _fits(results, name)
    tables = {SETUPS[s].label: fits[s].table for s in SETUP_NAMES}
    highlights = {SETUPS[s].label: fits[s].domains for s in SETUP_NAMES}
    ref = {"paper": paper_mic} if paper_mic is not None else None
    return plots.plot_mic_panels(tables, highlights, short_names=short, reference=ref)[0].figure


def mmlu_seed_table(results: Mapping[str, Any], name: str, k: int | None = None) -> pd.DataFrame:
    """Per setup: MIC at seed 0 and over seeds, the paper's subset's rank (among subsets of
    size ``k``, or all), the most frequent z1 and order."""
    out = {}
    for s, f in _fits(results, name).items():
        row = f.rank()
        z1 = f.seeds["top"].map(lambda t: t[0]).value_counts(normalize=True)
        order = f.seeds["order"].value_counts(normalize=True)
        out[SETUPS[s].label] = {
            "MIC (seed 0)": f"{f.model.mic_:.3f}",
            "MIC over seeds": f"{f.seeds['mic'].min():.3f}-{f.seeds['mic'].max():.3f}",
            "rank (seed 0)": f"{int(row['rank'] if k else row['rank_all'])} of "
            f"{int((f.table['size'] == k).sum()) if k else len(f.table)}",
            "top(z1): most often": f"{mmlu_label(z1.index[0])} ({z1.iloc[0]:.0%})",
            "order: most often": " > ".join(mmlu_label(x) for x in order.index[0])
            + f" ({order.iloc[0]:.0%})",
        }
    return pd.DataFrame(out)


def mmlu_fit_values(
    results: Mapping[str, Any], prefix: str, name: str, k: int | None = None
) -> dict[str, Any]:
    """The numbers the page glues for the subject fit ``name`` (keys ``<prefix>_..._<setup>``):
    MIC at seed 0 and its range over seeds, the best subset (of size ``k``) and its MIC, the
    share of seeds whose best subset is the paper's, and the share of seeds with each subject
    as z1."""
    out: dict[str, Any] = {}
    for s, f in _fits(results, name).items():
        out[f"{prefix}_mic_{s}"] = float(f.model.mic_)
        out[f"{prefix}_miclo_{s}"] = float(f.seeds["mic"].min())
        out[f"{prefix}_michi_{s}"] = float(f.seeds["mic"].max())
        t = f.table if k is None else f.table[f.table["size"] == k]
        best = t.sort_values("mic", kind="stable").iloc[0]
        out[f"{prefix}_best_{s}"] = ", ".join(best["subset"])
        out[f"{prefix}_bestmic_{s}"] = float(best["mic"])
        per = f.best_per_seed(k)
        hit = (per["subset"].map(frozenset) == frozenset(f.domains)).mean()
        out[f"{prefix}_minshare_{s}"] = float(hit)
        z1 = f.seeds["top"].map(lambda t: t[0])
        for subj in f.subjects:
            out[f"{prefix}_z1_{subj[5:]}_{s}"] = float((z1 == subj).mean())
    return out


def mmlu_mixture_share(fit: Any) -> tuple[float, float]:
    """High-school + college physics share of the squared (row-normalised) weights of z2
    and z3 of a subject fit (seed 0)."""
    H = fit.model.unmixing_
    W = (H / np.linalg.norm(H, axis=1, keepdims=True)) ** 2
    idx = [fit.subjects.index(x) for x in ("mmlu_high_school_physics", "mmlu_college_physics")]
    return W[1, idx].sum(), W[2, idx].sum()


# =========================================================================== 11 your data
def recovery_grid(
    n_domains: Sequence[int], n_per_domain: Sequence[int], n_reps: int, n_jobs: int | None = None
) -> pd.DataFrame:
    """:func:`hca.stability.recovery_study` on this grid (``n_reps`` simulations per cell),
    computed once per build and library version (:func:`hca.paper.cache.cached`: the
    notebooks of ``make test`` leave it in the results store, the book reads it). ``n_jobs``
    changes how it is computed, not the result."""
    return cached(
        "recovery_study",
        _recovery_grid,
        tuple(int(k) for k in n_domains),
        tuple(int(n) for n in n_per_domain),
        int(n_reps),
        n_jobs,
    )


def _recovery_grid(
    n_domains: tuple[int, ...], n_per_domain: tuple[int, ...], n_reps: int, n_jobs: int | None
) -> pd.DataFrame:
    return recovery_study(n_domains, n_per_domain, n_reps=n_reps, n_jobs=n_jobs)
