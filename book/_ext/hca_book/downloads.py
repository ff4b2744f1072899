"""Downloads served with the book, under ``_data/`` of the built site.

- ``_data/scorecard.json`` and ``_data/scorecard.csv``: the scorecard
  (:func:`hca.paper.scorecard.build_scorecard`; the results are read from the results cache
  the executed notebooks filled, so this costs seconds), and ``_data/paper_values.csv``, the
  paper's side; written when a page links them (the intro and the scorecard page do; a
  one-chapter build of ``scripts/check_notebook.sh`` does not).
- ``_data/notebooks/<chapter>.ipynb``: every notebook page of the book as a Jupyter notebook
  (jupytext, without outputs: run it to get them), linked under the page's title.

The role ``{hca-download}`scorecard.json``` links one of these files from a page (a link that
works from any folder depth). Every such link, the chapter's notebook link and every figure's
"Download: SVG · PDF · Data (CSV)" link (:mod:`.figures`) carries the ``download`` attribute
(named after the file, e.g. ``fig-pca-leaderboard-spectrum.svg``), so that a browser saves the
file instead of opening it in the tab. Files are written atomically; a failure is a build
warning (an error with ``--warningiserror``).

A chapter's "Download this chapter: notebook (.ipynb) · scorecard (CSV)" line closes its page
(after the last section): what stands between a chapter's title and its answer is only what
the chapter itself puts there. (Under the title, it took three lines of a 390 px phone screen
above every chapter's opening paragraph.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.osutil import relative_uri

logger = logging.getLogger(__name__)

DATA_DIR = "_data"
FILES = ("scorecard.json", "scorecard.csv", "paper_values.csv")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write_scorecard(app: Sphinx, exc: Exception | None) -> None:
    if exc is not None or getattr(app.builder, "format", "") != "html":
        return
    if not getattr(app, "_hca_download_used", False):  # no page links them (one-page builds)
        return
    from hca.data import load_paper_values
    from hca.paper.scorecard import build_scorecard, scorecard_csv

    out = Path(app.outdir) / DATA_DIR
    try:
        card = build_scorecard()
    except Exception as err:  # noqa: BLE001 - reported as a build warning
        logger.warning(f"hca_book: could not build the scorecard for its downloads: {err}")
        return
    _write(out / "scorecard.json",
           json.dumps(card.records(), indent=1, ensure_ascii=False) + "\n")
    _write(out / "scorecard.csv", scorecard_csv(card))
    _write(out / "paper_values.csv", load_paper_values().to_csv(index=False))


def write_notebooks(app: Sphinx, exc: Exception | None) -> None:
    if exc is not None or getattr(app.builder, "format", "") != "html":
        return
    import jupytext

    for docname in _notebook_docs(app):
        source = Path(app.srcdir) / f"{docname}.md"
        nb = jupytext.read(source)
        target = Path(app.outdir) / DATA_DIR / "notebooks" / f"{Path(docname).name}.ipynb"
        _write(target, jupytext.writes(nb, fmt="ipynb"))


def _notebook_docs(app: Sphinx) -> list[str]:
    return sorted(d for d in app.env.found_docs
                  if d.startswith("notebooks/") and (Path(app.srcdir) / f"{d}.md").is_file())


def _link(docname: str, target: str, text: str, builder) -> nodes.reference:
    uri = relative_uri(builder.get_target_uri(docname), target)
    return nodes.reference("", text, refuri=uri, internal=False, classes=["hca-download"])


def download_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{hca-download}`scorecard.json``` or ``{hca-download}`the JSON <scorecard.json>```."""
    label, _, target = text.partition("<")
    target = target.rstrip(">").strip() or label.strip()
    label = label.strip() if target != label.strip() else target
    if target not in FILES and not target.startswith("notebooks/"):
        msg = inliner.reporter.error(f"hca-download: unknown file {target!r} (known: {FILES})",
                                     line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    node = nodes.reference(rawtext, label, refuri=f"{DATA_DIR}/{target}", internal=False,
                           classes=["hca-download"])
    node["hca_download"] = True
    return [node], []


def resolve_links(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Make ``{hca-download}`` links relative to the page, and put the chapter's notebook
    download at the end of every notebook page."""
    if getattr(app.builder, "format", "") != "html":
        return
    page = app.builder.get_target_uri(docname)
    for ref in doctree.findall(nodes.reference):
        if ref.get("hca_download"):
            ref["refuri"] = relative_uri(page, ref["refuri"])
            app._hca_download_used = True
    if docname not in _notebook_docs(app):
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        return
    name = Path(docname).name
    para = nodes.paragraph(classes=["hca-chapter-downloads"])
    para += nodes.Text("Download this chapter: ")
    para += _link(docname, f"{DATA_DIR}/notebooks/{name}.ipynb", "notebook (.ipynb)", app.builder)
    para += nodes.Text(" · ")
    para += _link(docname, f"{DATA_DIR}/scorecard.csv", "scorecard (CSV)", app.builder)
    para += nodes.Text(". To run it, see the README's \u201cRerunning one notebook\u201d.")
    section += para


_DOWNLOAD_LINK = re.compile(r'<a\b(?=[^>]*\bclass="[^"]*\b(?:hca|figure)-download\b)'
                            r'([^>]*?)\bhref="([^"]+)"([^>]*)>')


def add_download_attribute(app: Sphinx, pagename: str, templatename: str, context: dict,
                           doctree) -> None:
    """``download="<file name>"`` on every ``hca-download`` and ``figure-download`` link of the
    page."""
    body = context.get("body")
    if not body or "-download" not in body:
        return

    def fix(m: re.Match) -> str:
        if re.search(r"\bdownload\b=", m.group(0)):
            return m.group(0)
        name = Path(m.group(2).split("#")[0].split("?")[0]).name
        return f'<a{m.group(1)}download="{name}" href="{m.group(2)}"{m.group(3)}>'

    context["body"] = _DOWNLOAD_LINK.sub(fix, body)


def setup(app: Sphinx) -> None:
    app.add_role("hca-download", download_role)
    app.connect("html-page-context", add_download_attribute)
    app.connect("doctree-resolved", resolve_links)
    app.connect("build-finished", write_scorecard)
    app.connect("build-finished", write_notebooks)
