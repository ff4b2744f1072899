"""What lies behind the overlap-sensitive estimates: per-stratum effects and IPW balance."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hca.causal.ate import check_trim, hajek_means, ipw_mask, propensity_scores, support_mask
from hca.validation import check_frame, check_same_length, check_vector

__all__ = [
    "stratum_effects",
    "ipw_balance",
]


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
    raw = (float(xk[tk == 1].mean()), float(xk[tk == 0].mean()))
    ipw = hajek_means(ek, tk, xk)
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
