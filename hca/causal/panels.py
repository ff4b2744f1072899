"""Sigmoid and ATE fits over several outcomes and subsets, with joint cluster bootstraps."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from hca.causal.ate import ESTIMATORS
from hca.causal.bootstrap import resampler
from hca.causal.sigmoid import (
    PARAM_NAMES,
    SigmoidBootstrap,
    SigmoidFit,
    fit_sigmoid_curve_fit,
    fit_sigmoid_law,
    warm_refit_batch,
)
from hca.estimator.results import r_squared
from hca.validation import check_fraction, check_frame, check_vector

__all__ = [
    "SigmoidPanel",
    "fit_sigmoid_panel",
    "ATEPanel",
    "ate_panel",
]


# ----------------------------------------------------------------------------- panels
def _seed_from(random_state) -> int:
    """An integer seed from ``random_state`` (int, Generator or None)."""
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    if random_state is None:
        return int(np.random.SeedSequence().entropy % (2**63))
    if isinstance(random_state, (int, np.integer)) and random_state >= 0:
        return int(random_state)
    raise ValueError(
        f"random_state must be a non-negative int, a Generator or None, found {random_state!r}"
    )


def _run_jobs(fn: Callable, jobs: list[tuple], n_jobs: int) -> list:
    """``[fn(*job) for job in jobs]``, in parallel processes (joblib) when ``n_jobs != 1``."""
    if n_jobs == 1 or len(jobs) <= 1:
        return [fn(*job) for job in jobs]

    return Parallel(n_jobs=n_jobs)(delayed(fn)(*job) for job in jobs)


def _subset_masks(frame: pd.DataFrame, subsets) -> dict[str, np.ndarray]:
    if subsets is None:
        return {"all": np.ones(len(frame), dtype=bool)}
    out = {}
    for name, mask in subsets.items():
        if mask is None:
            out[str(name)] = np.ones(len(frame), dtype=bool)
            continue
        m = np.asarray(mask)
        if m.dtype != bool or m.shape != (len(frame),):
            raise ValueError(
                f"subset {name!r} must be None or a boolean mask of length "
                f"{len(frame)}, found dtype {m.dtype} and shape {m.shape}"
            )
        out[str(name)] = m
    if not out:
        raise ValueError("subsets is empty")
    return out


def _domain_codes(frame: pd.DataFrame, domains: str | None, mask: np.ndarray) -> np.ndarray | None:
    if domains is None:
        return None
    g = frame[domains][mask]
    if g.isna().any():
        raise ValueError(f"domains column {domains!r} has {int(g.isna().sum())} missing values")
    return pd.factorize(g, sort=True)[0]


def _r2_treatment_only(t: np.ndarray, y: np.ndarray) -> float:
    """R^2 of the arm means alone (the share of variance T explains without compute)."""
    fitted = np.where(
        t == 1,
        y[t == 1].mean() if (t == 1).any() else 0.0,
        y[t == 0].mean() if (t == 0).any() else 0.0,
    )
    return r_squared(y, y - fitted)


SOLVERS = ("least_squares", "curve_fit")
RESAMPLING = ("clusters", "within")


def _sigmoid_boot_block(
    x, t, Y, domains, tau_fixed, starts, n_starts, seed, sub_idx, reps, within=False
):
    """Joint bootstrap replicates ``reps`` of one subset: params + R^2 of every outcome.

    With ``n_starts == 0`` the warm refits of all replicates and outcomes of the block are
    one :func:`warm_refit_batch` (the same refits as :func:`warm_refit`, vectorised).
    """
    draw = resampler(t, domains, within)
    draws: list[np.ndarray | None] = []
    for r in reps:
        idx = draw(np.random.default_rng([seed, sub_idx, r]))
        draws.append(None if not tau_fixed and len(np.unique(t[idx])) < 2 else idx)
    if n_starts == 0:
        return _warm_boot_block(x, t, Y, tau_fixed, starts, draws)
    out = []
    for idx in draws:
        if idx is None:
            out.append(None)
            continue
        vals = []
        try:
            for j in range(Y.shape[1]):
                f = fit_sigmoid_law(x[idx], t[idx], Y[idx, j], n_starts=n_starts, start=starts[j])
                vals.append([*(f.params[p] for p in PARAM_NAMES), f.r2])
        except ValueError:
            out.append(None)
            continue
        arr = np.asarray(vals, dtype=float)
        out.append(arr if np.all(np.isfinite(arr)) else None)
    return out


def _warm_boot_block(x, t, Y, tau_fixed, starts, draws) -> list[np.ndarray | None]:
    """The warm refits of every drawn replicate and outcome in one batch; a replicate is
    kept (``(n_outcomes, 6)``) when every outcome is fitted with finite values."""
    kept = [idx for idx in draws if idx is not None]
    n_out = Y.shape[1]
    refits = warm_refit_batch(
        [x[idx] for idx in kept for _ in range(n_out)],
        [t[idx] for idx in kept for _ in range(n_out)],
        [Y[idx, j] for idx in kept for j in range(n_out)],
        [starts[j] for _ in kept for j in range(n_out)],
        not tau_fixed,
    )
    values = refits.values.reshape(len(kept), n_out, 6)
    ok = refits.ok.reshape(len(kept), n_out).all(axis=1)
    ok &= np.all(np.isfinite(values), axis=(1, 2))
    fitted = iter(zip(values, ok))
    out: list[np.ndarray | None] = []
    for idx in draws:
        if idx is None:
            out.append(None)
            continue
        arr, good = next(fitted)
        out.append(arr if good else None)
    return out


@dataclass(frozen=True)
class SigmoidPanel:
    """Sigmoid-law fits for several outcomes and subsets (:func:`fit_sigmoid_panel`).

    Attributes
    ----------
    subsets, outcomes : tuple of str
        Row and column labels of the panel.
    fits : dict
        ``(subset, outcome) -> SigmoidFit`` on the full subset.
    boot : dict
        ``(subset, outcome) -> SigmoidBootstrap`` (empty when ``n_boot = 0``).
    r2_samples : dict
        ``subset -> (n_ok, n_outcomes)`` bootstrap R^2, one row per joint replicate (the same
        resample for every outcome of a subset).
    data : dict
        ``subset -> DataFrame`` with the ``x``, ``t`` and outcome columns used.
    x, t : str
        Column names of ``log C`` and the treatment.
    ci : float
        Nominal coverage of the intervals.
    n_boot : int
        Requested replicates per subset.
    domains : str or None
        Cluster column of the bootstrap (None: models resampled within arms).
    """

    subsets: tuple[str, ...]
    outcomes: tuple[str, ...]
    fits: Mapping[tuple[str, str], SigmoidFit] = field(repr=False)
    boot: Mapping[tuple[str, str], SigmoidBootstrap] = field(repr=False)
    r2_samples: Mapping[str, np.ndarray] = field(repr=False, compare=False)
    data: Mapping[str, pd.DataFrame] = field(repr=False, compare=False)
    x: str
    t: str
    ci: float
    n_boot: int
    domains: str | None

    def to_frame(self) -> pd.DataFrame:
        """Long table: ``subset, outcome, param, estimate, se, ci_low, ci_high``."""
        rows = []
        for s in self.subsets:
            for o in self.outcomes:
                fit, bs = self.fits[(s, o)], self.boot.get((s, o))
                for p in PARAM_NAMES:
                    rows.append(
                        {
                            "subset": s,
                            "outcome": o,
                            "param": p,
                            "estimate": fit.params[p],
                            "se": fit.se[p],
                            "ci_low": bs.ci_low[p] if bs else np.nan,
                            "ci_high": bs.ci_high[p] if bs else np.nan,
                        }
                    )
        return pd.DataFrame(rows)

    def r2_table(self) -> pd.DataFrame:
        """Fit quality per subset and outcome.

        Columns ``subset, outcome, n, n_treated, n_clusters, r2, r2_ci_low, r2_ci_high,
        r2_t_only, r2_compute, converged, at_bound, n_boot_ok``. ``r2_t_only`` is the R^2 of
        the two arm means alone and ``r2_compute = r2 - r2_t_only`` the share of variance the
        compute curve adds to the fine-tuning shift.
        """
        alpha = (1.0 - self.ci) / 2.0
        rows = []
        for s in self.subsets:
            d = self.data[s]
            samples = self.r2_samples.get(s)
            n_cl = int(d[self.domains].nunique()) if self.domains else np.nan
            for j, o in enumerate(self.outcomes):
                fit = self.fits[(s, o)]
                t, y = d[self.t].to_numpy(dtype=int), d[o].to_numpy(dtype=float)
                r2t = _r2_treatment_only(t, y)
                ok = samples is not None and len(samples) > 0
                rows.append(
                    {
                        "subset": s,
                        "outcome": o,
                        "n": fit.n,
                        "n_treated": fit.n_treated,
                        "n_clusters": n_cl,
                        "r2": fit.r2,
                        "r2_ci_low": float(np.quantile(samples[:, j], alpha)) if ok else np.nan,
                        "r2_ci_high": float(np.quantile(samples[:, j], 1 - alpha))
                        if ok
                        else np.nan,
                        "r2_t_only": r2t,
                        "r2_compute": fit.r2 - r2t,
                        "converged": fit.converged,
                        "at_bound": ",".join(fit.at_bound),
                        "n_boot_ok": len(samples) if ok else 0,
                    }
                )
        return pd.DataFrame(rows)

    def r2_gap(
        self, better: Sequence[str], worse: Sequence[str], ci: float | None = None
    ) -> pd.DataFrame:
        """Mean R^2 of the ``better`` outcomes minus that of the ``worse`` ones, per subset.

        The interval is the percentile interval of the same difference over the joint
        bootstrap replicates (NaN without bootstrap), of coverage ``ci`` (default: the
        panel's).

        Returns
        -------
        pandas.DataFrame
            Columns ``subset, gap, ci_low, ci_high``.
        """
        unknown = [o for o in [*better, *worse] if o not in self.outcomes]
        if unknown or not better or not worse:
            raise ValueError(
                f"better and worse must be non-empty lists of outcomes in "
                f"{list(self.outcomes)}; unknown {unknown}"
            )
        ib = [self.outcomes.index(o) for o in better]
        iw = [self.outcomes.index(o) for o in worse]
        alpha = (1.0 - (self.ci if ci is None else check_fraction(ci, "ci"))) / 2.0
        rows = []
        for s in self.subsets:
            r2 = np.array([self.fits[(s, o)].r2 for o in self.outcomes])
            gap = float(r2[ib].mean() - r2[iw].mean())
            smp = self.r2_samples.get(s)
            if smp is not None and len(smp):
                g = smp[:, ib].mean(axis=1) - smp[:, iw].mean(axis=1)
                lo, hi = float(np.quantile(g, alpha)), float(np.quantile(g, 1 - alpha))
            else:
                lo = hi = np.nan
            rows.append({"subset": s, "gap": gap, "ci_low": lo, "ci_high": hi})
        return pd.DataFrame(rows)

    def summary(self) -> str:
        """Multi-line text summary (R^2 and tau per subset and outcome)."""
        boot = (
            f"{self.n_boot} joint bootstrap replicates per subset"
            + (f", clusters = {self.domains}" if self.domains else ", within arms")
            if self.n_boot
            else "no bootstrap"
        )
        lines = [f"Sigmoid law Y = L/(1+exp(-k(ln C - ln C0))) + tau T + b; {boot}"]
        for s in self.subsets:
            parts = []
            for o in self.outcomes:
                f = self.fits[(s, o)]
                parts.append(f"{o}: R^2 {f.r2:.2f}, tau {f.tau:+.1f}")
            lines.append(f"  {s} (n = {self.fits[(s, self.outcomes[0])].n}): " + "; ".join(parts))
        return "\n".join(lines)


def fit_sigmoid_panel(
    frame: pd.DataFrame,
    outcomes: Sequence[str],
    *,
    x: str = "log_c",
    t: str = "T",
    subsets: Mapping[str, object] | None = None,
    domains: str | None = None,
    n_boot: int = 0,
    ci: float = 0.95,
    n_starts: int = 0,
    random_state=0,
    n_jobs: int = 1,
    solver: str = "least_squares",
    resample: str = "clusters",
) -> SigmoidPanel:
    """Fit the sigmoid law to several outcomes in several subsets (paper Figures 7 and 14).

    Every (subset, outcome) is fitted with :func:`fit_sigmoid_law`. With ``n_boot > 0`` each
    subset gets a *joint* percentile bootstrap: one resample (of whole clusters when
    ``domains`` is given, else of models within each arm) is refitted for every outcome, so
    that differences of R^2 between outcomes (:meth:`SigmoidPanel.r2_gap`) get intervals.
    Replicate ``r`` of subset ``i`` uses ``numpy.random.default_rng([seed, i, r])``, so the
    result does not depend on ``n_jobs``. Replicates that cannot be fitted are dropped.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per model with columns ``x``, ``t``, the outcomes and ``domains``.
    outcomes : sequence of str
        Score columns.
    x, t : str
        Natural-log compute and 0/1 treatment columns.
    subsets : mapping, optional
        ``name -> boolean mask over frame rows`` (or None for all rows). Default: all rows.
    domains : str, optional
        Cluster column for the bootstrap (e.g. ``"base_model"``).
    n_boot : int, default 0
        Joint bootstrap replicates per subset.
    ci : float, default 0.95
        Nominal coverage.
    n_starts : int, default 0
        Starts per bootstrap refit. 0: a single local optimisation from the full-data
        estimate (fast; the usual warm-started bootstrap); ``k >= 1``: :func:`fit_sigmoid_law`
        with the full-data estimate plus ``k`` grid starts.
    random_state : int, Generator or None, default 0
        Seed.
    n_jobs : int, default 1
        Parallel processes (joblib) for the bootstrap.
    solver : {"least_squares", "curve_fit"}, default "least_squares"
        The full-data fits: :func:`fit_sigmoid_law` (grid starts, bounded) or
        :func:`fit_sigmoid_curve_fit` (the authors' single ``curve_fit`` from their start).
        Bootstrap refits are the same either way (``n_starts``), started at the full-data
        fit: both minimise the same sum of squares, and on the leaderboard the authors'
        ``curve_fit`` reaches the multi-start optimum (R^2 within 0.002 in every fit of the
        scaling chapter), so the replicates measure the same estimator.
    resample : {"clusters", "within"}, default "clusters"
        With ``domains``: resample whole domains, or models within each domain (every domain
        kept once; for subsets with few domains).

    Returns
    -------
    SigmoidPanel
    """
    outcomes = list(outcomes)
    if not outcomes:
        raise ValueError("outcomes is empty")
    check_frame(frame, [x, t, *outcomes] + ([domains] if domains else []))
    check_fraction(ci, "ci")
    if n_boot < 0 or n_starts < 0:
        raise ValueError(f"n_boot and n_starts must be >= 0, found {n_boot} and {n_starts}")
    if solver not in SOLVERS or resample not in RESAMPLING:
        raise ValueError(
            f"solver must be one of {SOLVERS} and resample one of {RESAMPLING}, "
            f"found {solver!r} and {resample!r}"
        )
    fit_one = fit_sigmoid_curve_fit if solver == "curve_fit" else fit_sigmoid_law
    masks = _subset_masks(frame, subsets)
    seed = _seed_from(random_state)
    fits, boot, r2s, data, jobs, prepared = {}, {}, {}, {}, [], {}
    for i, (name, mask) in enumerate(masks.items()):
        d = frame.loc[mask, [x, t, *outcomes] + ([domains] if domains else [])]
        for col in [x, t, *outcomes]:
            if d[col].isna().any():
                raise ValueError(
                    f"subset {name!r}: column {col!r} has {int(d[col].isna().sum())} missing values"
                )
        data[name] = d
        xx = d[x].to_numpy(dtype=float)
        tt = check_vector(d[t].to_numpy(), t, binary=True)
        Y = d[outcomes].to_numpy(dtype=float)
        sub_fits = [fit_one(xx, tt, Y[:, j]) for j in range(len(outcomes))]
        for o, f in zip(outcomes, sub_fits):
            fits[(name, o)] = f
        if n_boot:
            g = _domain_codes(frame, domains, mask)
            prepared[name] = (i, sub_fits)
            # one batch of warm refits per subset in one process; blocks for the workers
            n_blocks = 1 if n_jobs == 1 else max(1, min(n_boot, 4 * max(1, n_jobs)))
            fixed, starts = sub_fits[0].tau_fixed, [f.params for f in sub_fits]
            for block in np.array_split(np.arange(n_boot), n_blocks):
                block_args = (n_starts, seed, i, block.tolist(), resample == "within")
                jobs.append((xx, tt, Y, g, fixed, starts, *block_args))
    if n_boot:
        results = _run_jobs(_sigmoid_boot_block, jobs, n_jobs)
        per_subset: dict[int, list] = {}
        for job, res in zip(jobs, results):
            per_subset.setdefault(job[8], []).extend(res)
        alpha = (1.0 - ci) / 2.0
        for name, (i, sub_fits) in prepared.items():
            ok = [a for a in per_subset[i] if a is not None]
            if len(ok) < (n_boot + 1) // 2:
                raise ValueError(
                    f"subset {name!r}: only {len(ok)} of {n_boot} bootstrap "
                    "replicates could be fitted"
                )
            arr = np.stack(ok)  # (n_ok, n_outcomes, 6)
            r2s[name] = arr[:, :, 5]
            for j, o in enumerate(outcomes):
                smp = arr[:, j, :5]
                lo, hi = np.quantile(smp, alpha, axis=0), np.quantile(smp, 1 - alpha, axis=0)
                boot[(name, o)] = SigmoidBootstrap(
                    fit=sub_fits[j],
                    samples=smp,
                    ci_low={p: float(lo[k]) for k, p in enumerate(PARAM_NAMES)},
                    ci_high={p: float(hi[k]) for k, p in enumerate(PARAM_NAMES)},
                    ci=ci,
                    n_boot=n_boot,
                    n_failed=n_boot - len(ok),
                )
    return SigmoidPanel(
        subsets=tuple(masks),
        outcomes=tuple(outcomes),
        fits=fits,
        boot=boot,
        r2_samples=r2s,
        data=data,
        x=x,
        t=t,
        ci=ci,
        n_boot=n_boot,
        domains=domains,
    )


#: The fields of :class:`ATEResult` in :attr:`ATEPanel.table`, in column order.
_ATE_TABLE_FIELDS = (
    "ate ci_low ci_high n_treated n_control n_used mu1 mu0 naive n_boot_failed".split()
)


def _ate_job(name, x, t, y, n_boot, ci, seed, domains, kwargs):
    return ESTIMATORS[name](
        x, t, y, n_boot=n_boot, ci=ci, random_state=seed, domains=domains, **kwargs
    )


@dataclass(frozen=True)
class ATEPanel:
    """ATEs for several outcomes, subsets and estimators (:func:`ate_panel`).

    Attributes
    ----------
    table : pandas.DataFrame
        ``subset, outcome, estimator, ate, ci_low, ci_high, n_treated, n_control, n_used,
        mu1, mu0, naive, n_boot_failed``.
    samples : dict
        ``(subset, outcome, estimator) -> bootstrap ATEs``.
    rows : dict
        ``subset -> positions of its rows in the input frame``.
    ci : float
        Nominal coverage.
    """

    table: pd.DataFrame
    samples: Mapping[tuple[str, str, str], np.ndarray] = field(repr=False, compare=False)
    rows: Mapping[str, np.ndarray] = field(repr=False, compare=False)
    ci: float

    def contrast(
        self, a: str, b: str, estimator: str = "backdoor", ci: float | None = None
    ) -> pd.DataFrame:
        """ATE in subset ``a`` minus ATE in subset ``b``, per outcome, with an interval.

        The subsets must not share rows: their bootstraps are then independent and the
        interval is the percentile interval of replicate-wise differences, of coverage
        ``ci`` (default: the panel's).

        Returns
        -------
        pandas.DataFrame
            Columns ``outcome, ate_a, ate_b, diff, ci_low, ci_high``.
        """
        for s in (a, b):
            if s not in self.rows:
                raise ValueError(f"unknown subset {s!r}; found {list(self.rows)}")
        if np.intersect1d(self.rows[a], self.rows[b]).size:
            raise ValueError(f"subsets {a!r} and {b!r} share rows; their ATEs are not independent")
        tab = self.table[self.table["estimator"] == estimator].set_index(["subset", "outcome"])
        if tab.empty:
            raise ValueError(f"estimator {estimator!r} not in the panel")
        alpha = (1.0 - (self.ci if ci is None else check_fraction(ci, "ci"))) / 2.0
        rows = []
        for o in dict.fromkeys(self.table["outcome"]):
            ea, eb = tab.loc[(a, o), "ate"], tab.loc[(b, o), "ate"]
            sa, sb = self.samples[(a, o, estimator)], self.samples[(b, o, estimator)]
            m = min(len(sa), len(sb))
            d = sa[:m] - sb[:m]
            rows.append(
                {
                    "outcome": o,
                    "ate_a": ea,
                    "ate_b": eb,
                    "diff": ea - eb,
                    "ci_low": float(np.quantile(d, alpha)) if m else np.nan,
                    "ci_high": float(np.quantile(d, 1 - alpha)) if m else np.nan,
                }
            )
        return pd.DataFrame(rows)

    def wide(self, value: str = "ate") -> pd.DataFrame:
        """``value`` as an outcome x (subset, estimator) table."""
        return self.table.pivot_table(
            index="outcome", columns=["subset", "estimator"], values=value, sort=False
        )

    def summary(self) -> str:
        """Multi-line text summary."""
        lines = [f"ATE of fine-tuning ({100 * self.ci:g}% percentile bootstrap intervals)"]
        for r in self.table.itertuples():
            lines.append(
                f"  {r.subset:>8s} {r.outcome:>11s} {r.estimator:>10s}: {r.ate:+6.2f} "
                f"[{r.ci_low:+6.2f}, {r.ci_high:+6.2f}]  n_used = {r.n_used}"
            )
        return "\n".join(lines)


def ate_panel(
    frame: pd.DataFrame,
    outcomes: Sequence[str],
    *,
    x: str = "log_c",
    t: str = "T",
    subsets: Mapping[str, object] | None = None,
    estimators: Sequence[str] = ("backdoor", "ipw"),
    domains: str | None = None,
    n_boot: int = 200,
    ci: float = 0.95,
    random_state=0,
    n_jobs: int = 1,
    estimator_kwargs: Mapping[str, Mapping] | None = None,
) -> ATEPanel:
    """Run the ATE estimators over outcomes, subsets and estimators (paper Figure 13).

    Every outcome, subset and estimator, the subsets in parallel. Within a subset
    every outcome and estimator uses the same seed (common random numbers); subsets get
    independent seeds (``SeedSequence([seed, i])``), so :meth:`ATEPanel.contrast` of two
    disjoint subsets has independent bootstraps. Cluster labels are passed as integer codes
    (sorted labels). Results do not depend on ``n_jobs``.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per model.
    outcomes : sequence of str
        Score columns; missing values raise.
    x, t : str
        Adjustment and treatment columns.
    subsets : mapping, optional
        ``name -> boolean mask over frame rows`` (or None for all rows). Default: all rows.
    estimators : sequence of str
        Names from ``"backdoor"``, ``"ipw"``, ``"aipw"``, ``"ipw_strata"``.
    domains : str, optional
        Column of domain labels (e.g. ``"base_model"``) for a cluster bootstrap.
    n_boot, ci : int, float
        Bootstrap replicates and coverage.
    random_state : int, Generator or None, default 0
    n_jobs : int, default 1
        Parallel processes (joblib).
    estimator_kwargs : mapping, optional
        Extra keyword arguments per estimator name.

    Returns
    -------
    ATEPanel
    """
    outcomes = list(outcomes)
    if not outcomes:
        raise ValueError("outcomes is empty")
    check_frame(frame, [x, t, *outcomes] + ([domains] if domains else []))
    unknown = [e for e in estimators if e not in ESTIMATORS]
    if unknown or not estimators:
        raise ValueError(f"unknown estimator(s) {unknown}; choose from {sorted(ESTIMATORS)}")
    check_fraction(ci, "ci")
    masks = _subset_masks(frame, subsets)
    seed = _seed_from(random_state)
    kwargs = dict(estimator_kwargs or {})
    jobs, keys, rows = [], [], {}
    for i, (name, mask) in enumerate(masks.items()):
        rows[name] = np.flatnonzero(mask)
        d = frame.loc[mask]
        for col in [x, t, *outcomes]:
            if d[col].isna().any():
                raise ValueError(
                    f"subset {name!r}: column {col!r} has {int(d[col].isna().sum())} missing values"
                )
        sub_seed = int(np.random.SeedSequence([seed, i]).generate_state(1)[0])
        g = _domain_codes(frame, domains, mask)
        xx, tt = d[x].to_numpy(dtype=float), d[t].to_numpy()
        for o in outcomes:
            y = d[o].to_numpy(dtype=float)
            for e in estimators:
                jobs.append((e, xx, tt, y, n_boot, ci, sub_seed, g, dict(kwargs.get(e, {}))))
                keys.append((name, o, e))
    results = _run_jobs(_ate_job, jobs, n_jobs)
    table, samples = [], {}
    for (name, o, e), res in zip(keys, results):
        values = {k: getattr(res, k) for k in _ATE_TABLE_FIELDS}
        table.append({"subset": name, "outcome": o, "estimator": e, **values})
        samples[(name, o, e)] = res.boot_samples
    return ATEPanel(table=pd.DataFrame(table), samples=samples, rows=rows, ci=ci)
