"""Tests for hca.stability (seed, bootstrap and subset stability of HCA fits)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning

from hca.estimator import HCA, mic_by_subset
from hca.stability import (
    StabilityResult,
    bootstrap_stability,
    fit_record,
    ica_reproducible,
    ica_solutions,
    matches_alignment,
    ranked_orders,
    seed_stability,
    subset_stability,
)
from hca.stability import bootstrap_index
from hca.synthetic import simulate_scm

#: A pattern like the paper's (general, IFEval, MATH); the library knows no paper.
PATTERN = (frozenset({"bbh", "mmlu_pro"}), frozenset({"ifeval"}), frozenset({"math_lvl_5"}))


@pytest.fixture(scope="module")
def sim():
    s = simulate_scm(n_domains=4, n_per_domain=600, alpha=0.0, random_state=5)
    return pd.DataFrame(s.X, columns=list(s.feature_names)), s.domains


def test_matches_alignment():
    assert matches_alignment(("bbh", "ifeval", "math_lvl_5"), PATTERN)
    assert matches_alignment(("mmlu_pro", "ifeval", "math_lvl_5"), PATTERN)
    assert not matches_alignment(("ifeval", "mmlu_pro", "math_lvl_5"), PATTERN)
    assert not matches_alignment(("bbh", "ifeval"), PATTERN)
    # not strict: more factors -> the first of every role in order; fewer -> NA
    assert matches_alignment(("bbh", "gpqa", "ifeval", "math_lvl_5"), PATTERN, strict=False)
    assert not matches_alignment(("ifeval", "bbh", "math_lvl_5", "musr"), PATTERN, strict=False)
    assert not matches_alignment(("bbh", "gpqa", "musr", "ifeval"), PATTERN, strict=False)
    assert matches_alignment(("bbh", "ifeval"), PATTERN, strict=False) is pd.NA


def test_fit_record(sim):
    X, dom = sim
    model = HCA().fit(X, dom)
    rec = fit_record(model, patterns={"paper_order": PATTERN})
    adj = model.adjust()
    assert rec["mic"] == model.mic_ and rec["alignment"] == adj.benchmarks
    assert rec["order"] == " > ".join(adj.benchmarks) and rec["paper_order"] is False
    assert "paper_order" not in fit_record(model)  # no pattern, no column
    for label in model.domains_:
        assert rec[f"alpha[{label}]"] == model.inexactness_[label]
        assert rec[f"w[{label}] z1->z3"] == pytest.approx(adj.models[label].A[2, 0])
        assert rec[f"scale[{label}] eps2"] == pytest.approx(adj.models[label].omega_sqrt[1])
    assert rec["rank1[z2]"] == model.rank1_error_[1]
    assert rec["ica_converged"] is True


def test_seed_stability_on_exact_scm(sim):
    X, dom = sim
    res = seed_stability(HCA(), X, dom, seeds=range(4), patterns={"paper_order": PATTERN})
    assert isinstance(res, StabilityResult) and res.kind == "seed"
    assert res.records["seed"].tolist() == [0, 1, 2, 3]
    assert res.records["mic"].max() < 0.02  # exact SCM: every seed finds it
    counts = res.alignment_counts()
    assert counts["share"].sum() == pytest.approx(1.0) and counts["share"].iloc[0] == 1.0
    assert res.modal_alignment == res.records["alignment"].iloc[0]
    assert res.pattern_share("paper_order") == 0.0 and res.patterns == ("paper_order",)
    with pytest.raises(ValueError, match="no pattern 'other'"):
        res.pattern_share("other")
    q = res.quantiles()
    assert list(q.columns) == ["q05", "q50", "q95"] and "mic" in q.index
    w = res.weights()
    assert (w["n"] == 4).all() and (w["q05"] <= w["q95"]).all()
    assert "4 seed refits" in res.summary()
    # the estimator carries the settings; its random_state is replaced by every seed
    res2 = seed_stability(HCA(random_state=99), X, dom, seeds=range(4), n_jobs=2,
                          patterns={"paper_order": PATTERN})
    pd.testing.assert_frame_equal(res.records, res2.records)
    with pytest.raises(TypeError, match="estimator must be an HCA instance"):
        seed_stability(X, X, dom, seeds=range(2))


def test_bootstrap_index_keeps_domain_sizes():
    labels = np.array(["a"] * 5 + ["b"] * 3 + ["a"] * 2, dtype=object)
    idx = bootstrap_index(labels, np.random.default_rng(0))
    assert len(idx) == len(labels)
    assert (labels[idx] == "a").sum() == 7 and (labels[idx] == "b").sum() == 3


def test_bootstrap_stability_deterministic(sim):
    X, dom = sim
    a = bootstrap_stability(HCA(), X, dom, n_boot=3, random_state=2)
    b = bootstrap_stability(HCA(), X, dom, n_boot=3, random_state=2, n_jobs=2)
    pd.testing.assert_frame_equal(a.records, b.records)
    assert a.kind == "bootstrap" and a.records["replicate"].tolist() == [0, 1, 2]
    assert a.records["mic"].max() < 0.05
    c = bootstrap_stability(HCA(), X, dom, n_boot=3, random_state=3)
    assert not np.allclose(a.records["mic"], c.records["mic"])
    with pytest.raises(ValueError, match="n_boot must be a positive int"):
        bootstrap_stability(HCA(), X, dom, n_boot=0)
    with pytest.raises(ValueError, match="X has 2400 rows but domains has 3 labels"):
        bootstrap_stability(HCA(), X, dom[:3], n_boot=1)


def test_subset_stability(sim):
    X, dom = sim
    table = subset_stability(HCA(), X, dom, seeds=[0, 1])
    n_subsets = 4 + 1
    assert len(table) == 2 * n_subsets
    for _, rep in table.groupby("rep"):
        assert rep.loc[rep["mic"].idxmin(), "rank"] == 1
        assert rep["best"].sum() >= 1
    first = table[table["rep"] == 0].reset_index(drop=True)
    ref = mic_by_subset(HCA(random_state=0), X, dom)
    np.testing.assert_allclose(first["mic"], ref["mic"], atol=1e-12)
    boot = subset_stability(HCA(), X, dom, candidates=["D1", "D2", "D3"], n_boot=2)
    pd.testing.assert_frame_equal(
        boot, subset_stability(HCA(), X, dom, candidates=["D1", "D2", "D3"], n_boot=2,
                               n_jobs=2))
    assert len(boot) == 2 and set(boot["size"]) == {3}
    with pytest.raises(ValueError, match=r"candidate domain\(s\) \['D9'\] not found"):
        subset_stability(HCA(), X, dom, candidates=["D1", "D9"])


def test_ica_solutions_unique_for_strongly_non_gaussian_sources(sim):
    X, dom = sim
    table = ica_solutions(HCA(), X, dom, seeds=range(5))
    assert set(table["domain"]) == {"D1", "D2", "D3", "D4"}
    assert (table.groupby("domain")["n_seeds"].sum() == 5).all()
    assert (table.groupby("domain")["best_negentropy"].sum() == 1).all()
    # sources with distinct non-Gaussian laws: one solution per domain
    assert (table["solution"] == 1).all() and (table["share"] == 1.0).all()


@pytest.mark.slow  # more than ~5 s
def test_ica_solutions_finds_several_optima_for_gaussian_sources():
    rng = np.random.default_rng(2)
    G = rng.normal(size=(6, 3))
    X = rng.normal(size=(120, 3)) @ G.T
    table = ica_solutions(HCA(), X, np.repeat(np.array(["a", "b"], dtype=object), 60),
                          seeds=range(8))
    # Gaussian sources are not identified: the seeds stop in different optima
    for _, t in table.groupby("domain"):
        assert len(t) > 1
        assert t["share"].sum() == pytest.approx(1.0)
        assert t["n_seeds"].is_monotonic_decreasing
        assert t["best_negentropy"].sum() == 1


def test_ica_reproducible_separates_data_from_rounding(sim):
    X, dom = sim
    for seed in range(3):  # distinct non-Gaussian sources: the same optimum in any row order
        model = HCA(random_state=seed).fit(X, dom)
        assert ica_reproducible(model, X, dom) == {d: True for d in model.domains_}
    # Gaussian sources and 30 models per domain: FastICA wanders on a flat objective, and
    # where it stops depends on the order of the sums (rounding), for some seeds
    rng = np.random.default_rng(2)
    Xg = rng.normal(size=(60, 3)) @ rng.normal(size=(6, 3)).T
    dg = np.repeat(np.array(["a", "b"], dtype=object), 30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        flags = [ica_reproducible(m, Xg, dg) for m in
                 (HCA(random_state=s, max_iter=5000).fit(Xg, dg) for s in range(20))]
    steered = sum(not all(f.values()) for f in flags)
    assert 1 <= steered < 20, steered
    with pytest.raises(ValueError, match="not the model's"):
        ica_reproducible(HCA().fit(X, dom), Xg, dg)
    with pytest.raises(ValueError, match="needs a fitted HCA"):
        ica_reproducible(HCA(), X, dom)


def test_ranked_orders(sim):
    X, dom = sim
    model = HCA().fit(X, dom)
    table = ranked_orders(model, n=4)
    assert table["rank"].tolist() == [1, 2, 3, 4]
    assert table["mic"].iloc[0] == pytest.approx(model.mic_, abs=1e-12)
    assert table["mic"].is_monotonic_increasing
    assert table["order"].iloc[0] == " > ".join(model.adjust().benchmarks)
    assert table["unmixing_error"].iloc[0] == tuple(
        np.round([model.unmixing_error_[d] for d in model.domains_], 3))
    with pytest.raises(ValueError, match="n must be a positive int"):
        ranked_orders(model, n=0)
    with pytest.raises(ValueError, match="needs a fitted HCA"):
        ranked_orders(HCA())


def test_ranked_orders_flags_named_patterns(sim):
    X, dom = sim
    model = HCA().fit(X, dom)
    order = tuple(model.adjust().benchmarks)
    own = tuple(frozenset({b}) for b in order)
    table = ranked_orders(model, n=2, patterns={"mine": own, "paper_order": PATTERN})
    assert bool(table["mine"].iloc[0]) and not table["paper_order"].any()
    assert "mine" not in ranked_orders(model, n=2).columns

