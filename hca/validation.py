"""Input validation shared by the whole library: clear errors naming the column, domain or row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "top_groups",
]


# =========================================================================== input checks
def label_order(labels: np.ndarray) -> list:
    """Sorted unique labels (by ``str`` when the labels are not mutually comparable)."""
    unique = list(pd.unique(pd.Series(labels, dtype=object)))
    try:
        return sorted(unique)
    except TypeError:
        return sorted(unique, key=str)


def as_numeric_frame(X: Any) -> tuple[np.ndarray, list[str], bool, pd.Index | None]:
    """Return ``(values, column names, has_names, row index)`` for an array or DataFrame."""
    if isinstance(X, pd.DataFrame):
        bad = [str(c) for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
        if bad:
            raise TypeError(f"X has non-numeric column(s) {bad}; benchmark scores must be numbers")
        names = [str(c) for c in X.columns]
        return X.to_numpy(dtype=float), names, True, X.index
    try:
        values = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"X must be a numeric array or DataFrame ({err})") from None
    if values.ndim != 2:
        raise ValueError(f"X must be 2-D (models x benchmarks), got {values.ndim} dimension(s)")
    return values, [f"x{j}" for j in range(values.shape[1])], False, None


def check_finite(values: np.ndarray, names: list[str], index: pd.Index | None) -> None:
    """Raise naming the columns and rows with NaN or infinite values."""
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    cols = [names[j] for j in np.flatnonzero(bad.any(axis=0))]
    rows = np.flatnonzero(bad.any(axis=1))
    shown = index[rows[:5]].tolist() if index is not None else rows[:5].tolist()
    more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
    raise ValueError(
        f"X contains NaN or infinite values in column(s) {cols}, rows {shown}{more}; "
        "impute or drop them first"
    )


def check_constant(values: np.ndarray, names: list[str]) -> None:
    """Raise naming the constant columns."""
    constant = [names[j] for j in range(values.shape[1]) if np.ptp(values[:, j]) == 0]
    if constant:
        raise ValueError(f"X has constant column(s) {constant}; drop them before fitting")


def check_domains(domains: Any, n_rows: int) -> np.ndarray:
    """Domain labels as an object array of length ``n_rows``."""
    labels = np.asarray(domains, dtype=object)
    if labels.ndim != 1:
        raise ValueError(f"domains must be 1-D (one label per model), got shape {labels.shape}")
    if len(labels) != n_rows:
        raise ValueError(
            f"X has {n_rows} rows but domains has {len(labels)} labels; one label per row is needed"
        )
    if pd.isna(pd.Series(labels)).any():
        raise ValueError("domains contains missing labels (None/NaN)")
    return labels


def check_domain_sizes(labels: np.ndarray, order: list, n_benchmarks: int) -> None:
    """Need at least two domains, each with at least ``n_benchmarks`` models."""
    if len(order) < 2:
        raise ValueError(
            f"HCA needs at least 2 domains, found {len(order)} ({order!r}); "
            "a single domain does not identify the causal order"
        )
    for label in order:
        count = int(np.sum(labels == label))
        if count < n_benchmarks:
            raise ValueError(
                f"domain {label!r} has {count} models but at least {n_benchmarks} "
                f"(the number of benchmarks) are needed"
            )


def check_n_components(n_components: Any, n_benchmarks: int) -> int:
    """``1 <= n_components <= n_benchmarks``."""
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)):
        raise TypeError(f"n_components must be an int, got {type(n_components).__name__}")
    if not 1 <= n_components <= n_benchmarks:
        raise ValueError(
            f"n_components ({n_components}) must be between 1 and the number of "
            f"benchmarks ({n_benchmarks})"
        )
    return int(n_components)


def validate_hca_data(X: Any, domains: Any, n_components: Any):
    """Validate ``X``/``domains``; return ``(values, names, has_names, labels, order, d)``."""
    values, names, has_names, index = as_numeric_frame(X)
    if values.size == 0:
        raise ValueError(f"X is empty (shape {values.shape})")
    labels = check_domains(domains, values.shape[0])
    d = check_n_components(n_components, values.shape[1])
    check_finite(values, names, index)
    check_constant(values, names)
    order = label_order(labels)
    check_domain_sizes(labels, order, values.shape[1])
    return values, names, has_names, labels, order, d


def check_n_restarts(n_restarts: Any) -> int:
    if isinstance(n_restarts, bool) or not isinstance(n_restarts, (int, np.integer)) \
            or n_restarts < 1:
        raise ValueError(f"n_restarts must be a positive int, got {n_restarts!r}")
    return int(n_restarts)


# --------------------------------------------------------------------------- input checks
def check_matrix(X: Any, name: str = "X") -> np.ndarray:
    """Return ``X`` as a finite 2-D float array; raise naming what is wrong."""
    if isinstance(X, pd.DataFrame):
        non_numeric = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
        if non_numeric:
            raise TypeError(f"{name} has non-numeric columns {non_numeric}")
        bad = X.isna().sum()
        bad = bad[bad > 0]
        if len(bad):
            detail = ", ".join(f"{c!r}: {n}" for c, n in bad.items())
            raise ValueError(
                f"{name} contains missing values (NaN) in columns {{{detail}}}; "
                "drop or impute them first"
            )
        arr = X.to_numpy(dtype=float)
    else:
        try:
            arr = np.asarray(X, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be numeric, got {type(X).__name__}") from exc
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows x benchmarks), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        rows, cols = np.nonzero(~np.isfinite(arr))
        raise ValueError(
            f"{name} contains {rows.size} NaN/inf entries (first at row {rows[0]}, "
            f"column {cols[0]}); drop or impute them first"
        )
    return arr


def check_n_features_components(n_components: Any, n_features: int) -> int:
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)):
        raise TypeError(f"n_components must be an int, got {n_components!r}")
    if not 1 <= n_components <= n_features:
        raise ValueError(
            f"n_components must be between 1 and the number of benchmarks "
            f"({n_features}), got {n_components}"
        )
    return int(n_components)


def is_missing_label(label: Any) -> bool:
    try:
        return bool(pd.isna(label))
    except (TypeError, ValueError):
        return False


def check_groups(groups: Any, n_rows: int) -> np.ndarray:
    arr = np.asarray(groups, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"groups must be 1-D (one label per row), got shape {arr.shape}")
    if arr.shape[0] != n_rows:
        raise ValueError(
            f"groups has {arr.shape[0]} labels but X has {n_rows} rows; "
            "pass one label per row"
        )
    return arr


def resolve_order(groups: np.ndarray, order: Sequence | None) -> list:
    if order is None:
        missing = int(sum(is_missing_label(g) for g in groups))
        if missing:
            raise ValueError(
                f"groups contains {missing} missing labels; pass order=[...] to choose "
                "the groups to compare"
            )
        return top_groups(groups, len(pd.unique(groups)))
    order = list(order)
    if len(order) == 0:
        raise ValueError("order is empty; give at least one group label")
    dup = [g for g in pd.unique(np.asarray(order, dtype=object)) if order.count(g) > 1]
    if dup:
        raise ValueError(f"order lists these groups more than once: {dup}")
    present = set(g for g in groups if not is_missing_label(g))
    absent = [g for g in order if g not in present]
    if absent:
        raise ValueError(f"order names groups with no rows in groups: {absent}")
    return order


def split_by_domain(X: Any, groups: Any, order: Sequence | None) -> tuple[list, dict]:
    arr = check_matrix(X)
    g = check_groups(groups, arr.shape[0])
    labels = resolve_order(g, order)
    return labels, {lab: arr[g == lab] for lab in labels}


# --------------------------------------------------------------------------- groups
def top_groups(groups: Any, n: int) -> list:
    """The ``n`` most frequent labels, most frequent first (ties: first appearance).

    Missing labels (None/NaN) are not counted.

    Raises
    ------
    ValueError
        If there are fewer than ``n`` distinct labels.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    arr = np.asarray(groups, dtype=object).ravel()
    labels = [g for g in arr if not is_missing_label(g)]
    counts = Counter(labels)  # insertion order = first appearance
    ranked = sorted(counts, key=lambda lab: -counts[lab])  # stable sort keeps ties in order
    if len(ranked) < n:
        raise ValueError(f"asked for the top {n} groups but there are only {len(ranked)}")
    return list(ranked[:n])


# ----------------------------------------------------------------------------- input checks
def check_vector(a, name: str) -> np.ndarray:
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric, could not convert: {exc}") from exc
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, found shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(
            f"{name} contains {int(bad.sum())} NaN/inf value(s) (first at position "
            f"{int(np.flatnonzero(bad)[0])}); drop or impute them first"
        )
    return arr


def check_treatment(t, name: str = "t") -> np.ndarray:
    arr = np.asarray(t)
    if arr.dtype == bool:
        arr = arr.astype(float)
    arr = check_vector(arr, name)
    values = np.unique(arr)
    if not np.isin(values, (0.0, 1.0)).all():
        raise ValueError(
            f"{name} must be binary (0 = pretrained, 1 = fine-tuned); found values "
            f"{values[~np.isin(values, (0.0, 1.0))][:5].tolist()}"
        )
    return arr.astype(int)


def check_same_length(**arrays: np.ndarray) -> int:
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"inputs must have the same length, found {lengths}")
    return next(iter(lengths.values()))


def check_ci(ci: float) -> None:
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), found {ci}")


def check_cluster_groups(groups, n: int) -> np.ndarray | None:
    if groups is None:
        return None
    g = np.asarray(groups)
    if g.ndim != 1 or len(g) != n:
        raise ValueError(f"groups must be one-dimensional of length {n}, found shape {g.shape}")
    if pd.isna(g).any():
        raise ValueError("groups contains missing values")
    return g


def check_panel_columns(df: pd.DataFrame, cols: list[str]) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, found {type(df).__name__}")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"df is missing column(s) {missing}")


MAX_SHOW = 10  # offending rows/columns listed in an error message


# --------------------------------------------------------------------------- input checks
def labels_of(X: Any) -> tuple[list, list]:
    """Row and column labels used in messages (DataFrame labels or integer positions)."""
    if isinstance(X, pd.DataFrame):
        return list(X.index), list(X.columns)
    arr = np.asarray(X)
    return list(range(arr.shape[0])), list(range(arr.shape[1]))


def show_items(labels: Sequence, idx: np.ndarray) -> str:
    """Format the labels at positions ``idx``, at most ``MAX_SHOW`` of them."""
    idx = np.asarray(idx)
    shown = [labels[i] for i in idx[:MAX_SHOW]]
    more = f" and {len(idx) - MAX_SHOW} more" if len(idx) > MAX_SHOW else ""
    return f"{shown}{more}"


def check_matrix_with_missing(X: Any, name: str = "X") -> np.ndarray:
    """Return ``X`` as a 2-D float array (NaN allowed, +-inf not)."""
    if isinstance(X, pd.DataFrame):
        bad = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
        if bad:
            raise TypeError(f"{name} has non-numeric columns {bad}")
        arr = X.to_numpy(dtype=float, na_value=np.nan)
    else:
        try:
            arr = np.asarray(X, dtype=float)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name} must be a numeric 2-D array or DataFrame: {err}") from err
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D; got {arr.ndim} dimension(s), shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape})")
    if np.isinf(arr).any():
        r, c = np.argwhere(np.isinf(arr))[0]
        rows, cols = labels_of(X)
        raise ValueError(f"{name} has infinite entries (first at row {rows[r]!r}, "
                         f"column {cols[c]!r}); only NaN marks a missing entry")
    return arr


def check_columns(X: Any, names: Sequence[str], what: str) -> np.ndarray:
    """``X`` as a float array with the columns ``names`` (DataFrame) or as given (array)."""
    if isinstance(X, pd.DataFrame):
        missing = [c for c in names if c not in X.columns]
        if missing:
            raise ValueError(f"{what}: column(s) {missing} missing; expected {list(names)}")
        values = X[list(names)].to_numpy(dtype=float)
    else:
        values = np.asarray(X, dtype=float)
        if values.ndim != 2 or values.shape[1] != len(names):
            raise ValueError(f"{what}: expected an array with {len(names)} columns, got shape "
                             f"{values.shape}")
    if not np.all(np.isfinite(values)):
        bad = np.where(~np.isfinite(values).all(axis=1))[0][:5].tolist()
        raise ValueError(f"{what}: NaN or infinite scores in row(s) {bad}")
    return values
