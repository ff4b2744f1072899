"""The small cited tables shipped inside the package (read with :mod:`importlib.resources`).

They are package data (``hca/data/tables/*.csv``), so an installed ``hca`` finds them from any
folder. Each loader checks its table's columns and keys and raises naming the file and what is
wrong; ``path=`` reads another copy of the same table (tests use it for malformed files).

* :func:`pretraining_tokens` -- pretraining tokens of every base model (cited per row).
* :func:`load_paper_values` -- the paper's side of every scorecard claim (its values, criteria).
* :func:`paper_figure8_sft` -- the IFEval-SFT rows of the paper's Figure 8, as reported by the
  paper (the authors' own fine-tuning; not recomputable from the leaderboard).
* :func:`authors_code_values` -- numbers the authors' public notebooks print (not the paper),
  each cited by repository, commit, file and cell; shown beside ours, never as ours.
* :func:`authors_tokens` -- the pretraining tokens per family of the authors' code
  (``BASE_MODEL_TOKENS`` of ``find_token_size.ipynb``), used by the ``authors`` setup.
* :func:`base_models_table` -- the catalogue of canonical base models, as text cells
  (:mod:`hca.attribution.catalogue` checks them and builds ``BASE_MODELS``).

``tables/README.md`` documents every column.
"""

from __future__ import annotations

import csv
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: Figure 8's base / official instruct checkpoints (leaderboard model ids).
FIGURE8_CHECKPOINTS: dict[str, tuple[str, str]] = {
    "Llama-3-8B": ("meta-llama/Meta-Llama-3-8B", "meta-llama/Meta-Llama-3-8B-Instruct"),
    "Qwen2.5-7B": ("Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B-Instruct"),
    "Qwen2.5-14B": ("Qwen/Qwen2.5-14B", "Qwen/Qwen2.5-14B-Instruct"),
}
#: Figure 8's column order.
FIGURE8_COLUMNS: tuple[str, ...] = ("bbh", "ifeval", "math_lvl_5", "gpqa", "musr", "mmlu_pro")

__all__ = [
    "FIGURE8_CHECKPOINTS",
    "FIGURE8_COLUMNS",
    "BASE_MODEL_COLUMNS",
    "TABLES",
    "authors_code_values",
    "authors_edge_weights",
    "authors_tokens",
    "base_models_table",
    "table_path",
    "pretraining_tokens",
    "load_paper_values",
    "parse_tolerance",
    "paper_figure8_sft",
]

#: The cited tables shipped with the package.
TABLES: tuple[str, ...] = (
    "pretraining_tokens",
    "paper_values",
    "paper_figure8_sft",
    "authors_code_values",
    "authors_tokens",
    "base_models",
)

_TOKENS_COLUMNS = tuple(
    """
    base_model family params_b active_params_b tokens_t tokens_kind source note
    """.split()
)
_PAPER_COLUMNS = tuple("id section claim paper value tolerance criterion citation kind".split())
_KINDS = ("analysis", "lookup")
_AUTHORS_COLUMNS = ("id", "chapter", "quantity", "value", "source", "note")
#: The columns of ``base_models.csv``, in file order (``tables/README.md``).
BASE_MODEL_COLUMNS: tuple[str, ...] = tuple(
    """
    name family key version variant sizes params_b alt_params_b archs arch_rule released parent
    hub_names aliases note
    """.split()
)
_SFT_COLUMNS = ("model", "config", *FIGURE8_COLUMNS, "scale", "reported_by", "source")


def table_path(name: str) -> Any:
    """Location of the packaged table ``name`` (a :class:`importlib.resources` traversable)."""
    if name not in TABLES:
        raise ValueError(f"unknown table {name!r}; the package ships {TABLES}")
    return resources.files("hca.data").joinpath("tables").joinpath(f"{name}.csv")


def _read(name: str, path: str | Path | None, **kwargs: Any) -> tuple[pd.DataFrame, str]:
    """Read the packaged table ``name`` (or ``path``); return the frame and a display name."""
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"{name}: table not found at {p}")
        return pd.read_csv(p, **kwargs), p.name
    src = table_path(name)
    if not src.is_file():
        raise FileNotFoundError(
            f"{name}: the packaged table {name}.csv is missing from hca/data/tables; reinstall hca"
        )
    with src.open("r", encoding="utf-8") as fh:
        return pd.read_csv(fh, **kwargs), f"{name}.csv"


def pretraining_tokens() -> pd.DataFrame:
    """The cited table of pretraining token counts (``tables/pretraining_tokens.csv``).

    Columns: ``base_model`` (canonical), ``family``, ``params_b`` (total parameters, B),
    ``active_params_b`` (active parameters per token for mixtures of experts, else NA),
    ``tokens_t`` (pretraining tokens, trillions; NA if unknown), ``tokens_kind``
    (``reported`` by the developer, or ``estimate`` from a third party), ``source`` and
    ``note``.  Every base :func:`hca.attribution.identify` can return has a row. Read from
    the package on every call (a few milliseconds).
    """
    t, shown = _read(
        "pretraining_tokens",
        None,
        dtype={"base_model": str, "family": str, "source": str, "note": str, "tokens_kind": str},
    )
    missing = [c for c in _TOKENS_COLUMNS if c not in t.columns]
    if missing:
        raise ValueError(f"{shown}: missing columns {missing}")
    if t["base_model"].duplicated().any():
        dup = t.loc[t["base_model"].duplicated(), "base_model"].tolist()
        raise ValueError(f"{shown}: duplicated base_model rows {dup}")
    return t


def load_paper_values(path: str | Path | None = None) -> pd.DataFrame:
    """The paper's values, one row per claim (``tables/paper_values.csv``), indexed by ``id``.

    Raises
    ------
    FileNotFoundError
        If the file is missing.
    ValueError
        If a column is missing, an id is duplicated or empty, or a tolerance is malformed.
    """
    t, shown = _read("paper_values", path, dtype=str, keep_default_na=False)
    missing = [c for c in _PAPER_COLUMNS if c not in t.columns]
    if missing:
        raise ValueError(f"{shown}: missing column(s) {missing}; has {list(t.columns)}")
    if (t["id"].str.strip() == "").any():
        raise ValueError(f"{shown}: a row has an empty id")
    dup = t["id"][t["id"].duplicated()].tolist()
    if dup:
        raise ValueError(f"{shown}: duplicated id(s) {dup}")
    bad = t.loc[~t["kind"].isin(_KINDS), "id"].tolist()
    if bad:
        raise ValueError(f"{shown}: claim(s) {bad[:5]} have a kind other than {_KINDS}")
    for i, tol in zip(t["id"], t["tolerance"]):
        if tol:
            parse_tolerance(tol, i)
    return t.set_index("id", drop=False)


def parse_tolerance(tol: str, cid: str = "") -> tuple[float, float]:
    """``"<reproduced>/<partly>"`` as two floats ``0 <= a <= b``; raise naming the claim."""
    try:
        a, b = (float(x) for x in tol.split("/"))
    except ValueError:
        raise ValueError(
            f"paper_values: claim {cid!r}: tolerance {tol!r} is not '<reproduced>/<partly>'"
        ) from None
    if not 0 <= a <= b:
        raise ValueError(
            f"paper_values: claim {cid!r}: tolerance {tol!r} must satisfy 0 <= reproduced <= partly"
        )
    return a, b


def paper_figure8_sft(path: str | Path | None = None) -> pd.DataFrame:
    """The IFEval-SFT rows of Figure 8, as **reported by the paper** (``tables/paper_figure8_sft.csv``).

    These are the authors' own fine-tuning results (raw accuracies, 0-1); they cannot be
    recomputed from the leaderboard.

    Returns
    -------
    DataFrame
        Indexed by ``(model, config)``; the six benchmark columns, ``scale``, ``reported_by``
        and ``source``.
    """
    t, shown = _read("paper_figure8_sft", path)
    missing = [c for c in _SFT_COLUMNS if c not in t.columns]
    if missing:
        raise ValueError(f"{shown}: missing column(s) {missing}")
    if not (t["reported_by"] == "paper").all():
        raise ValueError(f"{shown}: every row must be labelled reported_by = 'paper'")
    values = t[list(FIGURE8_COLUMNS)].to_numpy(dtype=float)
    if not np.all((values >= 0) & (values <= 1)):
        raise ValueError(f"{shown}: scores must be raw accuracies in [0, 1]")
    return t.set_index(["model", "config"])


def authors_code_values(path: str | Path | None = None) -> pd.DataFrame:
    """Numbers printed by the authors' public notebooks (``tables/authors_code_values.csv``),
    indexed by ``id``; ``value`` is a float, ``source`` cites repository, commit, file, cell.

    These are the authors' outputs, not the paper's claims and not ours: chapters show them
    beside our values where the paper gives none.
    """
    t, shown = _read("authors_code_values", path, dtype=str, keep_default_na=False)
    missing = [c for c in _AUTHORS_COLUMNS if c not in t.columns]
    if missing:
        raise ValueError(f"{shown}: missing column(s) {missing}")
    dup = t["id"][t["id"].duplicated()].tolist()
    if dup:
        raise ValueError(f"{shown}: duplicated id(s) {dup}")
    value = pd.to_numeric(t["value"], errors="coerce")
    if value.isna().any():
        raise ValueError(f"{shown}: non-numeric value for {t.loc[value.isna(), 'id'].tolist()[:5]}")
    if (t["source"].str.strip() == "").any():
        raise ValueError(f"{shown}: every row needs a source")
    return t.assign(value=value.astype(float)).set_index("id", drop=False)


def authors_edge_weights(path: str | Path | None = None) -> pd.Series:
    """The weights of the edge z1 -> z2 (general, MMLU-PRO-aligned -> IFEval-aligned) that the
    authors' notebook printed on each domain's causal graph (``find_proximal_benchmark.ipynb``,
    rows ``edge-z1-z2-<domain>`` of ``tables/authors_code_values.csv``), indexed by domain.
    The authors' values, not the paper's (whose Figure 4 gives 2.76 for Llama-3-8B)."""
    t = authors_code_values(path)
    rows = t[t["id"].str.startswith("edge-z1-z2-")]
    if rows.empty:
        raise ValueError("authors_code_values.csv: no edge-z1-z2-<domain> rows")
    return pd.Series(
        rows["value"].to_numpy(float),
        index=[i[len("edge-z1-z2-") :] for i in rows["id"]],
        name="authors' notebook: z1 → z2",
    ).rename_axis("domain")


def authors_tokens(path: str | Path | None = None) -> pd.Series:
    """Pretraining tokens (trillions) per model family in the authors' code
    (``tables/authors_tokens.csv``), indexed by the family label (``"llama-3"``, ...)."""
    t, shown = _read("authors_tokens", path)
    missing = [c for c in ("family", "tokens_t", "source") if c not in t.columns]
    if missing:
        raise ValueError(f"{shown}: missing column(s) {missing}")
    if t["family"].duplicated().any():
        raise ValueError(f"{shown}: duplicated family rows")
    return t.set_index("family")["tokens_t"].astype(float)


def base_models_table(path: str | Path | None = None) -> pd.DataFrame:
    """The catalogue of canonical base models (``tables/base_models.csv``), every cell a string
    (an empty cell is ``""``), in file order.

    Checks the columns (:data:`BASE_MODEL_COLUMNS`, in that order), that every row has one
    cell per column and that names are present and unique;
    :func:`hca.attribution.catalogue.read_catalogue` checks every cell.
    """
    src = table_path("base_models") if path is None else Path(path)
    shown = "base_models.csv" if path is None else src.name
    if not src.is_file():
        raise FileNotFoundError(f"base_models: table not found at {src}")
    with src.open("r", encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = tuple(next(reader, ()))
        if header != BASE_MODEL_COLUMNS:
            missing = [c for c in BASE_MODEL_COLUMNS if c not in header]
            extra = [c for c in header if c not in BASE_MODEL_COLUMNS]
            raise ValueError(
                f"{shown}: expected columns {list(BASE_MODEL_COLUMNS)}, found {list(header)}"
                f" (missing {missing}, unknown {extra})"
            )
        rows = []
        for r in reader:
            if r and len(r) != len(header):
                raise ValueError(
                    f"{shown}: line {reader.line_num} has {len(r)} cells, expected "
                    f"{len(header)} (one per column; a cell with a comma is quoted)"
                )
            rows.extend([r] if r else [])
    t = pd.DataFrame(rows, columns=list(header), dtype=str)
    empty = [i + 1 for i, n in enumerate(t["name"]) if not n.strip()]
    if empty:
        raise ValueError(f"{shown}: row(s) {empty} have an empty name")
    dup = t["name"][t["name"].duplicated()].tolist()
    if dup:
        raise ValueError(f"{shown}: duplicated name(s) {dup}")
    return t
