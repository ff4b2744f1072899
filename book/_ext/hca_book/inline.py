"""Inline numbers and cross-references that the book and JupyterLab both render.

In JupyterLab, jupyterlab-myst evaluates an ``{eval}`` expression in the kernel and shows its
result (:class:`hca.paper.glue.Inline`: the formatted text, no quotes, as markdown), so a chapter
opened and run in Lab shows its numbers in the prose. The book executes its notebooks through
the jupyter-cache (no kernel while the pages are written), where myst-nb's own ``eval`` role has
nothing to evaluate; this role takes its place. It accepts these forms (any other expression is
a build warning, an error with ``--warningiserror``):

- ``text(G, "name:fmt")`` pastes the glued value ``name`` with the format ``fmt``, exactly as
  ``{glue:text}`name:fmt``` does (the notebook glues every value of the mapping); a value glued
  as markdown (:func:`hca.paper.glue.glue_markdown`, e.g. a chapter's opening paragraph) is
  pasted as MyST, as ``{glue:md}`name:myst``` does.
- ``R.numref("fig-x")``, ``R.ref("label")`` and ``R.doc("02_latent_pca")`` (also with
  ``"text <target>"``) are the roles ``{numref}``, ``{ref}`` and ``{doc}`` with that target:
  "Figure 3.2", the section's title, the page's title, linked, as before. In JupyterLab, which
  knows neither a code cell's figure nor another page (its ``{numref}`` reads "Cross Reference
  Not Found", its ``{doc}`` the bare name linked to a missing file), the kernel's
  :class:`hca.paper.glue.References` ``R`` gives the same text.
- ``R.md(G, "name")`` pastes glued markdown as ``text(G, "name")`` does; in JupyterLab its
  ``{numref}``, ``{ref}`` and ``{doc}`` roles are shown as ``R`` shows them.

``scripts/convert_lab_refs.py`` rewrites a notebook's roles to these forms.
"""

from __future__ import annotations

import re

from docutils.parsers.rst import roles
from myst_nb.core.variables import RetrievalError, create_warning
from myst_nb.ext.glue.roles import PasteMarkdownRole, PasteTextRole
from myst_nb.ext.glue.utils import retrieve_glue_data
from sphinx.application import Sphinx

#: ``text(G, "name:fmt")``: a glued value.
EXPRESSION = re.compile(r"""^\s*text\(\s*[A-Za-z_]\w*\s*,\s*(["'])([^"']+)\1\s*\)\s*$""")
#: ``R.numref("fig-x")``, ``R.ref("label")``, ``R.doc("name")``: a cross-reference.
REFERENCE = re.compile(r"""^\s*[A-Za-z_]\w*\.(numref|ref|doc)\(\s*(["'])((?:(?!\2).)+)\2\s*\)\s*$""")
#: ``R.md(G, "name")``: glued markdown.
MARKDOWN = re.compile(r"""^\s*[A-Za-z_]\w*\.md\(\s*[A-Za-z_]\w*\s*,\s*(["'])([^"':]+)\1\s*\)\s*$""")
FORMS = 'text(G, "name:fmt"), R.numref("fig-x"), R.ref("label"), R.doc("page") or R.md(G, "name")'


class EvalGlueText(PasteTextRole):
    """``{eval}`text(G, "name:fmt")``` as ``{glue:text}`name:fmt```, ``{eval}`R.numref("x")```
    as ``{numref}`x``` (and ``ref``, ``doc``), ``{eval}`R.md(G, "name")``` as the glued MyST."""

    def run(self):
        ref = REFERENCE.match(self.text)
        if ref is not None:
            return self._role(ref.group(1), ref.group(3))
        m = EXPRESSION.match(self.text) or MARKDOWN.match(self.text)
        if m is None:
            return [], [create_warning(
                f"{{eval}} expression {self.text!r} is not of a form the book knows ({FORMS})",
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

    def _role(self, name: str, target: str):
        """The nodes the role ``{name}`target``` gives here (Sphinx's own ``numref``, ``ref``
        or ``doc``: numbered, titled and linked as that role is)."""
        role, messages = roles.role(name, None, self.line, self.inliner.reporter)
        if role is None:
            return [], messages
        nodes_, more = role(name, f"{{{name}}}`{target}`", target, self.line, self.inliner,
                            {}, [])
        return nodes_, messages + more


def setup(app: Sphinx) -> None:
    app.add_role("eval", EvalGlueText(), override=True)
