"""The MMLU-by-subject chapter (Appendix H.5): both setups on the real data, its claims."""

from __future__ import annotations

import numpy as np
import pytest

from hca.paper import constants as pc
from hca.paper import mmlu, setups
from hca.paper import scorecard as sc

#: The chapter runs behind these tests take more than ~5 s (deselect: -m "not slow").
pytestmark = pytest.mark.slow

IDS = ["F27-one-factor", "H.5-math-mic", "H.5-math-minimal", "H.5-math-z1", "H.5-phys-mic",
       "H.5-phys-minimal", "H.5-phys-z1", "H.5-cross-order", "H.5-math-z23", "H.5-phys-z23"]


@pytest.fixture(scope="module")
def results():
    """The chapter's results (from the results store when its notebook computed them)."""
    return {s: mmlu.run(s, mmlu.Settings()) for s in setups.SETUP_NAMES}


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
    ens = {s: sc.chapter_ensemble("mmlu", s, seeds=tuple(range(20)))
           for s in setups.SETUP_NAMES}
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
        cross = [tuple(m.cross.alignment["benchmark"]) for m in e]
        # Figure 30: FastICA never converges on Llama-2-13B, whose runs end where rounding
        # takes them; the paper's order is still the most frequent
        paper_cross = ("mmlu_college_mathematics", "mmlu_electrical_engineering",
                       "mmlu_college_physics")
        assert cross.count(paper_cross) >= 0.25 * len(e)
        assert max(set(cross), key=cross.count) == paper_cross or cross.count(paper_cross) >= 6
        assert sum(m.physics.rank()["rank_all"] == 1 for m in e) >= 0.8 * len(e)
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
    box = sc.verdict_box_markdown(rows)
    assert "{numref}`fig-mmlu-corr57`" in box


def test_seed_fits_record_row_readouts(results):
    f = results["careful"].physics
    W = np.asarray(f.seeds.loc[0, "sq_weights"])
    assert W.shape == (3, 3) and np.allclose(W.sum(axis=1), 1.0)
    assert f.seeds.loc[0, "top"] == tuple(f.alignment["top"])
    assert f.seeds["certified"].all()


def test_setups_and_seed_batches_sharing_work_equal_each_alone():
    """The book's two setups share one FastICA batch and every batch of seeds shares the
    refits and sweeps: every fit equals the one a setup and a batch of seeds compute alone."""
    small = mmlu.Settings(seeds=(1,), sweep_seeds=(1,), alt_seeds=(1,))
    both = tuple(setups.get_setup(n).seed_free() for n in setups.SETUP_NAMES)
    runs = mmlu.CHAPTER.ensemble.runs
    first, second = runs(both, small, (1,)), runs(both, small, (2,))  # a refit seed, a new one
    for i, setup in enumerate(both):
        alone = runs((setup,), small, (1, 2))[0]
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
