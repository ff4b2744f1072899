"""Wall time of a full book build from a clean cache, and of ``make test``.

Run from the repository root: ``python benchmarks/bench_book.py`` (``make bench`` runs it
too). It removes ``_build/`` first, then times ``make book`` and ``make test`` and prints the
figures against the budget (the full book, with the paper's full repetition counts, in under
5 minutes on the project's 2-core machine). It is a measurement, not a test: it exits 0
either way unless a command fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BOOK_BUDGET_S = 300.0


def timed(target: str) -> float:
    """Run ``make <target>`` quietly and return its wall time in seconds."""
    start = time.perf_counter()
    proc = subprocess.run(["make", target], cwd=REPO, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"make {target} failed (exit {proc.returncode})")
    return elapsed


def main() -> None:
    shutil.rmtree(REPO / "_build", ignore_errors=True)
    cores = os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {cores} cores, load average {load:.2f} at start")
    book = timed("book")
    verdict = "met" if book < BOOK_BUDGET_S else "NOT met"
    print(f"make book (clean cache): {book:7.1f} s   budget {BOOK_BUDGET_S:.0f} s: {verdict}")
    test = timed("test")
    print(f"make test:               {test:7.1f} s")


if __name__ == "__main__":
    main()
