"""Numbered references without unpickling the target page once per reference.

Sphinx 7's standard domain resolves every ``{numref}`` by loading the whole doctree of the
page the target lives on (``env.get_doctree``, which unpickles it afresh on every call) to
read the target node's type and number. The book's pages carry their figures inline (SVG),
so a doctree is several megabytes, and its ~450 numbered references took about half of the
Sphinx build (31 of 61 s). This domain, the standard one otherwise, keeps one copy of each
target page's doctree for that lookup during a build (the node is only read, never changed)
and drops them when the build ends.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.domains.std import StandardDomain

_DOCTREES: dict[str, Any] = {}


class _DoctreeMemo:
    """The build environment, with ``get_doctree`` answered from :data:`_DOCTREES`."""

    def __init__(self, env: Any):
        self._env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def get_doctree(self, docname: str) -> Any:
        if docname not in _DOCTREES:
            _DOCTREES[docname] = self._env.get_doctree(docname)
        return _DOCTREES[docname]


class NumrefStandardDomain(StandardDomain):
    """The standard domain, reading numbered references' targets from one doctree per page."""

    def _resolve_numref_xref(self, env, fromdocname, builder, typ, target, node, contnode):
        return super()._resolve_numref_xref(
            _DoctreeMemo(env), fromdocname, builder, typ, target, node, contnode
        )


def _forget(*_: Any) -> None:
    _DOCTREES.clear()


def setup(app: Sphinx) -> None:
    app.add_domain(NumrefStandardDomain, override=True)
    app.connect("builder-inited", _forget)
    app.connect("build-finished", _forget)
