"""Tests for hca.paper.mmlu: subject names, the MMLU frame with domains, clustering and readouts."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from hca.estimator import HCA
from hca.stability import seed_fits
from hca.paper import mmlu
from hca import plots as hp
from hca.paper import constants as pc
from hca.data import MMLU_SUBJECTS


# --------------------------------------------------------------------------- subjects
def test_subject_columns_accepts_both_spellings():
    assert mmlu.subject_columns(["college_physics", "MMLU_conceptual_physics"]) == [
        "mmlu_college_physics", "mmlu_conceptual_physics"]


def test_subject_columns_names_the_closest_subject():
    with pytest.raises(ValueError, match="electrical_engineering"):
        mmlu.subject_columns(["college_electrical_engineering"])
    with pytest.raises(TypeError):
        mmlu.subject_columns("college_physics")


def test_subject_sets_are_mmlu_columns():
    for cols in (pc.MATH_SUBJECTS, pc.PHYSICS_SUBJECTS, pc.CROSS_SUBJECTS):
        assert len(cols) == 3
        assert mmlu.subject_columns(cols) == list(cols)
    assert "college_electrical_engineering" not in MMLU_SUBJECTS
    assert mmlu.subject_label("mmlu_high_school_physics") == "high school physics"


# --------------------------------------------------------------------------- clustering
def _block_corr():
    """Two blocks of three variables (within 0.9, across 0.2), interleaved."""
    names = ["a1", "b1", "a2", "b2", "a3", "b3"]
    group = {n: n[0] for n in names}
    values = [[1.0 if i == j else (0.9 if group[i] == group[j] else 0.2) for j in names]
              for i in names]
    return pd.DataFrame(values, index=names, columns=names)


def test_cluster_order_puts_blocks_together():
    order = mmlu.cluster_order(_block_corr())
    assert sorted(order) == sorted(_block_corr().index)
    groups = [o[0] for o in order]
    assert groups in (["a"] * 3 + ["b"] * 3, ["b"] * 3 + ["a"] * 3)


def test_cluster_order_rejects_bad_input():
    c = _block_corr()
    with pytest.raises(ValueError, match="square"):
        mmlu.cluster_order(c.iloc[:, :3])
    c.iloc[0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        mmlu.cluster_order(c)


def test_plot_clustered_correlation_orders_ticks():
    import matplotlib.pyplot as plt

    ax = hp.plot_clustered_correlation(_block_corr(), annotate=True)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert [lab[0] for lab in labels][:3] in (["a"] * 3, ["b"] * 3)
    image = ax.images[0].get_array()
    assert image[0, 1] == pytest.approx(0.9) and image[0, 5] == pytest.approx(0.2)
    plt.close(ax.figure)


# --------------------------------------------------------------------------- readouts
def test_factor_alignment_reads_a_permutation():
    names = ["x", "y", "z"]
    H = np.array([[0.0, 0.0, -2.0], [0.99, 0.1, 0.0], [0.1, -0.99, 0.0]])
    out = mmlu.factor_alignment(H, names)
    assert list(out["benchmark"]) == ["z", "x", "y"]
    assert out.loc["z1", "share"] == pytest.approx(1.0)
    assert out.loc["z2", "share"] == pytest.approx(0.99 ** 2 / (0.99 ** 2 + 0.01), rel=1e-9)


def test_factor_alignment_assigns_distinct_benchmarks():
    # both rows prefer "x"; the assignment gives "x" to the row that loads on it most
    H = np.array([[0.8, 0.6], [0.9, 0.436]])
    out = mmlu.factor_alignment(H, ["x", "y"])
    assert list(out["top"]) == ["x", "x"]
    assert list(out["benchmark"]) == ["y", "x"]


def test_factor_alignment_rejects_bad_shapes():
    with pytest.raises(ValueError, match="benchmarks"):
        mmlu.factor_alignment(np.eye(3), ["x", "y"])
    with pytest.raises(ValueError, match="more factors"):
        mmlu.factor_alignment(np.ones((3, 2)), ["x", "y"])
    with pytest.raises(ValueError, match="zero"):
        mmlu.factor_alignment(np.zeros((2, 2)), ["x", "y"])


def test_subset_mic_ranks_within_size():
    table = pd.DataFrame({
        "subset": [("a", "b"), ("a", "c"), ("b", "c"), ("a", "b", "c")],
        "size": [2, 2, 2, 3],
        "mic": [0.3, 0.1, 0.2, 0.05],
    })
    row = mmlu.subset_mic(table, ("c", "b"))
    assert row["mic"] == pytest.approx(0.2)
    assert row["rank"] == 2 and row["rank_all"] == 3
    with pytest.raises(ValueError, match="not in the table"):
        mmlu.subset_mic(table, ("a", "d"))


def test_domain_counts_flags_small_domains():
    df = pd.DataFrame({"base_model": ["A"] * 4 + ["B"] * 3 + [pd.NA]})
    out = mmlu.domain_counts(df, ["A", "B", "C"], n_benchmarks=3)
    assert out["n_models"].tolist() == [4, 3, 0]
    assert out["usable"].tolist() == [True, False, False]
    with pytest.raises(ValueError, match="base_model"):
        mmlu.domain_counts(pd.DataFrame({"x": [1]}), ["A"], 3)


# --------------------------------------------------------------------------- real data
@pytest.fixture(scope="module")
def frame():
    return mmlu.mmlu_frame()


def test_mmlu_frame_has_domains_and_v1_metadata(frame):
    assert len(frame) == 5188
    assert {"base_model", "architecture", "date"} <= set(frame.columns)
    assert frame["architecture"].notna().sum() > 4800  # most models are also on v1
    counts = frame["base_model"].value_counts()
    for base in ("Mistral-7B", "Llama-2-13B", "Llama-2-7B", "Llama-2-70B", "Mixtral-8x7B"):
        assert counts.get(base, 0) > 20
    assert counts.get("Llama-3-8B", 0) == 0  # the leaderboard predates Llama 3
    fresh = mmlu.mmlu_frame()
    fresh["base_model"] = "changed"  # a fresh copy every call
    assert mmlu.mmlu_frame()["base_model"].eq("changed").sum() == 0


def test_subjects_are_highly_correlated(frame):
    corr = frame[[f"mmlu_{s}" for s in MMLU_SUBJECTS]].corr()
    off = corr.to_numpy()[np.triu_indices(57, 1)]
    assert np.median(off) == pytest.approx(0.92, abs=0.02)
    assert off.min() > 0.4


# --------------------------------------------------------------------------- seed fits
@pytest.fixture(scope="module")
def exact_scm():
    """Three domains of an exact SCM among the benchmarks themselves: b3 -> b1 -> b2."""
    rng = np.random.default_rng(0)
    names = ["b1", "b2", "b3"]
    causal = ["b3", "b1", "b2"]  # root first
    frames, labels = [], []
    for k, (a21, a31, a32) in enumerate([(0.8, 0.3, 0.6), (-0.5, 0.7, 0.4), (0.4, -0.6, 0.9)]):
        n = 1500
        eps = np.column_stack([rng.uniform(-1.7, 1.7, n), rng.laplace(0, 0.7, n),
                               rng.exponential(1.0, n) - 1.0])
        A = np.array([[0, 0, 0], [a21, 0, 0], [a31, a32, 0]])
        z = np.linalg.solve(np.eye(3) - A, (eps * [1.0, 0.8, 1.2]).T).T
        frames.append(pd.DataFrame(z, columns=causal)[names])
        labels += [f"D{k}"] * n
    return pd.concat(frames, ignore_index=True), np.array(labels, dtype=object), causal


@pytest.mark.slow  # more than ~5 s on a loaded machine
def test_seed_fit_row_recovers_the_order_among_benchmarks(exact_scm):
    X, labels, causal = exact_scm
    models = seed_fits(HCA(), X, labels, [0, 1, 2])
    fits = pd.DataFrame([mmlu.seed_fit_row(m, X, s) for m, s in zip(models, [0, 1, 2])])
    assert list(fits["seed"]) == [0, 1, 2]
    assert (fits["mic"] < 0.02).all()
    assert all(order == tuple(causal) for order in fits["order"])
    assert (fits["z1"] == "b3").all() and (fits["z1_share"] > 0.98).all()
    assert {f"alpha[D{k}]" for k in range(3)} <= set(fits.columns)
    assert {f"converged[D{k}]" for k in range(3)} <= set(fits.columns)
