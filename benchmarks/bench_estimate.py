"""Measure the calibration of ``hca fit``'s work and memory estimate (``hca/cli/calibration.json``).

Run from the repository root, on an otherwise idle machine::

    python benchmarks/bench_estimate.py                 # measure the grid, print the fit
    python benchmarks/bench_estimate.py --write         # ... and write hca/cli/calibration.json
    python benchmarks/bench_estimate.py --check         # estimate vs real time of `hca fit`
                                                        # on the validation tables (CHECKS)

Every point of the grid (:data:`GRID`: 2 to 600 domains, 60 or 300 models per domain, 6 or
30 benchmarks, 2 to 4 factors, both searches, data from both simulators of the book) runs
in its own process: simulated data, ``HCA.fit`` timed in its parts (the ICA, the search,
the rest), then the MIC reference (``hca.stability.rotation_null``) with a few draws, and
the peak resident memory after each (``ru_maxrss``) against the memory before the fit.
The constants of :mod:`hca.cli.estimate` are then fitted to these measurements (non-negative
least squares on the model's own features, :func:`hca.cli.estimate.fit_calibration`) and
printed with every point's estimate against its measurement: the largest ratios either way
become the estimate's stated range. With ``--write`` they are stored, with the date, the
machine and this command, as plain JSON in the package. ``--check`` runs ``python -m hca fit``
on tables the calibration never saw (:data:`CHECKS`: inexact SCMs, alpha 0.05, 60 models per
domain, 4 to 600 domains) and prints its estimate (typical, low, high) against the time the
work took, with their ratio. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CALIBRATION = REPO / "hca" / "cli" / "calibration.json"

#: (domains, models per domain, benchmarks, factors, search, max_nodes, simulator, noise,
#: MIC reference draws)
GRID: list[tuple] = [
    (2, 300, 6, 3, "exhaustive", 1_000_000, "scm", 0.0, 20),
    (4, 60, 6, 3, "exhaustive", 1_000_000, "scm", 0.0, 20),
    (4, 300, 6, 3, "exhaustive", 1_000_000, "scm", 0.0, 20),
    (4, 300, 30, 3, "exhaustive", 1_000_000, "alt", 0.0, 20),
    (4, 1000, 6, 2, "exhaustive", 1_000_000, "alt", 0.0, 20),
    (4, 300, 6, 4, "exhaustive", 1_000_000, "scm", 0.0, 20),
    (6, 250, 6, 3, "exhaustive", 1_000_000, "alt", 0.0, 20),
    (6, 60, 30, 3, "exhaustive", 1_000_000, "scm", 0.1, 20),
    (8, 60, 6, 3, "exhaustive", 1_000_000, "scm", 0.0, 5),
    (8, 250, 6, 3, "exhaustive", 1_000_000, "alt", 0.0, 5),
    (8, 250, 6, 3, "sequential", 1_000_000, "scm", 0.0, 5),
    (10, 60, 30, 3, "sequential", 1_000_000, "alt", 0.0, 5),
    (12, 60, 6, 3, "sequential", 1_000_000, "scm", 0.0, 3),
    (16, 60, 30, 3, "sequential", 1_000_000, "scm", 0.0, 2),
    (20, 60, 6, 2, "sequential", 1_000_000, "alt", 0.0, 2),
    (20, 60, 30, 4, "sequential", 200_000, "scm", 0.0, 1),
    (25, 60, 6, 3, "sequential", 1_000_000, "alt", 0.0, 1),
    (50, 60, 30, 3, "sequential", 200_000, "scm", 0.1, 1),
    (50, 100, 6, 3, "sequential", 1_000_000, "alt", 0.0, 1),
    (100, 60, 30, 3, "sequential", 200_000, "alt", 0.0, 0),
    (100, 60, 6, 3, "sequential", 100_000, "scm", 0.0, 1),
    (200, 40, 6, 3, "sequential", 100_000, "scm", 0.0, 0),
    (200, 60, 30, 3, "sequential", 100_000, "alt", 0.0, 0),
    (400, 60, 30, 3, "sequential", 100_000, "scm", 0.0, 0),
    (600, 60, 30, 3, "sequential", 100_000, "scm", 0.0, 0),
]

#: Points measuring the memory of the MIC reference: many draws, so that its bytes per draw
#: stand out of the process's own (same fields as :data:`GRID`).
MEMORY_GRID: list[tuple] = [
    (2, 100, 6, 3, "exhaustive", 1_000_000, "scm", 0.0, 20000),
    (4, 100, 6, 3, "exhaustive", 1_000_000, "scm", 0.0, 20000),
    (4, 100, 30, 3, "exhaustive", 1_000_000, "alt", 0.0, 5000),
    (4, 100, 6, 4, "exhaustive", 1_000_000, "scm", 0.0, 2000),
    (6, 100, 30, 3, "exhaustive", 1_000_000, "alt", 0.0, 2000),
    (10, 60, 6, 3, "sequential", 1_000_000, "scm", 0.0, 40),
    (16, 60, 6, 3, "sequential", 100_000, "alt", 0.0, 30),
]

#: ``--check``: (domains, benchmarks, search, extra options of ``hca fit``).
CHECKS: list[tuple] = [
    (4, 6, "exhaustive", []),
    (8, 6, "exhaustive", []),
    (12, 6, "sequential", ["--null-draws", "0"]),
    (25, 6, "sequential", ["--null-draws", "0"]),
    (25, 30, "sequential", ["--null-draws", "0"]),
    (50, 30, "sequential", ["--null-draws", "0"]),
    (100, 6, "sequential", ["--null-draws", "0", "--max-nodes", "200000"]),
    (200, 30, "sequential", ["--null-draws", "0", "--max-nodes", "200000"]),
    (600, 30, "sequential", ["--null-draws", "0", "--max-nodes", "100000"]),
    (6, 6, "exhaustive", ["--null-draws", "200"]),
    (16, 6, "sequential", ["--null-draws", "3", "--max-nodes", "200000"]),
]


def check(folder: Path) -> None:
    """``hca fit`` on every table of :data:`CHECKS`: its estimate against the measured work."""
    import pandas as pd

    from hca.synthetic import simulate_scm

    print(f"{'table':<28} {'measured':>9} {'estimate':>9} {'low':>8} {'high':>8} {'ratio':>6}")
    for K, p, search, extra in CHECKS:
        sim = simulate_scm(n_domains=K, n_per_domain=60, n_benchmarks=p, alpha=0.05,
                           offset=30.0, random_state=1000 + K)  # fmt: skip
        path = folder / f"check_{K}_{p}.csv"
        pd.DataFrame(sim.X, columns=list(sim.feature_names)).assign(base=sim.domains).to_csv(
            path, index=False
        )
        report = folder / "report.json"
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "hca", "fit", str(path), "--domain-col", "base",
             "--benchmarks", ",".join(sim.feature_names), "--search", search, "--json",
             str(report), "--time-limit", "600", *extra],
            capture_output=True, text=True, cwd=folder,
        )  # fmt: skip
        wall = time.perf_counter() - start
        name = f"{K}x60x{p} {search[:3]} {' '.join(extra)}"
        if proc.returncode != 0:
            print(f"{name:<28} exit {proc.returncode}: {proc.stderr.strip()[-200:]}")
            continue
        est = json.loads(report.read_text())["estimate"]
        real = est["measured_seconds"]
        print(
            f"{name:<28} {real:>9.1f} {est['seconds']:>9.1f} {est['seconds_low']:>8.1f} "
            f"{est['seconds_high']:>8.1f} {est['seconds'] / max(real, 1e-9):>6.2f}"
            f"   (process {wall:.0f} s)",
            flush=True,
        )


CHILD = r"""
import json, resource, sys, time, warnings
import numpy as np
from hca import HCA
from hca.stability import rotation_null
from hca.synthetic import simulate_scm
from hca.synthetic_alt import simulate_leaderboard

K, n, p, d, search, max_nodes, sim, noise, draws = json.loads(sys.argv[1])
make = simulate_scm if sim == "scm" else simulate_leaderboard
data = make(n_domains=K, n_per_domain=n, n_components=d, n_benchmarks=p, random_state=K + n + p)
X = np.asarray(data.X)
if noise:
    X = X + np.random.default_rng(0).normal(0, noise * X.std(axis=0), X.shape)
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
def current():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize()
marks = {}
def progress(step, done, total):
    if step == "ICA" and done >= total:
        marks["ica"] = time.perf_counter()
        marks["ica_cpu"] = time.process_time()
base = current()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    t0, c0 = time.perf_counter(), time.process_time()
    model = HCA(d, search=search, max_nodes=max_nodes).fit(X, data.domains, progress=progress)
    t1, c1 = time.perf_counter(), time.process_time()
    model.adjust(X)
    t2, c2 = time.perf_counter(), time.process_time()
    fit_peak = rss()
    ref = ref_cpu = 0.0
    if draws:
        r0, rc0 = time.perf_counter(), time.process_time()
        rotation_null(model, draws, 0)
        ref, ref_cpu = time.perf_counter() - r0, time.process_time() - rc0
res = model.search_result_
print(json.dumps({
    "K": K, "n": n, "p": p, "d": d, "search": search, "max_nodes": max_nodes, "sim": sim,
    "noise": noise, "draws": draws, "sizes": [int(n)] * K,
    "ica": marks.get("ica", t0) - t0, "search_s": t1 - marks.get("ica", t0),
    "rest": t2 - t1, "fit": t2 - t0, "reference": ref,
    "cpu": {"ica": marks.get("ica_cpu", c0) - c0, "search_s": c1 - marks.get("ica_cpu", c0),
            "rest": c2 - c1, "fit": c2 - c0, "reference": ref_cpu},
    "nodes": int(res.n_nodes), "leaves": int(res.n_evaluated), "certified": bool(res.certified),
    "enumerated": bool(res.enumerated), "width": int(res.beam_width),
    "rss_base": base, "rss_fit": fit_peak, "rss_ref": rss(),
}))
"""


def measure(point: tuple, cap_gb: float) -> dict:
    """One grid point in its own process (address space capped at ``cap_gb`` GiB)."""
    import resource

    def limit() -> None:
        cap = int(cap_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(list(point))],
        cwd=REPO,
        capture_output=True,
        text=True,
        preexec_fn=limit,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        return {"point": list(point), "error": f"exit {proc.returncode}: {last}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


WORKER = r"""
import json, time
import joblib
t0 = time.perf_counter()
def rss():
    import resource
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize()
def job(i):
    import hca.estimator.model  # what a --seeds worker imports
    return rss()
sizes = joblib.Parallel(n_jobs=2)(joblib.delayed(job)(i) for i in range(2))
print(json.dumps({"worker_start_seconds": time.perf_counter() - t0, "worker_bytes": max(sizes)}))
"""


def _nnls(F, y) -> list:
    """Non-negative least squares on relative errors (every row divided by its target)."""
    import numpy as np
    from scipy.optimize import lsq_linear  # (scipy 1.17's nnls aborted on some of these)

    F, y = np.asarray(F, dtype=float), np.asarray(y, dtype=float)
    keep = y > 0
    A = F[keep] / y[keep, None]
    scale = np.maximum(np.abs(A).max(axis=0), 1e-300)  # columns of one size for the solver
    res = lsq_linear(A / scale, np.ones(int(keep.sum())), bounds=(0, np.inf))
    return [float(c) for c in res.x / scale]


def _t(r: dict, key: str) -> float:
    """A run's seconds of one part: its CPU time where measured (the machine is shared, so
    wall times follow the load), else its wall time."""
    return float(r["cpu"][key]) if "cpu" in r else float(r[key])


def _shape(r: dict):
    from hca.cli.estimate import Shape

    return Shape(tuple(r["sizes"]), r["p"], r["d"], r["search"], r["max_nodes"])


def fit_calibration(runs: list[dict], memory_runs: list[dict], workers: dict, probe: float) -> dict:
    """The constants of :mod:`hca.cli.estimate` fitted to the measured runs."""
    import numpy as np

    from hca.cli.estimate import features

    # noisy simulated data (isotropic noise on every benchmark) cost far more per prefix
    # than the rest (50 domains: 1.5 ms of CPU against 0.1-0.2 ms): left out of the model and
    # of its stated range, and printed apart by calibration_table
    noisy = [r for r in runs if r["noise"]]
    runs = [r for r in runs if not r["noise"]]
    shapes = [_shape(r) for r in runs]
    cal: dict = {
        "probe_seconds": probe,
        "outside_the_model": [
            {
                "point": f"{r['K']} domains x {r['n']} models x {r['p']} benchmarks, noise {r['noise']}",
                "cpu_seconds_per_prefix": _t(r, "search_s") / max(r["nodes"], 1),
            }
            for r in noisy
        ],
    }
    for part, key in (("ica", "ica"), ("rest", "rest")):
        cal[part] = {
            "coef": _nnls([features(part, sh) for sh in shapes], [_t(r, key) for r in runs])
        }
    nodes: dict = {}
    reference: dict = {}
    for regime in ("exhaustive", "enumerated", "partial"):
        idx = [i for i, sh in enumerate(shapes) if sh.regime == regime and runs[i]["nodes"] > 0]
        F = [features(f"per_node_{regime}", shapes[i]) for i in idx]
        y = [_t(runs[i], "search_s") / runs[i]["nodes"] for i in idx]
        cal[f"per_node_{regime}"] = {"coef": _nnls(F, y)}
        lows, highs = zip(*(shapes[i].nodes() for i in idx))
        actual = np.array([runs[i]["nodes"] for i in idx], dtype=float)
        per_node = np.array(
            [
                features(f"per_node_{regime}", shapes[i]) @ cal[f"per_node_{regime}"]["coef"]
                for i in idx
            ]
        )
        with_draws = [k for k, i in enumerate(idx) if runs[i]["draws"]]
        per_draw = np.array(
            [_t(runs[idx[k]], "reference") / runs[idx[k]]["draws"] for k in with_draws]
        )
        if regime == "exhaustive":
            nodes[regime] = {"typical": float(np.median(actual / np.array(lows)))}
            # a draw (batched) against one search of the typical size
            typical = nodes[regime]["typical"] * np.array(lows)[with_draws] * per_node[with_draws]
            reference[regime] = float(np.median(per_draw / typical))
        else:
            share = actual / np.array(highs)
            drawn = per_draw / per_node[with_draws] / np.array(highs)[with_draws]
            nodes[regime] = {
                "typical": float(np.median(share)),
                "low": float(share.min()),
                "rotated": float(min(1.0, np.median(drawn))),
            }
            reference[regime] = 1.0
    cal["nodes"], cal["reference"] = nodes, reference
    cal["worker_start_seconds"] = float(workers["worker_start_seconds"])
    # spread: the model's error with every run's own prefix count (the counts' range is apart)
    ratios = []
    for r, sh in zip(runs, shapes):
        per = features(f"per_node_{sh.regime}", sh) @ cal[f"per_node_{sh.regime}"]["coef"]
        pred = features("ica", sh) @ cal["ica"]["coef"] + r["nodes"] * per
        pred += features("rest", sh) @ cal["rest"]["coef"]
        if _t(r, "fit") >= 0.5:  # below, the machine's noise dominates
            ratios.append(pred / _t(r, "fit"))
    cal["spread"] = {
        "over": float(max(1.0, max(ratios))),
        "under": float(max(1.0, 1 / min(ratios))),
    }
    # memory: the fit's working set (a constant, the data twice, the search's table, and per
    # regime a multiple of its largest batch: the median over the runs where that batch is
    # large enough to measure), and the reference's bytes per draw
    extra = [max(r["rss_fit"] - r["rss_base"], 1.0) for r in runs]
    F = np.array([features("fit_bytes", sh) for sh in shapes])
    small = [e for e, f in zip(extra, F) if max(f[3:]) < 8 * 2**20]
    coef = [float(np.median(small)) if small else 0.0, 2.0, 1.0]
    for j in (3, 4, 5):  # exhaustive, enumerated, partial
        fixed = F[:, :3] @ np.array(coef[:3])
        use = [(e - b) / f[j] for e, b, f in zip(extra, fixed, F) if f[j] >= 8 * 2**20]
        coef.append(float(max(0.0, np.median(use))) if use else 1.0)
    cal["fit_bytes"] = {"coef": coef}
    memory_runs = memory_runs or [r for r in runs if r["draws"]]  # without the memory grid
    memory_runs = [r for r in memory_runs if r["search"] == "exhaustive"] or memory_runs
    mshapes = [_shape(r) for r in memory_runs]
    per = [max(r["rss_ref"] - r["rss_fit"], 1.0) / r["draws"] for r in memory_runs]
    cal["draw_bytes"] = {"coef": _nnls([features("draw_bytes", sh) for sh in mshapes], per)}
    fit_ratio = [
        e / max(features("fit_bytes", sh) @ cal["fit_bytes"]["coef"], 1.0)
        for e, sh in zip(extra, shapes)
    ]
    draw_ratio = [
        b / max(features("draw_bytes", sh) @ cal["draw_bytes"]["coef"], 1.0)
        for b, sh in zip(per, mshapes)
    ]
    # the safety factor: the largest under-estimate where the memory is large enough to measure
    big = [r for r, e in zip(fit_ratio, extra) if e >= 16 * 2**20]
    big += [r for r, b, m in zip(draw_ratio, per, memory_runs) if b * m["draws"] >= 16 * 2**20]
    cal["memory"] = {
        "safety": float(max([1.0, *big])),
        "worker_bytes": float(workers["worker_bytes"]),
    }
    return cal


def calibration_table(runs: list[dict], cal: dict) -> str:
    """Every run: measured and estimated seconds (typical, low, high) of the fit and the
    reference draws."""
    from hca.cli.estimate import estimate_work

    lines = [
        f"{'point':<42} {'fit s':>7} {'est':>7} {'low':>7} {'high':>7} {'draw s':>7} {'est':>7}"
    ]
    for r in runs:
        sh = _shape(r)
        w = estimate_work(sh, calibration=cal, speed=1.0)
        name = f"{r['K']}x{r['n']}x{r['p']} d{r['d']} {sh.regime} {r['sim']} {r['max_nodes']:.0e}"
        draw = _t(r, "reference") / r["draws"] if r["draws"] else float("nan")
        lines.append(
            f"{name:<42} {_t(r, 'fit'):>7.2f} {w.fit:>7.2f} {w.ica + w.search_low + w.rest:>7.2f} "
            f"{w.ica + w.search_high + w.rest:>7.2f} {draw:>7.2f} {w.per_draw:>7.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="write hca/cli/calibration.json")
    parser.add_argument("--points", type=int, nargs="*", help="indices of GRID to measure")
    parser.add_argument("--save", type=Path, help="also save the measurements (JSON lines)")
    parser.add_argument(
        "--load", type=Path, nargs="*", help="fit saved measurements instead of measuring"
    )
    parser.add_argument(
        "--grid", choices=["all", "time", "memory"], default="all", help="which points to measure"
    )
    parser.add_argument("--cap-gb", type=float, default=6.0)
    parser.add_argument("--check", action="store_true", help="estimate vs real on CHECKS")
    args = parser.parse_args(argv)
    if args.check:
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            check(Path(folder))
        return 0
    if args.load:
        runs = [
            json.loads(line)
            for path in args.load
            for line in path.read_text().splitlines()
            if line.strip()
        ]
    else:
        runs = []
        points = [(GRID[i], False) for i in args.points] if args.points else []
        if not args.points and args.grid in ("all", "time"):
            points += [(p, False) for p in GRID]
        if not args.points and args.grid in ("all", "memory"):
            points += [(p, True) for p in MEMORY_GRID]
        for point, memory in points:
            start = time.perf_counter()
            r = measure(point, args.cap_gb)
            r["memory"] = memory
            print(json.dumps(r), f"# {time.perf_counter() - start:.0f} s", flush=True)
            if args.save:
                with args.save.open("a") as fh:
                    fh.write(json.dumps(r) + "\n")
            runs.append(r)
    runs = [r for r in runs if "error" not in r]
    memory_runs = [r for r in runs if r.get("memory")]
    runs = [r for r in runs if not r.get("memory")]
    from hca.cli import estimate

    workers = json.loads(
        subprocess.run([sys.executable, "-c", WORKER], cwd=REPO, capture_output=True, text=True,
                       check=True).stdout.strip().splitlines()[-1]
    )  # fmt: skip
    probe = estimate.speed_probe(repeats=20)
    calibration = fit_calibration(runs, memory_runs, workers, probe)
    calibration["measured"] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}, "
        f"{__import__('os').cpu_count()} cores, Python {platform.python_version()}",
        "command": "python benchmarks/bench_estimate.py --write",
        "points": len(runs),
    }
    print(calibration_table(runs, calibration))
    if args.write:
        CALIBRATION.write_text(json.dumps(calibration, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {CALIBRATION.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
