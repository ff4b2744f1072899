"""Time the batched FastICA fixed-point loop against a reference version, and check the two agree
bit for bit.

The loop (``_iterate_blocks`` in :mod:`hca.estimator.fastica_batch`, with ``_sym_decorrelation``)
is timed through the public :func:`~hca.estimator.fastica_batch.fastica_stack` and
:func:`~hca.estimator.fastica_batch.fastica_batch` on three cases:

(a) the MMLU physics subjects on Llama-2-70B's 29 models (3 x 29 white matrix): 40 seeds, of
    which most need hundreds to thousands of iterations and a few stop at ``max_iter=5000``
    (the slow starts of the MMLU chapter), through ``fastica_stack`` as
    :func:`hca.estimator.ica.fastica_runs` calls it;
(b) the same through ``fastica_batch`` (one shared matrix, no gather);
(c) a large stack: 4 seeds x 200 bootstrap resamples of 300 Mistral-7B models on the physics
    subjects (3 x 300 each); most of the 800 starts converge within 5-25 iterations, a few
    dozen take hundreds and 24 stop at ``max_iter=1000``;
(d) the MMLU chapter's batch of one ensemble: the mathematics, physics and cross subjects on
    every available base model, rows in order and reversed (five numbers of models), 20
    seeds, ``max_iter=1000``: :func:`~hca.estimator.fastica_batch.fastica_lockstep` (one loop)
    against one ``fastica_stack`` per shape, as ``fastica_runs_many`` ran them before the
    lockstep loop (a reference module without ``fastica_lockstep`` runs the latter).

The reference is the module as it is on a git ref (default ``main``), loaded from
``git show REF:hca/estimator/fastica_batch.py`` into a temporary module. For every case the
script asserts that components, iteration counts and convergence flags are bitwise equal
(``np.array_equal``), then prints the best-of-``--repeats`` time per call of each version
(runs alternate between the versions). It needs the pinned data (``HCA_DATA_DIR``).

Run from the repository root with one BLAS thread:
``OPENBLAS_NUM_THREADS=1 python benchmarks/bench_fastica_loop.py [--ref main] [--repeats 5]``.
It is a measurement, not a test: it exits 1 only if the versions disagree.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np

from hca.estimator import fastica_batch as current
from hca.paper.constants import CROSS_SUBJECTS, MATH_SUBJECTS, PHYSICS_SUBJECTS
from hca.paper.mmlu import mmlu_data, mmlu_frame, subject_columns

REPO = Path(__file__).resolve().parents[1]
MODULE = "hca/estimator/fastica_batch.py"


def reference_module(ref: str, tmp: Path) -> ModuleType:
    """The fastica_batch module as it is on git ``ref``, imported from a temporary file."""
    source = subprocess.run(
        ["git", "show", f"{ref}:{MODULE}"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    path = tmp / "fastica_batch_reference.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("fastica_batch_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cases() -> dict[str, Callable[[ModuleType], list]]:
    """Name -> function running one case with a given module; returns a list of results."""
    frame = mmlu_frame()
    cols = subject_columns(PHYSICS_SUBJECTS)
    slow = frame.loc[frame["base_model"] == "Llama-2-70B", cols].to_numpy(np.float64)
    big = frame.loc[frame["base_model"] == "Mistral-7B", cols].to_numpy(np.float64)
    rng = np.random.default_rng(0)
    big = big[rng.choice(len(big), size=300, replace=False)]
    resamples = [big[rng.integers(0, len(big), size=len(big))] for _ in range(200)]
    seeds40 = list(range(40))
    seeds4 = [0, 1, 2, 3]

    def slow_stack(m: ModuleType) -> list:
        wh = m.whiten(slow, 3)
        W0 = m.initial_matrices(seeds40, 3)[np.newaxis]
        return m.fastica_stack([wh], W0, max_iter=5000, tol=1e-4)

    def slow_batch(m: ModuleType) -> list:
        return [m.fastica_batch(slow, 3, seeds40, max_iter=5000, tol=1e-4)]

    mmlu = mmlu_data()
    chapter = []
    for subjects in (MATH_SUBJECTS, PHYSICS_SUBJECTS, CROSS_SUBJECTS):
        for base in mmlu.available:
            X = frame.loc[frame["base_model"] == base, list(subjects)].to_numpy(np.float64)
            chapter += [X, X[::-1]]
    seeds20 = list(range(20))

    def chapter_batch(m: ModuleType) -> list:
        whs = [m.whiten(X, 3) for X in chapter]
        W0 = m.initial_matrices(seeds20, 3)
        if hasattr(m, "fastica_lockstep"):
            return m.fastica_lockstep(whs, [W0] * len(whs), max_iter=1000, tol=1e-4)
        by_shape: dict[tuple, list[int]] = {}
        for i, X in enumerate(chapter):
            by_shape.setdefault(X.shape, []).append(i)
        out: list = [None] * len(chapter)
        for members in by_shape.values():
            W0s = np.broadcast_to(W0, (len(members), *W0.shape))
            got = m.fastica_stack([whs[i] for i in members], W0s, max_iter=1000, tol=1e-4)
            for i, res in zip(members, got):
                out[i] = res
        return out

    def boot_stack(m: ModuleType) -> list:
        whs = [m.whiten(X, 3) for X in resamples]
        W0 = np.broadcast_to(m.initial_matrices(seeds4, 3), (len(whs), 4, 3, 3))
        return m.fastica_stack(whs, W0, max_iter=1000, tol=1e-4)

    return {
        "(a) stack, Llama-2-70B physics 3x29, 40 seeds": slow_stack,
        "(b) batch, Llama-2-70B physics 3x29, 40 seeds": slow_batch,
        "(c) stack, 200 resamples x 4 seeds, 3x300": boot_stack,
        "(d) MMLU batch: 5 shapes x 6 matrices, 20 seeds": chapter_batch,
    }


def same(a: list, b: list) -> bool:
    """Bitwise equality of two lists of FastICABatch."""
    return len(a) == len(b) and all(
        np.array_equal(x.components, y.components)
        and np.array_equal(x.n_iter, y.n_iter)
        and np.array_equal(x.converged, y.converged)
        and np.array_equal(x.mean, y.mean)
        for x, y in zip(a, b)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ref", default="main", help="git ref of the reference version")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ref = reference_module(args.ref, Path(tmp))
    failed = False
    print(f"best of {args.repeats} calls; reference = {args.ref}:{MODULE}")
    print(f"{'case':<48} {'iterations':>10} {'ref ms':>8} {'new ms':>8} {'ratio':>6}  bitwise")
    for name, run in cases().items():
        times: dict[str, list[float]] = {"ref": [], "new": []}
        results: dict[str, list] = {}
        for _ in range(args.repeats):
            for key, module in (("ref", ref), ("new", current)):
                start = time.perf_counter()
                results[key] = run(module)
                times[key].append(time.perf_counter() - start)
        equal = same(results["ref"], results["new"])
        failed |= not equal
        n_iter = max(int(r.n_iter.max()) for r in results["new"])  # loop iterations
        t_ref, t_new = min(times["ref"]) * 1e3, min(times["new"]) * 1e3
        print(
            f"{name:<48} {n_iter:>10} {t_ref:>8.1f} {t_new:>8.1f} {t_new / t_ref:>6.2f}  "
            f"{'equal' if equal else 'DIFFERENT'}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
