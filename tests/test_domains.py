"""Tests for hca.attribution: domain frames, N/D regimes, overlapping groups and audits."""

import numpy as np
import pandas as pd
import pytest

from hca import attribution as bm
from hca.paper import constants as pc
from hca import attribution as dm
from hca import subspace as ss


@pytest.fixture(scope="module")
def small():
    """A hand-made v2-like frame with known attributions."""
    return pd.DataFrame({
        "model_id": [
            "NousResearch/Hermes-3-Llama-3.1-8B",      # name: Llama-3.1-8B
            "someone/qwen2.5-7b-ft",                     # name: Qwen2.5-7B
            "someone/Qwen2.5-0.5B-sft",                  # name: Qwen2.5-0.5B
            "someone/my-model",                          # hub: Llama-3-8B
            "someone/unknown",                           # nothing
        ],
        "params_b": [8.03, 7.616, 0.494, 8.03, 3.3],
        "architecture": ["LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen2ForCausalLM",
                         "LlamaForCausalLM", "FooForCausalLM"],
        "type": ["fine-tuned"] * 5,
        "base_model_hub": [pd.NA, pd.NA, pd.NA, "meta-llama/Meta-Llama-3-8B-Instruct", pd.NA],
        "upload_date": pd.to_datetime(["2024-08-01", "2024-10-01", "2024-11-02",
                                       "2024-05-01", "2023-03-01"]),
        "authors_base_model": pd.array(["llama-3", "qwen2.5", "qwen2", pd.NA, "llama-3"],
                                       dtype="string"),
    })


def test_attach_domains_adds_base_n_d_and_year(small):
    out = dm.attach_domains(small)
    assert list(out["base_model"].fillna("NA")) == [
        "Llama-3.1-8B", "Qwen2.5-7B", "Qwen2.5-0.5B", "Llama-3-8B", "NA"]
    assert out.loc[3, "layer"] == "hub"
    tok = bm.pretraining_tokens().set_index("base_model")
    assert out.loc[1, "tokens_t"] == pytest.approx(float(tok.loc["Qwen2.5-7B", "tokens_t"]))
    assert out.loc[0, "base_n_b"] == pytest.approx(float(tok.loc["Llama-3.1-8B", "params_b"]))
    assert np.isnan(out.loc[4, "base_n_b"]) and np.isnan(out.loc[4, "tokens_t"])
    assert list(out["year"]) == [2024, 2024, 2024, 2024, 2023]
    with pytest.raises(ValueError, match="date_col 'nope'"):
        dm.attach_domains(small, date_col="nope")
    with pytest.raises(ValueError, match="model_id"):
        dm.attach_domains(small.drop(columns="model_id"))


def test_moe_base_uses_active_parameters():
    df = pd.DataFrame({"model_id": ["someone/Mixtral-8x7B-ft"], "params_b": [46.7],
                       "architecture": ["MixtralForCausalLM"]})
    out = dm.attach_domains(df)
    tok = bm.pretraining_tokens().set_index("base_model")
    assert out.loc[0, "base_model"] == "Mixtral-8x7B"
    assert out.loc[0, "base_n_b"] == pytest.approx(
        float(tok.loc["Mixtral-8x7B", "active_params_b"]))


def test_layer_shares_and_sample(small):
    out = dm.attach_domains(small)
    shares = dm.layer_shares(out)
    assert list(shares.index) == list(bm.LAYERS) + ["unattributed"]
    assert shares["models"].sum() == 5 and shares.loc["unattributed", "models"] == 1
    assert shares.loc["hub", "share"] == pytest.approx(0.2)
    sample = dm.attribution_sample(out, n=2, random_state=0)
    assert list(sample["layer"]) == ["hub", "name_explicit", "name_explicit"]
    pd.testing.assert_frame_equal(sample, dm.attribution_sample(out, n=2, random_state=0))
    with pytest.raises(ValueError, match="positive int"):
        dm.attribution_sample(out, n=0)


def test_nd_regimes_cut_at_median_over_bases():
    df = pd.DataFrame({
        "base_model": ["a"] * 5 + ["b", "c", "d", pd.NA],
        "base_n_b": [1.0] * 5 + [2.0, 3.0, 4.0, np.nan],
        "tokens_t": [10.0] * 5 + [1.0, 20.0, 2.0, np.nan],
    })
    cuts = dm.nd_regimes(df)
    # medians over the four distinct bases, not over the nine rows
    assert cuts.n_cut == pytest.approx(2.5) and cuts.d_cut == pytest.approx(6.0)
    assert list(cuts.labels.iloc[[0, 5, 6, 7]]) == [
        "small N, large D", "small N, small D", "large N, large D", "large N, small D"]
    assert cuts.labels.isna().iloc[8]
    assert cuts.bases.loc["a", "n_models"] == 5
    assert "4 base models" in cuts.summary()
    fixed = dm.nd_regimes(df, n_cut=0.5, d_cut=100)
    assert set(fixed.labels.dropna()) == {"large N, small D"}
    with pytest.raises(ValueError, match="no row"):
        dm.nd_regimes(df.iloc[[8]])


def test_top_within_orders_by_frequency():
    df = pd.DataFrame({"base_model": ["x", "y", "y", "z", "z", "z", "w"],
                       "grp": ["g1", "g1", "g1", "g1", "g1", "g1", "g2"]})
    assert dm.top_within(df, "grp", n=2) == {"g1": ["z", "y"], "g2": ["w"]}
    with pytest.raises(ValueError, match="no attributed rows"):
        dm.top_within(df, "grp", order=["g3"])


def test_stack_groups_repeats_overlapping_rows():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.standard_normal((30, 4)), columns=list("abcd"))
    m1 = np.arange(30) < 20
    m2 = np.arange(30) >= 10
    X, labels = dm.stack_groups(df, {"first": m1, "second": m2}, list("abcd"))
    assert len(X) == 40 and list(pd.Series(labels).value_counts()) == [20, 20]
    np.testing.assert_allclose(X.iloc[20:].to_numpy(), df.iloc[10:].to_numpy())
    D = ss.distance_matrix(X, labels, n_components=2, order=["first", "second"])
    direct = ss.subspace_distance(ss.principal_subspace(df[m1], 2),
                                  ss.principal_subspace(df[m2], 2))
    assert D.iat[0, 1] == pytest.approx(direct)
    with pytest.raises(ValueError, match="'empty' has no rows"):
        dm.stack_groups(df, {"empty": np.zeros(30, bool)}, list("abcd"))
    bad = df.copy()
    bad.iloc[0, 0] = np.nan
    with pytest.raises(ValueError, match="missing scores"):
        dm.stack_groups(bad, {"first": m1}, list("abcd"))


def test_coarse_family():
    assert dm.coarse_family("Llama-3.2-3B") == "llama-3"
    assert dm.coarse_family("Qwen2.5-Coder-7B") == "qwen2.5"
    assert dm.coarse_family("Qwen2-7B") == "qwen2"
    assert dm.coarse_family("Gemma-2-9B") == "gemma-2-9b"
    assert dm.coarse_family("Gemma-2-2B") is None
    assert dm.coarse_family(pd.NA) is None


def test_authors_agreement(small):
    check = dm.authors_agreement(dm.attach_domains(small))
    # llama-3 vs Llama-3.1-8B agrees; qwen2.5 agrees; qwen2 vs Qwen2.5-0.5B disagrees;
    # the unattributed model is counted as such
    assert list(check.rows["outcome"]) == ["agree", "agree", "disagree", "unattributed"]
    assert check.rate == pytest.approx(2 / 3)
    assert check.coverage == pytest.approx(3 / 4)
    assert "4 models checked" in check.summary()


def test_hub_holdout_agreement(small):
    check = dm.hub_holdout_agreement(dm.attach_domains(small))
    # "someone/my-model" has no name evidence: without the hub column, the architecture
    # layer attributes an 8.03B LlamaForCausalLM dated before Llama-3.1 to Llama-3-8B
    assert len(check.rows) == 1
    assert check.rows.loc[0, "reference"] == "Llama-3-8B"
    assert check.rows.loc[0, "ours"] == "Llama-3-8B"
    assert check.rows.loc[0, "layer"] == "architecture"
    assert check.counts["agree"] == 1


# ---------------------------------------------------------------- real data
def test_v2_domains_have_the_paper_bases():
    v2 = dm.load_v2_domains()
    sizes = bm.domain_sizes(v2)
    for b in pc.PAPER_V2_BASES:
        assert sizes.get(b, 0) >= 20, b
    hub = dm.hub_holdout_agreement(v2)
    assert hub.rate > 0.9
    cuts = dm.nd_regimes(v2)
    assert set(cuts.labels.dropna()) == set(dm.REGIMES)


def test_unattributed_reasons():
    df = pd.DataFrame({
        "base_model": pd.array([pd.NA, pd.NA, pd.NA, pd.NA, "Llama-3-8B"], dtype="string"),
        "evidence": ["merge without name/hub evidence",
                     "Qwen2ForCausalLM at params=7.616B ambiguous: Qwen2-7B, Qwen2.5-7B",
                     "name says Llama-3.1-8B ('x') but hub ancestor y says Qwen2.5-7B",
                     "merge without name/hub evidence",
                     "'llama-3-8b'; params=8.03B"],
    })
    reasons = dm.unattributed_reasons(df)
    assert reasons.to_dict() == {"merge without name/hub evidence": 2,
                                 "ambiguous between bases (same shape)": 1,
                                 "conflicting evidence": 1}
