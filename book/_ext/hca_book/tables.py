"""Every captioned table gets an anchor, so that Sphinx numbers it like a figure ("Table 3.1").

Sphinx's ``numfig`` numbers a table only when it has a title and an id; a MyST ``{table}``
without ``:name:`` (as :func:`hca.plots.tables.table_markdown` writes for a frame without an
anchor) has a title but no id. This transform gives such tables a document-unique id before
the table of contents collector assigns the numbers.

Interactive tables (itables' ``to_html_datatable`` output, a raw HTML block whose table has the
class ``hca-numbered``) are numbered in the same sequence: a transform wraps the raw block in an
:class:`interactive_table` node (an enumerable node of type ``table``, titled by the table's
``caption`` option), and the HTML writer puts the number ("Table 9.3") into that caption, which
DataTables renders as the table's ``<caption>``.
"""

from __future__ import annotations

import json
import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform


class NumberCaptionedTables(SphinxTransform):
    default_priority = 400

    def apply(self, **kwargs) -> None:
        for table in self.document.findall(nodes.table):
            if table["ids"] or not any(isinstance(c, nodes.title) for c in table.children):
                continue
            self.document.set_id(table, suggested_prefix="table")


# ------------------------------------------------------------------ interactive (itables) tables
class interactive_table(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """A raw HTML interactive table, numbered like a table (its caption is in ``node["html"]``)."""


#: The DataTables ``caption`` option in itables' arguments: ``"caption": "<JSON string>"``.
_CAPTION = re.compile(r'"caption": ("(?:[^"\\]|\\.)*")')


def interactive_caption(html: str) -> str | None:
    """The caption of an interactive table's HTML (the DataTables ``caption`` option)."""
    m = _CAPTION.search(html)
    return json.loads(m.group(1)) if m else None


class NumberInteractiveTables(SphinxTransform):
    default_priority = 400

    def apply(self, **kwargs) -> None:
        for raw in list(self.document.findall(nodes.raw)):
            html = raw.astext()
            if "html" not in raw.get("format", "").split() or "hca-numbered" not in html:
                continue
            caption = interactive_caption(html)
            if not caption:
                continue
            node = interactive_table(html=html, caption=caption)
            self.document.set_id(node, suggested_prefix="table")
            raw.replace_self(node)


def visit_interactive_table(self, node: interactive_table) -> None:
    """The table's HTML with "Table N " as a ``caption-number`` span in its caption."""
    html = node["html"]
    self.body.append(f'<div class="hca-interactive-table" id="{node["ids"][0]}">')
    start = len(self.body)
    self.add_fignumber(node)  # "<span class=\"caption-number\">Table 9.3 </span>" or nothing
    number = "".join(self.body[start:])
    del self.body[start:]
    m = _CAPTION.search(html)
    if m and number:
        numbered = json.dumps(number + json.loads(m.group(1)))
        html = html[: m.start(1)] + numbered + html[m.end(1) :]
    self.body.append(html + "</div>\n")
    raise nodes.SkipNode


def _caption_of(node: interactive_table) -> str:
    return node["caption"]




#: Pages outside the numbered chapters whose figures and tables get a letter prefix ("Figure
#: I.1" on the intro), so that the book's own figure there cannot be read as Paper Figure 1.
PREFIXED = {"book/intro": "I"}


def prefix_unnumbered(app: Sphinx, env) -> list[str]:
    """Number the figures and tables of :data:`PREFIXED` pages "I.1", "I.2", ..."""
    for docname, prefix in PREFIXED.items():
        numbers = env.toc_fignumbers.get(docname)
        if not numbers:
            continue
        for figtype, ids in numbers.items():
            order = sorted(ids, key=lambda i: ids[i])
            for k, node_id in enumerate(order, start=1):
                ids[node_id] = (prefix, k)
    return []


def setup_numbering(app: Sphinx) -> None:
    app.connect("env-get-updated", prefix_unnumbered, priority=900)


def setup(app: Sphinx) -> None:
    app.add_transform(NumberCaptionedTables)
    app.add_enumerable_node(
        interactive_table,
        "table",
        _caption_of,
        html=(visit_interactive_table, None),
        latex=(lambda self, node: None, None),
        text=(lambda self, node: None, None),
    )
    app.add_transform(NumberInteractiveTables)
    setup_numbering(app)
