"""Input checks shared by the whole library, built on :mod:`sklearn.utils.validation`.

Every public function of :mod:`hca` checks its inputs with these helpers, so that bad input
raises the same one-line error everywhere, naming the column, domain or row at fault:

* :func:`check_matrix` -- a 2-D numeric matrix (array or DataFrame) of scores, converted by
  :func:`sklearn.utils.validation.check_array`; options for missing entries (``allow_nan``),
  named columns (``require_names``) and the fitted benchmark columns (``columns``).
* :func:`check_vector` -- a 1-D numeric vector, optionally binary (a treatment);
  :func:`check_same_length` for several vectors that describe the same units.
* :func:`check_domains` -- one domain label (base model) per row of ``X``: length, missing
  labels, a pandas index that matches ``X``'s, the domains to use (``order``) and, for ICA,
  enough models per domain and no benchmark constant within a domain (``full_rank``).
* :func:`check_fit_data` -- the three checks HCA and its ICA step make, as one call.
* :func:`check_n_components`, :func:`check_positive_int`, :func:`check_fraction` -- scalars.
* :func:`check_frame` -- a DataFrame with the columns a function needs.
* :func:`check_labels` -- display labels, one per row or column of a matrix.
* :func:`check_is_fitted` and :class:`NotFittedError` are scikit-learn's.
* :func:`check_params` -- an estimator's parameters against its ``_parameter_constraints``,
  by scikit-learn's own validation (:class:`Interval`, :class:`StrOptions`); its
  :class:`InvalidParameterError` is a ``ValueError`` and a ``TypeError``.
* :class:`InputError` -- the ``ValueError`` these checks raise: bad input, the user's to fix
  (the command line reports it in one line; an error of any other kind is a bug).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import NotFittedError

# scikit-learn's parameter validation (the constraints its own estimators declare in
# ``_parameter_constraints``) lives in a module it marks private; scikit-learn-compatible
# libraries use it all the same. It is imported here only, and the rest of hca takes the
# names from this module.
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
    validate_parameter_constraints,
)
from sklearn.utils.validation import check_array, check_is_fitted

__all__ = [
    "MAX_ABS_SCORE",
    "MIN_SPREAD",
    "MAX_SPREAD_RATIO",
    "domain_spreads",
    "InputError",
    "Interval",
    "InvalidParameterError",
    "StrOptions",
    "check_params",
    "MAX_SHOW",
    "NotFittedError",
    "check_is_fitted",
    "labels_of",
    "show_labels",
    "check_matrix",
    "check_vector",
    "check_same_length",
    "Domains",
    "check_domains",
    "top_groups",
    "FitData",
    "check_fit_data",
    "check_n_components",
    "check_positive_int",
    "is_int",
    "check_fraction",
    "check_frame",
    "check_labels",
]

#: Offending rows, columns or labels listed in an error message.
MAX_SHOW = 10


class InputError(ValueError):
    """Bad input, named in the message (column, domain, row, file, option): the user's to
    fix. Every check of this module raises it (or a ``TypeError``) and the command line
    reports it in one line; any other exception from inside the library is a bug."""


def check_params(estimator: Any) -> None:
    """Validate ``estimator.get_params(deep=False)`` against the estimator class's
    ``_parameter_constraints`` with scikit-learn's own validation (its wording: "The
    'max_iter' parameter of HCA must be an int in the range [1, inf). Got 0 instead.").

    What ``BaseEstimator._validate_params`` does inside ``fit``, callable from outside, e.g.
    to check a command line's options before any data is read.

    Raises
    ------
    InvalidParameterError
        A ``ValueError`` and a ``TypeError``.
    """
    validate_parameter_constraints(
        type(estimator)._parameter_constraints,
        estimator.get_params(deep=False),
        caller_name=type(estimator).__name__,
    )


# =========================================================================== labels in messages
def labels_of(X: Any) -> tuple[list, list]:
    """Row and column labels used in messages: a DataFrame's index and columns, otherwise
    row positions and the names ``x0, x1, ...`` (scikit-learn's default feature names)."""
    if isinstance(X, pd.DataFrame):
        return list(X.index), [str(c) for c in X.columns]
    shape = np.shape(X)
    n_rows = shape[0] if len(shape) else 0
    n_cols = shape[1] if len(shape) > 1 else 0
    return list(range(n_rows)), [f"x{j}" for j in range(n_cols)]


def show_labels(labels: Sequence, idx: Any, limit: int = MAX_SHOW) -> str:
    """The labels at positions ``idx``, at most ``limit`` of them (``"[...] and 3 more"``)."""
    idx = np.asarray(idx, dtype=int).ravel()
    shown = [labels[i] for i in idx[:limit]]
    more = f" and {len(idx) - limit} more" if len(idx) > limit else ""
    return f"{shown}{more}"


# =========================================================================== matrices
def check_matrix(
    X: Any,
    *,
    name: str = "X",
    columns: Sequence[str] | None = None,
    allow_nan: bool = False,
    require_names: bool = False,
) -> np.ndarray:
    """``X`` as a 2-D float array (models x benchmarks), or a one-line error naming the fault.

    The conversion is :func:`sklearn.utils.validation.check_array`; the checks before and
    after it name the column and rows at fault.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_rows, n_columns)
    name : str, default="X"
        How the messages call ``X``.
    columns : sequence of str, optional
        The benchmark columns a fitted object expects: a DataFrame must have them (they are
        selected, in this order); an array must have that many columns.
    allow_nan : bool, default=False
        Let NaN mark missing entries (matrix completion); infinite values still raise.
    require_names : bool, default=False
        ``X`` must be a DataFrame (its column names name the benchmarks).

    Returns
    -------
    ndarray of shape (n_rows, n_columns), dtype float64

    Raises
    ------
    TypeError
        Not numeric, or not a DataFrame when ``require_names``.
    ValueError
        Duplicated or missing column names, not 2-D, empty, NaN (unless ``allow_nan``) or
        infinite entries.
    """
    if require_names and not isinstance(X, pd.DataFrame):
        raise TypeError(
            f"{name} must be a DataFrame whose columns name the benchmarks, got {type(X).__name__}"
        )
    if isinstance(X, pd.DataFrame):
        X = _checked_frame(X, name, columns)
    arr = _as_float_array(X, name)
    if arr.ndim != 2:
        raise InputError(
            f"{name} must be 2-D (models x benchmarks), got {arr.ndim} "
            f"dimension(s), shape {arr.shape}"
        )
    if arr.size == 0:
        raise InputError(f"{name} is empty (shape {arr.shape})")
    if columns is not None and arr.shape[1] != len(columns):
        raise InputError(
            f"{name} has {arr.shape[1]} columns but {len(columns)} benchmark "
            f"columns are expected ({list(columns)})"
        )
    _check_finite(arr, X, name, allow_nan)
    return arr


#: ``check_array``'s conversion to float64 alone (any shape; the checks here come after it).
_TO_FLOAT: dict[str, Any] = {
    "dtype": np.float64,
    "ensure_all_finite": False,
    "ensure_2d": False,
    "allow_nd": True,
    "ensure_min_samples": 0,
}


def _as_float_array(X: Any, name: str) -> np.ndarray:
    """``check_array``'s conversion to float64 (any dimension; the checks come after).

    Float ndarrays and DataFrames of plain numpy dtypes take a direct path (the library's
    inner loops call this thousands of times); everything else (lists, object or nullable
    pandas dtypes, sparse matrices) goes through :func:`sklearn.utils.validation.check_array`.
    """
    if isinstance(X, np.ndarray) and X.dtype == np.float64:
        return X
    if isinstance(X, pd.DataFrame) and all(
        isinstance(t, np.dtype) and t.kind in "fiub" for t in X.dtypes
    ):
        return X.to_numpy(dtype=np.float64)
    try:
        return check_array(X, **_TO_FLOAT, ensure_min_features=0)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a numeric array or DataFrame ({err})") from None


def _checked_frame(X: pd.DataFrame, name: str, columns: Sequence[str] | None) -> pd.DataFrame:
    """Duplicated, missing and non-numeric columns of a DataFrame."""
    names = X.columns
    if names.has_duplicates:
        dup = [str(c) for c in names[names.duplicated()].unique()]
        raise InputError(
            f"{name} has duplicated column name(s) {dup}; every benchmark needs its own column"
        )
    if columns is not None:
        missing = [c for c in columns if c not in X.columns]
        if missing:
            raise InputError(
                f"{name} is missing the fitted benchmark column(s) {missing} "
                f"(expected {list(columns)})"
            )
        if list(names) != list(columns):  # the same columns in the same order need no copy
            X = X[list(columns)]
    bad = [str(c) for c, t in X.dtypes.items() if not pd.api.types.is_numeric_dtype(t)]
    if bad:
        raise TypeError(f"{name} has non-numeric column(s) {bad}; benchmark scores must be numbers")
    return X


def _check_finite(arr: np.ndarray, X: Any, name: str, allow_nan: bool) -> None:
    bad = np.isinf(arr) if allow_nan else ~np.isfinite(arr)
    if not bad.any():
        return
    rows, cols = labels_of(X)
    bad_cols = [cols[j] for j in np.flatnonzero(bad.any(axis=0))]
    where = f"column(s) {bad_cols}, rows {show_labels(rows, np.flatnonzero(bad.any(axis=1)), 5)}"
    if allow_nan:
        raise InputError(
            f"{name} contains infinite values in {where}; only NaN marks a missing entry"
        )
    raise InputError(
        f"{name} contains NaN or infinite values in {where}; impute or drop them first"
    )


# =========================================================================== vectors
def check_vector(a: Any, name: str, *, binary: bool = False) -> np.ndarray:
    """``a`` as a finite 1-D float array; with ``binary=True`` a 0/1 int array (a treatment).

    Raises
    ------
    TypeError
        Not numeric.
    ValueError
        Not 1-D, NaN or infinite values, or (``binary``) values other than 0 and 1.
    """
    arr = np.asarray(a)
    if binary and arr.dtype == bool:
        arr = arr.astype(float)
    try:
        arr = check_array(arr, **_TO_FLOAT)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric, could not convert: {exc}") from exc
    if arr.ndim != 1:
        raise InputError(f"{name} must be one-dimensional, found shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise InputError(
            f"{name} contains {int(bad.sum())} NaN/inf value(s) (first at position "
            f"{int(np.flatnonzero(bad)[0])}); drop or impute them first"
        )
    if not binary:
        return arr
    values = np.unique(arr)
    other = values[~np.isin(values, (0.0, 1.0))]
    if other.size:
        raise InputError(
            f"{name} must be binary (0 = pretrained, 1 = fine-tuned); found values "
            f"{other[:5].tolist()}"
        )
    return arr.astype(int)


def check_same_length(**arrays: Any) -> int:
    """The common length of the named arrays (``x=..., t=..., y=...``), or an error listing all."""
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) != 1:
        raise InputError(f"inputs must have the same length, found {lengths}")
    return next(iter(lengths.values()))


# =========================================================================== domains
def _is_missing(label: Any) -> bool:
    try:
        return bool(pd.isna(label))
    except (TypeError, ValueError):
        return False


def _sorted_labels(labels: Sequence) -> list:
    """Sorted unique labels (by ``str`` when the labels are not mutually comparable)."""
    unique = list(pd.unique(pd.Series(list(labels), dtype=object)))
    try:
        return sorted(unique)
    except TypeError:
        return sorted(unique, key=str)


def top_groups(domains: Any, n: int) -> list:
    """The ``n`` most frequent labels, most frequent first (ties: first appearance).

    Missing labels (None/NaN) are not counted.

    Raises
    ------
    ValueError
        If there are fewer than ``n`` distinct labels.
    """
    n = check_positive_int(n, "n")
    arr = np.asarray(domains, dtype=object).ravel()
    counts = Counter(g for g in arr if not _is_missing(g))  # insertion order = first appearance
    ranked = sorted(counts, key=lambda lab: -counts[lab])  # stable sort keeps ties in order
    if len(ranked) < n:
        raise InputError(f"asked for the top {n} groups but there are only {len(ranked)}")
    return list(ranked[:n])


@dataclass(frozen=True, eq=False)
class Domains:
    """Validated domain labels.

    Attributes
    ----------
    labels : ndarray of object, shape (n_rows,)
        The domain of every row (NaN/None only for rows outside ``order``).
    order : list
        The domains to use, in order.
    """

    labels: np.ndarray
    order: list

    def sizes(self) -> dict:
        """Rows per domain of ``order``."""
        return {label: int(np.sum(self.labels == label)) for label in self.order}


def _check_index(domains: pd.Series, X: pd.DataFrame, name: str) -> None:
    """A Series of labels must carry X's index (it is used by position otherwise)."""
    if len(domains) != len(X) or domains.index.equals(X.index):
        return  # a length mismatch is reported by check_domains
    only_x = X.index.difference(domains.index)
    only_d = domains.index.difference(X.index)
    if len(only_x) or len(only_d):
        raise InputError(
            f"{name} is a Series whose index does not match X's index: X's row label(s) "
            f"{list(only_x[:5])} are not in {name}.index and {name}.index label(s) "
            f"{list(only_d[:5])} are not in X; align them (or pass {name}.to_numpy() to match "
            "rows by position)"
        )
    pos = int(np.flatnonzero(domains.index.to_numpy() != X.index.to_numpy())[0])
    raise InputError(
        f"{name} is a Series whose index has X's row labels in another order (position {pos}: "
        f"X has {X.index[pos]!r}, {name} has {domains.index[pos]!r}); reindex it like X"
    )


def _resolve_order(
    labels: np.ndarray, order: Sequence | None, by: str, what: str | None, name: str
) -> list:
    is_missing = pd.isna(pd.Series(labels, dtype=object)).to_numpy()
    if order is None:
        missing = int(is_missing.sum())
        if missing:
            hint = f" or pass {what}=[...] to choose the domains" if what else ""
            raise InputError(
                f"{name} contains {missing} missing labels (None/NaN); drop those rows{hint}"
            )
        present = [g for g in labels]
        return (
            _sorted_labels(present)
            if by == "sorted"
            else top_groups(present, len(pd.unique(pd.Series(present, dtype=object))))
        )
    order = list(order)
    if not order:
        raise InputError(f"no {what} domain given; give at least one domain label")
    dup = [g for g in pd.unique(pd.Series(order, dtype=object)) if order.count(g) > 1]
    if dup:
        raise InputError(f"{what} domain(s) {dup} listed more than once")
    present = set(labels[~is_missing])
    absent = [g for g in order if g not in present]
    if absent:
        raise InputError(
            f"{what} domain(s) {absent} not found in {name} (no rows); available: "
            f"{_sorted_labels(present)}"
        )
    return order


#: Scores beyond this in absolute value are refused for ICA: their squares overflow float64.
MAX_ABS_SCORE = 1e150
#: A benchmark whose spread (standard deviation) within a domain is below this is refused for
#: ICA: its squares (below 1e-300) underflow float64's normal range (2.2e-308).
MIN_SPREAD = 1e-150
#: Two benchmarks whose spreads within one domain differ by more than this factor are refused
#: for ICA: their squares differ by more than float64's 16 digits, so the whitening loses the
#: smaller (on a simulated table, scaling one column by 1e10 ends in an unmixing matrix
#: without full rank; by 1e8 it already moves the MIC).
MAX_SPREAD_RATIO = 1e8


def domain_spreads(values: np.ndarray) -> np.ndarray:
    """Standard deviation of every column of ``values``, computed on the columns divided by
    their largest |value| so that no square underflows or overflows on the way."""
    top = np.max(np.abs(values), axis=0)
    scale = np.where(top > 0, top, 1.0)
    return np.std(values / scale, axis=0) * scale


def _check_scale(values: np.ndarray, names: list, labels: np.ndarray, order: list) -> None:
    """Scores whose squares overflow or underflow, or cannot be summed side by side in one
    domain (see :data:`MAX_ABS_SCORE`, :data:`MIN_SPREAD`, :data:`MAX_SPREAD_RATIO`)."""
    big = np.abs(values) > MAX_ABS_SCORE
    if big.any():
        j = int(np.flatnonzero(big.any(axis=0))[0])
        raise InputError(
            f"X column {names[j]!r} holds {values[big[:, j], j][0]:.3g}, beyond "
            f"{MAX_ABS_SCORE:.0e}: its square overflows float64; rescale the scores (e.g. to "
            "percent or to a 0-1 range)"
        )
    for label in order:
        spread = domain_spreads(values[labels == label])
        live = spread > 0
        if not live.any():
            continue
        lo = int(np.argmin(np.where(live, spread, np.inf)))
        hi = int(np.argmax(spread))
        if spread[lo] < MIN_SPREAD:
            raise InputError(
                f"X column {names[lo]!r} varies by only about {spread[lo]:.1g} within domain "
                f"{label!r}: its squares underflow float64 (below {MIN_SPREAD**2:.0e}); rescale "
                "the scores (e.g. to percent or to a 0-1 range)"
            )
        if spread[hi] > MAX_SPREAD_RATIO * spread[lo]:
            raise InputError(
                f"within domain {label!r} X column {names[hi]!r} varies "
                f"{spread[hi] / spread[lo]:.1g} times more than column {names[lo]!r} (beyond "
                f"{MAX_SPREAD_RATIO:.0e}, float64 loses the smaller when their squares are "
                "summed); check its values, or rescale the columns to one scale"
            )


def _check_full_rank(X: Any, labels: np.ndarray, order: list) -> None:
    """More models than benchmarks in every domain, no benchmark constant in one, scores
    whose squares float64 can hold and sum."""
    values = check_matrix(X)
    names = labels_of(X)[1]
    p = values.shape[1]
    constant = [names[j] for j in range(p) if np.ptp(values[:, j]) == 0]
    if constant:
        raise InputError(f"X has constant column(s) {constant}; drop them before fitting")
    for label in order:
        rows = values[labels == label]
        if len(rows) <= p:
            raise InputError(
                f"domain {label!r} has {len(rows)} models but at least {p} (the number of "
                f"benchmarks) plus one are needed, so that its centred scores can have full rank"
            )
        flat = [names[j] for j in range(p) if np.ptp(rows[:, j]) == 0]
        if flat:
            raise InputError(
                f"benchmark {flat[0]!r} is constant within domain {label!r} "
                f"({rows[0, names.index(flat[0])]:g} for all {len(rows)} models); ICA cannot "
                "use that domain: drop the benchmark or the domain"
            )
    _check_scale(values, names, labels, order)


def _check_lookalikes(order: Sequence, name: str) -> None:
    """Two string labels that print the same (equal after Unicode NFC normalisation, e.g. a
    composed and a decomposed "é") would become two domains that read as one: refuse them."""
    seen: dict[str, str] = {}
    for label in order:
        if not isinstance(label, str):
            continue
        key = unicodedata.normalize("NFC", label)
        if key in seen and seen[key] != label:
            raise InputError(
                f"{name} {ascii(seen[key])} and {ascii(label)} print the same (they differ only "
                "in Unicode normal form); normalise the labels, e.g. "
                "unicodedata.normalize('NFC', label)"
            )
        seen[key] = label


def check_domains(
    domains: Any,
    X: Any,
    *,
    order: Sequence | None = None,
    by: str = "sorted",
    min_domains: int = 1,
    full_rank: bool = False,
    name: str = "domains",
    order_name: str | None = "order",
    X_name: str = "X",
) -> Domains:
    """One domain label (base model) per row of ``X``, and the domains to use.

    Parameters
    ----------
    domains : array-like or Series of shape (n_rows,)
        Labels, matched to the rows of ``X`` by position; a Series must carry ``X``'s index
        when ``X`` is a DataFrame.
    X : array-like or DataFrame
        The data the labels describe (only its length and index are used, and its values
        with ``full_rank``). A 1-D vector describes that many units.
    order : sequence, optional
        Domains to use, in this order; rows of other domains (or with missing labels) are
        left out. Default: every domain (then no label may be missing).
    by : {"sorted", "size"}
        Default order: sorted labels, or most frequent first (ties: first appearance).
    min_domains : int, default=1
        Fewest domains in ``order``.
    full_rank : bool, default=False
        For ICA: every domain of ``order`` needs more models than ``X`` has benchmarks, and no
        benchmark may be constant in ``X`` or within one domain.
    name, order_name, X_name : str
        How the messages call ``domains``, ``order`` (``order_name=None``: the caller has
        no ``order`` option) and ``X``.

    Returns
    -------
    Domains
    """
    n_rows = len(X)
    if isinstance(domains, pd.Series) and isinstance(X, pd.DataFrame):
        _check_index(domains, X, name)
    labels = np.asarray(domains, dtype=object)
    if labels.ndim != 1:
        raise InputError(f"{name} must be 1-D (one label per row), got shape {labels.shape}")
    if len(labels) != n_rows:
        raise InputError(
            f"{X_name} has {n_rows} rows but {name} has {len(labels)} labels; one "
            "label per row is needed"
        )
    resolved = _resolve_order(labels, order, by, order_name, name)
    _check_lookalikes(resolved, name)
    if len(resolved) < min_domains:
        raise InputError(
            f"need at least {min_domains} domains, found {len(resolved)} ({resolved!r})"
        )
    if full_rank:
        _check_full_rank(X, labels, resolved)
    return Domains(labels, resolved)


# =========================================================================== HCA's inputs
@dataclass(frozen=True, eq=False)
class FitData:
    """Validated input of HCA: scores, benchmark names, domains, number of components.

    Attributes
    ----------
    values : ndarray of shape (n_models, n_benchmarks)
    feature_names : list of str
        DataFrame column names, or ``x0, x1, ...`` for an array.
    has_names : bool
        Whether ``X`` was a DataFrame.
    labels : ndarray of object
        Domain of every row.
    order : list
        Sorted domain labels.
    n_components : int
    """

    values: np.ndarray
    feature_names: list
    has_names: bool
    labels: np.ndarray
    order: list
    n_components: int


def check_fit_data(X: Any, domains: Any, n_components: Any) -> FitData:
    """:func:`check_matrix`, :func:`check_domains` (at least two domains, ``full_rank``) and
    :func:`check_n_components`: the input of HCA and of its per-domain ICA."""
    values = check_matrix(X)
    dom = check_domains(domains, X, min_domains=2, full_rank=True, order_name=None)
    d = check_n_components(n_components, values.shape[1])
    return FitData(values, labels_of(X)[1], isinstance(X, pd.DataFrame), dom.labels, dom.order, d)


# =========================================================================== scalars
def is_int(value: Any) -> bool:
    """True for a Python or numpy integer (not a bool)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def check_n_components(
    n_components: Any, n_features: int, *, minimum: int = 1, maximum: int | None = None
) -> int:
    """``minimum <= n_components <= maximum`` (default: the number of benchmarks)."""
    if not is_int(n_components):
        raise TypeError(f"n_components must be an int, got {n_components!r}")
    upper = f"the number of benchmarks ({n_features})" if maximum is None else str(maximum)
    top = n_features if maximum is None else maximum
    if not minimum <= n_components <= top:
        raise InputError(f"n_components ({n_components}) must be between {minimum} and {upper}")
    return int(n_components)


def check_positive_int(value: Any, name: str) -> int:
    """``value`` as an int ``>= 1``."""
    if not is_int(value) or value < 1:
        raise InputError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def check_fraction(value: Any, name: str) -> float:
    """``value`` in the open interval (0, 1) (a coverage, level or quantile)."""
    if not 0.0 < value < 1.0:
        raise InputError(f"{name} must be in (0, 1), got {value}")
    return float(value)


# =========================================================================== frames, labels
def check_frame(
    frame: Any, columns: Sequence[str], *, name: str = "frame", context: str | None = None
) -> pd.DataFrame:
    """``frame`` must be a DataFrame with ``columns``; ``context`` prefixes the messages."""
    prefix = f"{context}: " if context else ""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{prefix}{name} must be a pandas DataFrame, got {type(frame).__name__}")
    needed = list(dict.fromkeys(columns))
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise InputError(
            f"{prefix}{name} lacks column(s) {missing}: {len(missing)} missing "
            f"column(s) of the {len(needed)} needed {needed}"
        )
    return frame


def check_labels(labels: Sequence[Hashable] | None, n: int, name: str) -> list[str] | None:
    """Display labels as strings, exactly ``n`` of them (``None`` passes through)."""
    if labels is None:
        return None
    labels = [str(x) for x in labels]
    if len(labels) != n:
        raise InputError(f"{name} has {len(labels)} labels for {n} entries")
    return labels
