"""The command line: ``python -m hca data`` and ``python -m hca fit`` (happy path, bad input)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from hca.cli import main
from hca.synthetic import simulate_scm


@pytest.fixture(scope="module")
def scm_csv(tmp_path_factory):
    sim = simulate_scm(n_domains=4, n_per_domain=1500, random_state=3)
    df = pd.DataFrame(sim.X, columns=list(sim.feature_names))
    df.insert(0, "base", sim.domains)
    path = tmp_path_factory.mktemp("cli") / "board.csv"
    df.to_csv(path, index=False)
    return path, list(sim.feature_names)


def _run(args, capsys):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_fit_happy_path_prints_and_writes_json(scm_csv, tmp_path, capsys):
    path, names = scm_csv
    out_json = tmp_path / "report.json"
    code, out, err = _run(["fit", str(path), "--domain-col", "base",
                           "--benchmarks", ",".join(names), "--json", str(out_json)], capsys)
    assert code == 0, err
    assert "MIC =" in out and "Causal order" in out and "z2 =" in out
    report = json.loads(out_json.read_text())
    assert report["n_models"] == 6000
    assert report["causal_order"] == ["z1", "z2", "z3"]
    assert set(report["graphs"]) == {"D1", "D2", "D3", "D4"}
    assert 0 <= report["mic"] < 0.05  # exact SCM: MIC near zero
    for a in report["alignment"]:
        assert a["benchmark"] in names and 0 <= a["r2"] <= 1 + 1e-9
    A = np.array(report["graphs"]["D1"]["weights"])
    assert A.shape == (3, 3) and np.allclose(np.triu(A), 0)
    assert not (tmp_path / "report.json.tmp").exists()


def test_fit_sequential_search_agrees(scm_csv, tmp_path, capsys):
    path, names = scm_csv
    reports = []
    for search in ("exhaustive", "sequential"):
        dest = tmp_path / f"{search}.json"
        code, _, err = _run(["fit", str(path), "--domain-col", "base", "--benchmarks",
                             ",".join(names), "--search", search, "--json", str(dest)], capsys)
        assert code == 0, err
        reports.append(json.loads(dest.read_text()))
    assert reports[0]["mic"] == pytest.approx(reports[1]["mic"], abs=1e-10)


@pytest.mark.parametrize("make_csv, args, message", [
    (lambda p: p.write_text('a,b\n1,"2\n'), ["--domain-col", "a", "--benchmarks", "a,b"],
     "malformed CSV"),
    (lambda p: p.write_text(""), ["--domain-col", "a", "--benchmarks", "a,b"], "malformed CSV"),
    (None, ["--domain-col", "nope", "--benchmarks", "b1,b2"], "missing column(s) ['nope']"),
    (None, ["--domain-col", "base", "--benchmarks", "b1,zz"], "missing column(s) ['zz']"),
    (lambda p: p.write_text("base,x1,x2\nA,1,oops\n"),
     ["--domain-col", "base", "--benchmarks", "x1,x2"], "'x2' is not numeric"),
    (lambda p: p.write_text("base,x1,x2\nA,1,\n"),
     ["--domain-col", "base", "--benchmarks", "x1,x2"], "missing score"),
    (lambda p: p.write_text("base,x1,x2,x3\n" + "A,1,2,3\nB,2,1,0\n" * 2),
     ["--domain-col", "base", "--benchmarks", "x1,x2,x3", "--n-components", "2"], "domain"),
])
def test_fit_bad_input_one_line_error(scm_csv, tmp_path, capsys, make_csv, args, message):
    path = scm_csv[0]
    if make_csv is not None:
        path = tmp_path / "bad.csv"
        make_csv(path)
    code, out, err = _run(["fit", str(path), *args], capsys)
    assert code != 0
    lines = [line for line in err.strip().splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and message in lines[0], err


def test_fit_missing_file(capsys):
    code, _, err = _run(["fit", "/nonexistent.csv", "--domain-col", "a", "--benchmarks", "a,b"],
                        capsys)
    assert code == 2 and "no such file" in err


def test_data_command_offline(capsys):
    code, out, _ = _run(["data", "--offline"], capsys)
    assert code == 0 and out.count("ok  ") == 7


def test_module_entry_point_exit_code(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "hca", "fit", str(tmp_path / "x.csv"),
                           "--domain-col", "a", "--benchmarks", "a,b"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("error:")
