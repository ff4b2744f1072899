"""The authors' v1 domain rule (their v2 function run on the v1 file) and the verdict rules
that the paper's numbers alone do not fix (relative band, cut-off ranges)."""

from __future__ import annotations

import pandas as pd
import pytest

from hca.attribution.authors import AUTHORS_V1_LABELS, authors_base_model, v1_frame_authors
from hca.data import authors_code_values
from hca.paper import claims
from hca.paper.v1 import authors_v1_counts


def test_mixtral_special_case():
    """get_explicit_base_model's last case: 'mixtral' and '8x7b' anywhere in the name."""
    name = "martyn/mixtral-megamerge-dare-8x7b-v2"
    assert authors_base_model(name, None, "MixtralForCausalLM", 46.0, strict=True) == \
        "mixtral-8x7b"
    assert authors_base_model("org/mixtral-4x7b-merged", None, "MixtralForCausalLM", 24.0,
                              strict=True) == "mixtral-7b"
    # a spelled family still wins before the special case
    assert authors_base_model("org/mistral-7b-mixtral-moe-8x7b", None, None, None) == \
        "mistral-7b"


def test_v1_rule_on_v1_rows():
    """v1 has no Base Model field: name, then architecture and (whole-billion) parameters."""
    assert authors_base_model("org/Llama-2-13b-chat", None, "LlamaForCausalLM", 13.0,
                              strict=True) == "llama-2-13b"
    assert authors_base_model("org/some-merge", None, "LlamaForCausalLM", 13.0,
                              strict=True) == "llama-2-13b"
    assert authors_base_model("org/some-merge", None, "LlamaForCausalLM", 7.0,
                              strict=True) == "llama-2-7b"
    assert authors_base_model("org/some-merge", None, "MistralForCausalLM", 7.0,
                              strict=True) == "mistral-7b"
    # 'phi-2' without a size and no parameter count: the bare family, as printed
    assert authors_base_model("org/phi-2-tuned", None, "PhiForCausalLM", 0.0,
                              strict=True) == "phi-2"


def test_v1_frame_authors_counts_match_the_printed_ones():
    """Every row of the public v1 file: the six H.4 labels within 5 models of the counts the
    authors' notebook printed (their table is not public; see authors_v1_counts)."""
    frame = v1_frame_authors()
    assert len(frame) == 7169
    assert frame["base_model"].dropna().isin(list(AUTHORS_V1_LABELS.values())).all()
    counts = authors_v1_counts()
    assert list(counts.index[:6]) == list(AUTHORS_V1_LABELS)
    assert (counts["difference"].abs() <= 5).all(), counts
    assert counts.loc["mistral-7b", "ours"] == 2084 == counts.loc["mistral-7b", "printed"]
    assert counts.loc["mixtral-8x7b", "ours"] == counts.loc["mixtral-8x7b", "printed"]
    printed = authors_code_values()
    assert printed.loc["v1size-llama-2-13b", "value"] == 511
    with pytest.raises(ValueError, match="domain_rule"):
        from hca.paper.v1 import subspaces
        subspaces(domain_rule="paper")


@pytest.mark.parametrize("ours, paper, tol, expected", [
    (0.022, 0.14, "0.05/0.15", "not reproduced"),  # T2a-z3-musr careful: 0.16 x the paper's
    (0.09, 0.16, "0.05/0.15", "partly"),            # 0.56 x: inside the band
    (0.06, 0.16, "0.05/0.15", "not reproduced"),    # 0.375 x: outside
    (-0.087, -0.2, "0.1/0.3", "partly"),            # 0.435 x
    (-0.07, -0.2, "0.1/0.3", "not reproduced"),     # 0.35 x
    (0.1, -0.2, "0.1/0.3", "not reproduced"),       # sign flipped
    (0.046, 0.02, "0.02/0.05", "partly"),           # near zero: the tolerance alone
    (0.0, 0.05, "0.02/0.05", "partly"),             # |paper| = 0.05 is near zero
    (0.96, 0.96, "0.05/0.15", "reproduced"),
])
def test_numeric_verdict_relative_band(ours, paper, tol, expected):
    v, reason = claims.numeric_verdict(ours, paper, tol)
    assert v == expected, reason
    if abs(paper) <= claims.NEAR_ZERO:
        assert "near zero" in reason
    elif v == "not reproduced" and abs(ours - paper) <= 0.3:
        assert "outside 0.4-2.5" in reason
    assert claims.in_relative_band(ours, paper) == (
        abs(paper) <= 0.05 or 0.4 <= ours / paper <= 2.5)


def test_check_relative_band_flags_a_bad_row(relative_band_violations):
    o_bad = claims.Outcome("0.02", "partly", "x", value=0.02)
    o_ok = claims.Outcome("0.1", "partly", "x", value=0.1)
    row = type("R", (), {"id": "T2a-z3-musr", "setups": {"careful": o_bad, "authors": o_ok}})
    card = type("C", (), {"rows": [row]})
    assert relative_band_violations(card) == [("T2a-z3-musr", "careful", 0.02, 0.14, "partly")]


def test_v1_per_domain_table():
    from hca.paper import v1

    p = v1.subspaces(n_splits=5, n_boot=3, domain_rule="authors")
    t = p.per_domain()
    assert list(t.index) == list(v1.PAPER_V1_BASES)
    assert t["models"].tolist() == [2084, 510, 386, 364, 159, 120]
    assert t["mean distance"].idxmax() == "Llama-2-7B"
    assert ((t["in S_inv (bootstrap)"] >= 0) & (t["in S_inv (bootstrap)"] <= 1)).all()
