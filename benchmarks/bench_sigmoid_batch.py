"""Time the scaling chapter's warm refits one at a time (scipy) and batched, and check they agree.

The case is the careful setup's sigmoid panel of the scaling chapter: the official population
(``scaling_frame(..., official_only=True)``), the six outcomes, 100 cluster resamples of whole
base models drawn as :func:`hca.causal.fit_sigmoid_panel` draws them (600 refits of 4 to 5
parameters on resamples of many lengths). Every refit is computed by
:func:`hca.causal.sigmoid.warm_refit_counted` (``scipy.optimize.least_squares``, one call per
refit) and by :func:`hca.causal.sigmoid.warm_refit_batch` (one call); the script asserts the
values are bitwise equal and the evaluation counts the same, then prints the CPU time of each.

Run from the repository root with one BLAS thread and the pinned data:
``OPENBLAS_NUM_THREADS=1 HCA_DATA_DIR=... python benchmarks/bench_sigmoid_batch.py``.
It is a measurement, not a test: it exits 1 only if the two disagree.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from hca.causal import fit_sigmoid_law, scaling_frame
from hca.causal.bootstrap import resampler
from hca.causal.sigmoid import warm_refit_batch, warm_refit_counted
from hca.paper.replication import v2_frame
from hca.paper.scaling import BENCH, SCALING_OVERRIDES


def main() -> int:
    off = scaling_frame(v2_frame("careful"), official_only=True, overrides=SCALING_OVERRIDES)
    x = off["log_c"].to_numpy(dtype=float)
    t = off["T"].to_numpy().astype(int)
    g = off["base_model"].factorize(sort=True)[0]
    draw = resampler(t, g)
    idx = [draw(np.random.default_rng([0, 0, r])) for r in range(100)]
    idx = [i for i in idx if len(np.unique(t[i])) == 2]
    xs, ts, ys, starts = [], [], [], []
    for b in BENCH:
        y = off[b].to_numpy(dtype=float)
        start = fit_sigmoid_law(x, t, y).params
        for i in idx:
            xs.append(x[i])
            ts.append(t[i])
            ys.append(y[i])
            starts.append(start)
    print(f"{len(xs)} warm refits, {len({len(a) for a in xs})} distinct resample lengths")

    t0 = time.process_time()
    ref = [warm_refit_counted(a, b, c, s, True) for a, b, c, s in zip(xs, ts, ys, starts)]
    t1 = time.process_time()
    batch = warm_refit_batch(xs, ts, ys, starts, True)
    t2 = time.process_time()

    values = np.array([r[0] for r in ref])
    counts = np.array([r[1:] for r in ref])
    same = np.array_equal(values, batch.values) and np.array_equal(
        counts, np.column_stack([batch.nfev, batch.njev])
    )
    print(f"scipy, one call per refit: {t1 - t0:6.2f} s CPU")
    print(f"warm_refit_batch:          {t2 - t1:6.2f} s CPU  ({(t1 - t0) / (t2 - t1):.1f}x)")
    print(f"max |difference| {np.abs(values - batch.values).max():.3g}; equal counts: {same}")
    print(batch.summary())
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
