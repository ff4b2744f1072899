"""The interpretation chapter (hca.paper.interpretation): both setups, every claim, figures."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from hca import plots as hp
from hca.data import load_paper_values
from hca.paper import claims
from hca.paper import interpretation as ip
from hca.paper import scorecard as sc
from hca.paper.constants import PAPER_OOS_DOMAINS
from hca.paper.setups import SETUP_NAMES

BOOK = ip.Settings()


@pytest.fixture(scope="module")
def results():
    # the typical run of each setup's ensemble (20 FastICA seeds): which optimum one seed
    # lands in depends on the CPU, the typical run does not
    return {s: sc.typical_run("interpretation", s) for s in SETUP_NAMES}


def test_run_is_cached_and_fitted_on_the_shared_fit(results):
    from hca.paper.replication import main_fit

    for s, r in results.items():
        # the typical run is a member of the ensemble, equal to the run at its seed
        assert ip.run(r.setup, BOOK).mic == pytest.approx(r.mic, abs=1e-10)
        assert sc.typical_run("interpretation", s).setup == r.setup
        assert r.setup.ica_seed == sc.typical_seed("interpretation", s)
        np.testing.assert_allclose(r.alignment.H, main_fit(r.setup).unmixing_)
        assert r.seeds == BOOK.seeds and len(r.seed_alignments) == len(BOOK.seeds)
    assert "careful setup" in results["careful"].summary()


def test_orders_roles_and_sizes(results):
    a, c = results["authors"], results["careful"]
    assert a.alignment.benchmarks == ("ifeval", "mmlu_pro", "math_lvl_5")
    assert c.alignment.benchmarks == ("math_lvl_5", "bbh", "ifeval")
    assert a.roles == {"general": "z2", "ifeval": "z1", "math": "z3"}
    assert c.roles == {"general": "z2", "ifeval": "z3", "math": "z1"}
    assert a.n_in_sample == 1393 and c.n_in_sample == 702
    assert int(a.transfer.n_models["Llama-2-13B"]) == 18
    assert int(c.transfer.n_models["Llama-2-13B"]) == 6


def test_our_ols_is_the_authors_latent_ols(results):
    for r in results.values():
        assert r.authors_ols_gap < 1e-8
        # the in-sample column of Table 2b is Table 2a's row maximum
        np.testing.assert_allclose(r.transfer.r2["In sample"].to_numpy(),
                                   r.alignment.r2_table.max(axis=1).to_numpy(), atol=1e-9)


def test_position_effect(results):
    c = results["careful"].position_r2()
    assert c.loc["MATH Lvl 5", "R² at our position"] == pytest.approx(0.632, abs=0.01)
    assert c.loc["MATH Lvl 5", "R² in the paper's order"] > 0.9
    # the last factor keeps its R^2 when the order is already the paper's
    a = results["authors"].position_r2()
    assert a.loc["MATH Lvl 5", "R² at our position"] == pytest.approx(
        a.loc["MATH Lvl 5", "R² in the paper's order"], abs=1e-9)


def test_figure3a_and_mixing(results):
    a, c = results["authors"], results["careful"]
    assert c.dominant("z2") == ["bbh", "mmlu_pro"]
    assert a.dominant("z3") == ["math_lvl_5"]
    U = c.unmixing()
    np.testing.assert_allclose(U.to_numpy() * c.alignment.slopes[:, None],
                               c.alignment.unmixing, atol=1e-12)
    for r in results.values():
        g = r.roles["general"]
        col = r.oriented_mixing(g)
        assert col[r.role_benchmark("general")] > 0 and (col > 0).sum() >= 5
        # G is the pseudo-inverse of the adjusted unmixing matrix
        np.testing.assert_allclose(r.alignment.unmixing @ r.mixing.to_numpy(), np.eye(3),
                                   atol=1e-8)


def test_compute_and_instruct(results):
    for r in results.values():
        g, i = r.roles["general"], r.roles["ifeval"]
        assert 60 < len(r.checkpoints) < 90
        assert r.compute_r[g] > 0.75 > r.compute_r[i]
        lo, hi = r.compute_diff["ci95"]
        assert lo <= r.compute_diff["ci80"][0] <= r.compute_diff["ci80"][1] <= hi < 0
        assert len(r.instruct) == 82
        assert r.instruct[f"d_{i}"].median() > 1.0 > abs(r.instruct[f"d_{g}"].median())
    a, c = results["authors"], results["careful"]
    pd.testing.assert_frame_equal(a.figure8, c.figure8)   # look-ups: the same cells
    d = ip.instruct_changes(c.figure8)
    assert (d["ifeval"] > 0.3).all()


def test_cited_tables():
    paper = ip.paper_table2a()
    assert paper.loc["z1", "bbh"] == 0.96 and paper.loc["z3", "math_lvl_5"] == 1.0
    assert (ip.table2a_verdicts(paper) == "reproduced").all().all()
    code = ip.authors_code_table2a()
    assert code.loc["z1", "ifeval"] == pytest.approx(0.1412)
    assert [code.loc[z].idxmax() for z in ("z1", "z2", "z3")] == [
        "mmlu_pro", "ifeval", "math_lvl_5"]
    v = ip.table2a_verdicts(code)
    assert (v == "reproduced").sum().sum() == 7 and (v == "not reproduced").sum().sum() == 2


def test_table2b_not_applicable_rule(results):
    pv = load_paper_values()
    c, a = results["careful"], results["authors"]
    assert not ip.informative(c, "ifeval", pv) and ip.informative(c, "general", pv)
    assert "our in-sample R² 0.99" in ip.not_informative_because(c, "ifeval", pv) or \
        "our in-sample R² 1.000" in ip.not_informative_because(c, "ifeval", pv)
    assert ip.informative(a, "ifeval", pv)
    assert "the paper's In Sample R² 1" in ip.not_informative_because(a, "math", pv)


def test_every_claim_both_setups(results):
    rows = sc.evaluate_chapter("interpretation")
    ids = {r.id for r in rows}
    expected = set(load_paper_values().query("id.str.startswith('T2') or "
                                             "id.str.startswith('F8-')", engine="python").index)
    assert expected <= ids and len(rows) == 87
    for r in rows:
        for s in SETUP_NAMES:
            o = r.setups[s]
            assert isinstance(o, claims.Outcome) and o.verdict in claims.VERDICTS
            spec = next(x for x in claims.registered("interpretation")
                        if (x.prefix and r.id.startswith(x.prefix)) or r.id in x.ids)
            assert spec.figure and spec.figure.startswith("fig-interp-")
    by = {r.id: r.setups for r in rows}
    # the IFEval factor of the careful fit is its benchmark: its transfer is not scored
    assert all(by[f"T2b-z2-{d.lower()}"]["careful"].verdict == "not applicable"
               for d in PAPER_OOS_DOMAINS)
    assert all(by[f"T2b-z3-{d.lower()}"][s].verdict == "not applicable"
               for d in PAPER_OOS_DOMAINS for s in SETUP_NAMES)
    assert by["T2b-z1-in_sample"]["careful"].verdict == "reproduced"
    assert by["F3a-general"]["careful"].verdict == "reproduced"
    assert by["F3a-math"]["authors"].verdict == "reproduced"
    assert by["F3a-math"]["careful"].verdict == "not reproduced"
    for s in SETUP_NAMES:  # the general factor tracks compute but is not the root
        assert by["D-general-compute"][s].verdict == "partly"
        assert by["I-z2-compute"][s].verdict == "reproduced"
        assert by["S4-transfer-poor"][s].verdict == "reproduced"
        assert by["D-instruct-minimal"][s].verdict == "reproduced"
        assert by["F8-Llama-3-8B-base-bbh"][s] == by["F8-Llama-3-8B-base-bbh"]["careful"]


def test_comparison_plots():
    table = pd.DataFrame({"a": [0.5, 0.55, -3.0], "b": [0.9, np.nan, 0.8]},
                         index=["paper", "authors' setup", "careful setup"])
    hollow = pd.DataFrame(False, index=table.index, columns=table.columns)
    hollow.loc["careful setup", "b"] = True
    ax = hp.plot_r2_comparison(table, floor=-1.5, hollow=hollow, title="t")
    assert ax.get_title() == "t" and any(t.get_text() == "-3.0" for t in ax.texts)
    with pytest.raises(ValueError, match="reference 'x' is not a row"):
        hp.plot_r2_comparison(table, reference="x")
    cp = pd.DataFrame({"log10_compute": [22.0, 23.0, 24.0], "z1": [1.0, 2.0, 3.5]})
    assert "r = 0.99" in hp.plot_compute_factor(cp, "z1").get_title()
    with pytest.raises(ValueError, match="z9"):
        hp.plot_compute_factor(cp, "z9")
    ours = pd.DataFrame([[0.461, 0.30]], index=["m"], columns=["bbh", "gpqa"])
    ax = hp.plot_lookup_cells(ours, ours.round(2))
    assert ax.texts[0].get_text() == "0.461\n(0.46)"
    with pytest.raises(ValueError, match="same rows and columns"):
        hp.plot_lookup_cells(ours, ours.T)


def test_authors_printed_edge_weights_beside_ours(results):
    """The authors' z1 -> z2 weights (find_proximal_benchmark.ipynb, cell y6xhFUgObP0N) are
    cited as theirs; under the authors' setup our fit has no general -> IFEval edge (IFEval
    comes first) and the table says why; under the careful setup it has one."""
    from hca.data import authors_code_values, authors_edge_weights

    w = authors_edge_weights()
    assert w.to_dict() == {"Llama-3.1-8B": 1.64, "Qwen2.5-7B": 2.14, "Llama-3-8B": 2.92,
                           "Qwen2.5-14B": 1.82}
    acv = authors_code_values()
    assert acv.loc["edge-z1-z2-Llama-3-8B", "source"].endswith(
        "find_proximal_benchmark.ipynb, cell y6xhFUgObP0N")
    a = ip.authors_edge_comparison(results["authors"])
    assert list(a.index) == list(w.index) and a["ours"].isna().all()
    assert a["why"].str.contains("IFEval comes before the general factor").all()
    assert a["why"].str.contains(r"the edge runs IFEval → general, weight -?\d").all()
    c = ip.authors_edge_comparison(results["careful"])
    assert c["ours"].notna().all() and (c["why"] == "").all()
    assert ((c["ours"].astype(float) > 0) & (c["ours"].astype(float) < c["authors"])).all()


def test_table2a_rows_name_their_control_set(results):
    card = sc.build_scorecard(["T2a-"])
    assert len(card.rows) == 18
    for r in card.rows:
        for o in r.setups.values():
            assert "earlier factors z_j, j < i" in o.reason and "j > i" in o.reason, r.id
