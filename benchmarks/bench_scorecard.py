"""Wall time, CPU time and peak memory of the whole scorecard computed from scratch.

Run from the repository root: ``python benchmarks/bench_scorecard.py [--repeat N]``.
Each repetition runs ``python -m hca scorecard --json <tmp>`` in a fresh process with
``HCA_RESULTS_CACHE=off`` (nothing read from or written to disk: every chapter and every
ensemble is computed) and one BLAS thread, and prints its wall seconds, CPU seconds (user +
system of the process and its children) and peak resident memory, then the spread over the
repetitions and the budget of issue 33 (at most 60 s of CPU). The time per chapter is what the
command prints. It is a measurement, not a test: it exits 0 whether or not the budget is met,
unless the command fails.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CPU_BUDGET = 60.0


def one_run() -> dict[str, float]:
    """One scorecard in a fresh process: wall and CPU seconds, peak memory in MB."""
    env = {
        **os.environ,
        "HCA_RESULTS_CACHE": "off",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONPATH": str(REPO),
    }
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "scorecard.json"
        cmd = [sys.executable, "-m", "hca", "scorecard", "--json", str(out)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
            raise SystemExit(f"hca scorecard failed (exit {proc.returncode})")
        if not out.is_file():
            raise SystemExit("hca scorecard wrote no JSON")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss of the children: the largest child so far, in kB on Linux (bytes on macOS)
    scale = 1 / 1024 if sys.platform != "darwin" else 1 / 1024**2
    return {"wall": wall, "cpu": cpu, "peak_mb": after.ru_maxrss * scale}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="repetitions (default 1)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    runs = []
    for i in range(args.repeat):
        r = one_run()
        runs.append(r)
        print(
            f"run {i + 1}: wall {r['wall']:.1f} s, CPU {r['cpu']:.1f} s, "
            f"peak memory {r['peak_mb']:.0f} MB",
            flush=True,
        )
    cpu = sorted(r["cpu"] for r in runs)
    wall = sorted(r["wall"] for r in runs)
    print(
        f"scorecard from scratch (the book's settings, cache off, one "
        f"process), {len(runs)} run(s): CPU {cpu[0]:.1f}-{cpu[-1]:.1f} s (budget "
        f"{CPU_BUDGET:.0f} s: {'met' if cpu[-1] <= CPU_BUDGET else 'NOT met'}), wall "
        f"{wall[0]:.1f}-{wall[-1]:.1f} s, peak memory {max(r['peak_mb'] for r in runs):.0f} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
