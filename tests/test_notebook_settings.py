"""Notebooks a reader can change (issue 48): every chapter 2-8 opens with one short, visible
settings cell that drives its whole page.

- The settings cell is the first code cell, tagged ``settings``, visible, a few lines long, and
  its ``S`` is the chapter module's ``Settings()`` (the book's choices, written out).
- The cell after it runs the analysis from ``S`` (``chapter_page``), visible too.
- Executed with other settings (a different domain list in the recovery chapter, fewer seeds
  in the MMLU chapter), a notebook runs to the end, its page says that its settings differ
  from the book's, and its verdict box and opening answer follow the new results (slow).
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: chapter notebook -> module key under hca.paper
CHAPTERS = {
    "02_latent_pca": "pca",
    "03_hca_recovery": "recovery",
    "04_interpretation": "interpretation",
    "05_scaling_ate": "scaling",
    "06_matrix_completion": "completion",
    "07_leaderboard_v1": "v1",
    "08_mmlu_subtasks": "mmlu",
}
HIDDEN = {"hide-input", "hide-cell", "remove-input", "remove-cell"}
MAX_LINES = 14  # a phone shows the answer after the settings and run cells


def _notebook(name: str):
    jupytext = pytest.importorskip("jupytext")
    return jupytext.read(REPO / "notebooks" / f"{name}.md")


def _code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("name, key", CHAPTERS.items())
def test_first_code_cell_is_the_visible_settings(name, key):
    cells = _code_cells(_notebook(name))
    first, run = cells[0], cells[1]
    tags = set(first.metadata.get("tags", []))
    assert "settings" in tags and not tags & HIDDEN, (name, tags)
    lines = [line for line in first.source.splitlines() if line.strip()]
    assert len(lines) <= MAX_LINES, f"{name}: the settings cell has {len(lines)} lines"
    # every setting on its own line(s), with a comment saying what it is
    fields = [line for line in lines if re.match(r"\s+\w+\s*=", line)]
    comments = [line for line in lines if "#" in line]
    assert fields and len(comments) >= len(fields), (name, fields, comments)
    scope: dict = {}
    exec(first.source, scope)  # noqa: S102 - the notebook's own first cell
    module = importlib.import_module(f"hca.paper.{key}")
    assert scope["S"] == module.Settings(), f"{name}: the settings cell is not the book's"
    assert not set(run.metadata.get("tags", [])) & HIDDEN, name
    assert f'chapter_page("{key}", S)' in run.source, (name, run.source)
    assert len([x for x in run.source.splitlines() if x.strip()]) <= 2, name


@pytest.mark.parametrize("name, key", CHAPTERS.items())
def test_the_answer_comes_first_and_the_page_follows_its_settings(name, key):
    """After the settings and run cells: cells without visible input or output that glue the
    answer, then the answer as the first prose, before any visible code, table or figure; no
    stored defaults read, no function defined, no {glue:text}."""
    nb = _notebook(name)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    answer_role = re.compile(r'\{eval\}`(?:text|R\.md)\(G, "answer"\)`')
    answer = next(
        i for i, c in enumerate(nb.cells)
        if c.cell_type == "markdown" and answer_role.search(c.source)
    )
    before = [nb.cells[i] for i in code if code[1] < i < answer]
    assert before, name
    for c in before:
        assert {"remove-input", "remove-cell"} & set(c.metadata.get("tags", [])), (name, c.source[:80])
    assert any('G.markdown("answer"' in c.source for c in before), name
    prose = [c for c in nb.cells[code[1] + 1 : answer] if c.cell_type == "markdown"]
    assert not any(c.source.strip() for c in prose), f"{name}: prose before the answer"
    assert answer_role.match(nb.cells[answer].source.lstrip()), name
    src = "\n".join(c.source for c in nb.cells)
    for bad in ("{glue:", "{numref}", "{ref}", "{doc}", "evaluate_chapter(", f"{key}.run(",
                "typical_run("):
        assert bad not in src, (name, bad)
    defined = [c.source for c in nb.cells if c.cell_type == "code"
               and re.search(r"^\s*(def|class)\s", c.source, re.M)]
    assert defined == [], f"{name} defines a function"


def _execute_with(name: str, change: str, tmp_path: Path):
    """Execute notebook ``name`` with ``change`` (Python, run right after its settings cell);
    return the executed notebook's namespace values the test reads (the page and its answer)."""
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    nb = _notebook(name)
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    nb.cells.insert(first + 1, nbformat.v4.new_code_cell(change))
    probe = (
        "import json as _json\n"
        "print('PROBE' + _json.dumps({'book': page.book, 'note': page.note(), "
        "'box': page.verdict_box(), 'answer': G['answer'], "
        "'setups': list(page.setups)}))"
    )
    nb.cells.append(nbformat.v4.new_code_cell(probe))
    NotebookClient(nb, timeout=1800, kernel_name="python3",
                   resources={"metadata": {"path": str(REPO / "notebooks")}}).execute()
    out = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
    import json

    return json.loads(out.split("PROBE", 1)[1])


@pytest.mark.slow
def test_recovery_chapter_follows_another_domain_list(tmp_path):
    """Chapter 3 with three of the paper's four domains in the main fit (Qwen2.5-14B left out;
    and fewer seeds and bootstrap resamples, to keep the test short): the page says its settings differ, and its
    verdict box and answer are those of the new results, not the book's."""
    from hca.paper import recovery
    from hca.paper import scorecard as sc

    change = (
        "import dataclasses\n"
        "S = dataclasses.replace(S, domains=('Llama-3-8B', 'Llama-3.1-8B', 'Qwen2.5-7B'), "
        "n_seeds=5, n_seeds_more=10, n_boot=10)"
    )
    got = _execute_with("03_hca_recovery", change, tmp_path)
    book = sc.chapter_page("recovery")
    assert not got["book"] and "differ from the book's" in got["note"] and "Qwen2.5-7B" in got["note"]
    assert got["box"] != book.verdict_box()
    assert got["answer"] != recovery.answer(book)
    S = dataclasses.replace(recovery.Settings(), domains=(
        "Llama-3-8B", "Llama-3.1-8B", "Qwen2.5-7B"), n_seeds=5, n_seeds_more=10, n_boot=10)
    mine = sc.chapter_page("recovery", S)
    assert got["box"] == mine.verdict_box() and got["answer"] == recovery.answer(mine)
    assert all(len(e) == 5 for e in mine.ensembles.values())


@pytest.mark.slow
def test_mmlu_chapter_follows_fewer_seeds(tmp_path):
    """Chapter 8 with 5 FastICA seeds (10 near a threshold) instead of 20 (40): the page says
    so, its ensembles hold 5 runs, and its verdict box and answer follow them."""
    from hca.paper import mmlu
    from hca.paper import scorecard as sc

    change = "import dataclasses\nS = dataclasses.replace(S, n_seeds=5, n_seeds_more=10)"
    got = _execute_with("08_mmlu_subtasks", change, tmp_path)
    book = sc.chapter_page("mmlu")
    assert not got["book"] and "`n_seeds` = 5" in got["note"]
    S = dataclasses.replace(mmlu.Settings(), n_seeds=5, n_seeds_more=10)
    mine = sc.chapter_page("mmlu", S)
    assert got["box"] == mine.verdict_box() and got["answer"] == mmlu.answer(mine)
    assert all(len(e) == 5 for e in mine.ensembles.values())
    runs = {o.ensemble.runs for r in mine.rows for o in r.setups.values() if o.ensemble}
    assert runs <= {5, 10}
    assert got["answer"] != mmlu.answer(book) or got["box"] != book.verdict_box()


@pytest.mark.parametrize("path", sorted((REPO / "notebooks").glob("*.md")) + [REPO / "book" / "intro.md"],
                         ids=lambda p: p.stem)
def test_references_are_not_rebound(path):
    """A page whose prose writes {eval}`R.numref(...)` defines R = References(...) once and never
    binds the name again (JupyterLab would show "'dict' object has no attribute 'doc'")."""
    jupytext = pytest.importorskip("jupytext")
    nb = jupytext.read(path)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    binds = re.findall(r"^\s*R\s*=\s*(.+)$", code, re.M)
    assert all(b.startswith("References(") for b in binds), (path.name, binds)
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    if "{eval}`R." in prose:
        assert len(binds) == 1, (path.name, binds)


@pytest.mark.parametrize("path", sorted((REPO / "notebooks").glob("*.md")) + [REPO / "book" / "intro.md"],
                         ids=lambda p: p.stem)
def test_inline_expressions_stay_on_one_line(path):
    """An {eval} expression broken across lines is a Python string with a newline in it:
    JupyterLab shows a SyntaxError where the book showed the text (the scorecard page's
    R.ref("what that means <...>") did)."""
    jupytext = pytest.importorskip("jupytext")
    nb = jupytext.read(path)
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    broken = re.findall(r"\{eval\}`[^`]*\n[^`]*`", prose)
    assert broken == [], (path.name, broken)
