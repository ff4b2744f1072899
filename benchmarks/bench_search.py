"""Time and peak memory of the sequential search for 8, 16, 32 and 50 domains (issue 20).

Run from the repository root: ``python benchmarks/bench_search.py [--sizes 8 16 32 50]
[--max-nodes N] [--cap-gb 2]``. Each size runs in its own subprocess under an address-space
cap (``RLIMIT_AS``, default 2 GiB), so a search that grows without bound fails there instead
of taking the machine down. For every size: a simulated leaderboard with three factors
(``hca.synthetic.simulate_scm``, 60 models per domain, inexactness 0.05), FastICA per domain
(not timed), then ``hca_search(search="sequential")`` timed, with its peak traced memory
(``tracemalloc``: numpy's arrays included) and the peak resident size of the process.
It is a measurement, not a test: it exits 0 unless a size fails.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time, tracemalloc, warnings
from hca.estimator import domain_ica
from hca.estimator.search import hca_search
from hca.synthetic import simulate_scm

K, max_nodes = int(sys.argv[1]), int(sys.argv[2])
sim = simulate_scm(n_domains=K, n_per_domain=60, alpha=0.05, offset=30.0, random_state=K)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    icas = domain_ica(sim.X, sim.domains, 3)
    Ms = {label: fit.unmixing for label, fit in icas.items()}
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    start = time.perf_counter()
    res = hca_search(Ms, search="sequential", max_nodes=max_nodes)
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
print(json.dumps({"K": K, "seconds": seconds, "traced_peak_mb": peak / 2**20,
                  "rss_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "rss_before_mb": rss_before / 1024, "mic": res.mic,
                  "certified": res.certified, "enumerated": res.enumerated,
                  "nodes": res.n_nodes, "beam_width": res.beam_width}))
"""


def run_size(K: int, max_nodes: int, cap_bytes: int) -> dict:
    """One size in a subprocess under the memory cap."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))

    proc = subprocess.run([sys.executable, "-c", CHILD, str(K), str(max_nodes)], cwd=REPO,
                          capture_output=True, text=True, preexec_fn=limit)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        return {"K": K, "error": f"exit {proc.returncode}: {last}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32, 50])
    parser.add_argument("--max-nodes", type=int, default=1_000_000)
    parser.add_argument("--cap-gb", type=float, default=2.0)
    args = parser.parse_args(argv)
    cap = int(args.cap_gb * 2**30)
    print(f"sequential search, 3 factors, max_nodes={args.max_nodes:,}, "
          f"address space capped at {args.cap_gb:g} GiB per size")
    print(f"{'domains':>7} {'time s':>8} {'traced MB':>10} {'RSS MB':>8} {'MIC':>7} "
          f"{'certified':>9} {'enumerated':>10} {'nodes':>9} {'width':>6}")
    failed = False
    for K in args.sizes:
        r = run_size(K, args.max_nodes, cap)
        if "error" in r:
            failed = True
            print(f"{K:>7} FAILED {r['error']}")
            continue
        print(f"{K:>7} {r['seconds']:>8.2f} {r['traced_peak_mb']:>10.0f} {r['rss_peak_mb']:>8.0f} "
              f"{r['mic']:>7.4f} {str(r['certified']):>9} {str(r['enumerated']):>10} "
              f"{r['nodes']:>9,} {r['beam_width']:>6}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
