"""The catalogue of canonical base models (names, sizes, architectures, release dates).

One base model is a :class:`BaseModel`; :data:`BASE_MODELS` holds them all, read once from the
packaged table ``hca/data/tables/base_models.csv`` (columns described in its ``README.md``)
by :func:`read_catalogue`, which checks every cell and never runs code.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from hca.data.tables import base_models_table

__all__ = [
    "BaseModel",
    "BASE_MODELS",
    "LAYERS",
    "read_catalogue",
]


#: Identification layers in decreasing order of confidence.
LAYERS: tuple[str, ...] = ("hub", "name_explicit", "hub_name", "name_family", "architecture")


@dataclass(frozen=True)
class BaseModel:
    """One pretrained base model (a domain).

    Attributes
    ----------
    name : str
        Canonical name, following the paper (``"Llama-3-8B"``).
    family : str
        Family label (``"Llama-3"``, ``"Qwen2.5"``, ...).
    key : str
        Family keyword in names (``"llama"``, ``"qwen"``, ``"mistral"``, ...).
    version : str or None
        Version as written after the keyword (``"3.1"``, ``"2.5"``); None if the family has
        no version number in names (``mistral``, ``mixtral``).
    variant : str or None
        Variant word that must follow the keyword (``"coder"``, ``"math"``, ``"nemo"``).
    sizes : tuple of str
        Size labels in names (``"8b"``, ``"0.5b"``, ``"8x7b"``, ``"mini"``).  The empty label
        ``""`` among them means the family+version alone names this base (``phi-4``,
        ``mistral-nemo``).
    params_b : float
        Parameter count (billions) of the official checkpoint, as the leaderboard reports it.
    alt_params_b : tuple of float
        Other parameter counts of the same weights (untied embeddings in fine-tunes).
    archs : tuple of str
        Architectures of the official checkpoints (and verbatim conversions).
    arch_rule : {"strict", "generous", "compete"} or None
        How the architecture layer may use this base; None: never by architecture alone;
        "compete": matched strictly, so that it makes look-alikes ambiguous, but never
        attributed by architecture alone (LLaMA-1 shapes are reused by from-scratch models
        such as OpenLLaMA, Amber or K2).
    released : str
        Public release date (ISO), used only to exclude impossible descendants.
    hub_names : tuple of str
        Official repository names (without org, lower case) of base and instruct checkpoints.
    aliases : tuple of str
        Extra regular expressions (on the lower-cased name) that name this base explicitly.
    parent : str or None
        For official continued-pretraining bases (Coder, Math, Yi-1.5, ...): the base whose
        weights they continue.  A model whose hub column names the parent but whose name
        names this base is attributed to this base.
    """

    name: str
    family: str
    key: str
    version: str | None
    variant: str | None
    sizes: tuple[str, ...]
    params_b: float
    alt_params_b: tuple[float, ...]
    archs: tuple[str, ...]
    arch_rule: str | None
    released: str
    hub_names: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    parent: str | None = None

    @property
    def signatures(self) -> tuple[float, ...]:
        return (self.params_b,) + self.alt_params_b


_ARCH_RULES = ("strict", "generous", "compete")
#: How ``base_models.csv`` writes the empty size label ``""`` in ``sizes``.
_EMPTY_SIZE = "-"


def read_catalogue(path: str | Path | None = None) -> tuple[BaseModel, ...]:
    """The base models of ``tables/base_models.csv`` (or of ``path``), in table order.

    Cells are plain text: lists are ``;``-separated (an empty cell is an empty list), an empty
    optional cell is None, ``-`` in ``sizes`` is the empty label ``""``; ``note`` is not read.

    Raises
    ------
    ValueError
        Naming the file, row, base model and column, with what was expected and found, if a
        column is missing or unknown, a name is empty or repeated, or a cell is malformed
        (a number, date, architecture rule, regular expression or parent that is not one).
    """
    table = base_models_table(path)
    shown = "base_models.csv" if path is None else Path(path).name
    names = set(table["name"])
    return tuple(
        _parse_row(row, f"{shown}: row {i + 1} ({row['name']!r})", names)
        for i, row in enumerate(table.to_dict("records"))
    )


def _parse_row(row: dict[str, str], where: str, names: set[str]) -> BaseModel:
    """One :class:`BaseModel` from the text cells of one row; ``where`` names the row."""

    def check(ok: bool, col: str, expected: str) -> None:
        if not ok:
            raise ValueError(f"{where}, column {col!r}: expected {expected}, found {row[col]!r}")

    def text(col: str, required: bool = False) -> str | None:
        v = row[col]
        check(v == v.strip() and ";" not in v and (bool(v) or not required), col, "one value")
        return v or None

    def items(col: str, lower: bool = False, required: bool = False) -> tuple[str, ...]:
        out = tuple(row[col].split(";")) if row[col] else ()
        ok = all(x and x == x.strip() and (x == x.lower() or not lower) for x in out)
        kind = "lower-case " if lower else ""
        check(ok and (bool(out) or not required), col, f"';'-separated {kind}items")
        return out

    def number(col: str, s: str) -> float:
        try:
            x = float(s)
        except ValueError:
            x = math.nan
        check(math.isfinite(x) and x > 0, col, "positive numbers of parameters (billions)")
        return x

    def regex(col: str, s: str) -> str:
        try:
            re.compile(s)
        except re.error as e:
            check(False, col, f"regular expressions ({e})")
        return s

    released = text("released", required=True)
    try:
        date.fromisoformat(str(released))
        iso = re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(released)) is not None
    except ValueError:
        iso = False
    check(iso, "released", "an ISO date (YYYY-MM-DD)")
    rule = text("arch_rule")
    check(rule is None or rule in _ARCH_RULES, "arch_rule", f"empty or one of {_ARCH_RULES}")
    parent = text("parent")
    check(parent is None or parent in names - {row["name"]}, "parent", "another base's name")
    key = text("key", required=True)
    check(key == str(key).lower(), "key", "a lower-case keyword")
    archs = items("archs", required=True)
    check(all(a.isidentifier() for a in archs), "archs", "architecture class names")
    return BaseModel(
        name=str(text("name", required=True)),
        family=str(text("family", required=True)),
        key=str(key),
        version=text("version"),
        variant=text("variant"),
        sizes=tuple("" if s == _EMPTY_SIZE else s for s in items("sizes", True, True)),
        params_b=number("params_b", str(text("params_b", required=True))),
        alt_params_b=tuple(number("alt_params_b", s) for s in items("alt_params_b")),
        archs=archs,
        arch_rule=rule,
        released=str(released),
        hub_names=items("hub_names", lower=True),
        aliases=tuple(regex("aliases", s) for s in items("aliases")),
        parent=parent,
    )


#: Every canonical base model, in catalogue order (Llama and Qwen first).
BASE_MODELS: tuple[BaseModel, ...] = read_catalogue()
