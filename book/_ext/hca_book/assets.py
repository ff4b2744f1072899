"""Remove duplicated inline scripts from every page.

sphinx-thebe and sphinx-togglebutton add inline scripts (``body=...``) with
``app.add_js_file(None, body=...)`` after the HTML builder was initialised. Sphinx 7.4 then
holds each of them twice: once as given to the builder (file name ``None``) and once re-added
from the registry in ``prepare_writing`` (file name ``''``), which its de-duplication does not
recognise as equal. A repeated ``const THEBE_JS_URL = ...`` is a SyntaxError in the browser
(the repeated ``var togglebuttonSelector`` is merely redundant). Jupyter Book loads sphinx-thebe
whatever ``launch_buttons: thebe`` says, so the fix is here: keep the first of identical scripts.

It also serves the interactive tables' script offline: itables' DataTables bundle, copied from
the installed package to ``_static/itables`` and loaded only by pages that hold such a table.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx


def _script_key(script: Any) -> tuple:
    filename = getattr(script, "filename", script) or ""
    attributes = getattr(script, "attributes", {}) or {}
    return (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))


def dedupe_scripts(app: Sphinx, pagename: str, templatename: str, context: dict,
                   doctree: Any) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple] = set()
    kept = []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    context["script_files"] = kept




# ------------------------------------------------------------------ interactive tables (itables)
ITABLES_DIR = "_static/itables"


def _itables_files() -> tuple[Path, Path, str] | None:
    """The installed itables bundle (JS, CSS) and its version, or None without itables."""
    try:
        import itables
    except ImportError:
        return None
    html = Path(itables.__file__).parent / "html"
    return html / "dt_bundle.js", html / "dt_bundle.css", itables.__version__


def add_itables_loader(app: Sphinx, pagename: str, templatename: str, context: dict,
                       doctree: Any) -> None:
    """On a page with an itables table (``to_html_datatable(..., connected=False)``), load the
    vendored DataTables bundle from ``_static/itables`` (no network): the tables wait for the
    promise ``window._itables_<version>`` and the ``itables-<version>-ready`` event."""
    body = context.get("body", "")
    files = _itables_files()
    if files is None or "window._itables_" not in body:
        return
    version = files[2]
    key = "_itables_" + version.replace(".", "_")
    js = context["pathto"](f"{ITABLES_DIR}/dt_bundle.js", 1)
    css = context["pathto"](f"{ITABLES_DIR}/dt_bundle.css", 1)
    loader = (f'<link rel="stylesheet" href="{css}">\n<script>\n'
              f"if (!window.{key}) {{\n"
              f'  window.{key} = import(new URL("{js}", document.baseURI).href);\n'
              f'  window.{key}.then(() => window.dispatchEvent(new Event("itables-{version}-ready")));\n'
              "}\n</script>\n")
    context["body"] = loader + body


def copy_itables(app: Sphinx, exc: Exception | None) -> None:
    files = _itables_files()
    if exc is not None or files is None or getattr(app.builder, "format", "") != "html":
        return
    target = Path(app.outdir) / ITABLES_DIR
    target.mkdir(parents=True, exist_ok=True)
    for f in files[:2]:
        shutil.copyfile(f, target / f.name)


def setup(app: Sphinx) -> None:
    app.connect("html-page-context", dedupe_scripts)
    app.connect("html-page-context", add_itables_loader)
    app.connect("build-finished", copy_itables)
