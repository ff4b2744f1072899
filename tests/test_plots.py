"""Tests for hca.plots (helpers return Axes and draw what they are given)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import FancyArrowPatch  # noqa: E402

from hca import plots as hp  # noqa: E402
from hca.estimator import DomainSCM  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture
def scm():
    B = np.array([[0.5, 0.0, 0.0], [-0.2, 0.25, 0.0], [0.1, -0.3, 0.125]])
    return DomainSCM.from_B("Toy", B, 0.01)


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def test_benchmark_label():
    assert hp.benchmark_label("math_lvl_5") == "MATH Lvl 5"
    assert hp.benchmark_label("my_benchmark") == "my_benchmark"


def test_plot_matrix_annotations_and_limits():
    M = np.array([[1.0, -2.0], [0.5, 0.0]])
    ax = hp.plot_matrix(M, ["r1", "r2"], ["c1", "c2"], title="T")
    assert _texts(ax) == ["1.00", "-2.00", "0.50", "0.00"]
    im = ax.images[0]
    assert im.get_clim() == (-2.0, 2.0)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["r1", "r2"]
    assert ax.get_title() == "T"
    ax2 = hp.plot_matrix(M, mask_zero=True, colorbar=False, vmax=4)
    assert "0.00" not in _texts(ax2) and ax2.images[0].get_clim() == (-4.0, 4.0)
    with pytest.raises(ValueError, match="row_labels has 1 labels for 2 entries"):
        hp.plot_matrix(M, ["r1"])
    with pytest.raises(ValueError, match="NaN or infinite"):
        hp.plot_matrix(np.array([[np.nan]]))


def test_plot_matrix_uses_given_axes():
    fig, ax = plt.subplots()
    assert hp.plot_matrix(np.eye(2), ax=ax, colorbar=False) is ax


def test_plot_unmixing_and_mixing_labels():
    H = np.arange(12, dtype=float).reshape(2, 6)
    bench = ["ifeval", "bbh", "math_lvl_5", "gpqa", "musr", "mmlu_pro"]
    ax = hp.plot_unmixing(H, bench)
    assert [t.get_text() for t in ax.get_xticklabels()][2] == "MATH Lvl 5"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["z1", "z2"]
    ax = hp.plot_mixing(H.T, bench, factor_names=["a", "b"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]
    assert [t.get_text() for t in ax.get_yticklabels()][0] == "IFEval"


def test_plot_scm_weights_total_and_structural(scm):
    ax = hp.plot_scm_weights(scm)
    total = np.linalg.inv(scm.B)
    assert ax.get_title() == "Toy"
    assert f"{total[2, 0]:.3g}" in _texts(ax) and len(ax.texts) == 6  # upper triangle blank
    ax = hp.plot_scm_weights(scm, kind="structural")
    assert f"{scm.A[1, 0]:.3g}" in _texts(ax) and f"{scm.omega_sqrt[2]:.3g}" in _texts(ax)
    ax = hp.plot_scm_weights(scm.B, title="from B")  # a plain B matrix works too
    assert ax.get_title() == "from B"
    with pytest.raises(ValueError, match="kind must be"):
        hp.plot_scm_weights(scm, kind="other")
    with pytest.raises(ValueError, match="lower-triangular"):
        hp.plot_scm_weights(np.ones((3, 3)))


def test_plot_causal_graph(scm):
    ax = hp.plot_causal_graph(scm, node_labels=["BBH", "IFEval", "MATH"])
    texts = _texts(ax)
    for name in ("z1", "z2", "z3", "ε1", "ε2", "ε3", "BBH", "MATH"):
        assert name in texts
    for i, j in ((1, 0), (2, 0), (2, 1)):
        assert f"{scm.A[i, j]:.2f}" in texts
    assert f"{scm.omega_sqrt[1]:.3g}" in texts
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 3  # one per edge
    colors = {round(float(a.get_edgecolor()[2]), 3) for a in arrows}
    assert len(colors) == 2  # positive (blue) and negative (red) edges
    assert ax.get_title() == "Toy"
    ax = hp.plot_causal_graph(scm, show_sources=False, title="no sources", min_abs=10)
    assert "ε1" not in _texts(ax)
    assert all(a.get_linestyle() == "--" for a in ax.patches if isinstance(a, FancyArrowPatch))


def test_plot_mic_by_subset():
    table = pd.DataFrame({"subset": [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "c", "d")],
                          "mic": [0.05, 0.02, 0.09]})
    ax = hp.plot_mic_by_subset(table, highlight=("a", "b", "c"), mark="d",
                               short_names={"a": "A"}, reference={"paper": 0.04})
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["A, b, d", "A, b, c", "A, b, c, d"]  # smallest MIC at the top
    widths = sorted(b.get_width() for b in ax.patches if hasattr(b, "get_width"))[:3]
    assert widths == [0.02, 0.05, 0.09]
    outlined = [b for b in ax.containers[0] if b.get_linewidth() == 2.0]
    assert len(outlined) == 1 and outlined[0].get_width() == 0.05
    assert ax.get_legend() is not None
    with pytest.raises(ValueError, match="lacks column 'mic'"):
        hp.plot_mic_by_subset(table.drop(columns="mic"))


def test_plot_reconstruction_error():
    err = pd.DataFrame({"relative_error": [0.1, 0.3], "mse": [1.0, 2.0]},
                       index=["gpqa", "musr"])
    ax = hp.plot_reconstruction_error(err, column="mse", title="F19")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["GPQA", "MUSR"]
    assert [b.get_height() for b in ax.patches] == [1.0, 2.0]
    with pytest.raises(ValueError, match="lacks column 'rmse'"):
        hp.plot_reconstruction_error(err, column="rmse")
