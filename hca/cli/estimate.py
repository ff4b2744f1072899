"""The work and memory of ``python -m hca fit``, estimated before it starts.

The estimate is a model whose constants were **measured on this machine** and are shipped as
plain data (``hca/cli/calibration.json``, re-measured by ``benchmarks/bench_estimate.py``:
fits of simulated leaderboards from both simulators of the book, 2 to 600 domains, both
searches, each in its own process, timed in its parts). Nothing here times the user's data;
a short fixed workload (:func:`speed_probe`, about 20 ms) compares this machine's speed
now with the calibration's.

**Time.** One fit is the ICA of every domain (linear in the rows and benchmarks), the search
over row orders (its prefixes times the measured seconds per prefix) and the rest (the
evaluation and the OLS adjustment). The prefixes a search evaluates are the uncertain part,
and :class:`WorkEstimate` keeps a range:

* ``exhaustive``: the branch and bound evaluates at least every first-level prefix
  (``d0^K``), typically a few times that, at most the whole tree;
* ``sequential`` with levels small enough to enumerate (``d0^K <= --max-nodes``): the first
  level and one beam, or more beams up to the budget;
* ``sequential`` beyond (many domains): the search either stops after a few cheap beams
  (domains sharing a clear hierarchy: the beam's candidates run out) or uses its budget of
  ``--max-nodes`` prefixes (the typical case on real tables and always under random
  rotations). The estimate is the budget's; the range goes down to the calibration's
  earliest stop.

The ``--seeds`` refits (spread over ``--n-jobs`` workers) and the MIC reference (one search
of randomly rotated ICA sources per draw: unstructured, so at the budget) are added.
:func:`check_work` refuses, before any fit, only what cannot fit: work whose **lower** end
exceeds ``--time-limit``, and memory (:func:`estimate_memory`, against
:func:`hca.cli.memory.headroom`) beyond what the process may still use.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from typing import Any

import numpy as np

from hca.cli.memory import Headroom, headroom, size_text
from hca.validation import InputError

__all__ = [
    "MAX_TABLE_BYTES",
    "Shape",
    "WorkEstimate",
    "MemoryEstimate",
    "load_calibration",
    "speed_probe",
    "machine_load",
    "estimate_work",
    "estimate_memory",
    "check_table",
    "check_work",
    "check_memory",
    "duration",
    "features",
]

#: The search keeps, per domain, the residual of every row after every subset of placed
#: rows: ``K 2^d0 d0 q`` floats. Beyond this many bytes the fit is refused.
MAX_TABLE_BYTES = 2 * 1024**3
_FLOAT = 8


def duration(seconds: float) -> str:
    """``"40 s"``, ``"12 min"`` or ``"3.1 h"``."""
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def load_calibration() -> dict:
    """The measured constants (``hca/cli/calibration.json``)."""
    text = resources.files("hca.cli").joinpath("calibration.json").read_text(encoding="utf-8")
    return dict(json.loads(text))


@dataclass(frozen=True)
class Shape:
    """What the work depends on: the rows per domain, the benchmarks and the search."""

    sizes: tuple
    n_benchmarks: int
    n_components: int
    search: str = "exhaustive"
    max_nodes: int = 1_000_000
    beam_width: int = 32

    @property
    def K(self) -> int:
        return len(self.sizes)

    @property
    def d(self) -> int:
        return int(self.n_components)

    @property
    def q(self) -> int:
        """The span the search works in."""
        return min(self.n_benchmarks, self.K * self.d)

    @property
    def rows(self) -> int:
        return int(sum(self.sizes))

    @property
    def regime(self) -> str:
        """``"exhaustive"``, ``"enumerated"`` (sequential, every level enumerated at first)
        or ``"partial"`` (sequential, the first level too large to enumerate)."""
        if self.search == "exhaustive":
            return "exhaustive"
        return "enumerated" if self.d**self.K <= self.max_nodes else "partial"

    @cached_property
    def _tree(self) -> Any:
        """The search's own tree on a stand-in problem of this shape (its schedule depends
        on the shape only)."""
        from hca.estimator.search_tree import SearchTree

        M = np.tile(np.eye(self.d), (self.K, 1, 1))
        return SearchTree(M, "domain")

    def round_cost(self, width: int) -> int:
        """The most prefixes one beam of ``width`` evaluates after the first level."""
        from hca.estimator.search_tree import round_cost

        return int(round_cost(self._tree, width, self.max_nodes))

    def first_level(self) -> int:
        """The most prefixes of the first level."""
        if self.d**self.K <= self.max_nodes:
            return int(self.d**self.K)
        return int(self._tree.n_proposals(0, 1, self.max_nodes))

    def batch_children(self) -> int:
        """The most children the search evaluates in one stacked step: ``MAX_CHILDREN`` (or
        the whole tree when smaller) when levels are enumerated; with proposals, the
        parents of one batch (about 2^21 floats of starting directions, 64 starts a parent)
        times their proposals (512 at most) -- the constants of
        :mod:`hca.estimator.search_tree`."""
        from hca.estimator.search_tree import MAX_CHILDREN

        if self.regime != "partial":
            return int(min(MAX_CHILDREN, self.nodes()[1]))
        if self.d <= 2:  # only the first level is proposed
            return self.first_level()
        starts = min(64, self.K * self.d)
        parents = max(1, (1 << 21) // (starts * self.K * self.d**2))
        parents = min(parents, self.first_level())  # a beam's parents come from the first level
        return int(min(self.max_nodes, parents * 512))

    def table_bytes(self) -> int:
        """Bytes of the search's table of row residuals (``K 2^d0 d0 q`` floats)."""
        return _FLOAT * self.K * 2**self.d * self.d * self.q

    def nodes(self) -> tuple[int, int]:
        """The fewest and the most prefixes one search may evaluate (see the module
        docstring): ``(low, high)``."""
        d, K = self.d, self.K
        if self.regime == "exhaustive":
            full = sum(math.perm(d, j) ** K for j in range(1, d + 1))
            return int(d**K), int(full)
        first = self.first_level()
        low = first + self.round_cost(self.beam_width)
        width, high = self.beam_width, low
        while high + self.round_cost(2 * width) <= self.max_nodes:
            width *= 2
            high += self.round_cost(width)
        return int(low), int(max(low, high if self.regime == "enumerated" else self.max_nodes))


def features(name: str, shape: Shape) -> np.ndarray:
    """The features of one part of the model (its seconds or bytes are their dot product
    with the calibration's coefficients): ``"ica"``, ``"rest"``, ``"per_node"``,
    ``"fit_bytes"``, ``"draw_bytes"`` (``"per_node_<regime>"``: the seconds of one prefix)."""
    K, d, p, q = shape.K, shape.d, shape.n_benchmarks, shape.q
    n = np.asarray(shape.sizes, dtype=float)
    if name == "ica":
        return np.array([K, float(n.sum() * p), float(n.sum() * p * p), K * p**3])
    if name == "rest":
        return np.array([1.0, K, float(n.sum() * p)])
    if name.startswith("per_node"):
        return np.array([1.0, K * q, K * q * d, K * d**3])
    if name == "fit_bytes":
        # a batch of children holds a few numbers per domain and factor (measured: it does not
        # grow with the benchmarks, the search's span)
        # (one coefficient per regime: their batches are built differently)
        batch = shape.batch_children() * K * d * _FLOAT
        regimes = ("exhaustive", "enumerated", "partial")
        per_regime = [batch if shape.regime == r else 0.0 for r in regimes]
        return np.array([1.0, float(n.sum() * p) * _FLOAT, shape.table_bytes(), *per_regime])
    if name == "draw_bytes":
        return np.array([1.0, K, K * d * p * _FLOAT, shape.table_bytes()])
    raise ValueError(f"unknown part {name!r}")


def _dot(calibration: dict, part: str, shape: Shape) -> float:
    coef = np.asarray(calibration[part]["coef"], dtype=float)
    return float(max(features(part, shape) @ coef, 0.0))


_PROBE_SHAPE = (48, 3, 24)  # the speed probe: domains, factors, benchmarks


def speed_probe(repeats: int = 3) -> float:
    """Seconds of a fixed workload like the search's (stacked small eigenproblems and
    products, about 20 ms in pieces of a few MB), the fastest of ``repeats``: the
    calibration stores its value, and the ratio of today's to it scales every estimate."""
    K, d, p = _PROBE_SHAPE
    rng = np.random.default_rng(0)
    A = rng.standard_normal((256, K, d))
    B = rng.standard_normal((d, p))
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(8):
            R = A @ B  # (n, K, p)
            G = np.swapaxes(R, 1, 2) @ R  # (n, p, p)
            np.linalg.eigh(G[:, :8, :8])
            np.sum(R**2, axis=2).max(axis=1)
        best = min(best, time.perf_counter() - start)
    return best


def machine_load() -> float:
    """How many times longer than its CPU time work takes now: the 1-minute load average
    over the cores this process may use, at least 1 (1 where it cannot be read)."""
    import os

    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        return max(1.0, os.getloadavg()[0] / max(cores, 1))
    except OSError:
        return 1.0


@dataclass(frozen=True)
class WorkEstimate:
    """The estimated work of a run in seconds: typical, and its range (see the module
    docstring).

    Attributes
    ----------
    ica, rest : float
        The ICA step and the rest of one fit.
    search, search_low, search_high : float
        One search over row orders: typical, fewest and most seconds.
    nodes, nodes_low, nodes_high : int
        Prefixes of one search: typical, fewest and most.
    regime : str
        :attr:`Shape.regime`.
    seeds, jobs : int
        Fits (``--seeds``) and the processes they are spread over.
    null_draws : int
        Searches of the MIC reference (``--null-draws``; 0: none or, with
        ``reference_cap``, the default).
    per_draw : float
        Seconds of one draw of the MIC reference.
    reference_cap : float
        With the default reference: the most time it may take (its draws are chosen to fit).
    spread : tuple of float
        The calibration's widest ratios, estimate over measurement and back (an estimate
        is wrong by at most these factors on the calibration's own runs).
    speed : float
        This machine's speed now against the calibration's (above 1: slower), times
        ``load``.
    load : float
        How much longer than its CPU time the work takes on this machine now: the load
        average over the cores, at least 1 (a shared machine). The least estimate leaves it
        out (a load passes), the typical and the most include it.
    """

    ica: float
    rest: float
    search: float
    search_low: float
    search_high: float
    nodes: int
    nodes_low: int
    nodes_high: int
    regime: str
    seeds: int = 1
    jobs: int = 1
    null_draws: int = 0
    per_draw: float = 0.0
    reference_cap: float = 0.0
    worker_start: float = 0.0
    spread: tuple = (1.0, 1.0)
    speed: float = 1.0
    load: float = 1.0

    def _fits(self, one: float) -> float:
        """``seeds`` fits of ``one`` second each: the first here, the others over ``jobs``."""
        rest = self.seeds - 1
        if rest <= 0:
            return one
        jobs = max(1, min(self.jobs, rest))
        return one + one * math.ceil(rest / jobs) + (self.worker_start if jobs > 1 else 0.0)

    @property
    def fit(self) -> float:
        """One fit, typical."""
        return self.ica + self.search + self.rest

    @property
    def reference(self) -> float:
        """The MIC reference: its draws (or, by default, at most its cap)."""
        if self.null_draws:
            return self.per_draw * self.null_draws
        return min(self.reference_cap, self.per_draw * 20) if self.reference_cap else 0.0

    @property
    def total(self) -> float:
        return self._fits(self.fit) + self.reference

    @property
    def low(self) -> float:
        """The least the run may take: the earliest search stop, less the calibration's
        widest over-estimate."""
        fits = self._fits(self.ica + self.search_low + self.rest)
        draws = self.per_draw * self.null_draws
        return (fits + draws) / self.spread[0] / self.load

    @property
    def high(self) -> float:
        """The most the run may take: every search at its budget, and the calibration's
        widest under-estimate."""
        fits = self._fits(self.ica + self.search_high + self.rest)
        return (fits + self.reference) * self.spread[1]

    def text(self) -> str:
        """One line: the typical total, its range and its parts."""
        parts = [f"one fit about {duration(self.fit)}"]
        if self.regime == "partial":
            parts[0] += (
                f" (a search of up to {self.nodes_high:,} prefixes, --max-nodes; it stops "
                "sooner when the domains share a clear hierarchy)"
            )
        if self.seeds > 1:
            parts.append(
                f"{self.seeds} seeds" + (f" over {self.jobs} jobs" if self.jobs > 1 else "")
            )
        if self.null_draws:
            parts.append(
                f"MIC reference {self.null_draws} searches of about {duration(self.per_draw)}"
            )
        elif self.reference_cap:
            parts.append(f"MIC reference at most {duration(self.reference)}")
        busy = f", the machine busy: load x{self.load:.1f}" if self.load > 1.5 else ""
        return (
            f"estimated work about {duration(self.total)} (between {duration(self.low)} and "
            f"{duration(self.high)}; measured calibration{busy}): " + "; ".join(parts)
        )


def estimate_work(
    shape: Shape,
    *,
    seeds: int = 1,
    null_draws: int = 0,
    n_jobs: int | None = None,
    calibration: dict | None = None,
    speed: float | None = None,
) -> WorkEstimate:
    """Estimate a run before it starts (no fit: the model and a 20 ms speed probe).

    ``null_draws`` is ``--null-draws`` (0 with the default reference: set
    ``reference_cap`` afterwards with :func:`dataclasses.replace`)."""
    cal = load_calibration() if calibration is None else calibration
    load = 1.0
    if speed is None:
        speed = float(np.clip(speed_probe() / cal["probe_seconds"], 0.5, 4.0))
        load = machine_load()
        speed *= load
    low, high = shape.nodes()
    if shape.regime == "partial":  # beams may evaluate far fewer prefixes than they may
        low = int(max(1, cal["nodes"]["partial"]["low"] * high))
    per_node = _dot(cal, f"per_node_{shape.regime}", shape)
    share = cal["nodes"][shape.regime]
    if shape.regime == "exhaustive":
        nodes = int(min(high, max(low, share["typical"] * low)))
        draw_nodes = nodes
    else:
        nodes = int(max(low, min(high, share["typical"] * high)))
        draw_nodes = int(max(low, min(high, share["rotated"] * high)))
    jobs = 1 if n_jobs is None else int(n_jobs)
    if jobs < 0:
        import joblib

        jobs = max(1, joblib.cpu_count() + 1 + jobs)
    return WorkEstimate(
        ica=_dot(cal, "ica", shape) * speed,
        rest=_dot(cal, "rest", shape) * speed,
        search=nodes * per_node * speed,
        search_low=low * per_node * speed,
        search_high=high * per_node * speed,
        nodes=nodes,
        nodes_low=low,
        nodes_high=high,
        regime=shape.regime,
        seeds=int(seeds),
        jobs=jobs,
        null_draws=int(null_draws),
        per_draw=draw_nodes * per_node * speed * cal["reference"].get(shape.regime, 1.0),
        worker_start=float(cal.get("worker_start_seconds", 0.0)) * speed,
        spread=(float(cal["spread"]["over"]), float(cal["spread"]["under"])),
        speed=speed,
        load=load,
    )


def check_table(shape: Shape) -> None:
    """Refuse a search table (:meth:`Shape.table_bytes`) beyond :data:`MAX_TABLE_BYTES`."""
    table = shape.table_bytes()
    if table > MAX_TABLE_BYTES:
        raise InputError(
            f"--n-components {shape.d} with {shape.K} domains and {shape.n_benchmarks} "
            "benchmarks: the search keeps every domain's row residuals after every subset of "
            f"placed rows (K 2^d0 d0 min(p, K d0) numbers, {table / 1024**3:.1f} GB), beyond "
            f"the limit of {MAX_TABLE_BYTES / 1024**3:.0f} GB; use fewer factors "
            "(--n-components) or fewer domains"
        )


def check_work(estimate: WorkEstimate, limit_minutes: float, shape: Shape) -> None:
    """Refuse work whose least estimate exceeds ``limit_minutes`` (``--time-limit``),
    saying what it is made of and what makes it smaller; a run that may fit is not
    refused."""
    if estimate.low <= 60 * limit_minutes:
        return
    hints = []
    if shape.regime == "partial":
        share = 60 * limit_minutes / max(estimate.low, 1e-9)
        smaller = max(1000, int(shape.max_nodes * share / 2))
        hints.append(
            f"--max-nodes {smaller} (the search may then stop without certifying its answer)"
        )
    if shape.search == "exhaustive":
        hints.append("--search sequential")
    if estimate.seeds > 1:
        hints.append("fewer --seeds")
    if estimate.null_draws:
        hints.append("fewer --null-draws (0 skips the MIC reference)")
    hints.append(f"{'or ' if hints else ''}raise --time-limit above {limit_minutes:g} (minutes)")
    raise InputError(
        f"{estimate.text()}; even the least, {duration(estimate.low)}, is beyond --time-limit "
        f"{limit_minutes:g} min, so the fit was not started; to make it smaller: "
        + ", ".join(hints)
    )


@dataclass(frozen=True)
class MemoryEstimate:
    """Estimated bytes a run adds to this process (``main``: the fit, the MIC reference
    and the seed records) and to its worker processes (``workers``), by part."""

    fit: float
    reference: float
    per_draw: float
    draws: int
    workers: float = 0.0
    n_workers: int = 0

    @property
    def main(self) -> float:
        return self.fit + self.reference

    def text(self) -> str:
        parts = [f"the fit about {size_text(self.fit)}"]
        if self.draws:
            parts.append(
                f"the MIC reference {self.draws:,} random rotations at about "
                f"{size_text(self.per_draw) if self.per_draw >= 1024**2 else f'{self.per_draw / 1024:.0f} KB'}"
                f" each, {size_text(self.reference)}"
            )
        if self.n_workers:
            parts.append(f"{self.n_workers} worker processes about {size_text(self.workers)}")
        return "; ".join(parts)


def estimate_memory(
    shape: Shape,
    *,
    null_draws: int,
    seeds: int = 1,
    n_jobs: int = 1,
    calibration: dict | None = None,
) -> MemoryEstimate:
    """The memory a run adds (its parts), from the calibration's measured bytes."""
    cal = load_calibration() if calibration is None else calibration
    mem = cal["memory"]
    fit = _dot(cal, "fit_bytes", shape) * mem["safety"]
    per_draw = _dot(cal, "draw_bytes", shape) * mem["safety"]
    workers = max(0, min(n_jobs, seeds - 1)) if seeds > 1 else 0
    worker = mem["worker_bytes"] + fit
    # draws searched one after another (sequential) each need the fit's working set again
    # (once at a time); exhaustive ones are one batch, in the bytes per draw
    again = fit if null_draws and shape.search == "sequential" else 0.0
    return MemoryEstimate(
        fit=fit,
        reference=per_draw * null_draws + again,
        per_draw=per_draw,
        draws=int(null_draws),
        workers=worker * workers,
        n_workers=workers,
    )


def check_memory(memory: MemoryEstimate, room: Headroom | None = None) -> None:
    """Refuse a run whose estimated memory exceeds what this process (and its workers) may
    still use (:func:`hca.cli.memory.headroom`), with the figures and what makes it smaller."""
    room = headroom() if room is None else room
    over = room.for_run(memory.main, memory.workers)
    if over is None:
        return
    needed, left, what = over
    hints = []
    if memory.draws and memory.per_draw > 0:
        fit_draws = int(max(0.0, left - memory.fit - memory.workers) // memory.per_draw)
        hints.append(f"--null-draws {fit_draws:,} or fewer")
    if memory.n_workers:
        hints.append("fewer --n-jobs")
    hints.append("or more memory")
    raise InputError(
        f"estimated memory about {size_text(needed)} ({memory.text()}), beyond the "
        f"{size_text(max(left, 0))} this process may still use ({what}), so the fit was not "
        "started; to make it smaller: " + ", ".join(hints)
    )
