"""Wall times of the HCA estimator (hca.estimator) on simulated leaderboards.

Run with ``python benchmarks/bench_hca.py`` (``--rates`` for the first two lines only). Prints,
for each setting, the best of a few repetitions, and whether the speed budget of issue 4 is met:

* [0] the rates of issue 33, on the paper's four domains (real data, careful setup), median of
  a few repetitions, CPU seconds (``time.process_time``; the machine is shared) and wall:
  - searches per second: the exhaustive searches of 20 FastICA seeds' unmixing matrices and
    of the 16 subsets of S_inv (>= 3 of 5 domains) of 5 seeds, and the sequential searches of
    those subsets (the recovery chapter's sweeps), one after another (``hca_search``) and as
    one batch (``hca_search_batch``, where the library has it);
  - ensemble fits per second: a 20-seed ensemble of fitted ``HCA`` models, from scratch
    (``hca.stability.seed_fits`` where the library has it; before issue 33: the seeds'
    FastICA prefetched into the memo, which is cleared first, then one ``fit`` per seed).
  The script runs against the code on ``PYTHONPATH``, so that the same script measures the
  code before and after (``cd /work/main && PYTHONPATH=$PWD python <this script> --rates``).
* exhaustive fit (ICA + search) in the paper's setting: 3 factors, 6 benchmarks,
  4 domains, ~1,000 models -- budget 1 s;
* the sweep over every subset of size >= 3 of five domains (Figure 18) -- budget 5 s;
* the sequential search with 4 factors and 8 domains (ICA included) -- budget 10 s;
* the speed ratio sequential / exhaustive on search problems where both run.
"""

from __future__ import annotations

import itertools
import statistics
import sys
import time
import warnings

import numpy as np

from hca.estimator import HCA, domain_ica, hca_search, mic_by_subset
from hca.synthetic import simulate_scm


def best_time(func, repeat: int = 3):
    """Smallest wall time over ``repeat`` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), result


def verdict(seconds: float, budget: float) -> str:
    return f"budget {budget:g} s {'met' if seconds < budget else 'NOT met'}"


def leaderboard(n_domains: int, n_per_domain: int, n_components: int, seed: int, alpha=0.02):
    """A simulated leaderboard with scores around 30 and mild inexactness."""
    return simulate_scm(
        n_domains=n_domains, n_per_domain=n_per_domain, n_components=n_components,
        alpha=alpha, offset=30.0, random_state=seed,
    )


def timed(func, repeat: int = 3):
    """Median CPU and wall seconds over ``repeat`` calls, and the last result."""
    cpu, wall, result = [], [], None
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        result = func()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall), result


def _book_problems(n_seeds: int = 20, n_subset_seeds: int = 5):
    """Unmixing matrices of the paper's four domains for ``n_seeds`` seeds and of the 16
    subsets of S_inv for ``n_subset_seeds`` seeds (careful setup)."""
    from hca.paper.constants import PAPER_V2_SINV
    from hca.paper.recovery import B2
    from hca.paper.replication import domain_data, main_data, v2_frame

    four, subsets = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, labels = main_data("careful")
        for s in range(n_seeds):
            icas = domain_ica(X, labels, 3, random_state=s)
            four.append({k: icas[k].unmixing for k in sorted(icas)})
        Xs, ls = domain_data(v2_frame("careful"), PAPER_V2_SINV, B2)
        for s in range(n_subset_seeds):
            icas = domain_ica(Xs, ls, 3, random_state=s)
            for size in (3, 4, 5):
                for sub in itertools.combinations(sorted(icas), size):
                    subsets.append({k: icas[k].unmixing for k in sub})
    return four, subsets


def bench_search_rate(repeat: int = 3) -> None:
    import hca.estimator.search as search_module

    four, subsets = _book_problems()
    batch = getattr(search_module, "hca_search_batch", None)
    cases = (
        ("4 domains x 20 seeds", four, "exhaustive"),
        ("16 subsets x 5 seeds", subsets, "exhaustive"),
        ("16 subsets x 5 seeds", subsets, "sequential"),  # the recovery chapter's sweeps
    )
    for name, problems, how in cases:
        cpu1, wall1, _ = timed(lambda ps=problems, h=how: [hca_search(p, search=h) for p in ps], repeat)
        line = (f"[0a] searches per second, {name} ({len(problems)} {how} searches): "
                f"one by one {len(problems) / cpu1:.0f}/s CPU ({len(problems) / wall1:.0f}/s wall)")
        if batch is not None:
            cpu2, wall2, _ = timed(lambda ps=problems, h=how: batch(ps, search=h), repeat)
            line += (f", batched {len(problems) / cpu2:.0f}/s CPU "
                     f"({len(problems) / wall2:.0f}/s wall)")
        print(line, flush=True)


def bench_ensemble_rate(repeat: int = 3, n_seeds: int = 20) -> None:
    import hca.estimator.ica as ica_module
    import hca.stability as stability
    from hca.paper.replication import estimator, main_data

    X, labels = main_data("careful")
    est = estimator("careful")
    seed_fits = getattr(stability, "seed_fits", None)

    def ensemble(r: int) -> list:
        seeds = list(range(1000 * r, 1000 * r + n_seeds))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if seed_fits is not None:
                return list(seed_fits(est, X, labels, seeds))
            ica_module.clear_fastica_memo()  # before issue 33: the process-wide memo
            stability.prefetch_runs(est, X, labels, seeds)
            return [stability.clone_hca(est, random_state=s).fit(X, labels) for s in seeds]

    runs = iter(range(repeat))
    cpu, wall, fits = timed(lambda: ensemble(next(runs)), repeat)
    how = "seed_fits" if seed_fits is not None else "prefetch_runs + one fit per seed"
    print(f"[0b] ensemble fits per second, {n_seeds}-seed ensembles of the paper's four domains "
          f"({len(X)} models, {how}, new seeds every repetition): {n_seeds / cpu:.1f}/s CPU "
          f"({n_seeds / wall:.1f}/s wall); MICs {min(f.mic_ for f in fits):.4f}-"
          f"{max(f.mic_ for f in fits):.4f}", flush=True)


def bench_paper_setting() -> None:
    sim = leaderboard(4, 250, 3, seed=0)
    HCA().fit(sim.X, sim.domains)  # warm-up
    seconds, est = best_time(lambda: HCA().fit(sim.X, sim.domains))
    print(f"[1] exhaustive fit, d0=3, 6 benchmarks, 4 domains, {len(sim.X)} models: "
          f"{seconds:.3f} s (MIC {est.mic_:.4f}, {est.search_result_.n_evaluated} orders) "
          f"-> {verdict(seconds, 1.0)}")


def bench_subset_sweep() -> None:
    sim = leaderboard(5, 250, 3, seed=1)
    seconds, table = best_time(lambda: mic_by_subset(HCA(), sim.X, sim.domains, min_size=3))
    best = table.loc[table["mic"].idxmin()]
    print(f"[2] subset sweep, 5 domains, {len(table)} subsets of size >= 3 (ICA included): "
          f"{seconds:.3f} s (smallest MIC {best['mic']:.4f} for {best['subset']}) "
          f"-> {verdict(seconds, 5.0)}")


def bench_sequential_large() -> None:
    sim = leaderboard(8, 1000, 4, seed=2, alpha=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = HCA(n_components=4, search="sequential")
        seconds, est = best_time(lambda: est.fit(sim.X, sim.domains), 2)
    res = est.search_result_
    n_orders = 24**8
    print(f"[3] sequential fit, d0=4, 8 domains ((4!)^8 = {n_orders:.2e} orders), "
          f"{len(sim.X)} models: "
          f"{seconds:.3f} s (MIC {res.mic:.4f}, {res.n_nodes} prefixes, final beam width "
          f"{res.beam_width}, certified optimal: {res.certified}) -> {verdict(seconds, 10.0)}")


def bench_ratio() -> None:
    print("[4] search only (ICA done once), sequential vs exhaustive on the same matrices:")
    for d, K, seed in [(3, 4, 3), (3, 5, 4), (3, 6, 5), (4, 4, 6)]:
        sim = leaderboard(K, 300, d, seed=seed)
        Ms = {k: v.unmixing for k, v in domain_ica(sim.X, sim.domains, d).items()}
        t_ex, ex = best_time(lambda ms=Ms: hca_search(ms), 2 if d == 3 else 1)
        t_seq, seq = best_time(lambda ms=Ms: hca_search(ms, search="sequential"), 2 if d == 3 else 1)
        same = all(np.array_equal(a, b) for a, b in zip(ex.permutations, seq.permutations))
        print(f"    d0={d}, K={K}: exhaustive {t_ex:.3f} s ({ex.n_evaluated} orders), sequential "
              f"{t_seq:.3f} s ({seq.n_nodes} prefixes, certified {seq.certified}); "
              f"sequential/exhaustive = {t_seq / t_ex:.3f}; same optimum: {same}")


def main() -> None:
    bench_search_rate()
    bench_ensemble_rate()
    if "--rates" in sys.argv[1:]:
        return
    bench_paper_setting()
    bench_subset_sweep()
    bench_sequential_large()
    bench_ratio()


if __name__ == "__main__":
    main()
