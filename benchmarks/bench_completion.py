"""Time the Appendix G matrix-completion experiments (Figures 15-16).

Two parts.

1. **Synthetic stand-in** (no data needed). It mimics the v2 leaderboard: 3,900 models x 6
   benchmarks, approximately rank 3 plus noise, on a 0-100-like scale, with one domain of 300
   models whose principal subspace and mean differ from the rest. Timed: (a) missing at
   random, p = 0.8 in the domain, 1,000 repetitions, soft-impute, global vs local; (b) block
   missing, 2 and then 3 observed columns, p = 0.1, ..., 0.9, 100 repetitions each, SMC;
   (c) block missing, all 20 choices of 3 observed columns, p = 0.5, 100 repetitions each, SMC.
2. **The book chapter's computations on the real data** (``notebooks/06_matrix_completion.md``):
   :func:`hca.paper.completion.run` under both setups with the full settings, as the notebook
   calls it (without the results cache). Needs the pinned data (``HCA_DATA_DIR``); skipped
   with a message if unavailable.

The budget is 60 s of wall time per part on the 2-core project machine. CPU time is printed as
well: wall time grows when other processes share the machine.

Run: ``python benchmarks/bench_completion.py`` (``--real-only`` / ``--synthetic-only``).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from hca.completion import global_vs_local, observed_column_sets

BUDGET_S = 60.0
N_ROWS, N_COLS, N_DOMAIN = 3900, 6, 300


def stand_in(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A 3,900 x 6 rank-3-plus-noise matrix whose last 300 rows use another subspace."""
    rng = np.random.default_rng(seed)
    V = np.linalg.qr(rng.normal(size=(N_COLS, 3)))[0]
    Vd = np.linalg.qr(V + 0.4 * rng.normal(size=(N_COLS, 3)))[0]  # tilted subspace
    sd = np.array([12.0, 6.0, 3.0])
    n_out = N_ROWS - N_DOMAIN
    X = np.vstack([rng.normal(size=(n_out, 3)) * sd @ V.T + 30.0,
                   rng.normal(size=(N_DOMAIN, 3)) * sd @ Vd.T + 35.0])
    X += 1.5 * rng.normal(size=X.shape)
    local = np.zeros(N_ROWS, dtype=bool)
    local[n_out:] = True
    return X, local


def timed(label: str, fn) -> tuple[float, float, pd.DataFrame]:
    """Run ``fn`` and print its wall and CPU time and the mean RMSE per approach."""
    w0, c0 = time.perf_counter(), time.process_time()
    df = fn()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    means = df.groupby("approach").rmse.mean()
    print(f"{label:<58s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
          f"RMSE global {means['global']:.3f}  local {means['local']:.3f}")
    return wall, cpu, df


def synthetic() -> None:
    """The synthetic stand-in: (a), (b) and (c) of the module docstring."""
    X, local = stand_in()
    ps = np.round(np.arange(1, 10) / 10, 1)

    def part_a() -> pd.DataFrame:
        return global_vs_local(X, local, pattern="random", p=0.8, n_reps=1000,
                               random_state=0)

    def part_b(observed: tuple[int, ...]) -> pd.DataFrame:
        return pd.concat([global_vs_local(X, local, pattern="block", p=p, n_reps=100,
                                          observed_cols=observed, random_state=i)
                          for i, p in enumerate(ps)], ignore_index=True)

    def part_c() -> pd.DataFrame:
        return pd.concat([global_vs_local(X, local, pattern="block", p=0.5, n_reps=100,
                                          observed_cols=cols, random_state=i)
                          for i, cols in enumerate(observed_column_sets(N_COLS, 3))],
                         ignore_index=True)

    runs = [
        ("(a) random p=0.8, 1000 reps, soft-impute", part_a),
        ("(b) block, 2 observed cols, p=0.1..0.9 x 100 reps, SMC", lambda: part_b((1, 5))),
        ("(b) block, 3 observed cols, p=0.1..0.9 x 100 reps, SMC", lambda: part_b((1, 3, 5))),
        ("(c) block, 20 sets of 3 cols, p=0.5 x 100 reps, SMC", part_c),
    ]
    print(f"stand-in: {N_ROWS} x {N_COLS}, domain of {N_DOMAIN} rows")
    total_wall = total_cpu = 0.0
    for label, fn in runs:
        wall, cpu, df = timed(label, fn)
        total_wall += wall
        total_cpu += cpu
        if label.startswith("(a)"):
            shrink = df.groupby("approach").shrinkage.first()
            print(f"    shrinkage chosen on repetition 0: global {shrink['global']:.4g}, "
                  f"local {shrink['local']:.4g}")
    verdict = "within" if total_wall <= BUDGET_S else "OVER"
    print(f"total wall {total_wall:.2f} s (cpu {total_cpu:.2f} s): {verdict} the "
          f"{BUDGET_S:.0f} s budget")


def real_data() -> None:
    """The chapter's computations on the real data (:func:`hca.paper.completion.run` under
    both setups, no results cache), timed per setup."""
    import os

    os.environ["HCA_RESULTS_CACHE"] = "off"
    try:
        from hca.paper import completion as pc
        from hca.paper.setups import SETUP_NAMES
    except ImportError as err:  # pragma: no cover
        print(f"real data: skipped ({err})")
        return
    w0, c0 = time.perf_counter(), time.process_time()
    for setup in SETUP_NAMES:
        w1 = time.perf_counter()
        try:
            res = pc.run(setup)
        except (OSError, ValueError) as err:
            print(f"real data: skipped, the leaderboard is unavailable ({err})")
            return
        print(f"{res.summary()}")
        for row in res.runs.timings.itertuples():
            print(f"    {row.experiment:<8s}{row.variant:<30s}{row.repetitions:6d} reps  "
                  f"cpu {row.seconds:6.2f} s")
        print(f"  {setup}: wall {time.perf_counter() - w1:.2f} s")
    total_wall, total_cpu = time.perf_counter() - w0, time.process_time() - c0
    verdict = "within" if total_wall <= BUDGET_S else "OVER"
    print(f"chapter computations: total wall {total_wall:.2f} s (cpu of this process "
          f"{total_cpu:.2f} s; the repetitions run in joblib workers): {verdict} the "
          f"{BUDGET_S:.0f} s budget")


def main(argv: list[str] | None = None) -> None:
    """Run the synthetic and the real-data timings (or one of them)."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--real-only", action="store_true", help="only the real-data part")
    group.add_argument("--synthetic-only", action="store_true", help="only the stand-in")
    args = parser.parse_args(argv)
    if not args.real_only:
        print("== synthetic stand-in ==")
        synthetic()
    if not args.synthetic_only:
        print("== the book chapter's computations on the real data ==")
        real_data()


if __name__ == "__main__":
    main()
