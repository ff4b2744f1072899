"""How stable is an HCA fit? ICA seeds, bootstrap resamples and domain subsets.

The paper reports one HCA fit per analysis. This module refits HCA many times and records,
for every refit, what the paper reads off a fit: the MIC, the inexactness of every domain,
the causal order (which benchmark each factor aligns with after the OLS adjustment of
Section 4) and the adjusted structural equations (edge weights and source scales).

Every sweep takes an :class:`~hca.estimator.HCA` instance for the settings of its refits and
clones it (:func:`hca.estimator.clone_hca`), and runs its independent work through
:class:`joblib.Parallel` (``n_jobs``). Seeds and resamples are fixed before the refits start,
so the result is the same for any ``n_jobs`` and keeps the input order. Many searches run as
one batch (:func:`hca.estimator.search.hca_search_batch`); nothing is memoised between calls.
:func:`ica_solutions`, :func:`ica_reproducible` / :func:`ica_reproducible_many`,
:func:`domain_icas` and :func:`reversed_rows` live in :mod:`hca.estimator.ensemble` and are
re-exported here.

Conventions
-----------
* The alignment of factor ``z_i`` is the benchmark the OLS adjustment picks for it (largest
  R^2 of ``z_i ~ z_1..z_{i-1} + x_B + const``, :meth:`hca.estimator.HCA.adjust`); the tuple
  of the three picks is the *alignment* of a fit, e.g. ``("bbh", "ifeval", "math_lvl_5")``.
* A *pattern* is a sequence of sets of allowed benchmarks, one per factor; a record can flag
  the fits whose alignment follows named patterns (``patterns={"paper_order": pattern}``,
  one boolean column per name; :func:`matches_alignment`). The paper's pattern
  (``hca.paper.constants.PAPER_ALIGNMENT``) is passed by the paper's chapters.
* Edge weights are those of the adjusted SCM with unit-variance sources (as in Figure 4):
  column ``w[<domain>] z<j>->z<i>`` holds ``A[i, j]`` and ``scale[<domain>] eps<i>`` the
  source scale. Comparing weights across refits is meaningful only between refits with the
  same alignment; :meth:`StabilityResult.weights` filters on it.
* Everything is deterministic given the seeds (``numpy.random.default_rng``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.stats import binomtest, special_ortho_group
from sklearn.exceptions import ConvergenceWarning

from hca.data.registry import role_position
from hca.estimator.ensemble import (
    check_icas,
    domain_icas,
    ica_reproducible,
    ica_reproducible_many,
    ica_solutions,
    int_seeds,
    reversed_rows,
)
from hca.estimator.ica import DomainICA, fit_icas_many
from hca.estimator.model import (
    HCA,
    clone_hca,
    fit_each_from_ica,
    fit_many_from_ica,
    ica_options,
    mic_by_subset_many,
)
from hca.estimator.progress import Listener
from hca.estimator.search import (
    UncertifiedSearchWarning,
    all_orders,
    check_search_size,
    evaluate_order,
    hca_search_batch,
)
from hca.synthetic import simulate_scm
from hca.synthetic_alt import simulate_leaderboard
from hca.validation import (
    check_domains,
    check_fit_data,
    check_is_fitted,
    check_params,
    check_positive_int,
    is_int,
)

__all__ = [
    "fit_record",
    "matches_alignment",
    "StabilityResult",
    "seed_stability",
    "bootstrap_index",
    "bootstrap_samples",
    "bootstrap_stability",
    "subset_stability",
    "ica_solutions",
    "ica_reproducible",
    "ica_reproducible_many",
    "seed_fits",
    "domain_icas",
    "reversed_rows",
    "resample_fits",
    "ranked_orders",
    "rotation_null",
    "order_recovered",
    "recovery_study",
    "SIMULATORS",
    "TRUSTED_DOMAIN_SIZE",
]


Pattern = Sequence[Iterable[str]]


def matches_alignment(alignment: Sequence[str], pattern: Pattern, *, strict: bool = True) -> Any:
    """Whether an alignment follows a pattern (one set of allowed benchmarks per factor).

    Parameters
    ----------
    alignment : sequence of str
        The benchmark of every factor, in causal order.
    pattern : sequence of sets of str
        The allowed benchmarks of every position (a *role*).
    strict : bool, default=True
        With ``strict`` an alignment of another length never matches. Otherwise one with more
        factors matches when the first factor of every role exists and these come in the
        pattern's order, and one with fewer factors gives ``pandas.NA``.

    Returns
    -------
    bool or pandas.NA
        Same length: every factor's benchmark is in its role.
    """
    names = list(alignment)
    roles = [frozenset(p) for p in pattern]
    if len(names) == len(roles):
        return all(n in r for n, r in zip(names, roles))
    if strict:
        return False
    if len(names) < len(roles):
        return pd.NA
    firsts = []
    for r in roles:
        hit = role_position(names, r)
        if hit is None:
            return False
        firsts.append(hit)
    return all(a < b for a, b in zip(firsts, firsts[1:]))


def _pattern_flags(
    alignment: Sequence[str], patterns: Mapping[str, Pattern] | None
) -> dict[str, bool]:
    return {name: bool(matches_alignment(alignment, p)) for name, p in (patterns or {}).items()}


def fit_record(model: HCA, X: Any = None, *, patterns: Mapping[str, Pattern] | None = None) -> dict:
    """What the paper reads off one fit, as a flat dict.

    Parameters
    ----------
    model : HCA
        A fitted estimator.
    X : array-like or DataFrame, optional
        Data for the OLS adjustment (default: the training data).
    patterns : mapping of str to pattern, optional
        Named patterns (see :func:`matches_alignment`, strict); each adds a boolean column of
        that name saying whether the fit's alignment follows it.

    Returns
    -------
    dict
        ``mic``, ``alignment`` (tuple of benchmarks), ``order`` (the alignment joined by
        ``" > "``), one bool per name of ``patterns``, ``rank1[z<i>]``,
        ``alpha[<domain>]``, ``unmixing_error[<domain>]``, ``w[<domain>] z<j>->z<i>`` and
        ``scale[<domain>] eps<i>`` (adjusted SCM), ``ica_converged`` and ``certified``
        (the search's result is the optimum over all row orders).
    """
    adj = model.adjust(X)
    d = model.n_components
    rec: dict[str, Any] = {
        "mic": float(model.mic_),
        "alignment": tuple(adj.benchmarks),
        "order": " > ".join(adj.benchmarks),
        **_pattern_flags(adj.benchmarks, patterns),
        "ica_converged": all(model.ica_converged_.values()),
        "certified": bool(model.search_result_.certified),
    }
    for i, e in enumerate(model.rank1_error_):
        rec[f"rank1[z{i + 1}]"] = float(e)
    for dom in model.domains_:
        rec[f"alpha[{dom}]"] = float(model.inexactness_[dom])
        rec[f"unmixing_error[{dom}]"] = float(model.unmixing_error_[dom])
        scm = adj.models[dom]
        for i in range(d):
            for j in range(i):
                rec[f"w[{dom}] z{j + 1}->z{i + 1}"] = float(scm.A[i, j])
            rec[f"scale[{dom}] eps{i + 1}"] = float(scm.omega_sqrt[i])
    return rec


@dataclass(frozen=True, eq=False)
class StabilityResult:
    """Records of many refits.

    Attributes
    ----------
    records : DataFrame
        One row per refit (:func:`fit_record` columns plus ``replicate``/``seed``).
    kind : str
        ``"seed"`` or ``"bootstrap"``.
    patterns : tuple of str
        Names of the patterns the refits were recorded with (boolean columns of ``records``).
    """

    records: pd.DataFrame
    kind: str
    patterns: tuple[str, ...] = ()

    def alignment_counts(self) -> pd.DataFrame:
        """How often each alignment (causal order) came back: ``order, count, share``."""
        counts = self.records["order"].value_counts()
        return pd.DataFrame(
            {
                "order": counts.index,
                "count": counts.to_numpy(),
                "share": counts.to_numpy() / len(self.records),
            }
        )

    @property
    def modal_alignment(self) -> tuple:
        """The alignment that came back most often (ties: first in the records)."""
        counts = self.records["order"].value_counts(sort=True)
        best = counts.index[0]
        return tuple(self.records.loc[self.records["order"] == best, "alignment"].iloc[0])

    def pattern_share(self, name: str) -> float:
        """Share of refits whose alignment follows the pattern ``name`` (one of the
        ``patterns`` the refits were recorded with)."""
        if name not in self.records.columns:
            raise ValueError(
                f"no pattern {name!r} in the records; pass patterns={{{name!r}: "
                "...}} to the sweep"
            )
        return float(self.records[name].mean())

    def quantiles(
        self, columns: Sequence[str] | None = None, q: Sequence[float] = (0.05, 0.5, 0.95)
    ) -> pd.DataFrame:
        """Quantiles of numeric columns (default: MIC and every domain's alpha)."""
        if columns is None:
            columns = ["mic"] + [c for c in self.records.columns if c.startswith("alpha[")]
        table = self.records[list(columns)].quantile(list(q)).T
        table.columns = [f"q{int(round(100 * x)):02d}" for x in q]
        return table

    def weights(
        self, alignment: Sequence[str] | None = None, q: Sequence[float] = (0.05, 0.5, 0.95)
    ) -> pd.DataFrame:
        """Quantiles of the adjusted edge weights and source scales among the refits with
        ``alignment`` (default: the modal one); ``n`` says how many refits that is."""
        alignment = tuple(self.modal_alignment if alignment is None else alignment)
        keep = self.records["alignment"].apply(lambda a: tuple(a) == alignment)
        cols = [c for c in self.records.columns if c.startswith(("w[", "scale["))]
        table = self.records.loc[keep, cols].quantile(list(q)).T
        table.columns = [f"q{int(round(100 * x)):02d}" for x in q]
        table.insert(0, "n", int(keep.sum()))
        return table

    def summary(self) -> str:
        """MIC quantiles, the share of the modal alignment and of every named pattern."""
        mic = self.records["mic"].quantile([0.05, 0.5, 0.95]).to_numpy()
        counts = self.alignment_counts()
        shares = "".join(f"; {name} {self.pattern_share(name):.0%}" for name in self.patterns)
        return "\n".join(
            [
                f"{len(self.records)} {self.kind} refits: MIC median {mic[1]:.3f} "
                f"(5-95%: {mic[0]:.3f}-{mic[2]:.3f})",
                f"most frequent order {counts['order'].iloc[0]} ({counts['share'].iloc[0]:.0%})"
                f"{shares}",
            ]
        )


def _fit_record(
    estimator: HCA,
    X: Any,
    domains: Any,
    record: Callable = fit_record,
    patterns: Mapping[str, Pattern] | None = None,
) -> dict:
    """``record`` of a fitted clone (ConvergenceWarnings are recorded in the model)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = clone_hca(estimator).fit(X, domains)
    return _model_record(model, record, patterns)


def _model_record(
    model: HCA, record: Callable = fit_record, patterns: Mapping[str, Pattern] | None = None
) -> dict:
    return fit_record(model, patterns=patterns) if record is fit_record else record(model)


def seed_fits(
    estimator: HCA,
    X: Any,
    domains: Any,
    seeds: Sequence[int],
    *,
    progress: Listener | None = None,
    icas: Sequence[Mapping[Hashable, DomainICA]] | None = None,
) -> tuple[HCA, ...]:
    """Fitted clones of ``estimator``, one per seed (``random_state=seed``).

    Entry ``i`` equals ``clone_hca(estimator, random_state=seeds[i]).fit(X, domains)`` (to
    1e-10); the ICA of all seeds runs in one FastICA batch per domain, the searches in one
    batch.

    Parameters
    ----------
    estimator : HCA
        Settings of the fits (cloned).
    X, domains
        As in :meth:`hca.estimator.HCA.fit`.
    seeds : sequence of int
        ICA seeds, one fit each (duplicates allowed).
    progress : callable, optional
        As in :meth:`hca.estimator.HCA.fit`.
    icas : sequence of mapping, optional
        The per-domain ICA of every seed, computed before with the estimator's settings
        (:func:`domain_icas`); None: computed here.

    Returns
    -------
    tuple of HCA

    Warns
    -----
    ConvergenceWarning
        For every seed and domain whose kept ICA run did not converge (as ``fit`` does).
    """
    seeds = int_seeds(seeds)
    base = clone_hca(estimator)
    check_params(base)  # every parameter (max_iter, tol, ...) by scikit-learn's validation
    data = check_fit_data(X, domains, base.n_components)
    check_search_size(base.search, len(data.order), data.n_components)  # before any ICA
    if icas is None:
        icas = fit_icas_many(
            [(data.values, data.labels)],
            data.order,
            data.n_components,
            seeds,
            **ica_options(base),
            progress=progress,
        )[0]
    else:
        icas = check_icas(icas, len(seeds), data.order, "icas")
    ests = [clone_hca(base, random_state=s) for s in seeds]
    return fit_many_from_ica(ests, X, domains, icas, progress=progress)


def resample_fits(
    estimator: HCA, samples: Sequence[tuple[Any, Any]], seed: int | Sequence[int]
) -> tuple[HCA, ...]:
    """Fitted clones of ``estimator`` (``random_state=seed``), one per data set of
    ``samples`` (for example :func:`bootstrap_samples`), as one batch.

    Entry ``b`` equals ``clone_hca(estimator, random_state=seed).fit(*samples[b])`` (to
    1e-10).

    Parameters
    ----------
    estimator : HCA
        Settings of the fits (cloned).
    samples : sequence of (X, domains)
        Data sets, each as in :meth:`hca.estimator.HCA.fit`, all with the same domains.
    seed : int or sequence of int
        ICA seed of every fit, or one seed per sample (entry ``b`` then has
        ``random_state=seed[b]``, as in :func:`recovery_study`).

    Returns
    -------
    tuple of HCA
    """
    samples = list(samples)
    if isinstance(seed, (int, np.integer)):
        seeds = [int(seed)] * len(samples)
        base = clone_hca(estimator, random_state=int(seed))
    else:
        seeds = int_seeds(seed)
        if len(seeds) != len(samples):
            raise ValueError(f"resample_fits: {len(seeds)} seeds for {len(samples)} samples")
        base = clone_hca(estimator, random_state=seeds[0])
    check_params(base)
    data = [check_fit_data(Xb, lb, base.n_components) for Xb, lb in samples]
    if not data:
        return ()
    orders = {tuple(d.order) for d in data}
    if len(orders) != 1:
        raise ValueError(f"resample_fits: the samples hold different domains: {sorted(orders)}")
    check_search_size(base.search, len(data[0].order), data[0].n_components)  # before any ICA
    paired = len(set(seeds)) > 1
    icas = fit_icas_many(
        [(d.values, d.labels) for d in data],
        data[0].order,
        data[0].n_components,
        seeds if paired else seeds[:1],
        **ica_options(base),
        paired=paired,
    )
    return fit_each_from_ica(
        [clone_hca(base, random_state=s) for s in seeds], samples, [i[0] for i in icas]
    )


def seed_stability(
    estimator: HCA,
    X: Any,
    domains: Any,
    *,
    seeds: Iterable[int] = range(20),
    patterns: Mapping[str, Pattern] | None = None,
    n_jobs: int | None = None,
    record: Callable = fit_record,
    progress: Listener | None = None,
    fits: Sequence[HCA] | None = None,
) -> StabilityResult:
    """Refit HCA on the same data with every ICA seed in ``seeds``.

    Parameters
    ----------
    estimator : HCA
        Settings of the refits; it is cloned and its ``random_state`` set to each seed.
    X, domains
        As in :meth:`hca.estimator.HCA.fit`.
    seeds : iterable of int, default=range(20)
    patterns : mapping of str to pattern, optional
        Named alignment patterns flagged in every record of the default ``record``.
    n_jobs : int, optional
        Jobs of :class:`joblib.Parallel` for the records of the refits (the refits themselves
        run as one batch, :func:`seed_fits`); the records do not depend on ``n_jobs``.
    record : callable, default=fit_record
        ``record(fitted_model) -> dict``, the columns of a refit's row (a module-level
        function, so that it can be sent to other processes).
    progress : callable, optional
        ``progress(stage, done, total)`` during the refits (:func:`seed_fits`).
    fits : sequence of HCA, optional
        The refits, computed before: ``fits[i]`` is :func:`seed_fits` of ``estimator``,
        ``X`` and ``domains`` for ``seeds[i]``; None (default): computed here.

    Raises
    ------
    ValueError
        If ``fits`` does not hold one fitted model per seed, with that seed.
    """
    seeds = int_seeds(seeds)
    if fits is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # recorded in every model
            fits = seed_fits(estimator, X, domains, seeds, progress=progress)
    elif [getattr(m, "random_state", None) for m in fits] != seeds:
        raise ValueError(
            f"seed_stability: fits has the seeds {[getattr(m, 'random_state', None) for m in fits]}"
            f", expected {seeds}"
        )
    records = Parallel(n_jobs=n_jobs)(
        delayed(_model_record)(model, record, patterns) for model in fits
    )
    return StabilityResult(
        pd.DataFrame([{"seed": s, **r} for s, r in zip(seeds, records)]),
        "seed",
        tuple(patterns or ()),
    )


def bootstrap_index(domains: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row indices resampled with replacement within every domain (sizes kept)."""
    parts = []
    for label in pd.unique(pd.Series(domains, dtype=object)):
        rows = np.flatnonzero(domains == label)
        parts.append(rng.choice(rows, size=len(rows), replace=True))
    return np.concatenate(parts)


def bootstrap_samples(
    X: Any, domains: Any, n_boot: Any, random_state: Any = 0
) -> list[tuple[pd.DataFrame, np.ndarray]]:
    """``n_boot`` within-domain resamples ``(X_b, domains_b)`` (a DataFrame with a fresh
    index, an object array), all drawn in advance from ``default_rng(random_state)``."""
    n_boot = check_positive_int(n_boot, "n_boot")
    labels = check_domains(domains, X).labels
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=float))
    rng = np.random.default_rng(random_state)
    out = []
    for _ in range(n_boot):
        idx = bootstrap_index(labels, rng)
        out.append((frame.iloc[idx].reset_index(drop=True), labels[idx]))
    return out


def bootstrap_stability(
    estimator: HCA,
    X: Any,
    domains: Any,
    *,
    n_boot: int = 100,
    random_state: int = 0,
    patterns: Mapping[str, Pattern] | None = None,
    n_jobs: int | None = None,
    record: Callable = fit_record,
) -> StabilityResult:
    """Refit HCA on ``n_boot`` resamples of the models, drawn within every domain.

    Parameters
    ----------
    estimator : HCA
        Settings of the refits (cloned; its ``random_state``, the ICA seed, is the same for
        every resample).
    X, domains
        As in :meth:`hca.estimator.HCA.fit`.
    n_boot : int, default=100
        Number of resamples.
    random_state : int, default=0
        Seed of ``numpy.random.default_rng`` for the resampling (drawn in advance).
    patterns, n_jobs, record
        As in :func:`seed_stability`.
    """
    base = clone_hca(estimator)
    samples = bootstrap_samples(X, domains, n_boot, random_state)
    if is_int(base.random_state):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # recorded in every model
            fits = resample_fits(base, samples, int(base.random_state))
        records = Parallel(n_jobs=n_jobs)(
            delayed(_model_record)(model, record, patterns) for model in fits
        )
    else:  # None or a RandomState: its draws depend on the order of the fits
        records = Parallel(n_jobs=n_jobs)(
            delayed(_fit_record)(estimator, Xb, lb, record, patterns) for Xb, lb in samples
        )
    return StabilityResult(
        pd.DataFrame([{"replicate": b, **r} for b, r in enumerate(records)]),
        "bootstrap",
        tuple(patterns or ()),
    )


def subset_stability(
    estimator: HCA,
    X: Any,
    domains: Any,
    candidates: Sequence[Hashable] | None = None,
    min_size: int = 3,
    *,
    seeds: Iterable[int] = range(10),
    n_boot: int = 0,
    random_state: int = 0,
    n_jobs: int | None = None,
    icas: Sequence[Mapping[Hashable, DomainICA]] | None = None,
) -> pd.DataFrame:
    """The MIC of every subset of ``candidates`` (Figure 18), repeated.

    With ``n_boot == 0`` the sweep (:func:`hca.estimator.mic_by_subset`) is repeated for every
    ICA seed in ``seeds`` on the same data (``icas``: one ``{domain: DomainICA}`` per seed
    computed before); with ``n_boot > 0`` on ``n_boot`` within-domain bootstrap resamples
    (seed ``random_state``; the first of ``seeds`` for ICA). ``n_jobs`` splits the batch of
    searches (as in :func:`hca.estimator.mic_by_subset`).

    Returns
    -------
    DataFrame
        One row per (repetition, subset): ``rep``, ``subset`` (tuple), ``size``, ``mic``,
        ``rank`` (1 = smallest MIC in that repetition), ``best`` (bool) and ``certified``
        (as in :func:`hca.estimator.mic_by_subset`).
    """
    seeds = int_seeds(seeds)
    est = clone_hca(estimator)
    data = check_fit_data(X, domains, est.n_components)
    cands = check_domains(data.labels, data.values, order=candidates, order_name="candidate").order
    if not 2 <= min_size <= len(cands):
        raise ValueError(f"min_size must be between 2 and {len(cands)}, got {min_size}")
    check_search_size(est.search, len(cands), data.n_components)  # before any ICA
    given = None
    if n_boot > 0:
        if icas is not None:
            raise ValueError("icas is for the sweeps over seeds (n_boot=0)")
        datasets, fit_seeds = bootstrap_samples(X, domains, n_boot, random_state), seeds[:1]
    else:
        datasets, fit_seeds = [(X, domains)], seeds
        if icas is not None:
            given = [check_icas(icas, len(seeds), data.order, "icas")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        tables = mic_by_subset_many(
            est, datasets, fit_seeds, cands, min_size, n_jobs=n_jobs, icas=given
        )
    rows = []
    for rep, table in enumerate(t for per_set in tables for t in per_set):
        ranks = table["mic"].rank(method="min").astype(int).to_numpy()
        for sub, mic, cert, rank in zip(table["subset"], table["mic"], table["certified"], ranks):
            rows.append(
                {
                    "rep": rep,
                    "subset": sub,
                    "size": len(sub),
                    "mic": float(mic),
                    "rank": int(rank),
                    "best": bool(rank == 1),
                    "certified": bool(cert),
                }
            )
    return pd.DataFrame(rows)


def ranked_orders(
    model: HCA, n: int = 5, *, patterns: Mapping[str, Pattern] | None = None
) -> pd.DataFrame:
    """The ``n`` row orders with the smallest MIC for a fitted model's ICA matrices.

    Every row order is scored (all ``(d0!)^K``, so keep ``K`` small); for the best ``n`` the
    alignment after the OLS adjustment is computed on the training data; ``patterns`` flags
    the alignments that follow named patterns (as in :func:`fit_record`).

    Returns
    -------
    DataFrame
        ``rank``, ``mic``, ``order`` (alignment joined by ``" > "``), one bool per pattern,
        ``rank1_error`` and ``unmixing_error`` (tuples, Table 3).
    """
    check_is_fitted(model, "unmixing_", msg="ranked_orders needs a fitted HCA model")
    check_positive_int(n, "n")
    U = {label: model.ica_[label].unmixing for label in model.domains_}
    rows, mics = all_orders(U, model.residual)
    out = []
    for rank, i in enumerate(np.argsort(mics, kind="stable")[:n], start=1):
        res = evaluate_order(U, [rows[i][k] for k in range(len(U))], residual=model.residual)
        alignment = model.alignment(res.unmixing)
        out.append(
            {
                "rank": rank,
                "mic": float(res.mic),
                "order": " > ".join(alignment),
                **_pattern_flags(alignment, patterns),
                "rank1_error": tuple(np.round(res.rank1_error, 3)),
                "unmixing_error": tuple(np.round(res.unmixing_error, 3)),
            }
        )
    return pd.DataFrame(out)


# =========================================================================== references
def rotation_null(
    model: HCA,
    n_draws: int = 20,
    random_state: int = 0,
    *,
    progress: Listener | None = None,
) -> np.ndarray:
    """MIC after rotating every domain's ICA unmixing matrix by a random rotation.

    A reference for the MIC on the same data: each draw replaces every domain's independent
    components by a random rotation of them (``scipy.stats.special_ortho_group``) and runs
    the search with the model's settings. If the domains' ICA sources share a hierarchy, the
    fitted MIC lies clearly below these values.

    Parameters
    ----------
    model : HCA
        A fitted estimator.
    n_draws : int, default=20
        Random rotations (their searches run in one batch).
    random_state : int, default=0
        Seed of ``numpy.random.default_rng`` (rotations drawn domain by domain, draw after
        draw).
    progress : callable, optional
        ``progress(stage, done, total)`` after every step of the batched search.

    Returns
    -------
    ndarray of shape (n_draws,)
    """
    check_is_fitted(model, "unmixing_")
    n_draws = check_positive_int(n_draws, "n_draws")
    rng = np.random.default_rng(random_state)
    d = model.n_components
    problems = [
        {
            k: special_ortho_group.rvs(d, random_state=rng) @ model.ica_[k].unmixing
            if d > 1
            else model.ica_[k].unmixing
            for k in model.domains_
        }
        for _ in range(n_draws)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncertifiedSearchWarning)
        results = hca_search_batch(problems, **model.search_options(), progress=progress)
    return np.array([res.mic for res in results])


#: Models per domain from which the search can be trusted: in :func:`recovery_study` (3
#: factors, 6 benchmarks, exact SCMs, 3 to 6 domains) HCA recovered the known order in at
#: least 9 of 10 simulations from 250 models per domain, and in at most 7 of 10 below
#: (chapter 11 draws the study). The command line notes fits below it, or with fewer
#: domains than factors (Theorem 1).
TRUSTED_DOMAIN_SIZE = 250

#: A recovered factor order: the largest share of ``|T|`` above the diagonal of
#: ``T = H_hat G`` (recovered unmixing times the true mixing, rows scaled to unit norm)
#: for which the order still counts as the true one (:func:`order_recovered`).
RECOVERY_TOLERANCE = 0.2


def order_recovered(model: HCA, G: np.ndarray, tol: float = RECOVERY_TOLERANCE) -> bool:
    """Whether a fit recovered the true causal order of simulated data with mixing ``G``.

    With the true order ``T = H_hat G`` is lower triangular (HCA's ambiguity, Theorem 1); the
    order counts as recovered when no unit-norm row of ``T`` has more than ``tol`` of its norm
    above the diagonal.
    """
    check_is_fitted(model, "unmixing_")
    T = model.unmixing_ @ np.asarray(G, dtype=float)
    T = T / np.linalg.norm(T, axis=1, keepdims=True)
    return bool(np.all(np.linalg.norm(np.triu(T, 1), axis=1) <= tol))


#: The simulators :func:`recovery_study` draws from, by name: the project's exact SCMs
#: (:func:`hca.synthetic.simulate_scm`) and an independently built leaderboard generator
#: (:func:`hca.synthetic_alt.simulate_leaderboard`: other source laws, weights, scales and
#: mixing). Each returns an object with ``X``, ``domains`` and the mixing ``G``.
SIMULATORS: dict[str, Callable[..., Any]] = {
    "simulate_scm": simulate_scm,
    "simulate_leaderboard": simulate_leaderboard,
}


def _recovery_cell(
    n_domains: int,
    n_per_domain: int,
    n_reps: int,
    n_components: int,
    n_benchmarks: int,
    random_state: int,
    simulator: str = "simulate_scm",
) -> list[bool]:
    """Whether each of the ``n_reps`` fits of one cell of :func:`recovery_study` recovered
    the order (replication ``rep`` with FastICA seed ``rep``, fitted as one batch)."""
    simulate = SIMULATORS[simulator]
    sims = [
        simulate(
            n_domains=n_domains,
            n_per_domain=n_per_domain,
            n_components=n_components,
            n_benchmarks=n_benchmarks,
            random_state=int(
                np.random.SeedSequence([random_state, n_domains, n_per_domain, rep]).generate_state(
                    1
                )[0]
            ),
        )
        for rep in range(n_reps)
    ]
    search = "exhaustive" if n_domains <= 5 else "sequential"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = resample_fits(
            HCA(n_components, search=search), [(s.X, s.domains) for s in sims], range(n_reps)
        )
    return [order_recovered(m, s.G) for m, s in zip(models, sims)]


def recovery_study(
    n_domains: Sequence[int] = (2, 3, 4, 6),
    n_per_domain: Sequence[int] = (30, 60, 120, 250, 500),
    *,
    n_reps: int = 10,
    n_components: int = 3,
    n_benchmarks: int = 6,
    random_state: int = 0,
    n_jobs: int | None = None,
    simulator: str = "simulate_scm",
) -> pd.DataFrame:
    """How often HCA recovers a known causal order, by number of domains and their size.

    For every cell of the grid, ``n_reps`` exact SCMs are simulated (by ``simulator``, a
    name in :data:`SIMULATORS`: :func:`hca.synthetic.simulate_scm` by default, or the
    independently built :func:`hca.synthetic_alt.simulate_leaderboard`; default settings)
    and fitted with ``HCA`` (FastICA seed ``rep``; exhaustive search up to 5 domains,
    sequential beyond); a fit counts when :func:`order_recovered` holds. The fits of a cell
    run as one batch (:func:`resample_fits`); ``n_jobs`` spreads the cells over processes.

    Returns
    -------
    DataFrame
        One row per cell: ``n_domains``, ``n_per_domain``, ``n_reps``, ``recovered``
        (count), ``rate`` and its exact (Clopper-Pearson) 90 % interval ``ci90_low``,
        ``ci90_high`` (:meth:`scipy.stats.binomtest.proportion_ci`).
    """
    n_reps = check_positive_int(n_reps, "n_reps")
    if simulator not in SIMULATORS:
        raise ValueError(f"unknown simulator {simulator!r}; expected one of {list(SIMULATORS)}")
    cells = [(K, n) for K in n_domains for n in n_per_domain]
    hits = Parallel(n_jobs=n_jobs)(
        delayed(_recovery_cell)(K, n, n_reps, n_components, n_benchmarks, random_state, simulator)
        for K, n in cells
    )
    hits = np.asarray(hits, dtype=bool).reshape(len(cells), n_reps)
    ci = [binomtest(int(k), n_reps).proportion_ci(0.9, "exact") for k in hits.sum(axis=1)]
    return pd.DataFrame(
        {
            "n_domains": [K for K, _ in cells],
            "n_per_domain": [n for _, n in cells],
            "n_reps": n_reps,
            "recovered": hits.sum(axis=1),
            "rate": hits.mean(axis=1),
            "ci90_low": [float(c.low) for c in ci],
            "ci90_high": [float(c.high) for c in ci],
        }
    )
