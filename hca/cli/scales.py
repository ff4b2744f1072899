"""Scores on two scales inside one table: a domain, some rows, or part of a column.

HCA is not scale-invariant: a domain whose scores are fractions (0-1) among domains in
percent (0-100), or a column whose rows switch from one to the other half-way, changes the
MIC and the causal order with no error. The checks compare magnitudes on a log scale
(``log10 |score|``, zeros left out), against references a wrong scale cannot drag along:

* **A domain** (:func:`domain_scales`): the top of every column in that domain (its 90th
  percentile of ``|score|``) against the median of the other domains' tops; a domain whose
  tops differ by a factor of :data:`DOMAIN_RATIO` or more in the median column sits on
  another scale. (A single column of one domain is not judged: a domain of small models
  scores near zero on a hard benchmark, as far below the others as a fraction is.)
* **Rows** (:func:`row_scales`): every row's scores against its domain's tops; rows whose
  median column is :data:`ROW_RATIO` times below (or above) them.
* **Part of a column** (:func:`cell_scales`): a score's distance below its domain's top,
  less the row's own (median) distance: a share of at least :data:`CELL_SHARE` of a
  domain's scores in one column at least :data:`CELL_RATIO` times below what the row's other
  scores say.

The thresholds were set on the four public tables of the book (v1 and v2 by base model and
by architecture, MMLU by subject, every domain with more models than benchmarks), where
none fires; there the farthest domain sits 6.9 times below the others (SmolLM2-135M in v2),
the farthest row 30 times (below :data:`ROW_RATIO`: 56), and at most 12.5 % of a domain's
scores in one column are :data:`CELL_RATIO` times below their row (:data:`CELL_SHARE`: 25 %).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "DOMAIN_RATIO",
    "ROW_RATIO",
    "CELL_RATIO",
    "CELL_SHARE",
    "MIN_ROWS",
    "ScaleFinding",
    "scale_findings",
]

#: A domain whose column tops differ from the other domains' by this factor (median column).
DOMAIN_RATIO = 30.0
#: Rows whose median score is this many times below (or above) their domain's tops.
ROW_RATIO = 56.0
#: A score this many times below what its row's other scores say ...
CELL_RATIO = 30.0
#: ... in at least this share of a domain's scores of one column.
CELL_SHARE = 0.25
#: Fewest rows (or scores) a finding names.
MIN_ROWS = 3
_TOP = 0.9  # the "top" of a column: this quantile of |score|


@dataclass(frozen=True)
class ScaleFinding:
    """Scores on another scale than the rest of their column(s).

    Attributes
    ----------
    kind : {"domain", "rows", "cells"}
        A whole domain, rows of one domain (in most columns), or part of one column.
    rows : tuple of int
        Positions (0-based, in the fitted table) of the rows concerned.
    columns : tuple of str
        The columns concerned.
    domains : dict
        Domain -> rows concerned.
    factor : float
        How many times smaller (< 1: larger) their scores are, roughly (median over the
        columns and rows).
    """

    kind: str
    rows: tuple
    columns: tuple
    domains: dict
    factor: float


def _logs(values: np.ndarray) -> np.ndarray:
    mag = np.abs(values)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(mag > 0, np.log10(np.where(mag > 0, mag, 1.0)), np.nan)


def _nan_stat(fn, a: np.ndarray, **kwargs) -> np.ndarray:
    """``fn`` over ``a`` ignoring NaN, NaN where everything is NaN (without a warning)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(fn(a, **kwargs), dtype=float)


def _domain_groups(
    tops: np.ndarray, codes: np.ndarray, columns: list[str]
) -> list[tuple[int, float, list[str]]]:
    """The domains off the main scale: ``(domain code, factor, columns)``.

    Every domain's level is the median over the columns of its tops less the median top of
    the column over the domains; sorted, the levels fall into groups wherever two
    neighbours are :data:`DOMAIN_RATIO` or more apart. The group with the most rows is the
    main scale; every domain of another group is returned with how many times its tops are
    below the main group's (median column; below 1: above) and the columns in which they
    differ by :data:`DOMAIN_RATIO` or more."""
    limit = np.log10(DOMAIN_RATIO)
    level = _nan_stat(np.nanmedian, tops - _nan_stat(np.nanmedian, tops, axis=0), axis=1)
    order = np.argsort(np.nan_to_num(level), kind="stable")
    steps = np.diff(np.nan_to_num(level[order])) >= limit
    group = np.empty(len(level), dtype=int)
    group[order] = np.r_[0, np.cumsum(steps)]
    if not steps.any():
        return []
    rows = np.bincount(group[codes], minlength=group.max() + 1)
    main = int(np.argmax(rows))
    reference = _nan_stat(np.nanmedian, tops[group == main], axis=0)
    out = []
    for c in np.flatnonzero(group != main):
        diff = tops[c] - reference
        typical = float(_nan_stat(np.nanmedian, diff))
        sign = np.sign(typical)
        cols = [columns[j] for j in range(len(columns)) if sign * diff[j] >= limit]
        out.append((int(c), float(10 ** (-typical)), cols))
    return out


def scale_findings(
    values: np.ndarray, domains: np.ndarray, columns: list[str]
) -> list[ScaleFinding]:
    """Every domain, set of rows and part of a column on another scale (module docstring).

    Parameters
    ----------
    values : ndarray of shape (n_rows, n_columns)
        The scores (finite).
    domains : ndarray of shape (n_rows,)
        The domain of every row.
    columns : list of str
        The columns' names.

    Returns
    -------
    list of ScaleFinding
        Domains first, then rows, then parts of columns; a row named once is not named
        again in a later finding.
    """
    values = np.asarray(values, dtype=float)
    labels, codes = np.unique(np.asarray(domains).astype(str), return_inverse=True)
    L = _logs(values)
    K, p = len(labels), values.shape[1]
    tops = np.stack(
        [_nan_stat(np.nanquantile, L[codes == c], q=_TOP, axis=0) for c in range(K)]
    )  # (K, p)
    out: list[ScaleFinding] = []
    named = np.zeros(len(values), dtype=bool)
    if K >= 2:
        for c, factor, cols in _domain_groups(tops, codes, columns):
            rows = np.flatnonzero(codes == c)
            named[rows] = True
            out.append(
                ScaleFinding(
                    "domain",
                    tuple(int(r) for r in rows),
                    tuple(cols),
                    {str(labels[c]): len(rows)},
                    factor,
                )
            )
    below = L - tops[codes]  # every score against its domain's top
    offset = _nan_stat(np.nanmedian, below, axis=1)  # the row's typical distance
    rows_limit = np.log10(ROW_RATIO)
    for c in range(K):
        for sign in (-1.0, 1.0):
            hit = (codes == c) & ~named & (sign * np.nan_to_num(offset) >= rows_limit)
            if hit.sum() < MIN_ROWS:
                continue
            rows = np.flatnonzero(hit)
            named[rows] = True
            cols = [
                columns[j]
                for j in range(p)
                if _nan_stat(np.nanmedian, sign * below[rows, j]) >= rows_limit
            ]
            out.append(
                ScaleFinding(
                    "rows",
                    tuple(int(r) for r in rows),
                    tuple(cols or columns),
                    {str(labels[c]): len(rows)},
                    float(10 ** (-_nan_stat(np.nanmedian, offset[rows]))),
                )
            )
    if p >= 3:  # with two columns a row's median is pulled by the column judged
        cell = below - offset[:, None]
        low = np.nan_to_num(cell, nan=0.0) <= -np.log10(CELL_RATIO)
        for j in range(p):
            hits = np.zeros(len(values), dtype=bool)
            for c in range(K):
                inside = (codes == c) & ~named
                scored = inside & ~np.isnan(L[:, j])
                k_low = low[:, j] & inside
                if k_low.sum() >= MIN_ROWS and k_low.sum() >= CELL_SHARE * max(scored.sum(), 1):
                    hits |= k_low
            if hits.sum() < MIN_ROWS:
                continue
            rows = np.flatnonzero(hits)
            per = np.bincount(codes[rows], minlength=K)
            out.append(
                ScaleFinding(
                    "cells",
                    tuple(int(r) for r in rows),
                    (columns[j],),
                    {str(labels[c]): int(per[c]) for c in np.flatnonzero(per)},
                    float(10 ** (-_nan_stat(np.nanmedian, cell[rows, j]))),
                )
            )
    return out
