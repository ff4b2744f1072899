"""Inputs of ``python -m hca fit``: the leaderboard CSV (the outputs: :mod:`hca.cli.outputs`).

The CSV is a regular file or a pipe read once (:mod:`hca.cli.sources`); its domain column is
text, exactly as written (:mod:`hca.cli.labels`). Every problem is reported as a one-line
:class:`hca.validation.InputError` (a ``ValueError``) naming the file, the column, the row
or the option, before anything is fitted. What is odd but usable becomes a note
(:attr:`Leaderboard.notes`): domain names written in two Unicode forms or in two cases
(merged), labels that look like placeholders, benchmark columns on visibly different
scales, a domain, rows or part of a column on another scale (:mod:`hca.cli.scales`), a
benchmark nearly constant within a domain.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from hca.cli.labels import drop_labels, is_placeholder, normalise_labels, placeholder_note
from hca.cli.scales import ScaleFinding, scale_findings
from hca.cli.sources import Source, open_source
from hca.data import domain_data
from hca.validation import MAX_ABS_SCORE, MAX_SPREAD_RATIO, MIN_SPREAD, InputError, domain_spreads

__all__ = [
    "Leaderboard",
    "load_leaderboard",
    "PLOT_SUFFIXES",
    "MAX_ABS_SCORE",
    "MIN_SPREAD",
    "MAX_SPREAD_RATIO",
    "SCALE_NOTE_RATIO",
    "NEAR_CONSTANT_SHARE",
    "NEAR_CONSTANT_SPREAD",
    "NA_STRINGS",
    "data_rows_text",
]

PLOT_SUFFIXES = (".svg", ".png", ".pdf")
MISSING_DOMAIN = "(missing domain)"
#: Cells of a benchmark column read as missing (pandas' defaults); in the domain column only
#: an empty cell is missing, and ``NA``, ``None`` or ``N/A`` are labels as written.
NA_STRINGS = (
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
    "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
)  # fmt: skip


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
    notes : tuple of str
        What is odd but usable (merged spellings of a domain, placeholder labels, columns
        or rows on different scales, near-constant benchmarks), one line each.
    dropped_labels : dict
        Domain -> rows dropped by ``drop_domains`` (``--drop-domain``).
    case_spellings : dict
        Domain -> {spelling: rows}, for the domains written in several cases (merged).
    placeholders : dict
        Domain -> rows, for the domains (kept) whose label looks like a placeholder.
    scales : tuple of ScaleFinding
        A domain, rows or part of a column on another scale (:mod:`hca.cli.scales`).
    data_rows : ndarray of int
        The data row (0-based, in the file) of every kept row.
    stream : bool
        Whether the CSV came from a pipe or standard input (read once).
    """

    X: pd.DataFrame
    domains: np.ndarray
    rows_read: int
    dropped_incomplete: dict = field(default_factory=dict)
    dropped_domains: dict = field(default_factory=dict)
    duplicated_rows: int = 0
    dropped_duplicates: int = 0
    notes: tuple = ()
    dropped_labels: dict = field(default_factory=dict)
    case_spellings: dict = field(default_factory=dict)
    placeholders: dict = field(default_factory=dict)
    scales: tuple = ()
    data_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    stream: bool = False

    def domain_sizes(self) -> dict:
        """Domain -> rows used, in sorted order of the domains."""
        labels, counts = np.unique(self.domains, return_counts=True)
        return {str(k): int(v) for k, v in zip(labels, counts)}


def _read_header(source: Source) -> list[str]:
    try:
        with source.open() as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as fh:
            header = next(csv.reader(fh), None)
    except UnicodeDecodeError:
        raise InputError(f"{source}: malformed CSV (not UTF-8 text)") from None
    except csv.Error as err:
        raise InputError(f"{source}: malformed CSV ({err})") from None
    if not header or all(not h.strip() for h in header):
        raise InputError(f"{source}: malformed CSV (empty file or empty header line)")
    return header


def _check_header(path: Source, header: list[str], used: list[str]) -> None:
    """Duplicated names among the columns used are ambiguous: refuse them."""
    for name in used:
        where = [i + 1 for i, h in enumerate(header) if h == name]
        if len(where) > 1:
            raise InputError(
                f"{path}: column {name!r} appears {len(where)} times in the header "
                f"(columns {', '.join(map(str, where))}); rename the copies"
            )


def _read_frame(source: Source, domain_col: str, benchmarks: list[str]) -> pd.DataFrame:
    """The used columns: the domain column as text exactly as written (only an empty cell
    is missing), the benchmarks with pandas' missing-value strings (:data:`NA_STRINGS`)."""
    na = {col: list(NA_STRINGS) for col in benchmarks}
    na[domain_col] = [""]
    try:
        with source.open() as fh:
            return pd.read_csv(
                fh,
                encoding="utf-8-sig",
                usecols=[domain_col, *benchmarks],
                dtype={domain_col: str},
                keep_default_na=False,
                na_values=na,
            )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise InputError(f"{source}: malformed CSV ({first})") from None


def _numeric_column(path: Source, df: pd.DataFrame, col: str) -> pd.Series:
    raw = df[col]
    values = raw if pd.api.types.is_numeric_dtype(raw) else pd.to_numeric(raw, errors="coerce")
    bad = values.isna() & raw.notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"{path}: column {col!r} is not numeric (data row {row + 1} holds {raw.iloc[row]!r})"
        )
    try:
        values = values.astype(float)
    except (TypeError, ValueError):
        raise InputError(f"{path}: column {col!r} is not numeric") from None
    inf = np.isinf(values.to_numpy())
    if inf.any():
        row = int(np.flatnonzero(inf)[0])
        raise InputError(
            f"{path}: column {col!r} has an infinite score "
            f"(data row {row + 1} holds {raw.iloc[row]!r})"
        )
    return values


#: The library's limits (:mod:`hca.validation`): scores beyond ``MAX_ABS_SCORE`` in absolute
#: value, a spread within a domain below ``MIN_SPREAD``, two spreads within a domain more than
#: ``MAX_SPREAD_RATIO`` apart are refused; here they are checked first, naming the data row.
#: A note when the largest |score| of one benchmark is this many times another's (one column
#: within 0-1, another up to 100): the MIC and the order depend on each column's scale.
SCALE_NOTE_RATIO = 10.0
#: A note when one value holds this share of a domain's rows in a benchmark, or when the
#: benchmark's spread within the domain is below ``NEAR_CONSTANT_SPREAD`` times the domain's
#: largest |score| (its own: a domain on another scale is not "constant"): ICA then rests on
#: a few models or on rounding.
NEAR_CONSTANT_SHARE = 0.9
NEAR_CONSTANT_SPREAD = 1e-3


def _refuse_scale(path: Source, X: pd.DataFrame, rows: np.ndarray) -> None:
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
    raise InputError(
        f"{path}: column {X.columns[col]!r} holds {values[row, col]:.3g} (data "
        f"row {int(rows[row]) + 1}), too large to fit safely (the limit is "
        f"{MAX_ABS_SCORE:.0e} and squared sums must stay finite); rescale the "
        "scores (e.g. to percent or to a 0-1 range)"
    )


def _spread_problems(
    path: Source, X: pd.DataFrame, domains: np.ndarray, rows: np.ndarray
) -> list[str]:
    """Refuse spreads whose squares underflow, or that float64 cannot hold side by side in
    one domain; return notes for near-constant benchmarks (naming column and domains)."""
    values = X.to_numpy(dtype=float)
    names = [str(c) for c in X.columns]
    flat: dict[str, list[str]] = {}
    for label in pd.unique(domains):
        mask = domains == label
        block = values[mask]
        spread = domain_spreads(block)
        live = spread > 0  # a constant benchmark is refused by the library's own check
        tiny = live & (spread < MIN_SPREAD)
        if tiny.any():
            j = int(np.flatnonzero(tiny)[0])
            raise InputError(
                f"{path}: column {names[j]!r} varies by only about {spread[j]:.1g} within "
                f"domain {label!r}: the squares of such differences underflow float64 "
                f"(below {MIN_SPREAD**2:.0e}), so ICA cannot whiten the scores; rescale the "
                "scores (e.g. to percent or to a 0-1 range)"
            )
        if live.sum() >= 2:
            hi = int(np.argmax(np.where(live, spread, -np.inf)))
            lo = int(np.argmin(np.where(live, spread, np.inf)))
            if spread[hi] > MAX_SPREAD_RATIO * spread[lo]:
                col = block[:, hi]
                far = int(np.argmax(np.abs(col - np.median(col))))
                row = int(rows[np.flatnonzero(mask)[far]]) + 1
                raise InputError(
                    f"{path}: within domain {label!r} column {names[hi]!r} varies "
                    f"{spread[hi] / spread[lo]:.1g} times more than column {names[lo]!r} "
                    f"(standard deviations {spread[hi]:.3g} and {spread[lo]:.3g}; "
                    f"{names[hi]!r} holds {col[far]:.3g} at data row {row}): beyond "
                    f"{MAX_SPREAD_RATIO:.0e}, float64 loses the smaller one when their squares "
                    "are summed; check that value, or rescale the columns to one scale"
                )
        # one value on at least m of the n sorted rows: rows i and i + m - 1 are equal
        ordered = np.sort(block, axis=0)
        m = max(1, math.ceil(NEAR_CONSTANT_SHARE * len(block)))
        one_value = np.any(ordered[: len(block) - m + 1] == ordered[m - 1 :], axis=0)
        top = np.max(np.abs(block), axis=0)  # the domain's own: another scale is not "constant"
        near = live & (one_value | (spread < NEAR_CONSTANT_SPREAD * top))
        for j in np.flatnonzero(near):
            flat.setdefault(names[j], []).append(str(label))
    notes = []
    n_domains = len(pd.unique(domains))
    for name, doms in flat.items():
        shown = ", ".join(doms[:3]) + (f" and {len(doms) - 3} more" if len(doms) > 3 else "")
        where = f"every domain ({n_domains})" if len(doms) == n_domains else f"domain(s) {shown}"
        notes.append(
            f"benchmark {name!r} is nearly constant within {where} (one value on "
            f"at least {NEAR_CONSTANT_SHARE:.0%} of the rows, or a spread below "
            f"{NEAR_CONSTANT_SPREAD:g} of the domain's largest |score|): ICA in those domains "
            "rests on "
            "a few models or on rounding; consider dropping the benchmark or the domains"
        )
    return notes


def _scale_note(X: pd.DataFrame) -> str | None:
    """A note when benchmark columns sit on visibly different scales."""
    top = X.abs().max(axis=0)
    top = top[top > 0]
    if len(top) < 2 or top.max() < SCALE_NOTE_RATIO * top.min():
        return None
    small, large = str(top.idxmin()), str(top.idxmax())
    return (
        f"benchmark columns sit on different scales: {small!r} within +-{top.min():.3g}, "
        f"{large!r} up to {top.max():.3g} ({top.max() / top.min():.0f} times larger); "
        "HCA's MIC and causal order depend on each column's scale, so put every score on "
        "one scale (e.g. all in percent)"
    )


def data_rows_text(rows: Sequence[int], n: int = 5) -> str:
    """``"data rows 3, 7, 9 and 118 more"`` (1-based, in file order) for 0-based rows."""
    shown = sorted(int(r) + 1 for r in rows)
    more = f" and {len(shown) - n:,} more" if len(shown) > n else ""
    word = "data row" if len(shown) == 1 else "data rows"
    return f"{word} {', '.join(map(str, shown[:n]))}{more}"


def _factor_text(factor: float) -> str:
    """``"about 120 times smaller"`` or ``"about 60 times larger"`` (two significant
    digits)."""
    x = factor if factor >= 1 else 1 / max(factor, 1e-300)
    digits = max(0, 1 - int(math.floor(math.log10(x))))
    shown = f"{round(x, 1 - int(math.floor(math.log10(x)))):,.{digits}f}"
    return f"about {shown} times {'smaller' if factor >= 1 else 'larger'}"


def _columns_text(columns: Sequence[str], every: Sequence[str]) -> str:
    if len(columns) == len(every):
        return "in every benchmark"
    shown = ", ".join(repr(c) for c in columns[:6])
    more = f" and {len(columns) - 6} more" if len(columns) > 6 else ""
    return f"in {shown}{more}"


def scale_notes(
    findings: Sequence[ScaleFinding], data_rows: np.ndarray, sizes: dict, columns: Sequence[str]
) -> list[str]:
    """One note for the domains off the main scale, one per set of rows or part of a column,
    naming the domains and the data rows (``data_rows``: the file's row of every fitted
    row; ``sizes``: domain -> rows)."""
    notes = []
    fix = (
        "HCA's MIC and causal order depend on each score's scale (e.g. 0-1 among 0-100), "
        "so put every score on one scale"
    )
    domains = [f for f in findings if f.kind == "domain"]
    if domains:
        listed = "; ".join(
            f"{name!r} ({sizes[name]:,} rows, {_factor_text(f.factor)} "
            f"{_columns_text(f.columns, columns)})"
            for f in domains
            for name in f.domains
        )
        others = len(sizes) - len(domains)
        notes.append(
            f"{len(domains)} domain{'s' * (len(domains) > 1)} sit{'s' * (len(domains) == 1)} "
            f"on another scale than the other {others} domain{'s' * (others != 1)}: "
            f"{listed}; {fix}"
        )
    for f in findings:
        where = data_rows_text(data_rows[list(f.rows)])
        if f.kind == "rows":
            ((name, n),) = f.domains.items()
            notes.append(
                f"{n:,} of the {sizes[name]:,} rows of domain {name!r} ({where}) hold scores "
                f"{_factor_text(f.factor)} than the domain's other rows "
                f"{_columns_text(f.columns, columns)}; {fix}"
            )
        elif f.kind == "cells":
            doms = ", ".join(repr(d) for d in list(f.domains)[:4])
            more = f" and {len(f.domains) - 4} more" if len(f.domains) > 4 else ""
            notes.append(
                f"benchmark {f.columns[0]!r}: {len(f.rows):,} rows (in domain"
                f"{'s' * (len(f.domains) > 1)} {doms}{more}; {where}) hold scores "
                f"{_factor_text(f.factor)} than the rest of their row says; {fix}"
            )
    return notes


def _duplicates(labels: pd.Series, X: pd.DataFrame) -> np.ndarray:
    """Rows repeating an earlier row: same domain and the same score on every benchmark."""
    frame = X.copy()
    frame["__domain__"] = labels.astype(str).to_numpy()
    return frame.duplicated(keep="first").to_numpy()


def _check_arguments(path: object, domain_col: object, benchmarks: object) -> list[str]:
    """The kinds of ``load_leaderboard``'s arguments, and the benchmark list's own rules."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"path must name the CSV file (a str or path-like), got {type(path).__name__}"
            + (f" {path!r}" if path is None or isinstance(path, (int, float)) else "")
        )
    if not isinstance(domain_col, str):
        raise TypeError(
            f"domain_col must be the name of a column (a str), got {type(domain_col).__name__}"
        )
    if (
        isinstance(benchmarks, str)
        or not isinstance(benchmarks, Iterable)
        or not all(isinstance(b, str) for b in benchmarks)
    ):
        raise TypeError(
            "benchmarks must be a list of column names (str), e.g. ['ifeval', 'bbh'], got "
            f"{benchmarks!r}"
        )
    names = list(benchmarks)
    if len(names) < 2:
        raise InputError(f"--benchmarks needs at least two columns, got {names}")
    dup = sorted({b for b in names if names.count(b) > 1})
    if dup:
        raise InputError(f"--benchmarks lists column(s) {dup} more than once")
    if domain_col in names:
        raise InputError(f"--domain-col {domain_col!r} is also listed in --benchmarks")
    return names


def _incomplete(
    source: Source, X: pd.DataFrame, labels: pd.Series, domain_col: str, dropna: bool
) -> tuple[pd.DataFrame, pd.Series, dict]:
    """Rows with a missing score or domain: refused, or dropped and counted per domain."""
    incomplete = X.isna().any(axis=1) | labels.isna()
    if not incomplete.any():
        return X, labels, {}
    row = int(np.flatnonzero(incomplete.to_numpy())[0])
    if not dropna:
        what = (
            f"column {domain_col!r} has a missing domain"
            if pd.isna(labels.iloc[row])
            else f"a missing score in {[c for c in X.columns if pd.isna(X[c].iloc[row])]}"
        )
        raise InputError(
            f"{source}: {what} (data row {X.index[row] + 1}); pass --dropna to drop "
            "incomplete rows, or complete them"
        )
    lost = labels[incomplete].astype(object)
    names = lost.where(lost.notna(), MISSING_DOMAIN).astype(str)
    dropped = {str(k): int(v) for k, v in names.value_counts(sort=False).sort_index().items()}
    X, labels = X[~incomplete], labels[~incomplete]
    if X.empty:
        raise InputError(
            f"{source}: every row has a missing score or domain (nothing left after --dropna)"
        )
    return X, labels, dropped


def load_leaderboard(
    path: str | os.PathLike | Source,
    domain_col: str,
    benchmarks: Sequence[str],
    *,
    dropna: bool = False,
    min_domain_size: int = 0,
    drop_duplicates: bool = False,
    drop_domains: Sequence[str] = (),
) -> Leaderboard:
    """Read and validate a leaderboard CSV.

    Parameters
    ----------
    path : path-like or Source
        CSV (UTF-8) with a header line, one row per model: a regular file, ``"-"`` for
        standard input, or a pipe (``/dev/stdin``, ``/dev/fd/N``, a FIFO), read once
        (:func:`hca.cli.sources.open_source`).
    domain_col : str
        Column naming each model's domain, read as text exactly as written.
    benchmarks : sequence of str
        Benchmark columns (numeric scores), at least two, distinct, not ``domain_col``.
    dropna : bool, default False
        Drop rows with a missing score or domain (counted per domain) instead of refusing.
    min_domain_size : int, default 0
        Drop domains with fewer rows (after ``dropna`` and ``drop_duplicates``).
    drop_duplicates : bool, default False
        Drop rows that repeat an earlier row (same domain and scores); they are counted
        either way.
    drop_domains : sequence of str, default ()
        Domain labels whose rows are dropped first (compared after NFC normalisation and
        case folding; counted), e.g. placeholders such as ``"Removed"``.

    Returns
    -------
    Leaderboard

    Raises
    ------
    TypeError
        ``path``, ``domain_col`` or ``benchmarks`` of the wrong kind (e.g. ``None``).
    InputError
        A ``ValueError`` of one line naming the problem: a missing, unreadable, malformed
        or non-regular file (a folder, a device, a link loop), duplicated or missing column,
        non-numeric, infinite, missing or badly scaled score, missing domain, domains that
        print the same, a ``drop_domains`` label not in the file, no rows left.
    """
    benchmarks = _check_arguments(
        path.name if isinstance(path, Source) else path, domain_col, benchmarks
    )
    source = path if isinstance(path, Source) else open_source(path)
    used = [domain_col, *benchmarks]
    header = _read_header(source)
    _check_header(source, header, used)
    missing = [c for c in used if c not in header]
    if missing:
        raise InputError(
            f"{source}: missing column(s) {missing}; the CSV has {_show_columns(header)}"
        )
    df = _read_frame(source, domain_col, benchmarks)
    if df.empty:
        raise InputError(f"{source}: no data rows (only a header)")
    X = pd.DataFrame({col: _numeric_column(source, df, col) for col in benchmarks})
    spelled = normalise_labels(df[domain_col])
    notes = list(spelled.notes)
    labels = spelled.values
    keep, dropped_labels = drop_labels(labels, drop_domains)
    X, labels = X[keep.to_numpy()], labels[keep.to_numpy()]
    if X.empty:
        raise InputError(f"{source}: every row was dropped by --drop-domain")
    X, labels, dropped = _incomplete(source, X, labels, domain_col, dropna)
    _refuse_scale(source, X, np.asarray(X.index))
    repeated = _duplicates(labels, X)
    n_repeated = int(repeated.sum())
    if drop_duplicates and n_repeated:
        X, labels = X[~repeated], labels[~repeated]
    frame = X.assign(**{domain_col: labels.astype(str).to_numpy(dtype=object)})
    names, counts = np.unique(frame[domain_col].to_numpy(dtype=str), return_counts=True)
    small = {str(k): int(v) for k, v in zip(names, counts) if v < min_domain_size}
    kept = [str(k) for k in names if str(k) not in small]
    if not kept:
        raise InputError(
            f"{source}: every domain has fewer than {min_domain_size} rows "
            "(nothing left after --min-domain-size)"
        )
    X, domains = domain_data(frame, kept, benchmarks, by=domain_col, context=str(source))
    rows = np.asarray(frame.index[np.isin(frame[domain_col].to_numpy(dtype=str), kept)])
    sizes = {str(k): int(v) for k, v in zip(names, counts) if str(k) in kept}
    note = placeholder_note(sizes)
    if note:
        notes.append(note)
    findings = tuple(scale_findings(X.to_numpy(dtype=float), np.asarray(domains), benchmarks))
    notes += scale_notes(findings, rows, sizes, benchmarks)
    notes += _spread_problems(source, X, np.asarray(domains, dtype=object), rows)
    note = _scale_note(X)
    if note:
        notes.append(note)
    return Leaderboard(
        X,
        domains,
        rows_read=len(df),
        dropped_incomplete=dropped,
        dropped_domains=small,
        duplicated_rows=n_repeated,
        dropped_duplicates=n_repeated if drop_duplicates else 0,
        notes=tuple(notes),
        dropped_labels=dropped_labels,
        case_spellings={k: v for k, v in spelled.case_spellings.items() if k in sizes},
        placeholders={k: v for k, v in sizes.items() if is_placeholder(k)},
        scales=findings,
        data_rows=rows,
        stream=source.stream,
    )
