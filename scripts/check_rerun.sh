#!/usr/bin/env bash
# The README's "Rerunning one notebook", checked as a reader runs it (.ci/run calls this after
# `make book`), for each chapter given (default: chapters 1 and 2):
# - `make run-notebook NB=...` executes the chapter into build/run/<name>.ipynb with no error
#   output;
# - `.venv/bin/jupyter lab` starts and serves the chapter's MyST file as a notebook (jupytext's
#   JupyterLab extension);
# - JupyterLab opened in headless Chromium and run (Run > Run All Cells) shows the prose as the
#   book does (scripts/check_lab_numbers.py): a glued number where the book shows it, every
#   inline expression rendered ({eval}`text(G, "name:fmt")` numbers and the cross-references
#   of scripts/convert_lab_refs.py), no role JupyterLab cannot show ({glue:...}, {numref},
#   {ref}, {doc}), no "Cross Reference Not Found".
#   scripts/check_rerun.sh [notebooks/01_data.md notebooks/02_latent_pca.md ...]
set -euo pipefail
# JupyterLab's kernel starts in notebooks/: a relative HCA_DATA_DIR would name another folder
if [ -n "${HCA_DATA_DIR:-}" ] && [ -d "$HCA_DATA_DIR" ]; then
  export HCA_DATA_DIR="$(cd "$HCA_DATA_DIR" && pwd)"
fi
cd "$(dirname "$0")/.."
if [ "$#" -eq 0 ]; then
  set -- notebooks/01_data.md notebooks/02_latent_pca.md
fi
for nb in "$@"; do
  [ -f "$nb" ] || { echo "check_rerun: no such notebook: $nb"; exit 2; }
done

runs=()
for nb in "$@"; do
  name="$(basename "$nb" .md)"
  out="build/run/$name.ipynb"
  rm -f "$out"
  start=$(date +%s)
  make run-notebook NB="$nb"
  .venv/bin/python - "$out" <<'PY'
import json
import sys

nb = json.load(open(sys.argv[1], encoding="utf-8"))
cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
errors = [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
unrun = [c for c in cells if c.get("execution_count") is None]
assert cells and not errors and not unrun, (len(cells), errors[:1], len(unrun))
print(f"run-notebook: {sys.argv[1]}: {len(cells)} code cells executed, no error output")
PY
  echo "make run-notebook $nb took $(( $(date +%s) - start )) s"
  runs+=("$out")
done

# JupyterLab, as the README starts it (root needs --allow-root; CI runs as root), with settings
# and workspaces of its own: windowing off (every cell in the page, for the check of the whole
# prose) and no notebook of an earlier session reopened.
port=$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log="$(mktemp "${TMPDIR:-/tmp}/hca_lab.XXXXXX")"
lab_dirs="$(mktemp -d "${TMPDIR:-/tmp}/hca_lab_settings.XXXXXX")"
mkdir -p "$lab_dirs/settings/@jupyterlab/notebook-extension" "$lab_dirs/workspaces"
echo '{"windowingMode": "none"}' \
  > "$lab_dirs/settings/@jupyterlab/notebook-extension/tracker.jupyterlab-settings"
root=()
[ "$(id -u)" = 0 ] && root=(--allow-root)
JUPYTERLAB_SETTINGS_DIR="$lab_dirs/settings" JUPYTERLAB_WORKSPACES_DIR="$lab_dirs/workspaces" \
  .venv/bin/jupyter lab --no-browser "${root[@]}" --ip=127.0.0.1 --port="$port" \
  --ServerApp.token=check >"$log" 2>&1 &
lab=$!
trap 'kill "$lab" 2>/dev/null || true; rm -rf "$log" "$lab_dirs"' EXIT
url="http://127.0.0.1:$port"
for _ in $(seq 60); do
  curl -fs -o /dev/null "$url/lab?token=check" && break
  sleep 1
done
curl -fs -o /dev/null "$url/lab?token=check" || { cat "$log"; echo "jupyter lab did not start"; exit 1; }
for nb in "$@"; do
  curl -fs "$url/api/contents/$nb?token=check&type=notebook&content=1" | .venv/bin/python -c '
import json, sys
d = json.load(sys.stdin)
cells = d["content"]["cells"]
assert d["type"] == "notebook" and any(c["cell_type"] == "code" for c in cells), d["type"]
print("jupyter lab: serves", d["path"], "as a notebook of", len(cells), "cells")'
done

# The prose, as JupyterLab shows it after a run (Chromium from scripts/install_browser.sh).
bash scripts/install_browser.sh  # Chromium, as `make browser-test` installs it (a no-op when present)
start=$(date +%s)
.venv/bin/python scripts/check_lab_numbers.py "$url" check "${runs[@]}"
echo "JupyterLab check of ${#runs[@]} chapters took $(( $(date +%s) - start )) s"
