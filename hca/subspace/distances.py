"""Distances between domains' principal subspaces, split-half nulls and the invariant set S_inv."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hca.subspace.pca import (
    MAX_REDRAWS,
    check_method,
    check_rows,
    pca_bases,
    subspace_basis,
    subspace_distance,
    subspace_distances,
)
from hca.validation import (
    check_domains,
    check_fraction,
    check_matrix,
    check_n_components,
    check_positive_int,
)

__all__ = [
    "BootstrapDistances",
    "group_subspaces",
    "subspace_distance_matrix",
    "distance_matrix",
    "bootstrap_distance_matrix",
    "split_half_null",
    "split_half_nulls",
    "null_threshold",
    "pair_thresholds",
    "invariant_set",
    "InvariantSetRule",
    "invariant_set_rule",
    "candidate_sets",
    "invariant_set_stability",
    "bootstrap_sets",
    "GroupComparison",
    "compare_groups",
]


def _split_by_domain(X: Any, domains: Any, order: Sequence | None = None) -> tuple[list, dict]:
    """The rows of ``X`` of every domain: ``(order, {label: ndarray})``."""
    arr = check_matrix(X)
    dom = check_domains(domains, X, order=order, by="size")
    return dom.order, {lab: arr[dom.labels == lab] for lab in dom.order}


def group_subspaces(
    X: Any,
    domains: Any,
    n_components: int = 3,
    *,
    order: Sequence | None = None,
    method: str = "pca",
    random_state: int | None = 0,
) -> dict:
    """Principal (or ICA) subspace basis of each domain, ``{label: ndarray}`` (parameters
    as in :func:`distance_matrix`)."""
    check_method(method)
    labels, parts = _split_by_domain(X, domains, order)
    k = check_n_components(n_components, next(iter(parts.values())).shape[1])
    out = {}
    for lab in labels:
        check_rows(parts[lab].shape[0], k, f"domain {lab!r}")
        try:
            out[lab] = subspace_basis(parts[lab], k, method, random_state)
        except ValueError as exc:
            raise ValueError(f"domain {lab!r}: {exc}") from exc
    return out


def subspace_distance_matrix(bases: Mapping) -> pd.DataFrame:
    """Pairwise :func:`subspace_distance` of ``{label: basis}``; diagonal exactly 0."""
    labels = list(bases)
    k = len(labels)
    D = np.zeros((k, k))
    arrays = [np.asarray(bases[lab]) for lab in labels]
    i, j = np.triu_indices(k, 1)
    if k > 1 and len({a.shape for a in arrays}) == 1 and arrays[0].ndim == 2:
        try:
            stack = np.stack(arrays).astype(float)
            D[i, j] = D[j, i] = subspace_distances(stack[i], stack[j])
        except (TypeError, ValueError):  # a bad basis: the pair by pair loop names it
            D = _pairwise_distances(bases, labels)
    else:
        D = _pairwise_distances(bases, labels)
    idx = pd.Index(labels, name="group")
    return pd.DataFrame(D, index=idx, columns=idx.copy())


def _pairwise_distances(bases: Mapping, labels: list) -> np.ndarray:
    k = len(labels)
    D = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            D[i, j] = D[j, i] = subspace_distance(bases[labels[i]], bases[labels[j]])
    return D


def distance_matrix(
    X: Any,
    domains: Any,
    n_components: int = 3,
    *,
    order: Sequence | None = None,
    method: str = "pca",
    random_state: int | None = 0,
) -> pd.DataFrame:
    """Pairwise cosine distances between the per-domain principal subspaces (Figure 2b).

    Parameters
    ----------
    X : array-like of shape (n_models, n_benchmarks)
        Scores, used as they are (centred by PCA, not scaled).
    domains : array-like of length n_models
        One domain label per row (any grouping of the models: base models, years, ...),
        matched by position; a Series must carry ``X``'s index when ``X`` is a DataFrame.
    n_components : int
        Rank ``r`` of each principal subspace (3 in the paper).
    order : sequence of labels, optional
        Domains to compare, in this order; rows of other domains (or with missing labels)
        are ignored. Default: all domains, most frequent first.
    method : {"pca", "ica"}
        ``"ica"`` uses :func:`ica_subspace` (same spans, up to rounding).
    random_state : int or None
        FastICA seed (``method="ica"`` only).

    Returns
    -------
    DataFrame
        Square, indexed and labelled by domain (index name ``group``), symmetric, zero
        diagonal.
    """
    bases = group_subspaces(
        X, domains, n_components, order=order, method=method, random_state=random_state
    )
    return subspace_distance_matrix(bases)


# --------------------------------------------------------------------------- uncertainty
@dataclass(frozen=True, eq=False)
class BootstrapDistances:
    """Bootstrap of the subspace distance matrix (models resampled within each domain).

    Attributes
    ----------
    point : DataFrame
        Distances on the full data (:func:`distance_matrix`).
    lower, upper : DataFrame
        Percentile interval of the bootstrap distances at ``level``.
    samples : ndarray of shape (n_boot, k, k)
        Bootstrap distance matrices.
    self_samples : ndarray of shape (n_boot, k)
        Distance between each domain's full-data subspace and its bootstrap subspace:
        a per-domain scale of sampling noise.
    level : float
    n_boot : int
    """

    point: pd.DataFrame
    lower: pd.DataFrame
    upper: pd.DataFrame
    samples: np.ndarray
    self_samples: np.ndarray
    level: float
    n_boot: int

    def to_frame(self) -> pd.DataFrame:
        """Tidy table, one row per unordered pair: point, lower, upper, boot_mean."""
        i, j = _pairs(self.point)
        return pd.DataFrame(
            {
                "group_a": [self.point.index[a] for a in i],
                "group_b": [self.point.index[b] for b in j],
                "point": self.point.to_numpy()[i, j],
                "lower": self.lower.to_numpy()[i, j],
                "upper": self.upper.to_numpy()[i, j],
                "boot_mean": self.samples.mean(axis=0)[i, j],
            }
        )

    def summary(self) -> str:
        """Short text report."""
        tidy = self.to_frame()
        noise = np.median(self.self_samples, axis=0)
        lines = [
            f"BootstrapDistances: {len(self.point)} groups, {self.n_boot} resamples, "
            f"{self.level:.0%} percentile intervals",
        ]
        for _, r in tidy.iterrows():
            lines.append(
                f"  {r.group_a} - {r.group_b}: {r.point:.3f} [{r.lower:.3f}, {r.upper:.3f}]"
            )
        lines.append(
            "  median distance full vs resampled subspace: "
            + ", ".join(f"{lab}: {v:.3f}" for lab, v in zip(self.point.index, noise))
        )
        return "\n".join(lines)


def _pairs(square: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Row and column positions of the unordered pairs of a square frame, row by row."""
    return np.triu_indices(len(square), 1)


#: Numbers in one stack of resampled matrices (8 MB): larger batches are split.
STACK_VALUES = 2**20


def redraw_until_full_rank(
    rng: np.random.Generator,
    n_tasks: int,
    draw: Callable[[int, np.random.Generator], Any],
    evaluate: Callable[[list, list], list],
    failure: Callable[[int], str],
) -> list:
    """The loop ``for task: draw, compute; redraw while the computation fails``, batched.

    ``draw(task, rng)`` makes one attempt's random draws; ``evaluate(tasks, draws)`` computes
    the attempts of many tasks at once, ``None`` for a rank-deficient one (it may stop after
    the first ``None``). At the first failed attempt the generator is set back to its state
    right after that attempt's draws and the remaining tasks are drawn again from there, so
    the accepted draws, the values and the final state are exactly those of the sequential
    loop. After :data:`MAX_REDRAWS` failed attempts in a row for one task,
    ``ValueError(failure(task))`` is raised.

    Returns
    -------
    list
        The value of every task's accepted attempt.
    """
    values: list = []
    chunk = n_tasks
    failed_task, failures = -1, 0
    while len(values) < n_tasks:
        start = len(values)
        tasks = list(range(start, min(n_tasks, start + chunk)))
        draws, states = [], []
        for task in tasks:
            draws.append(draw(task, rng))
            states.append(rng.bit_generator.state)
        out = evaluate(tasks, draws)
        ok = 0
        while ok < len(tasks) and ok < len(out) and out[ok] is not None:
            ok += 1
        values.extend(out[:ok])
        if ok == len(tasks):
            chunk *= 2
            continue
        rng.bit_generator.state = states[ok]
        task = tasks[ok]
        failures = failures + 1 if task == failed_task else 1
        failed_task = task
        if failures >= MAX_REDRAWS:
            raise ValueError(failure(task))
        chunk = max(8, 2 * (ok + 1))  # about twice the run of successes seen
    return values


def _bases_of_draws(
    parts: list[np.ndarray], k: int, method: str, draws: list
) -> tuple[list, np.ndarray]:
    """``(bases, full_rank)`` of the resampled matrices ``parts[i][rows]`` of ``draws``
    (``(i, rows, seed)``)."""
    n = len(draws)
    bases: list = [None] * n
    full = np.zeros(n, dtype=bool)
    if method == "pca":
        by_part: dict[int, list[int]] = {}
        for pos, (i, _, _) in enumerate(draws):
            by_part.setdefault(i, []).append(pos)
        for i, positions in by_part.items():
            # stacks of at most STACK_VALUES numbers (the same bases, in bounded memory)
            step = max(1, STACK_VALUES // (len(draws[positions[0]][1]) * parts[i].shape[1]))
            for start in range(0, len(positions), step):
                block = positions[start : start + step]
                rows = np.stack([draws[pos][1] for pos in block])
                stacked, ok = pca_bases(parts[i][rows], k)
                for pos, b, o in zip(block, stacked, ok):
                    bases[pos], full[pos] = b, o
        return bases, full
    for pos, (i, rows, seed) in enumerate(draws):
        try:
            bases[pos] = subspace_basis(parts[i][rows], k, method, seed)
        except ValueError:
            break  # later attempts are drawn again (redraw_until_full_rank)
        full[pos] = True
    return bases, full


def bootstrap_distance_matrix(
    X: Any,
    domains: Any,
    n_components: int = 3,
    *,
    order: Sequence | None = None,
    n_boot: int = 200,
    level: float = 0.95,
    method: str = "pca",
    random_state: int | np.random.Generator | None = 0,
) -> BootstrapDistances:
    """Bootstrap percentile intervals for the subspace distance matrix.

    In each of ``n_boot`` replicates the models (rows) of every domain are resampled
    with replacement, independently per domain and at the domain's size, the principal
    subspaces are recomputed and all pairwise distances are taken. A resample whose
    centred data have rank below ``n_components`` (possible for tiny domains) is redrawn.

    Notes
    -----
    The distance is bounded below by 0 and resampling noise tilts subspaces in random
    directions, so bootstrap distances are biased upwards (their mean above ``point``). For two domains
    with nearly the same subspace the percentile interval can therefore lie entirely
    above the point estimate; it describes variability, and whether a distance is larger
    than noise is judged against :func:`split_half_null`.

    Parameters
    ----------
    X, domains, n_components, order, method
        As in :func:`distance_matrix`.
    n_boot : int
        Number of bootstrap replicates.
    level : float
        Coverage of the percentile interval, in (0, 1).
    random_state : int, Generator or None
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    BootstrapDistances
    """
    check_method(method)
    check_positive_int(n_boot, "n_boot")
    check_fraction(level, "level")
    bases = group_subspaces(X, domains, n_components, order=order, method=method, random_state=0)
    point = subspace_distance_matrix(bases)
    labels, parts = _split_by_domain(X, domains, order)
    k = len(labels)
    r = next(iter(bases.values())).shape[1]
    rng = np.random.default_rng(random_state)
    arrays = [parts[lab] for lab in labels]

    def draw(task: int, gen: np.random.Generator) -> tuple:
        # replicate task // k, domain task % k: the order of the draws of the former loop
        i = task % k
        n = arrays[i].shape[0]
        return i, gen.integers(0, n, size=n), gen.integers(2**31 - 1)

    def evaluate(tasks: list, draws: list) -> list:
        found, full = _bases_of_draws(arrays, r, method, draws)
        return [b if ok else None for b, ok in zip(found, full)]

    def failure(task: int) -> str:
        return (
            f"domain {labels[task % k]!r}: {MAX_REDRAWS} bootstrap resamples in a row had "
            f"rank below {r}; the domain is too small or degenerate for a rank-{r} subspace"
        )

    boot = np.stack(redraw_until_full_rank(rng, n_boot * k, draw, evaluate, failure))
    boot = boot.reshape(n_boot, k, *boot.shape[1:])
    samples = np.zeros((n_boot, k, k))
    i, j = np.triu_indices(k, 1)
    if i.size:
        pairs = subspace_distances(
            boot[:, i].reshape(-1, *boot.shape[2:]), boot[:, j].reshape(-1, *boot.shape[2:])
        ).reshape(n_boot, i.size)
        samples[:, i, j] = samples[:, j, i] = pairs
    self_samples = np.column_stack(
        [subspace_distances(bases[lab], boot[:, c]) for c, lab in enumerate(labels)]
    )
    alpha = (1 - level) / 2
    lo, hi = np.quantile(samples, [alpha, 1 - alpha], axis=0)
    return BootstrapDistances(
        point=point,
        lower=pd.DataFrame(lo, index=point.index, columns=point.columns),
        upper=pd.DataFrame(hi, index=point.index, columns=point.columns),
        samples=samples,
        self_samples=self_samples,
        level=float(level),
        n_boot=int(n_boot),
    )


def split_half_null(
    X_group: Any,
    n_components: int = 3,
    *,
    n_splits: int = 200,
    half_size: int | None = None,
    method: str = "pca",
    random_state: int | np.random.Generator | None = 0,
) -> np.ndarray:
    """Null distribution: distance between the subspaces of two random halves of a domain.

    Each split permutes the rows and takes two disjoint halves of ``half_size`` rows
    (default ``n // 2``; with odd ``n`` one row is left out). Both halves come from the
    same domain, so their distance is pure sampling noise.

    Notes
    -----
    Each half has about ``n/2`` rows, fewer than the full domain. To first order the
    squared principal angles between two independent estimates scale like
    ``1/n_1 + 1/n_2``, so two halves (``4/n``) are noisier than two full domains of
    size ``n`` (``2/n``). A threshold taken from this null is therefore *conservative
    for declaring two domains different* (it errs towards calling them the same, i.e.
    towards a larger invariant set). To compare at matched sample sizes, pass a smaller
    ``half_size`` to the larger domain or subsample the data.

    Parameters
    ----------
    X_group : array-like of shape (n_models, n_benchmarks)
        Scores of one domain.
    n_components : int
    n_splits : int
    half_size : int, optional
        Rows per half; at least ``n_components + 1`` and at most ``n // 2``.
    method : {"pca", "ica"}
    random_state : int, Generator or None

    Returns
    -------
    ndarray of shape (n_splits,)
    """
    check_method(method)
    arr = check_matrix(X_group, name="X_group")
    n = arr.shape[0]
    k = check_n_components(n_components, arr.shape[1])
    check_positive_int(n_splits, "n_splits")
    h = n // 2 if half_size is None else int(half_size)
    if h > n // 2:
        raise ValueError(f"half_size={h} exceeds half of the {n} rows of X_group")
    check_rows(h, k, f"each half of X_group ({n} rows)")
    rng = np.random.default_rng(random_state)

    def draw(task: int, gen: np.random.Generator) -> tuple:
        return gen.permutation(n), gen.integers(2**31 - 1)

    def evaluate(tasks: list, draws: list) -> list:
        # the halves in the order the former loop computed them: first, second, first, ...
        halves = [(0, half, seed) for p, seed in draws for half in (p[:h], p[h : 2 * h])]
        found, full = _bases_of_draws([arr], k, method, halves)
        ok = full[0::2] & full[1::2]
        dist = np.full(len(draws), np.nan)
        if ok.any():
            pairs = np.flatnonzero(ok)
            A = np.stack([found[2 * i] for i in pairs])
            B = np.stack([found[2 * i + 1] for i in pairs])
            dist[ok] = subspace_distances(A, B)
        return [float(d) if o else None for d, o in zip(dist, ok)]

    def failure(task: int) -> str:
        return f"X_group: {MAX_REDRAWS} random halves in a row had rank below {k}"

    return np.asarray(redraw_until_full_rank(rng, n_splits, draw, evaluate, failure))


def split_half_nulls(
    X: Any,
    domains: Any,
    n_components: int = 3,
    *,
    order: Sequence | None = None,
    n_splits: int = 200,
    method: str = "pca",
    random_state: int | np.random.Generator | None = 0,
) -> dict:
    """:func:`split_half_null` for every domain (an independent stream spawned from
    ``random_state`` each), ``{label: ndarray}``."""
    labels, parts = _split_by_domain(X, domains, order)
    streams = np.random.default_rng(random_state).spawn(len(labels))
    out = {}
    for lab, stream in zip(labels, streams):
        try:
            out[lab] = split_half_null(
                parts[lab], n_components, n_splits=n_splits, method=method, random_state=stream
            )
        except ValueError as exc:
            raise ValueError(f"domain {lab!r}: {exc}") from exc
    return out


def null_threshold(null: Any, quantile: float = 0.95) -> float:
    """Threshold ``tau`` from null distances: an upper quantile, domains weighted equally.

    Parameters
    ----------
    null : array-like, or mapping / sequence of array-likes
        Split-half null distances of one domain, or of several (e.g. the output of
        :func:`split_half_nulls`). Several domains are pooled as an equal-weight mixture,
        so a domain with more splits does not count more.
    quantile : float
        In (0, 1); 0.95 is the rule used for the invariant set.

    Returns
    -------
    float
        The smallest null value ``t`` with mixture CDF ``F(t) >= quantile``.
    """
    check_fraction(quantile, "quantile")
    if isinstance(null, Mapping):
        arrays = list(null.values())
    elif isinstance(null, np.ndarray) and null.ndim == 1:
        arrays = [null]
    elif isinstance(null, Sequence) and len(null) and np.ndim(null[0]) == 1:
        arrays = list(null)
    else:
        arrays = [null]
    arrays = [np.asarray(a, dtype=float).ravel() for a in arrays]
    if not arrays or any(a.size == 0 for a in arrays):
        raise ValueError("null distances are empty")
    if any(not np.all(np.isfinite(a)) for a in arrays):
        raise ValueError("null distances contain NaN/inf")
    values = np.unique(np.concatenate(arrays))
    cdfs = [np.searchsorted(np.sort(a), values, side="right") / a.size for a in arrays]
    cdf = np.mean(cdfs, axis=0)
    return float(values[np.nonzero(cdf >= quantile - 1e-12)[0][0]])


def pair_thresholds(nulls: Mapping, quantile: float = 0.95) -> pd.DataFrame:
    """Pair-specific thresholds ``tau_ij = null_threshold({i: nulls[i], j: nulls[j]},
    quantile)`` (the diagonal: the single-domain quantile), for :func:`invariant_set`."""
    labels = list(nulls)
    k = len(labels)
    T = np.zeros((k, k))
    for i in range(k):
        for j in range(i, k):
            sub = {labels[i]: nulls[labels[i]], labels[j]: nulls[labels[j]]}
            T[i, j] = T[j, i] = null_threshold(sub, quantile)
    idx = pd.Index(labels, name="group")
    return pd.DataFrame(T, index=idx, columns=idx.copy())


# --------------------------------------------------------------------------- invariant set
def check_distance_matrix(dist: Any) -> pd.DataFrame:
    if not isinstance(dist, pd.DataFrame):
        dist = pd.DataFrame(np.asarray(dist, dtype=float))
    D = check_matrix(dist, name="dist")
    if D.shape[0] != D.shape[1]:
        raise ValueError(f"dist must be square, got shape {D.shape}")
    if list(dist.index) != list(dist.columns):
        raise ValueError("dist must have the same labels, in the same order, on index and columns")
    if not np.allclose(D, D.T, atol=1e-8):
        raise ValueError("dist is not symmetric")
    return dist


def _maximal_cliques(adj: np.ndarray) -> list[tuple[int, ...]]:
    """All maximal cliques (Bron-Kerbosch with pivoting)."""
    nbrs = [set(np.nonzero(row)[0]) - {i} for i, row in enumerate(adj)]
    out: list[tuple[int, ...]] = []

    def expand(R: set, P: set, Xs: set) -> None:
        if not P and not Xs:
            out.append(tuple(sorted(R)))
            return
        pivot = max(P | Xs, key=lambda u: len(nbrs[u] & P))
        for v in sorted(P - nbrs[pivot]):
            expand(R | {v}, P & nbrs[v], Xs & nbrs[v])
            P = P - {v}
            Xs = Xs | {v}

    expand(set(), set(range(len(adj))), set())
    return out


def _threshold_matrix(dist: pd.DataFrame, threshold: Any) -> np.ndarray:
    if isinstance(threshold, pd.DataFrame):
        missing = [
            lab for lab in dist.index if lab not in threshold.index or lab not in threshold.columns
        ]
        if missing:
            raise ValueError(f"threshold has no entries for groups {missing}")
        T = threshold.loc[list(dist.index), list(dist.columns)].to_numpy(dtype=float)
    else:
        T = np.full(dist.shape, float(threshold))
    if not np.all(np.isfinite(T)):
        raise ValueError("threshold must be finite")
    return T


def candidate_sets(dist: Any, threshold: float | pd.DataFrame) -> pd.DataFrame:
    """All maximal sets of groups whose pairwise distances are all ``<= threshold`` (a
    number or pair thresholds): columns ``groups``, ``size`` and ``mean_distance``, in the
    order of :func:`invariant_set` (its set first)."""
    dist = check_distance_matrix(dist)
    labels = list(dist.index)
    D = dist.to_numpy(dtype=float)
    rows = [
        {"groups": [labels[i] for i in c], "size": len(c), "mean_distance": mean}
        for _, mean, c in _ranked_cliques(D, _threshold_matrix(dist, threshold))
    ]
    return pd.DataFrame(rows, columns=["groups", "size", "mean_distance"])


def _ranked_cliques(D: np.ndarray, T: np.ndarray) -> list[tuple[int, float, tuple]]:
    """The maximal cliques of ``D <= T`` as ``(-size, mean distance, members)``, best first."""
    upper: dict[int, tuple] = {}  # the pairs of a clique of each size
    ranked = []
    for c in _maximal_cliques(D <= T):
        if len(c) not in upper:
            upper[len(c)] = np.triu_indices(len(c), 1)
        sub = D[np.ix_(c, c)]
        mean = float(sub[upper[len(c)]].mean()) if len(c) > 1 else 0.0
        ranked.append((-len(c), mean, c))
    ranked.sort()
    return ranked


def invariant_set(dist: Any, threshold: float | pd.DataFrame) -> list:
    """The invariant set ``S_inv`` of domains with (statistically) the same subspace.

    Rule: the largest set of groups whose pairwise distances are all ``<= threshold`` (a
    maximum clique); among sets of that size, the smallest mean pairwise distance, then the
    first in the order of ``dist``. ``threshold`` should be fixed before looking at ``dist``,
    e.g. ``null_threshold(split_half_nulls(...), 0.95)``. :func:`candidate_sets` lists the
    runners-up.

    Parameters
    ----------
    dist : DataFrame
        Square symmetric distance matrix (e.g. :func:`distance_matrix`).
    threshold : float or DataFrame
        One threshold for all pairs, or pair thresholds (:func:`pair_thresholds`).

    Returns
    -------
    list
        Labels of the chosen groups, in the order of ``dist``.
    """
    dist = check_distance_matrix(dist)
    labels = list(dist.index)
    best = _ranked_cliques(dist.to_numpy(dtype=float), _threshold_matrix(dist, threshold))[0]
    return [labels[i] for i in best[2]]


def bootstrap_sets(boot: BootstrapDistances, threshold: float | pd.DataFrame) -> list[tuple]:
    """:func:`invariant_set` of every bootstrap distance matrix of ``boot``, in order (the
    matrices and the threshold checked once).

    Parameters
    ----------
    boot : BootstrapDistances
    threshold : float or DataFrame
        As in :func:`invariant_set`.

    Returns
    -------
    list of tuple
        One tuple of labels per replicate.
    """
    if not isinstance(boot, BootstrapDistances):
        raise TypeError(f"boot must be a BootstrapDistances, got {type(boot).__name__}")
    point = check_distance_matrix(boot.point)
    labels = list(point.index)
    samples = np.asarray(boot.samples, dtype=float)
    if samples.ndim != 3 or samples.shape[1:] != point.shape:
        raise ValueError(
            f"boot.samples has shape {samples.shape}; expected (n_boot, {len(labels)}, "
            f"{len(labels)})"
        )
    if not np.all(np.isfinite(samples)):
        raise ValueError("boot.samples contains NaN or infinite distances")
    if not np.allclose(samples, samples.transpose(0, 2, 1), atol=1e-8):
        raise ValueError("boot.samples holds a distance matrix that is not symmetric")
    T = _threshold_matrix(point, threshold)
    return [tuple(labels[i] for i in _ranked_cliques(D, T)[0][2]) for D in samples]


@dataclass(frozen=True, eq=False)
class InvariantSetRule:
    """Outcome of :func:`invariant_set_rule`.

    Attributes
    ----------
    members : tuple
        The invariant set, in the order of the candidates.
    threshold : float
        ``tau``, the ``quantile`` of the split-half null distances pooled over the candidates.
    dist : DataFrame
        Distances between the candidates' principal subspaces.
    nulls : dict
        Split-half null distances per candidate (:func:`split_half_nulls`).
    """

    members: tuple
    threshold: float
    dist: pd.DataFrame
    nulls: dict

    def summary(self) -> str:
        return (
            f"S_inv ({len(self.members)}): {', '.join(map(str, self.members))}; "
            f"tau = {self.threshold:.3f}"
        )


def invariant_set_rule(
    X: Any,
    domains: Any,
    order: Sequence,
    *,
    n_components: int = 3,
    n_splits: int = 200,
    quantile: float = 0.95,
    random_state: int | np.random.Generator | None = 0,
) -> InvariantSetRule:
    """The S_inv rule (Section 2): split-half null threshold, then the largest set within it.

    ``tau`` is the ``quantile`` of the split-half null distances pooled over the candidate
    domains ``order``; S_inv is :func:`invariant_set` of the subspace distances at ``tau``.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_models, n_benchmarks)
    domains : array-like of shape (n_models,)
    order : sequence
        The candidate domains (every one must have models).
    n_components : int, default=3
    n_splits : int, default=200
        Random half-splits per domain for the null.
    quantile : float, default=0.95
    random_state : int, Generator or None

    Returns
    -------
    InvariantSetRule
    """
    order = list(order)
    nulls = split_half_nulls(
        X,
        domains,
        n_components=n_components,
        order=order,
        n_splits=n_splits,
        random_state=random_state,
    )
    tau = null_threshold(nulls, quantile)
    dist = distance_matrix(X, domains, n_components=n_components, order=order)
    return InvariantSetRule(tuple(invariant_set(dist, tau)), float(tau), dist, nulls)


def invariant_set_stability(
    boot: BootstrapDistances, threshold: float | pd.DataFrame
) -> pd.DataFrame:
    """How often each group is in the invariant set across bootstrap distance matrices.

    :func:`invariant_set` with the same ``threshold`` on every bootstrap matrix. Bootstrap
    distances are biased upwards (see :func:`bootstrap_distance_matrix`), so these
    frequencies lean towards *exclusion*.

    Parameters
    ----------
    boot : BootstrapDistances
    threshold : float or DataFrame
        As in :func:`invariant_set`.

    Returns
    -------
    DataFrame
        Indexed by group: ``in_point_set`` (bool, membership on the full data) and
        ``frequency`` (share of replicates whose invariant set contains the group).
    """
    if not isinstance(boot, BootstrapDistances):
        raise TypeError(f"boot must be a BootstrapDistances, got {type(boot).__name__}")
    labels = list(boot.point.index)
    point = set(invariant_set(boot.point, threshold))
    counts = Counter()
    for members in bootstrap_sets(boot, threshold):
        counts.update(members)
    idx = pd.Index(labels, name="group")
    return pd.DataFrame(
        {
            "in_point_set": [lab in point for lab in labels],
            "frequency": [counts[lab] / boot.n_boot for lab in labels],
        },
        index=idx,
    )


@dataclass(frozen=True, eq=False)
class GroupComparison:
    """Subspace distances between groups with split-half null thresholds.

    Attributes
    ----------
    dist : DataFrame
        :func:`distance_matrix`.
    nulls : dict
        :func:`split_half_nulls`, ``{label: ndarray}``.
    threshold : float
        Pooled threshold (:func:`null_threshold` at ``quantile``).
    pair_threshold : DataFrame
        Pair thresholds (:func:`pair_thresholds` at ``quantile``).
    sizes : Series
        Rows per group.
    quantile : float
    """

    dist: pd.DataFrame
    nulls: dict
    threshold: float
    pair_threshold: pd.DataFrame
    sizes: pd.Series
    quantile: float

    def to_frame(self) -> pd.DataFrame:
        """One row per unordered pair: ``distance``, ``pair_threshold``, ``beyond_noise``
        (distance above the pair threshold)."""
        i, j = _pairs(self.dist)
        d = self.dist.to_numpy(dtype=float)[i, j]
        t = self.pair_threshold.to_numpy(dtype=float)[i, j]
        return pd.DataFrame(
            {
                "group_a": [self.dist.index[a] for a in i],
                "group_b": [self.dist.index[b] for b in j],
                "distance": d,
                "pair_threshold": t,
                "beyond_noise": d > t,
            }
        )

    def summary(self) -> str:
        """Short text report."""
        lines = [
            f"GroupComparison: {len(self.dist)} groups; pooled threshold "
            f"{self.threshold:.3f} ({self.quantile:.0%} split-half null)"
        ]
        for _, r in self.to_frame().iterrows():
            flag = "beyond noise" if r.beyond_noise else "within noise"
            lines.append(
                f"  {r.group_a} - {r.group_b}: {r.distance:.3f} "
                f"(pair threshold {r.pair_threshold:.3f}, {flag})"
            )
        return "\n".join(lines)


def compare_groups(
    X: Any,
    domains: Any,
    n_components: int = 3,
    *,
    order: Sequence | None = None,
    n_splits: int = 200,
    quantile: float = 0.95,
    random_state: int | np.random.Generator | None = 0,
) -> GroupComparison:
    """Distance matrix of the domains' principal subspaces with its split-half null.

    Combines :func:`distance_matrix`, :func:`split_half_nulls`, :func:`null_threshold`
    and :func:`pair_thresholds` with the same domains and order (Figure 11).

    Parameters
    ----------
    X, domains, n_components, order
        As in :func:`distance_matrix`.
    n_splits : int
        Splits per group for the null.
    quantile : float
        Quantile of the null used for the thresholds.
    random_state : int, Generator or None

    Returns
    -------
    GroupComparison
    """
    labels, parts = _split_by_domain(X, domains, order)
    dist = distance_matrix(X, domains, n_components, order=labels)
    nulls = split_half_nulls(
        X, domains, n_components, order=labels, n_splits=n_splits, random_state=random_state
    )
    sizes = pd.Series({lab: parts[lab].shape[0] for lab in labels}, name="rows")
    sizes.index.name = "group"
    return GroupComparison(
        dist=dist,
        nulls=nulls,
        threshold=null_threshold(nulls, quantile),
        pair_threshold=pair_thresholds(nulls, quantile),
        sizes=sizes,
        quantile=float(quantile),
    )
