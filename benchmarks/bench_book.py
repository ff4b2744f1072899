"""Wall time of ``make test``, of ``make book`` after it, of a clean ``make book``, per notebook.

Run from the repository root: ``python benchmarks/bench_book.py --test-first`` (``make bench``
runs it too). It removes ``_build/`` (the executed notebooks and the results store), times
``make test`` (the order of CI: it computes every chapter's results and stores them as plain
data), then ``make book`` (which reads them), then, with ``--clean-book``, ``make book`` again
from a removed ``_build/``. It prints the execution time of every notebook as jupyter-cache
recorded it and the figures against the budgets of issue 33: ``make test`` <= 150 s, ``make
book`` after it <= 90 s, a clean ``make book`` <= 120 s. ``--repeat N`` repeats the whole
measurement and prints min / median / max. Without ``--test-first`` the book is built first
and the tests after it. It is a measurement, not a test: it exits 0 either way unless a
command fails.
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
BUDGETS = {"test": 150.0, "book": 90.0, "clean book": 120.0}


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


def report(name: str, seconds: list[float]) -> None:
    budget = BUDGETS[name]
    verdict = "met" if max(seconds) <= budget else "NOT met"
    spread = sorted(seconds)
    figures = (
        f"{spread[0]:7.1f} s"
        if len(spread) == 1
        else f"min {spread[0]:.1f} / median {spread[len(spread) // 2]:.1f} / max {spread[-1]:.1f} s"
    )
    print(f"make {name:<10} {figures}   budget {budget:.0f} s: {verdict}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--test-first", action="store_true", help="time make test first (CI order)")
    ap.add_argument("--clean-book", action="store_true", help="also time a clean make book")
    ap.add_argument("--repeat", type=int, default=1, help="repeat the measurement N times")
    args = ap.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, load average {load:.2f} at start")
    order = ["test", "book"] if args.test_first else ["book", "test"]
    times: dict[str, list[float]] = {}
    for _ in range(max(1, args.repeat)):
        shutil.rmtree(REPO / "_build", ignore_errors=True)
        for target in order:
            times.setdefault(target, []).append(timed(target))
        nb = notebook_times()  # of the book built after (or before) the tests
        if args.clean_book:
            shutil.rmtree(REPO / "_build", ignore_errors=True)
            times.setdefault("clean book", []).append(timed("book"))
    for name, seconds in times.items():
        report(name, seconds)
    total = sum(nb.values())
    print(f"notebook execution (the last make book after make test, two at a time): "
          f"{total:.1f} s in all")
    for name, secs in nb.items():
        print(f"  {name:<28} {secs:6.1f} s  {secs / total:5.1%}")


if __name__ == "__main__":
    main()
