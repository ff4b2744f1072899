"""Tests for hca.causal: sigmoid scaling law and the ATE of fine-tuning."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from scipy.special import expit  # noqa: E402

from hca.causal import (  # noqa: E402
    AUTHORS_LOG_OFFSET,
    PARAM_NAMES,
    ate_aipw,
    ate_backdoor,
    ate_ipw,
    ate_ipw_strata,
    ate_panel,
    authors_scaling_frame,
    base_lineage,
    family_size_means,
    fine_tuning_treatment,
    ipw_balance,
    stratum_effects,
    fit_sigmoid_curve_fit,
    fit_sigmoid_law,
    fit_sigmoid_panel,
    propensity_scores,
    rows_by_name,
    scaling_frame,
    sigmoid_law,
    size_monotonicity,
)
from hca.attribution import (  # noqa: E402
    authors_base_model,
    authors_token_family,
    log_compute,
    pretraining_flops,
)
from hca.plots import (  # noqa: E402
    plot_ate,
    plot_ate_steps,
    plot_family_sizes,
    plot_propensity_strata,
    plot_sigmoid_fit,
    plot_sigmoid_panel,
)

TRUE = {"L": 40.0, "k": 0.8, "log_c0": 53.0, "tau": 3.0, "b": 10.0}
TRUE_ATE = 5.0


def sigmoid_data(n: int, seed: int, sd: float = 1.5):
    """Log-compute between 1e21 and 1e25 FLOPs, half fine-tuned, known sigmoid law + noise."""
    rng = np.random.default_rng(seed)
    log_c = rng.uniform(np.log(1e21), np.log(1e25), n)
    t = rng.integers(0, 2, n)
    y = sigmoid_law(log_c, t, **TRUE) + rng.normal(0.0, sd, n)
    return log_c, t, y


def _mu(x):
    """Score as a steep increasing function of log compute (the confounding path)."""
    return 30.0 * expit(1.2 * (x - 53.0)) + 5.0


def confounded_continuous(n: int, seed: int, slope: float = 0.8):
    """Bigger models are fine-tuned more often and score higher: naive difference is biased."""
    rng = np.random.default_rng(seed)
    x = rng.normal(53.0, 1.5, n)
    t = (rng.uniform(size=n) < expit(-0.3 + slope * (x - 53.0))).astype(int)
    y = _mu(x) + TRUE_ATE * t + rng.normal(0.0, 2.0, n)
    return x, t, y


def confounded_strata(seed: int, n_base: int = 12, per: int = 40):
    """One x value per base model, heterogeneous effect tau(x) = 5 + 0.5 (x - 53)."""
    rng = np.random.default_rng(seed)
    x = np.repeat(np.linspace(49.0, 57.0, n_base), per)
    t = (rng.uniform(size=len(x)) < expit(0.6 * (x - 53.0))).astype(int)
    tau_x = 5.0 + 0.5 * (x - 53.0)
    y = _mu(x) + tau_x * t + rng.normal(0.0, 2.0, len(x))
    return x, t, y, float(tau_x.mean())


# ----------------------------------------------------------------------------- compute
def test_pretraining_flops_units():
    # Llama-2-7B: 7B parameters, 2T tokens -> 84e21 FLOPs (ObsScaling's "FLOPs (1E21)" = 84)
    assert pretraining_flops(7.0, 2.0)[0] == pytest.approx(8.4e22)
    assert log_compute([7.0, 70.0], [2.0, 2.0]) == pytest.approx(np.log([8.4e22, 8.4e23]))
    with pytest.raises(ValueError, match="params_b"):
        pretraining_flops(0.0, 2.0)
    with pytest.raises(ValueError, match="tokens_t"):
        log_compute(7.0, np.nan)


# ----------------------------------------------------------------------------- sigmoid law
def test_sigmoid_fit_recovers_parameters():
    log_c, t, y = sigmoid_data(300, seed=1)
    fit = fit_sigmoid_law(log_c, t, y)
    assert fit.converged and not fit.tau_fixed and fit.at_bound == ()
    assert fit.n == 300 and fit.n_treated == int(t.sum())
    assert fit.r2 > 0.97
    assert fit.resid_std == pytest.approx(1.5, rel=0.15)
    for p in PARAM_NAMES:
        assert abs(fit.params[p] - TRUE[p]) < 4 * fit.se[p], p
        assert 0 < fit.se[p] < 0.1 * max(1.0, abs(TRUE[p])), p
    assert fit.c0 == pytest.approx(np.exp(fit.log_c0))
    np.testing.assert_allclose(fit.predict(log_c[:5], t[:5]), sigmoid_law(log_c[:5], t[:5], **fit.params))
    frame = fit.to_frame()
    assert list(frame.index) == list(PARAM_NAMES)
    assert frame.loc["tau", "estimate"] == pytest.approx(fit.tau)
    assert "tau" in fit.summary() and "FLOPs" in fit.summary()


def test_sigmoid_se_match_scipy_curve_fit():
    from scipy.optimize import curve_fit

    log_c, t, y = sigmoid_data(150, seed=2)
    fit = fit_sigmoid_law(log_c, t, y)
    popt, pcov = curve_fit(
        lambda X, L, k, c0, tau, b: sigmoid_law(X[0], X[1], L, k, c0, tau, b),
        (log_c, t), y, p0=list(TRUE.values()),
    )
    np.testing.assert_allclose([fit.params[p] for p in PARAM_NAMES], popt, rtol=1e-5)
    np.testing.assert_allclose([fit.se[p] for p in PARAM_NAMES], np.sqrt(np.diag(pcov)), rtol=1e-3)


def test_sigmoid_standard_errors_shrink_with_n():
    small = fit_sigmoid_law(*sigmoid_data(60, seed=3))
    large = fit_sigmoid_law(*sigmoid_data(600, seed=3))
    for p in PARAM_NAMES:
        # sqrt(10) ~ 3.2 times smaller in theory
        assert large.se[p] < 0.6 * small.se[p], p


def test_sigmoid_fit_tau_fixed_when_single_arm():
    log_c, t, y = sigmoid_data(100, seed=4)
    ones = np.ones_like(t)
    y1 = sigmoid_law(log_c, ones, **TRUE) + np.random.default_rng(0).normal(0, 1.0, 100)
    fit = fit_sigmoid_law(log_c, ones, y1)
    assert fit.tau_fixed and fit.tau == 0.0 and np.isnan(fit.se["tau"])
    assert "fixed at 0" in fit.notes and "fixed" in fit.summary()
    # tau absorbed in b: b_hat ~ b + tau
    assert fit.b == pytest.approx(TRUE["b"] + TRUE["tau"], abs=4 * fit.se["b"])
    assert fit.L == pytest.approx(TRUE["L"], abs=4 * fit.se["L"])


def test_sigmoid_fit_is_deterministic_and_start_independent():
    log_c, t, y = sigmoid_data(80, seed=5)
    a = fit_sigmoid_law(log_c, t, y)
    b = fit_sigmoid_law(log_c, t, y)
    assert a.params == b.params and a.se == b.se
    # a bad user start must not change the optimum (grid starts are tried too)
    c = fit_sigmoid_law(log_c, t, y, start={"L": 1.0, "k": 5.0, "log_c0": 49.0, "tau": -10.0, "b": 0.0})
    for p in PARAM_NAMES:
        assert c.params[p] == pytest.approx(a.params[p], rel=1e-5, abs=1e-8)


def test_sigmoid_fit_reports_parameters_at_bounds():
    # a sharp step: the best k is steeper than the bound (50 / sd(log_c)) allows
    rng = np.random.default_rng(0)
    log_c = rng.uniform(50, 56, 60)
    t = np.tile([0, 1], 30)
    y = 10 + 20 * (log_c > 53) + 2 * t + rng.normal(0, 0.3, 60)
    fit = fit_sigmoid_law(log_c, t, y)
    assert "k" in fit.at_bound and "at a bound" in fit.notes
    assert fit.k == pytest.approx(50 / log_c.std(), rel=1e-4)
    assert fit.tau == pytest.approx(2.0, abs=0.3) and fit.log_c0 == pytest.approx(53.0, abs=0.1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"log_c": np.linspace(48, 56, 5), "t": [0, 1, 0, 1, 0], "y": [1, 2, 3, 4, 5]}, "at least 6"),
        ({"log_c": [48, 49, np.nan, 51, 52, 53], "t": [0, 1] * 3, "y": np.arange(6.0)}, "log_c contains"),
        ({"log_c": np.linspace(48, 56, 6), "t": [0, 1] * 3, "y": [1, 2, 3, np.inf, 5, 6]}, "y contains"),
        ({"log_c": np.full(8, 50.0), "t": [0, 1] * 4, "y": np.arange(8.0)}, "log_c is constant"),
        ({"log_c": np.linspace(48, 56, 6), "t": [0, 1] * 3, "y": np.ones(6)}, "y is constant"),
        ({"log_c": np.linspace(48, 56, 6), "t": [0, 1, 2, 0, 1, 0], "y": np.arange(6.0)}, "binary"),
        ({"log_c": np.linspace(48, 56, 7), "t": [0, 1] * 3, "y": np.arange(6.0)}, "same length"),
        ({"log_c": np.geomspace(1e21, 1e25, 6), "t": [0, 1] * 3, "y": np.arange(6.0)}, "natural log"),
    ],
)
def test_sigmoid_fit_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fit_sigmoid_law(**kwargs)


# ----------------------------------------------------------------------------- ATE
@pytest.mark.slow  # more than ~5 s on a loaded machine
def test_backdoor_and_ipw_remove_confounding_continuous_x():
    x, t, y = confounded_continuous(800, seed=0)
    bd = ate_backdoor(x, t, y, n_boot=200, random_state=0)
    ipw = ate_ipw(x, t, y, n_boot=200, random_state=0)
    aipw = ate_aipw(x, t, y, n_boot=200, random_state=0)
    # the example is confounded: ignoring x is badly biased
    assert bd.naive > TRUE_ATE + 4.0
    assert "spline" in bd.details
    assert abs(bd.ate - TRUE_ATE) < 0.7
    assert abs(aipw.ate - TRUE_ATE) < 0.7
    assert abs(ipw.ate - TRUE_ATE) < 1.5
    for res in (bd, ipw, aipw):
        assert res.ci_low < TRUE_ATE < res.ci_high, res.estimator
        assert res.ci_high < res.naive, res.estimator  # adjusted interval excludes the naive value
        assert res.ate == pytest.approx(res.mu1 - res.mu0)
        assert res.n_treated + res.n_control == 800
        assert res.n_boot_failed == 0 and res.boot_samples.shape == (200,)
        assert res.estimator in res.summary()


def test_backdoor_stratified_recovers_heterogeneous_ate():
    x, t, y, true_ate = confounded_strata(seed=1)
    bd = ate_backdoor(x, t, y, n_boot=200, random_state=0)
    assert "stratified" in bd.details and bd.n_used == len(x)
    assert abs(bd.naive - true_ate) > 4.0
    assert abs(bd.ate - true_ate) < 0.7
    assert bd.ci_low < true_ate < bd.ci_high
    # stratified estimator by hand
    strata = np.unique(x)
    by_hand = np.mean([y[(x == s) & (t == 1)].mean() - y[(x == s) & (t == 0)].mean() for s in strata])
    assert bd.ate == pytest.approx(by_hand)  # equal-size strata: plain mean of stratum contrasts
    ipw = ate_ipw(x, t, y, n_boot=200, random_state=0)
    assert abs(ipw.ate - true_ate) < 1.0 and ipw.ci_low < true_ate < ipw.ci_high


def test_stratified_drops_strata_without_both_arms():
    x, t, y, _ = confounded_strata(seed=2)
    t = t.copy()
    t[x == x.max()] = 1  # top stratum: no controls
    res = ate_backdoor(x, t, y, n_boot=0)
    per = np.sum(x == x.max())
    assert res.n_used == len(x) - per
    assert res.share_outside_support == pytest.approx(per / len(x))
    assert np.isnan(res.ci_low) and "not computed" in res.summary()


@pytest.mark.slow  # more than ~5 s
def test_backdoor_bootstrap_coverage():
    hits = []
    for seed in range(20):
        x, t, y = confounded_continuous(300, seed=100 + seed)
        res = ate_backdoor(x, t, y, n_boot=100, random_state=seed)
        hits.append(res.ci_low < TRUE_ATE < res.ci_high)
    assert np.mean(hits) >= 0.8


def test_ate_deterministic_and_cluster_bootstrap():
    x, t, y, true_ate = confounded_strata(seed=3)
    a = ate_backdoor(x, t, y, n_boot=100, random_state=5)
    b = ate_backdoor(x, t, y, n_boot=100, random_state=5)
    np.testing.assert_array_equal(a.boot_samples, b.boot_samples)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    c = ate_ipw(x, t, y, n_boot=100, random_state=5)
    d = ate_ipw(x, t, y, n_boot=100, random_state=5)
    np.testing.assert_array_equal(c.boot_samples, d.boot_samples)
    # cluster bootstrap over base models (strata); clusters hold both arms
    g = ate_backdoor(x, t, y, n_boot=100, random_state=5, domains=x.round(6))
    assert g.ate == a.ate and not np.array_equal(g.boot_samples, a.boot_samples)
    assert g.ci_low < true_ate < g.ci_high


@pytest.mark.parametrize("fn", [ate_backdoor, ate_ipw, ate_aipw])
def test_ate_rejects_bad_input(fn):
    x, t, y = confounded_continuous(50, seed=4)
    with pytest.raises(ValueError, match="y contains"):
        fn(x, t, np.where(np.arange(50) == 3, np.nan, y), n_boot=0)
    with pytest.raises(ValueError, match="binary"):
        fn(x, np.where(t == 1, 2, 0), y, n_boot=0)
    one_control = np.ones_like(t)
    one_control[0] = 0
    with pytest.raises(ValueError, match="at least 2 units in each arm"):
        fn(x, one_control, y, n_boot=0)
    with pytest.raises(ValueError, match="same length"):
        fn(x[:-1], t, y, n_boot=0)
    with pytest.raises(ValueError, match="ci"):
        fn(x, t, y, n_boot=10, ci=0.0)


def test_ate_no_overlap_and_bad_options():
    x = np.r_[np.linspace(48, 50, 20), np.linspace(52, 54, 20)]
    t = np.r_[np.zeros(20, int), np.ones(20, int)]
    y = x + t
    with pytest.raises(ValueError, match="do not overlap"):
        ate_backdoor(x, t, y, method="spline", n_boot=0)
    with pytest.raises(ValueError, match="both arms"):
        ate_backdoor(np.repeat([1.0, 2.0], 20), t, y, method="stratified", n_boot=0)
    with pytest.raises(ValueError, match="method"):
        ate_backdoor(x, t, y, method="kernel", n_boot=0)
    with pytest.raises(ValueError, match="trim"):
        ate_ipw(x, t, y, trim=0.6, n_boot=0)
    with pytest.raises(ValueError, match="arm is empty"):
        ate_ipw(x, t, y, trim=0.2, n_boot=0)  # separated arms: every unit trimmed


# ----------------------------------------------------------------------------- propensity
def test_propensity_minimises_the_stated_ridge_objective():
    # sum of log-losses + penalty/2 * ||slope||^2, intercept unpenalised (C = 1/penalty)
    from scipy.optimize import minimize

    rng = np.random.default_rng(12)
    x = rng.normal(3.0, 2.0, 300)
    t = (rng.random(300) < expit(1.5 * (x - 3.0))).astype(int)
    penalty = 0.5
    z = (x - x.mean()) / x.std()

    def objective(beta):
        eta = beta[0] + beta[1] * z
        return np.sum(np.logaddexp(0.0, eta) - t * eta) + penalty / 2 * beta[1] ** 2

    beta = minimize(objective, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(propensity_scores(x, t, penalty=penalty),
                               expit(beta[0] + beta[1] * z), atol=1e-6)
    with pytest.raises(ValueError, match="single arm"):
        propensity_scores(x, np.ones(300))


def test_propensity_matches_unpenalised_logistic():
    x, t, _ = confounded_continuous(500, seed=8)
    e = propensity_scores(x, t, penalty=1e-8)
    # maximum-likelihood score equations of logit(e) = a + b x: sum(t - e) = sum((t - e) x) = 0
    assert abs(np.sum(t - e)) < 1e-6
    assert abs(np.sum((t - e) * (x - 53.0))) < 1e-5
    # the fitted log-odds are linear in x with the generating slope (0.8) within noise
    slope = np.polyfit(x, np.log(e / (1 - e)), 1)[0]
    assert slope == pytest.approx(0.8, abs=0.25)
    e2 = propensity_scores(x, t, degree=2)
    assert e2.shape == (500,) and np.all((e2 > 0) & (e2 < 1))


# ----------------------------------------------------------------------------- plots
def test_plot_sigmoid_fit():
    log_c, t, y = sigmoid_data(60, seed=12)
    fit = fit_sigmoid_law(log_c, t, y)
    fig, ax0 = plt.subplots()
    ax = plot_sigmoid_fit(fit, log_c, t, y, ax=ax0)
    assert ax is ax0
    assert len(ax.collections) == 2 and len(ax.lines) == 2
    # T=1 curve sits tau above the T=0 curve
    diff = ax.lines[1].get_ydata() - ax.lines[0].get_ydata()
    np.testing.assert_allclose(diff, fit.tau)
    ax2 = plot_sigmoid_fit(fit, log_c, t, y, flops_axis=True)
    assert ax2.get_xscale() == "log"
    assert ax2.lines[0].get_xdata().min() == pytest.approx(np.exp(log_c.min()))
    plt.close("all")


def test_plot_ate():
    df = pd.DataFrame({"outcome": ["bbh", "bbh", "ifeval", "ifeval"],
                       "estimator": ["backdoor", "ipw"] * 2,
                       "ate": [1.0, 1.5, 10.0, 9.0], "ci_low": [0.0, 0.5, 8.0, 7.0],
                       "ci_high": [2.0, 2.5, 12.0, 11.0]})
    ax = plot_ate(df)
    assert [tl.get_text() for tl in ax.get_yticklabels()] == ["bbh", "ifeval"]
    assert len(ax.containers) == 2  # one errorbar container per estimator
    with pytest.raises(ValueError, match="ci_high"):
        plot_ate(df.drop(columns="ci_high"))
    # a percentile interval that does not hold its point (a small bootstrap): drawn on its own
    odd = df.assign(ci_low=[1.2, 0.5, 8.0, 7.0], ci_high=[2.0, 2.5, 12.0, 11.0])
    ax = plot_ate(odd)
    assert len(ax.containers) == 3  # the odd interval is a container of its own
    first = ax.containers[0].lines[2][0].get_segments()  # the point's own bars: none for bbh
    assert first[0][0][0] == first[0][1][0] == pytest.approx(1.0)
    bars = ax.containers[1].lines[2][0].get_segments()  # bbh's interval, drawn apart
    assert len(bars) == 1 and bars[0][0][0] == pytest.approx(1.2)
    assert bars[0][1][0] == pytest.approx(2.0)
    plt.close("all")


# ----------------------------------------------------------------------------- leaderboard rows
def _lb(rows):
    return pd.DataFrame(rows, columns=["model_id", "type"])


def test_fine_tuning_treatment_rules():
    df = _lb([
        ("meta-llama/Meta-Llama-3-8B", "pretrained"),
        ("meta-llama/Llama-3.1-8B-Instruct", "pretrained"),  # mislabelled on the leaderboard
        ("google/gemma-2-9b-it", "pretrained"),
        ("NousResearch/Yarn-Llama-2-7b-128k", "continuously_pretrained"),
        ("a/credit-model", "pretrained"),  # "it" only as a separate token
        ("b/some-merge", "merge"),
        ("c/tune", "fine-tuned"),
        ("meta-llama/Llama-3.1-8B", "fine-tuned"),
    ])
    out = fine_tuning_treatment(df)
    assert out["T"].tolist() == [0, 1, 1, 0, 0, 1, 1, 1]
    assert out["t_rule"].tolist() == ["type", "name marker", "name marker", "type", "type",
                                      "type", "type", "type"]
    plain = fine_tuning_treatment(df, name_markers=False)
    assert plain["T"].tolist() == [0, 0, 0, 0, 0, 1, 1, 1]
    fixed = fine_tuning_treatment(df, overrides={"meta-llama/Llama-3.1-8B": 0})
    assert fixed["T"].iloc[-1] == 0 and fixed["t_rule"].iloc[-1] == "override"
    with pytest.raises(ValueError, match="not in frame"):
        fine_tuning_treatment(df, overrides={"x/y": 1})
    with pytest.raises(ValueError, match="0 or 1"):
        fine_tuning_treatment(df, overrides={"c/tune": 2})
    with pytest.raises(ValueError, match="missing column"):
        fine_tuning_treatment(df.drop(columns="type"))
    bad = df.copy()
    bad.loc[2, "type"] = None
    with pytest.raises(ValueError, match="'type' has 1 missing"):
        fine_tuning_treatment(bad)


def test_fine_tuning_treatment_matches_authors_pretrain_column(v2):
    out = fine_tuning_treatment(v2, name_markers=False)
    np.testing.assert_array_equal(out["T"].to_numpy(), (~v2["authors_pretrain"]).astype(int))


def test_base_lineage():
    s = pd.Series(["Llama-3.1-8B", "CodeLlama-7B", "Qwen2.5-Coder-7B", "Mixtral-8x7B", None,
                   "Gemma-2-9B"], dtype="string")
    out = base_lineage(s)
    assert out.iloc[[0, 1, 2, 3, 5]].tolist() == ["Llama", "Llama", "Qwen", "Mistral", "Gemma"]
    assert pd.isna(out.iloc[4])
    with pytest.raises(ValueError, match="unknown base model"):
        base_lineage(["Llama-9-1B"])


def test_scaling_frame_small():
    df = pd.DataFrame({
        "model_id": ["meta-llama/Meta-Llama-3-8B", "someone/Llama-3-8B-tuned", "x/unknown-model",
                     "Qwen/Qwen2.5-7B-Instruct"],
        "params_b": [8.03, 8.03, 3.3, 7.616],
        "type": ["pretrained", "fine-tuned", "fine-tuned", "pretrained"],
        "official_providers": [True, False, True, True],
    })
    out = scaling_frame(df)
    assert list(out.index) == [0, 1, 3]  # the unattributed row is dropped
    assert out["base_model"].tolist() == ["Llama-3-8B", "Llama-3-8B", "Qwen2.5-7B"]
    assert out["T"].tolist() == [0, 1, 1]  # Instruct typed pretrained -> name marker
    assert out["lineage"].tolist() == ["Llama", "Llama", "Qwen"]
    assert out["log_c"].iloc[0] == pytest.approx(np.log(6 * 8.03e9 * 15e12))
    assert out["base_params_b"].iloc[2] == pytest.approx(7.616)
    off = scaling_frame(df, official_only=True)
    assert list(off.index) == [0, 3]
    with pytest.raises(ValueError, match="official_providers"):
        scaling_frame(df.drop(columns="official_providers"), official_only=True)


def test_authors_scaling_frame():
    df = pd.DataFrame({
        "model_id": ["meta-llama/Meta-Llama-3-8B", "org/Llama-3-8B-math", "x/llama-3-8b-chat",
                     "y/mistral-7b-ft", "z/mpt-7b", "Qwen/Qwen2.5-7B", "w/Llama-3-8B-zero",
                     "v/unknown"],
        "base_model_hub": [None] * 8,
        "architecture": ["LlamaForCausalLM"] * 3 + ["MistralForCausalLM", "MPTForCausalLM",
                                                    "Qwen2ForCausalLM", "LlamaForCausalLM",
                                                    "LlamaForCausalLM"],
        "params_b": [8.03, 8.03, 8.03, 7.24, 7.0, 7.616, 0.0, 3.0],
        "type": ["pretrained", "fine-tuned", "chat", "fine-tuned", "pretrained", "pretrained",
                 "fine-tuned", None],
        "official_providers": [True, True, True, True, True, False, True, True],
    })
    out = authors_scaling_frame(df)
    # chat (type), mpt-7b (no token family under the strict rule), not official, C = 0 and
    # untyped rows are left out
    assert list(out.index) == [0, 1, 3]
    assert out["T"].tolist() == [0, 1, 1]
    assert out["token_family"].tolist() == ["llama-3", "llama-3", "mistral-7b"]
    assert out["lineage"].tolist() == ["Llama", "Llama", "mistral-7b"]
    assert out["compute_bt"].iloc[0] == pytest.approx(6 * 8.03 * 15.0)
    assert out["log_c"].iloc[2] == pytest.approx(np.log(6 * 7.24e9 * 0.8e12))
    wide = authors_scaling_frame(df, types=None, official_only=False)
    assert list(wide.index) == [0, 1, 2, 3, 5] and wide["T"].tolist() == [0, 1, 1, 1, 0]
    with pytest.raises(ValueError, match="0 or 1"):
        authors_scaling_frame(df, types={"pretrained": 2})
    with pytest.raises(ValueError, match="missing column"):
        authors_scaling_frame(df.drop(columns="architecture"))


def test_authors_rule_strict_and_token_family():
    # the notebook's extract_base_model_from_name returns a spelled label early ...
    assert authors_base_model("z/mpt-7b", None, "MPTForCausalLM", 7.0) == "mpt-7b"
    assert authors_base_model("z/mpt-7b", None, "MPTForCausalLM", 7.0, strict=True) is None
    # ... and its step 4 has falcon and phi branches
    assert authors_base_model("tiiuae/falcon-mamba-7b", None, "FalconMambaForCausalLM",
                              7.0) is None
    assert authors_base_model("tiiuae/falcon-mamba-7b", None, "FalconMambaForCausalLM", 7.0,
                              strict=True) == "falcon-7b"
    assert authors_base_model("microsoft/phi-4", "microsoft/phi-4", "Phi3ForCausalLM", 14.66,
                              strict=True) == "phi-3-14b"
    assert authors_base_model("a/Qwen2.5-14B-x", strict=True) == "qwen2.5-14b"
    assert [authors_token_family(x) for x in ("llama-3.1-8b", "gemma-2-9b", "mixtral-8x7b",
                                              "phi-3--1b", "gemma-2-5b", None)] == [
        "llama-3.1", "gemma-2-9b", "mixtral", "phi-3", None, None]


def test_rows_by_name_and_size_monotonicity():
    df = pd.DataFrame({"model_id": ["Qwen/Qwen2.5-14B", "a/qwen2.5-7b-x", "b/Qwen2.5-72B",
                                    "c/qwen2_5-7b"]})
    lab = rows_by_name(df, {"7B": "qwen2.5-7b", "14B": "qwen2.5-14b"})
    # "." is a regex wildcard, as in the authors' str.contains
    assert lab.tolist()[:2] == ["14B", "7B"] and pd.isna(lab.iloc[2]) and lab.iloc[3] == "7B"
    tab = pd.DataFrame({"family": ["F"] * 3, "outcome": ["y"] * 3, "size": [1.0, 7.0, 3.0],
                        "mean": [1.0, 3.0, 4.0]})
    m = size_monotonicity(tab).iloc[0]
    assert m["largest_minus_smallest"] == 2.0 and m["adjacent_drops"] == 1 and m["steps"] == 2


def test_fit_sigmoid_curve_fit_matches_least_squares():
    log_c, t, y = sigmoid_data(300, seed=5)
    cf = fit_sigmoid_curve_fit(log_c, t, y)
    ls = fit_sigmoid_law(log_c, t, y)
    assert cf.r2 == pytest.approx(ls.r2, abs=1e-6)
    for p in PARAM_NAMES:
        assert cf.params[p] == pytest.approx(ls.params[p], rel=1e-3, abs=1e-3)
    assert np.isfinite(cf.se["tau"]) and cf.n == 300
    one_arm = fit_sigmoid_curve_fit(log_c, np.zeros_like(t), y)
    assert one_arm.tau == 0.0 and one_arm.tau_fixed and np.isnan(one_arm.se["tau"])
    # the authors' scale: x = ln C - ln 1e21; the midpoint comes back in FLOPs
    shifted = fit_sigmoid_curve_fit(log_c, t, y, offset=0.0)
    assert shifted.r2 == pytest.approx(cf.r2, abs=1e-4)
    assert AUTHORS_LOG_OFFSET == pytest.approx(np.log(1e21))


# ----------------------------------------------------------------------------- ipw on strata
def test_common_strata_and_ipw_strata():
    x, t, y, _ = confounded_strata(seed=21)
    # make the first stratum all-control and the last all-treated
    t = t.copy()
    t[x == x.min()], t[x == x.max()] = 0, 1
    mask = np.isin(x, x[t == 1]) & np.isin(x, x[t == 0])  # strata with both arms
    assert not mask[x == x.min()].any() and not mask[x == x.max()].any()
    assert mask.sum() == len(x) - 80
    a = ate_ipw_strata(x, t, y, n_boot=0)
    b = ate_ipw(x[mask], t[mask], y[mask], n_boot=0)
    assert a.estimator == "ipw_strata" and a.ate == pytest.approx(b.ate)
    assert a.n_used == b.n_used
    # same support as the stratified backdoor estimate; both near the strata-weighted truth
    bd = ate_backdoor(x, t, y, n_boot=0)
    tau_x = 5.0 + 0.5 * (x[mask] - 53.0)
    assert bd.ate == pytest.approx(tau_x.mean(), abs=1.0)
    assert a.ate == pytest.approx(tau_x.mean(), abs=1.5)
    r = ate_ipw_strata(x, t, y, n_boot=50, random_state=1, domains=x.round(6))
    assert r.ci_low < r.ate < r.ci_high and r.n_boot_failed < 25


# ----------------------------------------------------------------------------- Figure 12
def _family_frame():
    rng = np.random.default_rng(0)
    rows = []
    spec = {"Qwen2.5": [("Qwen2.5-0.5B", 0.494), ("Qwen2.5-7B", 7.616), ("Qwen2.5-14B", 14.77)],
            "Llama-3.x": [("Llama-3-8B", 8.03), ("Llama-3.1-8B", 8.03), ("Llama-3.2-1B", 1.236),
                          ("Llama-3.2-3B", 3.213), ("Llama-3.1-70B", 70.554)],
            "Gemma-2": [("Gemma-2-2B", 2.614), ("Gemma-2-9B", 9.242)]}
    for fam, bases in spec.items():
        for base, size in bases:
            for _ in range(5 if fam != "Gemma-2" else 40):
                rows.append({"family": fam, "base_model": base, "base_params_b": size,
                             "bbh": 10 * np.log(size + 1) + rng.normal(0, 1), "ifeval": 50.0})
    return pd.DataFrame(rows)


def test_family_size_means():
    df = _family_frame()
    tab = family_size_means(df, ["bbh", "ifeval"], top=3, min_sizes=3)
    # Gemma-2 (2 sizes) is excluded despite having the most rows; Llama-3.x has more rows
    assert list(dict.fromkeys(tab["family"])) == ["Llama-3.x", "Qwen2.5"]
    llama = tab[(tab["family"] == "Llama-3.x") & (tab["outcome"] == "bbh")]
    assert llama["size_label"].tolist() == ["1B", "3B", "8B", "70B"]
    assert llama["n"].tolist() == [5, 5, 10, 5]  # Llama-3 and Llama-3.1 8B pooled by size
    assert (np.diff(llama["mean"]) > 0).all()
    ife = tab[tab["outcome"] == "ifeval"]
    assert np.allclose(ife["mean"], 50.0) and np.allclose(ife["sem"], 0.0)
    one = family_size_means(df, ["bbh"], top=1, min_sizes=2)
    assert set(one["family"]) == {"Gemma-2"}
    row = one.iloc[0]
    assert row["ci_high"] - row["mean"] == pytest.approx(1.959964 * row["sem"], rel=1e-5)
    with pytest.raises(ValueError, match="no family"):
        family_size_means(df, ["bbh"], min_sizes=9)
    with pytest.raises(ValueError, match="missing column"):
        family_size_means(df, ["mmlu"])
    ax = plot_family_sizes(tab, "Qwen2.5", labels={"bbh": "BBH"})
    assert len(ax.patches) == 6 and ax.get_xticklabels()[0].get_text() == "BBH"
    with pytest.raises(ValueError, match="not in table"):
        plot_family_sizes(tab, "Phi-3")
    plt.close("all")


# ----------------------------------------------------------------------------- panels
def _panel_frame(seed: int = 31):
    """Two lineages, 15 base models each (one x per base), sigmoid scores in two outcomes."""
    rng = np.random.default_rng(seed)
    rows = []
    for lin, shift in (("A", 0.0), ("B", 2.0)):
        for j, lc in enumerate(np.linspace(49.0, 57.0, 15)):
            for k in range(6):
                t = int(k > 0)
                rows.append({"lineage": lin, "base_model": f"{lin}{j}", "log_c": lc, "T": t,
                             "y1": sigmoid_law(lc, t, **TRUE) + shift + rng.normal(0, 1.5),
                             "y2": 20 * expit(lc - 53) + 8 * t + rng.normal(0, 6.0)})
    return pd.DataFrame(rows)


@pytest.mark.slow  # more than ~5 s
def test_fit_sigmoid_panel():
    df = _panel_frame()
    subsets = {"all": None, "A": df["lineage"].eq("A").to_numpy()}
    panel = fit_sigmoid_panel(df, ["y1", "y2"], subsets=subsets, domains="base_model", n_boot=60,
                              random_state=3)
    assert panel.subsets == ("all", "A") and panel.outcomes == ("y1", "y2")
    full = fit_sigmoid_law(df["log_c"], df["T"], df["y1"])
    assert panel.fits[("all", "y1")].params == full.params
    bs = panel.boot[("A", "y1")]
    assert bs.samples.shape == (60 - bs.n_failed, 5)
    assert bs.ci_low["tau"] < TRUE["tau"] < bs.ci_high["tau"]
    r2 = panel.r2_table()
    assert len(r2) == 4 and (r2["n_clusters"] == [30, 30, 15, 15]).all()
    assert (r2["r2_ci_low"] < r2["r2"]).all() and (r2["r2"] < r2["r2_ci_high"]).all()
    assert np.allclose(r2["r2_compute"] + r2["r2_t_only"], r2["r2"])
    gap = panel.r2_gap(["y1"], ["y2"])
    assert (gap["gap"] > 0.2).all() and (gap["ci_low"] > 0).all()
    long = panel.to_frame()
    assert len(long) == 4 * 5 and long["ci_low"].notna().all()
    assert "R^2" in panel.summary()
    # warm-started replicates agree with full multi-start refits; n_jobs does not matter
    slow = fit_sigmoid_panel(df, ["y1"], subsets={"A": subsets["A"]}, domains="base_model",
                             n_boot=10, random_state=3, n_starts=2)
    fast = fit_sigmoid_panel(df, ["y1"], subsets={"A": subsets["A"]}, domains="base_model",
                             n_boot=10, random_state=3)
    np.testing.assert_allclose(fast.boot[("A", "y1")].samples, slow.boot[("A", "y1")].samples,
                               rtol=1e-3, atol=1e-3)
    par = fit_sigmoid_panel(df, ["y1"], subsets={"A": subsets["A"]}, domains="base_model",
                            n_boot=10, random_state=3, n_jobs=2)
    np.testing.assert_array_equal(par.boot[("A", "y1")].samples, fast.boot[("A", "y1")].samples)
    within = fit_sigmoid_panel(df, ["y1", "y2"], subsets={"A": subsets["A"]},
                               domains="base_model", n_boot=40, random_state=3,
                               resample="within")
    wb = within.boot[("A", "y1")]
    assert wb.ci_low["tau"] < TRUE["tau"] < wb.ci_high["tau"]
    g95 = within.r2_gap(["y1"], ["y2"]).iloc[0]
    g80 = within.r2_gap(["y1"], ["y2"], ci=0.8).iloc[0]
    assert g95["ci_low"] <= g80["ci_low"] <= g80["ci_high"] <= g95["ci_high"]
    cf = fit_sigmoid_panel(df, ["y1"], subsets={"A": subsets["A"]}, domains="base_model",
                           n_boot=10, random_state=3, solver="curve_fit")
    assert cf.fits[("A", "y1")].r2 == pytest.approx(fast.fits[("A", "y1")].r2, abs=1e-4)
    with pytest.raises(ValueError, match="solver must be one of"):
        fit_sigmoid_panel(df, ["y1"], solver="lm")
    no_boot = fit_sigmoid_panel(df, ["y1"])
    assert no_boot.subsets == ("all",) and no_boot.boot == {}
    assert np.isnan(no_boot.r2_gap(["y1"], ["y1"])["ci_low"]).all()
    with pytest.raises(ValueError, match="boolean mask"):
        fit_sigmoid_panel(df, ["y1"], subsets={"bad": [1, 0]})
    with pytest.raises(ValueError, match="missing column"):
        fit_sigmoid_panel(df, ["y3"])
    with pytest.raises(ValueError, match="unknown"):
        panel.r2_gap(["y1"], ["y9"])
    axes = plot_sigmoid_panel(panel, labels={"y1": "Y one"})
    assert axes.shape == (2, 2) and "Y one" in axes[0, 0].get_title()
    assert axes[0, 0].get_legend() is not None and axes[1, 1].get_legend() is None
    plt.close("all")


@pytest.mark.slow  # more than ~5 s
def test_ate_panel_and_contrast():
    x, t, y, _ = confounded_strata(seed=40)
    df = pd.DataFrame({"log_c": np.r_[x, x], "T": np.r_[t, t],
                       "y": np.r_[y, y + 3.0 * np.r_[t]],  # lineage B gains 3 more
                       "lineage": ["A"] * len(x) + ["B"] * len(x),
                       "base_model": [f"A{v:.3f}" for v in x] + [f"B{v:.3f}" for v in x]})
    subsets = {"all": None, "A": df["lineage"].eq("A").to_numpy(),
               "B": df["lineage"].eq("B").to_numpy()}
    panel = ate_panel(df, ["y"], subsets=subsets, estimators=("backdoor", "ipw_strata"),
                      domains="base_model", n_boot=80, random_state=2)
    tab = panel.table
    assert len(tab) == 6 and set(tab["estimator"]) == {"backdoor", "ipw_strata"}
    a = tab.query("subset == 'A' and estimator == 'backdoor'").iloc[0]
    assert a["ate"] == pytest.approx(ate_backdoor(x, t, y, n_boot=0).ate)
    c = panel.contrast("B", "A")
    assert c["diff"].iloc[0] == pytest.approx(3.0, abs=1e-9)  # identical data but for the gain
    assert c["ci_low"].iloc[0] < 3.0 < c["ci_high"].iloc[0]
    c80 = panel.contrast("B", "A", ci=0.8)
    assert c["ci_low"].iloc[0] <= c80["ci_low"].iloc[0] < c80["ci_high"].iloc[0] <= \
        c["ci_high"].iloc[0]
    with pytest.raises(ValueError, match="share rows"):
        panel.contrast("all", "A")
    with pytest.raises(ValueError, match="unknown subset"):
        panel.contrast("A", "C")
    # independent seeds per subset: same data in A and B but different resamples
    assert not np.array_equal(panel.samples[("A", "y", "backdoor")],
                              panel.samples[("B", "y", "backdoor")])
    again = ate_panel(df, ["y"], subsets=subsets, estimators=("backdoor", "ipw_strata"),
                      domains="base_model", n_boot=80, random_state=2, n_jobs=2)
    pd.testing.assert_frame_equal(again.table, tab)
    wide = panel.wide()
    assert wide.shape == (1, 6)
    assert "backdoor" in panel.summary()
    with pytest.raises(ValueError, match="unknown estimator"):
        ate_panel(df, ["y"], estimators=("ols",))
    long = tab[tab["subset"] == "all"].assign(setup=lambda d: d["estimator"])
    ax = plot_ate(long, group="setup", reference={"y": 5.0}, reference_label="printed")
    assert "printed" in [t.get_text() for t in ax.get_legend().get_texts()]
    ax = plot_ate_steps(pd.DataFrame({"y": [1.0, 2.0, 3.0]}, index=["A", "B", "C"]),
                        labels={"y": "score"})
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["score"]
    with pytest.raises(ValueError, match="empty"):
        plot_ate_steps(pd.DataFrame())
    plt.close("all")


def test_plot_propensity_strata():
    x, t, _, _ = confounded_strata(seed=50)
    t = t.copy()
    t[x == x.min()] = 0
    ax = plot_propensity_strata(x, t)
    both, single = ax.collections[0], ax.collections[1]
    assert len(both.get_offsets()) + len(single.get_offsets()) == len(np.unique(x))
    assert len(single.get_offsets()) >= 1
    line = ax.lines[0]
    np.testing.assert_allclose(np.sort(line.get_ydata()), np.sort(propensity_scores(x, t)))
    plt.close("all")


def test_stratum_effects_sum_to_backdoor():
    x, t, y, _ = confounded_strata(seed=60)
    t = t.copy()
    t[x == x.min()] = 0  # a single-arm stratum, dropped
    df = pd.DataFrame({"log_c": x, "T": t, "y": y, "base_model": [f"b{v:.2f}" for v in x]})
    tab = stratum_effects(df, "y")
    assert len(tab) == len(np.unique(x)) - 1
    assert tab["weight"].sum() == pytest.approx(1.0)
    assert tab["contribution"].sum() == pytest.approx(ate_backdoor(x, t, y, n_boot=0).ate)
    row = tab[tab["x"] == x.max()].iloc[0]
    m = (x == x.max())
    assert row["n1"] == int(t[m].sum()) and row["mean0"] == pytest.approx(y[m & (t == 0)].mean())
    assert row["label"] == f"b{x.max():.2f}"
    with pytest.raises(ValueError, match="missing column"):
        stratum_effects(df, "z")


def test_ipw_balance():
    x, t = confounded_continuous(2000, seed=61)[:2]
    bal = ipw_balance(x, t)
    assert list(bal.index) == ["raw", "ipw"]
    assert bal.loc["raw", "smd"] > 0.5  # treated units have larger x
    assert abs(bal.loc["ipw", "smd"]) < 0.1  # correct propensity model balances x
    assert bal.loc["ipw", "mean_x_all"] == pytest.approx(x[(propensity_scores(x, t) >= 0.01)
                                                          & (propensity_scores(x, t) <= 0.99)].mean())
    with pytest.raises(ValueError, match="trim"):
        ipw_balance(x, t, trim=0.7)
