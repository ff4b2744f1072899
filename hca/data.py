"""Verified access to the public data behind the book, and tidy loaders.

Every file is pinned to a commit of a public GitHub repository and checked against
its SHA-256 before use (see ``../shared/data/PROVENANCE.md`` and ``data/README.md``).
:func:`fetch` looks for a file in ``$HCA_DATA_DIR`` first, then in a git-ignored cache
(``data/cache`` in a checkout, the user cache directory otherwise), and downloads only
what is missing, with :mod:`pooch` (temporary file, hash check, then move into place).

The loaders return tidy :class:`pandas.DataFrame` objects with snake_case columns.

Score scales
------------
* v2 (:func:`load_leaderboard_v2`): ``ifeval, bbh, math_lvl_5, gpqa, musr, mmlu_pro`` are the
  leaderboard's *normalized* scores on 0-100 (chance level mapped to 0), as the paper uses;
  the raw accuracies are kept on 0-1 as ``<score>_raw``.
* v1 (:func:`load_leaderboard_v1`): percentages on 0-100.
* MMLU by task (:func:`load_mmlu_by_task`): accuracies on 0-1.

De-duplication rule
-------------------
A model can be listed several times (one row per precision). The loaders keep exactly one row
per model id (compared case-insensitively): the row with the preferred precision
(``bfloat16`` > ``float16`` > ``float32`` > anything else), and among equals the most recent
submission; remaining ties keep the first row in file order. Pass ``dedupe=False`` to keep all.
"""

from __future__ import annotations

import hashlib
import html
import os
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "DataFile",
    "DataIntegrityError",
    "DataDownloadError",
    "REGISTRY",
    "V2_BENCHMARKS",
    "V1_BENCHMARKS",
    "MMLU_SUBJECTS",
    "BENCHMARK_LABELS",
    "fetch",
    "fetch_file",
    "sha256sum",
    "provenance_table",
    "load_leaderboard_v2",
    "load_leaderboard_v2_final_html",
    "load_leaderboard_v1",
    "load_mmlu_by_task",
    "load_lifearchitect",
    "load_sloth_base_models",
    "load_obsscaling_base_models",
]

_RAW = "https://raw.githubusercontent.com"


@dataclass(frozen=True)
class DataFile:
    """One pinned public file: where it lives and what it must hash to.

    Attributes
    ----------
    name : str
        File name used locally (in ``$HCA_DATA_DIR`` and in the cache).
    repo, commit, path : str
        Public GitHub repository (``owner/name``), pinned commit and path in it.
    sha256 : str
        Expected SHA-256 of the file's bytes.
    size : int
        Expected size in bytes.
    description : str
        What the file is.
    """

    name: str
    repo: str
    commit: str
    path: str
    sha256: str
    size: int
    description: str

    @property
    def url(self) -> str:
        """Pinned download URL."""
        return f"{_RAW}/{self.repo}/{self.commit}/{self.path}"


_CAUSAL_EVAL = ("hlzhang109/causal-eval", "8b73dc93cf6a3a87ed9dbabbb5861b39ae5568b0")
_SLOTH = ("felipemaiapolo/sloth", "6dc6bb3efeefc7c1db01d60cba1f4b73e5d260d1")

REGISTRY: dict[str, DataFile] = {
    f.name: f
    for f in [
        DataFile(
            "open_llm_leaderboard_v2.csv", *_CAUSAL_EVAL, "tables/open_llm_leaderboard.csv",
            "f03a701087cc92e99c52ee9e75b1ed3cb4011f951d8ba628d3cba76fa9076873", 4018966,
            "Open LLM Leaderboard v2 contents, 3,913 rows (2024-06 .. 2025-02), all leaderboard "
            "columns plus three added by the paper's authors.",
        ),
        DataFile(
            "open_llm_leaderboard_v2_final.html", "chenjy16/modelrank_ai",
            "2c9830dc3f370334eba9a1b48e7d02b918102811", "docs/index.html",
            "591ff3275568568f4087a4c4f34e1721c0bd6de553622a0cbbabed789ba5fb84", 3446471,
            "HTML table of the final v2 leaderboard, 4,576 models, six normalized scores.",
        ),
        DataFile(
            "open_llm_leaderboard_v1.csv", *_SLOTH, "data/open-llm-leaderboard_old.csv",
            "4fc6c5ff328753a1b4e5d1eac764eac127d4341d685e0615c3c399b879055f28", 1753780,
            "Open LLM Leaderboard v1, final state, 7,169 rows (2023-07 .. 2024-06).",
        ),
        DataFile(
            "mmlu_by_task_leaderboard.csv", *_CAUSAL_EVAL, "tables/MMLU-by-task-Leaderboard.csv",
            "c6ce96525f23f47fd27e4bd145a295eb8cfad606380753fd2f4215df87d93cd6", 3890612,
            "MMLU-by-task leaderboard: 5,198 models, 57 subject accuracies.",
        ),
        DataFile(
            "lifearchitect_models_table.csv", "hlzhang109/causal-eval",
            "ca2a96bbc28dfe796a9a4d5a5442f2c4b2c2ca2b", "data/models_table.csv",
            "123af6c8adf2ccf211ddce0c7e1b9b759b67350fb27c8f536ab320901da0c7fd", 149360,
            "LifeArchitect models table: parameters and training tokens of 526 model families.",
        ),
        DataFile(
            "sloth_base_models.csv", *_SLOTH, "data/data_v1.csv",
            "3394fce53c5b53dfa57691f6c4a01a5c977f74af09e619210e023e08184fb975", 222825,
            "Sloth: 197 base and instruct checkpoints with parameters, tokens and FLOPs.",
        ),
        DataFile(
            "obsscaling_base_models.csv", "ryoungj/ObsScaling",
            "4d6e1e43fd2635d04654aa77d1df9d5266ea0382", "eval_results/base_llm_benchmark_eval.csv",
            "511996815735a4c46251dc585dcc525e370d148201f86561e6f927f9df2d0db8", 28155,
            "Observational scaling laws: 148 pretrained checkpoints with tokens and FLOPs.",
        ),
    ]
}

V2_BENCHMARKS: tuple[str, ...] = ("ifeval", "bbh", "math_lvl_5", "gpqa", "musr", "mmlu_pro")
V1_BENCHMARKS: tuple[str, ...] = ("arc", "hellaswag", "mmlu", "truthfulqa", "winogrande", "gsm8k")

BENCHMARK_LABELS: dict[str, str] = {
    "ifeval": "IFEval", "bbh": "BBH", "math_lvl_5": "MATH Lvl 5", "gpqa": "GPQA",
    "musr": "MUSR", "mmlu_pro": "MMLU-PRO",
    "arc": "ARC", "hellaswag": "HellaSwag", "mmlu": "MMLU", "truthfulqa": "TruthfulQA",
    "winogrande": "Winogrande", "gsm8k": "GSM8K",
}

MMLU_SUBJECTS: tuple[str, ...] = (
    "abstract_algebra", "anatomy", "astronomy", "business_ethics", "clinical_knowledge",
    "college_biology", "college_chemistry", "college_computer_science", "college_mathematics",
    "college_medicine", "college_physics", "computer_security", "conceptual_physics",
    "econometrics", "electrical_engineering", "elementary_mathematics", "formal_logic",
    "global_facts", "high_school_biology", "high_school_chemistry",
    "high_school_computer_science", "high_school_european_history", "high_school_geography",
    "high_school_government_and_politics", "high_school_macroeconomics",
    "high_school_mathematics", "high_school_microeconomics", "high_school_physics",
    "high_school_psychology", "high_school_statistics", "high_school_us_history",
    "high_school_world_history", "human_aging", "human_sexuality", "international_law",
    "jurisprudence", "logical_fallacies", "machine_learning", "management", "marketing",
    "medical_genetics", "miscellaneous", "moral_disputes", "moral_scenarios", "nutrition",
    "philosophy", "prehistory", "professional_accounting", "professional_law",
    "professional_medicine", "professional_psychology", "public_relations",
    "security_studies", "sociology", "us_foreign_policy", "virology", "world_religions",
)
for _s in MMLU_SUBJECTS:
    BENCHMARK_LABELS[f"mmlu_{_s}"] = _s.replace("_", " ")


class DataIntegrityError(ValueError):
    """A local or downloaded file does not match its pinned SHA-256."""


class DataDownloadError(RuntimeError):
    """A file could not be downloaded (network error, server error, truncated body)."""


# --------------------------------------------------------------------------- files


def sha256sum(path: str | os.PathLike) -> str:
    """Return the hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _default_cache_dir() -> Path:
    env = os.environ.get("HCA_CACHE_DIR")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[1]
    if (repo / "pyproject.toml").exists() and (repo / "data").is_dir():
        return repo / "data" / "cache"
    import pooch

    return Path(pooch.os_cache("hca"))


def _verify(path: Path, spec: DataFile, where: str) -> Path:
    actual = sha256sum(path)
    if actual != spec.sha256:
        raise DataIntegrityError(
            f"{spec.name} in {where} ({path}) does not match its pinned checksum: "
            f"expected sha256 {spec.sha256}, found {actual}. The file is corrupted or is a "
            f"different version; it was not used. Replace it with the file from {spec.url} "
            f"(or delete it to have it downloaded again)."
        )
    return path


def fetch_file(spec: DataFile, cache_dir: str | os.PathLike | None = None,
               download: bool = True) -> Path:
    """Return a verified local copy of ``spec``.

    Looks in ``$HCA_DATA_DIR``, then in ``cache_dir`` (default: the git-ignored
    ``data/cache`` of a checkout), and downloads into the cache only if the file is missing.

    Parameters
    ----------
    spec : DataFile
        The pinned file.
    cache_dir : path-like, optional
        Cache directory; created if needed.
    download : bool, default True
        If False, raise :class:`FileNotFoundError` instead of downloading.

    Returns
    -------
    pathlib.Path
        Path of a file whose SHA-256 equals ``spec.sha256``.

    Raises
    ------
    DataIntegrityError
        A local copy exists but its checksum is wrong, or a download's checksum is wrong.
    DataDownloadError
        The download failed; nothing is left behind in the cache.
    """
    env = os.environ.get("HCA_DATA_DIR")
    if env:
        candidate = Path(env) / spec.name
        if candidate.is_file():
            return _verify(candidate, spec, f"HCA_DATA_DIR={env}")
    cache = Path(cache_dir) if cache_dir is not None else _default_cache_dir()
    cached = cache / spec.name
    if cached.is_file():
        return _verify(cached, spec, "the cache")
    if not download:
        raise FileNotFoundError(
            f"{spec.name} is neither in HCA_DATA_DIR ({env or 'unset'}) nor in the cache "
            f"({cache}); set HCA_DATA_DIR to a folder holding it or allow the download "
            f"from {spec.url}."
        )
    return _download(spec, cache)


def _download(spec: DataFile, cache: Path) -> Path:
    import pooch

    cache.mkdir(parents=True, exist_ok=True)
    try:
        path = pooch.retrieve(
            spec.url, known_hash=f"sha256:{spec.sha256}", fname=spec.name,
            path=cache, progressbar=False,
        )
    except ValueError as err:  # pooch: hash mismatch (a truncated body lands here too)
        _remove_partial(cache, spec.name)
        raise DataIntegrityError(
            f"Downloaded {spec.name} from {spec.url} but its checksum is wrong "
            f"(expected sha256 {spec.sha256}); the download was discarded. "
            f"Details: {err}"
        ) from None
    except Exception as err:  # requests' HTTP and connection errors, incomplete reads
        _remove_partial(cache, spec.name)
        raise DataDownloadError(
            f"Could not download {spec.name} from {spec.url}: {type(err).__name__}: {err}. "
            f"Nothing was written to {cache}. Without network access, set HCA_DATA_DIR to a "
            f"folder that holds the file (e.g. ../shared/data)."
        ) from None
    return _verify(Path(path), spec, "the cache")


def _remove_partial(cache: Path, name: str) -> None:
    target = cache / name
    if target.exists():
        target.unlink()


def fetch(name: str, cache_dir: str | os.PathLike | None = None,
          download: bool = True) -> Path:
    """Return a verified local path for the registered file ``name``.

    See :func:`fetch_file`. ``name`` is one of the keys of :data:`REGISTRY`.
    """
    if name not in REGISTRY:
        raise KeyError(
            f"unknown data file {name!r}; known files: {', '.join(sorted(REGISTRY))}"
        )
    return fetch_file(REGISTRY[name], cache_dir=cache_dir, download=download)


def provenance_table() -> pd.DataFrame:
    """The registry as a table (file, repository, commit, path, bytes, SHA-256, description)."""
    return pd.DataFrame(
        [
            {"file": f.name, "repo": f.repo, "commit": f.commit[:12], "path": f.path,
             "bytes": f.size, "sha256": f.sha256, "description": f.description}
            for f in REGISTRY.values()
        ]
    )


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
    ids = cell.astype("string").str.extract(_ANCHOR, expand=False).map(
        lambda s: html.unescape(s).strip() if isinstance(s, str) else s
    )
    return ids.fillna(fallback).astype("string")


_PRECISION_RANK = {"bfloat16": 0, "float16": 1, "float32": 2}


def _dedupe(df: pd.DataFrame, date_col: str) -> pd.DataFrame:
    key = df["model_id"].str.lower()
    rank = df["precision"].map(_PRECISION_RANK).fillna(9)
    date = df[date_col]
    order = pd.DataFrame({"key": key, "rank": rank, "date": date, "pos": np.arange(len(df))})
    order = order.sort_values(["key", "rank", "date", "pos"],
                              ascending=[True, True, False, True], na_position="last")
    keep = order.drop_duplicates("key", keep="first")["pos"].to_numpy()
    return df.iloc[np.sort(keep)].reset_index(drop=True)


def _require_columns(df: pd.DataFrame, needed: list[str], name: str) -> None:
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(
            f"{name} lacks expected column(s) {missing}; found {list(df.columns)[:12]}..."
        )


# --------------------------------------------------------------------------- loaders

_V2_RENAME = {
    "eval_name": "eval_name", "Precision": "precision", "Weight type": "weight_type",
    "Architecture": "architecture", "Model sha": "model_sha", "Average ⬆️": "average",
    "Hub License": "hub_license", "Hub ❤️": "hub_likes", "#Params (B)": "params_b",
    "Available on the hub": "available_on_hub", "MoE": "moe", "Flagged": "flagged",
    "Chat Template": "chat_template", "CO₂ cost (kg)": "co2_kg", "Merged": "merged",
    "Official Providers": "official_providers", "Upload To Hub Date": "upload_date",
    "Submission Date": "submission_date", "Generation": "generation",
    "Base Model": "base_model_hub", "Tokens": "authors_tokens",
    "base_model": "authors_base_model", "pretrain": "authors_pretrain",
    "IFEval": "ifeval", "BBH": "bbh", "MATH Lvl 5": "math_lvl_5", "GPQA": "gpqa",
    "MUSR": "musr", "MMLU-PRO": "mmlu_pro",
    "IFEval Raw": "ifeval_raw", "BBH Raw": "bbh_raw", "MATH Lvl 5 Raw": "math_lvl_5_raw",
    "GPQA Raw": "gpqa_raw", "MUSR Raw": "musr_raw", "MMLU-PRO Raw": "mmlu_pro_raw",
}


def load_leaderboard_v2(include_final: bool = False, dedupe: bool = True) -> pd.DataFrame:
    """Open LLM Leaderboard v2 (3,913 rows; one per model after de-duplication).

    Parameters
    ----------
    include_final : bool, default False
        Also add the models that appear only in the final 4,576-model HTML table. Those rows
        have the six normalized scores (rounded to 2 decimals), the average and the parameter
        count, and NA elsewhere; the ``source`` column says ``"final_html"`` (else ``"csv"``).
    dedupe : bool, default True
        Keep one row per model (see the module docstring for the rule).

    Returns
    -------
    pandas.DataFrame
        Columns as in ``CONTRIBUTING.md``: ``model_id``, ``params_b``, ``architecture``,
        ``type``, ``merged``, ``moe``, ``official_providers``, ``base_model_hub``, dates,
        the six normalized scores (0-100) and their ``*_raw`` values (0-1), ...
    """
    raw = pd.read_csv(fetch("open_llm_leaderboard_v2.csv"))
    _require_columns(raw, list(_V2_RENAME) + ["Model", "fullname", "Type"],
                     "open_llm_leaderboard_v2.csv")
    df = raw.rename(columns=_V2_RENAME)
    df.insert(0, "model_id", _model_id_from_html(raw["Model"], raw["fullname"]))
    df["type"] = _clean_type(raw["Type"])
    df["base_model_hub"] = df["base_model_hub"].astype("string").replace("Removed", pd.NA)
    for col in ("upload_date", "submission_date"):
        df[col] = pd.to_datetime(df[col], errors="coerce")
    for col in ("architecture", "precision", "weight_type", "hub_license",
                "authors_base_model", "eval_name", "model_sha"):
        df[col] = df[col].astype("string")
    df["authors_pretrain"] = df["authors_pretrain"].astype(bool)
    keep = ["model_id", "eval_name", "precision", "type", "weight_type", "architecture",
            "params_b", "moe", "merged", "official_providers", "flagged", "chat_template",
            "available_on_hub", "hub_license", "hub_likes", "co2_kg", "model_sha",
            "base_model_hub", "upload_date", "submission_date", "generation", "average",
            *V2_BENCHMARKS, *(f"{b}_raw" for b in V2_BENCHMARKS),
            "authors_tokens", "authors_base_model", "authors_pretrain"]
    df = df[keep]
    if dedupe:
        df = _dedupe(df, "submission_date")
    df["source"] = pd.Series("csv", index=df.index, dtype="string")
    if include_final:
        final = load_leaderboard_v2_final_html()
        known = set(df["model_id"].str.lower())
        extra = final[~final["model_id"].str.lower().isin(known)]
        # the HTML table lists some models twice (two precisions): keep the better-ranked row
        extra = extra[~extra["model_id"].str.lower().duplicated()].copy()
        extra = extra.drop(columns=["rank"]).assign(source="final_html")
        df = pd.concat([df, extra], ignore_index=True)
        df["source"] = df["source"].astype("string")
    return df


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
    rounded to 2 decimals in the source).
    """
    parser = _TableParser()
    parser.feed(fetch("open_llm_leaderboard_v2_final.html").read_text(encoding="utf-8"))
    header, *body = parser.rows
    expected = ["Rank", "Model", "Average Score", "Parameters(B)", "IFEval", "BBH", "MATH",
                "GPQA", "MUSR", "MMLU-PRO"]
    if header != expected:
        raise ValueError(
            f"open_llm_leaderboard_v2_final.html: unexpected table header {header}, "
            f"expected {expected}"
        )
    df = pd.DataFrame(body, columns=["rank", "model_id", "average", "params_b", *V2_BENCHMARKS])
    df["model_id"] = df["model_id"].str.replace("📑", "", regex=False).str.strip()
    df["model_id"] = df["model_id"].astype("string")
    for col in df.columns.drop("model_id"):
        df[col] = pd.to_numeric(df[col], errors="coerce")
    return df


_V1_RENAME = {
    "Model": "model_id", "Average ⬆️": "average", "ARC": "arc", "HellaSwag": "hellaswag",
    "MMLU": "mmlu", "TruthfulQA": "truthfulqa", "Winogrande": "winogrande", "GSM8K": "gsm8k",
    "Architecture": "architecture", "Weight type": "weight_type", "Precision": "precision",
    "Merged": "merged", "Hub License": "hub_license", "#Params (B)": "params_b",
    "Hub ❤️": "hub_likes", "Available on the hub": "available_on_hub",
    "Model sha": "model_sha", "Flagged": "flagged", "MoE": "moe", "date": "date",
}


def load_leaderboard_v1(dedupe: bool = True) -> pd.DataFrame:
    """Open LLM Leaderboard v1, final state (7,169 rows before de-duplication).

    Scores ``arc, hellaswag, mmlu, truthfulqa, winogrande, gsm8k`` are percentages (0-100).
    ``params_b`` is the leaderboard's integer-rounded parameter count in billions.
    """
    raw = pd.read_csv(fetch("open_llm_leaderboard_v1.csv"))
    _require_columns(raw, list(_V1_RENAME) + ["Type"], "open_llm_leaderboard_v1.csv")
    df = raw.rename(columns=_V1_RENAME)
    df["model_id"] = df["model_id"].astype("string")
    df["type"] = _clean_type(raw["Type"])
    df["date"] = pd.to_datetime(df["date"], errors="coerce", utc=True).dt.tz_localize(None)
    df["params_b"] = df["params_b"].astype(float)
    for col in ("architecture", "precision", "weight_type", "hub_license", "model_sha"):
        df[col] = df[col].astype("string")
    keep = ["model_id", "type", "architecture", "weight_type", "precision", "params_b",
            "moe", "merged", "flagged", "available_on_hub", "hub_license", "hub_likes",
            "model_sha", "date", "average", *V1_BENCHMARKS]
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
    _require_columns(raw, ["fullname", "Model Name", "Parameters", "arc:challenge|25",
                           "hellaswag|10", "MMLU_average", *subjects],
                     "mmlu_by_task_leaderboard.csv")
    df = pd.DataFrame({
        "model_id": raw["fullname"].astype("string"),
        "model_name": raw["Model Name"].astype("string"),
        "params_b": pd.to_numeric(raw["Parameters"], errors="coerce"),
        "arc": raw["arc:challenge|25"].astype(float),
        "hellaswag": raw["hellaswag|10"].astype(float),
        "mmlu_average": raw["MMLU_average"].astype(float),
    })
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
    return df.rename(columns={"parameters_b": "params_b", "tokens_trained_b": "tokens_b",
                              "model": "model"})


def load_sloth_base_models() -> pd.DataFrame:
    """Sloth's table of 197 base/instruct checkpoints (parameters, tokens (T), FLOPs)."""
    raw = pd.read_csv(fetch("sloth_base_models.csv"))
    raw = raw.drop(columns=[c for c in raw.columns if c.startswith("Unnamed")])
    df = raw.rename(columns=_snake)
    return df.rename(columns={"params_b": "params_b", "pretraining_data_size_t": "tokens_t",
                              "flops_1e21": "flops_1e21"})


def load_obsscaling_base_models() -> pd.DataFrame:
    """ObsScaling's 148 pretrained checkpoints (size (B), tokens (T), FLOPs (1e21))."""
    raw = pd.read_csv(fetch("obsscaling_base_models.csv"))
    df = raw.rename(columns=_snake)
    return df.rename(columns={"model_size_b": "params_b", "pretraining_data_size_t": "tokens_t"})
