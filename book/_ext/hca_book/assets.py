"""Remove duplicated inline scripts from every page.

sphinx-thebe and sphinx-togglebutton add inline scripts (``body=...``) with
``app.add_js_file(None, body=...)`` after the HTML builder was initialised. Sphinx 7.4 then
holds each of them twice: once as given to the builder (file name ``None``) and once re-added
from the registry in ``prepare_writing`` (file name ``''``), which its de-duplication does not
recognise as equal. A repeated ``const THEBE_JS_URL = ...`` is a SyntaxError in the browser
(the repeated ``var togglebuttonSelector`` is merely redundant). Jupyter Book loads sphinx-thebe
whatever ``launch_buttons: thebe`` says, so the fix is here: keep the first of identical scripts.
"""

from __future__ import annotations

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


def setup(app: Sphinx) -> None:
    app.connect("html-page-context", dedupe_scripts)
