"""Pretraining tokens (a cited table) and compute C = 6 N D."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hca.attribution.identify import identify
from hca.data.tables import pretraining_tokens

__all__ = [
    "pretraining_tokens",
    "pretraining_compute",
    "add_compute",
    "pretraining_flops",
    "log_compute",
]


# ------------------------------------------------------------------ Pretraining tokens and compute


def _compute_row(row: pd.Series, params_b: float | None, include_estimates: bool) -> float:
    if not include_estimates and row["tokens_kind"] != "reported":
        return float("nan")
    n = params_b
    if n is None:
        n = row["active_params_b"] if pd.notna(row["active_params_b"]) else row["params_b"]
    d = row["tokens_t"]
    if pd.isna(d) or pd.isna(n):
        return float("nan")
    return 6.0 * float(n) * 1e9 * float(d) * 1e12


def pretraining_compute(
    base_model: str, params_b: float | None = None, include_estimates: bool = True
) -> float:
    """Pretraining compute ``C = 6 N D`` of a base model, in FLOPs.

    Parameters
    ----------
    base_model : str
        Canonical name (as returned by :func:`identify`).
    params_b : float, optional
        N in billions; default: the table's active parameters (MoE) or total parameters.
    include_estimates : bool, default True
        If False, return NaN for bases whose token count is only a third-party estimate.

    Returns
    -------
    float
        FLOPs (e.g. about 7.2e23 for Llama-3-8B); NaN where the token count is unknown.
    """
    t = pretraining_tokens()
    rows = t[t["base_model"] == base_model]
    if rows.empty:
        raise ValueError(
            f"pretraining_compute: unknown base model {base_model!r}; known: "
            f"{', '.join(t['base_model'].head(8))}, ..."
        )
    if params_b is not None and (not np.isfinite(params_b) or params_b <= 0):
        raise ValueError(f"pretraining_compute: params_b must be positive, got {params_b}")
    return _compute_row(rows.iloc[0], params_b, include_estimates)


def add_compute(
    frame: pd.DataFrame, base_col: str = "base_model", include_estimates: bool = True
) -> pd.DataFrame:
    """Add pretraining tokens and compute of each row's base model.

    If ``frame`` has no ``base_col`` column, :func:`identify` is run first (and its columns are
    added too).  Adds ``tokens_t`` (trillions), ``compute_flops`` (``6 N D`` in FLOPs, with N
    the base model's parameters, active ones for MoE) and ``log10_compute``.  Unattributed
    rows and bases with unknown tokens get NaN.

    Returns
    -------
    pandas.DataFrame
        A copy of ``frame`` with the new columns.
    """
    out = frame.copy()
    if base_col not in out.columns:
        ident = identify(frame)
        out = out.join(ident)
        base_col = "base_model"
    t = pretraining_tokens().set_index("base_model")
    flops = {b: _compute_row(row, None, include_estimates) for b, row in t.iterrows()}
    tokens = t["tokens_t"].where((t["tokens_kind"] == "reported") | include_estimates)
    base = out[base_col].astype("string")
    out["tokens_t"] = base.map(tokens).astype(float).to_numpy()
    out["compute_flops"] = base.map(pd.Series(flops)).astype(float).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["log10_compute"] = np.log10(out["compute_flops"].to_numpy())
    return out


# ----------------------------------------------------------------------------- compute
def pretraining_flops(params_b, tokens_t) -> np.ndarray:
    """Pretraining compute ``C = 6 N D`` in FLOPs.

    Parameters
    ----------
    params_b : array-like
        Number of parameters ``N`` in billions (the leaderboard's ``#Params (B)``).
    tokens_t : array-like
        Number of pretraining tokens ``D`` in trillions.

    Returns
    -------
    numpy.ndarray
        ``6 * (params_b * 1e9) * (tokens_t * 1e12)`` FLOPs. For example Llama-2-7B
        (7B parameters, 2T tokens) gives 8.4e22 FLOPs.
    """
    n = np.atleast_1d(np.asarray(params_b, dtype=float))
    d = np.atleast_1d(np.asarray(tokens_t, dtype=float))
    for arr, name in ((n, "params_b"), (d, "tokens_t")):
        if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError(f"{name} must be finite and positive, found {arr[~(arr > 0)][:5]}")
    return 6.0 * (n * 1e9) * (d * 1e12)


def log_compute(params_b, tokens_t) -> np.ndarray:
    """Natural log of the pretraining compute ``ln(6 N D)`` with ``C`` in FLOPs.

    See :func:`pretraining_flops` for the units of the inputs. This is the ``log C`` (and the
    adjustment variable ``X``) used throughout this module.
    """
    return np.log(pretraining_flops(params_b, tokens_t))
