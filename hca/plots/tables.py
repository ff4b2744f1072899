"""Tables as the book shows them: numbered, captioned, clean.

Every DataFrame a notebook displays goes through :func:`table_markdown` (the display formatter
that :func:`hca.plots.use_book_style` installs): in the book it becomes a MyST ``{table}``
directive with a caption, which the book numbers per chapter like its figures ("Table 3.1");
Jupyter still shows pandas' own HTML. The cells are cleaned on the way (:func:`clean_frame`:
a plain 0..n-1 index dropped, every cell through :func:`format_cell`), nothing truncated.

A caption is given with :func:`captioned` (``captioned(df, "Paper Table 3: ...", "tab-...")``
as the last line of a cell); a frame without one gets a caption listing what its rows and
columns are, so that every table is still numbered.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["captioned", "clean_frame", "format_cell", "table_markdown", "register_formatter"]

#: What a missing cell reads.
MISSING = "–"
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:/[\w.+@-]+){2,}/([\w.+@-]+)")
_PAPER_REF = re.compile(r"\b(Fig\.|Figures?|Tables?)\s*\d", re.I)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_$\[\]<>|{}~^&#])")


def captioned(frame: pd.DataFrame, caption: str, name: str | None = None) -> pd.DataFrame:
    """``frame`` (a shallow copy) carrying its caption and anchor for the book's display.

    Parameters
    ----------
    frame : DataFrame
    caption : str
        Starts with "Paper Table N" when the table reproduces one of the paper's.
    name : str, optional
        The table's anchor (``tab-<chapter>-<what>``), for ``{numref}`` links.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"captioned: expected a DataFrame, got {type(frame).__name__}")
    if not str(caption).strip():
        raise ValueError("captioned: empty caption")
    out = frame.copy(deep=False)
    out.attrs = {**frame.attrs, "caption": " ".join(str(caption).split())}
    if name:
        out.attrs["name"] = name
    return out


def format_cell(value: Any) -> str:
    """One cell as text: "–" for missing, "yes"/"no" for booleans, no trailing ".0", no
    negative zero, at most 6 significant digits, machine paths reduced to file names."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if value is None or value is pd.NA or value is pd.NaT:
        return MISSING
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return MISSING
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        if value == 0:
            return "0"
        if float(value).is_integer() and abs(value) < 1e15:
            return f"{int(value):d}"
        text = np.format_float_positional(
            float(value), precision=6, unique=True, trim="-", fractional=False
        )
        return "0" if float(text) == 0 else text
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (list, tuple, set, frozenset)):
        return ", ".join(format_cell(v) for v in value)
    try:
        if pd.isna(value):
            return MISSING
    except (TypeError, ValueError):
        pass
    return _PATH.sub(r"\1", " ".join(str(value).split()))


def _label(key: Any) -> str:
    if isinstance(key, tuple):
        parts = [format_cell(k) for k in key if str(k) != ""]
        return " / ".join(dict.fromkeys(parts)) or " "
    return format_cell(key)


def clean_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as a frame of strings: a meaningful index as leading columns (a plain
    0..n-1 index dropped), flat column labels, every cell through :func:`format_cell`."""
    df = frame
    plain = (
        isinstance(df.index, pd.RangeIndex)
        and df.index.start == 0
        and df.index.step == 1
        and df.index.name is None
    )
    if not plain:
        names = [n if n is not None else "" for n in df.index.names]
        if len(names) == 1 and not names[0]:
            names = [" "]
        idx = df.index.to_frame(index=False)
        idx.columns = [str(n) if n else " " * (i + 1) for i, n in enumerate(names)]
        body = df.reset_index(drop=True)
        body.columns = [_label(c) for c in df.columns]
        df = pd.concat([idx, body], axis=1)
    else:
        df = df.copy()
        df.columns = [_label(c) for c in df.columns]
    return df.map(format_cell).astype(str)


def _escape(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text) if text.strip() else " "


def _default_caption(frame: pd.DataFrame) -> str:
    rows = [str(n) for n in frame.index.names if n]
    cols = [_label(c) for c in frame.columns]
    shown = ", ".join(cols[:6]) + (", …" if len(cols) > 6 else "")
    n = f"{len(frame)} row{'s' if len(frame) != 1 else ''}"
    text = f"By {', '.join(rows)}: {shown} ({n})." if rows else f"{shown} ({n})."
    if _PAPER_REF.search(text):  # a caption naming a paper figure must start with it
        text = f"{n.capitalize()}, {frame.shape[1]} columns."
    return text


def table_markdown(frame: pd.DataFrame, caption: str | None = None, name: str | None = None) -> str:
    """``frame`` as a MyST ``{table}`` directive (numbered and captioned in the book).

    Parameters
    ----------
    frame : DataFrame
    caption : str, optional
        Default: the frame's ``attrs["caption"]`` (see :func:`captioned`), else a caption
        naming its rows and columns.
    name : str, optional
        Default: ``attrs["name"]``; the table's anchor.
    """
    caption = caption or frame.attrs.get("caption") or _default_caption(frame)
    name = name or frame.attrs.get("name")
    df = clean_frame(frame)
    types = pd.api.types
    numeric = [False] * (df.shape[1] - frame.shape[1]) + [
        types.is_numeric_dtype(col) and not types.is_bool_dtype(col)
        for col in (frame.iloc[:, i] for i in range(frame.shape[1]))
    ]
    head = "| " + " | ".join(_escape(c) for c in df.columns) + " |"
    rule = "|" + "|".join("---:" if n else "---" for n in numeric) + "|"
    rows = ["| " + " | ".join(_escape(v) for v in r) + " |" for r in df.itertuples(index=False)]
    opts = f":name: {name}\n" if name else ""
    fence = "````"
    return (
        f"{fence}{{table}} {_escape(caption)}\n{opts}:class: hca-table\n\n"
        + "\n".join([head, rule, *rows])
        + f"\n{fence}\n"
    )


def register_formatter(ipython: Any) -> None:
    """Give DataFrames in ``ipython`` a ``text/markdown`` form, :func:`table_markdown`.

    The book renders it (``_config.yml`` ranks ``text/markdown`` above ``text/html``); Jupyter
    still shows pandas' HTML, which it prefers."""
    ipython.display_formatter.formatters["text/markdown"].for_type(pd.DataFrame, table_markdown)
