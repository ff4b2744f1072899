"""The work of ``python -m hca fit``, estimated before it starts.

The search over row orders (:func:`hca.estimator.search.hca_search`) dominates large fits,
and its cost depends on the number of domains ``K``, of factors ``d0`` and of benchmarks
(through ``q = min(n_benchmarks, K d0)``, the span the search works in). Rather than a
formula whose constants would depend on the machine, the cost of one evaluated prefix is
*measured* here, now: :func:`search_rate` runs the library's own search on random
orthonormal matrices of the fit's shape with a small budget of prefixes (multiplied by four while
it takes less than :data:`PROBE_SECONDS`). One search then costs at most that rate times the
prefixes it may evaluate: every one of the ``(d0!)^K`` orders' prefixes for
``--search exhaustive`` (whose branch and bound usually evaluates far fewer: those bounded
above a known order's MIC are not expanded), at most ``--max-nodes`` for ``--search
sequential`` (which stops sooner when it certifies its answer). The ICA step is timed on one
domain's whitening. A small probe evaluates prefixes at up to about three times the cost of
a long search (its levels are too small to batch), and a sequential search often stops far
below ``--max-nodes``, so the estimates are upper ones and can be far above the run (20
domains of 505 models and 500 benchmarks: estimated 16 min, ran in 53 s).

:func:`estimate_work` adds up the fit, the ``--seeds`` refits and the MIC reference
(``--null-draws``, one search per draw; by default at most its time budget, the draws being
chosen after the fit from the fit's measured search), and :func:`check_work` refuses, before
any fit, work beyond ``--time-limit`` or a search table beyond :data:`MAX_TABLE_BYTES`.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np

from hca.cli.inputs import Leaderboard
from hca.estimator.search import hca_search
from hca.validation import InputError

__all__ = [
    "PROBE_SECONDS",
    "MAX_TABLE_BYTES",
    "WorkEstimate",
    "search_prefixes",
    "search_rate",
    "estimate_work",
    "check_work",
    "duration",
]

#: The probe's node budget is multiplied by four while one probe takes less than this (seconds).
PROBE_SECONDS = 0.3
#: Node budgets of the probe: the first, and the largest tried.
PROBE_NODES = (200, 20_000)
#: The search keeps, per domain, the residual of every row after every subset of placed
#: rows: ``K 2^d0 d0 q`` floats. Beyond this many bytes the fit is refused.
MAX_TABLE_BYTES = 2 * 1024**3


def duration(seconds: float) -> str:
    """``"40 s"``, ``"12 min"`` or ``"3.1 h"``."""
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def search_prefixes(search: str, n_domains: int, n_components: int, max_nodes: int) -> int:
    """Prefixes one search may evaluate: all of them for ``"exhaustive"``
    (``sum_j (d0! / (d0 - j)!)^K``), at most ``max_nodes`` for ``"sequential"``."""
    if search == "sequential":
        return int(max_nodes)
    return sum(math.perm(n_components, j) ** n_domains for j in range(1, n_components + 1))


def search_table_bytes(n_domains: int, n_components: int, n_benchmarks: int) -> int:
    """Bytes of the search's table of row residuals (``K 2^d0 d0 q`` floats)."""
    q = min(n_benchmarks, n_domains * n_components)
    return 8 * n_domains * 2**n_components * n_components * q


def search_rate(
    n_domains: int, n_components: int, n_benchmarks: int, search: str, max_nodes: int
) -> tuple[float, float, bool]:
    """Measured seconds per evaluated prefix of the library's search on random orthonormal
    unmixing matrices of the fit's shape (``K`` of ``d0 x n_benchmarks``).

    Returns ``(seconds per prefix, seconds of the probe, whether the probe was a whole
    search)``: a probe that ran a complete search (an exhaustive search small enough, or a
    sequential one that certified within the probe's budget) measured one search itself.
    """
    rng = np.random.default_rng(0)
    M = [
        np.linalg.qr(rng.standard_normal((n_benchmarks, n_components)))[0].T
        for _ in range(n_domains)
    ]
    small = (
        search == "exhaustive"
        and search_prefixes(search, n_domains, n_components, max_nodes) <= PROBE_NODES[1]
    )
    budget, spent = PROBE_NODES[0], 0.0
    while True:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an uncertified probe is expected
            res = hca_search(
                M,
                search="exhaustive" if small else "sequential",
                max_nodes=min(budget, max_nodes),
            )
        seconds = time.perf_counter() - start
        spent += seconds
        whole = small or res.certified
        if whole or seconds >= PROBE_SECONDS or budget >= min(PROBE_NODES[1], max_nodes):
            return seconds / max(res.n_nodes, 1), seconds if whole else spent, whole
        budget *= 4


def _ica_seconds(board: Leaderboard) -> float:
    """The ICA step, estimated from one whitening (the SVD of the largest domain's centred
    scores) times the number of domains; FastICA's iterations on ``d0`` whitened columns
    cost little beside it."""
    sizes = board.domain_sizes()
    largest = max(sizes, key=lambda k: sizes[k])
    rows = board.X.to_numpy(dtype=float)[board.domains == largest]
    start = time.perf_counter()
    np.linalg.svd(rows - rows.mean(axis=0), full_matrices=False)
    return (time.perf_counter() - start) * len(sizes)


@dataclass(frozen=True)
class WorkEstimate:
    """The estimated work of a run, in seconds (upper estimates; see the module docstring).

    Attributes
    ----------
    ica : float
        The ICA step of one fit.
    search : float
        One search over row orders (the fit's, and each draw of the MIC reference).
    prefixes : int
        Prefixes one search may evaluate.
    per_prefix : float
        Measured seconds per prefix.
    exact : bool
        Whether ``search`` was measured on a whole search of the same size.
    seeds : int
        Fits (``--seeds``).
    null_draws : int
        Searches of the MIC reference (``--null-draws``).
    reference_cap : float
        With the default number of draws (``null_draws`` 0): the most time the MIC
        reference may take (its draws are chosen after the fit, from the fit's measured
        search, to fit within it).
    """

    ica: float
    search: float
    prefixes: int
    per_prefix: float
    exact: bool
    seeds: int
    null_draws: int
    reference_cap: float = 0.0

    @property
    def fit(self) -> float:
        """One fit: ICA and search."""
        return self.ica + self.search

    @property
    def reference(self) -> float:
        """The MIC reference: one search per draw (or, by default, at most its cap)."""
        return self.search * self.null_draws if self.null_draws else self.reference_cap

    @property
    def total(self) -> float:
        return self.fit * self.seeds + self.reference

    def text(self) -> str:
        """One line: the total and its parts."""
        how = (
            f"up to {self.prefixes:,} prefixes at {self.per_prefix * 1e3:.2g} ms each, measured now"
            if not self.exact
            else "measured on a search of the same size"
        )
        parts = [f"one fit about {duration(self.fit)} (search {how})"]
        if self.seeds > 1:
            parts.append(f"{self.seeds} seeds")
        if self.null_draws:
            parts.append(
                f"MIC reference {self.null_draws} searches, about {duration(self.reference)}"
            )
        elif self.reference_cap:
            parts.append(
                f"MIC reference at most {duration(self.reference_cap)} (its draws are chosen "
                "after the fit, from the fit's measured search)"
            )
        return f"estimated work at most about {duration(self.total)}: " + "; ".join(parts)


def estimate_work(
    board: Leaderboard,
    *,
    n_components: int,
    search: str,
    max_nodes: int,
    seeds: int,
    null_draws: int,
) -> WorkEstimate:
    """Estimate the work of a run before it starts (a few seconds at most), with
    ``null_draws`` searches of the MIC reference (``--null-draws``)."""
    K, p = len(board.domain_sizes()), board.X.shape[1]
    table = search_table_bytes(K, n_components, p)
    if table > MAX_TABLE_BYTES:
        raise InputError(
            f"--n-components {n_components} with {K} domains and {p} benchmarks: the search "
            f"keeps every domain's row residuals after every subset of placed rows "
            f"(K 2^d0 d0 min(p, K d0) numbers, {table / 1024**3:.1f} GB), beyond the limit "
            f"of {MAX_TABLE_BYTES / 1024**3:.0f} GB; use fewer factors (--n-components) or "
            "fewer domains"
        )
    rate, probe, whole = search_rate(K, n_components, p, search, max_nodes)
    prefixes = search_prefixes(search, K, n_components, max_nodes)
    one_search = probe if whole else rate * prefixes
    return WorkEstimate(
        ica=_ica_seconds(board),
        search=one_search,
        prefixes=prefixes,
        per_prefix=rate,
        exact=whole,
        seeds=seeds,
        null_draws=null_draws,
    )


def check_work(estimate: WorkEstimate, limit_minutes: float, search: str) -> None:
    """Refuse work estimated beyond ``limit_minutes`` (``--time-limit``), saying what it
    is made of and what makes it smaller."""
    if estimate.total <= 60 * limit_minutes:
        return
    hints = []
    if search == "sequential" and not estimate.exact:
        smaller = max(1, int(60 * limit_minutes / max(estimate.per_prefix, 1e-12) / 2))
        if smaller < estimate.prefixes:
            hints.append(
                f"--max-nodes {smaller} (the search may then stop without certifying its answer)"
            )
    if search == "exhaustive":
        hints.append("--search sequential")
    if estimate.seeds > 1:
        hints.append("fewer --seeds")
    if estimate.null_draws:
        hints.append("fewer --null-draws (0 skips the MIC reference)")
    elif estimate.reference_cap:
        hints.append("--null-draws 0 (skips the MIC reference)")
    hints.append(f"or raise --time-limit above {limit_minutes:g} (minutes)")
    raise InputError(
        f"{estimate.text()}, beyond --time-limit {limit_minutes:g} min, so the fit was not "
        f"started; to make it smaller: {', '.join(hints)}"
    )
