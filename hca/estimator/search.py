"""Steps 2-3 of HCA: row-residual extraction and the search over row orders (Algorithm 2).

A row order places one row of every domain's ICA unmixing matrix ``M_k`` at each causal
position; there are ``(d0!)^K`` of them. Prefixes (the rows placed at the first ``j``
positions) form a tree whose nodes carry a lower bound on the MIC of every completion.

* ``search="exhaustive"`` finds the best of all complete orders by branch and bound (the
  prefixes whose bound exceeds the MIC of a greedy order are not expanded); it refuses
  problems with more than :data:`MAX_EXHAUSTIVE_ORDERS` orders (:func:`check_search_size`).
* ``search="sequential"`` is a beam search over positions whose width doubles until the
  best complete order is *certified*: its MIC is at most the bound of every prefix left out.
  Memory and work are bounded by ``max_nodes``: a level with more prefixes is not
  enumerated, each prefix getting a few children proposed by alternating search, and an
  answer found that way may stay uncertified (:class:`UncertifiedSearchWarning`).

The tree of prefixes and the beam search on it are in :mod:`hca.estimator.search_tree`.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any

import numpy as np

from hca.estimator.progress import Listener, report
from hca.estimator.results import factor_names
from hca.estimator.search_tree import (
    MAX_CHILDREN,
    RANK_TOL,
    TINY,
    Batch,
    BatchTree,
    Nodes,
    SearchTree,
    round_cost,
    row_choices,
    sequential,
    swap,
)

__all__ = [
    "HCASearchResult",
    "UncertifiedSearchWarning",
    "check_search_size",
    "hca_search",
    "hca_search_batch",
    "evaluate_order",
]


SEARCHES = ("exhaustive", "sequential")
RESIDUALS = ("domain", "shared")
#: Largest number of row orders ``(d0!)^K`` that ``search="exhaustive"`` accepts.
MAX_EXHAUSTIVE_ORDERS = 5_000_000


def check_search_options(search: str, residual: str, beam_width: Any, max_nodes: Any = 1) -> None:
    """Validate the search options."""
    if search not in SEARCHES:
        raise ValueError(f"unknown search {search!r}; expected one of {SEARCHES}")
    if residual not in RESIDUALS:
        raise ValueError(f"unknown residual {residual!r}; expected one of {RESIDUALS}")
    for name, value in (("beam_width", beam_width), ("max_nodes", max_nodes)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


class UncertifiedSearchWarning(UserWarning):
    """The sequential search stopped without proving that its order has the minimal MIC."""


def n_row_orders_text(n_domains: int, n_components: int) -> str:
    """``(d0!)^K`` written out, e.g. ``"(3!)^4 = 1296"`` or ``"(6!)^1000 ~ 10^2857"``."""
    head = f"({n_components}!)^{n_domains}"
    log10 = n_domains * math.lgamma(n_components + 1) / math.log(10)
    if log10 < 15:
        return f"{head} = {math.factorial(n_components) ** n_domains}"
    return f"{head} ~ 10^{math.floor(log10)}"


def check_search_size(
    search: str, n_domains: int, n_components: int, hint: str = "use search='sequential'"
) -> None:
    """Refuse ``search="exhaustive"`` on more than :data:`MAX_EXHAUSTIVE_ORDERS` row orders
    (ValueError naming their number and ``hint``); cheap, so call it before any ICA."""
    if search != "exhaustive" or n_domains < 1 or n_components < 1:
        return
    log10 = n_domains * math.lgamma(n_components + 1) / math.log(10)
    if log10 > 15 or math.factorial(n_components) ** n_domains > MAX_EXHAUSTIVE_ORDERS:
        raise ValueError(
            f"exhaustive search over {n_row_orders_text(n_domains, n_components)} row orders "
            f"exceeds the limit of {MAX_EXHAUSTIVE_ORDERS:,}; {hint}"
        )


# =========================================================================== search result
@dataclass(frozen=True, eq=False)
class HCASearchResult:
    """Outcome of the HCA search over row orders (Algorithm 2).

    Attributes
    ----------
    domains : tuple
        Domain names, in the order of the input matrices.
    permutations : tuple of ndarray
        Per domain, ``permutations[k][i]`` is the row of ``M_k`` placed at causal
        position ``i`` (0-based).
    signs : tuple of ndarray
        Per domain, the sign applied to each placed row so that ``diag(B_hat_k) > 0``.
    aligned : tuple of ndarray
        ``M'_k = signs[k][:, None] * M_k[permutations[k]]``.
    unmixing : ndarray of shape (n_components, n_benchmarks)
        ``H_hat`` with orthonormal rows.
    weights : tuple of ndarray
        Least-squares lower-triangular ``B_hat_k = tril(M'_k H_hat^T)``.
    J : tuple of ndarray
        ``J_k = B_hat_k H_hat M'_k^T (M'_k M'_k^T)^{-1}`` (Proposition 1).
    alphas : ndarray of shape (n_domains,)
        Inexactness ``alpha_k`` per domain.
    mic : float
        ``max_k alpha_k``.
    rank1_error : ndarray of shape (n_components,)
        ``1 - s_1^2 / sum s^2`` of the stacked residuals at every position (Table 3a).
    unmixing_error : ndarray of shape (n_domains,)
        ``||M'_k - B_hat_k H_hat||_F / ||M'_k||_F`` (Table 3b).
    search, residual : str
        The options used.
    n_evaluated : int
        Complete row orders whose MIC was computed.
    n_pruned : int
        Complete row orders that ``"exhaustive"`` left out because a prefix of theirs was
        bounded above the MIC of a known order (0 for ``"sequential"``).
    n_nodes : int
        Prefixes (nodes of the search tree, complete orders included) evaluated.
    beam_width : int
        Final beam width of ``"sequential"`` (0 for ``"exhaustive"``).
    certified : bool
        True when the search proves this is the minimal MIC over all ``(d0!)^K`` orders
        (always for ``"exhaustive"``).
    enumerated : bool
        False when ``"sequential"`` met a level of the search tree with more than
        ``max_nodes`` prefixes and explored it from a few starting directions instead.
    """

    domains: tuple
    permutations: tuple
    signs: tuple
    aligned: tuple
    unmixing: np.ndarray
    weights: tuple
    J: tuple
    alphas: np.ndarray
    mic: float
    rank1_error: np.ndarray
    unmixing_error: np.ndarray
    search: str = "evaluate"
    residual: str = "domain"
    n_evaluated: int = 1
    n_nodes: int = 0
    n_pruned: int = 0
    beam_width: int = 0
    certified: bool = False
    enumerated: bool = True

    def summary(self) -> str:
        """Text summary: MIC, Table 3 diagnostics and the chosen orders."""
        d = self.unmixing.shape[0]
        names = factor_names(d)
        lines = [
            f"HCA search ({self.search}, residual={self.residual}): MIC = {self.mic:.4g} "
            f"({self.n_evaluated} row orders evaluated"
            + (f", {self.n_pruned} ruled out by their bounds" if self.n_pruned else "")
            + ", "
            f"{'certified optimal' if self.certified else 'not certified'})",
            "rank-1 error: " + ", ".join(f"{n} {e:.3g}" for n, e in zip(names, self.rank1_error)),
        ]
        for k, name in enumerate(self.domains):
            order = ", ".join(str(int(r)) for r in self.permutations[k])
            lines.append(
                f"  {name}: alpha = {self.alphas[k]:.4g}, unmixing error = "
                f"{self.unmixing_error[k]:.3g}, ICA rows in causal order = ({order})"
            )
        return "\n".join(lines)


# =========================================================================== core checks
def _as_unmixing_list(unmixings: Any) -> tuple[np.ndarray, tuple]:
    """Stack the ``M_k`` into a ``(K, d, p)`` array; return it with the domain names."""
    return _as_unmixing_lists([unmixings])[0]


def _as_unmixing_lists(problems: Sequence[Any], where: str = "") -> list[tuple[np.ndarray, tuple]]:
    """:func:`_as_unmixing_list` of every problem; ``where`` prefixes the messages with
    ``problems[i]: ``."""
    out = []
    for i, unmixings in enumerate(problems):
        at = f"problems[{i}]: " if where else ""
        if isinstance(unmixings, Mapping):
            names = tuple(unmixings.keys())
            mats = [unmixings[n] for n in names]
        else:
            mats = list(unmixings)
            names = tuple(range(len(mats)))
        if len(mats) < 2:
            raise ValueError(
                f"{at}HCA needs unmixing matrices of at least 2 domains, got {len(mats)}"
            )
        arrays = [np.asarray(m, dtype=float) for m in mats]
        shape = arrays[0].shape
        for name, m in zip(names, arrays):
            if m.ndim != 2 or m.shape != shape:
                raise ValueError(
                    f"{at}unmixing matrix of domain {name!r} has shape {m.shape}, expected {shape}"
                )
            if not np.all(np.isfinite(m)):
                raise ValueError(
                    f"{at}unmixing matrix of domain {name!r} contains NaN or infinite values"
                )
            if shape[0] > shape[1]:
                raise ValueError(
                    f"{at}unmixing matrix of domain {name!r} does not have full row rank"
                )
        out.append((np.stack(arrays), names))
    by_shape: dict[tuple[int, ...], list[int]] = {}
    for i, (M, _) in enumerate(out):
        by_shape.setdefault(M.shape, []).append(i)
    for members in by_shape.values():
        s = np.linalg.svd(np.stack([out[i][0] for i in members]), compute_uv=False)
        low = s[..., -1] <= RANK_TOL * s[..., 0]  # (problems, K)
        for j, k in zip(*np.nonzero(low)):
            i = members[j]
            at = f"problems[{i}]: " if where else ""
            raise ValueError(
                f"{at}unmixing matrix of domain {out[i][1][k]!r} does not have full row rank"
            )
    return out


# =========================================================================== single order
def _place_rows(M: np.ndarray, perms: np.ndarray, residual: str):
    """Row-residual extraction for one row order of every problem: ``H_hat`` (P, d, p), the
    rank-1 errors (P, d) and the placed rows ``M_k[perms_k]`` (P, K, d, p)."""
    P, K, d, p = M.shape
    Mp = np.take_along_axis(M, perms[..., None], axis=2)
    H = np.zeros((P, d, p))
    errors = np.zeros((P, d))
    for i in range(d):
        v = Mp[:, :, i]  # (P, K, p)
        if i:
            prev = Mp[:, :, :i] if residual == "domain" else H[:, None, :i]
            basis = np.linalg.qr(swap(prev))[0]  # (P, K or 1, p, i)
            R = v - (basis @ (swap(basis) @ v[..., None]))[..., 0]
        else:
            R = v.copy()
        _, s, vt = np.linalg.svd(R, full_matrices=False)
        total = np.sum(s**2, axis=-1)
        ratio = np.divide(s[:, 0] ** 2, total, out=np.ones_like(total), where=total > 0)
        errors[:, i] = 1.0 - ratio
        top = vt[:, 0]  # (P, p)
        Hi = H[:, :i]
        h = top - (swap(Hi) @ (Hi @ top[..., None]))[..., 0]
        h /= np.maximum(np.linalg.norm(h, axis=-1, keepdims=True), TINY)
        H[:, i] = np.where(h.sum(axis=-1, keepdims=True) >= 0, h, -h)
    return H, np.clip(errors, 0.0, 1.0), Mp


def _evaluate(
    problems: Sequence[tuple[np.ndarray, tuple]], perms: np.ndarray, residual: str
) -> list[HCASearchResult]:
    """:func:`evaluate_order` of one row order per problem of one shape, stacked."""
    M = np.stack([m for m, _ in problems])
    H, errors, Mp = _place_rows(M, perms, residual)
    B = np.tril(Mp @ swap(H)[:, None])  # (P, K, d, d)
    signs = np.where(np.diagonal(B, axis1=-2, axis2=-1) < 0, -1.0, 1.0)  # (P, K, d)
    B = signs[..., None] * B
    Mk = signs[..., None] * Mp
    J = B @ H[:, None] @ swap(Mk) @ np.linalg.inv(Mk @ swap(Mk))
    norms = np.maximum(np.sum(J**2, axis=-1), TINY)
    alphas = 1.0 - np.mean(np.diagonal(J, axis1=-2, axis2=-1) ** 2 / norms, axis=-1)  # (P, K)
    unmix = np.linalg.norm(Mk - B @ H[:, None], axis=(-2, -1)) / np.linalg.norm(Mk, axis=(-2, -1))
    out = []
    for i, (_, names) in enumerate(problems):
        out.append(
            HCASearchResult(
                domains=names,
                permutations=tuple(perms[i]),
                signs=tuple(signs[i]),
                aligned=tuple(Mk[i]),
                unmixing=H[i],
                weights=tuple(B[i]),
                J=tuple(J[i]),
                alphas=alphas[i],
                mic=float(np.max(alphas[i])),
                rank1_error=errors[i],
                unmixing_error=unmix[i],
                residual=residual,
            )
        )
    return out


def evaluate_order(
    unmixings: Sequence[np.ndarray] | Mapping[Hashable, np.ndarray],
    permutations: Sequence[Sequence[int]],
    *,
    residual: str = "domain",
) -> HCASearchResult:
    """Evaluate one row order: ``H_hat``, ``B_hat_k``, MIC and the Table 3 diagnostics.

    Parameters
    ----------
    unmixings : sequence of ndarray or mapping
        ICA unmixing matrices ``M_k`` (``d0 x n_benchmarks``, full row rank).
    permutations : sequence of sequence of int
        Per domain, the row of ``M_k`` placed at each causal position.
    residual : {"domain", "shared"}, default="domain"
        Residual definition (see the module docstring).

    Returns
    -------
    HCASearchResult
    """
    if residual not in RESIDUALS:
        raise ValueError(f"unknown residual {residual!r}; expected one of {RESIDUALS}")
    M, names = _as_unmixing_list(unmixings)
    K, d, _ = M.shape
    perms = [np.asarray(p, dtype=int) for p in permutations]
    if len(perms) != K or any(sorted(p.tolist()) != list(range(d)) for p in perms):
        raise ValueError(f"permutations must give one permutation of range({d}) per domain ({K})")
    return _evaluate([(M, names)], np.stack(perms)[None].astype(np.intp), residual)[0]


def _exhaustive_batch(
    problems: Sequence[tuple[np.ndarray, tuple]],
    residual: str,
    progress: Listener | None = None,
) -> list[HCASearchResult]:
    """Exhaustive search of problems of one shape: one tree over all of them."""
    M = np.stack([m for m, _ in problems])
    P, K, d, p = M.shape
    _, s, vt = np.linalg.svd(M.reshape(P, K * d, p), full_matrices=False)
    rank = np.sum(s > RANK_TOL * s[:, :1], axis=1)
    perms = np.zeros((P, K, d), dtype=np.intp)
    counts = np.zeros((P, 3), dtype=np.int64)
    total, done = P * math.factorial(d) ** K, 0
    for q in np.unique(rank):
        members = np.flatnonzero(rank == q)
        basis = vt[members, :q]  # (P_q, q, p)
        tree = BatchTree(M[members] @ swap(basis)[:, None], residual)
        tree.greedy_bounds()
        tree.run(tree.roots(), total, progress, done)
        done += int(tree.n_leaves.sum() + tree.n_pruned.sum())
        report(progress, "search", done, total)  # orders pruned after the last leaf
        perms[members] = tree.best_rows
        counts[members] = np.stack([tree.n_leaves, tree.n_nodes, tree.n_pruned], axis=1)
    results = _evaluate(problems, perms, residual)
    return [
        _with_counts(res, "exhaustive", int(n_leaves), int(n_nodes), True, 0, True, int(pruned))
        for res, (n_leaves, n_nodes, pruned) in zip(results, counts)
    ]


def _with_counts(
    result: HCASearchResult,
    search: str,
    n_evaluated: int,
    n_nodes: int,
    certified: bool,
    width: int,
    enumerated: bool,
    n_pruned: int = 0,
) -> HCASearchResult:
    """Copy of ``result`` with the search bookkeeping filled in."""
    return dataclasses.replace(
        result,
        search=search,
        n_evaluated=n_evaluated,
        n_nodes=n_nodes,
        n_pruned=n_pruned,
        beam_width=width,
        certified=certified,
        enumerated=enumerated,
    )


def all_orders(unmixings: Any, residual: str = "domain") -> tuple[np.ndarray, np.ndarray]:
    """Every row order and its MIC, from the vectorised tree (small problems; for tests)."""
    M, _ = _as_unmixing_list(unmixings)
    tree = SearchTree(M, residual)
    nodes = tree.root()
    for _ in range(tree.d):
        nodes = Nodes.concat([batch.nodes() for batch in tree.children(nodes)])
    return nodes.rows, nodes.lb


def hca_search(
    unmixings: Sequence[np.ndarray] | Mapping[Hashable, np.ndarray],
    *,
    search: str = "exhaustive",
    residual: str = "domain",
    beam_width: int = 32,
    max_nodes: int = 1_000_000,
    progress: Listener | None = None,
) -> HCASearchResult:
    """Search the row orders of the ICA unmixing matrices for the minimal MIC (Algorithm 2).

    Parameters
    ----------
    unmixings : sequence of ndarray or mapping
        ICA unmixing matrices ``M_k`` (``d0 x n_benchmarks``, full row rank), one per
        domain; a mapping gives the domain names.
    search : {"exhaustive", "sequential"}, default="exhaustive"
        ``"exhaustive"``: the best of all ``(d0!)^K`` orders (Algorithm 2). ``"sequential"``:
        beam search over positions, widened until certified optimal (module docstring).
    residual : {"domain", "shared"}, default="domain"
        ``"domain"``: project out the domain's own earlier rows (Algorithm 1);
        ``"shared"``: project out the recovered rows of ``H_hat`` (authors' code).
    beam_width : int, default=32
        Initial beam width of ``"sequential"``; doubled while the result is not certified.
    max_nodes : int, default=1_000_000
        Budget of prefixes evaluated by ``"sequential"``; a level of the search tree is
        enumerated only when it has at most ``max_nodes`` prefixes.
    progress : callable, optional
        ``progress(stage, done, total)`` after every step (:mod:`hca.estimator.progress`).

    Returns
    -------
    HCASearchResult
        The best row order, evaluated by :func:`evaluate_order`.

    Raises
    ------
    ValueError
        ``"exhaustive"`` on more than :data:`MAX_EXHAUSTIVE_ORDERS` row orders (see
        :func:`check_search_size`).

    Warns
    -----
    UncertifiedSearchWarning
        When ``"sequential"`` stops without certifying its result.

    Notes
    -----
    The result is invariant to the order and signs of the rows of every ``M_k``, but to
    their scale only for an exact SCM: pass unit-variance ICA unmixing matrices.
    """
    check_search_options(search, residual, beam_width, max_nodes)
    return _search_problems(
        [_as_unmixing_list(unmixings)], search, residual, beam_width, max_nodes, progress
    )[0]


def hca_search_batch(
    problems: Sequence[Sequence[np.ndarray] | Mapping[Hashable, np.ndarray]],
    *,
    search: str = "exhaustive",
    residual: str = "domain",
    beam_width: int = 32,
    max_nodes: int = 1_000_000,
    progress: Listener | None = None,
) -> list[HCASearchResult]:
    """:func:`hca_search` of many independent problems at once.

    Equal to ``[hca_search(p, search=search, ...) for p in problems]`` (ties broken alike,
    the same warnings). The exhaustive searches of all problems of one shape run as one
    tree, every step one stacked numpy call; sequential searches run one after another.

    Parameters
    ----------
    problems : sequence
        Every entry is the ``unmixings`` argument of one :func:`hca_search`.
    search, residual, beam_width, max_nodes
        As in :func:`hca_search`, the same for every problem.
    progress : callable, optional
        As in :func:`hca_search`.

    Returns
    -------
    list of HCASearchResult
        One per problem, in order.

    Raises
    ------
    ValueError
        As :func:`hca_search`, the message starting with ``problems[i]:`` for a bad matrix.
    """
    check_search_options(search, residual, beam_width, max_nodes)
    parsed = _as_unmixing_lists(list(problems), where="problems")
    return _search_problems(parsed, search, residual, beam_width, max_nodes, progress)


def _search_problems(
    problems: list[tuple[np.ndarray, tuple]],
    search: str,
    residual: str,
    beam_width: int,
    max_nodes: int,
    progress: Listener | None = None,
) -> list[HCASearchResult]:
    """The searches of validated problems: grouped by shape, exhaustive ones batched."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for i, (M, _) in enumerate(problems):
        groups.setdefault(M.shape, []).append(i)
    for K, d, _ in groups:
        check_search_size(search, K, d)  # every group, before any search
    out: list[HCASearchResult | None] = [None] * len(problems)
    for members in groups.values():
        group = [problems[i] for i in members]
        if search == "exhaustive":
            results = _exhaustive_batch(group, residual, progress)
        else:
            results = _sequential_batch(group, residual, int(beam_width), int(max_nodes), progress)
        for i, res in zip(members, results):
            out[i] = res
    return [res for res in out if res is not None]


def _sequential_batch(
    problems: list[tuple[np.ndarray, tuple]],
    residual: str,
    beam_width: int,
    max_nodes: int,
    progress: Listener | None = None,
) -> list[HCASearchResult]:
    """Sequential searches of problems of one shape: the first beam of all problems as one
    tree when possible (:func:`_first_round_batchable`), the rest one by one."""
    K, d = problems[0][0].shape[:2]
    P = len(problems)
    perms = np.zeros((P, K, d), dtype=np.intp)
    info: list[tuple[int, int, bool, int, bool, float]] = [(0, 0, False, 0, False, 0.0)] * P
    probe = SearchTree(problems[0][0], residual)  # the shape's costs and limits
    rest = list(range(P))
    if _first_round_batchable(probe, beam_width, max_nodes):
        rest = _first_rounds(
            problems, residual, beam_width, max_nodes, probe, perms, info, progress
        )
    for i in rest:
        tree = SearchTree(problems[i][0], residual)
        best, certified, width, partial = sequential(tree, beam_width, max_nodes, progress)
        assert best.rows is not None
        perms[i] = best.rows
        info[i] = (int(tree.n_leaves), int(tree.n_nodes), bool(certified), width, partial, best.mic)
    for _, n_nodes, certified, width, partial, mic in info:
        if not certified:
            how = (
                "; levels with more than max_nodes prefixes were "
                "explored from a few starting directions, not enumerated"
                if partial
                else ""
            )
            warnings.warn(
                f"sequential search stopped at beam width {width} after {n_nodes:,} "
                f"prefixes (max_nodes={max_nodes:,}) without certifying that MIC = "
                f"{mic:.4g} is minimal{how}; increase max_nodes or use "
                "search='exhaustive' if it is affordable",
                UncertifiedSearchWarning,
                stacklevel=_outside_module(),
            )
    results = _evaluate(problems, perms, residual)
    return [
        _with_counts(res, "sequential", n_leaves, n_nodes, certified, width, not partial)
        for res, (n_leaves, n_nodes, certified, width, partial, _) in zip(results, info)
    ]


def _first_round_batchable(probe: SearchTree, width: int, max_nodes: int) -> bool:
    """Whether the first beam of :func:`sequential` enumerates every level in one batch of
    at most ``max_nodes`` and :data:`MAX_CHILDREN` children."""
    K, d = probe.K, probe.d
    limit = min(max_nodes, MAX_CHILDREN)
    if d < 2 or d**K > limit:
        return False
    nodes = min(width, d**K)
    for j in range(1, d - 1):
        children = nodes * (d - j) ** K
        if children > limit:
            return False
        nodes = min(width, children)
    return True


def _keep_best(level: Batch, n: int, width: int) -> tuple[Batch, np.ndarray]:
    """The beam of ``width`` of every one of the ``n`` problems of ``level`` (stable) and
    the smallest bound left out (``inf`` if none)."""
    lb = level.lb.reshape(n, -1)
    m = lb.shape[1]
    if m <= width:
        return level, np.full(n, np.inf)
    order = np.argsort(lb, axis=1, kind="stable")
    left = lb[np.arange(n), order[:, width]]
    flat = (order[:, :width] + (np.arange(n) * m)[:, None]).ravel()
    return level.take(flat), left


def _first_rounds(
    problems: list[tuple[np.ndarray, tuple]],
    residual: str,
    width: int,
    max_nodes: int,
    probe: SearchTree,
    perms: np.ndarray,
    info: list[tuple[int, int, bool, int, bool, float]],
    progress: Listener | None = None,
) -> list[int]:
    """The first beam of :func:`sequential` for every problem as one tree per rank; fill
    ``perms`` and ``info`` of the problems it settles and return the others."""
    K, d = probe.K, probe.d
    M = np.stack([m for m, _ in problems])
    P, _, _, p = M.shape
    _, s, vt = np.linalg.svd(M.reshape(P, K * d, p), full_matrices=False)
    rank = np.sum(s > RANK_TOL * s[:, :1], axis=1)
    next_cost = round_cost(probe, 2 * width, max_nodes)
    chunk = max(1, MAX_CHILDREN // d**K)
    rest = []
    for q in np.unique(rank):
        members = np.flatnonzero(rank == q)
        for c0 in range(0, len(members), chunk):
            idx = members[c0 : c0 + chunk]
            n = len(idx)
            tree = BatchTree(M[idx] @ swap(vt[idx, :q])[:, None], residual)
            nodes, discarded = _keep_best(tree.expand(tree.roots(), row_choices(K, d)), n, width)
            for j in range(1, d - 1):
                report(progress, f"search (beam {width}), level", j, d)  # as sequential does
                nodes, left = _keep_best(tree.expand(nodes, row_choices(K, d - j)), n, width)
                discarded = np.minimum(discarded, left)
            report(progress, f"search (beam {width}), level", d - 1, d)
            leaves = tree.expand(nodes, row_choices(K, 1))
            report(progress, f"search (beam {width}), level", d, d)
            lb = leaves.lb.reshape(n, -1)
            best = np.argmin(lb, axis=1)  # the first smallest, as Best
            mic = lb[np.arange(n), best]
            rows = leaves.rows.reshape(n, lb.shape[1], K, d)[np.arange(n), best]
            for a, i in enumerate(idx.tolist()):
                certified = bool(mic[a] <= discarded[a])
                n_nodes = int(tree.n_nodes[a])
                if certified or n_nodes + next_cost > max_nodes:
                    perms[i] = rows[a]
                    info[i] = (lb.shape[1], n_nodes, certified, width, False, float(mic[a]))
                else:
                    rest.append(i)
    return sorted(rest)


def _outside_module() -> int:
    """``stacklevel`` of the first frame outside this module, seen from the caller."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    return level
