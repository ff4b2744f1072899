"""Every captioned table gets an anchor, so that Sphinx numbers it like a figure ("Table 3.1").

Sphinx's ``numfig`` numbers a table only when it has a title and an id; a MyST ``{table}``
without ``:name:`` (as :func:`hca.plots.tables.table_markdown` writes for a frame without an
anchor) has a title but no id. This transform gives such tables a document-unique id before
the table of contents collector assigns the numbers.
"""

from __future__ import annotations

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
    setup_numbering(app)
