"""Tests for hca.paper.robustness (perturbation runner) on simulated SCMs."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from hca.paper import robustness as rb  # noqa: E402
from hca import plots as hp
from hca.paper import constants as pc
from hca.estimator import HCA, domain_ica  # noqa: E402
from hca.synthetic import simulate_scm  # noqa: E402

BENCH = ("b1", "b2", "b3", "b4", "b5", "b6")
FOUR = ("D1", "D2", "D3", "D4")
CANDS = ("D1", "D2", "D3", "D4", "X1")


def _frame(random_state: int = 3, n: int = 300) -> pd.DataFrame:
    """Four domains of one exact SCM plus a fifth domain with another mixing matrix."""
    sim = simulate_scm(n_domains=4, n_per_domain=n, alpha=0.0, random_state=random_state)
    other = simulate_scm(n_domains=1, n_per_domain=n, alpha=0.0, random_state=random_state + 50)
    df = pd.DataFrame(np.vstack([sim.X, other.X]), columns=list(BENCH))
    df["base_model"] = list(sim.domains) + ["X1"] * n
    for b in BENCH:
        df[f"{b}_raw"] = 0.5 + df[b] / 100
    rng = np.random.default_rng(random_state)
    df["merged"] = rng.random(len(df)) < 0.2
    df["type"] = np.where(rng.random(len(df)) < 0.1, "merge", "fine-tuned")
    return df


@pytest.fixture(scope="module")
def frame():
    return _frame()


@pytest.fixture(scope="module")
def exact():
    return simulate_scm(n_domains=4, n_per_domain=1500, alpha=0.0, random_state=11)


# ----------------------------------------------------------------------------- orders
def test_order_label_and_roles():
    assert rb.order_label(("math_lvl_5", "bbh_raw", "ifeval")) == "MATH Lvl 5 > BBH > IFEval"
    roles = rb.role_pattern(("mmlu_pro_raw", "ifeval", "gpqa"))
    assert roles == (frozenset({"bbh", "mmlu_pro"}), frozenset({"ifeval"}), frozenset({"gpqa"}))


@pytest.mark.parametrize("alignment, expected", [
    (("bbh", "ifeval", "math_lvl_5"), True),
    (("mmlu_pro_raw", "ifeval_raw", "math_lvl_5_raw"), True),
    (("math_lvl_5", "bbh", "ifeval"), False),
    (("bbh", "ifeval", "ifeval"), False),
    (("bbh", "musr", "ifeval", "math_lvl_5"), True),   # more factors: relative order
    (("musr", "ifeval", "bbh", "math_lvl_5"), False),
    (("bbh", "musr", "ifeval", "gpqa"), False),         # a role is missing
])
def test_order_matches_paper(alignment, expected):
    assert rb.order_matches(alignment, pc.PAPER_ALIGNMENT) is expected


def test_order_matches_fewer_factors_is_na():
    assert rb.order_matches(("bbh", "ifeval"), pc.PAPER_ALIGNMENT) is pd.NA


# ----------------------------------------------------------------------------- ICA
def _max_abs_cosines(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    A = A / np.linalg.norm(A, axis=1, keepdims=True)
    B = B / np.linalg.norm(B, axis=1, keepdims=True)
    return np.abs(A @ B.T).max(axis=1)


@pytest.mark.parametrize("ortho", [True, False])
def test_picard_recovers_population_unmixing(exact, ortho):
    ica = "picard-o" if ortho else "picard"
    fits = domain_ica(exact.X, exact.domains, 3, ica=ica, random_state=0)
    assert list(fits) == ["D1", "D2", "D3", "D4"]
    for label, fit in fits.items():
        Xk = exact.X[exact.domains == label]
        sources = (Xk - fit.mean) @ fit.unmixing.T
        np.testing.assert_allclose(sources.std(axis=0), 1.0, atol=1e-10)   # unit variance
        assert fit.converged and fit.n_samples == 1500
        assert _max_abs_cosines(fit.unmixing, exact.unmixing[label]).min() > 0.98


def test_picard_and_fastica_agree_on_exact_scm(exact):
    fast = domain_ica(exact.X, exact.domains, 3, random_state=0)
    pic = domain_ica(exact.X, exact.domains, 3, ica="picard-o", random_state=0)
    for label in fast:
        assert _max_abs_cosines(pic[label].unmixing, fast[label].unmixing).min() > 0.98


def test_domain_ica_picard_validates_input(exact):
    with pytest.raises(ValueError, match="labels"):
        domain_ica(exact.X, exact.domains[:-1], ica="picard-o")
    with pytest.raises(ValueError, match="unknown ica"):
        domain_ica(exact.X, exact.domains, ica="jade")
    with pytest.raises(ValueError, match="'ica' parameter of HCA must be a str among"):
        HCA(ica="jade").fit(exact.X, exact.domains)


# ----------------------------------------------------------------------------- fits
def test_robust_fit_fastica_is_the_estimator(frame):
    rows = frame[frame["base_model"].isin(FOUR)]
    X, dom = rows[list(BENCH)].reset_index(drop=True), rows["base_model"].to_numpy(dtype=object)
    fit = rb.robust_fit(HCA(3, ica="fastica", random_state=0), X, dom)
    model = HCA(random_state=0).fit(X, dom)
    assert fit.mic == pytest.approx(model.mic_, abs=1e-12)
    assert fit.alignment == model.adjust().benchmarks
    assert fit.alphas == pytest.approx(model.inexactness_)
    assert fit.certified and fit.converged and fit.order in fit.summary()


@pytest.mark.parametrize("ica", ["picard-o", "picard"])
def test_robust_fit_picard_finds_exact_scm(exact, ica):
    X = pd.DataFrame(exact.X, columns=list(exact.feature_names))
    fit = rb.robust_fit(HCA(3, ica=ica, random_state=0), X, exact.domains)
    assert fit.mic < 0.02
    assert len(fit.alignment) == 3 and set(fit.alignment) <= set(exact.feature_names)


def test_robust_fit_four_components_uses_certified_sequential_search(exact):
    sim = simulate_scm(n_domains=4, n_per_domain=1500, n_components=4, alpha=0.0,
                       random_state=2)
    X = pd.DataFrame(sim.X, columns=list(sim.feature_names))
    fit = rb.robust_fit(HCA(4, search=rb.search_for(4, 4)), X, sim.domains)
    assert fit.search_result.search == "sequential" and fit.certified
    assert fit.mic < 0.02 and len(fit.alignment) == 4


@pytest.mark.slow  # more than ~5 s on a loaded machine
def test_bootstrap_fits_deterministic(frame):
    rows = frame[frame["base_model"].isin(FOUR)]
    X, dom = rows[list(BENCH)], rows["base_model"].to_numpy(dtype=object)
    a = rb.bootstrap_fits(HCA(), X, dom, n_boot=3, random_state=4)
    b = rb.bootstrap_fits(HCA(), X, dom, n_boot=3, random_state=4, n_jobs=2)
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["replicate", "mic", "alignment", "order", "converged",
                               "certified"]
    assert a["certified"].all()
    assert a["replicate"].tolist() == [0, 1, 2]
    c = rb.bootstrap_fits(HCA(), X, dom, n_boot=3, random_state=5)
    assert not np.allclose(a["mic"], c["mic"])
    with pytest.raises(ValueError, match="n_boot"):
        rb.bootstrap_fits(HCA(), X, dom, n_boot=0)


# ----------------------------------------------------------------------------- S_inv
def test_invariant_set_rule_excludes_the_other_mixing(frame):
    res = rb.invariant_set_rule(frame, BENCH, CANDS, n_splits=20, n_boot=10, random_state=0)
    assert res.members == FOUR                       # X1 has another G
    assert 0 < res.threshold < res.dist.loc["X1", "D1"]
    assert res.boot_share == pytest.approx(1.0)
    assert "S_inv (4)" in res.summary()
    with pytest.raises(ValueError, match="no model"):
        rb.invariant_set_rule(frame, BENCH, CANDS + ("D9",), n_splits=5)


# ----------------------------------------------------------------------------- settings
def test_settings(frame):
    assert rb.raw_scores_setting(frame, BENCH).benchmarks == tuple(f"{b}_raw" for b in BENCH)
    pic = rb.ica_setting(frame, "picard-o", BENCH)
    assert pic.ica == "picard-o" and not pic.subspace and pic.name == "Picard-O"
    assert rb.components_setting(frame, 2, BENCH).n_components == 2
    nom = rb.without_merged_setting(frame, BENCH)
    gone = frame["merged"] | (frame["type"] == "merge")
    assert len(nom.frame) == int((~gone).sum()) and not nom.frame["merged"].any()
    authors = frame.assign(authors_label=frame["base_model"].map(
        {"D1": "llama-3-8b", "D2": "qwen2-7b", "D3": "mistral-7b", "D4": "phi-3-4b"}))
    auth = rb.authors_domains_setting(authors, BENCH)
    assert set(auth.frame["base_model"].dropna()) == {"Llama-3-8B", "Qwen2-7B", "Mistral-7B"}
    with pytest.raises(ValueError, match="lacks column"):
        rb.Setting("x", "y", frame.drop(columns="b1"), BENCH)
    with pytest.raises(ValueError, match="unknown ica"):
        rb.Setting("x", "y", frame, BENCH, ica="infomax")
    names = [s.name for s in rb.paper_settings(frame.rename(columns=dict(zip(BENCH, [
        "ifeval", "bbh", "math_lvl_5", "gpqa", "musr", "mmlu_pro"]))).assign(**{
        f"{b}_raw": 0.5 for b in ["ifeval", "bbh", "math_lvl_5", "gpqa", "musr", "mmlu_pro"]}))]
    assert names == ["default", "raw scores", "Picard-O", "Picard", "2 components",
                     "4 components", "without merges"]


def test_setting_with_missing_scores_in_fitted_domains_raises(frame):
    bad = frame.copy()
    bad.loc[bad.index[0], "b1"] = np.nan
    rec_setting = rb.Setting("bad", "data", bad, BENCH)
    with pytest.raises(ValueError, match="missing scores"):
        rb.run_setting(rec_setting, domains=FOUR, candidates=CANDS, n_boot=1, n_splits=5)


# ----------------------------------------------------------------------------- table
def _run(frame, seed=0, n_jobs=None):
    settings = [rb.default_setting(frame, BENCH), rb.ica_setting(frame, "picard-o", BENCH),
                rb.components_setting(frame, 2, BENCH), rb.without_merged_setting(frame, BENCH)]
    return rb.run_perturbations(settings, domains=FOUR, candidates=CANDS, n_boot=3,
                                n_boot_models=4, seeds=range(2), n_splits=10,
                                random_state=seed, pattern=rb.role_pattern(("b1", "b2", "b3")),
                                n_jobs=n_jobs)


@pytest.fixture(scope="module")
def table(frame):
    return _run(frame)


def test_run_perturbations_structure(table):
    t = table.table
    assert list(t.index) == ["default", "Picard-O", "2 components", "without merges",
                             "bootstrap", "ICA seed"]
    for col in ["group", "models", "s_inv", "s_inv_share", "tau", "mic", "mic_lo", "mic_hi",
                "alignment", "order", "order_share", "paper_share", "paper_order",
                "default_order", "certified", "ica_converged", "n_resamples"]:
        assert col in t.columns
    assert t.loc["default", "default_order"] == True  # noqa: E712 (nullable boolean)
    assert pd.isna(t.loc["2 components", "default_order"])      # fewer factors: undefined
    assert pd.isna(t.loc["2 components", "paper_order"])
    assert t.loc["default", "s_inv"] == FOUR
    # S_inv is PCA-based: the ICA rows report the default's set without recomputing it
    assert not t.loc["Picard-O", "s_inv_recomputed"] and not t.loc["ICA seed", "s_inv_recomputed"]
    assert t.loc["Picard-O", "s_inv"] == t.loc["default", "s_inv"]
    assert t.loc["default", "models"] == 1200 and t.loc["without merges", "models"] < 1200
    assert (t["mic_lo"] <= t["mic_hi"]).all()
    assert t.loc["bootstrap", "n_resamples"] == 4 and t.loc["ICA seed", "n_resamples"] == 2
    assert t["order_share"].between(0, 1).all() and t["paper_share"].between(0, 1).all()
    # exact SCM: every 3-component fit is nearly exact
    assert t.loc[["default", "Picard-O"], "mic"].max() < 0.05
    reps = table.replicates
    assert set(reps["perturbation"]) == set(t.index)
    sizes = reps.groupby("perturbation").size().reindex(t.index)
    assert (sizes == t["n_resamples"]).all()


@pytest.mark.slow  # more than ~5 s
def test_run_perturbations_deterministic(frame, table):
    again = _run(frame)
    pd.testing.assert_frame_equal(table.table, again.table)
    pd.testing.assert_frame_equal(table.replicates, again.replicates)
    parallel = _run(frame, n_jobs=2)  # the refits in two processes: the same table
    pd.testing.assert_frame_equal(table.table, parallel.table)
    pd.testing.assert_frame_equal(table.replicates, parallel.replicates)


def test_setting_estimator_is_hca_with_the_settings_search(frame):
    est = rb.components_setting(frame, 4, BENCH).estimator(4, random_state=3)
    assert isinstance(est, HCA) and est.n_components == 4 and est.random_state == 3
    assert est.search == "sequential" == rb.search_for(4, 4)
    assert rb.ica_setting(frame, "picard", BENCH).estimator(4).ica == "picard"
    assert rb.search_for(3, 4) == "exhaustive"


def test_summary_and_plots(table):
    assert "bootstrap" in table.summary() and "ICA seed" in table.summary()
    ax = hp.plot_robustness(table)
    assert len(ax.get_yticklabels()) == len(table.table)
    ax2 = hp.plot_s_inv_membership(table, CANDS, highlight=FOUR)
    assert len(ax2.patches) == len(table.table) * len(CANDS) + len(FOUR)
    plt.close("all")


def test_run_perturbations_validates(frame):
    s = rb.default_setting(frame, BENCH)
    with pytest.raises(ValueError, match="empty"):
        rb.run_perturbations([])
    with pytest.raises(ValueError, match="unique"):
        rb.run_perturbations([s, s], domains=FOUR, candidates=CANDS)


def test_precedence_counts():
    reps = pd.DataFrame({
        "perturbation": ["a", "a", "a", "b"],
        "alignment": [("bbh", "ifeval", "math_lvl_5"), ("math_lvl_5", "mmlu_pro_raw", "ifeval"),
                      ("ifeval", "ifeval", "math_lvl_5"), ("gpqa", "musr")],
    })
    out = rb.precedence(reps).set_index(["perturbation", "pair"])
    assert out.loc[("a", "general < IFEval"), "defined"] == 2
    assert out.loc[("a", "general < IFEval"), "share"] == pytest.approx(1.0)
    assert out.loc[("a", "general < MATH"), "share"] == pytest.approx(0.5)
    assert out.loc[("a", "IFEval < MATH"), "agree"] == 2
    assert out.loc[("a", "IFEval < MATH"), "share"] == pytest.approx(2 / 3)
    assert out.loc[("b", "IFEval < MATH"), "defined"] == 0
    assert np.isnan(out.loc[("b", "IFEval < MATH"), "share"])
    with pytest.raises(ValueError, match="names"):
        rb.precedence(reps, names=("x",))


@pytest.mark.slow  # more than ~5 s
def test_page_run_on_the_real_data():
    """rb.run: the page's table with the authors' setup's frame as the authors' row (the
    page's own results, from the results store when its notebook computed them)."""
    from hca.paper.replication import v2_frame

    res = rb.run("careful", rb.Settings())
    again = rb.run("careful", rb.Settings())  # computed once: an equal read-only copy
    assert again is not res and again.table.table.equals(res.table.table)
    with pytest.raises(ValueError, match="perturbs the careful setup"):
        rb.run("authors", rb.Settings())
    t = res.table.table
    assert res.models["authors"] == len(v2_frame("authors")) == 4576
    assert t.loc["authors' domain rule", "models"] == res.authors_tables["models"].iloc[-1]
    assert abs(t.loc["authors' domain rule", "mic"] - res.authors_tables["mic"].iloc[-1]) < 1e-12
    assert list(res.authors_tables["precision duplicates"]) == ["dropped", "kept"] * 2
    assert np.allclose(res.raw_map.loc[["ifeval", "math_lvl_5"], "slope"], 100)
    assert "authors' domain rule" in res.summary()
