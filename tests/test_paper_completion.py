"""The matrix-completion chapter (hca.paper.completion): both setups, the claims, the authors'
printed means; its settings, its page and its answer (quick, with small settings)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from hca.paper import completion as pc
from hca.paper import scorecard as sc
from hca.paper import setups, words

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "06_matrix_completion.md"
#: Small repetition counts: the chapter in seconds.
SMALL = {"random_reps": 4, "other_reps": 4, "authors_other_reps": 4, "curve_reps": 2,
         "authors_curve_reps": 2, "block_reps": 1, "authors_block_reps": 1, "set_reps": 3,
         "authors_set_reps": 3, "block_ps": (0.2, 0.5), "rank_check_reps": 2,
         "diagnostic_draws": 2, "solver_reps": 2}
#: The chapter runs behind the tests marked slow take more than ~5 s (-m "not slow").
slow = pytest.mark.slow

IDS = ["F15a-local", "F15b-local", "F16-no-worse", "F16-mostly-better"]


@pytest.fixture(scope="module")
def results():  # used by the slow tests only
    """The chapter's results (from the results store when its notebook computed them)."""
    return {s: pc.run(s, pc.Settings()) for s in setups.SETUP_NAMES}


@slow
def test_designs_of_the_two_setups(results):
    au, ca = results["authors"], results["careful"]
    assert au.n_rows == 4576 and au.n_local == 92  # names containing "qwen2.5-14b"
    assert ca.n_rows < 3913 and 100 < ca.n_local < 200
    assert au.design.mask_scope == "all" and not au.design.same_rows
    assert ca.design.mask_scope == "domain" and ca.design.same_rows
    assert au.method == {"random": "soft-impute (authors' code)",
                         "block": "soft-impute (authors' code)"}
    assert ca.method["block"] == "SMC"
    # both hidden shares run under both setups; the setup's own with its repetitions
    assert au.main_shares == ca.main_shares == (0.2, 0.8)
    book = pc.Settings()
    assert int(au.at(0.2).n) == setups.get_setup("authors").completion_reps
    assert int(au.at(0.8).n) == book.authors_other_reps
    assert int(ca.at(0.8).n) == setups.get_setup("careful").completion_reps
    assert int(ca.at(0.2).n) == book.other_reps
    assert pc.run("careful", pc.Settings()).setup == ca.setup  # computed once: a copy
    assert "hidden share 0.8" in ca.summary()
    with pytest.raises(ValueError, match="was not run"):
        ca.at(0.45)


def test_full_settings_follow_the_setups():
    d = pc.Settings().design(setups.get_setup("authors"))
    runs = dict(d.random_runs)
    assert runs[0.2] == 500 and runs[0.8] == 100 and runs[0.5] == 10
    assert d.n_reps_sets == 10 and d.random_state == 2025
    c = dict(pc.Settings().design(setups.get_setup("careful")).random_runs)
    assert c[0.8] == 1000 and c[0.2] == 1000 and len(c) == 9


@slow
def test_values(results):
    au, ca = results["authors"], results["careful"]
    # the authors' setup: local better at 0.2 hidden, worse at 0.8 (as the authors print)
    assert au.at(0.2).local_mean < au.at(0.2).global_mean - 2
    assert au.at(0.8).local_mean > au.at(0.8).global_mean
    assert abs(au.at(0.2).global_mean - pc.printed_means().loc[0.2, "global"]) < 1.5
    # the careful design: local halves the error at 0.8 and equals the local column means
    assert 0.4 < ca.at(0.8).local_mean / ca.at(0.8).global_mean < 0.6
    lvm = ca.local_vs_means()
    assert lvm.loc[0.8, "equal"] and not lvm.loc[0.2, "equal"]
    # the solver check: fancyimpute's rule against the same soft-impute at its limit
    chk = au.solver_check
    assert set(chk.variant) == {"fancyimpute's stopping rule", "solved to the limit"}
    assert ca.solver_check is None
    assert (ca.levels.loc["domain"] > ca.levels.loc["other models"]).all()
    assert set(ca.diagnostics.hidden_share) == {0.8}


@slow
def test_printed_means_and_rate_table(results):
    pm = pc.printed_means()
    assert list(pm.columns) == ["global", "local"] and len(pm) == 9
    assert pm.loc[0.8, "local"] > pm.loc[0.8, "global"]
    assert pm.loc[0.2, "local"] < pm.loc[0.2, "global"]
    t = pc.rate_table(results)
    # the two main shares and 0.1 from the curve
    assert list(t.index) == [0.1, 0.2, 0.8]
    assert t.columns.get_level_values(0).unique().tolist() == [
        "authors' notebook", "authors' setup", "careful setup"]
    assert t.loc[0.2, ("authors' notebook", "global")] == pm.loc[0.2, "global"]
    reps = t[("authors' setup", "repetitions")]
    assert reps[0.2] == results["authors"].at(0.2)["n"] >= 1
    assert list(pc.rate_table(results, shares=(0.2,)).index) == [0.2]
    with pytest.raises(ValueError, match="no printed mean at hidden share 0.45"):
        pc.rate_table(results, shares=(0.45,))


@slow
def test_every_claim_answered_under_both_setups(results, check_chapter_rows):
    rows = sc.evaluate_chapter("completion")
    assert [r.id for r in rows] == IDS
    check_chapter_rows("completion", rows, results)
    assert all(o.value is not None for r in rows for o in r.setups.values())
    f15a = {r.id: r for r in rows}["F15a-local"].setups
    assert "hidden share 0.2" in f15a["authors"].ours
    assert "hidden share 0.8" in f15a["careful"].ours
    assert f15a["careful"].verdict == "reproduced" and f15a["authors"].verdict == "reproduced"
    assert np.isfinite(f15a["careful"].value) and f15a["careful"].value < 0
    box = sc.verdict_box_markdown(rows)
    assert "{numref}`fig-completion-15a`" in box and "{numref}`fig-completion-16`" in box


@slow
def test_the_books_answer_follows_the_results(results):
    text = pc.answer(sc.chapter_page("completion"))
    _check_answer(text)
    assert "Under the authors' setup, local completion wins at 0.2 hidden" in text
    assert "but loses at 0.8 hidden" in text and "over 500 repetitions" in text
    assert "Under the careful setup, local completion wins at both hidden shares" in text
    assert "over 1,000 repetitions each" in text
    assert "and global in none" in text
    assert "{ref}`the solver <completion-solver>`" in text
    assert "{ref}`the levels <completion-level>`" in text


# ============================================================ quick: settings, page, answer
def _check_answer(text: str) -> None:
    """An answer paragraph: 3-6 sentences of at most 45 words, no claim id, no slip."""
    sents = words.sentences(text)
    assert 3 <= len(sents) <= 6, sents
    assert max(len(x.split()) for x in sents) <= 45, sents
    assert not re.search(r"\b[FSTH]\d+[a-z]?-[\w-]+", text), text  # no claim ids
    assert words.prose_slips(text) == [] and "\n" not in text.strip()


def test_settings_are_checked_before_any_work():
    with pytest.raises(ValueError, match="Settings.domain must be a base model's name"):
        pc.Settings(domain="")
    with pytest.raises(ValueError, match="repetition counts must be whole numbers"):
        pc.Settings(other_reps=-1)
    with pytest.raises(ValueError, match="repetition counts must be whole numbers"):
        pc.Settings(set_reps=0)
    with pytest.raises(ValueError, match="repetition counts must be whole numbers"):
        pc.Settings(random_reps=2.5)
    assert pc.Settings().paper_domain and not pc.Settings(domain="Phi-4").paper_domain
    assert pc.authors_label("Qwen2.5-14B") == "qwen2.5-14b"
    assert pc.authors_label("Llama-3.2-3B") == "llama-3.2-3b"


def test_check_domain_names_the_domain_the_setup_and_the_count():
    with pytest.raises(ValueError, match=r"'Qwen2.5-14b' has 0 models in the careful "
                       r"setup's table; expected at least 80.*similar names: \['Qwen2.5-14B'"):
        pc.check_domain(pc.Settings(domain="Qwen2.5-14b", setups=("careful",)))
    with pytest.raises(ValueError, match=r"'Phi-4' has \d+ models in the careful setup's "
                       r"table \(attributed to Phi-4 by this book's rule\); expected at least 80"):
        pc.check_domain(pc.Settings(domain="Phi-4", setups=("careful",)))
    with pytest.raises(ValueError, match="'Phi-4' has"):
        sc.chapter_page("completion", pc.Settings(domain="Phi-4", **SMALL))
    pc.check_domain(pc.Settings())


@pytest.fixture(scope="module")
def small():
    """The chapter's page under small settings: the careful setup alone, another domain."""
    st = pc.Settings(domain="Llama-3.1-8B", setups=("careful",), **SMALL)
    return sc.chapter_page("completion", st)


@pytest.fixture(scope="module")
def small_both():
    """The chapter's page under small settings on Appendix G's domain, both setups."""
    return sc.chapter_page("completion", pc.Settings(**SMALL))


def test_a_page_follows_its_settings(small):
    assert small.setups == ("careful",) and list(small.results) == ["careful"]
    assert not small.book and "`domain` = 'Llama-3.1-8B'" in small.note()
    r = small.results["careful"]
    assert r.domain == "Llama-3.1-8B" and "Llama-3.1-8B" in r.local_rule
    assert r.n_local >= pc.MIN_LOCAL_MODELS
    assert int(r.at(0.8)["n"]) == 4 and int(r.at(0.2)["n"]) == 4  # random_reps, other_reps
    assert set(r.runs.sets()["rep"]) == {0, 1, 2}  # set_reps
    assert sorted(r.block_summary().loc[r.method["block"]].index) == [0.2, 0.5]
    box = small.verdict_box()
    assert "| claim | careful setup |" in box and "authors' setup" not in box
    for row in small.rows:
        o = row.setups["careful"]
        assert list(row.setups) == ["careful"] and o.verdict == "not applicable"
        assert o.reason == "the settings complete another domain (Llama-3.1-8B) than the " \
                           "paper's (Qwen2.5-14B)"
        assert words.prose_slips(o.ours) == []


def test_the_page_values_render_every_number_of_the_notebook(small, small_both):
    used = set(re.findall(r'\{eval\}`text\(G, "([^":]+)', NOTEBOOK.read_text()))
    assert len(used) > 60
    for page in (small, small_both):
        values = pc.page_values(page)
        assert used - {"answer"} <= set(values), sorted(used - set(values))
        for k, v in values.items():
            assert isinstance(v, str) and v and words.prose_slips(v) == [], (k, v)
    one = pc.page_values(small)
    assert one["au_code_g"] == one["pr_code_g"] == one["capped"] == pc.MISSING
    assert one["domain"] == "Llama-3.1-8B" and one["ca_text_n"] == "4"
    both = pc.page_values(small_both)
    assert both["pr_code_g"] == f"{pc.printed_means().loc[0.2, 'global']:.2f}"
    assert both["capped"].endswith(" of 4 global fits") and both["au_code_n"] == "4"
    assert both["au_rows"] == "4,576" and both["careful_b_better"].endswith(" of 2")
    for page, rows in ((small_both, small_both.rows), (small, small.rows)):
        for row in rows:
            for o in row.setups.values():
                assert words.prose_slips(o.ours) == [] and words.prose_slips(o.reason) == []


def test_the_answer_with_both_setups_and_with_one(small, small_both):
    both = pc.answer(small_both)
    _check_answer(both)
    assert "Under the authors' setup" in both and "Under the careful setup" in both
    one = pc.answer(small)
    _check_answer(one)
    assert "authors'" not in one and "the careful setup" in one
    assert "these settings complete the Llama-3.1-8B fine-tunes instead" in one


def test_the_answer_chooses_its_words_from_the_results():
    """A setup's sentence follows the intervals: both shares alike, or a win and a loss."""

    def stub(diffs):
        rows = {q: pd.Series({"local_mean": 5.0 + d, "global_mean": 5.0, "n": n,
                              "diff_lo": d - 0.1, "diff_hi": d + 0.1})
                for q, (d, n) in diffs.items()}
        return SimpleNamespace(setup=setups.get_setup("careful"), main_shares=(0.2, 0.8),
                               at=lambda q: rows[q])

    both = pc._random_sentence(stub({0.2: (-1, 10), 0.8: (-2, 10)}), "the careful setup")
    assert both.startswith("Under the careful setup, local completion wins at both hidden")
    assert both.endswith("over 10 repetitions each.")
    mixed = pc._random_sentence(stub({0.2: (-1, 10), 0.8: (1, 30)}), "the careful setup")
    assert "loses at 0.8 hidden" in mixed and " but wins at 0.2 hidden" in mixed
    assert "over 30 repetitions" in mixed and "over 10 repetitions" in mixed
    tie = pc._random_sentence(stub({0.2: (0.0, 5), 0.8: (0.0, 8)}), "the careful setup")
    assert "ties at both hidden shares" in tie and "4 repetitions" not in tie
    assert "5.00 against 5.00 at 0.8 hidden, 8 repetitions" in tie
    assert all(words.prose_slips(t) == [] for t in (both, mixed, tie))


def test_the_notebook_opens_with_the_books_settings():
    src = NOTEBOOK.read_text()
    cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)```", src, re.S)
    first = cells[0]
    assert first.startswith(":tags: [settings]\n") and len(first.splitlines()) <= 9
    ns: dict = {}
    exec(first.split("\n", 1)[1], ns)  # noqa: S102 - the notebook's own settings cell
    assert ns["S"] == pc.Settings()
    assert cells[1].strip().startswith('page = sc.chapter_page("completion", S)')
    assert "remove-input" in cells[2].splitlines()[0]
    assert src.index('{eval}`text(G, "answer")`') < src.index("page.verdict_box()")
    assert "def " not in "".join(cells)
    assert "{glue:text}" not in src and "evaluate_chapter(" not in src
    assert "pcomp.run(" not in src
