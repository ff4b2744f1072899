"""Chapter files named by their chapter number: the renaming, and the references to the old names.

The book's chapters were once files whose number was one less than the chapter's (chapter 3
was ``notebooks/02_hca_recovery.md``). This script moves every such file to its chapter's
number and rewrites every reference to an old name in the tracked text files (links, the
table of contents, the Makefile, tests, documentation). It is idempotent: run it again after
merging a branch that still uses an old name. The built book keeps the old URLs working
(``book/_ext/hca_book/redirects.py``).

    python scripts/rename_chapters.py          # from the repository's root
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

#: Old file stem -> new file stem (``notebooks/<stem>.md``).
RENAMED = {
    "00_data": "01_data", "01_latent_pca": "02_latent_pca",
    "02_hca_recovery": "03_hca_recovery", "03_interpretation": "04_interpretation",
    "04_scaling_ate": "05_scaling_ate", "05_matrix_completion": "06_matrix_completion",
    "06_leaderboard_v1": "07_leaderboard_v1", "07_mmlu_subtasks": "08_mmlu_subtasks",
    "08_your_data": "11_your_data",
}
#: Abbreviated page names in examples (``make browser-test PAGE=02_hca``).
SHORT = {"PAGE=02_hca ": "PAGE=03_hca ", "-k 02_hca ": "-k 03_hca ", "PAGE=02_hca`": "PAGE=03_hca`",
         "PAGE=02_hca\n": "PAGE=03_hca\n"}
#: Files that name the old stems on purpose.
KEEP = {"scripts/rename_chapters.py", "book/_ext/hca_book/redirects.py"}
BINARY = {".csv", ".svg", ".png", ".pdf", ".bib", ".ipynb", ".joblib"}
_OLD = re.compile(r"(?<![\w])(" + "|".join(map(re.escape, RENAMED)) + r")(?![\w])")


def main(root: Path = Path(".")) -> None:
    git = ["git", "-C", str(root)]
    for old, new in RENAMED.items():
        if (root / "notebooks" / f"{old}.md").exists():
            subprocess.run([*git, "mv", f"notebooks/{old}.md", f"notebooks/{new}.md"], check=True)
            print(f"moved notebooks/{old}.md -> notebooks/{new}.md")
    files = subprocess.run([*git, "ls-files"], capture_output=True, text=True,
                           check=True).stdout.split()
    for name in files:
        path = root / name
        if name in KEEP or path.suffix in BINARY or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = _OLD.sub(lambda m: RENAMED[m.group(1)], text)
        for a, b in SHORT.items():
            new = new.replace(a, b)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {name}")


if __name__ == "__main__":
    main()
