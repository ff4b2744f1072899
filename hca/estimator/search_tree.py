"""The search tree of row-order prefixes behind :mod:`hca.estimator.search` (Algorithm 2).

A prefix (the rows placed at the first ``j`` causal positions of every domain) carries a lower
bound on the MIC of every completion. :class:`SearchTree` evaluates the children of prefixes of
one problem in stacked linear algebra, :func:`sequential` runs the beam searches on it, and
:class:`BatchTree` is the same tree over many problems of one shape at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, cast

import numpy as np

from hca.estimator.progress import Listener, report

__all__ = [
    "MAX_CHILDREN",
    "PRUNE_MARGIN",
    "RANK_TOL",
    "TINY",
    "Batch",
    "BatchTree",
    "Best",
    "Children",
    "Nodes",
    "SearchTree",
    "round_cost",
    "row_choices",
    "sequential",
    "swap",
]

MAX_CHILDREN = 1 << 15  # nodes expanded per vectorised batch (bounds memory)
_MAX_ELEMENTS = 1 << 21  # floats of one (parents, starts, K, d0, d0) batch of ``propose``
_MAX_STARTS = 64  # starting directions per parent on levels too large to enumerate
_MAX_PROPOSALS = 512  # children per parent proposed on such levels
_MAX_ALTERNATIONS = 10  # alternating steps of one start
TINY = 1e-300
RANK_TOL = 1e-10
# The exhaustive search skips a prefix whose bound exceeds the MIC of a known complete order by
# more than this: far above the rounding of a bound (a child's bound can fall below its parent's
# by a few ulps), far below any difference between the MICs of two orders that matters.
PRUNE_MARGIN = 1e-9
GREEDY_WIDTH = 8  # beam width of the search for the order that sets the pruning threshold
_P = TypeVar("_P", bound="_Prefixes")


def swap(A: np.ndarray) -> np.ndarray:
    """``A`` with its last two axes swapped (a stack of transposes)."""
    return np.swapaxes(A, -1, -2)


# =========================================================================== search tree
class _Prefixes:
    """Arrays with one entry per prefix (the fields of a dataclass, ``rows`` and ``lb``
    among them), taken and concatenated field by field."""

    __dataclass_fields__: ClassVar[dict[str, Any]]
    rows: np.ndarray
    lb: np.ndarray

    def __len__(self) -> int:
        return len(self.lb)

    @property
    def depth(self) -> int:
        return int(self.rows.shape[2])

    def take(self: _P, idx: Any) -> _P:
        names = self.__dataclass_fields__  # the fields, in order
        return cast(Any, type(self))(*(getattr(self, n)[idx] for n in names))

    @classmethod
    def concat(cls: type[_P], parts: Sequence[_P]) -> _P:
        names = cls.__dataclass_fields__
        return cast(Any, cls)(*(np.concatenate([getattr(p, n) for p in parts]) for n in names))


@dataclass
class Nodes(_Prefixes):
    """A batch of prefixes (rows chosen at positions ``1..depth`` in every domain)."""

    rows: np.ndarray  # (N, K, depth) row of M_k placed at each position
    mask: np.ndarray  # (N, K) bit mask of the rows already placed
    H: np.ndarray  # (N, depth, q) orthonormal h_1..h_depth (reduced coordinates)
    csum: np.ndarray  # (N, K) sum over positions of c_{k,i}
    lb: np.ndarray  # (N,) lower bound on the MIC of every completion


@dataclass
class Children:
    """Children of a batch of parents, kept light until :meth:`nodes` materialises them."""

    parents: Nodes
    parent: np.ndarray  # (n,) index into parents
    rows: np.ndarray  # (n, K) row placed at the new position
    h: np.ndarray  # (n, q) new row of H_hat
    csum: np.ndarray  # (n, K)
    lb: np.ndarray  # (n,)

    def __len__(self) -> int:
        return len(self.lb)

    def nodes(self, idx=slice(None)) -> Nodes:
        """Materialise the selected children as prefixes."""
        p, rows = self.parent[idx], self.rows[idx]
        return Nodes(
            np.concatenate([self.parents.rows[p], rows[:, :, None]], axis=2),
            self.parents.mask[p] | (1 << rows),
            np.concatenate([self.parents.H[p], self.h[idx][:, None, :]], axis=1),
            self.csum[idx],
            self.lb[idx],
        )

    def full_rows(self, i: int) -> np.ndarray:
        """Complete ``(K, depth)`` row choices of child ``i``."""
        return np.concatenate([self.parents.rows[self.parent[i]], self.rows[i][:, None]], axis=1)


def _top_direction(R: np.ndarray) -> np.ndarray:
    """Top right singular vector of every ``K x q`` matrix in ``R`` (batched)."""
    n, K, q = R.shape
    if K <= q:
        _, V = np.linalg.eigh(R @ R.transpose(0, 2, 1))
        h = (V[:, None, :, -1] @ R)[:, 0, :]
    else:
        _, V = np.linalg.eigh(R.transpose(0, 2, 1) @ R)
        h = V[:, :, -1]
    return h / np.maximum(np.linalg.norm(h, axis=1, keepdims=True), TINY)


def _gram_schmidt(h: np.ndarray, Hp: np.ndarray) -> np.ndarray:
    """The directions ``h`` (n, q) orthogonalised against the rows of ``Hp`` (n, j, q)."""
    h = h - np.sum(np.sum(Hp * h[:, None, :], axis=2)[:, :, None] * Hp, axis=1)
    h /= np.maximum(np.linalg.norm(h, axis=1, keepdims=True), TINY)
    return h


def _free_table(d: int) -> np.ndarray:
    """``free[mask]`` lists the rows not in ``mask`` first (padded with 0)."""
    table = np.zeros((1 << d, d), dtype=np.intp)
    for mask in range(1 << d):
        rows = [r for r in range(d) if not mask >> r & 1]
        table[mask, : len(rows)] = rows
    return table


def row_choices(K: int, n_free: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Choices ``start..stop-1`` of one free row per domain, in the order of
    ``itertools.product(range(n_free), repeat=K)`` (generated chunk by chunk)."""
    total = n_free**K
    stop = total if stop is None else min(stop, total)
    if total >= 1 << 62:
        raise OverflowError(f"{n_free}^{K} children cannot be enumerated")
    powers = np.array([n_free**e for e in range(K - 1, -1, -1)], dtype=np.int64)
    idx = np.arange(start, stop, dtype=np.int64)
    return np.asarray((idx[:, None] // powers) % n_free, dtype=np.intp)


class SearchTree:
    """Vectorised evaluation of the tree of row-order prefixes.

    Everything is computed in an orthonormal basis of the span of all rows of all
    ``M_k`` (which preserves every inner product and projection).
    """

    def __init__(self, M: np.ndarray, residual: str):
        self.K, self.d, p = M.shape
        self.residual = residual
        _, s, vt = np.linalg.svd(M.reshape(-1, p), full_matrices=False)
        basis = vt[: int(np.sum(s > RANK_TOL * s[0]))]
        self.M = M @ basis.T  # (K, d, q)
        self.Q = np.stack([m.T @ np.linalg.inv(m @ m.T) for m in self.M])  # (K, q, d)
        self.free = _free_table(self.d)
        # residuals of every row after every set of rows of its domain ("domain" only)
        self.res = self._domain_residuals() if residual == "domain" else np.zeros(0)
        self.n_leaves = 0  # complete row orders evaluated
        self.n_nodes = 0  # prefixes (tree nodes) evaluated
        self.skipped = np.inf  # smallest bound of a parent skipped by ``children``

    def _domain_residuals(self) -> np.ndarray:
        """``res[k, mask, r]``: row ``r`` of ``M_k`` minus its projection on rows ``mask``."""
        K, d, q = self.M.shape
        res = np.zeros((K, 1 << d, d, q))
        for k in range(K):
            for mask in range(1 << d):
                placed = [r for r in range(d) if mask >> r & 1]
                basis = np.linalg.qr(self.M[k, placed].T)[0] if placed else np.zeros((q, 0))
                res[k, mask] = self.M[k] - (self.M[k] @ basis) @ basis.T
        return res

    def n_combos(self, n_free: int) -> int:
        return n_free**self.K

    def root(self) -> Nodes:
        K, q = self.K, self.M.shape[2]
        return Nodes(
            np.zeros((1, K, 0), dtype=np.intp),
            np.zeros((1, K), dtype=np.intp),
            np.zeros((1, 0, q)),
            np.zeros((1, K)),
            np.zeros(1),
        )

    def _residual_stack(self, nodes: Nodes, parent: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Residuals ``(n, K, q)`` of the candidate rows ``rows`` (n, K) at the next position
        of the prefixes ``nodes[parent]``."""
        kk = np.arange(self.K)
        if self.residual == "domain":
            return self.res[kk, nodes.mask[parent], rows]
        coef = self.M[None] @ nodes.H.transpose(0, 2, 1)[:, None]  # (N, K, d, depth)
        full = self.M[None] - coef @ nodes.H[:, None]  # (N, K, d, q)
        return full[parent[:, None], kk, rows]

    def _orthogonalise(self, nodes: Nodes, parent: np.ndarray, h: np.ndarray) -> np.ndarray:
        """Gram-Schmidt of the directions ``h`` against ``h_1..h_j`` of their prefixes."""
        if nodes.depth and self.residual == "domain":
            return _gram_schmidt(h, nodes.H[parent])
        return h

    def _projected(self, nodes: Nodes) -> np.ndarray:
        """``M_k P_{V_j} Q_k`` (N, K, d, d) for every prefix (``V_j = span(h_1..h_j)``)."""
        P = nodes.H.transpose(0, 2, 1) @ nodes.H  # (N, q, q)
        return (self.M[None] @ P[:, None]) @ self.Q[None]

    def expand(self, nodes: Nodes, combos: np.ndarray) -> Children:
        """Children of ``nodes`` for the choices ``combos`` of free rows (for every parent)."""
        N, B, K = len(nodes), len(combos), self.K
        rows = self.free[nodes.mask][:, np.arange(K), combos]  # (N, B, K)
        return self.expand_rows(nodes, np.repeat(np.arange(N), B), rows.reshape(N * B, K))

    def expand_rows(self, nodes: Nodes, parent: np.ndarray, rows: np.ndarray) -> Children:
        """Children ``(nodes[parent[i]], rows[i])`` (``rows[i, k]``: the row of ``M_k``)."""
        K, j = self.K, nodes.depth
        kk = np.arange(K)
        h = _top_direction(self._residual_stack(nodes, parent, rows))
        h = self._orthogonalise(nodes, parent, h)
        # Row j+1 of J_k: m P_{V_{j+1}} Q_k = m P_{V_j} Q_k + (m . h) h Q_k, as h is orthogonal
        # to V_j = span(h_1..h_j).
        old = self._projected(nodes)[parent[:, None], kk, rows]  # (n, K, d)
        q = h.shape[1]
        mh = np.take_along_axis(
            (h @ self.M.reshape(K * self.d, q).T).reshape(-1, K, self.d), rows[:, :, None], axis=2
        )  # (n, K, 1)
        hQ = (h @ self.Q.transpose(1, 0, 2).reshape(q, K * self.d)).reshape(-1, K, self.d)
        w = old + mh * hQ
        diag = np.take_along_axis(w, rows[:, :, None], axis=2)[:, :, 0]
        csum = nodes.csum[parent] + diag**2 / np.maximum(np.sum(w**2, axis=2), TINY)
        return Children(nodes, parent, rows, h, csum, np.max(j + 1 - csum, axis=1) / self.d)

    def children(
        self, nodes: Nodes, threshold: Callable[[], float] | None = None
    ) -> Iterator[Children]:
        """Yield all children of ``nodes`` in batches, skipping parents whose bound is
        ``>= threshold()`` (the smallest skipped bound kept in ``self.skipped``)."""
        n_free = self.d - nodes.depth
        n_combos = self.n_combos(n_free)
        per_parent = max(1, MAX_CHILDREN // n_combos)
        step = min(n_combos, MAX_CHILDREN)
        for start in range(0, len(nodes), per_parent):
            parents = nodes.take(slice(start, start + per_parent))
            if threshold is not None:
                drop = parents.lb >= threshold()
                if drop.any():
                    self.skipped = min(self.skipped, float(parents.lb[drop].min()))
                    parents = parents.take(np.flatnonzero(~drop))
            if not len(parents):
                continue
            for c0 in range(0, n_combos, step):
                combos = row_choices(self.K, n_free, c0, c0 + step)
                self.n_nodes += len(parents) * len(combos)
                yield self.expand(parents, combos)

    # ------------------------------------------------------------ levels too large to enumerate
    def n_proposals(self, depth: int, n_parents: int, max_nodes: int) -> int:
        """Children per parent evaluated by :meth:`propose` (at most ``max_nodes`` in all)."""
        cap = min(_MAX_PROPOSALS, self.n_combos(self.d - depth))
        return max(1, min(cap, max_nodes // max(n_parents, 1)))

    def _start_pairs(self, n_free: int, n_starts: int) -> tuple[np.ndarray, np.ndarray]:
        """(domain, free-row index) of every start: all rows of domains spread evenly."""
        n_domains = max(1, min(self.K, -(-n_starts // n_free)))
        ks = np.unique(np.round(np.linspace(0, self.K - 1, n_domains)).astype(np.intp))
        pairs = [(k, f) for k in ks for f in range(n_free)][:n_starts]
        return np.array([k for k, _ in pairs]), np.array([f for _, f in pairs])

    def _row_scores(self, old: np.ndarray, h: np.ndarray) -> np.ndarray:
        """``c_{k,r}`` (n, K, d) of placing row ``r`` of ``M_k`` next, for directions ``h``
        and ``old = M_k P_{V_j} Q_k`` of their prefixes (as in :meth:`expand_rows`)."""
        n, q = h.shape
        K, d = self.K, self.d
        mh = (h @ self.M.reshape(K * d, q).T).reshape(n, K, d)  # m_{k,r} . h
        hQ = (h @ self.Q.transpose(1, 0, 2).reshape(q, K * d)).reshape(n, K, d)  # h Q_k
        cross = (old @ hQ[..., None])[..., 0]  # old_{k,r} . h Q_k
        norm2 = np.sum(old**2, axis=3) + 2 * mh * cross + mh**2 * np.sum(hQ**2, axis=2)[..., None]
        diag = np.diagonal(old, axis1=2, axis2=3) + mh * hQ
        return diag**2 / np.maximum(norm2, TINY)

    def _align(
        self, nodes: Nodes, parent: np.ndarray, h: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Alternate from the directions ``h`` of prefixes ``nodes[parent]``: every domain
        takes the free row that fits ``h`` best, then ``h`` is recomputed from the chosen rows,
        until a fixed point; the distinct ``(parent, rows)`` reached, in order."""
        old = self._projected(nodes)
        placed = (nodes.mask[:, :, None] >> np.arange(self.d)) & 1  # (N, K, d)
        penalty = np.where(placed, -np.inf, 0.0)
        rows = np.argmax(self._row_scores(old[parent], h) + penalty[parent], axis=2)
        moving = np.ones(len(parent), dtype=bool)
        for _ in range(_MAX_ALTERNATIONS):
            keep = _first_seen(parent, rows)
            parent, rows, moving = parent[keep], rows[keep], moving[keep]
            if not moving.any():
                break
            idx = np.flatnonzero(moving)
            p = parent[idx]
            h = _top_direction(self._residual_stack(nodes, p, rows[idx]))
            h = self._orthogonalise(nodes, p, h)
            new = np.argmax(self._row_scores(old[p], h) + penalty[p], axis=2)
            moving[idx] = np.any(new != rows[idx], axis=1)
            rows[idx] = new
        return parent, rows

    def propose(self, nodes: Nodes, n_children: int) -> Iterator[Children]:
        """Yield, in batches, up to ``n_children`` promising children of every prefix (for
        levels too large to enumerate): the fixed points of :meth:`_align` from starting
        directions of up to :data:`_MAX_STARTS` domains, then their one-domain neighbours."""
        n_free, K = self.d - nodes.depth, self.K
        ks, fs = self._start_pairs(n_free, min(_MAX_STARTS, K * n_free, n_children))
        per_batch = max(1, _MAX_ELEMENTS // (len(ks) * K * self.d**2))
        for start in range(0, len(nodes), per_batch):
            parents = nodes.take(slice(start, start + per_batch))
            N = len(parents)
            free = self.free[parents.mask]  # (N, K, d)
            start_rows = free[:, ks, fs].ravel()  # (N * S,)
            parent = np.repeat(np.arange(N), len(ks))
            kk = np.tile(ks, N)
            if self.residual == "domain":
                h = self.res[kk, parents.mask[parent, kk], start_rows]
            else:
                m = self.M[kk, start_rows]
                Hp = parents.H[parent]
                h = m - np.einsum("nj,njq->nq", np.einsum("njq,nq->nj", Hp, m), Hp)
            h /= np.maximum(np.linalg.norm(h, axis=1, keepdims=True), TINY)
            parent, rows = self._align(parents, parent, self._orthogonalise(parents, parent, h))
            parent, rows = _with_neighbours(parent, rows, free[:, :, :n_free], n_children)
            self.n_nodes += len(parent)
            yield self.expand_rows(parents, parent, rows)


def _first_seen(parent: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Indices of the distinct ``(parent, rows)`` pairs, in order of first appearance."""
    bits = max(1, int(rows.max(initial=0)).bit_length())
    per_key = 62 // bits
    keys = [parent.astype(np.int64)]
    for c0 in range(0, rows.shape[1], per_key):
        chunk = rows[:, c0 : c0 + per_key].astype(np.int64)
        keys.append(np.sum(chunk << (bits * np.arange(chunk.shape[1], dtype=np.int64)), axis=1))
    order = np.lexsort(keys[::-1])  # stable: equal pairs keep their original order
    sorted_keys = np.stack(keys)[:, order]
    new_group = np.ones(len(order), dtype=bool)
    new_group[1:] = np.any(sorted_keys[:, 1:] != sorted_keys[:, :-1], axis=0)
    return np.sort(order[new_group])


def _with_neighbours(
    parent: np.ndarray, rows: np.ndarray, free: np.ndarray, limit: int
) -> tuple[np.ndarray, np.ndarray]:
    """Candidate children ``(parent, rows)``: the distinct choices ``rows``, then each changed
    in one domain to another free row; at most ``limit`` per parent, grouped by parent."""
    K, n_free = free.shape[1], free.shape[2]
    order = np.argsort(parent, kind="stable")
    parent, rows = parent[order], rows[order]
    if n_free > 1:
        # neighbours only of as many fixed points per parent as ``limit`` can use
        rank = np.arange(len(parent)) - np.searchsorted(parent, parent)
        base = rank < -(-limit // (K * (n_free - 1)))
        kk, ff = (a.ravel() for a in np.indices((K, n_free)))
        n_base = int(base.sum())
        m_parent = np.repeat(parent[base], len(kk))
        moves = np.repeat(rows[base], len(kk), axis=0)
        moves[np.arange(len(moves)), np.tile(kk, n_base)] = free[
            m_parent, np.tile(kk, n_base), np.tile(ff, n_base)
        ]
        parent = np.concatenate([parent, m_parent])
        rows = np.concatenate([rows, moves])
        keep = _first_seen(parent, rows)
        parent, rows = parent[keep], rows[keep]
        order = np.argsort(parent, kind="stable")
        parent, rows = parent[order], rows[order]
    rank = np.arange(len(parent)) - np.searchsorted(parent, parent)
    keep = rank < limit
    return parent[keep], rows[keep]


class Best:
    """Incumbent of a search."""

    def __init__(self) -> None:
        self.mic: float = np.inf
        self.rows: np.ndarray | None = None

    def update(self, leaves: Children) -> None:
        i = int(np.argmin(leaves.lb))
        if leaves.lb[i] < self.mic:
            self.mic, self.rows = float(leaves.lb[i]), leaves.full_rows(i)


def _smallest(lb: np.ndarray, width: int) -> tuple[np.ndarray, float]:
    """Indices of the ``width`` smallest bounds (stable) and the smallest bound left out."""
    if len(lb) <= width:
        return np.arange(len(lb)), np.inf
    order = np.argsort(lb, kind="stable")
    return order[:width], float(lb[order[width]])


def _beam_level(tree: SearchTree, nodes: Nodes, width: int, batches=None) -> tuple[Nodes, float]:
    """Keep the ``width`` children of ``nodes`` with the smallest bounds."""
    kept: Nodes | None = None
    discarded = np.inf

    def threshold() -> float:
        return float(kept.lb[-1]) if kept is not None and len(kept) >= width else np.inf

    tree.skipped = np.inf
    for batch in batches if batches is not None else tree.children(nodes, threshold):
        idx, left = _smallest(batch.lb, width)
        pool = batch.nodes(idx) if kept is None else Nodes.concat([kept, batch.nodes(idx)])
        keep, dropped = _smallest(pool.lb, width)
        kept = pool.take(keep)
        discarded = min(discarded, left, dropped)
    if kept is None:  # pragma: no cover - every level has children
        raise RuntimeError("a beam level without children")
    return kept, min(discarded, tree.skipped)


class _FirstLevel:
    """The children of the root, computed once and shared by every beam of a search; only the
    ``keep`` best are stored. A level of more than ``max_nodes`` children is not enumerated
    (:meth:`SearchTree.propose` supplies a few), so the search cannot be certified."""

    def __init__(self, tree: SearchTree, keep: int, max_nodes: int) -> None:
        root = tree.root()
        self.enumerated = tree.n_combos(tree.d) <= max_nodes
        if self.enumerated:
            batches = tree.children(root)
            self.unexplored = np.inf
        else:
            batches = tree.propose(root, tree.n_proposals(0, 1, max_nodes))
            self.unexplored = float(root.lb[0])
        self.nodes: Nodes | None = None
        self.gen = np.zeros(0, dtype=np.int64)
        self.total = 0
        for batch in batches:
            gen = np.concatenate([self.gen, self.total + np.arange(len(batch))])
            self.total += len(batch)
            pool = (
                batch.nodes() if self.nodes is None else Nodes.concat([self.nodes, batch.nodes()])
            )
            order = np.lexsort((gen, pool.lb))
            self.nodes, self.gen = pool.take(order[:keep]), gen[order[:keep]]

    def take(self, width: int) -> tuple[Nodes, float]:
        """The first level of a beam of ``width`` (as :func:`_beam_level` would keep it) and
        the smallest bound left out."""
        if self.nodes is None:  # pragma: no cover - the root has children
            raise RuntimeError("the first level has no nodes")
        if width >= self.total:
            return self.nodes.take(np.argsort(self.gen, kind="stable")), self.unexplored
        if width >= len(self.nodes):
            raise RuntimeError("beam wider than the stored first level")  # pragma: no cover
        return self.nodes.take(slice(0, width)), min(float(self.nodes.lb[width]), self.unexplored)


def _beam(
    tree: SearchTree,
    width: int,
    first: _FirstLevel | None,
    max_nodes: int,
    progress: Listener | None = None,
) -> tuple[Best, float, bool, bool]:
    """One beam search: the best leaf, the smallest bound of a discarded prefix, whether
    some level was proposed instead of enumerated, and whether some level had more
    candidates than ``width``."""
    if first is None:  # one component: the children of the root are the complete orders
        nodes, discarded, partial, full = tree.root(), np.inf, False, False
    else:
        (nodes, discarded), partial = first.take(width), not first.enumerated
        full = first.total > width
    for j in range(1, tree.d - 1):
        report(progress, f"search (beam {width}), level", j, tree.d)
        if len(nodes) * tree.n_combos(tree.d - j) <= max_nodes:
            nodes, dropped = _beam_level(tree, nodes, width)
        else:
            partial = True
            unexplored = float(nodes.lb.min())  # children never proposed: bound >= parent's
            batches = tree.propose(nodes, tree.n_proposals(j, len(nodes), max_nodes))
            nodes, dropped = _beam_level(tree, nodes, width, batches)
            dropped = min(dropped, unexplored)
        full = full or dropped < np.inf and len(nodes) == width
        discarded = min(discarded, dropped)
    report(progress, f"search (beam {width}), level", tree.d - 1, tree.d)
    best = Best()
    for batch in tree.children(nodes):
        tree.n_leaves += len(batch)
        best.update(batch)
    report(progress, f"search (beam {width}), level", tree.d, tree.d)
    return best, discarded, partial, full


def _level_size(tree: SearchTree, depth: int, parents: int, max_nodes: int) -> int:
    """Nodes evaluated at ``depth`` (0 = children of the root) by a beam."""
    full = parents * tree.n_combos(tree.d - depth)
    if full <= max_nodes or depth == tree.d - 1:
        return full
    return parents * tree.n_proposals(depth, parents, max_nodes)


def round_cost(tree: SearchTree, width: int, max_nodes: int) -> int:
    """Upper bound on the nodes evaluated by one beam of ``width`` after the first level."""
    total, parents = 0, min(_level_size(tree, 0, 1, max_nodes), width)
    for j in range(1, tree.d):
        level = _level_size(tree, j, parents, max_nodes)
        total += level
        parents = min(level, width)
    return total


def _widest_beam(tree: SearchTree, width: int, max_nodes: int) -> int:
    """Upper bound on the beam widths :func:`sequential` can reach within ``max_nodes``."""
    first = _level_size(tree, 0, 1, max_nodes)  # at most this many nodes on the first level
    spent = first if tree.n_combos(tree.d) <= max_nodes else 1  # and at least this many
    while width < first and spent + round_cost(tree, 2 * width, max_nodes) <= max_nodes:
        width *= 2
    return width


def sequential(
    tree: SearchTree, width: int, max_nodes: int, progress: Listener | None = None
) -> tuple[Best, bool, int, bool]:
    """Beam searches of doubling width until the result is certified, the budget is spent or
    a wider beam would find the same: the best order, whether it is certified, the last
    width and whether some level was proposed instead of enumerated."""
    first = None
    if tree.d > 1:
        first = _FirstLevel(tree, _widest_beam(tree, width, max_nodes) + 1, max_nodes)
    while True:
        best, discarded, partial, full = _beam(tree, width, first, max_nodes, progress)
        certified = best.mic <= discarded
        next_cost = round_cost(tree, 2 * width, max_nodes)
        if certified or tree.n_nodes + next_cost > max_nodes or (partial and not full):
            return best, certified, width, partial
        width *= 2


# =========================================================================== many problems
@dataclass
class Batch(_Prefixes):
    """Prefixes of the search trees of many problems (sorted by problem)."""

    prob: np.ndarray  # (N,) problem of every prefix
    rows: np.ndarray  # (N, K, depth)
    mask: np.ndarray  # (N, K)
    H: np.ndarray  # (N, depth, q)
    csum: np.ndarray  # (N, K)
    lb: np.ndarray  # (N,)


def _smallest_per_problem(prob: np.ndarray, lb: np.ndarray, width: int) -> np.ndarray:
    """Indices of the ``width`` smallest ``lb`` (stable) of every problem of sorted ``prob``."""
    order = np.lexsort((lb, prob))  # stable: by problem, then bound, then position
    p = prob[order]
    starts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
    rank = np.arange(len(p)) - np.repeat(starts, np.diff(np.r_[starts, len(p)]))
    return order[rank < width]


def _segments(prob: np.ndarray) -> Iterator[tuple[int, int, int]]:
    """``(problem, start, stop)`` of every run of equal values of the sorted ``prob``."""
    starts = np.flatnonzero(np.r_[True, prob[1:] != prob[:-1]])
    stops = np.r_[starts[1:], len(prob)]
    for lo, hi in zip(starts.tolist(), stops.tolist()):
        yield int(prob[lo]), lo, hi


class BatchTree:
    """The exhaustive search of many problems of one shape at once.

    The tree of :class:`SearchTree` with a problem index on every prefix: every step is one
    stacked numpy call over the prefixes of all problems (each computed from its own slices,
    so that a problem's result does not depend on the other problems of its batch), children
    in the order of ``itertools.product`` so that ties are broken alike.

    :meth:`run` is a branch and bound: after :meth:`greedy_bounds` has found one complete
    order per problem, a prefix whose bound exceeds that order's MIC (by more than
    :data:`PRUNE_MARGIN`) is not expanded. The bound of a prefix never exceeds those of its
    completions, so every completion with the smallest MIC (the first of which is kept) is
    still visited and the result is that of visiting every order; ``n_leaves + n_pruned`` is
    ``(d0!)^K``. The threshold is fixed before the traversal, so what is pruned does not
    depend on the other problems of the batch.
    """

    def __init__(self, M: np.ndarray, residual: str):
        self.P, self.K, self.d, self.q = M.shape  # M in reduced coordinates (P, K, d, q)
        self.residual = residual
        self.M = M
        self.Q = swap(M) @ np.linalg.inv(M @ swap(M))  # (P, K, q, d)
        # every problem's M_k and Q_k side by side, for one product per problem
        self.M_rows = M.reshape(self.P, self.K * self.d, self.q)  # (P, K d, q)
        self.Q_cols = self.Q.transpose(0, 2, 1, 3).reshape(self.P, self.q, self.K * self.d)
        self.free = _free_table(self.d)
        # residuals of every row after every set of rows of its domain ("domain" only)
        self.res = self._domain_residuals() if residual == "domain" else np.zeros(0)
        self.n_leaves = np.zeros(self.P, dtype=np.int64)
        self.n_nodes = np.zeros(self.P, dtype=np.int64)
        self.n_pruned = np.zeros(self.P, dtype=np.int64)
        self.prune_above = np.full(self.P, np.inf)  # skip prefixes bounded above this
        self.best_mic = np.full(self.P, np.inf)
        self.best_rows = np.zeros((self.P, self.K, self.d), dtype=np.intp)

    def _domain_residuals(self) -> np.ndarray:
        """``res[i, k, mask, r]``: row ``r`` of ``M_k`` of problem ``i`` minus its projection
        on the rows of ``mask``."""
        P, K, d, q = self.M.shape
        res = np.zeros((P, K, 1 << d, d, q))
        for mask in range(1 << d):
            placed = [r for r in range(d) if mask >> r & 1]
            if not placed:
                res[:, :, mask] = self.M
                continue
            basis = np.linalg.qr(swap(self.M[:, :, placed]))[0]  # (P, K, q, n_placed)
            res[:, :, mask] = self.M - (self.M @ basis) @ swap(basis)
        return res

    def roots(self) -> Batch:
        P, K = self.P, self.K
        return Batch(
            np.arange(P),
            np.zeros((P, K, 0), dtype=np.intp),
            np.zeros((P, K), dtype=np.intp),
            np.zeros((P, 0, self.q)),
            np.zeros((P, K)),
            np.zeros(P),
        )

    def n_combos(self, n_free: int) -> int:
        return int(n_free**self.K)

    def expand(self, nodes: Batch, combos: np.ndarray) -> Batch:
        """Children of ``nodes`` for the choices ``combos`` of free rows (as
        :meth:`SearchTree.expand`); one matrix product per problem with its ``M_k``, ``Q_k``."""
        N, B, K, d, q, depth = len(nodes), len(combos), self.K, self.d, self.q, nodes.depth
        kk = np.arange(K)
        parent = np.repeat(np.arange(N), B)
        rows = self.free[nodes.mask][:, kk, combos].reshape(N * B, K)
        prob = nodes.prob[parent]
        n = len(parent)
        # per parent: m_{k,r} . h_j (N, K, d, depth) and h_j Q_k (N, depth, K, d)
        MH = np.empty((N, K, d, depth))
        HQ = np.empty((N, depth, K, d))
        if depth:
            for p, lo, hi in _segments(nodes.prob):
                Hs = nodes.H[lo:hi].reshape(-1, q)  # (n_p depth, q)
                MH[lo:hi] = (
                    (self.M_rows[p] @ Hs.T).reshape(K, d, hi - lo, depth).transpose(2, 0, 1, 3)
                )
                HQ[lo:hi] = (Hs @ self.Q_cols[p]).reshape(hi - lo, depth, K, d)
        mHc = MH[parent[:, None], kk, rows]  # (n, K, depth): m . h_j of the placed rows
        if self.residual == "domain":
            h = self._domain_directions(nodes, parent, prob, rows)
        else:
            m = self.M[prob[:, None], kk, rows]  # (n, K, q)
            R = m - np.sum(mHc[:, :, :, None] * nodes.H[parent][:, None], axis=2)
            h = _top_direction(R)
        # Row j+1 of J_k: m P_{V_j} Q_k + (m . h) h Q_k (h is orthogonal to V_j), where
        # m P_{V_j} Q_k = sum_j (m . h_j) h_j Q_k.
        old = np.sum(mHc.transpose(0, 2, 1)[:, :, :, None] * HQ[parent], axis=1)  # (n, K, d)
        mh = np.empty((n, K * d))
        hQ = np.empty((n, K * d))
        for p, lo, hi in _segments(prob):
            mh[lo:hi] = h[lo:hi] @ self.M_rows[p].T
            hQ[lo:hi] = h[lo:hi] @ self.Q_cols[p]
        mh_r = np.take_along_axis(mh.reshape(n, K, d), rows[:, :, None], axis=2)  # (n, K, 1)
        w = old + mh_r * hQ.reshape(n, K, d)
        diag = np.take_along_axis(w, rows[:, :, None], axis=2)[:, :, 0]
        csum = nodes.csum[parent] + diag**2 / np.maximum(np.sum(w**2, axis=2), TINY)
        lb = np.max(depth + 1 - csum, axis=1) / d
        np.add.at(self.n_nodes, prob, 1)
        return Batch(
            prob,
            np.concatenate([nodes.rows[parent], rows[:, :, None]], axis=2),
            nodes.mask[parent] | (1 << rows),
            np.concatenate([nodes.H[parent], h[:, None, :]], axis=1),
            csum,
            lb,
        )

    def _domain_directions(
        self, nodes: Batch, parent: np.ndarray, prob: np.ndarray, rows: np.ndarray
    ) -> np.ndarray:
        """``h`` of every child with ``residual="domain"``. On the last level a residual
        depends only on the problem and the last row of every domain, so the top directions
        are computed once per distinct choice and shared."""
        K, d = self.K, self.d
        kk = np.arange(K)
        masks = nodes.mask[parent]
        last = nodes.depth == d - 1
        if last and (self.P * d**K) < (1 << 62):
            key = prob.astype(np.int64)
            for k in range(K):
                key = key * d + rows[:, k]
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            R = self.res[prob[first, None], kk, masks[first], rows[first]]
            h = _top_direction(R)[inverse.ravel()]
        else:
            h = _top_direction(self.res[prob[:, None], kk, masks, rows])
        return _gram_schmidt(h, nodes.H[parent]) if nodes.depth else h

    def children(self, nodes: Batch) -> Iterator[Batch]:
        """All children of the prefixes ``nodes`` not pruned, in batches."""
        n_combos = self.n_combos(self.d - nodes.depth)
        per_parent = max(1, MAX_CHILDREN // n_combos)
        step = min(n_combos, MAX_CHILDREN)
        below = math.factorial(self.d - nodes.depth) ** self.K  # complete orders per prefix
        for start in range(0, len(nodes), per_parent):
            parents = nodes.take(slice(start, start + per_parent))
            pruned = parents.lb > self.prune_above[parents.prob] + PRUNE_MARGIN
            if pruned.any():
                np.add.at(self.n_pruned, parents.prob[pruned], below)
                parents = parents.take(np.flatnonzero(~pruned))
            for c0 in range(0, n_combos if len(parents) else 0, step):
                combos = row_choices(self.K, self.d - nodes.depth, c0, c0 + step)
                yield self.expand(parents, combos)

    def update(self, leaves: Batch) -> None:
        """Keep, per problem, the first complete order with the smallest MIC (as :class:`Best`)."""
        prob, lb = leaves.prob, leaves.lb
        np.add.at(self.n_leaves, prob, 1)
        starts = np.flatnonzero(np.r_[True, prob[1:] != prob[:-1]])
        mins = np.minimum.reduceat(lb, starts)
        hits = np.flatnonzero(lb == np.repeat(mins, np.diff(np.r_[starts, len(lb)])))
        first = hits[np.searchsorted(hits, starts)] if len(hits) else starts
        better = mins < self.best_mic[prob[starts]]
        for i in first[better]:
            self.best_mic[prob[i]] = lb[i]
            self.best_rows[prob[i]] = leaves.rows[i]

    def greedy_bounds(self, width: int = GREEDY_WIDTH) -> None:
        """Set ``prune_above`` to the smallest MIC a beam of ``width`` reaches in every problem."""
        nodes = self.roots()
        for _ in range(self.d):
            parts = [
                b.take(_smallest_per_problem(b.prob, b.lb, width)) for b in self.children(nodes)
            ]
            pool = Batch.concat(parts)
            nodes = pool.take(_smallest_per_problem(pool.prob, pool.lb, width))
        self.prune_above = nodes.lb[_smallest_per_problem(nodes.prob, nodes.lb, 1)]

    def run(
        self, nodes: Batch, total: int, progress: Listener | None = None, before: int = 0
    ) -> None:
        """Depth-first traversal of every row order not pruned."""
        last = nodes.depth == self.d - 1
        for batch in self.children(nodes):
            if last:
                self.update(batch)
                done = before + int(self.n_leaves.sum() + self.n_pruned.sum())
                report(progress, "search", done, total)
            else:
                self.run(batch, total, progress, before)
