"""Tests for hca.paper.replication: the authors' domain rule, the Appendix H.3 filter, fit_v2."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hca.paper import replication as r
from hca.paper import constants as pc
from hca.attribution import authors


@pytest.mark.parametrize("row, expected", [
    (("meta-llama/Meta-Llama-3-8B-Instruct", None, "LlamaForCausalLM", 8.03), "llama-3-8b"),
    (("someone/Llama-3.1-8B-Instruct-abliterated", None, None, None), "llama-3.1-8b"),
    (("Qwen/Qwen2.5-14B-Instruct", None, "Qwen2ForCausalLM", 14.77), "qwen2.5-14b"),
    (("Qwen/Qwen2-7B", None, None, 7.6), "qwen2-7b"),
    (("someone/qwen-2.5-7b-math", None, None, None), "qwen2.5-7b"),
    # step 2: the hub field names the base
    (("someone/Stheno", "meta-llama/Meta-Llama-3.1-8B-Instruct", "LlamaForCausalLM", 8.03),
     "llama-3.1-8b"),
    # step 3: family words in the name, size elsewhere in it
    (("someone/llama3-instruct-8b-simpo", None, None, 8.03), "llama-3-8b"),
    (("someone/llama3.1-chat", None, None, 8.03), "llama-3.1-8b"),
    # a spelled family unknown to the authors' token table falls through to step 3
    (("mistralai/Mistral-7B-v0.1", None, "MistralForCausalLM", 7.24), "mistral-7b"),
    # step 4: architecture and parameters alone (looser than hca.attribution)
    (("someone/CoolModel", None, "LlamaForCausalLM", 8.03), "llama-3-8b"),
    (("someone/CoolModel", None, "Qwen2ForCausalLM", 7.616), "qwen2-7b"),
    (("someone/CoolModel", None, "Qwen2ForCausalLM", 14.77), "qwen2.5-14b"),
    (("someone/qwen2.5-tuned", None, "Qwen2ForCausalLM", 7.616), "qwen2.5-7b"),
    (("someone/CoolModel", None, "LlamaForCausalLM", 3.2), None),
    (("someone/foo", None, None, None), None),
    (("someone/foo", np.nan, np.nan, np.nan), None),
])
def test_authors_base_model(row, expected):
    assert authors.authors_base_model(*row) == expected


def test_authors_labels_map_to_sinv():
    assert sorted(pc.AUTHORS_V2_LABELS.values()) == sorted(pc.PAPER_V2_BASES)
    assert set(pc.PAPER_V2_PRETRAINED) == set(pc.PAPER_V2_SINV)


def test_v2_frame_authors_counts():
    df = authors.v2_frame_authors()
    assert len(df) == 3913  # every CSV row, duplicates included
    counts = df["base_model"].value_counts()
    assert counts.to_dict() == {"Llama-3-8B": 716, "Mistral-7B": 293, "Qwen2.5-14B": 243,
                                "Llama-3.1-8B": 199, "Qwen2.5-0.5B": 153, "Qwen2-7B": 139,
                                "Gemma-2-9B": 129, "Qwen2.5-7B": 121}  # the eight of Section 1.1
    final = authors.v2_frame_authors(include_final=True)
    assert len(final) == 4576  # the size of the table the paper used
    assert (final["base_model"].value_counts()[counts.index] >= counts).all()
    assert df is not authors.v2_frame_authors()  # a fresh copy


def _toy_frame():
    return pd.DataFrame({
        "model_id": ["meta-llama/Meta-Llama-3-8B", "a/x", "a/y", "a/z", "Qwen/Qwen2.5-7B",
                     "b/u", "c/v"],
        "base_model": ["Llama-3-8B", "Llama-3-8B", "Llama-3-8B", "Llama-3-8B", "Qwen2.5-7B",
                       "Qwen2.5-7B", "Mistral-7B"],
        "average": [10.0, 9.99, 10.0, 15.0, 20.0, 19.0, 1.0],
    })


def test_filter_below_base():
    res = r.filter_below_base(_toy_frame(), domains=["Llama-3-8B", "Qwen2.5-7B"])
    assert res.frame["model_id"].tolist() == ["meta-llama/Meta-Llama-3-8B", "a/y", "a/z",
                                              "Qwen/Qwen2.5-7B", "c/v"]
    t = res.table
    assert t.loc["Llama-3-8B", "base_average"] == 10.0
    assert t.loc["Llama-3-8B", ["models", "removed", "kept"]].tolist() == [4, 1, 3]
    assert t.loc["Qwen2.5-7B", "removed"] == 1
    assert "1 of 4 removed" in res.summary()


def test_filter_below_base_errors():
    df = _toy_frame()
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['average'\]"):
        r.filter_below_base(df.drop(columns="average"), domains=["Llama-3-8B"])
    with pytest.raises(ValueError, match="'Qwen/Qwen2-7B' of domain 'Qwen2-7B' has no row"):
        r.filter_below_base(df, domains=["Qwen2-7B"])
    with pytest.raises(ValueError, match="no official checkpoint known for 'Mistral-7B'"):
        r.filter_below_base(df, domains=["Mistral-7B"])


@pytest.mark.slow  # more than ~5 s on a loaded machine
def test_fit_v2_on_another_frame():
    default = r.fit_v2()
    same = r.fit_v2(frame=r.v2_frame())
    assert same.mic_ == default.mic_
    filtered = r.filter_below_base(r.v2_frame()).frame
    m = r.fit_v2(frame=filtered, n_restarts=2, max_iter=5000)  # Qwen2.5-14B: 3,509 iterations
    sizes = filtered["base_model"].value_counts()
    assert all(m.ica_[d].n_samples == sizes[d] for d in pc.PAPER_V2_FOUR)
    assert all(len(m.ica_[d].restart_objectives) == 2 for d in pc.PAPER_V2_FOUR)


def test_store_frames_are_read_only_copies():
    final = r.final_html()
    final.loc[0, "model_id"] = "changed"
    assert r.final_html()["model_id"].iloc[0] == "MaziyarPanahi/calme-3.2-instruct-78b"
    a = r.v2_authors(include_final=True)
    pd.testing.assert_frame_equal(a, authors.v2_frame_authors(include_final=True))
    pd.testing.assert_frame_equal(a, r.v2_frame("authors"))  # the authors' setup's table
    a.sort_values("model_id", inplace=True)
    a["base_model"] = "changed"
    assert (r.v2_authors(include_final=True)["base_model"] != "changed").all()
