"""``python -m hca fit``: run HCA on a user's own leaderboard CSV.

Reads a CSV with one row per model, a column naming each model's domain (its base model)
and one numeric column per benchmark; prints the recovered causal order, each domain's
structural equations after the OLS ambiguity adjustment, the MIC and the alignment of
factors with benchmarks; ``--json PATH`` also writes them as JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from hca.cli import register_command

__all__ = ["read_leaderboard_csv", "fit_report"]


def read_leaderboard_csv(path: str | Path, domain_col: str,
                         benchmarks: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """Read and validate ``path``: the benchmark columns (floats) and the domain labels.

    Raises
    ------
    ValueError
        One-line messages naming the problem: unreadable or malformed CSV, a missing column,
        a non-numeric or missing score, too few benchmarks.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"{path}: malformed CSV ({first})") from None
    if len(benchmarks) < 2:
        raise ValueError(f"--benchmarks needs at least two columns, got {benchmarks}")
    if len(set(benchmarks)) != len(benchmarks):
        raise ValueError(f"--benchmarks lists a column twice: {benchmarks}")
    missing = [c for c in [domain_col, *benchmarks] if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; the CSV has {list(df.columns)}")
    X = pd.DataFrame(index=df.index)
    for col in benchmarks:
        values = pd.to_numeric(df[col], errors="coerce")
        bad = values.isna() & df[col].notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(f"{path}: column {col!r} is not numeric "
                             f"(row {row + 2} holds {df[col].iloc[row]!r})")
        if values.isna().any():
            row = int(np.flatnonzero(values.isna().to_numpy())[0])
            raise ValueError(f"{path}: column {col!r} has a missing score (row {row + 2}); "
                             "drop or complete such rows first")
        X[col] = values.astype(float)
    labels = df[domain_col]
    if labels.isna().any():
        row = int(np.flatnonzero(labels.isna().to_numpy())[0])
        raise ValueError(f"{path}: column {domain_col!r} has a missing domain (row {row + 2})")
    return X.reset_index(drop=True), labels.astype(str).to_numpy(dtype=object)


def fit_report(X: pd.DataFrame, domains: np.ndarray, n_components: int = 3,
               search: str = "exhaustive", random_state: int = 0) -> dict:
    """Fit HCA and return a JSON-ready report (order, alignment, MIC, equations per domain)."""
    from hca.estimator import HCA

    model = HCA(n_components=n_components, search=search, random_state=random_state)
    model.fit(X, domains)
    adj = model.adjust(X)
    factors = list(adj.r2.index)
    return {
        "n_models": int(len(X)),
        "benchmarks": list(X.columns),
        "domains": {str(d): int((domains == d).sum()) for d in model.domains_},
        "causal_order": factors,
        "alignment": [
            {"factor": z, "benchmark": str(b), "r2": float(adj.r2.loc[z, b])}
            for z, b in zip(factors, adj.benchmarks)
        ],
        "r2_table": {z: {str(b): float(v) for b, v in adj.r2.loc[z].items()} for z in factors},
        "mic": float(model.mic_),
        "inexactness": {str(k): float(v) for k, v in model.inexactness_.items()},
        "graphs": {
            str(k): {
                "equations": m.equations(),
                "weights": m.A.tolist(),
                "source_scales": m.omega_sqrt.tolist(),
            }
            for k, m in adj.models.items()
        },
        "unmixing": adj.unmixing.tolist(),
    }


def _format(report: dict) -> str:
    lines = [f"HCA on {report['n_models']} models, {len(report['benchmarks'])} benchmarks, "
             f"{len(report['domains'])} domains "
             + "(" + ", ".join(f"{k}: {v}" for k, v in report["domains"].items()) + ")",
             f"MIC = {report['mic']:.4f}  (per domain: "
             + ", ".join(f"{k} {v:.4f}" for k, v in report["inexactness"].items()) + ")",
             "Causal order and alignment (benchmark with the largest R^2, earlier factors as "
             "controls):"]
    lines += [f"  {a['factor']}  <->  {a['benchmark']}  (R^2 = {a['r2']:.2f})"
              for a in report["alignment"]]
    lines.append("Causal graphs (after the OLS adjustment; unit-variance sources):")
    for dom, g in report["graphs"].items():
        lines.append(f"  {dom}")
        lines += [f"    {eq}" for eq in g["equations"]]
    return "\n".join(lines)


def _setup(p: argparse.ArgumentParser) -> None:
    p.add_argument("csv", help="CSV with one row per model")
    p.add_argument("--domain-col", required=True, help="column naming each model's domain")
    p.add_argument("--benchmarks", required=True,
                   help="comma-separated benchmark columns, e.g. ifeval,bbh,math_lvl_5")
    p.add_argument("--n-components", type=int, default=3, help="latent factors (default 3)")
    p.add_argument("--search", default="exhaustive", choices=["exhaustive", "sequential"],
                   help="row-permutation search (default exhaustive)")
    p.add_argument("--random-state", type=int, default=0, help="ICA seed (default 0)")
    p.add_argument("--json", metavar="PATH", help="also write the report as JSON")


def _run(args: argparse.Namespace) -> int:
    benchmarks = [b.strip() for b in args.benchmarks.split(",") if b.strip()]
    X, domains = read_leaderboard_csv(args.csv, args.domain_col, benchmarks)
    report = fit_report(X, domains, args.n_components, args.search, args.random_state)
    print(_format(report))
    if args.json:
        tmp = Path(str(args.json) + ".tmp")
        tmp.write_text(json.dumps(report, indent=2, allow_nan=False))
        tmp.replace(args.json)
        print(f"wrote {args.json}")
    return 0


register_command("fit", "run HCA on your own leaderboard CSV", _setup, _run)
