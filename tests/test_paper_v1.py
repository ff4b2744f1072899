"""The Leaderboard v1 chapter (Appendix H.4): both setups on the real data, its claims."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hca.data import load_paper_values
from hca.paper import claims, setups, v1
from hca.paper import scorecard as sc

#: The chapter runs behind these tests take more than ~5 s (deselect: -m "not slow").
pytestmark = pytest.mark.slow

IDS = ["H.4-sinv-v1", "H.4-mic-small", "H.4-order", "F25-llama13-weight",
       "F25-llama13-scale", "H.4-llama3-z23", "H.4-aligned-benchmarks",
       "H.4-v1-v2-consistent", "H.4-mixtral-in"]


@pytest.fixture(scope="module")
def results():
    """The chapter's results (from the results store when its notebook computed them)."""
    return {s: v1.run(s, v1.Settings()) for s in setups.SETUP_NAMES}


def test_parse_order_and_roles():
    roles = v1.parse_order("truthfulqa>arc|hellaswag>gsm8k")
    assert roles == (frozenset({"truthfulqa"}), frozenset({"arc", "hellaswag"}),
                     frozenset({"gsm8k"}))
    assert v1.paper_roles()[0] == frozenset({"truthfulqa"})
    assert "hellaswag" in v1.paper_roles()[1] and v1.paper_roles()[2] == frozenset({"gsm8k"})
    with pytest.raises(ValueError, match="expected roles"):
        v1.parse_order("truthfulqa")
    assert v1.precedes(("hellaswag", "truthfulqa", "gsm8k"), roles[1], roles[2])
    assert not v1.precedes(("gsm8k", "truthfulqa", "gsm8k"), roles[1], roles[2])
    assert v1.role_position(("a", "b"), frozenset({"c"})) is None


def test_edge_table_reads_a_record():
    rec = {"alignment": ("hellaswag", "truthfulqa", "gsm8k"),
           "w[A] z1->z3": 1.5, "scale[A] eps3": 2.0, "w[B] z1->z3": -0.5, "scale[B] eps3": 3.0}
    tab = v1.edge_table(rec, ["A", "B"], frozenset({"hellaswag"}), frozenset({"gsm8k"}))
    assert tab.loc["A", "weight"] == 1.5 and tab.loc["B", "scale"] == 3.0
    assert (tab.attrs["parent"], tab.attrs["child"]) == (1, 3)
    # the child before the parent, or a missing role: no edge
    assert v1.edge_table(rec, ["A"], frozenset({"gsm8k"}), frozenset({"hellaswag"})) is None
    assert v1.edge_table(rec, ["A"], frozenset({"mmlu"}), frozenset({"gsm8k"})) is None


def test_results_both_setups(results):
    a, c = results["authors"], results["careful"]
    again = v1.run("careful", v1.Settings())  # computed once: an equal read-only copy
    assert again is not c and again.fit.mic_ == c.fit.mic_ and again.setup == c.setup
    assert a.setup.residual == "shared" and c.setup.residual == "domain"
    assert a.pca.s_inv != c.pca.s_inv or not a.pca.sizes.equals(c.pca.sizes)  # own domains
    again = v1.subspaces(a.settings.n_splits, a.settings.n_boot, "authors")
    assert list(a.pca.s_inv) == list(again.s_inv) and a.pca.sizes.equals(again.sizes)
    for r in (a, c):
        assert list(r.pca.sizes.index) == list(v1.PAPER_V1_BASES)
        assert r.pca.mean_distance.idxmax() == "Llama-2-7B"
    # the authors' rule on every row of the v1 file: their printed domain sizes (but 1)
    assert a.pca.sizes.tolist() == [2084, 510, 386, 364, 159, 120]
    assert a.pca.dist.to_numpy().max() == pytest.approx(0.136, abs=0.005)
    assert c.pca.dist.to_numpy().max() == pytest.approx(0.128, abs=0.005)
    assert a.pca.spectra["all v1 models"].cumulative[2] > 0.97
    # single fits land in one of several FastICA optima (careful: MIC about 0.06-0.07 or
    # 0.10-0.13): values are checked on the ensemble of 20 seeds, tolerances from its spread
    ens = {s: sc.chapter_ensemble("v1", s, seeds=tuple(range(20)))
           for s in setups.SETUP_NAMES}
    for s, e in ens.items():
        assert e[0].setup == results[s].setup and e[0].fit.mic_ == results[s].fit.mic_
        assert all(m.seeds.records.equals(e[0].seeds.records) for m in e)  # shared sweeps
        assert all(0 <= m.fit.mic_ < 0.2 for m in e)
    mics = np.array([m.fit.mic_ for m in ens["careful"]])
    assert 0.05 < mics.min() and mics.max() < 0.14 and 0.07 < np.median(mics) < 0.12
    orders = [tuple(m.adjustment.benchmarks) for m in ens["careful"]]
    assert orders.count(("hellaswag", "gsm8k", "truthfulqa")) >= 0.6 * len(orders)
    tabs = [v1.edge_table(m.record, m.domains, *v1.paper_roles()[1:]) for m in ens["careful"]]
    assert sum(t is not None and t["weight"].idxmax() == "Llama-3-8B" for t in tabs) >= 18
    for e in ens.values():  # the seed refits are the ensemble's fits of the same seeds
        seeds = e[0].seeds.records["seed"].tolist()
        assert e[0].seeds.records["mic"].tolist() == [e[i].fit.mic_ for i in seeds]
        roles = e[0].roles
        assert roles == v1.paper_roles()
        for rec in e[0].seeds.records.to_dict("records"):  # the claims' reading of edges
            for parent, child in ((roles[0], roles[1]), (roles[1], roles[2])):
                tab = v1.edge_table(rec, e[0].domains, parent, child)
                col = v1._edge_column(rec, e[0].domains, parent, child, "weight")
                assert (tab is None) == (col is None)
                if tab is not None:
                    assert col == tab["weight"].to_dict()
                    assert v1._largest(col) == tab["weight"].idxmax()
                    assert v1._edge_column(rec, e[0].domains, parent, child, "scale") == (
                        tab["scale"].to_dict()
                    )
    assert all(m.v2_alignment[0] == "math_lvl_5" for m in ens["careful"])
    for r in (a, c):
        assert len(r.subsets) == 42 and r.n_uncertified == 0
        assert r.seeds.records["seed"].tolist() == list(v1.Settings().seeds)
        assert np.isclose(r.seeds.records.loc[0, "mic"], r.fit.mic_)
        shares = r.order_shares()
        assert shares["FastICA seeds"].sum() == pytest.approx(1.0)
    assert set(a.solutions["domain"]) == set(v1.PAPER_V1_SINV)
    assert "MIC" in a.summary()


def test_every_claim_answered_under_both_setups(results, check_chapter_rows):
    rows = sc.evaluate_chapter("v1")
    assert [r.id for r in rows] == IDS
    check_chapter_rows("v1", rows, results)
    by = {r.id: r.setups for r in rows}
    # careful: all six domains lie within the pooled threshold, Llama-2-7B is not apart;
    # the authors' rule: the paper's five, Llama-2-7B apart
    assert by["H.4-sinv-v1"]["careful"].verdict == "not reproduced"
    assert by["H.4-sinv-v1"]["authors"].verdict == "reproduced"
    assert by["H.4-mixtral-in"]["careful"].verdict == "partly"
    assert by["H.4-mixtral-in"]["authors"].verdict == "reproduced"
    # the authors' v1 order, read over 20 or 40 runs (seed 0 alone gives TruthfulQA -> HellaSwag on
    # some processors, other orders in other runs)
    h4 = by["H.4-order"]["authors"]
    assert h4.ensemble.runs in (20, 40)  # the book's ensembles
    assert f"typical run (seed {h4.ensemble.typical_seed})" in h4.ours
    for s in setups.SETUP_NAMES:
        # MIC < 0.10 in part of the runs (groups of optima): read over the ensemble
        assert by["H.4-mic-small"][s].verdict in ("reproduced", "partly")
        assert by["H.4-aligned-benchmarks"][s].verdict == "reproduced"
    # careful: the runs have no TruthfulQA -> reasoning edge: never decided by a median
    for cid in ("F25-llama13-weight", "F25-llama13-scale"):
        assert by[cid]["careful"].verdict != "reproduced"
        assert by[cid]["careful"].ensemble.share == 0.0
    assert by["H.4-v1-v2-consistent"]["authors"].verdict == "reproduced"
    assert by["H.4-v1-v2-consistent"]["careful"].verdict == "partly"
    assert "Llama-2-7B ranks 1 of 6" in by["H.4-sinv-v1"]["careful"].ours
    box = sc.verdict_box_markdown(rows)
    assert "{numref}`fig-v1-graphs`" in box and "{numref}`fig-v1-distance`" in box


def test_edge_rule_uses_all_seeds():
    """With a seed-0 edge: inner band and s >= 0.5 -> reproduced; outside -> not."""
    paper = load_paper_values()
    rows = paper.loc[["F25-llama13-weight", "F25-llama13-scale"]]
    pw, ps = (float(rows.loc[i, "value"]) for i in rows.index)
    spec = next(x for x in claims.registered("v1") if "F25-llama13-weight" in x.ids)

    def stub(weights, scale):
        rec = pd.DataFrame([{"alignment": ("truthfulqa", "arc", "gsm8k"), "order": "x",
                             "w[Llama-2-13B] z1->z2": w, "scale[Llama-2-13B] eps2": scale}
                            for w in weights])
        return type("Stub", (), {
            "domains": ["Llama-2-13B"], "record": rec.iloc[0].to_dict(),
            "roles": v1.paper_roles(), "seeds": type("S", (), {"records": rec})(),
            "adjustment": type("A", (), {"benchmarks": ("truthfulqa", "arc", "gsm8k")})()})()

    out = spec.fn(stub([0.9 * pw, 1.1 * pw, -pw], 1.6 * ps), rows)
    assert out["F25-llama13-weight"].verdict == "reproduced"
    assert "2 of 3" in out["F25-llama13-weight"].ours
    assert out["F25-llama13-scale"].verdict == "partly"  # outer band at seed 0
    out = spec.fn(stub([0.3 * pw] * 3, 3 * ps), rows)  # the lenient case of issue 18
    assert out["F25-llama13-weight"].verdict == "not reproduced"
    assert out["F25-llama13-scale"].verdict == "not reproduced"
