"""Sphinx extension of the hca book (loaded through ``_config.yml``'s ``local_extensions``).

- :mod:`.figures`: every figure gets "Download: SVG · PDF · Link to this figure" under its
  caption; the SVG is converted to PDF at build time (cairosvg).
- :mod:`.cite`: the ``{hca-citation}`` directive of the "How to cite" page (version and git
  commit computed at build time) and the completed ``CITATION.cff`` served with the book.
- :mod:`.tables`: every captioned table gets an anchor, so the book numbers it ("Table 3.1").
- :mod:`.downloads`: the scorecard (JSON, CSV), the paper's values and every chapter as a
  notebook (``.ipynb``) in the built book, and each figure's data (CSV) beside its SVG/PDF.
- :mod:`.redirects`: the chapters' old URLs (before the files were named by chapter number)
  forward to the new pages.
- :mod:`.assets`: fixes duplicated inline ``<script>`` tags (``const THEBE_JS_URL`` declared
  twice made every page log a SyntaxError).
- :mod:`.inline`: ``{eval}`text(G, "name:fmt")``` pastes a glued value (JupyterLab renders
  the same expression through jupyterlab-myst).
- :mod:`.numref`: numbered references read each target page's doctree once per build, not
  once per reference (half of the Sphinx build went to unpickling them).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

from . import assets, cite, downloads, figures, inline, numref, redirects, tables


def setup(app: Sphinx) -> dict[str, Any]:
    assets.setup(app)
    cite.setup(app)
    figures.setup(app)
    tables.setup(app)
    downloads.setup(app)
    redirects.setup(app)
    numref.setup(app)
    inline.setup(app)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": False}
