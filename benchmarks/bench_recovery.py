"""Cost of chapter 11's recovery study (:func:`hca.stability.recovery_study`).

Run with ``python benchmarks/bench_recovery.py [--n-jobs N]``. Computes the chapter's grid
(3, 4 and 6 domains x 60, 120, 250 and 500 models per domain, 100 draws per cell: 1,200 HCA
fits) and prints its wall and CPU time, the CPU seconds per fit of every cell and the shares
with their 90 % intervals. A measurement, not a test: it exits 0 either way. Measured on the
2-core machine (2026-11-27, one core, idle): 26.5 s of CPU for the grid with the fits of a
cell as one batch (``resample_fits`` with a seed per fit), against 48.3 s for one ``HCA.fit``
per draw measured back to back (85.6 s at an earlier stop, other jobs running); the
counts are the same fit for fit.
"""

from __future__ import annotations

import argparse
import time

from hca.stability import recovery_study

GRID = {"n_domains": (3, 4, 6), "n_per_domain": (60, 120, 250, 500), "n_reps": 100}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n-jobs", type=int, default=1, help="joblib workers (default 1)")
    args = p.parse_args()
    wall, cpu = time.perf_counter(), time.process_time()
    per_cell = []
    for K in GRID["n_domains"]:
        for n in GRID["n_per_domain"]:
            c0 = time.process_time()
            t = recovery_study((K,), (n,), n_reps=GRID["n_reps"], n_jobs=args.n_jobs)
            row = t.iloc[0]
            per_cell.append(
                f"  {K} domains x {n:>3} models: {row['recovered']:>3} of {row['n_reps']} "
                f"(90 % interval {row['ci90_low']:.0%}-{row['ci90_high']:.0%}), "
                f"{(time.process_time() - c0) / GRID['n_reps']:.3f} CPU s per fit"
            )
    print("\n".join(per_cell))
    print(
        f"recovery study, {len(per_cell) * GRID['n_reps']} fits: wall "
        f"{time.perf_counter() - wall:.1f} s, CPU {time.process_time() - cpu:.1f} s "
        f"(n_jobs={args.n_jobs}; with n_jobs > 1 the CPU of the workers is not counted)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
