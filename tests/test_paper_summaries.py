"""The chapters' opening paragraphs (hca.paper.summaries), on hand-made scorecard rows."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from hca.paper import summaries as su
from hca.paper.claims import Outcome
from hca.paper.scorecard import ClaimRow


def _row(cid, authors, careful, *, kind="analysis", figure="fig-x-one", reasons=("ra", "rc")):
    def outcome(v, why):
        if v in ("reproduced", "partly", "not reproduced", "not applicable"):
            return Outcome(ours="o", verdict=v, reason=why)
        return SimpleNamespace(ours="o", verdict=v, reason=why)  # a verdict class added later

    return ClaimRow(
        id=cid, section="S", claim=f"Claim {cid} holds.", paper="p", criterion="c", kind=kind,
        citation="", chapter="pca", figure=figure,
        setups={"authors": outcome(authors, reasons[0]), "careful": outcome(careful, reasons[1])},
    )


ROWS = [
    _row("A-1", "reproduced", "partly", reasons=("fine", "one domain differs")),
    _row("A-2", "not reproduced", "not reproduced", figure="fig-x-two",
         reasons=("rank 2, not 3.", "rank 2, not 3.")),
    _row("A-3", "not applicable", "not applicable"),
    _row("L-1", "reproduced", "not reproduced", kind="lookup", figure=None),
]


def _sentences(text):
    # split at ". " followed by a capital or "**": the paragraph's sentence ends
    return [s for s in re.split(r"(?<=\.)\s+(?=[A-Z*])", text) if s.strip()]


def test_counts_name_every_verdict_in_order():
    assert su.verdict_counts(ROWS[:3], "authors") == {
        "reproduced": 1, "not reproduced": 1, "not applicable": 1}
    assert su.counts_text({"reproduced": 1, "partly": 2, "not reproduced": 3}) == (
        "1 reproduced, 2 partly and 3 not reproduced")
    assert su.counts_text({"partly": 2}) == "2 partly"


def test_differences_and_main_difference():
    assert [r.id for r in su.differences(ROWS, "authors")] == ["A-2"]  # lookups, n/a apart
    assert [r.id for r in su.differences(ROWS, "careful")] == ["A-1", "A-2"]
    # the lead claim is named first when it differs; else the heaviest verdict
    assert su.main_difference(ROWS, "careful", lead="A-1").id == "A-1"
    assert su.main_difference(ROWS, "careful").id == "A-2"
    assert su.main_difference(ROWS[:1], "authors") is None
    assert [r.id for r in su.setup_disagreements(ROWS)] == ["A-1", "L-1"]


def test_summary_says_claim_outcomes_reasons_and_links():
    text = su.chapter_summary(ROWS, lead="A-1", why="pca-why-differ")
    s = _sentences(text)
    assert 3 <= len(s) <= 6, s
    assert s[0].startswith("This chapter judges 4 claims of the paper (3 analyses of the data "
                           "and 1 value read off the leaderboard), led by **A-1**")
    assert "*Claim A-1 holds*" in s[0] and "{numref}`fig-x-one`" in s[0]
    assert ("Under the authors' setup the 3 analysis claims read 1 reproduced, 1 not reproduced "
            "and 1 not applicable; **A-1** is reproduced.") in text
    assert ("Under the careful setup the 3 analysis claims read 1 partly, 1 not reproduced and "
            "1 not applicable; **A-1** is partly.") in text
    # each setup's main difference with its reason (no doubled full stop) and its figure
    assert ("The main difference under the authors' setup: **A-2** is not reproduced "
            "({numref}`fig-x-two`): rank 2, not 3.") in text
    assert ("The main difference under the careful setup: **A-1** is partly "
            "({numref}`fig-x-one`): one domain differs.") in text
    assert text.endswith("differently (A-1, L-1; see {ref}`pca-why-differ`).")
    assert ".." not in text


def test_summary_merges_a_shared_difference_and_renders_a_new_verdict():
    rows = [_row("B-1", "not determined", "not determined", reasons=("two optima", "two optima")),
            _row("B-2", "reproduced", "reproduced")]
    text = su.chapter_summary(rows)
    assert "read 1 reproduced and 1 not determined" in text
    assert ("Under both setups the main difference: **B-1** is not determined "
            "({numref}`fig-x-one`): two optima.") in text
    assert text.endswith("The two setups give every claim the same verdict.")
    assert 3 <= len(_sentences(text)) <= 6


def test_summary_when_nothing_differs_and_text_is_escaped():
    rows = [_row("C-1", "reproduced", "reproduced", figure=None)]
    rows[0] = ClaimRow(**{**rows[0].__dict__, "claim": "Costs $5 *per* run."})
    text = su.chapter_summary(rows)
    assert "no analysis claim differs from the paper" in text
    assert "\\$5 \\*per\\* run" in text and "{numref}" not in text


def test_bad_rows_are_refused():
    with pytest.raises(ValueError, match="no claims"):
        su.chapter_summary([])
    with pytest.raises(ValueError, match="lead claim 'Z-9' is not a claim"):
        su.chapter_summary(ROWS, lead="Z-9")
    odd = ClaimRow(**{**ROWS[0].__dict__, "setups": {"authors": ROWS[0].setups["authors"]}})
    with pytest.raises(ValueError, match="claim A-1 has setups"):
        su.chapter_summary([ROWS[1], odd])


def test_inline_text_formats_like_glue_text():
    import numpy as np

    from hca.paper.glue import text

    values = {"n": np.int64(75123), "s": "Llama-3-8B", "x": 0.12345}
    assert repr(text(values, "n:,d")) == "75,123"
    assert text(values, "s")._repr_markdown_() == "Llama-3-8B"
    assert repr(text(values, "x:.2f")) == "0.12"
    with pytest.raises(KeyError, match="no glued value 'm'"):
        text(values, "m")


def test_an_ensemble_reason_reads_as_runs_and_a_typical_run():
    ens = SimpleNamespace(runs=20, share=0.0, share_partly=0.9, evidence_runs=20)
    reason = ("Partly by the ensemble rule. Over 20 FastICA runs (seeds 0-19): reproduced in 0 "
              "of 20 runs, at least partly in 18. Typical run (seed 6): dominant "
              "{BBH, MUSR} against the paper's {BBH}.")
    o = SimpleNamespace(verdict="partly", reason=reason, ensemble=ens)
    assert su.reason_text(o) == ("reproduced in 0, at least partly in 18 of 20 FastICA runs; in a "
                                 "typical run, dominant {BBH, MUSR} against the paper's {BBH}")
    # a reason of another form (e.g. a verdict class added later) is kept as it is
    o2 = SimpleNamespace(verdict="not determined", reason="two optima.", ensemble=ens)
    assert su.reason_text(o2) == "two optima"
    assert su.reason_text(SimpleNamespace(reason="plain.", ensemble=None)) == "plain"
