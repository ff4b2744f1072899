"""The pinned public data files: registry, verified fetch, cache."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

__all__ = [
    "benchmark_label",
    "alignment_text",
    "role_position",
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
            "open_llm_leaderboard_v2.csv",
            *_CAUSAL_EVAL,
            "tables/open_llm_leaderboard.csv",
            "f03a701087cc92e99c52ee9e75b1ed3cb4011f951d8ba628d3cba76fa9076873",
            4018966,
            "Open LLM Leaderboard v2 contents, 3,913 rows (2024-06 .. 2025-02), all leaderboard "
            "columns plus three added by the paper's authors.",
        ),
        DataFile(
            "open_llm_leaderboard_v2_final.html",
            "chenjy16/modelrank_ai",
            "2c9830dc3f370334eba9a1b48e7d02b918102811",
            "docs/index.html",
            "591ff3275568568f4087a4c4f34e1721c0bd6de553622a0cbbabed789ba5fb84",
            3446471,
            "HTML table of the final v2 leaderboard, 4,576 models, six normalized scores.",
        ),
        DataFile(
            "open_llm_leaderboard_v1.csv",
            *_SLOTH,
            "data/open-llm-leaderboard_old.csv",
            "4fc6c5ff328753a1b4e5d1eac764eac127d4341d685e0615c3c399b879055f28",
            1753780,
            "Open LLM Leaderboard v1, final state, 7,169 rows (2023-07 .. 2024-06).",
        ),
        DataFile(
            "mmlu_by_task_leaderboard.csv",
            *_CAUSAL_EVAL,
            "tables/MMLU-by-task-Leaderboard.csv",
            "c6ce96525f23f47fd27e4bd145a295eb8cfad606380753fd2f4215df87d93cd6",
            3890612,
            "MMLU-by-task leaderboard: 5,198 models, 57 subject accuracies.",
        ),
        DataFile(
            "lifearchitect_models_table.csv",
            "hlzhang109/causal-eval",
            "ca2a96bbc28dfe796a9a4d5a5442f2c4b2c2ca2b",
            "data/models_table.csv",
            "123af6c8adf2ccf211ddce0c7e1b9b759b67350fb27c8f536ab320901da0c7fd",
            149360,
            "LifeArchitect models table: parameters and training tokens of 526 model families.",
        ),
        DataFile(
            "sloth_base_models.csv",
            *_SLOTH,
            "data/data_v1.csv",
            "3394fce53c5b53dfa57691f6c4a01a5c977f74af09e619210e023e08184fb975",
            222825,
            "Sloth: 197 base and instruct checkpoints with parameters, tokens and FLOPs.",
        ),
        DataFile(
            "obsscaling_base_models.csv",
            "ryoungj/ObsScaling",
            "4d6e1e43fd2635d04654aa77d1df9d5266ea0382",
            "eval_results/base_llm_benchmark_eval.csv",
            "511996815735a4c46251dc585dcc525e370d148201f86561e6f927f9df2d0db8",
            28155,
            "Observational scaling laws: 148 pretrained checkpoints with tokens and FLOPs.",
        ),
    ]
}
V2_BENCHMARKS: tuple[str, ...] = ("ifeval", "bbh", "math_lvl_5", "gpqa", "musr", "mmlu_pro")
V1_BENCHMARKS: tuple[str, ...] = ("arc", "hellaswag", "mmlu", "truthfulqa", "winogrande", "gsm8k")
BENCHMARK_LABELS: dict[str, str] = {
    "ifeval": "IFEval",
    "bbh": "BBH",
    "math_lvl_5": "MATH Lvl 5",
    "gpqa": "GPQA",
    "musr": "MUSR",
    "mmlu_pro": "MMLU-PRO",
    "arc": "ARC",
    "hellaswag": "HellaSwag",
    "mmlu": "MMLU",
    "truthfulqa": "TruthfulQA",
    "winogrande": "Winogrande",
    "gsm8k": "GSM8K",
}


def benchmark_label(name: str) -> str:
    """Display name of a benchmark column (``"math_lvl_5"`` -> ``"MATH Lvl 5"``); other names
    are returned as they are."""
    return BENCHMARK_LABELS.get(str(name), str(name))


def role_position(alignment: Sequence[str], allowed: frozenset) -> int | None:
    """0-based position of the first factor aligned with one of ``allowed`` (or None)."""
    return next((i for i, b in enumerate(alignment) if b in allowed), None)


def alignment_text(alignment: Sequence[str], sep: str = " → ") -> str:
    """A causal order of benchmark columns as text: ``("math_lvl_5", "bbh")`` ->
    ``"MATH Lvl 5 → BBH"`` (display names by :func:`benchmark_label`, joined by ``sep``).

    A factor aligned with the same benchmark as an earlier one is named by its factor, so
    that no benchmark appears twice in one order: ``("math_lvl_5", "ifeval", "ifeval")`` ->
    ``"MATH Lvl 5 → IFEval → z3 (≈ IFEval, as z2)"``."""
    first: dict[str, int] = {}
    parts = []
    for i, b in enumerate(alignment):
        label = benchmark_label(b)
        if label in first:
            parts.append(f"z{i + 1} (≈ {label}, as z{first[label] + 1})")
        else:
            first[label] = i
            parts.append(label)
    return sep.join(parts)


#: The 57 MMLU subjects, in alphabetical order.
MMLU_SUBJECTS: tuple[str, ...] = tuple(
    """
    abstract_algebra anatomy astronomy business_ethics clinical_knowledge college_biology
    college_chemistry college_computer_science college_mathematics college_medicine
    college_physics computer_security conceptual_physics econometrics electrical_engineering
    elementary_mathematics formal_logic global_facts high_school_biology high_school_chemistry
    high_school_computer_science high_school_european_history high_school_geography
    high_school_government_and_politics high_school_macroeconomics high_school_mathematics
    high_school_microeconomics high_school_physics high_school_psychology high_school_statistics
    high_school_us_history high_school_world_history human_aging human_sexuality
    international_law jurisprudence logical_fallacies machine_learning management marketing
    medical_genetics miscellaneous moral_disputes moral_scenarios nutrition philosophy
    prehistory professional_accounting professional_law professional_medicine
    professional_psychology public_relations security_studies sociology us_foreign_policy
    virology world_religions
    """.split()
)
for _s in MMLU_SUBJECTS:
    BENCHMARK_LABELS[f"mmlu_{_s}"] = _s.replace("_", " ")


class DataIntegrityError(ValueError):
    """A local or downloaded file does not match its pinned SHA-256."""


class DataDownloadError(OSError):
    """A file could not be downloaded (network error, server error, truncated body): an
    error of the machine's connection or of the server, not of ``hca``, so ``python -m hca``
    reports it in one line with exit code 2."""


# --------------------------------------------------------------------------- files


def sha256sum(path: str | os.PathLike) -> str:
    """Return the hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _env_dir(name: str) -> Path | None:
    """The folder named by environment variable ``name`` (None if unset or empty).

    Raises
    ------
    ValueError
        If it names a file, or (``HCA_DATA_DIR`` only) nothing at all.
    """
    env = os.environ.get(name)
    if not env:
        return None
    path = Path(env)
    if path.exists() and not path.is_dir():
        raise ValueError(
            f"{name}={env} is a file, not a folder; point it to a folder (or unset it)"
        )
    if name == "HCA_DATA_DIR" and not path.exists():
        raise ValueError(
            f"{name}={env} does not exist; point it to the folder that holds "
            f"the data files (or unset it)"
        )
    return path


def _default_cache_dir() -> Path:
    env = _env_dir("HCA_CACHE_DIR")
    if env is not None:
        return env
    repo = Path(__file__).resolve().parents[2]
    if (repo / "pyproject.toml").exists() and (repo / "data").is_dir():
        return repo / "data" / "cache"
    import pooch  # only when downloading: reading the pinned files needs no pooch

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


def fetch_file(
    spec: DataFile, cache_dir: str | os.PathLike | None = None, download: bool = True
) -> Path:
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
    ValueError
        ``HCA_DATA_DIR`` or ``HCA_CACHE_DIR`` names a file (or ``HCA_DATA_DIR`` nothing),
        a folder stands where the data file should be, or the cache folder cannot be
        created.
    DataIntegrityError
        A local copy exists but its checksum is wrong, or a download's checksum is wrong.
    DataDownloadError
        The download failed; nothing is left behind in the cache.
    """
    data_dir = _env_dir("HCA_DATA_DIR")
    _env_dir("HCA_CACHE_DIR")  # a misconfigured cache is reported even when not needed
    env = os.environ.get("HCA_DATA_DIR")
    if data_dir is not None:
        candidate = data_dir / spec.name
        if candidate.is_dir():
            raise ValueError(
                f"HCA_DATA_DIR={env}: {spec.name} is a folder, not the data file; "
                "remove or rename it, or point HCA_DATA_DIR elsewhere"
            )
        if candidate.is_file():
            return _verify(candidate, spec, f"HCA_DATA_DIR={env}")
    cache = Path(cache_dir) if cache_dir is not None else _default_cache_dir()
    cached = cache / spec.name
    if cached.is_dir():
        raise ValueError(
            f"{cached} is a folder, not the data file {spec.name}; remove or rename it"
        )
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
    import pooch  # only when downloading: reading the pinned files needs no pooch

    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(
            f"cannot create the cache folder {cache} for {spec.name} "
            f"({err.strerror or type(err).__name__}); set HCA_CACHE_DIR to a "
            "writable folder"
        ) from None
    try:
        path = pooch.retrieve(
            spec.url,
            known_hash=f"sha256:{spec.sha256}",
            fname=spec.name,
            path=cache,
            progressbar=False,
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


def fetch(name: str, cache_dir: str | os.PathLike | None = None, download: bool = True) -> Path:
    """Return a verified local path for the registered file ``name``.

    See :func:`fetch_file`. ``name`` is one of the keys of :data:`REGISTRY`.
    """
    if name not in REGISTRY:
        raise KeyError(f"unknown data file {name!r}; known files: {', '.join(sorted(REGISTRY))}")
    return fetch_file(REGISTRY[name], cache_dir=cache_dir, download=download)


def provenance_table() -> pd.DataFrame:
    """The registry as a table (file, repository, commit, path, bytes, SHA-256, description)."""
    return pd.DataFrame(
        [
            {
                "file": f.name,
                "repo": f.repo,
                "commit": f.commit[:12],
                "path": f.path,
                "bytes": f.size,
                "sha256": f.sha256,
                "description": f.description,
            }
            for f in REGISTRY.values()
        ]
    )
