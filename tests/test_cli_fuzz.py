"""Property-based test: random malformed CSVs never make ``python -m hca fit`` print a
traceback (issue 20). Every run ends with exit code 0 (a report) or 2 (exactly one line
``error: ...``), stderr holds nothing but notes and that error, and a refused run leaves no
file behind."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hca.cli import main

NAMES = ["base", "b1", "b2", "b3", "", " b1", "B1", "base", "b1", "é", '"q"', "x,y"]
CELLS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-10**6, 10**6).map(str),
    st.sampled_from(["", "nan", "NA", "inf", "-inf", "1e400", "oops", "1,5", "True", " ",
                     '"', '""', '"a,b"', '"multi\nline"', "A", "B", "C", "\t", "\\", "0x10"]),
    st.text(max_size=6),
)


GOOD_CELL = st.floats(-100, 100, allow_nan=False).map(lambda x: f"{x:.6g}")


@st.composite
def csv_bytes(draw) -> bytes:
    """Mostly plausible leaderboards with a few corrupted cells; sometimes a random header,
    sometimes arbitrary bytes."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.binary(max_size=200))
    if kind <= 3:
        header = draw(st.lists(st.sampled_from(NAMES), min_size=0, max_size=6))
    else:
        header = draw(st.permutations(["base", "b1", "b2", "b3"]))
        header += draw(st.lists(st.sampled_from(NAMES), max_size=2))
    n_rows = draw(st.integers(0, 60))
    domain = st.sampled_from(["A", "B", "C", "A", "B", "C", "", "nan", "D"])
    corrupt = draw(st.sampled_from([0.0, 0.02, 0.2]))
    rows = []
    for _ in range(n_rows):
        width = len(header) if draw(st.integers(0, 19)) else draw(st.integers(0, len(header) + 2))
        cells = [draw(domain) if name == "base" else
                 (draw(CELLS) if draw(st.floats(0, 1)) < corrupt else draw(GOOD_CELL))
                 for name in (header + ["extra"] * 2)[:width]]
        rows.append(",".join(cells))
    sep = draw(st.sampled_from(["\n", "\r\n", "\n\n"]))
    text = sep.join([",".join(header), *rows]) + draw(st.sampled_from(["", sep]))
    return text.encode(draw(st.sampled_from(["utf-8"] * 8 + ["latin-1", "utf-16"])),
                       errors="replace")


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(content=csv_bytes(),
       benchmarks=st.sampled_from(["b1,b2", "b1,b2,b3", "b1", "b1,b1", "base,b1", "zz,b1"]),
       options=st.lists(st.sampled_from([
           ["--dropna"], ["--min-domain-size", "3"], ["--n-components", "1"],
           ["--n-components", "2"], ["--search", "sequential"], ["--seeds", "2"],
           ["--max-nodes", "5"]]), max_size=3))
@pytest.mark.slow  # more than ~5 s
def test_random_csvs_never_traceback(content, benchmarks, options):
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        csv = folder / "board.csv"
        csv.write_bytes(content)
        argv = ["fit", str(csv), "--domain-col", "base", "--benchmarks", benchmarks,
                "--json", str(folder / "report.json"), "--no-progress"]
        argv += [a for opt in options for a in opt]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        err = err.getvalue()
        lines = err.strip().splitlines()
        assert "Traceback" not in err
        assert code in (0, 2), err
        assert all(line.startswith(("note: ", "error: ")) for line in lines), err
        left = sorted(p.name for p in folder.iterdir())
        if code == 2:
            assert len(lines) == 1 and lines[0].startswith("error: "), err
            assert left == ["board.csv"], left
        else:
            assert left == ["board.csv", "report.json"], left
