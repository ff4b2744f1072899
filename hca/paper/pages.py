"""What the chapter pages show beyond the chapters' own results: small tables and shares
composed from ``hca.paper.<chapter>.run`` results, and the adapters from those results to the
multi-panel figures of :mod:`hca.plots` (which draw every figure).

The notebooks hold narrative, calls and figures; the helpers they would otherwise define live
here, one section per page, with unit tests (``tests/test_paper_pages.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from hca import plots
from hca.data.registry import benchmark_label
from hca.paper.cache import cached
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
