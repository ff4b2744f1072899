#!/usr/bin/env python3
"""Does the scorecard depend on the processor's floating-point path? Compute it under several
OpenBLAS kernels and report every verdict and `ours` value that differs.

    .venv/bin/python scripts/check_kernels.py [--only recovery,mmlu] [--jobs 3]
                                              [--keep DIR [--reuse]]

Runs ``python -m hca scorecard --json`` with the results cache off (``HCA_RESULTS_CACHE=off``)
three times: with the machine's default kernels (``OPENBLAS_CORETYPE`` unset), with
``OPENBLAS_CORETYPE=Haswell`` (AVX2) and with ``OPENBLAS_CORETYPE=Sandybridge`` (AVX). The
first run is the reference. Passes (exit 0) when every verdict is the same in every run and at
least 95 % of the `ours` values are identical as printed.

Some machines set ``OPENBLAS_CORETYPE`` or ``OPENBLAS_L2_SIZE`` because other kernels crash or
compute wrong results on their processor: where either is set, this script leaves both alone,
says so, and compares nothing but the machine's own setting (one run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KERNELS = (None, "Haswell", "Sandybridge")  # None: the machine's default
LEFT_ALONE = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
MIN_SAME_OURS = 0.95


def _label(kernel: str | None) -> str:
    return "machine default" if kernel is None else f"OPENBLAS_CORETYPE={kernel}"


def start_scorecard(kernel: str | None, out: Path, args: argparse.Namespace,
                    pinned: bool) -> subprocess.Popen:
    """Start one scorecard run in a fresh process."""
    env = dict(os.environ, HCA_RESULTS_CACHE="off")
    if not pinned:
        env.pop("OPENBLAS_CORETYPE", None)
        if kernel is not None:
            env["OPENBLAS_CORETYPE"] = kernel
    cmd = [sys.executable, "-m", "hca", "scorecard", "--json", str(out)]
    for part in (args.only or "").split(","):  # the CLI takes one --only per item
        if part.strip():
            cmd += ["--only", part.strip()]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)


def _flatten(records: list) -> dict:
    return {(r["id"], s): o for r in records for s, o in r["setups"].items()}


def compare(ref: dict, other: dict, name: str) -> tuple[int, int, int]:
    """Print the differences of ``other`` from ``ref``; return (verdicts differing, ours
    differing, values compared)."""
    verdicts = [(k, ref[k]["verdict"], other[k]["verdict"]) for k in ref
                if k in other and ref[k]["verdict"] != other[k]["verdict"]]
    ours = [(k, ref[k]["ours"], other[k]["ours"]) for k in ref
            if k in other and ref[k]["ours"] != other[k]["ours"]]
    missing = sorted(set(ref) ^ set(other))
    print(f"\n== {name}: {len(verdicts)} verdict(s) and {len(ours)} of {len(ref)} `ours` "
          f"value(s) differ from the reference")
    for (cid, s), a, b in verdicts:
        print(f"  verdict {cid} [{s}]: {a} -> {b}")
    for (cid, s), a, b in ours:
        print(f"  ours {cid} [{s}]:\n    - {a}\n    + {b}")
    if missing:
        print(f"  claims present in only one run: {missing}")
    return len(verdicts) + len(missing), len(ours), len(ref)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", help="chapters or claim-id prefixes (python -m hca scorecard)")
    p.add_argument("--keep", type=Path, help="folder to keep the JSON of every run in")
    p.add_argument("--reuse", action="store_true",
                   help="with --keep: compare the JSON files already there instead of rerunning")
    p.add_argument("--jobs", type=int, default=1, help="scorecard runs at a time (default 1)")
    args = p.parse_args(argv)
    pinned = {v: os.environ[v] for v in LEFT_ALONE if os.environ.get(v)}
    if pinned:
        print("This machine sets " + ", ".join(f"{k}={v}" for k, v in pinned.items())
              + ": left alone (other kernels may crash or compute wrong results here), so only "
              "the machine's own setting is run and nothing is compared.")
    kernels = (None,) if pinned else KERNELS
    folder = args.keep or Path(tempfile.mkdtemp(prefix="hca_kernels_"))
    folder.mkdir(parents=True, exist_ok=True)
    outs = {k: folder / f"scorecard-{k or 'default'}.json" for k in kernels}
    todo = [k for k in kernels if not (args.reuse and outs[k].is_file())]
    start, running = time.perf_counter(), {}
    while todo or running:
        while todo and len(running) < max(1, args.jobs):
            k = todo.pop(0)
            running[k] = start_scorecard(k, outs[k], args, bool(pinned))
        k, proc = next(iter(running.items()))
        if proc.wait() != 0:
            raise SystemExit(f"the scorecard failed under {_label(k)}")
        del running[k]
        print(f"{_label(k)}: done after {time.perf_counter() - start:.0f} s ({outs[k]})")
    runs = {k: _flatten(json.loads(outs[k].read_text(encoding="utf-8"))) for k in kernels}
    ref = runs[kernels[0]]
    bad_verdicts, worst_share = 0, 1.0
    for kernel in kernels[1:]:
        nv, no, n = compare(ref, runs[kernel], f"{_label(kernel)} vs {_label(kernels[0])}")
        bad_verdicts += nv
        worst_share = min(worst_share, 1 - no / n)
    ok = bad_verdicts == 0 and worst_share >= MIN_SAME_OURS
    print(f"\nverdicts identical in every run: {bad_verdicts == 0}; `ours` identical: at least "
          f"{worst_share:.1%} (needed {MIN_SAME_OURS:.0%}) -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
