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


@pytest.fixture(scope="session")
def check_chapter_rows():
    """A checker: every scorecard row of a chapter has a valid outcome under both setups, and
    that outcome is the chapter's own evaluator applied to ``results[setup]``."""
    from hca.data import load_paper_values
    from hca.paper import claims, setups

    def check(chapter: str, rows, results, fast: bool = False) -> None:
        """``results[setup]`` is the chapter's run at the setup's own seed; a claim read from
        an ensemble is checked against its evaluator on every run of the ensemble."""
        from hca.paper import scorecard

        paper = load_paper_values()
        specs = claims.registered(chapter)
        for r in rows:
            assert set(r.setups) == set(setups.SETUP_NAMES), r.id
            spec = next(x for x in specs if r.id in x.ids)
            for s in setups.SETUP_NAMES:
                o = r.setups[s]
                assert isinstance(o, claims.Outcome) and o.verdict in claims.VERDICTS, (r.id, s)
                rows_ = paper.loc[list(spec.ids)]
                if not spec.ensemble:
                    assert o.ensemble is None, (r.id, s)
                    assert spec.fn(results[s], rows_)[r.id] == o, (r.id, s)
                    continue
                members = scorecard.chapter_ensemble(chapter, s, fast)
                assert members[0].setup == results[s].setup, (r.id, s)  # seed 0: its own run
                first = setups.ensemble_seed_sets(fast)[0]
                t = first.index(scorecard.typical_seed(chapter, s, fast))
                seeds = scorecard.ensemble_seeds(
                    [spec.fn(m, rows_)[r.id].verdict for m in members],
                    [scorecard.run_evidence(spec, m) for m in members], fast)
                ens = scorecard.chapter_ensemble(chapter, s, fast, seeds)
                runs = [spec.fn(m, rows_)[r.id] for m in ens]
                why = [scorecard.run_evidence(spec, m) for m in ens]
                expected = claims.ensemble_outcome(runs, seeds, typical=t, evidence=why)
                assert expected == o and o.ensemble.runs >= len(first), (r.id, s)

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
