"""Wall times of the HCA estimator (hca.estimator) on simulated leaderboards.

Run with ``python benchmarks/bench_hca.py``. Prints, for each setting, the best of a few
repetitions, and whether the speed budget of issue 4 is met:

* exhaustive fit (ICA + search) in the paper's setting: 3 factors, 6 benchmarks,
  4 domains, ~1,000 models -- budget 1 s;
* the sweep over every subset of size >= 3 of five domains (Figure 18) -- budget 5 s;
* the sequential search with 4 factors and 8 domains (ICA included) -- budget 10 s;
* the speed ratio sequential / exhaustive on search problems where both run;
* [0] HCA fits per second on the paper's four domains (real data, careful setup): a
  20-seed ensemble (:func:`hca.stability.seed_stability`, the unit of the book's ensemble
  readings) and single fits, median of 5 repetitions, the per-process FastICA memo cleared
  before each repetition so that every fit computes its ICA.
"""

from __future__ import annotations

import statistics
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


def _clear_memo() -> None:
    try:  # the memo of batched FastICA runs (absent before issue 24)
        from hca.estimator.ica import clear_fastica_memo
    except ImportError:
        return
    clear_fastica_memo()


def bench_fits_per_second(repeat: int = 5, n_seeds: int = 20) -> None:
    from hca.paper.replication import estimator, main_data
    from hca.stability import seed_stability

    X, labels = main_data("careful")
    est = estimator("careful")
    ens, single = [], []
    for r in range(repeat):
        seeds = range(1000 * r, 1000 * r + n_seeds)
        _clear_memo()
        start = time.perf_counter()
        seed_stability(est, X, labels, seeds=seeds)
        ens.append(n_seeds / (time.perf_counter() - start))
        _clear_memo()
        start = time.perf_counter()
        for s in range(500 + 1000 * r, 500 + 1000 * r + 5):
            est.set_params(random_state=s).fit(X, labels)
        single.append(5 / (time.perf_counter() - start))
    print(f"[0] HCA fits per second, paper's four domains ({len(X)} models), median of "
          f"{repeat}: {statistics.median(ens):.1f} in a {n_seeds}-seed ensemble, "
          f"{statistics.median(single):.1f} as single fits")


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
        t_ex, ex = best_time(lambda: hca_search(Ms), 2 if d == 3 else 1)
        t_seq, seq = best_time(lambda: hca_search(Ms, search="sequential"), 2 if d == 3 else 1)
        same = all(np.array_equal(a, b) for a, b in zip(ex.permutations, seq.permutations))
        print(f"    d0={d}, K={K}: exhaustive {t_ex:.3f} s ({ex.n_evaluated} orders), sequential "
              f"{t_seq:.3f} s ({seq.n_nodes} prefixes, certified {seq.certified}); "
              f"sequential/exhaustive = {t_seq / t_ex:.3f}; same optimum: {same}")


def main() -> None:
    bench_fits_per_second()
    bench_paper_setting()
    bench_subset_sweep()
    bench_sequential_large()
    bench_ratio()


if __name__ == "__main__":
    main()
