"""Leaderboard rows for the scaling and ATE analyses: treatment, lineage, compute."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm, spearmanr

from hca.attribution.authors import authors_base_model, authors_token_families
from hca.attribution.compute import add_compute, pretraining_tokens
from hca.data.tables import authors_tokens
from hca.validation import check_fraction, check_frame

__all__ = [
    "PRETRAINED_TYPES",
    "fine_tuning_treatment",
    "base_lineage",
    "scaling_frame",
    "AUTHORS_TYPES",
    "authors_scaling_frame",
    "rows_by_name",
    "family_size_means",
    "size_monotonicity",
]


# ----------------------------------------------------------------------------- leaderboard rows
#: Leaderboard ``type`` values that count as *not* post-trained (``T = 0``).
PRETRAINED_TYPES: tuple[str, ...] = ("pretrained", "continuously_pretrained")
# A post-training marker as a separate token of the repository name (``-Instruct``, ``-chat``,
# ``-it``, ``-SFT``, ``-DPO``, ...).
_POST_TRAINING_MARKER = re.compile(
    r"(?:^|[-_.])(?:instruct|chat|it|sft|dpo|rlhf|orpo|kto|simpo)(?=$|[-_.\d])", re.IGNORECASE
)
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
        raise ValueError(
            f"column 'type' has {int(typ.isna().sum())} missing value(s) (rows {rows})"
        )
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
    return pd.DataFrame(
        {"T": t.astype(int), "t_rule": pd.array(rule, dtype="string")}, index=frame.index
    )


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
    s = base_model if isinstance(base_model, pd.Series) else pd.Series(base_model)
    s = s.astype("string")
    fam = pretraining_tokens().set_index("base_model")["family"]
    unknown = sorted(set(s.dropna()) - set(fam.index))
    if unknown:
        raise ValueError(
            f"unknown base model(s) {unknown[:5]}; expected names from "
            "hca.attribution.pretraining_tokens()"
        )
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


#: The two leaderboard types of scaling_law.ipynb and their treatment: "pretrained" (T = 0) and
#: "fine-tuned on domain-specific datasets" (T = 1); every other type is left out.
AUTHORS_TYPES: dict[str, int] = {"pretrained": 0, "fine-tuned": 1}


def authors_scaling_frame(
    frame: pd.DataFrame,
    *,
    official_only: bool = True,
    types: Mapping[str, int] | None = AUTHORS_TYPES,
) -> pd.DataFrame:
    """The population, treatment and compute of the authors' ``scaling_law.ipynb``.

    The authors' notebook (hlzhang109/causal-eval, ``scripts/scaling_law.ipynb``) keeps the
    rows with a parameter count and a pretraining-token count, computes
    ``C = 6 * #Params (B) * tokens (T)`` with the row's **own** parameter count and the
    family's tokens, drops ``C <= 0``, and keeps the official providers' rows of two types,
    ``T = 1`` for "fine-tuned on domain-specific datasets" and ``T = 0`` for "pretrained".
    The tokens come from ``find_token_size.ipynb``: the label of
    :func:`hca.attribution.authors_base_model` with ``strict=True``, its family
    (:func:`hca.attribution.authors_token_family`) and ``BASE_MODEL_TOKENS``
    (:func:`hca.data.authors_tokens`). Precision duplicates are kept, as in their table.

    Parameters
    ----------
    frame : pandas.DataFrame
        Leaderboard rows with ``model_id``, ``base_model_hub``, ``architecture``,
        ``params_b``, ``type`` and ``official_providers`` (the CSV's rows; rows without a
        type, such as the final table's score-only models, are left out).
    official_only : bool, default True
        Keep only the ``official_providers`` rows (the authors' choice).
    types : mapping or None, default :data:`AUTHORS_TYPES`
        Leaderboard type -> treatment of the rows kept. None: every typed row, ``T = 0`` for
        :data:`PRETRAINED_TYPES` and 1 otherwise (chat models and merges treated).

    Returns
    -------
    pandas.DataFrame
        A copy of the kept rows with ``authors_label``, ``token_family``, ``tokens_t``,
        ``compute_bt`` (the notebook's C, billions of parameters x trillions of tokens x 6),
        ``log_c`` (natural log of C in FLOPs), ``base_model`` (the label: the cluster of the
        bootstrap), ``lineage`` (``Llama`` / ``Qwen`` when the family starts with ``llama`` /
        ``qwen``, else the family) and ``T``.
    """
    check_frame(
        frame,
        ["model_id", "base_model_hub", "architecture", "params_b", "type"]
        + (["official_providers"] if official_only else []),
    )
    typ = frame["type"].astype("string")
    keep = typ.notna().to_numpy(dtype=bool, copy=True)
    if types is not None:
        bad = [v for v in types.values() if v not in (0, 1)]
        if bad:
            raise ValueError(f"types must map to 0 or 1, found {bad}")
        keep &= typ.isin(list(types)).fillna(False).to_numpy(dtype=bool)
    if official_only:
        keep &= frame["official_providers"].fillna(False).astype(bool).to_numpy(dtype=bool)
    out = frame[keep].copy()
    cols = ["model_id", "base_model_hub", "architecture", "params_b"]
    labels = [authors_base_model(*r, strict=True) for r in out[cols].itertuples(index=False)]
    out["authors_label"] = pd.array(labels, dtype="string")
    out["token_family"] = pd.array(authors_token_families(labels), dtype="string")
    out["tokens_t"] = out["token_family"].map(authors_tokens()).astype(float)
    out["compute_bt"] = 6.0 * pd.to_numeric(out["params_b"], errors="coerce") * out["tokens_t"]
    out = out[(out["compute_bt"] > 0).to_numpy()].copy()  # NaN and C <= 0 dropped
    out["log_c"] = np.log(out["compute_bt"].to_numpy(dtype=float)) + np.log(1e21)
    out["base_model"] = out["authors_label"]
    fam = out["token_family"].astype(str)
    out["lineage"] = pd.array(
        np.where(
            fam.str.startswith("llama"), "Llama", np.where(fam.str.startswith("qwen"), "Qwen", fam)
        ),
        dtype="string",
    )
    if types is None:
        out["T"] = np.where(out["type"].isin(PRETRAINED_TYPES), 0, 1).astype(int)
    else:
        out["T"] = out["type"].map(dict(types)).astype(int)
    return out


def rows_by_name(
    frame: pd.DataFrame, patterns: Mapping[str, str], *, column: str = "model_id"
) -> pd.Series:
    """Label of every row whose lower-cased ``column`` contains a pattern (regex), else NA.

    The authors' way to pick a base model's rows in ``Qwen_illustrate.ipynb`` and
    ``matrix_completion.ipynb`` (``df[df["fullname"].str.lower().str.contains(name)]``).

    Parameters
    ----------
    frame : pandas.DataFrame
    patterns : mapping
        ``label -> pattern``; the first pattern that matches a row gives its label.
    column : str, default "model_id"

    Returns
    -------
    pandas.Series
        String labels aligned with ``frame.index``.
    """
    check_frame(frame, [column])
    names = frame[column].astype(str).str.lower()
    out = pd.Series(pd.NA, index=frame.index, dtype="string")
    for label, pattern in patterns.items():
        hit = names.str.contains(pattern, regex=True) & out.isna()
        out[hit] = label
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
    check_fraction(ci, "ci")
    check_frame(frame, [family, size, *outcomes] + ([label] if label else []))
    if top < 1 or min_sizes < 1:
        raise ValueError(f"top and min_sizes must be >= 1, found {top} and {min_sizes}")
    sub = frame[frame[family].notna() & frame[size].notna()]
    for col in outcomes:
        if sub[col].isna().any():
            raise ValueError(
                f"outcome column {col!r} has {int(sub[col].isna().sum())} missing values"
            )
    stats = sub.groupby(family)[size].agg(["size", "nunique"])
    ranked = stats[stats["nunique"] >= min_sizes].sort_values(
        "size", ascending=False, kind="stable"
    )
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
                rows.append(
                    {
                        "family": fam,
                        "size": float(sz),
                        "size_label": lab,
                        "outcome": col,
                        "mean": m,
                        "sem": sem,
                        "ci_low": m - z * sem,
                        "ci_high": m + z * sem,
                        "n": len(v),
                    }
                )
    return pd.DataFrame(rows)


def size_monotonicity(table: pd.DataFrame) -> pd.DataFrame:
    """How monotone the means of :func:`family_size_means` are in the base size.

    Returns
    -------
    pandas.DataFrame
        Per family and outcome: ``spearman`` (rank correlation of size and mean),
        ``largest_minus_smallest``, ``steps`` (adjacent size pairs) and ``adjacent_drops``
        (steps where the mean goes down).
    """
    check_frame(table, ["family", "outcome", "size", "mean"])
    rows = []
    for (fam, out), g in table.groupby(["family", "outcome"], sort=False):
        g = g.sort_values("size")
        m = g["mean"].to_numpy(dtype=float)
        rows.append(
            {
                "family": fam,
                "outcome": out,
                "spearman": float(spearmanr(g["size"], m)[0]) if len(g) > 1 else np.nan,
                "largest_minus_smallest": float(m[-1] - m[0]),
                "steps": len(g) - 1,
                "adjacent_drops": int((np.diff(m) < 0).sum()),
            }
        )
    return pd.DataFrame(rows)
