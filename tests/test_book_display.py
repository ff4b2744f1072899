"""The book's display helpers: tables, the scorecard's renderings, figure data, the summary
figure. Small hand-made inputs; nothing is computed from the data."""

from __future__ import annotations

import json

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("agg")

from hca.paper import scorecard as sc  # noqa: E402
from hca.paper.claims import Outcome, Stability  # noqa: E402
from hca.plots import captioned, plot_verdict_summary, table_markdown  # noqa: E402
from hca.plots.style import figure_data, svg_with_data  # noqa: E402
from hca.plots.tables import clean_frame, format_cell  # noqa: E402


# ----------------------------------------------------------------------------- tables
@pytest.mark.parametrize("value, text", [
    (np.nan, "–"), (pd.NA, "–"), (None, "–"), (True, "yes"), (np.bool_(False), "no"),
    (6.0, "6"), (-0.0, "0"), (0.1234567, "0.123457"), (-1e-9, "-0.000000001"), (3, "3"),
    ("/tmp/hca_abc/run/report.json", "report.json"), ("a  b", "a b"),
])
def test_format_cell(value, text):
    assert format_cell(value) == text


def test_clean_frame_drops_a_plain_index_and_keeps_a_named_one():
    plain = clean_frame(pd.DataFrame({"a": [1.0, np.nan]}))
    assert list(plain.columns) == ["a"] and list(plain["a"]) == ["1", "–"]
    named = clean_frame(pd.DataFrame({"a": [True]}, index=pd.Index(["x"], name="row")))
    assert list(named.columns) == ["row", "a"] and named.iloc[0].tolist() == ["x", "yes"]
    multi = clean_frame(pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples(
        [("authors", "MIC"), ("careful", "MIC")])))
    assert list(multi.columns) == ["authors / MIC", "careful / MIC"]


def test_table_markdown_is_a_numbered_myst_table():
    df = captioned(pd.DataFrame({"x": [1.5, np.nan], "flag": [True, False],
                                 "note": ["a|b", "$x$"]}), "Paper Table 3: a test.", "tab-t")
    md = table_markdown(df)
    assert md.startswith("````{table} Paper Table 3: a test.\n:name: tab-t\n")
    assert "| 1.5 | yes | a\\|b |" in md and "| – | no | \\$x\\$ |" in md
    assert "NaN" not in md and "True" not in md
    assert "|---:|---|---|" in md  # numbers right-aligned
    # a frame without a caption still gets one (so that the book numbers it)
    bare = table_markdown(pd.DataFrame({"a": [1]}))
    assert bare.startswith("````{table} a (1 row).")
    # never a caption naming a paper table that does not start with it
    assert "Table 3" not in table_markdown(pd.DataFrame({"Table 3b error": [1]})).split("\n")[0]


def test_captioned_checks_its_input():
    with pytest.raises(TypeError, match="DataFrame"):
        captioned([1, 2], "x")
    with pytest.raises(ValueError, match="empty caption"):
        captioned(pd.DataFrame({"a": [1]}), "  ")


# ----------------------------------------------------------------------------- figures
def test_figure_data_and_svg_metadata():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4], label="line")
    ax.bar([0, 1], [5, 6], label="bars")
    ax.scatter([7], [8])
    ax.imshow(np.eye(2))
    data = figure_data(fig)
    kinds = data.groupby("kind").size().to_dict()
    assert kinds == {"bar": 2, "cell": 4, "line": 2, "points": 1}
    assert data.loc[data["kind"] == "bar", "y"].tolist() == [5, 6]
    fig2, ax2 = plt.subplots()
    ax2.barh([0, 1], [3, 4])
    ax2.set_yticks([0, 1], ["first", "second"])
    labelled = figure_data(fig2)
    assert labelled["y_label"].tolist() == ["first", "second"]
    assert labelled["x"].tolist() == [3, 4]
    plt.close(fig2)
    svg = svg_with_data(fig, "<svg></svg>")
    assert svg.startswith('<svg><metadata id="hca-figure-data"><![CDATA[\npanel,')
    plt.close(fig)


def _row(cid, chapter, verdicts, share=None):
    outcomes = {s: Outcome(ours=f"ours {s}", verdict=v, reason=f"why {s}",
                           stability=Stability(share, 200, "d") if share is not None else None)
                for s, v in zip(("authors", "careful"), verdicts)}
    return sc.ClaimRow(id=cid, section="S", claim=f"Claim {cid}.", paper="p", criterion="c",
                       kind="analysis", citation="x", chapter=chapter, figure="fig-x",
                       setups=outcomes)


@pytest.fixture
def card():
    return sc.Scorecard((
        _row("S4-order", "recovery", ("not reproduced", "not reproduced"), 0.1),
        _row("S4-best-four", "recovery", ("reproduced", "not reproduced"), 0.5),
        _row("F2a", "pca", ("reproduced", "reproduced")),
        _row("F2b", "pca", ("partly", "not applicable")),
    ))


def test_scorecard_renderings(card):
    counts = sc.summary_counts(card)
    assert list(counts.index) == ["2 Latent capabilities and PCA", "3 HCA recovery"]
    assert counts.loc["3 HCA recovery", ("careful", "not reproduced")] == 2
    shares = sc.headline_shares(card)
    assert shares.shape == (2, 2) and shares.iloc[0].tolist() == [0.1, 0.1]
    frame = sc.claims_frame(card)
    assert len(frame) == 4 and frame["chapter"].tolist() == ["3", "3", "2", "2"]
    assert 'class="verdict verdict-not-reproduced"' in frame.iloc[0]["careful setup: verdict"]
    assert "holds in 20 of 200 refits" in frame.iloc[0]["careful setup: ours, why"]
    csv = pd.read_csv(pd.io.common.StringIO(sc.scorecard_csv(card)))
    assert len(csv) == 4 and csv["careful_verdict"].tolist()[0] == "not reproduced"
    assert json.loads(json.dumps(card.records()))[0]["id"] == "S4-order"
    text = sc.synthesis_markdown(card, near_tie=0.0033, links={"near_tie": "lab"})
    assert "1 of the 4 analysis claims are reproduced under both setups" in text
    assert "0.0033 apart" in text and "{ref}`a near tie <lab>`" in text
    assert "fails on the paper's own terms" in text
    for md in (sc.summary_markdown(card, name="tab-a"), sc.headline_markdown(card),
               sc.verdict_box_markdown(card.chapter_rows("pca"))):
        assert md.startswith("````{table} ")


def test_plot_verdict_summary(card):
    axes = plot_verdict_summary(sc.summary_counts(card), sc.headline_shares(card))
    assert len(axes) == 2
    widths = sorted(p.get_width() for p in axes[0].patches if p.get_width() > 0)
    assert sum(widths) == 8  # 4 claims x 2 setups
    with pytest.raises(ValueError, match="setup, verdict"):
        plot_verdict_summary(pd.DataFrame({"a": [1]}))
    import matplotlib.pyplot as plt

    plt.close("all")
