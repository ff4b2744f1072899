"""``hca fit`` reads what the user meant and says what it assumed (issue 49): domain labels
as written, merged spellings, placeholders, scales inside a column, input from a pipe,
estimates from a measured calibration, memory refused before the work, clean stops on
SIGTERM and SIGHUP, output that cannot be encoded, search and trust notes that say why.

Each case as the user meets it: an exit code and one line (or the library's exception), and
every refusal before the fit starts, within :data:`SECONDS` on this machine.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest

import hca.cli.report as report_module
from hca.cli import main
from hca.cli.estimate import (
    MemoryEstimate,
    Shape,
    WorkEstimate,
    check_memory,
    check_work,
    estimate_memory,
    estimate_work,
    load_calibration,
)
from hca.cli.inputs import load_leaderboard
from hca.cli.labels import drop_labels, is_placeholder, normalise_labels, placeholder_note
from hca.cli.memory import Headroom, headroom
from hca.cli.notes import Progress
from hca.cli.report import RECOVERY_STUDY, recovery_evidence, report_schema
from hca.cli.scales import scale_findings
from hca.cli.sources import open_source
from hca.synthetic import simulate_scm
from hca.validation import InputError

REPO = Path(__file__).resolve().parents[1]
BENCH = ["b1", "b2", "b3", "b4"]
#: Every refusal arrives within this many seconds (the issue's bound). In a new process the
#: bound is on its CPU time: the machine is shared, and under load its wall time follows the
#: load (importing numpy and pandas took 11 s of wall time for 1.2 s of CPU at a load of 9).
SECONDS = 10.0


def _child_cpu(run):
    """``run()``'s result and the CPU seconds of the processes it started and waited for."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


@pytest.fixture(scope="module")
def frame(scm_board):
    return scm_board(300)[0].copy()


@pytest.fixture(scope="module")
def csv(scm_board):
    return scm_board(300)[1]


@pytest.fixture
def no_fit(monkeypatch):
    """Fail the test if a fit starts."""

    def refuse(*args, **kwargs):
        raise AssertionError("fitted although the input was refused")

    monkeypatch.setattr(report_module, "fit_seeds", refuse)


def _run(args, capsys):
    start = time.perf_counter()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err, time.perf_counter() - start


def _fit_args(csv, *extra, col="base"):
    return ["fit", csv, "--domain-col", col, "--benchmarks", ",".join(BENCH), "--null-draws", 0,
            *extra]


def _one_error(err: str, code: int, message: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err
    assert "Traceback" not in err


def _notes(err: str) -> list[str]:
    return [line[len("note: "):] for line in err.splitlines() if line.startswith("note: ")]


def _write(tmp_path, df, name="board.csv"):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


def _cli(*args, stdin=None, env=None, cwd=None, **kwargs):
    """``python -m hca ARGS`` in a new process (for pipes, signals and encodings)."""
    return subprocess.run([sys.executable, "-m", "hca", *map(str, args)], input=stdin,
                          capture_output=True, env={**os.environ, **(env or {})}, cwd=cwd,
                          **kwargs)


# --------------------------------------------------------------------------- labels as written
def test_domain_codes_are_read_as_written(frame, tmp_path, capsys):
    """"01", "1", "002" and "2" are four domains, not two numbers (the issue's silent case)."""
    codes = {"D1": "01", "D2": "1", "D3": "002", "D4": "2"}
    path = _write(tmp_path, frame.assign(base=frame["base"].map(codes)))
    dest = tmp_path / "r.json"
    code, out, err, _ = _run(_fit_args(path, "--json", dest), capsys)
    assert code == 0, err
    report = json.loads(dest.read_text())
    assert sorted(report["domains"]) == ["002", "01", "1", "2"]
    assert "4 domains (002: 300, 01: 300, 1: 300, 2: 300)" in out
    labels = frame["base"].map({"D1": "1", "D2": "1.0", "D3": "NA", "D4": "None"})
    board = load_leaderboard(_write(tmp_path, frame.assign(base=labels), "b.csv"), "base", BENCH)
    assert board.domain_sizes() == {"1": 300, "1.0": 300, "NA": 300, "None": 300}


def test_empty_domain_cell_is_missing(frame, tmp_path, capsys, no_fit):
    df = frame.astype({"base": object}).copy()
    df.loc[5, "base"] = None
    code, _, err, seconds = _run(_fit_args(_write(tmp_path, df)), capsys)
    _one_error(err, code, "column 'base' has a missing domain (data row 6); pass --dropna")
    assert seconds < SECONDS


def test_labels_differing_only_in_case_are_merged_with_a_note(frame, tmp_path, capsys):
    base = frame["base"].map({"D1": "LlamaForCausalLM", "D2": "b", "D3": "c", "D4": "d"})
    base.iloc[:40] = "LLaMAForCausalLM"  # 40 of D1's 300 rows in another case
    dest = tmp_path / "r.json"
    code, out, err, _ = _run(_fit_args(_write(tmp_path, frame.assign(base=base)), "--json",
                                       dest), capsys)
    assert code == 0, err
    note = next(n for n in _notes(err) if "differ only in case" in n)
    assert ("'LlamaForCausalLM' (260 rows), 'LLaMAForCausalLM' (40 rows) differ only in case "
            "and are merged as 'LlamaForCausalLM' (300 rows)") in note
    report = json.loads(dest.read_text())
    assert report["domains"]["LlamaForCausalLM"]["rows"] == 300
    assert report["input"]["merged_spellings"] == {
        "LlamaForCausalLM": {"LlamaForCausalLM": 260, "LLaMAForCausalLM": 40}}
    jsonschema.validate(report, report_schema())


def test_case_and_invisible_differences_are_refused_together(frame, tmp_path, capsys, no_fit):
    base = frame["base"].map({"D1": "Llama", "D2": "llama\u200b", "D3": "c", "D4": "d"})
    code, _, err, seconds = _run(_fit_args(_write(tmp_path, frame.assign(base=base))), capsys)
    _one_error(err, code, "print the same but differ in invisible characters")
    assert seconds < SECONDS


def test_placeholder_labels_get_a_note_with_counts_and_how_to_drop_them(frame, tmp_path,
                                                                         capsys):
    base = frame["base"].map({"D1": "Removed", "D2": "?", "D3": "Qwen/Qwen2.5-7B", "D4": "N/A"})
    path = _write(tmp_path, frame.assign(base=base))
    code, _, err, _ = _run(_fit_args(path), capsys)
    assert code == 0, err
    note = next(n for n in _notes(err) if "placeholder" in n)
    assert "'?' (300 rows), 'N/A' (300 rows) and 'Removed' (300 rows)" in note
    assert "drop them with --drop-domain '?' --drop-domain N/A --drop-domain Removed" in note
    dest = tmp_path / "r.json"
    code, out, err, _ = _run(_fit_args(path, "--drop-domain", "removed", "--drop-domain", "?",
                                       "--json", dest, "--n-components", 2), capsys)
    assert code == 0, err
    report = json.loads(dest.read_text())
    assert report["input"]["dropped_labels"] == {"?": 300, "Removed": 300}
    assert report["input"]["placeholder_domains"] == {"N/A": 300}
    assert "600 rows of 2 domain label(s) dropped (--drop-domain)" in out
    jsonschema.validate(report, report_schema())


def test_drop_domain_that_matches_nothing_is_refused(csv, capsys, no_fit):
    code, _, err, seconds = _run(_fit_args(csv, "--drop-domain", "Unknwn"), capsys)
    _one_error(err, code, "--drop-domain 'Unknwn': no such domain label in the CSV")
    assert seconds < SECONDS


@pytest.mark.parametrize("label, expected", [
    ("?", True), ("Unknown", True), (" removed ", True), ("N/A", True), ("none", True),
    ("-", True), ("   ", True), ("unknown-7b", False), ("Llama-3-8B", False), ("01", False),
])
def test_placeholder_words(label, expected):
    assert is_placeholder(label) is expected


def test_labels_library_functions():
    labels = pd.Series(["A", "a", "a", "B", None, "cafe\u0301", "caf\u00e9"])
    out = normalise_labels(labels)
    assert out.values.tolist()[:4] == ["a", "a", "a", "B"] and pd.isna(out.values.iloc[4])
    assert out.values.iloc[5] == out.values.iloc[6] == "caf\u00e9"
    assert out.case_spellings == {"a": {"a": 2, "A": 1}}
    keep, dropped = drop_labels(out.values, ["b"])
    assert keep.tolist() == [True, True, True, False, True, True, True] and dropped == {"B": 1}
    with pytest.raises(InputError, match="'zz': no such domain label"):
        drop_labels(out.values, ["zz"])
    assert placeholder_note({"A": 3}) is None
    assert placeholder_note({"?": 1}).startswith("domain label '?' (1 row) looks like a")


# --------------------------------------------------------------------------- scales
def _scaled(frame, rows=None, columns=BENCH, factor=100.0):
    df = frame.copy()
    idx = df.index if rows is None else rows
    df.loc[idx, columns] = df.loc[idx, columns] / factor
    return df


def test_one_domain_on_another_scale_is_named(frame, tmp_path, capsys):
    df = _scaled(frame, frame.index[frame["base"] == "D2"])
    code, _, err, _ = _run(_fit_args(_write(tmp_path, df)), capsys)
    assert code == 0, err
    notes = _notes(err)
    scale = [n for n in notes if "another scale" in n]
    assert len(scale) == 1 and "'D2' (300 rows, about" in scale[0]
    assert "times smaller in every benchmark" in scale[0]
    assert not [n for n in notes if "nearly constant" in n]  # not the wrong cause


def test_two_domains_on_another_scale_are_not_called_constant(frame, tmp_path, capsys):
    df = _scaled(frame, frame.index[frame["base"].isin(["D1", "D2"])])
    code, _, err, _ = _run(_fit_args(_write(tmp_path, df)), capsys)
    assert code == 0, err
    notes = _notes(err)
    assert not [n for n in notes if "nearly constant" in n], notes
    scale = [n for n in notes if "another scale" in n]
    assert len(scale) == 1 and "2 domains sit on another scale than the other 2 domains" in scale[0]


def test_half_of_a_domains_rows_on_another_scale_are_named(frame, tmp_path, capsys):
    rows = frame.index[frame["base"] == "D3"][::2]  # every other row of D3: 150 rows
    code, _, err, _ = _run(_fit_args(_write(tmp_path, _scaled(frame, rows))), capsys)
    assert code == 0, err
    note = next(n for n in _notes(err) if "of the 300 rows of domain 'D3'" in n)
    first = ", ".join(str(r + 1) for r in rows[:5])
    assert note.startswith(f"150 of the 300 rows of domain 'D3' (data rows {first} and 145 more)")
    assert "than the domain's other rows in every benchmark" in note


def test_half_of_a_column_on_another_scale_is_named(frame, tmp_path, capsys):
    rows = frame.index[::2]
    dest = tmp_path / "r.json"
    df = _scaled(frame, rows, ["b2"])
    code, _, err, _ = _run(_fit_args(_write(tmp_path, df), "--json", dest), capsys)
    assert code == 0, err
    note = next(n for n in _notes(err) if n.startswith("benchmark 'b2':"))
    report = json.loads(dest.read_text())
    (finding,) = report["input"]["scale_findings"]
    assert finding["kind"] == "cells" and finding["columns"] == ["b2"]
    assert finding["n_rows"] >= 0.9 * len(rows)  # nearly every scaled row, named
    assert set(finding["data_rows"]) <= {r + 1 for r in rows}
    assert "hold scores about" in note and "times smaller than the rest of their row says" in note


def test_one_scale_gives_no_scale_note_and_constant_still_is(frame, tmp_path, capsys):
    assert scale_findings(frame[BENCH].to_numpy(), frame["base"].to_numpy(), BENCH) == []
    df = frame.copy()
    d1 = df["base"] == "D1"
    df.loc[d1, "b3"] = 42.0
    df.loc[df.index[d1][:20], "b3"] = 42.5  # one value on 280 of 300 rows
    code, _, err, _ = _run(_fit_args(_write(tmp_path, df)), capsys)
    assert code == 0, err
    notes = _notes(err)
    assert any("benchmark 'b3' is nearly constant within domain(s) D1" in n for n in notes)
    assert not [n for n in notes if "another scale" in n]


def test_scale_check_leaves_the_public_tables_alone(v1):
    """The four public tables of the book: no finding (the thresholds' calibration)."""
    from hca.data import V1_BENCHMARKS

    df = v1.dropna(subset=[*V1_BENCHMARKS, "architecture"])
    sizes = df["architecture"].value_counts()
    df = df[df["architecture"].map(sizes) > len(V1_BENCHMARKS)]
    cols = list(V1_BENCHMARKS)
    assert scale_findings(df[cols].to_numpy(float), df["architecture"].to_numpy(str), cols) == []


# --------------------------------------------------------------------------- pipes and files
def test_csv_from_a_pipe_is_read_once(csv):
    data = Path(csv).read_bytes()
    args = ["fit", "-", "--domain-col", "base", "--benchmarks", ",".join(BENCH), "--null-draws", 0]
    for name in ("-", "/dev/stdin"):
        proc = _cli(*(["fit", name] + args[2:]), stdin=data)
        assert proc.returncode == 0, proc.stderr
        assert b"HCA on 1200 models, 4 benchmarks, 4 domains" in proc.stdout
    proc = subprocess.run(["bash", "-c", f'"{sys.executable}" -m hca fit <(cat "{csv}") '
                           f'--domain-col base --benchmarks {",".join(BENCH)} --null-draws 0'],
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert b"HCA on 1200 models" in proc.stdout


def test_named_fifo_is_read_once(csv, tmp_path):
    fifo = tmp_path / "board.fifo"
    os.mkfifo(fifo)
    data = Path(csv).read_bytes()

    def feed():
        with open(fifo, "wb") as fh:
            fh.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    board = load_leaderboard(fifo, "base", BENCH)
    writer.join(timeout=10)
    assert board.stream and board.X.shape == (1200, 4)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # left as it was


@pytest.mark.parametrize("make, message", [
    (lambda tmp: Path("/dev/zero"), "/dev/zero: not a regular file (a character device)"),
    (lambda tmp: tmp, "is a folder, not a CSV file"),
    (lambda tmp: tmp / "missing.csv", "missing.csv: no such file"),
])
def test_non_regular_inputs_say_what_they_are(tmp_path, capsys, no_fit, make, message):
    code, _, err, seconds = _run(_fit_args(make(tmp_path)), capsys)
    _one_error(err, code, message)
    assert seconds < SECONDS


def test_symbolic_links_that_lead_nowhere(tmp_path, capsys, no_fit):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    code, _, err, _ = _run(_fit_args(tmp_path / "a"), capsys)
    _one_error(err, code, "a: a loop of symbolic links (too many levels of symbolic links)")
    (tmp_path / "c").symlink_to("nowhere.csv")
    code, _, err, _ = _run(_fit_args(tmp_path / "c"), capsys)
    _one_error(err, code, "c: a symbolic link to 'nowhere.csv', which does not exist")


def test_stdin_from_a_device_is_refused():
    with open("/dev/null", "rb") as null:
        proc, cpu = _child_cpu(lambda: subprocess.run(
            [sys.executable, "-m", "hca", *map(str, _fit_args("-"))], stdin=null,
            capture_output=True, text=True))
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: -: standard input is not a regular file (a character "
                                   "device); pipe the CSV in or give its path")
    assert cpu < SECONDS


def test_source_of_a_regular_file_is_not_read_into_memory(csv):
    src = open_source(csv)
    assert src.path == str(csv) and src.data is None and not src.stream


# --------------------------------------------------------------------------- estimates
def test_calibration_is_plain_data_with_how_it_was_measured():
    cal = load_calibration()
    assert cal["measured"]["command"] == "python benchmarks/bench_estimate.py --write"
    assert cal["measured"]["points"] >= 20
    assert cal["spread"]["over"] >= 1 and cal["spread"]["under"] >= 1
    for part in ("ica", "rest", "per_node_exhaustive", "per_node_enumerated",
                 "per_node_partial", "fit_bytes", "draw_bytes"):
        assert all(c >= 0 for c in cal[part]["coef"]), part
    json.dumps(cal)  # nothing but JSON


def test_estimate_ranges_and_regimes():
    small = Shape((300,) * 4, 6, 3)
    big = Shape((60,) * 600, 30, 3, "sequential")
    assert small.regime == "exhaustive" and big.regime == "partial"
    assert Shape((60,) * 12, 6, 3, "sequential").regime == "enumerated"
    assert small.nodes() == (3**4, 3**4 + 6**4 + 6**4)
    low, high = big.nodes()
    assert high == 1_000_000 and low < high
    e_small = estimate_work(small, speed=1.0)
    e_big = estimate_work(big, speed=1.0, seeds=3, null_draws=2)
    assert e_small.low <= e_small.total <= e_small.high
    assert e_big.low <= e_big.total <= e_big.high
    assert e_small.total < 5 < e_big.search  # 600 domains: a search of minutes, not seconds
    assert e_big.total == pytest.approx(3 * e_big.fit + 2 * e_big.per_draw)
    with_jobs = estimate_work(big, speed=1.0, seeds=5, n_jobs=2)
    assert with_jobs.total == pytest.approx(3 * with_jobs.fit + with_jobs.worker_start)


def test_work_is_refused_only_when_even_its_least_exceeds_the_limit():
    shape = Shape((60,) * 50, 30, 3, "sequential")
    est = estimate_work(shape, speed=1.0)
    limit = (est.low + est.total) / 2 / 60  # between the least and the typical estimate
    check_work(est, limit, shape)  # may fit: not refused
    with pytest.raises(InputError, match=r"even the least, .* is beyond --time-limit"):
        check_work(est, est.low / 60 / 2, shape)


def test_a_run_beyond_the_time_limit_is_refused_at_once(tmp_path, capsys, no_fit):
    rng = np.random.default_rng(0)
    K, n, p = 40, 40, 30
    df = pd.DataFrame(50 + rng.laplace(size=(K * n, 3)) @ rng.uniform(0, 10, (3, p)),
                      columns=[f"c{i}" for i in range(p)])
    df.insert(0, "base", np.repeat([f"m{k:02d}" for k in range(K)], n))
    code, _, err, seconds = _run(["fit", _write(tmp_path, df), "--domain-col", "base",
                                  "--benchmarks", ",".join(df.columns[1:]), "--search",
                                  "sequential", "--null-draws", 500, "--time-limit", 1], capsys)
    _one_error(err, code, "estimated work about")
    assert "MIC reference 500 searches of about" in err
    assert "is beyond --time-limit 1 min, so the fit was not started" in err
    assert "--max-nodes" in err and "fewer --null-draws" in err and seconds < SECONDS


def _sequential_fit(tmp_path, capsys, K: int, max_nodes: int, p: int = 6,
                    seed: int | None = None) -> tuple[int, str, dict]:
    """``hca fit --search sequential`` on an inexact simulated table of ``K`` domains (60
    models, ``p`` benchmarks): exit code, stderr and the JSON report."""
    sim = simulate_scm(n_domains=K, n_per_domain=60, n_benchmarks=p, alpha=0.05, offset=30,
                       random_state=K if seed is None else seed)
    df = sim.frame().rename(columns={"domain": "base"})
    dest = tmp_path / "r.json"
    code, _, err, _ = _run(["fit", _write(tmp_path, df), "--domain-col", "base",
                            "--benchmarks", ",".join(sim.feature_names), "--search",
                            "sequential", "--max-nodes", max_nodes, "--null-draws", 0,
                            "--json", dest], capsys)
    return code, err, json.loads(dest.read_text()) if code == 0 else {}


@pytest.mark.slow
def test_estimate_is_within_three_times_of_a_real_fit(tmp_path, capsys):
    """200 domains, 30 benchmarks (a search at its budget, the MIC reference skipped): the
    estimate within a factor of 3 of the measured work on this machine, and the measured
    work inside the estimate's range (``benchmarks/bench_estimate.py --check`` measures more
    shapes; a search that stops early, on domains sharing a clear hierarchy, can take a tenth
    of the typical estimate, still above its least)."""
    code, err, report = _sequential_fit(tmp_path, capsys, 200, 200_000, p=30, seed=1200)
    assert code == 0, err
    est = report["estimate"]
    assert est["seconds_low"] <= est["measured_seconds"] <= est["seconds_high"] * 1.5, est
    assert 1 / 3 <= est["seconds"] / est["measured_seconds"] <= 3, est


# --------------------------------------------------------------------------- memory
def test_memory_beyond_what_the_process_may_use_is_refused_with_the_figure():
    shape = Shape((300,) * 4, 6, 3)
    mem = estimate_memory(shape, null_draws=120_000)
    assert mem.per_draw > 1000 and mem.reference == pytest.approx(120_000 * mem.per_draw)
    room = Headroom(process=int(mem.main / 2), process_what="address-space limit (ulimit -v) 2.0 GB",
                    shared=None, shared_what="")
    with pytest.raises(InputError) as info:
        check_memory(mem, room)
    text = str(info.value)
    assert text.startswith("estimated memory about") and "120,000 random rotations" in text
    assert "address-space limit (ulimit -v) 2.0 GB" in text and "--null-draws" in text
    check_memory(estimate_memory(shape, null_draws=20), room)  # a default reference fits


def test_headroom_reads_the_limits():
    room = headroom()
    assert room.shared is None or room.shared > 0
    mem = MemoryEstimate(fit=1e6, reference=0, per_draw=0, draws=0)
    assert Headroom(None, "", None, "").for_run(mem.main, 0) is None


def _as_limit(n_bytes: int):
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (n_bytes, n_bytes))

    return limit


def test_null_draws_beyond_the_memory_limit_are_refused_before_the_fit(csv):
    """The issue's case: ``--null-draws 120000`` under a 2 GiB address-space cap died after
    33 s with a MemoryError traceback; now one line before any fit."""
    proc, seconds = _child_cpu(lambda: subprocess.run(
        [sys.executable, "-m", "hca", *map(str, _fit_args(csv)[:-2]), "--null-draws", "120000"],
        capture_output=True, text=True, preexec_fn=_as_limit(2 * 1024**3)))
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: estimated memory about") and "120,000 random rotations" in line
    assert "address-space limit (ulimit -v) 2.0 GB" in line and "Traceback" not in proc.stderr
    assert seconds < SECONDS


# --------------------------------------------------------------------------- clean stops
def _group(pgid: int) -> list[int]:
    """Processes of the process group ``pgid`` (from /proc; a worker that has exited but is
    not yet reaped by init, a zombie, is left out)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                pids.append(int(entry.name))
    return pids


@pytest.mark.slow
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_stops_the_workers_and_leaves_no_process(tmp_path, sig, code):
    sim = simulate_scm(n_domains=12, n_per_domain=60, n_benchmarks=6, random_state=1)
    df = sim.frame().rename(columns={"domain": "base"})
    path = _write(tmp_path, df)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hca", "fit", str(path), "--domain-col", "base", "--benchmarks",
         ",".join(sim.feature_names), "--search", "sequential", "--seeds", "4", "--n-jobs", "2",
         "--null-draws", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    pgid = proc.pid
    deadline = time.monotonic() + 60
    while len(_group(pgid)) < 3 and time.monotonic() < deadline:  # the workers are running
        time.sleep(0.2)
    assert len(_group(pgid)) >= 3, "no worker process started"
    start = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=15)  # EOF on the pipes: nothing holds them open
    assert time.monotonic() - start < 5
    assert proc.returncode == code, err
    assert err.decode().strip().splitlines()[-1] == f"error: stopped by {sig.name}"
    while _group(pgid) and time.monotonic() - start < 5:
        time.sleep(0.1)
    assert _group(pgid) == []  # no worker, no resource tracker
    while time.monotonic() - start < 10:  # and, once init has reaped them, no process at all
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    with pytest.raises(ProcessLookupError):
        os.killpg(pgid, 0)


# --------------------------------------------------------------------------- output encoding
def test_an_output_that_cannot_be_encoded_is_found_before_the_fit(frame, tmp_path):
    base = frame["base"].map({"D1": "caf\u00e9", "D2": "b", "D3": "c", "D4": "d"})
    path = _write(tmp_path, frame.assign(base=base))
    proc = _cli(*_fit_args(path)[:], env={"PYTHONIOENCODING": "ascii"}, text=True)
    assert proc.returncode == 0, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.startswith("note: the output's encoding (ascii) cannot show 1 domain or "
                            "benchmark name as written (e.g. caf\\xe9)")
    assert "caf\\xe9: 300" in proc.stdout


# --------------------------------------------------------------------------- notes that say why
def test_search_note_says_which_bound_stopped_it(tmp_path, capsys):
    code, err, report = _sequential_fit(tmp_path, capsys, 16, 3000)
    assert code == 0, err
    stop = report["search"]["stop"]
    assert stop["reason"] in ("budget", "candidates") and stop["first_level"] == 3**16
    note = next(n for n in _notes(err) if n.startswith("the sequential search did not certify"))
    assert stop["text"] in note
    assert "prefixes, more than --max-nodes, so it was explored from a few starting" in note
    if stop["reason"] == "budget":
        assert "it stopped at its budget" in note
        assert f"--max-nodes {report['search']['nodes_evaluated'] + stop['next_cost']:,}" in note
    jsonschema.validate(report, report_schema())


def test_eta_never_reads_zero_while_work_remains(capsys):
    with Progress(3, enabled=True, delay=0, interval=0) as progress:
        progress.stage("seed 0 (1/1)", {"ICA": 0.5, "search": 0.05, "rest": 0.0}, after=30.0)
        progress.listener("ICA", 1, 2)
        progress.listener("search (beam 32), level", 1, 3)
        time.sleep(0.1)
        progress.listener("search (beam 32), level", 2, 3)  # past the search's estimate
    lines = capsys.readouterr().err.splitlines()
    assert "ETA 0:3" in lines[1]  # the ICA's half, the search and the 30 s after
    assert lines[-1].endswith("ETA unknown (longer than estimated)")
    assert not [line for line in lines if "ETA 0:00" in line]


def test_trust_note_names_both_generators():
    assert set(RECOVERY_STUDY) == {"simulate_scm", "simulate_leaderboard"}
    text = recovery_evidence()
    assert "hca.synthetic.simulate_scm" in text and "hca.synthetic_alt.simulate_leaderboard" in text
    lows = [v[250][0] for v in RECOVERY_STUDY.values()]
    assert f"recovered a known order in {min(lows)} to " in text


def test_recovery_study_takes_the_independent_simulator():
    from hca.stability import recovery_study

    table = recovery_study((4,), (500,), n_reps=3, simulator="simulate_leaderboard")
    assert table["n_reps"].tolist() == [3] and 0 <= table["recovered"].iloc[0] <= 3
    with pytest.raises(ValueError, match="unknown simulator 'nope'"):
        recovery_study((4,), (60,), n_reps=1, simulator="nope")
