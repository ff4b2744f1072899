"""The book's words, checked on a fresh build (issue 46, points 2 and 3; CONTRIBUTING.md, "Writing
prose: the house style").

- **Numbers that say what they are.** Every string a notebook glues for its prose (the
  ``*.glue.json`` of ``_build/jupyter_execute``) and every ``ours`` and ``reason`` of the
  book's scorecard (``_build/html/_data/scorecard.json``) is free of the slips
  :func:`hca.paper.words.prose_slips` finds: counts with decimals, "in every one of N runs",
  "as do 0 of ...", a share as a percentage of a run set, two run sets of different sizes in
  one sentence, NumPy reprs, missing values.
- **One idea per sentence.** In the built pages of chapters 2-8, at most 5 % of the
  sentences of running prose (paragraphs and list items of the article, outside tables,
  figures, captions, code cells and their outputs) are longer than 40 words.

These read the build only (no browser). Run with ``make browser-test`` after ``make book``.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from hca.paper.words import prose_slips, sentences

REPO = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("HCA_BOOK_HTML") or REPO / "_build" / "html").resolve()
EXECUTED = HTML.parent / "jupyter_execute"
#: Chapters whose running prose the sentence-length rule covers.
PROSE_CHAPTERS = (
    "02_latent_pca",
    "03_hca_recovery",
    "04_interpretation",
    "05_scaling_ate",
    "06_matrix_completion",
    "07_leaderboard_v1",
    "08_mmlu_subtasks",
)
LONG_WORDS, LONG_SHARE = 40, 0.05

pytestmark = pytest.mark.skipif(
    not (HTML / "index.html").is_file(), reason=f"no built book at {HTML} (run make book)"
)


def glued_strings() -> list[tuple[str, str, str]]:
    """(notebook, name, text) of every string glued in the build."""
    out = []
    for path in sorted(EXECUTED.rglob("*.glue.json")):
        for name, output in json.loads(path.read_text(encoding="utf-8")).items():
            data = output.get("data", {})
            if "text/markdown" in data:
                text = data["text/markdown"]
                out.append((path.stem, name, "".join(text) if isinstance(text, list) else text))
                continue
            plain = data.get("text/plain")
            if plain is None:
                continue
            plain = "".join(plain) if isinstance(plain, list) else plain
            try:
                value = ast.literal_eval(plain)
            except (SyntaxError, ValueError):
                value = plain
            if isinstance(value, str):
                out.append((path.stem, name, value))
    return out


def scorecard_texts() -> list[tuple[str, str, str, str]]:
    """(claim, setup, field, text) of every ``ours`` and ``reason`` of the built scorecard."""
    records = json.loads((HTML / "_data" / "scorecard.json").read_text(encoding="utf-8"))
    return [
        (r["id"], s, field, o[field])
        for r in records
        for s, o in r["setups"].items()
        for field in ("ours", "reason")
    ]


def prose_of(page: Path) -> list[str]:
    """The running prose of a built page: the text of the article's paragraphs and list
    items outside tables, figures, captions, code cells, outputs and admonitions."""
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    article = soup.select_one("article.bd-article, main article, [role='main']")
    assert article is not None, page
    skip = ("table", "figure", "figcaption", "pre", "script", "style", "aside")
    texts = []
    for el in article.find_all(["p", "li"]):
        if el.find_parent(skip) is not None:
            continue
        if el.find_parent(class_=["cell", "cell_output", "admonition", "dropdown", "toctree-wrapper"]):
            continue
        if el.name == "li" and el.find("p") is not None:
            continue  # its paragraphs are counted themselves
        text = " ".join(el.get_text(" ").split())
        if text:
            texts.append(text)
    return texts


def test_the_checker_finds_the_slips_of_the_last_build():
    """The checks would have failed on what issue 46 found (so they can fail)."""
    assert prose_slips("seed 6 gives another order, as do 0 of 10 seeds")
    assert prose_slips("median 3.000 (range 2.000-3.000) over 20 runs")
    assert prose_slips("0.750 in every one of 40 runs")
    assert prose_slips("the order in 10 of 10 seed refits beside a median over 20 runs")
    assert prose_slips("holds in 37% of 200 refits")
    assert prose_slips("the others move: none")
    assert prose_slips("reproduced in 19 of 20 runs") == []


def test_glued_strings_say_what_they_count():
    texts = glued_strings()
    assert len(texts) > 100, f"only {len(texts)} glued strings found under {EXECUTED}"
    bad = [(nb, name, slip) for nb, name, text in texts for slip in prose_slips(text)]
    assert bad == [], "\n".join(f"{nb} {name}: {slip}" for nb, name, slip in bad)


def test_scorecard_texts_say_what_they_count():
    texts = scorecard_texts()
    assert len(texts) > 400
    bad = [(cid, s, f, slip) for cid, s, f, text in texts for slip in prose_slips(text)]
    assert bad == [], "\n".join(f"{cid} {s} {f}: {slip}" for cid, s, f, slip in bad)


@pytest.mark.parametrize("chapter", PROSE_CHAPTERS)
def test_sentences_are_short(chapter):
    """At most 5 % of the running-prose sentences above 40 words."""
    page = HTML / "notebooks" / f"{chapter}.html"
    assert page.is_file(), page
    sents = [s for text in prose_of(page) for s in sentences(text)]
    assert len(sents) > 20, f"{chapter}: only {len(sents)} sentences of running prose"
    long = sorted((len(s.split()), s) for s in sents if len(s.split()) > LONG_WORDS)
    share = len(long) / len(sents)
    assert share <= LONG_SHARE, (
        f"{chapter}: {len(long)} of {len(sents)} sentences ({share:.1%}) are longer than "
        f"{LONG_WORDS} words; the longest:\n"
        + "\n".join(f"  {n} words: {s[:200]}" for n, s in long[::-1][:6])
    )
