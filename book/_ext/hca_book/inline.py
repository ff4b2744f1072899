"""Inline numbers that the book and JupyterLab both render: ``{eval}`text(G, "name:fmt")```.

In JupyterLab, jupyterlab-myst evaluates an ``{eval}`` expression in the kernel and shows its
result (:class:`hca.paper.glue.Inline`: the formatted text, no quotes), so a chapter opened and
run in Lab shows its numbers in the prose. The book executes its notebooks through the
jupyter-cache (no kernel while the pages are written), where myst-nb's own ``eval`` role has
nothing to evaluate; this role takes its place. It accepts only the form
``text(<mapping>, "name:fmt")`` and pastes the glued value ``name`` with the format ``fmt``,
exactly as ``{glue:text}`name:fmt``` does (the notebook glues every value of the mapping); a
value glued as markdown (:func:`hca.paper.glue.glue_markdown`, e.g. a chapter's opening
paragraph) is pasted as MyST, as ``{glue:md}`name:myst``` does. Any other expression is a build
warning (an error with ``--warningiserror``).
"""

from __future__ import annotations

import re

from myst_nb.core.variables import RetrievalError, create_warning
from myst_nb.ext.glue.roles import PasteMarkdownRole, PasteTextRole
from myst_nb.ext.glue.utils import retrieve_glue_data
from sphinx.application import Sphinx

#: ``text(G, "name:fmt")``: the one expression form the book evaluates.
EXPRESSION = re.compile(r"""^\s*text\(\s*[A-Za-z_]\w*\s*,\s*(["'])([^"']+)\1\s*\)\s*$""")


class EvalGlueText(PasteTextRole):
    """``{eval}`text(G, "name:fmt")``` as ``{glue:text}`name:fmt```."""

    def run(self):
        m = EXPRESSION.match(self.text)
        if m is None:
            return [], [create_warning(
                f"{{eval}} expression {self.text!r} is not of the form text(G, \"name:fmt\")",
                self.document, self.line, subtype="eval")]
        spec = m.group(2)
        try:
            data = retrieve_glue_data(self.document, spec.split(":", 1)[0]).data
        except RetrievalError:
            data = {}
        if "text/markdown" in data and ":" not in spec:
            paste = PasteMarkdownRole()
            for attr in ("inliner", "rawtext", "source", "line"):
                setattr(paste, attr, getattr(self, attr))
            paste.text = f"{spec}:myst"
            return paste.run()
        self.text = spec
        return super().run()


def setup(app: Sphinx) -> None:
    app.add_role("eval", EvalGlueText(), override=True)
