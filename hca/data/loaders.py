"""Tidy loaders of the leaderboards and base-model tables (one row per model)."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd

from hca.data.registry import (
    BENCHMARK_LABELS,
    MMLU_SUBJECTS,
    V1_BENCHMARKS,
    V2_BENCHMARKS,
    fetch,
)
from hca.validation import check_frame

__all__ = [
    "load_leaderboard_v2",
    "load_leaderboard_v2_final_html",
    "load_leaderboard_v1",
    "load_mmlu_by_task",
    "load_lifearchitect",
    "load_sloth_base_models",
    "load_obsscaling_base_models",
]


# --------------------------------------------------------------------------- helpers

_TYPE_MAP = {
    "pretrained": "pretrained",
    "continuously pretrained": "continuously_pretrained",
    "fine-tuned on domain-specific datasets": "fine-tuned",
    "chat models (RLHF, DPO, IFT, ...)": "chat",
    "base merges and moerges": "merge",
    "multimodal": "multimodal",
    "other": "other",
}
_ANCHOR = re.compile(r"<a[^>]*>([^<]+)</a>")


def _clean_type(raw: pd.Series) -> pd.Series:
    def one(v):
        if not isinstance(v, str):
            return pd.NA
        text = re.sub(r"^[^A-Za-z]+", "", v).strip()
        return _TYPE_MAP.get(text, "other")

    return raw.map(one).astype("string")


def _model_id_from_html(cell: pd.Series, fallback: pd.Series) -> pd.Series:
    """The text of the first anchor (``org/name`` in its original case)."""
    ids = (
        cell.astype("string")
        .str.extract(_ANCHOR, expand=False)
        .map(lambda s: html.unescape(s).strip() if isinstance(s, str) else s)
    )
    return ids.fillna(fallback).astype("string")


_PRECISION_RANK = {"bfloat16": 0, "float16": 1, "float32": 2}


def _dedupe(frame: pd.DataFrame, date_col: str) -> pd.DataFrame:
    key = frame["model_id"].str.lower()
    rank = frame["precision"].map(_PRECISION_RANK).fillna(9)
    date = frame[date_col]
    order = pd.DataFrame({"key": key, "rank": rank, "date": date, "pos": np.arange(len(frame))})
    order = order.sort_values(
        ["key", "rank", "date", "pos"], ascending=[True, True, False, True], na_position="last"
    )
    keep = order.drop_duplicates("key", keep="first")["pos"].to_numpy()
    return frame.iloc[np.sort(keep)].reset_index(drop=True)


# --------------------------------------------------------------------------- loaders

_V2_RENAME = {
    "eval_name": "eval_name",
    "Precision": "precision",
    "Weight type": "weight_type",
    "Architecture": "architecture",
    "Model sha": "model_sha",
    "Average ⬆️": "average",
    "Hub License": "hub_license",
    "Hub ❤️": "hub_likes",
    "#Params (B)": "params_b",
    "Available on the hub": "available_on_hub",
    "MoE": "moe",
    "Flagged": "flagged",
    "Chat Template": "chat_template",
    "CO₂ cost (kg)": "co2_kg",
    "Merged": "merged",
    "Official Providers": "official_providers",
    "Upload To Hub Date": "upload_date",
    "Submission Date": "submission_date",
    "Generation": "generation",
    "Base Model": "base_model_hub",
    "Tokens": "authors_tokens",
    "base_model": "authors_base_model",
    "pretrain": "authors_pretrain",
    **{BENCHMARK_LABELS[b]: b for b in V2_BENCHMARKS},
    **{f"{BENCHMARK_LABELS[b]} Raw": f"{b}_raw" for b in V2_BENCHMARKS},
}


def load_leaderboard_v2(
    include_final: bool = False, dedupe: bool = True, final: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Open LLM Leaderboard v2 (3,913 rows; one per model after de-duplication).

    Parameters
    ----------
    include_final : bool, default False
        Also add the models that appear only in the final 4,576-model HTML table. Those rows
        have the six normalized scores (rounded to 2 decimals), the average and the parameter
        count, and NA elsewhere; the ``source`` column says ``"final_html"`` (else ``"csv"``).
    dedupe : bool, default True
        Keep one row per model (see the module docstring for the rule).
    final : DataFrame, optional
        The final table as :func:`load_leaderboard_v2_final_html` returns it, used when
        ``include_final``; by default the HTML file is parsed (about a second). A caller that
        builds several frames parses it once and passes it.

    Returns
    -------
    pandas.DataFrame
        Columns as in ``CONTRIBUTING.md``: ``model_id``, ``params_b``, ``architecture``,
        ``type``, ``merged``, ``moe``, ``official_providers``, ``base_model_hub``, dates,
        the six normalized scores (0-100) and their ``*_raw`` values (0-1), ...
    """
    if final is not None:
        check_frame(final, _FINAL_COLUMNS, name="final")
    raw = pd.read_csv(fetch("open_llm_leaderboard_v2.csv"))
    check_frame(
        raw, list(_V2_RENAME) + ["Model", "fullname", "Type"], name="open_llm_leaderboard_v2.csv"
    )
    df = raw.rename(columns=_V2_RENAME)
    df.insert(0, "model_id", _model_id_from_html(raw["Model"], raw["fullname"]))
    df["type"] = _clean_type(raw["Type"])
    df["base_model_hub"] = df["base_model_hub"].astype("string").replace("Removed", pd.NA)
    for col in ("upload_date", "submission_date"):
        df[col] = pd.to_datetime(df[col], errors="coerce")
    for col in (
        "architecture",
        "precision",
        "weight_type",
        "hub_license",
        "authors_base_model",
        "eval_name",
        "model_sha",
    ):
        df[col] = df[col].astype("string")
    df["authors_pretrain"] = df["authors_pretrain"].astype(bool)
    keep = [
        *"""
        model_id eval_name precision type weight_type architecture params_b moe merged
        official_providers flagged chat_template available_on_hub hub_license hub_likes co2_kg
        model_sha base_model_hub upload_date submission_date generation average
        """.split(),
        *V2_BENCHMARKS,
        *(f"{b}_raw" for b in V2_BENCHMARKS),
        "authors_tokens",
        "authors_base_model",
        "authors_pretrain",
    ]
    df = df[keep]
    if dedupe:
        df = _dedupe(df, "submission_date")
    df["source"] = pd.Series("csv", index=df.index, dtype="string")
    if include_final:
        if final is None:
            final = load_leaderboard_v2_final_html()
        known = set(df["model_id"].str.lower())
        extra = final[~final["model_id"].str.lower().isin(known)]
        # the HTML table lists some models twice (two precisions): keep the better-ranked row
        extra = extra[~extra["model_id"].str.lower().duplicated()].copy()
        extra = extra.drop(columns=["rank"]).assign(source="final_html")
        df = pd.concat([df, extra], ignore_index=True)
        df["source"] = df["source"].astype("string")
    return df


_FINAL_COLUMNS = ["rank", "model_id", "average", "params_b", *V2_BENCHMARKS]


class _TableParser(HTMLParser):
    """Collect the cells of every ``<tr>`` of the final leaderboard table."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def load_leaderboard_v2_final_html() -> pd.DataFrame:
    """The final v2 leaderboard (4,576 models) from its HTML table.

    Columns: ``rank, model_id, average, params_b`` and the six normalized scores (0-100,
    rounded to 2 decimals in the source). The file is parsed on every call (about a second;
    nothing is kept): a caller that needs it several times keeps the frame and passes it on
    (``load_leaderboard_v2(include_final=True, final=...)``).
    """
    parser = _TableParser()
    parser.feed(Path(fetch("open_llm_leaderboard_v2_final.html")).read_text(encoding="utf-8"))
    header, *body = parser.rows
    scores = ["IFEval", "BBH", "MATH", "GPQA", "MUSR", "MMLU-PRO"]
    expected = ["Rank", "Model", "Average Score", "Parameters(B)", *scores]
    if header != expected:
        raise ValueError(
            f"open_llm_leaderboard_v2_final.html: unexpected table header {header}, "
            f"expected {expected}"
        )
    df = pd.DataFrame(body, columns=_FINAL_COLUMNS)
    df["model_id"] = df["model_id"].str.replace("📑", "", regex=False).str.strip()
    df["model_id"] = df["model_id"].astype("string")
    for col in df.columns.drop("model_id"):
        df[col] = pd.to_numeric(df[col], errors="coerce")
    return df


_V1_RENAME = {
    "Model": "model_id",
    "Average ⬆️": "average",
    **{BENCHMARK_LABELS[b]: b for b in V1_BENCHMARKS},
    "Architecture": "architecture",
    "Weight type": "weight_type",
    "Precision": "precision",
    "Merged": "merged",
    "Hub License": "hub_license",
    "#Params (B)": "params_b",
    "Hub ❤️": "hub_likes",
    "Available on the hub": "available_on_hub",
    "Model sha": "model_sha",
    "Flagged": "flagged",
    "MoE": "moe",
    "date": "date",
}


def load_leaderboard_v1(dedupe: bool = True) -> pd.DataFrame:
    """Open LLM Leaderboard v1, final state (7,169 rows before de-duplication).

    Scores ``arc, hellaswag, mmlu, truthfulqa, winogrande, gsm8k`` are percentages (0-100).
    ``params_b`` is the leaderboard's integer-rounded parameter count in billions.
    """
    raw = pd.read_csv(fetch("open_llm_leaderboard_v1.csv"))
    check_frame(raw, list(_V1_RENAME) + ["Type"], name="open_llm_leaderboard_v1.csv")
    df = raw.rename(columns=_V1_RENAME)
    df["model_id"] = df["model_id"].astype("string")
    df["type"] = _clean_type(raw["Type"])
    df["date"] = pd.to_datetime(df["date"], errors="coerce", utc=True).dt.tz_localize(None)
    df["params_b"] = df["params_b"].astype(float)
    for col in ("architecture", "precision", "weight_type", "hub_license", "model_sha"):
        df[col] = df[col].astype("string")
    keep = [
        *"""
        model_id type architecture weight_type precision params_b moe merged flagged
        available_on_hub hub_license hub_likes model_sha date average
        """.split(),
        *V1_BENCHMARKS,
    ]
    df = df[keep]
    if dedupe:
        df = _dedupe(df, "date")
    return df


def load_mmlu_by_task(dedupe: bool = True) -> pd.DataFrame:
    """MMLU-by-task leaderboard: 57 subject accuracies (0-1) for 5,198 models.

    Columns: ``model_id, model_name, params_b, arc, hellaswag, mmlu_average`` and
    ``mmlu_<subject>`` for each subject in :data:`MMLU_SUBJECTS`.
    """
    raw = pd.read_csv(fetch("mmlu_by_task_leaderboard.csv"))
    subjects = [f"MMLU_{s}" for s in MMLU_SUBJECTS]
    needed = ["fullname", "Model Name", "Parameters", "arc:challenge|25", "hellaswag|10"]
    check_frame(raw, [*needed, "MMLU_average", *subjects], name="mmlu_by_task_leaderboard.csv")
    df = pd.DataFrame(
        {
            "model_id": raw["fullname"].astype("string"),
            "model_name": raw["Model Name"].astype("string"),
            "params_b": pd.to_numeric(raw["Parameters"], errors="coerce"),
            "arc": raw["arc:challenge|25"].astype(float),
            "hellaswag": raw["hellaswag|10"].astype(float),
            "mmlu_average": raw["MMLU_average"].astype(float),
        }
    )
    for s in MMLU_SUBJECTS:
        df[f"mmlu_{s}"] = raw[f"MMLU_{s}"].astype(float)
    if dedupe:
        df = df[~df["model_id"].str.lower().duplicated()].reset_index(drop=True)
    return df


def _snake(name: str) -> str:
    name = name.split("\n")[0] if "ALScore" in name else name.replace("\n", " ")
    name = re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_").lower()
    return name


def load_lifearchitect() -> pd.DataFrame:
    """LifeArchitect models table (one row per model family): parameters and tokens (B)."""
    raw = pd.read_csv(fetch("lifearchitect_models_table.csv"))
    df = raw.rename(columns=_snake)
    return df.rename(columns={"parameters_b": "params_b", "tokens_trained_b": "tokens_b"})


def load_sloth_base_models() -> pd.DataFrame:
    """Sloth's table of 197 base/instruct checkpoints (parameters, tokens (T), FLOPs)."""
    raw = pd.read_csv(fetch("sloth_base_models.csv"))
    raw = raw.drop(columns=[c for c in raw.columns if c.startswith("Unnamed")])
    df = raw.rename(columns=_snake)
    return df.rename(columns={"pretraining_data_size_t": "tokens_t"})


def load_obsscaling_base_models() -> pd.DataFrame:
    """ObsScaling's 148 pretrained checkpoints (size (B), tokens (T), FLOPs (1e21))."""
    raw = pd.read_csv(fetch("obsscaling_base_models.csv"))
    df = raw.rename(columns=_snake)
    return df.rename(columns={"model_size_b": "params_b", "pretraining_data_size_t": "tokens_t"})
