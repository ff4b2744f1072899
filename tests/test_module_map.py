"""The module map in hca/__init__.py names every module of the package, and only those."""

from __future__ import annotations

import re
from pathlib import Path

import hca

PACKAGE = Path(hca.__file__).resolve().parent


def _mapped() -> set[str]:
    """Dotted module names of the map's lines: ``pkg/`` at column 0 opens a subpackage whose
    modules follow indented by two spaces; a plain name at column 0 is a top-level module."""
    doc = hca.__doc__ or ""
    layout = doc[doc.index("Layout"):]
    out, package = set(), None
    for line in layout.splitlines()[2:]:
        top = re.match(r"^([a-z_0-9]+)(/)?\s", line + " ")
        sub = re.match(r"^  ([a-z_0-9]+)\s", line)
        if top:
            package = top.group(1) if top.group(2) else None
            if not top.group(2):
                out.add(top.group(1))
        elif sub and package:
            out.add(f"{package}.{sub.group(1)}")
    return out


def _tree() -> set[str]:
    out = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).with_suffix("")
        if rel.name == "__init__":
            continue
        out.add(".".join(rel.parts))
    return out


def test_module_map_matches_the_tree():
    mapped, tree = _mapped(), _tree()
    assert mapped == tree, (f"in the map, not in the tree: {sorted(mapped - tree)}; "
                            f"in the tree, not in the map: {sorted(tree - mapped)}")
