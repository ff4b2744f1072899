"""Leaderboards with base-model domains attached, and audits of the attribution."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hca import attribution as bm
from hca.attribution.authors import AUTHORS_LABELS
from hca.data.loaders import load_leaderboard_v1, load_leaderboard_v2
from hca.validation import check_frame, check_positive_int

__all__ = [
    "REGIMES",
    "attach_domains",
    "load_v2_domains",
    "load_v1_domains",
    "layer_shares",
    "attribution_sample",
    "unattributed_reasons",
    "RegimeCuts",
    "nd_regimes",
    "top_within",
    "stack_groups",
    "AgreementCheck",
    "hub_holdout_agreement",
    "coarse_family",
    "authors_agreement",
]


#: The four N/D regimes in display order.
REGIMES: tuple[str, ...] = (
    "small N, small D",
    "small N, large D",
    "large N, small D",
    "large N, large D",
)
_DATE_COLUMNS = ("upload_date", "date")


# --------------------------------------------------------------------------- frames
def _base_sizes() -> pd.DataFrame:
    """``N`` (billions; active for MoE) and ``D`` (trillions) per base model."""
    t = bm.pretraining_tokens().set_index("base_model")
    n = t["active_params_b"].where(t["active_params_b"].notna(), t["params_b"])
    return pd.DataFrame(
        {
            "base_n_b": n.astype(float),
            "tokens_t": t["tokens_t"].astype(float),
            "tokens_kind": t["tokens_kind"].astype("string"),
        }
    )


def attach_domains(frame: pd.DataFrame, date_col: str | None = None) -> pd.DataFrame:
    """A copy of a leaderboard frame with its base-model domain and the domain's N and D.

    Parameters
    ----------
    frame : DataFrame
        A leaderboard frame with ``model_id`` (v2, v1 or MMLU-by-task, see
        :func:`hca.attribution.identify`).
    date_col : str, optional
        Column whose year becomes ``year``. Default: ``upload_date`` (v2: upload to the
        hub) if present, else ``date`` (v1: the leaderboard's date), else no ``year``.

    Returns
    -------
    DataFrame
        ``frame`` (same index) plus ``base_model``, ``layer``, ``evidence``
        (:func:`hca.attribution.identify`), ``base_n_b`` (the base's parameters in
        billions, active ones for MoE), ``tokens_t`` (its pretraining tokens, trillions),
        ``tokens_kind`` (``reported``/``estimate``) and ``year`` (nullable Int64).
        Unattributed rows have NA in the base columns.
    """
    check_frame(frame, ["model_id"], context="attach_domains")
    if date_col is not None and date_col not in frame.columns:
        raise ValueError(f"attach_domains: date_col {date_col!r} is not a column of frame")
    out = frame.join(bm.identify(frame))
    sizes = _base_sizes()
    base = out["base_model"].astype("string")
    for col in sizes.columns:
        out[col] = base.map(sizes[col]).to_numpy()
    out["base_n_b"] = out["base_n_b"].astype(float)
    out["tokens_t"] = out["tokens_t"].astype(float)
    out["tokens_kind"] = out["tokens_kind"].astype("string")
    col = date_col or next((c for c in _DATE_COLUMNS if c in frame.columns), None)
    if col is not None:
        out["year"] = pd.to_datetime(out[col], errors="coerce").dt.year.astype("Int64")
    return out


def load_v2_domains() -> pd.DataFrame:
    """The de-duplicated v2 leaderboard with domains attached (:func:`attach_domains`)."""
    return attach_domains(load_leaderboard_v2())


def load_v1_domains() -> pd.DataFrame:
    """The de-duplicated v1 leaderboard with domains attached (:func:`attach_domains`)."""
    return attach_domains(load_leaderboard_v1())


def layer_shares(frame: pd.DataFrame) -> pd.DataFrame:
    """Models per identification layer (in :data:`hca.attribution.LAYERS` order).

    Returns a DataFrame indexed by layer plus ``"unattributed"``, with ``models`` and
    ``share`` (of all rows).
    """
    check_frame(frame, ["layer"], context="layer_shares")
    layer = frame["layer"].astype("string").fillna("unattributed")
    counts = layer.value_counts().reindex(list(bm.LAYERS) + ["unattributed"], fill_value=0)
    counts.index.name = "layer"
    return pd.DataFrame({"models": counts, "share": counts / max(len(frame), 1)})


def attribution_sample(
    frame: pd.DataFrame,
    n: int = 3,
    random_state: int = 0,
    columns: Sequence[str] = ("model_id", "base_model", "evidence"),
) -> pd.DataFrame:
    """A deterministic sample of ``n`` attributed models per identification layer.

    Layers with fewer than ``n`` models contribute all of them. Rows are ordered by layer
    (:data:`hca.attribution.LAYERS` order), then by model id.
    """
    check_frame(frame, ["layer", *columns], context="attribution_sample")
    check_positive_int(n, "n")
    parts = []
    for layer in bm.LAYERS:
        rows = frame[frame["layer"] == layer]
        if len(rows):
            take = rows.sample(n=min(n, len(rows)), random_state=random_state)
            parts.append(take.sort_values("model_id"))
    out = pd.concat(parts) if parts else frame.iloc[:0]
    return out[["layer", *columns]].reset_index(drop=True)


_REASONS: tuple[tuple[str, str], ...] = (
    (r"^merge without", "merge without name/hub evidence"),
    (r"^pretrained \(from scratch\)", "pretrained from scratch, no name/hub evidence"),
    (r"^name names another family", "name names a family not in the registry"),
    (r"^no base fits", "architecture and parameters fit no known base"),
    (r"^no name/hub evidence", "no evidence at all"),
    (r"ambiguous", "ambiguous between bases (same shape)"),
    (r"has the shape of", "LLaMA-1 shape: never attributed by architecture"),
    (r"^family .*no known base", "family named, no known base of that version/size"),
    (r"^family .*no base fits|^family .*no parameter", "family named, parameters do not fit"),
)


def unattributed_reasons(frame: pd.DataFrame) -> pd.Series:
    """Why models are unattributed: the evidence strings of :func:`identify` in categories.

    Returns a Series of counts per reason (largest first) over the rows with no
    ``base_model``; reasons not in the list (conflicting name/hub/parameter evidence)
    are counted as ``"conflicting evidence"``.
    """
    check_frame(frame, ["base_model", "evidence"], context="unattributed_reasons")
    ev = frame.loc[frame["base_model"].isna(), "evidence"].astype("string").fillna("")
    reason = pd.Series("conflicting evidence", index=ev.index, dtype=object)
    done = pd.Series(False, index=ev.index)
    for pattern, label in _REASONS:
        hit = ev.str.contains(pattern, regex=True) & ~done
        reason[hit.to_numpy()] = label
        done |= hit
    counts = reason.value_counts()
    counts.index.name = "reason"
    counts.name = "models"
    return counts


# --------------------------------------------------------------------------- regimes
@dataclass(frozen=True, eq=False)
class RegimeCuts:
    """Small/large N x small/large D regimes of the base models (Figure 11b).

    Attributes
    ----------
    n_cut, d_cut : float
        Cut points for ``N`` (billions) and ``D`` (trillions); "large" is ``> cut``.
    labels : Series
        One regime label (one of :data:`REGIMES`) per row of the frame, NA where the base
        model or its N or D is unknown.
    bases : DataFrame
        One row per base model with known N and D: ``base_n_b``, ``tokens_t``, ``regime``,
        ``n_models``.
    """

    n_cut: float
    d_cut: float
    labels: pd.Series
    bases: pd.DataFrame

    def summary(self) -> str:
        """Short text report."""
        counts = self.labels.value_counts().reindex(list(REGIMES), fill_value=0)
        lines = [
            f"RegimeCuts: N cut {self.n_cut:.3g}B parameters, D cut {self.d_cut:.3g}T "
            f"tokens ({len(self.bases)} base models)"
        ]
        for reg in REGIMES:
            nb = int((self.bases["regime"] == reg).sum())
            lines.append(f"  {reg}: {int(counts[reg])} models from {nb} base models")
        return "\n".join(lines)


def nd_regimes(
    frame: pd.DataFrame, n_cut: float | None = None, d_cut: float | None = None
) -> RegimeCuts:
    """Assign each attributed model to a regime of its base model's N and D.

    Parameters
    ----------
    frame : DataFrame
        Output of :func:`attach_domains` (``base_model``, ``base_n_b``, ``tokens_t``).
    n_cut, d_cut : float, optional
        Cut points; default: the median of ``base_n_b`` / ``tokens_t`` over the distinct
        base models in ``frame`` with both values known (each base counted once).

    Returns
    -------
    RegimeCuts
    """
    check_frame(frame, ["base_model", "base_n_b", "tokens_t"], context="nd_regimes")
    known = frame[
        frame["base_model"].notna() & frame["base_n_b"].notna() & frame["tokens_t"].notna()
    ]
    if known.empty:
        raise ValueError("nd_regimes: no row has a base model with known N and D")
    bases = known.groupby("base_model", observed=True).agg(
        base_n_b=("base_n_b", "first"),
        tokens_t=("tokens_t", "first"),
        n_models=("base_model", "size"),
    )
    n_cut = float(bases["base_n_b"].median()) if n_cut is None else float(n_cut)
    d_cut = float(bases["tokens_t"].median()) if d_cut is None else float(d_cut)
    if not (np.isfinite(n_cut) and np.isfinite(d_cut)):
        raise ValueError(f"nd_regimes: cut points must be finite, got {n_cut}, {d_cut}")

    def label(n: pd.Series, d: pd.Series) -> pd.Series:
        ns = np.where(n > n_cut, "large N", "small N")
        ds = np.where(d > d_cut, "large D", "small D")
        return pd.Series([f"{a}, {b}" for a, b in zip(ns, ds)], index=n.index, dtype="string")

    bases["regime"] = label(bases["base_n_b"], bases["tokens_t"])
    labels = pd.Series(pd.NA, index=frame.index, dtype="string", name="regime")
    labels.loc[known.index] = label(known["base_n_b"], known["tokens_t"])
    bases = bases.sort_values("n_models", ascending=False, kind="stable")
    return RegimeCuts(n_cut=n_cut, d_cut=d_cut, labels=labels, bases=bases)


def top_within(
    frame: pd.DataFrame,
    by: str | pd.Series,
    n: int = 2,
    base_col: str = "base_model",
    order: Sequence | None = None,
) -> dict:
    """The ``n`` most frequent base models within each value of ``by`` (Figure 11c).

    Parameters
    ----------
    frame : DataFrame
    by : str or Series
        Column name, or a Series aligned with ``frame`` (e.g. ``RegimeCuts.labels``).
    n : int
    base_col : str
    order : sequence, optional
        Values of ``by`` to report, in this order (default: sorted values).

    Returns
    -------
    dict
        ``{value: [base, ...]}``, most frequent first (ties: alphabetical).
    """
    check_frame(frame, [base_col], context="top_within")
    key = frame[by] if isinstance(by, str) else by
    if len(key) != len(frame) or not key.index.equals(frame.index):
        raise ValueError("top_within: `by` must be a column of frame or a Series on frame's index")
    pairs = pd.DataFrame({"key": key.astype(object), "base": frame[base_col].astype(object)})
    pairs = pairs.dropna()
    values = sorted(pairs["key"].unique()) if order is None else list(order)
    out = {}
    for v in values:
        counts = pairs.loc[pairs["key"] == v, "base"].value_counts()
        if counts.empty:
            raise ValueError(f"top_within: no attributed rows with {v!r}")
        ranked = sorted(counts.index, key=lambda b: (-counts[b], str(b)))
        out[v] = list(ranked[:n])
    return out


def stack_groups(
    frame: pd.DataFrame, masks: Mapping[str, Any], columns: Sequence[str]
) -> tuple[pd.DataFrame, np.ndarray]:
    """Stack possibly overlapping groups of rows for the group-wise subspace functions.

    :func:`hca.subspace.distance_matrix` takes one label per row. Groups such as "MoE"
    and "MixtralForCausalLM" overlap; stacking repeats a row once per group it belongs
    to, so each group's PCA sees exactly its own rows.

    Parameters
    ----------
    frame : DataFrame
    masks : mapping ``{label: boolean array-like aligned with frame}``
    columns : sequence of str
        Score columns to keep.

    Returns
    -------
    (DataFrame, ndarray)
        The stacked scores and one label per stacked row (object dtype), in ``masks`` order.
    """
    check_frame(frame, list(columns), context="stack_groups")
    if not masks:
        raise ValueError("stack_groups: masks is empty")
    parts, labels = [], []
    for label, mask in masks.items():
        m = pd.Series(mask, index=frame.index) if not isinstance(mask, pd.Series) else mask
        if len(m) != len(frame):
            raise ValueError(
                f"stack_groups: mask {label!r} has {len(m)} entries for {len(frame)} rows"
            )
        m = m.reindex(frame.index).fillna(False).astype(bool)
        rows = frame.loc[m.to_numpy(), list(columns)]
        if rows.empty:
            raise ValueError(f"stack_groups: group {label!r} has no rows")
        bad = rows.isna().any(axis=1)
        if bad.any():
            raise ValueError(
                f"stack_groups: group {label!r} has {int(bad.sum())} rows with "
                "missing scores; drop them first"
            )
        parts.append(rows)
        labels += [label] * len(rows)
    return pd.concat(parts, ignore_index=True), np.asarray(labels, dtype=object)


# --------------------------------------------------------------------------- audits
@dataclass(frozen=True, eq=False)
class AgreementCheck:
    """Agreement of our attribution with a reference label.

    Attributes
    ----------
    rows : DataFrame
        One row per checked model: ``model_id``, ``reference``, ``ours``, ``layer``,
        ``outcome`` (``agree``, ``disagree`` or ``unattributed``).
    reference : str
        What the reference is.
    """

    rows: pd.DataFrame
    reference: str

    @property
    def counts(self) -> pd.Series:
        """Number of models per outcome."""
        return (
            self.rows["outcome"]
            .value_counts()
            .reindex(["agree", "disagree", "unattributed"], fill_value=0)
        )

    @property
    def rate(self) -> float:
        """Agreement among the checked models that we attribute (NaN if none)."""
        c = self.counts
        n = c["agree"] + c["disagree"]
        return float(c["agree"] / n) if n else float("nan")

    @property
    def coverage(self) -> float:
        """Share of checked models that we attribute at all (NaN if none checked)."""
        n = len(self.rows)
        return float(1 - self.counts["unattributed"] / n) if n else float("nan")

    def summary(self) -> str:
        """Short text report."""
        c = self.counts
        return (
            f"AgreementCheck against {self.reference}: {len(self.rows)} models checked; "
            f"{c['agree']} agree, {c['disagree']} disagree, {c['unattributed']} "
            f"unattributed (agreement {self.rate:.1%} of attributed, coverage "
            f"{self.coverage:.1%})"
        )


def _outcomes(reference: pd.Series, ours: pd.Series) -> pd.Series:
    ref = reference.astype(object)
    our = ours.astype(object)
    out = np.where(pd.isna(our), "unattributed", np.where(our == ref, "agree", "disagree"))
    return pd.Series(out, index=reference.index, dtype="string")


def hub_holdout_agreement(frame: pd.DataFrame) -> AgreementCheck:
    """Held-out check of the non-hub layers against the leaderboard's ``Base Model`` column.

    The models attributed by the ``hub`` layer (their ``base_model_hub`` names a known
    official checkpoint, consistent with their parameter count) have a reference base
    model. They are identified again *without* the hub column (the other layers only:
    name, family, architecture; merges are still recognised from ``type`` or a
    ``(Merge)`` suffix) and the result is compared with the hub's answer.

    Parameters
    ----------
    frame : DataFrame
        v2 frame with ``model_id``, ``base_model_hub`` and ``base_model``/``layer`` (e.g.
        :func:`attach_domains`).

    Returns
    -------
    AgreementCheck
        ``layer`` is the layer that attributed the model without the hub column.
    """
    check_frame(
        frame,
        ["model_id", "base_model_hub", "base_model", "layer"],
        context="hub_holdout_agreement",
    )
    checked = frame[frame["layer"] == "hub"]
    held = checked.copy()
    hub = held["base_model_hub"].astype("string")
    is_merge = hub.str.contains(r"\(Merge\)\s*$", case=False, na=False)
    held["base_model_hub"] = pd.Series(pd.NA, index=held.index, dtype="string")
    if "type" in held.columns:
        held["type"] = held["type"].astype("string").where(~is_merge, "merge")
    else:
        held["type"] = pd.Series(
            np.where(is_merge, "merge", pd.NA), index=held.index, dtype="string"
        )
    held = held.drop(columns=["base_model", "layer", "evidence"], errors="ignore")
    again = bm.identify(held)
    rows = pd.DataFrame(
        {
            "model_id": checked["model_id"],
            "reference": checked["base_model"].astype("string"),
            "ours": again["base_model"],
            "layer": again["layer"],
        }
    )
    rows["outcome"] = _outcomes(rows["reference"], rows["ours"])
    return AgreementCheck(
        rows=rows.reset_index(drop=True), reference="the leaderboard's Base Model column (held out)"
    )


def coarse_family(base_model: Any) -> str | None:
    """Our base model mapped to the authors' coarse label, None if they have no such label.

    ``llama-3`` for every Llama-3.x base, ``qwen2.5`` for Qwen2.5 (including Coder and
    Math), ``qwen2`` for Qwen2, and ``gemma-2-9b``, ``mistral-7b`` for those two bases.
    """
    if base_model is None or (not isinstance(base_model, str) and pd.isna(base_model)):
        return None
    b = str(base_model)
    if b.startswith("Llama-3"):
        return "llama-3"
    if b.startswith("Qwen2.5"):
        return "qwen2.5"
    if b.startswith("Qwen2-"):
        return "qwen2"
    return {"Gemma-2-9B": "gemma-2-9b", "Mistral-7B": "mistral-7b"}.get(b)


def authors_agreement(frame: pd.DataFrame) -> AgreementCheck:
    """Cross-check with the authors' coarse ``base_model`` label (``authors_base_model``).

    Only models the authors labelled are checked; our base model is mapped to their label
    with :func:`coarse_family`. The authors' labels are families, not base models, so
    agreement here cannot confirm a size or version (e.g. Llama-3-8B vs Llama-3.1-8B).
    """
    check_frame(
        frame,
        ["model_id", "authors_base_model", "base_model", "layer"],
        context="authors_agreement",
    )
    checked = frame[frame["authors_base_model"].notna()]
    unknown = sorted(set(checked["authors_base_model"].astype(str)) - set(AUTHORS_LABELS))
    if unknown:
        raise ValueError(
            f"authors_agreement: unexpected authors' labels {unknown}; known: "
            f"{list(AUTHORS_LABELS)}"
        )
    ours = checked["base_model"].map(coarse_family)
    rows = pd.DataFrame(
        {
            "model_id": checked["model_id"],
            "reference": checked["authors_base_model"].astype("string"),
            "ours": checked["base_model"].astype("string"),
            "layer": checked["layer"].astype("string"),
        }
    )
    outcome = _outcomes(rows["reference"], ours)
    # attributed to a base outside the authors' five families: a disagreement too
    rows["outcome"] = outcome.where(~(rows["ours"].notna() & ours.isna()), "disagree")
    return AgreementCheck(
        rows=rows.reset_index(drop=True), reference="the authors' coarse base_model column"
    )
