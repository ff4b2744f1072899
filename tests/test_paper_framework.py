"""The two-setup framework: setups, the results cache, verdict rules, the scorecard's JSON."""

from __future__ import annotations

import json

import dataclasses

import numpy as np
import pandas as pd
import pytest

from hca.data import authors_code_values, authors_tokens, load_paper_values
from hca.paper import cache, claims, setups
from hca.paper import data as data_chapter
from hca.paper import scorecard as sc


def test_setups_and_names():
    assert setups.SETUP_NAMES == ("authors", "careful")
    a, c = setups.get_setup("authors"), setups.get_setup("careful")
    assert a.domain_rule == "authors" and c.domain_rule == "book"
    assert a.hca_params() == {"residual": "shared", "random_state": 0, "n_restarts": 1}
    assert setups.get_setup(a) is a
    with pytest.raises(ValueError, match="unknown setup 'paper'"):
        setups.get_setup("paper")


def test_cached_computes_once_and_hands_out_read_only_copies(monkeypatch):
    calls = []

    def compute(x):
        calls.append(x)
        frame = pd.DataFrame({"b": [3.0, 1.0, 2.0]})
        return {"x": x, "arr": np.arange(3) * x, "frame": frame, "items": [1, 2]}

    monkeypatch.setenv("HCA_RESULTS_CACHE", "off")
    cache.clear_memory()
    a = cache.cached("t", compute, 2)
    b = cache.cached("t", compute, 2)
    assert calls == [2] and a is not b and np.array_equal(b["arr"], [0, 2, 4])
    with pytest.raises(ValueError, match="read-only"):
        a["arr"][0] = 7
    with pytest.raises(ValueError):
        a["arr"].flags.writeable = True  # a view of the store's own frozen array
    a["frame"]["c"] = 0.0  # a reader's frame is its own
    a["frame"].iloc[0, 0] = -1.0
    a["items"].append(3)
    a["x"] = 5
    c = cache.cached("t", compute, 2)
    assert list(c["frame"]) == ["b"] and c["frame"]["b"].tolist() == [3.0, 1.0, 2.0]
    assert c["items"] == [1, 2] and c["x"] == 2
    cache.cached("t", compute, 3)
    assert calls == [2, 3]
    cache.clear_memory()


def test_cached_item_copies_one_part_of_the_held_result(monkeypatch):
    """``cached_item`` shares ``cached``'s computation and hands out a read-only copy of one
    item only: equal to that item of ``cached``, and a reader's changes stay its own."""
    calls = []

    def compute(x):
        calls.append(x)
        return ({"arr": np.arange(3) * x, "items": [1]}, {"arr": np.ones(2), "items": [2]})

    monkeypatch.setenv("HCA_RESULTS_CACHE", "off")
    cache.clear_memory()
    first = cache.cached_item("t2", compute, 1, 4)
    whole = cache.cached("t2", compute, 4)
    assert calls == [4] and first["items"] == [2] and np.array_equal(first["arr"], [1.0, 1.0])
    assert np.array_equal(cache.cached_item("t2", compute, 0, 4)["arr"], whole[0]["arr"])
    with pytest.raises(ValueError, match="read-only"):
        first["arr"][0] = 7
    first["items"].append(3)
    assert cache.cached_item("t2", compute, 1, 4)["items"] == [2] and calls == [4]
    with pytest.raises(IndexError):
        cache.cached_item("t2", compute, 2, 4)
    cache.clear_memory()


def test_cached_key_holds_the_fingerprint(monkeypatch):
    """An edited library (another fingerprint) computes anew in the same process."""
    calls = []
    monkeypatch.setenv("HCA_RESULTS_CACHE", "off")
    cache.clear_memory()
    cache.cached("f", lambda: calls.append(1) or len(calls))
    monkeypatch.setattr(cache, "fingerprint", lambda: "edited")
    assert cache.cached("f", lambda: calls.append(1) or len(calls)) == 2
    cache.clear_memory()


def test_read_only_keeps_shared_parts_shared():
    arr = np.ones(3)
    value = {"a": arr, "b": (arr, [arr]), "setup": setups.get_setup("careful")}
    out = cache.read_only(value)
    assert out["a"] is out["b"][0] is out["b"][1][0] and not out["a"].flags.writeable
    assert arr.flags.writeable and out["setup"] == value["setup"]


def test_stored_json_is_plain_data_on_disk(tmp_path, monkeypatch):
    calls = []

    def compute(x):
        calls.append(x)
        return {"x": x, "values": (np.float64(0.5), 2)}

    monkeypatch.setenv("HCA_RESULTS_CACHE", str(tmp_path))
    a = cache.stored_json("rows", compute, 2)
    assert a == {"x": 2, "values": [0.5, 2]}  # as read back from JSON
    assert cache.stored_json("rows", compute, 2) == a and calls == [2]  # another process
    (path,) = tmp_path.glob("rows-*.json")
    assert json.loads(path.read_text()) == a
    monkeypatch.setenv("HCA_RESULTS_CACHE", "off")
    assert cache.stored_json("rows", compute, 2) == a and calls == [2, 2]


class _Planted:
    """A pickle that, when loaded, creates the file ``target``."""

    def __init__(self, target):
        self.target = str(target)

    def __reduce__(self):
        return (open, (self.target, "w"))


def test_planted_pickles_are_never_run(tmp_path, monkeypatch):
    """Every file of the results store replaced by a pickle that would create a file when
    loaded: the next computation neither runs it nor returns other numbers."""
    import pickle

    monkeypatch.setenv("HCA_RESULTS_CACHE", str(tmp_path))
    cache.clear_memory()
    rows = sc.evaluate_chapter("data")
    stored = [p for p in tmp_path.iterdir() if p.is_file() and p.suffix != ".lock"]
    assert {p.suffix for p in stored} == {".json", ".npz"}  # rows; results as plain data
    marker = tmp_path / "planted-ran"
    for p in stored:
        p.write_bytes(pickle.dumps(_Planted(marker)))
    cache.clear_memory()
    with pytest.warns(RuntimeWarning, match="ignoring unreadable stored result"):
        again = sc.evaluate_chapter("data")
    assert not marker.exists()
    assert [r.record() for r in again] == [r.record() for r in rows]
    # a pickle inside an npz file, and a tree naming a class outside hca, are refused too
    import io

    for p in stored:
        if p.suffix == ".json":
            p.unlink()  # the rows are computed again, from the planted results
        else:
            buf = io.BytesIO()
            tree = {"arrays": {}, "root": {"$": "object", "cls": "builtins:open", "k": [],
                                             "v": []}}
            np.savez(buf, __tree__=np.frombuffer(json.dumps(tree).encode(), dtype=np.uint8),
                     __data__=np.zeros(0, dtype=np.uint8),
                     a0=np.array([_Planted(marker)], dtype=object))
            p.write_bytes(buf.getvalue())
    cache.clear_memory()
    with pytest.warns(RuntimeWarning, match="refusing to rebuild builtins:open"):
        again = sc.evaluate_chapter("data")
    assert not marker.exists()
    assert [r.record() for r in again] == [r.record() for r in rows]
    # valid JSON of another shape is not trusted either
    for p in stored:
        if p.suffix == ".json":
            p.write_text(json.dumps({"id": "S1.1-top8"}))
    with pytest.warns(RuntimeWarning, match="not the expected shape"):
        assert [r.record() for r in sc.evaluate_chapter("data")] == [r.record() for r in rows]
    cache.clear_memory()


def test_cache_off(monkeypatch):
    monkeypatch.setenv("HCA_RESULTS_CACHE", "off")
    assert cache.cache_dir() is None


def test_verdict_rules():
    assert claims.numeric_verdict(0.06, 0.05, "0.02/0.05")[0] == "reproduced"
    assert claims.numeric_verdict(0.09, 0.05, "0.02/0.05")[0] == "partly"
    assert claims.numeric_verdict(0.2, 0.05, "0.02/0.05")[0] == "not reproduced"
    assert claims.numeric_verdict(float("nan"), 0.05, "0.02/0.05")[0] == "not reproduced"
    assert claims.set_verdict({"a", "b"}, {"a", "c"}) == "partly"
    assert claims.set_verdict({"a"}, {"b", "c", "d"}) == "not reproduced"
    assert claims.ratio_band(2.6, 2.76) == "inner"
    assert claims.ratio_band(1.5, 2.76) == "outer"
    assert claims.ratio_band(0.70, 2.76) == "outside"  # the lenient case of issue 18
    assert claims.ratio_band(-2.7, 2.76) == "outside"
    # an interval straddling zero never supports a claimed positive effect
    assert claims.interval_verdict(0.4, (-4.5, 4.6), (-2.0, 3.0)) == "not reproduced"
    assert claims.interval_verdict(2.0, (-0.5, 4.0), (0.3, 3.5)) == "partly"
    assert claims.interval_verdict(2.0, (0.5, 4.0), (0.8, 3.5)) == "reproduced"
    assert claims.interval_verdict(-2.0, (-4.0, -0.5), (-3.5, -0.8), sign=-1) == "reproduced"
    with pytest.raises(ValueError, match="verdict must be one of"):
        claims.Outcome("1", "fine", "x")
    with pytest.raises(ValueError, match="share must be in"):
        claims.Stability(1.5, 10, "x")


def test_packaged_tables():
    pv = load_paper_values()
    assert set(pv["kind"]) == {"analysis", "lookup"}
    assert (pv["kind"] == "lookup").sum() >= 37  # Figure 8's cells at least
    acv = authors_code_values()
    assert acv.loc["size-Llama-3-8B", "value"] == 757
    assert acv.loc["ate-ifeval", "value"] == pytest.approx(13.9408, abs=1e-4)
    assert acv["source"].str.contains("hlzhang109/causal-eval").all()
    assert authors_tokens()["gemma-2-9b"] == 8.0


def test_data_chapter_both_setups_and_json(monkeypatch):
    monkeypatch.setenv("HCA_RESULTS_CACHE", "off")
    cache.clear_memory()
    res = {s: data_chapter.run(s) for s in setups.SETUP_NAMES}
    again = data_chapter.run("careful")  # computed once: an equal, read-only copy
    assert again is not res["careful"] and again.table_rows == res["careful"].table_rows
    assert res["authors"].table_rows == 4576 and res["careful"].table_rows < 3913
    rows = sc.evaluate_chapter("data")
    assert [r.id for r in rows] == ["S1.1-top8", "H.4-top6", "Abs-models-1500",
                                    "B-gemma2-tokens"]
    for r in rows:
        for s in setups.SETUP_NAMES:
            o = r.setups[s]
            # the scorecard's outcome is the evaluator applied to the chapter's own results
            spec = next(x for x in claims.registered("data") if r.id in x.ids)
            assert spec.fn(data_chapter.run(s), load_paper_values().loc[[r.id]])[r.id] == o
    rec = json.loads(json.dumps([r.record() for r in rows]))
    keys = {"id", "section", "claim", "paper", "criterion", "kind", "chapter", "figure", "setups"}
    assert all(set(x) == keys for x in rec)
    assert all(set(x["setups"]) == {"authors", "careful"} for x in rec)
    assert {x["kind"] for x in rec} == {"analysis", "lookup"}
    top8 = {x["id"]: x for x in rec}["S1.1-top8"]["setups"]
    assert top8["careful"]["verdict"] == "partly"  # Qwen2-7B: few models under our rule
    box = sc.verdict_box_markdown(rows)
    assert "{numref}`fig-data-domain-sizes`" in box and box.count("\n|") >= 5
    cache.clear_memory()


def test_every_claim_has_exactly_one_evaluator():
    """Every row of paper_values.csv is answered by one registered evaluator of one chapter,
    whose figure anchor (if any) names a figure of that chapter's page."""
    import re
    from pathlib import Path

    pv = load_paper_values()
    owners: dict[str, list[str]] = {}
    for chapter in claims.CHAPTERS:
        sc.chapter_spec(chapter)
        for spec in claims.registered(chapter):
            for cid in spec.rows(pv).index:
                owners.setdefault(cid, []).append(spec.name)
            if spec.figure:
                page = Path(__file__).resolve().parents[1] / "notebooks" / (
                    claims.CHAPTERS[chapter][0] + ".md")
                assert re.search(rf"name:\s*{re.escape(spec.figure)}\s*$", page.read_text(),
                                 re.M), f"{spec.name}: no figure {spec.figure} on {page.name}"
    assert sorted(owners) == sorted(pv.index), set(pv.index) ^ set(owners)
    assert all(len(v) == 1 for v in owners.values()), {k: v for k, v in owners.items()
                                                      if len(v) > 1}


@pytest.mark.slow  # more than ~5 s
@pytest.mark.parametrize("chapter", list(claims.CHAPTERS))
def test_scorecard_judges_the_chapters_own_results(chapter, relative_band_violations,
                                                   ensemble_again):
    """For every claim and setup, the scorecard's outcome is the chapter's evaluator applied to
    the very object the chapter's ``run`` returns (the book's settings; the same object, not a
    recomputation with copied settings). One chapter per test, so that they run in parallel;
    the results come from the results store when a notebook or another test computed them."""
    card = sc.build_scorecard([chapter])
    pv = load_paper_values()
    spec_ = sc.chapter_spec(chapter)
    ids = [i for spec in claims.registered(chapter) for i in spec.rows(pv).index]
    assert sorted(r.id for r in card.rows) == sorted(ids)
    for s in setups.SETUP_NAMES:
        res = spec_.run(s)
        assert sc.chapter_results(chapter, s).setup == res.setup
        for spec in claims.registered(chapter):
            rows = spec.rows(pv)
            if rows.empty:
                continue
            if spec.ensemble:  # the evaluator on every run of the seed ensemble
                again = ensemble_again(chapter, s, spec, rows)
            else:
                again = spec.fn(res, rows)
            for cid in rows.index:
                row = next(r for r in card.rows if r.id == cid)
                assert row.setups[s] == again[cid], (cid, s)
                assert (row.setups[s].ensemble is not None) == spec.ensemble, (cid, s)
    for cid in (c for c in sc.HEADLINE if c in ids):
        row = next(r for r in card.rows if r.id == cid)
        assert all(o.stability is not None for o in row.setups.values()), cid
    # every numeric claim: no "reproduced"/"partly" outside 0.4-2.5 x a paper value > 0.05
    assert relative_band_violations(card) == []


# --------------------------------------------------------------------------- ensembles
def _runs(verdicts, values=None):
    from hca.paper.claims import Outcome

    values = values or [None] * len(verdicts)
    return [Outcome(f"v{i}", v, "r", value=x) for i, (v, x) in enumerate(zip(verdicts, values))]


@pytest.mark.parametrize("counts, expected, borderline, more", [
    ((17, 0, 3, 0), "reproduced", False, True),      # 17/20: 0.85 within 0.21 of 2/3
    ((19, 0, 1, 0), "reproduced", False, False),     # 0.95: clear of both thresholds
    ((14, 0, 6, 0), "reproduced", True, True),       # 14/20 >= 2/3, within 0.105: flagged
    ((13, 0, 7, 0), "partly", True, True),           # 13/20 < 2/3, >= 1/3
    ((0, 7, 13, 0), "partly", True, True),           # 7/20 at least partly
    ((3, 3, 14, 0), "not reproduced", True, True),   # 6/20 < 1/3
    ((0, 0, 20, 0), "not reproduced", False, False),
    ((5, 0, 5, 10), "not applicable", False, False),  # half the runs
    ((10, 0, 1, 9), "partly", False, True),          # n/a counts as not holding
])
def test_ensemble_rule(counts, expected, borderline, more):
    from hca.paper.claims import (
        ENSEMBLE_RULE,
        borderline_margin,
        ensemble_outcome,
        needs_more_runs,
    )

    verdicts = (["reproduced"] * counts[0] + ["partly"] * counts[1]
                + ["not reproduced"] * counts[2] + ["not applicable"] * counts[3])
    o = ensemble_outcome(_runs(verdicts), range(20))
    assert o.verdict == expected and o.ensemble.runs == 20 and o.ensemble.rule == ENSEMBLE_RULE
    assert o.ensemble.share == pytest.approx(counts[0] / 20)
    assert bool(o.ensemble.borderline) == borderline
    assert ("borderline:" in o.reason) == borderline
    assert needs_more_runs(verdicts, 60) == more and not needs_more_runs(verdicts, 20)
    assert borderline_margin(20) == pytest.approx(0.1054, abs=1e-4)
    assert borderline_margin(60) == pytest.approx(0.0609, abs=1e-4)


def test_ensemble_outcome_typical_run_and_spread():
    from hca.paper.claims import ensemble_outcome, typical_index

    values = [0.07, 0.037, 0.038, 0.036, 0.0372]
    o = ensemble_outcome(_runs(["not reproduced"] + ["reproduced"] * 4, values), [0, 1, 2, 3, 4])
    assert o.ensemble.typical_seed == 4 and "Typical run (seed 4): v4" in o.ours
    # the fit-based value first: the ensemble's median with its range, over its run set
    assert o.ours.startswith("Median 0.037 (range 0.036 to 0.070) over 5 runs.")
    assert o.value == pytest.approx(0.0372) and o.ensemble.low == 0.036 and o.ensemble.high == 0.07
    # 4 of 5 runs: within one standard error (0.21 for 5 runs) of 2/3, flagged borderline
    assert o.verdict == "reproduced" and o.ensemble.borderline and "borderline" in o.reason
    assert "reproduced in 4 of 5 runs, at least partly in 4" in o.reason
    forced = ensemble_outcome(_runs(["reproduced"] * 5, values), [0, 1, 2, 3, 4], typical=1)
    assert forced.ensemble.typical_seed == 1
    assert typical_index([0.07, 0.037, 0.038]) == 2 and typical_index([1.0, 1.0]) == 0
    # counts print as whole numbers, a value the same in every run once
    ranks = ensemble_outcome(_runs(["reproduced"] * 4, [3.0, 2.0, 3.0, 3.0]), range(4))
    assert ranks.ours.startswith("Median 3 (range 2 to 3) over 4 runs."), ranks.ours
    same = ensemble_outcome(_runs(["reproduced"] * 4, [0.75] * 4), range(4))
    assert same.ours.startswith("0.750 in all 4 runs") and "every one of" not in same.ours
    with pytest.raises(ValueError, match="outcomes for"):
        ensemble_outcome(_runs(["reproduced"]), [0, 1])
    with pytest.raises(ValueError, match="finite"):
        typical_index([np.nan])


def _evidence(optimum, fragile, objective, domain="D"):
    """A run's evidence whose ``domain`` lands in ``optimum`` (0 or 1: two distinct unmixings)
    with FastICA objective ``objective``."""
    from hca.paper.claims import RunEvidence

    rows = np.eye(3) if optimum == 0 else np.array([[1.0, 1, 0], [0, 1, -1], [1, 0, 1]]) / 2**0.5
    return RunEvidence((domain,) if fragile else (), {domain: (rows, objective)})


def test_fragile_fits_judged_by_the_objective():
    """The rule of 2026-11-29: optima that answer the same keep the verdict; optima that
    answer differently and tie on FastICA's objective are not determined; a clearly better
    optimum is named and the verdict follows from all runs."""
    from hca.paper.claims import VERDICTS, ensemble_outcome, needs_more_runs

    assert VERDICTS.index("not determined") > VERDICTS.index("not reproduced")
    rng = np.random.default_rng(0)
    # 40 runs in two optima of D (22 rounding-sensitive runs): optimum 1 (seeds 0-17)
    # reproduces, optimum 2 (seeds 18-39) does not
    verdicts = ["reproduced"] * 18 + ["not reproduced"] * 22
    fragile = [False] * 18 + [True] * 22

    def runs(obj_a, obj_b):
        return [
            _evidence(0 if i < 18 else 1, fragile[i], (obj_a if i < 18 else obj_b) + 1e-4 * rng.random())
            for i in range(40)
        ]

    tie = ensemble_outcome(_runs(verdicts), range(40), typical=30, evidence=runs(0.0120, 0.0121))
    e = tie.ensemble
    assert tie.verdict == "not determined" and e.case == "tie" and e.preferred is None
    assert (e.runs, e.fragile) == (40, 22) and e.fragile_domains == (("D", 22),)
    assert [(o.runs, o.answer, o.fragile) for o in e.optima] == [
        (22, "not reproduced", 22), (18, "reproduced", 0)
    ]
    assert e.typical_seed == 30 and "cannot tell the optima that answer differently apart" in tie.reason
    # one optimum clearly better: named, and the verdict from all runs (18 of 40: not reproduced)
    better = ensemble_outcome(_runs(verdicts), range(40), evidence=runs(0.0240, 0.0120))
    b = better.ensemble
    assert better.verdict == "partly" and b.case == "better"
    assert b.optima[b.preferred].answer == "reproduced"
    assert "clearly prefers D optimum 1, whose runs answer reproduced" in better.reason
    # both optima answer the same: the verdict stands from all runs, the optima shown
    agree = ensemble_outcome(
        _runs(["reproduced"] * 40), range(40), evidence=runs(0.0120, 0.0121)
    )
    assert agree.verdict == "reproduced" and agree.ensemble.case == "agree"
    assert len(agree.ensemble.optima) == 2 and "rounding-sensitive in 22 of 40 runs" in agree.ours
    # a minor optimum (3 of 40 runs < 1/10) answering differently decides nothing
    minor = ["reproduced"] * 37 + ["not reproduced"] * 3
    ev = [_evidence(0 if i < 37 else 1, i >= 37, 0.012 if i < 37 else 0.0121) for i in range(40)]
    m = ensemble_outcome(_runs(minor), range(40), evidence=ev)
    assert m.verdict == "reproduced" and m.ensemble.case == "agree"
    assert [o.major for o in m.ensemble.optima] == [True, False]
    # no rounding-sensitive run: no optima, and the text says so
    calm = ensemble_outcome(_runs(["reproduced"] * 20), range(20), evidence=[""] * 20)
    assert calm.ensemble.fragile_share == 0 and calm.ensemble.optima == ()
    assert "No run of the 20 is rounding-sensitive" in calm.reason and "rounding" not in calm.ours
    # a rounding-sensitive run among the first 20: read from 40 runs
    assert needs_more_runs(["reproduced"] * 20, 40, fragile=1)
    assert not needs_more_runs(["reproduced"] * 20, 40) and not needs_more_runs(
        ["reproduced"] * 40, 40, 1
    )
    with pytest.raises(ValueError, match="evidence entries"):
        ensemble_outcome(_runs(["reproduced"] * 2), [0, 1], evidence=[""])
    with pytest.raises(ValueError, match="does not give its ICA solution"):
        ensemble_outcome(_runs(["reproduced"] * 2), [0, 1], evidence=["D", ""])


def test_every_chapter_has_the_declared_shape():
    """Every chapter of the explicit list is its module's one declared ChapterSpec (CHAPTER):
    frozen settings, compute(setup, settings), and an ensemble exactly for the chapters
    with claims read from fits with a random start; every chapter with claims is listed."""
    import dataclasses
    import importlib

    from hca.paper.chapters import CHAPTER_LIST, chapter
    from hca.paper.shape import ChapterSpec, EnsembleSpec

    keys = [c.key for c in CHAPTER_LIST]
    assert len(set(keys)) == len(keys)
    assert [k for k in keys if k in claims.CHAPTERS] == list(claims.CHAPTERS)
    for c in CHAPTER_LIST:
        assert isinstance(c, ChapterSpec)
        assert importlib.import_module(f"hca.paper.{c.key}").CHAPTER is c
        settings = c.settings()
        assert dataclasses.is_dataclass(settings) and type(settings).__dataclass_params__.frozen
        assert (len(c.claims()) > 0) == (c.key in claims.CHAPTERS), c.key
        has_ensemble = any(spec.ensemble for spec in c.claims())
        assert (c.ensemble is not None) == has_ensemble, c.key
        assert c.ensemble is None or isinstance(c.ensemble, EnsembleSpec)
        assert chapter(c.key) is c
    with pytest.raises(ValueError, match="unknown chapter"):
        chapter("nope")
    with pytest.raises(ValueError, match="has no ensemble"):
        chapter("data").runs("careful", (0, 1))



def test_runs_of_one_setup_compute_the_settings_setups_in_one_batch(monkeypatch):
    """ChapterSpec.runs: one of the settings' setups is computed with the others in one call
    of the ensemble's runs (what they share computed once); a setup outside them alone; the
    seeds come from the settings (n_seeds, n_seeds_more); each_setup lifts a function of one
    setup; from_runs takes a setup's own run from its ensemble."""
    import dataclasses

    from hca.paper.shape import ChapterSpec, each_setup

    @dataclasses.dataclass(frozen=True)
    class Settings:
        setups: tuple = setups.SETUP_NAMES
        n_seeds: int = 2
        n_seeds_more: int = 3

    monkeypatch.setenv("HCA_RESULTS_CACHE", "off")
    calls = []

    def runs(group, settings, seeds):
        calls.append((tuple(s.residual for s in group), seeds))
        return tuple(tuple(f"{s.residual}-{seed}" for seed in seeds) for s in group)

    spec = ChapterSpec.from_runs(
        key="test_two_setups_batch", settings=Settings, runs=runs, evidence=str,
        typical_key=float, page="none",
    )
    order = tuple(setups.get_setup(n).residual for n in setups.SETUP_NAMES)
    try:
        assert spec.seeds() == (0, 1) and spec.seeds(more=True) == (0, 1, 2)
        assert spec.runs("careful") == ("domain-0", "domain-1")
        assert spec.runs("authors") == ("shared-0", "shared-1")
        assert calls == [(order, (0, 1))]  # one batch for both setups
        assert spec.runs("careful", more=True) == ("domain-0", "domain-1", "domain-2")
        assert calls[1:] == [(order, (2,))]  # the larger ensemble: only its new seeds
        assert spec.run("authors") == "shared-0" and len(calls) == 2  # the ensemble's own run
        one = Settings(setups=("careful",), n_seeds=1, n_seeds_more=1)
        assert spec.runs("careful", one) == ("domain-0",)
        assert calls[2:] == [(("domain",), (0,))]  # only the settings' setups
        other = dataclasses.replace(setups.get_setup("careful"), min_subset_size=5)
        assert spec.runs(other, seeds=(2,)) == ("domain-2",)
        assert calls[3:] == [(("domain",), (2,))]
        with pytest.raises(ValueError, match="n_seeds=0"):
            spec.runs("careful", Settings(n_seeds=0))
        with pytest.raises(ValueError, match="unknown"):
            spec.runs("careful", Settings(setups=("mine",)))
    finally:
        cache.clear_memory()
    lifted = each_setup(lambda setup, settings, seeds: tuple(setup.residual for _ in seeds))
    both = tuple(setups.get_setup(n) for n in ("authors", "careful"))
    assert lifted(both, (), (0, 1)) == (("shared", "shared"), ("domain", "domain"))


def test_the_json_record_carries_the_optima():
    """Every fit-based setup entry of the JSON carries its share of rounding-sensitive runs
    with the domains, the shares over all runs and over the rounding-insensitive ones, and
    the FastICA optima with their objective and answer (rule of 2026-11-29)."""
    import json

    from hca.paper.claims import ensemble_outcome

    verdicts = ["reproduced"] * 25 + ["not reproduced"] * 15
    ev = [_evidence(0 if i < 25 else 1, i >= 25, 0.0120 + 1e-5 * i, "Mixtral-8x7B")
          for i in range(40)]
    o = ensemble_outcome(_runs(verdicts), range(40), evidence=ev)
    row = sc.ClaimRow(id="X-1", section="s", claim="c", paper="p", criterion="k",
                      kind="analysis", citation="x", chapter="mmlu", figure=None,
                      setups={"authors": o, "careful": o})
    e = json.loads(json.dumps(row.record()))["setups"]["careful"]
    assert e["verdict"] == "not determined"
    ens = e["ensemble"]
    assert ens["fragile_share"] == 0.375 and ens["fragile_runs"] == 15
    assert ens["fragile_domains"] == {"Mixtral-8x7B": 15}
    assert ens["share"] == 0.625 and ens["share_insensitive"] == 1.0
    assert ens["case"] == "tie" and ens["preferred"] is None and "log cosh" in ens["objective"]
    answers = {o["runs"]: (o["answer"], o["fragile_runs"]) for o in ens["optima"]}
    assert answers == {25: ("reproduced", 0), 15: ("not reproduced", 15)}
    first = ens["optima"][0]["objective"]["Mixtral-8x7B"]
    assert first["median"] == pytest.approx(0.01212) and first["range"] == [0.012, 0.01224]
    assert "left_out" not in ens and ens["runs"] == 40
    counts = sc.Scorecard((row,)).counts()
    assert counts.loc["not determined", "careful"] == 1
    # the row reads back from JSON as it was (the stored rows of a build)
    back = sc._row_from_data(json.loads(json.dumps(dataclasses.asdict(row))))
    assert back.setups["careful"].ensemble == o.ensemble


def test_an_ensemble_shows_its_value_only_for_a_numeric_claim():
    """A value that is not the paper's number (a count or flag behind the verdict) stays in the
    JSON but not in ours or the reason, so "0 in all 20 runs" never reads as a result."""
    from hca.paper.claims import ensemble_outcome

    o = ensemble_outcome(_runs(["not reproduced"] * 4, [0.0] * 4), range(4), show_value=False)
    assert o.ours.startswith("Reproduced in 0 of 4 runs. Typical run (seed 0)")
    assert "The value" not in o.reason and o.ensemble.median == 0.0 and o.value == 0.0
    assert sc.numeric_claim(pd.Series({"value": "0.05"}))
    assert not sc.numeric_claim(pd.Series({"value": "bbh|mmlu_pro>ifeval>math_lvl_5"}))
