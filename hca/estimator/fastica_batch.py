"""FastICA over many starts at once: scikit-learn's parallel FastICA, vectorised over seeds.

HCA reads its claims from ensembles of FastICA runs (one per seed). The starts differ only in
the initial matrix ``w_init``; the whitening of a domain's data does not depend on the seed.
:func:`whiten` computes scikit-learn's whitening once, and :func:`fastica_batch` runs the
fixed-point iterations of every start together on a stack of matrices (``numpy`` only), each
start stopping at its own iteration, exactly as :class:`sklearn.decomposition.FastICA` with
``algorithm="parallel"``, ``fun="logcosh"``, ``whiten="unit-variance"`` and
``whiten_solver="svd"`` does one start at a time (``tests/test_estimator.py`` checks the two
agree to 1e-10 with the same iteration counts).

Every start is computed from its own slice of the stack with the same operations as a stack of
one, so a seed's result does not depend on which other seeds share its batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import linalg

__all__ = [
    "Whitened",
    "whiten",
    "initial_matrices",
    "fastica_batch",
    "fastica_stack",
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
    """``(W W^T)^{-1/2} W`` of every matrix of the stack ``W`` (b, d, d).

    The eigenvalues ``s`` are clipped below at the smallest normal number, and ``1 / sqrt(s)``
    is computed in place (``np.clip`` without an upper bound is ``np.maximum``): operation for
    operation the arithmetic of ``(u * (1 / sqrt(clip(s)))) @ u^T @ W``."""
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


def _iterate(
    X1: np.ndarray, W: np.ndarray, tol: float, max_iter: int, which: np.ndarray | None = None
):
    """Fixed-point iterations of every start of ``W`` (b, d, d); return W, n_iter, converged.

    ``X1`` is one white data matrix (d, n) shared by every start, or a stack (g, d, n) of
    matrices of one shape with ``which`` (b,) naming the matrix of every start.

    The loop keeps only the starts still iterating (``Wa``; their data ``Xa`` and its
    transposed view are gathered again only when a start stops) and writes a start's ``W``
    out when it stops. Temporaries are updated in place and ``np.mean`` is spelled as what it
    does (``np.add.reduce``, then a division by the count), but every operation is the plain
    update's on operands of the same values and layout (the matrix products' operands
    included), so the results are bitwise those of gathering ``W[active]`` and
    ``X1[which[active]]`` afresh at every iteration
    (``tests/test_fastica_loop.py`` checks this against that plain loop)."""
    W = _sym_decorrelation(W)
    b = W.shape[0]
    n = X1.shape[-1]
    p_ = float(n)
    n_iter = np.full(b, max_iter, dtype=int)
    active = np.arange(b)
    Wa = W.copy()
    Xa = X1 if which is None else X1[which]
    XaT = Xa.swapaxes(-1, -2)
    for ii in range(max_iter if b else 0):
        gwtx = Wa @ Xa
        np.tanh(gwtx, out=gwtx)
        g2 = np.square(gwtx)
        np.subtract(1, g2, out=g2)
        g_wtx = np.add.reduce(g2, axis=-1)
        np.true_divide(g_wtx, n, out=g_wtx)
        V = gwtx @ XaT
        np.true_divide(V, p_, out=V)
        V -= g_wtx[:, :, np.newaxis] * Wa
        W1 = _sym_decorrelation(V)
        e = np.einsum("bij,bij->bi", W1, Wa)
        np.abs(e, out=e)
        np.subtract(e, 1, out=e)
        np.abs(e, out=e)
        done = np.maximum.reduce(e, axis=-1) < tol
        if done.any():
            n_iter[active[done]] = ii + 1
            W[active[done]] = W1[done]
            keep = ~done
            active = active[keep]
            if active.size == 0:
                break
            W1 = W1[keep]
            if which is not None:
                Xa = X1[which[active]]
                XaT = Xa.swapaxes(-1, -2)
        Wa = W1
    else:
        W[active] = Wa
    converged = np.ones(b, dtype=bool)
    converged[active] = False
    return W, n_iter, converged


def fastica_batch(
    X: Any,
    n_components: int,
    seeds: Sequence[int] | None = None,
    *,
    w_init: np.ndarray | None = None,
    max_iter: int = 1000,
    tol: float = 1e-4,
    whitened: Whitened | None = None,
) -> FastICABatch:
    """FastICA (parallel, logcosh, unit-variance sources) from every start at once.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data of one domain.
    n_components : int
        Sources.
    seeds : sequence of int, optional
        ``random_state`` of every start (``w_init`` drawn as scikit-learn does).
    w_init : ndarray of shape (n_starts, d, d), optional
        Initial matrices instead of ``seeds``.
    max_iter, tol
        As scikit-learn's ``FastICA``; every start stops at its own iteration.
    whitened : Whitened, optional
        :func:`whiten` of ``X`` computed before (it depends only on ``X``).

    Returns
    -------
    FastICABatch
    """
    if (seeds is None) == (w_init is None):
        raise ValueError("fastica_batch: pass either seeds or w_init")
    wh = whiten(X, n_components) if whitened is None else whitened
    if w_init is not None:
        W0 = np.array(w_init, dtype=np.float64, copy=True)
    else:
        assert seeds is not None  # checked above: exactly one of them is given
        W0 = initial_matrices(seeds, n_components)
    if W0.ndim != 3 or W0.shape[1:] != (n_components, n_components):
        raise ValueError(
            f"w_init must have shape (n_starts, {n_components}, {n_components}), got {W0.shape}"
        )
    W, n_iter, converged = _iterate(wh.X1, W0, float(tol), int(max_iter))
    return _finish(W, wh, n_iter, converged)


def _finish(W: np.ndarray, wh: Whitened, n_iter: np.ndarray, converged: np.ndarray) -> FastICABatch:
    """Unit-variance sources, as scikit-learn rescales ``components_``."""
    S = W @ wh.K @ wh.XT  # (b, d, n)
    S_std = np.std(S, axis=-1)
    W = W / S_std[:, :, np.newaxis]
    return FastICABatch(components=W @ wh.K, mean=wh.mean, n_iter=n_iter, converged=converged)


def fastica_stack(
    whitened: Sequence[Whitened],
    w_init: np.ndarray,
    *,
    max_iter: int = 1000,
    tol: float = 1e-4,
) -> list[FastICABatch]:
    """:func:`fastica_batch` of several data matrices of one shape, all their starts in one
    stack of fixed-point iterations.

    The bootstrap resamples of a domain have the domain's shape, so every start of every
    resample (and of every seed) iterates together: one batched ``eigh`` per iteration
    instead of one per resample. Every start is computed from its own slice of the stack, so
    entry ``g`` equals ``fastica_batch(..., w_init=w_init[g], whitened=whitened[g])``
    (``tests/test_estimator.py`` checks them against each other).

    Parameters
    ----------
    whitened : sequence of Whitened
        :func:`whiten` of every data matrix (one shape: n_samples, n_features).
    w_init : ndarray of shape (n_matrices, n_starts, d, d)
        Initial matrices of the starts of every data matrix.
    max_iter, tol
        As :func:`fastica_batch`.

    Returns
    -------
    list of FastICABatch
        One per data matrix, in order.
    """
    whitened = list(whitened)
    W0 = np.array(w_init, dtype=np.float64, copy=True)
    if not whitened:
        return []
    d = whitened[0].X1.shape[0]
    shapes = {w.X1.shape for w in whitened}
    if len(shapes) != 1:
        raise ValueError(f"fastica_stack: the data matrices differ in shape: {sorted(shapes)}")
    if W0.ndim != 4 or W0.shape[0] != len(whitened) or W0.shape[2:] != (d, d):
        raise ValueError(
            f"w_init must have shape ({len(whitened)}, n_starts, {d}, {d}), got {W0.shape}"
        )
    g, b = W0.shape[:2]
    X1 = np.stack([w.X1 for w in whitened])
    which = np.repeat(np.arange(g), b)
    W, n_iter, converged = _iterate(X1, W0.reshape(g * b, d, d), float(tol), int(max_iter), which)
    return [
        _finish(
            W[i * b : (i + 1) * b], wh, n_iter[i * b : (i + 1) * b], converged[i * b : (i + 1) * b]
        )
        for i, wh in enumerate(whitened)
    ]
