"""Leaderboard rows for the scaling and ATE analyses: treatment, lineage, compute.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np
import pandas as pd

from hca.attribution.compute import log_compute
from hca.validation import check_fraction, check_frame

if TYPE_CHECKING:  # pragma: no cover
    pass

__all__ = [
    "PRETRAINED_TYPES",
    "fine_tuning_treatment",
    "base_lineage",
    "scaling_frame",
    "authors_scaling_frame",
    "family_size_means",
]


# ----------------------------------------------------------------------------- leaderboard rows
#: Leaderboard ``type`` values that count as *not* post-trained (``T = 0``).
PRETRAINED_TYPES: tuple[str, ...] = ("pretrained", "continuously_pretrained")
# A post-training marker as a separate token of the repository name (``-Instruct``, ``-chat``,
# ``-it``, ``-SFT``, ``-DPO``, ...).
_POST_TRAINING_MARKER = re.compile(
    r"(?:^|[-_.])(?:instruct|chat|it|sft|dpo|rlhf|orpo|kto|simpo)(?=$|[-_.\d])", re.IGNORECASE)
# Lineage of a token-table family: its leading word, with these exceptions.
_LINEAGE_ALIASES = {"CodeLlama": "Llama", "Mixtral": "Mistral", "Codestral": "Mistral"}


def fine_tuning_treatment(
    frame: pd.DataFrame,
    *,
    overrides: Mapping[str, int] | None = None,
    name_markers: bool = True,
) -> pd.DataFrame:
    """Binary treatment ``T`` of leaderboard rows: 1 = post-trained, 0 = pretrained.

    Rule, in order:

    1. ``type``: ``T = 0`` for :data:`PRETRAINED_TYPES` (``pretrained``,
       ``continuously_pretrained``), ``T = 1`` for every other type (``fine-tuned``,
       ``chat``, ``merge``, ``multimodal``, ``other``). On the v2 file this is exactly the
       negation of the paper authors' own ``pretrain`` column.
    2. ``name_markers``: a row typed pretrained whose repository name (after ``org/``) holds a
       post-training marker as a separate token (``instruct``, ``chat``, ``it``, ``sft``,
       ``dpo``, ``rlhf``, ``orpo``, ``kto``, ``simpo``) gets ``T = 1``: the leaderboard types
       e.g. ``meta-llama/Llama-3.1-8B-Instruct`` as pretrained.
    3. ``overrides``: ``{model_id: 0 or 1}`` for hand-checked rows.

    Parameters
    ----------
    frame : pandas.DataFrame
        Needs ``model_id`` and ``type`` (as in :func:`hca.data.load_leaderboard_v2`).
    overrides : mapping, optional
        Hand-checked treatments by exact ``model_id``.
    name_markers : bool, default True
        Apply rule 2.

    Returns
    -------
    pandas.DataFrame
        Aligned with ``frame.index``: ``T`` (int 0/1) and ``t_rule`` (``"type"``,
        ``"name marker"`` or ``"override"``).
    """
    check_frame(frame, ["model_id", "type"])
    typ = frame["type"].astype("string")
    if typ.isna().any():
        rows = frame.index[typ.isna().to_numpy()][:5].tolist()
        raise ValueError(f"column 'type' has {int(typ.isna().sum())} missing value(s) (rows {rows})")
    t = np.where(typ.isin(PRETRAINED_TYPES).to_numpy(), 0, 1)
    rule = np.full(len(frame), "type", dtype=object)
    if name_markers:
        repo = frame["model_id"].astype(str).str.split("/").str[-1]
        flip = (t == 0) & repo.str.contains(_POST_TRAINING_MARKER).to_numpy()
        t[flip], rule[flip] = 1, "name marker"
    for model_id, value in (overrides or {}).items():
        if value not in (0, 1):
            raise ValueError(f"override for {model_id!r} must be 0 or 1, found {value!r}")
        hit = (frame["model_id"] == model_id).to_numpy()
        if not hit.any():
            raise ValueError(f"override model_id {model_id!r} is not in frame")
        t[hit], rule[hit] = value, "override"
    return pd.DataFrame({"T": t.astype(int), "t_rule": pd.array(rule, dtype="string")},
                        index=frame.index)


def base_lineage(base_model) -> pd.Series:
    """Developer lineage of canonical base-model names (``"Llama"``, ``"Qwen"``, ...).

    The leading word of the base's ``family`` in :func:`hca.attribution.pretraining_tokens`
    (``Llama-3.1`` -> ``Llama``, ``Qwen2.5-Coder`` -> ``Qwen``, ``Gemma-2`` -> ``Gemma``),
    counting Code Llama as Llama and Mixtral and Codestral as Mistral.

    Parameters
    ----------
    base_model : array-like of str
        Canonical names as returned by :func:`hca.attribution.identify`; NA stays NA.

    Returns
    -------
    pandas.Series
        String dtype, aligned with ``base_model`` when it is a Series.
    """
    from hca.attribution.compute import pretraining_tokens

    s = base_model if isinstance(base_model, pd.Series) else pd.Series(base_model)
    s = s.astype("string")
    fam = pretraining_tokens().set_index("base_model")["family"]
    unknown = sorted(set(s.dropna()) - set(fam.index))
    if unknown:
        raise ValueError(f"unknown base model(s) {unknown[:5]}; expected names from "
                         "hca.attribution.pretraining_tokens()")
    lead = s.map(fam).astype("string").str.extract(r"^([A-Za-z]+)", expand=False)
    return lead.replace(_LINEAGE_ALIASES).astype("string")


def scaling_frame(
    frame: pd.DataFrame,
    *,
    official_only: bool = False,
    overrides: Mapping[str, int] | None = None,
    name_markers: bool = True,
    include_estimates: bool = True,
) -> pd.DataFrame:
    """Leaderboard rows with pretraining compute and treatment, for Appendices D and F.

    Adds ``base_model``, ``layer``, ``evidence`` (:func:`hca.attribution.identify`, when
    ``frame`` has no ``base_model`` column), ``tokens_t``, ``compute_flops``, ``log10_compute``
    (:func:`hca.attribution.add_compute`: ``C = 6 N D`` with ``N`` the *base model's*
    parameters from the token table, active parameters for mixtures of experts, and ``D`` its
    pretraining tokens), ``family``, ``lineage`` (:func:`base_lineage`), ``base_params_b``,
    ``log_c`` (natural log of ``C`` in FLOPs, the ``X`` of the paper), ``T`` and ``t_rule``
    (:func:`fine_tuning_treatment`). Keeps only rows with a finite compute (attributed to a
    base whose token count is known) and, with ``official_only``, the rows whose
    ``official_providers`` flag is True.

    Parameters
    ----------
    frame : pandas.DataFrame
        The v2 leaderboard (:func:`hca.data.load_leaderboard_v2`).
    official_only : bool, default False
        Keep only the leaderboard's "official providers" rows.
    overrides, name_markers
        Passed to :func:`fine_tuning_treatment`.
    include_estimates : bool, default True
        Passed to :func:`hca.attribution.add_compute` (False: drop bases whose token count is
        only a third-party estimate).

    Returns
    -------
    pandas.DataFrame
        A copy of the kept rows (original index) with the new columns.
    """
    from hca.attribution.compute import add_compute, pretraining_tokens

    check_frame(frame, [])
    if official_only and "official_providers" not in frame.columns:
        raise ValueError("official_only=True needs column 'official_providers'")
    out = add_compute(frame, include_estimates=include_estimates)
    out = out.join(fine_tuning_treatment(frame, overrides=overrides, name_markers=name_markers))
    keep = np.isfinite(out["compute_flops"].to_numpy(dtype=float))
    if official_only:
        keep &= out["official_providers"].fillna(False).astype(bool).to_numpy()
    out = out[keep].copy()
    tok = pretraining_tokens().set_index("base_model")
    base = out["base_model"].astype("string")
    out["family"] = base.map(tok["family"]).astype("string")
    out["lineage"] = base_lineage(base)
    out["base_params_b"] = base.map(tok["params_b"]).astype(float)
    out["log_c"] = np.log(out["compute_flops"].to_numpy(dtype=float))
    return out


_AUTHORS_LINEAGE = {"llama-3": "Llama", "qwen2": "Qwen", "qwen2.5": "Qwen",
                    "gemma-2-9b": "Gemma", "mistral-7b": "Mistral"}


def authors_scaling_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The same analysis frame built from the paper authors' own columns of the v2 file.

    The published CSV carries three columns added by the authors: ``Tokens``
    (``authors_tokens``, trillions; 0 when unassigned), ``base_model``
    (``authors_base_model``: ``llama-3``, ``qwen2.5``, ``qwen2``, ``gemma-2-9b``,
    ``mistral-7b``) and ``pretrain`` (``authors_pretrain``). This keeps rows with
    ``authors_tokens > 0`` and ``params_b > 0`` and sets ``T = 1 - authors_pretrain``,
    ``log_c = ln(6 N D)`` in FLOPs with ``N`` the row's own ``params_b`` (the file gives no
    other N) and ``D = authors_tokens``, ``base_model = authors_base_model`` and ``lineage``
    (Llama, Qwen, Gemma, Mistral).

    Returns
    -------
    pandas.DataFrame
        A copy of the kept rows (original index) with ``T``, ``log_c``, ``base_model`` and
        ``lineage``.
    """
    check_frame(frame, ["authors_tokens", "authors_base_model", "authors_pretrain", "params_b"])
    tokens = pd.to_numeric(frame["authors_tokens"], errors="coerce")
    params = pd.to_numeric(frame["params_b"], errors="coerce")
    out = frame[(tokens > 0).to_numpy() & (params > 0).to_numpy()].copy()
    base = out["authors_base_model"].astype("string")
    if base.isna().any():
        raise ValueError(f"{int(base.isna().sum())} row(s) have authors_tokens > 0 but no "
                         "authors_base_model")
    unknown = sorted(set(base) - set(_AUTHORS_LINEAGE))
    if unknown:
        raise ValueError(f"unknown authors_base_model value(s) {unknown}")
    out["T"] = (~out["authors_pretrain"].astype(bool)).astype(int)
    out["log_c"] = log_compute(out["params_b"].to_numpy(dtype=float),
                               out["authors_tokens"].to_numpy(dtype=float))
    out["base_model"] = base
    out["lineage"] = base.map(_AUTHORS_LINEAGE).astype("string")
    return out


# ----------------------------------------------------------------------------- Figure 12
_SIZE_TOKEN = re.compile(r"(\d+(?:\.\d+)?[BM])(?:-A\d+B)?$")


def _size_label(names: pd.Series, size: float) -> str:
    labels = sorted({m.group(1) for m in (_SIZE_TOKEN.search(str(n)) for n in names) if m})
    return "/".join(labels) if labels else f"{size:.3g}B"


def family_size_means(
    frame: pd.DataFrame,
    outcomes: Sequence[str],
    *,
    family: str = "family",
    size: str = "base_params_b",
    label: str | None = "base_model",
    top: int = 3,
    min_sizes: int = 3,
    ci: float = 0.95,
) -> pd.DataFrame:
    """Mean score by base-model size within model families (paper Figure 12).

    Families with at least ``min_sizes`` distinct base sizes are ranked by their number of
    rows, and the ``top`` largest kept. Pass only the rows to summarise (e.g. ``T == 1``).

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per model.
    outcomes : sequence of str
        Score columns.
    family, size : str
        Columns with the family label and the base model's size (parameters, B).
    label : str or None, default "base_model"
        Column whose names give size labels (the trailing ``8B`` of ``Llama-3.1-8B``); sizes
        shared by several names are joined with ``/``. None: label from ``size``.
    top, min_sizes : int
        Number of families kept and minimum number of sizes per family.
    ci : float, default 0.95
        Coverage of the normal-approximation interval ``mean +- z sem``.

    Returns
    -------
    pandas.DataFrame
        Columns ``family, size, size_label, outcome, mean, sem, ci_low, ci_high, n``;
        families in rank order, sizes increasing. ``sem`` is NaN for a single model.
    """
    from scipy.stats import norm

    check_fraction(ci, "ci")
    check_frame(frame, [family, size, *outcomes] + ([label] if label else []))
    if top < 1 or min_sizes < 1:
        raise ValueError(f"top and min_sizes must be >= 1, found {top} and {min_sizes}")
    sub = frame[frame[family].notna() & frame[size].notna()]
    for col in outcomes:
        if sub[col].isna().any():
            raise ValueError(f"outcome column {col!r} has {int(sub[col].isna().sum())} missing "
                             "values")
    stats = sub.groupby(family)[size].agg(["size", "nunique"])
    ranked = stats[stats["nunique"] >= min_sizes].sort_values("size", ascending=False,
                                                               kind="stable")
    if ranked.empty:
        raise ValueError(f"no family has at least {min_sizes} distinct sizes")
    z = float(norm.ppf(0.5 + ci / 2))
    rows = []
    for fam in ranked.index[:top]:
        part = sub[sub[family] == fam]
        for sz, grp in part.groupby(size, sort=True):
            lab = _size_label(grp[label], sz) if label else f"{sz:.3g}B"
            for col in outcomes:
                v = grp[col].to_numpy(dtype=float)
                sem = float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else float("nan")
                m = float(v.mean())
                rows.append({"family": fam, "size": float(sz), "size_label": lab,
                             "outcome": col, "mean": m, "sem": sem, "ci_low": m - z * sem,
                             "ci_high": m + z * sem, "n": len(v)})
    return pd.DataFrame(rows)
