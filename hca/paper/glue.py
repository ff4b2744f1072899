"""Small helpers of the book's notebooks: gluing numbers for the prose, formatting cells.

Every number in the prose is glued (``myst_nb.glue``), never typed. A notebook keeps what it
glues in one :class:`Glued` mapping ``G`` (``G.value``, ``G.many``, ``G.put``: plain Python
numbers, never NumPy reprs) and quotes it as ``{eval}`text(G, "name:fmt")```, which the book
renders as ``{glue:text}`name:fmt``` does and JupyterLab (jupyterlab-myst) evaluates in the
kernel, so the prose shows the same numbers in both. The formatting helpers turn results into
table cells the same way on every page.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "plain",
    "glue_value",
    "glue_values",
    "glue_markdown",
    "Glued",
    "Inline",
    "text",
    "pct",
    "members",
    "mark",
    "ci_text",
    "times_text",
    "show",
    "References",
]


def plain(value: Any) -> Any:
    """``value`` as a plain Python object for glue: strings as they are, numbers (NumPy
    scalars included) as ``float``."""
    return value if isinstance(value, str) else float(value)


def _glue(name: str, value: Any) -> None:
    from myst_nb import glue  # only in a notebook (the book's dependencies)

    glue(name, value, display=False)


def glue_value(name: str, value: Any) -> None:
    """Glue one number (as a float) or string for the prose, without displaying it."""
    _glue(name, plain(value))


def glue_values(values: Mapping[str, Any] | None = None, **more: Any) -> None:
    """Glue several values, NumPy scalars as the Python numbers they hold (ints stay ints)."""
    for name, value in {**dict(values or {}), **more}.items():
        _glue(name, value.item() if isinstance(value, np.generic) else value)


def glue_markdown(name: str, text: str) -> None:
    """Glue MyST markdown (a paragraph built by :mod:`hca.paper`) for a ``{glue:md}``
    directive with ``:format: myst``, without displaying it."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"glue_markdown: {name!r} needs non-empty markdown text, got {text!r}")
    from IPython.display import Markdown

    _glue(name, Markdown(text))


class Glued(dict):
    """The values a notebook glues for its prose, by name: each one is glued (``myst_nb.glue``,
    not displayed) and kept here, so that ``{eval}`text(G, "name:fmt")``` shows it in the book
    (the book's ``eval`` role pastes the glued value) and in JupyterLab (the kernel evaluates
    :func:`text` on this mapping) alike. Names are unique: gluing a name twice is an error, so
    a later cell cannot silently change a number an earlier sentence quotes.

    Examples
    --------
    >>> G = Glued()  # doctest: +SKIP
    >>> G.value("mic", np.float64(0.038))  # a number as a float (or a string as it is)
    >>> G.many(n_models=np.int64(1234))  # several, NumPy scalars as the Python numbers they hold
    >>> text(G, "n_models:,d")
    1,234
    """

    def _keep(self, name: str, value: Any) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"Glued: a name must be a non-empty string, got {name!r}")
        if name in self and self[name] != value:
            raise ValueError(
                f"Glued: {name!r} is already glued as {self[name]!r}; a second value "
                f"{value!r} would change what the prose quotes"
            )
        _glue(name, value)
        self[name] = value

    def value(self, name: str, value: Any) -> None:
        """Glue one number (as a float) or string (:func:`glue_value`)."""
        self._keep(name, plain(value))

    def many(self, values: Mapping[str, Any] | None = None, **more: Any) -> None:
        """Glue several values, NumPy scalars as the Python numbers they hold (ints stay ints;
        :func:`glue_values`)."""
        for name, v in {**dict(values or {}), **more}.items():
            self._keep(name, v.item() if isinstance(v, np.generic) else v)

    def put(self, name: str, value: Any) -> None:
        """Glue one value as it is (a NumPy scalar as the Python number it holds)."""
        self._keep(name, value.item() if isinstance(value, np.generic) else value)

    def markdown(self, name: str, text: str) -> None:
        """Glue MyST markdown (e.g. the chapter's answer paragraph): the book pastes it as MyST
        (``{eval}`text(G, "answer")```), JupyterLab renders the kept text."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"Glued.markdown: {name!r} needs non-empty markdown, got {text!r}")
        if name in self and self[name] != text:
            raise ValueError(f"Glued: {name!r} is already glued with other text")
        glue_markdown(name, text)
        self[name] = text


class Inline:
    """A glued value's text as an inline expression shows it: ``{eval}`text(G, "n:,d")```
    renders ``1,234`` in JupyterLab (jupyterlab-myst evaluates the expression in the kernel and
    shows this object's markdown, without a string's quotes) and in the book (the book's
    ``eval`` role pastes the glued value ``n`` with the format ``,d``, as ``{glue:text}``)."""

    def __init__(self, value: str):
        self.value = str(value)

    def _repr_markdown_(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return self.value


def text(values: Mapping[str, Any], spec: str) -> Inline:
    """The text of ``values[name]`` formatted by ``fmt`` for ``spec = "name:fmt"`` (``fmt``
    optional), as ``{glue:text}`name:fmt``` shows the glued value in the book: the value is
    first made the type the format's last character asks for (``d``: int, ``f``/``%``/...:
    float, ``s``: str), as myst-nb's ``format_plain_text`` does."""
    name, sep, fmt = str(spec).rpartition(":") if ":" in str(spec) else (str(spec), "", "")
    if name not in values:
        raise KeyError(f"text: no glued value {name!r}; glued: {sorted(values)[:20]}")
    value = values[name]
    value = value.item() if isinstance(value, np.generic) else value
    if not fmt:
        return Inline(str(value))
    kind = fmt[-1]
    if kind == "s":
        value = str(value)
    elif kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    return Inline(format(value, fmt))


def pct(x: Any) -> float:
    """A share (0-1) as a percentage (0-100), for glue."""
    return 100 * float(x)


def members(items: Iterable[Any]) -> str:
    """The items of a set or list as ``"a, b, c"``."""
    return ", ".join(str(x) for x in items)


def mark(x: Any) -> str:
    """``"yes"`` for a true value, empty for a false one (a table cell)."""
    return "yes" if x else ""


def ci_text(row: Mapping[str, Any], value: str) -> str:
    """``row[value]`` with its 95 % interval (``ci95_low``, ``ci95_high``), signed, one
    decimal: ``"+1.2 [+0.3, +2.1]"``."""
    return f"{row[value]:+.1f} [{row['ci95_low']:+.1f}, {row['ci95_high']:+.1f}]"


def times_text(ratio: Any, other: str) -> str:
    """A ratio as words: ``"2.4 times the printed one"``; one that would print as ``1.0``
    reads ``"about the same as the printed one (ratio 0.98)"``, never ``"1.0 times"``.

    Raises
    ------
    ValueError
        If ``ratio`` is not a finite positive number.
    """
    r = float(ratio)
    if not np.isfinite(r) or r <= 0:
        raise ValueError(f"times_text: ratio must be finite and positive, got {ratio!r}")
    if f"{r:.1f}" == "1.0":
        return f"about the same as {other} (ratio {r:.2f})"
    if r < 1:
        return f"{r:.2f} times {other}" if r >= 0.095 else f"{1 / r:.0f} times smaller than {other}"
    return f"{r:.1f} times {other}"


def show(text: Any, width: int = 86) -> None:
    """Print ``text`` with long lines wrapped (so that it fits the page)."""
    for line in str(text).splitlines():
        print(textwrap.fill(line, width, subsequent_indent="    ") if line.strip() else "")


# ---------------------------------------------------------------------------------------------
# Cross-references that JupyterLab shows too (added for issue 46; scripts/convert_lab_refs.py
# writes them, book/_ext/hca_book/inline.py renders each in the book as the role it replaces).

#: A ``(label)=`` target right before a heading, and the heading's text.
_SECTION = re.compile(r"^\(([^()\s]+)\)=[ \t]*\n+#+[ \t]+(.+?)[ \t]*$", re.M)
#: The ``:name:`` of a ``{figure}`` or ``{glue:figure}`` directive.
_DIRECTIVE_FIGURE = re.compile(r"[`:]{3,}\{(?:glue:)?figure\}[^\n]*\n(?::[^\n]*\n)*?:name:\s*(\S+)")
_ROLE = re.compile(r"\{(numref|ref|doc)\}`([^`]+)`")


class References:
    """What the book's cross-references read, for JupyterLab, where jupyterlab-myst knows
    neither the figures of code cells nor other pages ("Cross Reference Not Found").

    A chapter's first cell sets ``R = References("03_hca_recovery")``; its prose writes
    ``{eval}`R.numref("fig-x")``` ("Figure 3.2": the chapter's number, then the figure's place
    among the page's figure cells and figure directives), ``{eval}`R.ref("label")``` (the title of
    the section after ``(label)=``, linked when it is on this page), ``{eval}`R.doc("02_latent_pca")```
    (the page's title, linked to its file) and ``{eval}`R.md(G, "answer")``` (glued MyST with
    these roles in it). The book renders them as ``{numref}``, ``{ref}``, ``{doc}`` and the glued
    text. Pages are read from ``folder`` (JupyterLab's kernel runs in the notebook's folder) only
    when a reference is shown: ``<name>.md``, else ``<name>.ipynb``; ``number`` overrides the
    chapter number taken from the file name (the intro's is "I")."""

    def __init__(self, chapter: str, folder: str | Path = ".", number: str | None = None):
        self.chapter, self.folder, self.number = chapter, Path(folder), number
        self._pages: dict[str, tuple[Path, str, dict[str, str]]] = {}

    def _page(self, name: str) -> tuple[Path, str, dict[str, str]]:
        """(file, title, {target: text}) of page ``name`` ("/x" is read from the folder's parent)."""
        if name not in self._pages:
            base = self.folder.parent / name[1:] if name.startswith("/") else self.folder / name
            files = [base.parent / (base.name + ext) for ext in (".md", ".ipynb")]
            path = next((p for p in files if p.is_file()), None)
            if path is None:
                raise KeyError(f"References: no page {name!r}: neither {files[0]} nor {files[1]}")
            digits = re.match(r"\d+", base.name)
            number = self.number if base.name == Path(self.chapter).name else None
            number = number or (str(int(digits.group())) if digits else "?")
            title, figures = "", 0
            texts: dict[str, str] = {}
            for cell in _notebook_cells(path):
                src = cell.get("source", "")
                src = src if isinstance(src, str) else "".join(src)
                if cell.get("cell_type") == "markdown":
                    title = title or next(iter(re.findall(r"^#[ \t]+(.+?)[ \t]*$", src, re.M)), "")
                    texts.update(_SECTION.findall(src))
                    names = _DIRECTIVE_FIGURE.findall(src)
                else:
                    meta = cell.get("metadata", {})
                    name_ = meta.get("mystnb", {}).get("figure", {}).get("name")
                    shown = not {"remove-output", "remove-cell"} & set(meta.get("tags", []))
                    names = [name_] if name_ and shown else []
                for figure in names:
                    figures += 1
                    texts[figure] = f"Figure {number}.{figures}"
            self._pages[name] = (path, title, texts)
        return self._pages[name]

    def _target(self, target: str) -> tuple[str, bool]:
        """The text of ``target`` and whether it is on this page (else on a page of the folder)."""
        own = self._page(self.chapter)[2]
        if target in own:
            return own[target], True
        for path in sorted(self.folder.glob("*.md")) or sorted(self.folder.glob("*.ipynb")):
            texts = self._page(path.stem)[2]
            if target in texts:
                return texts[target], False
        raise KeyError(
            f"References: no figure or section {target!r} in {self.chapter} or in "
            f"the other pages of {self.folder.resolve()}"
        )

    def numref(self, target: str) -> Inline:
        """``{numref}`fig-x``` as the book numbers it: "Figure 3.2"."""
        return Inline(self._target(target)[0])

    def ref(self, target: str) -> Inline:
        """``{ref}`label``` (or ``{ref}`text <label>```): the section's title, as text.

        Not a link, on this page either: jupyterlab-myst reads ``[title](#label)`` as a
        cross-reference and marks it "Cross Reference Not Found" (found by
        ``scripts/check_rerun.sh`` on chapter 8). The book renders the ``{ref}`` role itself."""
        text, _, label = target.rpartition("<") if target.endswith(">") else ("", "", target)
        label = label.rstrip(">").strip()
        title, _here = self._target(label)
        return Inline(text.strip() or title)

    def doc(self, target: str) -> Inline:
        """``{doc}`name``` (or ``{doc}`text <name>```): the page's title, linked to its file; the
        text or the bare name when the page is not beside this one (a downloaded notebook)."""
        text, _, name = target.rpartition("<") if target.endswith(">") else ("", "", target)
        name = name.rstrip(">").strip()
        try:
            path, title, _ = self._page(name)
        except KeyError:
            return Inline(text.strip() or name)
        return Inline(f"[{text.strip() or title}]({os.path.relpath(path, self.folder)})")

    def md(self, values: Mapping[str, Any], name: str) -> Inline:
        """The glued MyST ``values[name]`` with its ``{numref}``, ``{ref}`` and ``{doc}`` roles as
        :meth:`numref`, :meth:`ref` and :meth:`doc` show them."""
        return Inline(_ROLE.sub(lambda m: getattr(self, m[1])(m[2]).value, str(values[name])))


def _notebook_cells(path: Path) -> list[dict[str, Any]]:
    """The cells of a notebook file: ``.ipynb`` as JSON, MyST ``.md`` through jupytext."""
    if path.suffix == ".ipynb":
        return list(json.loads(path.read_text(encoding="utf-8"))["cells"])
    import jupytext  # in the `lab` and `book` extras, as JupyterLab opens a .md through it

    return list(jupytext.read(path)["cells"])
