"""Redirect pages for the chapters' old URLs (files renamed to match chapter numbers).

Until the book's chapter files were renamed, chapter 3 was ``notebooks/02_hca_recovery.html``
and so on. For every old name in :data:`RENAMED` the build writes a small page at the old URL
that forwards to the new one (a meta refresh, a canonical link and a script that keeps the
``#fragment``, so an old figure permalink still lands on its figure). A name that is a page
of the book again is left alone.
"""

from __future__ import annotations

import html
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util.osutil import relative_uri

#: Old document name -> new document name.
RENAMED: dict[str, str] = {
    "notebooks/00_data": "notebooks/01_data",
    "notebooks/01_latent_pca": "notebooks/02_latent_pca",
    "notebooks/02_hca_recovery": "notebooks/03_hca_recovery",
    "notebooks/03_interpretation": "notebooks/04_interpretation",
    "notebooks/04_scaling_ate": "notebooks/05_scaling_ate",
    "notebooks/05_matrix_completion": "notebooks/06_matrix_completion",
    "notebooks/06_leaderboard_v1": "notebooks/07_leaderboard_v1",
    "notebooks/07_mmlu_subtasks": "notebooks/08_mmlu_subtasks",
    "notebooks/08_your_data": "notebooks/11_your_data",
}

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Moved: {title}</title>
<link rel="canonical" href="{href}"><meta http-equiv="refresh" content="0; url={href}">
<script>location.replace("{href}" + location.hash);</script></head>
<body><p>This chapter moved to <a href="{href}">{title}</a>.</p></body></html>
"""


def write_redirects(app: Sphinx, exc: Exception | None) -> None:
    if exc is not None or getattr(app.builder, "format", "") != "html":
        return
    for old, new in RENAMED.items():
        if old in app.env.found_docs or new not in app.env.found_docs:
            continue
        source = app.builder.get_target_uri(old)
        href = relative_uri(source, app.builder.get_target_uri(new))
        title = app.env.titles[new].astext() if new in app.env.titles else new
        target = Path(app.outdir) / source
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_PAGE.format(href=html.escape(href), title=html.escape(title)),
                          encoding="utf-8")


def setup(app: Sphinx) -> None:
    app.connect("build-finished", write_redirects)
