"""The global-vs-local completion experiment of Appendix G (Figures 15-16)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from hca.completion.estimators import (
    METHODS,
    PATTERNS,
    ColumnMeans,
    SoftImpute,
    StructuredCompletion,
    eig_desc,
    lambda_max,
    single_thread_blas,
    smc_rule_batch,
    soft_impute_batch,
    standardise,
    svt_weights,
)
from hca.completion.masks import mask_blocks, mask_random, mask_randoms
from hca.validation import (
    MAX_SHOW,
    check_fraction,
    check_matrix,
    labels_of,
    show_labels,
)

__all__ = [
    "global_vs_local",
    "global_vs_local_many",
    "domain_matrix",
    "paired_rmse",
    "compare_approaches",
    "AUTHORS_SOFT_IMPUTE",
    "rmse_by_row_observed",
    "random_mask_diagnostics",
    "local_row_positions",
]


# --------------------------------------------------------------------------- experiment
_SCOPES = ("domain", "all")
_CHUNK_ENTRIES = 300_000  # entries per column-means batch and per soft-impute RMSE batch
#: Entries per soft-impute batch: each step makes several passes over the batch's arrays,
#: which should stay in the cache (measured on the authors' design, 4,576 x 6 matrices:
#: 4-5 problems a batch about 20 % faster than 10); small problems are batched up to 250.
_SOFT_IMPUTE_ENTRIES = 120_000


def local_row_positions(local_rows: Any, n: int) -> np.ndarray:
    """Positions of the domain rows (at least 2, fewer than all ``n``) from a boolean mask
    of length ``n`` or integer positions; a clear error otherwise."""
    lr = np.asarray(local_rows)
    if lr.dtype == bool:
        if lr.shape != (n,):
            raise ValueError(f"boolean local_rows must have length {n}; got shape {lr.shape}")
        idx = np.flatnonzero(lr)
    else:
        idx = np.unique(lr.astype(int))
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(f"local_rows must be positions in 0..{n - 1}")
    if idx.size < 2 or idx.size >= n:
        raise ValueError(
            f"local_rows must select at least 2 and fewer than all {n} rows; got {idx.size}"
        )
    return idx


def _cols_index(observed_cols: Any, columns: list) -> np.ndarray:
    """Positions of ``observed_cols`` given as labels (DataFrame) or positions."""
    out = []
    for c in observed_cols:
        if c in columns:
            out.append(columns.index(c))
        elif isinstance(c, (int, np.integer)) and 0 <= int(c) < len(columns):
            out.append(int(c))
        else:
            raise ValueError(f"observed column {c!r} is not a column of X_global ({columns})")
    return np.array(out, dtype=int)


@dataclass(frozen=True)
class _Design:
    """One approach of the experiment: rows that carry masks, fixed complete rows, and
    the positions (within the masked rows) of the domain rows that are scored."""

    X_rows: np.ndarray
    masks: np.ndarray
    X_fixed: np.ndarray | None
    scored: np.ndarray
    label: str

    def matrix(self, r: int) -> np.ndarray:
        """The masked matrix of repetition ``r`` (masked rows first, then fixed rows)."""
        Xm = self.X_rows.copy()
        Xm[self.masks[r]] = np.nan
        return Xm if self.X_fixed is None else np.vstack([Xm, self.X_fixed])

    def with_masks(self, masks: np.ndarray) -> _Design:
        """The same design with other masks (e.g. the repetitions of several settings)."""
        return _Design(self.X_rows, masks, self.X_fixed, self.scored, self.label)

    def rmse(self, pred: np.ndarray, r: np.ndarray | slice) -> np.ndarray:
        """RMSE on the scored masked entries; ``pred`` is (R, n_scored, d) for reps ``r``."""
        m = self.masks[r][:, self.scored]
        err = np.where(m, pred - self.X_rows[self.scored][None], 0.0)
        return np.sqrt((err**2).sum(axis=(1, 2)) / m.sum(axis=(1, 2)))


def _check_fillable(design: _Design) -> None:
    """Soft-impute needs an observed entry in every column of every repetition."""
    empty = design.masks.all(axis=1)
    if empty.any():
        r, j = np.argwhere(empty)[0]
        raise ValueError(
            f"repetition {r}: column {j} is entirely masked in the "
            f"{design.label} matrix, which soft-impute cannot fill "
            "(use a smaller p)"
        )


def _soft_impute_runs(
    design: _Design, est: SoftImpute
) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """RMSE, relative shrinkage, rank and iterations of soft-impute on every repetition
    (batched; fixed rows via their Gram). Fits stopped by ``stopping="change"`` (the
    authors' fancyimpute rule) may end at ``max_iter`` without a warning: that is the
    method; their iterations are in the output."""
    _check_fillable(design)
    R, n, d = design.masks.shape
    shrink = est.shrinkage
    if shrink is None:  # the validation rule on the first draw, then held fixed
        shrink = clone(est).set_params(empty_row="ignore").choose_shrinkage(design.matrix(0))
    max_rank = None if est.max_rank is None else int(est.max_rank)
    settings = (max_rank, int(est.max_iter), float(est.tol))
    rank, n_iter = np.empty(R, dtype=int), np.empty(R, dtype=int)
    Z_all, mean_all, sd_all = np.empty((R, n, d)), np.empty((R, d)), np.empty((R, d))
    chunk = max(1, min(250, _SOFT_IMPUTE_ENTRIES // (n * d)))
    for start in range(0, R, chunk):
        sl = slice(start, min(start + chunk, R))
        observed = ~design.masks[sl]
        Xc, G, mean, sd = standardise(
            design.X_rows, observed, design.X_fixed, est.center, est.scale
        )
        lam = shrink * lambda_max(Xc, G)
        Z, _, n_iter[sl], conv = soft_impute_batch(
            Xc, observed, G, lam, np.zeros_like(Xc), *settings, stopping=est.stopping
        )
        if not conv.all() and est.stopping == "limit":
            warnings.warn(
                f"soft-impute did not converge in {est.max_iter} iterations in "
                f"{int((~conv).sum())} repetitions",
                ConvergenceWarning,
                stacklevel=4,
            )
        Z_all[sl], mean_all[sl], sd_all[sl] = Z, mean, sd
        M = np.where(observed, Xc, Z)
        _, shrunk = svt_weights(G + np.swapaxes(M, 1, 2) @ M, lam, max_rank)
        rank[sl] = (shrunk > 0).sum(axis=1)
    # numpy sums a batch of errors in an order that depends on the batch's size and memory
    # layout: the errors are computed and summed in the batches they have always been, so
    # that every RMSE keeps its bits whatever the batches of the fits
    rmse = np.empty(R)
    chunk = max(1, min(250, _CHUNK_ENTRIES // (n * d)))
    for start in range(0, R, chunk):
        sl = slice(start, min(start + chunk, R))
        pred = Z_all[sl][:, design.scored] * sd_all[sl][:, None, :] + mean_all[sl][:, None, :]
        rmse[sl] = design.rmse(pred, sl)
    return rmse, float(shrink), rank, n_iter


def _smc_runs(design: _Design, est: StructuredCompletion) -> tuple[np.ndarray, np.ndarray]:
    """RMSE and rank of SMC on every repetition (fast path).

    The same estimator as :class:`StructuredCompletion`, with the singular vectors taken
    from Gram matrices so that the fixed complete rows enter through precomputed sums. The
    repetitions whose masks leave the same columns complete and the same number of rows
    complete (all of them under one block of rows) are one stack of problems of one shape,
    solved together (:func:`_smc_stack`); the arithmetic of every problem is that of one
    problem alone.
    """
    est._check_params()
    X_rows, d = design.X_rows, design.X_rows.shape[1]
    X_out = design.X_fixed if design.X_fixed is not None else X_rows[:0]
    n_out = X_out.shape[0]
    out_mean = X_out.mean(axis=0) if n_out else np.zeros(d)
    C_out = (X_out - out_mean).T @ (X_out - out_mean)
    masks = design.masks
    inc, c2 = masks.any(axis=2), masks.any(axis=1)
    m1 = n_out + (~inc).sum(axis=1)
    bad = (m1 == 0) | c2.all(axis=1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"repetition {r}: the {design.label} matrix has no fully "
            f"observed {'row' if m1[r] == 0 else 'column'}; structured "
            "completion needs both (use a smaller p)"
        )
    scored = np.zeros(X_rows.shape[0], dtype=bool)
    scored[design.scored] = True
    R = masks.shape[0]
    rmse, ranks = np.empty(R), np.empty(R, dtype=int)
    _, group = np.unique(np.column_stack([c2, m1]), axis=0, return_inverse=True)
    for g in np.unique(group):
        reps = np.flatnonzero(group.ravel() == g)
        rmse[reps], ranks[reps] = _smc_stack(
            X_rows, masks[reps], inc[reps], scored, (n_out, out_mean, C_out), est
        )
    return rmse, ranks


def _smc_stack(
    X_rows: np.ndarray,
    masks: np.ndarray,
    inc: np.ndarray,
    scored: np.ndarray,
    fixed: tuple[int, np.ndarray, np.ndarray],
    est: StructuredCompletion,
) -> tuple[np.ndarray, np.ndarray]:
    """SMC on ``G`` repetitions whose masks leave the same columns and the same number of
    rows complete: RMSE on the scored masked entries and rank, per repetition."""
    n_out, out_mean, C_out = fixed
    G, n, d = masks.shape
    c2 = masks[0].any(axis=0)
    C1, C2 = np.flatnonzero(~c2), np.flatnonzero(c2)
    n_inc = int(inc[0].sum())
    top = X_rows[np.nonzero(~inc)[1].reshape(G, n - n_inc)]  # rows in order, per repetition
    rows_inc = np.nonzero(inc)[1].reshape(G, n_inc)
    Xi = X_rows[rows_inc]
    m1 = n_out + top.shape[1]
    mu = (n_out * out_mean + top.sum(axis=1)) / m1 if est.center else np.zeros((G, d))
    shift = out_mean - mu
    Gt = (
        C_out
        + n_out * (shift[:, :, None] * shift[:, None, :])
        + np.swapaxes(top - mu[:, None, :], 1, 2) @ (top - mu[:, None, :])
    )
    if est.scale:
        sd = np.sqrt(np.diagonal(Gt, axis1=1, axis2=2) / m1)
        sd[~(sd > 1e-12 * np.maximum(np.abs(mu), 1.0))] = 1.0
    else:
        sd = np.ones((G, d))
    Gt = Gt / (sd[:, :, None] * sd[:, None, :])
    A21 = (Xi[:, :, C1] - mu[:, None, C1]) / sd[:, None, C1]
    _, V1 = eig_desc(Gt[:, C1[:, None], C1[None, :]] + np.swapaxes(A21, 1, 2) @ A21)
    perm = np.concatenate([C1, C2])
    e2, V2 = eig_desc(Gt[:, perm[:, None], perm[None, :]])
    B1 = (np.sqrt(e2)[:, :, None] * np.swapaxes(V2, 1, 2))[:, : min(m1, d)]
    rank = None if est.rank is None else int(est.rank)
    A22, ranks, _ = smc_rule_batch(
        V1, B1, A21, m1, rank, float(est.threshold_constant), est.thresholding, n + n_out, d
    )
    pred = A22 * sd[:, None, C2] + mu[:, None, C2]
    rmse = np.empty(G)
    for r in range(G):  # the error on the scored masked entries, as one repetition alone
        keep = scored[rows_inc[r]]
        m = masks[r, rows_inc[r]][keep][:, C2]
        err = (pred[r][keep] - Xi[r][keep][:, C2])[m]
        rmse[r] = np.sqrt(np.mean(err**2))
    return rmse, ranks


def _estimator_runs(design: _Design, est: Any) -> tuple[np.ndarray, np.ndarray]:
    """RMSE of any ``fit_transform`` estimator on every repetition (one fit per draw)."""
    R = design.masks.shape[0]
    rmse, rank = np.empty(R), np.full(R, -1)
    for r in range(R):
        model = clone(est)
        filled = np.asarray(model.fit_transform(design.matrix(r)), dtype=float)
        rmse[r] = design.rmse(filled[design.scored][None], slice(r, r + 1))[0]
        rank[r] = getattr(model, "rank_", -1)
    return rmse, rank


def _resolve_method(method: Any, pattern: str, params: dict) -> tuple[str, Any]:
    if isinstance(method, str):
        if method not in METHODS:
            raise ValueError(
                f"method must be one of {METHODS} or an estimator with "
                f"fit_transform; got {method!r}"
            )
        name = method
        if name == "auto":
            name = "soft_impute" if pattern == "random" else "structured"
        est = SoftImpute(**params) if name == "soft_impute" else StructuredCompletion(**params)
        return name, est
    if not hasattr(method, "fit_transform"):
        raise TypeError(
            f"method must be a name or an estimator with fit_transform; got {type(method).__name__}"
        )
    if params:
        method = clone(method).set_params(**params)
    return type(method).__name__, method


def _approach_frame(design: _Design, est: Any) -> dict[str, np.ndarray]:
    """RMSE, rank, shrinkage and iterations of one approach over every repetition."""
    shrink = float("nan")
    n_iter = np.full(design.masks.shape[0], -1)
    if isinstance(est, SoftImpute):
        rmse, shrink, rank, n_iter = _soft_impute_runs(design, est)
    elif isinstance(est, StructuredCompletion):
        rmse, rank = _smc_runs(design, est)
    elif isinstance(est, ColumnMeans):
        rmse, rank = _column_means_runs(design)
    else:
        rmse, rank = _estimator_runs(design, est)
    return {
        "rmse": rmse,
        "rank": rank,
        "shrinkage": np.full(rmse.shape[0], shrink),
        "n_iter": n_iter,
    }


def global_vs_local(
    X_global: Any,
    local_rows: Any,
    pattern: str = "random",
    p: float = 0.8,
    n_reps: int = 1000,
    method: Any = "auto",
    random_state: Any = 0,
    observed_cols: Sequence[Any] | None = None,
    method_params: dict | None = None,
    mask_scope: str = "domain",
    same_rows: bool = True,
) -> pd.DataFrame:
    """Compare global and local completion of one domain (Appendix G, Figures 15-16).

    In every repetition entries are removed (``pattern``); the domain rows are then
    completed once from the whole matrix ("global") and once from the domain rows alone
    ("local"), and the RMSE on the removed entries of the domain rows is recorded.

    Parameters
    ----------
    X_global : array-like or DataFrame of shape (n_rows, n_cols)
        The fully observed matrix (the ground truth), e.g. the six leaderboard scores.
    local_rows : array-like of bool (length n_rows) or of int
        The rows of the domain.
    pattern : {"random", "block"}
        :func:`mask_random` (each entry removed with probability ``p``) or
        :func:`mask_block` (``observed_cols`` kept; in the other columns a fraction ``p``
        of the rows removed).
    p : float
        Missing probability (random) or fraction of rows removed per column (block).
    n_reps : int
        Number of repetitions (independent masks).
    method : {"auto", "soft_impute", "structured"} or estimator
        ``"auto"``: soft-impute for the random pattern, SMC for the block pattern (as in
        the paper). An estimator with ``fit_transform`` is cloned and fitted per draw.
    random_state : int, numpy.random.Generator or None
        Seeds the masks (and the held-out draw of the shrinkage rule).
    observed_cols : sequence of labels or positions, optional
        Fully observed columns of the block pattern (required for ``pattern="block"``).
    method_params : dict, optional
        Parameters of :class:`SoftImpute` / :class:`StructuredCompletion` (or set on the
        estimator). With ``shrinkage`` given, no validation is run.
    mask_scope : {"domain", "all"}
        ``"domain"`` (default): entries are removed from the domain rows only, and the
        rest of the matrix is fully observed. ``"all"``: every row of the matrix is
        masked by the same scheme (as in the authors' notebook); the score still uses the
        domain rows only. ``"all"`` makes the global soft-impute about ``n_rows /
        n_domain`` times slower.
    same_rows : bool
        Block pattern only: one set of rows for all other columns (a single block; default)
        or an independent set per column (see :func:`mask_block`).

    Returns
    -------
    pandas.DataFrame
        One row per repetition and approach: ``rep``, ``approach`` (``"global"`` or
        ``"local"``), ``rmse``, ``n_missing`` (removed entries of the domain),
        ``rank`` (rank of the fit; -1 if unknown), ``shrinkage`` (relative lambda used by
        soft-impute; NaN otherwise), ``n_iter`` (soft-impute iterations; -1 for other
        methods), ``pattern``, ``p``, ``method``, ``observed_cols``
        (comma-separated labels; "" for random), ``mask_scope``.

    Notes
    -----
    Soft-impute's relative shrinkage is chosen per approach by the validation rule of
    :class:`SoftImpute` on the draw of repetition 0 and then held fixed; all repetitions
    are fitted together (batched soft-impute; fully observed rows enter only through their
    Gram matrix). SMC uses the same estimator as :class:`StructuredCompletion` with its
    singular vectors computed from Gram matrices (identical up to rounding). Rows whose
    every entry is removed receive the column means, without a warning.
    """
    run = _prepare(
        X_global,
        local_rows,
        pattern,
        p,
        n_reps,
        method,
        random_state,
        observed_cols,
        method_params,
        mask_scope,
        same_rows,
    )
    with single_thread_blas():
        parts = [_approach_frame(design, run.est) for design in run.designs]
    return run.frame(parts)


def global_vs_local_many(
    X_global: Any, local_rows: Any, settings: Sequence[dict[str, Any]]
) -> list[pd.DataFrame]:
    """:func:`global_vs_local` for several settings of one matrix and domain.

    Every setting's masks are drawn from its own ``random_state`` as :func:`global_vs_local`
    draws them, and the output is ``[global_vs_local(X_global, local_rows, **kw) for kw in
    settings]``. The settings fitted by soft-impute with a given ``shrinkage`` and the same
    parameters are fitted as one stack of repetitions (the fit of every repetition is the
    one it gets alone); the others run one setting at a time.

    Parameters
    ----------
    X_global, local_rows
        As in :func:`global_vs_local`.
    settings : sequence of dict
        Keyword arguments of :func:`global_vs_local`, one dict per setting.

    Returns
    -------
    list of DataFrame
        One frame per setting, in the order of ``settings``.
    """
    runs = [_prepare(X_global, local_rows, **kw) for kw in settings]
    groups: dict[Any, list[int]] = {}
    for i, run in enumerate(runs):
        key: Any = i
        if isinstance(run.est, SoftImpute) and run.est.shrinkage is not None:
            params = run.est.get_params()
            params.pop("random_state")
            key = ("stack", run.mask_scope, repr(sorted(params.items())))
        groups.setdefault(key, []).append(i)
    parts: list[list[dict[str, np.ndarray]]] = [[] for _ in runs]
    with single_thread_blas():
        for members in groups.values():
            est = runs[members[0]].est
            for a in range(2):
                designs = [runs[i].designs[a] for i in members]
                for design in designs:
                    _check_fillable(design)
                stacked = designs[0].with_masks(np.concatenate([d.masks for d in designs]))
                out = _approach_frame(stacked, est)
                at = np.cumsum([0] + [d.masks.shape[0] for d in designs])
                for j, i in enumerate(members):
                    parts[i].append({k: v[at[j] : at[j + 1]] for k, v in out.items()})
    return [run.frame(part) for run, part in zip(runs, parts)]


@dataclass(frozen=True)
class _Run:
    """One setting of :func:`global_vs_local`, checked, with its masks drawn."""

    designs: tuple[_Design, _Design]
    est: Any
    name: str
    n_missing: np.ndarray
    labels: dict[str, Any]

    @property
    def mask_scope(self) -> str:
        return self.labels["mask_scope"]

    def frame(self, parts: list[dict[str, np.ndarray]]) -> pd.DataFrame:
        """The output frame of :func:`global_vs_local` from the two approaches' results."""
        n_reps = self.n_missing.shape[0]
        both = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
        return pd.DataFrame(
            {
                "rep": np.tile(np.arange(n_reps), 2),
                "approach": np.repeat(["global", "local"], n_reps),
                "rmse": both["rmse"],
                "n_missing": np.tile(self.n_missing, 2),
                "rank": both["rank"],
                "shrinkage": both["shrinkage"],
                "n_iter": both["n_iter"],
                "pattern": self.labels["pattern"],
                "p": self.labels["p"],
                "method": self.name,
                "observed_cols": self.labels["observed_cols"],
                "mask_scope": self.mask_scope,
            }
        )


def _prepare(
    X_global: Any,
    local_rows: Any,
    pattern: str = "random",
    p: float = 0.8,
    n_reps: int = 1000,
    method: Any = "auto",
    random_state: Any = 0,
    observed_cols: Sequence[Any] | None = None,
    method_params: dict | None = None,
    mask_scope: str = "domain",
    same_rows: bool = True,
) -> _Run:
    """Check the arguments of :func:`global_vs_local` and draw the masks."""
    if pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {PATTERNS}; got {pattern!r}")
    if mask_scope not in _SCOPES:
        raise ValueError(f"mask_scope must be one of {_SCOPES}; got {mask_scope!r}")
    X = check_matrix(X_global, name="X_global", allow_nan=True)
    # the column labels only (the row labels of a long frame are slow to list; they name
    # rows in the message below)
    cols = labels_of(X_global.iloc[:0] if isinstance(X_global, pd.DataFrame) else X[:0])[1]
    if np.isnan(X).any():
        rows = labels_of(X_global)[0]
        bad = np.flatnonzero(np.isnan(X).any(axis=1))
        raise ValueError(
            f"X_global must be fully observed (it is the ground truth); "
            f"rows with NaN: {show_labels(rows, bad)}"
        )
    if int(n_reps) < 1:
        raise ValueError(f"n_reps must be >= 1; got {n_reps!r}")
    n, d = X.shape
    dom = local_row_positions(local_rows, n)
    n_masked = n if mask_scope == "all" else dom.size
    rng = np.random.default_rng(random_state)
    if pattern == "block":
        if observed_cols is None:
            raise ValueError("pattern='block' needs observed_cols")
        obs_idx = _cols_index(observed_cols, cols)
        masks = mask_blocks(n_masked, d, obs_idx, p, rng, same_rows, int(n_reps))
        obs_label = ",".join(str(cols[j]) for j in obs_idx)
    else:
        masks = mask_randoms((n_masked, d), p, rng, int(n_reps))
        obs_label = ""
    dom_masks = masks[:, dom] if mask_scope == "all" else masks
    n_missing = dom_masks.sum(axis=(1, 2))
    if (n_missing == 0).any():
        raise ValueError(
            f"p={p} removes no entry of the {dom.size} domain rows in some repetition; increase p"
        )
    params = dict(method_params or {})
    name, est = _resolve_method(method, pattern, params)
    if isinstance(est, SoftImpute) and "random_state" not in params:
        seed = random_state if not isinstance(random_state, np.random.Generator) else 0
        est = est.set_params(random_state=seed)
    local = _Design(X[dom], dom_masks, None, np.arange(dom.size), "local")
    if mask_scope == "all":
        glob = _Design(X, masks, None, dom, "global")
    else:
        glob = _Design(X[dom], masks, np.delete(X, dom, axis=0), np.arange(dom.size), "global")
    labels = {
        "pattern": pattern,
        "p": float(p),
        "observed_cols": obs_label,
        "mask_scope": mask_scope,
    }
    return _Run((glob, local), est, name, n_missing, labels)


def _column_means_runs(design: _Design) -> tuple[np.ndarray, np.ndarray]:
    """RMSE of :class:`ColumnMeans` on every repetition (vectorised, in chunks)."""
    R, n, d = design.masks.shape
    fixed_sum = design.X_fixed.sum(axis=0) if design.X_fixed is not None else np.zeros(d)
    n_fixed = 0 if design.X_fixed is None else design.X_fixed.shape[0]
    rmse = np.empty(R)
    chunk = max(1, _CHUNK_ENTRIES // (n * d))
    for start in range(0, R, chunk):
        sl = slice(start, min(start + chunk, R))
        observed = ~design.masks[sl]
        count = observed.sum(axis=1) + n_fixed
        if (count == 0).any():
            r, j = np.argwhere(count == 0)[0]
            raise ValueError(
                f"repetition {start + r}: column {j} is entirely masked in the "
                f"{design.label} matrix (use a smaller p)"
            )
        total = np.einsum("rnd,nd->rd", observed.astype(float), design.X_rows) + fixed_sum
        mean = total / count
        pred = np.broadcast_to(mean[:, None, :], (mean.shape[0], design.scored.size, d))
        rmse[sl] = design.rmse(pred, sl)
    return rmse, np.zeros(R, dtype=int)


# --------------------------------------------------------------------------- domain matrix
def domain_matrix(
    frame: pd.DataFrame, domain: str, columns: Sequence[str], by: str = "base_model"
) -> tuple[pd.DataFrame, np.ndarray]:
    """The score matrix of a leaderboard and the rows of one domain.

    Parameters
    ----------
    frame : DataFrame
        A leaderboard with the score ``columns`` and the domain label ``by`` (e.g. the
        v2 leaderboard joined with :func:`hca.attribution.identify`).
    domain : str
        The domain, e.g. ``"Qwen2.5-14B"``.
    columns : sequence of str
        Score columns, e.g. :data:`hca.data.V2_BENCHMARKS`.
    by : str
        Column holding the domain labels (NA: unattributed).

    Returns
    -------
    X : DataFrame
        ``frame[columns]`` as floats with a fresh 0..n-1 index.
    local : ndarray of bool
        ``True`` for the rows of ``domain``.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"domain_matrix expects a DataFrame, got {type(frame).__name__}")
    missing_cols = [c for c in [*columns, by] if c not in frame.columns]
    if missing_cols:
        raise ValueError(
            f"domain_matrix: columns {missing_cols} are missing; found {list(frame.columns)[:12]}"
        )
    X = frame[list(columns)].astype(float).reset_index(drop=True)
    bad = np.flatnonzero(X.isna().any(axis=1).to_numpy())
    if bad.size:
        raise ValueError(
            f"domain_matrix: {bad.size} rows have missing scores (positions "
            f"{bad[:MAX_SHOW].tolist()}); the ground truth must be complete"
        )
    labels = frame[by].astype("string")
    local = labels.eq(domain).fillna(False).to_numpy(dtype=bool)
    if not local.any():
        top = labels.value_counts().head(5).index.tolist()
        raise ValueError(f"domain {domain!r} has no rows in column {by!r}; largest domains: {top}")
    return X, local


# --------------------------------------------------------------------------- seeds
def _seeds(random_state: Any, k: int) -> list[int]:
    """``k`` integer seeds derived from ``random_state`` (int, None or Generator)."""
    if isinstance(random_state, np.random.Generator):
        return [int(s) for s in random_state.integers(0, 2**32, size=k)]
    return [int(s) for s in np.random.SeedSequence(random_state).generate_state(k)]


# --------------------------------------------------------------------------- summaries
_RESULT_COLUMNS = ("approach", "rmse", "rank", "shrinkage", "n_iter")


def paired_rmse(frame: pd.DataFrame) -> pd.DataFrame:
    """Global and local RMSE side by side, one row per repetition.

    Parameters
    ----------
    frame : DataFrame
        Output of :func:`global_vs_local` or :func:`hca.paper.appendix_g.run_appendix_g` (any
        extra columns that identify a repetition are kept).

    Returns
    -------
    DataFrame
        Columns ``global`` and ``local``, indexed by every column of ``frame`` other than
        ``approach``, ``rmse``, ``rank``, ``shrinkage`` and ``n_iter``.
    """
    need = [c for c in ("approach", "rmse", "rep") if c not in frame.columns]
    if need:
        raise ValueError(f"paired_rmse: columns {need} are missing; found {list(frame.columns)}")
    found = set(frame["approach"].unique())
    if found != {"global", "local"}:
        raise ValueError(
            f"paired_rmse: approach must take the values 'global' and "
            f"'local'; found {sorted(found)}"
        )
    keys = [c for c in frame.columns if c not in _RESULT_COLUMNS]
    if frame.duplicated(subset=[*keys, "approach"]).any():
        raise ValueError(
            "paired_rmse: several rows share one repetition and approach; "
            "the frame mixes runs that no column tells apart"
        )
    wide = frame.set_index([*keys, "approach"])["rmse"].unstack("approach")
    if wide.isna().any().any():
        raise ValueError("paired_rmse: some repetitions have only one approach")
    wide.columns.name = None
    return wide[["global", "local"]]


def compare_approaches(
    frame: pd.DataFrame, by: Sequence[str] = ("p",), level: float = 0.95
) -> pd.DataFrame:
    """Summarise global versus local RMSE per group of repetitions.

    Parameters
    ----------
    frame : DataFrame
        Output of :func:`global_vs_local` or :func:`hca.paper.appendix_g.run_appendix_g`.
    by : sequence of str
        Columns to group by (empty: one group).
    level : float
        Level of the normal-approximation intervals for the means and for the mean paired
        difference (repetitions treated as independent draws).

    Returns
    -------
    DataFrame
        One row per group: ``n`` (repetitions), ``global_mean``, ``global_lo``,
        ``global_hi``, ``local_mean``, ``local_lo``, ``local_hi``, ``global_median``,
        ``local_median``, ``ratio_median`` (median over repetitions of local / global),
        ``share_local_better`` (share of repetitions with local < global),
        ``diff_mean`` (mean of local - global), ``diff_lo``, ``diff_hi`` and ``verdict``:
        "local better" if the interval of the difference lies below 0, "global better" if
        above, "no clear difference" otherwise ("too few repetitions" if n < 2).
    """
    check_fraction(level, "level")
    by = list(by)
    missing = [c for c in by if c not in frame.columns]
    if missing:
        raise ValueError(f"compare_approaches: grouping columns {missing} are missing")
    z = NormalDist().inv_cdf(0.5 + level / 2)
    wide = paired_rmse(frame).reset_index()
    g, loc = wide["global"], wide["local"]
    wide = wide.assign(_diff=loc - g, _ratio=loc / g, _better=(loc < g).astype(float))
    groups = wide.groupby(by, sort=True, observed=True) if by else [((), wide)]
    rows, index = [], []
    for key, sub in groups:
        n = len(sub)
        row = {"n": n}
        for name, col in (
            ("global", sub["global"]),
            ("local", sub["local"]),
            ("diff", sub["_diff"]),
        ):
            m = col.mean()
            half = z * col.std(ddof=1) / np.sqrt(n) if n > 1 else float("nan")
            row[f"{name}_mean"], row[f"{name}_lo"], row[f"{name}_hi"] = m, m - half, m + half
        row["global_median"] = sub["global"].median()
        row["local_median"] = sub["local"].median()
        row["ratio_median"] = sub["_ratio"].median()
        row["share_local_better"] = sub["_better"].mean()
        if n < 2:
            row["verdict"] = "too few repetitions"
        elif row["diff_hi"] < 0:
            row["verdict"] = "local better"
        elif row["diff_lo"] > 0:
            row["verdict"] = "global better"
        else:
            row["verdict"] = "no clear difference"
        rows.append(row)
        index.append(key)
    mean_ci = [f"{a}_{s}" for a in ("global", "local", "diff") for s in ("mean", "lo", "hi")]
    medians = ["global_median", "local_median", "ratio_median", "share_local_better"]
    out = pd.DataFrame(rows, columns=["n", *mean_ci[:6], *medians, *mean_ci[6:], "verdict"])
    if by:
        out.index = (
            pd.MultiIndex.from_tuples(index, names=by)
            if len(by) > 1
            else pd.Index([k[0] if isinstance(k, tuple) else k for k in index], name=by[0])
        )
    return out


# --------------------------------------------------------------------------- Appendix G
#: The authors' soft-impute (``fancyimpute.SoftImpute(max_rank=3)`` with its defaults: lambda
#: = lambda_max / 50 on the uncentred, zero-filled matrix; plain iterations from zero, stopped
#: when the filled-in entries change by less than 0.1 % or after 100 iterations), as
#: :class:`SoftImpute` parameters.
AUTHORS_SOFT_IMPUTE: dict[str, Any] = {
    "shrinkage": 0.02,
    "max_rank": 3,
    "center": False,
    "stopping": "change",
    "tol": 1e-3,
    "max_iter": 100,
}


def rmse_by_row_observed(X_true: Any, X_hat: Any, mask: Any) -> pd.DataFrame:
    """Error on the removed entries, split by how many entries of their row are observed.

    Parameters
    ----------
    X_true, X_hat : array-like of the same shape
    mask : array-like of bool, same shape
        The removed entries (``True``).

    Returns
    -------
    DataFrame
        One row per number of observed entries in the row (0 .. n_cols - 1) that occurs
        among rows with a removed entry: ``row_observed``, ``n_entries`` (removed entries),
        ``sse`` (sum of squared errors) and ``rmse``.
    """
    a, b = np.asarray(X_true, dtype=float), np.asarray(X_hat, dtype=float)
    m = np.asarray(mask, dtype=bool)
    if not (a.shape == b.shape == m.shape) or a.ndim != 2:
        raise ValueError(
            f"shapes differ or are not 2-D: X_true {a.shape}, X_hat {b.shape}, mask {m.shape}"
        )
    if not m.any():
        raise ValueError("mask selects no entry")
    err = np.where(m, a - b, 0.0)
    if not np.isfinite(err).all():
        raise ValueError("masked entries of X_true or X_hat are not finite")
    observed = (~m).sum(axis=1)
    rows = m.any(axis=1)
    frame = pd.DataFrame(
        {
            "row_observed": observed[rows],
            "n_entries": m[rows].sum(axis=1),
            "sse": (err[rows] ** 2).sum(axis=1),
        }
    )
    out = frame.groupby("row_observed", as_index=False).sum()
    out["rmse"] = np.sqrt(out["sse"] / out["n_entries"])
    return out


def random_mask_diagnostics(
    X_global: Any, local_rows: Any, p: float = 0.8, n_draws: int = 20, random_state: Any = 0
) -> pd.DataFrame:
    """Local completion of a domain under random masks, error split by row coverage.

    For each of ``n_draws`` random masks of the domain rows (probability ``p``), the
    domain is completed from its own rows by soft-impute with the validation rule (the
    library default), by the authors' soft-impute (:data:`AUTHORS_SOFT_IMPUTE`) and by
    :class:`ColumnMeans`; the squared errors are split with :func:`rmse_by_row_observed`.

    Parameters
    ----------
    X_global : array-like or DataFrame (n_rows, n_cols)
    local_rows : array-like of bool or int
    p : float
    n_draws : int
    random_state : int, Generator or None

    Returns
    -------
    DataFrame
        ``draw``, ``method``, ``shrinkage`` (relative lambda used; NaN for column means),
        ``row_observed``, ``n_entries``, ``sse``, ``rmse``.
    """
    X = check_matrix(X_global, name="X_global", allow_nan=True)
    dom = local_row_positions(local_rows, X.shape[0])
    Xd = X[dom]
    methods = {
        "soft-impute": lambda seed: SoftImpute(empty_row="ignore", random_state=seed),
        "authors' soft-impute": lambda seed: SoftImpute(empty_row="ignore", **AUTHORS_SOFT_IMPUTE),
        "column means": lambda seed: ColumnMeans(),
    }
    parts = []
    for draw, seed in enumerate(_seeds(random_state, int(n_draws))):
        mask = mask_random(Xd.shape, p, seed)
        Xm = np.where(mask, np.nan, Xd)
        for name, make in methods.items():
            est = make(seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                filled = est.fit_transform(Xm)
            part = rmse_by_row_observed(Xd, filled, mask)
            part.insert(0, "draw", draw)
            part.insert(1, "method", name)
            part.insert(2, "shrinkage", getattr(est, "shrinkage_", float("nan")))
            parts.append(part)
    return pd.concat(parts, ignore_index=True)
