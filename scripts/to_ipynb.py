"""Convert MyST notebooks to .ipynb in one process: ``python scripts/to_ipynb.py OUTDIR NB.md ...``.

``make notebooks`` runs it (one ``jupytext`` process per notebook spent most of its time
starting Python). Each notebook is written to ``OUTDIR/<name>.ipynb`` through a temporary file
in ``OUTDIR``, then moved into place.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import jupytext


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.stderr.write("usage: python scripts/to_ipynb.py OUTDIR NOTEBOOK.md [...]\n")
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name in argv[1:]:
        src = Path(name)
        if not src.is_file():
            sys.stderr.write(f"to_ipynb: no such notebook: {src}\n")
            return 2
        nb = jupytext.read(src)
        fd, tmp = tempfile.mkstemp(suffix=".ipynb", dir=out)
        os.close(fd)
        jupytext.write(nb, tmp, fmt="ipynb")
        os.replace(tmp, out / f"{src.stem}.ipynb")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
