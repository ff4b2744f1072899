"""Tests for hca.attribution: the hand-checked case table, real-data domains, tokens/compute."""

from __future__ import annotations

import dataclasses
import math
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hca import attribution as bm
from hca.paper import constants as pc
from hca.attribution import coarse_family

CASES_PATH = Path(__file__).with_name("base_model_cases.csv")


# Real-data frames come from the hca.data loaders (HCA_DATA_DIR or the cache).


def load_frame(kind: str) -> pd.DataFrame:
    """Frame for ``kind`` in the hca.data contract; skips the test if the file is absent."""
    import hca.data

    return getattr(hca.data, f"load_{kind}")()


@lru_cache(maxsize=None)
def identified(kind: str) -> pd.DataFrame:
    df = load_frame(kind)
    return df.join(bm.identify(df))


# --------------------------------------------------------------------------------------
# Hand-checked cases
# --------------------------------------------------------------------------------------


def _cases() -> pd.DataFrame:
    return pd.read_csv(CASES_PATH, dtype=str, keep_default_na=False)


def _case_kwargs(row: pd.Series) -> dict:
    t = row["type"].lower()
    return dict(
        params_b=float(row["params_b"]) if row["params_b"] else None,
        architecture=row["architecture"] or None,
        base_model_hub=row["base_model_hub"] or None,
        date=row["date"] or None,
        merge="merge" in t or row["base_model_hub"].endswith("(Merge)"),
        pretrained="pretrained" in t and "continuous" not in t,
    )


def test_case_table_is_large_and_well_formed():
    c = _cases()
    assert len(c) >= 60
    assert not c["model_id"].duplicated().any()
    known = {b.name for b in bm.BASE_MODELS}
    assert set(c["expected"]) - {""} <= known
    # traps and unattributed cases are part of the table
    assert (c["expected"] == "").sum() >= 20
    assert c["comment"].str.contains("trap").sum() >= 15


@pytest.mark.parametrize("row", [r for _, r in _cases().iterrows()],
                         ids=lambda r: r["model_id"])
def test_identify_name_on_case(row):
    got = bm.identify_name(row["model_id"], **_case_kwargs(row))
    expected = row["expected"] or None
    assert got.base_model == expected, f"{row['comment']}: {got.summary()}"
    if expected is None:
        assert got.layer is None
    else:
        assert got.layer in bm.LAYERS
    assert isinstance(got.evidence, str) and got.evidence


def test_identify_frame_matches_identify_name():
    c = _cases()
    def col(name):
        return [x or None for x in c[name]]

    frame = pd.DataFrame({
        "model_id": c["model_id"].tolist(),
        "params_b": pd.to_numeric(c["params_b"].replace("", np.nan)).to_numpy(),
        "architecture": col("architecture"),
        "base_model_hub": col("base_model_hub"),
        "upload_date": col("date"),
        "type": c["type"].tolist(),
    }, index=pd.RangeIndex(100, 100 + len(c)))
    out = bm.identify(frame)
    assert list(out.columns) == ["base_model", "layer", "evidence"]
    assert out.index.equals(frame.index)
    expected = [x or None for x in c["expected"]]
    got = [None if pd.isna(x) else x for x in out["base_model"]]
    assert got == expected


# --------------------------------------------------------------------------------------
# API behaviour
# --------------------------------------------------------------------------------------


def test_identify_requires_model_id():
    with pytest.raises(ValueError, match="model_id"):
        bm.identify(pd.DataFrame({"name": ["a/b"], "params_b": [7.0]}))
    with pytest.raises(TypeError):
        bm.identify(["meta-llama/Meta-Llama-3-8B"])
    with pytest.raises(ValueError, match="missing values"):
        bm.identify(pd.DataFrame({"model_id": ["a/Llama-3-8B", None]}))
    with pytest.raises(ValueError):
        bm.identify_name("")


def test_identify_with_only_names():
    df = pd.DataFrame({"model_id": ["x/Qwen2.5-7B-Instruct-foo", "x/mystery", "x/gemma-2-9b-it"]},
                      index=["a", "b", "c"])
    out = bm.identify(df)
    assert out.loc["a", "base_model"] == "Qwen2.5-7B"
    assert pd.isna(out.loc["b", "base_model"]) and pd.isna(out.loc["b", "layer"])
    assert out.loc["c", "layer"] == "name_explicit"


def test_family_layer_needs_parameters():
    a = bm.identify_name("x/qwen-finetune")
    assert a.base_model is None and "parameter" in a.evidence
    b = bm.identify_name("x/qwen-finetune", params_b=14.77, architecture="Qwen2ForCausalLM")
    assert (b.base_model, b.layer) == ("Qwen2.5-14B", "name_family")


def test_integer_parameters_are_intervals():
    # v1 truncates: Llama-2-7B is reported as 6
    assert bm.identify_name("x/llama-2-finetune", 6).base_model == "Llama-2-7B"
    # but an integer never satisfies the strict Llama architecture window
    assert bm.identify_name("x/some-model", 8, "LlamaForCausalLM", date="2024-05-01") \
        .base_model is None
    # generous architectures accept it
    assert bm.identify_name("x/some-model", 7, "MistralForCausalLM").base_model == "Mistral-7B"


def test_date_exclusion_is_one_sided():
    before = bm.identify_name("x/m", 8.03, "LlamaForCausalLM", date="2024-06-01")
    after = bm.identify_name("x/m", 8.03, "LlamaForCausalLM", date="2024-09-01")
    assert before.base_model == "Llama-3-8B" and "excludes Llama-3.1-8B" in before.evidence
    assert after.base_model is None and "ambiguous" in after.evidence


def test_attribution_summary():
    a = bm.identify_name("meta-llama/Meta-Llama-3-8B", 8.03)
    assert a.summary().startswith("Llama-3-8B [name_explicit]")
    assert bm.identify_name("x/y").summary().startswith("unattributed")


def test_registry_is_consistent():
    names = [b.name for b in bm.BASE_MODELS]
    assert len(names) == len(set(names))
    for b in bm.BASE_MODELS:
        assert b.params_b > 0
        assert b.arch_rule in (None, "strict", "generous", "compete")
        assert b.parent is None or b.parent in names
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", b.released)
    assert set(pc.PAPER_V2_BASES) <= set(names) and set(pc.PAPER_V1_BASES) <= set(names)


def test_catalogue_table_reads_back_pinned_entries():
    from hca.attribution.catalogue import read_catalogue

    cat = bm.BASE_MODELS
    assert isinstance(cat, tuple) and len(cat) == 89
    assert (cat[0].name, cat[-1].name) == ("Llama-7B", "SmolLM2-1.7B")
    by = {b.name: b for b in cat}
    assert by["Llama-3-8B"] == bm.BaseModel(
        "Llama-3-8B", "Llama-3", "llama", "3", None, ("8b",), 8.03, (), ("LlamaForCausalLM",),
        "strict", "2024-04-18",
        ("meta-llama-3-8b", "meta-llama-3-8b-instruct", "llama-3-8b", "llama-3-8b-instruct",
         "llama-3-8b-instruct-gradient-1048k"), (), None)
    assert by["Mistral-Nemo-12B"].sizes == ("12b", "") and by["Phi-1.5"].sizes == ("", "1.3b")
    assert by["Mistral-Nemo-12B"].aliases == (r"(?<![a-z0-9])mn-12b",)
    assert by["Llama-3.2-1B"].signatures == (1.236, 1.498)
    assert by["Qwen2.5-Math-7B"].parent == "Qwen2.5-7B" and by["Qwen2.5-Math-7B"].arch_rule is None
    assert by["Phi-4"].archs == ("Phi3ForCausalLM", "LlamaForCausalLM")
    assert by["Mixtral-8x7B"].version is None and by["Mixtral-8x7B"].variant is None
    for b in cat:
        for f in ("sizes", "alt_params_b", "archs", "hub_names", "aliases"):
            assert isinstance(getattr(b, f), tuple), (b.name, f)
        assert type(b.params_b) is float and all(type(a) is float for a in b.alt_params_b)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cat[0].params_b = 1.0  # type: ignore[misc]
    assert read_catalogue() == cat


@pytest.mark.parametrize(
    "column, cell, match",
    [
        ("params_b", "8,03", r"row 11 \('Llama-3-8B'\), column 'params_b': expected positive .*found '8,03'"),
        ("params_b", "nan", r"column 'params_b'"),
        ("params_b", " 8.03", r"column 'params_b': expected one value, found ' 8.03'"),
        ("params_b", "", r"column 'params_b'"),
        ("alt_params_b", "1.5;", r"column 'alt_params_b': expected ';'-separated items"),
        ("released", "2024-4-18", r"column 'released': expected an ISO date.*found '2024-4-18'"),
        ("arch_rule", "loose", r"column 'arch_rule': expected empty or one of"),
        ("parent", "Llama-9B", r"column 'parent': expected another base's name, found 'Llama-9B'"),
        ("parent", "Llama-3-8B", r"column 'parent'"),
        ("hub_names", "Meta-Llama-3-8B", r"column 'hub_names': expected ';'-separated lower-case"),
        ("aliases", "llama-3(", r"column 'aliases': expected regular expressions"),
        ("sizes", "", r"column 'sizes'"),
        ("archs", "Llama For CausalLM", r"column 'archs'"),
        ("version", " 3", r"column 'version': expected one value, found ' 3'"),
        ("name", "Llama-7B", r"duplicated name\(s\) \['Llama-7B'\]"),
        ("name", "", r"row\(s\) \[11\] have an empty name"),
    ],
)
def test_catalogue_bad_row_is_named(tmp_path, column, cell, match):
    from hca.attribution.catalogue import read_catalogue
    from hca.data import table_path

    t = pd.read_csv(table_path("base_models"), dtype=str, keep_default_na=False)
    t.loc[t["name"] == "Llama-3-8B", column] = cell
    t.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match=match):
        read_catalogue(tmp_path / "bad.csv")


def test_catalogue_columns_are_checked(tmp_path):
    from hca.attribution.catalogue import read_catalogue
    from hca.data import table_path

    t = pd.read_csv(table_path("base_models"), dtype=str, keep_default_na=False)
    t.drop(columns="archs").to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match=r"bad.csv: expected columns .*missing \['archs'\]"):
        read_catalogue(tmp_path / "bad.csv")
    t.rename(columns={"note": "notes"}).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match=r"unknown \['notes'\]"):
        read_catalogue(tmp_path / "bad.csv")
    text = table_path("base_models").read_text(encoding="utf-8").splitlines()
    assert text[11].startswith("Llama-3-8B,") and text[12].endswith(",,")
    for line, cells, edited in ((12, 16, text[11].replace(",8.03,", ",8,03,")),
                                (13, 14, text[12][:-1])):
        bad = text[: line - 1] + [edited] + text[line:]
        (tmp_path / "bad.csv").write_text("\n".join(bad) + "\n", encoding="utf-8")
        with pytest.raises(ValueError, match=rf"bad.csv: line {line} has {cells} cells, expected 15"):
            read_catalogue(tmp_path / "bad.csv")
    with pytest.raises(FileNotFoundError, match="base_models"):
        read_catalogue(tmp_path / "absent.csv")


def test_join_v1_metadata():
    mmlu = pd.DataFrame({"model_id": ["A/x", "B/y", "C/z"], "params_b": [7.0, np.nan, 1.0]})
    v1 = pd.DataFrame({"model_id": ["a/X", "b/y"], "params_b": [7, 13],
                       "architecture": ["MistralForCausalLM", "LlamaForCausalLM"],
                       "date": ["2024-01-01", "2023-09-01"]})
    out = bm.join_v1_metadata(mmlu, v1)
    assert out["architecture"].tolist()[:2] == ["MistralForCausalLM", "LlamaForCausalLM"]
    assert pd.isna(out["architecture"].iloc[2])
    assert out["params_b"].tolist() == [7.0, 13.0, 1.0]
    with pytest.raises(ValueError, match="model_id"):
        bm.join_v1_metadata(mmlu.rename(columns={"model_id": "m"}), v1)


# --------------------------------------------------------------------------------------
# Pretraining tokens and compute
# --------------------------------------------------------------------------------------


def test_token_table_covers_every_base():
    t = bm.pretraining_tokens()
    assert list(t.columns) == ["base_model", "family", "params_b", "active_params_b",
                               "tokens_t", "tokens_kind", "source", "note"]
    assert set(t["base_model"]) == {b.name for b in bm.BASE_MODELS}
    assert set(t["tokens_kind"]) <= {"reported", "estimate", "unknown"}
    assert (t["tokens_kind"] == "unknown").eq(t["tokens_t"].isna()).all()
    assert (t["tokens_t"].dropna() > 0).all()
    assert t["source"].str.len().gt(10).all()
    reg = {b.name: b.params_b for b in bm.BASE_MODELS}
    assert np.allclose(t["params_b"], t["base_model"].map(reg), rtol=1e-9)


def test_token_values_follow_reports():
    t = bm.pretraining_tokens().set_index("base_model")["tokens_t"]
    # Gemma-2 sizes as in the paper's Appendix B (2B: 2T, 9B: 8T, 27B: 13T)
    assert t[["Gemma-2-2B", "Gemma-2-9B", "Gemma-2-27B"]].tolist() == [2.0, 8.0, 13.0]
    assert t["Llama-3-8B"] == t["Llama-3.1-8B"] == 15.0
    assert t["Qwen2.5-7B"] == 18.0 and t["Qwen2-7B"] == 7.0 and t["Qwen2-0.5B"] == 12.0
    assert t["Llama-2-7B"] == 2.0


def test_pretraining_compute_units():
    c = bm.pretraining_compute("Llama-3-8B")
    assert c == pytest.approx(6 * 8.030e9 * 15e12, rel=1e-12)
    assert c == pytest.approx(7.227e23, rel=1e-3)
    assert bm.pretraining_compute("Llama-3-8B", params_b=8.0) == pytest.approx(7.2e23)
    # MoE: active parameters
    assert bm.pretraining_compute("Mixtral-8x7B") == pytest.approx(6 * 12.9e9 * 8e12)
    # third-party estimates can be excluded
    assert math.isnan(bm.pretraining_compute("Mistral-7B", include_estimates=False))
    assert math.isnan(bm.pretraining_compute("SOLAR-10.7B"))
    with pytest.raises(ValueError, match="unknown base model"):
        bm.pretraining_compute("GPT-5")
    with pytest.raises(ValueError, match="positive"):
        bm.pretraining_compute("Llama-3-8B", params_b=-1)


def test_add_compute():
    df = pd.DataFrame({"model_id": ["x/Llama-3.1-8B-ft", "x/unknown", "mistralai/Mistral-7B-v0.1"],
                       "params_b": [8.03, 3.0, 7.242]})
    out = bm.add_compute(df)
    assert out["base_model"].tolist()[0] == "Llama-3.1-8B"
    assert out["compute_flops"].iloc[0] == pytest.approx(6 * 8.03e9 * 15e12)
    assert np.isnan(out["compute_flops"].iloc[1]) and np.isnan(out["log10_compute"].iloc[1])
    assert out["log10_compute"].iloc[0] == pytest.approx(np.log10(6 * 8.03e9 * 15e12))
    strict = bm.add_compute(out, include_estimates=False)
    assert np.isnan(strict["compute_flops"].iloc[2]) and np.isnan(strict["tokens_t"].iloc[2])
    assert list(df.columns) == ["model_id", "params_b"]  # input untouched


# --------------------------------------------------------------------------------------
# Real data
# --------------------------------------------------------------------------------------


def test_v2_paper_domains():
    d = identified("leaderboard_v2")
    sizes = bm.domain_sizes(d)
    for base in pc.PAPER_V2_BASES:
        assert sizes.get(base, 0) >= 25, base
    for base in ("Llama-3-8B", "Llama-3.1-8B", "Qwen2.5-7B", "Qwen2.5-14B"):
        assert sizes[base] >= 80, base
    # Qwen2-7B: this 3,913-row table holds only about 30 Qwen2-7B descendants that can be
    # told from Qwen2.5-7B (same architecture and shape); the paper used the 4,576-row table.
    assert sizes["Qwen2-7B"] >= 25
    # the eight paper bases are among the 20 largest domains
    assert set(pc.PAPER_V2_BASES) <= set(sizes.head(20).index)
    assert d["layer"].dropna().isin(bm.LAYERS).all()
    assert d["base_model"].notna().mean() > 0.45


def test_v2_agrees_with_authors_column():
    d = identified("leaderboard_v2")

    # our base model in the authors' coarse vocabulary; attributed elsewhere -> "other"
    ours = d["base_model"].map(
        lambda b: None if pd.isna(b) else (coarse_family(b) or "other"))
    labelled = d["authors_base_model"].notna()
    both = labelled & ours.notna()
    agree = (ours[both] == d.loc[both, "authors_base_model"]).mean()
    assert agree >= 0.99
    assert both.sum() / labelled.sum() >= 0.9


def test_v1_paper_domains():
    d = identified("leaderboard_v1")
    sizes = bm.domain_sizes(d)
    for base in pc.PAPER_V1_BASES:
        assert sizes.get(base, 0) >= 20, base
    assert sizes["Mistral-7B"] > sizes["Llama-2-13B"] > sizes["Llama-2-70B"]
    # v1 predates Llama-3.1 and Qwen2.5
    assert not d["base_model"].isin(["Llama-3.1-8B", "Qwen2.5-7B"]).any()


def test_mmlu_by_task_with_v1_metadata():
    mmlu = load_frame("mmlu_by_task")
    joined = bm.join_v1_metadata(mmlu, load_frame("leaderboard_v1"))
    assert joined["architecture"].notna().mean() > 0.8
    sizes = bm.domain_sizes(bm.identify(joined))
    for base in ("Mistral-7B", "Llama-2-7B", "Llama-2-70B", "Llama-2-13B", "Mixtral-8x7B"):
        assert sizes.get(base, 0) >= 20, base
    # names and parameters alone give fewer, never contradicting, attributions
    alone = bm.identify(mmlu)["base_model"]
    both = alone.notna()
    assert (alone[both] == bm.identify(joined)["base_model"][both]).mean() > 0.98
