"""Overlap (positivity) diagnostics, per-stratum effects and IPW balance."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hca.causal.ate import check_trim, ipw_mask, propensity_scores, support_mask
from hca.validation import check_frame, check_same_length, check_vector

if TYPE_CHECKING:  # pragma: no cover
    pass

__all__ = [
    "OverlapDiagnostics",
    "overlap_diagnostics",
    "stratum_effects",
    "ipw_balance",
]


# ----------------------------------------------------------------------------- overlap
@dataclass(frozen=True)
class OverlapDiagnostics:
    """Positivity diagnostics from :func:`overlap_diagnostics`.

    Attributes
    ----------
    propensity : numpy.ndarray
        Estimated ``P(T=1 | x)`` per unit.
    t : numpy.ndarray
        Treatment per unit.
    ps_range_treated, ps_range_control : tuple of float
        (min, max) propensity in each arm.
    x_range_treated, x_range_control : tuple of float
        (min, max) of ``x`` in each arm.
    common_support : tuple of float
        Propensity interval ``[max_t min e, min_t max e]`` (empty if low > high).
    share_outside, share_outside_treated, share_outside_control : float
        Share of units (overall / per arm) with propensity outside the common support.
    share_trimmed : float
        Share of units with propensity outside ``[trim, 1 - trim]``.
    trim : float
        Threshold used for ``share_trimmed``.
    """

    propensity: np.ndarray = field(repr=False, compare=False)
    t: np.ndarray = field(repr=False, compare=False)
    ps_range_treated: tuple[float, float]
    ps_range_control: tuple[float, float]
    x_range_treated: tuple[float, float]
    x_range_control: tuple[float, float]
    common_support: tuple[float, float]
    share_outside: float
    share_outside_treated: float
    share_outside_control: float
    share_trimmed: float
    trim: float

    def summary(self) -> str:
        """Multi-line text summary."""
        lo, hi = self.common_support
        return "\n".join(
            [
                "Overlap (positivity) diagnostics, logistic propensity e(x) = P(T=1 | x)",
                f"  e range T=1: [{self.ps_range_treated[0]:.3g}, {self.ps_range_treated[1]:.3g}], "
                f"T=0: [{self.ps_range_control[0]:.3g}, {self.ps_range_control[1]:.3g}]",
                f"  x range T=1: [{self.x_range_treated[0]:.4g}, {self.x_range_treated[1]:.4g}], "
                f"T=0: [{self.x_range_control[0]:.4g}, {self.x_range_control[1]:.4g}]",
                f"  common support on e: [{lo:.3g}, {hi:.3g}]" + ("  (EMPTY)" if lo > hi else ""),
                f"  outside common support: {100 * self.share_outside:.1f}% of units "
                f"(T=1 {100 * self.share_outside_treated:.1f}%, T=0 {100 * self.share_outside_control:.1f}%)",
                f"  e outside [{self.trim:g}, {1 - self.trim:g}]: {100 * self.share_trimmed:.1f}% of units",
            ]
        )


def overlap_diagnostics(
    x, t, *, degree: int = 1, penalty: float = 1e-3, trim: float = 0.01
) -> OverlapDiagnostics:
    """Propensity-score overlap diagnostics for the fine-tuning ATE.

    Parameters
    ----------
    x, t : array-like
        Adjustment covariate (``log C``) and binary treatment.
    degree, penalty : int, float
        Propensity model, as in :func:`propensity_scores`.
    trim : float, default 0.01
        Threshold for the reported trimmed share.

    Returns
    -------
    OverlapDiagnostics
    """
    xx = check_vector(x, "x")
    tt = check_vector(t, "t", binary=True)
    check_same_length(x=xx, t=tt)
    check_trim(trim)
    if tt.min() == tt.max():
        raise ValueError(f"t has a single arm (all T = {tt[0]}); overlap is undefined")
    e = propensity_scores(xx, tt, degree=degree, penalty=penalty)
    e1, e0 = e[tt == 1], e[tt == 0]
    lo, hi = max(e1.min(), e0.min()), min(e1.max(), e0.max())
    outside = (e < lo) | (e > hi)
    return OverlapDiagnostics(
        propensity=e,
        t=tt,
        ps_range_treated=(float(e1.min()), float(e1.max())),
        ps_range_control=(float(e0.min()), float(e0.max())),
        x_range_treated=(float(xx[tt == 1].min()), float(xx[tt == 1].max())),
        x_range_control=(float(xx[tt == 0].min()), float(xx[tt == 0].max())),
        common_support=(float(lo), float(hi)),
        share_outside=float(outside.mean()),
        share_outside_treated=float(outside[tt == 1].mean()),
        share_outside_control=float(outside[tt == 0].mean()),
        share_trimmed=float(((e < trim) | (e > 1 - trim)).mean()),
        trim=trim,
    )


# ----------------------------------------------------------------------------- transparency
def stratum_effects(
    frame: pd.DataFrame,
    outcome: str,
    *,
    x: str = "log_c",
    t: str = "T",
    label: str | None = "base_model",
) -> pd.DataFrame:
    """Per-stratum means and differences behind the stratified backdoor estimate.

    One row per distinct ``x`` observed in both arms: ``n1, n0, mean1, mean0, diff =
    mean1 - mean0`` and ``weight = (n1 + n0) / total`` (the empirical ``p(x)`` the backdoor
    formula averages over), so ``sum(weight * diff)`` is :func:`ate_backdoor`'s stratified
    estimate. ``label`` names the stratum (its distinct labels joined with ``/``).

    Returns
    -------
    pandas.DataFrame
        Sorted by ``weight`` (largest first); columns ``x, label, n1, n0, mean1, mean0, diff,
        weight, contribution`` (``weight * diff``).
    """
    check_frame(frame, [x, t, outcome] + ([label] if label else []))
    xx = check_vector(frame[x].to_numpy(), x)
    tt = check_vector(frame[t].to_numpy(), t, binary=True)
    yy = check_vector(frame[outcome].to_numpy(), outcome)
    keep = support_mask(xx, tt, "stratified")
    rows = []
    for v in np.unique(xx[keep]):
        m = keep & (xx == v)
        lab = "/".join(sorted(map(str, pd.unique(frame[label].to_numpy()[m])))) if label else ""
        y1, y0 = yy[m & (tt == 1)], yy[m & (tt == 0)]
        rows.append(
            {
                "x": float(v),
                "label": lab,
                "n1": len(y1),
                "n0": len(y0),
                "mean1": float(y1.mean()),
                "mean0": float(y0.mean()),
                "diff": float(y1.mean() - y0.mean()),
            }
        )
    out = pd.DataFrame(rows)
    out["weight"] = (out["n1"] + out["n0"]) / float(keep.sum())
    out["contribution"] = out["weight"] * out["diff"]
    return out.sort_values("weight", ascending=False, kind="stable").reset_index(drop=True)


def ipw_balance(
    x, t, *, degree: int = 1, penalty: float = 1e-3, trim: float = 0.01
) -> pd.DataFrame:
    """Covariate balance of the IPW weights on ``x`` itself.

    IPW is meant to give both arms the same ``x`` distribution. This reports the mean of
    ``x`` in each arm raw and under the Hajek weights of :func:`ate_ipw` (same propensity and
    trimming), next to the mean of ``x`` over all kept units, and the standardised mean
    difference (difference over the pooled raw standard deviation).

    Returns
    -------
    pandas.DataFrame
        Index ``raw, ipw``; columns ``mean_x_treated, mean_x_control, mean_x_all, smd``.
    """
    xx = check_vector(x, "x")
    tt = check_vector(t, "t", binary=True)
    check_same_length(x=xx, t=tt)
    check_trim(trim)
    e = propensity_scores(xx, tt, degree=degree, penalty=penalty)
    keep = ipw_mask(e, tt, trim, False)
    xk, tk, ek = xx[keep], tt[keep], e[keep]
    sd = float(np.sqrt((xk[tk == 1].var() + xk[tk == 0].var()) / 2.0))
    w1, w0 = tk / ek, (1 - tk) / (1 - ek)
    raw = (float(xk[tk == 1].mean()), float(xk[tk == 0].mean()))
    ipw = (float(np.sum(w1 * xk) / w1.sum()), float(np.sum(w0 * xk) / w0.sum()))
    rows = {
        name: {
            "mean_x_treated": m1,
            "mean_x_control": m0,
            "mean_x_all": float(xk.mean()),
            "smd": (m1 - m0) / sd if sd > 0 else np.nan,
        }
        for name, (m1, m0) in (("raw", raw), ("ipw", ipw))
    }
    return pd.DataFrame(rows).T
