"""Tests for hca.interpret (Section 4 alignment, Table 2, Figure 8, Appendix D helpers)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from hca import interpret as it
from hca import plots as hp
from hca.paper import constants as pc
from hca.estimator import HCA, DomainSCM
from hca.data import paper_figure8_sft
from hca.synthetic import simulate_scm


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def synthetic():
    """An exact 3-factor SCM in five domains, seen through six noisy "benchmarks"."""
    sim = simulate_scm(n_domains=5, n_per_domain=600, alpha=0.0, noise=0.2, offset=20.0,
                       random_state=1)
    names = ["ifeval", "bbh", "math_lvl_5", "gpqa", "musr", "mmlu_pro"]
    X = pd.DataFrame(np.asarray(sim.X, dtype=float)[:, :6], columns=names)
    domains = np.asarray(sim.domains)
    model = HCA(random_state=0).fit(X, domains)
    return X, domains, model


@pytest.fixture(scope="module")
def aligned(synthetic):
    X, _, model = synthetic
    return it.align(model, X)


def _leaderboard_like(rng, n=40):
    """A small frame with the columns the interpret helpers read."""
    names = ["ifeval", "bbh", "math_lvl_5", "gpqa", "musr", "mmlu_pro"]
    df = pd.DataFrame(rng.uniform(5, 60, size=(n, 6)), columns=names)
    for c in names:
        df[c + "_raw"] = df[c] / 100
    df["model_id"] = [f"org/m{i}" for i in range(n)]
    df["type"] = "fine-tuned"
    df["official_providers"] = False
    df["base_model"] = np.where(np.arange(n) < n // 2, "A", "B")
    return df


# --------------------------------------------------------------------------- alignment
def test_align_reproduces_adjustment(synthetic, aligned):
    X, _, model = synthetic
    adj = model.adjust()
    np.testing.assert_allclose(aligned.unmixing, adj.unmixing, atol=1e-10)
    assert aligned.benchmarks == adj.benchmarks
    # the in-sample R^2 of the fitted OLS is Table 2a's maximum in every row
    np.testing.assert_allclose(aligned.r2(X).to_numpy(), adj.r2.max(axis=1).to_numpy(),
                               atol=1e-9)
    # residuals of the fitted line are orthogonal to the benchmark and centred (OLS)
    res = aligned.residuals(X)
    xb = X.to_numpy()[:, aligned.benchmark_index]
    assert np.abs(res.mean(axis=0)).max() < 1e-8 * np.abs(aligned.factors(X)).max()
    for i in range(3):
        assert abs(np.corrcoef(res[:, i], xb[:, i])[0, 1]) < 1e-6


def test_align_line_and_benchmark_units(aligned):
    x = np.array([0.0, 10.0])
    np.testing.assert_allclose(aligned.line(1, x),
                               aligned.intercepts[1] + aligned.slopes[1] * x)
    U = aligned.unmixing_frame(benchmark_units=True).to_numpy()
    np.testing.assert_allclose(U * aligned.slopes[:, None], aligned.unmixing, atol=1e-12)
    assert "R^2" in aligned.summary()


def test_align_rejects_other_data(synthetic):
    X, _, model = synthetic
    rng = np.random.default_rng(0)
    other = X.sample(frac=0.5, random_state=1) + rng.normal(0, 5, size=(len(X) // 2, 6))
    with pytest.raises(ValueError, match="does not reproduce"):
        it.align(model, other, model.adjust())
    with pytest.raises(ValueError, match="not fitted"):
        it.align(HCA(), X)
    with pytest.raises(ValueError, match="missing"):
        it.align(model, X.drop(columns="bbh"))


def test_r2_is_the_authors_definition(synthetic, aligned):
    """R^2 = 1 - SSE/SST with the prediction c + a.z_<i + gamma x_B of the raw z_i."""
    X, _, _ = synthetic
    sub = X.iloc[:300]
    Z = aligned.raw_factors(sub)
    Zadj = aligned.factors(sub)
    xb = sub.to_numpy()[:, aligned.benchmark_index]
    for i in range(3):
        pred = (aligned.intercepts[i] + Zadj[:, :i] @ aligned.controls[i, :i]
                + aligned.slopes[i] * xb[:, i])
        sse = np.sum((Z[:, i] - pred) ** 2)
        sst = np.sum((Z[:, i] - Z[:, i].mean()) ** 2)
        assert aligned.r2(sub)[f"z{i + 1}"] == pytest.approx(1 - sse / sst, abs=1e-10)
        adj_sst = np.sum((Zadj[:, i] - Zadj[:, i].mean()) ** 2)
        assert aligned.r2(sub, controls=False)[f"z{i + 1}"] == pytest.approx(
            1 - sse / adj_sst, abs=1e-10)


def test_r2_can_be_negative_out_of_sample(aligned, synthetic):
    X, _, _ = synthetic
    shifted = X.copy()
    b = aligned.benchmarks[0]
    shifted[b] = X[b].to_numpy()[::-1]          # break the link between z1 and its benchmark
    assert aligned.r2(shifted)["z1"] < 0


# --------------------------------------------------------------------------- Table 2b
def test_out_of_sample_r2_groups(synthetic, aligned):
    X, domains, _ = synthetic
    frame = X.assign(base_model=domains)
    labels = sorted(set(domains))
    t = it.out_of_sample_r2(aligned, frame, [labels[-1], "absent"], labels[:-1])
    assert list(t.r2.columns) == ["In sample", labels[-1], "absent"]
    assert t.n_models["absent"] == 0 and t.r2["absent"].isna().all()
    assert t.n_models["In sample"] == int(np.sum(np.isin(domains, labels[:-1])))
    # the in-sample column is the fitted R^2 on the in-sample rows
    rows = frame[frame["base_model"].isin(labels[:-1])]
    np.testing.assert_allclose(t.r2["In sample"], aligned.r2(rows[list(X.columns)]))
    assert "Out-of-sample" in t.summary()
    with pytest.raises(ValueError, match="base_model"):
        it.out_of_sample_r2(aligned, X, ["a"], ["b"])


# --------------------------------------------------------------------------- compute
def test_base_checkpoint_mask():
    df = pd.DataFrame({
        "model_id": ["a/x", "a/x-chat-hf", "a/x-Instruct", "b/y", "c/z-it"],
        "type": ["pretrained", "pretrained", "pretrained", "fine-tuned", "pretrained"],
        "official_providers": [True, True, True, True, True]})
    assert it.base_checkpoint_mask(df).tolist() == [True, False, False, False, False]


# --------------------------------------------------------------------------- instruct
def test_official_pairs_rules():
    ids = ["meta-llama/Meta-Llama-3-8B", "meta-llama/Meta-Llama-3-8B-Instruct",
           "tiiuae/Falcon3-7B-Base", "tiiuae/Falcon3-7B-Instruct",
           "mistralai/Mistral-7B-v0.1", "mistralai/Mistral-7B-Instruct-v0.1",
           "meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-7b-chat-hf",
           "google/gemma-2-9b", "google/gemma-2-9b-it",
           "someone/Meta-Llama-3-8B-Instruct",            # not official: never paired
           "Qwen/Qwen2.5-7B"]                             # no instruct: no pair
    df = pd.DataFrame({"model_id": ids,
                       "type": ["pretrained", "chat"] * 5 + ["chat", "pretrained"],
                       "official_providers": [True] * 10 + [False, True],
                       "base_model": "x", "params_b": 1.0})
    pairs = it.official_pairs(df)
    got = set(zip(pairs["base_id"], pairs["instruct_id"]))
    assert got == {(ids[0], ids[1]), (ids[2], ids[3]), (ids[4], ids[5]), (ids[6], ids[7]),
                   (ids[8], ids[9])}
    with pytest.raises(ValueError, match="lacks"):
        it.official_pairs(df.drop(columns="type"))


def test_factor_change_and_instruct_shift(aligned):
    rng = np.random.default_rng(3)
    df = _leaderboard_like(rng)
    pairs = pd.DataFrame({"base_id": ["org/m0", "org/m1"], "instruct_id": ["org/m2", "org/m3"]})
    out = it.instruct_shift(aligned, df, pairs)
    names = list(aligned.feature_names)
    dx = (df.set_index("model_id").loc[["org/m2", "org/m3"], names].to_numpy()
          - df.set_index("model_id").loc[["org/m0", "org/m1"], names].to_numpy())
    np.testing.assert_allclose(out[["d_z1", "d_z2", "d_z3"]].to_numpy(),
                               dx @ aligned.unmixing.T)
    scaled = it.instruct_shift(aligned, df, pairs, scale=df[names])
    sd = aligned.factors(df[names]).std(axis=0)
    np.testing.assert_allclose(scaled["d_z2"], out["d_z2"] / sd[1])
    assert set(out["largest"]) <= {"z1", "z2", "z3"}
    with pytest.raises(ValueError, match="not in the frame"):
        it.instruct_shift(aligned, df, pd.DataFrame({"base_id": ["nope"], "instruct_id": ["org/m1"]}))
    with pytest.raises(ValueError, match="rows"):
        it.factor_change(aligned, df[names].iloc[:2], df[names].iloc[:3])


# --------------------------------------------------------------------------- Figure 8
def test_figure8_table_and_paper_rows():
    rng = np.random.default_rng(0)
    df = _leaderboard_like(rng, n=6)
    df["model_id"] = [i for pair in pc.FIGURE8_CHECKPOINTS.values() for i in pair]
    t = it.figure8_table(df)
    assert list(t.columns) == ["model_id", *pc.FIGURE8_COLUMNS]
    assert t.loc[("Qwen2.5-7B", "Official Instruct"), "model_id"] == "Qwen/Qwen2.5-7B-Instruct"
    assert t[list(pc.FIGURE8_COLUMNS)].to_numpy().max() <= 1          # raw scale
    assert it.figure8_table(df, raw=False)[list(pc.FIGURE8_COLUMNS)].to_numpy().max() > 1
    with pytest.raises(ValueError, match="not in the frame"):
        it.figure8_table(df.iloc[1:])

    sft = paper_figure8_sft()
    assert list(sft.index.get_level_values("model")) == list(pc.FIGURE8_CHECKPOINTS)
    assert (sft["reported_by"] == "paper").all()
    assert sft.loc[("Qwen2.5-7B", "IFEval SFT"), "math_lvl_5"] == pytest.approx(0.28)
    assert sft.loc[("Llama-3-8B", "IFEval SFT"), "ifeval"] == pytest.approx(0.50)


def test_paper_figure8_sft_validates(tmp_path):
    bad = paper_figure8_sft().reset_index()
    bad.loc[0, "reported_by"] = "ours"
    p = tmp_path / "bad.csv"
    bad.to_csv(p, index=False)
    with pytest.raises(ValueError, match="reported_by"):
        paper_figure8_sft(p)
    with pytest.raises(FileNotFoundError):
        paper_figure8_sft(tmp_path / "none.csv")


# --------------------------------------------------------------------------- noise, tables
def test_noise_shares_closed_form():
    A = np.array([[0, 0, 0], [2.0, 0, 0], [0.5, 1.0, 0]])
    omega = np.array([1.0, 1.0, 2.0])
    m = DomainSCM(domain="d", A=A, omega_sqrt=omega, B=np.eye(3), alpha=0.0,
                  factor_names=("z1", "z2", "z3"))
    s = it.noise_shares({"d": m})
    # Var z1 = 1, Var z2 = 4 + 1 = 5, z3 = 0.5 z1 + z2 + 2 e3 = 2.5 z1 + e2 + 2 e3 -> 6.25+1+4
    np.testing.assert_allclose(s.loc["d"].to_numpy(), [1.0, 1 / 5, 4 / 11.25])
    with pytest.raises(ValueError, match="no domain"):
        it.noise_shares({})


# --------------------------------------------------------------------------- benchmark units
def _authors_cell(model, X, alignment):
    """The authors' normalisation of the per-domain graphs, restated step by step: the raw
    factors' OLS (latent_ols: raw z_i on [1, x_B, raw z_<i]) gives the coefficients; the rows
    of z = M eps are then replaced in causal order, each using the earlier rows as already
    replaced; the graph's weights are A = I - diag(diag(M)) M^-1 below the diagonal."""
    x = X.to_numpy(dtype=float)
    Z = x @ model.unmixing_.T
    cols = list(X.columns)
    coefs = []
    for i, bench in enumerate(alignment.benchmarks):
        design = np.column_stack([np.ones(len(x)), x[:, cols.index(bench)], Z[:, :i]])
        coefs.append(np.linalg.lstsq(design, Z[:, i], rcond=None)[0])
    out = {}
    for label, B in model.weights_.items():
        M = np.linalg.inv(B)
        for i, c in enumerate(coefs):
            M[i] = (M[i] - sum(M[j] * c[2 + j] for j in range(i))) / c[1]
        out[label] = np.tril(np.eye(3) - np.diag(np.diag(M)) @ np.linalg.inv(M), -1)
    return out, coefs


def test_benchmark_units_adjusted_rule(synthetic, aligned):
    X, domains, model = synthetic
    adj = model.adjust()
    gamma = aligned.slopes
    bu = it.benchmark_unit_models(model, aligned)
    assert set(bu) == set(adj.models)
    x = X.to_numpy(dtype=float)
    U = aligned.factors(x) / gamma  # every adjusted factor in points of its benchmark
    for label, m in bu.items():
        ref = adj.models[label]
        # weights: A_ij gamma_j / gamma_i; scales: omega_i / |gamma_i|
        np.testing.assert_allclose(m.A, ref.A * gamma[None, :] / gamma[:, None], atol=1e-10)
        np.testing.assert_allclose(m.omega_sqrt, ref.omega_sqrt / np.abs(gamma), rtol=1e-10)
        # the same sources, up to sign, read from the rescaled factors
        rows = domains == label
        eps_u = U[rows] @ m.B.T
        eps = aligned.factors(x[rows]) @ ref.B.T
        np.testing.assert_allclose(np.abs(eps_u - eps_u.mean(0)), np.abs(eps - eps.mean(0)),
                                   atol=1e-8)
        assert (m.omega_sqrt > 0).all()
    # a factor in benchmark units follows its benchmark with slope 1 (the OLS line / gamma)
    for i, b in enumerate(aligned.benchmarks):
        line = aligned.line(i, X[b].to_numpy()) / gamma[i]
        assert np.polyfit(X[b].to_numpy(), line, 1)[0] == pytest.approx(1.0)


def test_benchmark_units_reproduce_the_authors_cell(synthetic, aligned):
    X, _, model = synthetic
    theirs, coefs = _authors_cell(model, X, aligned)
    # their slopes are ours, and their raw-factor coefficients are -L below the diagonal
    np.testing.assert_allclose([c[1] for c in coefs], aligned.slopes, rtol=1e-8)
    for i, c in enumerate(coefs):
        np.testing.assert_allclose(c[2:], -aligned.L[i, :i], rtol=1e-7, atol=1e-10)
    ours = it.benchmark_unit_models(model, aligned, rule="authors")
    adjusted = it.benchmark_unit_models(model, aligned, rule="adjusted")
    for label, A in theirs.items():
        np.testing.assert_allclose(ours[label].A, A, rtol=1e-8, atol=1e-10)
        # same source scales as the adjusted rule, other weights below the root's row
        np.testing.assert_allclose(ours[label].omega_sqrt, adjusted[label].omega_sqrt,
                                   rtol=1e-10)
        assert np.abs(ours[label].A - adjusted[label].A).max() > 1e-3
    # first edge, closed form: (g1 w - c) / g2 against the adjusted rule's g1 (w - c) / g2
    g, c = aligned.slopes, -aligned.L[1, 0]
    label = next(iter(theirs))
    raw = model.models_[label].A[1, 0]
    assert ours[label].A[1, 0] == pytest.approx((g[0] * raw - c) / g[1], rel=1e-8)
    assert adjusted[label].A[1, 0] == pytest.approx(g[0] * (raw - c) / g[1], rel=1e-8)


def test_benchmark_units_refuse_bad_input(synthetic, aligned):
    X, domains, model = synthetic
    with pytest.raises(ValueError, match="rule 'points' is not one of"):
        it.benchmark_unit_models(model, aligned, rule="points")
    with pytest.raises(ValueError, match="not fitted"):
        it.benchmark_unit_models(HCA(), aligned)
    other = HCA(random_state=0).fit(X.iloc[::2], domains[::2])  # another fit
    with pytest.raises(ValueError, match="not built from this model"):
        it.benchmark_unit_models(other, aligned)
    flat = it.Alignment(**{**aligned.__dict__, "slopes": np.array([1.0, 0.0, 1.0])})
    with pytest.raises(ValueError, match="finite and non-zero"):
        it.benchmark_unit_models(model, flat)


# --------------------------------------------------------------------------- plots
def test_plots_return_axes(synthetic, aligned):
    import matplotlib.pyplot as plt

    X, domains, _ = synthetic
    ax = hp.plot_adjusted_unmixing(aligned, benchmark_units=True)
    assert len(ax.texts) == 18
    ax = hp.plot_alignment(aligned, 1, X.iloc[:200], {"other": X.iloc[200:260]})
    assert len(ax.collections) == 2 and len(ax.lines) == 1
    with pytest.raises(ValueError, match="factor"):
        hp.plot_alignment(aligned, 5, X)
    shifts = pd.DataFrame({"base_id": ["a", "b"], "d_z1": [0.1, 0.2], "d_z2": [0, 1.0],
                           "d_z3": [2.0, 3.0]})
    ax = hp.plot_instruct_shift(shifts, ["z1", "z2", "z3"], highlight=["a"])
    assert len(ax.get_xticks()) == 3
    plt.close("all")


# --------------------------------------------------------------------------- real data
@pytest.fixture(scope="module")
def real():
    from hca.paper import replication as rep
    from hca.data import V2_BENCHMARKS

    v2 = rep.v2_frame()
    X, _ = rep.domain_data(v2, pc.PAPER_V2_FOUR, V2_BENCHMARKS)
    return v2, X, it.align(rep.fit_v2(), X)


def test_real_figure8_rows(real):
    v2, _, _ = real
    t = it.figure8_table(v2)
    # the leaderboard's raw accuracies of the three official instruct checkpoints
    assert t.loc[("Llama-3-8B", "Official Instruct"), "ifeval"] == pytest.approx(0.7408, abs=1e-3)
    assert t.loc[("Qwen2.5-7B", "Official Instruct"), "math_lvl_5"] == pytest.approx(0.5, abs=1e-3)
    assert t.loc[("Qwen2.5-14B", "Base"), "gpqa"] == pytest.approx(0.3817, abs=1e-3)


def test_real_alignment_and_transfer(real):
    v2, X, al = real
    assert len(X) == 702
    r2 = al.r2_table.max(axis=1)
    assert r2.between(0, 1).all()
    t = it.out_of_sample_r2(al, v2, pc.PAPER_OOS_DOMAINS, ("Llama-3-8B", "Llama-3.1-8B",
                                                          "Qwen2.5-7B", "Qwen2.5-14B"))
    assert (t.n_models.drop("In sample") > 0).all()             # all seven domains present
    np.testing.assert_allclose(t.r2["In sample"].to_numpy(), r2.to_numpy(), atol=1e-9)
    pairs = it.official_pairs(v2)
    assert {"meta-llama/Meta-Llama-3-8B", "Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-14B"} <= set(
        pairs["base_id"])
