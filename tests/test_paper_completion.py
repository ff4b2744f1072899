"""The matrix-completion chapter (hca.paper.completion): both setups, the claims, the authors'
printed means."""

from __future__ import annotations

import numpy as np
import pytest

from hca.paper import completion as pc
from hca.paper import scorecard as sc
from hca.paper import setups

#: The chapter runs behind these tests take more than ~5 s (deselect: -m "not slow").
pytestmark = pytest.mark.slow

IDS = ["F15a-local", "F15b-local", "F16-no-worse", "F16-mostly-better"]


@pytest.fixture(scope="module")
def results():
    """The chapter's results (from the results store when its notebook computed them)."""
    return {s: pc.run(s, pc.Settings()) for s in setups.SETUP_NAMES}


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
