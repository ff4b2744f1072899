"""``hca fit`` and ``HCA`` without a silent answer (issue 35): parameters checked as
scikit-learn checks them, every odd table named before the work, the work estimated before
it starts, the report never lost, only the user's errors reported as the user's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import hca.cli.report as report_module
from hca import HCA
from hca.cli import is_user_error, main
from hca.cli.estimate import Shape, estimate_work
from hca.cli.fit import capped_n_jobs
from hca.cli.inputs import load_leaderboard
from hca.cli.report import range_coverage
from hca.validation import InputError, InvalidParameterError, check_domains

REPO = Path(__file__).resolve().parents[1]
BENCH = ["b1", "b2", "b3", "b4"]
#: Every refusal arrives within this many seconds (the issue's bound; the machine is shared).
SECONDS = 10.0


@pytest.fixture(scope="module")
def frame(scm_board):
    return scm_board(300)[0].copy()


@pytest.fixture(scope="module")
def csv(scm_board):
    return scm_board(300)[1]


def _run(args, capsys):
    start = time.perf_counter()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err, time.perf_counter() - start


def _fit_args(csv, *extra):
    return ["fit", csv, "--domain-col", "base", "--benchmarks", ",".join(BENCH),
            "--null-draws", 0, *extra]


def _one_error(err: str, code: int, message: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err


@pytest.fixture
def no_fit(monkeypatch):
    """Fail the test if a fit starts."""
    def refuse(*args, **kwargs):
        raise AssertionError("fitted although the input was refused")

    monkeypatch.setattr(report_module, "fit_seeds", refuse)


def _write(tmp_path, df, name="board.csv"):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


# --------------------------------------------------------------------------- HCA's parameters
@pytest.mark.parametrize("params, message", [
    ({"max_iter": 0}, r"'max_iter' parameter of HCA must be an int in the range \[1, inf\)\. "
                      r"Got 0 instead"),
    ({"max_iter": -5}, r"'max_iter' parameter of HCA must be an int in the range \[1, inf\)"),
    ({"tol": -1.0}, r"'tol' parameter of HCA must be a float in the range \[0.0, inf\) or None"),
    ({"tol": float("nan")}, r"'tol' parameter of HCA must be a float in the range"),
    ({"tol": float("inf")}, r"'tol' parameter of HCA must be a float in the range"),
    ({"n_components": 0}, r"'n_components' parameter of HCA must be an int in the range"),
    ({"beam_width": 0}, r"'beam_width' parameter of HCA"),
    ({"max_nodes": 0}, r"'max_nodes' parameter of HCA"),
    ({"n_restarts": 0}, r"'n_restarts' parameter of HCA"),
    ({"n_jobs": 0}, r"'n_jobs' parameter of HCA must be an int in the range \(-inf, -1\], "
                    r"an int in the range \[1, inf\) or None"),
    ({"ica": "jade"}, r"'ica' parameter of HCA must be a str among"),
    ({"random_state": "seed"}, r"'random_state' parameter of HCA"),
])
def test_hca_refuses_out_of_range_parameters_before_any_work(frame, params, message,
                                                              monkeypatch):
    import hca.estimator.model as model

    monkeypatch.setattr(model, "fit_icas", lambda *a, **k: pytest.fail("ICA ran"))
    with pytest.raises(InvalidParameterError, match=message):
        HCA(**params).fit(frame[BENCH], frame["base"])


def test_hca_declares_every_parameter_constraint():
    assert set(HCA._parameter_constraints) == set(HCA().get_params())
    # InvalidParameterError is a ValueError and a TypeError, as scikit-learn's own
    assert issubclass(InvalidParameterError, ValueError)


def test_valid_edge_parameters_still_fit(frame):
    from sklearn.exceptions import ConvergenceWarning

    from hca.validation import check_params

    with pytest.warns(ConvergenceWarning):
        model = HCA(max_iter=1, tol=0.0).fit(frame[BENCH], frame["base"])
    assert model.n_iter_ == 1 and np.isfinite(model.mic_)
    for n_jobs in (-1, -8, 1, 64, None):
        check_params(HCA(n_jobs=n_jobs))  # joblib's convention, 0 excepted


# --------------------------------------------------------------------------- feature names
def test_pipeline_names_its_outputs(frame):
    pipe = make_pipeline(StandardScaler(), HCA(3)).fit(frame[BENCH], frame["base"])
    assert list(pipe.get_feature_names_out()) == ["z1", "z2", "z3"]
    Z = pipe.transform(frame[BENCH])
    with pytest.warns(UserWarning, match="X has feature names, but HCA was fitted without"):
        named = pipe.set_output(transform="pandas").transform(frame[BENCH])
    assert list(named.columns) == ["z1", "z2", "z3"]
    np.testing.assert_allclose(named.to_numpy(), Z, rtol=1e-12)
    refit = make_pipeline(StandardScaler(), HCA(3)).set_output(transform="pandas")
    refit.fit(frame[BENCH], frame["base"])
    assert list(refit[-1].feature_names_in_) == BENCH
    assert list(refit.get_feature_names_out()) == ["z1", "z2", "z3"]
    hca_step = pipe[-1]
    assert not hasattr(hca_step, "feature_names_in_")
    assert list(hca_step.get_feature_names_out(["a", "b", "c", "d"])) == ["z1", "z2", "z3"]
    with pytest.raises(ValueError, match="input_features has 2 names but HCA was fitted on 4"):
        hca_step.get_feature_names_out(["a", "b"])


def test_named_fit_still_checks_input_features(frame):
    model = HCA().fit(frame[BENCH], frame["base"])
    with pytest.raises(ValueError, match="not the fitted benchmarks"):
        model.get_feature_names_out(["b2", "b1", "b3", "b4"])
    assert list(model.get_feature_names_out(BENCH)) == ["z1", "z2", "z3"]


# --------------------------------------------------------------------------- library inputs
def test_load_leaderboard_names_a_wrong_argument(csv):
    with pytest.raises(TypeError, match="path must name the CSV file .* got NoneType None"):
        load_leaderboard(None, "base", BENCH)
    with pytest.raises(TypeError, match="domain_col must be the name of a column"):
        load_leaderboard(csv, None, BENCH)
    with pytest.raises(TypeError, match="benchmarks must be a list of column names"):
        load_leaderboard(csv, "base", "b1,b2")
    board = load_leaderboard(csv, "base", BENCH)
    assert list(board.X.columns) == BENCH and len(board.domains) == 1200


def test_library_refuses_labels_that_print_the_same():
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    assert composed == unicodedata.normalize("NFC", decomposed) and composed != decomposed
    X = np.zeros((4, 1))
    with pytest.raises(InputError, match=r"domains 'cafe\\u0301' and 'caf\\xe9' print the same "
                                         r"\(they differ only in Unicode normal form\)"):
        check_domains([composed, decomposed, composed, decomposed], X)


@pytest.mark.parametrize("change, message", [
    (lambda X: np.where(np.arange(len(X))[:, None] == 17, [[1, 1e149, 1, 1]], X),
     "within domain 'D1' X column 'b2' varies 3e+147 times more than column 'b3'"),
    (lambda X: X * 1e-300, "X column 'b2' varies by only about 7e-301 within domain 'D1': its "
                           "squares underflow float64"),
    (lambda X: X * 1e160, "X column 'b1' holds 3.86e+161, beyond 1e+150: its square overflows"),
])
def test_library_refuses_scores_whose_squares_cannot_be_summed(frame, change, message,
                                                                monkeypatch):
    import hca.estimator.model as model

    monkeypatch.setattr(model, "fit_icas", lambda *a, **k: pytest.fail("ICA ran"))
    X = pd.DataFrame(change(frame[BENCH].to_numpy()), columns=BENCH)
    with pytest.raises(InputError, match=message.replace("+", r"\+").replace("(", r"\(")):
        HCA().fit(X, frame["base"].to_numpy())


# --------------------------------------------------------------------------- CLI: options
@pytest.mark.parametrize("option, value, message", [
    ("--n-jobs", 0, "argument --n-jobs: 0 jobs cannot run anything"),
    ("--n-components", 0, "argument --n-components: must be at least 1"),
    ("--max-nodes", 0, "argument --max-nodes: must be at least 1"),
    ("--n-restarts", -1, "argument --n-restarts: must be at least 1"),
    ("--time-limit", "nan", "argument --time-limit: must be a positive finite number"),
])
def test_cli_refuses_bad_options_at_once(csv, capsys, no_fit, option, value, message):
    code, out, err, seconds = _run(_fit_args(csv, option, value), capsys)
    _one_error(err, code, message)
    assert out == "" and seconds < SECONDS


def test_n_jobs_beyond_the_cores_is_capped_with_a_note(csv, capsys, tmp_path, monkeypatch):
    assert capped_n_jobs(1000, 2) == (2, "--n-jobs 1000 is more than the 2 cores this process "
                                          "can use: running 2 jobs")
    assert capped_n_jobs(-1, 2) == (-1, None) and capped_n_jobs(None, 2) == (None, None)
    import joblib

    monkeypatch.setattr(joblib, "cpu_count", lambda *a, **k: 1)  # no worker processes here
    dest = tmp_path / "r.json"
    code, _, err, _ = _run(_fit_args(csv, "--n-jobs", 1000, "--json", dest), capsys)
    assert code == 0, err
    assert err.splitlines()[0] == ("note: --n-jobs 1000 is more than the 1 core this process "
                                   "can use: running 1 job")
    assert json.loads(dest.read_text())["settings"]["n_jobs"] == 1


# --------------------------------------------------------------------------- CLI: odd tables
def test_two_spellings_of_a_domain_are_one(frame, tmp_path, capsys):
    df = frame.copy()
    first = df["base"] == df["base"].iloc[0]
    df.loc[first, "base"] = "cafe\u0301"
    df.loc[df.index[first][:5], "base"] = "caf\u00e9"
    dest = tmp_path / "r.json"
    code, out, err, _ = _run(_fit_args(_write(tmp_path, df), "--json", dest), capsys)
    assert code == 0, err
    report = json.loads(dest.read_text())
    assert sorted(report["domains"]) == sorted({"caf\u00e9", "D2", "D3", "D4"})
    assert report["domains"]["caf\u00e9"]["rows"] == 300
    assert ("note: domain 'café' is written in 2 Unicode forms ('caf\\xe9', 'cafe\\u0301'); "
            "they print the same and are compared after NFC normalisation, as one domain") in err


def test_domains_differing_in_invisible_characters_are_refused(frame, tmp_path, capsys, no_fit):
    df = frame.copy()
    df.loc[df.index[:5], "base"] = df["base"].iloc[0] + "\u200b"
    code, _, err, seconds = _run(_fit_args(_write(tmp_path, df)), capsys)
    _one_error(err, code, "domains 'D1\\u200b' and 'D1' print the same but differ in invisible "
                          "characters")
    assert seconds < SECONDS


def test_columns_on_different_scales_get_a_note(frame, tmp_path, capsys):
    df = frame.copy()
    df["b1"] = df["b1"] / 100  # one column within 0-1, the others up to about 50
    code, _, err, _ = _run(_fit_args(_write(tmp_path, df)), capsys)
    assert code == 0, err
    assert ("note: benchmark columns sit on different scales: 'b1' within +-0.714, 'b4' up to "
            "52.9 (74 times larger)") in err
    code, _, err, _ = _run(_fit_args(_write(tmp_path, frame, "same.csv")), capsys)
    assert code == 0 and "different scales" not in err


def test_a_near_constant_column_gets_a_note(frame, tmp_path, capsys):
    df = frame.copy()
    df["b1"] = 50 + 1e-7 * np.random.default_rng(0).standard_normal(len(df))
    code, _, err, _ = _run(_fit_args(_write(tmp_path, df)), capsys)
    assert code == 0, err
    assert "note: benchmark 'b1' is nearly constant within every domain (4)" in err
    df = frame.copy()
    rows = df.index[df["base"] == "D2"][:280]  # one value on 93% of a domain's rows
    df.loc[rows, "b3"] = 30.0
    code, _, err, _ = _run(_fit_args(_write(tmp_path, df, "mostly.csv")), capsys)
    assert code == 0, err
    assert "note: benchmark 'b3' is nearly constant within domain(s) D2 (one value on" in err


@pytest.mark.parametrize("change, message", [
    (lambda df: df.assign(b2=df["b2"].where(df.index != 17, 1e149)),
     "within domain 'D1' column 'b2' varies 4e+147 times more than column 'b3' (standard "
     "deviations 5.76e+147 and 1.32; 'b2' holds 1e+149 at data row 18)"),
    (lambda df: df.assign(**{b: df[b] * 1e-300 for b in BENCH}),
     "column 'b1' varies by only about 5e-300 within domain 'D1': the squares of such "
     "differences underflow float64"),
    (lambda df: df.assign(b2=df["b2"] * 1e10),
     "column 'b2' varies 6e+09 times more than column 'b3'"),
])
def test_scores_whose_squares_cannot_be_summed_are_refused(frame, tmp_path, capsys, no_fit,
                                                            change, message):
    code, _, err, seconds = _run(_fit_args(_write(tmp_path, change(frame))), capsys)
    _one_error(err, code, message)
    assert "rescale" in err and seconds < SECONDS


# --------------------------------------------------------------------------- work estimate
def _wide(n_domains: int, n_per: int, p: int) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    Z = rng.laplace(size=(n_domains * n_per, 3))
    X = 50 + Z @ rng.uniform(0, 10, size=(3, p)) + rng.standard_normal((n_domains * n_per, p))
    df = pd.DataFrame(X, columns=[f"c{i}" for i in range(p)])
    df.insert(0, "base", np.repeat([f"m{k:02d}" for k in range(n_domains)], n_per))
    return df


def test_work_beyond_the_time_limit_is_refused_with_the_estimate(tmp_path, capsys, no_fit):
    """The mechanism on a small table (``--time-limit`` 0.01 min); a table of 500 benchmarks
    and 50 domains meets the default limit of 60 min the same way (measured in the report
    of issue 35, not here: its CSV alone is 230 MB)."""
    df = _wide(12, 110, 100)  # 100 benchmark columns, 12 domains
    path = _write(tmp_path, df)
    cols = ",".join(df.columns[1:])
    code, _, err, seconds = _run(["fit", path, "--domain-col", "base", "--benchmarks", cols,
                                  "--search", "sequential", "--time-limit", 0.01], capsys)
    _one_error(err, code, "estimated work about")
    assert "is beyond --time-limit 0.01 min, so the fit was not started" in err
    assert "raise --time-limit above 0.01 (minutes)" in err
    assert seconds < SECONDS
    code, _, err, _ = _run(["fit", path, "--domain-col", "base", "--benchmarks", cols], capsys)
    _one_error(err, code, "exhaustive search over (3!)^12 = 2176782336 row orders exceeds")


def test_too_many_factors_for_the_search_table_are_refused(tmp_path, capsys, no_fit):
    df = _wide(4, 40, 30)
    cols = ",".join(df.columns[1:])
    code, _, err, seconds = _run(["fit", _write(tmp_path, df), "--domain-col", "base",
                                  "--benchmarks", cols, "--n-components", 25, "--search",
                                  "sequential"], capsys)
    _one_error(err, code, "--n-components 25 with 4 domains and 30 benchmarks: the search keeps")
    assert "beyond the limit of 2 GB" in err and seconds < SECONDS


def test_estimate_is_shown_before_a_long_fit(csv, capsys, monkeypatch, tmp_path):
    import hca.cli.fit as fit_module

    monkeypatch.setattr(fit_module, "ESTIMATE_NOTE_SECONDS", 0.0)
    code, _, err, _ = _run(_fit_args(csv), capsys)
    assert code == 0, err
    first = err.splitlines()[0]
    assert first.startswith("note: estimated work about ") and "one fit about" in first


def test_estimate_adds_up_fit_seeds_and_reference(frame):
    sizes = tuple(frame["base"].value_counts().to_numpy())
    est = estimate_work(Shape(sizes, 4, 3), seeds=3, null_draws=4, speed=1.0)
    assert (est.nodes_low, est.nodes_high) == (3**4, 3**4 + 6**4 + 6**4)
    assert est.total == pytest.approx(3 * (est.ica + est.search + est.rest) + 4 * est.per_draw)
    low, high = Shape((60,) * 50, 30, 3, "sequential", 1000).nodes()
    assert low <= high and high >= 1000  # the first beam may overrun a tiny budget


def test_default_reference_costs_no_more_than_a_long_fit():
    notes = []
    # one search of 100 s, a fit of 110 s: 5 draws would cost 500 s, so none by default
    assert report_module.reference_draws(100.0, 110.0, None, notes.append) == 0
    assert notes[0].startswith("no MIC reference by default: one random rotation needs a "
                               "search of about 2 min, and fewer than 5 fit in 2 min (a "
                               "minute, or the fit's time when longer)")
    assert "--null-draws 5 gives a rough range" in notes[0] and "60%" in notes[0]
    # a search of 5 s and a fit of 40 s: 12 draws fit in a minute
    notes.clear()
    assert report_module.reference_draws(5.0, 40.0, None, notes.append) == 12
    assert "uses 12 random rotations (not 20)" in notes[0] and "covers on average 76%" in notes[0]
    # a search of 60 s and a fit of 10 min: 10 draws, no more than the fit
    assert report_module.reference_draws(60.0, 600.0, None, None) == 10
    # a small input: 20 draws
    assert report_module.reference_draws(0.01, 0.5, None, None) == 20
    assert report_module.reference_draws(100.0, 110.0, 3, None) == 3


def test_range_coverage_matches_simulated_draws():
    rng = np.random.default_rng(0)
    for n in (5, 10, 20):
        draws = rng.uniform(size=(20000, n))  # the uniform's mass between quantiles
        lo, hi = np.quantile(draws, [0.05, 0.95], axis=1)
        assert np.mean(hi - lo) == pytest.approx(range_coverage(n), abs=0.01)
    assert range_coverage(20) == pytest.approx(0.814, abs=1e-3)


# --------------------------------------------------------------------------- --json stdout
@pytest.mark.slow  # a new process
def test_json_to_stdout_sends_the_report_to_stderr(csv, tmp_path):
    out = tmp_path / "out.txt"
    with open(out, "w") as fh:
        proc = subprocess.run(
            [sys.executable, "-m", "hca", *map(str, _fit_args(csv, "--json", "/dev/stdout"))],
            stdout=fh, stderr=subprocess.PIPE, text=True, cwd=REPO, timeout=300,
            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())  # the file holds the whole JSON, nothing else
    assert report["mic"] > 0
    assert proc.stderr.startswith("note: --json writes to standard output, so the report is "
                                  "printed on stderr")
    assert "Causal order: " in proc.stderr and "wrote /dev/stdout" in proc.stderr


@pytest.mark.slow  # two new processes
def test_json_to_the_file_stdout_goes_to_is_appended_not_replaced(csv, tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("kept\n")
    with open(out, "a") as fh:
        proc = subprocess.run(
            [sys.executable, "-m", "hca", *map(str, _fit_args(csv, "--json", out))],
            stdout=fh, stderr=subprocess.PIPE, text=True, cwd=REPO, timeout=300,
            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    head, _, body = out.read_text().partition("\n")
    assert head == "kept" and json.loads(body)["mic"] > 0  # appended, the earlier line kept
    assert "Causal order: " in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "hca", *map(str, _fit_args(csv, "--json", os.devnull))],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO, timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0 and "Causal order" not in proc.stderr  # /dev/null: no move


# --------------------------------------------------------------------------- errors
def test_only_the_libraries_input_errors_are_the_users():
    def raised(exc):
        try:
            raise exc
        except BaseException as err:  # noqa: BLE001
            return err

    from hca.validation import check_n_components

    assert is_user_error(InputError("bad column"))
    assert is_user_error(OSError(2, "No such file", "x.csv"))
    try:
        check_n_components("3", 4)
    except TypeError as err:
        assert is_user_error(err)  # a TypeError raised by hca's own validation
    assert not is_user_error(raised(ValueError("raised outside hca")))
    assert not is_user_error(RuntimeError("bug"))
    assert not is_user_error(MemoryError())
    try:
        np.linalg.eigvalsh(np.full((2, 2), np.nan))
        lin = None
    except np.linalg.LinAlgError as err:
        lin = err
    if lin is not None:
        assert not is_user_error(lin)  # a ValueError raised inside numpy
    try:
        pd.DataFrame({"a": [1]})["b"]
    except KeyError as err:
        assert not is_user_error(err)  # a LookupError raised inside pandas


def test_hca_debug_shows_a_user_errors_traceback(csv, capsys, monkeypatch):
    monkeypatch.setenv("HCA_DEBUG", "1")
    code, _, err, _ = _run(_fit_args(csv, "--benchmarks", "b1,nope"), capsys)
    assert code == 2 and err.startswith("Traceback") and "this is a bug" not in err
    assert err.strip().splitlines()[-1].startswith("error: ") and "'nope'" in err


@pytest.mark.parametrize("exc", [RuntimeError("internal"), MemoryError("big")])
def test_runtime_and_memory_errors_keep_their_traceback(csv, capsys, monkeypatch, exc):
    def bug(*args, **kwargs):
        raise exc

    monkeypatch.setattr(report_module, "fit_seeds", bug)
    monkeypatch.delenv("HCA_DEBUG", raising=False)
    code, _, err, _ = _run(_fit_args(csv), capsys)
    assert code == 1 and err.startswith("Traceback (most recent call last):"), err
    assert f"error: unexpected {type(exc).__name__}" in err and "this is a bug in hca" in err


# --------------------------------------------------------------------------- --help
def test_scorecard_help_imports_nothing_heavy():
    code = ("import sys, time\nfrom hca.cli import main\nt = time.perf_counter()\n"
            "try:\n    main(['scorecard', '--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('numpy', 'pandas', 'sklearn', 'scipy', 'hca.paper') "
            "if m in sys.modules]\nprint(heavy, file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == "[]"
    assert "--only CHAPTER_OR_ID" in proc.stdout and "--json FILE" in proc.stdout


def test_scorecard_chapters_are_the_papers():
    from hca.cli.scorecard import CHAPTERS
    from hca.paper.claims import CHAPTERS as PAPER_CHAPTERS

    assert CHAPTERS == tuple(PAPER_CHAPTERS)


def test_scorecard_json_is_checked_first_and_a_link_is_written_through(
        tmp_path, capsys, monkeypatch):
    """``scorecard --json`` into a missing folder stops before any chapter is computed; into a
    symbolic link it writes the link's target and the link stays a link."""
    import json

    from hca.cli import main
    from hca.paper import scorecard as sc

    def no_work(*args, **kwargs):
        raise AssertionError("the scorecard was computed before --json was checked")

    with monkeypatch.context() as m:
        m.setattr(sc, "build_scorecard", no_work)
        assert main(["scorecard", "--json", str(tmp_path / "no" / "s.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    target = tmp_path / "target.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert main(["scorecard", "--only", "data", "--json", str(link)]) == 0
    assert link.is_symlink() and link.resolve() == target.resolve()
    rows = json.loads(target.read_text(encoding="utf-8"))
    assert [r["id"] for r in rows] == [r.id for r in sc.build_scorecard(["data"]).rows]


# --------------------------------------------------------------------------- README
def test_readme_own_table_example_runs(frame, tmp_path, monkeypatch, capsys):
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text[text.index("On your own table"):]
    start = block.index("```python") + len("```python")
    code = block[start:block.index("```", start)]
    assert len(code.strip().splitlines()) == 5
    frame.rename(columns={"base": "base_model"}).to_csv(tmp_path / "my_board.csv", index=False)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 (the README's own code)
    model = namespace["model"]
    assert list(model.feature_names_in_) == BENCH and 0 <= model.mic_ < 1
    assert capsys.readouterr().out.startswith(f"{model.mic_}")
