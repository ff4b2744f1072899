"""FastICA over many starts at once: scikit-learn's parallel FastICA, vectorised over seeds.

The starts of an ensemble differ only in the initial matrix ``w_init``; the whitening of a
domain's data does not depend on the seed. :func:`whiten` computes scikit-learn's whitening
once, and :func:`fastica_lockstep`, the one entry point, runs the fixed-point iterations of
every start of every data matrix together, each start stopping at its own iteration, exactly
as :class:`sklearn.decomposition.FastICA` with ``algorithm="parallel"``, ``fun="logcosh"``,
``whiten="unit-variance"`` and ``whiten_solver="svd"`` does one start at a time
(``tests/test_estimator.py`` checks the two agree to 1e-10 with the same iteration counts;
``tests/test_fastica_loop.py`` that every matrix gets bit for bit what a plain loop gives it
alone). Every start is computed from its own slice of the stack with the same operations as a
stack of one, so a seed's result does not depend on which other seeds or matrices share its
loop. :func:`initial_matrices` draws the initial matrices of seeds as scikit-learn does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import linalg

__all__ = [
    "Whitened",
    "whiten",
    "initial_matrices",
    "fastica_lockstep",
    "FastICABatch",
]


@dataclass(frozen=True, eq=False)
class Whitened:
    """scikit-learn's FastICA whitening of one data matrix.

    Attributes
    ----------
    X1 : ndarray of shape (n_components, n_samples)
        White data (``K @ (x - mean).T * sqrt(n_samples)``).
    K : ndarray of shape (n_components, n_features)
        Whitening matrix.
    XT : ndarray of shape (n_features, n_samples)
        Centred data, transposed.
    mean : ndarray of shape (n_features,)
    """

    X1: np.ndarray
    K: np.ndarray
    XT: np.ndarray
    mean: np.ndarray


def whiten(X: Any, n_components: int) -> Whitened:
    """Centre and whiten ``X`` (n_samples, n_features) as scikit-learn's FastICA does
    (``whiten_solver="svd"``, eigenvector signs fixed by their first entry)."""
    XT = np.array(X, dtype=np.float64, copy=True).T
    n_features, n_samples = XT.shape
    if not 1 <= n_components <= min(n_samples, n_features):
        raise ValueError(
            f"n_components must be between 1 and min(n_samples, n_features) = "
            f"{min(n_samples, n_features)}, got {n_components}"
        )
    mean = XT.mean(axis=-1)
    XT -= mean[:, np.newaxis]
    u, d = linalg.svd(XT, full_matrices=False, check_finite=False)[:2]
    u *= np.sign(u[0])
    K = (u / d).T[:n_components]
    X1 = np.dot(K, XT)
    X1 *= np.sqrt(n_samples)
    return Whitened(X1=X1, K=K, XT=XT, mean=mean)


def initial_matrices(seeds: Sequence[int], n_components: int) -> np.ndarray:
    """``w_init`` of every seed, drawn as scikit-learn's FastICA draws it
    (``RandomState(seed).normal(size=(d, d))``); shape (n_seeds, d, d)."""
    return np.stack(
        [np.random.RandomState(int(s)).normal(size=(n_components, n_components)) for s in seeds]
    )


def _sym_decorrelation(W: np.ndarray) -> np.ndarray:
    """``(W W^T)^{-1/2} W`` of every matrix of the stack ``W`` (b, d, d): operation for
    operation scikit-learn's ``(u * (1 / sqrt(clip(s)))) @ u^T @ W``, in place."""
    s, u = np.linalg.eigh(W @ W.swapaxes(-1, -2))
    np.maximum(s, np.finfo(W.dtype).tiny, out=s)
    np.sqrt(s, out=s)
    np.divide(1.0, s, out=s)
    return (u * s[:, np.newaxis, :]) @ u.swapaxes(-1, -2) @ W


@dataclass(frozen=True, eq=False)
class FastICABatch:
    """Result of :func:`fastica_batch`: one entry per start.

    Attributes
    ----------
    components : ndarray of shape (n_starts, n_components, n_features)
        Unmixing matrices (unit-variance sources, as scikit-learn's ``components_``).
    mean : ndarray of shape (n_features,)
    n_iter : ndarray of int, shape (n_starts,)
    converged : ndarray of bool, shape (n_starts,)
    """

    components: np.ndarray
    mean: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray

    def summary(self) -> str:
        """One line: starts, convergence and iterations."""
        return (
            f"FastICA batch: {len(self.n_iter)} starts, {int(self.converged.sum())} "
            f"converged, iterations {int(self.n_iter.min())}-{int(self.n_iter.max())}"
        )


def _iterate_blocks(
    blocks: Sequence[tuple[np.ndarray, np.ndarray | None, int]],
    W: np.ndarray,
    tol: float,
    max_iter: int,
    on_stop: Callable[[np.ndarray], None] | None = None,
):
    """Fixed-point iterations of the starts of several blocks in lockstep; return W, n_iter,
    converged.

    A block ``(X1, which, b)`` is one white data matrix ``X1`` (d, n) shared by its ``b``
    starts (``which`` None), or a stack (g, d, n) with ``which`` (b,) naming the matrix of
    every start; ``W`` holds the starts block after block. The parts that involve the data
    run block by block, the (d, d) parts once on the stack of every active start.
    ``on_stop`` is called with the indices of the starts that stop at an iteration, and once
    after the loop with those that never converged.

    Only the starts still iterating are kept (a block's data gathered again when one of its
    starts stops). Temporaries are updated in place and ``np.mean`` is spelled as
    ``np.add.reduce`` and a division, but every operation is the plain update's on operands
    of the same values and layout, acting on every start's slice alone, so the results are
    bitwise those of the plain loop (``tests/test_fastica_loop.py``)."""
    W = _sym_decorrelation(W)
    B = W.shape[0]
    if sum(b for _, _, b in blocks) != B:
        raise ValueError(f"the blocks hold {sum(b for _, _, b in blocks)} starts, W {B}")
    n_iter = np.full(B, max_iter, dtype=int)
    active = np.arange(B)
    # per block still iterating: [X1, which of its active starts, Xa, XaT, p_, n, count]
    state: list[list[Any]] = []
    for X1, which, b in blocks:
        if b:
            Xa = X1 if which is None else X1[which]
            n = X1.shape[-1]
            state.append([X1, which, Xa, Xa.swapaxes(-1, -2), float(n), n, b])
    Wa = W.copy()
    for ii in range(max_iter if B else 0):
        Vs = []
        lo = 0
        for _, _, Xa, XaT, p_, n, m in state:
            Wg = Wa[lo : lo + m]
            lo += m
            gwtx = Wg @ Xa
            np.tanh(gwtx, out=gwtx)
            g2 = np.square(gwtx)
            np.subtract(1, g2, out=g2)
            g_wtx = np.add.reduce(g2, axis=-1)
            np.true_divide(g_wtx, n, out=g_wtx)
            V = gwtx @ XaT
            np.true_divide(V, p_, out=V)
            V -= g_wtx[:, :, np.newaxis] * Wg
            Vs.append(V)
        W1 = _sym_decorrelation(Vs[0] if len(Vs) == 1 else np.concatenate(Vs))
        e = np.einsum("bij,bij->bi", W1, Wa)
        np.abs(e, out=e)
        np.subtract(e, 1, out=e)
        np.abs(e, out=e)
        done = np.maximum.reduce(e, axis=-1) < tol
        if done.any():
            stopped = active[done]
            n_iter[stopped] = ii + 1
            W[stopped] = W1[done]
            keep = ~done
            active = active[keep]
            if on_stop is not None:
                on_stop(stopped)
            if active.size == 0:
                break
            W1 = W1[keep]
            state = _drop_stopped(state, keep)
        Wa = W1
    else:
        W[active] = Wa
        if on_stop is not None and active.size:
            on_stop(active)
    converged = np.ones(B, dtype=bool)
    converged[active] = False
    return W, n_iter, converged


def _drop_stopped(state: list[list[Any]], keep: np.ndarray) -> list[list[Any]]:
    """The blocks' state after the starts not in ``keep`` stopped (a block without starts
    left out)."""
    out = []
    lo = 0
    for block in state:
        X1, which, m = block[0], block[1], block[6]
        kept = keep[lo : lo + m]
        lo += m
        count = int(np.count_nonzero(kept))
        if count == m:
            out.append(block)
        elif count:
            if which is not None:
                which = which[kept]
                Xa = X1[which]
                block = [X1, which, Xa, Xa.swapaxes(-1, -2), block[4], block[5], count]
            else:
                block = [*block[:6], count]
            out.append(block)
    return out


def _finish(W: np.ndarray, wh: Whitened, n_iter: np.ndarray, converged: np.ndarray) -> FastICABatch:
    """Unit-variance sources, as scikit-learn rescales ``components_``."""
    S = W @ wh.K @ wh.XT  # (b, d, n)
    S_std = np.std(S, axis=-1)
    W = W / S_std[:, :, np.newaxis]
    return FastICABatch(components=W @ wh.K, mean=wh.mean, n_iter=n_iter, converged=converged)


def fastica_lockstep(
    whitened: Sequence[Whitened],
    w_init: Sequence[np.ndarray],
    *,
    max_iter: int = 1000,
    tol: float = 1e-4,
    on_done: Callable[[int], None] | None = None,
) -> list[FastICABatch]:
    """FastICA (parallel, logcosh, unit-variance sources) of several data matrices of any
    numbers of samples, from every start at once, all starts iterating in lockstep.

    The starts of the matrices with the same number of samples form one stack for the steps
    that involve the data; the steps on (d, d) matrices run once per iteration on the stack
    of every active start. Entry ``i`` is bit for bit what the plain loop gives matrix ``i``
    with its starts alone, whichever matrices share the loop (``tests/test_fastica_loop.py``);
    for one matrix, ``fastica_lockstep([whiten(X, d)], [initial_matrices(seeds, d)])[0]``.

    Parameters
    ----------
    whitened : sequence of Whitened
        :func:`whiten` of every data matrix, all with the same number of components ``d``.
    w_init : sequence of ndarray of shape (n_starts_i, d, d)
        Initial matrices of the starts of every data matrix (their numbers may differ).
    max_iter, tol
        As scikit-learn's ``FastICA``; every start stops at its own iteration.
    on_done : callable, optional
        Called as ``on_done(i)`` once every start of matrix ``i`` has stopped (converged, or
        at ``max_iter``), in the order in which the matrices finish; a matrix without starts
        is reported before the iterations.

    Returns
    -------
    list of FastICABatch
        One per data matrix, in order.

    Raises
    ------
    ValueError
        If ``w_init`` does not hold one stack of (d, d) matrices per data matrix, or the
        matrices differ in ``d``.
    """
    whitened = list(whitened)
    W0s = [np.array(w, dtype=np.float64, copy=True) for w in w_init]
    if len(W0s) != len(whitened):
        raise ValueError(
            f"fastica_lockstep: {len(W0s)} stacks of initial matrices for {len(whitened)} "
            "data matrices"
        )
    if not whitened:
        return []
    d = whitened[0].X1.shape[0]
    if any(w.X1.shape[0] != d for w in whitened):
        found = sorted({w.X1.shape[0] for w in whitened})
        raise ValueError(f"fastica_lockstep: the data matrices differ in components: {found}")
    for i, W0 in enumerate(W0s):
        if W0.ndim != 3 or W0.shape[1:] != (d, d):
            raise ValueError(f"w_init[{i}] must have shape (n_starts, {d}, {d}), got {W0.shape}")
    by_shape: dict[tuple, list[int]] = {}
    for i, wh in enumerate(whitened):
        by_shape.setdefault(wh.X1.shape, []).append(i)
    order = [i for members in by_shape.values() for i in members]  # starts in block order
    sizes = np.array([len(W0s[i]) for i in order], dtype=int)
    first = dict(zip(order, np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist()))
    blocks = []
    for members in by_shape.values():
        which = np.repeat(np.arange(len(members)), [len(W0s[i]) for i in members])
        blocks.append((np.stack([whitened[i].X1 for i in members]), which, len(which)))
    matrix = np.repeat(np.array(order, dtype=int), sizes)  # matrix of every start
    left = np.bincount(matrix, minlength=len(whitened))
    on_stop = None
    if on_done is not None:
        for k in np.flatnonzero(left == 0).tolist():
            on_done(k)

        def on_stop(stopped: np.ndarray) -> None:
            ended = matrix[stopped]
            left[:] -= np.bincount(ended, minlength=len(whitened))
            for k in np.unique(ended).tolist():
                if left[k] == 0:
                    on_done(k)

    W, n_iter, converged = _iterate_blocks(
        blocks,
        np.concatenate([W0s[i] for i in order]).reshape(-1, d, d),
        float(tol),
        int(max_iter),
        on_stop,
    )
    out = []
    for i, wh in enumerate(whitened):
        part = slice(first[i], first[i] + len(W0s[i]))
        out.append(_finish(W[part], wh, n_iter[part], converged[part]))
    return out
