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


def setup(app: Sphinx) -> None:
    app.add_transform(NumberCaptionedTables)
