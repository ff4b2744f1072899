"""Wall time, CPU time and peak memory of the whole scorecard computed from scratch.

Run from the repository root: ``python benchmarks/bench_scorecard.py [--repeat N]``.
Each repetition runs ``python -m hca scorecard --json <tmp>`` in a fresh process with
``HCA_RESULTS_CACHE=off`` (nothing read from or written to disk: every chapter and every
ensemble is computed) and one BLAS thread, and prints its wall seconds, CPU seconds (user +
system of the process and its children) and peak resident memory, then the spread over the
repetitions and the budget of issue 33 (at most 60 s of CPU). It is a measurement, not a test:
it exits 0 whether or not the budget is met, unless the command fails.

``--where`` runs the same command once more under :mod:`cProfile` and prints where its time
goes: the exclusive time of each family of functions (LAPACK on stacked small matrices, the
search tree, the FastICA loop, soft-impute, the sigmoid fits, numpy's C reductions, pandas, the
results store, the rest). The profiler adds most to the families that make many small Python
calls, so the shares of the numerical families are lower bounds.
"""

from __future__ import annotations

import argparse
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CPU_BUDGET = 60.0


def scratch_env() -> dict[str, str]:
    """The environment of a run from scratch: results store off, one BLAS thread."""
    one = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    return {**os.environ, **one, "HCA_RESULTS_CACHE": "off", "PYTHONPATH": str(REPO)}


def one_run() -> dict[str, float]:
    """One scorecard in a fresh process: wall and CPU seconds, peak memory in MB."""
    env = scratch_env()
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


# (family, test on the profile's (file, line, function) key), first match wins
FAMILIES: list[tuple[str, Callable[[str, str], bool]]] = [
    ("LAPACK on stacked small matrices (numpy.linalg)", lambda f, fn: "numpy/linalg" in f),
    ("HCA search (hca/estimator/search*.py)", lambda f, fn: "hca/estimator/search" in f),
    ("FastICA lockstep (hca/estimator/fastica_batch.py)", lambda f, fn: "fastica_batch" in f),
    ("soft-impute and completion (hca/completion)", lambda f, fn: "hca/completion/" in f),
    ("sigmoid fits and TRF (hca/causal)", lambda f, fn: "hca/causal/" in f),
    ("numpy C reductions, einsum, sorting", lambda f, fn: f == "~" and "numpy" in fn),
    ("pandas", lambda f, fn: "/pandas/" in f),
    (
        "results store (hca/paper/cache.py, plain.py)",
        lambda f, fn: "hca/paper/cache" in f or "hca/paper/plain" in f,
    ),
    ("rest of hca", lambda f, fn: "/hca/" in f),
    ("rest (Python, scipy, scikit-learn, imports)", lambda f, fn: True),
]


def where(env: dict[str, str]) -> None:
    """Run the scorecard once under cProfile and print the exclusive time per family."""
    with tempfile.TemporaryDirectory() as tmp:
        prof = Path(tmp) / "scorecard.prof"
        cmd = [
            sys.executable,
            "-m",
            "cProfile",
            "-o",
            str(prof),
            "-m",
            "hca",
            "scorecard",
            "--json",
            str(Path(tmp) / "scorecard.json"),
        ]
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
            raise SystemExit(f"hca scorecard under cProfile failed (exit {proc.returncode})")
        stats = pstats.Stats(str(prof)).stats  # type: ignore[attr-defined]
    seconds = dict.fromkeys([name for name, _ in FAMILIES], 0.0)
    eigh_calls = 0
    for (file, _, fn), (_, ncalls, tottime, _, _) in stats.items():
        family = next(name for name, test in FAMILIES if test(file.replace("\\", "/"), fn))
        seconds[family] += tottime
        if "numpy/linalg" in file.replace("\\", "/") and fn == "eigh":
            eigh_calls += ncalls
    total = sum(seconds.values())
    print(
        f"where the time goes (exclusive time under cProfile, {total:.1f} s in all; "
        f"{eigh_calls:,} calls of numpy.linalg.eigh):"
    )
    for name, sec in sorted(seconds.items(), key=lambda kv: -kv[1]):
        print(f"  {sec:6.1f} s  {100 * sec / total:4.1f} %  {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="repetitions (default 1)")
    parser.add_argument(
        "--where", action="store_true", help="then one run under cProfile: time per family"
    )
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
    if args.where:
        where(scratch_env())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
