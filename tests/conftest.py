"""Shared fixtures. Tests never touch the network: real-data tests read the pinned files
from ``$HCA_DATA_DIR`` (default: ``../shared/data`` beside the checkout) or the cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_shared = REPO.parent / "shared" / "data"
if not os.environ.get("HCA_DATA_DIR") and _shared.is_dir():
    os.environ["HCA_DATA_DIR"] = str(_shared)


@pytest.fixture(scope="session")
def v2():
    """The de-duplicated v2 leaderboard."""
    from hca.data import load_leaderboard_v2

    return load_leaderboard_v2()


@pytest.fixture(scope="session")
def v1():
    """The de-duplicated v1 leaderboard."""
    from hca.data import load_leaderboard_v1

    return load_leaderboard_v1()


@pytest.fixture(scope="session")
def mmlu():
    """The MMLU-by-task leaderboard."""
    from hca.data import load_mmlu_by_task

    return load_mmlu_by_task()


def _ensemble_again(chapter: str, setup: str, spec, rows) -> dict:
    """The outcome of every claim of ``spec`` in ``rows`` under ``setup``, judged again from
    the chapter's ensemble: the evaluator on every run of the first seeds, and on every run
    of the larger set for a claim the rule sends there (each run evaluated once)."""
    from hca.paper import claims
    from hca.paper import scorecard as sc

    c = sc.chapter_spec(chapter)
    first, more = c.seeds(), c.seeds(more=True)
    t = first.index(sc.typical_seed(chapter, setup))
    members = sc.chapter_ensemble(chapter, setup)
    assert [m.setup.ica_seed for m in members] == list(first)
    judged = {first: ([spec.fn(m, rows) for m in members],
                      [sc.run_evidence(spec, m) for m in members])}
    again = {}
    for cid in rows.index:
        outs, why = judged[first]
        seeds = sc.ensemble_seeds([o[cid].verdict for o in outs], why, first=first, more=more)
        if seeds not in judged:  # more runs near a threshold or rounding-sensitive
            ens = sc.chapter_ensemble(chapter, setup, seeds=seeds)
            assert [m.setup.ica_seed for m in ens] == list(seeds)
            judged[seeds] = ([spec.fn(m, rows) for m in ens],
                             [sc.run_evidence(spec, m) for m in ens])
        outs, why = judged[seeds]
        again[cid] = claims.ensemble_outcome([o[cid] for o in outs], seeds, typical=t,
                                             evidence=why,
                                             show_value=sc.numeric_claim(rows.loc[cid]))
    return again


@pytest.fixture(scope="session")
def ensemble_again():
    """``ensemble_again(chapter, setup, spec, rows)``: the outcomes of ``spec``'s claims read
    again from the chapter's ensemble, as the scorecard's rule reads them."""
    return _ensemble_again


@pytest.fixture(scope="session")
def check_chapter_rows():
    """A checker: every scorecard row of a chapter has a valid outcome under both setups, and
    that outcome is the chapter's own evaluator applied to ``results[setup]`` (a claim read
    from an ensemble: to every run of the ensemble)."""
    from hca.data import load_paper_values
    from hca.paper import claims, setups
    from hca.paper import scorecard as sc

    def check(chapter: str, rows, results) -> None:
        paper = load_paper_values()
        specs = claims.registered(chapter)
        again: dict = {}
        for r in rows:
            assert set(r.setups) == set(setups.SETUP_NAMES), r.id
            spec = next(x for x in specs if r.id in x.ids)
            rows_ = paper.loc[list(spec.ids)]
            for s in setups.SETUP_NAMES:
                o = r.setups[s]
                assert isinstance(o, claims.Outcome) and o.verdict in claims.VERDICTS, (r.id, s)
                if not spec.ensemble:
                    assert o.ensemble is None, (r.id, s)
                    assert spec.fn(results[s], rows_)[r.id] == o, (r.id, s)
                    continue
                # seed 0 of the ensemble is the chapter's own run
                assert sc.chapter_ensemble(chapter, s)[0].setup == results[s].setup, (r.id, s)
                if (spec.name, s) not in again:
                    again[spec.name, s] = _ensemble_again(chapter, s, spec, rows_)
                expected = again[spec.name, s][r.id]
                n_first = len(sc.chapter_spec(chapter).seeds())
                assert expected == o and o.ensemble.runs >= n_first, (r.id, s)

    return check


def _relative_band_violations(card) -> list:
    """Every numeric claim judged by a tolerance: reproduced/partly only inside the band."""
    from hca.data import load_paper_values
    from hca.paper import claims

    pv = load_paper_values()
    bad = []
    for row in card.rows:
        p = pv.loc[row.id]
        if not str(p["tolerance"]).strip():
            continue
        paper = float(p["value"])
        for s, o in row.setups.items():
            if o.verdict in ("reproduced", "partly") and abs(paper) > claims.NEAR_ZERO:
                if o.value is None or not 0.4 <= o.value / paper <= 2.5:
                    bad.append((row.id, s, o.value, paper, o.verdict))
    return bad


@pytest.fixture(scope="session")
def relative_band_violations():
    """The rows of a scorecard that say reproduced/partly outside 0.4-2.5 x the paper value."""
    return _relative_band_violations


@pytest.fixture(scope="session")
def scm_board(tmp_path_factory):
    """``scm_board(n)``: a synthetic leaderboard with a known SCM (4 domains of ``n`` models,
    4 benchmarks b1-b4, domain column ``base``) as ``(frame, csv_path)``, made once per size."""
    import pandas as pd

    from hca.synthetic import simulate_scm

    made: dict[int, tuple] = {}

    def make(n_per_domain: int):
        if n_per_domain not in made:
            sim = simulate_scm(n_domains=4, n_per_domain=n_per_domain, n_benchmarks=4,
                               offset=30.0, random_state=3)
            df = pd.DataFrame(sim.X, columns=list(sim.feature_names))
            df.insert(0, "base", sim.domains)
            path = tmp_path_factory.mktemp(f"board{n_per_domain}") / "board.csv"
            df.to_csv(path, index=False)
            made[n_per_domain] = (df, path)
        return made[n_per_domain]

    return make
