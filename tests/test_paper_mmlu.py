"""The MMLU-by-subject chapter (Appendix H.5): its settings, the page a reader's settings give
(quick), the careful setup's FastICA starts, and both setups on the book's settings (slow)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hca.paper import constants as pc
from hca.paper import mmlu, setups
from hca.paper import scorecard as sc
from hca.paper.claims import Ensemble, Optimum, Outcome
from hca.paper.words import prose_slips, sentences

IDS = ["F27-one-factor", "H.5-math-mic", "H.5-math-minimal", "H.5-math-z1", "H.5-phys-mic",
       "H.5-phys-minimal", "H.5-phys-z1", "H.5-cross-order", "H.5-math-z23", "H.5-phys-z23"]
#: Small settings: three seeds, one sweep seed, three FastICA starts in the cross-subject fit.
MATH = ("Mistral-7B", "Llama-2-13B", "Llama-2-7B")
SMALL = dict(n_seeds=3, n_seeds_more=3, sweep_seeds=(0,), alt_seeds=(0,),
             careful_restarts=(("cross", 3),))


# --------------------------------------------------------------------------- settings
def test_settings_defaults_are_the_papers_and_the_measured_starts():
    s = mmlu.Settings()
    assert s.math_domains == pc.PAPER_MATH_DOMAINS
    assert s.physics_domains == pc.PAPER_PHYSICS_DOMAINS
    assert s.careful_restarts == mmlu.CAREFUL_RESTARTS == (("cross", 20),)
    assert s.restarts("careful", "cross") == 20 and s.restarts("careful", "physics") == 1
    assert s.restarts("authors", "cross") == 1  # the authors' code makes one start
    assert hash(s) == hash(mmlu.Settings())  # a key of the results store


@pytest.mark.parametrize("change, match", [
    (dict(math_domains=("Mistral-7B",)), "at least two distinct"),
    (dict(math_domains=("Mistral-7B", "Mistral-7B")), "at least two distinct"),
    (dict(physics_domains=("Mistral-7B", "GPT-4")), "unknown: \\['GPT-4'\\]"),
    (dict(math_domains="Mistral-7B"), "tuple of base-model names"),
    (dict(careful_restarts=(("chemistry", 5),)), "careful_restarts"),
    (dict(careful_restarts=(("cross", 0),)), "integer >= 1"),
    (dict(careful_restarts=(("cross", 5), ("cross", 2))), "distinct pairs"),
    (dict(careful_restarts=(("cross", True),)), "careful_restarts"),
    (dict(sweep_seeds=(0, -1)), "sweep_seeds"),
])
def test_settings_refuse_bad_values_when_made(change, match):
    with pytest.raises(ValueError, match=match):
        mmlu.Settings(**change)


def test_a_base_model_without_enough_models_is_refused_before_any_fit():
    s = mmlu.Settings(math_domains=("Mistral-7B", "Llama-3-8B"), **SMALL)
    with pytest.raises(ValueError, match="Settings.math_domains.*Llama-3-8B.*too few models"):
        mmlu.check_available(s)
    with pytest.raises(ValueError, match="Llama-3-8B"):
        sc.chapter_page("mmlu", s)


# --------------------------------------------------------------------------- a reader's page
@pytest.fixture(scope="module")
def small_page():
    """The chapter end to end on small settings, with Llama-2-13B in place of the paper's
    Llama-2-70B in the mathematics fit (computed here: a few seconds)."""
    s = mmlu.Settings(math_domains=MATH, **SMALL)
    return sc.chapter_page("mmlu", s)


def test_the_page_follows_small_settings(small_page):
    page = small_page
    assert not page.book and set(page.differences()) >= {"math_domains", "n_seeds"}
    assert page.setups == ("authors", "careful")
    assert [r.id for r in page.rows] == IDS
    for s in page.setups:
        runs = page.ensembles[s]
        assert [r.setup.ica_seed for r in runs] == [0, 1, 2]
        assert all(r.math.domains == MATH for r in runs)
        assert all(r.physics.domains == pc.PAPER_PHYSICS_DOMAINS for r in runs)
        assert len(runs[0].math.seeds) == 3  # the refits are the ensemble's first runs
        assert runs[0].math.rank()["size"] == 3
        for r in page.rows:
            e = r.setups[s].ensemble
            assert e is None or e.runs == 3, (r.id, s)
    # the careful setup's cross-subject fits keep the best of 3 starts, the others one
    assert page.results["careful"].cross.model.n_restarts == 3
    assert page.results["careful"].physics.model.n_restarts == 1
    assert page.results["authors"].cross.model.n_restarts == 1
    # claims about the paper's choice of base models are not asked on other ones
    rows = {r.id: r.setups for r in page.rows}
    for s in page.setups:
        for cid in ("H.5-math-mic", "H.5-math-minimal"):
            assert rows[cid][s].verdict == "not applicable", (cid, s)
            assert "other base models" in rows[cid][s].reason
        assert rows["H.5-phys-mic"][s].verdict != "not applicable"
        assert "not the paper's" in rows["H.5-math-z1"][s].reason
    box = page.verdict_box()
    assert "authors' setup" in box and "careful setup" in box and "not applicable" in box


def test_the_page_words_follow_the_results(small_page):
    page = small_page
    texts = [mmlu.answer(page), mmlu.setups_text(page), mmlu.math_text(page),
             mmlu.physics_text(page), mmlu.cross_text(page), mmlu.stability_text(page),
             *mmlu.why_texts(page).values()]
    texts += [mmlu.fragile_text(page, f) for f in mmlu.FITS]
    for t in texts:
        assert prose_slips(t) == [], t
    answer = texts[0]
    assert "the authors' setup" in answer and "the careful setup" in answer
    assert not any(cid in answer for cid in IDS)  # no claim ids in prose
    assert "of 3 runs" in answer and "settings' base models" in texts[2]
    assert "the best of 3 FastICA starts" in texts[1]
    for r in page.rows:
        for o in r.setups.values():
            assert prose_slips(o.ours) == [] and prose_slips(o.reason) == [], r.id
    # tables and figures build from the page
    assert list(mmlu.seed_table(page, "math").columns) == ["authors' setup", "careful setup"]
    assert len(mmlu.cross_table(page)) == 6
    conv = mmlu.convergence_table(page)
    assert conv.loc["Llama-2-7B", "careful mathematics"].endswith("of 3")
    assert conv.loc["Llama-2-7B", "careful physics"] == "–"
    assert conv.loc["Llama-2-70B", "careful mathematics"] == "–"


def test_the_page_with_one_setup(small_page):
    page = small_page
    rows = tuple(dataclasses.replace(r, setups={"careful": r.setups["careful"]})
                 for r in page.rows)
    one = dataclasses.replace(
        page,
        settings=dataclasses.replace(page.settings, setups=("careful",)),
        results={"careful": page.results["careful"]},
        ensembles={"careful": page.ensembles["careful"]},
        rows=rows,
    )
    answer = mmlu.answer(one)
    assert "the careful setup" in answer and "authors' setup" not in answer
    assert "either setup" not in answer and "both setups" not in answer
    assert list(mmlu.seed_table(one, "physics").columns) == ["careful setup"]
    assert set(mmlu.cross_table(one)["setup"]) == {"careful"}
    import matplotlib

    matplotlib.use("Agg")
    fig = mmlu.subject_figure(one, "math")
    assert sum(ax.get_visible() for ax in fig.axes) == 3  # no empty panel (d)
    from matplotlib.collections import PathCollection

    dots = [c for c in mmlu.seeds_figure(one).axes[0].collections if isinstance(c, PathCollection)]
    assert len(dots) == 3 * 2  # per fit: the runs and the typical run's ring


def _fragile_page(small_page, answers: tuple[str, str], objectives: tuple[float, float]):
    """``small_page`` with the cross-subject order's authors' ensemble replaced by two optima
    of Mixtral-8x7B (20 and 10 runs) that answer ``answers`` and have the objective medians
    ``objectives`` (each with a spread of 0.00001), judged as the rule does."""
    from hca.paper.claims import ENSEMBLE_RULE

    optima = tuple(
        Optimum(groups=(("Mixtral-8x7B", g),), runs=n, fragile=k, seeds=tuple(range(n)),
                objective=(("Mixtral-8x7B", m, m - 5e-6, m + 5e-6),),
                share=1.0 if a == "reproduced" else 0.0,
                share_partly=1.0 if a != "not reproduced" else 0.0, answer=a, major=True)
        for g, n, k, a, m in zip((1, 2), (20, 10), (6, 4), answers, objectives)
    )
    tie = abs(objectives[0] - objectives[1]) <= 1e-5
    better = None if tie else int(objectives[1] > objectives[0])
    case = "agree" if answers[0] == answers[1] else ("tie" if tie else "better")
    ens = Ensemble(runs=30, share=2 / 3, share_partly=1.0, rule=ENSEMBLE_RULE,
                   seeds=tuple(range(30)), typical_seed=0, fragile=10,
                   fragile_domains=(("Mixtral-8x7B", 10),), optima=optima,
                   preferred=better if case == "better" else None, case=case)
    verdict = "not determined" if case == "tie" else "reproduced"
    rows = []
    for r in small_page.rows:
        if r.id == "H.5-cross-order":
            o = Outcome("ours", verdict, "reason", ensemble=ens)
            r = dataclasses.replace(r, setups={**r.setups, "authors": o})
        rows.append(r)
    return dataclasses.replace(small_page, rows=tuple(rows))


def test_the_fragile_story_chooses_its_words_from_the_optima(small_page):
    tie = _fragile_page(small_page, ("reproduced", "partly"), (0.0020, 0.0020))
    text = mmlu.fragile_text(tie, "cross")
    assert "Mixtral-8x7B" in text and "10 of 30 runs" in text
    assert "cannot tell them apart" in text and "so it is not determined" in text
    assert "Not determined is the order" in mmlu.answer(tie)
    assert mmlu.cross_cause(tie) == ""
    better = _fragile_page(small_page, ("reproduced", "partly"), (0.0013, 0.0028))
    text = mmlu.fragile_text(better, "cross")
    assert "clearly prefers it" in text and "2.2 times" in text
    assert "every run counts under this setup, so it is reproduced over all 30 runs" in text
    cause = mmlu.cross_cause(better)
    assert "comes from one with objective 0.00130" in cause and "never gives it" in cause
    assert cause in mmlu.answer(better) and "Not determined" not in mmlu.answer(better)
    table = mmlu.optima_table(better, "cross")
    assert list(table["optimum"][:2]) == ["1", "2 (preferred)"]
    assert list(table["order"][:2]) == ["reproduced", "partly"]
    assert table["objective ×1000, median (range)"].iloc[0] == "1.300 (1.295-1.305)"
    same = _fragile_page(small_page, ("reproduced", "reproduced"), (0.0020, 0.0020))
    assert "reads the same in both" in mmlu.fragile_text(same, "cross")
    for t in (mmlu.fragile_text(tie, "cross"), mmlu.fragile_text(better, "cross")):
        assert prose_slips(t) == [] and max(len(s.split()) for s in sentences(t)) <= 40


def test_answer_names_the_setups_verdicts(small_page):
    """A verdict that flips changes the answer's words (chosen from the rows)."""
    rows = []
    for r in small_page.rows:
        if r.id in ("H.5-math-z1", "H.5-phys-z1"):
            r = dataclasses.replace(r, setups={
                s: dataclasses.replace(o, verdict="reproduced") for s, o in r.setups.items()})
        rows.append(r)
    flipped = dataclasses.replace(small_page, rows=tuple(rows))
    assert "Neither first factor" not in mmlu.answer(flipped)
    assert "College mathematics first holds under both setups" in mmlu.answer(flipped)


# --------------------------------------------------------------------------- starts per run
def test_restart_measurement_counts_runs_in_the_better_optimum():
    m = mmlu.restart_measurement("cross", (1, 3), n_seeds=4, n_reference=20)
    assert m.fragile == ("Mixtral-8x7B",)
    better = m.optima[m.optima["better"]]
    assert len(better) == 1 and better["objective"].iloc[0] > 2 * m.optima["objective"].iloc[0]
    assert list(m.table.index) == [1, 3] and (m.table["runs"] == 4).all()
    assert list(m.table["starts"]) == [4, 6]
    # more starts find the better optimum at least as often, and the rate predicts the misses
    assert m.table.loc[3, "top"] >= m.table.loc[1, "top"]
    assert m.table.loc[3, "expected"] < m.table.loc[1, "expected"]
    assert 0 < m.rate < 0.5 and m.n_reference == 20
    assert "Mixtral-8x7B optimum" in m.summary()
    with pytest.raises(ValueError, match="fit 'chemistry'"):
        mmlu.restart_measurement("chemistry")
    with pytest.raises(ValueError, match="ks="):
        mmlu.restart_measurement("cross", (0,))


def test_restart_measurement_without_a_fragile_base_model():
    m = mmlu.restart_measurement("math", (1,), n_seeds=3, n_reference=5)
    assert m.fragile == () and m.optima.empty and m.rate is None and m.needed(3) is None
    assert m.table.loc[1, "sensitive"] == 0


# --------------------------------------------------------------------------- the book's settings
@pytest.fixture(scope="module")
def results():
    """The chapter's results (from the results store when its notebook computed them)."""
    return {s: mmlu.run(s, mmlu.Settings()) for s in setups.SETUP_NAMES}


@pytest.mark.slow
def test_results_both_setups(results):
    a, c = results["authors"], results["careful"]
    again = mmlu.run("authors", mmlu.Settings())  # computed once: a read-only copy
    assert again is not a and again.math.model.mic_ == a.math.model.mic_
    assert a.data.frame.equals(c.data.frame)  # the frame and Figure 27 are shared
    d = a.data
    assert d.available == ("Mistral-7B", "Llama-2-13B", "Llama-2-7B", "Llama-2-70B",
                           "Mixtral-8x7B")
    assert d.counts.loc["Llama-3-8B", "n_models"] == 0 and d.n_llama3_names == 0
    assert d.median_corr == pytest.approx(0.92, abs=0.02) and d.pc1["all models"] > 0.9
    assert sorted(d.order) == sorted(d.corr.index)
    # single fits land in one of several FastICA optima: values are checked on the ensemble
    # of 20 seeds (medians and modal readings, tolerances from its spread)
    ens = {s: sc.chapter_ensemble("mmlu", s) for s in setups.SETUP_NAMES}
    paper_cross = mmlu.paper_cross()
    for s, e in ens.items():
        # seed 0 of the ensemble is the setup's own run (an equal copy)
        assert e[0].setup == results[s].setup and len(e) == 20
        assert e[0].math.model.mic_ == results[s].math.model.mic_
        math = np.array([m.math.model.mic_ for m in e])
        phys = np.array([m.physics.model.mic_ for m in e])
        assert 0.095 < np.median(math) < 0.12 and math.max() < 0.13
        assert 0.05 < np.median(phys) < 0.085 and 0.03 < phys.min() < phys.max() < 0.13
        z1 = [m.math.alignment.loc["z1", "top"] for m in e]
        assert z1.count("mmlu_elementary_mathematics") > len(e) / 2
        assert sum(m.physics.rank()["rank_all"] == 1 for m in e) >= 0.8 * len(e)
    # Figure 30: one FastICA start per run gives the paper's order in most runs (from
    # Mixtral-8x7B's worse optimum); the best of 20 starts never does
    cross = {s: [tuple(m.cross.alignment["benchmark"]) for m in e] for s, e in ens.items()}
    assert cross["authors"].count(paper_cross) >= 0.5 * 20
    assert cross["careful"].count(paper_cross) == 0
    for r in (a, c):
        assert r.n_uncertified == 0 and r.n_fits > 50
        assert len(r.math.table) == 16 and len(r.physics.table) == 6
        assert np.isclose(r.math.seeds.loc[0, "mic"], r.math.model.mic_)
        assert r.math.corr.shape == (3, 3) and set(r.physics.spectra) == set(
            pc.PAPER_PHYSICS_DOMAINS)
        assert set(r.alternatives) == {"mathematics choice", "smallest MIC"}
        assert "MIC" in r.summary()
    # the Figure 30 alternative follows the setup's smallest subset size
    assert len(a.alternatives["smallest MIC"].domains) >= a.setup.min_subset_size
    assert a.cross.min_size == 4 and c.cross.min_size == 3
    assert c.cross.model.n_restarts == 20 and a.cross.model.n_restarts == 1


@pytest.mark.slow
def test_every_claim_answered_under_both_setups(results, check_chapter_rows):
    rows = sc.evaluate_chapter("mmlu")
    assert [r.id for r in rows] == IDS
    check_chapter_rows("mmlu", rows, results)
    by = {r.id: r.setups for r in rows}
    for s in setups.SETUP_NAMES:
        assert by["F27-one-factor"][s].verdict == "reproduced"
        assert by["H.5-math-mic"][s].verdict == "not reproduced"
        assert by["H.5-math-minimal"][s].verdict == "not reproduced"
        # the physics fit is rounding-sensitive through Llama-2-70B in some runs: every run
        # counts; the claim is "not determined" exactly when FastICA optima answer differently
        # and the objective cannot tell them apart (the rule of 2026-11-29)
        for cid, fine in (("H.5-phys-mic", ("reproduced", "partly")),  # 0.067 ± 0.006
                          ("H.5-phys-minimal", ("reproduced",)),
                          ("H.5-phys-z1", ("not reproduced",))):
            o = by[cid][s]
            assert o.ensemble.fragile > 0 and o.ensemble.runs == 40, cid
            assert (o.verdict == "not determined") == (o.ensemble.case == "tie"), cid
            assert o.ensemble.optima and all(x.objective for x in o.ensemble.optima), cid
            assert o.verdict in (*fine, "not determined"), (cid, o.verdict)
        assert by["H.5-phys-mic"][s].ensemble.share_partly_insensitive >= 0.9
        assert by["H.5-phys-minimal"][s].ensemble.share_insensitive == 1.0
        assert by["H.5-math-z1"][s].verdict == "not reproduced"
        assert by["H.5-math-z23"][s].verdict == "partly"  # only high-school math is a top
        for o in (by[cid][s] for cid in IDS):
            assert prose_slips(o.ours) == [] and prose_slips(o.reason) == []
    # across subjects: Mixtral-8x7B's optimum that FastICA's objective prefers (about twice
    # the other's) never gives the paper's order; one start per run (the authors' setup) lands
    # in the other in most runs, the best of 20 starts (the careful setup) in it in every run
    a, c = by["H.5-cross-order"]["authors"], by["H.5-cross-order"]["careful"]
    best = a.ensemble.optima[a.ensemble.preferred]
    assert a.ensemble.case == "better" and best.share == 0 and a.verdict == "reproduced"
    worse = [o for o in a.ensemble.optima if o is not best and o.major]
    assert best.objective[0][1] > 1.8 * worse[0].objective[0][1]
    assert c.ensemble.fragile == 0 and c.verdict == "not reproduced"
    careful_obj = [r.cross.model.ica_["Mixtral-8x7B"].objective
                   for r in sc.chapter_ensemble("mmlu", "careful")]
    assert np.allclose(careful_obj, best.objective[0][1], atol=best.objective[0][3]
                       - best.objective[0][2] + 1e-6)
    box = sc.verdict_box_markdown(rows)
    assert "{numref}`fig-mmlu-corr57`" in box


@pytest.mark.slow
def test_the_book_page_words(results):
    page = sc.chapter_page("mmlu")
    answer = mmlu.answer(page)
    assert "Mixtral-8x7B" in answer and "Llama-2-70B" in answer
    assert "20 starts find a better one" in answer and "never gives it" in answer
    assert "{ref}`the fragile fits <mmlu-fragile>`" in answer
    texts = [answer, mmlu.fragile_text(page, "physics"), mmlu.fragile_text(page, "cross"),
             mmlu.math_text(page), mmlu.physics_text(page), mmlu.cross_text(page),
             mmlu.stability_text(page), *mmlu.why_texts(page).values()]
    words = [len(s.split()) for t in texts for s in sentences(t)]
    assert max(words) <= 45 and sum(w > 40 for w in words) <= 0.05 * len(words)
    assert 3 <= len(sentences(answer)) <= 7
    table = mmlu.optima_table(page, "cross")
    assert list(table["setup"]) == ["authors'", "authors'", "careful"]
    assert table["optimum"].iloc[1].endswith("(preferred)")


@pytest.mark.slow
def test_seed_fits_record_row_readouts(results):
    f = results["careful"].physics
    W = np.asarray(f.seeds.loc[0, "sq_weights"])
    assert W.shape == (3, 3) and np.allclose(W.sum(axis=1), 1.0)
    assert f.seeds.loc[0, "top"] == tuple(f.alignment["top"])
    assert f.seeds["certified"].all()


@pytest.mark.slow
def test_setups_and_seed_batches_sharing_work_equal_each_alone():
    """The book's two setups share the FastICA batches they start alike, and every batch of
    seeds shares the refits and sweeps: every fit equals the one a setup and a batch of seeds
    compute alone."""
    small = mmlu.Settings(n_seeds=1, n_seeds_more=2, sweep_seeds=(1,), alt_seeds=(1,),
                          careful_restarts=(("cross", 2),))
    both = tuple(setups.get_setup(n).seed_free() for n in setups.SETUP_NAMES)
    runs = mmlu.CHAPTER.ensemble.runs
    first, second = runs(both, small, (0,)), runs(both, small, (2,))  # a refit seed, a new one
    for i, setup in enumerate(both):
        alone = runs((setup,), small, (0, 2))[0]
        for r, a in zip(first[i] + second[i], alone):
            assert r.setup == a.setup
            fits = [(r.math, a.math), (r.physics, a.physics), (r.cross, a.cross)]
            fits += [(r.alternatives[k], a.alternatives[k]) for k in a.alternatives]
            for f, g in fits:
                assert np.array_equal(f.model.unmixing_, g.model.unmixing_)
                assert f.model.mic_ == g.model.mic_ and f.reproducible == g.reproducible
                assert f.seeds.equals(g.seeds)
                assert (f.table is None) == (g.table is None)
                assert f.table is None or f.table.equals(g.table)
