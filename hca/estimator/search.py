"""Steps 2-3 of HCA: row-residual extraction and the search over row orders (Algorithm 2).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hca.estimator.results import factor_names

__all__ = [
    "HCASearchResult",
    "hca_search",
    "evaluate_order",
]


SEARCHES = ("exhaustive", "sequential")
RESIDUALS = ("domain", "shared")
#: Largest number of row orders ``(d0!)^K`` that ``search="exhaustive"`` accepts.
MAX_EXHAUSTIVE_ORDERS = 5_000_000
_MAX_CHILDREN = 1 << 15  # nodes expanded per vectorised batch (bounds memory)
TINY = 1e-300
_RANK_TOL = 1e-10


def check_search_options(search: str, residual: str, beam_width: Any, max_nodes: Any = 1) -> None:
    """Validate the search options."""
    if search not in SEARCHES:
        raise ValueError(f"unknown search {search!r}; expected one of {SEARCHES}")
    if residual not in RESIDUALS:
        raise ValueError(f"unknown residual {residual!r}; expected one of {RESIDUALS}")
    for name, value in (("beam_width", beam_width), ("max_nodes", max_nodes)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


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
    n_nodes : int
        Prefixes (nodes of the search tree, complete orders included) evaluated.
    beam_width : int
        Final beam width of ``"sequential"`` (0 for ``"exhaustive"``).
    certified : bool
        True when the search proves this is the minimal MIC over all ``(d0!)^K`` orders
        (always for ``"exhaustive"``).
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
    beam_width: int = 0
    certified: bool = False

    def summary(self) -> str:
        """Text summary: MIC, Table 3 diagnostics and the chosen orders."""
        d = self.unmixing.shape[0]
        names = factor_names(d)
        lines = [
            f"HCA search ({self.search}, residual={self.residual}): MIC = {self.mic:.4g} "
            f"({self.n_evaluated} row orders evaluated, "
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
    if isinstance(unmixings, Mapping):
        names = tuple(unmixings.keys())
        mats = [unmixings[n] for n in names]
    else:
        mats = list(unmixings)
        names = tuple(range(len(mats)))
    if len(mats) < 2:
        raise ValueError(f"HCA needs unmixing matrices of at least 2 domains, got {len(mats)}")
    arrays = [np.asarray(m, dtype=float) for m in mats]
    shape = arrays[0].shape
    for name, m in zip(names, arrays):
        if m.ndim != 2 or m.shape != shape:
            raise ValueError(
                f"unmixing matrix of domain {name!r} has shape {m.shape}, expected {shape}"
            )
        if not np.all(np.isfinite(m)):
            raise ValueError(f"unmixing matrix of domain {name!r} contains NaN or infinite values")
        s = np.linalg.svd(m, compute_uv=False)
        if shape[0] > shape[1] or s[-1] <= _RANK_TOL * s[0]:
            raise ValueError(f"unmixing matrix of domain {name!r} does not have full row rank")
    return np.stack(arrays), names


# =========================================================================== single order
def _place_rows(M: np.ndarray, perms: Sequence[np.ndarray], residual: str):
    """Row-residual extraction for one row order; return ``(H_hat, rank-1 errors)``."""
    K, d, p = M.shape
    Mp = np.stack([M[k][perms[k]] for k in range(K)])
    H = np.zeros((d, p))
    errors = np.zeros(d)
    for i in range(d):
        R = np.empty((K, p))
        for k in range(K):
            prev = Mp[k, :i] if residual == "domain" else H[:i]
            basis = np.linalg.qr(prev.T)[0] if i else np.zeros((p, 0))
            R[k] = Mp[k, i] - basis @ (basis.T @ Mp[k, i])
        _, s, vt = np.linalg.svd(R, full_matrices=False)
        total = float(np.sum(s**2))
        errors[i] = 1.0 - s[0] ** 2 / total if total > 0 else 0.0
        h = vt[0] - H[:i].T @ (H[:i] @ vt[0])
        h /= max(np.linalg.norm(h), TINY)
        H[i] = h if h.sum() >= 0 else -h
    return H, np.clip(errors, 0.0, 1.0), Mp


def _inexactness(J: np.ndarray) -> float:
    """``(1/d) sum_{i != j} Jn_ij^2`` with unit-norm rows ``Jn``."""
    norms = np.maximum(np.sum(J**2, axis=1), TINY)
    return float(1.0 - np.mean(np.diag(J) ** 2 / norms))


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
    H, errors, Mp = _place_rows(M, perms, residual)
    signs, aligned, weights, Js, alphas, unmix = [], [], [], [], [], []
    for k in range(K):
        B = np.tril(Mp[k] @ H.T)
        s = np.where(np.diag(B) < 0, -1.0, 1.0)
        B, Mk = s[:, None] * B, s[:, None] * Mp[k]
        J = B @ H @ Mk.T @ np.linalg.inv(Mk @ Mk.T)
        signs.append(s)
        aligned.append(Mk)
        weights.append(B)
        Js.append(J)
        alphas.append(_inexactness(J))
        unmix.append(np.linalg.norm(Mk - B @ H) / np.linalg.norm(Mk))
    alphas = np.array(alphas)
    return HCASearchResult(
        domains=names,
        permutations=tuple(perms),
        signs=tuple(signs),
        aligned=tuple(aligned),
        unmixing=H,
        weights=tuple(weights),
        J=tuple(Js),
        alphas=alphas,
        mic=float(alphas.max()),
        rank1_error=errors,
        unmixing_error=np.array(unmix),
        residual=residual,
    )


# =========================================================================== search tree
@dataclass
class _Nodes:
    """A batch of prefixes (rows chosen at positions ``1..depth`` in every domain)."""

    rows: np.ndarray  # (N, K, depth) row of M_k placed at each position
    mask: np.ndarray  # (N, K) bit mask of the rows already placed
    H: np.ndarray  # (N, depth, q) orthonormal h_1..h_depth (reduced coordinates)
    csum: np.ndarray  # (N, K) sum over positions of c_{k,i}
    lb: np.ndarray  # (N,) lower bound on the MIC of every completion

    def __len__(self) -> int:
        return len(self.lb)

    @property
    def depth(self) -> int:
        return self.rows.shape[2]

    def take(self, idx) -> _Nodes:
        return _Nodes(self.rows[idx], self.mask[idx], self.H[idx], self.csum[idx], self.lb[idx])

    @staticmethod
    def concat(parts: Sequence[_Nodes]) -> _Nodes:
        names = ("rows", "mask", "H", "csum", "lb")
        return _Nodes(*(np.concatenate([getattr(p, f) for p in parts]) for f in names))


@dataclass
class _Children:
    """Children of a batch of parents, kept light until :meth:`nodes` materialises them."""

    parents: _Nodes
    parent: np.ndarray  # (n,) index into parents
    rows: np.ndarray  # (n, K) row placed at the new position
    h: np.ndarray  # (n, q) new row of H_hat
    csum: np.ndarray  # (n, K)
    lb: np.ndarray  # (n,)

    def __len__(self) -> int:
        return len(self.lb)

    def nodes(self, idx=slice(None)) -> _Nodes:
        """Materialise the selected children as prefixes."""
        p, rows = self.parent[idx], self.rows[idx]
        return _Nodes(
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


class _SearchTree:
    """Vectorised evaluation of the tree of row-order prefixes.

    Everything is computed in an orthonormal basis of the span of all rows of all
    ``M_k`` (which preserves every inner product and projection).
    """

    def __init__(self, M: np.ndarray, residual: str, max_children: int = _MAX_CHILDREN):
        self.K, self.d, p = M.shape
        self.residual = residual
        self.max_children = max_children
        _, s, vt = np.linalg.svd(M.reshape(-1, p), full_matrices=False)
        basis = vt[: int(np.sum(s > _RANK_TOL * s[0]))]
        self.M = M @ basis.T  # (K, d, q)
        self.Q = np.stack([m.T @ np.linalg.inv(m @ m.T) for m in self.M])  # (K, q, d)
        self.free = self._free_table()
        self.res = self._domain_residuals() if residual == "domain" else None
        self._combos: dict[int, np.ndarray] = {}
        self.n_leaves = 0  # complete row orders evaluated
        self.n_nodes = 0  # prefixes (tree nodes) evaluated
        self.skipped = np.inf  # smallest bound of a parent skipped by ``children``

    def _free_table(self) -> np.ndarray:
        """``free[mask]`` lists the rows not in ``mask`` first (padded with 0)."""
        d = self.d
        table = np.zeros((1 << d, d), dtype=np.intp)
        for mask in range(1 << d):
            rows = [r for r in range(d) if not mask >> r & 1]
            table[mask, : len(rows)] = rows
        return table

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

    def combos(self, n_free: int) -> np.ndarray:
        """All ``n_free ** K`` choices of one free row per domain."""
        if n_free not in self._combos:
            grid = itertools.product(range(n_free), repeat=self.K)
            self._combos[n_free] = np.array(list(grid), dtype=np.intp).reshape(-1, self.K)
        return self._combos[n_free]

    def root(self) -> _Nodes:
        K, q = self.K, self.M.shape[2]
        return _Nodes(
            np.zeros((1, K, 0), dtype=np.intp), np.zeros((1, K), dtype=np.intp),
            np.zeros((1, 0, q)), np.zeros((1, K)), np.zeros(1),
        )

    def _residual_stack(self, nodes: _Nodes, rows: np.ndarray) -> np.ndarray:
        """Residuals ``(N, B, K, q)`` of the candidate rows at the next position."""
        kk = np.arange(self.K)
        if self.residual == "domain":
            return self.res[kk, nodes.mask[:, None, :], rows]
        coef = self.M[None] @ nodes.H.transpose(0, 2, 1)[:, None]  # (N, K, d, depth)
        full = self.M[None] - coef @ nodes.H[:, None]  # (N, K, d, q)
        return full[np.arange(len(nodes))[:, None, None], kk, rows]

    def expand(self, nodes: _Nodes, combos: np.ndarray) -> _Children:
        """Children of ``nodes`` for the given choices of free rows."""
        N, B, K, j = len(nodes), len(combos), self.K, nodes.depth
        kk = np.arange(K)
        rows = self.free[nodes.mask][:, kk, combos]  # (N, B, K)
        h = _top_direction(self._residual_stack(nodes, rows).reshape(N * B, K, -1))
        parent = np.repeat(np.arange(N), B)
        rows = rows.reshape(N * B, K)
        if j and self.residual == "domain":  # Gram-Schmidt against h_1..h_j
            Hp = nodes.H[parent]
            h = h - np.sum(np.sum(Hp * h[:, None, :], axis=2)[:, :, None] * Hp, axis=1)
            h /= np.maximum(np.linalg.norm(h, axis=1, keepdims=True), TINY)
        # Row j+1 of J_k: m P_{V_{j+1}} Q_k = m P_{V_j} Q_k + (m . h) h Q_k, as h is orthogonal
        # to V_j = span(h_1..h_j).
        P = nodes.H.transpose(0, 2, 1) @ nodes.H  # (N, q, q)
        old = ((self.M[None] @ P[:, None]) @ self.Q[None])[parent[:, None], kk, rows]  # (NB, K, d)
        q = h.shape[1]
        mh = np.take_along_axis((h @ self.M.reshape(K * self.d, q).T).reshape(-1, K, self.d),
                                rows[:, :, None], axis=2)  # (NB, K, 1)
        hQ = (h @ self.Q.transpose(1, 0, 2).reshape(q, K * self.d)).reshape(-1, K, self.d)
        w = old + mh * hQ
        diag = np.take_along_axis(w, rows[:, :, None], axis=2)[:, :, 0]
        csum = nodes.csum[parent] + diag**2 / np.maximum(np.sum(w**2, axis=2), TINY)
        return _Children(nodes, parent, rows, h, csum, np.max(j + 1 - csum, axis=1) / self.d)

    def children(
        self, nodes: _Nodes, threshold: Callable[[], float] | None = None
    ) -> Iterator[_Children]:
        """Yield the children of ``nodes`` in batches.

        Parents are visited in the given order; when ``threshold`` is given, parents whose
        bound is ``>= threshold()`` are skipped (every child's bound is at least its
        parent's) and the smallest skipped bound is kept in ``self.skipped``.
        """
        combos = self.combos(self.d - nodes.depth)
        per_parent = max(1, self.max_children // len(combos))
        step = min(len(combos), self.max_children)
        for start in range(0, len(nodes), per_parent):
            parents = nodes.take(slice(start, start + per_parent))
            if threshold is not None:
                drop = parents.lb >= threshold()
                if drop.any():
                    self.skipped = min(self.skipped, float(parents.lb[drop].min()))
                    parents = parents.take(np.flatnonzero(~drop))
            if not len(parents):
                continue
            for c0 in range(0, len(combos), step):
                self.n_nodes += len(parents) * len(combos[c0 : c0 + step])
                yield self.expand(parents, combos[c0 : c0 + step])


class _Best:
    """Incumbent of a search."""

    def __init__(self) -> None:
        self.mic, self.rows = np.inf, None

    def update(self, leaves: _Children) -> None:
        i = int(np.argmin(leaves.lb))
        if leaves.lb[i] < self.mic:
            self.mic, self.rows = float(leaves.lb[i]), leaves.full_rows(i)


def _exhaustive(tree: _SearchTree, nodes: _Nodes, best: _Best) -> None:
    """Depth-first traversal of every row order."""
    last = nodes.depth == tree.d - 1
    for batch in tree.children(nodes):
        if last:
            tree.n_leaves += len(batch)
            best.update(batch)
        else:
            _exhaustive(tree, batch.nodes(), best)


def _smallest(lb: np.ndarray, width: int) -> tuple[np.ndarray, float]:
    """Indices of the ``width`` smallest bounds (stable) and the smallest bound left out."""
    if len(lb) <= width:
        return np.arange(len(lb)), np.inf
    order = np.argsort(lb, kind="stable")
    return order[:width], float(lb[order[width]])


def _beam_level(tree: _SearchTree, nodes: _Nodes, width: int, batches=None) -> tuple[_Nodes, float]:
    """Keep the ``width`` children of ``nodes`` with the smallest bounds."""
    kept: _Nodes | None = None
    discarded = np.inf

    def threshold() -> float:
        return float(kept.lb[-1]) if kept is not None and len(kept) >= width else np.inf

    tree.skipped = np.inf
    for batch in batches if batches is not None else tree.children(nodes, threshold):
        idx, left = _smallest(batch.lb, width)
        pool = batch.nodes(idx) if kept is None else _Nodes.concat([kept, batch.nodes(idx)])
        keep, dropped = _smallest(pool.lb, width)
        kept = pool.take(keep)
        discarded = min(discarded, left, dropped)
    return kept, min(discarded, tree.skipped)


def _beam(tree: _SearchTree, width: int, first: list | None = None) -> tuple[_Best, float]:
    """One beam search; return the best leaf and the smallest bound of a discarded prefix."""
    nodes, discarded = tree.root(), np.inf
    for j in range(tree.d - 1):
        nodes, dropped = _beam_level(tree, nodes, width, first if j == 0 else None)
        discarded = min(discarded, dropped)
    best = _Best()
    for batch in tree.children(nodes):
        tree.n_leaves += len(batch)
        best.update(batch)
    return best, discarded


def _beam_cost(d: int, K: int, width: int) -> int:
    """Upper bound on the nodes evaluated by one beam search of the given width."""
    total, parents = 0, 1
    for j in range(d):
        level = parents * (d - j) ** K
        total += level
        parents = min(level, width)
    return total


def _sequential(tree: _SearchTree, width: int, max_nodes: int) -> tuple[_Best, bool, int]:
    """Beam searches of doubling width until the result is certified or the budget is spent."""
    first = list(tree.children(tree.root())) if tree.d > 1 else None  # shared by all rounds
    while True:
        best, discarded = _beam(tree, width, first)
        certified = best.mic <= discarded
        next_cost = _beam_cost(tree.d, tree.K, 2 * width) - tree.d**tree.K
        if certified or tree.n_nodes + next_cost > max_nodes:
            return best, certified, width
        width *= 2


def all_orders(unmixings: Any, residual: str = "domain") -> tuple[np.ndarray, np.ndarray]:
    """Every row order and its MIC, from the vectorised tree (small problems; for tests)."""
    M, _ = _as_unmixing_list(unmixings)
    tree = _SearchTree(M, residual)
    nodes = tree.root()
    for _ in range(tree.d):
        nodes = _Nodes.concat([batch.nodes() for batch in tree.children(nodes)])
    return nodes.rows, nodes.lb


def hca_search(
    unmixings: Sequence[np.ndarray] | Mapping[Hashable, np.ndarray],
    *,
    search: str = "exhaustive",
    residual: str = "domain",
    beam_width: int = 32,
    max_nodes: int = 1_000_000,
) -> HCASearchResult:
    """Search the row orders of the ICA unmixing matrices for the minimal MIC (Algorithm 2).

    Parameters
    ----------
    unmixings : sequence of ndarray or mapping
        ICA unmixing matrices ``M_k`` (``d0 x n_benchmarks``, full row rank), one per
        domain; a mapping gives the domain names.
    search : {"exhaustive", "sequential"}, default="exhaustive"
        ``"exhaustive"``: all ``(d0!)^K`` orders (Algorithm 2). ``"sequential"``: beam
        search over positions, widened until certified optimal (see the module docstring).
    residual : {"domain", "shared"}, default="domain"
        ``"domain"``: project out the domain's own earlier rows (Algorithm 1);
        ``"shared"``: project out the recovered rows of ``H_hat`` (authors' code).
    beam_width : int, default=32
        Initial beam width of ``"sequential"``; doubled while the result is not certified.
    max_nodes : int, default=1_000_000
        Budget of prefixes evaluated by ``"sequential"``; no wider beam is started when
        it would exceed the budget, and the best order found is returned uncertified
        (with a warning).

    Returns
    -------
    HCASearchResult
        The best row order, evaluated by :func:`evaluate_order`.

    Warns
    -----
    UserWarning
        When ``"sequential"`` stops without certifying its result.

    Notes
    -----
    The result is invariant to the order and signs of the rows of every ``M_k``. It is
    invariant to their scale only for an exact SCM (the MIC weighs domains and rows by
    their scale), so pass unit-variance ICA unmixing matrices.
    """
    check_search_options(search, residual, beam_width, max_nodes)
    M, names = _as_unmixing_list(unmixings)
    K, d, _ = M.shape
    tree = _SearchTree(M, residual)
    if search == "exhaustive":
        n_orders = math.factorial(d) ** K
        if n_orders > MAX_EXHAUSTIVE_ORDERS:
            raise ValueError(
                f"exhaustive search over (d0!)^K = ({d}!)^{K} = {n_orders} row orders exceeds "
                f"{MAX_EXHAUSTIVE_ORDERS}; use search='sequential'"
            )
        best = _Best()
        _exhaustive(tree, tree.root(), best)
        certified, width = True, 0
    else:
        best, certified, width = _sequential(tree, int(beam_width), int(max_nodes))
        if not certified:
            warnings.warn(
                f"sequential search stopped at beam width {width} after {tree.n_nodes} prefixes "
                f"(max_nodes={max_nodes}) without certifying that MIC = {best.mic:.4g} is minimal; "
                "increase max_nodes or use search='exhaustive' if it is affordable",
                UserWarning,
                stacklevel=2,
            )
    perms = [best.rows[k] for k in range(K)]
    result = evaluate_order(dict(zip(names, M)), perms, residual=residual)
    return _with_search_info(result, names, search, tree, certified, width)


def _with_search_info(
    result: HCASearchResult,
    names: tuple,
    search: str,
    tree: _SearchTree,
    certified: bool,
    width: int,
) -> HCASearchResult:
    """Copy of ``result`` with the search bookkeeping filled in."""
    fields = {f: getattr(result, f) for f in result.__dataclass_fields__}
    fields.update(domains=names, search=search, n_evaluated=int(tree.n_leaves),
                  n_nodes=int(tree.n_nodes), beam_width=int(width), certified=bool(certified))
    return HCASearchResult(**fields)
