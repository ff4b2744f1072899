"""The Leaderboard v1 chapter (Appendix H.4): both setups on the real data, its claims, its
settings and its opening answer."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from hca.data import load_paper_values
from hca.paper import claims, setups, v1
from hca.paper import scorecard as sc
from hca.paper.words import prose_slips, sentences

IDS = ["H.4-sinv-v1", "H.4-mic-small", "H.4-order", "F25-llama13-weight",
       "F25-llama13-scale", "H.4-llama3-z23", "H.4-aligned-benchmarks",
       "H.4-v1-v2-consistent", "H.4-mixtral-in"]


#: The book's chapter runs behind the tests marked slow take more than ~5 s (deselect: -m "not
#: slow"); the others run the chapter with small settings.
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


@pytest.mark.slow
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


@pytest.mark.slow
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
    assert f"Typical run (seed {h4.ensemble.typical_seed})" in h4.ours
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
    assert "21 of 100 bootstrap resamples exclude it" in by["H.4-sinv-v1"]["careful"].ours
    # a share of the seed refits is no run's value: no median of a constant (issue 46)
    for s in setups.SETUP_NAMES:
        assert by["H.4-order"][s].ensemble.median is None
        assert "of the first 20 runs" in by["H.4-order"][s].ours
    # the caption's edge: a run without it has no value of its own (authors: 5 of 20 have it)
    assert by["F25-llama13-weight"]["authors"].ensemble.median is None
    for r in rows:  # every text says what its numbers count
        for s, o in r.setups.items():
            # the scorecard's own borderline clause ("in 40% of 40 runs") is not this chapter's
            reason = re.sub(r"; borderline: [^.]*", "", o.reason)
            slips = prose_slips(o.ours) + prose_slips(reason)
            assert slips == [], (r.id, s, slips)
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
            "settings": v1.Settings(),
            "domains": ["Llama-2-13B"], "record": rec.iloc[0].to_dict(),
            "roles": v1.paper_roles(), "seeds": type("S", (), {"records": rec})(),
            "adjustment": type("A", (), {"benchmarks": ("truthfulqa", "arc", "gsm8k")})()})()

    out = spec.fn(stub([0.9 * pw, 1.1 * pw, -pw], 1.6 * ps), rows)
    assert out["F25-llama13-weight"].verdict == "reproduced"
    assert "2 of the first 3 runs" in out["F25-llama13-weight"].ours
    assert out["F25-llama13-scale"].verdict == "partly"  # outer band at seed 0
    out = spec.fn(stub([0.3 * pw] * 3, 3 * ps), rows)  # the lenient case of issue 18
    assert out["F25-llama13-weight"].verdict == "not reproduced"
    assert out["F25-llama13-scale"].verdict == "not reproduced"


# =========================================================================== quick: settings
#: Small settings a reader might choose: three domains of four base models, three seeds.
SMALL = dict(
    domains=("Llama-2-13B", "Llama-3-8B", "Mixtral-8x7B"),
    bases=("Llama-2-13B", "Llama-3-8B", "Llama-2-7B", "Mixtral-8x7B"),
    n_seeds=3,
    n_seeds_more=3,
    n_splits=5,
    n_boot=5,
    n_boot_hca=3,
    solution_seeds=(0, 1, 2),
    v2_seeds=(0, 1),
)


def test_settings_are_checked_when_made():
    """Bad domains name the field, the value and what is expected, before any work."""
    assert v1.Settings().domains == v1.PAPER_V1_SINV and v1.Settings().bases == v1.PAPER_V1_BASES
    assert v1.Settings().seeds == tuple(range(20))  # the seed refits: the ensemble's first runs
    assert v1.Settings().paper_domains and v1.Settings().paper_bases
    with pytest.raises(ValueError, match=r"Settings\.domains = \('Llama-3-8B',\).*at least 3"):
        v1.Settings(domains=("Llama-3-8B",))
    with pytest.raises(ValueError, match=r"Settings\.bases .*distinct"):
        v1.Settings(bases=("Mistral-7B", "Mistral-7B", "Llama-3-8B"))
    with pytest.raises(ValueError, match=r"Settings\.domains .*tuple"):
        v1.Settings(domains=["Mistral-7B", "Llama-2-13B", "Llama-3-8B"])
    with pytest.raises(ValueError, match=r"\['Llama-2-7B'\] not among Settings\.bases"):
        v1.Settings(domains=("Llama-2-7B", "Llama-3-8B", "Mistral-7B"),
                    bases=("Mistral-7B", "Llama-3-8B", "Llama-2-13B"))


def test_domains_with_too_few_models_are_refused():
    """A base model the authors' rule does not name has no model under the authors' setup; one
    this book attributes to nobody has none under either; the message names them."""
    bases = ("Mistral-7B", "Llama-3-8B", "Phi-2")
    with pytest.raises(ValueError, match=r"Settings\.bases: Phi-2 has 0 models under the authors "
                                         r"setup; expected at least 8 models"):
        v1.check_domains(v1.Settings(domains=bases[:2] + ("Llama-2-13B",),
                                     bases=bases + ("Llama-2-13B",)))
    v1.check_domains(v1.Settings(domains=bases, bases=bases, setups=("careful",)))  # 58 there
    with pytest.raises(ValueError, match=r"Settings\.domains: No-Such-7B has 0 models"):
        sc.chapter_page("v1", v1.Settings(domains=("Mistral-7B", "Llama-3-8B", "No-Such-7B"),
                                          bases=("Mistral-7B", "Llama-3-8B", "No-Such-7B"),
                                          setups=("careful",)))


def test_small_settings_end_to_end():
    """The chapter's whole analysis with a reader's small settings: the page's results, runs,
    rows, verdict box and answer follow them (under a minute on 2 cores)."""
    S = v1.Settings(**SMALL)
    page = sc.chapter_page("v1", S)
    assert not page.book and set(page.differences()) >= {"domains", "bases", "n_seeds"}
    assert "These settings differ from the book's" in page.note()
    assert page.setups == setups.SETUP_NAMES
    for s in page.setups:
        runs = page.ensembles[s]
        assert [r.setup.ica_seed for r in runs] == [0, 1, 2]
        assert page.results[s] in runs or any(r.fit.mic_ == page.results[s].fit.mic_ for r in runs)
        r = page.results[s]
        assert r.domains == sorted(S.domains) and list(r.pca.sizes.index) == list(S.bases)
        assert len(r.seeds.records) == 3 and len(r.boots.records) == 3
        assert set(r.solutions["domain"]) == set(S.domains)
        # Figure 23c: every subset of at least three of the four base models
        assert len(r.subsets) == 5 and len(v1.subsets_within(r)) == 1
        m = v1.mic_summary(r)
        assert m["MIC of the domains"] == pytest.approx(float(r.fit.mic_), abs=1e-9)
        assert v1.order_counts(runs)["runs"] == 3 and v1.v2_counts(runs)["runs"] == 3
        assert list(v1.edge_values(runs, *v1.paper_roles()[1:]).columns) == r.domains
    by = {row.id: row.setups for row in page.rows}
    assert len(by) == 9
    for s in page.setups:
        # the invariant-set claims compare the paper's six: not applicable to other bases
        assert by["H.4-sinv-v1"][s].verdict == "not applicable"
        assert "other base models than the paper's six" in by["H.4-mixtral-in"][s].reason
        assert by["H.4-mic-small"][s].ensemble.runs == 3
        assert "not the paper's" in by["H.4-order"][s].reason
    box = page.verdict_box()
    assert "| claim | authors' setup | careful setup |" in box
    text = v1.answer(page)
    assert "the settings' 4 base models" in text and "the settings' 3 domains" in text
    assert "Over 3 runs" in text and prose_slips(text) == []


def test_one_setup_and_no_paper_domains():
    """One setup: one column, one setup in the answer; a claim naming a domain the settings
    leave out is not applicable."""
    S = v1.Settings(**{**SMALL, "domains": ("Llama-3-8B", "Llama-2-7B", "Mixtral-8x7B")},
                    setups=("careful",))
    page = sc.chapter_page("v1", S)
    assert list(page.results) == ["careful"] and list(page.ensembles) == ["careful"]
    assert "| claim | careful setup |" in page.verdict_box()
    by = {row.id: row.setups for row in page.rows}
    assert set(by["F25-llama13-weight"]) == {"careful"}
    assert by["F25-llama13-weight"]["careful"].verdict == "not applicable"
    assert "without Llama-2-13B" in by["F25-llama13-scale"]["careful"].reason
    text = v1.answer(page)
    assert "the careful setup" in text and "authors' setup" not in text


# =========================================================================== quick: the answer
def _runs(orders, seeds=None):
    roles = v1.paper_roles()
    seeds = range(len(orders)) if seeds is None else seeds
    return tuple(SimpleNamespace(adjustment=SimpleNamespace(benchmarks=o), roles=roles,
                                 setup=SimpleNamespace(ica_seed=i))
                 for o, i in zip(orders, seeds))


def _pca(s_inv, tau, nulls, sizes, dmax):
    dist = pd.DataFrame([[0.0, dmax], [dmax, 0.0]])
    return SimpleNamespace(s_inv=tuple(s_inv), tau=tau, dist=dist,
                           nulls={d: np.full(5, q) for d, q in nulls.items()},
                           sizes=pd.Series(sizes))


def _solutions(two_gap=None):
    rows = [dict(domain="Llama-2-13B", solution=1, share=1.0, negentropy=0.03, first_seed=0)]
    if two_gap is not None:
        rows += [dict(domain="Mistral-7B", solution=1, share=0.6, negentropy=0.03, first_seed=1),
                 dict(domain="Mistral-7B", solution=2, share=0.4,
                      negentropy=0.03 * (1 + two_gap), first_seed=0)]
    return pd.DataFrame(rows)


PAPER = ("truthfulqa", "hellaswag", "gsm8k")
OTHER = ("hellaswag", "gsm8k", "truthfulqa")
BASES6 = {d: 100 for d in v1.PAPER_V1_BASES} | {"Mixtral-8x7B": 20, "Llama-2-70B": 10}


def _page(setups_, s_inv, taus, orders, gap=0.005, settings=None):
    """A stand-in for the chapter's page (:func:`hca.paper.scorecard.chapter_page`)."""
    nulls = {d: 0.05 for d in v1.PAPER_V1_BASES} | {"Mixtral-8x7B": 0.2, "Llama-2-70B": 0.3}
    results = {s: SimpleNamespace(pca=_pca(s_inv[s], taus[s], nulls, BASES6, 0.13),
                                  solutions=_solutions(gap)) for s in setups_}
    return SimpleNamespace(settings=settings or v1.Settings(setups=tuple(setups_)),
                           setups=tuple(setups_), results=results,
                           ensembles={s: _runs(orders[s]) for s in setups_})


def test_answer_both_setups():
    """Both setups named with their numbers, the causes linked, no claim id, no slip, and
    sentences of at most 40 words."""
    page = _page(("authors", "careful"),
                 {"authors": v1.PAPER_V1_SINV, "careful": v1.PAPER_V1_BASES},
                 {"authors": 0.048, "careful": 0.162},
                 {"authors": [PAPER] * 5 + [OTHER] * 15, "careful": [PAPER] * 3 + [OTHER] * 17})
    text = v1.answer(page)
    assert "the paper's five under the authors' setup and all 6 base models under the careful" \
        in text
    assert "0.162 under the careful setup against 0.048 under the authors' setup" in text
    assert "small Llama-2-70B and Mixtral-8x7B domains" in text
    assert "only 5 of 20 under the authors' setup and only 3 of 20 under the careful" in text
    assert "The link from reasoning to mathematics is stable" in text
    assert "almost equal objective in the Mistral-7B domain" in text
    assert "{ref}`why <v1-sinv>`" in text and "{ref}`the runs <v1-stability>`" in text
    assert not re.search(r"\b(?:H\.4|F25)-", text) and prose_slips(text) == []
    assert 3 <= len(sentences(text)) <= 6
    assert max(len(x.split()) for x in sentences(text)) <= 40


def test_answer_follows_the_results():
    """Words chosen from the results: equal sets, a larger gap, the paper's order in most
    runs, a link that holds in one setup only, one setup."""
    page = _page(("authors", "careful"),
                 {"authors": v1.PAPER_V1_SINV, "careful": v1.PAPER_V1_SINV},
                 {"authors": 0.048, "careful": 0.05},
                 {"authors": [PAPER] * 15 + [OTHER] * 5,
                  "careful": [("gsm8k", "hellaswag", "truthfulqa")] * 20}, gap=0.03)
    text = v1.answer(page)
    assert "returns the paper's five under both setups" in text and "threshold" not in text
    assert "in 15 of 20 under the authors' setup and 0 of 20 under the careful" in text
    assert "depends on the setup" in text
    assert "whose objectives lie within 2.9 % of each other" in text
    one = _page(("careful",), {"careful": v1.PAPER_V1_BASES}, {"careful": 0.162},
                {"careful": [PAPER] * 20}, gap=None)
    text = v1.answer(one)
    assert "all 6 base models under the careful setup" in text and "authors'" not in text
    assert "in 20 of 20 under the careful setup" in text and "FastICA has two" not in text
    other = v1.Settings(domains=("Mistral-7B", "Llama-2-13B", "Llama-3-8B"),
                        bases=("Mistral-7B", "Llama-2-13B", "Llama-3-8B", "Llama-2-7B"))
    text = v1.answer(_page(("careful",), {"careful": ("Mistral-7B", "Llama-2-13B")},
                           {"careful": 0.1}, {"careful": [PAPER, OTHER, OTHER]},
                           settings=other))
    assert "among the settings' 4 base models only Mistral-7B and Llama-2-13B" in text
    assert "HCA on the settings' 3 domains with FastICA seeds 0-2" in text
    assert "FastICA has two local optima" in text  # the order moves between the runs
