"""Rewrite a MyST notebook's cross-references to forms JupyterLab shows too (issue 46).

In JupyterLab (jupyterlab-myst) a chapter's ``{numref}`fig-x``` reads "Cross Reference Not
Found" (its figures are code-cell outputs whose caption and name live in cell metadata),
``{doc}`02_latent_pca``` reads as the bare name linked to a file that does not exist, and a
``{ref}`` inside glued markdown is not found either. This script rewrites, in the notebook's
markdown (never in code cells or their metadata, e.g. captions, which Lab does not show):

- ``{numref}`fig-x``` -> ``{eval}`R.numref("fig-x")```
- ``{ref}`label```    -> ``{eval}`R.ref("label")```  (also ``{ref}`text <label>```)
- ``{doc}`name```     -> ``{eval}`R.doc("name")```   (also ``{doc}`text <name>```)
- ``{eval}`text(V, "name")```, where ``name`` is glued as markdown (``glue_markdown("name", ...)``
  or ``G.markdown("name", ...)`` in a code cell) -> ``{eval}`R.md(V, "name")```

and adds ``from hca.paper.glue import References`` and ``R = References("<page>")`` after the
imports of the first code cell (the first hidden one: a chapter's visible settings and run cells are left alone). The book renders every new form exactly as the role it replaces
(``book/_ext/hca_book/inline.py``); in JupyterLab, ``R`` (:class:`hca.paper.glue.References`)
shows "Figure 3.2", the section's and the page's titles (linked). ``{cite:p}`` is left as it is
(JupyterLab shows the key, e.g. "pearl1995causal", marked "Citation Not Found").

Running it twice changes nothing the second time.

    python scripts/convert_lab_refs.py notebooks/02_latent_pca.md [...]   # rewrite in place
    python scripts/convert_lab_refs.py --check notebooks/*.md              # exit 1 if any would change
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Pages whose figures the book numbers with a letter instead of the chapter number
#: (book/_ext/hca_book/tables.py, PREFIXED).
PREFIXED = {"book/intro": "I"}

_ROLE = re.compile(r"\{(numref|ref|doc)\}`([^`]+)`")
_CODE_CELL = re.compile(r"^```\{code-cell\}.*?^```[ \t]*$", re.M | re.S)
_MARKDOWN_GLUE = re.compile(r"""(?:glue_markdown|\.markdown)\(\s*(["'])([^"']+)\1""")
_TEXT = re.compile(r"""\{eval\}`text\(\s*([A-Za-z_]\w*)\s*,\s*(["'])([^"':]+)\2\s*\)`""")
SETUP_MARK = "R = References("


def _quoted(target: str) -> str:
    return f"'{target}'" if '"' in target else f'"{target}"'


def convert_markdown(text: str, markdown_names: set[str]) -> str:
    """The roles of one stretch of markdown in their JupyterLab forms."""
    text = _ROLE.sub(lambda m: f"{{eval}}`R.{m[1]}({_quoted(m[2])})`", text)
    return _TEXT.sub(lambda m: f'{{eval}}`R.md({m[1]}, "{m[3]}")`' if m[3] in markdown_names
                     else m[0], text)


def _setup_lines(page: str, number: str | None) -> list[str]:
    args = f'"{page}"' + (f', number="{number}"' if number else "")
    return ["from hca.paper.glue import References  # cross-references in JupyterLab: {eval}`R.numref(...)`",
            f"R = References({args})"]


def add_setup(cell: str, page: str, number: str | None) -> str:
    """``cell`` (a ```{code-cell} block) with the two setup lines after its last top-level import."""
    lines = cell.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("```{code-cell}"))
    body = lines[start + 1:-1]
    skip = 0
    if body and body[0].startswith(":tags:"):
        skip = 1
    elif body and body[0].strip() == "---":  # a YAML header
        skip = next(i for i in range(1, len(body)) if body[i].strip() == "---") + 1
    code = [("" if line.lstrip().startswith(("%", "!")) else line) for line in body[skip:]]
    tree = ast.parse("\n".join(code))
    ends = [node.end_lineno for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    at = start + 1 + skip + (max(ends) if ends else 0)
    return "\n".join(lines[:at] + _setup_lines(page, number) + lines[at:])


def convert(text: str, page: str, number: str | None = None) -> str:
    """A whole MyST notebook, converted (see the module docstring)."""
    cells = list(_CODE_CELL.finditer(text))
    markdown_names = {m[2] for c in cells for m in _MARKDOWN_GLUE.finditer(c.group(0))}
    out, pos = [], 0
    for c in cells:
        out += [convert_markdown(text[pos:c.start()], markdown_names), c.group(0)]
        pos = c.end()
    out.append(convert_markdown(text[pos:], markdown_names))
    result = "".join(out)
    uses = re.search(r"\{eval\}`R\.(?:numref|ref|doc|md)\(", "".join(out[0::2]))
    if uses and SETUP_MARK not in result:
        # the first hidden code cell (a chapter's visible settings and run cells hold only
        # what a reader may change and run), else the first code cell
        cells = list(_CODE_CELL.finditer(result))
        hidden = [c for c in cells if re.search(r"(remove|hide)-(input|cell)", c.group(0)[:200])]
        first = (hidden or cells or [None])[0]
        if first is None:
            raise ValueError(f"{page}: cross-references to convert but no code cell to define R in")
        result = result[:first.start()] + add_setup(first.group(0), page, number) + \
            result[first.end():]
    return result


def convert_file(path: Path, check: bool = False) -> bool:
    """Convert one notebook file in place (``check``: only report); True if it changed."""
    rel = path.resolve().relative_to(ROOT).with_suffix("").as_posix() \
        if path.resolve().is_relative_to(ROOT) else path.stem
    text = path.read_text(encoding="utf-8")
    new = convert(text, path.stem, PREFIXED.get(rel))
    if new != text and not check:
        path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a notebook would change")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.notebooks if not p.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    changed = [p for p in args.notebooks if convert_file(p, check=args.check)]
    for p in changed:
        print(f"{'would convert' if args.check else 'converted'}: {p}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
