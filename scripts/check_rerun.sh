#!/usr/bin/env bash
# The README's "Rerunning one notebook", checked as a reader runs it (.ci/run calls this after
# `make book`): `make run-notebook NB=...` executes one chapter into build/run/<name>.ipynb
# with no error output, `.venv/bin/jupyter lab` starts and serves that chapter's MyST file
# as a notebook (jupytext's JupyterLab extension), and, for a chapter whose prose quotes its
# numbers as inline expressions ({eval}`text(G, "name:fmt")`), JupyterLab opened in headless
# Chromium and run (Run > Run All Cells) shows a glued number in the prose, as the book does
# (jupyterlab-myst; scripts/check_lab_numbers.py).
#   scripts/check_rerun.sh [notebooks/01_data.md]
set -euo pipefail
# JupyterLab's kernel starts in notebooks/: a relative HCA_DATA_DIR would name another folder
if [ -n "${HCA_DATA_DIR:-}" ] && [ -d "$HCA_DATA_DIR" ]; then
  export HCA_DATA_DIR="$(cd "$HCA_DATA_DIR" && pwd)"
fi
cd "$(dirname "$0")/.."
nb="${1:-notebooks/01_data.md}"
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
echo "make run-notebook took $(( $(date +%s) - start )) s"

# JupyterLab, as the README starts it (root needs --allow-root; CI runs as root).
port=$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log="$(mktemp "${TMPDIR:-/tmp}/hca_lab.XXXXXX")"
root=()
[ "$(id -u)" = 0 ] && root=(--allow-root)
.venv/bin/jupyter lab --no-browser "${root[@]}" --ip=127.0.0.1 --port="$port" \
  --ServerApp.token=check >"$log" 2>&1 &
lab=$!
trap 'kill "$lab" 2>/dev/null || true; rm -f "$log"' EXIT
url="http://127.0.0.1:$port"
for _ in $(seq 60); do
  curl -fs -o /dev/null "$url/lab?token=check" && break
  sleep 1
done
curl -fs -o /dev/null "$url/lab?token=check" || { cat "$log"; echo "jupyter lab did not start"; exit 1; }
curl -fs "$url/api/contents/$nb?token=check&type=notebook&content=1" | .venv/bin/python -c '
import json, sys
d = json.load(sys.stdin)
cells = d["content"]["cells"]
assert d["type"] == "notebook" and any(c["cell_type"] == "code" for c in cells), d["type"]
print("jupyter lab: serves", d["path"], "as a notebook of", len(cells), "cells")'

# The numbers in the prose, as JupyterLab shows them after a run (Chromium from
# scripts/install_browser.sh).
if grep -q '{eval}`text(' "$nb"; then
  bash scripts/install_browser.sh  # Chromium, as `make browser-test` installs it (a no-op when present)
  .venv/bin/python scripts/check_lab_numbers.py "$url" check "$out"
else
  echo "jupyter lab: $nb quotes no inline expression ({eval}); prose numbers not checked"
fi
