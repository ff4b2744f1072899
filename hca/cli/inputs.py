"""Inputs of ``python -m hca fit``: the leaderboard CSV (the outputs: :mod:`hca.cli.outputs`).

Every problem is reported as a one-line :class:`ValueError` naming the file, the column,
the row or the option, before anything is fitted.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from hca.data import domain_data

__all__ = [
    "Leaderboard",
    "load_leaderboard",
    "read_leaderboard_csv",
    "check_output_path",
    "write_atomic",
    "PLOT_SUFFIXES",
]

PLOT_SUFFIXES = (".svg", ".png", ".pdf")
MISSING_DOMAIN = "(missing domain)"


def _show_columns(columns: Sequence[str], n: int = 12) -> str:
    shown = [str(c) for c in list(columns)[:n]]
    more = f" ... ({len(columns)} columns)" if len(columns) > n else ""
    return f"{shown}{more}"


@dataclass(frozen=True)
class Leaderboard:
    """A validated leaderboard: scores, domains and what was dropped on the way.

    Attributes
    ----------
    X : DataFrame
        Benchmark scores (float), one row per model kept.
    domains : ndarray of str
        Domain of every kept row.
    rows_read : int
        Data rows in the file.
    dropped_incomplete : dict
        Domain -> rows dropped by ``dropna`` (a missing score; rows without a domain
        are counted under ``"(missing domain)"``).
    dropped_domains : dict
        Domain -> rows, for the domains dropped by ``min_domain_size``.
    duplicated_rows : int
        Rows that repeat an earlier row (same domain and scores) among the complete rows.
    dropped_duplicates : int
        Of those, the rows dropped (``drop_duplicates``).
    """

    X: pd.DataFrame
    domains: np.ndarray
    rows_read: int
    dropped_incomplete: dict = field(default_factory=dict)
    dropped_domains: dict = field(default_factory=dict)
    duplicated_rows: int = 0
    dropped_duplicates: int = 0

    def domain_sizes(self) -> dict:
        """Domain -> rows used, in sorted order of the domains."""
        labels, counts = np.unique(self.domains, return_counts=True)
        return {str(k): int(v) for k, v in zip(labels, counts)}


def _read_header(path: Path) -> list[str]:
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            header = next(csv.reader(fh), None)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: malformed CSV (not UTF-8 text)") from None
    except csv.Error as err:
        raise ValueError(f"{path}: malformed CSV ({err})") from None
    if not header or all(not h.strip() for h in header):
        raise ValueError(f"{path}: malformed CSV (empty file or empty header line)")
    return header


def _check_header(path: Path, header: list[str], used: list[str]) -> None:
    """Duplicated names among the columns used are ambiguous: refuse them."""
    for name in used:
        where = [i + 1 for i, h in enumerate(header) if h == name]
        if len(where) > 1:
            raise ValueError(
                f"{path}: column {name!r} appears {len(where)} times in the header "
                f"(columns {', '.join(map(str, where))}); rename the copies"
            )


def _read_frame(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, encoding="utf-8-sig")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"{path}: malformed CSV ({first})") from None


def _numeric_column(path: Path, df: pd.DataFrame, col: str) -> pd.Series:
    raw = df[col]
    values = raw if pd.api.types.is_numeric_dtype(raw) else pd.to_numeric(raw, errors="coerce")
    bad = values.isna() & raw.notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise ValueError(
            f"{path}: column {col!r} is not numeric (data row {row + 1} holds {raw.iloc[row]!r})"
        )
    try:
        values = values.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"{path}: column {col!r} is not numeric") from None
    inf = np.isinf(values.to_numpy())
    if inf.any():
        row = int(np.flatnonzero(inf)[0])
        raise ValueError(
            f"{path}: column {col!r} has an infinite score "
            f"(data row {row + 1} holds {raw.iloc[row]!r})"
        )
    return values


#: Scores larger than this in absolute value are refused: FastICA's whitening squares and sums
#: them, which overflows (or loses every digit) long before the float64 limit of 1.8e308.
MAX_ABS_SCORE = 1e150


def _check_scale(path: Path, X: pd.DataFrame, rows: np.ndarray) -> None:
    """Refuse scores too large to fit safely, naming the column and the data row."""
    values = X.to_numpy(dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        big = np.abs(values) > MAX_ABS_SCORE
        if not big.any():
            sums = np.nansum(values**2, axis=0)
            if np.all(np.isfinite(sums)):
                return
            col = int(np.flatnonzero(~np.isfinite(sums))[0])
            row = int(np.nanargmax(np.abs(values[:, col])))
            big = np.zeros_like(big)
            big[row, col] = True
    row, col = (int(v) for v in np.argwhere(big)[0])
    raise ValueError(
        f"{path}: column {X.columns[col]!r} holds {values[row, col]:.3g} (data "
        f"row {int(rows[row]) + 1}), too large to fit safely (the limit is "
        f"{MAX_ABS_SCORE:.0e} and squared sums must stay finite); rescale the "
        "scores (e.g. to percent or to a 0-1 range)"
    )


def _duplicates(labels: pd.Series, X: pd.DataFrame) -> np.ndarray:
    """Rows repeating an earlier row: same domain and the same score on every benchmark."""
    frame = X.copy()
    frame["__domain__"] = labels.astype(str).to_numpy()
    return frame.duplicated(keep="first").to_numpy()


def load_leaderboard(
    path: str | os.PathLike,
    domain_col: str,
    benchmarks: Sequence[str],
    *,
    dropna: bool = False,
    min_domain_size: int = 0,
    drop_duplicates: bool = False,
) -> Leaderboard:
    """Read and validate a leaderboard CSV.

    Parameters
    ----------
    path : path-like
        CSV (UTF-8) with a header line, one row per model.
    domain_col : str
        Column naming each model's domain.
    benchmarks : sequence of str
        Benchmark columns (numeric scores), at least two, distinct, not ``domain_col``.
    dropna : bool, default False
        Drop rows with a missing score or domain (counted per domain) instead of refusing.
    min_domain_size : int, default 0
        Drop domains with fewer rows (after ``dropna`` and ``drop_duplicates``).
    drop_duplicates : bool, default False
        Drop rows that repeat an earlier row (same domain and scores); they are counted
        either way.

    Returns
    -------
    Leaderboard

    Raises
    ------
    ValueError
        One line naming the problem: unreadable or malformed file, duplicated or missing
        column, non-numeric, infinite or missing score, missing domain, no rows left.
    """
    path = Path(path)
    benchmarks = list(benchmarks)
    if len(benchmarks) < 2:
        raise ValueError(f"--benchmarks needs at least two columns, got {benchmarks}")
    dup = sorted({b for b in benchmarks if benchmarks.count(b) > 1})
    if dup:
        raise ValueError(f"--benchmarks lists column(s) {dup} more than once")
    if domain_col in benchmarks:
        raise ValueError(f"--domain-col {domain_col!r} is also listed in --benchmarks")
    if path.is_dir():
        raise ValueError(f"{path}: is a folder, not a CSV file")
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    used = [domain_col, *benchmarks]
    header = _read_header(path)
    _check_header(path, header, used)
    df = _read_frame(path)
    missing = [c for c in used if c not in df.columns]
    if missing:
        raise ValueError(
            f"{path}: missing column(s) {missing}; the CSV has {_show_columns(df.columns)}"
        )
    if df.empty:
        raise ValueError(f"{path}: no data rows (only a header)")
    X = pd.DataFrame({col: _numeric_column(path, df, col) for col in benchmarks})
    labels = df[domain_col]
    incomplete = X.isna().any(axis=1) | labels.isna()
    dropped: dict = {}
    if incomplete.any():
        row = int(np.flatnonzero(incomplete.to_numpy())[0])
        if not dropna:
            what = (
                f"column {domain_col!r} has a missing domain"
                if pd.isna(labels.iloc[row])
                else f"a missing score in {[c for c in benchmarks if pd.isna(X[c].iloc[row])]}"
            )
            raise ValueError(
                f"{path}: {what} (data row {row + 1}); pass --dropna to drop "
                "incomplete rows, or complete them"
            )
        names = (
            labels[incomplete]
            .astype(object)
            .where(labels[incomplete].notna(), MISSING_DOMAIN)
            .astype(str)
        )
        dropped = {str(k): int(v) for k, v in names.value_counts(sort=False).sort_index().items()}
        X, labels = X[~incomplete], labels[~incomplete]
        if X.empty:
            raise ValueError(
                f"{path}: every row has a missing score or domain (nothing left after --dropna)"
            )
    _check_scale(path, X, np.asarray(X.index))
    repeated = _duplicates(labels, X)
    n_repeated = int(repeated.sum())
    if drop_duplicates and n_repeated:
        X, labels = X[~repeated], labels[~repeated]
    frame = X.assign(**{domain_col: labels.astype(str).to_numpy(dtype=object)})
    names, counts = np.unique(frame[domain_col].to_numpy(dtype=str), return_counts=True)
    small = {str(k): int(v) for k, v in zip(names, counts) if v < min_domain_size}
    kept = [str(k) for k in names if str(k) not in small]
    if not kept:
        raise ValueError(
            f"{path}: every domain has fewer than {min_domain_size} rows "
            "(nothing left after --min-domain-size)"
        )
    X, domains = domain_data(frame, kept, benchmarks, by=domain_col, context=str(path))
    return Leaderboard(
        X,
        domains,
        rows_read=len(df),
        dropped_incomplete=dropped,
        dropped_domains=small,
        duplicated_rows=n_repeated,
        dropped_duplicates=n_repeated if drop_duplicates else 0,
    )


def read_leaderboard_csv(
    path: str | os.PathLike, domain_col: str, benchmarks: list[str]
) -> tuple[pd.DataFrame, np.ndarray]:
    """Read and validate ``path``: the benchmark columns (floats) and the domain labels.

    The strict form of :func:`load_leaderboard` (nothing dropped).
    """
    board = load_leaderboard(path, domain_col, benchmarks)
    return board.X, board.domains


# --------------------------------------------------------------------------- outputs
# kept here for the scripts of the first version; see :mod:`hca.cli.outputs`
from hca.cli.outputs import check_output_path, write_atomic  # noqa: E402
