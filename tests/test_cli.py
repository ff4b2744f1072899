"""The command line: ``python -m hca data`` and ``python -m hca fit`` (issue 20).

Happy paths and every option; the JSON report against its schema; each bad input of the
issue gives one line ``error: ...``, exit code 2, and leaves no file behind.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest

import hca
import hca.cli.report as report_module
from hca.cli import main, one_line
from hca.cli.notes import Notes, Progress
from hca.cli.report import ORIENTATION, report_schema
from hca.synthetic import simulate_scm

REPO = Path(__file__).resolve().parents[1]
BENCH = ["b1", "b2", "b3", "b4"]


@pytest.fixture(scope="module")
def scm_frame(scm_board):
    return scm_board(400)[0].copy()


@pytest.fixture(scope="module")
def scm_csv(scm_board):
    return scm_board(400)[1]


def _run(args, capsys):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _fit_args(csv, *extra):
    return ["fit", csv, "--domain-col", "base", "--benchmarks", ",".join(BENCH), *extra]


def _one_error(err: str, code: int, message: str) -> None:
    """Exactly one stderr line, ``error: ...`` containing ``message``; exit code 2."""
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err
    assert "Traceback" not in err


def _files(folder: Path) -> set:
    return {p.name for p in folder.iterdir()}


@pytest.fixture
def no_fit(monkeypatch):
    """Fail the test if anything is fitted (the error must come before any ICA)."""
    def refuse(*args, **kwargs):
        raise AssertionError("fitted although the input was refused")

    monkeypatch.setattr(report_module, "fit_seeds", refuse)


# --------------------------------------------------------------------------- happy paths
def test_fit_happy_path_prints_and_writes_valid_json(scm_csv, tmp_path, capsys):
    out_json = tmp_path / "report.json"
    code, out, err = _run(_fit_args(scm_csv, "--json", out_json), capsys)
    assert code == 0, err
    assert "MIC =" in out and "Causal order" in out and "z2 =" in out
    assert "certified optimal" in out and "One FastICA seed" in out
    report = json.loads(out_json.read_text())
    jsonschema.validate(report, report_schema())
    assert report["n_models"] == 1600 and report["input"]["rows_read"] == 1600
    assert report["causal_order"] == ["z1", "z2", "z3"]
    assert set(report["graphs"]) == set(report["domains"]) == {"D1", "D2", "D3", "D4"}
    assert report["search"]["method"] == "exhaustive" and report["search"]["certified"]
    assert report["search"]["row_orders"] == "(3!)^4 = 1296"
    assert report["hca_version"] == hca.__version__
    assert report["settings"]["random_state"] == 0 and report["settings"]["seeds"] == 1
    assert report["orientation"] == ORIENTATION
    assert report["stability"]["order_agreement"] == 1.0
    assert all(d["rows"] == 400 and d["ica_converged"] for d in report["domains"].values())
    assert 0 <= report["mic"] < 0.2
    A = np.array(report["graphs"]["D1"]["weights"])
    assert A.shape == (3, 3) and np.allclose(np.triu(A), 0)
    assert np.array(report["unmixing"]).shape == (3, 4)
    assert _files(tmp_path) == {"report.json"}  # no temporary file left


def test_report_matches_the_python_api(scm_frame, scm_csv, tmp_path, capsys):
    out_json = tmp_path / "r.json"
    code, _, err = _run(_fit_args(scm_csv, "--json", out_json), capsys)
    assert code == 0, err
    report = json.loads(out_json.read_text())
    model = hca.HCA(n_components=3).fit(scm_frame[BENCH], scm_frame["base"])
    adj = model.adjust(scm_frame[BENCH])
    assert report["mic"] == pytest.approx(model.mic_, abs=1e-12)
    np.testing.assert_allclose(report["unmixing"], adj.unmixing, atol=1e-10)
    # orientation: weights[i][j] is z_{j+1} -> z_{i+1}, unmixing maps x to z
    np.testing.assert_allclose(report["graphs"]["D2"]["weights"], adj.models["D2"].A, atol=1e-10)
    z = scm_frame[BENCH].to_numpy() @ np.array(report["unmixing"]).T
    np.testing.assert_allclose(z, model.transform(scm_frame[BENCH]) @ adj.L.T, atol=1e-8)


def test_fit_sequential_search_agrees(scm_csv, tmp_path, capsys):
    reports = []
    for search in ("exhaustive", "sequential"):
        dest = tmp_path / f"{search}.json"
        code, _, err = _run(_fit_args(scm_csv, "--search", search, "--json", dest), capsys)
        assert code == 0, err
        reports.append(json.loads(dest.read_text()))
    assert reports[0]["mic"] == pytest.approx(reports[1]["mic"], abs=1e-10)
    assert reports[1]["search"]["certified"] and reports[1]["search"]["enumerated"]


def test_seeds_report_agreement(scm_csv, tmp_path, capsys):
    dest = tmp_path / "seeds.json"
    code, out, err = _run(_fit_args(scm_csv, "--seeds", 3, "--random-state", 5,
                                    "--json", dest), capsys)
    assert code == 0, err
    st = json.loads(dest.read_text())["stability"]
    assert st["seeds"] == [5, 6, 7] and st["reference_seed"] == 5 and len(st["fits"]) == 3
    assert st["fits"][0]["same_order"] and st["fits"][0]["same_alignment"]
    for key in ("order_agreement", "alignment_agreement", "modal_alignment_share"):
        assert 1 / 3 - 1e-12 <= st[key] <= 1
    assert "Stability over 3 FastICA seeds (5-7)" in out


def test_uncertified_search_is_a_plain_note(tmp_path, capsys):
    sim = simulate_scm(n_domains=6, n_per_domain=60, n_benchmarks=4, alpha=0.3, offset=30.0,
                       random_state=1)
    df = pd.DataFrame(sim.X, columns=BENCH)
    df.insert(0, "base", sim.domains)
    csv = tmp_path / "b.csv"
    df.to_csv(csv, index=False)
    dest = tmp_path / "r.json"
    code, out, err = _run(_fit_args(csv, "--search", "sequential", "--max-nodes", 50,
                                    "--json", dest), capsys)
    assert code == 0, err
    report = json.loads(dest.read_text())
    assert report["search"]["certified"] is False and report["settings"]["max_nodes"] == 50
    assert "NOT certified" in out
    notes = [line for line in err.splitlines() if "did not certify" in line]
    assert len(notes) == 1 and notes[0].startswith("note: ") and "--max-nodes" in notes[0]
    assert "--search exhaustive ((3!)^6 = 46656 row orders)" in notes[0]
    assert notes[0][len("note: "):] in report["notes"]
    assert all(line.startswith("note: ") for line in err.strip().splitlines())


def test_warnings_become_one_line_notes(scm_csv, tmp_path, capsys, monkeypatch):
    def few_iterations(self, seed):
        return hca.HCA(n_components=self.n_components, random_state=seed, max_iter=2)

    monkeypatch.setattr(report_module.FitSettings, "estimator", few_iterations)
    code, _, err = _run(_fit_args(scm_csv, "--seeds", 2), capsys)
    assert code == 0, err
    lines = err.strip().splitlines()
    assert lines and all(line.startswith("note: ") for line in lines), err
    conv = [line for line in lines if "did not converge" in line]
    assert len(conv) == 1 and "in 4 of 4 domains" in conv[0] and "2 of 2 seeds" in conv[0]
    assert "Warning" not in err


def test_notes_collect_and_count():
    notes = Notes()
    for run in range(3):
        with notes.capture(run):
            warnings.warn("same\nthing", UserWarning)
            if run == 0:
                warnings.warn("only once", RuntimeWarning)
    assert notes.lines() == ["same thing", "only once (in 1 of 3 runs)"]
    assert notes.has("RuntimeWarning")
    notes.drop("RuntimeWarning")
    assert notes.lines() == ["same thing"]


def test_progress_only_after_delay(capsys):
    with Progress(2, enabled=True, delay=60) as progress:
        progress.stage("quick")
        progress.advance(2)
    assert capsys.readouterr().err == ""
    with Progress(2, enabled=True, delay=0) as progress:
        progress.stage("slow step")
        progress.advance()
    assert "hca fit" in capsys.readouterr().err
    with Progress(2, enabled=None) as progress:  # stderr is not a terminal under pytest
        assert progress.bar is None


def test_dropna_and_min_domain_size_are_reported(scm_frame, tmp_path, capsys):
    df = scm_frame.copy()
    df.loc[[0, 1], "b2"] = np.nan  # two incomplete rows of D1
    df.loc[2, "base"] = np.nan  # a row without a domain
    small = df[df["base"] == "D4"].head(3).assign(base="tiny")
    df = pd.concat([df, small], ignore_index=True)
    csv = tmp_path / "holes.csv"
    df.to_csv(csv, index=False)
    code, _, err = _run(_fit_args(csv), capsys)
    _one_error(err, code, "--dropna")
    dest = tmp_path / "r.json"
    code, out, err = _run(_fit_args(csv, "--dropna", "--min-domain-size", 10, "--json", dest),
                          capsys)
    assert code == 0, err
    report = json.loads(dest.read_text())
    inp = report["input"]
    assert inp["dropped_incomplete"] == {"(missing domain)": 1, "D1": 2}
    assert inp["dropped_domains"] == {"tiny": 3}
    assert inp["rows_read"] == 1603 and inp["rows_used"] == 1597 == report["n_models"]
    assert report["domains"]["D1"]["rows"] == 397
    assert report["domains"]["D1"]["dropped_incomplete"] == 2
    assert "3 incomplete rows dropped (--dropna)" in out and "tiny 3" in out
    jsonschema.validate(report, report_schema())


def test_small_domain_hint(scm_frame, tmp_path, capsys, no_fit):
    df = pd.concat([scm_frame, scm_frame.head(2).assign(base="tiny")], ignore_index=True)
    csv = tmp_path / "small.csv"
    df.to_csv(csv, index=False)
    code, _, err = _run(_fit_args(csv), capsys)
    _one_error(err, code, "domain 'tiny' has 2 models but at least 4 (the number of "
                          "benchmarks) plus one are needed")  # the library's own rule
    assert "--min-domain-size 5" in err


@pytest.mark.parametrize(
    "suffix, magic", [(".svg", b"<?xml"), (".png", b"\x89PNG"), (".pdf", b"%PDF")]
)
def test_plot(scm_csv, tmp_path, capsys, suffix, magic):
    dest = tmp_path / f"fig{suffix}"
    code, out, err = _run(_fit_args(scm_csv, "--plot", dest), capsys)
    assert code == 0, err
    assert dest.read_bytes().startswith(magic) and f"wrote {dest}" in out
    assert _files(tmp_path) == {dest.name}
    # the same fit draws the same bytes: no creation date, fixed SVG ids
    again = tmp_path / "again" / dest.name
    again.parent.mkdir()
    code, _, err = _run(_fit_args(scm_csv, "--plot", again), capsys)
    assert code == 0, err
    assert again.read_bytes() == dest.read_bytes()


# --------------------------------------------------------------------------- bad outputs
@pytest.mark.parametrize("make_target, message", [
    (lambda d: d / "folder", "is a folder"),
    (lambda d: d / "missing" / "r.json", "does not exist"),
    (lambda d: d / "afile.txt" / "r.json", "is not a folder"),
    (lambda d: Path("/proc/hca-report.json"), "cannot write in /proc"),
])
def test_json_target_refused_before_fitting(scm_csv, tmp_path, capsys, no_fit,
                                            make_target, message):
    (tmp_path / "folder").mkdir()
    (tmp_path / "afile.txt").write_text("x")
    before = _files(tmp_path)
    code, _, err = _run(_fit_args(scm_csv, "--json", make_target(tmp_path)), capsys)
    _one_error(err, code, message)
    assert _files(tmp_path) == before
    assert not list((tmp_path / "folder").iterdir())


def test_outputs_never_overwrite_the_input(scm_csv, tmp_path, capsys, no_fit):
    code, _, err = _run(_fit_args(scm_csv, "--json", scm_csv), capsys)
    _one_error(err, code, "would overwrite the input file")
    code, _, err = _run(_fit_args(scm_csv, "--json", tmp_path / "a.svg", "--plot",
                                  tmp_path / "a.svg"), capsys)
    _one_error(err, code, "--json and --plot name the same file")
    code, _, err = _run(_fit_args(scm_csv, "--plot", tmp_path / "fig.jpg"), capsys)
    _one_error(err, code, "must end in .svg, .png, .pdf (got '.jpg')")
    assert _files(tmp_path) == set()


def test_failure_after_fitting_leaves_nothing(scm_csv, tmp_path, capsys, monkeypatch):
    import hca.plots.report as plot_module

    def broken(adjusted, assignment, path, max_domains=12):
        path.write_text("half a figure")
        raise RuntimeError("renderer failed")

    monkeypatch.setattr(plot_module, "plot_fit_report", broken)
    code, _, err = _run(_fit_args(scm_csv, "--json", tmp_path / "r.json", "--plot",
                                  tmp_path / "f.svg"), capsys)
    # a RuntimeError is a bug, not bad input (issue 35): its traceback, exit code 1
    assert code == 1 and "Traceback" in err, err
    assert "error: unexpected RuntimeError: renderer failed; this is a bug in hca" in err
    assert _files(tmp_path) == set()


# --------------------------------------------------------------------------- bad CSVs
BAD_CSVS = [
    ("malformed", lambda p: p.write_text('base,b1,b2\nA,1,"2\n'), "b1,b2", "malformed CSV"),
    ("empty", lambda p: p.write_text(""), "b1,b2", "malformed CSV (empty file"),
    ("not utf-8", lambda p: p.write_bytes(b"base,b1,b2\n\xff\xfe,1,2\n"), "b1,b2",
     "not UTF-8"),
    ("header only", lambda p: p.write_text("base,b1,b2\n"), "b1,b2", "no data rows"),
    ("missing column", lambda p: p.write_text("base,b1,b2\nA,1,2\n"), "b1,zz",
     "missing column(s) ['zz']"),
    ("duplicated header", lambda p: p.write_text("base,b1,b2,b1\nA,1,2,3\n"), "b1,b2",
     "column 'b1' appears 2 times in the header (columns 2, 4)"),
    ("non-numeric", lambda p: p.write_text("base,b1,b2\nA,1,oops\n"), "b1,b2",
     "'b2' is not numeric (data row 1 holds 'oops')"),
    ("infinite", lambda p: p.write_text("base,b1,b2\nA,1,2\nB,inf,3\n"), "b1,b2",
     "'b1' has an infinite score (data row 2"),
    ("missing score", lambda p: p.write_text("base,b1,b2\nA,1,\n"), "b1,b2",
     "a missing score in ['b2'] (data row 1)"),
    ("missing domain", lambda p: p.write_text("base,b1,b2\n,1,2\n"), "b1,b2",
     "column 'base' has a missing domain (data row 1)"),
    ("one domain", lambda p: p.write_text("base,b1,b2\n" + "A,1,2\nA,2,1\nA,3,5\n"), "b1,b2",
     "HCA needs at least 2 domains, found 1"),
    ("one benchmark", lambda p: p.write_text("base,b1\nA,1\n"), "b1",
     "--benchmarks needs at least two columns"),
    ("benchmark twice", lambda p: p.write_text("base,b1,b2\nA,1,2\n"), "b1,b1,b2",
     "lists column(s) ['b1'] more than once"),
    ("domain as benchmark", lambda p: p.write_text("base,b1,b2\nA,1,2\n"), "base,b1",
     "--domain-col 'base' is also listed in --benchmarks"),
]


@pytest.mark.parametrize("name, make_csv, benchmarks, message", BAD_CSVS,
                         ids=[c[0] for c in BAD_CSVS])
def test_bad_csv_one_line_error(tmp_path, capsys, no_fit, name, make_csv, benchmarks,
                                message):
    csv = tmp_path / "bad.csv"
    make_csv(csv)
    code, _, err = _run(["fit", csv, "--domain-col", "base", "--benchmarks", benchmarks,
                         "--json", tmp_path / "r.json", "--plot", tmp_path / "f.svg"], capsys)
    _one_error(err, code, message)
    assert _files(tmp_path) == {"bad.csv"}


def test_csv_path_problems(tmp_path, capsys, no_fit):
    code, _, err = _run(["fit", "/nonexistent.csv", "--domain-col", "a", "--benchmarks",
                         "b,c"], capsys)
    _one_error(err, code, "/nonexistent.csv: no such file")
    code, _, err = _run(["fit", tmp_path, "--domain-col", "a", "--benchmarks", "b,c"], capsys)
    _one_error(err, code, "is a folder, not a CSV file")


def test_duplicated_unused_column_is_fine(scm_frame, tmp_path, capsys):
    csv = tmp_path / "dup.csv"
    lines = scm_frame.to_csv(index=False).splitlines()
    lines = [lines[0] + ",note,note"] + [line + ",x,y" for line in lines[1:]]
    csv.write_text("\n".join(lines) + "\n")
    code, _, err = _run(_fit_args(csv), capsys)
    assert code == 0, err


@pytest.mark.parametrize("args, message", [
    (["--n-components", "0"], "argument --n-components: must be at least 1, got 0"),
    (["--n-components", "x"], "expected an integer, got 'x'"),
    (["--seeds", "0"], "argument --seeds: must be at least 1"),
    (["--max-nodes", "-3"], "argument --max-nodes: must be at least 1"),
    (["--n-restarts", "0"], "argument --n-restarts"),
    (["--min-domain-size", "-1"], "argument --min-domain-size"),
    (["--search", "greedy"], "invalid choice: 'greedy'"),
    (["--random-state", "-1"], "argument --random-state"),
])
def test_bad_options_one_line(scm_csv, capsys, no_fit, args, message):
    code, _, err = _run(_fit_args(scm_csv, *args), capsys)
    _one_error(err, code, message)


def test_too_many_components(scm_csv, capsys, no_fit):
    code, _, err = _run(_fit_args(scm_csv, "--n-components", 5), capsys)
    _one_error(err, code, "--n-components 5 exceeds the number of benchmarks (4)")


def test_exhaustive_too_large_refused_before_ica(tmp_path, capsys, no_fit):
    sim = simulate_scm(n_domains=1000, n_per_domain=7, random_state=0)
    df = pd.DataFrame(sim.X, columns=list(sim.feature_names))
    df.insert(0, "base", sim.domains)
    csv = tmp_path / "k1000.csv"
    df.to_csv(csv, index=False)
    code, _, err = _run(["fit", csv, "--domain-col", "base", "--benchmarks",
                         ",".join(sim.feature_names), "--n-components", 6], capsys)
    _one_error(err, code, "exhaustive search over (6!)^1000 ~ 10^2857 row orders exceeds "
                          "the limit of 5,000,000; use --search sequential")
    assert len(err) < 160


# Checks that belong to the library (hca.validation): the command line passes its one-line
# errors through, naming the column or the domain.
LIBRARY_CHECKS = [
    ("constant within a domain", lambda df: df.assign(b2=np.where(df["base"] == "D2", 7.0,
                                                                 df["b2"])), "b2"),
    ("as many models as benchmarks", lambda df: pd.concat(
        [df, df.head(4).assign(base="four")], ignore_index=True), "four"),
]


@pytest.mark.parametrize("name, change, named", LIBRARY_CHECKS, ids=[c[0] for c in LIBRARY_CHECKS])
def test_library_checks_pass_through(scm_frame, tmp_path, capsys, name, change, named):
    csv = tmp_path / "lib.csv"
    change(scm_frame).to_csv(csv, index=False)
    code, _, err = _run(_fit_args(csv), capsys)
    assert code == 2 and "Traceback" not in err
    _one_error(err, code, named)


# --------------------------------------------------------------------------- data command
def test_data_command_offline(capsys):
    code, out, _ = _run(["data", "--offline"], capsys)
    assert code == 0 and out.count("ok  ") == 7


@pytest.mark.parametrize("variable, value, message", [
    ("HCA_CACHE_DIR", "file", "HCA_CACHE_DIR={} is a file, not a folder"),
    ("HCA_DATA_DIR", "file", "HCA_DATA_DIR={} is a file, not a folder"),
    ("HCA_DATA_DIR", "missing", "HCA_DATA_DIR={} does not exist"),
])
def test_data_dirs_misconfigured(tmp_path, capsys, monkeypatch, variable, value, message):
    target = tmp_path / "x"
    if value == "file":
        target.write_text("not a folder")
    monkeypatch.setenv(variable, str(target))
    before = _files(tmp_path)
    code, _, err = _run(["data"], capsys)
    _one_error(err, code, message.format(target))
    assert _files(tmp_path) == before


# --------------------------------------------------------------------------- the program
def test_module_entry_point_exit_code(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "hca", "fit", str(tmp_path / "x.csv"),
                           "--domain-col", "a", "--benchmarks", "a,b"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("error:")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_help_imports_nothing_heavy():
    """``--help`` stays fast: no numpy, pandas, scikit-learn or matplotlib is imported."""
    code = ("import sys\nfrom hca.cli import main\n"
            "for argv in (['--help'], ['fit', '--help'], ['data', '--help']):\n"
            "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "heavy = [m for m in ('numpy', 'pandas', 'sklearn', 'matplotlib', 'scipy') "
            "if m in sys.modules]\nprint(heavy, file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == "[]"
    assert "--max-nodes" in proc.stdout and "--seeds" in proc.stdout


def test_unexpected_error_is_one_line(capsys, monkeypatch, scm_csv):
    def bug(*args, **kwargs):
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(report_module, "fit_seeds", bug)
    monkeypatch.delenv("HCA_DEBUG", raising=False)
    code, _, err = _run(_fit_args(scm_csv), capsys)
    assert code == 1 and err.startswith("Traceback") and "ZeroDivisionError: oops" in err, err
    assert err.strip().splitlines()[-1].startswith(
        "error: unexpected ZeroDivisionError: oops; this is a bug in hca, not in your input")


def test_one_line():
    assert one_line(ValueError("a\n  b")) == "a b"
    assert one_line(KeyError("unknown 'x'")) == "unknown 'x'"
    assert one_line(FileNotFoundError(2, "No such file or directory", "/x")) == \
        "/x: No such file or directory"
    assert len(one_line("x" * 5000)) == 600


def test_schema_is_package_data():
    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert '"hca.cli" = ["report.schema.json", "calibration.json"]' in (
        REPO / "pyproject.toml").read_text()
    assert set(schema["required"]) == set(schema["properties"])


def test_load_leaderboard_goes_through_domain_data(tmp_path, monkeypatch):
    import hca.cli.inputs as inputs

    calls = []
    real = inputs.domain_data

    def spy(*args, **kwargs):
        calls.append(kwargs.get("by"))
        return real(*args, **kwargs)

    monkeypatch.setattr(inputs, "domain_data", spy)
    path = tmp_path / "board.csv"
    path.write_text("dom,x,y\n1,0.1,0.2\n2,0.3,0.4\n1,0.5,0.7\n1,0.6,0.1\n")
    board = inputs.load_leaderboard(path, "dom", ["x", "y"], min_domain_size=2)
    assert calls == ["dom"]  # the library's one frame -> (X, domains) step
    assert list(board.domains) == ["1", "1", "1"] and board.domains.dtype == object
    assert board.X["y"].tolist() == [0.2, 0.7, 0.1] and list(board.X.index) == [0, 1, 2]
    assert board.dropped_domains == {"2": 1}


def test_run_in_this_process_equals_the_command_in_a_new_one(tmp_path):
    """``hca.cli.run(ARGS)`` gives the exit code, stdout and stderr of ``python -m hca ARGS``
    (a help text, a one-line refusal)."""
    from hca.cli import run

    bad = tmp_path / "bad.csv"
    bad.write_text("base,a,b\nx,1,2\n")
    for args in (["fit", "--help"], ["fit", bad, "--domain-col", "nope"], ["nonsense"]):
        here = run(*args)
        there = subprocess.run([sys.executable, "-m", "hca", *map(str, args)],
                               capture_output=True, text=True, cwd=REPO)
        assert (here.returncode, here.stdout, here.stderr) == (
            there.returncode, there.stdout, there.stderr), args
    assert run("fit", bad, "--domain-col", "nope").returncode == 2
