"""The scaling chapter (hca.paper.scaling): both setups on the real data, every claim answered;
the page under a reader's settings (quick), its answer and its glued numbers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hca.causal import fit_sigmoid_law
from hca.data import authors_code_values, load_paper_values
from hca.paper import claims, setups
from hca.paper import scaling as ch
from hca.paper import scorecard as sc
from hca.paper.words import prose_slips, sentences

IDS = ["F7-bbh-tau", "F12-bigger-better", "F13a-ifeval", "F13a-math_lvl_5", "F13a-bbh",
       "F13a-gpqa", "F13a-musr", "F13a-mmlu_pro", "F13bc-math_lvl_5", "F13bc-ifeval",
       "F13bc-general", "F14-group", "F14-pairwise", "F7-bbh-fit", "F14-llama-lineage",
       "F14-qwen-lineage", "F14-tau-order"]
#: The research port of scaling_law.ipynb on the public CSV (notes/research_authors_code.md):
#: 137 rows, 75 strata; backdoor ATEs, sigmoid tau and R^2 on all rows.
PORT_ATE = {"ifeval": 16.2799, "bbh": 1.5211, "math_lvl_5": 5.0028, "gpqa": -1.4492,
            "musr": 1.8982, "mmlu_pro": -2.0386}
PORT_TAU = {"ifeval": 13.02, "bbh": -0.18, "math_lvl_5": 1.02, "gpqa": -1.79, "musr": 2.46,
            "mmlu_pro": -2.71}


@pytest.fixture(scope="module")
def results():
    out = {s: ch.run(s) for s in setups.SETUP_NAMES}
    # the scorecard's evaluation uses the same objects (the book's settings)
    rows = sc.evaluate_chapter("scaling")
    return out, rows


@pytest.mark.slow  # the book's chapter: computed once, about a minute
def test_authors_setup_reproduces_the_port(results):
    res = results[0]["authors"]
    pop = res.population.loc["all"]
    assert (pop["models"], pop["treated"], pop["strata"], pop["strata_both"]) == (137, 59, 75, 15)
    assert pop["share_both"] == pytest.approx(0.4526, abs=1e-3)
    for b, v in PORT_ATE.items():
        assert res.effects.loc[("all", b), "ate"] == pytest.approx(v, abs=1e-3)
        assert res.tau.loc[b, "tau"] == pytest.approx(PORT_TAU[b], abs=0.01)
    # theirs, as printed, beside ours; same sign on 5 of 6 (BBH differs)
    acv = authors_code_values()["value"]
    assert res.printed.loc["ifeval", "ate_theirs"] == acv["ate-ifeval"]
    same = np.sign(res.printed["ate_theirs"]) == np.sign(res.printed["ate_ours"])
    assert same.sum() == 5 and not same["bbh"]
    assert (res.printed["ate_ours"] - res.printed["ate_theirs"]).abs().max() < 2.5
    assert (res.printed["r2_ours"] - res.printed["r2_theirs"]).abs().max() < 0.06
    assert res.rows["official_providers"].all()
    assert set(res.rows["type"]) == {"pretrained", "fine-tuned"}
    # their curve_fit reaches the multi-start optimum (why the bootstrap can warm-start)
    for (sub, b), f in {**res.sigmoid.fits, **res.lineage.fits}.items():
        d = res.official if sub == "all" else res.official[res.official["lineage"] == sub]
        g = fit_sigmoid_law(d["log_c"], d["T"], d[b])
        assert f.r2 == pytest.approx(g.r2, abs=0.002), (sub, b)
    # Figure 12 from their Qwen_illustrate: three Qwen2.5 sizes matched by name
    assert set(res.family_sizes["size_label"]) == {"0.5B", "7B", "14B"}
    assert res.monotonicity["adjacent_drops"].sum() == 0


@pytest.mark.slow  # the book's chapter: computed once, about a minute
def test_careful_setup_and_bridge(results):
    res = results[0]["careful"]
    assert len(res.rows) == 2010 and len(res.official) == 242
    assert res.effects.loc[("all", "ifeval"), "ate"] == pytest.approx(23.72, abs=0.01)
    assert res.effects.loc[("all", "mmlu_pro"), "ate"] == pytest.approx(0.75, abs=0.01)
    assert list(dict.fromkeys(res.family_sizes["family"])) == ["Llama-3.x", "Qwen2.5", "Gemma-2"]
    br = res.bridge
    assert br.steps.equals(results[0]["authors"].bridge.steps)  # setup-independent
    assert list(br.steps.index) == list("ABCDEF")
    for b in PORT_ATE:  # the walk starts at the authors' setup and ends at the careful one
        assert br.ates.loc["A", ("all", b)] == pytest.approx(PORT_ATE[b], abs=1e-3)
        assert br.ates.loc["F", ("all", b)] == pytest.approx(
            res.effects.loc[("all", b), "ate"], abs=1e-9)
    # counting Qwen's official chat models as fine-tuned removes most of its MATH advantage
    assert br.ates.loc["A", ("Qwen - Llama", "math_lvl_5")] > 15
    assert br.ates.loc["B", ("Qwen - Llama", "math_lvl_5")] < 8
    assert len(br.final_candidates) == 5
    tab = ch.setups_table(results[0])
    assert tab.shape == (6, 2) and tab.loc["models (ATE)"].tolist() == [137, 2010]


@pytest.mark.slow  # the book's chapter: computed once, about a minute
def test_every_claim_both_setups(results):
    out, rows = results
    assert [r.id for r in rows] == IDS
    pv = load_paper_values()
    for r in rows:
        assert r.figure and r.figure.startswith("fig-scaling-")
        for s in setups.SETUP_NAMES:
            o = r.setups[s]
            assert isinstance(o, claims.Outcome) and o.verdict in claims.VERDICTS
            spec = next(x for x in claims.registered("scaling") if r.id in x.ids)
            assert spec.fn(out[s], pv.loc[[r.id]])[r.id] == o
    by = {r.id: r.setups for r in rows}
    for cid in ("F14-llama-lineage", "F14-qwen-lineage"):
        assert all("states no finding" in by[cid][s].reason for s in setups.SETUP_NAMES)
    assert "reconstructed" in by["F13bc-ifeval"]["authors"].reason
    # verdicts that do not depend on the bootstrap's size
    assert by["F14-pairwise"]["authors"].verdict == "reproduced"
    assert by["F14-pairwise"]["careful"].verdict == "not reproduced"  # 6 of 9 pairs
    assert by["F12-bigger-better"]["careful"].verdict == "partly"
    assert by["F13a-ifeval"]["careful"].verdict == "reproduced"


@pytest.mark.slow  # the book's chapter: computed once, about a minute
def test_tables_and_cache(results):
    out = results[0]
    again = ch.run("careful", ch.Settings())  # computed once: an equal read-only copy
    assert again is not out["careful"] and again.setup == out["careful"].setup
    ate = ch.comparison_table(out, "ate")
    assert len(ate) == 2 * 3 * 6 and set(ate["subset"]) == {"all", "Llama", "Qwen"}
    assert (ate["ci_low"] <= ate["ate"]).all() and (ate["ate"] <= ate["ci_high"]).all()
    assert len(ch.comparison_table(out, "tau")) == 12
    assert ch.printed_values("ate")["IFEval"] == pytest.approx(13.9408, abs=1e-4)
    with pytest.raises(ValueError, match="what must be"):
        ch.comparison_table(out, "d")
    assert "authors' setup: 137 models" in out["authors"].summary()


#: Every claim's verdict under the book's settings (authors', careful), as the scorecard gives it.
BOOK_VERDICTS = {
    "F7-bbh-tau": ("reproduced", "reproduced"),
    "F12-bigger-better": ("reproduced", "partly"),
    "F13a-ifeval": ("reproduced", "reproduced"),
    "F13a-math_lvl_5": ("partly", "partly"),
    "F13a-bbh": ("reproduced", "reproduced"),
    "F13a-gpqa": ("reproduced", "reproduced"),
    "F13a-musr": ("not reproduced", "reproduced"),
    "F13a-mmlu_pro": ("reproduced", "reproduced"),
    "F13bc-math_lvl_5": ("reproduced", "not reproduced"),
    "F13bc-ifeval": ("partly", "not reproduced"),
    "F13bc-general": ("partly", "not reproduced"),
    "F14-group": ("reproduced", "partly"),
    "F14-pairwise": ("reproduced", "not reproduced"),
    "F7-bbh-fit": ("partly", "partly"),
    "F14-llama-lineage": ("reproduced", "reproduced"),
    "F14-qwen-lineage": ("reproduced", "reproduced"),
    "F14-tau-order": ("partly", "partly"),
}
#: A claim id as it would appear in prose (F7-bbh-tau, F13a-..., S4-order, T2a-...).
CLAIM_ID = r"\b(?:F\d+[a-z]*|S\d+|T\d+[a-z]*)-[\w-]+"
#: The notebook's section labels an answer may link to.
LABELS = ("scaling-setups", "scaling-family-sizes", "scaling-r2", "scaling-bridge")


def _check_answer(text: str, setups: tuple[str, ...]) -> list[str]:
    """The answer's house rules: one paragraph of 3-6 sentences of at most 40 words, every
    setup named, no claim id, links only to the notebook's labels, no prose slip."""
    import re

    parts = sentences(text)
    assert 3 <= len(parts) <= 6, parts
    assert max(len(p.split()) for p in parts) <= 40, parts
    assert "\n\n" not in text and not re.search(CLAIM_ID, text), text
    for s in setups:
        assert setups_label(s) in text
    assert set(re.findall(r"\{ref\}`([\w-]+)`", text)) <= set(LABELS)
    assert prose_slips(text) == []
    return parts


def setups_label(setup: str) -> str:
    return {"authors": "the authors' setup", "careful": "the careful setup"}[setup]


@pytest.mark.slow
def test_book_verdicts_answer_and_numbers(results):
    out, rows = results
    assert {r.id: (r.setups["authors"].verdict, r.setups["careful"].verdict) for r in rows} == (
        BOOK_VERDICTS)
    for r in rows:  # every text the scorecard shows says what its numbers count
        for o in r.setups.values():
            assert prose_slips(o.ours) == [] and prose_slips(o.reason) == []
            assert "[" not in o.ours  # intervals are named, never bare brackets
    page = sc.chapter_page("scaling")
    assert page.book and page.rows == tuple(rows)
    parts = _check_answer(ch.answer(page), ("authors", "careful"))
    assert len(parts) == 6
    assert "11 of 17 claims judged are reproduced" in parts[1]
    assert "8 of 17 claims judged are reproduced" in parts[2]
    assert "from +20.5 to +5.7 points ({ref}`scaling-bridge`)" in parts[3]  # step B
    assert "9 of 9 benchmark pairs" in parts[4] and "in 6 of 9 under" in parts[4]
    n = ch.numbers(page)
    assert n["authors_ate_same_sign"] == "5 of 6"
    assert n["authors_sign_note"] == " (BBH is +1.5 for us, -0.9 for them)"
    assert n["careful_heavy_label"] == "Qwen2.5-0.5B" and n["br_A_contrast_math_lvl_5"] == "+20.5"
    assert "GPQA L" in n["authors_sig_unsigned"]  # too uncertain to sign in our fit
    assert n["careful_mix_second"] == "33 of Qwen's 573" and n["careful_pairs"] == "6 of 9 pairs"
    assert all(prose_slips(v) == [] for v in n.values())


# =========================================================================== quick: a reader's page
def test_settings_are_checked_before_any_work():
    book = ch.Settings()
    assert book.lineages == ch.PAPER_LINEAGES == ("Llama", "Qwen") and book.paper_lineages
    assert (book.n_boot_fit, book.n_boot_ate) == (100, 200)
    assert "Mistral" in ch.lineage_names() and "Qwen" in ch.lineage_names()
    bad = [
        ({"lineages": ("Llama",)}, r"lineages=\('Llama',\): expected a tuple of two distinct"),
        ({"lineages": ("Llama", "Llama")}, "two distinct lineages"),
        ({"lineages": ("Llama", "Foo")}, "among Falcon, Gemma, Llama"),
        ({"lineages": ["Llama", "Qwen"]}, "expected a tuple"),
        ({"n_boot_fit": 5}, "n_boot_fit=5: expected a whole number of at least 10"),
        ({"n_boot_ate": 20.0}, "n_boot_ate=20.0"),
        ({"n_jobs": 0}, "n_jobs=0"),
        ({"setups": ("mine",)}, "unknown"),
        ({"setups": ()}, "non-empty tuple"),
    ]
    for kwargs, match in bad:
        with pytest.raises(ValueError, match=match):
            ch.Settings(**kwargs)


def test_notebook_settings_cell_is_the_book_settings():
    from pathlib import Path

    import jupytext

    nb = jupytext.read(Path(__file__).parents[1] / "notebooks" / "05_scaling_ate.md")
    cell = next(c for c in nb.cells if c.cell_type == "code")
    assert "settings" in cell.metadata.get("tags", []) and len(cell.source.splitlines()) <= 8
    scope: dict = {}
    exec(cell.source, scope)
    assert scope["S"] == ch.Settings()


@pytest.fixture(scope="module")
def reader_page():
    """The chapter under a reader's settings: other lineages, one setup, small bootstraps."""
    st = ch.Settings(lineages=("Mistral", "Gemma"), setups=("careful",), n_boot_fit=10,
                     n_boot_ate=10)
    return sc.chapter_page("scaling", st)


def test_reader_page_follows_its_settings(reader_page):
    page = reader_page
    assert not page.book and page.setups == ("careful",) and set(page.results) == {"careful"}
    assert set(page.differences()) == {"lineages", "setups", "n_boot_fit", "n_boot_ate"}
    res = page.results["careful"]
    assert res.lineages == ("Mistral", "Gemma")
    assert list(res.population.index) == ["all", "Mistral", "Gemma"]
    assert res.lineage.subsets == ("Mistral", "Gemma")
    assert (res.effects["n_boot"] <= 10).all() and res.effects["n_boot"].max() == 10
    assert (res.contrast["diff"] == res.contrast["second"] - res.contrast["first"]).all()
    assert res.bridge.lineages == ("Mistral", "Gemma")
    assert ("Gemma - Mistral", "ifeval") in res.bridge.ates.columns
    assert set(ch.comparison_table(page.results, "ate")["subset"]) == {"all", "Mistral", "Gemma"}
    box = page.verdict_box()
    assert "| claim | careful setup |" in box and "authors' setup" not in box
    by = {r.id: r.setups for r in page.rows}
    assert set(by["F7-bbh-tau"]) == {"careful"}
    for cid in ("F13bc-math_lvl_5", "F13bc-ifeval", "F13bc-general", "F14-llama-lineage",
                "F14-qwen-lineage"):
        o = by[cid]["careful"]
        assert o.verdict == "not applicable" and "compare Mistral and Gemma" in o.reason
    assert by["F13bc-math_lvl_5"]["careful"].ours.startswith("Gemma − Mistral: MATH Lvl 5")
    assert "over 10 cluster-bootstrap resamples" in by["F13a-ifeval"]["careful"].ours
    # the page's own claims: the law and the ATE over all models do not depend on lineages
    assert by["F14-pairwise"]["careful"].verdict == "not reproduced"
    assert by["F13a-ifeval"]["careful"].verdict == "reproduced"


def test_reader_page_answer_and_numbers(reader_page):
    page = reader_page
    text = ch.answer(page)
    parts = _check_answer(text, ("careful",))
    assert "these settings compare Gemma with Mistral instead" in parts[0]
    assert "Gemma's MATH gain minus Mistral's" in parts[1]
    assert "12 claims judged" in parts[1]  # 17 claims, 5 of them not applicable
    assert parts[-1].startswith("These settings do not run the authors' setup")
    n = ch.numbers(page)
    assert n["first"] == "Mistral" and n["second"] == "Gemma" and n["contrast"] == "Gemma − Mistral"
    assert n["authors_rows"] == "–" and n["careful_rows"] == "2,010"
    assert set(k[len("authors_"):] for k in n if k.startswith("authors_")) == set(
        k[len("careful_"):] for k in n if k.startswith("careful_"))
    assert n["careful_heavy_label"].startswith("Gemma")
    assert n["contrast_text"].startswith("Under the careful setup, Gemma gains")
    assert "not run" in n["arm_text"]
    assert all(prose_slips(v) == [] for v in n.values())


def test_a_lineage_too_small_is_refused_before_any_fit():
    st = ch.Settings(lineages=("Mistral", "Qwen"), n_boot_fit=10, n_boot_ate=10)
    with pytest.raises(ValueError, match=r"'Mistral' is too small under the authors' setup: "
                       r"9 official models.*Usable under this setup: Llama and Qwen"):
        sc.chapter_page("scaling", st)


@pytest.fixture(scope="module")
def small_page():
    """Both setups with the paper's lineages and small bootstraps."""
    return sc.chapter_page("scaling", ch.Settings(n_boot_fit=10, n_boot_ate=10))


def test_answer_branches_follow_the_results(small_page):
    page = small_page
    assert page.setups == ("authors", "careful") and not page.book
    parts = _check_answer(ch.answer(page), ("authors", "careful"))
    a = {r.id: r.setups["authors"].verdict for r in page.rows}
    c = {r.id: r.setups["careful"].verdict for r in page.rows}
    moved = {k for k in a if a[k] != c[k]}
    has_bridge = any("{ref}`scaling-bridge`" in p for p in parts)
    assert has_bridge == any(k.startswith(("F13a", "F13bc")) for k in moved)
    assert any("scaling-family-sizes" in p for p in parts) == ("F12-bigger-better" in moved)
    # a result that flips a branch: the careful setup judging every claim as the authors' does
    same = tuple(dataclasses.replace(r, setups={"authors": r.setups["authors"],
                                                "careful": r.setups["authors"]})
                 for r in page.rows)
    alike = ch.answer(dataclasses.replace(page, rows=same))
    assert f"The two setups judge all {len(same)} claims alike." in alike
    assert "{ref}" not in alike
    # and one setup only: the same page read for the authors' setup alone
    one = dataclasses.replace(
        page,
        settings=dataclasses.replace(page.settings, setups=("authors",)),
        results={"authors": page.results["authors"]},
        rows=tuple(dataclasses.replace(r, setups={"authors": r.setups["authors"]})
                   for r in page.rows),
    )
    parts = _check_answer(ch.answer(one), ("authors",))
    assert parts[-1].startswith("These settings do not run the careful setup")
