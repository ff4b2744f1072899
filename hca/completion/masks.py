"""Missing-entry masks and the error on the hidden entries."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

__all__ = [
    "mask_random",
    "mask_block",
    "mask_randoms",
    "mask_blocks",
    "rmse_on_mask",
    "observed_column_sets",
]


# --------------------------------------------------------------------------- masks, RMSE
def _check_p(p: float) -> float:
    if not (np.isfinite(p) and 0 <= p < 1):
        raise ValueError(f"p must be in [0, 1); got {p!r}")
    return float(p)


def mask_random(shape: tuple[int, int], p: float, rng: Any = None) -> np.ndarray:
    """Missing-at-random mask: every entry is removed independently with probability ``p``.

    Parameters
    ----------
    shape : tuple of int
        Shape of the matrix.
    p : float
        Probability that an entry is missing, in [0, 1).
    rng : int, numpy.random.Generator or None
        Random state (``numpy.random.default_rng(rng)``).

    Returns
    -------
    numpy.ndarray of bool
        ``True`` where the entry is removed.
    """
    p = _check_p(p)
    return np.random.default_rng(rng).random(tuple(shape)) < p


def mask_randoms(shape: tuple[int, int], p: float, rng: Any, n_masks: int) -> np.ndarray:
    """``n_masks`` masks of :func:`mask_random` drawn from one generator, in one call.

    Equal to ``np.stack([mask_random(shape, p, gen) for _ in range(n_masks)])`` with
    ``gen = numpy.random.default_rng(rng)`` (the same draws, in the same order), and leaves
    ``gen`` in the same state.

    Returns
    -------
    numpy.ndarray of bool, shape ``(n_masks, *shape)``
    """
    p = _check_p(p)
    return np.random.default_rng(rng).random((int(n_masks), *tuple(shape))) < p


def mask_block(
    n_rows: int,
    n_cols: int,
    observed_cols: Sequence[int],
    p: float,
    rng: Any = None,
    same_rows: bool = True,
) -> np.ndarray:
    """Block-missing mask: ``observed_cols`` stay observed; in every other column
    ``round(p * n_rows)`` random rows (drawn without replacement) are removed.

    Parameters
    ----------
    n_rows, n_cols : int
        Shape of the matrix.
    observed_cols : sequence of int
        Positions of the fully observed columns (at least one, not all).
    p : float
        Fraction of rows removed in each of the other columns, in [0, 1).
    rng : int, numpy.random.Generator or None
        Random state (``numpy.random.default_rng(rng)``).
    same_rows : bool
        ``True`` (default): the same rows in every other column, so the missing entries
        form one block (the design SMC is made for). ``False``: each other column draws its
        own rows (the scheme of the authors' notebook), so the missing part is not one block.

    Returns
    -------
    numpy.ndarray of bool
        ``True`` where the entry is removed.
    """
    return mask_blocks(n_rows, n_cols, observed_cols, p, rng, same_rows, 1)[0]


def mask_blocks(
    n_rows: int,
    n_cols: int,
    observed_cols: Sequence[int],
    p: float,
    rng: Any,
    same_rows: bool,
    n_masks: int,
) -> np.ndarray:
    """``n_masks`` masks of :func:`mask_block` drawn from one generator, in one call.

    The rows of every mask are drawn as :func:`mask_block` draws them, mask after mask
    (and column after column when ``same_rows`` is false), so the result equals
    ``np.stack([mask_block(..., gen, same_rows) for _ in range(n_masks)])`` with
    ``gen = numpy.random.default_rng(rng)``, and ``gen`` is left in the same state; the
    checks and the filling run once.

    Returns
    -------
    numpy.ndarray of bool, shape ``(n_masks, n_rows, n_cols)``
    """
    p = _check_p(p)
    obs = np.unique(np.asarray(observed_cols, dtype=int))
    if obs.size == 0 or obs.size >= n_cols or obs.min() < 0 or obs.max() >= n_cols:
        raise ValueError(
            f"observed_cols must name between 1 and {n_cols - 1} of the "
            f"columns 0..{n_cols - 1}; got {list(observed_cols)}"
        )
    gen = np.random.default_rng(rng)
    k = int(round(p * n_rows))
    other = np.setdiff1d(np.arange(n_cols), obs)
    per_mask = 1 if same_rows else other.size
    draws = [gen.choice(n_rows, size=k, replace=False) for _ in range(int(n_masks) * per_mask)]
    rows = np.array(draws, dtype=np.intp).reshape(int(n_masks), per_mask, k)
    mask = np.zeros((int(n_masks), n_rows, n_cols), dtype=bool)
    cols = other[None, :, None] if not same_rows else other[None, None, None, :]
    at = np.arange(int(n_masks))[:, None, None]
    if same_rows:
        mask[at[..., None], rows[..., None], cols] = True
    else:
        mask[at, rows, cols] = True
    return mask


def rmse_on_mask(X_true: Any, X_hat: Any, mask: Any) -> float:
    """Root mean squared error of ``X_hat`` against ``X_true`` on the entries of ``mask``.

    Parameters
    ----------
    X_true, X_hat : array-like of the same shape
    mask : array-like of bool, same shape
        Entries to score (typically the removed ones).

    Returns
    -------
    float
    """
    a, b = np.asarray(X_true, dtype=float), np.asarray(X_hat, dtype=float)
    m = np.asarray(mask, dtype=bool)
    if not (a.shape == b.shape == m.shape):
        raise ValueError(f"shapes differ: X_true {a.shape}, X_hat {b.shape}, mask {m.shape}")
    if not m.any():
        raise ValueError("mask selects no entry")
    diff = a[m] - b[m]
    if not np.isfinite(diff).all():
        raise ValueError(
            f"{int((~np.isfinite(diff)).sum())} masked entries of X_true or X_hat are not finite"
        )
    return float(np.sqrt(np.mean(diff**2)))


def observed_column_sets(n_cols: int, k: int) -> list[tuple[int, ...]]:
    """All ``k``-subsets of ``range(n_cols)`` in lexicographic order (Figure 16: 6 choose 3)."""
    return list(combinations(range(n_cols), k))
