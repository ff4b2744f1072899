"""Wall time of a full book build from a clean cache, of ``make test``, and per notebook.

Run from the repository root: ``python benchmarks/bench_book.py`` (``make bench`` runs it
too). It removes ``_build/`` (the executed notebooks and the chapters' results cache), times
``make book``, prints the execution time of every notebook as jupyter-cache recorded it (the
scorecard page and the intro only read the chapters' results, so they should take a small
share), then times ``make test`` (which reuses the results the book computed) and prints the
figures against the budgets of issue 17: ``make book`` <= 150 s, ``make test`` <= 300 s, the
scorecard page < 10 % of the notebooks' execution time. It is a measurement, not a test: it
exits 0 either way unless a command fails. ``--test-first`` times ``make test`` from a clean
``_build/`` first (the order of CI), then ``make book``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUDGETS = {"book": 150.0, "test": 300.0}
SCORECARD_SHARE = 0.10


def timed(target: str) -> float:
    """Run ``make <target>`` quietly and return its wall time in seconds."""
    start = time.perf_counter()
    proc = subprocess.run(["make", target], cwd=REPO, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"make {target} failed (exit {proc.returncode})")
    return elapsed


def notebook_times() -> dict[str, float]:
    """Execution seconds per notebook recorded by jupyter-cache in the last ``make book``."""
    from jupyter_cache import get_cache

    cache = get_cache(REPO / "_build" / ".jupyter_cache")
    out = {}
    for rec in cache.list_cache_records():
        out[Path(rec.uri).name] = float(rec.data.get("execution_seconds", float("nan")))
    return dict(sorted(out.items()))


def report(name: str, seconds: float) -> None:
    budget = BUDGETS[name]
    verdict = "met" if seconds <= budget else "NOT met"
    print(f"make {name:<5} {seconds:7.1f} s   budget {budget:.0f} s: {verdict}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--test-first", action="store_true", help="time make test first (CI order)")
    args = ap.parse_args()
    shutil.rmtree(REPO / "_build", ignore_errors=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, load average {load:.2f} at start")
    order = ["test", "book"] if args.test_first else ["book", "test"]
    times = {target: timed(target) for target in order}
    for target in order:
        report(target, times[target])
    nb = notebook_times()
    total = sum(nb.values())
    print(f"notebook execution (make book, two at a time): {total:.1f} s in all")
    for name, secs in nb.items():
        print(f"  {name:<28} {secs:6.1f} s  {secs / total:5.1%}")
    score = nb.get("09_scorecard.md", float("nan"))
    verdict = "met" if score < SCORECARD_SHARE * total else "NOT met"
    print(f"scorecard page: {score / total:.1%} of the execution time "
          f"(budget < {SCORECARD_SHARE:.0%}): {verdict}")


if __name__ == "__main__":
    main()
