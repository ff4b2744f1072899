"""The notebooks' helpers now in the library: hca.paper.glue, hca.paper.pages, the one
frame -> (X, domains) step, the one alignment text and the one S_inv rule."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from hca import HCA  # noqa: E402
from hca.data import alignment_text, domain_data  # noqa: E402
from hca.paper import glue, pages  # noqa: E402
from hca.subspace import invariant_set_rule  # noqa: E402
from hca.synthetic import simulate_scm  # noqa: E402


def test_glue_values_are_plain_python(monkeypatch):
    seen = {}
    fake = SimpleNamespace(glue=lambda name, value, display: seen.update({name: value}))
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    glue.glue_value("a", np.float32(0.5))
    glue.glue_value("b", "text")
    glue.glue_values({"c": np.int64(3)}, d=np.float64(1.5), e="x")
    assert seen == {"a": 0.5, "b": "text", "c": 3, "d": 1.5, "e": "x"}
    assert type(seen["a"]) is float and type(seen["c"]) is int


def test_glued_keeps_what_it_glues(monkeypatch):
    seen = {}
    fake = SimpleNamespace(glue=lambda name, value, display: seen.update({name: value}))
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    G = glue.Glued()
    G.value("a", np.float32(0.5))
    G.many({"c": np.int64(3)}, d=np.float64(1.5))
    G.put("e", np.int64(7))
    assert seen == dict(G) == {"a": 0.5, "c": 3, "d": 1.5, "e": 7}
    assert type(G["c"]) is int and type(G["e"]) is int
    G.put("e", 7)  # the same value again is harmless
    with pytest.raises(ValueError, match="'e' is already glued as 7"):
        G.put("e", 8)
    with pytest.raises(ValueError, match="non-empty string"):
        G.value("", 1)


@pytest.mark.parametrize(
    "value, fmt",
    [(1234, ",d"), (1234.0, ",d"), (1234.0, ".0f"), (0.1234, ".1%"), (3, ""), ("a b", ""),
     (0.5, "g"), (12345, ","), (2.0, ".2f"), ("x", "s"), (7, ".0f"), (np.int64(5), "d")],
)
def test_text_formats_as_myst_nb(value, fmt):
    """``text(G, "name:fmt")`` (JupyterLab) shows what ``{glue:text}`name:fmt``` (the book)
    shows for the same glued value."""
    pytest.importorskip("myst_nb")
    from myst_nb.core.variables import format_plain_text

    plain_value = value.item() if isinstance(value, np.generic) else value
    expected = format_plain_text(repr(plain_value), fmt or "s")
    spec = f"v:{fmt}" if fmt else "v"
    assert str(glue.text({"v": value}, spec)) == expected


def test_cell_formatters(capsys):
    assert glue.pct(0.25) == 25.0 and glue.members(("a", "b")) == "a, b"
    assert glue.mark(True) == "yes" and glue.mark(0) == ""
    row = {"ate": 1.234, "ci95_low": -0.05, "ci95_high": 2.5}
    assert glue.ci_text(row, "ate") == "+1.2 [-0.1, +2.5]"
    glue.show("x " * 60, width=40)
    out = capsys.readouterr().out.splitlines()
    assert len(out) > 1 and all(len(line) <= 40 for line in out)


def test_domain_data_is_the_one_frame_step():
    frame = pd.DataFrame({"base_model": ["a", "b", None, "a", "c"],
                          "x": [1.0, 2.0, 3.0, np.nan, 5.0], "y": [1, 2, 3, 4, 5]})
    X, d = domain_data(frame, ["a", "c"], ["x", "y"])
    assert list(X.index) == [0, 1, 2] and list(d) == ["a", "a", "c"] and d.dtype == object
    with pytest.raises(ValueError, match="no model is attributed to domain"):
        domain_data(frame, ["a", "z"], ["x"])
    with pytest.raises(ValueError, match="missing scores in column"):
        domain_data(frame, ["a"], ["x", "y"], complete=True)
    with pytest.raises(ValueError, match=r"ctx: frame lacks column\(s\) \['w'\]"):
        domain_data(frame, ["a"], ["w"], context="ctx")
    X2, d2 = domain_data(frame.rename(columns={"base_model": "g"}), ["b"], ["y"], by="g")
    assert X2["y"].tolist() == [2] and list(d2) == ["b"]


def test_alignment_text():
    assert alignment_text(("math_lvl_5", "bbh")) == "MATH Lvl 5 → BBH"
    assert alignment_text(["ifeval", "other"], sep=" > ") == "IFEval > other"
    # a benchmark never twice in one order: a repeated alignment is named by its factor
    assert alignment_text(("math_lvl_5", "ifeval", "ifeval")) == (
        "MATH Lvl 5 → IFEval → z3 (≈ IFEval, as z2)"
    )


def test_invariant_set_rule_finds_the_shared_subspace():
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    parts, labels = [], []
    for name, mix in (("p", A), ("q", A), ("r", A), ("s", B)):
        parts.append(rng.normal(size=(300, 3)) @ mix.T + 0.05 * rng.normal(size=(300, 6)))
        labels += [name] * 300
    X = np.vstack(parts)
    rule = invariant_set_rule(X, np.array(labels, dtype=object), ["p", "q", "r", "s"],
                              n_splits=20)
    assert rule.members == ("p", "q", "r") and rule.threshold > 0
    assert list(rule.dist.index) == ["p", "q", "r", "s"] and set(rule.nulls) == set("pqrs")
    again = invariant_set_rule(X, np.array(labels, dtype=object), ["p", "q", "r", "s"],
                               n_splits=20)
    assert again.threshold == rule.threshold and "S_inv (3)" in rule.summary()


@pytest.fixture(scope="module")
def six():
    s = simulate_scm(n_domains=6, n_per_domain=300, random_state=1)
    X = pd.DataFrame(s.X, columns=list(s.feature_names))
    return HCA(random_state=0, search="sequential").fit(X, s.domains), X, s.domains


def test_alignment_share_and_v1_order_tests():
    records = pd.DataFrame({"alignment": [("a", "b", "c"), ("b", "a", "c"), ("a", "c", "b")]})
    roles = (frozenset({"a"}), frozenset({"b"}), frozenset({"c"}))
    assert pages.alignment_share(records, lambda al: al[0] == "a") == pytest.approx(2 / 3)
    assert pages.v1_is_paper_order(("a", "b", "c"), roles)
    assert not pages.v1_is_paper_order(("a", "b"), roles)
    assert pages.v1_reasoning_first(("a", "b", "c"), roles)
    assert not pages.v1_reasoning_first(("a", "c", "b"), roles)


def test_v1_figures_draw_every_domain(six):
    model, X, _ = six
    res = SimpleNamespace(fit=model, adjustment=model.adjust())
    fig = pages.v1_dgp_figure(res, list(X.columns))
    assert len(fig.axes) >= 6
    fig2 = pages.v1_graphs_figure(res)
    assert not fig2.axes[-1].axison
    import matplotlib.pyplot as plt

    plt.close("all")


def test_v1_mic_summary():
    subsets = pd.DataFrame({
        "subset": [("a", "b", "c", "d", "e"), ("a", "b", "c"), ("a", "b", "c", "d", "e", "f")],
        "size": [5, 3, 6], "mic": [0.2, 0.1, 0.3]})
    seeds = SimpleNamespace(records=pd.DataFrame({"mic": [0.2, 0.25]}))
    out = pages.v1_mic_summary(SimpleNamespace(subsets=subsets, seeds=seeds), "abcde")
    assert out == {"MIC of the five": 0.2, "rank among 16": 2, "smallest MIC": 0.1,
                   "MIC of all six": 0.3, "seed range low": 0.2, "seed range high": 0.25}


def test_mmlu_helpers():
    assert pages.mmlu_label("mmlu_college_mathematics") == "college math"
    H = np.array([[1.0, 0, 0], [0, 3.0, 4.0], [1.0, 1.0, 0]])
    fit = SimpleNamespace(model=SimpleNamespace(unmixing_=H), subjects=[
        "mmlu_conceptual_physics", "mmlu_high_school_physics", "mmlu_college_physics"])
    z2, z3 = pages.mmlu_mixture_share(fit)
    assert z2 == pytest.approx(1.0) and z3 == pytest.approx(0.5)


def test_subject_and_mic_panels():
    from hca import plots
    from hca.subspace import explained_variance

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(60, 3)), columns=["s1", "s2", "s3"])
    grid = plots.plot_subject_panels(X.corr(), {"A": explained_variance(X)},
                                     {"one": np.eye(3), "two": 2 * np.eye(3)}, ["a", "b", "c"])
    assert grid.shape == (2, 2) and grid[1, 1].get_title() == "(d) mixing matrix, two"
    table = pd.DataFrame({"subset": [("a", "b"), ("a", "c")], "size": [2, 2],
                          "mic": [0.1, 0.2], "certified": [True, True]})
    panels = plots.plot_mic_panels({"x": table, "y": table}, {"x": ("a", "b"), "y": ("a", "c")})
    assert [ax.get_title() for ax in panels] == ["x", "y"]
    import matplotlib.pyplot as plt

    plt.close("all")


def test_times_text_never_prints_one_point_zero_times():
    from hca.paper.glue import times_text

    assert times_text(2.43, "the printed one") == "2.4 times the printed one"
    assert times_text(1.04, "the printed one") == "about the same as the printed one (ratio 1.04)"
    assert times_text(0.96, "x") == "about the same as x (ratio 0.96)"
    assert times_text(0.5, "x") == "0.50 times x"
    with pytest.raises(ValueError, match="finite and positive"):
        times_text(0.0, "x")
