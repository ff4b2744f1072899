"""How many FastICA starts per run the MMLU chapter's careful setup needs, and what they cost.

Run with ``python benchmarks/bench_mmlu_restarts.py [--fits cross,physics,math] [--seeds 40]``.
For each subject fit of the chapter (:data:`hca.paper.mmlu.FITS`) it prints
:func:`hca.paper.mmlu.restart_measurement`: the FastICA optima of the base models whose single
FastICA start is rounding-sensitive, read from 400 single starts (their starts, objective median
and range, and which one the objective clearly prefers), then, for k = 1, 2, 5, 10, 15, 20, 30
and 40 starts per run (``HCA(n_restarts=k)``: run ``s`` keeps the best of the starts
``s .. s + k - 1`` by FastICA's objective), in how many of the 40 runs the better optimum is
found, how many runs stay rounding-sensitive, how many would miss it by the single starts' rate,
and the CPU seconds of the subject set's FastICA (every available base model, both row orders).
It ends with the CPU time of the whole chapter under both setups from scratch, with the book's
starts and with one start everywhere. A measurement, not a test: it exits 0 either way.
:data:`hca.paper.mmlu.CAREFUL_RESTARTS` is set from its printout (its docstring gives the
numbers of the 2-core machine).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KS = (1, 2, 5, 10, 15, 20, 30, 40)

_CHAPTER = """
import time
from hca.paper import mmlu, scorecard as sc
t = time.process_time()
sc.evaluate_chapter("mmlu", settings=mmlu.Settings(careful_restarts={restarts}))
print(round(time.process_time() - t, 1))
"""


def chapter_cpu(restarts: str) -> float:
    """CPU seconds of the MMLU chapter's claims under both setups, from scratch (results store
    off, one BLAS thread), in a fresh process."""
    env = {**os.environ, "HCA_RESULTS_CACHE": "off", "OPENBLAS_NUM_THREADS": "1"}
    code = _CHAPTER.format(restarts=restarts)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True
    )
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return float(out.stdout.split()[-1])


def main() -> int:
    from hca.paper import mmlu

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fits", default="cross,physics,math", help="subject fits to measure")
    p.add_argument("--seeds", type=int, default=40, help="runs (seeds 0 .. n-1; default 40)")
    p.add_argument("--no-chapter", action="store_true", help="skip the chapter's CPU time")
    args = p.parse_args()
    for fit in args.fits.split(","):
        t = time.perf_counter()
        m = mmlu.restart_measurement(fit, KS, n_seeds=args.seeds)
        print(m.summary())
        need = m.needed(args.seeds - args.seeds // 20)
        if m.rate is not None:
            print(
                f"  single starts in the better optimum: {m.rate:.3f}; found in at least "
                f"{args.seeds - args.seeds // 20} of {args.seeds} runs from k = {need} on"
            )
        print(f"  ({time.perf_counter() - t:.0f} s wall)\n")
    if not args.no_chapter:
        book = chapter_cpu(repr(mmlu.CAREFUL_RESTARTS))
        one = chapter_cpu("()")
        print(
            f"MMLU chapter under both setups from scratch: {book:.1f} s of CPU with the book's "
            f"starts {mmlu.CAREFUL_RESTARTS}, {one:.1f} s with one start everywhere"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
