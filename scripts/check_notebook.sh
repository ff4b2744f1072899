#!/usr/bin/env bash
# Check one MyST notebook the way CI does, without touching the shared _build/:
#   1. nbval (jupytext -> ipynb -> pytest --nbval-lax), 2. a Sphinx build with warnings as
#   errors of a private book holding the intro, this notebook and the references page.
# Usage: scripts/check_notebook.sh notebooks/02_latent_pca.md
set -euo pipefail
nb="$1"
repo="$(cd "$(dirname "$0")/.." && pwd)"
name="$(basename "$nb" .md)"
work="$(mktemp -d "/tmp/check_${name}.XXXX")"
bin="$repo/.venv/bin"
eval "$(make -s -C "$repo" print-env)"  # the Makefile's thread counts (no kernel pins)
"$bin/jupytext" --quiet --to ipynb --output "$work/$name.ipynb" "$repo/$nb"
(cd "$work" && "$bin/python" -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider -q "$name.ipynb")
mkdir -p "$work/book/notebooks" "$work/book/book"
cp "$repo/_config.yml" "$repo/CITATION.cff" "$work/book/"
cp -r "$repo"/book/* "$work/book/book/"   # pages, static files and the book's Sphinx extension
# the intro reads every chapter's results and links their figures: a stub in a one-page build
printf '# Introduction\n\nA stub of the intro for a one-chapter build.\n' > "$work/book/book/intro.md"
for stub in 01_data 02_latent_pca 03_hca_recovery 04_interpretation 05_scaling_ate \
            06_matrix_completion 07_leaderboard_v1 08_mmlu_subtasks 11_your_data; do
  printf '# %s\n' "$stub" > "$work/book/notebooks/$stub.md"
done
# keep {doc}, {ref} and {numref} links to other chapters resolvable: a stub per chapter with its
# title, its section labels and a placeholder figure per figure anchor (the scorecard page
# links every chapter's figures)
for other in "$repo"/notebooks/*.md; do
  [ "$other" = "$repo/$nb" ] && continue
  "$bin/python" - "$other" "$work/book/notebooks/$(basename "$other")" <<'PY'
import re
import sys

src = open(sys.argv[1], encoding="utf-8").read()
out = [next((l for l in src.splitlines() if l.startswith("# ")), "# chapter"), ""]
for label in re.findall(r"^\(([\w-]+)\)=$", src, re.M):
    out += [f"({label})=", f"## {label}", ""]
for name in re.findall(r"^ *name: (fig-[\w-]+)", src, re.M):
    out += ["```{figure} ../book/pipeline.svg", f":name: {name}", "", f"Stub of {name}.", "```", ""]
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(out))
PY
done
cp "$repo/$nb" "$work/book/notebooks/"
{
  echo "format: jb-book"; echo "root: book/intro"; echo "chapters:"
  for f in "$work"/book/notebooks/*.md; do echo "  - file: notebooks/$(basename "$f" .md)"; done
  echo "  - file: book/cite"
  echo "  - file: book/references"
} > "$work/book/_toc.yml"
t0=$(date +%s)
"$bin/jupyter-book" build "$work/book" --warningiserror --keep-going > "$work/build.log" 2>&1 || {
  grep -E "WARNING|ERROR|Error" "$work/build.log" | grep -v "Kernel is running over TCP" | head -30
  echo "BUILD FAILED: full log in $work/build.log"; exit 1; }
echo "OK: nbval passed and the book page built without warnings in $(( $(date +%s) - t0 )) s: $work/book/_build/html/notebooks/$name.html"
